//! Debug Adapter Protocol messages as serde types.
//!
//! The envelope ([`Message`]: request, response or event) is fully typed; requests carry
//! their arguments and responses their bodies as typed structs through [`Request`], so a
//! caller writes `client.request::<StackTrace>(args)` and gets a [`StackTraceResponse`] back.
//! Only the part of the protocol this crate uses is modelled; unknown fields are ignored and
//! unknown events arrive as [`Event`] with a raw body.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One DAP message, tagged by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Message {
    /// A request (client → adapter, or a reverse request adapter → client).
    Request(RequestMessage),
    /// A response to a request.
    Response(Response),
    /// An event from the adapter.
    Event(Event),
}

/// A request on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestMessage {
    /// Sequence number (some adapters send 0 for everything; never rely on it).
    #[serde(default)]
    pub seq: i64,
    /// The command (`initialize`, `launch`, …).
    pub command: String,
    /// The arguments object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// A response on the wire; `request_seq` correlates it with its request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Sequence number of this message.
    #[serde(default)]
    pub seq: i64,
    /// The `seq` of the request this answers.
    pub request_seq: i64,
    /// Whether the request succeeded.
    pub success: bool,
    /// The command that was requested.
    pub command: String,
    /// The error message when `success` is false (`cancelled`, `notStopped`, or free text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The result, or an `{ "error": Message }` object on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

impl Response {
    /// The most specific error text: `body.error.format` when present, else `message`.
    pub fn error_text(&self) -> String {
        let formatted = self
            .body
            .as_ref()
            .and_then(|body| body.get("error"))
            .and_then(|error| error.get("format"))
            .and_then(Value::as_str);
        match (formatted, &self.message) {
            (Some(format), _) => format.to_owned(),
            (None, Some(message)) => message.clone(),
            (None, None) => "the adapter gave no reason".to_owned(),
        }
    }
}

/// An event on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Sequence number.
    #[serde(default)]
    pub seq: i64,
    /// The event name (`stopped`, `output`, …, or an adapter's own such as
    /// `debugpySockets`).
    pub event: String,
    /// The event body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

impl Event {
    /// The body parsed as `T`, if it has that shape.
    pub fn body_as<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.body.clone().unwrap_or(Value::Null)).ok()
    }
}

/// A typed request: its command, arguments and response body.
pub trait Request {
    /// The `command` string.
    const COMMAND: &'static str;
    /// The `arguments` object.
    type Arguments: Serialize + Send;
    /// The `body` of a successful response.
    type Response: DeserializeOwned;
}

macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $command:literal, $args:ty, $response:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $name {}
        impl Request for $name {
            const COMMAND: &'static str = $command;
            type Arguments = $args;
            type Response = $response;
        }
    };
}

request!(
    /// `initialize`: the first request; returns the adapter's capabilities.
    Initialize, "initialize", InitializeArguments, Capabilities
);
request!(
    /// `setBreakpoints`: replaces every breakpoint of one source file.
    SetBreakpoints, "setBreakpoints", SetBreakpointsArguments, SetBreakpointsResponse
);
request!(
    /// `setFunctionBreakpoints`: replaces every function breakpoint.
    SetFunctionBreakpoints, "setFunctionBreakpoints", SetFunctionBreakpointsArguments, SetBreakpointsResponse
);
request!(
    /// `setExceptionBreakpoints`: which exceptions stop the program.
    SetExceptionBreakpoints, "setExceptionBreakpoints", SetExceptionBreakpointsArguments, Value
);
request!(
    /// `configurationDone`: the end of the configuration phase.
    ConfigurationDone, "configurationDone", Value, Value
);
request!(
    /// `threads`: every thread of the debuggee.
    Threads, "threads", Value, ThreadsResponse
);
request!(
    /// `stackTrace`: frames of one thread.
    StackTrace, "stackTrace", StackTraceArguments, StackTraceResponse
);
request!(
    /// `scopes`: the variable scopes of one frame.
    Scopes, "scopes", ScopesArguments, ScopesResponse
);
request!(
    /// `variables`: the children of one variable reference.
    Variables, "variables", VariablesArguments, VariablesResponse
);
request!(
    /// `evaluate`: an expression in a frame.
    Evaluate, "evaluate", EvaluateArguments, EvaluateResponse
);
request!(
    /// `continue`: resumes a thread (or all).
    Continue, "continue", ThreadArguments, Value
);
request!(
    /// `next`: steps over.
    Next, "next", ThreadArguments, Value
);
request!(
    /// `stepIn`: steps into a call.
    StepIn, "stepIn", ThreadArguments, Value
);
request!(
    /// `stepOut`: runs to the caller.
    StepOut, "stepOut", ThreadArguments, Value
);
request!(
    /// `pause`: interrupts a running thread.
    Pause, "pause", ThreadArguments, Value
);
request!(
    /// `disconnect`: ends the session (and, when asked, the debuggee).
    Disconnect, "disconnect", DisconnectArguments, Value
);

