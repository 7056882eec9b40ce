//! The steps of a journaled commit, forward (do it) and backward (undo it), shared by the
//! commit itself, its rollback after a failure, and the recovery after a crash.
//!
//! No step trusts memory about how far it got: each one looks at the disk (the target's
//! bytes, whether its temporary file or aside is there) and goes on from there, so running
//! it again after a crash at any point in it (or in the recovery) is always right. A target
//! holding neither the old nor the new content was changed by someone else: it is left as
//! it is and said so ([`Outcome::LeftAlone`]), never overwritten.
//!
//! Every mutation is preceded by a crash point ([`Engine::point`]): a fault injector can stop
//! the protocol there as a `kill -9` would, so tests can crash every step.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use cap_std::fs::Dir;

use super::journal::{Digest, Entry};
use super::{CrashPoint, FaultInjector};
use crate::beneath::{confined, write_temp_in};
use crate::{FileKind, Workspace};

/// Folder handles kept by one engine at most (a file descriptor each); past it, a folder is
/// opened for each use.
const MAX_FOLDERS: usize = 256;

/// What became of one file of an interrupted (or failed) commit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Its step was completed now: it holds its new content (or is gone, for a deletion).
    Written,
    /// Its step had been done already.
    AlreadyNew,
    /// It was put back as it was before the commit.
    Restored,
    /// Its step had not been done: it was still as before the commit.
    AlreadyOld,
    /// It holds neither its old nor its new content (someone else changed it): left as it is.
    LeftAlone {
        /// What was found.
        reason: String,
    },
    /// Putting it right failed.
    Failed {
        /// The operating system's complaint, or what was missing.
        reason: String,
    },
}

impl Outcome {
    /// A short name (`written`, `already_new`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Written => "written",
            Outcome::AlreadyNew => "already_new",
            Outcome::Restored => "restored",
            Outcome::AlreadyOld => "already_old",
            Outcome::LeftAlone { .. } => "left_alone",
            Outcome::Failed { .. } => "failed",
        }
    }
}

/// The protocol was stopped by the fault injector at crash point `.0` (`.1` says where).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Crash(pub usize, pub String);

fn changed(path: &Path) -> Outcome {
    Outcome::LeftAlone {
        reason: format!(
            "{} holds neither its old nor its new content: changed by another writer; left as it is",
            path.display()
        ),
    }
}

fn failed(what: &str, path: &Path, error: &io::Error) -> Outcome {
    Outcome::Failed {
        reason: format!("could not {what} {}: {error}", path.display()),
    }
}

