//! The adversarial suite: `cc-harness mcp` attacked through real MCP clients, black-box over
//! stdio — raw JSON-RPC bytes and the official Python SDK (`fixtures/mcp_adversarial.py`),
//! and the official TypeScript SDK (`fixtures/mcp_adversarial.cjs`). No input may crash it,
//! hang it or lead a file operation outside the root; cancellation frees the kernel; closing
//! stdin ends it within 5 s whatever a tool is doing.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;

/// A root with the files the scripts attack, and a folder outside it.
struct Arena {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn arena() -> Arena {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(root.join("race")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("race/secret.txt"), "inside").unwrap();
    std::fs::write(outside.join("secret.txt"), "outside").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("race_link")).unwrap();
    let status = Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let socket = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
    std::mem::forget(socket); // the socket file must exist while the clients run
    let sparse = std::fs::File::create(root.join("sparse.bin")).unwrap();
    sparse.set_len(16 << 30).unwrap();
    std::fs::write(root.join("min.js"), "x".repeat(2 << 20)).unwrap();
    Arena {
        _dir: dir,
        root,
        outside,
    }
}

fn run(program: &Path, args: &[&std::ffi::OsStr]) -> Value {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{} failed: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("report: {stdout}");
    serde_json::from_str(stdout.trim()).expect("the client prints one JSON report")
}

fn python_script(arena: &Arena, mode: &str) -> Option<Value> {
    let python = common::python_with(&["mcp"])?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_adversarial.py");
    Some(run(
        &python,
        &[
            script.as_os_str(),
            Path::new(env!("CARGO_BIN_EXE_cc-harness")).as_os_str(),
            arena.root.as_os_str(),
            arena.outside.as_os_str(),
            std::ffi::OsStr::new(mode),
        ],
    ))
}

#[test]
fn raw_json_rpc_never_crashes_hangs_or_escapes() {
    let arena = arena();
    let Some(report) = python_script(&arena, "raw") else {
        return;
    };
    assert_eq!(report["initialize"], true);
    // Bad bytes and bad shapes get JSON-RPC errors, with the id when it can be read.
    assert_eq!(report["bad_utf8"]["error"]["code"], -32700);
    assert_eq!(report["bad_utf8"]["id"], 1);
    assert_eq!(report["not_json"]["error"]["code"], -32700);
    assert_eq!(report["method_number"]["error"]["code"], -32600);
    assert_eq!(report["method_number"]["id"], 2);
    let huge = report["huge_id_raw"].as_str().unwrap();
    assert!(
        huge.contains(r#""id":123456789012345678901234567890"#),
        "{huge}"
    );
    assert_eq!(report["string_id"], "s-é");
    assert_eq!(report["lone_surrogate"]["id"], 3);
    assert_eq!(report["lone_surrogate"]["error"]["code"], -32700);
    assert_eq!(report["deep_json"]["error"]["code"], -32700);
    assert_eq!(report["long_line"]["error"]["code"], -32700);
    assert_eq!(report["alive_after_garbage"], true);
    // Files that could block or flood are refused or bounded.
    assert_eq!(report["fifo"]["error"]["kind"], "not_a_regular_file");
    assert!(report["fifo_seconds"].as_f64().unwrap() < 5.0);
    assert_eq!(report["sparse"]["bytes"], 16u64 << 30);
    assert_eq!(report["sparse"]["truncated"], true);
    assert!(report["sparse_content_len"].as_u64().unwrap() < 17 * 1024);
    assert_eq!(report["edit_sparse"]["error"]["kind"], "too_large");
    assert_eq!(report["write_too_large"]["error"]["kind"], "too_large");
    assert_eq!(report["socket"]["error"]["kind"], "not_a_regular_file");
    assert_eq!(report["new_file_mode"], report["expected_mode"]);
    let rss = report["server_peak_rss_kib"].as_u64().unwrap();
    assert!(rss < 300 * 1024, "server peak RSS {rss} KiB");
    // The flip race: zero escapes, nothing stray outside.
    let race = &report["race"];
    assert_eq!(race["read_escapes"], 0, "{race}");
    assert_eq!(race["outside_entries"], serde_json::json!(["secret.txt"]));
    // Closing stdin mid-cell ends the server within 5 s, and no child outlives it.
    assert_eq!(report["kernel_started"], true);
    let exit = report["exit_seconds"].as_f64().expect("the server exited");
    assert!(exit < 5.0, "the server took {exit} s to exit");
    assert_eq!(report["survivors"], serde_json::json!([]));
}

#[test]
fn python_sdk_cancellation_interrupts_the_cell_and_the_run_goes_on() {
    let arena = arena();
    let Some(report) = python_script(&arena, "sdk") else {
        return;
    };
    assert_eq!(report["first_error"], false);
    assert_ne!(report["runaway"], "answered", "{report}");
    assert_eq!(report["next"]["result"], "42", "{report}");
    assert_eq!(report["next"]["state"], "kept");
    assert_eq!(report["fifo"]["error"]["kind"], "not_a_regular_file");
}

/// `.peers/npm`, where `cargo xtask peers` installs the TypeScript SDK and Ajv.
fn npm_peers() -> Option<PathBuf> {
    let node = cc_test_support::require_peer("node")?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.peers/npm");
    let sdk = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let ajv = dir.join("node_modules/ajv/package.json");
    if sdk.exists() && ajv.exists() {
        let _ = node;
        Some(dir)
    } else {
        cc_test_support::missing_peer(
            "@modelcontextprotocol/sdk and ajv",
            "not in .peers/npm; run `cargo xtask peers`",
        );
        None
    }
}

#[test]
fn typescript_sdk_sees_strict_schemas_and_cancels_a_runaway_cell() {
    let arena = arena();
    let Some(npm) = npm_peers() else { return };
    let node = cc_test_support::require_peer("node").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_adversarial.cjs");
    let report = run(
        &node,
        &[
            script.as_os_str(),
            npm.as_os_str(),
            Path::new(env!("CARGO_BIN_EXE_cc-harness")).as_os_str(),
            arena.root.as_os_str(),
        ],
    );
    assert_eq!(report["server"], "cc-harness");
    assert!(report["tools"].as_array().unwrap().len() >= 8, "{report}");
    assert_eq!(
        report["schema_errors"],
        serde_json::json!({}),
        "every schema compiles in Ajv strict mode"
    );
    assert_ne!(report["runaway"], "answered");
    assert_eq!(report["next"]["result"], "42", "{report}");
    assert_eq!(report["next"]["state"], "kept");
    assert_eq!(report["fifo"]["error"]["kind"], "not_a_regular_file");
    assert_eq!(report["huge_line"]["cut_lines"][0]["continue_at"], 16384);
    assert_eq!(report["lsp_line_minimum"], 1, "1-based lines say so");
}
