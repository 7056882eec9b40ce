//! The incremental decoder and the encoder.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::error::{excerpt, FrameError};

/// Default maximum body size: 64 MiB.
pub const DEFAULT_MAX_CONTENT_LENGTH: usize = 64 * 1024 * 1024;

/// Default maximum number of bytes skipped before a header is found: 1 MiB.
pub const DEFAULT_MAX_PREAMBLE: usize = 1024 * 1024;

/// Longest header block (from the first header name to the blank line) accepted.
pub const MAX_HEADER_LEN: usize = 4096;

/// How many skipped preamble bytes are kept for [`Decoder::take_preamble`].
const PREAMBLE_KEEP: usize = 4096;

/// How many bytes of an offending header line an error quotes.
const SEEN_LINE: usize = 100;

/// How many bytes of a header block [`FrameError::MissingContentLength`] quotes.
const SEEN_BLOCK: usize = 200;

/// Whitespace tolerated between a header name and its colon when looking for a frame start.
const MAX_NAME_PADDING: usize = 16;

/// The header names that mark the start of a frame.
const START_NAMES: [&[u8]; 2] = [b"content-length", b"content-type"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Looking for the first header name; anything before it is preamble.
    Preamble,
    /// A header block starts at `buf[0]`; `scanned` bytes of it are complete non-empty lines.
    Header { scanned: usize },
    /// The header is consumed; the body of `len` bytes starts at `buf[0]`.
    Body { len: usize },
    /// An oversized body is being skipped; `remaining` bytes of it are still to come.
    Discard { remaining: u64, len: u64 },
}

/// An incremental Content-Length frame decoder.
///
/// Feed it a [`BytesMut`] that you append received bytes to; each call of
/// [`decode`](Decoder::decode) returns the next complete body, split off the front of the
/// buffer without copying, or `Ok(None)` when more bytes are needed.
///
/// What it accepts:
/// - header names in any case, `Content-Type` and unknown headers (ignored), lines ending in
///   `\r\n` or a bare `\n`;
/// - preamble before a frame (a banner or log lines a server printed on stdout, with or
///   without a trailing newline, even directly followed by `Content-Length:` on the same
///   line): it is skipped, logged with `tracing::debug!`, and kept for
///   [`take_preamble`](Decoder::take_preamble). A header that is not `Content-Length` or
///   `Content-Type` *before* those counts as preamble too.
///
/// What it bounds: a body over the maximum is an error and is skipped as it arrives, never
/// buffered; a header block over [`MAX_HEADER_LEN`] is an error; preamble is consumed as it
/// arrives (only a possible partial header name at the end of the buffer is kept). So after
/// `decode` returns `Ok(None)` the buffer holds at most `max(max_content_length,
/// MAX_HEADER_LEN)` bytes.
#[derive(Debug, Clone)]
pub struct Decoder {
    max_content_length: usize,
    max_preamble: usize,
    state: State,
    /// Bytes skipped since the last header start (checked against `max_preamble`).
    preamble_run: usize,
    /// The first skipped bytes since the last `take_preamble`.
    preamble: Vec<u8>,
    /// Skipped bytes since the last `take_preamble` that did not fit in `preamble`.
    preamble_dropped: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder with the default maximum body size of 64 MiB.
    pub fn new() -> Self {
        Self::with_max_content_length(DEFAULT_MAX_CONTENT_LENGTH)
    }

    /// A decoder that rejects bodies longer than `max` bytes.
    pub fn with_max_content_length(max: usize) -> Self {
        Self {
            max_content_length: max,
            max_preamble: DEFAULT_MAX_PREAMBLE,
            state: State::Preamble,
            preamble_run: 0,
            preamble: Vec::new(),
            preamble_dropped: 0,
        }
    }

    /// Sets how many bytes may be skipped before a header is found (default 1 MiB) before
    /// [`FrameError::PreambleTooLong`] is returned.
    #[must_use]
    pub fn max_preamble(mut self, max: usize) -> Self {
        self.max_preamble = max;
        self
    }

    /// The configured maximum body size.
    pub fn max_content_length(&self) -> usize {
        self.max_content_length
    }

    /// Whether the decoder is between frames: no header, body or skipped body is in progress.
    /// Bytes still in the buffer may be the start of the next header.
    pub fn is_between_frames(&self) -> bool {
        self.state == State::Preamble
    }

    /// The preamble skipped since the last call, as lossy UTF-8, or `None` if nothing was
    /// skipped. At most 4 KiB are kept; a note at the end says how many more bytes were
    /// skipped.
    pub fn take_preamble(&mut self) -> Option<String> {
        if self.preamble.is_empty() && self.preamble_dropped == 0 {
            return None;
        }
        let mut text = String::from_utf8_lossy(&self.preamble).into_owned();
        if self.preamble_dropped > 0 {
            text.push_str(&format!("… [{} more bytes skipped]", self.preamble_dropped));
        }
        self.preamble.clear();
        self.preamble_dropped = 0;
        Some(text)
    }

