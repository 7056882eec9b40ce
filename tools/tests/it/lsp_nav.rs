//! Every `lsp` action on small fixture projects with real servers, one per language
//! (Python with basedpyright, TypeScript, Go, C, Rust), each snapshotted; lines with
//! non-ASCII text before the symbol check UTF-16 (basedpyright, typescript, gopls) and UTF-8
//! (clangd, rust-analyzer) columns. Then caps that truncate, `reload` of one root, a missing
//! capability, and code actions that carry the quick fixes for the line's diagnostics.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::lsp_support;

use cc_test_support::require_peer;
use cc_tools::{Resources, Surface};
use lsp_support::{Project, Setup};
use serde_json::{json, Map, Value};

/// A read-only project (plan mode: what a planning agent has).
fn project(files: &[(&str, &str)]) -> Project {
    Setup {
        surface: Surface::Plan,
        resources: Resources::default(),
        ..Setup::default()
    }
    .build(files)
}

/// `file`, 1-based `line`, `symbol`.
type Place<'a> = (&'a str, usize, &'a str);

fn at(action: &str, (file, line, symbol): Place<'_>) -> Value {
    json!({"action": action, "file": file, "line": line, "symbol": symbol})
}

/// Where each action is asked, in one fixture project.
struct Tour<'a> {
    /// A use of a function, after non-ASCII text on its line: `definition`, `references`,
    /// `code_actions`.
    call: Place<'a>,
    /// A variable of a declared type: `type_definition`.
    typed: Place<'a>,
    /// An interface or trait: `implementation`.
    interface: Place<'a>,
    /// `hover`.
    hover: Place<'a>,
    /// `symbols` of this file.
    outline: &'a str,
    /// `symbols` with this query.
    query: &'a str,
}

/// `path:line` of each location an action returned.
fn places(value: &Value) -> Vec<String> {
    let mut found: Vec<String> = value["locations"]
        .as_array()
        .unwrap_or_else(|| panic!("no locations in {value}"))
        .iter()
        .map(|l| format!("{}:{}", l["path"].as_str().unwrap(), l["line"]))
        .collect();
    found.sort();
    found
}

/// Sorts a list the server may give in any order (by path, line, name), so snapshots
/// compare contents.
fn sort_list(value: &mut Value, key: &str) {
    if let Some(items) = value.get_mut(key).and_then(Value::as_array_mut) {
        items.sort_by_key(|item| {
            (
                item["path"].as_str().unwrap_or_default().to_owned(),
                item["line"].as_u64(),
                item["name"].as_str().unwrap_or_default().to_owned(),
            )
        });
    }
}

/// Runs every navigation action of `tour` (and `diagnostics` of the calling file); the
/// results by action name.
async fn every_action(p: &Project, tour: &Tour<'_>) -> Map<String, Value> {
    let mut results = Map::new();
    for (name, args) in [
        ("definition", at("definition", tour.call)),
        ("type_definition", at("type_definition", tour.typed)),
        ("implementation", at("implementation", tour.interface)),
        ("references", at("references", tour.call)),
        ("hover", at("hover", tour.hover)),
        (
            "symbols_file",
            json!({"action": "symbols", "file": tour.outline}),
        ),
        (
            "symbols_query",
            json!({"action": "symbols", "query": tour.query, "file": tour.call.0}),
        ),
        ("code_actions", at("code_actions", tour.call)),
        (
            "diagnostics",
            json!({"action": "diagnostics", "file": tour.call.0}),
        ),
    ] {
        let mut out = p.lsp(args).await;
        assert!(out.get("error").is_none(), "{name}: {out:#}");
        sort_list(&mut out, "locations");
        if name == "symbols_query" {
            sort_list(&mut out, "symbols");
            // How many system-header symbols a server has indexed by now varies.
            if let Some(object) = out.as_object_mut() {
                object.remove("outside_workspace");
            }
        }
        results.insert(name.to_owned(), out);
    }
    results
}

