//! Step two of confinement: every file operation, through the root's directory handle.
//!
//! Paths given to these methods are absolute inside the root (as [`Workspace::resolve`]
//! returns them) or relative to it. They are opened beneath the root handle with cap-std
//! (`openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` on Linux), so a symlink that leads out
//! — there from the start, or swapped in after the path was resolved — fails the operation
//! with an error for which [`is_escape`] is true, and nothing outside is touched.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cap_std::fs::{Dir, FileTypeExt, MetadataExt, OpenOptions, OpenOptionsExt};

use crate::resolve::{self, ConfineError};
use crate::transaction::recover::Recovery;

/// The workspace root: its canonical path and an open handle on it, and where its commit
/// journals go (the state folder). Cheap to clone; clones share what recoveries they did.
#[derive(Clone)]
pub struct Workspace {
    root: PathBuf,
    dir: Arc<Dir>,
    /// The state folder (`$XDG_STATE_HOME/cc`, else `~/.local/state/cc`); `None` when
    /// neither can be found, and then a commit refuses to start (it could not journal).
    state_dir: Option<PathBuf>,
    /// Recoveries that commits did on their way in, for the host to report
    /// ([`Workspace::take_recoveries`]).
    recoveries: Arc<Mutex<Vec<Recovery>>>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("state_dir", &self.state_dir)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Eq for Workspace {}

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link (only from [`Workspace::kind_no_follow`]).
    Symlink,
    /// A named pipe.
    Fifo,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A Unix socket.
    Socket,
}

impl FileKind {
    pub(crate) fn of(file_type: cap_std::fs::FileType) -> FileKind {
        if file_type.is_dir() {
            FileKind::Directory
        } else if file_type.is_symlink() {
            FileKind::Symlink
        } else if file_type.is_fifo() {
            FileKind::Fifo
        } else if file_type.is_char_device() {
            FileKind::CharDevice
        } else if file_type.is_block_device() {
            FileKind::BlockDevice
        } else if file_type.is_socket() {
            FileKind::Socket
        } else {
            FileKind::Regular
        }
    }

    /// A short name for messages (`a named pipe`, `a character device`, …).
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a named pipe (FIFO)",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Socket => "a socket",
        }
    }
}

/// The error of an operation that a symlink would have led outside the root.
#[derive(Debug, thiserror::Error)]
#[error("the path leads outside the workspace root (a symbolic link on the way points out, or was swapped in meanwhile); nothing was touched")]
struct Escape;

/// Whether `error` means the operation was refused because its path led outside the root.
pub fn is_escape(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<Escape>())
}

fn escape() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, Escape)
}

/// cap-std reports an escape as `PermissionDenied` with this text; it becomes [`Escape`].
pub(crate) fn confined(error: io::Error) -> io::Error {
    if error.kind() == io::ErrorKind::PermissionDenied
        && error.get_ref().is_some()
        && error.to_string().contains("outside of the filesystem")
    {
        escape()
    } else {
        error
    }
}

/// Names of temporary files: unique within the process, and across processes by the pid. The
/// count starts from the clock, so a name left by an earlier process that had the same pid
/// is not taken again (a journaled name is chosen before the file exists).
pub(crate) fn temp_name(prefix: &str, name: &OsStr) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let start = *START.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() % 1_000_000 * 1_000_000)
    });
    let count = start + COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut temp = OsString::from(format!("{prefix}{}-{count}-", std::process::id()));
    // Keep the name short enough for NAME_MAX whatever the target's length.
    let shown: String = name.to_string_lossy().chars().take(64).collect();
    temp.push(shown);
    temp
}

/// A new file's content, written beneath a directory handle and not yet in place. Dropping
/// it removes the temporary file.
#[derive(Debug)]
pub struct StagedWrite {
    parent: Dir,
    temp: Option<OsString>,
    name: OsString,
}

impl StagedWrite {
    /// Renames the temporary file over the target (in the directory opened at staging).
    pub fn persist(mut self) -> io::Result<()> {
        let Some(temp) = self.temp.take() else {
            return Ok(());
        };
        match self.parent.rename(&temp, &self.parent, &self.name) {
            Ok(()) => {
                sync_dir(&self.parent);
                Ok(())
            }
            Err(error) => {
                let _ = self.parent.remove_file(&temp);
                Err(confined(error))
            }
        }
    }
}

