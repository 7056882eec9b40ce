//! The persistent index: one SQLite file per workspace root, brought up to date with the
//! disk on [`Graph::open`] and [`Graph::refresh`], and by writers through
//! [`Graph::update`].
//!
//! Opening stats every file (a parallel walk with `ignore`: `.gitignore` honoured, hidden
//! files skipped, a size cap); a file whose size or modification time changed is hashed, and
//! re-extracted when its hash changed. Definitions keep their ids when they keep their
//! qualified name, so edges from unchanged files stay valid. Every file's resolution records
//! the keys it read (the reverse-dependency table `deps`): the names it looked up, the paths
//! it probed, the folders and packages it listed. After a change, the files whose keys
//! intersect what changed (names defined before or after, paths added or removed, packages
//! and folders whose members changed) are re-resolved with the changed files; a change to a
//! configuration file (`go.mod`, `tsconfig.json`, …) re-resolves everything. The result is
//! the index a clean build would write, row for row (`tests/it/incremental.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};

mod checkpoint;
mod update;

use update::{KnownBefore, UpdateScope};

use crate::config::GraphConfig;
use crate::extract;
use crate::model::{DefKind, FileFacts, Import, Local, RefKind};
use crate::project;
use crate::resolve::{Outcome, RefIn, Rung};
use crate::table::{Backing, DefId, DefInfo, FileId, FileIndex, FileInfo, NoBacking, Table};

/// Bumped whenever the tables or what extraction puts in them change: an index of another
/// version is rebuilt from scratch (14: C and C++ files record their own includes' keys only;
/// 18: a file's local bindings are one packed row, a reference's small facts one `state`, a
/// file's keys one list).
pub const SCHEMA_VERSION: i64 = 18;

/// Why the index could not be opened or updated.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// The SQLite index could not be opened, read or written.
    #[error("the index at {path} could not be used: {source}")]
    Sqlite {
        /// The index file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The folder of the index could not be created.
    #[error("cannot create the index folder {path}: {source}")]
    CacheDir {
        /// That folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The workspace root could not be resolved to a canonical path.
    #[error("the workspace root {path} is not a readable folder: {source}")]
    Root {
        /// The root as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The lock beside the index could not be taken.
    #[error("cannot lock {path} (one open of an index at a time): {source}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The precise tier's output could not be read.
    #[error("{indexer}: {message}")]
    Precise {
        /// The indexer's name ([`crate::Indexer::name`]).
        indexer: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A large build's references could not be kept in their file beside the index until
    /// they are resolved.
    #[error("cannot keep the build's references in {path} until they are resolved: {source}")]
    Pending {
        /// That file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A build's edges could not be kept in their file beside the index until the ranks are
    /// computed.
    #[error("cannot keep the build's edges in {path} until the ranks are computed: {source}")]
    RankEdges {
        /// That file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No definition has the id asked about (the id, as text).
    #[error("no symbol `{0}` in the index")]
    UnknownSymbol(String),
    /// The first build was cancelled: what was extracted is kept, and the next open goes on
    /// from there (it resolves every reference again).
    #[error(
        "indexing was cancelled after {done} of {total} files; what was read is kept and the \
         next call goes on from there"
    )]
    Cancelled {
        /// Files read and written before it stopped.
        done: usize,
        /// Files it had to read.
        total: usize,
    },
}

pub(crate) type Result<T> = std::result::Result<T, GraphError>;

/// What one refresh or update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateStats {
    /// Files stat'ed.
    pub files_seen: usize,
    /// Files read and hashed (size or time changed).
    pub hashed: usize,
    /// Files parsed and extracted again.
    pub extracted: usize,
    /// Files new to the index.
    pub added: usize,
    /// Indexed files no longer found, removed from the index.
    pub removed: usize,
    /// Files whose references were resolved again (the changed ones and their dependents).
    pub re_resolved: usize,
    /// Files over the size cap, not indexed.
    pub too_large: usize,
    /// Residual pushes that kept the whole tree's ranks current (0 when the update changed
    /// no edge).
    pub rank_pushes: usize,
    /// The whole index was rebuilt (new, another schema version, or another root).
    pub rebuilt: bool,
    /// The files of indexed languages that ignore rules (`.gitignore` inside a git
    /// repository, `.ignore`) kept out of the index, by rule file: counted when an open
    /// builds the index or finds it empty, so that "0 files" is never a silent zero.
    pub left_out_by_ignore: Option<cc_workspace::walk::LeftOut>,
}

/// How current the index is: every query result carries it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Freshness {
    /// When the index was last compared with the disk (milliseconds since the epoch).
    pub checked_at_ms: u64,
    /// Files indexed.
    pub files: usize,
    /// Files changed on disk since then that the index does not reflect yet, when known
    /// (a [`Graph::stale_files`] check); `None`: not checked since.
    pub stale: Option<Vec<String>>,
    /// How much of the index carries a compiler-grade indexer's word (`None`: none does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precise: Option<crate::precise::PreciseState>,
}

impl Freshness {
    /// One line for a text rendering.
    pub fn describe(&self) -> String {
        let age_ms = now_ms().saturating_sub(self.checked_at_ms);
        let age = if age_ms < 2_000 {
            format!("{age_ms} ms ago")
        } else {
            format!("{} s ago", age_ms / 1000)
        };
        let precise = self
            .precise
            .as_ref()
            .map_or_else(String::new, |p| format!("; {}", p.describe()));
        let text = match &self.stale {
            Some(stale) if !stale.is_empty() => format!(
                "index of {} files compared with the disk {age}; {} changed since: {}",
                self.files,
                stale.len(),
                stale.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ),
            _ => format!("index of {} files compared with the disk {age}", self.files),
        };
        text + &precise
    }
}

/// How long a write waits for another run's write to the same index.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The exclusive lock on `index.lock` beside the index, held while one process opens (and
/// perhaps builds) it; released when dropped.
fn open_lock(db_path: &Path) -> Result<nix::fcntl::Flock<std::fs::File>> {
    let path = db_path.with_extension("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| GraphError::Lock {
            path: path.clone(),
            source,
        })?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, errno)| {
        GraphError::Lock {
            path,
            source: std::io::Error::from(errno),
        }
    })
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The code graph of one workspace root.
#[derive(Debug)]
pub struct Graph {
    pub(crate) root: PathBuf,
    pub(crate) db_path: PathBuf,
    pub(crate) conn: Connection,
    pub(crate) config: GraphConfig,
    pub(crate) checked_at_ms: u64,
    pub(crate) stale: Option<Vec<String>>,
    /// Lines of recently shown files (signatures are read from the file, not stored).
    pub(crate) lines: std::cell::RefCell<HashMap<String, std::sync::Arc<crate::query::FileLines>>>,
    /// Every distinct definition name with its lower-case form, for substring lookups
    /// (loaded on the first `symbols`, dropped when the index changes).
    pub(crate) names: std::cell::RefCell<Option<NameList>>,
    /// The files and their lookups as of the last update, with the `PRAGMA data_version`
    /// they were read at (see `apply`).
    file_index: std::cell::RefCell<Option<(i64, Arc<FileIndex>)>>,
    /// How precise the index is, with the `PRAGMA data_version` it was read at (every answer
    /// carries it; read again after this graph's own writes or another run's).
    pub(crate) precise_state:
        std::cell::RefCell<Option<(i64, Option<crate::precise::PreciseState>)>>,
    /// Told how many files were extracted of how many, while a refresh or update runs.
    pub(crate) progress: Option<ProgressHook>,
    /// Set while [`Graph::open_cancellable`] builds: raised, the build stops at the next file
    /// or chunk of references and keeps what it has (writers' updates are never cancelled).
    pub(crate) cancel: Option<Arc<AtomicBool>>,
    /// Folds the write-ahead log into the index after this graph's writes.
    pub(crate) checkpointer: checkpoint::Checkpointer,
}

/// Receives `(files extracted, files to extract)` while the index is brought up to date
/// (called from the thread that writes the index).
pub type ProgressFn = std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>;

#[derive(Clone)]
pub(crate) struct ProgressHook(pub(crate) ProgressFn);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

/// Every distinct definition name ([`crate::query::Names`]).
pub(crate) type NameList = std::sync::Arc<crate::query::Names>;

/// A file seen on disk.
#[derive(Debug, Clone)]
struct Seen {
    rel: String,
    size: u64,
    mtime_ns: i64,
}

/// A file read and extracted.
struct Fresh {
    rel: String,
    size: u64,
    mtime_ns: i64,
    hash: i64,
    language: &'static cc_languages::LanguageSpec,
    facts: FileFacts,
}

/// The index's tables. `defs.kind` and `defs.qname` are computed, not stored (a kernel or a
/// standard library has hundreds of thousands of definitions): the kind is stored as its
/// place in [`DefKind::ALL`], the qualified name only where it is not the name itself, the
/// end and name lines as lines after the start (mostly 0, which costs no byte). A
/// reference's kind, outcome, rung and candidates are computed from one stored `state`
/// (`update::ref_state`): a column costs every one of millions of rows a byte.
fn schema() -> String {
    let kinds: String = DefKind::ALL
        .iter()
        .enumerate()
        .map(|(code, kind)| format!(" WHEN {code} THEN '{}'", kind.as_str()))
        .collect();
    SCHEMA.replace("{KIND_OF_CODE}", &format!("CASE kind_code{kinds} END"))
}

