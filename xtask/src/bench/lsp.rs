//! `lsp`: diagnostics on write, per real server: the time from the write to the server's
//! answer for that version (its `publishDiagnostics` or pull response), and how much later
//! the wrapper (`Supervisor::check_written` plus the ledger) returns. The overhead is what
//! this layer adds; servers that publish without versions pay their settle window there.
//!
//! Runs `cargo run --release -p cc-lsp-client --example lsp_bench ROUNDS`, which prints one
//! JSON object per server.

use std::fmt::Write as _;

use super::Context;
use crate::util::Result;

const ROUNDS: &str = "20";
/// Servers with a goal: pull-based or versioned, so no settle window is needed.
const GOAL_MS: f64 = 50.0;
const GOAL_SERVERS: &[&str] = &["clangd", "basedpyright"];

pub fn run(ctx: &Context) -> Result<String> {
    let rows = ctx.example_rows("cc-lsp-client", "lsp_bench", &[ROUNDS])?;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Language servers: diagnostics on write\n\n\
         Per server, {ROUNDS} writes alternating a broken and a fixed file (after one warm-up \
         write that starts the server). *Server* is the time from the write's sync to the \
         server's answer for that version (publish or pull response); *returned* is when the \
         diagnostics-on-write wrapper returned; *overhead* is the difference, what this layer \
         adds. Goal: overhead p50 ≤ {GOAL_MS} ms for clangd and basedpyright (versioned push \
         and pull: no settle window needed). typescript-language-server publishes without \
         versions and rust-analyzer answers pulls before its cargo check starts, so their \
         overhead is their configured settle window.\n"
    );
    let _ = writeln!(
        md,
        "| server | rounds | pending | server p50 (ms) | returned p50 (ms) | overhead p50 (ms) | overhead p90 (ms) | overhead / server time | goal |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        let server = row["server"].as_str().unwrap_or("?");
        if let Some(missing) = row["missing"].as_str() {
            let _ = writeln!(
                md,
                "| {server} | – | – | – | – | – | – | – | not installed (`{missing}`) |"
            );
            continue;
        }
        let num = |key: &str| row[key].as_f64().unwrap_or(f64::NAN);
        let overhead = num("overhead_p50_ms");
        let goal = if GOAL_SERVERS.contains(&server) {
            if overhead <= GOAL_MS {
                "PASS"
            } else {
                "MISS"
            }
        } else {
            "–"
        };
        let _ = writeln!(
            md,
            "| {server} | {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.3} | {goal} |",
            row["rounds"],
            row["pending"],
            num("server_p50_ms"),
            num("returned_p50_ms"),
            overhead,
            num("overhead_p90_ms"),
            overhead / num("server_p50_ms").max(0.001),
        );
    }
    eprintln!("lsp: {} servers measured", rows.len());
    Ok(md)
}
