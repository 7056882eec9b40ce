//! Compiling a pattern: the scaffold ladder, then the conversion of the accepted parse into a
//! tree of [`PNode`]s the matcher walks.
//!
//! The fragment is parsed with the file's grammar inside each scaffold of the language's
//! ladder ([`ladder`]). A scaffold accepts when the parse has no `ERROR` or missing node and
//! the fragment's own byte range is exactly one node (the innermost such), which becomes the
//! pattern's root (comments around the fragment left out). Then, in order of preference:
//!
//! 0. a reading that takes a keyword of the grammar (one of its unnamed tokens spelled like
//!    a word) for an identifier loses to any that does not: C's `return -1;` read as
//!    `return - 1` in the expression rung, Kotlin's `override fun …` as an infix call; and a
//!    fragment that ends in `;` is not tried as an expression before the statement rungs;
//! 1. a clean parse in any scaffold (first in ladder order) beats one that needs an `ERROR`
//!    around a lone metavariable (grammars with no place for `$$$B` in a block wrap it so);
//! 2. the fragment as written beats one with a `;` supplied after a metavariable that ends a
//!    braced list (`{ $$$B }` in Dart is otherwise a set literal), and beats the language's
//!    fallback spelling of `$` (Ruby constants for `class $C`);
//! 3. a statement-rung local function gives way to a class member where the language says so
//!    (C#, Dart: `void M() {}` usually means a method); the local function, and the
//!    top-level reading when it is another kind (Dart), stay as alternates that a node may
//!    match instead, so top-level and local functions of that shape are found too;
//! 4. likewise, clean readings of other kinds in the other declaration contexts (statement,
//!    class member, top level) are alternates: Java's `final int x = 1;` is a local and a
//!    field, Dart's `final log = …;` also a top-level variable.
//!
//! A pattern nested deeper than [`MAX_PATTERN_DEPTH`] or longer than [`MAX_PATTERN_BYTES`]
//! is refused before anything recurses along it.
//!
//! Two concessions: a statement terminator `;` the fragment leaves off (`let x = 1` in Rust)
//! is supplied rather than refused, and a member's trailing `;` may be a sibling token. If no
//! scaffold accepts, [`PatternError::Unparsable`] says where each context broke.

use std::fmt;
use std::sync::Arc;

mod convert;
mod ladder;
mod literal;
mod readings;

use crate::language::{ContextKind, Language, Scaffold};
use crate::meta::{parse_metavar, MetaVar, Substituted};
use crate::node::{Grammar, Node};

use convert::{choose_literals, common_literals, Builder};
use ladder::accept;
use literal::LiteralFinder;
use readings::Readings;

/// The deepest syntax tree a pattern may have (about 200 nested calls): compiling and
/// matching recurse along it.
pub const MAX_PATTERN_DEPTH: usize = 400;

/// The longest pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1 << 20;

/// Why a pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The pattern is empty or only whitespace.
    #[error("the pattern is empty; give a code fragment such as `print($$$ARGS)`")]
    Empty,
    /// No context of the ladder parses the fragment as one clean node.
    #[error("{}", unparsable_message(.language, .attempts))]
    Unparsable {
        /// The language the fragment was parsed with.
        language: String,
        /// Each context tried, in order, and where its parse broke.
        attempts: Vec<Attempt>,
    },
    /// A pattern of several statements that starts with `$$$`, or holds nothing but lone
    /// metavariables: it would match at every statement.
    #[error("{0}")]
    LooseRun(String),
    /// The pattern is a bare `$$$` (or `$$$NAME`), which would match any run of nodes.
    #[error(
        "a pattern that is only `{0}` matches every run of nodes; put code around it, e.g. `f({0})`"
    )]
    OnlyMulti(String),
    /// The pattern is longer or nested deeper than a pattern may be (the matcher's stack
    /// grows with the nesting).
    #[error("the pattern is {what}, over the limit of {limit}; search for a smaller part of it")]
    TooLarge {
        /// `nested 2,100 levels deep`, `1,200,000 bytes long`.
        what: String,
        /// The limit, in the same unit.
        limit: usize,
    },
    /// The forced context does not exist for this language.
    #[error("the {language} ladder has no `{context}` context; it has: {available}")]
    NoSuchContext {
        /// The language.
        language: String,
        /// The context asked for.
        context: ContextKind,
        /// The contexts it has, comma-separated.
        available: String,
    },
}