/// `initialize` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeArguments {
    /// Who we are.
    #[serde(rename = "clientID")]
    pub client_id: String,
    /// Human-readable client name.
    pub client_name: String,
    /// The adapter's type name (`python`, `lldb`, `go`, `dart`).
    #[serde(rename = "adapterID")]
    pub adapter_id: String,
    /// Always true here: lines are 1-based.
    pub lines_start_at1: bool,
    /// Always true here: columns are 1-based.
    pub columns_start_at1: bool,
    /// Always `path`.
    pub path_format: String,
    /// We never answer `runInTerminal` positively.
    pub supports_run_in_terminal_request: bool,
    /// We never answer `startDebugging` positively.
    pub supports_start_debugging_request: bool,
    /// Variable types are shown.
    pub supports_variable_type: bool,
}

impl InitializeArguments {
    /// The arguments this client always sends, for adapter type `adapter_id`.
    pub fn new(adapter_id: &str) -> Self {
        InitializeArguments {
            client_id: "cc-dap-client".into(),
            client_name: "cc code intelligence".into(),
            adapter_id: adapter_id.into(),
            lines_start_at1: true,
            columns_start_at1: true,
            path_format: "path".into(),
            supports_run_in_terminal_request: false,
            supports_start_debugging_request: false,
            supports_variable_type: true,
        }
    }
}

/// The capabilities this client looks at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Whether `configurationDone` is expected.
    #[serde(default)]
    pub supports_configuration_done_request: bool,
    /// Exception filters; those marked `default` are enabled at launch.
    #[serde(default)]
    pub exception_breakpoint_filters: Vec<ExceptionBreakpointsFilter>,
    /// Whether `terminate` is supported.
    #[serde(default)]
    pub supports_terminate_request: bool,
    /// Whether `setFunctionBreakpoints` is supported.
    #[serde(default)]
    pub supports_function_breakpoints: bool,
}

/// One exception filter an adapter offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExceptionBreakpointsFilter {
    /// The filter id.
    pub filter: String,
    /// Its label.
    #[serde(default)]
    pub label: String,
    /// Whether it is on by default.
    #[serde(default)]
    pub default: bool,
}

/// A source file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// Short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Path on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `setBreakpoints` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetBreakpointsArguments {
    /// The file.
    pub source: Source,
    /// Every breakpoint of the file (an empty list clears it).
    pub breakpoints: Vec<SourceBreakpoint>,
}

/// One requested line breakpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceBreakpoint {
    /// 1-based line.
    pub line: i64,
}

/// `setBreakpoints` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetBreakpointsResponse {
    /// One entry per requested breakpoint, in order.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
}

/// A breakpoint as the adapter placed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breakpoint {
    /// Whether it could be set.
    #[serde(default)]
    pub verified: bool,
    /// The line it actually landed on.
    #[serde(default)]
    pub line: Option<i64>,
    /// Why it is not verified, or other information.
    #[serde(default)]
    pub message: Option<String>,
}

/// `setFunctionBreakpoints` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetFunctionBreakpointsArguments {
    /// Every function breakpoint (an empty list clears them).
    pub breakpoints: Vec<FunctionBreakpoint>,
}

/// One requested function breakpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionBreakpoint {
    /// The function's name.
    pub name: String,
}

/// `setExceptionBreakpoints` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetExceptionBreakpointsArguments {
    /// Enabled filter ids.
    pub filters: Vec<String>,
}

/// Arguments naming one thread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadArguments {
    /// The thread.
    pub thread_id: i64,
}

/// `disconnect` arguments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DisconnectArguments {
    /// Not a restart.
    pub restart: bool,
    /// End the debuggee too.
    pub terminate_debuggee: bool,
}

/// `threads` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadsResponse {
    /// The threads.
    #[serde(default)]
    pub threads: Vec<Thread>,
}

/// A thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    /// Its id.
    pub id: i64,
    /// Its name.
    #[serde(default)]
    pub name: String,
}

