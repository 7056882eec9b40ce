//! `lsp_rename`: rename the symbol at a line through the language server, every file at
//! once or none.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cc_lsp_client::lsp_types::{TextDocumentPositionParams, WorkspaceEdit};
use cc_lsp_client::workspace_edit::{self, FileChange};
use cc_lsp_client::{LanguageServer, Located, LspError, ServerPool, WatchedChange};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::apply;
use super::open::{self, lsp_error, Opened};
use super::rename_scope;
use super::requests::{self, RenameError};
use crate::error::{ErrorKind, ToolError};
use crate::report::lsp::{
    BuiltFrom, Leftovers, OtherSymbols, Place, RenameReport, Renamed, RenamedFile,
};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::report_output;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// A rename may search the whole project.
const RENAME_TIMEOUT: Duration = Duration::from_secs(60);
/// A server this young may still be discovering the project's files: basedpyright answers
/// `prepareRename` with null for a symbol defined in a file it has not enumerated yet.
const YOUNG: Duration = Duration::from_secs(60);
/// How long a young server's "cannot rename" is asked again before it is believed.
const YOUNG_RETRY: Duration = Duration::from_secs(10);

/// `lsp_rename`: rename a symbol everywhere the language server finds it.
#[derive(Debug)]
pub struct LspRenameTool {
    pool: Arc<ServerPool>,
    root: WorkspaceRoot,
}

