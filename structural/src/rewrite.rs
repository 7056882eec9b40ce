//! Staging a structural rewrite: every match of a pattern replaced by a template, computed
//! in memory and held as a [`Transaction`] with a unified diff per file. Nothing is written
//! until the transaction is committed.
//!
//! - The outermost of nested matches is rewritten; the inner ones are counted as
//!   `skipped_nested` (run the rewrite again for them). Matches that overlap without nesting
//!   are an error.
//! - A rewrite changes only what its pattern names: the parts a match left out (an `else`,
//!   `@Test`, `<T>`, a return type, `async`, `import type`) are carried over into the new
//!   code at their place (the `carry` module); a match where that cannot be done is not rewritten and
//!   is listed in [`StagedRewrite::skipped_matches`] with the reason. Nothing the pattern did
//!   not name is ever deleted.
//! - A file whose rewritten text has a syntax error the original did not have is not staged
//!   ([`StagedRewrite::unparsable`]): a rewrite never writes code that does not parse.
//! - Comments no substituted capture carries stay at their place where the replacement has
//!   one for them; warnings name each one the rewrite would delete.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::find::{BoundedParseError, Captured, Position, SourceParser, Stopped};
use crate::pattern::Pattern;
use crate::search::{
    read_capped, too_deep_reason, visit_sources, ParseErrors, SearchError, SearchOptions, Skipped,
    MAX_PARSE_ERRORS_LISTED, MAX_SOURCE_DEPTH,
};
use crate::template::{detect_unit, Layout, Template, TemplateError};
use crate::transaction::Transaction;

mod carry;

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WarningKind {
    /// A comment inside a match that no substituted capture carries and that has no place in
    /// the replacement would be deleted.
    DeletedComment,
}

impl WarningKind {
    /// `deleted_comment`.
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::DeletedComment => "deleted_comment",
        }
    }
}

/// A file whose rewrite would not parse: it is not staged, so accepting the edit cannot
/// write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnparsableRewrite {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, in the file as it is, of the match whose replacement broke it (or of
    /// the code the first new error lies in).
    pub line: usize,
    /// 1-based line of the first new error in the rewritten text.
    pub rewritten_line: usize,
    /// What the parser found there: `syntax error at `…``, `a `}` is missing`.
    pub error: String,
    /// That line of the rewritten text (trimmed, at most 120 characters).
    pub text: String,
    /// How many new `ERROR` or missing nodes the rewrite made.
    pub new_errors: usize,
    /// The replacements the file would have had.
    pub replacements: usize,
}

/// Something the rewrite would lose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What kind of loss.
    pub kind: WarningKind,
    /// The file.
    pub path: PathBuf,
    /// 1-based line of the text that would be lost.
    pub line: usize,
    /// That text (its first line).
    pub text: String,
}

/// A match that was not rewritten, because the rewrite would have deleted code its pattern
/// did not name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedMatch {
    /// The file.
    pub path: PathBuf,
    /// 1-based line of the match.
    pub line: usize,
    /// 1-based line of the part that could not be carried over.
    pub part_line: usize,
    /// That part (its first line).
    pub part: String,
    /// Why, and what to do.
    pub reason: String,
}

/// One file of a staged rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedFile {
    /// The file.
    pub path: PathBuf,
    /// How many matches are replaced in it.
    pub replacements: usize,
    /// A unified diff of the change.
    pub diff: String,
}

/// A rewrite computed and held, not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedRewrite {
    /// Replacements across all files.
    pub replacements: usize,
    /// Matches inside a replaced match, left for a second pass.
    pub skipped_nested: usize,
    /// The changed files, by path.
    pub files: Vec<StagedFile>,
    /// What the rewrite would lose.
    pub warnings: Vec<Warning>,
    /// Matches left as they are, so as not to delete what the pattern did not name.
    pub skipped_matches: Vec<SkippedMatch>,
    /// Files that could not be read or parsed, or were over the size cap.
    pub skipped: Vec<Skipped>,
    /// Files whose rewrite would not parse, by path: not staged.
    pub unparsable: Vec<UnparsableRewrite>,
    /// The first parsed files with syntax errors (a part of such a file may have matched
    /// nothing), by path.
    pub parse_errors: Vec<ParseErrors>,
    /// How many searched files had syntax errors.
    pub parse_errors_total: usize,
    /// Whether staging was cancelled before every file was looked at (nothing is staged).
    pub cancelled: bool,
    /// The change itself: commit it to write.
    pub transaction: Transaction,
}

