//! Splitting a server's text edits into the smallest edits that make the same change.
//!
//! A server may send one edit that rewrites a whole stretch of a file: JDT LS answers a
//! rename with one edit per file, from the first renamed place to the last, carrying all the
//! text in between. The change is the same, but a caller that looks for each place the edit
//! renames (a rename's completeness scan, which adds the places the server missed) sees one
//! place where there are several, and adds edits inside that stretch that then overlap it.
//! Diffing the old text of each edit against its new text, token by token (identifiers
//! whole), gives back one edit per renamed place.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, Position, TextEdit, WorkspaceEdit,
};
use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};

use crate::position::{is_ident, units};
use crate::server::PositionEncoding;
use crate::uri::uri_path;
use crate::workspace_edit::{line_starts, offset};

/// How long one edit's diff may take: past it the diff is coarser, never wrong.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// Replaces every text edit of `edit` that rewrites more than it changes by the edits of
/// just what it changes, against the files as they are on disk. An edit of a file that
/// cannot be read as text, or whose range does not fit the file, stays as it is (applying
/// the edit reports that).
///
/// ```
/// use cc_lsp_client::edit_split::split_text_edits;
/// use cc_lsp_client::lsp_types::{Position, Range, TextEdit, Uri, WorkspaceEdit};
/// use std::str::FromStr;
///
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("A.java");
/// std::fs::write(&file, "int get() { return 1; }\nint x = get();\n").unwrap();
/// let uri = Uri::from_str(&format!("file://{}", file.display())).unwrap();
/// // One edit from the first `get` to the second, as JDT LS sends a rename.
/// let whole = TextEdit::new(
///     Range::new(Position::new(0, 4), Position::new(1, 11)),
///     "take() { return 1; }\nint x = take".into(),
/// );
/// let mut edit = WorkspaceEdit::new([(uri.clone(), vec![whole])].into_iter().collect());
/// split_text_edits(&mut edit, cc_lsp_client::PositionEncoding::Utf16);
/// let edits = &edit.changes.unwrap()[&uri];
/// assert_eq!(edits.len(), 2);
/// assert_eq!(edits[1].range, Range::new(Position::new(1, 8), Position::new(1, 11)));
/// assert_eq!(edits[1].new_text, "take");
/// ```
pub fn split_text_edits(edit: &mut WorkspaceEdit, encoding: PositionEncoding) {
    let mut texts: Vec<(PathBuf, Option<String>)> = Vec::new();
    let mut split = |uri: &lsp_types::Uri, edits: Vec<TextEdit>| -> Vec<TextEdit> {
        let Some(path) = uri_path(uri) else {
            return edits;
        };
        let index = match texts.iter().position(|(p, _)| *p == path) {
            Some(index) => index,
            None => {
                let text = std::fs::read_to_string(&path).ok();
                texts.push((path, text));
                texts.len() - 1
            }
        };
        match &texts[index].1 {
            Some(text) => edits
                .into_iter()
                .flat_map(|edit| split_one(text, edit, encoding))
                .collect(),
            None => edits,
        }
    };
    if let Some(changes) = &mut edit.changes {
        for (uri, edits) in changes.iter_mut() {
            *edits = split(uri, std::mem::take(edits));
        }
    }
    let documents: Vec<&mut lsp_types::TextDocumentEdit> = match &mut edit.document_changes {
        Some(DocumentChanges::Edits(changes)) => changes.iter_mut().collect(),
        Some(DocumentChanges::Operations(operations)) => operations
            .iter_mut()
            .filter_map(|operation| match operation {
                DocumentChangeOperation::Edit(change) => Some(change),
                DocumentChangeOperation::Op(_) => None,
            })
            .collect(),
        None => Vec::new(),
    };
    for document in documents {
        // Annotated edits keep their annotation: they are left whole.
        if document.edits.iter().any(|e| matches!(e, OneOf::Right(_))) {
            continue;
        }
        let edits: Vec<TextEdit> = document
            .edits
            .drain(..)
            .filter_map(|edit| match edit {
                OneOf::Left(edit) => Some(edit),
                OneOf::Right(_) => None,
            })
            .collect();
        document.edits = split(&document.text_document.uri, edits)
            .into_iter()
            .map(OneOf::Left)
            .collect();
    }
}

/// The edits of what `edit` changes in `text`.
fn split_one(text: &str, edit: TextEdit, encoding: PositionEncoding) -> Vec<TextEdit> {
    let starts = line_starts(text);
    let from = offset(text, &starts, edit.range.start, encoding);
    let to = offset(text, &starts, edit.range.end, encoding);
    let Some(old) = text.get(from..to).filter(|_| from <= to) else {
        return vec![edit];
    };
    // An edit within one token is as small as it gets.
    if !old.contains(|c: char| !is_ident(c)) && !edit.new_text.contains(|c: char| !is_ident(c)) {
        return vec![edit];
    }
    let old_tokens = tokens(old);
    let new_tokens = tokens(&edit.new_text);
    let deadline = Instant::now() + DIFF_DEADLINE;
    let ops =
        capture_diff_slices_deadline(Algorithm::Myers, &old_tokens, &new_tokens, Some(deadline));
    let old_offsets = token_offsets(&old_tokens);
    let position = |byte: usize| position_of(text, &starts, from + byte, encoding);
    let mut out = Vec::new();
    for op in ops {
        let (old_range, new_range) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index..old_index + old_len, new_index..new_index),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index..old_index, new_index..new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index..old_index + old_len,
                new_index..new_index + new_len,
            ),
        };
        let start = old_offsets[old_range.start];
        let end = old_offsets[old_range.end];
        out.push(TextEdit::new(
            lsp_types::Range::new(position(start), position(end)),
            new_tokens[new_range].concat(),
        ));
    }
    out
}

