//! The code graph: what is here, and what depends on it.

pub mod extract;
pub mod model;

pub use model::{DefKind, Definition, FileFacts, Import, Local, Pos, RefKind, Reference};
