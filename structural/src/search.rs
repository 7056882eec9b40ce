//! Searching a file or a folder: walk (the workspace walk of `cc_workspace::walk`; binary
//! files skipped), test the pattern's literals against each file's bytes, parse only the files that
//! pass, in parallel, and keep the first `max_results` matches in (path, position) order while
//! counting all of them.
//!
//! [`search`] returns the kept matches as [`FoundMatch`]es. [`search_with`] hands each file's
//! matches to a [`MatchSink`] on the worker thread that found them instead, so a caller can
//! turn them into its own output (serialized text, say) in parallel and without holding them
//! all as strings; its [`SearchReport`] then says which of them are the first `max_results`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::find::{BoundedParseError, Captured, Match, Position, SourceParser, Stopped};
use crate::pattern::Pattern;

/// Told how far a folder search has come: `(files done, files in all)`. Called about 20
/// times per search at most, from worker threads.
pub type ProgressFn = std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>;

/// How a search runs.
#[derive(Clone)]
pub struct SearchOptions {
    /// How many matches to keep (every match is still counted).
    pub max_results: usize,
    /// Worker threads; 0 for one per core.
    pub threads: usize,
    /// Receives progress of a folder search.
    pub progress: Option<ProgressFn>,
    /// Files larger than this many bytes are not read; they are listed in
    /// [`SearchResult::too_large`].
    pub max_file_bytes: u64,
    /// Set by another thread to stop the search: the walk and the workers stop taking files,
    /// and the result says [`SearchResult::cancelled`].
    pub cancel: Option<Arc<AtomicBool>>,
    /// Parsed trees kept between searches of a long-lived run: a file whose bytes did not
    /// change is not parsed again.
    pub trees: Option<Arc<crate::cache::TreeCache>>,
    /// A file whose syntax tree would take more memory than this (estimated from its tokens,
    /// [`cc_languages::BYTES_PER_TOKEN`] each) is not parsed; it is listed in
    /// [`SearchResult::skipped`]. Default [`DEFAULT_MAX_TREE_BYTES`], 768 MiB.
    pub max_tree_bytes: usize,
}

pub use cc_languages::DEFAULT_MAX_TREE_BYTES;

/// The largest [`SearchOptions::max_file_bytes`] a caller should allow (64 MiB): with the
/// tree memory bound, one file of that size searched keeps a process under about 1 GB.
pub const MAX_FILE_BYTES_CEILING: u64 = 64 << 20;

/// The default [`SearchOptions::max_file_bytes`]: 4 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 4 << 20;

/// A source whose syntax tree is deeper than this is not matched and is listed as skipped.
pub const MAX_SOURCE_DEPTH: usize = 10_000;

/// How many files with syntax errors a result names (all are counted).
pub const MAX_PARSE_ERRORS_LISTED: usize = 50;

/// Stack of each search thread: matching recurses along the pattern (bounded by
/// [`crate::MAX_PATTERN_DEPTH`]) and its open choices.
const WORKER_STACK: usize = 64 << 20;

impl SearchOptions {
    fn cancelled(&self) -> bool {
        is_cancelled(self.cancel.as_ref())
    }

    pub(crate) fn cancel_flag(&self) -> Option<&AtomicBool> {
        self.cancel.as_deref()
    }

    /// The limits of parsing one file: the call's cancellation, the tree memory bound.
    pub(crate) fn parse_limits(&self) -> cc_languages::ParseLimits<'_> {
        cc_languages::ParseLimits {
            cancel: self.cancel_flag(),
            max_tree_bytes: self.max_tree_bytes,
        }
    }
}

fn is_cancelled(flag: Option<&Arc<AtomicBool>>) -> bool {
    flag.is_some_and(|f| f.load(Ordering::Relaxed))
}

impl std::fmt::Debug for SearchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchOptions")
            .field("max_results", &self.max_results)
            .field("threads", &self.threads)
            .field("progress", &self.progress.is_some())
            .field("max_file_bytes", &self.max_file_bytes)
            .field("cancel", &self.cancel.is_some())
            .field("trees", &self.trees.is_some())
            .field("max_tree_bytes", &self.max_tree_bytes)
            .finish()
    }
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            max_results: 50,
            threads: 0,
            progress: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            cancel: None,
            trees: None,
            max_tree_bytes: DEFAULT_MAX_TREE_BYTES,
        }
    }
}

