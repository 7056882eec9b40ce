//! Debugging a failing test of a real project the way an agent does, reading only the text:
//! requests (pytest, from its PyPI sdist), pflag (go test, Debian's Go module) and semver
//! (cargo test, from crates.io), each copied, one test broken by an edit to the code under
//! test, launched with `test`, stopped inside the code under test, and the wrong value read.
//! A build that fails (go, cargo) comes back with the compiler's text, which `output` and
//! `status` keep. No process outlives a test.

#![allow(clippy::unwrap_used)]

use crate::debug_support;

use std::path::{Path, PathBuf};

use cc_test_support::{copy_project, ProjectCopy};
use cc_tools::Registry;
use debug_support::{
    config, line_starting, number_after, registry_with_env, text, text_err, unique_tag,
};
use serde_json::json;

/// A copy of a real project with a `debug` tool on it.
struct Project {
    copy: ProjectCopy,
    tag: String,
    debug: Registry,
}

impl Project {
    /// `name` copied, with `edit` (file, from, to) applied; `None` when the project is not
    /// installed (a failure under CI).
    fn new(name: &str, edit: (&str, &str, &str), env: &[(&str, &str)]) -> Option<Project> {
        let copy = copy_project(name)?;
        let (file, from, to) = edit;
        let path = copy.path().join(file);
        let source = std::fs::read_to_string(&path).unwrap();
        assert!(source.contains(from), "{file} no longer holds {from:?}");
        std::fs::write(&path, source.replacen(from, to, 1)).unwrap();
        let tag = unique_tag(name);
        let debug = registry_with_env(copy.path(), config(120.0, 1800.0), &tag, env);
        Some(Project { copy, tag, debug })
    }

    fn root(&self) -> &Path {
        self.copy.path()
    }

    /// The 1-based line of `file` holding `marker`.
    fn line_of(&self, file: &str, marker: &str) -> i64 {
        let source = std::fs::read_to_string(self.root().join(file)).unwrap();
        source.lines().position(|l| l.contains(marker)).unwrap() as i64 + 1
    }

    async fn finish(&self) {
        let ended = text(&self.debug, json!({"op": "terminate"})).await;
        assert!(
            ended.starts_with("terminated") || ended.starts_with("nothing to terminate"),
            "{ended}"
        );
        debug_support::assert_no_tagged(&self.tag).await;
    }
}

/// The peers' shared venv (pytest, debugpy, requests' dependencies).
fn shared_venv() -> PathBuf {
    let project = cc_test_support::real_project("requests").unwrap();
    project.parent().unwrap().parent().unwrap().join("venv")
}

/// A stop line: `stopped at FILE:LINE in …`.
fn stop_line(text: &str) -> &str {
    line_starting(text, "stopped at ").unwrap_or_else(|| panic!("no stop in:\n{text}"))
}

/// The locals line for `name` (`  name: type = value`).
fn local<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no local `{name}` in:\n{text}"))
}

const REQUESTS_EDIT: (&str, &str, &str) = (
    "src/requests/utils.py",
    "        return list(value.items())\n",
    "        pairs = [(key, key) for key in value]\n        return pairs\n",
);

fn requests() -> Option<Project> {
    debugpy_ready()?;
    let project = Project::new("requests", REQUESTS_EDIT, &[])?;
    // The checkout's venv is what debugpy and pytest run with.
    std::os::unix::fs::symlink(shared_venv(), project.root().join(".venv")).unwrap();
    Some(project)
}

fn debugpy_ready() -> Option<()> {
    debug_support::debugpy_python().map(drop)
}

