//! Detection is an intersection: a root marker, a binary that resolves, and a probe that runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use tokio::io::AsyncReadExt;

use cc_process::is_executable;

use crate::table::{Family, ServerSpec};

/// How long a probe (`gopls version`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// The project root of `file` for `family`: the nearest ancestor (from the file's folder up
/// to `workspace`, inclusive) that holds one of the markers. Without markers, `workspace`.
pub fn find_root(file: &Path, workspace: &Path, markers: &[String]) -> Option<PathBuf> {
    if markers.is_empty() {
        return Some(workspace.to_path_buf());
    }
    let mut dir = if file.is_dir() {
        Some(file)
    } else {
        file.parent()
    };
    while let Some(current) = dir {
        if !current.starts_with(workspace) {
            break;
        }
        if markers.iter().any(|marker| current.join(marker).exists()) {
            return Some(current.to_path_buf());
        }
        if current == workspace {
            break;
        }
        dir = current.parent();
    }
    None
}

/// A binary that was found on PATH but not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The binary.
    pub path: PathBuf,
    /// Why (`resolves but fails to run: error: …`).
    pub reason: String,
}

/// The server that will run for a family.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The chosen candidate.
    pub spec: ServerSpec,
    /// Its binary.
    pub binary: PathBuf,
    /// Binaries tried before it.
    pub skipped: Vec<Skipped>,
}

/// Why no server of a family can run.
#[derive(Debug, Clone, PartialEq)]
pub struct NotAvailable {
    /// One sentence for the agent.
    pub reason: String,
    /// Binaries that were found but failed.
    pub skipped: Vec<Skipped>,
}

type ProbeKey = (PathBuf, Vec<String>);
type ProbeCache = HashMap<ProbeKey, (Option<SystemTime>, Result<(), String>)>;

/// Remembers probe results per binary (and its modification time), so that status and
/// every first request do not rerun `--version`.
#[derive(Debug, Default)]
pub struct Prober {
    cache: Mutex<ProbeCache>,
}

impl Prober {
    /// Picks the first candidate of `family` whose binary resolves and whose probe runs,
    /// trying every binary of that name on `path_var` in order.
    pub async fn resolve(
        &self,
        family: &Family,
        path_var: &std::ffi::OsStr,
    ) -> Result<Resolved, NotAvailable> {
        let mut skipped = Vec::new();
        let mut missing = Vec::new();
        for spec in &family.servers {
            let Some(program) = spec.command.first() else {
                continue;
            };
            let binaries = binaries_named(program, spec.versioned_binaries, path_var);
            if binaries.is_empty() {
                missing.push(program.clone());
                continue;
            }
            for binary in binaries {
                let probed = match self.probe(spec, &binary, path_var).await {
                    Ok(()) => with_runtime(spec, &binary, path_var),
                    Err(reason) => Err(reason),
                };
                match probed {
                    Ok(spec) => {
                        return Ok(Resolved {
                            spec,
                            binary,
                            skipped,
                        })
                    }
                    Err(reason) => skipped.push(Skipped {
                        path: binary,
                        reason,
                    }),
                }
            }
        }
        let mut reason = String::new();
        if !missing.is_empty() {
            reason.push_str(&format!(
                "not installed: {} not found on PATH",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for skip in &skipped {
            if !reason.is_empty() {
                reason.push_str("; ");
            }
            reason.push_str(&format!("{} {}", skip.path.display(), skip.reason));
        }
        if reason.is_empty() {
            reason = "no server is configured".into();
        }
        Err(NotAvailable { reason, skipped })
    }

    async fn probe(
        &self,
        spec: &ServerSpec,
        binary: &Path,
        path_var: &std::ffi::OsStr,
    ) -> Result<(), String> {
        if spec.probe.is_empty() {
            return Ok(());
        }
        let program = if Some(&spec.probe[0]) == spec.command.first() {
            binary.to_path_buf()
        } else {
            // The probe's own program: beside the server first (same venv), then PATH.
            let beside = binary.parent().map(|dir| dir.join(&spec.probe[0]));
            match beside.filter(|p| is_executable(p)) {
                Some(path) => path,
                None => find_in(&spec.probe[0], path_var)
                    .into_iter()
                    .next()
                    .ok_or_else(|| {
                        format!(
                            "resolves but its probe program `{}` is not on PATH",
                            spec.probe[0]
                        )
                    })?,
            }
        };
        let key = (program.clone(), spec.probe[1..].to_vec());
        let mtime = std::fs::metadata(&program).and_then(|m| m.modified()).ok();
        if let Some((seen, result)) = self.lock().get(&key) {
            if *seen == mtime {
                return result.clone();
            }
        }
        let result = run_probe(&program, &spec.probe[1..], &spec.env, path_var).await;
        self.lock().insert(key, (mtime, result.clone()));
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ProbeCache> {
        cc_process::lock(&self.cache)
    }
}

/// `spec` as it runs with `binary`: given the Java runtime it needs (`-vm`), or why none fits.
fn with_runtime(
    spec: &ServerSpec,
    binary: &Path,
    path_var: &std::ffi::OsStr,
) -> Result<ServerSpec, String> {
    let mut spec = spec.clone();
    if spec.java_runtime {
        let home = std::env::var_os("JAVA_HOME");
        let java = crate::jdtls::find_java(binary, home.as_deref(), path_var)?;
        let at = spec.command.len().min(1);
        spec.command.splice(
            at..at,
            ["-vm".to_owned(), java.to_string_lossy().into_owned()],
        );
    }
    Ok(spec)
}

async fn run_probe(
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    path_var: &std::ffi::OsStr,
) -> Result<(), String> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env("PATH", path_var)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cc_process::spawn_group(command)
        .map_err(|error| format!("resolves but fails to run: {error}"))?;
    let mut stdout = child.take_stdout();
    let mut stderr = child.take_stderr();
    let run = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                let _ = s.read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                let _ = s.read_to_end(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    };
    let outcome = tokio::time::timeout(PROBE_TIMEOUT, run).await;
    let Ok((status, out, err)) = outcome else {
        return Err(format!(
            "resolves but its probe did not finish within {} s",
            PROBE_TIMEOUT.as_secs()
        ));
    };
    let status = status.map_err(|error| format!("resolves but fails to run: {error}"))?;
    if status.success() {
        return Ok(());
    }
    let first = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(str::to_owned)
    };
    let line = first(&err)
        .or_else(|| first(&out))
        .unwrap_or_else(|| status.to_string());
    Err(format!("resolves but fails to run: {line}"))
}

/// Every executable called `name` on `path_var`; with `versioned`, then `name-<N>` ones,
/// highest N first.
pub(crate) fn binaries_named(
    name: &str,
    versioned: bool,
    path_var: &std::ffi::OsStr,
) -> Vec<PathBuf> {
    let mut found = find_in(name, path_var);
    if versioned && !name.contains('/') {
        let mut numbered: Vec<(u32, PathBuf)> = Vec::new();
        for dir in std::env::split_paths(path_var) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let file = entry.file_name();
                let Some(file) = file.to_str() else { continue };
                let Some(version) = file
                    .strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .and_then(|v| v.parse::<u32>().ok())
                else {
                    continue;
                };
                let path = entry.path();
                if is_executable(&path) && !numbered.iter().any(|(_, p)| *p == path) {
                    numbered.push((version, path));
                }
            }
        }
        numbered.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
        found.extend(numbered.into_iter().map(|(_, path)| path));
    }
    found
}

