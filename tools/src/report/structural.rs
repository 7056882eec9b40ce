//! The structural tools' results: `ast_grep`'s matches and what kept a file from being
//! searched, `ast_edit`'s staged rewrite, `resolve`'s outcome.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Render, WriteReport};
use crate::left_out::LeftOutReport;

/// A place in a file: 1-based line, 0-based column in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    /// 1-based line.
    pub line: usize,
    /// 0-based column, in bytes.
    pub column: usize,
}

/// What a metavariable captured: `$X` one node's text, `$$$X` the texts of several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Capture {
    /// `$X`.
    One(String),
    /// `$$$X`.
    Many(Vec<String>),
}

/// One match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepMatch {
    /// The file, relative to the root.
    pub path: String,
    /// Where the match starts.
    pub start: Point,
    /// Where it ends.
    pub end: Point,
    /// Its text.
    pub text: String,
    /// What each metavariable captured.
    pub captures: BTreeMap<String, Capture>,
}

/// A file left out, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileReason {
    /// The file, relative to the root.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// A file over `max_file_bytes`, not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TooLargeFile {
    /// The file, relative to the root.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A file the grammar could not fully read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ParseErrorsAt {
    /// The file, relative to the root.
    pub path: String,
    /// The line of its first error.
    pub line: usize,
    /// How many error and missing nodes it has.
    pub count: usize,
}

/// Files with syntax errors: the first few, and how many in all.
fn parse_errors_text(listed: &[ParseErrorsAt], total: usize) -> String {
    let mut out = format!(
        "{total} file(s) have syntax errors the grammar could not read (a part of such a file \
         may match nothing):"
    );
    for e in listed {
        out.push_str(&format!(
            " {}:{} ({} error{})",
            e.path,
            e.line,
            e.count,
            if e.count == 1 { "" } else { "s" }
        ));
    }
    if total > listed.len() {
        out.push_str(&format!(" and {} more", total - listed.len()));
    }
    out.push('\n');
    out
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `ast_grep`'s result without its matches (which the tool streams to the JSON itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepReport {
    /// The pattern's language.
    pub language: String,
    /// How the pattern was parsed (`statement`, `expression`, …).
    pub context: String,
    /// Matches in all.
    pub total: usize,
    /// Whether `matches` holds fewer than `total`.
    pub truncated: bool,
    /// The search stopped before every file was looked at.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// Files not searched, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<FileReason>,
    /// Files over `max_file_bytes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub too_large: Vec<TooLargeFile>,
    /// Files with syntax errors (the first few).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parse_errors: Vec<ParseErrorsAt>,
    /// How many files have syntax errors.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub parse_errors_total: usize,
    /// Candidate nodes too costly to decide (too many `$$$` in one list): not matched.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub undecided: usize,
    /// Files of the language ignore rules kept out of a folder's search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out_by_ignore: Option<LeftOutReport>,
}

impl GrepReport {
    /// The lines after the matches: what the search did not look at or could not decide.
    pub(crate) fn facts(&self) -> String {
        let mut facts = String::new();
        if self.cancelled {
            facts.push_str(
                "cancelled: the search stopped before every file was looked at; the matches \
                 and the total cover only the files searched\n",
            );
        }
        for s in &self.skipped {
            facts.push_str(&format!("skipped {}: {}\n", s.path, s.reason));
        }
        for t in &self.too_large {
            facts.push_str(&format!(
                "not searched (over max_file_bytes): {} ({} bytes)\n",
                t.path, t.size
            ));
        }
        if self.parse_errors_total > 0 {
            facts.push_str(&parse_errors_text(
                &self.parse_errors,
                self.parse_errors_total,
            ));
        }
        if self.undecided > 0 {
            // Never a silent miss: say that some candidates were too costly to decide.
            facts.push_str(&format!(
                "{} candidate node(s) needed more backtracking than allowed and were not \
                 matched; use fewer `$$$` in one list\n",
                self.undecided
            ));
        }
        if let Some(left_out) = &self.left_out_by_ignore {
            facts.push_str(&left_out.line("of the language were not searched"));
            facts.push('\n');
        }
        facts
    }
}

/// `ast_grep`'s whole result: the report and its matches (the published schema, and what a
/// Rust host reads the JSON as).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepResult {
    /// Everything but the matches.
    #[serde(flatten)]
    pub report: GrepReport,
    /// The first `max_results` matches, by path then position.
    pub matches: Vec<GrepMatch>,
}

