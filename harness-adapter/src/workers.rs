//! Background workers for `vibe_*`: one command per tier from `.cc/tools.toml`.
//!
//! ```toml
//! [workers.fast]
//! command = ["my-agent", "--non-interactive", "--model", "small"]
//! timeout_seconds = 1800      # optional; default 3600
//!
//! [workers.good]
//! command = ["my-agent", "--non-interactive", "--model", "large"]
//! env = { AGENT_MODE = "review" }   # optional extra environment
//! ```
//!
//! The worker gets its brief on stdin and its stdout is the result. It runs in the workspace
//! root, in a process group of its own that is killed by `vibe_kill`, by a rerun, and when the
//! run ends.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use cc_tools::vibe::{WorkerBackend, WorkerTier};
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Bytes of a worker's stdout kept as its result.
const MAX_RESULT_BYTES: usize = 1024 * 1024;
/// Bytes of a failed worker's stderr quoted in the error.
const STDERR_TAIL_BYTES: usize = 2048;

/// The `[workers]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkersSection {
    /// The command for `fast` workers.
    pub fast: Option<WorkerCommand>,
    /// The command for `good` workers.
    pub good: Option<WorkerCommand>,
}

/// One tier's command.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerCommand {
    /// Program and arguments.
    pub command: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How long one run may take (default an hour).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// Runs workers as configured commands.
#[derive(Debug, Clone)]
pub struct CommandBackend {
    root: PathBuf,
    section: WorkersSection,
}

impl CommandBackend {
    /// A backend for `section`, running commands in `root`; None when no tier is configured.
    pub fn new(root: PathBuf, section: WorkersSection) -> Option<Self> {
        if section.fast.is_none() && section.good.is_none() {
            return None;
        }
        Some(CommandBackend { root, section })
    }

    fn command_for(&self, tier: WorkerTier) -> Option<&WorkerCommand> {
        match tier {
            WorkerTier::Fast => self.section.fast.as_ref(),
            WorkerTier::Good => self.section.good.as_ref(),
        }
    }
}

#[async_trait]
impl WorkerBackend for CommandBackend {
    fn supports(&self, tier: WorkerTier) -> bool {
        self.command_for(tier)
            .is_some_and(|command| !command.command.is_empty())
    }

    async fn run(&self, tier: WorkerTier, brief: &str) -> Result<String, String> {
        let config = self
            .command_for(tier)
            .ok_or_else(|| format!("no `{}` worker is configured", tier.as_str()))?;
        let (program, args) = config
            .command
            .split_first()
            .ok_or_else(|| format!("the `{}` worker's command is empty", tier.as_str()))?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .envs(&config.env)
            .current_dir(&self.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cc_process::spawn_group(command)
            .map_err(|error| format!("could not start `{program}`: {error}"))?;
        let timeout = Duration::from_secs(config.timeout_seconds.unwrap_or(3600));
        let (stdin, stdout, stderr) =
            (child.take_stdin(), child.take_stdout(), child.take_stderr());
        let io = async {
            let feed = async {
                if let Some(mut stdin) = stdin {
                    // A worker that never reads its brief is its own business: ignore EPIPE.
                    let _ = stdin.write_all(brief.as_bytes()).await;
                    let _ = stdin.shutdown().await;
                }
            };
            let (_, out, err) = tokio::join!(feed, read_capped(stdout), read_capped(stderr));
            let status = child.wait().await;
            (out, err, status)
        };
        let (out, err, status) = tokio::time::timeout(timeout, io).await.map_err(|_| {
            format!(
                "the worker ran longer than {} s and was killed",
                timeout.as_secs()
            )
        })?;
        let status = status.map_err(|error| format!("waiting for the worker failed: {error}"))?;
        if status.success() {
            Ok(String::from_utf8_lossy(&out).into_owned())
        } else {
            let tail_start = err.len().saturating_sub(STDERR_TAIL_BYTES);
            Err(format!(
                "the worker exited with {status}: {}",
                String::from_utf8_lossy(&err[tail_start..]).trim()
            ))
        }
    }
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(reader: Option<R>) -> Vec<u8> {
    let Some(mut reader) = reader else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return kept,
            Ok(read) => {
                let room = MAX_RESULT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..read.min(room)]);
            }
        }
    }
}
