//! The integration tests of `cc-kernel-bridge`, one binary (each file is a module; the
//! support modules are shared).

mod common;

mod javascript;
mod python;
