//! Operations on a started program: moving it on and looking inside. Every frame id and
//! variables reference handed out is this session's own (see `handles`), checked on the way
//! back in.

use std::time::Duration;

use serde_json::Value;

use super::detail::{locals_scope, named_scope};
use super::handles::Kind;
use super::{Action, Session, Waited};
use crate::error::DebugError;
use crate::interrupt::Interrupt;
use crate::protocol::{
    Continue, Evaluate, EvaluateArguments, Next, Pause, StackTrace, StackTraceArguments, StepIn,
    StepOut, ThreadArguments, Threads,
};
use crate::report::{
    cap_value, EvaluateReport, FrameView, LocalsReport, ScopeView, ScopesReport, StackReport,
    StepReport, ThreadView, ThreadsReport, VariablesReport, MAX_CHILDREN, MAX_FRAMES, MAX_THREADS,
    MAX_VALUE_CHARS,
};

impl Session {
    /// The thread an operation acts on: the caller's (checked: given out since the program
    /// last resumed), else the stopped thread, else the last one that stopped, else the first.
    async fn pick_thread(&self, thread: Option<i64>) -> Result<i64, DebugError> {
        if let Some(thread) = thread {
            self.handles().check_thread(thread)?;
            return Ok(thread);
        }
        match self.default_thread() {
            Some(thread) => Ok(thread),
            None => self.first_thread().await,
        }
    }

    /// Continue, pause or step, then wait for the program to stop or end (or the caller to
    /// cancel).
    pub(crate) async fn act(
        &self,
        action: Action,
        thread: Option<i64>,
        wait: Duration,
        interrupt: &mut Interrupt,
    ) -> Result<StepReport, DebugError> {
        self.check_usable()?;
        let mark = self.output_mark();
        let (stopped, ended, generation, code) = {
            let s = self.state.borrow();
            (
                s.stopped.clone(),
                s.program_ended(),
                s.stop_generation,
                s.exit_code,
            )
        };
        if ended {
            return Err(DebugError::NotStopped(format!(
                "the program has exited{}; nothing to {}: `output` shows what it printed, \
                 `terminate` ends the session",
                code.map(|c| format!(" with code {c}")).unwrap_or_default(),
                action.name()
            )));
        }
        let mut note = None;
        match (action, &stopped) {
            (Action::Pause, Some(_)) => {
                return Ok(StepReport {
                    position: self.stop_position().await,
                    output: None,
                    note: Some("the program was already stopped".into()),
                });
            }
            (Action::Continue, None) => {
                note = Some("the program was already running, so it was not resumed".to_owned());
            }
            (Action::StepOver | Action::StepIn | Action::StepOut, None) => {
                return Err(DebugError::NotStopped(format!(
                    "`{}` needs the program stopped and it is running; `pause` it first or \
                     `continue` to the next breakpoint",
                    action.name()
                )));
            }
            _ => {}
        }
        let resumes = !(action == Action::Continue && stopped.is_none());
        if resumes {
            self.send_action(action, thread, &stopped, generation)
                .await?;
        } else if let Some(thread) = thread {
            self.handles().check_thread(thread)?;
        }
        let waited = self.wait_for_stop(generation, wait, interrupt).await;
        self.tracker.refresh_now_and_then();
        if waited == Waited::Interrupted {
            return Err(DebugError::Cancelled(format!(
                "`{}` was cancelled while waiting for the program to stop; it keeps running \
                 under the debugger: `pause` stops it, `status` says where it is",
                action.name()
            )));
        }
        self.learn_exit_code().await;
        self.check_usable()?;
        if waited == Waited::TimedOut {
            let still = super::still_running_note(wait);
            note = Some(match note {
                Some(first) => format!("{first}; {still}"),
                None => still,
            });
        }
        Ok(StepReport {
            position: self.stop_position().await,
            output: self.output_since(mark),
            note,
        })
    }