fn unparsable_message(language: &str, attempts: &[Attempt]) -> String {
    let mut out = format!(
        "the pattern does not parse as one {language} node in any context; fix the fragment or \
         pass `context`. Tried: "
    );
    for (i, attempt) in attempts.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(&attempt.to_string());
    }
    out
}

/// One rung of the ladder that did not accept the fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The context tried.
    pub context: ContextKind,
    /// What was wrong (`syntax error at …`, `spans several nodes …`).
    pub problem: String,
    /// 1-based line in the pattern where the parse broke, when known.
    pub line: Option<usize>,
    /// 1-based column (characters) in the pattern where the parse broke, when known.
    pub column: Option<usize>,
}

impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.context, self.problem)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " (line {line}, column {column} of the pattern)")?;
        }
        Ok(())
    }
}

/// A compiled pattern node.
#[derive(Debug, Clone)]
pub(crate) enum PNode {
    /// A metavariable; `slot` indexes [`Pattern::names`] when it binds.
    Meta { multi: bool, slot: Option<usize> },
    /// A string literal whose whole content is a metavariable: binds the content.
    StringMeta { kind: u16, slot: Option<usize> },
    /// A token: kind and text must both be equal.
    Leaf {
        kind: u16,
        named: bool,
        text: Box<[u8]>,
    },
    /// A node with children, matched as a sequence.
    Internal {
        kind: u16,
        children: Vec<PChild>,
        /// Field ids the pattern's node fills.
        fields: Vec<u16>,
        /// Canonical kinds of its named children.
        kinds: Vec<u16>,
    },
}

/// A child of an internal pattern node.
#[derive(Debug, Clone)]
pub(crate) struct PChild {
    pub(crate) node: PNode,
    pub(crate) named: bool,
    /// Holds nothing but `$$$` metavariables, so may stand for a child the code does not have
    /// (Go's empty block has no `statement_list`).
    pub(crate) nullable: bool,
}

impl PNode {
    pub(crate) fn is_multi(&self) -> bool {
        matches!(self, PNode::Meta { multi: true, .. })
    }

    /// A `;` the pattern spells, which a line end may stand for in the code (bash,
    /// JavaScript's automatic semicolons).
    pub(crate) fn is_terminator(&self) -> bool {
        matches!(self, PNode::Leaf { named: false, text, .. } if &text[..] == b";")
    }

    /// A list separator, which a `$$$` that matches nothing takes along (`f($A, $$$R)`
    /// matches `f(x)`).
    pub(crate) fn is_separator(&self) -> bool {
        matches!(self, PNode::Leaf { named: false, text, .. } if matches!(&text[..], b"," | b";"))
    }
}

/// A compiled structural pattern for one language.
#[derive(Debug, Clone)]
pub struct Pattern {
    language: Arc<dyn Language>,
    pub(crate) grammar: Grammar,
    pub(crate) root: PNode,
    /// Other readings of the fragment that a match may take instead (C# and Dart functions:
    /// the method, and the top-level or local function of the same shape).
    pub(crate) alternates: Vec<PNode>,
    context: ContextKind,
    pub(crate) names: Vec<String>,
    literals: Vec<Vec<u8>>,
    finders: Vec<LiteralFinder>,
    text: String,
    /// Kind id → whether a search enters nodes of that kind (see [`Grammar::entry_table`]).
    pub(crate) entry: Option<Arc<[bool]>>,
    /// The pattern is several statements: `root` is their block, and a match is a run of
    /// consecutive children of a block (see [`Pattern::is_sequence`]).
    pub(crate) sequence: bool,
}

