//! One server per (family, root), started by the first request that needs it, reaped when
//! idle, restarted after a crash unless it keeps crashing.

use cc_process::lock;
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::time::Instant;

use crate::config::LspConfig;
use crate::detect::{find_root, Prober, Skipped};
use crate::diagnostic::Diagnostic;
use crate::error::{fmt_duration, ConfigError};
use crate::kotlin::KotlinCompiler;
use crate::server::{ApplyEdit, DiagnosticsOutcome, LanguageServer, Via, WatchedChange};
use crate::table::{Family, ServerTable};
use cc_workspace::watch::{ChangeKind, Changes, Subscription, TreeWatcher};
use cc_workspace::BrokenSection;

/// Knobs of a [`ServerPool`].
#[derive(Debug, Clone)]
pub struct ServerPoolOptions {
    /// Stop a server unused this long (default 10 min).
    pub idle_timeout: Duration,
    /// The PATH used to find servers (default: this process's).
    pub path: Option<OsString>,
    /// Restarts allowed within `restart_window` before a server is turned off (default 3).
    pub restart_limit: usize,
    /// See `restart_limit` (default 5 min).
    pub restart_window: Duration,
    /// How long a server gets to exit after `shutdown`/`exit` before its group is killed.
    pub shutdown_grace: Duration,
    /// How many other files a write's check looks at (default 30).
    pub dependents_limit: usize,
    /// Whether servers and checkers may run the workspace's own code (build scripts, proc
    /// macros, its `.venv` python, its `node_modules` TypeScript). [`Trust::ReadOnly`] for
    /// surfaces that promise no side effect: see [`crate::policy`].
    pub trust: Trust,
}

/// What the workspace's own code may do when a server or checker starts.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Servers run as they normally do (build scripts, proc macros, the project's
    /// interpreter and toolchain).
    #[default]
    Full,
    /// Servers start in a safe configuration that runs no workspace code; what cannot be
    /// made safe is refused with the reason.
    ReadOnly,
}

impl Default for ServerPoolOptions {
    fn default() -> Self {
        ServerPoolOptions {
            idle_timeout: Duration::from_secs(600),
            path: None,
            restart_limit: 3,
            restart_window: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(2),
            dependents_limit: crate::config::DEFAULT_DEPENDENTS_LIMIT,
            trust: Trust::Full,
        }
    }
}

/// Why a file has no server to check it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The family, when the file has one.
    pub family: Option<String>,
    /// One sentence for the agent.
    pub reason: String,
}

/// The state of one family in [`ServerPool::status`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// A server process is up.
    Running,
    /// Available; starts on the first request (or was reaped, or restarts after a crash).
    Idle,
    /// A marker, the binary, or a working binary is missing.
    NotAvailable,
    /// Turned off by configuration or by the crash-loop guard.
    Off,
}

/// One row of [`ServerPool::status`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LanguageStatus {
    /// The family (`python`).
    pub language: String,
    /// The project root, relative to the workspace (`.` for the workspace itself).
    pub root: Option<String>,
    /// The server that runs or would run.
    pub server: Option<String>,
    /// Its binary.
    pub binary: Option<String>,
    /// The state.
    pub state: ServerState,
    /// Why it is not running, or what it is busy with.
    pub reason: Option<String>,
    /// Binaries on PATH that were skipped, and why.
    pub skipped: Vec<String>,
}

/// What checking one written file gave.
#[derive(Debug, Clone)]
pub struct FileCheck {
    /// The file.
    pub path: PathBuf,
    /// The result.
    pub outcome: CheckOutcome,
}

/// The result of checking one file.
#[derive(Debug, Clone)]
pub enum CheckOutcome {
    /// The server answered for the version just written.
    Checked {
        /// The server.
        server: String,
        /// All of the file's diagnostics, all severities.
        diagnostics: Vec<Diagnostic>,
        /// True when the server stayed quiet (it republishes only on change).
        unchanged: bool,
        /// How they were obtained (`None` when unchanged).
        via: Option<Via>,
        /// When the change was sent.
        synced_at: Instant,
        /// When the answer arrived.
        answered_at: Option<Instant>,
    },
    /// The server did not answer within its cap.
    Pending {
        /// The server.
        server: String,
        /// Why, for the agent.
        reason: String,
    },
    /// No server checked the file.
    Unchecked {
        /// Why.
        reason: String,
    },
    /// The file no longer exists; it was closed.
    Removed,
}

#[derive(Default)]
struct Instance {
    server: Option<Arc<LanguageServer>>,
    crashes: VecDeque<Instant>,
    last_crash: Option<String>,
    off: Option<String>,
}

type Key = (String, PathBuf);

/// Gives the run's watcher when first needed (`None`: it could not start; servers then hear
/// only of the run's own writes, as before).
pub type WatchSource = Arc<dyn Fn() -> Option<Arc<TreeWatcher>> + Send + Sync>;

/// The pool's view of the run's watcher (see [`ServerPool::watch`]).
struct Watching {
    watcher: Arc<TreeWatcher>,
    subscription: Subscription,
    /// Changes are taken and told to the servers by one task at a time, in order.
    absorbing: tokio::sync::Mutex<()>,
    /// Woken by the watcher after each batch.
    wake: Arc<tokio::sync::Notify>,
    forwarding: AtomicBool,
    /// Batches that could not be told exactly (a watcher gap), since the pool began.
    gaps: std::sync::atomic::AtomicU64,
}

/// Starts, reuses, reaps and restarts language servers for one workspace.
pub struct ServerPool {
    workspace: PathBuf,
    /// Replaced when `reload` re-reads the configuration.
    table: std::sync::RwLock<Arc<ServerTable>>,
    options: ServerPoolOptions,
    prober: Prober,
    instances: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<Instance>>>>,
    applier: Mutex<Option<Arc<dyn ApplyEdit>>>,
    reaper_started: AtomicBool,
    closed: AtomicBool,
    /// An `[lsp]` section that could not be used: every family reports it.
    config_error: std::sync::RwLock<Option<String>>,
    /// Starts (or hands over) the run's watcher, when the host attached one.
    watch_source: Mutex<Option<WatchSource>>,
    /// The pool's subscription to it, from the first time it was needed.
    watching: Mutex<Option<Arc<Watching>>>,
    /// The project interpreter each Python server was given, and why (for `status`).
    interpreters: Mutex<HashMap<Key, cc_workspace::python::PythonChoice>>,
    /// The JDT LS workspace folder each Java root holds for the pool's life (a restart keeps
    /// its folder; another run takes another).
    java_workspaces: Mutex<HashMap<Key, Arc<crate::jdtls::DataLease>>>,
    /// The warm Kotlin compiler of each java-family root that had a Kotlin file checked.
    kotlin: Mutex<HashMap<PathBuf, Arc<KotlinCompiler>>>,
    me: Weak<ServerPool>,
}

impl std::fmt::Debug for ServerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerPool")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

