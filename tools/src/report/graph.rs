//! The `graph` tool's result: one report per action, with how fresh the index was and, for
//! `verify: true`, what the language server said of each edge.

use std::collections::BTreeMap;

use cc_graph::{DefKind, Indexer, PreciseState, Rung, Symbol};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Render;
use crate::left_out::LeftOutReport;

/// A `graph` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphReport {
    /// The answer, tagged by `action`.
    #[serde(flatten)]
    pub answer: GraphAnswer,
    /// How current the index was when it answered.
    pub index: IndexReport,
    /// `verify: true`: the tally of the language server's verdicts (each item carries its
    /// own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

/// One action's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // One per result, moved once.
pub enum GraphAnswer {
    /// `status`.
    Status(StatusReport),
    /// `symbols`.
    Symbols(SymbolsReport),
    /// `outline`.
    Outline(OutlineReport),
    /// `callers`.
    Callers(CallersReport),
    /// `callees`.
    Callees(CalleesReport),
    /// `impact`.
    Impact(ImpactReport),
    /// `map`.
    Map(MapReport),
}

/// A definition as results list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolRef {
    /// The name as declared.
    pub name: String,
    /// Its name after those of the enclosing definitions.
    pub qualified_name: String,
    /// What it is.
    pub kind: DefKind,
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// The line of its name (1-based).
    pub line: u32,
}

impl From<&Symbol> for SymbolRef {
    fn from(symbol: &Symbol) -> Self {
        SymbolRef {
            name: symbol.name.clone(),
            qualified_name: symbol.qualified_name.clone(),
            kind: symbol.kind,
            path: symbol.path.clone(),
            line: symbol.line,
        }
    }
}

impl SymbolRef {
    /// `function Session.request (requests/sessions.py:500)`.
    fn text(&self) -> String {
        format!(
            "{} {} ({}:{})",
            self.kind.as_str(),
            self.qualified_name,
            self.path,
            self.line
        )
    }
}

/// A definition with its signature line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SignedSymbol {
    /// The definition.
    #[serde(flatten)]
    pub symbol: SymbolRef,
    /// Its first line, trimmed.
    pub signature: String,
}

pub use cc_analysis::verification::Verdict;

/// An item's verdict and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Verified {
    /// The verdict, when the answer was verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<Verdict>,
    /// Why, when it is not plainly confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_note: Option<String>,
}

impl Verified {
    /// The text line for an item that is not confirmed: `  refuted: PLACE (why)`.
    fn note(&self, place: &str) -> Option<String> {
        let verdict = self.verified.filter(|v| *v != Verdict::Confirmed)?;
        Some(format!(
            "  {}: {place}{}",
            verdict.as_str(),
            self.verify_note
                .as_ref()
                .map(|why| format!(" ({why})"))
                .unwrap_or_default()
        ))
    }
}

/// The tally of `verify: true`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Verification {
    /// Edges the server's references include.
    pub confirmed: usize,
    /// Edges its complete references leave out.
    pub refuted: usize,
    /// Edges it could not say about.
    pub unverifiable: usize,
    /// `references` requests made.
    pub requests: usize,
    /// What verified them.
    pub by: String,
}

/// Edges of the index by how they were resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EdgeCounts {
    /// Named by a compiler-grade indexer.
    pub precise: usize,
    /// Same scope, or a receiver of a known type.
    pub exact: usize,
    /// Through an import.
    pub import: usize,
    /// Same package.
    pub package: usize,
    /// Implementations and build alternatives.
    pub dispatch: usize,
    /// Unique-name guesses (left out by default).
    pub name: usize,
}

/// References the index could not resolve to a workspace definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UnresolvedCounts {
    /// Several candidates, none preferred.
    pub ambiguous: usize,
    /// No candidate.
    pub unknown: usize,
    /// Resolved outside the workspace (a library).
    pub external: usize,
}

