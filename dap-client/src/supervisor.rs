//! The supervisor: one debug session per conversation, with its breakpoints, its TTL, and
//! the adapter table for one workspace root.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::adapters::{attach_arguments, launch_arguments, pick_adapter, AdapterKind};
use crate::config::{DebugConfig, Settings};
use crate::detect::{self, Environment};
use crate::error::DebugError;
use crate::report::{
    AdaptersReport, BreakpointView, BreakpointsReport, EvaluateReport, FileBreakpoints,
    OutputReport, Position, ProgramState, ScopesReport, StackReport, StartReport, StatusReport,
    StepReport, TerminateReport, ThreadsReport, VariablesReport,
};
use crate::ring::OutputRing;
use crate::session::{display_path, Action, Endpoint, Killer, Session, StartKind, StartParams};

enum Slot {
    Empty,
    Live(Box<Session>),
    /// The TTL killed the session; what it printed is kept.
    Expired {
        describe: String,
        ttl: Duration,
        output: OutputRing,
    },
}

/// Runs at most one debug session for one conversation, rooted at one workspace.
///
/// Operations are `async` and may be called from any task; they are serialized internally.
/// Dropping the supervisor kills the session's processes.
pub struct Supervisor {
    env: Environment,
    config: DebugConfig,
    config_error: Option<String>,
    extra_env: Vec<(String, String)>,
    slot: tokio::sync::Mutex<Slot>,
    breakpoints: Mutex<BTreeMap<PathBuf, Vec<BreakpointView>>>,
    /// A way to kill the live session without waiting for an operation in progress.
    killer: Mutex<Option<Killer>>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("root", &self.env.root)
            .field("config_error", &self.config_error)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Supervisor {
    /// A supervisor for the workspace at `root` with `config`.
    pub fn new(root: impl Into<PathBuf>, config: DebugConfig) -> Self {
        Supervisor {
            env: Environment::new(root),
            config,
            config_error: None,
            extra_env: Vec::new(),
            slot: tokio::sync::Mutex::new(Slot::Empty),
            breakpoints: Mutex::new(BTreeMap::new()),
            killer: Mutex::new(None),
        }
    }

    /// A supervisor configured from `<root>/.cc/tools.toml`. An invalid `[debug]` section is
    /// reported by `adapters` and refuses `launch`/`attach` until fixed.
    pub fn from_root(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        match DebugConfig::load(&root) {
            Ok(config) => Supervisor::new(root, config),
            Err(error) => Supervisor::new(root, DebugConfig::default()).with_config_error(error),
        }
    }

    /// Records that the configuration could not be read (the defaults are in place).
    #[must_use]
    pub fn with_config_error(mut self, error: impl std::fmt::Display) -> Self {
        self.config_error = Some(error.to_string());
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
            config_error: self.config_error.clone(),
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
            Slot::Empty => Err(DebugError::NoSession),
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

    /// Refuses a start while a session lives; clears a dead or expired one.
    async fn make_room(&self, slot: &mut Slot) -> Result<(), DebugError> {
        self.settle_expiry(slot).await;
        if let Slot::Live(session) = slot {
            if !session.adapter_lost() {
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
        if let Some(error) = &self.config_error {
            return Err(DebugError::Config(format!(
                "{error}; fix it (or remove the [debug] section) before starting a session"
            )));
        }
        Ok(())
    }

    fn adapter_kind(
        &self,
        name: Option<&str>,
        program: Option<&Path>,
    ) -> Result<AdapterKind, DebugError> {
        match (name, program) {
            (Some(name), _) => {
                AdapterKind::from_name(name).ok_or_else(|| DebugError::UnknownAdapter {
                    name: name.into(),
                    known: AdapterKind::names().join(", "),
                })
            }
            (None, Some(program)) => pick_adapter(program),
            (None, None) => Ok(AdapterKind::Debugpy),
        }
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
        let mut slot = self.slot.lock().await;
        self.make_room(&mut slot).await?;
        let kind = self.adapter_kind(adapter, Some(program))?;
        let resolved = detect::resolve(kind, &self.env, &self.config)
            .await
            .map_err(|reason| DebugError::AdapterUnavailable {
                adapter: kind.name().into(),
                reason,
            })?;
        let extra = self.config.adapter(kind).and_then(|o| o.launch.as_ref());
        let arguments = launch_arguments(kind, program, args, &self.env.root, extra);
        let target = display_path(&self.env.root, &program.display().to_string());
        self.start(
            &mut slot,
            kind,
            Endpoint::Spawn(resolved),
            StartKind::Launch,
            arguments,
            target,
        )
        .await
    }

    /// `attach`: connects to a program listening on `127.0.0.1:port` (debugpy) and sends every
    /// breakpoint set so far. Returns at once: the program keeps running.
    pub async fn attach(
        &self,
        port: u16,
        adapter: Option<&str>,
    ) -> Result<StartReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.make_room(&mut slot).await?;
        let kind = self.adapter_kind(adapter, None)?;
        let extra = self.config.adapter(kind).and_then(|o| o.launch.as_ref());
        let arguments = attach_arguments(kind, extra)?;
        // A listening debugpy runs its own adapter: connect to it, start nothing.
        let endpoint = Endpoint::Connect {
            host: "127.0.0.1".into(),
            port,
        };
        self.start(
            &mut slot,
            kind,
            endpoint,
            StartKind::Attach,
            arguments,
            format!("127.0.0.1:{port}"),
        )
        .await
    }

    async fn start(
        &self,
        slot: &mut Slot,
        adapter: AdapterKind,
        endpoint: Endpoint,
        start: StartKind,
        arguments: serde_json::Value,
        target: String,
    ) -> Result<StartReport, DebugError> {
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
            killer: &self.killer,
        };
        let started = Session::start(params).await;
        let (session, placed) = match started {
            Ok(started) => started,
            Err(error) => {
                *lock(&self.killer) = None;
                return Err(error);
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
        let (position, output, note) = session.settle(start == StartKind::Launch).await;
        if let Err(error) = session.check_usable() {
            // The adapter died before the program first stopped or ended.
            session.reap().await;
            *lock(&self.killer) = None;
            return Err(error);
        }
        let report = StartReport {
            adapter: adapter.name().into(),
            target,
            adapter_pid: session.adapter_pid(),
            debuggee_pid: session.debuggee_pid(),
            breakpoints: self.breakpoint_list(),
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
        let mut slot = self.slot.lock().await;
        let session = self.live(&mut slot).await?;
        session.act(action, thread).await
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
    /// Still answers after the program exited, the adapter died, or the session expired.
    pub async fn output(&self) -> Result<OutputReport, DebugError> {
        let mut slot = self.slot.lock().await;
        self.settle_expiry(&mut slot).await;
        match &*slot {
            Slot::Empty => Err(DebugError::NoSession),
            Slot::Expired { output, .. } => Ok(OutputReport {
                output: output.text(),
                total_bytes: output.total_bytes(),
                dropped_bytes: output.dropped_bytes(),
                truncated: output.dropped_bytes() > 0,
                position: Position::bare(ProgramState::Expired),
            }),
            Slot::Live(session) => {
                let (output, total_bytes, dropped_bytes) = session.output();
                Ok(OutputReport {
                    output,
                    total_bytes,
                    dropped_bytes,
                    truncated: dropped_bytes > 0,
                    position: session.position().await,
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
            state: ProgramState::None,
            note: Some(note),
        };
        match previous {
            Slot::Empty => nothing("no debug session was running".into()),
            Slot::Expired { describe, .. } => nothing(format!(
                "the session ({describe}) had already expired and its processes were killed"
            )),
            Slot::Live(session) => {
                let adapter = session.kind().name().to_owned();
                let (adapter_exit, killed_leftovers, code, ended) = session.terminate().await;
                TerminateReport {
                    terminated: true,
                    adapter: Some(adapter),
                    adapter_exit,
                    killed_leftovers,
                    exited: ended.then_some(crate::report::Exited { code }),
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
