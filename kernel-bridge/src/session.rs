//! The kernels of one run: at most one per language, started on first use, replaced when
//! they die, discarded on `reset`, and all stopped when the run ends.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Mutex};

use crate::bridge::Bridge;
use crate::capture::Captured;
use crate::config::{interpreter, KernelConfig};
use crate::error::KernelError;
use crate::kernel::{CellRun, Kernel, KernelInfo, Launch, Limits};
use crate::language::Language;
use crate::outcome::{CellOutcome, StateStatus, Truncated};

/// How long a kernel has to exit after being asked to, before its group is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Starts kernels with one configuration. Share it between runs; each run gets its own
/// [`KernelSession`] from [`KernelFactory::session`].
#[derive(Debug, Clone)]
pub struct KernelFactory {
    config: Result<KernelConfig, String>,
    env: Vec<(String, String)>,
}

impl KernelFactory {
    /// A factory that starts kernels as `config` says.
    pub fn new(config: KernelConfig) -> Self {
        KernelFactory {
            config: Ok(config),
            env: Vec::new(),
        }
    }

    /// A factory whose `[kernel]` section could not be used: every cell fails with
    /// `broken`, so the agent learns what to fix instead of finding no `eval` at all.
    pub fn broken(broken: cc_workspace::BrokenSection) -> Self {
        KernelFactory {
            config: Err(broken.to_string()),
            env: Vec::new(),
        }
    }

    /// Adds an environment variable for every kernel this factory starts.
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The configuration, unless it was invalid.
    pub fn config(&self) -> Result<&KernelConfig, &str> {
        self.config.as_ref().map_err(String::as_str)
    }

    /// The interpreter a `language` kernel would run for a checkout at `workdir`, or why
    /// none can start (for status reports; nothing is started).
    pub fn interpreter(
        &self,
        language: Language,
        workdir: &std::path::Path,
    ) -> Result<PathBuf, String> {
        let config = self.config.as_ref().map_err(Clone::clone)?;
        interpreter(language, config, workdir).map_err(|error| error.to_string())
    }

    /// A fresh set of kernels for one run whose cells start in `workdir`.
    pub fn session(&self, workdir: impl Into<PathBuf>) -> KernelSession {
        let (closing, _) = watch::channel(false);
        KernelSession {
            inner: Arc::new(Inner {
                config: self.config.clone(),
                env: self.env.clone(),
                workdir: workdir.into(),
                python: Mutex::new(Slot::Empty),
                javascript: Mutex::new(Slot::Empty),
                running: std::sync::Mutex::new(Vec::new()),
                python_told: std::sync::Mutex::new(None),
                closing,
            }),
        }
    }
}

/// One cell to run.
#[derive(Debug, Clone, Copy)]
pub struct CellRequest<'a> {
    /// The interpreter.
    pub language: Language,
    /// The cell's code; may be empty (with `reset`, just start a clean interpreter).
    pub code: &'a str,
    /// Discard the interpreter and start a clean one first.
    pub reset: bool,
}

/// The kernels of one run. Cheap to clone; dropping the last clone kills them.
#[derive(Debug, Clone)]
pub struct KernelSession {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Result<KernelConfig, String>,
    env: Vec<(String, String)>,
    workdir: PathBuf,
    python: Mutex<Slot>,
    javascript: Mutex<Slot>,
    /// The live kernels, readable while a cell holds its slot.
    running: std::sync::Mutex<Vec<KernelInfo>>,
    /// The project's Python the live Python kernel was last told about, when it is not the
    /// one that kernel runs (said once per new interpreter).
    python_told: std::sync::Mutex<Option<PathBuf>>,
    closing: watch::Sender<bool>,
}

#[derive(Debug)]
enum Slot {
    Empty,
    Live(Box<Kernel>),
    /// The kernel died; the reason is told with the next cell, which starts a fresh one.
    Dead(String),
}

impl KernelSession {
    fn slot(&self, language: Language) -> &Mutex<Slot> {
        match language {
            Language::Python => &self.inner.python,
            Language::Javascript => &self.inner.javascript,
        }
    }

    /// Records whether `language` has a live kernel now.
    fn publish(&self, language: Language, info: Option<KernelInfo>) {
        let mut running = cc_process::lock(&self.inner.running);
        running.retain(|known| known.language != language);
        running.extend(info);
    }

    /// Runs a cell, starting (or restarting) its kernel as needed. Bridge calls made by the
    /// cell go to `bridge`.
    pub async fn run(
        &self,
        request: CellRequest<'_>,
        bridge: Arc<dyn Bridge>,
    ) -> Result<CellOutcome, KernelError> {
        self.run_until(request, bridge, std::future::pending())
            .await
    }

