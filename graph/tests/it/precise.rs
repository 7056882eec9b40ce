//! The precise tier's invariants on a small TypeScript tree with the real scip-typescript:
//! what the indexer says lands as `precise` edges (a call through an interface-typed
//! parameter, which tree-sitter alone cannot place); a library's symbol is no edge; a file
//! changed after the plan is left to tree-sitter (`changed_since`) and pending; a change
//! drops that file's precise rows and a removed definition's incoming ones; a tree back in an
//! earlier state finds its output in the cache; `[graph] precise = false` plans nothing.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use cc_graph::{Graph, PreciseOptions, DEFAULT_MIN_CONFIDENCE};

const SHAPES: &str = "export interface Shape {\n  area(): number;\n}\n\n\
export class Square implements Shape {\n  constructor(private side: number) {}\n  area(): number {\n    return this.side * this.side;\n  }\n}\n";

const REPORT: &str = "import { Shape, Square } from './shapes';\n\n\
function pick(): Shape | undefined {\n  return new Square(2);\n}\n\n\
export function total(): number {\n  const found = pick();\n  const s = found ?? new Square(1);\n  setTimeout(() => {}, 0);\n  return s.area();\n}\n\n\
export function measure(shape: Partial<Shape>): number {\n  return shape.area ? shape.area() : 0;\n}\n\n\
export function literal(): number {\n  return measure({ area: () => 3 });\n}\n";

const TSCONFIG: &str =
    "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true, \"target\": \"es2020\"}}\n";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `path:line rung` of the callers of `qualified` (one definition).
fn callers(graph: &Graph, qualified: &str) -> Vec<String> {
    let def = &graph.find(qualified, None).unwrap()[0];
    graph
        .callers(def.id, DEFAULT_MIN_CONFIDENCE)
        .unwrap()
        .value
        .sites
        .iter()
        .map(|s| format!("{}:{} {}", s.path, s.line, s.rung.as_str()))
        .collect()
}