/// Why a rewrite cannot be staged.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    /// The template does not fit the pattern.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// Two matches overlap without one containing the other.
    #[error("matches overlap in `{}` (lines {first} and {second}) without one containing the other; narrow the pattern", .path.display())]
    Overlap {
        /// The file.
        path: PathBuf,
        /// Line of the first match.
        first: usize,
        /// Line of the second.
        second: usize,
    },
    /// The path does not exist.
    #[error(transparent)]
    Search(#[from] SearchError),
}

/// Stages the rewrite of every match of `pattern` under `path` (a file or a folder) by
/// `template`. `label` names a file in the diff headers (a path relative to the workspace).
pub fn stage_rewrite(
    pattern: &Pattern,
    template: &str,
    path: &Path,
    label: &(dyn Fn(&Path) -> String + Sync),
) -> Result<StagedRewrite, RewriteError> {
    stage_rewrite_with(pattern, template, path, label, &SearchOptions::default())
}

/// [`stage_rewrite`] with the walk's options: the file size cap, cancellation and threads
/// (`max_results` and `progress` are not used).
pub fn stage_rewrite_with(
    pattern: &Pattern,
    template: &str,
    path: &Path,
    label: &(dyn Fn(&Path) -> String + Sync),
    options: &SearchOptions,
) -> Result<StagedRewrite, RewriteError> {
    let template = Template::new(template, pattern.metavariables())?;
    let options = SearchOptions {
        progress: None,
        ..options.clone()
    };
    let results: Mutex<Vec<Result<FileRewrite, RewriteError>>> = Mutex::new(Vec::new());
    let skipped: Mutex<Vec<Skipped>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<ParseErrors>> = Mutex::new(Vec::new());
    let visit = |file: &Path, size: u64, parser: &mut SourceParser| match rewrite_file(
        pattern, &template, file, size, parser, label, &options, &errors,
    ) {
        Ok(Some(done)) => push(&results, Ok(done)),
        Ok(None) => {}
        Err(FileFailure::Skipped(reason)) => push(
            &skipped,
            Skipped {
                path: file.to_path_buf(),
                reason,
            },
        ),
        Err(FileFailure::Fatal(error)) => push(&results, Err(error)),
    };
    visit_sources(pattern, path, &options, &visit)?;
    let cancelled = options
        .cancel
        .as_ref()
        .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed));
    let mut parse_errors = into_inner(errors);
    parse_errors.sort_by(|a, b| a.path.cmp(&b.path));
    let parse_errors_total = parse_errors.len();
    parse_errors.truncate(MAX_PARSE_ERRORS_LISTED);
    let mut files = into_inner(results)
        .into_iter()
        .collect::<Result<Vec<FileRewrite>, RewriteError>>()?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut staged = StagedRewrite {
        replacements: 0,
        skipped_nested: 0,
        files: Vec::new(),
        warnings: Vec::new(),
        skipped_matches: Vec::new(),
        skipped: into_inner(skipped),
        unparsable: Vec::new(),
        parse_errors,
        parse_errors_total,
        cancelled,
        transaction: Transaction::new(),
    };
    if cancelled {
        // Part of the tree was not looked at: staging that part would claim more than it
        // checked.
        return Ok(staged);
    }
    staged.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    for file in files {
        staged.skipped_nested += file.skipped_nested;
        staged.warnings.extend(file.warnings);
        staged.skipped_matches.extend(file.skipped_matches);
        if let Some(broken) = file.unparsable {
            // Never staged: `resolve accept` must not be able to write it.
            staged.unparsable.push(broken);
            continue;
        }
        if file.replacements == 0 {
            continue;
        }
        staged.replacements += file.replacements;
        staged.files.push(StagedFile {
            path: file.path.clone(),
            replacements: file.replacements,
            diff: file.diff,
        });
        staged
            .transaction
            .replace(file.path, file.original, file.new);
    }
    Ok(staged)
}

