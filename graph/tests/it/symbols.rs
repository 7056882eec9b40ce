//! `symbols` stops reading candidates once the better match tiers fill the answer: the answer
//! for a limit is the head of the answer for a larger one, on a real project. Its kept list
//! of names follows this run's writes and another run's.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use cc_graph::Graph;

use crate::common;

#[test]
fn a_limited_answer_is_the_head_of_the_full_one() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let (graph, _) = Graph::open_with(project.path(), common::config(cache.path())).unwrap();
    for query in ["get", "request", "Session", "a", "encode", "zzz_none"] {
        let all = graph.symbols(query, 100_000).unwrap().value;
        for limit in [1, 5, 20] {
            let some = graph.symbols(query, limit).unwrap().value;
            let ids = |r: &[cc_graph::Ranked]| r.iter().map(|r| r.symbol.id).collect::<Vec<_>>();
            let head = &all[..limit.min(all.len())];
            assert_eq!(ids(&some), ids(head), "{query} limit {limit}");
        }
    }
}

#[test]
fn the_names_follow_this_runs_writes_and_another_runs() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let root = project.path();
    let cache = tempfile::tempdir().unwrap();
    let (mut this, _) = Graph::open_with(root, common::config(cache.path())).unwrap();
    let (mut other, _) = Graph::open_with(root, common::config(cache.path())).unwrap();
    let names = |graph: &Graph, query: &str| -> Vec<String> {
        let mut found: Vec<String> = graph
            .symbols(query, 100)
            .unwrap()
            .value
            .into_iter()
            .map(|r| format!("{}:{}", r.symbol.path, r.symbol.name))
            .collect();
        found.sort();
        found
    };
    assert!(names(&this, "zz_probe").is_empty());
    let write = |rel: &str, text: &str| std::fs::write(root.join(rel), text).unwrap();
    write("src/requests/zz_one.py", "def zz_probe_one():\n    pass\n");
    this.update(&["src/requests/zz_one.py"]).unwrap();
    assert_eq!(
        names(&this, "zz_probe"),
        ["src/requests/zz_one.py:zz_probe_one"]
    );
    // Renamed in place: the old name is gone, the new one found, once.
    write("src/requests/zz_one.py", "def zz_probe_two():\n    pass\n");
    this.update(&["src/requests/zz_one.py"]).unwrap();
    assert_eq!(
        names(&this, "zz_probe"),
        ["src/requests/zz_one.py:zz_probe_two"]
    );
    write(
        "src/requests/zz_one.py",
        "def zz_probe_two():\n    pass\n\ndef zz_probe_one():\n    pass\n",
    );
    this.update(&["src/requests/zz_one.py"]).unwrap();
    assert_eq!(
        names(&this, "zz_probe"),
        [
            "src/requests/zz_one.py:zz_probe_one",
            "src/requests/zz_one.py:zz_probe_two"
        ]
    );
    // Another run's write, committed to the shared index.
    write(
        "src/requests/zz_other.py",
        "def zz_probe_other():\n    pass\n",
    );
    other.update(&["src/requests/zz_other.py"]).unwrap();
    assert_eq!(
        names(&this, "zz_probe"),
        [
            "src/requests/zz_one.py:zz_probe_one",
            "src/requests/zz_one.py:zz_probe_two",
            "src/requests/zz_other.py:zz_probe_other"
        ]
    );
}
