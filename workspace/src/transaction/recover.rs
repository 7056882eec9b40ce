//! Recovery: finishing or undoing the commits a crash interrupted, from their journals.
//!
//! [`Workspace::recover`] looks at this root's journal folder. A journal whose lock is free
//! belongs to a process that died (the kernel released its `flock`); one that is locked is a
//! commit in progress in a live process and is left alone. For each dead one, by the phase it
//! records:
//!
//! - written only in part: the commit wrote nothing else before its journal was whole and
//!   fsynced, so there is nothing to undo; the journal is removed;
//! - staging (no phase record): temporary files were being written, no target had been
//!   touched; they are removed, and the tree is all-old;
//! - committing: **rolled forward** when every step left can be completed exactly (each
//!   replacement not yet done still has its temporary file, whole, with the journaled
//!   digest; creates and renames carry their new bytes in the journal), otherwise **rolled
//!   back** from the backups in the journal. The decision is journaled (`PHASE:F` or
//!   `PHASE:B`) before anything is changed, so a recovery that is itself interrupted is
//!   continued the same way by the next one;
//! - rolling back (a commit whose step failed, killed while it restored): rolled back.
//!
//! Every step is inferred from the disk and completed or undone from there; a target that
//! holds neither its old nor its new content was changed by someone else after the crash
//! and is left as it is ([`Outcome::LeftAlone`]). Every temporary file the journal names is
//! removed. The typed [`Recovery`] says what was done to each file and when the commit
//! started; the last ones are also kept beside the journals ([`Workspace::last_recoveries`])
//! for `status`-like reports of a later process.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::journal::{self, Journal, Opened, Phase, Reader, RootLock, Unreadable};
use super::steps::{Crash, Engine, Outcome};
use super::{FaultInjector, NoFaults};
use crate::Workspace;

/// Which way a recovery took an interrupted commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// Finished: the tree holds the commit's new contents.
    Forward,
    /// Undone: the tree holds what it held before the commit.
    Back,
    /// Nothing had happened yet (the journal itself was being written).
    Nothing,
}

impl Direction {
    /// A short name (`forward`, `back`, `nothing`).
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Back => "back",
            Direction::Nothing => "nothing",
        }
    }
}

/// One file of a recovered commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredFile {
    /// The file (for a rename, where it was going).
    pub path: PathBuf,
    /// For a rename, where it came from.
    pub from: Option<PathBuf>,
    /// What the recovery found and did.
    pub outcome: Outcome,
}

/// What a recovery did with one interrupted commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The journal it read (removed now).
    pub journal: PathBuf,
    /// The process whose commit was interrupted.
    pub pid: u32,
    /// When that commit started.
    pub started: Option<SystemTime>,
    /// When its journal was last written: the crash came after this.
    pub last_written: Option<SystemTime>,
    /// When the recovery ran.
    pub recovered: SystemTime,
    /// How far the commit had got.
    pub phase: Phase,
    /// Which way the recovery took it.
    pub direction: Direction,
    /// Every file of the commit, with what was done.
    pub files: Vec<RecoveredFile>,
    /// Temporary files (and moved-aside deletions) that were removed.
    pub temps_removed: Vec<PathBuf>,
}

impl Recovery {
    /// How many files had `outcome` (compared by kind: `left_alone`, `written`, …).
    pub fn count(&self, outcome: &str) -> usize {
        self.files
            .iter()
            .filter(|file| file.outcome.as_str() == outcome)
            .count()
    }

