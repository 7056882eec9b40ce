//! What running a cell produces.

use serde::{Deserialize, Serialize};

use crate::language::Language;

/// One rich output: `text/plain`, `text/html`, `image/png` (base64), `image/svg+xml`, …
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisplayItem {
    /// The MIME type.
    pub mime: String,
    /// The content; base64 for binary types such as `image/png`.
    pub data: String,
}

/// An exception that ended a cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CellError {
    /// The exception's type (`ZeroDivisionError`, `TypeError`, `KeyboardInterrupt`).
    pub ename: String,
    /// Its message.
    pub evalue: String,
    /// The formatted traceback, innermost call last (the driver's own frames removed).
    pub traceback: String,
}

/// Whether the interpreter's state from earlier cells is still there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateStatus {
    /// Variables, imports and data of earlier cells are available.
    Kept,
    /// The interpreter was replaced (crash, kill after a timeout, reset): earlier state is gone.
    Lost,
}

impl StateStatus {
    /// `kept` or `lost`.
    pub fn as_str(self) -> &'static str {
        match self {
            StateStatus::Kept => "kept",
            StateStatus::Lost => "lost",
        }
    }
}

/// Bytes cut from the middle of each stream because the cell's output went over its budget
/// (one budget for stdout and stderr together).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Truncated {
    /// Bytes cut from stdout.
    pub stdout: u64,
    /// Bytes cut from stderr.
    pub stderr: u64,
}

/// The result of one cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellOutcome {
    /// The interpreter that ran it.
    pub language: Language,
    /// Everything written to stdout (including by child processes), capped.
    pub stdout: String,
    /// Everything written to stderr, capped.
    pub stderr: String,
    /// The echoed value of the last expression, as text; `None` when there is none.
    pub result: Option<String>,
    /// Rich outputs in the order they were produced.
    pub display: Vec<DisplayItem>,
    /// The exception that ended the cell, if any.
    pub error: Option<CellError>,
    /// Present when a stream was cut to the cap.
    pub truncated: Option<Truncated>,
    /// Whether earlier state survived (see [`StateStatus`]).
    pub state: StateStatus,
    /// The cell was stopped because it produced nothing for the inactivity budget.
    pub timed_out: bool,
    /// The caller cancelled the cell, which was interrupted ([`KernelSession::run_until`]).
    ///
    /// [`KernelSession::run_until`]: crate::KernelSession::run_until
    #[serde(default)]
    pub cancelled: bool,
    /// Sentences for the reader about what happened to the kernel (a restart, a kill, …).
    pub notices: Vec<String>,
}