const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL, hash INTEGER NOT NULL, language TEXT NOT NULL, package TEXT,
  syntax_errors INTEGER NOT NULL);
CREATE TABLE config_files(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  hash INTEGER NOT NULL);
CREATE TABLE defs(
  id INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER NOT NULL, name TEXT NOT NULL,
  kind_code INTEGER NOT NULL, kind TEXT GENERATED ALWAYS AS ({KIND_OF_CODE}) VIRTUAL,
  own_qname TEXT, qname TEXT GENERATED ALWAYS AS (IFNULL(own_qname, name)) VIRTUAL,
  parent_id INTEGER, owner TEXT, type_text TEXT, returns TEXT, bases TEXT,
  self_name TEXT, type_params TEXT, line INTEGER NOT NULL, col INTEGER NOT NULL,
  end_lines INTEGER NOT NULL, end_line INTEGER GENERATED ALWAYS AS (line + end_lines) VIRTUAL,
  name_lines INTEGER NOT NULL, name_line INTEGER GENERATED ALWAYS AS (line + name_lines) VIRTUAL,
  name_col INTEGER NOT NULL);
CREATE TABLE names(id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE refs(
  file_id INTEGER NOT NULL, ord INTEGER NOT NULL, state INTEGER NOT NULL,
  kind INTEGER GENERATED ALWAYS AS (state & 1) VIRTUAL,
  outcome INTEGER GENERATED ALWAYS AS ((state >> 1) & 3) VIRTUAL,
  rung INTEGER GENERATED ALWAYS AS (NULLIF((state >> 3) & 7, 0) - 1) VIRTUAL,
  candidates INTEGER GENERATED ALWAYS AS (NULLIF(state >> 6, 0) - 1) VIRTUAL,
  name_id INTEGER NOT NULL, receiver_id INTEGER, line INTEGER NOT NULL, col INTEGER NOT NULL,
  enclosing_id INTEGER, target_id INTEGER,
  PRIMARY KEY(file_id, ord)) WITHOUT ROWID;
CREATE TABLE fanout(file_id INTEGER NOT NULL, ord INTEGER NOT NULL, target_id INTEGER NOT NULL,
  PRIMARY KEY(file_id, ord, target_id)) WITHOUT ROWID;
CREATE TABLE imports(file_id INTEGER NOT NULL, ord INTEGER NOT NULL, module TEXT NOT NULL,
  name TEXT, alias TEXT, wildcard INTEGER NOT NULL, line INTEGER NOT NULL, scope_first INTEGER,
  scope_last INTEGER,
  PRIMARY KEY(file_id, ord)) WITHOUT ROWID;
CREATE TABLE locals(file_id INTEGER PRIMARY KEY, packed BLOB NOT NULL);
CREATE TABLE literal_args(file_id INTEGER NOT NULL, ord INTEGER NOT NULL,
  argument INTEGER NOT NULL, def_id INTEGER NOT NULL,
  PRIMARY KEY(file_id, ord, def_id)) WITHOUT ROWID;
CREATE TABLE fills(file_id INTEGER NOT NULL, def_id INTEGER NOT NULL,
  implemented_id INTEGER NOT NULL, PRIMARY KEY(def_id, implemented_id)) WITHOUT ROWID;
CREATE INDEX fills_file ON fills(file_id);
CREATE TABLE keys(key TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE deps(key_id INTEGER NOT NULL, file_id INTEGER NOT NULL,
  PRIMARY KEY(key_id, file_id)) WITHOUT ROWID;
CREATE TABLE file_keys(file_id INTEGER PRIMARY KEY, packed BLOB NOT NULL);
CREATE TABLE precise_files(file_id INTEGER PRIMARY KEY, hash INTEGER NOT NULL,
  indexer TEXT NOT NULL, run_key TEXT NOT NULL, read INTEGER NOT NULL);
CREATE TABLE precise(file_id INTEGER NOT NULL, ord INTEGER NOT NULL, target_id INTEGER,
  PRIMARY KEY(file_id, ord)) WITHOUT ROWID;
CREATE INDEX precise_target ON precise(target_id) WHERE target_id IS NOT NULL;
CREATE TABLE precise_fanout(file_id INTEGER NOT NULL, ord INTEGER NOT NULL,
  target_id INTEGER NOT NULL, PRIMARY KEY(file_id, ord, target_id)) WITHOUT ROWID;
CREATE INDEX precise_fanout_target ON precise_fanout(target_id);
CREATE TABLE precise_implements(file_id INTEGER NOT NULL, def_id INTEGER NOT NULL,
  implemented_id INTEGER NOT NULL, PRIMARY KEY(def_id, implemented_id)) WITHOUT ROWID;
CREATE INDEX precise_implements_file ON precise_implements(file_id);
CREATE INDEX precise_implements_implemented ON precise_implements(implemented_id);
CREATE TABLE ranks(def_id INTEGER PRIMARY KEY, score REAL NOT NULL);
CREATE TABLE file_counts(file_id INTEGER PRIMARY KEY, refs INTEGER NOT NULL,
  exact INTEGER NOT NULL, import INTEGER NOT NULL, package INTEGER NOT NULL, name INTEGER NOT NULL,
  ambiguous INTEGER NOT NULL, unknown INTEGER NOT NULL, external INTEGER NOT NULL,
  fanout INTEGER NOT NULL);
CREATE INDEX ranks_score ON ranks(score);
CREATE TABLE rank_residuals(def_id INTEGER PRIMARY KEY, value REAL NOT NULL);
";

/// A reference's name and receiver (`refs r`) as text: both are stored as ids into `names`
/// (a tree has millions of references and tens of thousands of distinct names).
pub(crate) const REF_NAME: &str = "(SELECT text FROM names WHERE id = r.name_id)";
pub(crate) const REF_RECEIVER: &str = "(SELECT text FROM names WHERE id = r.receiver_id)";

/// The ids of the names references use, found or added as references are written.
struct NameIds<'c> {
    known: HashMap<Arc<str>, i64>,
    find: rusqlite::CachedStatement<'c>,
    insert: rusqlite::CachedStatement<'c>,
}

impl<'c> NameIds<'c> {
    fn new(conn: &'c Connection) -> rusqlite::Result<Self> {
        Ok(NameIds {
            known: HashMap::new(),
            find: conn.prepare_cached("SELECT id FROM names WHERE text = ?1")?,
            insert: conn.prepare_cached("INSERT INTO names(text) VALUES (?1) RETURNING id")?,
        })
    }

    fn id(&mut self, name: &Arc<str>) -> rusqlite::Result<i64> {
        if let Some(id) = self.known.get(name) {
            return Ok(*id);
        }
        let id = match self
            .find
            .query_row([name.as_ref()], |r| r.get::<_, i64>(0))
            .optional()?
        {
            Some(id) => id,
            None => self.insert.query_row([name.as_ref()], |r| r.get(0))?,
        };
        self.known.insert(name.clone(), id);
        Ok(id)
    }
}

/// The indexes only queries read (no step of a refresh looks a row up by them): a clean
/// build drops them and creates them once its rows are in, a sorted build instead of a
/// random insert per row.
const QUERY_INDEXES: &[(&str, &str)] = &[
    ("defs_name", "CREATE INDEX defs_name ON defs(name)"),
    ("defs_file", "CREATE INDEX defs_file ON defs(file_id)"),
    (
        "refs_target",
        "CREATE INDEX refs_target ON refs(target_id) WHERE target_id IS NOT NULL",
    ),
    (
        "fanout_target",
        "CREATE INDEX fanout_target ON fanout(target_id)",
    ),
    (
        "fills_implemented",
        "CREATE INDEX fills_implemented ON fills(implemented_id)",
    ),
];

/// The bytes of the index queries read through a memory mapping (SQLite's largest by
/// default build).
const QUERY_MMAP_BYTES: i64 = 0x7fff_0000;

/// A refresh that adds at least this many files to an empty index builds the query indexes
/// after its rows.
const BULK_FILES: usize = 256;

fn create_query_indexes(conn: &Connection) -> rusqlite::Result<()> {
    // Sorted by a second thread as well (SQLite's sorter splits a large sort between
    // helpers): a kernel-size tree's indexes hold millions of rows.
    conn.execute_batch("PRAGMA threads = 2;")?;
    let created = QUERY_INDEXES
        .iter()
        .try_for_each(|(_, ddl)| conn.execute_batch(&format!("{ddl};")));
    conn.execute_batch("PRAGMA threads = 0;")?;
    created
}

fn drop_query_indexes(conn: &Connection) -> rusqlite::Result<()> {
    for (name, _) in QUERY_INDEXES {
        conn.execute_batch(&format!("DROP INDEX IF EXISTS {name};"))?;
    }
    Ok(())
}

const OUTCOME_RESOLVED: i64 = 0;
const OUTCOME_UNRESOLVED: i64 = 1;
const OUTCOME_EXTERNAL: i64 = 2;

/// Every edge as `(file_id, ord, target_id, rung)` whose target satisfies `target` (`= ?1`
/// for the edges into one definition, `IS NOT NULL` for all): the references' own edges
/// unless the precise tier spoke for the reference, the precise tier's, the dispatch edges
/// (a reference's own unless the precise tier gave it another target, the precise tier's
/// related symbols, and the calls of an interface member an object literal's member fills,
/// as the precise tier or the graph's own reading of the callee's parameter types says).
/// Written out per table so that each arm uses its table's target index (SQLite does not
/// push a correlated or joined term into a compound view).
pub(crate) fn edges_sql(target: &str) -> String {
    format!(
        "SELECT r.file_id, r.ord, r.target_id, r.rung FROM refs r
          WHERE r.target_id {target}
            AND NOT EXISTS (SELECT 1 FROM precise p WHERE p.file_id = r.file_id AND p.ord = r.ord)
         UNION ALL
         SELECT p.file_id, p.ord, p.target_id, 5 FROM precise p WHERE p.target_id {target}
         UNION ALL
         SELECT x.file_id, x.ord, x.target_id, 4 FROM fanout x
          WHERE x.target_id {target}
            AND NOT EXISTS (SELECT 1 FROM precise p JOIN refs r ON r.file_id = p.file_id AND r.ord = p.ord
                            WHERE p.file_id = x.file_id AND p.ord = x.ord
                              AND p.target_id IS NOT r.target_id)
         UNION ALL
         SELECT y.file_id, y.ord, y.target_id, 4 FROM precise_fanout y
          WHERE y.target_id {target}
            AND NOT EXISTS (SELECT 1 FROM fanout x
                            WHERE x.file_id = y.file_id AND x.ord = y.ord AND x.target_id = y.target_id)
         UNION ALL
         SELECT u.file_id, u.ord, u.target_id, 4 FROM ({}) u",
        member_edges_sql(target)
    )
}

/// Whether the references' own edges and their fan-out are every edge [`edges_sql`]
/// gives: no precise rows and no fills (a query can then skip the probes of empty tables).
pub(crate) fn plain_edges(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(!crate::ranks::precise_rows(conn)?
        && !conn.query_row("SELECT EXISTS(SELECT 1 FROM fills)", [], |r| {
            r.get::<_, bool>(0)
        })?)
}

/// The dispatch edges of [`edges_sql`] to the members that implement or fill what a
/// reference calls, once each, as `(file_id, ord, target_id)` whose target satisfies
/// `target`.
pub(crate) fn member_edges_sql(target: &str) -> String {
    format!(
        "SELECT DISTINCT u.file_id, u.ord, u.target_id FROM (
           SELECT r.file_id, r.ord, i.def_id AS target_id FROM precise_implements i
             JOIN refs r ON r.target_id = i.implemented_id
            WHERE i.def_id {target}
              AND NOT EXISTS (SELECT 1 FROM precise p WHERE p.file_id = r.file_id AND p.ord = r.ord)
           UNION ALL
           SELECT p.file_id, p.ord, i.def_id FROM precise_implements i
             JOIN precise p ON p.target_id = i.implemented_id
            WHERE i.def_id {target}
           UNION ALL
           SELECT y.file_id, y.ord, i.def_id FROM precise_implements i
             JOIN precise_fanout y ON y.target_id = i.implemented_id
            WHERE i.def_id {target}
           UNION ALL
           SELECT r.file_id, r.ord, f.def_id FROM fills f
             JOIN refs r ON r.target_id = f.implemented_id
            WHERE f.def_id {target}
              AND NOT EXISTS (SELECT 1 FROM precise p WHERE p.file_id = r.file_id AND p.ord = r.ord)
           UNION ALL
           SELECT x.file_id, x.ord, f.def_id FROM fills f
             JOIN fanout x ON x.target_id = f.implemented_id
            WHERE f.def_id {target}
              AND NOT EXISTS (SELECT 1 FROM precise p JOIN refs r ON r.file_id = p.file_id AND r.ord = p.ord
                              WHERE p.file_id = x.file_id AND p.ord = x.ord
                                AND p.target_id IS NOT r.target_id)
           UNION ALL
           SELECT p.file_id, p.ord, f.def_id FROM fills f
             JOIN precise p ON p.target_id = f.implemented_id
            WHERE f.def_id {target}
           UNION ALL
           SELECT y.file_id, y.ord, f.def_id FROM fills f
             JOIN precise_fanout y ON y.target_id = f.implemented_id
            WHERE f.def_id {target}) u"
    )
}

