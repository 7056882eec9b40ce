//! Deciding what to run for a project check: which checker of the family is installed, where
//! its program is, and which files it is given.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{CheckerError, Format};
use crate::detect::binaries_named;
use crate::table::{Family, ServerSpec};
use cc_workspace::SettingsPlace;

/// At most this many files are given to a checker that needs a file list.
const MAX_FILES: usize = 500;
/// Files a configuration leaves out that a pyright-family checker checks anyway, at most.
const MAX_EXTRA_FILES: usize = 300;
const C_SOURCES: &[&str] = &["c", "cc", "cpp", "cxx", "c++"];
const TS_SOURCES: &[&str] = &["ts", "tsx", "mts", "cts"];
const PHP_SOURCES: &[&str] = &["php", "phtml"];

/// A resolved checker run: the program, one argument list per process to start, and how to
/// read what it prints.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub family: String,
    pub root: PathBuf,
    pub program: PathBuf,
    pub invocations: Vec<Vec<String>>,
    pub env: Vec<(String, String)>,
    pub format: Format,
    pub timeout: Duration,
    /// The setting that raises `timeout`, and where it is.
    pub timeout_setting: String,
    pub shown: String,
    pub note: Option<String>,
    /// Files of the project its configuration leaves out and that were not checked anyway.
    pub left_out: Vec<super::scope::LeftOut>,
    /// Checkers of the same project run after this one, their findings merged (kotlinc for
    /// the Kotlin files of a Java project).
    pub also: Vec<Plan>,
}

/// What to run for `family` at `root` (inside `workspace`). With `read_only`, the project's own tool folders (`node_modules/.bin`, `.venv/bin`) are
/// not looked in: a read-only surface runs no workspace code.
pub(crate) fn plan(
    family: &Family,
    settings: &SettingsPlace,
    root: &Path,
    workspace: &Path,
    path_var: &OsStr,
    read_only: bool,
) -> Result<Plan, CheckerError> {
    let site = Site {
        family,
        settings,
        root,
        workspace,
        path_var,
        read_only,
    };
    let Chosen {
        spec,
        command,
        program,
        note,
    } = site.choose()?;
    let format = Format::for_program(&command[0]);
    let mut base: Vec<String> = command[1..].to_vec();
    let mut outside_scope = Vec::new();
    if format == Format::CargoJson {
        base.extend(cargo_feature_args(&spec.settings));
        // What the features and cfgs leave uncompiled: listed, since cargo says nothing.
        let choice = super::cargo_scope::FeatureChoice::from_args(&base);
        outside_scope = super::cargo_scope::cargo_left_out(root, &choice);
    }
    let name = file_name(&program);
    let mut draft = Draft {
        invocations: vec![base.clone()],
        shown: std::iter::once(name.clone())
            .chain(base.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
        base,
        note,
        outside_scope,
        also: Vec::new(),
    };
    if format == Format::PyrightJson {
        site.check_pyright_left_out(&mut draft);
    }
    if format == Format::Tsc && root.join("tsconfig.json").exists() {
        let (files, _) = sources(root, TS_SOURCES);
        draft
            .outside_scope
            .extend(super::scope::tsconfig_left_out(root, &files));
    }
    if let Some(kotlin_only) = site.list_files(&mut draft, format, &command, spec)? {
        return Ok(kotlin_only);
    }
    Ok(Plan {
        family: family.name.clone(),
        root: root.to_path_buf(),
        program,
        invocations: draft.invocations,
        env: spec.env.clone(),
        format,
        timeout: spec.checker_timeout,
        timeout_setting: site.timeout_setting(),
        shown: draft.shown,
        note: draft.note,
        left_out: draft.outside_scope,
        also: draft.also,
    })
}

/// The project a plan is made for: what every phase of [`plan`] reads.
struct Site<'a> {
    family: &'a Family,
    /// Where the host keeps the settings the messages point at.
    settings: &'a SettingsPlace,
    root: &'a Path,
    workspace: &'a Path,
    path_var: &'a OsStr,
    read_only: bool,
}

