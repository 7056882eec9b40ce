//! Navigation on real projects, the way an agent asks in a fresh run: the first answer is
//! the complete one (the server's first look at the workspace is waited for), uses outside
//! the server's configured project are found (or listed apart), and `references` says who
//! uses a symbol — each place with the definition it lies in, grouped in the text.
#![allow(clippy::unwrap_used)]

use crate::lsp_support;

use cc_test_support::require_peer;
use lsp_support::Setup;
use serde_json::{json, Value};

async fn at(
    project: &lsp_support::Project,
    action: &str,
    file: &str,
    line_of: &str,
    symbol: &str,
) -> (Value, String) {
    let line = project
        .read(file)
        .lines()
        .position(|l| l.contains(line_of))
        .unwrap()
        + 1;
    let output = project
        .registry
        .call(
            "lsp",
            json!({"action": action, "file": file, "line": line, "symbol": symbol}),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (output.value.clone(), output.render_text())
}

fn paths(value: &Value) -> Vec<String> {
    let mut paths: Vec<String> = value["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap().to_owned())
        .collect();
    paths.dedup();
    paths
}

#[tokio::test]
async fn python_requests_first_references_are_complete_and_grouped_by_caller() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    // A sibling project of its own in the workspace uses the name too: its server is another,
    // so the use is listed apart.
    let sibling = [
        ("other/pyproject.toml", "[project]\nname = \"other\"\n"),
        (
            "other/use.py",
            "from requests._internal_utils import to_native_string\n\nto_native_string(b\"x\")\n",
        ),
    ];
    let Some(project) = Setup::default().real("requests", &sibling) else {
        return;
    };
    let (first, text) = at(
        &project,
        "references",
        "src/requests/_internal_utils.py",
        "def to_native_string(",
        "to_native_string",
    )
    .await;
    assert!(first.get("incomplete").is_none(), "{first:#}");
    let (again, _) = at(
        &project,
        "references",
        "src/requests/_internal_utils.py",
        "def to_native_string(",
        "to_native_string",
    )
    .await;
    assert_eq!(
        first["total"], again["total"],
        "the first answer was partial"
    );
    assert!(first["total"].as_u64().unwrap() >= 14, "{first:#}");
    // Each place names the definition it lies in, and the text groups by it.
    let in_session = first["locations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["path"] == "src/requests/sessions.py" && !l["in"].is_null())
        .unwrap_or_else(|| panic!("{first:#}"));
    assert_eq!(in_session["in"]["kind"], "method", "{in_session}");
    assert!(
        text.contains("  in method get_redirect_target (line "),
        "{text}"
    );
    // The sibling project's uses: listed apart with why, never silently left out. The
    // tests resolve `requests` to `src/requests` (pyright's `autoSearchPaths` is kept on), so
    // their uses are references like any other.
    let outside: Vec<&str> = first["outside_project"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(outside.contains(&"other/use.py"), "{first:#}");
    assert!(
        first["locations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["path"] == "tests/test_utils.py"),
        "{first:#}"
    );
    assert!(text.contains("did not include"), "{text}");
    project.shutdown().await;
}

#[tokio::test]
async fn typescript_zod_references_reach_files_outside_the_tsconfig_include() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let tsconfig = r#"{"compilerOptions": {"strict": true, "target": "es2022", "module": "esnext",
        "moduleResolution": "bundler", "noEmit": true, "skipLibCheck": true},
     "include": ["src/v4/core"], "exclude": ["src/v4/core/tests"]}"#;
    let Some(project) = Setup::default().real("zod", &[("tsconfig.json", tsconfig)]) else {
        return;
    };
    let (value, text) = at(
        &project,
        "references",
        "src/v4/core/util.ts",
        "export function assignProp",
        "assignProp",
    )
    .await;
    assert_eq!(
        paths(&value),
        [
            "src/v4/classic/schemas.ts",
            "src/v4/core/util.ts",
            "src/v4/mini/schemas.ts"
        ],
        "{value:#}"
    );
    assert_eq!(value["total"], 9, "{value:#}");
    insta::assert_snapshot!("zod_references_text", text);
    project.shutdown().await;
}

#[tokio::test]
async fn go_pflag_references_are_grouped_by_caller() {
    if require_peer("gopls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("pflag", &[]) else {
        return;
    };
    let (value, text) = at(
        &project,
        "references",
        "string_slice.go",
        "func readAsCSV(",
        "readAsCSV",
    )
    .await;
    assert_eq!(value["total"], 7, "{value:#}");
    let callers: Vec<&str> = value["locations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["in"]["name"].as_str())
        .collect();
    assert!(callers.contains(&"Set"), "{value:#}");
    insta::assert_snapshot!("pflag_references_text", text);
    project.shutdown().await;
}

#[tokio::test]
async fn c_cmark_first_cross_file_definition_is_the_definition_or_says_it_is_incomplete() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("cmarkgfm", &[]) else {
        return;
    };
    let mut entries = Vec::new();
    for dir in ["third_party/cmark/src", "third_party/cmark/extensions"] {
        for entry in std::fs::read_dir(project.ws.join(dir)).unwrap().flatten() {
            let file = entry.path();
            if file.extension().is_some_and(|e| e == "c") {
                entries.push(json!({"directory": project.ws, "file": file, "arguments": ["cc", "-std=c99", "-c", "-Ithird_party/cmark/src", "-Ithird_party/cmark/extensions", "-Igenerated/unix", file]}));
            }
        }
    }
    std::fs::write(
        project.ws.join("compile_commands.json"),
        serde_json::to_string(&entries).unwrap(),
    )
    .unwrap();
    let (value, _) = at(
        &project,
        "definition",
        "third_party/cmark/src/blocks.c",
        "cmark_node_free(",
        "cmark_node_free",
    )
    .await;
    let found: Vec<&str> = value["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    if value.get("incomplete").is_none() {
        assert_eq!(found, ["third_party/cmark/src/node.c"], "{value:#}");
    }
    project.shutdown().await;
}

#[tokio::test]
async fn rust_semver_first_references_are_complete() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("semver", &[]) else {
        return;
    };
    let (first, text) = at(
        &project,
        "references",
        "src/lib.rs",
        "pub const fn new(major: u64",
        "new",
    )
    .await;
    // rust-analyzer answers at once, from what it has loaded so far: without the wait for its
    // quiescent status the first answer misses the other files.
    assert!(first.get("incomplete").is_none(), "{first:#}");
    let found = paths(&first);
    for expected in ["src/parse.rs", "tests/test_version.rs"] {
        assert!(found.iter().any(|p| p == expected), "{expected}: {text}");
    }
    let (again, _) = at(
        &project,
        "references",
        "src/lib.rs",
        "pub const fn new(major: u64",
        "new",
    )
    .await;
    assert_eq!(
        first["total"], again["total"],
        "the first answer was partial"
    );
    let in_parse = first["locations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["path"] == "src/parse.rs")
        .unwrap();
    assert!(!in_parse["in"].is_null(), "{in_parse}");
    project.shutdown().await;
}

/// intelephense answers from what it has indexed so far: the first `references` of a fresh run
/// waits for its index (it logs when the workspace is indexed), so it is complete.
#[tokio::test]
async fn php_symfony_console_first_references_are_complete() {
    if require_peer("intelephense").is_none() {
        return;
    }
    let composer = [("composer.json", "{\"name\": \"symfony/console\"}\n")];
    let Some(project) = Setup::default().real("symfony-console", &composer) else {
        return;
    };
    let (first, text) = at(
        &project,
        "references",
        "Formatter/OutputFormatter.php",
        "public static function escape(string $text)",
        "escape",
    )
    .await;
    assert!(first.get("incomplete").is_none(), "{first:#}");
    assert_eq!(
        paths(&first)
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>(),
        [
            "Application.php",
            "Descriptor/TextDescriptor.php",
            "Formatter/OutputFormatter.php",
            "Helper/FormatterHelper.php",
            "Helper/SymfonyQuestionHelper.php",
            "Style/SymfonyStyle.php",
        ],
        "{text}"
    );
    project.shutdown().await;
}
