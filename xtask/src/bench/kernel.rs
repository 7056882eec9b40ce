//! `kernel`: persistent interpreters, ours (`cc-kernel-bridge`) vs Jupyter (`jupyter_client` +
//! `ipykernel` from the peers venv), on the same Python.
//!
//! Ours: the example `cargo run --release -p cc-kernel-bridge --example kernel_bench`, which
//! prints JSON: cold start to first result (median of 7), 1,000 trivial cells (`x += 1`, one
//! run, after 50 warm-up cells), the `tool()` round trip timed inside a cell (1,000 calls to
//! an echo bridge), and the same for JavaScript. Jupyter: [`JUPYTER_SCRIPT`] run by the venv's
//! python, with `execute_interactive` (which waits for the reply and the idle status, so the
//! cell's output is complete, as ours guarantees with its barrier).

use super::verdict;
use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::Context;
use crate::peers::Layout;
use crate::util::{self, Result};

const CELLS: usize = 1000;

/// Measures Jupyter the way a client uses it. Prints one JSON object.
const JUPYTER_SCRIPT: &str = r#"
import json, sys, time
from jupyter_client.manager import start_new_kernel

def run(kc, code):
    reply = kc.execute_interactive(code, timeout=120, output_hook=lambda msg: None,
                                   store_history=False)
    if reply['content']['status'] != 'ok':
        raise SystemExit('cell %r failed: %r' % (code, reply['content']))

count = int(sys.argv[1])
cold = []
for _ in range(3):
    started = time.perf_counter()
    km, kc = start_new_kernel(kernel_name='python3', startup_timeout=120)
    try:
        run(kc, '1 + 1')
        cold.append((time.perf_counter() - started) * 1e3)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

