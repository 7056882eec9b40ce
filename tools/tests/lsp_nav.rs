//! `lsp` navigation actions on small fixture projects with real servers; a line with
//! non-ASCII text before the symbol checks UTF-16 (basedpyright, typescript, gopls) and UTF-8
//! (clangd, rust-analyzer) columns.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::sync::Arc;
use std::time::Duration;

use cc_lsp_client::{Supervisor, SupervisorOptions};
use cc_process::testing::require_peer;
use cc_tools::{AllowAll, Registry, Resources, Run, Surface, WorkspaceRoot};
use serde_json::{json, Value};

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Registry) {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let root = WorkspaceRoot::new(dir.path()).unwrap();
    let supervisor = Supervisor::new(
        root.path(),
        cc_lsp_client::ServerTable::builtin(),
        SupervisorOptions::default(),
    );
    let registry = Resources {
        language_servers: Some(supervisor),
        ..Default::default()
    }
    .build(Run {
        conversation_id: "nav".into(),
        root,
        surface: Surface::Plan,
        approver: Arc::new(AllowAll),
    });
    (dir, registry)
}

async fn lsp(registry: &Registry, args: Value) -> Value {
    match registry.call("lsp", args).await {
        Ok(output) => output.value,
        Err(error) => error.to_envelope(),
    }
}

fn paths(value: &Value) -> Vec<String> {
    value["locations"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|l| format!("{}:{}", l["path"].as_str().unwrap(), l["line"]))
        .collect()
}

const PY_UTIL: &str = "def greet(name: str) -> str:\n    \"\"\"Say hello.\"\"\"\n    return \"hi \" + name\n\n\nclass Greeter:\n    def run(self) -> str:\n        return greet(\"x\")\n";
const PY_MAIN: &str = "from pkg.util import greet, Greeter\n\n# é𝒳 before the symbol: UTF-16 columns\nprint(\"é𝒳\", greet(\"a\"), Greeter())\n";

#[tokio::test]
async fn python_navigation_with_basedpyright() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        ("pyproject.toml", ""),
        ("pkg/__init__.py", ""),
        ("pkg/util.py", PY_UTIL),
        ("pkg/main.py", PY_MAIN),
    ]);
    let at = |action: &str| json!({"action": action, "file": "pkg/main.py", "line": 4, "symbol": "greet"});
    let definition = lsp(&registry, at("definition")).await;
    insta::assert_json_snapshot!("py_definition", definition);
    let references = lsp(&registry, at("references")).await;
    let mut found = paths(&references);
    found.sort();
    assert_eq!(
        found,
        [
            "pkg/main.py:1",
            "pkg/main.py:4",
            "pkg/util.py:1",
            "pkg/util.py:8"
        ],
        "{references}"
    );
    assert_eq!(references["truncated"], false);
    let hover = lsp(&registry, at("hover")).await;
    let text = hover["hover"].as_str().unwrap();
    assert!(
        text.contains("def greet(name: str) -> str") && text.contains("Say hello."),
        "{hover}"
    );
    let symbols = lsp(
        &registry,
        json!({"action": "symbols", "file": "pkg/util.py"}),
    )
    .await;
    insta::assert_json_snapshot!("py_file_symbols", symbols);
    let type_def = lsp(
        &registry,
        json!({"action": "type_definition", "file": "pkg/main.py", "line": 4, "symbol": "Greeter"}),
    )
    .await;
    assert_eq!(paths(&type_def), ["pkg/util.py:6"], "{type_def}");
    let implementation = lsp(&registry, at("implementation")).await;
    assert!(implementation["locations"].is_array(), "{implementation}");
    let actions = lsp(&registry, at("code_actions")).await;
    assert!(actions["actions"].is_array(), "{actions}");
    let query = lsp(
        &registry,
        json!({"action": "symbols", "query": "Greeter", "file": "pkg/main.py"}),
    )
    .await;
    assert!(
        query["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["path"] == "pkg/util.py"),
        "{query}"
    );
    let diagnostics = lsp(
        &registry,
        json!({"action": "diagnostics", "file": "pkg/main.py"}),
    )
    .await;
    assert_eq!(diagnostics["diagnostics"], json!([]), "{diagnostics}");

    // Mistakes are errors that say what to do, never guesses.
    let missing = lsp(
        &registry,
        json!({"action": "definition", "file": "pkg/main.py", "line": 4}),
    )
    .await;
    assert_eq!(missing["error"]["kind"], "invalid_arguments");
    let absent = lsp(
        &registry,
        json!({"action": "definition", "file": "pkg/main.py", "line": 4, "symbol": "nope"}),
    )
    .await;
    insta::assert_json_snapshot!("py_symbol_absent", absent);
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn rust_navigation_uses_utf8_columns() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        (
            "src/main.rs",
            "mod util;\n\nfn main() {\n    let _é𝒳 = \"é𝒳\"; util::helper();\n}\n",
        ),
        (
            "src/util.rs",
            "/// Helps.\npub fn helper() -> u32 {\n    1\n}\n",
        ),
    ]);
    let definition = lsp(
        &registry,
        json!({"action": "definition", "file": "src/main.rs", "line": 4, "symbol": "helper"}),
    )
    .await;
    insta::assert_json_snapshot!("rs_definition", definition);
    let hover = lsp(
        &registry,
        json!({"action": "hover", "file": "src/main.rs", "line": 4, "symbol": "helper"}),
    )
    .await;
    assert!(
        hover["hover"].as_str().unwrap().contains("Helps."),
        "{hover}"
    );
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn c_navigation_with_clangd() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        (".clangd", ""),
        ("m.c", "static int twice(int x) { return 2 * x; }\n\nint main(void) {\n    const char *s = \"é𝒳\"; return twice(s[0]);\n}\n"),
    ]);
    let definition = lsp(
        &registry,
        json!({"action": "definition", "file": "m.c", "line": 4, "symbol": "twice"}),
    )
    .await;
    assert_eq!(paths(&definition), ["m.c:1"], "{definition}");
    let references = lsp(
        &registry,
        json!({"action": "references", "file": "m.c", "line": 1, "symbol": "twice"}),
    )
    .await;
    assert_eq!(references["total"], 2, "{references}");
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn typescript_navigation() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        ("package.json", "{}"),
        ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
        (
            "util.ts",
            "export function greet(n: string): string {\n  return \"hi \" + n;\n}\n",
        ),
        (
            "main.ts",
            "import { greet } from \"./util\";\n// é𝒳\nconst s = \"é𝒳\"; console.log(greet(s));\n",
        ),
    ]);
    let definition = lsp(
        &registry,
        json!({"action": "definition", "file": "main.ts", "line": 3, "symbol": "greet"}),
    )
    .await;
    insta::assert_json_snapshot!("ts_definition", definition);
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn go_navigation() {
    if require_peer("gopls").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        ("go.mod", "module example.com/m\n\ngo 1.19\n"),
        ("main.go", "package main\n\nfunc twice(x int) int { return 2 * x }\n\nfunc main() {\n\ts := \"é𝒳\"; _ = s; _ = twice(1)\n}\n"),
    ]);
    let definition = lsp(
        &registry,
        json!({"action": "definition", "file": "main.go", "line": 6, "symbol": "twice"}),
    )
    .await;
    assert_eq!(paths(&definition), ["main.go:3"], "{definition}");
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_missing_capability_is_not_supported_not_an_error() {
    if require_peer("bash-language-server").is_none() {
        return;
    }
    let (_dir, registry) = project(&[(
        "run.sh",
        "#!/bin/bash
hello() { echo hi; }
hello\n",
    )]);
    let out = lsp(
        &registry,
        json!({"action": "implementation", "file": "run.sh", "line": 3, "symbol": "hello"}),
    )
    .await;
    insta::assert_json_snapshot!("sh_not_supported", out);
    registry.shutdown(Duration::from_secs(5)).await;
}

