//! Kotlin diagnostics on write. JDT LS reads Kotlin for navigation only, and no Kotlin
//! language server is installable from the registries, so a written Kotlin file (and a
//! Kotlin dependent of any write) is checked by JetBrains' compiler itself, kept warm in one
//! JVM per project root ([`KotlinCompiler`], `KotlinCheck.java`).
//!
//! Each check compiles every Kotlin file of the root with its Java files — what `kotlinc`
//! does for `diagnostics "*"` — since a module cannot be compiled in part without its other
//! files' declarations turning into errors. A check of a tree whose sources did not change
//! since the last compile (the baseline taken just before a write, a dependent asked for
//! twice) is answered from that compile. A compile that outlasts the caller's cap keeps
//! going, and its result answers the next check.
//!
//! ```no_run
//! use std::{path::Path, sync::Arc, time::Duration};
//! use cc_lsp_client::{kotlin::KotlinCompiler, ServerTable};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let root = Path::new("/work/app");
//! let table = ServerTable::builtin();
//! let spec = &table.family("java").ok_or("no java family")?.servers[0];
//! let path = std::env::var_os("PATH").unwrap_or_default();
//! let compiler = Arc::new(KotlinCompiler::locate(root, root, &path, spec, false)?);
//! match compiler.check(Duration::from_secs(60)).await {
//!     Ok(compiled) => println!("{:?}", compiled.of(&root.join("src/A.kt"))),
//!     Err(not_checked) => println!("{not_checked:?}"),
//! }
//! compiler.shutdown().await;
//! # Ok(()) }
//! ```

mod daemon;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cc_process::lock;

use crate::diagnostic::Diagnostic;
use daemon::{Daemon, Failure, Launch};

/// More source files than this under one root are not compiled on every write.
pub const MAX_SOURCES: usize = 3000;

/// What a check gives when it has no diagnostics to give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotChecked {
    /// The compile did not end within the cap; it goes on.
    Pending(String),
    /// The files cannot be checked this way (no compiler, too many files, a crash).
    Unchecked(String),
}

/// A use of a declaration, as [`KotlinCompiler::uses_of`] found it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Use {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// 0-based column of the name's start, in characters (UTF-16 code units), as the
    /// compiler counts.
    pub column: u32,
}

/// One compile's diagnostics, by file.
#[derive(Debug, Default)]
pub struct Compiled {
    fingerprint: u64,
    by_file: HashMap<PathBuf, Vec<Diagnostic>>,
    /// How long the compile took.
    pub took: Duration,
}

impl Compiled {
    /// The diagnostics of `path` (none when the compiler said nothing of it).
    pub fn of(&self, path: &Path) -> Vec<Diagnostic> {
        self.by_file.get(path).cloned().unwrap_or_default()
    }
}

/// JetBrains' Kotlin compiler kept warm for one project root.
pub struct KotlinCompiler {
    root: PathBuf,
    launch: Launch,
    daemon: tokio::sync::Mutex<Option<Daemon>>,
    last: Mutex<Option<Arc<Compiled>>>,
    last_used: Mutex<Instant>,
    /// The running JVM's pid (0: none).
    pid: AtomicU32,
    /// Why the compiler cannot run (its JVM failed to start): told until a reload.
    failed: Mutex<Option<String>>,
}