fn find_in(name: &str, path_var: &std::ffi::OsStr) -> Vec<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return if is_executable(&path) {
            vec![path]
        } else {
            Vec::new()
        };
    }
    cc_process::find_all_in(name, path_var)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::ServerTable;

    /// An executable `name` in `dir` running `body` under sh.
    fn script(dir: &Path, name: &str, body: &str) {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }

    #[tokio::test]
    async fn candidates_are_tried_in_order_and_failures_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path();
        let table = ServerTable::builtin();
        let python = table.family("python").unwrap();
        let prober = Prober::default();

        let none = prober.resolve(python, bin.as_os_str()).await.unwrap_err();
        assert_eq!(
            none.reason,
            "not installed: `basedpyright-langserver`, `pyright-langserver`, `pylsp` not found on PATH"
        );

        // basedpyright resolves but its probe (the CLI beside it) fails; pyright is absent;
        // pylsp runs.
        script(bin, "basedpyright-langserver", "exit 0");
        script(bin, "basedpyright", "echo 'boom: broken venv' >&2\nexit 3");
        script(bin, "pylsp", "exit 0");
        let resolved = prober.resolve(python, bin.as_os_str()).await.unwrap();
        assert_eq!(resolved.spec.name, "pylsp");
        assert_eq!(resolved.binary, bin.join("pylsp"));
        assert_eq!(
            resolved.skipped,
            [Skipped {
                path: bin.join("basedpyright-langserver"),
                reason: "resolves but fails to run: boom: broken venv".into(),
            }]
        );

        // clangd: the plain name first, then `clangd-NN`, highest first.
        let c = table.family("c").unwrap();
        script(bin, "clangd-17", "exit 0");
        script(bin, "clangd-19", "exit 0");
        let resolved = prober.resolve(c, bin.as_os_str()).await.unwrap();
        assert_eq!(resolved.binary, bin.join("clangd-19"));
        script(bin, "clangd", "exit 0");
        let resolved = prober.resolve(c, bin.as_os_str()).await.unwrap();
        assert_eq!(resolved.binary, bin.join("clangd"));
    }

    #[test]
    fn nearest_marker_within_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("a/b/c")).unwrap();
        std::fs::write(ws.join("a/pyproject.toml"), "").unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
        let markers = vec!["pyproject.toml".to_owned()];
        assert_eq!(
            find_root(&ws.join("a/b/c/x.py"), &ws, &markers),
            Some(ws.join("a"))
        );
        // A marker above the workspace root does not count.
        assert_eq!(find_root(&ws.join("x.py"), &ws, &markers), None);
        assert_eq!(find_root(&ws.join("x.sh"), &ws, &[]), Some(ws.clone()));
    }
}
