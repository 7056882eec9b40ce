//! Turning navigation answers into what the agent sees: root-relative paths, 1-based lines
//! and the text of each line; caps that report the total.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cc_lsp_client::uri::uri_to_path;
use serde_json::Value;

use crate::report::lsp::{Place, SymbolEntry};
use crate::root::WorkspaceRoot;

/// Reads each file once per call, for the text of result lines.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    files: HashMap<PathBuf, Vec<String>>,
}

impl Lines {
    pub(crate) fn line(&mut self, path: &Path, line: usize) -> String {
        let lines = self.files.entry(path.to_path_buf()).or_insert_with(|| {
            std::fs::read_to_string(path)
                .map(|text| text.lines().map(str::to_owned).collect())
                .unwrap_or_default()
        });
        lines
            .get(line.saturating_sub(1))
            .map(|l| l.trim().to_owned())
            .unwrap_or_default()
    }
}

/// The place of a URI and 0-based line: root-relative path, 1-based line, its text.
pub(crate) fn location(root: &WorkspaceRoot, lines: &mut Lines, uri: &str, line0: u64) -> Place {
    let line = line0.saturating_add(1);
    let (path, text) = match uri_to_path(uri) {
        Some(path) => {
            let text = lines.line(&path, usize::try_from(line).unwrap_or(usize::MAX));
            (root.relative(&path), text)
        }
        None => (uri.to_owned(), String::new()),
    };
    Place {
        path,
        line,
        text,
        within: None,
        confirmed_by: None,
        why: None,
    }
}

/// Location | Location[] | LocationLink[] | null → locations.
pub(crate) fn locations(root: &WorkspaceRoot, answer: &Value) -> Vec<Place> {
    let mut lines = Lines::default();
    cc_lsp_client::requests::location_starts(answer)
        .into_iter()
        .map(|start| location(root, &mut lines, start.uri, start.line))
        .collect()
}

/// Hover contents as plain text.
pub(crate) fn hover_text(answer: &Value) -> Option<String> {
    fn part(value: &Value) -> Option<String> {
        match value {
            Value::String(text) => Some(text.clone()),
            Value::Object(object) => object.get("value").and_then(Value::as_str).map(|value| {
                match object.get("language").and_then(Value::as_str) {
                    Some(language) => format!("```{language}\n{value}\n```"),
                    None => value.to_owned(),
                }
            }),
            Value::Array(items) => {
                let parts: Vec<String> = items.iter().filter_map(part).collect();
                (!parts.is_empty()).then(|| parts.join("\n\n"))
            }
            _ => None,
        }
    }
    part(answer.get("contents")?)
        .map(|text| decode_entities(&text))
        .filter(|text| !text.trim().is_empty())
}

/// Hover markdown with the HTML entities servers put in it (`&nbsp;` for indentation in
/// basedpyright, `&lt;` in others) turned back into the characters an agent reads.
pub(crate) fn decode_entities(text: &str) -> String {
    const ENTITIES: [(&str, &str); 8] = [
        ("&nbsp;", " "),
        ("&#160;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&apos;", "'"),
        // Last, so that `&amp;lt;` becomes `&lt;` and not `<`.
        ("&amp;", "&"),
    ];
    let mut out = text.replace('\u{a0}', " ");
    for (entity, character) in ENTITIES {
        out = out.replace(entity, character);
    }
    out
}

pub(crate) fn symbol_kind(kind: Option<u64>) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum_member",
        "struct",
        "event",
        "operator",
        "type_parameter",
    ];
    kind.and_then(|k| usize::try_from(k).ok())
        .and_then(|k| NAMES.get(k.wrapping_sub(1)))
        .copied()
        .unwrap_or("unknown")
}

/// DocumentSymbol[] (flattened, with their container) or SymbolInformation[].
pub(crate) fn symbols(
    root: &WorkspaceRoot,
    file_uri: Option<&str>,
    answer: &Value,
) -> Vec<SymbolEntry> {
    let mut out = Vec::new();
    let mut lines = Lines::default();
    // Depth first, in the server's order, without recursion: each item with the name of the
    // symbol it is in.
    let top: &[Value] = answer.as_array().map_or(&[], Vec::as_slice);
    let mut stack: Vec<(&Value, Option<&str>)> = top.iter().rev().map(|i| (i, None)).collect();
    while let Some((item, container)) = stack.pop() {
        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
        let kind = symbol_kind(item.get("kind").and_then(Value::as_u64));
        let (item_uri, range) = match item.get("location") {
            Some(location) => (
                location.get("uri").and_then(Value::as_str),
                location.get("range"),
            ),
            None => (
                file_uri,
                item.get("selectionRange").or_else(|| item.get("range")),
            ),
        };
        let line0 = range
            .and_then(|r| r.get("start"))
            .and_then(|s| s.get("line"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let (path, line, text) = match item_uri {
            Some(u) => {
                let place = location(root, &mut lines, u, line0);
                (Some(place.path), place.line, Some(place.text))
            }
            None => (None, line0 + 1, None),
        };
        let container = container.or_else(|| item.get("containerName").and_then(Value::as_str));
        out.push(SymbolEntry {
            path,
            line,
            text,
            name: name.to_owned(),
            kind: kind.to_owned(),
            container: container.filter(|c| !c.is_empty()).map(str::to_owned),
        });
        if let Some(children) = item.get("children").and_then(Value::as_array) {
            stack.extend(children.iter().rev().map(|child| (child, Some(name))));
        }
    }
    out
}

/// The first `cap` items, with the total and whether it was cut.
pub(crate) fn capped<T>(items: Vec<T>, cap: usize) -> (Vec<T>, usize, bool) {
    let total = items.len();
    let mut items = items;
    items.truncate(cap);
    (items, total, total > cap)
}
