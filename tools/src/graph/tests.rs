//! The `graph` tool on real projects: every action, its text (snapshots), freshness across
//! our own writes and writes behind our back.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::tool::ProgressSink;
use crate::{CallOptions, Registry, Resources, Run, Surface};

/// A registry over `dir` with the parser set (so `graph`) and the host file tools, its index
/// under `cache`.
fn registry(dir: &Path, cache: &Path, surface: Surface) -> Registry {
    Resources {
        host_files: true,
        parsers: Some(Arc::new(cc_structural::Languages::builtin())),
        graph: Some(Ok(cc_graph::GraphConfig {
            cache_dir: cache.to_path_buf(),
            threads: 2,
            // The precise tier has its own tests (tools/tests/it/graph_precise.rs).
            precise: false,
            ..cc_graph::GraphConfig::default()
        })),
        ..Default::default()
    }
    .build(
        Run::builder(dir)
            .conversation("graph")
            .surface(surface)
            .build(),
    )
}

async fn call(registry: &Registry, args: Value) -> (Value, String) {
    match registry.call("graph", args.clone()).await {
        Ok(output) => {
            let text = output.render_text();
            crate::testing::assert_typed_result("graph", &output.value, &text);
            (output.value, text)
        }
        Err(error) => panic!("graph {args}: {}", error.to_envelope()),
    }
}

/// The text without what changes from run to run (the index's folder, times).
fn stable(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with("index: /") || line.contains("since the epoch") {
                "index: <path and time>".to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Default)]
struct Progress(Mutex<Vec<(f64, Option<f64>)>>);

impl ProgressSink for Progress {
    fn report(&self, progress: f64, total: Option<f64>, _message: Option<&str>) {
        self.0.lock().unwrap().push((progress, total));
    }
}

