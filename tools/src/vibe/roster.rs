//! The run's workers and their lifecycle.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How capable (and costly) a worker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkerTier {
    /// Mechanical work with a clear description.
    #[default]
    Fast,
    /// Design, judgement, or reviewing what a fast worker produced.
    Good,
}

impl WorkerTier {
    /// `fast` or `good`.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerTier::Fast => "fast",
            WorkerTier::Good => "good",
        }
    }
}

/// Runs one brief to completion.
#[async_trait]
pub trait WorkerBackend: Send + Sync {
    /// Runs `brief` on a worker of `tier`; the result text, or why it failed. Dropping the
    /// future must stop the work (kill its processes).
    async fn run(&self, tier: WorkerTier, brief: &str) -> Result<String, String>;

    /// Whether this backend has a worker of `tier` at all.
    fn supports(&self, tier: WorkerTier) -> bool;
}

/// Where a worker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkerState {
    /// Working on its brief.
    Running,
    /// Finished; `last_result` holds its output.
    Done,
    /// Its run failed (crashed, non-zero exit); `last_error` says how.
    Failed,
    /// Stopped by `vibe_kill` or the end of the run.
    Killed,
}

impl WorkerState {
    /// Whether the worker has settled (anything but running).
    pub fn settled(self) -> bool {
        self != WorkerState::Running
    }
}

/// A worker as the agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkerSnapshot {
    /// Its id (`w1`, …).
    pub worker_id: String,
    /// The agent's label.
    pub label: String,
    /// `fast` or `good`.
    pub tier: WorkerTier,
    /// Where it is.
    pub state: WorkerState,
    /// Seconds since its current run started (until it settled).
    pub elapsed_seconds: f64,
    /// How many times it has been run (1 + number of `vibe_send`s).
    pub runs: u32,
    /// The output of its last finished run.
    pub last_result: Option<String>,
    /// Why its last run failed.
    pub last_error: Option<String>,
}

struct Worker {
    label: String,
    tier: WorkerTier,
    brief: String,
    state: WorkerState,
    started: Instant,
    finished: Option<Instant>,
    runs: u32,
    last_result: Option<String>,
    last_error: Option<String>,
    task: Option<JoinHandle<()>>,
    changes: watch::Sender<u32>,
}

impl Worker {
    fn snapshot(&self, id: &str) -> WorkerSnapshot {
        let end = self.finished.unwrap_or_else(Instant::now);
        WorkerSnapshot {
            worker_id: id.to_owned(),
            label: self.label.clone(),
            tier: self.tier,
            state: self.state,
            elapsed_seconds: (end - self.started).as_secs_f64(),
            runs: self.runs,
            last_result: self.last_result.clone(),
            last_error: self.last_error.clone(),
        }
    }
}

/// The workers of one run.
pub struct Roster {
    backend: Arc<dyn WorkerBackend>,
    workers: Mutex<BTreeMap<String, Worker>>,
    next_id: Mutex<u32>,
}

impl std::fmt::Debug for Roster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Roster").finish_non_exhaustive()
    }
}

/// Why a roster operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RosterError {
    /// No worker has that id.
    #[error("no worker `{0}` in this run; vibe_list shows the workers")]
    UnknownWorker(String),
    /// The backend has no worker of that tier.
    #[error("no `{0}` worker is configured for this run")]
    TierUnavailable(&'static str),
}

