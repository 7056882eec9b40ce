//! A session through every tool family over `cc-harness mcp`, on each surface, driven by the
//! official Python MCP SDK client with real peers behind every tool.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::path::Path;

use crate::common;

/// `python` is the kernels' interpreter (`[kernel] python`): the project's own Python would
/// be chosen otherwise, and this one has the matplotlib the figure needs.
fn workspace(dir: &Path, python: &Path) {
    std::fs::write(
        dir.join("pyproject.toml"),
        "[project]\nname = \"s\"\nversion = \"0\"\n\n[tool.basedpyright]\ntypeCheckingMode = \"standard\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("app.py"),
        "def log(*args):\n    pass\n\n\ndef greet(name: str) -> str:\n    print(\"hello\", name)\n    return name\n\n\ngreet(\"x\")\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("many")).unwrap();
    for index in 0..300 {
        std::fs::write(
            dir.join(format!("many/m{index}.py")),
            format!("def f{index}():\n    print({index})\n"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(dir.join(".cc")).unwrap();
    std::fs::write(
        dir.join(".cc/tools.toml"),
        format!(
            "[workers.fast]\ncommand = [\"sh\", \"-c\", \"cat; echo ' done'\"]\n\n[kernel]\npython = \"{}\"\n",
            python.display()
        ),
    )
    .unwrap();
}

#[test]
fn every_family_on_every_surface() {
    let Some(python) = common::python_with(&["mcp", "matplotlib", "debugpy"]) else {
        return;
    };
    if cc_test_support::require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &python);
    let report = common::run_client_script(&python, "mcp_session.py", &[dir.path().as_os_str()]);

    let full = &report["full"];
    for name in [
        "read",
        "write",
        "edit",
        "apply_patch",
        "ast_grep",
        "ast_edit",
        "resolve",
        "lsp",
        "debug",
        "eval",
        "ask_user",
        "vibe_spawn",
        "vibe_send",
        "vibe_wait",
        "vibe_kill",
        "vibe_list",
    ] {
        assert!(
            full["tools"].get(name).is_some(),
            "full surface lacks {name}"
        );
    }
    let ok = |key: &str| {
        let result = &full[key];
        assert_eq!(result["is_error"], false, "{key}: {result}");
        result["structured"].clone()
    };
    assert_eq!(ok("read")["total_lines"], 10);
    assert_eq!(ok("ast_grep")["total"], 2);
    let long = ok("long_search");
    assert_eq!(long["total"], 300);
    assert_eq!(long["truncated"], true);
    let progress = full["progress"].as_array().unwrap();
    assert!(
        !progress.is_empty(),
        "no progress notifications for a 300-file search"
    );
    assert_eq!(ok("ast_edit")["replacements"], 1);
    ok("resolve");
    assert!(std::fs::read_to_string(dir.path().join("app.py"))
        .unwrap()
        .contains("log(\"hello\", name)"));
    let written = ok("write");
    assert_eq!(written["diagnostics"]["new"][0]["line"], 2, "{written}");
    assert!(full["write"]["text"]
        .as_str()
        .unwrap()
        .contains("1 new diagnostic"));
    ok("lsp_status");
    assert!(ok("lsp_definition").to_string().contains("def greet"));
    let cell = ok("eval");
    assert_eq!(cell["result"], "2");
    let images = full["eval"]["images"].as_array().unwrap();
    assert_eq!(
        images.len(),
        1,
        "the figure comes back as MCP image content"
    );
    assert_eq!(images[0]["mime"], "image/png");
    assert!(ok("debug_adapters").to_string().contains("debugpy"));
    assert_eq!(ok("ask_user")["selected"][0], "sqlite");
    assert_eq!(ok("vibe_spawn")["worker_id"], "w1");
    assert_eq!(ok("vibe_wait")["state"], "done");
    assert_eq!(ok("vibe_list")["workers"][0]["label"], "greeter");

    for surface in ["plan", "readonly_subagent"] {
        let session = &report[surface];
        for (name, tool) in session["tools"].as_object().unwrap() {
            assert_eq!(tool["read_only"], true, "{surface} lists {name}");
        }
        for key in ["read", "ast_grep", "lsp_status", "vibe_list", "ask_user"] {
            assert_eq!(
                session[key]["is_error"], false,
                "{surface} {key}: {}",
                session[key]
            );
        }
        for key in ["eval", "debug", "write", "ast_edit"] {
            assert_eq!(
                session[key]["structured"]["error"]["kind"], "not_available",
                "{surface} {key}: {}",
                session[key]
            );
        }
    }
    assert!(!dir.path().join("x.py").exists());
}