/// The checker picked: its server's entry, its command, its program, and a note when it
/// stands in for the one configured.
struct Chosen<'a> {
    spec: &'a ServerSpec,
    command: Vec<String>,
    program: PathBuf,
    note: Option<String>,
}

/// A plan in the making: each phase adds files, arguments and notes to it.
struct Draft {
    /// The configured arguments, before any file.
    base: Vec<String>,
    invocations: Vec<Vec<String>>,
    shown: String,
    note: Option<String>,
    outside_scope: Vec<super::scope::LeftOut>,
    /// Checkers of the same project run after this one (kotlinc after javac).
    also: Vec<Plan>,
}

impl<'a> Site<'a> {
    /// The setting that raises the checker's time budget, and where it is.
    fn timeout_setting(&self) -> String {
        self.settings
            .setting(Some(&self.family.name), "checker_timeout_secs")
    }

    /// The first configured checker that is installed, else a compiler standing in for a
    /// missing clang-tidy; why none, when neither.
    fn choose(&self) -> Result<Chosen<'a>, CheckerError> {
        let family = self.family;
        let configured: Vec<_> = family
            .servers
            .iter()
            .filter_map(|spec| Some((spec, spec.checker.as_ref().filter(|c| !c.is_empty())?)))
            .collect();
        let Some((first_spec, first_command)) = configured.first() else {
            return Err(CheckerError::not_configured(&family.name, self.settings));
        };
        let mut chosen = None;
        for (spec, command) in &configured {
            if let Some(program) = find_program(
                &command[0],
                self.root,
                self.workspace,
                self.path_var,
                spec,
                self.read_only,
            ) {
                chosen = Some(Chosen {
                    spec,
                    command: (*command).clone(),
                    program,
                    note: None,
                });
                break;
            }
        }
        // No clang-tidy: the compiler's own syntax check still finds the errors.
        if chosen.is_none() && is_clang_tidy(&first_command[0]) {
            let compiler = ["gcc", "cc", "clang"].into_iter().find_map(|name| {
                binaries_named(name, false, self.path_var)
                    .into_iter()
                    .next()
            });
            if let Some(compiler) = compiler {
                let note = format!(
                    "`{}` is not installed; the files were compiled with `{} -fsyntax-only` instead \
                     (install clang-tidy for its checks)",
                    first_command[0],
                    file_name(&compiler)
                );
                chosen = Some(Chosen {
                    spec: first_spec,
                    command: vec![file_name(&compiler), "-fsyntax-only".into()],
                    program: compiler,
                    note: Some(note),
                });
            }
        }
        chosen.ok_or_else(|| CheckerError::Missing {
            family: family.name.clone(),
            program: first_command[0].clone(),
            hint: install_hint(&first_command[0], &family.name, self.settings),
        })
    }

    /// The Python files `include`/`exclude` leave out, added as a second run (up to
    /// [`MAX_EXTRA_FILES`]); the rest are listed as left out.
    fn check_pyright_left_out(&self, draft: &mut Draft) {
        let root = self.root;
        // What `include`/`exclude` leave out (tests, usually) is checked too: files named on
        // the command line are checked whatever `include` says.
        let (files, _) = sources(root, &["py", "pyi"]);
        if let Some(left) = super::scope::pyright_left_out(root, &files) {
            let checked: Vec<PathBuf> = left.files.iter().take(MAX_EXTRA_FILES).cloned().collect();
            draft.note = Some(format!(
                "{} file(s) {} were checked too",
                checked.len(),
                left.reason
            ));
            draft.invocations.push(
                draft
                    .base
                    .iter()
                    .cloned()
                    .chain(strings(&checked))
                    .collect(),
            );
            if left.files.len() > checked.len() {
                draft.outside_scope.push(super::scope::LeftOut {
                    files: left.files[checked.len()..].to_vec(),
                    reason: format!("{} (beyond the {MAX_EXTRA_FILES} checked too)", left.reason),
                });
            }
        }
    }

    /// For the checkers that are given files rather than a project, the files to give them.
    /// A Java family with only Kotlin files returns the `kotlinc` plan to run instead.
    fn list_files(
        &self,
        draft: &mut Draft,
        format: Format,
        command: &[String],
        spec: &ServerSpec,
    ) -> Result<Option<Plan>, CheckerError> {
        if format == Format::Tsc && !self.root.join("tsconfig.json").exists() {
            self.list_ts_files(draft)?;
        } else if is_clang_tidy(&command[0]) {
            self.list_clang_tidy_files(draft)?;
        } else if format == Format::PhpLint {
            self.list_php_files(draft)?;
        } else if format == Format::Javac {
            return self.list_java_files(draft, spec);
        } else if format == Format::Gcc
            && command.get(1).map(String::as_str) == Some("-fsyntax-only")
        {
            self.list_compiler_files(draft)?;
        }
        Ok(None)
    }

    /// `tsc` without a tsconfig.json: every TypeScript file, checked with the default options.
    fn list_ts_files(&self, draft: &mut Draft) -> Result<(), CheckerError> {
        let (root, workspace) = (self.root, self.workspace);
        let (files, total) = sources(root, TS_SOURCES);
        if files.is_empty() {
            return Err(CheckerError::NothingToCheck {
                family: self.family.name.clone(),
                detail: format!(
                    "no tsconfig.json and no TypeScript files in `{}`; add a tsconfig.json \
                     (`tsc --init`) to say what to check",
                    shown_dir(root, workspace)
                ),
            });
        }
        draft.note = Some(format!(
            "no tsconfig.json in `{}`: tsc checked {} file(s) with its default options{}",
            shown_dir(root, workspace),
            files.len(),
            left_out(total, files.len())
        ));
        draft.shown.push_str(&count_files(files.len()));
        draft.invocations = vec![draft.base.iter().cloned().chain(strings(&files)).collect()];
        Ok(())
    }

    /// clang-tidy over the C/C++ files, with the compilation database when there is one.
    fn list_clang_tidy_files(&self, draft: &mut Draft) -> Result<(), CheckerError> {
        let root = self.root;
        let (files, total, database) = c_sources(root);
        if files.is_empty() {
            return Err(nothing_in_c(self.family, root, self.workspace));
        }
        let mut args = draft.base.clone();
        if database {
            args.push("-p".into());
            args.push(root.to_string_lossy().into_owned());
        }
        args.extend(strings(&files));
        if !database {
            // Without `--`, clang-tidy looks for a compilation database and complains.
            args.push("--".into());
        }
        draft.shown.push_str(&count_files(files.len()));
        if let Some(checked) = checked_note(files.len(), total) {
            draft.note = Some(checked);
        }
        draft.invocations = vec![args];
        Ok(())
    }

    /// `php -l`: one process per PHP file.
    fn list_php_files(&self, draft: &mut Draft) -> Result<(), CheckerError> {
        // `php -l` checks one file per process (before PHP 8.3 it reads only the first named).
        let (files, total) = sources(self.root, PHP_SOURCES);
        if files.is_empty() {
            return Err(CheckerError::NothingToCheck {
                family: self.family.name.clone(),
                detail: format!("no PHP files in `{}`", shown_dir(self.root, self.workspace)),
            });
        }
        draft.shown.push_str(&count_files(files.len()));
        if let Some(checked) = checked_note(files.len(), total) {
            draft.note = Some(checked);
        }
        draft.invocations = files
            .iter()
            .map(|file| {
                let mut args = draft.base.clone();
                args.push(file.to_string_lossy().into_owned());
                args
            })
            .collect();
        Ok(())
    }

    /// `javac` over the Java files, with `kotlinc` after it for the Kotlin ones; the
    /// `kotlinc` plan alone when there is no Java file.
    fn list_java_files(
        &self,
        draft: &mut Draft,
        spec: &ServerSpec,
    ) -> Result<Option<Plan>, CheckerError> {
        let (family, root, workspace) = (self.family, self.root, self.workspace);
        // Every Java file of the project, its packages found through the source roots; the
        // classes go to the cache, never into the tree. Kotlin files go to `kotlinc`.
        let (files, total) = sources(root, &["java"]);
        let (kotlin_files, _) = sources(root, &["kt"]);
        if files.is_empty() && kotlin_files.is_empty() {
            return Err(CheckerError::NothingToCheck {
                family: family.name.clone(),
                detail: format!(
                    "no Java or Kotlin files in `{}`",
                    shown_dir(root, workspace)
                ),
            });
        }
        let kotlin = if kotlin_files.is_empty() {
            None
        } else {
            Some(kotlin_plan(self, spec, &kotlin_files, &files))
        };
        if files.is_empty() {
            return match kotlin {
                Some(Ok(plan)) => Ok(Some(plan)),
                _ => Err(CheckerError::Missing {
                    family: family.name.clone(),
                    program: "kotlinc".into(),
                    hint: install_hint("kotlinc", &family.name, self.settings),
                }),
            };
        }
        let roots = crate::jdtls::source_roots(root);
        let mut args = draft.base.clone();
        args.push("-d".into());
        args.push(output_dir("javac", root).to_string_lossy().into_owned());
        if !roots.is_empty() {
            let joined = std::env::join_paths(&roots).unwrap_or_default();
            args.push("-sourcepath".into());
            args.push(joined.to_string_lossy().into_owned());
        }
        args.extend(strings(&files));
        draft.shown.push_str(&count_files(files.len()));
        if let Some(checked) = checked_note(files.len(), total) {
            draft.note = Some(checked);
        }
        draft.invocations = vec![args];
        match kotlin {
            Some(Ok(plan)) => draft.also.push(plan),
            Some(Err(why)) => {
                draft.note = Some(match draft.note.take() {
                    Some(note) => format!("{note}; {why}"),
                    None => why,
                })
            }
            None => {}
        }
        Ok(None)
    }

    /// A compiler's `-fsyntax-only`: one process per C/C++ file, with its database flags.
    fn list_compiler_files(&self, draft: &mut Draft) -> Result<(), CheckerError> {
        let root = self.root;
        // A compiler checks one file per process, with that file's flags from the database.
        let (files, total, _) = c_sources(root);
        if files.is_empty() {
            return Err(nothing_in_c(self.family, root, self.workspace));
        }
        let flags = database(root);
        draft.invocations = files
            .iter()
            .map(|file| {
                let mut args = draft.base.clone();
                args.extend(flags_for(&flags, file));
                args.push(file.to_string_lossy().into_owned());
                args
            })
            .collect();
        draft.shown.push_str(&count_files(files.len()));
        if let Some(more) = checked_note(files.len(), total) {
            draft.note = Some(match draft.note.take() {
                Some(note) => format!("{note}; {more}"),
                None => more,
            });
        }
        Ok(())
    }
}

