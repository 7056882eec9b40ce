//! Turning navigation answers into what the agent sees: root-relative paths, 1-based lines
//! and the text of each line; caps that report the total.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cc_lsp_client::uri::uri_to_path;
use serde_json::{json, Value};

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

/// `{path, line, text}` for a URI and 0-based line.
pub(crate) fn location(root: &WorkspaceRoot, lines: &mut Lines, uri: &str, line0: u64) -> Value {
    let line = usize::try_from(line0).unwrap_or(0) + 1;
    match uri_to_path(uri) {
        Some(path) => json!({
            "path": root.relative(&path),
            "line": line,
            "text": lines.line(&path, line),
        }),
        None => json!({"path": uri, "line": line, "text": ""}),
    }
}

/// Location | Location[] | LocationLink[] | null → locations.
pub(crate) fn locations(root: &WorkspaceRoot, answer: &Value) -> Vec<Value> {
    let items: Vec<&Value> = match answer {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![answer],
        _ => Vec::new(),
    };
    let mut lines = Lines::default();
    items
        .into_iter()
        .filter_map(|item| {
            let (uri, range) = match item.get("targetUri") {
                Some(uri) => (
                    uri,
                    item.get("targetSelectionRange")
                        .or_else(|| item.get("targetRange")),
                ),
                None => (item.get("uri")?, item.get("range")),
            };
            let line0 = range?.get("start")?.get("line")?.as_u64()?;
            Some(location(root, &mut lines, uri.as_str()?, line0))
        })
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
pub(crate) fn symbols(root: &WorkspaceRoot, file_uri: Option<&str>, answer: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut lines = Lines::default();
    fn walk(
        root: &WorkspaceRoot,
        lines: &mut Lines,
        uri: Option<&str>,
        items: &[Value],
        container: Option<&str>,
        out: &mut Vec<Value>,
    ) {
        for item in items {
            let name = item.get("name").and_then(Value::as_str).unwrap_or("");
            let kind = symbol_kind(item.get("kind").and_then(Value::as_u64));
            let (item_uri, range) = match item.get("location") {
                Some(location) => (
                    location.get("uri").and_then(Value::as_str),
                    location.get("range"),
                ),
                None => (
                    uri,
                    item.get("selectionRange").or_else(|| item.get("range")),
                ),
            };
            let line0 = range
                .and_then(|r| r.get("start"))
                .and_then(|s| s.get("line"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let mut entry = match item_uri {
                Some(u) => location(root, lines, u, line0),
                None => json!({"line": line0 + 1}),
            };
            entry["name"] = json!(name);
            entry["kind"] = json!(kind);
            let container = container.or_else(|| item.get("containerName").and_then(Value::as_str));
            if let Some(container) = container.filter(|c| !c.is_empty()) {
                entry["container"] = json!(container);
            }
            out.push(entry);
            if let Some(children) = item.get("children").and_then(Value::as_array) {
                walk(root, lines, uri, children, Some(name), out);
            }
        }
    }
    if let Some(items) = answer.as_array() {
        walk(root, &mut lines, file_uri, items, None, &mut out);
    }
    out
}

/// Locations grouped by file, then by the definition they lie in (`in`), each with its line
/// text: "who uses this" in one reading.
pub(crate) fn grouped(locations: &[Value]) -> String {
    let mut out = String::new();
    let mut file: Option<&str> = None;
    let mut within: Option<String> = None;
    for location in locations {
        let path = location["path"].as_str().unwrap_or("");
        if file != Some(path) {
            out.push_str(&format!("{path}\n"));
            file = Some(path);
            within = None;
        }
        let place = match location.get("in").filter(|v| !v.is_null()) {
            Some(def) => format!(
                "in {} {} (line {})",
                def["kind"].as_str().unwrap_or(""),
                def["name"].as_str().unwrap_or(""),
                def["line"]
            ),
            None => "(top level)".to_owned(),
        };
        if within.as_deref() != Some(place.as_str()) {
            out.push_str(&format!("  {place}:\n"));
            within = Some(place);
        }
        out.push_str(&format!(
            "    {}: {}\n",
            location["line"],
            location["text"].as_str().unwrap_or("")
        ));
    }
    out.trim_end().to_owned()
}

/// The heading of a list of `total` results of which `shown` are listed: `first 50 of 313
/// references` when cut, `3 references` otherwise.
pub(crate) fn count_heading(shown: usize, total: usize, what: &str) -> String {
    if shown < total {
        format!("first {shown} of {total} {what}")
    } else {
        format!("{total} {what}")
    }
}

/// The first `cap` items, with the total and whether it was cut.
pub(crate) fn capped(items: Vec<Value>, cap: usize) -> (Vec<Value>, usize, bool) {
    let total = items.len();
    let mut items = items;
    items.truncate(cap);
    (items, total, total > cap)
}