impl Drop for StagedWrite {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = self.parent.remove_file(temp);
        }
    }
}

/// Makes renames in `dir` durable; best effort (some file systems refuse to fsync one).
pub(crate) fn sync_dir(dir: &Dir) {
    if let Ok(handle) = dir.open(".") {
        let _ = handle.sync_all();
    }
}

impl Workspace {
    /// The workspace at `path`, which must be an existing directory.
    pub fn new(path: impl AsRef<Path>) -> io::Result<Self> {
        let root = std::fs::canonicalize(path.as_ref())?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace root {} is not a directory", root.display()),
            ));
        }
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority())?;
        Ok(Workspace {
            root,
            dir: Arc::new(dir),
            state_dir: default_state_dir(),
            recoveries: Arc::default(),
        })
    }

    /// The same workspace with its state folder at `dir` (commit journals go to
    /// `dir/journal/<hash of the root>/`), for hosts and tests that choose where.
    pub fn with_state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// The state folder, when one is known.
    pub fn state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
    }

    /// Where this root's commit journals go: `<state>/journal/<xxh3 of the canonical root>`.
    pub fn journal_dir(&self) -> Option<PathBuf> {
        let state = self.state_dir.as_ref()?;
        let hash = xxhash_rust::xxh3::xxh3_64(self.root.as_os_str().as_encoded_bytes());
        Some(state.join("journal").join(format!("{hash:016x}")))
    }

    /// Recoveries that commits did before committing (journals of processes that died
    /// since this run began), oldest first; each is handed out once.
    pub fn take_recoveries(&self) -> Vec<Recovery> {
        match self.recoveries.lock() {
            Ok(mut list) => std::mem::take(&mut *list),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// Keeps `recoveries` for [`Workspace::take_recoveries`].
    pub(crate) fn log_recoveries(&self, recoveries: Vec<Recovery>) {
        if recoveries.is_empty() {
            return;
        }
        match self.recoveries.lock() {
            Ok(mut list) => list.extend(recoveries),
            Err(poisoned) => poisoned.into_inner().extend(recoveries),
        }
    }

    /// The canonical root directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Resolves a path argument (relative to the root, or absolute) to the physical path it
    /// names, refusing anything outside the root. The path need not exist. This is for
    /// messages and reporting; the operations below confine the use themselves.
    pub fn resolve(&self, input: impl AsRef<Path>) -> Result<PathBuf, ConfineError> {
        resolve::resolve(&self.root, input.as_ref())
    }

    /// `path` relative to the root (`""` for the root), if it is inside.
    pub fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        if path.is_absolute() {
            path.strip_prefix(&self.root).ok()
        } else {
            Some(path)
        }
    }

    /// The path to hand to cap-std: relative, never empty.
    fn beneath<'p>(&self, path: &'p Path) -> io::Result<&'p Path> {
        let relative = self.relative(path).ok_or_else(escape)?;
        if relative.as_os_str().is_empty() {
            Ok(Path::new("."))
        } else {
            Ok(relative)
        }
    }

    /// The directory holding `path`, opened beneath the root, and the final name.
    fn parent_of<'p>(&self, path: &'p Path) -> io::Result<(Dir, &'p OsStr)> {
        let relative = self.beneath(path)?;
        let name = match relative.components().next_back() {
            Some(Component::Normal(name)) => name,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("`{}` does not name a file", relative.display()),
                ))
            }
        };
        let parent = match relative.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                self.dir.open_dir(parent).map_err(confined)?
            }
            _ => self.dir.try_clone()?,
        };
        Ok((parent, name))
    }

    /// Opens `path` for reading without blocking on it (a FIFO opens at once) and says what
    /// it is. Symlinks are followed while they stay inside the root.
    pub fn open(&self, path: &Path) -> io::Result<(std::fs::File, FileKind)> {
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        let file = self
            .dir
            .open_with(self.beneath(path)?, &options)
            .map_err(confined)?;
        let kind = FileKind::of(file.metadata()?.file_type());
        Ok((file.into_std(), kind))
    }

    /// What is at `path`, following symlinks inside the root.
    pub fn kind(&self, path: &Path) -> io::Result<FileKind> {
        let metadata = self.dir.metadata(self.beneath(path)?).map_err(confined)?;
        Ok(FileKind::of(metadata.file_type()))
    }

    /// What is at `path` itself (a symlink is [`FileKind::Symlink`]).
    pub fn kind_no_follow(&self, path: &Path) -> io::Result<FileKind> {
        let metadata = self
            .dir
            .symlink_metadata(self.beneath(path)?)
            .map_err(confined)?;
        Ok(FileKind::of(metadata.file_type()))
    }

    /// Whether anything (a file, a folder, a dangling link) is at `path`.
    pub fn exists(&self, path: &Path) -> bool {
        self.kind_no_follow(path).is_ok()
    }

    /// The bytes of the regular file at `path` (anything else is an `InvalidInput` error,
    /// so a FIFO or a device never blocks or floods the caller).
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let (mut file, kind) = self.open(path)?;
        if kind != FileKind::Regular {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is {}, not a regular file",
                    path.display(),
                    kind.describe()
                ),
            ));
        }
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut file, &mut bytes)?;
        Ok(bytes)
    }

    /// Writes `content` to a temporary file in `path`'s directory (which must exist), ready
    /// to be renamed over `path` by [`StagedWrite::persist`]. A new file gets `0666 & !umask`;
    /// a file that exists keeps its mode, and its owner where the system allows.
    pub fn stage_write(&self, path: &Path, content: &[u8]) -> io::Result<StagedWrite> {
        let (parent, name) = self.parent_of(path)?;
        let existing = parent.symlink_metadata(name).ok();
        if existing.as_ref().is_some_and(|meta| meta.is_dir()) {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{} is a directory", path.display()),
            ));
        }
        let (temp, mut file) = create_temp(&parent, ".cc-edit-", name)?;
        let staged = StagedWrite {
            parent,
            temp: Some(temp),
            name: name.to_os_string(),
        };
        file.write_all(content)?;
        if let Some(meta) = existing.filter(|meta| meta.is_file()) {
            // Owner first: changing it may clear set-id bits, which the mode then restores.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(
                meta.mode() & 0o7777,
            ))?;
        }
        file.sync_all()?;
        Ok(staged)
    }

    /// Replaces (or creates) `path` whole with `content`: missing parent folders are created,
    /// then [`stage_write`](Self::stage_write) and a rename. Returns whether it was created.
    pub fn write_atomic(&self, path: &Path, content: &[u8]) -> io::Result<bool> {
        let relative = self.beneath(path)?;
        if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
            if let Err(error) = self.dir.create_dir_all(parent) {
                // A symlink out on the way reads as "exists": say what it really is.
                return Err(match self.parent_of(path) {
                    Err(inner) if is_escape(&inner) => inner,
                    _ => confined(error),
                });
            }
        }
        let created = !self.exists(path);
        self.stage_write(path, content)?.persist()?;
        Ok(created)
    }

    /// Writes a new file at `path`, never replacing one that exists (its content goes to a
    /// temporary file that is hard-linked into place). It gets `0666 & !umask`.
    pub fn write_new(&self, path: &Path, content: &[u8]) -> io::Result<()> {
        let (parent, name) = self.parent_of(path)?;
        let (temp, mut file) = create_temp(&parent, ".cc-create-", name)?;
        let written = (|| {
            file.write_all(content)?;
            file.sync_all()?;
            match parent.hard_link(&temp, &parent, name) {
                Ok(()) => Ok(()),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Err(error),
                // Where links are not possible: a check and a rename.
                Err(_) => {
                    if parent.symlink_metadata(name).is_ok() {
                        return Err(io::Error::new(
                            io::ErrorKind::AlreadyExists,
                            format!("{} already exists", path.display()),
                        ));
                    }
                    parent.rename(&temp, &parent, name)
                }
            }
        })();
        let _ = parent.remove_file(&temp);
        sync_dir(&parent);
        written.map_err(confined)
    }

    /// Creates one folder (its parent must exist).
    pub fn create_dir(&self, path: &Path) -> io::Result<()> {
        self.dir.create_dir(self.beneath(path)?).map_err(confined)
    }

    /// Creates a folder and every missing one above it.
    pub fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.dir
            .create_dir_all(self.beneath(path)?)
            .map_err(confined)
    }

    /// Removes a file (or a symlink itself).
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.dir.remove_file(self.beneath(path)?).map_err(confined)
    }

    /// Removes an empty folder.
    pub fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.dir.remove_dir(self.beneath(path)?).map_err(confined)
    }

    /// Removes a folder and everything in it (symlinks inside are removed, not followed).
    pub fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.dir
            .remove_dir_all(self.beneath(path)?)
            .map_err(confined)
    }

    /// Moves `from` to `to` (replacing a file at `to`, as `rename(2)` does).
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.dir
            .rename(self.beneath(from)?, &self.dir, self.beneath(to)?)
            .map_err(confined)
    }

    /// Makes `to` a second name of the file `from`; fails if `to` exists.
    pub fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.dir
            .hard_link(self.beneath(from)?, &self.dir, self.beneath(to)?)
            .map_err(confined)
    }

    /// Makes the entries of the folder holding `path` durable; best effort.
    pub fn sync_parent(&self, path: &Path) {
        if let Ok((parent, _)) = self.parent_of(path) {
            sync_dir(&parent);
        }
    }

    /// The folder holding `path`, opened beneath the root, and the final name (for steps
    /// that work inside one folder through one handle, whatever happens to its path).
    pub(crate) fn folder(&self, path: &Path) -> io::Result<(Dir, OsString)> {
        let (dir, name) = self.parent_of(path)?;
        Ok((dir, name.to_os_string()))
    }
}

