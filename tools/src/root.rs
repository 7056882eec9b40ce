//! The workspace root, and confinement of every path argument to it, through the one
//! confinement layer ([`cc_workspace::Workspace`]).
//!
//! [`WorkspaceRoot::resolve`] says where a path argument really leads (symlinks followed,
//! dangling ones too) and refuses what leads outside, with a message an agent can act on.
//! Tools that touch files then go through [`WorkspaceRoot::workspace`], whose every operation
//! opens beneath the root's directory handle: a symlink swapped in after the check cannot
//! lead the operation out (see the `cc-workspace` crate docs, including what hard links do).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use cc_workspace::watch::{TreeWatcher, WatchOptions, WatchStatus};
use cc_workspace::{ConfineError, Workspace};

use crate::error::{ErrorKind, ToolError};

/// The canonical root of a run's workspace, with its directory handle and the run's one
/// watcher of the tree. Cheap to clone; clones share the watcher.
#[derive(Debug, Clone)]
pub struct WorkspaceRoot {
    workspace: Workspace,
    watch: Arc<WatchSlot>,
}

impl PartialEq for WorkspaceRoot {
    fn eq(&self, other: &Self) -> bool {
        self.workspace == other.workspace
    }
}

impl Eq for WorkspaceRoot {}

/// The run's watcher: started by the first mechanism that asks for it.
#[derive(Debug, Default)]
struct WatchSlot {
    options: Mutex<WatchOptions>,
    started: OnceLock<Result<Arc<TreeWatcher>, String>>,
}

impl WorkspaceRoot {
    /// The root at `path`, which must be an existing directory.
    pub fn new(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(WorkspaceRoot {
            workspace: Workspace::new(path)?,
            watch: Arc::default(),
        })
    }

    /// Sets how the run's watcher will watch (before anything starts it; tests force a tiny
    /// queue with it).
    pub fn set_watch_options(&self, options: WatchOptions) {
        *cc_process::lock(&self.watch.options) = options;
    }

    /// The run's one watcher of the tree ([`cc_workspace::watch`]), started on the first
    /// call; the error says why it could not start (then every mechanism checks the disk
    /// itself, as without a watcher).
    pub fn watcher(&self) -> Result<Arc<TreeWatcher>, String> {
        self.watch
            .started
            .get_or_init(|| {
                let options = cc_process::lock(&self.watch.options).clone();
                TreeWatcher::start(self.path(), options)
                    .map(Arc::new)
                    .map_err(|error| error.to_string())
            })
            .clone()
    }

    /// How the watcher is doing, once something started it (`None` before).
    pub fn watch_status(&self) -> Option<Result<WatchStatus, String>> {
        self.watch
            .started
            .get()
            .map(|started| started.as_ref().map(|w| w.status()).map_err(Clone::clone))
    }

    /// Tells the watcher that the run is about to make `path` hold `content` (`None`: delete
    /// it): the change that follows is the run's own, not one made outside. Starts the watcher if nothing has yet: whoever checks a write's result (the ledger,
    /// the graph) asks it what changed next, and must not take this write for an outside one.
    pub fn expect_write(&self, path: &Path, content: Option<&[u8]>) {
        if let Ok(watcher) = self.watcher() {
            watcher.expect(path, content);
        }
    }

    /// Stops the watcher, if it runs (the run is ending).
    pub fn stop_watching(&self) {
        if let Some(Ok(watcher)) = self.watch.started.get() {
            watcher.stop();
        }
    }

    /// The same root with its commit journals under `dir` (see
    /// [`Workspace::with_state_dir`]).
    pub fn with_state_dir(self, dir: impl Into<PathBuf>) -> Self {
        WorkspaceRoot {
            workspace: self.workspace.with_state_dir(dir),
            watch: self.watch,
        }
    }

    /// The canonical root directory.
    pub fn path(&self) -> &Path {
        self.workspace.path()
    }

    /// The confinement layer: every file operation beneath the root handle.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Resolves a path argument (relative to the root, or absolute) to the physical path it
    /// names, refusing anything outside the root. The path need not exist.
    pub fn resolve(&self, input: &str) -> Result<PathBuf, ToolError> {
        self.workspace.resolve(input).map_err(|error| match error {
            ConfineError::Nul => ToolError::invalid_arguments("path contains a NUL byte"),
            ConfineError::Outside { .. } => {
                ToolError::new(ErrorKind::OutsideRoot, error.to_string()).with_detail("path", input)
            }
            ConfineError::Io { source, .. } => ToolError::io("resolve", input, &source),
        })
    }

    /// Like [`resolve`](Self::resolve), and the path must exist (`not_found` otherwise).
    pub fn resolve_existing(&self, input: &str) -> Result<PathBuf, ToolError> {
        let path = self.resolve(input)?;
        if self.workspace.exists(&path) {
            Ok(path)
        } else {
            Err(ToolError::new(
                ErrorKind::NotFound,
                format!("`{input}` does not exist in the workspace"),
            )
            .with_detail("path", input))
        }
    }

    /// A failed file operation as a tool error: `outside_root` when the confinement layer
    /// refused it (a symlink out, perhaps swapped in after the check), `not_found`, or `io`.
    pub fn io_error(&self, action: &str, shown: &str, error: &io::Error) -> ToolError {
        if cc_workspace::is_escape(error) {
            ToolError::new(
                ErrorKind::OutsideRoot,
                format!("could not {action} `{shown}`: {error}"),
            )
            .with_detail("path", shown)
        } else if error.kind() == io::ErrorKind::NotFound {
            ToolError::new(ErrorKind::NotFound, format!("`{shown}` does not exist"))
                .with_detail("path", shown)
        } else {
            ToolError::io(action, shown, error)
        }
    }

    /// The path relative to the root, for display (`.` for the root itself). A path outside
    /// the root is shown in full.
    pub fn relative(&self, path: &Path) -> String {
        cc_workspace::shown_path(self.path(), path)
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
            assert_eq!(error.kind(), ErrorKind::OutsideRoot, "{input}");
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
            ErrorKind::OutsideRoot
        );
        assert_eq!(
            root.resolve("dangling").unwrap_err().kind(),
            ErrorKind::OutsideRoot
        );
        assert_eq!(
            root.resolve("inner/a.py").unwrap(),
            root.path().join("src/a.py")
        );
        // The use is confined too: a symlink out that the check never saw is refused.
        let through = root.path().join("escape/x");
        let error = root.workspace().write_atomic(&through, b"x").unwrap_err();
        assert_eq!(
            root.io_error("write", "escape/x", &error).kind(),
            ErrorKind::OutsideRoot
        );
    }

    #[test]
    fn missing_files_resolve_but_existing_is_checked() {
        let (_dir, root) = fixture();
        assert!(root.resolve("new/dir/file.txt").is_ok());
        assert_eq!(
            root.resolve_existing("nope.txt").unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }
}
