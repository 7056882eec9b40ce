//! PageRank of definitions, and the ranks of the whole tree kept in the index.
//!
//! `map` ranks a tree's definitions and `symbols` orders its hits by rank. On a kernel-size
//! tree one computation reads millions of edges (seconds), so the ranks of the whole tree
//! (no focus, the default floor) are kept in the index: computed after a build that resolved
//! every file, and kept current by each update and each import of the precise tier, which
//! turn the change in their files' edges into a residual and push it through the graph. A
//! push is local: an update whose edges did not change (a body or comment edit) pushes
//! nothing.
//!
//! The kept value is `y = 1 + d·Pᵀy` (a restart weight of 1 per definition, walks that reach
//! a definition without successors dropped). With a uniform restart the dropped walks only
//! scale every rank alike, so `y` over its sum is the walk's stationary rank. `y` is linear in
//! the restart, which is what makes a change local: for an estimate `p` with residual
//! `r = 1 + d·Pᵀp − p`, moving `r[v]` into `p[v]` and `d·r[v]·w/total` onto `v`'s successors
//! keeps `y = p + (I − d·Pᵀ)⁻¹r` (Andersen, Chung and Lang's push).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

use crate::index::rung_of;
use crate::resolve::DEFAULT_MIN_CONFIDENCE;
use crate::table::{DefId, FileId};

/// The walk's damping: the chance of following an edge rather than restarting.
pub(crate) const DAMPING: f64 = 0.85;
/// Power iterations of a whole computation (at most).
const ITERATIONS: usize = 50;
/// A residual at or below this (in units of one restart) stays where it is.
const PUSH_EPSILON: f64 = 1e-4;
/// Pushes per update at most; a residual left over is kept for the next update.
const PUSH_BUDGET: usize = 200_000;
/// A focused walk's residual at or below this (the restart's mass is 1, shared by the focus's
/// definitions) stays, and it pushes at most this many times: the neighbourhood a map around
/// a file shows. (A restart of 1 at each definition made the walk's precision follow the
/// focus's size: 530 files read around `kernel/fork.c`, for a map that shows 58 of the 60
/// definitions it shows now.)
const FOCUS_EPSILON: f64 = 1e-4;
const FOCUS_BUDGET: usize = 50_000;
/// A kept rank this close to 1 (a definition nothing reaches) has no row.
const AT_ONE: f64 = 1e-12;

/// Edges grouped by their source (compressed rows), over dense node indexes: four bytes a
/// node and five an edge (its target and rung), as a kernel-size tree has millions of both.
/// No list of the edges is held while it is built (a count, then a fill).
#[derive(Debug, Default)]
pub(crate) struct Csr {
    starts: Vec<u32>,
    targets: Vec<u32>,
    rungs: Vec<u8>,
}

/// An edge over node places: from, to, rung.
pub(crate) type PlacedEdge = (u32, u32, u8);

/// The weight of an edge of each rung (its confidence).
fn weights() -> [f64; 8] {
    let mut out = [0.0; 8];
    for (code, slot) in out.iter_mut().enumerate() {
        *slot = rung_of(code as i64).confidence();
    }
    out
}

impl Csr {
    /// Over `n` nodes, from `edges`, which it calls twice to be given every edge (a count,
    /// then a fill). Edges past the four billionth are left out (a tree would need tens of
    /// gigabytes of references to have them).
    pub(crate) fn build<E>(
        n: usize,
        mut edges: impl FnMut(&mut dyn FnMut(PlacedEdge)) -> Result<(), E>,
    ) -> Result<Csr, E> {
        let mut starts: Vec<u32> = vec![0; n + 1];
        let mut count: u32 = 0;
        edges(&mut |(from, _, _)| {
            if count < u32::MAX && (from as usize) < n {
                count += 1;
                starts[from as usize + 1] += 1;
            }
        })?;
        for i in 0..n {
            starts[i + 1] += starts[i];
        }
        let mut cursor: Vec<u32> = starts[..n].to_vec();
        let mut targets: Vec<u32> = vec![0; count as usize];
        let mut rungs: Vec<u8> = vec![0; count as usize];
        edges(&mut |(from, to, rung)| {
            let Some(slot) = cursor.get_mut(from as usize) else {
                return;
            };
            let at = *slot as usize;
            // Within its row (a fill never passes the count, whose edges are the same).
            if at < starts[from as usize + 1] as usize {
                targets[at] = to;
                rungs[at] = rung;
                *slot += 1;
            }
        })?;
        Ok(Csr {
            starts,
            targets,
            rungs,
        })
    }

    fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// `y = restart + d·Pᵀy` by power iteration: at most [`ITERATIONS`], fewer once a step
    /// changes the sum by less than a billionth. `restart` gives each node's restart weight.
    pub(crate) fn solve(&self, restart: impl Fn(usize) -> f64) -> Vec<f64> {
        let n = self.len();
        let weights = weights();
        let weight = |e: usize| weights[usize::from(self.rungs[e]) & 7];
        let mut y: Vec<f64> = (0..n).map(&restart).collect();
        let mut next: Vec<f64> = vec![0.0; n];
        for _ in 0..ITERATIONS {
            for (i, slot) in next.iter_mut().enumerate() {
                *slot = restart(i);
            }
            for (i, value) in y.iter().enumerate() {
                let (a, b) = (self.starts[i] as usize, self.starts[i + 1] as usize);
                let total: f64 = (a..b).map(weight).sum();
                if total <= 0.0 {
                    continue;
                }
                let share = DAMPING * value / total;
                for e in a..b {
                    next[self.targets[e] as usize] += share * weight(e);
                }
            }
            let delta: f64 = next.iter().zip(&y).map(|(a, b)| (a - b).abs()).sum();
            let sum: f64 = next.iter().sum();
            std::mem::swap(&mut y, &mut next);
            if delta <= 1e-9 * sum {
                break;
            }
        }
        y
    }
}

