//! Peers (a language server, an adapter, an interpreter) and the real projects tests run on.
//!
//! Locally a missing peer skips the test loudly; when the `CI` environment variable is set,
//! it fails the test with a message naming the peer and how to install it.

use std::path::PathBuf;

/// Finds the peer `name` on PATH, or reports it missing.
///
/// Returns `None` (after printing a loud notice) when the peer is missing and `CI` is unset:
/// the caller then returns early. Panics when it is missing and `CI` is set.
pub fn require_peer(name: &str) -> Option<PathBuf> {
    if let Some(path) = cc_process::find_on_path(name) {
        return Some(path);
    }
    missing_peer(name, "not found on PATH");
    None
}

/// Reports a peer that is missing for a reason other than PATH lookup (an importable Python
/// module, say). Panics under `CI`, prints a loud skip notice otherwise.
pub fn missing_peer(name: &str, why: &str) {
    let message = format!(
        "peer `{name}` is missing ({why}); install the peers with `cargo xtask peers` and run \
         tests with PATH=\"$(cargo xtask peers --path):$PATH\" (cargo xtask ci does both)"
    );
    if std::env::var_os("CI").is_some() {
        panic!("{message}");
    }
    eprintln!("SKIPPED: {message}");
}

/// PATH's `python3` when it can import every module of `modules` (the peers' venv has them);
/// otherwise `None` after [`missing_peer`] names them (a failure under `CI`).
pub fn python_with(modules: &[&str]) -> Option<PathBuf> {
    let python = require_peer("python3")?;
    let imports = std::process::Command::new(&python)
        .arg("-c")
        .arg(format!("import {}", modules.join(", ")))
        .status()
        .is_ok_and(|status| status.success());
    if imports {
        return Some(python);
    }
    missing_peer(
        &format!("python modules {}", modules.join(", ")),
        &format!(
            "{} cannot import them; the venv from `cargo xtask peers` has them",
            python.display()
        ),
    );
    None
}

/// The folder `cargo xtask peers` installs the real third-party projects into: `CC_PEERS_DIR`
/// (when set) or this repository's `.peers`, then `projects/`.
fn projects_dir() -> PathBuf {
    let peers = std::env::var_os("CC_PEERS_DIR").map_or_else(
        || {
            // process/ is one level below the repository root.
            let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            manifest.parent().unwrap_or(manifest).join(".peers")
        },
        PathBuf::from,
    );
    peers.join("projects")
}

/// The installed tree of the real project `name` (see `xtask/src/projects.rs`), or `None`
/// (after a loud notice; a panic under `CI`) when it is not installed. Never write into it:
/// copy it with [`copy_project`] first.
pub fn real_project(name: &str) -> Option<PathBuf> {
    let dir = projects_dir().join(name);
    if dir.is_dir() {
        return Some(dir);
    }
    missing_peer(
        &format!("project {name}"),
        &format!("{} does not exist", dir.display()),
    );
    None
}

/// A private copy of a real project in a fresh temporary folder, removed on drop.
#[derive(Debug)]
pub struct ProjectCopy {
    root: PathBuf,
}

impl ProjectCopy {
    /// The copy's root (canonical).
    pub fn path(&self) -> &std::path::Path {
        &self.root
    }
}

impl Drop for ProjectCopy {
    fn drop(&mut self) {
        if let Some(parent) = self.root.parent() {
            let _ = std::fs::remove_dir_all(parent);
        }
    }
}

/// Copies the real project `name` to a temporary folder (`<tmp>/cc-project-…/<name>`), or
/// `None` as [`real_project`]. Symlinks are copied as symlinks; file modes are kept.
pub fn copy_project(name: &str) -> Option<ProjectCopy> {
    let source = real_project(name)?;
    let base = std::env::temp_dir().join(super::unique_tag("cc-project"));
    let root = base.join(name);
    if let Err(error) = super::files::copy_tree(&source, &root) {
        let _ = std::fs::remove_dir_all(&base);
        panic!("cannot copy project {name} to {}: {error}", root.display());
    }
    let root = root.canonicalize().unwrap_or(root);
    Some(ProjectCopy { root })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under `CI` a missing peer fails naming it; otherwise it is skipped (`None`).
    fn fails_under_ci_naming(name: &str, look_up: impl FnOnce() -> Option<PathBuf>) {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(look_up));
        match (std::env::var_os("CI").is_some(), outcome) {
            (true, Err(panic)) => {
                let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
                assert!(message.contains(name), "{message}");
            }
            (false, Ok(found)) => assert_eq!(found, None),
            (ci, outcome) => panic!("CI set: {ci}, yet {outcome:?}"),
        }
    }

    #[test]
    fn a_missing_peer_fails_under_ci_naming_it() {
        fails_under_ci_naming("cc-no-such-peer", || require_peer("cc-no-such-peer"));
        // Without python3 the lookup fails on python3 itself, which the line above covers.
        if cc_process::find_on_path("python3").is_some() {
            fails_under_ci_naming("cc_no_such_module", || python_with(&["cc_no_such_module"]));
        }
        fails_under_ci_naming("project cc-no-such-project", || {
            real_project("cc-no-such-project")
        });
    }
}
