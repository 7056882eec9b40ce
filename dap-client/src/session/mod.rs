//! One debug session: the adapter process, its connection, the launch sequence, and the
//! operations on a running program.

use cc_process::lock;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cc_process::GroupChild;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::adapters::AdapterKind;
use crate::client::Client;
use crate::config::Settings;
use crate::detect::{Environment, ResolvedAdapter};
use crate::error::{ClientError, DebugError};
use crate::interrupt::Interrupt;
use crate::proctree::{describe_status, Tracker};
use crate::protocol::{
    Capabilities, Disconnect, DisconnectArguments, Request, StackFrame, StackTrace,
    StackTraceArguments,
};
use crate::report::{
    function_name, ExceptionStops, Exited, FileBreakpoints, FrameView, OutputPiece, Position,
    ProgramState, SessionInfo, Stopped, OUTPUT_TAIL_BYTES,
};
use crate::state::{pump_events, State};

mod detail;
mod handles;
mod launch;
mod ops;
mod spawn;

use handles::{Handles, Kind};

use spawn::spawn_adapter;

/// How long `disconnect` may take before the adapter is simply killed.
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an adapter may take to exit after `disconnect` and closing its input.
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// How long a request that failed because the connection closed waits for the adapter's exit
/// to be recorded (its output closes a moment before its status can be reaped).
const EXIT_RECORD_WAIT: Duration = Duration::from_secs(5);

/// `launch` or `attach`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StartKind {
    Launch,
    Attach,
}

impl StartKind {
    fn command(self) -> &'static str {
        match self {
            StartKind::Launch => "launch",
            StartKind::Attach => "attach",
        }
    }
}

/// Where the adapter comes from.
pub(crate) enum Endpoint {
    /// Start this adapter process.
    Spawn(ResolvedAdapter),
    /// Connect to an adapter that already listens (debugpy's `--listen` / `debugpy.listen`
    /// runs its own adapter in the debuggee's process tree).
    Connect { host: String, port: u16 },
}

/// What a session is started with.
pub(crate) struct StartParams<'a> {
    pub kind: AdapterKind,
    pub endpoint: Endpoint,
    pub start: StartKind,
    pub arguments: Value,
    pub target: String,
    pub env: &'a Environment,
    pub extra_env: &'a [(String, String)],
    pub settings: Settings,
    pub breakpoints: &'a BTreeMap<PathBuf, Vec<i64>>,
    /// Exception filters enabled on top of the adapter's defaults.
    pub extra_filters: Vec<String>,
    /// The caller's exception filters, instead of the defaults and `extra_filters`.
    pub chosen_filters: Option<Vec<String>>,
    /// Functions to stop in.
    pub function_breakpoints: Vec<String>,
    /// Receives a way to kill the session's processes as soon as they exist, so a shutdown
    /// during the launch sequence does not have to wait for it.
    pub killer: &'a Mutex<Option<Killer>>,
}

/// A start that failed: why, and what the program and the adapter printed until then.
#[derive(Debug)]
pub(crate) struct Failure {
    pub error: DebugError,
    pub output: String,
}

impl From<DebugError> for Failure {
    fn from(error: DebugError) -> Self {
        Failure {
            error,
            output: String::new(),
        }
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// What was awaited happened.
    Reached,
    /// The time ran out.
    TimedOut,
    /// The caller cancelled.
    Interrupted,
}

/// Kills every process of a session, from any thread, without the session.
pub(crate) type Killer = Arc<dyn Fn() + Send + Sync>;

/// How a running program is moved on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Resume until the next stop.
    Continue,
    /// Interrupt.
    Pause,
    /// Step over.
    StepOver,
    /// Step into.
    StepIn,
    /// Step out.
    StepOut,
}

impl Action {
    /// The operation's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Action::Continue => "continue",
            Action::Pause => "pause",
            Action::StepOver => "step_over",
            Action::StepIn => "step_in",
            Action::StepOut => "step_out",
        }
    }
}

struct TopFrame {
    generation: u64,
    thread: i64,
    frame: Option<StackFrame>,
}