impl LspRenameTool {
    /// An `lsp_rename` tool over `pool`.
    pub fn new(pool: Arc<ServerPool>, root: WorkspaceRoot) -> Self {
        LspRenameTool { pool, root }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RenameArgs {
    /// File path, relative to the workspace root.
    file: String,
    /// 1-based line where the symbol occurs (its definition or any use).
    line: usize,
    /// The symbol as it appears on that line (its first whole-identifier occurrence is used).
    symbol: String,
    /// The new name.
    new_name: String,
}

/// Whether `symbol` is one plain identifier (what the leftover scan can look for).
pub(super) fn is_identifier(symbol: &str) -> bool {
    !symbol.is_empty()
        && symbol
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// A declaration in a file the server reads for navigation only (JDT LS and Kotlin): its
/// places are found by name, so a rename built from them would take overloads and other
/// symbols of that name along. Refused, with what to do instead.
fn refuse_by_name_only(opened: &Opened, symbol: &str) -> Result<(), ToolError> {
    if opened.server.spec().diagnoses(&opened.path) {
        return Ok(());
    }
    let extension = opened
        .path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let checked = if cc_lsp_client::kotlin::compiles(&opened.path) {
        "; the Kotlin compiler's diagnostics after each write name any use left"
    } else {
        ""
    };
    Err(refused(
        ErrorKind::CannotRename,
        format!(
            "{} cannot rename `{symbol}`: it reads .{extension} files for navigation only, \
             finding places by name (overloads and other symbols of that name too). Ask `lsp` \
             for its `references`, then edit the places that are this symbol{checked}",
            opened.server.name()
        ),
    ))
}

/// A server's edit that cannot be applied.
fn invalid_edit(server: &LanguageServer, error: &workspace_edit::EditError) -> ToolError {
    refused(
        ErrorKind::InvalidEdit,
        format!(
            "{} sent an edit that cannot be applied: {error}",
            server.name()
        ),
    )
}

fn refused(kind: ErrorKind, message: String) -> ToolError {
    ToolError::new(kind, format!("{message}; nothing was changed"))
}

impl LspRenameTool {
    /// Makes the server's open documents match the disk before it computes the edit, so
    /// the edit is made against what will be checked at commit.
    fn sync_open_documents(&self, opened: &Opened) -> Result<(), ToolError> {
        for path in opened.server.open_documents() {
            if path == opened.path {
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let language_id = self
                        .pool
                        .route(&path)
                        .map(|(family, _)| family.language_id(&path))
                        .unwrap_or_default();
                    opened
                        .server
                        .ensure_synced(&path, &text, &language_id)
                        .map_err(lsp_error)?;
                }
                Err(_) => opened.server.close(&path),
            }
        }
        Ok(())
    }

    /// `prepareRename`, where the server offers it: refuses a place that cannot be
    /// renamed before anything is computed.
    async fn prepare(
        &self,
        opened: &Opened,
        position: &TextDocumentPositionParams,
        symbol: &str,
    ) -> Result<(), ToolError> {
        if !opened.server.prepares_rename() {
            return Ok(());
        }
        let retry_until =
            (opened.server.age() < YOUNG).then(|| tokio::time::Instant::now() + YOUNG_RETRY);
        let mut answer =
            requests::prepare_rename(&opened.server, position.clone(), RENAME_TIMEOUT).await;
        while matches!(answer, Ok(Value::Null))
            && retry_until.is_some_and(|until| tokio::time::Instant::now() < until)
        {
            tokio::time::sleep(Duration::from_millis(500)).await;
            answer =
                requests::prepare_rename(&opened.server, position.clone(), RENAME_TIMEOUT).await;
        }
        match answer {
            Ok(Value::Null) => Err(refused(
                ErrorKind::CannotRename,
                format!(
                    "{} says `{symbol}` in {} cannot be renamed there",
                    opened.server.name(),
                    opened.shown
                ),
            )),
            Ok(_) => Ok(()),
            Err(LspError::Server { message, .. }) => Err(refused(
                ErrorKind::CannotRename,
                format!(
                    "{} cannot rename `{symbol}`: {message}",
                    opened.server.name()
                ),
            )),
            Err(error) => Err(lsp_error(error)),
        }
    }

    /// Files the server watches hear of the change (the diagnostics hook then sends the new
    /// texts, all before it waits for any answer); deleted files are closed.
    fn tell_server(&self, server: &LanguageServer, changes: &[FileChange]) {
        for path in apply::touched(changes) {
            if !path.exists() {
                server.close(&path);
            }
        }
        let mut watched = Vec::new();
        for change in changes {
            match change {
                FileChange::Modify { path, .. } => {
                    watched.push((path.clone(), WatchedChange::Changed))
                }
                FileChange::Create { path, .. } => {
                    watched.push((path.clone(), WatchedChange::Created))
                }
                FileChange::Rename { from, to, .. } => {
                    watched.push((from.clone(), WatchedChange::Deleted));
                    watched.push((to.clone(), WatchedChange::Created));
                }
                FileChange::Delete { path, .. } => {
                    watched.push((path.clone(), WatchedChange::Deleted))
                }
            }
        }
        // Only what the server registered watches for (no fallback: a server that watches
        // nothing is told nothing).
        let _ = server.files_changed(&watched, &[]);
    }

    fn summary(&self, changes: &[FileChange]) -> Vec<RenamedFile> {
        changes
            .iter()
            .map(|change| RenamedFile {
                path: self.root.relative(change.path()),
                action: change.action().to_owned(),
                edits: change.edits(),
                from: match change {
                    FileChange::Rename { from, .. } => Some(self.root.relative(from)),
                    _ => None,
                },
            })
            .collect()
    }
}

/// What the rename is asked: the symbol at its place, and the new name.
struct Asked<'a> {
    opened: &'a Opened,
    at: &'a Located,
    symbol: &'a str,
    new_name: &'a str,
    line: usize,
}

/// How the edit will be built: the server's rename; its references when it cannot rename
/// (intelephense's free features), completed by the scan as any other; or, for a Kotlin
/// declaration JDT LS cannot rename, the uses the Kotlin compiler finds.
fn built_from(opened: &Opened) -> Result<BuiltFrom, ToolError> {
    if !opened.server.spec().diagnoses(&opened.path)
        && cc_lsp_client::kotlin::compiles(&opened.path)
    {
        return Ok(BuiltFrom::KotlinCompiler);
    }
    if opened
        .server
        .supports("renameProvider", "textDocument/rename")
    {
        return Ok(BuiltFrom::Rename);
    }
    if opened
        .server
        .supports("referencesProvider", "textDocument/references")
    {
        return Ok(BuiltFrom::References);
    }
    Err(ToolError::new(
        ErrorKind::NotSupported,
        format!(
            "not supported by {}: it can neither rename nor find references",
            opened.server.name()
        ),
    ))
}

impl LspRenameTool {
    /// The server's workspace edit for the rename (built as `built_from` says), or why there
    /// is none.
    async fn server_edit(
        &self,
        asked: &Asked<'_>,
        built_from: BuiltFrom,
        position: TextDocumentPositionParams,
        mentions: &rename_scope::Mentions,
    ) -> Result<WorkspaceEdit, ToolError> {
        let Asked {
            opened,
            at,
            symbol,
            new_name,
            line,
        } = *asked;
        let answer = match built_from {
            BuiltFrom::KotlinCompiler => Ok(super::kotlin_rename::edit(
                &self.pool, &self.root, opened, at, symbol, new_name, mentions,
            )
            .await?),
            BuiltFrom::Rename => {
                requests::rename(&opened.server, position, new_name, RENAME_TIMEOUT).await
            }
            BuiltFrom::References => rename_scope::edit_from_references(
                &opened.server,
                position,
                symbol,
                new_name,
                RENAME_TIMEOUT,
            )
            .await
            .map_err(RenameError::from),
        };
        let edit = match answer {
            Ok(edit) => edit,
            Err(RenameError::Request(LspError::Server { message, .. })) => {
                return Err(refused(
                    ErrorKind::CannotRename,
                    format!(
                        "{} refused to rename `{symbol}` to `{new_name}`: {message}",
                        opened.server.name(),
                    ),
                ))
            }
            Err(RenameError::Request(error)) => return Err(lsp_error(error)),
            Err(RenameError::Edit(error)) => return Err(invalid_edit(&opened.server, &error)),
        };
        let Some(edit) = edit else {
            return Err(refused(
                ErrorKind::CannotRename,
                format!(
                    "{} found nothing to rename at `{symbol}` in {}:{line}",
                    opened.server.name(),
                    opened.shown,
                ),
            ));
        };
        Ok(edit)
    }

