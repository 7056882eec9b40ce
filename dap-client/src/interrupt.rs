//! [`Interrupt`]: how a caller ends a wait early (its call was cancelled).

use std::future::Future;
use std::pin::Pin;

/// Fires when the caller gives up on the operation (an MCP `notifications/cancelled`, say).
/// A blocking operation (`launch`, `continue`, the steps) that sees it returns at once with
/// [`DebugError::Cancelled`](crate::DebugError::Cancelled); the session stays usable.
pub struct Interrupt {
    signal: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    fired: bool,
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupt")
            .field("armed", &self.signal.is_some())
            .field("fired", &self.fired)
            .finish()
    }
}

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt::never()
    }
}

impl Interrupt {
    /// An interrupt that never fires.
    pub fn never() -> Self {
        Interrupt {
            signal: None,
            fired: false,
        }
    }

    /// An interrupt that fires when `signal` completes.
    pub fn new(signal: impl Future<Output = ()> + Send + 'static) -> Self {
        Interrupt {
            signal: Some(Box::pin(signal)),
            fired: false,
        }
    }

    /// Completes once the interrupt has fired (at once if it already has); never without a
    /// signal.
    pub async fn fired(&mut self) {
        if self.fired {
            return;
        }
        match self.signal.as_mut() {
            Some(signal) => {
                signal.await;
                self.fired = true;
            }
            None => std::future::pending().await,
        }
    }

    /// Whether it has fired (as far as anyone has waited on it).
    pub fn has_fired(&self) -> bool {
        self.fired
    }

    /// Runs `work` unless the interrupt fires first (`None` then).
    pub async fn guard<T>(&mut self, work: impl Future<Output = T>) -> Option<T> {
        tokio::select! {
            biased;
            () = self.fired() => None,
            value = work => Some(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn guards_until_fired() {
        let mut never = Interrupt::never();
        assert_eq!(never.guard(async { 3 }).await, Some(3));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let mut interrupt = Interrupt::new(async move {
            let _ = rx.await;
        });
        assert_eq!(interrupt.guard(async { 1 }).await, Some(1));
        tx.send(()).unwrap();
        assert_eq!(interrupt.guard(std::future::pending::<i32>()).await, None);
        assert!(interrupt.has_fired());
        assert_eq!(interrupt.guard(async { 2 }).await, None, "stays fired");
    }
}
