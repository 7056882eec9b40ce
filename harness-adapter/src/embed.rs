//! Embedding the tools in a Rust host.
//!
//! The host describes its run — conversation, workspace root, surface, which resources to
//! wire, its approver, question port, worker backend, an optional enclosure for kernels, and
//! its own tools — and gets back the [`Registry`] plus the diagnostics hook for the writes it
//! performs itself. The host's tools are registered in the same registry, so `tool(...)`
//! inside an `eval` cell reaches them through the same surface check, approver and wrappers
//! as a model call. Like every `cc-harness` command, setting the run up first finishes or
//! undoes any multi-file commit a crash interrupted on this root, and the first result of the
//! run says so (`notices`; see `cc_tools::notices`).
//!
//! ```
//! use std::sync::Arc;
//! use cc_harness_adapter::embed::{embed, HostRun, Wire};
//! use cc_tools::{AllowAll, Surface};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let workspace = tempfile::tempdir()?;
//! std::fs::write(workspace.path().join("app.py"), "def main():\n    return 1\n")?;
//! let embedded = embed(HostRun {
//!     wire: Wire { structural: true, ..Wire::none() },
//!     ..HostRun::new("conversation-1", workspace.path(), Surface::Plan, Arc::new(AllowAll))
//! })?;
//! let found = embedded
//!     .registry
//!     .call("ast_grep", serde_json::json!({"pattern": "def $F(): $$$B", "path": "app.py"}))
//!     .await?;
//! assert_eq!(found.value["matches"][0]["captures"]["F"], "main");
//! embedded.registry.shutdown(std::time::Duration::from_secs(2)).await;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cc_tools::ask_user::QuestionPort;
use cc_tools::vibe::WorkerBackend;
use cc_tools::{AfterWrite, Approver, Registry, Surface, Tool};

use crate::run::{RunOptions, RunSetup, SetupError};

/// Which resources to wire for the run. A resource that is not wired has no tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    /// `read`, `write`, `edit`, `apply_patch` confined to the root. Hosts with their own file
    /// tools leave this off and register theirs as host tools.
    pub host_files: bool,
    /// Language servers: `lsp`, `lsp_rename` and diagnostics on write.
    pub language_servers: bool,
    /// Tree-sitter parsers: `ast_grep`, `ast_edit`, `resolve`.
    pub structural: bool,
    /// Debug adapters: `debug`.
    pub debugger: bool,
    /// Python and JavaScript kernels: `eval`.
    pub kernels: bool,
}

impl Wire {
    /// Every resource.
    pub fn all() -> Self {
        Wire {
            host_files: true,
            language_servers: true,
            structural: true,
            debugger: true,
            kernels: true,
        }
    }

    /// No resource (add the ones you want).
    pub fn none() -> Self {
        Wire {
            host_files: false,
            language_servers: false,
            structural: false,
            debugger: false,
            kernels: false,
        }
    }
}

/// The host's description of one run.
pub struct HostRun {
    /// The conversation this run serves.
    pub conversation_id: String,
    /// The workspace root; every path argument must stay inside it.
    pub root: PathBuf,
    /// What the agent sees.
    pub surface: Surface,
    /// Which resources to wire.
    pub wire: Wire,
    /// Decides every write- and exec-tier call, from the model or a kernel's bridge.
    pub approver: Arc<dyn Approver>,
    /// Where `ask_user` questions go; None means no `ask_user`.
    pub questions: Option<Arc<dyn QuestionPort>>,
    /// Runs background workers; None means no `vibe_*`.
    pub workers: Option<Arc<dyn WorkerBackend>>,
    /// A command prefix that runs kernels inside an enclosure (never started by us).
    pub enclosure: Option<Vec<String>>,
    /// The host's own tools (its `write`, `edit`, `apply_patch`, …), reachable from kernels.
    pub host_tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for HostRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRun")
            .field("conversation_id", &self.conversation_id)
            .field("root", &self.root)
            .field("surface", &self.surface)
            .field("wire", &self.wire)
            .field("enclosure", &self.enclosure)
            .field("host_tools", &self.host_tools.len())
            .finish_non_exhaustive()
    }
}

impl HostRun {
    /// A run with every resource wired and no question port, workers or host tools.
    pub fn new(
        conversation_id: impl Into<String>,
        root: impl AsRef<Path>,
        surface: Surface,
        approver: Arc<dyn Approver>,
    ) -> Self {
        HostRun {
            conversation_id: conversation_id.into(),
            root: root.as_ref().to_path_buf(),
            surface,
            wire: Wire::all(),
            approver,
            questions: None,
            workers: None,
            enclosure: None,
            host_tools: Vec::new(),
        }
    }
}

/// What the host gets back.
pub struct Embedded {
    /// The run's tools: list them with `schemas(surface)`, call them with `call`, and call
    /// `shutdown` when the conversation ends.
    pub registry: Registry,
    /// For the host's own writes: `after_write(&[path])` syncs the files through their
    /// language servers and returns `{"new", "pending", "unchecked"}`. None when language
    /// servers are not wired.
    pub after_write: Option<Arc<dyn AfterWrite>>,
}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedded")
            .field("registry", &self.registry)
            .field("after_write", &self.after_write.is_some())
            .finish()
    }
}

/// Builds the registry for a host's run.
pub fn embed(run: HostRun) -> Result<Embedded, SetupError> {
    let setup = RunSetup::new(&run.root)?;
    let mut resources = crate::wiring::resources_for(setup.root(), setup.config());
    let wire = run.wire;
    resources.host_files = wire.host_files;
    if !wire.language_servers {
        resources.language_servers = None;
    }
    if !wire.structural {
        resources.parsers = None;
    }
    if !wire.debugger {
        resources.debug = None;
    }
    if !wire.kernels {
        resources.kernels = None;
    } else if run.enclosure.is_some() {
        resources.kernels = Some(crate::wiring::kernel_factory(
            setup.root(),
            setup.config(),
            run.enclosure,
        ));
    }
    resources.questions = run.questions;
    resources.workers = run.workers;
    resources.host_tools = run.host_tools;
    let registry = setup.build(
        resources,
        RunOptions {
            surface: run.surface,
            approver: run.approver,
            conversation_id: run.conversation_id,
            questions: None,
        },
    );
    let after_write = registry.after_write_hook();
    Ok(Embedded {
        registry,
        after_write,
    })
}
