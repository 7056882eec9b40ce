//! The integration tests of `cc-harness-adapter`, one binary (each file is a module; the
//! support modules are shared).

mod common;

mod ask_user;
mod cli;
mod config_reload;
mod crash_recovery;
mod mcp_adversarial;
mod mcp_graph;
mod mcp_project_environment;
mod mcp_protocol;
mod mcp_python_client;
mod mcp_session;
mod mcp_transport_choice;
mod streamed_results;
mod tour;
mod vibe_workers;
