//! `ast_edit` (stage a structural rewrite) and `resolve` (accept or discard it), sharing the
//! run's [`EditStore`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_structural::{stage_rewrite, Languages, Pattern, RewriteError, StagedRewrite};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{blocking, choose_language, parse_context, pattern_error, resolve_target, shown};
use crate::error::{kinds, ToolError};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// What a failed `resolve` adds to its error: the staged edit is gone.
pub(super) const EDIT_DROPPED: &str =
    "the edit was dropped; run ast_edit again to stage it on the current files";

/// Error kinds of `ast_edit` and `resolve`.
pub mod error_kinds {
    /// No staged edit has that id (never staged, already accepted or discarded).
    pub const UNKNOWN_EDIT: &str = "unknown_edit";
    /// Files changed since staging; nothing was written.
    pub const STALE: &str = crate::error::kinds::STALE;
    /// The rewrite template uses a metavariable the pattern does not bind.
    pub const UNBOUND_METAVARIABLE: &str = "unbound_metavariable";
    /// Two matches overlap without nesting.
    pub const OVERLAPPING_MATCHES: &str = "overlapping_matches";
}

/// The run's staged edits, shared by its `ast_edit` and `resolve`.
#[derive(Debug, Default)]
pub struct EditStore {
    next: AtomicU64,
    edits: Mutex<BTreeMap<String, StagedRewrite>>,
}

impl EditStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, StagedRewrite>> {
        self.edits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn insert(&self, staged: StagedRewrite) -> String {
        let id = format!("edit_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        self.lock().insert(id.clone(), staged);
        id
    }

    fn take(&self, id: &str) -> Option<StagedRewrite> {
        self.lock().remove(id)
    }

    fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }
}

/// `ast_edit`: stages a rewrite of every match of a pattern; writes nothing.
#[derive(Debug, Clone)]
pub struct AstEditTool {
    root: WorkspaceRoot,
    parsers: Arc<Languages>,
    store: Arc<EditStore>,
}