/// `text` cut into identifiers (whole) and single other characters.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut word_start: Option<usize> = None;
    for (at, c) in text.char_indices() {
        if is_ident(c) {
            word_start.get_or_insert(at);
            continue;
        }
        if let Some(start) = word_start.take() {
            out.push(&text[start..at]);
        }
        out.push(&text[at..at + c.len_utf8()]);
    }
    if let Some(start) = word_start {
        out.push(&text[start..]);
    }
    out
}

/// The byte offset where each token starts, and the end of the last.
fn token_offsets(tokens: &[&str]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(tokens.len() + 1);
    let mut at = 0;
    offsets.push(0);
    for token in tokens {
        at += token.len();
        offsets.push(at);
    }
    offsets
}

/// The LSP position of byte `byte` of `text`.
fn position_of(text: &str, starts: &[usize], byte: usize, encoding: PositionEncoding) -> Position {
    let line = starts
        .partition_point(|&start| start <= byte)
        .saturating_sub(1);
    let line_start = starts.get(line).copied().unwrap_or(0);
    let character = text
        .get(line_start..byte)
        .map_or(0, |prefix| units(prefix, encoding));
    Position::new(u32::try_from(line).unwrap_or(u32::MAX), character)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::workspace_edit::apply_text_edits;
    use lsp_types::Range;
    use proptest::prelude::*;

    fn edit(start: (u32, u32), end: (u32, u32), text: &str) -> TextEdit {
        TextEdit::new(
            Range::new(Position::new(start.0, start.1), Position::new(end.0, end.1)),
            text.into(),
        )
    }

    #[test]
    fn a_stretch_rewritten_for_two_renames_is_two_edits() {
        let text = "class A {\n  int getPackages() { return 1; }\n  int n = getPackages();\n}\n";
        let whole = edit(
            (1, 6),
            (2, 21),
            "packages() { return 1; }\n  int n = packages",
        );
        let parts = split_one(text, whole.clone(), PositionEncoding::Utf16);
        assert_eq!(
            parts,
            [
                edit((1, 6), (1, 17), "packages"),
                edit((2, 10), (2, 21), "packages")
            ]
        );
        let path = std::path::Path::new("A.java");
        assert_eq!(
            apply_text_edits(
                text,
                &parts.iter().collect::<Vec<_>>(),
                PositionEncoding::Utf16,
                path
            )
            .unwrap(),
            apply_text_edits(text, &[&whole], PositionEncoding::Utf16, path).unwrap()
        );
    }

    #[test]
    fn positions_count_in_the_servers_encoding() {
        let text = "let é = f();\nlet y = f();\n";
        // "f" at UTF-16 column 8 on line 0 and column 8 on line 1.
        let whole = edit((0, 8), (1, 9), "g();\nlet y = g");
        let parts = split_one(text, whole, PositionEncoding::Utf16);
        assert_eq!(
            parts,
            [edit((0, 8), (0, 9), "g"), edit((1, 8), (1, 9), "g")]
        );
        // In UTF-8, `f` of the first line is at byte column 9 (é takes two bytes).
        let whole = edit((0, 9), (1, 9), "g();\nlet y = g");
        let parts = split_one(text, whole, PositionEncoding::Utf8);
        assert_eq!(
            parts,
            [edit((0, 9), (0, 10), "g"), edit((1, 8), (1, 9), "g")]
        );
    }

    proptest! {
        /// Splitting never changes what the edit does.
        #[test]
        fn the_split_edits_make_the_same_text(
            text in "[a-c \n(){};]{0,60}",
            new in "[a-d \n(){};]{0,40}",
            a in 0usize..61,
            b in 0usize..61,
        ) {
            let (a, b) = (a.min(text.len()), b.min(text.len()));
            let (from, to) = (a.min(b), a.max(b));
            let starts = line_starts(&text);
            let at = |byte| position_of(&text, &starts, byte, PositionEncoding::Utf16);
            let whole = TextEdit::new(Range::new(at(from), at(to)), new.clone());
            let path = std::path::Path::new("t");
            let expected = apply_text_edits(&text, &[&whole], PositionEncoding::Utf16, path).unwrap();
            let parts = split_one(&text, whole, PositionEncoding::Utf16);
            let got = apply_text_edits(&text, &parts.iter().collect::<Vec<_>>(), PositionEncoding::Utf16, path).unwrap();
            prop_assert_eq!(got, expected);
        }
    }
}
