//! Benchmark driver for `cargo xtask bench dap`: from the id a test runner printed for a
//! failing test to the wrong value, per language, on a copy of a real project (from
//! `cargo xtask peers`) with a bug planted, through the `debug` tool's registry, reading only
//! the text: the calls, the characters read, and the wall time.
//!
//! - pytest (requests): `launch` of the failing parametrized id; the stop shows both sides.
//! - go test (pflag): `breakpoints`, `launch` of `TestCount`, `step_over`; the local shows it.
//! - cargo test (semver): `launch` of `test_display`; the panic's stop shows both sides.
//!
//! Prints one JSON object per language; a missing project or adapter is reported as missing.
//!
//! `cargo run --release -p cc-tools --example debug_failing_tests`

use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cc_dap_client::{DebugConfig, DebugSession};
use cc_test_support::ProjectCopy;
use cc_tools::{AllowAll, Registry, Resources, Run, Surface, WorkspaceRoot};
use serde_json::{json, Value};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// One language's case: the project, the bug, the calls, and what the last text must show.
struct Case {
    language: &'static str,
    project: &'static str,
    /// (file, from, to).
    edit: (&'static str, &'static str, &'static str),
    calls: fn(&Path) -> Vec<Value>,
    shows: &'static str,
    env: fn(&Path) -> Vec<(String, String)>,
}

fn no_env(_: &Path) -> Vec<(String, String)> {
    Vec::new()
}

fn go_env(scratch: &Path) -> Vec<(String, String)> {
    vec![
        ("GOFLAGS".into(), "-mod=mod".into()),
        ("GOPROXY".into(), "off".into()),
        (
            "GOCACHE".into(),
            scratch.join("gocache").display().to_string(),
        ),
        (
            "GOPATH".into(),
            scratch.join("gopath").display().to_string(),
        ),
    ]
}

fn cargo_env(_: &Path) -> Vec<(String, String)> {
    vec![("CARGO_NET_OFFLINE".into(), "true".into())]
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            language: "python (pytest)",
            project: "requests",
            edit: (
                "src/requests/utils.py",
                "        return list(value.items())\n",
                "        pairs = [(key, key) for key in value]\n        return pairs\n",
            ),
            calls: |_| {
                vec![json!({"op": "launch",
                    "test": "tests/test_utils.py::TestToKeyValList::test_valid[value2-expected2]"})]
            },
            shows: "[('key', 'key')] == [('key', 'val')]",
            env: no_env,
        },
        Case {
            language: "go (go test)",
            project: "pflag",
            edit: (
                "count.go",
                "*i = countValue(*i + 1)",
                "*i = countValue(*i + 2)",
            ),
            calls: |root| {
                let source = std::fs::read_to_string(root.join("count.go")).unwrap_or_default();
                let line = source
                    .lines()
                    .position(|l| l.contains("*i + 2"))
                    .map_or(1, |i| i + 1);
                vec![
                    json!({"op": "breakpoints", "file": "count.go", "lines": [line]}),
                    json!({"op": "launch", "test": "TestCount"}),
                    json!({"op": "step_over"}),
                ]
            },
            shows: "countValue = *2",
            env: go_env,
        },
        Case {
            language: "rust (cargo test)",
            project: "semver",
            edit: (
                "src/parse.rs",
                "            Some(sum) => value = sum,",
                "            Some(sum) => value = sum * 2,",
            ),
            calls: |_| vec![json!({"op": "launch", "test": "test_display"})],
            shows: "left: \"2.4.6\"",
            env: cargo_env,
        },
    ]
}

fn registry(root: &Path, env: &[(String, String)]) -> Result<Registry> {
    let run = Run {
        conversation_id: "bench".into(),
        root: WorkspaceRoot::new(root)?,
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
    };
    let mut session = DebugSession::new(root, DebugConfig::default());
    for (key, value) in env {
        session = session.with_env(key.clone(), value.clone());
    }
    Ok(Resources {
        debug: Some(Arc::new(session)),
        ..Default::default()
    }
    .build(run))
}

/// A copy of the project with the bug planted; `None` when it is not installed.
fn planted(case: &Case) -> Result<Option<ProjectCopy>> {
    let Some(copy) = cc_test_support::copy_project(case.project) else {
        return Ok(None);
    };
    let (file, from, to) = case.edit;
    let path = copy.path().join(file);
    let source = std::fs::read_to_string(&path)?;
    if !source.contains(from) {
        return Err(format!("{file} of {} no longer holds {from:?}", case.project).into());
    }
    std::fs::write(&path, source.replacen(from, to, 1))?;
    if case.project == "requests" {
        // The peers' shared venv is the project's (pytest, debugpy, its dependencies).
        let project = cc_test_support::real_project("requests").ok_or("no requests")?;
        let venv = project
            .parent()
            .and_then(Path::parent)
            .ok_or("no peers folder")?
            .join("venv");
        std::os::unix::fs::symlink(venv, copy.path().join(".venv"))?;
    }
    Ok(Some(copy))
}

async fn measure(case: &Case, scratch: &Path) -> Result<Value> {
    let Some(copy) = planted(case)? else {
        return Ok(
            json!({"language": case.language, "missing": format!("project {}", case.project)}),
        );
    };
    let debug = registry(copy.path(), &(case.env)(scratch))?;
    // A first run warms the build caches (go's and cargo's), as an agent's earlier test run did.
    for args in (case.calls)(copy.path()) {
        let _ = debug.call("debug", args).await;
    }
    let _ = debug.call("debug", json!({"op": "terminate"})).await;
    let calls = (case.calls)(copy.path());
    let from_launch = calls.len() - calls.iter().position(|a| a["op"] == "launch").unwrap_or(0);
    let started = Instant::now();
    let mut texts = Vec::new();
    for args in calls {
        let output = debug
            .call("debug", args.clone())
            .await
            .map_err(|error| format!("{args}: {}", error.to_envelope()))?;
        texts.push(output.render_text());
    }
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let last = texts.last().cloned().unwrap_or_default();
    let _ = debug.call("debug", json!({"op": "terminate"})).await;
    debug.shutdown(std::time::Duration::from_secs(5)).await;
    if !last.contains(case.shows) {
        return Err(format!("{}: the wrong value was not read: {last}", case.language).into());
    }
    Ok(json!({
        "language": case.language,
        "project": case.project,
        "calls": texts.len(),
        "launch_to_value_calls": from_launch,
        "chars": texts.iter().map(|t| t.chars().count()).sum::<usize>(),
        "ms": ms,
    }))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let scratch = std::env::temp_dir().join("cc-bench-debug-failing-tests");
    std::fs::create_dir_all(&scratch)?;
    for case in cases() {
        let row = match measure(&case, &scratch).await {
            Ok(row) => row,
            Err(error) => json!({"language": case.language, "error": error.to_string()}),
        };
        println!("{row}");
    }
    Ok(())
}
