//! Helpers shared by the integration tests: fixtures, pools with lenient caps, and
//! process-table checks.
#![allow(dead_code)]

pub mod fake;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cc_lsp_client::{CheckOutcome, Diagnostic, Ledger, LspConfig, ServerPool, ServerPoolOptions};
use cc_test_support::require_peer;

/// What a scripted Python LSP server shares: `read()` returns the next message (and calls
/// `on_eof()`, which exits unless the script redefines it, when the client closes stdin),
/// `send(message)` writes one, `publish(uri, version,
/// messages)` sends one diagnostic per message (no `version` when it is `None`), and
/// `serve(handlers)` answers `initialize` (full sync), `shutdown`, `exit` and unknown requests,
/// handing the params of the methods in `handlers` to their function. A script is this
/// prelude followed by its handlers and `serve(…)`.
pub const PY_LSP_PRELUDE: &str = r#"
import json, sys, time

def on_eof():
    sys.exit(0)

def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            on_eof()
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))

def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()

def publish(uri, version, messages):
    params = {"uri": uri, "diagnostics": [{
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
        "severity": 1, "message": m} for m in messages]}
    if version is not None:
        params["version"] = version
    send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})

def serve(handlers):
    while True:
        message = read()
        method = message.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            sys.exit(0)
        elif method in handlers:
            handlers[method](message["params"])
        elif "id" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
"#;

pub struct Fixture {
    pub _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub sup: Arc<ServerPool>,
}

/// A workspace with `files`, and a pool configured by `config` (an `[lsp]` TOML
/// document). Caps are generous: machines running the suite are loaded.
pub fn fixture(files: &[(&str, &str)], config: &str) -> Fixture {
    fixture_with(files, config, ServerPoolOptions::default())
}

pub fn fixture_with(files: &[(&str, &str)], config: &str, options: ServerPoolOptions) -> Fixture {
    // `RUST_LOG=cc_lsp_client=debug` shows the client's view of a real server's traffic.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().canonicalize().expect("canonical");
    for (name, content) in files {
        let path = ws.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write fixture");
    }
    let table: toml::Table = config.parse().expect("config toml");
    let lsp = match table.get("lsp") {
        Some(section) => {
            <LspConfig as serde::Deserialize>::deserialize(section.clone()).expect("config")
        }
        None => LspConfig::default(),
    };
    let sup = ServerPool::new(&ws, lsp.table().expect("table"), options);
    Fixture { _dir: dir, ws, sup }
}

/// Lenient caps for every family, plus `extra` TOML lines.
pub fn lenient(families: &[&str], extra: &str) -> String {
    let mut out = String::new();
    for family in families {
        out.push_str(&format!(
            "[lsp.{family}]\ntimeout_ms = 60000\nindexing_timeout_ms = 120000\n"
        ));
    }
    out.push_str(extra);
    out
}

pub async fn check(sup: &ServerPool, path: &Path) -> CheckOutcome {
    let mut checks = sup.check_written(&[path.to_path_buf()]).await;
    assert_eq!(checks.len(), 1);
    checks.remove(0).outcome
}

/// Writes `content` and returns the file's errors and warnings, panicking unless checked.
pub async fn write_and_check(sup: &ServerPool, path: &Path, content: &str) -> Vec<Diagnostic> {
    std::fs::write(path, content).expect("write");
    match check(sup, path).await {
        CheckOutcome::Checked { diagnostics, .. } => diagnostics
            .into_iter()
            .filter(Diagnostic::is_problem)
            .collect(),
        other => panic!("expected diagnostics for {}, got {other:?}", path.display()),
    }
}

/// The four-step scenario of the issue for one server: an error is new; moved down four
/// lines it is not; fixed nothing is new; broken again it is new again. Skipped (loudly)
/// without its peers; the server's process group is checked gone afterwards.
pub struct Scenario<'a> {
    /// Binaries the scenario needs on PATH.
    pub peers: &'a [&'a str],
    /// The family whose caps are made lenient.
    pub family: &'a str,
    /// Fixture files (markers).
    pub files: &'a [(&'a str, &'a str)],
    /// More `[lsp.FAMILY]` lines.
    pub config: &'a str,
    /// The file written.
    pub file: &'a str,
    pub bad: &'a str,
    /// `bad` with the error four lines further down.
    pub moved: &'a str,
    pub good: &'a str,
    /// A substring of the error's message.
    pub expected: &'a str,
}

impl Scenario<'_> {
    /// Runs the scenario; `None` when a peer is missing. The fixture is returned with its
    /// server still running, for further checks, and must end with [`shutdown_and_check`].
    pub async fn run(&self) -> Option<Fixture> {
        if self.peers.iter().any(|peer| require_peer(peer).is_none()) {
            return None;
        }
        let fixture = fixture(self.files, &lenient(&[self.family], self.config));
        new_moved_fixed_broken(&fixture, self).await;
        Some(fixture)
    }

    /// Runs the scenario, then shuts down and checks the process table.
    pub async fn run_and_shut_down(&self) {
        if let Some(fixture) = self.run().await {
            shutdown_and_check(&fixture.sup).await;
        }
    }
}

/// `text` after four comment lines.
pub fn four_lines_down(comment: &str, text: &str) -> String {
    format!("{comment}\n{comment}\n{comment}\n{comment}\n{text}")
}

async fn new_moved_fixed_broken(fixture: &Fixture, case: &Scenario<'_>) {
    let path = fixture.ws.join(case.file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut ledger = Ledger::default();
    let expected = case.expected;
    let find = |list: &[Diagnostic]| list.iter().find(|d| d.message.contains(expected)).cloned();

    let all = write_and_check(&fixture.sup, &path, case.bad).await;
    let new = ledger.update(&path, all.clone());
    let first = find(&new).unwrap_or_else(|| panic!("`{expected}` is not new in {all:#?}"));

    let all = write_and_check(&fixture.sup, &path, case.moved).await;
    let moved_diag =
        find(&all).unwrap_or_else(|| panic!("`{expected}` vanished after the move: {all:#?}"));
    assert_eq!(moved_diag.line, first.line + 4, "moved down four lines");
    let new = ledger.update(&path, all);
    assert!(new.is_empty(), "nothing is new after a move, got {new:#?}");

    let all = write_and_check(&fixture.sup, &path, case.good).await;
    assert!(find(&all).is_none(), "fixed, yet still reported: {all:#?}");
    let new = ledger.update(&path, all);
    assert!(new.is_empty(), "nothing is new after the fix, got {new:#?}");

    let all = write_and_check(&fixture.sup, &path, case.bad).await;
    let new = ledger.update(&path, all.clone());
    assert!(find(&new).is_some(), "`{expected}` is new again: {all:#?}");
}

#[allow(unused_imports)] // Not every test binary needs them.
pub use cc_test_support::{assert_group_gone, live_group_members as group_members};

/// Shuts the pool down and checks that every server it ran is gone with its group.
pub async fn shutdown_and_check(sup: &ServerPool) {
    let mut pids: Vec<u32> = sup.running().iter().filter_map(|s| s.pid()).collect();
    pids.extend(sup.kotlin_compiler_pids());
    sup.shutdown().await;
    for pid in pids {
        assert_group_gone(pid).await;
    }
}
