//! `cargo xtask ci`: what `.ci/run` runs, in order, stopping at the first failing step:
//!
//! 1. `peers` — install and check the real peers;
//! 2. `fmt` — `cargo fmt --all -- --check`;
//! 3. `clippy` — `cargo clippy --workspace --all-targets -- -D warnings`;
//! 4. `doctests` — `cargo test --workspace --doc`;
//! 5. `tests` — `cargo nextest run --workspace --no-fail-fast` (or `cargo test --workspace` when
//!    cargo-nextest is absent);
//! 6. `leaks` — no process started by the tests may outlive them (see [`crate::leak`]).
//!
//! Test steps run with the project-local peers first on `PATH`, `CI` passed through, and
//! `CC_TEST_RUN=<token>`. The leak check runs whenever a test step ran, even a failed one,
//! so that nothing is left behind.

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
    let ci: OsString = std::env::var_os("CI")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "1".into());
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
    util::run_status(util::cargo(root).args(["fmt", "--all", "--", "--check"]))
        .map_err(|e| failed("fmt", &e))?;

    header(
        "clippy",
        "cargo clippy --workspace --all-targets -- -D warnings",
    );
    util::run_status(util::cargo(root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))
    .map_err(|e| failed("clippy", &e))?;

    // Doc tests first: the main runner's summary should be the last one in the log.
    header("doctests", "cargo test --workspace --doc");
    let mut cmd = util::cargo(root);
    cmd.args(["test", "--workspace", "--doc"]);
    test_env(&mut cmd);
    let mut result = util::run_status(&mut cmd).map_err(|e| failed("doctests", &e));

    if result.is_ok() {
        let mut cmd = util::cargo(root);
        if nextest {
            header("tests", "cargo nextest run --workspace --no-fail-fast");
            cmd.args(["nextest", "run", "--workspace", "--no-fail-fast"]);
        } else {
            header(
                "tests",
                "cargo test --workspace (cargo-nextest is not installed)",
            );
            cmd.args(["test", "--workspace", "--no-fail-fast"]);
        }
        test_env(&mut cmd);
        result = util::run_status(&mut cmd).map_err(|e| failed("tests", &e));
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

fn failed(step: &str, error: &str) -> String {
    format!("ci step `{step}` failed: {error}")
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
