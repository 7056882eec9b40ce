//! Typed queries over the index. Every answer carries the index's [`Freshness`].

use std::collections::{HashMap, HashSet};

use rusqlite::params;
use serde::Serialize;

use crate::index::{
    edges_sql, member_edges_sql, plain_edges, ref_kind_code, rung_of, Freshness, Graph, GraphError,
    Result, REF_RECEIVER,
};
use crate::model::{DefKind, RefKind};
use crate::ranks;
use crate::resolve::Rung;
use crate::table::{DefId, FileId};

/// A definition as queries report it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Symbol {
    /// Its id in this index (valid until the file it is in changes).
    pub id: DefId,
    /// The name as declared.
    pub name: String,
    /// What it is.
    pub kind: DefKind,
    /// Its name after those of the enclosing definitions
    /// ([`crate::model::Definition::qualified_name`]).
    pub qualified_name: String,
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// Where its name is (1-based; the column counts bytes).
    pub line: u32,
    /// The column of its name.
    pub column: u32,
    /// The definition's span.
    pub start_line: u32,
    /// The span's last line (inclusive).
    pub end_line: u32,
    /// Its first line from where it starts, trimmed (at most 200 characters), read from the
    /// file when answered.
    pub signature: String,
    /// The qualified name of the enclosing definition.
    pub parent: Option<String>,
}

/// An answer and how current the index was when it was given.
#[derive(Debug, Clone, Serialize)]
pub struct Answer<T> {
    /// The answer itself.
    pub value: T,
    /// How current the index was.
    pub freshness: Freshness,
}

/// A place that uses a definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Site {
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// Where the name used is (1-based; the column counts bytes).
    pub line: u32,
    /// The column of the name used.
    pub column: u32,
    /// A call or a type use.
    pub kind: RefKind,
    /// The receiver as written (`self`, `s.session`).
    pub receiver: Option<String>,
    /// The definition the site is in (`None` at a file's top level, or when it was not read:
    /// see [`Graph::callers_signing`]).
    pub caller: Option<Symbol>,
    /// The id of the definition the site is in (`None` at a file's top level).
    pub caller_id: Option<DefId>,
    /// How the use was resolved to the definition.
    pub rung: Rung,
    /// The rung's confidence ([`Rung::confidence`]).
    pub confidence: f64,
}

/// The callers of one definition.
#[derive(Debug, Clone, Serialize)]
pub struct Callers {
    /// The definition asked about.
    pub target: Symbol,
    /// Its call sites at or above the floor, by path, line and column.
    pub sites: Vec<Site>,
    /// Call sites below the confidence floor (the `name` rung by default), not listed.
    pub below_floor: usize,
}

/// What one definition calls.
#[derive(Debug, Clone, Serialize)]
pub struct Callee {
    /// Where the name called is (1-based; the column counts bytes).
    pub line: u32,
    /// The column of the name called.
    pub column: u32,
    /// The name called (the callee's last segment).
    pub name: String,
    /// The receiver or qualifier as written.
    pub receiver: Option<String>,
    /// The definition called, when resolved at or above the floor.
    pub target: Option<Symbol>,
    /// How the call was resolved, whatever the floor (`precise` also where the precise tier
    /// says it names no workspace definition).
    pub rung: Option<Rung>,
    /// That rung's confidence.
    pub confidence: Option<f64>,
    /// The definitions that may run in place of `target` (rung `dispatch`: a Go interface's
    /// implementations, a C function's build alternatives), when the floor admits them.
    pub dispatch: Vec<Symbol>,
    /// Why there is no target: `external`, `ambiguous (N candidates)`, `unknown`,
    /// `below the confidence floor`.
    pub unresolved: Option<String>,
}

/// A definition that depends on the one asked about, and how far away it is.
#[derive(Debug, Clone, Serialize)]
pub struct Impacted {
    /// The dependent definition.
    pub symbol: Symbol,
    /// 1: uses it directly.
    pub depth: usize,
    /// The weakest confidence along the path that reached it.
    pub confidence: f64,
}

/// Impact of changing a definition.
#[derive(Debug, Clone, Serialize)]
pub struct Impact {
    /// The definition asked about.
    pub target: Symbol,
    /// What depends on it, nearest first, then by path and line.
    pub dependents: Vec<Impacted>,
    /// Files with top-level code that uses a definition of the set (module code, no
    /// enclosing definition): path and line.
    pub top_level_uses: Vec<(String, u32)>,
    /// Whether the walk stopped at the depth limit with more to find.
    pub truncated: bool,
}

/// Files whose lines are kept for signatures at most, and their bytes at most (a map of a
/// kernel-size tree signs thousands of definitions over hundreds of files).
const LINE_CACHE_FILES: usize = 512;
const LINE_CACHE_BYTES: usize = 64 << 20;

/// A file's text and where each of its lines starts: one allocation per file, not one
/// per line. Lines as [`str::lines`] cuts them.
#[derive(Debug, Default)]
pub(crate) struct FileLines {
    text: String,
    starts: Vec<usize>,
}

impl FileLines {
    fn new(bytes: Vec<u8>) -> FileLines {
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let mut starts = Vec::new();
        if !text.is_empty() {
            starts.push(0);
            starts.extend(
                memchr::memchr_iter(b'\n', text.as_bytes())
                    .map(|i| i + 1)
                    .filter(|i| *i < text.len()),
            );
        }
        FileLines { text, starts }
    }

    /// Line `index` (0-based) without its line break.
    pub(crate) fn get(&self, index: usize) -> Option<&str> {
        let start = *self.starts.get(index)?;
        let end = self
            .starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len());
        let line = self.text.get(start..end)?;
        let line = line.strip_suffix('\n').unwrap_or(line);
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

/// A ranked definition.
#[derive(Debug, Clone, Serialize)]
pub struct Ranked {
    /// The definition.
    pub symbol: Symbol,
    /// Higher first: the match score for [`Graph::symbols`], the definition's share of the
    /// whole PageRank for [`Graph::rank`].
    pub score: f64,
}

/// Counts over the whole index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Files indexed.
    pub files: usize,
    /// Files with at least one syntax error (partly understood).
    pub files_with_syntax_errors: usize,
    /// Definitions.
    pub definitions: usize,
    /// References: calls and type uses.
    pub references: usize,
    /// Edges per rung (`precise`: references a compiler-grade indexer resolved, in place of
    /// their own edges).
    pub precise: usize,
    /// Edges of the `exact` rung.
    pub exact: usize,
    /// Edges of the `import` rung.
    pub import: usize,
    /// Edges of the `package` rung.
    pub package: usize,
    /// Edges of the `name` rung.
    pub name: usize,
    /// Dispatch edges (a reference may have several, beside its own edge).
    pub dispatch: usize,
    /// References with no edge: several candidates.
    pub ambiguous: usize,
    /// References with no edge: no definition of that name in the workspace.
    pub unknown: usize,
    /// References through something outside the workspace.
    pub external: usize,
    /// The index's size on disk, its write-ahead log included.
    pub index_bytes: u64,
}

/// At most this many definitions are ranked by one `symbols` lookup.
const MAX_CANDIDATES: usize = 5000;

const SYMBOL_COLUMNS: &str =
    "d.id, d.name, d.kind, d.qname, f.path, d.name_line, d.name_col, d.line,
  d.end_line, d.col, (SELECT p.qname FROM defs p WHERE p.id = d.parent_id)";

/// A condition on an id column: that it is in the JSON list bound as `?1` ([`id_list`]).
/// One query for a set of ids, where a query per id costs tens of microseconds each.
const IN_ID_LIST: &str = "IN (SELECT value FROM json_each(?1))";

/// Ids as the JSON list [`IN_ID_LIST`] reads.
fn id_list<Id: std::fmt::Display>(ids: impl IntoIterator<Item = Id>) -> String {
    use std::fmt::Write;
    let mut out = String::from("[");
    for (i, id) in ids.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{id}");
    }
    out.push(']');
    out
}

/// What [`Graph::impact`]'s walk reached: each dependent's depth and confidence, the places
/// of top-level uses, and whether it stopped at the depth limit with more to find.
#[derive(Default)]
struct Reach {
    best: HashMap<DefId, (usize, f64)>,
    top_level: HashSet<(FileId, u32)>,
    truncated: bool,
}

