//! Searching a file or a folder: walk (honouring `.gitignore`, skipping hidden and binary
//! files), test the pattern's literals against each file's bytes, parse only the files that
//! pass, in parallel, and keep the first `max_results` matches in (path, position) order while
//! counting all of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::find::{Captured, Match, Position, SourceParser};
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
}

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

/// Why a search could not start.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The path does not exist.
    #[error("`{0}` does not exist")]
    NotFound(PathBuf),
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

/// Keeps the first `max` matches in path order, counting the rest.
struct Collector {
    max: usize,
    kept: BTreeMap<PathBuf, Vec<FoundMatch>>,
    kept_count: usize,
    total: usize,
    files_searched: usize,
    files_parsed: usize,
    skipped: Vec<Skipped>,
    exhausted: usize,
    parse_errors: Vec<ParseErrors>,
    too_large: Vec<TooLarge>,
}

impl Collector {
    /// Whether matches of `path` could be among the kept ones.
    fn wants(&self, path: &Path) -> bool {
        self.kept_count < self.max
            || self
                .kept
                .last_key_value()
                .is_some_and(|(last, _)| path < last.as_path())
    }

    fn add(&mut self, path: PathBuf, matches: Vec<FoundMatch>) {
        if matches.is_empty() || self.max == 0 {
            return;
        }
        self.kept_count += matches.len();
        self.kept.insert(path, matches);
        // Drop whole files from the end while the rest still fill `max`.
        while let Some((_, last)) = self.kept.last_key_value() {
            if self.kept_count - last.len() >= self.max {
                self.kept_count -= last.len();
                self.kept.pop_last();
            } else {
                break;
            }
        }
    }
}

/// Calls `visit` for `path` if it is a file, or for every file under the folder `path` with
/// one of the pattern language's extensions (`.gitignore` honoured, hidden files skipped),
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
    let files: Vec<(u64, PathBuf)> = if meta.is_file() {
        vec![(meta.len(), path.to_path_buf())]
    } else {
        let extensions = pattern.language().extensions();
        let mut files = Vec::new();
        let walk = ignore::WalkBuilder::new(path)
            .hidden(true)
            .git_ignore(true)
            .require_git(false)
            .build();
        for entry in walk {
            if options.cancelled() {
                return Ok(());
            }
            let Ok(entry) = entry else {
                continue;
            };
            let wanted = entry.file_type().is_some_and(|t| t.is_file())
                && entry
                    .path()
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| extensions.iter().any(|x| x.eq_ignore_ascii_case(e)));
            if wanted {
                let size = entry.metadata().map_or(0, |m| m.len());
                files.push((size, entry.into_path()));
            }
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
    let collector = Mutex::new(Collector {
        max: options.max_results,
        kept: BTreeMap::new(),
        kept_count: 0,
        total: 0,
        files_searched: 0,
        files_parsed: 0,
        skipped: Vec::new(),
        exhausted: 0,
        parse_errors: Vec::new(),
        too_large: Vec::new(),
    });
    let single_file = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    visit_sources(pattern, path, options, &|file, size, parser| {
        search_file(
            pattern,
            file,
            size,
            parser,
            &collector,
            !single_file,
            options,
        );
    })?;
    let collector = collector
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut skipped = collector.skipped;
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let mut matches: Vec<FoundMatch> = collector.kept.into_values().flatten().collect();
    matches.truncate(options.max_results);
    let mut parse_errors = collector.parse_errors;
    let parse_errors_total = parse_errors.len();
    parse_errors.sort_by(|a, b| a.path.cmp(&b.path));
    parse_errors.truncate(MAX_PARSE_ERRORS_LISTED);
    let mut too_large = collector.too_large;
    too_large.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(SearchResult {
        matches,
        total: collector.total,
        files_searched: collector.files_searched,
        files_parsed: collector.files_parsed,
        skipped,
        exhausted: collector.exhausted,
        parse_errors,
        parse_errors_total,
        too_large,
        cancelled: options.cancelled(),
    })
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

fn search_file(
    pattern: &Pattern,
    path: &Path,
    size: u64,
    parser: &mut SourceParser,
    collector: &Mutex<Collector>,
    skip_binary: bool,
    options: &SearchOptions,
) {
    if size > options.max_file_bytes {
        let mut c = lock(collector);
        c.files_searched += 1;
        c.too_large.push(TooLarge {
            path: path.to_path_buf(),
            size,
        });
        return;
    }
    let skip = |reason: String| {
        let mut c = lock(collector);
        c.files_searched += 1;
        c.skipped.push(Skipped {
            path: path.to_path_buf(),
            reason,
        });
    };
    let bytes = match read_capped(path, options.max_file_bytes) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            // It grew past the cap since the walk saw it.
            let mut c = lock(collector);
            c.files_searched += 1;
            c.too_large.push(TooLarge {
                path: path.to_path_buf(),
                size: std::fs::metadata(path).map_or(size, |m| m.len()),
            });
            return;
        }
        Err(error) => return skip(error.to_string()),
    };
    let head = &bytes[..bytes.len().min(8192)];
    if skip_binary && memchr::memchr(0, head).is_some() {
        return;
    }
    if !pattern.may_match(&bytes) {
        lock(collector).files_searched += 1;
        return;
    }
    let tree = match parser.parse(pattern.language().as_ref(), &bytes) {
        Ok(tree) => tree,
        Err(error) => return skip(error.to_string()),
    };
    let Some(found) = pattern.find_in_tree_within(&tree, &bytes, MAX_SOURCE_DEPTH) else {
        return skip(too_deep_reason());
    };
    let errors = crate::find::syntax_errors(&tree);
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
        let texts = found_matches(path, &bytes, &found.matches[..keep]);
        lock(collector).add(path.to_path_buf(), texts);
    }
}

/// The bytes of `path`, or `None` when it holds more than `cap` bytes (read no further).
pub(crate) fn read_capped(path: &Path, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= cap).then_some(bytes))
}
