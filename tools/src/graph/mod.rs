//! The code graph as a tool: `graph` (read tier), over the `cc-graph` index of the run's root.
//!
//! The index is opened (or built) lazily, on the first call that needs it, with progress
//! (files indexed of total); from then on it belongs to the run ([`GraphIndex`]). Every call
//! first re-reads the files the run's watcher saw change behind our back — a cost of what
//! changed, not of the tree — and falls back to a stat of every file only when the watcher
//! cannot say (it lost events, or cannot watch this tree), saying so; our own writes update
//! it before they return ([`GraphAfterWrite`], wrapped around the run's diagnostics hook).

mod position;
mod render;
mod tool;
mod verify;

pub use tool::GraphTool;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_graph::{Graph, GraphConfig, UpdateStats};
use cc_process::lock;
use cc_workspace::watch::{ChangeKind, Subscription, TreeWatcher};
use cc_workspace::BrokenSection;

use crate::error::{ErrorKind, ToolError};
use crate::registry::{AfterWrite, PlannedWrite};
use crate::report::WriteReport;
use crate::root::WorkspaceRoot;
use crate::tool::ProgressSink;

/// What the stat check of one call found and did.
#[derive(Debug, Clone, Default)]
pub(crate) struct Checked {
    /// Set when this call opened (or built) the index.
    pub opened: Option<UpdateStats>,
    /// Files changed on disk since the index last saw them, re-read by this call.
    pub updated: Vec<String>,
    /// Indexed files gone from disk since, dropped from the index by this call.
    pub removed: Vec<String>,
    /// Files still not reflected (their update failed), with why.
    pub stale: Vec<String>,
    pub error: Option<String>,
    /// Set when the watcher could not list the changes, so every file was stat'ed: why.
    pub rescanned: Option<String>,
    /// What ignore rules kept out of the index when this call built it.
    pub left_out: Option<crate::left_out::LeftOutReport>,
}

impl Checked {
    /// `changed`, now in the index: each re-read, or dropped when it is gone from disk (a
    /// checkout or `git stash -u` behind the run).
    fn took_in(&mut self, root: &Path, changed: Vec<String>) {
        let (updated, removed) = changed.into_iter().partition(|rel| root.join(rel).exists());
        self.updated = updated;
        self.removed = removed;
    }

    /// `error` with what this call took in first: the failure may come from those changes
    /// (the shell moved a definition), and the next answer does not list them again.
    fn note_on(&self, error: ToolError) -> ToolError {
        let taken = crate::report::graph::taken_in(&self.updated, &self.removed, "first");
        if taken.is_empty() {
            return error;
        }
        error
            .with_note(&format!("the index took in {}", taken.join("; ")))
            .with_detail("index_updated", self.updated.clone())
            .with_detail("index_removed", self.removed.clone())
    }
}

/// The run's code graph: closed until the first `graph` call opens it.
pub struct GraphIndex {
    root: WorkspaceRoot,
    config: Result<GraphConfig, BrokenSection>,
    state: Arc<Mutex<Option<Graph>>>,
    open: AtomicBool,
    /// What the run's watcher saw change since the graph last looked (taken before the index
    /// was opened, so nothing falls in between); `None`: no watcher, stat every file.
    watching: Arc<Mutex<Option<Watching>>>,
    /// The compiler-grade indexers run in the background (`None`: `[graph] precise = false`
    /// or a broken section).
    precise: Option<cc_graph::precise::PreciseTier>,
}

/// The run's watcher and the graph's subscription to it.
type Watching = (Arc<TreeWatcher>, Subscription);

impl std::fmt::Debug for GraphIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphIndex")
            .field("root", &self.root)
            .field("open", &self.is_open())
            .finish_non_exhaustive()
    }
}

impl GraphIndex {
    /// The graph of `root`, kept as `config` says (an `Err`: the `[graph]` section is
    /// invalid, and every call says so). `workspace_code`: whether an indexer that runs the
    /// workspace's own code may run (not on a read-only surface).
    pub fn new(
        root: WorkspaceRoot,
        config: Result<GraphConfig, BrokenSection>,
        workspace_code: bool,
    ) -> Arc<Self> {
        let precise = config.as_ref().ok().filter(|c| c.precise).map(|_| {
            cc_graph::precise::PreciseTier::new(cc_graph::PreciseOptions {
                enabled: true,
                workspace_code,
            })
        });
        Arc::new(GraphIndex {
            root,
            config,
            state: Arc::new(Mutex::new(None)),
            open: AtomicBool::new(false),
            watching: Arc::new(Mutex::new(None)),
            precise,
        })
    }

    /// Asks the precise tier for a pass once changes settle (at once after an open).
    fn refine(self: &Arc<Self>, after: std::time::Duration) {
        if let Some(tier) = &self.precise {
            tier.kick(&self.state, after);
        }
    }

