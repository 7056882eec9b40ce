//! Attribute macros a C grammar cannot know: `uint32_t* BROTLI_RESTRICT const x = …`,
//! `static BROTLI_INLINE void f(void)`, `int f(void) BROTLI_ATTR;`. tree-sitter-c reads the
//! macro as the declarator's name, or the whole declaration as an expression, and the real
//! name as an `ERROR`; a declaration pattern then misses it, or binds the macro.
//!
//! In the statements that hold a syntax error (and the one after each, where a missing `;`
//! split a declaration), a word in one of these places is taken for such a macro:
//! - after `*` and before another word: `* MACRO name`, `* MACRO const name`;
//! - in capitals, before a C type name: `MACRO void f(…)`, `static MACRO size_t g(…)`;
//! - in capitals, before two more words and then `(`, `;`, `=`, `[` or `,`:
//!   `static MACRO BOOL h(void)`;
//! - in capitals, after the `)` of a parameter list and before `;` or `{`;
//! - in capitals with arguments, before a C type name or two words: `ALIGNED(8) int x[4];`.
//!
//! Those bytes are set aside (replaced by spaces, so every offset stays) and the file is
//! parsed again; the second tree is used when it has fewer syntax errors. A match that spans
//! a set-aside macro reports it as an omitted part, so a rewrite carries it over.

use std::ops::Range;

use crate::node::Node;

/// Kinds that hold statements or declarations: a statement is a child of one.
const HOLDERS: &[&str] = &[
    "translation_unit",
    "compound_statement",
    "declaration_list",
    "field_declaration_list",
    "case_statement",
    "preproc_if",
    "preproc_ifdef",
    "preproc_else",
    "preproc_elif",
    "preproc_elifdef",
    "linkage_specification",
];

/// C's built-in type names, as tree-sitter-c's `primitive_type` has them.
const TYPE_NAMES: &[&[u8]] = &[
    b"void",
    b"char",
    b"short",
    b"int",
    b"long",
    b"float",
    b"double",
    b"signed",
    b"unsigned",
    b"bool",
    b"_Bool",
    b"size_t",
    b"ssize_t",
    b"ptrdiff_t",
    b"intptr_t",
    b"uintptr_t",
    b"charptr_t",
    b"nullptr_t",
    b"max_align_t",
    b"int8_t",
    b"int16_t",
    b"int32_t",
    b"int64_t",
    b"uint8_t",
    b"uint16_t",
    b"uint32_t",
    b"uint64_t",
    b"char8_t",
    b"char16_t",
    b"char32_t",
    b"wchar_t",
    b"struct",
    b"union",
    b"enum",
    b"const",
    b"volatile",
];