    /// Decodes the next frame from the front of `buf`.
    ///
    /// Returns `Ok(Some(body))` for a complete frame (header and body are removed from `buf`),
    /// `Ok(None)` when more bytes are needed, or an error. After an error the offending bytes
    /// are gone and decoding can go on. When a body is incomplete, `buf` is given the capacity
    /// for the rest of it (at most the configured maximum).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        loop {
            match self.state {
                State::Body { len } => {
                    if buf.len() >= len {
                        self.state = State::Preamble;
                        return Ok(Some(buf.split_to(len).freeze()));
                    }
                    buf.reserve(len - buf.len());
                    return Ok(None);
                }
                State::Header { scanned } => return self.decode_header(buf, scanned),
                State::Discard { remaining, len } => {
                    let available = u64::try_from(buf.len()).unwrap_or(u64::MAX);
                    let skip = remaining.min(available);
                    // `skip <= buf.len()`, so it fits in usize.
                    buf.advance(usize::try_from(skip).unwrap_or(buf.len()));
                    if skip < remaining {
                        self.state = State::Discard {
                            remaining: remaining - skip,
                            len,
                        };
                        return Ok(None);
                    }
                    tracing::debug!(length = len, "skipped an oversized frame body");
                    self.state = State::Preamble;
                }
                State::Preamble => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    self.find_header_start(buf)?;
                    if self.state == State::Preamble {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Like [`decode`](Decoder::decode), for when the stream has ended: a complete frame is
    /// still returned; an unfinished one is [`FrameError::UnexpectedEof`]; `Ok(None)` means
    /// the stream ended cleanly between frames. The decoder is reset afterwards.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        let state = self.state;
        let received = buf.len();
        self.state = State::Preamble;
        self.preamble_run = 0;
        buf.clear();
        match state {
            State::Preamble if received == 0 => Ok(None),
            State::Preamble | State::Header { .. } => Err(FrameError::UnexpectedEof {
                received,
                expected: None,
            }),
            State::Body { len } => Err(FrameError::UnexpectedEof {
                received,
                expected: Some(len),
            }),
            State::Discard { remaining, len } => Err(FrameError::UnexpectedEof {
                received: usize::try_from(len - remaining).unwrap_or(usize::MAX),
                expected: Some(usize::try_from(len).unwrap_or(usize::MAX)),
            }),
        }
    }

    /// In the `Preamble` state: skips bytes up to the first header name, moving to `Header`
    /// when one is found. Only a possible partial header name at the end is left in `buf`.
    fn find_header_start(&mut self, buf: &mut BytesMut) -> Result<(), FrameError> {
        let mut from = 0;
        let (skip, found) = loop {
            let Some(at) = memchr::memchr2(b'c', b'C', &buf[from..]) else {
                break (buf.len(), false);
            };
            let at = from + at;
            match header_start(&buf[at..]) {
                Start::Yes => break (at, true),
                Start::Partial => break (at, false),
                Start::No => from = at + 1,
            }
        };
        if skip > 0 {
            self.skip_preamble(buf, skip);
        }
        if found {
            self.preamble_run = 0;
            self.state = State::Header { scanned: 0 };
        } else if self.preamble_run > self.max_preamble {
            let skipped = std::mem::take(&mut self.preamble_run);
            return Err(FrameError::PreambleTooLong {
                skipped,
                max: self.max_preamble,
            });
        }
        Ok(())
    }

    fn skip_preamble(&mut self, buf: &mut BytesMut, n: usize) {
        let skipped = &buf[..n];
        tracing::debug!(
            bytes = n,
            text = %excerpt(skipped, 200),
            "skipped bytes before a Content-Length header"
        );
        let keep = n.min(PREAMBLE_KEEP - self.preamble.len());
        self.preamble.extend_from_slice(&skipped[..keep]);
        self.preamble_dropped += n - keep;
        self.preamble_run = self.preamble_run.saturating_add(n);
        buf.advance(n);
    }

    /// In the `Header` state: waits for the blank line, then parses the block.
    fn decode_header(
        &mut self,
        buf: &mut BytesMut,
        scanned: usize,
    ) -> Result<Option<Bytes>, FrameError> {
        let window = &buf[..buf.len().min(MAX_HEADER_LEN)];
        let mut pos = scanned;
        let end = loop {
            let Some(nl) = memchr::memchr(b'\n', &window[pos..]) else {
                if buf.len() >= MAX_HEADER_LEN {
                    let seen = excerpt(&buf[pos..], SEEN_LINE);
                    buf.advance(MAX_HEADER_LEN);
                    self.state = State::Preamble;
                    return Err(FrameError::MalformedHeader {
                        seen,
                        reason: "header block longer than 4096 bytes",
                    });
                }
                self.state = State::Header { scanned: pos };
                return Ok(None);
            };
            let line = &window[pos..pos + nl];
            pos += nl + 1;
            if line.is_empty() || line == b"\r" {
                break pos;
            }
        };
        let parsed = parse_headers(&buf[..end], self.max_content_length);
        buf.advance(end);
        self.state = State::Preamble;
        let len = match parsed {
            Ok(len) => len,
            Err(FrameError::TooLarge { length, max }) => {
                self.state = State::Discard {
                    remaining: length,
                    len: length,
                };
                return Err(FrameError::TooLarge { length, max });
            }
            Err(err) => return Err(err),
        };
        self.state = State::Body { len };
        self.decode(buf)
    }
}

/// Parses a complete header block (ending with its blank line) into the body length.
fn parse_headers(block: &[u8], max: usize) -> Result<usize, FrameError> {
    let mut length: Option<u64> = None;
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            break;
        }
        let Some(colon) = memchr::memchr(b':', line) else {
            return Err(FrameError::MalformedHeader {
                seen: excerpt(line, SEEN_LINE),
                reason: "expected `Name: value`",
            });
        };
        let name = line[..colon].trim_ascii();
        if !name.eq_ignore_ascii_case(b"content-length") {
            // Content-Type (and anything else) is accepted and ignored.
            continue;
        }
        let value = line[colon + 1..].trim_ascii();
        let Some(parsed) = parse_decimal(value) else {
            let reason = if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
                "Content-Length is not a decimal number"
            } else {
                "Content-Length is out of range"
            };
            return Err(FrameError::MalformedHeader {
                seen: excerpt(line, SEEN_LINE),
                reason,
            });
        };
        if length.is_some_and(|prev| prev != parsed) {
            return Err(FrameError::MalformedHeader {
                seen: excerpt(line, SEEN_LINE),
                reason: "conflicting Content-Length headers",
            });
        }
        length = Some(parsed);
    }
    let Some(length) = length else {
        return Err(FrameError::MissingContentLength {
            headers_seen: excerpt(block.trim_ascii_end(), SEEN_BLOCK),
        });
    };
    match usize::try_from(length) {
        Ok(len) if len <= max => Ok(len),
        _ => Err(FrameError::TooLarge { length, max }),
    }
}

