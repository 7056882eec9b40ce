//! Launch-sequence edge cases against a scripted adapter (a real process on real pipes): the
//! order of the configuration requests whichever way the adapter answers `launch`, a program
//! that exits before `configurationDone` is answered, an adapter that never sends
//! `initialized`, reverse requests, a refused launch, an adapter that dies mid-session.

#![allow(clippy::unwrap_used)]

use cc_dap_client::testing as support;

use std::path::{Path, PathBuf};

use cc_dap_client::report::ProgramState;
use cc_dap_client::{Action, DebugConfig, DebugSession};

/// A workspace with `prog.py` and a debugger whose debugpy is the scripted adapter in
/// `mode`; its processes carry a tag named after the mode.
struct Fake {
    _dir: tempfile::TempDir,
    root: PathBuf,
    prog: PathBuf,
    tag: String,
    debug: DebugSession,
}

impl Fake {
    /// `None` (after the peer check's notice) when python3 is missing.
    fn start(mode: &str) -> Option<Fake> {
        cc_test_support::require_peer("python3")?;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let prog = root.join("prog.py");
        std::fs::write(&prog, "print('hello')\n").unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_adapter.py");
        let text = format!(
            "launch_timeout_seconds = 4\nrequest_timeout_seconds = 10\nwait_seconds = 10\n\
             [debugpy]\ncommand = [\"python3\", \"{}\", \"{mode}\"]\n",
            fixture.display()
        );
        let section = toml::Value::Table(text.parse().unwrap());
        let config = <DebugConfig as serde::Deserialize>::deserialize(section).unwrap();
        let tag = support::unique_tag(mode);
        let debug = DebugSession::new(&root, config).with_env(support::TAG_VAR, &tag);
        Some(Fake {
            _dir: dir,
            root,
            prog,
            tag,
            debug,
        })
    }

    async fn assert_no_leftovers(&self) {
        support::assert_no_tagged(&self.tag).await;
    }
}

/// `initialize` → `launch` → (`initialized`) → `setBreakpoints` for every file set so far →
/// `setExceptionBreakpoints` with the adapter's default filters → `configurationDone`, both
/// when the adapter answers `launch` only after `configurationDone` (debugpy: awaiting it
/// earlier would deadlock) and when it answers before `initialized` (lldb-dap).
#[tokio::test]
async fn the_configuration_requests_come_in_order_whenever_launch_is_answered() {
    for mode in ["answer-launch-last", "launch-first"] {
        let Some(fake) = Fake::start(mode) else {
            return;
        };
        let other = fake.root.join("other.py");
        std::fs::write(&other, "x = 1\n").unwrap();
        fake.debug
            .set_breakpoints(&fake.prog, &[4, 3])
            .await
            .unwrap();
        fake.debug.set_breakpoints(&other, &[7]).await.unwrap();
        let started = fake.debug.launch(&fake.prog, &[], None).await.unwrap();
        assert_eq!(started.position.state, ProgramState::Stopped, "{mode}");
        let output = fake.debug.output().await.unwrap().output;
        assert_eq!(
            output,
            "sequence: initialize, launch, setBreakpoints other.py 7, setBreakpoints prog.py 4 \
             3, setExceptionBreakpoints uncaught, configurationDone\n",
            "{mode}"
        );
        let placed: Vec<(String, Vec<Option<bool>>)> = started
            .breakpoints
            .iter()
            .map(|file| {
                let verified = file.breakpoints.iter().map(|b| b.verified).collect();
                (file.file.clone(), verified)
            })
            .collect();
        assert_eq!(
            placed,
            [
                ("other.py".to_owned(), vec![Some(true)]),
                ("prog.py".to_owned(), vec![Some(true), Some(true)])
            ],
            "{mode}"
        );
        assert!(fake.debug.terminate().await.terminated);
        fake.assert_no_leftovers().await;
    }
}

#[tokio::test]
async fn a_program_that_exits_before_configuration_done_is_answered() {
    let Some(fake) = Fake::start("exit-before-config") else {
        return;
    };
    let debug = &fake.debug;
    let started = debug.launch(&fake.prog, &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Exited);
    assert_eq!(started.position.exited.as_ref().unwrap().code, Some(0));
    assert_eq!(started.output.as_ref().unwrap().text, "bye\n");
    // The session outlives the program: status and output still answer.
    assert_eq!(debug.status().await.position.state, ProgramState::Exited);
    assert_eq!(debug.output().await.unwrap().output, "bye\n");
    let stack = debug.stack(None).await.unwrap_err();
    assert_eq!(stack.kind(), "not_stopped", "{stack}");
    // Breakpoints set now wait for the next session, and say so.
    let later = debug.set_breakpoints(&fake.prog, &[1]).await.unwrap();
    assert!(later.pending);
    assert_eq!(later.breakpoints[0].verified, None);
    assert!(
        later
            .note
            .as_deref()
            .unwrap()
            .contains("program has exited"),
        "{later:?}"
    );
    let ended = debug.terminate().await;
    assert!(ended.terminated);
    fake.assert_no_leftovers().await;
}