/// Runs steps against one workspace, counting crash points.
pub(crate) struct Engine<'a> {
    ws: &'a Workspace,
    faults: &'a dyn FaultInjector,
    next_point: Cell<usize>,
    /// Paths whose folders gained or lost an entry, to fsync once at the end.
    touched: RefCell<Vec<PathBuf>>,
    /// Temporary files and asides removed, for the report.
    removed: RefCell<Vec<PathBuf>>,
    /// Folder handles by path: a step's temporary file and its target are reached through
    /// the same handle, opened once, whatever is swapped into the folder's path meanwhile.
    folders: RefCell<HashMap<PathBuf, Rc<Dir>>>,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(ws: &'a Workspace, faults: &'a dyn FaultInjector) -> Self {
        Engine {
            ws,
            faults,
            next_point: Cell::new(0),
            touched: RefCell::new(Vec::new()),
            removed: RefCell::new(Vec::new()),
            folders: RefCell::new(HashMap::new()),
        }
    }

    /// The temporary files and asides removed so far.
    pub(crate) fn take_removed(&self) -> Vec<PathBuf> {
        std::mem::take(&mut *self.removed.borrow_mut())
    }

    /// The handle of the folder holding `path` (see `folders`) and the name in it.
    fn folder(&self, path: &Path) -> io::Result<(Rc<Dir>, OsString)> {
        let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other(format!("{} names no file", path.display())))?;
        if let Some(dir) = self.folders.borrow().get(&parent) {
            return Ok((dir.clone(), name.to_os_string()));
        }
        let (dir, name) = self.ws.folder(path)?;
        let dir = Rc::new(dir);
        let mut folders = self.folders.borrow_mut();
        if folders.len() < MAX_FOLDERS {
            folders.insert(parent, dir.clone());
        }
        Ok((dir, name))
    }

    /// Forgets the folder handles (after folders moved or went away).
    fn forget_folders(&self) {
        self.folders.borrow_mut().clear();
    }

    /// What is at `path` itself, looked up through its folder's handle.
    fn kind_here(&self, path: &Path) -> Option<FileKind> {
        let (dir, name) = self.folder(path).ok()?;
        let metadata = dir.symlink_metadata(&name).ok()?;
        Some(FileKind::of(metadata.file_type()))
    }

    /// [`write_temp_in`] in `temp`'s folder (removing what is there first); `like` must be in
    /// the same folder.
    fn write_temp(&self, temp: &Path, content: &[u8], like: Option<&Path>) -> io::Result<()> {
        self.write_temp_as(temp, content, like, false)
    }

    fn write_temp_as(
        &self,
        temp: &Path,
        content: &[u8],
        like: Option<&Path>,
        fresh: bool,
    ) -> io::Result<()> {
        let (dir, name) = self.folder(temp)?;
        let like = like
            .filter(|like| like.parent() == temp.parent())
            .and_then(Path::file_name);
        write_temp_in(&dir, &name, content, like, fresh)
    }

    /// Writes a replacement's new content to its temporary file beside `target`.
    /// The name is new (chosen for this commit): it is created, never replaced.
    pub(crate) fn stage(&self, temp: &Path, content: &[u8], target: &Path) -> io::Result<()> {
        self.write_temp_as(temp, content, Some(target), true)
    }

    /// Renames within one folder through its handle; across folders beneath the root.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        if from.parent() != to.parent() {
            return self.ws.rename(from, to);
        }
        let (dir, from_name) = self.folder(from)?;
        let (_, to_name) = self.folder(to)?;
        dir.rename(&from_name, &dir, &to_name).map_err(confined)
    }

    /// Hard-links within one folder through its handle; across folders beneath the root.
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        if from.parent() != to.parent() {
            return self.ws.hard_link(from, to);
        }
        let (dir, from_name) = self.folder(from)?;
        let (_, to_name) = self.folder(to)?;
        dir.hard_link(&from_name, &dir, &to_name).map_err(confined)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.folder(path)?;
        dir.remove_file(&name).map_err(confined)
    }

    /// A place where a crash may happen: the fault injector decides.
    pub(crate) fn point(&self, step: &'static str, path: &Path) -> Result<(), Crash> {
        let index = self.next_point.get();
        self.next_point.set(index + 1);
        if self.faults.crash_here(CrashPoint { index, step, path }) {
            return Err(Crash(index, format!("{step} {}", path.display())));
        }
        Ok(())
    }

    fn touch(&self, path: &Path) {
        self.touched.borrow_mut().push(path.to_path_buf());
    }

    /// Makes the folder entries every step changed durable, each folder once.
    pub(crate) fn sync_touched(&self) {
        let mut paths = self.touched.borrow().clone();
        paths.sort_by(|a, b| a.parent().cmp(&b.parent()));
        paths.dedup_by(|a, b| a.parent() == b.parent());
        for path in paths {
            self.ws.sync_parent(&path);
        }
    }

    /// The bytes of the regular file at `path` (symlinks inside the root followed).
    fn content(&self, path: &Path) -> Option<Vec<u8>> {
        self.ws.read(path).ok()
    }

    fn exists(&self, path: &Path) -> bool {
        self.ws.exists(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        matches!(self.ws.kind(path), Ok(FileKind::Directory))
    }

    /// A file holding `original`, or for `None` a folder.
    fn as_staged(&self, path: &Path, original: Option<&[u8]>) -> bool {
        match original {
            Some(bytes) => self.content(path).is_some_and(|c| c == bytes),
            None => self.is_dir(path),
        }
    }

    /// Whether [`Engine::forward`] can complete `entry` exactly: a replacement whose target
    /// still holds the old bytes needs its temporary file, whole. Everything else carries
    /// its new bytes in the journal (or is a move).
    pub(crate) fn forward_possible(&self, entry: &Entry<'_>) -> bool {
        let Entry::Replace {
            path,
            temp,
            original,
            new,
        } = entry
        else {
            return true;
        };
        self.content(path).is_none_or(|c| c != *original)
            || self.content(temp).is_some_and(|t| Digest::of(&t) == *new)
    }

    /// Where `entry` stands without changing anything, for a commit that had touched no
    /// target: as before the commit, or changed by someone else.
    pub(crate) fn classify_old(&self, entry: &Entry<'_>) -> Outcome {
        let old = match entry {
            Entry::Replace { path, original, .. } => {
                self.content(path).is_some_and(|c| c == *original)
            }
            Entry::Create { path, .. } => !self.exists(path),
            Entry::Delete { path, original, .. } => self.as_staged(path, *original),
            Entry::Rename {
                from, to, original, ..
            } => self.as_staged(from, *original) && !self.exists(to),
        };
        if old {
            Outcome::AlreadyOld
        } else {
            changed(entry.target())
        }
    }

    /// Does `entry` (or what is left of it). `verify_temp`: check a replacement's temporary
    /// file before renaming it (a recovery; the commit itself just wrote it). A deletion
    /// only moves its path aside here; [`Engine::finish`] removes it.
    pub(crate) fn forward(&self, entry: &Entry<'_>, verify_temp: bool) -> Result<Outcome, Crash> {
        match entry {
            Entry::Replace {
                path,
                temp,
                original,
                new,
            } => {
                let Some(current) = self.content(path) else {
                    return Ok(changed(path));
                };
                if current == *original {
                    if verify_temp && self.content(temp).map(|t| Digest::of(&t)) != Some(*new) {
                        return Ok(Outcome::Failed {
                            reason: format!(
                                "its new content (staged in {}) is gone",
                                temp.display()
                            ),
                        });
                    }
                    self.point("rename the temporary file over", path)?;
                    if let Err(error) = self.rename(temp, path) {
                        return Ok(failed("replace", path, &error));
                    }
                    self.touch(path);
                    Ok(Outcome::Written)
                } else if Digest::of(&current) == *new {
                    Ok(Outcome::AlreadyNew)
                } else {
                    Ok(changed(path))
                }
            }
            Entry::Create {
                path,
                dirs,
                temp,
                new,
            } => {
                if self.exists(path) {
                    return Ok(if self.content(path).is_some_and(|c| c == *new) {
                        Outcome::AlreadyNew
                    } else {
                        changed(path)
                    });
                }
                if let Some(outcome) = self.make_dirs(dirs)? {
                    return Ok(outcome);
                }
                self.point("write the temporary file", temp)?;
                if let Err(error) = self.write_temp(temp, new, None) {
                    return Ok(failed("write", temp, &error));
                }
                self.point("link the new file", path)?;
                if let Some(outcome) = self.place(temp, path)? {
                    return Ok(outcome);
                }
                Ok(Outcome::Written)
            }
            Entry::Delete {
                path,
                aside,
                original,
                ..
            } => {
                if self.kind_here(aside).is_some() || !self.exists(path) {
                    return Ok(Outcome::AlreadyNew);
                }
                if !self.as_staged(path, *original) {
                    return Ok(changed(path));
                }
                self.point("move aside", path)?;
                if let Err(error) = self.rename(path, aside) {
                    return Ok(failed("delete", path, &error));
                }
                self.touch(path);
                Ok(Outcome::Written)
            }
            Entry::Rename {
                from,
                to,
                dirs,
                temp,
                original,
                new,
            } => match original {
                None => self.move_folder(from, to, dirs),
                Some(original) => self.move_file(from, to, dirs, temp, original, *new),
            },
        }
    }

    fn move_folder(&self, from: &Path, to: &Path, dirs: &[PathBuf]) -> Result<Outcome, Crash> {
        if !self.exists(from) && self.is_dir(to) {
            return Ok(Outcome::AlreadyNew);
        }
        if !self.is_dir(from) || self.exists(to) {
            return Ok(changed(to));
        }
        if let Some(outcome) = self.make_dirs(dirs)? {
            return Ok(outcome);
        }
        self.point("move the folder", to)?;
        let moved = self.rename(from, to);
        self.forget_folders();
        if let Err(error) = moved {
            return Ok(failed("move", from, &error));
        }
        self.touch(from);
        self.touch(to);
        Ok(Outcome::Written)
    }

    fn move_file(
        &self,
        from: &Path,
        to: &Path,
        dirs: &[PathBuf],
        temp: &Path,
        original: &[u8],
        new: Option<&[u8]>,
    ) -> Result<Outcome, Crash> {
        let last = new.unwrap_or(original);
        let (at_from, at_to) = (self.content(from), self.content(to));
        if !self.exists(from) && at_to.as_deref() == Some(last) {
            return Ok(Outcome::AlreadyNew);
        }
        if at_from.as_deref() == Some(original) {
            if !self.exists(to) {
                if let Some(outcome) = self.make_dirs(dirs)? {
                    return Ok(outcome);
                }
                self.point("link the moved file", to)?;
                match self.link(from, to)? {
                    Linked::Yes => {}
                    Linked::Moved => return self.new_content(to, temp, original, new),
                    Linked::No(outcome) => return Ok(outcome),
                }
            } else if at_to.as_deref() != Some(original) {
                return Ok(changed(to));
            }
            self.point("unlink the moved file's old name", from)?;
            if let Err(error) = self.remove_file(from) {
                return Ok(failed("remove", from, &error));
            }
            self.touch(from);
        } else if self.exists(from) {
            return Ok(changed(from));
        } else if at_to.as_deref() != Some(original) {
            return Ok(changed(to));
        }
        self.new_content(to, temp, original, new)
    }

    /// The moved file's new bytes, through its temporary file.
    fn new_content(
        &self,
        to: &Path,
        temp: &Path,
        original: &[u8],
        new: Option<&[u8]>,
    ) -> Result<Outcome, Crash> {
        if let Some(new) = new.filter(|new| *new != original) {
            self.point("write the temporary file", temp)?;
            if let Err(error) = self.write_temp(temp, new, Some(to)) {
                return Ok(failed("write", temp, &error));
            }
            self.point("rename the temporary file over", to)?;
            if let Err(error) = self.rename(temp, to) {
                return Ok(failed("replace", to, &error));
            }
        }
        Ok(Outcome::Written)
    }

    /// Completes a deletion: removes what was moved aside. A leftover (an error) is a hidden
    /// `.cc-deleted-*` entry, never lost data; returns the aside when it was removed.
    pub(crate) fn finish(&self, entry: &Entry<'_>) -> Result<Option<PathBuf>, Crash> {
        let Entry::Delete {
            aside, original, ..
        } = entry
        else {
            return Ok(None);
        };
        if self.kind_here(aside).is_none() {
            return Ok(None);
        }
        self.point("remove what was deleted", aside)?;
        let removed = self.folder(aside).and_then(|(dir, name)| {
            if original.is_some() {
                dir.remove_file(&name)
            } else {
                dir.remove_dir_all(&name)
            }
        });
        if removed.is_ok() {
            self.removed.borrow_mut().push(aside.clone());
        }
        Ok(removed.ok().map(|()| aside.clone()))
    }

    /// Undoes `entry` (or what was done of it). Its temporary file goes first, so that a
    /// folder the step made is empty when the undo removes it.
    pub(crate) fn backward(&self, entry: &Entry<'_>) -> Result<Outcome, Crash> {
        // A replacement's own undo writes over its temporary file (or leaves it for the
        // batch in `remove_temps`): no folder of its is removed.
        if !matches!(entry, Entry::Replace { .. }) {
            self.remove_temp(entry)?;
        }
        match entry {
            Entry::Replace {
                path,
                temp,
                original,
                new,
            } => self.unreplace(path, temp, original, *new),
            Entry::Create {
                path, dirs, new, ..
            } => self.uncreate(path, dirs, new),
            Entry::Delete {
                path,
                aside,
                temp,
                original,
            } => self.undelete(path, aside, temp, *original),
            Entry::Rename {
                from,
                to,
                dirs,
                temp,
                original,
                new,
            } => match original {
                None => self.unmove_folder(from, to, dirs),
                Some(original) => self.unmove_file(from, to, dirs, temp, original, *new),
            },
        }
    }

    /// Writes a replaced file's backup back, when the file is still what the commit wrote.
    fn unreplace(
        &self,
        path: &Path,
        temp: &Path,
        original: &[u8],
        new: Digest,
    ) -> Result<Outcome, Crash> {
        let Some(current) = self.content(path) else {
            return Ok(changed(path));
        };
        if current == *original {
            return Ok(Outcome::AlreadyOld);
        }
        if Digest::of(&current) != new {
            return Ok(changed(path));
        }
        self.point("write the backup to the temporary file", temp)?;
        if let Err(error) = self.write_temp(temp, original, Some(path)) {
            return Ok(failed("write", temp, &error));
        }
        self.point("rename the backup over", path)?;
        if let Err(error) = self.rename(temp, path) {
            return Ok(failed("restore", path, &error));
        }
        self.touch(path);
        Ok(Outcome::Restored)
    }

    /// Removes a created file (and the folders made for it), when it is still what the
    /// commit wrote.
    fn uncreate(&self, path: &Path, dirs: &[PathBuf], new: &[u8]) -> Result<Outcome, Crash> {
        if !self.exists(path) {
            self.remove_dirs(dirs)?;
            return Ok(Outcome::AlreadyOld);
        }
        if self.content(path).is_none_or(|c| c != *new) {
            return Ok(changed(path));
        }
        self.point("remove the created file", path)?;
        if let Err(error) = self.remove_file(path) {
            return Ok(failed("remove", path, &error));
        }
        self.touch(path);
        self.remove_dirs(dirs)?;
        Ok(Outcome::Restored)
    }

    /// Moves back what was deleted (kept aside), or restores it from its backup.
    fn undelete(
        &self,
        path: &Path,
        aside: &Path,
        temp: &Path,
        original: Option<&[u8]>,
    ) -> Result<Outcome, Crash> {
        if self.kind_here(aside).is_some() {
            if self.exists(path) {
                return Ok(Outcome::LeftAlone {
                    reason: format!(
                        "{} was created again by another writer; the deleted one is kept at {}",
                        path.display(),
                        aside.display()
                    ),
                });
            }
            self.point("move back what was deleted", path)?;
            if let Err(error) = self.rename(aside, path) {
                return Ok(failed("restore", path, &error));
            }
            self.touch(path);
            return Ok(Outcome::Restored);
        }
        if self.exists(path) {
            return Ok(if self.as_staged(path, original) {
                Outcome::AlreadyOld
            } else {
                changed(path)
            });
        }
        let Some(original) = original else {
            return Ok(Outcome::Failed {
                reason: format!(
                    "the deleted folder {} is gone and has no backup",
                    path.display()
                ),
            });
        };
        self.restore_from_backup(path, temp, original)
    }

    /// Moves a renamed folder back (and removes the folders made for it).
    fn unmove_folder(&self, from: &Path, to: &Path, dirs: &[PathBuf]) -> Result<Outcome, Crash> {
        if self.is_dir(from) && !self.exists(to) {
            self.remove_dirs(dirs)?;
            return Ok(Outcome::AlreadyOld);
        }
        if self.exists(from) || !self.is_dir(to) {
            return Ok(changed(to));
        }
        self.point("move the folder back", from)?;
        let moved = self.rename(to, from);
        self.forget_folders();
        if let Err(error) = moved {
            return Ok(failed("move back", to, &error));
        }
        self.touch(from);
        self.touch(to);
        self.remove_dirs(dirs)?;
        Ok(Outcome::Restored)
    }

    fn unmove_file(
        &self,
        from: &Path,
        to: &Path,
        dirs: &[PathBuf],
        temp: &Path,
        original: &[u8],
        new: Option<&[u8]>,
    ) -> Result<Outcome, Crash> {
        let at_to = self.content(to);
        if self.content(from).as_deref() == Some(original) {
            if !self.exists(to) {
                self.remove_dirs(dirs)?;
                return Ok(Outcome::AlreadyOld);
            }
            if at_to.as_deref() != Some(original) {
                return Ok(changed(to));
            }
            // Linked but the old name not yet removed: drop the new name.
            self.point("unlink the new name", to)?;
            if let Err(error) = self.remove_file(to) {
                return Ok(failed("remove", to, &error));
            }
            self.touch(to);
            self.remove_dirs(dirs)?;
            return Ok(Outcome::Restored);
        }
        if self.exists(from) {
            return Ok(changed(from));
        }
        let mut at_to = at_to;
        if let Some(new) = new.filter(|new| *new != original) {
            if at_to.as_deref() == Some(new) {
                self.point("write the backup to the temporary file", temp)?;
                if let Err(error) = self.write_temp(temp, original, Some(to)) {
                    return Ok(failed("write", temp, &error));
                }
                self.point("rename the backup over", to)?;
                if let Err(error) = self.rename(temp, to) {
                    return Ok(failed("restore", to, &error));
                }
                at_to = Some(original.to_vec());
            }
        }
        if at_to.as_deref() == Some(original) {
            self.point("link the file back", from)?;
            match self.link(to, from)? {
                Linked::Yes => {
                    self.point("unlink the new name", to)?;
                    if let Err(error) = self.remove_file(to) {
                        return Ok(failed("remove", to, &error));
                    }
                    self.touch(to);
                }
                Linked::Moved => {}
                Linked::No(outcome) => return Ok(outcome),
            }
            self.remove_dirs(dirs)?;
            return Ok(Outcome::Restored);
        }
        if self.exists(to) {
            return Ok(changed(to));
        }
        let outcome = self.restore_from_backup(from, temp, original)?;
        self.remove_dirs(dirs)?;
        Ok(outcome)
    }

    /// Writes the journal's backup of a file that is gone back at `path`.
    fn restore_from_backup(
        &self,
        path: &Path,
        temp: &Path,
        original: &[u8],
    ) -> Result<Outcome, Crash> {
        self.point("write the backup to the temporary file", temp)?;
        if let Err(error) = self.write_temp(temp, original, None) {
            return Ok(failed("write", temp, &error));
        }
        self.point("link the backup", path)?;
        Ok(self.place(temp, path)?.unwrap_or(Outcome::Restored))
    }

    /// Gives the temporary file `temp` the name `path`, never replacing anything there, and
    /// removes the temporary name. `None` when it worked.
    fn place(&self, temp: &Path, path: &Path) -> Result<Option<Outcome>, Crash> {
        match self.link(temp, path)? {
            Linked::Yes => {
                self.point("remove the temporary file", temp)?;
                let _ = self.remove_file(temp);
                Ok(None)
            }
            Linked::Moved => Ok(None),
            Linked::No(outcome) => Ok(Some(outcome)),
        }
    }

    /// A second name `to` for the file `from` (refused when `to` exists); where links are
    /// not possible, a check and a rename.
    fn link(&self, from: &Path, to: &Path) -> Result<Linked, Crash> {
        match self.hard_link(from, to) {
            Ok(()) => {
                self.touch(to);
                Ok(Linked::Yes)
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                Ok(Linked::No(changed(to)))
            }
            Err(error) if crate::is_escape(&error) || error.kind() == io::ErrorKind::NotFound => {
                Ok(Linked::No(failed("link", to, &error)))
            }
            Err(_) => {
                if self.exists(to) {
                    return Ok(Linked::No(changed(to)));
                }
                self.point("move", to)?;
                match self.rename(from, to) {
                    Ok(()) => {
                        self.touch(from);
                        self.touch(to);
                        Ok(Linked::Moved)
                    }
                    Err(error) => Ok(Linked::No(failed("move", from, &error))),
                }
            }
        }
    }

    /// Makes the folders of `dirs` that are missing, outermost first; `Some` on a failure.
    fn make_dirs(&self, dirs: &[PathBuf]) -> Result<Option<Outcome>, Crash> {
        for dir in dirs {
            if self.is_dir(dir) {
                continue;
            }
            self.point("make the folder", dir)?;
            if let Err(error) = self.ws.create_dir(dir) {
                return Ok(Some(failed("make the folder", dir, &error)));
            }
            self.touch(dir);
        }
        Ok(None)
    }

    /// Removes folders a step made, innermost first; one someone else filled meanwhile stays.
    fn remove_dirs(&self, dirs: &[PathBuf]) -> Result<(), Crash> {
        for dir in dirs.iter().rev() {
            if !self.is_dir(dir) {
                continue;
            }
            self.point("remove the folder", dir)?;
            if self.ws.remove_dir(dir).is_ok() {
                self.touch(dir);
                self.forget_folders();
            }
        }
        Ok(())
    }

    /// Removes the temporary files of `entries` that are there, several threads at a time:
    /// right after a crash, unlinking files the dead process had just written waits on the
    /// file system's journal, and parallel unlinks share those waits. One crash point before
    /// the batch (a crash inside it leaves a subset, which the next recovery removes).
    pub(crate) fn remove_temps(&self, entries: &[Entry<'_>]) -> Result<(), Crash> {
        let temps: Vec<&Path> = entries
            .iter()
            .map(Entry::temp)
            .filter(|temp| {
                matches!(
                    self.kind_here(temp),
                    Some(FileKind::Regular | FileKind::Symlink)
                )
            })
            .collect();
        let Some(first) = temps.first() else {
            return Ok(());
        };
        self.point("remove the temporary files", first)?;
        let threads = (temps.len() / 64).clamp(1, 8);
        let chunk = temps.len().div_ceil(threads);
        let ws = self.ws;
        let removed: Vec<PathBuf> = std::thread::scope(|scope| {
            let workers: Vec<_> = temps
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .filter(|temp| ws.remove_file(temp).is_ok())
                            .map(|temp| temp.to_path_buf())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|worker| worker.join().unwrap_or_default())
                .collect()
        });
        self.removed.borrow_mut().extend(removed);
        Ok(())
    }

    /// Removes the step's temporary file if it is there; returns it when it was.
    pub(crate) fn remove_temp(&self, entry: &Entry<'_>) -> Result<Option<PathBuf>, Crash> {
        let temp = entry.temp();
        match self.kind_here(temp) {
            Some(FileKind::Regular | FileKind::Symlink) => {}
            _ => return Ok(None),
        }
        self.point("remove the temporary file", temp)?;
        match self.remove_file(temp) {
            Ok(()) => {
                // Not made durable: a temporary file back after a power cut is removed again
                // by the next recovery (its journal is then still there too).
                self.removed.borrow_mut().push(temp.to_path_buf());
                Ok(Some(temp.to_path_buf()))
            }
            Err(_) => Ok(None),
        }
    }
}

/// What [`Engine::link`] did.
enum Linked {
    /// `to` is a second name; `from` is still there.
    Yes,
    /// Links were not possible: `from` was renamed to `to`.
    Moved,
    /// Neither; what to report.
    No(Outcome),
}
