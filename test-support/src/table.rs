//! The process table, read from `/proc`: one scan, one rule for "gone", and the assertions
//! that no child outlives a test.
//!
//! The rule: a process is gone when `/proc/PID/stat` cannot be read or shows it exited
//! (state `Z`, a zombie waiting for its reaper, or `X`, dead). A test checks that what it
//! started was killed; who reaps it, and when, is the owner's business.
//!
//! Signals are delivered asynchronously, so every assertion here waits ("gone soon", never
//! "gone right now"), polling up to [`GONE_WITHIN`], and panics naming the survivors with
//! their command lines.

use std::time::{Duration, Instant};

use cc_process::ProcStat;

/// How long the assertions wait for processes to disappear: generous, because the machine
/// running the tests may be loaded; a passing test waits only as long as the kill takes.
pub const GONE_WITHIN: Duration = Duration::from_secs(20);

/// How often the waits look again.
const POLL: Duration = Duration::from_millis(50);

/// Whether `pid` is a live process (a zombie, exited but not reaped, counts as gone).
pub fn process_alive(pid: u32) -> bool {
    ProcStat::read(pid).is_some_and(|stat| stat.is_live())
}

/// Every live process: the one `/proc` scan, as (pid, its stat).
fn live_processes() -> Vec<(u32, ProcStat)> {
    cc_process::pids()
        .filter_map(|pid| Some((pid, ProcStat::read(pid)?)))
        .filter(|(_, stat)| stat.is_live())
        .collect()
}

/// The command line of `pid`, arguments joined by spaces (empty when it is gone).
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            String::from_utf8_lossy(&raw)
                .replace('\0', " ")
                .trim_end()
                .to_owned()
        })
        .unwrap_or_default()
}

/// The live processes of process group `pgid`.
pub fn live_group_members(pgid: u32) -> Vec<u32> {
    live_processes()
        .into_iter()
        .filter(|(_, stat)| stat.pgrp == pgid)
        .map(|(pid, _)| pid)
        .collect()
}

/// A field of `/proc/self/status` (`Umask`, `VmHWM`, …), its value as written there.
/// Panics when the file or the field is missing: a test that asks for it cannot go on.
fn own_status(field: &str) -> String {
    let status = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_else(|error| panic!("cannot read /proc/self/status: {error}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .map(|value| value.trim().to_owned())
        .unwrap_or_else(|| panic!("/proc/self/status has no {field}"))
}

/// This process's umask, read from `/proc/self/status` (reading it this way, unlike
/// `umask(2)`, changes nothing).
pub fn umask() -> u32 {
    let value = own_status("Umask");
    u32::from_str_radix(&value, 8).unwrap_or_else(|_| panic!("Umask is not octal: {value}"))
}

/// The peak resident memory of this process in KiB (`VmHWM`; each nextest test is its own
/// process).
pub fn peak_rss_kib() -> u64 {
    let value = own_status("VmHWM");
    value
        .split_whitespace()
        .next()
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("VmHWM is not a size in kB: {value}"))
}

/// A value unique to this test process and call, for tagging: put `VAR=tag` in the
/// environment of what a test starts (children inherit it), and [`tagged`] finds them all.
pub fn unique_tag(test: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{test}-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// The live processes whose environment holds `var=value`, with their command lines.
pub fn tagged(var: &str, value: &str) -> Vec<(u32, String)> {
    let needle = format!("{var}={value}").into_bytes();
    live_processes()
        .into_iter()
        .filter(|(pid, _)| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|kv| kv == needle.as_slice()))
        })
        .map(|(pid, _)| (pid, cmdline(pid)))
        .collect()
}

/// Polls the processes tagged `var=value` until `enough` holds for them (a process in the
/// middle of `exec` may briefly not show), up to [`GONE_WITHIN`]; returns the last look
/// either way, for the caller to assert on.
pub async fn wait_for_tagged(
    var: &str,
    value: &str,
    enough: impl Fn(&[(u32, String)]) -> bool,
) -> Vec<(u32, String)> {
    let mut seen = tagged(var, value);
    poll(GONE_WITHIN, || {
        seen = tagged(var, value);
        enough(&seen)
    })
    .await;
    seen
}

