//! The precise tier's scheduler, for a host that keeps a [`Graph`] open across calls: the
//! indexers ([`super::run`]) run in the background once the index is open and again after
//! changes (debounced), never while an answer waits: an answer given meanwhile comes from
//! what is indexed, and can say which indexer is still refining it ([`PreciseTier::running`]).
//!
//! One pass at a time; a change during a pass asks for another. An indexer that failed for
//! one state of the tree is not run again for that state (its error is in
//! [`PreciseTier::report`]); the next change tries again. The pass holds the graph only to
//! plan and to import, never while an indexer runs, and holds it weakly: when the host drops
//! its graph, the pass ends (with the indexer's whole process group).
//!
//! ```no_run
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//! use cc_graph::precise::{PreciseTier, SharedGraph};
//! use cc_graph::PreciseOptions;
//!
//! # async fn example(graph: cc_graph::Graph) {
//! let shared: SharedGraph = Arc::new(Mutex::new(Some(graph)));
//! let tier = PreciseTier::new(PreciseOptions { enabled: true, workspace_code: false });
//! tier.kick(&shared, Duration::ZERO);
//! // … answer from `shared` meanwhile; after a write, kick again after the settle time.
//! tier.kick(&shared, cc_graph::precise::SETTLE);
//! for (indexer, run) in tier.report() {
//!     println!("{}", run.line(indexer));
//! }
//! # }
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use cc_process::lock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PreciseError, PreciseImport, PreciseOptions, PrecisePlan};
use crate::{Graph, Indexer};

/// A graph shared between a host's calls and the tier: `None` until it is opened (and after
/// it is closed).
pub type SharedGraph = Arc<Mutex<Option<Graph>>>;

/// How long a pass waits after a change before it plans (a burst of writes is one pass).
pub const SETTLE: Duration = Duration::from_millis(1500);

/// What the tier did last, per indexer.
#[derive(Debug, Clone)]
enum Outcome {
    Imported {
        import: PreciseImport,
        took: Duration,
        cached: bool,
    },
    Failed {
        key: String,
        error: PreciseError,
    },
}

/// After this many failed runs in a row, an indexer rests for [`REST`] before it is tried
/// again (a broken environment should not cost a run after every write).
const FAILURES_BEFORE_REST: u32 = 2;
const REST: Duration = Duration::from_secs(300);

#[derive(Debug, Default)]
struct State {
    /// Failed runs in a row, and when the last one ended, per indexer.
    failures: BTreeMap<Indexer, (u32, Instant)>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// A pass is under way or asked for (set by `kick`, cleared by the task as it ends, both
    /// under the lock, so no request falls between).
    active: bool,
    /// A change came while a pass ran: another pass follows it.
    again: bool,
    running: Option<(Indexer, Instant)>,
    outcomes: BTreeMap<Indexer, Outcome>,
}

/// The precise tier of one graph.
#[derive(Debug)]
pub struct PreciseTier {
    options: PreciseOptions,
    /// Shared with the pass's task, which holds the graph only weakly (so the host's end,
    /// dropping the graph, ends the pass and a running indexer).
    state: Arc<Mutex<State>>,
}

impl Drop for PreciseTier {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.state).task.take() {
            task.abort();
        }
    }
}

