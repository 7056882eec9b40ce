//! The run's own writes, announced to the run's watcher before they happen, so that the change
//! each causes is known as the run's and never taken for one made outside (by the shell, git, a
//! formatter): [`ExpectWrites`] wraps the run's after-write hook, which every writer calls
//! first ([`crate::CallContext::before_write`], or a host's own write through
//! [`crate::Registry::after_write_hook`]).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;

use crate::registry::{AfterWrite, PlannedWrite};
use crate::report::WriteReport;
use crate::root::WorkspaceRoot;

/// The run's after-write hook with the watcher told first.
pub struct ExpectWrites {
    root: WorkspaceRoot,
    inner: Arc<dyn AfterWrite>,
}

impl std::fmt::Debug for ExpectWrites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpectWrites")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl ExpectWrites {
    /// `inner` with every planned write announced to `root`'s watcher first.
    pub fn new(root: WorkspaceRoot, inner: Arc<dyn AfterWrite>) -> Self {
        ExpectWrites { root, inner }
    }
}

#[async_trait]
impl AfterWrite for ExpectWrites {
    async fn before_write(&self, planned: &[PlannedWrite]) {
        for write in planned {
            self.root
                .expect_write(&write.path, write.content.as_deref());
        }
        self.inner.before_write(planned).await;
    }

    async fn renamed(&self, old: &str, new: &str) {
        self.inner.renamed(old, new).await;
    }

    async fn after_write(&self, paths: &[PathBuf]) -> WriteReport {
        self.inner.after_write(paths).await
    }
}
