//! Protocol edges of the MCP server, in process over an in-memory pipe (in addition to the
//! real-client test): malformed lines, unknown methods, cancellation, progress, shutdown.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cc_harness_adapter::mcp::{serve, ServeOptions};
use cc_tools::{
    CallContext, RegistryBuilder, Shutdown, Tier, Tool, ToolError, ToolOutput, WorkspaceRoot,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// Sleeps for `ms` milliseconds, reporting progress every 10 ms.
struct Slow;

#[async_trait]
impl Tool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> &str {
        "sleeps"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
        for step in 0..(ms / 10) {
            ctx.report_progress(step as f64, Some((ms / 10) as f64), Some("sleeping"));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(ToolOutput::new(json!({"slept": ms})))
    }
}

/// Waits until its call is cancelled, then says so through `STOPPED`.
struct Patient;

static STOPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[async_trait]
impl Tool for Patient {
    fn name(&self) -> &str {
        "patient"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> &str {
        "waits for its cancellation"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, ctx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ctx.cancellation().cancelled().await;
        STOPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(ToolOutput::new(json!({"stopped": true})))
    }
}

/// Owns a real process group, like a language-server pool does.
struct ProcessOwner(Mutex<Option<cc_process::GroupChild>>);

#[async_trait]
impl Shutdown for ProcessOwner {
    async fn shutdown(&self) {
        let child = self.0.lock().unwrap().take();
        if let Some(mut child) = child {
            let _ = child.terminate(Duration::from_millis(500)).await;
        }
    }
}

struct Client {
    input: DuplexStream,
    output: Lines<BufReader<DuplexStream>>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.input.write_all(line.as_bytes()).await.unwrap();
    }
    async fn send_raw(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.output.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("the server is still writing");
        serde_json::from_str(&line).unwrap()
    }
    /// The next message that is not a notification.
    async fn response(&mut self) -> Value {
        loop {
            let message = self.next().await;
            if message.get("id").is_some() {
                return message;
            }
        }
    }
}

fn start(
    dir: &std::path::Path,
    owner: Option<Arc<ProcessOwner>>,
) -> (Client, tokio::task::JoinHandle<std::io::Result<()>>) {
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let root = WorkspaceRoot::new(dir).unwrap();
    let factory = Box::new(move |_peer| {
        let mut builder = RegistryBuilder::new(
            cc_tools::testing::RunBuilder::new(root.clone())
                .conversation("t")
                .build(),
        )
        .tool(Arc::new(Slow))
        .tool(Arc::new(Patient));
        if let Some(owner) = &owner {
            builder.add_shutdown(owner.clone());
        }
        builder.build()
    });
    let options = ServeOptions {
        drain_grace: Duration::from_millis(300),
        shutdown_grace: Duration::from_secs(2),
        cancel_grace: Duration::from_secs(5),
    };
    let server = tokio::spawn(serve(server_in, server_out, options, factory));
    let client = Client {
        input: client_in,
        output: BufReader::new(client_out).lines(),
    };
    (client, server)
}

#[tokio::test]
async fn malformed_lines_and_unknown_methods_get_json_rpc_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _server) = start(dir.path(), None);
    client.send_raw("{this is not json").await;
    let error = client.next().await;
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(error["id"], Value::Null);

    client.send_raw("[1, 2]").await;
    assert_eq!(client.next().await["error"]["code"], -32600);

    client
        .send(json!({"jsonrpc": "2.0", "id": "a", "method": "resources/list"}))
        .await;
    let unknown = client.next().await;
    assert_eq!(unknown["id"], "a");
    assert_eq!(unknown["error"]["code"], -32601);

    client
        .send(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
        .await;
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );

    client
        .send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {}}))
        .await;
    assert_eq!(client.next().await["error"]["code"], -32602);

    client
        .send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "nope"}}),
        )
        .await;
    let unknown_tool = client.next().await;
    assert_eq!(unknown_tool["result"]["isError"], true);
    assert_eq!(
        unknown_tool["result"]["structuredContent"]["error"]["kind"],
        "unknown_tool"
    );
}