#[tokio::test]
async fn a_failing_pytest_of_requests_is_debugged_to_the_wrong_value() {
    let Some(project) = requests() else {
        return;
    };
    let debug = &project.debug;
    let file = "src/requests/utils.py";
    let line = project.line_of(file, "return pairs");
    text(
        debug,
        json!({"op": "breakpoints", "file": file, "lines": [line]}),
    )
    .await;

    let test = "tests/test_utils.py::TestToKeyValList::test_valid";
    let launched = text(debug, json!({"op": "launch", "test": test})).await;
    assert!(
        launched.starts_with(&format!("debugpy: pytest {test}\n")),
        "{launched}"
    );
    assert!(
        stop_line(&launched).starts_with(&format!("stopped at {file}:{line} in to_key_val_list")),
        "{launched}"
    );
    // The wrong value, in the stop itself.
    assert!(
        local(&launched, "pairs").contains("= [('key', 'key')]"),
        "{launched}"
    );
    assert!(
        local(&launched, "value").contains("= {'key': 'val'}"),
        "{launched}"
    );
    assert!(
        launched.contains("src layout: src is first on PYTHONPATH"),
        "{launched}"
    );
    // Which Python ran the tests, and why: the project's.
    assert!(
        launched.contains("note: python: .venv/bin/python (the project's .venv)"),
        "{launched}"
    );

    // The assertion fails in the test: pytest catches it, yet the debugger stops there.
    text(
        debug,
        json!({"op": "breakpoints", "file": file, "lines": []}),
    )
    .await;
    let failed = text(debug, json!({"op": "continue"})).await;
    let stop = stop_line(&failed);
    assert!(
        stop.starts_with("stopped at tests/test_utils.py:"),
        "{failed}"
    );
    assert!(stop.contains("(exception, thread "), "{failed}");
    assert!(failed.contains("AssertionError"), "{failed}");
    // pytest's own SystemExit at the end is not a stop.
    let exited = text(debug, json!({"op": "continue"})).await;
    assert!(exited.starts_with("exited with code 1"), "{exited}");
    let output = text(debug, json!({"op": "output"})).await;
    assert!(output.contains("1 failed, 3 passed"), "{output}");
    project.finish().await;
}

/// requests with a `.venv` of its own inside the checkout (a console script must be inside
/// the workspace): its `python` runs the shared venv's, its `pytest` is the shared venv's
/// console script.
fn requests_with_a_venv_inside() -> Option<Project> {
    debugpy_ready()?;
    let project = Project::new("requests", REQUESTS_EDIT, &[])?;
    let bin = project.root().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let shared = shared_venv().join("bin");
    std::fs::copy(shared.join("pytest"), bin.join("pytest")).unwrap();
    // What makes the folder an environment (`python -m venv` writes it).
    std::fs::copy(
        shared_venv().join("pyvenv.cfg"),
        project.root().join(".venv/pyvenv.cfg"),
    )
    .unwrap();
    let python = bin.join("python");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\nexec {} \"$@\"\n",
            shared.join("python").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    Some(project)
}

#[tokio::test]
async fn pytest_runs_as_a_module_and_as_the_venvs_console_script() {
    let Some(project) = requests_with_a_venv_inside() else {
        return;
    };
    let debug = &project.debug;
    let test = "tests/test_utils.py::TestToKeyValList::test_valid";
    for launch in [
        json!({"op": "launch", "module": "pytest", "args": [test]}),
        json!({"op": "launch", "program": ".venv/bin/pytest", "args": [test]}),
    ] {
        let launched = text(debug, launch.clone()).await;
        let stop = stop_line(&launched);
        assert!(
            stop.starts_with("stopped at tests/test_utils.py:") && stop.contains("(exception,"),
            "{launch}: {launched}"
        );
        let exited = text(debug, json!({"op": "continue"})).await;
        assert!(
            exited.starts_with("exited with code 1"),
            "{launch}: {exited}"
        );
        project.finish().await;
    }
}

/// click as it is (an edit that changes nothing), with the peers' venv as its `.venv`.
fn click() -> Option<Project> {
    debugpy_ready()?;
    let signature = "def make_default_short_help(help: str, max_length: int = 45) -> str:";
    let project = Project::new("click", ("src/click/utils.py", signature, signature), &[])?;
    std::os::unix::fs::symlink(shared_venv(), project.root().join(".venv")).unwrap();
    Some(project)
}

/// Issue 28, item 1: a pytest id exactly as pytest prints it, blanks inside its parameters
/// (click 8.1.8: `test_make_default_short_help[no-wrap mark-truncate]`), runs that one test:
/// it stops in it with that case's values, and it passes.
#[tokio::test]
async fn a_pytest_id_with_blanks_runs_that_test() {
    let Some(project) = click() else {
        return;
    };
    let debug = &project.debug;
    let file = "tests/test_utils.py";
    let line = project.line_of(
        file,
        "out = click.utils.make_default_short_help(value, max_length)",
    );
    text(
        debug,
        json!({"op": "breakpoints", "file": file, "lines": [line]}),
    )
    .await;
    let test = "tests/test_utils.py::test_make_default_short_help[no-wrap mark-truncate]";
    let launched = text(debug, json!({"op": "launch", "test": test})).await;
    assert!(
        stop_line(&launched).starts_with(&format!(
            "stopped at {file}:{line} in test_make_default_short_help"
        )),
        "{launched}"
    );
    assert!(
        local(&launched, "max_length").contains("= 10"),
        "{launched}"
    );
    assert!(
        local(&launched, "expect").contains("'123 567...'"),
        "{launched}"
    );
    let exited = text(debug, json!({"op": "continue"})).await;
    assert!(exited.starts_with("exited with code 0"), "{exited}");
    let output = text(debug, json!({"op": "output"})).await;
    assert!(output.contains("1 passed"), "{output}");
    project.finish().await;
}

