//! Applying a server's `WorkspaceEdit` all or nothing, through the same file transaction as
//! `resolve` (`cc_workspace::Transaction`): the net change of every file is computed first
//! (`cc_lsp_client::workspace_edit`), every path must resolve inside the workspace (the same
//! check as every other path argument, [`WorkspaceRoot::resolve`]), and the commit, beneath
//! the root's directory handle, re-checks each file against what the change was computed
//! from, writes through fsynced temporary files and renames, and puts everything back if one
//! step fails.
//!
//! [`TransactionApplier`] answers `workspace/applyEdit` requests the same way.

use std::path::{Path, PathBuf};

use cc_lsp_client::lsp_types::WorkspaceEdit;
use cc_lsp_client::workspace_edit::{self, FileChange};
use cc_lsp_client::{ApplyEdit, ApplyError, PositionEncoding};
use cc_workspace::Transaction;

use crate::root::WorkspaceRoot;

/// The transaction that makes `changes`.
pub(crate) fn transaction(changes: &[FileChange]) -> Transaction {
    let mut tx = Transaction::new();
    for change in changes {
        match change.clone() {
            FileChange::Modify {
                path,
                original,
                new,
                ..
            } => tx.replace(path, original, new),
            FileChange::Create { path, content, .. } => tx.create(path, content),
            FileChange::Rename {
                from,
                to,
                original,
                new,
                ..
            } => tx.rename(from, to, original, new),
            FileChange::Delete { path, original } => tx.delete(path, original),
        }
    }
    tx
}

pub(crate) use cc_lsp_client::workspace_edit::touched;

/// Refuses a change that reaches outside the workspace: every path must resolve inside it,
/// symlinks followed, as every path argument of every tool.
pub(crate) fn check_inside(root: &WorkspaceRoot, changes: &[FileChange]) -> Result<(), String> {
    let outside: Vec<String> = touched(changes)
        .iter()
        .filter(|path| !path.is_absolute() || root.workspace().resolve(path).is_err())
        .map(|path| path.display().to_string())
        .collect();
    if outside.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the edit reaches outside the workspace ({}); nothing was changed",
            outside.join(", ")
        ))
    }
}

/// Applies the edits servers ask for (`workspace/applyEdit`) inside the workspace, all or
/// nothing.
#[derive(Debug, Clone)]
pub struct TransactionApplier {
    root: WorkspaceRoot,
    graph: Option<std::sync::Arc<crate::graph::GraphIndex>>,
}

impl TransactionApplier {
    /// An applier confined to `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        TransactionApplier { root, graph: None }
    }

    /// Also brings the files it writes up to date in `graph` (when open) before answering.
    pub fn with_graph(mut self, graph: Option<std::sync::Arc<crate::graph::GraphIndex>>) -> Self {
        self.graph = graph;
        self
    }
}

impl ApplyEdit for TransactionApplier {
    fn apply(
        &self,
        edit: &WorkspaceEdit,
        encoding: PositionEncoding,
        versions: &dyn Fn(&Path) -> Option<i64>,
    ) -> Result<Vec<PathBuf>, ApplyError> {
        let changes = workspace_edit::plan(edit, encoding, versions)?;
        check_inside(&self.root, &changes).map_err(ApplyError::Refused)?;
        let tx = transaction(&changes);
        for write in crate::commit::planned_writes(&tx) {
            self.root
                .expect_write(&write.path, write.content.as_deref());
        }
        tx.commit(self.root.workspace()).map_err(|error| {
            ApplyError::Refused(
                crate::commit::commit_error(
                    &self.root,
                    &error,
                    "the server's edit",
                    "the server may ask again",
                )
                .message()
                .to_owned(),
            )
        })?;
        let written = touched(&changes);
        if let Some(graph) = &self.graph {
            graph.update_blocking(&written);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn applies_inside_and_refuses_outside() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(ws.join("a.ts"), "export const a = 1;\n").unwrap();
        let root = WorkspaceRoot::new(&ws).unwrap();
        let applier = TransactionApplier::new(root);
        let uri = |name: &str| cc_lsp_client::uri::path_to_uri(&ws.join(name));
        let range =
            json!({"start": {"line": 0, "character": 13}, "end": {"line": 0, "character": 14}});
        let edit = json!({"documentChanges": [
            {"textDocument": {"uri": uri("a.ts"), "version": 1}, "edits": [{"range": range, "newText": "one"}]},
            {"kind": "create", "uri": uri("gen/c.ts")},
            {"textDocument": {"uri": uri("gen/c.ts"), "version": null}, "edits": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "c\n"}]},
        ]});
        let edit = workspace_edit::parse(edit).unwrap();
        let written = applier
            .apply(&edit, PositionEncoding::Utf16, &|_| Some(1))
            .unwrap();
        assert_eq!(written, [ws.join("a.ts"), ws.join("gen/c.ts")]);
        assert_eq!(
            std::fs::read_to_string(ws.join("a.ts")).unwrap(),
            "export const one = 1;\n"
        );
        assert_eq!(std::fs::read_to_string(ws.join("gen/c.ts")).unwrap(), "c\n");
        let outside =
            json!({"changes": {"file:///etc/hostname": [{"range": range, "newText": "x"}]}});
        let outside = workspace_edit::parse(outside).unwrap();
        let error = applier
            .apply(&outside, PositionEncoding::Utf16, &|_| None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("outside the workspace"), "{error}");
    }
}
