//! Step one of confinement: where a path argument really leads, for messages and for the
//! physical path tools report. The use itself is confined by the root handle (see
//! `beneath.rs`), so a tree that changes after this step cannot lead a file operation out.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow before giving up (as Linux's ELOOP).
const MAX_SYMLINK_HOPS: usize = 40;

/// Why a path argument was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The path holds a NUL byte (no file system path can).
    #[error("path contains a NUL byte")]
    Nul,
    /// The path leads outside the root.
    #[error(
        "path `{input}` resolves to {}, outside the workspace root {}; use a path inside the root",
        .resolved.display(), .root.display()
    )]
    Outside {
        /// The argument as given.
        input: String,
        /// Where it leads.
        resolved: PathBuf,
        /// The root.
        root: PathBuf,
    },
    /// The path could not be resolved (a symlink loop, say).
    #[error("cannot resolve `{input}`: {source}")]
    Io {
        /// The argument as given.
        input: String,
        /// The operating system's complaint.
        source: io::Error,
    },
}

/// Resolves `input` (relative to `root`, or absolute) to the physical path it names, which
/// must be inside `root` (canonical). The path need not exist.
pub(crate) fn resolve(root: &Path, input: &Path) -> Result<PathBuf, ConfineError> {
    let shown = || input.to_string_lossy().into_owned();
    if input.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(ConfineError::Nul);
    }
    let joined = if input.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        root.join(input)
    };
    let physical =
        physical_path(&normalize_lexically(&joined), MAX_SYMLINK_HOPS).map_err(|source| {
            ConfineError::Io {
                input: shown(),
                source,
            }
        })?;
    if physical.starts_with(root) {
        Ok(physical)
    } else {
        Err(ConfineError::Outside {
            input: shown(),
            resolved: physical,
            root: root.to_path_buf(),
        })
    }
}

/// Removes `.` and resolves `..` without touching the file system.
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
        }
    }
    out
}

/// Canonicalizes the longest existing prefix of an absolute, normalized path and appends the
/// rest. A dangling symlink on the way is followed by hand (a loop, not recursion: each hop
/// restarts with the link's target).
fn physical_path(path: &Path, mut hops_left: usize) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    'hop: loop {
        let mut existing = current.clone();
        let mut missing: Vec<OsString> = Vec::new();
        loop {
            if let Ok(canonical) = std::fs::canonicalize(&existing) {
                let mut result = canonical;
                for part in missing.iter().rev() {
                    result.push(part);
                }
                return Ok(result);
            }
            if let Ok(target) = std::fs::read_link(&existing) {
                if hops_left == 0 {
                    return Err(io::Error::other("too many levels of symbolic links"));
                }
                hops_left -= 1;
                let parent = existing.parent().unwrap_or(Path::new("/"));
                let mut followed = normalize_lexically(&parent.join(target));
                for part in missing.iter().rev() {
                    followed.push(part);
                }
                current = normalize_lexically(&followed);
                continue 'hop;
            }
            match (existing.file_name(), existing.parent()) {
                (Some(name), Some(parent)) => {
                    missing.push(name.to_os_string());
                    existing = parent.to_path_buf();
                }
                _ => return Ok(current),
            }
        }
    }
}
