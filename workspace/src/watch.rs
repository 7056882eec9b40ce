//! One watcher over a workspace: what the shell, git, formatters and generators change behind
//! the run, seen as it happens and paid for by what changed, never by a walk of the tree.
//!
//! [`TreeWatcher::start`] watches every folder the workspace walk ([`crate::walk::Walk`])
//! would enter — hidden, ignored, dependency and generated folders are never watched — with
//! one non-recursive inotify watch each (the `notify` crate). Folders created later are
//! watched when they appear, and what was written into them before the watch took hold is
//! found by walking the new folder alone.
//!
//! Every mechanism that holds a view of the tree takes a [`Subscription`]: its own record of
//! what changed since it last looked, merged per path (created, changed, removed), so a
//! mechanism that looks rarely still sees every change once. Events are debounced (a burst
//! such as `git checkout` becomes one batch) and [`TreeWatcher::flush`] is a barrier: when it
//! returns, every change made before it was called is in every subscription (it writes a file
//! in a private folder watched by the same inotify instance, whose queue is ordered).
//!
//! A change carries whether it came from outside the run: a writer that goes through the run
//! first says what it is about to write ([`TreeWatcher::expect`]), and a change whose bytes on
//! disk are exactly those is the run's own.
//!
//! When the watcher cannot say exactly what changed, a subscription carries a [`Gap`] and its
//! owner must check everything it holds: the kernel's queue (or ours, bounded by
//! [`WatchOptions::queue`]) overflowed, a subscription grew past [`WatchOptions::max_paths`],
//! an ignore file changed, or the tree has more folders than inotify may watch
//! (`fs.inotify.max_user_watches`). The last is permanent ([`Gap::Degraded`]): every look is a
//! gap, so owners fall back to checking what they hold, and [`TreeWatcher::status`] says why.
//!
//! ```
//! use cc_workspace::watch::{ChangeKind, TreeWatcher, WatchOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let watcher = TreeWatcher::start(dir.path(), WatchOptions::default())?;
//! let graph = watcher.subscribe();
//! std::fs::write(dir.path().join("new.py"), "x = 1\n")?;
//! watcher.flush();
//! let changes = graph.take();
//! assert!(changes.gap.is_none());
//! assert_eq!(changes.changes[0].kind, ChangeKind::Created);
//! assert!(changes.changes[0].outside);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{RecursiveMode, Watcher as _};

use crate::walk::{IgnoreRules, Walk, GENERATED_MARKERS, SKIPPED_DIRS};

/// Files larger than this are not hashed to tell the run's own writes from others': a change
/// to one counts as outside.
const MAX_HASHED_BYTES: u64 = 16 * 1024 * 1024;

/// How long [`TreeWatcher::flush`] waits for its barrier before it gives up.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// Knobs of a [`TreeWatcher`].
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Events closer together than this are one batch (default 30 ms).
    pub debounce: Duration,
    /// Events buffered between the kernel's reader and the collector; past it the batch is a
    /// [`Gap::Overflow`] (default 65,536).
    pub queue: usize,
    /// Distinct paths one subscription keeps before it becomes a [`Gap::Compacted`] (default
    /// 200,000).
    pub max_paths: usize,
    /// Folders watched at most (default: as many as the kernel allows). A tree with more is
    /// watched as when `fs.inotify.max_user_watches` is too low: [`Gap::Degraded`].
    pub max_watches: Option<usize>,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: Duration::from_millis(30),
            queue: 65_536,
            max_paths: 200_000,
            max_watches: None,
        }
    }
}

/// What happened to a path, net, since the subscription last looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// It did not exist before (or was deleted and created again).
    Created,
    /// Its content changed.
    Changed,
    /// It is gone.
    Removed,
}

impl ChangeKind {
    /// `created`, `changed` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Changed => "changed",
            ChangeKind::Removed => "removed",
        }
    }

    /// The net effect of `self` followed by `later`.
    fn then(self, later: ChangeKind) -> ChangeKind {
        match (self, later) {
            (ChangeKind::Created, ChangeKind::Changed) => ChangeKind::Created,
            (ChangeKind::Removed, ChangeKind::Changed) => ChangeKind::Created,
            (_, later) => later,
        }
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Absolute, under the root.
    pub path: PathBuf,
    /// What happened to it.
    pub kind: ChangeKind,
    /// A folder (created: its files are listed too; removed: everything under it is gone).
    pub is_dir: bool,
    /// Not written by the run (its bytes are not what a writer announced with
    /// [`TreeWatcher::expect`]).
    pub outside: bool,
}

/// Why a subscription cannot say exactly what changed: its owner must check all it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// The kernel's event queue, or the watcher's own, overflowed.
    Overflow,
    /// More distinct paths changed than a subscription keeps.
    Compacted,
    /// An ignore file (`.gitignore`, `.ignore`) changed: which files belong to the tree did.
    IgnoreRules,
    /// A new folder changed again while it was being listed (a folder flipped into a
    /// symlink, a tree removed as it was created): what it holds was not all seen.
    Interrupted,
    /// The tree cannot be watched (too many folders for inotify, or no watcher at all).
    Degraded(String),
}

impl Gap {
    /// One sentence for the agent.
    pub fn describe(&self) -> String {
        match self {
            Gap::Overflow => {
                "the file watcher's event queue overflowed, so every file was checked again".into()
            }
            Gap::Compacted => {
                "more files changed than the watcher lists, so every file was checked again".into()
            }
            Gap::IgnoreRules => "an ignore file changed, so every file was checked again".into(),
            Gap::Interrupted => "a new folder changed while it was being listed, so every file \
                                 was checked again"
                .into(),
            Gap::Degraded(why) => {
                format!("the tree is not watched ({why}), so every file was checked")
            }
        }
    }
}

/// What a subscription saw since it last looked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Every changed path, sorted.
    pub changes: Vec<Change>,
    /// Set when the list cannot be trusted to be complete.
    pub gap: Option<Gap>,
}

