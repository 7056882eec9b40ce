//! The connection layer against an in-memory peer: correlation by `request_seq` (whatever the
//! adapter's own `seq`), events in order, reverse requests refused, pending requests failed
//! when the stream ends.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use cc_dap_client::protocol::{Message, StackTrace, StackTraceArguments};
use cc_dap_client::{Client, ClientError};
use cc_framing::{FrameReader, FrameWriter};
use serde_json::{json, Value};

const T: Duration = Duration::from_secs(10);

struct Peer {
    reader: FrameReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    writer: FrameWriter<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
}

impl Peer {
    async fn recv(&mut self) -> Value {
        let frame = self.reader.read_frame().await.unwrap().unwrap();
        serde_json::from_slice(&frame).unwrap()
    }
    async fn send(&mut self, value: Value) {
        self.writer
            .write_frame(value.to_string().as_bytes())
            .await
            .unwrap();
    }
}

type Connected = (
    Client,
    tokio::sync::mpsc::UnboundedReceiver<cc_dap_client::protocol::Event>,
    Peer,
);

fn connect() -> Connected {
    connect_buffered(1 << 16)
}

/// A connection whose pipes hold at most `buffer` bytes that the other side has not read.
fn connect_buffered(buffer: usize) -> Connected {
    let (ours, theirs) = tokio::io::duplex(buffer);
    let (our_read, our_write) = tokio::io::split(ours);
    let (their_read, their_write) = tokio::io::split(theirs);
    let (client, events) = Client::start(our_read, our_write);
    let peer = Peer {
        reader: FrameReader::new(their_read),
        writer: FrameWriter::new(their_write),
    };
    (client, events, peer)
}

#[tokio::test]
async fn responses_are_matched_by_request_seq_even_out_of_order_with_seq_zero() {
    let (client, _events, mut peer) = connect();
    let mut first = client.send("threads", None).await.unwrap();
    let second = {
        let client = client.clone();
        tokio::spawn(async move {
            let args = StackTraceArguments {
                thread_id: 7,
                start_frame: 0,
                levels: 1,
            };
            client.request::<StackTrace>(&args, T).await
        })
    };
    let a = peer.recv().await;
    let b = peer.recv().await;
    let (threads_seq, stack_seq) = if a["command"] == "threads" {
        (a["seq"].clone(), b["seq"].clone())
    } else {
        (b["seq"].clone(), a["seq"].clone())
    };
    // Answer the second request first; every message carries seq 0 (as lldb-dap sends).
    peer.send(json!({"seq": 0, "type": "response", "request_seq": stack_seq, "success": true,
        "command": "stackTrace", "body": {"stackFrames": [{"id": 5, "name": "f", "line": 3}], "totalFrames": 9}})).await;
    peer.send(
        json!({"seq": 0, "type": "response", "request_seq": threads_seq, "success": true,
        "command": "threads", "body": {"threads": []}}),
    )
    .await;
    let stack = second.await.unwrap().unwrap();
    assert_eq!(stack.stack_frames[0].id, 5);
    assert_eq!(stack.total_frames, Some(9));
    let threads = first.response_within(T).await.unwrap();
    assert_eq!(threads.command, "threads");
}

#[tokio::test]
async fn events_arrive_in_order_and_failures_carry_the_adapters_message() {
    let (client, mut events, mut peer) = connect();
    let pending = {
        let client = client.clone();
        tokio::spawn(async move { client.request_raw("launch", Some(json!({})), T).await })
    };
    let request = peer.recv().await;
    peer.send(json!({"seq": 1, "type": "event", "event": "output", "body": {"category": "stdout", "output": "a"}})).await;
    peer.send(json!({"seq": 2, "type": "event", "event": "initialized"}))
        .await;
    peer.send(json!({"seq": 3, "type": "response", "request_seq": request["seq"], "success": false,
        "command": "launch", "message": "failed", "body": {"error": {"id": 3, "format": "no such file"}}})).await;
    assert_eq!(events.recv().await.unwrap().event, "output");
    assert_eq!(events.recv().await.unwrap().event, "initialized");
    let response = pending.await.unwrap().unwrap();
    assert!(!response.success);
    assert_eq!(response.error_text(), "no such file");
}

#[tokio::test]
async fn reverse_requests_get_a_negative_answer() {
    let (_client, _events, mut peer) = connect();
    for (seq, command) in [
        (41, "runInTerminal"),
        (42, "startDebugging"),
        (43, "somethingElse"),
    ] {
        peer.send(json!({"seq": seq, "type": "request", "command": command, "arguments": {}}))
            .await;
        let answer: Message = serde_json::from_value(peer.recv().await).unwrap();
        let Message::Response(answer) = answer else {
            panic!("not a response: {answer:?}")
        };
        assert_eq!(answer.request_seq, seq);
        assert_eq!(answer.command, command);
        assert!(!answer.success);
        assert!(answer.message.unwrap().contains("client"));
    }
}

#[tokio::test]
async fn the_end_of_the_stream_fails_every_pending_request_at_once() {
    let (client, mut events, mut peer) = connect();
    let waiting = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .request_raw("continue", None, Duration::from_secs(600))
                .await
        })
    };
    let _ = peer.recv().await;
    drop(peer);
    let error = tokio::time::timeout(T, waiting)
        .await
        .expect("no hang")
        .unwrap()
        .unwrap_err();
    assert!(matches!(error, ClientError::Closed { .. }), "{error}");
    assert!(events.recv().await.is_none());
    assert!(client.closed_reason().is_some());
    let late = client.send("threads", None).await.unwrap_err();
    assert!(matches!(late, ClientError::Closed { .. }), "{late}");
}

#[tokio::test]
async fn a_request_without_an_answer_times_out() {
    let (client, _events, mut peer) = connect();
    let error = tokio::join!(
        client.request_raw("threads", None, Duration::from_millis(200)),
        peer.recv()
    )
    .0
    .unwrap_err();
    assert!(matches!(error, ClientError::Timeout { .. }), "{error}");
}

#[tokio::test]
async fn an_adapter_that_stops_reading_times_the_request_out() {
    // The peer never reads, and the pipe holds less than one request.
    let (client, _events, _peer) = connect_buffered(16);
    let error = tokio::time::timeout(
        T,
        client.request_raw("threads", None, Duration::from_millis(200)),
    )
    .await
    .expect("the request's own timeout ends the blocked write")
    .unwrap_err();
    assert!(matches!(error, ClientError::Timeout { .. }), "{error}");
    tokio::time::timeout(T, client.close_input())
        .await
        .expect("closing the input does not wait for the stuck adapter");
}