#[tokio::test]
async fn every_action_answers_on_requests() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(project.path(), cache.path(), Surface::Plan);
    assert!(registry
        .schemas(Surface::Plan)
        .iter()
        .any(|s| s.name == "graph"));

    // The first call builds the index, with progress.
    let progress = Arc::new(Progress::default());
    let output = registry
        .call_with(
            "graph",
            json!({"action": "status"}),
            CallOptions {
                progress: Some(progress.clone()),
                cancel: None,
            },
        )
        .await
        .unwrap();
    let status = output.value.clone();
    let reports = progress.0.lock().unwrap().clone();
    let last = reports.last().copied().expect("progress while indexing");
    assert_eq!(Some(last.0), last.1, "{reports:?}");
    assert!(status["files_per_language"]["python"].as_u64().unwrap() > 30);
    assert_eq!(status["index"]["fresh"], true);
    assert_eq!(status["index"]["opened"]["rebuilt"], true);
    insta::assert_snapshot!("requests_status", stable(&output.render_text()));

    let (symbols, text) = call(
        &registry,
        json!({"action": "symbols", "query": "request", "kind": "function", "max_results": 5}),
    )
    .await;
    assert_eq!(symbols["results"][0]["qualified_name"], "request");
    assert!(symbols["total"].as_u64().unwrap() >= 1);
    insta::assert_snapshot!("requests_symbols", stable(&text));

    let (outline, text) = call(
        &registry,
        json!({"action": "outline", "file": "src/requests/api.py"}),
    )
    .await;
    assert_eq!(outline["definitions"][0]["name"], "request");
    insta::assert_snapshot!("requests_outline", stable(&text));

    let (callers, text) = call(
        &registry,
        json!({"action": "callers", "file": "src/requests/api.py", "line": 24, "symbol": "request"}),
    )
    .await;
    assert_eq!(callers["target"]["qualified_name"], "request");
    let from: Vec<&str> = callers["callers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["from"]["qualified_name"].as_str())
        .collect();
    assert!(from.contains(&"get") && from.contains(&"post"), "{from:?}");
    insta::assert_snapshot!("requests_callers", stable(&text));

    // A use resolves to what it calls: `request(` inside `get` is api.request.
    let (via_use, _) = call(
        &registry,
        json!({"action": "callers", "file": "src/requests/api.py", "line": 87, "symbol": "request"}),
    )
    .await;
    assert_eq!(via_use["target"]["line"], 24, "{via_use}");

    let (callees, text) = call(
        &registry,
        json!({"action": "callees", "file": "src/requests/sessions.py", "line": 557, "symbol": "request"}),
    )
    .await;
    let targets: Vec<&str> = callees["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["target"]["qualified_name"].as_str())
        .collect();
    assert!(targets.contains(&"Session.prepare_request"), "{targets:?}");
    assert!(targets.contains(&"Session.send"), "{targets:?}");
    insta::assert_snapshot!("requests_callees", stable(&text));

    let (impact, text) = call(
        &registry,
        json!({"action": "impact", "file": "src/requests/sessions.py", "line": 76, "symbol": "merge_setting", "depth": 2}),
    )
    .await;
    assert!(impact["total"].as_u64().unwrap() >= 2, "{impact}");
    assert_eq!(impact["levels"][0]["depth"], 1);
    insta::assert_snapshot!("requests_impact", stable(&text));

    let (map, text) = call(&registry, json!({"action": "map", "budget_tokens": 512})).await;
    assert!(map["tokens"].as_u64().unwrap() <= 512, "{}", map["tokens"]);
    assert!(cc_graph::views::repo_map::tokens(&text) < 700, "{text}");
    insta::assert_snapshot!("requests_map", stable(&text));

    // Every default answer stays under ~4k tokens.
    for args in [
        json!({"action": "map"}),
        json!({"action": "symbols", "query": "get"}),
        json!({"action": "outline", "file": "src/requests/sessions.py"}),
    ] {
        let (_, text) = call(&registry, args.clone()).await;
        assert!(
            cc_graph::views::repo_map::tokens(&text) < 4000,
            "{args}: {}",
            text.len()
        );
    }
}

#[tokio::test]
async fn callers_and_impact_on_pflag() {
    let Some(project) = cc_test_support::copy_project("pflag") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(project.path(), cache.path(), Surface::ReadonlySubagent);
    let (callers, text) = call(
        &registry,
        json!({"action": "callers", "file": "flag.go", "line": 848, "symbol": "AddFlag", "max_results": 8}),
    )
    .await;
    assert_eq!(callers["target"]["qualified_name"], "FlagSet.AddFlag");
    assert_eq!(callers["truncated"], callers["total"].as_u64().unwrap() > 8);
    insta::assert_snapshot!("pflag_callers", stable(&text));
    let (impact, text) = call(
        &registry,
        json!({"action": "impact", "file": "flag.go", "line": 355, "symbol": "Lookup", "depth": 2, "max_results": 15}),
    )
    .await;
    assert_eq!(impact["tests"], json!(["flag_test.go"]), "{impact}");
    assert!(impact["total"].as_u64().unwrap() > 15);
    assert_eq!(impact["truncated"], true);
    insta::assert_snapshot!("pflag_impact", stable(&text));
    // Every list is cut at `max_results`, as the dependents are; the totals count all.
    let (few, text) = call(
        &registry,
        json!({"action": "impact", "file": "flag.go", "line": 355, "symbol": "Lookup", "depth": 2, "max_results": 2}),
    )
    .await;
    let files_total = impact["files_total"].as_u64().unwrap();
    assert!(files_total > 2, "{impact}");
    assert_eq!(few["files_total"], files_total, "{few}");
    assert_eq!(
        few["files"],
        json!(impact["files"].as_array().unwrap()[..2])
    );
    assert_eq!(few["tests_total"], 1, "{few}");
    assert!(
        text.contains(&format!("in {files_total} file(s)")) && text.contains("(first 2 of"),
        "{text}"
    );
    let (map, _) = call(
        &registry,
        json!({"action": "map", "focus": ["ip.go"], "budget_tokens": 256}),
    )
    .await;
    assert_eq!(map["files"][0]["path"], "ip.go", "{map}");
}

#[tokio::test]
async fn bad_positions_are_clear_errors() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(project.path(), cache.path(), Surface::Full);
    for (args, kind) in [
        (
            json!({"action": "callers", "file": "src/requests/api.py", "line": 24}),
            "invalid_arguments",
        ),
        (
            json!({"action": "callers", "file": "src/requests/api.py", "line": 24, "symbol": "nope"}),
            "symbol_not_found",
        ),
        (
            json!({"action": "callers", "file": "src/requests/api.py", "line": 9999, "symbol": "x"}),
            "symbol_not_found",
        ),
        (
            json!({"action": "outline", "file": "../etc/passwd"}),
            "outside_root",
        ),
        (
            json!({"action": "symbols", "query": "x", "kind": "widget"}),
            "invalid_arguments",
        ),
    ] {
        let error = registry.call("graph", args.clone()).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{args}: {error}");
    }
}