impl Changes {
    /// Whether nothing changed and nothing was lost.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.gap.is_none()
    }

    /// The changes made outside the run.
    pub fn outside(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.outside)
    }
}

/// How the watcher is doing, for `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchStatus {
    /// Folders watched.
    pub dirs: usize,
    /// Batches of changes seen.
    pub batches: u64,
    /// Paths seen changed (all batches).
    pub paths_seen: u64,
    /// Times the event queue overflowed.
    pub overflows: u64,
    /// Set when the tree is not (fully) watched, with why.
    pub degraded: Option<String>,
    /// The kernel's `fs.inotify.max_user_watches`, when readable.
    pub max_user_watches: Option<u64>,
}

/// What one subscriber has not seen yet.
#[derive(Debug, Default)]
struct Pending {
    changes: HashMap<PathBuf, Change>,
    /// Paths whose pending `Created` is known to have been absent when the subscriber last
    /// looked (its first event was a creation), and that the run never wrote: gone again,
    /// they changed nothing its owner can know of. A path the run wrote is never one (an
    /// owner may have learned of it from the write itself, as the graph indexes what the run
    /// writes), so its removal is always handed out.
    born: HashSet<PathBuf>,
    gap: Option<Gap>,
}

impl Pending {
    /// Adds one batch, merged per path. A path born since the last look and gone again is
    /// dropped: `sed -i`'s temporary file, when a batch boundary falls between its creation
    /// and its rename, is no change.
    fn add(&mut self, batch: &[Fresh]) {
        for fresh in batch {
            let change = &fresh.change;
            let Some(earlier) = self.changes.get_mut(&change.path) else {
                self.changes.insert(change.path.clone(), change.clone());
                if fresh.born && !fresh.run_wrote {
                    self.born.insert(change.path.clone());
                }
                continue;
            };
            // A folder keeps its removal: it says that everything under it is gone.
            if change.kind == ChangeKind::Removed
                && !change.is_dir
                && !earlier.is_dir
                && !fresh.run_wrote
                && self.born.remove(&change.path)
            {
                self.changes.remove(&change.path);
                continue;
            }
            earlier.kind = earlier.kind.then(change.kind);
            earlier.is_dir = change.is_dir;
            earlier.outside |= change.outside;
            if earlier.kind != ChangeKind::Created || fresh.run_wrote {
                self.born.remove(&change.path);
            }
        }
    }
}

/// A change of the batch being handed out, with whether its path is new since the batch
/// before (its first event created it) and whether the run ever announced a write to it.
#[derive(Debug, Clone)]
struct Fresh {
    change: Change,
    born: bool,
    run_wrote: bool,
}

/// One mechanism's view of the changes: see [`TreeWatcher::subscribe`].
#[derive(Debug)]
pub struct Subscription {
    pending: Arc<Mutex<Pending>>,
    shared: Arc<Shared>,
}

impl Subscription {
    /// Everything that changed since the last `take` (or since subscribing), and clears it.
    /// While the watcher is degraded every take is a [`Gap::Degraded`].
    pub fn take(&self) -> Changes {
        let mut pending = lock(&self.pending);
        let mut changes: Vec<Change> = pending.changes.drain().map(|(_, c)| c).collect();
        pending.born.clear();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        let mut gap = pending.gap.take();
        drop(pending);
        if let Some(why) = lock(&self.shared.state).degraded.clone() {
            gap = Some(Gap::Degraded(why));
        }
        Changes { changes, gap }
    }

    /// Calls `wake` (on the watcher's thread; keep it short) after every batch this
    /// subscription receives.
    pub fn on_change(&self, wake: impl Fn() + Send + Sync + 'static) {
        let mut subscribers = lock(&self.shared.subscribers);
        for subscriber in subscribers.iter_mut() {
            if subscriber
                .pending
                .upgrade()
                .is_some_and(|p| Arc::ptr_eq(&p, &self.pending))
            {
                subscriber.wake = Some(Arc::new(wake));
                return;
            }
        }
    }
}

struct Subscriber {
    pending: Weak<Mutex<Pending>>,
    wake: Option<Arc<dyn Fn() + Send + Sync>>,
}

#[derive(Debug, Default)]
struct State {
    dirs: usize,
    batches: u64,
    paths_seen: u64,
    overflows: u64,
    degraded: Option<String>,
    /// The last barrier the collector has passed.
    barrier_seen: u64,
    stopped: bool,
}

/// What a writer of the run announced for a path: the hash of the bytes it will hold (`None`:
/// it will be gone).
type Announced = Option<u64>;

/// What the watcher's threads share.
struct Shared {
    root: PathBuf,
    options: WatchOptions,
    state: Mutex<State>,
    barrier_passed: Condvar,
    subscribers: Mutex<Vec<Subscriber>>,
    /// What writers of the run announced, per path.
    expected: Mutex<HashMap<PathBuf, Announced>>,
    /// Set by the kernel reader when the queue to the collector is full.
    overflowed: AtomicBool,
    /// The last barrier file `flush` has written: an overflow may drop its event, and the
    /// gap the overflow commits covers it.
    barrier_written: AtomicU64,
    stop: AtomicBool,
}

