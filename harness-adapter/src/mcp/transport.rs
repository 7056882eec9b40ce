//! Newline-delimited JSON-RPC over a byte stream, as an rmcp [`Transport`].
//!
//! rmcp serves the protocol (handshake, version negotiation, dispatch, the pending map for
//! our requests to the client, cancellation); this transport only frames and decodes, and
//! keeps what rmcp's own stdio transport cannot give:
//!
//! - No input ends the run. [`LineSplitter`] bounds a line's length and never fails on bad
//!   bytes; a line that is not UTF-8 or not JSON gets -32700, a message that is not a request
//!   -32600 (with the id when it can still be read), and the next line is read.
//! - Ids come back exactly as written: an id rmcp cannot hold (an integer beyond `i64`, a
//!   float) is handed to rmcp as a stand-in string and written back raw.
//! - A client that skips `initialize` is served as if it had sent a bare one.
//! - A result the tool spooled ([`Spools`]) is written piece by piece, never held whole.
//! - End of input is reported through [`Ended`] instead of ending rmcp's loop at once, so
//!   [`super::serve`] decides how long calls in flight may run.
//!
//! Every message goes through one writer task, so concurrent calls never interleave lines.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cc_process::lock;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams,
    JsonRpcMessage, NumberOrString, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

use super::render::CallResult;

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

/// The longest input line read (a `write` of 16 MiB, JSON-escaped, fits); a longer one is
/// skipped and answered with -32700.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The methods cc-harness serves: a request for another gets -32601 here, and one for these
/// that rmcp cannot decode has bad params (-32602).
const SERVED_METHODS: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// The id of the `initialize` this transport sends for a client that skipped it.
const IMPLICIT_INITIALIZE_ID: &str = "\u{1}cc-harness-implicit-initialize";

/// The prefix of the stand-in ids given to rmcp for ids it cannot hold.
const STAND_IN_PREFIX: &str = "\u{1}cc-harness-id-";

/// The key of the marker a spooled result's `structuredContent` carries through rmcp.
const SPOOL_KEY: &str = "\u{1}cc-harness-spool";

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

/// Results the tools spooled, parked until rmcp hands their response to the transport.
#[derive(Debug, Default)]
pub struct Spools {
    next: AtomicU64,
    parked: Mutex<HashMap<u64, CallResult>>,
}

impl Spools {
    /// Parks `result` and gives the `structuredContent` marker that stands for it in the
    /// `CallToolResult` rmcp carries.
    pub fn park(&self, result: CallResult) -> Value {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.parked).insert(key, result);
        json!({ SPOOL_KEY: key })
    }

    /// The result a marker stands for (once).
    fn take(&self, structured: Option<&Value>) -> Option<CallResult> {
        let Some(Value::Object(object)) = structured else {
            return None;
        };
        if object.len() != 1 {
            return None;
        }
        let key = object.get(SPOOL_KEY)?.as_u64()?;
        lock(&self.parked).remove(&key)
    }

    /// Drops whatever is still parked (responses that were never sent: cancelled calls).
    pub fn clear(&self) {
        lock(&self.parked).clear();
    }
}

/// Ids rmcp cannot hold, by the stand-in it was given.
#[derive(Debug, Default)]
struct StandIns {
    next: u64,
    raw_by_stand_in: HashMap<String, Box<RawValue>>,
    stand_in_by_raw: HashMap<String, String>,
}

impl StandIns {
    fn give(&mut self, raw: &RawValue) -> String {
        if let Some(known) = self.stand_in_by_raw.get(raw.get()) {
            return known.clone();
        }
        self.next += 1;
        let stand_in = format!("{STAND_IN_PREFIX}{}", self.next);
        self.raw_by_stand_in
            .insert(stand_in.clone(), raw.to_owned());
        self.stand_in_by_raw
            .insert(raw.get().to_owned(), stand_in.clone());
        stand_in
    }

    fn forget(&mut self, raw: &RawValue) {
        if let Some(stand_in) = self.stand_in_by_raw.remove(raw.get()) {
            self.raw_by_stand_in.remove(&stand_in);
        }
    }

