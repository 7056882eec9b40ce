//! Rust `macro_rules!` transcribers read as code. tree-sitter keeps a macro's body as a token
//! tree, so the functions and impls a local macro generates (`impl fmt::Display for Format`
//! inside `impl_format!`) would have no definition, and the calls in it no site. The bodies
//! are copied into a text of the file's length, everything else blanked (line breaks kept, so
//! every position stays the file's own), with the macro syntax made plain Rust: `$x` becomes
//! `_x`, `$crate` becomes ` crate`, and a repetition `$( … ),*` loses its wrapper. That text is
//! parsed and extracted like a file.
//!
//! The arguments of macro invocations are code as well (`assert_eq!(it.collect_vec(), v)`,
//! `quickcheck! { fn prop(v: Vec<u8>) -> bool { … } }`, a benchmark table): each invocation's
//! token tree is copied, delimiters included (tree-sitter takes a bare `(…)`, `[…]` or `{…}`
//! as an expression statement), and an invocation nested in it (`vec![…]` inside
//! `assert_eq!(…)`) loses its `name!`, leaving its own token tree as an expression.

use std::collections::HashSet;

use cc_languages::{LanguageId, LanguageSpec, QueryCache};
use streaming_iterator::StreamingIterator;
use tree_sitter::QueryCursor;

/// The shadow text of `source` (its macro bodies and invocations' arguments as code), or
/// `None` when it has neither. The set holds the offsets where a `$` was replaced: a
/// definition named there is named by the macro's caller, not by the source.
pub(crate) fn shadow(
    language: &'static LanguageSpec,
    tree: &tree_sitter::Tree,
    source: &[u8],
) -> Option<(Vec<u8>, HashSet<usize>)> {
    if language.id != LanguageId::Rust || !source.contains(&b'!') {
        return None;
    }
    let query = QueryCache::global()
        .get(
            language,
            "graph.macro_bodies",
            "(macro_rule right: (token_tree) @body)
             (macro_invocation (token_tree) @arguments)",
        )
        .ok()?;
    let names = query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&query, tree.root_node(), source);
    let mut bodies: Vec<(usize, usize)> = Vec::new();
    let mut arguments: Vec<(usize, usize)> = Vec::new();
    while let Some(m) = matches.next() {
        for capture in m.captures() {
            let range = capture.node.byte_range();
            if names.get(capture.index as usize) == Some(&"arguments") {
                arguments.push((range.start, range.end));
            } else if range.end >= range.start + 2 {
                // Inside the delimiters.
                bodies.push((range.start + 1, range.end - 1));
            }
        }
    }
    if bodies.is_empty() && arguments.is_empty() {
        return None;
    }
    let mut text: Vec<u8> = source
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b } else { b' ' })
        .collect();
    let mut replaced = HashSet::new();
    for (start, end) in bodies {
        if let (Some(from), Some(to)) = (source.get(start..end), text.get_mut(start..end)) {
            to.copy_from_slice(from);
            plain(to, start, &mut replaced);
            unbang(to);
        }
    }
    for (start, end) in arguments {
        if let (Some(from), Some(to)) = (source.get(start..end), text.get_mut(start..end)) {
            to.copy_from_slice(from);
            unbang(to);
        }
    }
    Some((text, replaced))
}

/// Blanks the `name!` of each macro invocation in `code` (outside strings), so that its
/// token tree parses as an expression: `vec![a.f()]` becomes `    [a.f()]`.
fn unbang(code: &mut [u8]) {
    let mut i = 0;
    while i < code.len() {
        if let Some(end) = literal_end(code, i) {
            i = end + 1;
            continue;
        }
        match code[i] {
            b'!' if i > 0 && is_ident(code[i - 1]) => {
                let after = code[i + 1..].iter().find(|b| !b.is_ascii_whitespace());
                if matches!(after, Some(b'(' | b'[' | b'{')) {
                    let mut start = i;
                    while start > 0 && is_ident(code[start - 1]) {
                        start -= 1;
                    }
                    code[start..=i].fill(b' ');
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Where the string or character literal starting at `i` ends (its closing quote), or
/// `None` when none starts there: what is inside one is not the macro's syntax.
fn literal_end(code: &[u8], i: usize) -> Option<usize> {
    match code.get(i)? {
        b'"' => {
            let mut j = i + 1;
            while j < code.len() && code[j] != b'"' {
                j += if code[j] == b'\\' { 2 } else { 1 };
            }
            Some(j)
        }
        // A character literal (`'('`); a lifetime (`'a`) is no literal.
        b'\'' if code.get(i + 2) == Some(&b'\'') => Some(i + 2),
        _ => None,
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Rewrites macro syntax in `body` (which starts at `offset` in the file) into plain Rust of
/// the same length.
fn plain(body: &mut [u8], offset: usize, replaced: &mut HashSet<usize>) {
    // For each open parenthesis: does it open a repetition?
    let mut open: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        // A string's or character literal's parentheses are not the macro's.
        if let Some(end) = literal_end(body, i) {
            i = end + 1;
            continue;
        }
        match body[i] {
            b'$' => match body.get(i + 1) {
                Some(b'(') => {
                    body[i] = b' ';
                    body[i + 1] = b' ';
                    open.push(true);
                    i += 1;
                }
                Some(_) if body[i + 1..].starts_with(b"crate") => body[i] = b' ',
                Some(&next) if is_ident(next) => {
                    body[i] = b'_';
                    replaced.insert(offset + i);
                }
                _ => body[i] = b' ',
            },
            b'(' => open.push(false),
            // The pop happens whether or not it closes a repetition.
            b')' if open.pop() == Some(true) => {
                body[i] = b' ';
                // `)*`, `)+`, `)?`, or a one-character separator before one of them.
                let op = |b: Option<&u8>| matches!(b, Some(b'*' | b'+' | b'?'));
                if op(body.get(i + 1)) {
                    body[i + 1] = b' ';
                    i += 1;
                } else if op(body.get(i + 2)) {
                    body[i + 1] = b' ';
                    body[i + 2] = b' ';
                    i += 2;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain_text(body: &str) -> String {
        let mut bytes = body.as_bytes().to_vec();
        let mut replaced = HashSet::new();
        plain(&mut bytes, 0, &mut replaced);
        String::from_utf8(bytes).unwrap_or_default()
    }

    #[test]
    fn nested_invocations_lose_their_names_only() {
        let mut code = b"(vec![a.f()], x != y, !(z), format!(\"a!(b)\"), m! {c})".to_vec();
        unbang(&mut code);
        assert_eq!(
            String::from_utf8(code).unwrap_or_default(),
            "(    [a.f()], x != y, !(z),        (\"a!(b)\"),    {c})"
        );
    }

    #[test]
    fn macro_syntax_becomes_rust_of_the_same_length() {
        let body = "impl<$($B),*, X> F<(($($B,)*), X)> for $t { fn $name() { $crate::f(\"$(\") } }";
        let out = plain_text(body);
        assert_eq!(out.len(), body.len());
        assert_eq!(
            out,
            "impl<  _B   , X> F<((  _B,  ), X)> for _t { fn _name() {  crate::f(\"$(\") } }"
        );
    }
}
