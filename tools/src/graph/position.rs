//! `file` + `line` + `symbol` to a definition of the index, as in `lsp`: the symbol's first
//! whole-identifier occurrence on the line; a definition there, or a reference there whose
//! edge names one. Never a guess: an unresolved reference is an error that says why.

use cc_graph::{Graph, Symbol};
use cc_lsp_client::PositionEncoding;

use super::index_error;
use crate::error::{ErrorKind, ToolError};
use crate::root::WorkspaceRoot;

/// A file argument as the index names it (relative, `/`-separated).
pub(crate) fn relative_file(root: &WorkspaceRoot, file: &str) -> Result<String, ToolError> {
    let path = root.resolve_existing(file)?;
    if path.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "`{file}` is a folder; name a file"
        )));
    }
    Ok(root.relative(&path).replace('\\', "/"))
}

/// The definition `symbol` at `line` of `file` stands for.
pub(crate) fn target(
    graph: &Graph,
    root: &WorkspaceRoot,
    file: Option<&str>,
    line: Option<usize>,
    symbol: Option<&str>,
    min_confidence: f64,
) -> Result<Symbol, ToolError> {
    let (Some(file), Some(line), Some(symbol)) = (file, line, symbol) else {
        return Err(ToolError::invalid_arguments(
            "this action needs `file`, `line` (1-based) and `symbol` (the identifier as it \
             appears on that line); positions are never guessed",
        ));
    };
    let rel = relative_file(root, file)?;
    let bytes = root
        .workspace()
        .read(&root.path().join(&rel))
        .map_err(|e| root.io_error("read", &rel, &e))?;
    let text = String::from_utf8_lossy(&bytes);
    let located = cc_lsp_client::locate(&text, line, symbol, PositionEncoding::Utf8)
        .map_err(|e| ToolError::new(ErrorKind::SymbolNotFound, e.to_string()))?;
    let column = located.character + 1;
    let line32 = u32::try_from(line).unwrap_or(u32::MAX);
    // The last segment of a dotted name is what the index records (`self.get` → `get`).
    let name = symbol
        .rsplit(['.', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(symbol);
    let outline = graph.outline(&rel).map_err(index_error)?.value;
    if let Some(def) = outline
        .iter()
        .find(|d| d.line == line32 && d.name == name)
        .cloned()
    {
        return Ok(def);
    }
    let refs = graph
        .references_at(&rel, line32, column, name, min_confidence)
        .map_err(index_error)?;
    if let Some(target) = refs.iter().find_map(|r| r.target.clone()) {
        return Ok(target);
    }
    if let Some(r) = refs.first() {
        let why = r.unresolved.as_deref().unwrap_or("unknown");
        return Err(ToolError::new(
            ErrorKind::SymbolNotFound,
            format!(
                "`{symbol}` at {rel}:{line} is a use the graph did not resolve to a definition \
                 ({why}); name the definition itself (find it with action `symbols`)"
            ),
        )
        .with_detail("reason", why));
    }
    let defined_here: Vec<String> = outline
        .iter()
        .filter(|d| d.line == line32)
        .map(|d| d.name.clone())
        .collect();
    let mut message =
        format!("no definition or use of `{symbol}` at {rel}:{line} in the graph's index");
    if !defined_here.is_empty() {
        message.push_str(&format!(
            " (that line defines: {})",
            defined_here.join(", ")
        ));
    }
    message.push_str("; find definitions with action `symbols`");
    Err(ToolError::new(ErrorKind::SymbolNotFound, message))
}
