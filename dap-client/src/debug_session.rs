//! The debugger: one debug session at a time, with its breakpoints, its TTL, and
//! the adapter table for one workspace root.

use cc_process::lock;
use cc_workspace::BrokenSection;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::adapters::{attach_arguments, AdapterKind};
use crate::config::{DebugConfig, Settings};
use crate::detect::{self, Environment};
use crate::error::DebugError;
use crate::interrupt::Interrupt;
use crate::plan::{self, LaunchRequest};
use crate::report::{
    AdaptersReport, BreakpointView, BreakpointsReport, EvaluateReport, FileBreakpoints,
    LocalsReport, OutputReport, Position, ProgramEnd, ProgramState, ScopesReport, StackReport,
    StartReport, StatusReport, StepReport, TerminateReport, ThreadsReport, VariablesReport,
};
use crate::ring::OutputRing;
use crate::session::{
    display_path, Action, Endpoint, Failure, Killer, Session, StartKind, StartParams,
};

enum Slot {
    Empty,
    Live(Box<Session>),
    /// The TTL killed the session; what it printed is kept.
    Expired {
        describe: String,
        ttl: Duration,
        output: OutputRing,
    },
    /// The last launch failed; why, and what was printed (the build's errors, the program's
    /// output) are kept for `status` and `output`.
    Failed {
        target: String,
        error: String,
        output: OutputRing,
    },
}

/// The note of `output` before any program ran.
const NOTHING_RAN: &str = "no program has run yet";

/// Runs at most one debug session at a time, rooted at one workspace.
///
/// Operations are `async` and may be called from any task; they are serialized internally.
/// Dropping it kills the session's processes.
pub struct DebugSession {
    env: Environment,
    config: DebugConfig,
    /// A `[debug]` section that could not be used (the defaults are in place, and `launch`
    /// refuses until it is fixed).
    config_error: Option<BrokenSection>,
    extra_env: Vec<(String, String)>,
    slot: tokio::sync::Mutex<Slot>,
    breakpoints: Mutex<BTreeMap<PathBuf, Vec<BreakpointView>>>,
    /// A way to kill the live session without waiting for an operation in progress.
    killer: Mutex<Option<Killer>>,
}

impl std::fmt::Debug for DebugSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugSession")
            .field("root", &self.env.root)
            .field("config_error", &self.config_error)
            .finish_non_exhaustive()
    }
}

impl DebugSession {
    /// A debugger for the workspace at `root` with `config`.
    pub fn new(root: impl Into<PathBuf>, config: DebugConfig) -> Self {
        DebugSession {
            env: Environment::new(root),
            config,
            config_error: None,
            extra_env: Vec::new(),
            slot: tokio::sync::Mutex::new(Slot::Empty),
            breakpoints: Mutex::new(BTreeMap::new()),
            killer: Mutex::new(None),
        }
    }

    /// A debugger whose `[debug]` section could not be used: `adapters` reports `broken`
    /// and `launch`/`attach` refuse with it, so the tool stays and says what to fix.
    pub fn broken(root: impl Into<PathBuf>, broken: BrokenSection) -> Self {
        DebugSession {
            config_error: Some(broken),
            ..DebugSession::new(root, DebugConfig::default())
        }
    }

    /// The project's Python as the host configured it (`[lsp.python] interpreter`, relative
    /// to the root or absolute): programs, modules and pytest run with it. Without it the
    /// resolution of `cc_workspace::python` chooses (see [`crate::detect::project_python`]).
    #[must_use]
    pub fn with_python(mut self, python: Option<PathBuf>) -> Self {
        self.env.python = python;
        self
    }

    /// Uses `path` instead of the process's `PATH` to find adapters (and starts them with it).
    #[must_use]
    pub fn with_search_path(mut self, path: impl Into<OsString>) -> Self {
        self.env.search_path = path.into();
        self
    }

