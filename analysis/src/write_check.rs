//! What a write broke: the diagnostics of the written files and of the files that depend on
//! them, and only those that are new.
//!
//! Before a write ([`WriteCheck::before`]) the written files' likely dependents are found
//! ([`crate::dependents`]: from the code graph's impact when it is open, from a word scan
//! otherwise) and the current diagnostics of every file among them that the run's [`Ledger`]
//! has not seen are taken: the baseline, so that what existed before is never "new". After
//! the write ([`WriteCheck::after`]) every written file is synced first, then the diagnostics
//! of the written files and the dependents are collected for that final state, and the ones
//! the ledger did not hold are returned, with how far the check looked, which servers had not
//! answered (never "clean") and which files no server covers.
//!
//! The tree also changes behind the run (the shell, git, a formatter). Before a write the
//! run's watcher is asked what changed outside since it was last asked; if anything did, the
//! baselines of the files this write checks are taken again (after the servers saw those
//! changes), and what the outside changes brought is returned apart
//! ([`Checked::changed_outside`]), never as what this write broke.
//!
//! Paths are absolute; the caller shows them as it likes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cc_graph::precise::SharedGraph;
use cc_lsp_client::missing::MissingDependencies;
use cc_lsp_client::{
    CheckOutcome, Diagnostic, DiagnosticKey, FileCheck, Ledger, ServerPool, Severity, WatchSource,
};
use cc_process::lock;
use cc_workspace::watch::Subscription;

use crate::dependents::{self, Change};

/// Text larger than this is not parsed for changed definitions.
const MAX_DIFFED_BYTES: usize = 4 * 1024 * 1024;

/// The run's code graph as the check sees it: `None` while it is not open (a write never
/// waits for the graph's first build).
pub type GraphSource = Arc<dyn Fn() -> Option<SharedGraph> + Send + Sync>;

/// A file a write is about to change.
#[derive(Debug, Clone, Copy)]
pub struct Planned<'a> {
    /// Absolute path.
    pub path: &'a Path,
    /// The bytes it will hold (`None`: it is deleted).
    pub content: Option<&'a [u8]>,
}

/// A diagnostic of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDiagnostic {
    /// The file.
    pub path: PathBuf,
    /// The diagnostic.
    pub diagnostic: Diagnostic,
}

impl FileDiagnostic {
    fn new(path: &Path, diagnostic: Diagnostic) -> Self {
        FileDiagnostic {
            path: path.to_path_buf(),
            diagnostic,
        }
    }
}

/// How far a write's check looked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// Files whose diagnostics were collected.
    pub files_checked: usize,
    /// Of them, dependents of the written files.
    pub dependents_checked: usize,
    /// Dependents beyond the limit, not checked.
    pub dependents_skipped: usize,
    /// The dependents checked with the written files.
    pub dependents: Vec<PathBuf>,
    /// Where they came from: `graph` or `word_scan`.
    pub dependents_from: Vec<&'static str>,
}

/// What changed outside the run since the last write, and what it brought.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangedOutside {
    /// The files changed outside the run.
    pub files: Vec<PathBuf>,
    /// Diagnostics the outside changes brought to the files this write checked, still there
    /// after it.
    pub new: Vec<FileDiagnostic>,
    /// Why the list of files may be incomplete (the watcher could not list them all).
    pub note: Option<String>,
}

/// Packages diagnostics said are missing, not named to the caller before.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingNote {
    /// The packages.
    pub packages: Vec<String>,
    /// One sentence saying what is missing and what to do.
    pub note: String,
}

/// What a write broke, and how far that was checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checked {
    /// Diagnostics the ledger did not hold: this write's doing.
    pub new: Vec<FileDiagnostic>,
    /// Servers that had not answered for some file (never "clean").
    pub pending: Vec<String>,
    /// The files they had not answered for.
    pub pending_files: Vec<PathBuf>,
    /// Why, by server (for its first pending file).
    pub pending_why: BTreeMap<String, String>,
    /// Written files no server checks, with why.
    pub unchecked: Vec<(PathBuf, String)>,
    /// Files with new diagnostics whose state before the write was not known: what is "new"
    /// there may have been there before.
    pub no_baseline: Vec<PathBuf>,
    /// Errors the written files had before this write and still have.
    pub older_errors: Vec<FileDiagnostic>,
    /// Missing packages the diagnostics named, not told before.
    pub missing_dependencies: Option<MissingNote>,
    /// What changed outside the run, when anything did.
    pub changed_outside: Option<ChangedOutside>,
    /// How far the check looked.
    pub scope: Scope,
}

/// What `before` prepared for one written file.
#[derive(Debug, Clone, Default)]
struct Prepared {
    /// The other files checked with it.
    dependents: Vec<PathBuf>,
    /// Candidates beyond the limit.
    skipped: usize,
    /// Where the dependents came from: `graph` or `word_scan`.
    from: Option<&'static str>,
}

