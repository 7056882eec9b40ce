//! The position, rename, symbol and code-action requests, typed with lsp-types. Answers come
//! back as the server sent them (`LanguageServer::request_json`): a caller reads them
//! leniently and can show what the server said.

use std::path::Path;
use std::time::Duration;

use crate::ext::{CodeActions, CodeActionsContext, CodeActionsParams};
use crate::lsp_types::{
    self, request, CodeActionTriggerKind, PartialResultParams, Position, Range,
    TextDocumentIdentifier, TextDocumentPositionParams, WorkDoneProgressParams,
};
use crate::uri::file_uri;
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

/// `textDocument/rename` of the symbol at `at` to `new_name`: the server's `WorkspaceEdit`.
pub async fn rename(
    server: &LanguageServer,
    at: TextDocumentPositionParams,
    new_name: &str,
    timeout: Duration,
) -> Result<Value, LspError> {
    let params = lsp_types::RenameParams {
        text_document_position: at,
        new_name: new_name.to_owned(),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    server
        .request_json::<request::Rename>(params, timeout)
        .await
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
