//! Language servers as tools: the diagnostics-on-write hook and the `lsp` tool.
//!
//! [`register`] wires a [`cc_lsp_client::Supervisor`] into a registry: the `lsp` tool, the
//! [`LspDiagnostics`] hook that attaches `{"new", "pending", "unchecked"}` to every write
//! (including writes made through a kernel's bridge and `resolve`, since they take the same
//! dispatch path), and a shutdown hook that stops every server when the run ends.

mod actions;
mod diagnostics;
mod nav;
mod open;
mod project;
mod tool;

use std::sync::Arc;

use async_trait::async_trait;
use cc_lsp_client::Supervisor;

pub use diagnostics::LspDiagnostics;
pub use tool::LspTool;

use crate::registry::{RegistryBuilder, Shutdown};

/// Stops every language server of the run.
#[derive(Debug)]
pub struct StopServers(pub Arc<Supervisor>);

#[async_trait]
impl Shutdown for StopServers {
    async fn shutdown(&self) {
        self.0.shutdown().await;
    }
}

/// Registers `lsp`, the diagnostics hook (unless `keep_hook` says the host set its own) and
/// the shutdown of every server.
pub fn register(builder: &mut RegistryBuilder, supervisor: Arc<Supervisor>) -> Arc<LspDiagnostics> {
    let root = builder.run().root.clone();
    let hook = Arc::new(LspDiagnostics::new(supervisor.clone(), root.clone()));
    builder.add_tool(Arc::new(LspTool::new(supervisor.clone(), root)));
    builder.add_shutdown(Arc::new(StopServers(supervisor)));
    hook
}
