//! Operations on a started program: moving it on and looking inside.

use serde_json::Value;

use super::{display_path, Action, Session};
use crate::error::DebugError;
use crate::protocol::{
    Continue, Evaluate, EvaluateArguments, Next, Pause, Scopes, ScopesArguments, StackTrace,
    StackTraceArguments, StepIn, StepOut, ThreadArguments, Threads, Variables, VariablesArguments,
};
use crate::report::{
    cap_value, EvaluateReport, FrameView, ScopeView, ScopesReport, StackReport, StepReport,
    ThreadView, ThreadsReport, VariableView, VariablesReport, MAX_CHILDREN, MAX_FRAMES,
    MAX_THREADS,
};

impl Session {
    /// Continue, pause or step, then wait for the program to stop or end.
    pub(crate) async fn act(
        &self,
        action: Action,
        thread: Option<i64>,
    ) -> Result<StepReport, DebugError> {
        self.check_usable()?;
        let mark = self.output_mark();
        let (stopped, ended, generation, last_thread, code) = {
            let s = self.state.borrow();
            (
                s.stopped.clone(),
                s.program_ended(),
                s.stop_generation,
                s.last_stopped_thread,
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
                    position: self.position().await,
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
            let thread = match thread
                .or(stopped.as_ref().and_then(|s| s.thread_id))
                .or(last_thread)
            {
                Some(thread) => thread,
                None => self.first_thread().await?,
            };
            let args = ThreadArguments { thread_id: thread };
            if action != Action::Pause {
                // Forget the stop before resuming: a new `stopped` event is what we wait for.
                self.state.send_modify(|s| s.stopped = None);
            }
            let timeout = self.settings.request_timeout;
            let sent = match action {
                Action::Continue => self
                    .client
                    .request::<Continue>(&args, timeout)
                    .await
                    .map(drop),
                Action::Pause => self.client.request::<Pause>(&args, timeout).await.map(drop),
                Action::StepOver => self.client.request::<Next>(&args, timeout).await.map(drop),
                Action::StepIn => self
                    .client
                    .request::<StepIn>(&args, timeout)
                    .await
                    .map(drop),
                Action::StepOut => self
                    .client
                    .request::<StepOut>(&args, timeout)
                    .await
                    .map(drop),
            };
            if let Err(error) = sent {
                self.state.send_modify(|s| {
                    if s.stop_generation == generation && s.stopped.is_none() {
                        s.stopped = stopped.clone();
                    }
                });
                self.check_usable()?;
                return Err(error.into());
            }
        }
        let timed_out = self.wait_for_stop(generation, self.settings.wait).await;
        self.tracker.refresh_now_and_then();
        self.learn_exit_code().await;
        self.check_usable()?;
        if timed_out {
            let still = self.still_running_note();
            note = Some(match note {
                Some(first) => format!("{first}; {still}"),
                None => still,
            });
        }
        Ok(StepReport {
            position: self.position().await,
            output: self.output_since(mark),
            note,
        })
    }

    async fn first_thread(&self) -> Result<i64, DebugError> {
        let threads = self
            .client
            .request::<Threads>(&Value::Null, self.settings.request_timeout)
            .await?;
        threads
            .threads
            .first()
            .map(|t| t.id)
            .ok_or_else(|| DebugError::InvalidArguments("the program has no threads".into()))
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
            self.client
                .request::<Threads>(&Value::Null, self.settings.request_timeout)
                .await?
                .threads
        };
        let total = threads.len();
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
        let thread = match thread.or_else(|| self.default_thread()) {
            Some(thread) => thread,
            None => self.first_thread().await?,
        };
        let args = StackTraceArguments {
            thread_id: thread,
            start_frame: 0,
            // One more than shown tells whether there are more when the total is not given.
            levels: MAX_FRAMES as i64 + 1,
        };
        let response = self
            .client
            .request::<StackTrace>(&args, self.settings.request_timeout)
            .await?;
        let fetched = response.stack_frames.len();
        let truncated =
            fetched > MAX_FRAMES || response.total_frames.is_some_and(|t| t > MAX_FRAMES as i64);
        let total_frames = response
            .total_frames
            .or((!truncated).then_some(fetched as i64));
        Ok(StackReport {
            thread_id: thread,
            frames: response
                .stack_frames
                .into_iter()
                .take(MAX_FRAMES)
                .map(|f| FrameView {
                    id: f.id,
                    file: f
                        .source
                        .and_then(|s| s.path.or(s.name))
                        .map(|p| display_path(&self.root, &p)),
                    function: f.name,
                    line: f.line,
                })
                .collect(),
            total_frames,
            truncated,
            position: self.position().await,
        })
    }

    pub(crate) async fn scopes(&self, frame_id: i64) -> Result<ScopesReport, DebugError> {
        self.require_stopped("scopes")?;
        let response = self
            .client
            .request::<Scopes>(&ScopesArguments { frame_id }, self.settings.request_timeout)
            .await?;
        Ok(ScopesReport {
            frame_id,
            scopes: response
                .scopes
                .into_iter()
                .map(|s| ScopeView {
                    name: s.name,
                    reference: s.variables_reference,
                    expensive: s.expensive,
                    variables: match (s.named_variables, s.indexed_variables) {
                        (None, None) => None,
                        (named, indexed) => Some(named.unwrap_or(0) + indexed.unwrap_or(0)),
                    },
                })
                .collect(),
            position: self.position().await,
        })
    }

    pub(crate) async fn variables(&self, reference: i64) -> Result<VariablesReport, DebugError> {
        self.require_stopped("variables")?;
        if reference <= 0 {
            return Err(DebugError::InvalidArguments(format!(
                "`reference` must be a positive variables reference from `scopes`, `variables` \
                 or `evaluate` (got {reference}); 0 means the value has no children"
            )));
        }
        let response = self
            .client
            .request::<Variables>(
                &VariablesArguments {
                    variables_reference: reference,
                },
                self.settings.request_timeout,
            )
            .await?;
        let total = response.variables.len();
        Ok(VariablesReport {
            reference,
            variables: response
                .variables
                .into_iter()
                .take(MAX_CHILDREN)
                .map(|v| {
                    let (value, value_truncated, value_length) = cap_value(&v.value);
                    VariableView {
                        name: v.name,
                        value,
                        type_name: v.type_name.filter(|t| !t.is_empty()),
                        reference: v.variables_reference,
                        value_length,
                        value_truncated,
                    }
                })
                .collect(),
            total,
            truncated: total > MAX_CHILDREN,
            position: self.position().await,
        })
    }

    pub(crate) async fn evaluate(
        &self,
        expression: &str,
        frame_id: Option<i64>,
    ) -> Result<EvaluateReport, DebugError> {
        self.require_stopped("evaluate")?;
        let frame_id = match frame_id {
            Some(frame) => Some(frame),
            None => {
                let position = self.position().await;
                position.stopped.and_then(|s| s.frame_id)
            }
        };
        let args = EvaluateArguments {
            expression: expression.to_owned(),
            frame_id,
            context: self.kind.evaluate_context().into(),
        };
        let response = self
            .client
            .request::<Evaluate>(&args, self.settings.request_timeout)
            .await?;
        let (result, result_truncated, result_length) = cap_value(&response.result);
        Ok(EvaluateReport {
            expression: expression.to_owned(),
            frame_id,
            result,
            type_name: response.type_name.filter(|t| !t.is_empty()),
            reference: response.variables_reference,
            result_length,
            result_truncated,
            position: self.position().await,
        })
    }
}
