//! A tool's outcome as an MCP `CallToolResult`.

use cc_tools::{ToolError, ToolOutput};
use serde_json::{json, Value};

/// `structuredContent` holds the JSON result (or `{"error": …}`), `content` a compact text
/// rendering plus any images, `isError` tells which.
pub fn call_result(result: Result<ToolOutput, ToolError>) -> Value {
    match result {
        Ok(output) => {
            let mut content = vec![json!({"type": "text", "text": output.render_text()})];
            for image in &output.images {
                content.push(json!({
                    "type": "image",
                    "data": image.data_base64,
                    "mimeType": image.mime,
                }));
            }
            let structured = match output.value {
                Value::Object(_) => output.value,
                other => json!({ "result": other }),
            };
            json!({"content": content, "structuredContent": structured, "isError": false})
        }
        Err(error) => {
            let envelope = error.to_envelope();
            json!({
                "content": [{"type": "text", "text": envelope.to_string()}],
                "structuredContent": envelope,
                "isError": true,
            })
        }
    }
}