impl ServerPool {
    /// A pool for the workspace at `workspace` (an absolute, canonical path).
    pub fn new(workspace: &Path, table: ServerTable, options: ServerPoolOptions) -> Arc<Self> {
        Self::build(workspace, table, options, None)
    }

    fn build(
        workspace: &Path,
        table: ServerTable,
        options: ServerPoolOptions,
        config_error: Option<String>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| ServerPool {
            workspace: workspace.to_path_buf(),
            table: std::sync::RwLock::new(Arc::new(table)),
            options,
            prober: Prober::default(),
            instances: Mutex::new(HashMap::new()),
            applier: Mutex::new(None),
            reaper_started: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            config_error: std::sync::RwLock::new(config_error),
            watch_source: Mutex::new(None),
            watching: Mutex::new(None),
            interpreters: Mutex::new(HashMap::new()),
            java_workspaces: Mutex::new(HashMap::new()),
            kotlin: Mutex::new(HashMap::new()),
            me: me.clone(),
        })
    }

    /// A pool whose `[lsp]` section could not be used. It does not fail: every
    /// language then reports `broken` (in `status` and as the reason files are unchecked)
    /// until [`ServerPool::replace_config`] succeeds, rather than silently using defaults.
    pub fn broken(workspace: &Path, broken: BrokenSection) -> Arc<Self> {
        Self::build(
            workspace,
            ServerTable::builtin(),
            ServerPoolOptions::default(),
            Some(broken.to_string()),
        )
    }

    /// A pool configured by `config`.
    pub fn from_config(workspace: &Path, config: &LspConfig) -> Result<Arc<Self>, ConfigError> {
        let options = ServerPoolOptions {
            idle_timeout: config.idle_timeout(),
            dependents_limit: config.dependents_limit(),
            ..ServerPoolOptions::default()
        };
        Ok(Self::new(workspace, config.table()?, options))
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// How many other files a write's check may look at.
    pub fn dependents_limit(&self) -> usize {
        self.options.dependents_limit
    }

    /// Whether this pool's servers may run workspace code.
    pub fn trust(&self) -> Trust {
        self.options.trust
    }

    /// A pool over the same workspace and table whose servers run no workspace code
    /// (itself when it already is one). Servers are never shared between the two: a
    /// read-only run never reaches a server started with full trust.
    pub fn read_only(self: &Arc<Self>) -> Arc<Self> {
        if self.options.trust == Trust::ReadOnly {
            return self.clone();
        }
        let options = ServerPoolOptions {
            trust: Trust::ReadOnly,
            ..self.options.clone()
        };
        let twin = Self::build(
            &self.workspace,
            (*self.table()).clone(),
            options,
            self.config_error(),
        );
        if let Some(applier) = lock(&self.applier).clone() {
            twin.set_applier(applier);
        }
        if let Some(source) = lock(&self.watch_source).clone() {
            twin.watch(source);
        }
        twin
    }

    /// Tells every server of the pool what changes on disk, from the run's watcher (which
    /// `source` starts, when the pool first needs it): files created, changed or deleted
    /// behind the run (the shell, git, a formatter) and by the run's own writes reach the
    /// servers as `workspace/didChangeWatchedFiles` (for the globs each registered, else its
    /// family's files), and an open document whose bytes changed is synced again from disk
    /// (closed when gone). A background task does it as changes come;
    /// [`ServerPool::catch_up`], called before every request and check, makes sure nothing
    /// made before the call is left out.
    pub fn watch(&self, source: WatchSource) {
        *lock(&self.watch_source) = Some(source);
    }

    /// The pool's view of the watcher, subscribing on first use.
    fn watching(&self) -> Option<Arc<Watching>> {
        let mut watching = lock(&self.watching);
        if let Some(existing) = watching.as_ref() {
            return Some(existing.clone());
        }
        let source = lock(&self.watch_source).clone()?;
        let watcher = source()?;
        let subscription = watcher.subscribe();
        let wake = Arc::new(tokio::sync::Notify::new());
        let waker = wake.clone();
        subscription.on_change(move || waker.notify_one());
        let created = Arc::new(Watching {
            watcher,
            subscription,
            absorbing: tokio::sync::Mutex::new(()),
            wake,
            forwarding: AtomicBool::new(false),
            gaps: std::sync::atomic::AtomicU64::new(0),
        });
        *watching = Some(created.clone());
        Some(created)
    }

    /// The run's watcher, once the pool has used it.
    pub fn watcher(&self) -> Option<Arc<TreeWatcher>> {
        lock(&self.watching).as_ref().map(|w| w.watcher.clone())
    }

    /// Waits until every change made on disk before this call has been told to the running
    /// servers (see [`ServerPool::watch`]). Without a watcher, nothing to do.
    pub async fn catch_up(&self) {
        let Some(watching) = self.watching() else {
            return;
        };
        self.start_forwarding(&watching);
        let watcher = watching.watcher.clone();
        let _ = tokio::task::spawn_blocking(move || watcher.flush()).await;
        self.absorb(&watching).await;
    }

    fn start_forwarding(&self, watching: &Arc<Watching>) {
        if watching.forwarding.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.me.clone();
        let watching = watching.clone();
        tokio::spawn(async move {
            loop {
                watching.wake.notified().await;
                let Some(pool) = me.upgrade() else {
                    return;
                };
                if pool.closed.load(Ordering::SeqCst) {
                    return;
                }
                pool.absorb(&watching).await;
            }
        });
    }

    /// Takes what the watcher saw and tells the running servers.
    async fn absorb(&self, watching: &Watching) {
        let _turn = watching.absorbing.lock().await;
        let changes = watching.subscription.take();
        if changes.is_empty() {
            return;
        }
        if changes.gap.is_some() {
            watching
                .gaps
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let table = self.table();
        for server in self.running() {
            let synced = tell_server(&server, &table, &changes);
            // As after the run's own writes: the server has read what changed before it
            // checks any file against it.
            if server.spec().reads_batch_before_check {
                let open = server.open_documents();
                let still_open = synced.iter().filter(|path| open.contains(path));
                read_before_checking(&server, still_open.map(PathBuf::as_path)).await;
            }
        }
    }

    /// How many batches of changes the watcher could not list exactly (it lost events, or
    /// does not watch the tree), so servers were only asked to re-read their open documents.
    pub fn watch_gaps(&self) -> u64 {
        lock(&self.watching)
            .as_ref()
            .map_or(0, |w| w.gaps.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The server table in use.
    pub fn table(&self) -> Arc<ServerTable> {
        cc_process::read(&self.table).clone()
    }

    /// Uses `config` for the servers started from now on (`lsp reload` hands over the
    /// section it read again before restarting), and forgets a broken section. An invalid
    /// `config` is an error and the table in use stays.
    pub fn replace_config(&self, config: &LspConfig) -> Result<(), ConfigError> {
        let table = config.table()?;
        *cc_process::write(&self.table) = Arc::new(table);
        *cc_process::write(&self.config_error) = None;
        Ok(())
    }

    /// Why the `[lsp]` section could not be used, if it could not.
    pub fn config_error(&self) -> Option<String> {
        cc_process::read(&self.config_error).clone()
    }

    /// Sets what applies edits that servers request (`workspace/applyEdit`) for servers
    /// started from now on.
    pub fn set_applier(&self, applier: Arc<dyn ApplyEdit>) {
        *lock(&self.applier) = Some(applier);
    }

    pub(crate) fn path_var(&self) -> OsString {
        self.options
            .path
            .clone()
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default()
    }

    fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
            Ok(rest) => rest.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    /// The family covering `path` and its project root.
    pub fn route(&self, path: &Path) -> Result<(Family, PathBuf), Unavailable> {
        let table = self.table();
        let Some(family) = table.family_for(path).cloned() else {
            let reason = match path.extension() {
                Some(ext) => format!(
                    "no language server is configured for `.{}` files",
                    ext.to_string_lossy()
                ),
                None => "files without an extension are not checked by any language server".into(),
            };
            return Err(Unavailable {
                family: None,
                reason,
            });
        };
        if let Some(error) = self.config_error() {
            return Err(Unavailable {
                family: Some(family.name.clone()),
                reason: error.clone(),
            });
        }
        if !family.enabled {
            return Err(Unavailable {
                family: Some(family.name.clone()),
                reason: format!(
                    "the {} language server is {}",
                    family.name,
                    table.turned_off(&family.name)
                ),
            });
        }
        let Some(root) = find_root(path, &self.workspace, &family.markers) else {
            let folder = path
                .parent()
                .map_or_else(|| ".".into(), |p| self.display(p));
            return Err(Unavailable {
                family: Some(family.name.clone()),
                reason: format!(
                    "no {} project marker ({}) in `{folder}` or any folder above it inside the \
                     workspace; add one to get {} diagnostics",
                    family.name,
                    family.markers.join(", "),
                    family.name
                ),
            });
        };
        Ok((family, root))
    }

    /// The running server for `path`, started if needed, told of every change on disk made
    /// before the call ([`ServerPool::catch_up`]).
    pub async fn server_for(&self, path: &Path) -> Result<Arc<LanguageServer>, Unavailable> {
        let (family, root) = self.route(path)?;
        // Subscribed before the server reads the disk, so no change falls in between.
        let _ = self.watching();
        let server = self.acquire(&family, &root).await?;
        self.catch_up().await;
        Ok(server)
    }

    fn slot(&self, key: &Key) -> Arc<tokio::sync::Mutex<Instance>> {
        lock(&self.instances)
            .entry(key.clone())
            .or_default()
            .clone()
    }

    async fn acquire(
        &self,
        family: &Family,
        root: &Path,
    ) -> Result<Arc<LanguageServer>, Unavailable> {
        let unavailable = |reason: String| Unavailable {
            family: Some(family.name.clone()),
            reason,
        };
        if self.closed.load(Ordering::SeqCst) {
            return Err(unavailable(
                "the run has ended; language servers are stopped".into(),
            ));
        }
        let key = (family.name.clone(), root.to_path_buf());
        let slot = self.slot(&key);
        let mut instance = slot.lock().await;
        if let Some(off) = &instance.off {
            return Err(unavailable(off.clone()));
        }
        if let Some(server) = instance.server.clone() {
            if let Some(crash) = server.crashed() {
                self.record_crash(&mut instance, crash);
            } else if let Some(now) = self.python_moved(&key, family, root) {
                // A virtualenv created (or removed) since the server started: its search
                // paths are the old interpreter's. It starts again with the new one.
                tracing::info!(server = server.name(), python = %now.display(), "the project's Python changed: restarting");
                instance.server = None;
                server.shutdown(self.options.shutdown_grace).await;
            } else if !server.is_closed() {
                return Ok(server);
            } else {
                instance.server = None;
            }
            if let Some(off) = &instance.off {
                return Err(unavailable(off.clone()));
            }
        }
        let resolved = self
            .prober
            .resolve(family, &self.path_var())
            .await
            .map_err(|not| {
                unavailable(format!(
                    "{} language server not available: {}",
                    family.name, not.reason
                ))
            })?;
        let applier = lock(&self.applier).clone();
        let mut resolved = resolved;
        crate::policy::adapt_to_project(&mut resolved.spec, root);
        crate::policy::keep_clangd_index_outside(&mut resolved.spec, root);
        crate::policy::keep_intelephense_storage_outside(&mut resolved.spec, root);
        if resolved.spec.java_runtime {
            let lease = self.java_workspace(&key, root).map_err(unavailable)?;
            crate::jdtls::prepare(&mut resolved.spec, root, &lease);
        }
        if !resolved.spec.init_options_when_watched.is_null() && self.watching().is_some() {
            let extra = resolved.spec.init_options_when_watched.clone();
            crate::policy::merge(&mut resolved.spec.init_options, &extra);
        }
        let python = crate::policy::use_project_python(
            &mut resolved.spec,
            family.interpreter.as_deref(),
            root,
            &self.workspace,
            &self.path_var(),
            self.options.trust == Trust::ReadOnly,
        )
        .map_err(unavailable)?;
        if self.options.trust == Trust::ReadOnly {
            crate::policy::restrict(&mut resolved, &self.workspace).map_err(unavailable)?;
        }
        if let Some(python) = python {
            lock(&self.interpreters).insert(key.clone(), python);
        }
        match LanguageServer::start(&family.name, &resolved, root, &self.path_var(), applier).await
        {
            Ok(server) => {
                instance.server = Some(server.clone());
                self.ensure_reaper();
                Ok(server)
            }
            Err(error) => {
                self.record_crash(
                    &mut instance,
                    format!("{} failed to start: {error}", resolved.spec.name),
                );
                let reason = instance
                    .off
                    .clone()
                    .unwrap_or_else(|| format!("{} failed to start: {error}", resolved.spec.name));
                Err(unavailable(reason))
            }
        }
    }

    /// The project's Python now, when it is not the one the running server of `key` was
    /// given (nothing for servers given none).
    fn python_moved(&self, key: &Key, family: &Family, root: &Path) -> Option<PathBuf> {
        let given = lock(&self.interpreters)
            .get(key)
            .map(|choice| choice.path.clone())?;
        let now = crate::policy::project_python(
            family.interpreter.as_deref(),
            root,
            &self.workspace,
            &self.path_var(),
            self.options.trust == Trust::ReadOnly,
        )
        .ok()?;
        (now.path != given).then_some(now.path)
    }

    /// The JDT LS workspace folder of `key`, leased on first use.
    fn java_workspace(
        &self,
        key: &Key,
        root: &Path,
    ) -> Result<Arc<crate::jdtls::DataLease>, String> {
        let mut leases = lock(&self.java_workspaces);
        if let Some(lease) = leases.get(key) {
            return Ok(lease.clone());
        }
        let cache = cc_workspace::cache_dir().join("jdtls");
        let lease = Arc::new(crate::jdtls::lease_data_dir(&cache, root)?);
        leases.insert(key.clone(), lease.clone());
        Ok(lease)
    }

    fn record_crash(&self, instance: &mut Instance, reason: String) {
        instance.server = None;
        let now = Instant::now();
        instance.crashes.push_back(now);
        while instance
            .crashes
            .front()
            .is_some_and(|at| now.duration_since(*at) > self.options.restart_window)
        {
            instance.crashes.pop_front();
        }
        if instance.crashes.len() > self.options.restart_limit {
            // The host says how a reload is asked for; a host that says nothing calls
            // `ServerPool::reload` itself.
            let table = self.table();
            let reload = table.place.reload().unwrap_or("reload its servers");
            instance.off = Some(format!(
                "turned off after crashing {} times within {} (at most {} restarts); last: {reason}. \
                 Fix the server, then {reload}",
                instance.crashes.len(),
                fmt_duration(self.options.restart_window),
                self.options.restart_limit
            ));
        }
        instance.last_crash = Some(reason);
    }

    fn ensure_reaper(&self) {
        if self.reaper_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.me.clone();
        let period = (self.options.idle_timeout / 4)
            .clamp(Duration::from_millis(50), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(pool) = me.upgrade() else {
                    return;
                };
                if pool.closed.load(Ordering::SeqCst) {
                    return;
                }
                pool.reap_idle().await;
            }
        });
    }

    /// Stops servers unused for longer than the idle timeout.
    pub async fn reap_idle(&self) {
        let slots: Vec<_> = lock(&self.instances).values().cloned().collect();
        for slot in slots {
            let Ok(mut instance) = slot.try_lock() else {
                continue;
            };
            let idle = instance.server.as_ref().is_some_and(|server| {
                Instant::now().duration_since(server.last_used()) >= self.options.idle_timeout
            });
            if idle {
                if let Some(server) = instance.server.take() {
                    tracing::debug!(server = server.name(), "reaping idle server");
                    server.shutdown(self.options.shutdown_grace).await;
                }
            }
        }
        let idle = self.options.idle_timeout;
        self.stop_kotlin_compilers(|compiler| compiler.idle_for() >= idle)
            .await;
    }

    /// Restarts the server of `family` at `root` (every root when `None`): stops it, clears
    /// the crash-loop guard, and lets the next request start it afresh. Returns how many
    /// servers were stopped.
    pub async fn reload(&self, family: &str, root: Option<&Path>) -> usize {
        let family = crate::table::canonical_family(family);
        let slots: Vec<_> = lock(&self.instances)
            .iter()
            .filter(|((f, r), _)| f == family && root.is_none_or(|root| r == root))
            .map(|(_, slot)| slot.clone())
            .collect();
        let mut stopped = 0;
        for slot in slots {
            let mut instance = slot.lock().await;
            instance.off = None;
            instance.crashes.clear();
            instance.last_crash = None;
            if let Some(server) = instance.server.take() {
                server.shutdown(self.options.shutdown_grace).await;
                stopped += 1;
            }
        }
        if family == "java" {
            self.stop_kotlin_compilers(|compiler| root.is_none_or(|root| compiler.root() == root))
                .await;
        }
        stopped
    }

    /// Every running server.
    pub fn running(&self) -> Vec<Arc<LanguageServer>> {
        let slots: Vec<_> = lock(&self.instances).values().cloned().collect();
        slots
            .iter()
            .filter_map(|slot| slot.try_lock().ok().and_then(|i| i.server.clone()))
            .filter(|server| !server.is_closed())
            .collect()
    }

    /// Stops every server (`shutdown`, `exit`, then SIGKILL of its group) and refuses to
    /// start new ones.
    pub async fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let slots: Vec<_> = lock(&self.instances).values().cloned().collect();
        let grace = self.options.shutdown_grace;
        let mut tasks = Vec::new();
        for slot in slots {
            tasks.push(tokio::spawn(async move {
                let server = slot.lock().await.server.take();
                if let Some(server) = server {
                    server.shutdown(grace).await;
                }
            }));
        }
        for task in tasks {
            let _ = task.await;
        }
        self.stop_kotlin_compilers(|_| true).await;
    }

    /// Each family: its root(s), server, state and the reason, decided now.
    pub async fn status(&self) -> Vec<LanguageStatus> {
        let mut rows = Vec::new();
        let path_var = self.path_var();
        let table = self.table();
        for family in &table.families {
            let mut row = LanguageStatus {
                language: family.name.clone(),
                root: None,
                server: family.servers.first().map(|s| s.name.clone()),
                binary: None,
                state: ServerState::NotAvailable,
                reason: None,
                skipped: Vec::new(),
            };
            if let Some(error) = self.config_error() {
                row.state = ServerState::Off;
                row.reason = Some(error.clone());
                rows.push(row);
                continue;
            }
            if !family.enabled {
                row.state = ServerState::Off;
                row.reason = Some(table.turned_off(&family.name));
                rows.push(row);
                continue;
            }
            let known = self.started_rows(family, &row).await;
            if known.is_empty() {
                rows.extend(self.unstarted_rows(family, row, &path_var).await);
            } else {
                rows.extend(known);
            }
        }
        rows
    }

    /// The rows of the instances of `family` this run has started (or turned off), by root.
    async fn started_rows(
        &self,
        family: &Family,
        template: &LanguageStatus,
    ) -> Vec<LanguageStatus> {
        let mut known: Vec<(PathBuf, Arc<tokio::sync::Mutex<Instance>>)> = lock(&self.instances)
            .iter()
            .filter(|((f, _), _)| *f == family.name)
            .map(|((_, root), slot)| (root.clone(), slot.clone()))
            .collect();
        // In a stable order, by root.
        known.sort_by(|(a, _), (b, _)| a.cmp(b));
        let mut rows = Vec::new();
        for (root, slot) in known {
            let instance = slot.lock().await;
            let mut row = template.clone();
            row.root = Some(self.display(&root));
            if let Some(off) = &instance.off {
                row.state = ServerState::Off;
                row.reason = Some(off.clone());
            } else if let Some(server) = instance.server.as_ref().filter(|s| !s.is_closed()) {
                row.state = ServerState::Running;
                row.server = Some(server.name().to_owned());
                row.binary = Some(server.binary().display().to_string());
                row.reason = Some(self.running_reason(family, &root, server));
            } else if let Some(crash) = instance
                .server
                .as_ref()
                .and_then(|s| s.crashed())
                .or_else(|| instance.last_crash.clone())
            {
                row.state = ServerState::Idle;
                row.reason = Some(format!("{crash}; restarts on the next request"));
            } else {
                row.state = ServerState::Idle;
                row.reason = Some("stopped after being idle; starts on the next request".into());
            }
            rows.push(row);
        }
        rows
    }

    /// What a running server at `root` is doing: its pid, what it is busy with, what its
    /// answers cannot cover, the project's Python, the Kotlin compiler beside it.
    fn running_reason(&self, family: &Family, root: &Path, server: &LanguageServer) -> String {
        let busy = server.progress_titles();
        let mut reason = format!("pid {}", server.pid().unwrap_or(0));
        if !busy.is_empty() {
            reason.push_str(&format!("; busy: {}", busy.join(", ")));
        }
        if let Some(limits) = crate::policy::answer_limits(server.name(), root) {
            reason.push_str(&format!("; {limits}"));
        }
        let key = (family.name.clone(), root.to_path_buf());
        if let Some(python) = lock(&self.interpreters).get(&key) {
            reason.push_str(&format!(
                "; the project's Python: {} ({})",
                python.path.display(),
                python.why
            ));
        }
        if let Some(now) = self.python_moved(&key, family, root) {
            reason.push_str(&format!(
                "; the project's Python is now {}: the server starts again with it on its \
                 next use",
                now.display()
            ));
        }
        if let Some(compiler) = lock(&self.kotlin).get(root) {
            reason.push_str(&format!("; {}", compiler.describe()));
        }
        reason
    }

    /// The rows of a family no server of this run has started: available or not, per
    /// project root (the first five).
    async fn unstarted_rows(
        &self,
        family: &Family,
        mut row: LanguageStatus,
        path_var: &std::ffi::OsStr,
    ) -> Vec<LanguageStatus> {
        let roots = marker_roots(&self.workspace, &family.markers);
        let resolved = self.prober.resolve(family, path_var).await;
        match &resolved {
            Ok(resolved) => {
                row.server = Some(resolved.spec.name.clone());
                row.binary = Some(resolved.binary.display().to_string());
                row.skipped = describe_skipped(&resolved.skipped);
            }
            Err(not) => row.skipped = describe_skipped(&not.skipped),
        }
        match (roots.is_empty(), &resolved) {
            (false, Ok(_)) => {
                row.state = ServerState::Idle;
                row.reason = Some("available; starts on the first request".into());
            }
            (true, Ok(_)) => {
                row.reason = Some(format!(
                    "no project marker ({}) in the workspace",
                    family.markers.join(", ")
                ));
            }
            (false, Err(not)) => row.reason = Some(not.reason.clone()),
            (true, Err(not)) => {
                row.reason = Some(format!(
                    "no project marker ({}) in the workspace, and {}",
                    family.markers.join(", "),
                    not.reason
                ));
            }
        }
        if roots.is_empty() {
            return vec![row];
        }
        let mut rows = Vec::new();
        for root in roots.iter().take(5) {
            let mut root_row = row.clone();
            root_row.root = Some(self.display(root));
            let limits = root_row
                .server
                .as_deref()
                .and_then(|server| crate::policy::answer_limits(server, root));
            if let (Some(limits), Ok(_)) = (limits, &resolved) {
                root_row.reason = root_row.reason.map(|r| format!("{r}; {limits}"));
            }
            if let Ok(resolved) = &resolved {
                if let Some(kotlin) = self.kotlin_status(root, &resolved.spec) {
                    root_row.reason = root_row.reason.map(|r| format!("{r}; {kotlin}"));
                }
            }
            rows.push(root_row);
        }
        rows
    }

    /// Syncs each written file through its server and waits for the diagnostics of that
    /// version (all files at once). Same as [`ServerPool::check_files`] without dependents.
    pub async fn check_written(&self, paths: &[PathBuf]) -> Vec<FileCheck> {
        self.check_files(paths, &[]).await
    }

    /// Checks a change: every file in `written` is synced from disk first (all of a server's
    /// files before any is waited on, so that a header changed together with its sources is
    /// never checked half-applied), then the diagnostics of every written file and of every
    /// file in `dependents` are collected for that state, all at once. A dependent whose text
    /// the server already has is checked again without a change (pulled afresh, or the push
    /// that follows the change); one it does not have is opened. Dependents on a server that
    /// checks files one at a time ([`crate::ServerSpec::cross_file`]) are left out: nothing
    /// another file does can change their diagnostics.
    pub async fn check_files(&self, written: &[PathBuf], dependents: &[PathBuf]) -> Vec<FileCheck> {
        let mut order: Vec<PathBuf> = Vec::new();
        for path in written.iter().chain(dependents) {
            if !order.contains(path) {
                order.push(path.clone());
            }
        }
        let Some(me) = self.me.upgrade() else {
            return Vec::new();
        };
        // Servers first hear of everything changed on disk, the run's own creations and
        // deletions included (an import of a module just written must resolve).
        self.catch_up().await;
        let mut done: HashMap<PathBuf, CheckOutcome> = HashMap::new();
        // Group by server, keeping the order of first appearance.
        let mut groups: Vec<(Key, Vec<(PathBuf, bool)>)> = Vec::new();
        for path in &order {
            let is_written = written.contains(path);
            match self.route(path) {
                Ok((family, root)) => {
                    let key = (family.name.clone(), root);
                    match groups.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, paths)) => paths.push((path.clone(), is_written)),
                        None => groups.push((key, vec![(path.clone(), is_written)])),
                    }
                }
                Err(unavailable) if is_written => {
                    done.insert(
                        path.clone(),
                        CheckOutcome::Unchecked {
                            reason: unavailable.reason,
                        },
                    );
                }
                // A dependent no server covers is not part of the check.
                Err(_) => {}
            }
        }
        let tasks: Vec<_> = groups
            .into_iter()
            .map(|(key, paths)| {
                let me = me.clone();
                tokio::spawn(async move { me.check_group(&key, paths).await })
            })
            .collect();
        for task in tasks {
            match task.await {
                Ok(outcomes) => done.extend(outcomes),
                Err(error) => tracing::warn!(%error, "a diagnostics task failed"),
            }
        }
        order
            .into_iter()
            .filter_map(|path| {
                let outcome = done.remove(&path)?;
                Some(FileCheck { path, outcome })
            })
            .collect()
    }

    /// One server's part of [`ServerPool::check_files`]: sync its written files, then wait
    /// for them and its dependents.
    async fn check_group(
        &self,
        key: &Key,
        paths: Vec<(PathBuf, bool)>,
    ) -> Vec<(PathBuf, CheckOutcome)> {
        let table = self.table();
        let Some(family) = table.family(&key.0) else {
            return Vec::new();
        };
        let root = &key.1;
        let any_present = paths.iter().any(|(path, _)| path.exists());
        if !any_present {
            // Only deletions: close what a running server has open; nothing to check.
            return self.close_deleted(key, paths).await;
        }
        let server = match self.acquire(family, root).await {
            Ok(server) => server,
            Err(unavailable) => return unchecked_written(paths, &unavailable.reason),
        };
        let batch = Batch {
            server: &server,
            family,
            paths: &paths,
            since: server.publish_seq(),
        };
        let mut outcomes = Vec::new();
        let mut tickets = batch.sync_written(&mut outcomes);
        batch.save_and_add_dependents(&mut tickets).await;
        let written_paths: Vec<PathBuf> = paths
            .iter()
            .filter(|(_, w)| *w)
            .map(|(path, _)| path.clone())
            .collect();
        let Routed {
            tickets,
            navigation_only,
            compiled_paths,
        } = batch.route(tickets);
        let synced_at = Instant::now();
        let compile = (!compiled_paths.is_empty()).then(|| {
            let compiler = self.kotlin_compiler(root, server.spec());
            let cap = server.spec().timing.indexing_cap;
            tokio::spawn(async move {
                match compiler {
                    Ok(compiler) => compiler.check(cap).await,
                    Err(reason) => Err(crate::kotlin::NotChecked::Unchecked(reason)),
                }
            })
        });
        for path in navigation_only {
            let reason = format!(
                "{} reports no diagnostics for .{} files: it reads them for navigation only",
                server.spec().name,
                crate::table::extension(&path).unwrap_or_default()
            );
            if written_paths.contains(&path) {
                outcomes.push((path, CheckOutcome::Unchecked { reason }));
            }
        }
        batch.wait_for(tickets, &mut outcomes).await;
        if let Some(compile) = compile {
            let kotlin_files = KotlinFiles {
                paths: compiled_paths,
                written_paths: &written_paths,
                synced_at,
            };
            batch
                .add_kotlin_outcomes(compile, kotlin_files, &mut outcomes)
                .await;
        }
        outcomes
    }

    /// Closes a group's deleted files in its server, if one runs; each written one is
    /// [`CheckOutcome::Removed`].
    async fn close_deleted(
        &self,
        key: &Key,
        paths: Vec<(PathBuf, bool)>,
    ) -> Vec<(PathBuf, CheckOutcome)> {
        let mut outcomes = Vec::new();
        let slot = lock(&self.instances).get(key).cloned();
        let server = match slot {
            Some(slot) => slot.lock().await.server.clone(),
            None => None,
        };
        for (path, is_written) in paths {
            if let Some(server) = &server {
                server.close(&path);
            }
            if is_written {
                outcomes.push((path, CheckOutcome::Removed));
            }
        }
        outcomes
    }

    /// The warm Kotlin compiler of a java-family `root`, made on first use.
    fn kotlin_compiler(
        &self,
        root: &Path,
        spec: &crate::table::ServerSpec,
    ) -> Result<Arc<KotlinCompiler>, String> {
        if let Some(compiler) = lock(&self.kotlin).get(root) {
            return Ok(compiler.clone());
        }
        let compiler = Arc::new(KotlinCompiler::locate(
            root,
            &self.workspace,
            &self.path_var(),
            spec,
            self.options.trust == Trust::ReadOnly,
        )?);
        Ok(lock(&self.kotlin)
            .entry(root.to_path_buf())
            .or_insert(compiler)
            .clone())
    }

    /// The warm Kotlin compiler of the java-family root of `path` (made on first use), or
    /// why there is none.
    pub fn kotlin_compiler_for(&self, path: &Path) -> Result<Arc<KotlinCompiler>, String> {
        let (family, root) = self.route(path).map_err(|unavailable| unavailable.reason)?;
        let spec = family
            .servers
            .iter()
            .find(|spec| spec.java_runtime)
            .ok_or_else(|| {
                format!(
                    "{} files are not compiled by the Kotlin compiler",
                    family.name
                )
            })?;
        self.kotlin_compiler(&root, spec)
    }

    /// For a java-family root holding Kotlin files: what will check them on write, or why
    /// nothing will.
    fn kotlin_status(&self, root: &Path, spec: &crate::table::ServerSpec) -> Option<String> {
        if !spec.java_runtime {
            return None;
        }
        let has_kotlin = cc_workspace::walk::Walk::new(root)
            .extensions(&["kt"])
            .limit(50_000)
            .files()
            .next()
            .is_some();
        if !has_kotlin {
            return None;
        }
        Some(
            match KotlinCompiler::locate(
                root,
                &self.workspace,
                &self.path_var(),
                spec,
                self.options.trust == Trust::ReadOnly,
            ) {
                Ok(_) => "Kotlin files are compiled on write by kotlinc (a JVM kept warm, started on the first Kotlin check)".to_owned(),
                Err(reason) => reason,
            },
        )
    }

    /// The Kotlin compilers' JVMs now running (their pids), for tests of reaping.
    pub fn kotlin_compiler_pids(&self) -> Vec<u32> {
        lock(&self.kotlin)
            .values()
            .filter_map(|compiler| compiler.pid())
            .collect()
    }

    /// Stops the Kotlin compilers of roots `keep` says no to.
    async fn stop_kotlin_compilers(&self, stop: impl Fn(&KotlinCompiler) -> bool) {
        let stopped: Vec<Arc<KotlinCompiler>> = {
            let mut compilers = lock(&self.kotlin);
            let roots: Vec<PathBuf> = compilers
                .iter()
                .filter(|(_, compiler)| stop(compiler))
                .map(|(root, _)| root.clone())
                .collect();
            roots
                .iter()
                .filter_map(|root| compilers.remove(root))
                .collect()
        };
        for compiler in stopped {
            tracing::debug!(root = %compiler.root().display(), "stopping the Kotlin compiler");
            compiler.shutdown().await;
        }
    }
}

