//! The commit journal: what a commit is about to do, written outside the tree (in the run's
//! state folder) before the first temporary file exists, so that the next run can finish or
//! undo a commit that a crash interrupted.
//!
//! One file per commit, `<journal dir>/<pid>-<nanos>-<n>.journal`, mode 0600 in folders of
//! mode 0700 (it holds the original bytes of the files the commit replaces):
//!
//! ```text
//! "CCJRNL1\n"  u64 plan length  plan  u128 xxh3 of the plan  blobs  phase records
//! ```
//!
//! The plan names every step: its targets, the temporary file it writes (chosen before
//! anything is created), the folders it creates, and digests (length and xxh3-128) of the
//! old and new contents. The blobs are the backups (every replaced, deleted or renamed file's
//! original bytes) and the new bytes of creates and renames, which have no temporary file
//! before their step. The plan, the blobs and the folder entry are fsynced before the commit
//! writes anything in the tree. Each phase change appends one 8-byte record, fsynced:
//! `PHASE:C` (committing: targets are being replaced), `PHASE:B` (rolling back), `PHASE:F`
//! (a recovery decided to finish the commit). No record means the commit was still writing
//! its temporary files and had touched no target.
//!
//! The committing process holds an exclusive `flock(2)` on its journal until the journal is
//! removed; the kernel releases it when the process dies, which is how a recovery tells a
//! dead commit from a live one. Creating a journal and taking its lock happen under a lock
//! on `<state>/journal/.lock`, which a recovery also holds while it looks, so it never sees
//! a journal between its creation and its lock.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use nix::fcntl::{Flock, FlockArg};

/// What a journal file's name ends with.
pub(crate) const EXTENSION: &str = "journal";
const MAGIC: &[u8; 8] = b"CCJRNL1\n";
const RECORD_COMMITTING: &[u8; 8] = b"PHASE:C\n";
const RECORD_ROLLING_BACK: &[u8; 8] = b"PHASE:B\n";
const RECORD_ROLLING_FORWARD: &[u8; 8] = b"PHASE:F\n";

/// Length and xxh3-128 of some bytes: how a recovery recognises a staged content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Digest {
    len: u64,
    hash: u128,
}

impl Digest {
    pub(crate) fn of(bytes: &[u8]) -> Self {
        Digest {
            len: bytes.len() as u64,
            hash: xxhash_rust::xxh3::xxh3_128(bytes),
        }
    }
}

/// How far an interrupted commit had got, as its journal says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// The journal itself was being written: nothing else had happened.
    Journaling,
    /// Temporary files were being written; no target had been touched.
    Staging,
    /// Targets were being replaced, one by one.
    Committing,
    /// A step had failed and the commit was putting back what it had replaced.
    RollingBack,
    /// A recovery had decided to finish the commit (and was itself interrupted).
    RollingForward,
}

impl Phase {
    /// A short name (`committing`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Journaling => "journaling",
            Phase::Staging => "staging",
            Phase::Committing => "committing",
            Phase::RollingBack => "rolling_back",
            Phase::RollingForward => "rolling_forward",
        }
    }

    fn record(self) -> Option<&'static [u8; 8]> {
        match self {
            Phase::Committing => Some(RECORD_COMMITTING),
            Phase::RollingBack => Some(RECORD_ROLLING_BACK),
            Phase::RollingForward => Some(RECORD_ROLLING_FORWARD),
            Phase::Journaling | Phase::Staging => None,
        }
    }
}

/// One step of a commit, as journaled. Contents are borrowed: from the transaction while
/// committing, from the journal file's bytes while recovering.
#[derive(Debug, Clone)]
pub(crate) enum Entry<'a> {
    /// `temp` holds the new content (digest `new`) and is renamed over `path`.
    Replace {
        path: PathBuf,
        temp: PathBuf,
        original: &'a [u8],
        new: Digest,
    },
    /// `dirs` are made, `new` goes to `temp`, which is hard-linked to `path`.
    Create {
        path: PathBuf,
        dirs: Vec<PathBuf>,
        temp: PathBuf,
        new: &'a [u8],
    },
    /// `path` is moved to `aside`, removed once every step is done. `temp` is where a
    /// recovery writes the backup when the aside is gone. `original`: `None` for a folder.
    Delete {
        path: PathBuf,
        aside: PathBuf,
        temp: PathBuf,
        original: Option<&'a [u8]>,
    },
    /// `from` moves to `to` (`dirs` made first); a file's `new` bytes then replace it
    /// through `temp`. `original`: `None` for a folder.
    Rename {
        from: PathBuf,
        to: PathBuf,
        dirs: Vec<PathBuf>,
        temp: PathBuf,
        original: Option<&'a [u8]>,
        new: Option<&'a [u8]>,
    },
}