impl std::fmt::Debug for KotlinCompiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KotlinCompiler")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl KotlinCompiler {
    /// The compiler for `root`, when `kotlinc` (JetBrains' distribution: its `lib/` beside
    /// `bin/kotlinc`) and a Java runtime are found; else why not. Found as the project
    /// checker finds `kotlinc` (the project's `node_modules/.bin` first, never inside the
    /// workspace on a read-only surface).
    pub fn locate(
        root: &Path,
        workspace: &Path,
        path_var: &OsStr,
        spec: &crate::table::ServerSpec,
        read_only: bool,
    ) -> Result<KotlinCompiler, String> {
        let launch = Launch::find(root, workspace, path_var, spec, read_only)?;
        Ok(KotlinCompiler {
            root: root.to_path_buf(),
            launch,
            daemon: tokio::sync::Mutex::new(None),
            last: Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
            pid: AtomicU32::new(0),
            failed: Mutex::new(None),
        })
    }

    /// The project root it compiles.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How long it has been idle: since the end of its last compile, or the last check it
    /// answered from one; zero while it compiles.
    pub fn idle_for(&self) -> Duration {
        if self.daemon.try_lock().is_err() {
            return Duration::ZERO;
        }
        lock(&self.last_used).elapsed()
    }

    /// The pid of its JVM, when one runs.
    pub fn pid(&self) -> Option<u32> {
        // Kept beside the daemon: its lock is held for a whole compile.
        let pid = self.pid.load(Ordering::SeqCst);
        (pid != 0).then_some(pid)
    }

    /// One clause for `status`: what checks Kotlin files on write, or why nothing does.
    pub fn describe(&self) -> String {
        if let Some(failed) = lock(&self.failed).as_ref() {
            return format!("Kotlin files are not checked on write: {failed}");
        }
        let last = lock(&self.last)
            .as_ref()
            .map(|last| format!(", last compile {}", crate::error::fmt_duration(last.took)))
            .unwrap_or_default();
        match self.pid() {
            Some(pid) => {
                format!("Kotlin files are compiled on write by kotlinc (JVM pid {pid}{last})")
            }
            None => format!(
                "Kotlin files are compiled on write by kotlinc (its JVM is not running{last})"
            ),
        }
    }

    /// The diagnostics of the root's sources as they are on disk now: from the last compile
    /// when no source changed since, else from a new one, waited for up to `cap`.
    pub async fn check(self: &Arc<Self>, cap: Duration) -> Result<Arc<Compiled>, NotChecked> {
        *lock(&self.last_used) = Instant::now();
        if let Some(reason) = lock(&self.failed).clone() {
            return Err(NotChecked::Unchecked(reason));
        }
        let sources = self.sources().await?;
        if let Some(last) = self.last_matching(sources.fingerprint) {
            return Ok(last);
        }
        let me = self.clone();
        let files = sources.files.len();
        // Spawned: a compile past the cap still ends, and answers the next check.
        let compile = tokio::spawn(async move { me.compile(sources).await });
        match tokio::time::timeout(cap, compile).await {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => Err(NotChecked::Unchecked(format!(
                "the Kotlin compile task failed: {error}"
            ))),
            Err(_) => Err(NotChecked::Pending(format!(
                "the Kotlin compiler is still compiling {files} source file(s) after {}; its result answers the next check",
                crate::error::fmt_duration(cap)
            ))),
        }
    }

    /// The root's sources now (read off the async threads: it hashes every file).
    async fn sources(&self) -> Result<Sources, NotChecked> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || Sources::read(&root))
            .await
            .map_err(|error| NotChecked::Unchecked(format!("listing the sources failed: {error}")))?
            .map_err(NotChecked::Unchecked)
    }

    fn last_matching(&self, fingerprint: u64) -> Option<Arc<Compiled>> {
        lock(&self.last)
            .as_ref()
            .filter(|last| last.fingerprint == fingerprint)
            .cloned()
    }

    async fn compile(&self, sources: Sources) -> Result<Arc<Compiled>, NotChecked> {
        let mut daemon = self.daemon.lock().await;
        // Another check may have compiled this very state while this one waited.
        if let Some(last) = self.last_matching(sources.fingerprint) {
            return Ok(last);
        }
        let started = Instant::now();
        let by_file = self.run(&mut daemon, &sources.files).await?;
        let compiled = Arc::new(Compiled {
            fingerprint: sources.fingerprint,
            by_file,
            took: started.elapsed(),
        });
        *lock(&self.last) = Some(compiled.clone());
        // Idle counts from the end of the last compile, not from its start.
        *lock(&self.last_used) = Instant::now();
        Ok(compiled)
    }

    /// One compile of `files` by the daemon (started, or started again once when found
    /// dead), its diagnostics by file.
    async fn run(
        &self,
        daemon: &mut Option<Daemon>,
        files: &[PathBuf],
    ) -> Result<HashMap<PathBuf, Vec<Diagnostic>>, NotChecked> {
        let arguments = self.arguments(files);
        // A JVM found dead (killed between checks, out of memory) is started again once.
        let mut attempts = 0;
        let output = loop {
            attempts += 1;
            let fresh = daemon.is_none();
            if fresh {
                match Daemon::start(&self.launch).await {
                    Ok(started) => {
                        self.pid.store(started.pid(), Ordering::SeqCst);
                        *daemon = Some(started);
                    }
                    Err(reason) => {
                        *lock(&self.failed) = Some(reason.clone());
                        return Err(NotChecked::Unchecked(reason));
                    }
                }
            }
            let Some(running) = daemon.as_mut() else {
                return Err(NotChecked::Unchecked(
                    "the Kotlin compiler did not start".into(),
                ));
            };
            match running.compile(&arguments).await {
                Ok(output) => break output,
                Err(Failure::Threw(reason)) => return Err(NotChecked::Unchecked(reason)),
                Err(Failure::Gone(reason)) => {
                    if let Some(mut gone) = daemon.take() {
                        gone.stop().await;
                    }
                    self.pid.store(0, Ordering::SeqCst);
                    if fresh {
                        // One that could not do its first compile (no compiler in the
                        // runtime, a runtime too old) would only fail again.
                        *lock(&self.failed) = Some(reason.clone());
                        return Err(NotChecked::Unchecked(reason));
                    }
                    if attempts > 1 {
                        return Err(NotChecked::Unchecked(reason));
                    }
                    tracing::info!(%reason, "the Kotlin compiler's JVM is gone: starting another");
                }
            }
        };
        let found = crate::checker::parse_output(
            crate::checker::Format::Gcc,
            "kotlinc",
            &output,
            "",
            &self.root,
        )
        .map_err(NotChecked::Unchecked)?;
        let mut by_file: HashMap<PathBuf, Vec<Diagnostic>> = HashMap::new();
        for found in found {
            by_file
                .entry(found.path)
                .or_default()
                .push(found.diagnostic);
        }
        Ok(by_file)
    }

    /// The uses of the declaration whose name `name` starts at byte `column` of 0-based
    /// `line` of `declaration`, as the compiler sees them: the root is compiled with that one
    /// name changed (in a copy of the file; the tree is not touched), and every
    /// "unresolved reference 'name'" that the change brings is a use, found by the compiler's
    /// own resolution — never an overload's or another class's member of the same name,
    /// which still resolve. Kotlin uses only: Java files are read by the compiler, not
    /// checked.
    pub async fn uses_of(
        self: &Arc<Self>,
        declaration: &Path,
        line: usize,
        column: usize,
        name: &str,
        cap: Duration,
    ) -> Result<Vec<Use>, NotChecked> {
        let before = self.check(cap).await?;
        let probe = Probe::write(declaration, line, column, name)?;
        let files = self.sources_with(&probe).await?;
        let after = self.compile_within(files, cap).await?;
        Ok(probe.new_uses(&before, after))
    }

    /// The compiler's sources with the probe's copy in place of its declaration's file.
    async fn sources_with(&self, probe: &Probe<'_>) -> Result<Vec<PathBuf>, NotChecked> {
        let declaration = probe.declaration;
        let sources = self.sources().await?;
        if !sources.files.iter().any(|f| f == declaration) {
            return Err(NotChecked::Unchecked(format!(
                "{} is not among the Kotlin compiler's sources of {}",
                declaration.display(),
                self.root.display()
            )));
        }
        Ok(sources
            .files
            .iter()
            .map(|f| {
                if f == declaration {
                    probe.path.clone()
                } else {
                    f.clone()
                }
            })
            .collect())
    }

    /// Compiles `files` with the daemon, waiting at most `cap`.
    async fn compile_within(
        self: &Arc<Self>,
        files: Vec<PathBuf>,
        cap: Duration,
    ) -> Result<HashMap<PathBuf, Vec<Diagnostic>>, NotChecked> {
        let me = self.clone();
        let compile = tokio::spawn(async move {
            let mut daemon = me.daemon.lock().await;
            let found = me.run(&mut daemon, &files).await;
            *lock(&me.last_used) = Instant::now();
            found
        });
        match tokio::time::timeout(cap, compile).await {
            Ok(Ok(found)) => found,
            Ok(Err(error)) => Err(NotChecked::Unchecked(format!(
                "the Kotlin compile task failed: {error}"
            ))),
            Err(_) => Err(NotChecked::Pending(format!(
                "the Kotlin compiler did not finish within {}",
                crate::error::fmt_duration(cap)
            ))),
        }
    }

    /// `kotlinc`'s arguments: classes to the cache (never into the tree), then every source.
    fn arguments(&self, files: &[PathBuf]) -> Vec<String> {
        let mut arguments = vec![
            "-d".to_owned(),
            crate::checker::output_dir("kotlin-check", &self.root)
                .to_string_lossy()
                .into_owned(),
        ];
        arguments.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
        arguments
    }

    /// Stops its JVM (the whole process group).
    pub async fn shutdown(&self) {
        if let Some(mut daemon) = self.daemon.lock().await.take() {
            daemon.stop().await;
        }
        self.pid.store(0, Ordering::SeqCst);
    }
}

