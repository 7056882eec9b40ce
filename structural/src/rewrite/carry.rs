//! Carrying over what a match left out: the omittable parts (an `else`, `@Test`, `<T>`, a
//! return type) and the keyword tokens (`async`, `import type`, `static`) that the pattern
//! did not name are put back into the expanded template at their place, or the match is
//! not rewritten.
//!
//! Each part is placed by the code around it. Blanks aside, if the replacement starts with
//! the code that precedes the part in the match (other parts and dropped comments left
//! out), the part goes right after that; else, if it ends with the code that follows the
//! part, right before that. Either way the replacement's neighbours of that place must be
//! the code's neighbours of the part (the next non-blank character after it, or the last
//! one before it), so that a template which rewrote what stands there (`-> None` where the
//! code has `-> int`) is never given both. A part that has no such place makes the match a
//! [`Refusal`].

use std::ops::Range;

/// Why one part cannot be carried over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The part's bytes in the file.
    pub(crate) part: Range<usize>,
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The non-blank bytes of `bytes` outside `holes` (ranges relative to `bytes`), with each
/// one's index in `bytes`. A trailing comma before a closing bracket is left out too: a
/// template that spells `def $F(self, $$$A):` on one line drops the comma of a parameter
/// list written one per line, and the code before the return type is still the same.
fn solid(bytes: &[u8], holes: &[Range<usize>]) -> (Vec<u8>, Vec<usize>) {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = Vec::with_capacity(bytes.len());
    for (i, &b) in bytes.iter().enumerate() {
        if is_blank(b) || holes.iter().any(|h| h.contains(&i)) {
            continue;
        }
        if matches!(b, b')' | b']' | b'}') && out.last() == Some(&b',') {
            out.pop();
            at.pop();
        }
        out.push(b);
        at.push(i);
    }
    (out, at)
}

/// An expanded replacement with what was carried over into it, and the comments of the match
/// that found no place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Carried {
    /// The replacement.
    pub(crate) bytes: Vec<u8>,
    /// Comments of the match (ranges in the file) that the replacement does not hold.
    pub(crate) dropped: Vec<Range<usize>>,
}

/// The expanded replacement of the match `range` of `source`, with each of `parts` put back
/// at its place; `Err` names the first part that has none. `comments` are the comments of
/// the match outside the substituted captures: one at the end of a line of code (`def f():
/// # type: ignore`) stays after that code when the replacement has the same code before a
/// line end; one the replacement spells is there already; any other is dropped (and listed,
/// for a warning).
pub(crate) fn carry_over(
    source: &[u8],
    range: &Range<usize>,
    expanded: &[u8],
    parts: &[Range<usize>],
    comments: &[Range<usize>],
) -> Result<Carried, Refusal> {
    if parts.is_empty() && comments.is_empty() {
        return Ok(Carried {
            bytes: expanded.to_vec(),
            dropped: Vec::new(),
        });
    }
    let (replacement, at) = solid(expanded, &[]);
    let carrier = Carrier {
        source,
        range,
        matched: source.get(range.clone()).unwrap_or(&[]),
        expanded,
        replacement,
        at,
        parts,
        comments,
    };
    let mut insertions: Vec<Insertion> = Vec::with_capacity(parts.len());
    for (order, part) in parts.iter().enumerate() {
        if let Some((position, text)) = carrier.place_part(part)? {
            insertions.push((position, order, text));
        }
    }
    let mut lost = Vec::new();
    for (index, comment) in comments.iter().enumerate() {
        let here = carrier.local(comment);
        let text = &carrier.matched[here];
        if text.is_empty() || contains(expanded, text) {
            continue;
        }
        match carrier.place_comment(comment) {
            Some((position, text)) => insertions.push((position, parts.len() + index, text)),
            None => lost.push(comment.clone()),
        }
    }
    Ok(Carried {
        bytes: insert_all(expanded, insertions),
        dropped: lost,
    })
}

/// Bytes to insert into the replacement: (position, order among equal positions, text).
type Insertion = (usize, usize, Vec<u8>);

/// One match's replacement and what must be carried into it.
struct Carrier<'c> {
    source: &'c [u8],
    range: &'c Range<usize>,
    /// The match's bytes.
    matched: &'c [u8],
    expanded: &'c [u8],
    /// The replacement's non-blank bytes, and each one's index in `expanded`.
    replacement: Vec<u8>,
    at: Vec<usize>,
    parts: &'c [Range<usize>],
    comments: &'c [Range<usize>],
}

