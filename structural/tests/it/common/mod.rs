//! Test helpers: run a pattern over a snippet and render the result as the tool's JSON.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.
#![allow(dead_code)]

use cc_structural::{Captured, FileMatches, Languages, Pattern, PatternError, SourceParser};
use serde_json::{json, Map, Value};

/// Compiles `pattern` for `language` (panics on an unknown language).
pub fn compile(language: &str, pattern: &str) -> Result<Pattern, PatternError> {
    let lang = Languages::builtin()
        .by_name(language)
        .unwrap_or_else(|| panic!("unknown language {language}"));
    Pattern::new(lang, pattern, None)
}

/// Every match of a compiled pattern in `code`. Checks the pre-filter on the way: a source
/// with a match must pass it, or a folder search would skip that file unparsed.
pub fn find(pattern: &Pattern, code: &str) -> FileMatches {
    let found = pattern
        .find_all(&mut SourceParser::new(), code.as_bytes())
        .expect("parse");
    assert!(
        found.matches.is_empty() || pattern.may_match(code.as_bytes()),
        "the pre-filter ({:?}) would skip a file where `{}` matches",
        pattern
            .literals()
            .iter()
            .map(|l| String::from_utf8_lossy(l))
            .collect::<Vec<_>>(),
        pattern.text()
    );
    found
}

/// `{"pattern", "context", "matches": [{"start", "end", "text", "captures"}]}`, or
/// `{"pattern", "error": …}`.
pub fn run(language: &str, pattern: &str, code: &str) -> Value {
    let compiled = match compile(language, pattern) {
        Ok(p) => p,
        Err(error) => return json!({"pattern": pattern, "error": error.to_string()}),
    };
    let matches: Vec<Value> = find(&compiled, code)
        .matches
        .iter()
        .map(|m| {
            let mut captures = Map::new();
            for (name, captured) in &m.captures {
                let value = match captured {
                    Captured::Node(r) | Captured::Text(r) => Value::String(code[r.clone()].into()),
                    Captured::Nodes { items, .. } => items
                        .iter()
                        .map(|r| Value::String(code[r.clone()].into()))
                        .collect(),
                };
                captures.insert(name.clone(), value);
            }
            json!({
                "start": format!("{}:{}", m.start.line, m.start.column),
                "end": format!("{}:{}", m.end.line, m.end.column),
                "text": &code[m.range.clone()],
                "captures": captures,
            })
        })
        .collect();
    json!({"pattern": pattern, "context": compiled.context().name(), "matches": matches})
}

/// How many matches `pattern` has in `code`.
pub fn count(language: &str, pattern: &str, code: &str) -> usize {
    texts(language, pattern, code).len()
}

/// The text of every match.
pub fn texts(language: &str, pattern: &str, code: &str) -> Vec<String> {
    let compiled = compile(language, pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
    find(&compiled, code)
        .matches
        .iter()
        .map(|m| code[m.range.clone()].to_owned())
        .collect()
}

/// Snapshots one case as `<language>_<name>`.
#[macro_export]
macro_rules! case {
    ($language:expr, $name:expr, $pattern:expr, $code:expr) => {
        insta::assert_json_snapshot!(
            format!("{}_{}", $language, $name),
            common::run($language, $pattern, $code)
        );
    };
}
