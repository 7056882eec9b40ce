//! Issue 32 on a real C project (cmark-gfm, from the cmarkgfm sdist, built without a
//! `compile_commands.json`): a function declared in a header is reached from the files that
//! include it by the folder the build would pass with `-I` (`#include <buffer.h>` in
//! `extensions/` means `src/buffer.h`), so its callers span the tree.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use cc_graph::{Graph, DEFAULT_MIN_CONFIDENCE};

use crate::common;

/// The call sites (`path:line`) of the function `name` defined in `path`.
fn callers(graph: &Graph, name: &str, path: &str) -> Vec<String> {
    let defs = graph.find(name, Some(path)).unwrap();
    let def = defs
        .iter()
        .find(|d| d.kind.is_callable())
        .unwrap_or_else(|| panic!("{name} not found in {path}: {defs:?}"));
    let found = graph.callers(def.id, DEFAULT_MIN_CONFIDENCE).unwrap();
    let mut sites: Vec<String> = found
        .value
        .sites
        .iter()
        .map(|s| format!("{}:{}", s.path, s.line))
        .collect();
    sites.sort();
    sites.dedup();
    sites
}

/// Every `name(` call in the workspace's `.c` files, as `path:line` (a line once), by text.
fn calls_by_text(root: &std::path::Path, name: &str) -> Vec<String> {
    let mut sites = Vec::new();
    for entry in cc_workspace::walk::Walk::new(root)
        .extensions(&["c"])
        .files()
    {
        let text = std::fs::read_to_string(&entry.path).unwrap();
        let rel = entry.path.strip_prefix(root).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            let called = line.match_indices(name).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = &line[at + name.len()..];
                after.trim_start().starts_with('(')
                    && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            });
            let definition = line.starts_with(|c: char| c.is_alphabetic()) && !line.contains(';');
            if called && !definition {
                sites.push(format!("{rel}:{}", i + 1));
            }
        }
    }
    sites.sort();
    sites
}

#[test]
fn c_callers_of_a_header_declared_function_span_the_tree() {
    let Some(project) = cc_test_support::copy_project("cmarkgfm") else {
        return;
    };
    // A vendored header named like a system one is not what `#include <string.h>` means.
    let vendored = project.path().join("third_party/vendored");
    std::fs::create_dir_all(&vendored).unwrap();
    std::fs::write(
        vendored.join("string.h"),
        "unsigned long strlen(const char *s);\n",
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (graph, _) = Graph::open_with(project.path(), common::config(cache.path())).unwrap();
    let src = "third_party/cmark/src";
    let strlen = callers(&graph, "strlen", "third_party/vendored/string.h");
    assert_eq!(strlen, Vec::<String>::new(), "{strlen:?}");

    // `#include <buffer.h>` from extensions/: declared in src/buffer.h, defined in buffer.c.
    let puts = callers(&graph, "cmark_strbuf_puts", &format!("{src}/buffer.c"));
    assert!(
        puts.contains(&"third_party/cmark/extensions/table.c:731".to_owned()),
        "{puts:?}"
    );
    let by_text = calls_by_text(project.path(), "cmark_strbuf_puts");
    let reached = by_text.iter().filter(|s| puts.contains(s)).count();
    let recall = reached as f64 / by_text.len() as f64;
    let files: std::collections::BTreeSet<&str> =
        puts.iter().filter_map(|s| s.split(':').next()).collect();
    assert!(
        recall >= 0.95 && files.len() >= 5,
        "{reached} of {} call lines reached ({recall:.3}) in {} files; missed: {:?}",
        by_text.len(),
        files.len(),
        by_text
            .iter()
            .filter(|s| !puts.contains(s))
            .collect::<Vec<_>>()
    );

    // Through the public header (`#include <cmark-gfm.h>` → src/cmark-gfm.h).
    let set_type = callers(&graph, "cmark_node_set_type", &format!("{src}/node.c"));
    assert!(
        set_type.contains(&"third_party/cmark/extensions/table.c:363".to_owned()),
        "{set_type:?}"
    );
}

/// What the shell does between calls, on the same project: a header one level below the
/// files that include it comes to include a new declaration (and stops), and the callers
/// follow, with the index updated for the changed header only (the files that reach it are
/// found through their includes).
#[test]
fn an_include_added_to_a_shared_header_reaches_the_files_that_include_it() {
    let Some(project) = cc_test_support::copy_project("cmarkgfm") else {
        return;
    };
    let root = project.path();
    let src = "third_party/cmark/src";
    // Declared twice: by name alone the call is ambiguous; through the includes, not.
    std::fs::write(root.join(src).join("extra.h"), "int extra_fn(int x);\n").unwrap();
    std::fs::write(
        root.join("third_party/cmark/extensions/extra.h"),
        "int extra_fn(int x);\n",
    )
    .unwrap();
    let blocks = root.join(src).join("blocks.c");
    let mut text = std::fs::read_to_string(&blocks).unwrap();
    text.push_str("\nint use_extra(void) { return extra_fn(1); }\n");
    let call_line = text.lines().count();
    std::fs::write(&blocks, &text).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (mut graph, _) = Graph::open_with(root, common::config(cache.path())).unwrap();
    let extra = format!("{src}/extra.h");
    assert_eq!(callers(&graph, "extra_fn", &extra), Vec::<String>::new());

    let buffer = format!("{src}/buffer.h");
    let original = std::fs::read_to_string(root.join(&buffer)).unwrap();
    std::fs::write(
        root.join(&buffer),
        original.replacen(
            "#include <string.h>",
            "#include <string.h>\n#include \"extra.h\"",
            1,
        ),
    )
    .unwrap();
    let stats = graph.update(&[buffer.as_str()]).unwrap();
    assert_eq!(
        callers(&graph, "extra_fn", &extra),
        vec![format!("{src}/blocks.c:{call_line}")],
        "after the include ({stats:?})"
    );

    std::fs::write(root.join(&buffer), &original).unwrap();
    graph.update(&[buffer.as_str()]).unwrap();
    assert_eq!(callers(&graph, "extra_fn", &extra), Vec::<String>::new());
}
