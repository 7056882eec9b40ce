//! A symbol search as an agent reads it: the definitions whose name matches (exact, then
//! prefix, then substring), kept to a kind and a language, and within each match tier ordered
//! by PageRank, so the definition the project leans on comes first.
//!
//! ```
//! use cc_graph::views::search::Filter;
//! use cc_graph::{DefKind, Graph, GraphConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(
//!     dir.path().join("shapes.py"),
//!     "class Area:\n    pass\n\ndef area():\n    return Area()\n\ndef area_of():\n    return area()\n",
//! )?;
//! let cache = tempfile::tempdir()?;
//! let config = GraphConfig { cache_dir: cache.path().into(), ..GraphConfig::default() };
//! let (graph, _stats) = Graph::open_with(dir.path(), config)?;
//!
//! let functions = Filter { kind: Some(DefKind::Function), language: None };
//! let found = graph.search("area", &functions, 10)?;
//! let names: Vec<&str> = found.hits.iter().map(|h| h.symbol.name.as_str()).collect();
//! assert_eq!(names, ["area", "area_of"]); // the exact match first; the class is left out
//! assert_eq!(found.total, 2);
//! assert_eq!(found.files_with_syntax_errors, None);
//! # Ok(()) }
//! ```

use crate::index::{Graph, GraphError};
use crate::model::DefKind;
use crate::query::Symbol;
use crate::table::DefId;

/// How many name matches are ranked before the filters apply.
const CANDIDATES: usize = 5000;

/// What the hits are kept to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    /// Only definitions of this kind.
    pub kind: Option<DefKind>,
    /// Only definitions in files of this language (its name in [`cc_languages`]).
    pub language: Option<&'a str>,
}

/// A definition found, with its PageRank.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The definition.
    pub symbol: Symbol,
    /// Its share of the whole PageRank.
    pub rank: f64,
}

/// The hits of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The first `limit` hits, best first.
    pub hits: Vec<Hit>,
    /// How many matched in all (after the filters).
    pub total: usize,
    /// When nothing matched, how many indexed files have syntax errors: what is written where
    /// a file did not parse is not indexed, so "nothing" may miss it.
    pub files_with_syntax_errors: Option<usize>,
}

/// The language of a path, by the parsers' table.
pub fn language_of(path: &str) -> Option<&'static str> {
    cc_languages::for_path(std::path::Path::new(path)).map(|l| l.name)
}

impl Graph {
    /// The definitions whose name matches `query` (case-insensitive) that pass `filter`: the
    /// first `limit` (at least one), by match tier, then PageRank, then place.
    pub fn search(
        &self,
        query: &str,
        filter: &Filter<'_>,
        limit: usize,
    ) -> Result<Found, GraphError> {
        let found = self.symbols(query, CANDIDATES)?.value;
        // The kept ranks of the hits only (a kernel-size tree has millions of definitions).
        let ids: Vec<DefId> = found.iter().map(|r| r.symbol.id).collect();
        let ranks = self.rank_of(&ids)?;
        let mut hits: Vec<(f64, Hit)> = found
            .into_iter()
            .filter(|r| filter.kind.is_none_or(|k| r.symbol.kind == k))
            .filter(|r| {
                filter
                    .language
                    .is_none_or(|l| language_of(&r.symbol.path) == Some(l))
            })
            .map(|r| {
                let tier = (r.score / 100.0).floor();
                let rank = ranks.get(&r.symbol.id).copied().unwrap_or(0.0);
                (
                    tier,
                    Hit {
                        symbol: r.symbol,
                        rank,
                    },
                )
            })
            .collect();
        hits.sort_by(|(a_tier, a), (b_tier, b)| {
            b_tier
                .total_cmp(a_tier)
                .then_with(|| b.rank.total_cmp(&a.rank))
                .then_with(|| a.symbol.path.cmp(&b.symbol.path))
                .then_with(|| a.symbol.line.cmp(&b.symbol.line))
        });
        let total = hits.len();
        hits.truncate(limit.max(1));
        Ok(Found {
            hits: hits.into_iter().map(|(_, hit)| hit).collect(),
            total,
            files_with_syntax_errors: self.unparsed_when_empty(total)?,
        })
    }

    /// When an answer found nothing (`found` is 0), how many indexed files have syntax errors:
    /// what is written where a file did not parse is not indexed, so "nothing" may miss it.
    /// `None` when it found something.
    pub fn unparsed_when_empty(&self, found: usize) -> Result<Option<usize>, GraphError> {
        if found > 0 {
            return Ok(None);
        }
        self.files_with_syntax_errors().map(Some)
    }
}
