//! Building the run a `cc-harness` command serves.

use std::path::Path;
use std::sync::Arc;

use cc_tools::{Approver, Registry, Run, Surface, WorkspaceRoot};

use crate::config::{ConfigError, ToolsConfig};
use crate::wiring::resources_for;

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

/// A checked workspace root and its configuration, from which runs are made.
#[derive(Debug, Clone)]
pub struct RunSetup {
    root: WorkspaceRoot,
    config: ToolsConfig,
}

impl RunSetup {
    /// Checks `root` and reads its `.cc/tools.toml`.
    pub fn new(root: &Path) -> Result<Self, SetupError> {
        let root = WorkspaceRoot::new(root).map_err(|source| SetupError::Root {
            path: root.display().to_string(),
            source,
        })?;
        let config = ToolsConfig::load(root.path())?;
        Ok(RunSetup { root, config })
    }

    /// The checked root.
    pub fn root(&self) -> &WorkspaceRoot {
        &self.root
    }

    /// A run with everything this machine supports wired.
    pub fn registry(
        &self,
        surface: Surface,
        approver: Arc<dyn Approver>,
        conversation_id: String,
    ) -> Registry {
        resources_for(&self.root, &self.config).build(Run {
            conversation_id,
            root: self.root.clone(),
            surface,
            approver,
        })
    }
}

/// A run rooted at `root`, with everything this machine supports wired.
pub fn build_registry(
    root: &Path,
    surface: Surface,
    approver: Arc<dyn Approver>,
    conversation_id: String,
) -> Result<Registry, SetupError> {
    Ok(RunSetup::new(root)?.registry(surface, approver, conversation_id))
}
