//! The one walk over a workspace's files. Every tool that walks (structural search, the
//! language servers' project-root search and dependents scan, the project checker) goes
//! through [`Walk`], so all of them see the same files:
//!
//! - hidden entries (a name starting with `.`) are skipped;
//! - `.ignore` files are honoured everywhere, and `.gitignore` and `.git/info/exclude` inside a
//!   git repository only, as ripgrep and git read them: a tree unpacked from an archive (a
//!   kernel source package whose root `.gitignore` says `/*`) is read in full;
//! - dependencies and generated trees are never entered, even when nothing ignores them: the
//!   folders named in [`SKIPPED_DIRS`] (`node_modules`, `__pycache__`), and any folder that
//!   holds one of [`GENERATED_MARKERS`] (a virtualenv's `pyvenv.cfg`, the `CACHEDIR.TAG` of
//!   cargo's `target`, a CMake build tree's `CMakeCache.txt`). A folder is skipped for what it
//!   is, not for its name alone: the standard library's `venv` package or a project's `build`
//!   package is code;
//! - entries come sorted by path, so a capped walk keeps the same files every time.
//!
//! The root itself is always walked, even when its own name is hidden or skipped: a walk
//! asked for `node_modules/pkg` (or a temporary folder `.tmpXYZ`) walks it.
//!
//! ```
//! use cc_workspace::walk::Walk;
//!
//! let dir = tempfile::tempdir()?;
//! for file in ["a.py", "pkg/b.py", "node_modules/c.py", ".venv/d.py", "notes.txt"] {
//!     let path = dir.path().join(file);
//!     std::fs::create_dir_all(path.parent().unwrap())?;
//!     std::fs::write(path, "x = 1\n")?;
//! }
//! let files: Vec<_> = Walk::new(dir.path())
//!     .extensions(&["py"])
//!     .files()
//!     .map(|entry| entry.path.strip_prefix(dir.path()).unwrap().to_path_buf())
//!     .collect();
//! assert_eq!(files, [std::path::PathBuf::from("a.py"), "pkg/b.py".into()]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether a walk enters `entry`: the root, any file, and a folder that is neither a
/// dependency/bytecode folder by name nor generated (it holds a marker).
fn entered(entry: &ignore::DirEntry) -> bool {
    entry.depth() == 0
        || !entry.file_type().is_some_and(|t| t.is_dir())
        || !(entry
            .file_name()
            .to_str()
            .is_some_and(|name| SKIPPED_DIRS.contains(&name))
            || GENERATED_MARKERS
                .iter()
                .any(|marker| entry.path().join(marker).exists()))
}

/// An iterator that ends, with `interrupted` raised, where its inner one panics (the
/// `ignore` walker does when the tree changes under it), so no walk takes its thread down.
struct Unwinding<I> {
    inner: Option<I>,
    interrupted: Arc<AtomicBool>,
}

impl<I: Iterator> Iterator for Unwinding<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let inner = self.inner.as_mut()?;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.next())) {
            Ok(item) => item,
            Err(_) => {
                self.inner = None;
                self.interrupted.store(true, Ordering::Release);
                None
            }
        }
    }
}

/// Folders never entered by name: they only ever hold dependencies or bytecode.
pub const SKIPPED_DIRS: &[&str] = &["node_modules", "__pycache__"];

/// Files that mark a folder as generated (a virtualenv, a cargo target directory or any
/// cache directory, a CMake build tree): such a folder is never entered.
pub const GENERATED_MARKERS: &[&str] = &["pyvenv.cfg", "CACHEDIR.TAG", "CMakeCache.txt"];

/// One file or folder found by a [`Walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The root as given to [`Walk::new`], joined with the path beneath it.
    pub path: PathBuf,
    /// 0 for the root, 1 for its children, …
    pub depth: usize,
    /// The file's size in bytes; `None` for a folder, or when its metadata could not be read
    /// (so a caller with a size cap never takes an unknown size for a small one).
    pub size: Option<u64>,
}

/// A walk over the files or folders beneath a root, with the rules of the module docs.
#[derive(Debug, Clone)]
pub struct Walk {
    root: PathBuf,
    max_depth: Option<usize>,
    extensions: Vec<String>,
    limit: Option<usize>,
    interrupted: Arc<AtomicBool>,
}

