//! `symbols` stops reading candidates once the better match tiers fill the answer: the answer
//! for a limit is the head of the answer for a larger one, on a real project.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use cc_graph::Graph;

mod common;

#[test]
fn a_limited_answer_is_the_head_of_the_full_one() {
    let Some(project) = cc_process::testing::copy_project("requests") else {
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
