//! The `graph` tool through `cc-harness mcp`, driven by the official Python MCP SDK client,
//! on a real project: every action answers on the plan surface and on the full one, the
//! first call reports indexing progress, and a write is seen by the next `callers`.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::common;

#[test]
fn every_graph_action_answers_through_mcp_on_requests() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let Some(python) = common::python_with(&["mcp"]) else {
        return;
    };
    // The index goes where `[graph]` says, not into the user's cache.
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".cc")).unwrap();
    std::fs::write(
        project.path().join(".cc/tools.toml"),
        format!(
            "[graph]\ncache_dir = {:?}\n",
            cache.path().display().to_string()
        ),
    )
    .unwrap();
    let report = common::run_client_script(&python, "mcp_graph.py", &[project.path().as_os_str()]);

    for surface in ["plan", "full"] {
        let session = &report[surface];
        assert_eq!(session["listed"], true, "{surface} lists graph");
        assert_eq!(session["read_only"], true, "{surface}");
        for action in [
            "status", "symbols", "outline", "callers", "callees", "impact", "map",
        ] {
            let result = &session[action];
            assert_eq!(result["is_error"], false, "{surface} {action}: {result}");
            assert_eq!(result["structured"]["action"], action, "{surface} {action}");
            assert_eq!(
                result["structured"]["index"]["fresh"], true,
                "{surface} {action}"
            );
            assert!(
                result["text"].as_str().unwrap().contains("index: 35 files"),
                "{surface} {action}: {result}"
            );
        }
        assert!(session["status"]["structured"]["index_path"]
            .as_str()
            .unwrap()
            .starts_with(&*cache.path().to_string_lossy()));
        assert_eq!(
            session["symbols"]["structured"]["results"][0]["qualified_name"],
            "Session"
        );
        assert_eq!(session["callers"]["structured"]["total"], 9);
        assert_eq!(
            session["map"]["structured"]["files"][0]["path"],
            "src/requests/api.py"
        );
    }
    // The plan session built the index (progress up to the total); the full one reopened it.
    let progress = report["plan"]["progress"].as_array().unwrap();
    let last = progress.last().expect("progress while indexing");
    assert_eq!(last[0], last[1], "{progress:?}");
    assert!(
        last[2].as_str().unwrap().starts_with("indexed 35 of 35"),
        "{last}"
    );
    assert_eq!(
        report["plan"]["status"]["structured"]["index"]["opened"]["rebuilt"],
        true
    );
    assert_eq!(
        report["full"]["status"]["structured"]["index"]["opened"]["rebuilt"],
        false
    );

    let full = &report["full"];
    assert_eq!(full["write"]["is_error"], false, "{}", full["write"]);
    let after = &full["callers_after_write"]["structured"];
    assert_eq!(after["total"], 10, "{after}");
    assert_eq!(after["index"]["updated"], serde_json::json!([]), "{after}");
    assert!(full["callers_after_write"]["text"]
        .as_str()
        .unwrap()
        .contains("src/requests/extra.py:5 in function fetch"));
}
