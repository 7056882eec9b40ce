//! Persistent Python and JavaScript interpreters whose cells can call the host's tools.
//!
//! A [`KernelFactory`] holds how kernels start (interpreter, enclosure prefix, limits); each
//! run gets a [`KernelSession`] with at most one live kernel per [`Language`]. A kernel is a
//! child process in its own process group running a small driver embedded in this crate
//! (`drivers/driver.py`, `drivers/driver.js`):
//!
//! - **Pipes.** On the host the protocol travels on fds 3 and 4; stdout and stderr are
//!   captured pipes for user output only (child processes included) and stdin is `/dev/null`,
//!   so `input()` gets end of file. Through an enclosure prefix, which passes only the three
//!   standard streams, the protocol stays on the original stdin/stdout and user output is
//!   relayed inside its frames (node runs the real driver as a child of a relay to get
//!   there), so nothing a cell prints can corrupt the protocol. After each cell the driver writes a barrier marker to stdout and
//!   stderr, so the result is returned only once the cell's output is complete.
//! - **Cells.** State persists; the last expression is echoed; `display()`, DataFrames (text
//!   and HTML) and matplotlib figures (PNG) come back; top-level `await` works (Python keeps
//!   one event loop; JavaScript uses the inspector's `replMode`). Python cells accept
//!   `%pip`, `%cd`, `%timeit`, `!cmd`, `%%bash` and `%%timeit`.
//! - **Bridge.** `tool(name, args)` in a cell (awaited in JavaScript) is answered by the
//!   [`Bridge`] given with the cell; an error raises `ToolError` with `kind` and `message`.
//! - **Budget.** A cell may be silent for [`KernelConfig::inactivity_budget`]; the timer is
//!   suspended while a bridge call runs. Then it is interrupted (SIGINT in Python, the
//!   inspector's `terminateExecution` from a watchdog thread in node), and killed with its
//!   process group after a grace period. [`CellOutcome::state`] says whether state survived.
//! - **Caps.** Each stream keeps at most [`KernelConfig::output_cap`] bytes per cell (head
//!   and tail); [`CellOutcome::truncated`] counts what was cut.
//!
//! ```no_run
//! use std::sync::Arc;
//! use cc_kernel_bridge::{CellRequest, KernelConfig, KernelFactory, Language, NoBridge};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), cc_kernel_bridge::KernelError> {
//! let session = KernelFactory::new(KernelConfig::default()).session(".");
//! let cell = |code| CellRequest { language: Language::Python, code, reset: false };
//! session.run(cell("x = 41"), Arc::new(NoBridge)).await?;
//! let outcome = session.run(cell("x + 1"), Arc::new(NoBridge)).await?;
//! assert_eq!(outcome.result.as_deref(), Some("42"));
//! session.shutdown().await;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod bridge;
mod capture;
mod config;
mod error;
mod kernel;
mod language;
mod outcome;
mod protocol;
mod scan;
mod session;
mod stream;

pub use bridge::{Bridge, BridgeError, NoBridge};
pub use config::{KernelConfig, KernelOverrides};
pub use error::{KernelError, KernelErrorKind};
pub use kernel::KernelInfo;
pub use language::Language;
pub use outcome::{CellError, CellOutcome, DisplayItem, StateStatus, Truncated};
pub use session::{CellRequest, KernelFactory, KernelSession};
