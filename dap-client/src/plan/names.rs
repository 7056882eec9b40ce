//! Test names: the one the caller meant, or the nearest ones when a name matches no test.
//!
//! A name that matches nothing is an error before anything is debugged, saying how the
//! runner names tests and listing the closest names it has: a debug session that ran zero
//! tests ("exited with code 4", "no tests to run") would cost the agent a call to learn less.

use std::path::{Path, PathBuf};

use regex::Regex;

use cc_workspace::walk::Walk;

/// At most this many names are suggested.
pub(crate) const SUGGESTED: usize = 8;

/// The names closest to `wanted`, best first: those that contain it (or that it contains)
/// before the others, then by similarity of the last path segment.
pub(crate) fn nearest(wanted: &str, names: &[String], max: usize) -> Vec<String> {
    let key = |name: &str| -> String {
        let last = name
            .rsplit(['/', ':'])
            .find(|part| !part.is_empty())
            .unwrap_or(name);
        last.split('[').next().unwrap_or(last).to_lowercase()
    };
    let wanted_key = key(wanted);
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(bool, f64, &String)> = names
        .iter()
        .map(|name| {
            let lower = name.to_lowercase();
            let name_key = key(name);
            let contains = lower.contains(&wanted_lower)
                || (!name_key.is_empty() && wanted_key.contains(&name_key));
            (contains, strsim::jaro_winkler(&wanted_key, &name_key), name)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.total_cmp(&a.1))
            .then_with(|| a.2.cmp(b.2))
    });
    let mut shown: Vec<String> = Vec::new();
    for (_, _, name) in scored {
        if !shown.contains(name) {
            shown.push(name.clone());
        }
        if shown.len() == max {
            break;
        }
    }
    shown
}

/// "a, b, c (… 120 in all)".
pub(crate) fn listed(names: &[String], total: usize) -> String {
    let mut text = names.join(", ");
    if total > names.len() {
        text.push_str(&format!(" (… {total} in all)"));
    }
    text
}

/// The node ids `pytest --collect-only -q` printed: its first lines, up to the blank line
/// before the summary (a parametrized id may hold blanks: `test_x[a b]`).
pub(crate) fn pytest_node_ids(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim_end)
        .take_while(|line| !line.is_empty())
        .filter(|line| line.contains("::") && !line.starts_with(' '))
        .map(str::to_owned)
        .collect()
}

/// The test functions a node id list holds: `file::Class::test` without parameters, once each.
pub(crate) fn pytest_functions(ids: &[String]) -> Vec<String> {
    let mut functions: Vec<String> = Vec::new();
    for id in ids {
        let function = id.split('[').next().unwrap_or(id).to_owned();
        if !functions.contains(&function) {
            functions.push(function);
        }
    }
    functions
}

/// Whether `word` names collected tests: a node id, or a prefix of some at a `::` or `[`.
pub(crate) fn pytest_collects(ids: &[String], word: &str) -> bool {
    ids.iter().any(|id| {
        id == word
            || id
                .strip_prefix(word)
                .is_some_and(|rest| rest.starts_with("::") || rest.starts_with('['))
    })
}

/// The functions among `functions` whose own name is `name`.
pub(crate) fn pytest_named<'a>(functions: &'a [String], name: &str) -> Vec<&'a String> {
    functions
        .iter()
        .filter(|f| f.rsplit("::").next() == Some(name))
        .collect()
}

/// One Go test function and the package directory that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GoTestFunction {
    pub(crate) package: PathBuf,
    pub(crate) name: String,
}

/// Files read at most, so a huge tree still answers quickly.
const GO_FILES_READ: usize = 20_000;