pub(crate) fn rung_code(r: Rung) -> i64 {
    match r {
        Rung::Exact => 0,
        Rung::Import => 1,
        Rung::Package => 2,
        Rung::Name => 3,
        Rung::Dispatch => 4,
        Rung::Precise => 5,
    }
}

pub(crate) fn rung_of(code: i64) -> Rung {
    match code {
        0 => Rung::Exact,
        1 => Rung::Import,
        2 => Rung::Package,
        4 => Rung::Dispatch,
        5 => Rung::Precise,
        _ => Rung::Name,
    }
}

pub(crate) fn ref_kind_code(k: RefKind) -> i64 {
    match k {
        RefKind::Call => 0,
        RefKind::Type => 1,
    }
}

pub(crate) fn ref_kind_of(code: i64) -> RefKind {
    if code == 1 {
        RefKind::Type
    } else {
        RefKind::Call
    }
}

pub(crate) fn hash(bytes: &[u8]) -> i64 {
    i64::from_ne_bytes(xxhash_rust::xxh3::xxh3_64(bytes).to_ne_bytes())
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// A relative path with `/` separators, or `None` for one that is not UTF-8.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let s = rel.to_str()?;
    Some(s.replace('\\', "/"))
}

/// Whether a path is indexed: a language with symbols, or a configuration file.
fn indexed_language(rel: &str) -> Option<&'static cc_languages::LanguageSpec> {
    let language = cc_languages::for_path(Path::new(rel))?;
    extract::query_source(language).map(|_| language)
}

impl Graph {
    /// Opens (or builds) the index of `root` with the default configuration, and brings it
    /// up to date with the disk (the host hands a `[graph]` section to [`Graph::open_with`]).
    pub fn open(root: &Path) -> Result<(Graph, UpdateStats)> {
        Graph::open_with(root, GraphConfig::default())
    }

    /// [`open`](Self::open) with an explicit configuration.
    pub fn open_with(root: &Path, config: GraphConfig) -> Result<(Graph, UpdateStats)> {
        Graph::open_with_progress(root, config, None)
    }

    /// [`open_with`](Self::open_with), telling `progress` how many files were extracted of
    /// how many (and again on every later refresh or update of this graph).
    pub fn open_with_progress(
        root: &Path,
        config: GraphConfig,
        progress: Option<ProgressFn>,
    ) -> Result<(Graph, UpdateStats)> {
        Graph::open_cancellable(root, config, progress, None)
    }

    /// [`open_with_progress`](Self::open_with_progress) that stops when `cancel` is raised:
    /// the files extracted so far are committed and [`GraphError::Cancelled`] returned; the
    /// next open extracts only the rest (then resolves every reference, as a clean build does).
    pub fn open_cancellable(
        root: &Path,
        config: GraphConfig,
        progress: Option<ProgressFn>,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<(Graph, UpdateStats)> {
        let root = root.canonicalize().map_err(|source| GraphError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        let db_path = config.index_path(&root);
        if let Some(dir) = db_path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| GraphError::CacheDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let sql = |source| GraphError::Sqlite {
            path: db_path.clone(),
            source,
        };
        // One open at a time per index, across processes: several runs starting on one root
        // wait for the one that builds (or rebuilds) it, instead of removing its files or
        // building again; they then find it current.
        let _opening = open_lock(&db_path)?;
        let mut rebuilt = false;
        let conn = match Self::connect(&db_path, &root) {
            Ok(Some(conn)) => conn,
            Ok(None) | Err(_) => {
                // Another schema, another root, or an unreadable file: start over.
                rebuilt = true;
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", db_path.display()));
                }
                let conn = Connection::open(&db_path).map_err(sql)?;
                Self::pragmas(&conn).map_err(sql)?;
                conn.execute_batch(&schema()).map_err(sql)?;
                create_query_indexes(&conn).map_err(sql)?;
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES ('schema', ?1), ('root', ?2)",
                    params![SCHEMA_VERSION.to_string(), root.to_string_lossy()],
                )
                .map_err(sql)?;
                conn
            }
        };
        let checkpointer = checkpoint::Checkpointer::new(&db_path);
        let mut graph = Graph {
            root,
            db_path,
            conn,
            config,
            checked_at_ms: 0,
            stale: None,
            lines: std::cell::RefCell::new(HashMap::new()),
            names: std::cell::RefCell::new(None),
            precise_state: std::cell::RefCell::new(None),
            file_index: std::cell::RefCell::new(None),
            progress: progress.map(ProgressHook),
            cancel,
            checkpointer,
        };
        let refreshed = graph.refresh();
        graph.cancel = None;
        let mut stats = refreshed?;
        stats.rebuilt = rebuilt;
        // Queries read the index through a mapping, without a copy of each page into the
        // page cache (a hub's impact reads a hundred thousand definitions' rows: a fifth
        // faster). Set after the build, whose peak resident memory would count the pages
        // its lookups touch.
        graph
            .conn
            .execute_batch(&format!("PRAGMA mmap_size={QUERY_MMAP_BYTES};"))
            .map_err(graph.q_err())?;
        if rebuilt || stats.files_seen == 0 {
            let extensions: Vec<&str> = cc_languages::TABLE
                .iter()
                .filter(|language| extract::query_source(language).is_some())
                .flat_map(|language| language.extensions.iter().copied())
                .collect();
            let left_out = cc_workspace::walk::Walk::new(&graph.root)
                .extensions(&extensions)
                .left_out();
            stats.left_out_by_ignore = (left_out.files > 0).then_some(left_out);
        }
        Ok((graph, stats))
    }

