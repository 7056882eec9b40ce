//! One live interpreter: the child process, the tasks that read and write its pipes, and the
//! loop that runs a cell under the inactivity budget.
//!
//! On the host the driver gets two extra pipes, fd 3 (host to driver) and fd 4 (driver to
//! host), so stdout and stderr carry nothing but user output, and a lifeline on fd 5 that
//! the host never writes: the driver's reaper waits on it and kills the kernel's process
//! group (children included) if the host dies without cleaning up. Through an enclosure, which
//! passes only stdin, stdout and stderr, the protocol travels on stdin and stdout as frames
//! prefixed with [`FRAME_PREFIX`](crate::scan::FRAME_PREFIX), and user output reaches the
//! host only inside `out` frames: the Python driver moves its fd 1 to an internal pipe it
//! relays; for node (which cannot), `drivers/relay.js` runs the real driver as its child in
//! host mode and relays that child's stdout. Either way one writer owns the protocol's
//! stdout, so nothing a cell prints can split or forge a frame.

use std::future::Future;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use cc_process::GroupChild;
use command_fds::{CommandFdExt, FdMapping};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, watch, Notify};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::bridge::{Bridge, BridgeError};
use crate::capture::Captured;
use crate::error::KernelError;
use crate::language::Language;
use crate::outcome::{CellError, DisplayItem};
use crate::protocol::{decode, FromDriver, ToDriver};
use crate::scan::{FrameSplitter, Framed};
use crate::stream::Stream;

const PYTHON_DRIVER: &str = include_str!("../drivers/driver.py");
const JS_DRIVER: &str = include_str!("../drivers/driver.js");
const JS_WATCHDOG: &str = include_str!("../drivers/watchdog.js");
const JS_RELAY: &str = include_str!("../drivers/relay.js");

/// Reads the driver's source (a length line, then the bytes) from the control pipe and runs
/// it as module `_cc_kernel`; keeps the command line short and works through any enclosure.
const PYTHON_BOOT: &str = "import os,sys,types
a=sys.argv[1:];fd=int(a[2]) if a[0]=='host' else 0
def rd(n):
 b=b''
 while len(b)<n:
  c=os.read(fd,n-len(b))
  if not c:raise SystemExit(3)
  b+=c
 return b
h=b''
while not h.endswith(b'\\n'):h+=rd(1)
m=types.ModuleType('_cc_kernel');sys.modules['_cc_kernel']=m
exec(compile(rd(int(h)),'<cc-kernel-driver>','exec'),m.__dict__)
";

/// The same for node; the driver runs as a function of `require`, the arguments and an
/// `import()` made here (code run by the inspector or `vm` cannot import by itself), and
/// nothing here is global (a cell's `let a` must not collide with the bootstrap).
const JS_BOOT: &str = "(()=>{const fs=require('fs'),a=process.argv.slice(1),fd=a[0]==='host'?+a[2]:0;\
function rd(n){const b=Buffer.alloc(n);let o=0;while(o<n){let k;try{k=fs.readSync(fd,b,o,n-o,null)}\
catch(e){if(e.code==='EAGAIN'){Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,5);continue}throw e}\
if(!k)process.exit(3);o+=k}return b}\
let h='';for(;;){const c=rd(1).toString('latin1');if(c==='\\n')break;h+=c}\
require('vm').runInThisContext('(function(require,ARGS,importModule){'+rd(+h).toString('utf8')+'\\n})',\
{filename:'cc-kernel-driver.js'})(require,a,(s)=>import(s))})()";

/// How long to wait for a cell's barrier markers once the driver said it is done. They were
/// written before the `done` message, so this only matters on a badly overloaded machine.
const BARRIER_WAIT: Duration = Duration::from_secs(15);
/// How long to wait for the pipes to close after the group was killed.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// What a cell is allowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub budget: Duration,
    pub grace: Duration,
    pub cap: usize,
    pub startup: Duration,
}

/// How to start one kernel.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    pub language: Language,
    pub program: &'a Path,
    pub enclosure: &'a [String],
    pub workdir: &'a Path,
    pub env: &'a [(String, String)],
    pub limits: Limits,
    /// Becomes true when the session shuts down: a running cell is then killed at once.
    pub closing: watch::Receiver<bool>,
}