const PY_UTIL: &str = "class Shape:\n    def area(self) -> float:\n        raise NotImplementedError\n\n\nclass Square(Shape):\n    def area(self) -> float:\n        return 4.0\n\n\ndef greet(name: str) -> str:\n    \"\"\"Say hello.\"\"\"\n    return \"hi \" + name\n";
const PY_MAIN: &str = "from pkg.util import greet, Square\n\n# é𝒳 before the symbol: UTF-16 columns\nprint(\"é𝒳\", greet(\"a\"), Square().area())\nshape = Square()\n";

#[tokio::test]
async fn python_every_action_with_basedpyright() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = project(&[
        ("pyproject.toml", ""),
        ("pkg/__init__.py", ""),
        ("pkg/util.py", PY_UTIL),
        ("pkg/main.py", PY_MAIN),
    ]);
    let tour = Tour {
        call: ("pkg/main.py", 4, "greet"),
        typed: ("pkg/main.py", 5, "shape"),
        interface: ("pkg/util.py", 1, "Shape"),
        hover: ("pkg/main.py", 4, "greet"),
        outline: "pkg/util.py",
        query: "greet",
    };
    let all = every_action(&p, &tour).await;
    assert_eq!(places(&all["definition"]), ["pkg/util.py:11"]);
    assert_eq!(all["definition"]["column"], 13, "UTF-16: é is 1 unit, 𝒳 2");
    assert_eq!(
        places(&all["references"]),
        ["pkg/main.py:1", "pkg/main.py:4", "pkg/util.py:11"]
    );
    assert_eq!(places(&all["type_definition"]), ["pkg/util.py:6"]);
    assert!(
        places(&all["implementation"]).contains(&"pkg/util.py:6".to_owned()),
        "{}",
        all["implementation"]
    );
    let hover = all["hover"]["hover"].as_str().unwrap();
    assert!(
        hover.contains("def greet(name: str) -> str") && hover.contains("Say hello."),
        "{hover}"
    );
    assert_eq!(all["diagnostics"]["diagnostics"], json!([]));
    insta::assert_json_snapshot!("py_actions", all);

    // Mistakes are errors that say what to do, never guesses.
    let missing = p
        .lsp(json!({"action": "definition", "file": "pkg/main.py", "line": 4}))
        .await;
    assert_eq!(missing["error"]["kind"], "invalid_arguments");
    let absent = p.lsp(at("definition", ("pkg/main.py", 4, "nope"))).await;
    insta::assert_json_snapshot!("py_symbol_absent", absent);
    p.shutdown().await;
}

#[tokio::test]
async fn typescript_every_action() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let p = project(&[
        ("package.json", "{}"),
        ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
        (
            "util.ts",
            "/** Says hello. */\nexport function greet(n: string): string {\n  return \"hi \" + n;\n}\n\nexport interface Shape {\n  area(): number;\n}\n\nexport class Square implements Shape {\n  area(): number {\n    return 4;\n  }\n}\n",
        ),
        (
            "main.ts",
            "import { greet, Square } from \"./util\";\n// é𝒳\nconst s = \"é𝒳\"; console.log(greet(s));\nconst square = new Square();\nconsole.log(square.area());\n",
        ),
    ]);
    let tour = Tour {
        call: ("main.ts", 3, "greet"),
        typed: ("main.ts", 4, "square"),
        interface: ("util.ts", 6, "Shape"),
        // `s` is also inside `const` and `console`: the whole identifier is used, and said.
        hover: ("main.ts", 3, "s"),
        outline: "util.ts",
        query: "greet",
    };
    let all = every_action(&p, &tour).await;
    assert_eq!(places(&all["definition"]), ["util.ts:2"]);
    assert_eq!(all["definition"]["column"], 29, "UTF-16 columns");
    assert_eq!(
        places(&all["references"]),
        ["main.ts:1", "main.ts:3", "util.ts:2"]
    );
    assert_eq!(places(&all["type_definition"]), ["util.ts:10"]);
    assert_eq!(places(&all["implementation"]), ["util.ts:10"]);
    assert_eq!(all["hover"]["column"], 7, "{}", all["hover"]);
    assert_eq!(
        all["hover"]["note"],
        "`s` occurs 4 times on that line; column 7 was used"
    );
    assert!(
        all["hover"]["hover"].as_str().unwrap().contains("const s"),
        "{}",
        all["hover"]
    );
    assert_eq!(all["diagnostics"]["diagnostics"], json!([]));
    insta::assert_json_snapshot!("ts_actions", all);
    p.shutdown().await;
}

