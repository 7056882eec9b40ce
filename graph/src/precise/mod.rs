//! The precise tier: edges from compiler-grade indexers, read from their SCIP output.
//!
//! tree-sitter resolution finds a call's target from names, scopes, imports and the types it
//! can see; where the target depends on what only a type checker knows (a receiver's
//! inferred type, an interface-typed parameter, a re-export chain), an indexer that *is* the
//! checker knows it: `scip-typescript` (TypeScript's own checker), `scip-python` (pyright),
//! `rust-analyzer scip`. The precise tier runs such an indexer over the workspace
//! ([`run`], never on a path that blocks an answer: the host runs it in the background), and
//! [`Graph::import_precise`] records, for each reference tree-sitter extracted at a place the
//! indexer also saw, the definition the indexer says it names (rung `precise`) — or that it
//! names nothing in the workspace (a local, a library's function): then no edge. A reference
//! the indexer did not see keeps its tree-sitter edge. The symbols the indexer relates for
//! "find references" (a class method and the interface method it implements, both ways) give
//! `dispatch` edges: a call through the interface may run the method, and a call of the
//! method uses the interface's contract.
//!
//! What the indexer said of a file holds for the bytes it read: a file changed since then (by
//! the run or behind it) falls back to its tree-sitter edges until the next run
//! ([`PreciseState::pending`] lists those, and every answer's freshness says so). Outputs are
//! cached by content ([`PrecisePlan::key`]: the indexer and the bytes of every file of its
//! languages and every configuration file), so a tree that comes back to a state already
//! indexed (`git checkout` back and forth) is imported again without a run.
//!
//! Indexers run without side effects in the workspace: output and scratch files live in the
//! index's cache folder; scip-typescript gets a generated `tsconfig.json` there when the root
//! has none; rust-analyzer builds into a target folder there. rust-analyzer runs the crate's
//! build scripts and proc macros (its SCIP command cannot turn them off), so it runs only when
//! the host allows workspace code ([`PreciseOptions::workspace_code`]).

mod literals;
mod run;
mod scip_import;
mod tier;

pub use run::{locate, run, PreciseError};
pub use scip_import::PreciseImport;
pub use tier::{IndexerRun, PreciseTier, SharedGraph, SETTLE};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use crate::index::{Graph, GraphError, Result};
use crate::table::{DefId, FileId};

/// A compiler-grade indexer the precise tier can run.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub enum Indexer {
    /// `scip-typescript` (npm `@sourcegraph/scip-typescript`): TypeScript and JavaScript.
    #[serde(rename = "scip-typescript")]
    TypeScript,
    /// `scip-python` (npm `@sourcegraph/scip-python`): Python.
    #[serde(rename = "scip-python")]
    Python,
    /// `rust-analyzer scip`: Rust.
    #[serde(rename = "rust-analyzer scip")]
    Rust,
}

impl Indexer {
    /// Every indexer.
    pub const ALL: [Indexer; 3] = [Indexer::TypeScript, Indexer::Python, Indexer::Rust];

    /// The indexer's name, as `status` and answers say it.
    pub fn name(self) -> &'static str {
        match self {
            Indexer::TypeScript => "scip-typescript",
            Indexer::Python => "scip-python",
            Indexer::Rust => "rust-analyzer scip",
        }
    }

    /// The executable looked up on PATH.
    pub fn binary(self) -> &'static str {
        match self {
            Indexer::TypeScript => "scip-typescript",
            Indexer::Python => "scip-python",
            Indexer::Rust => "rust-analyzer",
        }
    }

    /// The `cc-languages` names of the files it indexes.
    pub fn languages(self) -> &'static [&'static str] {
        match self {
            Indexer::TypeScript => &["typescript", "tsx", "javascript"],
            Indexer::Python => &["python"],
            Indexer::Rust => &["rust"],
        }
    }

    /// How to install it, for `status`.
    pub fn install_hint(self) -> &'static str {
        match self {
            Indexer::TypeScript => {
                "install it with `npm install -g @sourcegraph/scip-typescript` (`cargo xtask \
                 peers` installs it under .peers/npm)"
            }
            Indexer::Python => {
                "install it with `npm install -g @sourcegraph/scip-python` (`cargo xtask peers` \
                 installs it under .peers/npm)"
            }
            Indexer::Rust => {
                "install rust-analyzer (`rustup component add rust-analyzer`, or Debian's \
                 `rust-analyzer` package)"
            }
        }
    }

    /// Whether the symbols it relates (an implementation and what it implements) are one
    /// group for "find references", as its language's checker takes them: TypeScript's
    /// does; pyright does not count an override as a use of the method it overrides.
    pub fn relates_references(self) -> bool {
        matches!(self, Indexer::TypeScript)
    }

    fn meta_key(self) -> String {
        format!("precise:{}", self.binary())
    }
}

