//! An MCP server over newline-delimited JSON-RPC (stdio in `cc-harness mcp`).
//!
//! One connection is one run: the registry is built once the client has said who it is
//! (`initialize`), so tools that depend on a client capability (elicitation) can be wired.
//! Requests are handled concurrently. No input ends the run: a line that is not UTF-8 or not
//! JSON gets -32700, a message that is not a request -32600, and the next line is read; ids
//! are echoed exactly as written.
//!
//! `notifications/cancelled` fires the call's [`cc_tools::Cancellation`] (a cell is
//! interrupted, a search stops walking) and its response is not sent, as MCP asks; if the
//! call has not stopped within [`ServeOptions::cancel_grace`], its future is aborted
//! (dropping it kills whatever it started). When the input ends, every call is cancelled and
//! gets a short grace, then the run's resources are shut down (every process group they
//! started is ended) and [`serve`] returns, within about 4 s whatever a tool is doing.

pub mod approval;
mod render;
pub mod transport;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cc_tools::{CallOptions, Cancellation, ProgressSink, Registry, Tier, ToolSchema};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use render::CallResult;
use transport::{codes, LineSplitter, Peer, Piece, RequestId, RpcError};

/// Protocol revisions we speak, newest first.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The longest input line read (a `write` of 16 MiB, JSON-escaped, fits); a longer one is
/// skipped and answered with -32700.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

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
    mut reader: R,
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
        cancel_grace: options.cancel_grace,
    };

    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut pieces = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        tokio::select! {
            read = reader.read(&mut buffer) => {
                match read {
                    Ok(0) => {
                        splitter.finish(&mut pieces);
                        session.handle_pieces(&mut pieces);
                        break;
                    }
                    Ok(n) => {
                        splitter.feed(&buffer[..n], &mut pieces);
                        session.handle_pieces(&mut pieces);
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => {
                        tracing::warn!(%error, "reading the MCP input failed; closing");
                        break;
                    }
                }
            },
            Some(done) = session.calls.join_next_with_id(), if !session.calls.is_empty() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(error) => error.id(),
                };
                session.in_flight.retain(|_, call| call.handle.id() != id);
            }
        }
    }

    // Input ended. A client may close its side and still read the answers (`echo … | mcp`), so
    // calls in flight get `drain_grace` to finish; those still running are then cancelled, and
    // aborted if they do not stop, keeping the whole end within a few seconds.
    let drained = tokio::time::timeout(options.drain_grace, async {
        while session.calls.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        for call in session.in_flight.values() {
            call.cancel.cancel();
        }
        let stopped = tokio::time::timeout(UNWIND_WAIT, async {
            while session.calls.join_next().await.is_some() {}
        })
        .await;
        if stopped.is_err() {
            session.calls.abort_all();
            // A call stuck in a blocking system call cannot be unwound; it is left behind.
            let _ = tokio::time::timeout(UNWIND_WAIT, async {
                while session.calls.join_next().await.is_some() {}
            })
            .await;
        }
    }
    if let Some(registry) = session.registry.take() {
        registry.shutdown(options.shutdown_grace).await;
    }
    peer.close();
    drop(session);
    drop(peer);
    match tokio::time::timeout(UNWIND_WAIT, writer_task).await {
        Ok(Ok(result)) => result,
        Ok(Err(join_error)) => Err(std::io::Error::other(join_error)),
        Err(_elapsed) => Ok(()),
    }
}

/// A call being served.
struct InFlight {
    handle: AbortHandle,
    cancel: Cancellation,
    /// Set when the client cancelled it: its response is then not sent.
    cancelled: Arc<AtomicBool>,
}

struct Session {
    peer: Arc<Peer>,
    factory: RegistryFactory,
    registry: Option<Registry>,
    calls: JoinSet<()>,
    /// Request id (its JSON text) to the call handling it, for cancellation.
    in_flight: HashMap<String, InFlight>,
    cancel_grace: Duration,
}

/// The fields of a message, with the id and the params kept raw.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// The params of `notifications/cancelled`.
#[derive(Deserialize)]
struct CancelParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: &'a RawValue,
}

impl Session {
    fn handle_pieces(&mut self, pieces: &mut Vec<Piece>) {
        for piece in pieces.drain(..) {
            match piece {
                Piece::Line(bytes) => self.handle_bytes(&bytes),
                Piece::TooLong { len } => self.peer.respond(
                    &RequestId::null(),
                    Err(RpcError::new(
                        codes::PARSE_ERROR,
                        format!(
                            "a line of {len} bytes is longer than the {MAX_LINE_BYTES}-byte \
                             limit and was skipped"
                        ),
                    )),
                ),
            }
        }
    }

    fn handle_bytes(&mut self, bytes: &[u8]) {
        match std::str::from_utf8(bytes) {
            Ok(line) => self.handle_line(line),
            Err(error) => {
                // Answer the request if its id can still be read, so the caller never hangs.
                let lossy = String::from_utf8_lossy(bytes);
                self.peer.respond(
                    &salvage_id(&lossy),
                    Err(RpcError::new(
                        codes::PARSE_ERROR,
                        format!(
                            "the line is not valid UTF-8 (invalid byte at offset {}); send \
                             UTF-8 JSON",
                            error.valid_up_to()
                        ),
                    )),
                );
            }
        }
    }

