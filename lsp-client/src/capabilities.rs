//! Capabilities both ways: what this client tells a server in `initialize`
//! ([`initialize_params`]), and what the server declared back ([`ServerCaps`]), with the
//! position encoding they agree on.

use std::path::Path;

use lsp_types::{
    ClientCapabilities, ClientInfo, CodeActionCapabilityResolveSupport,
    CodeActionClientCapabilities, CodeActionKind, CodeActionKindLiteralSupport,
    CodeActionLiteralSupport, DiagnosticClientCapabilities, DiagnosticTag,
    DidChangeWatchedFilesClientCapabilities, DocumentSymbolClientCapabilities,
    DynamicRegistrationClientCapabilities, FailureHandlingKind, GeneralClientCapabilities,
    GotoCapability, HoverClientCapabilities, InitializeParams, MarkupKind, OneOf,
    PositionEncodingKind, PublishDiagnosticsClientCapabilities, ReferenceClientCapabilities,
    RenameClientCapabilities, ResourceOperationKind, SaveOptions, ServerCapabilities,
    ShowDocumentClientCapabilities, SymbolKind, SymbolKindCapability, TagSupport,
    TextDocumentClientCapabilities, TextDocumentSyncCapability, TextDocumentSyncClientCapabilities,
    TextDocumentSyncSaveOptions, TraceValue, WindowClientCapabilities, WorkspaceClientCapabilities,
    WorkspaceEditClientCapabilities, WorkspaceFolder, WorkspaceSymbolClientCapabilities,
};
use serde_json::{json, Value};

/// The unit of `Position.character` that the server and client agreed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (the LSP default).
    Utf16,
    /// Unicode scalar values.
    Utf32,
}

impl PositionEncoding {
    fn from_kind(kind: Option<&PositionEncodingKind>) -> Self {
        match kind.map(PositionEncodingKind::as_str) {
            Some("utf-8") => PositionEncoding::Utf8,
            Some("utf-32") => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        }
    }

    /// `utf-8`, `utf-16`, `utf-32`.
    pub fn as_str(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }
}

/// What the server declared in `initialize`: typed, and the JSON as sent (callers look up
/// a provider by its key, and a capability lsp-types cannot read must not hide the rest).
#[derive(Debug, Clone)]
pub(crate) struct ServerCaps {
    pub(crate) raw: Value,
    pub(crate) typed: ServerCapabilities,
}

impl ServerCaps {
    /// Reads the `capabilities` of an `initialize` answer. A field lsp-types cannot read (a
    /// server's own shape of a standard field) is left out of the typed view alone, with a
    /// warning; the JSON keeps it.
    pub(crate) fn read(server: &str, raw: Value) -> ServerCaps {
        let typed = serde_json::from_value(raw.clone()).unwrap_or_else(|_| {
            let mut readable = serde_json::Map::new();
            for (key, value) in raw.as_object().into_iter().flatten() {
                let alone = json!({key.as_str(): value});
                match serde_json::from_value::<ServerCapabilities>(alone) {
                    Ok(_) => {
                        readable.insert(key.clone(), value.clone());
                    }
                    Err(error) => {
                        tracing::warn!(%server, capability = %key, %error, "a capability lsp-types cannot read");
                    }
                }
            }
            serde_json::from_value(Value::Object(readable)).unwrap_or_default()
        });
        ServerCaps { raw, typed }
    }

    /// The position encoding the server chose (UTF-16 when it chose none).
    pub(crate) fn encoding(&self) -> PositionEncoding {
        PositionEncoding::from_kind(self.typed.position_encoding.as_ref())
    }

    /// Whether `provider` (`renameProvider`) is declared, and not `false`.
    pub(crate) fn declares(&self, provider: &str) -> bool {
        self.raw
            .get(provider)
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
    }

    /// `Some(include_text)` when the server declared that it wants `didSave`.
    pub(crate) fn save(&self) -> Option<bool> {
        match self.typed.text_document_sync.as_ref()? {
            TextDocumentSyncCapability::Options(options) => match options.save.as_ref()? {
                TextDocumentSyncSaveOptions::Supported(true) => Some(false),
                TextDocumentSyncSaveOptions::Supported(false) => None,
                TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text }) => {
                    Some(include_text.unwrap_or(false))
                }
            },
            TextDocumentSyncCapability::Kind(_) => None,
        }
    }

    /// The identifier of the server's pull diagnostics, if it declared one (read as
    /// [`registered_identifier`] reads a registration).
    pub(crate) fn pull_identifier(&self) -> Option<String> {
        registered_identifier(self.raw.get("diagnosticProvider")?)
    }

    /// Whether the server answers `textDocument/prepareRename`.
    pub(crate) fn prepares_rename(&self) -> bool {
        matches!(
            self.typed.rename_provider,
            Some(OneOf::Right(lsp_types::RenameOptions {
                prepare_provider: Some(true),
                ..
            }))
        )
    }
}

