//! Content-Length framing, the base protocol shared by the Language Server Protocol and the
//! Debug Adapter Protocol:
//!
//! ```text
//! Content-Length: 52\r\n
//! \r\n
//! {"jsonrpc":"2.0","method":"initialized","params":{}}
//! ```
//!
//! This crate knows bytes and headers only, not JSON-RPC: a body is opaque [`Bytes`].
//!
//! - [`Decoder`] is incremental: a frame split across any number of reads, several frames in
//!   one read. It accepts header names in any case, a `Content-Type` header, unknown headers,
//!   `\r\n` or bare `\n` line endings, and skips a banner or log lines that a server printed
//!   before a frame (reported through [`Decoder::take_preamble`] and `tracing::debug!`).
//!   Lengths are bytes, never characters.
//! - Limits are errors, not allocations: a Content-Length over the maximum (64 MiB by default)
//!   is [`FrameError::TooLarge`] and its body is skipped as it arrives; a header block or a
//!   preamble that never ends is bounded too.
//! - [`FrameReader`] and [`FrameWriter`] are the tokio halves over a child's stdout and stdin.
//! - [`encode`] and [`encode_to_vec`] write one frame.
//!
//! # Example
//!
//! ```
//! use bytes::BytesMut;
//! use cc_framing::{encode, Decoder, FrameError, FrameReader, FrameWriter};
//!
//! // Incremental decoding: a banner, then a frame that arrives in two pieces.
//! let mut decoder = Decoder::new();
//! let mut buf = BytesMut::from(&b"Starting server...\ncontent-length: 5\r\n\r\nhel"[..]);
//! assert_eq!(decoder.decode(&mut buf)?, None);
//! buf.extend_from_slice(b"lo");
//! assert_eq!(decoder.decode(&mut buf)?.as_deref(), Some(&b"hello"[..]));
//! assert_eq!(decoder.take_preamble().as_deref(), Some("Starting server...\n"));
//!
//! // Over a pipe.
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let (client, server) = tokio::io::duplex(64);
//! let mut writer = FrameWriter::new(client);
//! let mut reader = FrameReader::new(server);
//! writer.write_frame("{\"ünïcödé\":true}".as_bytes()).await?;
//! let body = reader.read_frame().await?.expect("a frame");
//! assert_eq!(body, "{\"ünïcödé\":true}".as_bytes());
//! # Ok::<(), FrameError>(())
//! # })?;
//!
//! // Encoding.
//! let mut out = BytesMut::new();
//! encode(b"{}", &mut out);
//! assert_eq!(&out[..], b"Content-Length: 2\r\n\r\n{}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod decoder;
mod error;
mod io;

pub use bytes::{Bytes, BytesMut};

pub use crate::decoder::{
    encode, encode_to_vec, Decoder, DEFAULT_MAX_CONTENT_LENGTH, DEFAULT_MAX_PREAMBLE,
    MAX_HEADER_LEN,
};
pub use crate::error::FrameError;
pub use crate::io::{FrameReader, FrameWriter};