/// The definitions in id order, each one's file, and the rank graph's edges at a floor over
/// their places.
pub(crate) struct RankGraph {
    pub(crate) ids: Vec<DefId>,
    pub(crate) files: Vec<FileId>,
    pub(crate) csr: Csr,
}

impl RankGraph {
    /// The edges of `edges_sql` (rows: enclosing definition, target, rung); `with_files`:
    /// each definition's file too (for a focus).
    pub(crate) fn read(
        conn: &Connection,
        edges_sql: &str,
        floor: f64,
        with_files: bool,
    ) -> rusqlite::Result<Self> {
        let places = Places::read(conn, with_files)?;
        let mut edges: Vec<PlacedEdge> = Vec::new();
        {
            let mut stmt = conn.prepare_cached(edges_sql)?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, DefId>(0)?,
                    r.get::<_, DefId>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?;
            for row in rows {
                let (from, to, rung) = row?;
                edges.extend(places.edge(from, to, rung, floor));
            }
        }
        let csr = Csr::build(places.ids.len(), |sink| {
            edges.iter().for_each(|e| sink(*e));
            Ok::<(), rusqlite::Error>(())
        })?;
        Ok(places.with(csr))
    }

    /// The edges a build wrote to `spill` as it resolved, and those of `more_sql` (what
    /// only the written tables tell: the members that fill an interface's).
    pub(crate) fn from_spill(
        conn: &Connection,
        spill: &mut EdgeSpill,
        more_sql: &str,
        floor: f64,
    ) -> Result<Self, SpillError> {
        let places = Places::read(conn, false).map_err(SpillError::Sql)?;
        let mut more: Vec<PlacedEdge> = Vec::new();
        {
            let mut stmt = conn.prepare_cached(more_sql).map_err(SpillError::Sql)?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, DefId>(0)?,
                        r.get::<_, DefId>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .map_err(SpillError::Sql)?;
            for row in rows {
                let (from, to, rung) = row.map_err(SpillError::Sql)?;
                more.extend(places.edge(from, to, rung, floor));
            }
        }
        let csr = Csr::build(places.ids.len(), |sink| {
            for edge in spill.read().map_err(SpillError::Io)? {
                let (from, to, rung) = edge.map_err(SpillError::Io)?;
                if let Some(edge) = places.edge(from, to, rung, floor) {
                    sink(edge);
                }
            }
            more.iter().for_each(|e| sink(*e));
            Ok(())
        })?;
        Ok(places.with(csr))
    }
}

/// The definitions in id order (and their files, when asked).
struct Places {
    ids: Vec<DefId>,
    files: Vec<FileId>,
    dense: bool,
}

impl Places {
    fn read(conn: &Connection, with_files: bool) -> rusqlite::Result<Self> {
        let mut ids: Vec<DefId> = Vec::new();
        let mut files: Vec<FileId> = Vec::new();
        let mut stmt = conn.prepare_cached("SELECT id, file_id FROM defs ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, DefId>(0)?, r.get::<_, FileId>(1)?)))?;
        for row in rows {
            let (id, file) = row?;
            ids.push(id);
            if with_files {
                files.push(file);
            }
        }
        // Ids are usually dense (a clean build numbers them in order): then an id is its
        // place.
        let n = ids.len();
        let dense = n > 0 && ids[n - 1].0 - ids[0].0 + 1 == n as i64;
        Ok(Places { ids, files, dense })
    }

    fn at(&self, id: DefId) -> Option<u32> {
        let place = if self.dense {
            let base = self.ids.first().copied().unwrap_or_default();
            usize::try_from(id.0 - base.0)
                .ok()
                .filter(|i| *i < self.ids.len())
        } else {
            self.ids.binary_search(&id).ok()
        };
        place.and_then(|p| u32::try_from(p).ok())
    }

    /// The edge over places, unless below `floor`, a loop, or not between definitions.
    fn edge(&self, from: DefId, to: DefId, rung: i64, floor: f64) -> Option<PlacedEdge> {
        if rung_of(rung).confidence() < floor || from == to {
            return None;
        }
        Some((self.at(from)?, self.at(to)?, u8::try_from(rung).ok()?))
    }

    fn with(self, csr: Csr) -> RankGraph {
        RankGraph {
            ids: self.ids,
            files: self.files,
            csr,
        }
    }
}

/// The rank graph's edges as a build that resolves every file writes them (a kernel-size
/// tree has millions: reading them back from the tables costs seconds), in a file beside
/// the index, removed when dropped. Records of 17 bytes: from, to (little-endian), rung.
pub(crate) struct EdgeSpill {
    path: PathBuf,
    out: BufWriter<std::fs::File>,
}

const EDGE_RECORD: usize = 17;

impl EdgeSpill {
    /// Written to `path` (replaced if it exists: a build holds the index's write lock).
    pub(crate) fn create(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::create(path)?;
        Ok(EdgeSpill {
            path: path.to_owned(),
            out: BufWriter::with_capacity(1 << 20, file),
        })
    }

    pub(crate) fn push(&mut self, from: DefId, to: DefId, rung: i64) -> std::io::Result<()> {
        let mut record = [0u8; EDGE_RECORD];
        record[..8].copy_from_slice(&from.0.to_le_bytes());
        record[8..16].copy_from_slice(&to.0.to_le_bytes());
        record[16] = u8::try_from(rung).unwrap_or(u8::MAX);
        self.out.write_all(&record)
    }

