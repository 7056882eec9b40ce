//! How servers are configured for a project: what they report when the project says
//! nothing, and what they may execute on a read-only surface.
//!
//! # Reporting
//!
//! Diagnostics on write report errors and warnings ([`crate::Family::min_severity`]), never
//! hints or "unnecessary" marks ([`crate::Diagnostic::is_noise`]). Which warnings exist is
//! the project's business: a project that configures its checker (requests sets pyright's
//! `typeCheckingMode = "strict"`) gets what it asked for. Without such configuration a server
//! runs its standard rule set, not its strictest: basedpyright's default mode
//! ("recommended") reports `reportUnknownVariableType` and friends as warnings on nearly
//! every line of untyped code, which would bury the one real error, so it is started in
//! pyright's `standard` mode instead.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::detect::Resolved;
use crate::table::ServerSpec;

/// Adjusts `spec`'s settings for the project at `root` (see the module docs, Reporting).
pub(crate) fn adapt_to_project(spec: &mut ServerSpec, root: &Path) {
    let section = match spec.name.as_str() {
        "basedpyright" => "basedpyright",
        "pyright" => "python",
        _ => return,
    };
    if has_pyright_configuration(root) {
        return;
    }
    if !spec.settings.is_object() {
        spec.settings = json!({});
    }
    let analysis = &mut spec.settings[section]["analysis"];
    if !analysis.is_object() {
        *analysis = json!({});
    }
    if analysis.get("typeCheckingMode").is_none() {
        analysis["typeCheckingMode"] = Value::String("standard".into());
    }
}

/// The project's interpreter for a Python server at `root` (see [`use_project_python`]).
pub(crate) fn project_python(
    interpreter: Option<&Path>,
    root: &Path,
    workspace: &Path,
    path_var: &OsStr,
    read_only: bool,
) -> Result<cc_workspace::python::PythonChoice, String> {
    let mut query = cc_workspace::python::PythonQuery::new(root, workspace);
    query.configured = interpreter;
    query.path_var = Some(path_var.to_os_string());
    query.outside_workspace_only = read_only;
    cc_workspace::python::project_python(&query)
}

/// Tells a Python server which interpreter is the project's (`cc_workspace::python`: the
/// configured one, an active or in-project environment, pyright's `venv`, else a `python3` on
/// PATH that is not the tools' own environment; on a read-only surface one outside the
/// workspace). Its search paths then come from that interpreter, and pyright's
/// `autoSearchPaths` stays on, so a `src` layout resolves in its own tests with nothing
/// installed. Returns the choice (for `status`); `Err` when a read-only surface has no
/// interpreter it may give (the server is then not started).
pub(crate) fn use_project_python(
    spec: &mut ServerSpec,
    interpreter: Option<&Path>,
    root: &Path,
    workspace: &Path,
    path_var: &OsStr,
    read_only: bool,
) -> Result<Option<cc_workspace::python::PythonChoice>, Refusal> {
    let section = match spec.name.as_str() {
        "basedpyright" => "basedpyright",
        "pyright" => "python",
        "pylsp" => "pylsp",
        _ => return Ok(None),
    };
    let choice = match project_python(interpreter, root, workspace, path_var, read_only) {
        Ok(choice) => choice,
        Err(why) if read_only => {
            return Err(format!(
                "{} would run the project's own python to read its search paths, and no python3 \
                 outside the workspace is on PATH to give it instead ({why}); a read-only \
                 surface runs no workspace code",
                spec.name
            ))
        }
        // The server finds one itself, as without this.
        Err(_) => return Ok(None),
    };
    let python = choice.path.to_string_lossy().into_owned();
    if section == "pylsp" {
        merge(
            &mut spec.settings,
            &json!({"pylsp": {"plugins": {"jedi": {"environment": python}}}}),
        );
    } else {
        merge(
            &mut spec.settings,
            &json!({"python": {"pythonPath": python}}),
        );
        // Settings sent replace pyright's defaults for what they leave out (an `analysis`
        // section without `autoSearchPaths` turns it off, and `src` is not searched): keep it
        // on, as pyright's CLI does.
        merge(
            &mut spec.settings,
            &json!({(section): {"analysis": {"autoSearchPaths": true}}}),
        );
    }
    Ok(Some(choice))
}

