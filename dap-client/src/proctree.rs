//! Every process a session started, and killing all of them.
//!
//! Killing the adapter's process group is not enough: lldb-dap puts `lldb-server` and the
//! debuggee in process groups of their own, and debugpy's launcher does the same for the
//! Python it debugs. So the tracker remembers the adapter's descendants (read from `/proc`
//! while the adapter lives: once it dies they are reparented and no longer findable) and the
//! debuggee's pid from the `process` event. A process is named by its pid *and* start time,
//! so a recycled pid is never signalled.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use cc_process::{pids, ProcStat};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

/// A process: its pid and its start time (clock ticks after boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProcId {
    /// The pid.
    pub pid: u32,
    /// Field 22 of `/proc/PID/stat`.
    pub start: u64,
}

/// The process `pid` as it is now, if it exists.
pub fn identify(pid: u32) -> Option<ProcId> {
    ProcStat::read(pid).map(|s| ProcId {
        pid,
        start: s.start,
    })
}

/// Whether `id` still runs: the same process (start time) and not a zombie.
pub fn is_alive(id: ProcId) -> bool {
    ProcStat::read(id.pid).is_some_and(|s| s.start == id.start && s.is_live())
}

/// Every live descendant of the processes `roots` (not the roots themselves).
pub fn descendants(roots: &[u32]) -> Vec<ProcId> {
    let mut children: HashMap<u32, Vec<(u32, ProcStat)>> = HashMap::new();
    for pid in pids() {
        if let Some(s) = ProcStat::read(pid) {
            children.entry(s.ppid).or_default().push((pid, s));
        }
    }
    let mut found = Vec::new();
    let mut queue: Vec<u32> = roots.to_vec();
    let mut seen: BTreeSet<u32> = roots.iter().copied().collect();
    while let Some(parent) = queue.pop() {
        for (pid, s) in children.get(&parent).into_iter().flatten() {
            if seen.insert(*pid) {
                queue.push(*pid);
                if s.is_live() {
                    found.push(ProcId {
                        pid: *pid,
                        start: s.start,
                    });
                }
            }
        }
    }
    found
}

/// The process that listens on TCP `port` (IPv4 or IPv6), found through `/proc/net/tcp*`
/// and the processes' socket descriptors. Used to know the adapter a listening debugpy runs
/// for its program: it daemonizes, so it is not below the program in the process tree.
pub fn listener_owner(port: u16) -> Option<u32> {
    const LISTEN: &str = "0A";
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let local_port = local
                .rsplit(':')
                .next()
                .and_then(|hex| u16::from_str_radix(hex, 16).ok());
            if local_port == Some(port) && *state == LISTEN {
                inodes.push(format!("socket:[{inode}]"));
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    for pid in pids() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if inodes
                    .iter()
                    .any(|inode| target.as_os_str() == inode.as_str())
                {
                    return Some(pid);
                }
            }
        }
    }
    None
}

/// The processes of one session: the adapter (leader of its own group) and everything seen
/// below it.
#[derive(Debug)]
pub struct Tracker {
    adapter: Option<ProcId>,
    known: Mutex<BTreeSet<ProcId>>,
    /// Set once the adapter was waited for: its pid may be recycled from then on.
    reaped: AtomicBool,
    last_refresh: Mutex<Option<std::time::Instant>>,
}

impl Tracker {
    /// A tracker for the adapter process `adapter_pid` (the leader of its group), or for an
    /// adapter that is not ours (`None`: only the processes added later are tracked).
    pub fn new(adapter_pid: Option<u32>) -> Self {
        Tracker {
            adapter: adapter_pid.and_then(identify),
            known: Mutex::new(BTreeSet::new()),
            reaped: AtomicBool::new(false),
            last_refresh: Mutex::new(None),
        }
    }

    /// The adapter's pid.
    pub fn adapter_pid(&self) -> Option<u32> {
        self.adapter.map(|a| a.pid)
    }