impl Entry<'_> {
    /// The path a report names for this step.
    pub(crate) fn target(&self) -> &Path {
        match self {
            Entry::Replace { path, .. }
            | Entry::Create { path, .. }
            | Entry::Delete { path, .. } => path,
            Entry::Rename { to, .. } => to,
        }
    }

    /// The temporary files the step may leave (not the aside of a deletion).
    pub(crate) fn temp(&self) -> &Path {
        match self {
            Entry::Replace { temp, .. }
            | Entry::Create { temp, .. }
            | Entry::Delete { temp, .. }
            | Entry::Rename { temp, .. } => temp,
        }
    }
}

/// Everything a commit journals.
#[derive(Debug, Clone)]
pub(crate) struct Plan<'a> {
    /// The canonical root the paths are in.
    pub root: PathBuf,
    /// The committing process.
    pub pid: u32,
    /// When the commit started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    pub entries: Vec<Entry<'a>>,
}

/// Why a journal file could not be read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Shorter than it says it is: the process died while writing it, before the commit
    /// wrote anything else (nothing is written before the journal is complete and fsynced).
    Incomplete,
    /// Complete but wrong (not a journal, or damaged): kept aside for a person to look at.
    Corrupt(String),
}

/// A journal read back: its plan and the last phase it records.
#[derive(Debug)]
pub(crate) struct Parsed<'a> {
    pub plan: Plan<'a>,
    pub phase: Phase,
}

/// What [`Journal::open_existing`] found.
#[derive(Debug)]
pub(crate) enum Opened {
    /// Ours to recover: no live process holds it.
    Locked(Journal),
    /// A live process holds it: a commit in progress.
    Busy,
    /// Removed meanwhile: a commit that ended.
    Gone,
}

/// An open, locked journal file.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    file: Flock<File>,
}

fn errno(error: nix::errno::Errno) -> io::Error {
    io::Error::from_raw_os_error(error as i32)
}

fn make_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Holds `<journal root>/.lock` (blocking) while it lives.
#[derive(Debug)]
pub(crate) struct RootLock {
    _file: Flock<File>,
}

impl RootLock {
    /// Takes the lock of the journal root above `dir` (creating both when `create`);
    /// `None` when the root does not exist and `create` is false.
    pub(crate) fn take(dir: &Path, create: bool) -> io::Result<Option<RootLock>> {
        let root = dir.parent().unwrap_or(dir);
        if create {
            make_private_dir(root)?;
        } else if !root.is_dir() {
            return Ok(None);
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(root.join(".lock"))?;
        let file = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| errno(e))?;
        Ok(Some(RootLock { _file: file }))
    }
}