#[test]
fn precise_edges_their_invalidation_and_the_content_cache() {
    if cc_test_support::require_peer("scip-typescript").is_none() {
        cc_test_support::missing_peer("scip-typescript", "the precise tier's tests");
        return;
    }
    let mut t = common::index(&[
        ("tsconfig.json", TSCONFIG),
        ("shapes.ts", SHAPES),
        ("report.ts", REPORT),
    ]);
    // `s` is `found ?? new Square(1)`: `Shape | Square`, which tree-sitter does not type.
    let before = callers(&t.graph, "Square.area");
    assert!(
        !before.iter().any(|c| c.starts_with("report.ts:11")),
        "{before:?}"
    );

    let imports = common::make_precise(&mut t.graph).unwrap();
    assert_eq!(imports.len(), 1, "{imports:?}");
    let (_, import) = &imports[0];
    assert_eq!(import.files, 2, "{import:?}");
    // It covers the whole tree: the next answer that ranks computes the ranks whole.
    assert!(!import.ranks_followed, "{import:?}");
    assert!(import.no_edge > 0, "setTimeout is a library's: {import:?}");
    // The call resolves to the interface's method, which `Square.area` implements: a
    // precise edge to one, a dispatch edge to the other.
    assert!(
        callers(&t.graph, "Shape.area").contains(&"report.ts:11 precise".to_owned()),
        "{:?} {import:?}",
        callers(&t.graph, "Shape.area")
    );
    assert!(callers(&t.graph, "Square.area").contains(&"report.ts:11 dispatch".to_owned()));
    // An object literal passed where a `Shape` is expected: a call of `Shape.area` may run its
    // `area` (tsserver counts it so; the indexer relates it to nothing).
    assert_eq!(import.implements, 1, "{import:?}");
    assert!(
        callers(&t.graph, "literal.area").contains(&"report.ts:15 dispatch".to_owned()),
        "{:?}",
        callers(&t.graph, "literal.area")
    );
    let state = t.graph.freshness().precise.unwrap();
    assert_eq!((state.files, state.pending_total), (2, 0), "{state:?}");
    assert!(t
        .graph
        .freshness()
        .describe()
        .contains("precise edges (scip-typescript) for 2 file(s)"));

    // Planned again with nothing changed: current, nothing to run.
    let plans = t.graph.precise_plans(&PreciseOptions::default()).unwrap();
    assert!(plans[0].current && plans[0].cached(), "{plans:?}");
    let first_key = plans[0].key.clone();

    // A change after the plan and before the import: that file is left to tree-sitter.
    let report = t.dir.path().join("report.ts");
    let plans = {
        std::fs::write(&report, format!("{REPORT}// later\n")).unwrap();
        t.graph.update(&["report.ts"]).unwrap();
        let plans = t.graph.precise_plans(&PreciseOptions::default()).unwrap();
        assert!(!plans[0].current);
        std::fs::write(&report, format!("{REPORT}// later still\n")).unwrap();
        t.graph.update(&["report.ts"]).unwrap();
        plans
    };
    let state = t.graph.freshness().precise.unwrap();
    assert_eq!(
        state.pending,
        ["report.ts"],
        "a changed file is pending: {state:?}"
    );
    assert!(!callers(&t.graph, "Shape.area")
        .iter()
        .any(|c| c.ends_with("precise")));
    let output = runtime()
        .block_on(cc_graph::precise::run(&plans[0]))
        .unwrap();
    let output = cc_graph::precise::read_output(&plans[0], &output).unwrap();
    let import = t.graph.import_precise(&plans[0], &output).unwrap();
    assert_eq!(import.changed_since, ["report.ts"], "{import:?}");
    assert_eq!(t.graph.freshness().precise.unwrap().pending, ["report.ts"]);

    // The next run makes it precise again.
    common::make_precise(&mut t.graph).unwrap();
    assert!(
        callers(&t.graph, "Shape.area").contains(&"report.ts:11 precise".to_owned()),
        "{:?} {import:?}",
        callers(&t.graph, "Shape.area")
    );

    // A definition removed takes its precise edges with it (and its file's callers are
    // pending until the next run).
    std::fs::write(
        t.dir.path().join("shapes.ts"),
        SHAPES.replace("area(): number;", "perimeter(): number;"),
    )
    .unwrap();
    t.graph.update(&["shapes.ts"]).unwrap();
    let state = t.graph.freshness().precise.unwrap();
    assert!(state.pending.contains(&"shapes.ts".to_owned()), "{state:?}");
    assert!(state.pending.contains(&"report.ts".to_owned()), "{state:?}");

    // Back to the first state (a `git checkout` would do this): the same key, cached.
    std::fs::write(t.dir.path().join("shapes.ts"), SHAPES).unwrap();
    std::fs::write(&report, REPORT).unwrap();
    t.graph.update(&["shapes.ts", "report.ts"]).unwrap();
    let plans = t.graph.precise_plans(&PreciseOptions::default()).unwrap();
    assert_eq!(plans[0].key, first_key);
    assert!(plans[0].cached() && !plans[0].current, "{plans:?}");

    // Imported from the cache, then a file changed and changed back: the same key as what is
    // imported, but that file lost its rows meanwhile, so the plan is not current (a
    // `git checkout` back once left the file pending for good).
    common::make_precise(&mut t.graph).unwrap();
    std::fs::write(&report, format!("{REPORT}// for a moment\n")).unwrap();
    t.graph.update(&["report.ts"]).unwrap();
    std::fs::write(&report, REPORT).unwrap();
    t.graph.update(&["report.ts"]).unwrap();
    let plans = t.graph.precise_plans(&PreciseOptions::default()).unwrap();
    assert_eq!(plans[0].key, first_key);
    assert!(!plans[0].current, "{plans:?}");
    common::make_precise(&mut t.graph).unwrap();
    assert_eq!(t.graph.freshness().precise.unwrap().pending_total, 0);

    // The incremental index with precise rows still equals a clean rebuild's tree-sitter rows.
    let snapshot = t.graph.snapshot().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (clean, _) = Graph::open_with(t.dir.path(), common::config(cache.path())).unwrap();
    assert_eq!(snapshot, clean.snapshot().unwrap());

    // `[graph] precise = false`: nothing is planned.
    let config = cc_graph::GraphConfig {
        precise: false,
        ..common::config(cache.path())
    };
    let (off, _) = Graph::open_with(t.dir.path(), config).unwrap();
    assert!(off
        .precise_plans(&PreciseOptions::default())
        .unwrap()
        .is_empty());
}