/// Tells one server about a batch of changes: `didChangeWatchedFiles` for every change (the
/// run's own included: servers learn of created and deleted files only this way), and open
/// documents changed or removed outside the run synced again (the run's own writes are synced
/// by the check that follows them). After a gap every open document is compared with the disk.
/// Returns the open documents synced from the disk (or closed).
fn tell_server(server: &LanguageServer, table: &ServerTable, changes: &Changes) -> Vec<PathBuf> {
    let mut told: Vec<(PathBuf, WatchedChange)> = Vec::new();
    let mut resync: Vec<PathBuf> = Vec::new();
    let open = server.open_documents();
    for change in &changes.changes {
        let kind = match change.kind {
            ChangeKind::Created => WatchedChange::Created,
            ChangeKind::Changed => WatchedChange::Changed,
            ChangeKind::Removed => WatchedChange::Deleted,
        };
        told.push((change.path.clone(), kind));
        if change.outside {
            if change.is_dir {
                resync.extend(open.iter().filter(|p| p.starts_with(&change.path)).cloned());
            } else {
                resync.push(change.path.clone());
            }
        }
    }
    if changes.gap.is_some() {
        resync = open.clone();
    }
    let fallback: Vec<String> = table
        .family(server.family())
        .map(|family| {
            family
                .extensions
                .iter()
                .chain(&family.markers)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let sent = match server.files_changed(&told, &fallback) {
        Ok(sent) => sent,
        Err(error) => {
            tracing::debug!(server = server.name(), %error, "could not send watched-file changes");
            0
        }
    };
    let synced = server.resync_from_disk(&resync);
    if sent > 0 || !synced.is_empty() {
        server.note_disk_change();
    }
    // A server that re-checks its open files only on a save (clangd) does not look again at
    // a header changed, created or deleted on disk: one save makes it.
    if server.spec().save_reparses_all
        && (changes.gap.is_some() || told.iter().any(|(path, _)| !open.contains(path)))
    {
        if let Some(first) = server.open_documents().first() {
            let _ = server.save(first);
        }
    }
    if !synced.is_empty() {
        tracing::debug!(
            server = server.name(),
            files = synced.len(),
            "open documents synced from disk"
        );
    }
    synced
}

/// Asks for the symbols of each written file ([`ServerSpec::reads_batch_before_check`]): the
/// server has then read every one of them before it checks any file of the batch or its
/// dependents ("Undefined method" for a method renamed in two files otherwise).
///
/// [`ServerSpec::reads_batch_before_check`]: crate::table::ServerSpec::reads_batch_before_check
async fn read_before_checking<'a>(server: &LanguageServer, paths: impl Iterator<Item = &'a Path>) {
    for path in paths {
        let params = lsp_types::DocumentSymbolParams {
            text_document: lsp_types::TextDocumentIdentifier::new(crate::uri::file_uri(path)),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let _ = server
            .request_json::<lsp_types::request::DocumentSymbolRequest>(
                params,
                Duration::from_secs(5),
            )
            .await;
    }
}

/// Sends the disk text of `path` to `server`: `Ok(None)` when the file is gone.
fn sync_from_disk(
    server: &LanguageServer,
    family: &Family,
    path: &Path,
) -> Result<Option<crate::server::SyncTicket>, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("could not read it back: {error}")),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Err("not UTF-8 text; language servers only read text".into());
    };
    server
        .sync_unsaved(path, &text, &family.language_id(path))
        .map(Some)
        .map_err(|error| format!("{error}; it restarts on the next call"))
}

