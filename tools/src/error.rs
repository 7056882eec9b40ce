//! The typed error every tool returns, and its JSON shape.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

/// Error kinds shared across tools. Tools may use their own kinds as well (`unparsable`,
/// `stale`, …); these are the ones the registry and the host file tools produce.
pub mod kinds {
    /// The arguments do not match the tool's schema.
    pub const INVALID_ARGUMENTS: &str = "invalid_arguments";
    /// No tool by that name is registered for this run.
    pub const UNKNOWN_TOOL: &str = "unknown_tool";
    /// The tool exists but its tier is hidden on this surface.
    pub const NOT_AVAILABLE: &str = "not_available";
    /// The run's approver refused this call.
    pub const DENIED: &str = "denied";
    /// A path argument resolves outside the workspace root.
    pub const OUTSIDE_ROOT: &str = "outside_root";
    /// A named file or folder does not exist.
    pub const NOT_FOUND: &str = "not_found";
    /// Reading or writing failed.
    pub const IO: &str = "io";
    /// Files changed since a change to them was staged; nothing was written.
    pub const STALE: &str = "stale";
    /// The call would deadlock (a tool re-entering itself through a bridge).
    pub const REENTRANT: &str = "reentrant";
    /// Something went wrong inside the tool that is not the caller's fault.
    pub const INTERNAL: &str = "internal";
    /// The call took longer than its budget.
    pub const TIMEOUT: &str = "timeout";
    /// The tool's section of `.cc/tools.toml` could not be used (a
    /// [`cc_workspace::BrokenSection`]).
    pub const INVALID_CONFIG: &str = "invalid_config";
}

/// A tool's failure: a machine-readable `kind`, a message that says what to do, and optional
/// structured details merged into the error object.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    kind: Cow<'static, str>,
    message: String,
    details: Map<String, Value>,
}

impl ToolError {
    /// A new error of `kind` with `message`.
    pub fn new(kind: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
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
        ToolError::new(kinds::INVALID_ARGUMENTS, message)
    }

    /// `io` for `action` on `path`.
    pub fn io(action: &str, path: &str, error: &std::io::Error) -> Self {
        ToolError::new(kinds::IO, format!("could not {action} `{path}`: {error}"))
    }

    /// `internal` with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        ToolError::new(kinds::INTERNAL, message)
    }

    /// Appends a `note: …` line to the message (a run-level notice, say).
    pub fn with_note(mut self, note: &str) -> Self {
        self.message.push_str("\nnote: ");
        self.message.push_str(note);
        self
    }

    /// The machine-readable kind.
    pub fn kind(&self) -> &str {
        &self.kind
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
        object.insert("kind".into(), Value::String(self.kind.to_string()));
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

    #[test]
    fn envelope_merges_details() {
        let error = ToolError::new("stale", "files changed since staging")
            .with_detail("paths", vec!["a.py", "b.py"]);
        assert_eq!(
            error.to_envelope(),
            serde_json::json!({"error": {"kind": "stale", "message": "files changed since staging", "paths": ["a.py", "b.py"]}})
        );
        assert_eq!(error.to_string(), "stale: files changed since staging");
    }
}