impl PreciseTier {
    /// A tier that has run nothing yet.
    pub fn new(options: PreciseOptions) -> Self {
        PreciseTier {
            options,
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// Asks for a pass `after` from now (at once when one is running: it goes again when
    /// done). Needs a tokio runtime; without one (a blocking caller outside it) nothing runs
    /// until the next call that has one.
    pub fn kick(&self, graph: &SharedGraph, after: Duration) {
        if !self.options.enabled {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut state = lock(&self.state);
        if state.active {
            state.again = true;
            return;
        }
        state.active = true;
        let weak = Arc::downgrade(graph);
        let shared = self.state.clone();
        let options = self.options.clone();
        state.task = Some(runtime.spawn(async move {
            tokio::time::sleep(after).await;
            loop {
                pass(&weak, &shared, &options).await;
                {
                    let mut state = lock(&shared);
                    state.active = std::mem::take(&mut state.again);
                    if !state.active {
                        return;
                    }
                }
                tokio::time::sleep(SETTLE).await;
            }
        }));
    }

    /// The indexer running now, and for how long.
    pub fn running(&self) -> Option<(Indexer, Duration)> {
        lock(&self.state)
            .running
            .map(|(indexer, since)| (indexer, since.elapsed()))
    }

    /// Each indexer's last outcome, as `status` shows it.
    pub fn report(&self) -> BTreeMap<Indexer, IndexerRun> {
        let state = lock(&self.state);
        let mut out = BTreeMap::new();
        for (indexer, outcome) in &state.outcomes {
            let run = match outcome {
                Outcome::Imported {
                    import,
                    took,
                    cached,
                } => IndexerRun::Imported {
                    files: import.files,
                    edges: import.edges,
                    dispatch: import.dispatch,
                    no_edge: import.no_edge,
                    took_ms: took.as_millis() as u64,
                    from_cache: *cached,
                },
                Outcome::Failed { error, .. } => {
                    let reason = error.to_string();
                    match error {
                        PreciseError::Missing { .. } => IndexerRun::Missing { reason },
                        PreciseError::Skipped { .. } => IndexerRun::Skipped { reason },
                        _ => IndexerRun::Failed { reason },
                    }
                }
            };
            out.insert(*indexer, run);
        }
        if let Some((indexer, since)) = state.running {
            out.insert(
                indexer,
                IndexerRun::Running {
                    for_ms: since.elapsed().as_millis() as u64,
                },
            );
        }
        out
    }
}

/// Runs `job` on the graph, off the async threads, if the host still has it and it is open.
async fn if_open<T: Send + 'static>(
    weak: &Weak<Mutex<Option<Graph>>>,
    job: impl FnOnce(&mut Graph) -> T + Send + 'static,
) -> Option<T> {
    let graph = weak.upgrade()?;
    tokio::task::spawn_blocking(move || lock(&graph).as_mut().map(job))
        .await
        .ok()
        .flatten()
}

/// One pass: every indexer whose output is not current for the tree as indexed, one after
/// the other. The graph is held only while planning and importing.
async fn pass(weak: &Weak<Mutex<Option<Graph>>>, shared: &Mutex<State>, options: &PreciseOptions) {
    let options = options.clone();
    let plans = if_open(weak, move |g| g.precise_plans(&options)).await;
    let Some(Ok(plans)) = plans else { return };
    for plan in plans {
        let resting = {
            let state = lock(shared);
            let failed_here = matches!(
                state.outcomes.get(&plan.indexer),
                Some(Outcome::Failed { key, .. }) if *key == plan.key
            );
            let tired = state
                .failures
                .get(&plan.indexer)
                .is_some_and(|(n, at)| *n >= FAILURES_BEFORE_REST && at.elapsed() < REST);
            failed_here || tired
        };
        if plan.current || resting {
            continue;
        }
        let started = Instant::now();
        lock(shared).running = Some((plan.indexer, started));
        let cached = plan.cached();
        let output = if cached {
            Ok(plan.output.clone())
        } else {
            super::run(&plan).await
        };
        let outcome = match output {
            Ok(path) => import(weak, plan.clone(), path, started, cached).await,
            Err(error) => Outcome::Failed {
                key: plan.key.clone(),
                error,
            },
        };
        let mut state = lock(shared);
        state.running = None;
        match &outcome {
            // Not run here by choice: no failure.
            Outcome::Failed {
                error: PreciseError::Skipped { .. },
                ..
            } => {}
            Outcome::Failed { .. } => {
                let entry = state
                    .failures
                    .entry(plan.indexer)
                    .or_insert((0, Instant::now()));
                *entry = (entry.0 + 1, Instant::now());
            }
            Outcome::Imported { .. } => {
                state.failures.remove(&plan.indexer);
            }
        }
        state.outcomes.insert(plan.indexer, outcome);
    }
}

async fn import(
    weak: &Weak<Mutex<Option<Graph>>>,
    plan: PrecisePlan,
    path: std::path::PathBuf,
    started: Instant,
    cached: bool,
) -> Outcome {
    let failed = |message: String| Outcome::Failed {
        key: plan.key.clone(),
        error: PreciseError::Io {
            indexer: plan.indexer.name(),
            message,
        },
    };
    // Parsed before the graph is taken: the lock is held only to write.
    let read_plan = plan.clone();
    let output =
        match tokio::task::spawn_blocking(move || super::read_output(&read_plan, &path)).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return failed(e.to_string()),
            Err(e) => return failed(e.to_string()),
        };
    let for_import = plan.clone();
    match if_open(weak, move |g| g.import_precise(&for_import, &output)).await {
        Some(Ok(import)) => Outcome::Imported {
            import,
            took: started.elapsed(),
            cached,
        },
        Some(Err(e)) => failed(e.to_string()),
        None => failed("the graph was closed".into()),
    }
}

/// What one indexer did last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum IndexerRun {
    /// Its output is imported.
    Imported {
        /// Files made precise.
        files: usize,
        /// Edges it named.
        edges: usize,
        /// Dispatch edges from what it relates.
        dispatch: usize,
        /// References it said name nothing in the workspace.
        no_edge: usize,
        /// How long the run (or the cache's import) took.
        took_ms: u64,
        /// Whether the output came from its cache.
        from_cache: bool,
    },
    /// It is not installed.
    Missing {
        /// Why, and what to install.
        reason: String,
    },
    /// It does not run here.
    Skipped {
        /// Why.
        reason: String,
    },
    /// It failed.
    Failed {
        /// Why.
        reason: String,
    },
    /// It is running now.
    Running {
        /// For how long.
        for_ms: u64,
    },
}

impl IndexerRun {
    /// One line of a status: what `indexer` did last.
    pub fn line(&self, indexer: Indexer) -> String {
        let name = indexer.name();
        match self {
            IndexerRun::Imported {
                files,
                edges,
                dispatch,
                no_edge,
                took_ms,
                from_cache,
            } => format!(
                "{name}: {files} file(s) precise, {edges} edge(s), {dispatch} dispatch, \
                 {no_edge} with no workspace definition ({} in {took_ms} ms)",
                if *from_cache {
                    "from its cache"
                } else {
                    "indexed"
                },
            ),
            IndexerRun::Missing { reason }
            | IndexerRun::Skipped { reason }
            | IndexerRun::Failed { reason } => format!("{name}: {reason}"),
            IndexerRun::Running { for_ms } => format!(
                "{name}: running for {} s (answers come from tree-sitter's edges meanwhile)",
                for_ms / 1000
            ),
        }
    }
}