impl Render for GrepResult {
    fn render(&self) -> String {
        let listed = self
            .matches
            .iter()
            .map(|m| Ok::<_, std::convert::Infallible>((m.path.clone(), m.start, m.text.clone())));
        let listing = match match_listing(listed, self.matches.len(), self.report.total) {
            Ok(listing) => listing,
            Err(never) => match never {},
        };
        listing + &self.report.facts()
    }
}

/// The text lists at most this many matches (the JSON result holds every returned one).
pub(crate) const TEXT_MAX_MATCHES: usize = 1000;
/// … and stops listing once the listing is this long.
pub(crate) const TEXT_MAX_BYTES: usize = 64 << 10;
/// A match's first line is shown up to this many characters.
const TEXT_LINE_CHARS: usize = 200;

/// The header and one line per match, for the first [`TEXT_MAX_MATCHES`] of the `returned`
/// matches (and at most about [`TEXT_MAX_BYTES`]): a text of tens of thousands of lines
/// helps no model, and the header and the last line say how many more the JSON result holds.
/// `matches` yields `(path, start, text)`, and may fail (a spool read back).
pub(crate) fn match_listing<E>(
    matches: impl Iterator<Item = Result<(String, Point, String), E>>,
    returned: usize,
    total: usize,
) -> Result<String, E> {
    let mut listing = String::new();
    let mut listed = 0;
    for item in matches {
        if listed == TEXT_MAX_MATCHES || listing.len() >= TEXT_MAX_BYTES {
            break;
        }
        let (path, start, text) = item?;
        let line = text.lines().next().unwrap_or("");
        let (first, cut) = match line.char_indices().nth(TEXT_LINE_CHARS) {
            Some((at, _)) => (&line[..at], true),
            None => (line, false),
        };
        let more = if cut || text.contains('\n') {
            " …"
        } else {
            ""
        };
        listing.push_str(&format!(
            "{path}:{}:{}: {first}{more}\n",
            start.line, start.column
        ));
        listed += 1;
    }
    let plural = if total == 1 { "" } else { "es" };
    let mut out = if listed < returned {
        let returned_part = if returned == total {
            format!("all {total} are in the JSON result (structuredContent)")
        } else {
            format!("the first {returned} are in the JSON result (structuredContent)")
        };
        format!(
            "{total} match{plural}; this text lists the first {listed} of {total}, \
             {returned_part}\n"
        )
    } else if total == returned {
        format!("{total} match{plural}\n")
    } else {
        format!("{total} matches, showing the first {returned}\n")
    };
    out.push_str(&listing);
    if listed < returned {
        out.push_str(&format!(
            "… {} more returned in the JSON result, not listed here (narrow `path` or the \
             pattern to see them in this text)\n",
            returned - listed
        ));
    }
    Ok(out)
}

/// Where a staged rewrite stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditStatus {
    /// Staged under `edit_id`: `resolve` writes or discards it.
    Proposed,
    /// Nothing matched.
    NoMatches,
    /// Matches were found, and none could be staged (see `skipped`).
    NotStaged,
    /// The call was cancelled before anything was staged.
    Cancelled,
}

/// One file of a staged rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StagedFileReport {
    /// The file, relative to the root.
    pub path: String,
    /// Replacements in it.
    pub replacements: usize,
    /// Its unified diff.
    pub diff: String,
}

/// Something the rewrite would lose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditWarning {
    /// What kind of loss.
    pub kind: String,
    /// The file.
    pub path: String,
    /// The line.
    pub line: usize,
    /// What would be lost.
    pub text: String,
}

/// A match that was not rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum SkippedRewrite {
    /// Rewriting it would delete code the pattern does not name.
    WouldDelete {
        /// The file.
        path: String,
        /// The line of the match.
        line: usize,
        /// The part that could not be carried over (its first line).
        part: String,
        /// The line of that part.
        part_line: usize,
        /// Why, and what to do.
        reason: String,
    },
    /// The rewritten file would not parse: the file is not staged.
    WouldNotParse {
        /// The file.
        path: String,
        /// The line of the match whose replacement broke it.
        line: usize,
        /// The line of the first new error in the rewritten text.
        rewritten_line: usize,
        /// What the parser found there.
        error: String,
        /// That line of the rewritten text.
        text: String,
        /// New error nodes the rewrite made.
        new_errors: usize,
        /// Replacements the file would have had.
        replacements: usize,
        /// Why, and what to do.
        reason: String,
    },
}