#[tokio::test]
async fn an_adapter_that_never_sends_initialized_times_out_and_is_killed() {
    let Some(fake) = Fake::start("no-initialized") else {
        return;
    };
    let error = fake.debug.launch(&fake.prog, &[], None).await.unwrap_err();
    assert_eq!(error.kind(), "timeout", "{error}");
    assert!(error.to_string().contains("`initialized`"), "{error}");
    fake.assert_no_leftovers().await;
    // Nothing lives (a new launch is not refused as a second session); status says why.
    let status = fake.debug.status().await;
    assert_eq!(status.position.state, ProgramState::LaunchFailed);
    assert!(status.session.is_none());
    assert!(
        status.note.as_deref().unwrap().contains("`initialized`"),
        "{status:?}"
    );
}

#[tokio::test]
async fn reverse_requests_are_refused_never_left_unanswered() {
    let Some(fake) = Fake::start("reverse") else {
        return;
    };
    let started = fake.debug.launch(&fake.prog, &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Stopped);
    let stop = started.position.stopped.unwrap();
    assert_eq!(
        (stop.reason.as_str(), stop.file.as_deref(), stop.line),
        ("entry", Some("prog.py"), Some(1))
    );
    let output = fake.debug.output().await.unwrap().output;
    assert!(
        output.contains("runInTerminal answered success=False message=this client is headless"),
        "{output}"
    );
    assert!(
        output.contains("startDebugging answered success=False"),
        "{output}"
    );
    fake.debug.terminate().await;
    fake.assert_no_leftovers().await;
}

#[tokio::test]
async fn a_refused_launch_is_a_clear_error() {
    let Some(fake) = Fake::start("launch-error") else {
        return;
    };
    let error = fake.debug.launch(&fake.prog, &[], None).await.unwrap_err();
    assert_eq!(error.kind(), "launch_failed", "{error}");
    assert!(
        error.to_string().contains("program not found: /nowhere"),
        "{error}"
    );
    fake.assert_no_leftovers().await;
}

/// The output of an adapter closes a moment before its exit status can be reaped; a call
/// failing on the closed connection still reports how the adapter ended (the race made this
/// test fail now and then before `crash-slowly` made it certain).
#[tokio::test]
async fn an_adapter_whose_output_closes_before_it_exits_is_reported_with_its_status() {
    let Some(fake) = Fake::start("crash-slowly") else {
        return;
    };
    let started = fake.debug.launch(&fake.prog, &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Stopped);
    let error = fake.debug.act(Action::Continue, None).await.unwrap_err();
    assert_eq!(error.kind(), "adapter_exited", "{error}");
    assert!(error.to_string().contains("exit code 9"), "{error}");
    assert!(error.to_string().contains("exited unexpectedly"), "{error}");
    fake.debug.terminate().await;
    fake.assert_no_leftovers().await;
}

#[tokio::test]
async fn an_adapter_that_dies_mid_session_fails_the_call_and_frees_the_slot() {
    let Some(fake) = Fake::start("crash") else {
        return;
    };
    let debug = &fake.debug;
    let started = debug.launch(&fake.prog, &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Stopped);
    let error = debug.act(Action::Continue, None).await.unwrap_err();
    assert_eq!(error.kind(), "adapter_exited", "{error}");
    assert!(error.to_string().contains("exit code 9"), "{error}");
    let status = debug.status().await;
    assert_eq!(status.position.state, ProgramState::AdapterExited);
    assert!(status.note.unwrap().contains("exited unexpectedly"));
    fake.assert_no_leftovers().await;
    // Breakpoints set meanwhile wait for the next session.
    let later = debug.set_breakpoints(&fake.prog, &[1]).await.unwrap();
    assert!(later.pending, "{later:?}");
    assert!(
        later.note.as_deref().unwrap().contains("adapter exited"),
        "{later:?}"
    );
    // A dead session does not block a new one, and `terminate` reports how it went.
    let again = debug.launch(&fake.prog, &[], None).await.unwrap();
    assert_eq!(again.position.state, ProgramState::Stopped);
    assert_eq!(again.breakpoints[0].breakpoints[0].verified, Some(true));
    let ended = debug.terminate().await;
    assert_eq!(
        ended.adapter_exit.as_deref(),
        Some("exit code 0"),
        "{ended:?}"
    );
    fake.assert_no_leftovers().await;
}
