//! Crashes at every step of the commit protocol, then recovery: the tree is byte for byte
//! all-old or all-new, no temporary file is left, and the report says what happened.
//!
//! The fault injector ([`CrashAt`]) stops the commit at crash point k as a `kill -9` would:
//! the commit returns at once, nothing is cleaned up, the journal stays with its lock
//! released. Every k of every mix is tried; a proptest draws mixes of replace, create
//! (with new folders), delete (files and folders) and rename (files with and without new
//! bytes, into new folders, and folders), crashes the commit and then the recovery itself,
//! and sometimes lets another writer change a file after the crash.
//! (`workspace/tests/kill9.rs` does the same with real processes and `SIGKILL`.)

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::path::{Path, PathBuf};

use cc_workspace::{
    CommitError, CrashAt, Direction, FaultInjector, Outcome, Phase, RecordCrashPoints, Transaction,
    Workspace,
};
use proptest::prelude::*;

/// One operation of a mix, numbered by its place.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Replace,
    /// In two new folders.
    CreateDeep,
    CreateFlat,
    DeleteFile,
    DeleteFolder,
    /// `new`: with new bytes; `deep`: into a new folder.
    RenameFile {
        new: bool,
        deep: bool,
    },
    RenameFolder,
}

fn kind(code: u8, flag: u8) -> Kind {
    match code % 7 {
        0 => Kind::Replace,
        1 => Kind::CreateDeep,
        2 => Kind::CreateFlat,
        3 => Kind::DeleteFile,
        4 => Kind::DeleteFolder,
        5 => Kind::RenameFile {
            new: flag & 1 == 1,
            deep: flag & 2 == 2,
        },
        _ => Kind::RenameFolder,
    }
}

/// The tree every mix starts from, and the transaction of `mix` over it.
fn fixture(root: &Path, mix: &[Kind]) -> Transaction {
    std::fs::create_dir_all(root.join("d0")).unwrap();
    std::fs::write(root.join("d0/keep.txt"), "untouched\n").unwrap();
    let mut tx = Transaction::new();
    for (i, kind) in mix.iter().enumerate() {
        let old = format!("old {i}\n").into_bytes();
        let new = format!("new {i}\n").into_bytes();
        match kind {
            Kind::Replace => {
                let path = root.join(format!("d0/r{i}.txt"));
                std::fs::write(&path, &old).unwrap();
                tx.replace(path, old, new);
            }
            Kind::CreateDeep => tx.create(root.join(format!("c{i}/deep/n{i}.txt")), new),
            Kind::CreateFlat => tx.create(root.join(format!("d0/n{i}.txt")), new),
            Kind::DeleteFile => {
                let path = root.join(format!("del{i}.txt"));
                std::fs::write(&path, &old).unwrap();
                tx.delete(path, Some(old));
            }
            Kind::DeleteFolder => {
                let path = root.join(format!("deldir{i}"));
                std::fs::create_dir_all(path.join("inner")).unwrap();
                std::fs::write(path.join("inner/f.txt"), &old).unwrap();
                tx.delete(path, None);
            }
            Kind::RenameFile {
                new: with_new,
                deep,
            } => {
                let from = root.join(format!("mv{i}.txt"));
                std::fs::write(&from, &old).unwrap();
                let to = if *deep {
                    root.join(format!("mvdir{i}/moved{i}.txt"))
                } else {
                    root.join(format!("moved{i}.txt"))
                };
                tx.rename(from, to, Some(old), with_new.then_some(new));
            }
            Kind::RenameFolder => {
                let from = root.join(format!("pkg{i}"));
                std::fs::create_dir_all(&from).unwrap();
                std::fs::write(from.join("m.txt"), &old).unwrap();
                tx.rename(from, root.join(format!("lib{i}")), None, None);
            }
        }
    }
    tx
}

type Snapshot = Vec<(PathBuf, Option<Vec<u8>>)>;

