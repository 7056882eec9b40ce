//! Rewrite templates: `$NAME` and `$$$NAME` replaced by what the pattern captured, with
//! multi-line substitutions re-indented to where they land.
//!
//! Indentation: the template's own line indentation is read in the template's unit (its
//! smallest indentation step) and written in the file's unit (a tab, or the file's usual
//! number of spaces), after the indentation of the line the match starts on. A captured text
//! keeps its lines' indentation relative to the line it started on, moved to the line it is
//! inserted into.

use std::ops::Range;

use crate::find::Captured;
use crate::meta::{parse_metavar, MetaVar};

/// A template that cannot be used with the pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The template names a metavariable the pattern does not bind.
    #[error(
        "the rewrite uses `{name}`, which the pattern does not bind; the pattern binds: {bound}"
    )]
    Unbound {
        /// The metavariable as written (`$X`, `$$$ARGS`).
        name: String,
        /// The names the pattern binds, comma-separated (`none` when it binds none).
        bound: String,
    },
    /// `$_` or `$$$` in a template: they bind nothing, so there is nothing to put there.
    #[error("the rewrite uses `{0}`, which never binds anything; name it in the pattern (`$X`, `$$$ARGS`) and use that name")]
    Anonymous(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var { name: String, written: String },
}

/// A parsed rewrite template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `text` and checks every metavariable it uses is in `bound`.
    pub fn new(text: &str, bound: &[String]) -> Result<Template, TemplateError> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let mut pieces = Vec::new();
        let mut last = 0;
        for (start, end) in spans(text) {
            let written = &text[start..end];
            let var = parse_metavar(written, '$');
            let name = match var {
                Some(MetaVar::Single(name)) | Some(MetaVar::Multi(name)) => name,
                Some(MetaVar::AnonSingle) | Some(MetaVar::AnonMulti) => {
                    return Err(TemplateError::Anonymous(written.to_owned()))
                }
                None => continue,
            };
            if !bound.contains(&name) {
                return Err(TemplateError::Unbound {
                    name: written.to_owned(),
                    bound: if bound.is_empty() {
                        "none".to_owned()
                    } else {
                        bound
                            .iter()
                            .map(|b| format!("${b}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                });
            }
            if start > last {
                pieces.push(Piece::Text(text[last..start].to_owned()));
            }
            pieces.push(Piece::Var {
                name,
                written: written.to_owned(),
            });
            last = end;
        }
        if last < text.len() {
            pieces.push(Piece::Text(text[last..].to_owned()));
        }
        Ok(Template { pieces })
    }

    /// Names the template substitutes.
    pub fn names(&self) -> Vec<&str> {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Var { name, .. } => Some(name.as_str()),
                Piece::Text(_) => None,
            })
            .collect()
    }

    /// The replacement for one match of a file whose bytes are `source`.
    pub fn expand(
        &self,
        source: &[u8],
        at: usize,
        captures: &[(String, Captured)],
        file_unit: &str,
    ) -> String {
        let match_indent = line_indent(source, at);
        let template_unit = detect_unit(self.template_text().as_bytes());
        let mut out = String::new();
        for (index, piece) in self.pieces.iter().enumerate() {
            match piece {
                Piece::Text(text) => {
                    for (i, part) in text.split('\n').enumerate() {
                        if i > 0 {
                            out.push('\n');
                            let (indent, rest) = split_indent(part);
                            if !rest.is_empty() || self.var_follows(index, i, text) {
                                out.push_str(&match_indent);
                                out.push_str(&convert_indent(indent, &template_unit, file_unit));
                            }
                            out.push_str(rest);
                        } else {
                            out.push_str(part);
                        }
                    }
                }
                Piece::Var { name, .. } => {
                    let captured = captures.iter().find(|(n, _)| n == name).map(|(_, c)| c);
                    let Some((range, empty_run)) = captured.map(capture_range) else {
                        continue;
                    };
                    if empty_run {
                        drop_separator(&mut out, &self.pieces, index);
                        continue;
                    }
                    let text = String::from_utf8_lossy(source.get(range.clone()).unwrap_or(&[]));
                    let from_indent = line_indent(source, range.start);
                    let to_indent = current_line_indent(&out);
                    push_reindented(&mut out, &text, &from_indent, &to_indent);
                }
            }
        }
        // A separator dropped for an empty run may leave `, ` before it: see drop_separator.
        out
    }

    fn template_text(&self) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Var { written, .. } => written.as_str(),
            })
            .collect()
    }

    /// Whether a metavariable follows on line `line` of the text piece at `index` (so an
    /// indentation-only line still needs its indentation).
    fn var_follows(&self, index: usize, line: usize, text: &str) -> bool {
        line == text.split('\n').count() - 1
            && matches!(self.pieces.get(index + 1), Some(Piece::Var { .. }))
    }
}

/// `(start, end)` of every `$…` token that could be a metavariable.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i] == b'$' {
            i += 1;
        }
        while i < bytes.len()
            && (bytes[i].is_ascii_uppercase() || bytes[i].is_ascii_digit() || bytes[i] == b'_')
        {
            i += 1;
        }
        out.push((start, i));
    }
    out
}

/// The bytes a capture stands for, and whether it is an empty run.
fn capture_range(captured: &Captured) -> (Range<usize>, bool) {
    match captured {
        Captured::Node(range) | Captured::Text(range) => (range.clone(), false),
        Captured::Nodes {
            span: Some(span), ..
        } => (span.clone(), false),
        Captured::Nodes { span: None, .. } => (0..0, true),
    }
}