/// `status`: what is indexed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusReport {
    /// Indexed files.
    pub files: usize,
    /// Indexed files per language.
    pub files_per_language: BTreeMap<String, usize>,
    /// Indexed files the grammar did not read cleanly.
    pub files_with_syntax_errors: usize,
    /// Definitions.
    pub definitions: usize,
    /// References.
    pub references: usize,
    /// Resolved edges by rung.
    pub edges: EdgeCounts,
    /// Unresolved references.
    pub unresolved: UnresolvedCounts,
    /// The ambiguous and unknown share of the references (0 to 1).
    pub unresolved_share: f64,
    /// Where the index is.
    pub index_path: String,
    /// Its size.
    pub index_bytes: u64,
    /// When it was last compared with the disk (milliseconds since the epoch).
    pub last_update_ms: u64,
    /// The precise tier: `off`, or what each indexer did last.
    pub precise: PreciseTier,
}

/// The precise tier in `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PreciseTier {
    /// Turned off (`[graph] precise = false`).
    Off(PreciseOff),
    /// Each indexer's last run (none yet: empty).
    Indexers(BTreeMap<Indexer, IndexerRun>),
}

pub use cc_graph::precise::IndexerRun;

/// The word `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PreciseOff {
    /// The tier is off.
    Off,
}

impl Render for StatusReport {
    fn render(&self) -> String {
        let langs: Vec<String> = self
            .files_per_language
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        let (edges, unresolved) = (&self.edges, &self.unresolved);
        let text = format!(
            "code graph: {} files ({}), {} definitions, {} references\n\
             edges: {} precise, {} exact, {} import, {} package, {} dispatch, {} name-guessed (left out by default)\n\
             unresolved: {} ambiguous, {} unknown ({:.1}% of references); {} external\n\
             index: {} ({} bytes), compared with the disk at {} ms since the epoch",
            self.files,
            if langs.is_empty() {
                "none".to_owned()
            } else {
                langs.join(", ")
            },
            self.definitions,
            self.references,
            edges.precise,
            edges.exact,
            edges.import,
            edges.package,
            edges.dispatch,
            edges.name,
            unresolved.ambiguous,
            unresolved.unknown,
            self.unresolved_share * 100.0,
            unresolved.external,
            self.index_path,
            self.index_bytes,
            self.last_update_ms,
        );
        match &self.precise {
            PreciseTier::Off(_) => format!("{text}\nprecise tier: off ([graph] precise = false)"),
            // Precise edges kept in the index from an earlier run's import, before this run's
            // indexers ran: said, so the counts above do not read as this run's doing.
            PreciseTier::Indexers(runs) if runs.is_empty() && edges.precise > 0 => format!(
                "{text}\nprecise tier:\n  no indexer has run yet in this run (each runs in the \
                 background once the index is open); the {} precise edges are kept from an \
                 earlier run's import",
                edges.precise
            ),
            PreciseTier::Indexers(runs) if runs.is_empty() => format!(
                "{text}\nprecise tier:\n  no indexer has run yet (each runs in the background \
                 once the index is open)"
            ),
            PreciseTier::Indexers(runs) => {
                let lines: Vec<String> = runs.iter().map(|(i, run)| run.line(*i)).collect();
                format!("{text}\nprecise tier:\n  {}", lines.join("\n  "))
            }
        }
    }
}

/// A definition `symbols` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolHit {
    /// The definition.
    #[serde(flatten)]
    pub symbol: SymbolRef,
    /// Its first line, trimmed.
    pub signature: String,
    /// Its file's language.
    pub language: Option<String>,
    /// Its PageRank in the whole tree.
    pub rank: f64,
}

/// `symbols`: definitions matching a name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolsReport {
    /// The name looked for.
    pub query: String,
    /// Exact names, then prefixes, then substrings; by PageRank within each.
    pub results: Vec<SymbolHit>,
    /// How many matched in all.
    pub total: usize,
    /// Whether `results` is cut.
    pub truncated: bool,
    /// When nothing matched: indexed files with syntax errors (a definition there may be
    /// missing).
    pub files_with_syntax_errors: Option<usize>,
}