/// The sites `callers` lists, as `path:line from`.
fn sites(callers: &Value) -> Vec<String> {
    callers["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}:{} {}",
                c["path"].as_str().unwrap(),
                c["line"],
                c["from"]["qualified_name"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

/// `callers` of requests' `request` (9 call sites in the package as installed).
fn requests_callers() -> Value {
    json!({"action": "callers", "file": "src/requests/api.py", "line": 24, "symbol": "request"})
}

/// A copy of requests, its index's folder and a registry whose graph is open (its first
/// `callers` answered, with the 9 sites of the installed package).
async fn requests_with_an_open_graph(
) -> Option<(cc_test_support::ProjectCopy, tempfile::TempDir, Registry)> {
    let project = cc_test_support::copy_project("requests")?;
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(project.path(), cache.path(), Surface::Full);
    let (before, _) = call(&registry, requests_callers()).await;
    assert_eq!(before["total"], 9);
    Some((project, cache, registry))
}

#[tokio::test]
async fn our_writes_and_writes_behind_our_back_are_seen_without_a_rebuild() {
    let Some((project, _cache, registry)) = requests_with_an_open_graph().await else {
        return;
    };
    let callers = requests_callers();

    // A new file through `write`: its call is an edge as soon as the write returns.
    registry
        .call(
            "write",
            json!({"path": "src/requests/extra.py", "content": "from .api import request\n\n\ndef fetch(url):\n    return request(\"get\", url)\n"}),
        )
        .await
        .unwrap();
    // A new call in an existing file through `edit`.
    registry
        .call(
            "edit",
            json!({"path": "src/requests/help.py", "old_text": "def main():\n", "new_text": "def main():\n    from .api import request\n    request(\"head\", \"http://example.com\")\n"}),
        )
        .await
        .unwrap();
    let (after, _) = call(&registry, callers.clone()).await;
    let listed = sites(&after);
    assert!(
        listed.contains(&"src/requests/extra.py:5 fetch".to_owned()),
        "{listed:?}"
    );
    assert!(
        listed
            .iter()
            .any(|s| s.starts_with("src/requests/help.py:") && s.ends_with(" main")),
        "{listed:?}"
    );
    assert_eq!(after["total"], 11);
    // Nothing was stale: the writes had updated the index.
    assert_eq!(after["index"]["updated"], json!([]), "{}", after["index"]);
    assert_eq!(after["index"]["fresh"], true);
    assert!(after["index"].get("opened").is_none());

    // A change behind our back is caught by the stat check of the next call.
    std::fs::write(
        project.path().join("src/requests/extra.py"),
        "from .api import request\n\n\ndef fetch(url):\n    return 1\n",
    )
    .unwrap();
    let (behind, text) = call(&registry, callers).await;
    assert_eq!(behind["total"], 10, "{text}");
    assert_eq!(behind["index"]["updated"], json!(["src/requests/extra.py"]));
    assert!(
        text.contains("1 file(s) changed on disk re-read now: src/requests/extra.py"),
        "{text}"
    );
}

/// The shell makes a file, the run edits it (the write updates the index), then the shell
/// takes it away again (`git stash -u`) before the next call, which no longer lists its call
/// (the watcher does not take the file for one born and gone unseen).
#[tokio::test]
async fn a_shell_made_file_the_run_edited_then_the_shell_removed_leaves_the_index() {
    let Some((project, _cache, registry)) = requests_with_an_open_graph().await else {
        return;
    };
    let callers = requests_callers();
    let generated = project.path().join("src/requests/gen.py");
    std::fs::write(
        &generated,
        "from .api import request\n\n\ndef fetch(url):\n    return url\n",
    )
    .unwrap();
    registry
        .call(
            "edit",
            json!({"path": "src/requests/gen.py", "old_text": "    return url\n", "new_text": "    return request(\"get\", url)\n"}),
        )
        .await
        .unwrap();
    // No graph call in between: the write alone put the file in the index.
    std::fs::remove_file(&generated).unwrap();
    let (after, text) = call(&registry, callers).await;
    assert_eq!(after["total"], 9, "{text}");
    assert!(
        !sites(&after)
            .iter()
            .any(|s| s.starts_with("src/requests/gen.py")),
        "{text}"
    );
    // Said as what happened to it: dropped, not re-read.
    assert_eq!(after["index"]["removed"], json!(["src/requests/gen.py"]));
    assert_eq!(after["index"]["updated"], json!([]));
    assert!(
        text.contains("1 file(s) gone from disk dropped now: src/requests/gen.py")
            && !text.contains("re-read now"),
        "{text}"
    );
}

/// The shell moves a definition (two lines above it) and the agent asks at its old line: the
/// call fails, and its error says what the index took in first, since that is where the
/// failure comes from and the next answer will not list the file again.
#[tokio::test]
async fn a_call_that_fails_after_taking_in_shell_changes_says_what_it_took_in() {
    let Some((project, _cache, registry)) = requests_with_an_open_graph().await else {
        return;
    };
    let api = project.path().join("src/requests/api.py");
    let text = std::fs::read_to_string(&api).unwrap();
    std::fs::write(&api, format!("import os\nimport sys\n{text}")).unwrap();
    let error = registry
        .call("graph", requests_callers())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "symbol_not_found", "{}", error.message());
    assert!(
        error.message().contains(
            "the index took in 1 file(s) changed on disk re-read first: src/requests/api.py"
        ),
        "{}",
        error.message()
    );
    assert_eq!(
        error.details()["index_updated"],
        json!(["src/requests/api.py"])
    );
    // At its new line the same call answers, with nothing left to take in.
    let (moved, text) = call(
        &registry,
        json!({"action": "callers", "file": "src/requests/api.py", "line": 26, "symbol": "request"}),
    )
    .await;
    assert_eq!(moved["total"], 9, "{text}");
    assert_eq!(moved["index"]["updated"], json!([]), "{text}");
}

#[tokio::test]
async fn verify_without_a_language_server_is_unverifiable() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(project.path(), cache.path(), Surface::Plan);
    let (callers, text) = call(
        &registry,
        json!({"action": "callers", "file": "src/requests/api.py", "line": 24, "symbol": "request", "verify": true}),
    )
    .await;
    assert_eq!(callers["verification"]["unverifiable"], 9, "{text}");
    assert_eq!(callers["verification"]["confirmed"], 0);
    assert!(callers["callers"][0]["verify_note"]
        .as_str()
        .unwrap()
        .starts_with("no language server answered"));
    assert!(
        text.contains("0 confirmed, 0 refuted, 9 unverifiable"),
        "{text}"
    );
    let error = registry
        .call("graph", json!({"action": "map", "verify": true}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "invalid_arguments");
}

/// Issue 26: an index that ignore rules keep empty says so, with the rule file, in JSON and
/// in the text; outside a git repository `.gitignore` is nobody's rule.
#[tokio::test]
async fn an_index_kept_empty_by_ignore_rules_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a.c"), "void f(void) { g(); }\n").unwrap();
    std::fs::write(root.join("sub/b.c"), "void g(void) {}\n").unwrap();
    std::fs::write(root.join(".gitignore"), "/*\n").unwrap();
    let args = json!({"action": "status"});
    let outside_cache = tempfile::tempdir().unwrap();
    let (outside, _) = call(
        &registry(root, outside_cache.path(), Surface::Full),
        args.clone(),
    )
    .await;
    assert_eq!(outside["index"]["files"], 2, "{outside:#}");
    assert!(outside["index"].get("left_out_by_ignore").is_none());

    std::fs::create_dir(root.join(".git")).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (value, text) = call(&registry(root, cache.path(), Surface::Full), args).await;
    assert_eq!(value["index"]["files"], 0, "{value:#}");
    assert_eq!(
        value["index"]["left_out_by_ignore"],
        json!({"files": 2, "capped": false, "rules": [{"file": ".gitignore", "files": 2}]})
    );
    assert!(
        text.contains(
            "2 file(s) of indexed languages are not in the index, left out by ignore rules: \
             2 by .gitignore"
        ),
        "{text}"
    );
}

/// Non-negotiable 7: "no match" (no definition, no caller, no dependent) from a tree where a
/// file did not parse says so. A C region tree-sitter cannot read swallows what follows it.
#[tokio::test]
async fn no_match_says_that_files_with_syntax_errors_may_hide_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("good.c"),
        "int visible(void) { return 1; }\nint caller(void) { return visible(); }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("broken.c"),
        "int ok(void) { return 0; }\nint (((broken( { ]]\nint hidden_after_error(void) { return 2; }\n",
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(root, cache.path(), Surface::Full);
    let (found, _) = call(&registry, json!({"action": "symbols", "query": "visible"})).await;
    assert_eq!(found["total"], 1, "{found:#}");
    assert!(found["files_with_syntax_errors"].is_null(), "{found:#}");
    let (value, text) = call(
        &registry,
        json!({"action": "symbols", "query": "nothing_like_it"}),
    )
    .await;
    assert_eq!(value["total"], 0, "{value:#}");
    assert_eq!(value["files_with_syntax_errors"], 1, "{value:#}");
    assert!(
        text.starts_with(
            "no definitions match `nothing_like_it` among those indexed; 1 indexed file(s) have \
             syntax errors, and a definition where a file did not parse is not indexed"
        ),
        "{text}"
    );
    // A caller found: no caveat.
    let (value, _) = call(
        &registry,
        json!({"action": "callers", "file": "good.c", "line": 1, "symbol": "visible"}),
    )
    .await;
    assert_eq!(value["total"], 1, "{value:#}");
    assert!(value["files_with_syntax_errors"].is_null(), "{value:#}");
    // No caller, no dependent: said with the same caveat (the broken file may call it).
    for action in ["callers", "impact"] {
        let (value, text) = call(
            &registry,
            json!({"action": action, "file": "good.c", "line": 2, "symbol": "caller"}),
        )
        .await;
        assert_eq!(value["total"], 0, "{value:#}");
        assert_eq!(value["files_with_syntax_errors"], 1, "{value:#}");
        assert!(
            text.contains("1 indexed file(s) have syntax errors, and a"),
            "{text}"
        );
    }
}
