//! The integration tests of `cc-dap-client`, one binary (each file is a module; the
//! support modules are shared).

mod support;

mod client_memory;
mod detection;
mod edge_cases;
mod lifetime;