impl Render for SymbolsReport {
    fn render(&self) -> String {
        let query = &self.query;
        let unparsed = self.files_with_syntax_errors.unwrap_or(0);
        let mut lines = vec![if self.total == 0 && unparsed > 0 {
            format!(
                "no definitions match `{query}` among those indexed; {unparsed} indexed file(s) have syntax errors, and a definition where a file did not parse is not indexed"
            )
        } else if self.total == 0 {
            format!("no definitions match `{query}`")
        } else {
            format!(
                "definitions matching `{query}`: {} (exact names, then prefixes, then substrings; by PageRank within each)",
                shown(self.results.len(), self.total)
            )
        }];
        for hit in &self.results {
            lines.push(format!("  {}  {}", hit.symbol.text(), hit.signature));
        }
        lines.join("\n")
    }
}

/// A definition in an outline, with the ones inside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutlineNode {
    /// The name as declared.
    pub name: String,
    /// Its name after those of the enclosing definitions.
    pub qualified_name: String,
    /// What it is.
    pub kind: DefKind,
    /// The line of its name.
    pub line: u32,
    /// Its first line (decorators and comments that belong to it included).
    pub start_line: u32,
    /// Its last line.
    pub end_line: u32,
    /// Its first line, trimmed.
    pub signature: String,
    /// The enclosing definition's qualified name (which may be in another file: a Go
    /// method's type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The definitions inside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<OutlineNode>,
}

/// `outline`: a file's definitions, nested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutlineReport {
    /// The file, relative to the root.
    pub file: String,
    /// Its outermost definitions.
    pub definitions: Vec<OutlineNode>,
    /// How many definitions it has in all.
    pub total: usize,
    /// Whether the list is cut (outer definitions are kept first).
    pub truncated: bool,
}

impl OutlineReport {
    /// Every listed node with its depth (an outermost one with a parent elsewhere is one
    /// deep), in file order; without recursion.
    fn nodes(&self) -> Vec<(usize, &OutlineNode)> {
        let mut out = Vec::new();
        let mut stack: Vec<(usize, &OutlineNode)> = self
            .definitions
            .iter()
            .rev()
            .map(|node| (usize::from(node.parent.is_some()), node))
            .collect();
        while let Some((depth, node)) = stack.pop() {
            out.push((depth, node));
            stack.extend(node.children.iter().rev().map(|child| (depth + 1, child)));
        }
        out
    }
}

impl Render for OutlineReport {
    fn render(&self) -> String {
        let nodes = self.nodes();
        if nodes.is_empty() {
            return format!(
                "outline of {}: no definitions indexed (not a file of a language with symbols, or empty)",
                self.file
            );
        }
        let mut lines = vec![format!(
            "outline of {}: {} definitions ({})",
            self.file,
            self.total,
            shown(nodes.len(), self.total)
        )];
        for (depth, node) in nodes {
            lines.push(format!(
                "{}{} {}  L{}-{}: {}",
                "  ".repeat(depth + 1),
                node.kind.as_str(),
                node.name,
                node.start_line,
                node.end_line,
                node.signature
            ));
        }
        lines.join("\n")
    }
}

/// A place that calls the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallSite {
    /// The file, relative to the root.
    pub path: String,
    /// The line of the call.
    pub line: u32,
    /// That line, trimmed (at most 160 characters).
    pub text: String,
    /// The definition the call is in (none: top-level code).
    pub from: Option<SymbolRef>,
    /// The confidence of the edge (0 to 1).
    pub confidence: f64,
    /// How the edge was resolved.
    pub rung: Rung,
    /// Whether the edge is a unique-name guess.
    pub name_guessed: bool,
    /// `verify: true`: the server's verdict.
    #[serde(flatten)]
    pub verified: Verified,
}

