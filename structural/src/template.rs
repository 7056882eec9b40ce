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
use crate::meta::{metavar_spans, parse_metavar, MetaVar};

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
        // Line endings are the file's: the template's own are read as `\n`.
        let text = text.replace("\r\n", "\n");
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let mut pieces = Vec::new();
        let mut last = 0;
        for (start, _, end) in metavar_spans(text) {
            let written = &text[start..end];
            let name = match parse_metavar(written, '$') {
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

    /// The replacement for one match of a file whose bytes are `source`: bytes, since a
    /// capture is copied from the file as it is (a file need not be UTF-8). New lines take
    /// the file's line ending. `layout` says where the file's line comments end (code the
    /// template puts after a capture that ends with one goes on a line of its own: `{ $$$B }`
    /// where the body ends with `// note`, or it would become part of the comment) and which
    /// lines are inside a string or a comment (never re-indented: that would change a
    /// string's value).
    pub fn expand(
        &self,
        source: &[u8],
        at: usize,
        captures: &[(String, Captured)],
        file_unit: &str,
        layout: &Layout<'_>,
    ) -> Vec<u8> {
        let match_indent = line_indent(source, at);
        let mut expansion = Expansion {
            template: self,
            source,
            layout,
            file_unit,
            newline: if uses_crlf(source) { b"\r\n" } else { b"\n" },
            template_unit: detect_unit(self.template_text().as_bytes()),
            line_indent_now: match_indent.clone(),
            match_indent,
            out: Vec::new(),
            drop_leading_separator: false,
            after_line_comment: false,
        };
        for (index, piece) in self.pieces.iter().enumerate() {
            match piece {
                Piece::Text(text) => expansion.text(index, text),
                Piece::Var { name, .. } => {
                    let captured = captures.iter().find(|(n, _)| n == name).map(|(_, c)| c);
                    if let Some((range, empty_run)) = captured.map(capture_range) {
                        expansion.capture(index, range, empty_run);
                    }
                }
            }
        }
        expansion.out
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

/// One match's replacement being written, piece by piece.
struct Expansion<'e> {
    template: &'e Template,
    source: &'e [u8],
    layout: &'e Layout<'e>,
    file_unit: &'e str,
    newline: &'static [u8],
    template_unit: String,
    /// The indentation of the match's first line.
    match_indent: Vec<u8>,
    /// The indentation of the template line being written, in the file's terms.
    line_indent_now: Vec<u8>,
    out: Vec<u8>,
    /// An empty `$$$X` at the start of a list takes the separator after it along.
    drop_leading_separator: bool,
    /// The capture just written ends with a line comment.
    after_line_comment: bool,
}

impl Expansion<'_> {
    /// The template's text piece `index`: its new lines indented as the match is.
    fn text(&mut self, index: usize, text: &str) {
        let text = if std::mem::take(&mut self.drop_leading_separator) {
            without_leading_separator(text)
        } else {
            text
        };
        for (i, part) in text.split('\n').enumerate() {
            if i > 0 {
                self.out.extend_from_slice(self.newline);
                let (indent, rest) = split_indent(part);
                self.line_indent_now = self.match_indent.clone();
                self.line_indent_now.extend_from_slice(
                    convert_indent(indent, &self.template_unit, self.file_unit).as_bytes(),
                );
                if !rest.is_empty() || self.template.var_follows(index, i, text) {
                    self.out.extend_from_slice(&self.line_indent_now);
                }
                self.out.extend_from_slice(rest.as_bytes());
            } else if std::mem::take(&mut self.after_line_comment) && !part.trim().is_empty() {
                // `}` after `// note` would be commented out: its own line.
                self.out.extend_from_slice(self.newline);
                self.out.extend_from_slice(&self.line_indent_now);
                self.out
                    .extend_from_slice(part.trim_start_matches([' ', '\t']).as_bytes());
            } else {
                self.out.extend_from_slice(part.as_bytes());
            }
        }
        self.after_line_comment = false;
    }

    /// The capture of the template's piece `index`, from the file's bytes `range`,
    /// re-indented to where it lands (`empty_run`: an empty `$$$X`).
    fn capture(&mut self, index: usize, range: Range<usize>, empty_run: bool) {
        let out = &mut self.out;
        if empty_run {
            let line_start = current_line_start(out);
            let next_line = matches!(
                self.template.pieces.get(index + 1),
                Some(Piece::Text(t)) if t.starts_with('\n')
            );
            if line_start > 0 && next_line && out[line_start..].iter().all(is_blank) {
                // `$$$B` alone on its line and empty: no line of blanks left.
                out.truncate(line_start - 1);
                if out.ends_with(b"\r") {
                    out.pop();
                }
                return;
            }
            // `f($A, $$$R)` → `f(x)`: the `,` before it goes, or else the one after.
            self.drop_leading_separator = !drop_trailing_separator(out);
            return;
        }
        let text = self.source.get(range.clone()).unwrap_or(&[]);
        let mut from_indent = line_indent(self.source, range.start);
        // The line it lands on: the match's own line until the template starts a new one.
        let mut to_indent = if out.contains(&b'\n') {
            current_line_indent(out)
        } else {
            self.match_indent.clone()
        };
        let mid_line = !out[current_line_start(out)..].iter().all(is_blank);
        if mid_line && starts_its_line(self.source, range.start) {
            // A capture that had lines of its own (parameters one per line) put after code
            // (`def f(`): its lines stay where they were, relative to the match, not shifted
            // to where its first line now starts.
            from_indent = self.match_indent.clone();
            to_indent = self.match_indent.clone();
        }
        push_reindented(
            out,
            text,
            range.start,
            &from_indent,
            &to_indent,
            self.layout.verbatim,
        );
        self.after_line_comment = self
            .layout
            .line_comment_ends
            .binary_search(&range.end)
            .is_ok();
    }
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

/// Removes a `,` (and the blanks after it) that ends `out`; whether there was one.
fn drop_trailing_separator(out: &mut Vec<u8>) -> bool {
    let kept = out.len()
        - out
            .iter()
            .rev()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
    if kept > 0 && out[kept - 1] == b',' {
        out.truncate(kept - 1);
        true
    } else {
        false
    }
}

/// `text` without a leading `,` and the blanks around it (`f($$$R, $A)` with R empty).
fn without_leading_separator(text: &str) -> &str {
    match text.trim_start_matches([' ', '\t']).strip_prefix(',') {
        Some(rest) => rest.trim_start_matches([' ', '\t']),
        None => text,
    }
}

/// Whether the file ends its lines with `\r\n` (judged by its first line).
fn uses_crlf(source: &[u8]) -> bool {
    memchr::memchr(b'\n', source).is_some_and(|at| at > 0 && source[at - 1] == b'\r')
}

fn is_blank(b: &u8) -> bool {
    *b == b' ' || *b == b'\t'
}

/// The leading blanks of the line containing byte `at`.
fn line_indent(source: &[u8], at: usize) -> Vec<u8> {
    let at = at.min(source.len());
    let start = memchr::memrchr(b'\n', &source[..at]).map_or(0, |i| i + 1);
    source[start..]
        .iter()
        .take_while(|b| is_blank(b))
        .copied()
        .collect()
}

fn current_line_start(out: &[u8]) -> usize {
    memchr::memrchr(b'\n', out).map_or(0, |i| i + 1)
}

/// Whether only blanks precede byte `at` on its line.
fn starts_its_line(source: &[u8], at: usize) -> bool {
    let at = at.min(source.len());
    let start = memchr::memrchr(b'\n', &source[..at]).map_or(0, |i| i + 1);
    source[start..at].iter().all(is_blank)
}

fn current_line_indent(out: &[u8]) -> Vec<u8> {
    let start = memchr::memrchr(b'\n', out).map_or(0, |i| i + 1);
    out[start..]
        .iter()
        .take_while(|b| is_blank(b))
        .copied()
        .collect()
}

fn split_indent(line: &str) -> (&str, &str) {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    line.split_at(n)
}

/// What a template needs to know of the file's layout.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout<'a> {
    /// Offsets, sorted, where the file's line comments end.
    pub line_comment_ends: &'a [usize],
    /// Byte ranges, sorted, of the file's strings and comments that span lines: a line that
    /// starts inside one is copied as it is.
    pub verbatim: &'a [Range<usize>],
}

/// Appends `text` (which starts at byte `start` of the file), moving its lines after the
/// first from `from` indentation to `to`, except the lines that start inside one of the
/// `verbatim` ranges.
fn push_reindented(
    out: &mut Vec<u8>,
    text: &[u8],
    start: usize,
    from: &[u8],
    to: &[u8],
    verbatim: &[Range<usize>],
) {
    let mut line_start = start;
    for (i, line) in text.split(|b| *b == b'\n').enumerate() {
        let at = line_start;
        line_start += line.len() + 1;
        if i == 0 {
            out.extend_from_slice(line);
            continue;
        }
        out.push(b'\n');
        let inside = verbatim
            .binary_search_by(|r| {
                if r.end <= at {
                    std::cmp::Ordering::Less
                } else if r.start >= at {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok();
        if inside {
            out.extend_from_slice(line);
            continue;
        }
        if line.iter().all(|b| is_blank(b) || *b == b'\r') {
            // A blank line stays blank (keeping a `\r\n` ending whole).
            if line.ends_with(b"\r") {
                out.push(b'\r');
            }
            continue;
        }
        let rest = match line.strip_prefix(from) {
            Some(rest) => rest,
            // Less indented than where the capture started (a closing bracket): keep what
            // is beyond the common part.
            None => &line[line.iter().take_while(|b| is_blank(b)).count()..],
        };
        out.extend_from_slice(to);
        out.extend_from_slice(rest);
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

    fn expand(
        template: &str,
        pattern_names: &[&str],
        source: &str,
        captures: &[(&str, Captured)],
    ) -> String {
        let template = Template::new(template, &names(pattern_names)).unwrap();
        let captures: Vec<(String, Captured)> = captures
            .iter()
            .map(|(n, c)| (n.to_string(), c.clone()))
            .collect();
        let unit = detect_unit(source.as_bytes());
        // At the end: a match on a line of its own, not indented.
        String::from_utf8(template.expand(
            source.as_bytes(),
            source.len(),
            &captures,
            &unit,
            &Layout::default(),
        ))
        .unwrap()
    }

    #[test]
    fn an_empty_run_takes_one_separator_along() {
        let empty = Captured::Nodes {
            items: vec![],
            span: None,
        };
        let x = Captured::Node(0..1);
        assert_eq!(
            expand(
                "f($A, $$$R)",
                &["A", "R"],
                "x",
                &[("A", x.clone()), ("R", empty.clone())]
            ),
            "f(x)"
        );
        assert_eq!(
            expand(
                "f($$$R, $A)",
                &["A", "R"],
                "x",
                &[("A", x.clone()), ("R", empty.clone())]
            ),
            "f(x)"
        );
        assert_eq!(expand("f($$$R)", &["R"], "x", &[("R", empty)]), "f()");
    }

    #[test]
    fn code_after_a_capture_ending_in_a_line_comment_goes_on_its_own_line() {
        let source = "\tb() // note\n";
        let template = Template::new("if !$C { $$$B }", &names(&["C", "B"])).unwrap();
        let captures = vec![
            ("C".to_owned(), Captured::Node(1..2)),
            (
                "B".to_owned(),
                Captured::Nodes {
                    items: std::iter::once(1..4).collect(),
                    span: Some(1..12),
                },
            ),
        ];
        let unit = detect_unit(source.as_bytes());
        let ends = [12];
        let layout = Layout {
            line_comment_ends: &ends,
            verbatim: &[],
        };
        let out = template.expand(source.as_bytes(), 1, &captures, &unit, &layout);
        assert_eq!(String::from_utf8(out).unwrap(), "if !b { b() // note\n\t}");
        // Not a line comment there: the template's layout stays.
        let out = template.expand(source.as_bytes(), 1, &captures, &unit, &Layout::default());
        assert_eq!(String::from_utf8(out).unwrap(), "if !b { b() // note }");
    }

    #[test]
    fn lines_take_the_file_line_ending() {
        let source = "  a\r\n  b\r\n\r\n  c\r\n";
        let run = Captured::Nodes {
            items: vec![2..3, 14..15],
            span: Some(2..15),
        };
        assert_eq!(
            expand("g {\r\n  $$$B\r\n}", &["B"], source, &[("B", run)]),
            "g {\r\n  a\r\n  b\r\n\r\n  c\r\n}"
        );
    }

    #[test]
    fn dollar_words_that_are_not_metavariables_stay_text() {
        // `$Ab` runs into lower case: not a metavariable, in patterns as in templates.
        assert!(Template::new("echo $Ab $A", &names(&["A"])).is_ok());
        assert_eq!(
            Template::new("echo $Ab $A", &names(&["A"]))
                .unwrap()
                .names(),
            ["A"]
        );
    }
}
