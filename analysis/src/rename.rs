//! A complete rename through a language server, planned but not written: the files that
//! mention the old name opened in the server first ([`rename_scope::make_visible`]), the
//! server's own `prepareRename` and `rename` (or its references where it cannot rename, or
//! the Kotlin compiler's uses for a Kotlin declaration JDT LS reads by name only), one edit per
//! renamed place, the occurrences it left behind completed or classified
//! ([`rename_scope::complete`]), and the whole planned as file changes against the server's
//! document versions. Writing the plan (all files or none) is the caller's: it owns the
//! workspace's confinement and its transactions. After the write, [`tell_server`] lets the
//! server hear of it.
//!
//! A refusal is a typed [`Failure`], worded by the caller; nothing was changed by then.
//!
//! ```
//! use cc_analysis::rename::{is_identifier, BuiltFrom};
//!
//! assert!(is_identifier("parse_args"));
//! assert!(!is_identifier("Foo::bar"));
//! assert_eq!(serde_json::to_value(BuiltFrom::KotlinCompiler).unwrap(), "kotlin_compiler");
//! ```
//!
//! A rename planned against a running server, then written by the caller:
//!
//! ```no_run
//! use cc_analysis::rename::{self, Asked};
//! use cc_lsp_client::{locate, ServerPool, ServerPoolOptions, ServerTable};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let root = std::path::Path::new("/path/to/checkout");
//! let pool = ServerPool::new(root, ServerTable::builtin(), ServerPoolOptions::default());
//! let path = root.join("src/app.py");
//! let text = std::fs::read_to_string(&path)?;
//! let server = pool.server_for(&path).await.map_err(|u| u.reason)?;
//! server.ensure_synced(&path, &text, "python")?;
//! let at = locate(&text, 12, "parse_args", server.encoding())?;
//! let asked = Asked { server: &server, path: &path, text: &text, at: &at,
//!                     symbol: "parse_args", new_name: "read_args" };
//! let plan = rename::plan(&pool, root, asked).await?;
//! println!("{} files, complete: {}", plan.changes.len(), plan.complete());
//! // … write plan.changes all or nothing, then:
//! rename::tell_server(&server, &plan.changes);
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cc_lsp_client::lsp_types::{TextDocumentPositionParams, WorkspaceEdit};
use cc_lsp_client::requests::{self, RenameError};
use cc_lsp_client::workspace_edit::{self, EditError, FileChange};
use cc_lsp_client::{LanguageServer, Located, LspError, ServerPool, WatchedChange};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kotlin_rename::{self, Declaration, Refusal};
use crate::rename_scope::{self, Completion, Mentions, Target};

/// A rename may search the whole project.
const RENAME_TIMEOUT: Duration = Duration::from_secs(60);
/// A server this young may still be discovering the project's files: basedpyright answers
/// `prepareRename` with null for a symbol defined in a file it has not enumerated yet.
const YOUNG: Duration = Duration::from_secs(60);
/// How long a young server's "cannot rename" is asked again before it is believed.
const YOUNG_RETRY: Duration = Duration::from_secs(10);

/// How the rename's edit was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BuiltFrom {
    /// The server's rename.
    Rename,
    /// The server's references (it cannot rename), and the scan.
    References,
    /// The uses the Kotlin compiler resolves to a Kotlin declaration, and the scan.
    KotlinCompiler,
}

/// What is asked: the symbol at its place in a file open in its server, and the new name.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The server the file is open in, synced with `text`.
    pub server: &'a Arc<LanguageServer>,
    /// The file.
    pub path: &'a Path,
    /// Its text as the server holds it.
    pub text: &'a str,
    /// The symbol's place in it.
    pub at: &'a Located,
    /// The symbol as written there.
    pub symbol: &'a str,
    /// The new name.
    pub new_name: &'a str,
}

/// The rename, planned: the file changes to write, how the edit was built, and what the
/// completeness scan found.
#[derive(Debug)]
pub struct Plan {
    /// How the edit was built.
    pub built_from: BuiltFrom,
    /// The changes, each against the bytes the server renamed from.
    pub changes: Vec<FileChange>,
    /// What the scan added and what it left, classified.
    pub completion: Completion,
    /// The files the scan looked at.
    pub mentions: Mentions,
    /// Whether the old name could be scanned for at all (it is one identifier).
    pub scanned: bool,
}

impl Plan {
    /// Whether no occurrence of the old name is left in code: the scan ran, found none,
    /// and no file that mentions it lay beyond its limit.
    pub fn complete(&self) -> bool {
        self.scanned && self.completion.code.is_empty() && self.mentions.more == 0
    }
}