/// What the host allows the precise tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreciseOptions {
    /// `false` turns the tier off for this caller (`[graph] precise = false` turns it off
    /// for every one).
    pub enabled: bool,
    /// Whether an indexer that runs the workspace's own code (rust-analyzer: build scripts,
    /// proc macros) may run: `false` on a read-only surface.
    pub workspace_code: bool,
}

impl Default for PreciseOptions {
    fn default() -> Self {
        PreciseOptions {
            enabled: true,
            workspace_code: true,
        }
    }
}

/// What one indexer would do for the tree as the index holds it now.
#[derive(Debug, Clone)]
pub struct PrecisePlan {
    /// The indexer that would run.
    pub indexer: Indexer,
    /// The workspace root, where it runs.
    pub root: PathBuf,
    /// The content key: the indexer and every file it reads (path and hash).
    pub key: String,
    /// The hash of each file of its languages when the plan was made: an import takes only
    /// the files still so.
    pub(crate) hashes: HashMap<String, (FileId, i64)>,
    /// Files of its languages in the index.
    pub files: usize,
    /// Its output for this content is imported already: nothing to do.
    pub current: bool,
    /// Where its output for this content is (or will be) kept.
    pub output: PathBuf,
    /// A scratch folder for the run (outside the workspace).
    pub scratch: PathBuf,
    /// Why it does not run here (the option or surface that keeps it off), when it does not.
    pub skipped: Option<String>,
}

impl PrecisePlan {
    /// Whether its output for this content is in the cache (an import, no run).
    pub fn cached(&self) -> bool {
        self.output.is_file()
    }
}

/// How precise the index is: part of every answer's [`crate::Freshness`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PreciseState {
    /// The indexers whose output is imported.
    pub indexers: Vec<Indexer>,
    /// Files whose references carry the indexer's word.
    pub files: usize,
    /// Files of those indexers' languages changed (or added) since the indexer read the
    /// tree: tree-sitter's edges there until the next run. The first 20.
    pub pending: Vec<String>,
    /// How many such files in all.
    pub pending_total: usize,
    /// Files of their languages the indexers do not read (outside the project their
    /// configuration names: a `tsconfig.json`'s `include`, `[tool.pyright] include`).
    pub not_read: usize,
}

impl PreciseState {
    /// One phrase for a text rendering.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.indexers.iter().map(|i| i.name()).collect();
        let mut s = format!(
            "precise edges ({}) for {} file(s)",
            names.join(", "),
            self.files
        );
        if self.not_read > 0 {
            s.push_str(&format!(
                " ({} file(s) outside what the indexer reads)",
                self.not_read
            ));
        }
        if self.pending_total > 0 {
            s.push_str(&format!(
                "; {} file(s) not yet precise (tree-sitter edges there): {}{}",
                self.pending_total,
                self.pending.join(", "),
                if self.pending_total > self.pending.len() {
                    ", …"
                } else {
                    ""
                }
            ));
        }
        s
    }
}

/// An indexer's output, read and parsed (no lock on the graph is needed for that).
#[derive(Debug)]
pub struct PreciseOutput {
    index: scip::types::Index,
    /// The object-literal arguments of each file the indexer read, by path, with the hash
    /// of the bytes they were found in (parsed here, outside the graph's lock).
    literals: HashMap<String, (i64, Vec<literals::Literal>)>,
}

