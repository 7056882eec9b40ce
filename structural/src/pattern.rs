//! Compiling a pattern: the scaffold ladder, then the conversion of the accepted parse into a
//! tree of [`PNode`]s the matcher walks.
//!
//! The fragment is parsed with the file's grammar inside each scaffold of the language's
//! ladder. A scaffold accepts when the fragment's own byte range is exactly one node (the
//! innermost such) and that node holds no `ERROR` or missing node, except inside a part whose
//! whole text is one metavariable (grammars without a place for `$$$B` wrap it in `ERROR`).
//! One concession: a statement terminator `;` the fragment leaves off (`let x = 1` in Rust) is
//! supplied rather than refused; the code's `;` is an unnamed token the pattern then does not
//! spell. The first scaffold that accepts wins; if none does, [`PatternError::Unparsable`] says
//! where each one broke.

use std::fmt;
use std::sync::Arc;

use crate::language::{ContextKind, Language, Scaffold};
use crate::meta::{parse_metavar, MetaVar, Substituted};
use crate::node::{Grammar, Node};

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
    /// The pattern is a bare `$$$` (or `$$$NAME`), which would match any run of nodes.
    #[error(
        "a pattern that is only `{0}` matches every run of nodes; put code around it, e.g. `f({0})`"
    )]
    OnlyMulti(String),
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
}

