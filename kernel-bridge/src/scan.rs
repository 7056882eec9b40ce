//! Splitting the kernel's byte streams: output barriers out of stdout/stderr, and (through an
//! enclosure, where the protocol shares the kernel's stdout) protocol frames out of raw output.
//!
//! Both work on arbitrary chunk boundaries: a marker or a frame split across two reads is
//! recognised, and bytes that merely look like the start of one are passed on unchanged once
//! it is clear they are not.

use memchr::memmem;

/// Starts every barrier marker; the full marker is `PREFIX nonce ':' cell SUFFIX`.
pub(crate) const BARRIER_PREFIX: &[u8] = b"\x1e\x1ecc:";
const BARRIER_SUFFIX: &[u8] = b"\x1e\x1e";
/// Starts every protocol frame on a shared stdout; a frame ends at the next newline.
pub(crate) const FRAME_PREFIX: &[u8] = b"\x1fcc:";

/// A piece of an output stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Output bytes, in order.
    Data(Vec<u8>),
    /// The driver's marker for the end of cell `id`: everything before it belongs to that cell.
    Barrier(u64),
}

/// Finds the barrier markers of one kernel (identified by its nonce) in an output stream.
#[derive(Debug)]
pub(crate) struct BarrierScanner {
    /// `PREFIX nonce ':'`.
    start: Vec<u8>,
    carry: Vec<u8>,
}

impl BarrierScanner {
    pub(crate) fn new(nonce: &str) -> Self {
        let mut start = BARRIER_PREFIX.to_vec();
        start.extend_from_slice(nonce.as_bytes());
        start.push(b':');
        BarrierScanner {
            start,
            carry: Vec::new(),
        }
    }

    /// The marker the driver writes at the end of cell `cell`.
    #[cfg(test)]
    pub(crate) fn marker(&self, cell: u64) -> Vec<u8> {
        let mut marker = self.start.clone();
        marker.extend_from_slice(cell.to_string().as_bytes());
        marker.extend_from_slice(BARRIER_SUFFIX);
        marker
    }

    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Piece>) {
        let owned;
        let buf: &[u8] = if self.carry.is_empty() {
            chunk
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(chunk);
            owned = joined;
            &owned
        };
        let mut pos = 0;
        let mut data_from = 0;
        while let Some(found) = memmem::find(&buf[pos..], &self.start) {
            let at = pos + found;
            let digits_from = at + self.start.len();
            let digits = buf[digits_from..]
                .iter()
                .take_while(|byte| byte.is_ascii_digit())
                .count();
            let after = digits_from + digits;
            let rest = &buf[after..];
            if rest.len() < BARRIER_SUFFIX.len() && BARRIER_SUFFIX.starts_with(rest) && digits <= 20
            {
                // The marker may continue in the next chunk.
                push_data(out, &buf[data_from..at]);
                self.carry = buf[at..].to_vec();
                return;
            }
            let id = std::str::from_utf8(&buf[digits_from..after])
                .ok()
                .and_then(|text| text.parse::<u64>().ok());
            match id {
                Some(id) if buf[after..].starts_with(BARRIER_SUFFIX) => {
                    push_data(out, &buf[data_from..at]);
                    out.push(Piece::Barrier(id));
                    pos = after + BARRIER_SUFFIX.len();
                    data_from = pos;
                }
                // Looked like a marker, is not one: it is output.
                _ => pos = at + 1,
            }
        }
        let keep = partial_prefix_len(&buf[data_from..], &self.start);
        push_data(out, &buf[data_from..buf.len() - keep]);
        self.carry = buf[buf.len() - keep..].to_vec();
    }

    /// Bytes held back because they might start a marker; at end of stream they are output.
    pub(crate) fn flush(&mut self, out: &mut Vec<Piece>) {
        let carry = std::mem::take(&mut self.carry);
        push_data(out, &carry);
    }
}

/// A piece of a stdout that carries both protocol frames and raw output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Framed {
    /// A frame's body (JSON, without the prefix and the newline).
    Frame(Vec<u8>),
    /// Output that is not a frame.
    Raw(Vec<u8>),
}

/// Separates protocol frames from raw output on a shared stream.
#[derive(Debug, Default)]
pub(crate) struct FrameSplitter {
    carry: Vec<u8>,
}

impl FrameSplitter {
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Framed>) {
        let mut joined = std::mem::take(&mut self.carry);
        joined.extend_from_slice(chunk);
        let buf = &joined[..];
        let mut pos = 0;
        while let Some(found) = memmem::find(&buf[pos..], FRAME_PREFIX) {
            let at = pos + found;
            if at > pos {
                out.push(Framed::Raw(buf[pos..at].to_vec()));
            }
            let body_from = at + FRAME_PREFIX.len();
            match memchr::memchr(b'\n', &buf[body_from..]) {
                Some(len) => {
                    out.push(Framed::Frame(buf[body_from..body_from + len].to_vec()));
                    pos = body_from + len + 1;
                }
                None => {
                    self.carry = buf[at..].to_vec();
                    return;
                }
            }
        }
        let keep = partial_prefix_len(&buf[pos..], FRAME_PREFIX);
        if buf.len() - keep > pos {
            out.push(Framed::Raw(buf[pos..buf.len() - keep].to_vec()));
        }
        self.carry = buf[buf.len() - keep..].to_vec();
    }

    /// What is left at end of stream: an unfinished frame is output after all.
    pub(crate) fn flush(&mut self, out: &mut Vec<Framed>) {
        let carry = std::mem::take(&mut self.carry);
        if !carry.is_empty() {
            out.push(Framed::Raw(carry));
        }
    }
}