/// The bounds of a run's staged edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StagedLimits {
    /// Staged edits a run keeps.
    pub edits: usize,
    /// Bytes they may hold.
    pub bytes: usize,
}

/// `ast_edit`'s result: a staged rewrite, or why nothing was staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AstEditReport {
    /// Where the rewrite stands.
    pub status: EditStatus,
    /// Replacements staged.
    pub replacements: usize,
    /// The staged files with their diffs.
    #[serde(default)]
    pub files: Vec<StagedFileReport>,
    /// What the rewrite would lose.
    #[serde(default)]
    pub warnings: Vec<EditWarning>,
    /// Matches inside a replaced match, left for a second pass.
    #[serde(default)]
    pub skipped_nested: usize,
    /// Matches not rewritten, with why.
    #[serde(default)]
    pub skipped: Vec<SkippedRewrite>,
    /// Files not read, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_files: Vec<FileReason>,
    /// Files with syntax errors (the first few).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parse_errors: Vec<ParseErrorsAt>,
    /// How many files have syntax errors.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub parse_errors_total: usize,
    /// The staged edit's id, for `resolve`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_id: Option<String>,
    /// Older staged edits evicted to make room for this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evicted: Vec<String>,
    /// The bounds that evicted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_limits: Option<StagedLimits>,
}

impl AstEditReport {
    /// Nothing staged because the call was cancelled.
    pub fn cancelled() -> Self {
        AstEditReport {
            status: EditStatus::Cancelled,
            replacements: 0,
            files: Vec::new(),
            warnings: Vec::new(),
            skipped_nested: 0,
            skipped: Vec::new(),
            skipped_files: Vec::new(),
            parse_errors: Vec::new(),
            parse_errors_total: 0,
            edit_id: None,
            evicted: Vec::new(),
            staged_limits: None,
        }
    }

    fn would_delete(&self) -> impl Iterator<Item = (&str, usize, &str, usize)> {
        self.skipped.iter().filter_map(|s| match s {
            SkippedRewrite::WouldDelete {
                path,
                line,
                part,
                part_line,
                ..
            } => Some((path.as_str(), *line, part.as_str(), *part_line)),
            SkippedRewrite::WouldNotParse { .. } => None,
        })
    }

    fn would_not_parse(&self) -> impl Iterator<Item = &SkippedRewrite> {
        self.skipped
            .iter()
            .filter(|s| matches!(s, SkippedRewrite::WouldNotParse { .. }))
    }

    /// What was not staged or read, and why.
    fn facts(&self) -> String {
        let mut facts = String::new();
        let deleting = self.would_delete().count();
        if deleting > 0 {
            facts.push_str(&format!(
                "{deleting} match{} not rewritten, so as not to delete code the pattern does not name:\n",
                if deleting == 1 { "" } else { "es" }
            ));
            for (path, line, part, part_line) in self.would_delete() {
                facts.push_str(&format!(
                    "  skipped {path}:{line}: would delete `{part}` (line {part_line})\n"
                ));
            }
            facts.push_str(
                "  name such parts in the pattern and the rewrite (a metavariable), or narrow \
                 the pattern\n",
            );
        }
        let broken = self.would_not_parse().count();
        if broken > 0 {
            facts.push_str(&format!(
                "{broken} file{} not staged, because the rewritten code would not parse (resolve \
                 accept cannot write {}):\n",
                if broken == 1 { "" } else { "s" },
                if broken == 1 { "it" } else { "them" },
            ));
            for skipped in self.would_not_parse() {
                if let SkippedRewrite::WouldNotParse {
                    path,
                    line,
                    rewritten_line,
                    error,
                    text,
                    new_errors,
                    ..
                } = skipped
                {
                    facts.push_str(&format!(
                        "  not staged {path}:{line}: line {rewritten_line} of the rewritten file: \
                         {error}: `{text}` ({new_errors} new error{})\n",
                        if *new_errors == 1 { "" } else { "s" },
                    ));
                }
            }
            facts.push_str("  check the template against those matches, or narrow the pattern\n");
        }
        for s in &self.skipped_files {
            facts.push_str(&format!("file skipped {}: {}\n", s.path, s.reason));
        }
        if self.parse_errors_total > 0 {
            facts.push_str(&parse_errors_text(
                &self.parse_errors,
                self.parse_errors_total,
            ));
        }
        if let Some(limits) = self.staged_limits.filter(|_| !self.evicted.is_empty()) {
            facts.push_str(&format!(
                "evicted the oldest staged edit(s) {} (at most {} edits and {} bytes are kept)\n",
                self.evicted.join(", "),
                limits.edits,
                limits.bytes
            ));
        }
        facts
    }

