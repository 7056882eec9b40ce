//! `debug` end to end against lldb-dap (a C program built with `gcc -g` here) and delve (a
//! Go module): breakpoint, stack, scopes, variables, evaluate, steps, continue, run to exit,
//! output, a second launch refused, terminate leaving no process, and the TTL.

#![allow(clippy::unwrap_used)]

use crate::debug_support;

use std::path::Path;

use debug_support::{at, call, call_err, config, registry, session_pids, stopped, Fixture};
use serde_json::{json, Value};

const C_PROGRAM: &str = r#"#include <stdio.h>

static int square(int n) {
    int result = n * n; /* in square */
    return result;
}

int main(void) {
    int total = 0;
    for (int i = 0; i < 4; i++) {
        total += square(i); /* loop */
        printf("step %d %d\n", i, total); /* after */
        fflush(stdout);
    }
    printf("done %d\n", total);
    return total - 11;
}
"#;

const GO_PROGRAM: &str = r#"package main

import (
	"fmt"
	"os"
)

func square(n int) int {
	result := n * n // in square
	return result
}

func main() {
	total := 0
	for i := 0; i < 4; i++ {
		total += square(i) // loop
		fmt.Println("step", i, total) // after
	}
	fmt.Println("done", total)
	os.Exit(total - 11)
}
"#;

/// The 1-based line holding `marker`.
fn line_of(source: &str, marker: &str) -> i64 {
    source.lines().position(|l| l.contains(marker)).unwrap() as i64 + 1
}

