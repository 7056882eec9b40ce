//! The `graph` tool: status, symbols, outline, callers, callees, impact, map.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use cc_graph::{DefKind, Graph, Rung, Symbol};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::position::{relative_file, target};
use super::render::{
    index_json, index_line, is_test, shown, symbol_json, symbol_text, tokens, Lines,
};
use super::{index_error, GraphIndex};
use crate::error::ToolError;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

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

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: GraphArgs = parse_args(args)?;
        let verify = args.verify == Some(true);
        let action = args.action;
        if verify && !matches!(action, Action::Callers | Action::Impact) {
            return Err(ToolError::invalid_arguments(
                "`verify` applies to `callers` and `impact`",
            ));
        }
        let index = self.index.clone();
        let (mut value, mut text) = self
            .index
            .with(
                ctx.progress_sink(),
                Some(ctx.cancellation().flag()),
                move |graph, checked| {
                    let (mut value, text) = answer(&index, graph, &args)?;
                    let freshness = graph.freshness();
                    value["index"] = index_json(&freshness, checked);
                    let mut text = format!("{text}\n{}", index_line(&freshness, checked));
                    if let Some(note) = index.precise_note() {
                        value["index"]["precise_running"] = Value::String(note.clone());
                        text.push_str(&format!("; {note}"));
                    }
                    Ok((value, text))
                },
            )
            .await?;
        // The graph is released: the server is asked now.
        match (verify, action) {
            (true, Action::Callers) => super::verify::callers(ctx, &mut value, &mut text).await,
            (true, Action::Impact) => super::verify::impact(ctx, &mut value, &mut text).await,
            _ => {}
        }
        if text.is_empty() {
            text = value.to_string();
        }
        Ok(ToolOutput::new(value).with_text(text))
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
) -> Result<(Value, String), ToolError> {
    let root = index.root();
    match args.action {
        Action::Status => status(index, graph),
        Action::Symbols => symbols(graph, args),
        Action::Outline => {
            let file = args
                .file
                .as_deref()
                .ok_or_else(|| ToolError::invalid_arguments("`outline` needs `file`"))?;
            outline(
                graph,
                &relative_file(root, file)?,
                args.max_results.unwrap_or(200),
            )
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
                Action::Callers => {
                    callers(graph, root, target, floor, args.max_results.unwrap_or(50))
                }
                Action::Callees => {
                    callees(graph, root, target, min, args.max_results.unwrap_or(100))
                }
                _ => impact(
                    graph,
                    target,
                    args.depth.unwrap_or(3).clamp(1, 10),
                    floor,
                    args.max_results.unwrap_or(100),
                ),
            }
        }
        Action::Map => {
            let mut focus = Vec::new();
            for file in args.focus.iter().flatten() {
                focus.push(relative_file(root, file)?);
            }
            map(
                graph,
                &focus,
                args.budget_tokens.unwrap_or(1024).clamp(64, 16384),
            )
        }
    }
}

