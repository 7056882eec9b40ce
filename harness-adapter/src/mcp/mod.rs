//! The MCP server: a [`rmcp::ServerHandler`] over the tool registry, on rmcp (the official
//! Rust SDK) through our line transport ([`transport`]).
//!
//! One connection is one run: the registry is built once the client has said who it is
//! (`initialize`), so tools that depend on a client capability (elicitation) can be wired.
//! rmcp negotiates the protocol version, serves requests concurrently, routes the client's
//! answers to our requests ([`peer`]) and, on `notifications/cancelled`, cancels the call's
//! token and drops its response, as MCP asks. The token fires the call's
//! [`cc_tools::Cancellation`] (a cell is interrupted, a search stops walking); if the call
//! has not stopped within [`ServeOptions::cancel_grace`], its future is dropped (which kills
//! whatever it started). When the input ends, calls in flight get a short grace, are then
//! cancelled and then dropped, the run's resources are shut down (every process group they
//! started is ended) and [`serve`] returns, within about 4 s whatever a tool is doing.

pub mod approval;
pub mod peer;
mod render;
pub mod transport;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use cc_process::lock;
use cc_tools::{CallOptions, Cancellation, ProgressSink, Registry, Tier, ToolSchema};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use peer::Peer;
use render::CallResult;
use transport::{LineTransport, Spools};

pub use transport::MAX_LINE_BYTES;

/// Protocol revisions we speak, newest first. Not 2026-07-28: it has no server-to-client
/// requests, and `ask_user` and bridge approval elicit.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// [`PROTOCOL_VERSIONS`] as rmcp's values.
static SUPPORTED: [ProtocolVersion; 4] = [
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// How `serve` ends a connection.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// How long calls still running when the input ends may take to finish.
    pub drain_grace: Duration,
    /// How long the run's resources may take to shut down.
    pub shutdown_grace: Duration,
    /// How long a cancelled call may take to stop by itself before its future is aborted.
    pub cancel_grace: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            drain_grace: Duration::from_millis(1000),
            shutdown_grace: Duration::from_millis(2000),
            cancel_grace: Duration::from_secs(10),
        }
    }
}

/// How long aborted calls get to unwind, and the writer to flush, at the end.
const UNWIND_WAIT: Duration = Duration::from_millis(500);

/// Builds the run's registry once the client's capabilities are known.
pub type RegistryFactory = Box<dyn Fn(Arc<Peer>) -> Registry + Send>;

/// Serves one MCP connection until its input ends.
pub async fn serve<R, W>(
    reader: R,
    writer: W,
    options: ServeOptions,
    factory: RegistryFactory,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, queue) = mpsc::unbounded_channel();
    let writer_task = tokio::spawn(transport::write_loop(writer, queue));
    let spools = Arc::new(Spools::default());
    let (transport, mut ended) = LineTransport::new(reader, out, spools.clone());
    let calls = Arc::new(Calls::default());
    let registry = Arc::new(OnceLock::new());
    let front = Front {
        factory: Mutex::new(factory),
        registry: registry.clone(),
        calls: calls.clone(),
        spools: spools.clone(),
        cancel_grace: options.cancel_grace,
    };
    match front.serve(transport).await {
        Ok(running) => {
            ended.wait().await;
            // A client may close its side and still read the answers (`echo … | mcp`), so
            // calls in flight get `drain_grace` to finish; those still running are then
            // cancelled, and dropped if they do not stop, keeping the end within seconds.
            if !calls.settle(options.drain_grace).await {
                calls.cancel_all();
                if !calls.settle(UNWIND_WAIT).await {
                    calls.abort.cancel();
                    // A call stuck in a blocking system call cannot be unwound; it is left.
                    calls.settle(UNWIND_WAIT).await;
                }
            }
            // rmcp writes the responses still queued, then closes the transport.
            let _ = tokio::time::timeout(UNWIND_WAIT, running.cancel()).await;
        }
        // The input ended before any message: nothing to serve.
        Err(error) => tracing::debug!(%error, "the MCP session did not begin"),
    }
    if let Some(registry) = registry.get() {
        registry.shutdown(options.shutdown_grace).await;
    }
    spools.clear();
    match tokio::time::timeout(UNWIND_WAIT, writer_task).await {
        Ok(Ok(result)) => result,
        Ok(Err(join_error)) => Err(std::io::Error::other(join_error)),
        Err(_elapsed) => Ok(()),
    }
}