/// A copy of a declaration's file with the declared name changed, for
/// [`KotlinCompiler::uses_of`]: compiled in the file's place, the references the change
/// breaks are the uses.
struct Probe<'a> {
    declaration: &'a Path,
    name: &'a str,
    /// The folder of the copy, removed with the probe.
    _folder: tempfile::TempDir,
    /// The copy.
    path: PathBuf,
}

impl<'a> Probe<'a> {
    /// Writes the copy of `declaration` with `name` (at byte `column` of 0-based `line`)
    /// changed; an error when the name is not there.
    fn write(
        declaration: &'a Path,
        line: usize,
        column: usize,
        name: &'a str,
    ) -> Result<Self, NotChecked> {
        let text = std::fs::read_to_string(declaration).map_err(|error| {
            NotChecked::Unchecked(format!("cannot read {}: {error}", declaration.display()))
        })?;
        let line_start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        // A place past the end (however far) is no place of the name.
        let span = line_start
            .checked_add(column)
            .and_then(|at| Some(at..at.checked_add(name.len())?))
            .filter(|span| text.get(span.clone()) == Some(name));
        let Some(span) = span else {
            return Err(NotChecked::Unchecked(format!(
                "`{name}` is not at line {} column {} of {}",
                line.saturating_add(1),
                column.saturating_add(1),
                declaration.display()
            )));
        };
        let probe = format!("{}{name}", "ccRenameProbe_");
        let changed = format!("{}{probe}{}", &text[..span.start], &text[span.end..]);
        let copy = tempfile::tempdir().map_err(|error| {
            NotChecked::Unchecked(format!("cannot make a folder for the compile: {error}"))
        })?;
        let file_name = declaration.file_name().unwrap_or_default();
        let probe_path = copy.path().join(file_name);
        std::fs::write(&probe_path, changed).map_err(|error| {
            NotChecked::Unchecked(format!("cannot write the compile's copy: {error}"))
        })?;
        Ok(Probe {
            declaration,
            name,
            _folder: copy,
            path: probe_path,
        })
    }

