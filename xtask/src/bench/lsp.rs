//! `lsp`: diagnostics on write, per real server: the time from the write to the server's
//! answer for that version (its `publishDiagnostics` or pull response, or tsserver's own
//! answer), and how much later the wrapper (`ServerPool::check_files` plus the ledger)
//! returns. The overhead is what this layer adds. Then the cross-file case (a change of
//! signature and the file that calls it), the cost of the baseline a first write takes, and
//! the cold-start cost of navigation that waits for the server's first look at the workspace.
//!
//! Runs `cargo run --release -p cc-lsp-client --example lsp_bench ROUNDS`, which prints one
//! JSON object per server and case.

use super::verdict;
use std::fmt::Write as _;

use super::Context;
use crate::util::Result;

const ROUNDS: &str = "20";
/// Overhead goal of a single-file write, every server (no settle window on the normal path).
const GOAL_MS: f64 = 50.0;
/// Overhead goal of the cross-file case.
const CROSS_GOAL_MS: f64 = 100.0;

fn within(value: f64, goal: f64) -> &'static str {
    verdict(value <= goal)
}

pub fn run(ctx: &Context) -> Result<String> {
    let rows = ctx.example_rows("cc-lsp-client", "lsp_bench", &[ROUNDS])?;
    let mut md = String::new();
    write_diagnostics(&mut md, &rows);
    cross_file(&mut md, &rows);
    fresh_navigation(&mut md, &rows);
    real_starts(&mut md, &rows);
    kotlin_writes(&mut md, &rows);
    eprintln!("lsp: {} rows measured", rows.len());
    Ok(md)
}

/// Diagnostics on write, per server.
fn write_diagnostics(md: &mut String, rows: &[serde_json::Value]) {
    let _ = writeln!(
        md,
        "## Language servers: diagnostics on write\n\n\
         Per server, {ROUNDS} writes alternating a broken and a fixed file (after one warm-up \
         write that starts the server). *Server* is the time from the write's sync to the \
         server's answer for that version (a versioned publish, a pull response, tsserver's \
         own answer for typescript-language-server; for rust-analyzer the pull after the \
         `cargo check` its save started); *returned* is when the diagnostics-on-write wrapper \
         returned; *overhead* is the difference, what this layer adds. Goal: overhead p50 ≤ \
         {GOAL_MS} ms for every server. No server pays a fixed settle window: each list is \
         taken on the server's own signal (see lsp-client/README.md).\n"
    );
    let _ = writeln!(
        md,
        "| server | rounds | pending | server p50 (ms) | returned p50 (ms) | overhead p50 (ms) | overhead p90 (ms) | goal |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for row in rows.iter().filter(|r| r["case"].is_null()) {
        let server = row["server"].as_str().unwrap_or("?");
        if let Some(missing) = row["missing"].as_str() {
            let _ = writeln!(
                md,
                "| {server} | – | – | – | – | – | – | not installed (`{missing}`) |"
            );
            continue;
        }
        let overhead = num(row, "overhead_p50_ms");
        let _ = writeln!(
            md,
            "| {server} | {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {} |",
            row["rounds"],
            row["pending"],
            num(row, "server_p50_ms"),
            num(row, "returned_p50_ms"),
            overhead,
            num(row, "overhead_p90_ms"),
            within(overhead, GOAL_MS),
        );
    }
}