impl Walk {
    /// A walk of everything beneath `root`: no depth bound, every extension, no limit.
    pub fn new(root: impl AsRef<Path>) -> Self {
        Walk {
            root: root.as_ref().to_path_buf(),
            max_depth: None,
            extensions: Vec::new(),
            limit: None,
            interrupted: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Raised when the walk stopped early because the tree changed under it in a way the
    /// `ignore` walker cannot follow (it panics when a folder it is in turns into a symlink
    /// or vanishes): the entries listed are then a part of the tree. Take it before
    /// consuming the walk.
    pub fn interrupted(&self) -> Arc<AtomicBool> {
        self.interrupted.clone()
    }

    /// Descends at most `depth` levels below the root.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = Some(depth);
        self
    }

    /// Only files whose extension is one of these (any case; without the dot). Without this,
    /// every file.
    pub fn extensions<S: AsRef<str>>(mut self, extensions: &[S]) -> Self {
        self.extensions = extensions.iter().map(|e| e.as_ref().to_owned()).collect();
        self
    }

    /// Stops after visiting this many entries (files and folders, wanted or not), bounding
    /// the time a walk of a huge tree takes.
    pub fn limit(mut self, entries: usize) -> Self {
        self.limit = Some(entries);
        self
    }

    /// The files, sorted by path.
    pub fn files(self) -> impl Iterator<Item = Entry> {
        let extensions = self.extensions.clone();
        self.entries().filter_map(move |(entry, is_dir)| {
            let wanted = !is_dir
                && (extensions.is_empty()
                    || entry
                        .path
                        .extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| extensions.iter().any(|x| x.eq_ignore_ascii_case(e))));
            wanted.then_some(entry)
        })
    }

    /// The folders, the root first, then sorted by path.
    pub fn dirs(self) -> impl Iterator<Item = Entry> {
        self.entries()
            .filter_map(|(entry, is_dir)| is_dir.then_some(entry))
    }

    /// The `ignore` walk with these rules and bounds (not the extension filter or the
    /// limit), for a caller that walks in parallel (`build_parallel`).
    pub fn builder(&self) -> ignore::WalkBuilder {
        let mut builder = ignore::WalkBuilder::new(&self.root);
        builder
            .hidden(true)
            .ignore(true)
            .git_ignore(true)
            .git_global(false)
            .git_exclude(true)
            .parents(true)
            .require_git(true)
            .max_depth(self.max_depth)
            .sort_by_file_path(|a, b| a.cmp(b))
            .filter_entry(entered);
        builder
    }

    fn entries(self) -> impl Iterator<Item = (Entry, bool)> {
        // (The walk's ignore rules: see `builder`.)
        let limit = self.limit.unwrap_or(usize::MAX);
        Unwinding {
            inner: Some(self.builder().build()),
            interrupted: self.interrupted.clone(),
        }
        .take(limit)
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let kind = entry.file_type()?;
            let is_dir = kind.is_dir();
            if !is_dir && !kind.is_file() {
                return None;
            }
            let size = if is_dir {
                None
            } else {
                entry.metadata().ok().map(|m| m.len())
            };
            let depth = entry.depth();
            Some((
                Entry {
                    path: entry.into_path(),
                    depth,
                    size,
                },
                is_dir,
            ))
        })
    }
}

/// The ignore files of the tree, per folder, as the workspace walk reads them (`.gitignore`
/// inside a git repository only, `.ignore` always).
#[derive(Default)]
pub(crate) struct IgnoreRules {
    by_dir: HashMap<PathBuf, Vec<ignore::gitignore::Gitignore>>,
}

impl IgnoreRules {
    pub(crate) fn load(&mut self, file: &Path) {
        let Some(dir) = file.parent() else {
            return;
        };
        let mut matchers = Vec::new();
        for name in [".gitignore", ".ignore"] {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            if name == ".gitignore" && !in_git_repository(dir) {
                continue;
            }
            let (matcher, _error) = ignore::gitignore::Gitignore::new(&path);
            matchers.push(matcher);
        }
        if matchers.is_empty() {
            self.by_dir.remove(dir);
        } else {
            self.by_dir.insert(dir.to_path_buf(), matchers);
        }
    }

    /// Whether the innermost rule that speaks of `path` ignores it.
    pub(crate) fn ignored(&self, root: &Path, path: &Path, is_dir: bool) -> bool {
        self.rule_for(root, path, is_dir).is_some()
    }