/// The identifier of pull diagnostics registered with `options`. Read leniently:
/// lsp-types' `DiagnosticRegistrationOptions` requires `interFileDependencies` and
/// `workspaceDiagnostics`, which a registration may leave out.
pub(crate) fn registered_identifier(options: &Value) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Identified {
        identifier: Option<String>,
    }
    serde_json::from_value::<Identified>(options.clone())
        .ok()?
        .identifier
}

/// `initialize`'s parameters for a server at `root`, as JSON: lsp-types 0.97 names
/// `workspace.diagnostics` (the spec's key, which vscode-languageserver servers such as
/// basedpyright read for `refreshSupport`) `workspace.diagnostic`, so that one key is set by
/// hand.
pub(crate) fn initialize_params(
    root: &Path,
    folder: &WorkspaceFolder,
    init_options: &Value,
) -> Value {
    #[allow(deprecated)] // `rootUri` and `rootPath`: older servers read only these.
    let params = InitializeParams {
        process_id: Some(std::process::id()),
        client_info: Some(ClientInfo {
            name: "cc-lsp-client".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        root_uri: Some(folder.uri.clone()),
        root_path: Some(root.to_string_lossy().into_owned()),
        workspace_folders: Some(vec![folder.clone()]),
        capabilities: client_capabilities(),
        trace: Some(TraceValue::Off),
        initialization_options: (!init_options.is_null()).then(|| init_options.clone()),
        ..InitializeParams::default()
    };
    let mut params = serde_json::to_value(params).unwrap_or_default();
    if let Some(workspace) = params
        .pointer_mut("/capabilities/workspace")
        .and_then(Value::as_object_mut)
    {
        workspace.insert("diagnostics".into(), json!({"refreshSupport": true}));
    }
    params
}

/// Everything this client does with a server's answers (see `initialize_params` for the
/// one key set apart).
fn client_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        general: Some(GeneralClientCapabilities {
            position_encodings: Some(vec![
                PositionEncodingKind::UTF8,
                PositionEncodingKind::UTF16,
            ]),
            ..GeneralClientCapabilities::default()
        }),
        workspace: Some(workspace_capabilities()),
        text_document: Some(text_document_capabilities()),
        window: Some(WindowClientCapabilities {
            work_done_progress: Some(true),
            show_document: Some(ShowDocumentClientCapabilities { support: false }),
            ..WindowClientCapabilities::default()
        }),
        experimental: Some(json!({"serverStatusNotification": true})),
        ..ClientCapabilities::default()
    }
}

/// What this client does for the workspace as a whole: configuration, edits, watched files
/// and symbol search.
fn workspace_capabilities() -> WorkspaceClientCapabilities {
    WorkspaceClientCapabilities {
        configuration: Some(true),
        workspace_folders: Some(true),
        apply_edit: Some(true),
        workspace_edit: Some(WorkspaceEditClientCapabilities {
            document_changes: Some(true),
            resource_operations: Some(vec![
                ResourceOperationKind::Create,
                ResourceOperationKind::Rename,
                ResourceOperationKind::Delete,
            ]),
            failure_handling: Some(FailureHandlingKind::Transactional),
            ..WorkspaceEditClientCapabilities::default()
        }),
        did_change_configuration: Some(DynamicRegistrationClientCapabilities {
            dynamic_registration: Some(true),
        }),
        // The run's watcher tells servers what changed on disk (server/watched.rs).
        did_change_watched_files: Some(DidChangeWatchedFilesClientCapabilities {
            dynamic_registration: Some(true),
            relative_pattern_support: Some(true),
        }),
        symbol: Some(WorkspaceSymbolClientCapabilities {
            symbol_kind: Some(symbol_kinds()),
            ..WorkspaceSymbolClientCapabilities::default()
        }),
        ..WorkspaceClientCapabilities::default()
    }
}

