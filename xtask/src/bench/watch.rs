//! `cargo xtask bench watch`: what freshness costs with the run's one watcher of the tree,
//! beside what it cost before (a stat of every file on every `graph` call), on the CPython
//! standard library and the Linux 6.1 tree; how long a write made outside the run takes to
//! reach the graph and an open language server; and the watcher's own memory.

use super::verdict;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::structural::{copy_tree, load_average, measure, stdlib_dir, Measured};
use super::Context;
use crate::util::{self, Result};

/// The file basedpyright keeps open while outside writes are made (CPython stdlib).
const OPEN_FILE: &str = "json/decoder.py";

struct Row {
    title: &'static str,
    files: usize,
    freshness: serde_json::Value,
    freshness_run: Measured,
    memory: serde_json::Value,
}

pub fn run(ctx: &Context) -> Result<String> {
    let dirs: Vec<PathBuf> = std::env::split_paths(&ctx.peer_path).collect();
    let python = util::find_executable("python3", dirs)
        .ok_or("python3 is not on PATH; run `cargo xtask peers`")?;
    eprintln!("watch: building the bench example (release)");
    let mut build = ctx.cargo();
    build.args([
        "build",
        "--release",
        "-p",
        "cc-tools",
        "--example",
        "watch_bench",
    ]);
    util::run_to_stderr(&mut build)?;
    let bench = ctx.target_dir.join("release/examples/watch_bench");
    let base = ctx.target_dir.join("bench-watch");
    let python_dir = base.join("python");
    if python_dir.exists() {
        std::fs::remove_dir_all(&python_dir)
            .map_err(|e| format!("cannot clear {}: {e}", python_dir.display()))?;
    }
    let (py_files, _) = copy_tree(&stdlib_dir(&python, &ctx.peer_path)?, &python_dir, "py")?;
    // A project marker, so that basedpyright serves the copy.
    std::fs::write(python_dir.join("pyproject.toml"), "")
        .map_err(|e| format!("cannot write a marker: {e}"))?;
    let linux = super::linux::tree(&ctx.root)?;
    let load_before = load_average();
    let mut rows = vec![corpus(
        ctx,
        &python,
        &bench,
        "CPython stdlib",
        &python_dir,
        py_files,
        &base.join("python.cache"),
        Some(OPEN_FILE),
    )?];
    let linux_files = count_c_files(&linux);
    rows.push(corpus(
        ctx,
        &python,
        &bench,
        "Linux 6.1",
        &linux,
        linux_files,
        &base.join("linux.cache"),
        None,
    )?);
    let load_after = load_average();
    Ok(render(&rows, &load_before, &load_after))
}

/// The `.c` and `.h` files under `dir` (hidden folders left out).
fn count_c_files(dir: &Path) -> usize {
    let extensions = ["c", "h"];
    let mut count = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t)
                    if t.is_file()
                        && path
                            .extension()
                            .is_some_and(|e| extensions.iter().any(|x| e == *x)) =>
                {
                    count += 1;
                }
                _ => {}
            }
        }
    }
    count
}

#[allow(clippy::too_many_arguments)]
fn corpus(
    ctx: &Context,
    python: &Path,
    bench: &Path,
    title: &'static str,
    dir: &Path,
    files: usize,
    cache: &Path,
    open_file: Option<&str>,
) -> Result<Row> {
    if cache.exists() {
        std::fs::remove_dir_all(cache)
            .map_err(|e| format!("cannot clear {}: {e}", cache.display()))?;
    }
    eprintln!("watch: {title}: freshness");
    let mut argv: Vec<OsString> = vec![bench.into(), "freshness".into(), dir.into(), cache.into()];
    if let Some(file) = open_file {
        argv.push(file.into());
    }
    let freshness_run = measure(python, dir, &argv, &ctx.peer_path)?;
    let freshness = json_line(&freshness_run, title)?;
    eprintln!("watch: {title}: memory");
    let memory_run = measure(
        python,
        dir,
        &[bench.into(), "memory".into(), dir.into()],
        &ctx.peer_path,
    )?;
    let memory = json_line(&memory_run, title)?;
    Ok(Row {
        title,
        files,
        freshness,
        freshness_run,
        memory,
    })
}

fn json_line(m: &Measured, title: &str) -> Result<serde_json::Value> {
    if m.code != 0 {
        return Err(format!(
            "the watch bench failed on {title}: {}",
            m.output.trim()
        ));
    }
    m.output
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            format!(
                "the watch bench printed no JSON on {title}: {}",
                m.output.trim()
            )
        })
}

fn render(rows: &[Row], load_before: &str, load_after: &str) -> String {
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let mut out = String::from(
        "## Freshness: the run's watcher vs a stat of every file\n\n\
         `cargo xtask bench watch` (`tools/examples/watch_bench.rs`, release build). A `graph` \
         call used to stat every file of the tree to find what changed; it now asks the run's \
         one watcher (inotify through `notify`): a barrier through the kernel's queue, then the \
         list of what changed (`cc_workspace::watch`). Nothing changed between calls here. \
         Propagation: a write made outside the run (as a shell would) until both the graph's \
         view and basedpyright's copy of the open document hold it. Memory: resident memory \
         the watcher adds to its process.\n\n\
         | tree | files | freshness p50, watcher | p95 | stat of every file p50 | ratio | whole `graph symbols` call p50 | goal (p50 ≤ 2 ms) |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let watched = f(&row.freshness, "watched_p50_ms");
        let stat = f(&row.freshness, "stat_all_p50_ms");
        out.push_str(&format!(
            "| {} | {} | {:.3} ms | {:.3} ms | {:.1} ms | {:.4}× | {:.2} ms | {} |\n",
            row.title,
            row.files,
            watched,
            f(&row.freshness, "watched_p95_ms"),
            stat,
            watched / stat,
            f(&row.freshness, "call_p50_ms"),
            verdict(watched <= 2.0),
        ));
    }
    out.push_str(
        "\n| tree | outside write → graph and open server, p50 | p95 | goal (p95 ≤ 500 ms) | watcher memory | folders watched | goal (≤ 64 MB) | peak RSS of the bench run |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let rounds = row.freshness["rounds"].as_u64().unwrap_or(0);
        let memory_mb = row.memory["rss_added_kib"].as_f64().unwrap_or(f64::NAN) / 1024.0;
        let (p50, p95, goal) = if rounds > 0 {
            let p95 = f(&row.freshness, "propagation_p95_ms");
            (
                format!("{:.1} ms", f(&row.freshness, "propagation_p50_ms")),
                format!("{p95:.1} ms"),
                verdict(p95 <= 500.0).to_owned(),
            )
        } else {
            ("—".into(), "—".into(), "(no server on this tree)".into())
        };
        out.push_str(&format!(
            "| {} | {p50} | {p95} | {goal} | {memory_mb:.1} MB | {} | {} | {:.0} MB |\n",
            row.title,
            row.memory["dirs"],
            verdict(memory_mb <= 64.0),
            row.freshness_run.rss_kib as f64 / 1024.0,
        ));
    }
    out.push_str(&format!(
        "\nLoad average before: {load_before}; after: {load_after}. The index build itself is \
         the graph family's subject (`cargo xtask bench graph`).\n"
    ));
    out
}
