//! Cooperative cancellation of one call (MCP `notifications/cancelled`).
//!
//! Aborting a call's future stops its async work, but not what it handed to other threads
//! (a parallel search, a running kernel cell, a debug wait on an adapter). A [`Cancellation`]
//! is what such work checks: a flag for loops on blocking threads and a future for async
//! waits. Bridge calls made from inside a call share its cancellation.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
}

/// A cancellation signal shared by a call and everything it started. Cheap to clone.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let cancel = cc_tools::Cancellation::new();
/// let flag = cancel.flag();
/// assert!(!cancel.is_cancelled());
/// cancel.cancel();
/// cancel.cancelled().await; // returns at once once cancelled
/// assert!(flag.load(std::sync::atomic::Ordering::Relaxed));
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    inner: Arc<Inner>,
    /// The same flag, shareable with crates that know nothing of this type.
    flag: Arc<AtomicBool>,
}

impl Cancellation {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal (idempotent).
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether it has fired.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// The flag as a plain `AtomicBool`, for blocking loops in lower crates.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// Completes when the signal fires (at once if it has).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}
