//! One running language server: initialization, the answers to its requests, document sync,
//! and waiting for the diagnostics of an exact version.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::detect::Resolved;
use crate::diagnostic::Diagnostic;
use crate::error::LspError;
use crate::table::{ServerSpec, Timing};
use crate::transport::{Connection, Incoming};
use crate::uri::{path_to_uri, uri_to_path};
use crate::workspace_edit::ApplyError;
use lsp_types::WorkspaceEdit;

/// How long `initialize` may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// Pull retries after "content modified" or "server cancelled".
const PULL_RETRIES: u32 = 8;

/// The unit of `Position.character` that the server and client agreed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (the LSP default).
    Utf16,
    /// Unicode scalar values.
    Utf32,
}

impl PositionEncoding {
    fn from_capabilities(capabilities: &Value) -> Self {
        match capabilities.get("positionEncoding").and_then(Value::as_str) {
            Some("utf-8") => PositionEncoding::Utf8,
            Some("utf-32") => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        }
    }

    /// `utf-8`, `utf-16`, `utf-32`.
    pub fn as_str(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }
}

/// Applies a `WorkspaceEdit` that a server asked for (`workspace/applyEdit`), all or nothing.
///
/// It runs on a blocking thread. Afterwards the server is sent the new text of every file it
/// has open among those written (and `didClose` for those gone).
pub trait ApplyEdit: Send + Sync {
    /// Applies `edit` (an LSP `WorkspaceEdit`) whose positions are in `encoding`; `versions`
    /// gives the version last synced to the server for an open file. Returns every path
    /// written, created, moved (both ends) or deleted; an error says why nothing was changed.
    fn apply(
        &self,
        edit: &WorkspaceEdit,
        encoding: PositionEncoding,
        versions: &dyn Fn(&Path) -> Option<i64>,
    ) -> Result<Vec<PathBuf>, ApplyError>;
}

type Docs = Arc<Mutex<HashMap<PathBuf, Doc>>>;

fn lock_docs(docs: &Docs) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Doc>> {
    docs.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What came back for one synced version.
#[derive(Debug, Clone)]
pub enum DiagnosticsOutcome {
    /// The diagnostics of that version (or a later one).
    Fresh {
        /// Every diagnostic of the file, all severities.
        diagnostics: Vec<Diagnostic>,
        /// When the server's answer arrived (the publish or the pull response).
        answered_at: Instant,
        /// How they were obtained.
        via: Via,
    },
    /// A server that republishes only on change stayed quiet after publishing for the file
    /// before: the last list stands. (Never for a file it has not published for yet.)
    Unchanged {
        /// The last list it published for the file.
        diagnostics: Vec<Diagnostic>,
    },
    /// No answer within the cap.
    Pending {
        /// How long we waited.
        waited: Duration,
        /// Whether the server reported that it was still indexing.
        indexing: bool,
    },
    /// The server failed (exited, refused).
    Failed(LspError),
}

/// How diagnostics were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `textDocument/diagnostic`.
    Pull,
    /// A `publishDiagnostics` carrying the synced version.
    VersionedPush,
    /// A `publishDiagnostics` without a version, after the settle window.
    UnversionedPush,
    /// The server's own checker, asked directly for the file's diagnostics
    /// ([`crate::ServerSpec::tsserver_probe`]).
    Probe,
    /// A versioned publish after a rebuild of what the file includes, taken as final once
    /// the file stayed idle a moment (clangd after a header change).
    Settled,
}

/// A synced version, to wait on.
#[derive(Debug, Clone)]
pub struct SyncTicket {
    /// The file.
    pub path: PathBuf,
    /// The version sent.
    pub version: i64,
    /// When the change was sent.
    pub sent_at: Instant,
    seq_before: u64,
    /// This sync opened the document (`didOpen`): the server builds it from scratch.
    opened: bool,
}

#[derive(Debug)]
struct Published {
    version: Option<i64>,
    diagnostics: Vec<Diagnostic>,
    /// The LSP objects as sent (code actions need them back verbatim).
    raw: Vec<Value>,
    seq: u64,
    at: Instant,
    /// (seq, time, version) of recent publishes, to find the first one after a change.
    history: VecDeque<(u64, Instant, Option<i64>)>,
    /// clangd: the file went idle after this publish with no preamble work in between (see
    /// `diagnostics`).
    settled: bool,
    /// clangd: preamble work ("parsing includes", or a "Built preamble" line) came after
    /// this publish, so another publish follows.
    rebuilding: bool,
}

#[derive(Debug)]
struct Inner {
    published: HashMap<PathBuf, Published>,
    /// The last pulled diagnostics per file (for `unchanged` reports).
    pulled: HashMap<PathBuf, Vec<Diagnostic>>,
    /// The same, as the LSP objects the server sent.
    pulled_raw: HashMap<PathBuf, Vec<Value>>,
    seq: u64,
    /// Work in progress: token → (title, its last message).
    progress: HashMap<String, (String, Option<String>)>,
    quiescent: Option<bool>,
    idle_since: Instant,
    registrations: HashMap<String, (String, Value)>,
    refresh_gen: u64,
    last_error_message: Option<String>,
    /// The server reports its loading state ([`ServerSpec::reports_status`]): until it has,
    /// it counts as busy.
    expects_status: bool,
    /// The server has not yet logged that it is ready ([`ServerSpec::ready_when_logged`]).
    awaiting_ready_log: bool,
    /// The server's background index has not been built yet ([`ServerSpec::index_progress`]).
    awaiting_index: bool,
    /// The sequence number of the last `didSave` sent.
    save_seq: u64,
    /// The sequence number of the last begin of the check a save starts
    /// ([`ServerSpec::check_progress`]).
    check_begin_seq: u64,
    /// clangd's per-file status (`textDocument/clangd.fileStatus`), with the sequence number
    /// and time it arrived at.
    file_status: HashMap<PathBuf, (String, u64, Instant)>,
    /// The sequence number of clangd's last "Built preamble" log line for each file.
    preamble_builds: HashMap<PathBuf, u64>,
}

