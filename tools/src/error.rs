//! The typed error every tool returns, and its JSON shape.

use std::fmt;

use serde_json::{Map, Value};

/// Defines [`ErrorKind`]: each variant with its wire name and what it means.
macro_rules! error_kinds {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal,)+) => {
        /// Every kind of error a tool returns: closed, so a client (or a Rust host) can match
        /// on all of them. The wire name is snake case (`outside_root`); the tools' README
        /// lists them, and a test keeps the list and this enum the same.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
        pub enum ErrorKind {
            $($(#[doc = $doc])+ #[serde(rename = $name)] $variant,)+
        }

        impl ErrorKind {
            /// Every kind, in the README's order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$variant,)+];

            /// The wire name (`outside_root`, …).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => $name,)+
                }
            }

            /// What the kind means, one sentence.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => concat!($($doc),+).trim_ascii(),)+
                }
            }
        }
    };
}

error_kinds! {
    // Any tool.
    /// The arguments do not match the tool's schema (or the action's needs).
    InvalidArguments = "invalid_arguments",
    /// No tool by that name is registered for this run.
    UnknownTool = "unknown_tool",
    /// The tool (or a tier of it) is hidden on this surface, or its server is unavailable.
    NotAvailable = "not_available",
    /// The run's approver refused this call.
    Denied = "denied",
    /// A path argument resolves outside the workspace root.
    OutsideRoot = "outside_root",
    /// A named file or folder does not exist.
    NotFound = "not_found",
    /// Reading or writing failed.
    Io = "io",
    /// Files changed since a change to them was staged or read; nothing was written.
    Stale = "stale",
    /// The call would deadlock (a tool re-entering itself through a bridge).
    Reentrant = "reentrant",
    /// Something went wrong inside the tool that is not the caller's fault.
    Internal = "internal",
    /// The call took longer than its budget.
    Timeout = "timeout",
    /// The call was cancelled by the client.
    Cancelled = "cancelled",
    /// The tool's section of `.cc/tools.toml` could not be used.
    InvalidConfig = "invalid_config",
    // The file tools.
    /// The path is a named pipe, a device or a socket.
    NotARegularFile = "not_a_regular_file",
    /// The file is larger than the tool reads or writes.
    TooLarge = "too_large",
    /// The file is not text.
    NotText = "not_text",
    /// The path is a folder where a file was expected.
    IsDirectory = "is_directory",
    /// The file exists where a new one was to be created.
    AlreadyExists = "already_exists",
    /// The text to replace does not occur in the file.
    NoMatch = "no_match",
    /// The text to replace occurs more than once.
    Ambiguous = "ambiguous",
    /// The patch does not parse.
    InvalidPatch = "invalid_patch",
    /// The patch's context is not in the file; nothing was written.
    PatchDoesNotApply = "patch_does_not_apply",
    // Structural search and rewrite.
    /// The pattern does not parse in any context of the ladder.
    Unparsable = "unparsable",
    /// The pattern is nested deeper or is longer than the documented limits.
    PatternTooLarge = "pattern_too_large",
    /// The language is not one of the parser set's.
    UnknownLanguage = "unknown_language",
    /// No staged edit has that id (never staged, already accepted or discarded).
    UnknownEdit = "unknown_edit",
    /// The rewrite template uses a metavariable the pattern does not bind.
    UnboundMetavariable = "unbound_metavariable",
    /// Two matches overlap without nesting.
    OverlappingMatches = "overlapping_matches",
    /// The staged edit was evicted to make room for newer ones.
    Expired = "expired",
    /// One edit alone holds more bytes than a run may stage.
    EditTooLarge = "edit_too_large",
    // The code graph.
    /// The index could not be opened or queried (its folder, SQLite, the configuration).
    GraphIndex = "graph_index",
    /// No definition or reference of the symbol at that line.
    SymbolNotFound = "symbol_not_found",
    // Language servers and project checkers.
    /// The language server exited while answering.
    ServerExited = "server_exited",
    /// The language server answered with an error.
    ServerError = "server_error",
    /// The rename was refused; nothing was changed.
    CannotRename = "cannot_rename",
    /// The server's edit could not be applied; nothing was changed.
    InvalidEdit = "invalid_edit",
    /// Nothing can do that for the language: its server neither renames nor finds
    /// references, or no project checker is configured.
    NotSupported = "not_supported",
    /// The project checker's program is not installed.
    CheckerMissing = "checker_missing",
    /// There is nothing for the project checker to read.
    NothingToCheck = "nothing_to_check",
    /// The checker would run the workspace's own code, which this surface does not allow.
    NeedsFullSurface = "needs_full_surface",
    /// The project checker could not run or its output could not be read.
    CheckerFailed = "checker_failed",
    // The debugger.
    /// An operation that needs a debug session was called without one.
    NoSession = "no_session",
    /// A debug session is already live.
    SessionActive = "session_active",
    /// The debug session reached its time-to-live.
    SessionExpired = "session_expired",
    /// The debug adapter exited while the session needed it.
    AdapterExited = "adapter_exited",
    /// The debug adapter is not installed.
    AdapterUnavailable = "adapter_unavailable",
    /// No debug adapter has that name.
    UnknownAdapter = "unknown_adapter",
    /// No debug adapter could be picked for the program.
    CannotPickAdapter = "cannot_pick_adapter",
    /// The program could not be launched (or attached to).
    LaunchFailed = "launch_failed",
    /// Building the program to debug failed.
    BuildFailed = "build_failed",
    /// A frame, variable or thread handle is from an earlier stop.
    StaleReference = "stale_reference",
    /// The debug adapter answered a request with an error.
    RequestFailed = "request_failed",
    /// The operation needs the program stopped.
    NotStopped = "not_stopped",
    /// No test of that name was found.
    TestNotFound = "test_not_found",
    // The kernels.
    /// No interpreter was found for the language.
    InterpreterNotFound = "interpreter_not_found",
    /// The kernel did not start.
    KernelStartFailed = "kernel_start_failed",
    /// The `[kernel]` section could not be used.
    Misconfigured = "misconfigured",
    /// The kernels of the run have been shut down.
    ShutDown = "shut_down",
    // Asking the user, and workers.
    /// No human is there to answer.
    NoHuman = "no_human",
    /// No worker has that name.
    UnknownWorker = "unknown_worker",
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ErrorKind> for &str {
    fn eq(&self, other: &ErrorKind) -> bool {
        *self == other.as_str()
    }
}

impl From<cc_dap_client::DebugErrorKind> for ErrorKind {
    fn from(kind: cc_dap_client::DebugErrorKind) -> Self {
        use cc_dap_client::DebugErrorKind as D;
        match kind {
            D::NoSession => ErrorKind::NoSession,
            D::SessionActive => ErrorKind::SessionActive,
            D::SessionExpired => ErrorKind::SessionExpired,
            D::AdapterExited => ErrorKind::AdapterExited,
            D::AdapterUnavailable => ErrorKind::AdapterUnavailable,
            D::UnknownAdapter => ErrorKind::UnknownAdapter,
            D::CannotPickAdapter => ErrorKind::CannotPickAdapter,
            D::LaunchFailed => ErrorKind::LaunchFailed,
            D::BuildFailed => ErrorKind::BuildFailed,
            D::StaleReference => ErrorKind::StaleReference,
            D::Cancelled => ErrorKind::Cancelled,
            D::Timeout => ErrorKind::Timeout,
            D::RequestFailed => ErrorKind::RequestFailed,
            D::NotStopped => ErrorKind::NotStopped,
            D::InvalidArguments => ErrorKind::InvalidArguments,
            D::TestNotFound => ErrorKind::TestNotFound,
            D::InvalidConfig => ErrorKind::InvalidConfig,
            D::Io => ErrorKind::Io,
        }
    }
}

impl From<cc_kernel_bridge::KernelErrorKind> for ErrorKind {
    fn from(kind: cc_kernel_bridge::KernelErrorKind) -> Self {
        use cc_kernel_bridge::KernelErrorKind as K;
        match kind {
            K::InterpreterNotFound => ErrorKind::InterpreterNotFound,
            K::StartFailed => ErrorKind::KernelStartFailed,
            K::Misconfigured => ErrorKind::Misconfigured,
            K::ShutDown => ErrorKind::ShutDown,
        }
    }
}

impl From<cc_lsp_client::CheckerErrorKind> for ErrorKind {
    fn from(kind: cc_lsp_client::CheckerErrorKind) -> Self {
        use cc_lsp_client::CheckerErrorKind as C;
        match kind {
            C::NotSupported => ErrorKind::NotSupported,
            C::CheckerMissing => ErrorKind::CheckerMissing,
            C::NothingToCheck => ErrorKind::NothingToCheck,
            C::NeedsFullSurface => ErrorKind::NeedsFullSurface,
            C::CheckerFailed => ErrorKind::CheckerFailed,
            C::Timeout => ErrorKind::Timeout,
        }
    }
}

/// A tool's failure: a machine-readable `kind`, a message that says what to do, and optional
/// structured details merged into the error object.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    kind: ErrorKind,
    message: String,
    details: Map<String, Value>,
}