/// The `Test…` functions of the `_test.go` files under `dir` (only `dir` itself when not
/// `recursive`), read from the source: `go test -list` would build every package first.
pub(crate) fn go_test_functions(dir: &Path, recursive: bool) -> Vec<GoTestFunction> {
    // What `-run` selects: tests, examples and fuzz targets (`TestMain` is not a test).
    let Ok(test_func) = Regex::new(r"(?m)^func\s+((?:Test|Example|Fuzz)[A-Za-z0-9_]*)\s*\(") else {
        return Vec::new();
    };
    let mut walk = Walk::new(dir).extensions(&["go"]).limit(GO_FILES_READ * 4);
    if !recursive {
        walk = walk.max_depth(1);
    }
    let mut found = Vec::new();
    for entry in walk.files() {
        let is_test = entry
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("_test.go"));
        if !is_test {
            continue;
        }
        let Ok(source) = std::fs::read_to_string(&entry.path) else {
            continue;
        };
        let package = entry
            .path
            .parent()
            .map_or_else(|| dir.to_path_buf(), Path::to_path_buf);
        for captures in test_func.captures_iter(&source) {
            if &captures[1] == "TestMain" {
                continue;
            }
            found.push(GoTestFunction {
                package: package.clone(),
                name: captures[1].to_owned(),
            });
        }
    }
    found
}

/// Whether `go test -run pattern` selects a top-level test among `names` (the pattern's
/// first `/`-separated part is matched against the top-level name, as `go test` does).
/// `None` when the pattern is not a regex Go would take either.
pub(crate) fn go_run_matches(pattern: &str, names: &[String]) -> Option<bool> {
    let top = pattern.split('/').next().unwrap_or(pattern);
    let regex = Regex::new(top).ok()?;
    Some(names.iter().any(|name| regex.is_match(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn nearest_names_put_containing_ones_first() {
        let names = owned(&[
            "tests/test_basic.py::test_auto_shorthelp",
            "tests/test_basic.py::test_help_invalid_default",
            "tests/test_utils.py::test_echo",
            "tests/test_formatting.py::test_basic_functionality",
        ]);
        assert_eq!(
            nearest("test_auto_shorthelp", &names, 1),
            ["tests/test_basic.py::test_auto_shorthelp"]
        );
        assert_eq!(
            nearest("test_basic_functionalty", &names, 1),
            ["tests/test_formatting.py::test_basic_functionality"]
        );
        assert_eq!(
            nearest("echo", &names, 1),
            ["tests/test_utils.py::test_echo"]
        );
        let go = owned(&["TestCount", "TestCountP", "TestBoolP"]);
        assert_eq!(nearest("TestCuont", &go, 2), ["TestCount", "TestCountP"]);
    }

    #[test]
    fn pytest_ids_functions_and_names() {
        let stdout = "tests/test_utils.py::test_a[x]\ntests/test_utils.py::test_a[y z]\n\
                      tests/test_core.py::TestK::test_b\n\n3 tests collected in 0.01s\n";
        let ids = pytest_node_ids(stdout);
        assert_eq!(ids.len(), 3, "{ids:?}");
        let functions = pytest_functions(&ids);
        assert_eq!(
            functions,
            [
                "tests/test_utils.py::test_a",
                "tests/test_core.py::TestK::test_b"
            ]
        );
        assert_eq!(
            pytest_named(&functions, "test_b"),
            ["tests/test_core.py::TestK::test_b"]
        );
        assert!(pytest_named(&functions, "test_c").is_empty());
        assert!(pytest_collects(&ids, "tests/test_core.py::TestK"));
        assert!(pytest_collects(&ids, "tests/test_utils.py::test_a"));
        assert!(pytest_collects(&ids, "tests/test_utils.py::test_a[y z]"));
        assert!(!pytest_collects(&ids, "tests/test_utils.py::test_ab"));
    }

    #[test]
    fn go_tests_from_source_and_run_patterns() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("a_test.go"),
            "package a\n\nfunc TestCount(t *testing.T) {}\nfunc helper(t *testing.T) {}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sub/b_test.go"),
            "package sub\nfunc TestBool(tt *testing.T) {\n}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("c.go"),
            "package a\nfunc TestNot(t *testing.T) {}\n",
        )
        .unwrap();
        let all = go_test_functions(dir.path(), true);
        let names: Vec<&str> = all.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["TestCount", "TestBool"],
            "helpers and non-test files left out"
        );
        assert_eq!(go_test_functions(dir.path(), false).len(), 1);
        let names = owned(&["TestCount", "TestBool"]);
        assert_eq!(go_run_matches("TestCount", &names), Some(true));
        assert_eq!(go_run_matches("^TestCount$/sub", &names), Some(true));
        assert_eq!(go_run_matches("TestNope", &names), Some(false));
        assert_eq!(go_run_matches("(", &names), None);
    }
}