/// Writes `content` to the temporary file `temp` in `dir`, a name the caller chose (and
/// recorded in a journal), fsynced. Unless `fresh` (a name nothing can hold yet), anything
/// already there (a partial write of an interrupted commit) is removed first, never written
/// through. It gets the mode and owner of `like` (in the same folder) when that is a regular
/// file, else `0666 & !umask`.
pub(crate) fn write_temp_in(
    dir: &Dir,
    temp: &OsStr,
    content: &[u8],
    like: Option<&OsStr>,
    fresh: bool,
) -> io::Result<()> {
    if !fresh {
        match dir.remove_file(temp) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(confined(error)),
        }
    }
    let like = like
        .and_then(|like| dir.symlink_metadata(like).ok())
        .filter(|meta| meta.is_file());
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o666);
    let mut file = dir.open_with(temp, &options).map_err(confined)?.into_std();
    file.write_all(content)?;
    if let Some(meta) = like {
        // Only what differs (the usual case is nothing: the same owner, the same mode).
        let made = file.metadata()?;
        use std::os::unix::fs::MetadataExt as _;
        if (made.uid(), made.gid()) != (meta.uid(), meta.gid()) {
            // Owner first: changing it may clear set-id bits, which the mode then restores.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
        }
        if made.mode() & 0o7777 != meta.mode() & 0o7777 || meta.mode() & 0o6000 != 0 {
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(
                meta.mode() & 0o7777,
            ))?;
        }
    }
    file.sync_all()
}

