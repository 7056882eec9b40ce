//! Creating, deleting and renaming files inside a [`Transaction`] (an LSP `WorkspaceEdit`
//! carries all three beside its text edits), under the same protocol as a replacement: a
//! precondition captured at staging, checked before anything is written and again right
//! before the step, and an undo for the rollback and the recovery (the steps themselves are
//! in `steps.rs`, journaled like every other).
//!
//! - **create**: the file must not exist. Folders above it that were missing at staging are
//!   created (and must still be missing at commit); an undo removes the file and them. The
//!   content goes to a temporary file, fsynced, then hard-linked into place, so an existing
//!   file is never overwritten. The journal holds the new bytes, so a recovery can finish it.
//! - **delete**: a file must hold its staged bytes, a folder must still be a folder. It is
//!   first moved aside to a hidden name in its own folder (`.cc-deleted-*`), and removed
//!   only once the whole commit has succeeded; an undo moves it back (or, for a file whose
//!   aside is gone, writes the journal's backup).
//! - **rename**: the source must be as staged (bytes for a file) and the target must not
//!   exist; a file may get new bytes at its new place in the same step (through a
//!   temporary file). An undo puts the old bytes back and moves it back.
//!
//! Stage the net effect of a sequence, not its steps: a file created and then edited is one
//! create with the final bytes; a file edited and renamed is one rename with new bytes.
//! Each path may appear in one operation.

use std::path::{Path, PathBuf};

use super::{FileOp, Transaction};
use crate::{FileKind, Workspace};

impl Transaction {
    /// Adds the creation of `path` (which must not exist) holding `new`; missing folders
    /// above it are created too.
    pub fn create(&mut self, path: impl Into<PathBuf>, new: Vec<u8>) {
        let path = path.into();
        let dirs = self.missing_dirs(&path);
        self.ops.push(FileOp::Create { path, new, dirs });
    }

    /// Adds the deletion of `path`: a file holding `original` (as captured now), or, with
    /// `None`, a folder and everything in it.
    pub fn delete(&mut self, path: impl Into<PathBuf>, original: Option<Vec<u8>>) {
        self.ops.push(FileOp::Delete {
            path: path.into(),
            original,
        });
    }

    /// Adds the move of `from` (a file holding `original`, or with `None` a folder) to `to`,
    /// which must not exist, and for a file with `new` bytes, its new content; missing
    /// folders above `to` are created too.
    pub fn rename(
        &mut self,
        from: impl Into<PathBuf>,
        to: impl Into<PathBuf>,
        original: Option<Vec<u8>>,
        new: Option<Vec<u8>>,
    ) {
        let to = to.into();
        let dirs = self.missing_dirs(&to);
        self.ops.push(FileOp::Rename {
            from: from.into(),
            to,
            original,
            new,
            dirs,
        });
    }

    /// Folders above `path` that do not exist now, outermost first, leaving out those an
    /// earlier operation already creates.
    fn missing_dirs(&self, path: &Path) -> Vec<PathBuf> {
        let claimed: Vec<&PathBuf> = self
            .ops
            .iter()
            .flat_map(|op| match op {
                FileOp::Create { dirs, .. } | FileOp::Rename { dirs, .. } => dirs.iter(),
                _ => [].iter(),
            })
            .collect();
        let mut dirs: Vec<PathBuf> = path
            .ancestors()
            .skip(1)
            .take_while(|dir| !dir.as_os_str().is_empty() && !exists(dir))
            .filter(|dir| !claimed.iter().any(|c| c.as_path() == *dir))
            .map(Path::to_path_buf)
            .collect();
        dirs.reverse();
        dirs
    }
}

/// Whether anything is at `path` now, for staging (which only records what is missing; the
/// commit checks again beneath the root).
fn exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

/// Whether `path` is as staged: a file with `original`'s bytes, or a folder for `None`.
fn as_staged(ws: &Workspace, path: &Path, original: Option<&Vec<u8>>) -> bool {
    match original {
        Some(bytes) => ws.read(path).is_ok_and(|current| &current == bytes),
        None => matches!(ws.kind(path), Ok(FileKind::Directory)),
    }
}

