//! `ast_edit` (stage a structural rewrite) and `resolve` (accept or discard it), sharing the
//! run's [`EditStore`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_structural::{
    stage_rewrite_with, Languages, Pattern, RewriteError, SearchOptions, StagedRewrite,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{
    blocking, choose_language, max_file_bytes, parse_context, pattern_error, resolve_target,
    search_error, shown,
};
use crate::error::{ErrorKind, ToolError};
use crate::report::structural::{
    AstEditReport, EditStatus, EditWarning, ResolveReport, ResolveStatus, SkippedRewrite,
    StagedFileReport, StagedLimits,
};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, report_output, schema_for, CallContext, Tool, ToolOutput};

/// What a failed `resolve` adds to its error: the staged edit is gone.
pub(super) const EDIT_DROPPED: &str =
    "the edit was dropped; run ast_edit again to stage it on the current files";

/// How many staged edits a run keeps; staging one more evicts the oldest.
pub const MAX_STAGED_EDITS: usize = 32;

/// How many bytes (old and new contents together) a run's staged edits may hold; staging past
/// it evicts the oldest.
pub const MAX_STAGED_BYTES: usize = 64 << 20;

/// How many evicted ids are remembered, to answer `expired` rather than `unknown_edit`.
const REMEMBERED_EVICTIONS: usize = 1024;

#[derive(Debug, Default)]
struct Staged {
    /// Oldest first (ids grow).
    edits: BTreeMap<u64, (StagedRewrite, usize)>,
    bytes: usize,
    evicted: std::collections::VecDeque<u64>,
    /// Edits already said to be stale (once each).
    said_stale: std::collections::BTreeSet<u64>,
}

/// The run's staged edits, shared by its `ast_edit` and `resolve`: at most
/// [`MAX_STAGED_EDITS`] edits and [`MAX_STAGED_BYTES`] bytes, the oldest evicted first.
///
/// With [`EditStore::follow`], the run's watcher tells it when a file of a staged edit
/// changes (the shell, git, a formatter, another write): the edit is said to be stale in the
/// next result (a `stale_edit` notice), before anyone calls `resolve` on it.
pub struct EditStore {
    next: AtomicU64,
    max_edits: usize,
    max_bytes: usize,
    staged: Mutex<Staged>,
    /// The run's root and notices, when it follows the watcher.
    follow: Option<(WorkspaceRoot, crate::Notices)>,
    subscription: Mutex<Option<cc_workspace::watch::Subscription>>,
}

impl std::fmt::Debug for EditStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditStore")
            .field("usage", &self.usage())
            .finish_non_exhaustive()
    }
}

impl Default for EditStore {
    fn default() -> Self {
        EditStore::with_limits(MAX_STAGED_EDITS, MAX_STAGED_BYTES)
    }
}

/// What a staged edit's id looks up to.
enum Lookup {
    Found(Box<StagedRewrite>),
    Expired,
    Unknown,
}

/// The bytes a staged edit holds: old and new contents, and the diffs.
fn staged_bytes(staged: &StagedRewrite) -> usize {
    let contents: usize = staged
        .transaction
        .ops()
        .iter()
        .map(|op| match op {
            cc_structural::FileOp::Replace { original, new, .. } => original.len() + new.len(),
            _ => 0,
        })
        .sum();
    contents + staged.files.iter().map(|f| f.diff.len()).sum::<usize>()
}

fn edit_number(id: &str) -> Option<u64> {
    id.strip_prefix("edit_")?.parse().ok()
}

impl EditStore {
    /// A store holding at most `max_edits` edits and `max_bytes` bytes of file contents.
    pub fn with_limits(max_edits: usize, max_bytes: usize) -> Self {
        EditStore {
            next: AtomicU64::new(0),
            max_edits: max_edits.max(1),
            max_bytes,
            staged: Mutex::default(),
            follow: None,
            subscription: Mutex::new(None),
        }
    }

    /// Follows the run's watcher (started when the first edit is staged) and says in
    /// `notices` when a staged edit goes stale.
    pub fn follow(mut self, root: WorkspaceRoot, notices: crate::Notices) -> Self {
        self.follow = Some((root, notices));
        self
    }

