//! Test support, compiled for this crate's tests and with the `test-support` feature (the
//! crates that test through a registry enable it in their `[dev-dependencies]`): a [`Run`]
//! built in one line instead of by hand.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use cc_tools::{Resources, Run, Surface};
//! let dir = tempfile::tempdir()?;
//! let run = Run::builder(dir.path()).conversation("demo").surface(Surface::Plan).build();
//! let registry = Resources { host_files: true, ..Default::default() }.build(run);
//! assert_eq!(registry.run().conversation_id, "demo");
//! # Ok(()) }
//! ```

use std::path::Path;
use std::sync::Arc;

use crate::approve::{AllowAll, Approver};
use crate::registry::Run;
use crate::root::WorkspaceRoot;
use crate::tier::Surface;

/// Builds a [`Run`]: conversation `test`, the full surface and [`AllowAll`] unless told
/// otherwise.
#[derive(Clone)]
pub struct RunBuilder {
    run: Run,
}

impl std::fmt::Debug for RunBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunBuilder")
            .field("run", &self.run)
            .finish()
    }
}

impl Run {
    /// A builder for a run rooted at `root`, which must be an existing folder (a test
    /// fixture: panics otherwise).
    pub fn builder(root: impl AsRef<Path>) -> RunBuilder {
        let root = root.as_ref();
        let root = WorkspaceRoot::new(root)
            .unwrap_or_else(|error| panic!("no workspace root at {}: {error}", root.display()));
        RunBuilder::new(root)
    }
}

impl RunBuilder {
    /// A builder for a run over `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        RunBuilder {
            run: Run {
                conversation_id: "test".into(),
                root,
                surface: Surface::Full,
                approver: Arc::new(AllowAll),
            },
        }
    }

    /// The conversation id (per-run state such as debug sessions is keyed by it).
    pub fn conversation(mut self, id: impl Into<String>) -> Self {
        self.run.conversation_id = id.into();
        self
    }

    /// The surface the agent sees.
    pub fn surface(mut self, surface: Surface) -> Self {
        self.run.surface = surface;
        self
    }

    /// Where the run's commit journals go (instead of the user's state folder).
    pub fn state_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.run.root = self.run.root.clone().with_state_dir(dir);
        self
    }

    /// The approver of write- and exec-tier calls.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.run.approver = approver;
        self
    }

    /// The run.
    pub fn build(self) -> Run {
        self.run
    }
}
