//! Typed reports: what a tool (or a part of every writing tool's result) found, as one value
//! that serializes to the JSON result and renders the text many clients show the model alone.
//! JSON and text come from the same fields, so they cannot drift apart, and a Rust host reads
//! the type instead of keys of a `serde_json::Value`.

pub mod eval;
pub mod files;
pub mod graph;
pub mod lsp;
pub mod structural;
mod write;

pub use crate::left_out::{LeftOutReport, RuleCount};
pub use eval::EvalReport;
pub use graph::GraphReport;
pub use write::{
    ChangedOutside, CheckScope, MissingDependenciesNote, NewDiagnostic, UncheckedFile,
    WriteDiagnostics, WriteReport, OLDER_ERRORS_LISTED,
};

/// The text of a report, as the agent reads it.
pub trait Render {
    /// The report's lines, newline-separated, without a trailing newline.
    fn render(&self) -> String;
}

/// Reading the README's result descriptions, to check them against the reports' schemas.
#[cfg(test)]
pub(crate) mod readme {
    use std::collections::BTreeSet;

    use schemars::JsonSchema;

    /// The names at the top level of the `{…}` that `text` starts with (`name?` is `name`;
    /// `…` stands for fields listed elsewhere).
    pub(crate) fn top_level_keys(text: &str) -> BTreeSet<String> {
        let mut keys = BTreeSet::new();
        let mut depth = 0;
        let mut name = String::new();
        let mut in_value = false;
        for c in text.chars() {
            match c {
                '{' | '[' | '(' => {
                    depth += 1;
                    if depth > 1 {
                        in_value = true;
                    }
                }
                '}' | ']' | ')' => depth -= 1,
                ',' if depth == 1 => in_value = false,
                ':' if depth == 1 => in_value = true,
                _ if depth == 1 && !in_value => name.push(c),
                _ => {}
            }
            if depth == 1 && matches!(c, ',' | ':') || depth == 0 {
                let key = name.trim().trim_end_matches('?').to_owned();
                if !key.is_empty() && key != "…" {
                    keys.insert(key);
                }
                name.clear();
            }
            if depth == 0 {
                break;
            }
        }
        keys
    }

    pub(crate) fn properties<T: JsonSchema>() -> BTreeSet<String> {
        let schema = schemars::schema_for!(T).to_value();
        schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The README's table row that starts with `row_start`.
    pub(crate) fn row(row_start: &str) -> &'static str {
        let readme = include_str!("../../../README.md");
        readme
            .lines()
            .find(|l| l.starts_with(row_start))
            .unwrap_or_else(|| panic!("no README row starts with {row_start}"))
    }

    /// The README's result cell of the table row that starts with `row_start`.
    pub(crate) fn result_cell(row_start: &str) -> BTreeSet<String> {
        top_level_keys(row(row_start).rsplit(" | `").next().unwrap_or_default())
    }

    #[test]
    fn keys_are_read_at_the_top_level_only() {
        let keys = top_level_keys("{a, b: {c, d}, e?: [{f}], …, g} h");
        let expected: BTreeSet<String> = ["a", "b", "e", "g"].map(String::from).into();
        assert_eq!(keys, expected);
    }
}
