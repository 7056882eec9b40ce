//! JSON-RPC over Content-Length frames: the framing, the id counter and the pending map.
//!
//! A [`Connection`] owns a reader task (frames → responses routed to the request waiting
//! for them, or [`Incoming`] messages to a channel) and a writer task (a channel of bodies →
//! frames), so that a server writing a 1 MB frame while we write one to it cannot deadlock
//! us. Like rust-analyzer's `lsp-server` `Connection`, it knows nothing of the process on the
//! other end ([`crate::process::ServerProcess`] starts one and says how it ended) nor of LSP
//! beyond the message envelope: it runs over any pipe ([`Connection::from_io`]), and
//! [`Connection::memory`] gives two ends talking to each other, for protocol tests.

use cc_process::lock;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cc_framing::{FrameReader, FrameWriter};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

use crate::error::LspError;
use lsp_types::notification::{Cancel, Notification};
use lsp_types::request::Request;
use lsp_types::{CancelParams, NumberOrString};

/// An id as LSP's `integer` (ids count up from 1, far below its range).
fn id_i32(id: i64) -> i32 {
    i32::try_from(id).unwrap_or(i32::MAX)
}

/// Says how the other end ended, once its output has (for a process: its exit status and
/// last stderr lines).
pub type Ended = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = Closed> + Send>> + Send>;

/// The receiving half of a connection's [`Incoming`] messages.
pub type IncomingReceiver = mpsc::UnboundedReceiver<Incoming>;

/// A message the server sent that is not a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request the client must answer with [`Connection::respond`].
    Request {
        /// The request id, echoed in the response.
        id: Value,
        /// `workspace/configuration`, …
        method: String,
        /// Its parameters (`null` when absent).
        params: Value,
    },
    /// A notification (`textDocument/publishDiagnostics`, `$/progress`, …).
    Notification {
        /// The method.
        method: String,
        /// Its parameters (`null` when absent).
        params: Value,
    },
    /// A line the server printed on stderr (its log), in the order it was read.
    Log {
        /// The line, without its end.
        line: String,
    },
}

/// How the server's side ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Closed {
    /// The exit status, when the process was ours and ended in time to see it.
    pub status: Option<String>,
    /// The last lines it printed on stderr.
    pub stderr_tail: String,
}

type Reply = Result<Value, Failure>;

#[derive(Debug)]
enum Failure {
    Rpc { code: i64, message: String },
    Closed(Closed),
}

#[derive(Default)]
struct Pending {
    waiting: HashMap<i64, oneshot::Sender<Reply>>,
    closed: Option<Closed>,
}

/// One JSON-RPC connection to a server. Cheap to share behind an `Arc`.
pub struct Connection {
    name: String,
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicI64,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A connection over any reader and writer (a child's pipes, a socket).
    pub fn from_io<R, W>(name: &str, reader: R, writer: W) -> (Connection, IncomingReceiver)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        (Self::start(name, reader, writer, in_tx, None), in_rx)
    }

