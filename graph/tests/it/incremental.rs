//! Any sequence of adds, modifications, deletions and renames over a fixture tree, applied
//! through `update(paths)` or `refresh()`, leaves the index equal row for row to a clean
//! build of the final tree, and keeps the whole tree's ranks as a clean build computes them.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use cc_graph::Graph;
use proptest::prelude::*;

const NAMES: [&str; 4] = ["alpha", "beta", "gamma", "Klass"];
const PY_PATHS: [&str; 5] = [
    "a.py",
    "b.py",
    "pkg/__init__.py",
    "pkg/c.py",
    "pkg/sub/d.py",
];
const GO_PATHS: [&str; 3] = ["g/x.go", "g/y.go", "g/h/z.go"];
const TS_PATHS: [&str; 2] = ["t/a.ts", "t/b.ts"];
/// C: headers that include each other (by relative path, by a path from the source's
/// folder, and by a name found anywhere) and sources that include them.
const C_PATHS: [&str; 5] = ["c/a.h", "c/inc/b.h", "c/d.h", "c/main.c", "c/inc/util.c"];
const C_INCLUDES: [&str; 5] = ["a.h", "inc/b.h", "b.h", "d.h", "../d.h"];
const MODULES: [&str; 5] = ["a", "b", "pkg", "pkg.c", ".c"];

/// A file's content, described.
#[derive(Debug, Clone)]
struct Content {
    defs: Vec<usize>,
    calls: Vec<(usize, bool)>,
    imports: Vec<(usize, usize)>,
}

fn content() -> impl Strategy<Value = Content> {
    (
        proptest::collection::vec(0..4usize, 0..4),
        proptest::collection::vec((0..4usize, any::<bool>()), 0..5),
        proptest::collection::vec((0..5usize, 0..4usize), 0..3),
    )
        .prop_map(|(defs, calls, imports)| Content {
            defs,
            calls,
            imports,
        })
}

fn python(c: &Content) -> String {
    let mut s = String::new();
    for (m, n) in &c.imports {
        s.push_str(&format!("from {} import {}\n", MODULES[*m], NAMES[*n]));
    }
    for d in &c.defs {
        let name = NAMES[*d];
        if name == "Klass" {
            s.push_str("class Klass:\n    def m(self):\n        return self.n()\n\n    def n(self):\n        return 1\n");
        } else {
            s.push_str(&format!("def {name}():\n    pass\n"));
        }
    }
    s.push_str("def caller():\n    k = Klass()\n    k.m()\n");
    for (n, through) in &c.calls {
        if *through {
            s.push_str(&format!("    pkg.{}()\n", NAMES[*n]));
        } else {
            s.push_str(&format!("    {}()\n", NAMES[*n]));
        }
    }
    s
}

fn go(c: &Content, path: &str) -> String {
    let package = if path.starts_with("g/h/") { "h" } else { "g" };
    let mut s = format!("package {package}\n\nimport \"example.com/m/g/h\"\n\n");
    for d in &c.defs {
        let name = NAMES[*d];
        if name == "Klass" {
            s.push_str("type Klass struct{}\n\nfunc (k *Klass) M() int { return k.N() }\n\nfunc (k *Klass) N() int { return 1 }\n\n");
        } else {
            s.push_str(&format!("func {name}() {{}}\n\n"));
        }
        // An interface Klass implements: its calls get dispatch edges that other files'
        // changes must keep right.
        if name == "beta" {
            s.push_str("type Mer interface {\n\tM() int\n\tN() int\n}\n\n");
        }
    }
    s.push_str("func caller() {\n\tk := &Klass{}\n\tk.M()\n\th.Z()\n\tvar i Mer\n\ti.M()\n");
    for (n, _) in &c.calls {
        s.push_str(&format!("\t{}()\n", NAMES[*n]));
    }
    s.push_str("}\n\nfunc Z() {}\n");
    s
}

/// C: includes, declarations in headers and definitions in sources (a declaration and its
/// definition are one target), and calls reached through chains of includes.
fn c_source(c: &Content, path: &str) -> String {
    let header = path.ends_with(".h");
    let mut s = String::new();
    for (m, _) in &c.imports {
        s.push_str(&format!("#include \"{}\"\n", C_INCLUDES[*m]));
    }
    for d in &c.defs {
        let name = NAMES[*d];
        if name == "Klass" {
            s.push_str("struct Klass { int n; };\n");
        } else if header && name == "beta" {
            // An object-like macro named as a function elsewhere: never a call's target.
            s.push_str("#define beta 2\nenum { BETA_ONE = 1 };\n");
        } else if header {
            s.push_str(&format!("int {name}(int x);\n"));
        } else {
            s.push_str(&format!("int {name}(int x) {{ return x; }}\n"));
        }
    }
    s.push_str("static inline int caller(struct Klass *k) {\n  int total = k->n;\n");
    for (n, _) in &c.calls {
        s.push_str(&format!("  total += {}(total);\n", NAMES[*n]));
    }
    s.push_str("  return total;\n}\n");
    s
}