/// A capture as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CapturedText {
    /// `$NAME` or `"$NAME"`.
    One(String),
    /// `$$$NAME`: one text per captured node.
    Many(Vec<String>),
}

/// A match with its text, ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundMatch {
    /// The file.
    pub path: PathBuf,
    /// Where the match starts.
    pub start: Position,
    /// Where it ends (exclusive).
    pub end: Position,
    /// The matched code.
    pub text: String,
    /// Captures by name, in the pattern's order.
    pub captures: Vec<(String, CapturedText)>,
}

/// A file the search could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

/// A file whose syntax tree holds `ERROR` or missing nodes: the grammar could not read all
/// of it, so a part of it may have matched nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseErrors {
    /// The file.
    pub path: PathBuf,
    /// 1-based line of the first error.
    pub line: usize,
    /// How many `ERROR` and missing nodes.
    pub count: usize,
}

/// A file over [`SearchOptions::max_file_bytes`], not searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
}

/// The outcome of a search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// The first `max_results` matches, by path then position.
    pub matches: Vec<FoundMatch>,
    /// Every match, kept or not.
    pub total: usize,
    /// Files of the language that were looked at.
    pub files_searched: usize,
    /// Files whose bytes held the pattern's literals, so were parsed.
    pub files_parsed: usize,
    /// Files that could not be read or parsed.
    pub skipped: Vec<Skipped>,
    /// Candidates given up when the backtracking budget ran out.
    pub exhausted: usize,
    /// The first [`MAX_PARSE_ERRORS_LISTED`] parsed files with syntax errors, by path.
    pub parse_errors: Vec<ParseErrors>,
    /// How many parsed files had syntax errors.
    pub parse_errors_total: usize,
    /// Files over the size cap, by path.
    pub too_large: Vec<TooLarge>,
    /// Whether the search was cancelled before it looked at every file.
    pub cancelled: bool,
}

impl SearchResult {
    /// Whether matches were left out by `max_results`.
    pub fn truncated(&self) -> bool {
        self.total > self.matches.len()
    }
}

/// What a search found besides the matches themselves (see [`search_with`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchReport {
    /// The files whose matches are the first `max_results`, by path, each with how many of
    /// the matches it gave the sink are kept: all of them, except perhaps for the last file.
    pub kept: Vec<(PathBuf, usize)>,
    /// Every match, kept or not.
    pub total: usize,
    /// Files of the language that were looked at.
    pub files_searched: usize,
    /// Files whose bytes held the pattern's literals, so were parsed.
    pub files_parsed: usize,
    /// Files that could not be read or parsed, by path.
    pub skipped: Vec<Skipped>,
    /// Candidates given up when the backtracking budget ran out.
    pub exhausted: usize,
    /// The first [`MAX_PARSE_ERRORS_LISTED`] parsed files with syntax errors, by path.
    pub parse_errors: Vec<ParseErrors>,
    /// How many parsed files had syntax errors.
    pub parse_errors_total: usize,
    /// Files over the size cap, by path.
    pub too_large: Vec<TooLarge>,
    /// Whether the search was cancelled before it looked at every file.
    pub cancelled: bool,
}

impl SearchReport {
    /// How many matches are kept.
    pub fn kept_count(&self) -> usize {
        self.kept.iter().map(|(_, n)| n).sum()
    }

    /// Whether matches were left out by `max_results`.
    pub fn truncated(&self) -> bool {
        self.total > self.kept_count()
    }

    /// The report with the kept matches as a [`SearchResult`].
    fn into_result(self, matches: Vec<FoundMatch>) -> SearchResult {
        SearchResult {
            matches,
            total: self.total,
            files_searched: self.files_searched,
            files_parsed: self.files_parsed,
            skipped: self.skipped,
            exhausted: self.exhausted,
            parse_errors: self.parse_errors,
            parse_errors_total: self.parse_errors_total,
            too_large: self.too_large,
            cancelled: self.cancelled,
        }
    }
}

/// Why a [`MatchSink`] could not take a file's matches.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// Receives each searched file's matches from the worker thread that found them (see
/// [`search_with`]): the consumer side of a search, as ripgrep's printers are of its searcher.
///
/// A file is handed over once, with its bytes, and only when its matches may be among the
/// first `max_results` (at most that many of them): a capped search over a large tree hands
/// over few files. Whether they stay among the first is known at the end
/// ([`SearchReport::kept`]); one pushed out by files earlier in path order is told to
/// [`MatchSink::dropped`] as soon as that is certain, so the sink can let it go.
pub trait MatchSink: Sync {
    /// The first matches of `path` (whose bytes are `source`), in document order. An error
    /// stops the search, and [`search_with`] returns it.
    fn matches(&self, path: &Path, source: &[u8], matches: &[Match]) -> Result<(), SinkError>;

