//! The code graph's precise tier through the `graph` tool, as an agent meets it on a real
//! project (rxjs 7.8.2 with scip-typescript): the first call answers at once from tree-sitter
//! while the indexer runs in the background, then calls that only a type checker can place
//! (`subscriber.add(…)` on a conditional's result, `operator.call(…)` on a field typed by an
//! interface) are `precise` edges; a shell edit between calls falls back to tree-sitter for
//! that file, said in the answer, until the next pass makes it precise again; the run's end
//! ends a running indexer; `[graph] precise = false` runs none; a read-only surface runs no
//! indexer that would run the workspace's code (rust-analyzer's build scripts), and says so.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cc_test_support::require_peer;
use cc_tools::{Registry, Resources, Run, Surface};
use serde_json::{json, Value};

fn registry(dir: &Path, cache: &Path, precise: bool) -> Registry {
    registry_on(dir, cache, precise, Surface::Full)
}

fn registry_on(dir: &Path, cache: &Path, precise: bool, surface: Surface) -> Registry {
    Resources {
        host_files: true,
        parsers: Some(Arc::new(cc_structural::Languages::builtin())),
        graph: Some(Ok(cc_graph::GraphConfig {
            cache_dir: cache.to_path_buf(),
            threads: 2,
            precise,
            ..cc_graph::GraphConfig::default()
        })),
        ..Default::default()
    }
    .build(
        Run::builder(dir)
            .conversation("precise")
            .surface(surface)
            .build(),
    )
}

async fn call(registry: &Registry, args: Value) -> (Value, String) {
    match registry.call("graph", args.clone()).await {
        Ok(output) => {
            let text = output.render_text();
            crate::lsp_support::assert_graph_report(&output.value, &text);
            (output.value, text)
        }
        Err(error) => panic!("graph {args}: {}", error.to_envelope()),
    }
}

/// Polls `graph status` until `done` holds of its result (5 minutes at most: a loaded CI
/// machine).
async fn status_until(registry: &Registry, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let (value, text) = call(registry, json!({"action": "status"})).await;
        if done(&value) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "the precise tier never settled: {text}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn typescript_state(status: &Value) -> &str {
    status["precise"]["scip-typescript"]["state"]
        .as_str()
        .unwrap_or("")
}