    /// The ignore file whose rule leaves `path` out (itself or a folder above it), if one
    /// does.
    pub(crate) fn rule_for(&self, root: &Path, path: &Path, is_dir: bool) -> Option<PathBuf> {
        if self.by_dir.is_empty() {
            return None;
        }
        // As the walk decides: it never tests the root or what is above it, and it does not
        // enter an ignored folder, so a path is left out when it, or one of its folders
        // below the root, is ignored (outermost first: nothing re-includes a file of an
        // ignored folder). Rule files above the root apply, as `parents(true)` reads them.
        let Ok(relative) = path.strip_prefix(root) else {
            return None;
        };
        let components: Vec<_> = relative.components().collect();
        let mut candidate = root.to_path_buf();
        for (index, component) in components.iter().enumerate() {
            candidate.push(component);
            let last = index + 1 == components.len();
            if let Some(rule) = self.decide(&candidate, if last { is_dir } else { true }) {
                return Some(rule);
            }
        }
        None
    }

    /// The rule file whose innermost matching rule ignores `candidate` itself.
    fn decide(&self, candidate: &Path, is_dir: bool) -> Option<PathBuf> {
        let mut dir = candidate.parent();
        while let Some(current) = dir {
            if let Some(matchers) = self.by_dir.get(current) {
                // `.ignore` (read last) takes precedence over `.gitignore`, as in ripgrep.
                for matcher in matchers.iter().rev() {
                    let matched = matcher.matched(candidate, is_dir);
                    if matched.is_ignore() {
                        return Some(
                            matched
                                .inner()
                                .and_then(|glob| glob.from().map(Path::to_path_buf))
                                .unwrap_or_else(|| current.join(".gitignore")),
                        );
                    }
                    if matched.is_whitelist() {
                        return None;
                    }
                }
            }
            dir = current.parent();
        }
        None
    }
}

/// What ignore rules left out of a walk: per rule file, the files (with the walk's extensions)
/// it left out, folders and what is beneath them included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// `(rule file, files)`, most files first.
    pub by_rule: Vec<(PathBuf, usize)>,
    /// Every file left out.
    pub files: usize,
    /// The count stopped at the walk's bound: there may be more.
    pub capped: bool,
}

impl Walk {
    /// What the walk's ignore files (`.gitignore` in a git repository, `.ignore`) leave out
    /// of it: a second walk without them, its every file with the walk's extensions checked
    /// against them, bounded like the walk (at most 200,000 entries). For saying "0 files
    /// searched: 55,418 left out by /.gitignore", never a silent zero.
    pub fn left_out(&self) -> LeftOut {
        let limit = self.limit.unwrap_or(200_000).min(200_000);
        let mut builder = ignore::WalkBuilder::new(&self.root);
        builder
            .hidden(true)
            .ignore(false)
            .git_ignore(false)
            .git_global(false)
            .git_exclude(false)
            .parents(false)
            .max_depth(self.max_depth)
            .sort_by_file_path(|a, b| a.cmp(b))
            .filter_entry(entered);
        let mut rules = IgnoreRules::default();
        // The ignore files of the folders above the root apply too, as in the walk.
        let mut above: Vec<&Path> = self.root.ancestors().skip(1).collect();
        above.reverse();
        for dir in above {
            for name in [".gitignore", ".ignore"] {
                if dir.join(name).is_file() {
                    rules.load(&dir.join(name));
                }
            }
        }
        let mut counts: std::collections::BTreeMap<PathBuf, usize> = Default::default();
        let mut files = 0;
        let mut visited = 0;
        let mut capped = false;
        for entry in builder.build().filter_map(Result::ok) {
            visited += 1;
            if visited > limit {
                capped = true;
                break;
            }
            let Some(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                for name in [".gitignore", ".ignore"] {
                    let file = path.join(name);
                    if file.is_file() {
                        rules.load(&file);
                    }
                }
                continue;
            }
            if !kind.is_file() || !self.wanted(path) {
                continue;
            }
            if let Some(rule) = rules.rule_for(&self.root, path, false) {
                files += 1;
                *counts.entry(rule).or_default() += 1;
            }
        }
        let mut by_rule: Vec<(PathBuf, usize)> = counts.into_iter().collect();
        by_rule.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        LeftOut {
            by_rule,
            files,
            capped,
        }
    }

    /// Whether `path` has one of the walk's extensions (every file without a filter).
    fn wanted(&self, path: &Path) -> bool {
        self.extensions.is_empty()
            || path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| self.extensions.iter().any(|x| x.eq_ignore_ascii_case(e)))
    }
}