    /// Sets an environment variable for the adapters (and so the programs) it starts.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_env.push((key.into(), value.into()));
        self
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.env.root
    }

    /// The timeouts in force.
    pub fn settings(&self) -> Settings {
        self.config.settings()
    }

    /// The adapter table, with detection for this workspace.
    pub async fn adapters(&self) -> AdaptersReport {
        let mut adapters = Vec::new();
        let probes = AdapterKind::ALL.map(|kind| detect::status(kind, &self.env, &self.config));
        let [a, b, c, d] = probes;
        let (a, b, c, d) = tokio::join!(a, b, c, d);
        adapters.extend([a, b, c, d]);
        AdaptersReport {
            adapters,
            config_error: self.config_error.as_ref().map(ToString::to_string),
        }
    }

    /// Every pid the live session started that is known (adapter, its descendants, the
    /// debuggee), for process-table checks. Empty without a session.
    pub async fn session_pids(&self) -> Vec<u32> {
        match &*self.slot.lock().await {
            Slot::Live(session) => session.known_pids(),
            _ => Vec::new(),
        }
    }

    /// The live session's adapter and debuggee pids.
    pub async fn pids(&self) -> (Option<u32>, Option<u32>) {
        match &*self.slot.lock().await {
            Slot::Live(session) => (session.adapter_pid(), session.debuggee_pid()),
            _ => (None, None),
        }
    }

    /// Moves an expired session to the `Expired` slot, reaping its processes.
    async fn settle_expiry(&self, slot: &mut Slot) {
        let expired = matches!(slot, Slot::Live(session) if session.is_expired());
        if !expired {
            return;
        }
        let Slot::Live(session) = std::mem::replace(slot, Slot::Empty) else {
            return;
        };
        let describe = session.describe();
        let ttl = session.ttl();
        let mut output = OutputRing::new(self.settings().output_buffer_bytes);
        output.push(&session.output().0);
        session.reap().await;
        *lock(&self.killer) = None;
        self.reset_breakpoints();
        *slot = Slot::Expired {
            describe,
            ttl,
            output,
        };
    }

    fn reset_breakpoints(&self) {
        for views in lock(&self.breakpoints).values_mut() {
            for view in views {
                view.verified = None;
                view.actual_line = None;
                view.message = None;
            }
        }
    }

    fn breakpoint_list(&self) -> Vec<FileBreakpoints> {
        lock(&self.breakpoints)
            .iter()
            .map(|(file, views)| FileBreakpoints {
                file: display_path(&self.env.root, &file.display().to_string()),
                breakpoints: views.clone(),
            })
            .collect()
    }

    /// The live session, or why there is none.
    async fn live<'a>(&self, slot: &'a mut Slot) -> Result<&'a Session, DebugError> {
        self.settle_expiry(slot).await;
        match slot {
            Slot::Empty | Slot::Failed { .. } => Err(DebugError::NoSession),
            Slot::Expired { describe, ttl, .. } => Err(DebugError::SessionExpired {
                describe: describe.clone(),
                ttl: *ttl,
            }),
            Slot::Live(session) => Ok(session),
        }
    }

    /// `status`: the session, where the program is, and every breakpoint.
    pub async fn status(&self) -> StatusReport {
        let mut slot = self.slot.lock().await;
        self.settle_expiry(&mut slot).await;
        let (session, position, note) = match &*slot {
            Slot::Empty => (None, Position::bare(ProgramState::None), None),
            Slot::Failed { target, error, .. } => (
                None,
                Position::bare(ProgramState::LaunchFailed),
                Some(failed_note(target, error)),
            ),
            Slot::Expired { describe, ttl, .. } => (
                None,
                Position::bare(ProgramState::Expired),
                Some(format!(
                    "the session ({describe}) expired after {}s and was killed; `launch` starts \
                     a new one",
                    ttl.as_secs()
                )),
            ),
            Slot::Live(session) => {
                let note = session.check_usable().err().map(|error| error.to_string());
                (Some(session.info()), session.position().await, note)
            }
        };
        StatusReport {
            session,
            breakpoints: self.breakpoint_list(),
            position,
            note,
        }
    }

    /// `breakpoints`: sets the lines of `file` (absolute), replacing its previous ones; an
    /// empty list clears it. Kept for later sessions; sent at once to a live one.
    pub async fn set_breakpoints(
        &self,
        file: &Path,
        lines: &[i64],
    ) -> Result<BreakpointsReport, DebugError> {
        if let Some(bad) = lines.iter().find(|line| **line < 1) {
            return Err(DebugError::InvalidArguments(format!(
                "line {bad} is not a line number; lines are 1-based"
            )));
        }
        let mut wanted: Vec<i64> = Vec::new();
        for line in lines {
            if !wanted.contains(line) {
                wanted.push(*line);
            }
        }
        let mut slot = self.slot.lock().await;
        self.settle_expiry(&mut slot).await;
        let shown = display_path(&self.env.root, &file.display().to_string());
        let pending_views: Vec<BreakpointView> = wanted
            .iter()
            .map(|&line| BreakpointView {
                line,
                verified: None,
                actual_line: None,
                message: None,
            })
            .collect();
        // Why the lines cannot go to an adapter now, and when they will.
        let (waits_for, position) = match &*slot {
            Slot::Live(session) => match session.check_usable() {
                Ok(()) if session.program_ended() => (
                    Some(
                        "the program has exited: these breakpoints are sent to the next session \
                         (`terminate`, then `launch`)",
                    ),
                    session.position().await,
                ),
                Ok(()) => (None, session.position().await),
                Err(_) => (
                    Some(
                        "the debug adapter exited: these breakpoints are sent when `launch` \
                         starts a new session",
                    ),
                    session.position().await,
                ),
            },
            Slot::Expired { .. } => (
                Some(
                    "the session expired: these breakpoints are sent when `launch` starts a new \
                     one",
                ),
                Position::bare(ProgramState::Expired),
            ),
            Slot::Empty => (
                Some(
                    "no debug session yet: these breakpoints are sent when `launch` (or \
                     `attach`) starts one",
                ),
                Position::bare(ProgramState::None),
            ),
            Slot::Failed { .. } => (
                Some(
                    "the last launch failed: these breakpoints are sent when `launch` (or \
                     `attach`) starts a session",
                ),
                Position::bare(ProgramState::LaunchFailed),
            ),
        };
        let (views, note) = match (&*slot, waits_for) {
            (Slot::Live(session), None) => (
                session.set_breakpoints(file, &wanted).await?.breakpoints,
                None,
            ),
            // Clearing needs no explanation.
            (_, why) => (
                pending_views,
                why.filter(|_| !wanted.is_empty()).map(str::to_owned),
            ),
        };
        let pending = waits_for.is_some();
        {
            let mut map = lock(&self.breakpoints);
            if wanted.is_empty() {
                map.remove(file);
            } else {
                map.insert(file.to_path_buf(), views.clone());
            }
        }
        Ok(BreakpointsReport {
            file: shown,
            breakpoints: views,
            pending,
            position,
            note,
        })
    }

    /// Refuses a start while a session's program runs or is stopped; ends one whose
    /// program exited (the next `launch` needs no `terminate`: the note says which one was
    /// ended) and clears a dead or expired one.
    async fn make_room(&self, slot: &mut Slot) -> Result<Option<String>, DebugError> {
        self.settle_expiry(slot).await;
        let mut ended = None;
        if let Slot::Live(session) = slot {
            if session.program_ended() {
                ended = Some(format!(
                    "the previous session ({}) was ended first",
                    session.describe()
                ));
            } else if !session.adapter_lost() {
                return Err(DebugError::SessionActive {
                    describe: session.describe(),
                });
            }
        }
        if let Slot::Live(session) = std::mem::replace(slot, Slot::Empty) {
            session.reap().await;
        }
        *lock(&self.killer) = None;
        self.reset_breakpoints();
        if let Some(broken) = &self.config_error {
            return Err(DebugError::Config(broken.to_string()));
        }
        Ok(ended)
    }

    /// `launch`: starts `program` (absolute) with `args` under the adapter it needs (or
    /// `adapter`), sends every breakpoint set so far, and waits until the program stops,
    /// exits, or the wait limit passes.
    pub async fn launch(
        &self,
        program: &Path,
        args: &[String],
        adapter: Option<&str>,
    ) -> Result<StartReport, DebugError> {
        let mut request = LaunchRequest::program(program, args);
        request.adapter = adapter.map(str::to_owned);
        self.launch_with(&request, Interrupt::never()).await
    }

    /// `launch` of a program, a Python module or a test ([`LaunchRequest`]). A test is built
    /// first when it needs to be (cargo); a build that fails is a [`DebugError::BuildFailed`]
    /// carrying the compiler's text, which `output` and `status` keep. When `interrupt` fires
    /// the call returns [`DebugError::Cancelled`]: during the build or the launch sequence
    /// nothing is left running; while waiting for the first stop the session lives on.
    pub async fn launch_with(
        &self,
        request: &LaunchRequest,
        mut interrupt: Interrupt,
    ) -> Result<StartReport, DebugError> {
        let mut slot = self.slot.lock().await;
        let ended = self.make_room(&mut slot).await?;
        let context = plan::Context {
            env: &self.env,
            extra_env: &self.extra_env,
            config: &self.config,
            settings: self.settings(),
        };
        let target = describe_request(&self.env.root, request);
        let planned = plan::plan(&context, request, &mut interrupt).await;
        let plan = match planned {
            Ok(plan) => plan,
            Err(error) => return Err(self.failed(&mut slot, &target, error, String::new())),
        };
        let kind = plan.kind;
        let resolved = match detect::resolve(kind, &self.env, &self.config).await {
            Ok(resolved) => resolved,
            Err(reason) => {
                let error = DebugError::AdapterUnavailable {
                    adapter: kind.name().into(),
                    reason,
                };
                return Err(self.failed(&mut slot, &plan.target, error, String::new()));
            }
        };
        let mut notes = plan.notes.clone();
        notes.extend(ended);
        self.start(
            &mut slot,
            Start {
                adapter: kind,
                endpoint: Endpoint::Spawn(resolved),
                kind: StartKind::Launch,
                arguments: plan.arguments,
                target: plan.target,
                extra_filters: plan.extra_filters,
                function_breakpoints: plan.function_breakpoints,
                chosen_filters: request.exceptions.clone(),
                notes,
                wait: request.wait.unwrap_or(self.settings().wait),
            },
            &mut interrupt,
        )
        .await
    }

    /// Records a launch that failed (so `output` and `status` can still say what happened)
    /// and returns its error.
    fn failed(
        &self,
        slot: &mut Slot,
        target: &str,
        error: DebugError,
        output: String,
    ) -> DebugError {
        // A mistake in the request (or a cancel) ran nothing: there is nothing to keep.
        let ran = matches!(
            error,
            DebugError::BuildFailed { .. }
                | DebugError::LaunchFailed { .. }
                | DebugError::Timeout { .. }
                | DebugError::AdapterExited { .. }
                | DebugError::Request(_)
                | DebugError::Io(_)
        );
        if !ran {
            return error;
        }
        let mut ring = OutputRing::new(self.settings().output_buffer_bytes);
        ring.push(&output);
        if let DebugError::BuildFailed { output, .. } = &error {
            if !ring.text().contains(output.as_str()) {
                ring.push(output);
            }
        }
        *slot = Slot::Failed {
            target: target.to_owned(),
            error: error.to_string(),
            output: ring,
        };
        error
    }

    /// `attach`: connects to a program listening on `127.0.0.1:port` (debugpy) and sends every
    /// breakpoint set so far. Returns at once: the program keeps running.
    pub async fn attach(
        &self,
        port: u16,
        adapter: Option<&str>,
    ) -> Result<StartReport, DebugError> {
        let mut slot = self.slot.lock().await;
        let ended = self.make_room(&mut slot).await?;
        let kind = match adapter {
            Some(name) => {
                AdapterKind::from_name(name).ok_or_else(|| DebugError::UnknownAdapter {
                    name: name.into(),
                    known: AdapterKind::names().join(", "),
                })?
            }
            None => AdapterKind::Debugpy,
        };
        let extra = self.config.adapter(kind).and_then(|o| o.launch.as_ref());
        let arguments = attach_arguments(kind, extra)?;
        // A listening debugpy runs its own adapter: connect to it, start nothing.
        let endpoint = Endpoint::Connect {
            host: "127.0.0.1".into(),
            port,
        };
        self.start(
            &mut slot,
            Start {
                adapter: kind,
                endpoint,
                kind: StartKind::Attach,
                arguments,
                target: format!("127.0.0.1:{port}"),
                extra_filters: Vec::new(),
                function_breakpoints: Vec::new(),
                chosen_filters: None,
                notes: ended.into_iter().collect(),
                wait: self.settings().wait,
            },
            &mut Interrupt::never(),
        )
        .await
    }

    async fn start(
        &self,
        slot: &mut Slot,
        start: Start,
        interrupt: &mut Interrupt,
    ) -> Result<StartReport, DebugError> {
        let Start {
            adapter,
            endpoint,
            kind: start,
            arguments,
            target,
            extra_filters,
            function_breakpoints,
            chosen_filters,
            notes,
            wait,
        } = start;
        let breakpoints: BTreeMap<PathBuf, Vec<i64>> = lock(&self.breakpoints)
            .iter()
            .map(|(file, views)| (file.clone(), views.iter().map(|v| v.line).collect()))
            .collect();
        let params = StartParams {
            kind: adapter,
            endpoint,
            start,
            arguments,
            target: target.clone(),
            env: &self.env,
            extra_env: &self.extra_env,
            settings: self.settings(),
            breakpoints: &breakpoints,
            extra_filters,
            chosen_filters,
            function_breakpoints,
            killer: &self.killer,
        };
        let started = Session::start(params, interrupt).await;
        let (session, placed) = match started {
            Ok(started) => started,
            Err(Failure { error, output }) => {
                *lock(&self.killer) = None;
                return Err(self.failed(slot, &target, error, output));
            }
        };
        {
            let mut map = lock(&self.breakpoints);
            for file in placed {
                let path = self.env.root.join(&file.file);
                if let Some(views) = map.get_mut(&path) {
                    *views = file.breakpoints;
                }
            }
        }
        let settled = session
            .settle(start == StartKind::Launch, wait, interrupt)
            .await;
        if let Err(error) = session.check_usable() {
            // The adapter died before the program first stopped or ended.
            let output = session.failure_output();
            session.reap().await;
            *lock(&self.killer) = None;
            return Err(self.failed(slot, &target, error, output));
        }
        let Some((position, output, note)) = settled else {
            // Cancelled while waiting for the first stop: the session lives on.
            let describe = session.describe();
            let mut session = session;
            session.arm_ttl();
            *lock(&self.killer) = Some(session.killer());
            *slot = Slot::Live(Box::new(session));
            return Err(DebugError::Cancelled(format!(
                "the launch was cancelled while waiting for the program to stop; the session \
                 lives on ({describe}): `pause` stops the program, `status` says where it is, \
                 `terminate` ends it"
            )));
        };
        let (exceptions, filter_note) = session.exception_stops();
        let mut notes = notes;
        notes.extend(filter_note);
        let note = join_notes(notes, note);
        let report = StartReport {
            adapter: adapter.name().into(),
            target,
            adapter_pid: session.adapter_pid(),
            debuggee_pid: session.debuggee_pid(),
            breakpoints: self.breakpoint_list(),
            exceptions,
            position,
            output,
            note,
        };
        let mut session = session;
        session.arm_ttl();
        *lock(&self.killer) = Some(session.killer());
        *slot = Slot::Live(Box::new(session));
        Ok(report)
    }

    /// `continue`, `pause`, `step_over`, `step_in`, `step_out`: moves the program and waits
    /// until it stops or exits (or the wait limit passes, which the result says).
    pub async fn act(&self, action: Action, thread: Option<i64>) -> Result<StepReport, DebugError> {
        self.act_with(action, thread, Interrupt::never()).await
    }

    /// [`act`](Self::act), ending the wait with [`DebugError::Cancelled`] when `interrupt`
    /// fires (the program keeps running; the session stays usable).
    pub async fn act_with(
        &self,
        action: Action,
        thread: Option<i64>,
        interrupt: Interrupt,
    ) -> Result<StepReport, DebugError> {
        self.act_waiting(action, thread, None, interrupt).await
    }

    /// [`act_with`](Self::act_with) with this call's own wait limit (`None`: the
    /// configured one).
    pub async fn act_waiting(
        &self,
        action: Action,
        thread: Option<i64>,
        wait: Option<Duration>,
        mut interrupt: Interrupt,
    ) -> Result<StepReport, DebugError> {
        let wait = wait.unwrap_or(self.settings().wait);
        let mut slot = self.slot.lock().await;
        let session = self.live(&mut slot).await?;
        session.act(action, thread, wait, &mut interrupt).await
    }

    /// `locals`: one scope of a frame (default: the stopped thread's top frame, its locals;
    /// `scope` names another, such as `globals`), at most 50 variables, values cut to 400
    /// characters, each with its reference.
    pub async fn locals(
        &self,
        frame_id: Option<i64>,
        scope: Option<&str>,
    ) -> Result<LocalsReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.live(&mut slot).await?.locals(frame_id, scope).await
    }

    /// `threads`.
    pub async fn threads(&self) -> Result<ThreadsReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.live(&mut slot).await?.threads().await
    }

    /// `stack` of `thread` (default: the stopped thread), at most 30 frames.
    pub async fn stack(&self, thread: Option<i64>) -> Result<StackReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.live(&mut slot).await?.stack(thread).await
    }

    /// `scopes` of a frame.
    pub async fn scopes(&self, frame_id: i64) -> Result<ScopesReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.live(&mut slot).await?.scopes(frame_id).await
    }

    /// `variables` of a reference, at most 50 children, values cut to 400 characters.
    pub async fn variables(&self, reference: i64) -> Result<VariablesReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.live(&mut slot).await?.variables(reference).await
    }

    /// `evaluate` in `frame_id` (default: the top frame of the stopped thread).
    pub async fn evaluate(
        &self,
        expression: &str,
        frame_id: Option<i64>,
    ) -> Result<EvaluateReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.live(&mut slot)
            .await?
            .evaluate(expression, frame_id)
            .await
    }

    /// `output`: what the program printed (stdout and stderr), as the ring buffer keeps it.
    /// Answers in every state: after the program exited, the adapter died, the session
    /// expired, a launch failed (with the build's errors), and before any launch (empty).
    pub async fn output(&self) -> Result<OutputReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.settle_expiry(&mut slot).await;
        let kept = |ring: &OutputRing, state: ProgramState, note: Option<String>| OutputReport {
            output: ring.text(),
            total_bytes: ring.total_bytes(),
            dropped_bytes: ring.dropped_bytes(),
            truncated: ring.dropped_bytes() > 0,
            position: Position::bare(state),
            note,
        };
        match &*slot {
            Slot::Empty => Ok(OutputReport {
                output: String::new(),
                total_bytes: 0,
                dropped_bytes: 0,
                truncated: false,
                position: Position::bare(ProgramState::None),
                note: Some(NOTHING_RAN.into()),
            }),
            Slot::Expired { output, .. } => Ok(kept(output, ProgramState::Expired, None)),
            Slot::Failed {
                target,
                error,
                output,
            } => Ok(kept(
                output,
                ProgramState::LaunchFailed,
                Some(failed_note(target, error)),
            )),
            Slot::Live(session) => {
                let (output, total_bytes, dropped_bytes) = session.output();
                Ok(OutputReport {
                    output,
                    total_bytes,
                    dropped_bytes,
                    truncated: dropped_bytes > 0,
                    position: session.position().await,
                    note: session.check_usable().err().map(|error| error.to_string()),
                })
            }
        }
    }

    /// `terminate`: ends the debuggee and the adapter and reaps both. Succeeds whatever state
    /// the session is in, and without one.
    pub async fn terminate(&self) -> TerminateReport {
        let mut slot = self.slot.lock().await;
        self.settle_expiry(&mut slot).await;
        let previous = std::mem::replace(&mut *slot, Slot::Empty);
        *lock(&self.killer) = None;
        self.reset_breakpoints();
        let nothing = |note: String| TerminateReport {
            terminated: false,
            adapter: None,
            adapter_exit: None,
            killed_leftovers: 0,
            exited: None,
            program: None,
            state: ProgramState::None,
            note: Some(note),
        };
        match previous {
            Slot::Empty => nothing("no debug session was running".into()),
            Slot::Failed { target, .. } => nothing(format!(
                "no debug session was running (the last launch, of {target}, had failed)"
            )),
            Slot::Expired { describe, .. } => nothing(format!(
                "the session ({describe}) had already expired and its processes were killed"
            )),
            Slot::Live(session) => {
                let adapter = session.kind().name().to_owned();
                // The program's own end, read before this call ends it: once `disconnect`
                // has killed it, adapters report their own exit (debugpy "code 0", lldb-dap
                // SIGABRT), which says nothing about the program.
                let before = session.position().await;
                let ended = session.terminate().await;
                let program = match before.state {
                    ProgramState::Exited => ProgramEnd::Exited {
                        code: before.exited.and_then(|e| e.code),
                    },
                    ProgramState::Stopped => ProgramEnd::KilledWhileStopped {
                        at: before.stopped.map(|s| {
                            format!(
                                "{}:{}",
                                s.file.as_deref().unwrap_or("?"),
                                s.line.map_or_else(|| "?".to_owned(), |l| l.to_string())
                            )
                        }),
                    },
                    ProgramState::Running => ProgramEnd::KilledWhileRunning,
                    _ => ProgramEnd::Unknown,
                };
                TerminateReport {
                    terminated: true,
                    adapter: Some(adapter),
                    adapter_exit: ended.adapter_exit,
                    killed_leftovers: ended.killed_leftovers,
                    exited: ended.program_ended.then_some(crate::report::Exited {
                        code: ended.exit_code,
                    }),
                    program: Some(program),
                    state: ProgramState::None,
                    note: None,
                }
            }
        }
    }

    /// Ends the session's processes at once (the run is over): kills first, without waiting
    /// for an operation in progress, then reaps.
    pub async fn shutdown(&self) {
        // Kill first: an operation in progress (even a launch) holds the session.
        let killer = lock(&self.killer).take();
        if let Some(kill) = killer {
            kill();
        }
        if let Ok(mut slot) = tokio::time::timeout(Duration::from_secs(3), self.slot.lock()).await {
            if let Slot::Live(session) = std::mem::replace(&mut *slot, Slot::Empty) {
                session.reap().await;
            }
        }
    }
}

/// What one start gets.
struct Start {
    adapter: AdapterKind,
    endpoint: Endpoint,
    kind: StartKind,
    arguments: serde_json::Value,
    target: String,
    extra_filters: Vec<String>,
    function_breakpoints: Vec<String>,
    chosen_filters: Option<Vec<String>>,
    notes: Vec<String>,
    /// How long to wait for the first stop.
    wait: Duration,
}

fn failed_note(target: &str, error: &str) -> String {
    format!("the last launch ({target}) failed: {error}")
}

fn join_notes(mut notes: Vec<String>, last: Option<String>) -> Option<String> {
    notes.extend(last);
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// What a launch request runs, before planning says it better.
fn describe_request(root: &Path, request: &LaunchRequest) -> String {
    match &request.target {
        plan::LaunchTarget::Program(path) => display_path(root, &path.display().to_string()),
        plan::LaunchTarget::Module(module) => format!("python -m {module}"),
        plan::LaunchTarget::Test(spec) => format!("test {spec}"),
    }
}