    fn pragmas(conn: &Connection) -> rusqlite::Result<()> {
        // Another run's write (an update, a precise import) holds the index for moments:
        // wait for it rather than fail.
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // The log is folded in by a thread after each write (see `checkpoint`).
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY;
             PRAGMA cache_size=-8000; PRAGMA wal_autocheckpoint={};",
            checkpoint::BACKSTOP_PAGES
        ))
    }

    /// The existing index if it is of this schema and root.
    fn connect(path: &Path, root: &Path) -> rusqlite::Result<Option<Connection>> {
        if !path.exists() {
            return Ok(None);
        }
        let conn = Connection::open(path)?;
        Self::pragmas(&conn)?;
        let meta = |key: &str| -> rusqlite::Result<Option<String>> {
            conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()
        };
        let schema = meta("schema")?;
        let stored_root = meta("root")?;
        if schema.as_deref() != Some(&SCHEMA_VERSION.to_string())
            || stored_root.as_deref() != Some(&*root.to_string_lossy())
        {
            return Ok(None);
        }
        Ok(Some(conn))
    }

    /// The workspace root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the index file is.
    pub fn index_path(&self) -> &Path {
        &self.db_path
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> GraphError + '_ {
        move |source| GraphError::Sqlite {
            path: self.db_path.clone(),
            source,
        }
    }

    /// How current the index is.
    pub fn freshness(&self) -> Freshness {
        let files = self
            .conn
            .query_row("SELECT COUNT(*) FROM files", [], |r| r.get::<_, i64>(0))
            .unwrap_or(0);
        Freshness {
            checked_at_ms: self.checked_at_ms,
            files: usize::try_from(files).unwrap_or(0),
            stale: self.stale.clone(),
            precise: self.precise_state_cached(),
        }
    }

    /// Walks the root in parallel (the workspace walk's rules): every indexed source under
    /// the size cap, and the configuration files.
    fn walk(&self) -> (Vec<Seen>, Vec<Seen>, usize) {
        let sources = Mutex::new(Vec::new());
        let configs = Mutex::new(Vec::new());
        let too_large = std::sync::atomic::AtomicUsize::new(0);
        let max = self.config.max_file_bytes;
        let root = self.root.clone();
        cc_workspace::walk::Walk::new(&self.root)
            .builder()
            .threads(self.config.threads())
            .build_parallel()
            .run(|| {
                let root = root.clone();
                let sources = &sources;
                let configs = &configs;
                let too_large = &too_large;
                Box::new(move |entry| {
                    let Ok(entry) = entry else {
                        return ignore::WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        return ignore::WalkState::Continue;
                    }
                    let Some(rel) = relative(&root, entry.path()) else {
                        return ignore::WalkState::Continue;
                    };
                    let is_config = project::is_config(&rel);
                    if !is_config && indexed_language(&rel).is_none() {
                        return ignore::WalkState::Continue;
                    }
                    let Ok(meta) = entry.metadata() else {
                        return ignore::WalkState::Continue;
                    };
                    let seen = Seen {
                        rel,
                        size: meta.len(),
                        mtime_ns: mtime_ns(&meta),
                    };
                    if is_config {
                        configs.lock().unwrap_or_else(|p| p.into_inner()).push(seen);
                    } else if meta.len() > max {
                        too_large.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    } else {
                        sources.lock().unwrap_or_else(|p| p.into_inner()).push(seen);
                    }
                    ignore::WalkState::Continue
                })
            });
        let mut sources = sources.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut configs = configs.into_inner().unwrap_or_else(|p| p.into_inner());
        sources.sort_by(|a, b| a.rel.cmp(&b.rel));
        configs.sort_by(|a, b| a.rel.cmp(&b.rel));
        (sources, configs, too_large.into_inner())
    }

    /// The files on disk that changed since the index last saw them (without updating it);
    /// recorded in the next results' [`Freshness`].
    pub fn stale_files(&mut self) -> Result<Vec<String>> {
        let (seen, _, _) = self.walk();
        let known = self.known_files()?;
        let mut stale = Vec::new();
        let mut present = HashSet::new();
        for s in &seen {
            present.insert(s.rel.as_str());
            match known.get(&s.rel) {
                Some(k) if k.size == s.size && k.mtime_ns == s.mtime_ns => {}
                _ => stale.push(s.rel.clone()),
            }
        }
        for rel in known.keys() {
            if !present.contains(rel.as_str()) {
                stale.push(rel.clone());
            }
        }
        stale.sort();
        self.stale = Some(stale.clone());
        Ok(stale)
    }

    /// The indexed files in the folder `dir` (relative to the root), at any depth.
    pub fn files_under(&self, dir: &str) -> Result<Vec<String>> {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let mut stmt = self
            .conn
            .prepare("SELECT path FROM files WHERE substr(path, 1, length(?1)) = ?1 ORDER BY path")
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([&prefix], |r| r.get::<_, String>(0))
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.sql())
    }

    /// Whether a file at `rel` (relative to the root) is one the index reads: a source of a
    /// language with symbols, or a project configuration file.
    pub fn indexes(&self, rel: &str) -> bool {
        project::is_config(rel) || indexed_language(rel).is_some()
    }

    /// Records that the index was just compared with the disk by someone who knows what
    /// changed (the run's watcher) and brought up to date: the next results are fresh as of
    /// now.
    pub fn note_checked(&mut self) {
        self.checked_at_ms = now_ms();
        self.stale = Some(Vec::new());
    }

    fn known_files(&self) -> Result<HashMap<String, Known>> {
        known_files_of(&self.conn, None).map_err(self.sql())
    }

    /// Compares the whole tree with the index and brings it up to date.
    pub fn refresh(&mut self) -> Result<UpdateStats> {
        // Read before the walk: a file another run adds while the walk runs is not one
        // this walk found gone.
        let before = KnownBefore::read(&self.conn).map_err(self.sql())?;
        let (seen, configs, too_large) = self.walk();
        let mut stats = self.apply(UpdateScope::Tree { seen, before }, configs)?;
        stats.too_large = too_large;
        self.checked_at_ms = now_ms();
        self.stale = Some(Vec::new());
        Ok(stats)
    }

    /// Brings the given files (relative to the root or absolute inside it) up to date: for
    /// writers, before they return, so that the index is never stale after their edits. A
    /// path that no longer exists is removed from the index.
    pub fn update<P: AsRef<Path>>(&mut self, paths: &[P]) -> Result<UpdateStats> {
        let mut seen = Vec::new();
        let mut configs_changed = false;
        let mut named = BTreeSet::new();
        for p in paths {
            let p = p.as_ref();
            let absolute = if p.is_absolute() {
                p.to_path_buf()
            } else {
                self.root.join(p)
            };
            let rel = match relative(&self.root, &absolute) {
                Some(r) => r,
                None => match absolute
                    .parent()
                    .and_then(|d| d.canonicalize().ok())
                    .and_then(|d| relative(&self.root, &d.join(absolute.file_name()?)))
                {
                    Some(r) => r,
                    None => continue,
                },
            };
            if project::is_config(&rel) {
                configs_changed = true;
                continue;
            }
            if indexed_language(&rel).is_none() {
                continue;
            }
            named.insert(rel.clone());
            if let Ok(meta) = std::fs::metadata(self.root.join(&rel)) {
                if meta.is_file() && meta.len() <= self.config.max_file_bytes {
                    seen.push(Seen {
                        rel,
                        size: meta.len(),
                        mtime_ns: mtime_ns(&meta),
                    });
                }
            }
        }
        let configs = if configs_changed {
            self.walk().1
        } else {
            self.stored_configs()?
        };
        self.apply(
            UpdateScope::Paths {
                named,
                present: seen,
            },
            configs,
        )
    }

    fn stored_configs(&self) -> Result<Vec<Seen>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, size, mtime_ns FROM config_files ORDER BY path")
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Seen {
                    rel: r.get(0)?,
                    size: r.get::<_, i64>(1)? as u64,
                    mtime_ns: r.get(2)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.sql())
    }

    fn pool(&self) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(self.config.threads())
            .build()
            .unwrap_or_else(|_| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .unwrap_or_else(|e| panic!("cannot start even one thread: {e}"))
            })
    }

    /// Every row of the index in a canonical form, ids replaced by what they stand for
    /// (paths, qualified names): two indexes of the same tree give the same rows whatever
    /// order they were built in. For tests and debugging.
    pub fn snapshot(&self) -> Result<Vec<String>> {
        let sql = self.sql();
        let mut out = Vec::new();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT path, hash, language, IFNULL(package, ''), syntax_errors FROM files ORDER BY path",
            )
            .map_err(&sql)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(format!(
                    "file {} {} {} {} {}",
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?
                ))
            })
            .map_err(&sql)?;
        for r in rows {
            out.push(r.map_err(&sql)?);
        }
        let def_key =
            "(SELECT f.path || ':' || d.qname || ':' || d.kind || ':' || d.line || ':' || d.col
                        FROM defs d JOIN files f ON f.id = d.file_id WHERE d.id = {})";
        let q = format!(
            "SELECT f.path, d.name, d.kind, d.qname, IFNULL({}, ''), IFNULL(d.owner, ''),
               IFNULL(d.type_text, ''), IFNULL(d.returns, ''), IFNULL(d.bases, ''),
               IFNULL(d.self_name, ''), d.line, d.col, d.end_line, d.name_line, d.name_col,
               IFNULL(d.type_params, '')
             FROM defs d JOIN files f ON f.id = d.file_id",
            def_key.replace("{}", "d.parent_id")
        );
        out.extend(self.rows_as_text("def", &q)?);
        let q = format!(
            "SELECT f.path, r.kind, {REF_NAME}, IFNULL({REF_RECEIVER}, ''), r.line, r.col,
               IFNULL({}, ''), r.outcome, IFNULL({}, ''), IFNULL(r.rung, ''),
               IFNULL(r.candidates, '')
             FROM refs r JOIN files f ON f.id = r.file_id",
            def_key.replace("{}", "r.enclosing_id"),
            def_key.replace("{}", "r.target_id")
        );
        out.extend(self.rows_as_text("ref", &q)?);
        let q = format!(
            "SELECT f.path, r.line, r.col, {REF_NAME}, {}
             FROM fanout x JOIN refs r ON r.file_id = x.file_id AND r.ord = x.ord
             JOIN files f ON f.id = x.file_id",
            def_key.replace("{}", "x.target_id")
        );
        out.extend(self.rows_as_text("dispatch", &q)?);
        let q = format!(
            "SELECT f.path, {}, {} FROM fills x JOIN files f ON f.id = x.file_id",
            def_key.replace("{}", "x.def_id"),
            def_key.replace("{}", "x.implemented_id")
        );
        out.extend(self.rows_as_text("fills", &q)?);
        let q = format!(
            "SELECT f.path, a.ord, a.argument, {} FROM literal_args a JOIN files f ON f.id = a.file_id",
            def_key.replace("{}", "a.def_id")
        );
        out.extend(self.rows_as_text("literal", &q)?);
        out.extend(self.rows_as_text(
            "imports",
            "SELECT f.path, i.ord, i.module, IFNULL(i.name, ''), IFNULL(i.alias, ''), i.wildcard,
               i.line, IFNULL(i.scope_first, ''), IFNULL(i.scope_last, '')
             FROM imports i JOIN files f ON f.id = i.file_id",
        )?);
        out.extend(self.local_rows(&def_key.replace("{}", "?1"))?);
        Ok(out)
    }
}