    /// The id to write for rmcp's `id`; a stand-in is forgotten once answered.
    fn written(&mut self, id: &NumberOrString) -> Box<RawValue> {
        if let NumberOrString::String(text) = id {
            if let Some(raw) = self.raw_by_stand_in.remove(&**text) {
                self.stand_in_by_raw.remove(raw.get());
                return raw;
            }
        }
        to_raw(&serde_json::to_value(id).unwrap_or(Value::Null))
    }
}

fn to_raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| null_id())
}

fn null_id() -> Box<RawValue> {
    #[allow(clippy::expect_used)] // `null` is valid JSON: this cannot fail.
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// A response as written: the id raw, as the client wrote it.
#[derive(Serialize)]
struct Envelope<'a, T: Serialize, E: Serialize> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a E>,
}

fn encode_line(message: &impl Serialize) -> Vec<u8> {
    match serde_json::to_vec(message) {
        Ok(mut line) => {
            line.push(b'\n');
            line
        }
        Err(error) => {
            tracing::warn!(%error, "an outgoing message could not be encoded");
            Vec::new()
        }
    }
}

fn error_line(id: &RawValue, error: &RpcError) -> Vec<u8> {
    encode_line(&Envelope::<(), Value> {
        jsonrpc: "2.0",
        id,
        result: None,
        error: Some(&error.to_json()),
    })
}

/// The bytes of a message written piece by piece.
pub type PieceSource = Box<dyn Iterator<Item = std::io::Result<Vec<u8>>> + Send>;

/// One message for the writer task.
pub enum Outgoing {
    /// A whole line, newline included.
    Line(Vec<u8>),
    /// A line written piece by piece (a tool result too large to hold at once), so no
    /// other message lands inside it; the writer adds the newline. When a piece fails, the
    /// line is ended as it is and `on_error` gives the line to send after it (an error
    /// response for the same request, so the caller is not left waiting).
    Pieces {
        /// The line's bytes.
        pieces: PieceSource,
        /// The line to send when a piece fails.
        on_error: Box<dyn FnOnce(std::io::Error) -> Vec<u8> + Send>,
    },
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outgoing::Line(line) => f.debug_tuple("Line").field(&line.len()).finish(),
            Outgoing::Pieces { .. } => f.write_str("Pieces"),
        }
    }
}

/// A response to `id` whose result is written piece by piece.
fn response_in_pieces(
    id: Box<RawValue>,
    result: impl Iterator<Item = std::io::Result<Vec<u8>>> + Send + 'static,
) -> Outgoing {
    let open = format!(r#"{{"jsonrpc":"2.0","id":{},"result":"#, id.get()).into_bytes();
    let pieces = std::iter::once(Ok(open))
        .chain(result)
        .chain(std::iter::once(Ok(b"}".to_vec())));
    let on_error = move |error: std::io::Error| {
        error_line(
            &id,
            &RpcError::new(
                codes::INTERNAL_ERROR,
                format!("the result could not be read back from its spool: {error}"),
            ),
        )
    };
    Outgoing::Pieces {
        pieces: Box::new(pieces),
        on_error: Box::new(on_error),
    }
}

/// Writes every queued message, until the queue closes.
pub async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
) -> std::io::Result<()> {
    while let Some(message) = queue.recv().await {
        match message {
            Outgoing::Line(line) => writer.write_all(&line).await?,
            Outgoing::Pieces { pieces, on_error } => {
                // The pieces come from a spool in memory or in a temporary file that was just
                // written (so in the page cache): reading them here blocks as briefly as a
                // local file read does.
                let mut failed = None;
                for piece in pieces {
                    match piece {
                        Ok(bytes) => writer.write_all(&bytes).await?,
                        Err(error) => {
                            failed = Some(error);
                            break;
                        }
                    }
                }
                writer.write_all(b"\n").await?;
                if let Some(error) = failed {
                    tracing::warn!(%error, "a result could not be read back; sent an error");
                    writer.write_all(&on_error(error)).await?;
                }
            }
        }
        writer.flush().await?;
    }
    Ok(())
}

/// Tells [`super::serve`] that the input ended (or could not be read any more).
#[derive(Debug, Clone)]
pub struct Ended(watch::Receiver<bool>);