fn value_of(vars: &Value, name: &str) -> Option<String> {
    vars["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .map(|v| v["value"].as_str().unwrap().to_owned())
}

/// The shared flow: `source` at `file` with the loop/square/after markers; `program` is
/// what `launch` gets. Returns the result of `terminate`.
async fn exercise(fixture: &Fixture, source: &str, file: &str, program: &str) -> Value {
    let debug = &fixture.debug;
    let loop_line = line_of(source, "loop");
    let pending = call(
        debug,
        json!({"op": "breakpoints", "file": file, "lines": [loop_line]}),
    )
    .await;
    assert_eq!(pending["pending"], true);

    let started = call(debug, json!({"op": "launch", "program": program})).await;
    assert_eq!(at(&started), (file.to_owned(), loop_line), "{started:#}");
    assert_eq!(stopped(&started)["reason"], "breakpoint");

    let second = call_err(debug, json!({"op": "launch", "program": program})).await;
    assert_eq!(second.kind(), "session_active", "{second}");

    let stack = call(debug, json!({"op": "stack"})).await;
    let top = &stack["frames"][0];
    assert!(
        top["function"].as_str().unwrap().contains("main"),
        "{stack:#}"
    );
    assert_eq!(top["line"], loop_line);
    let vars = debug_support::locals(debug, &top["id"]).await;
    assert_eq!(value_of(&vars, "total").as_deref(), Some("0"), "{vars:#}");
    assert_eq!(value_of(&vars, "i").as_deref(), Some("0"), "{vars:#}");
    let evaluated = call(
        debug,
        json!({"op": "evaluate", "expression": "total + 100"}),
    )
    .await;
    assert_eq!(evaluated["result"], "100");

    let into = call(debug, json!({"op": "step_in"})).await;
    assert!(
        stopped(&into)["function"]
            .as_str()
            .unwrap()
            .contains("square"),
        "{into:#}"
    );
    // delve stops on the function's first line (its declaration), lldb on its body.
    let (into_file, into_line) = at(&into);
    assert_eq!(into_file, file);
    assert!(
        (line_of(source, "square(")..=line_of(source, "in square")).contains(&into_line),
        "{into:#}"
    );
    let out = call(debug, json!({"op": "step_out"})).await;
    assert!(
        stopped(&out)["function"].as_str().unwrap().contains("main"),
        "{out:#}"
    );
    // Back in main on the loop line (mid-statement) or past it, depending on the adapter.
    let mut over = call(debug, json!({"op": "step_over"})).await;
    if at(&over).1 == loop_line {
        over = call(debug, json!({"op": "step_over"})).await;
    }
    assert_eq!(
        at(&over),
        (file.to_owned(), line_of(source, "after")),
        "{over:#}"
    );

    let again = call(debug, json!({"op": "continue"})).await;
    assert_eq!(at(&again), (file.to_owned(), loop_line));
    assert_eq!(
        call(debug, json!({"op": "evaluate", "expression": "i"})).await["result"],
        "1"
    );
    call(
        debug,
        json!({"op": "breakpoints", "file": file, "lines": []}),
    )
    .await;

    let exited = call(debug, json!({"op": "continue"})).await;
    assert_eq!(exited["state"], "exited", "{exited:#}");
    assert_eq!(exited["exited"], json!({"code": 3}));
    let output = debug_support::output_after(debug, 45).await;
    assert_eq!(
        output["output"],
        "step 0 0\nstep 1 1\nstep 2 5\nstep 3 14\ndone 14\n"
    );

    let pids = session_pids(debug).await;
    let terminated = call(debug, json!({"op": "terminate"})).await;
    assert_eq!(terminated["terminated"], true, "{terminated:#}");
    assert_eq!(terminated["exited"], json!({"code": 3}), "{terminated:#}");
    debug_support::assert_gone(&pids).await;
    fixture.assert_no_leftovers().await;
    terminated
}

/// A short-lived session whose TTL passes: every process goes, and the next call says why.
async fn expire(root: &Path, program: &str, file: &str, line: i64) {
    let tag = debug_support::unique_tag("native-ttl");
    let debug = registry(root, config(120.0, 5.0), &tag);
    call(
        &debug,
        json!({"op": "breakpoints", "file": file, "lines": [line]}),
    )
    .await;
    let started = call(&debug, json!({"op": "launch", "program": program})).await;
    let pids = session_pids(&debug).await;
    assert_eq!(started["state"], "stopped", "{started:#}");
    debug_support::assert_gone(&pids).await;
    debug_support::assert_no_tagged(&tag).await;
    let expired = call_err(&debug, json!({"op": "continue"})).await;
    assert_eq!(expired.kind(), "session_expired", "{expired}");
    assert_eq!(
        call(&debug, json!({"op": "status"})).await["state"],
        "expired"
    );
}

#[tokio::test]
async fn lldb_debugs_a_c_program_built_here() {
    let Some(gcc) = cc_test_support::require_peer("gcc") else {
        return;
    };
    if !debug_support::lldb_ready() {
        return;
    }
    let fixture = Fixture::new(
        "lldb",
        &[
            ("CMakeLists.txt", "project(demo C)\n"),
            ("prog.c", C_PROGRAM),
        ],
        config(60.0, 1800.0),
    );
    let built = std::process::Command::new(gcc)
        .args(["-g", "-O0", "-o", "prog", "prog.c"])
        .current_dir(&fixture.root)
        .status()
        .unwrap();
    assert!(built.success());

    let adapters = call(&fixture.debug, json!({"op": "adapters"})).await;
    assert_eq!(adapters["adapters"][1]["name"], "lldb");
    assert_eq!(adapters["adapters"][1]["available"], true, "{adapters:#}");
    let terminated = exercise(&fixture, C_PROGRAM, "prog.c", "prog").await;
    // lldb-dap ends with SIGABRT after `disconnect`: reported, not an error.
    assert!(terminated["adapter_exit"].is_string(), "{terminated:#}");
    expire(&fixture.root, "prog", "prog.c", line_of(C_PROGRAM, "loop")).await;
}

#[tokio::test]
async fn delve_debugs_a_go_module() {
    if cc_test_support::require_peer("dlv").is_none()
        || cc_test_support::require_peer("go").is_none()
    {
        return;
    }
    let fixture = Fixture::new(
        "delve",
        &[
            ("go.mod", "module example.com/demo\n\ngo 1.19\n"),
            ("main.go", GO_PROGRAM),
        ],
        config(120.0, 1800.0),
    );
    let adapters = call(&fixture.debug, json!({"op": "adapters"})).await;
    assert_eq!(adapters["adapters"][2]["name"], "delve");
    assert_eq!(adapters["adapters"][2]["available"], true, "{adapters:#}");
    // The package directory (the workspace root) is the program.
    exercise(&fixture, GO_PROGRAM, "main.go", ".").await;
    // delve builds outside the checkout.
    assert!(!fixture.root.join("__debug_bin").exists());
    expire(
        &fixture.root,
        "main.go",
        "main.go",
        line_of(GO_PROGRAM, "loop"),
    )
    .await;
}
