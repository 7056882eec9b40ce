//! Test support, compiled for this crate's tests and with the `test-support` feature (the
//! crates that test through a registry enable it in their `[dev-dependencies]`): a [`Run`]
//! built in one line instead of by hand.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use cc_tools::{Resources, Run, Surface};
//! let dir = tempfile::tempdir()?;
//! let run = Run::builder(dir.path()).conversation("demo").surface(Surface::Plan).build();
//! let registry = Resources { host_files: true, ..Default::default() }.build(run);
//! assert_eq!(registry.run().conversation_id, "demo");
//! # Ok(()) }
//! ```

use std::path::Path;
use std::sync::Arc;

use crate::approve::{AllowAll, Approver};
use crate::registry::Run;
use crate::root::WorkspaceRoot;
use crate::tier::Surface;

/// Builds a [`Run`]: conversation `test`, the full surface and [`AllowAll`] unless told
/// otherwise.
#[derive(Clone)]
pub struct RunBuilder {
    run: Run,
}

impl std::fmt::Debug for RunBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunBuilder")
            .field("run", &self.run)
            .finish()
    }
}

impl Run {
    /// A builder for a run rooted at `root`, which must be an existing folder (a test
    /// fixture: panics otherwise).
    pub fn builder(root: impl AsRef<Path>) -> RunBuilder {
        let root = root.as_ref();
        let root = WorkspaceRoot::new(root)
            .unwrap_or_else(|error| panic!("no workspace root at {}: {error}", root.display()));
        RunBuilder::new(root)
    }
}

impl RunBuilder {
    /// A builder for a run over `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        RunBuilder {
            run: Run {
                conversation_id: "test".into(),
                root,
                surface: Surface::Full,
                approver: Arc::new(AllowAll),
            },
        }
    }

    /// The conversation id (per-run state such as debug sessions is keyed by it).
    pub fn conversation(mut self, id: impl Into<String>) -> Self {
        self.run.conversation_id = id.into();
        self
    }

    /// The surface the agent sees.
    pub fn surface(mut self, surface: Surface) -> Self {
        self.run.surface = surface;
        self
    }

    /// Where the run's commit journals go (instead of the user's state folder).
    pub fn state_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.run.root = self.run.root.clone().with_state_dir(dir);
        self
    }

    /// The approver of write- and exec-tier calls.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.run.approver = approver;
        self
    }

    /// The run.
    pub fn build(self) -> Run {
        self.run
    }
}

/// A successful result of `tool` is its typed report: it conforms to the output schema the
/// tool publishes, and read back as the report's type ([`crate::report`]) it serializes to
/// the same JSON and renders the same text, so the schema, the JSON, the text and a Rust
/// host's type say the same. The run's notices (and their `note:`
/// lines), which the registry adds to any result, are set aside first; a tool without a
/// report that reads back (`debug`, a test's own) passes.
pub fn assert_typed_result(tool: &str, value: &serde_json::Value, text: &str) {
    use crate::report::{eval, files, graph, lsp, structural};
    match tool {
        "read" => reads_back::<files::ReadReport>(value, text),
        "write" => reads_back::<files::WriteFileReport>(value, text),
        "edit" => reads_back::<files::EditReport>(value, text),
        "apply_patch" => reads_back::<files::PatchReport>(value, text),
        "ask_user" => reads_back::<files::AskUserReport>(value, text),
        "graph" => reads_back::<graph::GraphReport>(value, text),
        "lsp" => reads_back::<lsp::LspReport>(value, text),
        "lsp_rename" => reads_back::<lsp::RenameReport>(value, text),
        "ast_grep" => reads_back::<structural::GrepResult>(value, text),
        "ast_edit" => reads_back::<structural::AstEditReport>(value, text),
        "resolve" => reads_back::<structural::ResolveReport>(value, text),
        "eval" => reads_back::<eval::EvalReport>(value, text),
        "vibe_list" => reads_back::<crate::vibe::VibeListReport>(value, text),
        "vibe_spawn" | "vibe_send" | "vibe_wait" | "vibe_kill" => {
            reads_back::<crate::vibe::WorkerSnapshot>(value, text);
        }
        "debug" => debug_reads_back(value, text),
        _ => {}
    }
}

