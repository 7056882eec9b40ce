//! Shared by the `debug_*` tests: a registry with a debug session, calls, and
//! process-table checks.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cc_dap_client::{DebugConfig, DebugSession};
use cc_tools::{Registry, Resources, Run, ToolError};
use serde_json::Value;

// Not every test binary uses every helper.
#[allow(unused_imports)]
pub use cc_dap_client::testing::{
    assert_gone, assert_no_tagged, debugpy_python, unique_tag, TAG_VAR,
};

/// Whether an lldb DAP server is on PATH; otherwise reports the missing peer (a failure
/// under CI, a loud skip locally).
pub fn lldb_ready() -> bool {
    let found = ["lldb-dap", "lldb-dap-19", "lldb-vscode"]
        .iter()
        .any(|name| cc_process::find_on_path(name).is_some());
    if !found {
        cc_test_support::require_peer("lldb-dap-19");
    }
    found
}

/// A temporary workspace.
pub fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

/// `[debug]` settings: the wait limit and the time-to-live, in seconds.
pub fn config(wait: f64, ttl: f64) -> DebugConfig {
    DebugConfig {
        wait_seconds: Some(wait),
        ttl_seconds: Some(ttl),
        // Generous: go builds and python startup are slow on a loaded machine.
        launch_timeout_seconds: Some(240.0),
        request_timeout_seconds: Some(60.0),
        ..Default::default()
    }
}

/// A registry whose `debug` tool runs with `config` and tags every process it starts with
/// `tag`.
pub fn registry(root: &Path, config: DebugConfig, tag: &str) -> Registry {
    registry_with_env(root, config, tag, &[])
}

/// [`registry`], its adapters (and builds) also getting `env`.
pub fn registry_with_env(
    root: &Path,
    config: DebugConfig,
    tag: &str,
    env: &[(&str, &str)],
) -> Registry {
    let mut debugger = DebugSession::new(root, config).with_env(TAG_VAR, tag);
    for (key, value) in env {
        debugger = debugger.with_env(*key, *value);
    }
    let debugger = Arc::new(debugger);
    let run = Run::builder(root)
        .conversation(format!("debug-test-{tag}"))
        .build();
    Resources {
        debug: Some(debugger),
        ..Default::default()
    }
    .build(run)
}

/// One test's workspace (holding its files), the tag its processes carry, and a registry
/// whose `debug` tool tags every process it starts.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub tag: String,
    pub debug: Registry,
}

impl Fixture {
    /// A workspace with `files` (name, content) and a `debug` tool configured by `config`.
    pub fn new(test: &str, files: &[(&str, &str)], config: DebugConfig) -> Self {
        let (dir, root) = workspace();
        for (name, text) in files {
            std::fs::write(root.join(name), text).unwrap();
        }
        let tag = unique_tag(test);
        let debug = registry(&root, config, &tag);
        Fixture {
            _dir: dir,
            root,
            tag,
            debug,
        }
    }

    /// Waits up to 20 s until no process this test started is left; panics naming them.
    pub async fn assert_no_leftovers(&self) {
        assert_no_tagged(&self.tag).await;
    }
}

/// Calls `debug` and returns the JSON result, panicking with the error otherwise (and when the
/// result is not the typed report its text renders).
pub async fn call(registry: &Registry, args: Value) -> Value {
    match registry.call("debug", args.clone()).await {
        Ok(output) => {
            cc_tools::testing::assert_typed_result("debug", &output.value, &output.render_text());
            output.value
        }
        Err(error) => panic!("debug {args} failed: {}", error.to_envelope()),
    }
}

/// Calls `debug` and returns only the text an MCP client puts in `content` (what many
/// clients show the model), panicking on an error.
pub async fn text(registry: &Registry, args: Value) -> String {
    match registry.call("debug", args.clone()).await {
        Ok(output) => {
            let text = output.render_text();
            cc_tools::testing::assert_typed_result("debug", &output.value, &text);
            text
        }
        Err(error) => panic!("debug {args} failed: {}", error.to_envelope()),
    }
}