    /// [`run`](Self::run), and when `cancel` completes the cell is interrupted (then, if it
    /// does not stop within the interrupt grace, its kernel is killed): the caller cancelled
    /// it. The outcome says so (`cancelled`), and the session stays usable. Dropping this
    /// future instead leaves the kernel busy with the cell: the next cell kills it and starts
    /// a fresh one (state lost, said in its notices).
    pub async fn run_until(
        &self,
        request: CellRequest<'_>,
        bridge: Arc<dyn Bridge>,
        cancel: impl Future<Output = ()> + Send,
    ) -> Result<CellOutcome, KernelError> {
        let config = self
            .inner
            .config
            .as_ref()
            .map_err(|message| KernelError::Misconfigured(message.clone()))?;
        if *self.inner.closing.borrow() {
            return Err(KernelError::ShutDown);
        }
        let language = request.language;
        let mut slot = self.slot(language).lock().await;
        let mut state = StateStatus::Kept;
        let mut notices = Vec::new();

        if request.reset {
            if let Slot::Live(kernel) = std::mem::replace(&mut *slot, Slot::Empty) {
                self.publish(language, None);
                kernel.shutdown(SHUTDOWN_GRACE).await;
            }
            state = StateStatus::Lost;
            notices.push(format!(
                "reset: a clean {language} interpreter was started; variables, imports and data \
                 of earlier cells are gone."
            ));
        }
        if let Slot::Live(kernel) = &mut *slot {
            if kernel.abandoned() {
                // An earlier call was dropped mid-cell: the kernel may still be running it.
                kernel.kill();
                *slot = Slot::Dead(
                    "was stopped: the call running its last cell was abandoned before the cell \
                     ended"
                        .to_owned(),
                );
                self.publish(language, None);
            } else if let Some(reason) = kernel.exited() {
                *slot = Slot::Dead(format!("{reason} since the last cell"));
                self.publish(language, None);
            }
        }
        if let Slot::Dead(reason) = &*slot {
            let reason = reason.clone();
            *slot = Slot::Empty;
            state = StateStatus::Lost;
            notices.push(format!(
                "A fresh {language} kernel was started because the previous one {reason}; \
                 variables, imports and data of earlier cells are gone."
            ));
        }
        if !matches!(*slot, Slot::Live(_)) {
            let kernel = self.start(language, config).await?;
            *cc_process::lock(&self.inner.python_told) = None;
            self.publish(language, Some(kernel.info().clone()));
            *slot = Slot::Live(Box::new(kernel));
        }
        let Slot::Live(kernel) = &mut *slot else {
            return Err(KernelError::ShutDown);
        };
        if state == StateStatus::Kept {
            notices.extend(self.environment_moved(language, config, kernel.program()));
        }

        if request.code.trim().is_empty() {
            return Ok(empty_outcome(language, state, notices));
        }
        tokio::pin!(cancel);
        let run = kernel.run_cell(request.code, bridge, cancel).await;
        if let Some(reason) = &run.died {
            state = StateStatus::Lost;
            notices.push(format!(
                "The {language} kernel {reason}; its variables, imports and data are gone. The \
                 next call starts a fresh interpreter."
            ));
            *slot = Slot::Dead(reason.clone());
            self.publish(language, None);
        }
        Ok(outcome(language, run, state, notices, config))
    }

    /// A notice when the project's Python is no longer the one this kept kernel runs (a
    /// virtualenv created or activated since it started): its imports come from the old
    /// environment until a reset. Said once per new interpreter.
    fn environment_moved(
        &self,
        language: Language,
        config: &KernelConfig,
        running: &Path,
    ) -> Option<String> {
        if language != Language::Python || config.python.is_some() || !config.enclosure.is_empty() {
            return None;
        }
        let now = interpreter(language, config, &self.inner.workdir).ok()?;
        let mut told = cc_process::lock(&self.inner.python_told);
        if now == running {
            *told = None;
            return None;
        }
        if told.as_deref() == Some(now.as_path()) {
            return None;
        }
        *told = Some(now.clone());
        Some(format!(
            "The project's Python is now {} (this kernel was started with {}): its imports \
             still come from the old environment. Call eval with reset: true to switch; the \
             variables of earlier cells are then gone.",
            now.display(),
            running.display()
        ))
    }

