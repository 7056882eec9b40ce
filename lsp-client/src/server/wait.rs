//! Waiting for the diagnostics of one synced version: pulled, pushed with that version,
//! asked of tsserver, or unchanged after a quiet window; pending past the cap.

use super::state::{Inner, Published};
use super::LanguageServer;
use crate::diagnostic::Diagnostic;
use crate::error::LspError;
use crate::ext::{PullDiagnostics, TsserverRequest};
use crate::table::Timing;
use crate::uri::file_uri;
use lsp_types::{
    DocumentDiagnosticParams, ExecuteCommandParams, PartialResultParams, TextDocumentIdentifier,
    WorkDoneProgressParams,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

/// Pull retries after "content modified" or "server cancelled".
pub(super) const PULL_RETRIES: u32 = 8;

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
        /// What the wait last saw of the server, for the message: the work it reported in
        /// progress, and whether it had published for the file since the change.
        seen: String,
    },
    /// The server failed (exited, refused).
    Failed(LspError),
}

impl DiagnosticsOutcome {
    /// The outcome's kind and size, for a log line.
    fn summary(&self) -> String {
        match self {
            DiagnosticsOutcome::Fresh {
                diagnostics, via, ..
            } => format!("fresh via {via:?}: {}", diagnostics.len()),
            DiagnosticsOutcome::Unchanged { diagnostics } => {
                format!("unchanged after quiet: {}", diagnostics.len())
            }
            DiagnosticsOutcome::Pending { waited, .. } => format!("pending after {waited:?}"),
            DiagnosticsOutcome::Failed(error) => format!("failed: {error}"),
        }
    }
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
    /// A compile of the project's sources by the family's compiler, not its server (Kotlin
    /// files of the java family: [`crate::kotlin`]).
    Compiler,
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
    /// When this version was sent to the server: before `sent_at` when an earlier sync (a
    /// change on disk forwarded as it happened) had sent the same text.
    pub(super) changed_at: Instant,
    pub(super) seq_before: u64,
    /// This sync opened the document (`didOpen`): the server builds it from scratch.
    pub(super) opened: bool,
    /// A dependent checked again with its text unchanged ([`LanguageServer::recheck`]).
    pub(super) recheck: bool,
}

/// How long a server that re-checks its open files on a save (clangd) may stay silent about
/// a recheck of a file the change did not affect before that silence means "unchanged".
const RECHECK_QUIET: std::time::Duration = std::time::Duration::from_millis(1500);

/// How long clangd's "Built preamble" log line (stderr) may trail the status that follows it
/// (stdout), so that an idle file without one means no preamble was built.
const PREAMBLE_LOG_LAG: std::time::Duration = std::time::Duration::from_millis(400);

/// How long clangd may stay idle after preamble work seen after its last publish, with no
/// publish since, before the file is reopened: the work had preceded that publish, or the
/// rebuild's publish is slow; either way a reopen's publish answers.
const LOG_STALL_REOPEN: std::time::Duration = std::time::Duration::from_secs(2);

