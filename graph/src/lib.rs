//! The code graph: what is here, and what depends on it.
//!
//! Definitions, references and imports are extracted from every file with tags-style
//! tree-sitter queries (one `.scm` file per language, [`extract`]), parsed with the same
//! grammars as structural search ([`cc_languages`]). Each reference is resolved to at most one
//! definition, recording how ([`Rung`]: `exact`, `import`, `package`, `name`) and with what
//! confidence; an ambiguous name makes no edge and is counted with its candidates
//! ([`resolve`]). The result is kept in an SQLite index under the user's cache folder and
//! updated incrementally ([`index`]): opening compares the tree with it, and writers call
//! [`Graph::update`] with the paths they changed. Queries ([`query`]) answer symbols,
//! outlines, callers, callees, impact and a PageRank, each with the index's [`Freshness`].
//!
//! ```
//! use cc_graph::{Graph, GraphConfig, DEFAULT_MIN_CONFIDENCE};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("shapes.py"), "class Square:\n    def area(self):\n        return self.side() ** 2\n\n    def side(self):\n        return 2\n")?;
//! std::fs::write(dir.path().join("main.py"), "from shapes import Square\n\ndef report():\n    s = Square()\n    print(s.area())\n")?;
//! let cache = tempfile::tempdir()?;
//! let config = GraphConfig { cache_dir: cache.path().into(), ..GraphConfig::default() };
//! let (graph, _stats) = Graph::open_with(dir.path(), config)?;
//!
//! let area = &graph.find("Square.area", None)?[0];
//! let callers = graph.callers(area.id, DEFAULT_MIN_CONFIDENCE)?;
//! let site = &callers.value.sites[0];
//! assert_eq!((site.path.as_str(), site.line), ("main.py", 5));
//! assert_eq!(site.rung.as_str(), "exact"); // `s` is constructed in the same function
//! assert_eq!(site.caller.as_ref().map(|c| c.qualified_name.as_str()), Some("report"));
//! assert_eq!(callers.freshness.files, 2);
//!
//! let impact = graph.impact(graph.find("Square.side", None)?[0].id, 3, DEFAULT_MIN_CONFIDENCE)?;
//! let names: Vec<&str> = impact.value.dependents.iter().map(|d| d.symbol.qualified_name.as_str()).collect();
//! assert_eq!(names, ["Square.area", "report"]);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod config;
pub mod extract;
pub mod imports;
pub mod index;
pub mod language;
pub mod literals;
pub mod lookup;
mod macro_bodies;
pub mod model;
mod packed;
mod pending;
pub mod precise;
pub mod project;
pub mod query;
mod ranks;
pub mod resolve;
pub mod table;
pub mod views;

/// The README's examples, compiled with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use config::GraphConfig;
pub use index::{Freshness, Graph, GraphError, ProgressFn, UpdateStats, SCHEMA_VERSION};
pub use model::{DefKind, Definition, FileFacts, Import, Local, Pos, RefKind, Reference};
pub use precise::{Indexer, PreciseImport, PreciseOptions, PrecisePlan, PreciseState};
pub use query::{Answer, Callee, Callers, Impact, Impacted, Ranked, Site, Stats, Symbol};
pub use resolve::{Rung, DEFAULT_MIN_CONFIDENCE};