impl Shared {
    fn new(root: PathBuf, options: WatchOptions) -> Shared {
        Shared {
            root,
            options,
            state: Mutex::new(State::default()),
            barrier_passed: Condvar::new(),
            subscribers: Mutex::new(Vec::new()),
            expected: Mutex::new(HashMap::new()),
            overflowed: AtomicBool::new(false),
            barrier_written: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        }
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

enum Message {
    Event(notify::Event),
    Error(notify::Error),
}

/// Why a watcher could not start at all.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The root is not a folder that can be read.
    #[error("cannot watch {}: {source}", .path.display())]
    Root {
        /// The root.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The platform's watcher (inotify) refused to start.
    #[error("the file watcher could not start: {0}")]
    Notify(String),
}

/// The watcher of one workspace; stops when dropped. See the module docs.
pub struct TreeWatcher {
    shared: Arc<Shared>,
    notify: Arc<Mutex<Option<notify::RecommendedWatcher>>>,
    collector: Mutex<Option<JoinHandle<()>>>,
    barrier_dir: tempfile::TempDir,
    barriers: AtomicU64,
}

impl std::fmt::Debug for TreeWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeWatcher")
            .field("root", &self.shared.root)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn content_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

impl TreeWatcher {
    /// Watches the tree at `root` (canonicalized) with `options`. A tree with more folders
    /// than may be watched does not fail: the watcher starts degraded and says why.
    pub fn start(root: &Path, options: WatchOptions) -> Result<TreeWatcher, WatchError> {
        let root = root.canonicalize().map_err(|source| WatchError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        let barrier_dir = tempfile::Builder::new()
            .prefix("cc-watch-")
            .tempdir()
            .map_err(|source| WatchError::Root {
                path: std::env::temp_dir(),
                source,
            })?;
        let shared = Arc::new(Shared::new(root.clone(), options.clone()));
        let (sender, receiver) = std::sync::mpsc::sync_channel(options.queue.max(1));
        let reader_shared = shared.clone();
        let handler = move |event: notify::Result<notify::Event>| {
            reader_handle(&reader_shared, &sender, event);
        };
        let watcher = notify::recommended_watcher(handler)
            .map_err(|error| WatchError::Notify(error.to_string()))?;
        let notify = Arc::new(Mutex::new(Some(watcher)));
        let barrier_path = barrier_dir.path().to_path_buf();
        if let Some(watcher) = lock(&notify).as_mut() {
            watcher
                .watch(&barrier_path, RecursiveMode::NonRecursive)
                .map_err(|error| WatchError::Notify(error.to_string()))?;
        }
        let mut collector = Collector {
            shared: shared.clone(),
            notify: notify.clone(),
            barrier_dir: barrier_path,
            watched: HashSet::new(),
            rules: IgnoreRules::default(),
            pending: HashMap::new(),
            gap: None,
        };
        collector.watch_tree(&root, false);
        let handle = std::thread::Builder::new()
            .name("cc-watch".into())
            .spawn(move || {
                let shared = collector.shared.clone();
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    collector.run(receiver)
                }));
                if ran.is_err() {
                    // Never a silent stop: every later look is a full check, said as such,
                    // and no flush waits for a collector that is gone.
                    let mut state = lock(&shared.state);
                    state.degraded = Some("the file watcher stopped on an internal error".into());
                    state.stopped = true;
                    shared.barrier_passed.notify_all();
                }
            })
            .map_err(|error| WatchError::Notify(error.to_string()))?;
        Ok(TreeWatcher {
            shared,
            notify,
            collector: Mutex::new(Some(handle)),
            barrier_dir,
            barriers: AtomicU64::new(0),
        })
    }

    /// The root watched.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// A new view of the changes, empty now; every later batch is added to it.
    pub fn subscribe(&self) -> Subscription {
        let pending = Arc::new(Mutex::new(Pending::default()));
        lock(&self.shared.subscribers).push(Subscriber {
            pending: Arc::downgrade(&pending),
            wake: None,
        });
        Subscription {
            pending,
            shared: self.shared.clone(),
        }
    }

    /// Says that the run is about to make `path` hold `content` (`None`: delete it), so the
    /// change it causes is not counted as outside.
    pub fn expect(&self, path: &Path, content: Option<&[u8]>) {
        let mut expected = lock(&self.shared.expected);
        // Bounded: an entry only matters until its change is seen.
        if expected.len() > 100_000 {
            expected.clear();
        }
        expected.insert(path.to_path_buf(), content.map(content_hash));
    }

    /// Waits until every change made before this call is in every subscription (at most a
    /// couple of seconds; `false` when the barrier did not come back in time, or the watcher
    /// is stopped or degraded, and then nothing is promised).
    pub fn flush(&self) -> bool {
        {
            let state = lock(&self.shared.state);
            if state.stopped || state.degraded.is_some() {
                return false;
            }
        }
        let n = self.barriers.fetch_add(1, Ordering::AcqRel) + 1;
        let file = self.barrier_dir.path().join(format!("b{n}"));
        if std::fs::write(&file, b"").is_err() {
            return false;
        }
        self.shared.barrier_written.fetch_max(n, Ordering::AcqRel);
        let deadline = Instant::now() + FLUSH_TIMEOUT;
        let mut state = lock(&self.shared.state);
        while state.barrier_seen < n && !state.stopped {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .shared
                .barrier_passed
                .wait_timeout(state, deadline - now)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        drop(state);
        let _ = std::fs::remove_file(&file);
        true
    }

    /// How the watcher is doing.
    pub fn status(&self) -> WatchStatus {
        let state = lock(&self.shared.state);
        WatchStatus {
            dirs: state.dirs,
            batches: state.batches,
            paths_seen: state.paths_seen,
            overflows: state.overflows,
            degraded: state.degraded.clone(),
            max_user_watches: max_user_watches(),
        }
    }

    /// Stops watching (also done on drop): the kernel watches are removed and the collector
    /// thread ends.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Release);
        // Dropping the notify watcher closes the inotify instance and its reader thread; the
        // collector sees its channel close.
        lock(&self.notify).take();
        if let Some(handle) = lock(&self.collector).take() {
            let _ = handle.join();
        }
        let mut state = lock(&self.shared.state);
        state.stopped = true;
        self.shared.barrier_passed.notify_all();
    }
}

impl Drop for TreeWatcher {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The kernel's per-user watch limit.
pub fn max_user_watches() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Runs on notify's thread: hands the event to the collector, never blocking.
fn reader_handle(
    shared: &Shared,
    sender: &SyncSender<Message>,
    event: notify::Result<notify::Event>,
) {
    let message = match event {
        Ok(event) => {
            // Reads (open, close after reading) change nothing.
            if let EventKind::Access(access) = event.kind {
                if access != AccessKind::Close(AccessMode::Write) {
                    return;
                }
            }
            if matches!(event.kind, EventKind::Modify(ModifyKind::Metadata(_))) {
                return;
            }
            Message::Event(event)
        }
        Err(error) => Message::Error(error),
    };
    match sender.try_send(message) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => shared.overflowed.store(true, Ordering::Release),
        Err(TrySendError::Disconnected(_)) => {}
    }
}