/// Reads the SCIP file an indexer of `plan` wrote, and what the import needs of the files
/// it describes that takes time (their object-literal arguments): a host calls this before
/// it takes the graph, which the import then holds only to write.
pub fn read_output(plan: &PrecisePlan, path: &Path) -> Result<PreciseOutput> {
    let bytes = std::fs::read(path).map_err(|e| GraphError::Precise {
        indexer: plan.indexer.name(),
        message: format!("cannot read its output {}: {e}", path.display()),
    })?;
    let index = scip_import::parse(&bytes).map_err(|message| GraphError::Precise {
        indexer: plan.indexer.name(),
        message,
    })?;
    let mut found = HashMap::new();
    if plan.indexer.relates_references() {
        let mut parser = cc_languages::Parser::new();
        for document in &index.documents {
            let rel = &document.relative_path;
            if !plan.hashes.contains_key(rel) {
                continue;
            }
            let Ok(bytes) = std::fs::read(plan.root.join(rel)) else {
                continue;
            };
            if let Some(literals) = literals::of_file(&mut parser, rel, &bytes) {
                found.insert(rel.clone(), (crate::index::hash(&bytes), literals));
            }
        }
    }
    Ok(PreciseOutput {
        index,
        literals: found,
    })
}

/// The language-independent configuration files an indexer's content key includes.
fn config_rows(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut stmt = conn.prepare_cached("SELECT path, hash FROM config_files ORDER BY path")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// `?, ?, …` for `n` parameters.
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn files_of(conn: &Connection, languages: &[&str]) -> rusqlite::Result<Vec<(FileId, String, i64)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, path, hash FROM files WHERE language IN ({}) ORDER BY path",
        placeholders(languages.len())
    ))?;
    let rows = stmt.query_map(rusqlite::params_from_iter(languages), |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    rows.collect()
}

/// The most files an import may cover for the kept ranks to follow it (see
/// [`Graph::import_precise`]).
const FOLLOWED_IMPORT_FILES: i64 = 1_000;

impl Graph {
    /// What each indexer whose languages the index holds would do now (see [`PrecisePlan`]).
    pub fn precise_plans(&self, options: &PreciseOptions) -> Result<Vec<PrecisePlan>> {
        let sql = self.q_err();
        let mut plans = Vec::new();
        if !options.enabled || !self.config.precise {
            return Ok(plans);
        }
        let configs = config_rows(&self.conn).map_err(&sql)?;
        for indexer in Indexer::ALL {
            let files = files_of(&self.conn, indexer.languages()).map_err(&sql)?;
            if files.is_empty() {
                continue;
            }
            let mut hasher = xxhash_rust::xxh3::Xxh3::new();
            hasher.update(indexer.binary().as_bytes());
            for (_, path, hash) in &files {
                hasher.update(path.as_bytes());
                hasher.update(&hash.to_le_bytes());
            }
            for (path, hash) in &configs {
                hasher.update(path.as_bytes());
                hasher.update(&hash.to_le_bytes());
            }
            let key = format!("{:016x}", hasher.digest());
            let imported = self.imported_key(indexer)?;
            // Imported for this content, and no file of it waiting: a file changed and
            // changed back (`git checkout`) has the same key but lost its rows meanwhile.
            let current = imported.as_deref() == Some(key.as_str())
                && self.pending_count(indexer.languages()).map_err(&sql)? == 0;
            let dir = self.precise_dir();
            let skipped = self.precise_skip(indexer, options);
            plans.push(PrecisePlan {
                indexer,
                root: self.root.clone(),
                current,
                output: dir.join(format!("{}-{key}.scip", indexer.binary())),
                scratch: dir.join(format!("{}-scratch", indexer.binary())),
                key,
                files: files.len(),
                hashes: files
                    .into_iter()
                    .map(|(id, path, hash)| (path, (id, hash)))
                    .collect(),
                skipped,
            });
        }
        Ok(plans)
    }

