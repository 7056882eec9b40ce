//! `ast_grep`: find code by its shape.

use cc_process::lock;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_structural::search::{search_with, MatchSink, SearchReport, SinkError};
use cc_structural::{Captured, Languages, Match, Pattern, Position, SearchOptions, TreeCache};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    blocking, choose_language, max_file_bytes, parse_context, pattern_error, resolve_target,
    search_error, shown,
};
use crate::error::{ErrorKind, ToolError};
use crate::left_out::LeftOutReport;
use crate::report::structural::{
    match_listing, FileReason, GrepReport, GrepResult, ParseErrorsAt, Point, TooLargeFile,
};
use crate::root::WorkspaceRoot;
use crate::spool::{push_element, JsonSpool, SpoolRun, SpooledArray};
use crate::tier::Tier;
use crate::tool::{parse_args, report_json, schema_for, CallContext, Tool, ToolOutput};

const DEFAULT_MAX_RESULTS: usize = 50;

/// `ast_grep`: structural search with metavariables.
#[derive(Debug, Clone)]
pub struct AstGrepTool {
    root: WorkspaceRoot,
    parsers: Arc<Languages>,
    trees: Arc<TreeCache>,
}

impl AstGrepTool {
    /// An `ast_grep` tool over `root` with the parser set `parsers`, and a tree cache of
    /// the default budget.
    pub fn new(root: WorkspaceRoot, parsers: Arc<Languages>) -> Self {
        AstGrepTool::with_trees(root, parsers, Arc::new(TreeCache::default()))
    }

    /// An `ast_grep` tool whose searches keep parsed trees in `trees` (the run's).
    pub fn with_trees(root: WorkspaceRoot, parsers: Arc<Languages>, trees: Arc<TreeCache>) -> Self {
        AstGrepTool {
            root,
            parsers,
            trees,
        }
    }

    /// The run's tree cache.
    pub fn trees(&self) -> &Arc<TreeCache> {
        &self.trees
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
    /// How many matches to return (default 50); `total` still counts all of them. The JSON
    /// result holds every returned match; the text lists at most the first 1000 and says so.
    #[serde(default)]
    max_results: Option<usize>,
    /// Parse the pattern only as a `statement`, `expression`, `class_member` or `top_level`
    /// declaration, instead of the first of those that accepts it.
    #[serde(default)]
    context: Option<String>,
    /// Files larger than this many bytes are not searched and are listed under `too_large`
    /// (default 4194304, 4 MiB; at most 67108864, 64 MiB). A file whose syntax tree would
    /// take more than 768 MiB (about 4 million tokens) is listed under `skipped`.
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

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<GrepResult>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AstGrepArgs = parse_args(args)?;
        let max_file_bytes = max_file_bytes(args.max_file_bytes)?;
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
            max_file_bytes,
            cancel: Some(ctx.cancellation().flag()),
            trees: Some(self.trees.clone()),
            ..SearchOptions::default()
        };
        let root = self.root.clone();
        let searched = pattern;
        blocking(move || {
            let sink = SpoolSink {
                root: root.clone(),
                spool: Arc::new(JsonSpool::new()),
                files: Mutex::new(HashMap::new()),
            };
            let report = search_with(&searched, &path, &options, &sink)
                .map_err(|e| search_error(&root, e))?;
            let matches = sink.in_order(&report.kept).map_err(spool_error)?;
            // What ignore rules left out of a folder's search is said, never a silent zero.
            let left_out = path.is_dir().then(|| {
                cc_workspace::walk::Walk::new(&path)
                    .extensions(searched.language().extensions())
                    .left_out()
            });
            let left_out_by_ignore = left_out
                .filter(|l| l.files > 0)
                .map(|l| LeftOutReport::new(root.path(), &l));
            let report = grep_report(&root, &searched, report, left_out_by_ignore);
            let text = match_listing(previews(&matches), matches.len(), report.total)
                .map_err(spool_error)?
                + &report.facts();
            let output = ToolOutput::new(report_json(&report)?)
                .with_spooled("matches", matches)
                .with_text(text);
            Ok(output)
        })
        .await
    }
}

/// A spool that cannot be written or read back is an internal error.
fn spool_error(error: std::io::Error) -> ToolError {
    ToolError::new(
        ErrorKind::Internal,
        format!("the matches could not be spooled (temporary files go to $TMPDIR): {error}"),
    )
}

/// Each file's matches as compact JSON, serialized on the worker that found them.
struct SpoolSink {
    root: WorkspaceRoot,
    spool: Arc<JsonSpool>,
    /// The runs of each file handed over and not dropped.
    files: Mutex<HashMap<PathBuf, Vec<SpoolRun>>>,
}

/// A file's matches are appended to the spool in runs of about this many bytes, so one file
/// with huge matches is never held whole.
const RUN_BYTES: usize = 1 << 20;

