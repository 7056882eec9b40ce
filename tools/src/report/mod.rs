//! Typed reports: what a tool (or a part of every writing tool's result) found, as one value
//! that serializes to the JSON result and renders the text many clients show the model alone.
//! JSON and text come from the same fields, so they cannot drift apart, and a Rust host reads
//! the type instead of keys of a `serde_json::Value`.

pub mod graph;
mod write;

pub use crate::left_out::{LeftOutReport, RuleCount};
pub use graph::GraphReport;
pub use write::{
    ChangedOutside, CheckScope, MissingDependenciesNote, NewDiagnostic, UncheckedFile,
    WriteDiagnostics, WriteReport,
};

/// The text of a report, as the agent reads it.
pub trait Render {
    /// The report's lines, newline-separated, without a trailing newline.
    fn render(&self) -> String;
}
