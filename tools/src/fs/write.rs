use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// `write`: create or replace a file inside the workspace root.
#[derive(Debug, Clone)]
pub struct WriteTool {
    root: WorkspaceRoot,
}

impl WriteTool {
    /// A `write` tool for `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        WriteTool { root }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// File path, relative to the workspace root (or absolute inside it). Missing parent
    /// folders are created.
    path: String,
    /// The file's complete new content.
    content: String,
}

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> &str {
        "Create or replace a file inside the workspace with `content` (written atomically: a \
         reader never sees half a file). Language-server diagnostics that the write introduced \
         are attached when a server covers the file."
    }

    fn input_schema(&self) -> Value {
        schema_for::<WriteArgs>()
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: WriteArgs = parse_args(args)?;
        let path = self.root.resolve(&args.path)?;
        let shown = self.root.relative(&path);
        if path.is_dir() {
            return Err(ToolError::new(
                "is_directory",
                format!("`{shown}` is a directory; give the path of a file"),
            ));
        }
        ctx.before_write(&[crate::PlannedWrite {
            path: path.clone(),
            content: Some(args.content.as_bytes().to_vec()),
        }])
        .await;
        let created = super::write_atomically(&path, args.content.as_bytes())
            .map_err(|error| ToolError::io("write", &shown, &error))?;
        let bytes = args.content.len();
        Ok(ToolOutput::new(json!({
            "path": shown,
            "bytes": bytes,
            "created": created,
        }))
        .with_text(format!(
            "{} {shown} ({bytes} bytes)",
            if created { "created" } else { "wrote" }
        ))
        .with_written([path]))
    }
}
