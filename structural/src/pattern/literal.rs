//! The pre-filter: literals every match must contain, found as whole tokens.

/// Finds a literal as a whole token: an identifier-like literal (`warn`) must not be part
/// of a longer word (`warnings`), which is what makes the pre-filter sharp. The checks only
/// look at ASCII letters, digits and `_`, so they can reject no real token: a token that
/// starts with a letter cannot follow a letter or `_` (but may follow a digit: `1if`).
#[derive(Debug, Clone)]
pub(super) struct LiteralFinder {
    finder: memchr::memmem::Finder<'static>,
    len: usize,
    left: bool,
    right: bool,
}

impl LiteralFinder {
    pub(super) fn new(literal: &[u8]) -> Self {
        let word_start = literal
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
        let word_end = literal
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        LiteralFinder {
            finder: memchr::memmem::Finder::new(literal).into_owned(),
            len: literal.len(),
            left: word_start,
            right: word_start && word_end,
        }
    }

    pub(super) fn occurs_in(&self, bytes: &[u8]) -> bool {
        if !self.left && !self.right {
            return self.finder.find(bytes).is_some();
        }
        self.finder.find_iter(bytes).any(|at| {
            let before_ok = !self.left
                || at == 0
                || !(bytes[at - 1].is_ascii_alphabetic() || bytes[at - 1] == b'_');
            let after = bytes.get(at + self.len);
            let after_ok =
                !self.right || after.is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
            before_ok && after_ok
        })
    }
}