/// Why a rename was refused; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The server reads this kind of file for navigation only, finding places by name.
    #[error("{server} reads .{extension} files for navigation only")]
    ByNameOnly {
        /// The server.
        server: String,
        /// The file's extension.
        extension: String,
        /// Whether the Kotlin compiler checks such files after each write.
        compiler_checks: bool,
    },
    /// The server can neither rename nor find references.
    #[error("{server} can neither rename nor find references")]
    NotSupported {
        /// The server.
        server: String,
    },
    /// `prepareRename` answered that the place cannot be renamed.
    #[error("{server} says the symbol cannot be renamed there")]
    NotRenamable {
        /// The server.
        server: String,
    },
    /// `prepareRename` failed with the server's message.
    #[error("{server} cannot rename the symbol: {message}")]
    PrepareRefused {
        /// The server.
        server: String,
        /// Its message.
        message: String,
    },
    /// `rename` failed with the server's message.
    #[error("{server} refused the rename: {message}")]
    RenameRefused {
        /// The server.
        server: String,
        /// Its message.
        message: String,
    },
    /// The server found nothing to rename at the place.
    #[error("{server} found nothing to rename there")]
    NothingToRename {
        /// The server.
        server: String,
    },
    /// The Kotlin compiler's rename was refused.
    #[error("{server} cannot rename Kotlin, and the Kotlin compiler cannot either: {refusal}")]
    Kotlin {
        /// The server that reads Kotlin by name only.
        server: String,
        /// Why the compiler's rename was refused.
        refusal: Refusal,
    },
    /// The server's edit cannot be applied.
    #[error("{server} sent an edit that cannot be applied: {error}")]
    InvalidEdit {
        /// The server.
        server: String,
        /// What is wrong with it.
        error: EditError,
    },
    /// A request failed (timeout, exit, a broken answer).
    #[error(transparent)]
    Request(#[from] LspError),
}

/// Whether `symbol` is one plain identifier (what the leftover scan can look for).
pub fn is_identifier(symbol: &str) -> bool {
    !symbol.is_empty()
        && symbol
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// How the edit will be built: the server's rename; its references when it cannot rename
/// (intelephense's free features), completed by the scan as any other; or, for a Kotlin
/// declaration JDT LS cannot rename, the uses the Kotlin compiler finds.
pub fn built_from(server: &LanguageServer, path: &Path) -> Result<BuiltFrom, Failure> {
    if !server.spec().diagnoses(path) && cc_lsp_client::kotlin::compiles(path) {
        return Ok(BuiltFrom::KotlinCompiler);
    }
    if server.supports("renameProvider", "textDocument/rename") {
        return Ok(BuiltFrom::Rename);
    }
    if server.supports("referencesProvider", "textDocument/references") {
        return Ok(BuiltFrom::References);
    }
    Err(Failure::NotSupported {
        server: server.name().to_owned(),
    })
}

/// Plans the rename `asked`, inside the workspace `root`: nothing is written.
pub async fn plan(pool: &ServerPool, root: &Path, asked: Asked<'_>) -> Result<Plan, Failure> {
    let server = asked.server;
    let built_from = built_from(server, asked.path)?;
    // Every workspace file that mentions the name is opened in the server first, so that
    // it renames outside its configured project too (rename_scope).
    let scanned = is_identifier(asked.symbol);
    let mentions = if scanned {
        rename_scope::make_visible(pool, server, root, asked.path, asked.symbol).await
    } else {
        Mentions::default()
    };
    sync_open_documents(pool, server, asked.path)?;
    let position = requests::position(asked.path, asked.at.line, asked.at.character);
    if built_from != BuiltFrom::KotlinCompiler {
        refuse_by_name_only(server, asked.path)?;
        prepare(server, &position).await?;
    }
    let target = Target::of(
        server,
        (
            asked.path.to_path_buf(),
            u64::from(asked.at.line),
            u64::from(asked.at.character),
        ),
    )
    .await;
    let mut edit = server_edit(pool, &asked, built_from, position, &mentions).await?;
    // One edit per renamed place, whatever stretch the server rewrote (JDT LS sends one per
    // file): the completeness scan below sees every place the rename covers.
    cc_lsp_client::edit_split::split_text_edits(&mut edit, server.encoding());
    let completion = rename_scope::complete(
        server,
        root,
        &mentions,
        asked.symbol,
        asked.new_name,
        &target,
        &mut edit,
    )
    .await;
    let changes = workspace_edit::plan(&edit, server.encoding(), &|path| server.version_of(path))
        .map_err(|error| invalid_edit(server, error))?;
    Ok(Plan {
        built_from,
        changes,
        completion,
        mentions,
        scanned,
    })
}

/// Files the server watches hear of the written `changes` (the diagnostics hook then sends
/// the new texts, all before it waits for any answer); deleted files are closed.
pub fn tell_server(server: &LanguageServer, changes: &[FileChange]) {
    for path in workspace_edit::touched(changes) {
        if !path.exists() {
            server.close(&path);
        }
    }
    let mut watched = Vec::new();
    for change in changes {
        match change {
            FileChange::Modify { path, .. } => watched.push((path.clone(), WatchedChange::Changed)),
            FileChange::Create { path, .. } => watched.push((path.clone(), WatchedChange::Created)),
            FileChange::Rename { from, to, .. } => {
                watched.push((from.clone(), WatchedChange::Deleted));
                watched.push((to.clone(), WatchedChange::Created));
            }
            FileChange::Delete { path, .. } => watched.push((path.clone(), WatchedChange::Deleted)),
        }
    }
    // Only what the server registered watches for (no fallback: a server that watches
    // nothing is told nothing).
    let _ = server.files_changed(&watched, &[]);
}

fn invalid_edit(server: &LanguageServer, error: EditError) -> Failure {
    Failure::InvalidEdit {
        server: server.name().to_owned(),
        error,
    }
}

/// A declaration in a file the server reads for navigation only (JDT LS and Kotlin): its
/// places are found by name, so a rename built from them would take overloads and other
/// symbols of that name along.
fn refuse_by_name_only(server: &LanguageServer, path: &Path) -> Result<(), Failure> {
    if server.spec().diagnoses(path) {
        return Ok(());
    }
    Err(Failure::ByNameOnly {
        server: server.name().to_owned(),
        extension: path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default()
            .to_owned(),
        compiler_checks: cc_lsp_client::kotlin::compiles(path),
    })
}

/// Makes the server's open documents match the disk before it computes the edit, so the edit
/// is made against what will be checked at commit.
fn sync_open_documents(
    pool: &ServerPool,
    server: &LanguageServer,
    asked: &Path,
) -> Result<(), Failure> {
    for path in server.open_documents() {
        if path == asked {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let language_id = pool
                    .route(&path)
                    .map(|(family, _)| family.language_id(&path))
                    .unwrap_or_default();
                server.ensure_synced(&path, &text, &language_id)?;
            }
            Err(_) => server.close(&path),
        }
    }
    Ok(())
}