/// What one path did within the current batch.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    created: bool,
    /// The first event of the batch for the path created it: gone at the batch's end, it
    /// came and went in between (`sed -i`'s temporary file) and changed nothing.
    born: bool,
}

/// The collector thread: batches events, keeps the watches in step with the folders, and
/// hands each batch to every subscription.
struct Collector {
    shared: Arc<Shared>,
    notify: Arc<Mutex<Option<notify::RecommendedWatcher>>>,
    barrier_dir: PathBuf,
    watched: HashSet<PathBuf>,
    rules: IgnoreRules,
    pending: HashMap<PathBuf, Seen>,
    gap: Option<Gap>,
}

impl Collector {
    fn run(mut self, receiver: Receiver<Message>) {
        let debounce = self.shared.options.debounce;
        let mut last_event = Instant::now();
        let mut barrier = 0u64;
        loop {
            let wait = if self.pending.is_empty() && self.gap.is_none() {
                Duration::from_millis(250)
            } else {
                debounce.saturating_sub(last_event.elapsed())
            };
            match receiver.recv_timeout(wait) {
                Ok(Message::Event(event)) => {
                    if event.need_rescan() {
                        self.note_overflow(&mut barrier);
                    }
                    for path in &event.paths {
                        if path.parent() == Some(self.barrier_dir.as_path()) {
                            let n = path
                                .file_name()
                                .and_then(|n| n.to_str())
                                .and_then(|n| n.strip_prefix('b'))
                                .and_then(|n| n.parse::<u64>().ok())
                                .unwrap_or(0);
                            barrier = barrier.max(n);
                            continue;
                        }
                        if path.starts_with(&self.shared.root) {
                            let first = !self.pending.contains_key(path);
                            let seen = self.pending.entry(path.clone()).or_default();
                            if first {
                                seen.born = matches!(event.kind, EventKind::Create(_));
                            }
                            seen.created |= matches!(
                                event.kind,
                                EventKind::Create(_)
                                    | EventKind::Modify(ModifyKind::Name(
                                        notify::event::RenameMode::To
                                    ))
                            );
                        }
                    }
                    last_event = Instant::now();
                }
                Ok(Message::Error(error)) => {
                    if matches!(error.kind, notify::ErrorKind::MaxFilesWatch) {
                        self.degrade(format!(
                            "the kernel refused more inotify watches (fs.inotify.max_user_watches = {})",
                            max_user_watches().map_or_else(|| "?".into(), |n| n.to_string())
                        ));
                    }
                    // Other errors lose at most the events the next gap check covers.
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if self.shared.stop.load(Ordering::Acquire) {
                break;
            }
            if self.shared.overflowed.swap(false, Ordering::AcqRel) {
                self.note_overflow(&mut barrier);
            }
            let quiet = last_event.elapsed() >= debounce;
            if (quiet || barrier > 0) && (!self.pending.is_empty() || self.gap.is_some()) {
                self.commit();
            }
            if barrier > 0 {
                let mut state = lock(&self.shared.state);
                state.barrier_seen = state.barrier_seen.max(barrier);
                self.shared.barrier_passed.notify_all();
                barrier = 0;
            }
        }
        let mut state = lock(&self.shared.state);
        state.stopped = true;
        self.shared.barrier_passed.notify_all();
    }

    /// Events were lost, a barrier's among them perhaps: the gap committed next covers
    /// every change made so far, so it passes every barrier written so far.
    fn note_overflow(&mut self, barrier: &mut u64) {
        lock(&self.shared.state).overflows += 1;
        self.gap = Some(Gap::Overflow);
        *barrier = (*barrier).max(self.shared.barrier_written.load(Ordering::Acquire));
    }

    fn degrade(&mut self, why: String) {
        // Watching part of the tree would be silently stale for the rest: watch none of it.
        lock(&self.notify).take();
        self.watched.clear();
        let mut state = lock(&self.shared.state);
        state.dirs = 0;
        state.degraded.get_or_insert(why);
    }

    /// Watches `dir` and every folder under it that the workspace walk enters; returns the
    /// files found (for a folder that appeared after the watcher started, so what was written
    /// into it before its watch took hold is not missed).
    fn watch_tree(&mut self, dir: &Path, collect_files: bool) -> Vec<PathBuf> {
        let mut new_dirs = Vec::new();
        let walk = Walk::new(dir);
        let interrupted = walk.interrupted();
        for entry in walk.dirs() {
            // The walk's ignore files apply to what it enters; ours follow them.
            for name in [".gitignore", ".ignore"] {
                let file = entry.path.join(name);
                if file.is_file() {
                    self.rules.load(&file);
                }
            }
            new_dirs.push(entry.path);
        }
        for path in new_dirs {
            if self.watched.contains(&path) {
                continue;
            }
            if let Some(max) = self.shared.options.max_watches {
                if self.watched.len() >= max {
                    self.degrade(format!(
                        "the tree has more folders than the {max} this watcher may watch"
                    ));
                    return Vec::new();
                }
            }
            let result = match lock(&self.notify).as_mut() {
                Some(watcher) => watcher.watch(&path, RecursiveMode::NonRecursive),
                None => return Vec::new(),
            };
            match result {
                Ok(()) => {
                    self.watched.insert(path);
                }
                Err(error) if matches!(error.kind, notify::ErrorKind::MaxFilesWatch) => {
                    self.degrade(format!(
                        "the tree has more folders than fs.inotify.max_user_watches ({}) allows; \
                         raise it (sysctl fs.inotify.max_user_watches=524288)",
                        max_user_watches().map_or_else(|| "?".into(), |n| n.to_string())
                    ));
                    return Vec::new();
                }
                // Gone again, or unreadable: nothing to watch there.
                Err(_) => {}
            }
        }
        lock(&self.shared.state).dirs = self.watched.len();
        // Listed only once the watches hold: a file written meanwhile is either listed here
        // or seen by its watch (both is harmless).
        let files = if collect_files {
            let walk = Walk::new(dir);
            let files_interrupted = walk.interrupted();
            let files = walk.files().map(|entry| entry.path).collect();
            if files_interrupted.load(Ordering::Acquire) {
                interrupted.store(true, Ordering::Release);
            }
            files
        } else {
            Vec::new()
        };
        if interrupted.load(Ordering::Acquire) && self.gap.is_none() {
            self.gap = Some(Gap::Interrupted);
        }
        files
    }

    /// Whether the walk would enter `dir` (it is under the root, not hidden, skipped,
    /// generated or ignored).
    fn dir_allowed(&self, dir: &Path) -> bool {
        self.relevant(dir, true)
            && !GENERATED_MARKERS
                .iter()
                .any(|marker| dir.join(marker).exists())
    }

    /// Whether a change at `path` is part of the tree the walk sees.
    fn relevant(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(relative) = path.strip_prefix(&self.shared.root) else {
            return false;
        };
        let mut components = relative.components().peekable();
        while let Some(component) = components.next() {
            let name = component.as_os_str().to_string_lossy();
            if name.starts_with('.') {
                return false;
            }
            let last = components.peek().is_none();
            if (!last || is_dir) && SKIPPED_DIRS.contains(&name.as_ref()) {
                return false;
            }
        }
        !self.rules.ignored(&self.shared.root, path, is_dir)
    }

    /// Hands the batch to every subscription.
    fn commit(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let mut gap = self.gap.take();
        let mut batch: Vec<Fresh> = Vec::new();
        let mut paths: Vec<(PathBuf, Seen)> = pending.into_iter().collect();
        paths.sort_by(|a, b| a.0.cmp(&b.0));
        let degraded = lock(&self.shared.state).degraded.is_some();
        for (path, seen) in paths {
            if is_ignore_file(&path) && !path_hidden_above(&self.shared.root, &path) {
                self.rules.load(&path);
                gap = Some(Gap::IgnoreRules);
                continue;
            }
            self.changes_at(path, seen, degraded, &mut batch);
        }
        if batch.is_empty() && gap.is_none() {
            return;
        }
        {
            let mut state = lock(&self.shared.state);
            state.batches += 1;
            state.paths_seen += batch.len() as u64;
            state.dirs = self.watched.len();
        }
        self.hand_out(&batch, gap);
    }

    /// What one path of the batch changed, as the disk says now.
    fn changes_at(&mut self, path: PathBuf, seen: Seen, degraded: bool, batch: &mut Vec<Fresh>) {
        let metadata = std::fs::symlink_metadata(&path);
        let is_dir = metadata.as_ref().is_ok_and(|m| m.is_dir());
        let was_watched = self.watched.contains(&path);
        if !self.relevant(&path, is_dir || was_watched) {
            return;
        }
        let announced = self.announced(&path);
        let run_wrote = announced.is_some();
        match metadata {
            Ok(meta) if meta.is_dir() => {
                if degraded || was_watched || !self.dir_allowed(&path) {
                    return;
                }
                self.folder_created(path, seen, batch);
            }
            Ok(meta) => {
                if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                    if GENERATED_MARKERS.contains(&name) {
                        // The folder became generated (a build tree): it leaves the tree.
                        if let Some(parent) = path.parent() {
                            self.unwatch_under(parent);
                            batch.push(Fresh {
                                change: Change {
                                    path: parent.to_path_buf(),
                                    kind: ChangeKind::Removed,
                                    is_dir: true,
                                    outside: true,
                                },
                                born: false,
                                run_wrote: false,
                            });
                        }
                        return;
                    }
                }
                if !meta.is_file() {
                    return;
                }
                let outside = Self::outside(&path, announced);
                batch.push(Fresh {
                    change: Change {
                        path,
                        kind: if seen.created {
                            ChangeKind::Created
                        } else {
                            ChangeKind::Changed
                        },
                        is_dir: false,
                        outside,
                    },
                    born: seen.born,
                    run_wrote,
                });
            }
            // Created and gone within the batch, never written by the run: nothing changed
            // there that anyone can know of.
            Err(_) if seen.born && !was_watched && !run_wrote => {}
            Err(_) => {
                let is_dir = was_watched;
                if is_dir {
                    self.unwatch_under(&path);
                }
                let outside = is_dir || Self::outside(&path, announced);
                batch.push(Fresh {
                    change: Change {
                        path,
                        kind: ChangeKind::Removed,
                        is_dir,
                        outside,
                    },
                    born: false,
                    run_wrote,
                });
            }
        }
    }

    /// A folder that appeared: it is watched, and it and every file in it are created.
    fn folder_created(&mut self, path: PathBuf, seen: Seen, batch: &mut Vec<Fresh>) {
        batch.push(Fresh {
            change: Change {
                path: path.clone(),
                kind: ChangeKind::Created,
                is_dir: true,
                outside: true,
            },
            born: seen.born,
            run_wrote: false,
        });
        for file in self.watch_tree(&path, true) {
            let announced = self.announced(&file);
            let outside = Self::outside(&file, announced);
            let run_wrote = announced.is_some();
            // In a folder that was not there, a file was not there either.
            batch.push(Fresh {
                change: Change {
                    path: file,
                    kind: ChangeKind::Created,
                    is_dir: false,
                    outside,
                },
                born: seen.born,
                run_wrote,
            });
        }
    }

    /// Adds the batch (and the gap) to every live subscription's pending changes, and wakes
    /// them outside the lock.
    fn hand_out(&self, batch: &[Fresh], gap: Option<Gap>) {
        let max_paths = self.shared.options.max_paths;
        let mut wakes = Vec::new();
        let mut subscribers = lock(&self.shared.subscribers);
        subscribers.retain(|s| s.pending.strong_count() > 0);
        for subscriber in subscribers.iter() {
            let Some(pending) = subscriber.pending.upgrade() else {
                continue;
            };
            let mut pending = lock(&pending);
            if let Some(gap) = &gap {
                // A degraded state is reported by `take` itself.
                pending.gap.get_or_insert(gap.clone());
            }
            pending.add(batch);
            if pending.changes.len() > max_paths {
                pending.changes.clear();
                pending.born.clear();
                pending.gap = Some(Gap::Compacted);
            }
            if let Some(wake) = &subscriber.wake {
                wakes.push(wake.clone());
            }
        }
        drop(subscribers);
        for wake in wakes {
            wake();
        }
    }

    /// What the run last announced for `path` ([`TreeWatcher::expect`]): `None` when it never
    /// announced a write to it.
    fn announced(&self, path: &Path) -> Option<Announced> {
        lock(&self.shared.expected).get(path).copied()
    }

    /// Whether the bytes at `path` are not what a writer of the run `announced`.
    fn outside(path: &Path, announced: Option<Announced>) -> bool {
        let Some(expected) = announced else {
            return true;
        };
        let actual = match std::fs::metadata(path) {
            Ok(meta) if meta.len() <= MAX_HASHED_BYTES => {
                std::fs::read(path).ok().map(|bytes| content_hash(&bytes))
            }
            Ok(_) => return true,
            Err(_) => None,
        };
        actual != expected
    }

    fn unwatch_under(&mut self, dir: &Path) {
        let gone: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|p| p.starts_with(dir))
            .cloned()
            .collect();
        let mut notify = lock(&self.notify);
        for path in gone {
            if let Some(watcher) = notify.as_mut() {
                let _ = watcher.unwatch(&path);
            }
            self.watched.remove(&path);
        }
    }
}