/// `callers`: the call sites of a definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallersReport {
    /// The definition asked about.
    pub target: SignedSymbol,
    /// Its call sites.
    pub callers: Vec<CallSite>,
    /// How many in all.
    pub total: usize,
    /// Whether `callers` is cut.
    pub truncated: bool,
    /// Call sites resolved below `min_confidence`, not listed.
    pub below_floor: usize,
    /// The weakest rung kept.
    pub min_confidence: Rung,
    /// When nothing was found: indexed files with syntax errors (a call there may be
    /// missing).
    pub files_with_syntax_errors: Option<usize>,
}

impl CallersReport {
    fn verify_notes(&self) -> Vec<String> {
        self.callers
            .iter()
            .filter_map(|site| site.verified.note(&format!("{}:{}", site.path, site.line)))
            .collect()
    }
}

impl Render for CallersReport {
    fn render(&self) -> String {
        let floor = self.min_confidence.as_str();
        let mut text = vec![format!(
            "callers of {}: {} call site(s) ({}), edges at or above `{floor}`",
            self.target.symbol.text(),
            self.total,
            shown(self.callers.len(), self.total),
        )];
        for site in &self.callers {
            text.push(format!(
                "  {}:{} in {} {}: {}",
                site.path,
                site.line,
                site.from
                    .as_ref()
                    .map(|c| format!("{} {}", c.kind.as_str(), c.qualified_name))
                    .unwrap_or_else(|| "top-level code".into()),
                confidence_tag(site.rung),
                site.text
            ));
        }
        if self.below_floor > 0 {
            text.push(format!(
                "{} more call site(s) resolved below `{floor}` (name-guessed) are not listed; min_confidence: \"name\" lists them",
                self.below_floor,
            ));
        }
        if let Some(unparsed) = self.files_with_syntax_errors.filter(|n| *n > 0) {
            text.push(format!(
                "{unparsed} indexed file(s) have syntax errors, and a call where a file did not parse is not indexed"
            ));
        }
        text.join("\n")
    }
}

/// A call the definition makes, resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResolvedCall {
    /// The line of the call.
    pub line: u32,
    /// The name called.
    pub name: String,
    /// The receiver as written (`self`, `os`, …).
    pub receiver: Option<String>,
    /// What it calls.
    pub target: SymbolRef,
    /// How the edge was resolved.
    pub rung: Rung,
    /// The confidence of the edge (0 to 1).
    pub confidence: f64,
    /// Whether the edge is a unique-name guess.
    pub name_guessed: bool,
    /// Definitions that may run in its place (implementations, build alternatives).
    pub dispatch: Vec<SymbolRef>,
}

/// A call the definition makes that the index could not resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UnresolvedCall {
    /// The line of the call.
    pub line: u32,
    /// The name called.
    pub name: String,
    /// The receiver as written.
    pub receiver: Option<String>,
    /// Why it is not resolved.
    pub reason: String,
    /// The line, trimmed.
    pub text: String,
}

impl ResolvedCall {
    fn called(&self) -> String {
        called(self.receiver.as_deref(), &self.name)
    }
}

fn called(receiver: Option<&str>, name: &str) -> String {
    match receiver {
        Some(r) => format!("{r}.{name}"),
        None => name.to_owned(),
    }
}

/// `callees`: what a definition calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CalleesReport {
    /// The definition asked about.
    pub caller: SymbolRef,
    /// Its resolved calls.
    pub calls: Vec<ResolvedCall>,
    /// Its unresolved calls, with why.
    pub unresolved: Vec<UnresolvedCall>,
    /// How many calls in all.
    pub total: usize,
    /// Whether the lists are cut.
    pub truncated: bool,
}

