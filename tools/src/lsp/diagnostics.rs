//! The diagnostics-on-write hook: what a write broke, in the written files and in the files
//! that depend on them, and only what is new.
//!
//! Before a write ([`AfterWrite::before_write`]) the hook finds the written files' likely
//! dependents ([`super::dependents`]) and obtains the current diagnostics of every file among
//! them that the run's ledger has not seen yet: the baseline, so that what existed before is
//! never "new". After the write it syncs every written file first, then collects the
//! diagnostics of the written files and the dependents for that final state, and returns the
//! ones the ledger did not hold, with how far it looked (`scope`), which servers had not
//! answered (`pending`, never "clean") and which files no server covers (`unchecked`).
//!
//! The tree also changes behind the run (the shell, git, a formatter). Before a write the hook
//! asks the run's watcher what changed outside since it last looked; if anything did, the
//! baselines of the files this write checks are taken again (after the servers saw those
//! changes), and what the outside changes brought is reported apart, under `changed_outside`
//! (`{files, files_total, new}`), never as what this write broke.

use cc_process::lock;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_lsp_client::missing::MissingDependencies;
use cc_lsp_client::{
    CheckOutcome, Diagnostic, DiagnosticKey, FileCheck, Ledger, ServerPool, Severity,
};
use cc_workspace::watch::Subscription;

use super::dependents::{self, Change};
use crate::registry::{AfterWrite, PlannedWrite};
use crate::report::{
    ChangedOutside, CheckScope, MissingDependenciesNote, NewDiagnostic, UncheckedFile,
    WriteDiagnostics, WriteReport, OLDER_ERRORS_LISTED,
};
use crate::root::WorkspaceRoot;

/// Text larger than this is not parsed for changed definitions.
const MAX_DIFFED_BYTES: usize = 4 * 1024 * 1024;

/// What `before_write` prepared for one written file.
#[derive(Debug, Clone, Default)]
struct Prepared {
    /// The other files checked with it.
    dependents: Vec<PathBuf>,
    /// Candidates beyond the limit.
    skipped: usize,
    /// Where the dependents came from: `graph` or `word_scan`.
    from: Option<&'static str>,
}

/// The `AfterWrite` of a run with language servers. Holds the run's ledger: which
/// (severity, code, message) keys each file already reported, so that a diagnostic that moved
/// is not new and one that came back is.
#[derive(Debug)]
pub struct LspDiagnostics {
    pool: Arc<ServerPool>,
    root: WorkspaceRoot,
    ledger: Mutex<Ledger>,
    prepared: Mutex<HashMap<PathBuf, Prepared>>,
    /// The run's code graph: when it is open, dependents come from its edges.
    graph: Option<Arc<crate::graph::GraphIndex>>,
    /// What changed outside the run, and which baselines it made stale.
    outside: Mutex<Outside>,
    /// Diagnostics that only say a dependency is not on disk never enter the ledger (they
    /// are the project's configuration, not a write's doing); their packages are told once.
    missing: Mutex<MissingSeen>,
    /// Each project's source roots (for [`without_missing`]), found once.
    source_roots: Mutex<HashMap<PathBuf, Vec<PathBuf>>>,
}

/// The missing packages seen in the run, and those its write results have named.
#[derive(Debug, Default)]
struct MissingSeen {
    since_told: MissingDependencies,
    told: BTreeSet<String>,
}

impl LspDiagnostics {
    /// What `before_write` prepared for the written `paths`, taken: their dependents (none
    /// of them written), how many were skipped, and how they were found.
    fn take_prepared(&self, paths: &[PathBuf]) -> (Vec<PathBuf>, usize, Vec<&'static str>) {
        let mut dependents: Vec<PathBuf> = Vec::new();
        let mut skipped = 0;
        let mut sources: Vec<&'static str> = Vec::new();
        let mut prepared = lock(&self.prepared);
        for path in paths {
            if let Some(entry) = prepared.remove(path) {
                skipped += entry.skipped;
                if let Some(from) = entry.from.filter(|f| *f != "none") {
                    if !sources.contains(&from) {
                        sources.push(from);
                    }
                }
                for dependent in entry.dependents {
                    if !paths.contains(&dependent) && !dependents.contains(&dependent) {
                        dependents.push(dependent);
                    }
                }
            }
        }
        (dependents, skipped, sources)
    }

