//! Tokio reader and writer halves.

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::decoder::{encode, Decoder};
use crate::error::FrameError;

/// How much spare capacity a read asks for when no body size is known.
const READ_CHUNK: usize = 8 * 1024;

/// A writer buffer larger than this is released after the frame is written.
const KEEP_WRITE_BUFFER: usize = 1024 * 1024;

/// Reads frames from an [`AsyncRead`] (a server's stdout, say).
///
/// [`read_frame`](FrameReader::read_frame) is cancel-safe: if its future is dropped (for
/// example in `tokio::select!`), no bytes are lost and the next call picks up where it was.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    buf: BytesMut,
    decoder: Decoder,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader with a default [`Decoder`] (64 MiB maximum body).
    pub fn new(reader: R) -> Self {
        Self::with_decoder(reader, Decoder::new())
    }

    /// A reader that uses `decoder` (to set other limits).
    pub fn with_decoder(reader: R, decoder: Decoder) -> Self {
        Self {
            reader,
            buf: BytesMut::new(),
            decoder,
        }
    }

    /// The next frame's body.
    ///
    /// `Ok(None)` when the stream ended cleanly between frames; [`FrameError::UnexpectedEof`]
    /// when it ended inside one. Decoding errors (for example [`FrameError::TooLarge`]) leave
    /// the reader usable: the next call resumes after the offending bytes.
    pub async fn read_frame(&mut self) -> Result<Option<Bytes>, FrameError> {
        loop {
            if let Some(frame) = self.decoder.decode(&mut self.buf)? {
                return Ok(Some(frame));
            }
            // While a body is pending, `decode` reserved exactly the rest of it.
            if self.buf.capacity() - self.buf.len() < READ_CHUNK / 2 {
                self.buf.reserve(READ_CHUNK);
            }
            if self.reader.read_buf(&mut self.buf).await? == 0 {
                return self.decoder.decode_eof(&mut self.buf);
            }
        }
    }

    /// Bytes that were skipped before a header (a banner, log lines) since the last call,
    /// as lossy UTF-8; see [`Decoder::take_preamble`].
    pub fn take_preamble(&mut self) -> Option<String> {
        self.decoder.take_preamble()
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The underlying reader; bytes already read but not yet decoded are lost.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

/// Writes frames to an [`AsyncWrite`] (a server's stdin, say).
#[derive(Debug)]
pub struct FrameWriter<W> {
    writer: W,
    buf: BytesMut,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    /// A writer over `writer`.
    pub fn new(writer: W) -> Self {
        Self {
            writer,
            buf: BytesMut::new(),
        }
    }

    /// Writes one frame, header and body in one buffer, then flushes.
    ///
    /// Not cancel-safe: if the future is dropped, part of the frame may have been written.
    pub async fn write_frame(&mut self, body: &[u8]) -> Result<(), FrameError> {
        self.buf.clear();
        encode(body, &mut self.buf);
        let result = self.writer.write_all(&self.buf).await;
        if self.buf.capacity() > KEEP_WRITE_BUFFER {
            self.buf = BytesMut::new();
        }
        result?;
        self.writer.flush().await?;
        Ok(())
    }

    /// Shuts the writer down (closes the pipe).
    pub async fn shutdown(&mut self) -> Result<(), FrameError> {
        self.writer.shutdown().await?;
        Ok(())
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.writer
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.writer
    }
}
