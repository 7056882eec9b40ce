//! What `cc-harness` wires for a run: every resource this machine supports.
//!
//! Each tool family adds its resource here (one block each), from its typed section of the
//! root's `.cc/tools.toml` in [`ToolsConfig`]. A [`BrokenSection`] is handed to the family's
//! `broken` constructor, so the tool stays and reports it.

use std::sync::Arc;

use cc_tools::{Resources, WorkspaceRoot};
use cc_workspace::BrokenSection;

use crate::config::ToolsConfig;

/// The resources of a run rooted at `root`.
pub fn resources_for(root: &WorkspaceRoot, config: &ToolsConfig) -> Resources {
    Resources {
        host_files: true,
        debug: Some(debug_session(root, config)),
        language_servers: Some(language_servers(root, config)),
        lsp_config: Some(lsp_config_source(root)),
        kernels: Some(kernel_factory(root, config, None)),
        parsers: Some(Arc::new(cc_structural::Languages::builtin())),
        graph: Some(config.graph.clone()),
        tree_cache_bytes: config
            .structural
            .as_ref()
            .ok()
            .and_then(|s| s.tree_cache_bytes()),
        structural_broken: config.structural.as_ref().err().cloned(),
        ..Default::default()
    }
}

/// The run's language servers, configured by `[lsp]`. A broken section does not hide the
/// tool: every language reports it until `lsp reload` reads a fixed one.
fn language_servers(root: &WorkspaceRoot, config: &ToolsConfig) -> Arc<cc_lsp_client::ServerPool> {
    use cc_lsp_client::ServerPool;
    let configured = config.lsp.clone().and_then(|lsp| {
        // `ToolsConfig` validated the section; this is the same check, kept total.
        ServerPool::from_config(root.path(), &lsp)
            .map_err(|error| BrokenSection::new(cc_tools::settings_place("lsp"), error))
    });
    match configured {
        Ok(pool) => pool,
        Err(broken) => ServerPool::broken(root.path(), broken),
    }
}

/// What `lsp reload` calls: the `[lsp]` section of the root's `.cc/tools.toml` as it is now.
fn lsp_config_source(root: &WorkspaceRoot) -> cc_tools::resources::LspConfigSource {
    let root = root.path().to_path_buf();
    Arc::new(move || ToolsConfig::reload_lsp(&root))
}

/// The run's debug session, configured by `[debug]`. A broken section does not hide the
/// tool: `debug adapters` reports it and `launch` refuses until it is fixed.
fn debug_session(root: &WorkspaceRoot, config: &ToolsConfig) -> Arc<cc_dap_client::DebugSession> {
    use cc_dap_client::DebugSession;
    let session = match &config.debug {
        Ok(debug) => DebugSession::new(root.path(), debug.clone()),
        Err(broken) => DebugSession::broken(root.path(), broken.clone()),
    };
    Arc::new(session.with_python(configured_python(root, config)))
}

/// `[lsp.python] interpreter`, the project's Python for every mechanism (absolute).
fn configured_python(root: &WorkspaceRoot, config: &ToolsConfig) -> Option<std::path::PathBuf> {
    let lsp = config.lsp.as_ref().ok()?;
    lsp.python_interpreter().map(|path| root.path().join(path))
}

/// The run's kernel factory, configured by `[kernel]` (a host's `enclosure` prefix replaces
/// the section's). A broken section does not hide `eval`: every cell then fails with a
/// message saying what to fix.
pub fn kernel_factory(
    root: &WorkspaceRoot,
    config: &ToolsConfig,
    enclosure: Option<Vec<String>>,
) -> Arc<cc_kernel_bridge::KernelFactory> {
    use cc_kernel_bridge::{KernelConfig, KernelFactory};
    let configured = config.kernel.clone().and_then(|mut overrides| {
        if enclosure.is_some() {
            overrides.enclosure = enclosure;
        }
        let base = KernelConfig {
            place: cc_tools::settings_place("kernel"),
            ..KernelConfig::default()
        };
        overrides
            .apply(base, root.path())
            .map(|mut kernel| {
                // `[kernel] python` is the kernels' own choice; else the project's Python.
                if kernel.python.is_none() {
                    kernel.python = configured_python(root, config);
                }
                kernel
            })
            .map_err(|message| BrokenSection::new(cc_tools::settings_place("kernel"), message))
    });
    Arc::new(match configured {
        Ok(kernel) => KernelFactory::new(kernel),
        Err(broken) => KernelFactory::broken(broken),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crates below name no settings file; the harness tells each where its section is,
    /// so what the agent reads points at `.cc/tools.toml`.
    #[tokio::test]
    async fn each_family_names_the_file_its_setting_is_in() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir(ws.join(".cc")).unwrap();
        std::fs::write(
            ws.join(".cc/tools.toml"),
            "[lsp.python]\nenabled = false\n[debug.debugpy]\ncommand = [\"no-such-adapter\"]\n\
             [kernel]\npython = \"/nonexistent/python3\"\n",
        )
        .unwrap();
        std::fs::write(ws.join("a.py"), "x = 1\n").unwrap();
        let root = WorkspaceRoot::new(&ws).unwrap();
        let config = ToolsConfig::load(&ws).unwrap();

        let lsp = language_servers(&root, &config);
        // A server turned off after crashes says to call the tool's reload.
        assert_eq!(lsp.table().place.reload(), Some("call `lsp reload`"));
        let reason = lsp.route(&ws.join("a.py")).unwrap_err().reason;
        assert!(
            reason.contains("turned off in .cc/tools.toml ([lsp.python] enabled = false)"),
            "{reason}"
        );
        let debug = debug_session(&root, &config).adapters().await;
        let debugpy = debug.adapters.iter().find(|a| a.name == "debugpy").unwrap();
        let reason = debugpy.reason.clone().unwrap_or_default();
        assert!(
            reason.contains("(the [debug.debugpy] command in .cc/tools.toml)"),
            "{reason}"
        );
        let kernels = kernel_factory(&root, &config, None);
        let error = kernels
            .interpreter(cc_kernel_bridge::Language::Python, &ws)
            .unwrap_err();
        assert!(
            error.contains("set as `python` in .cc/tools.toml")
                && error.contains("in the [kernel] section of .cc/tools.toml"),
            "{error}"
        );
    }
}