/// Every entry under `root`, relative, with file bytes (`None`: a folder).
fn snapshot(root: &Path) -> Snapshot {
    cc_test_support::tree_snapshot(root)
        .into_iter()
        .map(|(path, bytes)| (path.strip_prefix(root).unwrap().to_path_buf(), bytes))
        .collect()
}

fn temporaries(tree: &Snapshot) -> Vec<&PathBuf> {
    tree.iter()
        .map(|(path, _)| path)
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(".cc-"))
        })
        .collect()
}

fn journals(state: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![state.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "journal") {
                found.push(path);
            }
        }
    }
    found
}

/// A fresh root with `mix` laid out, its workspace (state folder apart), and the tree
/// before and after a clean commit of the same mix.
struct Case {
    _dir: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
    ws: Workspace,
    tx: Transaction,
    old: Snapshot,
    new: Snapshot,
}

fn case(mix: &[Kind]) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let (root, state) = (dir.path().join("root"), dir.path().join("state"));
    let clean = dir.path().join("clean");
    for tree in [&root, &clean] {
        std::fs::create_dir_all(tree).unwrap();
    }
    let tx = fixture(&root, mix);
    let old = snapshot(&root);
    let clean_tx = fixture(&clean, mix);
    let clean_ws = Workspace::new(&clean).unwrap().with_state_dir(&state);
    clean_tx.commit(&clean_ws).unwrap();
    let new = snapshot(&clean);
    assert_ne!(old, new);
    assert!(temporaries(&new).is_empty(), "{new:?}");
    let ws = Workspace::new(&root).unwrap().with_state_dir(&state);
    Case {
        root: ws.path().to_path_buf(),
        _dir: dir,
        state,
        ws,
        tx,
        old,
        new,
    }
}

/// How many crash points a clean commit of `mix` passes, and which is the committing phase.
fn points(mix: &[Kind]) -> (usize, usize) {
    let case = case(mix);
    let recorder = RecordCrashPoints::default();
    case.tx.commit_with(&case.ws, &recorder).unwrap();
    let seen = recorder.seen();
    let committing = seen
        .iter()
        .position(|point| point.starts_with("journal the committing phase"))
        .unwrap();
    (seen.len(), committing)
}