impl Inner {
    fn busy(&self) -> bool {
        !self.progress.is_empty()
            || self.quiescent == Some(false)
            || (self.expects_status && self.quiescent.is_none())
            || self.awaiting_ready_log
            || self.awaiting_index
    }

    fn set_busy_state(&mut self, was_busy: bool) {
        if was_busy && !self.busy() {
            self.idle_since = Instant::now();
        }
    }
}

struct State {
    server: String,
    /// [`ServerSpec::index_progress`].
    index_progress: Option<String>,
    /// [`ServerSpec::ready_when_logged`].
    ready_when_logged: Vec<String>,
    /// [`ServerSpec::check_progress`].
    check_progress: Option<String>,
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
    settings: Value,
    folder: Value,
    applier: Option<Arc<dyn ApplyEdit>>,
    encoding: Mutex<PositionEncoding>,
    /// The documents synced to the server (shared with [`LanguageServer`]).
    docs: Docs,
}

impl State {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn answer(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "workspace/configuration" => {
                let items = params.get("items").and_then(Value::as_array);
                let answers: Vec<Value> = items
                    .map(|items| {
                        items
                            .iter()
                            .map(|item| {
                                let section = item.get("section").and_then(Value::as_str);
                                lookup_section(&self.settings, section)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Ok(Value::Array(answers))
            }
            "client/registerCapability" => {
                let mut inner = self.lock();
                for registration in params
                    .get("registrations")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let id = registration.get("id").and_then(Value::as_str).unwrap_or("");
                    let method = registration
                        .get("method")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let options = registration
                        .get("registerOptions")
                        .cloned()
                        .unwrap_or(Value::Null);
                    inner
                        .registrations
                        .insert(id.to_owned(), (method.to_owned(), options));
                }
                drop(inner);
                self.bump();
                Ok(Value::Null)
            }
            "client/unregisterCapability" => {
                let mut inner = self.lock();
                // The spec's field name is misspelt; accept both.
                let list = params
                    .get("unregisterations")
                    .or_else(|| params.get("unregistrations"))
                    .and_then(Value::as_array);
                for item in list.into_iter().flatten() {
                    if let Some(id) = item.get("id").and_then(Value::as_str) {
                        inner.registrations.remove(id);
                    }
                }
                drop(inner);
                self.bump();
                Ok(Value::Null)
            }
            "window/workDoneProgress/create" => Ok(Value::Null),
            "workspace/diagnostic/refresh" => {
                self.lock().refresh_gen += 1;
                self.bump();
                Ok(Value::Null)
            }
            "workspace/workspaceFolders" => Ok(json!([self.folder])),
            "window/showMessageRequest" => Ok(Value::Null),
            "window/showDocument" => Ok(json!({"success": false})),
            "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/inlineValue/refresh"
            | "workspace/codeLens/refresh"
            | "workspace/foldingRange/refresh" => Ok(Value::Null),
            other => Err((-32601, format!("method not found: {other}"))),
        }
    }

    fn notice(&self, method: &str, params: Value) {
        match method {
            "textDocument/publishDiagnostics" => {
                let Some(path) = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .and_then(uri_to_path)
                else {
                    return;
                };
                let version = params.get("version").and_then(Value::as_i64);
                let diagnostics = Diagnostic::list_from_lsp(params.get("diagnostics"));
                let raw = raw_list(params.get("diagnostics"));
                let now = Instant::now();
                let mut inner = self.lock();
                inner.seq += 1;
                let seq = inner.seq;
                tracing::debug!(server = %self.server, path = %path.display(), ?version, seq = inner.seq, count = diagnostics.len(), "publish");
                let entry = inner.published.entry(path).or_insert_with(|| Published {
                    version: None,
                    diagnostics: Vec::new(),
                    raw: Vec::new(),
                    seq: 0,
                    at: now,
                    history: VecDeque::new(),
                    settled: false,
                    rebuilding: false,
                });
                entry.version = version;
                entry.settled = false;
                entry.rebuilding = false;
                entry.diagnostics = diagnostics;
                entry.raw = raw;
                entry.seq = seq;
                entry.at = now;
                if entry.history.len() == 16 {
                    entry.history.pop_front();
                }
                entry.history.push_back((seq, now, version));
                drop(inner);
                self.bump();
            }
            "$/progress" => {
                let token = match params.get("token") {
                    Some(Value::String(token)) => token.clone(),
                    Some(other) => other.to_string(),
                    None => return,
                };
                let value = params.get("value").cloned().unwrap_or(Value::Null);
                let mut inner = self.lock();
                let was_busy = inner.busy();
                let is_check = self
                    .check_progress
                    .as_deref()
                    .is_some_and(|prefix| token.starts_with(prefix));
                match value.get("kind").and_then(Value::as_str) {
                    Some("begin") => {
                        if is_check {
                            inner.seq += 1;
                            inner.check_begin_seq = inner.seq;
                        }
                        let title = value.get("title").and_then(Value::as_str).unwrap_or("");
                        let message = value
                            .get("message")
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                        inner.progress.insert(token, (title.to_owned(), message));
                    }
                    Some("end") => {
                        let ended = inner.progress.remove(&token);
                        if ended.is_some_and(|(title, _)| {
                            self.index_progress.as_deref() == Some(title.as_str())
                        }) {
                            inner.awaiting_index = false;
                        }
                    }
                    Some("report") => {
                        let message = value
                            .get("message")
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                        if let Some(entry) = inner.progress.get_mut(&token) {
                            if message.is_some() {
                                entry.1 = message;
                            }
                        }
                    }
                    _ => {}
                }
                inner.set_busy_state(was_busy);
                drop(inner);
                self.bump();
            }
            "experimental/serverStatus" => {
                let mut inner = self.lock();
                let was_busy = inner.busy();
                inner.quiescent = params.get("quiescent").and_then(Value::as_bool);
                if let Some(message) = params.get("message").and_then(Value::as_str) {
                    if params.get("health").and_then(Value::as_str) == Some("error") {
                        inner.last_error_message = Some(message.to_owned());
                    }
                }
                inner.set_busy_state(was_busy);
                drop(inner);
                self.bump();
            }
            "textDocument/clangd.fileStatus" => {
                let Some(path) = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .and_then(uri_to_path)
                else {
                    return;
                };
                let state = params.get("state").and_then(Value::as_str).unwrap_or("");
                tracing::debug!(server = %self.server, path = %path.display(), state, "file status");
                let mut inner = self.lock();
                inner.seq += 1;
                let seq = inner.seq;
                if let Some(published) = inner.published.get_mut(&path) {
                    if state.contains("parsing includes") {
                        published.rebuilding = true;
                    } else if state == "idle" && !published.rebuilding {
                        published.settled = true;
                    }
                }
                inner
                    .file_status
                    .insert(path, (state.to_owned(), seq, Instant::now()));
                drop(inner);
                self.bump();
            }
            "window/showMessage" | "window/logMessage" => {
                let message = params.get("message").and_then(Value::as_str).unwrap_or("");
                tracing::debug!(server = %self.server, "{method}: {message}");
                if self
                    .ready_when_logged
                    .iter()
                    .any(|line| message.contains(line.as_str()))
                {
                    let mut inner = self.lock();
                    if inner.awaiting_ready_log {
                        let was_busy = inner.busy();
                        inner.awaiting_ready_log = false;
                        inner.set_busy_state(was_busy);
                        drop(inner);
                        self.bump();
                    }
                }
                if method == "window/showMessage"
                    && params.get("type").and_then(Value::as_i64) == Some(1)
                {
                    self.lock().last_error_message = Some(message.to_owned());
                }
            }
            _ => {}
        }
    }
}

/// One of tsserver's diagnostics as the LSP object typescript-language-server publishes.
fn lsp_from_tsserver(item: &Value) -> Option<Value> {
    let position = |key: &str| {
        let at = item.get(key)?;
        let line = at.get("line")?.as_u64()?.checked_sub(1)?;
        let character = at.get("offset")?.as_u64()?.checked_sub(1)?;
        Some(json!({"line": line, "character": character}))
    };
    let severity = match item.get("category").and_then(Value::as_str) {
        Some("warning") => 2,
        Some("suggestion") => 4,
        Some("message") => 3,
        _ => 1,
    };
    let mut tags = Vec::new();
    if item.get("reportsUnnecessary").and_then(Value::as_bool) == Some(true) {
        tags.push(1);
    }
    if item.get("reportsDeprecated").and_then(Value::as_bool) == Some(true) {
        tags.push(2);
    }
    let mut diagnostic = json!({
        "range": {"start": position("start")?, "end": position("end")?},
        "severity": severity,
        "message": item.get("text")?.as_str()?,
        "source": item.get("source").and_then(Value::as_str).unwrap_or("typescript"),
    });
    if let Some(code) = item.get("code") {
        diagnostic["code"] = code.clone();
    }
    if !tags.is_empty() {
        diagnostic["tags"] = json!(tags);
    }
    Some(diagnostic)
}

/// Whether the project at `root` has a compilation database (clangd then indexes it).
fn has_compilation_database(root: &Path) -> bool {
    ["compile_commands.json", "build/compile_commands.json"]
        .iter()
        .any(|name| root.join(name).is_file())
}

impl State {
    /// A line of the server's log. clangd's "Built preamble of size N for file F version V
    /// in T seconds" says that a change made F's preamble stale and that the list published
    /// next for F is the one against the new preamble (see `diagnostics`).
    fn log(&self, line: &str) {
        // clangd: nothing to index, so no index progress will come.
        if line.contains("Enqueueing 0 commands for indexing") {
            let mut inner = self.lock();
            let was_busy = inner.busy();
            inner.awaiting_index = false;
            inner.set_busy_state(was_busy);
            drop(inner);
            self.bump();
            return;
        }
        let Some(rest) = line.split_once("Built preamble").map(|(_, rest)| rest) else {
            return;
        };
        let Some(file) = rest
            .split_once(" for file ")
            .and_then(|(_, rest)| rest.rsplit_once(" version "))
            .map(|(file, _)| PathBuf::from(file))
        else {
            return;
        };
        let mut inner = self.lock();
        inner.seq += 1;
        let seq = inner.seq;
        if let Some(published) = inner.published.get_mut(&file) {
            published.rebuilding = true;
        }
        inner.preamble_builds.insert(file, seq);
        drop(inner);
        self.bump();
    }
}

fn raw_list(value: Option<&Value>) -> Vec<Value> {
    value.and_then(Value::as_array).cloned().unwrap_or_default()
}

/// The settings value for `section` (`python.analysis` walks two levels), or `null`.
fn lookup_section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    let mut current = settings;
    for part in section.split('.') {
        match current.get(part) {
            Some(next) => current = next,
            None => return Value::Null,
        }
    }
    current.clone()
}

#[derive(Debug, Clone)]
struct Doc {
    version: i64,
    text: String,
    /// The publish sequence number when this version was sent: publishes after it may be
    /// about this version.
    seq_before: u64,
}

/// A running, initialized language server.
pub struct LanguageServer {
    family: String,
    spec: ServerSpec,
    binary: PathBuf,
    root: PathBuf,
    conn: Arc<Connection>,
    capabilities: Value,
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
            .field("pid", &self.conn.pid())
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
        let (conn, incoming) = Connection::spawn_with(&spec.name, command, spec.reads_log)
            .map_err(|error| LspError::Spawn {
                server: spec.name.clone(),
                detail: format!("{}: {error}", resolved.binary.display()),
            })?;
        Self::initialize(
            family,
            spec,
            &resolved.binary,
            root,
            conn,
            incoming,
            applier,
        )
        .await
    }

