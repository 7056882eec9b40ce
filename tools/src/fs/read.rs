use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// Lines returned when the caller gives no limit.
const DEFAULT_LIMIT: usize = 2000;
/// Bytes of content returned at most, whatever the limit.
const MAX_BYTES: usize = 256 * 1024;

/// `read`: a text file's lines, confined to the workspace root.
#[derive(Debug, Clone)]
pub struct ReadTool {
    root: WorkspaceRoot,
}

impl ReadTool {
    /// A `read` tool for `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        ReadTool { root }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File path, relative to the workspace root (or absolute inside it).
    path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default)]
    offset: Option<usize>,
    /// How many lines to return (default 2000).
    #[serde(default)]
    limit: Option<usize>,
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> &str {
        "Read a UTF-8 text file inside the workspace. `offset` is the first line (1-based), \
         `limit` the number of lines (default 2000). The result says which lines it holds, the \
         file's total line count, and whether it was cut."
    }

    fn input_schema(&self) -> Value {
        schema_for::<ReadArgs>()
    }

    async fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ReadArgs = parse_args(args)?;
        let path = self.root.resolve_existing(&args.path)?;
        let shown = self.root.relative(&path);
        let text = super::read_text(&path, &shown)?;
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);

        let total_lines = text.lines().count();
        let mut content = String::new();
        let mut end_line = offset.saturating_sub(1);
        let mut truncated = false;
        for (index, line) in text.split_inclusive('\n').enumerate().skip(offset - 1) {
            if end_line + 1 - offset >= limit || content.len() + line.len() > MAX_BYTES {
                truncated = true;
                break;
            }
            content.push_str(line);
            end_line = index + 1;
        }
        let rendering = format!(
            "{shown} (lines {offset}-{end_line} of {total_lines}{})\n{content}",
            if truncated { ", cut" } else { "" }
        );
        Ok(ToolOutput::new(json!({
            "path": shown,
            "content": content,
            "start_line": offset,
            "end_line": end_line,
            "total_lines": total_lines,
            "truncated": truncated,
        }))
        .with_text(rendering))
    }
}
