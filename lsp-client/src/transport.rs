//! JSON-RPC over Content-Length frames, on three tasks.
//!
//! A [`Connection`] owns a reader task (frames → responses to the pending map, or
//! [`Incoming`] messages to a channel), a writer task (a channel of bodies → frames) and, for
//! a child process, a stderr task that drains stderr into a bounded tail. Keeping them apart
//! means a server that writes a 1 MB frame while we write one to it cannot deadlock us, and a
//! server that fills its stderr pipe never stalls. Like rust-analyzer's `lsp-server`, the
//! transport knows nothing of LSP itself: [`Connection::from_io`] runs it over any pipe
//! (an in-memory peer in tests).

use cc_process::lock;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cc_framing::{FrameReader, FrameWriter};
use cc_process::GroupChild;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::error::LspError;
use lsp_types::notification::{Cancel, Notification};
use lsp_types::request::Request;
use lsp_types::{CancelParams, NumberOrString};

/// An id as LSP's `integer` (ids count up from 1, far below its range).
fn id_i32(id: i64) -> i32 {
    i32::try_from(id).unwrap_or(i32::MAX)
}

/// Lines of stderr kept for error messages.
const STDERR_LINES: usize = 20;
/// Bytes of stderr kept at most per line.
const STDERR_LINE_BYTES: usize = 400;

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
    child: Arc<tokio::sync::Mutex<Option<GroupChild>>>,
    pid: Option<u32>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// The stderr side of a spawned server: its bounded tail and the task draining it.
struct Stderr {
    tail: Arc<Mutex<VecDeque<String>>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Connection {
    /// Starts `command` in its own process group (see `cc_process::spawn_group`) and talks
    /// to it over its stdin and stdout.
    pub fn spawn(
        name: &str,
        command: tokio::process::Command,
    ) -> io::Result<(Connection, mpsc::UnboundedReceiver<Incoming>)> {
        Self::spawn_with(name, command, false)
    }

    /// [`Connection::spawn`], and with `logs` every stderr line also comes in as
    /// [`Incoming::Log`] (for servers whose log says something the protocol does not).
    pub fn spawn_with(
        name: &str,
        mut command: tokio::process::Command,
        logs: bool,
    ) -> io::Result<(Connection, mpsc::UnboundedReceiver<Incoming>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cc_process::spawn_group(command)?;
        let stdin = child
            .take_stdin()
            .ok_or_else(|| io::Error::other("child has no stdin"))?;
        let stdout = child
            .take_stdout()
            .ok_or_else(|| io::Error::other("child has no stdout"))?;
        let stderr = child.take_stderr();
        let pid = child.id();
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let stderr_task = stderr.map(|stderr| {
            let tail = stderr_tail.clone();
            let name = name.to_owned();
            let logs = logs.then(|| in_tx.downgrade());
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(server = %name, "stderr: {line}");
                    let kept = truncate(&line, STDERR_LINE_BYTES);
                    {
                        let mut tail = lock(&tail);
                        if tail.len() == STDERR_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(kept.clone());
                    }
                    if let Some(logs) = logs.as_ref().and_then(|logs| logs.upgrade()) {
                        let _ = logs.send(Incoming::Log { line: kept });
                    }
                }
            })
        });
        Ok(Self::start(
            name,
            stdout,
            stdin,
            Some(child),
            Some(pid),
            Stderr {
                tail: stderr_tail,
                task: stderr_task,
            },
            (in_tx, in_rx),
        ))
    }

    /// A connection over any reader and writer (an in-memory peer, a socket).
    pub fn from_io<R, W>(
        name: &str,
        reader: R,
        writer: W,
    ) -> (Connection, mpsc::UnboundedReceiver<Incoming>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Self::start(
            name,
            reader,
            writer,
            None,
            None,
            Stderr {
                tail: Arc::new(Mutex::new(VecDeque::new())),
                task: None,
            },
            mpsc::unbounded_channel(),
        )
    }

    fn start<R, W>(
        name: &str,
        reader: R,
        writer: W,
        child: Option<GroupChild>,
        pid: Option<u32>,
        Stderr {
            tail: stderr,
            task: stderr_task,
        }: Stderr,
        (in_tx, in_rx): (
            mpsc::UnboundedSender<Incoming>,
            mpsc::UnboundedReceiver<Incoming>,
        ),
    ) -> (Connection, mpsc::UnboundedReceiver<Incoming>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let pending = Arc::new(Mutex::new(Pending::default()));
        let child = Arc::new(tokio::sync::Mutex::new(child));

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
            incoming: in_tx,
            out: out_tx.downgrade(),
            child: Arc::downgrade(&child),
            stderr: stderr.clone(),
            stderr_task,
        };
        tokio::spawn(reader_state.run(reader));

        (
            Connection {
                name: name.to_owned(),
                out: out_tx,
                pending,
                next_id: AtomicI64::new(1),
                child,
                pid,
                stderr,
            },
            in_rx,
        )
    }

    /// The name given at start (used in every error message).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's pid (its process group), for a spawned server.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// How the server ended, once it has.
    pub fn closed(&self) -> Option<Closed> {
        lock(&self.pending).closed.clone()
    }

    /// The last lines the server printed on stderr.
    pub fn stderr_tail(&self) -> String {
        lock(&self.stderr)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
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
            let closed = self.closed().unwrap_or_else(|| Closed {
                status: None,
                stderr_tail: self.stderr_tail(),
            });
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

    /// Whether the process has exited (always false for a connection over plain pipes
    /// that is still open).
    pub fn is_closed(&self) -> bool {
        lock(&self.pending).closed.is_some()
    }

    /// Ends the process group: waits up to `grace` for the leader to exit by itself (after
    /// `exit`), then SIGKILLs the whole group.
    pub async fn kill_after(&self, grace: Duration) {
        let mut child = self.child.lock().await;
        if let Some(child) = child.as_mut() {
            if let Err(error) = child.wait_or_kill(grace).await {
                tracing::warn!(server = %self.name, %error, "could not reap the server");
            }
        }
    }
}

struct ReaderState {
    name: String,
    pending: Arc<Mutex<Pending>>,
    incoming: mpsc::UnboundedSender<Incoming>,
    // Weak, so that dropping the `Connection` drops the child (killing its group) and closes
    // the writer, which ends this reader too.
    out: mpsc::WeakUnboundedSender<Vec<u8>>,
    child: std::sync::Weak<tokio::sync::Mutex<Option<GroupChild>>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
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
        let status = {
            let child = self.child.upgrade();
            let wait = async {
                let child = child?;
                let mut child = child.lock().await;
                match child.as_mut() {
                    Some(child) => child.wait().await.ok().map(|status| status.to_string()),
                    None => None,
                }
            };
            tokio::time::timeout(Duration::from_secs(2), wait)
                .await
                .ok()
                .flatten()
        };
        if let Some(task) = self.stderr_task {
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
        let stderr_tail = lock(&self.stderr)
            .iter()
            .rev()
            .take(5)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        let closed = Closed {
            status,
            stderr_tail,
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

fn truncate(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_owned();
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}
