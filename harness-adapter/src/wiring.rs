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
        debug: Some(debug_supervisor(root, config)),
        language_servers: Some(cc_lsp_client::Supervisor::from_section(
            root.path(),
            config.section("lsp"),
        )),
        kernels: Some(kernel_factory(root, config, None)),
        parsers: Some(std::sync::Arc::new(cc_structural::Languages::builtin())),
        graph: Some(
            cc_graph::GraphConfig::from_section(config.section("graph"))
                .map_err(|error| format!("[graph] in .cc/tools.toml: {error}")),
        ),
        tree_cache_bytes: tree_cache_bytes(config),
        ..Default::default()
    }
}

/// `[structural] tree_cache_mb`: the memory budget of `ast_grep`'s tree cache (estimated,
/// MiB; default 256, 0 keeps no trees). A value that is not a non-negative integer is
/// ignored with a warning (the default is used).
fn tree_cache_bytes(config: &ToolsConfig) -> Option<usize> {
    let value = config.section("structural")?.get("tree_cache_mb")?;
    match value.as_integer().and_then(|mb| usize::try_from(mb).ok()) {
        Some(mb) => Some(mb.saturating_mul(1024 * 1024)),
        None => {
            tracing::warn!(
                "[structural] tree_cache_mb must be a non-negative integer; using the default"
            );
            None
        }
    }
}

/// The run's debug supervisor, configured by `[debug]`. An invalid section does not hide the
/// tool: `debug adapters` reports it and `launch` refuses until it is fixed.
fn debug_supervisor(
    root: &WorkspaceRoot,
    config: &ToolsConfig,
) -> std::sync::Arc<cc_dap_client::Supervisor> {
    use cc_dap_client::{DebugConfig, Supervisor};
    let supervisor = match DebugConfig::from_section(config.section("debug")) {
        Ok(debug) => Supervisor::new(root.path(), debug),
        Err(error) => Supervisor::new(root.path(), DebugConfig::default()).with_config_error(error),
    };
    std::sync::Arc::new(supervisor)
}

/// The run's kernel factory, configured by `[kernel]` (a host's `enclosure` prefix replaces
/// the section's). An invalid section does not hide `eval`: every cell then fails with a
/// message saying what to fix.
pub fn kernel_factory(
    root: &WorkspaceRoot,
    config: &ToolsConfig,
    enclosure: Option<Vec<String>>,
) -> std::sync::Arc<cc_kernel_bridge::KernelFactory> {
    use cc_kernel_bridge::{KernelConfig, KernelFactory, KernelOverrides};
    use serde::Deserialize;
    let overrides = match config.section("kernel") {
        None => Ok(KernelOverrides::default()),
        Some(section) => {
            KernelOverrides::deserialize(section.clone()).map_err(|error| error.to_string())
        }
    };
    let configured = overrides.and_then(|mut overrides| {
        if enclosure.is_some() {
            overrides.enclosure = enclosure;
        }
        overrides.apply(KernelConfig::default(), root.path())
    });
    std::sync::Arc::new(match configured {
        Ok(kernel) => KernelFactory::new(kernel),
        Err(error) => KernelFactory::misconfigured(format!("[kernel] in .cc/tools.toml: {error}")),
    })
}
