//! The `graph` tool: status, symbols, outline, callers, callees, impact, map.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use cc_graph::views::{outline, search};
use cc_graph::{DefKind, Graph, Rung, Symbol};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::position::{relative_file, target};
use super::render::{index_report, is_test, Lines};
use super::{index_error, GraphIndex};
use crate::error::ToolError;
use crate::report::graph::{
    CallSite, CalleesReport, CallersReport, Dependent, EdgeCounts, GraphAnswer, GraphReport,
    ImpactFile, ImpactLevel, ImpactReport, MapDefinition, MapFile, MapReport, OutlineNode,
    OutlineReport, PreciseOff, PreciseTier, ResolvedCall, SignedSymbol, StatusReport, SymbolHit,
    SymbolRef, SymbolsReport, TopLevelUse, UnresolvedCall, UnresolvedCounts, Verified,
};
use crate::tier::Tier;
use crate::tool::{parse_args, report_output, schema_for, CallContext, Tool, ToolOutput};

const DESCRIPTION: &str = "The code graph of the workspace (tree-sitter definitions, calls and \
type uses; every edge records how it was resolved: precise (a compiler-grade indexer such as \
scip-typescript, run in the background: answers never wait for it and say which files are not \
yet precise), exact scope, import, same package, dispatch (a Go interface's implementations, a \
C function's build alternatives), or a unique-name guess that is left out by default). Ask what is here and what depends on it before \
you edit. Actions: `status`; `symbols` {query, kind?, language?, max_results? (100)}; \
`outline` {file, max_results? (200)}; `callers` {file, line, symbol, min_confidence? (dispatch), max_results? (50), \
verify?}; `callees` {file, line, symbol, max_results? (100)}; `impact` {file, line, symbol, depth? (3), \
min_confidence?, max_results? (100), verify?}; `map` {budget_tokens? (1024), focus? [files]}. \
Positions are a line and the symbol as written on it, as in `lsp`. The index is built on the \
first call, kept up to date by this run's writes, and re-reads files changed on disk on every \
call; each result says how fresh it is.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Action {
    /// Files per language, definitions, edges by how they were resolved, the unresolved
    /// share, where the index is and how fresh.
    Status,
    /// Definitions matching `query`: exact names, then prefixes, then substrings; within
    /// each, by PageRank (first 100).
    Symbols,
    /// The definitions of `file`, nested, with lines and signature lines.
    Outline,
    /// The call sites of the definition at `line`/`symbol` (first 50).
    Callers,
    /// What the definition at `line`/`symbol` calls: resolved calls with their targets, and
    /// the unresolved ones with why.
    Callees,
    /// What depends on the definition at `line`/`symbol`, transitively, by depth: the
    /// definitions, their files, which are tests.
    Impact,
    /// The workspace's files and most important definitions (PageRank, personalised to
    /// `focus`), as an outline that fits `budget_tokens`.
    Map,
}

/// The weakest way of resolving an edge a result keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Floor {
    /// Same scope, `self`/receiver, or a receiver of a type known in the function.
    Exact,
    /// Through an import resolved to a file.
    Import,
    /// Same package, module or namespace.
    Package,
    /// A definition that may run in place of the call's target: an implementation of a Go
    /// interface method, one of several definitions of a C function (the default).
    Dispatch,
    /// The only definition of that name in the workspace: a guess.
    Name,
}