    /// The files among `paths` that exist and whose diagnostics before the write the ledger
    /// does not know.
    fn unbaselined<'p>(&self, paths: impl Iterator<Item = &'p PathBuf>) -> BTreeSet<PathBuf> {
        let ledger = lock(&self.ledger);
        paths
            .filter(|p| p.exists() && !ledger.is_known(p))
            .cloned()
            .collect()
    }
}

/// The hook's view of the changes made outside the run.
#[derive(Debug, Default)]
struct Outside {
    /// The run's watcher, subscribed at the first write (before it, no baseline exists that
    /// a change could make stale).
    subscription: Option<Subscription>,
    /// Bumped by every batch of outside changes: a ledger entry taken at an older epoch may
    /// not hold what the file reports now.
    epoch: u64,
    /// The epoch each file's ledger entry was taken at.
    taken: HashMap<PathBuf, u64>,
    /// Files changed outside that the next result reports (relative paths).
    files: BTreeSet<String>,
    /// Set when the watcher could not list them all: why.
    gap: Option<String>,
    /// What the outside changes brought, found by taking baselines again: the file, the
    /// diagnostic's identity, and how it is shown.
    new: Vec<(PathBuf, DiagnosticKey, NewDiagnostic)>,
}

impl LspDiagnostics {
    /// A hook over `pool`, showing paths relative to `root`.
    pub fn new(pool: Arc<ServerPool>, root: WorkspaceRoot) -> Self {
        LspDiagnostics {
            pool,
            root,
            ledger: Mutex::new(Ledger::default()),
            prepared: Mutex::new(HashMap::new()),
            graph: None,
            outside: Mutex::new(Outside::default()),
            missing: Mutex::new(MissingSeen::default()),
            source_roots: Mutex::new(HashMap::new()),
        }
    }

    /// Takes dependents from `graph` whenever it is open (the word scan otherwise).
    pub fn with_graph(mut self, graph: Option<Arc<crate::graph::GraphIndex>>) -> Self {
        self.graph = graph;
        self
    }

    /// The diagnostics of `diagnostics` that the policy of `path`'s family reports.
    fn reported(&self, path: &Path, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
        let reported: Vec<Diagnostic> = match self.pool.route(path) {
            Ok((family, _)) => diagnostics
                .into_iter()
                .filter(|d| family.reports(d))
                .collect(),
            Err(_) => diagnostics
                .into_iter()
                .filter(|d| d.is_problem() && !d.is_noise())
                .collect(),
        };
        let (kept, missing) =
            without_missing(&self.pool, path, reported, &mut lock(&self.source_roots));
        lock(&self.missing).since_told.add(missing);
        kept
    }

    /// The missing packages no write result has named yet, as a note (then told).
    fn missing_note(&self) -> Option<MissingDependenciesNote> {
        let mut seen = lock(&self.missing);
        let seen = &mut *seen;
        let fresh = MissingDependencies {
            packages: seen
                .since_told
                .packages
                .difference(&seen.told)
                .cloned()
                .collect(),
            // Counted over every file checked, not this write's: no count is given.
            diagnostics: 0,
        };
        seen.since_told = MissingDependencies::default();
        if fresh.packages.is_empty() {
            return None;
        }
        seen.told.extend(fresh.packages.iter().cloned());
        let note = fresh.sentence("the language server")?;
        Some(MissingDependenciesNote {
            packages: fresh.packages.into_iter().collect(),
            note,
        })
    }

    /// Records every checked file of `checks` as the baseline; returns the files that could
    /// not be baselined.
    fn seed(&self, checks: Vec<FileCheck>) -> Vec<PathBuf> {
        let mut missing = Vec::new();
        for check in checks {
            match check.outcome {
                CheckOutcome::Checked { diagnostics, .. } => {
                    let reported = self.reported(&check.path, diagnostics);
                    lock(&self.ledger).seed(&check.path, reported);
                    self.mark_taken(&check.path);
                }
                CheckOutcome::Removed => lock(&self.ledger).removed(&check.path),
                CheckOutcome::Pending { .. } | CheckOutcome::Unchecked { .. } => {
                    missing.push(check.path);
                }
            }
        }
        missing
    }

