//! Why a kernel could not run a cell at all (a cell's own exception is part of its outcome).

use crate::language::Language;

/// A kernel failure outside of any cell: no interpreter, a failed start, a closed session.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// No interpreter could be found for the language.
    #[error(
        "no {language} interpreter found (tried {tried}); install one, or name it with `{setting} = \
         \"/path/to/it\"` in {section}"
    )]
    InterpreterNotFound {
        /// The language asked for.
        language: Language,
        /// What was looked for, in order.
        tried: String,
        /// The configuration key that names the interpreter.
        setting: &'static str,
        /// The section that key is in, and where that is.
        section: String,
    },
    /// The interpreter could not be executed.
    #[error("could not start the {language} kernel with `{program}`: {source}")]
    Spawn {
        /// The language asked for.
        language: Language,
        /// The command that failed.
        program: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The interpreter started but its driver never said it was ready.
    #[error("the {language} kernel `{program}` did not start: {reason}{}", stderr_note(.stderr))]
    StartFailed {
        /// The language asked for.
        language: Language,
        /// The command that was run.
        program: String,
        /// What happened (exited with status 1, no answer within 60 s, …).
        reason: String,
        /// What the interpreter wrote to stderr.
        stderr: String,
    },
    /// The `[kernel]` section could not be used (a `BrokenSection`'s words).
    #[error("{0}")]
    Misconfigured(String),
    /// The session was shut down with the run.
    #[error("the kernels of this run have been shut down; no further cells can run")]
    ShutDown,
}

fn stderr_note(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr:\n{stderr}")
    }
}

/// The machine-readable name of a [`KernelError`] (closed: a host maps every kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelErrorKind {
    /// `interpreter_not_found`
    InterpreterNotFound,
    /// `kernel_start_failed`
    StartFailed,
    /// `misconfigured`
    Misconfigured,
    /// `shut_down`
    ShutDown,
}

impl KernelErrorKind {
    /// The name (`interpreter_not_found`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            KernelErrorKind::InterpreterNotFound => "interpreter_not_found",
            KernelErrorKind::StartFailed => "kernel_start_failed",
            KernelErrorKind::Misconfigured => "misconfigured",
            KernelErrorKind::ShutDown => "shut_down",
        }
    }
}

impl std::fmt::Display for KernelErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for KernelErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl KernelError {
    /// A machine-readable kind for tool errors.
    pub fn kind(&self) -> KernelErrorKind {
        match self {
            KernelError::InterpreterNotFound { .. } => KernelErrorKind::InterpreterNotFound,
            KernelError::Spawn { .. } | KernelError::StartFailed { .. } => {
                KernelErrorKind::StartFailed
            }
            KernelError::Misconfigured(_) => KernelErrorKind::Misconfigured,
            KernelError::ShutDown => KernelErrorKind::ShutDown,
        }
    }
}
