//! The project checker behind `diagnostics "*"`: the whole project's errors and warnings from
//! the family's command-line checker, in the same shape as a file's diagnostics.
//!
//! | family | checker (first that is installed) | files given |
//! |---|---|---|
//! | python | `basedpyright --outputjson`, `pyright --outputjson` | (it finds them) |
//! | typescript | `tsc --noEmit --pretty false` | none with a `tsconfig.json`, else every `.ts`/`.tsx` |
//! | rust | `cargo check --message-format=json --quiet` (`CARGO_NET_OFFLINE=true`) | (cargo) |
//! | go | `go vet ./...` | (go) |
//! | c | `clang-tidy --quiet` (also `clang-tidy-NN`), else `gcc -fsyntax-only` per file | `compile_commands.json`'s, else every C/C++ source |
//!
//! The checker runs at the project root, in its own process group ([`cc_process::spawn_group`]),
//! with a timeout ([`crate::ServerSpec::checker_timeout`], default 5 min) after which the whole
//! group is killed. Its program is looked up in the project's own `node_modules/.bin`,
//! `.venv/bin` and `venv/bin` (in the root and the folders above it, inside the workspace)
//! before PATH. How its output is read follows the program's name ([`Format::for_program`]);
//! a configured checker of another name is read as `file:line:col: severity: message` lines.

mod cargo_scope;
mod parse;
mod plan;
mod restrict;
mod scope;
mod targets;

pub use scope::LeftOut;
pub use targets::ProjectChecker;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;

use crate::diagnostic::Diagnostic;
use crate::error::fmt_duration;

pub(crate) use parse::parse as parse_output;
pub use parse::Format;
pub(crate) use plan::{find_program, install_how, output_dir, plan, Plan};

/// Bytes of a checker's stdout or stderr kept at most (the rest is read and dropped, so a
/// chatty checker never blocks on a full pipe).
const OUTPUT_CAP: usize = 32 * 1024 * 1024;

/// One diagnostic of a project check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDiagnostic {
    /// The file (absolute).
    pub path: PathBuf,
    /// What the checker said (`character` is a 0-based column in characters or bytes, as
    /// the checker counts).
    pub diagnostic: Diagnostic,
}

impl ProjectDiagnostic {
    pub(crate) fn new(path: PathBuf, diagnostic: Diagnostic) -> Self {
        ProjectDiagnostic { path, diagnostic }
    }
}

/// A family and a project root to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectTarget {
    /// The family (`python`).
    pub family: String,
    /// The project root (absolute).
    pub root: PathBuf,
}

/// What one checker run found.
#[derive(Debug, Clone)]
pub struct ProjectCheck {
    /// The family.
    pub family: String,
    /// The project root it ran in.
    pub root: PathBuf,
    /// The command, for people (`basedpyright --outputjson`, `clang-tidy-19 --quiet (3 files)`).
    pub command: String,
    /// Everything it reported (all severities), in its order.
    pub diagnostics: Vec<ProjectDiagnostic>,
    /// Its exit code (the last non-zero one when it ran several times).
    pub exit_code: Option<i32>,
    /// Something the agent should know about how it ran (a fallback, files left out).
    pub note: Option<String>,
    /// Files of the project its own configuration leaves out and that were not checked (a
    /// tsconfig's `include` leaving out tests, a cargo feature or cfg that is off), by reason.
    pub left_out: Vec<LeftOut>,
    /// How long it took.
    pub elapsed: Duration,
}