impl Pattern {
    /// Compiles `text` for `language`, trying the ladder's contexts in order (or only
    /// `context` when given).
    pub fn new(
        language: Arc<dyn Language>,
        text: &str,
        context: Option<ContextKind>,
    ) -> Result<Pattern, PatternError> {
        let fragment = text.trim();
        if fragment.is_empty() {
            return Err(PatternError::Empty);
        }
        if fragment.len() > MAX_PATTERN_BYTES {
            return Err(PatternError::TooLarge {
                what: format!("{} bytes long", fragment.len()),
                limit: MAX_PATTERN_BYTES,
            });
        }
        let ts_language = language.grammar();
        let grammar = Grammar::new(language.as_ref(), &ts_language);
        let ladder = readings::ladder_for(language.as_ref(), fragment, context)?;
        let variants = readings::variants_of(language.as_ref(), fragment);
        let parsed = readings::parse_all(language.as_ref(), &ts_language, &ladder, &variants)?;
        let readings = Readings {
            parsed: &parsed,
            fragment,
            grammar: &grammar,
        };
        let Some(choice) = readings.choose() else {
            return Err(PatternError::Unparsable {
                language: language.name().to_owned(),
                attempts: readings.attempts(&variants[0]),
            });
        };
        let (index, also) = readings.alternates(&choice, language.member_preferred_kinds());
        let at: Vec<usize> = std::iter::once(index).chain(also).collect();
        let (mut roots, names) = readings.roots(language.name(), &at)?;
        let sequence = choice.sequence;
        let literals = choose_literals(common_literals(&roots));
        let finders = literals.iter().map(|l| LiteralFinder::new(l)).collect();
        let entry = entry_table(&grammar, language.as_ref(), &roots, sequence);
        let root = roots.remove(0);
        Ok(Pattern {
            sequence,
            entry,
            context: parsed[index].0.context,
            language,
            grammar,
            root,
            alternates: roots,
            names,
            literals,
            finders,
            text: fragment.to_owned(),
        })
    }

    /// Whether the pattern is several statements (`kfree($P);\n$P = NULL;`): it matches runs
    /// of consecutive statements of one block, its metavariables shared across them.
    pub fn is_sequence(&self) -> bool {
        self.sequence
    }

    /// The language it was compiled for.
    pub fn language(&self) -> &Arc<dyn Language> {
        &self.language
    }

    /// The context of the ladder that accepted it.
    pub fn context(&self) -> ContextKind {
        self.context
    }

    /// The pattern as given (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Names of the metavariables it binds, in order of first appearance.
    pub fn metavariables(&self) -> &[String] {
        &self.names
    }

    /// Literal byte strings every match must contain; a file without them cannot match and
    /// is not parsed.
    pub fn literals(&self) -> &[Vec<u8>] {
        &self.literals
    }

    /// Whether a file holding `bytes` may contain a match.
    pub fn may_match(&self, bytes: &[u8]) -> bool {
        self.finders.iter().all(|finder| finder.occurs_in(bytes))
    }
}

/// A run of statements must start with one that is not `$$$`, and name some code.
fn check_run(fragment: &str, children: &[PChild]) -> Result<(), PatternError> {
    if children.first().is_some_and(|c| c.node.is_multi()) {
        return Err(PatternError::LooseRun(format!(
            "the pattern of several statements `{}` starts with `$$$`, which would match at \
             every statement before the first it names; start it with a statement",
            fragment.lines().next().unwrap_or(fragment)
        )));
    }
    if children
        .iter()
        .all(|c| matches!(c.node, PNode::Meta { .. }))
    {
        return Err(PatternError::LooseRun(
            "a pattern of several statements needs one that is not a lone metavariable, or it \
             matches any statements"
                .to_owned(),
        ));
    }
    Ok(())
}

