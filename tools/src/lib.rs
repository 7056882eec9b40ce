//! The tool layer between code-intelligence crates and an agent.
//!
//! - A [`Tool`] has a name, a [`Tier`] (`read`, `write`, `exec`), a description, a JSON
//!   schema for its arguments, and says whether calls may run in parallel.
//! - A [`Run`] is one conversation: a [`WorkspaceRoot`] every path must stay inside, the
//!   [`Surface`] the agent sees (`full`, `plan`, `readonly_subagent`) and an [`Approver`].
//! - A [`Registry`] is built from the [`Resources`] wired for the run: a tool whose
//!   resource is absent is not registered. [`Registry::schemas`] lists what a surface may
//!   see; dispatch refuses a hidden tool called by name, asks the approver about every
//!   write- and exec-tier call (from the model or from a kernel's bridge), serializes tools
//!   that are not parallel-safe, and passes written paths to the diagnostics hook.
//! - A result too large to hold as a `Value` keeps its big array serialized ([`spool`]):
//!   [`Registry::call_spooled`] hands it over as it is, for a caller that writes it out
//!   ([`ToolOutput::json_pieces`]); every other call gets the whole `Value`.
//!
//! ```
//! use std::sync::Arc;
//! use cc_tools::{AllowAll, Resources, Run, Surface, WorkspaceRoot};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let run = Run {
//!     conversation_id: "demo".into(),
//!     root: WorkspaceRoot::new(dir.path())?,
//!     surface: Surface::Plan,
//!     approver: Arc::new(AllowAll),
//! };
//! let registry = Resources { host_files: true, ..Default::default() }.build(run);
//! let visible: Vec<String> = registry.schemas(Surface::Plan).into_iter().map(|s| s.name).collect();
//! assert_eq!(visible, ["read"]);
//! let refused = registry.call("write", serde_json::json!({"path": "a.txt", "content": "x"})).await;
//! assert_eq!(refused.unwrap_err().kind(), "not_available");
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod approve;
pub mod ask_user;
mod cancel;
mod commit;
pub mod debug;
pub mod error;
pub mod eval;
pub mod fs;
pub mod graph;
mod left_out;
pub mod lsp;
pub mod notices;
mod own_writes;
pub mod registry;
pub mod report;
pub mod resources;
pub mod root;
pub mod spool;
pub mod structural;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod tier;
pub mod tool;
pub mod vibe;

pub use approve::{AllowAll, Approval, ApprovalRequest, Approver, DenyAll};
pub use cancel::Cancellation;
pub use error::{ErrorKind, ToolError};
pub use notices::{Notice, Notices};
pub use registry::{
    AfterWrite, CallOptions, PlannedWrite, Registry, RegistryBuilder, Run, Shutdown, ToolSchema,
};
pub use resources::Resources;
pub use root::WorkspaceRoot;
pub use spool::{JsonLayout, JsonPieces, JsonSpool, SpooledArray};
pub use tier::{Surface, Tier};
pub use tool::{
    parse_args, schema_for, BridgeHandle, CallContext, Image, Origin, ProgressSink, Tool,
    ToolOutput,
};

/// The file the harness reads its settings from, relative to the workspace root. The crates
/// below never name it: their messages point at a setting through the
/// [`cc_workspace::SettingsPlace`] the host hands them, made by [`settings_place`].
pub const SETTINGS_FILE: &str = ".cc/tools.toml";

/// What makes a fixed `[lsp]` section, or a server turned off, take effect within a run.
pub const LSP_RELOAD: &str = "call `lsp reload`";

/// The section `section` of [`SETTINGS_FILE`].
pub fn settings_place(section: &str) -> cc_workspace::SettingsPlace {
    let place = cc_workspace::SettingsPlace::new(section).in_file(SETTINGS_FILE);
    match section {
        // `lsp reload` applies the section again, and restarts a server turned off.
        "lsp" => place.reloaded_by(LSP_RELOAD),
        _ => place,
    }
}