/// A ticket for the open document `path`, its text unchanged, checked again after a change
/// of other files: sent again as a change to a server that re-checks only what changed
/// ([`crate::ServerSpec::recheck_by_change`]), else waiting for what the server publishes
/// after publish number `since` (or pulls afresh).
fn recheck(server: &LanguageServer, path: &Path, since: u64) -> Option<crate::server::SyncTicket> {
    if server.spec().recheck_by_change {
        server.resend(path).ok().flatten()
    } else {
        server.recheck(path, since)
    }
}

/// The written files of a group whose server cannot start, each unchecked for `reason`.
fn unchecked_written(paths: Vec<(PathBuf, bool)>, reason: &str) -> Vec<(PathBuf, CheckOutcome)> {
    let mut outcomes = Vec::new();
    for (path, is_written) in paths {
        if is_written {
            outcomes.push((
                path,
                CheckOutcome::Unchecked {
                    reason: reason.to_owned(),
                },
            ));
        }
    }
    outcomes
}

/// One server's files of a check (`true` for a written one), with the publish number they
/// are synced after: what each phase of [`ServerPool::check_group`] reads.
struct Batch<'a> {
    server: &'a Arc<LanguageServer>,
    family: &'a Family,
    paths: &'a [(PathBuf, bool)],
    since: u64,
}

