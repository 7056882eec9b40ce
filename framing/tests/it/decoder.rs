//! The decoder, one behaviour per test.

#![allow(clippy::unwrap_used)] // Tests may unwrap (see clippy.toml); helpers too.

use bytes::{Bytes, BytesMut};
use cc_framing::{encode, encode_to_vec, Decoder, FrameError, MAX_HEADER_LEN};

/// Feeds `chunks` one after the other, decoding after each; returns the frames.
fn decode_chunks(decoder: &mut Decoder, chunks: &[&[u8]]) -> Vec<Bytes> {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    assert!(buf.is_empty(), "left over: {buf:?}");
    frames
}

fn decode_all(input: &[u8]) -> (Vec<Bytes>, Option<String>) {
    let mut decoder = Decoder::new();
    let frames = decode_chunks(&mut decoder, &[input]);
    (frames, decoder.take_preamble())
}

#[test]
fn frame_split_across_every_byte() {
    let stream = encode_to_vec(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    let chunks: Vec<&[u8]> = stream.chunks(1).collect();
    let frames = decode_chunks(&mut Decoder::new(), &chunks);
    assert_eq!(
        frames,
        [&br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#[..]]
    );
}

#[test]
fn frame_split_at_every_position() {
    let stream = encode_to_vec(b"0123456789");
    for cut in 0..=stream.len() {
        let frames = decode_chunks(&mut Decoder::new(), &[&stream[..cut], &stream[cut..]]);
        assert_eq!(frames, [&b"0123456789"[..]], "cut at {cut}");
    }
}

#[test]
fn several_frames_in_one_read() {
    let mut stream = BytesMut::new();
    encode(b"one", &mut stream);
    encode(b"", &mut stream);
    encode(b"three", &mut stream);
    let (frames, preamble) = decode_all(&stream);
    assert_eq!(frames, [&b"one"[..], b"", b"three"]);
    assert_eq!(preamble, None);
}

#[test]
fn banner_line_before_first_frame() {
    let (frames, preamble) = decode_all(b"Starting server...\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(frames, [&b"{}"[..]]);
    assert_eq!(preamble.as_deref(), Some("Starting server...\n"));
}

#[test]
fn several_log_lines_before_first_frame() {
    let input = b"INFO boot\r\nWARN no config found\n\nContent-Length: 2\r\n\r\n{}";
    let (frames, preamble) = decode_all(input);
    assert_eq!(frames, [&b"{}"[..]]);
    assert_eq!(
        preamble.as_deref(),
        Some("INFO boot\r\nWARN no config found\n\n")
    );
}

#[test]
fn banner_without_newline_directly_followed_by_header() {
    let (frames, preamble) = decode_all(b"hello worldContent-Length: 5\r\n\r\nhello");
    assert_eq!(frames, [&b"hello"[..]]);
    assert_eq!(preamble.as_deref(), Some("hello world"));
}

#[test]
fn banner_without_newline_split_across_reads() {
    let mut decoder = Decoder::new();
    let frames = decode_chunks(
        &mut decoder,
        &[
            b"hello wor",
            b"ldCont",
            b"ent-Le",
            b"ngth: 5\r\n\r\nhel",
            b"lo",
        ],
    );
    assert_eq!(frames, [&b"hello"[..]]);
    assert_eq!(decoder.take_preamble().as_deref(), Some("hello world"));
    assert_eq!(decoder.take_preamble(), None, "taking empties it");
}

#[test]
fn banner_that_mentions_the_header_without_a_colon_is_skipped() {
    let (frames, preamble) =
        decode_all(b"using content-length framing\ncontent-type\nContent-Length: 1\r\n\r\nx");
    assert_eq!(frames, [&b"x"[..]]);
    assert_eq!(
        preamble.as_deref(),
        Some("using content-length framing\ncontent-type\n")
    );
}

#[test]
fn log_lines_between_frames() {
    let input = b"Content-Length: 1\r\n\r\naserver log line\nContent-Length: 1\r\n\r\nb";
    let (frames, preamble) = decode_all(input);
    assert_eq!(frames, [&b"a"[..], b"b"]);
    assert_eq!(preamble.as_deref(), Some("server log line\n"));
}

#[test]
fn multi_byte_utf8_body_is_counted_in_bytes() {
    let body = "日本語のテキスト🎉 ünïcödé ".repeat(100);
    let stream = encode_to_vec(body.as_bytes());
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    assert!(stream.starts_with(header.as_bytes()));
    assert!(body.len() > body.chars().count());
    let chunks: Vec<&[u8]> = stream.chunks(7).collect();
    let frames = decode_chunks(&mut Decoder::new(), &chunks);
    assert_eq!(std::str::from_utf8(&frames[0]).unwrap(), body);
}

#[test]
fn header_names_in_any_case() {
    for name in [
        "Content-Length",
        "content-length",
        "CONTENT-LENGTH",
        "cOnTeNt-LeNgTh",
    ] {
        let input = format!("{name}: 3\r\n\r\nabc");
        let (frames, preamble) = decode_all(input.as_bytes());
        assert_eq!(frames, [&b"abc"[..]], "{name}");
        assert_eq!(preamble, None, "{name}");
    }
}

#[test]
fn content_type_before_or_after_content_length() {
    let before =
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}";
    let after =
        b"content-length: 2\r\nCONTENT-TYPE: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}";
    for input in [&before[..], &after[..]] {
        let (frames, preamble) = decode_all(input);
        assert_eq!(frames, [&b"{}"[..]]);
        assert_eq!(preamble, None);
    }
}

#[test]
fn unknown_headers_after_content_length_are_ignored() {
    let (frames, preamble) = decode_all(b"Content-Length: 2\r\nX-Trace: 42\r\nX-Empty:\r\n\r\n{}");
    assert_eq!(frames, [&b"{}"[..]]);
    assert_eq!(preamble, None);
}

#[test]
fn bare_newlines_and_odd_spacing_are_accepted() {
    for input in [
        &b"Content-Length: 2\n\n{}"[..],
        b"Content-Length: 2\r\n\n{}",
        b"Content-Length:2\r\n\r\n{}",
        b"Content-Length :\t 2 \r\n\r\n{}",
        b"Content-Length: 002\r\n\r\n{}",
    ] {
        let (frames, _) = decode_all(input);
        assert_eq!(frames, [&b"{}"[..]], "{:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn zero_length_body() {
    let (frames, _) = decode_all(b"Content-Length: 0\r\n\r\n");
    assert_eq!(frames, [Bytes::new()]);
}

#[test]
fn body_is_split_off_the_buffer_without_copying() {
    let mut buf = BytesMut::from(&b"Content-Length: 5\r\n\r\nhelloContent-Length: 1\r\n\r\n"[..]);
    let range = buf.as_ptr() as usize..buf.as_ptr() as usize + buf.len();
    let frame = Decoder::new().decode(&mut buf).unwrap().unwrap();
    assert_eq!(frame, &b"hello"[..]);
    assert!(range.contains(&(frame.as_ptr() as usize)));
    assert_eq!(&buf[..], b"Content-Length: 1\r\n\r\n");
}

#[test]
fn too_large_is_an_error_without_allocating_and_the_body_is_skipped() {
    let mut decoder = Decoder::with_max_content_length(1024);
    assert_eq!(decoder.max_content_length(), 1024);
    let mut buf = BytesMut::from(&b"Content-Length: 1025\r\n\r\n"[..]);
    let err = decoder.decode(&mut buf).unwrap_err();
    assert!(
        matches!(
            err,
            FrameError::TooLarge {
                length: 1025,
                max: 1024
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "frame of 1025 bytes exceeds the maximum of 1024 bytes"
    );
    assert!(buf.capacity() < 1025, "capacity {}", buf.capacity());
    // The body is skipped as it arrives, then decoding resumes.
    for _ in 0..5 {
        buf.extend_from_slice(&[b'x'; 200]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty());
    }
    buf.extend_from_slice(&[b'x'; 25]);
    buf.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
    assert_eq!(
        decoder.decode(&mut buf).unwrap().as_deref(),
        Some(&b"ok"[..])
    );
}

#[test]
fn huge_content_length_is_too_large_without_allocating() {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::from(&b"Content-Length: 18446744073709551615\r\n\r\n"[..]);
    let capacity = buf.capacity();
    let err = decoder.decode(&mut buf).unwrap_err();
    assert!(
        matches!(
            err,
            FrameError::TooLarge {
                length: u64::MAX,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(buf.capacity() <= capacity);

    let mut buf = BytesMut::from(&b"Content-Length: 99999999999999999999999\r\n\r\n"[..]);
    let err = Decoder::new().decode(&mut buf).unwrap_err();
    assert!(
        matches!(&err, FrameError::MalformedHeader { reason, .. } if reason.contains("out of range")),
        "{err:?}"
    );
}

#[test]
fn default_maximum_is_64_mib() {
    let ok = format!("Content-Length: {}\r\n\r\n", 64 * 1024 * 1024);
    let mut buf = BytesMut::from(ok.as_bytes());
    assert_eq!(Decoder::new().decode(&mut buf).unwrap(), None);
    let too_large = format!("Content-Length: {}\r\n\r\n", 64 * 1024 * 1024 + 1);
    let mut buf = BytesMut::from(too_large.as_bytes());
    assert!(matches!(
        Decoder::new().decode(&mut buf),
        Err(FrameError::TooLarge { .. })
    ));
}

#[test]
fn non_numeric_content_length_quotes_the_header() {
    let mut buf = BytesMut::from(&b"Content-Length: abc\r\n\r\n{}"[..]);
    let err = Decoder::new().decode(&mut buf).unwrap_err();
    match &err {
        FrameError::MalformedHeader { seen, reason } => {
            assert_eq!(seen, "Content-Length: abc");
            assert_eq!(*reason, "Content-Length is not a decimal number");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        err.to_string(),
        r#"malformed header "Content-Length: abc": Content-Length is not a decimal number"#
    );
    for bad in ["", "-1", "+1", "1 2", "0x10", "１"] {
        let input = format!("Content-Length: {bad}\r\n\r\n");
        let mut buf = BytesMut::from(input.as_bytes());
        let err = Decoder::new().decode(&mut buf).unwrap_err();
        assert!(
            matches!(err, FrameError::MalformedHeader { .. }),
            "{bad:?}: {err:?}"
        );
    }
}

#[test]
fn header_line_without_colon_is_malformed_and_truncated() {
    let line = format!("Content-Length: 2\r\n{}\r\n\r\n{{}}", "y".repeat(500));
    let mut buf = BytesMut::from(line.as_bytes());
    match Decoder::new().decode(&mut buf).unwrap_err() {
        FrameError::MalformedHeader { seen, reason } => {
            assert_eq!(seen, format!("{}…", "y".repeat(100)));
            assert_eq!(reason, "expected `Name: value`");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn conflicting_content_lengths_are_malformed() {
    let mut buf = BytesMut::from(&b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"[..]);
    let err = Decoder::new().decode(&mut buf).unwrap_err();
    assert!(
        matches!(&err, FrameError::MalformedHeader { seen, .. } if seen == "Content-Length: 3"),
        "{err:?}"
    );
    // The same length twice is fine.
    let (frames, _) = decode_all(b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}");
    assert_eq!(frames, [&b"{}"[..]]);
}

#[test]
fn missing_content_length_says_what_was_seen() {
    let mut buf = BytesMut::from(&b"Content-Type: application/json\r\n\r\n{}"[..]);
    let err = Decoder::new().decode(&mut buf).unwrap_err();
    match &err {
        FrameError::MissingContentLength { headers_seen } => {
            assert_eq!(headers_seen, "Content-Type: application/json");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("Content-Type: application/json"));
}

#[test]
fn decoding_resumes_after_a_malformed_header() {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::from(&b"Content-Length: abc\r\n\r\nContent-Length: 2\r\n\r\nok"[..]);
    assert!(decoder.decode(&mut buf).is_err());
    assert_eq!(
        decoder.decode(&mut buf).unwrap().as_deref(),
        Some(&b"ok"[..])
    );
}

#[test]
fn endless_header_block_is_an_error() {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::from(&b"Content-Length: 5\r\n"[..]);
    let mut err = None;
    for _ in 0..1000 {
        buf.extend_from_slice(b"X-Padding: aaaaaaaaaa\r\n");
        match decoder.decode(&mut buf) {
            Ok(frame) => assert_eq!(frame, None),
            Err(e) => {
                err = Some(e);
                break;
            }
        }
        assert!(buf.len() <= MAX_HEADER_LEN);
    }
    let err = err.expect("an error");
    assert!(
        matches!(&err, FrameError::MalformedHeader { reason, .. } if reason.contains("longer than")),
        "{err:?}"
    );
}

#[test]
fn endless_banner_is_bounded_and_reported() {
    let mut decoder = Decoder::new().max_preamble(10_000);
    let mut buf = BytesMut::new();
    let mut error = None;
    for _ in 0..1000 {
        buf.extend_from_slice(b"loading... loading... loading... content-lengt");
        match decoder.decode(&mut buf) {
            Ok(frame) => assert_eq!(frame, None),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        assert!(buf.len() < 64, "buffer grew to {}", buf.len());
    }
    let err = error.expect("an error");
    assert!(
        matches!(err, FrameError::PreambleTooLong { skipped, max: 10_000 } if skipped > 10_000),
        "{err:?}"
    );
    let preamble = decoder.take_preamble().unwrap();
    assert!(preamble.starts_with("loading... loading..."));
    assert!(preamble.ends_with("more bytes skipped]"), "{preamble}");
    assert!(preamble.len() < 4200);
    // Still usable.
    buf.extend_from_slice(b"h: 2\r\n\r\n{}");
    assert_eq!(
        decoder.decode(&mut buf).unwrap().as_deref(),
        Some(&b"{}"[..])
    );
}

#[test]
fn junk_without_a_header_is_consumed_as_it_arrives() {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::from(&b"no header here at all\n"[..]);
    assert_eq!(decoder.decode(&mut buf).unwrap(), None);
    assert!(buf.is_empty());
    assert_eq!(
        decoder.take_preamble().as_deref(),
        Some("no header here at all\n")
    );
}

#[test]
fn eof_between_frames_is_clean() {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::from(&b"Content-Length: 1\r\n\r\nx"[..]);
    assert_eq!(
        decoder.decode_eof(&mut buf).unwrap().as_deref(),
        Some(&b"x"[..])
    );
    assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
    assert!(decoder.is_between_frames());
}

#[test]
fn eof_mid_body_says_how_many_bytes_arrived() {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::from(&b"Content-Length: 10\r\n\r\nabc"[..]);
    assert_eq!(decoder.decode(&mut buf).unwrap(), None);
    assert!(!decoder.is_between_frames());
    let err = decoder.decode_eof(&mut buf).unwrap_err();
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
    assert_eq!(
        err.to_string(),
        "stream ended in the middle of a frame: 3 of 10 body bytes arrived"
    );
    // Reset afterwards.
    assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
}

#[test]
fn eof_mid_header_is_an_error() {
    let mut buf = BytesMut::from(&b"Content-Length: 1"[..]);
    let err = Decoder::new().decode_eof(&mut buf).unwrap_err();
    assert!(
        matches!(
            err,
            FrameError::UnexpectedEof {
                received: 17,
                expected: None
            }
        ),
        "{err:?}"
    );
}

#[test]
fn encode_writes_the_header_and_body() {
    let mut out = BytesMut::from(&b"prefix"[..]);
    encode("héllo".as_bytes(), &mut out);
    assert_eq!(&out[..], "prefixContent-Length: 6\r\n\r\nhéllo".as_bytes());
    assert_eq!(
        encode_to_vec(&[b'x'; 1234])[..24],
        b"Content-Length: 1234\r\n\r\n"[..]
    );
    assert_eq!(encode_to_vec(b""), b"Content-Length: 0\r\n\r\n");
}
