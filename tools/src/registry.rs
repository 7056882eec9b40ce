//! The registry: the tools wired for one run, and the single dispatch path every call takes.
//!
//! Dispatch, in order: look the tool up; refuse it when its tier is hidden on the run's
//! surface; ask the run's approver for write- and exec-tier calls (model and bridge alike);
//! serialize calls of tools that are not parallel-safe; run it; hand the paths it wrote to the
//! run's diagnostics hook and attach what comes back; for a call the model made, hand over the
//! run's queued notices ([`crate::notices`]: recoveries of interrupted commits among them).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use crate::approve::{Approval, ApprovalRequest, Approver};
use crate::error::{ErrorKind, ToolError};
use crate::notices::{self, Notices};
use crate::report::{Render, WriteReport};
use crate::root::WorkspaceRoot;
use crate::tier::{Surface, Tier};
use crate::tool::{CallContext, Origin, ProgressSink, Reenter, Tool, ToolOutput};

/// One conversation: its workspace root, the surface it sees, and its approver.
#[derive(Clone)]
pub struct Run {
    /// Identifies the conversation (per-run state such as debug sessions is keyed by it).
    pub conversation_id: String,
    /// Every path argument must resolve inside it.
    pub root: WorkspaceRoot,
    /// Which tiers the agent sees.
    pub surface: Surface,
    /// Decides each write- and exec-tier call.
    pub approver: Arc<dyn Approver>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("conversation_id", &self.conversation_id)
            .field("root", &self.root)
            .field("surface", &self.surface)
            .finish_non_exhaustive()
    }
}

/// A file a call is about to write: where, and its new content (`None`: it is deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWrite {
    /// Absolute path.
    pub path: PathBuf,
    /// The bytes it will hold.
    pub content: Option<Vec<u8>>,
}

/// Syncs written files through whatever checks them (language servers) and returns what to
/// attach to the writing tool's result under `"diagnostics"`.
///
/// A writer calls [`AfterWrite::before_write`] with what it is about to write, then writes,
/// then [`AfterWrite::after_write`] with what it wrote. Tools of the registry do this through
/// [`crate::CallContext::before_write`]; the registry makes the second call. A host writing
/// files itself calls both.
#[async_trait]
pub trait AfterWrite: Send + Sync {
    /// Called before a call writes: lets the hook record the state the write starts from
    /// (the diagnostics files already have, so that only what the write adds is new).
    async fn before_write(&self, _planned: &[PlannedWrite]) {}

    /// Called after a call renamed the symbol `old` to `new` across files, before
    /// [`AfterWrite::after_write`]: diagnostics that named `old` now name `new` and are not
    /// new for that.
    async fn renamed(&self, _old: &str, _new: &str) {}

    /// Called after a call wrote `paths` (absolute). An empty report: nothing checked them
    /// (a hook that only keeps an index current), so nothing is attached.
    async fn after_write(&self, paths: &[PathBuf]) -> WriteReport;
}

/// Something the run must stop when it ends (servers, adapters, kernels, workers).
#[async_trait]
pub trait Shutdown: Send + Sync {
    /// Ends every process the resource started. Must finish within a few seconds.
    async fn shutdown(&self);
}

/// A tool as the agent sees it in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSchema {
    /// The name to call.
    pub name: String,
    /// `read`, `write` or `exec`.
    pub tier: Tier,
    /// What it does.
    pub description: String,
    /// JSON schema of its arguments.
    pub input_schema: Value,
    /// Whether calls may overlap.
    pub parallel_safe: bool,
    /// JSON schema of a successful result, when the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

struct Entry {
    tool: Arc<dyn Tool>,
    /// Present for tools that are not parallel-safe.
    serial: Option<tokio::sync::Mutex<()>>,
}

struct Inner {
    run: Run,
    order: Vec<String>,
    tools: HashMap<String, Entry>,
    after_write: Option<Arc<dyn AfterWrite>>,
    shutdown: Vec<Arc<dyn Shutdown>>,
    notices: Notices,
}

