//! Benchmark driver for `cargo xtask bench dap`: what the session layer adds to a debug
//! adapter's own speed. Per adapter (debugpy, lldb-dap), the same program is driven twice:
//!
//! - *raw*: a bare [`Client`] doing the launch sequence by hand, then `next` → `stopped` event
//!   → `stackTrace` (one frame) → `scopes` → `variables` (its locals) per step;
//! - *ours*: a [`DebugSession`] doing `launch` then `act(StepOver)`, which does the same requests
//!   (a stop result carries the top frame's locals) plus its bookkeeping (state, position,
//!   output, process tracking, handles, the source lines around the stop).
//!
//! Prints one JSON object per adapter on stdout; a missing adapter is reported as missing.
//!
//! `cargo run --release -p cc-dap-client --example dap_bench [ROUNDS]`

use std::error::Error;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use cc_dap_client::detect::{self, Environment};
use cc_dap_client::protocol::{Event, InitializeArguments};
use cc_dap_client::{launch_arguments, Action, AdapterKind, Client, DebugConfig, DebugSession};
use serde_json::{json, Value};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const T: Duration = Duration::from_secs(60);

const PYTHON: &str = "x = 0\nwhile True:\n    x += 1\n    x -= 1\n";
const C: &str = "int main(void) {\n    volatile int x = 0;\n    while (1) {\n        x += 1;\n        x -= 1;\n    }\n}\n";

/// The loop body line both programs stop on first.
const PY_LINE: i64 = 3;
const C_LINE: i64 = 4;

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(samples: &[f64], p: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or(f64::NAN)
}

async fn next_event(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
    name: &str,
) -> Result<Event> {
    loop {
        let event = tokio::time::timeout(T, events.recv())
            .await?
            .ok_or("the adapter closed the connection")?;
        if event.event == name {
            return Ok(event);
        }
    }
}

/// What both drivers run: `program` in `root`, first stopping at `source:line`.
struct Target {
    root: PathBuf,
    program: PathBuf,
    source: PathBuf,
    line: i64,
}

/// The bare client: (launch to first stop, step latencies).
async fn raw(
    kind: AdapterKind,
    command: &[String],
    target: &Target,
    rounds: usize,
) -> Result<(f64, Vec<f64>)> {
    let Target {
        root,
        program,
        source,
        line,
    } = target;
    let mut cmd = tokio::process::Command::new(&command[0]);
    cmd.args(&command[1..])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cc_process::spawn_group(cmd)?;
    let (stdin, stdout) = (
        child.take_stdin().ok_or("stdin")?,
        child.take_stdout().ok_or("stdout")?,
    );
    let (client, mut events) = Client::start(stdout, stdin);
    let started = Instant::now();
    client
        .request_raw(
            "initialize",
            Some(serde_json::to_value(InitializeArguments::new(
                kind.adapter_id(),
            ))?),
            T,
        )
        .await?;
    let args = launch_arguments(kind, program, &[], root, None);
    let mut launch = client.send("launch", Some(args)).await?;
    next_event(&mut events, "initialized").await?;
    let breakpoints = json!({"source": {"path": source}, "breakpoints": [{"line": line}]});
    client
        .request_raw("setBreakpoints", Some(breakpoints), T)
        .await?;
    client.request_raw("configurationDone", None, T).await?;
    launch.response_within(T).await?;
    let stopped = next_event(&mut events, "stopped").await?;
    let launch_ms = millis(started.elapsed());
    let thread = stopped
        .body
        .as_ref()
        .and_then(|b| b["threadId"].as_i64())
        .ok_or("no thread")?;
    let clear = json!({"source": {"path": source}, "breakpoints": []});
    client.request_raw("setBreakpoints", Some(clear), T).await?;
    let mut steps = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        client
            .request_raw("next", Some(json!({"threadId": thread})), T)
            .await?;
        next_event(&mut events, "stopped").await?;
        let trace = json!({"threadId": thread, "startFrame": 0, "levels": 1});
        let trace = client.request_raw("stackTrace", Some(trace), T).await?;
        // What a stop result carries: the top frame's locals.
        let frame = trace
            .body
            .as_ref()
            .and_then(|b| b["stackFrames"][0]["id"].as_i64());
        let scopes = json!({"frameId": frame.ok_or("no frame")?});
        let scopes = client.request_raw("scopes", Some(scopes), T).await?;
        let locals = scopes
            .body
            .as_ref()
            .and_then(|b| b["scopes"][0]["variablesReference"].as_i64())
            .ok_or("no scope")?;
        let variables = json!({"variablesReference": locals});
        client.request_raw("variables", Some(variables), T).await?;
        steps.push(millis(t.elapsed()));
    }
    let _ = client
        .request_raw(
            "disconnect",
            Some(json!({"terminateDebuggee": true})),
            Duration::from_secs(5),
        )
        .await;
    client.close_input().await;
    child.wait_or_kill(Duration::from_secs(5)).await?;
    Ok((launch_ms, steps))
}