/// `prepareRename`, where the server offers it: refuses a place that cannot be renamed before
/// anything is computed.
async fn prepare(
    server: &LanguageServer,
    position: &TextDocumentPositionParams,
) -> Result<(), Failure> {
    if !server.prepares_rename() {
        return Ok(());
    }
    let retry_until = (server.age() < YOUNG).then(|| tokio::time::Instant::now() + YOUNG_RETRY);
    let mut answer = requests::prepare_rename(server, position.clone(), RENAME_TIMEOUT).await;
    while matches!(answer, Ok(Value::Null))
        && retry_until.is_some_and(|until| tokio::time::Instant::now() < until)
    {
        tokio::time::sleep(Duration::from_millis(500)).await;
        answer = requests::prepare_rename(server, position.clone(), RENAME_TIMEOUT).await;
    }
    let server = server.name().to_owned();
    match answer {
        Ok(Value::Null) => Err(Failure::NotRenamable { server }),
        Ok(_) => Ok(()),
        Err(LspError::Server { message, .. }) => Err(Failure::PrepareRefused { server, message }),
        Err(error) => Err(Failure::Request(error)),
    }
}

/// The server's workspace edit for the rename (built as `built_from` says), or why there is
/// none.
async fn server_edit(
    pool: &ServerPool,
    asked: &Asked<'_>,
    built_from: BuiltFrom,
    position: TextDocumentPositionParams,
    mentions: &Mentions,
) -> Result<WorkspaceEdit, Failure> {
    let server = asked.server;
    let answer = match built_from {
        BuiltFrom::KotlinCompiler => {
            let declaration = Declaration {
                path: asked.path,
                text: asked.text,
                line: asked.at.line,
                character: asked.at.character,
                encoding: server.encoding(),
            };
            let edit = kotlin_rename::edit(
                pool,
                declaration,
                &mentions.own,
                asked.symbol,
                asked.new_name,
            )
            .await
            .map_err(|refusal| Failure::Kotlin {
                server: server.name().to_owned(),
                refusal,
            })?;
            Ok(edit)
        }
        BuiltFrom::Rename => {
            requests::rename(server, position, asked.new_name, RENAME_TIMEOUT).await
        }
        BuiltFrom::References => rename_scope::edit_from_references(
            server,
            position,
            asked.symbol,
            asked.new_name,
            RENAME_TIMEOUT,
        )
        .await
        .map_err(RenameError::from),
    };
    match answer {
        Ok(Some(edit)) => Ok(edit),
        Ok(None) => Err(Failure::NothingToRename {
            server: server.name().to_owned(),
        }),
        Err(RenameError::Request(LspError::Server { message, .. })) => {
            Err(Failure::RenameRefused {
                server: server.name().to_owned(),
                message,
            })
        }
        Err(RenameError::Request(error)) => Err(Failure::Request(error)),
        Err(RenameError::Edit(error)) => Err(invalid_edit(server, error)),
    }
}
