//! The errors of this crate: [`ClientError`] for one request on a connection, [`DebugError`]
//! for what a session or the debugger refuses or fails to do.

use std::time::Duration;

/// Why one request got no usable answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection ended (the adapter exited or closed it) before the answer came.
    #[error("the debug adapter closed the connection before answering `{command}`: {reason}")]
    Closed {
        /// The request.
        command: String,
        /// What ended the connection.
        reason: String,
    },
    /// The adapter answered `success: false`.
    #[error("the debug adapter refused `{command}`: {message}")]
    Failed {
        /// The request.
        command: String,
        /// The adapter's reason.
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("the debug adapter's answer to `{command}` could not be read: {detail}")]
    Malformed {
        /// The request.
        command: String,
        /// The parse error.
        detail: String,
    },
    /// No answer within the time allowed.
    #[error("the debug adapter did not answer `{command}` within {}s", .after.as_secs())]
    Timeout {
        /// The request.
        command: String,
        /// How long we waited.
        after: Duration,
    },
}

/// What the debugger or a session could not do. [`kind`](DebugError::kind) is a stable
/// machine-readable name; the message says what to do next.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DebugError {
    /// An operation that needs a session was called without one.
    #[error("no debug session is running; start one with `launch` (or `attach`)")]
    NoSession,
    /// `launch`/`attach` while a session lives.
    #[error(
        "a debug session is already live ({describe}); one runs at a time: call `terminate` \
         first, then launch again"
    )]
    SessionActive {
        /// Which session (adapter, program, state).
        describe: String,
    },
    /// The session reached its time-to-live and its adapter was killed.
    #[error(
        "the debug session ({describe}) expired: sessions live at most {}s, after which the \
         adapter and the program are killed; start a new one with `launch`",
        .ttl.as_secs()
    )]
    SessionExpired {
        /// Which session it was.
        describe: String,
        /// The time-to-live.
        ttl: Duration,
    },
    /// The adapter process ended while the session needed it.
    #[error(
        "the debug adapter `{adapter}` exited unexpectedly ({reason}); the session is over: \
         `output` still shows what the program printed, `terminate` clears it, `launch` starts \
         a new one{}",
        tail_note(.log_tail)
    )]
    AdapterExited {
        /// The adapter's name.
        adapter: String,
        /// How it ended.
        reason: String,
        /// The end of what it printed on stderr.
        log_tail: String,
    },
    /// The adapter cannot be used here.
    #[error("the `{adapter}` debug adapter is not available: {reason}")]
    AdapterUnavailable {
        /// The adapter's name.
        adapter: String,
        /// Which half of detection failed and how to fix it.
        reason: String,
    },
    /// An `adapter` argument that names no adapter.
    #[error("unknown debug adapter `{name}`; known adapters: {known}")]
    UnknownAdapter {
        /// The name given.
        name: String,
        /// Comma-separated known names.
        known: String,
    },
    /// The adapter could not be chosen from the program.
    #[error(
        "cannot tell which debug adapter runs `{program}`: {why}; pass `adapter` (one of \
         debugpy, lldb, delve, dart)"
    )]
    CannotPickAdapter {
        /// The program.
        program: String,
        /// Why not.
        why: String,
    },
    /// The program could not be started.
    #[error("the program could not be started under `{adapter}`: {message}{}", tail_note(.output_tail))]
    LaunchFailed {
        /// The adapter's name.
        adapter: String,
        /// The adapter's reason.
        message: String,
        /// What the program and adapter printed.
        output_tail: String,
    },
    /// The program (a test binary, a Go package) could not be built; `output` is what the
    /// build printed.
    #[error(
        "the build failed (`{command}`):\n{}\nfix it and `launch` again (`output` shows this \
         again)",
        .output.trim_end()
    )]
    BuildFailed {
        /// The build command.
        command: String,
        /// What it printed (the compiler's errors).
        output: String,
    },
    /// A frame id, variables reference or thread id from before the program last resumed:
    /// it may name something else now, so it is refused rather than answered.
    #[error("{what} is from before the program last resumed: the program has run since; {remedy}")]
    StaleReference {
        /// The handle (`frame 3`, `reference 12`, `thread 7`).
        what: String,
        /// How to get a fresh one (`call stack/scopes again`).
        remedy: String,
    },
    /// The caller cancelled the call while it waited.
    #[error("{0}")]
    Cancelled(String),
    /// A wait ran out of time.
    #[error("{what} did not happen within {}s{}", .after.as_secs(), tail_note(.output_tail))]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        after: Duration,
        /// What the program and adapter printed meanwhile.
        output_tail: String,
    },
    /// A request the adapter refused or did not answer.
    #[error(transparent)]
    Request(#[from] ClientError),
    /// An operation that needs the program stopped, while it runs or has exited.
    #[error("{0}")]
    NotStopped(String),
    /// Bad arguments for an operation (no thread to pick, an unknown frame, …).
    #[error("{0}")]
    InvalidArguments(String),
    /// The test named matches no test of its runner; the message lists the nearest names.
    #[error("{0}")]
    TestNotFound(String),
    /// The `[debug]` section of `.cc/tools.toml` is invalid.
    #[error("{0}")]
    Config(String),
    /// Starting a process or another local operation failed.
    #[error("{0}")]
    Io(String),
}