/// Quick fixes exist only for diagnostics handed back in the request's context: the
/// diagnostics on the line go along, fresh for the file as it is.
#[tokio::test]
async fn code_actions_offer_quick_fixes_for_the_diagnostics_on_the_line() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        ("package.json", "{}"),
        ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
        (
            "util.ts",
            "export function greet(n: string): string {\n  return \"hi \" + n;\n}\n",
        ),
        ("main.ts", "const s = \"x\";\nconsole.log(greet(s));\n"),
    ]);
    let out = lsp(
        &registry,
        json!({"action": "code_actions", "file": "main.ts", "line": 2, "symbol": "greet"}),
    )
    .await;
    let titles: Vec<&str> = out["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert!(
        titles
            .iter()
            .any(|t| t.contains("import") && t.contains("./util")),
        "{out:#}"
    );
    let fix = out["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().unwrap().contains("./util"))
        .unwrap();
    assert_eq!(fix["kind"], "quickfix", "{out:#}");
    assert_eq!(fix["has_edit"], true, "{out:#}");
    assert_eq!(
        out["diagnostics"][0]["message"], "Cannot find name 'greet'.",
        "{out:#}"
    );
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn clangd_offers_its_fix_it() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        (".clangd", ""),
        (
            "m.c",
            "#include <stdio.h>\nint main(void) {\n    int count = 1;\n    return coutn;\n}\n",
        ),
    ]);
    let out = lsp(
        &registry,
        json!({"action": "code_actions", "file": "m.c", "line": 4, "symbol": "coutn"}),
    )
    .await;
    insta::assert_json_snapshot!("c_code_actions", out);
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn basedpyright_code_actions_carry_the_diagnostics_context() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let (_dir, registry) = project(&[
        ("pyproject.toml", ""),
        ("pkg/__init__.py", ""),
        (
            "pkg/util.py",
            "def greet(name: str) -> str:\n    return name\n",
        ),
        ("pkg/main.py", "print(greet(\"a\"))\n"),
    ]);
    let out = lsp(
        &registry,
        json!({"action": "code_actions", "file": "pkg/main.py", "line": 1, "symbol": "greet"}),
    )
    .await;
    insta::assert_json_snapshot!("py_code_actions", out);
    registry.shutdown(Duration::from_secs(5)).await;
}