/// Where a compiler run as a checker puts its output: the cache, never the tree.
pub(crate) fn output_dir(compiler: &str, root: &Path) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
    cc_workspace::cache_dir().join(format!("{compiler}/{hash:016x}"))
}

/// `kotlinc` over the Kotlin files of `root` (with its Java files, which Kotlin code may
/// use), or why the Kotlin files are not checked.
fn kotlin_plan(
    site: &Site,
    spec: &ServerSpec,
    kotlin_files: &[PathBuf],
    java_files: &[PathBuf],
) -> Result<Plan, String> {
    let (family, root) = (site.family, site.root);
    let Some(program) = find_program(
        "kotlinc",
        root,
        site.workspace,
        site.path_var,
        spec,
        site.read_only,
    ) else {
        return Err(format!(
            "{} Kotlin file(s) were not checked: `kotlinc` is not installed ({})",
            kotlin_files.len(),
            install_hint("kotlinc", &family.name, site.settings)
        ));
    };
    let mut args = vec![
        "-d".to_owned(),
        output_dir("kotlinc", root).to_string_lossy().into_owned(),
        "-nowarn".to_owned(),
    ];
    args.extend(strings(kotlin_files));
    args.extend(strings(java_files));
    Ok(Plan {
        family: family.name.clone(),
        root: root.to_path_buf(),
        shown: format!("kotlinc -nowarn{}", count_files(kotlin_files.len())),
        program,
        invocations: vec![args],
        env: spec.env.clone(),
        format: Format::Gcc,
        timeout: spec.checker_timeout,
        timeout_setting: site.timeout_setting(),
        note: None,
        left_out: Vec::new(),
        also: Vec::new(),
    })
}

