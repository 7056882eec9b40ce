//! An all-or-nothing change to several files, staged now and committed later, that stays
//! all or nothing across a crash.
//!
//! A [`Transaction`] holds, per file, the bytes captured when the change was staged and the
//! bytes to write. [`Transaction::commit`]:
//!
//! 0. first recovers what a crash left on this root ([`Workspace::recover`]: commits of dead
//!    processes are finished or undone; [`Workspace::take_recoveries`] hands the reports
//!    out), so no new commit starts over a half-done one;
//! 1. re-reads every file and compares it with the captured bytes: any difference (or a file
//!    that vanished) rejects the whole change with [`CommitError::Stale`], naming every
//!    changed path, and nothing is written;
//! 2. writes the **journal** outside the tree, in the run's state folder
//!    ([`Workspace::journal_dir`]: `$XDG_STATE_HOME/cc/journal/<hash of the root>/`, else
//!    `~/.local/state/cc/…`, or [`Workspace::with_state_dir`]): every target, the name of its
//!    temporary file (chosen now, before any exists), the folders it creates, digests of its
//!    old and new contents, and the backups (the old bytes of every file it replaces, deletes
//!    or renames) — fsynced, with its folder entry, and locked (`flock`) while the commit
//!    runs. See `journal.rs` for the format;
//! 3. writes each replacement's new content to its temporary file in the target's own
//!    directory, fsynced and given the original's permissions (a failure here removes them:
//!    no target was touched);
//! 4. journals the committing phase (fsynced), then applies the steps one by one: renames
//!    the temporaries over the targets, creates, moves aside what is deleted, renames,
//!    checking each target once more right before its step. If a step (or that check) fails,
//!    the journal says so and every step already done is undone from the backups, so the tree
//!    ends all-old, and [`CommitError::Io`] says what failed and what was restored;
//! 5. fsyncs the folders it changed, removes what deletions moved aside, and removes the
//!    journal.
//!
//! **A crash at any point** (a `kill -9`, a power cut once the journal is on disk) leaves a
//! journal whose lock the kernel has released. The next run's recovery (at its start, and
//! inside every commit before it commits) takes each such journal and, from what the disk
//! holds, rolls it forward when every remaining step can be completed exactly (the
//! remaining temporaries are there with the journaled digest), otherwise back from the
//! backups: the tree ends all-old or all-new, with every temporary file the journal names
//! removed. A target that holds neither its old nor its new content by then was changed by
//! someone else after the crash: it is left as it is and the report says so. A commit in
//! progress in another live process holds its lock and is never touched. See `recover.rs`.
//!
//! Every file operation goes through the [`Workspace`] handle (beneath its root): a path
//! outside the root, or a symlink swapped in during the commit that leads out, fails that
//! step (and rolls back what was done), it never reaches outside.
//!
//! Creating, deleting and renaming files ([`FileOp::Create`], [`FileOp::Delete`],
//! [`FileOp::Rename`]; an LSP rename's `WorkspaceEdit` has all four) follow the same
//! protocol: a precondition captured at staging, checked first and again right before the
//! step, and an undo (see [`Transaction::create`] and its siblings, and `steps.rs`).

use std::path::{Path, PathBuf};

use crate::Workspace;

// Create, delete and rename (for LSP workspace edits): see that module.
mod file_ops;
// The journal's format, its lock, its phases.
mod journal;
// Finishing or undoing interrupted commits.
pub mod recover;
// Each step forward and backward, inferred from the disk.
mod steps;

pub use journal::Phase;
pub use recover::{utc, Direction, RecoveredFile, Recovery, RecoveryReport};
pub use steps::Outcome;

use journal::{Digest, Entry, Journal, Plan};
use steps::{Crash, Engine};

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
    /// The commit journal could not be written (no state folder, a full disk, a folder
    /// without write permission); nothing was written in the tree.
    #[error("could not write the commit journal{}: {message}; nothing was written", .dir.as_ref().map(|d| format!(" in {}", d.display())).unwrap_or_default())]
    Journal {
        /// The journal folder, when one is known.
        dir: Option<PathBuf>,
        /// What went wrong.
        message: String,
    },
    /// A fault injector stopped the commit (or a recovery) at a crash point, as a crash
    /// would: nothing was cleaned up and the journal is left for the next recovery. Only
    /// tests inject these.
    #[error("stopped at crash point {point} ({step}) as a crash would; the journal is left for recovery")]
    Interrupted {
        /// The crash point's index.
        point: usize,
        /// Where it was.
        step: String,
    },
}

fn interrupted(Crash(point, step): Crash) -> CommitError {
    CommitError::Interrupted { point, step }
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

/// A place in the commit protocol (or a recovery) where a crash can happen: before each
/// change to the disk, numbered in the order they are reached.
#[derive(Debug, Clone, Copy)]
pub struct CrashPoint<'a> {
    /// 0 for the first point of this commit or recovery, then 1, 2, …
    pub index: usize,
    /// What is about to happen (`rename the temporary file over`, …).
    pub step: &'static str,
    /// The path it happens to.
    pub path: &'a Path,
}