    /// The matches of `path` handed over before are not among the first `max_results`.
    fn dropped(&self, path: &Path) {
        let _ = path;
    }
}

/// Why a search could not start, or could not finish.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The path does not exist.
    #[error("`{0}` does not exist")]
    NotFound(PathBuf),
    /// The [`MatchSink`] could not take a file's matches.
    #[error("the matches could not be kept: {0}")]
    Sink(#[source] SinkError),
    /// The path is neither a regular file nor a folder (a named pipe, a device, a socket):
    /// reading it could block or never end.
    #[error(
        "`{0}` is not a regular file or a folder (a named pipe, a device or a socket); reading it \
         could block or never end, so it is not searched"
    )]
    NotRegular(PathBuf),
}

/// The text of `range` in `source`, lossily decoded.
fn text_of(source: &[u8], range: std::ops::Range<usize>) -> String {
    String::from_utf8_lossy(source.get(range).unwrap_or(&[])).into_owned()
}

/// Turns byte-range matches into text.
pub fn found_matches(path: &Path, source: &[u8], matches: &[Match]) -> Vec<FoundMatch> {
    matches
        .iter()
        .map(|m| FoundMatch {
            path: path.to_path_buf(),
            start: m.start,
            end: m.end,
            text: text_of(source, m.range.clone()),
            captures: m
                .captures
                .iter()
                .map(|(name, captured)| {
                    let text = match captured {
                        Captured::Node(range) | Captured::Text(range) => {
                            CapturedText::One(text_of(source, range.clone()))
                        }
                        Captured::Nodes { items, .. } => CapturedText::Many(
                            items.iter().map(|r| text_of(source, r.clone())).collect(),
                        ),
                    };
                    (name.clone(), text)
                })
                .collect(),
        })
        .collect()
}

/// Keeps track of which files' matches are the first `max` in path order, counting all.
struct Collector {
    max: usize,
    /// Files handed to the sink and still among the first `max`, with their match counts.
    kept: BTreeMap<PathBuf, usize>,
    kept_count: usize,
    total: usize,
    files_searched: usize,
    files_parsed: usize,
    skipped: Vec<Skipped>,
    exhausted: usize,
    parse_errors: Vec<ParseErrors>,
    too_large: Vec<TooLarge>,
    /// The sink's first error: the search stops.
    failed: Option<SinkError>,
}

impl Collector {
    fn new(max: usize) -> Self {
        Collector {
            max,
            kept: BTreeMap::new(),
            kept_count: 0,
            total: 0,
            files_searched: 0,
            files_parsed: 0,
            skipped: Vec::new(),
            exhausted: 0,
            parse_errors: Vec::new(),
            too_large: Vec::new(),
            failed: None,
        }
    }

    /// Whether matches of `path` could be among the kept ones.
    fn wants(&self, path: &Path) -> bool {
        self.kept_count < self.max
            || self
                .kept
                .last_key_value()
                .is_some_and(|(last, _)| path < last.as_path())
    }

    /// Records `count` matches of `path` as kept; returns the files no longer among the
    /// first `max`.
    fn add(&mut self, path: PathBuf, count: usize) -> Vec<PathBuf> {
        let mut dropped = Vec::new();
        if count == 0 || self.max == 0 {
            dropped.push(path);
            return dropped;
        }
        self.kept_count += count;
        self.kept.insert(path, count);
        // Drop whole files from the end while the rest still fill `max`.
        while let Some((_, &last)) = self.kept.last_key_value() {
            if self.kept_count - last >= self.max {
                self.kept_count -= last;
                if let Some((path, _)) = self.kept.pop_last() {
                    dropped.push(path);
                }
            } else {
                break;
            }
        }
        dropped
    }

