//! Building the run a `cc-harness` command serves.
//!
//! Setting a run up on a root first recovers what a crash left there
//! ([`cc_workspace::Workspace::recover`]: interrupted multi-file commits are finished or
//! undone, their temporary files removed), before any tool can write. What it did is kept for
//! `status` ([`RunSetup::recovery`]) and goes, once, to the first result of the first run
//! built from this setup (as `recovered` notices, see `cc_tools::notices`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use cc_workspace::RecoveryReport;

use cc_tools::ask_user::QuestionPort;
use cc_tools::{Approver, Registry, Resources, Run, Surface, WorkspaceRoot};

use crate::config::{ConfigError, ToolsConfig};
use crate::wiring::resources_for;
use crate::workers::CommandBackend;

/// Why a run could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The root is not a usable directory.
    #[error("workspace root {path} is not usable: {source}")]
    Root {
        /// The root as given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// `.cc/tools.toml` is broken.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Who the run is for and how it decides.
pub struct RunOptions {
    /// What the agent sees.
    pub surface: Surface,
    /// Decides each write- and exec-tier call.
    pub approver: Arc<dyn Approver>,
    /// The conversation.
    pub conversation_id: String,
    /// Where `ask_user` questions go, when a human can be asked.
    pub questions: Option<Arc<dyn QuestionPort>>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("surface", &self.surface)
            .field("conversation_id", &self.conversation_id)
            .field("questions", &self.questions.is_some())
            .finish_non_exhaustive()
    }
}

/// A checked workspace root and its configuration, from which runs are made.
#[derive(Debug, Clone)]
pub struct RunSetup {
    root: WorkspaceRoot,
    config: ToolsConfig,
    workers: Option<CommandBackend>,
    question_timeout: Option<std::time::Duration>,
    /// What the recovery at setup did.
    recovery: RecoveryReport,
    /// The same, until the first run takes it for its first result.
    unreported: Arc<Mutex<Option<RecoveryReport>>>,
}

impl RunSetup {
    /// Checks `root` and reads its `.cc/tools.toml`.
    pub fn new(root: &Path) -> Result<Self, SetupError> {
        let root = WorkspaceRoot::new(root).map_err(|source| SetupError::Root {
            path: root.display().to_string(),
            source,
        })?;
        let config = ToolsConfig::load(root.path())?;
        let workers = config
            .workers
            .clone()
            .and_then(|section| CommandBackend::new(root.path().to_path_buf(), section));
        let question_timeout = config.question_timeout;
        // Before any tool can write: finish or undo what a crash left.
        let recovery = root.workspace().recover();
        let unreported = (!recovery.is_empty()).then(|| recovery.clone());
        Ok(RunSetup {
            root,
            config,
            workers,
            question_timeout,
            recovery,
            unreported: Arc::new(Mutex::new(unreported)),
        })
    }

    /// What the recovery at setup did (interrupted commits finished or undone).
    pub fn recovery(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// The checked root.
    pub fn root(&self) -> &WorkspaceRoot {
        &self.root
    }

    /// The worker tiers `.cc/tools.toml` configures (`fast`, `good`).
    pub fn workers_configured(&self) -> Vec<&'static str> {
        use cc_tools::vibe::{WorkerBackend, WorkerTier};
        let Some(workers) = &self.workers else {
            return Vec::new();
        };
        [WorkerTier::Fast, WorkerTier::Good]
            .into_iter()
            .filter(|tier| workers.supports(*tier))
            .map(WorkerTier::as_str)
            .collect()
    }

    /// The root's configuration.
    pub fn config(&self) -> &ToolsConfig {
        &self.config
    }

    /// A run with everything this machine supports wired.
    pub fn registry(&self, options: RunOptions) -> Registry {
        let mut resources = resources_for(&self.root, &self.config);
        if let Some(workers) = &self.workers {
            resources.workers = Some(Arc::new(workers.clone()));
        }
        self.build(resources, options)
    }

    /// A run for one call (`cc-harness call`): [`RunSetup::registry`] without the tree
    /// cache, since a single call never searches twice (its trees would only add memory).
    pub fn single_call_registry(&self, options: RunOptions) -> Registry {
        let mut resources = resources_for(&self.root, &self.config);
        if let Some(workers) = &self.workers {
            resources.workers = Some(Arc::new(workers.clone()));
        }
        resources.tree_cache_bytes = Some(0);
        self.build(resources, options)
    }

    /// A run with `resources` (the options' question port is added when given).
    pub fn build(&self, mut resources: Resources, options: RunOptions) -> Registry {
        if options.questions.is_some() {
            resources.questions = options.questions;
        }
        if resources.question_timeout.is_none() {
            resources.question_timeout = self.question_timeout;
        }
        let registry = resources.build(Run {
            conversation_id: options.conversation_id,
            root: self.root.clone(),
            surface: options.surface,
            approver: options.approver,
        });
        let unreported = match self.unreported.lock() {
            Ok(mut unreported) => unreported.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(report) = unreported {
            cc_tools::notices::push_recovery_report(registry.notices(), &self.root, &report);
        }
        registry
    }
}

/// A run rooted at `root`, with everything this machine supports wired.
pub fn build_registry(root: &Path, options: RunOptions) -> Result<Registry, SetupError> {
    Ok(RunSetup::new(root)?.registry(options))
}
