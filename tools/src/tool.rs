//! The `Tool` trait, its output, and the context a call runs in.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{ErrorKind, ToolError};
use crate::spool::{JsonLayout, JsonPieces, SpooledArray};
use crate::tier::Tier;

/// One tool the agent can call.
///
/// Implementations parse their arguments with [`parse_args`] and describe them with
/// [`schema_for`], so the schema the agent sees and the parser agree.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The name the agent calls it by (`read`, `ast_grep`, …).
    fn name(&self) -> &str;

    /// What the tool can do to the world; decides the surfaces that see it.
    fn tier(&self) -> Tier;

    /// One paragraph for the agent: what it does and when to use it.
    fn description(&self) -> &str;

    /// The JSON schema of the arguments object.
    fn input_schema(&self) -> Value;

    /// Whether two calls may run at the same time. Tools that hold per-run state across
    /// calls (`debug`, `eval`) return false and the registry serializes their calls.
    fn parallel_safe(&self) -> bool {
        true
    }

    /// The JSON schema of a successful result, for a tool whose results are a typed report
    /// ([`output_schema_for`]); published as MCP's `outputSchema`. `None`: not declared.
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// Runs one call.
    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError>;
}

/// A tool whose configuration section could not be used: listed as the tool is (name, tier,
/// arguments), and each call fails with what to fix (`invalid_config`), so a broken section
/// neither hides the tool nor falls back to the defaults silently.
pub struct BrokenConfig {
    inner: Arc<dyn Tool>,
    broken: cc_workspace::BrokenSection,
}

impl std::fmt::Debug for BrokenConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokenConfig")
            .field("tool", &self.inner.name())
            .field("broken", &self.broken)
            .finish()
    }
}

impl BrokenConfig {
    /// `inner`, unusable until `broken` is fixed.
    pub fn new(inner: Arc<dyn Tool>, broken: cc_workspace::BrokenSection) -> Self {
        BrokenConfig { inner, broken }
    }
}

#[async_trait]
impl Tool for BrokenConfig {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn tier(&self) -> Tier {
        self.inner.tier()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }

    fn parallel_safe(&self) -> bool {
        self.inner.parallel_safe()
    }

    fn output_schema(&self) -> Option<Value> {
        self.inner.output_schema()
    }

    async fn call(&self, _ctx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new(
            ErrorKind::InvalidConfig,
            self.broken.to_string(),
        ))
    }
}

/// An image a tool returns (a matplotlib figure, say).
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// `image/png`, …
    pub mime: String,
    /// The bytes, base64-encoded.
    pub data_base64: String,
}

/// A successful result: JSON for machines, an optional rendering for people.
///
/// The JSON result is `value`, plus the members in `spooled` when a tool serialized a big
/// array itself ([`crate::spool`]): write it with [`ToolOutput::json_pieces`], or build the
/// whole `Value` with [`ToolOutput::materialize`]. The registry materializes for every caller
/// but [`crate::Registry::call_spooled`], so `value` is the whole result wherever a caller
/// did not ask otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The JSON result (an object); without the `spooled` members.
    pub value: Value,
    /// Members of the result that are arrays the tool serialized itself, written after
    /// `value`'s members (one of the same name in `value` is replaced).
    pub spooled: Vec<(String, SpooledArray)>,
    /// A compact text rendering; when absent the JSON itself is rendered.
    pub text: Option<String>,
    /// Images to hand to clients that show them.
    pub images: Vec<Image>,
    /// Absolute paths this call wrote: the registry syncs them through the run's
    /// diagnostics hook and attaches what is new.
    pub written: Vec<PathBuf>,
}

impl ToolOutput {
    /// An output carrying `value`.
    pub fn new(value: Value) -> Self {
        ToolOutput {
            value,
            spooled: Vec::new(),
            text: None,
            images: Vec::new(),
            written: Vec::new(),
        }
    }

    /// Sets the text rendering.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Records paths the call wrote.
    pub fn with_written(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.written.extend(paths);
        self
    }