#[tokio::test]
async fn bad_bytes_bad_methods_and_odd_ids_never_end_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _server) = start(dir.path(), None);
    // Invalid UTF-8: answered (with the id, which can still be read) and the run goes on.
    client
        .input
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\",\"x\":\"\xff\"}\n")
        .await
        .unwrap();
    let answer = client.next().await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], 11);
    client
        .input
        .write_all(b"\xc3\x28 not json\n")
        .await
        .unwrap();
    let answer = client.next().await;
    assert_eq!(answer["error"]["code"], -32700);
    assert_eq!(answer["id"], Value::Null);
    // A method that is not a string.
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":12,"method":5}"#)
        .await;
    let answer = client.next().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], 12);
    // Ids come back exactly as written: a huge integer stays an integer.
    let huge = "123456789012345678901234567890";
    client
        .send_raw(&format!(
            r#"{{"jsonrpc":"2.0","id":{huge},"method":"ping"}}"#
        ))
        .await;
    let line = tokio::time::timeout(Duration::from_secs(10), client.output.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(line.contains(&format!(r#""id":{huge}"#)), "{line}");
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":"x\"y","method":"ping"}"#)
        .await;
    assert_eq!(client.next().await["id"], "x\"y");
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}"#)
        .await;
    let line = client.output.next_line().await.unwrap().unwrap();
    assert!(line.contains(r#""id":-9007199254740993"#), "{line}");
    // A lone surrogate gets an answer, never a hang.
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"slow","arguments":{"s":"\udcff"}}}"#)
        .await;
    let answer = client.next().await;
    assert_eq!(answer["id"], 13, "{answer}");
    assert_eq!(answer["error"]["code"], -32700);
    // An over-long line is skipped whole, and the next one is read.
    let mut long = vec![b'x'; cc_harness_adapter::mcp::MAX_LINE_BYTES + 10];
    long.push(b'\n');
    client.input.write_all(&long).await.unwrap();
    assert_eq!(client.next().await["error"]["code"], -32700);
    client
        .send(json!({"jsonrpc": "2.0", "id": 14, "method": "ping"}))
        .await;
    assert_eq!(client.next().await["id"], 14);
}

#[tokio::test]
async fn cancellation_fires_the_calls_cancellation() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _server) = start(dir.path(), None);
    let before = STOPPED.load(std::sync::atomic::Ordering::SeqCst);
    client
        .send(json!({"jsonrpc": "2.0", "id": "p", "method": "tools/call", "params": {"name": "patient"}}))
        .await;
    // Cancel once it runs (a call cancelled before it starts never starts at all).
    for _ in 0..500 {
        if STARTED.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "p", "reason": "test"}}))
        .await;
    // The tool saw its cancellation and returned by itself (no abort needed), and its
    // response was not sent: the next response is the ping's.
    for _ in 0..200 {
        if STOPPED.load(std::sync::atomic::Ordering::SeqCst) > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(STOPPED.load(std::sync::atomic::Ordering::SeqCst) > before);
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    assert_eq!(client.response().await["id"], 3);
}

/// An id rmcp cannot hold (beyond `i64`) reaches it as a stand-in: the call still runs, and
/// a cancellation naming the id as the client wrote it still reaches the call.
#[tokio::test]
async fn a_call_whose_id_rmcp_cannot_hold_is_cancelled_by_that_id() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _server) = start(dir.path(), None);
    let huge = "123456789012345678901234567890";
    client
        .send_raw(&format!(
            r#"{{"jsonrpc":"2.0","id":{huge},"method":"tools/call","params":{{"name":"patient"}}}}"#
        ))
        .await;
    for _ in 0..500 {
        if STARTED.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(STARTED.load(std::sync::atomic::Ordering::SeqCst) > 0);
    client
        .send_raw(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{huge}}}}}"#
        ))
        .await;
    for _ in 0..200 {
        if STOPPED.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(STOPPED.load(std::sync::atomic::Ordering::SeqCst) > 0);
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    assert_eq!(client.response().await["id"], 3);
}

#[tokio::test]
async fn initialize_negotiates_a_known_version() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _server) = start(dir.path(), None);
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}}}))
        .await;
    let answer = client.next().await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-03-26");
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "1999-01-01", "capabilities": {}}}))
        .await;
    let answer = client.next().await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn calls_run_concurrently_and_can_be_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _server) = start(dir.path(), None);
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 60000}}}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 0}}}))
        .await;
    // The quick call answers while the slow one runs.
    assert_eq!(client.response().await["id"], 2);
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    // The cancelled call never answers: the next response is the ping's.
    assert_eq!(client.response().await["id"], 3);
}

