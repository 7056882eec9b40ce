//! What ignore rules left out of a search or of the index, said the same way everywhere:
//! `left_out_by_ignore: {files, capped, rules: [{file, files}]}` and one line of text, so a
//! zero is never silent.

use std::path::Path;

use cc_workspace::walk::LeftOut;
use serde_json::{json, Value};

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The JSON of `left_out`, rule files relative to `root`.
pub(crate) fn value(root: &Path, left_out: &LeftOut) -> Value {
    let rules: Vec<Value> = left_out
        .by_rule
        .iter()
        .map(|(file, files)| json!({"file": relative(root, file), "files": files}))
        .collect();
    json!({"files": left_out.files, "capped": left_out.capped, "rules": rules})
}

/// `N file(s) of the language were not <what>, left out by ignore rules: 2 by .gitignore`.
pub(crate) fn line(root: &Path, left_out: &LeftOut, what: &str) -> String {
    let by: Vec<String> = left_out
        .by_rule
        .iter()
        .take(5)
        .map(|(file, files)| format!("{files} by {}", relative(root, file)))
        .collect();
    format!(
        "{}{} file(s) {what}, left out by ignore rules: {}",
        if left_out.capped { "at least " } else { "" },
        left_out.files,
        by.join(", ")
    )
}