/// `stackTrace` arguments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackTraceArguments {
    /// The thread.
    pub thread_id: i64,
    /// First frame (0 = top).
    pub start_frame: i64,
    /// How many frames.
    pub levels: i64,
}

/// `stackTrace` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackTraceResponse {
    /// The frames, top first.
    #[serde(default)]
    pub stack_frames: Vec<StackFrame>,
    /// Total frames available, when the adapter knows.
    #[serde(default)]
    pub total_frames: Option<i64>,
}

/// One frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackFrame {
    /// Frame id (valid while stopped).
    pub id: i64,
    /// Function name.
    #[serde(default)]
    pub name: String,
    /// Where it is.
    #[serde(default)]
    pub source: Option<Source>,
    /// 1-based line (0 when unknown).
    #[serde(default)]
    pub line: i64,
}

/// `scopes` arguments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopesArguments {
    /// The frame.
    pub frame_id: i64,
}

/// `scopes` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopesResponse {
    /// The scopes.
    #[serde(default)]
    pub scopes: Vec<Scope>,
}

/// One scope (locals, globals, registers, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Its name.
    pub name: String,
    /// Reference for `variables`.
    pub variables_reference: i64,
    /// Whether fetching it is expensive.
    #[serde(default)]
    pub expensive: bool,
    /// Named children, when known.
    #[serde(default)]
    pub named_variables: Option<i64>,
    /// Indexed children, when known.
    #[serde(default)]
    pub indexed_variables: Option<i64>,
}

/// `variables` arguments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariablesArguments {
    /// Which container.
    pub variables_reference: i64,
}

/// `variables` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariablesResponse {
    /// The children.
    #[serde(default)]
    pub variables: Vec<Variable>,
}

/// One variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its value, rendered by the adapter.
    #[serde(default)]
    pub value: String,
    /// Its type, when known.
    #[serde(default, rename = "type")]
    pub type_name: Option<String>,
    /// Reference for its children (0: none).
    #[serde(default)]
    pub variables_reference: i64,
}

/// `evaluate` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateArguments {
    /// The expression.
    pub expression: String,
    /// The frame it is evaluated in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<i64>,
    /// `repl`, `watch`, `hover`.
    pub context: String,
}

/// `evaluate` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateResponse {
    /// The value.
    pub result: String,
    /// Its type, when known.
    #[serde(default, rename = "type")]
    pub type_name: Option<String>,
    /// Reference for its children (0: none).
    #[serde(default)]
    pub variables_reference: i64,
}

/// `stopped` event body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedEventBody {
    /// `breakpoint`, `step`, `pause`, `exception`, `entry`, …
    pub reason: String,
    /// A description (the exception name, say).
    #[serde(default)]
    pub description: Option<String>,
    /// The stopped thread.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// More text (an exception's message).
    #[serde(default)]
    pub text: Option<String>,
    /// Whether every thread stopped.
    #[serde(default)]
    pub all_threads_stopped: bool,
}

/// `continued` event body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinuedEventBody {
    /// The thread that continued.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// Whether all did.
    #[serde(default)]
    pub all_threads_continued: Option<bool>,
}

/// `exited` event body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitedEventBody {
    /// The debuggee's exit code.
    pub exit_code: i64,
}

/// `output` event body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputEventBody {
    /// `stdout`, `stderr`, `console`, `telemetry`, … (absent means `console`).
    #[serde(default)]
    pub category: Option<String>,
    /// The text.
    #[serde(default)]
    pub output: String,
}

/// `process` event body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessEventBody {
    /// The debuggee's name.
    #[serde(default)]
    pub name: String,
    /// Its pid, when local.
    #[serde(default)]
    pub system_process_id: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_round_trips_and_ignores_unknown_fields() {
        let raw = json!({"seq": 0, "type": "response", "request_seq": 7, "success": false,
            "command": "launch", "message": "oops", "extra": 1,
            "body": {"error": {"id": 1, "format": "program not found"}}});
        let message: Message = serde_json::from_value(raw).unwrap();
        let Message::Response(response) = &message else {
            panic!("not a response: {message:?}")
        };
        assert_eq!(response.request_seq, 7);
        assert_eq!(response.error_text(), "program not found");
        let back = serde_json::to_value(&message).unwrap();
        assert_eq!(back["type"], "response");
    }

    #[test]
    fn events_without_body_parse() {
        let message: Message =
            serde_json::from_value(json!({"seq": 3, "type": "event", "event": "initialized"}))
                .unwrap();
        assert!(
            matches!(message, Message::Event(Event { ref event, .. }) if event == "initialized")
        );
    }
}
