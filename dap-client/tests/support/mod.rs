//! Process-table checks shared by the integration tests.

#![allow(dead_code)]

use std::time::Duration;

/// A tag unique to this test: put in the environment of every adapter a supervisor starts
/// (debuggees inherit it), so the process table can be searched for leftovers.
pub fn unique_tag(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{test}-{}-{nanos}", std::process::id())
}

pub const TAG_VAR: &str = "CC_DAP_TEST_TAG";

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rfind(')')
                .map(|i| s[i + 1..].trim_start().starts_with(['Z', 'X']))
        })
        .unwrap_or(true)
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
        .unwrap_or_default()
}

/// Live (non-zombie) processes whose environment holds `CC_DAP_TEST_TAG=tag`.
pub fn tagged(tag: &str) -> Vec<(u32, String)> {
    let needle = format!("{TAG_VAR}={tag}").into_bytes();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|kv| kv == needle.as_slice()) && !is_zombie(pid) {
            found.push((pid, cmdline(pid)));
        }
    }
    found
}

/// Whether `pid` is gone (or a zombie waiting for its reaper).
pub fn gone(pid: u32) -> bool {
    is_zombie(pid)
}

/// Waits up to 20 s for every process tagged `tag` to be gone; panics naming survivors.
pub async fn assert_no_tagged(tag: &str) {
    for _ in 0..200 {
        if tagged(tag).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("processes outlived the session: {:?}", tagged(tag));
}

/// Waits up to 20 s for each pid to be gone; panics naming survivors.
pub async fn assert_gone(pids: &[u32]) {
    for _ in 0..200 {
        if pids.iter().all(|p| gone(*p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let alive: Vec<(u32, String)> = pids
        .iter()
        .filter(|p| !gone(**p))
        .map(|p| (*p, cmdline(*p)))
        .collect();
    panic!("processes outlived the session: {alive:?}");
}

/// PATH's `python3` when it imports debugpy (the peers' venv); otherwise reports the missing
/// peer (a failure under CI, a loud skip locally) and returns `None`.
pub fn debugpy_python() -> Option<std::path::PathBuf> {
    let python = cc_process::testing::require_peer("python3")?;
    let imports = std::process::Command::new(&python)
        .args(["-c", "import debugpy"])
        .status()
        .is_ok_and(|status| status.success());
    if !imports {
        cc_process::testing::missing_peer("debugpy", "PATH's python3 cannot import debugpy");
        return None;
    }
    Some(python)
}