fn status(index: &GraphIndex, graph: &Graph) -> Result<(Value, String), ToolError> {
    let stats = graph.stats().map_err(index_error)?;
    let languages = graph.files_per_language().map_err(index_error)?;
    let unresolved = stats.ambiguous + stats.unknown;
    let share = if stats.references == 0 {
        0.0
    } else {
        unresolved as f64 / stats.references as f64
    };
    let checked_at = graph.freshness().checked_at_ms;
    let value = json!({
        "action": "status",
        "files": stats.files,
        "files_per_language": languages.iter().map(|(l, n)| (l.clone(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "files_with_syntax_errors": stats.files_with_syntax_errors,
        "definitions": stats.definitions,
        "references": stats.references,
        "edges": {"precise": stats.precise, "exact": stats.exact, "import": stats.import, "package": stats.package, "dispatch": stats.dispatch, "name": stats.name},
        "unresolved": {"ambiguous": stats.ambiguous, "unknown": stats.unknown, "external": stats.external},
        "unresolved_share": (share * 1000.0).round() / 1000.0,
        "index_path": graph.index_path().display().to_string(),
        "index_bytes": stats.index_bytes,
        "last_update_ms": checked_at,
    });
    let langs: Vec<String> = languages.iter().map(|(l, n)| format!("{l} {n}")).collect();
    let text = format!(
        "code graph: {} files ({}), {} definitions, {} references\n\
         edges: {} precise, {} exact, {} import, {} package, {} dispatch, {} name-guessed (left out by default)\n\
         unresolved: {} ambiguous, {} unknown ({:.1}% of references); {} external\n\
         index: {} ({} bytes), compared with the disk at {} ms since the epoch",
        stats.files,
        if langs.is_empty() {
            "none".to_owned()
        } else {
            langs.join(", ")
        },
        stats.definitions,
        stats.references,
        stats.precise,
        stats.exact,
        stats.import,
        stats.package,
        stats.dispatch,
        stats.name,
        stats.ambiguous,
        stats.unknown,
        share * 100.0,
        stats.external,
        graph.index_path().display(),
        stats.index_bytes,
        checked_at,
    );
    let (value, text) = match index.precise_report() {
        Some((report, lines)) => {
            let mut value = value;
            value["precise"] = report;
            let lines = if lines.is_empty() {
                "no indexer has run yet (each runs in the background once the index is open)"
                    .to_owned()
            } else {
                lines.join("\n  ")
            };
            (value, format!("{text}\nprecise tier:\n  {lines}"))
        }
        None => {
            let mut value = value;
            value["precise"] = json!("off");
            (
                value,
                format!("{text}\nprecise tier: off ([graph] precise = false)"),
            )
        }
    };
    Ok((value, text))
}

fn language_of(path: &str) -> Option<&'static str> {
    cc_languages::for_path(std::path::Path::new(path)).map(|l| l.name)
}

fn symbols(graph: &Graph, args: &GraphArgs) -> Result<(Value, String), ToolError> {
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
    let limit = args.max_results.unwrap_or(100).max(1);
    let found = graph.symbols(query, 5000).map_err(index_error)?.value;
    // The kept ranks of the hits only (a kernel-size tree has millions of definitions).
    let ids: Vec<i64> = found.iter().map(|r| r.symbol.id).collect();
    let ranks = graph.rank_of(&ids).map_err(index_error)?;
    let mut hits: Vec<(f64, f64, Symbol)> = found
        .into_iter()
        .filter(|r| kind.is_none_or(|k| r.symbol.kind == k))
        .filter(|r| language.is_none_or(|l| language_of(&r.symbol.path) == Some(l)))
        .map(|r| {
            let tier = (r.score / 100.0).floor();
            let rank = ranks.get(&r.symbol.id).copied().unwrap_or(0.0);
            (tier, rank, r.symbol)
        })
        .collect();
    hits.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| b.1.total_cmp(&a.1))
            .then_with(|| a.2.path.cmp(&b.2.path))
            .then_with(|| a.2.line.cmp(&b.2.line))
    });
    let total = hits.len();
    hits.truncate(limit);
    // Nothing found is said with what could hide a definition: files that did not parse.
    let unparsed = unparsed_when_empty(graph, total)?;
    let mut lines = vec![if total == 0 && unparsed > 0 {
        format!(
            "no definitions match `{query}` among those indexed; {unparsed} indexed file(s) have syntax errors, and a definition where a file did not parse is not indexed"
        )
    } else if total == 0 {
        format!("no definitions match `{query}`")
    } else {
        format!(
            "definitions matching `{query}`: {} (exact names, then prefixes, then substrings; by PageRank within each)",
            shown(hits.len(), total)
        )
    }];
    let results: Vec<Value> = hits
        .iter()
        .map(|(_, rank, s)| {
            lines.push(format!("  {}  {}", symbol_text(s), s.signature));
            let mut v = symbol_json(s);
            v["signature"] = json!(s.signature);
            v["language"] = json!(language_of(&s.path));
            v["rank"] = json!((rank * 1e6).round() / 1e6);
            v
        })
        .collect();
    Ok((
        json!({
            "action": "symbols",
            "query": query,
            "results": results,
            "total": total,
            "truncated": total > hits.len(),
            "files_with_syntax_errors": (total == 0).then_some(unparsed),
        }),
        lines.join("\n"),
    ))
}

