//! Helpers for tests that need a real peer (a language server, an adapter, an interpreter).
//!
//! Locally a missing peer skips the test loudly; when the `CI` environment variable is set,
//! it fails the test with a message naming the peer and how to install it.

use std::path::PathBuf;

/// Finds the peer `name` on PATH, or reports it missing.
///
/// Returns `None` (after printing a loud notice) when the peer is missing and `CI` is unset:
/// the caller then returns early. Panics when it is missing and `CI` is set.
pub fn require_peer(name: &str) -> Option<PathBuf> {
    if let Some(path) = crate::find_on_path(name) {
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

/// Whether `pid` is a live process (a zombie, exited but not reaped, counts as gone).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits up to `timeout` for `pid` to be gone; true when it is. Signals are delivered
/// asynchronously, so a test checks "gone soon", never "gone right now".
pub fn wait_until_gone(pid: u32, timeout: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if !process_alive(pid) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The live (non-zombie) processes of process group `pgid`.
pub fn live_group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let fields: Vec<&str> = stat
                    .rsplit_once(')')
                    .map(|(_, rest)| rest.split_whitespace().collect())
                    .unwrap_or_default();
                fields.first() != Some(&"Z")
                    && fields.get(2).and_then(|group| group.parse::<u32>().ok()) == Some(pgid)
            })
        })
        .collect()
}
