//! A bounded ring buffer of text: the debuggee's output, the adapter's log.

use std::collections::VecDeque;

/// Keeps the last `capacity` bytes of a text stream (cut at a character boundary) and counts
/// everything that went through it.
#[derive(Debug, Clone)]
pub struct OutputRing {
    bytes: VecDeque<u8>,
    capacity: usize,
    total: u64,
}

impl OutputRing {
    /// An empty ring keeping at most `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        OutputRing {
            bytes: VecDeque::new(),
            capacity,
            total: 0,
        }
    }

    /// Appends text, dropping the oldest bytes beyond the capacity.
    pub fn push(&mut self, text: &str) {
        self.total += text.len() as u64;
        let text = text.as_bytes();
        // Only the end of an oversized piece can survive.
        let text = &text[text.len().saturating_sub(self.capacity)..];
        self.bytes.extend(text);
        if self.bytes.len() > self.capacity {
            let excess = self.bytes.len() - self.capacity;
            self.bytes.drain(..excess);
        }
        // Never start in the middle of a character.
        while self.bytes.front().is_some_and(|b| b & 0xC0 == 0x80) {
            self.bytes.pop_front();
        }
    }

    /// Bytes ever pushed (kept or dropped).
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Bytes pushed but no longer kept.
    pub fn dropped_bytes(&self) -> u64 {
        self.total - self.bytes.len() as u64
    }

    /// Bytes kept.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Everything kept, as text.
    pub fn text(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        String::from_utf8_lossy(&all).into_owned()
    }

    /// What was pushed after the stream position `offset` (a previous
    /// [`total_bytes`](Self::total_bytes)), and whether part of it was already dropped.
    pub fn since(&self, offset: u64) -> (String, bool) {
        let start_of_kept = self.dropped_bytes();
        let skip = offset.saturating_sub(start_of_kept);
        let skip = usize::try_from(skip)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let piece: Vec<u8> = self.bytes.iter().skip(skip).copied().collect();
        (
            String::from_utf8_lossy(&piece).into_owned(),
            offset < start_of_kept,
        )
    }

    /// The last `max` bytes kept (at a character boundary), for error messages.
    pub fn tail(&self, max: usize) -> String {
        let text = self.text();
        let mut start = text.len().saturating_sub(max);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text[start..].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_the_end_and_counts_everything() {
        let mut ring = OutputRing::new(8);
        ring.push("hello ");
        ring.push("world!");
        assert_eq!(ring.text(), "o world!");
        assert_eq!(ring.total_bytes(), 12);
        assert_eq!(ring.dropped_bytes(), 4);
        assert_eq!(ring.since(6), ("world!".to_owned(), false));
        assert_eq!(ring.since(0), ("o world!".to_owned(), true));
        assert_eq!(ring.tail(3), "ld!");
    }

    #[test]
    fn never_splits_a_character() {
        let mut ring = OutputRing::new(4);
        ring.push("ééé");
        assert_eq!(ring.text(), "éé");
    }

    proptest! {
        #[test]
        fn bounded_suffix_of_everything_pushed(pieces in proptest::collection::vec(".{0,20}", 0..40), cap in 1usize..64) {
            let mut ring = OutputRing::new(cap);
            let mut all = String::new();
            for piece in &pieces {
                ring.push(piece);
                all.push_str(piece);
            }
            let kept = ring.text();
            prop_assert!(ring.len() <= cap);
            prop_assert!(all.ends_with(&kept));
            prop_assert_eq!(ring.total_bytes(), all.len() as u64);
            // At most one character (4 bytes) is lost to boundary trimming.
            prop_assert!(kept.len() + 3 >= cap.min(all.len()));
        }
    }
}
