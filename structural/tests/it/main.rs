//! The integration tests of `cc-structural`, one binary (each file is a module; the
//! support modules are shared).

#[macro_use]
mod common;

mod declarations;
mod hardening;
mod languages;
mod rewrite;
mod search;
mod self_match;
mod semantics;
mod sequences;
mod transaction;