fn symbol_row(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Symbol> {
    Ok(Symbol {
        id: r.get(at)?,
        name: r.get(at + 1)?,
        kind: DefKind::parse(&r.get::<_, String>(at + 2)?).unwrap_or(DefKind::Variable),
        qualified_name: r.get(at + 3)?,
        path: r.get(at + 4)?,
        line: r.get(at + 5)?,
        column: r.get(at + 6)?,
        start_line: r.get(at + 7)?,
        end_line: r.get(at + 8)?,
        // The column, until `Graph::sign` reads the line from the file.
        signature: r.get::<_, u32>(at + 9)?.to_string(),
        parent: r.get(at + 10)?,
    })
}

/// How much a match tier (exact, prefix, substring) weighs in a symbol's score.
const TIER_WEIGHT: f64 = 100.0;

fn kind_weight(kind: DefKind) -> f64 {
    match kind {
        DefKind::Class | DefKind::Struct | DefKind::Interface | DefKind::Trait | DefKind::Enum => {
            3.0
        }
        DefKind::Function | DefKind::Method | DefKind::TypeAlias | DefKind::Macro => 2.0,
        DefKind::Module | DefKind::Constant => 1.5,
        DefKind::Variable | DefKind::Field => 1.0,
    }
}

impl Graph {
    fn answer<T>(&self, value: T) -> Answer<T> {
        Answer {
            value,
            freshness: self.freshness(),
        }
    }

    pub(crate) fn q_err(&self) -> impl Fn(rusqlite::Error) -> GraphError + '_ {
        move |source| GraphError::Sqlite {
            path: self.db_path.clone(),
            source,
        }
    }

    /// A definition by id.
    pub fn symbol(&self, id: DefId) -> Result<Option<Symbol>> {
        Ok(self
            .unsigned_symbols([id])?
            .remove(&id)
            .map(|s| self.sign(s)))
    }

    /// Fills in a symbol's signature: its first line as the file has it now (from the
    /// definition's column, trimmed, at most 200 characters).
    pub(crate) fn sign(&self, mut symbol: Symbol) -> Symbol {
        let column: usize = symbol.signature.parse().unwrap_or(1);
        let lines = self.file_lines(&symbol.path);
        let line = lines
            .get(symbol.start_line.saturating_sub(1) as usize)
            .unwrap_or("");
        let text = line.get(column.saturating_sub(1)..).unwrap_or(line).trim();
        symbol.signature = text.chars().take(200).collect();
        symbol
    }

    /// `symbol` signed ([`Graph::sign`]) when `wanted`, else with an empty signature (an
    /// answer that lists a few of thousands reads only their files).
    fn sign_if(&self, symbol: Symbol, wanted: bool) -> Symbol {
        if wanted {
            self.sign(symbol)
        } else {
            Symbol {
                signature: String::new(),
                ..symbol
            }
        }
    }

    /// TypeScript: the implementation an overload signature (a declaration without a body,
    /// `f(a: A): R;`) belongs to: the next definition of the same qualified name in the file
    /// that has a body. Calls resolve to the implementation, which is what `callers` of a
    /// signature means.
    fn overload_body(&self, symbol: &Symbol) -> Result<Option<DefId>> {
        let typescript = [".ts", ".tsx", ".mts", ".cts"]
            .iter()
            .any(|ext| symbol.path.ends_with(ext));
        if !typescript || !symbol.kind.is_callable() || !self.bodiless(symbol) {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS} FROM defs d JOIN files f ON f.id = d.file_id
                 WHERE f.path = ?1 AND d.qname = ?2 AND d.line > ?3 ORDER BY d.line"
            ))
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map(
                params![symbol.path, symbol.qualified_name, symbol.start_line],
                |r| symbol_row(r, 0),
            )
            .map_err(self.q_err())?;
        for row in rows {
            let next = row.map_err(self.q_err())?;
            if !self.bodiless(&next) {
                return Ok(Some(next.id));
            }
        }
        Ok(None)
    }

    /// Whether a definition's last line ends its declaration with `;` (no body).
    fn bodiless(&self, symbol: &Symbol) -> bool {
        let lines = self.file_lines(&symbol.path);
        lines
            .get(symbol.end_line.saturating_sub(1) as usize)
            .is_some_and(|line| line.trim_end().ends_with(';'))
    }

    /// The lines of a file as it is now (recently read files are kept, up to a budget).
    fn file_lines(&self, path: &str) -> std::sync::Arc<FileLines> {
        let mut cache = self.lines.borrow_mut();
        if let Some(lines) = cache.get(path) {
            return lines.clone();
        }
        let kept: usize = cache.values().map(|l| l.text.len()).sum();
        if cache.len() >= LINE_CACHE_FILES || kept > LINE_CACHE_BYTES {
            cache.clear();
        }
        let text = std::fs::read(self.root.join(path)).unwrap_or_default();
        let lines = std::sync::Arc::new(FileLines::new(text));
        cache.insert(path.to_owned(), lines.clone());
        lines
    }

    /// Definitions whose name or qualified name is `name` exactly (`Session.request`,
    /// `request`), optionally only in `path`.
    pub fn find(&self, name: &str, path: Option<&str>) -> Result<Vec<Symbol>> {
        let last = name
            .rsplit(['.', ':'])
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or(name);
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS} FROM defs d JOIN files f ON f.id = d.file_id
                 WHERE d.name = ?1 AND (d.qname = ?2 OR d.name = ?2 OR d.qname LIKE '%' || ?2)
                   AND (?3 IS NULL OR f.path = ?3)
                 ORDER BY f.path, d.line"
            ))
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map(params![last, name.replace("::", "."), path], |r| {
                symbol_row(r, 0)
            })
            .map_err(self.q_err())?;
        let mut out: Vec<Symbol> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(self.q_err())?;
        // `::`-separated names are stored as written.
        if out.is_empty() && name.contains("::") {
            let rows = stmt
                .query_map(params![last, name, path], |r| symbol_row(r, 0))
                .map_err(self.q_err())?;
            out = rows
                .collect::<rusqlite::Result<_>>()
                .map_err(self.q_err())?;
        }
        Ok(out)
    }

    /// Definitions matching `query` (case-insensitive), best first: exact names, then
    /// prefixes, then substrings; within each, types before functions before variables, and
    /// the most used first.
    pub fn symbols(&self, query: &str, limit: usize) -> Result<Answer<Vec<Ranked>>> {
        let q = query.trim().to_lowercase();
        if q.is_empty() {
            return Ok(self.answer(Vec::new()));
        }
        // The names that contain the query, best first (exact, then prefix, then
        // substring; shorter first within each), looked up by the name index until
        // `MAX_CANDIDATES` definitions are in hand.
        let names = self.name_list()?;
        let mut matched = names.containing(&q);
        matched.sort_by(|a, b| (a.0, a.1.len(), a.1).cmp(&(b.0, b.1.len(), b.1)));
        // An update may have appended a name the list had.
        matched.dedup();
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS},
                   (SELECT COUNT(*) FROM refs r WHERE r.target_id = d.id)
                   + (SELECT COUNT(*) FROM precise p WHERE p.target_id = d.id)
                   + (SELECT COUNT(*) FROM fanout x WHERE x.target_id = d.id)
                   + (SELECT COUNT(*) FROM precise_fanout y WHERE y.target_id = d.id) AS uses
                 FROM defs d JOIN files f ON f.id = d.file_id
                 WHERE d.name = ?1"
            ))
            .map_err(self.q_err())?;
        let mut rows = Vec::new();
        let mut tier_of_rows = 0;
        for (tier, name) in matched {
            // The tier outweighs every other part of the score (see below): once the better
            // tiers hold `limit` definitions, none of a worse tier can make the answer.
            if rows.len() >= MAX_CANDIDATES || (tier > tier_of_rows && rows.len() >= limit) {
                break;
            }
            tier_of_rows = tier;
            let found = stmt
                .query_map([name], |r| Ok((symbol_row(r, 0)?, r.get::<_, i64>(11)?)))
                .map_err(self.q_err())?;
            for row in found {
                rows.push(row);
            }
        }
        let mut ranked: Vec<Ranked> = Vec::new();
        for row in rows {
            let (symbol, uses) = row.map_err(self.q_err())?;
            let name = symbol.name.to_lowercase();
            let tier = if name == q {
                3.0
            } else if name.starts_with(&q) {
                2.0
            } else if name.contains(&q) {
                1.0
            } else {
                continue;
            };
            // `TIER_WEIGHT` exceeds the rest (kinds weigh at most 30, ln(1 + uses) far less
            // than 70), so a better tier always ranks first.
            let score =
                tier * TIER_WEIGHT + kind_weight(symbol.kind) * 10.0 + (1.0 + uses as f64).ln();
            ranked.push(Ranked { symbol, score });
        }
        ranked.sort_by(|a, b| {
            b.score
                .partial_cmp(&a.score)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| a.symbol.path.cmp(&b.symbol.path))
                .then_with(|| a.symbol.line.cmp(&b.symbol.line))
        });
        ranked.truncate(limit);
        let ranked = ranked
            .into_iter()
            .map(|r| Ranked {
                symbol: self.sign(r.symbol),
                score: r.score,
            })
            .collect();
        Ok(self.answer(ranked))
    }

    /// Every distinct definition name and its lower-case form (cached until the index
    /// changes).
    fn name_list(&self) -> Result<crate::index::NameList> {
        let version = crate::index::data_version(&self.conn).map_err(self.q_err())?;
        if let Some(names) = self.names.borrow().as_ref().filter(|n| n.at == version) {
            return Ok(names.clone());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT name FROM defs")
            .map_err(self.q_err())?;
        let mut names = Names::default();
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(self.q_err())?;
        for name in rows {
            names.push(&name.map_err(self.q_err())?);
        }
        names.at = version;
        names.read = names.lower_starts.len();
        let names = std::sync::Arc::new(names);
        *self.names.borrow_mut() = Some(names.clone());
        Ok(names)
    }

    /// The definitions of one file in order (outer before inner; `parent` gives nesting).
    pub fn outline(&self, path: &str) -> Result<Answer<Vec<Symbol>>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS} FROM defs d JOIN files f ON f.id = d.file_id
                 WHERE f.path = ?1 ORDER BY d.line, d.col"
            ))
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map([path], |r| symbol_row(r, 0))
            .map_err(self.q_err())?;
        let v: Vec<Symbol> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(self.q_err())?;
        Ok(self.answer(v.into_iter().map(|s| self.sign(s)).collect()))
    }

    fn target(&self, id: DefId) -> Result<Symbol> {
        self.symbol(id)?
            .ok_or_else(|| GraphError::UnknownSymbol(id.to_string()))
    }

    /// Call sites of `target` with an edge at or above `min_confidence`
    /// ([`crate::DEFAULT_MIN_CONFIDENCE`] leaves the `name` rung out).
    pub fn callers(&self, target: DefId, min_confidence: f64) -> Result<Answer<Callers>> {
        self.callers_signing(target, min_confidence, usize::MAX)
    }

    /// [`Graph::callers`] with only the callers of the first `signed` sites read and signed,
    /// the others' by id only ([`Site::caller_id`]): `kfree` has 37,000 call sites in 20,000
    /// files on the Linux tree, and a caller that lists fifty need not read the others'
    /// rows or files.
    pub fn callers_signing(
        &self,
        target: DefId,
        min_confidence: f64,
        signed: usize,
    ) -> Result<Answer<Callers>> {
        let target_symbol = self.target(target)?;
        let mut sites = self.sites(target, RefKind::Call)?;
        if let Some(body) = self.overload_body(&target_symbol)? {
            sites.extend(self.sites(body, RefKind::Call)?);
            sites.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        }
        let (mut kept, below): (Vec<Site>, Vec<Site>) = sites
            .into_iter()
            .partition(|s| s.confidence >= min_confidence);
        let listed = kept.len().min(signed);
        let listed = &mut kept[..listed];
        // The listed sites' callers in one query.
        let callers = self.unsigned_symbols(listed.iter().filter_map(|s| s.caller_id))?;
        for site in listed {
            site.caller = site
                .caller_id
                .and_then(|id| callers.get(&id).cloned())
                .map(|caller| self.sign(caller));
        }
        Ok(self.answer(Callers {
            target: target_symbol,
            sites: kept,
            below_floor: below.len(),
        }))
    }

    /// The uses of `target` of one kind, whatever the confidence; their callers by id only.
    fn sites(&self, target: DefId, kind: RefKind) -> Result<Vec<Site>> {
        let columns = format!("f.path, r.line, r.col, {REF_RECEIVER}, r.enclosing_id");
        // Without the precise tier and fills, the edges are the references' own and their
        // fan-out: each read where it is, kind filtered there (a type used 126,000 times
        // has a handful of calls), without joining the reference's row a second time.
        let sql = if plain_edges(&self.conn).map_err(self.q_err())? {
            format!(
                "SELECT {columns}, r.rung FROM refs r JOIN files f ON f.id = r.file_id
                  WHERE r.target_id = ?1 AND r.kind = ?2
                 UNION ALL
                 SELECT {columns}, 4 FROM fanout x
                   JOIN refs r ON r.file_id = x.file_id AND r.ord = x.ord
                   JOIN files f ON f.id = r.file_id
                  WHERE x.target_id = ?1 AND r.kind = ?2
                 ORDER BY 1, 2, 3"
            )
        } else {
            format!(
                "SELECT {columns}, e.rung
                     FROM ({}) e JOIN refs r ON r.file_id = e.file_id AND r.ord = e.ord
                     JOIN files f ON f.id = r.file_id
                    WHERE r.kind = ?2
                     ORDER BY 1, 2, 3",
                edges_sql("= ?1")
            )
        };
        let mut stmt = self.conn.prepare_cached(&sql).map_err(self.q_err())?;
        let rows = stmt
            .query_map(params![target, ref_kind_code(kind)], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, u32>(1)?,
                    r.get::<_, u32>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<DefId>>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })
            .map_err(self.q_err())?;
        let found = rows
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.q_err())?;
        Ok(found
            .into_iter()
            .map(|(path, line, column, receiver, enclosing, rung)| {
                let rung = rung_of(rung);
                Site {
                    path,
                    line,
                    column,
                    kind,
                    receiver,
                    caller: None,
                    caller_id: enclosing,
                    rung,
                    confidence: rung.confidence(),
                }
            })
            .collect())
    }

    /// The definitions of `ids` still in the index, unsigned, by id: one query.
    pub(crate) fn unsigned_symbols(
        &self,
        ids: impl IntoIterator<Item = DefId>,
    ) -> Result<HashMap<DefId, Symbol>> {
        let ids: HashSet<DefId> = ids.into_iter().collect();
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS} FROM defs d JOIN files f ON f.id = d.file_id
                  WHERE d.id {IN_ID_LIST}"
            ))
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map([id_list(ids)], |r| symbol_row(r, 0))
            .map_err(self.q_err())?;
        let mut out = HashMap::new();
        for row in rows {
            let symbol = row.map_err(self.q_err())?;
            out.insert(symbol.id, symbol);
        }
        Ok(out)
    }

    /// The calls made directly inside `caller` (not in definitions nested in it), resolved or
    /// not.
    pub fn callees(&self, caller: DefId, min_confidence: f64) -> Result<Answer<Vec<Callee>>> {
        self.target(caller)?;
        let out = self.refs_as_callees(
            "WHERE r.file_id = (SELECT file_id FROM defs WHERE id = ?1)
               AND r.enclosing_id = ?1 AND r.kind = 0
             ORDER BY r.line, r.col",
            [caller],
            min_confidence,
        )?;
        Ok(self.answer(out))
    }

    /// The definitions that depend on `target`, transitively, up to `max_depth` steps, over
    /// edges (calls and type uses) at or above `min_confidence`.
    pub fn impact(
        &self,
        target: DefId,
        max_depth: usize,
        min_confidence: f64,
    ) -> Result<Answer<Impact>> {
        self.impact_signing(target, max_depth, min_confidence, usize::MAX)
    }

    /// [`Graph::impact`] with only the first `signed` dependents (in the answer's order)
    /// given their signature, the others an empty one: a hub of a kernel-size tree has a
    /// hundred thousand dependents in fifteen thousand files, and a caller that lists a
    /// hundred of them need not read the others' files.
    pub fn impact_signing(
        &self,
        target: DefId,
        max_depth: usize,
        min_confidence: f64,
        signed: usize,
    ) -> Result<Answer<Impact>> {
        let target_symbol = self.target(target)?;
        let reach = self.dependents_within(target, max_depth, min_confidence)?;
        let dependents = self.ordered_dependents(reach.best, signed)?;
        let top_level_uses = self.places(reach.top_level)?;
        Ok(self.answer(Impact {
            target: target_symbol,
            dependents,
            top_level_uses,
            truncated: reach.truncated,
        }))
    }

    /// [`Graph::impact`]'s walk, a level at a time with one query per level (a hub of a
    /// kernel-size tree has a hundred thousand dependents within three steps; a query per
    /// dependent took seconds). A dependent sits at its least depth and is expanded with the
    /// best confidence the level above gives it; the confidence it reports is the best of
    /// every edge to it the walk saw.
    fn dependents_within(
        &self,
        target: DefId,
        max_depth: usize,
        min_confidence: f64,
    ) -> Result<Reach> {
        // Without precise rows or fills, each reference row is read once (through the
        // join of the general form, twice).
        let sql = if plain_edges(&self.conn).map_err(self.q_err())? {
            format!(
                "SELECT r.target_id, r.enclosing_id, r.rung, r.file_id, r.line FROM refs r
                  WHERE r.target_id {IN_ID_LIST}
                 UNION ALL
                 SELECT x.target_id, r.enclosing_id, 4, r.file_id, r.line FROM fanout x
                   JOIN refs r ON r.file_id = x.file_id AND r.ord = x.ord
                  WHERE x.target_id {IN_ID_LIST}"
            )
        } else {
            format!(
                "SELECT e.target_id, r.enclosing_id, e.rung, r.file_id, r.line
                     FROM ({}) e JOIN refs r ON r.file_id = e.file_id AND r.ord = e.ord",
                edges_sql(IN_ID_LIST)
            )
        };
        let mut stmt = self.conn.prepare_cached(&sql).map_err(self.q_err())?;
        let mut reach = Reach::default();
        let mut visited: HashSet<DefId> = HashSet::from([target]);
        let mut level: HashMap<DefId, f64> = HashMap::from([(target, 1.0)]);
        let mut depth = 0;
        while !level.is_empty() {
            let mut next = Vec::new();
            let rows = stmt
                .query_map([id_list(level.keys().copied())], |r| {
                    Ok((
                        r.get::<_, DefId>(0)?,
                        r.get::<_, Option<DefId>>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, FileId>(3)?,
                        r.get::<_, u32>(4)?,
                    ))
                })
                .map_err(self.q_err())?;
            for row in rows {
                let (used, enclosing, rung, file, line) = row.map_err(self.q_err())?;
                let from = level.get(&used).copied().unwrap_or(0.0);
                let c = from.min(rung_of(rung).confidence());
                if c < min_confidence {
                    continue;
                }
                let Some(user) = enclosing else {
                    reach.top_level.insert((file, line));
                    continue;
                };
                if depth + 1 > max_depth {
                    reach.truncated = true;
                    continue;
                }
                let entry = reach.best.entry(user).or_insert((depth + 1, c));
                if c > entry.1 {
                    entry.1 = c;
                }
                if visited.insert(user) {
                    next.push(user);
                }
            }
            depth += 1;
            level = next
                .into_iter()
                .map(|id| (id, reach.best.get(&id).map_or(0.0, |best| best.1)))
                .collect();
        }
        reach.best.remove(&target);
        Ok(reach)
    }

    /// Places given as file ids and lines, as paths and lines, sorted.
    fn places(&self, places: HashSet<(FileId, u32)>) -> Result<Vec<(String, u32)>> {
        let mut paths: HashMap<FileId, String> = HashMap::new();
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT id, path FROM files WHERE id {IN_ID_LIST}"))
            .map_err(self.q_err())?;
        let files: HashSet<FileId> = places.iter().map(|(file, _)| *file).collect();
        let rows = stmt
            .query_map([id_list(files)], |r| {
                Ok((r.get::<_, FileId>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(self.q_err())?;
        for row in rows {
            let (id, path) = row.map_err(self.q_err())?;
            paths.insert(id, path);
        }
        let mut out: Vec<(String, u32)> = places
            .into_iter()
            .filter_map(|(file, line)| Some((paths.get(&file)?.clone(), line)))
            .collect();
        out.sort();
        Ok(out)
    }

    /// [`Graph::impact`]'s dependents by depth, then place; the first `signed` signed.
    fn ordered_dependents(
        &self,
        best: HashMap<DefId, (usize, f64)>,
        signed: usize,
    ) -> Result<Vec<Impacted>> {
        let mut dependents = Vec::new();
        for (id, symbol) in self.unsigned_symbols(best.keys().copied())? {
            if let Some((depth, confidence)) = best.get(&id).copied() {
                dependents.push(Impacted {
                    symbol,
                    depth,
                    confidence,
                });
            }
        }
        dependents.sort_by(|a, b| {
            a.depth
                .cmp(&b.depth)
                .then_with(|| a.symbol.path.cmp(&b.symbol.path))
                .then_with(|| a.symbol.line.cmp(&b.symbol.line))
                .then_with(|| a.symbol.id.cmp(&b.symbol.id))
        });
        // In order, so that each file is read once while its dependents are signed.
        Ok(dependents
            .into_iter()
            .enumerate()
            .map(|(i, dependent)| Impacted {
                symbol: self.sign_if(dependent.symbol, i < signed),
                ..dependent
            })
            .collect())
    }

    /// PageRank of definitions over the reference graph (an edge from the definition a use is
    /// in to the definition used, at or above `min_confidence`); with `focus` files, the
    /// random walk restarts at their definitions, so what they depend on ranks first.
    ///
    /// At the default floor, the whole tree's ranks are the ones the index keeps (computed
    /// by a build, kept current by updates: [`crate::ranks`]), and a focused walk visits only
    /// what the focus reaches (what it does not reach ranks 0 and is not listed).
    pub fn rank(
        &self,
        focus: &[&str],
        limit: usize,
        min_confidence: f64,
    ) -> Result<Answer<Vec<Ranked>>> {
        let ranked = self.rank_ids(focus, limit, min_confidence)?;
        let mut found = self.unsigned_symbols(ranked.iter().map(|(id, _)| *id))?;
        let mut symbols: Vec<Option<Symbol>> =
            ranked.iter().map(|(id, _)| found.remove(id)).collect();
        // Signed a file at a time: the ranks of a large tree spread over hundreds of files,
        // more than are kept.
        let mut order: Vec<usize> = (0..symbols.len()).collect();
        order.sort_by(|a, b| {
            let path = |i: &usize| symbols[*i].as_ref().map(|s| s.path.as_str());
            path(a).cmp(&path(b))
        });
        for i in order {
            if let Some(symbol) = symbols[i].take() {
                symbols[i] = Some(self.sign(symbol));
            }
        }
        let out = ranked
            .into_iter()
            .zip(symbols)
            .filter_map(|((_, score), symbol)| {
                Some(Ranked {
                    symbol: symbol?,
                    score,
                })
            })
            .collect();
        Ok(self.answer(out))
    }

    /// Whether the precise tier stored anything (its rows change which edges count).
    pub(crate) fn has_precise_rows(&self) -> Result<bool> {
        ranks::precise_rows(&self.conn).map_err(self.q_err())
    }

    /// [`Graph::rank`] as ids and scores, best first. The whole tree's ranks at the default
    /// floor are the kept ones ([`crate::ranks`]); others are computed.
    pub(crate) fn rank_ids(
        &self,
        focus: &[&str],
        limit: usize,
        min_confidence: f64,
    ) -> Result<Vec<(DefId, f64)>> {
        if min_confidence != crate::resolve::DEFAULT_MIN_CONFIDENCE {
            return self.computed_ranks(focus, limit, min_confidence);
        }
        let focus_defs = self.defs_in(focus)?;
        if !focus_defs.is_empty() {
            return ranks::focused(&self.conn, &focus_defs, limit).map_err(self.q_err());
        }
        if !self.keep_ranks()? {
            return self.computed_ranks(&[], limit, min_confidence);
        }
        ranks::top(&self.conn, limit).map_err(self.q_err())
    }

    /// The definitions in the files at `paths` (relative), in id order.
    fn defs_in(&self, paths: &[&str]) -> Result<Vec<DefId>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT d.id FROM defs d JOIN files f ON f.id = d.file_id WHERE f.path = ?1",
            )
            .map_err(self.q_err())?;
        let mut out = Vec::new();
        for path in paths {
            let rows = stmt
                .query_map([path], |r| r.get::<_, DefId>(0))
                .map_err(self.q_err())?;
            for row in rows {
                out.push(row.map_err(self.q_err())?);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The kept rank of each of `ids` (over the sum of all ranks); a missing id is no
    /// definition.
    pub fn rank_of(&self, ids: &[DefId]) -> Result<HashMap<DefId, f64>> {
        if !self.keep_ranks()? {
            let wanted: HashSet<DefId> = ids.iter().copied().collect();
            return Ok(self
                .computed_ranks(&[], usize::MAX, crate::resolve::DEFAULT_MIN_CONFIDENCE)?
                .into_iter()
                .filter(|(id, _)| wanted.contains(id))
                .collect());
        }
        ranks::scores_of(&self.conn, ids).map_err(self.q_err())
    }

    /// Makes sure the index keeps the whole tree's ranks, computing and keeping them if
    /// not. False when they could not be kept (another run wrote meanwhile, or the index
    /// is busy or read-only): the caller computes its answer itself.
    fn keep_ranks(&self) -> Result<bool> {
        if ranks::kept(&self.conn).map_err(self.q_err())? {
            return Ok(true);
        }
        let version = crate::index::data_version(&self.conn).map_err(self.q_err())?;
        let graph = ranks::RankGraph::read(
            &self.conn,
            &rank_edges_sql(self.has_precise_rows()?),
            crate::resolve::DEFAULT_MIN_CONFIDENCE,
            false,
        )
        .map_err(self.q_err())?;
        let y = graph.csr.solve(|_| 1.0);
        let kept = (|| -> rusqlite::Result<bool> {
            let tx = rusqlite::Transaction::new_unchecked(
                &self.conn,
                rusqlite::TransactionBehavior::Immediate,
            )?;
            // Another run's commit in between: these ranks may describe older edges.
            if crate::index::data_version(&tx)? != version || ranks::kept(&tx)? {
                return ranks::kept(&tx);
            }
            ranks::keep(&tx, &graph.ids, &y)?;
            tx.commit()?;
            self.checkpointer.request();
            Ok(true)
        })();
        Ok(kept.unwrap_or(false))
    }

    /// PageRank computed from the index's edges now: with `focus` files, the walk restarts
    /// at their definitions.
    fn computed_ranks(
        &self,
        focus: &[&str],
        limit: usize,
        min_confidence: f64,
    ) -> Result<Vec<(DefId, f64)>> {
        // Whether each definition is in a focus file, by file id: no path per definition
        // (a kernel-size tree has millions).
        let focus_files: HashSet<FileId> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id, path FROM files")
                .map_err(self.q_err())?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, FileId>(0)?, r.get::<_, String>(1)?)))
                .map_err(self.q_err())?;
            let mut focused = HashSet::new();
            for row in rows {
                let (id, path) = row.map_err(self.q_err())?;
                if focus.contains(&path.as_str()) {
                    focused.insert(id);
                }
            }
            focused
        };
        let graph = ranks::RankGraph::read(
            &self.conn,
            &rank_edges_sql(self.has_precise_rows()?),
            min_confidence,
            !focus_files.is_empty(),
        )
        .map_err(self.q_err())?;
        let n = graph.ids.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let in_focus: Vec<bool> = graph
            .files
            .iter()
            .map(|f| focus_files.contains(f))
            .collect();
        let y = if in_focus.iter().any(|f| *f) {
            graph.csr.solve(|i| if in_focus[i] { 1.0 } else { 0.0 })
        } else {
            graph.csr.solve(|_| 1.0)
        };
        let sum: f64 = y.iter().sum();
        let sum = if sum > 0.0 { sum } else { 1.0 };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|a, b| {
            y[*b]
                .total_cmp(&y[*a])
                .then_with(|| graph.ids[*a].cmp(&graph.ids[*b]))
        });
        Ok(order
            .into_iter()
            .take(limit)
            .map(|i| (graph.ids[i], y[i] / sum))
            .collect())
    }

    /// Counts over the whole index: summed from each file's counts, kept as its references
    /// are resolved (a kernel-size tree has millions of references: counting them takes
    /// tens of seconds). The precise tier's rows change only which dispatch edges count:
    /// those are counted from its rows, which are few.
    pub fn stats(&self) -> Result<Stats> {
        let mut stats = self.stats_of_files()?;
        let sums = self
            .conn
            .query_row(
                "SELECT IFNULL(SUM(refs), 0), IFNULL(SUM(exact), 0), IFNULL(SUM(import), 0),
                   IFNULL(SUM(package), 0), IFNULL(SUM(name), 0), IFNULL(SUM(ambiguous), 0),
                   IFNULL(SUM(unknown), 0), IFNULL(SUM(external), 0), IFNULL(SUM(fanout), 0)
                 FROM file_counts",
                [],
                |r| {
                    let mut v = [0i64; 9];
                    for (i, slot) in v.iter_mut().enumerate() {
                        *slot = r.get(i)?;
                    }
                    Ok(v)
                },
            )
            .map_err(self.q_err())?;
        let n = |i: usize| usize::try_from(sums[i]).unwrap_or(0);
        stats.references = n(0);
        stats.exact = n(1);
        stats.import = n(2);
        stats.package = n(3);
        stats.name = n(4);
        stats.ambiguous = n(5);
        stats.unknown = n(6);
        stats.external = n(7);
        // The dispatch edges: each reference's fan-out (its file's), and the members that
        // fill what it calls (any file's `fills`).
        if !self.has_precise_rows()? {
            let filled = self.count(&format!("SELECT COUNT(*) FROM ({FILL_TARGETS_SQL})"))?;
            stats.dispatch = n(8) + filled;
            return Ok(stats);
        }
        // With the precise tier's rows (`edges_sql`'s dispatch arms): the fan-out of a
        // reference the precise tier gave another target no longer counts, the precise tier's
        // own fan-out does where the graph had not found it, and the members that implement
        // or fill what a reference calls count as the precise tier says.
        let redirected = self.count(
            "SELECT COUNT(*) FROM precise p
               JOIN refs r ON r.file_id = p.file_id AND r.ord = p.ord
               JOIN fanout x ON x.file_id = p.file_id AND x.ord = p.ord
              WHERE p.target_id IS NOT r.target_id",
        )?;
        let precise_fanout = self.count(
            "SELECT COUNT(*) FROM precise_fanout y
              WHERE NOT EXISTS (SELECT 1 FROM fanout x
                                 WHERE x.file_id = y.file_id AND x.ord = y.ord
                                   AND x.target_id = y.target_id)",
        )?;
        let members = self.count(&format!(
            "SELECT COUNT(*) FROM ({})",
            member_edges_sql("IS NOT NULL")
        ))?;
        stats.dispatch = (n(8) + precise_fanout + members).saturating_sub(redirected);
        Ok(stats)
    }

    /// The one number `sql` selects, as a count.
    fn count(&self, sql: &str) -> Result<usize> {
        self.conn
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| usize::try_from(n).unwrap_or(0))
            .map_err(self.q_err())
    }

    /// The counts of files and definitions, and the index's size.
    fn stats_of_files(&self) -> Result<Stats> {
        let count = |sql: &str| self.count(sql);
        Ok(Stats {
            files: count("SELECT COUNT(*) FROM files")?,
            files_with_syntax_errors: self.files_with_syntax_errors()?,
            definitions: count("SELECT COUNT(*) FROM defs")?,
            precise: count("SELECT COUNT(*) FROM precise WHERE target_id IS NOT NULL")?,
            index_bytes: std::fs::metadata(&self.db_path).map_or(0, |m| m.len())
                + std::fs::metadata(format!("{}-wal", self.db_path.display()))
                    .map_or(0, |m| m.len()),
            ..Stats::default()
        })
    }

    /// [`Graph::stats`] counted from the references and edges themselves.
    #[cfg(test)]
    fn stats_by_scan(&self) -> Result<Stats> {
        let count = |sql: &str| self.count(sql);
        let mut stats = Stats {
            references: count("SELECT COUNT(*) FROM refs")?,
            ambiguous: count("SELECT COUNT(*) FROM refs WHERE outcome = 1 AND candidates > 1")?,
            unknown: count(
                "SELECT COUNT(*) FROM refs WHERE outcome = 1 AND IFNULL(candidates, 0) <= 1",
            )?,
            external: count("SELECT COUNT(*) FROM refs WHERE outcome = 2")?,
            ..self.stats_of_files()?
        };
        let mut stmt = self
            .conn
            .prepare("SELECT rung, COUNT(*) FROM refs WHERE outcome = 0 GROUP BY rung")
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .map_err(self.q_err())?;
        for row in rows {
            let (rung, n) = row.map_err(self.q_err())?;
            let n = usize::try_from(n).unwrap_or(0);
            match rung_of(rung) {
                Rung::Exact => stats.exact = n,
                Rung::Import => stats.import = n,
                Rung::Package => stats.package = n,
                Rung::Name => stats.name = n,
                Rung::Dispatch | Rung::Precise => {}
            }
        }
        stats.dispatch = count(&format!(
            "SELECT COUNT(*) FROM ({}) WHERE rung = 4",
            edges_sql("IS NOT NULL")
        ))?;
        Ok(stats)
    }
}

