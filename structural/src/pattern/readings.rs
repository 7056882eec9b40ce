//! Choosing among a fragment's readings: every scaffold of the ladder with every spelling
//! of the fragment is parsed, the best reading is chosen by the preferences of the module
//! docs ([`super`]), the alternates a node may match instead are added, and each chosen
//! reading is converted into a root of [`PNode`]s.

use super::{
    accept, check_run, misreads_keyword, source_of, Attempt, Builder, PNode, Parsed, PatternError,
    MAX_PATTERN_DEPTH,
};
use crate::language::{ContextKind, Language, Scaffold};
use crate::meta::Substituted;
use crate::node::{Grammar, Node};

/// The ladder's scaffolds to try, in order (only `context`'s when given).
pub(super) fn ladder_for(
    language: &dyn Language,
    fragment: &str,
    context: Option<ContextKind>,
) -> Result<Vec<Scaffold>, PatternError> {
    let mut ladder: Vec<Scaffold> = language.scaffolds(fragment);
    if fragment.ends_with(';') {
        // An expression never ends in `;`: C's `PyObject *$X = $Y;` is a declaration, not a
        // product assigned to.
        ladder.sort_by_key(|scaffold| scaffold.context == ContextKind::Expression);
    }
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
    Ok(ladder)
}

/// The spellings of the fragment to parse: with the language's metavariable sigil and its
/// fallback, each as written and with a `;` supplied after a metavariable.
pub(super) fn variants_of(language: &dyn Language, fragment: &str) -> Vec<Substituted> {
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
    variants
}

/// Every scaffold with every spelling, parsed; refused when the grammar does not load or
/// a tree is nested too deeply (compiling and matching walk the pattern recursively: its
/// depth is bounded first; the scaffold adds a few levels).
pub(super) fn parse_all<'p>(
    language: &dyn Language,
    ts_language: &tree_sitter::Language,
    ladder: &'p [Scaffold],
    variants: &'p [Substituted],
) -> Result<Vec<Parsed<'p>>, PatternError> {
    let mut parser = tree_sitter::Parser::new();
    if let Err(error) = parser.set_language(ts_language) {
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
    for scaffold in ladder {
        for substituted in variants {
            let full = format!("{}{}{}", scaffold.prefix, substituted.text, scaffold.suffix);
            let tree = parser.parse(&full, None);
            parsed.push((scaffold, substituted, tree, full));
        }
    }
    for entry in &parsed {
        if let Some(tree) = &entry.2 {
            let depth = crate::node::tree_depth(tree, MAX_PATTERN_DEPTH + 8);
            if depth > MAX_PATTERN_DEPTH + 8 {
                return Err(PatternError::TooLarge {
                    what: format!("nested more than {MAX_PATTERN_DEPTH} levels deep"),
                    limit: MAX_PATTERN_DEPTH,
                });
            }
        }
    }
    Ok(parsed)
}

/// The reading chosen.
pub(super) struct Choice {
    /// Its place among the parsed readings.
    pub(super) index: usize,
    /// It needs an `ERROR` around a metavariable.
    pub(super) lenient: bool,
    /// It reads a keyword as an identifier (no reading does not).
    pub(super) dubious: bool,
    /// It is several statements (a run).
    pub(super) sequence: bool,
}

/// The parsed readings of one fragment.
pub(super) struct Readings<'r, 'p> {
    pub(super) parsed: &'r [Parsed<'p>],
    pub(super) fragment: &'r str,
    pub(super) grammar: &'r Grammar,
}

impl Readings<'_, '_> {
    /// Ranks every reading: one that reads a keyword of the grammar as an identifier (C's
    /// `return -1;` as `return - 1`, Kotlin's `override fun …` as an infix call on
    /// `override`) loses to any that does not; then a reading as one node beats a reading as
    /// several statements (a run); then a clean parse beats one that needs an `ERROR`
    /// around a metavariable; then the ladder's order decides (the fragment as written
    /// before one with `;` supplied after a metavariable).
    pub(super) fn choose(&self) -> Option<Choice> {
        let mut chosen: Option<(usize, bool, (bool, bool, bool))> = None;
        for (index, entry) in self.parsed.iter().enumerate() {
            let Some(tree) = &entry.2 else {
                continue;
            };
            let source = source_of(entry, self.fragment);
            for lenient in [false, true] {
                if let Ok(reading) = accept(&source, Node::new(tree.root_node()), lenient)
                    .map(|r| r.in_lists(self.grammar))
                {
                    let rank = (
                        misreads_keyword(&source, reading.node, self.grammar),
                        reading.run.is_some(),
                        lenient,
                    );
                    if chosen.is_none_or(|(_, _, best)| rank < best) {
                        chosen = Some((index, lenient, rank));
                    }
                    break;
                }
            }
        }
        chosen.map(|(index, lenient, (misreads, run, _))| Choice {
            index,
            lenient,
            dubious: misreads,
            sequence: run,
        })
    }