fn is_word(text: &[u8]) -> bool {
    text.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && text.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// `BROTLI_RESTRICT`, `ATTR`: capitals, digits and `_`, with a letter.
fn is_capitals(text: &[u8]) -> bool {
    is_word(text)
        && text.iter().any(u8::is_ascii_uppercase)
        && text
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

/// The byte ranges of the attribute macros of `root`'s statements with syntax errors.
pub(crate) fn attribute_macros(root: Node<'_>, source: &[u8]) -> Vec<Range<usize>> {
    if !root.has_error() {
        return Vec::new();
    }
    // The statements holding an error, each with the one after it (read as one: a missing
    // `;` may have split a declaration in two).
    // The walk keeps the path from the root to its node: asking tree-sitter for a node's
    // parent walks down from the root, which on a kernel file with thousands of errors took
    // most of a search's time.
    let mut statements: Vec<Node<'_>> = Vec::new();
    let mut seen: std::collections::HashSet<Range<usize>> = std::collections::HashSet::new();
    let mut path: Vec<Node<'_>> = Vec::new();
    let mut walk = root.walk();
    while let Some(node) = walk.next() {
        path.truncate(walk.depth());
        path.push(node);
        if !(node.is_error() || node.is_missing()) {
            continue;
        }
        // The node's ancestor (or itself) whose parent is the nearest statement holder; the
        // root when none holds it.
        let ancestors = &path[..path.len() - 1];
        let below_holder = ancestors
            .iter()
            .rposition(|n| HOLDERS.contains(&n.kind()))
            .map_or(0, |at| at + 1);
        let Some(statement) = path.get(below_holder).copied() else {
            continue;
        };
        if seen.insert(statement.range()) {
            statements.push(statement);
        }
    }
    let mut out: Vec<Range<usize>> = Vec::new();
    for statement in statements {
        let mut leaves = Vec::new();
        statement.leaves_into(&mut leaves);
        if let Some(next) = statement.next_sibling() {
            next.leaves_into(&mut leaves);
        }
        let text = |i: usize| -> &[u8] {
            leaves
                .get(i)
                .and_then(|r| source.get(r.clone()))
                .unwrap_or(&[])
        };
        for i in 0..leaves.len() {
            let word = text(i);
            if !is_word(word) || TYPE_NAMES.contains(&word) {
                continue;
            }
            let previous = i.checked_sub(1).map_or(&[][..], text);
            let next = text(i + 1);
            let after_star = previous == b"*" && is_word(next);
            let capitals = is_capitals(word);
            let before_type = capitals && TYPE_NAMES.contains(&next);
            let before_declaration = capitals
                && is_word(next)
                && is_word(text(i + 2))
                && matches!(text(i + 3), b"(" | b";" | b"=" | b"[" | b",");
            let after_parameters = capitals && previous == b")" && matches!(next, b";" | b"{");
            if after_star || before_type || before_declaration || after_parameters {
                out.push(leaves[i].clone());
                continue;
            }
            // `MACRO(args) type …`: an attribute macro with arguments, set aside whole.
            if capitals && next == b"(" {
                let mut depth = 0usize;
                let mut close = None;
                for (k, _) in leaves.iter().enumerate().skip(i + 1) {
                    match text(k) {
                        b"(" => depth += 1,
                        b")" => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                close = Some(k);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let Some(close) = close else {
                    continue;
                };
                let then = text(close + 1);
                let declares = TYPE_NAMES.contains(&then)
                    || (is_word(then) && (is_word(text(close + 2)) || text(close + 2) == b"*"));
                if declares {
                    out.push(leaves[i].start..leaves[close].end);
                }
            }
        }
    }
    out.sort_by_key(|r| (r.start, r.end));
    out.dedup();
    out
}

/// `source` with each of `ranges` replaced by spaces.
pub(crate) fn blanked(source: &[u8], ranges: &[Range<usize>]) -> Vec<u8> {
    let mut out = source.to_vec();
    for range in ranges {
        if let Some(bytes) = out.get_mut(range.clone()) {
            bytes.fill(b' ');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn macros(code: &str) -> Vec<String> {
        let tree = cc_languages::Parser::new()
            .parse(&cc_languages::C, code.as_bytes())
            .unwrap();
        attribute_macros(Node::new(tree.root_node()), code.as_bytes())
            .into_iter()
            .map(|r| code[r].to_owned())
            .collect()
    }

    #[test]
    fn macros_in_declarations_with_errors_are_found() {
        assert_eq!(
            macros("void f(void) {\n  size_t* BROTLI_RESTRICT num = &s->num;\n}\n"),
            ["BROTLI_RESTRICT"]
        );
        assert_eq!(
            macros("void f(void) {\n  HasherCommon* BROTLI_RESTRICT common = &s->common;\n}\n"),
            ["BROTLI_RESTRICT"]
        );
        assert_eq!(
            macros("void f(void) {\n  uint32_t* BROTLI_RESTRICT const b = s->b;\n}\n"),
            ["BROTLI_RESTRICT"]
        );
        assert_eq!(
            macros("static BROTLI_INLINE void f(int x) { return; }\n"),
            ["BROTLI_INLINE"]
        );
        assert_eq!(
            macros("static BROTLI_NOINLINE BROTLI_BOOL h(void) { return 1; }\n"),
            ["BROTLI_NOINLINE"]
        );
        assert_eq!(macros("int k(void) BROTLI_ATTR;\n"), ["BROTLI_ATTR"]);
        assert_eq!(
            macros("void f(void) {\n  BROTLI_ALIGNED(8) int *r = a;\n}\n"),
            ["BROTLI_ALIGNED(8)"]
        );
        // Clean code has none, whatever it spells.
        assert!(macros("int *p = a * b;\nBROTLI_BOOL x = 1;\n").is_empty());
    }
}