    /// Sends `action` to the thread asked for (or the one picked). A resume forgets the stop
    /// first; a request that fails puts it back (unless another stop came meanwhile).
    async fn send_action(
        &self,
        action: Action,
        thread: Option<i64>,
        stopped: &Option<crate::state::StopInfo>,
        generation: u64,
    ) -> Result<(), DebugError> {
        let thread = self.pick_thread(thread).await?;
        let args = ThreadArguments { thread_id: thread };
        if action != Action::Pause {
            // Forget the stop before resuming: a new `stopped` event is what we wait for,
            // and every handle of this stop expires now.
            self.state.send_modify(|s| {
                if s.stopped.take().is_some() {
                    s.resumes += 1;
                }
            });
        }
        let sent = match action {
            Action::Continue => self.call::<Continue>(&args).await.map(drop),
            Action::Pause => self.call::<Pause>(&args).await.map(drop),
            Action::StepOver => self.call::<Next>(&args).await.map(drop),
            Action::StepIn => self.call::<StepIn>(&args).await.map(drop),
            Action::StepOut => self.call::<StepOut>(&args).await.map(drop),
        };
        if let Err(error) = sent {
            self.state.send_modify(|s| {
                if s.stop_generation == generation && s.stopped.is_none() {
                    s.stopped = stopped.clone();
                }
            });
            self.check_usable()?;
            return Err(error);
        }
        Ok(())
    }

    async fn first_thread(&self) -> Result<i64, DebugError> {
        let threads = self.call::<Threads>(&Value::Null).await?;
        let first = threads
            .threads
            .first()
            .map(|t| t.id)
            .ok_or_else(|| DebugError::InvalidArguments("the program has no threads".into()))?;
        self.handles().note_thread(first);
        Ok(first)
    }

    fn require_stopped(&self, what: &str) -> Result<(), DebugError> {
        self.check_usable()?;
        let s = self.state.borrow();
        if s.stopped.is_some() {
            return Ok(());
        }
        if s.program_ended() {
            return Err(DebugError::NotStopped(format!(
                "`{what}` needs a stopped program and it has exited{}; `output` shows what it \
                 printed, `terminate` ends the session",
                s.exit_code
                    .map(|c| format!(" with code {c}"))
                    .unwrap_or_default()
            )));
        }
        Err(DebugError::NotStopped(format!(
            "`{what}` needs the program stopped and it is running; `pause` it first or \
             `continue` to a breakpoint"
        )))
    }

    pub(crate) async fn threads(&self) -> Result<ThreadsReport, DebugError> {
        self.check_usable()?;
        let threads = if self.state.borrow().program_ended() {
            Vec::new()
        } else {
            self.call::<Threads>(&Value::Null).await?.threads
        };
        let total = threads.len();
        {
            let mut handles = self.handles();
            for thread in &threads {
                handles.note_thread(thread.id);
            }
        }
        Ok(ThreadsReport {
            threads: threads
                .into_iter()
                .take(MAX_THREADS)
                .map(|t| ThreadView {
                    id: t.id,
                    name: t.name,
                })
                .collect(),
            total,
            truncated: total > MAX_THREADS,
            position: self.position().await,
        })
    }

    fn default_thread(&self) -> Option<i64> {
        let s = self.state.borrow();
        s.stopped
            .as_ref()
            .and_then(|stop| stop.thread_id)
            .or(s.last_stopped_thread)
    }

    pub(crate) async fn stack(&self, thread: Option<i64>) -> Result<StackReport, DebugError> {
        self.require_stopped("stack")?;
        let thread = self.pick_thread(thread).await?;
        let args = StackTraceArguments {
            thread_id: thread,
            start_frame: 0,
            // One more than shown tells whether there are more when the total is not given.
            levels: MAX_FRAMES as i64 + 1,
        };
        let response = self.call::<StackTrace>(&args).await?;
        let fetched = response.stack_frames.len();
        let truncated =
            fetched > MAX_FRAMES || response.total_frames.is_some_and(|t| t > MAX_FRAMES as i64);
        let total_frames = response
            .total_frames
            .or((!truncated).then_some(fetched as i64));
        let frames = {
            let mut handles = self.handles();
            handles.note_thread(thread);
            response
                .stack_frames
                .iter()
                .take(MAX_FRAMES)
                .enumerate()
                .map(|(depth, f)| {
                    let id = handles.issue_frame(thread, depth, f.id);
                    self.frame_view(id, f)
                })
                .collect::<Vec<FrameView>>()
        };
        Ok(StackReport {
            thread_id: thread,
            frames,
            total_frames,
            truncated,
            position: self.position().await,
        })
    }

    /// The adapter's frame behind our `frame_id`, or the stopped thread's top frame.
    async fn adapter_frame(&self, frame_id: Option<i64>) -> Result<(i64, i64), DebugError> {
        if let Some(ours) = frame_id {
            let frame = self.handles().resolve(Kind::Frame, ours)?;
            return Ok((ours, frame));
        }
        let (position, frame) = self.position_and_frame().await;
        match (position.stopped.and_then(|s| s.frame_id), frame) {
            (Some(ours), Some(frame)) => Ok((ours, frame.id)),
            _ => Err(DebugError::InvalidArguments(
                "the stopped thread's top frame is not known; pass `frame_id` from `stack`".into(),
            )),
        }
    }

