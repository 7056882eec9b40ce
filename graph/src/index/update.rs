//! The pipeline of every refresh and update, a phase per function: the plan of what changed
//! is made before any transaction; then, in one immediate transaction, the files gone are
//! removed, the changed ones extracted and written, the files to resolve again chosen and
//! resolved, and the ranks kept; after the commit the caches the change made stale are
//! dropped.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use rayon::prelude::*;
use rusqlite::{params, CachedStatement, Connection, OptionalExtension};

use super::{
    create_query_indexes, data_version, delete_file, dependents, drop_query_indexes,
    file_def_names, has_files, hash, insert_facts, insert_file, known_files_of, load_everything,
    load_files, load_refs, note_file_keys, now_ms, read_and_extract, ref_kind_code, rewrite_file,
    rung_code, FileCounts, Fresh, Graph, GraphError, Known, LiteralArgIn, NameIds, ProgressHook,
    Result, Seen, SqlBacking, UpdateStats, BULK_FILES, OUTCOME_EXTERNAL, OUTCOME_RESOLVED,
    OUTCOME_UNRESOLVED,
};
use crate::pending::{PendingReader, PendingRef, PendingRefs};
use crate::project::Project;
use crate::ranks::{self, EdgeSpill, RankUpkeep};
use crate::resolve::{self, Outcome, RefIn};
use crate::table::{DefId, FileId, FileIndex, NoBacking, Table};

/// What a refresh or an update covers.
pub(super) enum UpdateScope {
    /// The whole tree as the walk saw it, with what the index held before the walk began:
    /// a file it held then and the walk did not see is gone. (What the index holds once the
    /// walk is done may name files another run added meanwhile, which the walk missed.)
    Tree {
        /// The files the walk saw.
        seen: Vec<Seen>,
        /// What the index held before the walk.
        before: KnownBefore,
    },
    /// The paths a writer named, and those of them that exist: a named file that does not
    /// is gone.
    Paths {
        /// Every path named.
        named: BTreeSet<String>,
        /// Those of them found on disk.
        present: Vec<Seen>,
    },
}

/// What the index held of every file, and its `PRAGMA data_version` then.
pub(super) struct KnownBefore {
    version: i64,
    known: HashMap<String, Known>,
}

impl KnownBefore {
    /// What `conn`'s index holds now.
    pub(super) fn read(conn: &Connection) -> rusqlite::Result<Self> {
        Ok(KnownBefore {
            version: data_version(conn)?,
            known: known_files_of(conn, None)?,
        })
    }
}

/// Files resolved (and their outcomes written) per round of a refresh.
const RESOLVE_CHUNK: usize = 128;

impl Graph {
    /// Brings the index up to date with `scope` and the configuration files `configs`.
    pub(super) fn apply(&mut self, scope: UpdateScope, configs: Vec<Seen>) -> Result<UpdateStats> {
        let laps = Laps::start();
        let mut plan = self.plan(scope)?;
        laps.lap("files known");
        let key = |c: &Seen| (c.rel.clone(), c.size, c.mtime_ns);
        let configs_changed = self
            .stored_configs()?
            .iter()
            .map(key)
            .ne(configs.iter().map(key));
        let project = Project::read(
            &self.root,
            &configs.iter().map(|c| c.rel.clone()).collect::<Vec<_>>(),
        );
        let cx = Context {
            root: self.root.clone(),
            db_path: self.db_path.clone(),
            progress: self.progress.clone(),
            cancel: self.cancel.clone(),
            threads: self.config.threads().max(1),
            pool: self.pool(),
            laps,
        };
        // Kept again only once committed: a failed update keeps nothing.
        let kept_files = self.file_index.borrow_mut().take();
        // Immediate: a write transaction that began as a read would fail, not wait, when
        // another run wrote in between.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(cx.sql())?;
        let changed_configs = configs_changed.then_some(configs.as_slice());
        let done = run(&tx, &cx, &mut plan, changed_configs, project, kept_files)?;
        tx.commit().map_err(cx.sql())?;
        self.after_commit(&cx, &plan, done)
    }

    /// What changed since the index was written, read before the transaction.
    fn plan(&self, scope: UpdateScope) -> Result<Plan> {
        let sql = self.sql();
        let refresh = matches!(scope, UpdateScope::Tree { .. });
        let (version, only, known, candidates, removed) = match scope {
            UpdateScope::Tree { seen, before } => {
                let present: HashSet<&str> = seen.iter().map(|s| s.rel.as_str()).collect();
                let removed = before
                    .known
                    .keys()
                    .filter(|k| !present.contains(k.as_str()))
                    .cloned()
                    .collect();
                (before.version, None, before.known, seen, removed)
            }
            UpdateScope::Paths { named, present } => {
                let version = data_version(&self.conn).map_err(&sql)?;
                // A writer's update needs what the index holds of its own paths only (a
                // kernel-size tree has tens of thousands of files).
                let only: Vec<String> = named.iter().cloned().collect();
                let known = known_files_of(&self.conn, Some(&only)).map_err(&sql)?;
                let found: HashSet<&str> = present.iter().map(|s| s.rel.as_str()).collect();
                let removed = named
                    .iter()
                    .filter(|n| !found.contains(n.as_str()) && known.contains_key(*n))
                    .cloned()
                    .collect();
                (version, Some(only), known, present, removed)
            }
        };
        let nothing_known = if refresh {
            known.is_empty()
        } else {
            !has_files(&self.conn).map_err(&sql)?
        };
        let files_seen = candidates.len();
        // Unchanged size and time: nothing to do on a refresh. A writer's named paths are
        // always hashed (a rewrite within the clock's resolution keeps size and time).
        let changed = candidates
            .into_iter()
            .filter(|s| {
                !refresh
                    || known
                        .get(&s.rel)
                        .is_none_or(|k| k.size != s.size || k.mtime_ns != s.mtime_ns)
            })
            .collect();
        Ok(Plan {
            version,
            only,
            known,
            nothing_known,
            files_seen,
            changed,
            removed,
        })
    }