impl Ended {
    /// Waits until the input has ended.
    pub async fn wait(&mut self) {
        // An error means the transport is gone, which also ends the input.
        let _ = self.0.wait_for(|ended| *ended).await;
    }
}

/// The fields of a message, with the id and the params kept raw.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

/// The params of `notifications/cancelled`, with the id kept raw.
#[derive(Deserialize)]
struct CancelParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: &'a RawValue,
}

/// Newline-delimited JSON-RPC over `reader` and a writer task, for rmcp.
pub struct LineTransport<R> {
    reader: R,
    splitter: LineSplitter,
    buffer: Vec<u8>,
    pieces: Vec<Piece>,
    ready: VecDeque<ClientJsonRpcMessage>,
    out: mpsc::UnboundedSender<Outgoing>,
    stand_ins: Arc<Mutex<StandIns>>,
    spools: Arc<Spools>,
    /// Whether the session has begun (an `initialize` went to rmcp, real or implicit).
    begun: bool,
    ended: watch::Sender<bool>,
}

impl<R> std::fmt::Debug for LineTransport<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport")
            .field("begun", &self.begun)
            .finish_non_exhaustive()
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> LineTransport<R> {
    /// A transport reading `reader` and queueing its output to `out` (a [`write_loop`]).
    pub fn new(
        reader: R,
        out: mpsc::UnboundedSender<Outgoing>,
        spools: Arc<Spools>,
    ) -> (Self, Ended) {
        let (ended, watcher) = watch::channel(false);
        let transport = LineTransport {
            reader,
            splitter: LineSplitter::new(MAX_LINE_BYTES),
            buffer: vec![0u8; 64 * 1024],
            pieces: Vec::new(),
            ready: VecDeque::new(),
            out,
            stand_ins: Arc::default(),
            spools,
            begun: false,
            ended,
        };
        (transport, Ended(watcher))
    }

    fn answer(&self, id: &RawValue, error: RpcError) {
        let _ = self.out.send(Outgoing::Line(error_line(id, &error)));
    }

    fn take_pieces(&mut self) {
        let pieces = std::mem::take(&mut self.pieces);
        for piece in pieces {
            match piece {
                Piece::Line(bytes) => self.decode_bytes(&bytes),
                Piece::TooLong { len } => self.answer(
                    &null_id(),
                    RpcError::new(
                        codes::PARSE_ERROR,
                        format!(
                            "a line of {len} bytes is longer than the {MAX_LINE_BYTES}-byte \
                             limit and was skipped"
                        ),
                    ),
                ),
            }
        }
    }

    fn decode_bytes(&mut self, bytes: &[u8]) {
        match std::str::from_utf8(bytes) {
            Ok(line) => self.decode_line(line),
            Err(error) => {
                // Answer the request if its id can still be read, so the caller never hangs.
                let lossy = String::from_utf8_lossy(bytes);
                self.answer(
                    &salvage_id(&lossy),
                    RpcError::new(
                        codes::PARSE_ERROR,
                        format!(
                            "the line is not valid UTF-8 (invalid byte at offset {}); send \
                             UTF-8 JSON",
                            error.valid_up_to()
                        ),
                    ),
                );
            }
        }
    }

    fn decode_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let message: Value = match serde_json::from_str(line) {
            Ok(message) => message,
            Err(error) => {
                self.answer(
                    &salvage_id(line),
                    RpcError::new(codes::PARSE_ERROR, not_json_reason(line, &error)),
                );
                return;
            }
        };
        let Value::Object(mut object) = message else {
            self.answer(
                &null_id(),
                RpcError::new(
                    codes::INVALID_REQUEST,
                    "expected one JSON-RPC message object per line (batches are not supported)",
                ),
            );
            return;
        };
        let raw_id =
            object
                .contains_key("id")
                .then(|| match serde_json::from_str::<Incoming<'_>>(line) {
                    Ok(Incoming { id: Some(raw) }) => raw.to_owned(),
                    _ => null_id(),
                });
        let method = match object.get("method") {
            None => None,
            Some(Value::String(method)) => Some(method.clone()),
            Some(other) => {
                let id = raw_id.unwrap_or_else(null_id);
                self.answer(
                    &id,
                    RpcError::new(
                        codes::INVALID_REQUEST,
                        format!("`method` must be a string, got {other}"),
                    ),
                );
                return;
            }
        };
        // rmcp insists on `"jsonrpc": "2.0"`; a client that leaves it out is still served.
        object.insert("jsonrpc".into(), json!("2.0"));
        match (method, raw_id) {
            (Some(method), Some(raw_id)) if !SERVED_METHODS.contains(&method.as_str()) => {
                self.answer(
                    &raw_id,
                    RpcError::new(
                        codes::METHOD_NOT_FOUND,
                        format!(
                            "method `{method}` is not supported by cc-harness (it serves {})",
                            SERVED_METHODS.join(", ")
                        ),
                    ),
                );
            }
            (Some(method), Some(raw_id)) => self.decode_request(&method, raw_id, object),
            (Some(method), None) => {
                if method == "notifications/cancelled" {
                    self.point_cancel_at_stand_in(line, &mut object);
                }
                match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
                    Ok(message) => self.deliver(message),
                    Err(error) => tracing::debug!(%method, %error, "notification ignored"),
                }
            }
            (None, Some(_)) => {
                match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
                    Ok(message) => self.deliver(message),
                    Err(error) => tracing::warn!(%error, "a response that is not JSON-RPC"),
                }
            }
            (None, None) => self.answer(
                &null_id(),
                RpcError::new(
                    codes::INVALID_REQUEST,
                    "a message needs a `method` (request or notification) or an `id` (response)",
                ),
            ),
        }
    }

    /// A request of a served method: its id given a stand-in when rmcp cannot hold it, then
    /// delivered, or answered with why its parameters are invalid.
    fn decode_request(
        &mut self,
        method: &str,
        raw_id: Box<RawValue>,
        mut object: serde_json::Map<String, Value>,
    ) {
        let holdable = match object.get("id") {
            Some(Value::String(_)) => true,
            Some(Value::Number(number)) => number.as_i64().is_some(),
            _ => false,
        };
        if !holdable {
            let stand_in = lock(&self.stand_ins).give(&raw_id);
            object.insert("id".into(), Value::String(stand_in));
        }
        if method == "initialize" {
            fill_initialize(&mut object);
        }
        let params = object.get("params").cloned();
        match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
            Ok(JsonRpcMessage::Request(request))
                if !matches!(&request.request, ClientRequest::CustomRequest(custom)
                    if SERVED_METHODS.contains(&custom.method.as_str())) =>
            {
                self.deliver(JsonRpcMessage::Request(request));
            }
            Ok(_) | Err(_) => {
                if !holdable {
                    lock(&self.stand_ins).forget(&raw_id);
                }
                let error = RpcError::new(codes::INVALID_PARAMS, params_error(method, params));
                self.answer(&raw_id, error);
            }
        }
    }

    /// A cancellation of a request whose id had a stand-in names the stand-in.
    fn point_cancel_at_stand_in(&self, line: &str, object: &mut serde_json::Map<String, Value>) {
        #[derive(Deserialize)]
        struct Notification<'a> {
            #[serde(borrow)]
            params: CancelParams<'a>,
        }
        let Ok(notification) = serde_json::from_str::<Notification<'_>>(line) else {
            return;
        };
        let stand_in = lock(&self.stand_ins)
            .stand_in_by_raw
            .get(notification.params.request_id.get())
            .cloned();
        if let (Some(stand_in), Some(Value::Object(params))) = (stand_in, object.get_mut("params"))
        {
            params.insert("requestId".into(), Value::String(stand_in));
        }
    }

    /// Hands a decoded message to rmcp; the first one begins the session.
    fn deliver(&mut self, message: ClientJsonRpcMessage) {
        if !self.begun {
            match &message {
                JsonRpcMessage::Request(request)
                    if matches!(request.request, ClientRequest::InitializeRequest(_)) => {}
                JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => {
                    self.ready.push_back(implicit_initialize());
                }
                // Nothing was asked of the client yet: a response cannot be for us.
                JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {
                    tracing::debug!("a response before the session began, ignored");
                    return;
                }
            }
            self.begun = true;
        }
        self.ready.push_back(message);
    }

    fn encode(&self, message: ServerJsonRpcMessage) -> Option<Outgoing> {
        match message {
            JsonRpcMessage::Response(response) => {
                if is_implicit(&response.id) {
                    return None;
                }
                let id = lock(&self.stand_ins).written(&response.id);
                if let ServerResult::CallToolResult(result) = &response.result {
                    if let Some(spooled) = self.spools.take(result.structured_content.as_ref()) {
                        return Some(match spooled.into_pieces() {
                            Ok(pieces) => response_in_pieces(id, pieces),
                            Err(error) => Outgoing::Line(error_line(
                                &id,
                                &RpcError::new(
                                    codes::INTERNAL_ERROR,
                                    format!("the result could not be written: {error}"),
                                ),
                            )),
                        });
                    }
                }
                Some(Outgoing::Line(encode_line(&Envelope::<_, ()> {
                    jsonrpc: "2.0",
                    id: &id,
                    result: Some(&response.result),
                    error: None,
                })))
            }
            JsonRpcMessage::Error(error) => {
                if error.id.as_ref().is_some_and(is_implicit) {
                    tracing::warn!(error = %error.error.message, "the implicit initialize failed");
                    return None;
                }
                let id = match &error.id {
                    Some(id) => lock(&self.stand_ins).written(id),
                    None => null_id(),
                };
                Some(Outgoing::Line(encode_line(&Envelope::<(), _> {
                    jsonrpc: "2.0",
                    id: &id,
                    result: None,
                    error: Some(&error.error),
                })))
            }
            other => Some(Outgoing::Line(encode_line(&other))),
        }
    }
}