impl Render for CalleesReport {
    fn render(&self) -> String {
        let listed = self.calls.len() + self.unresolved.len();
        let mut text = vec![format!(
            "calls made by {}: {} resolved, {} unresolved ({} calls)",
            self.caller.text(),
            self.calls.len(),
            self.unresolved.len(),
            shown(listed, self.total)
        )];
        for call in &self.calls {
            text.push(format!(
                "  L{} {} -> {} {}",
                call.line,
                call.called(),
                call.target.text(),
                confidence_tag(call.rung)
            ));
            for d in &call.dispatch {
                text.push(format!(
                    "      may run {} {}",
                    d.text(),
                    confidence_tag(Rung::Dispatch)
                ));
            }
        }
        if !self.unresolved.is_empty() {
            text.push("unresolved:".into());
            for call in &self.unresolved {
                text.push(format!(
                    "  L{} {}: {}",
                    call.line,
                    called(call.receiver.as_deref(), &call.name),
                    call.reason
                ));
            }
        }
        text.join("\n")
    }
}

/// A definition that depends on the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dependent {
    /// The definition.
    #[serde(flatten)]
    pub symbol: SymbolRef,
    /// Its first line.
    pub start_line: u32,
    /// Its last line.
    pub end_line: u32,
    /// The weakest edge on its path from the target (0 to 1).
    pub confidence: f64,
    /// Whether it is in a test file.
    pub test: bool,
    /// `verify: true`: the server's verdict.
    #[serde(flatten)]
    pub verified: Verified,
}

/// The dependents at one depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImpactLevel {
    /// Steps from the target.
    pub depth: usize,
    /// How many dependents are at this depth (listed or not).
    pub count: usize,
    /// The listed ones.
    pub dependents: Vec<Dependent>,
}

/// A file with dependents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImpactFile {
    /// The file, relative to the root.
    pub path: String,
    /// How many dependents it holds.
    pub dependents: usize,
    /// Whether it is a test file.
    pub test: bool,
}

/// Top-level code (outside any definition) that uses a dependent or the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TopLevelUse {
    /// The file.
    pub path: String,
    /// The line.
    pub line: u32,
}

/// `impact`: what depends on a definition, transitively.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImpactReport {
    /// The definition asked about.
    pub target: SymbolRef,
    /// How many steps were followed.
    pub depth: usize,
    /// The listed dependents by depth.
    pub levels: Vec<ImpactLevel>,
    /// The files with a dependent or a top-level use, by path: the first `max_results`
    /// (a hub of a large tree has tens of thousands).
    pub files: Vec<ImpactFile>,
    /// How many files have a dependent or a top-level use.
    pub files_total: usize,
    /// Those that are test files: the first `max_results`.
    pub tests: Vec<String>,
    /// How many of the files are test files.
    pub tests_total: usize,
    /// Top-level code using them, by place: the first `max_results`.
    pub top_level_uses: Vec<TopLevelUse>,
    /// How many places of top-level code use them.
    pub top_level_total: usize,
    /// Dependents in all.
    pub total: usize,
    /// Dependents listed.
    pub listed: usize,
    /// Whether the list is cut.
    pub truncated: bool,
    /// When nothing was found: indexed files with syntax errors.
    pub files_with_syntax_errors: Option<usize>,
    /// Whether more dependents lie beyond `depth`.
    pub depth_cut: bool,
    /// The weakest rung kept.
    pub min_confidence: Rung,
}

impl ImpactReport {
    fn verify_notes(&self) -> Vec<String> {
        self.levels
            .iter()
            .flat_map(|level| {
                level.dependents.iter().filter_map(move |d| {
                    d.verified.note(&format!(
                        "depth {} {} ({}:{})",
                        level.depth, d.symbol.qualified_name, d.symbol.path, d.symbol.line
                    ))
                })
            })
            .collect()
    }
}