/// The features rust-analyzer is configured with (`[lsp.rust] settings = {rust-analyzer =
/// {cargo = {features = [...]}}}`, or `"all"`, and `noDefaultFeatures`), for `cargo check`
/// to check what the server checks.
fn cargo_feature_args(settings: &serde_json::Value) -> Vec<String> {
    let cargo = &settings["rust-analyzer"]["cargo"];
    let mut args = Vec::new();
    match &cargo["features"] {
        serde_json::Value::String(all) if all == "all" => args.push("--all-features".into()),
        serde_json::Value::Array(features) => {
            let names: Vec<&str> = features.iter().filter_map(|f| f.as_str()).collect();
            if !names.is_empty() {
                args.push("--features".into());
                args.push(names.join(","));
            }
        }
        _ => {}
    }
    if cargo["noDefaultFeatures"].as_bool() == Some(true) {
        args.push("--no-default-features".into());
    }
    args
}

fn nothing_in_c(family: &Family, root: &Path, workspace: &Path) -> CheckerError {
    CheckerError::NothingToCheck {
        family: family.name.clone(),
        detail: format!(
            "no C or C++ source files ({}) in `{}`",
            C_SOURCES
                .iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(", "),
            shown_dir(root, workspace)
        ),
    }
}

/// ` (1 file)`, ` (3 files)`.
fn count_files(count: usize) -> String {
    if count == 1 {
        " (1 file)".into()
    } else {
        format!(" ({count} files)")
    }
}

