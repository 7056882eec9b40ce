//! The `cargo xtask` binary's own contract.

use std::process::Command;

use xtask::peers::Layout;
use xtask::util::repo_root;

#[test]
fn peers_path_prints_only_the_path() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["peers", "--path"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let root = repo_root();
    assert_eq!(
        stdout,
        format!(
            "{}/.peers/venv/bin:{}/.peers/npm/node_modules/.bin\n",
            root.display(),
            root.display()
        )
    );
    assert_eq!(stdout.trim_end(), Layout::new(&root).path_value());
}

#[test]
fn unknown_command_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("frobnicate")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: cargo xtask"));
}