    /// Files left as someone else made them, or that could not be put right, with why.
    pub fn not_done(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.files.iter().filter_map(|file| match &file.outcome {
            Outcome::LeftAlone { reason } | Outcome::Failed { reason } => {
                Some((file.path.as_path(), reason.as_str()))
            }
            _ => None,
        })
    }
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let started = self.started.map(utc).unwrap_or_else(|| "?".into());
        let last = self
            .last_written
            .map(|t| format!(", crashed after {}", utc(t)))
            .unwrap_or_default();
        let who = format!("process {}, started {started}{last}", self.pid);
        let files = self.files.len();
        match self.direction {
            Direction::Nothing => {
                return write!(
                    f,
                    "a commit interrupted while its journal was being written ({who}) had not \
                     started: nothing to undo"
                )
            }
            Direction::Forward => write!(
                f,
                "an interrupted commit of {files} file(s) ({who}) was rolled forward: {} \
                 completed now, {} already done",
                self.count("written"),
                self.count("already_new")
            )?,
            Direction::Back if self.phase == Phase::Staging => write!(
                f,
                "an interrupted commit of {files} file(s) ({who}) had replaced no file yet: \
                 rolled back, the tree is as before it"
            )?,
            Direction::Back => write!(
                f,
                "an interrupted commit of {files} file(s) ({who}) was rolled back: {} \
                 restored, {} not yet replaced",
                self.count("restored"),
                self.count("already_old")
            )?,
        }
        let left: Vec<String> = self
            .files
            .iter()
            .filter(|file| matches!(file.outcome, Outcome::LeftAlone { .. }))
            .map(|file| file.path.display().to_string())
            .collect();
        if !left.is_empty() {
            write!(
                f,
                "; {} left alone, changed by another writer since: {}",
                left.len(),
                left.join(", ")
            )?;
        }
        let failed: Vec<String> = self
            .files
            .iter()
            .filter_map(|file| match &file.outcome {
                Outcome::Failed { reason } => Some(format!("{} ({reason})", file.path.display())),
                _ => None,
            })
            .collect();
        if !failed.is_empty() {
            write!(
                f,
                "; {} COULD NOT be put right: {}",
                failed.len(),
                failed.join(", ")
            )?;
        }
        write!(
            f,
            "; {} temporary file(s) removed",
            self.temps_removed.len()
        )
    }
}

/// What [`Workspace::recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// The journal folder looked at (`None`: no state folder is known).
    pub journal_dir: Option<PathBuf>,
    /// Interrupted commits finished or undone, oldest journal first.
    pub recovered: Vec<Recovery>,
    /// Journals held by live processes (commits in progress), left alone.
    pub in_progress: usize,
    /// Journals that could not be used, and why (nothing was done with them).
    pub problems: Vec<String>,
}

impl RecoveryReport {
    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.recovered.is_empty() && self.problems.is_empty()
    }
}

impl Workspace {
    /// Finishes or undoes every commit on this root that a crash interrupted (see the
    /// module docs), so that the tree is all-old or all-new for each, and says what it did.
    /// Commits of live processes are left alone.
    pub fn recover(&self) -> RecoveryReport {
        match self.recover_with(&NoFaults) {
            Ok(report) => report,
            // NoFaults never stops a recovery.
            Err(stopped) => RecoveryReport {
                journal_dir: self.journal_dir(),
                problems: vec![stopped.to_string()],
                ..RecoveryReport::default()
            },
        }
    }

    /// [`recover`](Self::recover) with a fault injector that may stop it at a crash point,
    /// as a crash would (for tests of a recovery that is itself interrupted).
    pub fn recover_with(
        &self,
        faults: &dyn FaultInjector,
    ) -> Result<RecoveryReport, super::CommitError> {
        recover(self, faults)
            .map_err(|Crash(point, step)| super::CommitError::Interrupted { point, step })
    }

    /// What the last recovery on this root did (by any process), as it kept it beside the
    /// journals; empty when none is known.
    pub fn last_recoveries(&self) -> Vec<Recovery> {
        self.journal_dir()
            .and_then(|dir| std::fs::read(dir.join(LAST)).ok())
            .and_then(|bytes| decode_last(&bytes).ok())
            .unwrap_or_default()
    }
}

/// The file beside the journals that keeps the last recovery's report.
const LAST: &str = "last-recovery";
const LAST_MAGIC: &[u8; 8] = b"CCLAST1\n";

