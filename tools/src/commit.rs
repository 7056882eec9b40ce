//! Committing a multi-file change all or nothing, and saying what happened when it could not:
//! `resolve`, `lsp_rename`, `apply_patch` and servers' `workspace/applyEdit` all go through
//! [`cc_workspace::Transaction`], committed beneath the run's root handle (the one
//! confinement layer), and report its failures the same way.

use std::path::PathBuf;

use cc_workspace::{CommitError, Transaction};
use serde_json::{json, Value};

use crate::error::{kinds, ToolError};
use crate::root::WorkspaceRoot;

/// Commits `tx` on a blocking thread. `what` names the change in messages ("edit_3", "the
/// rename"); `again` tells the agent what to do after a failure.
pub(crate) async fn commit(
    root: &WorkspaceRoot,
    tx: Transaction,
    what: &str,
    again: &str,
) -> Result<Vec<PathBuf>, ToolError> {
    let workspace = root.workspace().clone();
    let committed = tokio::task::spawn_blocking(move || tx.commit(&workspace))
        .await
        .map_err(|error| ToolError::internal(format!("the commit did not finish: {error}")))?;
    committed.map_err(|error| commit_error(root, &error, what, again))
}

/// A failed commit as a tool error: `stale` naming the changed files, or `io` naming the file
/// that failed, what was restored and anything that could not be. A step the confinement
/// layer refused (a symlink out, swapped in during the commit) is `outside_root`.
pub(crate) fn commit_error(
    root: &WorkspaceRoot,
    error: &CommitError,
    what: &str,
    again: &str,
) -> ToolError {
    match error {
        CommitError::Stale { paths } => {
            let shown: Vec<String> = paths.iter().map(|p| root.relative(p)).collect();
            ToolError::new(
                kinds::STALE,
                format!(
                    "{} changed since {what} was staged, so nothing was written; {again}",
                    shown.join(", ")
                ),
            )
            .with_detail("paths", shown)
        }
        CommitError::Io {
            path,
            message,
            restored,
            unrestored,
        } => {
            let shown = root.relative(path);
            let restored: Vec<String> = restored.iter().map(|p| root.relative(p)).collect();
            let outcome = if unrestored.is_empty() {
                format!(
                    "nothing was changed: the {} file(s) already written were restored",
                    restored.len()
                )
            } else {
                format!(
                    "{} file(s) were restored but {} could not be: {}",
                    restored.len(),
                    unrestored.len(),
                    unrestored
                        .iter()
                        .map(|(p, why)| format!("{} ({why})", root.relative(p)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let unrestored: Vec<Value> = unrestored
                .iter()
                .map(|(p, why)| json!({"path": root.relative(p), "reason": why}))
                .collect();
            let kind = if message.contains("outside the workspace root") {
                kinds::OUTSIDE_ROOT
            } else {
                kinds::IO
            };
            ToolError::new(
                kind,
                format!(
                    "could not write `{shown}` while applying {what}: {message}; {outcome}; \
                     {again}"
                ),
            )
            .with_detail("path", shown)
            .with_detail("restored", restored)
            .with_detail("unrestored", unrestored)
        }
    }
}
