//! `transaction`: what the commit journal costs and how fast a crash is put right.
//!
//! `cargo run --release -p cc-workspace --example journal_bench`:
//!
//! - a 100-file commit (about 4 KiB per file, ten folders), journaled (`Transaction::commit`)
//!   against the protocol before the journal rebuilt from the public API (stale check, every
//!   temporary fsynced, a last look and a rename with its folder fsync per file); alternating
//!   processes, the median of their medians; peak RSS of each process beside it;
//! - recovery after `kill -9` of a 1,000-file commit, killed halfway through its temporary
//!   files (rolled back) or halfway through its renames (rolled forward), recovered by a fresh
//!   process: its time and peak RSS.
//!
//! The trees and state folders live under `target/bench-transaction`, on the same file
//! system as the checkout.

use super::verdict;
use std::fmt::Write as _;

use super::Context;
use crate::util::Result;

const COMMIT_FILES: &str = "100";
/// Commits per variant in the processes that measure peak RSS.
const COMMIT_RUNS: &str = "3";
/// Rounds of the interleaved timing (one commit of each variant per round).
const ROUNDS: &str = "40";
const KILL_FILES: &str = "1000";
const KILLS: &str = "10";

const OVERHEAD_GOAL: f64 = 1.10;
const RECOVERY_GOAL_MS: f64 = 1000.0;

fn number(row: &serde_json::Value, key: &str) -> Result<f64> {
    row[key]
        .as_f64()
        .ok_or_else(|| format!("journal_bench printed a row without `{key}`: {row}"))
}

pub fn run(ctx: &Context) -> Result<String> {
    let dir = ctx.target_dir.join("bench-transaction");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let dir_arg = dir.to_string_lossy().into_owned();
    let mut journaled = Vec::new();
    let mut bare = Vec::new();
    let mut legacy = Vec::new();
    eprintln!("transaction: peak RSS of each variant");
    for (variant, rows) in [
        ("journaled", &mut journaled),
        ("bare", &mut bare),
        ("legacy", &mut legacy),
    ] {
        let args = ["commit", variant, &dir_arg, COMMIT_FILES, COMMIT_RUNS];
        rows.extend(ctx.example_rows("cc-workspace", "journal_bench", &args)?);
    }
    eprintln!("transaction: {ROUNDS} interleaved rounds of 100-file commits");
    let interleaved = ctx.example_rows(
        "cc-workspace",
        "journal_bench",
        &["interleaved", &dir_arg, COMMIT_FILES, ROUNDS],
    )?;
    let timing = interleaved
        .first()
        .ok_or("journal_bench printed no interleaved row")?
        .clone();
    eprintln!("transaction: kill -9 and recovery of {KILL_FILES}-file commits");
    let kills = ctx.example_rows(
        "cc-workspace",
        "journal_bench",
        &["kill", &dir_arg, KILL_FILES, KILLS],
    )?;
    let _ = std::fs::remove_dir_all(&dir);

    let median = |rows: &[serde_json::Value], key: &str| -> Result<f64> {
        let values: Vec<f64> = rows.iter().map(|r| number(r, key)).collect::<Result<_>>()?;
        Ok(super::structural::median(values.into_iter()))
    };
    let (ours_ms, theirs_ms, bare_ms) = (
        number(&timing, "journaled_ms")?,
        number(&timing, "legacy_ms")?,
        number(&timing, "bare_ms")?,
    );
    let (ours_rss, theirs_rss) = (median(&journaled, "rss_kib")?, median(&legacy, "rss_kib")?);
    let bare_rss = median(&bare, "rss_kib")?;
    let ratio = number(&timing, "over_legacy")?;
    let cost = number(&timing, "over_bare")?;

    let mut out = String::new();
    out.push_str("## transaction — the commit journal's cost, and recovery after kill -9\n\n");
    out.push_str(
        "`cargo run --release -p cc-workspace --example journal_bench` (see \
         `xtask/src/bench/transaction.rs`). A commit of 100 replaced files (about 4 KiB each, \
         ten folders) journaled (`Transaction::commit`: journal with backups fsynced, phase \
         records fsynced) against the protocol before the journal, rebuilt from the public API \
         (stale check, fsynced temporaries, a last look and a rename with its folder fsync per \
         file), and against today's protocol without its journal (fsynced temporaries, a \
         last look and a rename per file, each folder fsynced once: what the journal is added \
         to); one commit of each in turn, 40 rounds, the median of the per-round ratios (each \
         round's three share the machine's load); peak RSS from a process per variant. Then a 1,000-file commit killed with \
         SIGKILL halfway through its temporaries (recovery rolls back) or halfway through its \
         renames (rolls forward), recovered by a fresh process right after the kill; its own \
         time and peak RSS (`VmHWM`). Rolling back means unlinking the ~500 temporaries the \
         dead process had just written and fsynced; right after the kill those unlinks wait on \
         the file system's journal, so the recovery unlinks with several threads, which share \
         the waits. The journaled commit fsyncs \
         each folder once at the end instead of after every rename, which pays for the \
         journal's own writes.\n\n",
    );
    out.push_str(
        "| measured | ours | compared with | ratio | goal | result |\n|---|---|---|---|---|---|\n",
    );
    let _ = writeln!(
        out,
        "| 100-file commit: the journal's cost (journaled vs the same protocol without it) | {ours_ms:.1} ms, {:.1} MiB peak RSS | {bare_ms:.1} ms, {:.1} MiB | **{cost:.2}×** | ≤ {OVERHEAD_GOAL:.2}× | {} |",
        ours_rss / 1024.0,
        bare_rss / 1024.0,
        verdict(cost <= OVERHEAD_GOAL)
    );
    let _ = writeln!(
        out,
        "| 100-file commit, journaled vs the protocol before the journal | {ours_ms:.1} ms, {:.1} MiB peak RSS | {theirs_ms:.1} ms, {:.1} MiB | **{ratio:.2}×** | ≤ {OVERHEAD_GOAL:.2}× | {} |",
        ours_rss / 1024.0,
        theirs_rss / 1024.0,
        verdict(ratio <= OVERHEAD_GOAL)
    );
    for moment in ["staging", "committing"] {
        out.push_str(&recovery_row(&kills, moment)?);
    }
    out.push_str(&format!(
        "\nLoad average when done: {}.\n",
        super::structural::load_average()
    ));
    Ok(out)
}