/// For an empty `$$$X`: drop the `,` before it (`f($A, $$$R)` → `f(x)`), or, at the start
/// of a list, mark the one after it for removal by removing it from the output later.
fn drop_separator(out: &mut String, pieces: &[Piece], index: usize) {
    let trimmed = out.trim_end_matches([' ', '\t']);
    if let Some(without) = trimmed.strip_suffix(',') {
        let keep = without.len();
        out.truncate(keep);
        return;
    }
    // `f($$$R, $A)`: the following text starts with `,`; skip it by consuming it in place.
    if let Some(Piece::Text(next)) = pieces.get(index + 1) {
        if next.trim_start_matches([' ', '\t']).starts_with(',') {
            out.push('\u{0}');
        }
    }
}

/// The leading whitespace of the line containing byte `at`.
pub fn line_indent(source: &[u8], at: usize) -> String {
    let at = at.min(source.len());
    let start = memchr::memrchr(b'\n', &source[..at]).map_or(0, |i| i + 1);
    let indent: Vec<u8> = source[start..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .copied()
        .collect();
    String::from_utf8_lossy(&indent).into_owned()
}

fn current_line_indent(out: &str) -> String {
    let line = out.rsplit('\n').next().unwrap_or("");
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

fn split_indent(line: &str) -> (&str, &str) {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    line.split_at(n)
}

/// Appends `text`, moving its lines after the first from `from` indentation to `to`.
fn push_reindented(out: &mut String, text: &str, from: &str, to: &str) {
    for (i, line) in text.split('\n').enumerate() {
        if i == 0 {
            out.push_str(line);
            continue;
        }
        out.push('\n');
        if line.trim().is_empty() {
            continue;
        }
        let rest = match line.strip_prefix(from) {
            Some(rest) => rest,
            // Less indented than where the capture started (a closing bracket): keep what
            // is beyond the common part.
            None => line.trim_start_matches([' ', '\t']),
        };
        out.push_str(to);
        out.push_str(rest);
    }
}

/// Template indentation `indent`, in `from` units, rewritten in `to` units.
fn convert_indent(indent: &str, from: &str, to: &str) -> String {
    if from == to || indent.is_empty() {
        return indent.to_owned();
    }
    let (levels, rest) = if from == "\t" {
        let tabs = indent.chars().take_while(|c| *c == '\t').count();
        (tabs, &indent[tabs..])
    } else {
        let spaces = indent.chars().take_while(|c| *c == ' ').count();
        let width = from.len().max(1);
        (spaces / width, &indent[spaces - spaces % width..])
    };
    format!("{}{}", to.repeat(levels), rest)
}

/// The indentation unit of a text: a tab when most indented lines start with one, otherwise
/// the most common step by which indentation grows (4 spaces when there is none).
pub fn detect_unit(source: &[u8]) -> String {
    let mut tabs = 0usize;
    let mut spaced = 0usize;
    let mut steps = [0usize; 9];
    let mut previous = 0usize;
    for line in source.split(|b| *b == b'\n') {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        match line.first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') => spaced += 1,
            _ => {}
        }
        let width = line.iter().take_while(|b| **b == b' ').count();
        if width > previous && width - previous <= 8 {
            steps[width - previous] += 1;
        }
        previous = width;
    }
    if tabs > spaced {
        return "\t".to_owned();
    }
    let best = (1..=8).max_by_key(|&w| (steps[w], w == 4)).unwrap_or(4);
    if steps[best] == 0 {
        "    ".to_owned()
    } else {
        " ".repeat(best)
    }
}

/// Removes the `\0` markers [`drop_separator`] left, with the `,` (and spaces) after each.
pub(crate) fn clean_markers(text: String) -> String {
    if !text.contains('\u{0}') {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{0}' {
            out.push(c);
            continue;
        }
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        if chars.peek() == Some(&',') {
            chars.next();
            while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                chars.next();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn unbound_and_anonymous_metavariables_are_refused() {
        let bound = names(&["A"]);
        assert_eq!(
            Template::new("f($A, $B)", &bound),
            Err(TemplateError::Unbound {
                name: "$B".into(),
                bound: "$A".into()
            })
        );
        assert!(matches!(
            Template::new("f($_)", &bound),
            Err(TemplateError::Anonymous(_))
        ));
        assert!(matches!(
            Template::new("f($$$)", &bound),
            Err(TemplateError::Anonymous(_))
        ));
        // Lower case is not a metavariable: bash's `$x` stays.
        assert!(Template::new("echo $x $A", &bound).is_ok());
    }

    #[test]
    fn units_are_detected() {
        assert_eq!(detect_unit(b"a\n\tb\n\t\tc\n"), "\t");
        assert_eq!(detect_unit(b"a\n  b\n    c\n  d\n"), "  ");
        assert_eq!(detect_unit(b"def f():\n    x\n"), "    ");
        assert_eq!(detect_unit(b"x = 1\n"), "    ");
    }

    #[test]
    fn indentation_converts_between_units() {
        assert_eq!(convert_indent("        ", "    ", "\t"), "\t\t");
        assert_eq!(convert_indent("\t", "\t", "  "), "  ");
        assert_eq!(convert_indent("      ", "    ", "\t"), "\t  ");
    }

    #[test]
    fn markers_take_the_following_separator() {
        assert_eq!(clean_markers("f(\u{0}, x)".to_owned()), "f(x)");
        assert_eq!(clean_markers("f(x)".to_owned()), "f(x)");
    }
}