/// The precondition of a create, delete or rename, on the disk as it is now.
pub(super) fn holds(ws: &Workspace, op: &FileOp) -> bool {
    match op {
        FileOp::Create { path, dirs, .. } => !ws.exists(path) && !dirs.iter().any(|d| ws.exists(d)),
        FileOp::Delete { path, original } => as_staged(ws, path, original.as_ref()),
        FileOp::Rename {
            from,
            to,
            original,
            dirs,
            ..
        } => {
            as_staged(ws, from, original.as_ref())
                && !ws.exists(to)
                && !dirs.iter().any(|d| ws.exists(d))
        }
        FileOp::Replace { .. } => true,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CommitError, FailAt};
    use super::*;
    use crate::Workspace;
    use cc_test_support::tree_snapshot as tree;

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn create_delete_and_rename_commit_together() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = dir.path();
        std::fs::write(root.join("old.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("gone.py"), "y = 2\n").unwrap();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/m.py"), "z = 3\n").unwrap();
        let mut tx = Transaction::new();
        tx.rename(
            root.join("old.py"),
            root.join("new/deep/new.py"),
            Some(b"x = 1\n".to_vec()),
            Some(b"x = 10\n".to_vec()),
        );
        tx.create(root.join("new/deep/extra.py"), b"e = 5\n".to_vec());
        tx.delete(root.join("gone.py"), Some(b"y = 2\n".to_vec()));
        tx.rename(root.join("pkg"), root.join("lib"), None, None);
        tx.commit(&ws).unwrap();
        assert_eq!(read(&root.join("new/deep/new.py")), "x = 10\n");
        assert_eq!(read(&root.join("new/deep/extra.py")), "e = 5\n");
        assert_eq!(read(&root.join("lib/m.py")), "z = 3\n");
        assert!(!root.join("old.py").exists() && !root.join("gone.py").exists());
        assert!(!root.join("pkg").exists());
        // Nothing hidden is left behind.
        let hidden: Vec<_> = tree(root)
            .into_iter()
            .filter(|(p, _)| p.file_name().unwrap().to_string_lossy().starts_with(".cc-"))
            .collect();
        assert!(hidden.is_empty(), "{hidden:?}");
    }

    #[test]
    fn a_failure_at_any_step_leaves_the_tree_byte_for_byte() {
        for fail_at in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let ws = Workspace::new(dir.path()).unwrap();
            let root = dir.path();
            std::fs::write(root.join("a.py"), "a\n").unwrap();
            std::fs::write(root.join("b.py"), "b\n").unwrap();
            std::fs::create_dir(root.join("pkg")).unwrap();
            std::fs::write(root.join("pkg/m.py"), "m\n").unwrap();
            std::fs::create_dir(root.join("pkg2")).unwrap();
            let before = tree(root);
            let mut tx = Transaction::new();
            tx.replace(root.join("b.py"), b"b\n".to_vec(), b"B\n".to_vec());
            tx.rename(
                root.join("a.py"),
                root.join("sub/a2.py"),
                Some(b"a\n".to_vec()),
                Some(b"A\n".to_vec()),
            );
            tx.create(root.join("sub/c.py"), b"c\n".to_vec());
            tx.delete(root.join("pkg"), None);
            tx.delete(root.join("pkg2"), None);
            let error = tx.commit_with(&ws, &FailAt(fail_at)).unwrap_err();
            let CommitError::Io { unrestored, .. } = &error else {
                panic!("{error}");
            };
            assert!(unrestored.is_empty(), "step {fail_at}: {error}");
            assert_eq!(tree(root), before, "step {fail_at}: {error}");
        }
    }

    #[test]
    fn preconditions_are_staged_state() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = dir.path();
        std::fs::write(root.join("a"), "a").unwrap();
        std::fs::write(root.join("taken"), "t").unwrap();
        let mut tx = Transaction::new();
        tx.create(root.join("taken"), b"new".to_vec());
        tx.rename(
            root.join("a"),
            root.join("b"),
            Some(b"not a".to_vec()),
            None,
        );
        tx.delete(root.join("missing"), Some(Vec::new()));
        let Err(CommitError::Stale { paths }) = tx.commit(&ws) else {
            panic!("stale");
        };
        assert_eq!(
            paths,
            [root.join("taken"), root.join("b"), root.join("missing")]
        );
        assert_eq!(read(&root.join("taken")), "t");
        assert_eq!(read(&root.join("a")), "a");
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_folder_midway_restores_everything() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = dir.path();
        std::fs::write(root.join("a"), "a").unwrap();
        std::fs::create_dir(root.join("locked")).unwrap();
        std::fs::write(root.join("locked/b"), "b").unwrap();
        let before = tree(root);
        let mut tx = Transaction::new();
        tx.replace(root.join("a"), b"a".to_vec(), b"A".to_vec());
        tx.create(root.join("locked/new"), b"n".to_vec());
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o555))
            .unwrap();
        let result = tx.commit(&ws);
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        // Root ignores permissions; then the commit goes through, which is fine too.
        if let Err(error) = result {
            assert!(matches!(error, CommitError::Io { .. }), "{error}");
            assert_eq!(tree(root), before);
        }
    }
}
