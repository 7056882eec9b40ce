//! Issue 31, end to end: a session on click 8.1.8 (a src layout installed nowhere) through
//! `cc-harness mcp`, started with the README's MCP configuration (its `PATH` puts the peers'
//! venv first, and that venv holds click 8.5), driven by the official Python SDK client. The
//! write that breaks a signature reports the same new errors as the project's own checker
//! (basedpyright's CLI with the project's interpreter, over `src` and `tests`); definitions
//! land in `src/`; a kernel sees the project's click, not the tools'.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;

/// The README's `PATH` for the MCP configuration, with this checkout's peers.
fn readme_path(peers: &Path) -> String {
    format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        peers.join("venv/bin").display(),
        peers.join("npm/node_modules/.bin").display()
    )
}

/// `(path, line)` of every error basedpyright's CLI reports over `src` and `tests`, run as
/// the project would run it: with the project's interpreter.
fn checker_errors(root: &Path, basedpyright: &Path, python: &Path) -> BTreeSet<(String, u64)> {
    let output = Command::new(basedpyright)
        .args(["--outputjson", "--pythonpath"])
        .arg(python)
        .args(["src/click", "tests"])
        .current_dir(root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)));
    report["generalDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            let file = PathBuf::from(d["file"].as_str().unwrap());
            let relative = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            (relative, d["range"]["start"]["line"].as_u64().unwrap() + 1)
        })
        .collect()
}

#[test]
fn a_src_layout_session_with_the_readme_configuration_agrees_with_the_checker() {
    let Some(python) = common::python_with(&["mcp"]) else {
        return;
    };
    let Some(basedpyright) = cc_test_support::require_peer("basedpyright") else {
        return;
    };
    if cc_test_support::require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let Some(copy) = cc_test_support::copy_project("click") else {
        return;
    };
    let root = copy.path().canonicalize().unwrap();
    // The project's own setting, as a user on a slow machine writes it: the write waits for
    // the server (CI runs this beside hundreds of tests on two cores).
    std::fs::create_dir_all(root.join(".cc")).unwrap();
    std::fs::write(
        root.join(".cc/tools.toml"),
        "[lsp.python]\ntimeout_ms = 180000\nindexing_timeout_ms = 180000\n",
    )
    .unwrap();
    let peers = cc_test_support::real_project("click")
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let path = readme_path(&peers);
    // The project's interpreter under that PATH: the first python3 that is not the tools'.
    let project_python = ["/usr/local/bin/python3", "/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap();
    let before = checker_errors(&root, &basedpyright, &project_python);

    let report = common::run_client_script(
        &python,
        "mcp_project_environment.py",
        &[root.as_os_str(), path.as_ref()],
    );
    let after = checker_errors(&root, &basedpyright, &project_python);
    let expected: BTreeSet<(String, u64)> = after.difference(&before).cloned().collect();
    assert!(
        expected
            .iter()
            .any(|(file, _)| file == "tests/test_utils.py"),
        "the checker itself sees the broken test: {expected:?}"
    );

    let ok = |key: &str| {
        let result = &report[key];
        assert_eq!(result["is_error"], false, "{key}: {result}");
        result["structured"].clone()
    };
    let definition = ok("definition");
    let paths: Vec<&str> = definition["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/click/utils.py"], "{definition:#}");
    let status = report["status"]["text"].as_str().unwrap();
    assert!(
        status.contains("the project's Python") && !status.contains(".peers/venv/bin/python "),
        "{status}"
    );

    let edit = ok("edit");
    assert_eq!(
        edit["diagnostics"]["pending"],
        serde_json::json!([]),
        "{edit:#}"
    );
    let reported: BTreeSet<(String, u64)> = edit["diagnostics"]["new"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reported, expected,
        "the write's new errors differ from the project's checker: {edit:#}"
    );
    let text = report["edit"]["text"].as_str().unwrap();
    for (file, line) in &expected {
        assert!(
            text.contains(&format!("{file}:{line}")),
            "{file}:{line} not in:\n{text}"
        );
    }

    // A cell runs the project's Python and imports the project's click, not the peers'.
    let cell = ok("eval");
    let result = cell["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{cell:#}"));
    assert!(
        !result.contains(".peers/venv")
            && result.contains(&format!("{}/src/click/__init__.py", root.display())),
        "{result}"
    );
}
