//! `lsp_rename` against real servers: a function used across three files (basedpyright and
//! typescript-language-server), a rename whose commit fails midway (a file that cannot be
//! replaced) leaving the tree byte for byte as it was, and a server's own
//! `workspace/applyEdit` going through the same transaction.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::lsp_support;

use std::time::Duration;

use cc_test_support::require_peer;
use lsp_support::{project, tree, Locked};
use serde_json::json;

const PY_FILES: &[(&str, &str)] = &[
    ("pyproject.toml", ""),
    ("app/__init__.py", ""),
    (
        "app/a.py",
        "from lib.util import greet\n\nprint(greet(\"a\"))\n",
    ),
    (
        "app/b.py",
        "from lib.util import greet\n\n\ndef twice() -> str:\n    return greet(\"b\") + greet(\"c\")\n",
    ),
    ("lib/__init__.py", ""),
    (
        "lib/util.py",
        "def greet(name: str) -> str:\n    return \"hi \" + name\n",
    ),
];

#[tokio::test]
async fn python_rename_across_three_files() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = project(PY_FILES);
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "app/a.py", "line": 3, "symbol": "greet", "new_name": "salute"}),
        )
        .await;
    insta::assert_json_snapshot!("py_rename", out);
    assert_eq!(
        p.read("app/b.py"),
        "from lib.util import salute\n\n\ndef twice() -> str:\n    return salute(\"b\") + salute(\"c\")\n"
    );
    assert_eq!(
        p.read("lib/util.py"),
        "def salute(name: str) -> str:\n    return \"hi \" + name\n"
    );
    // The server saw the new text: renaming back works from any of the files.
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "lib/util.py", "line": 1, "symbol": "salute", "new_name": "greet"}),
        )
        .await;
    assert_eq!(out["edits"], 6, "{out}");
    assert_eq!(p.read("app/a.py"), PY_FILES[2].1);

    // Mistakes are refused, and nothing is written.
    let before = tree(&p.ws);
    for (symbol, new_name, kind) in [
        ("nope", "x", "symbol_not_found"),
        ("greet", "greet", "invalid_arguments"),
        ("greet", " ", "invalid_arguments"),
        ("print", "show", "cannot_rename"),
    ] {
        let out = p
            .call(
                "lsp_rename",
                json!({"file": "app/a.py", "line": 3, "symbol": symbol, "new_name": new_name}),
            )
            .await;
        assert_eq!(out["error"]["kind"], kind, "{symbol} → {new_name}: {out}");
    }
    assert_eq!(tree(&p.ws), before);
    p.shutdown().await;
}

#[tokio::test]
async fn typescript_rename_across_three_files() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let p = project(&[
        ("package.json", "{}"),
        ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
        (
            "src/util.ts",
            "export function greet(n: string): string {\n  return \"hi \" + n;\n}\n",
        ),
        (
            "src/a.ts",
            "import { greet } from \"./util\";\n// é𝒳\nconsole.log(\"é𝒳\", greet(\"a\"));\n",
        ),
        (
            "src/b.ts",
            "import { greet } from \"./util\";\nexport const b = greet(\"b\") + greet(\"c\");\n",
        ),
    ]);
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "src/a.ts", "line": 3, "symbol": "greet", "new_name": "salute"}),
        )
        .await;
    insta::assert_json_snapshot!("ts_rename", out);
    assert_eq!(
        p.read("src/a.ts"),
        "import { salute } from \"./util\";\n// é𝒳\nconsole.log(\"é𝒳\", salute(\"a\"));\n"
    );
    assert_eq!(
        p.read("src/b.ts"),
        "import { salute } from \"./util\";\nexport const b = salute(\"b\") + salute(\"c\");\n"
    );
    assert!(p.read("src/util.ts").starts_with("export function salute("));
    p.shutdown().await;
}

#[tokio::test]
async fn a_rename_that_fails_midway_changes_nothing() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = project(PY_FILES);
    // `app/a.py` and `app/b.py` are written first, then `lib/util.py` cannot be.
    let before = tree(&p.ws);
    let Some(locked) = Locked::new(&p.ws.join("lib/util.py")) else {
        return;
    };
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "app/a.py", "line": 3, "symbol": "greet", "new_name": "salute"}),
        )
        .await;
    drop(locked);
    assert_eq!(out["error"]["kind"], "io", "{out}");
    assert_eq!(out["error"]["path"], "lib/util.py", "{out}");
    assert_eq!(
        out["error"]["restored"],
        json!(["app/a.py", "app/b.py"]),
        "{out}"
    );
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("nothing was changed"), "{message}");
    assert_eq!(tree(&p.ws), before, "the tree is byte for byte as before");

    // Unlocked, the same rename goes through.
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "app/a.py", "line": 3, "symbol": "greet", "new_name": "salute"}),
        )
        .await;
    assert_eq!(out["edits"], 6, "{out}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_servers_apply_edit_goes_through_the_transaction() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let main = "import { b } from \"./b\";\nimport { a } from \"./a\";\nconsole.log(a);\n";
    let p = project(&[
        ("package.json", "{}"),
        ("tsconfig.json", "{}"),
        ("a.ts", "export const a = 1;\n"),
        ("b.ts", "export const b = 2;\n"),
        ("main.ts", main),
    ]);
    let path = p.ws.join("main.ts");
    let server = p.pool.server_for(&path).await.unwrap();
    server.ensure_synced(&path, main, "typescript").unwrap();
    // Organizing imports makes typescript-language-server send the edit back as
    // `workspace/applyEdit`, and wait for the answer.
    let organize = || {
        server.request_json::<cc_lsp_client::lsp_types::request::ExecuteCommand>(
            cc_lsp_client::lsp_types::ExecuteCommandParams {
                command: "_typescript.organizeImports".into(),
                arguments: vec![json!(path.to_string_lossy())],
                work_done_progress_params: Default::default(),
            },
            Duration::from_secs(60),
        )
    };

    // A file that cannot be replaced: the edit is refused whole, nothing changes.
    let before = tree(&p.ws);
    let Some(locked) = Locked::new(&path) else {
        return;
    };
    let _ = organize().await;
    drop(locked);
    assert_eq!(tree(&p.ws), before);
    assert_eq!(server.synced_text(&path).as_deref(), Some(main));

    organize().await.unwrap();
    let organized = "import { a } from \"./a\";\nconsole.log(a);\n";
    assert_eq!(p.read("main.ts"), organized);
    assert_eq!(
        server.synced_text(&path).as_deref(),
        Some(organized),
        "the server was told the new text"
    );
    p.shutdown().await;
}