fn millis(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn from_millis(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

pub(crate) fn recover(ws: &Workspace, faults: &dyn FaultInjector) -> Result<RecoveryReport, Crash> {
    let mut report = RecoveryReport {
        journal_dir: ws.journal_dir(),
        ..RecoveryReport::default()
    };
    let Some(dir) = report.journal_dir.clone() else {
        return Ok(report);
    };
    if !dir.is_dir() {
        return Ok(report);
    }
    let mut locked = Vec::new();
    {
        // While this lock is held no journal is between its creation and its lock.
        let _root = match RootLock::take(&dir, false) {
            Ok(lock) => lock,
            Err(error) => {
                report
                    .problems
                    .push(format!("cannot lock {}: {error}", dir.display()));
                return Ok(report);
            }
        };
        let mut names: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| {
                    path.extension()
                        .is_some_and(|ext| ext == journal::EXTENSION)
                })
                .collect(),
            Err(error) => {
                report
                    .problems
                    .push(format!("cannot list {}: {error}", dir.display()));
                return Ok(report);
            }
        };
        names.sort();
        for path in names {
            match Journal::open_existing(&path) {
                Ok(Opened::Locked(journal)) => locked.push(journal),
                Ok(Opened::Busy) => report.in_progress += 1,
                Ok(Opened::Gone) => {}
                Err(error) => report
                    .problems
                    .push(format!("cannot open {}: {error}", path.display())),
            }
        }
    }
    for journal in locked {
        if let Some(recovery) = recover_one(ws, journal, faults, &mut report.problems)? {
            report.recovered.push(recovery);
        }
    }
    if !report.recovered.is_empty() {
        if let Err(error) = save_last(&dir, &report.recovered) {
            report.problems.push(format!(
                "the report could not be kept in {}: {error}",
                dir.display()
            ));
        }
    }
    Ok(report)
}

/// The pid a journal's name starts with (`<pid>-<nanos>-<n>.journal`).
fn pid_in_name(path: &Path) -> u32 {
    path.file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.split('-').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or(0)
}

fn recover_one(
    ws: &Workspace,
    mut journal: Journal,
    faults: &dyn FaultInjector,
    problems: &mut Vec<String>,
) -> Result<Option<Recovery>, Crash> {
    let path = journal.path().to_path_buf();
    let bytes = match journal.read_all() {
        Ok(bytes) => bytes,
        Err(error) => {
            problems.push(format!("cannot read {}: {error}", path.display()));
            return Ok(None);
        }
    };
    let last_written = journal.modified();
    let parsed = match journal::parse(&bytes) {
        Ok(parsed) => parsed,
        Err(unreadable) => {
            return set_aside(ws, journal, unreadable, last_written, faults, problems);
        }
    };
    if parsed.plan.root != ws.path() {
        problems.push(format!(
            "the journal {} is for another root ({}); left alone",
            path.display(),
            parsed.plan.root.display()
        ));
        return Ok(None);
    }
    let entries = &parsed.plan.entries;
    let engine = Engine::new(ws, faults);
    let direction = decide(&engine, &mut journal, parsed.phase, entries, problems)?;
    let outcomes = run_steps(&engine, direction, parsed.phase, entries)?;
    engine.remove_temps(entries)?;
    let temps_removed = engine.take_removed();
    engine.sync_touched();
    engine.point("remove the journal", &path)?;
    if let Err(error) = journal.remove() {
        problems.push(format!("cannot remove {}: {error}", path.display()));
    }
    let files = entries
        .iter()
        .zip(outcomes)
        .map(|(entry, outcome)| RecoveredFile {
            path: entry.target().to_path_buf(),
            from: match entry {
                journal::Entry::Rename { from, .. } => Some(from.clone()),
                _ => None,
            },
            outcome,
        })
        .collect();
    Ok(Some(Recovery {
        journal: path,
        pid: parsed.plan.pid,
        started: Some(from_millis(parsed.plan.started_ms)),
        last_written,
        recovered: SystemTime::now(),
        phase: parsed.phase,
        direction,
        files,
        temps_removed,
    }))
}

/// A journal that cannot be read: an incomplete one is removed (nothing is written before
/// the journal is whole: there is nothing to undo), a corrupt one is kept aside untouched.
fn set_aside(
    ws: &Workspace,
    journal: Journal,
    unreadable: Unreadable,
    last_written: Option<SystemTime>,
    faults: &dyn FaultInjector,
    problems: &mut Vec<String>,
) -> Result<Option<Recovery>, Crash> {
    let path = journal.path().to_path_buf();
    match unreadable {
        Unreadable::Incomplete => {
            let engine = Engine::new(ws, faults);
            engine.point("remove the incomplete journal", &path)?;
            if let Err(error) = journal.remove() {
                problems.push(format!("cannot remove {}: {error}", path.display()));
            }
            Ok(Some(Recovery {
                journal: path.clone(),
                pid: pid_in_name(&path),
                started: None,
                last_written,
                recovered: SystemTime::now(),
                phase: Phase::Journaling,
                direction: Direction::Nothing,
                files: Vec::new(),
                temps_removed: Vec::new(),
            }))
        }
        Unreadable::Corrupt(why) => {
            let kept = journal.keep_aside();
            problems.push(match kept {
                Ok(kept) => format!(
                    "the journal {} cannot be read ({why}); nothing was done with it, it is kept at {}",
                    path.display(),
                    kept.display()
                ),
                Err(error) => format!(
                    "the journal {} cannot be read ({why}) nor moved aside ({error}); nothing was done with it",
                    path.display()
                ),
            });
            Ok(None)
        }
    }
}