/// Waits up to `timeout` for `pid` to be gone, blocking the thread; true when it is.
pub fn wait_until_gone(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if !process_alive(pid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Waits up to `timeout` for `pid` to be gone, without blocking the runtime; true when it is.
pub async fn wait_gone(pid: u32, timeout: Duration) -> bool {
    poll(timeout, || !process_alive(pid)).await
}

/// Polls `done` until it holds or `timeout` passes; whether it held.
async fn poll(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits up to [`GONE_WITHIN`] for each of `pids` to be gone; panics naming the survivors.
pub async fn assert_gone(pids: &[u32]) {
    if poll(GONE_WITHIN, || pids.iter().all(|pid| !process_alive(*pid))).await {
        return;
    }
    let alive: Vec<(u32, String)> = pids
        .iter()
        .filter(|pid| process_alive(**pid))
        .map(|pid| (*pid, cmdline(*pid)))
        .collect();
    panic!("processes outlived the test: {alive:?}");
}

/// Waits up to [`GONE_WITHIN`] until no live process is left in group `pgid`; panics naming
/// the survivors.
pub async fn assert_group_gone(pgid: u32) {
    if poll(GONE_WITHIN, || live_group_members(pgid).is_empty()).await {
        return;
    }
    let alive: Vec<(u32, String)> = live_group_members(pgid)
        .into_iter()
        .map(|pid| (pid, cmdline(pid)))
        .collect();
    panic!("processes of group {pgid} survived: {alive:?}");
}

/// Waits up to [`GONE_WITHIN`] until no live process carries `var=value` in its environment;
/// panics naming the survivors.
pub async fn assert_no_tagged(var: &str, value: &str) {
    if poll(GONE_WITHIN, || tagged(var, value).is_empty()).await {
        return;
    }
    panic!(
        "processes tagged {var}={value} outlived the test: {:?}",
        tagged(var, value)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_in_its_group() {
        let me = std::process::id();
        assert!(process_alive(me));
        // This test binary is named after the crate.
        assert!(cmdline(me).contains("cc_test_support"), "{}", cmdline(me));
        let pgid = ProcStat::read(me).expect("own stat").pgrp;
        assert!(live_group_members(pgid).contains(&me));
    }

    #[test]
    fn own_status_fields_parse() {
        assert!(umask() <= 0o777);
        assert!(peak_rss_kib() > 0);
    }

    #[test]
    fn a_zombie_counts_as_gone() {
        // Not waited for: it stays a zombie until the Child is waited or dropped.
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = child.id();
        assert!(
            wait_until_gone(pid, GONE_WITHIN),
            "the zombie counts as alive"
        );
        assert!(
            ProcStat::read(pid).is_some(),
            "not a zombie: already reaped"
        );
        child.wait().expect("reap");
    }

    #[test]
    fn tagged_finds_children_by_their_environment() {
        let tag = unique_tag("table");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("CC_PROCESS_TEST_TAG", &tag)
            .spawn()
            .expect("spawn sleep");
        // The parent resumes from a vfork-style spawn before the kernel has set the new
        // image's environment, so the first look may see nothing yet.
        let deadline = Instant::now() + GONE_WITHIN;
        let mut found = tagged("CC_PROCESS_TEST_TAG", &tag);
        while found.is_empty() && Instant::now() < deadline {
            std::thread::sleep(POLL);
            found = tagged("CC_PROCESS_TEST_TAG", &tag);
        }
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, child.id());
        assert_eq!(found[0].1, "sleep 30");
        child.kill().expect("kill");
        child.wait().expect("reap");
        assert!(tagged("CC_PROCESS_TEST_TAG", &tag).is_empty());
    }
}