impl Render for ImpactReport {
    fn render(&self) -> String {
        let mut text = vec![format!(
            "impact of {}: {} dependent definition(s) in {} file(s) ({} test file(s)) within depth {}, edges at or above `{}`{}",
            self.target.text(),
            self.total,
            self.files_total,
            self.tests_total,
            self.depth,
            self.min_confidence.as_str(),
            if self.depth_cut { "; more lie beyond that depth" } else { "" }
        )];
        for level in &self.levels {
            text.push(format!("depth {} ({}):", level.depth, level.count));
            for d in &level.dependents {
                text.push(format!(
                    "  {}{}{}",
                    d.symbol.text(),
                    if d.test { " [test]" } else { "" },
                    if d.confidence < Rung::Dispatch.confidence() {
                        " [NAME-GUESSED]"
                    } else if d.confidence < Rung::Package.confidence() {
                        " [via dispatch]"
                    } else {
                        ""
                    }
                ));
            }
        }
        if self.listed < self.total {
            text.push(format!("listed {}", shown(self.listed, self.total)));
        }
        if self.top_level_total > 0 {
            let places: Vec<String> = self
                .top_level_uses
                .iter()
                .take(20)
                .map(|u| format!("{}:{}", u.path, u.line))
                .collect();
            text.push(format!(
                "top-level code using them: {}{}",
                places.join(", "),
                first_of(self.top_level_total, places.len())
            ));
        }
        if self.files_total > 0 {
            let files: Vec<&str> = self
                .files
                .iter()
                .take(30)
                .map(|f| f.path.as_str())
                .collect();
            text.push(format!(
                "files: {}{}",
                files.join(", "),
                first_of(self.files_total, files.len())
            ));
        }
        // The tests to run after the change, by name: the files' list may not reach them.
        if self.tests_total > 0 {
            let tests: Vec<&str> = self.tests.iter().take(30).map(String::as_str).collect();
            text.push(format!(
                "test files: {}{}",
                tests.join(", "),
                first_of(self.tests_total, tests.len())
            ));
        }
        if let Some(unparsed) = self.files_with_syntax_errors.filter(|n| *n > 0) {
            text.push(format!(
                "{unparsed} indexed file(s) have syntax errors, and a use where a file did not parse is not indexed"
            ));
        }
        text.join("\n")
    }
}

/// ` (first N of TOTAL)` when a list of `total` is shown to `n`.
fn first_of(total: usize, n: usize) -> String {
    if total > n {
        format!(" (first {n} of {total})")
    } else {
        String::new()
    }
}

/// A definition on the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MapDefinition {
    /// The definition.
    #[serde(flatten)]
    pub symbol: SymbolRef,
    /// Its first line.
    pub start_line: u32,
    /// Its first line, trimmed.
    pub signature: String,
    /// Its PageRank (personalised to the focus).
    pub rank: f64,
}

impl MapDefinition {
    /// `  L321 Request.__init__: def __init__(` (the qualified name when it says more).
    pub(crate) fn line(&self) -> String {
        cc_graph::views::repo_map::line_of(
            &self.symbol.name,
            &self.symbol.qualified_name,
            self.start_line,
            &self.signature,
        )
    }
}

/// A file on the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MapFile {
    /// The file, relative to the root.
    pub path: String,
    /// Its definitions shown, in file order.
    pub definitions: Vec<MapDefinition>,
}

/// `map`: the most important definitions within a token budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MapReport {
    /// Files in order of their best definition.
    pub files: Vec<MapFile>,
    /// Files shown.
    pub files_shown: usize,
    /// Indexed files.
    pub files_total: usize,
    /// Definitions shown.
    pub definitions_shown: usize,
    /// The budget asked for.
    pub budget_tokens: usize,
    /// The tokens the text takes.
    pub tokens: usize,
    /// How tokens are counted.
    pub token_count: String,
    /// The files the ranking was centred on.
    pub focus: Vec<String>,
}

impl Render for MapReport {
    fn render(&self) -> String {
        let mut text = vec![cc_graph::views::repo_map::header(
            self.budget_tokens,
            &self.focus,
        )];
        for file in &self.files {
            text.push(format!("{}:", file.path));
            text.extend(file.definitions.iter().map(MapDefinition::line));
        }
        text.push(format!(
            "{} of {} files and {} definitions shown; about {} tokens",
            self.files_shown, self.files_total, self.definitions_shown, self.tokens
        ));
        text.join("\n")
    }
}

/// How the index was opened by this call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IndexOpened {
    /// Whether it was built from nothing.
    pub rebuilt: bool,
    /// Files looked at.
    pub files_seen: usize,
    /// Files read and extracted.
    pub extracted: usize,
    /// Files over the size cap, not indexed.
    pub too_large: usize,
}

