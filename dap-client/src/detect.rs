//! Detection: an adapter is available when a root marker is present AND its binary resolves
//! AND it runs. `launch` needs only the last two (the program itself says which adapter it
//! wants); `adapters` reports all three, and which half is missing.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

use cc_process::is_executable;
use cc_workspace::python::{PythonChoice, PythonQuery};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::adapters::AdapterKind;
use crate::capture::{capture, NotCaptured};
use crate::config::DebugConfig;
use crate::interrupt::Interrupt;

/// How long a "does it run" probe may take (a Python import on a loaded machine is slow).
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Where detection looks: the workspace root and the `PATH` to search.
#[derive(Debug, Clone)]
pub struct Environment {
    /// The workspace root (markers, `.venv`, `venv`).
    pub root: PathBuf,
    /// The `PATH` used to find binaries; adapters are started with it too.
    pub search_path: OsString,
    /// The project's Python as the host configured it (`[lsp.python] interpreter`, relative
    /// to the root or absolute); else [`project_python`] resolves it.
    pub python: Option<PathBuf>,
}

impl Environment {
    /// The root with the process's own `PATH`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Environment {
            root: root.into(),
            search_path: std::env::var_os("PATH").unwrap_or_default(),
            python: None,
        }
    }

    /// Every executable named `name` on the search path, in order.
    pub fn find_all(&self, name: &str) -> Vec<PathBuf> {
        cc_process::find_all_in(name, &self.search_path)
    }

    /// The first executable named `name` on the search path; a name with a slash is a path
    /// (relative to the root).
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        if name.contains('/') {
            let path = self.root.join(name);
            return is_executable(&path).then_some(path);
        }
        self.find_all(name).into_iter().next()
    }

    /// Executables on the search path named `prefix` or `prefix-N` (a version), the plain
    /// name first, then the highest version.
    fn find_versioned(&self, prefix: &str) -> Option<PathBuf> {
        if let Some(plain) = self.find(prefix) {
            return Some(plain);
        }
        let mut best: Option<(u32, PathBuf)> = None;
        for dir in std::env::split_paths(&self.search_path) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(version) = name
                    .to_str()
                    .and_then(|n| n.strip_prefix(prefix)?.strip_prefix('-'))
                    .and_then(|v| v.parse::<u32>().ok())
                else {
                    continue;
                };
                let path = entry.path();
                if is_executable(&path) && best.as_ref().is_none_or(|(v, _)| version > *v) {
                    best = Some((version, path));
                }
            }
        }
        best.map(|(_, path)| path)
    }
}

/// An adapter ready to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedAdapter {
    /// Which adapter.
    pub kind: AdapterKind,
    /// The command line, its program as an absolute path.
    pub command: Vec<String>,
}

/// What `adapters` reports for one adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterStatus {
    /// The table name.
    pub name: String,
    /// Marker found AND binary resolves AND it runs.
    pub available: bool,
    /// Binary resolves AND runs: `launch` can use it even without a marker.
    pub launchable: bool,
    /// The root markers looked for.
    pub markers: Vec<String>,
    /// The markers present at the root.
    pub markers_found: Vec<String>,
    /// The command that starts it, when it resolves.
    pub command: Option<Vec<String>>,
    /// What is missing and how to fix it, when not available.
    pub reason: Option<String>,
}

/// The markers of `kind` (overridden or default).
pub fn markers(kind: AdapterKind, config: &DebugConfig) -> Vec<String> {
    match config.adapter(kind).and_then(|o| o.markers.clone()) {
        Some(markers) => markers,
        None => kind
            .default_markers()
            .iter()
            .map(|m| (*m).to_owned())
            .collect(),
    }
}

/// Detects `kind` for `env`.
pub async fn status(kind: AdapterKind, env: &Environment, config: &DebugConfig) -> AdapterStatus {
    let markers = markers(kind, config);
    let markers_found: Vec<String> = markers
        .iter()
        .filter(|m| env.root.join(m).exists())
        .cloned()
        .collect();
    let resolved = resolve(kind, env, config).await;
    let mut reasons = Vec::new();
    if markers_found.is_empty() {
        reasons.push(format!(
            "no root marker ({}) in the workspace",
            markers.join(", ")
        ));
    }
    if let Err(reason) = &resolved {
        reasons.push(reason.clone());
    }
    let launchable = resolved.is_ok();
    AdapterStatus {
        name: kind.name().to_owned(),
        available: launchable && !markers_found.is_empty(),
        launchable,
        markers,
        markers_found,
        command: resolved.ok().map(|r| r.command),
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
    }
}