fn push_data(out: &mut Vec<Piece>, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    if let Some(Piece::Data(previous)) = out.last_mut() {
        previous.extend_from_slice(bytes);
    } else {
        out.push(Piece::Data(bytes.to_vec()));
    }
}

/// The length of the longest suffix of `buf` that is a proper prefix of `prefix`.
fn partial_prefix_len(buf: &[u8], prefix: &[u8]) -> usize {
    let longest = (prefix.len() - 1).min(buf.len());
    (1..=longest)
        .rev()
        .find(|len| buf.ends_with(&prefix[..*len]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn scan_all(scanner: &mut BarrierScanner, chunks: &[&[u8]]) -> Vec<Piece> {
        let mut out = Vec::new();
        for chunk in chunks {
            scanner.feed(chunk, &mut out);
        }
        scanner.flush(&mut out);
        // Merge adjacent data pieces produced by separate feeds.
        let mut merged: Vec<Piece> = Vec::new();
        for piece in out {
            match (merged.last_mut(), piece) {
                (Some(Piece::Data(previous)), Piece::Data(more)) => previous.extend(more),
                (_, piece) => merged.push(piece),
            }
        }
        merged
    }

    #[test]
    fn finds_markers_split_across_chunks() {
        let scanner = BarrierScanner::new("abc");
        let marker = scanner.marker(7);
        let mut stream = b"hello".to_vec();
        stream.extend_from_slice(&marker);
        stream.extend_from_slice(b"next");
        for split in 0..stream.len() {
            let mut scanner = BarrierScanner::new("abc");
            let pieces = scan_all(&mut scanner, &[&stream[..split], &stream[split..]]);
            assert_eq!(
                pieces,
                vec![
                    Piece::Data(b"hello".to_vec()),
                    Piece::Barrier(7),
                    Piece::Data(b"next".to_vec())
                ],
                "split at {split}"
            );
        }
    }

    #[test]
    fn near_misses_are_output() {
        let mut scanner = BarrierScanner::new("abc");
        let pieces = scan_all(
            &mut scanner,
            &[
                b"\x1e\x1ecc:abc:12x and \x1e\x1ecc:zzz:1\x1e\x1e",
                b"\x1e\x1ecc:ab",
            ],
        );
        assert_eq!(
            pieces,
            vec![Piece::Data(
                b"\x1e\x1ecc:abc:12x and \x1e\x1ecc:zzz:1\x1e\x1e\x1e\x1ecc:ab".to_vec()
            )]
        );
    }

    #[test]
    fn frames_and_raw_output_are_separated() {
        let stream = b"raw1\x1fcc:{\"op\":\"ready\"}\nraw \x1fc2\x1fcc:{}\n";
        for split in 0..stream.len() {
            let mut splitter = FrameSplitter::default();
            let mut out = Vec::new();
            splitter.feed(&stream[..split], &mut out);
            splitter.feed(&stream[split..], &mut out);
            splitter.flush(&mut out);
            let frames: Vec<&Vec<u8>> = out
                .iter()
                .filter_map(|piece| match piece {
                    Framed::Frame(body) => Some(body),
                    Framed::Raw(_) => None,
                })
                .collect();
            let raw: Vec<u8> = out
                .iter()
                .filter_map(|piece| match piece {
                    Framed::Raw(bytes) => Some(bytes.clone()),
                    Framed::Frame(_) => None,
                })
                .flatten()
                .collect();
            assert_eq!(frames, [&b"{\"op\":\"ready\"}".to_vec(), &b"{}".to_vec()]);
            assert_eq!(raw, b"raw1raw \x1fc2".to_vec(), "split at {split}");
        }
    }

    proptest! {
        #[test]
        fn data_and_barriers_survive_any_chunking(
            parts in proptest::collection::vec(
                prop_oneof![
                    proptest::collection::vec(any::<u8>(), 0..40).prop_map(Piece::Data),
                    (0u64..1000).prop_map(Piece::Barrier),
                ],
                0..12,
            ),
            splits in proptest::collection::vec(0usize..600, 0..10),
        ) {
            let mut scanner = BarrierScanner::new("f00d");
            let mut stream = Vec::new();
            let mut expected: Vec<Piece> = Vec::new();
            for part in &parts {
                match part {
                    Piece::Data(bytes) => {
                        stream.extend_from_slice(bytes);
                        push_data(&mut expected, bytes);
                    }
                    Piece::Barrier(id) => {
                        stream.extend_from_slice(&scanner.marker(*id));
                        expected.push(Piece::Barrier(*id));
                    }
                }
            }
            let mut cuts: Vec<usize> = splits.into_iter().map(|s| s.min(stream.len())).collect();
            cuts.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([stream.len()]) {
                chunks.push(&stream[start..cut]);
                start = cut;
            }
            let pieces = scan_all(&mut scanner, &chunks);
            // Random data may contain the separator byte but not a whole marker of this nonce.
            prop_assert_eq!(pieces, expected);
        }
    }
}
