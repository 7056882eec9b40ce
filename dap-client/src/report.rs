//! What the debugger's operations return: reports with the caps applied, serialized and read back
//! (`Serialize`, `Deserialize`) with their JSON schema (`JsonSchema`).
//!
//! Every report that concerns a session carries a flattened [`Position`]: `"state"`, and
//! `"stopped": {reason, file, line, thread_id}` while stopped or `"exited": {code}` after
//! exit, so a caller never needs a second call to know where the program is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::detect::AdapterStatus;

/// At most this many stack frames are returned.
pub const MAX_FRAMES: usize = 30;
/// At most this many children of a variable are returned.
pub const MAX_CHILDREN: usize = 50;
/// Values are cut to this many characters.
pub const MAX_VALUE_CHARS: usize = 400;
/// At most this many threads are listed.
pub const MAX_THREADS: usize = 100;
/// Output attached to a blocking operation's result is cut to its last this many bytes.
pub const OUTPUT_TAIL_BYTES: usize = 4000;

/// Where the program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProgramState {
    /// No session.
    None,
    /// Running (not stopped).
    Running,
    /// Stopped.
    Stopped,
    /// The program has exited; the session stays until `terminate`.
    Exited,
    /// The adapter died; the session is over.
    AdapterExited,
    /// The session outlived its time-to-live and was killed.
    Expired,
    /// The last `launch` failed (a build error, a refused launch); `output` and `status` say
    /// what happened, `launch` starts again.
    LaunchFailed,
}

/// The program's position, attached to every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Position {
    /// The overall state.
    pub state: ProgramState,
    /// Where it stopped, while stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// How it ended, once exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited: Option<Exited>,
}

impl Position {
    /// A position of a bare state.
    pub fn bare(state: ProgramState) -> Self {
        Position {
            state,
            stopped: None,
            exited: None,
        }
    }
}

/// Where the program stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stopped {
    /// `breakpoint`, `step`, `pause`, `exception`, `entry`, …
    pub reason: String,
    /// The top frame's file (relative to the workspace root when inside it).
    pub file: Option<String>,
    /// The top frame's line.
    pub line: Option<i64>,
    /// The stopped thread.
    pub thread_id: Option<i64>,
    /// The top frame's function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The top frame's id (for `scopes` and `evaluate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<i64>,
    /// The adapter's description (an exception's type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// More text (an exception's message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The top frame's source around the stop line (in results that report a stop: launch,
    /// continue, pause, steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Vec<SourceLine>>,
    /// Said when `source`'s file changed on disk after the session started: the program may
    /// run the code it loaded before, and the lines are the file as it is now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_note: Option<String>,
    /// The top frame's locals (in results that report a stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locals: Option<LocalsSummary>,
    /// When the program stopped outside the workspace (a panic, an exception, a pause in a
    /// library), the nearest frame inside it: `source` and `locals` are that frame's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_frame: Option<FrameView>,
}

/// One source line around a stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SourceLine {
    /// Its 1-based number.
    pub line: i64,
    /// Its text (cut to [`MAX_SOURCE_LINE_CHARS`] characters, with `…`).
    pub text: String,
}

/// Source lines are cut to this many characters.
pub const MAX_SOURCE_LINE_CHARS: usize = 200;

/// The first locals of the top frame, as a stop result shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LocalsSummary {
    /// The scope they come from (`Locals`).
    pub scope: String,
    /// The scope's reference, for `variables` (all of them, values up to 400 characters).
    pub reference: i64,
    /// The first ones, values cut short.
    pub variables: Vec<VariableView>,
    /// How many the scope holds.
    pub total: usize,
    /// Whether some were left out.
    pub truncated: bool,
    /// Values the debugger could not read, left out (lldb's `void` type parameters of a
    /// generic function).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How the program ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Exited {
    /// The exit code, when the adapter reported one.
    pub code: Option<i64>,
}

/// Output produced during one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputPiece {
    /// The text (its end, when cut).
    pub text: String,
    /// Whether the beginning was cut (see `output` for everything kept).
    pub truncated: bool,
}

/// One breakpoint line as placed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BreakpointView {
    /// The line asked for.
    pub line: i64,
    /// Whether the adapter could place it (`null` while not yet sent: before `launch`).
    pub verified: Option<bool>,
    /// Where it landed, when elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_line: Option<i64>,
    /// The adapter's note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The breakpoints of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileBreakpoints {
    /// The file.
    pub file: String,
    /// Its breakpoints.
    pub breakpoints: Vec<BreakpointView>,
}

/// Result of `launch` and `attach`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StartReport {
    /// The adapter used.
    pub adapter: String,
    /// The program, or `host:port` for attach.
    pub target: String,
    /// The adapter's pid.
    pub adapter_pid: Option<u32>,
    /// The debuggee's pid, when known.
    pub debuggee_pid: Option<u32>,
    /// Breakpoints as placed at startup.
    pub breakpoints: Vec<FileBreakpoints>,
    /// Which exceptions stop the program.
    pub exceptions: ExceptionStops,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
    /// Output printed meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputPiece>,
    /// Anything the caller should know (a wait that ran out, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Which exceptions stop the program: the filters set and those the adapter offers