/// Facts about a running kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// Its language.
    pub language: Language,
    /// The interpreter's version (`3.11.7`, `v20.20.2`).
    pub version: String,
    /// The process id as the host sees it (the leader of the kernel's process group).
    pub pid: u32,
    /// The interpreter's own path, as the driver reports it.
    pub executable: Option<String>,
}

/// How a cell ended, before the session turns it into an outcome.
#[derive(Debug)]
pub(crate) struct CellRun {
    pub stdout: Captured,
    pub stderr: Captured,
    pub result: Option<String>,
    pub error: Option<CellError>,
    pub display: Vec<DisplayItem>,
    pub timed_out: bool,
    /// The caller cancelled the cell, which was interrupted.
    pub cancelled: bool,
    /// Set when the kernel did not survive the cell: why.
    pub died: Option<String>,
    /// The output may be incomplete (a barrier never arrived).
    pub incomplete: bool,
}

/// A live kernel.
#[derive(Debug)]
pub(crate) struct Kernel {
    info: KernelInfo,
    /// The interpreter it was started with.
    program: std::path::PathBuf,
    child: GroupChild,
    to_driver: mpsc::UnboundedSender<Vec<u8>>,
    messages: mpsc::UnboundedReceiver<FromDriver>,
    stdout: Arc<Stream>,
    stderr: Arc<Stream>,
    shared: Arc<Shared>,
    limits: Limits,
    closing: watch::Receiver<bool>,
    next_cell: u64,
    /// A cell was started and has not ended: if its future was dropped (an abandoned call),
    /// the kernel is still busy with it and must not be used again.
    in_cell: bool,
    tasks: Vec<JoinHandle<()>>,
    /// The host's end of the lifeline pipe (host mode): closing it, or the host dying,
    /// makes the kernel's reaper kill the whole process group.
    _lifeline: Option<OwnedFd>,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        // GroupChild's own Drop kills the process group.
    }
}

enum End {
    Done {
        result: Option<String>,
        error: Option<CellError>,
        barrier: [bool; 2],
    },
    Died,
    Killed,
    Closing,
}

/// Why a starting kernel never became ready.
enum NotReady {
    /// The session shut down meanwhile.
    Closing,
    /// The interpreter failed: why.
    Failed(String),
}

enum Event {
    Message(Option<FromDriver>),
    Exited,
    Activity,
    Deadline,
    Closing,
    Cancelled,
}

impl Kernel {
    /// The interpreter it was started with.
    pub(crate) fn program(&self) -> &Path {
        &self.program
    }