/// Why a project check produced no result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CheckerError {
    /// The family has no checker in the table.
    #[error("no project checker is configured for {family}; set one, e.g. {setting}")]
    NotConfigured {
        /// The family.
        family: String,
        /// The setting that names one, and where it is.
        setting: String,
    },
    /// The checker's program is not installed.
    #[error("the {family} project checker `{program}` is not installed (not found in the project or on PATH); {hint}")]
    Missing {
        /// The family.
        family: String,
        /// The program that was looked for.
        program: String,
        /// How to install it.
        hint: String,
    },
    /// The checker would run the workspace's own code, which this surface does not allow.
    #[error("{reason}")]
    Refused {
        /// The family.
        family: String,
        /// Why, and what to do.
        reason: String,
    },
    /// There is nothing for the checker to read.
    #[error("{detail}")]
    NothingToCheck {
        /// The family.
        family: String,
        /// What is missing, and what to add.
        detail: String,
    },
    /// The program could not be started.
    #[error("could not start `{command}`: {detail}")]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        detail: String,
    },
    /// It ran out of time and was killed.
    #[error(
        "`{command}` did not finish within {}; it was stopped. Raise {setting}, or ask for \
         one file's diagnostics",
        fmt_duration(*.timeout)
    )]
    Timeout {
        /// The family.
        family: String,
        /// The command.
        command: String,
        /// The budget.
        timeout: Duration,
        /// The setting that raises it, and where it is.
        setting: String,
    },
    /// It failed without reporting any diagnostic (a broken configuration, a missing
    /// dependency).
    #[error("`{command}` failed ({status}) without reporting diagnostics; its output ends with: {output}")]
    Failed {
        /// The command.
        command: String,
        /// How it ended.
        status: String,
        /// The last lines it printed.
        output: String,
    },
    /// Its output could not be read.
    #[error("the output of `{command}` cannot be read: {detail}")]
    Unreadable {
        /// The command.
        command: String,
        /// What was wrong.
        detail: String,
    },
}

/// The short name of a [`CheckerError`] (closed: a host maps every kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckerErrorKind {
    /// `not_supported`: no checker for the family.
    NotSupported,
    /// `checker_missing`
    CheckerMissing,
    /// `nothing_to_check`
    NothingToCheck,
    /// `needs_full_surface`: the checker would run the workspace's own code.
    NeedsFullSurface,
    /// `checker_failed`
    CheckerFailed,
    /// `timeout`
    Timeout,
}

impl CheckerErrorKind {
    /// The name (`checker_missing`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckerErrorKind::NotSupported => "not_supported",
            CheckerErrorKind::CheckerMissing => "checker_missing",
            CheckerErrorKind::NothingToCheck => "nothing_to_check",
            CheckerErrorKind::NeedsFullSurface => "needs_full_surface",
            CheckerErrorKind::CheckerFailed => "checker_failed",
            CheckerErrorKind::Timeout => "timeout",
        }
    }
}

impl std::fmt::Display for CheckerErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for CheckerErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl CheckerError {
    /// No checker for `family`, and the setting (at `place`) that names one.
    pub(crate) fn not_configured(family: &str, place: &cc_workspace::SettingsPlace) -> Self {
        CheckerError::NotConfigured {
            family: family.to_owned(),
            setting: place.setting(Some(family), "checker = [\"program\", \"--flag\"]"),
        }
    }

    /// A short kind for tool errors (`checker_missing`, `timeout`, …).
    pub fn kind(&self) -> CheckerErrorKind {
        use CheckerErrorKind as K;
        match self {
            CheckerError::NotConfigured { .. } => K::NotSupported,
            CheckerError::Missing { .. } => K::CheckerMissing,
            CheckerError::NothingToCheck { .. } => K::NothingToCheck,
            CheckerError::Refused { .. } => K::NeedsFullSurface,
            CheckerError::Spawn { .. } => K::CheckerFailed,
            CheckerError::Timeout { .. } => K::Timeout,
            CheckerError::Failed { .. } => K::CheckerFailed,
            CheckerError::Unreadable { .. } => K::CheckerFailed,
        }
    }
}

/// What one process printed.
struct Output {
    stdout: String,
    stderr: String,
    code: Option<i32>,
    status: String,
}

/// Runs every invocation of `plan` in turn, within its timeout, and parses what they print.
pub(crate) async fn run(
    plan: &Plan,
    path_var: &std::ffi::OsStr,
) -> Result<ProjectCheck, CheckerError> {
    let started = Instant::now();
    let deadline = started + plan.timeout;
    let mut diagnostics = Vec::new();
    let mut exit_code = Some(0);
    let mut shown = vec![plan.shown.clone()];
    run_plan(plan, path_var, deadline, &mut diagnostics, &mut exit_code).await?;
    for also in &plan.also {
        shown.push(also.shown.clone());
        run_plan(also, path_var, deadline, &mut diagnostics, &mut exit_code).await?;
    }
    Ok(ProjectCheck {
        family: plan.family.clone(),
        root: plan.root.clone(),
        command: shown.join("; "),
        diagnostics,
        exit_code,
        note: plan.note.clone(),
        left_out: plan.left_out.clone(),
        elapsed: started.elapsed(),
    })
}