    /// Imports the SCIP output of `plan`'s indexer (read by [`read_output`], which a host
    /// does before it takes the graph): replaces what that indexer said before, for every
    /// file still as the plan saw it.
    pub fn import_precise(
        &mut self,
        plan: &PrecisePlan,
        output: &PreciseOutput,
    ) -> Result<PreciseImport> {
        let index = &output.index;
        let root = self.root.clone();
        let db_path = self.db_path.clone();
        let sql = move |source| GraphError::Sqlite {
            path: db_path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&sql)?;
        // The precise tier's rows change the edges of the files it covers: the kept ranks
        // follow that change as they follow an update's (each file's edges read before and
        // after), when it covers a small part of the tree (a kernel's scripts); otherwise, or
        // when the change reaches beyond those files, they are forgotten for the next whole
        // computation, which then costs about what following them would.
        let tree_files: i64 = tx
            .query_row("SELECT COUNT(*) FROM files", [], |r| r.get(0))
            .map_err(&sql)?;
        let small_part = i64::try_from(plan.hashes.len()).is_ok_and(|covered| {
            covered <= FOLLOWED_IMPORT_FILES && covered.saturating_mul(4) <= tree_files
        });
        let mut upkeep = if small_part && crate::ranks::kept(&tx).map_err(&sql)? {
            Some(crate::ranks::RankUpkeep::begin(&tx).map_err(&sql)?)
        } else {
            None
        };
        if let Some(upkeep) = upkeep.as_mut() {
            for (file, _) in plan.hashes.values() {
                upkeep.before(&tx, *file).map_err(&sql)?;
            }
        }
        let mut outcome =
            scip_import::import(&tx, &root, plan, index, &output.literals).map_err(&sql)?;
        match upkeep {
            Some(upkeep) => {
                upkeep.finish(&tx).map_err(&sql)?;
                outcome.ranks_followed = crate::ranks::kept(&tx).map_err(&sql)?;
            }
            None => crate::ranks::forget(&tx).map_err(&sql)?,
        }
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
            params![plan.indexer.meta_key(), plan.key],
        )
        .map_err(&sql)?;
        tx.commit().map_err(&sql)?;
        self.checkpointer.request();
        self.precise_state.replace(None);
        prune_outputs(plan);
        Ok(outcome)
    }

    /// [`Graph::precise_state`], read again only when the index changed since (every
    /// answer's freshness carries it: no scan of the files per answer).
    pub(crate) fn precise_state_cached(&self) -> Option<PreciseState> {
        let version = crate::index::data_version(&self.conn).ok()?;
        if let Some((at, state)) = self.precise_state.borrow().as_ref() {
            if *at == version {
                return state.clone();
            }
        }
        let state = self.precise_state().ok().flatten();
        *self.precise_state.borrow_mut() = Some((version, state.clone()));
        state
    }

    /// How precise the index is now; `None` when no indexer's output is imported.
    pub fn precise_state(&self) -> Result<Option<PreciseState>> {
        let sql = self.q_err();
        let mut indexers = Vec::new();
        for indexer in Indexer::ALL {
            if self.imported_key(indexer)?.is_some() {
                indexers.push(indexer);
            }
        }
        if indexers.is_empty() {
            return Ok(None);
        }
        let languages: Vec<&str> = indexers
            .iter()
            .flat_map(|i| i.languages().iter().copied())
            .collect();
        let (files, not_read): (i64, i64) = self
            .conn
            .query_row(
                "SELECT IFNULL(SUM(read), 0), IFNULL(SUM(1 - read), 0) FROM precise_files",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(&sql)?;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT path FROM files f WHERE language IN ({})
                   AND NOT EXISTS (SELECT 1 FROM precise_files p WHERE p.file_id = f.id)
                 ORDER BY path",
                placeholders(languages.len())
            ))
            .map_err(&sql)?;
        let mut pending = Vec::new();
        let mut pending_total = 0;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(&languages), |r| {
                r.get::<_, String>(0)
            })
            .map_err(&sql)?;
        for row in rows {
            let path = row.map_err(&sql)?;
            if pending.len() < 20 {
                pending.push(path);
            }
            pending_total += 1;
        }
        Ok(Some(PreciseState {
            indexers,
            files: usize::try_from(files).unwrap_or(0),
            pending,
            pending_total,
            not_read: usize::try_from(not_read).unwrap_or(0),
        }))
    }

    /// Files of `languages` with no word from an indexer (changed since, or new).
    fn pending_count(&self, languages: &[&str]) -> rusqlite::Result<i64> {
        self.conn.query_row(
            &format!(
                "SELECT COUNT(*) FROM files f WHERE language IN ({})
                   AND NOT EXISTS (SELECT 1 FROM precise_files p WHERE p.file_id = f.id)",
                placeholders(languages.len())
            ),
            rusqlite::params_from_iter(languages),
            |r| r.get(0),
        )
    }

    /// The content key of the output of `indexer` imported last, if any.
    fn imported_key(&self, indexer: Indexer) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                [indexer.meta_key()],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.q_err())
    }

    /// Why `indexer` does not run on this root with `options`, when it does not.
    fn precise_skip(&self, indexer: Indexer, options: &PreciseOptions) -> Option<String> {
        if indexer != Indexer::Rust {
            return None;
        }
        if !options.workspace_code {
            return Some(
                "rust-analyzer scip runs the crate's build scripts and proc macros, and this \
                 surface runs no workspace code"
                    .to_owned(),
            );
        }
        // It loads a cargo workspace (or a rust-project.json) at the root, else fails.
        (!["Cargo.toml", "rust-project.json"]
            .iter()
            .any(|marker| self.root.join(marker).is_file()))
        .then(|| "no Cargo.toml or rust-project.json at the workspace root".to_owned())
    }

    /// The folder of the precise tier's outputs and scratch files, beside the root's index.
    fn precise_dir(&self) -> PathBuf {
        self.db_path
            .parent()
            .map_or_else(|| self.config.cache_dir.clone(), Path::to_path_buf)
            .join("precise")
    }
}