/// When an answer found nothing, how many indexed files have syntax errors: what is written
/// where a file did not parse is not indexed, so "nothing" may miss it (non-negotiable 7).
fn unparsed_when_empty(graph: &Graph, found: usize) -> Result<usize, ToolError> {
    if found > 0 {
        return Ok(0);
    }
    graph.files_with_syntax_errors().map_err(index_error)
}

fn outline(graph: &Graph, rel: &str, limit: usize) -> Result<(Value, String), ToolError> {
    let mut defs = graph.outline(rel).map_err(index_error)?.value;
    let total = defs.len();
    // Outer before inner: a kept definition's parent is kept too.
    defs.truncate(limit);
    let names: std::collections::HashSet<String> =
        defs.iter().map(|d| d.qualified_name.clone()).collect();
    // Nest without recursion: children come after their parent, so walking backwards every
    // node's children are complete when it is reached.
    let mut children: HashMap<String, Vec<Value>> = HashMap::new();
    let mut roots: Vec<Value> = Vec::new();
    for d in defs.iter().rev() {
        let mut node = json!({
            "name": d.name,
            "qualified_name": d.qualified_name,
            "kind": d.kind.as_str(),
            "line": d.line,
            "end_line": d.end_line,
            "signature": d.signature,
        });
        if let Some(mut kids) = children.remove(&d.qualified_name) {
            kids.reverse();
            node["children"] = Value::Array(kids);
        }
        match &d.parent {
            Some(p) if names.contains(p) => children.entry(p.clone()).or_default().push(node),
            _ => roots.push(node),
        }
    }
    roots.reverse();
    let mut lines = vec![format!(
        "outline of {rel}: {} definitions ({})",
        total,
        shown(defs.len(), total)
    )];
    let depth_of = |d: &Symbol| -> usize {
        let mut depth = 0;
        let mut parent = d.parent.clone();
        while let Some(p) = parent {
            depth += 1;
            if depth > 32 {
                break;
            }
            parent = defs
                .iter()
                .find(|o| o.qualified_name == p)
                .and_then(|o| o.parent.clone());
        }
        depth
    };
    for d in &defs {
        lines.push(format!(
            "{}{} {}  L{}-{}: {}",
            "  ".repeat(depth_of(d) + 1),
            d.kind.as_str(),
            d.name,
            d.start_line,
            d.end_line,
            d.signature
        ));
    }
    if defs.is_empty() {
        lines[0] = format!("outline of {rel}: no definitions indexed (not a file of a language with symbols, or empty)");
    }
    Ok((
        json!({"action": "outline", "file": rel, "definitions": roots, "total": total, "truncated": total > defs.len()}),
        lines.join("\n"),
    ))
}

fn confidence_tag(rung: Rung) -> String {
    if rung == Rung::Name {
        format!("[NAME-GUESSED {}]", rung.confidence())
    } else {
        format!("[{} {}]", rung.as_str(), rung.confidence())
    }
}

