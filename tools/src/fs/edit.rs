use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::FileLimits;
use crate::error::{ErrorKind, ToolError};
use crate::report::files::EditReport;
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::report_output;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// `edit`: replace one exact occurrence of a text in a file.
#[derive(Debug, Clone)]
pub struct EditTool {
    root: WorkspaceRoot,
    limits: FileLimits,
}

impl EditTool {
    /// An `edit` tool for `root` with the default [`FileLimits`].
    pub fn new(root: WorkspaceRoot) -> Self {
        EditTool {
            root,
            limits: FileLimits::default(),
        }
    }

    /// The same tool with other limits.
    pub fn with_limits(mut self, limits: FileLimits) -> Self {
        self.limits = limits;
        self
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// File path, relative to the workspace root (or absolute inside it).
    path: String,
    /// The exact text to replace, including whitespace; it must occur exactly once.
    old_text: String,
    /// The replacement.
    new_text: String,
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> &str {
        "Replace `old_text` with `new_text` in a file inside the workspace. `old_text` must \
         occur exactly once (include surrounding lines to make it unique). Language-server \
         diagnostics that the edit introduced are attached when a server covers the file. \
         Files over 16 MiB are refused (`too_large`)."
    }

    fn input_schema(&self) -> Value {
        schema_for::<EditArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<EditReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: EditArgs = parse_args(args)?;
        if args.old_text.is_empty() {
            return Err(ToolError::invalid_arguments(
                "old_text is empty; to create or replace a whole file use `write`",
            ));
        }
        if args.old_text == args.new_text {
            return Err(ToolError::invalid_arguments(
                "old_text and new_text are identical; nothing would change",
            ));
        }
        let path = self.root.resolve_existing(&args.path)?;
        let shown = self.root.relative(&path);
        let (root, limits) = (self.root.clone(), self.limits);
        let (planned, name) = (path.clone(), shown.clone());
        let edit = tokio::task::spawn_blocking(move || plan(&root, &planned, &name, &args, limits))
            .await
            .map_err(|error| ToolError::internal(format!("the edit did not finish: {error}")))??;
        ctx.before_write(&[crate::PlannedWrite {
            path: path.clone(),
            content: Some(edit.updated.as_bytes().to_vec()),
        }])
        .await;
        let (root, target, name) = (self.root.clone(), path.clone(), shown.clone());
        let line = edit.line;
        tokio::task::spawn_blocking(move || write(&root, &target, &name, &edit, limits))
            .await
            .map_err(|error| ToolError::internal(format!("the edit did not finish: {error}")))??;
        let shown = self.root.relative(&path);
        Ok(report_output(&EditReport {
            path: shown,
            line,
            replacements: 1,
            diagnostics: None,
        })?
        .with_written([path]))
    }
}

/// An edit computed from the file as it was read.
struct Planned {
    /// The file's text when read.
    text: String,
    /// Its text after the edit.
    updated: String,
    /// The 1-based line of the replaced text.
    line: usize,
}

/// Finds the one occurrence and computes the new text (nothing is written).
fn plan(
    root: &WorkspaceRoot,
    path: &std::path::Path,
    shown: &str,
    args: &EditArgs,
    limits: FileLimits,
) -> Result<Planned, ToolError> {
    let text = super::read_text(root, path, shown, limits.edit_bytes)?;
    let starts: Vec<usize> = text
        .match_indices(args.old_text.as_str())
        .map(|(start, _)| start)
        .collect();
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let start = match starts.as_slice() {
        [] => {
            return Err(ToolError::new(
                ErrorKind::NoMatch,
                format!(
                    "old_text does not occur in `{shown}`; read the file and copy the exact \
                         text, including indentation and line breaks"
                ),
            ))
        }
        [only] => *only,
        many => {
            let lines: Vec<usize> = many.iter().map(|offset| line_of(*offset)).collect();
            return Err(ToolError::new(
                ErrorKind::Ambiguous,
                format!(
                    "old_text occurs {} times in `{shown}` (lines {}); include more \
                         surrounding text so it occurs exactly once",
                    many.len(),
                    lines
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .with_detail("lines", lines));
        }
    };
    let mut updated = String::with_capacity(text.len() + args.new_text.len());
    updated.push_str(&text[..start]);
    updated.push_str(&args.new_text);
    updated.push_str(&text[start + args.old_text.len()..]);
    if updated.len() as u64 > limits.edit_bytes {
        return Err(super::too_large(
            shown,
            updated.len() as u64,
            limits.edit_bytes,
            "editing",
        ));
    }
    let line = line_of(start);
    Ok(Planned {
        text,
        updated,
        line,
    })
}

/// Writes a planned edit, unless the file changed since it was read (the diagnostics
/// baseline between the two takes a moment): a change made meanwhile is never overwritten.
fn write(
    root: &WorkspaceRoot,
    path: &std::path::Path,
    shown: &str,
    edit: &Planned,
    limits: FileLimits,
) -> Result<(), ToolError> {
    if super::read_text(root, path, shown, limits.edit_bytes)? != edit.text {
        return Err(ToolError::new(
            ErrorKind::Stale,
            format!(
                "`{shown}` changed while the edit was prepared; nothing was written; read it \
                 again and retry"
            ),
        ));
    }
    root.workspace()
        .write_atomic(path, edit.updated.as_bytes())
        .map(|_created| ())
        .map_err(|error| root.io_error("write", shown, &error))
}
