//! Language-server client: transport, supervisor, diagnostics on write.
//!
//! Filled in by the language-server issues; see `README.md`.