/// Finds `kind`'s binary and checks that it runs. The error says which half failed and how
/// to fix it.
pub async fn resolve(
    kind: AdapterKind,
    env: &Environment,
    config: &DebugConfig,
) -> Result<ResolvedAdapter, String> {
    if let Some(command) = config.adapter(kind).and_then(|o| o.command.clone()) {
        return resolve_override(kind, env, command, &config.place).await;
    }
    match kind {
        AdapterKind::Debugpy => {
            let shown = adapter_python(env).await?.display().to_string();
            Ok(ResolvedAdapter {
                kind,
                command: vec![shown, "-m".into(), "debugpy.adapter".into()],
            })
        }
        AdapterKind::Lldb => {
            let binary = env
                .find_versioned("lldb-dap")
                .or_else(|| env.find_versioned("lldb-vscode"))
                .ok_or_else(|| {
                    "no `lldb-dap` (or `lldb-dap-NN`, `lldb-vscode-NN`) on PATH; install LLDB's \
                     DAP server (Debian: `apt install lldb-19`, which provides lldb-dap-19)"
                        .to_owned()
                })?;
            let shown = binary.display().to_string();
            probe(env, &shown, &["--help"])
                .await
                .map_err(|why| format!("`{shown} --help` does not run: {why}"))?;
            Ok(ResolvedAdapter {
                kind,
                command: vec![shown],
            })
        }
        AdapterKind::Delve => {
            let binary = env.find("dlv").ok_or_else(|| {
                "no `dlv` on PATH; install Delve (`go install \
                 github.com/go-delve/delve/cmd/dlv@latest`, or Debian's `delve` package)"
                    .to_owned()
            })?;
            let shown = binary.display().to_string();
            probe(env, &shown, &["version"])
                .await
                .map_err(|why| format!("`{shown} version` does not run: {why}"))?;
            Ok(ResolvedAdapter {
                kind,
                command: vec![shown, "dap".into()],
            })
        }
        AdapterKind::Dart => {
            let binary = env.find("dart").ok_or_else(|| {
                "no `dart` on PATH; install the Dart SDK (https://dart.dev/get-dart)".to_owned()
            })?;
            let shown = binary.display().to_string();
            probe(env, &shown, &["--version"])
                .await
                .map_err(|why| format!("`{shown} --version` does not run: {why}"))?;
            Ok(ResolvedAdapter {
                kind,
                command: vec![shown, "debug_adapter".into()],
            })
        }
    }
}

async fn resolve_override(
    kind: AdapterKind,
    env: &Environment,
    mut command: Vec<String>,
    place: &cc_workspace::SettingsPlace,
) -> Result<ResolvedAdapter, String> {
    let program = command.first().cloned().unwrap_or_default();
    let binary = env.find(&program).ok_or_else(|| {
        format!(
            "`{program}` (the {}) is not an executable on PATH",
            place.setting(Some(kind.name()), "command")
        )
    })?;
    let shown = binary.display().to_string();
    let imports_debugpy = command
        .windows(2)
        .any(|w| w[0] == "-m" && w[1] == "debugpy.adapter");
    let probe_args: &[&str] = match kind {
        AdapterKind::Debugpy if imports_debugpy => &["-c", "import debugpy"],
        AdapterKind::Debugpy | AdapterKind::Lldb => &["--help"],
        AdapterKind::Delve => &["version"],
        AdapterKind::Dart => &["--version"],
    };
    probe(env, &shown, probe_args)
        .await
        .map_err(|why| format!("`{shown} {}` does not run: {why}", probe_args.join(" ")))?;
    command[0] = shown;
    Ok(ResolvedAdapter { kind, command })
}

/// The project's Python, which runs the program, the module or pytest: the one resolution
/// the language servers and kernels share (`cc_workspace::python`: the configured
/// interpreter, an active or in-project environment, pyright's `venv`, else a `python3` on
/// PATH that is not the tools' own environment), with why it was chosen.
pub fn project_python(env: &Environment) -> Result<PythonChoice, String> {
    let mut query = PythonQuery::new(&env.root, &env.root);
    query.configured = env.python.as_deref();
    query.path_var = Some(env.search_path.clone());
    cc_workspace::python::project_python(&query)
}

/// [`project_python`]'s interpreter.
pub fn pick_python(env: &Environment) -> Result<PathBuf, String> {
    project_python(env).map(|choice| choice.path)
}

/// The Python that runs debugpy's adapter: the project's when it can import debugpy, else
/// the first `python3`/`python` on PATH that can (the tools' own environment included: the
/// adapter is a tool, and the program still runs with the project's Python, which debugpy's
/// launcher needs no install in).
async fn adapter_python(env: &Environment) -> Result<PathBuf, String> {
    let project = project_python(env).ok().map(|choice| choice.path);
    let mut candidates: Vec<PathBuf> = project.iter().cloned().collect();
    for name in ["python3", "python"] {
        for found in env.find_all(name) {
            if !candidates.contains(&found) {
                candidates.push(found);
            }
        }
    }
    let mut tried = Vec::new();
    for python in &candidates {
        let shown = python.display().to_string();
        match probe(env, &shown, &["-c", "import debugpy"]).await {
            Ok(()) => return Ok(python.clone()),
            Err(why) => tried.push(format!("`{shown}` ({why})")),
        }
    }
    let install = project
        .as_ref()
        .or(candidates.first())
        .map_or("python3".to_owned(), |p| p.display().to_string());
    Err(format!(
        "no Python here can import debugpy: tried {}; install it with `{install} -m pip install \
         debugpy`",
        if tried.is_empty() {
            "nothing (no python3 or python on PATH)".to_owned()
        } else {
            tried.join(", ")
        }
    ))
}

/// Runs `program args` and succeeds when it exits 0 within [`PROBE_TIMEOUT`].
pub(crate) async fn probe(env: &Environment, program: &str, args: &[&str]) -> Result<(), String> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env("PATH", &env.search_path)
        .current_dir(&env.root);
    let done = capture(command, PROBE_TIMEOUT, &mut Interrupt::never())
        .await
        .map_err(|not| match not {
            NotCaptured::Failed(error) => error,
            NotCaptured::TimedOut | NotCaptured::Interrupted => {
                format!("it did not finish within {}s", PROBE_TIMEOUT.as_secs())
            }
        })?;
    if done.status.success() {
        return Ok(());
    }
    let text = last_line(&done.stderr).or_else(|| last_line(&done.stdout));
    Err(match text {
        Some(line) => format!("{}: {line}", done.status),
        None => done.status.to_string(),
    })
}

fn last_line(bytes: &[u8]) -> Option<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_owned)
}

/// `PATH` without the directories that hold `name` (for tests that need a PATH where some
/// binary is missing).
pub fn path_without(search_path: &OsStr, name: &str) -> OsString {
    let kept: Vec<PathBuf> = std::env::split_paths(search_path)
        .filter(|dir| !is_executable(&dir.join(name)))
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}
