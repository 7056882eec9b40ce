//! What a run has wired, and the registry that follows from it.
//!
//! A tool is registered only when the resource behind it is present: no parser set, no
//! `ast_grep`; no kernel factory, no `eval`. Whether a wired resource can really answer for
//! this checkout (is a language server installed?) is a later check the tools themselves
//! report (`lsp status`, `debug adapters`), so those tools stay visible.

use std::sync::Arc;
use std::time::Duration;

use crate::ask_user::{AskUserTool, QuestionPort, DEFAULT_QUESTION_TIMEOUT};
use crate::fs::{ApplyPatchTool, EditTool, ReadTool, WriteTool};
use crate::registry::{AfterWrite, Registry, RegistryBuilder, Run};
use crate::tool::Tool;
use crate::vibe::{Roster, WorkerBackend};

pub use crate::lsp::LspConfigSource;

/// The resources wired for one run.
#[derive(Default)]
pub struct Resources {
    /// Register the host file tools `read`, `write`, `edit` and `apply_patch`, confined to
    /// the root.
    pub host_files: bool,
    /// Checks files after every write (language servers); attached to write results.
    pub after_write: Option<Arc<dyn AfterWrite>>,
    /// Tools the host brings (its own `write`, say); registered last, so they replace
    /// built-ins of the same name.
    pub host_tools: Vec<Arc<dyn Tool>>,
    /// A way to put a question in front of a human: registers `ask_user`.
    pub questions: Option<Arc<dyn QuestionPort>>,
    /// How long `ask_user` waits (default 10 minutes).
    pub question_timeout: Option<Duration>,
    /// Runs background workers: registers the five `vibe_*` tools.
    pub workers: Option<Arc<dyn WorkerBackend>>,
    /// Language servers: registers `lsp`, attaches new diagnostics to every write (unless
    /// `after_write` is set), and stops the servers when the run shuts down.
    pub language_servers: Option<Arc<cc_lsp_client::ServerPool>>,
    /// Where `lsp reload` gets the `[lsp]` section again; `None`: `reload` restarts the
    /// servers with the configuration in use.
    pub lsp_config: Option<LspConfigSource>,
    /// Runs the conversation's debug session: registers `debug` (and kills the session when
    /// the run shuts down).
    pub debug: Option<Arc<cc_dap_client::DebugSession>>,
    /// Starts the run's Python and JavaScript kernels: registers `eval` (and stops the
    /// kernels when the run shuts down).
    pub kernels: Option<Arc<cc_kernel_bridge::KernelFactory>>,
    /// A tree-sitter parser set: registers `ast_grep`, `ast_edit` and `resolve`, and
    /// `graph` (the code graph, kept as [`Resources::graph`] says).
    pub parsers: Option<Arc<cc_structural::Languages>>,
    /// How the code graph is kept (the `[graph]` section of `.cc/tools.toml`); `None`: the
    /// defaults. An `Err` (an invalid section) does not hide `graph`: its calls say what to
    /// fix.
    pub graph: Option<Result<cc_graph::GraphConfig, cc_workspace::BrokenSection>>,
    /// The memory budget of `ast_grep`'s tree cache, in estimated bytes (parsed trees kept
    /// for the run, least recently used dropped first); `None`:
    /// [`cc_structural::DEFAULT_TREE_CACHE_BYTES`], 0 keeps none.
    pub tree_cache_bytes: Option<usize>,
    /// A `[structural]` section that could not be used: `ast_grep`, `ast_edit` and `resolve`
    /// are listed, and each call says what to fix.
    pub structural_broken: Option<cc_workspace::BrokenSection>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("host_files", &self.host_files)
            .field("after_write", &self.after_write.is_some())
            .field("host_tools", &self.host_tools.len())
            .field("questions", &self.questions.is_some())
            .field("workers", &self.workers.is_some())
            .field("language_servers", &self.language_servers.is_some())
            .field("lsp_config", &self.lsp_config.is_some())
            .field("debug", &self.debug.is_some())
            .field("kernels", &self.kernels.is_some())
            .field("parsers", &self.parsers.is_some())
            .field("graph", &self.graph)
            .field("tree_cache_bytes", &self.tree_cache_bytes)
            .field("structural_broken", &self.structural_broken)
            .finish()
    }
}

impl Resources {
    /// The registry for `run`, with a tool for each wired resource.
    pub fn build(self, run: Run) -> Registry {
        let mut builder = RegistryBuilder::new(run);
        let root = builder.run().root.clone();
        if self.host_files {
            builder.add_tool(Arc::new(ReadTool::new(root.clone())));
            builder.add_tool(Arc::new(WriteTool::new(root.clone())));
            builder.add_tool(Arc::new(EditTool::new(root.clone())));
            builder.add_tool(Arc::new(ApplyPatchTool::new(root)));
        }
        if let Some(port) = self.questions {
            let timeout = self.question_timeout.unwrap_or(DEFAULT_QUESTION_TIMEOUT);
            builder.add_tool(Arc::new(AskUserTool::new(port, timeout)));
        }
        if let Some(backend) = self.workers {
            crate::vibe::register(&mut builder, Roster::new(backend));
        }
        if let Some(debugger) = self.debug {
            crate::debug::register(&mut builder, debugger);
        }
        if let Some(factory) = self.kernels {
            crate::eval::register(&mut builder, factory);
        }
        let mut graph = None;
        if let Some(parsers) = self.parsers {
            let trees = Arc::new(cc_structural::TreeCache::new(
                self.tree_cache_bytes
                    .unwrap_or(cc_structural::DEFAULT_TREE_CACHE_BYTES),
            ));
            crate::structural::register(&mut builder, parsers, trees, self.structural_broken);
            let config = self
                .graph
                .unwrap_or_else(|| Ok(cc_graph::GraphConfig::default()));
            graph = Some(crate::graph::register(&mut builder, config));
        }
        let mut after_write = self.after_write;
        if let Some(pool) = self.language_servers {
            let hook = crate::lsp::register(&mut builder, pool, self.lsp_config, graph.clone());
            after_write.get_or_insert(hook);
        }
        for tool in self.host_tools {
            builder.add_tool(tool);
        }
        // The graph takes in every write before the diagnostics look at it.
        if let Some(graph) = graph {
            after_write = Some(Arc::new(crate::graph::GraphAfterWrite::new(
                graph,
                after_write,
            )));
        }
        if let Some(hook) = after_write {
            let root = builder.run().root.clone();
            builder =
                builder.after_write(Arc::new(crate::own_writes::ExpectWrites::new(root, hook)));
        }
        builder.build()
    }
}
