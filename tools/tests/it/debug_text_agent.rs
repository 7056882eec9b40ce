//! A scripted agent that reads only the text an MCP client shows the model (never the JSON):
//! on each adapter it goes breakpoint → launch → stack → scopes → variables → evaluate →
//! locals, taking every frame id, reference and thread id it passes from the text before.
//! Then it steps, and every handle from before the step is refused as `stale_reference`.
//! The stop rendering (source around the line, locals with references) is snapshotted per
//! adapter.

#![allow(clippy::unwrap_used)]

use crate::debug_support;

use debug_support::{config, line_starting, number_after, redact_threads, text, text_err, Fixture};
use serde_json::json;

const PYTHON: &str = r#"import threading

ready = threading.Event()


def worker():
    ready.wait()


def total_of(items):
    total = 0
    for item in items:
        total += item  # loop
    return total


def main():
    helper = threading.Thread(target=worker, daemon=True)
    helper.start()
    values = [3, 4, 5]
    result = total_of(values)
    ready.set()
    print("result", result)


main()
"#;

const C: &str = r#"#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
    pthread_mutex_lock(&gate);
    pthread_mutex_unlock(&gate);
    return arg;
}

static int total_of(const int *items, int count) {
    int total = 0;
    for (int i = 0; i < count; i++) {
        total += items[i]; /* loop */
    }
    return total;
}

int main(void) {
    pthread_t helper;
    pthread_mutex_lock(&gate);
    pthread_create(&helper, NULL, worker, NULL);
    int values[3] = {3, 4, 5};
    int result = total_of(values, 3);
    pthread_mutex_unlock(&gate);
    pthread_join(helper, NULL);
    printf("result %d\n", result);
    return 0;
}
"#;

const GO: &str = r#"package main

import "fmt"

func totalOf(items []int) int {
	total := 0
	for _, item := range items {
		total += item // loop
	}
	return total
}

func main() {
	values := []int{3, 4, 5}
	fmt.Println("result", totalOf(values))
}
"#;

fn loop_line(source: &str) -> i64 {
    source.lines().position(|l| l.contains("loop")).unwrap() as i64 + 1
}

/// What differs per adapter: where the program is and what `launch` gets.
struct Case<'a> {
    name: &'a str,
    file: &'a str,
    source: &'a str,
    program: &'a str,
    /// Whether the adapter has a Globals scope (delve lists locals only).
    globals: bool,
}

