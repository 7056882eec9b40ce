//! Test support for every crate of the workspace (`publish = false`; only
//! `[dev-dependencies]` take it).
//!
//! One home for what tests of every crate need:
//!
//! - **the process table** ([`table`]): one `/proc` scan and one rule for "gone" (a process
//!   that has exited counts as gone even while it waits, a zombie, for its reaper), and the
//!   assertions that no child outlives a test: [`assert_gone`], [`assert_group_gone`],
//!   [`assert_no_tagged`];
//! - **peers** ([`peers`]): [`require_peer`], [`python_with`], [`missing_peer`]. Locally a
//!   missing peer skips the test loudly; when the `CI` environment variable is set, it fails
//!   the test with a message naming the peer and how to install it;
//! - **real projects**: [`real_project`] and [`copy_project`], the trees `cargo xtask peers`
//!   installs, copied to a private temporary folder per test;
//! - **folders** ([`files`]): [`copy_tree`], [`tree_snapshot`] to compare a tree byte for
//!   byte before and after, and the symlink [`FlipRace`] confinement tests run against.
//!
//! ```
//! use cc_test_support::{require_peer, tree_snapshot};
//!
//! # fn main() -> std::io::Result<()> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("a.txt"), "a")?;
//! let before = tree_snapshot(dir.path());
//! assert_eq!(before, tree_snapshot(dir.path()));
//! if let Some(python) = require_peer("python3") {
//!     assert!(python.is_absolute());
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod files;
pub mod peers;
pub mod table;

pub use files::{copy_tree, tree_snapshot, FlipRace};
pub use peers::{copy_project, missing_peer, python_with, real_project, require_peer, ProjectCopy};
pub use table::{
    assert_gone, assert_group_gone, assert_no_tagged, cmdline, live_group_members, peak_rss_kib,
    process_alive, tagged, umask, unique_tag, wait_for_tagged, wait_gone, wait_until_gone,
    GONE_WITHIN,
};
