use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// `edit`: replace one exact occurrence of a text in a file.
#[derive(Debug, Clone)]
pub struct EditTool {
    root: WorkspaceRoot,
}

impl EditTool {
    /// An `edit` tool for `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        EditTool { root }
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
         diagnostics that the edit introduced are attached when a server covers the file."
    }

    fn input_schema(&self) -> Value {
        schema_for::<EditArgs>()
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
        let text = super::read_text(&path, &shown)?;
        let starts: Vec<usize> = text
            .match_indices(args.old_text.as_str())
            .map(|(start, _)| start)
            .collect();
        let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
        let start = match starts.as_slice() {
            [] => {
                return Err(ToolError::new(
                    "no_match",
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
                    "ambiguous",
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
        ctx.before_write(&[crate::PlannedWrite {
            path: path.clone(),
            content: Some(updated.as_bytes().to_vec()),
        }])
        .await;
        // The baseline takes a moment: never overwrite a change made meanwhile.
        if super::read_text(&path, &shown)? != text {
            return Err(ToolError::new(
                crate::error::kinds::STALE,
                format!("`{shown}` changed while the edit was prepared; nothing was written; read it again and retry"),
            ));
        }
        super::write_atomically(&path, updated.as_bytes())
            .map_err(|error| ToolError::io("write", &shown, &error))?;
        let line = line_of(start);
        Ok(ToolOutput::new(json!({
            "path": shown,
            "line": line,
            "replacements": 1,
        }))
        .with_text(format!("edited {shown} at line {line}"))
        .with_written([path]))
    }
}
