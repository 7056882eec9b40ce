//! The workspace root, and confinement of every path argument to it.
//!
//! A path is resolved lexically first (`a/../b` → `b`), then the longest existing prefix is
//! canonicalized so symlinks are followed to where they really point (dangling ones too), and
//! the result must lie inside the canonical root. Tools do their I/O on the returned path,
//! never on the caller's string, so what was checked is what gets touched.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::{kinds, ToolError};

/// How many symlinks one resolution may follow before giving up (as Linux's ELOOP).
const MAX_SYMLINK_HOPS: usize = 40;

/// The canonical root of a run's workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceRoot {
    root: PathBuf,
}

impl WorkspaceRoot {
    /// The root at `path`, which must be an existing directory.
    pub fn new(path: impl AsRef<Path>) -> io::Result<Self> {
        let root = std::fs::canonicalize(path.as_ref())?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace root {} is not a directory", root.display()),
            ));
        }
        Ok(WorkspaceRoot { root })
    }

    /// The canonical root directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Resolves a path argument (relative to the root, or absolute) to the physical path it
    /// names, refusing anything outside the root. The path need not exist.
    pub fn resolve(&self, input: &str) -> Result<PathBuf, ToolError> {
        if input.contains('\0') {
            return Err(ToolError::invalid_arguments(
                "path contains a NUL byte".to_owned(),
            ));
        }
        let joined = if input.is_empty() {
            self.root.clone()
        } else {
            self.root.join(input)
        };
        let physical = physical_path(&normalize_lexically(&joined), MAX_SYMLINK_HOPS)
            .map_err(|error| ToolError::io("resolve", input, &error))?;
        if physical.starts_with(&self.root) {
            Ok(physical)
        } else {
            Err(ToolError::new(
                kinds::OUTSIDE_ROOT,
                format!(
                    "path `{input}` resolves to {}, outside the workspace root {}; use a path \
                     inside the root",
                    physical.display(),
                    self.root.display()
                ),
            )
            .with_detail("path", input))
        }
    }

    /// Like [`resolve`](Self::resolve), and the path must exist (`not_found` otherwise).
    pub fn resolve_existing(&self, input: &str) -> Result<PathBuf, ToolError> {
        let path = self.resolve(input)?;
        if path.exists() {
            Ok(path)
        } else {
            Err(ToolError::new(
                kinds::NOT_FOUND,
                format!("`{input}` does not exist in the workspace"),
            )
            .with_detail("path", input))
        }
    }

    /// The path relative to the root, for display (`.` for the root itself). A path outside
    /// the root is shown in full.
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
            Ok(rest) => rest.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

/// Removes `.` and resolves `..` without touching the file system.
fn normalize_lexically(path: &Path) -> PathBuf {
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
/// rest. A dangling symlink on the way is followed by hand.
fn physical_path(path: &Path, hops_left: usize) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut missing: Vec<OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(canonical) => {
                let mut result = canonical;
                for part in missing.iter().rev() {
                    result.push(part);
                }
                return Ok(result);
            }
            Err(_) => {
                if let Ok(target) = std::fs::read_link(&existing) {
                    if hops_left == 0 {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    let parent = existing.parent().unwrap_or(Path::new("/"));
                    let mut followed = normalize_lexically(&parent.join(target));
                    for part in missing.iter().rev() {
                        followed.push(part);
                    }
                    return physical_path(&normalize_lexically(&followed), hops_left - 1);
                }
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        missing.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    _ => return Ok(path.to_path_buf()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn fixture() -> (tempfile::TempDir, WorkspaceRoot) {
        let dir = tempfile::tempdir().unwrap();
        let root_dir = dir.path().join("root");
        std::fs::create_dir_all(root_dir.join("src")).unwrap();
        std::fs::write(root_dir.join("src/a.py"), "x = 1\n").unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        let root = WorkspaceRoot::new(&root_dir).unwrap();
        (dir, root)
    }

    #[test]
    fn relative_and_absolute_inside_are_accepted() {
        let (_dir, root) = fixture();
        let file = root.resolve("src/a.py").unwrap();
        assert_eq!(file, root.path().join("src/a.py"));
        let absolute = root.path().join("src/a.py");
        assert_eq!(root.resolve(absolute.to_str().unwrap()).unwrap(), file);
        assert_eq!(root.resolve("").unwrap(), root.path());
        assert_eq!(root.resolve("src/./new/../a.py").unwrap(), file);
        assert_eq!(root.relative(&file), "src/a.py");
        assert_eq!(root.relative(root.path()), ".");
    }

    #[test]
    fn dot_dot_and_absolute_outside_are_refused() {
        let (_dir, root) = fixture();
        for input in ["../outside/x", "src/../../outside", "/etc/passwd", "/"] {
            let error = root.resolve(input).unwrap_err();
            assert_eq!(error.kind(), kinds::OUTSIDE_ROOT, "{input}");
        }
    }

    #[test]
    fn symlinks_pointing_out_are_refused() {
        let (dir, root) = fixture();
        symlink(dir.path().join("outside"), root.path().join("escape")).unwrap();
        symlink(
            dir.path().join("outside/nothing-yet"),
            root.path().join("dangling"),
        )
        .unwrap();
        symlink(root.path().join("src"), root.path().join("inner")).unwrap();
        assert_eq!(
            root.resolve("escape/new.txt").unwrap_err().kind(),
            kinds::OUTSIDE_ROOT
        );
        assert_eq!(
            root.resolve("dangling").unwrap_err().kind(),
            kinds::OUTSIDE_ROOT
        );
        assert_eq!(
            root.resolve("inner/a.py").unwrap(),
            root.path().join("src/a.py")
        );
    }

    #[test]
    fn missing_files_resolve_but_existing_is_checked() {
        let (_dir, root) = fixture();
        assert!(root.resolve("new/dir/file.txt").is_ok());
        assert_eq!(
            root.resolve_existing("nope.txt").unwrap_err().kind(),
            kinds::NOT_FOUND
        );
    }
}
