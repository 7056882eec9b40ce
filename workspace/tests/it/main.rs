//! The integration tests of `cc-workspace`, one binary (each file is a module; the
//! support modules are shared).

mod crash_points;
mod flip_race;
mod kill9;
