//! The integration tests of `cc-dap-client`, one binary (each file is a module; their
//! helpers are `cc_dap_client::testing`, shared with the tests of the crates above).

mod client_memory;
mod detection;
mod edge_cases;
mod lifetime;