/// Calls `debug` expecting an error; returns the `content` text of the error (its envelope).
pub async fn text_err(registry: &Registry, args: Value) -> String {
    match registry.call("debug", args.clone()).await {
        Ok(output) => panic!("debug {args} succeeded: {}", output.render_text()),
        Err(error) => error.to_envelope().to_string(),
    }
}

/// The number after the first `word` in `text` (`frame 3` → 3).
pub fn number_after(text: &str, word: &str) -> Option<i64> {
    text.match_indices(word).find_map(|(at, _)| {
        let digits: String = text[at + word.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

/// The line of `text` that starts (after indentation) with `prefix`.
pub fn line_starting<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.lines()
        .find(|line| line.trim_start().starts_with(prefix))
}

/// `text` with what differs per run replaced: the numbers after `thread ` (OS thread ids)
/// and hexadecimal addresses.
pub fn redact_threads(text: &str) -> String {
    let threads = redact_after(text, "thread ", |c| c.is_ascii_digit(), "[id]");
    redact_after(&threads, "0x", |c| c.is_ascii_hexdigit(), "[addr]")
}

/// `text` with each run of `part` characters right after `prefix` replaced by `with`.
fn redact_after(text: &str, prefix: &str, part: fn(&char) -> bool, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let (head, tail) = rest.split_at(at + prefix.len());
        out.push_str(head);
        let len: usize = tail.chars().take_while(part).map(char::len_utf8).sum();
        if len > 0 {
            out.push_str(with);
        }
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// Calls `debug` expecting an error.
pub async fn call_err(registry: &Registry, args: Value) -> ToolError {
    match registry.call("debug", args.clone()).await {
        Ok(output) => panic!("debug {args} succeeded: {}", output.value),
        Err(error) => error,
    }
}

/// The `variables` result for the local scope (`Locals`, lldb's `Local`) of `frame_id`.
pub async fn locals(registry: &Registry, frame_id: &Value) -> Value {
    let scopes = call(
        registry,
        serde_json::json!({"op": "scopes", "frame_id": frame_id}),
    )
    .await;
    let local = scopes["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap_or_default().starts_with("Local"))
        .unwrap_or_else(|| panic!("no locals scope: {scopes:#}"));
    call(
        registry,
        serde_json::json!({"op": "variables", "reference": local["reference"]}),
    )
    .await
}

/// The `stopped` object of a result, asserting the program is stopped.
pub fn stopped(value: &Value) -> &Value {
    assert_eq!(value["state"], "stopped", "not stopped: {value:#}");
    &value["stopped"]
}

/// `(file, line)` of a stopped result.
pub fn at(value: &Value) -> (String, i64) {
    let stop = stopped(value);
    (
        stop["file"].as_str().unwrap_or_default().to_owned(),
        stop["line"].as_i64().unwrap_or_default(),
    )
}

/// The session's adapter and debuggee pids, from `status`.
pub async fn session_pids(registry: &Registry) -> Vec<u32> {
    let status = call(registry, serde_json::json!({"op": "status"})).await;
    ["adapter_pid", "debuggee_pid"]
        .iter()
        .filter_map(|key| status["session"][key].as_u64())
        .map(|pid| u32::try_from(pid).unwrap())
        .collect()
}

/// The `output` result once the program has printed `total_bytes` in all: debugpy delivers
/// the program's output on another channel than its stops, so output can trail a stop by a
/// moment (what a call returns under `output` is what arrived during it).
pub async fn output_after(registry: &Registry, total_bytes: u64) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = call(registry, serde_json::json!({"op": "output"})).await;
        if last["total_bytes"].as_u64() >= Some(total_bytes) {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the program's output never reached {total_bytes} bytes: {last:#}");
}
