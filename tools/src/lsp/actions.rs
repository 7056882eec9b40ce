//! `lsp code_actions`: what the server offers at a line and symbol. The diagnostics on that
//! line go along as the request's context, fresh for the file as it is on disk: servers
//! offer their quick fixes (add the missing import, did-you-mean) only for diagnostics they
//! are handed back.

use cc_lsp_client::lsp_types::{CodeActionOptions, CodeActionProviderCapability, Position, Range};
use cc_lsp_client::position::units;
use cc_lsp_client::{DiagnosticsOutcome, Located};
use serde_json::Value;

use super::open::{lsp_error, Opened};
use super::requests;
use super::REQUEST_TIMEOUT;
use crate::error::ToolError;
use crate::report::lsp::{CodeActionEntry, HandedDiagnostic};

/// The LSP range of a diagnostic as (start line, end line), 0-based.
fn lines_of(diagnostic: &Value) -> Option<(u64, u64)> {
    let range = diagnostic.get("range")?;
    let line = |key: &str| range.get(key)?.get("line")?.as_u64();
    Some((line("start")?, line("end")?))
}

/// The diagnostics that touch 0-based `line`, fresh for the file's current text.
async fn diagnostics_on_line(opened: &Opened, line: u32) -> Result<Vec<Value>, ToolError> {
    // Waits for the server's answer about exactly this text (a version is sent only if the
    // text differs from what it has); a server that does not answer in time still gets
    // whatever it last said.
    let ticket = opened
        .server
        .sync(&opened.path, &opened.text, &opened.language_id)
        .map_err(lsp_error)?;
    if let DiagnosticsOutcome::Failed(error) = opened.server.diagnostics(&ticket).await {
        return Err(lsp_error(error));
    }
    let line = u64::from(line);
    Ok(opened
        .server
        .raw_diagnostics(&opened.path)
        .into_iter()
        .filter(|d| lines_of(d).is_some_and(|(start, end)| start <= line && line <= end))
        .collect())
}

/// The request's range: the symbol, widened to cover the diagnostics handed back.
fn request_range(at: &Located, symbol: &str, opened: &Opened, context: &[Value]) -> Range {
    let end_character = at.character + units(symbol, opened.server.encoding());
    let mut range = Range::new(
        Position::new(at.line, at.character),
        Position::new(at.line, end_character),
    );
    for diagnostic in context {
        let Some(r) = diagnostic
            .get("range")
            .and_then(|r| serde_json::from_value::<Range>(r.clone()).ok())
        else {
            continue;
        };
        range.start = range.start.min(r.start);
        range.end = range.end.max(r.end);
    }
    range
}

/// Asks for the code actions at `at` and describes each: title, kind, whether it carries
/// an edit, which of the handed-back diagnostics it fixes; with the diagnostics handed back.
pub(super) async fn code_actions(
    opened: &Opened,
    at: &Located,
    symbol: &str,
) -> Result<(Vec<CodeActionEntry>, Vec<HandedDiagnostic>), ToolError> {
    let context = diagnostics_on_line(opened, at.line).await?;
    let range = request_range(at, symbol, opened, &context);
    let answer = requests::code_actions(
        &opened.server,
        &opened.path,
        range,
        context.clone(),
        REQUEST_TIMEOUT,
    )
    .await
    .map_err(lsp_error)?;
    let resolvable = matches!(
        opened.server.server_capabilities().code_action_provider,
        Some(CodeActionProviderCapability::Options(CodeActionOptions {
            resolve_provider: Some(true),
            ..
        }))
    );
    let string = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let actions = answer
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            // A bare `Command` has a string `command`; a `CodeAction` may carry one inside.
            let is_command = item.get("command").is_some_and(Value::is_string);
            let has_edit = item.get("edit").is_some();
            CodeActionEntry {
                title: string(item.get("title")),
                kind: if is_command {
                    None
                } else {
                    string(item.get("kind"))
                },
                has_edit,
                command: if is_command {
                    string(item.get("command"))
                } else {
                    string(item.get("command").and_then(|c| c.get("command")))
                },
                preferred: item
                    .get("isPreferred")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                // The server fills in the edit when the action is resolved.
                edit_on_resolve: !has_edit
                    && !is_command
                    && resolvable
                    && item.get("data").is_some(),
                fixes: item
                    .get("diagnostics")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|d| string(d.get("message")))
                    .collect(),
            }
        })
        .collect();
    let handed = context
        .iter()
        .map(|d| HandedDiagnostic {
            line: lines_of(d).map_or(0, |(start, _)| start + 1),
            message: d
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim_end()
                .to_owned(),
            code: d.get("code").cloned(),
        })
        .collect();
    Ok((actions, handed))
}