impl Journal {
    /// Writes `plan` to a new journal in `dir`, locked and fsynced (file and folder entry).
    pub(crate) fn create(dir: &Path, plan: &Plan<'_>) -> io::Result<Journal> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let (bytes, blobs) = encode(plan);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!(
            "{}-{nanos}-{}.{EXTENSION}",
            plan.pid,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = dir.join(name);
        let file = {
            // Under the root lock: a recovery never sees this journal before it is locked.
            let _root = RootLock::take(dir, true)?;
            make_private_dir(dir)?;
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?;
            Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| errno(e))?
        };
        let journal = Journal { path, file };
        let written = (|| {
            let mut out = io::BufWriter::with_capacity(1 << 16, &*journal.file);
            out.write_all(&bytes)?;
            for blob in blobs {
                out.write_all(blob)?;
            }
            out.flush()?;
            drop(out);
            journal.file.sync_data()?;
            File::open(dir)?.sync_all()
        })();
        match written {
            Ok(()) => Ok(journal),
            Err(error) => {
                let _ = journal.remove();
                Err(error)
            }
        }
    }

    /// Opens and locks the journal at `path` for a recovery.
    pub(crate) fn open_existing(path: &Path) -> io::Result<Opened> {
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Opened::Gone),
            Err(error) => return Err(error),
        };
        let file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(file) => file,
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => return Ok(Opened::Busy),
            Err((_, e)) => return Err(errno(e)),
        };
        // Locked after its commit unlinked it: it is over, nothing to recover.
        if file.metadata()?.nlink() == 0 {
            return Ok(Opened::Gone);
        }
        Ok(Opened::Locked(Journal {
            path: path.to_path_buf(),
            file,
        }))
    }

    /// The journal's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Its whole content.
    pub(crate) fn read_all(&self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut &*self.file, &mut bytes)?;
        Ok(bytes)
    }

    /// When it was last written (the crash came after).
    pub(crate) fn modified(&self) -> Option<SystemTime> {
        self.file.metadata().and_then(|m| m.modified()).ok()
    }

    /// Appends the record of `phase` and fsyncs it.
    pub(crate) fn mark(&mut self, phase: Phase) -> io::Result<()> {
        let Some(record) = phase.record() else {
            return Ok(());
        };
        let mut file = &*self.file;
        io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
        file.write_all(record)?;
        self.file.sync_data()
    }

    /// Removes the journal (and its folder when it is left empty), then unlocks it.
    pub(crate) fn remove(self) -> io::Result<()> {
        let dir = self.path.parent().map(Path::to_path_buf);
        let _root = match &dir {
            Some(dir) => RootLock::take(dir, false)?,
            None => None,
        };
        std::fs::remove_file(&self.path)?;
        if let Some(dir) = &dir {
            // Only when empty; a folder still in use (another journal, a report) stays.
            let _ = std::fs::remove_dir(dir);
        }
        Ok(())
    }

    /// Moves an unreadable journal aside (`.unreadable`), unlocking it.
    pub(crate) fn keep_aside(self) -> io::Result<PathBuf> {
        let kept = self.path.with_extension("unreadable");
        std::fs::rename(&self.path, &kept)?;
        Ok(kept)
    }
}

/// The plan's bytes (header, plan, checksum) and the blobs that follow them, in order.
fn encode<'a>(plan: &Plan<'a>) -> (Vec<u8>, Vec<&'a [u8]>) {
    let mut blobs: Vec<&'a [u8]> = Vec::new();
    let mut offset = 0u64;
    let mut blob = |out: &mut Vec<u8>, bytes: &'a [u8]| {
        put_u64(out, offset);
        put_u64(out, bytes.len() as u64);
        put_u128(out, Digest::of(bytes).hash);
        offset += bytes.len() as u64;
        blobs.push(bytes);
    };
    let mut body = Vec::new();
    put_bytes(&mut body, plan.root.as_os_str().as_bytes());
    put_u64(&mut body, u64::from(plan.pid));
    put_u64(&mut body, plan.started_ms);
    put_u64(&mut body, plan.entries.len() as u64);
    for entry in &plan.entries {
        match entry {
            Entry::Replace {
                path,
                temp,
                original,
                new,
            } => {
                body.push(1);
                put_path(&mut body, path);
                put_path(&mut body, temp);
                blob(&mut body, original);
                put_u64(&mut body, new.len);
                put_u128(&mut body, new.hash);
            }
            Entry::Create {
                path,
                dirs,
                temp,
                new,
            } => {
                body.push(2);
                put_path(&mut body, path);
                put_paths(&mut body, dirs);
                put_path(&mut body, temp);
                blob(&mut body, new);
            }
            Entry::Delete {
                path,
                aside,
                temp,
                original,
            } => {
                body.push(3);
                put_path(&mut body, path);
                put_path(&mut body, aside);
                put_path(&mut body, temp);
                match original {
                    Some(bytes) => {
                        body.push(1);
                        blob(&mut body, bytes);
                    }
                    None => body.push(0),
                }
            }
            Entry::Rename {
                from,
                to,
                dirs,
                temp,
                original,
                new,
            } => {
                body.push(4);
                put_path(&mut body, from);
                put_path(&mut body, to);
                put_paths(&mut body, dirs);
                put_path(&mut body, temp);
                for content in [original, new] {
                    match content {
                        Some(bytes) => {
                            body.push(1);
                            blob(&mut body, bytes);
                        }
                        None => body.push(0),
                    }
                }
            }
        }
    }
    // The blobs' total length closes the plan, so a reader knows where the records start.
    put_u64(&mut body, offset);
    let mut out = Vec::with_capacity(body.len() + 32);
    out.extend_from_slice(MAGIC);
    put_u64(&mut out, body.len() as u64);
    out.extend_from_slice(&body);
    put_u128(&mut out, xxhash_rust::xxh3::xxh3_128(&body));
    (out, blobs)
}

