//! An MCP server over newline-delimited JSON-RPC (stdio in `cc-harness mcp`).
//!
//! One connection is one run: the registry is built once the client has said who it is
//! (`initialize`), so tools that depend on a client capability (elicitation) can be wired.
//! Requests are handled concurrently; `notifications/cancelled` aborts one. When the input
//! ends, calls still running get a short grace, then the run's resources are shut down
//! (every process group they started is ended) and [`serve`] returns.

pub mod approval;
mod render;
pub mod transport;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use cc_tools::{CallOptions, ProgressSink, Registry, Tier, ToolSchema};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use transport::{codes, Peer, RpcError};

/// Protocol revisions we speak, newest first.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How `serve` ends a connection.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// How long calls still running when the input ends may take to finish.
    pub drain_grace: Duration,
    /// How long the run's resources may take to shut down.
    pub shutdown_grace: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            drain_grace: Duration::from_millis(1500),
            shutdown_grace: Duration::from_millis(2500),
        }
    }
}

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
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outgoing, queue) = mpsc::unbounded_channel();
    let writer_task = tokio::spawn(transport::write_loop(writer, queue));
    let peer = Peer::new(outgoing);
    let mut session = Session {
        peer: peer.clone(),
        factory,
        registry: None,
        calls: JoinSet::new(),
        in_flight: HashMap::new(),
    };

    let mut lines = BufReader::new(reader).lines();
    loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => session.handle_line(&line),
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(%error, "reading the MCP input failed; closing");
                    break;
                }
            },
            Some(done) = session.calls.join_next_with_id(), if !session.calls.is_empty() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(error) => error.id(),
                };
                session.in_flight.retain(|_, handle| handle.id() != id);
            }
        }
    }

    // Input ended: let calls finish briefly, then end everything the run started.
    let drained = tokio::time::timeout(options.drain_grace, async {
        while session.calls.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        session.calls.abort_all();
        while session.calls.join_next().await.is_some() {}
    }
    if let Some(registry) = session.registry.take() {
        registry.shutdown(options.shutdown_grace).await;
    }
    peer.close();
    drop(session);
    drop(peer);
    match tokio::time::timeout(Duration::from_secs(1), writer_task).await {
        Ok(Ok(result)) => result,
        Ok(Err(join_error)) => Err(std::io::Error::other(join_error)),
        Err(_elapsed) => Ok(()),
    }
}

struct Session {
    peer: Arc<Peer>,
    factory: RegistryFactory,
    registry: Option<Registry>,
    calls: JoinSet<()>,
    /// Request id (as JSON text) to the task handling it, for cancellation.
    in_flight: HashMap<String, AbortHandle>,
}

impl Session {
    fn handle_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let message: Value = match serde_json::from_str(line) {
            Ok(message) => message,
            Err(error) => {
                self.peer.respond(
                    Value::Null,
                    Err(RpcError::new(
                        codes::PARSE_ERROR,
                        format!("the line is not JSON: {error}"),
                    )),
                );
                return;
            }
        };
        let Value::Object(object) = &message else {
            self.peer.respond(
                Value::Null,
                Err(RpcError::new(
                    codes::INVALID_REQUEST,
                    "expected one JSON-RPC message object per line (batches are not supported)",
                )),
            );
            return;
        };
        let id = object.get("id").cloned();
        let method = object.get("method").and_then(Value::as_str);
        match (method, id) {
            (Some(method), Some(id)) => {
                let params = object.get("params").cloned().unwrap_or(Value::Null);
                self.handle_request(method, id, params);
            }
            (Some(method), None) => {
                let params = object.get("params").cloned().unwrap_or(Value::Null);
                self.handle_notification(method, &params);
            }
            (None, Some(_)) => self.peer.deliver_response(&message),
            (None, None) => self.peer.respond(
                Value::Null,
                Err(RpcError::new(
                    codes::INVALID_REQUEST,
                    "a message needs a `method` (request or notification) or an `id` (response)",
                )),
            ),
        }
    }

    fn registry(&mut self) -> Registry {
        if let Some(registry) = &self.registry {
            return registry.clone();
        }
        let registry = (self.factory)(self.peer.clone());
        self.registry = Some(registry.clone());
        registry
    }

    fn handle_request(&mut self, method: &str, id: Value, params: Value) {
        match method {
            "initialize" => {
                let capabilities = params.get("capabilities").cloned().unwrap_or(json!({}));
                self.peer.set_client_capabilities(capabilities);
                let requested = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or(PROTOCOL_VERSIONS[0]);
                let version = PROTOCOL_VERSIONS
                    .iter()
                    .find(|known| **known == requested)
                    .copied()
                    .unwrap_or(PROTOCOL_VERSIONS[0]);
                let registry = self.registry();
                let run = registry.run();
                self.peer.respond(
                    id,
                    Ok(json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": false}},
                        "serverInfo": {"name": "cc-harness", "version": env!("CARGO_PKG_VERSION")},
                        "instructions": format!(
                            "Code-intelligence tools for the workspace at {} ({} surface). Paths \
                             are relative to that root.",
                            run.root.path().display(), run.surface
                        ),
                    })),
                );
            }
            "ping" => self.peer.respond(id, Ok(json!({}))),
            "tools/list" => {
                let registry = self.registry();
                let surface = registry.run().surface;
                let tools: Vec<Value> =
                    registry.schemas(surface).iter().map(tool_listing).collect();
                self.peer.respond(id, Ok(json!({ "tools": tools })));
            }
            "tools/call" => {
                let registry = self.registry();
                let peer = self.peer.clone();
                let key = id.to_string();
                let handle = self.calls.spawn(async move {
                    let result = call_tool(&registry, &peer, params).await;
                    peer.respond(id, result);
                });
                self.in_flight.insert(key, handle);
            }
            other => self.peer.respond(
                id,
                Err(RpcError::new(
                    codes::METHOD_NOT_FOUND,
                    format!("method `{other}` is not supported by cc-harness"),
                )),
            ),
        }
    }

    fn handle_notification(&mut self, method: &str, params: &Value) {
        match method {
            "notifications/cancelled" => {
                let Some(request) = params.get("requestId") else {
                    return;
                };
                if let Some(handle) = self.in_flight.remove(&request.to_string()) {
                    // Dropping the call's future kills whatever it started (kill on drop).
                    handle.abort();
                }
            }
            "notifications/initialized" | "notifications/roots/list_changed" => {}
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }
}

fn tool_listing(schema: &ToolSchema) -> Value {
    let read_only = schema.tier == Tier::Read;
    json!({
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
    })
}

struct McpProgress {
    peer: Arc<Peer>,
    token: Value,
}

impl ProgressSink for McpProgress {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let mut params = json!({"progressToken": self.token, "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.peer.notify("notifications/progress", params);
    }
}

async fn call_tool(
    registry: &Registry,
    peer: &Arc<Peer>,
    params: Value,
) -> Result<Value, RpcError> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::new(
            codes::INVALID_PARAMS,
            "tools/call needs a string `name`",
        ));
    };
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    let progress = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .cloned()
        .map(|token| {
            Arc::new(McpProgress {
                peer: peer.clone(),
                token,
            }) as Arc<dyn ProgressSink>
        });
    let result = registry
        .call_with(
            name,
            arguments,
            CallOptions {
                progress,
                ..CallOptions::default()
            },
        )
        .await;
    Ok(render::call_result(result))
}
