//! What the `lsp` actions and `lsp_rename` share: a file opened in its server (synced as it
//! is on disk, indexing finished), a position named by line and symbol, and error mapping.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cc_lsp_client::{locate, LanguageServer, Located, LspError, ServerPool};

use crate::error::{ErrorKind, ToolError};
use crate::report::lsp::{LspReport, UnsupportedReport};
use crate::root::WorkspaceRoot;
use crate::tool::CallContext;

/// How long to let a freshly started server finish indexing before asking it.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How often a caller listening for progress hears that the server is still indexing.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// Refuses a call while the `[lsp]` section is broken, with the section's words (as every
/// family refuses its calls), rather than as an unavailable server.
pub(super) fn refuse_broken(pool: &ServerPool) -> Result<(), ToolError> {
    match pool.config_error() {
        Some(broken) => Err(ToolError::new(ErrorKind::InvalidConfig, broken)),
        None => Ok(()),
    }
}

pub(super) fn unavailable(reason: String) -> ToolError {
    ToolError::new(ErrorKind::NotAvailable, reason)
}

pub(super) fn lsp_error(error: LspError) -> ToolError {
    let kind = match &error {
        LspError::Timeout { .. } => ErrorKind::Timeout,
        LspError::ServerExited { .. } => ErrorKind::ServerExited,
        _ => ErrorKind::ServerError,
    };
    ToolError::new(kind, error.to_string())
}

/// A file open in its server.
pub(super) struct Opened {
    pub path: PathBuf,
    pub shown: String,
    pub text: String,
    pub language_id: String,
    pub server: Arc<LanguageServer>,
    /// What the server's answers cannot cover here (clangd without a compilation database).
    pub limits: Option<String>,
    /// Why an answer may be partial: the server had not finished its analysis of the
    /// workspace within the cap.
    pub incomplete: Option<String>,
}

/// The file's server, with the file synced as it is on disk and indexing finished.
pub(super) async fn open(
    ctx: &CallContext,
    pool: &ServerPool,
    root: &WorkspaceRoot,
    file: Option<&str>,
) -> Result<Opened, ToolError> {
    let file = file.ok_or_else(|| {
        ToolError::invalid_arguments("this action needs `file` (a path in the workspace)")
    })?;
    let path = root.resolve_existing(file)?;
    let shown = root.relative(&path);
    let text = crate::fs::read_text(
        root,
        &path,
        &shown,
        crate::fs::FileLimits::default().edit_bytes,
    )?;
    let (family, _) = pool.route(&path).map_err(|u| unavailable(u.reason))?;
    let language_id = family.language_id(&path);
    let server = pool
        .server_for(&path)
        .await
        .map_err(|u| unavailable(u.reason))?;
    server
        .ensure_synced(&path, &text, &language_id)
        .map_err(lsp_error)?;
    let incomplete = wait_ready(ctx, &server).await;
    let limits = cc_lsp_client::policy::answer_limits(server.name(), server.root());
    Ok(Opened {
        path,
        shown,
        text,
        language_id,
        server,
        limits,
        incomplete,
    })
}

/// Waits for the server to finish its analysis of the workspace; a caller that listens for
/// progress hears what the server reports it is doing while it waits (an agent sees why the
/// call is slow). `Some(why)` when it had not finished within the cap: the answer may then be
/// partial, and says so.
pub(super) async fn wait_ready(ctx: &CallContext, server: &LanguageServer) -> Option<String> {
    let started = std::time::Instant::now();
    let unfinished = |server: &LanguageServer| {
        Some(format!(
            "{} had not finished its analysis of the workspace after {} s ({}): the answer may \
             be partial; ask again shortly",
            server.name(),
            started.elapsed().as_secs(),
            server.progress_titles().join(", ")
        ))
    };
    if !ctx.wants_progress() {
        if server.wait_ready(READY_TIMEOUT).await {
            return None;
        }
        return unfinished(server);
    }
    let ready = server.wait_ready(READY_TIMEOUT);
    tokio::pin!(ready);
    let mut ticker = tokio::time::interval(PROGRESS_EVERY);
    loop {
        tokio::select! {
            done = &mut ready => return if done { None } else { unfinished(server) },
            _ = ticker.tick() => {
                if server.is_busy() {
                    ctx.report_progress(
                        started.elapsed().as_secs_f64(),
                        None,
                        Some(&indexing_message(server.name(), &server.progress_titles())),
                    );
                }
            }
        }
    }
}

/// "waiting for rust-analyzer to finish: Indexing, Building"
fn indexing_message(server: &str, titles: &[String]) -> String {
    if titles.is_empty() {
        format!("waiting for {server} to finish indexing")
    } else {
        format!("waiting for {server} to finish: {}", titles.join(", "))
    }
}

/// The position of `symbol` on 1-based `line` of the opened file.
pub(super) fn position(
    opened: &Opened,
    line: Option<usize>,
    symbol: Option<&str>,
) -> Result<Located, ToolError> {
    let (Some(line), Some(symbol)) = (line, symbol) else {
        return Err(ToolError::invalid_arguments(
            "this action needs `line` (1-based) and `symbol` (the identifier as it appears on \
             that line); positions are never guessed",
        ));
    };
    locate(&opened.text, line, symbol, opened.server.encoding())
        .map_err(|error| ToolError::new(ErrorKind::SymbolNotFound, error.to_string()))
}

/// "not supported by <server>", as an answer rather than an error.
pub(super) fn unsupported(server: &LanguageServer, action: &str) -> LspReport {
    LspReport::Unsupported(UnsupportedReport {
        action: action.to_owned(),
        supported: false,
        message: format!("not supported by {}", server.name()),
    })
}
