//! Messages lsp-types does not have, or reads more strictly than real servers write, as
//! local types behind the same `Request` / `Notification` traits.
//!
//! - server extensions: rust-analyzer's `experimental/serverStatus`, clangd's
//!   `textDocument/clangd.fileStatus`, typescript-language-server's
//!   `typescript.tsserverRequest` command;
//! - tolerant readings of standard messages, each saying why below.

use lsp_types::notification::Notification;
use lsp_types::request::Request;
use lsp_types::{DocumentDiagnosticParams, ExecuteCommandParams, Unregistration, Uri};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// rust-analyzer's `experimental/serverStatus` (asked for with the client capability
/// `experimental.serverStatusNotification`).
#[derive(Debug)]
pub enum ServerStatus {}

/// Its parameters. Every field may be missing: the loading state is read from what is
/// there (an absent `quiescent` means "not said yet", not "idle").
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct ServerStatusParams {
    /// `ok`, `warning`, `error`.
    #[serde(default)]
    pub health: Option<String>,
    /// Whether it has finished loading and has nothing queued.
    #[serde(default)]
    pub quiescent: Option<bool>,
    /// What is wrong, with `health` `error`.
    #[serde(default)]
    pub message: Option<String>,
}

impl Notification for ServerStatus {
    type Params = ServerStatusParams;
    const METHOD: &'static str = "experimental/serverStatus";
}

/// clangd's per-file status (`textDocument/clangd.fileStatus`, sent when the client
/// initializes with `clangdFileStatus`, which clangd turns on for every client).
#[derive(Debug)]
pub enum ClangdFileStatus {}

/// Its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct FileStatus {
    /// The file.
    pub uri: Uri,
    /// `idle`, `parsing includes`, `building AST`, …
    #[serde(default)]
    pub state: String,
}

impl Notification for ClangdFileStatus {
    type Params = FileStatus;
    const METHOD: &'static str = "textDocument/clangd.fileStatus";
}

/// `textDocument/publishDiagnostics`, with the diagnostics kept as sent: code actions
/// hand them back verbatim, and lsp-types' `PublishDiagnosticsParams` would drop the
/// whole publish for one entry it cannot read (each is read on its own instead).
#[derive(Debug)]
pub enum PublishDiagnostics {}

/// Its parameters.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Published {
    /// The file.
    pub uri: Uri,
    /// The document version they are about, when the server says.
    #[serde(default)]
    pub version: Option<i64>,
    /// The LSP `Diagnostic` objects as sent.
    #[serde(default)]
    pub diagnostics: Vec<Value>,
}

impl Notification for PublishDiagnostics {
    type Params = Published;
    const METHOD: &'static str = lsp_types::notification::PublishDiagnostics::METHOD;
}

/// `textDocument/diagnostic` (a pull), with the items kept as sent, for the same reasons
/// as [`PublishDiagnostics`].
#[derive(Debug)]
pub enum PullDiagnostics {}

/// A pulled report: `full` with its items, or `unchanged`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct PulledReport {
    /// `full` or `unchanged`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The LSP `Diagnostic` objects as sent.
    #[serde(default)]
    pub items: Vec<Value>,
}

impl Request for PullDiagnostics {
    type Params = DocumentDiagnosticParams;
    type Result = Option<PulledReport>;
    const METHOD: &'static str = lsp_types::request::DocumentDiagnosticRequest::METHOD;
}

/// `client/unregisterCapability`: the spec misspells its list `unregisterations`, which
/// lsp-types follows; servers that spell it right are read too.
#[derive(Debug)]
pub enum UnregisterCapability {}

/// Its parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct Unregistrations {
    /// What is unregistered.
    #[serde(default, alias = "unregistrations")]
    pub unregisterations: Vec<Unregistration>,
}

impl Request for UnregisterCapability {
    type Params = Unregistrations;
    type Result = ();
    const METHOD: &'static str = lsp_types::request::UnregisterCapability::METHOD;
}

/// typescript-language-server's `typescript.tsserverRequest` command: a request passed
/// to tsserver itself, whose answer is tsserver's own protocol, not LSP.
#[derive(Debug)]
pub enum TsserverRequest {}

/// tsserver's answer: its `body` (for the diagnostics commands, a list of its own
/// `Diagnostic` objects).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct TsserverAnswer {
    /// The answer's body.
    #[serde(default)]
    pub body: Option<Vec<Value>>,
}

impl Request for TsserverRequest {
    type Params = ExecuteCommandParams;
    type Result = Option<TsserverAnswer>;
    const METHOD: &'static str = lsp_types::request::ExecuteCommand::METHOD;
}

/// `workspace/foldingRange/refresh` (LSP 3.18, not in lsp-types 0.97).
#[derive(Debug)]
pub enum FoldingRangeRefresh {}

impl Request for FoldingRangeRefresh {
    type Params = ();
    type Result = ();
    const METHOD: &'static str = "workspace/foldingRange/refresh";
}

/// `textDocument/codeAction` with the context's diagnostics handed back exactly as the
/// server sent them (lsp-types' `CodeActionParams` would rewrite them through its
/// `Diagnostic`, dropping what a server added to its own objects).
#[derive(Debug)]
pub enum CodeActions {}

/// Its parameters.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionsParams {
    /// The document.
    pub text_document: lsp_types::TextDocumentIdentifier,
    /// The range asked about.
    pub range: lsp_types::Range,
    /// The diagnostics there, as sent, and why the actions are asked for.
    pub context: CodeActionsContext,
}

/// The context of [`CodeActionsParams`].
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionsContext {
    /// LSP `Diagnostic` objects as the server sent them.
    pub diagnostics: Vec<Value>,
    /// `Invoked` (asked for) or `Automatic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_kind: Option<lsp_types::CodeActionTriggerKind>,
}

impl Request for CodeActions {
    type Params = CodeActionsParams;
    type Result = Option<lsp_types::CodeActionResponse>;
    const METHOD: &'static str = lsp_types::request::CodeActionRequest::METHOD;
}