    /// Every edge pushed, in order.
    fn read(
        &mut self,
    ) -> std::io::Result<impl Iterator<Item = std::io::Result<(DefId, DefId, i64)>>> {
        self.out.flush()?;
        let mut input = BufReader::with_capacity(1 << 20, std::fs::File::open(&self.path)?);
        Ok(std::iter::from_fn(move || {
            let mut record = [0u8; EDGE_RECORD];
            match input.read_exact(&mut record) {
                Ok(()) => {
                    let from = i64::from_le_bytes(record[..8].try_into().unwrap_or_default());
                    let to = i64::from_le_bytes(record[8..16].try_into().unwrap_or_default());
                    let (from, to) = (DefId(from), DefId(to));
                    Some(Ok((from, to, i64::from(record[16]))))
                }
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => None,
                Err(e) => Some(Err(e)),
            }
        }))
    }
}

impl Drop for EdgeSpill {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Why the whole computation after a build could not read its edges.
#[derive(Debug)]
pub(crate) enum SpillError {
    Sql(rusqlite::Error),
    Io(std::io::Error),
}

/// Whether the precise tier stored anything (its rows change which edges count, and the
/// kept ranks are not kept current through them).
pub(crate) fn precise_rows(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM precise) OR EXISTS(SELECT 1 FROM precise_fanout)
           OR EXISTS(SELECT 1 FROM precise_implements)",
        [],
        |r| r.get::<_, bool>(0),
    )
}

/// Whether the index keeps the ranks of its current edges.
pub(crate) fn kept(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT 1 FROM meta WHERE key = 'ranks'", [], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// The kept ranks no longer describe the edges (a write that did not keep them current).
pub(crate) fn forget(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM meta WHERE key IN ('ranks', 'ranks_total')", [])?;
    Ok(())
}

/// Keeps `y` (by place in `ids`) as the whole tree's ranks.
pub(crate) fn keep(tx: &Connection, ids: &[DefId], y: &[f64]) -> rusqlite::Result<()> {
    tx.execute_batch(
        "DELETE FROM rank_residuals; DROP INDEX IF EXISTS ranks_score; DELETE FROM ranks;",
    )?;
    {
        let mut insert = tx.prepare_cached("INSERT INTO ranks(def_id, score) VALUES (?1, ?2)")?;
        for (id, value) in ids.iter().zip(y) {
            if (value - 1.0).abs() > AT_ONE {
                insert.execute(params![id, value])?;
            }
        }
    }
    tx.execute_batch("CREATE INDEX ranks_score ON ranks(score);")?;
    let total: f64 = y.iter().sum();
    set_total(tx, total)?;
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('ranks', '1')",
        [],
    )?;
    Ok(())
}

fn set_total(tx: &Connection, total: f64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('ranks_total', ?1)",
        [total.to_string()],
    )?;
    Ok(())
}

fn total(conn: &Connection) -> rusqlite::Result<f64> {
    let text: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'ranks_total'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(text
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|t| *t > 0.0)
        .unwrap_or(1.0))
}

/// The `limit` best kept ranks, best first (ties by id), each over the sum of all.
pub(crate) fn top(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<(DefId, f64)>> {
    let total = total(conn)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut out: Vec<(DefId, f64)> = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT k.def_id, k.score FROM ranks k JOIN defs d ON d.id = k.def_id
              WHERE k.score >= 1.0 ORDER BY k.score DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit], |r| {
            Ok((r.get::<_, DefId>(0)?, r.get::<_, f64>(1)?))
        })?;
        for row in rows {
            out.push(row?);
        }
    }
    // Then the definitions nothing reaches (a rank of exactly 1, no row), by id, and last
    // any kept below 1 (an estimate a hair under it).
    if (out.len() as i64) < limit {
        let mut stmt = conn.prepare_cached(
            "SELECT d.id FROM defs d WHERE NOT EXISTS (SELECT 1 FROM ranks k WHERE k.def_id = d.id)
              ORDER BY d.id LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit - out.len() as i64], |r| r.get::<_, DefId>(0))?;
        for row in rows {
            out.push((row?, 1.0));
        }
    }
    if (out.len() as i64) < limit {
        let mut stmt = conn.prepare_cached(
            "SELECT k.def_id, k.score FROM ranks k JOIN defs d ON d.id = k.def_id
              WHERE k.score < 1.0 ORDER BY k.score DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit - out.len() as i64], |r| {
            Ok((r.get::<_, DefId>(0)?, r.get::<_, f64>(1)?))
        })?;
        for row in rows {
            out.push(row?);
        }
    }
    // Equal scores by id, as a whole computation orders them.
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out.into_iter().map(|(id, y)| (id, y / total)).collect())
}

/// The kept rank of each of `ids` that is a definition, over the sum of all.
pub(crate) fn scores_of(conn: &Connection, ids: &[DefId]) -> rusqlite::Result<HashMap<DefId, f64>> {
    let total = total(conn)?;
    let mut stmt = conn.prepare_cached(
        "SELECT d.id, IFNULL(k.score, 1.0) FROM defs d LEFT JOIN ranks k ON k.def_id = d.id
          WHERE d.id = ?1",
    )?;
    let mut out = HashMap::new();
    for id in ids {
        if let Some((id, y)) = stmt
            .query_row([id], |r| Ok((r.get::<_, DefId>(0)?, r.get::<_, f64>(1)?)))
            .optional()?
        {
            out.insert(id, y / total);
        }
    }
    Ok(out)
}