    /// Takes what the watcher saw changed outside the run since the last look; a batch makes
    /// every baseline taken before it stale.
    async fn look_outside(&self) {
        let watcher = {
            let mut outside = lock(&self.outside);
            if outside.subscription.is_none() {
                let Ok(watcher) = self.root.watcher() else {
                    return;
                };
                outside.subscription = Some(watcher.subscribe());
                return;
            }
            self.root.watcher().ok()
        };
        if let Some(watcher) = watcher {
            let _ = tokio::task::spawn_blocking(move || watcher.flush()).await;
        }
        let mut outside = lock(&self.outside);
        let Some(changes) = outside.subscription.as_ref().map(Subscription::take) else {
            return;
        };
        let mut any = false;
        for change in changes.outside() {
            any = true;
            let shown = self.root.relative(&change.path);
            outside.files.insert(shown);
        }
        if let Some(gap) = changes.gap {
            any = true;
            outside.gap = Some(gap.describe());
        }
        if any {
            outside.epoch += 1;
        }
    }

    /// Whether `path`'s ledger entry was taken before the last outside change.
    fn stale_baseline(&self, path: &Path) -> bool {
        let outside = lock(&self.outside);
        outside.epoch > 0 && outside.taken.get(path).copied().unwrap_or(0) < outside.epoch
    }

    fn mark_taken(&self, path: &Path) {
        let mut outside = lock(&self.outside);
        let epoch = outside.epoch;
        outside.taken.insert(path.to_path_buf(), epoch);
    }

    /// Takes the baselines of `checks` again (files the ledger knew, whose entries an outside
    /// change made stale): what is new in them now came from outside, and is kept for the
    /// write's `changed_outside`.
    fn retake(&self, checks: Vec<FileCheck>) {
        for check in checks {
            match check.outcome {
                CheckOutcome::Checked { diagnostics, .. } => {
                    let reported = self.reported(&check.path, diagnostics);
                    let added = lock(&self.ledger).rebase(&check.path, reported);
                    self.mark_taken(&check.path);
                    let shown = self.root.relative(&check.path);
                    let mut outside = lock(&self.outside);
                    for diagnostic in added {
                        let shown_diagnostic = NewDiagnostic::new(&shown, &diagnostic);
                        outside
                            .new
                            .push((check.path.clone(), diagnostic.key(), shown_diagnostic));
                    }
                }
                CheckOutcome::Removed => lock(&self.ledger).removed(&check.path),
                // Not answered: the old entry stays, and so does its staleness.
                CheckOutcome::Pending { .. } | CheckOutcome::Unchecked { .. } => {}
            }
        }
    }

    /// What the next result says of the changes made outside, and forgets it. `now`: what
    /// the files this write checked report after it; a diagnostic an outside change brought
    /// to one of them that is gone now (the write fixed it) is not reported.
    fn report_outside(
        &self,
        now: &HashMap<PathBuf, HashSet<DiagnosticKey>>,
    ) -> Option<ChangedOutside> {
        let mut outside = lock(&self.outside);
        outside
            .new
            .retain(|(path, key, _)| now.get(path).is_none_or(|keys| keys.contains(key)));
        if outside.files.is_empty() && outside.new.is_empty() && outside.gap.is_none() {
            return None;
        }
        let files: Vec<String> = std::mem::take(&mut outside.files).into_iter().collect();
        Some(ChangedOutside {
            files_total: files.len(),
            files: files.into_iter().take(20).collect(),
            new: std::mem::take(&mut outside.new)
                .into_iter()
                .map(|(_, _, shown)| shown)
                .collect(),
            note: outside.gap.take(),
        })
    }

    /// The dependents of one server's share of a write, and where they came from.
    async fn dependents_of(
        &self,
        planned: &[&PlannedWrite],
        limit: usize,
    ) -> (dependents::Found, &'static str) {
        let Some(first) = planned.first() else {
            return (dependents::Found::default(), "none");
        };
        let Ok((family, root)) = self.pool.route(&first.path) else {
            return (dependents::Found::default(), "none");
        };
        let extensions = family.extensions.clone();
        let texts: Vec<(PathBuf, Option<String>, Option<String>)> = planned
            .iter()
            .map(|write| {
                let old = std::fs::read(&write.path)
                    .ok()
                    .filter(|b| b.len() <= MAX_DIFFED_BYTES)
                    .and_then(|b| String::from_utf8(b).ok());
                let new = write
                    .content
                    .as_ref()
                    .filter(|b| b.len() <= MAX_DIFFED_BYTES)
                    .and_then(|b| String::from_utf8(b.clone()).ok());
                (write.path.clone(), old, new)
            })
            .collect();
        if let Some(graph) = &self.graph {
            let (texts, root, extensions) = (texts.clone(), root.clone(), extensions.clone());
            let found = graph
                .if_open(move |graph| {
                    let changes = as_changes(&texts);
                    dependents::from_graph(graph, &root, &extensions, &changes, limit)
                })
                .await;
            if let Some(found) = found {
                return (found, "graph");
            }
        }
        let found = tokio::task::spawn_blocking(move || {
            let changes = as_changes(&texts);
            dependents::find(&root, &extensions, &changes, limit)
        })
        .await
        .unwrap_or_default();
        (found, "word_scan")
    }
}

