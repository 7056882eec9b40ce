//! The diagnostics-on-write hook: what a write broke, in the written files and in the files
//! that depend on them, and only what is new ([`cc_analysis::write_check`] decides it). This
//! adapter hands it the run's watcher and code graph, and shows what it found as the write's
//! `diagnostics`: paths relative to the root, the first few of long lists.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use cc_analysis::write_check::{self, Checked, FileDiagnostic, Planned, WriteCheck};
use cc_lsp_client::ServerPool;

use crate::registry::{AfterWrite, PlannedWrite};
use crate::report::{
    ChangedOutside, CheckScope, MissingDependenciesNote, NewDiagnostic, UncheckedFile,
    WriteDiagnostics, WriteReport, OLDER_ERRORS_LISTED,
};
use crate::root::WorkspaceRoot;

/// How many files changed outside a write result lists.
const OUTSIDE_FILES_LISTED: usize = 20;

/// The `AfterWrite` of a run with language servers, over the run's [`WriteCheck`] (which
/// holds its ledger).
#[derive(Debug)]
pub struct LspDiagnostics {
    check: WriteCheck,
    root: WorkspaceRoot,
}

impl LspDiagnostics {
    /// A hook over `pool`, showing paths relative to `root`; changes made outside the run come
    /// from `root`'s watcher.
    pub fn new(pool: Arc<ServerPool>, root: WorkspaceRoot) -> Self {
        let watched = root.clone();
        let check = WriteCheck::new(pool).with_watcher(Arc::new(move || watched.watcher().ok()));
        LspDiagnostics { check, root }
    }

    /// Takes dependents from `graph` whenever it is open (the word scan otherwise).
    pub fn with_graph(mut self, graph: Option<Arc<crate::graph::GraphIndex>>) -> Self {
        let source: Option<write_check::GraphSource> = graph.map(|graph| {
            let source: write_check::GraphSource = Arc::new(move || graph.shared_if_open());
            source
        });
        self.check = self.check.with_graph(source);
        self
    }

    fn shown(&self, found: &FileDiagnostic) -> NewDiagnostic {
        NewDiagnostic::new(&self.root.relative(&found.path), &found.diagnostic)
    }

    /// What the check found, as the write's `diagnostics`.
    fn report(&self, checked: Checked) -> WriteDiagnostics {
        let relative = |paths: &[PathBuf]| -> Vec<String> {
            paths.iter().map(|p| self.root.relative(p)).collect()
        };
        let changed_outside = checked.changed_outside.map(|outside| {
            let mut files = relative(&outside.files);
            files.sort();
            ChangedOutside {
                files_total: files.len(),
                files: files.into_iter().take(OUTSIDE_FILES_LISTED).collect(),
                new: outside.new.iter().map(|found| self.shown(found)).collect(),
                note: outside.note,
            }
        });
        WriteDiagnostics {
            new: checked.new.iter().map(|found| self.shown(found)).collect(),
            pending: checked.pending,
            pending_files: relative(&checked.pending_files),
            pending_why: checked.pending_why,
            unchecked: checked
                .unchecked
                .iter()
                .map(|(path, reason)| UncheckedFile {
                    path: self.root.relative(path),
                    reason: reason.clone(),
                })
                .collect(),
            no_baseline: relative(&checked.no_baseline),
            older_errors: checked
                .older_errors
                .iter()
                .take(OLDER_ERRORS_LISTED)
                .map(|found| self.shown(found))
                .collect(),
            older_errors_total: checked.older_errors.len(),
            missing_dependencies: checked.missing_dependencies.map(|missing| {
                MissingDependenciesNote {
                    packages: missing.packages,
                    note: missing.note,
                }
            }),
            changed_outside,
            scope: Some(CheckScope {
                files_checked: checked.scope.files_checked,
                dependents_checked: checked.scope.dependents_checked,
                dependents_skipped: checked.scope.dependents_skipped,
                dependents: relative(&checked.scope.dependents),
                dependents_from: checked
                    .scope
                    .dependents_from
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
            }),
        }
    }
}

#[async_trait]
impl AfterWrite for LspDiagnostics {
    async fn before_write(&self, planned: &[PlannedWrite]) {
        let planned: Vec<Planned<'_>> = planned
            .iter()
            .map(|write| Planned {
                path: &write.path,
                content: write.content.as_deref(),
            })
            .collect();
        self.check.before(&planned).await;
    }

    async fn renamed(&self, old: &str, new: &str) {
        self.check.renamed(old, new);
    }

    async fn after_write(&self, paths: &[PathBuf]) -> WriteReport {
        let checked = self.check.after(paths).await;
        WriteReport::checked(self.report(checked))
    }
}
