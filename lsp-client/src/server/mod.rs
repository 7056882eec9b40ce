//! One running language server: initialization, the answers to its requests, document sync,
//! and waiting for the diagnostics of an exact version.
//!
//! - this file: starting and initializing the server, what it declared, requests and
//!   notifications sent to it, shutdown;
//! - [`state`]: what the client knows of the server;
//! - [`incoming`]: the server's requests and notifications;
//! - [`sync`]: document sync;
//! - [`wait`]: waiting for the diagnostics of a synced version;
//! - [`watched`]: files changed on disk (`workspace/didChangeWatchedFiles`, open documents
//!   synced again).

mod incoming;
mod state;
mod sync;
mod wait;
mod watched;

pub use crate::capabilities::PositionEncoding;
pub use incoming::ApplyEdit;
pub use wait::{DiagnosticsOutcome, SyncTicket, Via};
pub use watched::WatchedChange;

use incoming::handle_incoming;
use state::{Docs, Inner, State};

use crate::capabilities::{initialize_params, ServerCaps};
use crate::detect::Resolved;
use crate::error::LspError;
use crate::ext::PullDiagnostics;
use crate::process::ServerProcess;
use crate::table::ServerSpec;
use crate::transport::{Connection, IncomingReceiver};

/// A connection and, for a server this client started, its process.
struct Link {
    process: Option<ServerProcess>,
    conn: Connection,
    incoming: IncomingReceiver,
}
use crate::uri::file_uri;
use lsp_types::notification::{DidChangeConfiguration, Exit, Initialized, Notification};
use lsp_types::request::{Request, Shutdown};
use lsp_types::{DidChangeConfigurationParams, InitializedParams, WorkspaceFolder};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long `initialize` may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether the project at `root` has a compilation database (clangd then indexes it).
fn has_compilation_database(root: &Path) -> bool {
    ["compile_commands.json", "build/compile_commands.json"]
        .iter()
        .any(|name| root.join(name).is_file())
}

/// A running, initialized language server.
pub struct LanguageServer {
    family: String,
    spec: ServerSpec,
    binary: PathBuf,
    root: PathBuf,
    conn: Arc<Connection>,
    /// The process, for a server this client started (none over an in-memory peer).
    process: Option<ServerProcess>,
    capabilities: ServerCaps,
    encoding: PositionEncoding,
    state: Arc<State>,
    docs: Docs,
    shutting_down: AtomicBool,
    last_used: Mutex<Instant>,
    started: Instant,
}

impl std::fmt::Debug for LanguageServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageServer")
            .field("name", &self.spec.name)
            .field("root", &self.root)
            .field("pid", &self.pid())
            .finish_non_exhaustive()
    }
}

impl LanguageServer {
    /// Starts the resolved server at `root`, and initializes it.
    pub async fn start(
        family: &str,
        resolved: &Resolved,
        root: &Path,
        path_var: &std::ffi::OsStr,
        applier: Option<Arc<dyn ApplyEdit>>,
    ) -> Result<Arc<LanguageServer>, LspError> {
        let spec = &resolved.spec;
        let mut command = tokio::process::Command::new(&resolved.binary);
        command
            .args(spec.command.iter().skip(1))
            .current_dir(root)
            .env("PATH", path_var)
            .envs(spec.env.iter().map(|(k, v)| (k, v)));
        let (process, conn, incoming) = ServerProcess::spawn(&spec.name, command, spec.reads_log)
            .map_err(|error| LspError::Spawn {
            server: spec.name.clone(),
            detail: format!("{}: {error}", resolved.binary.display()),
        })?;
        let link = Link {
            process: Some(process),
            conn,
            incoming,
        };
        Self::initialize_link(family, spec, &resolved.binary, root, link, applier).await
    }

    /// Initializes a server over an existing connection (an in-memory peer in tests).
    pub async fn initialize(
        family: &str,
        spec: &ServerSpec,
        binary: &Path,
        root: &Path,
        conn: Connection,
        incoming: IncomingReceiver,
        applier: Option<Arc<dyn ApplyEdit>>,
    ) -> Result<Arc<LanguageServer>, LspError> {
        let link = Link {
            process: None,
            conn,
            incoming,
        };
        Self::initialize_link(family, spec, binary, root, link, applier).await
    }

