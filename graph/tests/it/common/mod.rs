//! Shared helpers: a tree written to a temporary folder and indexed with a private cache.

#![allow(dead_code)]
#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::path::Path;

use cc_graph::{Graph, GraphConfig, DEFAULT_MIN_CONFIDENCE};

pub struct Indexed {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
    pub graph: Graph,
}

pub fn config(cache: &Path) -> GraphConfig {
    GraphConfig {
        cache_dir: cache.to_path_buf(),
        threads: 2,
        ..GraphConfig::default()
    }
}

/// The whole tree's ranks (kept by the index), by where each definition is.
pub fn ranks(graph: &Graph) -> std::collections::BTreeMap<String, f64> {
    graph
        .rank(&[], usize::MAX, DEFAULT_MIN_CONFIDENCE)
        .unwrap()
        .value
        .into_iter()
        .map(|r| {
            let s = r.symbol;
            (
                format!("{}:{}:{}:{}", s.path, s.qualified_name, s.line, s.column),
                r.score,
            )
        })
        .collect()
}

pub fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

pub fn index(files: &[(&str, &str)]) -> Indexed {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write_tree(dir.path(), files);
    let (graph, _) = Graph::open_with(dir.path(), config(cache.path())).unwrap();
    Indexed { dir, cache, graph }
}

impl Indexed {
    /// `path:line rung` of each caller of the one definition called `name`.
    pub fn callers(&self, name: &str) -> Vec<String> {
        self.callers_in(name, None)
    }

    /// As [`Indexed::callers`], of the definition called `name` in `path`.
    pub fn callers_in(&self, name: &str, path: Option<&str>) -> Vec<String> {
        let found = self.graph.find(name, path).unwrap();
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        let callers = self
            .graph
            .callers(found[0].id, DEFAULT_MIN_CONFIDENCE)
            .unwrap();
        callers
            .value
            .sites
            .iter()
            .map(|s| format!("{}:{} {}", s.path, s.line, s.rung.as_str()))
            .collect()
    }
}

/// Runs every precise indexer the tree has (the peer each needs is required: missing, it
/// fails under CI and skips loudly here, returning `None`) and imports its output.
pub fn make_precise(
    graph: &mut Graph,
) -> Option<Vec<(cc_graph::Indexer, cc_graph::PreciseImport)>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for plan in graph
        .precise_plans(&cc_graph::PreciseOptions::default())
        .unwrap()
    {
        if plan.current {
            continue;
        }
        let output = if plan.cached() {
            plan.output.clone()
        } else {
            match runtime.block_on(cc_graph::precise::run(&plan)) {
                Ok(output) => output,
                Err(e @ cc_graph::precise::PreciseError::Missing { .. }) => {
                    cc_test_support::missing_peer(plan.indexer.binary(), &e.to_string());
                    return None;
                }
                Err(e) => panic!("{e}"),
            }
        };
        let output = cc_graph::precise::read_output(&plan, &output).unwrap();
        out.push((plan.indexer, graph.import_precise(&plan, &output).unwrap()));
    }
    Some(out)
}
