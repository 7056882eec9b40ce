//! `lsp_rename`: rename the symbol at a line through the language server, every file at
//! once or none. The rename is planned by [`cc_analysis::rename`]; this adapter opens the
//! file, words its refusals for the agent, writes the plan through the run's transaction
//! and reports it.

use std::sync::Arc;

use async_trait::async_trait;
use cc_analysis::rename::{self, Failure, Plan};
use cc_lsp_client::workspace_edit::FileChange;
use cc_lsp_client::ServerPool;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::apply;
use super::open::{self, lsp_error, Opened};
use super::rename_scope;
use crate::error::{ErrorKind, ToolError};
use crate::report::lsp::{Leftovers, OtherSymbols, Place, RenameReport, Renamed, RenamedFile};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::report_output;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

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

fn refused(kind: ErrorKind, message: String) -> ToolError {
    ToolError::new(kind, format!("{message}; nothing was changed"))
}

/// A refused rename, worded for the agent: what the server or compiler said, and what to do.
fn refusal(failure: Failure, args: &RenameArgs, shown: &str, root: &WorkspaceRoot) -> ToolError {
    let RenameArgs {
        symbol,
        new_name,
        line,
        ..
    } = args;
    let cannot = |message: String| refused(ErrorKind::CannotRename, message);
    match failure {
        Failure::ByNameOnly {
            server,
            extension,
            compiler_checks,
        } => {
            let checked = if compiler_checks {
                "; the Kotlin compiler's diagnostics after each write name any use left"
            } else {
                ""
            };
            cannot(format!(
                "{server} cannot rename `{symbol}`: it reads .{extension} files for navigation \
                 only, finding places by name (overloads and other symbols of that name too). \
                 Ask `lsp` for its `references`, then edit the places that are this \
                 symbol{checked}"
            ))
        }
        Failure::NotSupported { server } => ToolError::new(
            ErrorKind::NotSupported,
            format!("not supported by {server}: it can neither rename nor find references"),
        ),
        Failure::NotRenamable { server } => cannot(format!(
            "{server} says `{symbol}` in {shown} cannot be renamed there"
        )),
        Failure::PrepareRefused { server, message } => {
            cannot(format!("{server} cannot rename `{symbol}`: {message}"))
        }
        Failure::RenameRefused { server, message } => cannot(format!(
            "{server} refused to rename `{symbol}` to `{}`: {message}",
            new_name.trim()
        )),
        Failure::NothingToRename { server } => cannot(format!(
            "{server} found nothing to rename at `{symbol}` in {shown}:{line}"
        )),
        Failure::Kotlin { server, refusal } => cannot(format!(
            "{server} cannot rename Kotlin (it reads .kt files by name only), and the Kotlin \
             compiler cannot either: {}",
            super::kotlin_rename::wording(refusal, root)
        )),
        Failure::InvalidEdit { server, error } => refused(
            ErrorKind::InvalidEdit,
            format!("{server} sent an edit that cannot be applied: {error}"),
        ),
        Failure::Request(error) => lsp_error(error),
    }
}

impl LspRenameTool {
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

    /// What the rename did, as its report.
    fn report(&self, args: &RenameArgs, opened: &Opened, plan: &Plan) -> RenameReport {
        let listed = |items: &[rename_scope::Leftover]| -> Vec<Place> {
            items
                .iter()
                .take(rename_scope::LISTED)
                .map(|l| super::leftover_place(l, &self.root))
                .collect()
        };
        let Plan {
            completion,
            mentions,
            changes,
            ..
        } = plan;
        RenameReport {
            renamed: Renamed {
                from: args.symbol.clone(),
                to: args.new_name.trim().to_owned(),
                file: opened.shown.clone(),
                line: args.line,
            },
            files: self.summary(changes),
            edits: changes.iter().map(FileChange::edits).sum(),
            complete: plan.complete(),
            added_by_scan: completion.added,
            built_from: plan.built_from,
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
            leftovers_checked: plan.scanned,
            server: opened.server.name().to_owned(),
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
        let asked = rename::Asked {
            server: &opened.server,
            path: &opened.path,
            text: &opened.text,
            at: &at,
            symbol: &args.symbol,
            new_name,
        };
        let plan = rename::plan(&self.pool, self.root.path(), asked)
            .await
            .map_err(|failure| refusal(failure, &args, &opened.shown, &self.root))?;
        apply::check_inside(&self.root, &plan.changes)
            .map_err(|message| ToolError::new(ErrorKind::OutsideRoot, message))?;
        crate::commit::commit_checked(
            ctx,
            &self.root,
            apply::transaction(&plan.changes),
            "the rename",
            "run lsp_rename again on the current files",
        )
        .await?;

        ctx.note_renamed(&args.symbol, new_name).await;
        rename::tell_server(&opened.server, &plan.changes);
        let written = apply::touched(&plan.changes);
        let report = self.report(&args, &opened, &plan);
        Ok(report_output(&report)?.with_written(written))
    }
}