impl Graph {
    /// Every local binding as `local PATH ORD NAME SCOPE …`, sorted (for [`Graph::snapshot`]);
    /// `scope_key` is the query of a definition's key by its id `?1`.
    fn local_rows(&self, scope_key: &str) -> Result<Vec<String>> {
        let sql = self.sql();
        let mut key = self
            .conn
            .prepare(&format!("SELECT IFNULL({scope_key}, '')"))
            .map_err(&sql)?;
        let mut stmt = self
            .conn
            .prepare("SELECT f.path, l.packed FROM locals l JOIN files f ON f.id = l.file_id")
            .map_err(&sql)?;
        let files = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(&sql)?;
        let text = |v: Option<String>| v.unwrap_or_default();
        let number = |v: Option<u32>| v.map_or_else(String::new, |n| n.to_string());
        let mut out = Vec::new();
        for file in files {
            let (path, packed) = file.map_err(&sql)?;
            for (ord, (local, scope)) in crate::packed::decode_locals(&packed)
                .into_iter()
                .enumerate()
            {
                let scope = match scope {
                    Some(id) => key
                        .query_row([id], |r| r.get::<_, String>(0))
                        .map_err(&sql)?,
                    None => String::new(),
                };
                let cb = local.callback;
                out.push(format!(
                    "local {path} {ord} {} {scope} {} {} {} {} {} {} {} {} {} {}",
                    local.name,
                    text(local.type_text),
                    text(local.value),
                    text(local.read),
                    local.pos.line,
                    local.pos.column,
                    number(local.param),
                    number(cb.map(|c| c.call.line)),
                    number(cb.map(|c| c.call.column)),
                    number(cb.map(|c| c.argument)),
                    number(cb.map(|c| c.param)),
                ));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Every row of `query` as `LABEL value value …`, sorted (for [`Graph::snapshot`]).
    fn rows_as_text(&self, label: &str, query: &str) -> Result<Vec<String>> {
        let sql = self.sql();
        let mut stmt = self.conn.prepare(query).map_err(&sql)?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut s = label.to_owned();
                for i in 0..n {
                    let v: rusqlite::types::Value = r.get(i)?;
                    s.push(' ');
                    s.push_str(&value_text(v));
                }
                Ok(s)
            })
            .map_err(&sql)?;
        let mut v: Vec<String> = rows.collect::<rusqlite::Result<_>>().map_err(&sql)?;
        v.sort();
        Ok(v)
    }
}

fn value_text(v: rusqlite::types::Value) -> String {
    match v {
        rusqlite::types::Value::Null => String::new(),
        rusqlite::types::Value::Integer(i) => i.to_string(),
        rusqlite::types::Value::Real(f) => f.to_string(),
        rusqlite::types::Value::Text(t) => t,
        rusqlite::types::Value::Blob(b) => format!("{b:?}"),
    }
}

impl UpdateStats {
    /// A first build (nothing was known).
    fn rebuilt_hint(&self, nothing_known: bool) -> bool {
        nothing_known && self.added > 0
    }
}

#[derive(Debug, Clone, Copy)]
struct Known {
    id: FileId,
    size: u64,
    mtime_ns: i64,
    hash: i64,
}

fn read_and_extract(
    parser: &mut cc_languages::Parser,
    root: &Path,
    seen: &Seen,
    known: Option<&Known>,
) -> Option<Fresh> {
    let language = indexed_language(&seen.rel)?;
    let bytes = std::fs::read(root.join(&seen.rel)).ok()?;
    let h = hash(&bytes);
    if known.is_some_and(|k| k.hash == h) {
        return None;
    }
    // A file the grammar cannot load or parse is indexed with no facts (and counted).
    let facts = extract::extract(parser, language, &bytes).unwrap_or_else(|_| FileFacts {
        syntax_errors: 1,
        ..FileFacts::default()
    });
    Some(Fresh {
        rel: seen.rel.clone(),
        size: bytes.len() as u64,
        mtime_ns: seen.mtime_ns,
        hash: h,
        language,
        facts,
    })
}

/// Every indexed file with what the index knows of it.
/// What the index holds of every file, or of the files at `only`.
fn known_files_of(
    conn: &Connection,
    only: Option<&[String]>,
) -> rusqlite::Result<HashMap<String, Known>> {
    let row = |r: &rusqlite::Row<'_>| {
        Ok((
            r.get::<_, String>(1)?,
            Known {
                id: r.get(0)?,
                size: r.get::<_, i64>(2)? as u64,
                mtime_ns: r.get(3)?,
                hash: r.get(4)?,
            },
        ))
    };
    let Some(paths) = only else {
        let mut stmt = conn.prepare("SELECT id, path, size, mtime_ns, hash FROM files")?;
        let rows = stmt.query_map([], row)?;
        return rows.collect();
    };
    let mut stmt =
        conn.prepare_cached("SELECT id, path, size, mtime_ns, hash FROM files WHERE path = ?1")?;
    let mut out = HashMap::new();
    for path in paths {
        if let Some((path, known)) = stmt.query_row([path], row).optional()? {
            out.insert(path, known);
        }
    }
    Ok(out)
}

/// Whether the index holds any file.
fn has_files(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT EXISTS(SELECT 1 FROM files)", [], |r| r.get(0))
}

