//! All-or-nothing commits: concurrent modification between staging and commit, and failures
//! in the middle of a commit, never leave a mixed tree or lose a byte.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use std::path::{Path, PathBuf};

use cc_structural::transaction::Workspace;
use cc_structural::{stage_rewrite, CommitError, FailAt, FaultInjector, StagedRewrite};
use proptest::prelude::*;

fn source(index: usize, extra: &str) -> String {
    format!("# file {index}\nx = f({index})\n{extra}\n")
}

/// Writes `count` Python files and stages `f($A)` → `g($A)` over them.
fn staged(dir: &Path, count: usize) -> (Vec<PathBuf>, Vec<Vec<u8>>, StagedRewrite) {
    let mut paths = Vec::new();
    let mut originals = Vec::new();
    for i in 0..count {
        let path = dir.join(format!("sub{}/m{i}.py", i % 3));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = source(i, "y = 1");
        std::fs::write(&path, &text).unwrap();
        paths.push(path);
        originals.push(text.into_bytes());
    }
    let pattern = common::compile("python", "f($A)").unwrap();
    let staged =
        stage_rewrite(&pattern, "g($A)", dir, &|p: &Path| p.display().to_string()).unwrap();
    assert_eq!(staged.files.len(), count);
    (paths, originals, staged)
}

/// The index a file of [`staged`] was written with (`sub{i % 3}/m{i}.py`).
fn file_index(path: &Path) -> usize {
    let stem = path.file_stem().unwrap().to_string_lossy();
    stem.trim_start_matches('m').parse().unwrap()
}

fn rewritten(index: usize) -> Vec<u8> {
    format!("# file {index}\nx = g({index})\ny = 1\n").into_bytes()
}

/// Another writer that changes a file right before one step of the commit.
struct Meanwhile<'a> {
    before_step: usize,
    path: &'a Path,
    bytes: &'a [u8],
}

impl FaultInjector for Meanwhile<'_> {
    fn before_rename(&self, index: usize, _path: &Path) -> std::io::Result<()> {
        if index == self.before_step {
            std::fs::write(self.path, self.bytes)?;
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn concurrent_modification_never_leaves_a_mixed_tree(
        count in 1usize..7,
        touched in proptest::collection::vec(any::<bool>(), 7),
        noise in "[a-z ]{0,12}",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let (paths, originals, staged) = staged(dir.path(), count);
        // Someone else edits a random subset after staging.
        let mut modified = Vec::new();
        let mut expected = originals.clone();
        for i in 0..count {
            if touched[i] {
                let theirs = source(i, &format!("z = '{noise}'"));
                std::fs::write(&paths[i], &theirs).unwrap();
                expected[i] = theirs.into_bytes();
                modified.push(paths[i].clone());
            }
        }
        let result = staged.transaction.commit(&ws);
        if modified.is_empty() {
            prop_assert_eq!(result.unwrap().len(), count);
            for (i, path) in paths.iter().enumerate() {
                prop_assert_eq!(std::fs::read(path).unwrap(), rewritten(i));
            }
        } else {
            let mut sorted = modified.clone();
            sorted.sort();
            prop_assert_eq!(result, Err(CommitError::Stale { paths: sorted }));
            // Nothing of ours landed; their edits are intact.
            for (i, path) in paths.iter().enumerate() {
                prop_assert_eq!(&std::fs::read(path).unwrap(), &expected[i]);
            }
        }
        // No temporary file is left anywhere.
        for path in &paths {
            let leftovers = std::fs::read_dir(path.parent().unwrap())
                .unwrap()
                .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(".cc-edit-"))
                .count();
            prop_assert_eq!(leftovers, 0);
        }
    }

    #[test]
    fn a_writer_that_slips_in_mid_commit_keeps_its_bytes(
        count in 2usize..7,
        step in 0usize..7,
        victim in 0usize..7,
    ) {
        let (step, victim) = (step % count, victim % count);
        prop_assume!(step != victim);
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let (_, originals, staged) = staged(dir.path(), count);
        // Commit order is the transaction's, not the paths' index order.
        let order: Vec<PathBuf> = staged.transaction.ops().iter().map(|op| op.path().to_path_buf()).collect();
        let theirs = b"# theirs\n".to_vec();
        let writer = Meanwhile { before_step: step, path: &order[victim], bytes: &theirs };
        let result = staged.transaction.commit_with(&ws, &writer);
        if victim > step {
            // Not yet replaced: the last look before its rename sees the change, and every
            // file already replaced is put back.
            prop_assert_eq!(result, Err(CommitError::Stale { paths: vec![order[victim].clone()] }));
            for (i, path) in order.iter().enumerate() {
                let expected = if i == victim { theirs.clone() } else { originals[file_index(path)].clone() };
                prop_assert_eq!(std::fs::read(path).unwrap(), expected);
            }
        } else {
            // Already replaced: theirs is simply the later write, and it stays.
            prop_assert_eq!(result.map(|w| w.len()), Ok(count));
            for (i, path) in order.iter().enumerate() {
                let expected = if i == victim { theirs.clone() } else { rewritten(file_index(path)) };
                prop_assert_eq!(std::fs::read(path).unwrap(), expected);
            }
        }
    }

    #[test]
    fn failure_mid_commit_restores_every_file_byte_for_byte(count in 1usize..7, at in 0usize..7) {
        let at = at % count;
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let (paths, originals, staged) = staged(dir.path(), count);
        let error = staged.transaction.commit_with(&ws, &FailAt(at)).unwrap_err();
        let CommitError::Io { path, restored, unrestored, .. } = error else {
            panic!("expected an io error");
        };
        prop_assert_eq!(&path, &staged.transaction.ops()[at].path().to_path_buf());
        prop_assert_eq!(restored.len(), at);
        prop_assert!(unrestored.is_empty());
        for (i, path) in paths.iter().enumerate() {
            prop_assert_eq!(&std::fs::read(path).unwrap(), &originals[i]);
        }
    }
}

/// A real failure, not an injected one: a directory that cannot take the temporary file.
/// Root ignores directory permissions, so as root the directory is replaced by a dangling
/// parent instead (the file is then gone, which is staleness, and nothing is written).
#[test]
fn read_only_directory_fails_before_anything_is_written() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let (paths, originals, staged) = staged(dir.path(), 4);
    let is_root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    let locked = paths[2].parent().unwrap().to_path_buf();
    if is_root {
        let moved = dir.path().join("moved-away");
        std::fs::rename(&locked, &moved).unwrap();
        let error = staged.transaction.commit(&ws).unwrap_err();
        assert!(
            matches!(&error, CommitError::Stale { paths } if paths.iter().all(|p| p.starts_with(&locked))),
            "{error}"
        );
        std::fs::rename(&moved, &locked).unwrap();
    } else {
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let error = staged.transaction.commit(&ws).unwrap_err();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            matches!(&error, CommitError::Io { restored, .. } if restored.is_empty()),
            "{error}"
        );
    }
    for (i, path) in paths.iter().enumerate() {
        assert_eq!(std::fs::read(path).unwrap(), originals[i]);
    }
    // And once the obstacle is gone the same staged change commits.
    staged.transaction.commit(&ws).unwrap();
    assert_eq!(std::fs::read(&paths[3]).unwrap(), rewritten(3));
}