    /// Initializes a server over an existing connection (an in-memory peer in tests).
    pub async fn initialize(
        family: &str,
        spec: &ServerSpec,
        binary: &Path,
        root: &Path,
        conn: Connection,
        incoming: mpsc::UnboundedReceiver<Incoming>,
        applier: Option<Arc<dyn ApplyEdit>>,
    ) -> Result<Arc<LanguageServer>, LspError> {
        let conn = Arc::new(conn);
        let root_uri = path_to_uri(root);
        let folder_name = root
            .file_name()
            .map_or_else(|| "root".to_owned(), |n| n.to_string_lossy().into_owned());
        let folder = json!({"uri": root_uri, "name": folder_name});
        let (changed, _) = watch::channel(0u64);
        let state = Arc::new(State {
            server: spec.name.clone(),
            index_progress: spec.index_progress.clone(),
            ready_when_logged: spec.ready_when_logged.clone(),
            check_progress: spec.check_progress.clone(),
            inner: Mutex::new(Inner {
                published: HashMap::new(),
                pulled: HashMap::new(),
                pulled_raw: HashMap::new(),
                seq: 0,
                progress: HashMap::new(),
                quiescent: None,
                idle_since: Instant::now(),
                registrations: HashMap::new(),
                refresh_gen: 0,
                last_error_message: None,
                file_status: HashMap::new(),
                preamble_builds: HashMap::new(),
                expects_status: spec.reports_status,
                awaiting_ready_log: !spec.ready_when_logged.is_empty(),
                awaiting_index: spec.index_progress.is_some() && has_compilation_database(root),
                save_seq: 0,
                check_begin_seq: 0,
            }),
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

        let mut params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "cc-lsp-client", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri,
            "rootPath": root.to_string_lossy(),
            "workspaceFolders": [folder],
            "capabilities": client_capabilities(),
            "trace": "off",
        });
        if !spec.init_options.is_null() {
            params["initializationOptions"] = spec.init_options.clone();
        }
        let result = conn
            .request("initialize", params, INITIALIZE_TIMEOUT)
            .await?;
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let encoding = PositionEncoding::from_capabilities(&capabilities);
        *state
            .encoding
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = encoding;
        conn.notify("initialized", json!({}))?;
        if !spec.settings.is_null() {
            conn.notify(
                "workspace/didChangeConfiguration",
                json!({"settings": spec.settings}),
            )?;
        }
        let docs = state.docs.clone();
        Ok(Arc::new(LanguageServer {
            family: family.to_owned(),
            spec: spec.clone(),
            binary: binary.to_path_buf(),
            root: root.to_path_buf(),
            conn,
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
        self.conn.pid()
    }

    /// The negotiated position encoding.
    pub fn encoding(&self) -> PositionEncoding {
        self.encoding
    }

    /// The capabilities it declared in `initialize`.
    pub fn capabilities(&self) -> &Value {
        &self.capabilities
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
        *self
            .last_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
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
        let declared = self
            .capabilities
            .get(provider)
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false));
        declared
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
        let from_caps = self
            .capabilities
            .get("diagnosticProvider")
            .and_then(|p| p.get("identifier"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        from_caps.or_else(|| {
            self.state
                .lock()
                .registrations
                .values()
                .find(|(m, _)| m == "textDocument/diagnostic")
                .and_then(|(_, options)| options.get("identifier"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }

    /// Sends a request, with a timeout.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, LspError> {
        self.touch();
        let result = self.conn.request(method, params, timeout).await;
        self.touch();
        result
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), LspError> {
        self.conn.notify(method, params)
    }

    /// The documents open in the server.
    pub fn open_documents(&self) -> Vec<PathBuf> {
        let mut open: Vec<PathBuf> = self.docs_lock().keys().cloned().collect();
        open.sort();
        open
    }

    /// The version last sent for `path`, if it is open.
    pub fn version_of(&self, path: &Path) -> Option<i64> {
        self.docs_lock().get(path).map(|doc| doc.version)
    }

    /// The text last sent for `path`, if it is open.
    pub fn synced_text(&self, path: &Path) -> Option<String> {
        self.docs_lock().get(path).map(|doc| doc.text.clone())
    }

    fn docs_lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Doc>> {
        self.docs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends `text` as the new content of `path`: `didOpen` the first time, then a full-text
    /// `didChange` with the next version; then `didSave` when the server asked for it.
    ///
    /// Text the server already has is not sent again: servers skip a change that changes
    /// nothing (clangd publishes nothing for it), so a new version would never be answered.
    /// The ticket then waits for the answer about the version already sent (from now, for
    /// the caps).
    pub fn sync(&self, path: &Path, text: &str, language_id: &str) -> Result<SyncTicket, LspError> {
        self.sync_inner(path, text, language_id, true)
    }

    /// [`LanguageServer::sync`] without `didSave`: for a batch of files that are saved after
    /// all of them are sent ([`LanguageServer::save`]), and for files opened only to be seen.
    pub fn sync_unsaved(
        &self,
        path: &Path,
        text: &str,
        language_id: &str,
    ) -> Result<SyncTicket, LspError> {
        self.sync_inner(path, text, language_id, false)
    }

    /// Sends `didSave` for the open document `path`, when the server asked for saves.
    pub fn save(&self, path: &Path) -> Result<(), LspError> {
        let Some(include_text) = self.save_options() else {
            return Ok(());
        };
        let Some(text) = self.synced_text(path) else {
            return Ok(());
        };
        let mut params = json!({"textDocument": {"uri": path_to_uri(path)}});
        if include_text {
            params["text"] = Value::String(text);
        }
        self.note_save();
        self.conn.notify("textDocument/didSave", params)
    }

    fn note_save(&self) {
        let mut inner = self.state.lock();
        inner.seq += 1;
        inner.save_seq = inner.seq;
    }

    fn sync_inner(
        &self,
        path: &Path,
        text: &str,
        language_id: &str,
        save: bool,
    ) -> Result<SyncTicket, LspError> {
        self.touch();
        let uri = path_to_uri(path);
        let mut docs = self.docs_lock();
        let seq_before = self.state.lock().seq;
        if let Some(doc) = docs.get(path).filter(|doc| doc.text == text) {
            return Ok(SyncTicket {
                path: path.to_path_buf(),
                version: doc.version,
                sent_at: Instant::now(),
                seq_before: doc.seq_before,
                opened: doc.version == 1,
            });
        }
        let version = match docs.get_mut(path) {
            Some(doc) => {
                doc.version += 1;
                doc.text = text.to_owned();
                doc.seq_before = seq_before;
                self.conn.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"text": text}],
                    }),
                )?;
                doc.version
            }
            None => {
                self.conn.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {
                        "uri": uri, "languageId": language_id, "version": 1, "text": text,
                    }}),
                )?;
                docs.insert(
                    path.to_path_buf(),
                    Doc {
                        version: 1,
                        text: text.to_owned(),
                        seq_before,
                    },
                );
                1
            }
        };
        let sent_at = Instant::now();
        if let Some(include_text) = self.save_options().filter(|_| save) {
            let mut params = json!({"textDocument": {"uri": uri}});
            if include_text {
                params["text"] = Value::String(text.to_owned());
            }
            self.note_save();
            self.conn.notify("textDocument/didSave", params)?;
        }
        Ok(SyncTicket {
            path: path.to_path_buf(),
            version,
            sent_at,
            seq_before,
            opened: version == 1,
        })
    }

    /// The number of publishes received so far: a later publish has a higher sequence
    /// number. Taken before a change, it lets [`LanguageServer::recheck`] wait for what the
    /// server publishes about other files after that change.
    pub fn publish_seq(&self) -> u64 {
        self.state.lock().seq
    }

    /// A ticket that waits for the diagnostics of an open document whose own text did not
    /// change, as they stand after a change of another file (a dependent of a written file):
    /// a pull is made afresh; a push counts when it arrived after publish number `since`.
    /// `None` when the document is not open.
    pub fn recheck(&self, path: &Path, since: u64) -> Option<SyncTicket> {
        self.touch();
        let docs = self.docs_lock();
        let doc = docs.get(path)?;
        Some(SyncTicket {
            path: path.to_path_buf(),
            version: doc.version,
            sent_at: Instant::now(),
            seq_before: since,
            opened: false,
        })
    }

    /// Makes the server's copy of `path` match `text` if it differs (or is not open).
    /// No `didSave` is sent: the text is what the disk holds.
    pub fn ensure_synced(
        &self,
        path: &Path,
        text: &str,
        language_id: &str,
    ) -> Result<(), LspError> {
        self.sync_unsaved(path, text, language_id).map(|_| ())
    }

    /// `Some(include_text)` when the server wants `didSave` (declared, or registered as
    /// rust-analyzer does).
    fn save_options(&self) -> Option<bool> {
        let include = |options: &Value| {
            options
                .get("includeText")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let declared = self
            .capabilities
            .get("textDocumentSync")
            .and_then(|sync| sync.get("save"));
        match declared {
            Some(Value::Bool(true)) => return Some(false),
            Some(options @ Value::Object(_)) => return Some(include(options)),
            _ => {}
        }
        self.state
            .lock()
            .registrations
            .values()
            .find(|(method, _)| method == "textDocument/didSave")
            .map(|(_, options)| include(options))
    }

    /// Closes `path` (a deleted file).
    pub fn close(&self, path: &Path) {
        if self.docs_lock().remove(path).is_some() {
            let _ = self.conn.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": path_to_uri(path)}}),
            );
        }
        let mut inner = self.state.lock();
        inner.published.remove(path);
        inner.pulled.remove(path);
        inner.pulled_raw.remove(path);
    }

    /// The diagnostics last pulled or published for `path`, as the LSP objects the server
    /// sent (what `textDocument/codeAction` wants back in its context).
    pub fn raw_diagnostics(&self, path: &Path) -> Vec<Value> {
        let inner = self.state.lock();
        let mut raw = inner.pulled_raw.get(path).cloned().unwrap_or_default();
        if self.spec.tsserver_probe && inner.pulled_raw.contains_key(path) {
            // tsserver's own answer is the whole list; its publishes repeat it, later.
            return raw;
        }
        if let Some(pushed) = inner.published.get(path) {
            for item in &pushed.raw {
                if !raw.contains(item) {
                    raw.push(item.clone());
                }
            }
        }
        raw
    }

    /// The diagnostics last published or pulled for `path` (any version).
    pub fn last_known(&self, path: &Path) -> Option<Vec<Diagnostic>> {
        let inner = self.state.lock();
        let mut known = inner.pulled.get(path).cloned();
        if self.spec.tsserver_probe && known.is_some() {
            return known;
        }
        if let Some(pushed) = inner.published.get(path) {
            let list = known.get_or_insert_with(Vec::new);
            for diagnostic in &pushed.diagnostics {
                if !list.contains(diagnostic) {
                    list.push(diagnostic.clone());
                }
            }
        }
        known
    }

    /// Waits for the diagnostics of the version in `ticket`: pulled when the server supports
    /// it, else the matching push (see the crate docs for the rules).
    pub async fn diagnostics(&self, ticket: &SyncTicket) -> DiagnosticsOutcome {
        let timing = self.spec.timing;
        if self.spec.tsserver_probe && !self.supports_pull() {
            if let Some(diagnostics) = self.tsserver_diagnostics(ticket, timing.cap).await {
                return DiagnosticsOutcome::Fresh {
                    diagnostics,
                    answered_at: Instant::now(),
                    via: Via::Probe,
                };
            }
        }
        let mut changes = self.state.changed.subscribe();
        loop {
            if self.supports_pull() {
                return self.pull(ticket, timing).await;
            }
            changes.borrow_and_update();
            if self.conn.is_closed() {
                return DiagnosticsOutcome::Failed(
                    self.exited_error("textDocument/publishDiagnostics"),
                );
            }
            let now = Instant::now();
            let mut wake;
            {
                let inner = self.state.lock();
                let busy = inner.busy();
                let deadline = deadline(ticket.sent_at, timing, &inner);
                wake = deadline;
                let fresh = inner
                    .published
                    .get(&ticket.path)
                    .filter(|p| p.seq > ticket.seq_before);
                let mut ready_at = None;
                if let Some(published) = fresh {
                    match published.version {
                        Some(version) if version >= ticket.version => {
                            // clangd: a change that makes the file's preamble stale (an
                            // included header changed) is published twice, first against the
                            // old preamble, then against the new one once it is built. Its log
                            // says when a preamble was built ("Built preamble … for file F")
                            // and its status when the file is idle again: the list stands
                            // once the file went idle after it with no preamble work in
                            // between, and it came after the last preamble built since the
                            // change. A file's first build waits for its preamble and
                            // publishes once.
                            let settled = match inner.file_status.get(&ticket.path) {
                                None => true,
                                Some(_) if ticket.opened => true,
                                Some(_) => {
                                    let after_build = inner
                                        .preamble_builds
                                        .get(&ticket.path)
                                        .is_none_or(|built| {
                                            *built <= ticket.seq_before || published.seq > *built
                                        });
                                    published.settled && after_build
                                }
                            };
                            let via = Via::VersionedPush;
                            if settled {
                                ready_at =
                                    Some((published.at.max(inner.idle_since) + timing.settle, via));
                            }
                        }
                        None => {
                            let first = published
                                .history
                                .iter()
                                .find(|(seq, _, _)| *seq > ticket.seq_before)
                                .map_or(published.at, |(_, at, _)| *at);
                            ready_at = Some((
                                first.max(inner.idle_since) + timing.settle,
                                Via::UnversionedPush,
                            ));
                        }
                        Some(_older) => {}
                    }
                }
                if let (Some((at, via)), Some(published)) = (ready_at, fresh) {
                    if !busy && now >= at {
                        return DiagnosticsOutcome::Fresh {
                            diagnostics: published.diagnostics.clone(),
                            answered_at: published.at,
                            via,
                        };
                    }
                    if !busy {
                        wake = wake.min(at);
                    }
                }
                // Silence means "unchanged" only when there is a list it leaves standing: a
                // file the server never published for has no answer yet (pending), which
                // must not read as clean.
                let last = inner.published.get(&ticket.path);
                if let (Some(quiet), None, Some(last)) = (timing.quiet, ready_at, last) {
                    let quiet_at = ticket.sent_at.max(inner.idle_since) + quiet;
                    if !busy && now >= quiet_at {
                        return DiagnosticsOutcome::Unchanged {
                            diagnostics: last.diagnostics.clone(),
                        };
                    }
                    if !busy {
                        wake = wake.min(quiet_at);
                    }
                }
                if now >= deadline {
                    return DiagnosticsOutcome::Pending {
                        waited: now - ticket.sent_at,
                        indexing: busy || inner.idle_since > ticket.sent_at,
                    };
                }
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// Asks tsserver itself for the file's syntactic and semantic diagnostics
    /// (`typescript.tsserverRequest`), the exact answer for the synced text: tsserver handles
    /// requests in order, after the change. typescript-language-server's own publishes come
    /// without versions, one pass at a time (syntax first, a 50 ms debounce each) and not at
    /// all when a list stays empty, so nothing in them says when they are complete.
    /// Suggestion diagnostics are hints, which diagnostics on write never report. `None`
    /// when a request fails (the push is then waited for).
    async fn tsserver_diagnostics(
        &self,
        ticket: &SyncTicket,
        cap: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let file = ticket.path.to_string_lossy();
        let mut diagnostics = Vec::new();
        let mut raw = Vec::new();
        for command in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"] {
            let answer = self
                .request(
                    "workspace/executeCommand",
                    json!({
                        "command": "typescript.tsserverRequest",
                        "arguments": [command, {"file": file, "includeLinePosition": false}],
                    }),
                    cap,
                )
                .await
                .ok()?;
            let items = answer.get("body")?.as_array()?;
            raw.extend(items.iter().filter_map(lsp_from_tsserver));
            diagnostics.extend(items.iter().filter_map(Diagnostic::from_tsserver));
        }
        // As LSP objects too, for the context of code actions (what a publish would carry).
        let mut inner = self.state.lock();
        inner.pulled_raw.insert(ticket.path.clone(), raw);
        inner
            .pulled
            .insert(ticket.path.clone(), diagnostics.clone());
        drop(inner);
        Some(diagnostics)
    }

    async fn pull(&self, ticket: &SyncTicket, timing: Timing) -> DiagnosticsOutcome {
        let mut params = json!({"textDocument": {"uri": path_to_uri(&ticket.path)}});
        if let Some(identifier) = self.pull_identifier() {
            params["identifier"] = Value::String(identifier);
        }
        let mut retries = 0;
        let mut via = Via::Pull;
        loop {
            let (until, generation) = {
                let inner = self.state.lock();
                (deadline(ticket.sent_at, timing, &inner), inner.refresh_gen)
            };
            let now = Instant::now();
            if now >= until {
                return self.pending(ticket);
            }
            let report = match self
                .request("textDocument/diagnostic", params.clone(), until - now)
                .await
            {
                Ok(report) => report,
                Err(error) if error.is_retryable() && retries < PULL_RETRIES => {
                    retries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
                Err(LspError::Timeout { .. }) => continue,
                Err(error) => return DiagnosticsOutcome::Failed(error),
            };
            let answered_at = Instant::now();
            // A save started a check whose results are pushed (rust-analyzer's cargo check):
            // the answer is complete once that check has begun and ended (below, busy).
            if !self.wait_check_begun(ticket, timing).await {
                via = Via::Settled;
            }
            if self.is_busy() {
                if !self.wait_idle(ticket, timing).await {
                    return self.pending(ticket);
                }
                continue;
            }
            // A refresh while we pulled means the answer may predate it: pull again.
            if self.state.lock().refresh_gen != generation && retries < PULL_RETRIES {
                retries += 1;
                continue;
            }
            let unchanged = report.get("kind").and_then(Value::as_str) == Some("unchanged");
            let mut inner = self.state.lock();
            let mut diagnostics = if unchanged {
                inner.pulled.get(&ticket.path).cloned().unwrap_or_default()
            } else {
                inner
                    .pulled_raw
                    .insert(ticket.path.clone(), raw_list(report.get("items")));
                Diagnostic::list_from_lsp(report.get("items"))
            };
            inner
                .pulled
                .insert(ticket.path.clone(), diagnostics.clone());
            // Servers that pull and push (rust-analyzer pushes cargo check results) report
            // both.
            if let Some(pushed) = inner.published.get(&ticket.path) {
                for diagnostic in &pushed.diagnostics {
                    if !diagnostics.contains(diagnostic) {
                        diagnostics.push(diagnostic.clone());
                    }
                }
            }
            return DiagnosticsOutcome::Fresh {
                diagnostics,
                answered_at,
                via,
            };
        }
    }

    /// When a save since `ticket`'s change started the server's check
    /// ([`ServerSpec::check_progress`]), waits until that check has begun (its end is waited
    /// for as the server being busy). False when it did not begin in time: what was pushed
    /// until then is used, and the answer says it settled rather than saw the check.
    async fn wait_check_begun(&self, ticket: &SyncTicket, timing: Timing) -> bool {
        if self.spec.check_progress.is_none() {
            return true;
        }
        let mut changes = self.state.changed.subscribe();
        loop {
            changes.borrow_and_update();
            let until = {
                let inner = self.state.lock();
                if inner.save_seq <= ticket.seq_before || inner.check_begin_seq > inner.save_seq {
                    return true;
                }
                deadline(ticket.sent_at, timing, &inner)
            };
            if self.conn.is_closed() || Instant::now() >= until {
                return false;
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep_until(until) => {}
            }
        }
    }

    /// Waits up to `timeout` for the server to finish the work it reports (indexing);
    /// true when it is idle.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let ticket = SyncTicket {
            path: PathBuf::new(),
            version: 0,
            sent_at: Instant::now(),
            seq_before: 0,
            opened: false,
        };
        let timing = Timing {
            settle: Duration::ZERO,
            quiet: None,
            cap: timeout,
            indexing_cap: timeout,
        };
        self.wait_idle(&ticket, timing).await
    }

    /// Waits until the server is not busy; false when the deadline passed first.
    async fn wait_idle(&self, ticket: &SyncTicket, timing: Timing) -> bool {
        let mut changes = self.state.changed.subscribe();
        loop {
            changes.borrow_and_update();
            let until = {
                let inner = self.state.lock();
                if !inner.busy() {
                    return true;
                }
                deadline(ticket.sent_at, timing, &inner)
            };
            if self.conn.is_closed() || Instant::now() >= until {
                return false;
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep_until(until) => {}
            }
        }
    }

    fn pending(&self, ticket: &SyncTicket) -> DiagnosticsOutcome {
        let inner = self.state.lock();
        DiagnosticsOutcome::Pending {
            waited: Instant::now() - ticket.sent_at,
            indexing: inner.busy() || inner.idle_since > ticket.sent_at,
        }
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
            let _ = self.conn.request("shutdown", Value::Null, grace).await;
            let _ = self.conn.notify("exit", Value::Null);
        }
        self.conn.kill_after(grace).await;
    }
}