/// Lets tests fail a commit at a chosen step (a full disk, a directory turned read-only),
/// or stop it there as a crash would.
pub trait FaultInjector {
    /// Called before the `index`-th step is applied, onto `path`; an error fails the commit
    /// there, and it rolls back what it did.
    fn before_rename(&self, _index: usize, _path: &Path) -> std::io::Result<()> {
        Ok(())
    }

    /// Called at every crash point; `true` stops the commit (or recovery) right there, as if
    /// the process had died: nothing is cleaned up, temporary files and the journal stay
    /// (its lock released, as the kernel would), and it returns
    /// [`CommitError::Interrupted`].
    fn crash_here(&self, _point: CrashPoint<'_>) -> bool {
        false
    }
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

/// Stops the commit (or recovery) at crash point `.0`, as a `kill -9` there would.
#[derive(Debug, Clone, Copy)]
pub struct CrashAt(pub usize);

impl FaultInjector for CrashAt {
    fn crash_here(&self, point: CrashPoint<'_>) -> bool {
        point.index == self.0
    }
}

/// Crashes nowhere, and records every crash point passed (`step path`), to learn how many
/// a commit has.
#[derive(Debug, Default)]
pub struct RecordCrashPoints {
    seen: std::sync::Mutex<Vec<String>>,
}

impl RecordCrashPoints {
    /// The points passed so far, in order.
    pub fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .map(|seen| seen.clone())
            .unwrap_or_default()
    }
}

impl FaultInjector for RecordCrashPoints {
    fn crash_here(&self, point: CrashPoint<'_>) -> bool {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(format!("{} {}", point.step, point.path.display()));
        }
        false
    }
}

/// Injects nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFaults;

impl FaultInjector for NoFaults {}

/// A set of file operations committed all together or not at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transaction {
    ops: Vec<FileOp>,
}

/// Why a commit rolls back.
enum Abort {
    /// The step's target changed since staging: its last look failed.
    Stale,
    /// The step failed, with this message.
    Io(String),
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

    /// [`commit`](Self::commit) with a fault injector (for tests of the rollback, and of
    /// crashes at every step).
    pub fn commit_with(
        &self,
        ws: &Workspace,
        faults: &dyn FaultInjector,
    ) -> Result<Vec<PathBuf>, CommitError> {
        // Whatever a crash left is put right first (NoFaults: this recovery never stops).
        if let Ok(report) = recover::recover(ws, &NoFaults) {
            ws.log_recoveries(report.recovered);
        }
        let stale = self.stale_paths(ws);
        if !stale.is_empty() {
            return Err(CommitError::Stale { paths: stale });
        }
        if self.ops.is_empty() {
            return Ok(Vec::new());
        }
        let Some(dir) = ws.journal_dir() else {
            return Err(CommitError::Journal {
                dir: None,
                message: "no state folder is known (neither XDG_STATE_HOME nor HOME is set); \
                          set one, or give the workspace one with Workspace::with_state_dir"
                    .to_owned(),
            });
        };
        let plan = self.plan(ws)?;
        let engine = Engine::new(ws, faults);
        let journal = Journal::create(&dir, &plan).map_err(|error| CommitError::Journal {
            dir: Some(dir.clone()),
            message: error.to_string(),
        })?;
        engine
            .point("write the temporary files", journal.path())
            .map_err(interrupted)?;
        let mut journal = self.stage_replacements(&engine, journal, &plan)?;
        engine
            .point("journal the committing phase", journal.path())
            .map_err(interrupted)?;
        if let Err(error) = journal.mark(Phase::Committing) {
            for entry in &plan.entries {
                engine.remove_temp(entry).map_err(interrupted)?;
            }
            let _ = journal.remove();
            return Err(CommitError::Journal {
                dir: Some(dir),
                message: error.to_string(),
            });
        }
        for (index, (op, entry)) in self.ops.iter().zip(&plan.entries).enumerate() {
            // Last look (a replacement's is its step's own): a write that slipped in after
            // the stale check is not overwritten.
            if !matches!(op, FileOp::Replace { .. }) && !file_ops::holds(ws, op) {
                return self.roll_back(&engine, journal, &plan, index, Abort::Stale);
            }
            if let Err(error) = faults.before_rename(index, op.path()) {
                return self.roll_back(
                    &engine,
                    journal,
                    &plan,
                    index,
                    Abort::Io(error.to_string()),
                );
            }
            match engine.forward(entry, false).map_err(interrupted)? {
                Outcome::LeftAlone { .. } => {
                    return self.roll_back(&engine, journal, &plan, index, Abort::Stale)
                }
                Outcome::Failed { reason } => {
                    return self.roll_back(&engine, journal, &plan, index, Abort::Io(reason))
                }
                _ => {}
            }
        }
        engine.sync_touched();
        for entry in &plan.entries {
            engine.finish(entry).map_err(interrupted)?;
        }
        engine
            .point("remove the journal", journal.path())
            .map_err(interrupted)?;
        // A journal left behind (the state folder failing) only costs the next recovery a
        // look: every step is done, so it finds nothing to do.
        let _ = journal.remove();
        Ok(self.ops.iter().map(|op| op.path().to_path_buf()).collect())
    }