/// How current the index was: part of every `graph` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IndexReport {
    /// Every file changed on disk is reflected.
    pub fresh: bool,
    /// Files changed on disk the index does not reflect (their update failed).
    pub stale_files: Vec<String>,
    /// Indexed files.
    pub files: usize,
    /// Files changed on disk, re-read by this call.
    pub updated: Vec<String>,
    /// Indexed files gone from disk, dropped from the index by this call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// Set when this call opened (or built) the index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<IndexOpened>,
    /// Why the update failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why every file was compared with the disk (the watcher could not say what changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rescanned: Option<String>,
    /// What ignore rules kept out of the index (when this call built it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out_by_ignore: Option<LeftOutReport>,
    /// How precise the edges are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precise: Option<PreciseState>,
    /// An indexer refining the edges now: this answer is tree-sitter's where files are not
    /// yet precise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precise_running: Option<String>,
}

impl Render for IndexReport {
    fn render(&self) -> String {
        let mut line = format!("index: {} files", self.files);
        if let Some(opened) = &self.opened {
            if opened.rebuilt {
                line.push_str(&format!(", built now ({} extracted)", opened.extracted));
            } else {
                line.push_str(&format!(
                    ", opened now ({} of {} files re-read)",
                    opened.extracted, opened.files_seen
                ));
            }
            if opened.too_large > 0 {
                line.push_str(&format!(", {} too large to index", opened.too_large));
            }
        }
        for taken in taken_in(&self.updated, &self.removed, "now") {
            line.push_str(", ");
            line.push_str(&taken);
        }
        if let Some(why) = &self.rescanned {
            line.push_str(&format!(" ({why})"));
        }
        if self.stale_files.is_empty() && self.error.is_none() {
            line.push_str(", fresh");
        } else {
            line.push_str(&format!(
                ", NOT fresh: {} file(s) changed on disk are not reflected ({}){}",
                self.stale_files.len(),
                first_few(&self.stale_files, 5),
                self.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ));
        }
        if let Some(left_out) = &self.left_out_by_ignore {
            line.push_str(&format!(
                "; {}",
                left_out.line("of indexed languages are not in the index")
            ));
        }
        if let Some(precise) = &self.precise {
            line.push_str(&format!("; {}", precise.describe()));
        }
        if let Some(note) = &self.precise_running {
            line.push_str(&format!("; {note}"));
        }
        line
    }
}

/// What a call took in from disk before it answered (or failed), each a phrase: the files
/// `updated` (re-read) and `removed` (dropped), `when` ("now", "first").
pub(crate) fn taken_in(updated: &[String], removed: &[String], when: &str) -> Vec<String> {
    let mut taken = Vec::new();
    if !updated.is_empty() {
        taken.push(format!(
            "{} file(s) changed on disk re-read {when}: {}",
            updated.len(),
            first_few(updated, 5)
        ));
    }
    if !removed.is_empty() {
        taken.push(format!(
            "{} file(s) gone from disk dropped {when}: {}",
            removed.len(),
            first_few(removed, 5)
        ));
    }
    taken
}

fn first_few(items: &[String], n: usize) -> String {
    let mut s = items.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > n {
        s.push_str(&format!(", … {} more", items.len() - n));
    }
    s
}

impl Render for GraphAnswer {
    fn render(&self) -> String {
        match self {
            GraphAnswer::Status(r) => r.render(),
            GraphAnswer::Symbols(r) => r.render(),
            GraphAnswer::Outline(r) => r.render(),
            GraphAnswer::Callers(r) => r.render(),
            GraphAnswer::Callees(r) => r.render(),
            GraphAnswer::Impact(r) => r.render(),
            GraphAnswer::Map(r) => r.render(),
        }
    }
}