km, kc = start_new_kernel(kernel_name='python3', startup_timeout=120)
try:
    run(kc, 'x = 0')
    for _ in range(50):
        run(kc, 'x += 1')
    each = []
    started = time.perf_counter()
    for _ in range(count):
        cell = time.perf_counter()
        run(kc, 'x += 1')
        each.append((time.perf_counter() - cell) * 1e6)
    total = time.perf_counter() - started
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
each.sort()
cold.sort()
print(json.dumps({
    'cold_start_ms': cold[len(cold) // 2],
    'cells': {'count': count, 'total_ms': total * 1e3, 'mean_us': total * 1e6 / count,
              'p50_us': each[len(each) // 2], 'p90_us': each[len(each) * 9 // 10]},
}))
"#;

pub fn run(ctx: &Context) -> Result<String> {
    let mut build = ctx.cargo();
    build.args([
        "build",
        "--release",
        "-p",
        "cc-kernel-bridge",
        "--example",
        "kernel_bench",
    ]);
    util::run_to_stderr(&mut build)?;
    let binary = ctx
        .target_dir
        .join("release")
        .join("examples")
        .join("kernel_bench");
    eprintln!("kernel: our kernels ({CELLS} cells, cold starts, bridge round trips)");
    let mut ours = Command::new(&binary);
    ours.arg("--cells")
        .arg(CELLS.to_string())
        .current_dir(&ctx.root)
        .env("PATH", &ctx.peer_path);
    let ours = json_of(&mut ours, "the kernel_bench example")?;

    let python = Layout::new(&ctx.root).venv_bin().join("python");
    if !util::is_executable(&python) {
        return Err(format!(
            "{} is missing: run `cargo xtask peers` (it installs ipykernel and jupyter_client)",
            python.display()
        ));
    }
    eprintln!("kernel: Jupyter ({CELLS} cells, cold starts)");
    let mut jupyter = Command::new(&python);
    jupyter
        .args(["-c", JUPYTER_SCRIPT, &CELLS.to_string()])
        .current_dir(std::env::temp_dir())
        .env("PATH", &ctx.peer_path);
    let jupyter = json_of(&mut jupyter, "the jupyter_client script")?;

    let (md, summary) = render(&ours, &jupyter)?;
    eprintln!("kernel: {summary}");
    Ok(md)
}

fn json_of(cmd: &mut Command, what: &str) -> Result<Value> {
    let desc = util::describe(cmd);
    let out = util::capture(cmd, Duration::from_secs(600))
        .map_err(|e| format!("cannot run {what} (`{desc}`): {e}"))?;
    if !out.success() {
        return Err(format!(
            "{what} failed ({}); its stderr:\n{}",
            out.status
                .map_or_else(|| "timed out".to_string(), |s| s.to_string()),
            out.stderr.trim()
        ));
    }
    let line = out
        .stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    serde_json::from_str(line).map_err(|e| {
        format!(
            "{what} printed no JSON result ({e}); stdout:\n{}",
            out.stdout.trim()
        )
    })
}

fn num(value: &Value, path: &[&str]) -> Result<f64> {
    let mut at = value;
    for key in path {
        at = &at[*key];
    }
    at.as_f64()
        .ok_or_else(|| format!("the result has no number at `{}`", path.join(".")))
}

/// The section for our results and Jupyter's, and a one-line summary.
fn render(ours: &Value, jupyter: &Value) -> Result<(String, String)> {
    let cell_ours = num(ours, &["python", "cells", "mean_us"])?;
    let cell_theirs = num(jupyter, &["cells", "mean_us"])?;
    let p50_ours = num(ours, &["python", "cells", "p50_us"])?;
    let p50_theirs = num(jupyter, &["cells", "p50_us"])?;
    let cold_ours = num(ours, &["python", "cold_start_ms"])?;
    let cold_theirs = num(jupyter, &["cold_start_ms"])?;
    let bridge_p50 = num(ours, &["bridge", "p50_us"])?;
    let bridge_p90 = num(ours, &["bridge", "p90_us"])?;
    let js_cell = num(ours, &["javascript", "cells", "mean_us"])?;
    let js_p50 = num(ours, &["javascript", "cells", "p50_us"])?;
    let js_cold = num(ours, &["javascript", "cold_start_ms"])?;

    let cell_ratio = cell_ours / cell_theirs;
    let mut md = String::from(
        "## kernel — persistent interpreters vs Jupyter\n\n\
         `cc-kernel-bridge` (a driver on pipes, `cargo run --release -p cc-kernel-bridge \
         --example kernel_bench`) vs `jupyter_client` + `ipykernel` from the peers venv \
         (`execute_interactive`, which returns once the reply and the idle status are in), the \
         same Python, one run each. Trivial cells are `x += 1`, 1,000 in a row after 50 \
         warm-up cells; cold start is from nothing to the first result of `1 + 1` (median of \
         7 runs for ours, 3 for Jupyter); the `tool()` round trip is timed inside a Python \
         cell over 1,000 calls to an echo bridge.\n\n\
         | measure | ours | Jupyter | ours / Jupyter | goal | result |\n\
         |---|---|---|---|---|---|\n",
    );
    let _ = writeln!(
        md,
        "| Python cell, mean of 1,000 | {} | {} | **{cell_ratio:.3}×** | ≤ 0.25× | {} |",
        micros(cell_ours),
        micros(cell_theirs),
        verdict(cell_ratio <= 0.25)
    );
    let _ = writeln!(
        md,
        "| Python cell, p50 | {} | {} | {:.3}× | | |",
        micros(p50_ours),
        micros(p50_theirs),
        p50_ours / p50_theirs
    );
    let _ = writeln!(
        md,
        "| Python cold start to first result | {} | {} | {:.3}× | ≤ 300 ms | {} |",
        millis(cold_ours),
        millis(cold_theirs),
        cold_ours / cold_theirs,
        verdict(cold_ours <= 300.0)
    );
    let _ = writeln!(
        md,
        "| `tool()` round trip, p50 (p90) | {} ({}) | — | | ≤ 1 ms | {} |",
        micros(bridge_p50),
        micros(bridge_p90),
        verdict(bridge_p50 <= 1000.0)
    );
    let _ = writeln!(
        md,
        "| JavaScript cell, mean (p50) | {} ({}) | — | | | |",
        micros(js_cell),
        micros(js_p50)
    );
    let _ = writeln!(
        md,
        "| JavaScript cold start | {} | — | | | |",
        millis(js_cold)
    );
    let summary = format!(
        "cell {cell_ratio:.3}× Jupyter (goal ≤ 0.25×) {}; cold start {} (goal ≤ 300 ms) {}; \
         tool() p50 {} (goal ≤ 1 ms) {}",
        verdict(cell_ratio <= 0.25),
        millis(cold_ours),
        verdict(cold_ours <= 300.0),
        micros(bridge_p50),
        verdict(bridge_p50 <= 1000.0)
    );
    Ok((md, summary))
}

fn micros(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn millis(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table_with_ratios_and_verdicts() {
        let ours = json!({
            "python": {"cold_start_ms": 80.0, "cells": {"mean_us": 150.0, "p50_us": 50.0}},
            "bridge": {"p50_us": 45.0, "p90_us": 60.0},
            "javascript": {"cold_start_ms": 270.0, "cells": {"mean_us": 380.0, "p50_us": 115.0}},
        });
        let jupyter =
            json!({"cold_start_ms": 1050.0, "cells": {"mean_us": 6000.0, "p50_us": 5000.0}});
        let (md, summary) = render(&ours, &jupyter).unwrap();
        assert!(
            md.contains(
                "| Python cell, mean of 1,000 | 150 µs | 6.00 ms | **0.025×** | ≤ 0.25× | PASS |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| Python cold start to first result | 80 ms | 1.05 s | 0.076× | ≤ 300 ms | PASS |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| `tool()` round trip, p50 (p90) | 45 µs (60 µs) |"),
            "{md}"
        );
        assert!(
            summary.starts_with("cell 0.025× Jupyter (goal ≤ 0.25×) PASS"),
            "{summary}"
        );

        let slow = json!({
            "python": {"cold_start_ms": 400.0, "cells": {"mean_us": 3000.0, "p50_us": 50.0}},
            "bridge": {"p50_us": 1500.0, "p90_us": 60.0},
            "javascript": {"cold_start_ms": 270.0, "cells": {"mean_us": 380.0, "p50_us": 115.0}},
        });
        let (md, _) = render(&slow, &jupyter).unwrap();
        assert_eq!(md.matches("MISS").count(), 3, "{md}");
        let error = render(&json!({}), &jupyter).unwrap_err();
        assert!(error.contains("python.cells.mean_us"), "{error}");
    }
}
