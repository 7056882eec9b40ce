//! The in-process rows of `cargo xtask bench graph`, printed as one JSON object per line:
//!
//! ```text
//! cargo run --release -p cc-graph --example bench -- open ROOT CACHE
//! cargo run --release -p cc-graph --example bench -- updates ROOT CACHE N
//! cargo run --release -p cc-graph --example bench -- queries ROOT CACHE N [FOCUS]
//! cargo run --release -p cc-graph --example bench -- callers ROOT CACHE NAME PATH
//! ```
//!
//! `open` opens (building the index when CACHE is empty) and prints what it did; `updates`
//! appends a function to N Python, Go or C files in turn, one `update` each (re-extraction
//! and re-resolution of the file and its dependents), puts each file back (untimed), and
//! prints the p50 and p95; `queries` ranks the definitions as `graph map` does (timed), then
//! looks up N of their names (spread over the ranking) with `symbols` and prints the p50
//! and p95 (and the names with their places, as `sample`), then times a map around FOCUS
//! (default: the best-ranked source file), and a write to that file that adds a function
//! calling the best-ranked definition (an edge the kept ranks must take in) with the map
//! after it, putting the file back (untimed), ten times (p50, max);
//! `callers` prints every caller site (`[path, line]`) of the callable NAME defined in PATH,
//! at the default confidence, with the time the query took.

use std::path::PathBuf;
use std::time::Instant;

use cc_graph::{Graph, GraphConfig, UpdateStats};

/// Writes to the focus file in `queries` (each timed, then put back).
const WRITES: usize = 10;

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, root, cache, rest @ ..] = args.as_slice() else {
        return Err("usage: bench open|updates|queries ROOT CACHE [N]".into());
    };
    let n: usize = rest.first().and_then(|n| n.parse().ok()).unwrap_or(20);
    let config = GraphConfig {
        cache_dir: PathBuf::from(cache),
        ..GraphConfig::default()
    };
    let started = Instant::now();
    let (mut graph, stats) = Graph::open_with(root.as_ref(), config)?;
    let open_seconds = started.elapsed().as_secs_f64();
    match mode.as_str() {
        "open" => open(&graph, &stats, open_seconds)?,
        "updates" => updates(&mut graph, n)?,
        "queries" => queries(&mut graph, n, rest.get(1))?,
        "callers" => callers(&graph, rest, open_seconds)?,
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}

/// `open`: what opening did and what the index holds.
fn open(
    graph: &Graph,
    stats: &UpdateStats,
    open_seconds: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let s = graph.stats()?;
    println!(
        "{}",
        serde_json::json!({
            "seconds": open_seconds,
            "rebuilt": stats.rebuilt,
            "extracted": stats.extracted,
            "files": s.files,
            "definitions": s.definitions,
            "references": s.references,
            "edges": s.exact + s.import + s.package,
            "name_edges": s.name,
            "ambiguous": s.ambiguous,
            "index_bytes": s.index_bytes,
        })
    );
    Ok(())
}