fn left_out(total: usize, kept: usize) -> String {
    if total > kept {
        format!(" (the first {kept} of {total}; the rest were left out)")
    } else {
        String::new()
    }
}

fn strings(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
        .into_owned()
}

fn shown_dir(root: &Path, workspace: &Path) -> String {
    match root.strip_prefix(workspace) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".into(),
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => root.to_string_lossy().into_owned(),
    }
}

fn is_clang_tidy(program: &str) -> bool {
    file_name(Path::new(program)).starts_with("clang-tidy")
}

/// The checker's program: a path as given (relative to the root), else the project's own
/// tool folders from the root up to the workspace, else PATH (with `NAME-NN` versions for
/// clang-tidy).
pub(crate) fn find_program(
    program: &str,
    root: &Path,
    workspace: &Path,
    path_var: &OsStr,
    spec: &crate::table::ServerSpec,
    read_only: bool,
) -> Option<PathBuf> {
    if program.contains('/') {
        let path = root.join(program);
        return path.is_file().then_some(path);
    }
    for dir in root.ancestors() {
        if read_only || !dir.starts_with(workspace) {
            break;
        }
        for local in ["node_modules/.bin", ".venv/bin", "venv/bin"] {
            let candidate = dir.join(local).join(program);
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    let versioned = spec.versioned_binaries || is_clang_tidy(program);
    binaries_named(program, versioned, path_var)
        .into_iter()
        .next()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// How to install `program`, for a message that says it is missing.
pub(crate) fn install_how(program: &str) -> &'static str {
    match file_name(Path::new(program)).as_str() {
        "basedpyright" => "install it with `pip install basedpyright` (or `uv tool install basedpyright`)",
        "pyright" => "install it with `pip install pyright` or `npm install -g pyright`",
        "tsc" => "install TypeScript in the project with `npm install --save-dev typescript` (or globally with `npm install -g typescript`)",
        "cargo" => "install Rust with rustup (https://rustup.rs)",
        "go" => "install Go (https://go.dev/dl, or `apt install golang-go`)",
        "php" => "install the PHP command line with `apt install php-cli`",
        "javac" => "install a JDK with `apt install openjdk-17-jdk-headless`",
        "kotlinc" => "install JetBrains' Kotlin compiler with `npm install -g kotlin-compiler` (it needs a Java runtime)",
        name if name.starts_with("clang-tidy") => {
            "install it with `apt install clang-tidy` (no C compiler was found to fall back on either)"
        }
        _ => "install it",
    }
}

/// How to install `program`, or which setting names another checker for `family`.
pub(crate) fn install_hint(program: &str, family: &str, settings: &SettingsPlace) -> String {
    format!(
        "{}; or set another checker with {}",
        install_how(program),
        settings.setting(Some(family), "checker = [...]")
    )
}

/// "checked N (M left out …)" when the file list was cut at [`MAX_FILES`].
fn checked_note(checked: usize, total: usize) -> Option<String> {
    (total > checked).then(|| format!("checked {checked}{}", left_out(total, checked)))
}

/// Source files with one of `extensions` under `root`, sorted, at most [`MAX_FILES`];
/// also the total found.
fn sources(root: &Path, extensions: &[&str]) -> (Vec<PathBuf>, usize) {
    let mut found: Vec<PathBuf> = cc_workspace::walk::Walk::new(root)
        .extensions(extensions)
        .limit(200_000)
        .files()
        .map(|entry| entry.path)
        .collect();
    let total = found.len();
    found.truncate(MAX_FILES);
    (found, total)
}

/// The C/C++ files to check: those of `compile_commands.json` when there is one (and then
/// `true`), else every source file under the root.
fn c_sources(root: &Path) -> (Vec<PathBuf>, usize, bool) {
    let entries = database(root);
    if !entries.is_empty() {
        let mut files: Vec<PathBuf> = Vec::new();
        for (file, _) in entries {
            if !files.contains(&file) {
                files.push(file);
            }
        }
        let total = files.len();
        files.truncate(MAX_FILES);
        return (files, total, true);
    }
    let (files, total) = sources(root, C_SOURCES);
    let has_flags_file = root.join("compile_flags.txt").exists();
    (files, total, has_flags_file)
}

/// `compile_commands.json`: each entry's absolute file and its arguments.
fn database(root: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let Ok(text) = std::fs::read_to_string(root.join("compile_commands.json")) else {
        return Vec::new();
    };
    let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|entry| {
            let dir = entry
                .get("directory")
                .and_then(Value::as_str)
                .map_or_else(|| root.to_path_buf(), PathBuf::from);
            let file = dir.join(entry.get("file")?.as_str()?);
            let args = match entry.get("arguments").and_then(Value::as_array) {
                Some(args) => args
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                None => split_command(entry.get("command")?.as_str()?),
            };
            Some((file, absolutize_includes(args, &dir)))
        })
        .collect()
}

/// The flags that matter for a syntax check (`-I`, `-D`, `-U`, `-std=`, `-isystem`,
/// `-include`) of `file`'s database entry.
fn flags_for(entries: &[(PathBuf, Vec<String>)], file: &Path) -> Vec<String> {
    let Some((_, args)) = entries.iter().find(|(f, _)| f == file) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        if matches!(arg.as_str(), "-I" | "-D" | "-U" | "-isystem" | "-include") {
            if let Some(value) = iter.next() {
                out.push(arg.clone());
                out.push(value.clone());
            }
        } else if ["-I", "-D", "-U", "-std="]
            .iter()
            .any(|prefix| arg.starts_with(prefix))
        {
            out.push(arg.clone());
        }
    }
    out
}