/// Whether the reading `node` takes an identifier that is spelled like one of the grammar's
/// keywords (`return`, `break`, `override`): such a reading is what a grammar falls back to
/// when the keyword has no place in the scaffold, so another rung's reading is the true one.
fn misreads_keyword(source: &Source<'_>, node: Node<'_>, grammar: &Grammar) -> bool {
    node.walk().any(|n| {
        n.is_named()
            && n.child_count() == 0
            && n.kind().contains("identifier")
            && grammar.is_keyword(source.text(&n).trim().as_bytes())
    })
}

/// Which kinds of node a search enters: those that may hold a node of a root's kind.
fn entry_table(
    grammar: &Grammar,
    language: &dyn Language,
    roots: &[PNode],
    sequence: bool,
) -> Option<Arc<[bool]>> {
    let root_kinds: Option<Vec<u16>> = roots
        .iter()
        .map(|root| match root {
            // A run is found in its block by its first statement: the walk must reach the
            // blocks that may hold one.
            PNode::Internal { children, .. } if sequence => {
                children.iter().find_map(|child| match &child.node {
                    PNode::Meta { .. } => None,
                    PNode::StringMeta { kind, .. }
                    | PNode::Leaf { kind, .. }
                    | PNode::Internal { kind, .. } => Some(*kind),
                })
            }
            PNode::Meta { .. } => None,
            PNode::StringMeta { kind, .. }
            | PNode::Leaf { kind, .. }
            | PNode::Internal { kind, .. } => Some(*kind),
        })
        .collect();
    root_kinds
        .and_then(|kinds| grammar.entry_table(language, &kinds))
        .map(Arc::from)
}

/// A scaffold, the variant of the fragment parsed in it, and the tree.
type Parsed<'a> = (
    &'a Scaffold,
    &'a Substituted,
    Option<tree_sitter::Tree>,
    String,
);

fn source_of<'a>(entry: &'a Parsed<'a>, fragment: &'a str) -> Source<'a> {
    Source {
        full: &entry.3,
        start: entry.0.prefix.len(),
        fragment,
        substituted: entry.1,
    }
}

/// The scaffolded text and the way back to the pattern as written.
struct Source<'a> {
    /// The scaffold with the fragment in it, as parsed.
    full: &'a str,
    /// Where the fragment starts in `full`.
    start: usize,
    fragment: &'a str,
    substituted: &'a Substituted,
}

impl Source<'_> {
    /// Offset in the original fragment of `at` in `full` (clamped to the fragment).
    fn original(&self, at: usize) -> usize {
        let local = at
            .saturating_sub(self.start)
            .min(self.substituted.text.len());
        self.substituted.original(local).min(self.fragment.len())
    }

    /// The text of `node` as the user wrote it.
    fn text(&self, node: &Node<'_>) -> &str {
        let start = self.original(node.start());
        let end = self.original(node.end()).max(start);
        self.fragment.get(start..end).unwrap_or("")
    }

    /// The scaffolded text between two offsets.
    fn full_between(&self, start: usize, end: usize) -> &str {
        self.full.get(start..end).unwrap_or("x")
    }

    /// Whether the parsed text of `node` differs from what the user wrote.
    fn was_substituted(&self, node: &Node<'_>) -> bool {
        let local = |at: usize| {
            at.saturating_sub(self.start)
                .min(self.substituted.text.len())
        };
        let parsed = self
            .substituted
            .text
            .get(local(node.start())..local(node.end()))
            .unwrap_or("");
        parsed != self.text(node)
    }

    fn ends_with_semicolon(&self) -> bool {
        self.substituted.text.ends_with(';')
    }

    fn metavar(&self, node: &Node<'_>) -> Option<MetaVar> {
        parse_metavar(self.text(node).trim(), '$')
    }

    /// 1-based (line, column in characters) in the pattern of `at` in `full`.
    fn position(&self, at: usize) -> (usize, usize) {
        let offset = self.original(at);
        let before = &self.fragment[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}