    async fn start(
        &self,
        language: Language,
        config: &KernelConfig,
    ) -> Result<Kernel, KernelError> {
        let program = interpreter(language, config, &self.inner.workdir)?;
        let mut env = self.inner.env.clone();
        // A src layout's package is the project's code: cells import it without an install.
        if language == Language::Python {
            if let Some((_, path)) =
                cc_workspace::python::src_layout_python_path(&self.inner.workdir, &env)
            {
                env.push(("PYTHONPATH".into(), path.to_string_lossy().into_owned()));
            }
        }
        Kernel::start(Launch {
            language,
            program: &program,
            enclosure: &config.enclosure,
            workdir: &self.inner.workdir,
            env: &env,
            limits: Limits {
                budget: config.inactivity_budget,
                grace: config.interrupt_grace,
                cap: config.output_cap,
                startup: config.startup_timeout,
            },
            closing: self.inner.closing.subscribe(),
        })
        .await
    }

    /// The kernels that are running now (also while a cell runs).
    pub fn running(&self) -> Vec<KernelInfo> {
        cc_process::lock(&self.inner.running).clone()
    }

    /// Stops every kernel: a running cell is killed at once, idle kernels are asked to exit
    /// and killed after a short grace. Later cells fail with [`KernelError::ShutDown`].
    pub async fn shutdown(&self) {
        self.inner.closing.send_replace(true);
        for language in Language::ALL {
            let mut slot = self.slot(language).lock().await;
            if let Slot::Live(kernel) = std::mem::replace(&mut *slot, Slot::Empty) {
                self.publish(language, None);
                kernel.shutdown(SHUTDOWN_GRACE).await;
            }
        }
    }
}

fn empty_outcome(language: Language, state: StateStatus, notices: Vec<String>) -> CellOutcome {
    CellOutcome {
        language,
        stdout: String::new(),
        stderr: String::new(),
        result: None,
        display: Vec::new(),
        error: None,
        truncated: None,
        state,
        timed_out: false,
        cancelled: false,
        notices,
    }
}

fn outcome(
    language: Language,
    run: CellRun,
    state: StateStatus,
    mut notices: Vec<String>,
    config: &KernelConfig,
) -> CellOutcome {
    if run.cancelled && run.died.is_none() {
        notices.push(
            "The call was cancelled: the cell was interrupted; the kernel and earlier state are \
             kept."
                .to_owned(),
        );
    } else if run.cancelled {
        notices.push(format!(
            "The call was cancelled: the cell was interrupted and did not stop within {} s, so \
             the kernel was killed.",
            config.interrupt_grace.as_secs_f64()
        ));
    } else if run.timed_out && run.died.is_none() {
        notices.push(format!(
            "The cell produced no output for {} s (the inactivity budget) and was interrupted; \
             the kernel and earlier state are kept.",
            config.inactivity_budget.as_secs_f64()
        ));
    } else if run.timed_out {
        notices.push(format!(
            "The cell produced no output for {} s (the inactivity budget) and did not stop when \
             interrupted.",
            config.inactivity_budget.as_secs_f64()
        ));
    }
    if run.incomplete {
        notices.push(
            "The cell's output may be incomplete: its end marker did not arrive (was stdout or \
             stderr closed?)."
                .to_owned(),
        );
    }
    // One budget for the cell's output: stdout and stderr share it.
    let (mut stdout, mut stderr) = (run.stdout, run.stderr);
    crate::capture::share_budget(&mut stdout, &mut stderr, config.output_cap);
    let cut = |captured: &Captured| captured.cut;
    let truncated = (cut(&stdout) > 0 || cut(&stderr) > 0).then(|| Truncated {
        stdout: cut(&stdout),
        stderr: cut(&stderr),
    });
    CellOutcome {
        language,
        stdout: stdout.text(),
        stderr: stderr.text(),
        result: run.result.map(|text| cap_text(text, config.output_cap)),
        display: run.display,
        error: run.error,
        truncated,
        state,
        timed_out: run.timed_out,
        cancelled: run.cancelled,
        notices,
    }
}

/// The echoed value obeys the same budget as the output.
fn cap_text(text: String, cap: usize) -> String {
    if text.len() <= cap {
        return text;
    }
    let mut buffer = crate::capture::CappedBuffer::new(cap);
    buffer.push(text.as_bytes());
    buffer.finish().text()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn cells_can_run_on_any_runtime_thread() {
        let session = KernelFactory::new(KernelConfig::default()).session(".");
        let request = CellRequest {
            language: Language::Python,
            code: "1",
            reset: false,
        };
        assert_send(&session.run(request, Arc::new(crate::NoBridge)));
        assert_send(&session.shutdown());
    }
}
