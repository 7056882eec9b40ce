//! The project's Python: one resolution, used alike by the language servers, the project
//! checker, the debugger and the kernels, so they never disagree about which interpreter (and
//! so which installed packages) the project means.
//!
//! In order, the first that exists:
//! 1. the interpreter the host configured (`[lsp.python] interpreter`, relative to the
//!    workspace root);
//! 2. `VIRTUAL_ENV`, when it lies inside the workspace (an environment the agent activated
//!    for this project; one outside is someone else's);
//! 3. pyright's `venvPath` + `venv` (`pyrightconfig.json`, `[tool.pyright]` or
//!    `[tool.basedpyright]` in `pyproject.toml`), in the project root or a folder above it
//!    inside the workspace;
//! 4. a `.venv` or `venv` environment (a folder with `pyvenv.cfg`: uv, poetry, pdm and hatch
//!    in-project environments are `.venv`) in the project root or a folder above it inside the
//!    workspace;
//! 5. `python3` (then `python`) on PATH — skipping a tools' environment: a virtualenv whose
//!    folder holds [`TOOL_ENVIRONMENT_MARKER`] (`cargo xtask peers` marks the peers' venv so),
//!    whose packages are the harness's, not the project's.
//!
//! Every choice says why ([`PythonChoice::why`]), for `status` and the answers that depend
//! on it.
//!
//! ```
//! use cc_workspace::python::{project_python, PythonQuery};
//!
//! let dir = tempfile::tempdir()?;
//! let root = dir.path().canonicalize()?;
//! std::fs::create_dir_all(root.join(".venv/bin"))?;
//! std::fs::write(root.join(".venv/pyvenv.cfg"), "home = /usr/bin\n")?;
//! std::fs::write(root.join(".venv/bin/python"), "")?;
//! let choice = project_python(&PythonQuery::new(&root, &root)).unwrap();
//! assert_eq!(choice.path, root.join(".venv/bin/python"));
//! assert!(choice.why.contains(".venv"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// A file in a virtualenv's folder that marks it as a tools' environment (the harness's
/// peers), never a project's.
pub const TOOL_ENVIRONMENT_MARKER: &str = "cc-tool-environment";

/// The interpreter chosen, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonChoice {
    /// The interpreter.
    pub path: PathBuf,
    /// One phrase: "the workspace's .venv", "VIRTUAL_ENV (…)", "python3 on PATH", ….
    pub why: String,
    /// The environment's folder, when it is a virtualenv.
    pub environment: Option<PathBuf>,
}

/// What the resolution looks at.
#[derive(Debug, Clone)]
pub struct PythonQuery<'a> {
    /// The project root (the folder with `pyproject.toml`, …).
    pub project: &'a Path,
    /// The workspace root: nothing above it is the project's.
    pub workspace: &'a Path,
    /// The host's `[lsp.python] interpreter` (relative to the workspace root, or absolute).
    pub configured: Option<&'a Path>,
    /// `VIRTUAL_ENV` (default: this process's).
    pub virtual_env: Option<OsString>,
    /// The `PATH` to search (default: this process's).
    pub path_var: Option<OsString>,
    /// Skip every interpreter inside the workspace (a read-only surface runs no workspace
    /// code): only rule 5, outside the workspace, applies.
    pub outside_workspace_only: bool,
}

impl<'a> PythonQuery<'a> {
    /// The resolution for `project` inside `workspace`, from this process's environment.
    pub fn new(project: &'a Path, workspace: &'a Path) -> Self {
        PythonQuery {
            project,
            workspace,
            configured: None,
            virtual_env: std::env::var_os("VIRTUAL_ENV"),
            path_var: None,
            outside_workspace_only: false,
        }
    }
}

