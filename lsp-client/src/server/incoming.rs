//! Messages from the server: its requests answered (`workspace/configuration`,
//! `client/registerCapability`, `workspace/applyEdit`, …) and its notifications and log
//! lines read into the shared state (`publishDiagnostics`, `$/progress`,
//! `experimental/serverStatus`, clangd's file status and preamble log).

use super::state::{lock_docs, Published, State};
use super::sync::{send_change, send_close};
use crate::capabilities::PositionEncoding;
use crate::diagnostic::Diagnostic;
use crate::ext::{
    ClangdFileStatus, FoldingRangeRefresh, PublishDiagnostics, ServerStatus, UnregisterCapability,
};
use crate::transport::{Connection, Incoming};
use crate::uri::uri_path;
use crate::workspace_edit::ApplyError;
use lsp_types::notification::{LogMessage, Notification, Progress, ShowMessage};
use lsp_types::request::{
    ApplyWorkspaceEdit, CodeLensRefresh, InlayHintRefreshRequest, InlineValueRefreshRequest,
    RegisterCapability, Request, SemanticTokensRefresh, ShowDocument, ShowMessageRequest,
    WorkDoneProgressCreate, WorkspaceConfiguration, WorkspaceDiagnosticRefresh,
    WorkspaceFoldersRequest,
};
use lsp_types::{
    ApplyWorkspaceEditResponse, ConfigurationParams, LogMessageParams, MessageType, NumberOrString,
    ProgressParams, ProgressParamsValue, RegistrationParams, ShowDocumentResult, ShowMessageParams,
    WorkDoneProgress, WorkspaceEdit,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use tokio::sync::mpsc;
use tokio::time::Instant;

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

impl State {
    /// The answer to a server request other than `workspace/applyEdit`.
    pub(super) fn answer(&self, method: &str, params: Value) -> Result<Value, (i64, String)> {
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

    pub(super) fn notice(&self, method: &str, params: Value) {
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
                    if state.contains("running Update") {
                        // A save's update of an unchanged file: it publishes again only if
                        // it had to build a new preamble (the log says so).
                        published.updating = true;
                        published.idle_after_update = None;
                    } else if state.contains("parsing includes") {
                        published.rebuilding = true;
                    } else if state == "idle" && !published.rebuilding {
                        if published.updating {
                            published.idle_after_update = Some(Instant::now());
                        } else {
                            published.settled = true;
                        }
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
    pub(super) fn decode_notice<N: Notification>(&self, params: Value) -> Option<N::Params> {
        serde_json::from_value(params)
            .map_err(|error| {
                tracing::debug!(server = %self.server, method = N::METHOD, %error, "skipped a notification of another shape");
            })
            .ok()
    }

    pub(super) fn published(&self, params: crate::ext::Published) {
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
            updating: false,
            idle_after_update: None,
        });
        entry.version = version;
        entry.settled = false;
        entry.rebuilding = false;
        entry.updating = false;
        entry.idle_after_update = None;
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

    pub(super) fn progress(&self, params: ProgressParams) {
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
    pub(super) fn logged(&self, method: &str, message: &str) {
        tracing::debug!(server = %self.server, "{method}: {message}");
        if self
            .ready_when_logged
            .iter()
            .any(|line| message.contains(line.as_str()))
        {
            self.ready();
        }
    }

    /// The server said it is ready ([`ServerSpec::ready_when_logged`],
    /// [`ServerSpec::ready_after_search`]).
    pub(super) fn ready(&self) {
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

/// The parameters of a server request; invalid ones are answered as such.
pub(super) fn decode<P: DeserializeOwned>(params: Value) -> Result<P, (i64, String)> {
    serde_json::from_value(params).map_err(|error| (-32602, format!("invalid params: {error}")))
}

/// A typed answer as JSON.
pub(super) fn reply<T: Serialize>(answer: T) -> Result<Value, (i64, String)> {
    serde_json::to_value(answer).map_err(|error| (-32603, error.to_string()))
}

impl State {
    /// A line of the server's log. clangd's "Built preamble of size N for file F version V
    /// in T seconds" says that a change made F's preamble stale and that the list published
    /// next for F is the one against the new preamble (see `diagnostics`).
    pub(super) fn log(&self, line: &str) {
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
            // The line comes on stderr, publishes and statuses on stdout: it can be read after
            // the publish it preceded. clangd is idle only when no preamble is building, and a
            // build begun later says "parsing includes" first, so a file that went idle after
            // its last publish built this preamble before that publish.
            if published.settled {
                tracing::debug!(server = %self.server, path = %file.display(), "preamble log trailed the publish");
                return;
            }
            published.rebuilding = true;
        }
        inner.preamble_builds.insert(file, seq);
        drop(inner);
        self.bump();
    }
}

/// The settings value for `section` (`python.analysis` walks two levels), or `null`.
pub(super) fn lookup_section(settings: &Value, section: Option<&str>) -> Value {
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

impl State {
    /// `workspace/applyEdit`: applied all or nothing by the applier, on a blocking thread.
    /// Its `edit` is read by `workspace_edit::parse` (which also takes snippet edits), its
    /// `label` is not used.
    pub(super) async fn apply_edit(
        &self,
        params: Value,
    ) -> (ApplyWorkspaceEditResponse, Vec<PathBuf>) {
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
        let encoding = *cc_process::lock(&self.encoding);
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
pub(super) fn resync(state: &State, conn: &Connection, paths: &[PathBuf]) {
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

pub(super) async fn handle_incoming(
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