/// Every edge as `(enclosing definition, target, rung)`, for [`Graph::rank`]: the edges of
/// [`edges_sql`] joined to their reference's enclosing definition, read by scans of the
/// tables in key order, which a kernel-size tree needs (millions of edges; the general form,
/// [`general_rank_edges_sql`], seeks each one and takes minutes there). With precise-tier
/// rows, a reference the precise tier spoke for gives the precise tier's edge instead of its
/// own; only the files the indexer covered (one small set) pay a look-up per reference.
pub(crate) fn rank_edges_sql(precise_rows: bool) -> String {
    if !precise_rows {
        return "SELECT r.enclosing_id, r.target_id, r.rung FROM refs r NOT INDEXED
      WHERE r.target_id IS NOT NULL AND r.enclosing_id IS NOT NULL
     UNION ALL
     SELECT r.enclosing_id, x.target_id, 4 FROM fanout x NOT INDEXED
       JOIN refs r ON r.file_id = x.file_id AND r.ord = x.ord
      WHERE r.enclosing_id IS NOT NULL
     UNION ALL "
            .to_owned()
            + &fill_edges_sql();
    }
    format!(
        "SELECT r.enclosing_id, r.target_id, r.rung FROM refs r NOT INDEXED
          WHERE r.target_id IS NOT NULL AND r.enclosing_id IS NOT NULL
            AND (r.file_id NOT IN (SELECT file_id FROM precise)
                 OR NOT EXISTS (SELECT 1 FROM precise p
                                 WHERE p.file_id = r.file_id AND p.ord = r.ord))
         UNION ALL
         SELECT r.enclosing_id, p.target_id, 5 FROM precise p
           JOIN refs r ON r.file_id = p.file_id AND r.ord = p.ord
          WHERE p.target_id IS NOT NULL AND r.enclosing_id IS NOT NULL
         UNION ALL
         SELECT r.enclosing_id, x.target_id, 4 FROM fanout x NOT INDEXED
           JOIN refs r ON r.file_id = x.file_id AND r.ord = x.ord
          WHERE r.enclosing_id IS NOT NULL
            AND (x.file_id NOT IN (SELECT file_id FROM precise)
                 OR NOT EXISTS (SELECT 1 FROM precise p
                                 WHERE p.file_id = x.file_id AND p.ord = x.ord
                                   AND p.target_id IS NOT r.target_id))
         UNION ALL
         SELECT r.enclosing_id, y.target_id, 4 FROM precise_fanout y
           JOIN refs r ON r.file_id = y.file_id AND r.ord = y.ord
          WHERE r.enclosing_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM fanout x
                             WHERE x.file_id = y.file_id AND x.ord = y.ord
                               AND x.target_id = y.target_id)
         UNION ALL
         SELECT r.enclosing_id, u.target_id, 4 FROM ({}) u
           JOIN refs r ON r.file_id = u.file_id AND r.ord = u.ord
          WHERE r.enclosing_id IS NOT NULL",
        member_edges_sql("IS NOT NULL")
    )
}

