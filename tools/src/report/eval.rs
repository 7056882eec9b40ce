//! The `eval` tool's result: what a cell printed, showed and returned, and what happened to
//! its kernel.

use cc_kernel_bridge::{CellError, CellOutcome, DisplayItem, StateStatus, Truncated};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Render;

/// An `eval` result. An image of `display` is there by its type and size only: its data is
/// the result's image content, once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvalReport {
    /// What the cell wrote to stdout (capped).
    pub stdout: String,
    /// What it wrote to stderr (capped).
    pub stderr: String,
    /// The echoed value of the last expression, as text.
    pub result: Option<String>,
    /// Rich outputs in the order they were produced.
    pub display: Vec<Shown>,
    /// The exception that ended the cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CellError>,
    /// Bytes cut from the middle of each stream (over the cell's budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncated>,
    /// Whether earlier variables are still there (`kept`) or the interpreter was replaced
    /// (`lost`).
    pub state: StateStatus,
    /// Stopped after producing nothing for the inactivity budget.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// Interrupted because the call was cancelled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// What happened to the kernel (a restart, a kill, …), as `kernel` notices; the run's
    /// own notices, when any, follow them in the same list (the registry adds them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<ResultNotice>,
}

/// A notice in a result: `{kind, message, …detail}`, the shape of the run's notices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResultNotice {
    /// What happened (`kernel` for an `eval` cell's kernel; the run's: `recovered`,
    /// `tree_changed`, …).
    pub kind: String,
    /// One sentence for the agent.
    pub message: String,
    /// Structured facts of the run's notices.
    #[serde(flatten)]
    pub detail: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The kind of an `eval` cell's own notices.
pub const KERNEL_NOTICE: &str = "kernel";

/// One rich output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Shown {
    /// An image attached to the result as image content.
    Attached {
        /// Its MIME type.
        mime: String,
        /// Its decoded size.
        bytes: usize,
        /// Always `image`: where the data went.
        attached: AttachedAs,
    },
    /// Anything else, inline.
    Inline {
        /// Its MIME type.
        mime: String,
        /// The content (base64 for binary types).
        data: String,
    },
}

/// Where an attached output went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttachedAs {
    /// The result's image content.
    Image,
}

/// Whether a rich output goes to the result as image content (and so nowhere else).
pub(crate) fn is_attached_image(item: &DisplayItem) -> bool {
    item.mime.starts_with("image/") && item.mime != "image/svg+xml"
}

impl From<&CellOutcome> for EvalReport {
    fn from(outcome: &CellOutcome) -> Self {
        EvalReport {
            stdout: outcome.stdout.clone(),
            stderr: outcome.stderr.clone(),
            result: outcome.result.clone(),
            display: outcome
                .display
                .iter()
                .map(|item| {
                    if is_attached_image(item) {
                        Shown::Attached {
                            mime: item.mime.clone(),
                            // The decoded size of the base64 data.
                            bytes: item.data.len() / 4 * 3,
                            attached: AttachedAs::Image,
                        }
                    } else {
                        Shown::Inline {
                            mime: item.mime.clone(),
                            data: item.data.clone(),
                        }
                    }
                })
                .collect(),
            error: outcome.error.clone(),
            truncated: outcome.truncated,
            state: outcome.state,
            timed_out: outcome.timed_out,
            cancelled: outcome.cancelled,
            notices: outcome
                .notices
                .iter()
                .map(|message| ResultNotice {
                    kind: KERNEL_NOTICE.into(),
                    message: message.clone(),
                    detail: Default::default(),
                })
                .collect(),
        }
    }
}

impl Render for EvalReport {
    /// The output, the value, what was shown (and where it went), the error, and what
    /// happened to the kernel.
    fn render(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.stdout.is_empty() {
            parts.push(self.stdout.trim_end_matches('\n').to_owned());
        }
        if !self.stderr.is_empty() {
            parts.push(format!("[stderr]\n{}", self.stderr.trim_end_matches('\n')));
        }
        for item in &self.display {
            parts.push(match item {
                Shown::Attached { mime, bytes, .. } => {
                    format!("[{mime} image, {bytes} bytes: attached to this result as an image]")
                }
                Shown::Inline { mime, data } if mime == "text/plain" => data.clone(),
                Shown::Inline { mime, data } => format!(
                    "[{mime}, {} characters: in the structured result's `display`, not in this text]",
                    data.chars().count()
                ),
            });
        }
        if let Some(result) = &self.result {
            parts.push(format!("=> {result}"));
        }
        if let Some(error) = &self.error {
            parts.push(error.traceback.trim_end().to_owned());
        }
        if let Some(truncated) = &self.truncated {
            parts.push(format!(
                "[output over the cell's budget: {} bytes of stdout and {} bytes of stderr cut \
                 from the middle]",
                truncated.stdout, truncated.stderr
            ));
        }
        // The run's notices are the registry's to render (`note:` lines).
        for notice in self.notices.iter().filter(|n| n.kind == KERNEL_NOTICE) {
            parts.push(format!("[{}]", notice.message));
        }
        if parts.is_empty() {
            parts.push("[no output]".to_owned());
        }
        let mut text = parts.join("\n");
        text.push_str(&format!("\n[state: {}]", self.state.as_str()));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::readme::{properties, result_cell};

    /// The README's `eval` row lists every field of the report and no other.
    #[test]
    fn the_readme_lists_the_fields_of_the_report() {
        assert_eq!(result_cell("| `eval` |"), properties::<EvalReport>());
    }
}
