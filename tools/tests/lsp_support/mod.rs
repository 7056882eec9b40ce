//! Helpers shared by the `lsp_*` tests: comparing trees byte for byte, and making a file
//! impossible to replace (to fail a commit midway).
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cc_process::testing::missing_peer;

/// Every entry under `dir` with its bytes, to compare trees byte for byte.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.push((path.clone(), None));
                stack.push(path);
            } else {
                out.push((path.clone(), Some(std::fs::read(&path).unwrap())));
            }
        }
    }
    out.sort();
    out
}

/// Makes `file` impossible to replace: a read-only folder for an ordinary user; for root,
/// whom permissions do not stop, the immutable attribute. Undone on drop.
pub struct Locked {
    file: PathBuf,
    immutable: bool,
}

impl Locked {
    pub fn new(file: &Path) -> Option<Locked> {
        use std::os::unix::fs::PermissionsExt;
        let folder = file.parent().unwrap();
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = folder.join(".probe");
        if std::fs::write(&probe, "").is_err() {
            return Some(Locked {
                file: file.to_path_buf(),
                immutable: false,
            });
        }
        // Permissions do not bind us (root).
        let _ = std::fs::remove_file(&probe);
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        let chattr = std::process::Command::new("chattr")
            .arg("+i")
            .arg(file)
            .status();
        if !chattr.is_ok_and(|s| s.success()) {
            missing_peer(
                "chattr",
                "running as root, a file can only be made unwritable with `chattr +i`",
            );
            return None;
        }
        Some(Locked {
            file: file.to_path_buf(),
            immutable: true,
        })
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.file)
                .status();
        }
        let folder = self.file.parent().unwrap();
        let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755));
    }
}