fn push<T>(list: &Mutex<Vec<T>>, item: T) {
    list.lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(item);
}

fn into_inner<T>(list: Mutex<Vec<T>>) -> Vec<T> {
    list.into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct FileRewrite {
    path: PathBuf,
    original: Vec<u8>,
    new: Vec<u8>,
    replacements: usize,
    skipped_nested: usize,
    warnings: Vec<Warning>,
    skipped_matches: Vec<SkippedMatch>,
    diff: String,
    unparsable: Option<UnparsableRewrite>,
}

enum FileFailure {
    Skipped(String),
    Fatal(RewriteError),
}

#[allow(clippy::too_many_arguments)]
fn rewrite_file(
    pattern: &Pattern,
    template: &Template,
    path: &Path,
    size: u64,
    parser: &mut SourceParser,
    label: &(dyn Fn(&Path) -> String + Sync),
    options: &SearchOptions,
    errors: &Mutex<Vec<ParseErrors>>,
) -> Result<Option<FileRewrite>, FileFailure> {
    let source = read_source(path, size, options)?;
    if !pattern.may_match(&source) {
        return Ok(None);
    }
    let parsed = match parser.parse_for_search(
        pattern.language().as_ref(),
        &source,
        &options.parse_limits(),
    ) {
        Ok(parsed) => parsed,
        // The staging says `cancelled` and stages nothing.
        Err(BoundedParseError::Cancelled) => return Ok(None),
        Err(error) => return Err(FileFailure::Skipped(error.to_string())),
    };
    let tree = &parsed.tree;
    let found = match pattern.find_parsed(&parsed, &source, MAX_SOURCE_DEPTH, options.cancel_flag())
    {
        Ok(found) => found,
        Err(Stopped::Cancelled) => return Ok(None),
        Err(Stopped::TooDeep) => return Err(FileFailure::Skipped(too_deep_reason())),
    };
    let (before, first_error) = crate::find::syntax_errors(tree);
    if let Some(line) = first_error {
        push(
            errors,
            ParseErrors {
                path: path.to_path_buf(),
                line,
                count: before,
            },
        );
    }
    if found.matches.is_empty() {
        return Ok(None);
    }
    let (kept, skipped_nested) = outermost_matches(&found.matches, path)?;
    let spliced = splice(template, path, &source, tree, &kept);
    if spliced.new == source {
        if spliced.skipped_matches.is_empty() {
            return Ok(None);
        }
        return Ok(Some(FileRewrite {
            path: path.to_path_buf(),
            original: Vec::new(),
            new: Vec::new(),
            replacements: 0,
            skipped_nested,
            warnings: spliced.warnings,
            skipped_matches: spliced.skipped_matches,
            diff: String::new(),
            unparsable: None,
        }));
    }
    let checked = check_rewritten(
        pattern,
        parser,
        options,
        tree,
        &source,
        &spliced.new,
        &spliced.edits,
    );
    let unparsable = match checked {
        Ok(None) => None,
        Ok(Some(mut broken)) => {
            broken.path = path.to_path_buf();
            broken.replacements = spliced.replaced;
            Some(broken)
        }
        Err(Stopped::Cancelled) => return Ok(None),
        Err(Stopped::TooDeep) => return Err(FileFailure::Skipped(too_deep_reason())),
    };
    let diff = unified_diff(&label(path), &source, &spliced.new);
    Ok(Some(FileRewrite {
        path: path.to_path_buf(),
        replacements: spliced.replaced,
        skipped_nested,
        warnings: spliced.warnings,
        skipped_matches: spliced.skipped_matches,
        diff,
        original: source,
        new: spliced.new,
        unparsable,
    }))
}

/// The outermost of a file's matches, and how many nested ones were left; refused when two
/// overlap without one holding the other.
fn outermost_matches<'m>(
    matches: &'m [crate::find::Match],
    path: &Path,
) -> Result<(Vec<&'m crate::find::Match>, usize), FileFailure> {
    let ranges: Vec<Range<usize>> = matches.iter().map(|m| m.rewrite_range.clone()).collect();
    match outermost(&ranges) {
        Ok((kept, nested)) => Ok((kept.into_iter().map(|i| &matches[i]).collect(), nested)),
        Err((first, second)) => Err(FileFailure::Fatal(RewriteError::Overlap {
            path: path.to_path_buf(),
            first: matches[first].start.line,
            second: matches[second].start.line,
        })),
    }
}