/// `$XDG_STATE_HOME/cc` when that is an absolute path, else `$HOME/.local/state/cc`.
fn default_state_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local").join("state")))
        .map(|state| state.join("cc"))
}

/// Creates a fresh file in `dir` for writing, mode `0666 & !umask` (the umask is applied by
/// the kernel, so no thread has to change it).
fn create_temp(dir: &Dir, prefix: &str, name: &OsStr) -> io::Result<(OsString, std::fs::File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o666);
    loop {
        let temp = temp_name(prefix, name);
        match dir.open_with(&temp, &options) {
            Ok(file) => return Ok((temp, file.into_std())),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(confined(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use cc_test_support::umask as current_umask;
    use std::os::unix::fs::{symlink, PermissionsExt as _};

    fn fixture() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), "x = 1\n").unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/secret"), "secret").unwrap();
        let ws = Workspace::new(&root).unwrap();
        (dir, ws)
    }

    #[test]
    fn resolve_accepts_inside_and_refuses_outside() {
        let (dir, ws) = fixture();
        let file = ws.resolve("src/a.py").unwrap();
        assert_eq!(file, ws.path().join("src/a.py"));
        assert_eq!(ws.resolve(&file).unwrap(), file);
        assert_eq!(ws.resolve("").unwrap(), ws.path());
        assert_eq!(ws.resolve("src/./new/../a.py").unwrap(), file);
        for input in ["../outside/x", "src/../../outside", "/etc/passwd", "/"] {
            assert!(
                matches!(ws.resolve(input), Err(ConfineError::Outside { .. })),
                "{input}"
            );
        }
        symlink(dir.path().join("outside"), ws.path().join("escape")).unwrap();
        symlink(dir.path().join("outside/none"), ws.path().join("dangling")).unwrap();
        symlink(ws.path().join("src"), ws.path().join("inner")).unwrap();
        assert!(ws.resolve("escape/new.txt").is_err());
        assert!(ws.resolve("dangling").is_err());
        assert_eq!(ws.resolve("inner/a.py").unwrap(), file);
        assert!(ws.resolve("a\0b").is_err());
    }

    #[test]
    fn operations_refuse_a_symlink_out_even_unresolved() {
        let (dir, ws) = fixture();
        symlink(dir.path().join("outside"), ws.path().join("escape")).unwrap();
        let through = ws.path().join("escape/secret");
        let error = ws.read(&through).unwrap_err();
        assert!(is_escape(&error), "{error}");
        let error = ws
            .write_atomic(&ws.path().join("escape/new"), b"x")
            .unwrap_err();
        assert!(is_escape(&error), "{error}");
        let error = ws
            .write_new(&ws.path().join("escape/new"), b"x")
            .unwrap_err();
        assert!(is_escape(&error), "{error}");
        assert!(is_escape(&ws.read(Path::new("/etc/hostname")).unwrap_err()));
        let outside: Vec<_> = std::fs::read_dir(dir.path().join("outside"))
            .unwrap()
            .collect();
        assert_eq!(outside.len(), 1, "nothing was created outside");
        // A symlink that stays inside is followed.
        symlink("src", ws.path().join("inner")).unwrap();
        assert_eq!(ws.read(Path::new("inner/a.py")).unwrap(), b"x = 1\n");
    }

    #[test]
    fn fifos_and_devices_open_without_blocking() {
        let (_dir, ws) = fixture();
        let fifo = ws.path().join("pipe");
        nix_mkfifo(&fifo);
        let (_, kind) = ws.open(&fifo).unwrap();
        assert_eq!(kind, FileKind::Fifo);
        assert!(ws.read(&fifo).is_err());
        assert_eq!(ws.kind(ws.path()).unwrap(), FileKind::Directory);
    }

    fn nix_mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn modes_new_files_get_the_umask_and_replaced_keep_theirs() {
        let (_dir, ws) = fixture();
        let umask = current_umask();
        let new = ws.path().join("deep/new.txt");
        assert!(ws.write_atomic(&new, b"n").unwrap());
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&new), 0o666 & !umask);
        let created = ws.path().join("created.txt");
        ws.write_new(&created, b"c").unwrap();
        assert_eq!(mode(&created), 0o666 & !umask);
        assert!(ws.write_new(&created, b"again").is_err());
        let script = ws.path().join("run.sh");
        std::fs::write(&script, "old").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o751)).unwrap();
        assert!(!ws.write_atomic(&script, b"new").unwrap());
        assert_eq!(mode(&script), 0o751);
        assert_eq!(std::fs::read(&script).unwrap(), b"new");
        let leftovers: Vec<_> = std::fs::read_dir(ws.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".cc-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_replaced_file_keeps_its_owner_where_the_system_allows() {
        use std::os::unix::fs::MetadataExt as _;
        let (_dir, ws) = fixture();
        let file = ws.path().join("owned.txt");
        std::fs::write(&file, "old").unwrap();
        // Only root can give a file away; elsewhere the owner is us anyway.
        if std::os::unix::fs::chown(&file, Some(4321), Some(4321)).is_err() {
            eprintln!("not root: the owner case is left out");
            return;
        }
        ws.write_atomic(&file, b"new").unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (4321, 4321));
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
    }
}
