//! What a session knows about its program, kept current by the events the adapter sends.
//!
//! The state lives in a `watch` channel: a task applies every event in order, and any wait
//! ("until stopped, exited, or the adapter is gone") is a predicate over it, so an event
//! that arrives before someone waits for it is never missed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cc_process::GroupChild;

use tokio::sync::{mpsc, watch};

use crate::client::Client;
use crate::proctree::{describe_status, Tracker};
use crate::protocol::{
    ContinuedEventBody, Event, ExitedEventBody, OutputEventBody, ProcessEventBody, Response,
    StoppedEventBody,
};
use crate::ring::OutputRing;

/// Why the program is stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct StopInfo {
    /// `breakpoint`, `step`, `pause`, `exception`, …
    pub reason: String,
    /// The thread that stopped.
    pub thread_id: Option<i64>,
    /// The adapter's description (an exception's type, say).
    pub description: Option<String>,
    /// More text (an exception's message).
    pub text: Option<String>,
}

/// The session's view of its program and adapter.
#[derive(Debug)]
pub struct State {
    /// The `initialized` event arrived.
    pub initialized: bool,
    /// The launch/attach response, once it arrived.
    pub launch_response: Option<Response>,
    /// Counts `stopped` events: a wait for "the next stop" compares against it.
    pub stop_generation: u64,
    /// Set while stopped.
    pub stopped: Option<StopInfo>,
    /// The thread of the last stop (kept after continuing, for defaults).
    pub last_stopped_thread: Option<i64>,
    /// Counts the times the program went from stopped to running (or ended): every frame id
    /// and variables reference given out before the last one is stale.
    pub resumes: u64,
    /// The `exited` event's code (or one read from the adapter's console output).
    pub exit_code: Option<i64>,
    /// An `exited` event arrived.
    pub exited: bool,
    /// A `terminated` event arrived.
    pub terminated: bool,
    /// Why the connection to the adapter ended, once it did.
    pub connection_closed: Option<String>,
    /// How the adapter process ended ("signal 9 (SIGKILL)"), when it did and it is ours.
    pub adapter_exit: Option<String>,
    /// The debuggee's stdout and stderr.
    pub output: OutputRing,
    /// The adapter's own messages (console output, stderr).
    pub adapter_log: OutputRing,
    /// Whether output is still recorded (off once we asked to disconnect: what an adapter
    /// prints while dying is not the program's output).
    pub recording: bool,
    /// The debuggee's pid, from the `process` event.
    pub debuggee_pid: Option<u32>,
    /// Pipes carrying program output (delve's stdout and stderr) not yet at their end.
    pub open_output_pipes: usize,
}

impl State {
    /// A fresh state keeping `output_bytes` of program output.
    pub fn new(output_bytes: usize) -> Self {
        State {
            initialized: false,
            launch_response: None,
            stop_generation: 0,
            stopped: None,
            last_stopped_thread: None,
            resumes: 0,
            exit_code: None,
            exited: false,
            terminated: false,
            connection_closed: None,
            adapter_exit: None,
            output: OutputRing::new(output_bytes),
            adapter_log: OutputRing::new(16 * 1024),
            recording: true,
            debuggee_pid: None,
            open_output_pipes: 0,
        }
    }

    /// Whether the program has ended (`exited` or `terminated`).
    pub fn program_ended(&self) -> bool {
        self.exited || self.terminated
    }

    /// Whether the adapter is gone while the program had not ended: a crash.
    pub fn adapter_lost(&self) -> bool {
        self.connection_closed.is_some() && !self.program_ended()
    }

    /// Program output as it arrives (normalizing a pty's `\r\n`).
    pub fn record_output(&mut self, text: &str) {
        if self.recording {
            self.output.push(&text.replace("\r\n", "\n"));
        }
    }

    /// Applies one event; returns a pid to track when the event names the debuggee.
    pub fn apply(&mut self, event: &Event) -> Option<u32> {
        match event.event.as_str() {
            "initialized" => self.initialized = true,
            "stopped" => {
                let body: StoppedEventBody = event.body_as().unwrap_or(StoppedEventBody {
                    reason: "unknown".into(),
                    description: None,
                    thread_id: None,
                    text: None,
                    all_threads_stopped: true,
                });
                self.stop_generation += 1;
                if body.thread_id.is_some() {
                    self.last_stopped_thread = body.thread_id;
                }
                self.stopped = Some(StopInfo {
                    reason: body.reason,
                    thread_id: body.thread_id.or(self.last_stopped_thread),
                    description: body.description,
                    text: body.text,
                });
            }
            "continued" => {
                let body: Option<ContinuedEventBody> = event.body_as();
                let all = body
                    .as_ref()
                    .and_then(|b| b.all_threads_continued)
                    .unwrap_or(true);
                let thread = body.and_then(|b| b.thread_id);
                let stopped_thread = self.stopped.as_ref().and_then(|s| s.thread_id);
                if (all || thread.is_none() || thread == stopped_thread)
                    && self.stopped.take().is_some()
                {
                    self.resumes += 1;
                }
            }
            "exited" => {
                self.exited = true;
                self.stopped = None;
                self.resumes += 1;
                if let Some(body) = event.body_as::<ExitedEventBody>() {
                    self.exit_code = Some(body.exit_code);
                }
            }
            "terminated" => {
                self.terminated = true;
                self.stopped = None;
                self.resumes += 1;
            }
            "output" => {
                let body: OutputEventBody = event.body_as()?;
                match body.category.as_deref() {
                    Some("stdout" | "stderr") => self.record_output(&body.output),
                    Some("telemetry") => {}
                    _ => {
                        if self.exit_code.is_none() {
                            self.exit_code = console_exit_code(&body.output);
                        }
                        if self.recording {
                            self.adapter_log.push(&body.output);
                        }
                    }
                }
            }
            "process" => {
                let body: ProcessEventBody = event.body_as()?;
                let pid = body.system_process_id.and_then(|p| u32::try_from(p).ok());
                self.debuggee_pid = pid.or(self.debuggee_pid);
                return pid;
            }
            _ => {}
        }
        None
    }
}