    async fn initialize_link(
        family: &str,
        spec: &ServerSpec,
        binary: &Path,
        root: &Path,
        Link {
            process,
            conn,
            incoming,
        }: Link,
        applier: Option<Arc<dyn ApplyEdit>>,
    ) -> Result<Arc<LanguageServer>, LspError> {
        let conn = Arc::new(conn);
        let folder = WorkspaceFolder {
            uri: file_uri(root),
            name: root
                .file_name()
                .map_or_else(|| "root".to_owned(), |n| n.to_string_lossy().into_owned()),
        };
        let (changed, _) = watch::channel(0u64);
        let state = Arc::new(State {
            server: spec.name.clone(),
            index_progress: spec.index_progress.clone(),
            ready_when_logged: spec.ready_when_logged.clone(),
            check_progress: spec.check_progress.clone(),
            inner: Mutex::new(Inner::new(
                Instant::now(),
                spec.reports_status,
                !spec.ready_when_logged.is_empty() || spec.ready_after_search,
                spec.index_progress.is_some() && has_compilation_database(root),
            )),
            changed,
            settings: spec.settings.clone(),
            folder: folder.clone(),
            applier,
            encoding: Mutex::new(PositionEncoding::Utf16),
            docs: Arc::new(Mutex::new(HashMap::new())),
        });
        tokio::spawn(handle_incoming(
            incoming,
            state.clone(),
            Arc::downgrade(&conn),
        ));

        let params = initialize_params(root, &folder, &spec.init_options);
        let method = <lsp_types::request::Initialize as Request>::METHOD;
        let result = conn
            .request_value(method, params, INITIALIZE_TIMEOUT)
            .await?;
        // Of an `InitializeResult` only the capabilities are used, read leniently (see
        // `ServerCaps::read`): a `serverInfo` of another shape must not stop the server.
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let capabilities = ServerCaps::read(&spec.name, capabilities);
        let encoding = capabilities.encoding();
        *cc_process::lock(&state.encoding) = encoding;
        conn.notify::<Initialized>(InitializedParams {})?;
        if !spec.settings.is_null() {
            conn.notify::<DidChangeConfiguration>(DidChangeConfigurationParams {
                settings: spec.settings.clone(),
            })?;
        }
        if spec.ready_after_search {
            let (conn, state, cap) = (conn.clone(), state.clone(), spec.timing.indexing_cap);
            tokio::spawn(async move {
                // Any answer (an error too) means searches are no longer held.
                let query = serde_json::json!({"query": "cc-search-index-warm-up"});
                let _ = conn.request_value("workspace/symbol", query, cap).await;
                state.ready();
            });
        }
        let docs = state.docs.clone();
        Ok(Arc::new(LanguageServer {
            family: family.to_owned(),
            spec: spec.clone(),
            binary: binary.to_path_buf(),
            root: root.to_path_buf(),
            conn,
            process,
            capabilities,
            encoding,
            state,
            docs,
            shutting_down: AtomicBool::new(false),
            last_used: Mutex::new(Instant::now()),
            started: Instant::now(),
        }))
    }

    /// The server's name (`basedpyright`).
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The family it serves (`python`).
    pub fn family(&self) -> &str {
        &self.family
    }