    /// Starts the interpreter and waits for its driver to say it is ready.
    pub(crate) async fn start(launch: Launch<'_>) -> Result<Kernel, KernelError> {
        let language = launch.language;
        let program_text = launch.program.display().to_string();
        let nonce = new_nonce();
        let host = launch.enclosure.is_empty();

        let mut command = match launch.enclosure.split_first() {
            None => tokio::process::Command::new(launch.program),
            Some((first, rest)) => {
                let mut command = tokio::process::Command::new(first);
                command.args(rest).arg(launch.program);
                command
            }
        };
        match language {
            Language::Python => command.args(["-c", PYTHON_BOOT]),
            Language::Javascript => command.args(["-e", JS_BOOT]),
        };
        command
            .arg(if host { "host" } else { "stdio" })
            .arg(&nonce)
            .current_dir(launch.workdir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .envs(launch.env.iter().map(|(key, value)| (key, value)));
        let spawn_error = |source: std::io::Error| KernelError::Spawn {
            language,
            program: program_text.clone(),
            source,
        };
        let (host_pipes, lifeline) = if host {
            let pipes = HostPipes::open(&mut command).map_err(spawn_error)?;
            (
                Some((pipes.to_driver, pipes.from_driver)),
                Some(pipes.lifeline),
            )
        } else {
            command.stdin(Stdio::piped());
            (None, None)
        };
        // `command` (holding the child's ends of the pipes) is dropped inside, so the host
        // keeps only its own ends and sees end of file when the kernel goes.
        let mut child = cc_process::spawn_group(command).map_err(spawn_error)?;

        let shared = Arc::new(Shared::default());
        let stdout = Arc::new(Stream::new(&nonce, launch.limits.cap));
        let stderr = Arc::new(Stream::new(&nonce, launch.limits.cap));
        let (to_driver, outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
        let (incoming, messages) = mpsc::unbounded_channel::<FromDriver>();
        let dispatch = Dispatch {
            stdout: stdout.clone(),
            shared: shared.clone(),
            to_driver: to_driver.clone(),
            incoming,
        };
        let tasks = start_pumps(&mut child, host_pipes, outgoing, dispatch, &stderr);
        let source = driver_source(language, host);
        let mut boot = format!("{}\n", source.len()).into_bytes();
        boot.extend_from_slice(source.as_bytes());
        // The receiver lives in the writer task we just spawned.
        let _ = to_driver.send(boot);

        let mut kernel = Kernel {
            program: launch.program.to_path_buf(),
            info: KernelInfo {
                language,
                version: String::new(),
                pid: child.id(),
                executable: None,
            },
            child,
            to_driver,
            messages,
            stdout,
            stderr,
            shared,
            limits: launch.limits,
            closing: launch.closing,
            next_cell: 1,
            in_cell: false,
            tasks,
            _lifeline: lifeline,
        };
        let failure = match kernel.await_ready().await {
            Ok(()) => return Ok(kernel),
            Err(failure) => failure,
        };
        kernel.child.kill_group();
        let _ = tokio::time::timeout(DRAIN_WAIT, kernel.child.wait()).await;
        match failure {
            // Not the interpreter's fault: the run ended while it was starting.
            NotReady::Closing => Err(KernelError::ShutDown),
            NotReady::Failed(reason) => Err(KernelError::StartFailed {
                language,
                program: program_text,
                reason,
                stderr: kernel.stderr.take_at_eof(DRAIN_WAIT).await.text(),
            }),
        }
    }

    async fn await_ready(&mut self) -> Result<(), NotReady> {
        let deadline = Instant::now() + self.limits.startup;
        loop {
            tokio::select! {
                message = self.messages.recv() => match message {
                    Some(FromDriver::Ready { version, executable, pid }) => {
                        tracing::debug!(language = %self.info.language, %version, pid, "kernel ready");
                        self.info.version = version;
                        self.info.executable = executable;
                        return Ok(());
                    }
                    Some(_) => {}
                    None => {
                        let status = tokio::time::timeout(DRAIN_WAIT, self.child.wait()).await;
                        return Err(NotReady::Failed(match status {
                            Ok(Ok(status)) => describe_exit(status),
                            _ => "it closed its control channel".to_owned(),
                        }));
                    }
                },
                status = self.child.wait() => {
                    return Err(NotReady::Failed(match status {
                        Ok(status) => describe_exit(status),
                        Err(error) => format!("waiting for it failed: {error}"),
                    }));
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(NotReady::Failed(format!(
                        "it did not answer within {} s",
                        self.limits.startup.as_secs_f64()
                    )));
                }
                () = until_closing(&mut self.closing) => return Err(NotReady::Closing),
            }
        }
    }

    pub(crate) fn info(&self) -> &KernelInfo {
        &self.info
    }

    /// Why the kernel is gone, if it exited since the last cell.
    pub(crate) fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(describe_exit(status)),
            Ok(None) => None,
            Err(error) => Some(format!("could not be checked ({error})")),
        }
    }

    /// Whether a cell's future was dropped before the cell ended (the kernel may still be
    /// running it).
    pub(crate) fn abandoned(&self) -> bool {
        self.in_cell
    }

    /// Kills the kernel's process group at once.
    pub(crate) fn kill(&mut self) {
        self.child.kill_group();
    }

