//! Benchmark driver for `cargo xtask bench dap`: the round trips an agent that reads only the
//! text needs for "stop at a breakpoint and read a local", and for "step and read it again",
//! per adapter, through the `debug` tool's registry.
//!
//! - *before*: stop results without the frame's source and locals (`stop_locals = 0`, no
//!   source lines: what the tool returned before they were added): the agent calls
//!   `breakpoints`, `launch`, `stack` (the frame id), `scopes` (the Locals reference),
//!   `variables`; and per step `step_over`, `stack`, `scopes`, `variables`.
//! - *after*: the defaults: `breakpoints`, `launch` (the stop shows the locals); per step,
//!   `step_over`.
//!
//! Every path checks that the local's line really is in the text it read. Prints one JSON
//! object per adapter; a missing adapter is reported as missing.
//!
//! `cargo run --release -p cc-tools --example debug_round_trips [REPEATS] [STEPS]`

use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cc_dap_client::{DebugConfig, DebugSession};
use cc_tools::{AllowAll, Registry, Resources, Run, Surface, WorkspaceRoot};
use serde_json::{json, Value};

// The text-reading helpers of the `debug_*` tests (`number_after`).
#[path = "../tests/it/debug_support/mod.rs"]
mod debug_support;

use debug_support::number_after;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const PYTHON: &str = "def main():\n    total = 0\n    for i in range(1000000):\n        total += i  # loop\n    return total\n\n\nmain()\n";
const C: &str = "int main(void) {\n    long total = 0;\n    for (long i = 0; i < 1000000; i++) {\n        total += i; /* loop */\n    }\n    return (int)(total & 1);\n}\n";
const GO: &str = "package main\n\nfunc main() {\n\ttotal := 0\n\tfor i := 0; i < 1000000; i++ {\n\t\ttotal += i // loop\n\t}\n\tprintln(total)\n}\n";

/// The line holding `loop`.
fn loop_line(source: &str) -> i64 {
    source
        .lines()
        .position(|l| l.contains("loop"))
        .map_or(1, |i| i as i64 + 1)
}

fn registry(root: &Path, config: DebugConfig) -> Result<Registry> {
    let run = Run {
        conversation_id: "bench".into(),
        root: WorkspaceRoot::new(root)?,
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
    };
    Ok(Resources {
        debug: Some(Arc::new(DebugSession::new(root, config))),
        ..Default::default()
    }
    .build(run))
}

/// One call; its text, and one more call counted.
async fn call(debug: &Registry, calls: &mut usize, args: Value) -> Result<String> {
    *calls += 1;
    let output = debug
        .call("debug", args.clone())
        .await
        .map_err(|error| format!("{args}: {}", error.to_envelope()))?;
    Ok(output.render_text())
}

/// Whether `text` shows the local `total` with a value.
fn shows_total(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("total:") && line.contains(" = ")
    })
}

/// `stack` → `scopes` → `variables`: the text-only way to a frame's locals.
async fn read_locals(debug: &Registry, calls: &mut usize) -> Result<String> {
    let stack = call(debug, calls, json!({"op": "stack"})).await?;
    let frame = stack
        .lines()
        .find(|l| l.trim_start().starts_with("frame "))
        .and_then(|l| number_after(l, "frame "))
        .ok_or_else(|| format!("no frame in {stack}"))?;
    let scopes = call(debug, calls, json!({"op": "scopes", "frame_id": frame})).await?;
    let locals = scopes
        .lines()
        .find(|l| l.trim_start().starts_with("Local"))
        .and_then(|l| number_after(l, "ref "))
        .ok_or_else(|| format!("no Locals in {scopes}"))?;
    call(
        debug,
        calls,
        json!({"op": "variables", "reference": locals}),
    )
    .await
}

/// (calls, ms) to the first local, and per step (calls, ms samples).
struct Trip {
    first_calls: usize,
    first_ms: f64,
    step_calls: usize,
    step_ms: Vec<f64>,
}