/// SQLite's count of commits by other connections, as this connection sees it.
pub(crate) fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |r| r.get(0))
}

/// One file's share of [`Graph::stats`]: its references by outcome and rung, and its fan-out
/// rows.
#[derive(Debug, Default)]
struct FileCounts {
    refs: usize,
    exact: usize,
    import: usize,
    package: usize,
    name: usize,
    ambiguous: usize,
    unknown: usize,
    external: usize,
    fanout: usize,
}

impl FileCounts {
    fn of<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> Self {
        let mut c = FileCounts::default();
        for outcome in outcomes {
            c.refs += 1;
            match outcome {
                Outcome::Resolved { rung, .. } => match rung {
                    Rung::Exact => c.exact += 1,
                    Rung::Import => c.import += 1,
                    Rung::Package => c.package += 1,
                    Rung::Name => c.name += 1,
                    Rung::Dispatch | Rung::Precise => {}
                },
                Outcome::Unresolved { candidates } if *candidates > 1 => c.ambiguous += 1,
                Outcome::Unresolved { .. } => c.unknown += 1,
                Outcome::External => c.external += 1,
            }
        }
        c
    }

    fn write(
        &self,
        insert: &mut rusqlite::CachedStatement<'_>,
        file: FileId,
    ) -> rusqlite::Result<()> {
        let n = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        insert.execute(params![
            file,
            n(self.refs),
            n(self.exact),
            n(self.import),
            n(self.package),
            n(self.name),
            n(self.ambiguous),
            n(self.unknown),
            n(self.external),
            n(self.fanout)
        ])?;
        Ok(())
    }
}

/// The distinct names a file defines.
fn file_def_names(conn: &Connection, file: FileId) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT DISTINCT name FROM defs WHERE file_id = ?1")?;
    let rows = stmt.query_map([file], |r| r.get::<_, String>(0))?;
    rows.collect()
}

fn insert_file(tx: &Connection, fresh: &Fresh) -> rusqlite::Result<FileId> {
    tx.prepare_cached(
        "INSERT INTO files(path, size, mtime_ns, hash, language, package, syntax_errors)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        fresh.rel,
        fresh.size as i64,
        fresh.mtime_ns,
        fresh.hash,
        fresh.language.name,
        fresh.facts.package,
        fresh.facts.syntax_errors
    ])?;
    Ok(FileId(tx.last_insert_rowid()))
}

/// The resolution-relevant attributes of a definition, to tell whether it changed.
type DefShape = (
    String,
    String,
    Option<DefId>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    Option<String>,
    String,
);

/// The definitions a file had, keyed for reuse by (qualified name, kind, occurrence).
type Reuse = HashMap<(String, String, usize), (DefId, DefShape)>;