    /// Two connected ends in memory: what one sends, the other receives (a client and an
    /// in-memory peer, for protocol tests; in addition to real servers, never instead).
    /// Each end answers the other's requests with [`Connection::respond`].
    pub fn memory(
        client: &str,
        peer: &str,
    ) -> (
        (Connection, IncomingReceiver),
        (Connection, IncomingReceiver),
    ) {
        let (client_io, peer_io) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client_io);
        let (peer_read, peer_write) = tokio::io::split(peer_io);
        (
            Self::from_io(client, client_read, client_write),
            Self::from_io(peer, peer_read, peer_write),
        )
    }

    /// Runs the reader and writer tasks over `reader` and `writer`, sending what is not a
    /// response to `incoming`; `ended`, when given, says how the other end ended once its
    /// output has (what pending requests then fail with).
    pub fn start<R, W>(
        name: &str,
        reader: R,
        writer: W,
        incoming: mpsc::UnboundedSender<Incoming>,
        ended: Option<Ended>,
    ) -> Connection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let pending = Arc::new(Mutex::new(Pending::default()));

        let writer_name = name.to_owned();
        tokio::spawn(async move {
            let mut writer = FrameWriter::new(writer);
            while let Some(body) = out_rx.recv().await {
                if let Err(error) = writer.write_frame(&body).await {
                    tracing::debug!(server = %writer_name, %error, "write failed; writer stops");
                    return;
                }
            }
            // Every sender is gone: close the server's stdin.
            let _ = writer.shutdown().await;
        });

        let reader_state = ReaderState {
            name: name.to_owned(),
            pending: pending.clone(),
            incoming,
            out: out_tx.downgrade(),
            ended,
        };
        tokio::spawn(reader_state.run(reader));

        Connection {
            name: name.to_owned(),
            out: out_tx,
            pending,
            next_id: AtomicI64::new(1),
        }
    }

    /// The name given at start (used in every error message).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the server ended, once it has.
    pub fn closed(&self) -> Option<Closed> {
        lock(&self.pending).closed.clone()
    }

    /// Sends the typed request `R` and waits up to `timeout` for its answer, read as
    /// `R::Result` (an answer of another shape is [`LspError::BadResponse`]). On timeout the
    /// request is cancelled with `$/cancelRequest`.
    pub async fn request<R: Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, LspError> {
        let answer = self.request_json::<R>(params, timeout).await?;
        serde_json::from_value(answer).map_err(|error| LspError::BadResponse {
            server: self.name.clone(),
            method: R::METHOD.to_owned(),
            detail: error.to_string(),
        })
    }

    /// [`Connection::request`] with the answer as sent (for answers read leniently).
    pub async fn request_json<R: Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<Value, LspError> {
        let params = serde_json::to_value(params).map_err(|error| LspError::BadResponse {
            server: self.name.clone(),
            method: R::METHOD.to_owned(),
            detail: format!("its parameters cannot be written: {error}"),
        })?;
        self.request_value(R::METHOD, params, timeout).await
    }

    /// Sends a request given as JSON and waits up to `timeout` for its answer. On timeout
    /// the request is cancelled with `$/cancelRequest`.
    pub async fn request_value(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, LspError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            if let Some(closed) = &pending.closed {
                return Err(self.exited(method, closed.clone()));
            }
            pending.waiting.insert(id, tx);
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.send_value(&body).is_err() {
            lock(&self.pending).waiting.remove(&id);
            let closed = self.closed().unwrap_or_default();
            return Err(self.exited(method, closed));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(Failure::Rpc { code, message }))) => Err(LspError::Server {
                server: self.name.clone(),
                method: method.to_owned(),
                code,
                message,
            }),
            Ok(Ok(Err(Failure::Closed(closed)))) => Err(self.exited(method, closed)),
            Ok(Err(_dropped)) => Err(self.exited(method, self.closed().unwrap_or_default())),
            Err(_elapsed) => {
                lock(&self.pending).waiting.remove(&id);
                let _ = self.notify::<Cancel>(CancelParams {
                    id: NumberOrString::Number(id_i32(id)),
                });
                Err(LspError::Timeout {
                    server: self.name.clone(),
                    method: method.to_owned(),
                    timeout,
                })
            }
        }
    }

    /// Sends the typed notification `N`.
    pub fn notify<N: Notification>(&self, params: N::Params) -> Result<(), LspError> {
        let params = serde_json::to_value(params).unwrap_or_default();
        self.notify_value(N::METHOD, params)
    }

    /// Sends a notification given as JSON.
    pub fn notify_value(&self, method: &str, params: Value) -> Result<(), LspError> {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_value(&body)
            .map_err(|()| self.exited(method, self.closed().unwrap_or_default()))
    }

    /// Answers a server request: `Ok(result)` or `Err((code, message))`.
    pub fn respond(&self, id: Value, result: Result<Value, (i64, String)>) {
        let body = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        // A dead server needs no answer.
        let _ = self.send_value(&body);
    }

    fn send_value(&self, body: &Value) -> Result<(), ()> {
        let bytes = serde_json::to_vec(body).map_err(|_| ())?;
        tracing::trace!(server = %self.name, "-> {}", String::from_utf8_lossy(&bytes[..bytes.len().min(2000)]));
        self.out.send(bytes).map_err(|_| ())
    }

    fn exited(&self, method: &str, closed: Closed) -> LspError {
        LspError::ServerExited {
            server: self.name.clone(),
            method: method.to_owned(),
            status: closed.status,
            stderr_tail: closed.stderr_tail,
        }
    }

    /// Whether the other end's output has ended (the server exited or closed it).
    pub fn is_closed(&self) -> bool {
        lock(&self.pending).closed.is_some()
    }
}