    /// Keeps what stays true after the commit and drops what the change made stale.
    fn after_commit(&mut self, cx: &Context, plan: &Plan, done: Done) -> Result<UpdateStats> {
        let Done {
            stats,
            files_version,
            all_files,
            extracted_ids,
            resolve_all,
            written,
            interrupted,
            freeing,
        } = done;
        *self.file_index.borrow_mut() = Some((files_version, all_files));
        if stats.extracted + stats.removed > 256 || resolve_all {
            // A large change leaves a large write-ahead log: fold it into the index now.
            let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
        } else {
            self.checkpointer.request();
        }
        if let Some(freeing) = freeing {
            let _ = freeing.join();
        }
        cx.laps.lap("committed");
        if stats.extracted + stats.removed > 0 {
            self.stale = Some(Vec::new());
            // The lines of the files read again (a map after a write signs hundreds of
            // other files' definitions).
            let mut lines = self.lines.borrow_mut();
            for rel in plan.changed.iter().map(|s| &s.rel).chain(&plan.removed) {
                lines.remove(rel);
            }
            drop(lines);
            self.append_names(&extracted_ids)?;
            self.precise_state.borrow_mut().take();
        }
        if interrupted {
            return Err(GraphError::Cancelled {
                done: written,
                total: plan.changed.len(),
            });
        }
        Ok(stats)
    }

    /// The names the files read again define join the kept list (or the list is dropped,
    /// when it cannot take them).
    fn append_names(&self, extracted_ids: &BTreeSet<FileId>) -> Result<()> {
        let mut names = self.names.borrow_mut();
        let appended = match names.as_mut().and_then(Arc::get_mut) {
            Some(list) if extracted_ids.len() <= BULK_FILES => {
                let mut added: Vec<String> = Vec::new();
                for file in extracted_ids {
                    added.extend(file_def_names(&self.conn, *file).map_err(self.sql())?);
                }
                added.sort_unstable();
                added.dedup();
                list.append(&added)
            }
            _ => false,
        };
        if !appended {
            names.take();
        }
        Ok(())
    }
}

/// The phases' times and resident memory, on stderr when `CC_GRAPH_TIMING` is set (the
/// kernel-size goals are about both).
#[derive(Clone, Copy)]
struct Laps {
    on: bool,
    started: Instant,
}

impl Laps {
    fn start() -> Self {
        Laps {
            on: std::env::var_os("CC_GRAPH_TIMING").is_some(),
            started: Instant::now(),
        }
    }

    fn lap(&self, what: &str) {
        if !self.on {
            return;
        }
        let rss = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_owned();
                Some(line.trim_start_matches("VmRSS:").trim().to_owned())
            })
            .unwrap_or_default();
        eprintln!("graph: {what} at {:.1?}, rss {rss}", self.started.elapsed());
    }
}

/// What changed, as read before the transaction.
struct Plan {
    /// `PRAGMA data_version` when `known` was read.
    version: i64,
    /// The paths whose rows `known` holds (`None`: every file).
    only: Option<Vec<String>>,
    /// What the index holds of the files in scope.
    known: HashMap<String, Known>,
    /// The index holds no file: a first build.
    nothing_known: bool,
    files_seen: usize,
    /// The files to read again: changed size or time, or named by a writer.
    changed: Vec<Seen>,
    /// Indexed files that are gone.
    removed: Vec<String>,
}

/// What the phases need of the graph while the transaction holds its connection.
struct Context {
    root: PathBuf,
    db_path: PathBuf,
    progress: Option<ProgressHook>,
    cancel: Option<Arc<AtomicBool>>,
    threads: usize,
    pool: rayon::ThreadPool,
    laps: Laps,
}

impl Context {
    fn sql(&self) -> impl Fn(rusqlite::Error) -> GraphError + '_ {
        |source| GraphError::Sqlite {
            path: self.db_path.clone(),
            source,
        }
    }

    /// The file a large build keeps its references in until they are resolved.
    fn pending_path(&self) -> PathBuf {
        self.db_path.with_extension("pending-refs")
    }

    fn pending_error(&self) -> impl Fn(std::io::Error) -> GraphError + '_ {
        |source| GraphError::Pending {
            path: self.pending_path(),
            source,
        }
    }

    /// The file a build that resolves every file keeps the ranks' edges in.
    fn rank_path(&self) -> PathBuf {
        self.db_path.with_extension("rank-edges")
    }

    fn rank_error(&self) -> impl Fn(std::io::Error) -> GraphError + '_ {
        |source| GraphError::RankEdges {
            path: self.rank_path(),
            source,
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// What the transaction did, for what follows its commit.
struct Done {
    stats: UpdateStats,
    /// `PRAGMA data_version` when the files were loaded.
    files_version: i64,
    all_files: Arc<FileIndex>,
    extracted_ids: BTreeSet<FileId>,
    resolve_all: bool,
    /// Files extracted and written before a cancel (all of `changed` otherwise).
    written: usize,
    interrupted: bool,
    /// The thread freeing the whole tree's table.
    freeing: Option<std::thread::JoinHandle<()>>,
}

/// The phases inside the transaction.
fn run(
    tx: &Connection,
    cx: &Context,
    plan: &mut Plan,
    changed_configs: Option<&[Seen]>,
    project: Project,
    kept_files: Option<(i64, Arc<FileIndex>)>,
) -> Result<Done> {
    let sql = cx.sql();
    let (mut pass, bulk, precise_rows) = Pass::begin(tx, cx, plan, changed_configs)?;
    pass.remove(&plan.removed, &plan.known)?;
    // The references of the files extracted, enclosing definitions as ids (the rest of
    // their facts is in the index: a clean build holds only these). A large build writes
    // them beside the index (a kernel-size tree has millions).
    let mut waiting = if bulk {
        PendingRefs::spilled_to(&cx.pending_path()).map_err(cx.pending_error())?
    } else {
        PendingRefs::in_memory()
    };
    let written = pass.extract(&plan.changed, &plan.known, &mut waiting)?;
    cx.laps.lap("extracted and facts written");

    let files_version = data_version(tx).map_err(&sql)?;
    let all_files = pass.file_index(kept_files, files_version)?;
    cx.laps.lap("files loaded");
    let extracted_ids: BTreeSet<FileId> = waiting.files().iter().copied().collect();
    // Stopped before every file was read: what was read is kept with its references
    // unresolved, and a mark makes the next refresh resolve everything.
    let mut interrupted = written < plan.changed.len();
    let pending = tx
        .query_row(
            "SELECT value FROM meta WHERE key = 'resolve_pending'",
            [],
            |r| r.get::<_, String>(0),
        )
        .optional()
        .map_err(&sql)?
        .is_some();
    let resolve_all = !interrupted
        && (changed_configs.is_some() || pending || pass.stats.rebuilt_hint(plan.nothing_known));
    let targets = pass.targets(interrupted, resolve_all, &extracted_ids, &all_files)?;
    pass.stats.re_resolved = targets.len();
    // A build that resolves every file writes the ranks' edges as it goes, for the whole
    // computation after it.
    let rank_spill = if resolve_all && !precise_rows {
        Some(EdgeSpill::create(&cx.rank_path()).map_err(cx.rank_error())?)
    } else {
        None
    };
    let resolution = pass.resolve(Resolution {
        targets,
        extracted_ids: &extracted_ids,
        waiting,
        all_files: &all_files,
        project,
        resolve_all,
        interrupted,
        rank_spill,
    })?;
    interrupted = resolution.interrupted;
    mark_pending(tx, interrupted, resolve_all && pending).map_err(&sql)?;
    if bulk {
        create_query_indexes(tx).map_err(&sql)?;
        cx.laps.lap("query indexes built");
    }
    pass.keep_ranks(
        interrupted,
        resolve_all,
        precise_rows,
        resolution.rank_spill,
    )?;
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('updated_at', ?1)",
        [now_ms().to_string()],
    )
    .map_err(&sql)?;
    Ok(Done {
        stats: pass.stats,
        files_version,
        all_files,
        extracted_ids,
        resolve_all,
        written,
        interrupted,
        freeing: resolution.freeing,
    })
}