/// Keeps clangd's background index out of the workspace: clangd writes it beside the
/// compilation database (`.cache/clangd/index`), so it is given a copy of the project's
/// `compile_commands.json` in the run's cache (`$XDG_CACHE_HOME/cc/clangd/<root hash>`,
/// `--compile-commands-dir`), whose entries name the project's own files and folders. A
/// change of the project's database takes effect when the server next starts; the folders
/// of roots that no longer exist are removed then too.
pub(crate) fn keep_clangd_index_outside(spec: &mut ServerSpec, root: &Path) {
    if !(spec.name == "clangd" || spec.name.starts_with("clangd-")) {
        return;
    }
    if spec
        .command
        .iter()
        .any(|a| a.starts_with("--compile-commands-dir"))
    {
        return;
    }
    let Some(database) = ["compile_commands.json", "build/compile_commands.json"]
        .iter()
        .map(|name| root.join(name))
        .find(|path| path.is_file())
    else {
        return;
    };
    let cache = cc_workspace::cache_dir().join("clangd");
    sweep_root_caches(&cache);
    if let Some(dir) = clangd_cache_for(&cache, root, &database) {
        spec.command
            .push(format!("--compile-commands-dir={}", dir.display()));
    }
}

/// Keeps intelephense's index cache out of the workspace and apart per root: its
/// `storagePath` is `$XDG_CACHE_HOME/cc/intelephense/<root hash>` (removed with the others
/// of roots that no longer exist), unless the configuration names one.
pub(crate) fn keep_intelephense_storage_outside(spec: &mut ServerSpec, root: &Path) {
    if spec.name != "intelephense" || spec.init_options.get("storagePath").is_some() {
        return;
    }
    let cache = cc_workspace::cache_dir().join("intelephense");
    sweep_root_caches(&cache);
    let Some(dir) = root_cache_dir(&cache, root) else {
        return;
    };
    merge(
        &mut spec.init_options,
        &json!({
            "storagePath": dir.join("storage").to_string_lossy(),
            "globalStoragePath": cache.join("global").to_string_lossy(),
        }),
    );
}

/// `cache/<root hash>`, created, with the root's path recorded in it.
pub(crate) fn root_cache_dir(cache: &Path, root: &Path) -> Option<PathBuf> {
    let hash = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
    let dir = cache.join(format!("{hash:016x}"));
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::write(dir.join(CACHE_ROOT), root.as_os_str().as_encoded_bytes()).ok()?;
    Some(dir)
}

/// The file in a root's cache folder (clangd's, intelephense's) that names the root it
/// belongs to.
const CACHE_ROOT: &str = "root";
/// A cache folder that names no root (made before roots were recorded) is removed when it
/// has not been used for this long.
const CLANGD_CACHE_UNNAMED_AGE: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);
/// Cache folders one sweep looks at, at most (a start stays cheap).
const CLANGD_CACHE_SWEEP: usize = 1000;

/// `cache/<root hash>` with a copy of `database` and the root's path recorded.
fn clangd_cache_for(cache: &Path, root: &Path, database: &Path) -> Option<PathBuf> {
    let dir = root_cache_dir(cache, root)?;
    std::fs::copy(database, dir.join("compile_commands.json")).ok()?;
    Some(dir)
}