/// The tier a host runs in the background: a kick plans and runs scip-typescript without
/// holding the graph, imports its output, and reports it; nothing runs while the graph is
/// not there, and a second kick with nothing changed runs nothing new.
/// When the indexer covers a small part of the tree (as scip-python covers a kernel's
/// scripts) and relates no implementations, the whole tree's kept ranks follow its imports
/// rather than being computed again by the next answer that ranks (27 s on the Linux
/// tree), and they are what a whole computation gives.
#[test]
fn an_import_over_a_small_part_of_the_tree_keeps_the_ranks_current() {
    if cc_test_support::require_peer("scip-typescript").is_none() {
        cc_test_support::missing_peer("scip-typescript", "the precise tier's tests");
        return;
    }
    const UTIL: &str = "export function twice(x: number): number {\n  return 2 * x;\n}\n\n\
export function thrice(x: number): number {\n  return twice(x) + x;\n}\n";
    const MAIN: &str = "import { twice, thrice } from './util';\n\n\
export function run(): number {\n  return twice(1) + thrice(2);\n}\n";
    let c: Vec<(String, String)> = (0..10)
        .map(|i| {
            (
                format!("c/m{i}.c"),
                format!(
                    "int f{i}(void) {{ return f{}() + f{}(); }}\n",
                    (i + 1) % 10,
                    (i * 3) % 10
                ),
            )
        })
        .collect();
    let mut files = vec![
        ("tsconfig.json", TSCONFIG),
        ("util.ts", UTIL),
        ("main.ts", MAIN),
    ];
    files.extend(c.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let mut t = common::index(&files);
    let assert_kept_ranks_are_whole = |graph: &Graph| {
        // The kept ranks, and a whole computation's (a floor a hair below the default keeps
        // the same edges, and is never kept).
        let kept = graph.rank(&[], 12, DEFAULT_MIN_CONFIDENCE).unwrap().value;
        let whole: std::collections::HashMap<_, f64> = graph
            .rank(&[], 1000, DEFAULT_MIN_CONFIDENCE - 1e-9)
            .unwrap()
            .value
            .into_iter()
            .map(|r| (r.symbol.id, r.score))
            .collect();
        assert_eq!(kept.len(), 12);
        for k in &kept {
            let w = whole[&k.symbol.id];
            assert!((k.score - w).abs() < 0.01 * w, "{k:?}: {w}");
        }
    };
    let imports = common::make_precise(&mut t.graph).unwrap();
    let (_, import) = &imports[0];
    assert!(
        import.files == 2 && import.edges > 0 && import.ranks_followed,
        "{import:?}"
    );
    assert!(callers(&t.graph, "twice").contains(&"main.ts:4 precise".to_owned()));
    assert_kept_ranks_are_whole(&t.graph);
    // A write, then the indexer again (what the tier does after each write): the update and
    // the import both follow the precise tier's rows.
    std::fs::write(
        t.dir.path().join("main.ts"),
        format!("{MAIN}\nexport function again(): number {{\n  return run() + twice(3);\n}}\n"),
    )
    .unwrap();
    t.graph.update(&["main.ts"]).unwrap();
    let imports = common::make_precise(&mut t.graph).unwrap();
    assert!(imports[0].1.ranks_followed, "{imports:?}");
    assert_kept_ranks_are_whole(&t.graph);
}

#[test]
fn the_tier_runs_the_indexer_in_the_background_and_reports_it() {
    use cc_graph::precise::{IndexerRun, PreciseTier, SharedGraph};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    if cc_test_support::require_peer("scip-typescript").is_none() {
        cc_test_support::missing_peer("scip-typescript", "the precise tier's tests");
        return;
    }
    let t = common::index(&[
        ("tsconfig.json", TSCONFIG),
        ("shapes.ts", SHAPES),
        ("report.ts", REPORT),
    ]);
    let shared: SharedGraph = Arc::new(Mutex::new(Some(t.graph)));
    let tier = PreciseTier::new(PreciseOptions {
        enabled: true,
        workspace_code: false,
    });
    let imported = |tier: &PreciseTier| {
        tier.report()
            .into_iter()
            .find_map(|(indexer, run)| match run {
                IndexerRun::Imported { files, .. } => Some((indexer, files, run.line(indexer))),
                _ => None,
            })
    };
    runtime().block_on(async {
        tier.kick(&shared, Duration::ZERO);
        let started = Instant::now();
        while imported(&tier).is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(240),
                "no import: {:?}",
                tier.report()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let (indexer, files, line) = imported(&tier).unwrap();
    assert_eq!((indexer.name(), files), ("scip-typescript", 2));
    assert!(
        line.starts_with("scip-typescript: 2 file(s) precise"),
        "{line}"
    );
    assert!(tier.running().is_none());
    {
        let graph = shared.lock().unwrap();
        let graph = graph.as_ref().unwrap();
        assert!(callers(graph, "Shape.area").contains(&"report.ts:11 precise".to_owned()));
    }
    // With nothing changed, another pass finds the output current: the same report.
    let before = tier.report();
    runtime().block_on(async {
        tier.kick(&shared, Duration::ZERO);
        tokio::time::sleep(Duration::from_millis(500)).await;
    });
    assert_eq!(tier.report(), before);
}