/// Marks an index whose references are not all resolved (the next refresh resolves
/// everything), or clears the mark once they are (`cleared`).
fn mark_pending(tx: &Connection, interrupted: bool, cleared: bool) -> rusqlite::Result<()> {
    // Extracted files that were not re-resolved cannot exist (they are always targets).
    if interrupted {
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('resolve_pending', '1')",
            [],
        )?;
    } else if cleared {
        tx.execute("DELETE FROM meta WHERE key = 'resolve_pending'", [])?;
    }
    Ok(())
}

/// Stores the configuration files as they are now (any change re-resolves everything).
fn store_configs(tx: &Connection, root: &Path, configs: &[Seen]) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM config_files", [])?;
    for c in configs {
        let bytes = std::fs::read(root.join(&c.rel)).unwrap_or_default();
        tx.execute(
            "INSERT INTO config_files(path, size, mtime_ns, hash) VALUES (?1, ?2, ?3, ?4)",
            params![c.rel, c.size as i64, c.mtime_ns, hash(&bytes)],
        )?;
    }
    Ok(())
}

/// The transaction's running state, shared by its phases.
struct Pass<'a> {
    tx: &'a Connection,
    cx: &'a Context,
    stats: UpdateStats,
    /// The keys (names, paths, folders, packages) whose meaning the change may have moved:
    /// the files that read one are resolved again.
    changed_keys: BTreeSet<String>,
    /// The kept ranks, followed through the change when they can be.
    upkeep: Option<RankUpkeep>,
    nothing_known: bool,
}

/// What the resolution phase works on.
struct Resolution<'r> {
    targets: BTreeSet<FileId>,
    extracted_ids: &'r BTreeSet<FileId>,
    waiting: PendingRefs,
    all_files: &'r Arc<FileIndex>,
    project: Project,
    resolve_all: bool,
    interrupted: bool,
    rank_spill: Option<EdgeSpill>,
}

/// What the resolution phase leaves.
struct Resolved {
    interrupted: bool,
    rank_spill: Option<EdgeSpill>,
    freeing: Option<std::thread::JoinHandle<()>>,
}

impl<'a> Pass<'a> {
    /// Opens the phases: re-reads what another run committed since the plan, stores changed
    /// configuration files, drops the query indexes for a first bulk build, and starts
    /// following the kept ranks when they can be. Returns the pass, whether the build is
    /// bulk, and whether the precise tier's rows are in the index.
    fn begin(
        tx: &'a Connection,
        cx: &'a Context,
        plan: &mut Plan,
        changed_configs: Option<&[Seen]>,
    ) -> Result<(Self, bool, bool)> {
        let sql = cx.sql();
        // Another run on this root committed since the files were read: what the index
        // holds now decides between adding and rewriting a file.
        if data_version(tx).map_err(&sql)? != plan.version {
            plan.nothing_known = !has_files(tx).map_err(&sql)?;
            plan.known = known_files_of(tx, plan.only.as_deref()).map_err(&sql)?;
        }
        if let Some(configs) = changed_configs {
            store_configs(tx, &cx.root, configs).map_err(&sql)?;
        }
        let bulk = plan.nothing_known && plan.changed.len() >= BULK_FILES;
        if bulk {
            drop_query_indexes(tx).map_err(&sql)?;
        }
        let precise_rows = ranks::precise_rows(tx).map_err(&sql)?;
        // The kept ranks follow the update when they describe the edges now.
        let upkeep = if !bulk && ranks::kept(tx).map_err(&sql)? {
            Some(RankUpkeep::begin(tx).map_err(&sql)?)
        } else {
            None
        };
        let pass = Pass {
            tx,
            cx,
            stats: UpdateStats {
                files_seen: plan.files_seen,
                hashed: plan.changed.len(),
                ..UpdateStats::default()
            },
            changed_keys: BTreeSet::new(),
            upkeep,
            nothing_known: plan.nothing_known,
        };
        Ok((pass, bulk, precise_rows))
    }
}

