//! The write-ahead log folded into the index by a thread of its own, after a commit.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000
//! pages). A one-file update of a kernel-size index dirties more than that (its rows sit in
//! large indexes, a page each), so every write paid the copy back and the index's `fsync`:
//! about 40 ms of a 120 ms update of `kernel/fork.c`. The writer of a small change now only
//! asks (a large one folds its log at once); this thread checkpoints without blocking readers
//! or the next writer (`PASSIVE`), and a much higher automatic threshold stays as the
//! backstop should it fall behind.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

/// The automatic checkpoint's threshold in pages (64 MiB of 4 KiB pages): only reached when
/// the thread cannot keep up or could not start.
pub(crate) const BACKSTOP_PAGES: u32 = 16_384;

/// The thread's name, as `ps -L` and a debugger show it.
const THREAD_NAME: &str = "cc-graph-checkpoint";

/// Asks a thread, started on the first request, to checkpoint the index's log; joined on drop.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    db_path: PathBuf,
    worker: RefCell<Option<(SyncSender<()>, JoinHandle<()>)>>,
}

impl Checkpointer {
    pub(crate) fn new(db_path: &Path) -> Self {
        Checkpointer {
            db_path: db_path.to_path_buf(),
            worker: RefCell::new(None),
        }
    }

    /// Asks for a checkpoint soon; a request while one is already waiting is the same one.
    pub(crate) fn request(&self) {
        let mut worker = self.worker.borrow_mut();
        if worker.is_none() {
            *worker = spawn(&self.db_path);
        }
        let Some((nudge, _)) = worker.as_ref() else {
            return;
        };
        if let Err(TrySendError::Disconnected(())) = nudge.try_send(()) {
            // The thread could not open the index: the automatic backstop folds the log.
            if let Some((_, thread)) = worker.take() {
                let _ = thread.join();
            }
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        if let Some((nudge, thread)) = self.worker.get_mut().take() {
            // The thread finishes the checkpoint it was asked for, then sees the channel closed.
            drop(nudge);
            let _ = thread.join();
        }
    }
}

fn spawn(db_path: &Path) -> Option<(SyncSender<()>, JoinHandle<()>)> {
    let (nudge, nudged) = mpsc::sync_channel::<()>(1);
    let path = db_path.to_path_buf();
    let thread = std::thread::Builder::new()
        .name(THREAD_NAME.to_owned())
        .spawn(move || {
            let Ok(conn) = rusqlite::Connection::open(&path) else {
                return;
            };
            let _ = conn.busy_timeout(super::BUSY_TIMEOUT);
            while nudged.recv().is_ok() {
                // Busy (another run checkpoints, or a reader holds old frames) is not an
                // error: the next request, or the backstop, folds the rest.
                let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            }
        })
        .ok()?;
    Some((nudge, thread))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

    use super::*;

    const MARKER: &[u8] = b"folded-into-the-index-by-the-checkpoint-thread";

    fn holds_marker(path: &Path) -> bool {
        std::fs::read(path)
            .unwrap()
            .windows(MARKER.len())
            .any(|w| w == MARKER)
    }

    #[test]
    fn a_request_folds_the_log_into_the_index_before_drop_returns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let writer = rusqlite::Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
                 CREATE TABLE t(b BLOB);",
            )
            .unwrap();
        writer
            .execute("INSERT INTO t VALUES (?1)", [MARKER])
            .unwrap();
        assert!(!holds_marker(&path), "the commit is in the log only");
        let checkpointer = Checkpointer::new(&path);
        checkpointer.request();
        checkpointer.request();
        // Drop waits for the thread, which does what it was asked first: the writer's
        // connection is still open, so SQLite's own checkpoint at close has not run.
        drop(checkpointer);
        assert!(holds_marker(&path), "the log was not folded into the index");
        drop(writer);
    }

    #[test]
    fn a_checkpointer_never_asked_starts_no_thread() {
        let dir = tempfile::tempdir().unwrap();
        let checkpointer = Checkpointer::new(&dir.path().join("index.sqlite"));
        assert!(checkpointer.worker.borrow().is_none());
    }
}