/// Delve reports the exit status only as console text: `Process 123 has exited with status 3`.
fn console_exit_code(text: &str) -> Option<i64> {
    let rest = text.split("has exited with status ").nth(1)?;
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// Applies events to the state until the connection ends; then records why, and kills
/// whatever the session left (the adapter is gone, so nothing else would).
pub(crate) async fn pump_events(
    mut events: mpsc::UnboundedReceiver<Event>,
    state: Arc<watch::Sender<State>>,
    client: Client,
    tracker: Arc<Tracker>,
    child: Arc<Mutex<Option<GroupChild>>>,
) {
    while let Some(event) = events.recv().await {
        let mut track = None;
        state.send_modify(|s| track = s.apply(&event));
        if let Some(pid) = track {
            tracker.add_pid(pid);
        }
    }
    let reason = client
        .closed_reason()
        .unwrap_or_else(|| "the connection ended".into());
    // The output closes a moment before the process is a zombie, and an adapter may still
    // be on its way out: give it a moment to end on its own so the status is its own, then
    // kill whatever the session left (the adapter is gone, so nothing else would).
    let mut exit = None;
    let mut killed = false;
    for round in 0..60 {
        if round == 20 {
            tracker.kill_all();
            killed = true;
        }
        let polled = cc_process::lock(&child).as_mut().map(|child| {
            let status = child.try_wait();
            if let Ok(Some(_)) = status {
                // Whatever the adapter left in its group goes with it (the handle knows
                // the leader was reaped, so a recycled group id is never signalled).
                child.kill_group();
            }
            status
        });
        match polled {
            Some(Ok(Some(status))) => {
                exit = Some(describe_status(status));
                break;
            }
            Some(Ok(None)) => tokio::time::sleep(Duration::from_millis(50)).await,
            // Not ours (attach), `terminate` already took it, or it cannot be polled.
            None | Some(Err(_)) => break,
        }
    }
    if !killed {
        tracker.kill_all();
    }
    state.send_modify(|s| {
        s.adapter_exit = exit;
        s.connection_closed = Some(reason);
        // Without its adapter the program is not stopped anywhere we could inspect.
        s.stopped = None;
        s.resumes += 1;
    });
}

/// Stores the launch/attach response in the state when it arrives.
pub(crate) async fn store_launch_response(
    mut pending: crate::client::PendingResponse,
    state: Arc<watch::Sender<State>>,
) {
    if let Ok(response) = pending.response().await {
        state.send_modify(|s| s.launch_response = Some(response));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn event(name: &str, body: Value) -> Event {
        Event {
            seq: 0,
            event: name.into(),
            body: Some(body),
        }
    }

    #[test]
    fn stops_continues_and_exits() {
        let mut state = State::new(1024);
        state.apply(&event(
            "stopped",
            json!({"reason": "breakpoint", "threadId": 7}),
        ));
        assert_eq!(state.stop_generation, 1);
        assert_eq!(state.stopped.as_ref().unwrap().thread_id, Some(7));
        assert_eq!(state.resumes, 0);
        state.apply(&event("continued", json!({"threadId": 7})));
        assert!(state.stopped.is_none());
        assert_eq!(state.resumes, 1);
        // A `continued` while running is not another resume.
        state.apply(&event("continued", json!({"threadId": 7})));
        assert_eq!(state.resumes, 1);
        assert_eq!(state.last_stopped_thread, Some(7));
        state.apply(&event(
            "output",
            json!({"category": "stdout", "output": "hi\r\n"}),
        ));
        state.apply(&event(
            "output",
            json!({"category": "console", "output": "Process 9 has exited with status 3\n"}),
        ));
        state.apply(&event("terminated", json!({})));
        assert_eq!(state.output.text(), "hi\n");
        assert_eq!(state.exit_code, Some(3));
        assert!(state.program_ended());
    }

    #[test]
    fn output_after_disconnect_is_not_the_programs() {
        let mut state = State::new(1024);
        state.recording = false;
        state.apply(&event(
            "output",
            json!({"category": "stderr", "output": "free(): invalid pointer"}),
        ));
        assert!(state.output.is_empty());
    }
}
