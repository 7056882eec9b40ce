//! Metavariables: how they are spelled, and the substitution that lets a grammar parse them.
//!
//! `$NAME` (upper-case letters, digits, `_`) is one named node; `$$$NAME` zero or more
//! siblings; `$$$` the same without a binding; `$_` and `$_NAME` one node without a binding.
//! Where `$NAME` is not an identifier in a grammar, each metavariable's `$` signs are replaced
//! by the language's substitute character before parsing, and [`Substituted::original`] maps
//! positions back; `$` followed by anything else (`$abc`, `${x}`) stays as written.

/// A metavariable as written in a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MetaVar {
    /// `$NAME`: one named node, bound to `NAME`.
    Single(String),
    /// `$_` or `$_NAME`: one named node, not bound.
    AnonSingle,
    /// `$$$NAME`: zero or more siblings, bound to `NAME`.
    Multi(String),
    /// `$$$`: zero or more siblings, not bound.
    AnonMulti,
}

impl MetaVar {
    /// The bound name, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            MetaVar::Single(name) | MetaVar::Multi(name) => Some(name),
            MetaVar::AnonSingle | MetaVar::AnonMulti => None,
        }
    }

    /// Whether it stands for a run of siblings.
    pub fn is_multi(&self) -> bool {
        matches!(self, MetaVar::Multi(_) | MetaVar::AnonMulti)
    }
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_'
}

/// Parses `text` when it is exactly one metavariable, spelled with `sigil` for `$`.
pub fn parse_metavar(text: &str, sigil: char) -> Option<MetaVar> {
    let mut rest = text;
    let mut dollars = 0;
    while let Some(next) = rest.strip_prefix(sigil) {
        rest = next;
        dollars += 1;
    }
    let all_name = rest.bytes().all(is_name_char);
    match dollars {
        3 if rest.is_empty() => Some(MetaVar::AnonMulti),
        3 if all_name && rest.starts_with('_') => Some(MetaVar::AnonMulti),
        3 if all_name => Some(MetaVar::Multi(rest.to_owned())),
        1 if rest.is_empty() || !all_name => None,
        1 if rest.starts_with('_') => Some(MetaVar::AnonSingle),
        1 => Some(MetaVar::Single(rest.to_owned())),
        _ => None,
    }
}

/// Byte ranges `(start, dollars, end)` of every metavariable in `text`: `$$$` with an
/// optional name, or `$` with a name. Patterns and rewrite templates share this spelling.
pub(crate) fn metavar_spans(text: &str) -> Vec<(usize, usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i;
        while j < bytes.len() && bytes[j] == b'$' {
            j += 1;
        }
        let dollars = j - start;
        let mut k = j;
        while k < bytes.len() && is_name_char(bytes[k]) {
            k += 1;
        }
        let named = k > j;
        // A name runs into a following identifier character (`$Ab`): not a metavariable.
        let clean_end = k >= bytes.len() || !(bytes[k].is_ascii_alphanumeric() || bytes[k] >= 0x80);
        if clean_end && ((dollars == 3) || (dollars == 1 && named)) {
            spans.push((start, dollars, k));
        }
        i = k.max(j);
    }
    spans
}

/// Byte ranges of double-quoted string literals (with their quotes), backslash escapes
/// honoured.
fn string_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        match (open, b) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), b'\\') => escaped = true,
            (Some(start), b'"') => {
                out.push(start..i + 1);
                open = None;
            }
            (None, b'"') => open = Some(i),
            _ => {}
        }
    }
    out
}