/// When to give up: the cap after the change, stretched while the server is busy (up to the
/// indexing cap), and a fresh cap after it went idle.
fn deadline(sent_at: Instant, timing: Timing, inner: &Inner) -> Instant {
    let base = sent_at + timing.cap;
    let longest = sent_at + timing.indexing_cap;
    if inner.busy() {
        longest
    } else if inner.idle_since > sent_at {
        longest.min(base.max(inner.idle_since + timing.cap))
    } else {
        base
    }
}

impl State {
    /// `workspace/applyEdit`: applied all or nothing by the applier, on a blocking thread.
    async fn apply_edit(&self, params: &Value) -> (Value, Vec<PathBuf>) {
        let Some(applier) = self.applier.clone() else {
            let reason = "this client applies no edits on a server's request";
            return (
                json!({"applied": false, "failureReason": reason}),
                Vec::new(),
            );
        };
        let edit = match crate::workspace_edit::parse(
            params.get("edit").cloned().unwrap_or(Value::Null),
        ) {
            Ok(edit) => edit,
            Err(error) => {
                return (
                    json!({"applied": false, "failureReason": error.to_string()}),
                    Vec::new(),
                )
            }
        };
        let encoding = *self
            .encoding
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let docs = self.docs.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let versions = |path: &Path| lock_docs(&docs).get(path).map(|doc| doc.version);
            applier.apply(&edit, encoding, &versions)
        })
        .await
        .unwrap_or_else(|error| Err(ApplyError::Aborted(error.to_string())));
        match outcome {
            Ok(written) => (json!({"applied": true}), written),
            Err(reason) => (
                json!({"applied": false, "failureReason": reason.to_string()}),
                Vec::new(),
            ),
        }
    }
}