    /// What the precise tier is doing, for an answer's text: which indexer still refines it.
    pub(crate) fn precise_note(&self) -> Option<String> {
        let (indexer, running) = self.precise.as_ref()?.running()?;
        Some(format!(
            "{} has been refining the edges for {} s: this answer is tree-sitter's where files \
             are not yet precise",
            indexer.name(),
            running.as_secs()
        ))
    }

    /// What each indexer of the precise tier did last (`status`); `None`: the tier is off.
    pub(crate) fn precise_report(
        &self,
    ) -> Option<std::collections::BTreeMap<cc_graph::Indexer, cc_graph::precise::IndexerRun>> {
        Some(self.precise.as_ref()?.report())
    }

    /// Whether a call has opened the index in this run.
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Runs `job` on the graph: opens it first when needed (progress to `progress`), then
    /// re-reads the files changed behind our back, all on the blocking pool.
    pub(crate) async fn with<T: Send + 'static>(
        self: &Arc<Self>,
        progress: Option<Arc<dyn ProgressSink>>,
        cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
        job: impl FnOnce(&mut Graph, &Checked) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let config = self
            .config
            .clone()
            .map_err(|broken| ToolError::new(ErrorKind::InvalidConfig, broken.to_string()))?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = this.state.lock().unwrap_or_else(|p| p.into_inner());
            let mut checked = Checked::default();
            if guard.is_none() {
                // Subscribed before the walk of the open: a change during it is seen next.
                *lock(&this.watching) = this
                    .root
                    .watcher()
                    .ok()
                    .map(|watcher| (watcher.clone(), watcher.subscribe()));
                let sink = progress.clone();
                let report: Option<cc_graph::ProgressFn> = sink.map(|sink| {
                    let f: cc_graph::ProgressFn = Arc::new(move |done, total| {
                        sink.report(
                            done as f64,
                            Some(total as f64),
                            Some(&format!("indexed {done} of {total} files")),
                        );
                    });
                    f
                });
                let (graph, stats) =
                    Graph::open_cancellable(this.root.path(), config, report, cancel).map_err(
                        |e| match e {
                            // The first build keeps what it read: the next call goes on.
                            cc_graph::GraphError::Cancelled { .. } => {
                                ToolError::new(ErrorKind::Cancelled, e.to_string())
                            }
                            other => ToolError::new(
                                ErrorKind::GraphIndex,
                                format!("the code graph could not be opened: {other}"),
                            ),
                        },
                    )?;
                checked.left_out = stats
                    .left_out_by_ignore
                    .as_ref()
                    .map(|left_out| crate::left_out::LeftOutReport::new(graph.root(), left_out));
                checked.opened = Some(stats);
                *guard = Some(graph);
                this.open.store(true, Ordering::Release);
                this.refine(std::time::Duration::ZERO);
            } else if let Some(graph) = guard.as_mut() {
                this.freshen(graph, &mut checked);
                if !checked.updated.is_empty() {
                    this.refine(cc_graph::precise::SETTLE);
                }
            }
            let Some(graph) = guard.as_mut() else {
                return Err(ToolError::new(ErrorKind::Internal, "the graph is not open"));
            };
            job(graph, &checked).map_err(|error| checked.note_on(error))
        })
        .await
        .map_err(|e| ToolError::new(ErrorKind::Internal, format!("the graph task failed: {e}")))?
    }

    /// Brings the open graph up to date with the disk: the files the watcher saw change, or
    /// every file when it cannot say.
    fn freshen(&self, graph: &mut Graph, checked: &mut Checked) {
        let watching = lock(&self.watching);
        let Some((watcher, subscription)) = watching.as_ref() else {
            drop(watching);
            self.stat_every_file(graph, checked);
            return;
        };
        watcher.flush();
        let changes = subscription.take();
        drop(watching);
        if let Some(gap) = changes.gap {
            checked.rescanned = Some(gap.describe());
            self.stat_every_file(graph, checked);
            return;
        }
        let root = graph.root().to_path_buf();
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut outside: Vec<String> = Vec::new();
        for change in changes.changes {
            let Some(rel) = change
                .path
                .strip_prefix(&root)
                .ok()
                .and_then(|r| r.to_str())
                .map(str::to_owned)
            else {
                continue;
            };
            if change.is_dir {
                // A folder gone (or renamed away) takes its indexed files with it; a new
                // one's files are listed one by one.
                if change.kind == ChangeKind::Removed {
                    match graph.files_under(&rel) {
                        Ok(files) => paths.extend(files.iter().map(|f| root.join(f))),
                        Err(e) => checked.error = Some(e.to_string()),
                    }
                }
                continue;
            }
            if !graph.indexes(&rel) {
                continue;
            }
            if change.outside {
                outside.push(rel);
            }
            paths.push(change.path);
        }
        if paths.is_empty() {
            graph.note_checked();
            return;
        }
        match graph.update(&paths) {
            Ok(_) => {
                checked.took_in(&root, outside);
                graph.note_checked();
            }
            Err(e) => {
                checked.error = Some(e.to_string());
                checked.stale = outside;
            }
        }
    }

    /// The stat check: every file compared with the index (no watcher, or it lost events).
    fn stat_every_file(&self, graph: &mut Graph, checked: &mut Checked) {
        match graph.stale_files() {
            Ok(stale) if !stale.is_empty() => match graph.update(&stale) {
                Ok(_) => checked.took_in(graph.root(), stale),
                Err(e) => {
                    checked.error = Some(e.to_string());
                    checked.stale = stale;
                }
            },
            Ok(_) => {}
            Err(e) => checked.error = Some(e.to_string()),
        }
    }

    /// The graph shared with those who lock it themselves, only if it is open (a caller
    /// never waits for the first build).
    pub(crate) fn shared_if_open(&self) -> Option<cc_graph::precise::SharedGraph> {
        self.is_open().then(|| self.state.clone())
    }

    /// Runs `job` on the graph only if it is open (no stat check, no opening): `None`
    /// otherwise.
    pub(crate) async fn if_open<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Graph) -> T + Send + 'static,
    ) -> Option<T> {
        if !self.is_open() {
            return None;
        }
        let state = self.state.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
            guard.as_mut().map(job)
        })
        .await
        .ok()
        .flatten()
    }

    /// Brings `paths` (absolute) up to date in the index, when it is open: what a writer
    /// calls before it returns. `None` when the index is not open (nothing to keep fresh).
    pub async fn update(
        self: &Arc<Self>,
        paths: &[PathBuf],
    ) -> Option<Result<UpdateStats, String>> {
        let paths = paths.to_vec();
        let result = self
            .if_open(move |graph| graph.update(&paths).map_err(|e| e.to_string()))
            .await;
        if matches!(result, Some(Ok(_))) {
            self.refine(cc_graph::precise::SETTLE);
        }
        result
    }

    /// [`GraphIndex::update`] for a caller on a blocking thread (a server's
    /// `workspace/applyEdit`).
    pub fn update_blocking(
        self: &Arc<Self>,
        paths: &[PathBuf],
    ) -> Option<Result<UpdateStats, String>> {
        if !self.is_open() {
            return None;
        }
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let result = guard
            .as_mut()
            .map(|graph| graph.update(paths).map_err(|e| e.to_string()));
        drop(guard);
        if matches!(result, Some(Ok(_))) {
            self.refine(cc_graph::precise::SETTLE);
        }
        result
    }

    pub(crate) fn root(&self) -> &WorkspaceRoot {
        &self.root
    }
}