#[tokio::test]
async fn progress_is_reported_when_a_token_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _server) = start(dir.path(), None);
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 50}, "_meta": {"progressToken": "tok"}}}))
        .await;
    let mut progress = Vec::new();
    loop {
        let message = client.next().await;
        if message.get("id").is_some() {
            assert_eq!(message["result"]["structuredContent"]["slept"], 50);
            break;
        }
        assert_eq!(message["method"], "notifications/progress");
        assert_eq!(message["params"]["progressToken"], "tok");
        progress.push(message["params"]["progress"].as_f64().unwrap());
    }
    assert_eq!(progress, [0.0, 1.0, 2.0, 3.0, 4.0]);
}

#[tokio::test]
async fn end_of_input_shuts_down_every_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", "sleep 60 & sleep 60; wait"]);
    let child = cc_process::spawn_group(command).unwrap();
    let leader = child.id();
    let owner = Arc::new(ProcessOwner(Mutex::new(Some(child))));
    let (mut client, server) = start(dir.path(), Some(owner));
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 60000}}}))
        .await;
    drop(client);
    let finished = tokio::time::timeout(Duration::from_secs(5), server).await;
    assert!(
        finished.is_ok(),
        "serve did not return within 5 s of end of input"
    );
    // SIGKILL is delivered asynchronously: give the group a moment to disappear.
    let mut group_members = usize::MAX;
    for _ in 0..100 {
        group_members = cc_test_support::live_group_members(leader).len();
        if group_members == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(group_members, 0, "processes of the run's group survived");
}

/// Cases for the server fuzz (`CC_FUZZ_CASES` raises the budget for a longer hunt).
fn fuzz_cases() -> u32 {
    std::env::var("CC_FUZZ_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .map_or(300, |cases: u32| cases / 20)
}

/// One line of hostile input: random bytes, or JSON of the right shape with wrong parts.
fn hostile_line() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let id = prop_oneof![
        Just("1".to_owned()),
        Just("null".to_owned()),
        Just("\"s\"".to_owned()),
        Just("123456789012345678901234567890".to_owned()),
        Just("-0.5e400".to_owned()),
        Just("[1]".to_owned()),
        Just("{}".to_owned()),
    ];
    let method = prop_oneof![
        Just("\"ping\"".to_owned()),
        Just("\"tools/call\"".to_owned()),
        Just("\"notifications/cancelled\"".to_owned()),
        Just("5".to_owned()),
        Just("null".to_owned()),
        Just("\"\\udcff\"".to_owned()),
        "\"[a-z/]{0,12}\"",
    ];
    let params = prop_oneof![
        Just("{}".to_owned()),
        Just("{\"name\":\"slow\",\"arguments\":{\"ms\":0}}".to_owned()),
        Just("{\"name\":\"slow\",\"arguments\":[1]}".to_owned()),
        Just("{\"requestId\":1}".to_owned()),
        Just("[]".to_owned()),
        Just("\"x\"".to_owned()),
    ];
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..80),
        (id, method, params).prop_map(|(id, method, params)| {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":{method},\"params\":{params}}}")
                .into_bytes()
        }),
        "\\PC{0,40}".prop_map(String::into_bytes),
    ]
    .prop_map(|mut line| {
        line.retain(|b| *b != b'\n');
        line
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Whatever lines arrive, the server keeps reading: a ping sent after them is answered.
    #[test]
    fn hostile_lines_never_end_the_run(lines in proptest::collection::vec(hostile_line(), 1..30)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let (mut client, _server) = start(dir.path(), None);
            for line in &lines {
                client.input.write_all(line).await.unwrap();
                client.input.write_all(b"\n").await.unwrap();
            }
            client.send_raw(r#"{"jsonrpc":"2.0","id":"last-ping","method":"ping"}"#).await;
            loop {
                let message = client.next().await;
                if message["id"] == "last-ping" {
                    assert_eq!(message["result"], json!({}));
                    break;
                }
            }
        });
    }
}
