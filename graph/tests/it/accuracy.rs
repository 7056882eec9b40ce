//! The graph's callers against answer keys built from real language servers
//! (`cargo xtask graph-keys` writes `tests/keys/PROJECT.json`): for every function and method
//! the server lists, the call sites its find-references gives, compared with the graph's
//! callers at the default confidence. Every key is held to precision ≥ 0.97 and to the recall
//! it measures now (see the floors below). The signatures of an overloaded TypeScript
//! function are scored once: the server gives each the same references, and the graph gives
//! every signature its implementation's callers.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use std::collections::{BTreeMap, HashMap};

use cc_graph::{Graph, DEFAULT_MIN_CONFIDENCE};
use serde_json::Value;

#[derive(Debug, Default)]
struct Score {
    key_defs: usize,
    matched_defs: usize,
    key_edges: usize,
    ours: usize,
    true_positives: usize,
    false_positives: Vec<String>,
    false_negatives: Vec<String>,
    /// Key definitions with a plain name the graph has no callable definition for.
    not_addressed: Vec<String>,
}

impl Score {
    fn precision(&self) -> f64 {
        if self.ours == 0 {
            1.0
        } else {
            self.true_positives as f64 / self.ours as f64
        }
    }

    fn recall(&self) -> f64 {
        if self.key_edges == 0 {
            1.0
        } else {
            self.true_positives as f64 / self.key_edges as f64
        }
    }
}

fn score(project: &str) -> Option<Score> {
    score_with(project, false)
}

/// [`score`], with the precise tier's indexers run and imported first when `precise`.
fn score_with(project: &str, precise: bool) -> Option<Score> {
    let copy = cc_test_support::copy_project(project)?;
    let key_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/keys")
        .join(format!("{project}.json"));
    let key: Value =
        serde_json::from_str(&std::fs::read_to_string(&key_path).unwrap_or_else(|e| {
            panic!("{}: {e}; run `cargo xtask graph-keys`", key_path.display())
        }))
        .unwrap();
    // The key must be for the installed version.
    if let (Some(version), Some(dir)) = (
        key["version"].as_str(),
        cc_test_support::real_project(project),
    ) {
        let stamp = dir.with_file_name(format!("{project}.stamp"));
        let installed = std::fs::read_to_string(&stamp).unwrap_or_default();
        assert!(
            installed.trim_end().ends_with(version),
            "{} is for {project} {version}, installed: {installed}; run `cargo xtask graph-keys {project}`",
            key_path.display()
        );
    }
    let cache = tempfile::tempdir().unwrap();
    let (mut graph, _) = Graph::open_with(copy.path(), common::config(cache.path())).unwrap();
    if precise {
        let imports = common::make_precise(&mut graph)?;
        assert!(!imports.is_empty(), "{project}: no precise indexer applies");
        for (indexer, import) in &imports {
            println!("{project}: {} {import:?}", indexer.name());
        }
    }
    let mut s = Score::default();
    // The signatures of an overloaded TypeScript function or method: the server gives each
    // the same references, the graph one answer for all; scored once.
    let overloads = key["language"] == "typescript";
    let mut scored: std::collections::HashSet<(String, String, String)> = Default::default();
    for def in key["definitions"].as_array().unwrap() {
        let name = def["name"].as_str().unwrap();
        let path = def["path"].as_str().unwrap();
        if shared_module(project, path) {
            continue;
        }
        let again = !scored.insert((path.to_owned(), name.to_owned(), def["callers"].to_string()));
        if overloads && again && def["callers"].as_array().is_some_and(|c| !c.is_empty()) {
            continue;
        }
        s.key_defs += 1;
        let line = def["line"].as_u64().unwrap() as u32;
        let mut expected: BTreeMap<(String, u32), usize> = BTreeMap::new();
        for c in def["callers"].as_array().unwrap() {
            *expected
                .entry((
                    c[0].as_str().unwrap().to_owned(),
                    c[1].as_u64().unwrap() as u32,
                ))
                .or_default() += 1;
        }
        let key_count: usize = expected.values().sum();
        s.key_edges += key_count;
        let named = graph.find(name, Some(path)).unwrap();
        // A Go function type (`type PositionalArgs func(…) error`) the server lists as a
        // function is addressable as the type it is.
        let addressable = named.iter().any(|d| d.line.abs_diff(line) <= 2);
        let candidates: Vec<_> = named.into_iter().filter(|d| d.kind.is_callable()).collect();
        let ours = candidates
            .iter()
            .min_by_key(|d| d.line.abs_diff(line))
            .cloned();
        let Some(ours) = ours.filter(|d| d.line.abs_diff(line) <= 2) else {
            // A name an agent can write (not a server's label for an anonymous callback,
            // `expect() callback`) that the graph cannot address.
            if !addressable
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            {
                s.not_addressed.push(format!("{name} ({path}:{line})"));
            }
            for (p, l) in expected.keys() {
                s.false_negatives.push(format!(
                    "{p}:{l} -> {name} ({path}:{line}) [definition not found]"
                ));
            }
            continue;
        };
        s.matched_defs += 1;
        // `callers` of a TypeScript overload signature are its implementation's.
        let callers = graph.callers(ours.id, DEFAULT_MIN_CONFIDENCE).unwrap();
        let mut found: HashMap<(String, u32), usize> = HashMap::new();
        for site in &callers.value.sites {
            *found.entry((site.path.clone(), site.line)).or_default() += 1;
        }
        // rust-analyzer's references give a line once however many calls it has (`f(a) ==
        // f(b)`: no Rust key lists a line twice): a line is one site there.
        if key["language"] == "rust" {
            found.values_mut().for_each(|n| *n = (*n).min(1));
        }
        s.ours += found.values().sum::<usize>();
        for (place, n) in &found {
            let k = expected.get(place).copied().unwrap_or(0);
            s.true_positives += (*n).min(k);
            for _ in k..*n {
                s.false_positives.push(format!(
                    "{}:{} -> {} ({path}:{line})",
                    place.0, place.1, ours.qualified_name
                ));
            }
        }
        for (place, k) in &expected {
            let n = found.get(place).copied().unwrap_or(0);
            for _ in n..*k {
                s.false_negatives.push(format!(
                    "{}:{} -> {} ({path}:{line})",
                    place.0, place.1, ours.qualified_name
                ));
            }
        }
    }
    println!(
        "{project}{}: {} of {} definitions matched; key edges {}, ours {}, true {}; precision {:.3}, recall {:.3}",
        if precise { " (precise)" } else { "" },
        s.matched_defs,
        s.key_defs,
        s.key_edges,
        s.ours,
        s.true_positives,
        s.precision(),
        s.recall()
    );
    println!(
        "{project}: {} key definition(s) with a plain name not addressed: {:?}",
        s.not_addressed.len(),
        s.not_addressed.iter().take(10).collect::<Vec<_>>()
    );
    // Issue 32 asks that no key definition be `symbol_not_found`. What is left is not a
    // name in the source: tsserver labels the anonymous function after `_mapper ||` in zod's
    // `format(_mapper?)` by the parameter.
    let ceiling = match project {
        "zod" => 3,
        _ => 0,
    };
    assert!(
        s.not_addressed.len() <= ceiling,
        "{project}: {} key definitions not addressed (at most {ceiling}): {:?}",
        s.not_addressed.len(),
        s.not_addressed
    );
    if std::env::var_os("CC_GRAPH_ACCURACY_DETAIL").is_some() {
        for fp in &s.false_positives {
            println!("  false positive: {fp}");
        }
        for fneg in &s.false_negatives {
            println!("  false negative: {fneg}");
        }
    }
    Some(s)
}

