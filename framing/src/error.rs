//! The one error type of this crate.

use std::borrow::Cow;

/// Everything that can go wrong while framing or unframing.
///
/// Decoding errors other than [`FrameError::Io`] leave the [`Decoder`](crate::Decoder) in a
/// usable state: the offending bytes have been consumed, so calling `decode` again resumes
/// with whatever follows (an oversized body is skipped without being buffered).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The header announced a body larger than the configured maximum. Nothing of that size
    /// was allocated; the body is skipped as it arrives.
    #[error("frame of {length} bytes exceeds the maximum of {max} bytes")]
    TooLarge {
        /// The announced Content-Length.
        length: u64,
        /// The configured maximum.
        max: usize,
    },

    /// A header line could not be understood.
    #[error("malformed header {seen:?}: {reason}")]
    MalformedHeader {
        /// The offending header line (lossy UTF-8, truncated to 100 bytes).
        seen: String,
        /// What was wrong with it.
        reason: &'static str,
    },

    /// A header block ended (blank line) without a Content-Length header.
    #[error("header block without a Content-Length header: {headers_seen:?}")]
    MissingContentLength {
        /// The header block that was seen (lossy UTF-8, truncated to 200 bytes).
        headers_seen: String,
    },

    /// More than the configured number of bytes arrived without any Content-Length or
    /// Content-Type header. The bytes were discarded as they arrived (see
    /// [`Decoder::take_preamble`](crate::Decoder::take_preamble) for the first of them).
    #[error(
        "{skipped} bytes arrived without a Content-Length header (preamble limit {max} bytes)"
    )]
    PreambleTooLong {
        /// How many bytes were skipped.
        skipped: usize,
        /// The configured preamble limit.
        max: usize,
    },

    /// The stream ended in the middle of a frame.
    #[error("{}", eof_message(*received, *expected))]
    UnexpectedEof {
        /// Bytes of the unfinished part that had arrived: body bytes when `expected` is
        /// `Some`, header bytes otherwise.
        received: usize,
        /// The announced body length, or `None` when the stream ended inside a header.
        expected: Option<usize>,
    },

    /// Reading or writing failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

fn eof_message(received: usize, expected: Option<usize>) -> String {
    match expected {
        Some(expected) => format!(
            "stream ended in the middle of a frame: {received} of {expected} body bytes arrived"
        ),
        None => format!("stream ended in the middle of a header after {received} bytes"),
    }
}

/// Lossy UTF-8 of at most `max` bytes of `bytes`, with an ellipsis when cut.
pub(crate) fn excerpt(bytes: &[u8], max: usize) -> String {
    if bytes.len() <= max {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut text = match String::from_utf8_lossy(&bytes[..max]) {
        Cow::Borrowed(s) => s.to_owned(),
        Cow::Owned(s) => s,
    };
    text.push('…');
    text
}