fn is_ignore_file(path: &Path) -> bool {
    matches!(
        path.file_name().and_then(|n| n.to_str()),
        Some(".gitignore" | ".ignore")
    )
}

/// Whether a folder above `path` (inside the root) is hidden: its ignore file is not the
/// tree's.
fn path_hidden_above(root: &Path, path: &Path) -> bool {
    path.parent()
        .and_then(|parent| parent.strip_prefix(root).ok())
        .is_some_and(|rel| {
            rel.components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn watcher(dir: &Path) -> TreeWatcher {
        TreeWatcher::start(dir, WatchOptions::default()).unwrap()
    }

    fn kinds(changes: &Changes, root: &Path) -> Vec<(String, ChangeKind, bool)> {
        changes
            .changes
            .iter()
            .map(|c| {
                (
                    c.path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                    c.kind,
                    c.outside,
                )
            })
            .collect()
    }

    /// A storm of folder renames (a shell loop flipping a folder, a tool rewriting a tree)
    /// never stalls a flush: each returns well inside its timeout.
    #[test]
    fn a_storm_of_folder_renames_does_not_stall_flush() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join("race/deep/er")).unwrap();
        std::fs::write(root.join("race/secret.txt"), "inside").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("race_link")).unwrap();
        let watcher = watcher(&root);
        let stop = Arc::new(AtomicBool::new(false));
        // As the MCP adversarial client does: `race` is a folder, then a symlink out, and
        // back, while the watcher lists what it finds there.
        let flipper = {
            let (stop, root) = (stop.clone(), root.clone());
            std::thread::spawn(move || {
                let (race, real, link) = (
                    root.join("race"),
                    root.join("race_dir"),
                    root.join("race_link"),
                );
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::fs::rename(&race, &real);
                    let _ = std::fs::rename(&link, &race);
                    let _ = std::fs::rename(&race, &link);
                    let _ = std::fs::rename(&real, &race);
                }
            })
        };
        let mut slowest = Duration::ZERO;
        let started = Instant::now();
        for _ in 0..1000 {
            let one = Instant::now();
            watcher.flush();
            slowest = slowest.max(one.elapsed());
        }
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();
        eprintln!(
            "1000 flushes in {:?}, slowest {slowest:?}",
            started.elapsed()
        );
        // A stalled flush waits out its whole timeout; a loaded machine makes a healthy one
        // slow, never that slow (this is a hang check, not a speed measurement).
        assert!(
            slowest < FLUSH_TIMEOUT,
            "a flush took {slowest:?}, its whole timeout"
        );
        // The watcher is still there: a quiet tree flushes, and a change is seen (or, when
        // the storm's last events overflowed the queue, a gap that says to look again).
        let sub = watcher.subscribe();
        std::fs::write(root.join("after.py"), "x").unwrap();
        assert!(watcher.flush(), "{:?}", watcher.status());
        let taken = sub.take();
        assert!(
            taken.gap.is_some() || taken.changes.iter().any(|c| c.path.ends_with("after.py")),
            "{taken:?}"
        );
    }

    #[test]
    fn created_changed_removed_and_own_writes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "a").unwrap();
        std::fs::write(root.join("b.py"), "b").unwrap();
        let watcher = watcher(&root);
        let sub = watcher.subscribe();
        std::fs::write(root.join("a.py"), "a2").unwrap();
        std::fs::remove_file(root.join("b.py")).unwrap();
        std::fs::write(root.join("c.py"), "c").unwrap();
        watcher.expect(&root.join("d.py"), Some(b"mine"));
        std::fs::write(root.join("d.py"), "mine").unwrap();
        assert!(watcher.flush());
        let changes = sub.take();
        assert_eq!(changes.gap, None);
        assert_eq!(
            kinds(&changes, &root),
            [
                ("a.py".into(), ChangeKind::Changed, true),
                ("b.py".into(), ChangeKind::Removed, true),
                ("c.py".into(), ChangeKind::Created, true),
                ("d.py".into(), ChangeKind::Created, false),
            ]
        );
        assert!(sub.take().is_empty());
    }

    fn fresh(path: &str, kind: ChangeKind, is_dir: bool, born: bool) -> Fresh {
        Fresh {
            change: Change {
                path: PathBuf::from(path),
                kind,
                is_dir,
                outside: true,
            },
            born,
            run_wrote: false,
        }
    }

    /// A change of a path the run announced a write to.
    fn own(fresh: Fresh) -> Fresh {
        Fresh {
            change: Change {
                outside: false,
                ..fresh.change
            },
            run_wrote: true,
            ..fresh
        }
    }

    fn pending_kinds(pending: &Pending) -> Vec<(String, ChangeKind)> {
        let mut kinds: Vec<_> = pending
            .changes
            .values()
            .map(|c| (c.path.to_string_lossy().into_owned(), c.kind))
            .collect();
        kinds.sort_by(|a, b| a.0.cmp(&b.0));
        kinds
    }

    /// Batches merge per path: a file born after the last look and gone again is no change,
    /// however the batches split its life; a file that was there before keeps its removal,
    /// and so does a folder.
    #[test]
    fn a_file_born_and_gone_across_batches_is_no_change() {
        use ChangeKind::{Changed, Created, Removed};
        let mut pending = Pending::default();
        pending.add(&[
            fresh("/r/sedtmp", Created, false, true),
            fresh("/r/moved_over", Created, false, false),
            fresh("/r/edited", Changed, false, false),
            fresh("/r/newdir", Created, true, true),
        ]);
        pending.add(&[fresh("/r/sedtmp", Changed, false, false)]);
        pending.add(&[
            fresh("/r/sedtmp", Removed, false, false),
            fresh("/r/moved_over", Removed, false, false),
            fresh("/r/edited", Removed, false, false),
            fresh("/r/newdir", Removed, true, false),
        ]);
        assert_eq!(
            pending_kinds(&pending),
            [
                ("/r/edited".into(), Removed),
                ("/r/moved_over".into(), Removed),
                ("/r/newdir".into(), Removed),
            ]
        );
        // Born again after the cancellation, it is new again.
        pending.add(&[fresh("/r/sedtmp", Created, false, true)]);
        assert!(pending.born.contains(Path::new("/r/sedtmp")));
        // Removed and created again, a file was there before: its later removal stays.
        pending.add(&[fresh("/r/edited", Created, false, true)]);
        pending.add(&[fresh("/r/edited", Removed, false, false)]);
        assert!(pending_kinds(&pending).contains(&("/r/edited".into(), Removed)));
    }

    /// A file the run wrote since its birth may be known to an owner from the write itself
    /// (the graph indexes what the run writes): its removal is handed out, and so is that of
    /// a file the run created.
    #[test]
    fn a_file_the_run_wrote_keeps_its_removal() {
        use ChangeKind::{Changed, Created, Removed};
        let mut pending = Pending::default();
        pending.add(&[
            fresh("/r/shell_made", Created, false, true),
            own(fresh("/r/run_made", Created, false, true)),
        ]);
        pending.add(&[own(fresh("/r/shell_made", Changed, false, false))]);
        pending.add(&[
            fresh("/r/shell_made", Removed, false, false),
            fresh("/r/run_made", Removed, false, false),
        ]);
        assert_eq!(
            pending_kinds(&pending),
            [
                ("/r/run_made".into(), Removed),
                ("/r/shell_made".into(), Removed)
            ]
        );
    }

    /// The same through the watcher: a flush between `sed -i`'s write of its temporary file
    /// and its rename (a batch boundary) does not make the temporary file a change.
    #[test]
    fn a_temporary_file_split_across_batches_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("edited.c"), "int a;\n").unwrap();
        let watcher = watcher(&root);
        let sub = watcher.subscribe();
        std::fs::write(root.join("sedAbc123"), "int b;\n").unwrap();
        assert!(watcher.flush());
        std::fs::rename(root.join("sedAbc123"), root.join("edited.c")).unwrap();
        assert!(watcher.flush());
        let changes = sub.take();
        let paths: Vec<String> = kinds(&changes, &root).into_iter().map(|k| k.0).collect();
        assert_eq!(paths, ["edited.c"], "{changes:?}");
    }

    /// Through the watcher: the shell makes a file, the run edits it, `git stash -u` takes it
    /// away; the removal is handed out, whether flushes split the three into batches or not
    /// (the run's write makes the file one an owner may know of).
    #[test]
    fn a_shell_made_file_the_run_edited_is_seen_removed() {
        for flush_between in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            let watcher = watcher(&root);
            let sub = watcher.subscribe();
            let between = || assert!(!flush_between || watcher.flush());
            std::fs::write(root.join("gen.rs"), "pub fn gen() {}\n").unwrap();
            between();
            watcher.expect(&root.join("gen.rs"), Some(b"pub fn gen() { 1; }\n"));
            std::fs::write(root.join("gen.rs"), "pub fn gen() { 1; }\n").unwrap();
            between();
            std::fs::remove_file(root.join("gen.rs")).unwrap();
            assert!(watcher.flush());
            let changes = sub.take();
            assert_eq!(
                kinds(&changes, &root),
                [("gen.rs".into(), ChangeKind::Removed, true)],
                "flushes between: {flush_between}; {changes:?}"
            );
        }
    }

    /// `sed -i` writes a temporary file beside the one it edits and renames it over that
    /// file: the temporary file is no change, the edited one is.
    #[test]
    fn a_file_created_and_gone_within_a_batch_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "a").unwrap();
        std::fs::write(root.join("gone.py"), "g").unwrap();
        let watcher = watcher(&root);
        let sub = watcher.subscribe();
        std::fs::write(root.join("sedX1b2c3"), "a2").unwrap();
        std::fs::rename(root.join("sedX1b2c3"), root.join("a.py")).unwrap();
        std::fs::write(root.join("scratch.py"), "s").unwrap();
        std::fs::remove_file(root.join("scratch.py")).unwrap();
        // A file that was there before and is gone stays a removal.
        std::fs::remove_file(root.join("gone.py")).unwrap();
        assert!(watcher.flush());
        let found = kinds(&sub.take(), &root);
        assert!(
            found
                .iter()
                .all(|(path, ..)| path == "a.py" || path == "gone.py"),
            "{found:?}"
        );
        assert!(found.iter().any(|(path, ..)| path == "a.py"), "{found:?}");
        assert!(
            found.contains(&("gone.py".into(), ChangeKind::Removed, true)),
            "{found:?}"
        );
    }

    #[test]
    fn new_folders_are_watched_and_their_files_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let watcher = watcher(&root);
        let sub = watcher.subscribe();
        std::fs::create_dir_all(root.join("pkg/deep")).unwrap();
        std::fs::write(root.join("pkg/deep/x.go"), "package deep").unwrap();
        assert!(watcher.flush());
        let first = kinds(&sub.take(), &root);
        assert!(
            first.contains(&("pkg/deep/x.go".into(), ChangeKind::Created, true)),
            "{first:?}"
        );
        // The new folder is watched now.
        std::fs::write(root.join("pkg/deep/y.go"), "package deep").unwrap();
        assert!(watcher.flush());
        let second = kinds(&sub.take(), &root);
        assert!(
            second.contains(&("pkg/deep/y.go".into(), ChangeKind::Created, true)),
            "{second:?}"
        );
        // A removed folder is one change, and its watches go.
        std::fs::remove_dir_all(root.join("pkg")).unwrap();
        assert!(watcher.flush());
        let third = sub.take();
        assert!(third
            .changes
            .iter()
            .any(|c| c.path == root.join("pkg") && c.kind == ChangeKind::Removed && c.is_dir));
    }

    #[test]
    fn hidden_dependency_and_ignored_paths_are_not_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".gitignore"), "gen/\n*.log\n").unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(root.join("gen")).unwrap();
        let watcher = watcher(&root);
        let sub = watcher.subscribe();
        std::fs::write(root.join("node_modules/x/i.js"), "x").unwrap();
        std::fs::write(root.join("gen/out.py"), "x").unwrap();
        std::fs::write(root.join("run.log"), "x").unwrap();
        std::fs::write(root.join(".hidden.py"), "x").unwrap();
        std::fs::write(root.join("kept.py"), "x").unwrap();
        assert!(watcher.flush());
        assert_eq!(
            kinds(&sub.take(), &root),
            [("kept.py".into(), ChangeKind::Created, true)]
        );
    }

    #[test]
    fn an_event_that_finds_the_queue_full_marks_an_overflow() {
        // Deterministic: whether a storm of writes outruns the collector depends on the
        // machine's load, so the full queue is made by hand.
        let shared = Shared::new(PathBuf::from("/"), WatchOptions::default());
        let (sender, _receiver) = std::sync::mpsc::sync_channel(1);
        let event = || {
            Ok(
                notify::Event::new(EventKind::Create(notify::event::CreateKind::File))
                    .add_path(PathBuf::from("/f.py")),
            )
        };
        reader_handle(&shared, &sender, event());
        assert!(!shared.overflowed.load(Ordering::Acquire));
        reader_handle(&shared, &sender, event());
        assert!(shared.overflowed.load(Ordering::Acquire));
    }

    #[test]
    fn a_full_queue_is_a_gap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let watcher = watcher(&root);
        let sub = watcher.subscribe();
        std::fs::write(root.join("f.py"), "x").unwrap();
        // Every event of that write is in before the overflow (its create and its close come
        // apart: a gap committed between them would leave the close for the next batch).
        assert!(watcher.flush());
        let _ = sub.take();
        // What the kernel reader does when the queue is full (tested above).
        watcher.shared.overflowed.store(true, Ordering::Release);
        assert!(watcher.flush());
        let changes = sub.take();
        assert_eq!(changes.gap, Some(Gap::Overflow));
        assert_eq!(watcher.status().overflows, 1);
        // The gap is said once; the next batch is plain again.
        std::fs::write(root.join("g.py"), "x").unwrap();
        assert!(watcher.flush());
        let next = sub.take();
        assert_eq!(next.gap, None);
        assert_eq!(
            kinds(&next, &root),
            [("g.py".into(), ChangeKind::Created, true)]
        );
    }

    #[test]
    fn too_many_folders_degrade_the_watcher() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for i in 0..5 {
            std::fs::create_dir_all(root.join(format!("d{i}"))).unwrap();
        }
        let options = WatchOptions {
            max_watches: Some(3),
            ..WatchOptions::default()
        };
        let watcher = TreeWatcher::start(&root, options).unwrap();
        let sub = watcher.subscribe();
        let status = watcher.status();
        assert!(status.degraded.is_some(), "{status:?}");
        assert!(matches!(sub.take().gap, Some(Gap::Degraded(_))));
        assert!(!watcher.flush());
    }

    #[test]
    fn a_subscription_merges_what_it_has_not_seen() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let watcher = watcher(&root);
        let sub = watcher.subscribe();
        std::fs::write(root.join("m.rs"), "1").unwrap();
        assert!(watcher.flush());
        std::fs::write(root.join("m.rs"), "2").unwrap();
        assert!(watcher.flush());
        // Created, then changed: still created for one that did not look in between.
        assert_eq!(
            kinds(&sub.take(), &root),
            [("m.rs".into(), ChangeKind::Created, true)]
        );
        let woken = Arc::new(AtomicU64::new(0));
        let count = woken.clone();
        sub.on_change(move || {
            count.fetch_add(1, Ordering::Relaxed);
        });
        std::fs::remove_file(root.join("m.rs")).unwrap();
        assert!(watcher.flush());
        assert_eq!(woken.load(Ordering::Relaxed), 1);
        assert_eq!(
            kinds(&sub.take(), &root),
            [("m.rs".into(), ChangeKind::Removed, true)]
        );
    }
}