fn callers(
    graph: &Graph,
    root: &crate::WorkspaceRoot,
    target: Symbol,
    floor: Floor,
    limit: usize,
) -> Result<(Value, String), ToolError> {
    let answer = graph
        .callers(target.id, floor.rung().confidence())
        .map_err(index_error)?
        .value;
    let total = answer.sites.len();
    let mut lines_of = Lines::new(root);
    let mut text = vec![format!(
        "callers of {}: {} call site(s) ({}), edges at or above `{}`",
        symbol_text(&answer.target),
        total,
        shown(total.min(limit), total),
        floor.rung().as_str()
    )];
    let mut callers = Vec::new();
    for site in answer.sites.iter().take(limit) {
        let line_text = lines_of.get(&site.path, site.line);
        let from = site.caller.as_ref().map(symbol_json);
        text.push(format!(
            "  {}:{} in {} {}: {}",
            site.path,
            site.line,
            site.caller
                .as_ref()
                .map(|c| format!("{} {}", c.kind.as_str(), c.qualified_name))
                .unwrap_or_else(|| "top-level code".into()),
            confidence_tag(site.rung),
            line_text
        ));
        callers.push(json!({
            "path": site.path,
            "line": site.line,
            "text": line_text,
            "from": from,
            "confidence": site.confidence,
            "rung": site.rung.as_str(),
            "name_guessed": site.rung == Rung::Name,
        }));
    }
    if answer.below_floor > 0 {
        text.push(format!(
            "{} more call site(s) resolved below `{}` (name-guessed) are not listed; min_confidence: \"name\" lists them",
            answer.below_floor,
            floor.rung().as_str()
        ));
    }
    let unparsed = unparsed_when_empty(graph, total + answer.below_floor)?;
    if unparsed > 0 {
        text.push(format!(
            "{unparsed} indexed file(s) have syntax errors, and a call where a file did not parse is not indexed"
        ));
    }
    let mut target_json = symbol_json(&answer.target);
    target_json["signature"] = json!(answer.target.signature);
    Ok((
        json!({
            "action": "callers",
            "target": target_json,
            "callers": callers,
            "total": total,
            "truncated": total > limit,
            "below_floor": answer.below_floor,
            "min_confidence": floor.rung().as_str(),
            "files_with_syntax_errors": (total + answer.below_floor == 0).then_some(unparsed),
        }),
        text.join("\n"),
    ))
}

fn callees(
    graph: &Graph,
    root: &crate::WorkspaceRoot,
    caller: Symbol,
    min: f64,
    limit: usize,
) -> Result<(Value, String), ToolError> {
    let mut calls = graph.callees(caller.id, min).map_err(index_error)?.value;
    let total = calls.len();
    calls.truncate(limit);
    let mut lines_of = Lines::new(root);
    let mut resolved = Vec::new();
    let mut unresolved = Vec::new();
    let mut text_resolved = Vec::new();
    let mut text_unresolved = Vec::new();
    for c in &calls {
        let called = match &c.receiver {
            Some(r) => format!("{r}.{}", c.name),
            None => c.name.clone(),
        };
        match (&c.target, c.rung) {
            (Some(t), Some(rung)) => {
                text_resolved.push(format!(
                    "  L{} {called} -> {} {}",
                    c.line,
                    symbol_text(t),
                    confidence_tag(rung)
                ));
                for d in &c.dispatch {
                    text_resolved.push(format!(
                        "      may run {} {}",
                        symbol_text(d),
                        confidence_tag(Rung::Dispatch)
                    ));
                }
                resolved.push(json!({
                    "line": c.line,
                    "name": c.name,
                    "receiver": c.receiver,
                    "target": symbol_json(t),
                    "rung": rung.as_str(),
                    "confidence": rung.confidence(),
                    "name_guessed": rung == Rung::Name,
                    "dispatch": c.dispatch.iter().map(symbol_json).collect::<Vec<_>>(),
                }));
            }
            _ => {
                let why = c.unresolved.clone().unwrap_or_else(|| "unknown".into());
                text_unresolved.push(format!("  L{} {called}: {why}", c.line));
                unresolved.push(json!({
                    "line": c.line,
                    "name": c.name,
                    "receiver": c.receiver,
                    "reason": why,
                    "text": lines_of.get(&caller.path, c.line),
                }));
            }
        }
    }
    let mut text = vec![format!(
        "calls made by {}: {} resolved, {} unresolved ({} calls)",
        symbol_text(&caller),
        resolved.len(),
        unresolved.len(),
        shown(calls.len(), total)
    )];
    text.extend(text_resolved);
    if !text_unresolved.is_empty() {
        text.push("unresolved:".into());
        text.extend(text_unresolved);
    }
    Ok((
        json!({
            "action": "callees",
            "caller": symbol_json(&caller),
            "calls": resolved,
            "unresolved": unresolved,
            "total": total,
            "truncated": total > calls.len(),
        }),
        text.join("\n"),
    ))
}

