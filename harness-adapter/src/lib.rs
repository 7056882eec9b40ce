//! The `cc-harness` binary's library half: configuration, wiring of a run's resources, the
//! MCP server, and the embedding API for Rust hosts.

#![warn(missing_docs)]

pub mod config;
pub mod embed;
pub mod mcp;
pub mod questions;
pub mod run;
pub mod status;
pub mod tour;
pub mod wiring;
pub mod workers;

pub use run::{build_registry, RunOptions, RunSetup, SetupError};