fn as_changes(texts: &[(PathBuf, Option<String>, Option<String>)]) -> Vec<Change<'_>> {
    texts
        .iter()
        .map(|(path, old, new)| Change {
            path,
            old: old.as_deref(),
            new: new.as_deref(),
        })
        .collect()
}

#[async_trait]
impl AfterWrite for LspDiagnostics {
    async fn before_write(&self, planned: &[PlannedWrite]) {
        self.look_outside().await;
        let limit = self.pool.dependents_limit();
        // Group the written files by server (family and root): dependents are per project.
        let mut groups: Vec<(String, PathBuf, Vec<&PlannedWrite>)> = Vec::new();
        for write in planned {
            let Ok((family, root)) = self.pool.route(&write.path) else {
                continue;
            };
            match groups
                .iter_mut()
                .find(|(f, r, _)| *f == family.name && *r == root)
            {
                Some((_, _, writes)) => writes.push(write),
                None => groups.push((family.name.clone(), root, vec![write])),
            }
        }
        let mut to_baseline: Vec<PathBuf> = Vec::new();
        let mut to_retake: Vec<PathBuf> = Vec::new();
        let mut prepared: Vec<(PathBuf, Prepared)> = Vec::new();
        for (_, _, writes) in &groups {
            let cross_file = match self.pool.server_for(&writes[0].path).await {
                Ok(server) => server.spec().cross_file,
                Err(_) => continue,
            };
            let (found, from) = if cross_file && limit > 0 {
                self.dependents_of(writes, limit).await
            } else {
                (dependents::Found::default(), "none")
            };
            for write in writes {
                let known = lock(&self.ledger).is_known(&write.path);
                if known {
                    if write.path.exists() && self.stale_baseline(&write.path) {
                        to_retake.push(write.path.clone());
                    }
                    continue;
                }
                if write.path.exists() {
                    to_baseline.push(write.path.clone());
                } else {
                    // A file the write creates had no diagnostics before it.
                    lock(&self.ledger).seed(&write.path, Vec::new());
                    self.mark_taken(&write.path);
                }
            }
            for dependent in &found.files {
                if !lock(&self.ledger).is_known(dependent) {
                    to_baseline.push(dependent.clone());
                } else if self.stale_baseline(dependent) {
                    to_retake.push(dependent.clone());
                }
            }
            // The group's dependents go with its first written file.
            for (index, write) in writes.iter().enumerate() {
                let entry = if index == 0 {
                    Prepared {
                        dependents: found.files.clone(),
                        skipped: found.skipped,
                        from: Some(from),
                    }
                } else {
                    Prepared::default()
                };
                prepared.push((write.path.clone(), entry));
            }
        }
        if !to_baseline.is_empty() || !to_retake.is_empty() {
            // Retaken files go as dependents: the answer must be one given after the
            // servers heard of the outside changes, not the list they already had.
            to_retake.retain(|path| !to_baseline.contains(path));
            let mut checks = self.pool.check_files(&to_baseline, &to_retake).await;
            let retaken: Vec<FileCheck> = {
                let (retaken, first): (Vec<FileCheck>, Vec<FileCheck>) = checks
                    .drain(..)
                    .partition(|check| to_retake.contains(&check.path));
                checks = first;
                retaken
            };
            self.retake(retaken);
            let missing = self.seed(checks);
            for path in missing {
                tracing::debug!(path = %path.display(), "no baseline before the write");
            }
        }
        lock(&self.prepared).extend(prepared);
    }