/// The Python, Go and C files under the graph's root, relative to it, in path order.
fn update_candidates(graph: &Graph) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let outline_root = graph.root().to_path_buf();
    for entry in ignore::WalkBuilder::new(&outline_root).build().flatten() {
        let p = entry.path();
        let wanted = p
            .extension()
            .is_some_and(|e| e == "py" || e == "go" || e == "c");
        if wanted && entry.file_type().is_some_and(|t| t.is_file()) {
            if let Ok(rel) = p.strip_prefix(&outline_root) {
                files.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    files
}

/// `updates`: times N single-file updates, each adding a function, and puts each file back.
fn updates(graph: &mut Graph, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    // Python, Go and C files spread over the index, by path order (the addition is
    // written in their language).
    let files = update_candidates(graph);
    let outline_root = graph.root().to_path_buf();
    let step = (files.len() / n.max(1)).max(1);
    let mut times = Vec::new();
    let mut re_resolved = Vec::new();
    let mut slowest: Option<(String, f64)> = None;
    for (i, rel) in files.iter().step_by(step).take(n).enumerate() {
        let path = outline_root.join(rel);
        let mut text = std::fs::read(&path)?;
        let addition = match rel.rsplit('.').next() {
            Some("go") => format!("\nfunc benchAdded{i}() {{ benchAdded{i}() }}\n"),
            Some("c") => format!("\nvoid bench_added_{i}(void) {{ bench_added_{i}(); }}\n"),
            _ => format!("\n\ndef bench_added_{i}():\n    return bench_added_{i}()\n"),
        };
        let original = text.clone();
        text.extend_from_slice(addition.as_bytes());
        std::fs::write(&path, &text)?;
        let t = Instant::now();
        let stats = graph.update(&[rel.as_str()])?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if slowest.as_ref().is_none_or(|(_, worst)| ms > *worst) {
            slowest = Some((rel.clone(), ms));
        }
        times.push(ms);
        re_resolved.push(stats.re_resolved as f64);
        // The tree is put back as it was (untimed): a bench corpus stays the same.
        std::fs::write(&path, &original)?;
        graph.update(&[rel.as_str()])?;
    }
    println!(
        "{}",
        serde_json::json!({
            "updates": times.len(),
            "p50_ms": percentile(times.clone(), 0.5),
            "p95_ms": percentile(times.clone(), 0.95),
            "max_ms": percentile(times, 1.0),
            "re_resolved_p50": percentile(re_resolved.clone(), 0.5),
            "re_resolved_max": percentile(re_resolved, 1.0),
            "slowest": slowest.map(|(path, _)| path),
        })
    );
    Ok(())
}

/// `queries`: the ranking, N name look-ups, a map around the focus file and writes to it.
fn queries(
    graph: &mut Graph,
    n: usize,
    focus: Option<&String>,
) -> Result<(), Box<dyn std::error::Error>> {
    // As many as `graph map` ranks (it asks for at most 2,000).
    let ranked_at = Instant::now();
    let ranked = graph.rank(&[], 2000, cc_graph::DEFAULT_MIN_CONFIDENCE)?;
    let rank_ms = ranked_at.elapsed().as_secs_f64() * 1000.0;
    // Spread over the ranking; with where each is, for a bench that asks about them again.
    let sample: Vec<(String, String, u32)> = {
        let step = (ranked.value.len() / n.max(1)).max(1);
        ranked
            .value
            .into_iter()
            .step_by(step)
            .take(n)
            .map(|r| (r.symbol.name, r.symbol.path, r.symbol.line))
            .collect()
    };
    let names: Vec<String> = sample.iter().map(|(name, _, _)| name.clone()).collect();
    let times = lookup_times(graph, &names)?;
    // A map around a file, and a map after a write that changes edges.
    let top = graph
        .rank(&[], 5000, cc_graph::DEFAULT_MIN_CONFIDENCE)?
        .value;
    let best = top
        .first()
        .map(|r| r.symbol.name.clone())
        .unwrap_or_default();
    let source = match focus {
        Some(focus) => focus.clone(),
        None => top
            .iter()
            .map(|r| r.symbol.path.clone())
            .find(|p| p.ends_with(".c") || p.ends_with(".py") || p.ends_with(".go"))
            .ok_or("no source file among the ranked")?,
    };
    let t = Instant::now();
    let around = graph.rank(&[source.as_str()], 2000, cc_graph::DEFAULT_MIN_CONFIDENCE)?;
    let focus_ms = t.elapsed().as_secs_f64() * 1000.0;
    let writes = focus_writes(graph, &source, &best)?;
    println!(
        "{}",
        serde_json::json!({
            "queries": times.len(),
            "rank_ms": rank_ms,
            "focus": source,
            "focus_ms": focus_ms,
            "focus_listed": around.value.len(),
            "writes": writes.write_times.len(),
            "write_ms": percentile(writes.write_times.clone(), 0.5),
            "write_max_ms": percentile(writes.write_times, 1.0),
            "write_rank_pushes": percentile(writes.pushes, 0.5),
            "rank_after_write_ms": percentile(writes.rank_times.clone(), 0.5),
            "rank_after_write_max_ms": percentile(writes.rank_times, 1.0),
            "p50_ms": percentile(times.clone(), 0.5),
            "p95_ms": percentile(times, 0.95),
            "sample": sample,
        })
    );
    Ok(())
}

/// Milliseconds each `symbols` look-up of `names` took; an error when one finds nothing.
fn lookup_times(graph: &Graph, names: &[String]) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    let mut times = Vec::new();
    for name in names {
        let t = Instant::now();
        let found = graph.symbols(name, 20)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        if found.value.is_empty() {
            return Err(format!("symbols({name}) found nothing").into());
        }
    }
    Ok(times)
}

/// Samples of `focus_writes`, one per write.
struct Writes {
    /// Milliseconds each `update` of the written file took.
    write_times: Vec<f64>,
    /// Milliseconds each ranking after the write took.
    rank_times: Vec<f64>,
    /// The rank pushes each update made.
    pushes: Vec<f64>,
}

/// Times `WRITES` writes to `source` adding a function that calls `best`, each followed by a
/// ranking, putting the file back after each.
fn focus_writes(
    graph: &mut Graph,
    source: &str,
    best: &str,
) -> Result<Writes, Box<dyn std::error::Error>> {
    let path = graph.root().join(source);
    let original = std::fs::read(&path)?;
    let addition = match source.rsplit('.').next() {
        Some("go") => format!("\nfunc benchRankProbe() {{ {best}() }}\n"),
        Some("c") => format!("\nvoid bench_rank_probe(void) {{ {best}(0); }}\n"),
        _ => format!("\n\ndef bench_rank_probe():\n    return {best}()\n"),
    };
    // Ten writes, each put back (untimed): one sample is noise on a shared machine.
    let mut write_times = Vec::new();
    let mut rank_times = Vec::new();
    let mut pushes = Vec::new();
    for _ in 0..WRITES {
        let mut text = original.clone();
        text.extend_from_slice(addition.as_bytes());
        std::fs::write(&path, &text)?;
        let t = Instant::now();
        let stats = graph.update(&[source])?;
        write_times.push(t.elapsed().as_secs_f64() * 1000.0);
        pushes.push(stats.rank_pushes as f64);
        let t = Instant::now();
        graph.rank(&[], 5000, cc_graph::DEFAULT_MIN_CONFIDENCE)?;
        rank_times.push(t.elapsed().as_secs_f64() * 1000.0);
        std::fs::write(&path, &original)?;
        graph.update(&[source])?;
    }
    Ok(Writes {
        write_times,
        rank_times,
        pushes,
    })
}

/// `callers`: every caller site of the callable NAME defined in PATH, with the query's time.
fn callers(
    graph: &Graph,
    rest: &[String],
    open_seconds: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let [name, path, ..] = rest else {
        return Err("usage: bench callers ROOT CACHE NAME PATH".into());
    };
    let target = graph
        .find(name, Some(path))?
        .into_iter()
        .find(|d| d.kind.is_callable())
        .ok_or_else(|| format!("no callable {name} in {path}"))?;
    let t = Instant::now();
    let callers = graph.callers(target.id, cc_graph::DEFAULT_MIN_CONFIDENCE)?;
    let seconds = t.elapsed().as_secs_f64();
    let mut rungs: std::collections::BTreeMap<&str, usize> = Default::default();
    for site in &callers.value.sites {
        *rungs.entry(site.rung.as_str()).or_default() += 1;
    }
    let sites: Vec<(&str, u32)> = callers
        .value
        .sites
        .iter()
        .map(|s| (s.path.as_str(), s.line))
        .collect();
    println!(
        "{}",
        serde_json::json!({
            "open_seconds": open_seconds,
            "seconds": seconds,
            "rungs": rungs,
            "sites": sites,
        })
    );
    Ok(())
}
