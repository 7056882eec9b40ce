//! Committing a multi-file change all or nothing, and saying what happened when it could not:
//! `resolve`, `lsp_rename`, `apply_patch` and servers' `workspace/applyEdit` all go through
//! [`cc_workspace::Transaction`], committed beneath the run's root handle (the one
//! confinement layer), and report its failures the same way.

use std::path::PathBuf;

use cc_workspace::{CommitError, FileOp, Transaction};
use serde_json::{json, Value};

use crate::error::{ErrorKind, ToolError};
use crate::registry::PlannedWrite;
use crate::root::WorkspaceRoot;
use crate::tool::CallContext;

/// What `tx` will write, for the diagnostics hook's baseline ([`CallContext::before_write`]).
pub(crate) fn planned_writes(tx: &Transaction) -> Vec<PlannedWrite> {
    let mut planned = Vec::new();
    for op in tx.ops() {
        match op {
            FileOp::Replace { path, new, .. } | FileOp::Create { path, new, .. } => {
                planned.push(PlannedWrite {
                    path: path.clone(),
                    content: Some(new.clone()),
                });
            }
            FileOp::Delete { path, .. } => planned.push(PlannedWrite {
                path: path.clone(),
                content: None,
            }),
            FileOp::Rename {
                from,
                to,
                original,
                new,
                ..
            } => {
                planned.push(PlannedWrite {
                    path: from.clone(),
                    content: None,
                });
                planned.push(PlannedWrite {
                    path: to.clone(),
                    content: new.clone().or_else(|| original.clone()),
                });
            }
            _ => {}
        }
    }
    planned
}

/// Tells the run's diagnostics hook what `tx` will write, then commits it (see [`commit`]).
pub(crate) async fn commit_checked(
    ctx: &CallContext,
    root: &WorkspaceRoot,
    tx: Transaction,
    what: &str,
    again: &str,
) -> Result<Vec<PathBuf>, ToolError> {
    ctx.before_write(&planned_writes(&tx)).await;
    commit(root, tx, what, again).await
}

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
                ErrorKind::Stale,
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
                ErrorKind::OutsideRoot
            } else {
                ErrorKind::Io
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
        CommitError::Journal { .. } => ToolError::new(
            ErrorKind::Io,
            format!("{what} was not applied: {error}; {again}"),
        ),
        // Only a test's fault injector stops a commit this way.
        CommitError::Interrupted { .. } => {
            ToolError::internal(format!("{what} was interrupted: {error}"))
        }
    }
}