/// The unified diff of a file's rewrite, the file shown as `shown`.
fn unified_diff(shown: &str, old: &[u8], new: &[u8]) -> String {
    let old_text = String::from_utf8_lossy(old);
    let new_text = String::from_utf8_lossy(new);
    similar::TextDiff::from_lines(old_text.as_ref(), new_text.as_ref())
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string()
}

/// The file's bytes, unless it is over the size cap, unreadable or binary (then skipped,
/// with the reason).
fn read_source(path: &Path, size: u64, options: &SearchOptions) -> Result<Vec<u8>, FileFailure> {
    let over = |size: u64| {
        FileFailure::Skipped(format!(
            "{size} bytes, over the {}-byte cap; not searched",
            options.max_file_bytes
        ))
    };
    if size > options.max_file_bytes {
        return Err(over(size));
    }
    let source = read_capped(path, options.max_file_bytes)
        .map_err(|e| FileFailure::Skipped(e.to_string()))?
        .ok_or_else(|| over(std::fs::metadata(path).map_or(size, |m| m.len())))?;
    if memchr::memchr(0, &source[..source.len().min(8192)]).is_some() {
        return Err(FileFailure::Skipped("binary file".to_owned()));
    }
    Ok(source)
}

/// A file's text with its matches replaced.
struct Spliced {
    new: Vec<u8>,
    /// (range in the file, range in the rewritten text, line of the match) per replacement.
    edits: Vec<(Range<usize>, Range<usize>, usize)>,
    replaced: usize,
    warnings: Vec<Warning>,
    skipped_matches: Vec<SkippedMatch>,
}

/// Replaces each of the `kept` matches (outermost, in document order) by the template's
/// expansion, carrying over what the pattern left out; a match whose rewrite would delete
/// such a part is skipped, with the reason.
fn splice(
    template: &Template,
    path: &Path,
    source: &[u8],
    tree: &tree_sitter::Tree,
    kept: &[&crate::find::Match],
) -> Spliced {
    let comments = crate::find::comment_ranges(tree);
    let line_comment_ends = line_comment_ends(source, &comments);
    let verbatim = crate::find::verbatim_ranges(tree);
    let layout = Layout {
        line_comment_ends: &line_comment_ends,
        verbatim: &verbatim,
    };
    let unit = detect_unit(source);
    let used: Vec<&str> = template.names();
    let mut out = Spliced {
        new: Vec::with_capacity(source.len()),
        edits: Vec::new(),
        replaced: 0,
        warnings: Vec::new(),
        skipped_matches: Vec::new(),
    };
    let mut cursor = 0;
    for m in kept {
        let range = &m.rewrite_range;
        let (parts, loose) = left_out(m, &used, &comments);
        let expanded = template.expand(source, range.start, &m.captures, &unit, &layout);
        let replacement = match carry::carry_over(source, range, &expanded, &parts, &loose) {
            Ok(replacement) => replacement,
            Err(refusal) => {
                let (part_line, part) = first_line(source, &refusal.part);
                out.skipped_matches.push(SkippedMatch {
                    path: path.to_path_buf(),
                    line: m.start.line,
                    part_line,
                    reason: format!(
                        "the rewrite would delete `{}`, which the pattern does not name and \
                             the template leaves no place for; name it in the pattern and the \
                             rewrite (a metavariable), or narrow the pattern",
                        part
                    ),
                    part,
                });
                continue;
            }
        };
        for comment in &replacement.dropped {
            out.warnings
                .push(warning(WarningKind::DeletedComment, path, source, comment));
        }
        out.new.extend_from_slice(&source[cursor..range.start]);
        let at = out.new.len();
        out.new.extend_from_slice(&replacement.bytes);
        out.edits
            .push((range.clone(), at..out.new.len(), m.start.line));
        cursor = range.end;
        out.replaced += 1;
    }
    out.new.extend_from_slice(&source[cursor..]);
    out
}

