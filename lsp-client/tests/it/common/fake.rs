//! An in-memory language server for protocol edge cases (in addition to the real servers,
//! never instead of them).
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cc_framing::{FrameReader, FrameWriter};
use cc_lsp_client::transport::{Connection, Incoming};
use cc_lsp_client::{LanguageServer, ServerSpec, Timing};
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// The server side of an in-memory connection.
pub struct Peer {
    out: mpsc::UnboundedSender<Value>,
    /// Where the client hears the server's stderr lines (its log).
    logs: mpsc::UnboundedSender<Incoming>,
    received: mpsc::UnboundedReceiver<Value>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Peer {
    /// Dropping the peer closes its end of the pipe, as a dying server would.
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Peer {
    /// Sends a message to the client.
    pub fn send(&self, message: Value) {
        self.out.send(message).expect("peer writer alive");
    }

    /// Prints `line` on the server's stderr. It reaches the client on its own path, not in
    /// order with the messages.
    pub fn log(&self, line: &str) {
        self.logs
            .send(Incoming::Log { line: line.into() })
            .expect("client alive");
    }

    /// clangd's status of `uri` (`idle`, `parsing includes`, …).
    pub fn file_status(&self, uri: &str, state: &str) {
        self.send(json!({"jsonrpc": "2.0", "method": "textDocument/clangd.fileStatus", "params": {"uri": uri, "state": state}}));
    }

    /// Publishes diagnostics for `uri`.
    pub fn publish(&self, uri: &str, version: Option<i64>, messages: &[&str]) {
        let diagnostics: Vec<Value> = messages
            .iter()
            .map(|m| json!({"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "severity": 1, "message": m}))
            .collect();
        let mut params = json!({"uri": uri, "diagnostics": diagnostics});
        if let Some(version) = version {
            params["version"] = json!(version);
        }
        self.send(json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}));
    }

    /// The next message the client sent whose method is `method` (others are skipped).
    pub async fn expect(&mut self, method: &str) -> Value {
        let wait = async {
            loop {
                let message = self.received.recv().await.expect("client connection open");
                if message.get("method").and_then(Value::as_str) == Some(method) {
                    return message;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("the client never sent `{method}`"))
    }

    /// The next message the client sent.
    pub async fn expect_any(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(10), self.received.recv())
            .await
            .expect("a message in time")
            .expect("client connection open")
    }

    /// The client's response to our request `id`.
    pub async fn response(&mut self, id: i64) -> Value {
        let wait = async {
            loop {
                let message = self.received.recv().await.expect("client connection open");
                if message.get("method").is_none() && message.get("id") == Some(&json!(id)) {
                    return message;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("no response to request {id}"))
    }
}

/// A connection whose other end is a [`Peer`]; the peer answers `initialize` with
/// `capabilities` by itself.
pub fn pipe(
    capabilities: Value,
    buffer: usize,
) -> (Connection, mpsc::UnboundedReceiver<Incoming>, Peer) {
    let (client_io, server_io) = tokio::io::duplex(buffer);
    let (client_read, client_write) = tokio::io::split(client_io);
    let (server_read, server_write) = tokio::io::split(server_io);
    let (conn, mut from_conn) = Connection::from_io("fake", client_read, client_write);
    // The connection's messages and the injected log lines meet in one channel, as a real
    // server's stdout and stderr do.
    let (logs, incoming) = mpsc::unbounded_channel::<Incoming>();
    let forward = logs.clone();
    let forward_task = tokio::spawn(async move {
        while let Some(message) = from_conn.recv().await {
            if forward.send(message).is_err() {
                return;
            }
        }
    });
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
    let (in_tx, in_rx) = mpsc::unbounded_channel::<Value>();
    let writer_task = tokio::spawn(async move {
        let mut writer = FrameWriter::new(server_write);
        while let Some(message) = out_rx.recv().await {
            let body = serde_json::to_vec(&message).expect("json");
            if writer.write_frame(&body).await.is_err() {
                return;
            }
        }
    });
    let auto = out_tx.clone();
    let reader_task = tokio::spawn(async move {
        let mut reader = FrameReader::new(server_read);
        while let Ok(Some(body)) = reader.read_frame().await {
            let message: Value = serde_json::from_slice(&body).expect("client sends JSON");
            if message.get("method").and_then(Value::as_str) == Some("initialize") {
                let _ = auto.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities}}));
            }
            if in_tx.send(message).is_err() {
                return;
            }
        }
    });
    (
        conn,
        incoming,
        Peer {
            out: out_tx,
            logs,
            received: in_rx,
            tasks: vec![writer_task, reader_task, forward_task],
        },
    )
}

/// An initialized [`LanguageServer`] over a fake peer.
pub async fn server(
    capabilities: Value,
    timing: Timing,
    settings: Value,
) -> (Arc<LanguageServer>, Peer) {
    let (conn, incoming, peer) = pipe(capabilities, 64 * 1024);
    let spec = ServerSpec {
        settings,
        timing,
        ..ServerSpec::new("fake", &["fake"], &[])
    };
    let server = LanguageServer::initialize(
        "fake",
        &spec,
        Path::new("/fake"),
        Path::new("/w"),
        conn,
        incoming,
        None,
    )
    .await
    .expect("initialize");
    (server, peer)
}