pub(crate) struct Session {
    kind: AdapterKind,
    /// The adapter process: ours, or a listening debugpy's.
    adapter_pid: Option<u32>,
    target: String,
    root: PathBuf,
    client: Client,
    /// Shared with the event task, which reads the exit status when the adapter goes.
    child: Arc<Mutex<Option<GroupChild>>>,
    tracker: Arc<Tracker>,
    state: Arc<watch::Sender<State>>,
    caps: Capabilities,
    settings: Settings,
    started: Instant,
    /// The same moment on the wall clock, to compare with source files' modification times.
    started_wall: std::time::SystemTime,
    expired: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
    top_frame: Mutex<Option<TopFrame>>,
    /// The frame ids and references given out, valid until the program resumes.
    handles: Mutex<Handles>,
    extra_filters: Vec<String>,
    chosen_filters: Option<Vec<String>>,
    /// What the launch sequence set: exception filters and functions stopped in.
    exception_stops: ExceptionStops,
    /// Filters asked for that the adapter does not offer.
    filter_note: Option<String>,
    function_breakpoints: Vec<String>,
    scratch: Option<PathBuf>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("adapter", &self.kind)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// A unique scratch directory for files an adapter writes (delve's built binary), so they
/// never land in the checkout.
fn scratch_dir() -> std::io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("cc-dap-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// `path` relative to `root` when inside it (`.` for the root itself).
pub(crate) fn display_path(root: &Path, path: &str) -> String {
    match Path::new(path).strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
        Ok(rest) => rest.display().to_string(),
        Err(_) => shortened_toolchain_path(path),
    }
}

/// A Rust toolchain source path without its 40-digit commit (`/rustc/<hash>/library/…` →
/// `/rustc/…/library/…`): the file is not on disk either way, and the hash is 40 characters
/// an agent reads in every frame of std.
fn shortened_toolchain_path(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("/rustc/") {
        if let Some((hash, tail)) = rest.split_once('/') {
            if hash.len() == 40 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
                return format!("/rustc/…/{tail}");
            }
        }
    }
    path.to_owned()
}

impl Session {
    /// Starts the adapter and runs the launch sequence: `initialize` → `launch`/`attach`
    /// (its response not awaited) → the `initialized` event (before or after that response)
    /// → `setBreakpoints` per file, `setExceptionBreakpoints` → `configurationDone` → the
    /// launch response. Every wait also ends when the program ends or the adapter goes, and
    /// at the launch timeout.
    pub(crate) async fn start(
        mut params: StartParams<'_>,
        interrupt: &mut Interrupt,
    ) -> Result<(Session, Vec<FileBreakpoints>), Failure> {
        let kind = params.kind;
        let settings = params.settings;
        let state = Arc::new(watch::Sender::new(State::new(settings.output_buffer_bytes)));
        let mut scratch = None;
        if kind == AdapterKind::Delve && params.start == StartKind::Launch {
            if let Value::Object(args) = &mut params.arguments {
                if !args.contains_key("output") {
                    let dir = scratch_dir().map_err(|error| {
                        DebugError::Io(format!("could not create a scratch directory: {error}"))
                    })?;
                    args.insert(
                        "output".into(),
                        Value::String(dir.join("__debug_bin").display().to_string()),
                    );
                    scratch = Some(dir);
                }
            }
        }
        let spawned = spawn_adapter(&params, &state).await;
        let spawn::Spawned {
            child,
            remote_adapter,
            client,
            events,
            mut tasks,
        } = match spawned {
            Ok(parts) => parts,
            Err(error) => {
                if let Some(dir) = &scratch {
                    let _ = std::fs::remove_dir_all(dir);
                }
                let output = state.borrow().output.text();
                return Err(Failure { error, output });
            }
        };
        let tracker = Arc::new(Tracker::new(child.as_ref().map(GroupChild::id)));
        if let Some(pid) = remote_adapter {
            tracker.add_pid(pid);
        }
        let adapter_pid = child.as_ref().map(GroupChild::id).or(remote_adapter);
        {
            let tracker = tracker.clone();
            *lock(params.killer) = Some(Arc::new(move || tracker.kill_all()));
        }
        let child = Arc::new(Mutex::new(child));
        tasks.push(tokio::spawn(pump_events(
            events,
            state.clone(),
            client.clone(),
            tracker.clone(),
            child.clone(),
        )));
        let expired = Arc::new(AtomicBool::new(false));
        let mut session = Session {
            kind,
            adapter_pid,
            target: params.target.clone(),
            root: params.env.root.clone(),
            client,
            child,
            tracker,
            state,
            caps: Capabilities::default(),
            settings,
            started: Instant::now(),
            started_wall: std::time::SystemTime::now(),
            expired,
            tasks,
            top_frame: Mutex::new(None),
            handles: Mutex::new(Handles::default()),
            extra_filters: std::mem::take(&mut params.extra_filters),
            chosen_filters: params.chosen_filters.take(),
            exception_stops: ExceptionStops::default(),
            filter_note: None,
            function_breakpoints: std::mem::take(&mut params.function_breakpoints),
            scratch,
        };
        let sequence = session
            .launch_sequence(
                params.start,
                params.arguments,
                params.breakpoints,
                interrupt,
            )
            .await;
        match sequence {
            Ok(placed) => {
                session.tracker.refresh();
                Ok((session, placed))
            }
            Err(error) => {
                let output = session.failure_output();
                Err(Failure { error, output })
            }
        }
    }

