//! Pieces every `graph` result shares: the `index` member, symbols as JSON and text, the
//! source line of a site, test files, token counts.

use std::collections::HashMap;

use cc_graph::{Freshness, Symbol};
use serde_json::{json, Value};

use super::Checked;
use crate::root::WorkspaceRoot;

/// Tokens as the `map` budget counts them: characters / 4, rounded up (about what
/// tokenizers give for code).
pub(crate) fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The `index` member: `{fresh, stale_files, files, updated, opened?, error?}`.
pub(crate) fn index_json(freshness: &Freshness, checked: &Checked) -> Value {
    let mut value = json!({
        "fresh": checked.stale.is_empty() && checked.error.is_none(),
        "stale_files": checked.stale,
        "files": freshness.files,
        "updated": checked.updated,
    });
    if let Some(stats) = &checked.opened {
        value["opened"] = json!({
            "rebuilt": stats.rebuilt,
            "files_seen": stats.files_seen,
            "extracted": stats.extracted,
            "too_large": stats.too_large,
        });
    }
    if let Some(error) = &checked.error {
        value["error"] = Value::String(error.clone());
    }
    if let Some(why) = &checked.rescanned {
        value["rescanned"] = Value::String(why.clone());
    }
    if let Some((left_out, _)) = &checked.left_out {
        value["left_out_by_ignore"] = left_out.clone();
    }
    if let Some(precise) = &freshness.precise {
        value["precise"] = json!({
            "indexers": precise.indexers,
            "files": precise.files,
            "pending": precise.pending,
            "pending_total": precise.pending_total,
            "not_read": precise.not_read,
        });
    }
    value
}

/// One line for the text: how current the answer is.
pub(crate) fn index_line(freshness: &Freshness, checked: &Checked) -> String {
    let mut line = format!("index: {} files", freshness.files);
    if let Some(stats) = &checked.opened {
        if stats.rebuilt {
            line.push_str(&format!(", built now ({} extracted)", stats.extracted));
        } else {
            line.push_str(&format!(
                ", opened now ({} of {} files re-read)",
                stats.extracted, stats.files_seen
            ));
        }
        if stats.too_large > 0 {
            line.push_str(&format!(", {} too large to index", stats.too_large));
        }
    }
    if !checked.updated.is_empty() {
        line.push_str(&format!(
            ", {} file(s) changed on disk re-read now: {}",
            checked.updated.len(),
            first_few(&checked.updated, 5)
        ));
    }
    if let Some(why) = &checked.rescanned {
        line.push_str(&format!(" ({why})"));
    }
    if checked.stale.is_empty() && checked.error.is_none() {
        line.push_str(", fresh");
    } else {
        line.push_str(&format!(
            ", NOT fresh: {} file(s) changed on disk are not reflected ({}){}",
            checked.stale.len(),
            first_few(&checked.stale, 5),
            checked
                .error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ));
    }
    if let Some((_, left_out)) = &checked.left_out {
        line.push_str(&format!("; {left_out}"));
    }
    if let Some(precise) = &freshness.precise {
        line.push_str(&format!("; {}", precise.describe()));
    }
    line
}

fn first_few(items: &[String], n: usize) -> String {
    let mut s = items.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > n {
        s.push_str(&format!(", … {} more", items.len() - n));
    }
    s
}

/// A symbol as results list it.
pub(crate) fn symbol_json(symbol: &Symbol) -> Value {
    json!({
        "name": symbol.name,
        "qualified_name": symbol.qualified_name,
        "kind": symbol.kind.as_str(),
        "path": symbol.path,
        "line": symbol.line,
    })
}

/// `function Session.request (requests/sessions.py:500)`.
pub(crate) fn symbol_text(symbol: &Symbol) -> String {
    format!(
        "{} {} ({}:{})",
        symbol.kind.as_str(),
        symbol.qualified_name,
        symbol.path,
        symbol.line
    )
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
        || name.ends_with("_test.go")
        || name.ends_with("_test.py")
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

/// "first N of TOTAL" when the list was cut, else "all N".
pub(crate) fn shown(n: usize, total: usize) -> String {
    if n < total {
        format!("first {n} of {total}")
    } else {
        format!("all {total}")
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
        ] {
            assert!(is_test(path), "{path}");
        }
        for path in ["src/requests/api.py", "flag.go", "src/testament.ts"] {
            assert!(!is_test(path), "{path}");
        }
        assert_eq!(tokens("abcde"), 2);
        assert_eq!(shown(3, 10), "first 3 of 10");
        assert_eq!(shown(3, 3), "all 3");
    }
}
