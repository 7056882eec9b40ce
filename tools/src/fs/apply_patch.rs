//! `apply_patch`: a unified diff over one or more files, applied all or nothing.
//!
//! The diff is read and each file's hunks applied in memory by [`cc_workspace::patch`]
//! (exact, no fuzz). Every file's new content is computed before anything is written; a hunk that
//! does not apply refuses the whole patch, naming the file, the hunk and the line that
//! differs. The files are then written by the shared file transaction
//! (`cc_structural::Transaction`): checked against the bytes the patch was computed from,
//! written through fsynced temporary files, and restored if one write fails.

use std::path::PathBuf;

use cc_workspace::patch::{self, FilePatch};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ErrorKind, ToolError};
use crate::report::files::{PatchAction, PatchReport, PatchedFile};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::report_output;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// `apply_patch`: apply a unified diff inside the workspace.
#[derive(Debug, Clone)]
pub struct ApplyPatchTool {
    root: WorkspaceRoot,
}

impl ApplyPatchTool {
    /// An `apply_patch` tool for `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        ApplyPatchTool { root }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApplyPatchArgs {
    /// A unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks), over one or more
    /// files. `--- /dev/null` creates a file, `+++ /dev/null` deletes one. Paths are relative
    /// to the workspace root; `a/` and `b/` prefixes are stripped.
    patch: String,
}

/// What one file becomes.
struct Planned {
    path: PathBuf,
    shown: String,
    before: Option<Vec<u8>>,
    after: Option<String>,
    hunks: usize,
    added: usize,
    removed: usize,
}

#[async_trait]
impl Tool for ApplyPatchTool {
    fn name(&self) -> &str {
        "apply_patch"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> &str {
        "Apply a unified diff (one or more files; `--- /dev/null` creates a file, `+++ \
         /dev/null` deletes one) inside the workspace, all or nothing: if any hunk does not \
         match the file exactly, nothing is written and the error says which hunk and line. \
         Language-server diagnostics that the patch introduced are attached."
    }

    fn input_schema(&self) -> Value {
        schema_for::<ApplyPatchArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<PatchReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ApplyPatchArgs = parse_args(args)?;
        let files = patch::parse(&args.patch).map_err(|message| {
            ToolError::new(
                ErrorKind::InvalidPatch,
                format!("the patch cannot be read: {message}"),
            )
        })?;
        let mut planned: Vec<Planned> = Vec::new();
        for file in &files {
            let next = self.plan_file(file, &planned)?;
            planned.push(next);
        }
        commit(ctx, &self.root, &planned).await?;
        let files = planned
            .iter()
            .map(|p| PatchedFile {
                path: p.shown.clone(),
                action: match (&p.before, &p.after) {
                    (None, _) => PatchAction::Created,
                    (Some(_), None) => PatchAction::Deleted,
                    _ => PatchAction::Modified,
                },
                hunks: p.hunks,
                added: p.added,
                removed: p.removed,
            })
            .collect();
        Ok(report_output(&PatchReport {
            files,
            diagnostics: None,
        })?
        .with_written(planned.iter().map(|p| p.path.clone())))
    }
}

impl ApplyPatchTool {
    /// One file's section of the patch, checked and applied in memory: what the commit will
    /// write (nothing is written here). `planned`: the files before it (each may appear once).
    fn plan_file(&self, file: &FilePatch, planned: &[Planned]) -> Result<Planned, ToolError> {
        let target = file.new.as_ref().or(file.old.as_ref()).ok_or_else(|| {
            ToolError::new(
                ErrorKind::InvalidPatch,
                "a file patch goes from /dev/null to /dev/null",
            )
        })?;
        let path = self.root.resolve(target)?;
        let shown = self.root.relative(&path);
        if planned.iter().any(|p| p.path == path) {
            return Err(ToolError::new(
                ErrorKind::InvalidPatch,
                format!("`{shown}` appears twice in the patch; give each file one section"),
            ));
        }
        if file.old.is_some() && file.new.is_some() && file.old != file.new {
            return Err(ToolError::new(
                ErrorKind::InvalidPatch,
                format!(
                    "renames are not supported (`{}` → `{}`); patch the content and move \
                     the file separately",
                    file.old.as_deref().unwrap_or_default(),
                    file.new.as_deref().unwrap_or_default()
                ),
            ));
        }
        let before = super::read_bytes(
            &self.root,
            &path,
            &shown,
            super::FileLimits::default().edit_bytes,
            "patching",
        )?;
        let original = match (&before, file.old.is_some()) {
            (Some(_), false) => {
                return Err(ToolError::new(
                    ErrorKind::AlreadyExists,
                    format!("the patch creates `{shown}`, but it already exists"),
                ))
            }
            (None, true) => {
                return Err(ToolError::new(
                    ErrorKind::NotFound,
                    format!("the patch changes `{shown}`, which does not exist"),
                ))
            }
            (Some(bytes), true) => String::from_utf8(bytes.clone()).map_err(|_| {
                ToolError::new(ErrorKind::NotText, format!("`{shown}` is not UTF-8 text"))
            })?,
            (None, false) => String::new(),
        };
        let applied = patch::apply(&original, &file.hunks, &shown).map_err(|mismatch| {
            ToolError::new(
                ErrorKind::PatchDoesNotApply,
                format!("{mismatch}. Read the file and make the patch from its current content"),
            )
            .with_detail("path", shown.clone())
        })?;
        let (added, removed) = file.counts();
        let after = if file.new.is_none() {
            if !applied.is_empty() {
                return Err(ToolError::new(
                    ErrorKind::PatchDoesNotApply,
                    format!("the patch deletes `{shown}` but does not remove all of its lines"),
                ));
            }
            None
        } else {
            Some(applied)
        };
        Ok(Planned {
            path,
            shown,
            before,
            after,
            hunks: file.hunks.len(),
            added,
            removed,
        })
    }
}

/// Writes every planned file, or none, through the shared file transaction
/// (`cc_structural::Transaction`, as `resolve` and `lsp_rename` do): each file is checked
/// against the bytes the patch was computed from, written through an fsynced temporary file
/// and a rename, and everything already written is restored if one step fails.
async fn commit(
    ctx: &CallContext,
    root: &WorkspaceRoot,
    planned: &[Planned],
) -> Result<(), ToolError> {
    let mut tx = cc_structural::Transaction::new();
    for plan in planned {
        match (&plan.before, &plan.after) {
            (Some(before), Some(after)) => {
                tx.replace(&plan.path, before.clone(), after.clone().into_bytes())
            }
            (None, Some(after)) => tx.create(&plan.path, after.clone().into_bytes()),
            (Some(before), None) => tx.delete(&plan.path, Some(before.clone())),
            (None, None) => {}
        }
    }
    crate::commit::commit_checked(
        ctx,
        root,
        tx,
        "the patch",
        "read the files and make the patch from their current content",
    )
    .await
    .map(|_| ())
}