/// Outputs kept per root and indexer: the current one and a few before it (a checkout back
/// to an earlier state imports again without a run).
const OUTPUTS_KEPT: usize = 4;

/// Removes the oldest outputs of `plan`'s root and indexer beyond [`OUTPUTS_KEPT`].
fn prune_outputs(plan: &PrecisePlan) {
    let (Some(dir), Some(name)) = (plan.output.parent(), plan.output.file_name()) else {
        return;
    };
    let name = name.to_string_lossy();
    let Some(prefix) = name.strip_suffix(&format!("{}.scip", plan.key)) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut outputs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(prefix) && n.ends_with(".scip")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    outputs.sort_by_key(|o| std::cmp::Reverse(o.0));
    for (_, path) in outputs.into_iter().skip(OUTPUTS_KEPT) {
        let _ = std::fs::remove_file(path);
    }
}

/// Drops what the precise tier said of `file`'s references (its bytes changed, or it is
/// gone): its tree-sitter edges answer until the next run.
pub(crate) fn forget_file(tx: &Connection, file: FileId) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM precise WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM precise_fanout WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM precise_implements WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM precise_files WHERE file_id = ?1", [file])?;
    Ok(())
}

/// Drops the precise edges into a definition that went away; the files they were in are no
/// longer wholly precise.
pub(crate) fn forget_target(tx: &Connection, def: DefId) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM precise_files WHERE file_id IN
           (SELECT file_id FROM precise WHERE target_id = ?1)",
        [def],
    )?;
    tx.execute("DELETE FROM precise WHERE target_id = ?1", [def])?;
    tx.execute("DELETE FROM precise_fanout WHERE target_id = ?1", [def])?;
    tx.execute(
        "DELETE FROM precise_implements WHERE def_id = ?1 OR implemented_id = ?1",
        [def],
    )?;
    Ok(())
}