/// A walk that restarts at `focus` (definitions), by local pushes from them: only what the
/// focus reaches is visited, each file's edges read once. Best first (ties by id), each over
/// the sum; what the focus does not reach is not listed (its rank is 0).
pub(crate) fn focused(
    conn: &Connection,
    focus: &[DefId],
    limit: usize,
) -> rusqlite::Result<Vec<(DefId, f64)>> {
    let restart = 1.0 / focus.len().max(1) as f64;
    let mut walk = KeptRanks {
        from_kept: false,
        epsilon: FOCUS_EPSILON,
        budget: FOCUS_BUDGET,
        values: HashMap::new(),
        changed: HashSet::new(),
        removed: HashSet::new(),
        residual: focus.iter().map(|id| (*id, restart)).collect(),
        total: 0.0,
        edges: HashMap::new(),
        files_read: HashSet::new(),
        own_and_fanout: None,
    };
    walk.push(conn, HashMap::new())?;
    let total = walk.total.max(f64::MIN_POSITIVE);
    let mut out: Vec<(DefId, f64)> = walk.values.into_iter().filter(|(_, v)| *v > 0.0).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(limit);
    Ok(out.into_iter().map(|(id, v)| (id, v / total)).collect())
}

/// Which `fills` rows a file's edges are read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FillsAsOf {
    /// The table as it is.
    Now,
    /// As it was when the update's [`RankUpkeep::begin`] started counting its changes:
    /// another file's rewrite may have deleted and re-inserted rows before this file is
    /// noted.
    UpdateStart,
}

/// The rank graph's out-edges of the references in one file, by source, at the default
/// floor: the rows of `rank_edges_sql` for one file. A file the precise tier says nothing
/// of, while it relates no implementations anywhere (a kernel's C files beside its scripts),
/// reads the plain form, which a focused walk over thousands of files needs.
pub(crate) fn file_edges(
    tx: &Connection,
    file: FileId,
    fills: FillsAsOf,
) -> rusqlite::Result<HashMap<DefId, Vec<(DefId, f64)>>> {
    let (untouched, no_fills) = tx
        .prepare_cached(
            "SELECT NOT (EXISTS (SELECT 1 FROM precise WHERE file_id = ?1)
                 OR EXISTS (SELECT 1 FROM precise_fanout WHERE file_id = ?1)
                 OR EXISTS (SELECT 1 FROM precise_implements)),
               NOT EXISTS (SELECT 1 FROM fills)",
        )?
        .query_row([file], |r| Ok((r.get::<_, bool>(0)?, r.get::<_, bool>(1)?)))?;
    let sql = match (untouched, no_fills && fills == FillsAsOf::Now) {
        // Without a fill anywhere, no probe of `fills` per reference (a focused walk over
        // a kernel-size tree reads five hundred files).
        (true, true) => OWN_AND_FANOUT_FILE_EDGES_SQL.to_owned(),
        (true, false) => plain_file_edges_sql(fills),
        (false, _) => precise_file_edges_sql(fills),
    };
    edges_by_source(tx, &sql, file)
}

/// Whether every file's edges are its references' own and dispatch ones: no precise row
/// and no fill anywhere (a kernel's C tree). Asked once per walk, not once per file.
fn own_and_fanout_everywhere(tx: &Connection) -> rusqlite::Result<bool> {
    tx.prepare_cached(
        "SELECT NOT (EXISTS (SELECT 1 FROM precise) OR EXISTS (SELECT 1 FROM precise_fanout)
           OR EXISTS (SELECT 1 FROM precise_implements) OR EXISTS (SELECT 1 FROM fills))",
    )?
    .query_row([], |r| r.get(0))
}

