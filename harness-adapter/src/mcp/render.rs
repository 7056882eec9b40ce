//! A tool's outcome as an MCP `CallToolResult`.

use cc_tools::{JsonLayout, ToolError, ToolOutput};
use serde_json::{json, Value};

/// A `CallToolResult`: whole, or with a `structuredContent` the tool spooled, to be written
/// piece by piece ([`CallResult::Spooled`]).
#[derive(Debug)]
pub enum CallResult {
    /// The whole result.
    Value(Value),
    /// `content` and `isError: false` beside a `structuredContent` that is the output's
    /// JSON, copied from its spool as the response is written.
    Spooled {
        /// The text (and image) content.
        content: Vec<Value>,
        /// The output, written as `structuredContent`.
        output: ToolOutput,
    },
}

impl CallResult {
    /// The result's JSON in pieces, on one line.
    pub fn into_pieces(
        self,
    ) -> std::io::Result<impl Iterator<Item = std::io::Result<Vec<u8>>> + Send + 'static> {
        let (head, body): (Vec<u8>, Option<cc_tools::JsonPieces>) = match self {
            CallResult::Value(value) => (serde_json::to_vec(&value)?, None),
            CallResult::Spooled { content, output } => {
                let mut head = br#"{"content":"#.to_vec();
                serde_json::to_writer(&mut head, &content)?;
                head.extend_from_slice(br#","structuredContent":"#);
                (head, Some(output.json_pieces(JsonLayout::Compact)?))
            }
        };
        let tail = body
            .is_some()
            .then(|| br#","isError":false}"#.to_vec())
            .into_iter()
            .map(Ok);
        Ok(std::iter::once(Ok(head))
            .chain(body.into_iter().flatten())
            .chain(tail))
    }
}

/// `structuredContent` holds the JSON result (or `{"error": …}`), `content` a compact text
/// rendering plus any images, `isError` tells which. A result with spooled members keeps
/// them spooled: the response copies them out as it is written.
pub fn call_result(result: Result<ToolOutput, ToolError>) -> CallResult {
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
            if !output.spooled.is_empty() {
                return CallResult::Spooled { content, output };
            }
            let structured = match output.value {
                Value::Object(_) => output.value,
                other => json!({ "result": other }),
            };
            CallResult::Value(
                json!({"content": content, "structuredContent": structured, "isError": false}),
            )
        }
        Err(error) => {
            let envelope = error.to_envelope();
            CallResult::Value(json!({
                "content": [{"type": "text", "text": envelope.to_string()}],
                "structuredContent": envelope,
                "isError": true,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_tools::{JsonSpool, SpooledArray};
    use std::sync::Arc;

    fn written(result: CallResult) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in result.into_pieces().unwrap() {
            out.extend(piece.unwrap());
        }
        out
    }

    /// A spooled output is written as the same `CallToolResult` its materialized value
    /// makes, on one line.
    #[test]
    fn a_spooled_result_is_the_result_its_value_makes() {
        let spool = Arc::new(JsonSpool::new());
        let mut buffer = Vec::new();
        for i in 0..3 {
            cc_tools::spool::push_element(&mut buffer, &json!({"i": i, "s": "a\nb"})).unwrap();
        }
        let mut items = SpooledArray::new(spool.clone());
        items.push(spool.append(&buffer, 3).unwrap(), 3).unwrap();
        let output = ToolOutput::new(json!({"total": 3}))
            .with_spooled("matches", items)
            .with_text("3 matches");
        let mut whole = output.clone();
        whole.materialize().unwrap();
        let spooled = written(call_result(Ok(output)));
        assert!(!spooled.contains(&b'\n'));
        let expected = match call_result(Ok(whole)) {
            CallResult::Value(value) => value,
            CallResult::Spooled { .. } => panic!("a materialized output is not spooled"),
        };
        assert_eq!(serde_json::from_slice::<Value>(&spooled).unwrap(), expected);
        assert_eq!(expected["structuredContent"]["matches"][2]["i"], 2);
        assert_eq!(expected["content"][0]["text"], "3 matches");
    }
}