    /// The diffs, the warnings and the nested matches left.
    fn proposal(&self) -> String {
        let files = self.files.len();
        let mut out = format!(
            "proposed: {} replacement{} in {files} file{}\n",
            self.replacements,
            if self.replacements == 1 { "" } else { "s" },
            if files == 1 { "" } else { "s" }
        );
        for file in &self.files {
            out.push_str(&file.diff);
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
        for w in &self.warnings {
            out.push_str(&format!(
                "warning: {} at {}:{}: {}\n",
                w.kind, w.path, w.line, w.text
            ));
        }
        let nested = self.skipped_nested;
        if nested > 0 {
            out.push_str(&format!(
                "{nested} match{} inside a replaced match left for a second pass\n",
                if nested == 1 { "" } else { "es" }
            ));
        }
        out
    }
}

impl Render for AstEditReport {
    fn render(&self) -> String {
        let broken = self.would_not_parse().count() > 0;
        let deleting = self.would_delete().count() > 0;
        let head = match self.status {
            EditStatus::Cancelled => return "cancelled: nothing was staged".to_owned(),
            EditStatus::Proposed => {
                return format!(
                    "{}{}call resolve with edit_id \"{}\" and action \"accept\" to write it, or \"discard\"",
                    self.proposal(),
                    self.facts(),
                    self.edit_id.as_deref().unwrap_or_default()
                )
            }
            _ if broken && !deleting => "nothing staged: no rewritten file would parse\n",
            _ if broken => {
                "nothing staged: each rewritten file would not parse, or its matches were \
                 skipped\n"
            }
            _ if !deleting => "no match: nothing staged; check the pattern with ast_grep\n",
            _ => "nothing staged: every match was skipped\n",
        };
        format!("{head}{}", self.facts())
    }
}

/// What `resolve` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolveStatus {
    /// Every file of the edit was written.
    Accepted,
    /// The edit was forgotten; nothing was written.
    Discarded,
}

/// `resolve`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResolveReport {
    /// What was done.
    pub status: ResolveStatus,
    /// The staged edit.
    pub edit_id: String,
    /// Replacements written (accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacements: Option<usize>,
    /// The files written (accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    /// Files of the match that were never staged (their rewrite would not parse).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_written: Vec<String>,
    /// What the write's checks found (the run attaches it to an accepted edit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<WriteReport>,
}

impl Render for ResolveReport {
    fn render(&self) -> String {
        let mut text = match self.status {
            ResolveStatus::Discarded => {
                return format!("discarded {}; nothing was written", self.edit_id)
            }
            ResolveStatus::Accepted => {
                let replacements = self.replacements.unwrap_or(0);
                let files = self.files.as_deref().unwrap_or_default();
                format!(
                    "wrote {} ({replacements} replacement{} in {} file{}): {}",
                    self.edit_id,
                    if replacements == 1 { "" } else { "s" },
                    files.len(),
                    if files.len() == 1 { "" } else { "s" },
                    files.join(", ")
                )
            }
        };
        if !self.not_written.is_empty() {
            text.push_str(&format!(
                "\nnot written (never staged: their rewrite would not parse): {}",
                self.not_written.join(", ")
            ));
        }
        if let Some(diagnostics) = self.diagnostics.as_ref().filter(|d| !d.is_empty()) {
            text.push('\n');
            text.push_str(&diagnostics.render());
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::readme::{properties, result_cell};

    /// The README's rows list every field of each report and no other.
    #[test]
    fn the_readme_lists_the_fields_of_the_reports() {
        assert_eq!(result_cell("| `ast_grep` |"), properties::<GrepResult>());
        assert_eq!(result_cell("| `ast_edit` |"), properties::<AstEditReport>());
        assert_eq!(result_cell("| `resolve` |"), properties::<ResolveReport>());
    }
}
