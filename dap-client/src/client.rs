//! The connection to one adapter: correlation of responses by `request_seq`, events on a
//! channel, reverse requests answered.
//!
//! A reader task owns the adapter's output. It hands each response to the request that
//! waits for it, pushes each event onto an unbounded channel (consumed by the session's
//! state task, which only updates memory, so it never falls behind for long), and answers
//! every reverse request (`runInTerminal`, `startDebugging`, anything else) with
//! `success: false`: this client is headless and an unanswered request would stall the
//! adapter. When the stream ends, every pending request fails at once with the reason.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cc_framing::{FrameError, FrameReader, FrameWriter};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::ClientError;
use crate::protocol::{Event, Message, Request, RequestMessage, Response};

type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// How long answering a reverse request or closing the input may wait for the adapter to
/// read its input.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A handle on one adapter connection. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("closed", &self.closed_reason())
            .finish_non_exhaustive()
    }
}

struct Inner {
    writer: tokio::sync::Mutex<Option<FrameWriter<BoxWriter>>>,
    next_seq: AtomicI64,
    pending: Mutex<Pending>,
    closed: watch::Sender<Option<String>>,
}

#[derive(Default)]
struct Pending {
    waiting: HashMap<i64, oneshot::Sender<Response>>,
    /// Set once the reader ended; no request is registered after that.
    closed: Option<String>,
}

/// A request that was sent and whose response has not been taken yet.
#[derive(Debug)]
pub struct PendingResponse {
    command: String,
    seq: i64,
    rx: oneshot::Receiver<Response>,
    client: Client,
}

impl PendingResponse {
    /// The request's command.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Waits for the response (`success` true or false). Cancel-safe: dropping the future
    /// keeps the response for the next call.
    pub async fn response(&mut self) -> Result<Response, ClientError> {
        match (&mut self.rx).await {
            Ok(response) => Ok(response),
            Err(_) => Err(ClientError::Closed {
                command: self.command.clone(),
                reason: self
                    .client
                    .closed_reason()
                    .unwrap_or_else(|| "the connection ended".into()),
            }),
        }
    }

    /// Waits up to `timeout` for the response.
    pub async fn response_within(&mut self, timeout: Duration) -> Result<Response, ClientError> {
        match tokio::time::timeout(timeout, self.response()).await {
            Ok(result) => result,
            Err(_) => Err(ClientError::Timeout {
                command: self.command.clone(),
                after: timeout,
            }),
        }
    }
}

impl Drop for PendingResponse {
    fn drop(&mut self) {
        // A response that nobody waits for any more must not pile up.
        if let Ok(mut pending) = self.client.inner.pending.lock() {
            pending.waiting.remove(&self.seq);
        }
    }
}

impl Client {
    /// Starts a client over an adapter's output (`reader`) and input (`writer`). Events
    /// arrive on the returned channel, in order.
    pub fn start<R, W>(reader: R, writer: W) -> (Client, mpsc::UnboundedReceiver<Event>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (closed, _) = watch::channel(None);
        let client = Client {
            inner: Arc::new(Inner {
                writer: tokio::sync::Mutex::new(Some(FrameWriter::new(Box::new(writer)))),
                next_seq: AtomicI64::new(1),
                pending: Mutex::new(Pending::default()),
                closed,
            }),
        };
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        tokio::spawn(read_loop(
            FrameReader::new(reader),
            client.clone(),
            events_tx,
        ));
        (client, events_rx)
    }