/// Whether `start` is where an object member begins: the innermost open bracket before it
/// is `{` and the last code character before it is `{` or `,`.
fn at_member_position(text: &str, start: usize, strings: &[std::ops::Range<usize>]) -> bool {
    let mut stack = Vec::new();
    let mut last = None;
    for (i, b) in text.bytes().enumerate().take(start) {
        if strings.iter().any(|r| r.contains(&i)) {
            last = Some(b'"');
            continue;
        }
        match b {
            b'{' | b'[' => stack.push(b),
            b'}' | b']' => {
                stack.pop();
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            last = Some(b);
        }
    }
    stack.last() == Some(&b'{') && matches!(last, Some(b'{') | Some(b','))
}

/// A pattern with its metavariables' `$` replaced (and, on request, a `;` after a
/// metavariable that ends a braced statement list), and the way back.
#[derive(Debug, Clone)]
pub struct Substituted {
    /// The text handed to the parser.
    pub text: String,
    /// `(position in text, extra bytes)` of each edit, in order: a substitute character
    /// takes more bytes than `$`, an inserted `;` takes one byte where there were none.
    edits: Vec<(usize, usize)>,
}

impl Substituted {
    /// Substitutes `sigil` for the `$` of each metavariable in `pattern` (`None` keeps `$`).
    /// With `terminate`, a `;` is inserted after a metavariable followed by `}` or a line
    /// end, for grammars where `{ $$$B }` is not a block of statements without it.
    pub fn new(pattern: &str, sigil: Option<char>, terminate: bool) -> Self {
        let mut buf = [0u8; 4];
        let sigil = sigil.map(|c| &*c.encode_utf8(&mut buf));
        Self::with_options(pattern, sigil, terminate, false)
    }

    /// Like [`new`](Self::new); with `quote`, a metavariable outside a string literal is
    /// wrapped in double quotes so that it parses as a value (JSON has no identifiers).
    pub fn with_options(pattern: &str, sigil: Option<&str>, terminate: bool, quote: bool) -> Self {
        let mut text = String::with_capacity(pattern.len() + 8);
        let mut edits = Vec::new();
        let mut last = 0;
        let strings = if quote {
            string_ranges(pattern)
        } else {
            Vec::new()
        };
        for (start, dollars, end) in metavar_spans(pattern) {
            text.push_str(&pattern[last..start]);
            let wrap = quote && !strings.iter().any(|r| r.start < start && end < r.end);
            if wrap {
                edits.push((text.len(), 1));
                text.push('"');
            }
            for _ in 0..dollars {
                match sigil {
                    Some(sigil) => {
                        edits.push((text.len(), sigil.len().saturating_sub(1)));
                        text.push_str(sigil);
                    }
                    None => text.push('$'),
                }
            }
            text.push_str(&pattern[start + dollars..end]);
            if wrap {
                edits.push((text.len(), 1));
                text.push('"');
                if at_member_position(pattern, start, &strings) {
                    // `{"a": 1, $$$R}`: a member, so give it a value to be a pair.
                    edits.push((text.len(), 2));
                    text.push_str(":0");
                }
            }
            last = end;
            if terminate {
                let rest = pattern[end..].trim_start_matches([' ', '\t']);
                if rest.starts_with('}') || rest.starts_with('\n') || rest.starts_with("\r\n") {
                    edits.push((text.len(), 1));
                    text.push(';');
                }
            }
        }
        text.push_str(&pattern[last..]);
        edits.retain(|(_, extra)| *extra > 0);
        Substituted { text, edits }
    }

    /// Whether anything was inserted or replaced.
    pub fn changed(&self) -> bool {
        !self.edits.is_empty()
    }

    /// The offset in the original pattern of offset `at` in [`text`](Self::text).
    pub fn original(&self, at: usize) -> usize {
        let mut shift = 0;
        for (pos, extra) in &self.edits {
            if *pos >= at {
                break;
            }
            // Inside an edit's extra bytes maps to its end in the original.
            shift += (*extra).min(at - pos);
        }
        at - shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metavariable_spellings() {
        assert_eq!(parse_metavar("$A", '$'), Some(MetaVar::Single("A".into())));
        assert_eq!(
            parse_metavar("$ARG_1", '$'),
            Some(MetaVar::Single("ARG_1".into()))
        );
        assert_eq!(parse_metavar("$_", '$'), Some(MetaVar::AnonSingle));
        assert_eq!(parse_metavar("$_X", '$'), Some(MetaVar::AnonSingle));
        assert_eq!(parse_metavar("$$$", '$'), Some(MetaVar::AnonMulti));
        assert_eq!(
            parse_metavar("$$$ARGS", '$'),
            Some(MetaVar::Multi("ARGS".into()))
        );
        assert_eq!(parse_metavar("µµµB", 'µ'), Some(MetaVar::Multi("B".into())));
        for not in ["$", "$abc", "$$A", "$A b", "A", "$$$$A", "${A}", "$Ab"] {
            assert_eq!(parse_metavar(not, '$'), None, "{not}");
        }
    }

    #[test]
    fn substitution_maps_back() {
        let sub = Substituted::new("f($A, $$$R) + $abc + \"$V\"", Some('µ'), false);
        assert_eq!(sub.text, "f(µA, µµµR) + $abc + \"µV\"");
        let at = sub.text.find("R)").unwrap();
        assert_eq!(sub.original(at), "f($A, $$$R) + ".find("R)").unwrap());
        let none = Substituted::new("$A", None, false);
        assert_eq!(none.text, "$A");
        assert_eq!(none.original(2), 2);
        assert!(!none.changed());
        let terminated = Substituted::new("if (c) { $$$B }", None, true);
        assert_eq!(terminated.text, "if (c) { $$$B; }");
        let semi = terminated.text.find(';').unwrap();
        assert_eq!(terminated.original(semi), semi);
        assert_eq!(terminated.original(semi + 1), semi);
        assert_eq!(terminated.original(semi + 3), semi + 2);
        let json = Substituted::with_options(
            "{\"a\": $A, \"b\": \"$B\", \"c\": \"x $C\"}",
            None,
            false,
            true,
        );
        assert_eq!(json.text, "{\"a\": \"$A\", \"b\": \"$B\", \"c\": \"x $C\"}");
        let a = json.text.find("\"$A").unwrap();
        assert_eq!(json.original(a), a);
        assert_eq!(json.original(a + 4), a + 2);
        let member = Substituted::with_options("{\"a\": 1, $$$R}", None, false, true);
        assert_eq!(member.text, "{\"a\": 1, \"$$$R\":0}");
        assert_eq!(
            member.original(member.text.len() - 1),
            "{\"a\": 1, $$$R".len()
        );
    }
}
