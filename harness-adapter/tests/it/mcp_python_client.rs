//! `cc-harness mcp` driven by the official Python MCP SDK client (a real peer).

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::path::Path;

use serde_json::Value;

use crate::common;

fn run_client(root: &Path) -> Option<Value> {
    let python = common::python_with(&["mcp"])?;
    Some(common::run_client_script(
        &python,
        "mcp_client.py",
        &[root.as_os_str()],
    ))
}

#[test]
fn official_python_client_sees_surfaces_and_refusals() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("hello.txt"), "hello\n").unwrap();
    // A Python project: its language server answers `lsp`.
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"app\"\n").unwrap();
    std::fs::write(
        root.join("app.py"),
        "def f(x):\n    y = x * 2\n    return y\n\nprint(f(3))\n",
    )
    .unwrap();
    let Some(report) = run_client(&root) else {
        return;
    };

    let full = &report["full"];
    assert_eq!(full["server"], "cc-harness");
    let tools = full["tools"].as_object().unwrap();
    for name in ["read", "write", "edit"] {
        assert!(tools.contains_key(name), "full surface lists {name}");
    }
    assert_eq!(full["tools"]["read"]["read_only"], true);
    assert_eq!(full["tools"]["write"]["read_only"], false);
    assert_eq!(full["tools"]["write"]["destructive"], true);
    assert_eq!(full["read"]["is_error"], false);
    assert_eq!(full["read"]["structured"]["content"], "hello\n");
    assert_eq!(full["write_outside"]["is_error"], true);
    assert_eq!(
        full["write_outside"]["structured"]["error"]["kind"],
        "outside_root"
    );
    assert!(!parent.path().join("escape.txt").exists());
    assert_eq!(full["write_inside"]["is_error"], false);
    assert_eq!(
        full["missing_file"]["structured"]["error"]["kind"],
        "not_found"
    );

    // `debug` publishes the schema of its typed reports, and the SDK checked these results
    // against it (a result that did not conform raises in the client).
    assert_eq!(full["tools"]["debug"]["has_output_schema"], true);
    // Every tool publishes one now.
    for (name, tool) in tools {
        assert_eq!(tool["has_output_schema"], true, "{name}");
    }
    assert_eq!(full["debug_adapters"]["is_error"], false);
    assert!(full["debug_adapters"]["structured"]["adapters"].is_array());
    assert_eq!(full["debug_status"]["structured"]["state"], "none");
    let session = full["debug_session"].as_array().unwrap();
    for (step, state) in [(1, "stopped"), (4, "stopped"), (5, "exited"), (6, "none")] {
        assert_eq!(session[step]["is_error"], false, "{:#}", session[step]);
        assert_eq!(
            session[step]["structured"]["state"], state,
            "{:#}",
            session[step]
        );
    }
    assert_eq!(session[1]["structured"]["stopped"]["line"], 2);

    // `eval` too (when python3 can run the kernel, as everywhere the SDK runs).
    assert_eq!(full["tools"]["eval"]["has_output_schema"], true);
    let eval = full["eval"].as_array().unwrap();
    assert_eq!(eval[0]["structured"]["stdout"], "hi\n", "{:#}", eval[0]);
    assert_eq!(eval[0]["structured"]["result"], "42", "{:#}", eval[0]);
    assert!(eval[1]["structured"]["display"].is_array(), "{:#}", eval[1]);
    assert_eq!(
        eval[2]["structured"]["error"]["ename"], "ZeroDivisionError",
        "{:#}",
        eval[2]
    );
    assert_eq!(eval[2]["structured"]["state"], "kept", "{:#}", eval[2]);

    // The structural tools too.
    let structural = full["structural"].as_array().unwrap();
    assert_eq!(
        structural[0]["structured"]["total"], 1,
        "{:#}",
        structural[0]
    );
    assert_eq!(
        structural[0]["structured"]["matches"][0]["captures"]["A"],
        "f(3)"
    );
    assert_eq!(
        structural[1]["structured"]["status"], "proposed",
        "{:#}",
        structural[1]
    );
    assert_eq!(
        structural[2]["structured"]["status"], "discarded",
        "{:#}",
        structural[2]
    );
    for name in ["ast_grep", "ast_edit", "resolve"] {
        assert_eq!(full["tools"][name]["has_output_schema"], true, "{name}");
    }

    // `lsp` too: every action's report against the schema.
    assert_eq!(full["tools"]["lsp"]["has_output_schema"], true);
    let lsp = full["lsp"].as_object().unwrap();
    for (action, result) in lsp {
        assert_eq!(result["is_error"], false, "{action}: {result:#}");
    }
    assert_eq!(
        lsp["references"]["structured"]["total"], 2,
        "{:#}",
        lsp["references"]
    );
    assert_eq!(lsp["definition"]["structured"]["locations"][0]["line"], 1);

    // `graph` too: every action's report was checked against its schema by the SDK.
    assert_eq!(full["tools"]["graph"]["has_output_schema"], true);
    let graph = full["graph"].as_object().unwrap();
    assert_eq!(graph.len(), 7);
    for (action, result) in graph {
        assert_eq!(result["is_error"], false, "{action}: {result:#}");
        assert_eq!(
            result["structured"]["action"],
            action.as_str(),
            "{result:#}"
        );
        assert_eq!(result["structured"]["index"]["fresh"], true, "{result:#}");
    }
    assert_eq!(
        graph["callers"]["structured"]["total"], 1,
        "{:#}",
        graph["callers"]
    );
    assert_eq!(
        graph["outline"]["structured"]["definitions"][0]["name"],
        "f"
    );

    // The writes and the rename too, with the diagnostics their results carry.
    let writes = full["writes"].as_object().unwrap();
    for (name, result) in writes {
        assert_eq!(result["is_error"], false, "{name}: {result:#}");
        assert_eq!(full["tools"][name]["has_output_schema"], true, "{name}");
    }
    assert_eq!(writes["edit"]["structured"]["replacements"], 1);
    assert_eq!(
        writes["apply_patch"]["structured"]["files"][0]["path"],
        "app.py"
    );
    assert!(
        writes["apply_patch"]["structured"]["diagnostics"]["new"].is_array(),
        "{:#}",
        writes["apply_patch"]
    );
    assert_eq!(writes["lsp_rename"]["structured"]["renamed"]["to"], "g");
    assert_eq!(
        writes["lsp_rename"]["structured"]["complete"], true,
        "{:#}",
        writes["lsp_rename"]
    );

    for surface in ["plan", "readonly_subagent"] {
        let session = &report[surface];
        let tools = session["tools"].as_object().unwrap();
        for (name, tool) in tools {
            assert_eq!(
                tool["read_only"], true,
                "{surface} lists non-read tool {name}"
            );
        }
        assert!(tools.contains_key("read"));
        assert!(!tools.contains_key("write") && !tools.contains_key("edit"));
        assert_eq!(session["read"]["is_error"], false);
        assert_eq!(session["write_inside"]["is_error"], true);
        assert_eq!(
            session["write_inside"]["structured"]["error"]["kind"],
            "not_available"
        );
    }
    // Only the full session's write landed.
    assert_eq!(
        std::fs::read_to_string(root.join("made.txt")).unwrap(),
        "full"
    );
}
