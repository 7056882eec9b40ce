//! `vibe_*`: background workers the agent briefs, waits for, re-briefs and stops.
//!
//! All five tools are read tier: the gate belongs on the worker's own tools, where the editing
//! happens. A [`WorkerBackend`] runs one brief to completion (in `cc-harness`, a command per
//! tier that reads the brief on stdin); the [`Roster`] tracks the run's workers, and stopping
//! a worker drops its run, which kills whatever the backend started.

mod roster;
mod tools;

pub use roster::{Roster, WorkerBackend, WorkerSnapshot, WorkerState, WorkerTier};
pub use tools::{register, VibeListReport};
