//! Measures the kernels for `cargo xtask bench kernel` and prints one JSON object:
//! cold start to first result, per-cell latency of 1,000 trivial cells (`x += 1`), and the
//! round trip of `tool()` from inside a cell (an echo bridge, timed in the cell).
//!
//! `cargo run --release -p cc-kernel-bridge --example kernel_bench [-- --cells N]`
//! Interpreters come from PATH (`python3`, `node`), as in a checkout without a virtualenv.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cc_kernel_bridge::{
    Bridge, BridgeError, CellRequest, KernelConfig, KernelFactory, KernelSession, Language,
};
use serde_json::{json, Value};

struct Echo;

#[async_trait]
impl Bridge for Echo {
    async fn call(&self, _name: &str, args: Value) -> Result<Value, BridgeError> {
        Ok(args)
    }
}

type Failure = Box<dyn std::error::Error>;

async fn run(
    session: &KernelSession,
    language: Language,
    code: &str,
) -> Result<Option<String>, Failure> {
    let outcome = session
        .run(
            CellRequest {
                language,
                code,
                reset: false,
            },
            Arc::new(Echo),
        )
        .await?;
    if let Some(error) = outcome.error {
        return Err(format!("cell `{code}` failed: {}", error.traceback).into());
    }
    Ok(outcome.result)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted.get(index).copied().unwrap_or(f64::NAN)
}

async fn cold_starts(
    factory: &KernelFactory,
    language: Language,
    runs: usize,
) -> Result<Vec<f64>, Failure> {
    let dir = std::env::temp_dir();
    let mut times = Vec::new();
    for _ in 0..runs {
        let session = factory.session(&dir);
        let started = Instant::now();
        let result = run(&session, language, "1 + 1").await?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
        if result.as_deref() != Some("2") {
            return Err(format!("unexpected first result {result:?}").into());
        }
        session.shutdown().await;
    }
    Ok(times)
}

async fn cells(
    factory: &KernelFactory,
    language: Language,
    count: usize,
) -> Result<Value, Failure> {
    let session = factory.session(std::env::temp_dir());
    let (init, step, read) = match language {
        Language::Python => ("x = 0", "x += 1", "x"),
        Language::Javascript => ("let x = 0", "x += 1", "x"),
    };
    run(&session, language, init).await?;
    for _ in 0..50 {
        run(&session, language, step).await?;
    }
    let mut each = Vec::with_capacity(count);
    let started = Instant::now();
    for _ in 0..count {
        let cell = Instant::now();
        run(&session, language, step).await?;
        each.push(cell.elapsed().as_secs_f64() * 1e6);
    }
    let total = started.elapsed();
    let value = run(&session, language, read).await?;
    if value.as_deref() != Some((50 + count).to_string().as_str()) {
        return Err(format!("x ended at {value:?}").into());
    }
    session.shutdown().await;
    each.sort_by(f64::total_cmp);
    Ok(json!({
        "count": count,
        "total_ms": total.as_secs_f64() * 1e3,
        "mean_us": total.as_secs_f64() * 1e6 / count as f64,
        "p50_us": percentile(&each, 0.5),
        "p90_us": percentile(&each, 0.9),
        "p99_us": percentile(&each, 0.99),
    }))
}

async fn bridge(factory: &KernelFactory, calls: usize) -> Result<Value, Failure> {
    let session = factory.session(std::env::temp_dir());
    let code = format!(
        "import time\nts = []\nfor i in range({calls}):\n    t = time.perf_counter_ns()\n    r = tool('echo', {{'i': i}})\n    ts.append(time.perf_counter_ns() - t)\n    assert r == {{'i': i}}\nts.sort()\n[ts[len(ts) // 2], ts[len(ts) * 9 // 10], ts[len(ts) * 99 // 100]]"
    );
    run(&session, Language::Python, "tool('echo', {})").await?;
    let result = run(&session, Language::Python, &code)
        .await?
        .unwrap_or_default();
    session.shutdown().await;
    let ns: Vec<f64> = serde_json::from_str(&result)?;
    Ok(json!({
        "calls": calls,
        "p50_us": ns.first().copied().unwrap_or(f64::NAN) / 1e3,
        "p90_us": ns.get(1).copied().unwrap_or(f64::NAN) / 1e3,
        "p99_us": ns.get(2).copied().unwrap_or(f64::NAN) / 1e3,
    }))
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut count = 1000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--cells" {
            count = args
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or("--cells takes a number")?;
        }
    }
    let factory = KernelFactory::new(KernelConfig {
        startup_timeout: Duration::from_secs(60),
        ..KernelConfig::default()
    });
    let python_cold = cold_starts(&factory, Language::Python, 7).await?;
    let python_cells = cells(&factory, Language::Python, count).await?;
    let bridge = bridge(&factory, count).await?;
    let js_cold = cold_starts(&factory, Language::Javascript, 3).await?;
    let js_cells = cells(&factory, Language::Javascript, count).await?;
    let report = json!({
        "python": {
            "cold_start_ms": median(python_cold.clone()),
            "cold_start_runs_ms": python_cold,
            "cells": python_cells,
        },
        "bridge": bridge,
        "javascript": {
            "cold_start_ms": median(js_cold),
            "cells": js_cells,
        },
    });
    println!("{report}");
    Ok(())
}