    async fn renamed(&self, old: &str, new: &str) {
        lock(&self.ledger).rename_symbol(old, new);
    }

    async fn after_write(&self, paths: &[PathBuf]) -> WriteReport {
        let (dependents, skipped, sources) = self.take_prepared(paths);
        let unbaselined = self.unbaselined(paths.iter().chain(&dependents));
        let checks = self.pool.check_files(paths, &dependents).await;
        let mut new = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let mut pending_files = Vec::new();
        let mut pending_why = std::collections::BTreeMap::new();
        let mut unchecked = Vec::new();
        let mut no_baseline = Vec::new();
        let mut files_checked = 0;
        let mut dependents_checked = 0;
        let mut now: HashMap<PathBuf, HashSet<DiagnosticKey>> = HashMap::new();
        let mut older_errors = Vec::new();
        let mut older_errors_total = 0;
        for check in checks {
            let shown = self.root.relative(&check.path);
            let is_dependent = dependents.contains(&check.path);
            match check.outcome {
                CheckOutcome::Checked { diagnostics, .. } => {
                    files_checked += 1;
                    if is_dependent {
                        dependents_checked += 1;
                    }
                    let reported = self.reported(&check.path, diagnostics);
                    now.insert(
                        check.path.clone(),
                        reported.iter().map(Diagnostic::key).collect(),
                    );
                    let (added, older) = lock(&self.ledger).update_split(&check.path, reported);
                    // A dependent's older errors are not this write's business.
                    let older = older
                        .iter()
                        .filter(|d| !is_dependent && d.severity == Severity::Error);
                    for diagnostic in older {
                        older_errors_total += 1;
                        if older_errors.len() < OLDER_ERRORS_LISTED {
                            older_errors.push(NewDiagnostic::new(&shown, diagnostic));
                        }
                    }
                    self.mark_taken(&check.path);
                    if unbaselined.contains(&check.path) && !added.is_empty() {
                        no_baseline.push(shown.clone());
                    }
                    for diagnostic in added {
                        new.push(NewDiagnostic::new(&shown, &diagnostic));
                    }
                }
                CheckOutcome::Pending { server, reason } => {
                    tracing::debug!(%server, path = %shown, %reason, "diagnostics pending");
                    pending_why.entry(server.clone()).or_insert(reason);
                    if !pending.contains(&server) {
                        pending.push(server);
                    }
                    pending_files.push(shown);
                }
                CheckOutcome::Unchecked { reason } => {
                    if !is_dependent {
                        unchecked.push(UncheckedFile {
                            path: shown,
                            reason,
                        });
                    }
                }
                CheckOutcome::Removed => lock(&self.ledger).removed(&check.path),
            }
        }
        let shown_dependents: Vec<String> =
            dependents.iter().map(|p| self.root.relative(p)).collect();
        WriteReport::checked(WriteDiagnostics {
            new,
            pending,
            pending_files,
            pending_why,
            unchecked,
            no_baseline,
            older_errors,
            older_errors_total,
            missing_dependencies: self.missing_note(),
            changed_outside: self.report_outside(&now),
            scope: Some(CheckScope {
                files_checked,
                dependents_checked,
                dependents_skipped: skipped,
                dependents: shown_dependents,
                dependents_from: sources.iter().map(|s| (*s).to_owned()).collect(),
            }),
        })
    }
}

/// Takes out of `path`'s `diagnostics` those that only say a dependency is not on disk
/// ([`cc_lsp_client::missing`]): Java sources only. `roots` caches each project's source
/// roots (found by their package lines) across the files of one answer.
pub(crate) fn without_missing(
    pool: &ServerPool,
    path: &Path,
    diagnostics: Vec<Diagnostic>,
    roots: &mut HashMap<PathBuf, Vec<PathBuf>>,
) -> (Vec<Diagnostic>, MissingDependencies) {
    if !cc_lsp_client::missing::reads(path) || diagnostics.is_empty() {
        return (diagnostics, MissingDependencies::default());
    }
    let (Ok((_, root)), Ok(text)) = (pool.route(path), std::fs::read_to_string(path)) else {
        return (diagnostics, MissingDependencies::default());
    };
    let roots = roots
        .entry(root.clone())
        .or_insert_with(|| cc_lsp_client::jdtls::source_roots(&root));
    cc_lsp_client::missing::split_file(path, &text, diagnostics, roots)
}