/// (`launch {exceptions}` picks among them), and the functions stopped in (`rust_panic`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExceptionStops {
    /// The exception filters set (`uncaught`, `userUnhandled`, …).
    pub filters: Vec<String>,
    /// Every filter the adapter offers.
    pub offered: Vec<String>,
    /// Functions a breakpoint stops in (a Rust panic's `rust_panic`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<String>,
}

/// Result of `continue`, `pause` and the steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepReport {
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
    /// Output printed meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputPiece>,
    /// Anything the caller should know (a wait that ran out, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The live session, as `status` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionInfo {
    /// The adapter.
    pub adapter: String,
    /// The program, or `host:port`.
    pub target: String,
    /// The adapter's pid.
    pub adapter_pid: Option<u32>,
    /// The debuggee's pid.
    pub debuggee_pid: Option<u32>,
    /// Seconds since the session started.
    pub age_seconds: u64,
    /// Seconds until the session is killed.
    pub expires_in_seconds: u64,
}

/// Result of `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusReport {
    /// The session, if one lives.
    pub session: Option<SessionInfo>,
    /// Every breakpoint set so far.
    pub breakpoints: Vec<FileBreakpoints>,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
    /// Anything the caller should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Result of `breakpoints`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BreakpointsReport {
    /// The file.
    pub file: String,
    /// Its breakpoints now (empty: cleared).
    pub breakpoints: Vec<BreakpointView>,
    /// True when no session could take them now: they are sent when `launch` (or `attach`)
    /// starts the next one.
    pub pending: bool,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
    /// Why they were not sent now, and when they will be (set while `pending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadView {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
}

/// Result of `threads`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadsReport {
    /// The threads (at most [`MAX_THREADS`]).
    pub threads: Vec<ThreadView>,
    /// How many there are.
    pub total: usize,
    /// Whether the list was cut.
    pub truncated: bool,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
}

/// One frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FrameView {
    /// Its id (for `scopes`, `evaluate`).
    pub id: i64,
    /// The function.
    pub function: String,
    /// The file (relative to the root when inside it).
    pub file: Option<String>,
    /// The line.
    pub line: i64,
    /// The library the frame's code belongs to (`std`, `libtest`, `_pytest`, `runtime`, …);
    /// absent for the project's own code ([`crate::origin::library_origin`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
}

/// Result of `stack`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StackReport {
    /// The thread.
    pub thread_id: i64,
    /// The frames, top first (at most [`MAX_FRAMES`]).
    pub frames: Vec<FrameView>,
    /// How many frames the thread has, when the adapter says.
    pub total_frames: Option<i64>,
    /// Whether the list was cut.
    pub truncated: bool,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
}

/// One scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScopeView {
    /// Its name (`Locals`, `Globals`, …).
    pub name: String,
    /// The reference to pass to `variables`.
    pub reference: i64,
    /// Whether it is expensive to fetch.
    pub expensive: bool,
    /// How many variables it holds, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<i64>,
}

/// Result of `scopes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScopesReport {
    /// The frame.
    pub frame_id: i64,
    /// Its scopes.
    pub scopes: Vec<ScopeView>,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
}

/// One variable, its value capped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VariableView {
    /// Its name.
    pub name: String,
    /// Its value (at most [`MAX_VALUE_CHARS`] characters).
    pub value: String,
    /// Its type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The reference of its children (pass to `variables`), 0 when it has none.
    pub reference: i64,
    /// The value's full length in characters, when cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_length: Option<usize>,
    /// Whether the value was cut.
    pub value_truncated: bool,
}

/// Result of `variables`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VariablesReport {
    /// The container asked for.
    pub reference: i64,
    /// Its children (at most [`MAX_CHILDREN`]).
    pub variables: Vec<VariableView>,
    /// How many children it has.
    pub total: usize,
    /// Whether the list was cut.
    pub truncated: bool,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
}

/// Result of `locals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LocalsReport {
    /// The frame.
    pub frame_id: i64,
    /// The scope read (`Locals`, `Globals`, …, as the adapter names it).
    pub scope: String,
    /// The scope's reference.
    pub reference: i64,
    /// Its variables (at most [`MAX_CHILDREN`], values at most [`MAX_VALUE_CHARS`]).
    pub variables: Vec<VariableView>,
    /// How many it holds.
    pub total: usize,
    /// Whether the list was cut.
    pub truncated: bool,
    /// Every scope of the frame, for `scope`.
    pub scopes: Vec<String>,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
}

