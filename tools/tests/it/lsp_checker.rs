//! `lsp diagnostics` with `file: "*"`: the project checkers of a workspace holding a Python,
//! a TypeScript and a Rust project with one known error each, run through the registry.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::lsp_support;

use cc_lsp_client::ServerPoolOptions;
use cc_test_support::require_peer;
use cc_tools::{Resources, Surface};
use lsp_support::{Project, Setup};
use serde_json::json;

/// A workspace of `files` on the full surface (a read-only surface refuses `cargo check`,
/// see `lsp_read_only.rs`), configured by `config`.
fn checked(files: &[(&str, &str)], config: &str, options: ServerPoolOptions) -> Project {
    Setup {
        config,
        surface: Surface::Full,
        options,
        resources: Resources::default(),
        watch: None,
    }
    .build(files)
}

#[tokio::test]
async fn one_call_checks_python_typescript_and_rust_projects() {
    let peers = ["basedpyright", "tsc", "cargo"];
    if peers.iter().any(|p| require_peer(p).is_none()) {
        return;
    }
    let files = &[
        ("py/pyproject.toml", ""),
        (
            "py/app.py",
            "def f(x: int) -> int:\n    return x\n\n\ny: str = f(1)\n",
        ),
        ("web/package.json", "{}"),
        (
            "web/tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}",
        ),
        (
            "web/main.ts",
            "const n: number = \"one\";\nconsole.log(n);\n",
        ),
        (
            "rs/Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        (
            "rs/src/main.rs",
            "fn main() {\n    let n: u32 = \"one\";\n    println!(\"{n}\");\n}\n",
        ),
    ];
    // The fixture's cargo build goes to a folder of its own, not the suite's target.
    let cargo_target = tempfile::tempdir().unwrap();
    let config = format!(
        "[lsp.rust.env]\nCARGO_TARGET_DIR = \"{}\"\n",
        cargo_target.path().display()
    );
    let p = checked(files, &config, ServerPoolOptions::default());
    let out = p.lsp(json!({"action": "diagnostics", "file": "*"})).await;
    insta::assert_json_snapshot!("project_three_languages", out);

    // One language only.
    let out = p
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "typescript"}))
        .await;
    assert_eq!(out["checks"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["diagnostics"][0]["path"], "web/main.ts", "{out}");
    // The checkers ran as processes of their own: no language server was started.
    assert!(p.server_pids().is_empty());
    p.shutdown().await;
}

#[tokio::test]
async fn go_and_c_projects_too() {
    if ["go", "clang-tidy-19"]
        .iter()
        .any(|p| require_peer(p).is_none())
    {
        return;
    }
    let p = checked(
        &[
            ("go/go.mod", "module example.com/m\n\ngo 1.19\n"),
            (
                "go/main.go",
                "package main\n\nfunc main() {\n\tvar s string = 1\n\t_ = s\n}\n",
            ),
            ("c/.clangd", ""),
            ("c/m.c", "int main(void) {\n    return nope;\n}\n"),
        ],
        "",
        ServerPoolOptions::default(),
    );
    let out = p.lsp(json!({"action": "diagnostics", "file": "*"})).await;
    insta::assert_json_snapshot!("project_go_and_c", out);
}

#[tokio::test]
async fn a_missing_checker_is_an_error_that_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let p = checked(
        &[("pyproject.toml", ""), ("a.py", "x = 1\n")],
        "",
        ServerPoolOptions {
            path: Some(empty.path().as_os_str().to_owned()),
            ..ServerPoolOptions::default()
        },
    );
    let out = p.lsp(json!({"action": "diagnostics", "file": "*"})).await;
    insta::assert_json_snapshot!("project_checker_missing", out);
    let out = p
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "rust"}))
        .await;
    assert_eq!(out["error"]["kind"], "not_available", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no rust project marker"),
        "{out}"
    );
}
