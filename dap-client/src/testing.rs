//! For tests of the debugger (this crate's and those of the crates above it): the tag the
//! tests put on what they start, and the peer they need; the process-table checks themselves
//! are `cc_test_support`'s. Behind the `test-support` feature, which only
//! `[dev-dependencies]` enable.

pub use cc_test_support::{assert_gone, unique_tag};

/// Put in the environment of every adapter a debugger starts (debuggees inherit it), so
/// the process table can be searched for leftovers.
pub const TAG_VAR: &str = "CC_DAP_TEST_TAG";

/// Live processes whose environment holds `CC_DAP_TEST_TAG=tag`.
pub fn tagged(tag: &str) -> Vec<(u32, String)> {
    cc_test_support::tagged(TAG_VAR, tag)
}

/// Waits for every process tagged `tag` to be gone; panics naming survivors.
pub async fn assert_no_tagged(tag: &str) {
    cc_test_support::assert_no_tagged(TAG_VAR, tag).await;
}

/// PATH's `python3` when it imports debugpy (the peers' venv); otherwise reports the missing
/// peer (a failure under CI, a loud skip locally) and returns `None`.
pub fn debugpy_python() -> Option<std::path::PathBuf> {
    cc_test_support::python_with(&["debugpy"])
}