#[tokio::test]
async fn go_every_action() {
    if require_peer("gopls").is_none() {
        return;
    }
    let p = project(&[
        ("go.mod", "module example.com/m\n\ngo 1.19\n"),
        (
            "shapes.go",
            "package main\n\n// Helper helps.\nfunc Helper() int { return 1 }\n\ntype Shape interface {\n\tArea() float64\n}\n\ntype Square struct{}\n\nfunc (Square) Area() float64 { return 4 }\n",
        ),
        (
            "main.go",
            "package main\n\nfunc main() {\n\ts := \"é𝒳\"; _ = s; _ = Helper()\n\tsquare := Square{}\n\t_ = square.Area()\n}\n",
        ),
    ]);
    let tour = Tour {
        call: ("main.go", 4, "Helper"),
        typed: ("main.go", 5, "square"),
        interface: ("shapes.go", 6, "Shape"),
        hover: ("main.go", 4, "Helper"),
        outline: "shapes.go",
        query: "Helper",
    };
    let all = every_action(&p, &tour).await;
    assert_eq!(places(&all["definition"]), ["shapes.go:4"]);
    assert_eq!(places(&all["references"]), ["main.go:4", "shapes.go:4"]);
    assert_eq!(places(&all["type_definition"]), ["shapes.go:10"]);
    assert_eq!(places(&all["implementation"]), ["shapes.go:10"]);
    assert!(
        all["hover"]["hover"]
            .as_str()
            .unwrap()
            .contains("Helper helps."),
        "{}",
        all["hover"]
    );
    insta::assert_json_snapshot!("go_actions", all);
    p.shutdown().await;
}

const C_MAIN: &str = "/* Doubles x. */\nstatic int twice(int x) { return 2 * x; }\n\nstruct point { int x; int y; };\n\nint main(void) {\n    struct point p = {1, 2};\n    const char *s = \"é𝒳\"; return twice(s[0]) + p.x;\n}\n";

#[tokio::test]
async fn c_every_action_with_clangd_and_caps_that_truncate() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    // 210 functions calling `tick`: more references than 50, more symbols than 200.
    let mut many = String::from("static int tick(void) { return 0; }\n");
    for n in 0..210 {
        many.push_str(&format!("int f{n}(void) {{ return tick(); }}\n"));
    }
    let p = project(&[(".clangd", ""), ("main.c", C_MAIN), ("many.c", &many)]);
    let tour = Tour {
        call: ("main.c", 8, "twice"),
        // `p` is also inside `point`: the whole identifier is used.
        typed: ("main.c", 7, "p"),
        interface: ("main.c", 2, "twice"),
        hover: ("main.c", 8, "twice"),
        outline: "main.c",
        query: "twice",
    };
    let all = every_action(&p, &tour).await;
    assert_eq!(places(&all["definition"]), ["main.c:2"]);
    // Column 34 in characters; clangd chose UTF-8, so 37 bytes are sent: with UTF-16 units
    // (34) the position would land inside `return`.
    assert_eq!(all["definition"]["column"], 34, "{}", all["definition"]);
    assert_eq!(places(&all["references"]), ["main.c:2", "main.c:8"]);
    assert_eq!(places(&all["type_definition"]), ["main.c:4"]);
    assert!(
        all["hover"]["hover"]
            .as_str()
            .unwrap()
            .contains("Doubles x."),
        "{}",
        all["hover"]
    );
    insta::assert_json_snapshot!("c_actions", all);

    let references = p.lsp(at("references", ("many.c", 1, "tick"))).await;
    assert_eq!(references["total"], 211, "{references}");
    assert_eq!(references["truncated"], true);
    assert_eq!(references["locations"].as_array().unwrap().len(), 50);
    let outline = p.lsp(json!({"action": "symbols", "file": "many.c"})).await;
    assert_eq!(outline["total"], 211, "{outline}");
    assert_eq!(outline["truncated"], true);
    assert_eq!(outline["symbols"].as_array().unwrap().len(), 200);
    p.shutdown().await;
}