/// Runs one checker's invocations, adding what they report to `diagnostics`.
async fn run_plan(
    plan: &Plan,
    path_var: &std::ffi::OsStr,
    deadline: Instant,
    all: &mut Vec<ProjectDiagnostic>,
    exit_code: &mut Option<i32>,
) -> Result<(), CheckerError> {
    let mut diagnostics = Vec::new();
    let mut failure: Option<Output> = None;
    for args in &plan.invocations {
        let output = run_one(plan, args, path_var, deadline).await?;
        let found = parse::parse(
            plan.format,
            &plan.program.to_string_lossy(),
            &output.stdout,
            &output.stderr,
            &plan.root,
        )
        .map_err(|detail| CheckerError::Unreadable {
            command: plan.shown.clone(),
            detail: format!(
                "{detail}; it printed: {}",
                tail(&output.stdout, &output.stderr)
            ),
        })?;
        if output.code != Some(0) {
            *exit_code = output.code;
            if !found.iter().any(|d| d.diagnostic.is_problem()) && failure.is_none() {
                failure = Some(output);
            }
        }
        diagnostics.extend(found);
    }
    // A checker that failed and reported nothing failed for a reason of its own: say it,
    // rather than report a clean project.
    if let Some(output) = failure.filter(|_| !diagnostics.iter().any(|d| d.diagnostic.is_problem()))
    {
        return Err(CheckerError::Failed {
            command: plan.shown.clone(),
            status: output.status,
            output: tail(&output.stdout, &output.stderr),
        });
    }
    all.extend(diagnostics);
    Ok(())
}

async fn run_one(
    plan: &Plan,
    args: &[String],
    path_var: &std::ffi::OsStr,
    deadline: Instant,
) -> Result<Output, CheckerError> {
    let mut command = tokio::process::Command::new(&plan.program);
    command
        .args(args)
        .current_dir(&plan.root)
        .env("PATH", path_var)
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cc_process::spawn_group(command).map_err(|error| CheckerError::Spawn {
        command: plan.shown.clone(),
        detail: error.to_string(),
    })?;
    let stdout = child.take_stdout();
    let stderr = child.take_stderr();
    let work = async {
        let (out, err) = tokio::join!(read_capped(stdout), read_capped(stderr));
        let status = child.wait().await;
        (out, err, status)
    };
    let outcome = tokio::time::timeout_at(deadline, work).await;
    let Ok((stdout, stderr, status)) = outcome else {
        // The reads borrow nothing of `child` past this point: end the whole group.
        let _ = child.terminate(Duration::from_secs(2)).await;
        return Err(CheckerError::Timeout {
            family: plan.family.clone(),
            setting: plan.timeout_setting.clone(),
            command: plan.shown.clone(),
            timeout: plan.timeout,
        });
    };
    // Whatever the checker left running in its group (a compiler, a daemon) goes too.
    let _ = child.terminate(Duration::from_secs(2)).await;
    let status = status.map_err(|error| CheckerError::Spawn {
        command: plan.shown.clone(),
        detail: error.to_string(),
    })?;
    Ok(Output {
        stdout,
        stderr,
        code: status.code(),
        status: status.to_string(),
    })
}

async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>) -> String {
    let Some(mut reader) = reader else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// The last few non-empty lines of stderr (else stdout), for an error message.
fn tail(stdout: &str, stderr: &str) -> String {
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let start = lines.len().saturating_sub(5);
    let joined = lines[start..].join("\n");
    if joined.is_empty() {
        "(nothing)".into()
    } else if joined.len() > 2000 {
        let mut cut = joined.len() - 2000;
        while !joined.is_char_boundary(cut) {
            cut += 1;
        }
        format!("…{}", &joined[cut..])
    } else {
        joined
    }
}
