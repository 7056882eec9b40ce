//! Project automation behind `cargo xtask` (an alias in `.cargo/config.toml`):
//!
//! - `cargo xtask peers [--path]` — install the real peers (language servers, debug adapters,
//!   ast-grep, Jupyter, the MCP SDK) at pinned versions; `--path` prints the PATH entries that
//!   hold the project-local ones. See [`peers`]. It also installs the real third-party
//!   projects the tests run on into `.peers/projects/` (see [`projects`]).
//! - `cargo xtask ci` — what `.ci/run` runs: peers, fmt, clippy, tests, leaked-process check.
//!   See [`ci`].
//! - `cargo xtask bench [NAME...]` — benchmarks into `BENCHMARKS.md`. See [`bench`].
//! - `cargo xtask graph-keys [PROJECT...]` — the code graph's answer keys from real language
//!   servers. See [`graph_keys`].
//!
//! - [`phases`] — the rule that no function other than a test is over 100 lines, held by a
//!   unit test over the whole workspace.
//!
//! The logic lives in this library so that it is unit-tested; `main.rs` only parses arguments.

#![warn(missing_docs)]

pub mod bench;
pub mod ci;
pub mod graph_keys;
pub mod leak;
pub mod peers;
pub mod phases;
pub mod projects;
pub mod util;
