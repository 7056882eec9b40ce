//! Running an indexer: the binary found and checked once per process, its output written to
//! the cache (through a temporary name, so a killed run leaves no half output behind), its
//! process group reaped whatever happens to the caller.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::{Indexer, PrecisePlan};

/// A run that takes longer is ended (a kernel-size tree is no place for these indexers).
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a `--version` check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// How much of an indexer's stderr an error quotes (the end of it).
const STDERR_TAIL: usize = 2_000;

/// Why an indexer did not give an output.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PreciseError {
    /// No binary of the indexer on PATH runs.
    #[error("{indexer} is not installed: {why}; {hint}")]
    Missing {
        /// The indexer's name.
        indexer: &'static str,
        /// What was tried, and why it does not do.
        why: String,
        /// How to install it ([`Indexer::install_hint`]).
        hint: &'static str,
    },
    /// The plan keeps the indexer off here ([`PrecisePlan::skipped`]).
    #[error("{indexer} does not run here: {why}")]
    Skipped {
        /// The indexer's name.
        indexer: &'static str,
        /// Why it is off.
        why: String,
    },
    /// The indexer exited with an error, or wrote no output.
    #[error("{indexer} failed ({status}): {stderr}")]
    Failed {
        /// The indexer's name.
        indexer: &'static str,
        /// Its exit status, or `no output written` when it exited 0 without one.
        status: String,
        /// The end of what it wrote to stderr.
        stderr: String,
    },
    /// The run took longer than the timeout; its process group was killed.
    #[error("{indexer} ran out of time ({seconds} s) and was ended")]
    TimedOut {
        /// The indexer's name.
        indexer: &'static str,
        /// The timeout, in seconds.
        seconds: u64,
    },
    /// Preparing, starting or waiting for the run, or keeping its output, failed.
    #[error("{indexer}: {message}")]
    Io {
        /// The indexer's name.
        indexer: &'static str,
        /// What failed, and the system's error.
        message: String,
    },
}

type Located = Result<PathBuf, String>;

fn located() -> &'static Mutex<HashMap<Indexer, Located>> {
    static LOCATED: OnceLock<Mutex<HashMap<Indexer, Located>>> = OnceLock::new();
    LOCATED.get_or_init(Default::default)
}

/// The indexer's binary: the first on PATH whose `--version` runs (a rustup proxy for a
/// missing component does not), checked once per process; the error says what was tried.
pub async fn locate(indexer: Indexer) -> Result<PathBuf, PreciseError> {
    let known = cc_process::lock(located()).get(&indexer).cloned();
    let found = match known {
        Some(found) => found,
        None => {
            let found = first_that_runs(indexer).await;
            cc_process::lock(located()).insert(indexer, found.clone());
            found
        }
    };
    found.map_err(|why| PreciseError::Missing {
        indexer: indexer.name(),
        why,
        hint: indexer.install_hint(),
    })
}

async fn first_that_runs(indexer: Indexer) -> Located {
    let candidates = cc_process::find_all_on_path(indexer.binary());
    if candidates.is_empty() {
        return Err(format!("no `{}` on PATH", indexer.binary()));
    }
    let mut tried = Vec::new();
    for candidate in candidates {
        let mut command = Command::new(&candidate);
        command
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let outcome = match cc_process::spawn_group(command) {
            Ok(mut child) => match tokio::time::timeout(CHECK_TIMEOUT, child.wait()).await {
                Ok(Ok(status)) if status.success() => return Ok(candidate),
                Ok(Ok(status)) => format!("{status}"),
                Ok(Err(e)) => e.to_string(),
                Err(_) => "no answer to --version".to_owned(),
            },
            Err(e) => e.to_string(),
        };
        tried.push(format!("{} ({outcome})", candidate.display()));
    }
    Err(format!("none runs: {}", tried.join("; ")))
}