/// What this client does with a document: sync, diagnostics, navigation, symbols, code
/// actions and renames.
fn text_document_capabilities() -> TextDocumentClientCapabilities {
    TextDocumentClientCapabilities {
        synchronization: Some(TextDocumentSyncClientCapabilities {
            dynamic_registration: Some(true),
            did_save: Some(true),
            ..TextDocumentSyncClientCapabilities::default()
        }),
        publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
            version_support: Some(true),
            related_information: Some(false),
            tag_support: Some(TagSupport {
                value_set: vec![DiagnosticTag::UNNECESSARY, DiagnosticTag::DEPRECATED],
            }),
            code_description_support: Some(true),
            data_support: Some(true),
        }),
        diagnostic: Some(DiagnosticClientCapabilities {
            dynamic_registration: Some(true),
            related_document_support: Some(false),
        }),
        hover: Some(HoverClientCapabilities {
            dynamic_registration: None,
            content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
        }),
        definition: links(),
        type_definition: links(),
        implementation: links(),
        references: Some(ReferenceClientCapabilities::default()),
        document_symbol: Some(DocumentSymbolClientCapabilities {
            hierarchical_document_symbol_support: Some(true),
            symbol_kind: Some(symbol_kinds()),
            ..DocumentSymbolClientCapabilities::default()
        }),
        code_action: Some(code_action_capabilities()),
        rename: Some(RenameClientCapabilities {
            prepare_support: Some(true),
            ..RenameClientCapabilities::default()
        }),
        ..TextDocumentClientCapabilities::default()
    }
}

/// Code actions as literals of the kinds this client asks for, resolved for their edit.
fn code_action_capabilities() -> CodeActionClientCapabilities {
    CodeActionClientCapabilities {
        code_action_literal_support: Some(CodeActionLiteralSupport {
            code_action_kind: CodeActionKindLiteralSupport {
                value_set: [
                    CodeActionKind::EMPTY,
                    CodeActionKind::QUICKFIX,
                    CodeActionKind::REFACTOR,
                    CodeActionKind::REFACTOR_EXTRACT,
                    CodeActionKind::REFACTOR_INLINE,
                    CodeActionKind::REFACTOR_REWRITE,
                    CodeActionKind::SOURCE,
                    CodeActionKind::SOURCE_ORGANIZE_IMPORTS,
                    CodeActionKind::SOURCE_FIX_ALL,
                ]
                .iter()
                .map(|kind| kind.as_str().to_owned())
                .collect(),
            },
        }),
        is_preferred_support: Some(true),
        data_support: Some(true),
        resolve_support: Some(CodeActionCapabilityResolveSupport {
            properties: vec!["edit".into()],
        }),
        ..CodeActionClientCapabilities::default()
    }
}

/// Every symbol kind, for workspace and document symbols.
fn symbol_kinds() -> SymbolKindCapability {
    SymbolKindCapability {
        value_set: Some(ALL_SYMBOL_KINDS.to_vec()),
    }
}

/// Definitions as links, with the target's whole range.
fn links() -> Option<GotoCapability> {
    Some(GotoCapability {
        dynamic_registration: None,
        link_support: Some(true),
    })
}

const ALL_SYMBOL_KINDS: [SymbolKind; 26] = [
    SymbolKind::FILE,
    SymbolKind::MODULE,
    SymbolKind::NAMESPACE,
    SymbolKind::PACKAGE,
    SymbolKind::CLASS,
    SymbolKind::METHOD,
    SymbolKind::PROPERTY,
    SymbolKind::FIELD,
    SymbolKind::CONSTRUCTOR,
    SymbolKind::ENUM,
    SymbolKind::INTERFACE,
    SymbolKind::FUNCTION,
    SymbolKind::VARIABLE,
    SymbolKind::CONSTANT,
    SymbolKind::STRING,
    SymbolKind::NUMBER,
    SymbolKind::BOOLEAN,
    SymbolKind::ARRAY,
    SymbolKind::OBJECT,
    SymbolKind::KEY,
    SymbolKind::NULL,
    SymbolKind::ENUM_MEMBER,
    SymbolKind::STRUCT,
    SymbolKind::EVENT,
    SymbolKind::OPERATOR,
    SymbolKind::TYPE_PARAMETER,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_lsp_types_cannot_read_hides_only_itself() {
        // `diagnosticProvider` without the fields lsp-types requires, beside a save option.
        let raw = json!({
            "positionEncoding": "utf-8",
            "textDocumentSync": {"save": {"includeText": true}},
            "diagnosticProvider": {"identifier": "x"},
        });
        let caps = ServerCaps::read("test", raw);
        assert_eq!(caps.encoding(), PositionEncoding::Utf8);
        assert_eq!(caps.save(), Some(true));
        assert_eq!(caps.pull_identifier().as_deref(), Some("x"));
        assert!(caps.declares("diagnosticProvider"));
        assert!(caps.typed.diagnostic_provider.is_none());
    }
}
