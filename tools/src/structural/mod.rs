//! Structural search and staged rewrite: `ast_grep` (read), `ast_edit` and `resolve` (write),
//! on the tree-sitter parser set of `cc-structural`.
//!
//! The tools are registered when a parser set is wired ([`crate::Resources::parsers`]).
//! Staged edits belong to the run: one [`EditStore`] is shared by the run's `ast_edit` and
//! `resolve`.

mod edit;
mod grep;

pub use edit::{AstEditTool, EditStore, ResolveTool};
pub use grep::AstGrepTool;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cc_structural::search::MAX_FILE_BYTES_CEILING;
use cc_structural::{
    ContextKind, Language, Languages, PatternError, SearchError, DEFAULT_MAX_FILE_BYTES,
};
use cc_workspace::FileKind;
use serde_json::{json, Value};

use crate::error::{ErrorKind, ToolError};
use crate::root::WorkspaceRoot;

/// The path argument resolved inside the root, and whether it is a folder.
pub(crate) struct Target {
    pub(crate) path: PathBuf,
    pub(crate) is_dir: bool,
}

/// A named pipe, a device or a socket named as `path` is refused as `read` refuses it
/// (`not_a_regular_file`): reading it could block or never end.
pub(crate) fn resolve_target(
    root: &WorkspaceRoot,
    path: Option<&str>,
) -> Result<Target, ToolError> {
    let path = root.resolve_existing(path.unwrap_or("."))?;
    let kind = root
        .workspace()
        .kind(&path)
        .map_err(|error| root.io_error("search", &shown(root, &path), &error))?;
    match kind {
        FileKind::Directory => Ok(Target { path, is_dir: true }),
        FileKind::Regular => Ok(Target {
            path,
            is_dir: false,
        }),
        other => Err(crate::fs::not_regular(&shown(root, &path), other)),
    }
}

/// `max_file_bytes` as given, or the default; over [`MAX_FILE_BYTES_CEILING`] (64 MiB) it is
/// an `invalid_arguments` error that says the ceiling.
pub(crate) fn max_file_bytes(given: Option<u64>) -> Result<u64, ToolError> {
    match given {
        None => Ok(DEFAULT_MAX_FILE_BYTES),
        Some(bytes) if bytes <= MAX_FILE_BYTES_CEILING => Ok(bytes),
        Some(bytes) => Err(ToolError::invalid_arguments(format!(
            "max_file_bytes is {bytes}, over the ceiling of {MAX_FILE_BYTES_CEILING} bytes \
             (64 MiB); one file's syntax tree must fit in memory, so give at most \
             {MAX_FILE_BYTES_CEILING}"
        ))
        .with_detail("max_file_bytes", bytes)
        .with_detail("ceiling", MAX_FILE_BYTES_CEILING)),
    }
}

/// A search error as a tool error.
pub(crate) fn search_error(root: &WorkspaceRoot, error: SearchError) -> ToolError {
    match &error {
        SearchError::NotFound(_) => ToolError::new(ErrorKind::NotFound, error.to_string()),
        SearchError::NotRegular(path) => ToolError::new(
            ErrorKind::NotARegularFile,
            format!(
                "`{}` is not a regular file or a folder; reading it could block or never end, \
                 so it is refused",
                shown(root, path)
            ),
        )
        .with_detail("path", shown(root, path)),
        SearchError::Sink(_) => ToolError::new(ErrorKind::Internal, error.to_string()),
    }
}

/// The language named, or inferred from a file's extension.
pub(crate) fn choose_language(
    parsers: &Languages,
    root: &WorkspaceRoot,
    language: Option<&str>,
    target: &Target,
) -> Result<Arc<dyn Language>, ToolError> {
    let known = || parsers.names().join(", ");
    match language {
        Some(name) => parsers.lookup(name).map_err(|error| {
            ToolError::new(ErrorKind::UnknownLanguage, error.to_string())
                .with_detail("language", name)
                .with_detail("known", error.known)
        }),
        None if target.is_dir => Err(ToolError::invalid_arguments(format!(
            "`{}` is a folder: name the `language` to search (one of: {})",
            root.relative(&target.path),
            known()
        ))),
        None => parsers.for_path(&target.path).ok_or_else(|| {
            ToolError::new(
                ErrorKind::UnknownLanguage,
                format!(
                    "cannot tell the language of `{}` from its extension; pass `language` (one of: {})",
                    root.relative(&target.path),
                    known()
                ),
            )
            .with_detail("known", parsers.names())
        }),
    }
}

pub(crate) fn parse_context(context: Option<&str>) -> Result<Option<ContextKind>, ToolError> {
    context
        .map(|c| c.parse::<ContextKind>())
        .transpose()
        .map_err(|e| ToolError::invalid_arguments(e.to_string()))
}

/// A pattern error as a tool error: `unparsable` lists each context tried.
pub(crate) fn pattern_error(error: PatternError) -> ToolError {
    match &error {
        PatternError::Unparsable { language, attempts } => {
            let tried: Vec<Value> = attempts
                .iter()
                .map(|a| {
                    json!({
                        "context": a.context.name(),
                        "problem": a.problem,
                        "line": a.line,
                        "column": a.column,
                    })
                })
                .collect();
            ToolError::new(ErrorKind::Unparsable, error.to_string())
                .with_detail("language", language.as_str())
                .with_detail("contexts", tried)
        }
        PatternError::TooLarge { limit, .. } => {
            ToolError::new(ErrorKind::PatternTooLarge, error.to_string())
                .with_detail("limit", *limit)
        }
        PatternError::NoSuchContext { .. }
        | PatternError::Empty
        | PatternError::OnlyMulti(_)
        | PatternError::LooseRun(_) => ToolError::invalid_arguments(error.to_string()),
    }
}

/// `path` relative to the root for display.
pub(crate) fn shown(root: &WorkspaceRoot, path: &Path) -> String {
    root.relative(path)
}

/// A blocking job on tokio's blocking pool; a panic becomes `internal`.
pub(crate) async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(job).await.map_err(|e| {
        ToolError::new(
            ErrorKind::Internal,
            format!("the structural task failed: {e}"),
        )
    })?
}

/// Registers the structural tools on `builder`: `ast_grep`, and `ast_edit` and `resolve`
/// sharing one [`EditStore`] (the run's staged edits).
///
/// `ast_grep` keeps parsed trees in `trees`, for the run.
pub fn register(
    builder: &mut crate::registry::RegistryBuilder,
    parsers: Arc<Languages>,
    trees: Arc<cc_structural::TreeCache>,
    broken: Option<cc_workspace::BrokenSection>,
) {
    let root = builder.run().root.clone();
    let store = Arc::new(EditStore::default().follow(root.clone(), builder.notices().clone()));
    let tools: [Arc<dyn crate::Tool>; 3] = [
        Arc::new(AstGrepTool::with_trees(
            root.clone(),
            parsers.clone(),
            trees,
        )),
        Arc::new(AstEditTool::new(root.clone(), parsers, store.clone())),
        Arc::new(ResolveTool::new(root, store)),
    ];
    for tool in tools {
        // A broken `[structural]` section does not hide the tools: each call says what to
        // fix, as every family's does.
        match &broken {
            Some(broken) => builder.add_tool(Arc::new(crate::tool::BrokenConfig::new(
                tool,
                broken.clone(),
            ))),
            None => builder.add_tool(tool),
        }
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod edit_tests;