/// The calls in flight, so the end of input can cancel and then drop them.
#[derive(Debug)]
struct Calls {
    next: AtomicU64,
    live: Mutex<HashMap<u64, Cancellation>>,
    count: watch::Sender<usize>,
    /// Drops every call's future.
    abort: CancellationToken,
}

impl Default for Calls {
    fn default() -> Self {
        Calls {
            next: AtomicU64::new(0),
            live: Mutex::default(),
            count: watch::channel(0).0,
            abort: CancellationToken::new(),
        }
    }
}

impl Calls {
    fn start(self: &Arc<Self>, cancel: Cancellation) -> LiveCall {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.live).insert(key, cancel);
        self.count.send_modify(|count| *count += 1);
        LiveCall {
            calls: self.clone(),
            key,
        }
    }

    /// Whether every call ended within `within`.
    async fn settle(&self, within: Duration) -> bool {
        let mut count = self.count.subscribe();
        let settled = tokio::time::timeout(within, count.wait_for(|count| *count == 0))
            .await
            .is_ok();
        settled
    }

    fn cancel_all(&self) {
        for cancel in lock(&self.live).values() {
            cancel.cancel();
        }
    }
}

/// A call in flight; it leaves [`Calls`] when dropped.
struct LiveCall {
    calls: Arc<Calls>,
    key: u64,
}

impl Drop for LiveCall {
    fn drop(&mut self) {
        lock(&self.calls.live).remove(&self.key);
        self.calls
            .count
            .send_modify(|count| *count = count.saturating_sub(1));
    }
}

/// The rmcp server handler: the registry's tools, served.
struct Front {
    /// Behind a lock only because the factory is `Send` but not `Sync`.
    factory: Mutex<RegistryFactory>,
    registry: Arc<OnceLock<Registry>>,
    calls: Arc<Calls>,
    spools: Arc<Spools>,
    cancel_grace: Duration,
}

impl Front {
    /// The run's registry, built on the first `initialize` for the client it declared.
    fn registry_for(&self, peer: &rmcp::Peer<RoleServer>, capabilities: Value) -> Registry {
        self.registry
            .get_or_init(|| {
                let peer = Arc::new(Peer::new(peer.clone(), capabilities));
                let factory = lock(&self.factory);
                factory(peer)
            })
            .clone()
    }

    fn registry(&self) -> Result<Registry, ErrorData> {
        self.registry.get().cloned().ok_or_else(|| {
            ErrorData::internal_error("the run has not been set up (no initialize yet)", None)
        })
    }
}

fn invalid_result(error: serde_json::Error) -> ErrorData {
    ErrorData::internal_error(format!("the result could not be encoded: {error}"), None)
}

