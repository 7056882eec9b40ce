//! `vibe_*` with real worker processes: a shell script per tier from `.cc/tools.toml`.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::sync::Arc;
use std::time::Duration;

use cc_harness_adapter::{RunOptions, RunSetup};
use cc_tools::{AllowAll, Registry, Surface};
use serde_json::{json, Value};

const CONFIG: &str = r#"
[workers.fast]
command = ["sh", "-c", "brief=$(cat); case \"$brief\" in *CRASH*) echo boom >&2; exit 3;; *SLOW*) echo $$ > worker.pid; sleep 60;; esac; echo \"fast did: $brief\""]

[workers.good]
command = ["sh", "-c", "cat >/dev/null; echo $$ > good.pid; sleep 60 & wait"]
"#;

fn registry(dir: &std::path::Path) -> Registry {
    std::fs::create_dir_all(dir.join(".cc")).unwrap();
    std::fs::write(dir.join(".cc/tools.toml"), CONFIG).unwrap();
    RunSetup::new(dir).unwrap().registry(RunOptions {
        surface: Surface::Plan,
        approver: Arc::new(AllowAll),
        conversation_id: "vibe".into(),
        questions: None,
    })
}

async fn call(registry: &Registry, tool: &str, args: Value) -> Value {
    match registry.call(tool, args).await {
        Ok(output) => {
            cc_tools::testing::assert_typed_result(tool, &output.value, &output.render_text());
            output.value
        }
        Err(error) => error.to_envelope(),
    }
}

use cc_test_support::process_alive as alive;

async fn read_pid(path: &std::path::Path) -> u32 {
    for _ in 0..500 {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the worker never wrote {}", path.display());
}

async fn wait_dead(pid: u32) -> bool {
    cc_test_support::wait_gone(pid, Duration::from_secs(5)).await
}

#[tokio::test]
async fn spawn_wait_send_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    // Read tier: listed even on the plan surface.
    let names: Vec<String> = registry
        .schemas(Surface::Plan)
        .into_iter()
        .map(|schema| schema.name)
        .collect();
    for name in [
        "vibe_spawn",
        "vibe_send",
        "vibe_wait",
        "vibe_kill",
        "vibe_list",
    ] {
        assert!(
            names.contains(&name.to_owned()),
            "{name} missing from {names:?}"
        );
    }

    let spawned = call(
        &registry,
        "vibe_spawn",
        json!({"brief": "rename foo", "label": "renamer"}),
    )
    .await;
    assert_eq!(spawned["worker_id"], "w1");
    assert_eq!(spawned["state"], "running");
    assert_eq!(spawned["tier"], "fast");

    let done = call(
        &registry,
        "vibe_wait",
        json!({"worker_id": "w1", "timeout_seconds": 30}),
    )
    .await;
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["last_result"], "fast did: rename foo\n");

    let resent = call(
        &registry,
        "vibe_send",
        json!({"worker_id": "w1", "message": "also bar"}),
    )
    .await;
    assert_eq!(resent["state"], "running");
    assert_eq!(resent["runs"], 2);
    let again = call(
        &registry,
        "vibe_wait",
        json!({"worker_id": "w1", "timeout_seconds": 30}),
    )
    .await;
    assert_eq!(again["last_result"], "fast did: rename foo\n\nalso bar\n");

    let listed = call(&registry, "vibe_list", json!({})).await;
    assert_eq!(listed["workers"][0]["label"], "renamer");
    assert_eq!(listed["workers"][0]["state"], "done");
    assert!(listed["workers"][0]["elapsed_seconds"].as_f64().unwrap() >= 0.0);

    let unknown = call(&registry, "vibe_wait", json!({"worker_id": "w9"})).await;
    assert_eq!(unknown["error"]["kind"], "unknown_worker");
    registry.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_crash_is_reported_and_a_timeout_returns_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    call(
        &registry,
        "vibe_spawn",
        json!({"brief": "CRASH please", "label": "c"}),
    )
    .await;
    let crashed = call(
        &registry,
        "vibe_wait",
        json!({"worker_id": "w1", "timeout_seconds": 30}),
    )
    .await;
    assert_eq!(crashed["state"], "failed");
    let error = crashed["last_error"].as_str().unwrap();
    assert!(
        error.contains("exit status: 3") && error.contains("boom"),
        "{error}"
    );

    call(
        &registry,
        "vibe_spawn",
        json!({"brief": "SLOW", "label": "s"}),
    )
    .await;
    let waiting = call(
        &registry,
        "vibe_wait",
        json!({"worker_id": "w2", "timeout_seconds": 0.2}),
    )
    .await;
    assert_eq!(
        waiting["state"], "running",
        "a timeout is not an error: {waiting}"
    );
    registry.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn kill_and_rerun_stop_the_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    call(
        &registry,
        "vibe_spawn",
        json!({"brief": "SLOW", "label": "slow"}),
    )
    .await;
    let first = read_pid(&dir.path().join("worker.pid")).await;
    std::fs::remove_file(dir.path().join("worker.pid")).unwrap();
    // A rerun stops the running one first.
    call(
        &registry,
        "vibe_send",
        json!({"worker_id": "w1", "message": "more"}),
    )
    .await;
    assert!(wait_dead(first).await, "the superseded run survived");
    let second = read_pid(&dir.path().join("worker.pid")).await;
    let killed = call(&registry, "vibe_kill", json!({"worker_id": "w1"})).await;
    assert_eq!(killed["state"], "killed");
    assert!(wait_dead(second).await, "the killed worker survived");
    registry.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn the_end_of_the_run_kills_every_worker() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    call(
        &registry,
        "vibe_spawn",
        json!({"brief": "design it", "label": "g", "tier": "good"}),
    )
    .await;
    let pid = read_pid(&dir.path().join("good.pid")).await;
    assert!(alive(pid));
    registry.shutdown(Duration::from_secs(2)).await;
    assert!(wait_dead(pid).await, "a worker outlived the run");
}

#[tokio::test]
async fn no_workers_configured_means_no_vibe_tools() {
    let dir = tempfile::tempdir().unwrap();
    let registry = RunSetup::new(dir.path()).unwrap().registry(RunOptions {
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
        conversation_id: "none".into(),
        questions: None,
    });
    assert!(registry
        .schemas(Surface::Full)
        .iter()
        .all(|schema| !schema.name.starts_with("vibe_")));
}

#[tokio::test]
async fn a_tier_without_a_command_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".cc")).unwrap();
    std::fs::write(
        dir.path().join(".cc/tools.toml"),
        "[workers.fast]\ncommand = [\"cat\"]\n",
    )
    .unwrap();
    let registry = RunSetup::new(dir.path()).unwrap().registry(RunOptions {
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
        conversation_id: "t".into(),
        questions: None,
    });
    let refused = call(
        &registry,
        "vibe_spawn",
        json!({"brief": "x", "label": "x", "tier": "good"}),
    )
    .await;
    assert_eq!(refused["error"]["kind"], "not_available");
}

#[test]
fn a_malformed_workers_section_is_a_setup_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".cc")).unwrap();
    std::fs::write(
        dir.path().join(".cc/tools.toml"),
        "[workers.fast]\ncmd = 1\n",
    )
    .unwrap();
    let error = RunSetup::new(dir.path()).unwrap_err().to_string();
    assert!(
        error.contains("[workers]") && error.contains("cmd"),
        "{error}"
    );
}