    /// Writes the new contents of replacements, each beside its target: no target is
    /// touched. On a failure the temporary files and the journal go; else the journal is
    /// handed back.
    fn stage_replacements(
        &self,
        engine: &Engine<'_>,
        journal: Journal,
        plan: &Plan<'_>,
    ) -> Result<Journal, CommitError> {
        for (op, entry) in self.ops.iter().zip(&plan.entries) {
            let (FileOp::Replace { path, new, .. }, Entry::Replace { temp, .. }) = (op, entry)
            else {
                continue;
            };
            engine
                .point("write the temporary file", temp)
                .map_err(interrupted)?;
            if let Err(error) = engine.stage(temp, new, path) {
                for entry in &plan.entries {
                    engine.remove_temp(entry).map_err(interrupted)?;
                }
                let _ = journal.remove();
                return Err(CommitError::Io {
                    path: path.clone(),
                    message: error.to_string(),
                    restored: Vec::new(),
                    unrestored: Vec::new(),
                });
            }
        }
        Ok(journal)
    }

    /// The journal's plan: every step with the temporary names it will use, each free now.
    fn plan<'a>(&'a self, ws: &Workspace) -> Result<Plan<'a>, CommitError> {
        let mut entries = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            let beside = |path: &Path, prefix: &str| {
                temp_beside(path, prefix).map_err(|error| CommitError::Io {
                    path: path.to_path_buf(),
                    message: error.to_string(),
                    restored: Vec::new(),
                    unrestored: Vec::new(),
                })
            };
            entries.push(match op {
                FileOp::Replace {
                    path,
                    original,
                    new,
                } => Entry::Replace {
                    path: path.clone(),
                    temp: beside(path, ".cc-edit-")?,
                    original,
                    new: Digest::of(new),
                },
                FileOp::Create { path, new, dirs } => Entry::Create {
                    path: path.clone(),
                    dirs: dirs.clone(),
                    temp: beside(path, ".cc-create-")?,
                    new,
                },
                FileOp::Delete { path, original } => Entry::Delete {
                    path: path.clone(),
                    aside: beside(path, ".cc-deleted-")?,
                    temp: beside(path, ".cc-edit-")?,
                    original: original.as_deref(),
                },
                FileOp::Rename {
                    from,
                    to,
                    original,
                    new,
                    dirs,
                } => Entry::Rename {
                    from: from.clone(),
                    to: to.clone(),
                    dirs: dirs.clone(),
                    temp: beside(to, ".cc-edit-")?,
                    original: original.as_deref(),
                    new: new.as_deref(),
                },
            });
        }
        let started_ms = std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Ok(Plan {
            root: ws.path().to_path_buf(),
            pid: std::process::id(),
            started_ms,
            entries,
        })
    }

    /// Undoes steps `0..=index` (the failed one may be half done; a stale one was not
    /// touched), removes every temporary file, and says what was restored.
    fn roll_back(
        &self,
        engine: &Engine<'_>,
        mut journal: Journal,
        plan: &Plan<'_>,
        index: usize,
        why: Abort,
    ) -> Result<Vec<PathBuf>, CommitError> {
        // If this process dies now, the recovery rolls back too.
        let _ = journal.mark(Phase::RollingBack);
        let mut restored = Vec::new();
        let mut unrestored = Vec::new();
        for (at, entry) in plan.entries.iter().enumerate().take(index + 1).rev() {
            if at == index && matches!(why, Abort::Stale) {
                continue;
            }
            match engine.backward(entry).map_err(interrupted)? {
                Outcome::Restored => restored.push(entry.target().to_path_buf()),
                Outcome::LeftAlone { reason } | Outcome::Failed { reason } => {
                    unrestored.push((entry.target().to_path_buf(), reason));
                }
                _ => {}
            }
        }
        for entry in &plan.entries {
            engine.remove_temp(entry).map_err(interrupted)?;
        }
        engine.sync_touched();
        engine
            .point("remove the journal", journal.path())
            .map_err(interrupted)?;
        let _ = journal.remove();
        restored.reverse();
        unrestored.reverse();
        let path = self.ops[index].path().to_path_buf();
        Err(match why {
            Abort::Stale if unrestored.is_empty() => CommitError::Stale { paths: vec![path] },
            Abort::Stale => CommitError::Io {
                path,
                message: "the file changed while the edit was being committed".to_owned(),
                restored,
                unrestored,
            },
            Abort::Io(message) => CommitError::Io {
                path,
                message,
                restored,
                unrestored,
            },
        })
    }
}

/// A name for a temporary file beside `path` (`.cc-edit-<pid>-<n>-<name>`): the pid and a
/// count that starts from the clock make it one nothing holds (staging creates it with
/// `O_EXCL`, so a clash fails the commit before any target is touched).
fn temp_beside(path: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    let parent = path
        .parent()
        .ok_or_else(|| std::io::Error::other("a path without a parent folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("a path without a file name"))?;
    Ok(parent.join(crate::beneath::temp_name(prefix, name)))
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
