//! Running a short command to its end and keeping what it printed (detection probes, test
//! builds, `--list`): its whole process group goes when it ends, times out or is cancelled.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::interrupt::Interrupt;

/// What a finished command printed.
pub(crate) struct Captured {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a command gave no [`Captured`].
pub(crate) enum NotCaptured {
    /// It could not be started or waited for.
    Failed(String),
    /// It ran past the time allowed (and was stopped).
    TimedOut,
    /// The caller cancelled (and it was stopped).
    Interrupted,
}

/// Runs `command` (stdin closed, output captured) up to `timeout`, unless `interrupt` fires.
pub(crate) async fn capture(
    mut command: tokio::process::Command,
    timeout: Duration,
    interrupt: &mut Interrupt,
) -> Result<Captured, NotCaptured> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child =
        cc_process::spawn_group(command).map_err(|error| NotCaptured::Failed(error.to_string()))?;
    let mut stdout = child.take_stdout();
    let mut stderr = child.take_stderr();
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            if let Some(pipe) = stdout.as_mut() {
                let _ = pipe.read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(pipe) = stderr.as_mut() {
                let _ = pipe.read_to_end(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        (out, err)
    };
    let (stdout, stderr) = match interrupt.guard(tokio::time::timeout(timeout, work)).await {
        Some(Ok(done)) => done,
        Some(Err(_)) => {
            let _ = child.terminate(Duration::from_secs(1)).await;
            return Err(NotCaptured::TimedOut);
        }
        None => {
            let _ = child.terminate(Duration::from_secs(1)).await;
            return Err(NotCaptured::Interrupted);
        }
    };
    let status = child
        .wait()
        .await
        .map_err(|error| NotCaptured::Failed(error.to_string()));
    // Helpers it left in its group go with it.
    child.kill_group();
    Ok(Captured {
        status: status?,
        stdout,
        stderr,
    })
}
