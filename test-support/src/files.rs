//! Folders in tests: copying one, and reading one whole to compare it byte for byte.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Copies a directory tree, with an explicit stack (no recursion on the tree's depth).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        std::fs::create_dir_all(&dst)?;
        for entry in std::fs::read_dir(&src)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let target = dst.join(entry.file_name());
            if kind.is_dir() {
                stack.push((entry.path(), target));
            } else if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
            } else {
                std::fs::copy(entry.path(), &target)?;
            }
        }
    }
    Ok(())
}

/// Every entry under `dir` with its bytes (`None` for a folder), sorted: two snapshots are
/// equal when the trees are byte for byte the same. Panics when `dir` cannot be read.
pub fn tree_snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let entries = std::fs::read_dir(&current)
            .unwrap_or_else(|error| panic!("cannot list {}: {error}", current.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.push((path.clone(), None));
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path)
                    .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
                out.push((path, Some(bytes)));
            }
        }
    }
    out.sort();
    out
}

/// The symlink flip race, for confinement tests: a root whose `race/` (holding `secret.txt`,
/// "inside") another thread flips, as fast as it can, between that folder and a symlink to
/// a folder outside the root (holding `secret.txt`, "outside"). A read through `race/` must
/// never return "outside" and a write must never land outside. Stopped and removed on drop.
#[derive(Debug)]
pub struct FlipRace {
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
    stop: Arc<AtomicBool>,
    flips: Arc<AtomicU64>,
    flipper: Option<std::thread::JoinHandle<()>>,
}

impl FlipRace {
    /// Lays out `<tmp>/…/root` and `<tmp>/…/outside` and starts flipping. Panics when the
    /// temporary folder cannot be written.
    pub fn start() -> FlipRace {
        let base = std::env::temp_dir().join(super::unique_tag("cc-flip-race"));
        let root = base.join("root");
        let outside = base.join("outside");
        let laid_out = std::fs::create_dir_all(root.join("race"))
            .and_then(|()| std::fs::create_dir_all(&outside))
            .and_then(|()| std::fs::write(root.join("race/secret.txt"), "inside"))
            .and_then(|()| std::fs::write(outside.join("secret.txt"), "outside"))
            .and_then(|()| std::os::unix::fs::symlink(&outside, root.join("race_link")));
        if let Err(error) = laid_out {
            let _ = std::fs::remove_dir_all(&base);
            panic!(
                "cannot lay out the flip race in {}: {error}",
                base.display()
            );
        }
        let root = root.canonicalize().unwrap_or(root);
        let stop = Arc::new(AtomicBool::new(false));
        let flips = Arc::new(AtomicU64::new(0));
        let flipper = {
            let (root, stop, flips) = (root.clone(), stop.clone(), flips.clone());
            std::thread::spawn(move || flip(&root, &stop, &flips))
        };
        FlipRace {
            base,
            root,
            outside,
            stop,
            flips,
            flipper: Some(flipper),
        }
    }

    /// The root (canonical) whose `race/` flips.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder outside the root that `race/` flips to.
    pub fn outside(&self) -> &Path {
        &self.outside
    }

    /// How many full flips (folder → symlink out → folder) the other thread has made.
    pub fn flips(&self) -> u64 {
        self.flips.load(Ordering::Relaxed)
    }

    /// Stops flipping; returns the flip count and the names in the outside folder (only
    /// `secret.txt` when nothing escaped).
    pub fn finish(&mut self) -> (u64, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(flipper) = self.flipper.take() {
            let _ = flipper.join();
        }
        let mut outside: Vec<String> = std::fs::read_dir(&self.outside)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        outside.sort();
        (self.flips(), outside)
    }
}

impl Drop for FlipRace {
    fn drop(&mut self) {
        self.finish();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The flipping loop: folder → symlink out → folder, until `stop`.
fn flip(root: &Path, stop: &AtomicBool, flips: &AtomicU64) {
    let (race, real, link) = (
        root.join("race"),
        root.join("race_dir"),
        root.join("race_link"),
    );
    while !stop.load(Ordering::Relaxed) {
        // A write that came while `race` was missing may have made a new folder there: clear
        // it, the real one is aside.
        if real.exists() && race.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            let _ = std::fs::remove_dir_all(&race);
            let _ = std::fs::rename(&real, &race);
            continue;
        }
        // Yielding after each half lets the other side run while either state holds.
        let flipped = std::fs::rename(&race, &real)
            .and_then(|()| std::fs::rename(&link, &race))
            .inspect(|()| std::thread::yield_now())
            .and_then(|()| std::fs::rename(&race, &link))
            .and_then(|()| std::fs::rename(&real, &race))
            .inspect(|()| std::thread::yield_now());
        if flipped.is_ok() {
            flips.fetch_add(1, Ordering::Relaxed);
        }
    }
}
