//! Issue 26, item 6 on real code: patterns of several statements over cmark (cmarkgfm's
//! C sources) find what an independent count finds: one computed here from the parsed
//! trees, with tree-sitter's own API (consecutive named children of any node), and one from
//! the text's lines. A run may begin at a labeled statement (under its label).

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::path::{Path, PathBuf};

use cc_structural::{search, Languages, Pattern, SearchOptions};

fn c_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "c" || e == "h") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn parse(source: &[u8]) -> tree_sitter::Tree {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&cc_languages::C.grammar())
        .expect("C loads");
    parser.parse(source, None).expect("a tree")
}

/// The tokens of a node's text, blanks aside (leaves' texts, comments left out).
fn tokens(node: tree_sitter::Node<'_>, source: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    let mut depth = 0usize;
    loop {
        let n = cursor.node();
        if n.child_count() == 0 {
            if !n.is_extra() && n.end_byte() > n.start_byte() {
                out.push(source[n.byte_range()].to_vec());
            }
        } else if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if depth == 0 {
                return out;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            cursor.goto_parent();
            depth -= 1;
        }
    }
}

/// Pairs of consecutive named children (comments aside) of every node where `pair` holds,
/// counted without overlap (a pair's second statement does not start another).
fn count_pairs(
    tree: &tree_sitter::Tree,
    source: &[u8],
    pair: &dyn Fn(tree_sitter::Node<'_>, tree_sitter::Node<'_>, &[u8]) -> bool,
) -> usize {
    let mut count = 0;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        let children: Vec<tree_sitter::Node<'_>> = node.children(&mut cursor).collect();
        let named: Vec<tree_sitter::Node<'_>> = children
            .iter()
            .copied()
            .filter(|c| c.is_named() && !c.is_extra())
            .collect();
        let mut i = 0;
        while i + 1 < named.len() {
            if pair(unlabeled(named[i]), named[i + 1], source) {
                count += 1;
                i += 2;
            } else {
                i += 1;
            }
        }
        stack.extend(children);
    }
    count
}

/// The statement under a run's first labels (`err: x = 1;`): a run may begin there.
fn unlabeled(mut node: tree_sitter::Node<'_>) -> tree_sitter::Node<'_> {
    while node.kind() == "labeled_statement" {
        let count = u32::try_from(node.named_child_count()).unwrap();
        match node.named_child(count.saturating_sub(1)) {
            Some(inner) if count >= 2 => node = inner,
            _ => break,
        }
    }
    node
}

/// `x = e;` (a plain assignment) followed by `break;`.
fn assign_then_break(a: tree_sitter::Node<'_>, b: tree_sitter::Node<'_>, source: &[u8]) -> bool {
    let assignment = a
        .named_child(0)
        .filter(|n| n.kind() == "assignment_expression" && a.named_child_count() == 1);
    a.kind() == "expression_statement"
        && b.kind() == "break_statement"
        && assignment.is_some_and(|n| {
            n.child_by_field_name("operator")
                .is_some_and(|op| &source[op.byte_range()] == b"=")
        })
}

/// `x = e;` followed by `return x;` (the same tokens).
fn assign_then_return(a: tree_sitter::Node<'_>, b: tree_sitter::Node<'_>, source: &[u8]) -> bool {
    if a.kind() != "expression_statement" || b.kind() != "return_statement" {
        return false;
    }
    let Some(assignment) = a
        .named_child(0)
        .filter(|n| n.kind() == "assignment_expression")
    else {
        return false;
    };
    let is_plain = assignment
        .child_by_field_name("operator")
        .is_some_and(|op| &source[op.byte_range()] == b"=");
    let (Some(left), Some(returned)) = (
        assignment.child_by_field_name("left"),
        b.named_child(0).filter(|_| b.named_child_count() == 1),
    ) else {
        return false;
    };
    is_plain && a.named_child_count() == 1 && tokens(left, source) == tokens(returned, source)
}

/// A call statement `f(…);` followed by a `return …;`.
fn call_then_return(a: tree_sitter::Node<'_>, b: tree_sitter::Node<'_>, _: &[u8]) -> bool {
    a.kind() == "expression_statement"
        && a.named_child_count() == 1
        && a.named_child(0)
            .is_some_and(|n| n.kind() == "call_expression")
        && b.kind() == "return_statement"
        && b.named_child_count() == 1
}

#[test]
fn several_statements_on_cmark_agree_with_an_independent_count() {
    let Some(project) = cc_test_support::real_project("cmarkgfm") else {
        return;
    };
    let root = project.join("third_party");
    let files = c_files(&root);
    assert!(files.len() > 30, "{} C files", files.len());
    let c = Languages::builtin().lookup("c").unwrap();
    let options = SearchOptions {
        max_results: 100_000,
        ..SearchOptions::default()
    };
    let ours = |pattern: &str| {
        let compiled = Pattern::new(c.clone(), pattern, None).unwrap();
        assert!(compiled.is_sequence(), "{pattern}");
        let result = search(&compiled, &root, &options).unwrap();
        assert_eq!(result.exhausted, 0);
        result.total
    };
    let mut by_tree = [0usize; 3];
    for file in &files {
        let source = std::fs::read(file).unwrap();
        let tree = parse(&source);
        by_tree[0] += count_pairs(&tree, &source, &assign_then_break);
        by_tree[1] += count_pairs(&tree, &source, &call_then_return);
        by_tree[2] += count_pairs(&tree, &source, &assign_then_return);
    }
    let found = [
        ours("$A = $B;\nbreak;"),
        ours("$F($$$A);\nreturn $R;"),
        ours("$A = $B;\nreturn $A;"),
    ];
    eprintln!("cmark: ours {found:?}, the tree's count {by_tree:?}");
    assert!(by_tree[0] > 10 && by_tree[1] > 10, "{by_tree:?}");
    assert_eq!(found, by_tree);

    // By lines: `X->free(Y);` with `Y = NULL;` on the next line. A line-based count is exact
    // here: both are one statement per line in cmark, never in a comment (checked: no such
    // line starts with `*` or `//`).
    let mut by_lines = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            let Some(freed) = pair[0]
                .split_once("->free(")
                .and_then(|(_, rest)| rest.strip_suffix(");"))
            else {
                continue;
            };
            if pair[1] == format!("{freed} = NULL;") {
                by_lines += 1;
            }
        }
    }
    let freed = ours("$M->free($P);\n$P = NULL;");
    assert!(by_lines >= 1);
    assert_eq!(freed, by_lines);
}