    /// The report, the kept files cut to `max` matches in all.
    fn into_report(self, cancelled: bool) -> Result<SearchReport, SearchError> {
        if let Some(error) = self.failed {
            return Err(SearchError::Sink(error));
        }
        let mut room = self.max;
        let mut kept = Vec::with_capacity(self.kept.len());
        for (path, count) in self.kept {
            if room == 0 {
                break;
            }
            let take = count.min(room);
            room -= take;
            kept.push((path, take));
        }
        let mut skipped = self.skipped;
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let mut parse_errors = self.parse_errors;
        let parse_errors_total = parse_errors.len();
        parse_errors.sort_by(|a, b| a.path.cmp(&b.path));
        parse_errors.truncate(MAX_PARSE_ERRORS_LISTED);
        let mut too_large = self.too_large;
        too_large.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(SearchReport {
            kept,
            total: self.total,
            files_searched: self.files_searched,
            files_parsed: self.files_parsed,
            skipped,
            exhausted: self.exhausted,
            parse_errors,
            parse_errors_total,
            too_large,
            cancelled,
        })
    }
}

/// Calls `visit` for `path` if it is a file, or for every file under the folder `path` with
/// one of the pattern language's extensions (the workspace walk: `.gitignore` honoured,
/// hidden files and dependency folders skipped),
/// from `options.threads` workers (0: one per core), each with its own parser, with the
/// file's size as the walk saw it. Stops taking files once `options.cancel` is set.
///
/// The walk only lists files; the workers then take files from one shared queue, biggest
/// first, so one folder of many files (a `test/` tree) is shared out rather than left to the
/// worker that found it.
pub(crate) fn visit_sources(
    pattern: &Pattern,
    path: &Path,
    options: &SearchOptions,
    visit: &(dyn Fn(&Path, u64, &mut SourceParser) + Sync),
) -> Result<(), SearchError> {
    let meta = std::fs::metadata(path).map_err(|_| SearchError::NotFound(path.to_path_buf()))?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(SearchError::NotRegular(path.to_path_buf()));
    }
    let files: Vec<(u64, PathBuf)> = if meta.is_file() {
        vec![(meta.len(), path.to_path_buf())]
    } else {
        let extensions = pattern.language().extensions();
        let mut files = Vec::new();
        for entry in cc_workspace::walk::Walk::new(path)
            .extensions(extensions)
            .files()
        {
            if options.cancelled() {
                return Ok(());
            }
            // An unknown size reads as 0: the file is still searched, and its read reports
            // what went wrong.
            files.push((entry.size.unwrap_or(0), entry.path));
        }
        files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        files
    };
    let threads = if options.threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        options.threads
    }
    .clamp(1, files.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = files.len();
    // About 20 reports per search, whatever its size.
    let report_every = (total / 20).max(1);
    let progress = if meta.is_file() {
        None
    } else {
        options.progress.as_ref()
    };
    let work = || {
        let mut parser = SourceParser::new();
        loop {
            if options.cancelled() {
                break;
            }
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some((size, file)) = files.get(index) else {
                break;
            };
            visit(file, *size, &mut parser);
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(report) = progress {
                if finished.is_multiple_of(report_every) || finished == total {
                    report(finished, total);
                }
            }
        }
    };
    std::thread::scope(|scope| {
        let spawned: Vec<_> = (0..threads)
            .map(|_| {
                // Our own threads, with a known stack (the caller's may be a small one).
                std::thread::Builder::new()
                    .name("cc-structural".into())
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(scope, work)
            })
            .collect();
        if spawned.iter().all(Result::is_err) {
            // No thread could be started: do the work here.
            work();
        }
    });
    Ok(())
}

/// Searches `path` (a file, or a folder walked for the pattern language's extensions).
pub fn search(
    pattern: &Pattern,
    path: &Path,
    options: &SearchOptions,
) -> Result<SearchResult, SearchError> {
    let sink = FoundMatches::default();
    let report = search_with(pattern, path, options, &sink)?;
    let mut by_path = sink
        .files
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut matches = Vec::with_capacity(report.kept_count());
    for (path, count) in &report.kept {
        if let Some(found) = by_path.remove(path) {
            matches.extend(found.into_iter().take(*count));
        }
    }
    Ok(report.into_result(matches))
}

/// [`search`]'s sink: each file's matches as [`FoundMatch`]es.
#[derive(Default)]
struct FoundMatches {
    files: Mutex<std::collections::HashMap<PathBuf, Vec<FoundMatch>>>,
}

impl MatchSink for FoundMatches {
    fn matches(&self, path: &Path, source: &[u8], matches: &[Match]) -> Result<(), SinkError> {
        let found = found_matches(path, source, matches);
        lock_map(&self.files).insert(path.to_path_buf(), found);
        Ok(())
    }

    fn dropped(&self, path: &Path) {
        lock_map(&self.files).remove(path);
    }
}

