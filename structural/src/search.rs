//! Searching a file or a folder: walk (honouring `.gitignore`, skipping hidden and binary
//! files), test the pattern's literals against each file's bytes, parse only the files that
//! pass, in parallel, and keep the first `max_results` matches in (path, position) order while
//! counting all of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
}

impl std::fmt::Debug for SearchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchOptions")
            .field("max_results", &self.max_results)
            .field("threads", &self.threads)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            max_results: 50,
            threads: 0,
            progress: None,
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
/// from `threads` workers (0: one per core), each with its own parser.
///
/// The walk only lists files; the workers then take files from one shared queue, biggest
/// first, so one folder of many files (a `test/` tree) is shared out rather than left to the
/// worker that found it.
pub(crate) fn visit_sources(
    pattern: &Pattern,
    path: &Path,
    threads: usize,
    progress: Option<&ProgressFn>,
    visit: &(dyn Fn(&Path, &mut SourceParser) + Sync),
) -> Result<(), SearchError> {
    let meta = std::fs::metadata(path).map_err(|_| SearchError::NotFound(path.to_path_buf()))?;
    if meta.is_file() {
        visit(path, &mut SourceParser::new());
        return Ok(());
    }
    let extensions = pattern.language().extensions();
    let mut files: Vec<(u64, PathBuf)> = ignore::WalkBuilder::new(path)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter(|entry| {
            entry
                .path()
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| extensions.iter().any(|x| x.eq_ignore_ascii_case(e)))
        })
        .map(|entry| {
            let size = entry.metadata().map_or(0, |m| m.len());
            (size, entry.into_path())
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        threads
    }
    .clamp(1, files.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = files.len();
    // About 20 reports per search, whatever its size.
    let report_every = (total / 20).max(1);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut parser = SourceParser::new();
                loop {
                    let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((_, file)) = files.get(index) else {
                        break;
                    };
                    visit(file, &mut parser);
                    let finished = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    if let Some(report) = progress {
                        if finished.is_multiple_of(report_every) || finished == total {
                            report(finished, total);
                        }
                    }
                }
            });
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
    });
    let single_file = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    visit_sources(
        pattern,
        path,
        options.threads,
        options.progress.as_ref(),
        &|file, parser| {
            search_file(pattern, file, parser, &collector, !single_file);
        },
    )?;
    let collector = collector
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut skipped = collector.skipped;
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let mut matches: Vec<FoundMatch> = collector.kept.into_values().flatten().collect();
    matches.truncate(options.max_results);
    Ok(SearchResult {
        matches,
        total: collector.total,
        files_searched: collector.files_searched,
        files_parsed: collector.files_parsed,
        skipped,
        exhausted: collector.exhausted,
    })
}

fn lock(collector: &Mutex<Collector>) -> std::sync::MutexGuard<'_, Collector> {
    collector
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn search_file(
    pattern: &Pattern,
    path: &Path,
    parser: &mut SourceParser,
    collector: &Mutex<Collector>,
    skip_binary: bool,
) {
    let skip = |reason: String| {
        let mut c = lock(collector);
        c.files_searched += 1;
        c.skipped.push(Skipped {
            path: path.to_path_buf(),
            reason,
        });
    };
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
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
    let found = match pattern.find_all(parser, &bytes) {
        Ok(found) => found,
        Err(error) => return skip(error.to_string()),
    };
    let (wants, max) = {
        let mut c = lock(collector);
        c.files_searched += 1;
        c.files_parsed += 1;
        c.total += found.matches.len();
        c.exhausted += found.exhausted;
        (!found.matches.is_empty() && c.wants(path), c.max)
    };
    if wants {
        // Past its first `max` matches, none of a file's can be among the first `max`.
        let keep = found.matches.len().min(max);
        let texts = found_matches(path, &bytes, &found.matches[..keep]);
        lock(collector).add(path.to_path_buf(), texts);
    }
}