struct ReaderState {
    name: String,
    pending: Arc<Mutex<Pending>>,
    incoming: mpsc::UnboundedSender<Incoming>,
    // Weak, so that dropping the `Connection` closes the writer (the server's stdin).
    out: mpsc::WeakUnboundedSender<Vec<u8>>,
    ended: Option<Ended>,
}

impl ReaderState {
    async fn run<R: AsyncRead + Unpin>(self, reader: R) {
        let mut reader = FrameReader::new(reader);
        loop {
            match reader.read_frame().await {
                Ok(Some(body)) => self.dispatch(&body),
                Ok(None) => break,
                Err(error) => {
                    // Framing errors other than I/O leave the reader usable.
                    if matches!(error, cc_framing::FrameError::Io(_))
                        || matches!(error, cc_framing::FrameError::UnexpectedEof { .. })
                    {
                        tracing::debug!(server = %self.name, %error, "reading stopped");
                        break;
                    }
                    tracing::warn!(server = %self.name, %error, "skipped a bad frame");
                }
            }
        }
        self.finish().await;
    }

    fn dispatch(&self, body: &[u8]) {
        tracing::trace!(server = %self.name, "<- {}", String::from_utf8_lossy(&body[..body.len().min(2000)]));
        let message: Value = match serde_json::from_slice(body) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(server = %self.name, %error, "skipped a frame that is not JSON");
                return;
            }
        };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null());
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, id) {
            (Some(method), Some(id)) => {
                let request = Incoming::Request {
                    id: id.clone(),
                    method: method.to_owned(),
                    params,
                };
                if self.incoming.send(request).is_err() {
                    // Nobody handles requests any more; answer so the server does not wait.
                    let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32601, "message": "client is shutting down"}});
                    if let (Ok(bytes), Some(out)) =
                        (serde_json::to_vec(&refusal), self.out.upgrade())
                    {
                        let _ = out.send(bytes);
                    }
                }
            }
            (Some(method), None) => {
                let _ = self.incoming.send(Incoming::Notification {
                    method: method.to_owned(),
                    params,
                });
            }
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else {
                    tracing::warn!(server = %self.name, %id, "response to an id we never sent");
                    return;
                };
                let waiter = lock(&self.pending).waiting.remove(&id);
                let Some(waiter) = waiter else {
                    // Answered after we gave up on it (timeout): nothing to do.
                    return;
                };
                let reply = match message.get("error") {
                    Some(error) if !error.is_null() => Err(Failure::Rpc {
                        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("(no message)")
                            .to_owned(),
                    }),
                    _ => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = waiter.send(reply);
            }
            (None, None) => {
                tracing::warn!(server = %self.name, "skipped a message with neither method nor id");
            }
        }
    }

    /// The server's output ended: record how, and fail everything still waiting.
    async fn finish(self) {
        let closed = match self.ended {
            Some(ended) => ended().await,
            None => Closed::default(),
        };
        let waiting = {
            let mut pending = lock(&self.pending);
            pending.closed = Some(closed.clone());
            std::mem::take(&mut pending.waiting)
        };
        for (_, waiter) in waiting {
            let _ = waiter.send(Err(Failure::Closed(closed.clone())));
        }
        // Dropping `incoming` tells the client's handler that the server is gone.
    }
}