    /// Runs one cell; bridge calls made while it runs go to `bridge`. When `cancel`
    /// completes, the cell is interrupted as if its inactivity budget had run out (and
    /// killed if it does not stop within the grace).
    pub(crate) async fn run_cell(
        &mut self,
        code: &str,
        bridge: Arc<dyn Bridge>,
        cancel: Pin<&mut (dyn Future<Output = ()> + Send)>,
    ) -> CellRun {
        let cell = self.next_cell;
        self.next_cell += 1;
        self.in_cell = true;
        self.shared.begin(bridge);
        let _ = self.to_driver.send(ToDriver::Exec { cell, code }.encode());

        let mut waited = Waited::default();
        let end = self.until_end(cell, cancel, &mut waited).await;
        self.shared.end();
        let run = match end {
            End::Done {
                result,
                error,
                barrier,
            } => {
                let stdout = self.take(&self.stdout, cell, barrier[0]).await;
                let stderr = self.take(&self.stderr, cell, barrier[1]).await;
                CellRun {
                    incomplete: !(stdout.1 && stderr.1),
                    stdout: stdout.0,
                    stderr: stderr.0,
                    result,
                    error,
                    display: waited.display,
                    timed_out: waited.timed_out,
                    cancelled: waited.cancelled,
                    died: None,
                }
            }
            End::Died | End::Killed | End::Closing => self.after_death(end, waited).await,
        };
        self.in_cell = false;
        run
    }

    /// Waits for the cell's end: done, the kernel gone, the run closing, or killed after
    /// an interrupt (sent at the budget's end or on a cancel) went unheeded past the grace.
    async fn until_end(
        &mut self,
        cell: u64,
        mut cancel: Pin<&mut (dyn Future<Output = ()> + Send)>,
        waited: &mut Waited,
    ) -> End {
        let mut interrupted_at: Option<Instant> = None;
        loop {
            let deadline = match interrupted_at {
                Some(at) => Some(at + self.limits.grace),
                None => self.shared.deadline(self.limits.budget),
            };
            let event = {
                let sleep = async {
                    match deadline {
                        Some(deadline) => tokio::time::sleep_until(deadline).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    message = self.messages.recv() => Event::Message(message),
                    _ = self.child.wait() => Event::Exited,
                    () = self.shared.activity.notified() => Event::Activity,
                    () = sleep => Event::Deadline,
                    () = until_closing(&mut self.closing) => Event::Closing,
                    () = cancel.as_mut(), if !waited.cancelled => Event::Cancelled,
                }
            };
            match event {
                Event::Message(Some(FromDriver::Done {
                    cell: done,
                    result,
                    error,
                    barrier,
                })) if done == cell => {
                    return End::Done {
                        result,
                        error,
                        barrier,
                    }
                }
                Event::Message(Some(FromDriver::Display { items, .. })) => {
                    waited.display.extend(items)
                }
                Event::Message(Some(_)) | Event::Activity => {}
                Event::Message(None) | Event::Exited => return End::Died,
                Event::Closing => return End::Closing,
                Event::Deadline if interrupted_at.is_some() => return End::Killed,
                Event::Deadline => {
                    waited.timed_out = true;
                    interrupted_at = Some(Instant::now());
                    let _ = self.to_driver.send(ToDriver::Interrupt { cell }.encode());
                }
                Event::Cancelled => {
                    waited.cancelled = true;
                    if interrupted_at.is_none() {
                        interrupted_at = Some(Instant::now());
                        let _ = self.to_driver.send(ToDriver::Interrupt { cell }.encode());
                    }
                }
            }
        }
    }

    /// The cell's run when the kernel died, was killed or was stopped with the run: the
    /// group is killed and reaped, and what it wrote and displayed before is kept.
    async fn after_death(&mut self, end: End, mut waited: Waited) -> CellRun {
        self.child.kill_group();
        let status = tokio::time::timeout(DRAIN_WAIT, self.child.wait()).await;
        let status = match status {
            Ok(Ok(status)) => describe_exit(status),
            _ => "did not exit".to_owned(),
        };
        let reason = match end {
            End::Killed => format!(
                "did not stop within {} s of the interrupt and was killed",
                self.limits.grace.as_secs_f64()
            ),
            End::Closing => "was stopped because the run ended".to_owned(),
            _ => status,
        };
        // Whatever was displayed before the end still arrives.
        while let Ok(message) = self.messages.try_recv() {
            if let FromDriver::Display { items, .. } = message {
                waited.display.extend(items);
            }
        }
        let stdout = self.stdout.take_at_eof(DRAIN_WAIT).await;
        let stderr = self.stderr.take_at_eof(DRAIN_WAIT).await;
        CellRun {
            stdout,
            stderr,
            result: None,
            error: None,
            display: waited.display,
            timed_out: waited.timed_out,
            cancelled: waited.cancelled,
            died: Some(reason),
            incomplete: false,
        }
    }

    async fn take(&self, stream: &Stream, cell: u64, barrier: bool) -> (Captured, bool) {
        let wait = if barrier {
            BARRIER_WAIT
        } else {
            Duration::ZERO
        };
        let taken = stream.take_until(cell, wait).await;
        (taken.captured, taken.complete || !barrier)
    }

    /// Asks the driver to exit, then kills the group if it has not within `grace`.
    pub(crate) async fn shutdown(mut self, grace: Duration) {
        let _ = self.to_driver.send(ToDriver::Shutdown.encode());
        if let Err(error) = self.child.wait_or_kill(grace).await {
            tracing::warn!(%error, "could not reap a kernel");
        }
    }
}

/// Activity of the running cell: when it last produced something, its bridge, and how many
/// bridge calls are still running (the inactivity timer is suspended while any is).
#[derive(Default)]
pub(crate) struct Shared {
    state: Mutex<Activity>,
    activity: Notify,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Shared")
            .field("outstanding", &state.outstanding)
            .field("active", &state.bridge.is_some())
            .finish()
    }
}