/// The tools of one run. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("run", &self.inner.run)
            .field("tools", &self.inner.order)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Registry`]; each resource that is wired for the run registers its tools.
pub struct RegistryBuilder {
    run: Run,
    order: Vec<String>,
    tools: HashMap<String, Entry>,
    after_write: Option<Arc<dyn AfterWrite>>,
    shutdown: Vec<Arc<dyn Shutdown>>,
    notices: Notices,
}

impl std::fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryBuilder")
            .field("run", &self.run)
            .field("tools", &self.order)
            .finish_non_exhaustive()
    }
}

impl RegistryBuilder {
    /// An empty registry for `run`.
    pub fn new(run: Run) -> Self {
        RegistryBuilder {
            run,
            order: Vec::new(),
            tools: HashMap::new(),
            after_write: None,
            shutdown: Vec::new(),
            notices: Notices::new(),
        }
    }

    /// The run being wired.
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// The run's notices: what is pushed now goes out with the first result.
    pub fn notices(&self) -> &Notices {
        &self.notices
    }

    /// Registers a tool. A later tool with the same name replaces the earlier one (a host
    /// may override a built-in).
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.add_tool(tool);
        self
    }

    /// Registers a tool in place.
    pub fn add_tool(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.name().to_owned();
        let serial = (!tool.parallel_safe()).then(|| tokio::sync::Mutex::new(()));
        if self
            .tools
            .insert(name.clone(), Entry { tool, serial })
            .is_none()
        {
            self.order.push(name);
        }
    }

    /// Sets the hook that checks written files.
    pub fn after_write(mut self, hook: Arc<dyn AfterWrite>) -> Self {
        self.after_write = Some(hook);
        self
    }

    /// Adds something to stop when the run ends.
    pub fn on_shutdown(mut self, resource: Arc<dyn Shutdown>) -> Self {
        self.shutdown.push(resource);
        self
    }

    /// Adds something to stop when the run ends, in place.
    pub fn add_shutdown(&mut self, resource: Arc<dyn Shutdown>) {
        self.shutdown.push(resource);
    }

    /// Finishes the registry.
    pub fn build(self) -> Registry {
        Registry {
            inner: Arc::new(Inner {
                run: self.run,
                order: self.order,
                tools: self.tools,
                after_write: self.after_write,
                shutdown: self.shutdown,
                notices: self.notices,
            }),
        }
    }
}

/// Options of one dispatch.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Where progress goes, when the caller listens.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Fired by the caller to cancel the call (MCP `notifications/cancelled`).
    pub cancel: Option<crate::Cancellation>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel.is_some())
            .finish()
    }
}

impl Registry {
    /// The run this registry serves.
    pub fn run(&self) -> &Run {
        &self.inner.run
    }

    /// The run's notices ([`crate::notices`]): pushed ones go out with the next result of a
    /// call the model makes.
    pub fn notices(&self) -> &Notices {
        &self.inner.notices
    }

    /// The hook that checks written files, for a host that writes files itself: call it
    /// after the host's own write, edit or patch and attach what it returns.
    pub fn after_write_hook(&self) -> Option<Arc<dyn AfterWrite>> {
        self.inner.after_write.clone()
    }

    /// Names of every registered tool, in registration order, whatever the surface.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.order.clone()
    }

    /// The tools `surface` may see, in registration order.
    pub fn schemas(&self, surface: Surface) -> Vec<ToolSchema> {
        self.inner
            .order
            .iter()
            .filter_map(|name| self.inner.tools.get(name))
            .filter(|entry| surface.allows(entry.tool.tier()))
            .map(|entry| ToolSchema {
                name: entry.tool.name().to_owned(),
                tier: entry.tool.tier(),
                description: entry.tool.description().to_owned(),
                input_schema: entry.tool.input_schema(),
                parallel_safe: entry.tool.parallel_safe(),
                output_schema: entry.tool.output_schema(),
            })
            .collect()
    }

    /// Calls a tool on behalf of the model.
    pub async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.call_with(name, args, CallOptions::default()).await
    }

    /// Calls a tool on behalf of the model, with options.
    pub async fn call_with(
        &self,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        materialized(self.call_spooled(name, args, options).await)
    }

    /// Like [`Registry::call_with`], but a result the tool spooled stays spooled
    /// ([`ToolOutput::spooled`]): for a caller that writes the result out
    /// ([`ToolOutput::json_pieces`]) rather than reading `value`, so that a huge result is
    /// never held as a `Value`.
    pub async fn call_spooled(
        &self,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        dispatch(
            &self.inner,
            name,
            args,
            Origin::Model,
            options.progress,
            Arc::new(Vec::new()),
            options.cancel.unwrap_or_default(),
        )
        .await
    }

    /// Ends every process the run's resources started, each within `grace`.
    pub async fn shutdown(&self, grace: Duration) {
        let stops = self.inner.shutdown.iter().map(|resource| {
            let resource = resource.clone();
            async move {
                if tokio::time::timeout(grace, resource.shutdown())
                    .await
                    .is_err()
                {
                    tracing::warn!("a resource did not shut down within {grace:?}");
                }
            }
        });
        futures_join_all(stops).await;
        self.inner.run.root.stop_watching();
    }
}

/// Joins futures without pulling in the `futures` crate.
async fn futures_join_all<F: std::future::Future<Output = ()> + Send + 'static>(
    futures: impl Iterator<Item = F>,
) {
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    for handle in handles {
        if let Err(error) = handle.await {
            tracing::warn!(%error, "shutdown task failed");
        }
    }
}

/// Re-enters the registry from inside a call. Holds a weak reference: a call context never
/// keeps a finished run alive.
struct Dispatcher {
    inner: Weak<Inner>,
}

#[async_trait::async_trait]
impl Reenter for Dispatcher {
    async fn bridge_call(
        &self,
        caller: &CallContext,
        name: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        let inner = self.inner.upgrade().ok_or_else(|| {
            ToolError::new(
                ErrorKind::NotAvailable,
                "the run has ended; no further tool calls are possible",
            )
        })?;
        materialized(
            dispatch(
                &inner,
                name,
                args,
                Origin::Bridge {
                    via: caller.tool.clone(),
                },
                None,
                caller.held.clone(),
                caller.cancel.clone(),
            )
            .await,
        )
    }
}

/// The output with its spooled members parsed into `value`.
fn materialized(output: Result<ToolOutput, ToolError>) -> Result<ToolOutput, ToolError> {
    let mut output = output?;
    output.materialize().map_err(|error| {
        ToolError::new(
            ErrorKind::Internal,
            format!("the result could not be read back from its spool: {error}"),
        )
    })?;
    Ok(output)
}

/// One call, then the run's notices for a call the model made (a bridge call's result goes
/// to the code that made it, which may never show it).
async fn dispatch(
    inner: &Arc<Inner>,
    name: &str,
    args: Value,
    origin: Origin,
    progress: Option<Arc<dyn ProgressSink>>,
    held: Arc<Vec<String>>,
    cancel: crate::Cancellation,
) -> Result<ToolOutput, ToolError> {
    let model = matches!(origin, Origin::Model);
    let result = dispatch_call(inner, name, args, origin, progress, held, cancel).await;
    if !model {
        return result;
    }
    // Recoveries that commits did before committing (a process that died meanwhile).
    let root = &inner.run.root;
    notices::push_recoveries(&inner.notices, root, &root.workspace().take_recoveries());
    let queued = inner.notices.drain();
    match result {
        Ok(mut output) => {
            notices::attach(&mut output, &queued);
            Ok(output)
        }
        Err(error) => Err(notices::attach_to_error(error, &queued)),
    }
}

async fn dispatch_call(
    inner: &Arc<Inner>,
    name: &str,
    args: Value,
    origin: Origin,
    progress: Option<Arc<dyn ProgressSink>>,
    held: Arc<Vec<String>>,
    cancel: crate::Cancellation,
) -> Result<ToolOutput, ToolError> {
    let run = &inner.run;
    let entry = inner
        .tools
        .get(name)
        .ok_or_else(|| unknown_tool(inner, name))?;
    admit(run, name, entry.tool.tier(), &args, &origin).await?;

    let _serial_guard = match &entry.serial {
        Some(mutex) => {
            if held.iter().any(|held_name| held_name == name) {
                return Err(ToolError::new(
                    ErrorKind::Reentrant,
                    format!(
                        "`{name}` cannot be called from inside a `{name}` call: its calls are \
                         serialized and the outer one is still running"
                    ),
                ));
            }
            // A call cancelled while it waits for the one before it never starts.
            tokio::select! {
                guard = mutex.lock() => Some(guard),
                () = cancel.cancelled() => return Err(cancelled(name)),
            }
        }
        None => None,
    };
    if cancel.is_cancelled() {
        return Err(cancelled(name));
    }
    let held = if entry.serial.is_some() {
        let mut chain = (*held).clone();
        chain.push(name.to_owned());
        Arc::new(chain)
    } else {
        held
    };
    let ctx = CallContext {
        origin,
        dispatcher: Arc::new(Dispatcher {
            inner: Arc::downgrade(inner),
        }),
        progress,
        tool: name.to_owned(),
        held,
        cancel,
        after_write: inner.after_write.clone(),
        notices: inner.notices.clone(),
    };
    let mut output = entry.tool.call(&ctx, args).await?;
    if let Some(hook) = inner
        .after_write
        .as_ref()
        .filter(|_| !output.written.is_empty())
    {
        let report = hook.after_write(&output.written).await;
        attach_write_report(&mut output, report);
    }
    Ok(output)
}

/// Whether the run lets the call through: the tool's tier on this surface, an object of
/// arguments, and (for a tool that is not read-only) the approver.
async fn admit(
    run: &Run,
    name: &str,
    tier: Tier,
    args: &Value,
    origin: &Origin,
) -> Result<(), ToolError> {
    if !run.surface.allows(tier) {
        return Err(ToolError::new(
            ErrorKind::NotAvailable,
            format!(
                "tool `{name}` is not available on the {} surface: it is {tier}-tier and this \
                 surface sees read-tier tools only",
                run.surface
            ),
        )
        .with_detail("tier", tier.as_str())
        .with_detail("surface", run.surface.as_str()));
    }
    if !args.is_object() && !args.is_null() {
        return Err(ToolError::invalid_arguments(format!(
            "arguments of `{name}` must be a JSON object, got {}",
            json_type_name(args)
        )));
    }
    if tier != Tier::Read {
        let request = ApprovalRequest {
            conversation_id: &run.conversation_id,
            tool: name,
            tier,
            args,
            origin,
        };
        if let Approval::Deny { reason } = run.approver.approve(request).await {
            return Err(ToolError::new(
                ErrorKind::Denied,
                format!("the call of `{name}` was not approved: {reason}"),
            ));
        }
    }
    Ok(())
}

/// What the after-write hooks found, attached to a writing call's result: as
/// `diagnostics` and, since agents often read only the text, as its last lines. An empty
/// report (nothing checked the files) attaches nothing.
fn attach_write_report(output: &mut ToolOutput, report: WriteReport) {
    if report.is_empty() {
        return;
    }
    if let Some(text) = &mut output.text {
        text.push('\n');
        text.push_str(&report.render());
    }
    if let Value::Object(object) = &mut output.value {
        object.insert(
            "diagnostics".into(),
            serde_json::to_value(&report).unwrap_or_default(),
        );
    }
}

/// The error of a call cancelled before it started.
fn cancelled(name: &str) -> ToolError {
    ToolError::new(
        ErrorKind::Cancelled,
        format!("the call of `{name}` was cancelled before it started"),
    )
}

fn unknown_tool(inner: &Inner, name: &str) -> ToolError {
    let visible: Vec<&str> = inner
        .order
        .iter()
        .filter(|candidate| {
            inner
                .tools
                .get(candidate.as_str())
                .is_some_and(|entry| inner.run.surface.allows(entry.tool.tier()))
        })
        .map(String::as_str)
        .collect();
    ToolError::new(
        ErrorKind::UnknownTool,
        format!(
            "no tool named `{name}` in this run; available: {}",
            visible.join(", ")
        ),
    )
}

fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
