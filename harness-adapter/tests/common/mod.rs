//! Shared by the harness's integration tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The python of the peers' venv, with every module in `modules` importable; None (skipped
/// locally, failing under CI) otherwise.
pub fn python_with(modules: &str) -> Option<PathBuf> {
    let python = cc_process::testing::require_peer("python3")?;
    let imports = Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .status()
        .map(|status| status.success())
        .unwrap_or(false);
    if imports {
        Some(python)
    } else {
        cc_process::testing::missing_peer(
            &format!("python modules {modules}"),
            "`python3` cannot import them; the venv from `cargo xtask peers` has them",
        );
        None
    }
}

/// Runs the MCP client script `fixtures/NAME` with the harness binary and `args`, and parses
/// the JSON report it prints.
#[allow(dead_code)] // Not every test binary runs a client script.
pub fn run_client_script(
    python: &Path,
    name: &str,
    args: &[&std::ffi::OsStr],
) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let output = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_cc-harness"))
        .args(args)
        .output()
        .expect("run the MCP client script");
    assert!(
        output.status.success(),
        "{name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client script prints JSON")
}