struct Activity {
    last: Instant,
    outstanding: usize,
    bridge: Option<Arc<dyn Bridge>>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            last: Instant::now(),
            outstanding: 0,
            bridge: None,
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Activity> {
        cc_process::lock(&self.state)
    }

    fn touch(&self) {
        self.lock().last = Instant::now();
        self.activity.notify_one();
    }

    fn begin(&self, bridge: Arc<dyn Bridge>) {
        let mut state = self.lock();
        state.last = Instant::now();
        state.bridge = Some(bridge);
    }

    fn end(&self) {
        self.lock().bridge = None;
    }

    fn bridge(&self) -> Option<Arc<dyn Bridge>> {
        self.lock().bridge.clone()
    }

    fn deadline(&self, budget: Duration) -> Option<Instant> {
        let state = self.lock();
        (state.outstanding == 0).then(|| state.last + budget)
    }

    fn call_started(&self) {
        self.lock().outstanding += 1;
        self.activity.notify_one();
    }

    fn call_finished(&self) {
        let mut state = self.lock();
        state.outstanding = state.outstanding.saturating_sub(1);
        // The budget starts afresh when the last call returns.
        state.last = Instant::now();
        drop(state);
        self.activity.notify_one();
    }
}

/// Where the control reader sends what it reads.
/// The host's ends of a host-mode kernel's pipes (tokio's pipes are close-on-exec; the
/// child's ends are handed to it as fds 3, 4 and 5).
struct HostPipes {
    /// To the driver's input.
    to_driver: pipe::Sender,
    /// From the driver's output.
    from_driver: pipe::Receiver,
    /// Never written: the kernel's reaper sees end of file when the host is gone.
    lifeline: OwnedFd,
}

impl HostPipes {
    fn open(command: &mut tokio::process::Command) -> std::io::Result<HostPipes> {
        // The child's ends are made blocking again.
        let (to_driver, driver_in) = pipe::pipe()?;
        let driver_in = driver_in.into_blocking_fd()?;
        let (driver_out, from_driver) = pipe::pipe()?;
        let driver_out = driver_out.into_blocking_fd()?;
        let (host_end, reaper_end) = pipe::pipe()?;
        let lifeline = host_end.into_blocking_fd()?;
        let reaper_end = reaper_end.into_blocking_fd()?;
        command.args(["3", "4", "5"]).stdin(Stdio::null());
        command
            .fd_mappings(vec![
                FdMapping {
                    parent_fd: driver_in,
                    child_fd: 3,
                },
                FdMapping {
                    parent_fd: driver_out,
                    child_fd: 4,
                },
                FdMapping {
                    parent_fd: reaper_end,
                    child_fd: 5,
                },
            ])
            .map_err(std::io::Error::other)?;
        Ok(HostPipes {
            to_driver,
            from_driver,
            lifeline,
        })
    }
}