/// Go builds offline, with their caches in cargo's temporary folder for tests (shared by
/// the Go tests and kept between runs: a debug build recompiles the standard library with
/// `-N -l`, which is what makes a first run slow).
fn go_env() -> Vec<(String, String)> {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("debug-projects-go");
    vec![
        ("GOFLAGS".into(), "-mod=mod".into()),
        ("GOPROXY".into(), "off".into()),
        (
            "GOCACHE".into(),
            scratch.join("cache").display().to_string(),
        ),
        ("GOPATH".into(), scratch.join("path").display().to_string()),
    ]
}

fn pflag(edit: (&str, &str, &str)) -> Option<Project> {
    cc_test_support::require_peer("dlv")?;
    cc_test_support::require_peer("go")?;
    let env = go_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Project::new("pflag", edit, &env)
}

#[tokio::test]
async fn a_failing_go_test_of_pflag_is_debugged_to_the_wrong_value() {
    let Some(project) = pflag((
        "count.go",
        "*i = countValue(*i + 1)",
        "*i = countValue(*i + 2)",
    )) else {
        return;
    };
    let debug = &project.debug;
    let line = project.line_of("count.go", "*i + 2");
    text(
        debug,
        json!({"op": "breakpoints", "file": "count.go", "lines": [line]}),
    )
    .await;
    let launched = text(debug, json!({"op": "launch", "test": "./ -run TestCount"})).await;
    assert!(
        launched.starts_with("delve: go test . -test.run TestCount\n"),
        "{launched}"
    );
    assert!(
        stop_line(&launched).starts_with(&format!(
            "stopped at count.go:{line} in github.com/spf13/pflag.(*countValue).Set"
        )),
        "{launched}"
    );
    assert!(local(&launched, "i").contains("= *0"), "{launched}");
    let stepped = text(debug, json!({"op": "step_over"})).await;
    assert!(
        local(&stepped, "i").contains("= *2"),
        "one -v counted twice: {stepped}"
    );
    let evaluated = text(debug, json!({"op": "evaluate", "expression": "*i"})).await;
    assert!(evaluated.ends_with("= 2"), "{evaluated}");

    text(
        debug,
        json!({"op": "breakpoints", "file": "count.go", "lines": []}),
    )
    .await;
    let exited = text(debug, json!({"op": "continue"})).await;
    assert!(exited.starts_with("exited with code 1"), "{exited}");
    assert!(exited.contains("expected 1, got 2"), "{exited}");
    project.finish().await;
}