impl Render for GraphReport {
    fn render(&self) -> String {
        let mut text = format!("{}\n{}", self.answer.render(), self.index.render());
        if let Some(v) = &self.verification {
            text.push_str(&format!(
                "\nverified through the language server's references: {} confirmed, {} refuted, {} unverifiable",
                v.confirmed, v.refuted, v.unverifiable
            ));
            let notes = match &self.answer {
                GraphAnswer::Callers(r) => r.verify_notes(),
                GraphAnswer::Impact(r) => r.verify_notes(),
                _ => Vec::new(),
            };
            for note in notes {
                text.push('\n');
                text.push_str(&note);
            }
        }
        text
    }
}

/// `[NAME-GUESSED 0.3]` or `[import 0.9]`.
fn confidence_tag(rung: Rung) -> String {
    if rung == Rung::Name {
        format!("[NAME-GUESSED {}]", rung.confidence())
    } else {
        format!("[{} {}]", rung.as_str(), rung.confidence())
    }
}

/// "first N of TOTAL" when the list was cut, else "all N".
pub(crate) fn shown(n: usize, total: usize) -> String {
    if n < total {
        format!("first {n} of {total}")
    } else {
        format!("all {total}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::readme::{properties, top_level_keys};

    fn status(precise_edges: usize) -> StatusReport {
        StatusReport {
            files: 2,
            files_per_language: BTreeMap::from([("typescript".to_owned(), 2)]),
            files_with_syntax_errors: 0,
            definitions: 3,
            references: 4,
            edges: EdgeCounts {
                precise: precise_edges,
                exact: 1,
                import: 0,
                package: 0,
                dispatch: 0,
                name: 0,
            },
            unresolved: UnresolvedCounts {
                ambiguous: 0,
                unknown: 0,
                external: 0,
            },
            unresolved_share: 0.0,
            index_path: "/cache/index.sqlite".into(),
            index_bytes: 4096,
            last_update_ms: 1,
            precise: PreciseTier::Indexers(BTreeMap::new()),
        }
    }

    /// Precise edges counted before this run's indexers ran are said to be an earlier run's.
    #[test]
    fn precise_edges_from_an_earlier_run_are_said_to_be() {
        let kept = status(3).render();
        assert!(
            kept.ends_with(
                "no indexer has run yet in this run (each runs in the background once the index \
                 is open); the 3 precise edges are kept from an earlier run's import"
            ),
            "{kept}"
        );
        let none = status(0).render();
        assert!(
            none.ends_with(
                "no indexer has run yet (each runs in the background once the index is open)"
            ),
            "{none}"
        );
    }

    /// The README's graph table lists, per action, every field of that action's report and no
    /// other, and its sentence on `index` and `verification` those of theirs.
    #[test]
    fn the_readme_lists_the_fields_of_each_report() {
        let readme = include_str!("../../../README.md");
        let table = &readme[readme.find("### Code graph").expect("the graph section")..];
        let cell = |action: &str| {
            let row = table
                .lines()
                .find(|l| l.contains(&format!("`{action}`")) && l.starts_with('|'))
                .unwrap_or_else(|| panic!("no row for {action}"));
            let result = row.rsplit(" | `").next().unwrap_or_default();
            top_level_keys(result)
        };
        let expected = [
            ("status", properties::<StatusReport>()),
            ("symbols", properties::<SymbolsReport>()),
            ("outline", properties::<OutlineReport>()),
            ("callers", properties::<CallersReport>()),
            ("callees", properties::<CalleesReport>()),
            ("impact", properties::<ImpactReport>()),
            ("map", properties::<MapReport>()),
        ];
        for (action, fields) in expected {
            assert!(!fields.is_empty(), "{action}");
            assert_eq!(cell(action), fields, "the README's `{action}` row");
        }
        let after = |marker: &str| {
            let at = table.find(marker).unwrap_or_else(|| panic!("no {marker}"));
            top_level_keys(&table[at + marker.len() - 1..])
        };
        assert_eq!(after("`index: {"), properties::<IndexReport>());
        assert_eq!(after("`verification: {"), properties::<Verification>());
    }
}
