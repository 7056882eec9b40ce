//! The precise tier's costs on one tree, for `cargo xtask bench precise`: the tree-sitter
//! clean build, each indexer's run (wall time and the peak RSS of its process tree) and its
//! import, then a one-file write: the update plus the run and import that make the tree
//! precise again, beside the indexer's own run (the indexers have no incremental mode, so a
//! refresh can cost no less than one run).
//!
//! ```text
//! cargo run --release -p cc-graph --example precise_bench -- ROOT CACHE_DIR
//! ```
//!
//! Prints one JSON object per line: `{"phase": "tree-sitter", …}`, then per indexer
//! `{"phase": "indexer", …}` and `{"phase": "refresh", …}`.

use std::path::Path;
use std::time::Instant;

use cc_graph::{Graph, GraphConfig, PreciseOptions};
use serde_json::json;

/// Peak RSS in MB of this process (`who` = RUSAGE_SELF) or of its reaped children
/// (RUSAGE_CHILDREN).
fn peak_mb(who: i32) -> f64 {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    usage.ru_maxrss as f64 / 1024.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (root, cache) = match args.as_slice() {
        [_, root, cache] => (
            Path::new(root).canonicalize()?,
            Path::new(cache).to_path_buf(),
        ),
        _ => return Err("usage: precise_bench ROOT CACHE_DIR".into()),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let config = GraphConfig {
        cache_dir: cache,
        ..GraphConfig::default()
    };
    let started = Instant::now();
    let (mut graph, stats) = Graph::open_with(&root, config)?;
    println!(
        "{}",
        json!({
            "phase": "tree-sitter",
            "files": stats.files_seen,
            "seconds": started.elapsed().as_secs_f64(),
            "peak_rss_mb": peak_mb(libc::RUSAGE_SELF),
        })
    );
    for plan in graph.precise_plans(&PreciseOptions::default())? {
        let started = Instant::now();
        let output = runtime.block_on(cc_graph::precise::run(&plan))?;
        let ran = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let read = cc_graph::precise::read_output(&plan, &output)?;
        let read_seconds = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let import = graph.import_precise(&plan, &read)?;
        println!(
            "{}",
            json!({
                "phase": "indexer",
                "indexer": plan.indexer.name(),
                "files": plan.files,
                "seconds": ran,
                "read_seconds": read_seconds,
                "import_seconds": started.elapsed().as_secs_f64(),
                "peak_rss_mb": peak_mb(libc::RUSAGE_CHILDREN),
                "output_bytes": std::fs::metadata(&output).map_or(0, |m| m.len()),
                "edges": import.edges,
                "dispatch": import.dispatch,
                "no_edge": import.no_edge,
            })
        );
        // A one-file write: the first file the indexer read gets a comment line.
        let Some(file) = first_file(&graph, plan.indexer) else {
            continue;
        };
        let path = root.join(&file);
        let text = std::fs::read_to_string(&path)?;
        let comment = if plan.indexer == cc_graph::Indexer::Python {
            "# edited\n"
        } else {
            "// edited\n"
        };
        std::fs::write(&path, format!("{comment}{text}"))?;
        let started = Instant::now();
        graph.update(&[file.as_str()])?;
        let updated = started.elapsed().as_secs_f64();
        let again = graph
            .precise_plans(&PreciseOptions::default())?
            .into_iter()
            .find(|p| p.indexer == plan.indexer)
            .ok_or("no plan after the write")?;
        let output = runtime.block_on(cc_graph::precise::run(&again))?;
        let read = cc_graph::precise::read_output(&again, &output)?;
        graph.import_precise(&again, &read)?;
        println!(
            "{}",
            json!({
                "phase": "refresh",
                "indexer": plan.indexer.name(),
                "file": file,
                "update_seconds": updated,
                "seconds": started.elapsed().as_secs_f64(),
                "pending_after": graph.freshness().precise.map_or(0, |p| p.pending_total),
            })
        );
        std::fs::write(&path, text)?;
        graph.update(&[file.as_str()])?;
    }
    Ok(())
}

/// A source file of `indexer`'s languages (not a test, not built output).
fn first_file(graph: &Graph, indexer: cc_graph::Indexer) -> Option<String> {
    let mut files = graph.files_under("src").ok()?;
    files.extend(graph.files_under("lib").ok()?);
    files.into_iter().find(|path| {
        cc_languages::for_path(Path::new(path))
            .is_some_and(|l| indexer.languages().contains(&l.name))
            && !path.contains("test")
            && !path.starts_with("dist/")
            && !path.ends_with(".d.ts")
    })
}