#[tokio::test]
async fn rust_every_action_with_utf8_columns() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let p = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        (
            "src/main.rs",
            "mod shapes;\nuse shapes::{Shape, Square};\n\nfn main() {\n    let _s = \"é𝒳\"; shapes::helper();\n    let square = Square;\n    println!(\"{}\", square.area());\n}\n",
        ),
        (
            "src/shapes.rs",
            "/// Helps.\npub fn helper() -> u32 {\n    1\n}\n\npub trait Shape {\n    fn area(&self) -> f64;\n}\n\npub struct Square;\n\nimpl Shape for Square {\n    fn area(&self) -> f64 {\n        4.0\n    }\n}\n",
        ),
    ]);
    let tour = Tour {
        call: ("src/main.rs", 5, "helper"),
        typed: ("src/main.rs", 6, "square"),
        interface: ("src/shapes.rs", 6, "Shape"),
        hover: ("src/main.rs", 5, "helper"),
        outline: "src/shapes.rs",
        query: "helper",
    };
    let all = every_action(&p, &tour).await;
    // rust-analyzer chose UTF-8: with UTF-16 units the position would land 3 bytes early,
    // on `shapes::` instead.
    assert_eq!(places(&all["definition"]), ["src/shapes.rs:2"]);
    assert_eq!(all["definition"]["column"], 28);
    assert_eq!(
        places(&all["references"]),
        ["src/main.rs:5", "src/shapes.rs:2"]
    );
    assert_eq!(places(&all["type_definition"]), ["src/shapes.rs:10"]);
    assert_eq!(places(&all["implementation"]), ["src/shapes.rs:12"]);
    assert!(
        all["hover"]["hover"].as_str().unwrap().contains("Helps."),
        "{}",
        all["hover"]
    );
    assert_eq!(all["diagnostics"]["diagnostics"], json!([]));
    insta::assert_json_snapshot!("rs_actions", all);
    p.shutdown().await;
}

/// `reload` restarts the server of that file's root only.
#[tokio::test]
async fn reload_restarts_one_roots_server() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let main = "int main(void) { return 0; }\n";
    let p = project(&[
        ("a/.clangd", ""),
        ("a/m.c", main),
        ("b/.clangd", ""),
        ("b/m.c", main),
    ]);
    let outline = |file: &str| json!({"action": "symbols", "file": file});
    let pid_of = |root: &str| {
        let root = p.ws.join(root);
        p.pool
            .running()
            .iter()
            .find(|server| server.root() == root)
            .and_then(|server| server.pid())
    };
    p.lsp(outline("a/m.c")).await;
    p.lsp(outline("b/m.c")).await;
    let (a, b) = (pid_of("a").unwrap(), pid_of("b").unwrap());
    let status = p.lsp(json!({"action": "status"})).await;
    let running: Vec<(String, String)> = status["languages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["language"] == "c")
        .map(|row| {
            assert_eq!(row["state"], "running", "{row}");
            // The pid, then what clangd cannot see without a compilation database.
            let reason = row["reason"].as_str().unwrap();
            let pid = reason.split(';').next().unwrap().to_owned();
            assert!(reason.contains("compile_commands.json"), "{row}");
            (row["root"].to_string(), pid)
        })
        .collect();
    assert_eq!(
        running,
        [
            ("\"a\"".to_owned(), format!("pid {a}")),
            ("\"b\"".to_owned(), format!("pid {b}"))
        ],
        "{status:#}"
    );

    let out = p.lsp(json!({"action": "reload", "file": "a/m.c"})).await;
    assert_eq!(
        out,
        json!({"action": "reload", "language": "c", "stopped": 1, "config_reread": true})
    );
    lsp_support::assert_group_gone(a).await;
    assert_eq!(pid_of("a"), None);
    assert_eq!(pid_of("b"), Some(b), "the other root's server runs on");

    let again = p.lsp(outline("a/m.c")).await;
    assert_eq!(again["symbols"][0]["name"], "main", "{again}");
    assert!(pid_of("a").is_some_and(|pid| pid != a), "restarted afresh");
    let out = p.lsp(json!({"action": "reload"})).await;
    assert_eq!(out["error"]["kind"], "invalid_arguments", "{out}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_missing_capability_is_not_supported_not_an_error() {
    if require_peer("bash-language-server").is_none() {
        return;
    }
    let p = project(&[("run.sh", "#!/bin/bash\nhello() { echo hi; }\nhello\n")]);
    let out = p.lsp(at("implementation", ("run.sh", 3, "hello"))).await;
    insta::assert_json_snapshot!("sh_not_supported", out);
    p.shutdown().await;
}

/// Quick fixes exist only for diagnostics handed back in the request's context: the
/// diagnostics on the line go along, fresh for the file as it is.
#[tokio::test]
async fn code_actions_offer_quick_fixes_for_the_diagnostics_on_the_line() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let p = project(&[
        ("package.json", "{}"),
        ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
        (
            "util.ts",
            "export function greet(n: string): string {\n  return \"hi \" + n;\n}\n",
        ),
        ("main.ts", "const s = \"x\";\nconsole.log(greet(s));\n"),
    ]);
    let out = p.lsp(at("code_actions", ("main.ts", 2, "greet"))).await;
    let actions = out["actions"].as_array().unwrap();
    let fix = actions
        .iter()
        .find(|a| {
            let title = a["title"].as_str().unwrap();
            title.contains("import") && title.contains("./util")
        })
        .unwrap_or_else(|| panic!("{out:#}"));
    assert_eq!(fix["kind"], "quickfix", "{out:#}");
    assert_eq!(fix["has_edit"], true, "{out:#}");
    assert_eq!(
        out["diagnostics"][0]["message"], "Cannot find name 'greet'.",
        "{out:#}"
    );
    p.shutdown().await;
}

