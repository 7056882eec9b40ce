//! The supervisor against real servers: a server killed mid-request, restart, crash loop,
//! idle reaping, detection reasons, and the process table after every test.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

mod common;

use std::path::Path;
use std::time::Duration;

use cc_lsp_client::{CheckOutcome, LspError, ServerState, SupervisorOptions};
use cc_process::testing::require_peer;
use common::*;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::json;

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
    let request = server.request(
        "workspace/symbol",
        json!({"query": "os"}),
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
async fn idle_servers_are_reaped_and_dropping_the_supervisor_kills_the_rest() {
    if require_peer("pylsp").is_none() {
        return;
    }
    let options = SupervisorOptions {
        idle_timeout: Duration::from_millis(400),
        ..SupervisorOptions::default()
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

    // A server that is never shut down dies with the supervisor.
    let fixture = fixture_with(
        &[("setup.py", ""), ("a.py", "x = 1\n")],
        PYLSP,
        SupervisorOptions::default(),
    );
    let pid = fixture
        .sup
        .server_for(&fixture.ws.join("a.py"))
        .await
        .unwrap()
        .pid()
        .unwrap();
    assert!(!group_members(pid).is_empty());
    drop(fixture);
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
    let options = SupervisorOptions {
        path: Some(path),
        ..SupervisorOptions::default()
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
        "[lsp.python]\ncommand = [\"no-such-server-cc\"]\n",
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
