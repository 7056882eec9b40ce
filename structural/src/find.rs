//! Finding a pattern's matches in one source text.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::language::Language;
use crate::matcher::{named_span, run_span, Bound, Env, Matcher};
use crate::node::{Node, Walk};
use crate::pattern::Pattern;

/// A position in a file: 1-based line, 1-based column counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters (not bytes).
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `source`.
    pub fn of_offset(source: &[u8], offset: usize) -> Position {
        let offset = offset.min(source.len());
        let before = &source[..offset];
        let line = memchr::memchr_iter(b'\n', before).count() + 1;
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        Position {
            line,
            column: char_count(&before[line_start..]) + 1,
        }
    }
}

/// Characters in UTF-8 bytes (invalid bytes count one each).
fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b & 0xC0) != 0x80).count()
}

/// How the span of a `$$$` capture is measured.
#[derive(Debug, Clone, Copy)]
enum RunSpans {
    /// With the comments right around the run (what a rewrite moves).
    WithComments,
    /// From the first named node to the last.
    Named,
}

/// What one metavariable captured, as byte ranges of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Captured {
    /// `$NAME`: one node.
    Node(Range<usize>),
    /// `$$$NAME`: the named nodes of the run, and the span from the first to the last.
    Nodes {
        /// Each captured node.
        items: Vec<Range<usize>>,
        /// From the first captured node to the last; `None` when the run is empty.
        span: Option<Range<usize>>,
    },
    /// `"$NAME"`: a string literal's content.
    Text(Range<usize>),
}

/// One match in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// The matched node's bytes.
    pub range: Range<usize>,
    /// The bytes a rewrite replaces: `range`, taking in the statement terminator `;` that
    /// follows it when the pattern spells one (`private x = 1;` matches the member, whose
    /// `;` is a sibling), and leaving out the node's own `;` when the pattern does not (a
    /// rewrite of `let $A = 1` keeps the `;` of `let x = 1;`).
    pub rewrite_range: Range<usize>,
    /// Where it starts.
    pub start: Position,
    /// Where it ends (exclusive).
    pub end: Position,
    /// Captures by metavariable name, in the pattern's order of first appearance.
    pub captures: Vec<(String, Captured)>,
    /// Code inside the match that the pattern left out as an omittable optional part (a
    /// return annotation, an `else`, a decorator).
    pub omitted: Vec<Range<usize>>,
}

/// The matches in one source text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileMatches {
    /// In document order (outer before inner).
    pub matches: Vec<Match>,
    /// Candidates given up after the backtracking budget ran out (treated as no match).
    pub exhausted: usize,
}

/// A tree-sitter parser that keeps its language between files (the shared parser of
/// [`cc_languages`], given a structural [`Language`]).
#[derive(Debug, Default)]
pub struct SourceParser {
    parser: cc_languages::Parser,
}

/// The grammar refused to load, or the parser gave up.
pub use cc_languages::ParseError;

impl SourceParser {
    /// A parser with no language set yet.
    pub fn new() -> Self {
        SourceParser::default()
    }

    /// Parses `source` as `language`.
    pub fn parse(
        &mut self,
        language: &dyn Language,
        source: &[u8],
    ) -> Result<tree_sitter::Tree, ParseError> {
        self.parser
            .parse_grammar(language.name(), &language.grammar(), source)
    }

    /// Parses `source` as `language` within `limits`: cancellable, and refused when its tree
    /// would take more memory than the limit.
    pub fn parse_bounded(
        &mut self,
        language: &dyn Language,
        source: &[u8],
        limits: &ParseLimits<'_>,
    ) -> Result<tree_sitter::Tree, BoundedParseError> {
        self.parser
            .parse_bounded(language.name(), &language.grammar(), source, limits)
    }
}

pub use cc_languages::{BoundedParseError, ParseLimits};

/// A file's tree as a search reads it: the tree, and the attribute macros set aside to read
/// it (C, C++: see [`crate::repair`]), which a match spanning one reports as omitted.
#[derive(Debug, Clone)]
pub struct ParsedSource {
    /// The tree (of the bytes with the macros replaced by spaces, when any were set aside:
    /// every offset is the file's).
    pub tree: tree_sitter::Tree,
    /// The byte ranges set aside, in order.
    pub set_aside: Vec<Range<usize>>,
}