/// TypeScript: an interface, a class implementing it and a subclass overriding it (dispatch
/// and override groups), functions whose declared parameter types an object literal passed
/// to them fills (or does not), and imports between the two files.
fn typescript(c: &Content) -> String {
    let mut s = String::new();
    for (m, n) in &c.imports {
        let from = if m % 2 == 0 { "./a" } else { "./b" };
        let name = NAMES[*n];
        if name == "Klass" {
            s.push_str(&format!("import {{ Klass, Obs }} from \"{from}\";\n"));
        } else {
            s.push_str(&format!("import {{ {name} }} from \"{from}\";\n"));
        }
    }
    for d in &c.defs {
        s.push_str(match NAMES[*d] {
            "Klass" => "export interface Obs {\n  next: (v: number) => void;\n  done(): void;\n}\nexport class Klass implements Obs {\n  next(v: number) {}\n  done() {}\n}\n",
            "alpha" => "export function alpha(o: Partial<Obs>) {\n  o.next(1);\n}\n",
            "beta" => "export function beta(o: number, p?: Obs, cb?: (k: Klass) => void) {\n  p?.done();\n}\n",
            _ => "export class Sub extends Klass {\n  next(v: number) {}\n}\nexport function gamma(k: Klass) {\n  k.next(2);\n}\n",
        });
    }
    // A callback whose parameter the callee's declared function type types.
    s.push_str("export function caller(k: Klass) {\n  k.done();\n  beta(1, undefined, (c) => c.next(4));\n");
    for (n, through) in &c.calls {
        let name = NAMES[*n];
        if name == "Klass" {
            s.push_str("  new Klass().next(3);\n");
        } else if *through {
            s.push_str(&format!(
                "  {name}(1, {{ next: (v) => v, done() {{}} }});\n"
            ));
        } else {
            s.push_str(&format!("  {name}({{ next: (v) => v, done() {{}} }});\n"));
        }
    }
    s.push_str("}\n");
    s
}

#[derive(Debug, Clone)]
enum Op {
    Write(usize, Content),
    Delete(usize),
    Rename(usize, usize),
    /// Rewrite go.mod (a configuration change).
    GoMod(bool),
}

fn paths() -> Vec<&'static str> {
    PY_PATHS
        .iter()
        .chain(GO_PATHS.iter())
        .chain(TS_PATHS.iter())
        .chain(C_PATHS.iter())
        .copied()
        .collect()
}

fn op() -> impl Strategy<Value = Op> {
    let n = paths().len();
    prop_oneof![
        4 => (0..n, content()).prop_map(|(p, c)| Op::Write(p, c)),
        1 => (0..n).prop_map(Op::Delete),
        1 => (0..n, 0..n).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => any::<bool>().prop_map(Op::GoMod),
    ]
}

fn render(path: &str, c: &Content) -> String {
    if path.ends_with(".go") {
        go(c, path)
    } else if path.ends_with(".ts") {
        typescript(c)
    } else if path.ends_with(".c") || path.ends_with(".h") {
        c_source(c, path)
    } else {
        python(c)
    }
}

/// Applies `op`; returns the paths it touched.
fn apply(root: &Path, op: &Op) -> Vec<String> {
    let all = paths();
    match op {
        Op::Write(p, c) => {
            let path = all[*p];
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, render(path, c)).unwrap();
            vec![path.to_owned()]
        }
        Op::Delete(p) => {
            let path = all[*p];
            let _ = std::fs::remove_file(root.join(path));
            vec![path.to_owned()]
        }
        Op::Rename(a, b) => {
            let (from, to) = (all[*a], all[*b]);
            let src = root.join(from);
            if from == to || !src.exists() {
                return Vec::new();
            }
            // Keep each language in its own paths: a rename across languages rewrites.
            let dst = root.join(to);
            std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
            if Path::new(from).extension() == Path::new(to).extension() {
                std::fs::rename(&src, &dst).unwrap();
            } else {
                std::fs::remove_file(&src).unwrap();
                std::fs::write(
                    &dst,
                    render(
                        to,
                        &Content {
                            defs: vec![0],
                            calls: vec![(1, false)],
                            imports: vec![],
                        },
                    ),
                )
                .unwrap();
            }
            vec![from.to_owned(), to.to_owned()]
        }
        Op::GoMod(present) => {
            let path = root.join("go.mod");
            if *present {
                std::fs::write(&path, "module example.com/m\n").unwrap();
            } else {
                let _ = std::fs::remove_file(&path);
            }
            vec!["go.mod".to_owned()]
        }
    }
}

fn clean_snapshot(root: &Path) -> (Vec<String>, BTreeMap<String, f64>, cc_graph::Stats) {
    let cache = tempfile::tempdir().unwrap();
    let (graph, stats) = Graph::open_with(root, common::config(cache.path())).unwrap();
    assert!(stats.rebuilt);
    (
        graph.snapshot().unwrap(),
        common::ranks(&graph),
        counts(&graph),
    )
}

/// `Graph::stats` without the index's size (two indexes of one tree differ in free pages).
fn counts(graph: &Graph) -> cc_graph::Stats {
    cc_graph::Stats {
        index_bytes: 0,
        ..graph.stats().unwrap()
    }
}

