//! The host tools' results: `read`, `write`, `edit`, `apply_patch` and `ask_user`. A writing
//! tool's result carries the write's checks under `diagnostics` (the run attaches them).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Render, WriteReport};

/// The write's checks, after a writing tool's own lines (as the run attaches them).
fn with_diagnostics(text: String, diagnostics: Option<&WriteReport>) -> String {
    match diagnostics.filter(|d| !d.is_empty()) {
        Some(diagnostics) => format!("{text}\n{}", diagnostics.render()),
        None => text,
    }
}

/// A line `read` cut at its byte cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CutLine {
    /// The line (none when reading from a byte offset).
    pub line: Option<u64>,
    /// The bytes of it returned.
    pub kept_bytes: usize,
    /// The `byte_offset` that continues it.
    pub continue_at: u64,
}

/// `read`: a stretch of a text file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadReport {
    /// The file, relative to the root.
    pub path: String,
    /// The lines returned.
    pub content: String,
    /// The first line returned (none when reading from a byte offset).
    pub start_line: Option<u64>,
    /// The last line returned.
    pub end_line: Option<u64>,
    /// The file's lines, when the rest of it was within the scan budget.
    pub total_lines: Option<u64>,
    /// The file's size.
    pub bytes: u64,
    /// Whether more of the file follows.
    pub truncated: bool,
    /// Lines cut at the line cap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_lines: Vec<CutLine>,
    /// Where reading started, when `byte_offset` was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_offset: Option<u64>,
}

impl Render for ReadReport {
    fn render(&self) -> String {
        let shown_total = self
            .total_lines
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        let shown_start = match self.start_line {
            Some(n) => format!("lines {n}"),
            None => format!("byte {}", self.byte_offset.unwrap_or(0)),
        };
        format!(
            "{} ({shown_start}-{} of {shown_total}, {} bytes{})\n{}",
            self.path,
            self.end_line
                .map_or_else(|| "?".to_owned(), |n| n.to_string()),
            self.bytes,
            if self.truncated || !self.cut_lines.is_empty() {
                ", cut"
            } else {
                ""
            },
            self.content
        )
    }
}

/// `write`: a whole file written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteFileReport {
    /// The file, relative to the root.
    pub path: String,
    /// Bytes written.
    pub bytes: usize,
    /// Whether the file is new.
    pub created: bool,
    /// What the write's checks found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<WriteReport>,
}

impl Render for WriteFileReport {
    fn render(&self) -> String {
        with_diagnostics(
            format!(
                "{} {} ({} bytes)",
                if self.created { "created" } else { "wrote" },
                self.path,
                self.bytes
            ),
            self.diagnostics.as_ref(),
        )
    }
}

/// `edit`: one replacement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EditReport {
    /// The file, relative to the root.
    pub path: String,
    /// The line the replacement starts at.
    pub line: usize,
    /// Always 1.
    pub replacements: usize,
    /// What the write's checks found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<WriteReport>,
}

impl Render for EditReport {
    fn render(&self) -> String {
        with_diagnostics(
            format!("edited {} at line {}", self.path, self.line),
            self.diagnostics.as_ref(),
        )
    }
}

/// What a patch did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PatchAction {
    /// A new file.
    Created,
    /// A file removed.
    Deleted,
    /// A file changed.
    Modified,
}

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PatchedFile {
    /// The file, relative to the root.
    pub path: String,
    /// What was done to it.
    pub action: PatchAction,
    /// Hunks applied.
    pub hunks: usize,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

/// `apply_patch`: every file of the patch, written together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PatchReport {
    /// The files, in the patch's order.
    pub files: Vec<PatchedFile>,
    /// What the write's checks found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<WriteReport>,
}

impl Render for PatchReport {
    fn render(&self) -> String {
        let files = self
            .files
            .iter()
            .map(|f| format!("{} (+{} -{})", f.path, f.added, f.removed))
            .collect::<Vec<_>>()
            .join(", ");
        with_diagnostics(format!("patched {files}"), self.diagnostics.as_ref())
    }
}

/// `ask_user`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AskUserReport {
    /// The user answered.
    Answered {
        /// The options chosen.
        selected: Vec<String>,
        /// Their own words.
        text: Option<String>,
    },
    /// The user skipped the question.
    Skipped {
        /// What to do now.
        instruction: String,
    },
}

impl Render for AskUserReport {
    fn render(&self) -> String {
        match self {
            AskUserReport::Answered { selected, text } => match (text, selected.is_empty()) {
                (Some(text), true) => format!("answered: {text}"),
                (Some(text), false) => format!("answered: {} ({text})", selected.join(", ")),
                (None, _) => format!("answered: {}", selected.join(", ")),
            },
            AskUserReport::Skipped { instruction } => {
                // The instruction begins with what happened; the text says it once.
                let rest = instruction
                    .strip_prefix("The user skipped this question. ")
                    .unwrap_or(instruction);
                format!("skipped. {rest}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::readme::{properties, result_cell};

    /// The README's rows list every field of each report and no other (`diagnostics` is the
    /// write's checks, attached by the run).
    #[test]
    fn the_readme_lists_the_fields_of_the_reports() {
        assert_eq!(result_cell("| `read` |"), properties::<ReadReport>());
        assert_eq!(result_cell("| `write` |"), properties::<WriteFileReport>());
        assert_eq!(result_cell("| `edit` |"), properties::<EditReport>());
        assert_eq!(
            result_cell("| `apply_patch` |"),
            properties::<PatchReport>()
        );
    }

    /// `ask_user`'s row names each answer's fields: the union of its two `{…}` is the union
    /// of the report's variants.
    #[test]
    fn the_readme_lists_the_fields_of_each_answer() {
        use crate::report::readme::{row, top_level_keys};
        let cell = row("| `ask_user` |")
            .rsplit(" | ")
            .next()
            .unwrap_or_default();
        let mut named = std::collections::BTreeSet::new();
        for (at, _) in cell.match_indices('{') {
            if cell[..at].ends_with('`') {
                named.extend(top_level_keys(&cell[at..]));
            }
        }
        let schema = schemars::schema_for!(AskUserReport).to_value();
        let mut fields = std::collections::BTreeSet::new();
        for variant in schema["oneOf"].as_array().expect("variants") {
            if let Some(properties) = variant["properties"].as_object() {
                fields.extend(properties.keys().cloned());
            }
        }
        assert_eq!(named, fields);
    }
}