    /// The "unresolved reference" errors of the compile `after` with the copy that the
    /// compile `before` did not have: the uses, sorted, each once.
    fn new_uses(&self, before: &Compiled, after: HashMap<PathBuf, Vec<Diagnostic>>) -> Vec<Use> {
        let name = self.name;
        let unresolved = |d: &Diagnostic| {
            d.severity == crate::Severity::Error
                && d.message
                    .starts_with(&format!("unresolved reference '{name}'"))
        };
        let mut uses = Vec::new();
        for (path, diagnostics) in after {
            let path = if path == self.path {
                self.declaration.to_path_buf()
            } else {
                path
            };
            let already = before.of(&path);
            for diagnostic in diagnostics.into_iter().filter(unresolved) {
                let known = already.iter().any(|d| {
                    unresolved(d)
                        && d.line == diagnostic.line
                        && d.character == diagnostic.character
                });
                if !known {
                    uses.push(Use {
                        path: path.clone(),
                        line: diagnostic.line,
                        column: diagnostic.character,
                    });
                }
            }
        }
        uses.sort();
        uses.dedup();
        uses
    }
}

/// The Kotlin and Java sources of a root, and a fingerprint of their paths and bytes.
struct Sources {
    files: Vec<PathBuf>,
    fingerprint: u64,
}

impl Sources {
    fn read(root: &Path) -> Result<Sources, String> {
        let mut files: Vec<PathBuf> = cc_workspace::walk::Walk::new(root)
            .extensions(&["kt", "java"])
            .limit(MAX_SOURCES + 1)
            .files()
            .map(|entry| entry.path)
            // The compiler's arguments are lines.
            .filter(|path| !path.to_string_lossy().contains('\n'))
            .collect();
        if files.len() > MAX_SOURCES {
            return Err(format!(
                "more than {MAX_SOURCES} Kotlin and Java files under the project root: too many to compile on every write; ask for `diagnostics \"*\"` instead"
            ));
        }
        files.sort();
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for file in &files {
            hasher.update(file.as_os_str().as_encoded_bytes());
            hasher.update(&[0]);
            // A file that cannot be read counts as empty; the compiler will say why.
            let bytes = std::fs::read(file).unwrap_or_default();
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
        Ok(Sources {
            files,
            fingerprint: hasher.digest(),
        })
    }
}

/// Whether a file is one the Kotlin compiler checks.
pub fn compiles(path: &Path) -> bool {
    crate::table::extension(path).as_deref() == Some("kt")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_refuses_a_place_past_the_end_without_overflowing() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("Lib.kt");
        std::fs::write(&file, "fun area(side: Int) = side * side\n").expect("written");
        for (line, column) in [(0, usize::MAX), (usize::MAX, usize::MAX), (3, 0)] {
            match Probe::write(&file, line, column, "area") {
                Err(NotChecked::Unchecked(message)) => {
                    assert!(message.contains("`area` is not at line"), "{message}")
                }
                Err(NotChecked::Pending(message)) => panic!("pending: {message}"),
                Ok(_) => panic!("a probe at {line}:{column}"),
            }
        }
        let probe = Probe::write(&file, 0, 4, "area").expect("the name is there");
        let copy = std::fs::read_to_string(&probe.path).expect("the copy");
        assert_eq!(copy, "fun ccRenameProbe_area(side: Int) = side * side\n");
    }
}
