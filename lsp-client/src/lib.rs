//! Language-server client: a channel-based JSON-RPC transport, a pool that starts one
//! server per (language, root) on demand, and the diagnostics of the exact version just
//! written.
//!
//! - [`transport::Connection`]: framing on a reader and a writer task; the id counter and a
//!   pending map with per-request timeouts that cancel with `$/cancelRequest`; typed
//!   requests and notifications (lsp-types). [`process::ServerProcess`] owns the child:
//!   its process group, stderr tail and exit status.
//! - [`LanguageServer`]: initialization (UTF-8 or UTF-16 positions, versioned and pull
//!   diagnostics, rust-analyzer's server status), answers to every server request, document
//!   sync, and [`LanguageServer::diagnostics`], which waits for the diagnostics of one synced
//!   version: pulled when the server supports it (declared or registered), else the first
//!   push carrying that version, else (for servers that publish without versions) the first
//!   push after the change plus a settle window; a server that republishes only on change is
//!   "unchanged" after a quiet window once its process has stopped working; past the cap (longer while the server is indexing)
//!   the file is pending, never an empty "clean".
//! - [`ServerTable`] and [`LspConfig`]: which server covers which files, overridable by the
//!   `[lsp]` section of `.cc/tools.toml`, which the host reads and hands over typed.
//! - [`ServerPool`]: detection (marker AND binary AND a probe that runs), lazy start, idle
//!   reaping, crash-loop guard, status.
//! - [`Ledger`]: which diagnostics are new.
//! - [`kotlin`]: Kotlin diagnostics on write from JetBrains' compiler kept warm in one JVM
//!   per root (JDT LS reads Kotlin for navigation only).
//! - [`checker`]: the project checker (`basedpyright`, `tsc`, `cargo check`, `go vet`,
//!   `clang-tidy`) run over a whole project, its output read into the same [`Diagnostic`]s.
//!
//! ```
//! use cc_lsp_client::{ServerTable, ServerPool, ServerPoolOptions};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
//! let workspace = dir.path().canonicalize().unwrap();
//! let pool = ServerPool::new(&workspace, ServerTable::builtin(), ServerPoolOptions::default());
//! let checks = pool.check_written(&[workspace.join("notes.txt")]).await;
//! assert!(matches!(
//!     &checks[0].outcome,
//!     cc_lsp_client::CheckOutcome::Unchecked { reason } if reason.contains(".txt")
//! ));
//! pool.shutdown().await;
//! # }
//! ```

#![warn(missing_docs)]

pub use lsp_types;

mod capabilities;
pub mod checker;
pub mod config;
pub mod detect;
mod diagnostic;
pub mod edit_split;
mod error;
pub mod ext;
pub mod jdtls;
pub mod kotlin;
mod ledger;
pub mod missing;
pub mod policy;
mod pool;
pub mod position;
pub mod process;
pub mod requests;
mod server;
pub mod table;
pub mod transport;
pub mod uri;
pub mod workspace_edit;

pub use checker::{
    CheckerError, CheckerErrorKind, ProjectCheck, ProjectChecker, ProjectDiagnostic, ProjectTarget,
};
pub use config::{FamilyOverride, LspConfig};
pub use diagnostic::{Diagnostic, DiagnosticKey, Severity};
pub use error::{ConfigError, LspError};
pub use ledger::Ledger;
pub use pool::{
    CheckOutcome, FileCheck, LanguageStatus, ServerPool, ServerPoolOptions, ServerState, Trust,
    Unavailable, WatchSource,
};
pub use position::{locate, Located, PositionError};
pub use server::{
    ApplyEdit, DiagnosticsOutcome, LanguageServer, PositionEncoding, SyncTicket, Via, WatchedChange,
};
pub use table::{Family, ServerSpec, ServerTable, Timing};
pub use workspace_edit::{ApplyError, EditError, FileChange};
