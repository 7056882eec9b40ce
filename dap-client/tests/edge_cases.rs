//! Launch-sequence edge cases against a scripted adapter (a real process on real pipes):
//! a program that exits before `configurationDone` is answered, an adapter that never sends
//! `initialized`, reverse requests, a refused launch, an adapter that dies mid-session.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};

use cc_dap_client::report::ProgramState;
use cc_dap_client::{Action, DebugConfig, Supervisor};

fn fake(root: &Path, mode: &str, tag: &str) -> Supervisor {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_adapter.py");
    let text = format!(
        "launch_timeout_seconds = 4\nrequest_timeout_seconds = 10\nwait_seconds = 10\n\
         [debugpy]\ncommand = [\"python3\", \"{}\", \"{mode}\"]\n",
        fixture.display()
    );
    let section = toml::Value::Table(text.parse().unwrap());
    let config = DebugConfig::from_section(Some(&section)).unwrap();
    Supervisor::new(root, config).with_env(support::TAG_VAR, tag)
}

fn program(dir: &tempfile::TempDir) -> (PathBuf, PathBuf) {
    let root = dir.path().canonicalize().unwrap();
    let program = root.join("prog.py");
    std::fs::write(&program, "print('hello')\n").unwrap();
    (root, program)
}

fn python_available() -> bool {
    cc_process::testing::require_peer("python3").is_some()
}

#[tokio::test]
async fn a_program_that_exits_before_configuration_done_is_answered() {
    if !python_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (root, prog) = program(&dir);
    let tag = support::unique_tag("exit-before-config");
    let debug = fake(&root, "exit-before-config", &tag);
    let started = debug.launch(&prog, &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Exited);
    assert_eq!(started.position.exited.as_ref().unwrap().code, Some(0));
    assert_eq!(started.output.as_ref().unwrap().text, "bye\n");
    // The session outlives the program: status and output still answer.
    assert_eq!(debug.status().await.position.state, ProgramState::Exited);
    assert_eq!(debug.output().await.unwrap().output, "bye\n");
    let stack = debug.stack(None).await.unwrap_err();
    assert_eq!(stack.kind(), "not_stopped", "{stack}");
    let ended = debug.terminate().await;
    assert!(ended.terminated);
    support::assert_no_tagged(&tag).await;
}

#[tokio::test]
async fn an_adapter_that_never_sends_initialized_times_out_and_is_killed() {
    if !python_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (root, prog) = program(&dir);
    let tag = support::unique_tag("no-initialized");
    let debug = fake(&root, "no-initialized", &tag);
    let error = debug.launch(&prog, &[], None).await.unwrap_err();
    assert_eq!(error.kind(), "timeout", "{error}");
    assert!(error.to_string().contains("`initialized`"), "{error}");
    support::assert_no_tagged(&tag).await;
    // Nothing lives, so a new launch is not refused as a second session.
    assert_eq!(debug.status().await.position.state, ProgramState::None);
}

#[tokio::test]
async fn reverse_requests_are_refused_never_left_unanswered() {
    if !python_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (root, prog) = program(&dir);
    let tag = support::unique_tag("reverse");
    let debug = fake(&root, "reverse", &tag);
    let started = debug.launch(&prog, &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Stopped);
    let stop = started.position.stopped.unwrap();
    assert_eq!(
        (stop.reason.as_str(), stop.file.as_deref(), stop.line),
        ("entry", Some("prog.py"), Some(1))
    );
    let output = debug.output().await.unwrap().output;
    assert!(
        output.contains("runInTerminal answered success=False message=this client is headless"),
        "{output}"
    );
    assert!(
        output.contains("startDebugging answered success=False"),
        "{output}"
    );
    debug.terminate().await;
    support::assert_no_tagged(&tag).await;
}

#[tokio::test]
async fn a_refused_launch_is_a_clear_error() {
    if !python_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (root, prog) = program(&dir);
    let tag = support::unique_tag("launch-error");
    let debug = fake(&root, "launch-error", &tag);
    let error = debug.launch(&prog, &[], None).await.unwrap_err();
    assert_eq!(error.kind(), "launch_failed", "{error}");
    assert!(
        error.to_string().contains("program not found: /nowhere"),
        "{error}"
    );
    support::assert_no_tagged(&tag).await;
}

#[tokio::test]
async fn an_adapter_that_dies_mid_session_fails_the_call_and_frees_the_slot() {
    if !python_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (root, prog) = program(&dir);
    let tag = support::unique_tag("crash");
    let debug = fake(&root, "crash", &tag);
    let started = debug.launch(&prog, &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Stopped);
    let error = debug.act(Action::Continue, None).await.unwrap_err();
    assert_eq!(error.kind(), "adapter_exited", "{error}");
    assert!(error.to_string().contains("exit code 9"), "{error}");
    let status = debug.status().await;
    assert_eq!(status.position.state, ProgramState::AdapterExited);
    assert!(status.note.unwrap().contains("exited unexpectedly"));
    support::assert_no_tagged(&tag).await;
    // A dead session does not block a new one.
    let again = debug.launch(&prog, &[], None).await.unwrap();
    assert_eq!(again.position.state, ProgramState::Stopped);
    debug.terminate().await;
    support::assert_no_tagged(&tag).await;
}