/// `-Iinclude` of an entry is relative to its `directory`.
fn absolutize_includes(args: Vec<String>, dir: &Path) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_flag = false;
    for arg in args {
        if after_flag && !Path::new(&arg).is_absolute() {
            out.push(dir.join(&arg).to_string_lossy().into_owned());
        } else if let Some(rest) = arg.strip_prefix("-I").filter(|r| !r.is_empty()) {
            if Path::new(rest).is_absolute() {
                out.push(arg.clone());
            } else {
                out.push(format!("-I{}", dir.join(rest).display()));
            }
        } else {
            out.push(arg.clone());
        }
        after_flag = arg == "-I" || arg == "-isystem";
    }
    out
}

/// Splits a shell command line on whitespace, honouring simple quotes and backslashes.
fn split_command(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    let mut started = false;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (q, '\\') if q != Some('\'') => {
                if let Some(next) = chars.next() {
                    current.push(next);
                    started = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            (_, c) => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_entries_and_their_flags() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("compile_commands.json"),
            format!(
                r#"[{{"directory": "{0}", "file": "a.c", "command": "cc -c -Iinc -D X=\"a b\" -std=c11 -o a.o a.c"}},
                   {{"directory": "{0}", "file": "b.c", "arguments": ["cc", "-isystem", "sys", "-c", "b.c"]}}]"#,
                root.display()
            ),
        )
        .unwrap();
        let (files, total, has_database) = c_sources(root);
        assert!(has_database);
        assert_eq!(total, 2);
        assert_eq!(files, [root.join("a.c"), root.join("b.c")]);
        let entries = database(root);
        assert_eq!(
            flags_for(&entries, &root.join("a.c")),
            [
                format!("-I{}", root.join("inc").display()),
                "-D".into(),
                "X=a b".into(),
                "-std=c11".into()
            ]
        );
        assert_eq!(
            flags_for(&entries, &root.join("b.c")),
            [
                "-isystem".to_owned(),
                root.join("sys").display().to_string()
            ]
        );
    }

    #[test]
    fn sources_skip_dependency_folders() {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "a.ts",
            "src/b.tsx",
            "node_modules/x/c.ts",
            ".git/d.ts",
            "e.js",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let (files, total) = sources(dir.path(), TS_SOURCES);
        assert_eq!(total, 2);
        assert_eq!(
            files,
            [dir.path().join("a.ts"), dir.path().join("src/b.tsx")]
        );
    }

    #[test]
    fn cargo_checks_the_features_rust_analyzer_is_given() {
        let settings = serde_json::json!({"rust-analyzer": {"cargo": {"features": ["serde", "kv"], "noDefaultFeatures": true}}});
        assert_eq!(
            cargo_feature_args(&settings),
            ["--features", "serde,kv", "--no-default-features"]
        );
        let all = serde_json::json!({"rust-analyzer": {"cargo": {"features": "all"}}});
        assert_eq!(cargo_feature_args(&all), ["--all-features"]);
        assert!(cargo_feature_args(&serde_json::Value::Null).is_empty());
    }

    #[test]
    fn a_missing_checker_says_how_to_install_it() {
        let table = crate::ServerTable::builtin();
        let dir = tempfile::tempdir().unwrap();
        let error = plan(
            table.family("python").unwrap(),
            &table.place,
            dir.path(),
            dir.path(),
            OsStr::new("/nonexistent"),
            false,
        )
        .unwrap_err();
        let text = error.to_string();
        assert!(text.contains("`basedpyright` is not installed"), "{text}");
        assert!(text.contains("pip install basedpyright"), "{text}");
        assert_eq!(error.kind(), "checker_missing");
        let error = plan(
            table.family("bash").unwrap(),
            &table.place,
            dir.path(),
            dir.path(),
            OsStr::new("/nonexistent"),
            false,
        )
        .unwrap_err();
        assert!(error.to_string().contains("[lsp.bash] checker"), "{error}");
    }
}