/// Result of `evaluate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateReport {
    /// The expression.
    pub expression: String,
    /// The frame it ran in.
    pub frame_id: Option<i64>,
    /// The value (at most [`MAX_VALUE_CHARS`] characters).
    pub result: String,
    /// Its type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The reference of its children, 0 when none.
    pub reference: i64,
    /// The value's full length in characters, when cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_length: Option<usize>,
    /// Whether the value was cut.
    pub result_truncated: bool,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
}

/// Result of `output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputReport {
    /// The program's stdout and stderr, as kept by the ring buffer.
    pub output: String,
    /// Bytes the program printed in all.
    pub total_bytes: u64,
    /// Bytes no longer kept (the oldest).
    pub dropped_bytes: u64,
    /// Whether `output` misses the beginning.
    pub truncated: bool,
    /// Where the program is.
    #[serde(flatten)]
    pub position: Position,
    /// Anything the caller should know (why the last launch failed, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Result of `terminate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TerminateReport {
    /// Whether a session was ended by this call.
    pub terminated: bool,
    /// The adapter that ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// How the adapter process ended (e.g. lldb-dap's SIGABRT after `disconnect`, which is
    /// its normal way out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_exit: Option<String>,
    /// Processes of the session that were still alive after the adapter left and were
    /// killed.
    pub killed_leftovers: usize,
    /// How the program ended, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited: Option<Exited>,
    /// What became of the program: its own exit before this call, or killed by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<ProgramEnd>,
    /// Where the program is now (`none`).
    pub state: ProgramState,
    /// Anything the caller should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How the debuggee ended, as `terminate` found it (never the adapter's own exit status).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum ProgramEnd {
    /// It had exited by itself, with this code when the adapter reported one.
    Exited {
        /// The exit code.
        code: Option<i64>,
    },
    /// It was stopped (at `file:line`) and `terminate` killed it.
    KilledWhileStopped {
        /// Where it was stopped.
        at: Option<String>,
    },
    /// It was running and `terminate` killed it.
    KilledWhileRunning,
    /// The session could not say (the adapter was gone).
    Unknown,
}

/// Result of `adapters`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdaptersReport {
    /// One entry per adapter of the table.
    pub adapters: Vec<AdapterStatus>,
    /// Set when `.cc/tools.toml`'s `[debug]` section is invalid (defaults are used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_error: Option<String>,
}

/// A function name without a Rust symbol hash (`parse::h9cb46aa1cbdc470f` → `parse`).
pub fn function_name(name: &str) -> String {
    // debugpy marks the frame an exception stop is paused in; the stop says that already.
    let name = name.strip_suffix(" (Current frame)").unwrap_or(name);
    // What legacy Rust symbol mangling leaves in a name lldb could not demangle fully.
    let name = if name.contains('$') {
        let mut readable = name.to_owned();
        for (code, text) in [
            ("_$u7b$", "{"),
            ("$u7b$", "{"),
            ("$u7d$", "}"),
            ("$LT$", "<"),
            ("$GT$", ">"),
            ("$u20$", " "),
            ("$RF$", "&"),
            ("$BP$", "*"),
            ("$C$", ","),
            ("$u27$", "'"),
            ("$u5b$", "["),
            ("$u5d$", "]"),
            ("$u7e$", "~"),
        ] {
            readable = readable.replace(code, text);
        }
        std::borrow::Cow::Owned(readable)
    } else {
        std::borrow::Cow::Borrowed(name)
    };
    let name = name.as_ref();
    if let Some(at) = name.rfind("::h") {
        let hash = &name[at + 3..];
        if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return name[..at].to_owned();
        }
    }
    name.to_owned()
}

/// `value` cut to [`MAX_VALUE_CHARS`] characters: (text, truncated, full length when cut).
pub fn cap_value(value: &str) -> (String, bool, Option<usize>) {
    cap_chars(value, MAX_VALUE_CHARS)
}

/// `value` cut to `max` characters: (text, truncated, full length when cut).
pub fn cap_chars(value: &str, max: usize) -> (String, bool, Option<usize>) {
    match value.char_indices().nth(max) {
        None => (value.to_owned(), false, None),
        Some((cut, _)) => (value[..cut].to_owned(), true, Some(value.chars().count())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_hashes_leave_function_names() {
        assert_eq!(
            function_name("semver::parse::numeric_identifier::h9cb46aa1cbdc470f"),
            "semver::parse::numeric_identifier"
        );
        assert_eq!(function_name("main::hello"), "main::hello");
        assert_eq!(function_name("f::h12"), "f::h12");
    }

    #[test]
    fn values_are_cut_by_characters() {
        let short = cap_value("abc");
        assert_eq!(short, ("abc".to_owned(), false, None));
        let long: String = "é".repeat(MAX_VALUE_CHARS + 5);
        let (text, truncated, length) = cap_value(&long);
        assert_eq!(text.chars().count(), MAX_VALUE_CHARS);
        assert!(truncated);
        assert_eq!(length, Some(MAX_VALUE_CHARS + 5));
    }
}