fn is_implicit(id: &NumberOrString) -> bool {
    matches!(id, NumberOrString::String(text) if &**text == IMPLICIT_INITIALIZE_ID)
}

/// Why the params of `method` (one we serve) could not be decoded.
fn params_error(method: &str, params: Option<Value>) -> String {
    let params = params.unwrap_or(Value::Null);
    let detail = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        _ => None,
    };
    match detail {
        Some(error) => format!("the params of `{method}` are not valid: {error}"),
        None => format!("the params of `{method}` are not valid"),
    }
}

/// What an `initialize` left out (rmcp requires every field; we take the defaults).
fn fill_initialize(object: &mut serde_json::Map<String, Value>) {
    let params = object
        .entry("params")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Value::Object(params) = params else {
        return;
    };
    params
        .entry("protocolVersion")
        .or_insert_with(|| json!(super::PROTOCOL_VERSIONS[0]));
    params.entry("capabilities").or_insert_with(|| json!({}));
    params
        .entry("clientInfo")
        .or_insert_with(|| json!({"name": "a client that gave no name", "version": "0"}));
}

/// The `initialize` a client that skipped it is taken to have sent.
fn implicit_initialize() -> ClientJsonRpcMessage {
    let request = json!({
        "jsonrpc": "2.0",
        "id": IMPLICIT_INITIALIZE_ID,
        "method": "initialize",
        "params": {
            "protocolVersion": super::PROTOCOL_VERSIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "a client that sent no initialize", "version": "0"},
        },
    });
    #[allow(clippy::expect_used)] // A constant, valid initialize request.
    serde_json::from_value(request).expect("the implicit initialize is a valid request")
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Queued now, in the order rmcp sends, so a call's progress precedes its response.
        let sent = match self.encode(item) {
            Some(outgoing) => self.out.send(outgoing).map_err(|_closed| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the writer has ended")
            }),
            None => Ok(()),
        };
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        // Cancel-safe (rmcp polls it in a select): a read's bytes are decoded before the
        // future completes, and decoded messages wait in `ready`.
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            if *self.ended.borrow() {
                if !self.begun {
                    return None;
                }
                // `serve` ends the session once calls in flight had their time.
                std::future::pending::<()>().await;
            }
            match self.reader.read(&mut self.buffer).await {
                Ok(0) => {
                    self.splitter.finish(&mut self.pieces);
                    self.take_pieces();
                    let _ = self.ended.send(true);
                }
                Ok(n) => {
                    self.splitter.feed(&self.buffer[..n], &mut self.pieces);
                    self.take_pieces();
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    tracing::warn!(%error, "reading the MCP input failed; closing");
                    let _ = self.ended.send(true);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The id of a message that could not be parsed as it is, when a lenient reading finds one.
/// Why a line is not JSON: a lone UTF-16 surrogate is named, as no JSON parser says it.
fn not_json_reason(line: &str, error: &serde_json::Error) -> String {
    if line.contains("\\u") && serde_json::from_str::<Value>(&replace_lone_surrogates(line)).is_ok()
    {
        "a string holds a lone UTF-16 surrogate (such as \\udcff), which no Unicode text can \
         hold; send valid Unicode"
            .to_owned()
    } else {
        format!("the line is not JSON: {error}")
    }
}

fn salvage_id(line: &str) -> Box<RawValue> {
    let cleaned = replace_lone_surrogates(line);
    let Ok(Value::Object(_)) = serde_json::from_str::<Value>(&cleaned) else {
        return null_id();
    };
    match serde_json::from_str::<Incoming<'_>>(&cleaned) {
        Ok(Incoming { id: Some(raw) }) => raw.to_owned(),
        _ => null_id(),
    }
}

/// One piece of input, as [`LineSplitter`] cuts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// A complete line, without its `\n` (and without a `\r` before it).
    Line(Vec<u8>),
    /// A line longer than the maximum: its bytes were dropped, `len` counts them.
    TooLong {
        /// How many bytes the line had (up to its newline or the end of input).
        len: u64,
    },
}

