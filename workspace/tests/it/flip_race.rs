//! The symlink flip race: while another thread flips `race/` between a directory inside the
//! root and a symlink to a folder outside, reads and writes through `race/` never reach the
//! outside folder, and no file (temporary or not) is left there.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::path::{Path, PathBuf};

use cc_test_support::FlipRace;
use cc_workspace::{Transaction, Workspace};

const ITERATIONS: usize = 10_000;
/// The loop goes on past `ITERATIONS` until the other thread has flipped this often (a busy
/// machine can starve it), within `MAX_TIME`.
const MIN_FLIPS: u64 = 2_000;
const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(60);

struct Race {
    flipping: FlipRace,
    ws: Workspace,
    outside: PathBuf,
}

impl Race {
    fn start() -> Race {
        let flipping = FlipRace::start();
        let ws = Workspace::new(flipping.root()).unwrap();
        let outside = flipping.outside().to_path_buf();
        Race {
            flipping,
            ws,
            outside,
        }
    }

    /// Whether the loop should go on after `done` iterations.
    fn more(&self, done: usize, started: std::time::Instant) -> bool {
        (done < ITERATIONS || self.flipping.flips() < MIN_FLIPS) && started.elapsed() < MAX_TIME
    }

    fn finish(&mut self) -> (u64, Vec<String>) {
        self.flipping.finish()
    }

    fn assert_no_temporaries_inside(&self) {
        let mut stack = vec![self.ws.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                assert!(!name.starts_with(".cc-"), "temporary left: {name}");
                if entry.file_type().unwrap().is_dir() {
                    stack.push(entry.path());
                }
            }
        }
    }
}

fn attempt(ws: &Workspace, input: &str, op: impl FnOnce(&Path)) -> bool {
    match ws.resolve(input) {
        Ok(path) => {
            op(&path);
            true
        }
        Err(_) => false,
    }
}

#[test]
fn reads_never_return_the_outside_file() {
    let mut race = Race::start();
    let (mut inside, mut refused, mut escapes) = (0, 0, 0);
    let (started, mut done) = (std::time::Instant::now(), 0);
    while race.more(done, started) {
        done += 1;
        attempt(&race.ws, "race/secret.txt", |path| {
            match race.ws.read(path) {
                Ok(bytes) if bytes == b"outside" => escapes += 1,
                Ok(_) => inside += 1,
                Err(_) => refused += 1,
            }
        });
    }
    let (flips, outside) = race.finish();
    eprintln!(
        "read: {done} iterations, {flips} flips, {inside} read inside, {refused} refused, \
         {escapes} escapes"
    );
    assert_eq!(escapes, 0);
    assert!(inside > 0, "the race never let a read through");
    assert_eq!(outside, ["secret.txt"]);
}

#[test]
fn writes_never_land_outside() {
    let mut race = Race::start();
    let (mut written, mut escapes) = (0, 0);
    let (started, mut i) = (std::time::Instant::now(), 0);
    while race.more(i, started) {
        i += 1;
        attempt(&race.ws, &format!("race/x{}", i % 7), |path| {
            if race.ws.write_atomic(path, b"ours").is_ok() {
                written += 1;
            }
        });
        // The all-or-nothing writer takes the same road.
        if i % 10 == 0 {
            attempt(&race.ws, &format!("race/t{}", i % 3), |path| {
                let mut tx = Transaction::new();
                tx.create(path, b"tx".to_vec());
                let _ = tx.commit(&race.ws);
                let _ = race.ws.remove_file(path);
            });
        }
        if std::fs::read_dir(&race.outside).unwrap().count() != 1 {
            escapes += 1;
        }
    }
    let (flips, outside) = race.finish();
    race.assert_no_temporaries_inside();
    eprintln!(
        "write: {ITERATIONS} iterations, {flips} flips, {written} written, {escapes} escapes"
    );
    assert_eq!(escapes, 0);
    assert!(written > 0, "the race never let a write through");
    assert_eq!(outside, ["secret.txt"], "stray files outside");
}

#[test]
fn a_plain_symlink_out_is_refused_by_every_operation() {
    let mut race = Race::start();
    let (ws, outside) = (race.ws.clone(), race.outside.clone());
    let _ = race.finish();
    let through = ws.path().join("race_link/secret.txt");
    assert!(cc_workspace::is_escape(&ws.read(&through).unwrap_err()));
    for (_i, error) in [
        ws.write_atomic(&through, b"x").unwrap_err(),
        ws.write_new(&ws.path().join("race_link/n"), b"x")
            .unwrap_err(),
        ws.remove_file(&through).unwrap_err(),
        ws.rename(&through, &ws.path().join("stolen")).unwrap_err(),
        ws.hard_link(&through, &ws.path().join("linked"))
            .unwrap_err(),
    ]
    .into_iter()
    .enumerate()
    {
        assert!(cc_workspace::is_escape(&error), "operation {_i}: {error}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "outside"
    );
}
