//! A session's processes end with the debugger: on `shutdown` (even during a blocking
//! call) and when it is dropped.

#![allow(clippy::unwrap_used)]

use cc_dap_client::testing as support;

use std::sync::Arc;
use std::time::Duration;

use cc_dap_client::{Action, DebugConfig, DebugSession};

fn busy(tag: &str, wait: f64) -> (tempfile::TempDir, DebugSession, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let program = root.join("busy.py");
    std::fs::write(&program, "n = 0\nwhile True:\n    n += 1\n").unwrap();
    let config = DebugConfig {
        wait_seconds: Some(wait),
        ..Default::default()
    };
    let debug = DebugSession::new(&root, config).with_env(support::TAG_VAR, tag);
    (dir, debug, program)
}

#[tokio::test]
async fn shutdown_ends_a_session_even_during_a_blocking_call() {
    if support::debugpy_python().is_none() {
        return;
    }
    let tag = support::unique_tag("shutdown");
    let (_dir, debug, program) = busy(&tag, 600.0);
    let debug = Arc::new(debug);
    let launching = {
        let debug = debug.clone();
        tokio::spawn(async move { debug.launch(&program, &[], None).await })
    };
    // Wait until the program runs (its processes exist), then end the run.
    for _ in 0..600 {
        if !support::tagged(&tag).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    tokio::time::timeout(Duration::from_secs(30), debug.shutdown())
        .await
        .expect("shutdown finishes");
    support::assert_no_tagged(&tag).await;
    // The blocked launch ended too, with an error rather than a hang.
    let outcome = tokio::time::timeout(Duration::from_secs(60), launching)
        .await
        .expect("no hang")
        .unwrap();
    assert!(outcome.is_err() || debug.status().await.session.is_none());
}

#[tokio::test]
async fn dropping_the_debugger_kills_the_session() {
    if support::debugpy_python().is_none() {
        return;
    }
    let tag = support::unique_tag("drop");
    // Long enough for a pause to land on a loaded machine.
    let (_dir, debug, program) = busy(&tag, 5.0);
    let started = debug.launch(&program, &[], None).await.unwrap();
    assert!(started.note.unwrap().contains("still running"));
    let paused = debug.act(Action::Pause, None).await.unwrap();
    assert_eq!(paused.position.stopped.unwrap().reason, "pause");
    assert!(!support::tagged(&tag).is_empty());
    drop(debug);
    support::assert_no_tagged(&tag).await;
}
