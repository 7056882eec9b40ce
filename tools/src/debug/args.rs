//! The `debug` tool's arguments: one `op` per call, and which fields each op takes.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;

/// What one `debug` call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// List the debug adapters and whether each is available here (and why not).
    Adapters,
    /// The session, where the program is, and every breakpoint.
    Status,
    /// Set the breakpoint lines of one file (replacing its previous ones; `[]` clears it).
    /// Allowed before `launch`: they are sent when the session starts.
    Breakpoints,
    /// Start `program`, `module` or `test` under a debugger and run it until it stops or
    /// exits.
    Launch,
    /// Attach to a Python process listening with debugpy on 127.0.0.1:`port`.
    Attach,
    /// Resume (or keep waiting) until the program stops or exits.
    Continue,
    /// Interrupt the running program.
    Pause,
    /// Run the current line and stop at the next one.
    StepOver,
    /// Step into the call on the current line.
    StepIn,
    /// Run until the current function returns.
    StepOut,
    /// List the program's threads.
    Threads,
    /// The stack of a thread (default: the stopped one), at most 30 frames; runs of library
    /// frames are folded unless `all_frames`.
    Stack,
    /// The scopes (locals, globals, …) of a frame.
    Scopes,
    /// The children of a variables reference, at most 50, values cut to 400 characters.
    Variables,
    /// The locals of a frame (default: the stopped top frame) in one call, with references;
    /// `scope: "globals"` (or another scope's name) reads that scope instead.
    Locals,
    /// Evaluate an expression in a frame (default: the top frame of the stopped thread).
    Evaluate,
    /// What the program printed (stdout and stderr), kept in a bounded buffer.
    Output,
    /// End the program and the debugger, and forget the session.
    Terminate,
}

impl Op {
    /// The snake-case name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Adapters => "adapters",
            Op::Status => "status",
            Op::Breakpoints => "breakpoints",
            Op::Launch => "launch",
            Op::Attach => "attach",
            Op::Continue => "continue",
            Op::Pause => "pause",
            Op::StepOver => "step_over",
            Op::StepIn => "step_in",
            Op::StepOut => "step_out",
            Op::Threads => "threads",
            Op::Stack => "stack",
            Op::Scopes => "scopes",
            Op::Variables => "variables",
            Op::Locals => "locals",
            Op::Evaluate => "evaluate",
            Op::Output => "output",
            Op::Terminate => "terminate",
        }
    }

    /// (required fields, optional fields) of this op.
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Op::Adapters | Op::Status | Op::Threads | Op::Output | Op::Terminate => (&[], &[]),
            Op::Breakpoints => (&["file", "lines"], &[]),
            Op::Launch => (
                &[],
                &[
                    "program",
                    "module",
                    "test",
                    "args",
                    "adapter",
                    "wait_s",
                    "exceptions",
                ],
            ),
            Op::Attach => (&["port"], &["adapter"]),
            Op::Continue | Op::StepOver | Op::StepIn | Op::StepOut => {
                (&[], &["thread_id", "wait_s"])
            }
            Op::Pause => (&[], &["thread_id"]),
            Op::Stack => (&[], &["thread_id", "all_frames"]),
            Op::Scopes => (&["frame_id"], &[]),
            Op::Variables => (&["reference"], &[]),
            Op::Evaluate => (&["expression"], &["frame_id"]),
            Op::Locals => (&[], &["frame_id", "scope"]),
        }
    }
}

/// The longest wait one call may ask for (a session lives 30 minutes by default).
const MAX_WAIT_S: f64 = 1800.0;

impl DebugArgs {
    /// `wait_s` as a duration (validated by [`DebugArgs::validate`]).
    pub fn wait(&self) -> Option<std::time::Duration> {
        self.wait_s.map(std::time::Duration::from_secs_f64)
    }
}