/// Splits a byte stream into lines of at most `max` bytes. Never fails and never holds more
/// than `max` bytes: a longer line is skipped through its newline and reported as
/// [`Piece::TooLong`], and the next line is read normally.
#[derive(Debug)]
pub struct LineSplitter {
    max: usize,
    buffer: Vec<u8>,
    /// Bytes of an over-long line dropped so far, while skipping to its end.
    skipping: Option<u64>,
}

impl LineSplitter {
    /// A splitter for lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        LineSplitter {
            max,
            buffer: Vec::new(),
            skipping: None,
        }
    }

    /// Takes the next bytes read; complete lines go to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Piece>) {
        while !bytes.is_empty() {
            let newline = memchr::memchr(b'\n', bytes);
            let (chunk, rest, ended) = match newline {
                Some(at) => (&bytes[..at], &bytes[at + 1..], true),
                None => (bytes, &[][..], false),
            };
            bytes = rest;
            if let Some(dropped) = &mut self.skipping {
                *dropped += chunk.len() as u64;
                if ended {
                    out.push(Piece::TooLong { len: *dropped + 1 });
                    self.skipping = None;
                }
                continue;
            }
            if self.buffer.len() + chunk.len() > self.max {
                let dropped = (self.buffer.len() + chunk.len()) as u64;
                self.buffer = Vec::new();
                if ended {
                    out.push(Piece::TooLong { len: dropped + 1 });
                } else {
                    self.skipping = Some(dropped);
                }
                continue;
            }
            self.buffer.extend_from_slice(chunk);
            if ended {
                out.push(Piece::Line(take_line(&mut self.buffer)));
            }
        }
    }

    /// The input ended: a last line without a newline still counts.
    pub fn finish(&mut self, out: &mut Vec<Piece>) {
        if let Some(dropped) = self.skipping.take() {
            out.push(Piece::TooLong { len: dropped });
        } else if !self.buffer.is_empty() {
            out.push(Piece::Line(take_line(&mut self.buffer)));
        }
    }
}

