#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt;
use tokio::process::Command;

use cc_process::testing::{process_alive as alive, wait_until_gone};

async fn wait_dead(pid: u32) -> bool {
    tokio::task::spawn_blocking(move || wait_until_gone(pid, Duration::from_secs(5)))
        .await
        .unwrap()
}

/// Starts `sh` that backgrounds a grandchild and prints its pid.
async fn shell_with_grandchild(script: &str) -> (cc_process::GroupChild, u32) {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script).stdout(Stdio::piped());
    let mut child = cc_process::spawn_group(command).expect("spawn sh");
    let stdout = child.take_stdout().expect("piped stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = lines.next_line().await.unwrap().expect("grandchild pid");
    (child, line.trim().parse().unwrap())
}

#[tokio::test]
async fn terminate_kills_the_whole_group() {
    let (mut child, grandchild) = shell_with_grandchild("sleep 60 & echo $!; wait").await;
    let leader = child.id();
    assert!(alive(grandchild));
    child.terminate(Duration::from_millis(500)).await.unwrap();
    assert!(wait_dead(leader).await, "leader survived");
    assert!(wait_dead(grandchild).await, "grandchild survived");
}

#[tokio::test]
async fn terminate_escalates_to_sigkill_when_term_is_ignored() {
    let (mut child, grandchild) =
        shell_with_grandchild("trap '' TERM; sh -c \"trap '' TERM; sleep 60\" & echo $!; wait")
            .await;
    let started = std::time::Instant::now();
    child.terminate(Duration::from_millis(300)).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(wait_dead(grandchild).await, "grandchild survived SIGKILL");
}

#[tokio::test]
async fn drop_kills_the_whole_group() {
    let (child, grandchild) = shell_with_grandchild("sleep 60 & echo $!; wait").await;
    let leader = child.id();
    drop(child);
    assert!(wait_dead(grandchild).await, "grandchild survived drop");
    assert!(wait_dead(leader).await, "leader survived drop");
}

/// Runs only when re-executed by `parent_death_signal_kills_child_of_a_killed_parent`:
/// spawns a grandchild, prints its pid, then waits to be killed.
#[test]
fn pdeathsig_helper() {
    if std::env::var_os("CC_PROCESS_PDEATH_HELPER").is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut command = Command::new("sleep");
        command.arg("60");
        let child = cc_process::spawn_group(command).unwrap();
        println!("CHILD_PID={}", child.id());
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
}

#[test]
fn parent_death_signal_kills_child_of_a_killed_parent() {
    use std::io::BufRead;
    let mut helper = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "pdeathsig_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CC_PROCESS_PDEATH_HELPER", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = helper.stdout.take().unwrap();
    let mut child_pid = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest may print "test pdeathsig_helper ... " on the same line first.
        if let Some(pid) = line.split("CHILD_PID=").nth(1) {
            child_pid = Some(pid.trim().parse::<u32>().unwrap());
            break;
        }
    }
    let child_pid = child_pid.expect("helper printed its child's pid");
    assert!(alive(child_pid));
    helper.kill().unwrap();
    helper.wait().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert!(
        runtime.block_on(wait_dead(child_pid)),
        "child outlived its SIGKILLed parent"
    );
}
