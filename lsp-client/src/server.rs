//! One running language server: initialization, the answers to its requests, document sync,
//! and waiting for the diagnostics of an exact version.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lsp_types::notification::{
    DidChangeConfiguration, DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Exit, Initialized, LogMessage, Notification, Progress, ShowMessage,
};
use lsp_types::request::{
    ApplyWorkspaceEdit, CodeLensRefresh, InlayHintRefreshRequest, InlineValueRefreshRequest,
    RegisterCapability, Request, SemanticTokensRefresh, ShowDocument, ShowMessageRequest, Shutdown,
    WorkDoneProgressCreate, WorkspaceConfiguration, WorkspaceDiagnosticRefresh,
    WorkspaceFoldersRequest,
};
use lsp_types::{
    ApplyWorkspaceEditResponse, ConfigurationParams, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, DocumentDiagnosticParams, ExecuteCommandParams, InitializedParams,
    LogMessageParams, MessageType, NumberOrString, PartialResultParams, ProgressParams,
    ProgressParamsValue, RegistrationParams, ShowDocumentResult, ShowMessageParams,
    TextDocumentContentChangeEvent, TextDocumentIdentifier, TextDocumentItem,
    VersionedTextDocumentIdentifier, WorkDoneProgress, WorkDoneProgressParams, WorkspaceEdit,
    WorkspaceFolder,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

pub use crate::capabilities::PositionEncoding;
use crate::capabilities::{initialize_params, ServerCaps};
use crate::detect::Resolved;
use crate::diagnostic::Diagnostic;
use crate::error::LspError;
use crate::ext::{
    ClangdFileStatus, FoldingRangeRefresh, PublishDiagnostics, PullDiagnostics, ServerStatus,
    TsserverRequest, UnregisterCapability,
};
use crate::table::{ServerSpec, Timing};
use crate::transport::{Connection, Incoming};
use crate::uri::{file_uri, uri_path};
use crate::workspace_edit::ApplyError;

/// How long `initialize` may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// Pull retries after "content modified" or "server cancelled".
const PULL_RETRIES: u32 = 8;

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
    folder: WorkspaceFolder,
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

    /// The answer to a server request other than `workspace/applyEdit`.
    fn answer(&self, method: &str, params: Value) -> Result<Value, (i64, String)> {
        match method {
            WorkspaceConfiguration::METHOD => {
                let params: ConfigurationParams = decode(params)?;
                let answers: Vec<Value> = params
                    .items
                    .iter()
                    .map(|item| lookup_section(&self.settings, item.section.as_deref()))
                    .collect();
                reply(answers)
            }
            RegisterCapability::METHOD => {
                let params: RegistrationParams = decode(params)?;
                let mut inner = self.lock();
                for registration in params.registrations {
                    inner.registrations.insert(
                        registration.id,
                        (
                            registration.method,
                            registration.register_options.unwrap_or(Value::Null),
                        ),
                    );
                }
                drop(inner);
                self.bump();
                reply(())
            }
            UnregisterCapability::METHOD => {
                let params: <UnregisterCapability as Request>::Params = decode(params)?;
                let mut inner = self.lock();
                for item in params.unregisterations {
                    inner.registrations.remove(&item.id);
                }
                drop(inner);
                self.bump();
                reply(())
            }
            WorkspaceDiagnosticRefresh::METHOD => {
                self.lock().refresh_gen += 1;
                self.bump();
                reply(())
            }
            WorkspaceFoldersRequest::METHOD => reply(Some(vec![self.folder.clone()])),
            ShowDocument::METHOD => reply(ShowDocumentResult { success: false }),
            // Nothing to do but say yes (progress comes as `$/progress` whether or not its
            // token was created here) or, for a question, not answer it.
            WorkDoneProgressCreate::METHOD
            | ShowMessageRequest::METHOD
            | SemanticTokensRefresh::METHOD
            | InlayHintRefreshRequest::METHOD
            | InlineValueRefreshRequest::METHOD
            | CodeLensRefresh::METHOD
            | FoldingRangeRefresh::METHOD => reply(()),
            other => Err((-32601, format!("method not found: {other}"))),
        }
    }

    fn notice(&self, method: &str, params: Value) {
        match method {
            PublishDiagnostics::METHOD => {
                if let Some(params) = self.decode_notice::<PublishDiagnostics>(params) {
                    self.published(params);
                }
            }
            Progress::METHOD => {
                if let Some(params) = self.decode_notice::<Progress>(params) {
                    self.progress(params);
                }
            }
            ServerStatus::METHOD => {
                let Some(params) = self.decode_notice::<ServerStatus>(params) else {
                    return;
                };
                let mut inner = self.lock();
                let was_busy = inner.busy();
                inner.quiescent = params.quiescent;
                if let Some(message) = params.message {
                    if params.health.as_deref() == Some("error") {
                        inner.last_error_message = Some(message);
                    }
                }
                inner.set_busy_state(was_busy);
                drop(inner);
                self.bump();
            }
            ClangdFileStatus::METHOD => {
                let Some(params) = self.decode_notice::<ClangdFileStatus>(params) else {
                    return;
                };
                let Some(path) = uri_path(&params.uri) else {
                    return;
                };
                let state = params.state;
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
                inner.file_status.insert(path, (state, seq, Instant::now()));
                drop(inner);
                self.bump();
            }
            ShowMessage::METHOD => {
                if let Some(ShowMessageParams { typ, message }) =
                    self.decode_notice::<ShowMessage>(params)
                {
                    self.logged(method, &message);
                    if typ == MessageType::ERROR {
                        self.lock().last_error_message = Some(message);
                    }
                }
            }
            LogMessage::METHOD => {
                if let Some(LogMessageParams { message, .. }) =
                    self.decode_notice::<LogMessage>(params)
                {
                    self.logged(method, &message);
                }
            }
            _ => {}
        }
    }

    /// The parameters of notification `N`; `None` (logged) when they are not its shape.
    fn decode_notice<N: Notification>(&self, params: Value) -> Option<N::Params> {
        serde_json::from_value(params)
            .map_err(|error| {
                tracing::debug!(server = %self.server, method = N::METHOD, %error, "skipped a notification of another shape");
            })
            .ok()
    }

    fn published(&self, params: crate::ext::Published) {
        let Some(path) = uri_path(&params.uri) else {
            return;
        };
        let version = params.version;
        let diagnostics = Diagnostic::list_from_lsp(&params.diagnostics);
        let raw = params.diagnostics;
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

    fn progress(&self, params: ProgressParams) {
        let token = match params.token {
            NumberOrString::String(token) => token,
            NumberOrString::Number(token) => token.to_string(),
        };
        let ProgressParamsValue::WorkDone(value) = params.value;
        let mut inner = self.lock();
        let was_busy = inner.busy();
        let is_check = self
            .check_progress
            .as_deref()
            .is_some_and(|prefix| token.starts_with(prefix));
        match value {
            WorkDoneProgress::Begin(begin) => {
                if is_check {
                    inner.seq += 1;
                    inner.check_begin_seq = inner.seq;
                }
                inner.progress.insert(token, (begin.title, begin.message));
            }
            WorkDoneProgress::End(_) => {
                let ended = inner.progress.remove(&token);
                if ended.is_some_and(|(title, _)| {
                    self.index_progress.as_deref() == Some(title.as_str())
                }) {
                    inner.awaiting_index = false;
                }
            }
            WorkDoneProgress::Report(report) => {
                if let Some(entry) = inner.progress.get_mut(&token) {
                    if report.message.is_some() {
                        entry.1 = report.message;
                    }
                }
            }
        }
        inner.set_busy_state(was_busy);
        drop(inner);
        self.bump();
    }

    /// A `window/logMessage` or `window/showMessage`: the server may log that it is ready
    /// ([`ServerSpec::ready_when_logged`]).
    fn logged(&self, method: &str, message: &str) {
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
    }
}

/// The parameters of a server request; invalid ones are answered as such.
fn decode<P: DeserializeOwned>(params: Value) -> Result<P, (i64, String)> {
    serde_json::from_value(params).map_err(|error| (-32602, format!("invalid params: {error}")))
}

/// A typed answer as JSON.
fn reply<T: Serialize>(answer: T) -> Result<Value, (i64, String)> {
    serde_json::to_value(answer).map_err(|error| (-32603, error.to_string()))
}

/// One of tsserver's diagnostics as the LSP object typescript-language-server publishes.
fn lsp_from_tsserver(item: &Value) -> Option<Value> {
    use lsp_types::{DiagnosticSeverity, DiagnosticTag, Position, Range};
    let position = |key: &str| {
        let at = item.get(key)?;
        let line = at.get("line")?.as_u64()?.checked_sub(1)?;
        let character = at.get("offset")?.as_u64()?.checked_sub(1)?;
        Some(Position::new(
            u32::try_from(line).ok()?,
            u32::try_from(character).ok()?,
        ))
    };
    let severity = match item.get("category").and_then(Value::as_str) {
        Some("warning") => DiagnosticSeverity::WARNING,
        Some("suggestion") => DiagnosticSeverity::HINT,
        Some("message") => DiagnosticSeverity::INFORMATION,
        _ => DiagnosticSeverity::ERROR,
    };
    let flag = |key: &str| item.get(key).and_then(Value::as_bool) == Some(true);
    let tags: Vec<DiagnosticTag> = [
        (flag("reportsUnnecessary"), DiagnosticTag::UNNECESSARY),
        (flag("reportsDeprecated"), DiagnosticTag::DEPRECATED),
    ]
    .into_iter()
    .filter_map(|(set, tag)| set.then_some(tag))
    .collect();
    let diagnostic = lsp_types::Diagnostic {
        range: Range::new(position("start")?, position("end")?),
        severity: Some(severity),
        message: item.get("text")?.as_str()?.to_owned(),
        source: Some(
            item.get("source")
                .and_then(Value::as_str)
                .unwrap_or("typescript")
                .to_owned(),
        ),
        code: item
            .get("code")
            .and_then(|code| serde_json::from_value(code.clone()).ok()),
        tags: (!tags.is_empty()).then_some(tags),
        ..lsp_types::Diagnostic::default()
    };
    serde_json::to_value(diagnostic).ok()
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
        *state
            .encoding
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = encoding;
        conn.notify::<Initialized>(InitializedParams {})?;
        if !spec.settings.is_null() {
            conn.notify::<DidChangeConfiguration>(DidChangeConfigurationParams {
                settings: spec.settings.clone(),
            })?;
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
        self.note_save();
        send_save(&self.conn, path, include_text.then_some(text))
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
                send_change(&self.conn, path, doc.version, text)?;
                doc.version
            }
            None => {
                self.conn
                    .notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                        text_document: TextDocumentItem {
                            uri: file_uri(path),
                            language_id: language_id.to_owned(),
                            version: 1,
                            text: text.to_owned(),
                        },
                    })?;
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
            self.note_save();
            send_save(&self.conn, path, include_text.then(|| text.to_owned()))?;
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
        if let Some(include_text) = self.capabilities.save() {
            return Some(include_text);
        }
        self.state
            .lock()
            .registrations
            .values()
            .find(|(method, _)| method == DidSaveTextDocument::METHOD)
            .map(|(_, options)| {
                serde_json::from_value::<lsp_types::TextDocumentSaveRegistrationOptions>(
                    options.clone(),
                )
                .ok()
                .and_then(|options| options.include_text)
                .unwrap_or(false)
            })
    }

    /// Closes `path` (a deleted file).
    pub fn close(&self, path: &Path) {
        if self.docs_lock().remove(path).is_some() {
            let _ = send_close(&self.conn, path);
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
                .request::<TsserverRequest>(
                    ExecuteCommandParams {
                        command: "typescript.tsserverRequest".into(),
                        arguments: vec![
                            json!(command),
                            json!({"file": file, "includeLinePosition": false}),
                        ],
                        work_done_progress_params: WorkDoneProgressParams::default(),
                    },
                    cap,
                )
                .await
                .ok()??;
            let items = answer.body?;
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
        let params = DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier::new(file_uri(&ticket.path)),
            identifier: self.pull_identifier(),
            previous_result_id: None,
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        };
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
                .request::<PullDiagnostics>(params.clone(), until - now)
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
            let report = report.unwrap_or_default();
            let unchanged = report.kind.as_deref() == Some("unchanged");
            let mut inner = self.state.lock();
            let mut diagnostics = if unchanged {
                inner.pulled.get(&ticket.path).cloned().unwrap_or_default()
            } else {
                let diagnostics = Diagnostic::list_from_lsp(&report.items);
                inner.pulled_raw.insert(ticket.path.clone(), report.items);
                diagnostics
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
            let _ = self.conn.request::<Shutdown>((), grace).await;
            let _ = self.conn.notify::<Exit>(());
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
    /// Its `edit` is read by `workspace_edit::parse` (which also takes snippet edits), its
    /// `label` is not used.
    async fn apply_edit(&self, params: Value) -> (ApplyWorkspaceEditResponse, Vec<PathBuf>) {
        let refused = |reason: String| ApplyWorkspaceEditResponse {
            applied: false,
            failure_reason: Some(reason),
            failed_change: None,
        };
        let Some(applier) = self.applier.clone() else {
            let reason = "this client applies no edits on a server's request";
            return (refused(reason.into()), Vec::new());
        };
        let mut params = params;
        let edit = params.get_mut("edit").map(Value::take).unwrap_or_default();
        let edit: WorkspaceEdit = match crate::workspace_edit::parse(edit) {
            Ok(edit) => edit,
            Err(error) => return (refused(error.to_string()), Vec::new()),
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
            Ok(written) => (
                ApplyWorkspaceEditResponse {
                    applied: true,
                    failure_reason: None,
                    failed_change: None,
                },
                written,
            ),
            Err(reason) => (refused(reason.to_string()), Vec::new()),
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
        match std::fs::read_to_string(path) {
            Ok(text) if text != doc.text => {
                doc.version += 1;
                doc.seq_before = seq_before;
                let _ = send_change(conn, path, doc.version, &text);
                doc.text = text;
            }
            Ok(_) => {}
            Err(_) => {
                docs.remove(path);
                let _ = send_close(conn, path);
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
            Incoming::Request { id, method, params } if method == ApplyWorkspaceEdit::METHOD => {
                let (answer, written) = state.apply_edit(params).await;
                if let Some(conn) = conn.upgrade() {
                    conn.respond(id, reply(answer));
                    resync(&state, &conn, &written);
                }
            }
            Incoming::Request { id, method, params } => {
                let answer = state.answer(&method, params);
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

/// A full-text `didChange` to `version`.
fn send_change(conn: &Connection, path: &Path, version: i64, text: &str) -> Result<(), LspError> {
    conn.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
        text_document: VersionedTextDocumentIdentifier::new(file_uri(path), lsp_version(version)),
        content_changes: vec![TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: text.to_owned(),
        }],
    })
}

/// `didSave`, with the text when the server asked for it.
fn send_save(conn: &Connection, path: &Path, text: Option<String>) -> Result<(), LspError> {
    conn.notify::<DidSaveTextDocument>(DidSaveTextDocumentParams {
        text_document: TextDocumentIdentifier::new(file_uri(path)),
        text,
    })
}

fn send_close(conn: &Connection, path: &Path) -> Result<(), LspError> {
    conn.notify::<DidCloseTextDocument>(DidCloseTextDocumentParams {
        text_document: TextDocumentIdentifier::new(file_uri(path)),
    })
}

/// A document version as LSP's `integer` (versions count up from 1).
fn lsp_version(version: i64) -> i32 {
    i32::try_from(version).unwrap_or(i32::MAX)
}