impl SourceParser {
    /// Parses `source` within `limits`; where the language sets aside attribute macros and
    /// the tree has syntax errors, parses it again with them set aside, and keeps that tree
    /// when it has fewer errors.
    pub fn parse_for_search(
        &mut self,
        language: &dyn Language,
        source: &[u8],
        limits: &ParseLimits<'_>,
    ) -> Result<ParsedSource, BoundedParseError> {
        let tree = self.parse_bounded(language, source, limits)?;
        let plain = |tree| ParsedSource {
            tree,
            set_aside: Vec::new(),
        };
        if !language.sets_aside_attribute_macros() || !tree.root_node().has_error() {
            return Ok(plain(tree));
        }
        let macros = crate::repair::attribute_macros(Node::new(tree.root_node()), source);
        if macros.is_empty() {
            return Ok(plain(tree));
        }
        let blanked = crate::repair::blanked(source, &macros);
        let repaired = self.parse_bounded(language, &blanked, limits)?;
        if syntax_errors(&repaired).0 < syntax_errors(&tree).0 {
            Ok(ParsedSource {
                tree: repaired,
                set_aside: macros,
            })
        } else {
            Ok(plain(tree))
        }
    }
}

/// Why matching a tree stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The tree is nested deeper than allowed.
    TooDeep,
    /// The call was cancelled.
    Cancelled,
}

/// How often (in nodes walked) matching looks at the cancellation flag.
const CANCEL_CHECK_NODES: usize = 4096;

/// Columns of positions on one line, computed from the last one asked for rather than from
/// the line's start: on a minified file (one line of megabytes) counting from the line's
/// start for every match would be quadratic.
#[derive(Debug, Default)]
struct Columns {
    /// `(row, offset, 1-based column)` of the last position computed.
    last: Option<(usize, usize, usize)>,
}

impl Columns {
    fn at(&mut self, source: &[u8], offset: usize, (row, byte_column): (usize, usize)) -> Position {
        let line_start = offset.saturating_sub(byte_column);
        let column = match self.last {
            Some((last_row, last, column)) if last_row == row && last >= line_start => {
                if offset >= last {
                    column + char_count(source.get(last..offset).unwrap_or(&[]))
                } else {
                    column.saturating_sub(char_count(source.get(offset..last).unwrap_or(&[])))
                }
            }
            _ => char_count(source.get(line_start..offset).unwrap_or(&[])) + 1,
        };
        self.last = Some((row, offset, column));
        Position {
            line: row + 1,
            column,
        }
    }
}

/// The position memos of one walk (starts and ends move independently), and the file's
/// set-aside macros.
#[derive(Debug, Default)]
struct Places<'a> {
    starts: Columns,
    ends: Columns,
    set_aside: &'a [Range<usize>],
}

/// Byte ranges of the comments in a tree (extras whose kind names a comment).
pub fn comment_ranges(tree: &tree_sitter::Tree) -> Vec<Range<usize>> {
    Walk::new(tree.root_node())
        .filter(|n| n.is_extra() && n.kind().contains("comment"))
        .map(|n| n.range())
        .collect()
}

/// Byte ranges, sorted and not nested, of the strings, heredocs and comments of a tree that
/// span lines: text whose lines a rewrite must not re-indent.
pub fn verbatim_ranges(tree: &tree_sitter::Tree) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for node in Walk::new(tree.root_node()) {
        let kind = node.kind();
        let textual =
            kind.contains("string") || kind.contains("heredoc") || kind.contains("comment");
        if !textual || node.start_point().0 == node.end_point().0 {
            continue;
        }
        // Pre-order: an enclosing range comes first.
        if out.last().is_some_and(|last| last.end >= node.end()) {
            continue;
        }
        out.push(node.range());
    }
    out
}

/// The parts a match left out, in order, those separated by blanks only merged into one
/// (`->` and `int` of a return annotation).
fn merge_parts(parts: &[Range<usize>], source: &[u8]) -> Vec<Range<usize>> {
    let mut sorted = parts.to_vec();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(sorted.len());
    for part in sorted {
        if let Some(last) = out.last_mut() {
            let gap = source.get(last.end..part.start).unwrap_or(b"x");
            if part.start <= last.end || gap.iter().all(|b| b.is_ascii_whitespace()) {
                last.end = last.end.max(part.end);
                continue;
            }
        }
        out.push(part);
    }
    out
}

pub use cc_languages::syntax_errors;

impl Pattern {
    /// Every match of the pattern in `source`, nested ones included.
    pub fn find_all(
        &self,
        parser: &mut SourceParser,
        source: &[u8],
    ) -> Result<FileMatches, ParseError> {
        let parsed = parser
            .parse_for_search(self.language().as_ref(), source, &ParseLimits::default())
            .map_err(|error| match error {
                BoundedParseError::Failed(error) => error,
                other => ParseError {
                    language: self.language().name().to_owned(),
                    reason: other.to_string(),
                },
            })?;
        Ok(self
            .find_parsed(&parsed, source, usize::MAX, None)
            .unwrap_or_default())
    }