    /// Why the connection ended, or `None` while it is open.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.closed.borrow().clone()
    }

    /// Resolves once the adapter's output stream has ended.
    pub async fn closed(&self) {
        let mut rx = self.inner.closed.subscribe();
        // The sender lives in `self`, so this only returns when a reason is set.
        let _ = rx.wait_for(Option::is_some).await;
    }

    /// Sends a request without waiting for its response.
    pub async fn send(
        &self,
        command: &str,
        arguments: Option<Value>,
    ) -> Result<PendingResponse, ClientError> {
        let seq = self.inner.next_seq.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.lock_pending();
            if let Some(reason) = &pending.closed {
                return Err(ClientError::Closed {
                    command: command.into(),
                    reason: reason.clone(),
                });
            }
            pending.waiting.insert(seq, tx);
        }
        let pending = PendingResponse {
            command: command.into(),
            seq,
            rx,
            client: self.clone(),
        };
        let message = Message::Request(RequestMessage {
            seq,
            command: command.into(),
            arguments,
        });
        self.write(&message)
            .await
            .map_err(|reason| ClientError::Closed {
                command: command.into(),
                reason,
            })?;
        Ok(pending)
    }

    /// Sends a request and waits up to `timeout` for its response, whatever its `success`.
    /// The timeout covers the write too: an adapter that stopped reading its input is as
    /// stuck as one that does not answer.
    pub async fn request_raw(
        &self,
        command: &str,
        arguments: Option<Value>,
        timeout: Duration,
    ) -> Result<Response, ClientError> {
        let exchange = async { self.send(command, arguments).await?.response().await };
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(ClientError::Timeout {
                    command: command.into(),
                    after: timeout,
                })
            })
    }

    /// Sends a typed request and waits up to `timeout` for a successful response body.
    pub async fn request<R: Request>(
        &self,
        arguments: &R::Arguments,
        timeout: Duration,
    ) -> Result<R::Response, ClientError> {
        let arguments =
            serde_json::to_value(arguments).map_err(|error| ClientError::Malformed {
                command: R::COMMAND.into(),
                detail: format!("arguments did not serialize: {error}"),
            })?;
        let arguments = (!arguments.is_null()).then_some(arguments);
        let response = self.request_raw(R::COMMAND, arguments, timeout).await?;
        parse_body::<R>(response)
    }

    /// Closes the adapter's input (some adapters, such as debugpy, exit only then). Gives up
    /// after `WRITE_TIMEOUT` (10 s) when a write to an adapter that stopped reading holds the
    /// input: the caller kills the adapter next, which ends that write.
    pub async fn close_input(&self) {
        let Ok(mut writer) = tokio::time::timeout(WRITE_TIMEOUT, self.inner.writer.lock()).await
        else {
            tracing::debug!("the adapter's input is busy with a write that does not finish");
            return;
        };
        let taken = writer.take();
        drop(writer);
        if let Some(mut writer) = taken {
            if let Err(error) = writer.shutdown().await {
                tracing::debug!(%error, "closing the adapter's input failed");
            }
        }
    }

    async fn write(&self, message: &Message) -> Result<(), String> {
        let body = serde_json::to_vec(message).map_err(|error| error.to_string())?;
        let mut writer = self.inner.writer.lock().await;
        let Some(writer) = writer.as_mut() else {
            return Err("the client closed the adapter's input".into());
        };
        writer
            .write_frame(&body)
            .await
            .map_err(|error| match error {
                FrameError::Io(error) => format!("writing to the adapter failed: {error}"),
                other => other.to_string(),
            })
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        // A poisoned lock only means a panic elsewhere; the map itself is still consistent.
        cc_process::lock(&self.inner.pending)
    }

    fn finish(&self, reason: String) {
        let waiting = {
            let mut pending = self.lock_pending();
            pending.closed.get_or_insert(reason.clone());
            std::mem::take(&mut pending.waiting)
        };
        // Dropping the senders fails every waiter with `Closed`.
        drop(waiting);
        self.inner.closed.send_replace(Some(reason));
    }
}

/// Parses a response into `R`'s body, turning `success: false` into [`ClientError::Failed`].
pub fn parse_body<R: Request>(response: Response) -> Result<R::Response, ClientError> {
    if !response.success {
        return Err(ClientError::Failed {
            command: R::COMMAND.into(),
            message: response.error_text(),
        });
    }
    serde_json::from_value(response.body.unwrap_or(Value::Null)).map_err(|error| {
        ClientError::Malformed {
            command: R::COMMAND.into(),
            detail: error.to_string(),
        }
    })
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut reader: FrameReader<R>,
    client: Client,
    events: mpsc::UnboundedSender<Event>,
) {
    let reason = loop {
        let frame = match reader.read_frame().await {
            Ok(Some(frame)) => frame,
            Ok(None) => break "the adapter closed its output".to_owned(),
            Err(error @ (FrameError::Io(_) | FrameError::UnexpectedEof { .. })) => {
                break format!("reading from the adapter failed: {error}");
            }
            Err(error) => {
                tracing::warn!(%error, "skipping a malformed frame from the debug adapter");
                continue;
            }
        };
        if let Some(preamble) = reader.take_preamble() {
            tracing::debug!(%preamble, "debug adapter printed text outside frames");
        }
        let message: Message = match serde_json::from_slice(&frame) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, body = %String::from_utf8_lossy(&frame), "skipping a message that is not DAP");
                continue;
            }
        };
        match message {
            Message::Response(response) => {
                let waiter = client.lock_pending().waiting.remove(&response.request_seq);
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(response);
                    }
                    None => tracing::debug!(
                        request_seq = response.request_seq,
                        command = %response.command,
                        "response to a request nobody waits for"
                    ),
                }
            }
            Message::Event(event) => {
                let _ = events.send(event);
            }
            Message::Request(request) => {
                // Answered from a separate task: the reader must never wait on the writer,
                // or an adapter blocked on its own output would deadlock us both.
                let client = client.clone();
                tokio::spawn(async move { refuse_reverse_request(&client, request).await });
            }
        }
    };
    tracing::debug!(%reason, "debug adapter connection ended");
    client.finish(reason);
}

async fn refuse_reverse_request(client: &Client, request: RequestMessage) {
    let message = match request.command.as_str() {
        "runInTerminal" => {
            "this client is headless and has no terminal; the program's output is captured \
             through the adapter instead"
        }
        "startDebugging" => {
            "this client runs one debug session at a time and does not start child sessions"
        }
        _ => "this client does not handle reverse requests",
    };
    let response = Message::Response(Response {
        seq: client.inner.next_seq.fetch_add(1, Ordering::Relaxed),
        request_seq: request.seq,
        success: false,
        command: request.command.clone(),
        message: Some(message.into()),
        body: None,
    });
    match tokio::time::timeout(WRITE_TIMEOUT, client.write(&response)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::debug!(%error, command = %request.command, "could not refuse a reverse request");
        }
        Err(_) => {
            tracing::debug!(command = %request.command, "the adapter does not read its input");
        }
    }
}