/// The agent. Returns the text of the first stop and of `locals`, for the snapshot.
async fn agent(fixture: &Fixture, case: &Case<'_>) -> String {
    let debug = &fixture.debug;
    let line = loop_line(case.source);
    let set = text(
        debug,
        json!({"op": "breakpoints", "file": case.file, "lines": [line]}),
    )
    .await;
    assert!(
        set.starts_with(&format!("{}: breakpoints at {line}", case.file)),
        "{set}"
    );

    // The stop says where, which thread, which frame, and shows the locals with references.
    let launched = text(debug, json!({"op": "launch", "program": case.program})).await;
    let stop = line_starting(&launched, "stopped at ")
        .unwrap_or_else(|| panic!("no stop in:\n{launched}"));
    assert!(
        stop.starts_with(&format!("stopped at {}:{line} in ", case.file)),
        "{launched}"
    );
    let thread = number_after(stop, "thread ").unwrap();
    let frame = number_after(stop, "frame ").unwrap();
    assert!(
        launched
            .lines()
            .any(|l| l.starts_with('>') && l.contains(&format!(" {line} |"))),
        "the stop line is marked:\n{launched}"
    );
    assert!(
        number_after(line_starting(&launched, "locals (").unwrap(), "ref ").is_some(),
        "{launched}"
    );
    let total_line = line_starting(&launched, "total").unwrap();
    assert!(total_line.ends_with("= 0"), "{launched}");

    // stack: the frame ids, the first being the stop's.
    let stack = text(debug, json!({"op": "stack", "thread_id": thread})).await;
    let first = line_starting(&stack, "frame ").unwrap();
    assert_eq!(number_after(first, "frame "), Some(frame), "{stack}");
    assert!(first.contains(&format!("{}:{line}", case.file)), "{stack}");
    let caller = stack
        .lines()
        .filter(|l| l.trim_start().starts_with("frame "))
        .nth(1)
        .and_then(|l| number_after(l, "frame "))
        .unwrap();

    // scopes: each scope's name and reference.
    let scopes = text(debug, json!({"op": "scopes", "frame_id": frame})).await;
    let locals_ref = number_after(line_starting(&scopes, "Locals: ref ").unwrap(), "ref ").unwrap();

    // variables: each child's reference when it has children.
    let locals = text(debug, json!({"op": "variables", "reference": locals_ref})).await;
    let items = line_starting(&locals, "items").unwrap_or_else(|| panic!("{locals}"));
    let items_ref = number_after(items, "[ref ").unwrap_or_else(|| panic!("{locals}"));
    let children = text(debug, json!({"op": "variables", "reference": items_ref})).await;
    assert!(
        children.starts_with(&format!("children of ref {items_ref}")),
        "{children}"
    );
    assert!(
        children.contains("= 3") || children.contains("= 4"),
        "{children}"
    );

    // evaluate in a frame, with a reference when the value has children.
    let total = text(
        debug,
        json!({"op": "evaluate", "expression": "total", "frame_id": frame}),
    )
    .await;
    assert!(total.ends_with("= 0"), "{total}");
    let in_caller = text(
        debug,
        json!({"op": "evaluate", "expression": "values", "frame_id": caller}),
    )
    .await;
    let values_ref = number_after(&in_caller, "[ref ").unwrap_or_else(|| panic!("{in_caller}"));
    let values = text(debug, json!({"op": "variables", "reference": values_ref})).await;
    assert!(values.contains("= 5"), "{values}");

    // locals in one call, and the threads with their ids.
    let one_call = text(debug, json!({"op": "locals"})).await;
    assert!(
        one_call.starts_with(&format!("Locals of frame {frame}, ref ")),
        "{one_call}"
    );
    let globals = debug
        .call("debug", json!({"op": "locals", "scope": "globals"}))
        .await;
    match (case.globals, globals) {
        (true, Ok(globals)) => assert!(
            globals
                .render_text()
                .starts_with(&format!("Globals of frame {frame}, ref ")),
            "{}",
            globals.render_text()
        ),
        (false, Err(error)) => assert!(
            error.message().contains(&format!(
                "frame {frame} has no globals scope; its scopes: Locals"
            )),
            "{error}"
        ),
        (expected, got) => panic!("globals expected: {expected}, got {got:?}"),
    }
    let threads = text(debug, json!({"op": "threads"})).await;
    let other = threads
        .lines()
        .filter(|l| l.trim_start().starts_with("thread "))
        .filter_map(|l| number_after(l, "thread "))
        .find(|id| *id != thread)
        .unwrap_or_else(|| panic!("a second thread: {threads}"));

    // The program runs on: every handle from before is refused, never answered.
    let stepped = text(debug, json!({"op": "step_over", "thread_id": thread})).await;
    assert!(stepped.starts_with("stopped at "), "{stepped}");
    for (args, handle) in [
        (
            json!({"op": "scopes", "frame_id": frame}),
            format!("frame {frame}"),
        ),
        (
            json!({"op": "locals", "frame_id": frame}),
            format!("frame {frame}"),
        ),
        (
            json!({"op": "evaluate", "expression": "total", "frame_id": frame}),
            format!("frame {frame}"),
        ),
        (
            json!({"op": "variables", "reference": items_ref}),
            format!("reference {items_ref}"),
        ),
        (
            json!({"op": "variables", "reference": locals_ref}),
            format!("reference {locals_ref}"),
        ),
        (
            json!({"op": "stack", "thread_id": other}),
            format!("thread {other}"),
        ),
    ] {
        let refused = text_err(debug, args.clone()).await;
        assert!(
            refused.contains(r#""kind":"stale_reference""#),
            "{args}: {refused}"
        );
        assert!(
            refused.contains(&format!(
                "{handle} is from before the program last resumed: the program has run since"
            )),
            "{args}: {refused}"
        );
    }
    // Fresh handles work again.
    let again = text(debug, json!({"op": "stack"})).await;
    let fresh = number_after(line_starting(&again, "frame ").unwrap(), "frame ").unwrap();
    assert!(fresh > frame, "{again}");
    text(debug, json!({"op": "scopes", "frame_id": fresh})).await;

    text(debug, json!({"op": "terminate"})).await;
    fixture.assert_no_leftovers().await;
    let stop_text = launched
        .lines()
        .take_while(|l| !l.starts_with("output:") && !l.starts_with("note:"))
        .collect::<Vec<_>>()
        .join("\n");
    redact_threads(&format!("{stop_text}\n--- locals ---\n{one_call}"))
}

#[tokio::test]
async fn a_text_only_agent_debugs_python() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let fixture = Fixture::new(
        "text-agent-python",
        &[
            ("pyproject.toml", "[project]\nname = \"demo\"\n"),
            ("total.py", PYTHON),
        ],
        config(60.0, 1800.0),
    );
    let case = Case {
        name: "debugpy",
        file: "total.py",
        source: PYTHON,
        program: "total.py",
        globals: true,
    };
    let seen = agent(&fixture, &case).await;
    insta::assert_snapshot!(format!("stop_{}", case.name), seen);
}

#[tokio::test]
async fn a_text_only_agent_debugs_c_under_lldb() {
    let Some(gcc) = cc_test_support::require_peer("gcc") else {
        return;
    };
    if !debug_support::lldb_ready() {
        return;
    }
    let fixture = Fixture::new("text-agent-lldb", &[("total.c", C)], config(60.0, 1800.0));
    let built = std::process::Command::new(gcc)
        .args(["-g", "-O0", "-pthread", "-o", "total", "total.c"])
        .current_dir(&fixture.root)
        .status()
        .unwrap();
    assert!(built.success());
    let case = Case {
        name: "lldb",
        file: "total.c",
        source: C,
        program: "total",
        globals: true,
    };
    let seen = agent(&fixture, &case).await;
    insta::assert_snapshot!(format!("stop_{}", case.name), seen);
}

#[tokio::test]
async fn a_text_only_agent_debugs_go_under_delve() {
    if cc_test_support::require_peer("dlv").is_none()
        || cc_test_support::require_peer("go").is_none()
    {
        return;
    }
    let fixture = Fixture::new(
        "text-agent-delve",
        &[
            ("go.mod", "module example.com/total\n\ngo 1.19\n"),
            ("main.go", GO),
        ],
        config(120.0, 1800.0),
    );
    let case = Case {
        name: "delve",
        file: "main.go",
        source: GO,
        program: ".",
        globals: false,
    };
    let seen = agent(&fixture, &case).await;
    insta::assert_snapshot!(format!("stop_{}", case.name), seen);
}