    /// Every match in an already parsed tree of `source`.
    pub fn find_in_tree(&self, tree: &tree_sitter::Tree, source: &[u8]) -> FileMatches {
        self.find_in_tree_within(tree, source, usize::MAX)
            .unwrap_or_default()
    }

    /// Every match in an already parsed tree of `source`, or `None` when the tree is nested
    /// more than `max_depth` levels deep.
    pub fn find_in_tree_within(
        &self,
        tree: &tree_sitter::Tree,
        source: &[u8],
        max_depth: usize,
    ) -> Option<FileMatches> {
        self.find_within(tree, source, max_depth, RunSpans::WithComments)
    }

    /// As [`Pattern::find_in_tree_within`], for a search that rewrites nothing: the span of a
    /// `$$$` capture runs from its first named node to its last, without the comments around
    /// them that a rewrite carries along (finding those walks up the tree for every match).
    pub fn search_in_tree_within(
        &self,
        tree: &tree_sitter::Tree,
        source: &[u8],
        max_depth: usize,
    ) -> Option<FileMatches> {
        self.find_within(tree, source, max_depth, RunSpans::Named)
    }

    /// As [`Pattern::search_in_tree_within`] on a [`ParsedSource`], stopping when `cancel`
    /// is set.
    pub fn search_parsed(
        &self,
        parsed: &ParsedSource,
        source: &[u8],
        max_depth: usize,
        cancel: Option<&AtomicBool>,
    ) -> Result<FileMatches, Stopped> {
        self.find_bounded(parsed, source, max_depth, cancel, RunSpans::Named)
    }

    /// As [`Pattern::find_in_tree_within`] on a [`ParsedSource`], stopping when `cancel` is
    /// set.
    pub fn find_parsed(
        &self,
        parsed: &ParsedSource,
        source: &[u8],
        max_depth: usize,
        cancel: Option<&AtomicBool>,
    ) -> Result<FileMatches, Stopped> {
        self.find_bounded(parsed, source, max_depth, cancel, RunSpans::WithComments)
    }

    fn find_within(
        &self,
        tree: &tree_sitter::Tree,
        source: &[u8],
        max_depth: usize,
        spans: RunSpans,
    ) -> Option<FileMatches> {
        let parsed = ParsedSource {
            tree: tree.clone(),
            set_aside: Vec::new(),
        };
        self.find_bounded(&parsed, source, max_depth, None, spans)
            .ok()
    }

