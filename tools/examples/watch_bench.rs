//! What freshness costs with the run's watcher, for `cargo xtask bench watch`.
//!
//! `watch_bench freshness DIR CACHE [FILE]`: opens a run over `DIR` (the code graph, and a
//! language server when `FILE` is given), then prints one JSON line with
//! - the freshness cost of a graph call with nothing changed, per call: the watcher's barrier
//!   and take (what `graph` now pays) beside a stat of every file (what it paid before);
//! - a whole `graph symbols` call with nothing changed;
//! - from a write made outside the run (a shell) to the graph's view and the open server's
//!   copy of the document holding it (the server keeps `FILE` open).
//!
//! `watch_bench memory DIR`: the resident memory the watcher of `DIR` adds to this process.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cc_tools::{AllowAll, Resources, Run, Surface, WorkspaceRoot};
use serde_json::json;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return 0.0;
    }
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index.min(values.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn memory(dir: &Path) -> Result<(), String> {
    let before = rss_kib();
    let started = Instant::now();
    let watcher =
        cc_workspace::watch::TreeWatcher::start(dir, cc_workspace::watch::WatchOptions::default())
            .map_err(|e| e.to_string())?;
    let start_ms = ms(started.elapsed());
    watcher.flush();
    let after = rss_kib();
    let status = watcher.status();
    println!(
        "{}",
        json!({
            "mode": "memory",
            "dirs": status.dirs,
            "degraded": status.degraded,
            "start_ms": start_ms,
            "rss_added_kib": after.saturating_sub(before),
        })
    );
    Ok(())
}

async fn freshness(dir: &Path, cache: &Path, open_file: Option<&str>) -> Result<(), String> {
    let root = WorkspaceRoot::new(dir).map_err(|e| e.to_string())?;
    let language_servers = open_file.map(|_| {
        cc_lsp_client::ServerPool::new(
            root.path(),
            cc_lsp_client::ServerTable::builtin(),
            cc_lsp_client::ServerPoolOptions::default(),
        )
    });
    let registry = Resources {
        host_files: true,
        parsers: Some(Arc::new(cc_structural::Languages::builtin())),
        graph: Some(Ok(cc_graph::GraphConfig {
            cache_dir: cache.to_path_buf(),
            // What is measured is the watcher's cost, not the indexers'.
            precise: false,
            ..cc_graph::GraphConfig::default()
        })),
        language_servers: language_servers.clone(),
        ..Default::default()
    }
    .build(Run {
        conversation_id: "bench".into(),
        root: root.clone(),
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
    });
    let call = |args: serde_json::Value| {
        let registry = registry.clone();
        async move {
            registry
                .call("graph", args)
                .await
                .map(|o| o.value)
                .map_err(|e| e.to_string())
        }
    };
    let built = Instant::now();
    call(json!({"action": "status"})).await?;
    let build_ms = ms(built.elapsed());

    // What `graph` pays per call now: the watcher's barrier, then its list (empty).
    let watcher = root.watcher()?;
    let subscription = watcher.subscribe();
    let mut watched = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        watcher.flush();
        let changes = subscription.take();
        watched.push(ms(t.elapsed()));
        assert!(changes.is_empty(), "the tree changed during the bench");
    }
    // What it paid before: every file stat'ed against the index.
    let (mut graph, _) = cc_graph::Graph::open_with(
        root.path(),
        cc_graph::GraphConfig {
            cache_dir: cache.to_path_buf(),
            ..cc_graph::GraphConfig::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let mut stat_all = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        graph.stale_files().map_err(|e| e.to_string())?;
        stat_all.push(ms(t.elapsed()));
    }
    drop(graph);
    let mut calls = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        call(json!({"action": "symbols", "query": "ccwatchbench", "max_results": 1})).await?;
        calls.push(ms(t.elapsed()));
    }

    // From a write outside the run to the graph's view and the open server's copy.
    let mut propagation = Vec::new();
    if let (Some(file), Some(pool)) = (open_file, &language_servers) {
        propagation = propagation_times(&registry, &root, &watcher, file, pool).await?;
    }
    registry.shutdown(Duration::from_secs(5)).await;
    println!(
        "{}",
        json!({
            "mode": "freshness",
            "build_ms": build_ms,
            "watched_p50_ms": percentile(&mut watched.clone(), 0.5),
            "watched_p95_ms": percentile(&mut watched, 0.95),
            "stat_all_p50_ms": percentile(&mut stat_all, 0.5),
            "call_p50_ms": percentile(&mut calls, 0.5),
            "propagation_p50_ms": percentile(&mut propagation.clone(), 0.5),
            "propagation_p95_ms": percentile(&mut propagation, 0.95),
            "rounds": propagation.len(),
        })
    );
    Ok(())
}

/// Per round, the time from a write made outside the run (a shell) to both the graph's view
/// of it and the open server's copy of the document (the server keeps `file` open); the
/// file is put back after.
async fn propagation_times(
    registry: &cc_tools::Registry,
    root: &WorkspaceRoot,
    watcher: &cc_workspace::watch::TreeWatcher,
    file: &str,
    pool: &cc_lsp_client::ServerPool,
) -> Result<Vec<f64>, String> {
    let mut propagation = Vec::new();
    let path: PathBuf = root.path().join(file);
    let opened = registry
        .call("lsp", json!({"action": "symbols", "file": file}))
        .await
        .map_err(|e| e.to_string())?;
    drop(opened);
    let original = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let seen = Arc::new(AtomicBool::new(false));
    let flag = seen.clone();
    let graph_view = watcher.subscribe();
    graph_view.on_change(move || flag.store(true, Ordering::Release));
    for round in 0..20 {
        let text = format!("{original}\n# outside write {round}\n");
        seen.store(false, Ordering::Release);
        let _ = graph_view.take();
        let t = Instant::now();
        std::fs::write(&path, &text).map_err(|e| e.to_string())?;
        let deadline = t + Duration::from_secs(10);
        let (mut graph_at, mut server_at) = (None, None);
        while (graph_at.is_none() || server_at.is_none()) && Instant::now() < deadline {
            if graph_at.is_none() && seen.load(Ordering::Acquire) {
                graph_at = Some(t.elapsed());
            }
            if server_at.is_none()
                && pool
                    .running()
                    .iter()
                    .any(|s| s.synced_text(&path).as_deref() == Some(text.as_str()))
            {
                server_at = Some(t.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let (Some(g), Some(s)) = (graph_at, server_at) else {
            return Err(format!(
                "round {round}: the change was not seen within 10 s"
            ));
        };
        propagation.push(ms(g.max(s)));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::write(&path, original).map_err(|e| e.to_string())?;
    Ok(propagation)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["memory", dir] => memory(Path::new(dir)),
        ["freshness", dir, cache] => freshness(Path::new(dir), Path::new(cache), None).await,
        ["freshness", dir, cache, file] => {
            freshness(Path::new(dir), Path::new(cache), Some(file)).await
        }
        _ => Err("usage: watch_bench memory DIR | freshness DIR CACHE [FILE]".into()),
    };
    if let Err(error) = result {
        eprintln!("watch_bench: {error}");
        std::process::exit(1);
    }
}