    /// What the rename did, as its report.
    fn report(
        &self,
        asked: &Asked<'_>,
        built_from: BuiltFrom,
        changes: &[FileChange],
        completion: &rename_scope::Completion,
        mentions: &rename_scope::Mentions,
    ) -> RenameReport {
        let identifier = is_identifier(asked.symbol);
        let listed = |items: &[rename_scope::Leftover]| -> Vec<Place> {
            items
                .iter()
                .take(rename_scope::LISTED)
                .map(|l| super::leftover_place(l, &self.root))
                .collect()
        };
        RenameReport {
            renamed: Renamed {
                from: asked.symbol.to_owned(),
                to: asked.new_name.to_owned(),
                file: asked.opened.shown.clone(),
                line: asked.line,
            },
            files: self.summary(changes),
            edits: changes.iter().map(FileChange::edits).sum(),
            complete: identifier && completion.code.is_empty() && mentions.more == 0,
            added_by_scan: completion.added,
            built_from,
            leftovers: Leftovers {
                code: listed(&completion.code),
                code_total: completion.code.len(),
                comments: listed(&completion.comments),
                comments_total: completion.comments.len(),
            },
            other_symbols: OtherSymbols {
                listed: listed(&completion.other_symbols),
                total: completion.other_symbols.len(),
            },
            scanned_files: mentions.own.len() + mentions.elsewhere.len(),
            unscanned_files: mentions.more,
            leftovers_checked: identifier,
            server: asked.opened.server.name().to_owned(),
            diagnostics: None,
        }
    }
}

#[async_trait]
impl Tool for LspRenameTool {
    fn name(&self) -> &str {
        "lsp_rename"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> &str {
        "Rename a symbol everywhere the language server finds it (definition, uses, imports, \
         across files; files the server renames too). Give `file`, `line` (1-based), \
         `symbol` (as written on that line) and `new_name`. All files change or none: if a \
         file changed meanwhile or a write fails, nothing is changed. Returns each file with \
         its edit count, then the new diagnostics of the touched files."
    }

    fn input_schema(&self) -> Value {
        schema_for::<RenameArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<RenameReport>())
    }

    fn parallel_safe(&self) -> bool {
        // Two renames at once would each see the other's files change under them.
        false
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: RenameArgs = parse_args(args)?;
        open::refuse_broken(&self.pool)?;
        let new_name = args.new_name.trim();
        if new_name.is_empty() {
            return Err(ToolError::invalid_arguments("`new_name` is empty"));
        }
        if new_name == args.symbol {
            return Err(ToolError::invalid_arguments(format!(
                "`new_name` is `{new_name}`, the name it already has"
            )));
        }
        let opened = open::open(ctx, &self.pool, &self.root, Some(&args.file)).await?;
        let at = open::position(&opened, Some(args.line), Some(&args.symbol))?;
        let built_from = built_from(&opened)?;
        // Every workspace file that mentions the name is opened in the server first, so that
        // it renames outside its configured project too (rename_scope).
        let identifier = is_identifier(&args.symbol);
        let mentions = if identifier {
            rename_scope::make_visible(
                &self.pool,
                &opened.server,
                self.root.path(),
                &opened.path,
                &args.symbol,
            )
            .await
        } else {
            rename_scope::Mentions::default()
        };
        self.sync_open_documents(&opened)?;
        let position = requests::position(&opened.path, at.line, at.character);
        if built_from != BuiltFrom::KotlinCompiler {
            refuse_by_name_only(&opened, &args.symbol)?;
            self.prepare(&opened, &position, &args.symbol).await?;
        }
        let target = rename_scope::Target::of(
            &opened.server,
            (
                opened.path.clone(),
                u64::from(at.line),
                u64::from(at.character),
            ),
        )
        .await;
        let asked = Asked {
            opened: &opened,
            at: &at,
            symbol: &args.symbol,
            new_name,
            line: args.line,
        };
        let mut edit = self
            .server_edit(&asked, built_from, position, &mentions)
            .await?;
        let server = opened.server.clone();
        // One edit per renamed place, whatever stretch the server rewrote (JDT LS sends one
        // per file): the completeness scan below sees every place the rename covers.
        cc_lsp_client::edit_split::split_text_edits(&mut edit, server.encoding());
        let completion = rename_scope::complete(
            &server,
            self.root.path(),
            &mentions,
            &args.symbol,
            new_name,
            &target,
            &mut edit,
        )
        .await;
        let changes =
            workspace_edit::plan(&edit, server.encoding(), &|path| server.version_of(path))
                .map_err(|error| invalid_edit(&server, &error))?;
        apply::check_inside(&self.root, &changes)
            .map_err(|message| ToolError::new(ErrorKind::OutsideRoot, message))?;
        crate::commit::commit_checked(
            ctx,
            &self.root,
            apply::transaction(&changes),
            "the rename",
            "run lsp_rename again on the current files",
        )
        .await?;

        ctx.note_renamed(&args.symbol, new_name).await;
        self.tell_server(&server, &changes);
        let written = apply::touched(&changes);
        let report = self.report(&asked, built_from, &changes, &completion, &mentions);
        Ok(report_output(&report)?.with_written(written))
    }
}