/// The recovery's row for the commits killed at `moment`: how long recovery took, its
/// memory, which way it went (empty when no commit was killed then).
fn recovery_row(kills: &[serde_json::Value], moment: &str) -> Result<String> {
    let rows: Vec<&serde_json::Value> = kills.iter().filter(|r| r["killed"] == moment).collect();
    if rows.is_empty() {
        return Ok(String::new());
    }
    let times: Vec<f64> = rows
        .iter()
        .map(|r| number(r, "ms"))
        .collect::<Result<_>>()?;
    let typical = super::structural::median(times.iter().copied());
    let worst = times.iter().copied().fold(0.0, f64::max);
    let rss = rows
        .iter()
        .map(|r| number(r, "rss_kib"))
        .collect::<Result<Vec<f64>>>()?
        .into_iter()
        .fold(0.0, f64::max);
    let directions: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["direction"].as_str())
        .collect();
    let temps: Vec<String> = rows
        .iter()
        .map(|r| r["temps_removed"].to_string())
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| recovery after kill -9 of a 1,000-file commit {} ({} kills: rolled {}; temporaries removed {}) | median {typical:.0} ms (worst {worst:.0} ms), {:.1} MiB peak RSS | — | — | median ≤ {RECOVERY_GOAL_MS:.0} ms | {} |",
        if moment == "staging" { "while writing its temporaries" } else { "halfway through its renames" },
        rows.len(),
        directions.join(", "),
        temps.join(", "),
        rss / 1024.0,
        verdict(typical <= RECOVERY_GOAL_MS)
    );
    Ok(out)
}