impl ServerHandler for Front {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": PROTOCOL_VERSIONS[0],
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "cc-harness", "version": env!("CARGO_PKG_VERSION")},
        });
        serde_json::from_value(info).unwrap_or_else(|error| {
            tracing::warn!(%error, "the server info could not be built");
            InitializeResult::new(Default::default())
        })
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&SUPPORTED)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let capabilities = serde_json::to_value(&request.capabilities).unwrap_or(Value::Null);
        let registry = self.registry_for(&context.peer, capabilities);
        let mut result = self.negotiate_initialize(&request)?;
        let run = registry.run();
        result.instructions = Some(format!(
            "Code-intelligence tools for the workspace at {} ({} surface). Paths are relative \
             to that root.",
            run.root.path().display(),
            run.surface
        ));
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let registry = self.registry()?;
        let surface = registry.run().surface;
        let tools: Vec<Value> = registry.schemas(surface).iter().map(tool_listing).collect();
        serde_json::from_value(json!({ "tools": tools })).map_err(invalid_result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let registry = self.registry()?;
        let arguments = request.arguments.map_or_else(|| json!({}), Value::Object);
        let cancel = Cancellation::new();
        let _live = self.calls.start(cancel.clone());
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| Progress::start(context.peer.clone(), token));
        // Spooled: a huge result (every match of a search) is copied to the client from its
        // spool as the response is written, never held as a `Value`.
        let call = registry.call_spooled(
            &request.name,
            arguments,
            CallOptions {
                progress: progress.as_ref().map(Progress::sink),
                cancel: Some(cancel.clone()),
            },
        );
        let (token, grace, abort) = (&context.ct, self.cancel_grace, &self.calls.abort);
        let outcome = tokio::select! {
            biased;
            result = call => Some(result),
            // The client cancelled (rmcp fired the token and will not send the response):
            // ask the call to stop, then drop it if it has not within the grace.
            () = async {
                token.cancelled().await;
                cancel.cancel();
                tokio::time::sleep(grace).await;
            } => None,
            () = abort.cancelled() => None,
        };
        if let Some(progress) = progress {
            progress.finish().await;
        }
        let Some(result) = outcome else {
            return Err(ErrorData::internal_error(
                "the call was cancelled and did not stop in time, so it was aborted",
                None,
            ));
        };
        let result: CallToolResult = match render::call_result(result) {
            CallResult::Value(value) => serde_json::from_value(value).map_err(invalid_result)?,
            // rmcp drops the response of a call the client cancelled: park nothing for it.
            _ if context.ct.is_cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
            spooled => {
                let marker = self.spools.park(spooled);
                serde_json::from_value(json!({"content": [], "structuredContent": marker}))
                    .map_err(invalid_result)?
            }
        };
        Ok(CallToolResponse::Complete(result))
    }
}

fn tool_listing(schema: &ToolSchema) -> Value {
    let read_only = schema.tier == Tier::Read;
    let mut listing = json!({
        "name": schema.name,
        "description": schema.description,
        "inputSchema": schema.input_schema,
        "annotations": {
            "title": schema.name,
            "readOnlyHint": read_only,
            "destructiveHint": !read_only,
            "openWorldHint": false,
        },
        "_meta": {"tier": schema.tier.as_str(), "parallelSafe": schema.parallel_safe},
    });
    // A client checks each result's `structuredContent` against it.
    if let Some(output) = &schema.output_schema {
        listing["outputSchema"] = output.clone();
    }
    listing
}

/// One progress report, or the end of the call.
type Report = Option<(f64, Option<f64>, Option<String>)>;

/// A call's progress, sent in order through rmcp's peer, all before the call's response.
struct Progress {
    sender: mpsc::UnboundedSender<Report>,
    forwarder: tokio::task::JoinHandle<()>,
}

struct McpProgress(mpsc::UnboundedSender<Report>);

impl ProgressSink for McpProgress {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let _ = self
            .0
            .send(Some((progress, total, message.map(str::to_owned))));
    }
}

impl Progress {
    fn start(peer: rmcp::Peer<RoleServer>, token: ProgressToken) -> Self {
        let (sender, mut reports) = mpsc::unbounded_channel::<Report>();
        let forwarder = tokio::spawn(async move {
            while let Some(Some((progress, total, message))) = reports.recv().await {
                let mut params = json!({"progressToken": token, "progress": progress});
                if let Some(total) = total {
                    params["total"] = json!(total);
                }
                if let Some(message) = message {
                    params["message"] = json!(message);
                }
                match serde_json::from_value::<ProgressNotificationParam>(params) {
                    Ok(params) => {
                        if peer.notify_progress(params).await.is_err() {
                            break;
                        }
                    }
                    Err(error) => tracing::warn!(%error, "a progress report could not be built"),
                }
            }
        });
        Progress { sender, forwarder }
    }

    fn sink(&self) -> Arc<dyn ProgressSink> {
        Arc::new(McpProgress(self.sender.clone()))
    }

    /// Sends what was reported, before the response goes out.
    async fn finish(mut self) {
        let _ = self.sender.send(None);
        if tokio::time::timeout(UNWIND_WAIT, &mut self.forwarder)
            .await
            .is_err()
        {
            // Reports left unsent by then are dropped: none may follow the response.
            self.forwarder.abort();
        }
    }
}
