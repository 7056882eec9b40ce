//! The workspace's rule that no function other than a test is over 100 lines (issue 30):
//! [`long_functions`] finds them in one file's text, [`rust_sources`] lists the files the
//! rule covers, and a unit test holds the whole workspace to it.
//!
//! The sources are `rustfmt`-formatted, so a function ends at the first line that closes a
//! brace at its `fn` line's indentation; a `#[cfg(test)]` module, a `tests.rs` file and the
//! `tests`, `fixtures` and `testing` folders are test code and left out.

use std::path::{Path, PathBuf};

/// The longest a function may be, in lines from its `fn` line to its closing brace.
pub const MAX_FUNCTION_LINES: usize = 100;

/// A function over the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongFunction {
    /// Its name.
    pub name: String,
    /// Its `fn` line, 1-based.
    pub line: usize,
    /// Its length in lines.
    pub lines: usize,
}

/// The functions of `text` (a formatted Rust file) longer than `limit` lines, test modules
/// left out.
pub fn long_functions(text: &str, limit: usize) -> Vec<LongFunction> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start() == "#[cfg(test)]" {
            if let Some(next) = lines.get(i + 1) {
                if is_inline_module(next) {
                    // The whole test module.
                    i = block_end(&lines, i + 1).map_or(lines.len(), |end| end + 1);
                    continue;
                }
            }
        }
        if let Some(name) = fn_name(line) {
            if let Some(end) = block_end(&lines, i) {
                let length = end - i + 1;
                if length > limit {
                    found.push(LongFunction {
                        name: name.to_owned(),
                        line: i + 1,
                        lines: length,
                    });
                }
            }
        }
        i += 1;
    }
    found
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// `mod name {` (a module written inline).
fn is_inline_module(line: &str) -> bool {
    let t = line.trim();
    let t = t.strip_prefix("pub ").unwrap_or(t);
    t.starts_with("mod ") && t.ends_with('{')
}

/// The name of the function a line starts (`pub(crate) async fn name(`), unless the line is
/// a declaration without a body.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if rest.trim_end().ends_with(';') {
        return None;
    }
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.strip_prefix('(') {
            Some(inner) => inner.split_once(')')?.1,
            None => after,
        }
        .trim_start();
    }
    for qualifier in ["const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    (end > 0).then(|| &name[..end])
}

/// The line that closes the block opened at `start`: the first later line that starts with
/// `}` at `start`'s indentation.
fn block_end(lines: &[&str], start: usize) -> Option<usize> {
    let want = indent(lines[start]);
    (start + 1..lines.len()).find(|&k| {
        let l = lines[k];
        indent(l) == want && l.trim_start().starts_with('}')
    })
}

/// The Rust files the rule covers under the workspace `root`: every crate's `src` and
/// `examples`, without test folders and `tests.rs` files.
pub fn rust_sources(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    const SKIPPED: &[&str] = &["target", "tests", "fixtures", "testing", "node_modules"];
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if entry.file_type()?.is_dir() {
                if !SKIPPED.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_long_function_and_leaves_test_modules_out() {
        let body = "    x();\n".repeat(5);
        let text = format!(
            "pub(crate) async fn long() {{\n{body}}}\n\nfn short() {{\n}}\n\nfn decl();\n\n\
             #[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}    }}\n}}\n"
        );
        assert_eq!(
            long_functions(&text, 4),
            [LongFunction {
                name: "long".into(),
                line: 1,
                lines: 7
            }]
        );
    }

    #[test]
    fn no_function_of_the_workspace_is_over_the_limit() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask is a folder of the workspace");
        let sources = rust_sources(root).expect("the workspace's sources are readable");
        assert!(
            sources
                .iter()
                .any(|p| p.ends_with("graph/src/index/update.rs")),
            "the walk missed the crates' sources: {sources:?}"
        );
        let mut long = Vec::new();
        for path in sources {
            let text = std::fs::read_to_string(&path).expect("a source file is UTF-8");
            for f in long_functions(&text, MAX_FUNCTION_LINES) {
                long.push(format!(
                    "{}:{} `{}` is {} lines",
                    path.strip_prefix(root).unwrap_or(&path).display(),
                    f.line,
                    f.name,
                    f.lines
                ));
            }
        }
        assert!(
            long.is_empty(),
            "functions over {MAX_FUNCTION_LINES} lines (split them by phase):\n{}",
            long.join("\n")
        );
    }
}
