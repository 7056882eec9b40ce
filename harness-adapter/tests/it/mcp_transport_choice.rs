//! Why the MCP front runs rmcp over our own line transport rather than rmcp's stdio one: the
//! same bytes sent to a bare rmcp server over rmcp's `(reader, writer)` transport and to
//! `cc_harness_adapter::mcp::serve`. rmcp skips a line that is not JSON without a word (by
//! design, rust-sdk issue #938), so a request with one bad byte never gets an answer and its
//! caller waits forever; and it cannot hold an id beyond `i64`, so such a request gets an
//! id-less -32600. Ours answers both, with the id as written, and reads on.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::sync::Arc;
use std::time::Duration;

use cc_harness_adapter::mcp::{serve, ServeOptions};
use cc_tools::{AllowAll, RegistryBuilder, Run, Surface, WorkspaceRoot};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const BAD_BYTE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}";
const HUGE_ID: &[u8] = br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#;
const LAST_PING: &[u8] = br#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#;

/// A server with no tools, on rmcp's own transport.
struct Bare;

impl rmcp::ServerHandler for Bare {}

/// Sends the lines, then reads every line written until the answer to the last ping.
async fn exchange(mut input: DuplexStream, output: DuplexStream) -> Vec<String> {
    for line in [INITIALIZE, BAD_BYTE, HUGE_ID, LAST_PING] {
        input.write_all(line).await.unwrap();
        input.write_all(b"\n").await.unwrap();
    }
    let mut lines = BufReader::new(output).lines();
    let mut seen = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the server is still writing");
        let last = serde_json::from_str::<Value>(&line).unwrap()["id"] == "last";
        seen.push(line);
        if last {
            return seen;
        }
    }
}

fn answered_with_id(lines: &[String], id: &str) -> bool {
    lines
        .iter()
        .any(|line| line.contains(&format!(r#""id":{id}"#)) && line.contains(r#""error""#))
}

#[tokio::test]
async fn rmcp_stdio_transport_leaves_bad_lines_unanswered_and_ours_answers_them() {
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let running = tokio::spawn(async move {
        let service = rmcp::ServiceExt::serve(Bare, (server_in, server_out)).await;
        if let Ok(service) = service {
            let _ = service.waiting().await;
        }
    });
    let theirs = exchange(client_in, client_out).await;
    running.abort();
    assert!(
        !answered_with_id(&theirs, "1"),
        "rmcp's transport answered the bad byte: {theirs:?}"
    );
    assert!(
        !answered_with_id(&theirs, "123456789012345678901234567890"),
        "rmcp's transport answered the huge id: {theirs:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let root = WorkspaceRoot::new(dir.path()).unwrap();
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let factory = Box::new(move |_peer| {
        RegistryBuilder::new(Run {
            conversation_id: "t".into(),
            root: root.clone(),
            surface: Surface::Full,
            approver: Arc::new(AllowAll),
        })
        .build()
    });
    let server = tokio::spawn(serve(
        server_in,
        server_out,
        ServeOptions::default(),
        factory,
    ));
    let ours = exchange(client_in, client_out).await;
    server.abort();
    assert!(answered_with_id(&ours, "1"), "{ours:?}");
    let huge: Vec<&String> = ours
        .iter()
        .filter(|line| line.contains(r#""id":123456789012345678901234567890"#))
        .collect();
    assert_eq!(huge.len(), 1, "{ours:?}");
    assert!(
        huge[0].contains(r#""result":{}"#),
        "the huge-id ping is served: {huge:?}"
    );
}