/// Arguments of `debug`. Which fields apply depends on `op`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    /// The operation.
    pub op: Op,
    /// `breakpoints`: the source file, relative to the workspace root.
    #[serde(default)]
    pub file: Option<String>,
    /// `breakpoints`: 1-based line numbers; an empty list clears the file's breakpoints.
    #[serde(default)]
    pub lines: Option<Vec<i64>>,
    /// `launch` (one of `program`, `module`, `test`): the program, relative to the
    /// workspace root: a `.py` script or a Python console script such as `.venv/bin/pytest`
    /// (debugpy), a `.go` file or Go package directory (delve), a native executable built
    /// with debug info (lldb), a `.dart` file (dart).
    #[serde(default)]
    pub program: Option<String>,
    /// `launch`: a Python module to run as `python -m MODULE` under debugpy, with the
    /// checkout's `.venv`/`venv` python.
    #[serde(default)]
    pub module: Option<String>,
    /// `launch`: a test, named as its runner prints it, in one string:
    /// `tests/test_x.py::TestY::test_z[a b]`, a file or `-k expr` (pytest under debugpy; a
    /// failure stops where the checkout's code raises), `./pkg -run TestName` (go test under
    /// delve), `test_name` or `--test target test_name` (cargo test: built, then run under
    /// lldb; a panic stops with its message). A bare pytest or go test name finds its file
    /// or package; a name that matches no test is `test_not_found`, listing the nearest.
    #[serde(default)]
    pub test: Option<String>,
    /// `launch`: command-line arguments for the program (appended to the test runner's for
    /// `test`).
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// `launch`/`attach`: the adapter (`debugpy`, `lldb`, `delve`, `dart`) when the program
    /// does not say; `attach` defaults to debugpy.
    #[serde(default)]
    pub adapter: Option<String>,
    /// `attach`: the port the debugpy-listening process listens on at 127.0.0.1.
    #[serde(default)]
    pub port: Option<u16>,
    /// `continue`, `pause`, steps, `stack`: the thread; default the last stopped thread.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// `scopes` (required), `evaluate` and `locals` (default: the top frame): a frame id from
    /// `stack` or from a stop (`frame N`). Valid until the program next runs.
    #[serde(default)]
    pub frame_id: Option<i64>,
    /// `locals`: which scope (`locals` by default, `globals`, or a name `scopes` lists).
    #[serde(default)]
    pub scope: Option<String>,
    /// `variables`: a reference (`ref N`) from a stop's locals, `scopes`, `locals`,
    /// `variables` or `evaluate`. Valid until the program next runs.
    #[serde(default)]
    pub reference: Option<i64>,
    /// `evaluate`: the expression, in the program's language.
    #[serde(default)]
    pub expression: Option<String>,
    /// `launch`, `continue`, steps: how many seconds this call waits for the program to
    /// stop or exit before it returns with the program still running (default: the
    /// configured `wait_seconds`, 30).
    #[serde(default)]
    pub wait_s: Option<f64>,
    /// `launch`: the adapter's exception filters to stop on, instead of the defaults
    /// (debugpy: `uncaught`, and `userUnhandled` for pytest: where the checkout's code
    /// raises what it does not handle; `raised` stops at every raise; `[]` at none). The
    /// launch result lists the filters set and those the adapter offers.
    #[serde(default)]
    pub exceptions: Option<Vec<String>>,
    /// `stack`: list every frame; by default runs of library frames (std, libtest, pytest,
    /// the Go runtime, installed packages) are folded into one line each.
    #[serde(default)]
    pub all_frames: Option<bool>,
}

impl DebugArgs {
    fn present(&self) -> Vec<&'static str> {
        let mut present = Vec::new();
        let fields: [(&'static str, bool); 16] = [
            ("file", self.file.is_some()),
            ("lines", self.lines.is_some()),
            ("program", self.program.is_some()),
            ("module", self.module.is_some()),
            ("test", self.test.is_some()),
            ("scope", self.scope.is_some()),
            ("args", self.args.is_some()),
            ("adapter", self.adapter.is_some()),
            ("port", self.port.is_some()),
            ("thread_id", self.thread_id.is_some()),
            ("frame_id", self.frame_id.is_some()),
            ("reference", self.reference.is_some()),
            ("expression", self.expression.is_some()),
            ("wait_s", self.wait_s.is_some()),
            ("all_frames", self.all_frames.is_some()),
            ("exceptions", self.exceptions.is_some()),
        ];
        for (name, is_set) in fields {
            if is_set {
                present.push(name);
            }
        }
        present
    }

    /// Refuses a missing required field or a field the op does not use: a misplaced
    /// argument is a mistake worth telling, not something to ignore.
    pub fn validate(&self) -> Result<(), ToolError> {
        let (required, optional) = self.op.fields();
        let present = self.present();
        let op = self.op.name();
        let accepted = || {
            let all: Vec<&str> = required.iter().chain(optional).copied().collect();
            if all.is_empty() {
                "it takes no other arguments".to_owned()
            } else {
                format!("it takes: {}", all.join(", "))
            }
        };
        if let Some(missing) = required.iter().find(|name| !present.contains(name)) {
            return Err(ToolError::invalid_arguments(format!(
                "`op: {op}` needs `{missing}`; {}",
                accepted()
            )));
        }
        if let Some(extra) = present
            .iter()
            .find(|name| !required.contains(name) && !optional.contains(name))
        {
            return Err(ToolError::invalid_arguments(format!(
                "`op: {op}` does not take `{extra}`; {}",
                accepted()
            )));
        }
        if let Some(wait) = self.wait_s {
            if !(wait.is_finite() && wait > 0.0 && wait <= MAX_WAIT_S) {
                return Err(ToolError::invalid_arguments(format!(
                    "`wait_s` must be a number of seconds above 0 and at most {MAX_WAIT_S}; got \
                     {wait}"
                )));
            }
        }
        if self.op == Op::Launch {
            let targets: Vec<&str> = ["program", "module", "test"]
                .into_iter()
                .filter(|name| present.contains(name))
                .collect();
            if targets.len() != 1 {
                return Err(ToolError::invalid_arguments(format!(
                    "`op: launch` needs exactly one of `program` (a script, package or \
                     executable), `module` (python -m) or `test` (a pytest, go or cargo test); \
                     got {}",
                    if targets.is_empty() {
                        "none".to_owned()
                    } else {
                        targets.join(" and ")
                    }
                )));
            }
        }
        Ok(())
    }
}