/// A file the key cannot speak for: semver's `tests/util/mod.rs` is compiled into each test
/// crate (`mod util;` in three of them), and rust-analyzer's find-references answers for one
/// crate only, so its key lists none of the other crates' calls (`version("1.2.3")` in
/// `tests/test_version.rs`), which the precise tier finds.
fn shared_module(project: &str, path: &str) -> bool {
    project == "semver" && path == "tests/util/mod.rs"
}

// Precision is held to issue 32's goal (0.97) everywhere; recall to what each key measures
// now (the goal, 0.80–0.90 without a precise tier, is met for every language), so that a
// change that loses edges fails here.

#[test]
fn python_requests_meets_the_goals() {
    let Some(s) = score("requests") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    assert!(s.recall() >= 0.95, "recall {:.3}", s.recall());
}

#[test]
fn go_cobra_meets_the_goals() {
    let Some(s) = score("cobra") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    assert!(s.recall() >= 0.90, "recall {:.3}", s.recall());
}

#[test]
fn typescript_zod_holds_its_floor() {
    let Some(s) = score("zod") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // 0.620 before overrides, inherited constructors, namespaces, members typed by a type
    // parameter and locals read from members were followed; 0.861 after; 0.908 with the
    // callers of an overload signature being its implementation's, the signatures of one
    // function scored once (issue 32's goal without a precise tier is 0.80).
    assert!(s.recall() >= 0.90, "recall {:.3}", s.recall());
}

#[test]
fn rust_semver_holds_its_floor() {
    let Some(s) = score("semver") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    assert!(s.recall() >= 0.95, "recall {:.3}", s.recall());
}

#[test]
fn python_click_holds_its_floor() {
    let Some(s) = score("click") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // Issue 32's goal for Python without a precise tier: 0.90 (0.917 measured).
    assert!(s.recall() >= 0.90, "recall {:.3}", s.recall());
}

