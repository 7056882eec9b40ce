//! The position, rename, symbol and code-action requests, typed with lsp-types. Answers come
//! back as the server sent them (`LanguageServer::request_json`): a caller reads them
//! leniently and can show what the server said. A rename's answer is the exception: it is
//! read into a typed [`WorkspaceEdit`] here, since it is applied, not shown.

use std::path::Path;
use std::time::Duration;

use crate::ext::{CodeActions, CodeActionsContext, CodeActionsParams};
use crate::lsp_types::{
    self, request, CodeActionTriggerKind, PartialResultParams, Position, Range,
    TextDocumentIdentifier, TextDocumentPositionParams, WorkDoneProgressParams, WorkspaceEdit,
};
use crate::uri::file_uri;
use crate::workspace_edit::{self, EditError};
use crate::{LanguageServer, LspError};
use serde_json::Value;

/// A request about one place in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtPosition {
    /// `textDocument/definition`.
    Definition,
    /// `textDocument/declaration`.
    Declaration,
    /// `textDocument/typeDefinition`.
    TypeDefinition,
    /// `textDocument/implementation`.
    Implementation,
    /// `textDocument/references`, with the declaration included.
    References,
    /// `textDocument/hover`.
    Hover,
}

/// The place `character` (in the server's encoding) of 0-based `line` in `path`.
pub fn position(path: &Path, line: u32, character: u32) -> TextDocumentPositionParams {
    TextDocumentPositionParams::new(
        TextDocumentIdentifier::new(file_uri(path)),
        Position::new(line, character),
    )
}