/// Crashes `mix`'s commit at point `k`, optionally the recovery at `recovery_crash`, then
/// recovers; checks the tree and the report. `foreign`: another writer changes the first
/// replaced file after the crash.
fn crash_and_recover(mix: &[Kind], k: usize, recovery_crash: Option<usize>, foreign: bool) {
    let (total, committing) = points(mix);
    let k = k % total;
    let case = case(mix);
    let error = case.tx.commit_with(&case.ws, &CrashAt(k)).unwrap_err();
    assert!(
        matches!(error, CommitError::Interrupted { point, .. } if point == k),
        "{error}"
    );
    assert_eq!(journals(&case.state).len(), 1, "the journal stays");
    let theirs = b"theirs\n".to_vec();
    let victim = mix
        .iter()
        .position(|kind| matches!(kind, Kind::Replace))
        .map(|i| case.root.join(format!("d0/r{i}.txt")))
        .filter(|_| foreign);
    if let Some(victim) = &victim {
        std::fs::write(victim, &theirs).unwrap();
    }
    if let Some(j) = recovery_crash {
        // The recovery itself dies at its point j (or finishes when it has fewer).
        let _ = case.ws.recover_with(&CrashAt(j));
    }
    let report = case.ws.recover();
    let tree = snapshot(&case.root);
    assert!(
        temporaries(&tree).is_empty(),
        "k={k}: {:?}",
        temporaries(&tree)
    );
    assert!(
        journals(&case.state).is_empty(),
        "k={k}: journal left {:?}",
        journals(&case.state)
    );
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    // What a foreign writer changed is theirs; everything else is all-old or all-new.
    let with_theirs = |tree: &Snapshot| -> Snapshot {
        let mut tree = tree.clone();
        if let Some(victim) = &victim {
            let relative = victim.strip_prefix(&case.root).unwrap();
            for (path, bytes) in &mut tree {
                if path == relative {
                    *bytes = Some(theirs.clone());
                }
            }
        }
        tree
    };
    let all_old = tree == with_theirs(&case.old);
    let all_new = tree == with_theirs(&case.new);
    assert!(
        all_old || all_new,
        "k={k} (committing at {committing}), recovery crash {recovery_crash:?}: mixed tree\n{tree:#?}\nold {:#?}\nnew {:#?}",
        case.old,
        case.new
    );
    // Before the committing phase nothing was replaced: all-old; after it every
    // temporary file is whole, so the commit is finished.
    if !(all_old && all_new) {
        assert_eq!(all_new, k > committing, "k={k}, committing at {committing}");
    }
    // The report: one recovery (a recovery that crashed and the one that finished it may
    // each report), going the way the tree went, naming every file.
    let recovery = report
        .recovered
        .last()
        .cloned()
        .or_else(|| case.ws.last_recoveries().pop());
    let Some(recovery) = recovery else {
        panic!("k={k}: no recovery reported");
    };
    if recovery_crash.is_none() {
        assert_eq!(report.recovered.len(), 1);
        let expected_direction = if k == 0 {
            // Crashed right after the journal was written: nothing but the journal.
            Direction::Back
        } else if k > committing {
            Direction::Forward
        } else {
            Direction::Back
        };
        assert_eq!(recovery.direction, expected_direction, "k={k}");
        assert_eq!(recovery.files.len(), mix.len());
        assert_eq!(
            recovery.phase,
            if k > committing {
                Phase::Committing
            } else {
                Phase::Staging
            }
        );
        for file in &recovery.files {
            let foreign_one = victim.as_deref() == Some(file.path.as_path());
            match &file.outcome {
                Outcome::LeftAlone { reason } => {
                    assert!(
                        foreign_one,
                        "k={k}: {} left alone: {reason}",
                        file.path.display()
                    )
                }
                Outcome::Failed { reason } => panic!("k={k}: {reason}"),
                Outcome::Written | Outcome::AlreadyNew => {
                    assert_eq!(recovery.direction, Direction::Forward)
                }
                Outcome::Restored | Outcome::AlreadyOld => {
                    assert_eq!(recovery.direction, Direction::Back)
                }
                other => panic!("{other:?}"),
            }
            if foreign_one {
                assert!(
                    matches!(file.outcome, Outcome::LeftAlone { .. }),
                    "k={k}: the changed file was not reported: {:?}",
                    file.outcome
                );
            }
        }
        for temp in &recovery.temps_removed {
            assert!(!temp.exists(), "{}", temp.display());
        }
        let text = recovery.to_string();
        assert!(text.contains("temporary file(s) removed"), "{text}");
    }
    // A second recovery has nothing to do.
    assert!(case.ws.recover().recovered.is_empty());
}

const EVERY_KIND: [Kind; 9] = [
    Kind::Replace,
    Kind::CreateDeep,
    Kind::Replace,
    Kind::DeleteFile,
    Kind::RenameFile {
        new: true,
        deep: true,
    },
    Kind::DeleteFolder,
    Kind::CreateFlat,
    Kind::RenameFile {
        new: false,
        deep: false,
    },
    Kind::RenameFolder,
];

#[test]
fn a_crash_at_every_point_of_every_kind_is_recovered() {
    let (total, committing) = points(&EVERY_KIND);
    assert!(total > 20 && committing > 2, "{total} points");
    for k in 0..total {
        crash_and_recover(&EVERY_KIND, k, None, false);
    }
}

#[test]
fn a_crash_of_the_recovery_itself_is_recovered() {
    let (total, committing) = points(&EVERY_KIND);
    // Crash the commit well into its committing phase, then its recovery at every point.
    for k in [committing + 3, total - 3] {
        for j in 0..40 {
            crash_and_recover(&EVERY_KIND, k, Some(j), false);
        }
    }
}