/// `(line, rung)` of each call site in `path`.
fn sites_in(result: &Value, path: &str) -> Vec<(u64, String)> {
    result["callers"]
        .as_array()
        .unwrap_or_else(|| panic!("no callers in {result:#}"))
        .iter()
        .filter(|s| s["path"] == path)
        .map(|s| {
            (
                s["line"].as_u64().unwrap(),
                s["rung"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A copy of rxjs, a cache, and a run over it with the precise tier on (`None`: a peer is
/// missing, said as `require_peer` says it).
fn rxjs_with_the_tier() -> Option<(cc_test_support::ProjectCopy, tempfile::TempDir, Registry)> {
    require_peer("scip-typescript")?;
    let project = cc_test_support::copy_project("rxjs")?;
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(project.path(), cache.path(), true);
    Some((project, cache, registry))
}

fn callers(file: &str, line: u64, symbol: &str) -> Value {
    json!({"action": "callers", "file": file, "line": line, "symbol": symbol, "max_results": 500})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rxjs_gains_precise_edges_and_a_shell_edit_falls_back_until_the_next_pass() {
    let Some((project, _cache, registry)) = rxjs_with_the_tier() else {
        return;
    };

    // The first call opens the index and answers from tree-sitter at once; the indexer runs
    // behind it.
    let (first, text) = call(
        &registry,
        callers("src/internal/Subscription.ts", 116, "add"),
    )
    .await;
    assert!(first["index"]["precise"].is_null(), "{first:#}");
    let running = first["index"]["precise_running"].as_str().unwrap_or("");
    if !running.is_empty() {
        assert!(text.contains("scip-typescript has been refining"), "{text}");
    }

    let status = status_until(&registry, |s| typescript_state(s) == "imported").await;
    assert!(
        status["edges"]["precise"].as_u64().unwrap() > 1000,
        "{status:#}"
    );

    // `subscriber.add(…)` where `subscriber` is a conditional's result, and
    // `operator.call(…)` on a field typed by the `Operator` interface.
    let (add, text) = call(
        &registry,
        callers("src/internal/Subscription.ts", 116, "add"),
    )
    .await;
    assert!(
        sites_in(&add, "src/internal/Observable.ts").contains(&(213, "precise".into())),
        "{text}"
    );
    assert!(text.contains("[precise 1]"), "{text}");
    assert!(text.contains("precise edges (scip-typescript)"), "{text}");
    let (call_sites, text) = call(&registry, callers("src/internal/Operator.ts", 8, "call")).await;
    assert!(
        sites_in(&call_sites, "src/internal/Observable.ts").contains(&(217, "precise".into())),
        "{text}"
    );

    // A shell edit behind the run: a line added at the top of Observable.ts. The next answer
    // re-reads the file and says it is not precise yet; the site moved with it.
    let observable = project.path().join("src/internal/Observable.ts");
    let text_before = std::fs::read_to_string(&observable).unwrap();
    std::fs::write(
        &observable,
        format!("// a comment the shell added\n{text_before}"),
    )
    .unwrap();
    let (after_edit, text) = call(
        &registry,
        callers("src/internal/Subscription.ts", 116, "add"),
    )
    .await;
    let pending = after_edit["index"]["precise"]["pending"]
        .as_array()
        .unwrap();
    assert!(
        pending.iter().any(|p| p == "src/internal/Observable.ts"),
        "{after_edit:#}"
    );
    assert!(text.contains("not yet precise"), "{text}");
    assert!(
        !sites_in(&after_edit, "src/internal/Observable.ts")
            .iter()
            .any(|(line, rung)| *line == 214 && rung == "precise"),
        "a file changed since the indexer read it has no precise edges: {text}"
    );

    // The next pass (after the change settles) makes it precise again, at its new line.
    status_until(&registry, |s| {
        s["index"]["precise"]["pending_total"].as_u64() == Some(0)
            && typescript_state(s) == "imported"
    })
    .await;
    let (add, text) = call(
        &registry,
        callers("src/internal/Subscription.ts", 116, "add"),
    )
    .await;
    assert!(
        sites_in(&add, "src/internal/Observable.ts").contains(&(214, "precise".into())),
        "{text}"
    );

    // Back as it was (`git checkout` would do this): that state's output is in the cache.
    std::fs::write(&observable, text_before).unwrap();
    call(&registry, json!({"action": "status"})).await;
    let status = status_until(&registry, |s| {
        s["index"]["precise"]["pending_total"].as_u64() == Some(0)
            && typescript_state(s) == "imported"
    })
    .await;
    assert_eq!(
        status["precise"]["scip-typescript"]["from_cache"], true,
        "{status:#}"
    );
}

/// The run ends while the indexer runs: its whole process group goes with the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runs_end_ends_a_running_indexer() {
    let Some((_project, cache, registry)) = rxjs_with_the_tier() else {
        return;
    };
    call(&registry, json!({"action": "status"})).await;
    // The indexer's command line names its output, under this test's cache folder.
    let marker = cache.path().to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    let pids = loop {
        let pids: Vec<u32> = cc_process::pids()
            .filter(|pid| cc_test_support::cmdline(*pid).contains(&marker))
            .collect();
        if !pids.is_empty() {
            break pids;
        }
        assert!(Instant::now() < deadline, "scip-typescript never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    drop(registry);
    cc_test_support::assert_gone(&pids).await;
    let partial: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .flat_map(|d| {
            std::fs::read_dir(d.path().join("precise"))
                .into_iter()
                .flatten()
        })
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".scip"))
        .collect();
    assert!(
        partial.is_empty(),
        "an ended run left an output: {partial:?}"
    );
}

/// `[graph] precise = false`: no indexer runs, and status says the tier is off.
#[tokio::test]
async fn the_tier_can_be_turned_off() {
    let Some(project) = cc_test_support::copy_project("rxjs") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(project.path(), cache.path(), false);
    let (status, text) = call(&registry, json!({"action": "status"})).await;
    assert_eq!(status["precise"], "off", "{status:#}");
    assert!(text.contains("precise tier: off"), "{text}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (status, _) = call(&registry, json!({"action": "status"})).await;
    assert_eq!(status["edges"]["precise"], 0, "{status:#}");
}

/// On the plan surface rust-analyzer scip (which runs build scripts and proc macros) is not
/// run, and `status` says why; the graph answers from tree-sitter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_surface_runs_no_indexer_that_runs_workspace_code() {
    let Some(project) = cc_test_support::copy_project("semver") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let registry = registry_on(project.path(), cache.path(), true, Surface::Plan);
    let status = status_until(&registry, |s| {
        s["precise"]["rust-analyzer scip"]["state"]
            .as_str()
            .is_some()
            && s["precise"]["rust-analyzer scip"]["state"] != "running"
    })
    .await;
    let rust = &status["precise"]["rust-analyzer scip"];
    assert_eq!(rust["state"], "skipped", "{status:#}");
    assert!(
        rust["reason"]
            .as_str()
            .unwrap()
            .contains("runs no workspace code"),
        "{rust}"
    );
    assert_eq!(status["edges"]["precise"], 0, "{status:#}");
    assert!(!cache.path().join("target").exists());
}