/// Inserts a file's facts; definitions whose (qualified name, kind, occurrence) is in
/// `reuse` keep that id. Returns the definitions' ids in the file's order.
fn insert_facts(
    tx: &Connection,
    file: FileId,
    facts: &FileFacts,
    reuse: &Reuse,
    changed: &mut BTreeSet<String>,
) -> rusqlite::Result<Vec<DefId>> {
    let ids = insert_definitions(tx, file, facts, reuse, changed)?;
    insert_imports(tx, file, &facts.imports)?;
    insert_locals(tx, file, &facts.locals, &ids)?;
    let mut insert_literal = tx.prepare_cached(
        "INSERT OR IGNORE INTO literal_args(file_id, ord, argument, def_id)
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    for arg in &facts.literal_args {
        if let Some(def) = ids.get(arg.member) {
            insert_literal.execute(params![file, arg.reference as i64, arg.argument, def])?;
        }
    }
    Ok(ids)
}

/// Inserts the definitions, reusing ids; a name whose definition is new or changed shape
/// is a changed key.
fn insert_definitions(
    tx: &Connection,
    file: FileId,
    facts: &FileFacts,
    reuse: &Reuse,
    changed: &mut BTreeSet<String>,
) -> rusqlite::Result<Vec<DefId>> {
    let mut ids: Vec<DefId> = Vec::with_capacity(facts.definitions.len());
    let mut nth: HashMap<(String, String), usize> = HashMap::new();
    let mut insert = tx.prepare_cached(
        "INSERT INTO defs(id, file_id, name, kind_code, own_qname, parent_id, owner, type_text,
           returns, bases, self_name, line, col, end_lines, name_lines, name_col, type_params)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?;
    for def in &facts.definitions {
        let parent = def.parent.and_then(|p| ids.get(p).copied());
        let bases = (!def.bases.is_empty()).then(|| def.bases.join("\n"));
        let type_params = (!def.type_params.is_empty()).then(|| def.type_params.join("\n"));
        let kind = def.kind.as_str().to_owned();
        let n = nth
            .entry((def.qualified_name.clone(), kind.clone()))
            .or_insert(0);
        let key = (def.qualified_name.clone(), kind.clone(), *n);
        *n += 1;
        let shape: DefShape = (
            def.name.clone(),
            kind,
            parent,
            def.owner.clone(),
            def.type_text.clone(),
            def.returns.clone(),
            bases.clone().unwrap_or_default(),
            def.self_name.clone(),
            type_params.clone().unwrap_or_default(),
        );
        let id = reuse.get(&key).map(|(id, _)| *id);
        if reuse.get(&key).is_none_or(|(_, old)| *old != shape) {
            changed.insert(format!("n:{}", def.name));
        }
        let kind_code = DefKind::ALL
            .iter()
            .position(|k| *k == def.kind)
            .and_then(|code| i64::try_from(code).ok());
        let own_qname = (def.qualified_name != def.name).then_some(&def.qualified_name);
        insert.execute(params![
            id,
            file,
            def.name,
            kind_code,
            own_qname,
            parent,
            def.owner,
            def.type_text,
            def.returns,
            bases,
            def.self_name,
            def.start.line,
            def.start.column,
            i64::from(def.end_line) - i64::from(def.start.line),
            i64::from(def.name_pos.line) - i64::from(def.start.line),
            def.name_pos.column,
            type_params
        ])?;
        ids.push(DefId(tx.last_insert_rowid()));
    }
    Ok(ids)
}

fn insert_imports(tx: &Connection, file: FileId, imports: &[Import]) -> rusqlite::Result<()> {
    let mut insert_import = tx.prepare_cached(
        "INSERT INTO imports(file_id, ord, module, name, alias, wildcard, line, scope_first,
           scope_last)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for (i, imp) in imports.iter().enumerate() {
        insert_import.execute(params![
            file,
            i as i64,
            imp.module,
            imp.name,
            imp.alias,
            imp.wildcard,
            imp.line,
            imp.scope_lines.map(|s| s.0),
            imp.scope_lines.map(|s| s.1)
        ])?;
    }
    Ok(())
}

/// Inserts the local bindings, their scopes as the definitions' ids `ids`: one row of the
/// file's bindings packed (a tree has hundreds of thousands; a row each cost twice the bytes).
fn insert_locals(
    tx: &Connection,
    file: FileId,
    locals: &[Local],
    ids: &[DefId],
) -> rusqlite::Result<()> {
    if locals.is_empty() {
        return Ok(());
    }
    let packed = crate::packed::encode_locals(
        locals
            .iter()
            .map(|local| (local, local.scope.and_then(|s| ids.get(s).copied()))),
    );
    tx.prepare_cached("INSERT INTO locals(file_id, packed) VALUES (?1, ?2)")?
        .execute(params![file, packed.as_ref()])?;
    Ok(())
}

/// Replaces a changed file's facts, keeping the ids of definitions that stayed.
fn rewrite_file(
    tx: &Connection,
    file: FileId,
    fresh: &Fresh,
    changed: &mut BTreeSet<String>,
) -> rusqlite::Result<Vec<DefId>> {
    let reuse = old_definitions(tx, file)?;
    note_surface_changes(tx, file, fresh, changed)?;
    clear_file_rows(tx, file, fresh)?;
    let ids = insert_facts(tx, file, &fresh.facts, &reuse, changed)?;
    // Definitions that went away.
    let kept: HashSet<DefId> = ids.iter().copied().collect();
    for (id, shape) in reuse.values() {
        if !kept.contains(id) {
            crate::precise::forget_target(tx, *id)?;
            changed.insert(format!("n:{}", shape.0));
        }
    }
    Ok(ids)
}

/// The file's definitions as stored, keyed for reuse.
fn old_definitions(tx: &Connection, file: FileId) -> rusqlite::Result<Reuse> {
    let mut reuse: Reuse = HashMap::new();
    let mut stmt = tx.prepare_cached(
        "SELECT id, name, kind, qname, parent_id, owner, type_text, returns, IFNULL(bases, ''),
           self_name, IFNULL(type_params, '') FROM defs WHERE file_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([file], |r| {
        let shape: DefShape = (
            r.get(1)?,
            r.get(2)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
            r.get(9)?,
            r.get(10)?,
        );
        Ok((r.get::<_, DefId>(0)?, r.get::<_, String>(3)?, shape))
    })?;
    let mut nth: HashMap<(String, String), usize> = HashMap::new();
    for row in rows {
        let (id, qname, shape) = row?;
        let n = nth.entry((qname.clone(), shape.1.clone())).or_insert(0);
        reuse.insert((qname, shape.1.clone(), *n), (id, shape));
        *n += 1;
    }
    Ok(reuse)
}

/// The keys a rewrite changes beyond its definitions: its path when its imports or locals
/// changed (files that read them re-resolve), its packages and folder when its package did.
fn note_surface_changes(
    tx: &Connection,
    file: FileId,
    fresh: &Fresh,
    changed: &mut BTreeSet<String>,
) -> rusqlite::Result<()> {
    let old_imports = load_imports(tx, file)?;
    let old_package: Option<String> = tx
        .query_row("SELECT package FROM files WHERE id = ?1", [file], |r| {
            r.get(0)
        })
        .optional()?
        .flatten();
    // Positions of locals matter only within their own file: compare the rest.
    // (The callback's call is a position: what it resolves to is this file's business.)
    type LocalShape = (
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<u32>,
        Option<(u32, u32)>,
    );
    let shape = |l: &Local| -> LocalShape {
        (
            l.name.clone(),
            l.type_text.clone(),
            l.value.clone(),
            l.read.clone(),
            l.param,
            l.callback.map(|c| (c.argument, c.param)),
        )
    };
    let old_locals: Vec<LocalShape> = load_locals(tx, file)?
        .iter()
        .map(|(l, _)| shape(l))
        .collect();
    let new_locals: Vec<LocalShape> = fresh.facts.locals.iter().map(shape).collect();
    if old_imports != fresh.facts.imports || old_locals != new_locals {
        changed.insert(format!("p:{}", fresh.rel));
    }
    if old_package != fresh.facts.package {
        let fam = crate::table::family(fresh.language);
        for p in [&old_package, &fresh.facts.package].into_iter().flatten() {
            changed.insert(format!("k:{fam}:{p}"));
        }
        changed.insert(format!("d:{}", crate::table::parent_dir(&fresh.rel)));
    }
    Ok(())
}

/// Deletes the file's facts and stores its new size, time, hash, language and package.
fn clear_file_rows(tx: &Connection, file: FileId, fresh: &Fresh) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM defs WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM refs WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM fanout WHERE file_id = ?1", [file])?;
    // What the indexer said of the old bytes no longer holds: tree-sitter's edges until the
    // next precise run.
    crate::precise::forget_file(tx, file)?;
    tx.execute("DELETE FROM imports WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM locals WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM literal_args WHERE file_id = ?1", [file])?;
    tx.execute("DELETE FROM fills WHERE file_id = ?1", [file])?;
    tx.execute(
        "UPDATE files SET size = ?2, mtime_ns = ?3, hash = ?4, language = ?5, package = ?6,
           syntax_errors = ?7 WHERE id = ?1",
        params![
            file,
            fresh.size as i64,
            fresh.mtime_ns,
            fresh.hash,
            fresh.language.name,
            fresh.facts.package,
            fresh.facts.syntax_errors
        ],
    )?;
    Ok(())
}

/// The keys a file's removal (or arrival) changes.
fn note_file_keys(
    tx: &Connection,
    file: FileId,
    rel: &str,
    changed: &mut BTreeSet<String>,
) -> rusqlite::Result<()> {
    changed.insert(format!("p:{rel}"));
    changed.insert(format!("d:{}", crate::table::parent_dir(rel)));
    changed.insert(format!("b:{}", crate::table::file_name(rel)));
    let (language, package): (String, Option<String>) = tx.query_row(
        "SELECT language, package FROM files WHERE id = ?1",
        [file],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if let (Some(lang), Some(p)) = (cc_languages::by_name(&language), package) {
        changed.insert(format!("k:{}:{p}", crate::table::family(lang)));
    }
    let mut stmt = tx.prepare_cached("SELECT name FROM defs WHERE file_id = ?1")?;
    let names = stmt.query_map([file], |r| r.get::<_, String>(0))?;
    for n in names {
        changed.insert(format!("n:{}", n?));
    }
    Ok(())
}

fn delete_file(tx: &Connection, file: FileId) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached("SELECT id FROM defs WHERE file_id = ?1")?;
    let gone = stmt
        .query_map([file], |r| r.get::<_, DefId>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for def in gone {
        crate::precise::forget_target(tx, def)?;
        tx.execute("DELETE FROM fills WHERE implemented_id = ?1", [def])?;
    }
    crate::precise::forget_file(tx, file)?;
    forget_deps(tx, file)?;
    for table in [
        "defs",
        "refs",
        "fanout",
        "imports",
        "locals",
        "literal_args",
        "fills",
        "file_counts",
    ] {
        tx.execute(&format!("DELETE FROM {table} WHERE file_id = ?1"), [file])?;
    }
    tx.execute("DELETE FROM files WHERE id = ?1", [file])?;
    Ok(())
}

/// Forgets the keys the file's resolution read (`deps`), by the list `file_keys` keeps of them:
/// an index of `deps` by file would cost as much as `deps` itself.
pub(crate) fn forget_deps(tx: &Connection, file: FileId) -> rusqlite::Result<()> {
    let packed: Option<Vec<u8>> = tx
        .prepare_cached("SELECT packed FROM file_keys WHERE file_id = ?1")?
        .query_row([file], |r| r.get(0))
        .optional()?;
    let Some(packed) = packed else {
        return Ok(());
    };
    let mut delete = tx.prepare_cached("DELETE FROM deps WHERE key_id = ?1 AND file_id = ?2")?;
    for key in crate::packed::decode_ids(&packed) {
        delete.execute(params![key, file])?;
    }
    tx.prepare_cached("DELETE FROM file_keys WHERE file_id = ?1")?
        .execute([file])?;
    Ok(())
}

/// The id the next new key gets: kept in `meta` as `next_key` (`keys` is keyed by the
/// key's text, so that text is stored once).
pub(crate) fn next_key_id(tx: &Connection) -> rusqlite::Result<i64> {
    let stored: Option<String> = tx
        .query_row("SELECT value FROM meta WHERE key = 'next_key'", [], |r| {
            r.get(0)
        })
        .optional()?;
    match stored.and_then(|v| v.parse().ok()) {
        Some(next) => Ok(next),
        None => tx.query_row("SELECT IFNULL(MAX(id), 0) + 1 FROM keys", [], |r| r.get(0)),
    }
}

/// Records the keys the file's resolution read (`deps`, and their list in `file_keys`);
/// `keys` are the keys' ids, sorted and without repeats.
pub(crate) fn record_deps(tx: &Connection, file: FileId, keys: &[i64]) -> rusqlite::Result<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut insert =
        tx.prepare_cached("INSERT OR IGNORE INTO deps(key_id, file_id) VALUES (?1, ?2)")?;
    for key in keys {
        insert.execute(params![key, file])?;
    }
    tx.prepare_cached("INSERT OR REPLACE INTO file_keys(file_id, packed) VALUES (?1, ?2)")?
        .execute(params![file, crate::packed::encode_ids(keys)])?;
    Ok(())
}

/// Files whose recorded keys intersect `keys`, and the files whose includes reach what
/// changed: a C or C++ file whose own includes read a changed key, then every file that
/// includes one of those, transitively (each file records its own includes' keys only:
/// [`crate::table::REACH`]).
fn dependents(tx: &Connection, keys: &BTreeSet<String>) -> rusqlite::Result<BTreeSet<FileId>> {
    use crate::table::REACH;
    let mut out = BTreeSet::new();
    let mut stmt = tx.prepare_cached(
        "SELECT d.file_id FROM keys k JOIN deps d ON d.key_id = k.id WHERE k.key = ?1",
    )?;
    let mut path_of = tx.prepare_cached("SELECT path FROM files WHERE id = ?1")?;
    for key in keys {
        let rows = stmt.query_map([key], |r| r.get::<_, FileId>(0))?;
        for r in rows {
            out.insert(r?);
        }
    }
    let mut reached: HashSet<FileId> = HashSet::new();
    let mut frontier: Vec<String> = keys.iter().map(|k| format!("{REACH}{k}")).collect();
    while let Some(key) = frontier.pop() {
        let rows = stmt
            .query_map([&key], |r| r.get::<_, FileId>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for file in rows {
            out.insert(file);
            if reached.insert(file) {
                if let Some(path) = path_of
                    .query_row([file], |r| r.get::<_, String>(0))
                    .optional()?
                {
                    frontier.push(format!("{REACH}p:{path}"));
                }
            }
        }
    }
    Ok(out)
}

fn load_files(tx: &Connection) -> rusqlite::Result<Vec<FileInfo>> {
    let mut stmt =
        tx.prepare_cached("SELECT id, path, language, package FROM files ORDER BY id")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, FileId>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, path, language, package) = row?;
        if let Some(language) = cc_languages::by_name(&language) {
            out.push(FileInfo {
                id,
                path,
                language,
                package,
            });
        }
    }
    Ok(out)
}