pub(crate) fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

pub(crate) fn put_u128(out: &mut Vec<u8>, value: u128) {
    out.extend_from_slice(&value.to_le_bytes());
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

pub(crate) fn put_path(out: &mut Vec<u8>, path: &Path) {
    put_bytes(out, path.as_os_str().as_bytes());
}

pub(crate) fn put_paths(out: &mut Vec<u8>, paths: &[PathBuf]) {
    put_u64(out, paths.len() as u64);
    for path in paths {
        put_path(out, path);
    }
}

/// Reads a journal's bytes back. Every length and offset is checked against what is there.
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed<'_>, Unreadable> {
    let (body, blobs_start) = checked_body(bytes)?;
    let mut refs: Vec<(u64, u64, u128)> = Vec::new();
    let mut reader = Reader::new(body);
    let root = PathBuf::from(std::ffi::OsStr::from_bytes(reader.bytes()?));
    let pid = u32::try_from(reader.u64()?).map_err(|_| corrupt("pid"))?;
    let started_ms = reader.u64()?;
    let count = reader.u64()?;
    // Raw entries first (blob references as indices into `refs`), then the slices.
    let mut raw = Vec::new();
    for _ in 0..count {
        raw.push(Raw::read(&mut reader, &mut refs)?);
    }
    let blobs_len = reader.u64()?;
    let blobs_end = usize::try_from(blobs_len)
        .ok()
        .and_then(|len| blobs_start.checked_add(len))
        .ok_or(Unreadable::Incomplete)?;
    if bytes.len() < blobs_end {
        return Err(Unreadable::Incomplete);
    }
    let slices = blob_slices(&bytes[blobs_start..blobs_end], refs)?;
    let entries = raw
        .into_iter()
        .map(|entry| entry.with_contents(&slices))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Parsed {
        plan: Plan {
            root,
            pid,
            started_ms,
            entries,
        },
        phase: last_phase(&bytes[blobs_end..]),
    })
}

/// The plan's bytes, once the magic, the length and the checksum are checked, and where
/// the contents' area starts.
fn checked_body(bytes: &[u8]) -> Result<(&[u8], usize), Unreadable> {
    if bytes.len() < MAGIC.len() {
        return if MAGIC.starts_with(bytes) {
            Err(Unreadable::Incomplete)
        } else {
            Err(Unreadable::Corrupt("not a commit journal".into()))
        };
    }
    if &bytes[..MAGIC.len()] != MAGIC {
        return Err(Unreadable::Corrupt("not a commit journal".into()));
    }
    let mut header = Reader::new(&bytes[MAGIC.len()..]);
    let plan_len = header.u64()?;
    let body_start = MAGIC.len() + 8;
    let body_end = usize::try_from(plan_len)
        .ok()
        .and_then(|len| body_start.checked_add(len))
        .ok_or(Unreadable::Incomplete)?;
    let checksum_end = body_end.checked_add(16).ok_or(Unreadable::Incomplete)?;
    if bytes.len() < checksum_end {
        return Err(Unreadable::Incomplete);
    }
    let body = &bytes[body_start..body_end];
    let mut checksum = Reader::new(&bytes[body_end..checksum_end]);
    if checksum.u128()? != xxhash_rust::xxh3::xxh3_128(body) {
        return Err(Unreadable::Corrupt(
            "the plan's checksum does not match".into(),
        ));
    }
    Ok((body, checksum_end))
}

