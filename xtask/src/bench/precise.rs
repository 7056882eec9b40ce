//! `precise`: the code graph's precise tier (compiler-grade indexers) beside the tree-sitter
//! build, on copies of the real projects `cargo xtask peers` installs: each indexer's wall
//! time and the peak RSS of its process tree, its import into the index, and what a one-file
//! write costs until the file is precise again (`graph/examples/precise_bench.rs`).

use std::fmt::Write as _;
use std::process::Command;

use serde_json::Value;

use super::Context;
use crate::peers::Layout;
use crate::util::{self, Result};

/// The projects measured: two per indexer where the keys are.
const PROJECTS: &[&str] = &["zod", "rxjs", "requests", "click", "semver"];

pub fn run(ctx: &Context) -> Result<String> {
    // Outside the checkout: under it, cargo takes a crate's copy for a member of this
    // workspace (and rust-analyzer's metadata fails).
    let scratch = std::env::temp_dir().join("cc-bench-precise");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let projects = Layout::new(&ctx.root).projects_dir();
    let mut md = String::from(
        "## precise — the graph's compiler-grade indexers beside its tree-sitter build\n\n",
    );
    let _ = writeln!(
        md,
        "`cargo run --release -p cc-graph --example precise_bench` on a copy of each project, \
         one after the other: *tree-sitter* is the clean index (`open` with an empty cache); \
         *indexer* is the indexer's own run (wall time; peak RSS of its process tree from \
         `getrusage(RUSAGE_CHILDREN)`); *read* parses its SCIP output and the files' \
         object-literal arguments (no lock on the graph); *import* matches them with the \
         index (the only part that holds the graph: a `graph` call waits at most this long); \
         *refresh* is a one-file write (a comment line added to a source file) until the tree \
         is precise again: the `Graph::update`, the indexer's run and the import. None of the \
         three indexers has an incremental mode, so a refresh costs one run (goal: refresh ≤ \
         the indexer's own cost plus its import). Answers never wait for any of it: the run \
         does it in the background.\n"
    );
    let _ = writeln!(
        md,
        "| project | files | tree-sitter | its peak RSS | indexer | indexer | its peak RSS | \
         read | import (holds the graph) | refresh after a write | goal |\n\
         |---|---|---|---|---|---|---|---|---|---|---|"
    );
    for project in PROJECTS {
        let from = projects.join(project);
        if !from.is_dir() {
            return Err(format!(
                "{} is not installed; run `cargo xtask peers`",
                from.display()
            ));
        }
        let copy = scratch.join(project);
        util::run_to_stderr(Command::new("cp").arg("-r").arg(&from).arg(&copy))?;
        let cache = scratch.join(format!("{project}-cache"));
        eprintln!("precise: {project}");
        let rows = ctx.example_rows(
            "cc-graph",
            "precise_bench",
            &[&copy.to_string_lossy(), &cache.to_string_lossy()],
        )?;
        let phase = |name: &str| rows.iter().find(|r| r["phase"] == name);
        let tree = phase("tree-sitter").ok_or("no tree-sitter row")?;
        let (Some(indexer), Some(refresh)) = (phase("indexer"), phase("refresh")) else {
            return Err(format!("{project}: no indexer ran: {rows:?}"));
        };
        let seconds = |v: &Value, key: &str| v[key].as_f64().unwrap_or(0.0);
        let run = seconds(indexer, "seconds");
        let read = seconds(indexer, "read_seconds");
        let import = seconds(indexer, "import_seconds");
        let refreshed = seconds(refresh, "seconds");
        let _ = writeln!(
            md,
            "| {project} | {} | {:.2} s | {:.0} MB | {} | {:.2} s | {:.0} MB | {:.3} s | {:.3} s | {:.2} s | {} |",
            tree["files"],
            seconds(tree, "seconds"),
            seconds(tree, "peak_rss_mb"),
            indexer["indexer"].as_str().unwrap_or("?"),
            run,
            seconds(indexer, "peak_rss_mb"),
            read,
            import,
            refreshed,
            // Machines are noisy: a tenth over one run is still one run.
            if refreshed <= (run + read + import) * 1.1 {
                "PASS"
            } else {
                "MISS"
            }
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(md)
}