    fn handle_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let message: Value = match serde_json::from_str(line) {
            Ok(message) => message,
            Err(error) => {
                let why = if line.contains("\\u")
                    && serde_json::from_str::<Value>(&transport::replace_lone_surrogates(line))
                        .is_ok()
                {
                    "a string holds a lone UTF-16 surrogate (such as \\udcff), which no \
                     Unicode text can hold; send valid Unicode"
                        .to_owned()
                } else {
                    format!("the line is not JSON: {error}")
                };
                self.peer.respond(
                    &salvage_id(line),
                    Err(RpcError::new(codes::PARSE_ERROR, why)),
                );
                return;
            }
        };
        let Value::Object(object) = &message else {
            self.peer.respond(
                &RequestId::null(),
                Err(RpcError::new(
                    codes::INVALID_REQUEST,
                    "expected one JSON-RPC message object per line (batches are not supported)",
                )),
            );
            return;
        };
        let raw: Incoming<'_> = serde_json::from_str(line).unwrap_or(Incoming {
            id: None,
            params: None,
        });
        let id = object.contains_key("id").then(|| match raw.id {
            Some(raw) => RequestId::from_raw(raw),
            None => RequestId::null(),
        });
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        match (object.get("method"), id) {
            (Some(Value::String(method)), Some(id)) => self.handle_request(method, id, params),
            (Some(Value::String(method)), None) => self.handle_notification(method, raw.params),
            (Some(other), id) => self.peer.respond(
                &id.unwrap_or_else(RequestId::null),
                Err(RpcError::new(
                    codes::INVALID_REQUEST,
                    format!("`method` must be a string, got {other}"),
                )),
            ),
            (None, Some(_)) => self.peer.deliver_response(&message),
            (None, None) => self.peer.respond(
                &RequestId::null(),
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

    fn handle_request(&mut self, method: &str, id: RequestId, params: Value) {
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
                    &id,
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
            "ping" => self.peer.respond(&id, Ok(json!({}))),
            "tools/list" => {
                let registry = self.registry();
                let surface = registry.run().surface;
                let tools: Vec<Value> =
                    registry.schemas(surface).iter().map(tool_listing).collect();
                self.peer.respond(&id, Ok(json!({ "tools": tools })));
            }
            "tools/call" => {
                let registry = self.registry();
                let peer = self.peer.clone();
                let key = id.key().to_owned();
                let cancel = Cancellation::new();
                let cancelled = Arc::new(AtomicBool::new(false));
                let (call_cancel, call_cancelled) = (cancel.clone(), cancelled.clone());
                let handle = self.calls.spawn(async move {
                    let result = call_tool(&registry, &peer, params, call_cancel).await;
                    if !call_cancelled.load(Ordering::SeqCst) {
                        respond_call(&peer, &id, result);
                    }
                });
                self.in_flight.insert(
                    key,
                    InFlight {
                        handle,
                        cancel,
                        cancelled,
                    },
                );
            }
            other => self.peer.respond(
                &id,
                Err(RpcError::new(
                    codes::METHOD_NOT_FOUND,
                    format!("method `{other}` is not supported by cc-harness"),
                )),
            ),
        }
    }

    fn handle_notification(&mut self, method: &str, raw_params: Option<&RawValue>) {
        match method {
            "notifications/cancelled" => {
                let Some(request) = raw_params
                    .and_then(|raw| serde_json::from_str::<CancelParams<'_>>(raw.get()).ok())
                else {
                    return;
                };
                let Some(call) = self.in_flight.get(request.request_id.get()) else {
                    return;
                };
                // Ask the call to stop (a cell is interrupted, a search stops walking); if it
                // has not stopped in time, drop its future, which kills what it started.
                call.cancelled.store(true, Ordering::SeqCst);
                call.cancel.cancel();
                let handle = call.handle.clone();
                let grace = self.cancel_grace;
                tokio::spawn(async move {
                    tokio::time::sleep(grace).await;
                    handle.abort();
                });
            }
            "notifications/initialized" | "notifications/roots/list_changed" => {}
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }
}

/// The id of a message that could not be parsed as it is, when a lenient reading finds one.
fn salvage_id(line: &str) -> RequestId {
    let cleaned = transport::replace_lone_surrogates(line);
    let Ok(Value::Object(_)) = serde_json::from_str::<Value>(&cleaned) else {
        return RequestId::null();
    };
    match serde_json::from_str::<Incoming<'_>>(&cleaned) {
        Ok(Incoming { id: Some(raw), .. }) => RequestId::from_raw(raw),
        _ => RequestId::null(),
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

/// Sends a call's response; a result the tool spooled is written piece by piece.
fn respond_call(peer: &Peer, id: &RequestId, result: Result<CallResult, RpcError>) {
    match result {
        Ok(CallResult::Value(value)) => peer.respond(id, Ok(value)),
        Ok(spooled) => match spooled.into_pieces() {
            Ok(pieces) => peer.respond_pieces(id, pieces),
            Err(error) => peer.respond(
                id,
                Err(RpcError::new(
                    codes::INTERNAL_ERROR,
                    format!("the result could not be written: {error}"),
                )),
            ),
        },
        Err(error) => peer.respond(id, Err(error)),
    }
}

async fn call_tool(
    registry: &Registry,
    peer: &Arc<Peer>,
    params: Value,
    cancel: Cancellation,
) -> Result<CallResult, RpcError> {
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
    // Spooled: a huge result (every match of a search) is copied to the client from its
    // spool, never held as a `Value`.
    let result = registry
        .call_spooled(
            name,
            arguments,
            CallOptions {
                progress,
                cancel: Some(cancel),
            },
        )
        .await;
    Ok(render::call_result(result))
}
