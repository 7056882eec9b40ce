//! The pool against real servers: a server killed mid-request, restart, crash loop,
//! idle reaping, detection reasons, and the process table after every test.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::common;

use std::path::Path;
use std::time::Duration;

use cc_lsp_client::{lsp_types, CheckOutcome, LspError, ServerPoolOptions, ServerState};
use cc_test_support::require_peer;
use common::*;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

fn signal(pgid: u32, signal: Signal) {
    killpg(Pid::from_raw(pgid as i32), signal).expect("signal the server's group");
}

const PYLSP: &str = "[lsp.python]\ncommand = [\"pylsp\"]\ntimeout_ms = 60000\n";

#[tokio::test]
async fn killed_mid_request_fails_clearly_then_restarts_then_crash_loop_turns_it_off() {
    if require_peer("pylsp").is_none() {
        return;
    }
    let fixture = fixture(&[("setup.py", ""), ("a.py", "import os\n")], PYLSP);
    let file = fixture.ws.join("a.py");
    let server = fixture.sup.server_for(&file).await.expect("pylsp starts");
    let pid = server.pid().expect("a process");

    // Stopped, it cannot answer; killed, the pending request fails with a clear error.
    signal(pid, Signal::SIGSTOP);
    let request = server.request::<lsp_types::request::WorkspaceSymbolRequest>(
        lsp_types::WorkspaceSymbolParams {
            query: "os".into(),
            ..Default::default()
        },
        Duration::from_secs(60),
    );
    let kill = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        signal(pid, Signal::SIGKILL);
    };
    let (result, ()) = tokio::join!(request, kill);
    let error = result.unwrap_err();
    assert!(matches!(error, LspError::ServerExited { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("pylsp exited while handling `workspace/symbol`"),
        "{message}"
    );
    assert!(message.contains("signal: 9"), "{message}");
    assert_group_gone(pid).await;

    // The next call restarts it.
    std::fs::write(&file, "print(undefined_name)\n").unwrap();
    match check(&fixture.sup, &file).await {
        CheckOutcome::Checked { diagnostics, .. } => {
            assert!(
                diagnostics
                    .iter()
                    .any(|d| d.message.contains("undefined name")),
                "{diagnostics:?}"
            )
        }
        other => panic!("expected a restart and diagnostics, got {other:?}"),
    }
    let restarted = fixture.sup.server_for(&file).await.unwrap();
    assert_ne!(restarted.pid(), Some(pid));

    // That was crash 1. Three more within five minutes turn it off.
    let mut last = restarted;
    for _ in 0..3 {
        let pid = last.pid().unwrap();
        signal(pid, Signal::SIGKILL);
        assert_group_gone(pid).await;
        while !last.is_closed() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        match fixture.sup.server_for(&file).await {
            Ok(server) => last = server,
            Err(unavailable) => {
                assert!(
                    unavailable
                        .reason
                        .contains("turned off after crashing 4 times"),
                    "{}",
                    unavailable.reason
                );
                break;
            }
        }
    }
    let refused = fixture.sup.server_for(&file).await.unwrap_err();
    assert!(
        refused.reason.contains("at most 3 restarts"),
        "{}",
        refused.reason
    );
    // What brings it back, in the crate's words: a host names its own way (`lsp reload`).
    assert!(
        refused
            .reason
            .ends_with("Fix the server, then reload its servers"),
        "{}",
        refused.reason
    );
    match check(&fixture.sup, &file).await {
        CheckOutcome::Unchecked { reason } => assert!(reason.contains("turned off"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let status = fixture.sup.status().await;
    let python = status.iter().find(|row| row.language == "python").unwrap();
    assert_eq!(python.state, ServerState::Off);
    assert!(
        python.reason.as_deref().unwrap().contains("signal: 9"),
        "{python:?}"
    );

    // `reload` clears the guard.
    assert_eq!(fixture.sup.reload("python", None).await, 0);
    let back = fixture
        .sup
        .server_for(&file)
        .await
        .expect("starts again after reload");
    assert!(!back.is_closed());
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn idle_servers_are_reaped_and_dropping_the_pool_kills_the_rest() {
    if require_peer("pylsp").is_none() {
        return;
    }
    let options = ServerPoolOptions {
        idle_timeout: Duration::from_millis(400),
        ..ServerPoolOptions::default()
    };
    let fixture = fixture_with(&[("setup.py", ""), ("a.py", "x = 1\n")], PYLSP, options);
    let file = fixture.ws.join("a.py");
    let pid = fixture.sup.server_for(&file).await.unwrap().pid().unwrap();
    assert_group_gone(pid).await;
    let status = fixture.sup.status().await;
    let python = status.iter().find(|row| row.language == "python").unwrap();
    assert_eq!(python.state, ServerState::Idle, "{python:?}");
    assert!(
        python.reason.as_deref().unwrap().contains("idle"),
        "{python:?}"
    );

    // One server per (language, root); servers never shut down die with the pool.
    let fixture = fixture_with(
        &[
            ("a/setup.py", ""),
            ("a/x.py", "x = 1\n"),
            ("b/setup.py", ""),
            ("b/x.py", "x = 1\n"),
        ],
        PYLSP,
        ServerPoolOptions::default(),
    );
    let a = fixture
        .sup
        .server_for(&fixture.ws.join("a/x.py"))
        .await
        .unwrap();
    let b = fixture
        .sup
        .server_for(&fixture.ws.join("b/x.py"))
        .await
        .unwrap();
    assert_eq!(
        (a.root(), b.root()),
        (
            fixture.ws.join("a").as_path(),
            fixture.ws.join("b").as_path()
        )
    );
    assert_ne!(a.pid(), b.pid());
    let again = fixture
        .sup
        .server_for(&fixture.ws.join("a/x.py"))
        .await
        .unwrap();
    assert_eq!(again.pid(), a.pid(), "the same root reuses its server");
    let pids = [a.pid().unwrap(), b.pid().unwrap()];
    drop((a, b, again));
    for pid in pids {
        assert!(!group_members(pid).is_empty());
    }
    drop(fixture);
    for pid in pids {
        assert_group_gone(pid).await;
    }
}

/// After [`PY_LSP_PRELUDE`]: answers `initialize`, then ignores everything (`shutdown`,
/// `exit`, SIGTERM, its stdin closing), with a child of its own in its process group.
const STUBBORN: &str = r#"
import signal, subprocess
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "600"])

def on_eof():
    while True:
        time.sleep(1)

while True:
    message = read()
    if message.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {}}})