/// The missing packages seen in the run, and those already named.
#[derive(Debug, Default)]
struct MissingSeen {
    since_told: MissingDependencies,
    told: BTreeSet<String>,
}

/// The check's view of the changes made outside the run.
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
    /// Files changed outside that the next result reports.
    files: BTreeSet<PathBuf>,
    /// Set when the watcher could not list them all: why.
    gap: Option<String>,
    /// What the outside changes brought, found by taking baselines again.
    new: Vec<(DiagnosticKey, FileDiagnostic)>,
}

/// The diagnostics-on-write check of a run with language servers. Holds the run's ledger:
/// which (severity, code, message) keys each file already reported, so that a diagnostic that
/// moved is not new and one that came back is.
pub struct WriteCheck {
    pool: Arc<ServerPool>,
    ledger: Mutex<Ledger>,
    prepared: Mutex<HashMap<PathBuf, Prepared>>,
    /// The run's code graph: when it is open, dependents come from its edges.
    graph: Option<GraphSource>,
    /// The run's watcher of the tree, when it has one.
    watcher: Option<WatchSource>,
    outside: Mutex<Outside>,
    /// Diagnostics that only say a dependency is not on disk never enter the ledger (they
    /// are the project's configuration, not a write's doing); their packages are told once.
    missing: Mutex<MissingSeen>,
    /// Each project's source roots (for [`without_missing`]), found once.
    source_roots: Mutex<HashMap<PathBuf, Vec<PathBuf>>>,
}

impl std::fmt::Debug for WriteCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteCheck")
            .field("graph", &self.graph.is_some())
            .field("watcher", &self.watcher.is_some())
            .finish_non_exhaustive()
    }
}

impl WriteCheck {
    /// A check over `pool`'s servers.
    pub fn new(pool: Arc<ServerPool>) -> Self {
        WriteCheck {
            pool,
            ledger: Mutex::new(Ledger::default()),
            prepared: Mutex::new(HashMap::new()),
            graph: None,
            watcher: None,
            outside: Mutex::new(Outside::default()),
            missing: Mutex::new(MissingSeen::default()),
            source_roots: Mutex::new(HashMap::new()),
        }
    }

    /// Takes dependents from `graph` whenever it is open (the word scan otherwise).
    pub fn with_graph(mut self, graph: Option<GraphSource>) -> Self {
        self.graph = graph;
        self
    }

    /// Asks `watcher` what changed outside the run before each write.
    pub fn with_watcher(mut self, watcher: WatchSource) -> Self {
        self.watcher = Some(watcher);
        self
    }

    /// The pool the check asks.
    pub fn pool(&self) -> &Arc<ServerPool> {
        &self.pool
    }

    /// A symbol was renamed in the run: its old name's diagnostics under the new name are not
    /// new.
    pub fn renamed(&self, old: &str, new: &str) {
        lock(&self.ledger).rename_symbol(old, new);
    }

