//! `ast_grep`: find code by its shape.

use std::sync::Arc;

use async_trait::async_trait;
use cc_structural::{
    search, CapturedText, FoundMatch, Languages, Pattern, SearchOptions, SearchResult,
    DEFAULT_MAX_FILE_BYTES,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{blocking, choose_language, parse_context, pattern_error, resolve_target, shown};
use crate::error::ToolError;
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

const DEFAULT_MAX_RESULTS: usize = 50;

/// `ast_grep`: structural search with metavariables.
#[derive(Debug, Clone)]
pub struct AstGrepTool {
    root: WorkspaceRoot,
    parsers: Arc<Languages>,
}

impl AstGrepTool {
    /// An `ast_grep` tool over `root` with the parser set `parsers`.
    pub fn new(root: WorkspaceRoot, parsers: Arc<Languages>) -> Self {
        AstGrepTool { root, parsers }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AstGrepArgs {
    /// A code fragment in the target language. `$NAME` matches one node, `$$$NAME` zero or
    /// more siblings (`$$$` without binding), `$_` one node without binding; a metavariable
    /// used twice must match the same code. Example: `print($$$ARGS)`.
    pattern: String,
    /// File or folder inside the workspace (default: the whole workspace).
    #[serde(default)]
    path: Option<String>,
    /// python, rust, javascript, typescript, tsx, go, c, cpp, java, dart, bash, json, ruby,
    /// c_sharp or kotlin. Inferred when `path` names a file; required for a folder.
    #[serde(default)]
    language: Option<String>,
    /// How many matches to return (default 50); `total` still counts all of them.
    #[serde(default)]
    max_results: Option<usize>,
    /// Parse the pattern only as a `statement`, `expression`, `class_member` or `top_level`
    /// declaration, instead of the first of those that accepts it.
    #[serde(default)]
    context: Option<String>,
    /// Files larger than this many bytes are not searched and are listed under `too_large`
    /// (default 4194304, 4 MiB).
    #[serde(default)]
    max_file_bytes: Option<u64>,
}

#[async_trait]
impl Tool for AstGrepTool {
    fn name(&self) -> &str {
        "ast_grep"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> &str {
        "Find code by its syntax-tree shape, not its text: the pattern is a code fragment \
         with metavariables ($X one node, $$$ARGS zero or more siblings, $_ any one node). \
         Matches ignore whitespace and comments, never match inside strings or comments, and \
         must account for the whole node (`import os` does not match `import os, sys`); \
         optional parts the pattern leaves out (return annotations, type parameters, \
         decorators, else branches) are allowed. Give `language` when searching a folder. \
         Returns each match's place, text and captures, and names the files the grammar \
         could not fully read (`parse_errors`) and those over the size cap (`too_large`). A \
         pattern that does not parse is an `unparsable` error saying where each parse context \
         broke."
    }

    fn input_schema(&self) -> Value {
        schema_for::<AstGrepArgs>()
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AstGrepArgs = parse_args(args)?;
        let target = resolve_target(&self.root, args.path.as_deref())?;
        let language =
            choose_language(&self.parsers, &self.root, args.language.as_deref(), &target)?;
        let context = parse_context(args.context.as_deref())?;
        let pattern = Pattern::new(language, &args.pattern, context).map_err(pattern_error)?;
        let max_results = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
        let path = target.path.clone();
        let progress = ctx
            .progress_sink()
            .map(|sink| -> cc_structural::ProgressFn {
                Arc::new(move |done, total| {
                    sink.report(done as f64, Some(total as f64), Some("files searched"));
                })
            });
        let options = SearchOptions {
            max_results,
            threads: 0,
            progress,
            max_file_bytes: args.max_file_bytes.unwrap_or(DEFAULT_MAX_FILE_BYTES),
            cancel: Some(ctx.cancellation().flag()),
        };
        let result = {
            let pattern = pattern.clone();
            blocking(move || {
                search(&pattern, &path, &options)
                    .map_err(|e| ToolError::new(crate::error::kinds::NOT_FOUND, e.to_string()))
            })
            .await?
        };
        Ok(render_result(&self.root, &pattern, result))
    }
}

/// The result as JSON and text, moving each match's text into the JSON (a full result can
/// hold every match of a large tree).
fn render_result(root: &WorkspaceRoot, pattern: &Pattern, result: SearchResult) -> ToolOutput {
    let mut text = render(root, &result.matches, result.total);
    let truncated = result.truncated();
    let mut value = json!({
        "language": pattern.language().name(),
        "context": pattern.context().name(),
        "total": result.total,
        "truncated": truncated,
    });
    let mut facts = String::new();
    if result.cancelled {
        value["cancelled"] = json!(true);
        facts.push_str(
            "cancelled: the search stopped before every file was looked at; the matches \
             and the total cover only the files searched\n",
        );
    }
    if !result.skipped.is_empty() {
        value["skipped"] = result
            .skipped
            .iter()
            .map(|s| json!({"path": shown(root, &s.path), "reason": s.reason}))
            .collect();
        for s in &result.skipped {
            facts.push_str(&format!("skipped {}: {}\n", shown(root, &s.path), s.reason));
        }
    }
    if !result.too_large.is_empty() {
        value["too_large"] = result
            .too_large
            .iter()
            .map(|t| json!({"path": shown(root, &t.path), "size": t.size}))
            .collect();
        for t in &result.too_large {
            facts.push_str(&format!(
                "not searched (over max_file_bytes): {} ({} bytes)\n",
                shown(root, &t.path),
                t.size
            ));
        }
    }
    if result.parse_errors_total > 0 {
        value["parse_errors"] = result
            .parse_errors
            .iter()
            .map(|e| json!({"path": shown(root, &e.path), "line": e.line, "count": e.count}))
            .collect();
        value["parse_errors_total"] = json!(result.parse_errors_total);
        facts.push_str(&parse_errors_text(
            root,
            &result.parse_errors,
            result.parse_errors_total,
        ));
    }
    if result.exhausted > 0 {
        // Never a silent miss: say that some candidates were too costly to decide.
        value["undecided"] = json!(result.exhausted);
        facts.push_str(&format!(
            "{} candidate node(s) needed more backtracking than allowed and were not \
             matched; use fewer `$$$` in one list\n",
            result.exhausted
        ));
    }
    let matches: Vec<Value> = result
        .matches
        .into_iter()
        .map(|m| match_json(root, m))
        .collect();
    value["matches"] = Value::Array(matches);
    text.push_str(&facts);
    ToolOutput::new(value).with_text(text)
}

/// `N file(s) did not parse cleanly …` with the listed ones, for the text rendering.
pub(super) fn parse_errors_text(
    root: &WorkspaceRoot,
    listed: &[cc_structural::ParseErrors],
    total: usize,
) -> String {
    let mut out = format!(
        "{total} file(s) have syntax errors the grammar could not read (a part of such a file \
         may match nothing):"
    );
    for e in listed {
        out.push_str(&format!(
            " {}:{} ({} error{})",
            shown(root, &e.path),
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

fn match_json(root: &WorkspaceRoot, m: FoundMatch) -> Value {
    let mut captures = Map::new();
    for (name, captured) in m.captures {
        let value = match captured {
            CapturedText::One(text) => Value::String(text),
            CapturedText::Many(items) => items.into_iter().map(Value::String).collect(),
        };
        captures.insert(name, value);
    }
    json!({
        "path": shown(root, &m.path),
        "start": {"line": m.start.line, "column": m.start.column},
        "end": {"line": m.end.line, "column": m.end.column},
        "text": m.text,
        "captures": captures,
    })
}

fn render(root: &WorkspaceRoot, matches: &[FoundMatch], total: usize) -> String {
    let mut out = if total == matches.len() {
        format!("{total} match{}\n", if total == 1 { "" } else { "es" })
    } else {
        format!("{total} matches, showing the first {}\n", matches.len())
    };
    for m in matches {
        let first = m.text.lines().next().unwrap_or("");
        let more = if m.text.contains('\n') { " …" } else { "" };
        out.push_str(&format!(
            "{}:{}:{}: {first}{more}\n",
            shown(root, &m.path),
            m.start.line,
            m.start.column
        ));
    }
    out
}
