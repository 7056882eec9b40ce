//! How much a process group is working, from Linux's `/proc`: the CPU time its members have
//! used and whether one of them is running or waiting to run. A server that answers only
//! when something changed (gopls republishes diagnostics only when they differ) is taken at
//! its silence only once it has stopped working; a silence while it still computes, on a
//! loaded machine, is no answer.

use crate::stat::{pids, ProcStat};

/// What the members of one process group are doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupUsage {
    /// CPU time used, in clock ticks (`USER_HZ`, 100 per second on Linux): user and system
    /// time of every live member, and of the children each has reaped.
    pub ticks: u64,
    /// A member is running, waiting for a CPU, or in uninterruptible I/O (`R`, `D`).
    pub runnable: bool,
}

/// The usage of the process group `pgid`, or `None` when its leader is gone or `/proc` is
/// not readable (not Linux).
pub fn group_usage(pgid: u32) -> Option<GroupUsage> {
    // The leader first: a group whose leader is gone is not watched (its members may be
    // orphans of another owner by now).
    let leader = ProcStat::read(pgid)?;
    if leader.pgrp != pgid {
        return None;
    }
    let mut usage = GroupUsage {
        ticks: 0,
        runnable: false,
    };
    for stat in pids().filter_map(ProcStat::read) {
        if stat.pgrp == pgid {
            usage.ticks += stat.cpu_ticks;
            usage.runnable |= matches!(stat.state, 'R' | 'D');
        }
    }
    Some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_busy_group_uses_cpu_and_an_idle_one_does_not() {
        let mut busy = tokio::process::Command::new("sh");
        busy.args(["-c", "while :; do :; done"]);
        let busy = crate::spawn_group(busy).unwrap();
        let mut idle = tokio::process::Command::new("sleep");
        idle.arg("30");
        let idle = crate::spawn_group(idle).unwrap();
        let (busy_pid, idle_pid) = (busy.id(), idle.id());
        let before = (
            group_usage(busy_pid).unwrap(),
            group_usage(idle_pid).unwrap(),
        );
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        let after = (
            group_usage(busy_pid).unwrap(),
            group_usage(idle_pid).unwrap(),
        );
        assert!(after.0.ticks > before.0.ticks, "{before:?} {after:?}");
        assert_eq!(after.1.ticks, before.1.ticks, "{before:?} {after:?}");
        assert!(!after.1.runnable);
        drop((busy, idle));
        assert_eq!(group_usage(999_999_999), None);
    }
}