fn impact(
    graph: &Graph,
    target: Symbol,
    depth: usize,
    floor: Floor,
    limit: usize,
) -> Result<(Value, String), ToolError> {
    let answer = graph
        .impact(target.id, depth, floor.rung().confidence())
        .map_err(index_error)?
        .value;
    let total = answer.dependents.len();
    let mut files: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &answer.dependents {
        *files.entry(d.symbol.path.as_str()).or_default() += 1;
    }
    for (path, _) in &answer.top_level_uses {
        files.entry(path.as_str()).or_default();
    }
    let tests: Vec<&str> = files.keys().copied().filter(|p| is_test(p)).collect();
    let mut levels: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    let mut text = vec![format!(
        "impact of {}: {} dependent definition(s) in {} file(s) ({} test file(s)) within depth {depth}, edges at or above `{}`{}",
        symbol_text(&answer.target),
        total,
        files.len(),
        tests.len(),
        floor.rung().as_str(),
        if answer.truncated { "; more lie beyond that depth" } else { "" }
    )];
    for d in &answer.dependents {
        *counts.entry(d.depth).or_default() += 1;
    }
    let mut listed = 0;
    let mut current = 0;
    for d in &answer.dependents {
        if listed >= limit {
            break;
        }
        if d.depth != current {
            current = d.depth;
            text.push(format!(
                "depth {current} ({}):",
                counts.get(&current).copied().unwrap_or(0)
            ));
        }
        listed += 1;
        let test = is_test(&d.symbol.path);
        text.push(format!(
            "  {}{}{}",
            symbol_text(&d.symbol),
            if test { " [test]" } else { "" },
            if d.confidence < Rung::Dispatch.confidence() {
                " [NAME-GUESSED]"
            } else if d.confidence < Rung::Package.confidence() {
                " [via dispatch]"
            } else {
                ""
            }
        ));
        let mut v = symbol_json(&d.symbol);
        v["start_line"] = json!(d.symbol.start_line);
        v["end_line"] = json!(d.symbol.end_line);
        v["confidence"] = json!(d.confidence);
        v["test"] = json!(test);
        levels.entry(d.depth).or_default().push(v);
    }
    if listed < total {
        text.push(format!("listed {}", shown(listed, total)));
    }
    if !answer.top_level_uses.is_empty() {
        let places: Vec<String> = answer
            .top_level_uses
            .iter()
            .take(20)
            .map(|(p, l)| format!("{p}:{l}"))
            .collect();
        text.push(format!(
            "top-level code using them: {}{}",
            places.join(", "),
            if answer.top_level_uses.len() > 20 {
                format!(" (first 20 of {})", answer.top_level_uses.len())
            } else {
                String::new()
            }
        ));
    }
    let file_list: Vec<String> = files.keys().take(30).map(|p| p.to_string()).collect();
    if !file_list.is_empty() {
        text.push(format!(
            "files: {}{}",
            file_list.join(", "),
            if files.len() > 30 {
                format!(" (first 30 of {})", files.len())
            } else {
                String::new()
            }
        ));
    }
    let nothing = total + answer.top_level_uses.len();
    let unparsed = unparsed_when_empty(graph, nothing)?;
    if unparsed > 0 {
        text.push(format!(
            "{unparsed} indexed file(s) have syntax errors, and a use where a file did not parse is not indexed"
        ));
    }
    let levels: Vec<Value> = levels
        .into_iter()
        .map(|(depth, dependents)| {
            json!({"depth": depth, "count": counts.get(&depth).copied().unwrap_or(0), "dependents": dependents})
        })
        .collect();
    let files_json: Vec<Value> = files
        .iter()
        .map(|(p, n)| json!({"path": p, "dependents": n, "test": is_test(p)}))
        .collect();
    Ok((
        json!({
            "action": "impact",
            "target": symbol_json(&answer.target),
            "depth": depth,
            "levels": levels,
            "files": files_json,
            "tests": tests,
            "top_level_uses": answer.top_level_uses.iter().map(|(p, l)| json!({"path": p, "line": l})).collect::<Vec<_>>(),
            "total": total,
            "listed": listed,
            "truncated": listed < total,
            "files_with_syntax_errors": (nothing == 0).then_some(unparsed),
            "depth_cut": answer.truncated,
            "min_confidence": floor.rung().as_str(),
        }),
        text.join("\n"),
    ))
}

