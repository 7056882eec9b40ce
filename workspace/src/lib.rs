//! Workspace confinement and all-or-nothing multi-file writes: the one layer under every
//! tool that touches files.
//!
//! A [`Workspace`] holds the canonical root path and an open handle on the root directory
//! (a `cap_std::fs::Dir`). Two steps, and only the second touches a file:
//!
//! 1. **Resolve** ([`Workspace::resolve`]): a path argument (relative to the root, or
//!    absolute) is normalized lexically (`a/../b` → `b`), then its longest existing prefix is
//!    canonicalized so symlinks are followed to where they really point (dangling ones too).
//!    The result must lie inside the root, or the error names where it leads. This step gives
//!    good messages and the physical path tools report; it is not what keeps a file outside
//!    the root from being touched, because the tree can change right after it.
//! 2. **Use**: every read, write, rename, link, delete and directory creation goes through
//!    the root handle, beneath it: `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` on
//!    Linux 5.6 and later (cap-std falls back to a component-by-component walk with
//!    `O_NOFOLLOW` elsewhere). A symlink swapped in between the two steps that leads out is
//!    refused there ([`is_escape`]), so no path is re-resolved between the check and the use
//!    in a way that could leave the root. Temporary files for atomic writes are created in
//!    the target's directory through the handle of that directory, and renamed there.
//!
//! Multi-file changes go through one [`Transaction`], all or nothing — across a crash too:
//! its commit journals every step outside the tree before touching it
//! ([`Workspace::journal_dir`]), and [`Workspace::recover`] (run by every commit first, and
//! by the host when a run starts) finishes or undoes a commit a dead process left, so the
//! tree ends all-old or all-new with no temporary file left, and says what it did
//! ([`Recovery`]). See the [`transaction`] module.
//!
//! Hard links are what this layer cannot see: a hard link is a second name for the same
//! file, with no path to resolve, so a file inside the root that is hard-linked to a file
//! outside reads as a regular file inside the root and its content is returned. Writes
//! never modify such a shared file in place: every write replaces the name with a new file
//! (temporary + rename), so the outside name keeps its old content, and the link is broken.
//! Only someone who can already write both places can make such a link.
//!
//! ```
//! use cc_workspace::{Transaction, Workspace};
//!
//! let dir = tempfile::tempdir()?;
//! let ws = Workspace::new(dir.path())?;
//! // Confined single-file writes: parents created, a temporary file renamed into place.
//! ws.write_atomic(&ws.resolve("src/a.py")?, b"x = 1\n")?;
//! assert!(ws.resolve("../elsewhere").is_err());
//!
//! // An all-or-nothing change to several files.
//! let a = ws.resolve("src/a.py")?;
//! let mut tx = Transaction::new();
//! tx.replace(&a, ws.read(&a)?, b"x = 2\n".to_vec());
//! tx.create(ws.resolve("src/b.py")?, b"y = 1\n".to_vec());
//! tx.commit(&ws)?;
//! assert_eq!(ws.read(&a)?, b"x = 2\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod beneath;
pub mod patch;
pub mod python;
mod resolve;
mod settings;
pub mod transaction;
pub mod walk;
pub mod watch;

pub use beneath::{is_escape, FileKind, StagedWrite, Workspace};

/// The tools' cache folder, for what can be rebuilt (the graph's index, language servers'
/// indexes): `$XDG_CACHE_HOME/cc`, else `$HOME/.cache/cc`, else the temporary folder's `cc`.
pub fn cache_dir() -> std::path::PathBuf {
    let set = |var: &str| std::env::var_os(var).filter(|value| !value.is_empty());
    set("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| set("HOME").map(|home| std::path::PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("cc")
}
pub use settings::{BrokenSection, SettingsPlace};

/// `path` as shown to someone working at `root`: relative to it (`.` for the root itself),
/// or as it is when it lies outside.
pub fn shown_path(root: &std::path::Path, path: &std::path::Path) -> String {
    match path.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}
pub use resolve::ConfineError;
pub use transaction::{
    CommitError, CrashAt, CrashPoint, Direction, FailAt, FaultInjector, FileOp, NoFaults, Outcome,
    Phase, RecordCrashPoints, RecoveredFile, Recovery, RecoveryReport, Transaction,
};
