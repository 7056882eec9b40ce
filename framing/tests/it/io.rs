//! The tokio reader and writer halves.

#![allow(clippy::unwrap_used)] // Tests may unwrap (see clippy.toml); helpers too.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use cc_framing::{encode_to_vec, Decoder, FrameError, FrameReader, FrameWriter};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// An `AsyncRead` that hands out the given chunks, one per read, then EOF.
#[derive(Debug)]
struct Chunks(VecDeque<Vec<u8>>);

impl Chunks {
    fn new<I: IntoIterator<Item = T>, T: AsRef<[u8]>>(chunks: I) -> Self {
        Self(chunks.into_iter().map(|c| c.as_ref().to_vec()).collect())
    }
}

impl AsyncRead for Chunks {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(mut chunk) = self.0.pop_front() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            if n < chunk.len() {
                self.0.push_front(chunk.split_off(n));
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// An `AsyncWrite` that records each `poll_write` and `poll_flush`.
#[derive(Debug, Default)]
struct Recorder {
    writes: Vec<Vec<u8>>,
    flushes: usize,
}

impl AsyncWrite for Recorder {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.writes.push(buf.to_vec());
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.flushes += 1;
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn duplex_round_trip_of_reader_and_writer() {
    // A small pipe buffer forces every large frame across many reads.
    let (client, server) = tokio::io::duplex(1000);
    let bodies: Vec<Vec<u8>> = vec![
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.to_vec(),
        Vec::new(),
        "ünïcödé 日本語 🎉".repeat(5000).into_bytes(),
        vec![b'\n'; 3],
        b"Content-Length: 5\r\n\r\nnot a header, a body".to_vec(),
        (0..=255u8).cycle().take(300_000).collect(),
    ];
    let expected = bodies.clone();
    let writer = tokio::spawn(async move {
        let mut writer = FrameWriter::new(client);
        for body in &bodies {
            writer.write_frame(body).await?;
        }
        writer.shutdown().await
    });
    let mut reader = FrameReader::new(server);
    let mut got = Vec::new();
    while let Some(frame) = reader.read_frame().await.unwrap() {
        got.push(frame.to_vec());
    }
    writer.await.unwrap().unwrap();
    assert_eq!(got, expected);
    assert_eq!(reader.take_preamble(), None);
}

#[tokio::test]
async fn reader_skips_a_banner_and_reports_it() {
    let mut stream = b"Starting server...\nlistening on stdio".to_vec();
    stream.extend(encode_to_vec(b"{}"));
    let chunks: Vec<&[u8]> = stream.chunks(3).collect();
    let mut reader = FrameReader::new(Chunks::new(chunks));
    assert_eq!(
        reader.read_frame().await.unwrap().as_deref(),
        Some(&b"{}"[..])
    );
    assert_eq!(
        reader.take_preamble().as_deref(),
        Some("Starting server...\nlistening on stdio")
    );
    assert_eq!(reader.read_frame().await.unwrap(), None);
}

#[tokio::test]
async fn reader_reads_several_frames_from_one_read() {
    let mut stream = encode_to_vec(b"a");
    stream.extend(encode_to_vec(b"bb"));
    stream.extend(encode_to_vec(b"ccc"));
    let mut reader = FrameReader::new(Chunks::new([stream]));
    for body in [&b"a"[..], b"bb", b"ccc"] {
        assert_eq!(reader.read_frame().await.unwrap().as_deref(), Some(body));
    }
    assert_eq!(reader.read_frame().await.unwrap(), None);
}

#[tokio::test]
async fn reader_eof_mid_body_is_unexpected_eof() {
    let mut reader = FrameReader::new(Chunks::new([&b"Content-Length: 10\r\n\r\nabc"[..]]));
    let err = reader.read_frame().await.unwrap_err();
    assert!(
        matches!(
            err,
            FrameError::UnexpectedEof {
                received: 3,
                expected: Some(10)
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("3 of 10"));
}

#[tokio::test]
async fn reader_eof_mid_header_is_unexpected_eof() {
    let mut reader = FrameReader::new(Chunks::new([&b"Content-Len"[..]]));
    let err = reader.read_frame().await.unwrap_err();
    assert!(
        matches!(err, FrameError::UnexpectedEof { expected: None, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn reader_clean_eof_is_none() {
    let mut reader = FrameReader::new(Chunks::new(Vec::<Vec<u8>>::new()));
    assert_eq!(reader.read_frame().await.unwrap(), None);
}

#[tokio::test]
async fn reader_goes_on_after_too_large() {
    let mut stream = encode_to_vec(&vec![b'x'; 5000]);
    stream.extend(encode_to_vec(b"small"));
    let chunks: Vec<&[u8]> = stream.chunks(100).collect();
    let decoder = Decoder::with_max_content_length(1000);
    let mut reader = FrameReader::with_decoder(Chunks::new(chunks), decoder);
    let err = reader.read_frame().await.unwrap_err();
    assert!(
        matches!(
            err,
            FrameError::TooLarge {
                length: 5000,
                max: 1000
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        reader.read_frame().await.unwrap().as_deref(),
        Some(&b"small"[..])
    );
}

#[tokio::test]
async fn writer_does_one_write_then_flushes() {
    let mut writer = FrameWriter::new(Recorder::default());
    writer.write_frame("{\"é\":1}".as_bytes()).await.unwrap();
    let recorder = writer.get_ref();
    assert_eq!(
        recorder.writes,
        ["Content-Length: 8\r\n\r\n{\"é\":1}".as_bytes().to_vec()]
    );
    assert_eq!(recorder.flushes, 1);
}

#[tokio::test]
async fn lsp_server_reads_what_we_write() {
    let mut out = Vec::new();
    let mut writer = FrameWriter::new(&mut out);
    writer
        .write_frame(
            r#"{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"ünï"}}"#
                .as_bytes(),
        )
        .await
        .unwrap();
    drop(writer);
    let mut input = io::BufReader::new(&out[..]);
    match lsp_server::Message::read(&mut input).unwrap() {
        Some(lsp_server::Message::Notification(n)) => {
            assert_eq!(n.method, "window/logMessage");
            assert_eq!(n.params["message"], "ünï");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn we_read_what_lsp_server_writes() {
    let mut stream = Vec::new();
    let request = lsp_server::Request::new(
        7.into(),
        "textDocument/hover".to_owned(),
        serde_json::json!({"text": "日本語"}),
    );
    lsp_server::Message::from(request)
        .write(&mut stream)
        .unwrap();
    let mut reader = FrameReader::new(Chunks::new(stream.chunks(5)));
    let body = reader.read_frame().await.unwrap().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["id"], 7);
    assert_eq!(json["method"], "textDocument/hover");
    assert_eq!(json["params"]["text"], "日本語");
}