"#;

#[tokio::test]
async fn a_server_that_ignores_shutdown_is_killed_with_its_whole_group() {
    let Some(python) = require_peer("python3") else {
        return;
    };
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("stubborn.py");
    std::fs::write(&script, format!("{PY_LSP_PRELUDE}{STUBBORN}")).unwrap();
    let config = format!(
        "[lsp.stub]\ncommand = [{:?}, {:?}]\nextensions = [\"stub\"]\n",
        python.display().to_string(),
        script.display().to_string()
    );
    let options = ServerPoolOptions {
        shutdown_grace: Duration::from_millis(300),
        ..ServerPoolOptions::default()
    };
    let fixture = fixture_with(&[("a.stub", "")], &config, options);
    let server = fixture
        .sup
        .server_for(&fixture.ws.join("a.stub"))
        .await
        .expect("the stub starts");
    let pid = server.pid().unwrap();
    for _ in 0..100 {
        if group_members(pid).len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(group_members(pid).len() >= 2, "the stub and its child run");
    // It would outlive any wait for it to exit by itself: only SIGKILL ends it.
    fixture.sup.shutdown().await;
    assert_group_gone(pid).await;
}

#[tokio::test]
async fn a_server_flooding_stderr_never_stalls_and_its_last_lines_are_kept() {
    // 2 MB on stderr before the first frame: unless stderr is drained meanwhile, the pipe
    // fills up and the frame never comes.
    let body = r#"{"jsonrpc":"2.0","method":"hello","params":{}}"#;
    let script = format!(
        "yes 'noise noise noise' | head -c 2000000 >&2; printf 'Content-Length: {}\\r\\n\\r\\n%s' '{body}'; \
         echo 'the last line' >&2; sleep 600",
        body.len()
    );
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(script);
    let (process, conn, mut incoming) =
        cc_lsp_client::process::ServerProcess::spawn("noisy", command, false).unwrap();
    let pid = process.pid();
    let first = tokio::time::timeout(Duration::from_secs(30), incoming.recv())
        .await
        .expect("the frame arrives although stderr was flooded")
        .unwrap();
    assert!(
        matches!(&first, cc_lsp_client::transport::Incoming::Notification { method, .. } if method == "hello"),
        "{first:?}"
    );
    for _ in 0..100 {
        if process.stderr_tail().ends_with("the last line") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        process.stderr_tail().ends_with("the last line"),
        "{}",
        process.stderr_tail()
    );
    assert!(
        process.stderr_tail().lines().count() <= 20,
        "the tail is bounded"
    );
    drop(conn);
    drop(process);
    assert_group_gone(pid).await;
}

fn fake_rustup_proxy(dir: &Path) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("rust-analyzer");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"error: 'rust-analyzer' is not installed for the toolchain 'stable-x86_64-unknown-linux-gnu'\" >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn detection_skips_a_failing_proxy_and_names_what_is_missing() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let tools = tempfile::tempdir().unwrap();
    fake_rustup_proxy(tools.path());
    let path = std::env::join_paths(
        std::iter::once(tools.path().join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let options = ServerPoolOptions {
        path: Some(path),
        ..ServerPoolOptions::default()
    };
    let fixture = fixture_with(
        &[
            (
                "crate/Cargo.toml",
                "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            ("crate/src/main.rs", "fn main() {}\n"),
            ("a.py", "x = 1\n"),
        ],
        "[lsp.python]\ncommand = [\"no-such-server-cc\"]\n\
         [lsp.bash]\ncommand = [\"no-such-bash-server-cc\"]\n",
        options,
    );
    let status = fixture.sup.status().await;
    let row = |language: &str| {
        status
            .iter()
            .find(|row| row.language == language)
            .unwrap()
            .clone()
    };

    let rust = row("rust");
    assert_eq!(rust.state, ServerState::Idle, "{rust:?}");
    assert_eq!(rust.root.as_deref(), Some("crate"));
    let skipped = rust.skipped.join("\n");
    assert!(
        skipped.contains(&tools.path().join("bin/rust-analyzer").display().to_string()),
        "{skipped}"
    );
    assert!(
        skipped.contains("resolves but fails to run: error: 'rust-analyzer' is not installed"),
        "{skipped}"
    );
    assert_ne!(
        rust.binary.as_deref(),
        Some(tools.path().join("bin/rust-analyzer").to_str().unwrap())
    );

    // A missing binary (the marker is missing too: both halves are named).
    let python = row("python");
    assert_eq!(python.state, ServerState::NotAvailable);
    let reason = python.reason.unwrap();
    assert!(
        reason.contains("not installed: `no-such-server-cc` not found on PATH"),
        "{reason}"
    );
    assert!(
        reason.contains("no project marker (pyproject.toml, setup.py, requirements.txt)"),
        "{reason}"
    );
    match check(&fixture.sup, &fixture.ws.join("a.py")).await {
        CheckOutcome::Unchecked { reason } => {
            assert!(reason.contains("pyproject.toml"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // A missing binary alone (bash needs no marker).
    let bash = row("bash");
    assert_eq!(bash.state, ServerState::NotAvailable);
    assert_eq!(
        bash.reason.as_deref(),
        Some("not installed: `no-such-bash-server-cc` not found on PATH")
    );
    // A missing marker alone.
    let go = row("go");
    if require_peer("gopls").is_some() {
        assert_eq!(go.state, ServerState::NotAvailable);
        assert_eq!(
            go.reason.as_deref(),
            Some("no project marker (go.mod) in the workspace")
        );
    }

    // The real rust-analyzer starts from behind the proxy.
    let server = fixture
        .sup
        .server_for(&fixture.ws.join("crate/src/main.rs"))
        .await
        .expect("starts");
    assert_ne!(server.binary(), tools.path().join("bin/rust-analyzer"));
    assert_eq!(server.root(), fixture.ws.join("crate"));
    shutdown_and_check(&fixture.sup).await;
}