/// ASCII decimal digits to a number; `None` if empty, not all digits, or over `u64::MAX`.
fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(n)
}

enum Start {
    /// A header name that starts a frame, followed by its colon.
    Yes,
    /// Could be one; the buffer ends too early to tell.
    Partial,
    No,
}

/// Whether `s` starts with `Content-Length` or `Content-Type` (any case) and a colon.
fn header_start(s: &[u8]) -> Start {
    let mut partial = false;
    for name in START_NAMES {
        let n = s.len().min(name.len());
        if !s[..n].eq_ignore_ascii_case(&name[..n]) {
            continue;
        }
        let Some(rest) = s.get(name.len()..) else {
            partial = true;
            continue;
        };
        let padding = rest
            .iter()
            .take(MAX_NAME_PADDING + 1)
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        match rest.get(padding) {
            _ if padding > MAX_NAME_PADDING => {}
            Some(b':') => return Start::Yes,
            Some(_) => {}
            None => partial = true,
        }
    }
    if partial {
        Start::Partial
    } else {
        Start::No
    }
}

/// Appends one frame (`Content-Length: N\r\n\r\n` and `body`) to `dst`.
pub fn encode(body: &[u8], dst: &mut BytesMut) {
    let mut digits = [0u8; 20];
    let digits = format_decimal(body.len(), &mut digits);
    dst.reserve(b"Content-Length: \r\n\r\n".len() + digits.len() + body.len());
    dst.put_slice(b"Content-Length: ");
    dst.put_slice(digits);
    dst.put_slice(b"\r\n\r\n");
    dst.put_slice(body);
}

/// One frame (`Content-Length: N\r\n\r\n` and `body`) as a new vector.
pub fn encode_to_vec(body: &[u8]) -> Vec<u8> {
    let mut digits = [0u8; 20];
    let digits = format_decimal(body.len(), &mut digits);
    let mut out = Vec::with_capacity(b"Content-Length: \r\n\r\n".len() + digits.len() + body.len());
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(digits);
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body);
    out
}

fn format_decimal(mut n: usize, out: &mut [u8; 20]) -> &[u8] {
    let mut i = out.len();
    loop {
        i -= 1;
        // `n % 10 < 10`, so the cast is lossless.
        out[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &out[i..];
        }
    }
}