/// The contents each blob reference points at, each checked against its hash.
fn blob_slices(blob_area: &[u8], refs: Vec<(u64, u64, u128)>) -> Result<Vec<&[u8]>, Unreadable> {
    let mut slices = Vec::with_capacity(refs.len());
    for (offset, len, hash) in refs {
        let slice = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(start, len)| Some((start, start.checked_add(len)?)))
            .and_then(|(start, end)| blob_area.get(start..end))
            .ok_or_else(|| corrupt("a content's place"))?;
        if Digest::of(slice).hash != hash {
            return Err(corrupt("a content's checksum"));
        }
        slices.push(slice);
    }
    Ok(slices)
}

/// The phase the records after the contents reach. A record cut short (power lost
/// mid-append) is ignored, and so is anything after it.
fn last_phase(records: &[u8]) -> Phase {
    let mut phase = Phase::Staging;
    for record in records.chunks(8) {
        phase = match record {
            r if r == RECORD_COMMITTING => Phase::Committing,
            r if r == RECORD_ROLLING_BACK => Phase::RollingBack,
            r if r == RECORD_ROLLING_FORWARD => Phase::RollingForward,
            _ => break,
        };
    }
    phase
}

/// A plan's entry as read, its contents as indices into the blob references.
enum Raw {
    Replace(PathBuf, PathBuf, usize, Digest),
    Create(PathBuf, Vec<PathBuf>, PathBuf, usize),
    Delete(PathBuf, PathBuf, PathBuf, Option<usize>),
    Rename(
        PathBuf,
        PathBuf,
        Vec<PathBuf>,
        PathBuf,
        Option<usize>,
        Option<usize>,
    ),
}

impl Raw {
    fn read(reader: &mut Reader<'_>, refs: &mut Vec<(u64, u64, u128)>) -> Result<Raw, Unreadable> {
        Ok(match reader.u8()? {
            1 => {
                let path = reader.path()?;
                let temp = reader.path()?;
                let original = reader.blob(refs)?;
                let new = Digest {
                    len: reader.u64()?,
                    hash: reader.u128()?,
                };
                Raw::Replace(path, temp, original, new)
            }
            2 => Raw::Create(
                reader.path()?,
                reader.paths()?,
                reader.path()?,
                reader.blob(refs)?,
            ),
            3 => Raw::Delete(
                reader.path()?,
                reader.path()?,
                reader.path()?,
                reader.optional_blob(refs)?,
            ),
            4 => Raw::Rename(
                reader.path()?,
                reader.path()?,
                reader.paths()?,
                reader.path()?,
                reader.optional_blob(refs)?,
                reader.optional_blob(refs)?,
            ),
            other => return Err(corrupt(&format!("step kind {other}"))),
        })
    }

    /// The entry with its contents.
    fn with_contents<'a>(self, slices: &[&'a [u8]]) -> Result<Entry<'a>, Unreadable> {
        let slice = |index: usize| slices.get(index).copied().ok_or_else(|| corrupt("blob"));
        let optional = |index: Option<usize>| index.map(slice).transpose();
        Ok(match self {
            Raw::Replace(path, temp, original, new) => Entry::Replace {
                path,
                temp,
                original: slice(original)?,
                new,
            },
            Raw::Create(path, dirs, temp, new) => Entry::Create {
                path,
                dirs,
                temp,
                new: slice(new)?,
            },
            Raw::Delete(path, aside, temp, original) => Entry::Delete {
                path,
                aside,
                temp,
                original: optional(original)?,
            },
            Raw::Rename(from, to, dirs, temp, original, new) => Entry::Rename {
                from,
                to,
                dirs,
                temp,
                original: optional(original)?,
                new: optional(new)?,
            },
        })
    }
}

fn corrupt(what: &str) -> Unreadable {
    Unreadable::Corrupt(format!("the journal's {what} is not valid"))
}

