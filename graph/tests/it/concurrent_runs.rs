//! Four runs on one root at once share one index (issue 27), as four agents' MCP servers on
//! one project would: all four open it together (one builds, the others wait for that build
//! instead of building again or removing it), two write files and update the index while two
//! query it. No call fails, no answer is torn (what a query saw before it sees after), and
//! each writer's next answer has its own write.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use std::sync::{Arc, Barrier};

use cc_graph::{Graph, DEFAULT_MIN_CONFIDENCE};

const ROUNDS: usize = 15;

#[test]
fn four_runs_on_one_root_share_one_index() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let root = project.path().to_path_buf();
    let start = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|run| {
            let root = root.clone();
            let config = common::config(cache.path());
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                let (mut graph, _) = Graph::open_with(&root, config)
                    .unwrap_or_else(|e| panic!("run {run} could not open: {e}"));
                let get = graph.find("get", Some("src/requests/api.py")).unwrap()[0].clone();
                let mut seen = 0;
                for round in 0..ROUNDS {
                    if run < 2 {
                        // A writer: a new module calling `requests.api.get`, then its update.
                        let rel = format!("src/requests/run{run}_{round}.py");
                        std::fs::write(
                            root.join(&rel),
                            format!(
                                "from .api import get\n\n\ndef fetch_{run}_{round}():\n    return get('x')\n"
                            ),
                        )
                        .unwrap();
                        graph
                            .update(&[rel.as_str()])
                            .unwrap_or_else(|e| panic!("run {run} update {round}: {e}"));
                        let name = format!("fetch_{run}_{round}");
                        assert_eq!(
                            graph.find(&name, None).unwrap().len(),
                            1,
                            "run {run} does not see its own write {rel}"
                        );
                        let callers = graph.callers(get.id, DEFAULT_MIN_CONFIDENCE).unwrap();
                        assert!(
                            callers.value.sites.iter().any(|s| s.path == rel),
                            "run {run}: the call in {rel} is not a caller of get"
                        );
                        // The kept ranks took in its own write.
                        let added = graph
                            .find(&name, None)
                            .unwrap()
                            .first()
                            .unwrap_or_else(|| panic!("run {run}: {name} left the index"))
                            .id;
                        let ranks = graph.rank_of(&[added, get.id]).unwrap();
                        assert!(
                            ranks.get(&added).is_some_and(|r| *r > 0.0)
                                && ranks.get(&get.id).is_some_and(|r| *r > 0.0),
                            "run {run}: no rank for {name} or get: {ranks:?}"
                        );
                    } else {
                        // A reader: the callers only grow while the writers add calls.
                        let callers = graph
                            .callers(get.id, DEFAULT_MIN_CONFIDENCE)
                            .unwrap_or_else(|e| panic!("run {run} callers {round}: {e}"));
                        let n = callers.value.sites.len();
                        assert!(n >= seen, "run {run}: {n} callers after {seen}");
                        seen = n;
                        let symbols = graph.symbols("Session", 20).unwrap();
                        assert!(!symbols.value.is_empty(), "run {run}: no Session");
                        let map = graph
                            .rank(&[], 20, DEFAULT_MIN_CONFIDENCE)
                            .unwrap_or_else(|e| panic!("run {run} rank {round}: {e}"));
                        assert_eq!(map.value.len(), 20, "run {run}: a short map");
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    // All of it in the one index: a fresh open sees every writer's files.
    let (graph, stats) = Graph::open_with(&root, common::config(cache.path())).unwrap();
    assert!(!stats.rebuilt, "the shared index was rebuilt: {stats:?}");
    let get = &graph.find("get", Some("src/requests/api.py")).unwrap()[0];
    let callers = graph.callers(get.id, DEFAULT_MIN_CONFIDENCE).unwrap();
    let written = callers
        .value
        .sites
        .iter()
        .filter(|s| s.path.contains("/run"))
        .count();
    assert_eq!(written, 2 * ROUNDS);
    // The ranks both writers kept current are a clean build's.
    let kept = common::ranks(&graph);
    let fresh = tempfile::tempdir().unwrap();
    let (clean, _) = Graph::open_with(&root, common::config(fresh.path())).unwrap();
    let clean = common::ranks(&clean);
    assert_eq!(kept.len(), clean.len());
    for (place, score) in &clean {
        let kept = kept.get(place).copied().unwrap_or(f64::NAN);
        assert!(
            (kept - score).abs() <= 0.01 * score,
            "{place}: kept {kept}, clean {score}"
        );
    }
}