/// [`rank_edges_sql`]'s rows by their definition: each edge of [`edges_sql`] joined to its
/// reference (what the scans must give; a seek per edge).
#[cfg(test)]
pub(crate) fn general_rank_edges_sql() -> String {
    format!(
        "SELECT r.enclosing_id, e.target_id, e.rung
         FROM ({}) e JOIN refs r ON r.file_id = e.file_id AND r.ord = e.ord
         WHERE r.enclosing_id IS NOT NULL",
        edges_sql("IS NOT NULL")
    )
}

/// Each reference and a member that fills what it calls (an interface's member an object
/// literal or a type's method fills), once: the dispatch edges `fills` gives. `fills` is
/// the outer loop (`CROSS JOIN`): it is small, and without it SQLite may walk every
/// reference (half a second on a kernel-size tree that has no `fills` at all).
const FILL_TARGETS_SQL: &str = "
       SELECT DISTINCT file_id, ord, target_id FROM (
         SELECT r.file_id, r.ord, f.def_id AS target_id FROM fills f
           CROSS JOIN refs r ON r.target_id = f.implemented_id
         UNION ALL
         SELECT x.file_id, x.ord, f.def_id FROM fills f
           CROSS JOIN fanout x ON x.target_id = f.implemented_id)";

/// The rank's edges to the members that fill what a reference calls: the part of
/// [`rank_edges_sql`]'s scan form that a build's own writes do not hold (see
/// [`crate::ranks::EdgeSpill`]).
pub(crate) fn fill_edges_sql() -> String {
    format!(
        "SELECT r.enclosing_id, u.target_id, 4 FROM ({FILL_TARGETS_SQL}) u
           JOIN refs r ON r.file_id = u.file_id AND r.ord = u.ord
          WHERE r.enclosing_id IS NOT NULL"
    )
}