/// Whether `dir` lies in a git repository (a `.git` in it or a folder above it), where
/// `.gitignore` files apply.
pub fn in_git_repository(dir: &Path) -> bool {
    dir.ancestors().any(|folder| folder.join(".git").exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    fn relative(dir: &Path, entries: impl Iterator<Item = Entry>) -> Vec<String> {
        entries
            .map(|e| {
                e.path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    #[test]
    fn gitignore_applies_inside_a_git_repository_only() {
        let dir = tree(&["a.py", "gen/b.py", "sub/c.py"]);
        std::fs::write(dir.path().join(".gitignore"), "/*\n").unwrap();
        std::fs::write(dir.path().join("sub/.ignore"), "c.py\n").unwrap();
        // An unpacked archive: `.gitignore` is not a rule here, `.ignore` is.
        let outside_git = relative(
            dir.path(),
            Walk::new(dir.path()).extensions(&["py"]).files(),
        );
        assert_eq!(outside_git, ["a.py", "gen/b.py"]);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert!(in_git_repository(&dir.path().join("sub")));
        let inside_git = relative(
            dir.path(),
            Walk::new(dir.path()).extensions(&["py"]).files(),
        );
        assert!(inside_git.is_empty(), "{inside_git:?}");
    }

    #[test]
    fn what_ignore_rules_leave_out_is_counted_by_rule_file() {
        let dir = tree(&["a.py", "gen/b.py", "gen/c.py", "sub/d.py", "sub/e.txt"]);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "gen/\n").unwrap();
        std::fs::write(dir.path().join("sub/.ignore"), "d.py\n").unwrap();
        let left = Walk::new(dir.path()).extensions(&["py"]).left_out();
        assert_eq!(left.files, 3);
        assert_eq!(
            left.by_rule,
            [
                (dir.path().join(".gitignore"), 2),
                (dir.path().join("sub/.ignore"), 1)
            ]
        );
        assert!(!left.capped);
    }

    /// A walk rooted inside a folder that the enclosing repository ignores (a checkout's
    /// `.peers/` holding a tree) searches that tree, so none of it is counted as left out;
    /// the rules above the root still leave out what they name below it.
    #[test]
    fn rules_above_the_root_count_only_below_it() {
        let dir = tree(&["peers/tree/a.c", "peers/tree/gen/b.c", "peers/tree/sub/c.c"]);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "peers/\ngen/\n").unwrap();
        let root = dir.path().join("peers/tree");
        let walked = relative(&root, Walk::new(&root).extensions(&["c"]).files());
        assert_eq!(walked, ["a.c", "sub/c.c"]);
        let left = Walk::new(&root).extensions(&["c"]).left_out();
        assert_eq!(left.files, 1, "{left:?}");
        assert_eq!(left.by_rule, [(dir.path().join(".gitignore"), 1)]);
    }

    #[test]
    fn gitignore_hidden_and_dependency_folders_are_skipped() {
        let dir = tree(&[
            "a.rs",
            "src/b.rs",
            "gen/c.rs",
            "target/debug/d.rs",
            "target/CACHEDIR.TAG",
            "node_modules/x/e.rs",
            ".hidden/f.rs",
            "build/g.rs",
            "env/pyvenv.cfg",
            "env/lib/h.rs",
            "venv/i.rs",
        ]);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "gen/\n").unwrap();
        let files = relative(
            dir.path(),
            Walk::new(dir.path()).extensions(&["RS"]).files(),
        );
        // `build` and `venv` without a marker are code (a `build` package, the standard
        // library's `venv`).
        assert_eq!(files, ["a.rs", "build/g.rs", "src/b.rs", "venv/i.rs"]);
    }

    #[test]
    fn the_root_is_walked_even_when_its_name_is_skipped() {
        let dir = tree(&["node_modules/pkg/index.js", ".tmp/x/y.js"]);
        let inside = dir.path().join("node_modules/pkg");
        assert_eq!(relative(&inside, Walk::new(&inside).files()), ["index.js"]);
        let hidden = dir.path().join(".tmp");
        assert_eq!(relative(&hidden, Walk::new(&hidden).files()), ["x/y.js"]);
    }

    #[test]
    fn dirs_depth_and_limit() {
        let dir = tree(&["a/b/c/d/e.txt", "z/y.txt"]);
        let dirs = relative(dir.path(), Walk::new(dir.path()).max_depth(2).dirs());
        assert_eq!(dirs, ["", "a", "a/b", "z"]);
        let limited = Walk::new(dir.path()).limit(3).dirs().count();
        assert_eq!(limited, 3);
        let sizes: Vec<Option<u64>> = Walk::new(dir.path()).files().map(|e| e.size).collect();
        assert_eq!(sizes, [Some(1), Some(1)]);
    }
}