/// How long after a save-started check ends its pushed results may still arrive.
const CHECK_PUSH_SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// One of tsserver's diagnostics as the LSP object typescript-language-server publishes.
pub(super) fn lsp_from_tsserver(item: &Value) -> Option<Value> {
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

impl LanguageServer {
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
        // clangd republishes only the open files a save changed: for a dependent that the
        // change left alone (a word-scan guess that does not include the header), silence
        // once clangd stopped working is the answer.
        let quiet = timing
            .quiet
            .or_else(|| (ticket.recheck && self.spec.save_reparses_all).then_some(RECHECK_QUIET));
        // The quiet rule takes silence for "unchanged"; only a server that has stopped
        // working is silent in that sense.
        let mut work = WorkWatch::new(quiet.and(self.pid()));
        // clangd's "Built preamble" line read after the publish it preceded (see below)
        // leaves a wait for a publish that will not come; the file is reopened once, under
        // this version.
        let mut reopened: Option<i64> = None;
        let wait = PushWait {
            ticket,
            timing,
            quiet,
            versions_open_files: self.spec.versions_open_files,
        };
        loop {
            if self.supports_pull() {
                return self.pull(ticket, timing).await;
            }
            changes.borrow_and_update();
            work.sample();
            if self.conn.is_closed() {
                return DiagnosticsOutcome::Failed(
                    self.exited_error("textDocument/publishDiagnostics"),
                );
            }
            let step = decide(&wait, &self.state.lock(), Instant::now(), reopened, &work);
            match step {
                Step::Done(outcome) => {
                    tracing::debug!(server = %self.spec.name, path = %ticket.path.display(), version = ticket.version, seq_before = ticket.seq_before, outcome = outcome.summary(), "push wait over");
                    return outcome;
                }
                Step::Reopen => {
                    tracing::debug!(server = %self.spec.name, path = %ticket.path.display(), "idle after a preamble line with no publish since: reopening");
                    // The reopened file's publish has a higher version, which this wait takes.
                    reopened = Some(self.reopen(&ticket.path).unwrap_or(i64::MAX));
                }
                Step::Sleep(wake) => {
                    tokio::select! {
                        _ = changes.changed() => {}
                        _ = tokio::time::sleep_until(wake) => {}
                    }
                }
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
    pub(super) async fn tsserver_diagnostics(
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

    pub(super) async fn pull(&self, ticket: &SyncTicket, timing: Timing) -> DiagnosticsOutcome {
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
            // rust-analyzer ends its check's progress first and pushes the check's results on
            // its next turn: give them a moment to arrive.
            if self.check_ran_since(ticket) {
                let settle_until = self.state.lock().idle_since + CHECK_PUSH_SETTLE;
                tokio::time::sleep_until(settle_until).await;
                // It started checking again meanwhile: its results are the ones that count.
                if self.is_busy() {
                    if !self.wait_idle(ticket, timing).await {
                        return self.pending(ticket);
                    }
                    continue;
                }
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

    /// Whether a save after `ticket`'s change started the server's check (which has begun).
    fn check_ran_since(&self, ticket: &SyncTicket) -> bool {
        let inner = self.state.lock();
        self.spec.check_progress.is_some()
            && inner.save_seq > ticket.seq_before
            && inner.check_begin_seq > inner.save_seq
    }

    /// When a save since `ticket`'s change started the server's check
    /// ([`ServerSpec::check_progress`]), waits until that check has begun (its end is waited
    /// for as the server being busy). False when it did not begin in time: what was pushed
    /// until then is used, and the answer says it settled rather than saw the check.
    pub(super) async fn wait_check_begun(&self, ticket: &SyncTicket, timing: Timing) -> bool {
        if self.spec.check_progress.is_none() {
            return true;
        }
        self.wait_until(ticket, timing, |inner| {
            inner.save_seq <= ticket.seq_before || inner.check_begin_seq > inner.save_seq
        })
        .await
    }

    /// Waits up to `timeout` for the server to finish the work it reports (indexing);
    /// true when it is idle.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let now = Instant::now();
        let ticket = SyncTicket {
            path: PathBuf::new(),
            version: 0,
            sent_at: now,
            changed_at: now,
            seq_before: 0,
            opened: false,
            recheck: false,
        };
        let timing = Timing {
            settle: Duration::ZERO,
            quiet: None,
            debounce: Duration::ZERO,
            check_delay: Duration::ZERO,
            cap: timeout,
            indexing_cap: timeout,
        };
        self.wait_idle(&ticket, timing).await
    }

    /// Waits until the server is not busy; false when the deadline passed first.
    pub(super) async fn wait_idle(&self, ticket: &SyncTicket, timing: Timing) -> bool {
        self.wait_until(ticket, timing, |inner| !inner.busy()).await
    }

    /// Waits until `done` holds of the state (checked at each change); false when the
    /// server went away or the deadline passed first.
    async fn wait_until(
        &self,
        ticket: &SyncTicket,
        timing: Timing,
        done: impl Fn(&Inner) -> bool,
    ) -> bool {
        let mut changes = self.state.changed.subscribe();
        loop {
            changes.borrow_and_update();
            let until = {
                let inner = self.state.lock();
                if done(&inner) {
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

    pub(super) fn pending(&self, ticket: &SyncTicket) -> DiagnosticsOutcome {
        let inner = self.state.lock();
        DiagnosticsOutcome::Pending {
            waited: Instant::now() - ticket.sent_at,
            indexing: inner.busy() || inner.idle_since > ticket.sent_at,
            seen: seen_at_the_cap(&inner, ticket),
        }
    }
}

/// What a push wait is waiting for, fixed for the wait.
struct PushWait<'t> {
    ticket: &'t SyncTicket,
    timing: Timing,
    /// Silence for this long (the server stopped working) means the last list stands.
    quiet: Option<Duration>,
    /// [`crate::ServerSpec::versions_open_files`].
    versions_open_files: bool,
}

/// What one look at the server's state decides.
#[derive(Debug)]
enum Step {
    /// The wait is over.
    Done(DiagnosticsOutcome),
    /// Reopen the file (clangd idle after a preamble line, no publish since), then look again.
    Reopen,
    /// Nothing yet: look again when the state changes, or at this instant.
    Sleep(Instant),
}

/// The push wait's rules (see the crate docs) over the server's state at `now`: pure, so
/// each rule is tested without a server and without async. `reopened`: the version the file
/// was reopened under by this wait, if it was; `work`: whether the server's process stopped
/// working (the quiet rule).
fn decide(
    wait: &PushWait<'_>,
    inner: &Inner,
    now: Instant,
    reopened: Option<i64>,
    work: &WorkWatch,
) -> Step {
    let (ticket, timing) = (wait.ticket, wait.timing);
    let busy = inner.busy();
    let deadline = deadline(ticket.sent_at, timing, inner);
    let mut look = Look {
        wait,
        inner,
        now,
        reopened,
        wake: deadline,
    };
    let fresh = inner
        .published
        .get(&ticket.path)
        .filter(|p| p.seq > ticket.seq_before);
    let reopen = fresh.is_some_and(|published| look.reopen_due(published));
    let ready_at = fresh.and_then(|published| match published.version {
        Some(version) if version >= ticket.version => look
            .versioned_ready(published, version)
            .map(|at| (at, Via::VersionedPush)),
        // A pass over the workspace, not this version's answer; after a reopen, the list a
        // `didClose` clears.
        None if wait.versions_open_files || reopened.is_some() => None,
        None => look
            .unversioned_ready(published)
            .map(|at| (at, Via::UnversionedPush)),
        Some(_older) => None,
    });
    if let (Some((at, via)), Some(published)) = (ready_at, fresh) {
        if !busy && now >= at {
            return Step::Done(DiagnosticsOutcome::Fresh {
                diagnostics: published.diagnostics.clone(),
                answered_at: published.at,
                via,
            });
        }
        if !busy {
            look.wake_at(at);
        }
    }
    // Silence means "unchanged" only when there is a list it leaves standing: a file the
    // server never published for has no answer yet (pending), which must not read as clean.
    let last = inner.published.get(&ticket.path);
    if let (Some(quiet), None, Some(last)) = (wait.quiet, ready_at, last) {
        let quiet_at = ticket.sent_at.max(inner.idle_since) + quiet;
        if !busy && now >= quiet_at && work.stopped(now) {
            return Step::Done(DiagnosticsOutcome::Unchanged {
                diagnostics: last.diagnostics.clone(),
            });
        }
        if !busy {
            look.wake_at(quiet_at.max(now + WorkWatch::EVERY));
        }
    }
    if work.watching() {
        look.wake_at(now + WorkWatch::EVERY);
    }
    if now >= deadline {
        return Step::Done(DiagnosticsOutcome::Pending {
            waited: now - ticket.sent_at,
            indexing: busy || inner.idle_since > ticket.sent_at,
            seen: seen_at_the_cap(inner, ticket),
        });
    }
    if reopen {
        Step::Reopen
    } else {
        Step::Sleep(look.wake)
    }
}

/// What a wait that gave up last saw: the work the server reported in progress, and whether
/// it had published for the file since the change (a server that did, and was still busy,
/// is told apart from one that never answered for the file).
fn seen_at_the_cap(inner: &Inner, ticket: &SyncTicket) -> String {
    let mut work: Vec<&str> = inner
        .progress
        .values()
        .map(|(title, _)| title.as_str())
        .collect();
    work.sort_unstable();
    work.dedup();
    let published = match inner.published.get(&ticket.path) {
        Some(p) if p.seq > ticket.seq_before => "it had published for the file since the change",
        Some(_) => "its last list for the file predates the change",
        None => "it never published for the file",
    };
    if work.is_empty() {
        published.to_owned()
    } else {
        format!("{published}; still working on: {}", work.join(", "))
    }
}

/// One look at the server's state: what the rules read, and the earliest moment one of them
/// asks to look again.
struct Look<'a> {
    wait: &'a PushWait<'a>,
    inner: &'a Inner,
    now: Instant,
    reopened: Option<i64>,
    wake: Instant,
}

impl Look<'_> {
    fn wake_at(&mut self, at: Instant) {
        self.wake = self.wake.min(at);
    }

    /// Preamble work seen after the publish may have preceded it: clangd's "Built preamble"
    /// line comes on stderr, read apart from the publish, and even a "parsing includes"
    /// status can be written after the publish it preceded. clangd can also go idle between
    /// a publish and a rebuild's, so idleness alone does not tell; idle for a while with
    /// nothing since: reopen (once), and wait for that publish.
    fn reopen_due(&mut self, published: &Published) -> bool {
        let ticket = self.wait.ticket;
        let Some((state, status_seq, idle_at)) = self.inner.file_status.get(&ticket.path) else {
            return false;
        };
        if self.reopened.is_some()
            || !published.rebuilding
            || state != "idle"
            || *status_seq <= published.seq
            || published.version.is_none_or(|v| v < ticket.version)
        {
            return false;
        }
        if self.now >= *idle_at + LOG_STALL_REOPEN {
            true
        } else {
            self.wake_at(*idle_at + LOG_STALL_REOPEN);
            false
        }
    }

    /// When a publish of the synced `version` (or a later one) stands, once it has.
    ///
    /// clangd: a change that makes the file's preamble stale (an included header changed)
    /// is published twice, first against the old preamble, then against the new one once it
    /// is built. Its log says when a preamble was built ("Built preamble … for file F") and
    /// its status when the file is idle again: the list stands once the file went idle after
    /// it with no preamble work in between, and it came after the last preamble built since
    /// the change. An opened (or reopened) file's first build waits for its preamble and
    /// publishes once: its preamble line precedes that publish, however late it is read.
    fn versioned_ready(&mut self, published: &Published, version: i64) -> Option<Instant> {
        let (ticket, inner) = (self.wait.ticket, self.inner);
        let first_build = ticket.opened || self.reopened.is_some_and(|at| version >= at);
        let settled = match inner.file_status.get(&ticket.path) {
            None => true,
            Some(_) if first_build => true,
            Some(_) => {
                let built = inner.preamble_builds.get(&ticket.path).copied();
                let after_build =
                    built.is_none_or(|built| built <= ticket.seq_before || published.seq > built);
                // Idle after an update that built no preamble: the list stands once the
                // build's log line could no longer be on its way.
                let nothing_rebuilt = match published.idle_after_update {
                    Some(idle) if self.now >= idle + PREAMBLE_LOG_LAG => {
                        built.is_none_or(|built| built < published.seq)
                    }
                    Some(idle) => {
                        self.wake_at(idle + PREAMBLE_LOG_LAG);
                        false
                    }
                    None => false,
                };
                (published.settled || nothing_rebuilt) && after_build
            }
        };
        settled.then(|| published.at.max(inner.idle_since) + self.wait.timing.settle)
    }

    /// When a publish without a version stands, once one counts.
    ///
    /// A change is checked no sooner than the server's debounce after it: what comes sooner
    /// is an earlier check's. Such a server also checks its open files again once it has
    /// indexed: a list it published while still indexing is provisional. A server without
    /// a debounce checks a changed document no sooner than its check delay after the change
    /// (an open, or a recheck of an unchanged one, any time after it).
    fn unversioned_ready(&mut self, published: &Published) -> Option<Instant> {
        let (ticket, inner, timing) = (self.wait.ticket, self.inner, self.wait.timing);
        let earliest = if !timing.debounce.is_zero() {
            let after_change = if ticket.opened {
                ticket.changed_at
            } else {
                ticket.changed_at + timing.debounce
            };
            if inner.idle_since > ticket.changed_at {
                after_change.max(inner.idle_since)
            } else {
                after_change
            }
        } else if ticket.opened || ticket.recheck {
            ticket.changed_at
        } else {
            ticket.changed_at + timing.check_delay
        };
        // The history holds the latest publish too.
        let first = published
            .history
            .iter()
            .find(|(seq, at, _)| *seq > ticket.seq_before && *at >= earliest)
            .map(|(_, at, _)| *at);
        match first {
            Some(first) => Some(first.max(inner.idle_since) + timing.settle),
            None => {
                if published.at < earliest {
                    self.wake_at(earliest);
                }
                None
            }
        }
    }
}

/// When to give up: the cap after the change, stretched while the server is busy (up to the
/// indexing cap), and a fresh cap after it went idle.
pub(super) fn deadline(sent_at: Instant, timing: Timing, inner: &Inner) -> Instant {
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

/// Whether a server's process group is still working, from its CPU use (see
/// [`cc_process::group_usage`]): sampled every [`WorkWatch::EVERY`] while a quiet rule waits.
struct WorkWatch {
    /// The server's process group; `None`: not watched (no quiet rule, no process of ours,
    /// or no `/proc`), and the quiet rule alone decides.
    group: Option<u32>,
    samples: std::collections::VecDeque<(Instant, u64)>,
    runnable: bool,
}

impl WorkWatch {
    const EVERY: Duration = Duration::from_millis(100);
    /// The server counts as stopped when it used at most [`WorkWatch::IDLE_TICKS`] of CPU
    /// over this long and nothing of it is running or waiting to run.
    const WINDOW: Duration = Duration::from_millis(500);
    /// 20 ms of CPU in the window (clock ticks of 10 ms).
    const IDLE_TICKS: u64 = 2;

    fn new(group: Option<u32>) -> Self {
        WorkWatch {
            group,
            samples: std::collections::VecDeque::new(),
            runnable: false,
        }
    }

    fn watching(&self) -> bool {
        self.group.is_some()
    }

    fn sample(&mut self) {
        let Some(group) = self.group else {
            return;
        };
        let Some(usage) = cc_process::group_usage(group) else {
            self.group = None;
            return;
        };
        let now = Instant::now();
        self.runnable = usage.runnable;
        self.samples.push_back((now, usage.ticks));
        while self
            .samples
            .get(1)
            .is_some_and(|(at, _)| now.duration_since(*at) >= Self::WINDOW)
        {
            self.samples.pop_front();
        }
    }

    /// Whether the server has stopped working: idle over the last window (true when it is
    /// not watched).
    fn stopped(&self, now: Instant) -> bool {
        if self.group.is_none() {
            return true;
        }
        let (Some((first_at, first)), Some((_, last))) =
            (self.samples.front(), self.samples.back())
        else {
            return false;
        };
        now.duration_since(*first_at) >= Self::WINDOW
            && last.saturating_sub(*first) <= Self::IDLE_TICKS
            && !self.runnable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    const MS: Duration = Duration::from_millis(1);

    fn ticket(sent_at: Instant, version: i64) -> SyncTicket {
        SyncTicket {
            path: PathBuf::from("/w/a.py"),
            version,
            sent_at,
            changed_at: sent_at,
            seq_before: 0,
            opened: false,
            recheck: false,
        }
    }

    fn published(at: Instant, seq: u64, version: Option<i64>) -> Published {
        Published {
            version,
            diagnostics: Vec::new(),
            raw: Vec::new(),
            seq,
            at,
            history: VecDeque::from([(seq, at, version)]),
            settled: false,
            rebuilding: false,
            updating: false,
            idle_after_update: None,
        }
    }

    /// How a wait that is over with a fresh list got it (a panic for any other step).
    fn fresh_via(step: Step) -> Via {
        match step {
            Step::Done(DiagnosticsOutcome::Fresh { via, .. }) => via,
            other => panic!("{other:?}"),
        }
    }

    fn wait(ticket: &SyncTicket, timing: Timing) -> PushWait<'_> {
        PushWait {
            ticket,
            timing,
            quiet: timing.quiet,
            versions_open_files: false,
        }
    }

    fn unwatched() -> WorkWatch {
        WorkWatch::new(None)
    }

    fn state(at: Instant) -> Inner {
        Inner::new(at, false, false, false)
    }

    #[test]
    fn a_publish_of_the_synced_version_is_the_answer_once_settled() {
        let t0 = Instant::now();
        let ticket = ticket(t0, 2);
        let timing = Timing {
            settle: 50 * MS,
            ..Timing::default()
        };
        let mut inner = state(t0);
        let at = t0 + 10 * MS;
        inner
            .published
            .insert(ticket.path.clone(), published(at, 1, Some(2)));
        let wait = wait(&ticket, timing);
        // Within the settle window: look again when it ends.
        match decide(&wait, &inner, at, None, &unwatched()) {
            Step::Sleep(wake) => assert_eq!(wake, at + 50 * MS),
            other => panic!("{other:?}"),
        }
        match decide(&wait, &inner, at + 60 * MS, None, &unwatched()) {
            Step::Done(DiagnosticsOutcome::Fresh { via, .. }) => {
                assert_eq!(via, Via::VersionedPush)
            }
            other => panic!("{other:?}"),
        }
        // An older version's publish is not the answer.
        inner
            .published
            .insert(ticket.path.clone(), published(at, 1, Some(1)));
        assert!(matches!(
            decide(&wait, &inner, at + 60 * MS, None, &unwatched()),
            Step::Sleep(_)
        ));
    }

    #[test]
    fn an_unversioned_publish_sooner_than_the_debounce_is_an_earlier_checks() {
        let t0 = Instant::now();
        let ticket = ticket(t0, 2);
        let timing = Timing {
            debounce: 200 * MS,
            ..Timing::default()
        };
        let mut inner = state(t0);
        inner
            .published
            .insert(ticket.path.clone(), published(t0 + 20 * MS, 1, None));
        let wait = wait(&ticket, timing);
        match decide(&wait, &inner, t0 + 30 * MS, None, &unwatched()) {
            Step::Sleep(wake) => assert_eq!(wake, t0 + 200 * MS),
            other => panic!("{other:?}"),
        }
        inner
            .published
            .insert(ticket.path.clone(), published(t0 + 250 * MS, 2, None));
        assert_eq!(
            fresh_via(decide(&wait, &inner, t0 + 260 * MS, None, &unwatched())),
            Via::UnversionedPush
        );
    }

    /// The shell's change was forwarded to the server as it happened, and answered, before
    /// the check: the server's check delay counts from that change, not from the check, so
    /// the answer already there stands at once.
    #[test]
    fn the_check_delay_counts_from_when_the_version_was_sent_not_from_the_check() {
        let t0 = Instant::now();
        let mut ticket = ticket(t0 + 2000 * MS, 2);
        ticket.changed_at = t0;
        let timing = Timing {
            check_delay: 200 * MS,
            ..Timing::default()
        };
        let mut inner = state(t0);
        inner
            .published
            .insert(ticket.path.clone(), published(t0 + 600 * MS, 1, None));
        let wait = wait(&ticket, timing);
        assert_eq!(
            fresh_via(decide(&wait, &inner, t0 + 2001 * MS, None, &unwatched())),
            Via::UnversionedPush
        );
        // A publish sooner than the delay after the change is an earlier check's; a recheck
        // (the file unchanged, another one changed) takes it.
        inner
            .published
            .insert(ticket.path.clone(), published(t0 + 100 * MS, 1, None));
        assert!(matches!(
            decide(&wait, &inner, t0 + 2001 * MS, None, &unwatched()),
            Step::Sleep(_)
        ));
        ticket.recheck = true;
        let wait = self::wait(&ticket, timing);
        assert!(matches!(
            decide(&wait, &inner, t0 + 2001 * MS, None, &unwatched()),
            Step::Done(DiagnosticsOutcome::Fresh { .. })
        ));
    }

    /// A wait that gives up says what it last saw: the work in progress, and whether the
    /// server had published for the file since the change, before it, or never.
    #[test]
    fn a_pending_wait_says_what_it_last_saw() {
        let t0 = Instant::now();
        let mut ticket = ticket(t0, 2);
        ticket.seq_before = 5;
        let timing = Timing::default();
        let wait = wait(&ticket, timing);
        let mut inner = state(t0);
        let seen = |inner: &Inner| match decide(
            &wait,
            inner,
            t0 + timing.indexing_cap,
            None,
            &unwatched(),
        ) {
            Step::Done(DiagnosticsOutcome::Pending { seen, .. }) => seen,
            other => panic!("{other:?}"),
        };
        assert_eq!(seen(&inner), "it never published for the file");
        let mut before = published(t0 - 5 * MS, 3, None);
        before.seq = 3;
        inner.published.insert(ticket.path.clone(), before);
        assert_eq!(
            seen(&inner),
            "its last list for the file predates the change"
        );
        inner
            .progress
            .insert("t1".into(), ("Building".into(), Some("40%".into())));
        let mut after = published(t0 + MS, 6, None);
        after.seq = 6;
        inner.published.insert(ticket.path.clone(), after);
        assert_eq!(
            seen(&inner),
            "it had published for the file since the change; still working on: Building"
        );
    }

    /// Silence is "unchanged" only for a file the server published for before; a file it
    /// never answered for stays pending, never clean.
    #[test]
    fn silence_keeps_the_last_list_and_never_makes_a_file_clean() {
        let t0 = Instant::now();
        let ticket = ticket(t0, 2);
        let timing = Timing {
            quiet: Some(300 * MS),
            ..Timing::default()
        };
        let wait = wait(&ticket, timing);
        let mut inner = state(t0);
        match decide(&wait, &inner, t0 + 400 * MS, None, &unwatched()) {
            Step::Sleep(wake) => assert_eq!(wake, t0 + timing.cap),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide(&wait, &inner, t0 + timing.cap, None, &unwatched()),
            Step::Done(DiagnosticsOutcome::Pending {
                indexing: false,
                ..
            })
        ));
        // A list from before the change (seq not after the ticket's).
        let mut before = published(t0 - 5 * MS, 0, None);
        before.seq = 0;
        inner.published.insert(ticket.path.clone(), before);
        match decide(&wait, &inner, t0 + 100 * MS, None, &unwatched()) {
            Step::Sleep(wake) => assert_eq!(wake, t0 + 300 * MS),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide(&wait, &inner, t0 + 300 * MS, None, &unwatched()),
            Step::Done(DiagnosticsOutcome::Unchanged { .. })
        ));
    }

    /// A busy server stretches the cap up to the indexing cap, and nothing is taken while
    /// it works.
    #[test]
    fn a_busy_server_is_waited_for_up_to_the_indexing_cap() {
        let t0 = Instant::now();
        let ticket = ticket(t0, 2);
        let timing = Timing::default();
        let wait = wait(&ticket, timing);
        let mut inner = state(t0);
        inner
            .progress
            .insert("index".into(), ("Indexing".into(), None));
        inner
            .published
            .insert(ticket.path.clone(), published(t0 + MS, 1, Some(2)));
        match decide(&wait, &inner, t0 + timing.cap, None, &unwatched()) {
            Step::Sleep(wake) => assert_eq!(wake, t0 + timing.indexing_cap),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide(&wait, &inner, t0 + timing.indexing_cap, None, &unwatched()),
            Step::Done(DiagnosticsOutcome::Pending { indexing: true, .. })
        ));
    }

    /// clangd idle a while after a preamble line that followed its publish, with nothing
    /// since: the file is reopened, once.
    #[test]
    fn a_preamble_line_after_the_publish_reopens_the_file_once() {
        let t0 = Instant::now();
        let ticket = ticket(t0, 2);
        let wait = wait(&ticket, Timing::default());
        let mut inner = state(t0);
        let mut list = published(t0 + MS, 1, Some(2));
        list.rebuilding = true;
        inner.published.insert(ticket.path.clone(), list);
        let idle_at = t0 + 10 * MS;
        inner
            .file_status
            .insert(ticket.path.clone(), ("idle".into(), 2, idle_at));
        match decide(&wait, &inner, idle_at + MS, None, &unwatched()) {
            Step::Sleep(wake) => assert_eq!(wake, idle_at + LOG_STALL_REOPEN),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide(
                &wait,
                &inner,
                idle_at + LOG_STALL_REOPEN,
                None,
                &unwatched()
            ),
            Step::Reopen
        ));
        assert!(!matches!(
            decide(
                &wait,
                &inner,
                idle_at + LOG_STALL_REOPEN,
                Some(3),
                &unwatched()
            ),
            Step::Reopen
        ));
    }
}
