//! The kernel's `tool()` calls, answered by the run's registry.

use async_trait::async_trait;
use cc_kernel_bridge::{Bridge, BridgeError};
use serde_json::Value;

use crate::tool::BridgeHandle;

/// Dispatches a cell's bridge calls through the registry (surface, approver, wrappers),
/// with the `eval` call as their origin.
#[derive(Debug)]
pub(crate) struct RegistryBridge {
    handle: BridgeHandle,
}

impl RegistryBridge {
    pub(crate) fn new(handle: BridgeHandle) -> Self {
        RegistryBridge { handle }
    }
}

#[async_trait]
impl Bridge for RegistryBridge {
    async fn call(&self, name: &str, args: Value) -> Result<Value, BridgeError> {
        match self.handle.call_tool(name, args).await {
            Ok(output) => Ok(output.value),
            Err(error) => Err(BridgeError {
                kind: error.kind().as_str().to_owned(),
                message: error.message().to_owned(),
                details: error.details().clone(),
            }),
        }
    }
}
