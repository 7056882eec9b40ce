//! What `cc-harness` wires for a run: every resource this machine supports.
//!
//! Each tool family adds its resource here (one block each), reading its own section of the
//! root's `.cc/tools.toml` from [`ToolsConfig`] when it has one.

use cc_tools::{Resources, WorkspaceRoot};

use crate::config::ToolsConfig;

/// The resources of a run rooted at `root`.
pub fn resources_for(root: &WorkspaceRoot, config: &ToolsConfig) -> Resources {
    let _ = (root, config);
    Resources {
        host_files: true,
        ..Default::default()
    }
}
