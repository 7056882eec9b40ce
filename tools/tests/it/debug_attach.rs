//! `debug attach` to a process listening with debugpy: breakpoints set before attaching,
//! a stop, evaluation, a second start refused, `terminate` ending the attached process, and
//! the TTL.

#![allow(clippy::unwrap_used)]

use crate::debug_support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use debug_support::{at, call, call_err, config, debugpy_python, stopped, Fixture};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const SERVER: &str = r#"import time
import debugpy

host, port = debugpy.listen(("127.0.0.1", 0))
print(port, flush=True)
debugpy.wait_for_client()
counter = 0
while True:
    counter += 1  # tick
    time.sleep(0.01)
"#;

fn tick_line() -> i64 {
    SERVER.lines().position(|l| l.contains("# tick")).unwrap() as i64 + 1
}

/// Starts the fixture's `server.py` (tagged like the session's processes) and reads its
/// port.
async fn listening(fixture: &Fixture, python: &Path) -> (cc_process::GroupChild, u16) {
    let mut command = tokio::process::Command::new(python);
    command
        .arg("-Xfrozen_modules=off")
        .arg(fixture.root.join("server.py"))
        .current_dir(&fixture.root)
        .env(debug_support::TAG_VAR, &fixture.tag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cc_process::spawn_group(command).unwrap();
    let stdout = child.take_stdout().unwrap();
    let mut line = String::new();
    tokio::time::timeout(
        Duration::from_secs(60),
        BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .expect("the program prints its port")
    .unwrap();
    (child, line.trim().parse().unwrap())
}

async fn wait_exit(child: &mut cc_process::GroupChild) {
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the attached program is still running");
}

#[tokio::test]
async fn attach_to_a_debugpy_listening_process() {
    let Some(python) = debugpy_python() else {
        return;
    };
    let fixture = Fixture::new("attach", &[("server.py", SERVER)], config(60.0, 1800.0));
    let (mut server, port) = listening(&fixture, &python).await;
    let debug = &fixture.debug;

    call(
        debug,
        json!({"op": "breakpoints", "file": "server.py", "lines": [tick_line()]}),
    )
    .await;
    let attached = call(debug, json!({"op": "attach", "port": port})).await;
    assert_eq!(attached["adapter"], "debugpy");
    assert_eq!(attached["target"], format!("127.0.0.1:{port}"));
    assert_eq!(
        attached["breakpoints"][0]["breakpoints"][0]["verified"], true,
        "{attached:#}"
    );
    assert_eq!(attached["debuggee_pid"], server.id());

    // Attach returns at once; `continue` waits for the next stop either way.
    let hit = call(debug, json!({"op": "continue"})).await;
    assert_eq!(at(&hit), ("server.py".to_owned(), tick_line()), "{hit:#}");
    assert_eq!(stopped(&hit)["reason"], "breakpoint");
    let counter = call(debug, json!({"op": "evaluate", "expression": "counter"})).await;
    assert!(
        counter["result"].as_str().unwrap().parse::<u64>().is_ok(),
        "{counter:#}"
    );

    let second = call_err(debug, json!({"op": "attach", "port": port})).await;
    assert_eq!(second.kind(), "session_active");
    assert!(
        second.message().contains(&format!("127.0.0.1:{port}")),
        "{second}"
    );

    let terminated = call(debug, json!({"op": "terminate"})).await;
    assert_eq!(terminated["terminated"], true);
    wait_exit(&mut server).await;
    fixture.assert_no_leftovers().await;
}

#[tokio::test]
async fn an_attached_session_past_its_ttl_is_killed() {
    let Some(python) = debugpy_python() else {
        return;
    };
    let fixture = Fixture::new("attach-ttl", &[("server.py", SERVER)], config(60.0, 4.0));
    let (mut server, port) = listening(&fixture, &python).await;
    let debug = &fixture.debug;
    let attached = call(debug, json!({"op": "attach", "port": port})).await;
    assert_eq!(attached["state"], "running", "{attached:#}");
    wait_exit(&mut server).await;
    fixture.assert_no_leftovers().await;
    let expired = call_err(debug, json!({"op": "pause"})).await;
    assert_eq!(expired.kind(), "session_expired", "{expired}");
}

#[tokio::test]
async fn attach_needs_a_listener_and_says_so() {
    if debugpy_python().is_none() {
        return;
    }
    let fixture = Fixture::new("attach-refused", &[], config(60.0, 1800.0));
    let debug = &fixture.debug;
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = call_err(debug, json!({"op": "attach", "port": port})).await;
    assert_eq!(error.kind(), "launch_failed", "{error}");
    fixture.assert_no_leftovers().await;
    let lldb = call_err(
        debug,
        json!({"op": "attach", "port": port, "adapter": "lldb"}),
    )
    .await;
    assert_eq!(lldb.kind(), "invalid_arguments");
    assert!(lldb.message().contains("debugpy only"), "{lldb}");
}
