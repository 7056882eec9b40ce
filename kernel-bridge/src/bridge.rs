//! The host side of `tool(name, args)` inside a cell.

use async_trait::async_trait;
use serde_json::{Map, Value};

/// Answers the bridge calls of one cell. The kernel crate knows nothing of tools: the host
/// (the `eval` tool) implements this by dispatching through its registry.
#[async_trait]
pub trait Bridge: Send + Sync {
    /// Runs tool `name` with `args` and returns its JSON result.
    async fn call(&self, name: &str, args: serde_json::Value) -> Result<Value, BridgeError>;
}

/// A failed bridge call; raised in the cell as `ToolError(kind, message)`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct BridgeError {
    /// Machine-readable kind (`denied`, `unknown_tool`, `not_found`, …).
    pub kind: String,
    /// What went wrong and what to do.
    pub message: String,
    /// Extra fields, passed to the cell as `ToolError.details`.
    pub details: Map<String, Value>,
}

impl BridgeError {
    /// An error of `kind` with `message` and no details.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        BridgeError {
            kind: kind.into(),
            message: message.into(),
            details: Map::new(),
        }
    }

    /// `{"kind", "message", ...details}` as sent to the driver.
    pub(crate) fn to_json(&self) -> Value {
        let mut object = self.details.clone();
        object.insert("kind".into(), Value::String(self.kind.clone()));
        object.insert("message".into(), Value::String(self.message.clone()));
        Value::Object(object)
    }
}

/// A bridge that refuses every call, for kernels used without a tool registry.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoBridge;

#[async_trait]
impl Bridge for NoBridge {
    async fn call(&self, name: &str, _args: Value) -> Result<Value, BridgeError> {
        Err(BridgeError::new(
            "not_available",
            format!(
                "tool(`{name}`) is not available: this kernel was started without a tool bridge"
            ),
        ))
    }
}