/// Tells the server the new text of each open document among `paths` (after an edit it
/// asked for), and closes those that are gone.
fn resync(state: &State, conn: &Connection, paths: &[PathBuf]) {
    let seq_before = state.lock().seq;
    let mut docs = lock_docs(&state.docs);
    for path in paths {
        let Some(doc) = docs.get_mut(path) else {
            continue;
        };
        let uri = path_to_uri(path);
        match std::fs::read_to_string(path) {
            Ok(text) if text != doc.text => {
                doc.version += 1;
                doc.text = text.clone();
                doc.seq_before = seq_before;
                let _ = conn.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"text": text}],
                    }),
                );
            }
            Ok(_) => {}
            Err(_) => {
                docs.remove(path);
                let _ = conn.notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": uri}}),
                );
            }
        }
    }
}

async fn handle_incoming(
    mut incoming: mpsc::UnboundedReceiver<Incoming>,
    state: Arc<State>,
    conn: Weak<Connection>,
) {
    while let Some(message) = incoming.recv().await {
        match message {
            Incoming::Request { id, method, params } if method == "workspace/applyEdit" => {
                let (answer, written) = state.apply_edit(&params).await;
                if let Some(conn) = conn.upgrade() {
                    conn.respond(id, Ok(answer));
                    resync(&state, &conn, &written);
                }
            }
            Incoming::Request { id, method, params } => {
                let answer = state.answer(&method, &params);
                if let Some(conn) = conn.upgrade() {
                    conn.respond(id, answer);
                }
            }
            Incoming::Notification { method, params } => state.notice(&method, params),
            Incoming::Log { line } => state.log(&line),
        }
    }
    // The server is gone: wake every waiter so it sees that.
    state.bump();
}

