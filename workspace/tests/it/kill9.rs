//! Real crashes: a child process (this test binary, re-invoked) commits a 150-file
//! transaction and is killed with `SIGKILL` at a random moment of it; recovery in this
//! process must then leave the tree byte for byte all-old or all-new, with no temporary file
//! and no journal left.
//!
//! `CC_KILL9_POINTS` sets how many kills (default 50); `CC_KILL9_SEED` replays a run (the
//! seed is printed).

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cc_workspace::{Direction, Transaction, Workspace};

/// Set in the child: `<root>\n<state>`.
const CHILD: &str = "CC_KILL9_CHILD";
const FILES: usize = 150;

fn old_content(i: usize) -> Vec<u8> {
    format!(
        "// file {i}\n{}",
        "export const value = 1;\n".repeat(40 + i % 50)
    )
    .into_bytes()
}

fn new_content(i: usize) -> Vec<u8> {
    format!(
        "// file {i}\n{}",
        "export const value = 2;\n".repeat(40 + i % 50)
    )
    .into_bytes()
}

/// The tree before the commit: `FILES` files in ten folders, plus one to delete and one
/// to rename.
fn lay_out(root: &Path) {
    for i in 0..FILES {
        let path = root.join(format!("src/m{}/f{i}.ts", i % 10));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, old_content(i)).unwrap();
    }
    std::fs::write(root.join("src/gone.ts"), "gone\n").unwrap();
    std::fs::write(root.join("src/old_name.ts"), "moved\n").unwrap();
}

/// The transaction: every file replaced, two created in a new folder, one deleted, one
/// renamed with new bytes.
fn transaction(root: &Path) -> Transaction {
    let mut tx = Transaction::new();
    for i in 0..FILES {
        let path = root.join(format!("src/m{}/f{i}.ts", i % 10));
        tx.replace(path, old_content(i), new_content(i));
    }
    tx.create(root.join("src/generated/a.ts"), b"a\n".to_vec());
    tx.create(root.join("src/generated/b.ts"), b"b\n".to_vec());
    tx.delete(root.join("src/gone.ts"), Some(b"gone\n".to_vec()));
    tx.rename(
        root.join("src/old_name.ts"),
        root.join("src/new_name.ts"),
        Some(b"moved\n".to_vec()),
        Some(b"moved and changed\n".to_vec()),
    );
    tx
}

/// The child's side: commit, saying when it starts and ends. A no-op in a normal run.
#[test]
fn kill9_child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let (root, state) = spec.split_once('\n').unwrap();
    let ws = Workspace::new(root).unwrap().with_state_dir(state);
    let tx = transaction(ws.path());
    println!("ready");
    if std::env::var_os(PAUSE).is_some() {
        tx.commit_with(&ws, &Pause).unwrap();
    } else {
        tx.commit(&ws).unwrap();
    }
    println!("done");
}

/// Set in the child: pause a while in the middle of the commit, saying so.
const PAUSE: &str = "CC_KILL9_PAUSE";

/// Pauses the commit at its 160th crash point (its renames have begun) for two seconds.
struct Pause;

impl cc_workspace::FaultInjector for Pause {
    fn crash_here(&self, point: cc_workspace::CrashPoint<'_>) -> bool {
        if point.index == 160 {
            println!("paused");
            std::thread::sleep(Duration::from_secs(2));
        }
        false
    }
}

/// Another live process's commit in progress is never recovered: its journal is locked.
#[test]
fn a_commit_in_progress_in_another_process_is_left_alone() {
    let base = tempfile::tempdir().unwrap();
    let (root, state) = (base.path().join("root"), base.path().join("state"));
    lay_out(&root);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kill9::kill9_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, format!("{}\n{}", root.display(), state.display()))
        .env(PAUSE, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines
        .by_ref()
        .any(|line| line.is_ok_and(|l| l.trim_end().ends_with("paused"))));
    let during = snapshot(&root);
    let ws = Workspace::new(&root).unwrap().with_state_dir(&state);
    let report = ws.recover();
    assert_eq!(report.in_progress, 1, "{report:?}");
    assert!(report.recovered.is_empty());
    assert!(snapshot(&root) == during, "the live commit was touched");
    assert!(lines.any(|line| line.is_ok_and(|l| l.trim_end().ends_with("done"))));
    assert!(child.wait().unwrap().success());
    assert!(ws.recover().is_empty());
}

type Snapshot = Vec<(PathBuf, Option<Vec<u8>>)>;

fn snapshot(root: &Path) -> Snapshot {
    cc_test_support::tree_snapshot(root)
        .into_iter()
        .map(|(path, bytes)| (path.strip_prefix(root).unwrap().to_path_buf(), bytes))
        .collect()
}

/// A small xorshift: the test needs spread, not quality, and no extra crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Starts the child committing on `root`; returns it once it said `ready`, and the reader
/// of the rest of its output.
fn start(root: &Path, state: &Path) -> (std::process::Child, std::io::Lines<impl BufRead>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kill9::kill9_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, format!("{}\n{}", root.display(), state.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.trim_end().ends_with("ready") => return (child, lines),
            Some(Ok(_)) => continue,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the child ended before it was ready: {other:?}");
            }
        }
    }
}