/// Removes the cache folders (a database copy and clangd's index, intelephense's storage) of
/// roots that no longer exist: every temporary checkout would otherwise leave one behind for
/// good.
pub(crate) fn sweep_root_caches(cache: &Path) {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return;
    };
    for entry in entries.flatten().take(CLANGD_CACHE_SWEEP) {
        let dir = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let orphan = match std::fs::read(dir.join(CACHE_ROOT)) {
            Ok(bytes) => {
                let root = PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
                !root.exists()
            }
            Err(_) => std::fs::metadata(dir.join("compile_commands.json"))
                .or_else(|_| std::fs::metadata(&dir))
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > CLANGD_CACHE_UNNAMED_AGE),
        };
        if orphan {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Whether pyright will find a configuration of its own for the project at `root`:
/// `pyrightconfig.json`, or a `[tool.pyright]` / `[tool.basedpyright]` table in
/// `pyproject.toml`, in `root` or a folder above it (pyright looks upward too).
pub(crate) fn has_pyright_configuration(root: &Path) -> bool {
    root.ancestors().any(configures_pyright)
}

fn configures_pyright(dir: &Path) -> bool {
    if dir.join("pyrightconfig.json").is_file() {
        return true;
    }
    let Ok(pyproject) = std::fs::read_to_string(dir.join("pyproject.toml")) else {
        return false;
    };
    let Ok(table) = pyproject.parse::<toml::Table>() else {
        // Unreadable: pyright will not read it either.
        return false;
    };
    table
        .get("tool")
        .and_then(toml::Value::as_table)
        .is_some_and(|tool| tool.contains_key("pyright") || tool.contains_key("basedpyright"))
}

/// What an answer of `server` (by name) at `root` cannot cover, when the project lacks what
/// the server needs to see all of it: clangd without a compilation database knows only the
/// files open in it (and guesses their flags).
pub fn answer_limits(server: &str, root: &Path) -> Option<String> {
    let clangd = server == "clangd" || server.starts_with("clangd-");
    let has_database = [
        "compile_commands.json",
        "compile_flags.txt",
        "build/compile_commands.json",
    ]
    .iter()
    .any(|name| root.join(name).is_file());
    (clangd && !has_database).then(|| {
        "no compile_commands.json: clangd knows only the files open in it and guesses their \
         flags, so answers may miss uses in other files; generate one with \
         `cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON` (or `bear -- make`) at the project root"
            .to_owned()
    })
}

// Read-only surfaces ----------------------------------------------------------------------
//
// What each server would run of the workspace's own code, and how a read-only surface
// (`plan`, `readonly_subagent`, [`crate::Trust::ReadOnly`]) prevents it:
//
// | server | workspace code it may run | on a read-only surface |
// |---|---|---|
// | rust-analyzer | build scripts and proc macros (`cargo check` on save runs them too) | both off, no check on save |
// | basedpyright, pyright | the project's `.venv`/`venv` python, to read its search paths | told a python outside the workspace |
// | pylsp (jedi) | the same | told a python outside the workspace |
// | typescript-language-server | the project's `node_modules/typescript` (tsserver) | told the tsserver installed beside it |
// | gopls | `go` with a `toolchain` line may fetch and run another toolchain; cgo runs the C compiler and `pkg-config` | `GOTOOLCHAIN=local`, `CGO_ENABLED=0` |
// | clangd | a compiler named in `compile_commands.json`, only with `--query-driver` (not given) | as is |
// | bash-language-server | shellcheck (installed, not the workspace's) | as is |
// | intelephense | none: it reads PHP files (composer's scripts are never run) | as is |
// | jdtls | Gradle and Maven imports run build scripts and fetch from the network: always off (its project is made from the sources' package lines) | as is |
// | dart | analyzer plugins named by the project | refused |
//
// A server binary found inside the workspace is the workspace's code: refused.

/// Why a server cannot start on a read-only surface, as a sentence for the agent.
pub(crate) type Refusal = String;

/// Makes `resolved` run no workspace code (see the table above), or says why it cannot.
pub(crate) fn restrict(resolved: &mut Resolved, workspace: &Path) -> Result<(), Refusal> {
    let name = resolved.spec.name.clone();
    let binary = resolved
        .binary
        .canonicalize()
        .unwrap_or_else(|_| resolved.binary.clone());
    if binary.starts_with(workspace) {
        return Err(format!(
            "{name} resolves to {}, inside the workspace: a read-only surface runs no workspace              code; install it outside the workspace, or use the full surface",
            binary.display()
        ));
    }
    let spec = &mut resolved.spec;
    match name.as_str() {
        "rust-analyzer" => {
            let safe = json!({
                "cargo": {"buildScripts": {"enable": false}},
                "procMacro": {"enable": false},
                "checkOnSave": false,
            });
            merge(&mut spec.init_options, &safe);
            merge(&mut spec.settings, &json!({"rust-analyzer": safe}));
            // No check on save: nothing to wait for after one.
            spec.check_progress = None;
        }
        "typescript-language-server" => {
            let tsserver = bundled_tsserver(&binary).ok_or_else(|| {
                format!(
                    "typescript-language-server would use the project's node_modules/typescript,                      and no TypeScript is installed beside {} to give it instead; a read-only                      surface runs no workspace code",
                    binary.display()
                )
            })?;
            merge(
                &mut spec.init_options,
                &json!({"tsserver": {"path": tsserver.to_string_lossy()}}),
            );
        }
        "gopls" => {
            spec.env.push(("GOTOOLCHAIN".into(), "local".into()));
            spec.env.push(("CGO_ENABLED".into(), "0".into()));
        }
        "dart" => {
            return Err(
                "the Dart analysis server runs the analyzer plugins a project names; a read-only                  surface runs no workspace code, so it is not started there"
                    .into(),
            )
        }
        _ => {}
    }
    Ok(())
}

/// Deep-merges `extra` into `target` (objects merge, anything else is replaced).
pub(crate) fn merge(target: &mut Value, extra: &Value) {
    match (target, extra) {
        (Value::Object(target), Value::Object(extra)) => {
            for (key, value) in extra {
                merge(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (target, extra) => *target = extra.clone(),
    }
}

/// The `tsserver.js` of the TypeScript installed beside typescript-language-server (its
/// `node_modules`), when there is one.
fn bundled_tsserver(binary: &Path) -> Option<PathBuf> {
    binary
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|n| n == "node_modules"))
        .map(|modules| modules.join("typescript").join("lib").join("tsserver.js"))
        .filter(|tsserver| tsserver.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: every temporary root left a clangd cache folder behind for good; a start
    /// now removes those of roots that are gone, and keeps the others.
    #[test]
    fn clangd_caches_of_vanished_roots_are_removed() {
        let cache = tempfile::tempdir().unwrap();
        let live = tempfile::tempdir().unwrap();
        let gone = tempfile::tempdir().unwrap();
        for root in [live.path(), gone.path()] {
            std::fs::write(root.join("compile_commands.json"), "[]").unwrap();
        }
        let live_dir = clangd_cache_for(
            cache.path(),
            live.path(),
            &live.path().join("compile_commands.json"),
        )
        .unwrap();
        let gone_dir = clangd_cache_for(
            cache.path(),
            gone.path(),
            &gone.path().join("compile_commands.json"),
        )
        .unwrap();
        std::fs::create_dir_all(gone_dir.join(".cache/clangd/index")).unwrap();
        let unnamed_recent = cache.path().join("0000000000000001");
        std::fs::create_dir_all(&unnamed_recent).unwrap();
        drop(gone);
        sweep_root_caches(cache.path());
        assert!(live_dir.join("compile_commands.json").is_file());
        assert!(!gone_dir.exists());
        assert!(
            unnamed_recent.exists(),
            "a recent folder without a root is kept"
        );
        assert_eq!(
            std::fs::read(live_dir.join(CACHE_ROOT)).unwrap(),
            live.path().as_os_str().as_encoded_bytes()
        );
    }

    #[test]
    fn standard_mode_only_without_project_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = ServerSpec::new("basedpyright", &["basedpyright-langserver"], &[]);
        spec.settings = json!({"basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly"}}});
        let mut adapted = spec.clone();
        adapt_to_project(&mut adapted, dir.path());
        assert_eq!(
            adapted.settings["basedpyright"]["analysis"],
            json!({"diagnosticMode": "openFilesOnly", "typeCheckingMode": "standard"})
        );

        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\nname = 'x'\n[tool.pyright]\ntypeCheckingMode = 'strict'\n",
        )
        .unwrap();
        let mut configured = spec.clone();
        adapt_to_project(&mut configured, dir.path());
        assert_eq!(configured.settings, spec.settings);

        let mut other = ServerSpec::new("pylsp", &["pylsp"], &[]);
        adapt_to_project(&mut other, dir.path());
        assert_eq!(other.settings, Value::Null);
    }

    #[test]
    fn merging_keeps_what_is_there() {
        let mut target = json!({"a": {"b": 1, "c": 2}, "d": 3});
        merge(&mut target, &json!({"a": {"c": 4, "e": 5}}));
        assert_eq!(target, json!({"a": {"b": 1, "c": 4, "e": 5}, "d": 3}));
        let mut null = Value::Null;
        merge(&mut null, &json!({"x": 1}));
        assert_eq!(null, json!({"x": 1}));
    }
}