impl ToolError {
    /// A new error of `kind` with `message`.
    pub fn new(kind: impl Into<ErrorKind>, message: impl Into<String>) -> Self {
        ToolError {
            kind: kind.into(),
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds a structured detail (e.g. `"paths"` for a stale edit).
    pub fn with_detail(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.details.insert(key.into(), value.into());
        self
    }

    /// `invalid_arguments` with `message`.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(ErrorKind::InvalidArguments, message)
    }

    /// `io` for `action` on `path`.
    pub fn io(action: &str, path: &str, error: &std::io::Error) -> Self {
        ToolError::new(
            ErrorKind::Io,
            format!("could not {action} `{path}`: {error}"),
        )
    }

    /// `internal` with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        ToolError::new(ErrorKind::Internal, message)
    }

    /// Appends a `note: …` line to the message (a run-level notice, say).
    pub fn with_note(mut self, note: &str) -> Self {
        self.message.push_str("\nnote: ");
        self.message.push_str(note);
        self
    }

    /// The machine-readable kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Structured details.
    pub fn details(&self) -> &Map<String, Value> {
        &self.details
    }

    /// `{"kind": …, "message": …, …details}`.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("kind".into(), Value::String(self.kind.as_str().to_owned()));
        object.insert("message".into(), Value::String(self.message.clone()));
        for (key, value) in &self.details {
            object.insert(key.clone(), value.clone());
        }
        Value::Object(object)
    }

    /// `{"error": {"kind": …, "message": …}}`, the shape printed by `cc-harness call` and
    /// sent as MCP `structuredContent`.
    pub fn to_envelope(&self) -> Value {
        serde_json::json!({ "error": self.to_json() })
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's table of error kinds, as the enum says it.
    fn kinds_table() -> String {
        let mut table = String::from("| kind | meaning |\n|---|---|\n");
        for kind in ErrorKind::ALL {
            table.push_str(&format!("| `{}` | {} |\n", kind.as_str(), kind.meaning()));
        }
        table
    }

    #[test]
    fn the_readme_lists_every_error_kind_as_the_enum_does() {
        let readme = include_str!("../README.md");
        let section = readme
            .split_once("<!-- error-kinds -->\n")
            .and_then(|(_, rest)| rest.split_once("<!-- /error-kinds -->"))
            .map(|(section, _)| section);
        assert_eq!(
            section,
            Some(kinds_table().as_str()),
            "tools/README.md's error kinds differ from `ErrorKind`; its section should read:\n{}",
            kinds_table()
        );
    }

    #[test]
    fn every_kind_serializes_as_its_wire_name_once() {
        let mut seen = std::collections::HashSet::new();
        for kind in ErrorKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
            assert!(seen.insert(kind.as_str()), "{kind} twice");
            assert!(!kind.meaning().is_empty());
        }
    }

    #[test]
    fn envelope_merges_details() {
        let error = ToolError::new(ErrorKind::Stale, "files changed since staging")
            .with_detail("paths", vec!["a.py", "b.py"]);
        assert_eq!(
            error.to_envelope(),
            serde_json::json!({"error": {"kind": "stale", "message": "files changed since staging", "paths": ["a.py", "b.py"]}})
        );
        assert_eq!(error.to_string(), "stale: files changed since staging");
    }
}
