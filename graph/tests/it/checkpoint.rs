//! A write's log is folded into the index by the graph's checkpoint thread, not inside the
//! write's commit (which paid SQLite's automatic checkpoint, about a third of a one-file
//! update on the kernel tree), on a real project.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cc_graph::Graph;

const MARKER: &str = "written_behind_the_commit_by_the_checkpoint_thread";

/// The index the graph keeps in `cache` (one folder per root).
fn index_file(cache: &Path) -> PathBuf {
    std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|entry| entry.path().join("index.sqlite"))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("no index.sqlite under {}", cache.display()))
}

fn holds(path: &Path, needle: &str) -> bool {
    std::fs::read(path)
        .unwrap()
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn an_update_is_folded_into_the_index_after_its_commit_while_the_graph_lives() {
    let Some(project) = cc_test_support::copy_project("requests") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let (mut graph, _) = Graph::open_with(project.path(), common::config(cache.path())).unwrap();
    let index = index_file(cache.path());
    let rel = "src/requests/checkpointed.py";
    std::fs::write(
        project.path().join(rel),
        format!("from .api import get\n\n\ndef {MARKER}():\n    return get('x')\n"),
    )
    .unwrap();
    graph.update(&[rel]).unwrap();
    assert_eq!(graph.find(MARKER, None).unwrap().len(), 1);
    // A one-file update stays far below SQLite's automatic threshold, which is now only a
    // backstop: the definition reaches the index file only through the thread.
    let waited = Instant::now();
    while !holds(&index, MARKER) {
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the update's pages stayed in the write-ahead log"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(graph);
}