/// Every distinct definition name, as written and lower-cased, each list one string with
/// the names one per line: a kernel-size tree has millions of names, and a substring
/// search is one `memmem` pass over one buffer, not millions of small strings.
///
/// An update appends the names its files define (a reload costs most of a second on a
/// kernel-size tree): a name may then be listed twice, or outlive its last definition,
/// which the lookup by name that follows makes harmless. Past a tenth more entries, or
/// after another run's commit, the list is read again.
#[derive(Debug, Default)]
pub(crate) struct Names {
    lower: String,
    lower_starts: Vec<usize>,
    written: String,
    written_starts: Vec<usize>,
    /// `PRAGMA data_version` when read (another run's commit changes it).
    pub(crate) at: i64,
    /// Entries as read, and appended since.
    read: usize,
    appended: usize,
}

impl Names {
    /// Appends `names` unless the list has grown by a tenth since it was read (then false:
    /// read it again).
    pub(crate) fn append(&mut self, names: &[String]) -> bool {
        if self.appended + names.len() > (self.read / 10).max(10_000) {
            return false;
        }
        for name in names {
            self.push(name);
        }
        self.appended += names.len();
        true
    }

    fn push(&mut self, name: &str) {
        // A name with a line break in it would read as two.
        if name.contains('\n') {
            return;
        }
        self.lower_starts.push(self.lower.len());
        self.lower.push_str(&name.to_lowercase());
        self.lower.push('\n');
        self.written_starts.push(self.written.len());
        self.written.push_str(name);
        self.written.push('\n');
    }

