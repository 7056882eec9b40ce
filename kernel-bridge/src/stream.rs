//! The host's view of one output stream of a kernel (stdout or stderr): bytes arrive from a
//! reader task, barrier markers split them into cells, and the cell waits for its marker.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;

use crate::capture::{CappedBuffer, Captured};
use crate::scan::{BarrierScanner, Piece};

/// One stream; shared between its reader task and the kernel.
#[derive(Debug)]
pub(crate) struct Stream {
    inner: Mutex<Inner>,
    changed: Notify,
}

#[derive(Debug)]
struct Inner {
    scanner: BarrierScanner,
    cap: usize,
    /// Output since the last barrier.
    current: CappedBuffer,
    /// Output closed by a barrier and not yet claimed, by cell.
    finished: Vec<(u64, CappedBuffer)>,
    eof: bool,
}

/// A cell's share of a stream.
#[derive(Debug)]
pub(crate) struct Taken {
    pub captured: Captured,
    /// False when the cell's marker never arrived (the output may be incomplete).
    pub complete: bool,
}

impl Stream {
    pub(crate) fn new(nonce: &str, cap: usize) -> Self {
        Stream {
            inner: Mutex::new(Inner {
                scanner: BarrierScanner::new(nonce),
                cap,
                current: CappedBuffer::new(cap),
                finished: Vec::new(),
                eof: false,
            }),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        cc_process::lock(&self.inner)
    }

    /// Takes bytes read from the pipe; returns whether any of them were output (not markers).
    pub(crate) fn feed(&self, bytes: &[u8]) -> bool {
        let mut pieces = Vec::new();
        let mut inner = self.lock();
        inner.scanner.feed(bytes, &mut pieces);
        let mut output = false;
        let mut barrier = false;
        for piece in pieces {
            match piece {
                Piece::Data(data) => {
                    output = true;
                    inner.current.push(&data);
                }
                Piece::Barrier(cell) => {
                    barrier = true;
                    let fresh = CappedBuffer::new(inner.cap);
                    let done = std::mem::replace(&mut inner.current, fresh);
                    inner.finished.push((cell, done));
                }
            }
        }
        drop(inner);
        if barrier {
            self.changed.notify_one();
        }
        output
    }

    /// The pipe reached end of file.
    pub(crate) fn close(&self) {
        let mut pieces = Vec::new();
        let mut inner = self.lock();
        inner.scanner.flush(&mut pieces);
        for piece in pieces {
            if let crate::scan::Piece::Data(data) = piece {
                inner.current.push(&data);
            }
        }
        inner.eof = true;
        drop(inner);
        self.changed.notify_one();
    }

    /// Waits (up to `wait`) for the barrier of `cell`, then takes everything up to it.
    pub(crate) async fn take_until(&self, cell: u64, wait: Duration) -> Taken {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.changed.notified();
            {
                let mut inner = self.lock();
                if inner.finished.iter().any(|(id, _)| *id >= cell) {
                    let parts: Vec<CappedBuffer> = std::mem::take(&mut inner.finished)
                        .into_iter()
                        .map(|(_, part)| part)
                        .collect();
                    return Taken {
                        captured: join(parts, inner.cap),
                        complete: true,
                    };
                }
                if inner.eof {
                    return Taken {
                        captured: take_all(&mut inner),
                        complete: false,
                    };
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Taken {
                    captured: take_all(&mut self.lock()),
                    complete: false,
                };
            }
        }
    }

    /// Waits (up to `wait`) for end of file, then takes everything (after a kill).
    pub(crate) async fn take_at_eof(&self, wait: Duration) -> Captured {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.changed.notified();
            if self.lock().eof {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        take_all(&mut self.lock())
    }
}

fn take_all(inner: &mut Inner) -> Captured {
    let fresh = CappedBuffer::new(inner.cap);
    let mut parts: Vec<CappedBuffer> = std::mem::take(&mut inner.finished)
        .into_iter()
        .map(|(_, part)| part)
        .collect();
    parts.push(std::mem::replace(&mut inner.current, fresh));
    join(parts, inner.cap)
}

/// One capture from the parts of several cells (output that arrived before an earlier
/// barrier belongs to this cell too), within the same cap.
fn join(parts: Vec<CappedBuffer>, cap: usize) -> Captured {
    let mut parts: Vec<CappedBuffer> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    if parts.len() <= 1 {
        return parts.pop().map(CappedBuffer::finish).unwrap_or_default();
    }
    let mut buffer = CappedBuffer::new(cap);
    let mut cut = 0;
    for part in parts {
        let captured = part.finish();
        buffer.push(&captured.head);
        buffer.push(&captured.tail);
        cut += captured.cut;
    }
    let mut joined = buffer.finish();
    joined.cut += cut;
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_after_a_barrier_belongs_to_the_next_cell() {
        let stream = Stream::new("n", 1024);
        let marker = |cell: u64| format!("\x1e\x1ecc:n:{cell}\x1e\x1e");
        assert!(stream.feed(format!("one{}tw", marker(1)).as_bytes()));
        assert!(stream.feed(b"o"));
        let first = stream.take_until(1, Duration::from_secs(5)).await;
        assert!(first.complete);
        assert_eq!(first.captured.text(), "one");
        assert!(!stream.feed(marker(2).as_bytes()));
        let second = stream.take_until(2, Duration::from_secs(5)).await;
        assert_eq!(second.captured.text(), "two");
        stream.feed(b"late");
        stream.close();
        let third = stream.take_until(3, Duration::from_secs(5)).await;
        assert!(!third.complete);
        assert_eq!(third.captured.text(), "late");
    }
}