/// Starts the tasks that carry the kernel's streams: its stderr, the messages to and from
/// the driver (over the host pipes, or framed on stdin and stdout), and a host-mode kernel's
/// own stdout.
fn start_pumps(
    child: &mut GroupChild,
    host_pipes: Option<(pipe::Sender, pipe::Receiver)>,
    outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
    dispatch: Dispatch,
    stderr: &Arc<Stream>,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    let (stdout, shared) = (dispatch.stdout.clone(), dispatch.shared.clone());
    if let Some(pipe) = child.take_stderr() {
        tasks.push(tokio::spawn(pump(pipe, stderr.clone(), shared.clone())));
    }
    let stdout_pipe = child.take_stdout();
    match host_pipes {
        Some((host_out, host_in)) => {
            tasks.push(tokio::spawn(write_all(host_out, outgoing)));
            tasks.push(tokio::spawn(read_lines(host_in, dispatch)));
            if let Some(pipe) = stdout_pipe {
                tasks.push(tokio::spawn(pump(pipe, stdout, shared)));
            }
        }
        None => {
            if let Some(stdin) = child.take_stdin() {
                tasks.push(tokio::spawn(write_all(stdin, outgoing)));
            }
            if let Some(pipe) = stdout_pipe {
                tasks.push(tokio::spawn(read_framed(pipe, dispatch)));
            }
        }
    }
    tasks
}

/// What the wait for a cell's end saw besides the end.
#[derive(Default)]
struct Waited {
    display: Vec<DisplayItem>,
    /// The budget ran out (an interrupt was sent).
    timed_out: bool,
    /// The caller cancelled (an interrupt was sent).
    cancelled: bool,
}

struct Dispatch {
    stdout: Arc<Stream>,
    shared: Arc<Shared>,
    to_driver: mpsc::UnboundedSender<Vec<u8>>,
    incoming: mpsc::UnboundedSender<FromDriver>,
}

impl Dispatch {
    fn line(&self, line: &[u8]) {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match decode(line) {
            Ok(FromDriver::Call { id, name, args }) => self.call(id, name, args),
            Ok(FromDriver::Out { data }) => {
                // Latin-1 code points are the original bytes.
                let bytes: Vec<u8> = data
                    .chars()
                    .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                    .collect();
                if self.stdout.feed(&bytes) {
                    self.shared.touch();
                }
            }
            Ok(message) => {
                if matches!(message, FromDriver::Display { .. }) {
                    self.shared.touch();
                }
                let _ = self.incoming.send(message);
            }
            Err(error) => tracing::warn!(
                %error,
                line = %String::from_utf8_lossy(&line[..line.len().min(200)]),
                "unreadable message from a kernel driver"
            ),
        }
    }

    fn call(&self, id: u64, name: String, args: Value) {
        let Some(bridge) = self.shared.bridge() else {
            let error = BridgeError::new(
                "not_available",
                "tool() was called while no cell is running (from a background thread or a \
                 timer?); the bridge is open only while an eval call runs",
            );
            let _ = self.to_driver.send(reply(id, Err(error)));
            return;
        };
        let guard = CallGuard::new(id, self.shared.clone(), self.to_driver.clone());
        tokio::spawn(async move {
            let result = bridge.call(&name, args).await;
            guard.reply(result);
        });
    }
}

/// Counts a running bridge call; replies with an error if the call is dropped unanswered
/// (a panic in the tool), so the kernel never waits forever.
struct CallGuard {
    id: u64,
    shared: Arc<Shared>,
    to_driver: mpsc::UnboundedSender<Vec<u8>>,
    replied: bool,
}

impl CallGuard {
    fn new(id: u64, shared: Arc<Shared>, to_driver: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        shared.call_started();
        CallGuard {
            id,
            shared,
            to_driver,
            replied: false,
        }
    }