async fn drive(
    root: &Path,
    file: &str,
    line: i64,
    program: &str,
    before: bool,
    steps: usize,
) -> Result<Trip> {
    let mut config = DebugConfig::default();
    if before {
        config.stop_locals = Some(0);
        config.stop_source_before = Some(0);
        config.stop_source_after = Some(0);
    }
    let debug = registry(root, config)?;
    let mut calls = 0;
    let started = Instant::now();
    call(
        &debug,
        &mut calls,
        json!({"op": "breakpoints", "file": file, "lines": [line]}),
    )
    .await?;
    let launched = call(
        &debug,
        &mut calls,
        json!({"op": "launch", "program": program}),
    )
    .await?;
    let seen = if before {
        read_locals(&debug, &mut calls).await?
    } else {
        launched
    };
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    if !shows_total(&seen) {
        return Err(format!("the local was not read: {seen}").into());
    }
    let first_calls = calls;
    let mut step_ms = Vec::with_capacity(steps);
    let mut step_calls = 0;
    for _ in 0..steps {
        let mut calls = 0;
        let t = Instant::now();
        let stepped = call(&debug, &mut calls, json!({"op": "step_over"})).await?;
        let seen = if before {
            read_locals(&debug, &mut calls).await?
        } else {
            stepped
        };
        step_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        if !shows_total(&seen) {
            return Err(format!("the local was not read after a step: {seen}").into());
        }
        step_calls = calls;
    }
    call(&debug, &mut 0, json!({"op": "terminate"})).await?;
    Ok(Trip {
        first_calls,
        first_ms,
        step_calls,
        step_ms,
    })
}

/// This process's peak resident set (the registry and the debugger; adapters are processes
/// of their own), in MiB, from `/proc/self/status`.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

async fn bench(adapter: &str, repeats: usize, steps: usize) -> Result<Value> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let (file, source, program) = match adapter {
        "debugpy" => ("loop.py", PYTHON, "loop.py"),
        "lldb" => ("loop.c", C, "loop"),
        _ => ("main.go", GO, "."),
    };
    std::fs::write(root.join(file), source)?;
    match adapter {
        "lldb" => {
            let built = std::process::Command::new("gcc")
                .args(["-g", "-O0", "-o", "loop", "loop.c"])
                .current_dir(&root)
                .status();
            if !built.is_ok_and(|s| s.success()) {
                return Ok(
                    json!({"adapter": adapter, "missing": "gcc could not build the program"}),
                );
            }
        }
        "delve" => std::fs::write(root.join("go.mod"), "module bench\n\ngo 1.19\n")?,
        _ => {}
    }
    let status = registry(&root, DebugConfig::default())?
        .call("debug", json!({"op": "adapters"}))
        .await
        .map_err(|e| e.to_string())?
        .value;
    let entry = status["adapters"]
        .as_array()
        .and_then(|all| all.iter().find(|a| a["name"] == adapter))
        .cloned()
        .unwrap_or(Value::Null);
    if entry["launchable"] != true {
        return Ok(json!({"adapter": adapter, "missing": entry["reason"]}));
    }
    let line = loop_line(source);
    // Warm-up (imports, page cache, the Go build cache).
    drive(&root, file, line, program, false, 1).await?;
    let mut rows = [Vec::new(), Vec::new()];
    for _ in 0..repeats {
        for (slot, before) in [(0, true), (1, false)] {
            rows[slot].push(drive(&root, file, line, program, before, steps).await?);
        }
    }
    let summary = |paths: &[Trip]| {
        let mut first: Vec<f64> = paths.iter().map(|p| p.first_ms).collect();
        let mut step: Vec<f64> = paths.iter().flat_map(|p| p.step_ms.clone()).collect();
        (
            paths.first().map_or(0, |p| p.first_calls),
            median(&mut first),
            paths.first().map_or(0, |p| p.step_calls),
            median(&mut step),
        )
    };
    let (bc, bms, bsc, bsms) = summary(&rows[0]);
    let (ac, ams, asc, asms) = summary(&rows[1]);
    Ok(json!({
        "adapter": adapter,
        "repeats": repeats,
        "steps": steps,
        "before_calls": bc, "before_ms": bms,
        "after_calls": ac, "after_ms": ams,
        "before_step_calls": bsc, "before_step_ms": bsms,
        "after_step_calls": asc, "after_step_ms": asms,
        "peak_rss_mib": peak_rss_mib(),
    }))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let repeats: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(3);
    let steps: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(10);
    for adapter in ["debugpy", "lldb", "delve"] {
        let row = match bench(adapter, repeats, steps).await {
            Ok(row) => row,
            Err(error) => json!({"adapter": adapter, "error": error.to_string()}),
        };
        println!("{row}");
    }
    Ok(())
}
