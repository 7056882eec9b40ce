//! Shared by the harness's integration tests.

use std::path::Path;
use std::process::Command;

pub use cc_test_support::python_with;

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
