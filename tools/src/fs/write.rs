use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use cc_workspace::FileKind;

use super::FileLimits;
use crate::error::ToolError;
use crate::report::files::WriteFileReport;
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::report_output;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// `write`: create or replace a file inside the workspace root.
#[derive(Debug, Clone)]
pub struct WriteTool {
    root: WorkspaceRoot,
    limits: FileLimits,
}

impl WriteTool {
    /// A `write` tool for `root` with the default [`FileLimits`].
    pub fn new(root: WorkspaceRoot) -> Self {
        WriteTool {
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
         reader never sees half a file; a new file gets the usual permissions, a replaced one \
         keeps its own). Content over 16 MiB is refused (`too_large`). Language-server \
         diagnostics that the write introduced are attached when a server covers the file."
    }

    fn input_schema(&self) -> Value {
        schema_for::<WriteArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<WriteFileReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: WriteArgs = parse_args(args)?;
        let path = self.root.resolve(&args.path)?;
        let shown = self.root.relative(&path);
        let bytes = args.content.len();
        if bytes as u64 > self.limits.edit_bytes {
            return Err(super::too_large(
                &shown,
                bytes as u64,
                self.limits.edit_bytes,
                "writing",
            ));
        }
        ctx.before_write(&[crate::PlannedWrite {
            path: path.clone(),
            content: Some(args.content.as_bytes().to_vec()),
        }])
        .await;
        let (root, target, name) = (self.root.clone(), path.clone(), shown.clone());
        let created = tokio::task::spawn_blocking(move || {
            let ws = root.workspace();
            match ws.kind(&target) {
                Ok(FileKind::Regular) | Err(_) => {}
                Ok(kind) => return Err(super::not_regular(&name, kind)),
            }
            ws.write_atomic(&target, args.content.as_bytes())
                .map_err(|error| root.io_error("write", &name, &error))
        })
        .await
        .map_err(|error| ToolError::internal(format!("the write did not finish: {error}")))??;
        Ok(report_output(&WriteFileReport {
            path: shown,
            bytes,
            created,
            diagnostics: None,
        })?
        .with_written([path]))
    }
}