fn take_line(buffer: &mut Vec<u8>) -> Vec<u8> {
    let mut line = std::mem::take(buffer);
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

/// Replaces `\uD800`–`\uDFFF` escapes that are not part of a surrogate pair with `\uFFFD`,
/// so a message holding a lone surrogate (which no UTF-8 string can hold) can still be read
/// far enough to answer it. Escaped backslashes are respected.
pub fn replace_lone_surrogates(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    let hex = |at: usize| -> Option<u16> {
        let digits = text.get(at..at + 4)?;
        u16::from_str_radix(digits, 16).ok()
    };
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = hex(i + 2) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if is_high {
            let paired = bytes.get(i + 6) == Some(&b'\\')
                && bytes.get(i + 7) == Some(&b'u')
                && hex(i + 8).is_some_and(|next| (0xDC00..0xE000).contains(&next));
            if paired {
                i += 12;
                continue;
            }
        }
        if is_high || is_low {
            out.push_str(&text[copied..i]);
            out.push_str("\\uFFFD");
            i += 6;
            copied = i;
            continue;
        }
        i += 6;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Cases per property (`CC_FUZZ_CASES` raises the budget for a longer hunt).
    fn cases() -> u32 {
        std::env::var("CC_FUZZ_CASES")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(10_000)
    }

    fn split(input: &[u8], cuts: &[usize], max: usize) -> Vec<Piece> {
        let mut splitter = LineSplitter::new(max);
        let mut out = Vec::new();
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        points.push(0);
        points.push(input.len());
        points.sort_unstable();
        for window in points.windows(2) {
            splitter.feed(&input[window[0]..window[1]], &mut out);
        }
        splitter.finish(&mut out);
        out
    }

    /// A response written in pieces is one line; when a piece fails, the line ends there
    /// and an error response for the same id follows, so the caller is not left waiting.
    #[tokio::test]
    async fn a_response_in_pieces_is_one_line_or_an_error_after_a_failed_piece() {
        let (sender, queue) = mpsc::unbounded_channel();
        let id = to_raw(&json!(12345678901234567890u64));
        let good = vec![Ok(b"{\"a\":".to_vec()), Ok(b"[1,2]}".to_vec())];
        sender
            .send(response_in_pieces(id, good.into_iter()))
            .unwrap();
        let bad = vec![
            Ok(b"{\"a\":[".to_vec()),
            Err(std::io::Error::other("disk gone")),
        ];
        sender
            .send(response_in_pieces(to_raw(&json!("b")), bad.into_iter()))
            .unwrap();
        sender
            .send(Outgoing::Line(encode_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/progress"}),
            )))
            .unwrap();
        drop(sender);
        let mut out = Vec::new();
        write_loop(&mut out, queue).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"result":{"a":[1,2]}}"#
        );
        assert_eq!(lines[1], r#"{"jsonrpc":"2.0","id":"b","result":{"a":["#);
        let error: Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(error["id"], "b");
        assert_eq!(error["error"]["code"], codes::INTERNAL_ERROR);
        assert!(error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disk gone"));
        assert!(lines[3].contains("notifications/progress"));
        assert_eq!(lines.len(), 4);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        /// Any bytes, cut anywhere: the same pieces, no line over the maximum, and every byte
        /// accounted for (kept in a line, or counted in a skipped one).
        #[test]
        fn the_line_reader_is_chunking_independent_and_bounded(
            input in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'x'), any::<u8>()], 0..300),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
            max in 0usize..40,
        ) {
            let whole = split(&input, &[], max);
            let chunked = split(&input, &cuts, max);
            prop_assert_eq!(&whole, &chunked);
            for piece in &whole {
                if let Piece::Line(line) = piece {
                    prop_assert!(line.len() <= max);
                }
            }
        }

        /// With room for every line, the pieces are exactly the input's lines (a `\r` before
        /// a newline dropped, a last line without a newline kept).
        #[test]
        fn lines_are_the_inputs_lines(
            input in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'x'), any::<u8>()], 0..300),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            let got = split(&input, &cuts, usize::MAX);
            let mut want: Vec<Vec<u8>> = input.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
            if want.last().is_some_and(Vec::is_empty) {
                want.pop();
            }
            let want: Vec<Piece> = want
                .into_iter()
                .map(|mut line| {
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    Piece::Line(line)
                })
                .collect();
            prop_assert_eq!(got, want);
        }

        /// Surrogate repair never panics and only ever turns text into valid JSON-string text
        /// where it found a lone surrogate.
        #[test]
        fn lone_surrogate_repair_never_panics(text in "(\\\\\\\\|\\\\u[dD][89a-fA-F][0-9a-fA-F]{2}|\\\\u[0-9a-f]{0,4}|[a\"\\\\])*") {
            let repaired = replace_lone_surrogates(&text);
            prop_assert_eq!(replace_lone_surrogates(&repaired), repaired.clone());
        }
    }
}