/// The debugger: (launch to first stop, step latencies).
async fn ours(target: &Target, rounds: usize) -> Result<(f64, Vec<f64>)> {
    let Target {
        root,
        program,
        source,
        line,
    } = target;
    let debug = DebugSession::new(root, DebugConfig::default());
    debug.set_breakpoints(source, &[*line]).await?;
    let started = Instant::now();
    let launched = debug.launch(program, &[], None).await?;
    let launch_ms = millis(started.elapsed());
    if launched.position.stopped.is_none() {
        return Err(format!("the program did not stop: {launched:?}").into());
    }
    debug.set_breakpoints(source, &[]).await?;
    let mut steps = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let stepped = debug.act(Action::StepOver, None).await?;
        steps.push(millis(t.elapsed()));
        if stepped.position.stopped.is_none() {
            return Err(format!("a step did not stop: {stepped:?}").into());
        }
    }
    debug.terminate().await;
    Ok((launch_ms, steps))
}

async fn bench(kind: AdapterKind, rounds: usize) -> Result<Value> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let env = Environment::new(&root);
    let resolved = match detect::resolve(kind, &env, &DebugConfig::default()).await {
        Ok(resolved) => resolved,
        Err(reason) => return Ok(json!({"adapter": kind.name(), "missing": reason})),
    };
    let (program, source, line) = match kind {
        AdapterKind::Debugpy => {
            std::fs::write(root.join("spin.py"), PYTHON)?;
            (root.join("spin.py"), root.join("spin.py"), PY_LINE)
        }
        _ => {
            std::fs::write(root.join("spin.c"), C)?;
            let built = std::process::Command::new("gcc")
                .args(["-g", "-O0", "-o", "spin", "spin.c"])
                .current_dir(&root)
                .status()?;
            if !built.success() {
                return Ok(
                    json!({"adapter": kind.name(), "missing": "gcc could not build the program"}),
                );
            }
            (root.join("spin"), root.join("spin.c"), C_LINE)
        }
    };
    let target = Target {
        root,
        program,
        source,
        line,
    };
    // Warm-up (imports, page cache), then the measured runs.
    raw(kind, &resolved.command, &target, 3).await?;
    let (raw_launch, raw_steps) = raw(kind, &resolved.command, &target, rounds).await?;
    let (our_launch, our_steps) = ours(&target, rounds).await?;
    let raw_p50 = percentile(&raw_steps, 0.5);
    let our_p50 = percentile(&our_steps, 0.5);
    Ok(json!({
        "adapter": kind.name(),
        "rounds": rounds,
        "raw_launch_ms": raw_launch,
        "ours_launch_ms": our_launch,
        "raw_step_p50_ms": raw_p50,
        "raw_step_p90_ms": percentile(&raw_steps, 0.9),
        "ours_step_p50_ms": our_p50,
        "ours_step_p90_ms": percentile(&our_steps, 0.9),
        "step_ratio": our_p50 / raw_p50,
    }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|r| r.parse())
        .transpose()?
        .unwrap_or(50);
    for kind in [AdapterKind::Debugpy, AdapterKind::Lldb] {
        let row = match bench(kind, rounds).await {
            Ok(row) => row,
            Err(error) => json!({"adapter": kind.name(), "error": error.to_string()}),
        };
        println!("{row}");
    }
    Ok(())
}