    /// What the program and the adapter printed, for a start that failed.
    pub(crate) fn failure_output(&self) -> String {
        let s = self.state.borrow();
        let mut text = s.output.text();
        let log = s.adapter_log.text();
        if !log.trim().is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&log);
        }
        text
    }

    fn output_tail(&self) -> String {
        let s = self.state.borrow();
        let mut tail = s.output.tail(2000);
        let log = s.adapter_log.tail(1000);
        if !log.trim().is_empty() {
            if !tail.is_empty() && !tail.ends_with('\n') {
                tail.push('\n');
            }
            tail.push_str(&log);
        }
        tail
    }

    fn launch_failed(&self, message: String) -> DebugError {
        DebugError::LaunchFailed {
            adapter: self.kind.name().into(),
            message,
            output_tail: self.output_tail(),
        }
    }

    fn timeout(&self, what: String) -> DebugError {
        DebugError::Timeout {
            what,
            after: self.settings.launch_timeout,
            output_tail: self.output_tail(),
        }
    }

    async fn wait_until(
        &self,
        deadline: tokio::time::Instant,
        predicate: impl FnMut(&State) -> bool,
    ) -> bool {
        self.wait_until_or(deadline, &mut Interrupt::never(), predicate)
            .await
            == Waited::Reached
    }

    /// Waits until `predicate` holds, `deadline` passes, or `interrupt` fires.
    async fn wait_until_or(
        &self,
        deadline: tokio::time::Instant,
        interrupt: &mut Interrupt,
        predicate: impl FnMut(&State) -> bool,
    ) -> Waited {
        let mut rx = self.state.subscribe();
        let wait = tokio::time::timeout_at(deadline, rx.wait_for(predicate));
        let outcome = match interrupt.guard(wait).await {
            None => Waited::Interrupted,
            Some(Ok(Ok(_))) => Waited::Reached,
            Some(_) => Waited::TimedOut,
        };
        outcome
    }

    /// The handles of the current stop (forgotten once the program has resumed).
    fn handles(&self) -> std::sync::MutexGuard<'_, Handles> {
        let epoch = self.state.borrow().resumes;
        let mut handles = lock(&self.handles);
        handles.sync(epoch);
        handles
    }

    /// Sends a request; a connection that closed meanwhile is reported as the adapter's exit
    /// (with its status, once recorded), not as a bare closed pipe.
    pub(crate) async fn call<R: Request>(
        &self,
        arguments: &R::Arguments,
    ) -> Result<R::Response, DebugError> {
        match self
            .client
            .request::<R>(arguments, self.settings.request_timeout)
            .await
        {
            Ok(response) => Ok(response),
            Err(error) => Err(self.request_failed(error).await),
        }
    }

    /// The error for a failed request. When the connection closed, the adapter's output ended
    /// a moment before its exit status can be read: wait for the event task to record both,
    /// so the error says how it ended.
    pub(crate) async fn request_failed(&self, error: ClientError) -> DebugError {
        if matches!(error, ClientError::Closed { .. }) {
            let deadline = tokio::time::Instant::now() + EXIT_RECORD_WAIT;
            self.wait_until(deadline, |s| s.connection_closed.is_some())
                .await;
        }
        if let Err(unusable) = self.check_usable() {
            return unusable;
        }
        error.into()
    }

    /// The adapter.
    pub(crate) fn kind(&self) -> AdapterKind {
        self.kind
    }

    pub(crate) fn ttl(&self) -> Duration {
        self.settings.ttl
    }

    pub(crate) fn is_expired(&self) -> bool {
        self.expired.load(Ordering::SeqCst)
    }

    /// Whether the program has exited (the session lives on until `terminate`).
    pub(crate) fn program_ended(&self) -> bool {
        self.state.borrow().program_ended()
    }

    /// Whether the adapter died while the program had not ended.
    pub(crate) fn adapter_lost(&self) -> bool {
        self.state.borrow().adapter_lost()
    }

    /// A one-line description for messages.
    pub(crate) fn describe(&self) -> String {
        let s = self.state.borrow();
        let state = if let Some(stop) = &s.stopped {
            format!("stopped ({})", stop.reason)
        } else if s.program_ended() {
            match s.exit_code {
                Some(code) => format!("program exited with code {code}"),
                None => "program exited".into(),
            }
        } else if s.connection_closed.is_some() {
            "adapter exited".into()
        } else {
            "running".into()
        };
        let pid = self
            .adapter_pid
            .map(|p| format!(", adapter pid {p}"))
            .unwrap_or_default();
        format!("{} debugging {}{pid}, {state}", self.kind, self.target)
    }

    pub(crate) fn info(&self) -> SessionInfo {
        let age = self.started.elapsed();
        SessionInfo {
            adapter: self.kind.name().into(),
            target: self.target.clone(),
            adapter_pid: self.adapter_pid,
            debuggee_pid: self.state.borrow().debuggee_pid,
            age_seconds: age.as_secs(),
            expires_in_seconds: self.settings.ttl.saturating_sub(age).as_secs(),
        }
    }

    /// Every pid this session started that the tracker knows (for tests and status).
    pub(crate) fn known_pids(&self) -> Vec<u32> {
        self.tracker.refresh();
        self.tracker
            .all_known()
            .into_iter()
            .map(|p| p.pid)
            .collect()
    }

    pub(crate) fn adapter_pid(&self) -> Option<u32> {
        self.adapter_pid
    }

    pub(crate) fn debuggee_pid(&self) -> Option<u32> {
        self.state.borrow().debuggee_pid
    }

    /// Refuses to work on an expired or dead session.
    pub(crate) fn check_usable(&self) -> Result<(), DebugError> {
        if self.is_expired() {
            return Err(DebugError::SessionExpired {
                describe: format!("{} debugging {}", self.kind, self.target),
                ttl: self.settings.ttl,
            });
        }
        if self.adapter_lost() {
            return Err(self.adapter_exited_error());
        }
        Ok(())
    }

    fn adapter_exited_error(&self) -> DebugError {
        let status = lock(&self.child)
            .as_mut()
            .and_then(|child| child.try_wait().ok().flatten());
        let recorded = self.state.borrow().adapter_exit.clone();
        let reason = match (status, recorded) {
            (Some(status), _) => describe_status(status),
            (None, Some(recorded)) => recorded,
            (None, None) => self
                .state
                .borrow()
                .connection_closed
                .clone()
                .unwrap_or_else(|| "the connection ended".into()),
        };
        DebugError::AdapterExited {
            adapter: self.kind.name().into(),
            reason,
            log_tail: self.state.borrow().adapter_log.tail(1000),
        }
    }

    fn output_mark(&self) -> u64 {
        self.state.borrow().output.total_bytes()
    }

    fn output_since(&self, mark: u64) -> Option<OutputPiece> {
        let s = self.state.borrow();
        let (text, dropped) = s.output.since(mark);
        if text.is_empty() {
            return None;
        }
        let mut start = text.len().saturating_sub(OUTPUT_TAIL_BYTES);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        Some(OutputPiece {
            truncated: dropped || start > 0,
            text: text[start..].to_owned(),
        })
    }

    /// Where the program is: for a stop, the top frame of the stopped thread is fetched once.
    pub(crate) async fn position(&self) -> Position {
        self.position_and_frame().await.0
    }

    /// Where the program is, with the stop's top frame (the adapter's) when stopped.
    async fn position_and_frame(&self) -> (Position, Option<StackFrame>) {
        if self.is_expired() {
            return (Position::bare(ProgramState::Expired), None);
        }
        let (stop, generation, ended, code, lost) = {
            let s = self.state.borrow();
            (
                s.stopped.clone(),
                s.stop_generation,
                s.program_ended(),
                s.exit_code,
                s.adapter_lost(),
            )
        };
        if lost {
            return (Position::bare(ProgramState::AdapterExited), None);
        }
        if let Some(stop) = stop {
            let frame = match stop.thread_id {
                Some(thread) => self.top_frame(generation, thread).await,
                None => None,
            };
            let file = frame
                .as_ref()
                .and_then(|f| f.source.as_ref())
                .and_then(|s| s.path.clone().or_else(|| s.name.clone()))
                .map(|p| display_path(&self.root, &p));
            let frame_id = {
                let mut handles = self.handles();
                if let Some(thread) = stop.thread_id {
                    handles.note_thread(thread);
                }
                match (frame.as_ref(), stop.thread_id) {
                    (Some(f), Some(thread)) => Some(handles.issue_frame(thread, 0, f.id)),
                    (Some(f), None) => Some(handles.issue(Kind::Frame, f.id)),
                    (None, _) => None,
                }
            };
            let position = Position {
                state: ProgramState::Stopped,
                stopped: Some(Stopped {
                    reason: stop.reason,
                    file,
                    line: frame.as_ref().map(|f| f.line),
                    thread_id: stop.thread_id,
                    function: frame.as_ref().map(|f| function_name(&f.name)),
                    frame_id,
                    description: stop.description,
                    text: stop.text.map(|text| stop_text(&text)),
                    source: None,
                    source_note: None,
                    locals: None,
                    shown_frame: None,
                }),
                exited: None,
            };
            let mut position = position;
            if let (Some(stopped), Some(frame)) = (position.stopped.as_mut(), frame.as_ref()) {
                // The `rust_panic` breakpoint is a panic: so it is called, with the message
                // the panic hook printed (a test runs with `--nocapture`, so the hook writes
                // to stderr, which the adapter forwards).
                if frame.name.contains("rust_panic") {
                    stopped.reason = "panic".into();
                    stopped.description = None;
                    stopped.text = self.panic_message();
                }
            }
            return (position, frame);
        }
        if ended {
            let position = Position {
                state: ProgramState::Exited,
                stopped: None,
                exited: Some(Exited { code }),
            };
            return (position, None);
        }
        (Position::bare(ProgramState::Running), None)
    }

    /// Where the program is, and for a stop the top frame's source around the line and its
    /// locals (what results that report a stop carry).
    pub(crate) async fn stop_position(&self) -> Position {
        let (mut position, frame) = self.position_and_frame().await;
        if let Some(stopped) = position.stopped.as_mut() {
            if stopped.reason == "panic" && stopped.text.is_none() {
                self.await_panic_message(stopped).await;
            }
        }
        if let (Some(stopped), Some(mut frame)) = (position.stopped.as_mut(), frame) {
            // Stopped outside the workspace by something other than the caller's own
            // breakpoint or step (a panic, an exception, a pause in a library; a breakpoint
            // in a file that is not on disk was not set by the caller): what matters is the
            // nearest frame of the workspace's code.
            let asked_for = matches!(
                stopped.reason.as_str(),
                "breakpoint" | "step" | "entry" | "goto"
            ) && source_on_disk(&frame);
            if !asked_for && !self.in_workspace(&frame) {
                if let Some(thread) = stopped.thread_id {
                    if let Some((depth, nearest)) = self.nearest_workspace_frame(thread).await {
                        let id = self.handles().issue_frame(thread, depth, nearest.id);
                        stopped.shown_frame = Some(self.frame_view(id, &nearest));
                        frame = nearest;
                    }
                }
            }
            let stop = self.settings.stop;
            stopped.source = detail::source_lines(&frame, stop.source_before, stop.source_after);
            if stopped.source.is_some() {
                stopped.source_note = detail::changed_since(&frame, self.started_wall);
            }
            if stop.locals > 0 {
                stopped.locals = self.locals_summary(frame.id).await;
            }
        }
        position
    }

    /// A panic's stop whose message has not arrived yet: the hook printed it just before
    /// the stop, and the adapter's output event may trail the stop event.
    async fn await_panic_message(&self, stopped: &mut crate::report::Stopped) {
        let deadline = tokio::time::Instant::now() + PANIC_MESSAGE_WAIT;
        loop {
            let message = self.panic_message();
            if message.is_some() || tokio::time::Instant::now() >= deadline {
                stopped.text = Some(message.unwrap_or_else(|| {
                    "the panic's message was not printed (a custom panic hook?); `output` has \
                     what the program printed"
                        .to_owned()
                }));
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The last panic message in the output's end (the hook prints it just before the stop).
    fn panic_message(&self) -> Option<String> {
        let s = self.state.borrow();
        let from = s.output.total_bytes().saturating_sub(PANIC_MESSAGE_BYTES);
        panic_message(&s.output.since(from).0)
    }

    /// Whether the frame's code is the project's own: its source file is inside the
    /// workspace and outside any folder of installed code (a `.venv` in the checkout).
    fn in_workspace(&self, frame: &StackFrame) -> bool {
        let path = frame.source.as_ref().and_then(|s| s.path.as_deref());
        path.is_some_and(|path| Path::new(path).starts_with(&self.root))
            && crate::origin::library_origin(&frame.name, path, &self.root).is_none()
    }

    /// A frame as shown, its id `id` (ours).
    pub(crate) fn frame_view(&self, id: i64, frame: &StackFrame) -> FrameView {
        let on_disk = frame.source.as_ref().and_then(|s| s.path.clone());
        let function = function_name(&frame.name);
        let library = crate::origin::library_origin(&function, on_disk.as_deref(), &self.root);
        let shown = on_disk.or_else(|| frame.source.as_ref().and_then(|s| s.name.clone()));
        FrameView {
            id,
            library,
            function,
            file: shown.map(|p| display_path(&self.root, &p)),
            line: frame.line,
        }
    }

    /// The first of the thread's top frames whose source is inside the workspace, and its
    /// depth.
    async fn nearest_workspace_frame(&self, thread: i64) -> Option<(usize, StackFrame)> {
        let args = StackTraceArguments {
            thread_id: thread,
            start_frame: 0,
            levels: crate::report::MAX_FRAMES as i64,
        };
        let frames = self.call::<StackTrace>(&args).await.ok()?.stack_frames;
        frames
            .into_iter()
            .enumerate()
            .find(|(_, frame)| self.in_workspace(frame))
    }

    async fn top_frame(&self, generation: u64, thread: i64) -> Option<StackFrame> {
        if let Some(cached) = lock(&self.top_frame).as_ref() {
            if cached.generation == generation && cached.thread == thread {
                return cached.frame.clone();
            }
        }
        let args = StackTraceArguments {
            thread_id: thread,
            start_frame: 0,
            levels: 1,
        };
        let frame = match self
            .client
            .request::<StackTrace>(&args, self.settings.request_timeout)
            .await
        {
            Ok(response) => response.stack_frames.into_iter().next(),
            Err(error) => {
                tracing::debug!(%error, "could not read the top frame");
                None
            }
        };
        // Only a stop that is still current may be cached.
        if self.state.borrow().stop_generation == generation {
            *lock(&self.top_frame) = Some(TopFrame {
                generation,
                thread,
                frame: frame.clone(),
            });
        }
        frame
    }

    /// Waits until the program stops again (a stop after `generation`), ends, or the adapter
    /// goes, or `wait` passes, or the caller cancels.
    async fn wait_for_stop(
        &self,
        generation: u64,
        wait: Duration,
        interrupt: &mut Interrupt,
    ) -> Waited {
        let deadline = tokio::time::Instant::now() + wait;
        let expired = self.expired.clone();
        self.wait_until_or(deadline, interrupt, move |s| {
            s.stop_generation > generation
                || s.program_ended()
                || s.connection_closed.is_some()
                || expired.load(Ordering::SeqCst)
        })
        .await
    }

    /// delve reports a program's exit status only as console text after `disconnect`, and
    /// exits then: once the program has ended, asking is the only way to learn the code. The
    /// session itself lives on (output, status) until `terminate`.
    async fn learn_exit_code(&self) {
        let ask = {
            let s = self.state.borrow();
            self.kind == AdapterKind::Delve
                && s.program_ended()
                && s.exit_code.is_none()
                && s.connection_closed.is_none()
        };
        if !ask {
            return;
        }
        self.disconnect("delve, after the program ended").await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        self.wait_until(deadline, |s| {
            s.exit_code.is_some() || s.connection_closed.is_some()
        })
        .await;
        // delve exits now, closing the pipes that carry the program's output: read them to
        // their end so `output` is complete.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        self.wait_until(deadline, |s| s.open_output_pipes == 0)
            .await;
    }

    /// Sends `disconnect` ending the debuggee; a failure is only logged (`when` says where),
    /// since every caller goes on to end the session anyway.
    async fn disconnect(&self, when: &str) {
        let args = DisconnectArguments {
            restart: false,
            terminate_debuggee: true,
        };
        if let Err(error) = self
            .client
            .request::<Disconnect>(&args, DISCONNECT_TIMEOUT)
            .await
        {
            tracing::debug!(%error, when, "the adapter did not answer `disconnect`");
        }
    }

    /// After `launch`/`attach`: waits for the first stop or the end (`block` false: returns
    /// at once). `None` when the caller cancelled the wait (the program runs on).
    pub(crate) async fn settle(
        &self,
        block: bool,
        wait: Duration,
        interrupt: &mut Interrupt,
    ) -> Option<(Position, Option<OutputPiece>, Option<String>)> {
        let waited = if block {
            self.wait_for_stop(0, wait, interrupt).await
        } else {
            Waited::Reached
        };
        if waited == Waited::Interrupted {
            return None;
        }
        self.learn_exit_code().await;
        let note = (waited == Waited::TimedOut).then(|| still_running_note(wait));
        Some((self.stop_position().await, self.output_since(0), note))
    }

    /// The exception filters and function breakpoints the launch set, and the note on
    /// asked-for filters the adapter does not offer.
    pub(crate) fn exception_stops(&self) -> (ExceptionStops, Option<String>) {
        (self.exception_stops.clone(), self.filter_note.clone())
    }

    /// Starts the hard time-to-live, once the session is up (the launch sequence has its
    /// own timeout): when it passes, every process of the session is killed.
    pub(crate) fn arm_ttl(&mut self) {
        self.started = Instant::now();
        let expired = self.expired.clone();
        let tracker = self.tracker.clone();
        let client = self.client.clone();
        let ttl = self.settings.ttl;
        self.tasks.push(tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            expired.store(true, Ordering::SeqCst);
            tracing::info!(?ttl, "debug session expired; killing its processes");
            tracker.kill_all();
            // An adapter that is not ours ends when its client goes.
            client.close_input().await;
        }));
    }

    /// The program's output kept so far: (text, bytes printed in all, bytes dropped).
    pub(crate) fn output(&self) -> (String, u64, u64) {
        let s = self.state.borrow();
        (
            s.output.text(),
            s.output.total_bytes(),
            s.output.dropped_bytes(),
        )
    }

    /// Ends the session: `disconnect` (ending the debuggee), close the adapter's input, wait
    /// for it to exit, then kill whatever is left. Works whatever state the program and the
    /// adapter are in.
    pub(crate) async fn terminate(self) -> Ended {
        self.tracker.refresh();
        let open = self.state.borrow().connection_closed.is_none() && !self.is_expired();
        if open {
            self.disconnect("terminate; the adapter will be killed")
                .await;
        }
        self.state.send_modify(|s| s.recording = false);
        self.client.close_input().await;
        let child = lock(&self.child).take();
        let status = match child {
            Some(mut child) => {
                let status = child.wait_or_kill(EXIT_GRACE).await;
                self.tracker.mark_reaped();
                status.ok().map(describe_status)
            }
            // The event task reaped it when the connection ended.
            None => self.state.borrow().adapter_exit.clone(),
        };
        let leftovers = self.tracker.alive();
        self.tracker.kill_all();
        wait_gone(&self.tracker).await;
        let s = self.state.borrow();
        Ended {
            adapter_exit: status,
            killed_leftovers: leftovers.len(),
            exit_code: s.exit_code,
            program_ended: s.program_ended(),
        }
    }

    /// Kills everything at once, without the protocol and without the session (shutdown
    /// while an operation holds it).
    pub(crate) fn killer(&self) -> Killer {
        let tracker = self.tracker.clone();
        Arc::new(move || tracker.kill_all())
    }

    /// Reaps the adapter after it was killed.
    pub(crate) async fn reap(self) {
        self.tracker.kill_all();
        let child = lock(&self.child).take();
        if let Some(mut child) = child {
            let _ = child.wait_or_kill(Duration::from_secs(2)).await;
            self.tracker.mark_reaped();
        }
        wait_gone(&self.tracker).await;
    }
}

