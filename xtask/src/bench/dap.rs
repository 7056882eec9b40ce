//! `dap`: what the debug session layer adds to a real adapter's speed. Per adapter (debugpy,
//! lldb-dap), a bare DAP client and the `Supervisor` drive the same looping program: launch to
//! the first breakpoint stop, then N step-overs, each step being `next` → `stopped` →
//! `stackTrace` (the supervisor also keeps its state, position, output and process tracking).
//!
//! Runs `cargo run --release -p cc-dap-client --example dap_bench ROUNDS`, which prints one
//! JSON object per adapter.

use std::fmt::Write as _;

use super::Context;
use crate::util::Result;

const ROUNDS: &str = "50";
/// Goal: a step through the supervisor takes at most this much longer than a bare one (p50).
const GOAL_RATIO: f64 = 1.2;

pub fn run(ctx: &Context) -> Result<String> {
    let rows = ctx.example_rows("cc-dap-client", "dap_bench", &[ROUNDS])?;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Debugger: session overhead per step\n\n\
         Per adapter, a bare DAP client and `cc_dap_client::Supervisor` drive the same looping \
         program: launch to a breakpoint, clear it, then {ROUNDS} step-overs, each `next` → \
         `stopped` → `stackTrace` of the top frame (the supervisor's `act(StepOver)` also keeps \
         its state, position, output and process tracking). Goal: supervisor step p50 ≤ \
         {GOAL_RATIO}× the bare step. Launch times are one sample each; ours includes the \
         adapter's detection probe (`import debugpy`, `lldb-dap --help`).\n"
    );
    let _ = writeln!(
        md,
        "| adapter | bare step p50 (ms) | ours step p50 (ms) | ours p90 (ms) | ours / bare | bare launch (ms) | ours launch (ms) | goal |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for row in &rows {
        let adapter = row["adapter"].as_str().unwrap_or("?");
        if let Some(missing) = row["missing"].as_str() {
            let _ = writeln!(
                md,
                "| {adapter} | – | – | – | – | – | – | not installed ({missing}) |"
            );
            continue;
        }
        if let Some(error) = row["error"].as_str() {
            failures.push(format!("{adapter}: {error}"));
            continue;
        }
        let num = |key: &str| row[key].as_f64().unwrap_or(f64::NAN);
        let ratio = num("step_ratio");
        let goal = if ratio <= GOAL_RATIO { "PASS" } else { "MISS" };
        let _ = writeln!(
            md,
            "| {adapter} | {:.2} | {:.2} | {:.2} | **{ratio:.2}×** | {:.0} | {:.0} | {goal} |",
            num("raw_step_p50_ms"),
            num("ours_step_p50_ms"),
            num("ours_step_p90_ms"),
            num("raw_launch_ms"),
            num("ours_launch_ms"),
        );
    }
    if !failures.is_empty() {
        return Err(format!(
            "the dap_bench example failed for {}",
            failures.join("; ")
        ));
    }
    eprintln!("dap: {} adapters measured", rows.len());
    Ok(md)
}
