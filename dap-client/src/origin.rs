//! Where a frame's code comes from: the project's own code, or a library the project runs on
//! (the standard library, the test harness, an installed package). `stack` folds runs of
//! library frames (a Rust test's stack is mostly std and libtest), and a stop outside the
//! project's code shows the nearest frame of it.

use std::path::{Component, Path};

/// Folder names that hold installed code even inside the workspace.
const INSTALLED_DIRS: [&str; 6] = [
    "site-packages",
    "dist-packages",
    "node_modules",
    ".venv",
    "venv",
    "vendor",
];

/// The library a frame belongs to (`std`, `libtest`, `_pytest`, `runtime`, `stdlib`, a
/// crate's name, …), or `None` for the project's own code: a file under `root` outside any
/// folder of installed code.
pub fn library_origin(function: &str, path: Option<&str>, root: &Path) -> Option<String> {
    let Some(path) = path else {
        // No file: a toolchain frame without sources or a system library.
        return Some(rust_origin(function).unwrap_or("system").to_owned());
    };
    let path = Path::new(path);
    if path.is_relative() {
        // Adapters give absolute paths; a relative one is the project's own.
        return None;
    }
    let parts: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    // An installed package: the folder (or module file) right under the install folder.
    if let Some(at) = parts
        .iter()
        .position(|p| *p == "site-packages" || *p == "dist-packages" || *p == "node_modules")
    {
        let package = parts.get(at + 1).copied().unwrap_or("packages");
        return Some(package.trim_end_matches(".py").to_owned());
    }
    // A crate from the registry or a git checkout: `…/registry/src/<index>/<name-version>/`.
    if let Some(at) = parts.iter().position(|p| *p == "registry") {
        if parts.get(at + 1) == Some(&"src") {
            if let Some(krate) = parts.get(at + 3) {
                let name = krate.rsplit_once('-').map_or(*krate, |(name, _)| name);
                return Some(name.to_owned());
            }
        }
    }
    if parts.first() == Some(&"rustc") || parts.contains(&"rustlib") {
        return Some(rust_origin(function).unwrap_or("std").to_owned());
    }
    if path.starts_with(root) {
        let inside = path.strip_prefix(root).ok()?;
        let installed = inside
            .components()
            .any(|c| matches!(c, Component::Normal(p) if INSTALLED_DIRS.iter().any(|d| p == *d)));
        return installed.then(|| "installed code".to_owned());
    }
    // Go's standard library: `…/go…/src/<package>/file.go`.
    if let Some(at) = parts
        .iter()
        .position(|p| *p == "go" || p.starts_with("go-") || p.starts_with("go1"))
    {
        if parts.get(at + 1) == Some(&"src") {
            if let Some(package) = parts.get(at + 2).filter(|_| parts.len() > at + 3) {
                return Some((*package).to_owned());
            }
        }
    }
    // CPython's standard library: `…/lib/python3.N/module.py`.
    if parts.iter().any(|p| p.starts_with("python3")) && parts.contains(&"lib") {
        return Some("stdlib".to_owned());
    }
    Some("outside the workspace".to_owned())
}

/// `std` or `libtest` from a Rust function's path, when it is one of theirs.
fn rust_origin(function: &str) -> Option<&'static str> {
    let function = function.trim_start_matches('<');
    if function.starts_with("test::") {
        Some("libtest")
    } else if ["std::", "core::", "alloc::", "__rust", "panic_unwind::"]
        .iter()
        .any(|p| function.starts_with(p))
    {
        Some("std")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_by_path_and_name() {
        let root = Path::new("/work/proj");
        let origin = |function: &str, path: Option<&str>| library_origin(function, path, root);
        assert_eq!(origin("f", Some("/work/proj/src/lib.rs")), None);
        assert_eq!(origin("f", Some("/work/proj/tests/test_a.py")), None);
        assert_eq!(
            origin(
                "call",
                Some("/work/proj/.venv/lib/python3.12/site-packages/_pytest/runner.py")
            )
            .as_deref(),
            Some("_pytest")
        );
        assert_eq!(
            origin(
                "_multicall",
                Some("/opt/v/lib/python3.12/site-packages/pluggy/_callers.py")
            )
            .as_deref(),
            Some("pluggy")
        );
        assert_eq!(
            origin("run", Some("/usr/lib/python3.12/runpy.py")).as_deref(),
            Some("stdlib")
        );
        assert_eq!(
            origin(
                "test::run_test",
                Some("/rustc/90b35a62/library/test/src/lib.rs")
            )
            .as_deref(),
            Some("libtest")
        );
        assert_eq!(
            origin(
                "core::ops::function::FnOnce::call_once",
                Some("/rustc/90b35a62/library/core/src/ops/function.rs")
            )
            .as_deref(),
            Some("std")
        );
        assert_eq!(origin("std::rt::lang_start", None).as_deref(), Some("std"));
        assert_eq!(origin("__libc_start_main", None).as_deref(), Some("system"));
        assert_eq!(
            origin(
                "serde::de::x",
                Some("/root/.cargo/registry/src/index.crates.io-1949cf8c/serde-1.0.200/src/de.rs")
            )
            .as_deref(),
            Some("serde")
        );
        assert_eq!(
            origin(
                "testing.tRunner",
                Some("/usr/lib/go-1.22/src/testing/testing.go")
            )
            .as_deref(),
            Some("testing")
        );
        assert_eq!(
            origin(
                "runtime.goexit",
                Some("/usr/lib/go/src/runtime/asm_amd64.s")
            )
            .as_deref(),
            Some("runtime")
        );
        assert_eq!(
            origin("f", Some("/work/proj/node_modules/rxjs/dist/a.js")).as_deref(),
            Some("rxjs")
        );
    }
}