impl Floor {
    fn rung(self) -> Rung {
        match self {
            Floor::Exact => Rung::Exact,
            Floor::Import => Rung::Import,
            Floor::Package => Rung::Package,
            Floor::Dispatch => Rung::Dispatch,
            Floor::Name => Rung::Name,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GraphArgs {
    /// What to do.
    action: Action,
    /// `symbols`: the name to look for (case-insensitive).
    #[serde(default)]
    query: Option<String>,
    /// `symbols`: only this kind (function, method, class, struct, enum, interface, trait,
    /// type_alias, module, constant, variable, field, macro).
    #[serde(default)]
    kind: Option<String>,
    /// `symbols`: only this language (`python`, `go`, `typescript`, …).
    #[serde(default)]
    language: Option<String>,
    /// How many items to list (symbols 100, outline 200, callers 50, callees 100, impact
    /// 100).
    #[serde(default)]
    max_results: Option<usize>,
    /// File path, relative to the workspace root.
    #[serde(default)]
    file: Option<String>,
    /// 1-based line of the symbol.
    #[serde(default)]
    line: Option<usize>,
    /// The symbol as it appears on that line (its definition, or a use the graph resolved).
    #[serde(default)]
    symbol: Option<String>,
    /// `callers`, `callees`, `impact`: the weakest edge kept (default `dispatch`; `name`
    /// adds unique-name guesses).
    #[serde(default)]
    min_confidence: Option<Floor>,
    /// `impact`: how many steps of dependents (default 3, at most 10).
    #[serde(default)]
    depth: Option<usize>,
    /// `map`: the size of the outline in tokens (characters / 4; default 1024, at most
    /// 16384).
    #[serde(default)]
    budget_tokens: Option<usize>,
    /// `map`: files to centre the ranking on.
    #[serde(default)]
    focus: Option<Vec<String>>,
    /// `callers`, `impact`: confirm each edge through the language server's references.
    #[serde(default)]
    verify: Option<bool>,
}

/// The `graph` tool.
#[derive(Debug)]
pub struct GraphTool {
    index: Arc<GraphIndex>,
}

impl GraphTool {
    /// The tool over `index`.
    pub fn new(index: Arc<GraphIndex>) -> Self {
        GraphTool { index }
    }
}

#[async_trait]
impl Tool for GraphTool {
    fn name(&self) -> &str {
        "graph"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        schema_for::<GraphArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<GraphReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: GraphArgs = parse_args(args)?;
        let verify = args.verify == Some(true);
        if verify && !matches!(args.action, Action::Callers | Action::Impact) {
            return Err(ToolError::invalid_arguments(
                "`verify` applies to `callers` and `impact`",
            ));
        }
        let index = self.index.clone();
        let mut report = self
            .index
            .with(
                ctx.progress_sink(),
                Some(ctx.cancellation().flag()),
                move |graph, checked| {
                    let answer = answer(&index, graph, &args)?;
                    let freshness = graph.freshness();
                    Ok(GraphReport {
                        answer,
                        index: index_report(&freshness, checked, index.precise_note()),
                        verification: None,
                    })
                },
            )
            .await?;
        // The graph is released: the server is asked now.
        if verify {
            report.verification = match &mut report.answer {
                GraphAnswer::Callers(callers) => Some(super::verify::callers(ctx, callers).await),
                GraphAnswer::Impact(impact) => Some(super::verify::impact(ctx, impact).await),
                _ => None,
            };
        }
        report_output(&report)
    }
}

fn floor(args: &GraphArgs) -> (Floor, f64) {
    let floor = args.min_confidence.unwrap_or(Floor::Dispatch);
    (floor, floor.rung().confidence())
}

fn answer(
    index: &GraphIndex,
    graph: &mut Graph,
    args: &GraphArgs,
) -> Result<GraphAnswer, ToolError> {
    let root = index.root();
    Ok(match args.action {
        Action::Status => GraphAnswer::Status(status(index, graph)?),
        Action::Symbols => GraphAnswer::Symbols(symbols(graph, args)?),
        Action::Outline => {
            let file = args
                .file
                .as_deref()
                .ok_or_else(|| ToolError::invalid_arguments("`outline` needs `file`"))?;
            GraphAnswer::Outline(outline(
                graph,
                &relative_file(root, file)?,
                args.max_results.unwrap_or(200),
            )?)
        }
        Action::Callers | Action::Callees | Action::Impact => {
            let (floor, min) = floor(args);
            let target = target(
                graph,
                root,
                args.file.as_deref(),
                args.line,
                args.symbol.as_deref(),
                min,
            )?;
            match args.action {
                Action::Callers => GraphAnswer::Callers(callers(
                    graph,
                    root,
                    target,
                    floor,
                    args.max_results.unwrap_or(50),
                )?),
                Action::Callees => GraphAnswer::Callees(callees(
                    graph,
                    root,
                    target,
                    min,
                    args.max_results.unwrap_or(100),
                )?),
                _ => GraphAnswer::Impact(impact(
                    graph,
                    target,
                    args.depth.unwrap_or(3).clamp(1, 10),
                    floor,
                    args.max_results.unwrap_or(100),
                )?),
            }
        }
        Action::Map => {
            let mut focus = Vec::new();
            for file in args.focus.iter().flatten() {
                focus.push(relative_file(root, file)?);
            }
            GraphAnswer::Map(map(
                graph,
                focus,
                args.budget_tokens.unwrap_or(1024).clamp(64, 16384),
            )?)
        }
    })
}

fn status(index: &GraphIndex, graph: &Graph) -> Result<StatusReport, ToolError> {
    let stats = graph.stats().map_err(index_error)?;
    let languages = graph.files_per_language().map_err(index_error)?;
    let unresolved = stats.ambiguous + stats.unknown;
    let share = if stats.references == 0 {
        0.0
    } else {
        unresolved as f64 / stats.references as f64
    };
    Ok(StatusReport {
        files: stats.files,
        files_per_language: languages.into_iter().collect(),
        files_with_syntax_errors: stats.files_with_syntax_errors,
        definitions: stats.definitions,
        references: stats.references,
        edges: EdgeCounts {
            precise: stats.precise,
            exact: stats.exact,
            import: stats.import,
            package: stats.package,
            dispatch: stats.dispatch,
            name: stats.name,
        },
        unresolved: UnresolvedCounts {
            ambiguous: stats.ambiguous,
            unknown: stats.unknown,
            external: stats.external,
        },
        unresolved_share: (share * 1000.0).round() / 1000.0,
        index_path: graph.index_path().display().to_string(),
        index_bytes: stats.index_bytes,
        last_update_ms: graph.freshness().checked_at_ms,
        precise: match index.precise_report() {
            Some(runs) => PreciseTier::Indexers(runs),
            None => PreciseTier::Off(PreciseOff::Off),
        },
    })
}

fn symbols(graph: &Graph, args: &GraphArgs) -> Result<SymbolsReport, ToolError> {
    let query = args
        .query
        .as_deref()
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| ToolError::invalid_arguments("`symbols` needs `query`"))?;
    let kind = match args.kind.as_deref() {
        None => None,
        Some(k) => Some(DefKind::parse(k).ok_or_else(|| {
            ToolError::invalid_arguments(format!(
                "unknown kind `{k}`; use one of: {}",
                DefKind::ALL.map(DefKind::as_str).join(", ")
            ))
        })?),
    };
    let language = match args.language.as_deref() {
        None => None,
        Some(l) => Some(
            cc_languages::lookup(l)
                .map_err(|e| ToolError::invalid_arguments(e.to_string()))?
                .name,
        ),
    };
    let filter = search::Filter { kind, language };
    let limit = args.max_results.unwrap_or(100);
    let found = graph.search(query, &filter, limit).map_err(index_error)?;
    let results = found
        .hits
        .iter()
        .map(|hit| SymbolHit {
            symbol: (&hit.symbol).into(),
            signature: hit.symbol.signature.clone(),
            language: search::language_of(&hit.symbol.path).map(str::to_owned),
            rank: (hit.rank * 1e6).round() / 1e6,
        })
        .collect();
    Ok(SymbolsReport {
        query: query.to_owned(),
        results,
        total: found.total,
        truncated: found.total > found.hits.len(),
        files_with_syntax_errors: found.files_with_syntax_errors,
    })
}

/// When an answer found nothing, how many indexed files have syntax errors.
fn unparsed_when_empty(graph: &Graph, found: usize) -> Result<Option<usize>, ToolError> {
    graph.unparsed_when_empty(found).map_err(index_error)
}

fn outline(graph: &Graph, rel: &str, limit: usize) -> Result<OutlineReport, ToolError> {
    let mut defs = graph.outline(rel).map_err(index_error)?.value;
    let total = defs.len();
    // Outer before inner: a kept definition's parent is kept too.
    defs.truncate(limit);
    Ok(OutlineReport {
        file: rel.to_owned(),
        definitions: nest(&defs),
        total,
        truncated: total > defs.len(),
    })
}

/// The outline's tree, as [`cc_graph::views::outline`] nests it.
fn nest(defs: &[Symbol]) -> Vec<OutlineNode> {
    outline::nest_with(
        defs,
        |d| OutlineNode {
            name: d.name.clone(),
            qualified_name: d.qualified_name.clone(),
            kind: d.kind,
            line: d.line,
            start_line: d.start_line,
            end_line: d.end_line,
            signature: d.signature.clone(),
            parent: d.parent.clone(),
            children: Vec::new(),
        },
        |node| &mut node.children,
    )
}

fn callers(
    graph: &Graph,
    root: &crate::WorkspaceRoot,
    target: Symbol,
    floor: Floor,
    limit: usize,
) -> Result<CallersReport, ToolError> {
    // Only the listed sites' callers are read in full.
    let answer = graph
        .callers_signing(target.id, floor.rung().confidence(), limit)
        .map_err(index_error)?
        .value;
    let total = answer.sites.len();
    let mut lines_of = Lines::new(root);
    let callers = answer
        .sites
        .iter()
        .take(limit)
        .map(|site| CallSite {
            path: site.path.clone(),
            line: site.line,
            text: lines_of.get(&site.path, site.line),
            from: site.caller.as_ref().map(SymbolRef::from),
            confidence: site.confidence,
            rung: site.rung,
            name_guessed: site.rung == Rung::Name,
            verified: Verified::default(),
        })
        .collect();
    let unparsed = unparsed_when_empty(graph, total + answer.below_floor)?;
    Ok(CallersReport {
        target: SignedSymbol {
            symbol: (&answer.target).into(),
            signature: answer.target.signature.clone(),
        },
        callers,
        total,
        truncated: total > limit,
        below_floor: answer.below_floor,
        min_confidence: floor.rung(),
        files_with_syntax_errors: unparsed,
    })
}

fn callees(
    graph: &Graph,
    root: &crate::WorkspaceRoot,
    caller: Symbol,
    min: f64,
    limit: usize,
) -> Result<CalleesReport, ToolError> {
    let mut calls = graph.callees(caller.id, min).map_err(index_error)?.value;
    let total = calls.len();
    calls.truncate(limit);
    let mut lines_of = Lines::new(root);
    let mut resolved = Vec::new();
    let mut unresolved = Vec::new();
    for c in &calls {
        match (&c.target, c.rung) {
            (Some(t), Some(rung)) => resolved.push(ResolvedCall {
                line: c.line,
                name: c.name.clone(),
                receiver: c.receiver.clone(),
                target: t.into(),
                rung,
                confidence: rung.confidence(),
                name_guessed: rung == Rung::Name,
                dispatch: c.dispatch.iter().map(SymbolRef::from).collect(),
            }),
            _ => unresolved.push(UnresolvedCall {
                line: c.line,
                name: c.name.clone(),
                receiver: c.receiver.clone(),
                reason: c.unresolved.clone().unwrap_or_else(|| "unknown".into()),
                text: lines_of.get(&caller.path, c.line),
            }),
        }
    }
    Ok(CalleesReport {
        caller: (&caller).into(),
        calls: resolved,
        unresolved,
        total,
        truncated: total > calls.len(),
    })
}

fn impact(
    graph: &Graph,
    target: Symbol,
    depth: usize,
    floor: Floor,
    limit: usize,
) -> Result<ImpactReport, ToolError> {
    // Only the listed dependents show their signature.
    let answer = graph
        .impact_signing(target.id, depth, floor.rung().confidence(), limit)
        .map_err(index_error)?
        .value;
    let total = answer.dependents.len();
    let mut files: BTreeMap<&str, usize> = BTreeMap::new();
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    for d in &answer.dependents {
        *files.entry(d.symbol.path.as_str()).or_default() += 1;
        *counts.entry(d.depth).or_default() += 1;
    }
    for (path, _) in &answer.top_level_uses {
        files.entry(path.as_str()).or_default();
    }
    let mut levels: Vec<ImpactLevel> = Vec::new();
    for d in answer.dependents.iter().take(limit) {
        if levels.last().is_none_or(|level| level.depth != d.depth) {
            levels.push(ImpactLevel {
                depth: d.depth,
                count: counts.get(&d.depth).copied().unwrap_or(0),
                dependents: Vec::new(),
            });
        }
        if let Some(level) = levels.last_mut() {
            level.dependents.push(Dependent {
                symbol: (&d.symbol).into(),
                start_line: d.symbol.start_line,
                end_line: d.symbol.end_line,
                confidence: d.confidence,
                test: is_test(&d.symbol.path),
                verified: Verified::default(),
            });
        }
    }
    let listed = total.min(limit);
    let nothing = total + answer.top_level_uses.len();
    let unparsed = unparsed_when_empty(graph, nothing)?;
    // Each list is cut like the dependents: a hub of a kernel-size tree has tens of
    // thousands of files, which no agent reads.
    let tests: Vec<&str> = files.keys().copied().filter(|p| is_test(p)).collect();
    Ok(ImpactReport {
        target: (&answer.target).into(),
        depth,
        levels,
        tests_total: tests.len(),
        tests: tests.into_iter().take(limit).map(str::to_owned).collect(),
        files_total: files.len(),
        files: files
            .iter()
            .take(limit)
            .map(|(path, n)| ImpactFile {
                path: path.to_string(),
                dependents: *n,
                test: is_test(path),
            })
            .collect(),
        top_level_total: answer.top_level_uses.len(),
        top_level_uses: answer
            .top_level_uses
            .iter()
            .take(limit)
            .map(|(path, line)| TopLevelUse {
                path: path.clone(),
                line: *line,
            })
            .collect(),
        total,
        listed,
        truncated: listed < total,
        files_with_syntax_errors: unparsed,
        depth_cut: answer.truncated,
        min_confidence: floor.rung(),
    })
}

fn map(graph: &Graph, focus: Vec<String>, budget: usize) -> Result<MapReport, ToolError> {
    let map = graph.repo_map(focus, budget).map_err(index_error)?;
    let files: Vec<MapFile> = map
        .files
        .into_iter()
        .map(|file| MapFile {
            path: file.path,
            definitions: file
                .definitions
                .iter()
                .map(|r| MapDefinition {
                    symbol: (&r.symbol).into(),
                    start_line: r.symbol.start_line,
                    signature: r.symbol.signature.clone(),
                    rank: (r.score * 1e6).round() / 1e6,
                })
                .collect(),
        })
        .collect();
    Ok(MapReport {
        files_shown: files.len(),
        definitions_shown: files.iter().map(|f| f.definitions.len()).sum(),
        files,
        files_total: map.files_total,
        budget_tokens: map.budget_tokens,
        tokens: map.tokens,
        token_count: "characters / 4, rounded up".into(),
        focus: map.focus,
    })
}