fn kill_and_reap(child: &mut std::process::Child) {
    let pid = child.id();
    let group = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    child.wait().unwrap();
    assert!(cc_test_support::wait_until_gone(
        pid,
        Duration::from_secs(20)
    ));
    assert!(cc_test_support::live_group_members(pid).is_empty());
}

#[test]
fn kill_9_at_random_moments_of_a_150_file_commit() {
    let points: usize = std::env::var("CC_KILL9_POINTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let seed = std::env::var("CC_KILL9_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("kill -9 test: {points} kills, CC_KILL9_SEED={seed}");
    let mut rng = Rng(seed);
    let base = tempfile::tempdir().unwrap();

    // The two trees a recovery may leave, and how long a whole commit takes here (the
    // quickest of three: the first runs on a cold cache).
    // And how long its renames take (from its journal's committing record to its end).
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let (mut took, mut renames) = (Duration::MAX, Duration::MAX);
    for run in 0..3 {
        let root = base.path().join(format!("calibrate{run}"));
        let state = base.path().join(format!("calibrate-state{run}"));
        lay_out(&root);
        old = snapshot(&root);
        let (mut child, _rest) = start(&root, &state);
        let started = Instant::now();
        let mut committing_at = None;
        let status = loop {
            if committing_at.is_none() && committing(&state) {
                committing_at = Some(Instant::now());
            }
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            std::thread::sleep(Duration::from_micros(100));
        };
        assert!(status.success());
        took = took.min(started.elapsed());
        if let Some(at) = committing_at {
            renames = renames.min(at.elapsed());
        }
        new = snapshot(&root);
        std::fs::remove_dir_all(&root).unwrap();
    }
    assert_ne!(old, new);
    eprintln!("a whole commit takes {took:?}, its renames {renames:?}");

    let (mut forward, mut back, mut nothing, mut finished, mut untouched) = (0, 0, 0, 0, 0);
    for point in 0..points {
        let root = base.path().join(format!("r{point}"));
        let state = base.path().join(format!("s{point}"));
        lay_out(&root);
        let (mut child, _rest) = start(&root, &state);
        // Up to 10% past the usual length, so that the end is covered too: half the kills
        // from the start of the commit (most land while it writes its temporaries), half
        // from its committing record (while it renames).
        let window = if point % 2 == 0 {
            took
        } else {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !committing(&state) && child.try_wait().unwrap().is_none() {
                assert!(Instant::now() < deadline);
                std::thread::sleep(Duration::from_micros(50));
            }
            renames
        };
        let window = window.as_micros() as u64 * 11 / 10 + 1;
        std::thread::sleep(Duration::from_micros(rng.next() % window));
        kill_and_reap(&mut child);

        let ws = Workspace::new(&root).unwrap().with_state_dir(&state);
        let report = ws.recover();
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        let tree = snapshot(&root);
        let temporaries: Vec<_> = tree
            .iter()
            .filter(|(path, _)| {
                path.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(".cc-"))
            })
            .collect();
        assert!(temporaries.is_empty(), "kill {point}: {temporaries:?}");
        let is_old = tree == old;
        let is_new = tree == new;
        assert!(
            is_old || is_new,
            "kill {point} (seed {seed}): a mixed tree after recovery: {report:?}"
        );
        match report.recovered.first() {
            Some(recovery) => {
                match recovery.direction {
                    Direction::Forward => {
                        assert!(is_new);
                        forward += 1;
                    }
                    Direction::Back => {
                        assert!(is_old);
                        back += 1;
                    }
                    _ => {
                        assert!(is_old);
                        nothing += 1;
                    }
                }
                assert!(recovery.temps_removed.iter().all(|temp| !temp.exists()));
            }
            None if is_new => finished += 1,
            None => untouched += 1,
        }
        let left: Vec<_> = walk(&state)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "journal"))
            .collect();
        assert!(left.is_empty(), "journals left: {left:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }
    eprintln!(
        "{points} kills: {forward} rolled forward, {back} rolled back, {nothing} before the \
         journal was whole, {finished} after the commit had ended, {untouched} before it began"
    );
    // The kills did land inside commits (else the test proves nothing).
    assert!(
        forward + back + nothing >= points / 3,
        "only {} of {points} kills landed inside a commit",
        forward + back + nothing
    );
}

/// Whether a journal under `state` has reached its committing phase (its last record).
fn committing(state: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    walk(state).into_iter().any(|path| {
        let mut tail = [0u8; 8];
        path.extension().is_some_and(|e| e == "journal")
            && std::fs::File::open(&path).is_ok_and(|mut file| {
                file.seek(SeekFrom::End(-8)).is_ok()
                    && file.read_exact(&mut tail).is_ok()
                    && &tail == b"PHASE:C\n"
            })
    })
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found
}