fn client_capabilities() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-8", "utf-16"]},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "applyEdit": true,
            "workspaceEdit": {
                "documentChanges": true,
                "resourceOperations": ["create", "rename", "delete"],
                "failureHandling": "transactional",
            },
            "didChangeConfiguration": {"dynamicRegistration": true},
            "diagnostics": {"refreshSupport": true},
            "symbol": {"symbolKind": {"valueSet": (1..=26).collect::<Vec<u32>>()}},
        },
        "textDocument": {
            "synchronization": {"dynamicRegistration": true, "didSave": true},
            "publishDiagnostics": {
                "versionSupport": true,
                "relatedInformation": false,
                "tagSupport": {"valueSet": [1, 2]},
                "codeDescriptionSupport": true,
                "dataSupport": true,
            },
            "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "definition": {"linkSupport": true},
            "typeDefinition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "documentSymbol": {
                "hierarchicalDocumentSymbolSupport": true,
                "symbolKind": {"valueSet": (1..=26).collect::<Vec<u32>>()},
            },
            "codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                    "", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                    "refactor.rewrite", "source", "source.organizeImports", "source.fixAll",
                ]}},
                "isPreferredSupport": true,
                "dataSupport": true,
                "resolveSupport": {"properties": ["edit"]},
            },
            "rename": {"prepareSupport": true},
        },
        "window": {"workDoneProgress": true, "showDocument": {"support": false}},
        "experimental": {"serverStatusNotification": true},
    })
}
