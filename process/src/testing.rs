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