    /// Adds an image.
    pub fn with_image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }

    /// Adds the member `key`, an array the tool serialized itself.
    pub fn with_spooled(mut self, key: impl Into<String>, array: SpooledArray) -> Self {
        self.spooled.push((key.into(), array));
        self
    }

    /// The whole JSON result, piece by piece, in `layout`: the spooled arrays are copied
    /// from their spool a block at a time, never parsed, so writing a huge result takes
    /// little memory.
    pub fn json_pieces(&self, layout: JsonLayout) -> std::io::Result<JsonPieces> {
        JsonPieces::new(&self.value, &self.spooled, layout).map_err(std::io::Error::other)
    }

    /// Writes the whole JSON result to `out` in `layout`.
    pub fn write_json(
        &self,
        out: &mut impl std::io::Write,
        layout: JsonLayout,
    ) -> std::io::Result<()> {
        self.json_pieces(layout)?.write_to(out)
    }

    /// Parses the spooled members into `value`, so that `value` is the whole result.
    pub fn materialize(&mut self) -> std::io::Result<()> {
        if self.spooled.is_empty() {
            return Ok(());
        }
        if !self.value.is_object() {
            self.value = serde_json::json!({ "result": self.value.take() });
        }
        for (key, array) in std::mem::take(&mut self.spooled) {
            let items = array.to_value()?;
            if let Value::Object(object) = &mut self.value {
                object.insert(key, items);
            }
        }
        Ok(())
    }

    /// The text rendering, or compact JSON when the tool gave none.
    pub fn render_text(&self) -> String {
        match &self.text {
            Some(text) => text.clone(),
            None if self.spooled.is_empty() => self.value.to_string(),
            None => {
                let mut out = Vec::new();
                match self.write_json(&mut out, JsonLayout::Compact) {
                    Ok(()) => String::from_utf8_lossy(&out).into_owned(),
                    Err(error) => format!("the result could not be read back: {error}"),
                }
            }
        }
    }
}

/// Who made a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The agent itself (a model tool call, or `cc-harness call`).
    Model,
    /// Code running inside another tool, e.g. `tool(...)` in an `eval` cell.
    Bridge {
        /// The tool whose code made the call.
        via: String,
    },
}

/// How a call re-enters its run's registry (a kernel cell calling a tool through the
/// bridge). The registry implements it; a call context only holds it, so this module does
/// not depend on the registry.
#[async_trait]
pub(crate) trait Reenter: Send + Sync {
    async fn bridge_call(
        &self,
        caller: &CallContext,
        name: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolError>;
}

/// Receives progress of a long call (MCP `notifications/progress`).
pub trait ProgressSink: Send + Sync {
    /// `progress` grows monotonically; `total` when known.
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>);
}

/// What a running call knows about its surroundings.
#[derive(Clone)]
pub struct CallContext {
    pub(crate) origin: Origin,
    pub(crate) dispatcher: Arc<dyn Reenter>,
    pub(crate) progress: Option<Arc<dyn ProgressSink>>,
    /// The tool this context was made for.
    pub(crate) tool: String,
    /// Serialized tools held by this call and the calls that led to it.
    pub(crate) held: Arc<Vec<String>>,
    /// Fires when the caller cancels the call (shared with bridge calls made from it).
    pub(crate) cancel: crate::Cancellation,
    /// The run's diagnostics hook, told before a write what it will change.
    pub(crate) after_write: Option<Arc<dyn crate::AfterWrite>>,
    /// The run's notices, for the next result ([`crate::notices`]).
    pub(crate) notices: crate::Notices,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("origin", &self.origin)
            .field("tool", &self.tool)
            .field("held", &self.held)
            .finish_non_exhaustive()
    }
}

impl CallContext {
    /// Who made this call.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The run's notices: what is pushed here goes out with the next result the model gets
    /// ([`crate::notices`]).
    pub fn notices(&self) -> &crate::Notices {
        &self.notices
    }

    /// Reports progress if the caller asked for it; a no-op otherwise.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.progress {
            sink.report(progress, total, message);
        }
    }

    /// An owned handle on the caller's progress sink, for work on other threads.
    pub fn progress_sink(&self) -> Option<Arc<dyn ProgressSink>> {
        self.progress.clone()
    }

    /// Whether the caller listens for progress.
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// Tells the run's diagnostics hook what this call is about to write, before it writes
    /// (so that diagnostics files already had are not reported as new). Every writing tool
    /// calls it right before its write; the registry reports after the call returns.
    pub async fn before_write(&self, planned: &[crate::PlannedWrite]) {
        if let Some(hook) = &self.after_write {
            hook.before_write(planned).await;
        }
    }

    /// Tells the run's diagnostics hook that this call renamed `old` to `new` (after the
    /// commit, before the registry collects the diagnostics).
    pub async fn note_renamed(&self, old: &str, new: &str) {
        if let Some(hook) = &self.after_write {
            hook.renamed(old, new).await;
        }
    }

    /// The call's cancellation: work on other threads or in other processes (searches,
    /// kernel cells, debug waits) checks it and stops when it fires.
    pub fn cancellation(&self) -> &crate::Cancellation {
        &self.cancel
    }

    /// Calls another tool of the same run from inside this one (the kernel bridge). The call
    /// goes through the same surface check, approver and wrappers as a model call.
    pub async fn call_tool(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.dispatcher.bridge_call(self, name, args).await
    }

    /// A handle that can call tools of this run later, from any thread or task.
    pub fn bridge(&self) -> BridgeHandle {
        BridgeHandle {
            context: self.clone(),
        }
    }
}