/// The project's interpreter (see the module docs); the error lists what was tried.
pub fn project_python(query: &PythonQuery<'_>) -> Result<PythonChoice, String> {
    let mut tried = Vec::new();
    if !query.outside_workspace_only {
        if let Some(choice) = configured(query, &mut tried) {
            return Ok(choice);
        }
        if let Some(choice) = active_environment(query, &mut tried) {
            return Ok(choice);
        }
        if let Some(choice) = pyright_environment(query, &mut tried) {
            return Ok(choice);
        }
        if let Some(choice) = in_project_environment(query, &mut tried) {
            return Ok(choice);
        }
    }
    if let Some(choice) = on_path(query, &mut tried) {
        return Ok(choice);
    }
    Err(format!(
        "no Python for the project: tried {}",
        if tried.is_empty() {
            "nothing".to_owned()
        } else {
            tried.join("; ")
        }
    ))
}

/// Whether `python` belongs to a tools' environment (see [`TOOL_ENVIRONMENT_MARKER`]).
pub fn is_tool_environment(python: &Path) -> bool {
    environment_of(python).is_some_and(|env| env.join(TOOL_ENVIRONMENT_MARKER).exists())
}

/// The virtualenv folder of `python` (`ENV/bin/python` with `ENV/pyvenv.cfg`), following a
/// symlinked environment folder but not the interpreter's own link to its base Python.
fn environment_of(python: &Path) -> Option<PathBuf> {
    let env = python.parent()?.parent()?;
    env.join("pyvenv.cfg").is_file().then(|| env.to_path_buf())
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn interpreter_in(env: &Path) -> Option<PathBuf> {
    ["python", "python3"]
        .iter()
        .map(|name| env.join("bin").join(name))
        .find(|p| p.exists())
}

fn inside(path: &Path, workspace: &Path) -> bool {
    let resolved = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    resolved.starts_with(workspace) || path.starts_with(workspace)
}

fn configured(query: &PythonQuery<'_>, tried: &mut Vec<String>) -> Option<PythonChoice> {
    let configured = query.configured?;
    let path = if configured.is_absolute() {
        configured.to_path_buf()
    } else {
        query.workspace.join(configured)
    };
    if path.exists() {
        return Some(PythonChoice {
            environment: environment_of(&path),
            path,
            why: "configured ([lsp.python] interpreter)".into(),
        });
    }
    tried.push(format!(
        "the configured interpreter {} (it does not exist)",
        path.display()
    ));
    None
}

fn active_environment(query: &PythonQuery<'_>, tried: &mut Vec<String>) -> Option<PythonChoice> {
    let env = PathBuf::from(query.virtual_env.as_ref()?);
    if !inside(&env, query.workspace) {
        tried.push(format!(
            "VIRTUAL_ENV {} (outside the workspace: not this project's)",
            env.display()
        ));
        return None;
    }
    let path = interpreter_in(&env)?;
    Some(PythonChoice {
        path,
        why: format!("VIRTUAL_ENV ({})", shown(&env, query.workspace)),
        environment: Some(env),
    })
}

/// pyright's `venvPath` and `venv`, from the first configuration found upward.
fn pyright_environment(query: &PythonQuery<'_>, tried: &mut Vec<String>) -> Option<PythonChoice> {
    for dir in folders_up(query.project, query.workspace) {
        let Some((venv_path, venv, file)) = pyright_venv(&dir) else {
            continue;
        };
        let env = dir.join(venv_path).join(&venv);
        match interpreter_in(&env) {
            Some(path) => {
                return Some(PythonChoice {
                    path,
                    why: format!(
                        "pyright's venvPath/venv in {} ({})",
                        shown(&dir.join(file), query.workspace),
                        shown(&env, query.workspace)
                    ),
                    environment: Some(env),
                })
            }
            None => tried.push(format!(
                "pyright's venv {} (no interpreter in it)",
                env.display()
            )),
        }
        // The nearest configuration is pyright's; it does not look further up.
        return None;
    }
    None
}

fn pyright_venv(dir: &Path) -> Option<(String, String, &'static str)> {
    let from_json = std::fs::read_to_string(dir.join("pyrightconfig.json"))
        .ok()
        .and_then(|text| json_venv(&text));
    if let Some((path, venv)) = from_json {
        return Some((path, venv, "pyrightconfig.json"));
    }
    let text = std::fs::read_to_string(dir.join("pyproject.toml")).ok()?;
    let table: toml::Table = text.parse().ok()?;
    let tool = table.get("tool")?.as_table()?;
    for key in ["basedpyright", "pyright"] {
        if let Some(section) = tool.get(key).and_then(toml::Value::as_table) {
            let venv = section.get("venv").and_then(toml::Value::as_str)?;
            let path = section
                .get("venvPath")
                .and_then(toml::Value::as_str)
                .unwrap_or(".");
            return Some((path.to_owned(), venv.to_owned(), "pyproject.toml"));
        }
    }
    None
}

/// `venvPath` and `venv` of a `pyrightconfig.json` (JSON with `//` comment lines, as pyright
/// reads it).
fn json_venv(text: &str) -> Option<(String, String)> {
    let stripped: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let value: serde_json::Value = serde_json::from_str(&stripped).ok()?;
    let venv = value.get("venv")?.as_str()?.to_owned();
    let path = value
        .get("venvPath")
        .and_then(serde_json::Value::as_str)
        .unwrap_or(".")
        .to_owned();
    Some((path, venv))
}

fn in_project_environment(
    query: &PythonQuery<'_>,
    tried: &mut Vec<String>,
) -> Option<PythonChoice> {
    for dir in folders_up(query.project, query.workspace) {
        for name in [".venv", "venv"] {
            let env = dir.join(name);
            if !env.join("pyvenv.cfg").is_file() {
                continue;
            }
            if let Some(path) = interpreter_in(&env) {
                return Some(PythonChoice {
                    path,
                    why: format!("the project's {}", shown(&env, query.workspace)),
                    environment: Some(env),
                });
            }
        }
    }
    tried.push("a .venv or venv in the project root and the folders above it".into());
    None
}

fn on_path(query: &PythonQuery<'_>, tried: &mut Vec<String>) -> Option<PythonChoice> {
    let path_var = query
        .path_var
        .clone()
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    let mut skipped = Vec::new();
    for name in ["python3", "python"] {
        for dir in std::env::split_paths(&path_var) {
            let candidate = dir.join(name);
            if !executable(&candidate) {
                continue;
            }
            if is_tool_environment(&candidate) {
                skipped.push(candidate.display().to_string());
                continue;
            }
            if query.outside_workspace_only && inside(&candidate, query.workspace) {
                skipped.push(candidate.display().to_string());
                continue;
            }
            let why = if skipped.is_empty() {
                format!("{name} on PATH")
            } else {
                format!(
                    "{name} on PATH, after the tools' own environment ({}), which is not the \
                     project's",
                    skipped.join(", ")
                )
            };
            return Some(PythonChoice {
                environment: environment_of(&candidate),
                path: candidate,
                why,
            });
        }
    }
    tried.push(format!(
        "python3 and python on PATH{}",
        if skipped.is_empty() {
            String::new()
        } else {
            format!(" (skipped: {})", skipped.join(", "))
        }
    ));
    None
}

/// `start` and each folder above it, up to and including `workspace`.
fn folders_up(start: &Path, workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in start.ancestors() {
        if !dir.starts_with(workspace) {
            break;
        }
        out.push(dir.to_path_buf());
        if dir == workspace {
            break;
        }
    }
    out
}

fn shown(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".into(),
        Ok(rest) => rest.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// `src/` when the project keeps its package there (`src/<name>/__init__.py`): nothing
/// imports it from the root unless it is installed, so code run for the project (pytest under
/// the debugger, a kernel's cells) gets it first on `PYTHONPATH`.
pub fn src_layout(root: &Path) -> Option<PathBuf> {
    let src = root.join("src");
    let holds_package = std::fs::read_dir(&src)
        .ok()?
        .flatten()
        .any(|entry| entry.path().join("__init__.py").is_file());
    holds_package.then_some(src)
}

/// `PYTHONPATH` for code run for the project at `root` (pytest under the debugger, a
/// kernel): its src layout's `src` first, then what the child would inherit (the last
/// `PYTHONPATH` of `env`, its extra variables, else this process's); with the `src` folder.
/// `None` without a src layout.
pub fn src_layout_python_path(
    root: &Path,
    env: &[(String, String)],
) -> Option<(PathBuf, OsString)> {
    let src = src_layout(root)?;
    let inherited = env
        .iter()
        .rev()
        .find(|(key, _)| key == "PYTHONPATH")
        .map(|(_, value)| OsString::from(value))
        .or_else(|| std::env::var_os("PYTHONPATH"))
        .unwrap_or_default();
    let path = path_with(&src, &inherited);
    Some((src, path))
}

/// A search path (`PATH`, `PYTHONPATH`) with `dir` in front; an empty `path_var` adds nothing
/// (an empty entry would mean the current folder).
pub fn path_with(dir: &Path, path_var: &OsStr) -> OsString {
    let mut dirs = vec![dir.to_path_buf()];
    if !path_var.is_empty() {
        dirs.extend(std::env::split_paths(path_var));
    }
    std::env::join_paths(dirs).unwrap_or_else(|_| dir.as_os_str().to_os_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn venv(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let python = dir.join("bin/python");
        std::fs::write(&python, "").unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&python, dir.join("bin/python3")).unwrap();
        python
    }

    fn query<'a>(project: &'a Path, workspace: &'a Path, path_var: &Path) -> PythonQuery<'a> {
        PythonQuery {
            project,
            workspace,
            configured: None,
            virtual_env: None,
            path_var: Some(path_var.as_os_str().to_owned()),
            outside_workspace_only: false,
        }
    }

    #[test]
    fn the_order_of_the_rules() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let project = ws.join("pkg");
        std::fs::create_dir_all(&project).unwrap();
        // The tools' environment first on PATH, a plain python after it.
        let tools = venv(&base.join("peers/venv"));
        std::fs::write(base.join("peers/venv").join(TOOL_ENVIRONMENT_MARKER), "").unwrap();
        let system = base.join("usr/bin");
        std::fs::create_dir_all(&system).unwrap();
        std::fs::write(system.join("python3"), "").unwrap();
        std::fs::set_permissions(
            system.join("python3"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let path_var = std::env::join_paths([tools.parent().unwrap(), &system]).unwrap();
        let path_var = PathBuf::from(path_var);

        let choice = project_python(&query(&project, &ws, &path_var)).unwrap();
        assert_eq!(choice.path, system.join("python3"));
        assert!(choice.why.contains("not the project's"), "{}", choice.why);

        // A venv in a folder above the project, inside the workspace.
        let above = venv(&ws.join(".venv"));
        let choice = project_python(&query(&project, &ws, &path_var)).unwrap();
        assert_eq!(choice.path, above);
        // pyright's venv wins over it.
        let named = venv(&ws.join("envs/dev"));
        std::fs::write(
            project.join("pyproject.toml"),
            "[tool.pyright]\nvenvPath = \"../envs\"\nvenv = \"dev\"\n",
        )
        .unwrap();
        let choice = project_python(&query(&project, &ws, &path_var)).unwrap();
        assert_eq!(choice.path, project.join("../envs/dev/bin/python"));
        assert_eq!(choice.path.canonicalize().unwrap(), named);
        // An active environment inside the workspace wins; one outside does not count.
        let active = venv(&ws.join("active"));
        let mut q = query(&project, &ws, &path_var);
        q.virtual_env = Some(ws.join("active").into_os_string());
        assert_eq!(project_python(&q).unwrap().path, active);
        q.virtual_env = Some(base.join("peers/venv").into_os_string());
        assert_eq!(
            project_python(&q).unwrap().path,
            project.join("../envs/dev/bin/python")
        );
        // The configured one wins over all.
        let configured = Path::new("active/bin/python");
        q.configured = Some(configured);
        assert!(project_python(&q).unwrap().why.contains("configured"));
        // A read-only surface takes nothing inside the workspace.
        q.outside_workspace_only = true;
        assert_eq!(project_python(&q).unwrap().path, system.join("python3"));
    }
}