    /// Why no reading was accepted: one reason per context, for the fragment as written.
    pub(super) fn attempts(&self, as_written: &Substituted) -> Vec<Attempt> {
        let mut attempts: Vec<Attempt> = Vec::new();
        for entry in self.parsed.iter().filter(|e| std::ptr::eq(e.1, as_written)) {
            let Some(tree) = &entry.2 else {
                continue;
            };
            if let Err(mut rejection) = accept(
                &source_of(entry, self.fragment),
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
        attempts
    }

    /// The kind of the reading at `entry` when it is accepted.
    fn accepted_kind(&self, entry: &Parsed<'_>, lenient: bool) -> Option<String> {
        let tree = entry.2.as_ref()?;
        accept(
            &source_of(entry, self.fragment),
            Node::new(tree.root_node()),
            lenient,
        )
        .map(|r| r.in_lists(self.grammar))
        .ok()
        .map(|reading| reading.kind())
    }

    /// The main reading and its alternates (readings a node may match instead), by their
    /// places among the parsed readings.
    pub(super) fn alternates(&self, choice: &Choice, preferring: &[&str]) -> (usize, Vec<usize>) {
        let (index, mut also) = self.member_preferred(choice, preferring);
        // The same text as a statement, a class member or a top-level declaration, read as
        // other kinds (Java's `final int x = 1;`, a local and a field; Dart's `final log =
        // Logger(…);` at the top level): it matches any of them.
        let declarations = [
            ContextKind::Statement,
            ContextKind::ClassMember,
            ContextKind::TopLevel,
        ];
        // (Several statements have one reading.)
        if !declarations.contains(&self.parsed[index].0.context) || choice.sequence {
            return (index, also);
        }
        let mut kinds: Vec<Option<String>> = also
            .iter()
            .map(|&at| self.accepted_kind(&self.parsed[at], true))
            .collect();
        kinds.push(self.accepted_kind(&self.parsed[index], choice.lenient));
        for other in declarations {
            if other == self.parsed[index].0.context {
                continue;
            }
            for (at, entry) in self.parsed.iter().enumerate() {
                if entry.0.context != other || also.contains(&at) {
                    continue;
                }
                let Some(tree) = entry.2.as_ref() else {
                    continue;
                };
                let source = source_of(entry, self.fragment);
                let Ok(reading) = accept(&source, Node::new(tree.root_node()), false)
                    .map(|r| r.in_lists(self.grammar))
                else {
                    continue;
                };
                if reading.run.is_some() {
                    continue;
                }
                let kind = Some(reading.kind());
                // No worse a reading than the chosen one.
                let misreads = misreads_keyword(&source, reading.node, self.grammar);
                if (!misreads || choice.dubious) && !kinds.contains(&kind) {
                    also.push(at);
                    kinds.push(kind);
                }
            }
        }
        (index, also)
    }

    /// A local function where a method is meant (C#, Dart): the class member is preferred,
    /// and the functions of the other rungs (top-level and local ones) are matched too.
    fn member_preferred(&self, choice: &Choice, preferring: &[&str]) -> (usize, Vec<usize>) {
        let index = choice.index;
        let mut also: Vec<usize> = Vec::new();
        if self.parsed[index].0.context != ContextKind::Statement || choice.sequence {
            return (index, also);
        }
        let statement_kind = self.accepted_kind(&self.parsed[index], choice.lenient);
        if !statement_kind
            .as_deref()
            .is_some_and(|k| preferring.contains(&k))
        {
            return (index, also);
        }
        let member = self.parsed.iter().position(|entry| {
            entry.0.context == ContextKind::ClassMember && self.accepted_kind(entry, true).is_some()
        });
        let Some(member) = member else {
            return (index, also);
        };
        also.push(index);
        let top = self.parsed.iter().position(|entry| {
            entry.0.context == ContextKind::TopLevel
                && self
                    .accepted_kind(entry, true)
                    .is_some_and(|k| Some(&k) != statement_kind.as_ref())
        });
        also.extend(top);
        (member, also)
    }

    /// Converts the readings at `at` (the main one first) into roots sharing one slot per
    /// metavariable; returns the roots and the metavariables' names.
    pub(super) fn roots(
        &self,
        language: &str,
        at: &[usize],
    ) -> Result<(Vec<PNode>, Vec<String>), PatternError> {
        let mut names = Vec::new();
        let mut roots = Vec::with_capacity(at.len());
        for (position, &at) in at.iter().enumerate() {
            let entry = &self.parsed[at];
            let source = source_of(entry, self.fragment);
            let tree = entry.2.as_ref().ok_or(PatternError::Empty)?;
            let reading = accept(&source, Node::new(tree.root_node()), true)
                .map(|r| r.in_lists(self.grammar))
                .map_err(|rejection| PatternError::Unparsable {
                    language: language.to_owned(),
                    attempts: vec![rejection],
                })?;
            let mut builder = Builder {
                source: &source,
                grammar: self.grammar,
                // The same metavariables in every root: one slot each.
                names: std::mem::take(&mut names),
            };
            let root = match reading.run {
                Some(run) => builder.convert_run(reading.node, run),
                None => builder.convert(reading.node, true),
            };
            names = builder.names;
            if position == 0 {
                if let PNode::Meta { multi: true, .. } = root {
                    return Err(PatternError::OnlyMulti(self.fragment.to_owned()));
                }
                if let PNode::Internal { children, .. } = &root {
                    if reading.run.is_some() {
                        check_run(self.fragment, children)?;
                    }
                }
            }
            roots.push(root);
        }
        Ok((roots, names))
    }
}
