//! The server's process: started in its own process group, its stderr drained into a
//! bounded tail (a server that fills its stderr pipe never stalls), its exit status read
//! when its output ends, and the whole group killed at the end. The JSON-RPC over its
//! stdin and stdout is a [`Connection`], which knows nothing of the process.

use std::collections::VecDeque;
use std::io;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cc_process::{lock, GroupChild};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use crate::transport::{Closed, Connection, Ended, Incoming, IncomingReceiver};

/// Lines of stderr kept for error messages.
const STDERR_LINES: usize = 20;
/// Bytes of stderr kept at most per line.
const STDERR_LINE_BYTES: usize = 400;

type Child = Arc<tokio::sync::Mutex<Option<GroupChild>>>;

/// A running server process. Dropping it kills its process group.
pub struct ServerProcess {
    name: String,
    child: Child,
    pid: u32,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProcess")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl ServerProcess {
    /// Starts `command` in its own process group (see `cc_process::spawn_group`), with a
    /// [`Connection`] over its stdin and stdout. With `logs`, every stderr line also comes
    /// in as [`Incoming::Log`] (for servers whose log says something the protocol does not).
    pub fn spawn(
        name: &str,
        mut command: tokio::process::Command,
        logs: bool,
    ) -> io::Result<(ServerProcess, Connection, IncomingReceiver)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cc_process::spawn_group(command)?;
        let stdin = child
            .take_stdin()
            .ok_or_else(|| io::Error::other("child has no stdin"))?;
        let stdout = child
            .take_stdout()
            .ok_or_else(|| io::Error::other("child has no stdout"))?;
        let stderr = child.take_stderr();
        let pid = child.id();
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let stderr_task = stderr.map(|stderr| {
            let logs = logs.then(|| in_tx.downgrade());
            keep_stderr_tail(stderr, name, tail.clone(), move |kept| {
                if let Some(logs) = logs.as_ref().and_then(|logs| logs.upgrade()) {
                    let _ = logs.send(Incoming::Log { line: kept });
                }
            })
        });
        let child: Child = Arc::new(tokio::sync::Mutex::new(Some(child)));
        let ended = ended(Arc::downgrade(&child), tail.clone(), stderr_task);
        let conn = Connection::start(name, stdout, stdin, in_tx, Some(ended));
        let process = ServerProcess {
            name: name.to_owned(),
            child,
            pid,
            stderr: tail,
        };
        Ok((process, conn, in_rx))
    }

    /// Its pid (and process group).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The last lines it printed on stderr.
    pub fn stderr_tail(&self) -> String {
        lock(&self.stderr)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Ends the process group: waits up to `grace` for the leader to exit by itself (after
    /// `exit`), then SIGKILLs the whole group.
    pub async fn kill_after(&self, grace: Duration) {
        let mut child = self.child.lock().await;
        if let Some(child) = child.as_mut() {
            if let Err(error) = child.wait_or_kill(grace).await {
                tracing::warn!(server = %self.name, %error, "could not reap the server");
            }
        }
    }
}

/// How the process ended, for the connection once its output has: its exit status (when it
/// comes within 2 s) and its last stderr lines. Holds the child weakly, so that dropping the
/// [`ServerProcess`] still kills the group.
fn ended(
    child: std::sync::Weak<tokio::sync::Mutex<Option<GroupChild>>>,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
) -> Ended {
    Box::new(move || {
        Box::pin(async move {
            let wait = async {
                let child = child.upgrade()?;
                let mut child = child.lock().await;
                match child.as_mut() {
                    Some(child) => child.wait().await.ok().map(|status| status.to_string()),
                    None => None,
                }
            };
            let status = tokio::time::timeout(Duration::from_secs(2), wait)
                .await
                .ok()
                .flatten();
            if let Some(task) = stderr_task {
                let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
            }
            let stderr_tail = lock(&tail)
                .iter()
                .rev()
                .take(5)
                .rev()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n");
            Closed {
                status,
                stderr_tail,
            }
        })
    })
}

/// The last lines a child printed on stderr, oldest first.
pub(crate) type StderrTail = Arc<Mutex<VecDeque<String>>>;

/// Reads a child's `stderr` to its end (a child that fills the pipe never stalls), keeping
/// its last [`STDERR_LINES`] lines, each cut to [`STDERR_LINE_BYTES`], in `tail`; `each`
/// gets every kept line too.
pub(crate) fn keep_stderr_tail(
    stderr: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    name: &str,
    tail: StderrTail,
    mut each: impl FnMut(String) + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let name = name.to_owned();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(server = %name, "stderr: {line}");
            let kept = truncate(&line, STDERR_LINE_BYTES);
            {
                let mut tail = lock(&tail);
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(kept.clone());
            }
            each(kept);
        }
    })
}

fn truncate(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_owned();
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}