    pub(crate) async fn scopes(&self, frame_id: i64) -> Result<ScopesReport, DebugError> {
        self.require_stopped("scopes")?;
        let frame = self.handles().resolve(Kind::Frame, frame_id)?;
        let scopes = self.frame_scopes(frame).await?;
        let scopes = {
            let mut handles = self.handles();
            scopes
                .into_iter()
                .map(|s| ScopeView {
                    name: s.name,
                    reference: handles.issue(Kind::Variables, s.variables_reference),
                    expensive: s.expensive,
                    variables: match (s.named_variables, s.indexed_variables) {
                        (None, None) => None,
                        (named, indexed) => Some(named.unwrap_or(0) + indexed.unwrap_or(0)),
                    },
                })
                .collect()
        };
        Ok(ScopesReport {
            frame_id,
            scopes,
            position: self.position().await,
        })
    }

    pub(crate) async fn variables(&self, reference: i64) -> Result<VariablesReport, DebugError> {
        self.require_stopped("variables")?;
        if reference <= 0 {
            return Err(DebugError::InvalidArguments(format!(
                "`reference` must be a positive variables reference from `scopes`, `locals`, \
                 `variables` or `evaluate` (got {reference}); 0 means the value has no children"
            )));
        }
        let adapter_reference = self.handles().resolve(Kind::Variables, reference)?;
        let children = self.children(adapter_reference).await?;
        let total = children.len();
        Ok(VariablesReport {
            reference,
            variables: children
                .into_iter()
                .take(MAX_CHILDREN)
                .map(|v| self.variable_view(v, MAX_VALUE_CHARS))
                .collect(),
            total,
            truncated: total > MAX_CHILDREN,
            position: self.position().await,
        })
    }

    /// `locals`: one scope of a frame (default the stopped top frame's locals) in one call.
    pub(crate) async fn locals(
        &self,
        frame_id: Option<i64>,
        scope: Option<&str>,
    ) -> Result<LocalsReport, DebugError> {
        self.require_stopped("locals")?;
        let (ours, frame) = self.adapter_frame(frame_id).await?;
        let scopes = self.frame_scopes(frame).await?;
        let names: Vec<String> = scopes.iter().map(|s| s.name.clone()).collect();
        let chosen = match scope {
            Some(wanted) => named_scope(&scopes, wanted),
            None => locals_scope(&scopes),
        };
        let Some(chosen) = chosen.cloned() else {
            return Err(DebugError::InvalidArguments(format!(
                "frame {ours} has no {} scope; its scopes: {}",
                scope.unwrap_or("locals"),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        };
        let children = self.children(chosen.variables_reference).await?;
        let total = children.len();
        let variables = children
            .into_iter()
            .take(MAX_CHILDREN)
            .map(|v| self.variable_view(v, MAX_VALUE_CHARS))
            .collect();
        let reference = self
            .handles()
            .issue(Kind::Variables, chosen.variables_reference);
        Ok(LocalsReport {
            frame_id: ours,
            scope: chosen.name,
            reference,
            variables,
            total,
            truncated: total > MAX_CHILDREN,
            scopes: names,
            position: self.position().await,
        })
    }

    pub(crate) async fn evaluate(
        &self,
        expression: &str,
        frame_id: Option<i64>,
    ) -> Result<EvaluateReport, DebugError> {
        self.require_stopped("evaluate")?;
        let (ours, frame) = match frame_id {
            Some(ours) => {
                let frame = self.handles().resolve(Kind::Frame, ours)?;
                (Some(ours), Some(frame))
            }
            None => match self.adapter_frame(None).await {
                Ok((ours, frame)) => (Some(ours), Some(frame)),
                // Some adapters evaluate without a frame (globals).
                Err(_) => (None, None),
            },
        };
        let args = EvaluateArguments {
            expression: expression.to_owned(),
            frame_id: frame,
            context: self.kind.evaluate_context().into(),
        };
        let response = self.call::<Evaluate>(&args).await?;
        let (result, result_truncated, result_length) = cap_value(&response.result);
        let reference = self
            .handles()
            .issue(Kind::Variables, response.variables_reference);
        Ok(EvaluateReport {
            expression: expression.to_owned(),
            frame_id: ours,
            result,
            type_name: response.type_name.filter(|t| !t.is_empty()),
            reference,
            result_length,
            result_truncated,
            position: self.position().await,
        })
    }
}