impl AstEditTool {
    /// An `ast_edit` tool staging into `store`.
    pub fn new(root: WorkspaceRoot, parsers: Arc<Languages>, store: Arc<EditStore>) -> Self {
        AstEditTool {
            root,
            parsers,
            store,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AstEditArgs {
    /// The code fragment to find, as for `ast_grep` (`$X`, `$$$ARGS`, `$_`).
    pattern: String,
    /// What each match becomes: code using the pattern's metavariables (`$X`, `$$$ARGS`).
    /// Multi-line text is re-indented to the match's place.
    rewrite: String,
    /// File or folder inside the workspace (default: the whole workspace).
    #[serde(default)]
    path: Option<String>,
    /// The language; inferred when `path` names a file, required for a folder.
    #[serde(default)]
    language: Option<String>,
    /// Parse the pattern only in this context (`statement`, `expression`, `class_member`,
    /// `top_level`).
    #[serde(default)]
    context: Option<String>,
}

#[async_trait]
impl Tool for AstEditTool {
    fn name(&self) -> &str {
        "ast_edit"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> &str {
        "Stage a structural rewrite: every match of `pattern` (as in ast_grep) becomes \
         `rewrite`, with the pattern's metavariables substituted. Nothing is written: the \
         result is an edit_id with the count, the files and a diff per file, plus warnings for \
         comments or optional parts (a return annotation, an else) the rewrite would drop. \
         Call `resolve` with the edit_id to accept (all files or none; refused if any file \
         changed since) or discard it."
    }

    fn input_schema(&self) -> Value {
        schema_for::<AstEditArgs>()
    }

    async fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AstEditArgs = parse_args(args)?;
        let target = resolve_target(&self.root, args.path.as_deref())?;
        let language =
            choose_language(&self.parsers, &self.root, args.language.as_deref(), &target)?;
        let context = parse_context(args.context.as_deref())?;
        let pattern = Pattern::new(language, &args.pattern, context).map_err(pattern_error)?;
        let root = self.root.clone();
        let path = target.path;
        let template = args.rewrite;
        let staged = blocking(move || {
            let label = |p: &std::path::Path| root.relative(p);
            stage_rewrite(&pattern, &template, &path, &label).map_err(rewrite_error)
        })
        .await?;
        let files: Vec<Value> = staged
            .files
            .iter()
            .map(|f| json!({"path": shown(&self.root, &f.path), "replacements": f.replacements, "diff": f.diff}))
            .collect();
        let warnings: Vec<Value> = staged
            .warnings
            .iter()
            .map(|w| {
                json!({
                    "kind": w.kind.name(),
                    "path": shown(&self.root, &w.path),
                    "line": w.line,
                    "text": w.text,
                })
            })
            .collect();
        let skipped: Vec<Value> = staged
            .skipped
            .iter()
            .map(|s| json!({"path": shown(&self.root, &s.path), "reason": s.reason}))
            .collect();
        let (replacements, skipped_nested) = (staged.replacements, staged.skipped_nested);
        if staged.transaction.is_empty() {
            let mut value = json!({
                "status": "no_matches",
                "replacements": 0,
                "files": [],
                "warnings": [],
                "skipped_nested": skipped_nested,
            });
            if !skipped.is_empty() {
                value["skipped"] = Value::Array(skipped);
            }
            return Ok(ToolOutput::new(value)
                .with_text("no match: nothing staged; check the pattern with ast_grep"));
        }
        let text = render_proposal(&files, &warnings, replacements, skipped_nested);
        let edit_id = self.store.insert(staged);
        let mut value = json!({
            "status": "proposed",
            "edit_id": edit_id,
            "replacements": replacements,
            "files": files,
            "warnings": warnings,
            "skipped_nested": skipped_nested,
        });
        if !skipped.is_empty() {
            value["skipped"] = Value::Array(skipped);
        }
        Ok(ToolOutput::new(value).with_text(format!(
            "{text}call resolve with edit_id \"{edit_id}\" and action \"accept\" to write it, or \"discard\""
        )))
    }
}

fn render_proposal(
    files: &[Value],
    warnings: &[Value],
    replacements: usize,
    nested: usize,
) -> String {
    let mut out = format!(
        "proposed: {replacements} replacement{} in {} file{}\n",
        if replacements == 1 { "" } else { "s" },
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    for file in files {
        out.push_str(file["diff"].as_str().unwrap_or(""));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    for w in warnings {
        out.push_str(&format!(
            "warning: {} at {}:{}: {}\n",
            w["kind"].as_str().unwrap_or(""),
            w["path"].as_str().unwrap_or(""),
            w["line"],
            w["text"].as_str().unwrap_or("")
        ));
    }
    if nested > 0 {
        out.push_str(&format!(
            "{nested} match{} inside a replaced match left for a second pass\n",
            if nested == 1 { "" } else { "es" }
        ));
    }
    out
}

fn rewrite_error(error: RewriteError) -> ToolError {
    match &error {
        RewriteError::Template(cc_structural::TemplateError::Unbound { name, .. }) => {
            ToolError::new(error_kinds::UNBOUND_METAVARIABLE, error.to_string())
                .with_detail("name", name.as_str())
        }
        RewriteError::Template(_) => ToolError::invalid_arguments(error.to_string()),
        RewriteError::Overlap { .. } => {
            ToolError::new(error_kinds::OVERLAPPING_MATCHES, error.to_string())
        }
        RewriteError::Search(_) => ToolError::new(kinds::NOT_FOUND, error.to_string()),
    }
}

/// `resolve`: accepts (writes, all or nothing) or discards a staged edit.
#[derive(Debug, Clone)]
pub struct ResolveTool {
    root: WorkspaceRoot,
    store: Arc<EditStore>,
}

impl ResolveTool {
    /// A `resolve` tool for the edits in `store`.
    pub fn new(root: WorkspaceRoot, store: Arc<EditStore>) -> Self {
        ResolveTool { root, store }
    }
}

/// What to do with a staged edit.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Action {
    /// Write every file of the edit, or none.
    Accept,
    /// Forget the edit.
    Discard,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResolveArgs {
    /// The id `ast_edit` returned (`edit_1`, …).
    edit_id: String,
    /// `accept` writes the edit (all files or none), `discard` forgets it.
    action: Action,
}

#[async_trait]
impl Tool for ResolveTool {
    fn name(&self) -> &str {
        "resolve"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> &str {
        "Accept or discard an edit staged by ast_edit. `accept` writes every file of the edit \
         or none: if any file changed since staging the edit is refused as `stale` (naming the \
         files; stage it again), and if a write fails the files already written are restored. \
         `discard` forgets the edit."
    }

    fn input_schema(&self) -> Value {
        schema_for::<ResolveArgs>()
    }

    fn parallel_safe(&self) -> bool {
        // Commits touching the same files must not interleave.
        false
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ResolveArgs = parse_args(args)?;
        let Some(staged) = self.store.take(&args.edit_id) else {
            let known = self.store.ids();
            return Err(ToolError::new(
                error_kinds::UNKNOWN_EDIT,
                format!(
                    "no staged edit `{}` (it was never staged, or was already accepted or \
                     discarded); staged now: {}",
                    args.edit_id,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )
            .with_detail("edit_id", args.edit_id)
            .with_detail("staged", known));
        };
        if args.action == Action::Discard {
            return Ok(
                ToolOutput::new(json!({"status": "discarded", "edit_id": args.edit_id}))
                    .with_text(format!("discarded {}; nothing was written", args.edit_id)),
            );
        }
        let replacements = staged.replacements;
        let transaction = staged.transaction;
        let committed = crate::commit::commit_checked(
            ctx,
            &self.root,
            transaction,
            &args.edit_id,
            EDIT_DROPPED,
        )
        .await;
        match committed {
            Ok(written) => {
                let files: Vec<String> = written.iter().map(|p| shown(&self.root, p)).collect();
                let text = format!(
                    "wrote {} ({replacements} replacement{} in {} file{}): {}",
                    args.edit_id,
                    if replacements == 1 { "" } else { "s" },
                    files.len(),
                    if files.len() == 1 { "" } else { "s" },
                    files.join(", ")
                );
                Ok(ToolOutput::new(json!({
                    "status": "accepted",
                    "edit_id": args.edit_id,
                    "replacements": replacements,
                    "files": files,
                }))
                .with_text(text)
                .with_written(written))
            }
            Err(error) => Err(error.with_detail("edit_id", args.edit_id)),
        }
    }
}
