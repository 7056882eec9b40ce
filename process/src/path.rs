//! Finding executables on PATH.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Every executable file named `name` on `PATH`, in PATH order, without duplicates.
///
/// A name containing a slash is checked as a path on its own.
pub fn find_all_on_path(name: &str) -> Vec<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return if is_executable(&path) {
            vec![path]
        } else {
            Vec::new()
        };
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    find_all_in(name, &path_var)
}

/// The first executable named `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    find_all_on_path(name).into_iter().next()
}

/// Every executable file named `name` in the directories of `path_var` (a `PATH`-style
/// list), in order. The same binary reached twice (a directory listed twice, `/bin` and a
/// `/usr/bin` it links to) is listed once.
pub fn find_all_in(name: &str, path_var: &OsStr) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(path_var) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let candidate = dir.join(name);
        if !is_executable(&candidate) {
            continue;
        }
        let canonical = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
        if !seen.contains(&canonical) {
            seen.push(canonical);
            found.push(candidate);
        }
    }
    found
}

/// Whether `path` is a regular file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    path.metadata()
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_skips_missing() {
        assert!(find_on_path("sh").is_some());
        assert!(find_on_path("definitely-not-a-command-cc").is_none());
    }

    #[test]
    fn keeps_path_order_without_duplicates() {
        let var = std::env::join_paths(["/bin", "/usr/bin", "/bin", ""]).unwrap();
        let found = find_all_in("sh", &var);
        assert!(!found.is_empty());
        let mut dedup = found.clone();
        dedup.dedup();
        assert_eq!(found, dedup);
    }
}