impl MatchSink for SpoolSink {
    fn matches(&self, path: &Path, source: &[u8], matches: &[Match]) -> Result<(), SinkError> {
        let shown = shown(&self.root, path);
        let mut runs = Vec::new();
        let mut buffer = Vec::with_capacity(matches.len().min(64) * 256);
        let mut count = 0;
        let spooled = |error: std::io::Error| -> SinkError {
            format!("writing them to a temporary file ($TMPDIR) failed: {error}").into()
        };
        for m in matches {
            push_element(&mut buffer, &MatchJson::new(&shown, source, m))?;
            count += 1;
            if buffer.len() >= RUN_BYTES {
                runs.push(self.spool.append(&buffer, count).map_err(spooled)?);
                buffer.clear();
                count = 0;
            }
        }
        if count > 0 {
            runs.push(self.spool.append(&buffer, count).map_err(spooled)?);
        }
        lock(&self.files).insert(path.to_path_buf(), runs);
        Ok(())
    }

    fn dropped(&self, path: &Path) {
        lock(&self.files).remove(path);
    }
}

impl SpoolSink {
    /// The kept matches, in the report's order.
    fn in_order(self, kept: &[(PathBuf, usize)]) -> std::io::Result<SpooledArray> {
        let mut files = self
            .files
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut array = SpooledArray::new(self.spool);
        for (path, take) in kept {
            let mut left = *take;
            for run in files.remove(path).unwrap_or_default() {
                let part = left.min(run.count());
                array.push(run, part)?;
                left -= part;
            }
        }
        Ok(array)
    }
}

/// One match as the result shows it.
#[derive(Serialize)]
struct MatchJson<'a> {
    path: &'a str,
    start: Point,
    end: Point,
    text: Cow<'a, str>,
    captures: CapturesJson<'a>,
}

impl<'a> MatchJson<'a> {
    fn new(path: &'a str, source: &'a [u8], m: &'a Match) -> Self {
        MatchJson {
            path,
            start: point(m.start),
            end: point(m.end),
            text: text_of(source, m.range.clone()),
            captures: CapturesJson {
                source,
                captures: &m.captures,
            },
        }
    }
}

fn point(p: Position) -> Point {
    Point {
        line: p.line,
        column: p.column,
    }
}

/// Captures by name: `$X` a string, `$$$X` an array of strings.
struct CapturesJson<'a> {
    source: &'a [u8],
    captures: &'a [(String, Captured)],
}

impl Serialize for CapturesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.captures.len()))?;
        for (name, captured) in self.captures {
            match captured {
                Captured::Node(range) | Captured::Text(range) => {
                    map.serialize_entry(name, &text_of(self.source, range.clone()))?;
                }
                Captured::Nodes { items, .. } => {
                    let texts: Vec<Cow<'_, str>> = items
                        .iter()
                        .map(|r| text_of(self.source, r.clone()))
                        .collect();
                    map.serialize_entry(name, &texts)?;
                }
            }
        }
        map.end()
    }
}

/// The text of `range` in `source`, lossily decoded (a file need not be UTF-8).
fn text_of(source: &[u8], range: std::ops::Range<usize>) -> Cow<'_, str> {
    String::from_utf8_lossy(source.get(range).unwrap_or(&[]))
}

/// What the text rendering shows of a match.
#[derive(Deserialize)]
struct Preview {
    path: String,
    start: Point,
    text: String,
}

/// The spooled matches as the listing reads them: `(path, start, text)`.
fn previews(
    matches: &SpooledArray,
) -> impl Iterator<Item = std::io::Result<(String, Point, String)>> + '_ {
    matches.elements().map(|element| {
        let m: Preview = serde_json::from_slice(&element?).map_err(std::io::Error::other)?;
        Ok((m.path, m.start, m.text))
    })
}

/// The result's report (its matches are spooled beside it).
fn grep_report(
    root: &WorkspaceRoot,
    pattern: &Pattern,
    result: SearchReport,
    left_out_by_ignore: Option<LeftOutReport>,
) -> GrepReport {
    GrepReport {
        language: pattern.language().name().to_owned(),
        context: pattern.context().name().to_owned(),
        total: result.total,
        truncated: result.truncated(),
        cancelled: result.cancelled,
        skipped: skipped_files(root, &result.skipped),
        too_large: result
            .too_large
            .iter()
            .map(|t| TooLargeFile {
                path: shown(root, &t.path),
                size: t.size,
            })
            .collect(),
        parse_errors: parse_errors(root, &result.parse_errors),
        parse_errors_total: result.parse_errors_total,
        undecided: result.exhausted,
        left_out_by_ignore,
    }
}

/// The files not read, with why, as results list them.
pub(super) fn skipped_files(
    root: &WorkspaceRoot,
    skipped: &[cc_structural::search::Skipped],
) -> Vec<FileReason> {
    skipped
        .iter()
        .map(|s| FileReason {
            path: shown(root, &s.path),
            reason: s.reason.clone(),
        })
        .collect()
}

/// The files with syntax errors, as results list them.
pub(super) fn parse_errors(
    root: &WorkspaceRoot,
    listed: &[cc_structural::ParseErrors],
) -> Vec<ParseErrorsAt> {
    listed
        .iter()
        .map(|e| ParseErrorsAt {
            path: shown(root, &e.path),
            line: e.line,
            count: e.count,
        })
        .collect()
}