/// How a terminated session ended.
#[derive(Debug)]
pub(crate) struct Ended {
    /// How the adapter process exited, when it was seen to.
    pub(crate) adapter_exit: Option<String>,
    /// Processes still alive after the adapter was gone, killed then.
    pub(crate) killed_leftovers: usize,
    /// The program's exit code, when the adapter reported one.
    pub(crate) exit_code: Option<i64>,
    /// Whether the program had ended.
    pub(crate) program_ended: bool,
}

/// An exception stop's text without debugpy's trailer ("(note: full exception trace is
/// shown but execution is paused at: f)"): the stop line says where it is paused.
fn stop_text(text: &str) -> String {
    let text = text.trim_end();
    match text.rfind("(note: full exception trace is shown") {
        Some(at) if text.ends_with(')') => text[..at].trim_end().to_owned(),
        _ => text.to_owned(),
    }
}

/// How far back in the output a panic's message is looked for.
const PANIC_MESSAGE_BYTES: u64 = 16 * 1024;

/// How long a panic's stop waits for the hook's message to arrive as output.
const PANIC_MESSAGE_WAIT: Duration = Duration::from_millis(500);

/// The last panic message in `output`: from `thread '…' panicked at …` to the end of the
/// message (before the backtrace, or the note on how to get one), at most a few lines.
fn panic_message(output: &str) -> Option<String> {
    let start = output.rfind("panicked at ")?;
    let line_start = output[..start].rfind('\n').map_or(0, |at| at + 1);
    let message: Vec<&str> = output[line_start..]
        .lines()
        .take_while(|line| {
            !line.starts_with("note: run with `RUST_BACKTRACE")
                && !line.starts_with("stack backtrace:")
        })
        .take(12)
        .collect();
    Some(message.join("\n").trim_end().to_owned())
}

