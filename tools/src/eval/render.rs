//! The JSON result of `eval` and its text rendering.

use cc_kernel_bridge::{CellOutcome, DisplayItem};
use serde_json::{json, Map, Value};

/// Whether a rich output goes to the result as image content (and so nowhere else).
pub(crate) fn is_attached_image(item: &DisplayItem) -> bool {
    item.mime.starts_with("image/") && item.mime != "image/svg+xml"
}

/// The decoded size of base64 `data`.
fn decoded_bytes(data: &str) -> usize {
    data.len() / 4 * 3
}

/// `{"stdout", "stderr", "result", "display", "error"?, "truncated"?, "state",
/// "timed_out"?, "cancelled"?, "notices"?}`. An image of `display` is there by its type and
/// size only (`"attached": "image"`): its data is the result's image content, once.
pub(crate) fn json(outcome: &CellOutcome) -> Value {
    let mut object = Map::new();
    object.insert("stdout".into(), json!(outcome.stdout));
    object.insert("stderr".into(), json!(outcome.stderr));
    object.insert("result".into(), json!(outcome.result));
    let display: Vec<Value> = outcome
        .display
        .iter()
        .map(|item| {
            if is_attached_image(item) {
                json!({"mime": item.mime, "bytes": decoded_bytes(&item.data), "attached": "image"})
            } else {
                json!({"mime": item.mime, "data": item.data})
            }
        })
        .collect();
    object.insert("display".into(), json!(display));
    if let Some(error) = &outcome.error {
        object.insert("error".into(), json!(error));
    }
    if let Some(truncated) = &outcome.truncated {
        object.insert("truncated".into(), json!(truncated));
    }
    object.insert("state".into(), json!(outcome.state.as_str()));
    if outcome.timed_out {
        object.insert("timed_out".into(), json!(true));
    }
    if outcome.cancelled {
        object.insert("cancelled".into(), json!(true));
    }
    if !outcome.notices.is_empty() {
        object.insert("notices".into(), json!(outcome.notices));
    }
    Value::Object(object)
}

/// What a person (or a model reading text) needs: the output, the value, what was shown,
/// the error, and what happened to the kernel.
pub(crate) fn text(outcome: &CellOutcome) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !outcome.stdout.is_empty() {
        parts.push(outcome.stdout.trim_end_matches('\n').to_owned());
    }
    if !outcome.stderr.is_empty() {
        parts.push(format!(
            "[stderr]\n{}",
            outcome.stderr.trim_end_matches('\n')
        ));
    }
    // Each rich output says where it went: only text is in this text.
    for item in &outcome.display {
        parts.push(match item.mime.as_str() {
            "text/plain" => item.data.clone(),
            mime if is_attached_image(item) => format!(
                "[{mime} image, {} bytes: attached to this result as an image]",
                decoded_bytes(&item.data)
            ),
            mime => format!(
                "[{mime}, {} characters: in the structured result's `display`, not in this text]",
                item.data.chars().count()
            ),
        });
    }
    if let Some(result) = &outcome.result {
        parts.push(format!("=> {result}"));
    }
    if let Some(error) = &outcome.error {
        parts.push(error.traceback.trim_end().to_owned());
    }
    if let Some(truncated) = &outcome.truncated {
        parts.push(format!(
            "[output over the cell's budget: {} bytes of stdout and {} bytes of stderr cut from \
             the middle]",
            truncated.stdout, truncated.stderr
        ));
    }
    for notice in &outcome.notices {
        parts.push(format!("[{notice}]"));
    }
    if parts.is_empty() {
        parts.push("[no output]".to_owned());
    }
    let mut text = parts.join("\n");
    text.push_str(&format!("\n[state: {}]", outcome.state.as_str()));
    text
}