/// The rows of `sql` (source, target, rung) for `file`, as out-edges by source at the default
/// floor, each source's sorted.
fn edges_by_source(
    tx: &Connection,
    sql: &str,
    file: FileId,
) -> rusqlite::Result<HashMap<DefId, Vec<(DefId, f64)>>> {
    let mut stmt = tx.prepare_cached(sql)?;
    let rows = stmt.query_map([file], |r| {
        Ok((
            r.get::<_, DefId>(0)?,
            r.get::<_, DefId>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    let mut out: HashMap<DefId, Vec<(DefId, f64)>> = HashMap::new();
    for row in rows {
        let (from, to, rung) = row?;
        let w = rung_of(rung).confidence();
        if w < DEFAULT_MIN_CONFIDENCE || from == to {
            continue;
        }
        out.entry(from).or_default().push((to, w));
    }
    for edges in out.values_mut() {
        edges.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    Ok(out)
}

/// The fill targets of each reference: every row of `fills` counts 1, and at the update's
/// start each change counted so far is undone (a deleted row counts again, an inserted one
/// no more); a target is there while its count is above 0. `sites` names the references'
/// targets to look the fills up by.
fn undone_fills(fills: FillsAsOf, sites: &str) -> String {
    match fills {
        FillsAsOf::UpdateStart => format!(
            "UNION ALL
             SELECT s.ord, c.def_id, -c.delta FROM {sites} s
               JOIN temp.rank_fill_changes c ON c.implemented_id = s.target_id"
        ),
        FillsAsOf::Now => String::new(),
    }
}

/// A file's references' own edges and their dispatch (fan-out) edges, as [`file_edges`]'
/// rows.
const OWN_AND_FANOUT_FILE_EDGES_SQL: &str = "SELECT r.enclosing_id, r.target_id, r.rung FROM refs r
          WHERE r.file_id = ?1 AND r.target_id IS NOT NULL AND r.enclosing_id IS NOT NULL
         UNION ALL
         SELECT r.enclosing_id, x.target_id, 4 FROM fanout x
           JOIN refs r ON r.file_id = x.file_id AND r.ord = x.ord
          WHERE x.file_id = ?1 AND r.enclosing_id IS NOT NULL";

/// [`file_edges`]' rows for a file the precise tier says nothing of, when it relates no
/// implementations anywhere: the references' own edges, their dispatch (fan-out) edges and
/// the members that fill what they call.
fn plain_file_edges_sql(fills: FillsAsOf) -> String {
    let undone = undone_fills(
        fills,
        "(SELECT ord, target_id FROM refs WHERE file_id = ?1
           UNION ALL SELECT ord, target_id FROM fanout WHERE file_id = ?1)",
    );
    format!(
        "{OWN_AND_FANOUT_FILE_EDGES_SQL}
         UNION ALL
         SELECT r.enclosing_id, u.target_id, 4 FROM (
           SELECT ord, target_id FROM (
             SELECT r.ord, f.def_id AS target_id, 1 AS n FROM refs r
               JOIN fills f ON f.implemented_id = r.target_id
              WHERE r.file_id = ?1
             UNION ALL
             SELECT x.ord, f.def_id, 1 FROM fanout x
               JOIN fills f ON f.implemented_id = x.target_id
              WHERE x.file_id = ?1
             {undone})
           GROUP BY ord, target_id HAVING SUM(n) > 0) u
           JOIN refs r ON r.file_id = ?1 AND r.ord = u.ord
          WHERE r.enclosing_id IS NOT NULL"
    )
}

/// [`file_edges`]' rows in general: a reference's own edge unless the precise tier spoke
/// for it, the precise tier's, the dispatch edges (the graph's own unless the precise tier
/// gave the reference another target, the precise tier's), and the members that implement
/// or fill what each of its targets is.
fn precise_file_edges_sql(fills: FillsAsOf) -> String {
    let undone = undone_fills(fills, "fill_sites");
    format!(
        "WITH overridden(ord, target_id) AS (
           SELECT ord, target_id FROM precise WHERE file_id = ?1),
         own(ord, target_id) AS (
           SELECT r.ord, r.target_id FROM refs r
            WHERE r.file_id = ?1 AND r.target_id IS NOT NULL
              AND r.ord NOT IN (SELECT ord FROM overridden)
           UNION ALL
           SELECT ord, target_id FROM overridden WHERE target_id IS NOT NULL
           UNION ALL
           SELECT ord, target_id FROM precise_fanout WHERE file_id = ?1),
         fill_sites(ord, target_id) AS (
           SELECT ord, target_id FROM own
           UNION ALL
           SELECT x.ord, x.target_id FROM fanout x JOIN refs r
               ON r.file_id = x.file_id AND r.ord = x.ord
            WHERE x.file_id = ?1
              AND NOT EXISTS (SELECT 1 FROM overridden p
                               WHERE p.ord = x.ord AND p.target_id IS NOT r.target_id))
         SELECT r.enclosing_id, r.target_id, r.rung FROM refs r
          WHERE r.file_id = ?1 AND r.target_id IS NOT NULL AND r.enclosing_id IS NOT NULL
            AND r.ord NOT IN (SELECT ord FROM overridden)
         UNION ALL
         SELECT r.enclosing_id, p.target_id, 5 FROM overridden p
           JOIN refs r ON r.file_id = ?1 AND r.ord = p.ord
          WHERE p.target_id IS NOT NULL AND r.enclosing_id IS NOT NULL
         UNION ALL
         SELECT r.enclosing_id, x.target_id, 4 FROM fanout x
           JOIN refs r ON r.file_id = x.file_id AND r.ord = x.ord
          WHERE x.file_id = ?1 AND r.enclosing_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM overridden p
                             WHERE p.ord = x.ord AND p.target_id IS NOT r.target_id)
         UNION ALL
         SELECT r.enclosing_id, y.target_id, 4 FROM precise_fanout y
           JOIN refs r ON r.file_id = y.file_id AND r.ord = y.ord
          WHERE y.file_id = ?1 AND r.enclosing_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM fanout x
                             WHERE x.file_id = y.file_id AND x.ord = y.ord
                               AND x.target_id = y.target_id)
         UNION ALL
         SELECT r.enclosing_id, u.target_id, 4 FROM (
           SELECT ord, target_id FROM (
             SELECT s.ord, i.def_id AS target_id, 1 AS n FROM own s
               JOIN precise_implements i ON i.implemented_id = s.target_id
             UNION ALL
             SELECT s.ord, f.def_id, 1 FROM fill_sites s
               JOIN fills f ON f.implemented_id = s.target_id
             {undone})
           GROUP BY ord, target_id HAVING SUM(n) > 0) u
           JOIN refs r ON r.file_id = ?1 AND r.ord = u.ord
          WHERE r.enclosing_id IS NOT NULL"
    )
}

fn file_defs(tx: &Connection, file: FileId) -> rusqlite::Result<Vec<DefId>> {
    let mut stmt = tx.prepare_cached("SELECT id FROM defs WHERE file_id = ?1")?;
    let rows = stmt.query_map([file], |r| r.get::<_, DefId>(0))?;
    rows.collect()
}

/// What an update's files held before it wrote, for keeping the ranks current
/// ([`RankUpkeep::finish`]). Read before each file's references are rewritten or
/// re-resolved.
///
/// A file's edges are its own rows but one: the members that fill what its references call
/// come from the `fills` rows of any file, which another file's removal or resolution may
/// change under it. Temporary triggers count each `fills` row deleted and inserted while
/// the update runs: a file noted after such a change reads its edges with the changes
/// undone ([`FillsAsOf::UpdateStart`]), and any net change forgets the kept ranks (for the
/// next whole computation), as files never noted then had their dispatch edges changed.
/// The precise tier's rows are watched the same way: a net change in what it says
/// implements what (any file's), or a change in a file's precise rows that was not noted
/// before it happened, forgets the kept ranks.
#[derive(Debug, Default)]
pub(crate) struct RankUpkeep {
    files: BTreeSet<FileId>,
    edges: HashMap<DefId, Vec<(DefId, f64)>>,
    defs: HashSet<DefId>,
    /// A file's precise rows changed before it was noted.
    unnoted_precise_change: bool,
}

impl RankUpkeep {
    /// Starts watching `fills` and the precise tier's rows (inside the writer's transaction:
    /// rolled back with it).
    pub(crate) fn begin(tx: &Connection) -> rusqlite::Result<Self> {
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS rank_fill_changes(
               def_id INTEGER NOT NULL, implemented_id INTEGER NOT NULL, delta INTEGER NOT NULL);
             DELETE FROM temp.rank_fill_changes;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_fill_deleted AFTER DELETE ON main.fills
             BEGIN
               INSERT INTO rank_fill_changes VALUES (old.def_id, old.implemented_id, -1);
             END;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_fill_inserted AFTER INSERT ON main.fills
             BEGIN
               INSERT INTO rank_fill_changes VALUES (new.def_id, new.implemented_id, 1);
             END;
             CREATE TEMP TABLE IF NOT EXISTS rank_implements_changes(
               def_id INTEGER NOT NULL, implemented_id INTEGER NOT NULL, delta INTEGER NOT NULL);
             DELETE FROM temp.rank_implements_changes;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_implements_deleted
               AFTER DELETE ON main.precise_implements
             BEGIN
               INSERT INTO rank_implements_changes VALUES (old.def_id, old.implemented_id, -1);
             END;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_implements_inserted
               AFTER INSERT ON main.precise_implements
             BEGIN
               INSERT INTO rank_implements_changes VALUES (new.def_id, new.implemented_id, 1);
             END;
             CREATE TEMP TABLE IF NOT EXISTS rank_precise_changes(file_id INTEGER NOT NULL);
             DELETE FROM temp.rank_precise_changes;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_precise_deleted AFTER DELETE ON main.precise
             BEGIN INSERT INTO rank_precise_changes VALUES (old.file_id); END;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_precise_inserted AFTER INSERT ON main.precise
             BEGIN INSERT INTO rank_precise_changes VALUES (new.file_id); END;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_precise_updated AFTER UPDATE ON main.precise
             BEGIN INSERT INTO rank_precise_changes VALUES (old.file_id), (new.file_id); END;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_precise_fanout_deleted
               AFTER DELETE ON main.precise_fanout
             BEGIN INSERT INTO rank_precise_changes VALUES (old.file_id); END;
             CREATE TEMP TRIGGER IF NOT EXISTS rank_precise_fanout_inserted
               AFTER INSERT ON main.precise_fanout
             BEGIN INSERT INTO rank_precise_changes VALUES (new.file_id); END;",
        )?;
        Ok(RankUpkeep::default())
    }

    /// The update does not keep the ranks (it computes them anew, or forgets them).
    pub(crate) fn abandon(self, tx: &Connection) -> rusqlite::Result<()> {
        Self::stop_watching(tx)
    }

    fn stop_watching(tx: &Connection) -> rusqlite::Result<()> {
        tx.execute_batch(
            "DROP TRIGGER IF EXISTS temp.rank_fill_deleted;
             DROP TRIGGER IF EXISTS temp.rank_fill_inserted;
             DELETE FROM temp.rank_fill_changes;
             DROP TRIGGER IF EXISTS temp.rank_implements_deleted;
             DROP TRIGGER IF EXISTS temp.rank_implements_inserted;
             DELETE FROM temp.rank_implements_changes;
             DROP TRIGGER IF EXISTS temp.rank_precise_deleted;
             DROP TRIGGER IF EXISTS temp.rank_precise_inserted;
             DROP TRIGGER IF EXISTS temp.rank_precise_updated;
             DROP TRIGGER IF EXISTS temp.rank_precise_fanout_deleted;
             DROP TRIGGER IF EXISTS temp.rank_precise_fanout_inserted;
             DELETE FROM temp.rank_precise_changes;",
        )
    }

    /// Notes what `file` holds now, once per file.
    pub(crate) fn before(&mut self, tx: &Connection, file: FileId) -> rusqlite::Result<()> {
        if !self.files.insert(file) {
            return Ok(());
        }
        let changed_already = tx
            .prepare_cached("SELECT 1 FROM temp.rank_precise_changes WHERE file_id = ?1 LIMIT 1")?
            .query_row([file], |_| Ok(()))
            .optional()?
            .is_some();
        self.unnoted_precise_change |= changed_already;
        self.edges
            .extend(file_edges(tx, file, FillsAsOf::UpdateStart)?);
        self.defs.extend(file_defs(tx, file)?);
        Ok(())
    }

    /// Whether what the update changed reaches beyond the noted files' own rows: a net
    /// change in `fills` or in the precise tier's implementations, or a file's precise rows
    /// changed before it was noted or without being noted.
    fn beyond_noted(&self, tx: &Connection) -> rusqlite::Result<bool> {
        let any = |sql: &str| -> rusqlite::Result<bool> {
            Ok(tx.query_row(sql, [], |_| Ok(())).optional()?.is_some())
        };
        if self.unnoted_precise_change
            || any(
                "SELECT 1 FROM temp.rank_fill_changes GROUP BY def_id, implemented_id
                     HAVING SUM(delta) != 0 LIMIT 1",
            )?
            || any(
                "SELECT 1 FROM temp.rank_implements_changes GROUP BY def_id, implemented_id
                     HAVING SUM(delta) != 0 LIMIT 1",
            )?
        {
            return Ok(true);
        }
        let mut changed = tx.prepare("SELECT DISTINCT file_id FROM temp.rank_precise_changes")?;
        let files = changed.query_map([], |r| r.get::<_, FileId>(0))?;
        for file in files {
            if !self.files.contains(&file?) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Once the update's rows are written: the kept ranks follow the change in the noted
    /// files' edges and definitions, or are forgotten when the change reaches beyond those
    /// files' own rows ([`RankUpkeep::beyond_noted`]).
    pub(crate) fn finish(self, tx: &Connection) -> rusqlite::Result<PushStats> {
        let beyond = self.beyond_noted(tx)?;
        Self::stop_watching(tx)?;
        if beyond {
            forget(tx)?;
            return Ok(PushStats::default());
        }
        let mut new_edges: HashMap<DefId, Vec<(DefId, f64)>> = HashMap::new();
        let mut new_defs: HashSet<DefId> = HashSet::new();
        for file in &self.files {
            new_edges.extend(file_edges(tx, *file, FillsAsOf::Now)?);
            new_defs.extend(file_defs(tx, *file)?);
        }
        let mut ranks = KeptRanks::load(tx)?;
        // Definitions added start at 0 with their restart as residual; those removed take
        // their rank with them.
        for id in new_defs.difference(&self.defs) {
            ranks.values.insert(*id, 0.0);
            *ranks.residual.entry(*id).or_default() += 1.0;
        }
        // A removed source takes back what it gave by its rank before the update, read
        // before its entry is reset below.
        let mut removed_values: HashMap<DefId, f64> = HashMap::new();
        for id in self.defs.difference(&new_defs) {
            let value = ranks.value(tx, *id)?;
            removed_values.insert(*id, value);
            ranks.total -= value;
            ranks.values.insert(*id, 1.0);
            ranks.removed.insert(*id);
        }
        // Each source whose edges changed: the share its rank gave along the old edges is
        // taken back and given along the new ones.
        let empty = Vec::new();
        let sources: BTreeSet<DefId> = self.edges.keys().chain(new_edges.keys()).copied().collect();
        for source in sources {
            let old = self.edges.get(&source).unwrap_or(&empty);
            let new = new_edges.get(&source).unwrap_or(&empty);
            if old == new {
                continue;
            }
            let value = if let Some(value) = removed_values.get(&source) {
                *value
            } else if self.defs.contains(&source) {
                ranks.value(tx, source)?
            } else {
                0.0
            };
            if value == 0.0 {
                continue;
            }
            for (edges, sign) in [(old, -1.0), (new, 1.0)] {
                let total: f64 = edges.iter().map(|e| e.1).sum();
                if total <= 0.0 {
                    continue;
                }
                for (target, w) in edges {
                    *ranks.residual.entry(*target).or_default() +=
                        sign * DAMPING * value * w / total;
                }
            }
        }
        for id in &ranks.removed {
            ranks.residual.remove(id);
        }
        let stats = ranks.push(tx, new_edges)?;
        ranks.write(tx)?;
        Ok(stats)
    }
}

/// What keeping the ranks current did.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PushStats {
    pub(crate) pushes: usize,
    pub(crate) left: usize,
}

/// Ranks being pushed, with the residual still to push: the kept ranks an update reads and
/// changes, or a focused walk's (which start at 0).
struct KeptRanks {
    /// Whether a value not read yet is the kept rank (else 0).
    from_kept: bool,
    epsilon: f64,
    budget: usize,
    values: HashMap<DefId, f64>,
    changed: HashSet<DefId>,
    removed: HashSet<DefId>,
    residual: HashMap<DefId, f64>,
    total: f64,
    /// Out-edges by source, of each file read so far.
    edges: HashMap<DefId, Vec<(DefId, f64)>>,
    files_read: HashSet<FileId>,
    /// [`own_and_fanout_everywhere`], once asked.
    own_and_fanout: Option<bool>,
}

impl KeptRanks {
    fn load(tx: &Connection) -> rusqlite::Result<Self> {
        let mut residual = HashMap::new();
        {
            let mut stmt = tx.prepare_cached("SELECT def_id, value FROM rank_residuals")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, DefId>(0)?, r.get::<_, f64>(1)?)))?;
            for row in rows {
                let (id, value) = row?;
                residual.insert(id, value);
            }
        }
        Ok(KeptRanks {
            from_kept: true,
            epsilon: PUSH_EPSILON,
            budget: PUSH_BUDGET,
            values: HashMap::new(),
            changed: HashSet::new(),
            removed: HashSet::new(),
            residual,
            total: total(tx)?,
            edges: HashMap::new(),
            files_read: HashSet::new(),
            own_and_fanout: None,
        })
    }

    fn value(&mut self, tx: &Connection, id: DefId) -> rusqlite::Result<f64> {
        if let Some(v) = self.values.get(&id) {
            return Ok(*v);
        }
        if !self.from_kept {
            return Ok(0.0);
        }
        let v: f64 = tx
            .prepare_cached("SELECT score FROM ranks WHERE def_id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?
            .unwrap_or(1.0);
        self.values.insert(id, v);
        Ok(v)
    }

    /// `id`'s out-edges now (its file's, read once per file).
    fn out_edges(
        &mut self,
        tx: &Connection,
        id: DefId,
    ) -> rusqlite::Result<Option<&Vec<(DefId, f64)>>> {
        if !self.edges.contains_key(&id) {
            let file: Option<FileId> = tx
                .prepare_cached("SELECT file_id FROM defs WHERE id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            if let Some(file) = file {
                if self.files_read.insert(file) {
                    let own_and_fanout = match self.own_and_fanout {
                        Some(known) => known,
                        None => *self.own_and_fanout.insert(own_and_fanout_everywhere(tx)?),
                    };
                    let edges = if own_and_fanout {
                        edges_by_source(tx, OWN_AND_FANOUT_FILE_EDGES_SQL, file)?
                    } else {
                        file_edges(tx, file, FillsAsOf::Now)?
                    };
                    for (source, edges) in edges {
                        self.edges.entry(source).or_insert(edges);
                    }
                }
                // A definition without out-edges is not looked up again.
                self.edges.entry(id).or_default();
            }
        }
        Ok(self.edges.get(&id))
    }

    /// Pushes residuals above its epsilon until none is left or the budget is spent.
    fn push(
        &mut self,
        tx: &Connection,
        known: HashMap<DefId, Vec<(DefId, f64)>>,
    ) -> rusqlite::Result<PushStats> {
        self.edges.extend(known);
        // In id order: the pushes' order decides where the residuals under epsilon stay, so
        // a map's near ties would otherwise follow the hash map's order from call to call.
        let mut start: Vec<DefId> = self
            .residual
            .iter()
            .filter(|(_, r)| r.abs() > self.epsilon)
            .map(|(id, _)| *id)
            .collect();
        start.sort_unstable();
        let mut queue: VecDeque<DefId> = start.into();
        let mut queued: HashSet<DefId> = queue.iter().copied().collect();
        let mut pushes = 0;
        while let Some(id) = queue.pop_front() {
            queued.remove(&id);
            if pushes >= self.budget {
                break;
            }
            let Some(r) = self.residual.remove(&id) else {
                continue;
            };
            if r.abs() <= self.epsilon {
                if r != 0.0 {
                    self.residual.insert(id, r);
                }
                continue;
            }
            pushes += 1;
            let value = self.value(tx, id)? + r;
            self.values.insert(id, value);
            self.changed.insert(id);
            self.total += r;
            let Some(edges) = self.out_edges(tx, id)? else {
                continue;
            };
            let total: f64 = edges.iter().map(|e| e.1).sum();
            if total <= 0.0 {
                continue;
            }
            let shares: Vec<(DefId, f64)> = edges
                .iter()
                .map(|(t, w)| (*t, DAMPING * r * w / total))
                .collect();
            for (target, share) in shares {
                if self.removed.contains(&target) {
                    continue;
                }
                let slot = self.residual.entry(target).or_default();
                *slot += share;
                if slot.abs() > self.epsilon && queued.insert(target) {
                    queue.push_back(target);
                }
            }
        }
        let left = self
            .residual
            .values()
            .filter(|r| r.abs() > self.epsilon)
            .count();
        Ok(PushStats { pushes, left })
    }

    fn write(&self, tx: &Connection) -> rusqlite::Result<()> {
        {
            let mut delete = tx.prepare_cached("DELETE FROM ranks WHERE def_id = ?1")?;
            let mut upsert =
                tx.prepare_cached("INSERT OR REPLACE INTO ranks(def_id, score) VALUES (?1, ?2)")?;
            for id in &self.removed {
                delete.execute([id])?;
            }
            for id in self.changed.iter().chain(
                self.values
                    .iter()
                    .filter(|(_, v)| **v == 0.0)
                    .map(|(id, _)| id),
            ) {
                if self.removed.contains(id) {
                    continue;
                }
                let value = self.values.get(id).copied().unwrap_or(1.0);
                if (value - 1.0).abs() <= AT_ONE {
                    delete.execute([id])?;
                } else {
                    upsert.execute(params![id, value])?;
                }
            }
        }
        tx.execute("DELETE FROM rank_residuals", [])?;
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO rank_residuals(def_id, value) VALUES (?1, ?2)")?;
            for (id, r) in &self.residual {
                if r.abs() > PUSH_EPSILON && !self.removed.contains(id) {
                    insert.execute(params![id, r])?;
                }
            }
        }
        set_total(tx, self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a uniform restart, `y` over its sum is the rank of a walk whose dangling
    /// walks restart uniformly (the stationary distribution `rank` used to compute).
    #[test]
    fn the_kept_value_over_its_sum_is_the_walks_rank() {
        // 0 → 1 → 2, 0 → 2, 3 dangling, 2 → 0.
        // Rungs: 0 exact (1.0), 3 name (a lower weight).
        let edges: Vec<PlacedEdge> = vec![(0, 1, 0), (1, 2, 0), (0, 2, 3), (2, 0, 0)];
        let n = 4;
        let csr = Csr::build(n, |sink| {
            edges.iter().for_each(|e| sink(*e));
            Ok::<(), ()>(())
        })
        .unwrap();
        let y = csr.solve(|_| 1.0);
        let sum: f64 = y.iter().sum();
        let x: Vec<f64> = y.iter().map(|v| v / sum).collect();
        let w = weights();
        let edges: Vec<(u32, u32, f64)> = edges
            .iter()
            .map(|(a, b, r)| (*a, *b, w[*r as usize]))
            .collect();
        // The walk with dangling mass spread uniformly, to convergence.
        let mut walk = vec![1.0 / n as f64; n];
        for _ in 0..500 {
            let mut next = vec![(1.0 - DAMPING) / n as f64; n];
            let mut dangling = 0.0;
            for (i, r) in walk.iter().enumerate() {
                let out: Vec<_> = edges.iter().filter(|e| e.0 as usize == i).collect();
                let total: f64 = out.iter().map(|e| e.2).sum();
                if out.is_empty() {
                    dangling += r;
                }
                for e in out {
                    next[e.1 as usize] += DAMPING * r * e.2 / total;
                }
            }
            for v in next.iter_mut() {
                *v += DAMPING * dangling / n as f64;
            }
            walk = next;
        }
        for (a, b) in x.iter().zip(&walk) {
            assert!((a - b).abs() < 1e-3 * b, "{x:?} vs {walk:?}");
        }
    }
}