    /// Records that the adapter was waited for.
    pub fn mark_reaped(&self) {
        self.reaped.store(true, Ordering::SeqCst);
    }

    fn known(&self) -> std::sync::MutexGuard<'_, BTreeSet<ProcId>> {
        cc_process::lock(&self.known)
    }

    fn adapter_alive(&self) -> Option<ProcId> {
        self.adapter
            .filter(|a| !self.reaped.load(Ordering::SeqCst) && is_alive(*a))
    }

    /// Like [`refresh`](Self::refresh), at most once a second: a scan of `/proc` costs about
    /// a millisecond, more than a native step takes.
    pub fn refresh_now_and_then(&self) {
        let now = std::time::Instant::now();
        {
            let mut last = cc_process::lock(&self.last_refresh);
            if last.is_some_and(|at| now.duration_since(at) < std::time::Duration::from_secs(1)) {
                return;
            }
            *last = Some(now);
        }
        self.refresh();
    }

    /// Remembers the adapter's current descendants.
    pub fn refresh(&self) {
        let mut roots: Vec<u32> = self.adapter_alive().map(|a| a.pid).into_iter().collect();
        let mut known = self.known();
        known.retain(|p| is_alive(*p));
        roots.extend(known.iter().map(|p| p.pid));
        known.extend(descendants(&roots));
    }

    /// Remembers one more process (the debuggee, from the `process` event).
    pub fn add_pid(&self, pid: u32) {
        if let Some(id) = identify(pid) {
            self.known().insert(id);
        }
    }

    /// Every tracked process still alive, adapter included.
    pub fn alive(&self) -> Vec<ProcId> {
        let mut alive: Vec<ProcId> = self.adapter_alive().into_iter().collect();
        alive.extend(self.known().iter().copied().filter(|p| is_alive(*p)));
        alive
    }

    /// Every pid the tracker knows of, alive or not (for tests and status).
    pub fn all_known(&self) -> Vec<ProcId> {
        let mut all: Vec<ProcId> = self.adapter.into_iter().collect();
        all.extend(self.known().iter().copied());
        all
    }

    /// SIGKILLs every tracked process and every descendant of them, freezing the tree first
    /// (SIGSTOP) so nothing can fork while it is being collected.
    pub fn kill_all(&self) {
        let mut all: BTreeSet<ProcId> = self.alive().into_iter().collect();
        for _ in 0..5 {
            let roots: Vec<u32> = all.iter().map(|p| p.pid).collect();
            let before = all.len();
            all.extend(descendants(&roots));
            for p in &all {
                if is_alive(*p) {
                    let _ = kill(to_pid(p.pid), Signal::SIGSTOP);
                }
            }
            if all.len() == before {
                break;
            }
        }
        if let Some(adapter) = self.adapter_alive() {
            let _ = killpg(to_pid(adapter.pid), Signal::SIGKILL);
        }
        for p in &all {
            if !is_alive(*p) {
                continue;
            }
            let leads_group = ProcStat::read(p.pid).is_some_and(|s| s.pgrp == p.pid);
            let _ = kill(to_pid(p.pid), Signal::SIGKILL);
            if leads_group {
                let _ = killpg(to_pid(p.pid), Signal::SIGKILL);
            }
        }
        self.known().extend(all);
    }
}

/// "exit code 0", "signal 6 (SIGABRT)".
pub(crate) fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    match status.signal() {
        Some(signal) => {
            let name = nix::sys::signal::Signal::try_from(signal)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            format!("signal {signal}{name}")
        }
        None => status.to_string(),
    }
}

fn to_pid(pid: u32) -> Pid {
    Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_who_listens_on_a_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listener_owner(port), Some(std::process::id()));
        drop(listener);
        assert_eq!(listener_owner(port), None);
    }

    #[test]
    fn reads_our_own_process() {
        let me = identify(std::process::id()).expect("we exist");
        assert!(is_alive(me));
        assert!(!is_alive(ProcId {
            pid: me.pid,
            start: me.start + 1
        }));
    }
}
