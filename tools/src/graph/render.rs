//! Pieces every `graph` result is built from: the `index` member, the source line of a site,
//! test files.

use std::collections::HashMap;

use cc_graph::Freshness;

use super::Checked;
use crate::report::graph::{IndexOpened, IndexReport};
use crate::root::WorkspaceRoot;

/// The `index` member of every result: how current the index was, and what this call did to
/// it.
pub(crate) fn index_report(
    freshness: &Freshness,
    checked: &Checked,
    precise_running: Option<String>,
) -> IndexReport {
    IndexReport {
        fresh: checked.stale.is_empty() && checked.error.is_none(),
        stale_files: checked.stale.clone(),
        files: freshness.files,
        updated: checked.updated.clone(),
        removed: checked.removed.clone(),
        opened: checked.opened.as_ref().map(|stats| IndexOpened {
            rebuilt: stats.rebuilt,
            files_seen: stats.files_seen,
            extracted: stats.extracted,
            too_large: stats.too_large,
        }),
        error: checked.error.clone(),
        rescanned: checked.rescanned.clone(),
        left_out_by_ignore: checked.left_out.clone(),
        precise: freshness.precise.clone(),
        precise_running,
    }
}

/// Whether a path is a test file by the usual conventions.
pub(crate) fn is_test(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    lower.split('/').any(|part| {
        matches!(
            part,
            "test" | "tests" | "testing" | "__tests__" | "spec" | "testdata"
        )
    }) || name.starts_with("test_")
        // `flag_test.go`, `api_test.py`, `buffer_test.c`, `strings_unittest.cc`.
        || name
            .split_once('.')
            .is_some_and(|(stem, _)| stem.ends_with("_test") || stem.ends_with("_unittest"))
        || name.contains(".test.")
        || name.contains(".spec.")
        || name == "conftest.py"
}

/// Source lines of the files results quote (each read once per call).
pub(crate) struct Lines<'a> {
    root: &'a WorkspaceRoot,
    files: HashMap<String, Vec<String>>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(root: &'a WorkspaceRoot) -> Self {
        Lines {
            root,
            files: HashMap::new(),
        }
    }

    /// Line `line` (1-based) of `path`, trimmed and cut at 160 characters.
    pub(crate) fn get(&mut self, path: &str, line: u32) -> String {
        let root = self.root;
        let lines = self.files.entry(path.to_owned()).or_insert_with(|| {
            let bytes = root
                .workspace()
                .read(&root.path().join(path))
                .unwrap_or_default();
            String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::to_owned)
                .collect()
        });
        let text = lines
            .get(line.saturating_sub(1) as usize)
            .map(|l| l.trim())
            .unwrap_or("");
        let mut out: String = text.chars().take(160).collect();
        if text.chars().count() > 160 {
            out.push('…');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_told_apart() {
        for path in [
            "tests/test_api.py",
            "pkg/flag_test.go",
            "src/a.test.ts",
            "__tests__/x.js",
            "conftest.py",
            "src/buffer_test.c",
            "base/strings_unittest.cc",
        ] {
            assert!(is_test(path), "{path}");
        }
        for path in [
            "src/requests/api.py",
            "flag.go",
            "src/testament.ts",
            "src/attest.c",
            "src/latest_test_data.h",
        ] {
            assert!(!is_test(path), "{path}");
        }
    }
}