/// Which way the recovery goes from the journal's phase; a commit cut short goes forward
/// when every step can, and the decision is journaled before acting on it.
fn decide(
    engine: &Engine<'_>,
    journal: &mut Journal,
    phase: Phase,
    entries: &[journal::Entry<'_>],
    problems: &mut Vec<String>,
) -> Result<Direction, Crash> {
    Ok(match phase {
        Phase::Journaling | Phase::Staging | Phase::RollingBack => Direction::Back,
        Phase::RollingForward => Direction::Forward,
        Phase::Committing => {
            let forward = entries.iter().all(|entry| engine.forward_possible(entry));
            let (direction, phase) = if forward {
                (Direction::Forward, Phase::RollingForward)
            } else {
                (Direction::Back, Phase::RollingBack)
            };
            let path = journal.path().to_path_buf();
            engine.point("journal the recovery's decision", &path)?;
            if let Err(error) = journal.mark(phase) {
                // Acting without the record is still right: a recovery that follows
                // decides again from the disk, and finds the same steps possible.
                problems.push(format!(
                    "cannot journal the recovery's decision in {}: {error}",
                    path.display()
                ));
            }
            direction
        }
    })
}

/// Undoes or redoes the entries' steps; each entry's outcome, in the plan's order.
fn run_steps(
    engine: &Engine<'_>,
    direction: Direction,
    phase: Phase,
    entries: &[journal::Entry<'_>],
) -> Result<Vec<Outcome>, Crash> {
    let mut outcomes = Vec::with_capacity(entries.len());
    match (direction, phase) {
        (Direction::Back, Phase::Staging) => {
            // No target was touched: only the temporary files go.
            for entry in entries {
                outcomes.push(engine.classify_old(entry));
            }
        }
        (Direction::Back, _) => {
            for entry in entries.iter().rev() {
                outcomes.push(engine.backward(entry)?);
            }
            outcomes.reverse();
        }
        _ => {
            for entry in entries {
                outcomes.push(engine.forward(entry, true)?);
            }
            for entry in entries {
                engine.finish(entry)?;
            }
        }
    }
    Ok(outcomes)
}

fn save_last(dir: &Path, recovered: &[Recovery]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut out = Vec::new();
    out.extend_from_slice(LAST_MAGIC);
    journal::put_u64(&mut out, recovered.len() as u64);
    for recovery in recovered {
        journal::put_path(&mut out, &recovery.journal);
        journal::put_u64(&mut out, u64::from(recovery.pid));
        for time in [recovery.started, recovery.last_written] {
            journal::put_u64(&mut out, time.map_or(0, |t| millis(t).saturating_add(1)));
        }
        journal::put_u64(&mut out, millis(recovery.recovered));
        out.push(phase_code(recovery.phase));
        out.push(match recovery.direction {
            Direction::Forward => 0,
            Direction::Back => 1,
            Direction::Nothing => 2,
        });
        journal::put_u64(&mut out, recovery.files.len() as u64);
        for file in &recovery.files {
            journal::put_path(&mut out, &file.path);
            match &file.from {
                Some(from) => {
                    out.push(1);
                    journal::put_path(&mut out, from);
                }
                None => out.push(0),
            }
            let (code, reason) = match &file.outcome {
                Outcome::Written => (0, ""),
                Outcome::AlreadyNew => (1, ""),
                Outcome::Restored => (2, ""),
                Outcome::AlreadyOld => (3, ""),
                Outcome::LeftAlone { reason } => (4, reason.as_str()),
                Outcome::Failed { reason } => (5, reason.as_str()),
            };
            out.push(code);
            journal::put_bytes(&mut out, reason.as_bytes());
        }
        journal::put_paths(&mut out, &recovery.temps_removed);
    }
    let _root = RootLock::take(dir, true)?;
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(dir)?;
    let temp = dir.join(format!("{LAST}.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    // Not fsynced: a report lost to a power cut loses no data, and an fsync here would wait
    // for everything the dead process left in flight.
    file.write_all(&out)?;
    std::fs::rename(&temp, dir.join(LAST))
}

fn phase_code(phase: Phase) -> u8 {
    match phase {
        Phase::Journaling => 0,
        Phase::Staging => 1,
        Phase::Committing => 2,
        Phase::RollingBack => 3,
        Phase::RollingForward => 4,
    }
}

fn decode_last(bytes: &[u8]) -> Result<Vec<Recovery>, Unreadable> {
    let bad = || Unreadable::Corrupt("last recovery".into());
    let body = bytes.strip_prefix(LAST_MAGIC.as_slice()).ok_or_else(bad)?;
    let mut reader = Reader::new(body);
    let count = reader.u64()?;
    let mut recovered = Vec::new();
    for _ in 0..count {
        let journal = reader.path()?;
        let pid = u32::try_from(reader.u64()?).map_err(|_| bad())?;
        let mut time = || -> Result<Option<SystemTime>, Unreadable> {
            Ok(reader.u64()?.checked_sub(1).map(from_millis))
        };
        let (started, last_written) = (time()?, time()?);
        let recovered_at = from_millis(reader.u64()?);
        let phase = match reader.u8()? {
            0 => Phase::Journaling,
            1 => Phase::Staging,
            2 => Phase::Committing,
            3 => Phase::RollingBack,
            4 => Phase::RollingForward,
            _ => return Err(bad()),
        };
        let direction = match reader.u8()? {
            0 => Direction::Forward,
            1 => Direction::Back,
            2 => Direction::Nothing,
            _ => return Err(bad()),
        };
        let mut files = Vec::new();
        for _ in 0..reader.u64()? {
            let path = reader.path()?;
            let from = match reader.u8()? {
                0 => None,
                1 => Some(reader.path()?),
                _ => return Err(bad()),
            };
            let code = reader.u8()?;
            let reason = String::from_utf8_lossy(reader.bytes()?).into_owned();
            let outcome = match code {
                0 => Outcome::Written,
                1 => Outcome::AlreadyNew,
                2 => Outcome::Restored,
                3 => Outcome::AlreadyOld,
                4 => Outcome::LeftAlone { reason },
                5 => Outcome::Failed { reason },
                _ => return Err(bad()),
            };
            files.push(RecoveredFile {
                path,
                from,
                outcome,
            });
        }
        let temps_removed = reader.paths()?;
        recovered.push(Recovery {
            journal,
            pid,
            started,
            last_written,
            recovered: recovered_at,
            phase,
            direction,
            files,
            temps_removed,
        });
    }
    Ok(recovered)
}

/// `time` as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn utc(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let secs = i64::try_from(secs).unwrap_or(i64::MAX);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from a day count (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            utc(SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661)),
            "2000-02-29T01:01:01Z"
        );
        assert_eq!(
            utc(SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_599)),
            "2025-12-31T23:59:59Z"
        );
    }

    #[test]
    fn the_last_report_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let recovery = Recovery {
            journal: dir.path().join("j"),
            pid: 42,
            started: Some(from_millis(1_000)),
            last_written: None,
            recovered: from_millis(2_000),
            phase: Phase::Committing,
            direction: Direction::Forward,
            files: vec![
                RecoveredFile {
                    path: "/r/a".into(),
                    from: None,
                    outcome: Outcome::Written,
                },
                RecoveredFile {
                    path: "/r/b".into(),
                    from: Some("/r/c".into()),
                    outcome: Outcome::LeftAlone {
                        reason: "theirs".into(),
                    },
                },
            ],
            temps_removed: vec!["/r/.cc-edit-1".into()],
        };
        save_last(dir.path(), std::slice::from_ref(&recovery)).unwrap();
        let bytes = std::fs::read(dir.path().join(LAST)).unwrap();
        assert_eq!(decode_last(&bytes).unwrap(), [recovery]);
        for cut in 0..bytes.len() {
            assert!(decode_last(&bytes[..cut]).is_err());
        }
    }
}
