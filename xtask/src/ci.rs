//! `cargo xtask ci`: what `.ci/run` runs, in order, stopping at the first failing step:
//!
//! 1. `peers` — install and check the real peers;
//! 2. `fmt` — `cargo fmt --all -- --check`;
//! 3. `clippy` — `cargo clippy --workspace --all-targets -- -D warnings`;
//! 4. `doctests` — `cargo test --workspace --doc`;
//! 5. `tests` — `cargo nextest run --workspace --lib --bins --tests --no-fail-fast` (or
//!    `cargo test` with the same targets when cargo-nextest is absent); the examples are
//!    checked by clippy and not linked again here;
//! 6. `leaks` — no process started by the tests may outlive them (see [`crate::leak`]).
//!
//! Test steps run with the project-local peers first on `PATH`, `CI` passed through, and
//! `CC_TEST_RUN=<token>`. The leak check runs whenever a test step ran, even a failed one,
//! so that nothing is left behind.
//!
//! On a CI machine (`CI` set by the caller) the build is one-shot, so incremental state is not
//! written; the free disk space is printed first, and a failed step on a nearly full disk says
//! so (the linker's own message is a bus error).

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::leak;
use crate::peers::{self, Layout};
use crate::util::{self, Result};

/// Runs every step; the error names the first that failed.
pub fn run(root: &Path) -> Result<()> {
    let layout = Layout::new(root);
    // Tests that need a peer skip when it is absent, unless CI is set: then they fail. CI
    // machines set CI=true; when CI is unset (a developer's `cargo xtask ci`), we set CI=1 so
    // that a missing peer fails here too instead of passing silently.
    let caller_ci = std::env::var_os("CI").filter(|v| !v.is_empty());
    let one_shot = caller_ci.is_some();
    let ci: OsString = caller_ci.unwrap_or_else(|| "1".into());
    let cargo = || {
        let mut cmd = util::cargo(root);
        if one_shot {
            cmd.env("CARGO_INCREMENTAL", "0");
        }
        cmd
    };
    let disk = || disk_free(root);
    eprintln!(
        "xtask ci: {}",
        disk().map_or_else(|| "free disk space unknown".into(), |d| d.note)
    );
    let path = util::prepend_path(&layout.path_entries())?;
    let token = leak::new_token();
    let test_env = |cmd: &mut Command| {
        cmd.env("PATH", &path)
            .env("CI", &ci)
            .env(leak::TEST_RUN_VAR, &token);
    };

    let nextest = has_nextest(root);
    let total = 6;
    let mut step = 0;
    let mut header = |name: &str, what: &str| {
        step += 1;
        eprintln!("\n==> ci step {step}/{total}: {name} ({what})");
    };

    header("peers", "cargo xtask peers");
    peers::install(&layout).map_err(|e| failed("peers", &e))?;

    header("fmt", "cargo fmt --all -- --check");
    util::run_status(cargo().args(["fmt", "--all", "--", "--check"]))
        .map_err(|e| failed("fmt", &e))?;

    header(
        "clippy",
        "cargo clippy --workspace --all-targets -- -D warnings",
    );
    util::run_status(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))
    .map_err(|e| failed_on_disk("clippy", &e, disk()))?;

    // Doc tests first: the main runner's summary should be the last one in the log.
    header("doctests", "cargo test --workspace --doc");
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--doc"]);
    test_env(&mut cmd);
    let mut result = util::run_status(&mut cmd).map_err(|e| failed_on_disk("doctests", &e, disk()));

    if result.is_ok() {
        let mut cmd = cargo();
        if nextest {
            header(
                "tests",
                "cargo nextest run --workspace --lib --bins --tests --no-fail-fast",
            );
            cmd.args(["nextest", "run"]);
        } else {
            header(
                "tests",
                "cargo test --workspace --lib --bins --tests (cargo-nextest is not installed)",
            );
            cmd.arg("test");
        }
        cmd.args(TEST_TARGETS).arg("--no-fail-fast");
        test_env(&mut cmd);
        result = util::run_status(&mut cmd).map_err(|e| failed_on_disk("tests", &e, disk()));
    }

    header("leaks", "no process outlives the tests");
    let survivors = leak::reap(leak::TEST_RUN_VAR, &token);
    for s in &survivors {
        eprintln!("  killed pid {}: {}", s.pid, s.cmdline);
    }
    result?;
    if !survivors.is_empty() {
        return Err(failed("leaks", &leak::describe(&survivors)));
    }
    eprintln!("\nxtask ci: all {total} steps passed");
    Ok(())
}

/// What the test step builds: every test, not the examples (clippy checks those).
const TEST_TARGETS: [&str; 4] = ["--workspace", "--lib", "--bins", "--tests"];

fn failed(step: &str, error: &str) -> String {
    format!("ci step `{step}` failed: {error}")
}

/// Below this much free space a failed build is most likely the disk's fault.
const LOW_DISK_BYTES: u64 = 2 << 30;

fn failed_on_disk(step: &str, error: &str, disk: Option<Disk>) -> String {
    let mut out = failed(step, error);
    if let Some(disk) = disk.filter(|d| d.free_bytes < LOW_DISK_BYTES) {
        out.push_str(&format!(
            "; the disk is nearly full ({}): a link that dies of a bus error or `No space \
             left on device` is this, not the code",
            disk.note
        ));
    }
    out
}

struct Disk {
    free_bytes: u64,
    note: String,
}

/// The free space on the checkout's disk, from `df`.
fn disk_free(root: &Path) -> Option<Disk> {
    let out = Command::new("df")
        .args(["-Pk"])
        .arg(root)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let avail_kib: u64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    let free_bytes = avail_kib.saturating_mul(1024);
    let note = format!(
        "{:.1} GiB free on the disk of {}",
        free_bytes as f64 / f64::from(1u32 << 30),
        root.display()
    );
    Some(Disk { free_bytes, note })
}

/// Whether `cargo nextest` runs here.
fn has_nextest(root: &Path) -> bool {
    util::cargo(root)
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
