//! `ask_user` through its real ports: MCP elicitation (the official Python client) and a
//! terminal (a pseudo-terminal made by util-linux `script`).

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common;

fn elicitation_report(mode: &str) -> Option<Value> {
    let python = common::python_with(&["mcp"])?;
    let dir = tempfile::tempdir().unwrap();
    Some(common::run_client_script(
        &python,
        "mcp_elicitation.py",
        &[dir.path().as_os_str(), std::ffi::OsStr::new(mode)],
    ))
}

#[test]
fn elicitation_answered_maps_choices_back() {
    let Some(report) = elicitation_report("answer") else {
        return;
    };
    assert!(report["listed"]
        .as_array()
        .unwrap()
        .contains(&"ask_user".into()));
    assert_eq!(report["single"]["structured"]["status"], "answered");
    assert_eq!(
        report["single"]["structured"]["selected"],
        serde_json::json!(["sqlite"])
    );
    assert_eq!(
        report["multi"]["structured"]["selected"],
        serde_json::json!(["linux", "mac"])
    );
    assert_eq!(report["multi"]["structured"]["text"], "typed by the user");
    // One choice is an enum; several are a boolean per option plus a string for free text.
    let single = &report["elicitations"][0]["requestedSchema"]["properties"];
    assert_eq!(
        single["choice"]["enum"],
        serde_json::json!(["postgres", "sqlite"])
    );
    let multi = &report["elicitations"][1]["requestedSchema"]["properties"];
    assert_eq!(multi["option_1"]["type"], "boolean");
    assert_eq!(multi["answer"]["type"], "string");
    assert_eq!(
        report["elicitations"][0]["message"],
        "Which database?\n\nThe schema depends on it."
    );
}

#[test]
fn elicitation_declined_is_a_skip() {
    let Some(report) = elicitation_report("decline") else {
        return;
    };
    let single = &report["single"];
    assert_eq!(single["is_error"], false);
    assert_eq!(single["structured"]["status"], "skipped");
    assert!(single["structured"]["instruction"]
        .as_str()
        .unwrap()
        .contains("do not ask this question again"));
}

#[test]
fn a_client_without_elicitation_gets_no_ask_user() {
    let Some(report) = elicitation_report("absent") else {
        return;
    };
    assert!(!report["listed"]
        .as_array()
        .unwrap()
        .contains(&"ask_user".into()));
}

const QUESTION: &str = r#"{"question": "Which db?", "options": [{"label": "pg"}, {"label": "sqlite", "description": "a file"}], "allow_free_text": true}"#;

/// Runs `cc-harness call ask_user` inside a pseudo-terminal, typing `typed`.
fn at_terminal(typed: &str) -> Option<(Value, String)> {
    let script = cc_test_support::require_peer("script")?;
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        "{} call ask_user '{}' --root {}",
        env!("CARGO_BIN_EXE_cc-harness"),
        QUESTION,
        dir.path().display()
    );
    let mut child = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let transcript = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    // The result follows the prompt on the same line: "> {".
    let json_start = transcript
        .find("{\n")
        .unwrap_or_else(|| panic!("no JSON result in the transcript: {transcript}"));
    let value: Value = serde_json::from_str(&transcript[json_start..]).unwrap();
    Some((value, transcript))
}

#[test]
fn terminal_port_numbers_the_options_and_reads_the_choice() {
    let Some((value, transcript)) = at_terminal("2\n") else {
        return;
    };
    assert!(transcript.contains("? Which db?"), "{transcript}");
    assert!(transcript.contains("1) pg"), "{transcript}");
    assert!(transcript.contains("2) sqlite - a file"), "{transcript}");
    assert_eq!(value["status"], "answered");
    assert_eq!(value["selected"], serde_json::json!(["sqlite"]));
}

#[test]
fn terminal_port_takes_free_text_and_an_empty_line_skips() {
    let Some((value, _)) = at_terminal("whichever is simpler\n") else {
        return;
    };
    assert_eq!(value["text"], "whichever is simpler");
    let Some((value, _)) = at_terminal("\n") else {
        return;
    };
    assert_eq!(value["status"], "skipped");
}

#[test]
fn without_a_terminal_there_is_no_ask_user() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .args(["call", "ask_user", QUESTION, "--root"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["error"]["kind"], "unknown_tool");
}

#[test]
fn the_question_timeout_comes_from_the_configuration() {
    let Some(script) = cc_test_support::require_peer("script") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".cc")).unwrap();
    std::fs::write(
        dir.path().join(".cc/tools.toml"),
        "[questions]\ntimeout_seconds = 0.5\n",
    )
    .unwrap();
    let command = format!(
        "{} call ask_user '{}' --root {}",
        env!("CARGO_BIN_EXE_cc-harness"),
        QUESTION,
        dir.path().display()
    );
    let mut child = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Keep the terminal open and type nothing: only the timeout can end the question.
    let stdin = child.stdin.take().unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the question did not time out"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    drop(stdin);
    let mut transcript = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut transcript).unwrap();
    assert_eq!(status.code(), Some(1), "{transcript}");
    assert!(transcript.contains("\"kind\": \"timeout\""), "{transcript}");
    assert!(transcript.contains("0.5 s"), "{transcript}");
    assert!(
        transcript.contains("do not ask this question again"),
        "{transcript}"
    );
}

#[test]
fn a_bad_questions_section_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".cc")).unwrap();
    std::fs::write(
        dir.path().join(".cc/tools.toml"),
        "[questions]\ntimeout_seconds = -1\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .args(["list", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("[questions]"));
}
