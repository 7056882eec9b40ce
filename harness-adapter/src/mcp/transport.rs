//! Newline-delimited JSON-RPC 2.0 over a byte stream, both directions.
//!
//! The [`Peer`] sends notifications and requests to the client (progress, elicitation) and
//! routes the client's responses back to the waiting request. Every message goes through one
//! writer task, so concurrent tool calls never interleave their lines. Incoming bytes are
//! split by [`LineSplitter`], which bounds a line's length and never fails on bad bytes:
//! what is not UTF-8 or not JSON is answered with an error and the next line is read.
//! Request ids are kept as the client wrote them ([`RequestId`]): a huge integer id comes
//! back as the same integer, never as a float.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
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

/// A request id exactly as the client wrote it (a string, or a number of any size).
#[derive(Debug, Clone)]
pub struct RequestId(Box<RawValue>);

impl RequestId {
    /// The id of a response to a message whose id could not be read.
    pub fn null() -> Self {
        RequestId::from_value(&Value::Null)
    }

    /// The id written as `value` (for ids that were parsed, not read raw).
    pub fn from_value(value: &Value) -> Self {
        let text = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
        match RawValue::from_string(text) {
            Ok(raw) => RequestId(raw),
            // Serializing a `Value` always gives valid JSON; null is the safe answer anyway.
            Err(_) => RequestId::null_raw(),
        }
    }

    /// A raw id read from the client's message.
    pub fn from_raw(raw: &RawValue) -> Self {
        RequestId(raw.to_owned())
    }

    fn null_raw() -> Self {
        #[allow(clippy::expect_used)] // `null` is valid JSON: this cannot fail.
        RequestId(RawValue::from_string("null".to_owned()).expect("null is JSON"))
    }

    /// The id's JSON text, which also keys it (cancellation).
    pub fn key(&self) -> &str {
        self.0.get()
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

#[derive(Serialize)]
struct Response<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

type Pending = HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>;

/// The bytes of a message written piece by piece, and what to send when a piece fails.
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

/// Our side of the connection.
#[derive(Debug)]
pub struct Peer {
    outgoing: mpsc::UnboundedSender<Outgoing>,
    next_id: AtomicI64,
    pending: Mutex<Pending>,
    client_capabilities: OnceLock<Value>,
}

impl Peer {
    /// A peer whose messages go to `outgoing`.
    pub fn new(outgoing: mpsc::UnboundedSender<Outgoing>) -> Arc<Self> {
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
        match serde_json::to_vec(&message) {
            Ok(line) => self.send_line(line),
            Err(error) => tracing::warn!(%error, "an outgoing message could not be encoded"),
        }
    }

    fn send_line(&self, mut line: Vec<u8>) {
        line.push(b'\n');
        // A closed channel means the writer ended with the connection: nothing to do.
        let _ = self.outgoing.send(Outgoing::Line(line));
    }

    /// Sends a response to request `id` whose result is written piece by piece.
    pub fn respond_pieces(
        &self,
        id: &RequestId,
        result: impl Iterator<Item = std::io::Result<Vec<u8>>> + Send + 'static,
    ) {
        let open = format!(r#"{{"jsonrpc":"2.0","id":{},"result":"#, id.key()).into_bytes();
        let pieces = std::iter::once(Ok(open))
            .chain(result)
            .chain(std::iter::once(Ok(b"}".to_vec())));
        let id = id.clone();
        let on_error = move |error: std::io::Error| {
            let response = Response {
                jsonrpc: "2.0",
                id: &id,
                result: None,
                error: Some(
                    RpcError::new(
                        codes::INTERNAL_ERROR,
                        format!("the result could not be read back from its spool: {error}"),
                    )
                    .to_json(),
                ),
            };
            let mut line = serde_json::to_vec(&response).unwrap_or_default();
            line.push(b'\n');
            line
        };
        let _ = self.outgoing.send(Outgoing::Pieces {
            pieces: Box::new(pieces),
            on_error: Box::new(on_error),
        });
    }

    /// Sends a response to request `id`, echoing the id as the client wrote it.
    pub fn respond(&self, id: &RequestId, result: Result<Value, RpcError>) {
        let (result, error) = match &result {
            Ok(value) => (Some(value), None),
            Err(error) => (None, Some(error.to_json())),
        };
        let response = Response {
            jsonrpc: "2.0",
            id,
            result,
            error,
        };
        match serde_json::to_vec(&response) {
            Ok(line) => self.send_line(line),
            Err(error) => tracing::warn!(%error, "a response could not be encoded"),
        }
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
        let peer = Peer::new(sender);
        let id = RequestId::from_value(&json!(12345678901234567890u64));
        let good = vec![Ok(b"{\"a\":".to_vec()), Ok(b"[1,2]}".to_vec())];
        peer.respond_pieces(&id, good.into_iter());
        let bad = vec![
            Ok(b"{\"a\":[".to_vec()),
            Err(std::io::Error::other("disk gone")),
        ];
        peer.respond_pieces(&RequestId::from_value(&json!("b")), bad.into_iter());
        peer.notify("notifications/progress", json!({"progress": 1}));
        drop(peer);
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