/// What a result says when its wait ran out with the program still running.
pub(crate) fn still_running_note(wait: Duration) -> String {
    format!(
        "the program is still running after {}s (the wait limit; `wait_s` sets it per call); \
         call `pause` to stop it, `continue` to wait again, or `status`",
        wait.as_secs_f64()
    )
}

/// Whether the frame's source file exists here (a toolchain's `/rustc/<hash>/…` does not).
fn source_on_disk(frame: &StackFrame) -> bool {
    frame
        .source
        .as_ref()
        .and_then(|s| s.path.as_ref())
        .is_some_and(|path| Path::new(path).is_file())
}

/// Waits (briefly) until every tracked process is gone, so a caller that checks the process
/// table right after sees them gone.
async fn wait_gone(tracker: &Tracker) {
    for _ in 0..50 {
        if tracker.alive().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tracing::warn!(alive = ?tracker.alive(), "debug session processes survived SIGKILL");
}

impl Drop for Session {
    fn drop(&mut self) {
        self.tracker.kill_all();
        for task in &self.tasks {
            task.abort();
        }
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod panic_tests {
    #[test]
    fn toolchain_paths_lose_their_hash() {
        let root = std::path::Path::new("/w");
        assert_eq!(
            super::display_path(
                root,
                "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs"
            ),
            "/rustc/…/library/std/src/panicking.rs"
        );
        assert_eq!(super::display_path(root, "/w/src/a.rs"), "src/a.rs");
        assert_eq!(
            super::display_path(root, "/rustc/short/x.rs"),
            "/rustc/short/x.rs"
        );
        assert_eq!(
            crate::report::function_name(
                "test_version::test_display::_$u7b$$u7b$closure$u7d$$u7d$::h0123456789abcdef"
            ),
            "test_version::test_display::{{closure}}"
        );
        assert_eq!(
            crate::report::function_name("test_valid (Current frame)"),
            "test_valid"
        );
    }

    #[test]
    fn the_last_panic_message_without_the_backtrace_note() {
        let output = "running 1 test\nthread 'a' panicked at src/a.rs:1:1:\nold\n\
                      thread 'test_display' panicked at tests/util/mod.rs:12:5:\n\
                      assertion `left == right` failed\n  left: \"2.4.6\"\n right: \"1.2.3\"\n\
                      note: run with `RUST_BACKTRACE=1` environment variable to display a \
                      backtrace\n";
        assert_eq!(
            super::panic_message(output).unwrap(),
            "thread 'test_display' panicked at tests/util/mod.rs:12:5:\nassertion `left == \
             right` failed\n  left: \"2.4.6\"\n right: \"1.2.3\""
        );
        assert_eq!(super::panic_message("no panic here\n"), None);
        // With RUST_BACKTRACE set in the program's environment.
        let traced = "thread 't' panicked at src/a.rs:1:1:\nboom\nstack backtrace:\n   0: x\n";
        assert_eq!(
            super::panic_message(traced).unwrap(),
            "thread 't' panicked at src/a.rs:1:1:\nboom"
        );
    }
}
