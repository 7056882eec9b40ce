//! Language servers as tools: the diagnostics-on-write hook, the `lsp` tool and
//! `lsp_rename`.
//!
//! [`register`] wires a [`cc_lsp_client::ServerPool`] into a registry: the `lsp` tool (read),
//! `lsp_rename` (write), the [`LspDiagnostics`] hook that attaches `{"new", "pending",
//! "unchecked"}` to every write (including writes made through a kernel's bridge and
//! `resolve`, since they take the same dispatch path), the [`TransactionApplier`] that
//! applies the edits servers ask for (`workspace/applyEdit`) all or nothing inside the
//! workspace, and a shutdown hook that stops every server when the run ends.

mod actions;
pub(crate) mod apply;
mod diagnostics;
mod kotlin_rename;
mod nav;
mod open;
mod project;
mod rename;
mod tool;

use std::sync::Arc;

use async_trait::async_trait;
use cc_analysis::{enclosing, inactive, rename_scope, scan};
use cc_lsp_client::{requests, ServerPool};

pub use apply::TransactionApplier;
pub use diagnostics::LspDiagnostics;
pub use rename::LspRenameTool;
pub use tool::LspTool;

use crate::registry::{RegistryBuilder, Shutdown};
use crate::root::WorkspaceRoot;

/// A place the old name is still written, listed apart with why.
fn leftover_place(
    leftover: &rename_scope::Leftover,
    root: &WorkspaceRoot,
) -> crate::report::lsp::Place {
    crate::report::lsp::Place {
        path: root.relative(&leftover.path),
        line: leftover.line as u64,
        text: leftover.text.clone(),
        within: None,
        confirmed_by: None,
        why: Some(leftover.why.clone()),
    }
}

/// Reads the `[lsp]` section of `.cc/tools.toml` again, as the host read it when the run
/// started (`lsp reload` calls it): the host owns the file, the tools only ask for the
/// section.
pub type LspConfigSource =
    Arc<dyn Fn() -> Result<cc_lsp_client::LspConfig, cc_workspace::BrokenSection> + Send + Sync>;

/// How long a navigation request may take.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Stops every language server of the run.
#[derive(Debug)]
pub struct StopServers(pub Arc<ServerPool>);

#[async_trait]
impl Shutdown for StopServers {
    async fn shutdown(&self) {
        self.0.shutdown().await;
    }
}

/// Registers `lsp` and `lsp_rename`, wires the applier of server edits, and the shutdown of
/// every server; returns the diagnostics hook (the caller installs it unless the host set
/// its own).
///
/// On a surface that sees no write-tier tool (`plan`, `readonly_subagent`) the servers run no
/// workspace code ([`ServerPool::read_only`]: no build scripts or proc macros, no project
/// interpreter or TypeScript, no `cargo check`); they are never the servers of a full run.
pub fn register(
    builder: &mut RegistryBuilder,
    pool: Arc<ServerPool>,
    config: Option<LspConfigSource>,
    graph: Option<Arc<crate::graph::GraphIndex>>,
) -> Arc<LspDiagnostics> {
    let pool = if builder.run().surface.allows(crate::Tier::Write) {
        pool
    } else {
        pool.read_only()
    };
    let root = builder.run().root.clone();
    // Servers hear of every change on disk from the run's one watcher.
    let watched = root.clone();
    pool.watch(Arc::new(move || watched.watcher().ok()));
    let hook = Arc::new(LspDiagnostics::new(pool.clone(), root.clone()).with_graph(graph.clone()));
    pool.set_applier(Arc::new(
        TransactionApplier::new(root.clone()).with_graph(graph),
    ));
    builder.add_tool(Arc::new(
        LspTool::new(pool.clone(), root.clone()).with_config_source(config),
    ));
    builder.add_tool(Arc::new(LspRenameTool::new(pool.clone(), root)));
    builder.add_shutdown(Arc::new(StopServers(pool)));
    hook
}