/// A compiled structural pattern for one language.
#[derive(Debug, Clone)]
pub struct Pattern {
    language: Arc<dyn Language>,
    pub(crate) grammar: Grammar,
    pub(crate) root: PNode,
    context: ContextKind,
    pub(crate) names: Vec<String>,
    literals: Vec<Vec<u8>>,
    text: String,
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
        let ts_language = language.grammar();
        let grammar = Grammar::new(language.as_ref(), &ts_language);
        let mut ladder: Vec<Scaffold> = language.scaffolds(fragment);
        if let Some(forced) = context {
            let available: Vec<ContextKind> = ladder.iter().map(|s| s.context).collect();
            ladder.retain(|s| s.context == forced);
            if ladder.is_empty() {
                let mut names: Vec<&str> = available.iter().map(|c| c.name()).collect();
                names.dedup();
                return Err(PatternError::NoSuchContext {
                    language: language.name().to_owned(),
                    context: forced,
                    available: names.join(", "),
                });
            }
        }
        let quote = language.quote_metavariables();
        let mut buf = [0u8; 4];
        let sigils: Vec<Option<&str>> =
            std::iter::once(language.meta_char().map(|c| &*c.encode_utf8(&mut buf)))
                .chain(language.fallback_sigil().map(Some))
                .collect();
        let mut variants: Vec<Substituted> = Vec::new();
        for sigil in sigils {
            for terminate in [false, true] {
                let variant = Substituted::with_options(fragment, sigil, terminate, quote);
                if !variants.iter().any(|v| v.text == variant.text) {
                    variants.push(variant);
                }
            }
        }
        let mut parser = tree_sitter::Parser::new();
        if let Err(error) = parser.set_language(&ts_language) {
            return Err(PatternError::Unparsable {
                language: language.name().to_owned(),
                attempts: vec![Attempt {
                    context: ladder[0].context,
                    problem: format!("the grammar does not load: {error}"),
                    line: None,
                    column: None,
                }],
            });
        }
        let mut parsed: Vec<Parsed<'_>> = Vec::with_capacity(ladder.len() * variants.len());
        for scaffold in &ladder {
            for substituted in &variants {
                let full = format!("{}{}{}", scaffold.prefix, substituted.text, scaffold.suffix);
                let tree = parser.parse(&full, None);
                parsed.push((scaffold, substituted, tree, full));
            }
        }
        // A clean parse anywhere beats one that needs an `ERROR` around a metavariable; the
        // fragment as written beats one with `;` supplied after a metavariable.
        let mut chosen = None;
        'passes: for lenient in [false, true] {
            for (index, entry) in parsed.iter().enumerate() {
                let Some(tree) = &entry.2 else {
                    continue;
                };
                if accept(
                    &source_of(entry, fragment),
                    Node::new(tree.root_node()),
                    lenient,
                )
                .is_ok()
                {
                    chosen = Some((index, lenient));
                    break 'passes;
                }
            }
        }
        let Some((mut index, lenient)) = chosen else {
            let mut attempts: Vec<Attempt> = Vec::new();
            for entry in parsed.iter().filter(|e| std::ptr::eq(e.1, &variants[0])) {
                let Some(tree) = &entry.2 else {
                    continue;
                };
                if let Err(mut rejection) = accept(
                    &source_of(entry, fragment),
                    Node::new(tree.root_node()),
                    true,
                ) {
                    rejection.context = entry.0.context;
                    // One reason per context (Rust has two member scaffolds).
                    if !attempts.iter().any(|a| a.context == rejection.context) {
                        attempts.push(rejection);
                    }
                }
            }
            return Err(PatternError::Unparsable {
                language: language.name().to_owned(),
                attempts,
            });
        };
        // A local function where a method is meant (C#, Dart): prefer the class member.
        let preferring = language.member_preferred_kinds();
        if !preferring.is_empty() && parsed[index].0.context == ContextKind::Statement {
            let entry = &parsed[index];
            let kind = entry.2.as_ref().and_then(|tree| {
                accept(
                    &source_of(entry, fragment),
                    Node::new(tree.root_node()),
                    lenient,
                )
                .ok()
                .map(|node| node.kind().to_owned())
            });
            if kind.is_some_and(|k| preferring.contains(&k.as_str())) {
                let member = parsed.iter().position(|entry| {
                    entry.0.context == ContextKind::ClassMember
                        && entry.2.as_ref().is_some_and(|tree| {
                            accept(
                                &source_of(entry, fragment),
                                Node::new(tree.root_node()),
                                true,
                            )
                            .is_ok()
                        })
                });
                if let Some(member) = member {
                    index = member;
                }
            }
        }
        let entry = &parsed[index];
        let source = source_of(entry, fragment);
        let tree = entry.2.as_ref().ok_or(PatternError::Empty)?;
        let node = accept(&source, Node::new(tree.root_node()), true).map_err(|rejection| {
            PatternError::Unparsable {
                language: language.name().to_owned(),
                attempts: vec![rejection],
            }
        })?;
        let mut builder = Builder {
            source: &source,
            grammar: &grammar,
            names: Vec::new(),
        };
        let root = builder.convert(node, true);
        if let PNode::Meta { multi: true, .. } = root {
            return Err(PatternError::OnlyMulti(fragment.to_owned()));
        }
        let names = builder.names;
        let mut literals = Vec::new();
        collect_literals(&root, &mut literals);
        Ok(Pattern {
            context: entry.0.context,
            language,
            grammar,
            root,
            names,
            literals: choose_literals(literals),
            text: fragment.to_owned(),
        })
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
        self.literals
            .iter()
            .all(|literal| memchr::memmem::find(bytes, literal).is_some())
    }
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

fn rejection(problem: String, position: Option<(usize, usize)>) -> Attempt {
    Attempt {
        context: ContextKind::Statement,
        problem,
        line: position.map(|p| p.0),
        column: position.map(|p| p.1),
    }
}

/// The innermost node that is exactly the fragment, if the whole scaffold parsed cleanly.
/// `lenient` also accepts an `ERROR` node whose whole text is one metavariable.
fn accept<'t>(source: &Source<'_>, root: Node<'t>, lenient: bool) -> Result<Node<'t>, Attempt> {
    let start = source.start;
    let end = source.start + source.substituted.text.len();
    if let Some(bad) = first_problem(source, root, lenient) {
        return Err(bad);
    }
    let mut node = smallest_covering(root, start, end);
    let mut exact = node.start() == start && node.end() == end;
    if !exact && source.ends_with_semicolon() {
        // `private x = 1;` in a class body: the member is a node, its `;` a sibling token.
        let shorter = smallest_covering(root, start, end - 1);
        if shorter.start() == start && shorter.end() == end - 1 {
            node = shorter;
            exact = true;
        }
    }
    if !exact {
        let (line, column) = source.position(start.max(node.start()));
        let what = if node.start() < start || node.end() > end {
            format!(
                "the fragment is part of a larger `{}` here, not a node of its own",
                node.kind()
            )
        } else {
            "the fragment spans several nodes, not one".to_owned()
        };
        return Err(rejection(what, Some((line, column))));
    }
    Ok(node)
}