/// Runs `plan`'s indexer and returns its output (the plan's `output`, written whole or not
/// at all). Dropping the future ends the indexer's whole process group.
pub async fn run(plan: &PrecisePlan) -> Result<PathBuf, PreciseError> {
    let indexer = plan.indexer;
    if let Some(why) = &plan.skipped {
        return Err(PreciseError::Skipped {
            indexer: indexer.name(),
            why: why.clone(),
        });
    }
    let io = |what: &str, e: std::io::Error| PreciseError::Io {
        indexer: indexer.name(),
        message: format!("{what}: {e}"),
    };
    let binary = locate(indexer).await?;
    std::fs::create_dir_all(&plan.scratch)
        .map_err(|e| io("cannot create its scratch folder", e))?;
    let partial = plan.output.with_extension("scip.partial");
    let command = command_for(plan, &binary, &partial).map_err(|e| io("cannot prepare", e))?;
    let mut command = command;
    command
        .current_dir(&plan.root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cc_process::spawn_group(command).map_err(|e| io("cannot start", e))?;
    let mut stderr = child.take_stderr();
    let reader = async move {
        let mut tail = Vec::new();
        if let Some(stderr) = stderr.as_mut() {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > 4 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
        }
        tail
    };
    let waited = tokio::time::timeout(RUN_TIMEOUT, async {
        let (status, tail) = tokio::join!(child.wait(), reader);
        (status, tail)
    })
    .await;
    let Ok((status, tail)) = waited else {
        child.kill_group();
        let _ = std::fs::remove_file(&partial);
        return Err(PreciseError::TimedOut {
            indexer: indexer.name(),
            seconds: RUN_TIMEOUT.as_secs(),
        });
    };
    // The leader is done; whatever it left behind in its group goes too.
    child.kill_group();
    let status = status.map_err(|e| io("lost its process", e))?;
    if !status.success() || !partial.is_file() {
        let _ = std::fs::remove_file(&partial);
        let text = String::from_utf8_lossy(&tail);
        let start = text.len().saturating_sub(STDERR_TAIL);
        let start = (start..text.len())
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(text.len());
        return Err(PreciseError::Failed {
            indexer: indexer.name(),
            status: if status.success() {
                "no output written".to_owned()
            } else {
                status.to_string()
            },
            stderr: text[start..].trim().to_owned(),
        });
    }
    std::fs::rename(&partial, &plan.output).map_err(|e| io("cannot keep its output", e))?;
    Ok(plan.output.clone())
}

/// The command line of `plan`'s indexer, writing to `output`.
fn command_for(plan: &PrecisePlan, binary: &Path, output: &Path) -> std::io::Result<Command> {
    let mut command = Command::new(binary);
    match plan.indexer {
        Indexer::TypeScript => {
            command.arg("index").arg("--output").arg(output);
            // Without a tsconfig at the root, one in the scratch folder (scip-typescript's own
            // `--infer-tsconfig` would write one into the workspace).
            if !["tsconfig.json", "jsconfig.json"]
                .iter()
                .any(|name| plan.root.join(name).is_file())
            {
                let tsconfig = serde_json::json!({
                    "compilerOptions": {
                        "allowJs": true, "checkJs": false, "noEmit": true, "strict": true,
                        "target": "esnext", "module": "esnext", "moduleResolution": "bundler",
                        "skipLibCheck": true, "jsx": "preserve",
                    },
                    "include": [plan.root.join("**").join("*")],
                    "exclude": [plan.root.join("**").join("node_modules")],
                });
                std::fs::write(plan.scratch.join("tsconfig.json"), tsconfig.to_string())?;
                command.arg(&plan.scratch);
            }
        }
        Indexer::Python => {
            let name = plan
                .root
                .file_name()
                .map_or_else(|| "workspace".into(), |n| n.to_string_lossy().into_owned());
            command
                .arg("index")
                .arg("--quiet")
                .arg("--project-name")
                .arg(name)
                // Else it asks git, which fails outside a checkout.
                .arg("--project-version")
                .arg("0")
                .arg("--cwd")
                .arg(&plan.root)
                .arg("--output")
                .arg(output);
            // The project's interpreter outside the workspace (a venv inside it is the
            // workspace's code), never the harness's own tools' environment.
            let query = cc_workspace::python::PythonQuery {
                outside_workspace_only: true,
                ..cc_workspace::python::PythonQuery::new(&plan.root, &plan.root)
            };
            if let Some(dir) = cc_workspace::python::project_python(&query)
                .ok()
                .and_then(|choice| choice.path.parent().map(Path::to_path_buf))
            {
                let path = std::env::var_os("PATH").unwrap_or_default();
                command.env("PATH", cc_workspace::python::path_with(&dir, &path));
            }
        }
        Indexer::Rust => {
            command
                .arg("scip")
                .arg(&plan.root)
                .arg("--output")
                .arg(output)
                // Its build of build scripts goes to the scratch folder, not the workspace.
                .env("CARGO_TARGET_DIR", plan.scratch.join("target"));
        }
    }
    Ok(command)
}
