//! Debug-adapter client: launch sequence, sessions, caps.
//!
//! Filled in by the debugger issue; see `README.md`.
