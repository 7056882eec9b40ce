//! What the client knows of one server, shared by the tasks that read its messages and the
//! calls that wait on them: its publishes and pulls, progress, registrations, and the
//! documents synced to it.

use super::incoming::ApplyEdit;
use crate::capabilities::PositionEncoding;
use crate::diagnostic::Diagnostic;
use lsp_types::WorkspaceFolder;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio::time::Instant;

pub(super) type Docs = Arc<Mutex<HashMap<PathBuf, Doc>>>;

pub(super) fn lock_docs(docs: &Docs) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Doc>> {
    cc_process::lock(docs)
}

#[derive(Debug)]
pub(super) struct Published {
    pub(super) version: Option<i64>,
    pub(super) diagnostics: Vec<Diagnostic>,
    /// The LSP objects as sent (code actions need them back verbatim).
    pub(super) raw: Vec<Value>,
    pub(super) seq: u64,
    pub(super) at: Instant,
    /// (seq, time, version) of recent publishes, to find the first one after a change.
    pub(super) history: VecDeque<(u64, Instant, Option<i64>)>,
    /// clangd: the file went idle after this publish with no preamble work in between (see
    /// `diagnostics`).
    pub(super) settled: bool,
    /// clangd: preamble work ("parsing includes", or a "Built preamble" line) came after
    /// this publish, so another publish follows.
    pub(super) rebuilding: bool,
    /// clangd: a save's "running Update" came after this publish.
    pub(super) updating: bool,
    /// clangd: when the file went idle after that update without publishing again. If no
    /// preamble was built by a moment later (its log line may trail the status), the update
    /// reused the preamble and changed nothing: the list stands.
    pub(super) idle_after_update: Option<Instant>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) published: HashMap<PathBuf, Published>,
    /// The last pulled diagnostics per file (for `unchanged` reports).
    pub(super) pulled: HashMap<PathBuf, Vec<Diagnostic>>,
    /// The same, as the LSP objects the server sent.
    pub(super) pulled_raw: HashMap<PathBuf, Vec<Value>>,
    pub(super) seq: u64,
    /// Work in progress: token → (title, its last message).
    pub(super) progress: HashMap<String, (String, Option<String>)>,
    pub(super) quiescent: Option<bool>,
    pub(super) idle_since: Instant,
    pub(super) registrations: HashMap<String, (String, Value)>,
    pub(super) refresh_gen: u64,
    pub(super) last_error_message: Option<String>,
    /// The server reports its loading state ([`ServerSpec::reports_status`]): until it has,
    /// it counts as busy.
    pub(super) expects_status: bool,
    /// The server has not yet logged that it is ready ([`ServerSpec::ready_when_logged`]).
    pub(super) awaiting_ready_log: bool,
    /// The server's background index has not been built yet ([`ServerSpec::index_progress`]).
    pub(super) awaiting_index: bool,
    /// The sequence number of the last `didSave` sent.
    pub(super) save_seq: u64,
    /// The sequence number when the server was last told of files changed on disk
    /// ([`crate::LanguageServer::note_disk_change`]).
    pub(super) disk_change_seq: u64,
    /// The sequence number of the last begin of the check a save starts
    /// ([`ServerSpec::check_progress`]).
    pub(super) check_begin_seq: u64,
    /// clangd's per-file status (`textDocument/clangd.fileStatus`), with the sequence number
    /// and time it arrived at.
    pub(super) file_status: HashMap<PathBuf, (String, u64, Instant)>,
    /// The sequence number of clangd's last "Built preamble" log line for each file.
    pub(super) preamble_builds: HashMap<PathBuf, u64>,
}

impl Inner {
    /// A server's state before it said anything: idle since `now`, busy until it reports its
    /// status, logs that it is ready or builds its index, as its spec expects.
    pub(super) fn new(
        now: Instant,
        expects_status: bool,
        awaiting_ready_log: bool,
        awaiting_index: bool,
    ) -> Self {
        Inner {
            published: HashMap::new(),
            pulled: HashMap::new(),
            pulled_raw: HashMap::new(),
            seq: 0,
            progress: HashMap::new(),
            quiescent: None,
            idle_since: now,
            registrations: HashMap::new(),
            refresh_gen: 0,
            last_error_message: None,
            file_status: HashMap::new(),
            preamble_builds: HashMap::new(),
            expects_status,
            awaiting_ready_log,
            awaiting_index,
            save_seq: 0,
            disk_change_seq: 0,
            check_begin_seq: 0,
        }
    }

    pub(super) fn busy(&self) -> bool {
        !self.progress.is_empty()
            || self.quiescent == Some(false)
            || (self.expects_status && self.quiescent.is_none())
            || self.awaiting_ready_log
            || self.awaiting_index
    }

    pub(super) fn set_busy_state(&mut self, was_busy: bool) {
        if was_busy && !self.busy() {
            self.idle_since = Instant::now();
        }
    }
}

pub(super) struct State {
    pub(super) server: String,
    /// [`ServerSpec::index_progress`].
    pub(super) index_progress: Option<String>,
    /// [`ServerSpec::ready_when_logged`].
    pub(super) ready_when_logged: Vec<String>,
    /// [`ServerSpec::check_progress`].
    pub(super) check_progress: Option<String>,
    pub(super) inner: Mutex<Inner>,
    pub(super) changed: watch::Sender<u64>,
    pub(super) settings: Value,
    pub(super) folder: WorkspaceFolder,
    pub(super) applier: Option<Arc<dyn ApplyEdit>>,
    pub(super) encoding: Mutex<PositionEncoding>,
    /// The documents synced to the server (shared with [`LanguageServer`]).
    pub(super) docs: Docs,
}

impl State {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        cc_process::lock(&self.inner)
    }

    pub(super) fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

#[derive(Debug, Clone)]
pub(super) struct Doc {
    pub(super) version: i64,
    pub(super) text: String,
    /// The language id it was opened with.
    pub(super) language_id: String,
    /// The publish sequence number when this version was sent: publishes after it may be
    /// about this version.
    pub(super) seq_before: u64,
    /// When this version was sent.
    pub(super) sent_at: Instant,
}
