//! Decode throughput, side by side with rust-analyzer's `lsp-server`.
//!
//! Both sides read the same byte stream of many frames and parse every body into a generic
//! JSON-RPC message:
//!
//! - `lsp-server`: `lsp_server::Message::read` over a `std::io::BufReader` of the stream.
//!   It parses into `lsp_server::Message` (an untagged enum of Request / Response /
//!   Notification: `id`, `method: String`, `params`/`result: serde_json::Value`).
//! - `cc-framing`: the stream is copied into one `BytesMut` (standing in for the read from the
//!   pipe; the copy is timed), then `Decoder::decode` splits off each body and
//!   `serde_json::from_slice` parses it into [`GenericMessage`]: the same information as
//!   `lsp_server::Message` (`jsonrpc`, `id`, `method` as an owned `String`, and `params`,
//!   `result`, `error` as owned `serde_json::Value` trees), with no field skipped or borrowed.
//!   That is the fair comparison: same bytes in, same owned data out. What differs is only how
//!   each side gets there (`lsp-server` reads headers line by line into a `String`, copies the
//!   body into a fresh buffer, validates UTF-8, and its untagged enum buffers the whole message
//!   before choosing a variant).
//! - `cc-framing-value` (extra, for reference): the same as `cc-framing` but parsing each body
//!   into a plain `serde_json::Value`, the most generic target there is.
//!
//! Bodies are what a client reads from a server: a `$/progress` notification for the 200-byte
//! body, a `textDocument/publishDiagnostics` notification with a few hundred diagnostics for
//! the 64 KiB one.
//! Throughput is reported in messages per second.
//!
//! Criterion ids: groups `decode/small` and `decode/large` (directories `decode_small`,
//! `decode_large`), benchmarks `cc-framing`, `lsp-server`, `cc-framing-value`.

use std::hint::black_box;
use std::io::BufReader;

use bytes::BytesMut;
use cc_framing::{encode, Decoder};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::Deserialize;

/// A generic JSON-RPC 2.0 message (request, response or notification).
#[derive(Debug, Deserialize)]
#[allow(dead_code)] // The fields are only parsed, to be dropped through `black_box`.
struct GenericMessage {
    jsonrpc: String,
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<serde_json::Value>,
    #[serde(default)]
    result: Option<serde_json::Value>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

fn diagnostic(i: usize) -> String {
    format!(
        r#"{{"range":{{"start":{{"line":{i},"character":4}},"end":{{"line":{i},"character":17}}}},"severity":2,"code":"unused_variables","source":"rustc","message":"unused variable: `x{i}`"}}"#
    )
}

/// Pads the last `message` string of a JSON body with spaces to exactly `size` bytes.
fn pad_to(mut body: String, size: usize) -> Vec<u8> {
    let pad = size.saturating_sub(body.len());
    let end_of_message = body.rfind("\"}").expect("a message to pad");
    body.insert_str(end_of_message, &" ".repeat(pad));
    assert_eq!(body.len(), size, "body size");
    serde_json::from_str::<serde_json::Value>(&body).expect("valid JSON");
    body.into_bytes()
}

/// A `$/progress` notification of exactly `size` bytes (the most frequent small message a
/// server sends while indexing).
fn small_body(size: usize) -> Vec<u8> {
    let body = r#"{"jsonrpc":"2.0","method":"$/progress","params":{"token":"rustAnalyzer/Indexing","value":{"kind":"report","cancellable":false,"percentage":13,"message":"42/310 (core)"}}}"#;
    pad_to(body.to_owned(), size)
}

/// A `textDocument/publishDiagnostics` notification of exactly `size` bytes.
fn large_body(size: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///home/user/project/src/main.rs","version":7,"diagnostics":["#;
    let tail = "]}}";
    let mut diagnostics: Vec<String> = Vec::new();
    let mut len = head.len() + tail.len();
    for i in 0.. {
        let next = diagnostic(i);
        // Leave some room, filled by padding the last message.
        if len + next.len() + 1 + 200 > size {
            break;
        }
        len += next.len() + usize::from(!diagnostics.is_empty());
        diagnostics.push(next);
    }
    let body = format!("{head}{}{tail}", diagnostics.join(","));
    // The last message ends in "`\"}]}}": pad inside its string.
    pad_to(body, size)
}

fn stream(body: &[u8], count: usize) -> Vec<u8> {
    let mut out = BytesMut::new();
    for _ in 0..count {
        encode(body, &mut out);
    }
    out.to_vec()
}

fn bench_case(c: &mut Criterion, name: &str, body_size: usize, count: usize) {
    let body = if body_size <= 1024 {
        small_body(body_size)
    } else {
        large_body(body_size)
    };
    let stream = stream(&body, count);
    let mut group = c.benchmark_group(format!("decode/{name}"));
    group.throughput(Throughput::Elements(count as u64));

    group.bench_function("cc-framing", |b| {
        b.iter(|| {
            let mut buf = BytesMut::from(black_box(&stream[..]));
            let mut decoder = Decoder::new();
            let mut n = 0;
            while let Some(frame) = decoder.decode(&mut buf).expect("decode") {
                let message: GenericMessage = serde_json::from_slice(&frame).expect("json");
                black_box(message);
                n += 1;
            }
            assert_eq!(n, count);
        });
    });

    group.bench_function("lsp-server", |b| {
        b.iter(|| {
            let mut reader = BufReader::new(black_box(&stream[..]));
            let mut n = 0;
            while let Some(message) = lsp_server::Message::read(&mut reader).expect("read") {
                black_box(message);
                n += 1;
            }
            assert_eq!(n, count);
        });
    });

    group.bench_function("cc-framing-value", |b| {
        b.iter(|| {
            let mut buf = BytesMut::from(black_box(&stream[..]));
            let mut decoder = Decoder::new();
            let mut n = 0;
            while let Some(frame) = decoder.decode(&mut buf).expect("decode") {
                let message: serde_json::Value = serde_json::from_slice(&frame).expect("json");
                black_box(message);
                n += 1;
            }
            assert_eq!(n, count);
        });
    });

    group.finish();
}

fn decode(c: &mut Criterion) {
    bench_case(c, "small", 200, 1000);
    bench_case(c, "large", 64 * 1024, 32);
}

criterion_group!(benches, decode);
criterion_main!(benches);