#[test]
fn a_file_changed_after_the_crash_is_left_alone_and_reported() {
    let (total, committing) = points(&EVERY_KIND);
    for k in [committing - 1, committing + 2, total - 2] {
        crash_and_recover(&EVERY_KIND, k, None, true);
    }
}

/// Without the journal, a crash midway leaves a mixed tree: the test above has teeth.
#[test]
fn the_checks_see_a_mixed_tree() {
    let mix = [Kind::Replace, Kind::Replace, Kind::Replace];
    let case = case(&mix);
    // The state of a commit killed after one of three renames, without a journal.
    std::fs::write(case.root.join("d0/r0.txt"), "new 0\n").unwrap();
    let tree = snapshot(&case.root);
    assert!(tree != case.old && tree != case.new);
}

/// A commit whose step fails (a full disk, say) and that then crashes while it rolls back
/// is rolled back by the recovery.
#[test]
fn a_crash_during_a_rollback_ends_rolled_back() {
    /// Fails step 7; crashes at point `crash`; records how many points came before the
    /// failure.
    struct FailThenCrash {
        crash: usize,
        points: std::sync::atomic::AtomicUsize,
        failed_after: std::sync::atomic::AtomicUsize,
    }
    impl FaultInjector for FailThenCrash {
        fn before_rename(&self, index: usize, _path: &Path) -> std::io::Result<()> {
            if index == 7 {
                let seen = self.points.load(std::sync::atomic::Ordering::SeqCst);
                self.failed_after
                    .store(seen, std::sync::atomic::Ordering::SeqCst);
                Err(std::io::Error::other("disk full"))
            } else {
                Ok(())
            }
        }
        fn crash_here(&self, point: cc_workspace::CrashPoint<'_>) -> bool {
            self.points
                .store(point.index + 1, std::sync::atomic::Ordering::SeqCst);
            point.index == self.crash
        }
    }
    let faults = |crash| FailThenCrash {
        crash,
        points: 0.into(),
        failed_after: usize::MAX.into(),
    };
    let probe = case(&EVERY_KIND);
    let counting = faults(usize::MAX);
    let error = probe.tx.commit_with(&probe.ws, &counting).unwrap_err();
    assert!(matches!(error, CommitError::Io { .. }), "{error}");
    assert_eq!(snapshot(&probe.root), probe.old);
    let total = counting.points.into_inner();
    let failed_after = counting.failed_after.into_inner();
    assert!(failed_after < total);
    for crash in failed_after..total {
        let case = case(&EVERY_KIND);
        let result = case.tx.commit_with(&case.ws, &faults(crash));
        assert!(
            matches!(result, Err(CommitError::Interrupted { .. })),
            "{result:?}"
        );
        let report = case.ws.recover();
        assert_eq!(report.recovered[0].phase, Phase::RollingBack);
        assert_eq!(snapshot(&case.root), case.old, "crash {crash}");
        assert!(journals(&case.state).is_empty());
    }
}

/// A commit in progress in this process holds its journal's lock: a recovery leaves it.
#[test]
fn a_live_commit_is_not_recovered() {
    use std::sync::{Arc, Barrier};
    struct Pause(Arc<Barrier>, Arc<Barrier>);
    impl FaultInjector for Pause {
        fn crash_here(&self, point: cc_workspace::CrashPoint<'_>) -> bool {
            if point.index == 5 {
                self.0.wait();
                self.1.wait();
            }
            false
        }
    }
    let case = case(&EVERY_KIND);
    let (paused, resume) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let committing = {
        let (ws, tx) = (case.ws.clone(), case.tx.clone());
        let faults = Pause(paused.clone(), resume.clone());
        std::thread::spawn(move || tx.commit_with(&ws, &faults))
    };
    paused.wait();
    let during = snapshot(&case.root);
    let report = case.ws.recover();
    assert_eq!(report.in_progress, 1);
    assert!(report.recovered.is_empty());
    assert_eq!(snapshot(&case.root), during, "the live commit was touched");
    resume.wait();
    committing.join().unwrap().unwrap();
    assert_eq!(snapshot(&case.root), case.new);
}