/// The synced files of a batch by who checks them: the server, nobody (the server reads
/// them for navigation only) or the Kotlin compiler.
struct Routed {
    tickets: Vec<(crate::server::SyncTicket, bool)>,
    navigation_only: Vec<PathBuf>,
    compiled_paths: Vec<PathBuf>,
}

/// The files given to the Kotlin compiler, which of the batch were written, and when they
/// were synced.
struct KotlinFiles<'a> {
    paths: Vec<PathBuf>,
    written_paths: &'a [PathBuf],
    synced_at: Instant,
}

impl Batch<'_> {
    /// Sends each written file to the server (or asks for it again when only its
    /// dependencies changed); the files that cannot be sent get their outcome now.
    fn sync_written(
        &self,
        outcomes: &mut Vec<(PathBuf, CheckOutcome)>,
    ) -> Vec<(crate::server::SyncTicket, bool)> {
        let (server, since) = (self.server, self.since);
        let mut tickets = Vec::new();
        // Every written file first, then the saves: a server never checks a file of the
        // batch against another's old text.
        for (path, is_written) in self.paths.iter().filter(|(_, w)| *w) {
            // The file is as the server has it, but files it depends on changed on disk
            // since the server's last list for it (the shell broke a callee): that list may
            // be stale, so the file is checked again as a dependent is.
            if server.spec().cross_file
                && !server.supports_pull()
                && server.published_before_disk_change(path)
                && std::fs::read_to_string(path).ok() == server.synced_text(path)
            {
                if let Some(ticket) = recheck(server, path, since) {
                    tickets.push((ticket, *is_written));
                    continue;
                }
            }
            match sync_from_disk(server, self.family, path) {
                Ok(Some(ticket)) => tickets.push((ticket, *is_written)),
                Ok(None) => {
                    server.close(path);
                    outcomes.push((path.clone(), CheckOutcome::Removed));
                }
                Err(reason) => outcomes.push((path.clone(), CheckOutcome::Unchecked { reason })),
            }
        }
        tickets
    }

    /// Saves the synced files as the server needs, then syncs the dependents a cross-file
    /// server checks, adding their tickets.
    async fn save_and_add_dependents(&self, tickets: &mut Vec<(crate::server::SyncTicket, bool)>) {
        let (server, since) = (self.server, self.since);
        if server.spec().reads_batch_before_check {
            read_before_checking(server, tickets.iter().map(|(t, _)| t.path.as_path())).await;
        }
        let saved: Vec<&PathBuf> = if server.spec().save_reparses_all {
            tickets.iter().map(|(t, _)| &t.path).take(1).collect()
        } else {
            tickets.iter().map(|(t, _)| &t.path).collect()
        };
        let nothing_saved = saved.is_empty();
        for path in saved {
            let _ = server.save(path);
        }
        if server.spec().cross_file {
            let dependents = self
                .paths
                .iter()
                .filter(|(path, w)| !*w && server.spec().diagnoses(path));
            for (path, _) in dependents {
                let disk = std::fs::read_to_string(path).ok();
                let same = disk.is_some() && server.synced_text(path) == disk;
                let ticket = if same {
                    recheck(server, path, since)
                } else {
                    sync_from_disk(server, self.family, path).ok().flatten()
                };
                if let Some(ticket) = ticket {
                    tickets.push((ticket, false));
                }
            }
        }
        // clangd re-checks its open files (and sees a header gone or back) only on a save, and
        // rust-analyzer's `cargo check` (which alone reports a module file gone) runs on one:
        // a batch that wrote nothing still open (a deleted file) still needs a save.
        if nothing_saved
            && (server.spec().save_reparses_all || server.spec().check_progress.is_some())
        {
            if let Some((ticket, _)) = tickets.first() {
                let _ = server.save(&ticket.path);
            }
        }
    }

    /// Splits the synced files by who checks them: the server, nobody, or (for a Java
    /// server) the Kotlin compiler.
    fn route(&self, tickets: Vec<(crate::server::SyncTicket, bool)>) -> Routed {
        let server = self.server;
        let (tickets, navigation_only): (Vec<_>, Vec<_>) = tickets
            .into_iter()
            .partition(|(ticket, _)| server.spec().diagnoses(&ticket.path));
        // Kotlin files (written, or dependents of the write) go to the Kotlin compiler, which
        // compiles them all at once, while the server's waits run.
        let mut compiled_paths: Vec<PathBuf> = Vec::new();
        let mut navigation_only: Vec<PathBuf> =
            navigation_only.into_iter().map(|(t, _)| t.path).collect();
        if server.spec().java_runtime {
            let kotlin_dependents = self.paths.iter().filter(|(path, w)| {
                !*w && !server.spec().diagnoses(path) && crate::kotlin::compiles(path)
            });
            navigation_only.extend(kotlin_dependents.map(|(path, _)| path.clone()));
            let (kotlin, rest): (Vec<_>, Vec<_>) = navigation_only
                .into_iter()
                .partition(|path| crate::kotlin::compiles(path) && path.exists());
            compiled_paths = kotlin;
            navigation_only = rest;
        }
        Routed {
            tickets,
            navigation_only,
            compiled_paths,
        }
    }

    /// Waits for the server's diagnostics of every ticket at once, adding each outcome.
    async fn wait_for(
        &self,
        tickets: Vec<(crate::server::SyncTicket, bool)>,
        outcomes: &mut Vec<(PathBuf, CheckOutcome)>,
    ) {
        let waits: Vec<_> = tickets
            .into_iter()
            .map(|(ticket, _)| {
                let server = self.server.clone();
                tokio::spawn(async move {
                    let outcome = outcome_of(&server, &ticket).await;
                    (ticket.path, outcome)
                })
            })
            .collect();
        for wait in waits {
            match wait.await {
                Ok(result) => outcomes.push(result),
                Err(error) => tracing::warn!(%error, "a diagnostics wait failed"),
            }
        }
    }

    /// Waits for the Kotlin compile and adds the outcome of each file it was given.
    async fn add_kotlin_outcomes(
        &self,
        compile: tokio::task::JoinHandle<
            Result<Arc<crate::kotlin::Compiled>, crate::kotlin::NotChecked>,
        >,
        kotlin_files: KotlinFiles<'_>,
        outcomes: &mut Vec<(PathBuf, CheckOutcome)>,
    ) {
        let KotlinFiles {
            paths: compiled_paths,
            written_paths,
            synced_at,
        } = kotlin_files;
        let result = compile.await.unwrap_or_else(|error| {
            Err(crate::kotlin::NotChecked::Unchecked(format!(
                "the Kotlin compile task failed: {error}"
            )))
        });
        for path in compiled_paths {
            let outcome = match &result {
                Ok(compiled) => CheckOutcome::Checked {
                    server: "kotlinc".into(),
                    diagnostics: dedup(compiled.of(&path)),
                    unchanged: false,
                    via: Some(Via::Compiler),
                    synced_at,
                    answered_at: Some(Instant::now()),
                },
                Err(crate::kotlin::NotChecked::Pending(reason)) => CheckOutcome::Pending {
                    server: "kotlinc".into(),
                    reason: reason.clone(),
                },
                // A dependent that cannot be checked is left out, as elsewhere.
                Err(crate::kotlin::NotChecked::Unchecked(_)) if !written_paths.contains(&path) => {
                    continue
                }
                Err(crate::kotlin::NotChecked::Unchecked(reason)) => CheckOutcome::Unchecked {
                    reason: format!(
                        "{} reports no diagnostics for .kt files (it reads them for navigation only), and {reason}",
                        self.server.spec().name
                    ),
                },
            };
            outcomes.push((path, outcome));
        }
    }
}

