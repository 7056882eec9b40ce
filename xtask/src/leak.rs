//! Finding processes that outlived a test run.
//!
//! `cargo xtask ci` gives the test step a unique `CC_TEST_RUN=<token>`. Children inherit their
//! parent's environment, so every process a test starts carries it (unless the test cleared the
//! environment of the child it spawned). After the tests, [`reap`] scans `/proc/*/environ` for
//! the token, SIGKILLs each survivor and returns them, so the run fails with their names.
//! Tests can use the same functions with their own variable and token.

use std::path::Path;

/// The variable `cargo xtask ci` sets for the test step.
pub const TEST_RUN_VAR: &str = "CC_TEST_RUN";

/// A process that carried the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Survivor {
    /// Its process id.
    pub pid: u32,
    /// Its command line, arguments joined by spaces (`[comm]` when it has none).
    pub cmdline: String,
}

/// A token unique to this run: our pid and the time in nanoseconds.
pub fn new_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// Every live process (other than this one) whose initial environment holds `var=token`.
/// Processes we may not read, and zombies (whose environ reads empty), are skipped.
pub fn find(var: &str, token: &str) -> Vec<Survivor> {
    let needle = format!("{var}={token}").into_bytes();
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<Survivor> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_slice()))
        })
        .map(|pid| Survivor {
            pid,
            cmdline: cmdline(pid),
        })
        .collect();
    found.sort_by_key(|s| s.pid);
    found
}

fn cmdline(pid: u32) -> String {
    let proc = Path::new("/proc").join(pid.to_string());
    let raw = std::fs::read(proc.join("cmdline")).unwrap_or_default();
    let text = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        let comm = std::fs::read_to_string(proc.join("comm")).unwrap_or_default();
        format!("[{}]", comm.trim())
    } else {
        text
    }
}

/// Finds the processes carrying `var=token`, SIGKILLs them, and repeats (a survivor may fork
/// while we kill) until none is left or a few rounds have passed. Returns everyone it found.
pub fn reap(var: &str, token: &str) -> Vec<Survivor> {
    let mut all: Vec<Survivor> = Vec::new();
    for _ in 0..10 {
        let found = find(var, token);
        if found.is_empty() {
            break;
        }
        for s in &found {
            if let Ok(raw) = i32::try_from(s.pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(raw),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            if !all.iter().any(|a| a.pid == s.pid) {
                all.push(s.clone());
            }
        }
        // Let the kernel tear them down before looking again.
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    all
}

/// "N processes outlived the tests: pid 12 `sleep 30`; …"
pub fn describe(survivors: &[Survivor]) -> String {
    let list = survivors
        .iter()
        .map(|s| format!("pid {} `{}`", s.pid, s.cmdline))
        .collect::<Vec<_>>()
        .join("; ");
    format!(
        "{} process{} outlived the tests: {list}",
        survivors.len(),
        if survivors.len() == 1 { "" } else { "es" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn finds_and_kills_a_child_and_its_grandchild() {
        let var = "CC_XTASK_LEAK_TEST";
        let token = new_token();
        // A shell that starts a grandchild and is then left running.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 300 & sleep 300; true"])
            .env(var, &token)
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // Until both children have exec'd `sleep` (a forked child shows the shell's command
        // line for a moment).
        let sleeping = || {
            find(var, &token)
                .iter()
                .filter(|s| s.cmdline == "sleep 300")
                .count()
        };
        while sleeping() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let reaped = reap(var, &token);
        assert_eq!(reaped.len(), 3, "{reaped:?}");
        assert!(reaped.iter().any(|s| s.pid == child.id()));
        assert!(
            reaped.iter().any(|s| s.cmdline == "sleep 300"),
            "{reaped:?}"
        );
        assert!(describe(&reaped).starts_with("3 processes outlived the tests: pid "));
        let _ = child.wait();
        assert!(find(var, &token).is_empty());
        // Another token is never matched.
        assert!(find(var, "not-a-token").is_empty());
    }
}