    /// Before the write of `planned`: finds their dependents and takes the baselines the
    /// ledger lacks (again, where an outside change made one stale).
    pub async fn before(&self, planned: &[Planned<'_>]) {
        self.look_outside().await;
        let limit = self.pool.dependents_limit();
        let mut to_baseline: Vec<PathBuf> = Vec::new();
        let mut to_retake: Vec<PathBuf> = Vec::new();
        let mut prepared: Vec<(PathBuf, Prepared)> = Vec::new();
        for writes in self.by_server(planned) {
            let cross_file = match self.pool.server_for(writes[0].path).await {
                Ok(server) => server.spec().cross_file,
                Err(_) => continue,
            };
            let (found, from) = if cross_file && limit > 0 {
                self.dependents_of(&writes, limit).await
            } else {
                (dependents::Found::default(), "none")
            };
            for write in &writes {
                self.plan_baseline(write.path, &mut to_baseline, &mut to_retake);
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
                prepared.push((write.path.to_path_buf(), entry));
            }
        }
        if !to_baseline.is_empty() || !to_retake.is_empty() {
            self.take_baselines(to_baseline, to_retake).await;
        }
        lock(&self.prepared).extend(prepared);
    }

    /// After the write of `paths`: what it broke.
    pub async fn after(&self, paths: &[PathBuf]) -> Checked {
        let (dependents, skipped, sources) = self.take_prepared(paths);
        let unbaselined = self.unbaselined(paths.iter().chain(&dependents));
        let checks = self.pool.check_files(paths, &dependents).await;
        let mut checked = Checked::default();
        let mut now: HashMap<PathBuf, HashSet<DiagnosticKey>> = HashMap::new();
        for check in checks {
            let is_dependent = dependents.contains(&check.path);
            match check.outcome {
                CheckOutcome::Checked { diagnostics, .. } => {
                    checked.scope.files_checked += 1;
                    if is_dependent {
                        checked.scope.dependents_checked += 1;
                    }
                    let reported = self.reported(&check.path, diagnostics);
                    now.insert(
                        check.path.clone(),
                        reported.iter().map(Diagnostic::key).collect(),
                    );
                    let (added, older) = lock(&self.ledger).update_split(&check.path, reported);
                    // A dependent's older errors are not this write's business.
                    if !is_dependent {
                        checked.older_errors.extend(
                            older
                                .into_iter()
                                .filter(|d| d.severity == Severity::Error)
                                .map(|d| FileDiagnostic::new(&check.path, d)),
                        );
                    }
                    self.mark_taken(&check.path);
                    if unbaselined.contains(&check.path) && !added.is_empty() {
                        checked.no_baseline.push(check.path.clone());
                    }
                    checked.new.extend(
                        added
                            .into_iter()
                            .map(|d| FileDiagnostic::new(&check.path, d)),
                    );
                }
                CheckOutcome::Pending { server, reason } => {
                    tracing::debug!(%server, path = %check.path.display(), %reason, "diagnostics pending");
                    checked.pending_why.entry(server.clone()).or_insert(reason);
                    if !checked.pending.contains(&server) {
                        checked.pending.push(server);
                    }
                    checked.pending_files.push(check.path);
                }
                CheckOutcome::Unchecked { reason } => {
                    if !is_dependent {
                        checked.unchecked.push((check.path, reason));
                    }
                }
                CheckOutcome::Removed => lock(&self.ledger).removed(&check.path),
            }
        }
        checked.missing_dependencies = self.missing_note();
        checked.changed_outside = self.report_outside(&now);
        checked.scope.dependents_skipped = skipped;
        checked.scope.dependents = dependents;
        checked.scope.dependents_from = sources;
        checked
    }

    /// The written files grouped by server (family and root): dependents are per project.
    fn by_server<'p>(&self, planned: &'p [Planned<'p>]) -> Vec<Vec<&'p Planned<'p>>> {
        let mut groups: Vec<(String, PathBuf, Vec<&Planned<'_>>)> = Vec::new();
        for write in planned {
            let Ok((family, root)) = self.pool.route(write.path) else {
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
        groups.into_iter().map(|(_, _, writes)| writes).collect()
    }

    /// Whether a written file's baseline is to be taken (it is unknown), taken again (an
    /// outside change made it stale), or is known to be empty (the write creates it).
    fn plan_baseline(
        &self,
        path: &Path,
        to_baseline: &mut Vec<PathBuf>,
        to_retake: &mut Vec<PathBuf>,
    ) {
        let known = lock(&self.ledger).is_known(path);
        if known {
            if path.exists() && self.stale_baseline(path) {
                to_retake.push(path.to_path_buf());
            }
        } else if path.exists() {
            to_baseline.push(path.to_path_buf());
        } else {
            // A file the write creates had no diagnostics before it.
            lock(&self.ledger).seed(path, Vec::new());
            self.mark_taken(path);
        }
    }

    /// Takes the baselines of `to_baseline`, and again those of `to_retake`.
    async fn take_baselines(&self, to_baseline: Vec<PathBuf>, mut to_retake: Vec<PathBuf>) {
        // Retaken files go as dependents: the answer must be one given after the servers
        // heard of the outside changes, not the list they already had.
        to_retake.retain(|path| !to_baseline.contains(path));
        let checks = self.pool.check_files(&to_baseline, &to_retake).await;
        let (retaken, first): (Vec<FileCheck>, Vec<FileCheck>) = checks
            .into_iter()
            .partition(|check| to_retake.contains(&check.path));
        self.retake(retaken);
        for path in self.seed(first) {
            tracing::debug!(path = %path.display(), "no baseline before the write");
        }
    }

    /// What `before` prepared for the written `paths`, taken: their dependents (none of them
    /// written), how many were skipped, and how they were found.
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

    /// The missing packages no result has named yet, as a note (then told).
    fn missing_note(&self) -> Option<MissingNote> {
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
        Some(MissingNote {
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
        let Some(source) = &self.watcher else {
            return;
        };
        let watcher = {
            let mut outside = lock(&self.outside);
            if outside.subscription.is_none() {
                let Some(watcher) = source() else {
                    return;
                };
                outside.subscription = Some(watcher.subscribe());
                return;
            }
            source()
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
            outside.files.insert(change.path.clone());
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
                    let mut outside = lock(&self.outside);
                    for diagnostic in added {
                        let key = diagnostic.key();
                        outside
                            .new
                            .push((key, FileDiagnostic::new(&check.path, diagnostic)));
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
            .retain(|(key, found)| now.get(&found.path).is_none_or(|keys| keys.contains(key)));
        if outside.files.is_empty() && outside.new.is_empty() && outside.gap.is_none() {
            return None;
        }
        Some(ChangedOutside {
            files: std::mem::take(&mut outside.files).into_iter().collect(),
            new: std::mem::take(&mut outside.new)
                .into_iter()
                .map(|(_, found)| found)
                .collect(),
            note: outside.gap.take(),
        })
    }

    /// The dependents of one server's share of a write, and where they came from.
    async fn dependents_of(
        &self,
        planned: &[&Planned<'_>],
        limit: usize,
    ) -> (dependents::Found, &'static str) {
        let Some(first) = planned.first() else {
            return (dependents::Found::default(), "none");
        };
        let Ok((family, root)) = self.pool.route(first.path) else {
            return (dependents::Found::default(), "none");
        };
        let extensions = family.extensions.clone();
        let texts: Vec<(PathBuf, Option<String>, Option<String>)> = planned
            .iter()
            .map(|write| {
                let old = std::fs::read(write.path)
                    .ok()
                    .filter(|b| b.len() <= MAX_DIFFED_BYTES)
                    .and_then(|b| String::from_utf8(b).ok());
                let new = write
                    .content
                    .filter(|b| b.len() <= MAX_DIFFED_BYTES)
                    .and_then(|b| String::from_utf8(b.to_vec()).ok());
                (write.path.to_path_buf(), old, new)
            })
            .collect();
        if let Some(graph) = self.graph.as_ref().and_then(|source| source()) {
            let (texts, root, extensions) = (texts.clone(), root.clone(), extensions.clone());
            let found = tokio::task::spawn_blocking(move || {
                let mut guard = lock(&graph);
                let graph = guard.as_mut()?;
                let changes = as_changes(&texts);
                Some(dependents::from_graph(
                    graph,
                    &root,
                    &extensions,
                    &changes,
                    limit,
                ))
            })
            .await
            .ok()
            .flatten();
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

/// Takes out of `path`'s `diagnostics` those that only say a dependency is not on disk
/// ([`cc_lsp_client::missing`]): Java sources only. `roots` caches each project's source
/// roots (found by their package lines) across the files of one answer.
pub fn without_missing(
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

    use super::*;
    use cc_lsp_client::{ServerPoolOptions, ServerTable};
    use cc_test_support::{assert_group_gone, require_peer};

    const LIB: &str = "def area(side: int) -> int:\n    return side * side\n";
    const BROKEN_LIB: &str =
        "def area(side: int, scale: int) -> int:\n    return side * side * scale\n";
    const USER: &str = "from shapes import area\n\nprint(area(2))\n";

    async fn write(check: &WriteCheck, path: &Path, text: &str) -> Checked {
        check
            .before(&[Planned {
                path,
                content: Some(text.as_bytes()),
            }])
            .await;
        std::fs::write(path, text).unwrap();
        check.after(&[path.to_path_buf()]).await
    }

    /// A Rust host's write check over the real basedpyright: a signature change breaks the
    /// file that calls it (found by the word scan, checked as a dependent); an error the file
    /// already had is listed as older, never as new.
    #[tokio::test]
    async fn a_changed_signature_breaks_its_caller_and_only_that_is_new() {
        if require_peer("basedpyright-langserver").is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("pyproject.toml"), "").unwrap();
        std::fs::write(root.join("shapes.py"), LIB).unwrap();
        std::fs::write(root.join("report.py"), USER).unwrap();
        let pool = ServerPool::new(&root, ServerTable::builtin(), ServerPoolOptions::default());
        let check = WriteCheck::new(pool.clone());

        let lib = root.join("shapes.py");
        let broken = write(&check, &lib, BROKEN_LIB).await;
        assert!(broken.pending.is_empty(), "{broken:#?}");
        assert_eq!(broken.scope.dependents, [root.join("report.py")]);
        assert_eq!(broken.scope.dependents_from, ["word_scan"]);
        assert_eq!(broken.scope.files_checked, 2);
        let paths: Vec<&Path> = broken.new.iter().map(|d| d.path.as_path()).collect();
        assert_eq!(paths, [root.join("report.py").as_path()], "{broken:#?}");
        assert!(broken.older_errors.is_empty());

        // The caller's error is the caller's now: writing it unchanged, it is older.
        let user = root.join("report.py");
        let again = write(&check, &user, USER).await;
        assert!(again.new.is_empty(), "{again:#?}");
        assert_eq!(again.older_errors.len(), 1, "{again:#?}");

        let pids: Vec<u32> = pool.running().iter().filter_map(|s| s.pid()).collect();
        pool.shutdown().await;
        for pid in pids {
            assert_group_gone(pid).await;
        }
    }
}
