//! Per-cell output capture with a cap: the head and the tail are kept, the middle is counted.

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

/// What a finished buffer yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Captured {
    /// The kept text (lossy UTF-8), with a note where the middle was cut.
    pub text: String,
    /// Bytes that were dropped from the middle (0 when everything fit).
    pub cut: u64,
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

    /// The kept text, cut on character boundaries, and how many bytes were left out.
    pub(crate) fn finish(self) -> Captured {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if kept == self.total {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            return Captured {
                text: String::from_utf8_lossy(&all).into_owned(),
                cut: 0,
            };
        }
        let head = &self.head[..utf8_prefix_end(&self.head)];
        let tail = &tail[utf8_suffix_start(&tail)..];
        let cut = self.total - (head.len() + tail.len()) as u64;
        let mut text = String::from_utf8_lossy(head).into_owned();
        text.push_str(&format!(
            "\n[... {cut} bytes cut here: the output exceeded the cap, so only its head and tail \
             are kept ...]\n"
        ));
        text.push_str(&String::from_utf8_lossy(tail));
        Captured { text, cut }
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
        assert_eq!(
            buffer.finish(),
            Captured {
                text: "hello world".into(),
                cut: 0
            }
        );
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut buffer = CappedBuffer::new(8);
        buffer.push(b"0123456789abcdef");
        let captured = buffer.finish();
        assert_eq!(captured.cut, 8);
        assert!(captured.text.starts_with("0123\n[... 8 bytes cut"));
        assert!(captured.text.ends_with("...]\ncdef"));
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let mut buffer = CappedBuffer::new(8);
        buffer.push("aaéééé€€bb".as_bytes());
        let captured = buffer.finish();
        assert!(!captured.text.contains('\u{FFFD}'), "{}", captured.text);
        let total = "aaéééé€€bb".len() as u64;
        let kept = captured
            .text
            .split('\n')
            .filter(|part| !part.starts_with("[..."))
            .map(str::len)
            .sum::<usize>() as u64;
        assert_eq!(kept + captured.cut, total);
    }

    proptest! {
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
                prop_assert_eq!(captured.text, String::from_utf8_lossy(&data).into_owned());
            } else {
                prop_assert!(captured.cut >= (data.len() - cap) as u64);
            }
        }
    }
}
