//! An all-or-nothing change to several files, staged now and committed later.
//!
//! A [`Transaction`] holds, per file, the bytes captured when the change was staged and the
//! bytes to write. [`Transaction::commit`]:
//!
//! 1. re-reads every file and compares it with the captured bytes: any difference (or a file
//!    that vanished) rejects the whole change with [`CommitError::Stale`], naming every
//!    changed path, and nothing is written;
//! 2. writes each new content to a temporary file in the target's own directory, fsynced and
//!    given the original's permissions (a failure here removes the temporaries: nothing was
//!    touched);
//! 3. renames the temporaries over the targets one by one, checking each target once more
//!    right before its rename; if a rename (or that check) fails, every file already renamed
//!    is restored from the captured bytes the same way, so the tree ends all-old or all-new,
//!    and [`CommitError::Io`] says what failed and what was restored.
//!
//! Every file operation goes through the [`Workspace`] handle (beneath its root): a path
//! outside the root, or a symlink swapped in during the commit that leads out, fails that
//! step (and rolls back what was done), it never reaches outside.
//!
//! Creating, deleting and renaming files ([`FileOp::Create`], [`FileOp::Delete`],
//! [`FileOp::Rename`]; an LSP rename's `WorkspaceEdit` has all four) follow the same
//! protocol: a precondition captured at staging, checked first and again right before the
//! step, and an undo for the rollback (see [`Transaction::create`] and its siblings).

use std::path::{Path, PathBuf};

use crate::Workspace;

// Create, delete and rename (for LSP workspace edits): see that module.
mod file_ops;

/// One file operation of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileOp {
    /// Replace the content of an existing file.
    Replace {
        /// The file.
        path: PathBuf,
        /// Its bytes when the change was staged.
        original: Vec<u8>,
        /// The bytes to write.
        new: Vec<u8>,
    },
    /// Create a file that does not exist ([`Transaction::create`]).
    Create {
        /// The file.
        path: PathBuf,
        /// Its bytes.
        new: Vec<u8>,
        /// Folders above it that were missing at staging, outermost first.
        dirs: Vec<PathBuf>,
    },
    /// Delete a file or a folder ([`Transaction::delete`]).
    Delete {
        /// The file or folder.
        path: PathBuf,
        /// A file's bytes when staged; `None` for a folder.
        original: Option<Vec<u8>>,
    },
    /// Move a file or folder to a path that does not exist ([`Transaction::rename`]).
    Rename {
        /// Where it is.
        from: PathBuf,
        /// Where it goes.
        to: PathBuf,
        /// A file's bytes when staged; `None` for a folder.
        original: Option<Vec<u8>>,
        /// A file's new bytes, when its content changes too.
        new: Option<Vec<u8>>,
        /// Folders above `to` that were missing at staging, outermost first.
        dirs: Vec<PathBuf>,
    },
}

impl FileOp {
    /// The file the operation touches.
    pub fn path(&self) -> &Path {
        match self {
            FileOp::Replace { path, .. }
            | FileOp::Create { path, .. }
            | FileOp::Delete { path, .. } => path,
            FileOp::Rename { to, .. } => to,
        }
    }
}