/// The smallest node containing `start..end`.
fn smallest_covering<'t>(root: Node<'t>, start: usize, end: usize) -> Node<'t> {
    let mut node = root;
    'descend: loop {
        for child in node.children() {
            let c = child.node;
            if c.start() <= start && c.end() >= end && !(c.start() == c.end() && start != end) {
                node = c;
                continue 'descend;
            }
        }
        return node;
    }
}

/// The first `ERROR` or missing node of the parse. Parts whose whole text is one metavariable
/// are skipped (and, when `lenient`, an `ERROR` that is one); a missing `;` right where the
/// fragment ends is tolerated.
fn first_problem(source: &Source<'_>, node: Node<'_>, lenient: bool) -> Option<Attempt> {
    if !node.has_error() {
        return None;
    }
    let in_fragment =
        node.start() >= source.start && node.end() <= source.start + source.substituted.text.len();
    if in_fragment && source.metavar(&node).is_some() && (lenient || !node.is_error()) {
        return None;
    }
    if node.is_missing() {
        let fragment_end = source.start + source.substituted.text.len();
        // Only the fragment's own terminator: a `;` missing inside it means the fragment was
        // read as something else (Dart's `{ $$$B }` as a set literal).
        let wraps_fragment = node
            .parent()
            .is_some_and(|p| p.start() <= source.start && p.end() >= fragment_end);
        // The parser may put it after the whitespace that follows the fragment.
        let right_after = node.start() >= fragment_end
            && source
                .full_between(fragment_end, node.start())
                .trim()
                .is_empty();
        if node.kind() == ";" && !node.is_named() && right_after && wraps_fragment {
            return None;
        }
        let position = source.position(node.start());
        return Some(rejection(
            format!("syntax error: a `{}` is missing", node.kind()),
            Some(position),
        ));
    }
    if node.is_error() {
        let position = source.position(node.start());
        let text: String = source.text(&node).chars().take(30).collect();
        let shown = if text.trim().is_empty() {
            String::new()
        } else {
            format!(" at `{}`", text.trim())
        };
        return Some(rejection(format!("syntax error{shown}"), Some(position)));
    }
    for child in node.children() {
        if let Some(problem) = first_problem(source, child.node, lenient) {
            return Some(problem);
        }
    }
    None
}

struct Builder<'a> {
    source: &'a Source<'a>,
    grammar: &'a Grammar,
    names: Vec<String>,
}