/// What a match's rewrite must carry over: the parts the pattern left out, unless a
/// substituted capture holds them anyway, and the comments no capture carries, nor a part
/// carried over with them.
fn left_out(
    m: &crate::find::Match,
    used: &[&str],
    comments: &[Range<usize>],
) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    let carried: Vec<Range<usize>> = m
        .captures
        .iter()
        .filter(|(name, _)| used.contains(&name.as_str()))
        .filter_map(|(_, c)| match c {
            Captured::Node(r) | Captured::Text(r) => Some(r.clone()),
            Captured::Nodes { span, .. } => span.clone(),
        })
        .collect();
    let inside = |r: &Range<usize>| carried.iter().any(|c| c.start <= r.start && r.end <= c.end);
    let range = &m.rewrite_range;
    let parts: Vec<Range<usize>> = m
        .omitted
        .iter()
        .filter(|r| range.start <= r.start && r.end <= range.end && !inside(r))
        .cloned()
        .collect();
    let in_part = |r: &Range<usize>| parts.iter().any(|p| p.start <= r.start && r.end <= p.end);
    let loose: Vec<Range<usize>> = comments
        .iter()
        .filter(|c| range.start <= c.start && c.end <= range.end && !inside(c) && !in_part(c))
        .cloned()
        .collect();
    (parts, loose)
}

/// The offsets, sorted, where the line comments of a file end: comments with only blanks
/// after them on their line that are not closed by `*/`.
fn line_comment_ends(source: &[u8], comments: &[Range<usize>]) -> Vec<usize> {
    let mut ends: Vec<usize> = comments
        .iter()
        .filter(|c| {
            let text = source.get((*c).clone()).unwrap_or(&[]);
            let rest = source.get(c.end..).unwrap_or(&[]);
            let eol = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            !text.trim_ascii_end().ends_with(b"*/")
                && rest[..eol]
                    .iter()
                    .all(|b| matches!(b, b' ' | b'\t' | b'\r'))
        })
        .map(|c| c.end)
        .collect();
    ends.sort_unstable();
    ends
}

/// How many `ERROR` and missing nodes of a tree are compared at most.
const MAX_PROBLEMS: usize = 10_000;

/// Parses the rewritten text `new` and compares its syntax errors with those of the file as
/// it is (`tree` of `source`): an error of the rewritten text is old when, mapped back
/// through the `edits`, it touches an error of the original; any other is new, and the file
/// is [`UnparsableRewrite`] (path and replacements left for the caller to fill in).
fn check_rewritten(
    pattern: &Pattern,
    parser: &mut SourceParser,
    options: &SearchOptions,
    tree: &tree_sitter::Tree,
    source: &[u8],
    new: &[u8],
    edits: &[(Range<usize>, Range<usize>, usize)],
) -> Result<Option<UnparsableRewrite>, Stopped> {
    let after =
        // Read as the original was read (attribute macros set aside where they are).
        match parser.parse_for_search(pattern.language().as_ref(), new, &options.parse_limits()) {
            Ok(after) => after.tree,
            Err(BoundedParseError::Cancelled) => return Err(Stopped::Cancelled),
            Err(error) => {
                // Not checked is not clean: the file is not staged.
                return Ok(Some(UnparsableRewrite {
                    path: PathBuf::new(),
                    line: edits.first().map_or(1, |e| e.2),
                    rewritten_line: 1,
                    error: format!("the rewritten text could not be parsed to check it: {error}"),
                    text: String::new(),
                    new_errors: 0,
                    replacements: 0,
                }));
            }
        };
    if !after.root_node().has_error() {
        return Ok(None);
    }
    let before = crate::node::problems(tree, MAX_PROBLEMS);
    let mut new_problems = crate::node::problems(&after, MAX_PROBLEMS)
        .into_iter()
        .filter_map(|problem| {
            let (mapped, line) = map_back(&problem.range, edits, source);
            let old = before.iter().any(|b| touches(&b.range, &mapped));
            (!old).then_some((problem, line))
        });
    let Some((first, line)) = new_problems.next() else {
        return Ok(None);
    };
    let count = 1 + new_problems.count();
    let error = match first.missing {
        Some(kind) => format!("a `{kind}` is missing"),
        None => {
            let text: String = String::from_utf8_lossy(new.get(first.range.clone()).unwrap_or(&[]))
                .chars()
                .take(40)
                .collect();
            let text = text.split('\n').next().unwrap_or("").trim().to_owned();
            if text.is_empty() {
                "syntax error".to_owned()
            } else {
                format!("syntax error at `{text}`")
            }
        }
    };
    let (rewritten_line, text) = first_line_at(new, first.range.start, first.row);
    Ok(Some(UnparsableRewrite {
        path: PathBuf::new(),
        line,
        rewritten_line,
        error,
        text,
        new_errors: count,
        replacements: 0,
    }))
}