impl Pass<'_> {
    /// Notes that `file`'s rows are about to change, for the kept ranks.
    fn before(&mut self, file: FileId) -> Result<()> {
        if let Some(upkeep) = self.upkeep.as_mut() {
            upkeep.before(self.tx, file).map_err(self.cx.sql())?;
        }
        Ok(())
    }

    /// Removes the files that are gone.
    fn remove(&mut self, removed: &[String], known: &HashMap<String, Known>) -> Result<()> {
        for rel in removed {
            if let Some(k) = known.get(rel) {
                self.before(k.id)?;
                note_file_keys(self.tx, k.id, rel, &mut self.changed_keys)
                    .map_err(self.cx.sql())?;
                delete_file(self.tx, k.id).map_err(self.cx.sql())?;
                self.stats.removed += 1;
            }
        }
        Ok(())
    }

    /// Workers read and extract while this thread writes what they found, in the order of
    /// `changed` (ids follow path order whatever the timing): memory holds a few files'
    /// facts at a time, not the tree's. Returns how many files were written before a cancel
    /// (all of them otherwise).
    fn extract(
        &mut self,
        changed: &[Seen],
        known: &HashMap<String, Known>,
        waiting: &mut PendingRefs,
    ) -> Result<usize> {
        let cx = self.cx;
        let mut failure: Option<GraphError> = None;
        let next = AtomicUsize::new(0);
        let mut written = 0;
        std::thread::scope(|scope| {
            let (sender, receiver) = mpsc::sync_channel::<(usize, Option<Fresh>)>(cx.threads * 16);
            for _ in 0..cx.threads.min(changed.len()) {
                let sender = sender.clone();
                let next = &next;
                scope.spawn(move || {
                    let mut parser = cc_languages::Parser::new();
                    while !cx.cancelled() {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(s) = changed.get(i) else { break };
                        let fresh = read_and_extract(&mut parser, &cx.root, s, known.get(&s.rel));
                        if sender.send((i, fresh)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            let mut pending: BTreeMap<usize, Option<Fresh>> = BTreeMap::new();
            let mut want = 0;
            'received: for (i, fresh) in receiver {
                pending.insert(i, fresh);
                while let Some(fresh) = pending.remove(&want) {
                    let seen = &changed[want];
                    want += 1;
                    if let Some(ProgressHook(report)) = &cx.progress {
                        // About a hundred reports, whatever the size of the tree.
                        if want == changed.len()
                            || want.is_multiple_of((changed.len() / 100).max(1))
                        {
                            report(want, changed.len());
                        }
                    }
                    if let Err(e) = self.write_fresh(seen, fresh, known, waiting) {
                        // Dropping the receiver stops the workers.
                        failure = Some(e);
                        break 'received;
                    }
                }
            }
            written = want;
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }

    /// Writes one file read again: its facts when its bytes changed, its time otherwise.
    fn write_fresh(
        &mut self,
        seen: &Seen,
        fresh: Option<Fresh>,
        known: &HashMap<String, Known>,
        waiting: &mut PendingRefs,
    ) -> Result<()> {
        let sql = self.cx.sql();
        let Some(fresh) = fresh else {
            // Same bytes, new time: remember the time only.
            if let Some(k) = known.get(&seen.rel) {
                self.tx
                    .execute(
                        "UPDATE files SET size = ?2, mtime_ns = ?3 WHERE id = ?1",
                        params![k.id, seen.size as i64, seen.mtime_ns],
                    )
                    .map_err(&sql)?;
            }
            return Ok(());
        };
        self.stats.extracted += 1;
        let (file_id, def_ids) = match known.get(&fresh.rel) {
            Some(k) => {
                self.before(k.id)?;
                let ids =
                    rewrite_file(self.tx, k.id, &fresh, &mut self.changed_keys).map_err(&sql)?;
                (k.id, ids)
            }
            None => {
                self.stats.added += 1;
                let id = insert_file(self.tx, &fresh).map_err(&sql)?;
                // Nothing yet: its definitions are all new.
                self.before(id)?;
                let ids = insert_facts(
                    self.tx,
                    id,
                    &fresh.facts,
                    &HashMap::new(),
                    &mut self.changed_keys,
                )
                .map_err(&sql)?;
                self.note_new_file(&fresh);
                (id, ids)
            }
        };
        if self.nothing_known {
            // A first build resolves every file: the keys it changed (millions of names on
            // a kernel-size tree) would pick no dependent.
            self.changed_keys.clear();
        }
        let literals: Vec<LiteralArgIn> = fresh
            .facts
            .literal_args
            .iter()
            .filter_map(|a| Some((a.reference, a.argument, *def_ids.get(a.member)?)))
            .collect();
        let refs = fresh.facts.references.iter().map(|r| PendingRef {
            kind: r.kind,
            name: &r.name,
            receiver: r.receiver.as_deref(),
            enclosing: r.enclosing.and_then(|e| def_ids.get(e).copied()),
            pos: r.pos,
        });
        waiting
            .push(file_id, refs, &literals)
            .map_err(self.cx.pending_error())
    }

    /// The keys a new file changes: its path, its folder's and name's listings, its package.
    fn note_new_file(&mut self, fresh: &Fresh) {
        let keys = &mut self.changed_keys;
        keys.insert(format!("p:{}", fresh.rel));
        keys.insert(format!("d:{}", crate::table::parent_dir(&fresh.rel)));
        keys.insert(format!("b:{}", crate::table::file_name(&fresh.rel)));
        if let Some(p) = &fresh.facts.package {
            keys.insert(format!("k:{}:{p}", crate::table::family(fresh.language)));
        }
    }

    /// The files and their lookups: those kept from the last update while the file set
    /// stays (no file added or removed, no package changed, no other run's commit), read
    /// again otherwise.
    fn file_index(
        &self,
        kept_files: Option<(i64, Arc<FileIndex>)>,
        files_version: i64,
    ) -> Result<Arc<FileIndex>> {
        let file_set_changed = self.stats.added > 0
            || self.stats.removed > 0
            || self.changed_keys.iter().any(|k| k.starts_with("k:"));
        match kept_files.filter(|(at, _)| *at == files_version && !file_set_changed) {
            Some((_, files)) => Ok(files),
            None => Ok(Arc::new(FileIndex::new(
                load_files(self.tx).map_err(self.cx.sql())?,
            ))),
        }
    }

    /// Which files to resolve again: the extracted ones, and those that read a changed key
    /// (every file when everything is resolved again; only the extracted ones after a
    /// cancel).
    fn targets(
        &self,
        interrupted: bool,
        resolve_all: bool,
        extracted_ids: &BTreeSet<FileId>,
        all_files: &FileIndex,
    ) -> Result<BTreeSet<FileId>> {
        if interrupted {
            return Ok(extracted_ids.clone());
        }
        if resolve_all {
            return Ok(all_files.ids().collect());
        }
        let mut targets = extracted_ids.clone();
        targets.extend(dependents(self.tx, &self.changed_keys).map_err(self.cx.sql())?);
        targets.retain(|f| all_files.contains(*f));
        Ok(targets)
    }

    /// Resolves the targets' references and writes their outcomes, a chunk at a time (the
    /// outcomes and each chunk's references are dropped once written).
    fn resolve(&mut self, job: Resolution<'_>) -> Result<Resolved> {
        let Resolution {
            targets,
            extracted_ids,
            waiting,
            all_files,
            project,
            resolve_all,
            mut interrupted,
            rank_spill,
        } = job;
        if targets.is_empty() {
            return Ok(Resolved {
                interrupted,
                rank_spill,
                freeing: None,
            });
        }
        let cx = self.cx;
        let mut work = self.work(&targets, extracted_ids, waiting, resolve_all)?;
        cx.laps.lap("references to resolve loaded");
        let mut writer = OutcomeWriter::new(self.tx, cx, rank_spill)?;
        let big = resolve_all || targets.len() * 4 > all_files.len().max(1);
        let mut freeing = None;
        if big {
            let mut table: Table<NoBacking> = Table::new(project, all_files.clone(), None);
            load_everything(self.tx, &mut table).map_err(cx.sql())?;
            table.finish();
            cx.laps.lap("table loaded");
            interrupted = resolve_whole(&table, &mut work, &mut writer, cx, interrupted)?;
            cx.laps.lap("resolved and written");
            // The whole tree's table takes a while to free: another thread frees it while
            // this one builds the indexes and commits.
            freeing = Some(std::thread::spawn(move || drop(table)));
        } else {
            let backing = SqlBacking { conn: self.tx };
            let table = Table::new(project, all_files.clone(), Some(backing));
            cx.laps.lap("table made");
            loop {
                let chunk = work.next_chunk(RESOLVE_CHUNK).map_err(cx.pending_error())?;
                if chunk.is_empty() {
                    break;
                }
                interrupted = interrupted || cx.cancelled();
                let results = if interrupted {
                    unresolved_chunk(&chunk)
                } else {
                    chunk
                        .iter()
                        .map(|(file, _, refs, literals)| {
                            (*file, resolve::resolve_file(&table, *file, refs, literals))
                        })
                        .collect()
                };
                writer.write(&results, &chunk)?;
            }
            cx.laps.lap("resolved and written");
        }
        Ok(Resolved {
            interrupted,
            rank_spill: writer.finish(),
            freeing,
        })
    }

    /// The references of the files to resolve: the extracted ones as they were written, then
    /// the others' from the index (their rows updated, by `ord`).
    fn work(
        &mut self,
        targets: &BTreeSet<FileId>,
        extracted_ids: &BTreeSet<FileId>,
        waiting: PendingRefs,
        resolve_all: bool,
    ) -> Result<WorkSource> {
        let sql = self.cx.sql();
        let others: Vec<FileId> = targets
            .iter()
            .copied()
            .filter(|f| !extracted_ids.contains(f))
            .collect();
        for file in &others {
            self.before(*file)?;
        }
        let mut loaded: Vec<Work> = Vec::new();
        for (file, ords, refs) in load_refs(self.tx, &others, resolve_all).map_err(&sql)? {
            let literals = load_literal_args(self.tx, file, &ords).map_err(&sql)?;
            loaded.push((file, Some(ords), refs, literals));
        }
        Ok(WorkSource {
            pending: Some(waiting.into_reader().map_err(self.cx.pending_error())?),
            loaded: loaded.into_iter(),
        })
    }

    /// The whole tree's ranks: computed after a build that resolved every file, kept current
    /// by an update, forgotten by what cannot keep them.
    fn keep_ranks(
        &mut self,
        interrupted: bool,
        resolve_all: bool,
        precise_rows: bool,
        rank_spill: Option<EdgeSpill>,
    ) -> Result<()> {
        let (tx, cx) = (self.tx, self.cx);
        let sql = cx.sql();
        if interrupted || resolve_all {
            if let Some(upkeep) = self.upkeep.take() {
                upkeep.abandon(tx).map_err(&sql)?;
            }
        }
        if interrupted {
            return ranks::forget(tx).map_err(&sql);
        }
        if resolve_all {
            let floor = crate::resolve::DEFAULT_MIN_CONFIDENCE;
            let graph = match rank_spill {
                Some(mut spill) => ranks::RankGraph::from_spill(
                    tx,
                    &mut spill,
                    &crate::query::fill_edges_sql(),
                    floor,
                )
                .map_err(|e| match e {
                    ranks::SpillError::Sql(e) => sql(e),
                    ranks::SpillError::Io(e) => cx.rank_error()(e),
                })?,
                None => ranks::RankGraph::read(
                    tx,
                    &crate::query::rank_edges_sql(precise_rows),
                    floor,
                    false,
                )
                .map_err(&sql)?,
            };
            let y = graph.csr.solve(|_| 1.0);
            ranks::keep(tx, &graph.ids, &y).map_err(&sql)?;
            cx.laps.lap("ranks computed");
            return Ok(());
        }
        match self.upkeep.take() {
            Some(upkeep) => {
                let pushed = upkeep.finish(tx).map_err(&sql)?;
                self.stats.rank_pushes = pushed.pushes;
                cx.laps.lap(&format!(
                    "ranks kept current ({} pushes, {} residuals left)",
                    pushed.pushes, pushed.left
                ));
                Ok(())
            }
            None => ranks::forget(tx).map_err(&sql),
        }
    }
}

/// Resolves the whole tree: the pool resolves the next chunk while this thread writes the
/// last one (writing is about a third of the time). Returns whether it was cut short.
fn resolve_whole(
    table: &Table<NoBacking>,
    work: &mut WorkSource,
    writer: &mut OutcomeWriter<'_>,
    cx: &Context,
    interrupted: bool,
) -> Result<bool> {
    let cut_short = AtomicBool::new(interrupted);
    std::thread::scope(|scope| -> Result<()> {
        let (send, receive) =
            mpsc::sync_channel::<std::io::Result<(Vec<Work>, Vec<ResolvedFile>)>>(4);
        let cut_short = &cut_short;
        scope.spawn(move || loop {
            let chunk = match work.next_chunk(RESOLVE_CHUNK) {
                Ok(chunk) if chunk.is_empty() => break,
                Ok(chunk) => chunk,
                Err(e) => {
                    let _ = send.send(Err(e));
                    break;
                }
            };
            if cx.cancelled() {
                cut_short.store(true, Ordering::Relaxed);
            }
            let results = if cut_short.load(Ordering::Relaxed) {
                unresolved_chunk(&chunk)
            } else {
                cx.pool.install(|| resolve_in_parallel(table, &chunk))
            };
            // A closed channel: the writer failed and returns its error.
            if send.send(Ok((chunk, results))).is_err() {
                break;
            }
        });
        for resolved in receive {
            let (chunk, results) = resolved.map_err(cx.pending_error())?;
            writer.write(&results, &chunk)?;
        }
        Ok(())
    })?;
    Ok(cut_short.into_inner())
}

/// Writes resolved outcomes a chunk at a time, its statements prepared once.
struct OutcomeWriter<'a> {
    tx: &'a Connection,
    cx: &'a Context,
    name_ids: NameIds<'a>,
    key_ids: HashMap<String, i64>,
    /// The ranks' edges of a build that resolves every file.
    rank_spill: Option<EdgeSpill>,
    insert_ref: CachedStatement<'a>,
    update_ref: CachedStatement<'a>,
    delete_fanout: CachedStatement<'a>,
    insert_fanout: CachedStatement<'a>,
    delete_fills: CachedStatement<'a>,
    insert_fill: CachedStatement<'a>,
    insert_counts: CachedStatement<'a>,
    find_key: CachedStatement<'a>,
    insert_key: CachedStatement<'a>,
    /// The id the next new key gets, once read (`keys` is keyed by the key's text, so the
    /// largest id is kept in `meta`), and whether it moved since it was stored.
    next_key: Option<i64>,
    next_key_moved: bool,
}

/// A reference's outcome as its columns: (outcome, target, rung, candidates).
type OutcomeColumns = (i64, Option<DefId>, Option<i64>, Option<i64>);

fn outcome_columns(o: &Outcome) -> OutcomeColumns {
    match *o {
        Outcome::Resolved { target, rung } => {
            (OUTCOME_RESOLVED, Some(target), Some(rung_code(rung)), None)
        }
        Outcome::Unresolved { candidates } => {
            (OUTCOME_UNRESOLVED, None, None, Some(i64::from(candidates)))
        }
        Outcome::External => (OUTCOME_EXTERNAL, None, None, None),
    }
}

/// A reference's kind and outcome as the one stored column `refs.state` the schema's
/// generated columns read: kind in bit 0, outcome in bits 1–2, the rung plus one in bits 3–5
/// (0: none), the candidates plus one from bit 6 on (0: none).
pub(crate) fn ref_state(kind: i64, (outcome, _, rung, candidates): OutcomeColumns) -> i64 {
    kind | outcome << 1 | rung.map_or(0, |r| r + 1) << 3 | candidates.map_or(0, |c| c + 1) << 6
}

/// A reference with its outcome: `(file, ord, state, name, receiver, line, col, enclosing,
/// target)`.
const INSERT_REF: &str = "INSERT INTO refs(file_id, ord, state, name_id, receiver_id, line,
  col, enclosing_id, target_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// A stored reference's new outcome, its kind kept: `(ord, state, target, file)`.
const UPDATE_REF: &str = "UPDATE refs SET state = (state & 1) | ?2, target_id = ?3
  WHERE file_id = ?4 AND ord = ?1";

impl<'a> OutcomeWriter<'a> {
    fn new(tx: &'a Connection, cx: &'a Context, rank_spill: Option<EdgeSpill>) -> Result<Self> {
        let sql = cx.sql();
        let prepare = |text: &str| tx.prepare_cached(text).map_err(&sql);
        Ok(OutcomeWriter {
            tx,
            cx,
            name_ids: NameIds::new(tx).map_err(&sql)?,
            key_ids: HashMap::new(),
            rank_spill,
            insert_ref: prepare(INSERT_REF)?,
            update_ref: prepare(UPDATE_REF)?,
            delete_fanout: prepare("DELETE FROM fanout WHERE file_id = ?1")?,
            insert_fanout: prepare(
                "INSERT OR IGNORE INTO fanout(file_id, ord, target_id) VALUES (?1, ?2, ?3)",
            )?,
            delete_fills: prepare("DELETE FROM fills WHERE file_id = ?1")?,
            insert_fill: prepare(
                "INSERT OR IGNORE INTO fills(file_id, def_id, implemented_id)
                 VALUES (?1, ?2, ?3)",
            )?,
            insert_counts: prepare(
                "INSERT OR REPLACE INTO file_counts(file_id, refs, exact, import, package,
                   name, ambiguous, unknown, external, fanout)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?,
            find_key: prepare("SELECT id FROM keys WHERE key = ?1")?,
            insert_key: prepare("INSERT INTO keys(key, id) VALUES (?1, ?2)")?,
            next_key: None,
            next_key_moved: false,
        })
    }

    /// The ranks' edges kept, for the computation after the build.
    fn finish(self) -> Option<EdgeSpill> {
        self.rank_spill
    }

    /// Writes one chunk's outcomes; `results` is in the order of `chunk`.
    fn write(&mut self, results: &[ResolvedFile], chunk: &[Work]) -> Result<()> {
        for ((file, resolved), (_, ords, refs, _)) in results.iter().zip(chunk) {
            self.spill_edges(resolved, refs)?;
            self.write_refs(*file, &resolved.outcomes, ords.as_deref(), refs)?;
            let fanned = self.write_fanout(*file, &resolved.dispatch, ords.as_deref())?;
            // The file's share of `Graph::stats`, as its rows now say.
            let written = ords.as_ref().map_or(refs.len(), Vec::len);
            let mut counts = FileCounts::of(resolved.outcomes.iter().take(written));
            counts.fanout = fanned;
            counts
                .write(&mut self.insert_counts, *file)
                .map_err(self.cx.sql())?;
            self.write_fills(*file, &resolved.fills)?;
            self.write_deps(*file, &resolved.deps.keys)?;
        }
        self.store_next_key().map_err(self.cx.sql())
    }

    /// The file's edges for the ranks, when a build keeps them.
    fn spill_edges(&mut self, resolved: &resolve::Resolved, refs: &[RefIn]) -> Result<()> {
        let Some(spill) = self.rank_spill.as_mut() else {
            return Ok(());
        };
        let error = self.cx.rank_error();
        for (r, o) in refs.iter().zip(&resolved.outcomes) {
            if let (Some(from), Outcome::Resolved { target, rung }) = (r.enclosing, o) {
                spill
                    .push(from, *target, rung_code(*rung))
                    .map_err(&error)?;
            }
        }
        // As the fan-out table keeps them: once per reference and target.
        let mut seen = HashSet::new();
        for (i, target) in &resolved.dispatch {
            let from = refs.get(*i).and_then(|r| r.enclosing);
            if let Some(from) = from.filter(|_| seen.insert((*i, *target))) {
                spill.push(from, *target, 4).map_err(&error)?;
            }
        }
        Ok(())
    }

    /// The references with their outcomes: inserted when just extracted (`ords` is `None`),
    /// their stored rows updated otherwise.
    fn write_refs(
        &mut self,
        file: FileId,
        outcomes: &[Outcome],
        ords: Option<&[i64]>,
        refs: &[RefIn],
    ) -> Result<()> {
        let sql = self.cx.sql();
        let Some(ords) = ords else {
            for (ord, (r, o)) in refs.iter().zip(outcomes).enumerate() {
                let columns = outcome_columns(o);
                let name = self.name_ids.id(&r.name).map_err(&sql)?;
                let receiver = match &r.receiver {
                    Some(receiver) => Some(self.name_ids.id(receiver).map_err(&sql)?),
                    None => None,
                };
                self.insert_ref
                    .execute(params![
                        file,
                        ord as i64,
                        ref_state(ref_kind_code(r.kind), columns),
                        name,
                        receiver,
                        r.pos.line,
                        r.pos.column,
                        r.enclosing,
                        columns.1,
                    ])
                    .map_err(&sql)?;
            }
            return Ok(());
        };
        for (ord, o) in ords.iter().zip(outcomes) {
            let columns = outcome_columns(o);
            self.update_ref
                .execute(params![ord, ref_state(0, columns), columns.1, file])
                .map_err(&sql)?;
        }
        self.delete_fanout.execute([file]).map_err(&sql)?;
        Ok(())
    }

    /// The dispatch edges (a call through an interface to each implementation); returns how
    /// many rows the file has.
    fn write_fanout(
        &mut self,
        file: FileId,
        dispatch: &[(usize, DefId)],
        ords: Option<&[i64]>,
    ) -> Result<usize> {
        let mut fanned: HashSet<(i64, DefId)> = HashSet::new();
        for (i, target) in dispatch {
            let ord = match ords {
                Some(ords) => ords.get(*i).copied(),
                None => i64::try_from(*i).ok(),
            };
            if let Some(ord) = ord {
                self.insert_fanout
                    .execute(params![file, ord, target])
                    .map_err(self.cx.sql())?;
                fanned.insert((ord, *target));
            }
        }
        Ok(fanned.len())
    }

    /// The interface members the file's types fill.
    fn write_fills(&mut self, file: FileId, fills: &[(DefId, DefId)]) -> Result<()> {
        let sql = self.cx.sql();
        self.delete_fills.execute([file]).map_err(&sql)?;
        for (member, implemented) in fills {
            self.insert_fill
                .execute(params![file, member, implemented])
                .map_err(&sql)?;
        }
        Ok(())
    }

    /// The keys the file's resolution read (the reverse-dependency table).
    fn write_deps<'k>(
        &mut self,
        file: FileId,
        keys: impl IntoIterator<Item = &'k String>,
    ) -> Result<()> {
        let sql = self.cx.sql();
        super::forget_deps(self.tx, file).map_err(&sql)?;
        let mut ids = Vec::new();
        for key in keys {
            let id = match self.key_ids.get(key) {
                Some(id) => *id,
                None => {
                    let found = self
                        .find_key
                        .query_row([key], |r| r.get::<_, i64>(0))
                        .optional()
                        .map_err(&sql)?;
                    let id = match found {
                        Some(id) => id,
                        None => {
                            let id = self.new_key_id().map_err(&sql)?;
                            self.insert_key.execute(params![key, id]).map_err(&sql)?;
                            id
                        }
                    };
                    self.key_ids.insert(key.clone(), id);
                    id
                }
            };
            ids.push(id);
        }
        ids.sort_unstable();
        ids.dedup();
        super::record_deps(self.tx, file, &ids).map_err(&sql)
    }

    /// An id no key has.
    fn new_key_id(&mut self) -> rusqlite::Result<i64> {
        let next = match self.next_key {
            Some(next) => next,
            None => super::next_key_id(self.tx)?,
        };
        self.next_key = Some(next + 1);
        self.next_key_moved = true;
        Ok(next)
    }

    /// Stores the next key id if new keys were added.
    fn store_next_key(&mut self) -> rusqlite::Result<()> {
        if let (Some(next), true) = (self.next_key, self.next_key_moved) {
            self.tx
                .prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES ('next_key', ?1)")?
                .execute([next.to_string()])?;
            self.next_key_moved = false;
        }
        Ok(())
    }
}

/// A file to resolve: its references (with their stored `ord`s when read from the index;
/// `None`: just extracted, to be inserted) and its object literals' members passed as
/// arguments.
type Work = (FileId, Option<Vec<i64>>, Vec<RefIn>, Vec<LiteralArgIn>);

/// The files to resolve, a chunk at a time: the extracted ones as they were written, then
/// those loaded from the index.
struct WorkSource {
    pending: Option<PendingReader>,
    loaded: std::vec::IntoIter<Work>,
}

impl WorkSource {
    fn next_chunk(&mut self, size: usize) -> std::io::Result<Vec<Work>> {
        let mut chunk = Vec::with_capacity(size);
        while chunk.len() < size {
            if let Some(reader) = &mut self.pending {
                match reader.next_file()? {
                    Some((file, refs, literals)) => chunk.push((file, None, refs, literals)),
                    None => self.pending = None,
                }
                continue;
            }
            match self.loaded.next() {
                Some(work) => chunk.push(work),
                None => break,
            }
        }
        Ok(chunk)
    }
}

/// The stored literal arguments of `file`, their calls by index into `ords`.
fn load_literal_args(
    tx: &Connection,
    file: FileId,
    ords: &[i64],
) -> rusqlite::Result<Vec<LiteralArgIn>> {
    let mut stmt = tx.prepare_cached(
        "SELECT ord, argument, def_id FROM literal_args WHERE file_id = ?1 ORDER BY ord, def_id",
    )?;
    let rows = stmt.query_map([file], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, u32>(1)?,
            r.get::<_, DefId>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (ord, argument, def) = row?;
        // `ords` is in order (read by `ORDER BY ord`).
        if let Ok(index) = ords.binary_search(&ord) {
            out.push((index, argument, def));
        }
    }
    Ok(out)
}

/// One file's resolution: its outcomes in reference order, dispatch edges, keys read.
type ResolvedFile = (FileId, resolve::Resolved);

/// A chunk resolved by the current thread pool, in the chunk's order.
fn resolve_in_parallel(table: &Table<NoBacking>, chunk: &[Work]) -> Vec<ResolvedFile> {
    chunk
        .par_iter()
        .map(|(file, _, refs, literals)| {
            (*file, resolve::resolve_file(table, *file, refs, literals))
        })
        .collect()
}

/// A chunk's references left unresolved (a cancelled build writes them so; the next refresh
/// resolves everything).
fn unresolved_chunk(chunk: &[Work]) -> Vec<ResolvedFile> {
    chunk
        .iter()
        .map(|(file, _, refs, _)| {
            (
                *file,
                resolve::Resolved {
                    outcomes: vec![Outcome::Unresolved { candidates: 0 }; refs.len()],
                    ..resolve::Resolved::default()
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::Rung;

    /// Two runs on one root: a file the first adds (and indexes) while the second's refresh
    /// walks the tree is not removed by that refresh, which did not see it. (It was, when
    /// the refresh compared its walk with what the index held after the walk: the four
    /// concurrent runs' test lost a writer's file about once in ten runs under load.)
    #[test]
    fn a_refresh_keeps_a_file_another_run_added_during_its_walk() {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("a.py"), "def a():\n    pass\n").unwrap();
        let cache = tempfile::tempdir().unwrap();
        let config = || crate::GraphConfig {
            cache_dir: cache.path().into(),
            ..crate::GraphConfig::default()
        };
        let (mut writer, _) = Graph::open_with(project.path(), config()).unwrap();
        let (mut refresher, _) = Graph::open_with(project.path(), config()).unwrap();
        // The refresher's walk, then the writer's new file, indexed.
        let before = KnownBefore::read(&refresher.conn).unwrap();
        let (seen, configs, _) = refresher.walk();
        std::fs::write(project.path().join("b.py"), "def b():\n    a()\n").unwrap();
        writer.update(&["b.py"]).unwrap();
        assert_eq!(writer.find("b", None).unwrap().len(), 1);
        refresher
            .apply(UpdateScope::Tree { seen, before }, configs)
            .unwrap();
        assert_eq!(writer.find("b", None).unwrap().len(), 1, "b.py was removed");
        // A file gone before the walk is still removed.
        std::fs::remove_file(project.path().join("a.py")).unwrap();
        refresher.refresh().unwrap();
        assert!(writer.find("a", None).unwrap().is_empty());
        assert_eq!(refresher.find("b", None).unwrap().len(), 1);
    }

    /// What `refs.state`'s generated columns read back is what was written, for every kind of
    /// outcome, then again after an update of the outcome keeps the kind.
    #[test]
    fn a_references_state_reads_back_as_its_columns() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&super::super::schema()).unwrap();
        let outcomes = [
            Outcome::Resolved {
                target: DefId(7),
                rung: Rung::Exact,
            },
            Outcome::Resolved {
                target: DefId(9),
                rung: Rung::Precise,
            },
            Outcome::Unresolved { candidates: 0 },
            Outcome::Unresolved {
                candidates: 100_000,
            },
            Outcome::External,
        ];
        let read = |ord: i64| {
            conn.query_row(
                "SELECT kind, outcome, target_id, rung, candidates FROM refs WHERE ord = ?1",
                [ord],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        (
                            r.get::<_, i64>(1)?,
                            r.get::<_, Option<DefId>>(2)?,
                            r.get::<_, Option<i64>>(3)?,
                            r.get::<_, Option<i64>>(4)?,
                        ),
                    ))
                },
            )
            .unwrap()
        };
        for (ord, (kind, o)) in [0, 1]
            .iter()
            .flat_map(|k| outcomes.iter().map(move |o| (*k, o)))
            .enumerate()
        {
            let columns = outcome_columns(o);
            conn.execute(
                INSERT_REF,
                params![
                    1,
                    ord as i64,
                    ref_state(kind, columns),
                    1,
                    None::<i64>,
                    1,
                    1,
                    None::<i64>,
                    columns.1
                ],
            )
            .unwrap();
            assert_eq!(read(ord as i64), (kind, columns), "{o:?}");
        }
        let now = outcome_columns(&Outcome::External);
        conn.execute(
            UPDATE_REF,
            params![outcomes.len() as i64, ref_state(0, now), now.1, 1],
        )
        .unwrap();
        assert_eq!(read(outcomes.len() as i64), (1, now));
    }

    /// Forgetting a file's keys removes its `deps` rows and its list, and nobody else's.
    #[test]
    fn a_files_keys_are_forgotten_by_its_list() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&super::super::schema()).unwrap();
        super::super::record_deps(&conn, FileId(1), &[1, 2, 300]).unwrap();
        super::super::record_deps(&conn, FileId(2), &[2]).unwrap();
        super::super::forget_deps(&conn, FileId(1)).unwrap();
        let rows = |q: &str| -> Vec<(i64, i64)> {
            let mut stmt = conn.prepare(q).unwrap();
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
            rows.map(|r| r.unwrap()).collect()
        };
        assert_eq!(rows("SELECT key_id, file_id FROM deps"), [(2, 2)]);
        assert_eq!(
            rows("SELECT file_id, length(packed) FROM file_keys"),
            [(2, 1)]
        );
        super::super::forget_deps(&conn, FileId(3)).unwrap();
    }
}