pub(crate) fn index_error(error: cc_graph::GraphError) -> ToolError {
    match error {
        cc_graph::GraphError::UnknownSymbol(_) => {
            ToolError::new(ErrorKind::SymbolNotFound, error.to_string())
        }
        other => ToolError::new(ErrorKind::GraphIndex, other.to_string()),
    }
}

/// The run's after-write hook with the graph in front: written files are updated in the
/// index (when it is open) before the inner hook checks them, so the write's result and
/// every later call see the graph as the write left it.
pub struct GraphAfterWrite {
    graph: Arc<GraphIndex>,
    inner: Option<Arc<dyn AfterWrite>>,
}

impl std::fmt::Debug for GraphAfterWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphAfterWrite")
            .field("graph", &self.graph)
            .field("inner", &self.inner.is_some())
            .finish()
    }
}

impl GraphAfterWrite {
    /// `inner`: the diagnostics hook, if the run has one.
    pub fn new(graph: Arc<GraphIndex>, inner: Option<Arc<dyn AfterWrite>>) -> Self {
        GraphAfterWrite { graph, inner }
    }
}

#[async_trait]
impl AfterWrite for GraphAfterWrite {
    async fn before_write(&self, planned: &[PlannedWrite]) {
        if let Some(inner) = &self.inner {
            inner.before_write(planned).await;
        }
    }

    async fn renamed(&self, old: &str, new: &str) {
        if let Some(inner) = &self.inner {
            inner.renamed(old, new).await;
        }
    }

    async fn after_write(&self, paths: &[PathBuf]) -> WriteReport {
        let updated = self.graph.update(paths).await;
        let mut report = match &self.inner {
            Some(inner) => inner.after_write(paths).await,
            None => WriteReport::default(),
        };
        // A failed update is said, never silent: the next graph call re-reads the files.
        if let Some(Err(error)) = updated {
            report.graph_update_failed = Some(error);
        }
        report
    }
}

/// Registers `graph` on `builder` and returns the run's index (for the after-write hook
/// and the diagnostics' dependents).
pub fn register(
    builder: &mut crate::registry::RegistryBuilder,
    config: Result<GraphConfig, BrokenSection>,
) -> Arc<GraphIndex> {
    let root = builder.run().root.clone();
    let workspace_code = builder.run().surface.allows(crate::Tier::Write);
    let index = GraphIndex::new(root, config, workspace_code);
    builder.add_tool(Arc::new(GraphTool::new(index.clone())));
    index
}

#[cfg(test)]
mod tests;
