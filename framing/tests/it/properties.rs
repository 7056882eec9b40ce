//! Properties: any chunking decodes the same frames; arbitrary bytes are harmless.

#![allow(clippy::unwrap_used)] // Tests may unwrap (see clippy.toml); helpers too.

use bytes::{Bytes, BytesMut};
use cc_framing::{Decoder, MAX_HEADER_LEN};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

/// One frame as a server might send it: junk before it, a header in some spelling, a body.
#[derive(Debug, Clone)]
struct Frame {
    preamble: Vec<u8>,
    header: Vec<u8>,
    body: Vec<u8>,
}

/// Banner or log text: never contains a `c`, so it cannot be mistaken for a header start; may
/// or may not end with a newline (so it can run straight into `Content-Length:`).
fn junk() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => Just(String::new()),
        1 => "[a-bd-zA-BD-Z0-9 .:!é日🎉-]{1,30}(\r?\n)?",
        1 => "([a-bd-zA-BD-Z ]{0,20}\n){1,4}",
    ]
    .prop_map(String::into_bytes)
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..300),
        // Multi-byte UTF-8, so that characters and bytes differ.
        "[a-zé日本語🎉{}\":,]{0,120}".prop_map(String::into_bytes),
        Just(b"Content-Length: 3\r\n\r\nabc".to_vec()),
    ]
}

fn frame() -> impl Strategy<Value = Frame> {
    let length_name = prop::sample::select(vec![
        "Content-Length",
        "content-length",
        "CONTENT-LENGTH",
        "Content-length",
        "cOnTeNt-LeNgTh",
    ]);
    let type_name = prop::sample::select(vec!["Content-Type", "content-type", "CONTENT-TYPE"]);
    let spacing = prop::sample::select(vec![": ", ":", ":  ", " : ", ":\t"]);
    let eol = prop::sample::select(vec!["\r\n", "\n"]);
    (
        junk(),
        length_name,
        spacing,
        prop::option::of(type_name),
        any::<bool>(),
        any::<bool>(),
        eol,
        body(),
    )
        .prop_map(
            |(preamble, name, spacing, content_type, type_first, unknown, eol, body)| {
                let mut lines = vec![format!("{name}{spacing}{}", body.len())];
                if let Some(type_name) = content_type {
                    let line = format!("{type_name}: application/vscode-jsonrpc; charset=utf-8");
                    if type_first {
                        lines.insert(0, line);
                    } else {
                        lines.push(line);
                    }
                }
                if unknown {
                    lines.push("X-Trace-Id: 1234".to_owned());
                }
                let mut header = String::new();
                for line in lines {
                    header.push_str(&line);
                    header.push_str(eol);
                }
                header.push_str(eol);
                Frame {
                    preamble,
                    header: header.into_bytes(),
                    body,
                }
            },
        )
}

/// Cuts `stream` at the given points (in any order, duplicates allowed).
fn cut<'a>(stream: &'a [u8], points: &[Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = points.iter().map(|i| i.index(stream.len() + 1)).collect();
    at.push(0);
    at.push(stream.len());
    at.sort_unstable();
    at.windows(2).map(|w| &stream[w[0]..w[1]]).collect()
}

/// Cases per property: a fuzzing budget that CI runs in about a second; `CC_FUZZ_CASES`
/// raises it for a longer hunt (`CC_FUZZ_CASES=1000000 cargo test -p cc-framing`).
fn cases() -> u32 {
    std::env::var("CC_FUZZ_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(8192)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_decodes_the_same_frames(
        frames in vec(frame(), 0..8),
        points in vec(any::<Index>(), 0..24),
    ) {
        let mut stream = Vec::new();
        let mut preamble = Vec::new();
        for frame in &frames {
            stream.extend_from_slice(&frame.preamble);
            stream.extend_from_slice(&frame.header);
            stream.extend_from_slice(&frame.body);
            preamble.extend_from_slice(&frame.preamble);
        }
        let mut decoder = Decoder::new();
        let mut buf = BytesMut::new();
        let mut got: Vec<Bytes> = Vec::new();
        for chunk in cut(&stream, &points) {
            buf.extend_from_slice(chunk);
            while let Some(frame) = decoder.decode(&mut buf).unwrap() {
                got.push(frame);
            }
        }
        prop_assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
        let want: Vec<&[u8]> = frames.iter().map(|f| &f.body[..]).collect();
        prop_assert_eq!(got, want);
        let skipped = decoder.take_preamble().unwrap_or_default();
        prop_assert_eq!(skipped, String::from_utf8_lossy(&preamble));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_stay_bounded(
        pieces in vec(prop_oneof![
            vec(any::<u8>(), 0..40),
            Just(b"Content-Length: ".to_vec()),
            Just(b"cOnTeNt-TyPe:".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n\r\n".to_vec()),
            "[0-9]{1,3}".prop_map(String::into_bytes),
            Just(b"99999999999999999999999".to_vec()),
            Just(vec![b'a'; 300]),
        ], 0..60),
        points in vec(any::<Index>(), 0..30),
        max in 0usize..100,
    ) {
        let stream = pieces.concat();
        let mut decoder = Decoder::with_max_content_length(max).max_preamble(512);
        let mut buf = BytesMut::new();
        for chunk in cut(&stream, &points) {
            buf.extend_from_slice(chunk);
            let mut progress_guard = 0;
            loop {
                progress_guard += 1;
                prop_assert!(progress_guard < 100_000, "decode made no progress");
                match decoder.decode(&mut buf) {
                    Ok(Some(frame)) => prop_assert!(frame.len() <= max),
                    Ok(None) => break,
                    Err(_) => {}
                }
            }
            prop_assert!(
                buf.len() <= max + MAX_HEADER_LEN,
                "buffer holds {} bytes (max {})", buf.len(), max
            );
        }
        let _ = decoder.decode_eof(&mut buf);
        let _ = decoder.take_preamble();
    }
}
