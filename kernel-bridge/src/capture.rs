//! Per-cell output capture with a budget: the head and the tail are kept, the middle is
//! counted. One budget covers a cell's stdout and stderr together ([`share_budget`]).

use std::collections::VecDeque;

/// One stream's output for one cell, bounded by `cap` bytes.
///
/// The first half of the cap fills first; after that the last half is kept in a ring, so an
/// endless loop of prints costs at most `cap` bytes of memory and still shows how it ended.
#[derive(Debug, Clone)]
pub(crate) struct CappedBuffer {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

/// What a finished buffer yields: the kept head and tail, and how much was cut between.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Captured {
    /// The first bytes (everything, when nothing was cut).
    pub head: Vec<u8>,
    /// The last bytes, after the cut (empty when nothing was cut).
    pub tail: Vec<u8>,
    /// Bytes that were dropped from the middle (0 when everything fit).
    pub cut: u64,
}

impl Captured {
    /// Bytes kept.
    pub(crate) fn kept(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Keeps at most `budget` bytes: half from the head and half from the tail (more of one
    /// when the other is short), cut on character boundaries; what goes is counted.
    pub(crate) fn shrink_to(&mut self, budget: usize) {
        if self.kept() <= budget {
            return;
        }
        if self.cut == 0 {
            // One run of bytes: split it into a head and a tail around the new cut.
            let all = std::mem::take(&mut self.head);
            let tail_len = budget / 2;
            let head = &all[..utf8_prefix_end(&all[..budget - tail_len])];
            let tail_from = all.len() - tail_len;
            let tail = &all[tail_from + utf8_suffix_start(&all[tail_from..])..];
            self.cut = (all.len() - head.len() - tail.len()) as u64;
            self.tail = tail.to_vec();
            self.head = head.to_vec();
            return;
        }
        let mut tail_len = budget / 2;
        let mut head_len = budget - tail_len;
        if self.head.len() < head_len {
            head_len = self.head.len();
            tail_len = budget - head_len;
        } else if self.tail.len() < tail_len {
            tail_len = self.tail.len();
            head_len = budget - tail_len;
        }
        let before = self.kept();
        let head_end = utf8_prefix_end(&self.head[..head_len]);
        self.head.truncate(head_end);
        let tail_from = self.tail.len() - tail_len;
        let tail_from = tail_from + utf8_suffix_start(&self.tail[tail_from..]);
        self.tail.drain(..tail_from);
        self.cut += (before - self.kept()) as u64;
    }

    /// The kept text (lossy UTF-8), with a note where the middle was cut.
    pub(crate) fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.cut > 0 {
            text.push_str(&format!(
                "\n[... {} bytes cut here: the cell's output went over its budget, so only its \
                 head and tail are kept ...]\n",
                self.cut
            ));
        }
        text.push_str(&String::from_utf8_lossy(&self.tail));
        text
    }
}

/// Shares one `budget` between a cell's stdout and stderr: each keeps up to half, and what
/// one does not need goes to the other.
pub(crate) fn share_budget(stdout: &mut Captured, stderr: &mut Captured, budget: usize) {
    let (out, err) = (stdout.kept(), stderr.kept());
    if out + err <= budget {
        return;
    }
    let err_share = err.min((budget / 2).max(budget.saturating_sub(out)));
    let out_share = out.min(budget - err_share);
    stdout.shrink_to(out_share);
    stderr.shrink_to(err_share);
}

impl CappedBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        let tail_cap = cap / 2;
        CappedBuffer {
            head_cap: cap - tail_cap,
            tail_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap.saturating_sub(self.head.len());
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.is_empty() || self.tail_cap == 0 {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(bytes[bytes.len() - self.tail_cap..].iter().copied());
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(bytes.iter().copied());
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The kept head and tail, cut on character boundaries, and how many bytes were left out.
    pub(crate) fn finish(self) -> Captured {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if kept == self.total {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            return Captured {
                head: all,
                tail: Vec::new(),
                cut: 0,
            };
        }
        let head = &self.head[..utf8_prefix_end(&self.head)];
        let tail = &tail[utf8_suffix_start(&tail)..];
        let cut = self.total - (head.len() + tail.len()) as u64;
        Captured {
            head: head.to_vec(),
            tail: tail.to_vec(),
            cut,
        }
    }
}

/// The end of the longest prefix that does not end inside a multi-byte character.
fn utf8_prefix_end(bytes: &[u8]) -> usize {
    // A character is at most 4 bytes: look back at most 3 for an unfinished lead byte.
    for back in 1..=3.min(bytes.len()) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for its lead
        }
        let width = match byte {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        return if width > back {
            bytes.len() - back
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

/// The start of the longest suffix that does not begin inside a multi-byte character.
fn utf8_suffix_start(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|byte| *byte & 0xC0 == 0x80)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut buffer = CappedBuffer::new(16);
        buffer.push(b"hello ");
        buffer.push(b"world");
        let captured = buffer.finish();
        assert_eq!(captured.cut, 0);
        assert_eq!(captured.text(), "hello world");
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut buffer = CappedBuffer::new(8);
        buffer.push(b"0123456789abcdef");
        let captured = buffer.finish();
        assert_eq!(captured.cut, 8);
        assert!(captured.text().starts_with("0123\n[... 8 bytes cut"));
        assert!(captured.text().ends_with("...]\ncdef"));
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let mut buffer = CappedBuffer::new(8);
        buffer.push("aaéééé€€bb".as_bytes());
        let captured = buffer.finish();
        assert!(!captured.text().contains('\u{FFFD}'), "{}", captured.text());
        let total = "aaéééé€€bb".len() as u64;
        assert_eq!(captured.kept() as u64 + captured.cut, total);
    }

    #[test]
    fn one_budget_covers_both_streams() {
        let capture = |bytes: &[u8]| {
            let mut buffer = CappedBuffer::new(1000);
            buffer.push(bytes);
            buffer.finish()
        };
        // Both over half: each keeps half, head and tail, and the cut is counted.
        let (mut out, mut err) = (capture(&[b'o'; 900]), capture(&[b'e'; 900]));
        share_budget(&mut out, &mut err, 400);
        assert_eq!((out.kept(), err.kept()), (200, 200));
        assert_eq!((out.cut, err.cut), (700, 700));
        assert!(out.text().contains("700 bytes cut here"));
        // A short stream gives its unused share to the other.
        let (mut out, mut err) = (capture(&[b'o'; 900]), capture(b"small"));
        share_budget(&mut out, &mut err, 400);
        assert_eq!((out.kept(), err.kept()), (395, 5));
        assert_eq!(err.cut, 0);
        // Shrinking an already cut stream keeps its head and tail.
        let (mut out, mut err) = (capture(&[b'a'; 3000]), Captured::default());
        out.tail = b"THE END".to_vec();
        out.cut = 100;
        share_budget(&mut out, &mut err, 100);
        assert_eq!(out.kept(), 100);
        assert!(out.text().ends_with("THE END"));
    }

    proptest! {
        #[test]
        fn shrinking_keeps_a_prefix_and_a_suffix_and_counts_the_rest(
            data in proptest::collection::vec(any::<u8>(), 0..400),
            cap in 1usize..64,
            budget in 0usize..64,
        ) {
            let mut buffer = CappedBuffer::new(cap);
            buffer.push(&data);
            let mut captured = buffer.finish();
            captured.shrink_to(budget);
            prop_assert!(captured.kept() <= budget);
            prop_assert_eq!(captured.kept() as u64 + captured.cut, data.len() as u64);
            prop_assert!(data.starts_with(&captured.head));
            prop_assert!(data.ends_with(&captured.tail));
        }

        #[test]
        fn head_is_a_prefix_and_tail_a_suffix(
            data in proptest::collection::vec(any::<u8>(), 0..400),
            cap in 0usize..64,
            splits in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut buffer = CappedBuffer::new(cap);
            let mut cuts: Vec<usize> = splits.into_iter().map(|s| s.min(data.len())).collect();
            cuts.sort_unstable();
            let mut start = 0;
            for cut in cuts.into_iter().chain([data.len()]) {
                buffer.push(&data[start..cut]);
                start = cut;
            }
            let head_len = buffer.head.len();
            let tail: Vec<u8> = buffer.tail.iter().copied().collect();
            prop_assert!(head_len + tail.len() <= cap);
            prop_assert_eq!(&buffer.head[..], &data[..head_len]);
            prop_assert_eq!(&tail[..], &data[data.len() - tail.len()..]);
            let total = buffer.total;
            prop_assert_eq!(total, data.len() as u64);
            let captured = buffer.finish();
            if data.len() <= cap {
                prop_assert_eq!(captured.cut, 0);
                prop_assert_eq!(captured.text(), String::from_utf8_lossy(&data).into_owned());
            } else {
                prop_assert!(captured.cut >= (data.len() - cap) as u64);
            }
        }
    }
}
