//! Child processes that cannot outlive their owner.
//!
//! Every language server, debug adapter, kernel and worker this workspace starts goes
//! through [`spawn_group`], which:
//!
//! - puts the child in a **process group of its own**, so that killing the group also kills
//!   whatever the child started (tsserver under typescript-language-server, the debuggee
//!   under a debug adapter, a shell's pipeline under a kernel);
//! - asks Linux to send the child **SIGKILL when its parent dies** (`PR_SET_PDEATHSIG`), so a
//!   host killed with SIGKILL still leaves nothing behind;
//! - returns a [`GroupChild`] that **kills the whole group when dropped**, and offers
//!   [`GroupChild::terminate`]: SIGTERM to the group, a grace period, then SIGKILL.
//!
//! A note on `PR_SET_PDEATHSIG`: Linux delivers it when the *thread* that forked the child
//! exits, not the process. Spawn from an async task on a runtime worker or from a long-lived
//! thread, never from a short-lived helper thread (tokio's blocking pool reclaims idle threads).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use std::time::Duration;
//! let mut command = tokio::process::Command::new("sleep");
//! command.arg("30");
//! let mut child = cc_process::spawn_group(command)?;
//! // ... talk to it ...
//! let status = child.terminate(Duration::from_secs(2)).await?;
//! assert!(!status.success());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod group;
mod path;
mod stat;
mod usage;

pub use group::{spawn_group, GroupChild};
pub use path::{find_all_in, find_all_on_path, find_on_path, is_executable};
pub use stat::{pids, ProcStat};
pub use usage::{group_usage, GroupUsage};

/// Locks `mutex`, going on with the data when a thread panicked while holding it: every lock
/// of this workspace guards state that stays consistent between statements (a map, a slot,
/// a list), so a panic elsewhere must not turn into a second panic here.
pub fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads `rwlock`, going on with the data when a writer panicked (see [`lock`]).
pub fn read<T>(rwlock: &std::sync::RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    rwlock
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes `rwlock`, going on with the data when a writer panicked (see [`lock`]).
pub fn write<T>(rwlock: &std::sync::RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    rwlock
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