fn tail_note(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("; last output:\n{}", tail.trim_end())
    }
}

/// The stable machine-readable name of a [`DebugError`] (closed: a host maps every kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DebugErrorKind {
    /// `no_session`
    NoSession,
    /// `session_active`
    SessionActive,
    /// `session_expired`
    SessionExpired,
    /// `adapter_exited`
    AdapterExited,
    /// `adapter_unavailable`
    AdapterUnavailable,
    /// `unknown_adapter`
    UnknownAdapter,
    /// `cannot_pick_adapter`
    CannotPickAdapter,
    /// `launch_failed`
    LaunchFailed,
    /// `build_failed`
    BuildFailed,
    /// `stale_reference`
    StaleReference,
    /// `cancelled`
    Cancelled,
    /// `timeout`
    Timeout,
    /// `request_failed`
    RequestFailed,
    /// `not_stopped`
    NotStopped,
    /// `invalid_arguments`
    InvalidArguments,
    /// `test_not_found`
    TestNotFound,
    /// `invalid_config`
    InvalidConfig,
    /// `io`
    Io,
}

impl DebugErrorKind {
    /// The name (`no_session`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DebugErrorKind::NoSession => "no_session",
            DebugErrorKind::SessionActive => "session_active",
            DebugErrorKind::SessionExpired => "session_expired",
            DebugErrorKind::AdapterExited => "adapter_exited",
            DebugErrorKind::AdapterUnavailable => "adapter_unavailable",
            DebugErrorKind::UnknownAdapter => "unknown_adapter",
            DebugErrorKind::CannotPickAdapter => "cannot_pick_adapter",
            DebugErrorKind::LaunchFailed => "launch_failed",
            DebugErrorKind::BuildFailed => "build_failed",
            DebugErrorKind::StaleReference => "stale_reference",
            DebugErrorKind::Cancelled => "cancelled",
            DebugErrorKind::Timeout => "timeout",
            DebugErrorKind::RequestFailed => "request_failed",
            DebugErrorKind::NotStopped => "not_stopped",
            DebugErrorKind::InvalidArguments => "invalid_arguments",
            DebugErrorKind::TestNotFound => "test_not_found",
            DebugErrorKind::InvalidConfig => "invalid_config",
            DebugErrorKind::Io => "io",
        }
    }
}

impl std::fmt::Display for DebugErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for DebugErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl DebugError {
    /// A stable machine-readable name for the error.
    pub fn kind(&self) -> DebugErrorKind {
        use DebugErrorKind as K;
        match self {
            DebugError::NoSession => K::NoSession,
            DebugError::SessionActive { .. } => K::SessionActive,
            DebugError::SessionExpired { .. } => K::SessionExpired,
            DebugError::AdapterExited { .. } => K::AdapterExited,
            DebugError::AdapterUnavailable { .. } => K::AdapterUnavailable,
            DebugError::UnknownAdapter { .. } => K::UnknownAdapter,
            DebugError::CannotPickAdapter { .. } => K::CannotPickAdapter,
            DebugError::LaunchFailed { .. } => K::LaunchFailed,
            DebugError::BuildFailed { .. } => K::BuildFailed,
            DebugError::StaleReference { .. } => K::StaleReference,
            DebugError::Cancelled(_) => K::Cancelled,
            DebugError::Timeout { .. } => K::Timeout,
            DebugError::Request(ClientError::Timeout { .. }) => K::Timeout,
            DebugError::Request(ClientError::Closed { .. }) => K::AdapterExited,
            DebugError::Request(_) => K::RequestFailed,
            DebugError::NotStopped(_) => K::NotStopped,
            DebugError::InvalidArguments(_) => K::InvalidArguments,
            DebugError::TestNotFound(_) => K::TestNotFound,
            DebugError::Config(_) => K::InvalidConfig,
            DebugError::Io(_) => K::Io,
        }
    }
}