/// What a write broke in another file.
fn cross_file(md: &mut String, rows: &[serde_json::Value]) {
    let _ = writeln!(
        md,
        "\n### What a write broke in another file\n\n\
         A library file and a file that calls it; {ROUNDS} writes to the library alternate \
         its signature between one the caller satisfies and one it does not, each checked \
         with the caller as a dependent (`check_files`). *Server* is from the sync to the \
         last answer of the two files; *overhead* from that answer to the wrapper's return. \
         *Wrong* counts rounds whose caller diagnostics did not match the library's state \
         (an error exactly when broken). *Baseline* is what a first write pays before it \
         writes: the current diagnostics of the written file and its dependent, with the \
         server already started (*start*). Goal: overhead p50 ≤ {CROSS_GOAL_MS} ms.\n"
    );
    let _ = writeln!(
        md,
        "| server | rounds | pending | wrong | server p50 (ms) | overhead p50 (ms) | overhead p90 (ms) | start (ms) | baseline (ms) | goal |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
    for row in rows.iter().filter(|r| r["case"] == "cross_file") {
        let server = row["server"].as_str().unwrap_or("?");
        if let Some(missing) = row["missing"].as_str() {
            let _ = writeln!(
                md,
                "| {server} | – | – | – | – | – | – | – | – | not installed (`{missing}`) |"
            );
            continue;
        }
        let overhead = num(row, "overhead_p50_ms");
        let wrong = row["wrong"].as_u64().unwrap_or(0);
        let goal = if wrong > 0 {
            "MISS (wrong)"
        } else {
            within(overhead, CROSS_GOAL_MS)
        };
        let _ = writeln!(
            md,
            "| {server} | {} | {} | {wrong} | {:.1} | {:.2} | {:.2} | {:.0} | {:.0} | {goal} |",
            row["rounds"],
            row["pending"],
            num(row, "server_p50_ms"),
            overhead,
            num(row, "overhead_p90_ms"),
            num(row, "start_ms"),
            num(row, "baseline_ms"),
        );
    }
}

/// Navigation in a fresh run.
fn fresh_navigation(md: &mut String, rows: &[serde_json::Value]) {
    let _ = writeln!(
        md,
        "\n### Navigation in a fresh run\n\n\
         The library's function of the cross-file case, `references` asked in a freshly \
         started server: *raw* the moment the file is open (what a client that does not wait \
         gets), *ours* after `wait_ready` (the server's own readiness signal: pyright's file \
         list, rust-analyzer's quiescent status, clangd's index, the end of `$/progress`). \
         Times are from the server's start; *found* is how many places each answer listed. \
         *Added* is what waiting costs the first answer; a raw answer that found fewer places \
         is the partial answer the wait prevents. \
         These are the server's own answers; the `lsp` \
         tool also opens the files that mention the name (`make_visible`), which is how it finds the caller that typescript-language-server and clangd (no compilation database) miss here.\n"
    );
    let _ = writeln!(
        md,
        "| server | raw first answer (ms) | raw found | ours (ms) | ours found | added (ms) | raw answer |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for row in rows.iter().filter(|r| r["case"] == "cold_start") {
        let server = row["server"].as_str().unwrap_or("?");
        if let Some(missing) = row["missing"].as_str() {
            let _ = writeln!(
                md,
                "| {server} | – | – | – | – | – | not installed (`{missing}`) |"
            );
            continue;
        }
        let raw_found = row["raw_found"].as_u64().unwrap_or(0);
        let ours_found = row["ours_found"].as_u64().unwrap_or(0);
        let judged = match raw_found.cmp(&ours_found) {
            std::cmp::Ordering::Less => "partial (fewer than ours)",
            std::cmp::Ordering::Equal => "same as ours",
            std::cmp::Ordering::Greater => "MISS (ours found fewer)",
        };
        let _ = writeln!(
            md,
            "| {server} | {:.0} | {raw_found} | {:.0} | {ours_found} | {:.0} | {judged} |",
            num(row, "raw_ms"),
            num(row, "ours_ms"),
            num(row, "ours_ms") - num(row, "raw_ms"),
        );
    }
}

/// Start and first answer on real projects.
fn real_starts(md: &mut String, rows: &[serde_json::Value]) {
    let _ = writeln!(
        md,
        "\n### Start and first answer on real projects\n\n\
         The servers added for Java and PHP on a copy of their test projects (installed by \
         `cargo xtask peers`): *start* is from asking for the server to its `initialize` \
         answer; *first answer* is from the same moment to the answer of the first \
         `references` of the function named, asked once the server is ready (what the `lsp` \
         tool's first answer costs in a new run); *found* is how many places it listed.\n"
    );
    let _ = writeln!(
        md,
        "| server | project | function | start (ms) | first answer (ms) | found |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    for row in rows.iter().filter(|r| r["case"] == "real_start") {
        let server = row["server"].as_str().unwrap_or("?");
        let project = row["project"].as_str().unwrap_or("?");
        if let Some(missing) = row["missing"].as_str() {
            let _ = writeln!(
                md,
                "| {server} | {project} | – | – | – | not installed (`{missing}`) |"
            );
            continue;
        }
        let _ = writeln!(
            md,
            "| {server} | {project} | `{}` | {:.0} | {:.0} | {} |",
            row["symbol"].as_str().unwrap_or(""),
            num(row, "start_ms"),
            num(row, "first_answer_ms"),
            row["found"],
        );
    }
}

/// Kotlin writes on a real project.
fn kotlin_writes(md: &mut String, rows: &[serde_json::Value]) {
    let _ = writeln!(
        md,
        "\n### Kotlin writes on a real project\n\n\
         JDT LS reads Kotlin for navigation only, so Kotlin files are checked by JetBrains' \
         compiler kept warm in one JVM per root (`cc_lsp_client::kotlin`), which compiles the \
         root's every Kotlin and Java file on each check (a module cannot be compiled in part). \
         On a copy of expo-modules-core (245 Kotlin, 51 Java files, Android's and React \
         Native's packages not on disk): *first* is the first check of a Kotlin file with its \
         caller in another file (JDT LS's start, the JVM's, a cold compile); then writes \
         alternate the function's signature between a form its caller satisfies and one it \
         does not, each checked with the caller as a dependent; *write* is from the write to \
         the diagnostics of both files. *Wrong* counts rounds whose caller diagnostics did \
         not match. These writes cost seconds, not milliseconds: the goal rows above are the \
         layer's overhead.\n"
    );
    let _ = writeln!(
        md,
        "| checker | project | first (ms) | rounds | pending | wrong | write p50 (ms) | write max (ms) |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for row in rows.iter().filter(|r| r["case"] == "real_writes") {
        let server = row["server"].as_str().unwrap_or("?");
        let project = row["project"].as_str().unwrap_or("?");
        if let Some(missing) = row["missing"].as_str() {
            let _ = writeln!(
                md,
                "| {server} | {project} | – | – | – | – | – | not installed (`{missing}`) |"
            );
            continue;
        }
        let _ = writeln!(
            md,
            "| {server} | {project} | {:.0} | {} | {} | {} | {:.0} | {:.0} |",
            num(row, "first_ms"),
            row["rounds"],
            row["pending"],
            row["wrong"],
            num(row, "write_p50_ms"),
            num(row, "write_max_ms"),
        );
    }
}

/// A row's number at `key` (NaN when absent).
fn num(row: &serde_json::Value, key: &str) -> f64 {
    row[key].as_f64().unwrap_or(f64::NAN)
}
