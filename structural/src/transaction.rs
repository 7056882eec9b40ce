//! The all-or-nothing file commit lives in `cc-workspace` (one confinement layer under every
//! writer); it is re-exported here so a staged rewrite's [`Transaction`] keeps its path.
//! Commit it with [`Transaction::commit`] and the [`Workspace`] it must stay inside.

pub use cc_workspace::transaction::*;
pub use cc_workspace::Workspace;