/// Why a commit did not happen, or what a failed one restored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommitError {
    /// Files changed since staging; nothing was written.
    #[error("{} file(s) changed since the edit was staged: {}; nothing was written", .paths.len(), list(.paths))]
    Stale {
        /// Every file whose bytes differ from the staged ones (or that is gone).
        paths: Vec<PathBuf>,
    },
    /// Writing failed; every file already replaced was restored from the staged bytes.
    #[error("could not write `{}`: {message}; restored {} file(s){}", .path.display(), .restored.len(), unrestored_note(.unrestored))]
    Io {
        /// The file whose write failed.
        path: PathBuf,
        /// The operating system's complaint.
        message: String,
        /// Files that had been replaced and were put back as staged.
        restored: Vec<PathBuf>,
        /// Files that could not be put back, with why (empty unless the disk is failing).
        unrestored: Vec<(PathBuf, String)>,
    },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn unrestored_note(unrestored: &[(PathBuf, String)]) -> String {
    if unrestored.is_empty() {
        String::new()
    } else {
        format!(
            "; COULD NOT RESTORE {}",
            unrestored
                .iter()
                .map(|(p, e)| format!("{} ({e})", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Lets tests fail a commit at a chosen step (a full disk, a directory turned read-only).
pub trait FaultInjector {
    /// Called before the `index`-th rename, onto `path`; an error aborts the commit there.
    fn before_rename(&self, index: usize, path: &Path) -> std::io::Result<()>;
}

/// Fails the commit right before its step `.0` (0-based), as a full disk would there.
#[derive(Debug, Clone, Copy)]
pub struct FailAt(pub usize);

impl FaultInjector for FailAt {
    fn before_rename(&self, index: usize, _path: &Path) -> std::io::Result<()> {
        if index == self.0 {
            Err(std::io::Error::other(format!(
                "injected failure before step {index}"
            )))
        } else {
            Ok(())
        }
    }
}

/// Injects nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFaults;

impl FaultInjector for NoFaults {
    fn before_rename(&self, _index: usize, _path: &Path) -> std::io::Result<()> {
        Ok(())
    }
}

/// A set of file operations committed all together or not at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transaction {
    ops: Vec<FileOp>,
}

impl Transaction {
    /// An empty transaction.
    pub fn new() -> Self {
        Transaction::default()
    }

    /// Adds the replacement of `path`'s `original` bytes (captured now) by `new`.
    pub fn replace(&mut self, path: impl Into<PathBuf>, original: Vec<u8>, new: Vec<u8>) {
        self.ops.push(FileOp::Replace {
            path: path.into(),
            original,
            new,
        });
    }

    /// The operations, in commit order.
    pub fn ops(&self) -> &[FileOp] {
        &self.ops
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Files whose bytes on disk are not the staged ones.
    pub fn stale_paths(&self, ws: &Workspace) -> Vec<PathBuf> {
        self.ops
            .iter()
            .filter(|op| !matches_disk(ws, op))
            .map(|op| op.path().to_path_buf())
            .collect()
    }

    /// Commits every operation, or none: see the module docs. Returns the paths written.
    pub fn commit(&self, ws: &Workspace) -> Result<Vec<PathBuf>, CommitError> {
        self.commit_with(ws, &NoFaults)
    }

    /// [`commit`](Self::commit) with a fault injector (for tests of the rollback).
    pub fn commit_with(
        &self,
        ws: &Workspace,
        faults: &dyn FaultInjector,
    ) -> Result<Vec<PathBuf>, CommitError> {
        let stale = self.stale_paths(ws);
        if !stale.is_empty() {
            return Err(CommitError::Stale { paths: stale });
        }
        // Prepare every temporary first: a failure here has touched nothing.
        let mut prepared = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            match op {
                FileOp::Replace { path, new, .. } => match ws.stage_write(path, new) {
                    Ok(temp) => prepared.push(Some(temp)),
                    Err(error) => {
                        return Err(CommitError::Io {
                            path: path.clone(),
                            message: error.to_string(),
                            restored: Vec::new(),
                            unrestored: Vec::new(),
                        })
                    }
                },
                // Creates, deletes and renames have nothing to prepare.
                _ => prepared.push(None),
            }
        }
        let mut done: Vec<usize> = Vec::with_capacity(self.ops.len());
        for (index, (op, temp)) in self.ops.iter().zip(prepared).enumerate() {
            let path = op.path();
            // Last look: a write that slipped in after the stale check is not overwritten.
            if !matches_disk(ws, op) {
                let (restored, unrestored) = self.restore(ws, &done);
                if unrestored.is_empty() {
                    return Err(CommitError::Stale {
                        paths: vec![path.to_path_buf()],
                    });
                }
                return Err(CommitError::Io {
                    path: path.to_path_buf(),
                    message: "the file changed while the edit was being committed".to_owned(),
                    restored,
                    unrestored,
                });
            }
            let step = faults.before_rename(index, path).and_then(|()| match temp {
                Some(temp) => temp.persist(),
                None => file_ops::apply(ws, op, index),
            });
            if let Err(error) = step {
                let (restored, unrestored) = self.restore(ws, &done);
                return Err(CommitError::Io {
                    path: path.to_path_buf(),
                    message: error.to_string(),
                    restored,
                    unrestored,
                });
            }
            done.push(index);
        }
        for op in &self.ops {
            ws.sync_parent(op.path());
        }
        file_ops::finish(ws, &self.ops);
        Ok(self.ops.iter().map(|op| op.path().to_path_buf()).collect())
    }

    /// Puts back the staged bytes of the operations at `indices`.
    fn restore(&self, ws: &Workspace, indices: &[usize]) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
        let mut restored = Vec::new();
        let mut unrestored = Vec::new();
        for &index in indices.iter().rev() {
            let FileOp::Replace {
                path,
                original,
                new,
            } = &self.ops[index]
            else {
                let op = &self.ops[index];
                match file_ops::undo(ws, op, index) {
                    Ok(()) => restored.push(op.path().to_path_buf()),
                    Err(why) => unrestored.push((op.path().to_path_buf(), why)),
                }
                continue;
            };
            if ws.read(path).is_ok_and(|current| &current != new) {
                // Another writer got there after our rename: its bytes are not ours to undo.
                unrestored.push((
                    path.clone(),
                    "changed by another writer during the commit; left as it is".to_owned(),
                ));
                continue;
            }
            let result = replace_whole(ws, path, original);
            match result {
                Ok(()) => restored.push(path.clone()),
                Err(error) => unrestored.push((path.clone(), error.to_string())),
            }
        }
        restored.reverse();
        (restored, unrestored)
    }
}

/// Whether the file still holds the staged bytes.
fn matches_disk(ws: &Workspace, op: &FileOp) -> bool {
    match op {
        FileOp::Replace { path, original, .. } => {
            ws.read(path).is_ok_and(|current| &current == original)
        }
        other => file_ops::holds(ws, other),
    }
}

/// Replaces `path` whole with `content`, through a fsynced temporary file and a rename.
fn replace_whole(ws: &Workspace, path: &Path, content: &[u8]) -> std::io::Result<()> {
    ws.stage_write(path, content)?.persist()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "a1").unwrap();
        std::fs::write(&b, "b1").unwrap();
        let mut tx = Transaction::new();
        tx.replace(&a, b"a1".to_vec(), b"a2".to_vec());
        tx.replace(&b, b"b1".to_vec(), b"b2".to_vec());
        assert_eq!(tx.commit(&ws).unwrap(), [a.clone(), b.clone()]);
        assert_eq!(std::fs::read(&a).unwrap(), b"a2");
        assert_eq!(std::fs::read(&b).unwrap(), b"b2");
        // No temporaries are left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn stale_files_reject_everything() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "a1").unwrap();
        std::fs::write(&b, "b-changed").unwrap();
        let mut tx = Transaction::new();
        tx.replace(&a, b"a1".to_vec(), b"a2".to_vec());
        tx.replace(&b, b"b1".to_vec(), b"b2".to_vec());
        assert_eq!(
            tx.commit(&ws),
            Err(CommitError::Stale {
                paths: vec![b.clone()]
            })
        );
        assert_eq!(std::fs::read(&a).unwrap(), b"a1");
        std::fs::remove_file(&a).unwrap();
        let Err(CommitError::Stale { paths }) = tx.commit(&ws) else {
            panic!("a deleted file is stale too");
        };
        assert_eq!(paths, [a, b]);
    }

    #[test]
    fn a_failed_rename_restores_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let paths: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("f{i}"))).collect();
        let mut tx = Transaction::new();
        for (i, path) in paths.iter().enumerate() {
            std::fs::write(path, format!("old{i}")).unwrap();
            tx.replace(
                path,
                format!("old{i}").into_bytes(),
                format!("new{i}").into_bytes(),
            );
        }
        let error = tx.commit_with(&ws, &FailAt(2)).unwrap_err();
        let CommitError::Io {
            path,
            restored,
            unrestored,
            ..
        } = &error
        else {
            panic!("{error}");
        };
        assert_eq!(path, &paths[2]);
        assert_eq!(restored, &paths[..2]);
        assert!(unrestored.is_empty());
        for (i, path) in paths.iter().enumerate() {
            assert_eq!(std::fs::read(path).unwrap(), format!("old{i}").as_bytes());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
        assert!(error.to_string().contains("restored 2 file(s)"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let a = dir.path().join("run.sh");
        std::fs::write(&a, "old").unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut tx = Transaction::new();
        tx.replace(&a, b"old".to_vec(), b"new".to_vec());
        tx.commit(&ws).unwrap();
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }
}