    fn find_bounded(
        &self,
        parsed: &ParsedSource,
        source: &[u8],
        max_depth: usize,
        cancel: Option<&AtomicBool>,
        spans: RunSpans,
    ) -> Result<FileMatches, Stopped> {
        let tree = &parsed.tree;
        let mut out = FileMatches::default();
        let mut env = Env::new();
        let mut places = Places {
            set_aside: &parsed.set_aside,
            ..Places::default()
        };
        let mut walk = Walk::entering(tree.root_node(), self.entry.as_deref());
        let mut walked = 0usize;
        while let Some(node) = walk.next() {
            if walk.depth() > max_depth {
                return Err(Stopped::TooDeep);
            }
            walked += 1;
            if walked.is_multiple_of(CANCEL_CHECK_NODES)
                && cancel.is_some_and(|c| c.load(Ordering::Relaxed))
            {
                return Err(Stopped::Cancelled);
            }
            if self.sequence {
                let matches = &mut out.matches;
                out.exhausted +=
                    self.match_runs(node, source, &mut env, &mut |first, last, env| {
                        matches.push(self.record_run(first, last, source, env, spans, &mut places));
                    });
                continue;
            }
            if !self.may_match_kind(&node) {
                continue;
            }
            if self.match_node(node, source, &mut env) {
                out.matches
                    .push(self.record(node, source, &env, spans, &mut places));
            } else if env.exhausted() {
                out.exhausted += 1;
            }
        }
        if self.sequence {
            // A block's runs are found before those of the blocks inside its statements:
            // document order, outer before inner, as for single nodes.
            out.matches
                .sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end)));
        }
        Ok(out)
    }

    /// The match at `range` of an already parsed tree of `source`: each node whose code
    /// (comments at its ends aside, see [`Node::code_span`]) is exactly `range` is tried,
    /// outermost first (a node and its only child may share it).
    pub fn match_at(
        &self,
        tree: &tree_sitter::Tree,
        source: &[u8],
        range: Range<usize>,
    ) -> Option<Match> {
        let raw = tree
            .root_node()
            .descendant_for_byte_range(range.start, range.end)?;
        let mut node = Node::new(raw);
        if self.sequence {
            // The block holding the run, or one around it.
            let mut env = Env::new();
            let mut block = Some(node);
            while let Some(candidate) = block {
                let mut found = None;
                self.match_runs(candidate, source, &mut env, &mut |first, last, env| {
                    if found.is_none() && first.start() == range.start && last.end() == range.end {
                        found = Some(self.record_run(
                            first,
                            last,
                            source,
                            env,
                            RunSpans::WithComments,
                            &mut Places::default(),
                        ));
                    }
                });
                if found.is_some() {
                    return found;
                }
                block = candidate.parent();
            }
            return None;
        }
        while let Some(parent) = node.parent().filter(|p| p.code_span() == range) {
            node = parent;
        }
        let mut env = Env::new();
        loop {
            if node.code_span() != range {
                return None;
            }
            if self.may_match_kind(&node) && self.match_node(node, source, &mut env) {
                return Some(self.record(
                    node,
                    source,
                    &env,
                    RunSpans::WithComments,
                    &mut Places::default(),
                ));
            }
            node = node
                .children()
                .into_iter()
                .map(|c| c.node)
                .find(|c| !c.is_extra() && c.code_span() == range)?;
        }
    }

    /// See [`Match::rewrite_range`]; for a run of statements, from its first to its last,
    /// with the last one's `;` as for one node.
    fn rewrite_range(&self, first: Node<'_>, node: Node<'_>, source: &[u8]) -> Range<usize> {
        let is_terminator = |n: &Node<'_>| {
            !n.is_named() && !n.is_missing() && source.get(n.range()) == Some(&b";"[..])
        };
        let range = first.start()..node.end();
        let spelled = self.text().ends_with(';');
        if spelled && !source[range.clone()].ends_with(b";") {
            if let Some(after) = node.next_sibling().filter(is_terminator) {
                return range.start..after.end();
            }
        }
        if !spelled {
            if let Some(own) = node.last_child().filter(is_terminator) {
                return range.start..own.start();
            }
        }
        range
    }

    /// A match of a run of statements, `first` to `last`.
    fn record_run(
        &self,
        first: Node<'_>,
        last: Node<'_>,
        source: &[u8],
        env: &Env<'_>,
        spans: RunSpans,
        places: &mut Places<'_>,
    ) -> Match {
        self.record_span(first, last, source, env, spans, places)
    }

    fn record(
        &self,
        node: Node<'_>,
        source: &[u8],
        env: &Env<'_>,
        spans: RunSpans,
        places: &mut Places<'_>,
    ) -> Match {
        self.record_span(node, node, source, env, spans, places)
    }

    /// The match from `first` to `node` (the same node, or the ends of a run).
    fn record_span(
        &self,
        first: Node<'_>,
        node: Node<'_>,
        source: &[u8],
        env: &Env<'_>,
        spans: RunSpans,
        places: &mut Places<'_>,
    ) -> Match {
        let range = first.start()..node.end();
        let captures = self
            .names
            .iter()
            .enumerate()
            .filter_map(|(slot, name)| {
                let captured = match env.get(slot)? {
                    Bound::One(n) => Captured::Node(n.range()),
                    Bound::Text(range) => Captured::Text(range.clone()),
                    Bound::Run(run) => Captured::Nodes {
                        items: run
                            .iter()
                            .filter(|n| n.is_named())
                            .map(|n| n.range())
                            .collect(),
                        span: match spans {
                            RunSpans::WithComments => run_span(run, &range),
                            RunSpans::Named => named_span(run),
                        },
                    },
                };
                Some((name.clone(), captured))
            })
            .collect();
        let mut omitted = env.omitted().to_vec();
        // A macro set aside inside the match is code the pattern did not name.
        omitted.extend(
            places
                .set_aside
                .iter()
                .filter(|m| range.start <= m.start && m.end <= range.end)
                .cloned(),
        );
        Match {
            rewrite_range: self.rewrite_range(first, node, source),
            range,
            start: places.starts.at(source, first.start(), first.start_point()),
            end: places.ends.at(source, node.end(), node.end_point()),
            captures,
            omitted: merge_parts(&omitted, source),
        }
    }
}
