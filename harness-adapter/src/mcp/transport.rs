//! Newline-delimited JSON-RPC 2.0 over a byte stream, both directions.
//!
//! The [`Peer`] sends notifications and requests to the client (progress, elicitation) and
//! routes the client's responses back to the waiting request. Every message goes through one
//! writer task, so concurrent tool calls never interleave their lines.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// JSON-RPC error codes used here.
pub mod codes {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters are wrong.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Something failed inside the server.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// What went wrong.
    pub message: String,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
        }
    }

    fn to_json(&self) -> Value {
        json!({"code": self.code, "message": self.message})
    }
}

/// Why a request to the client got no answer.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The client answered with an error.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The client did not answer in time.
    #[error("the client did not answer `{method}` within {seconds} s")]
    Timeout {
        /// The request's method.
        method: String,
        /// The budget.
        seconds: u64,
    },
    /// The connection closed before the answer came.
    #[error("the connection to the client closed")]
    Closed,
}

type Pending = HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>;

/// Our side of the connection.
#[derive(Debug)]
pub struct Peer {
    outgoing: mpsc::UnboundedSender<Value>,
    next_id: AtomicI64,
    pending: Mutex<Pending>,
    client_capabilities: OnceLock<Value>,
}

impl Peer {
    /// A peer whose messages go to `outgoing`.
    pub fn new(outgoing: mpsc::UnboundedSender<Value>) -> Arc<Self> {
        Arc::new(Peer {
            outgoing,
            next_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::new()),
            client_capabilities: OnceLock::new(),
        })
    }

    /// Records what the client declared in `initialize`.
    pub fn set_client_capabilities(&self, capabilities: Value) {
        let _ = self.client_capabilities.set(capabilities);
    }

    /// Whether the client declared `capability` (e.g. `elicitation`).
    pub fn client_supports(&self, capability: &str) -> bool {
        self.client_capabilities
            .get()
            .and_then(|caps| caps.get(capability))
            .is_some_and(|value| !value.is_null())
    }

    /// Sends a raw message.
    pub fn send(&self, message: Value) {
        // A closed channel means the writer ended with the connection: nothing to do.
        let _ = self.outgoing.send(message);
    }

    /// Sends a response to request `id`.
    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()}),
        };
        self.send(message);
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request to the client and waits up to `timeout` for its answer.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, PeerError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        self.lock_pending().insert(id, sender);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let outcome = tokio::time::timeout(timeout, receiver).await;
        self.lock_pending().remove(&id);
        match outcome {
            Ok(Ok(result)) => result.map_err(PeerError::from),
            Ok(Err(_dropped)) => Err(PeerError::Closed),
            Err(_elapsed) => Err(PeerError::Timeout {
                method: method.to_owned(),
                seconds: timeout.as_secs(),
            }),
        }
    }

    /// Routes a response from the client to the request waiting for it.
    pub fn deliver_response(&self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_i64) else {
            tracing::warn!(%message, "response with an id we never sent");
            return;
        };
        let Some(sender) = self.lock_pending().remove(&id) else {
            tracing::debug!(id, "late response ignored");
            return;
        };
        let result = match message.get("error") {
            Some(error) => Err(RpcError::new(
                error.get("code").and_then(Value::as_i64).unwrap_or(0),
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message"),
            )),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = sender.send(result);
    }

    /// Fails every request still waiting (the connection is closing).
    pub fn close(&self) {
        self.lock_pending().clear();
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        // A poisoned map only means a panic elsewhere; the map itself is still consistent.
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Writes every queued message as one line, until the queue closes.
pub async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut queue: mpsc::UnboundedReceiver<Value>,
) -> std::io::Result<()> {
    while let Some(message) = queue.recv().await {
        let mut line = serde_json::to_vec(&message)?;
        line.push(b'\n');
        writer.write_all(&line).await?;
        writer.flush().await?;
    }
    Ok(())
}
