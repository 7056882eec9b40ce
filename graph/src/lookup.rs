//! Lookups a tool needs on top of the typed queries: the reference at a position, the files
//! per language, the files that import a file, and the PageRank scores of every definition.

use rusqlite::params;

use crate::index::{rung_code, rung_of, Graph, Result, REF_NAME, REF_RECEIVER};
use crate::query::Callee;
use crate::resolve::Rung;
use crate::table::{DefId, FileId};

/// The outcome a reference takes when the precise tier says its name is no workspace
/// definition (a local, a library's): no edge.
const OUTCOME_PRECISE_NONE: i64 = 3;

impl Graph {
    /// The references `FROM refs r JOIN files f` that `filter` (`WHERE … ORDER BY …`)
    /// selects, as [`Callee`]s: `target` set when resolved at or above `min_confidence`,
    /// else why not (`external`, `ambiguous (N candidates)`, `unknown`, `below the
    /// confidence floor`, `no workspace definition (precise)`). Where the precise tier read
    /// the reference, its word replaces the reference's own edge.
    pub(crate) fn refs_as_callees(
        &self,
        filter: &str,
        params: impl rusqlite::Params,
        min_confidence: f64,
    ) -> Result<Vec<Callee>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                // A precise row overrides the reference's own edge: its target, or (NULL) the
                // indexer's word that the name is no workspace definition.
                "SELECT r.line, r.col, {REF_NAME}, {REF_RECEIVER},
                   CASE WHEN p.ord IS NULL THEN r.outcome WHEN p.target_id IS NULL THEN {PRECISE_NONE}
                     ELSE 0 END,
                   IIF(p.ord IS NULL, r.target_id, p.target_id),
                   IIF(p.ord IS NULL, r.rung, {PRECISE}),
                   r.candidates, r.file_id, r.ord
                 FROM refs r JOIN files f ON f.id = r.file_id
                 LEFT JOIN precise p ON p.file_id = r.file_id AND p.ord = r.ord {filter}",
                PRECISE_NONE = OUTCOME_PRECISE_NONE,
                PRECISE = rung_code(Rung::Precise),
            ))
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map(params, |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, u32>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Option<DefId>>(5)?,
                    r.get::<_, Option<i64>>(6)?,
                    r.get::<_, Option<i64>>(7)?,
                    r.get::<_, FileId>(8)?,
                    r.get::<_, i64>(9)?,
                ))
            })
            .map_err(self.q_err())?;
        let rows: Vec<_> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(self.q_err())?;
        let dispatch_listed = Rung::Dispatch.confidence() >= min_confidence;
        let mut out = Vec::new();
        for (line, column, name, receiver, outcome, target, rung, candidates, file, ord) in rows {
            let rung = rung.map(rung_of);
            let confidence = rung.map(Rung::confidence);
            let mut callee = Callee {
                line,
                column,
                name,
                receiver,
                target: None,
                rung,
                confidence,
                dispatch: Vec::new(),
                unresolved: None,
            };
            match (outcome, target) {
                (0, Some(t)) if confidence.unwrap_or(0.0) >= min_confidence => {
                    callee.target = self.symbol(t)?;
                    if dispatch_listed {
                        callee.dispatch = self.dispatch_targets(file, ord)?;
                    }
                }
                (0, Some(_)) => callee.unresolved = Some("below the confidence floor".into()),
                (2, _) => callee.unresolved = Some("external".into()),
                (OUTCOME_PRECISE_NONE, _) => {
                    callee.unresolved = Some("no workspace definition (precise)".into())
                }
                _ => {
                    callee.unresolved = Some(match candidates.unwrap_or(0) {
                        0 => "unknown".to_owned(),
                        n => format!("ambiguous ({n} candidates)"),
                    })
                }
            }
            out.push(callee);
        }
        Ok(out)
    }

    /// The dispatch targets of one reference, by place.
    fn dispatch_targets(&self, file: FileId, ord: i64) -> Result<Vec<crate::query::Symbol>> {
        let mut stmt = self
            .conn
            // The reference's own dispatch edges (unless the precise tier gave it another
            // target), and the precise tier's.
            .prepare_cached(
                "SELECT x.target_id FROM fanout x
                  WHERE x.file_id = ?1 AND x.ord = ?2
                    AND NOT EXISTS (SELECT 1 FROM precise p JOIN refs r
                                      ON r.file_id = p.file_id AND r.ord = p.ord
                                    WHERE p.file_id = ?1 AND p.ord = ?2
                                      AND p.target_id IS NOT r.target_id)
                 UNION
                 SELECT y.target_id FROM precise_fanout y WHERE y.file_id = ?1 AND y.ord = ?2",
            )
            .map_err(self.q_err())?;
        let ids = stmt
            .query_map(params![file, ord], |r| r.get::<_, DefId>(0))
            .map_err(self.q_err())?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.q_err())?;
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.symbol(id)?);
        }
        out.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        Ok(out)
    }

    /// The references named `name` on 1-based `line` of `path`, the one starting at byte
    /// `column` (1-based) first, resolved as in [`Graph::callees`].
    pub fn references_at(
        &self,
        path: &str,
        line: u32,
        column: u32,
        name: &str,
        min_confidence: f64,
    ) -> Result<Vec<Callee>> {
        self.refs_as_callees(
            "WHERE f.path = ?1 AND r.line = ?2
               AND r.name_id = (SELECT id FROM names WHERE text = ?3) ORDER BY (r.col != ?4), r.col",
            params![path, line, name, column],
            min_confidence,
        )
    }

    /// Indexed files with syntax errors: a definition where such a file did not parse is
    /// not in the index, which an answer that found nothing must say.
    pub fn files_with_syntax_errors(&self) -> Result<usize> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM files WHERE syntax_errors > 0",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| usize::try_from(n).unwrap_or(0))
            .map_err(self.q_err())
    }

    /// Indexed files per language, most first.
    pub fn files_per_language(&self) -> Result<Vec<(String, usize)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT language, COUNT(*) FROM files GROUP BY language
                 ORDER BY COUNT(*) DESC, language",
            )
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(self.q_err())?;
        let mut out = Vec::new();
        for row in rows {
            let (language, n) = row.map_err(self.q_err())?;
            out.push((language, usize::try_from(n).unwrap_or(0)));
        }
        Ok(out)
    }

    /// The files whose resolution looked at `path` (relative): the files that import it (and
    /// those whose imports probed it as a candidate), from the reverse-dependency table.
    pub fn files_probing(&self, path: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.path FROM keys k JOIN deps d ON d.key_id = k.id
                 JOIN files f ON f.id = d.file_id
                 WHERE k.key = 'p:' || ?1 AND f.path != ?1 ORDER BY f.path",
            )
            .map_err(self.q_err())?;
        let rows = stmt
            .query_map([path], |r| r.get::<_, String>(0))
            .map_err(self.q_err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.q_err())
    }
}