/// Kept ranks within 1% of a clean computation's (a missed change of edges is tens of
/// percent on trees this small).
fn ranks_differ(kept: &BTreeMap<String, f64>, clean: &BTreeMap<String, f64>) -> Option<String> {
    if kept.keys().ne(clean.keys()) {
        return Some(format!("definitions differ: {kept:#?} vs {clean:#?}"));
    }
    kept.iter()
        .zip(clean.values())
        .find(|((_, a), b)| (*a - *b).abs() > 0.01 * b.abs().max(1e-9))
        .map(|((key, a), b)| format!("{key}: kept {a}, clean {b}"))
}

fn first_difference(a: &[String], b: &[String]) -> String {
    let only_a: Vec<&String> = a.iter().filter(|x| !b.contains(x)).take(5).collect();
    let only_b: Vec<&String> = b.iter().filter(|x| !a.contains(x)).take(5).collect();
    format!("incremental only: {only_a:#?}\nclean only: {only_b:#?}")
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("CC_GRAPH_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    #[test]
    fn incremental_index_equals_a_clean_rebuild(
        start in proptest::collection::vec((0..paths().len(), content()), 1..6),
        ops in proptest::collection::vec((op(), any::<bool>()), 1..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("go.mod"), "module example.com/m\n").unwrap();
        for (p, c) in &start {
            apply(dir.path(), &Op::Write(*p, c.clone()));
        }
        let (mut graph, _) = Graph::open_with(dir.path(), common::config(cache.path())).unwrap();
        for (op, by_update) in &ops {
            let touched = apply(dir.path(), op);
            if *by_update {
                graph.update(&touched).unwrap();
            } else {
                graph.refresh().unwrap();
            }
            let incremental = graph.snapshot().unwrap();
            let (clean, clean_ranks, clean_counts) = clean_snapshot(dir.path());
            prop_assert!(incremental == clean, "after {op:?}:\n{}", first_difference(&incremental, &clean));
            prop_assert_eq!(counts(&graph), clean_counts, "counts after {:?}", op);
            let kept = common::ranks(&graph);
            if let Some(difference) = ranks_differ(&kept, &clean_ranks) {
                prop_assert!(false, "ranks after {op:?}: {difference}");
            }
        }
        // Reopening with nothing changed does nothing.
        drop(graph);
        let (graph, stats) = Graph::open_with(dir.path(), common::config(cache.path())).unwrap();
        prop_assert_eq!(stats.extracted, 0);
        prop_assert_eq!(stats.re_resolved, 0);
        prop_assert!(graph.snapshot().unwrap() == clean_snapshot(dir.path()).0);
    }
}

#[test]
fn a_schema_mismatch_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    pass\n").unwrap();
    let (graph, stats) = Graph::open_with(dir.path(), common::config(cache.path())).unwrap();
    assert!(stats.rebuilt);
    let path = graph.index_path().to_path_buf();
    drop(graph);
    let conn = rusqlite_free_edit(&path);
    assert!(conn);
    let (_, stats) = Graph::open_with(dir.path(), common::config(cache.path())).unwrap();
    assert!(stats.rebuilt, "another schema version is rebuilt");
}

/// Marks the index as another schema version, through the sqlite3 shell-free route: the
/// index is an SQLite file, so the `meta` row is rewritten with the graph's own dependency.
fn rusqlite_free_edit(path: &Path) -> bool {
    cc_graph::index::testing::set_schema_version(path, -1).is_ok()
}

/// C: a header that comes to include another (or stops) changes what every file that
/// includes it reaches, through any number of includes, though none of the names those
/// files look up changed.
#[test]
fn a_changed_include_deep_in_a_chain_re_resolves_every_file_that_reaches_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    };
    write(
        "c/main.c",
        "#include \"top.h\"\nint caller(void) { return alpha(1); }\n",
    );
    write("c/top.h", "#include \"mid.h\"\n");
    write("c/mid.h", "int unrelated(int x);\n");
    write("c/inc/b.h", "int alpha(int x);\n");
    write("c/other/b.h", "int alpha(int x);\n");
    let (mut graph, _) = Graph::open_with(dir.path(), common::config(cache.path())).unwrap();
    let steps: [(&str, &str); 4] = [
        // Two levels below main.c, mid.h now reaches one of the two declarations.
        ("c/mid.h", "#include \"inc/b.h\"\nint unrelated(int x);\n"),
        ("c/mid.h", "#include \"other/b.h\"\nint unrelated(int x);\n"),
        ("c/mid.h", "int unrelated(int x);\n"),
        ("c/top.h", "#include \"mid.h\"\n#include \"other/b.h\"\n"),
    ];
    for (path, text) in steps {
        write(path, text);
        graph.update(&[path]).unwrap();
        let incremental = graph.snapshot().unwrap();
        let clean = clean_snapshot(dir.path()).0;
        assert!(
            incremental == clean,
            "after writing {path}:\n{}",
            first_difference(&incremental, &clean)
        );
    }
}