    /// Its project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The binary that runs.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// Its table entry.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// Its process id (and process group).
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ServerProcess::pid)
    }

    /// The negotiated position encoding.
    pub fn encoding(&self) -> PositionEncoding {
        self.encoding
    }

    /// The capabilities it declared in `initialize`, as sent.
    pub fn capabilities(&self) -> &Value {
        &self.capabilities.raw
    }

    /// The same, typed (its defaults where lsp-types could not read what was sent).
    pub fn server_capabilities(&self) -> &lsp_types::ServerCapabilities {
        &self.capabilities.typed
    }

    /// Whether the server answers `textDocument/prepareRename`.
    pub fn prepares_rename(&self) -> bool {
        self.capabilities.prepares_rename()
    }

    /// How long ago it was started.
    pub fn age(&self) -> Duration {
        self.started.elapsed()
    }

    /// Whether its process is gone.
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    /// Whether it ended without being asked to.
    pub fn crashed(&self) -> Option<String> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return None;
        }
        let closed = self.conn.closed()?;
        let mut reason = format!(
            "{} exited{}",
            self.spec.name,
            closed.status.map(|s| format!(" ({s})")).unwrap_or_default()
        );
        let tail = closed.stderr_tail.trim();
        if !tail.is_empty() {
            let last = tail.lines().last().unwrap_or(tail);
            reason.push_str(&format!("; last stderr line: {last}"));
        }
        Some(reason)
    }

    /// Whether it reports work in progress (indexing, a check).
    pub fn is_busy(&self) -> bool {
        self.state.lock().busy()
    }

    /// Titles of the progress it reports now.
    pub fn progress_titles(&self) -> Vec<String> {
        let inner = self.state.lock();
        let mut titles: Vec<String> = inner
            .progress
            .values()
            .map(|(title, message)| match message {
                Some(message) if !message.is_empty() => format!("{title} ({message})"),
                _ => title.clone(),
            })
            .collect();
        if inner.awaiting_ready_log {
            titles.push("finding the workspace's files".into());
        }
        if inner.expects_status && inner.quiescent != Some(true) {
            titles.push("loading the workspace".into());
        }
        if inner.awaiting_index
            && !inner
                .progress
                .values()
                .any(|(t, _)| Some(t) == self.spec.index_progress.as_ref())
        {
            titles.push("about to index the workspace".into());
        }
        titles.sort();
        titles
    }

    /// The last error the server showed, if any.
    pub fn last_error_message(&self) -> Option<String> {
        self.state.lock().last_error_message.clone()
    }

    /// When it was last used.
    pub fn last_used(&self) -> Instant {
        *cc_process::lock(&self.last_used)
    }

    fn touch(&self) {
        *cc_process::lock(&self.last_used) = Instant::now();
    }

    /// Methods registered dynamically (`textDocument/diagnostic`, …).
    pub fn registered_methods(&self) -> Vec<String> {
        let mut methods: Vec<String> = self
            .state
            .lock()
            .registrations
            .values()
            .map(|(method, _)| method.clone())
            .collect();
        methods.sort();
        methods.dedup();
        methods
    }

    /// Whether the server offers `method`: declared with `provider` in its capabilities, or
    /// registered dynamically.
    pub fn supports(&self, provider: &str, method: &str) -> bool {
        self.capabilities.declares(provider)
            || self
                .state
                .lock()
                .registrations
                .values()
                .any(|(m, _)| m == method)
    }

    /// Whether diagnostics can be pulled (declared, or registered as basedpyright does).
    pub fn supports_pull(&self) -> bool {
        self.supports("diagnosticProvider", "textDocument/diagnostic")
    }

    fn pull_identifier(&self) -> Option<String> {
        self.capabilities.pull_identifier().or_else(|| {
            self.state
                .lock()
                .registrations
                .values()
                .find(|(m, _)| m == PullDiagnostics::METHOD)
                .and_then(|(_, options)| crate::capabilities::registered_identifier(options))
        })
    }

    /// Sends the typed request `R`, with a timeout, and reads its typed answer.
    pub async fn request<R: Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, LspError> {
        self.touch();
        let result = self.conn.request::<R>(params, timeout).await;
        self.touch();
        result
    }

    /// [`LanguageServer::request`] with the answer as sent: for answers read leniently
    /// (servers' answers outside what lsp-types accepts, and renderings that show them as
    /// sent).
    pub async fn request_json<R: Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<Value, LspError> {
        self.touch();
        let result = self.conn.request_json::<R>(params, timeout).await;
        self.touch();
        result
    }

    /// Sends the typed notification `N`.
    pub fn notify<N: Notification>(&self, params: N::Params) -> Result<(), LspError> {
        self.conn.notify::<N>(params)
    }

    fn exited_error(&self, method: &str) -> LspError {
        let closed = self.conn.closed().unwrap_or_default();
        LspError::ServerExited {
            server: self.spec.name.clone(),
            method: method.to_owned(),
            status: closed.status,
            stderr_tail: closed.stderr_tail,
        }
    }

    /// `shutdown`, `exit`, then SIGKILL of the whole process group after `grace`.
    pub async fn shutdown(&self, grace: Duration) {
        self.shutting_down.store(true, Ordering::SeqCst);
        if !self.conn.is_closed() {
            let _ = self.conn.request::<Shutdown>((), grace).await;
            let _ = self.conn.notify::<Exit>(());
        }
        if let Some(process) = &self.process {
            process.kill_after(grace).await;
        }
    }
}
