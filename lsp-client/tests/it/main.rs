//! The integration tests of `cc-lsp-client`, one binary (each file is a module; the
//! support modules are shared).

mod common;

mod checker;
mod lifecycle;
mod protocol;
mod quiet_rule;
mod servers;
mod versionless_publish;
mod watched;