impl Roster {
    /// A roster whose workers run on `backend`.
    pub fn new(backend: Arc<dyn WorkerBackend>) -> Arc<Self> {
        Arc::new(Roster {
            backend,
            workers: Mutex::new(BTreeMap::new()),
            next_id: Mutex::new(0),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Worker>> {
        cc_process::lock(&self.workers)
    }

    /// Starts a worker on `brief` and returns at once.
    pub fn spawn(
        self: &Arc<Self>,
        brief: String,
        label: String,
        tier: WorkerTier,
    ) -> Result<WorkerSnapshot, RosterError> {
        if !self.backend.supports(tier) {
            return Err(RosterError::TierUnavailable(tier.as_str()));
        }
        let id = {
            let mut next = cc_process::lock(&self.next_id);
            *next += 1;
            format!("w{next}")
        };
        let (changes, _) = watch::channel(0);
        let worker = Worker {
            label,
            tier,
            brief,
            state: WorkerState::Running,
            started: Instant::now(),
            finished: None,
            runs: 0,
            last_result: None,
            last_error: None,
            task: None,
            changes,
        };
        let mut workers = self.lock();
        workers.insert(id.clone(), worker);
        self.start_run(&mut workers, &id);
        Ok(workers[&id].snapshot(&id))
    }

    /// Appends `message` to the worker's brief and runs it again (stopping a current run).
    pub fn send(self: &Arc<Self>, id: &str, message: &str) -> Result<WorkerSnapshot, RosterError> {
        let mut workers = self.lock();
        let worker = workers
            .get_mut(id)
            .ok_or_else(|| RosterError::UnknownWorker(id.to_owned()))?;
        if let Some(task) = worker.task.take() {
            task.abort();
        }
        worker.brief.push_str("\n\n");
        worker.brief.push_str(message);
        self.start_run(&mut workers, id);
        Ok(workers[id].snapshot(id))
    }

    fn start_run(self: &Arc<Self>, workers: &mut BTreeMap<String, Worker>, id: &str) {
        let Some(worker) = workers.get_mut(id) else {
            return;
        };
        worker.runs += 1;
        worker.state = WorkerState::Running;
        worker.started = Instant::now();
        worker.finished = None;
        let run_number = worker.runs;
        let (tier, brief) = (worker.tier, worker.brief.clone());
        let roster = Arc::downgrade(self);
        let backend = self.backend.clone();
        let id = id.to_owned();
        worker.task = Some(tokio::spawn(async move {
            let outcome = backend.run(tier, &brief).await;
            if let Some(roster) = roster.upgrade() {
                roster.finish(&id, run_number, outcome);
            }
        }));
        worker.changes.send_replace(run_number);
    }

    fn finish(&self, id: &str, run_number: u32, outcome: Result<String, String>) {
        let mut workers = self.lock();
        let Some(worker) = workers.get_mut(id) else {
            return;
        };
        // A rerun or kill superseded this run: its outcome no longer describes the worker.
        if worker.runs != run_number || worker.state != WorkerState::Running {
            return;
        }
        worker.finished = Some(Instant::now());
        worker.task = None;
        match outcome {
            Ok(result) => {
                worker.state = WorkerState::Done;
                worker.last_result = Some(result);
                worker.last_error = None;
            }
            Err(error) => {
                worker.state = WorkerState::Failed;
                worker.last_error = Some(error);
            }
        }
        worker.changes.send_modify(|version| *version += 1);
    }

    /// Waits until the worker settles or `timeout` passes; either way returns its state.
    pub async fn wait(&self, id: &str, timeout: Duration) -> Result<WorkerSnapshot, RosterError> {
        let mut changes = {
            let workers = self.lock();
            let worker = workers
                .get(id)
                .ok_or_else(|| RosterError::UnknownWorker(id.to_owned()))?;
            worker.changes.subscribe()
        };
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            {
                let workers = self.lock();
                let worker = workers
                    .get(id)
                    .ok_or_else(|| RosterError::UnknownWorker(id.to_owned()))?;
                if worker.state.settled() {
                    return Ok(worker.snapshot(id));
                }
            }
            let changed = tokio::time::timeout_at(deadline, changes.changed()).await;
            if !matches!(changed, Ok(Ok(()))) {
                let workers = self.lock();
                return workers
                    .get(id)
                    .map(|worker| worker.snapshot(id))
                    .ok_or_else(|| RosterError::UnknownWorker(id.to_owned()));
            }
        }
    }

    /// Stops a worker (its processes are killed).
    pub fn kill(&self, id: &str) -> Result<WorkerSnapshot, RosterError> {
        let mut workers = self.lock();
        let worker = workers
            .get_mut(id)
            .ok_or_else(|| RosterError::UnknownWorker(id.to_owned()))?;
        if let Some(task) = worker.task.take() {
            task.abort();
        }
        if worker.state == WorkerState::Running {
            worker.state = WorkerState::Killed;
            worker.finished = Some(Instant::now());
        }
        worker.changes.send_modify(|version| *version += 1);
        Ok(worker.snapshot(id))
    }

    /// Every worker, in spawn order.
    pub fn list(&self) -> Vec<WorkerSnapshot> {
        let workers = self.lock();
        let mut snapshots: Vec<WorkerSnapshot> = workers
            .iter()
            .map(|(id, worker)| worker.snapshot(id))
            .collect();
        snapshots.sort_by_key(|snapshot| {
            snapshot
                .worker_id
                .trim_start_matches('w')
                .parse::<u32>()
                .unwrap_or(u32::MAX)
        });
        snapshots
    }

    /// Stops every worker (the run ended) and waits briefly for their runs to unwind.
    pub async fn kill_all(&self) {
        let tasks: Vec<JoinHandle<()>> = {
            let mut workers = self.lock();
            workers
                .values_mut()
                .filter_map(|worker| {
                    if worker.state == WorkerState::Running {
                        worker.state = WorkerState::Killed;
                        worker.finished = Some(Instant::now());
                    }
                    worker.task.take()
                })
                .collect()
        };
        for task in tasks {
            task.abort();
            // Awaiting the aborted task guarantees its future (and its child) was dropped.
            let _ = task.await;
        }
    }
}

#[async_trait]
impl crate::registry::Shutdown for Roster {
    async fn shutdown(&self) {
        self.kill_all().await;
    }
}