/// A `debug` result is one of [`crate::debug::DebugReport`]'s reports, field for field, and
/// its text is that report's (its JSON does not say which operation made it, so every report
/// that reads it back whole is tried, with either rendering option).
fn debug_reads_back(value: &serde_json::Value, text: &str) {
    use crate::debug::{DebugReport as D, RenderOptions};
    use cc_dap_client::report as r;
    assert_conforms::<D>(value);
    let (value, text) = without_run_notices(value, text);
    fn whole<T>(value: &serde_json::Value, wrap: fn(T) -> D) -> Option<D>
    where
        T: serde::de::DeserializeOwned + serde::Serialize,
    {
        let report: T = serde_json::from_value(value.clone()).ok()?;
        (serde_json::to_value(&report).ok()? == *value).then(|| wrap(report))
    }
    let readings = [
        whole::<r::AdaptersReport>(&value, D::Adapters),
        whole::<r::StatusReport>(&value, D::Status),
        whole::<r::BreakpointsReport>(&value, D::Breakpoints),
        whole::<r::StartReport>(&value, D::Start),
        whole::<r::StepReport>(&value, D::Step),
        whole::<r::ThreadsReport>(&value, D::Threads),
        whole::<r::StackReport>(&value, D::Stack),
        whole::<r::ScopesReport>(&value, D::Scopes),
        whole::<r::VariablesReport>(&value, D::Variables),
        whole::<r::LocalsReport>(&value, D::Locals),
        whole::<r::EvaluateReport>(&value, D::Evaluate),
        whole::<r::OutputReport>(&value, D::Output),
        whole::<r::TerminateReport>(&value, D::Terminate),
    ];
    let read: Vec<D> = readings.into_iter().flatten().collect();
    assert!(!read.is_empty(), "not a debug report: {value:#}");
    let rendered = read.iter().any(|report| {
        [false, true]
            .into_iter()
            .any(|all_frames| report.render_with(RenderOptions { all_frames }) == text)
    });
    assert!(rendered, "the text is not the report's: {text}\n{value:#}");
}

/// `value` and `text` without the run's notices, which come last in `notices` (after a tool's
/// own, an eval cell's kernel notices) and as the text's last `note:` lines.
fn without_run_notices(value: &serde_json::Value, text: &str) -> (serde_json::Value, String) {
    use serde_json::Value;
    let mut value = value.clone();
    let mut text = text.to_owned();
    if let Some(Value::Array(notices)) = value.get_mut("notices") {
        let own = notices
            .iter()
            .take_while(|n| n["kind"] == crate::report::eval::KERNEL_NOTICE)
            .count();
        for notice in notices.drain(own..).rev() {
            let line = format!("\nnote: {}", notice["message"].as_str().unwrap_or(""));
            text = text
                .strip_suffix(&line)
                .unwrap_or_else(|| panic!("no {line:?} at the end of {text}"))
                .to_owned();
        }
        if own == 0 {
            value.as_object_mut().map(|o| o.remove("notices"));
        }
    }
    (value, text)
}

/// `value`, a whole result (the run's notices in it), conforms to the output schema the tool
/// publishes for `R` ([`crate::tool::output_schema_for`]), as an MCP client checks it.
fn assert_conforms<R: schemars::JsonSchema>(value: &serde_json::Value) {
    let schema = crate::tool::output_schema_for::<R>();
    let name = std::any::type_name::<R>();
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|error| panic!("the output schema of {name} does not compile: {error}"));
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|error| error.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "the result does not conform to the published schema of {name}: {errors:#?}\n{value:#}"
    );
}

/// [`assert_typed_result`] for one report type.
fn reads_back<R>(value: &serde_json::Value, text: &str)
where
    R: serde::de::DeserializeOwned
        + serde::Serialize
        + crate::report::Render
        + schemars::JsonSchema,
{
    assert_conforms::<R>(value);
    let (value, text) = without_run_notices(value, text);
    let report: R = serde_json::from_value(value.clone())
        .unwrap_or_else(|error| panic!("not the typed report ({error}): {value:#}"));
    assert_eq!(
        serde_json::to_value(&report).expect("a report serializes"),
        value,
        "the result carries what the report does not"
    );
    assert_eq!(report.render(), text, "the text is not the report's");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_is_checked_against_its_published_schema() {
        let edit = json!({"path": "a.py", "line": 3, "replacements": 1});
        assert_conforms::<crate::report::files::EditReport>(&edit);
        // The error envelope is part of every published schema.
        let failed = json!({"error": {"kind": "not_found", "message": "no a.py"}});
        assert_conforms::<crate::report::files::EditReport>(&failed);
        let wrong = json!({"path": "a.py", "line": "three", "replacements": 1});
        let refused = std::panic::catch_unwind(|| {
            assert_conforms::<crate::report::files::EditReport>(&wrong)
        });
        assert!(refused.is_err(), "a line that is not a number conforms");
    }
}