    fn entry<'a>(text: &'a str, starts: &[usize], index: usize) -> &'a str {
        let start = starts.get(index).copied().unwrap_or(text.len());
        // Every name ends with its line break.
        let end = starts
            .get(index + 1)
            .copied()
            .unwrap_or(text.len())
            .saturating_sub(1);
        text.get(start..end.max(start)).unwrap_or("")
    }

    /// The names whose lower-cased form contains `q` (already lower-cased), each with its
    /// tier: 0 equal, 1 a prefix, 2 elsewhere.
    fn containing(&self, q: &str) -> Vec<(u8, &str)> {
        let mut out = Vec::new();
        if q.is_empty() || q.contains('\n') {
            return out;
        }
        let mut last: Option<usize> = None;
        for at in memchr::memmem::find_iter(self.lower.as_bytes(), q.as_bytes()) {
            let index = self
                .lower_starts
                .partition_point(|s| *s <= at)
                .saturating_sub(1);
            // The leftmost match in a name comes first: a later one adds nothing.
            if last == Some(index) {
                continue;
            }
            last = Some(index);
            let lower = Self::entry(&self.lower, &self.lower_starts, index);
            let start = self.lower_starts.get(index).copied().unwrap_or(0);
            let tier = if lower == q {
                0
            } else if at == start {
                1
            } else {
                2
            };
            out.push((
                tier,
                Self::entry(&self.written, &self.written_starts, index),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::table::{DefId, FileId};

    /// The rows of `sql` (three integers each), sorted.
    fn sorted_triples(conn: &rusqlite::Connection, sql: &str) -> Vec<(i64, i64, i64)> {
        let mut stmt = conn.prepare(sql).unwrap();
        let mut rows: Vec<(i64, i64, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.sort_unstable();
        rows
    }

    /// Without precise-tier rows, the scan form of the rank's edges gives the rows of the
    /// general form: references, dispatch (fan-out) and the members object literals fill.
    #[test]
    fn the_rank_edges_scan_gives_the_general_form_rows() {
        let project = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let full = project.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write(
            "t/a.ts",
            "export interface Obs {\n  next: (v: number) => void;\n  done(): void;\n}\n\
             export class Klass implements Obs {\n  next(v: number) {}\n  done() {}\n}\n\
             export function alpha(o: Partial<Obs>) {\n  o.next(1);\n}\n\
             export function caller(k: Klass) {\n  k.done();\n  alpha({ next: (v) => v, done() {} });\n}\n",
        );
        write("c/h.h", "int twice(int x);\n");
        write(
            "c/a.c",
            "#include \"h.h\"\nint twice(int x) { return 2 * x; }\n",
        );
        write("c/b.c", "#include \"h.h\"\nint twice(int x) { return x + x; }\nint use(void) { return twice(1); }\n");
        let (_cache, graph) = indexed(project.path());
        assert!(!graph.has_precise_rows().unwrap());
        for table in ["fills", "fanout"] {
            let count: i64 = graph
                .conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
                .unwrap();
            assert!(count > 0, "the fixture has no {table} rows");
        }
        let rows = |sql: &str| sorted_triples(&graph.conn, sql);
        let general = rows(&super::general_rank_edges_sql());
        let scanned = rows(&super::rank_edges_sql(false));
        assert!(
            general.iter().any(|r| r.2 == 4),
            "no fan-out or fill edge: {general:?}"
        );
        assert_eq!(scanned, general);
        assert_eq!(rows(&super::rank_edges_sql(true)), general);
        // The counts kept per file are those counted from the rows.
        assert_eq!(graph.stats().unwrap(), graph.stats_by_scan().unwrap());
        // The ranks the build kept (from the edges it wrote as it resolved, and the fills)
        // are those computed from the tables.
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        let kept = graph.rank_ids(&[], usize::MAX, floor).unwrap();
        let computed = graph.computed_ranks(&[], usize::MAX, floor).unwrap();
        assert_eq!(kept.len(), computed.len());
        for ((a, x), (b, y)) in kept.iter().zip(&computed) {
            assert!(a == b && (x - y).abs() < 1e-9, "{kept:?}\n{computed:?}");
        }
    }

    /// With precise-tier rows, the scan form of the rank's edges gives the general form's
    /// rows: a reference the precise tier gave another target, no target, or the same one; a
    /// dispatch row whose reference the precise tier redirected; the precise tier's own
    /// dispatch rows (one the graph already had) and implementations.
    #[test]
    fn with_precise_rows_the_rank_edges_scan_gives_the_general_form_rows() {
        let project = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let full = project.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write("c/h.h", "int twice(int x);\nint thrice(int x);\n");
        write(
            "c/a.c",
            "#include \"h.h\"\nint twice(int x) { return 2 * x; }\n",
        );
        write(
            "c/b.c",
            "#include \"h.h\"\nint twice(int x) { return x + x; }\n\
             int thrice(int x) { return 3 * x; }\n",
        );
        write(
            "c/use.c",
            "#include \"h.h\"\n\
             int use(void) { return twice(1) + thrice(2) + twice(3) + thrice(4); }\n",
        );
        let (_cache, graph) = indexed(project.path());
        let conn = &graph.conn;
        let resolved: Vec<(i64, i64, i64)> = {
            let mut stmt = conn
                .prepare(
                    "SELECT file_id, ord, target_id FROM refs
                      WHERE target_id IS NOT NULL AND enclosing_id IS NOT NULL
                      ORDER BY file_id, ord",
                )
                .unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let fanned: (i64, i64, i64) = conn
            .query_row(
                "SELECT file_id, ord, target_id FROM fanout ORDER BY file_id, ord LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        let defs: Vec<i64> = {
            let mut stmt = conn.prepare("SELECT id FROM defs ORDER BY id").unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert!(
            resolved.len() >= 4 && defs.len() >= 3,
            "{resolved:?} {defs:?}"
        );
        let other = |target: i64| *defs.iter().find(|d| **d != target).unwrap();
        let precise = |file: i64, ord: i64, target: Option<i64>| {
            conn.execute(
                "INSERT OR REPLACE INTO precise(file_id, ord, target_id) VALUES (?1, ?2, ?3)",
                rusqlite::params![file, ord, target],
            )
            .unwrap();
        };
        // The fanned-out reference redirected; others redirected, emptied, confirmed.
        precise(fanned.0, fanned.1, Some(other(fanned.2)));
        let (f, o, t) = resolved[0];
        precise(f, o, Some(other(t)));
        let (f, o, _) = resolved[1];
        precise(f, o, None);
        let (f, o, t) = resolved[2];
        precise(f, o, Some(t));
        let (f, o, t) = resolved[3];
        for target in [fanned.2, other(t)] {
            conn.execute(
                "INSERT OR IGNORE INTO precise_fanout(file_id, ord, target_id)
                 VALUES (?1, ?2, ?3)",
                rusqlite::params![f, o, target],
            )
            .unwrap();
        }
        conn.execute(
            "INSERT OR IGNORE INTO precise_fanout(file_id, ord, target_id) VALUES (?1, ?2, ?3)",
            rusqlite::params![fanned.0, fanned.1, fanned.2],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO precise_implements(file_id, def_id, implemented_id) VALUES (?1, ?2, ?3)",
            rusqlite::params![f, other(t), t],
        )
        .unwrap();
        assert!(graph.has_precise_rows().unwrap());
        let rows = |sql: &str| sorted_triples(conn, sql);
        let general = rows(&super::general_rank_edges_sql());
        assert!(
            general.iter().any(|r| r.2 == 5),
            "no precise edge: {general:?}"
        );
        assert_eq!(rows(&super::rank_edges_sql(true)), general);
        assert_ne!(rows(&super::rank_edges_sql(false)), general);
        // The counts kept per file, with the precise tier's dispatch rows counted apart,
        // are those counted from the rows.
        assert_eq!(graph.stats().unwrap(), graph.stats_by_scan().unwrap());
        // An update reads them file by file.
        assert_eq!(per_file_edges(&graph), scanned_edges(&graph, true));
    }

    /// The graph of `project`, its index in a cache of its own.
    fn indexed(project: &std::path::Path) -> (tempfile::TempDir, crate::Graph) {
        let cache = tempfile::tempdir().unwrap();
        let config = crate::GraphConfig {
            cache_dir: cache.path().into(),
            ..crate::GraphConfig::default()
        };
        let (graph, _) = crate::Graph::open_with(project, config).unwrap();
        (cache, graph)
    }

    /// A tree of Python modules calling each other's functions (deterministic), opened.
    fn calling_modules(
        modules: usize,
        functions: usize,
    ) -> (tempfile::TempDir, tempfile::TempDir, crate::Graph) {
        let project = tempfile::tempdir().unwrap();
        let mut seed: u64 = 7;
        let mut next = |bound: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % bound
        };
        for m in 0..modules {
            let mut text = String::new();
            let mut calls = Vec::new();
            for f in 0..functions {
                let mut body = Vec::new();
                for _ in 0..next(4) {
                    let (cm, cf) = (next(modules), next(functions));
                    if cm != m {
                        calls.push(format!("from m{cm} import f{cm}_{cf}\n"));
                    }
                    body.push(format!("    f{cm}_{cf}()\n"));
                }
                text.push_str(&format!("def f{m}_{f}():\n"));
                if body.is_empty() {
                    text.push_str("    pass\n");
                }
                for line in body {
                    text.push_str(&line);
                }
            }
            calls.sort();
            calls.dedup();
            std::fs::write(
                project.path().join(format!("m{m}.py")),
                calls.concat() + &text,
            )
            .unwrap();
        }
        let (cache, graph) = indexed(project.path());
        (project, cache, graph)
    }

    /// A map signs (reads the file of) only the definitions that could still fit its budget:
    /// its candidates spread over many more files than it shows.
    #[test]
    fn a_map_reads_only_the_files_of_what_could_fit() {
        let (_project, _cache, graph) = calling_modules(40, 8);
        graph.lines.borrow_mut().clear();
        let map = graph.repo_map(vec!["m3.py".into()], 120).unwrap();
        let read = graph.lines.borrow().len();
        let considered: std::collections::HashSet<String> = graph
            .rank(&["m3.py"], 120, crate::DEFAULT_MIN_CONFIDENCE)
            .unwrap()
            .value
            .into_iter()
            .map(|r| r.symbol.path)
            .collect();
        assert!(!map.files.is_empty());
        assert!(
            read * 3 < considered.len(),
            "{read} files read for a map of {} files, {} considered",
            map.files.len(),
            considered.len()
        );
    }

    /// A map around a file walks out from it by local pushes; its ranks are the whole
    /// computation's (within the pushes' tolerance) for what the focus reaches.
    #[test]
    fn a_focused_walk_by_pushes_ranks_as_the_whole_computation() {
        let (_project, _cache, graph) = calling_modules(40, 8);
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        let pushed = graph.rank_ids(&["m3.py"], 30, floor).unwrap();
        let computed = graph.computed_ranks(&["m3.py"], 30, floor).unwrap();
        assert_eq!(pushed.len(), 30);
        for ((a, x), (b, y)) in pushed.iter().zip(&computed) {
            assert!(
                (x - y).abs() < 0.01 * y,
                "{a} {x} vs {b} {y}\n{pushed:?}\n{computed:?}"
            );
        }
        // The same walk every time: its pushes start in id order, not a hash map's.
        for _ in 0..3 {
            assert_eq!(graph.rank_ids(&["m3.py"], 30, floor).unwrap(), pushed);
        }
        // Every definition of the focus file ranks, and first.
        let focus = graph.defs_in(&["m3.py"]).unwrap();
        assert!(focus.iter().all(|id| pushed.iter().any(|(p, _)| p == id)));
        assert_eq!(graph.stats().unwrap(), graph.stats_by_scan().unwrap());
        // Unfocused: the kept ranks are the whole computation's.
        let kept = graph.rank_ids(&[], 50, floor).unwrap();
        let computed = graph.computed_ranks(&[], 50, floor).unwrap();
        assert_eq!(
            kept.iter().map(|r| r.0).collect::<Vec<_>>(),
            computed.iter().map(|r| r.0).collect::<Vec<_>>()
        );
    }

    /// The kept ranks equal a whole computation's (within the pushes' tolerance) over the
    /// top `n`.
    fn assert_kept_ranks_are_computed(graph: &crate::Graph, n: usize) {
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        assert!(
            crate::ranks::kept(&graph.conn).unwrap(),
            "the ranks were forgotten"
        );
        let kept = graph.rank_ids(&[], n, floor).unwrap();
        let computed: std::collections::HashMap<DefId, f64> = graph
            .computed_ranks(&[], usize::MAX, floor)
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(kept.len(), n);
        for (id, x) in &kept {
            let y = computed[id];
            assert!((x - y).abs() < 0.01 * y, "{id}: kept {x}, computed {y}");
        }
    }

    /// With the precise tier's rows, the kept ranks follow what changes them: rows an import
    /// writes for the files it noted, and an update of a file; a change to a file it did not
    /// note forgets them (the next answer computes them whole).
    #[test]
    fn the_kept_ranks_follow_the_precise_tiers_rows() {
        let (project, _cache, mut graph) = calling_modules(30, 6);
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        let file_of = |graph: &crate::Graph, path: &str| -> FileId {
            graph
                .conn
                .query_row("SELECT id FROM files WHERE path = ?1", [path], |r| r.get(0))
                .unwrap()
        };
        let calls_of = |graph: &crate::Graph, file: FileId| -> Vec<(i64, DefId)> {
            let mut stmt = graph
                .conn
                .prepare(
                    "SELECT ord, target_id FROM refs
                      WHERE file_id = ?1 AND target_id IS NOT NULL ORDER BY ord",
                )
                .unwrap();
            stmt.query_map([file], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let best = graph.rank_ids(&[], 1, floor).unwrap()[0].0;
        // As an import writes: the precise tier sends every call of m1.py and m2.py to the
        // best-ranked definition.
        let import = |graph: &crate::Graph, noted: &[FileId], written: &[FileId]| {
            let tx = graph.conn.unchecked_transaction().unwrap();
            let mut upkeep = crate::ranks::RankUpkeep::begin(&tx).unwrap();
            for file in noted {
                upkeep.before(&tx, *file).unwrap();
            }
            for file in written {
                for (ord, _) in calls_of(graph, *file) {
                    tx.execute(
                        "INSERT OR REPLACE INTO precise(file_id, ord, target_id)
                         VALUES (?1, ?2, ?3)",
                        rusqlite::params![file, ord, best],
                    )
                    .unwrap();
                }
            }
            upkeep.finish(&tx).unwrap();
            tx.commit().unwrap();
        };
        let (m1, m2) = (file_of(&graph, "m1.py"), file_of(&graph, "m2.py"));
        assert!(!calls_of(&graph, m1).is_empty() && !calls_of(&graph, m2).is_empty());
        import(&graph, &[m1, m2], &[m1, m2]);
        assert!(graph.has_precise_rows().unwrap());
        assert_kept_ranks_are_computed(&graph, 30);
        // An update of a file with precise rows (they are dropped with its old bytes) and of
        // one without.
        for path in ["m1.py", "m5.py"] {
            let full = project.path().join(path);
            let mut text = std::fs::read_to_string(&full).unwrap();
            text.push_str("def added_here():\n    f0_0()\n    f3_1()\n");
            std::fs::write(&full, text).unwrap();
            graph.update(&[path]).unwrap();
            assert_kept_ranks_are_computed(&graph, 30);
        }
        // Rows written for a file that was not noted first.
        let m7 = file_of(&graph, "m7.py");
        import(&graph, &[m2], &[m7]);
        assert!(!crate::ranks::kept(&graph.conn).unwrap());
    }

    /// `callers_signing` is `callers` with only the first sites' callers read and signed, the
    /// others' by id.
    #[test]
    fn callers_sign_only_the_callers_asked_for() {
        let (_project, _cache, graph) = calling_modules(12, 5);
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        let target = graph.rank_ids(&[], 1, floor).unwrap()[0].0;
        let all = graph.callers(target, floor).unwrap().value;
        let first = graph.callers_signing(target, floor, 2).unwrap().value;
        assert!(all.sites.len() > 3, "{all:?}");
        assert_eq!(all.sites.len(), first.sites.len());
        for (i, (a, f)) in all.sites.iter().zip(&first.sites).enumerate() {
            let a_caller = a.caller.as_ref().unwrap();
            assert!(a_caller.signature.starts_with("def "), "{a:?}");
            assert_eq!(a.caller_id, Some(a_caller.id), "{a:?}");
            if i < 2 {
                assert_eq!(a, f);
            } else {
                assert_eq!(f.caller, None, "{f:?}");
                assert_eq!(
                    (&a.path, a.line, a.caller_id),
                    (&f.path, f.line, f.caller_id)
                );
            }
        }
    }

    /// `impact_signing` is `impact` with only the first dependents' signatures read.
    #[test]
    fn impact_signs_only_the_dependents_asked_for() {
        let (_project, _cache, graph) = calling_modules(12, 5);
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        let target = graph.rank_ids(&[], 1, floor).unwrap()[0].0;
        let all = graph.impact(target, 3, floor).unwrap().value;
        let first = graph.impact_signing(target, 3, floor, 2).unwrap().value;
        assert!(all.dependents.len() > 3, "{all:?}");
        assert_eq!(all.dependents.len(), first.dependents.len());
        for (i, (a, f)) in all.dependents.iter().zip(&first.dependents).enumerate() {
            assert!(a.symbol.signature.starts_with("def "), "{a:?}");
            if i < 2 {
                assert_eq!((&a.symbol, a.depth), (&f.symbol, f.depth));
            } else {
                assert_eq!(f.symbol.signature, "");
                assert_eq!((a.symbol.id, a.depth), (f.symbol.id, f.depth));
            }
        }
    }

    /// `callers` lists calls only, never the type uses of the same definition, whether it
    /// reads the references' own edges (no precise rows, no fills) or the general form.
    #[test]
    fn callers_leave_out_type_uses_in_the_plain_and_the_general_form() {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(
            project.path().join("models.py"),
            "class Session:\n    pass\n",
        )
        .unwrap();
        std::fs::write(
            project.path().join("use.py"),
            "from models import Session\n\n\ndef make() -> Session:\n    return Session()\n\n\n\
             def keep(s: Session) -> Session:\n    return s\n",
        )
        .unwrap();
        let (_cache, graph) = indexed(project.path());
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        let session = graph.find("Session", Some("models.py")).unwrap()[0].id;
        let type_uses = graph
            .conn
            .query_row(
                "SELECT COUNT(*) FROM refs WHERE target_id = ?1 AND kind = 1",
                [session],
                |r| r.get::<_, i64>(0),
            )
            .unwrap();
        assert_eq!(
            type_uses, 3,
            "the fixture's annotations resolve to the class"
        );
        for plain in [true, false] {
            if !plain {
                graph
                    .conn
                    .execute("INSERT INTO fills VALUES (-1, -1, -1)", [])
                    .unwrap();
            }
            assert_eq!(super::plain_edges(&graph.conn).unwrap(), plain);
            let sites: Vec<String> = graph
                .callers(session, floor)
                .unwrap()
                .value
                .sites
                .iter()
                .map(|s| {
                    format!(
                        "{}:{} {:?}",
                        s.path,
                        s.line,
                        s.caller.as_ref().map(|c| &c.name)
                    )
                })
                .collect();
            assert_eq!(sites, ["use.py:5 Some(\"make\")"], "plain edges: {plain}");
        }
    }

    /// `impact`'s walk, `callers` and the per-file rank edges read the references' own edges
    /// and their fan-out directly when the precise tier's tables and the fills are empty, and
    /// give what the general forms give: for impact, each dependent at its least depth with
    /// its best confidence, the top-level uses, and whether more lie beyond the depth.
    #[test]
    fn impact_walks_the_plain_edges_as_the_general_form() {
        use super::{plain_edges, Impact, Rung};
        let project = tempfile::tempdir().unwrap();
        let files = [
            ("include/mem.h", "void release(void *p);\n"),
            (
                "mm/slab.c",
                "#include \"mem.h\"\nvoid release(void *p) { }\n",
            ),
            (
                "mm/slob.c",
                "#include \"mem.h\"\nvoid release(void *p) { }\n",
            ),
            (
                "src/main.c",
                "#include \"mem.h\"\nstatic void drop(void *p) { release(p); }\n\
                 static void twice(void *p) { drop(p); release(p); }\n\
                 void outer(void) { twice(0); }\nvoid top(void) { outer(); }\n\
                 drop(outer);\n",
            ),
        ];
        for (path, text) in files {
            let full = project.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let (_cache, graph) = indexed(project.path());
        let floor = crate::DEFAULT_MIN_CONFIDENCE;
        let shown = |impact: &Impact| {
            let mut out: Vec<String> = impact
                .dependents
                .iter()
                .map(|d| format!("{} {} {:.2}", d.symbol.name, d.depth, d.confidence))
                .collect();
            out.extend(
                impact
                    .top_level_uses
                    .iter()
                    .map(|(p, l)| format!("{p}:{l}")),
            );
            out.push(format!("beyond {}", impact.truncated));
            out
        };
        let mut answers = Vec::new();
        for header in [true, false] {
            let release = graph
                .find(
                    "release",
                    Some(if header { "include/mem.h" } else { "mm/slab.c" }),
                )
                .unwrap()[0]
                .id;
            for depth in [1, 2, 3] {
                assert!(plain_edges(&graph.conn).unwrap());
                let plain = graph.impact(release, depth, floor).unwrap().value;
                let plain_callers = graph.callers(release, floor).unwrap().value;
                let plain_file_edges = per_file_edges(&graph);
                // A fill of nothing: the general forms, the same edges.
                graph
                    .conn
                    .execute("INSERT INTO fills VALUES (-1, -1, -1)", [])
                    .unwrap();
                let general = graph.impact(release, depth, floor).unwrap().value;
                assert_eq!(
                    graph.callers(release, floor).unwrap().value.sites,
                    plain_callers.sites
                );
                assert!(!plain_callers.sites.is_empty());
                assert_eq!(per_file_edges(&graph), plain_file_edges);
                graph.conn.execute("DELETE FROM fills", []).unwrap();
                assert_eq!(shown(&plain), shown(&general));
                assert_eq!(plain_file_edges, scanned_edges(&graph, false));
                answers.push(shown(&plain));
            }
        }
        let want = |rung: Rung, depth: usize| {
            let c = format!("{:.2}", rung.confidence());
            let mut out = vec![format!("drop 1 {c}"), format!("twice 1 {c}")];
            if depth >= 2 {
                out.push(format!("outer 2 {c}"));
            }
            if depth >= 3 {
                out.push(format!("top 3 {c}"));
            }
            out.push("src/main.c:6".into());
            out.push(format!("beyond {}", depth < 3));
            out
        };
        assert_eq!(answers[1], want(Rung::Import, 2), "{answers:?}");
        assert_eq!(answers[5], want(Rung::Dispatch, 3), "{answers:?}");
    }

    /// The per-file form of the rank's edges (what an update and a focused walk read) gives
    /// the scan form's rows, file by file.
    #[test]
    fn the_rank_edges_of_each_file_are_the_scan_forms_rows() {
        let (_project, _cache, graph) = calling_modules(12, 5);
        let scanned = scanned_edges(&graph, false);
        assert!(scanned.len() > 50, "{scanned:?}");
        assert_eq!(per_file_edges(&graph), scanned);
    }

    /// The rank's edges at the default floor, self-edges left out, as `(from, to)` sorted:
    /// from the scan form.
    fn scanned_edges(graph: &crate::Graph, precise_rows: bool) -> Vec<(DefId, DefId)> {
        let mut stmt = graph
            .conn
            .prepare(&super::rank_edges_sql(precise_rows))
            .unwrap();
        let mut edges: Vec<(DefId, DefId)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .filter(|(a, b, rung): &(DefId, DefId, i64)| {
                a != b && crate::index::rung_of(*rung).confidence() >= crate::DEFAULT_MIN_CONFIDENCE
            })
            .map(|(a, b, _)| (a, b))
            .collect();
        edges.sort_unstable();
        edges
    }

    /// [`scanned_edges`] from the per-file form, file by file.
    fn per_file_edges(graph: &crate::Graph) -> Vec<(DefId, DefId)> {
        let files: Vec<FileId> = {
            let mut stmt = graph.conn.prepare("SELECT id FROM files").unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let mut edges = Vec::new();
        for file in files {
            for (from, out) in
                crate::ranks::file_edges(&graph.conn, file, crate::ranks::FillsAsOf::Now).unwrap()
            {
                edges.extend(out.into_iter().map(|(to, _)| (from, to)));
            }
        }
        edges.sort_unstable();
        edges
    }

    #[test]
    fn file_lines_are_the_lines_str_lines_cuts() {
        for text in ["", "a", "a\n", "a\r\nb", "\n\nc\n", "x\ny\r\n\r\nz", "é\nü"] {
            let lines = super::FileLines::new(text.as_bytes().to_vec());
            let want: Vec<&str> = text.lines().collect();
            let got: Vec<&str> = (0..want.len() + 1).map_while(|i| lines.get(i)).collect();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn names_containing_a_query_come_with_their_tier_once_each() {
        let mut names = super::Names::default();
        for name in [
            "kmalloc",
            "KMalloc_array",
            "do_kmalloc_kmalloc",
            "kfree",
            "bad\nname",
        ] {
            names.push(name);
        }
        assert_eq!(
            names.containing("kmalloc"),
            vec![
                (0, "kmalloc"),
                (1, "KMalloc_array"),
                (2, "do_kmalloc_kmalloc")
            ]
        );
        assert_eq!(names.containing("free"), vec![(2, "kfree")]);
        assert!(names.containing("c\nk").is_empty());
        assert!(names.containing("name").is_empty());
    }
}
