//! The `debug` tool without an adapter: its schema, its argument checks, path confinement,
//! answers without a session, and its visibility by surface.

#![allow(clippy::unwrap_used)]

use crate::debug_support;

use std::sync::Arc;

use cc_dap_client::{DebugConfig, DebugSession};
use cc_tools::{Resources, Run, Surface};
use debug_support::{call, call_err, config, registry, workspace};
use serde_json::json;

#[test]
fn the_schema_is_exec_tier_and_serialized() {
    let (_dir, root) = workspace();
    let run = Run::builder(&root).conversation("schema").build();
    let debugger = Arc::new(DebugSession::new(&root, DebugConfig::default()));
    let registry = Resources {
        debug: Some(debugger),
        ..Default::default()
    }
    .build(run);
    let schemas = registry.schemas(Surface::Full);
    let debug = schemas.iter().find(|s| s.name == "debug").unwrap();
    insta::assert_json_snapshot!("debug_tool_schema", debug);
    assert!(registry
        .schemas(Surface::Plan)
        .iter()
        .all(|s| s.name != "debug"));
    assert!(registry
        .schemas(Surface::ReadonlySubagent)
        .iter()
        .all(|s| s.name != "debug"));
}

#[tokio::test]
async fn arguments_are_checked_per_op() {
    let (_dir, root) = workspace();
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    let debug = registry(&root, config(5.0, 60.0), "args");
    let cases = [
        (
            json!({"op": "launch"}),
            "invalid_arguments",
            "`op: launch` needs exactly one of `program`",
        ),
        (
            json!({"op": "launch", "program": "a.py", "test": "a.py"}),
            "invalid_arguments",
            "got program and test",
        ),
        (
            json!({"op": "launch", "module": "not a module"}),
            "invalid_arguments",
            "is not a Python module name",
        ),
        (
            json!({"op": "launch", "test": "-k 'open"}),
            "invalid_arguments",
            "unbalanced quote",
        ),
        (
            json!({"op": "launch", "test": "parse_it"}),
            "invalid_arguments",
            "cannot tell which test runner",
        ),
        (
            json!({"op": "locals", "scope": "globals"}),
            "no_session",
            "no debug session",
        ),
        (
            json!({"op": "locals", "reference": 3}),
            "invalid_arguments",
            "`op: locals` does not take `reference`; it takes: frame_id, scope",
        ),
        (
            json!({"op": "continue", "file": "a.py"}),
            "invalid_arguments",
            "`op: continue` does not take `file`; it takes: thread_id",
        ),
        (
            json!({"op": "breakpoints", "file": "a.py"}),
            "invalid_arguments",
            "needs `lines`",
        ),
        (
            json!({"op": "fly"}),
            "invalid_arguments",
            "unknown variant `fly`",
        ),
        (
            json!({"op": "status", "colour": 1}),
            "invalid_arguments",
            "unknown field `colour`",
        ),
        (
            json!({"op": "breakpoints", "file": "a.py", "lines": [0]}),
            "invalid_arguments",
            "lines are 1-based",
        ),
        (
            json!({"op": "launch", "program": "../outside.py"}),
            "outside_root",
            "outside the workspace root",
        ),
        (
            json!({"op": "launch", "program": "missing.py"}),
            "not_found",
            "does not exist",
        ),
        (
            json!({"op": "launch", "program": "a.py", "adapter": "gdb"}),
            "unknown_adapter",
            "debugpy, lldb, delve, dart",
        ),
        (
            json!({"op": "stack"}),
            "no_session",
            "start one with `launch`",
        ),
        (
            json!({"op": "evaluate", "expression": "x"}),
            "no_session",
            "no debug session",
        ),
    ];
    for (args, kind, message) in cases {
        let error = call_err(&debug, args.clone()).await;
        assert_eq!(error.kind(), kind, "{args}: {error}");
        assert!(error.message().contains(message), "{args}: {error}");
    }
}

#[tokio::test]
async fn answers_without_a_session() {
    let (_dir, root) = workspace();
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    let debug = registry(&root, config(5.0, 60.0), "no-session");
    // Breakpoints before any launch: kept, and the answer says they wait for `launch`.
    let set = debug
        .call(
            "debug",
            json!({"op": "breakpoints", "file": "./a.py", "lines": [1, 1, 3]}),
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("pending_breakpoints", set.value);
    assert_eq!(
        set.text.as_deref(),
        Some(
            "a.py: breakpoints at 1, 3\nnote: no debug session yet: these breakpoints are sent \
             when `launch` (or `attach`) starts one"
        )
    );
    let status = debug.call("debug", json!({"op": "status"})).await.unwrap();
    insta::assert_json_snapshot!("status_without_session", status.value);
    assert_eq!(
        status.text.as_deref(),
        Some("no session\nbreakpoints in a.py: 1, 3 (sent at `launch`)")
    );
    let terminated = call(&debug, json!({"op": "terminate"})).await;
    assert_eq!(
        terminated,
        json!({"terminated": false, "killed_leftovers": 0, "state": "none", "note": "no debug session was running"})
    );
    let cleared = debug
        .call(
            "debug",
            json!({"op": "breakpoints", "file": "a.py", "lines": []}),
        )
        .await
        .unwrap();
    assert_eq!(
        cleared.value,
        json!({"file": "a.py", "breakpoints": [], "pending": true, "state": "none"})
    );
    assert_eq!(cleared.text.as_deref(), Some("a.py: no breakpoints"));
    let status = debug.call("debug", json!({"op": "status"})).await.unwrap();
    assert_eq!(status.value["breakpoints"], json!([]));
    assert_eq!(status.text.as_deref(), Some("no session"));
    // `output` answers in every state, before any launch too.
    let output = debug.call("debug", json!({"op": "output"})).await.unwrap();
    assert_eq!(output.value["state"], "none");
    assert_eq!(output.value["output"], "");
    assert_eq!(
        output.text.as_deref(),
        Some("(no output)\nno session\nnote: no program has run in this conversation yet")
    );
}
