//! The repo map (as Aider's): the workspace's most important definitions by PageRank,
//! personalised to the files in focus, as an outline that fits a token budget. The budget
//! counts the map's own text, so its lines are made here: [`header`], a file's path, one
//! [`line`] per definition, and a closing line.
//!
//! ```
//! use cc_graph::views::repo_map;
//! use cc_graph::{Graph, GraphConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("shapes.py"), "def area(side):\n    return side * side\n")?;
//! std::fs::write(dir.path().join("main.py"), "from shapes import area\n\nprint(area(2))\n")?;
//! let cache = tempfile::tempdir()?;
//! let config = GraphConfig { cache_dir: cache.path().into(), ..GraphConfig::default() };
//! let (graph, _stats) = Graph::open_with(dir.path(), config)?;
//!
//! let map = graph.repo_map(Vec::new(), 256)?;
//! assert_eq!(map.files[0].path, "shapes.py");
//! assert_eq!(repo_map::line(&map.files[0].definitions[0].symbol), "  L1: def area(side):");
//! assert!(map.tokens <= 256);
//! # Ok(()) }
//! ```

use std::collections::HashMap;

use crate::index::{Graph, GraphError};
use crate::model::DefKind;
use crate::query::{Ranked, Symbol};

/// How many ranked definitions are considered at most, whatever the budget.
const CONSIDERED: usize = 2000;
/// What the closing line ("N of M files and K definitions shown; about T tokens") costs.
const CLOSING_TOKENS: usize = 20;

/// Tokens as the budget counts them: characters / 4, rounded up (about what tokenizers give
/// for code).
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The map's first line.
pub fn header(budget: usize, focus: &[String]) -> String {
    format!(
        "repo map: most important definitions by PageRank{}, within {budget} tokens (tokens = characters / 4)",
        if focus.is_empty() {
            String::new()
        } else {
            format!(" around {}", focus.join(", "))
        }
    )
}

/// A definition's line: `  L321 Request.__init__: def __init__(` (the qualified name when it
/// says more than the name).
pub fn line(symbol: &Symbol) -> String {
    line_of(
        &symbol.name,
        &symbol.qualified_name,
        symbol.start_line,
        &symbol.signature,
    )
}

/// [`line`] from its parts.
pub fn line_of(name: &str, qualified_name: &str, start_line: u32, signature: &str) -> String {
    if qualified_name == name {
        format!("  L{start_line}: {signature}")
    } else {
        format!("  L{start_line} {qualified_name}: {signature}")
    }
}

/// A file on the map.
#[derive(Debug, Clone)]
pub struct MapFile {
    /// The file, relative to the root.
    pub path: String,
    /// Its definitions shown, in file order, with their rank.
    pub definitions: Vec<Ranked>,
}

/// The map: files in order of their best definition.
#[derive(Debug, Clone)]
pub struct RepoMap {
    /// The files shown.
    pub files: Vec<MapFile>,
    /// Indexed files.
    pub files_total: usize,
    /// The budget asked for.
    pub budget_tokens: usize,
    /// The tokens the map's text takes.
    pub tokens: usize,
    /// The files the ranking was centred on.
    pub focus: Vec<String>,
}

impl Graph {
    /// The repo map within `budget` tokens, its ranks personalised to `focus` (files relative
    /// to the root). Fields and variables are left out; a definition that does not fit is
    /// skipped and a smaller one after it may still fit.
    pub fn repo_map(&self, focus: Vec<String>, budget: usize) -> Result<RepoMap, GraphError> {
        let focus_refs: Vec<&str> = focus.iter().map(String::as_str).collect();
        let ranked = self.rank_ids(
            &focus_refs,
            budget.min(CONSIDERED),
            crate::resolve::DEFAULT_MIN_CONFIDENCE,
        )?;
        let mut unsigned = self.unsigned_symbols(ranked.iter().map(|(id, _)| *id))?;
        let mut used = tokens(&header(budget, &focus)) + CLOSING_TOKENS;
        // Files in order of their best definition; definitions in file order when shown.
        let mut order: Vec<String> = Vec::new();
        let mut chosen: HashMap<String, Vec<Ranked>> = HashMap::new();
        for (id, score) in ranked {
            let Some(symbol) = unsigned.remove(&id) else {
                continue;
            };
            if matches!(symbol.kind, DefKind::Field | DefKind::Variable) {
                continue;
            }
            let path_cost = if chosen.contains_key(&symbol.path) {
                0
            } else {
                tokens(&symbol.path) + 1
            };
            // Its line costs at least this with no signature: a definition that cannot fit
            // even so is not signed, and its file not read (the candidates spread over
            // hundreds of files, more than the lines kept).
            let least = tokens(&format!(
                "{}\n",
                line_of(&symbol.name, &symbol.qualified_name, symbol.start_line, "")
            ));
            if used + least + path_cost > budget {
                continue;
            }
            let symbol = self.sign(symbol);
            let cost = tokens(&format!("{}\n", line(&symbol))) + path_cost;
            if used + cost > budget {
                continue;
            }
            used += cost;
            let path = symbol.path.clone();
            if !chosen.contains_key(&path) {
                order.push(path.clone());
            }
            chosen
                .entry(path)
                .or_default()
                .push(Ranked { symbol, score });
        }
        let mut files = Vec::new();
        for path in order {
            let Some(mut definitions) = chosen.remove(&path) else {
                continue;
            };
            definitions.sort_by_key(|r| r.symbol.start_line);
            files.push(MapFile { path, definitions });
        }
        Ok(RepoMap {
            files,
            files_total: self.freshness().files,
            budget_tokens: budget,
            tokens: used,
            focus,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_characters_by_four_rounded_up() {
        assert_eq!(tokens("abcde"), 2);
        assert_eq!(
            line_of("__init__", "Request.__init__", 321, "def __init__("),
            "  L321 Request.__init__: def __init__("
        );
        assert_eq!(
            line_of("area", "area", 1, "def area():"),
            "  L1: def area():"
        );
    }
}
