//! A Debug Adapter Protocol client for coding agents: one supervised debug session at a
//! time against real adapters (debugpy, lldb-dap, delve, dart).
//!
//! - [`protocol`]: DAP messages as serde types; typed requests through [`protocol::Request`].
//! - [`Client`]: one connection over [`cc_framing`]; responses correlated by `request_seq`,
//!   events on a channel, reverse requests (`runInTerminal`, `startDebugging`) answered with
//!   `success: false`, never left hanging.
//! - [`DebugSession`]: the session. Its launch sequence works with every adapter:
//!   `initialize` → `launch`/`attach` *without awaiting its response* → the `initialized`
//!   event (before or after that response) → `setBreakpoints` per file,
//!   `setExceptionBreakpoints` → `configurationDone` → the launch response (debugpy answers
//!   `launch` only after `configurationDone`). Every wait also ends when the program exits or
//!   the adapter dies, and at a timeout. One session at a time; a hard TTL (30 minutes by
//!   default) after which every process of the session is killed. Results are capped: 30
//!   frames, 50 children, values of 400 characters, output in a ring buffer.
//! - Frame ids and variables references are the session's own numbers, valid until the
//!   program next resumes; an older one is refused (`stale_reference`), never answered with
//!   another object's data. A result that reports a stop carries the frame's source and
//!   locals.
//! - [`plan`]: what `launch` starts — a program, a Python module, or a test (pytest under
//!   debugpy, go test under delve, cargo test under lldb-dap, built first), named as its
//!   runner names it ([`LaunchRequest`]). Waits take an [`Interrupt`] (a cancelled call).
//! - [`detect`]: the adapter table and its detection (root marker AND binary resolves AND
//!   it runs), overridable through the `[debug]` section of `.cc/tools.toml`
//!   ([`DebugConfig`], which the host deserializes and hands over; this crate reads no file).
//!
//! Every process is started through [`cc_process::spawn_group`]; debuggees that adapters
//! put in process groups of their own are tracked through `/proc` and killed with the
//! session.
//!
//! ```no_run
//! use cc_dap_client::{Action, DebugConfig, DebugSession};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), cc_dap_client::DebugError> {
//! let root = std::path::Path::new("/path/to/checkout");
//! let debug = DebugSession::new(root, DebugConfig::default());
//! debug.set_breakpoints(&root.join("app.py"), &[12]).await?;
//! let started = debug.launch(&root.join("app.py"), &[], None).await?;
//! if let Some(stop) = &started.position.stopped {
//!     println!("stopped at {:?}:{:?}", stop.file, stop.line);
//!     let value = debug.evaluate("total", None).await?;
//!     println!("total = {}", value.result);
//! }
//! debug.act(Action::StepOver, None).await?;
//! debug.terminate().await;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod adapters;
mod capture;
mod client;
pub mod config;
mod debug_session;
pub mod detect;
mod error;
mod interrupt;
pub mod origin;
pub mod plan;
pub mod proctree;
pub mod protocol;
pub mod report;
mod ring;
mod session;
mod state;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;

pub use adapters::{launch_arguments, pick_adapter, AdapterKind};
pub use client::{parse_body, Client, PendingResponse};
pub use config::{AdapterOverride, DebugConfig, Settings, StopDetail};
pub use debug_session::DebugSession;
pub use detect::AdapterStatus;
pub use error::{ClientError, DebugError, DebugErrorKind};
pub use interrupt::Interrupt;
pub use plan::{LaunchRequest, LaunchTarget};
pub use ring::OutputRing;
pub use session::Action;