/// Recovery runs before any new commit: a commit on a root with a crashed one first puts
/// it right, and the report is handed out once.
#[test]
fn a_commit_recovers_first_and_hands_the_report_out() {
    let case = case(&EVERY_KIND);
    let (_, committing) = points(&EVERY_KIND);
    let _ = case.tx.commit_with(&case.ws, &CrashAt(committing + 4));
    let extra = case.root.join("d0/extra.txt");
    let mut next = Transaction::new();
    next.create(&extra, b"x".to_vec());
    // A fresh workspace value, as a new run would have.
    let ws = Workspace::new(&case.root)
        .unwrap()
        .with_state_dir(&case.state);
    next.commit(&ws).unwrap();
    let recoveries = ws.take_recoveries();
    assert_eq!(recoveries.len(), 1);
    assert_eq!(recoveries[0].direction, Direction::Forward);
    assert!(ws.take_recoveries().is_empty(), "handed out once");
    let mut tree = snapshot(&case.root);
    tree.retain(|(path, _)| path != Path::new("d0/extra.txt"));
    assert_eq!(tree, case.new);
    assert_eq!(ws.last_recoveries()[0].files, recoveries[0].files);
}

/// A journal cut short (the process died while writing it) is discarded: nothing had
/// happened. A damaged one is kept aside and reported, nothing done with it.
#[test]
fn incomplete_and_damaged_journals() {
    let case = case(&EVERY_KIND);
    let _ = case.tx.commit_with(&case.ws, &CrashAt(0));
    let journal = journals(&case.state).pop().unwrap();
    let bytes = std::fs::read(&journal).unwrap();
    std::fs::write(&journal, &bytes[..bytes.len() / 2]).unwrap();
    let report = case.ws.recover();
    assert_eq!(report.recovered.len(), 1);
    assert_eq!(report.recovered[0].direction, Direction::Nothing);
    assert_eq!(report.recovered[0].phase, Phase::Journaling);
    assert!(journals(&case.state).is_empty());

    let _ = case.tx.commit_with(&case.ws, &CrashAt(0));
    let journal = journals(&case.state).pop().unwrap();
    let mut bytes = std::fs::read(&journal).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&journal, &bytes).unwrap();
    let report = case.ws.recover();
    assert!(report.recovered.is_empty());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(
        report.problems[0].contains("kept at"),
        "{:?}",
        report.problems
    );
    assert!(journal.with_extension("unreadable").exists());
    assert_eq!(snapshot(&case.root), case.old);
}

/// Without a state folder a commit refuses to start and writes nothing.
#[test]
fn no_state_folder_no_commit() {
    let case = case(&[Kind::Replace]);
    let ws = Workspace::new(&case.root)
        .unwrap()
        .with_state_dir("/proc/cc-no-such-state");
    let error = case.tx.commit(&ws).unwrap_err();
    assert!(matches!(error, CommitError::Journal { .. }), "{error}");
    assert!(error.to_string().contains("nothing was written"), "{error}");
    assert_eq!(snapshot(&case.root), case.old);
}

fn cases() -> u32 {
    std::env::var("CC_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn any_mix_crashed_anywhere_recovers_all_old_or_all_new(
        codes in proptest::collection::vec((0u8..7, 0u8..4), 1..7),
        k in 0usize..1_000,
        recovery_crash in proptest::option::weighted(0.3, 0usize..30),
        foreign in proptest::bool::weighted(0.2),
    ) {
        let mix: Vec<Kind> = codes.iter().map(|&(code, flag)| kind(code, flag)).collect();
        crash_and_recover(&mix, k, recovery_crash, foreign);
    }
}