impl Carrier<'_> {
    /// A range of the file as a range of the match.
    fn local(&self, r: &Range<usize>) -> Range<usize> {
        r.start.saturating_sub(self.range.start)
            ..r.end
                .saturating_sub(self.range.start)
                .min(self.matched.len())
    }

    /// Where `part` goes in the replacement, with its text (`None`: the replacement spells
    /// it already); `Err` when it has no place.
    fn place_part(&self, part: &Range<usize>) -> Result<Option<(usize, Vec<u8>)>, Refusal> {
        let (matched, replacement, at) = (self.matched, &self.replacement, &self.at);
        let here = self.local(part);
        // Holes: every other part, and what the replacement drops.
        let holes: Vec<Range<usize>> = self
            .parts
            .iter()
            .filter(|p| *p != part)
            .chain(self.comments)
            .map(|r| self.local(r))
            .collect();
        let (before, _) = solid(&matched[..here.start], &holes);
        let after_holes: Vec<Range<usize>> = holes
            .iter()
            .filter(|h| h.end > here.end)
            .map(|h| h.start.saturating_sub(here.end)..h.end - here.end)
            .collect();
        let (after, _) = solid(&matched[here.end..], &after_holes);
        // The part with the blanks that separate it from the code before it, or, at the
        // start of the match, from the code after it.
        let text = if before.is_empty() {
            let mut end = here.end;
            while end < matched.len() && is_blank(matched[end]) {
                end += 1;
            }
            &matched[here.start..end]
        } else {
            let mut start = here.start;
            while start > 0 && is_blank(matched[start - 1]) {
                start -= 1;
            }
            &matched[start..here.end]
        };
        let next_is = |position: usize| {
            // The replacement's next non-blank byte from `position` must be the code's.
            let next = at
                .iter()
                .position(|&i| i >= position)
                .map(|k| replacement[k]);
            next == after.first().copied()
        };
        let previous_is = |position: usize| {
            let previous = at
                .iter()
                .rposition(|&i| i < position)
                .map(|k| replacement[k]);
            previous == before.last().copied()
        };
        let by_prefix = replacement.starts_with(&before).then(|| {
            if before.is_empty() {
                0
            } else {
                at[before.len() - 1] + 1
            }
        });
        let by_suffix = replacement.ends_with(&after).then(|| {
            if after.is_empty() {
                self.expanded.len()
            } else {
                at[replacement.len() - after.len()]
            }
        });
        // The template may spell the part itself where it goes (`async def` for an `async`
        // the pattern left out): then it is there already.
        // (With the code's neighbours on both sides, so `static_cast` is no `static`.)
        let (part_solid, _) = solid(&matched[here.clone()], &[]);
        let spelled_after = replacement.starts_with(&before)
            && replacement[before.len()..].starts_with(&part_solid)
            && replacement.get(before.len() + part_solid.len()) == after.first();
        let spelled_before = replacement.ends_with(&after) && {
            let head = &replacement[..replacement.len() - after.len()];
            head.ends_with(&part_solid)
                && head[..head.len() - part_solid.len()].last() == before.last()
        };
        if spelled_after || spelled_before {
            return Ok(None);
        }
        let place = by_prefix
            .filter(|&p| next_is(p))
            .or_else(|| by_suffix.filter(|&p| previous_is(p)));
        match place {
            Some(position) => Ok(Some((position, text.to_vec()))),
            None => Err(Refusal { part: part.clone() }),
        }
    }

    /// Where a comment the replacement does not spell goes, with its text (`None`: it has
    /// no place and is dropped).
    fn place_comment(&self, comment: &Range<usize>) -> Option<(usize, Vec<u8>)> {
        let (source, matched, expanded) = (self.source, self.matched, self.expanded);
        let here = self.local(comment);
        let holes: Vec<Range<usize>> = self
            .parts
            .iter()
            .chain(self.comments.iter().filter(|c| *c != comment))
            .map(|r| self.local(r))
            .collect();
        let (before, _) = solid(&matched[..here.start], &holes);
        let mut start = here.start;
        while start > 0 && matches!(matched[start - 1], b' ' | b'\t') {
            start -= 1;
        }
        // Code before it on its line: a trailing comment; else one on a line of its own.
        let trailing = start > 0 && matched[start - 1] != b'\n' && !before.is_empty();
        let place = (!before.is_empty() && self.replacement.starts_with(&before))
            .then(|| self.at[before.len() - 1] + 1)?;
        let rest_blank = {
            let rest = &expanded[place..];
            rest.iter()
                .position(|b| *b == b'\n')
                .is_some_and(|eol| rest[..eol].iter().all(|b| is_blank(*b)))
        };
        let newline: &[u8] = if line_end(source, comment.end).ends_with(b"\r\n") {
            b"\r\n"
        } else {
            b"\n"
        };
        let mut text = Vec::new();
        if trailing {
            text.extend_from_slice(&matched[start..here.end]);
            if !rest_blank {
                // After an opening bracket or a comma a line may break in every grammar
                // here (`def get(  # type: ignore` before the parameters): the code goes
                // on on the next line, as it did.
                if !matches!(before.last(), Some(b'(' | b'[' | b'{' | b',')) {
                    return None;
                }
                text.extend_from_slice(newline);
                text.extend_from_slice(next_line_indent(source, comment.end));
            }
        } else {
            // On a line of its own, where the replacement has the same code before a line
            // end (a method whose body is only `// nothing`).
            if !rest_blank {
                return None;
            }
            text.extend_from_slice(newline);
            text.extend_from_slice(line_indent(source, comment.start));
            text.extend_from_slice(&matched[here]);
        }
        Some((place, text))
    }
}