#[tokio::test]
async fn clangd_offers_its_fix_it() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let p = project(&[
        (".clangd", ""),
        (
            "m.c",
            "#include <stdio.h>\nint main(void) {\n    int count = 1;\n    return coutn;\n}\n",
        ),
    ]);
    let out = p.lsp(at("code_actions", ("m.c", 4, "coutn"))).await;
    insta::assert_json_snapshot!("c_code_actions", out);
    p.shutdown().await;
}

#[tokio::test]
async fn basedpyright_code_actions_carry_the_diagnostics_context() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = project(&[
        ("pyproject.toml", ""),
        ("pkg/__init__.py", ""),
        (
            "pkg/util.py",
            "def greet(name: str) -> str:\n    return name\n",
        ),
        ("pkg/main.py", "print(greet(\"a\"))\n"),
    ]);
    let out = p.lsp(at("code_actions", ("pkg/main.py", 1, "greet"))).await;
    insta::assert_json_snapshot!("py_code_actions", out);
    p.shutdown().await;
}

/// Records what a call reports as progress.
#[derive(Default)]
struct Progress(std::sync::Mutex<Vec<String>>);

impl cc_tools::ProgressSink for Progress {
    fn report(&self, _progress: f64, _total: Option<f64>, message: Option<&str>) {
        self.0
            .lock()
            .unwrap()
            .push(message.unwrap_or_default().to_owned());
    }
}

/// A caller that listens for progress hears why the first call on a freshly started,
/// indexing server takes its time, and still gets the answer.
#[tokio::test]
async fn waiting_for_an_indexing_server_reports_progress() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let p = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        (
            "src/main.rs",
            "fn helper() -> u32 {\n    1\n}\n\nfn main() {\n    helper();\n}\n",
        ),
    ]);
    let progress = std::sync::Arc::new(Progress::default());
    let output = p
        .registry
        .call_with(
            "lsp",
            json!({"action": "definition", "file": "src/main.rs", "line": 6, "symbol": "helper"}),
            cc_tools::CallOptions {
                progress: Some(progress.clone()),
                ..cc_tools::CallOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(places(&output.value), ["src/main.rs:1"]);
    let messages = progress.0.lock().unwrap().clone();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("waiting for rust-analyzer to finish")),
        "{messages:?}"
    );
    p.shutdown().await;
}