/// A cursor over the plan's bytes; running out is [`Unreadable::Incomplete`].
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], Unreadable> {
        if self.bytes.len() < len {
            return Err(Unreadable::Incomplete);
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Unreadable> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u64(&mut self) -> Result<u64, Unreadable> {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(raw))
    }

    pub(crate) fn u128(&mut self) -> Result<u128, Unreadable> {
        let mut raw = [0u8; 16];
        raw.copy_from_slice(self.take(16)?);
        Ok(u128::from_le_bytes(raw))
    }

    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], Unreadable> {
        let len = usize::try_from(self.u64()?).map_err(|_| Unreadable::Incomplete)?;
        self.take(len)
    }

    pub(crate) fn path(&mut self) -> Result<PathBuf, Unreadable> {
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(self.bytes()?)))
    }

    pub(crate) fn paths(&mut self) -> Result<Vec<PathBuf>, Unreadable> {
        let count = self.u64()?;
        // No allocation sized by the input: each path takes at least 8 bytes anyway.
        let mut paths = Vec::new();
        for _ in 0..count {
            paths.push(self.path()?);
        }
        Ok(paths)
    }

    fn blob(&mut self, refs: &mut Vec<(u64, u64, u128)>) -> Result<usize, Unreadable> {
        let (offset, len, hash) = (self.u64()?, self.u64()?, self.u128()?);
        refs.push((offset, len, hash));
        Ok(refs.len() - 1)
    }

    fn optional_blob(
        &mut self,
        refs: &mut Vec<(u64, u64, u128)>,
    ) -> Result<Option<usize>, Unreadable> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.blob(refs).map(Some),
            _ => Err(corrupt("optional content")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(original: &[u8]) -> Plan<'_> {
        Plan {
            root: PathBuf::from("/r"),
            pid: 7,
            started_ms: 9,
            entries: vec![
                Entry::Replace {
                    path: "/r/a".into(),
                    temp: "/r/.cc-edit-a".into(),
                    original,
                    new: Digest::of(b"new"),
                },
                Entry::Create {
                    path: "/r/d/c".into(),
                    dirs: vec!["/r/d".into()],
                    temp: "/r/d/.cc-create-c".into(),
                    new: b"created",
                },
                Entry::Delete {
                    path: "/r/pkg".into(),
                    aside: "/r/.cc-deleted-pkg".into(),
                    temp: "/r/.cc-restore-pkg".into(),
                    original: None,
                },
                Entry::Rename {
                    from: "/r/x".into(),
                    to: "/r/y".into(),
                    dirs: vec![],
                    temp: "/r/.cc-edit-y".into(),
                    original: Some(b"x"),
                    new: Some(b"y"),
                },
            ],
        }
    }

    fn whole(plan: &Plan<'_>) -> Vec<u8> {
        let (mut bytes, blobs) = encode(plan);
        for blob in blobs {
            bytes.extend_from_slice(blob);
        }
        bytes
    }

    #[test]
    fn a_plan_reads_back_with_its_phase() {
        let mut bytes = whole(&plan(b"old"));
        let parsed = parse(&bytes).unwrap();
        assert_eq!(parsed.phase, Phase::Staging);
        assert_eq!(parsed.plan.pid, 7);
        assert_eq!(parsed.plan.entries.len(), 4);
        let Entry::Replace { original, new, .. } = &parsed.plan.entries[0] else {
            panic!("replace first");
        };
        assert_eq!((*original, *new), (&b"old"[..], Digest::of(b"new")));
        let Entry::Rename { original, new, .. } = &parsed.plan.entries[3] else {
            panic!("rename last");
        };
        assert_eq!((*original, *new), (Some(&b"x"[..]), Some(&b"y"[..])));
        bytes.extend_from_slice(RECORD_COMMITTING);
        assert_eq!(parse(&bytes).unwrap().phase, Phase::Committing);
        bytes.extend_from_slice(RECORD_ROLLING_BACK);
        bytes.extend_from_slice(b"PHA");
        assert_eq!(parse(&bytes).unwrap().phase, Phase::RollingBack);
    }

    #[test]
    fn every_cut_is_incomplete_and_every_flip_is_caught() {
        let bytes = whole(&plan(b"old content"));
        for cut in 0..bytes.len() {
            assert_eq!(
                parse(&bytes[..cut]).unwrap_err(),
                Unreadable::Incomplete,
                "cut at {cut}"
            );
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x40;
            // Never a panic, and never the same plan read as valid with other contents.
            if let Ok(parsed) = parse(&flipped) {
                panic!("a flip at {at} read as {:?}", parsed.plan);
            }
        }
    }
}