/// An owned handle for bridge calls, cloneable into kernel reader tasks.
#[derive(Clone, Debug)]
pub struct BridgeHandle {
    context: CallContext,
}

impl BridgeHandle {
    /// Same as [`CallContext::call_tool`].
    pub async fn call_tool(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.context.call_tool(name, args).await
    }
}

/// Parses a tool's arguments, turning serde's complaint into `invalid_arguments`.
pub fn parse_args<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    serde_json::from_value(args).map_err(|error| {
        ToolError::invalid_arguments(format!(
            "{error}; see the tool's input schema for the expected arguments"
        ))
    })
}

/// The JSON schema of `T`, without the `$schema` marker (MCP wants a plain object schema),
/// made portable for strict validators (Ajv strict mode):
///
/// - `format` values that JSON Schema does not define (schemars' `uint`, `int64`, `double`,
///   …) are removed; the type and the bounds already say what they meant;
/// - lines are 1-based everywhere: an integer property named `line` (or `*_line`), and the
///   items of an integer array named `lines`, get `minimum: 1`.
pub fn schema_for<T: schemars::JsonSchema>() -> Value {
    let schema = schemars::schema_for!(T);
    let mut value = schema.to_value();
    if let Value::Object(object) = &mut value {
        object.remove("$schema");
    }
    portable(&mut value, true);
    value
}

/// A typed report's result: its JSON, and its text from the same value.
pub fn report_output<R: serde::Serialize + crate::report::Render>(
    report: &R,
) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::new(report_json(report)?).with_text(report.render()))
}

/// A report's JSON (a report that does not serialize is a bug, said as an internal error).
pub fn report_json(report: &impl serde::Serialize) -> Result<Value, ToolError> {
    serde_json::to_value(report)
        .map_err(|error| ToolError::internal(format!("could not serialize the result: {error}")))
}

/// The JSON schema of a tool's result type `T`, as MCP's `outputSchema` wants it: an object
/// at the root, the formats JSON Schema does not define removed. Lines are not bounded: a
/// frame without source has line 0.
///
/// The root is either the report or the error envelope (`{"error": {kind, message, …}}`): a
/// failed call's `structuredContent` is the envelope, and clients that check every
/// `structuredContent` against the schema (the TypeScript SDK does, errors included) must
/// find it conforms.
pub fn output_schema_for<T: schemars::JsonSchema>() -> Value {
    let schema = schemars::schema_for!(T);
    let mut report = schema.to_value();
    let mut root = serde_json::Map::new();
    if let Value::Object(object) = &mut report {
        object.remove("$schema");
        for key in ["$defs", "title", "description"] {
            if let Some(value) = object.remove(key) {
                root.insert(key.into(), value);
            }
        }
    }
    let envelope = serde_json::json!({
        "description": "A failed call: what went wrong and what to do.",
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "description": "The error kind (`not_found`, `stale`, …)."},
                    "message": {"type": "string", "description": "What went wrong and what to do."}
                },
                "required": ["kind", "message"]
            }
        },
        "required": ["error"]
    });
    root.insert("type".into(), Value::from("object"));
    root.insert("anyOf".into(), Value::Array(vec![report, envelope]));
    let mut value = Value::Object(root);
    portable(&mut value, false);
    value
}

/// The `format` values JSON Schema (2020-12) defines.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// See [`schema_for`]. A work list, not recursion: a schema is walked node by node.
fn portable(schema: &mut Value, one_based_lines: bool) {
    let mut stack: Vec<&mut Value> = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(object) => {
                if object
                    .get("format")
                    .and_then(Value::as_str)
                    .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
                {
                    object.remove("format");
                }
                if let Some(Value::Object(properties)) =
                    object.get_mut("properties").filter(|_| one_based_lines)
                {
                    for (name, property) in properties.iter_mut() {
                        let one_based = if name == "line" || name.ends_with("_line") {
                            Some(&mut *property)
                        } else if name == "lines" {
                            property.get_mut("items")
                        } else {
                            None
                        };
                        if let Some(Value::Object(target)) = one_based {
                            let integer = match target.get("type") {
                                Some(Value::String(kind)) => kind == "integer",
                                Some(Value::Array(kinds)) => {
                                    kinds.iter().any(|kind| kind == "integer")
                                }
                                _ => false,
                            };
                            if integer {
                                target.insert("minimum".into(), Value::from(1));
                            }
                        }
                    }
                }
                stack.extend(object.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}