/// `  L321 Request.__init__: def __init__(` (the qualified name when it says more).
fn map_line(s: &Symbol) -> String {
    if s.qualified_name == s.name {
        format!("  L{}: {}", s.start_line, s.signature)
    } else {
        format!("  L{} {}: {}", s.start_line, s.qualified_name, s.signature)
    }
}

fn map(graph: &Graph, focus: &[String], budget: usize) -> Result<(Value, String), ToolError> {
    let focus_refs: Vec<&str> = focus.iter().map(String::as_str).collect();
    let ranked = graph
        .rank(
            &focus_refs,
            budget.min(2000),
            cc_graph::DEFAULT_MIN_CONFIDENCE,
        )
        .map_err(index_error)?
        .value;
    let files_total = graph.freshness().files;
    let header = format!(
        "repo map: most important definitions by PageRank{}, within {budget} tokens (tokens = characters / 4)",
        if focus.is_empty() {
            String::new()
        } else {
            format!(" around {}", focus.join(", "))
        }
    );
    let mut used = tokens(&header) + 20;
    // Files in order of their best definition; definitions in file order when shown.
    let mut order: Vec<String> = Vec::new();
    let mut chosen: HashMap<String, Vec<(Symbol, f64)>> = HashMap::new();
    for r in ranked {
        if matches!(r.symbol.kind, DefKind::Field | DefKind::Variable) {
            continue;
        }
        let line = format!("{}\n", map_line(&r.symbol));
        let mut cost = tokens(&line);
        if !chosen.contains_key(&r.symbol.path) {
            cost += tokens(&r.symbol.path) + 1;
        }
        if used + cost > budget {
            continue;
        }
        used += cost;
        let path = r.symbol.path.clone();
        if !chosen.contains_key(&path) {
            order.push(path.clone());
        }
        chosen.entry(path).or_default().push((r.symbol, r.score));
    }
    let mut text = vec![header];
    let mut files_json = Vec::new();
    let mut definitions = 0;
    for path in &order {
        let Some(defs) = chosen.get_mut(path) else {
            continue;
        };
        defs.sort_by_key(|(s, _)| s.start_line);
        text.push(format!("{path}:"));
        let mut defs_json = Vec::new();
        for (s, score) in defs.iter() {
            definitions += 1;
            text.push(map_line(s));
            let mut v = symbol_json(s);
            v["signature"] = json!(s.signature);
            v["rank"] = json!((score * 1e6).round() / 1e6);
            defs_json.push(v);
        }
        files_json.push(json!({"path": path, "definitions": defs_json}));
    }
    text.push(format!(
        "{} of {files_total} files and {definitions} definitions shown; about {used} tokens",
        order.len()
    ));
    Ok((
        json!({
            "action": "map",
            "files": files_json,
            "files_shown": order.len(),
            "files_total": files_total,
            "definitions_shown": definitions,
            "budget_tokens": budget,
            "tokens": used,
            "token_count": "characters / 4, rounded up",
            "focus": focus,
        }),
        text.join("\n"),
    ))
}