fn def_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DefInfo> {
    let text = |i: usize| -> rusqlite::Result<Option<&str>> {
        match r.get_ref(i)? {
            rusqlite::types::ValueRef::Text(t) => Ok(std::str::from_utf8(t).ok()),
            _ => Ok(None),
        }
    };
    Ok(DefInfo::new(
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        DefKind::parse(&r.get::<_, String>(3)?).unwrap_or(DefKind::Variable),
        r.get(4)?,
        crate::table::DefDetail {
            owner: text(5)?,
            type_text: text(6)?,
            returns: text(7)?,
            bases: text(8)?,
            self_name: text(9)?,
            type_params: text(10)?,
        },
    ))
}

const DEF_COLUMNS: &str =
    "id, file_id, name, kind, parent_id, owner, type_text, returns, bases, self_name, type_params";

/// An import from `module, name, alias, wildcard, line, scope_first, scope_last` at `at`.
fn import_from_row(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Import> {
    let first: Option<u32> = r.get(at + 5)?;
    let last: Option<u32> = r.get(at + 6)?;
    Ok(Import {
        module: r.get(at)?,
        name: r.get(at + 1)?,
        alias: r.get(at + 2)?,
        wildcard: r.get(at + 3)?,
        line: r.get(at + 4)?,
        scope_lines: first.zip(last),
    })
}

fn load_imports(tx: &Connection, file: FileId) -> rusqlite::Result<Vec<Import>> {
    let mut stmt = tx.prepare_cached(
        "SELECT module, name, alias, wildcard, line, scope_first, scope_last FROM imports
         WHERE file_id = ?1 ORDER BY ord",
    )?;
    let rows = stmt.query_map([file], |r| import_from_row(r, 0))?;
    rows.collect()
}

fn load_locals(tx: &Connection, file: FileId) -> rusqlite::Result<Vec<(Local, Option<DefId>)>> {
    let mut stmt = tx.prepare_cached("SELECT packed FROM locals WHERE file_id = ?1")?;
    let packed: Option<Vec<u8>> = stmt.query_row([file], |r| r.get(0)).optional()?;
    Ok(packed.map_or_else(Vec::new, |p| crate::packed::decode_locals(&p)))
}

/// Rows `(file, item)` in file order, handed to `each` one file's items at a time.
fn by_file<T>(
    rows: impl Iterator<Item = rusqlite::Result<(FileId, T)>>,
    mut each: impl FnMut(FileId, Vec<T>),
) -> rusqlite::Result<()> {
    let mut current: Option<(FileId, Vec<T>)> = None;
    for row in rows {
        let (file, item) = row?;
        match &mut current {
            Some((at, items)) if *at == file => items.push(item),
            _ => {
                if let Some((at, items)) = current.replace((file, vec![item])) {
                    each(at, items);
                }
            }
        }
    }
    if let Some((at, items)) = current {
        each(at, items);
    }
    Ok(())
}

/// Loads every definition, import and local binding into `table`.
fn load_everything(tx: &Connection, table: &mut Table<NoBacking>) -> rusqlite::Result<()> {
    // Streamed: a kernel-size tree's facts are added as they are read, never held twice.
    {
        let mut stmt = tx.prepare(&format!("SELECT {DEF_COLUMNS} FROM defs"))?;
        let rows = stmt.query_map([], def_from_row)?;
        for row in rows {
            table.add_def(row?);
        }
    }
    let ids: Vec<FileId> = table.files().map(|f| f.id).collect();
    for id in &ids {
        table.set_imports(*id, Vec::new());
        table.set_locals(*id, &[]);
    }
    // Both tables' keys are (file_id, ord): the scans are in that order.
    let mut stmt = tx.prepare(
        "SELECT file_id, module, name, alias, wildcard, line, scope_first, scope_last
         FROM imports ORDER BY file_id, ord",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, FileId>(0)?, import_from_row(r, 1)?)))?;
    by_file(rows, |file, list| table.set_imports(file, list))?;
    // Stored as the table keeps them: copied, not decoded.
    let mut stmt = tx.prepare("SELECT file_id, packed FROM locals")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, FileId>(0)?, r.get::<_, Vec<u8>>(1)?))
    })?;
    for row in rows {
        let (file, packed) = row?;
        table.set_packed_locals(file, packed.into_boxed_slice());
    }
    Ok(())
}

/// An object literal's member passed as an argument: (the call's index among the file's
/// references, the argument, the member).
pub(crate) type LiteralArgIn = (usize, u32, DefId);

type StoredRefs = (FileId, Vec<i64>, Vec<RefIn>);

fn load_refs(tx: &Connection, files: &[FileId], all: bool) -> rusqlite::Result<Vec<StoredRefs>> {
    let mut out: BTreeMap<FileId, (Vec<i64>, Vec<RefIn>)> = BTreeMap::new();
    // Each distinct name read once, and shared by the references that use it.
    let mut text_of: HashMap<i64, Arc<str>> = HashMap::new();
    let mut find_text = tx.prepare_cached("SELECT text FROM names WHERE id = ?1")?;
    let mut text = |id: i64| -> rusqlite::Result<Arc<str>> {
        if let Some(known) = text_of.get(&id) {
            return Ok(known.clone());
        }
        let text: Arc<str> = Arc::from(find_text.query_row([id], |r| r.get::<_, String>(0))?);
        text_of.insert(id, text.clone());
        Ok(text)
    };
    let mut row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(FileId, i64, RefIn)> {
        Ok((
            r.get(0)?,
            r.get(1)?,
            RefIn {
                kind: ref_kind_of(r.get(2)?),
                name: text(r.get(3)?)?,
                receiver: match r.get::<_, Option<i64>>(4)? {
                    Some(id) => Some(text(id)?),
                    None => None,
                },
                enclosing: r.get(5)?,
                pos: crate::model::Pos {
                    line: r.get(6)?,
                    column: r.get(7)?,
                },
            },
        ))
    };
    let mut push = |(f, ord, rin): (FileId, i64, RefIn)| {
        let entry = out.entry(f).or_default();
        entry.0.push(ord);
        entry.1.push(rin);
    };
    let wanted: HashSet<FileId> = files.iter().copied().collect();
    if all {
        let mut stmt = tx.prepare(
            "SELECT file_id, ord, kind, name_id, receiver_id, enclosing_id, line, col FROM refs
             ORDER BY file_id, ord",
        )?;
        let rows = stmt.query_map([], &mut row)?;
        for r in rows {
            let r = r?;
            if wanted.contains(&r.0) {
                push(r);
            }
        }
    } else {
        let mut stmt = tx.prepare_cached(
            "SELECT file_id, ord, kind, name_id, receiver_id, enclosing_id, line, col FROM refs
             WHERE file_id = ?1 ORDER BY ord",
        )?;
        for f in files {
            let rows = stmt.query_map([f], &mut row)?;
            for r in rows {
                push(r?);
            }
        }
    }
    for f in files {
        out.entry(*f).or_default();
    }
    Ok(out.into_iter().map(|(f, (o, r))| (f, o, r)).collect())
}

/// The index as a backing for a table: what an update's resolution looks up.
struct SqlBacking<'c> {
    conn: &'c Connection,
}

impl Backing for SqlBacking<'_> {
    fn defs_named(&self, name: &str) -> Vec<DefInfo> {
        let Ok(mut stmt) = self
            .conn
            .prepare_cached(&format!("SELECT {DEF_COLUMNS} FROM defs WHERE name = ?1"))
        else {
            return Vec::new();
        };
        stmt.query_map([name], def_from_row)
            .map(|rows| rows.filter_map(|r| r.ok()).collect())
            .unwrap_or_default()
    }

    fn def(&self, id: DefId) -> Option<DefInfo> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {DEF_COLUMNS} FROM defs WHERE id = ?1"))
            .ok()?;
        stmt.query_row([id], def_from_row).optional().ok().flatten()
    }

    fn interface_members(&self, iface: &DefInfo) -> Vec<DefInfo> {
        let Ok(mut stmt) = self.conn.prepare_cached(&format!(
            "SELECT {DEF_COLUMNS} FROM defs WHERE file_id = ?1 AND parent_id = ?2"
        )) else {
            return Vec::new();
        };
        stmt.query_map(params![iface.file, iface.id], def_from_row)
            .map(|rows| rows.filter_map(|r| r.ok()).collect())
            .unwrap_or_default()
    }

    fn imports_of(&self, file: FileId) -> Vec<Import> {
        load_imports(self.conn, file).unwrap_or_default()
    }

    fn locals_of(&self, file: FileId) -> Vec<(Local, Option<DefId>)> {
        load_locals(self.conn, file).unwrap_or_default()
    }
}

/// For tests: changes what an index file says about itself.
#[doc(hidden)]
pub mod testing {
    use std::path::Path;

    /// Rewrites the schema version an index records (a later open must rebuild it).
    pub fn set_schema_version(path: &Path, version: i64) -> rusqlite::Result<()> {
        let conn = rusqlite::Connection::open(path)?;
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema'",
            [version.to_string()],
        )?;
        Ok(())
    }
}