#[tokio::test]
async fn a_go_build_failure_comes_back_with_the_compilers_text() {
    let Some(project) = pflag((
        "count.go",
        "*i = countValue(*i + 1)",
        "*i = countValue(*i + missing)",
    )) else {
        return;
    };
    let debug = &project.debug;
    let error = text_err(debug, json!({"op": "launch", "test": "-run TestCount"})).await;
    assert!(error.contains(r#""kind":"build_failed""#), "{error}");
    assert!(error.contains("count.go:16:"), "{error}");
    assert!(error.contains("undefined: missing"), "{error}");
    assert!(!error.contains("debug console"), "{error}");
    // Still there afterwards.
    let output = text(debug, json!({"op": "output"})).await;
    assert!(output.contains("undefined: missing"), "{output}");
    let status = text(debug, json!({"op": "status"})).await;
    assert!(
        status.starts_with("no session: the last launch failed"),
        "{status}"
    );
    project.finish().await;
}

fn semver(edit: (&str, &str, &str)) -> Option<Project> {
    cc_test_support::require_peer("cargo")?;
    if !debug_support::lldb_ready() {
        return None;
    }
    Project::new("semver", edit, &[("CARGO_NET_OFFLINE", "true")])
}

#[tokio::test]
async fn a_failing_cargo_test_of_semver_is_debugged_to_the_wrong_value() {
    let Some(project) = semver((
        "src/parse.rs",
        "            Some(sum) => value = sum,",
        "            Some(sum) => value = sum * 2,",
    )) else {
        return;
    };
    let debug = &project.debug;
    let file = "src/parse.rs";
    // After the digits of one number are read.
    let line = project.line_of(file, "    if len > 0 {");
    text(
        debug,
        json!({"op": "breakpoints", "file": file, "lines": [line]}),
    )
    .await;
    let launched = text(debug, json!({"op": "launch", "test": "test_display"})).await;
    assert!(
        launched.starts_with("lldb: cargo test test_display (target/debug/deps/test_version-"),
        "{launched}"
    );
    assert!(
        stop_line(&launched).starts_with(&format!(
            "stopped at {file}:{line} in semver::parse::numeric_identifier"
        )),
        "{launched}"
    );
    // "1.2.3": the major version, one digit read, is 2.
    assert!(local(&launched, "len").ends_with("= 1"), "{launched}");
    assert!(local(&launched, "value").ends_with("= 2"), "{launched}");
    assert!(
        local(&launched, "input").contains("\"1.2.3\""),
        "{launched}"
    );

    // Without the breakpoint the test's panic stops where it is raised, showing the test's
    // frame with both sides of the comparison.
    text(
        debug,
        json!({"op": "breakpoints", "file": file, "lines": []}),
    )
    .await;
    let panicked = text(debug, json!({"op": "continue"})).await;
    assert!(stop_line(&panicked).contains("rust_panic"), "{panicked}");
    let nearest = line_starting(&panicked, "nearest frame in the workspace: frame ").unwrap();
    assert!(
        nearest.contains("assert_to_string at tests/util/mod.rs:"),
        "{panicked}"
    );
    assert!(
        local(&panicked, "left_val").contains("\"2.4.6\""),
        "{panicked}"
    );
    assert!(
        local(&panicked, "expected").contains("\"1.2.3\""),
        "{panicked}"
    );
    let frame = number_after(nearest, "frame ").unwrap();
    let left = text(
        debug,
        json!({"op": "evaluate", "expression": "value.major", "frame_id": frame}),
    )
    .await;
    assert!(left.ends_with("= 2"), "{left}");

    let exited = text(debug, json!({"op": "continue"})).await;
    assert!(exited.starts_with("exited with code 101"), "{exited}");
    let output = text(debug, json!({"op": "output"})).await;
    assert!(output.contains("left: \"2.4.6\""), "{output}");
    project.finish().await;
}

#[tokio::test]
async fn a_cargo_build_failure_comes_back_with_the_compilers_text() {
    let Some(project) = semver((
        "src/parse.rs",
        "            Some(sum) => value = sum,",
        "            Some(sum) => value = \"sum\",",
    )) else {
        return;
    };
    let debug = &project.debug;
    let error = text_err(debug, json!({"op": "launch", "test": "test_display"})).await;
    assert!(error.contains(r#""kind":"build_failed""#), "{error}");
    assert!(error.contains("mismatched types"), "{error}");
    assert!(error.contains("src/parse.rs:"), "{error}");
    let output = text(debug, json!({"op": "output"})).await;
    assert!(output.contains("mismatched types"), "{output}");
    assert!(
        output.contains("the last launch (test test_display) failed"),
        "{output}"
    );
    project.finish().await;
}

/// The texts of one debugging session, for its budget: what the agent read, in characters.
#[derive(Default)]
struct Transcript {
    texts: Vec<String>,
}

impl Transcript {
    async fn read(&mut self, debug: &Registry, args: serde_json::Value) -> String {
        let text = text(debug, args).await;
        self.texts.push(text.clone());
        text
    }

    fn calls(&self) -> usize {
        self.texts.len()
    }

    fn chars(&self) -> usize {
        self.texts.iter().map(|t| t.chars().count()).sum()
    }

    /// Shown with `--no-capture`: what an agent would have read.
    fn show(&self, name: &str) {
        println!(
            "== {name}: {} calls, {} characters\n{}",
            self.calls(),
            self.chars(),
            self.texts.join("\n---\n")
        );
    }
}

/// The stop of a result's text (from `stopped at` to the output or the notes), with what
/// differs per run replaced, for a snapshot.
fn stop_snapshot(text: &str) -> String {
    let stop: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("stopped at "))
        .take_while(|l| *l != "output:" && !l.starts_with("note: "))
        .collect();
    let redacted = debug_support::redact_threads(&stop.join("\n"));
    // The panicking thread's id in the hook's message: `thread 'name' (1234)`.
    let mut out = String::new();
    let mut rest = redacted.as_str();
    while let Some(at) = rest.find("' (") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("[id]");
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// The frame lines of a `stack` text (folded runs included).
fn frame_lines(stack: &str) -> Vec<&str> {
    stack
        .lines()
        .filter(|l| l.starts_with("  frame ") || l.starts_with("  … "))
        .collect()
}

/// Issue 28: from the id pytest prints for a failing test to the wrong value in one call,
/// acting on text only: the stop is where the assertion fails, its message carries both
/// sides and `stack` does not repeat it (debugpy lists the checkout's frames only, so there
/// is nothing to fold); `terminate` says the program was ended while stopped (not debugpy's
/// own exit code).
#[tokio::test]
async fn a_failing_pytest_id_reaches_the_wrong_value_in_one_call() {
    let Some(project) = requests() else {
        return;
    };
    let debug = &project.debug;
    let mut agent = Transcript::default();
    let test = "tests/test_utils.py::TestToKeyValList::test_valid[value2-expected2]";
    let launched = agent
        .read(debug, json!({"op": "launch", "test": test}))
        .await;
    let stop = stop_line(&launched);
    assert!(
        stop.starts_with("stopped at tests/test_utils.py:195 in test_valid (exception, "),
        "{launched}"
    );
    assert!(
        stop.contains("[('key', 'key')] == [('key', 'val')]"),
        "the wrong value is in the stop: {launched}"
    );
    assert!(
        launched.contains("stops on exceptions: uncaught, userUnhandled (offered: "),
        "{launched}"
    );
    insta::assert_snapshot!("pytest_failing_id_stop", stop_snapshot(&launched));
    let stack = agent.read(debug, json!({"op": "stack"})).await;
    let frames = frame_lines(&stack);
    assert!(
        frames[0].contains("test_valid at tests/test_utils.py:195"),
        "{stack}"
    );
    assert!(frames.len() <= 3, "{stack}");
    assert!(
        !stack.contains("Full diff"),
        "the assertion's explanation is not repeated: {stack}"
    );
    assert!(
        !launched.contains("@py_format"),
        "pytest's copies of the message are left out of the locals: {launched}"
    );
    agent.show("pytest");
    assert!(
        agent.calls() <= 3 && agent.chars() <= 3000,
        "{} calls, {} characters:\n{}",
        agent.calls(),
        agent.chars(),
        agent.texts.join("\n---\n")
    );
    let ended = text(debug, json!({"op": "terminate"})).await;
    assert_eq!(
        ended,
        "terminated the debugpy session: the program, stopped at tests/test_utils.py:195, was \
         ended",
        "not debugpy's own exit code"
    );
    project.finish().await;
}

/// Issue 28, items 2 and 3, on click: a bare test name that one test function has runs that
/// test (the note says which); a name that matches none is an error listing the nearest;
/// click's own `Exit(0)` for `--help`, which click catches, is not a stop.
#[tokio::test]
async fn pytest_names_as_agents_give_them() {
    let Some(project) = click() else {
        return;
    };
    let debug = &project.debug;
    let launched = text(
        debug,
        json!({"op": "launch", "test": "test_auto_shorthelp"}),
    )
    .await;
    assert!(
        launched.starts_with("debugpy: pytest tests/test_commands.py::test_auto_shorthelp\n"),
        "{launched}"
    );
    assert!(
        launched.contains("exited with code 0"),
        "no stop at click's own Exit: {launched}"
    );
    assert!(
        launched.contains(
            "`test_auto_shorthelp` is the test tests/test_commands.py::test_auto_shorthelp"
        ),
        "{launched}"
    );

    for (test, says) in [
        ("test_auto_shorthlp", "pytest names a test by its file"),
        (
            "tests/test_commands.py::test_auto_shorthlp",
            "defines no `test_auto_shorthlp`",
        ),
    ] {
        let error = text_err(debug, json!({"op": "launch", "test": test})).await;
        assert!(error.contains(r#""kind":"test_not_found""#), "{error}");
        assert!(error.contains(says), "{error}");
        assert!(
            error.contains("tests/test_commands.py::test_auto_shorthelp"),
            "the nearest name is listed: {error}"
        );
    }
    project.finish().await;
}

/// Issue 28, item 2 for go test: `-run` matching no test of the package is an error naming
/// the nearest; and item 7: the stack of a stop folds the testing and runtime frames.
#[tokio::test]
async fn go_test_names_and_a_folded_stack() {
    let Some(project) = pflag((
        "count.go",
        "*i = countValue(*i + 1)",
        "*i = countValue(*i + 2)",
    )) else {
        return;
    };
    let debug = &project.debug;
    let error = text_err(debug, json!({"op": "launch", "test": "./ -run TestCuont"})).await;
    assert!(error.contains(r#""kind":"test_not_found""#), "{error}");
    assert!(error.contains("TestCount"), "{error}");

    let mut agent = Transcript::default();
    let line = project.line_of("count.go", "*i + 2");
    agent
        .read(
            debug,
            json!({"op": "breakpoints", "file": "count.go", "lines": [line]}),
        )
        .await;
    let launched = agent
        .read(debug, json!({"op": "launch", "test": "TestCount"}))
        .await;
    assert!(local(&launched, "i").contains("= *0"), "{launched}");
    assert!(
        launched.contains("stops on unrecovered panics (delve's own"),
        "{launched}"
    );
    let stepped = agent.read(debug, json!({"op": "step_over"})).await;
    assert!(local(&stepped, "i").contains("= *2"), "{stepped}");
    insta::assert_snapshot!("go_test_step_stop", stop_snapshot(&stepped));
    let stack = agent.read(debug, json!({"op": "stack"})).await;
    assert!(
        frame_lines(&stack)
            .iter()
            .any(|l| l.starts_with("  … ") && l.contains("testing")),
        "{stack}"
    );
    agent.show("go test");
    assert!(
        agent.chars() <= 3000,
        "{} characters:\n{}",
        agent.chars(),
        agent.texts.join("\n---\n")
    );
    project.finish().await;
}

/// Issue 28, items 4, 5 and 7 for cargo test: launched by its name, the failing test stops
/// at its panic, called a panic, with the message (both sides of the comparison) in the
/// stop; `stack` folds std and libtest; after the exit, `terminate` tells the test's exit
/// code, not lldb's SIGABRT. A name that matches no test lists the nearest.
#[tokio::test]
async fn a_failing_cargo_test_stops_at_its_panic_with_the_message() {
    let Some(project) = semver((
        "src/parse.rs",
        "            Some(sum) => value = sum,",
        "            Some(sum) => value = sum * 2,",
    )) else {
        return;
    };
    let debug = &project.debug;
    let error = text_err(debug, json!({"op": "launch", "test": "test_dispaly"})).await;
    assert!(error.contains(r#""kind":"test_not_found""#), "{error}");
    assert!(error.contains("test_display"), "{error}");

    let mut agent = Transcript::default();
    let launched = agent
        .read(debug, json!({"op": "launch", "test": "test_display"}))
        .await;
    let stop = stop_line(&launched);
    assert!(stop.contains("(panic, thread "), "{launched}");
    assert!(
        stop.contains("panicked at tests/test_version.rs:"),
        "{launched}"
    );
    assert!(launched.contains("left: \"2.4.6\""), "{launched}");
    assert!(launched.contains("right: \"1.2.3\""), "{launched}");
    assert!(
        !launched.contains("<error: Unable to determine byte size.>"),
        "{launched}"
    );
    insta::assert_snapshot!("cargo_test_panic_stop", stop_snapshot(&launched));
    let stack = agent.read(debug, json!({"op": "stack"})).await;
    let frames = frame_lines(&stack);
    assert!(
        frames
            .iter()
            .any(|l| l.starts_with("  … ") && l.contains("libtest")),
        "{stack}"
    );
    assert!(frames.len() <= 8, "{stack}");
    agent.show("cargo test");
    assert!(
        agent.chars() <= 3000,
        "{} characters:\n{}",
        agent.chars(),
        agent.texts.join("\n---\n")
    );
    let exited = text(debug, json!({"op": "continue"})).await;
    assert!(exited.starts_with("exited with code 101"), "{exited}");
    let ended = text(debug, json!({"op": "terminate"})).await;
    assert_eq!(
        ended,
        "terminated the lldb session: the program had exited with code 101"
    );
    project.finish().await;
}