/// `expanded` with the insertions made, in order of position.
fn insert_all(expanded: &[u8], mut insertions: Vec<Insertion>) -> Vec<u8> {
    insertions.sort_by_key(|(position, order, _)| (*position, *order));
    let mut out = Vec::with_capacity(expanded.len() + 64);
    let mut cursor = 0;
    let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    for (position, _, text) in insertions {
        out.extend_from_slice(&expanded[cursor..position]);
        // Two words must not run together (`* const` before `b`, where the template has
        // `*b`).
        if word(out.last()) && word(text.first()) {
            out.push(b' ');
        }
        out.extend_from_slice(&text);
        if word(text.last()) && word(expanded.get(position)) {
            out.push(b' ');
        }
        cursor = position;
    }
    out.extend_from_slice(&expanded[cursor..]);
    out
}

/// The line of `source` holding byte `at`, from `at` to its end (line ending included).
fn line_end(source: &[u8], at: usize) -> &[u8] {
    let rest = source.get(at..).unwrap_or(&[]);
    let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// The leading blanks of the line holding byte `at`.
fn line_indent(source: &[u8], at: usize) -> &[u8] {
    let at = at.min(source.len());
    let start = memchr::memrchr(b'\n', &source[..at]).map_or(0, |i| i + 1);
    let blanks = source[start..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    &source[start..start + blanks]
}

/// The leading blanks of the line after the one holding byte `at`.
fn next_line_indent(source: &[u8], at: usize) -> &[u8] {
    let next = at + line_end(source, at).len();
    line_indent(source, next.min(source.len()))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carried(source: &str, part: &str, expanded: &str) -> Result<String, Refusal> {
        let at = source.find(part).expect("part in source");
        let parts: Vec<Range<usize>> = std::iter::once(at..at + part.len()).collect();
        carry_over(
            source.as_bytes(),
            &(0..source.len()),
            expanded.as_bytes(),
            &parts,
            &[],
        )
        .map(|v| String::from_utf8(v.bytes).expect("utf-8"))
    }

    #[test]
    fn a_leading_part_stays_in_front() {
        assert_eq!(
            carried("@Test\n  public void m() {}", "@Test", "public void n() {}").as_deref(),
            Ok("@Test\n  public void n() {}")
        );
        assert_eq!(
            carried(
                "async def f(self):\n    x",
                "async",
                "def f(self) -> None:\n    x"
            )
            .as_deref(),
            Ok("async def f(self) -> None:\n    x")
        );
    }

    #[test]
    fn an_inner_part_goes_after_the_same_code_or_before_it() {
        assert_eq!(
            carried(
                "import type { A } from \"m\"",
                "type",
                "import { A } from \"n\""
            )
            .as_deref(),
            Ok("import type { A } from \"n\"")
        );
        assert_eq!(
            carried("impl<T> X for Y<T> {}", "<T>", "impl X for Z<T> {}").as_deref(),
            Ok("impl<T> X for Z<T> {}")
        );
        // Renamed before the part: placed by the code after it.
        assert_eq!(
            carried("def f(x) -> int:\n    x", " -> int", "def g(x):\n    x").as_deref(),
            Ok("def g(x) -> int:\n    x")
        );
    }

    #[test]
    fn a_trailing_part_stays_at_the_end() {
        assert_eq!(
            carried(
                "if x is None:\n    a()\nelse:\n    b()",
                "else:\n    b()",
                "if x is not None:\n    a()"
            )
            .as_deref(),
            Ok("if x is not None:\n    a()\nelse:\n    b()")
        );
    }

    #[test]
    fn a_part_the_template_spells_is_not_doubled() {
        assert_eq!(
            carried(
                "async def f(self):\n    x",
                "async",
                "async def f(self):\n    y"
            )
            .as_deref(),
            Ok("async def f(self):\n    y")
        );
        // Spelled, but followed by something else than the code has: not taken for it.
        assert!(carried(
            "@Test\n  void m() {}",
            "@Test",
            "@Test @Slow\n  void m() {}"
        )
        .is_err());
        assert!(carried("static int x;", "static", "static_cast(x);").is_err());
    }

    #[test]
    fn a_template_that_rewrote_the_place_is_refused() {
        assert!(carried(
            "def f(x) -> int:\n    x",
            " -> int",
            "def f(x) -> None:\n    x"
        )
        .is_err());
        assert!(carried("@Test\n  public void m() {}", "@Test", "void m() {}").is_err());
    }
}
