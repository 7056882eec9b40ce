//! A huge `ast_grep` result (every match of a real project) through `cc-harness call` and
//! through `cc-harness mcp` with the official Python SDK client: both write the matches
//! straight from the tool's spool, and what arrives equals the whole `Value` the in-process
//! registry returns (which `cc-tools`' own test checks against `cc_structural::search`):
//! the same matches in the same order, the same total.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common;

/// The whole result of `args` from an in-process registry over `root`.
async fn in_process(root: &Path, args: &Value) -> Value {
    let registry = cc_tools::Resources {
        parsers: Some(Arc::new(cc_structural::Languages::builtin())),
        ..Default::default()
    }
    .build(
        cc_tools::Run::builder(root)
            .conversation("reference")
            .build(),
    );
    registry.call("ast_grep", args.clone()).await.unwrap().value
}

fn big_args() -> Value {
    json!({"pattern": "expect($$$A)", "language": "typescript", "path": ".", "max_results": 10_000_000})
}

#[tokio::test]
async fn call_prints_every_match_as_the_registry_returns_it() {
    let Some(zod) = cc_test_support::copy_project("zod") else {
        return;
    };
    let args = big_args();
    let expected = in_process(zod.path(), &args).await;
    let total = expected["total"].as_u64().unwrap();
    assert!(total > 3_000, "{total}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .args(["call", "ast_grep", &args.to_string(), "--root"])
        .arg(zod.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(printed == expected, "`call` printed another result");
    // Indented, each match on a line of its own.
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("{\n  \""), "{}", &text[..80]);
    let match_lines = text
        .lines()
        .filter(|l| l.starts_with("    {\"path\":"))
        .count();
    assert_eq!(match_lines as u64, total);
}

#[test]
fn mcp_sends_every_match_as_structured_content_and_a_bounded_text() {
    let Some(python) = common::python_with(&["mcp"]) else {
        return;
    };
    let Some(zod) = cc_test_support::copy_project("zod") else {
        return;
    };
    let args = big_args();
    let expected = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(in_process(zod.path(), &args));
    let total = expected["total"].as_u64().unwrap();
    let report = common::run_client_script(
        &python,
        "mcp_big_result.py",
        &[zod.path().as_os_str(), args.to_string().as_ref()],
    );
    assert_eq!(report["is_error"], false);
    assert!(
        report["structured"] == expected,
        "structuredContent differs from the registry's result"
    );
    let text = report["text"].as_str().unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("{total} matches; this text lists the first "))
            && first.ends_with(&format!(
                " of {total}, all {total} are in the JSON result (structuredContent)"
            )),
        "{first}"
    );
    assert!(text.len() < 80 << 10, "the text is {} bytes", text.len());
    assert!(text.contains(" more returned in the JSON result, not listed here"));
    assert!(
        !report["progress"].as_array().unwrap().is_empty(),
        "no progress notification: {report}"
    );
    assert_eq!(report["after_total"], total);
}