/// One diagnostic per (line, code, message): rust-analyzer pushes `cargo check`'s finding once
/// per target that compiles the file (a bench shared by eleven targets), and reports some of
/// them itself too.
fn dedup(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut seen = std::collections::HashSet::new();
    diagnostics
        .into_iter()
        .filter(|d| seen.insert((d.line, d.code.clone(), d.message.clone())))
        .collect()
}

/// Waits for the diagnostics of `ticket` and says what came of it.
async fn outcome_of(server: &LanguageServer, ticket: &crate::server::SyncTicket) -> CheckOutcome {
    let outcome = raw_outcome_of(server, ticket).await;
    match outcome {
        CheckOutcome::Checked {
            server,
            diagnostics,
            unchanged,
            via,
            synced_at,
            answered_at,
        } => CheckOutcome::Checked {
            server,
            diagnostics: dedup(diagnostics),
            unchanged,
            via,
            synced_at,
            answered_at,
        },
        other => other,
    }
}

async fn raw_outcome_of(
    server: &LanguageServer,
    ticket: &crate::server::SyncTicket,
) -> CheckOutcome {
    match server.diagnostics(ticket).await {
        DiagnosticsOutcome::Fresh {
            diagnostics,
            answered_at,
            via,
        } => CheckOutcome::Checked {
            server: server.name().to_owned(),
            diagnostics,
            unchanged: false,
            via: Some(via),
            synced_at: ticket.sent_at,
            answered_at: Some(answered_at),
        },
        DiagnosticsOutcome::Unchanged { diagnostics } => CheckOutcome::Checked {
            server: server.name().to_owned(),
            diagnostics,
            unchanged: true,
            via: None,
            synced_at: ticket.sent_at,
            answered_at: None,
        },
        DiagnosticsOutcome::Pending {
            waited,
            indexing,
            seen,
        } => CheckOutcome::Pending {
            server: server.name().to_owned(),
            reason: format!(
                "no diagnostics for this version after {}: {}{seen}",
                fmt_duration(waited),
                if indexing {
                    "it was still indexing; "
                } else {
                    ""
                }
            ),
        },
        DiagnosticsOutcome::Failed(error) => CheckOutcome::Unchecked {
            reason: format!("{error}; it restarts on the next call"),
        },
    }
}

fn describe_skipped(skipped: &[Skipped]) -> Vec<String> {
    skipped
        .iter()
        .map(|s| format!("{} {}", s.path.display(), s.reason))
        .collect()
}

/// Folders of `workspace` (the root itself, and a few levels down) that hold a marker; the
/// workspace walk decides which folders are looked in (no hidden, ignored or dependency ones).
pub(crate) fn marker_roots(workspace: &Path, markers: &[String]) -> Vec<PathBuf> {
    if markers.is_empty() {
        return vec![workspace.to_path_buf()];
    }
    cc_workspace::walk::Walk::new(workspace)
        .max_depth(4)
        .limit(20_000)
        .dirs()
        .map(|dir| dir.path)
        .filter(|dir| markers.iter().any(|m| dir.join(m).exists()))
        .collect()
}
