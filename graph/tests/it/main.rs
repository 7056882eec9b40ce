//! The integration tests of `cc-graph`, one binary (each file is a module; the
//! support modules are shared).

mod common;

mod accuracy;
mod c_headers;
mod cancelled_build;
mod checkpoint;
mod concurrent_runs;
mod incremental;
mod precise;
mod resolution;
mod symbols;
mod typed_receivers;