/// `range` of the rewritten text in the file as it is: an offset outside the replacements
/// moves by their growth, one inside a replacement maps to the replaced range; with the
/// line (in the file) of the match it lies in, or of its mapped start.
fn map_back(
    range: &Range<usize>,
    edits: &[(Range<usize>, Range<usize>, usize)],
    source: &[u8],
) -> (Range<usize>, usize) {
    let mut line = None;
    let mut point = |at: usize, is_start: bool| -> usize {
        // Past a replacement, the text moved by how much it shrank (edges map alike either
        // way: the replacement's start to the replaced start, its end to the replaced end).
        let mut shift: isize = 0;
        for (old, new, match_line) in edits {
            if at < new.start {
                break;
            }
            if at < new.end {
                line.get_or_insert(*match_line);
                return if is_start { old.start } else { old.end };
            }
            shift += isize::try_from(old.len()).unwrap_or(isize::MAX)
                - isize::try_from(new.len()).unwrap_or(isize::MAX);
        }
        at.saturating_add_signed(shift)
    };
    let start = point(range.start, true);
    let end = point(range.end, false).max(start);
    let line = line.unwrap_or_else(|| Position::of_offset(source, start).line);
    (start..end, line)
}

/// Whether two ranges overlap or touch (a missing node is empty).
fn touches(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The 1-based line of byte `at` (on 0-based `row`) of `text` and that line (trimmed, at
/// most 120 characters).
fn first_line_at(text: &[u8], at: usize, row: usize) -> (usize, String) {
    let at = at.min(text.len());
    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
    let line: String = String::from_utf8_lossy(&text[start..end])
        .trim()
        .chars()
        .take(120)
        .collect();
    (row + 1, line)
}

/// Of match ranges in document order (outer before inner), the indices of the outermost
/// ones and how many were nested inside them; `Err((i, j))` when matches `i` and `j` overlap
/// without one containing the other.
pub fn outermost(ranges: &[Range<usize>]) -> Result<(Vec<usize>, usize), (usize, usize)> {
    let mut kept: Vec<usize> = Vec::new();
    let mut nested = 0;
    for (index, range) in ranges.iter().enumerate() {
        if let Some(&last) = kept.last() {
            let previous = &ranges[last];
            if range.start < previous.end {
                if range.end <= previous.end {
                    nested += 1;
                    continue;
                }
                return Err((last, index));
            }
        }
        kept.push(index);
    }
    Ok((kept, nested))
}

/// The 1-based line of `range` in `source` and its first line of text (trimmed, at most 120
/// characters), for showing what a warning or a skip is about.
fn first_line(source: &[u8], range: &Range<usize>) -> (usize, String) {
    let text = String::from_utf8_lossy(source.get(range.clone()).unwrap_or(&[]));
    let first: String = text
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .take(120)
        .collect();
    (Position::of_offset(source, range.start).line, first)
}

fn warning(kind: WarningKind, path: &Path, source: &[u8], range: &Range<usize>) -> Warning {
    let (line, text) = first_line(source, range);
    Warning {
        kind,
        path: path.to_path_buf(),
        line,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::outermost;

    #[test]
    fn nested_matches_keep_the_outermost_and_partial_overlaps_are_refused() {
        assert_eq!(outermost(&[0..10, 2..5, 3..4, 12..15]), Ok((vec![0, 3], 2)));
        assert_eq!(outermost(&[0..5, 5..9]), Ok((vec![0, 1], 0)));
        // Same range twice (a node and its only child): the second is nested.
        assert_eq!(outermost(&[4..9, 4..9]), Ok((vec![0], 1)));
        assert_eq!(outermost(&[0..10, 5..12]), Err((0, 1)));
    }
}