#[test]
fn go_pflag_holds_its_floor() {
    let Some(s) = score("pflag") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // The key counts an interface's call sites for each method implementing it (0.942
    // measured; the goal without a precise tier, dispatch included, is 0.80).
    assert!(s.recall() >= 0.93, "recall {:.3}", s.recall());
}

/// rxjs 7.8.2 (`src`): classes, interfaces, overloads. Most of what the graph misses is
/// dispatch the key counts per definition: tsserver gives a method that implements an
/// interface member (`Observable.subscribe`, `Subscriber.next`) every call through the
/// interface, and each object-literal member typed by one (`next: (x) => …` passed as an
/// `Observer`, 1,516 of the key's 4,596 edges, definitions the graph does not address).
#[test]
fn typescript_rxjs_holds_its_floor() {
    let Some(s) = score("rxjs") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // Issue 32's goal without the precise tier is 0.80. 0.856 measured: 0.542 before a
    // callback's untyped parameter took the type its callee declares (`operate((source,
    // subscriber) => …)`, `new Observable((subscriber) => …)`); 0.466 before object literals
    // passed as arguments filled the members of the callee's declared parameter type; 0.357
    // before a call of an override reached the members it overrides
    // and implements and their other overrides (tsserver's group), 0.266 before the callers
    // of an overload signature were its implementation's and the signatures of one function
    // were scored once (0.375), less the `super.next(…)` calls the key counts for every
    // override (a `super` call runs the base's method, never an override: those edges were
    // wrong). What is left is mostly receivers typed by inference the graph does not do:
    // elements of typed arrays (`for (const observer of this.observers)`), destructured
    // fields (`const { partialObserver } = this`), returned values.
    assert!(s.recall() >= 0.85, "recall {:.3}", s.recall());
}

// The precise tier (issue 32's goal: precision >= 0.97 and recall >= 0.90 on every key with it
// on). Each runs the project's compiler-grade indexer, a peer `cargo xtask peers` installs.

#[test]
fn typescript_rxjs_with_the_precise_tier() {
    let Some(s) = score_with("rxjs", true) else {
        return;
    };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // 0.977 measured (0.856 without the tier): 0.633 before the object literals passed where
    // an interface is expected (`source.subscribe({ next: … })`, 1,023 of the key's edges)
    // were linked to the interface's members through the callee's parameter types.
    assert!(s.recall() >= 0.96, "recall {:.3}", s.recall());
}

#[test]
fn typescript_zod_with_the_precise_tier() {
    let Some(s) = score_with("zod", true) else {
        return;
    };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // 0.990 measured (0.908 without the tier).
    assert!(s.recall() >= 0.98, "recall {:.3}", s.recall());
}

#[test]
fn python_click_with_the_precise_tier() {
    let Some(s) = score_with("click", true) else {
        return;
    };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // 0.938 measured (0.917 without the tier): the tests are outside click's
    // `[tool.pyright] include`, so scip-python does not read them and tree-sitter answers there.
    assert!(s.recall() >= 0.93, "recall {:.3}", s.recall());
}

#[test]
fn python_requests_with_the_precise_tier() {
    let Some(s) = score_with("requests", true) else {
        return;
    };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // 0.969 measured.
    assert!(s.recall() >= 0.96, "recall {:.3}", s.recall());
}

#[test]
fn rust_semver_with_the_precise_tier() {
    let Some(s) = score_with("semver", true) else {
        return;
    };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // 1.000 measured.
    assert!(s.recall() >= 0.99, "recall {:.3}", s.recall());
}

/// itertools 0.14.0: an extension trait (`Itertools`) called on std iterators, adaptors
/// generated by `macro_rules!`, trait-heavy code, tests and benches naming the crate.
#[test]
fn rust_itertools_holds_its_floor() {
    let Some(s) = score("itertools") else { return };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // Issue 32's goal for Rust without the tier: 0.80. 0.841 measured: 0.363 before the
    // arguments of macro invocations were read as code (`quickcheck! { … }`, `assert_eq!(…)`),
    // an adapter returned by a std call took a workspace extension trait's methods
    // (`v.into_iter().map(f).into_group_map()`), a module and a function of one name were
    // both exported (`mod peek_nth;` beside `pub use crate::free::*`), and a call of an
    // impl's method reached the trait's method and its other impls (rust-analyzer's group).
    assert!(s.recall() >= 0.84, "recall {:.3}", s.recall());
}

#[test]
fn rust_itertools_with_the_precise_tier() {
    let Some(s) = score_with("itertools", true) else {
        return;
    };
    assert!(s.precision() >= 0.97, "precision {:.3}", s.precision());
    // 0.939 measured (0.444 before the macro arguments were extracted: the indexer's
    // references there had no tree-sitter reference to speak for).
    assert!(s.recall() >= 0.93, "recall {:.3}", s.recall());
}
