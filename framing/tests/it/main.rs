//! The integration tests of `cc-framing`, one binary (each file is a module; the
//! support modules are shared).

mod decoder;
mod io;
mod properties;
