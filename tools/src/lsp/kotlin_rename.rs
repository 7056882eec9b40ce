//! A rename of a Kotlin declaration through [`cc_analysis::kotlin_rename`] (JDT LS reads
//! Kotlin by name only): its refusals worded for the agent.

use cc_analysis::kotlin_rename::{self, Declaration, Refusal};
use cc_lsp_client::lsp_types::WorkspaceEdit;
use cc_lsp_client::position::Located;
use cc_lsp_client::ServerPool;

use super::open::Opened;
use super::rename_scope::Mentions;
use crate::error::{ErrorKind, ToolError};
use crate::root::WorkspaceRoot;

/// The rename's edit (`None`, as a server's rename answers, when nothing is to be renamed), or
/// why it is refused.
pub(super) async fn edit(
    pool: &ServerPool,
    root: &WorkspaceRoot,
    opened: &Opened,
    at: &Located,
    symbol: &str,
    new_name: &str,
    mentions: &Mentions,
) -> Result<Option<WorkspaceEdit>, ToolError> {
    let declaration = Declaration {
        path: &opened.path,
        text: &opened.text,
        line: at.line,
        character: at.character,
        encoding: opened.server.encoding(),
    };
    kotlin_rename::edit(pool, declaration, &mentions.own, symbol, new_name)
        .await
        .map_err(|refusal| {
            let message = match refusal {
                Refusal::NotADeclaration { line, symbol } => format!(
                    "line {line} does not declare `{symbol}`: give the line of its declaration \
                     (`lsp` `definition` finds it)"
                ),
                Refusal::DeclaredMoreThanOnce {
                    symbol,
                    count,
                    places,
                } => {
                    let places: Vec<String> = places
                        .iter()
                        .map(|(path, n)| format!("{} ({n})", root.relative(path)))
                        .collect();
                    format!(
                        "`{symbol}` is declared {count} times in the project ({}): overloads, \
                         overrides or members of other classes, whose uses cannot be told apart \
                         by name, and renaming one would let its callers bind to another",
                        places.join(", ")
                    )
                }
                Refusal::NoCompiler(why) => why,
            };
            ToolError::new(
                ErrorKind::CannotRename,
                format!(
                    "{} cannot rename Kotlin (it reads .kt files by name only), and the Kotlin \
                     compiler cannot either: {message}; nothing was changed",
                    opened.server.name()
                ),
            )
        })
}