impl Builder<'_> {
    fn slot(&mut self, var: &MetaVar) -> Option<usize> {
        let name = var.name()?;
        Some(match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        })
    }

    /// Children that count: extras and missing nodes left out, except an `ERROR` that is
    /// exactly a metavariable.
    fn effective_children<'t>(&self, node: Node<'t>) -> Vec<(Node<'t>, u16)> {
        node.children()
            .into_iter()
            .filter(|c| !c.node.is_missing())
            .filter(|c| {
                !(c.node.is_extra() || c.node.is_error())
                    || (c.node.is_error() && self.source.metavar(&c.node).is_some())
            })
            // Nothing the user wrote: a missing token, or a `;` the ladder inserted.
            .filter(|c| !self.source.text(&c.node).is_empty())
            .map(|c| (c.node, c.field))
            .collect()
    }

    /// Whether the metavariable that is `node`'s whole text stands for `node` itself, or for
    /// its only child with the same text. It stands for the child when that child is a
    /// statement wrapper (`if $A: $B` wants one statement, not any block), and, for `$$$`,
    /// when `node` is a list container (Ruby's `body_statement` holds its statements
    /// directly, so `$$$B` is the run inside it).
    fn is_meta_level(&self, node: Node<'_>, text: &str, multi: bool) -> bool {
        if self.grammar.is_wrapper(&node) {
            return true;
        }
        match self.effective_children(node).as_slice() {
            [(only, _)] if self.source.text(only).trim() == text => {
                !(self.grammar.is_wrapper(only) || (multi && self.grammar.is_list_container(&node)))
            }
            _ => true,
        }
    }

    fn convert(&mut self, node: Node<'_>, is_root: bool) -> PNode {
        let text = self.source.text(&node).trim();
        if node.is_named() || node.is_error() {
            if let Some(var) = parse_metavar(text, '$') {
                if is_root || self.is_meta_level(node, text, var.is_multi()) {
                    let multi = var.is_multi();
                    let slot = self.slot(&var);
                    return PNode::Meta { multi, slot };
                }
            }
            if let Some(string) = self.string_meta(node) {
                return string;
            }
            if node.kind().contains("string") && self.source.was_substituted(&node) {
                // Any other `$NAME` inside a string is literal text: compare the whole
                // string as written (bash's `"hello $USER"` is code only in the file).
                return PNode::Leaf {
                    kind: self.grammar.kind(&node),
                    named: true,
                    text: self.source.text(&node).as_bytes().into(),
                };
            }
        }
        let kind = self.grammar.kind(&node);
        let children = self.effective_children(node);
        if children.is_empty() {
            return PNode::Leaf {
                kind,
                named: node.is_named(),
                text: self.source.text(&node).as_bytes().into(),
            };
        }
        let mut fields = Vec::new();
        let mut kinds = Vec::new();
        let mut converted = Vec::with_capacity(children.len());
        for (child, field) in children {
            if field != 0 && !fields.contains(&field) {
                fields.push(field);
            }
            if child.is_named() {
                kinds.push(self.grammar.kind(&child));
            }
            let node = self.convert(child, false);
            let nullable = match &node {
                PNode::Internal { children, .. } => children.iter().all(|c| c.node.is_multi()),
                _ => false,
            };
            converted.push(PChild {
                named: child.is_named() || matches!(node, PNode::Meta { .. }),
                nullable,
                node,
            });
        }
        PNode::Internal {
            kind,
            children: converted,
            fields,
            kinds,
        }
    }

    /// `"$VAL"`: a string literal whose content between its delimiters is one metavariable.
    fn string_meta(&mut self, node: Node<'_>) -> Option<PNode> {
        if !node.kind().contains("string") || node.child_count() < 2 {
            return None;
        }
        let first = node.first_child()?;
        let last = node.last_child()?;
        if first.end() > last.start() {
            return None;
        }
        let start = self.source.original(first.end());
        let end = self.source.original(last.start());
        let content = self.source.fragment.get(start..end)?;
        let var = parse_metavar(content, '$')?;
        if var.is_multi() {
            return None;
        }
        let slot = self.slot(&var);
        Some(PNode::StringMeta {
            kind: self.grammar.kind(&node),
            slot,
        })
    }
}

/// Every token text the pattern spells, named tokens first.
fn collect_literals(node: &PNode, out: &mut Vec<(bool, Vec<u8>)>) {
    match node {
        PNode::Leaf { named, text, .. } => out.push((*named, text.to_vec())),
        PNode::Internal { children, .. } => {
            for child in children {
                collect_literals(&child.node, out);
            }
        }
        PNode::Meta { .. } | PNode::StringMeta { .. } => {}
    }
}

/// The two longest distinct texts, identifiers before keywords and punctuation (rarer, so a
/// better filter).
fn choose_literals(mut found: Vec<(bool, Vec<u8>)>) -> Vec<Vec<u8>> {
    found.retain(|(_, text)| !text.is_empty());
    found.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.len().cmp(&a.1.len())));
    let mut chosen: Vec<Vec<u8>> = Vec::new();
    for (_, text) in found {
        if chosen.len() == 2 {
            break;
        }
        let covered = chosen
            .iter()
            .any(|c| memchr::memmem::find(c, &text).is_some());
        if !covered {
            chosen.push(text);
        }
    }
    chosen
}
