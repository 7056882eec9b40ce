//! `lsp diagnostics` with `file: "*"`: the project checkers of a workspace holding a Python,
//! a TypeScript and a Rust project with one known error each, run through the registry.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cc_lsp_client::{LspConfig, Supervisor, SupervisorOptions};
use cc_process::testing::require_peer;
use cc_tools::{AllowAll, Registry, Resources, Run, Surface, WorkspaceRoot};
use serde_json::{json, Value};

fn registry(dir: &Path, config: &str, options: SupervisorOptions) -> Registry {
    let root = WorkspaceRoot::new(dir).unwrap();
    let table: toml::Table = config.parse().unwrap();
    let lsp = table
        .get("lsp")
        .map(|s| LspConfig::from_toml(s).unwrap())
        .unwrap_or_default();
    let supervisor = Supervisor::new(root.path(), lsp.table().unwrap(), options);
    Resources {
        language_servers: Some(supervisor),
        ..Default::default()
    }
    .build(Run {
        conversation_id: "checker".into(),
        root,
        surface: Surface::Plan,
        approver: Arc::new(AllowAll),
    })
}

async fn lsp(registry: &Registry, args: Value) -> Value {
    match registry.call("lsp", args).await {
        Ok(output) => output.value,
        Err(error) => error.to_envelope(),
    }
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

#[tokio::test]
async fn one_call_checks_python_typescript_and_rust_projects() {
    let peers = ["basedpyright", "tsc", "cargo"];
    if peers.iter().any(|p| require_peer(p).is_none()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    write(
        &ws,
        &[
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
        ],
    );
    // The fixture's cargo build goes to a folder of its own, not the suite's target.
    let config = format!(
        "[lsp.rust.env]\nCARGO_TARGET_DIR = \"{}\"\n",
        dir.path().join("cargo-target").display()
    );
    let registry = registry(&ws, &config, SupervisorOptions::default());
    let out = lsp(&registry, json!({"action": "diagnostics", "file": "*"})).await;
    insta::assert_json_snapshot!("project_three_languages", out);

    // One language only.
    let out = lsp(
        &registry,
        json!({"action": "diagnostics", "file": "*", "language": "typescript"}),
    )
    .await;
    assert_eq!(out["checks"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["diagnostics"][0]["path"], "web/main.ts", "{out}");
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn go_and_c_projects_too() {
    if ["go", "clang-tidy-19"]
        .iter()
        .any(|p| require_peer(p).is_none())
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    write(
        &ws,
        &[
            ("go/go.mod", "module example.com/m\n\ngo 1.19\n"),
            (
                "go/main.go",
                "package main\n\nfunc main() {\n\tvar s string = 1\n\t_ = s\n}\n",
            ),
            ("c/.clangd", ""),
            ("c/m.c", "int main(void) {\n    return nope;\n}\n"),
        ],
    );
    let registry = registry(&ws, "", SupervisorOptions::default());
    let out = lsp(&registry, json!({"action": "diagnostics", "file": "*"})).await;
    insta::assert_json_snapshot!("project_go_and_c", out);
}

#[tokio::test]
async fn a_missing_checker_is_an_error_that_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    write(&ws, &[("pyproject.toml", ""), ("a.py", "x = 1\n")]);
    let empty = tempfile::tempdir().unwrap();
    let registry = registry(
        &ws,
        "",
        SupervisorOptions {
            path: Some(empty.path().as_os_str().to_owned()),
            ..SupervisorOptions::default()
        },
    );
    let out = lsp(&registry, json!({"action": "diagnostics", "file": "*"})).await;
    insta::assert_json_snapshot!("project_checker_missing", out);
    let out = lsp(
        &registry,
        json!({"action": "diagnostics", "file": "*", "language": "rust"}),
    )
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