    /// Subscribes to the watcher once, when the first edit is staged.
    fn watch(self: &Arc<Self>) {
        let Some((root, _)) = &self.follow else {
            return;
        };
        let mut subscription = cc_process::lock(&self.subscription);
        if subscription.is_some() {
            return;
        }
        let Ok(watcher) = root.watcher() else {
            return;
        };
        let sub = watcher.subscribe();
        let me = Arc::downgrade(self);
        sub.on_change(move || {
            if let Some(store) = me.upgrade() {
                store.say_stale();
            }
        });
        *subscription = Some(sub);
    }

    /// Says, once per edit, which staged edits a change on disk made stale.
    fn say_stale(&self) {
        let Some((root, notices)) = &self.follow else {
            return;
        };
        let changes = match cc_process::lock(&self.subscription).as_ref() {
            Some(sub) => sub.take(),
            None => return,
        };
        if changes.is_empty() {
            return;
        }
        let changed: std::collections::HashSet<&std::path::Path> =
            changes.changes.iter().map(|c| c.path.as_path()).collect();
        let mut store = self.lock();
        let mut stale = Vec::new();
        for (number, (staged, _)) in &store.edits {
            if store.said_stale.contains(number) {
                continue;
            }
            let touched = changes.gap.is_some()
                || staged
                    .transaction
                    .ops()
                    .iter()
                    .any(|op| changed.contains(op.path()));
            if !touched {
                continue;
            }
            let paths = staged.transaction.stale_paths(root.workspace());
            if !paths.is_empty() {
                stale.push((*number, paths));
            }
        }
        for (number, paths) in stale {
            store.said_stale.insert(number);
            let shown: Vec<String> = paths.iter().map(|p| root.relative(p)).collect();
            notices.push(
                "stale_edit",
                format!(
                    "edit_{number} is stale: {} changed since it was staged ({}); `resolve` \
                     accept would refuse it: stage it again with ast_edit",
                    if shown.len() == 1 { "a file" } else { "files" },
                    shown.join(", ")
                ),
                serde_json::json!({"edit_id": format!("edit_{number}"), "paths": shown}),
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Staged> {
        cc_process::lock(&self.staged)
    }

    /// Stores `staged` (evicting the oldest edits past the limits); its id and the ids
    /// evicted.
    fn insert(self: &Arc<Self>, staged: StagedRewrite) -> (String, Vec<String>) {
        self.watch();
        let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let size = staged_bytes(&staged);
        let mut store = self.lock();
        store.bytes += size;
        store.edits.insert(number, (staged, size));
        let mut evicted = Vec::new();
        while store.edits.len() > self.max_edits
            || (store.bytes > self.max_bytes && store.edits.len() > 1)
        {
            let Some((old, (_, old_size))) = store.edits.pop_first() else {
                break;
            };
            store.bytes -= old_size;
            store.evicted.push_back(old);
            if store.evicted.len() > REMEMBERED_EVICTIONS {
                store.evicted.pop_front();
            }
            evicted.push(format!("edit_{old}"));
        }
        (format!("edit_{number}"), evicted)
    }

    fn take(&self, id: &str) -> Lookup {
        let Some(number) = edit_number(id) else {
            return Lookup::Unknown;
        };
        let mut store = self.lock();
        match store.edits.remove(&number) {
            Some((staged, size)) => {
                store.bytes -= size;
                Lookup::Found(Box::new(staged))
            }
            None if store.evicted.contains(&number) => Lookup::Expired,
            None => Lookup::Unknown,
        }
    }

    fn ids(&self) -> Vec<String> {
        self.lock()
            .edits
            .keys()
            .map(|n| format!("edit_{n}"))
            .collect()
    }

    #[cfg(test)]
    pub(super) fn insert_for_test(
        self: &Arc<Self>,
        staged: StagedRewrite,
    ) -> (String, Vec<String>) {
        self.insert(staged)
    }

    /// How many edits are staged and the bytes they hold.
    pub fn usage(&self) -> (usize, usize) {
        let store = self.lock();
        (store.edits.len(), store.bytes)
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
    /// Files larger than this many bytes are not searched (default 4194304, 4 MiB; at most
    /// 67108864, 64 MiB); they are listed under `skipped_files`.
    #[serde(default)]
    max_file_bytes: Option<u64>,
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
         result is an edit_id with the count, the files and a diff per file. A rewrite changes \
         only what the pattern names: parts a match left out (an else branch, annotations, \
         type parameters, a return type, async) are carried over into the new code; a match \
         where that cannot be done is not rewritten and is listed under `skipped` with the \
         reason; so is a file whose rewritten code would not parse (it is not staged). \
         Warnings name comments the rewrite would drop. Call `resolve` with the \
         edit_id to accept (all files or none; refused if any file changed since) or discard \
         it."
    }

    fn input_schema(&self) -> Value {
        schema_for::<AstEditArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<AstEditReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AstEditArgs = parse_args(args)?;
        let max_file_bytes = max_file_bytes(args.max_file_bytes)?;
        let target = resolve_target(&self.root, args.path.as_deref())?;
        let language =
            choose_language(&self.parsers, &self.root, args.language.as_deref(), &target)?;
        let context = parse_context(args.context.as_deref())?;
        let pattern = Pattern::new(language, &args.pattern, context).map_err(pattern_error)?;
        let root = self.root.clone();
        let path = target.path;
        let template = args.rewrite;
        let options = SearchOptions {
            max_file_bytes,
            cancel: Some(ctx.cancellation().flag()),
            ..SearchOptions::default()
        };
        let staged = blocking(move || {
            let label = |p: &std::path::Path| root.relative(p);
            stage_rewrite_with(&pattern, &template, &path, &label, &options)
                .map_err(|e| rewrite_error(&root, e))
        })
        .await?;
        if staged.cancelled {
            return report_output(&AstEditReport::cancelled());
        }
        let mut report = self.proposal(&staged);
        if staged.transaction.is_empty() {
            // Matches that were not staged are not "no matches".
            let nothing_matched = staged.unparsable.is_empty() && staged.skipped_matches.is_empty();
            report.status = if nothing_matched {
                EditStatus::NoMatches
            } else {
                EditStatus::NotStaged
            };
            report.replacements = 0;
            report.files.clear();
            report.warnings.clear();
            return report_output(&report);
        }
        let size = staged_bytes(&staged);
        if size > self.store.max_bytes {
            return Err(ToolError::new(
                ErrorKind::EditTooLarge,
                format!(
                    "the rewrite touches {} files and would hold {size} bytes, over the {} bytes \
                     a run may stage; nothing was staged; narrow `path` and stage it in parts",
                    staged.files.len(),
                    self.store.max_bytes
                ),
            )
            .with_detail("bytes", size)
            .with_detail("limit", self.store.max_bytes));
        }
        let (edit_id, evicted) = self.store.insert(staged);
        report.edit_id = Some(edit_id);
        if !evicted.is_empty() {
            report.staged_limits = Some(StagedLimits {
                edits: self.store.max_edits,
                bytes: self.store.max_bytes,
            });
            report.evicted = evicted;
        }
        report_output(&report)
    }
}

impl AstEditTool {
    /// The report of `staged` as a proposal (the caller settles its status and id).
    fn proposal(&self, staged: &StagedRewrite) -> AstEditReport {
        let root = &self.root;
        let mut skipped: Vec<SkippedRewrite> = staged
            .skipped_matches
            .iter()
            .map(|s| SkippedRewrite::WouldDelete {
                path: shown(root, &s.path),
                line: s.line,
                part: s.part.clone(),
                part_line: s.part_line,
                reason: s.reason.clone(),
            })
            .collect();
        skipped.extend(
            staged
                .unparsable
                .iter()
                .map(|u| SkippedRewrite::WouldNotParse {
                    path: shown(root, &u.path),
                    line: u.line,
                    rewritten_line: u.rewritten_line,
                    error: u.error.clone(),
                    text: u.text.clone(),
                    new_errors: u.new_errors,
                    replacements: u.replacements,
                    reason: unparsable_reason(u),
                }),
        );
        AstEditReport {
            status: EditStatus::Proposed,
            replacements: staged.replacements,
            files: staged
                .files
                .iter()
                .map(|f| StagedFileReport {
                    path: shown(root, &f.path),
                    replacements: f.replacements,
                    diff: f.diff.clone(),
                })
                .collect(),
            warnings: staged
                .warnings
                .iter()
                .map(|w| EditWarning {
                    kind: w.kind.name().to_owned(),
                    path: shown(root, &w.path),
                    line: w.line,
                    text: w.text.clone(),
                })
                .collect(),
            skipped_nested: staged.skipped_nested,
            skipped,
            skipped_files: super::grep::skipped_files(root, &staged.skipped),
            parse_errors: super::grep::parse_errors(root, &staged.parse_errors),
            parse_errors_total: staged.parse_errors_total,
            edit_id: None,
            evicted: Vec::new(),
            staged_limits: None,
        }
    }
}

/// Why a file whose rewrite would not parse is not staged, and what to do.
fn unparsable_reason(u: &cc_structural::UnparsableRewrite) -> String {
    format!(
        "the rewritten file would not parse: {} at line {} of the rewritten text (`{}`); the \
         file is not staged, so resolve accept cannot write it; check the template against \
         this match, or narrow the pattern",
        u.error, u.rewritten_line, u.text
    )
}

fn rewrite_error(root: &WorkspaceRoot, error: RewriteError) -> ToolError {
    match &error {
        RewriteError::Template(cc_structural::TemplateError::Unbound { name, .. }) => {
            ToolError::new(ErrorKind::UnboundMetavariable, error.to_string())
                .with_detail("name", name.as_str())
        }
        RewriteError::Template(_) => ToolError::invalid_arguments(error.to_string()),
        RewriteError::Overlap { .. } => {
            ToolError::new(ErrorKind::OverlappingMatches, error.to_string())
        }
        RewriteError::Search(_) => match error {
            RewriteError::Search(inner) => search_error(root, inner),
            other => ToolError::new(ErrorKind::Internal, other.to_string()),
        },
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

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<ResolveReport>())
    }

    fn parallel_safe(&self) -> bool {
        // Commits touching the same files must not interleave.
        false
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ResolveArgs = parse_args(args)?;
        let staged = match self.store.take(&args.edit_id) {
            Lookup::Found(staged) => *staged,
            Lookup::Expired => {
                return Err(ToolError::new(
                    ErrorKind::Expired,
                    format!(
                        "staged edit `{}` expired: it was evicted to make room for newer ones \
                         (a run keeps at most {} staged edits and {} bytes); nothing was \
                         written; run ast_edit again to stage it on the current files, and \
                         resolve edits before staging many more",
                        args.edit_id, self.store.max_edits, self.store.max_bytes
                    ),
                )
                .with_detail("edit_id", args.edit_id))
            }
            Lookup::Unknown => {
                let known = self.store.ids();
                return Err(ToolError::new(
                    ErrorKind::UnknownEdit,
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
            }
        };
        if args.action == Action::Discard {
            return report_output(&ResolveReport {
                status: ResolveStatus::Discarded,
                edit_id: args.edit_id,
                replacements: None,
                files: None,
                not_written: Vec::new(),
                diagnostics: None,
            });
        }
        let replacements = staged.replacements;
        let not_staged: Vec<String> = staged
            .unparsable
            .iter()
            .map(|u| shown(&self.root, &u.path))
            .collect();
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
                let report = ResolveReport {
                    status: ResolveStatus::Accepted,
                    edit_id: args.edit_id,
                    replacements: Some(replacements),
                    files: Some(written.iter().map(|p| shown(&self.root, p)).collect()),
                    not_written: not_staged,
                    diagnostics: None,
                };
                Ok(report_output(&report)?.with_written(written))
            }
            Err(error) => Err(error.with_detail("edit_id", args.edit_id)),
        }
    }
}