    fn reply(mut self, result: Result<Value, BridgeError>) {
        let _ = self.to_driver.send(reply(self.id, result));
        self.replied = true;
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if !self.replied {
            let error = BridgeError::new("internal", "the tool call ended without an answer");
            let _ = self.to_driver.send(reply(self.id, Err(error)));
        }
        self.shared.call_finished();
    }
}

fn reply(id: u64, result: Result<Value, BridgeError>) -> Vec<u8> {
    match result {
        Ok(value) => ToDriver::Reply {
            id,
            ok: true,
            value: Some(value),
            error: None,
        },
        Err(error) => ToDriver::Reply {
            id,
            ok: false,
            value: None,
            error: Some(error.to_json()),
        },
    }
    .encode()
}

async fn write_all(
    mut sink: impl AsyncWrite + Unpin,
    mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(bytes) = outgoing.recv().await {
        if sink.write_all(&bytes).await.is_err() {
            break;
        }
    }
}

async fn pump(mut pipe: impl AsyncRead + Unpin, stream: Arc<Stream>, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if stream.feed(&buf[..n]) {
                    shared.touch();
                }
            }
        }
    }
    stream.close();
}

async fn read_lines(pipe: impl AsyncRead + Unpin, dispatch: Dispatch) {
    let mut reader = BufReader::with_capacity(64 * 1024, pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => dispatch.line(&line),
        }
    }
}

async fn read_framed(mut pipe: impl AsyncRead + Unpin, dispatch: Dispatch) {
    let mut splitter = FrameSplitter::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut pieces = Vec::new();
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => 0,
            Ok(n) => n,
        };
        if n == 0 {
            splitter.flush(&mut pieces);
        } else {
            splitter.feed(&buf[..n], &mut pieces);
        }
        for piece in pieces.drain(..) {
            match piece {
                Framed::Frame(body) => dispatch.line(&body),
                Framed::Raw(bytes) => {
                    if dispatch.stdout.feed(&bytes) {
                        dispatch.shared.touch();
                    }
                }
            }
        }
        if n == 0 {
            break;
        }
    }
    dispatch.stdout.close();
}

/// What the bootstrap runs. Node cannot move its own stdout aside, so through an enclosure
/// it runs `relay.js`, which starts the real driver as its child on fds 3 and 4.
fn driver_source(language: Language, host: bool) -> String {
    // A JSON string is a JavaScript string literal; encoding a `&str` cannot fail.
    let literal = |text: &str| serde_json::to_string(text).unwrap_or_default();
    match language {
        Language::Python => PYTHON_DRIVER.to_owned(),
        Language::Javascript => {
            let driver = format!(
                "const WATCHDOG_SOURCE = {};\n{JS_DRIVER}",
                literal(JS_WATCHDOG)
            );
            if host {
                driver
            } else {
                format!(
                    "const KERNEL_BOOT = {};\nconst KERNEL_SOURCE = {};\n{JS_RELAY}",
                    literal(JS_BOOT),
                    literal(&driver)
                )
            }
        }
    }
}

/// Resolves once the session is closing. (The `watch::Ref` that `wait_for` yields must not
/// live in a select's output: it would make the cell's future `!Send`.)
async fn until_closing(closing: &mut watch::Receiver<bool>) {
    if closing.wait_for(|closing| *closing).await.is_err() {
        // The session is gone: it drops this kernel too.
        std::future::pending::<()>().await;
    }
}

fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exited with status {code}")
    } else if let Some(signal) = status.signal() {
        let name = match signal {
            9 => " (SIGKILL: killed, perhaps for memory)",
            11 => " (SIGSEGV: crashed)",
            6 => " (SIGABRT: aborted)",
            15 => " (SIGTERM)",
            _ => "",
        };
        format!("was killed by signal {signal}{name}")
    } else {
        format!("ended ({status})")
    }
}

/// A value no cell output will contain by accident; it also tells kernels apart.
fn new_nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    if let Ok(elapsed) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(elapsed.as_nanos());
    }
    format!("{:016x}", hasher.finish())
}
