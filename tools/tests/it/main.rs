//! The integration tests of `cc-tools`, one binary (each file is a module; the
//! support modules are shared).

mod debug_support;
mod lsp_support;

mod ask_user;
mod behind_the_run;
mod debug_attach;
mod debug_native;
mod debug_projects;
mod debug_python;
mod debug_text_agent;
mod debug_tool;
mod fs_bounds;
mod fs_tools;
mod graph_precise;
mod lsp_checker;
mod lsp_nav;
mod lsp_nav_real;
mod lsp_read_only;
mod lsp_real_projects;
mod lsp_rename;
mod lsp_tools;
mod project_environment;
mod registry;
