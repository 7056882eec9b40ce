//! The Linux 6.1 source tree, a bench-only corpus (never installed by CI's default steps):
//! Debian's `linux-source-6.1` package, whose tarball is unpacked into
//! `.peers/bench/linux-6.1` once (a stamp records the version). That folder is inside this
//! checkout's git repository, where the tree's root `.gitignore` (`/*`) would hide it all: it
//! is moved aside.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{self, Result};

/// The pinned package.
const PACKAGE: &str = "linux-source-6.1";
const VERSION: &str = "6.1.192-3";

/// The unpacked tree, fetched first when missing (138 MB download, 1.5 GB unpacked).
pub(super) fn tree(root: &Path) -> Result<PathBuf> {
    let bench = root.join(".peers").join("bench");
    let target = bench.join("linux-6.1");
    let stamp = bench.join("linux-6.1.stamp");
    if target.is_dir() && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == VERSION) {
        move_root_gitignore_aside(&target)?;
        return Ok(target);
    }
    eprintln!("bench: fetching {PACKAGE} {VERSION} (Debian) for the Linux tree");
    let scratch = bench.join(".linux.partial");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)
            .map_err(|e| format!("cannot clear {}: {e}", scratch.display()))?;
    }
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let src = crate::projects::fetch_debian(&scratch, PACKAGE, VERSION, "/usr/src")?;
    let tarball = std::fs::read_dir(&src)
        .map_err(|e| format!("cannot list {}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(".tar.xz"))
        .ok_or("the package holds no source tarball")?;
    let mut untar = Command::new("tar");
    untar.arg("-xf").arg(&tarball).arg("-C").arg(&scratch);
    util::run_to_stderr(&mut untar)?;
    let unpacked = scratch.join(PACKAGE);
    if !unpacked.is_dir() {
        return Err(format!(
            "{} did not unpack to {PACKAGE}/",
            tarball.display()
        ));
    }
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .map_err(|e| format!("cannot clear {}: {e}", target.display()))?;
    }
    std::fs::rename(&unpacked, &target)
        .map_err(|e| format!("cannot move the Linux tree into place: {e}"))?;
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::write(&stamp, VERSION).map_err(|e| format!("cannot write the stamp: {e}"))?;
    move_root_gitignore_aside(&target)?;
    Ok(target)
}

/// The tree sits inside this repository's checkout, so git's rules apply to it, and its root
/// `.gitignore` (`/*`) would leave the whole tree out: moved aside, as a kernel developer's
/// checkout has no such rule (the silent-zero case itself is tested in CI on a small tree).
fn move_root_gitignore_aside(tree: &Path) -> Result<()> {
    let rule = tree.join(".gitignore");
    if rule.is_file() {
        std::fs::rename(&rule, tree.join(".gitignore.moved-aside-by-bench"))
            .map_err(|e| format!("cannot move {} aside: {e}", rule.display()))?;
    }
    Ok(())
}