/// Asks `what` at `at`.
pub async fn at_position(
    server: &LanguageServer,
    what: AtPosition,
    at: TextDocumentPositionParams,
    timeout: Duration,
) -> Result<Value, LspError> {
    let goto = |at| lsp_types::GotoDefinitionParams {
        text_document_position_params: at,
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    match what {
        AtPosition::Definition => {
            server
                .request_json::<request::GotoDefinition>(goto(at), timeout)
                .await
        }
        AtPosition::Declaration => {
            server
                .request_json::<request::GotoDeclaration>(goto(at), timeout)
                .await
        }
        AtPosition::TypeDefinition => {
            server
                .request_json::<request::GotoTypeDefinition>(goto(at), timeout)
                .await
        }
        AtPosition::Implementation => {
            server
                .request_json::<request::GotoImplementation>(goto(at), timeout)
                .await
        }
        AtPosition::References => {
            let params = lsp_types::ReferenceParams {
                text_document_position: at,
                context: lsp_types::ReferenceContext {
                    include_declaration: true,
                },
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            };
            server
                .request_json::<request::References>(params, timeout)
                .await
        }
        AtPosition::Hover => {
            let params = lsp_types::HoverParams {
                text_document_position_params: at,
                work_done_progress_params: WorkDoneProgressParams::default(),
            };
            server
                .request_json::<request::HoverRequest>(params, timeout)
                .await
        }
    }
}

/// `textDocument/prepareRename` at `at`.
pub async fn prepare_rename(
    server: &LanguageServer,
    at: TextDocumentPositionParams,
    timeout: Duration,
) -> Result<Value, LspError> {
    server
        .request_json::<request::PrepareRenameRequest>(at, timeout)
        .await
}

/// Why a rename request gave no edit to apply.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RenameError {
    /// The request failed (the server refused it, timed out, exited).
    #[error(transparent)]
    Request(#[from] LspError),
    /// The server's edit does not have the LSP shape.
    #[error(transparent)]
    Edit(#[from] EditError),
}

/// `textDocument/rename` of the symbol at `at` to `new_name`: the server's edit (snippet
/// edits read as plain ones, see [`workspace_edit::parse`]), `None` when it found nothing to
/// rename.
pub async fn rename(
    server: &LanguageServer,
    at: TextDocumentPositionParams,
    new_name: &str,
    timeout: Duration,
) -> Result<Option<WorkspaceEdit>, RenameError> {
    let params = lsp_types::RenameParams {
        text_document_position: at,
        new_name: new_name.to_owned(),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    let answer = server
        .request_json::<request::Rename>(params, timeout)
        .await?;
    if answer.is_null() {
        return Ok(None);
    }
    Ok(Some(workspace_edit::parse(answer)?))
}

/// `workspace/symbol` for `query`.
pub async fn workspace_symbols(
    server: &LanguageServer,
    query: &str,
    timeout: Duration,
) -> Result<Value, LspError> {
    let params = lsp_types::WorkspaceSymbolParams {
        query: query.to_owned(),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    server
        .request_json::<request::WorkspaceSymbolRequest>(params, timeout)
        .await
}

/// `textDocument/documentSymbol` of `path`.
pub async fn document_symbols(
    server: &LanguageServer,
    path: &Path,
    timeout: Duration,
) -> Result<Value, LspError> {
    let params = lsp_types::DocumentSymbolParams {
        text_document: TextDocumentIdentifier::new(file_uri(path)),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    server
        .request_json::<request::DocumentSymbolRequest>(params, timeout)
        .await
}

/// `textDocument/codeAction` over `range` of `path`, handing back `diagnostics` as the
/// server sent them.
pub async fn code_actions(
    server: &LanguageServer,
    path: &Path,
    range: Range,
    diagnostics: Vec<Value>,
    timeout: Duration,
) -> Result<Value, LspError> {
    let params = CodeActionsParams {
        text_document: TextDocumentIdentifier::new(file_uri(path)),
        range,
        context: CodeActionsContext {
            diagnostics,
            trigger_kind: Some(CodeActionTriggerKind::INVOKED),
        },
    };
    server.request_json::<CodeActions>(params, timeout).await
}

/// Where one place of a location answer starts: its URI, 0-based line and, when given, the
/// character in the server's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocationStart<'a> {
    /// The document's URI, as the server wrote it.
    pub uri: &'a str,
    /// The 0-based line.
    pub line: u64,
    /// The character on that line, in the server's encoding.
    pub character: Option<u64>,
}

/// The places of a `Location | Location[] | LocationLink[] | null` answer, in order, read
/// leniently: a link points at its target's selection range (its whole range when it has
/// none), and an item without a URI or a start line is left out.
pub fn location_starts(answer: &Value) -> Vec<LocationStart<'_>> {
    let items: Vec<&Value> = match answer {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![answer],
        _ => Vec::new(),
    };
    items
        .into_iter()
        .filter_map(|item| {
            let (uri, range) = match item.get("targetUri") {
                Some(uri) => (
                    uri,
                    item.get("targetSelectionRange")
                        .or_else(|| item.get("targetRange")),
                ),
                None => (item.get("uri")?, item.get("range")),
            };
            let start = range?.get("start")?;
            Some(LocationStart {
                uri: uri.as_str()?,
                line: start.get("line")?.as_u64()?,
                character: start.get("character").and_then(Value::as_u64),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn location_answers_of_every_shape_give_their_starts() {
        let at = |line: u64, character: u64| {
            json!({"start": {"line": line, "character": character},
                   "end": {"line": line, "character": character + 1}})
        };
        let one = json!({"uri": "file:///w/a.rs", "range": at(3, 4)});
        assert_eq!(
            location_starts(&one),
            [LocationStart {
                uri: "file:///w/a.rs",
                line: 3,
                character: Some(4)
            }]
        );
        let links = json!([
            {"targetUri": "file:///w/b.rs", "targetRange": at(1, 0), "targetSelectionRange": at(2, 7)},
            {"targetUri": "file:///w/c.rs", "targetRange": at(5, 1)},
            {"targetUri": "file:///w/d.rs"},
            {"range": at(9, 9)},
        ]);
        let starts: Vec<(&str, u64, Option<u64>)> = location_starts(&links)
            .into_iter()
            .map(|s| (s.uri, s.line, s.character))
            .collect();
        assert_eq!(
            starts,
            [
                ("file:///w/b.rs", 2, Some(7)),
                ("file:///w/c.rs", 5, Some(1))
            ]
        );
        assert!(location_starts(&Value::Null).is_empty());
    }
}