fn lock_map<T>(map: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Searches `path` like [`search`], handing each file's matches to `sink` from the worker
/// that found them (see [`MatchSink`]); the report says which are the first
/// `options.max_results`, in path order. A sink error stops the search and is returned.
pub fn search_with(
    pattern: &Pattern,
    path: &Path,
    options: &SearchOptions,
    sink: &dyn MatchSink,
) -> Result<SearchReport, SearchError> {
    let collector = Mutex::new(Collector::new(options.max_results));
    let single_file = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let failed = AtomicBool::new(false);
    visit_sources(pattern, path, options, &|file, size, parser| {
        if failed.load(Ordering::Relaxed) {
            return;
        }
        let handed = search_file(
            pattern,
            file,
            size,
            parser,
            &collector,
            !single_file,
            options,
            sink,
        );
        if let Err(error) = handed {
            failed.store(true, Ordering::Relaxed);
            lock(&collector).failed.get_or_insert(error);
        }
    })?;
    collector
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .into_report(options.cancelled())
}

fn lock(collector: &Mutex<Collector>) -> std::sync::MutexGuard<'_, Collector> {
    collector
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Why a file is not matched even though it was read: its tree is too deep.
pub(crate) fn too_deep_reason() -> String {
    format!("its syntax tree is nested more than {MAX_SOURCE_DEPTH} levels deep; not searched")
}

/// Searches one file; the sink's error when it could not take the file's matches.
#[allow(clippy::too_many_arguments)]
fn search_file(
    pattern: &Pattern,
    path: &Path,
    size: u64,
    parser: &mut SourceParser,
    collector: &Mutex<Collector>,
    skip_binary: bool,
    options: &SearchOptions,
    sink: &dyn MatchSink,
) -> Result<(), SinkError> {
    let Some(bytes) = read_or_note(path, size, collector, options) else {
        return Ok(());
    };
    let skip = |reason: String| {
        note_skipped(collector, path, reason);
        Ok(())
    };
    let head = &bytes[..bytes.len().min(8192)];
    if skip_binary && memchr::memchr(0, head).is_some() {
        return Ok(());
    }
    if !pattern.may_match(&bytes) {
        lock(collector).files_searched += 1;
        return Ok(());
    }
    let language = pattern.language();
    let cached = options
        .trees
        .as_ref()
        .and_then(|trees| trees.get(path, language.name(), &bytes));
    let parsed = match cached {
        Some(parsed) => parsed,
        None => match parser.parse_for_search(language.as_ref(), &bytes, &options.parse_limits()) {
            Ok(parsed) => {
                if let Some(trees) = &options.trees {
                    trees.insert(path, language.name(), &bytes, &parsed);
                }
                parsed
            }
            // The result says `cancelled`; the file counts as not looked at.
            Err(BoundedParseError::Cancelled) => return Ok(()),
            Err(error) => return skip(error.to_string()),
        },
    };
    let found =
        match pattern.search_parsed(&parsed, &bytes, MAX_SOURCE_DEPTH, options.cancel_flag()) {
            Ok(found) => found,
            Err(Stopped::Cancelled) => return Ok(()),
            Err(Stopped::TooDeep) => return skip(too_deep_reason()),
        };
    let errors = crate::find::syntax_errors(&parsed.tree);
    let (wants, max) = {
        let mut c = lock(collector);
        c.files_searched += 1;
        c.files_parsed += 1;
        c.total += found.matches.len();
        c.exhausted += found.exhausted;
        if let (count @ 1.., Some(line)) = errors {
            c.parse_errors.push(ParseErrors {
                path: path.to_path_buf(),
                line,
                count,
            });
        }
        (!found.matches.is_empty() && c.wants(path), c.max)
    };
    if wants {
        // Past its first `max` matches, none of a file's can be among the first `max`.
        let keep = found.matches.len().min(max);
        // Outside the lock: this is where the sink does its work, on every worker at once.
        sink.matches(path, &bytes, &found.matches[..keep])?;
        let dropped = lock(collector).add(path.to_path_buf(), keep);
        for path in dropped {
            sink.dropped(&path);
        }
    }
    Ok(())
}

/// The bytes of a file to search; `None` when it is over the size cap or unreadable (noted
/// in the collector, with the reason).
fn read_or_note(
    path: &Path,
    size: u64,
    collector: &Mutex<Collector>,
    options: &SearchOptions,
) -> Option<Vec<u8>> {
    let too_large = |size: u64| {
        let mut c = lock(collector);
        c.files_searched += 1;
        c.too_large.push(TooLarge {
            path: path.to_path_buf(),
            size,
        });
    };
    if size > options.max_file_bytes {
        too_large(size);
        return None;
    }
    match read_capped(path, options.max_file_bytes) {
        Ok(Some(bytes)) => Some(bytes),
        Ok(None) => {
            // It grew past the cap since the walk saw it.
            too_large(std::fs::metadata(path).map_or(size, |m| m.len()));
            None
        }
        Err(error) => {
            note_skipped(collector, path, error.to_string());
            None
        }
    }
}

/// Notes a file searched but skipped, with the reason.
fn note_skipped(collector: &Mutex<Collector>, path: &Path, reason: String) {
    let mut c = lock(collector);
    c.files_searched += 1;
    c.skipped.push(Skipped {
        path: path.to_path_buf(),
        reason,
    });
}

/// The bytes of `path`, or `None` when it holds more than `cap` bytes (read no further).
pub(crate) fn read_capped(path: &Path, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    // Sized once: reading through `take` would grow the buffer by doubling.
    let size = file.metadata().map_or(0, |m| m.len()).min(cap);
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= cap).then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Languages;
    use std::collections::HashMap;

    fn tree(files: usize, per_file: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..files {
            std::fs::write(
                dir.path().join(format!("m{i:02}.py")),
                "f(1)\n".repeat(per_file + i % 3),
            )
            .unwrap();
        }
        dir
    }

    fn pattern() -> Pattern {
        Pattern::new(
            Languages::builtin().lookup("python").unwrap(),
            "f($A)",
            None,
        )
        .unwrap()
    }

    /// Records what it is handed and dropped.
    #[derive(Default)]
    struct Recording {
        handed: Mutex<HashMap<PathBuf, usize>>,
        dropped: Mutex<Vec<PathBuf>>,
    }

    impl MatchSink for Recording {
        fn matches(&self, path: &Path, _: &[u8], matches: &[Match]) -> Result<(), SinkError> {
            lock_map(&self.handed).insert(path.to_path_buf(), matches.len());
            Ok(())
        }

        fn dropped(&self, path: &Path) {
            lock_map(&self.dropped).push(path.to_path_buf());
            lock_map(&self.handed).remove(path);
        }
    }

    /// Capped, the sink is handed the files whose matches may be first and told which are
    /// pushed out; what it keeps is what the report names, and `search` gives the same
    /// matches in the same order.
    #[test]
    fn the_report_names_what_the_sink_kept_in_path_order() {
        let dir = tree(30, 4);
        let pattern = pattern();
        for max_results in [0, 1, 7, 50, 10_000] {
            let options = SearchOptions {
                max_results,
                ..SearchOptions::default()
            };
            let sink = Recording::default();
            let report = search_with(&pattern, dir.path(), &options, &sink).unwrap();
            let whole = search(&pattern, dir.path(), &options).unwrap();
            assert_eq!(report.total, whole.total);
            assert_eq!(report.kept_count(), whole.matches.len());
            assert_eq!(report.kept_count(), max_results.min(whole.total));
            assert_eq!(report.truncated(), whole.truncated());
            let handed = lock_map(&sink.handed).clone();
            let mut expected: Vec<(PathBuf, usize)> = Vec::new();
            for m in &whole.matches {
                match expected.last_mut() {
                    Some((path, n)) if *path == m.path => *n += 1,
                    _ => expected.push((m.path.clone(), 1)),
                }
            }
            assert_eq!(report.kept, expected, "max_results {max_results}");
            for (path, n) in &report.kept {
                assert!(handed.get(path).is_some_and(|given| given >= n), "{path:?}");
            }
            assert_eq!(handed.len(), report.kept.len(), "dropped files are told");
        }
    }

    struct Failing;

    impl MatchSink for Failing {
        fn matches(&self, _: &Path, _: &[u8], _: &[Match]) -> Result<(), SinkError> {
            Err("no room".into())
        }
    }

    /// A sink that cannot take matches stops the search with its error.
    #[test]
    fn a_sink_error_stops_the_search() {
        let dir = tree(10, 2);
        let error =
            search_with(&pattern(), dir.path(), &SearchOptions::default(), &Failing).unwrap_err();
        assert!(matches!(error, SearchError::Sink(_)));
        assert_eq!(error.to_string(), "the matches could not be kept: no room");
    }
}
