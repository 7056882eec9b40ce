//! `debug` end to end against debugpy: breakpoints in a loop, stack, scopes, variables,
//! evaluate in a frame, the three steps, continue, an exception stop, run to exit, output;
//! a second launch refused; pause of a busy loop; the TTL; an adapter killed mid-call; and
//! after each, no process left behind.

#![allow(clippy::unwrap_used)]

use crate::debug_support;

use std::time::Duration;

use debug_support::{at, call, call_err, config, session_pids, stopped, text, Fixture};
use serde_json::json;

const LOOP: &str = r#"import sys


def square(n):
    result = n * n
    return result


def main():
    total = 0
    for i in range(4):
        total += square(i)
        print("step", i, total)
    print("done", total)
    return total


if __name__ == "__main__":
    sys.exit(main() - 11)
"#;

const BUSY: &str = "import time\nn = 0\nwhile True:\n    n += 1\n";

#[tokio::test]
async fn a_python_session_from_breakpoint_to_exit() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let fixture = Fixture::new(
        "python-e2e",
        &[
            ("pyproject.toml", "[project]\nname = \"demo\"\n"),
            ("loop.py", LOOP),
        ],
        config(60.0, 1800.0),
    );
    let debug = &fixture.debug;

    let adapters = call(debug, json!({"op": "adapters"})).await;
    let debugpy = adapters["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "debugpy")
        .unwrap();
    assert_eq!(debugpy["available"], true, "{debugpy:#}");

    let pending = call(
        debug,
        json!({"op": "breakpoints", "file": "loop.py", "lines": [12]}),
    )
    .await;
    assert_eq!(
        pending,
        json!({"file": "loop.py", "breakpoints": [{"line": 12, "verified": null}], "pending": true,
            "state": "none", "note": "no debug session yet: these breakpoints are sent when `launch` (or `attach`) starts one"})
    );

    let started = call(debug, json!({"op": "launch", "program": "loop.py"})).await;
    assert_eq!(at(&started), ("loop.py".to_owned(), 12));
    assert_eq!(stopped(&started)["reason"], "breakpoint");
    assert_eq!(started["adapter"], "debugpy");
    assert_eq!(
        started["breakpoints"][0]["breakpoints"][0]["verified"],
        true
    );
    let thread = stopped(&started)["thread_id"].as_i64().unwrap();

    // One session per conversation.
    let second = call_err(debug, json!({"op": "launch", "program": "loop.py"})).await;
    assert_eq!(second.kind(), "session_active");
    assert!(
        second.message().contains("debugpy debugging loop.py"),
        "{second}"
    );
    assert!(second.message().contains("terminate"), "{second}");

    let stack_output = debug.call("debug", json!({"op": "stack"})).await.unwrap();
    let text = stack_output.text.clone().unwrap();
    let frame = stopped(&started)["frame_id"].as_i64().unwrap();
    assert!(
        text.starts_with(&format!(
            "stopped at loop.py:12 in main (breakpoint, thread {thread}, frame {frame})\n\
             stack of thread {thread} (2):\n  frame {frame}: main at loop.py:12\n  frame "
        )),
        "{text}"
    );
    assert!(text.contains(": <module> at loop.py:19"), "{text}");
    let stack = stack_output.value;
    let frames = stack["frames"].as_array().unwrap();
    assert_eq!(
        (frames[0]["function"].as_str(), frames[0]["line"].as_i64()),
        (Some("main"), Some(12))
    );
    assert_eq!(
        (frames[1]["function"].as_str(), frames[1]["line"].as_i64()),
        (Some("<module>"), Some(19))
    );
    assert_eq!(stack["truncated"], false);
    assert_eq!(stack["thread_id"], thread);
    let main_frame = frames[0]["id"].clone();
    let module_frame = frames[1]["id"].clone();

    let variables = debug_support::locals(debug, &main_frame).await;
    let value_of = |vars: &serde_json::Value, name: &str| {
        vars["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .map(|v| v["value"].clone())
    };
    assert_eq!(value_of(&variables, "i"), Some(json!("0")));
    assert_eq!(value_of(&variables, "total"), Some(json!("0")));
    assert_eq!(variables["truncated"], false);

    let evaluated = call(
        debug,
        json!({"op": "evaluate", "expression": "total + 100"}),
    )
    .await;
    assert_eq!(evaluated["result"], "100");
    let in_module = call(
        debug,
        json!({"op": "evaluate", "expression": "__name__", "frame_id": module_frame}),
    )
    .await;
    assert_eq!(in_module["result"], "'__main__'");

    let stepped_in = call(debug, json!({"op": "step_in"})).await;
    assert_eq!(at(&stepped_in), ("loop.py".to_owned(), 5));
    assert_eq!(stopped(&stepped_in)["function"], "square");
    let stepped_out = call(debug, json!({"op": "step_out"})).await;
    assert_eq!(at(&stepped_out).0, "loop.py");
    assert_eq!(stopped(&stepped_out)["function"], "main");
    let stepped_over = call(debug, json!({"op": "step_over", "thread_id": thread})).await;
    assert_eq!(at(&stepped_over), ("loop.py".to_owned(), 13));

    let next_round = call(debug, json!({"op": "continue"})).await;
    assert_eq!(at(&next_round), ("loop.py".to_owned(), 12));
    if let Some(text) = next_round["output"]["text"].as_str() {
        assert!("step 0 0\n".starts_with(text), "{next_round:#}");
    }
    assert_eq!(
        debug_support::output_after(debug, 9).await["output"],
        "step 0 0\n"
    );
    let i = call(debug, json!({"op": "evaluate", "expression": "i"})).await;
    assert_eq!(i["result"], "1");

    let cleared = call(
        debug,
        json!({"op": "breakpoints", "file": "loop.py", "lines": []}),
    )
    .await;
    assert_eq!(cleared["breakpoints"], json!([]));
    assert_eq!(cleared["pending"], false);

    // sys.exit(3) is an uncaught SystemExit: debugpy's default filter stops there first.
    let exception = call(debug, json!({"op": "continue"})).await;
    assert_eq!(stopped(&exception)["reason"], "exception");
    assert_eq!(at(&exception).1, 19);
    let exited = call(debug, json!({"op": "continue"})).await;
    assert_eq!(exited["state"], "exited");
    assert_eq!(exited["exited"], json!({"code": 3}));

    // The session outlives the program.
    let output = debug_support::output_after(debug, 45).await;
    assert_eq!(
        output["output"],
        "step 0 0\nstep 1 1\nstep 2 5\nstep 3 14\ndone 14\n"
    );
    assert_eq!(output["truncated"], false);
    let status = call(debug, json!({"op": "status"})).await;
    assert_eq!(status["exited"], json!({"code": 3}));
    let stack_after = call_err(debug, json!({"op": "stack"})).await;
    assert_eq!(stack_after.kind(), "not_stopped");
    assert!(
        stack_after.message().contains("exited with code 3"),
        "{stack_after}"
    );
    // Breakpoints set after the exit wait for the next session, and say so.
    let later = call(
        debug,
        json!({"op": "breakpoints", "file": "loop.py", "lines": [13]}),
    )
    .await;
    assert_eq!(later["pending"], true, "{later:#}");
    assert_eq!(later["exited"], json!({"code": 3}));
    assert!(
        later["note"]
            .as_str()
            .unwrap()
            .contains("the program has exited"),
        "{later:#}"
    );

    let pids = session_pids(debug).await;
    assert_eq!(pids.len(), 2, "adapter and debuggee pids: {status:#}");
    let terminated = call(debug, json!({"op": "terminate"})).await;
    assert_eq!(terminated["terminated"], true);
    assert_eq!(terminated["state"], "none");
    debug_support::assert_gone(&pids).await;
    fixture.assert_no_leftovers().await;
    let after = call(debug, json!({"op": "status"})).await;
    assert_eq!(after["state"], "none");
    // Breakpoints outlive sessions, waiting for the next one.
    assert_eq!(
        after["breakpoints"],
        json!([{"file": "loop.py", "breakpoints": [{"line": 13, "verified": null}]}])
    );
}

/// The file being debugged changes on disk while the program runs (an edit, a formatter,
/// a `git checkout`): the next stop shows its lines with a note that they are the file as it
/// is now and the program may run what it loaded before, in the value and in the text.
#[tokio::test]
async fn a_source_changed_during_the_session_is_said_at_the_next_stop() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let fixture = Fixture::new("python-changed", &[("loop.py", LOOP)], config(60.0, 1800.0));
    let debug = &fixture.debug;
    call(
        debug,
        json!({"op": "breakpoints", "file": "loop.py", "lines": [12]}),
    )
    .await;
    let started = call(debug, json!({"op": "launch", "program": "loop.py"})).await;
    assert_eq!(at(&started), ("loop.py".to_owned(), 12));
    assert!(
        stopped(&started).get("source_note").is_none(),
        "{started:#}"
    );

    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(fixture.root.join("loop.py"), format!("{LOOP}# edited\n")).unwrap();
    let next = debug
        .call("debug", json!({"op": "continue"}))
        .await
        .unwrap();
    assert_eq!(at(&next.value), ("loop.py".to_owned(), 12));
    let note = stopped(&next.value)["source_note"]
        .as_str()
        .unwrap_or_default();
    assert!(note.contains("changed on disk"), "{:#}", next.value);
    assert!(
        next.text
            .unwrap()
            .contains("changed on disk after the session started"),
        "the note is not in the text"
    );
    call(debug, json!({"op": "terminate"})).await;
    fixture.assert_no_leftovers().await;
}

#[tokio::test]
async fn pause_stops_a_busy_loop_that_continue_could_not_wait_for() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let fixture = Fixture::new("python-pause", &[("busy.py", BUSY)], config(2.0, 1800.0));
    let debug = &fixture.debug;

    let started = call(debug, json!({"op": "launch", "program": "busy.py"})).await;
    assert_eq!(started["state"], "running", "{started:#}");
    assert!(
        started["note"]
            .as_str()
            .unwrap()
            .contains("still running after 2s"),
        "{started:#}"
    );
    let waited = call(debug, json!({"op": "continue"})).await;
    assert_eq!(waited["state"], "running");
    assert!(
        waited["note"].as_str().unwrap().contains("already running"),
        "{waited:#}"
    );

    let paused = call(debug, json!({"op": "pause"})).await;
    assert_eq!(stopped(&paused)["reason"], "pause");
    assert_eq!(at(&paused).0, "busy.py");
    let n = call(debug, json!({"op": "evaluate", "expression": "n > 0"})).await;
    assert_eq!(n["result"], "True");
    let threads = call(debug, json!({"op": "threads"})).await;
    assert!(threads["total"].as_u64().unwrap() >= 1);

    // The end of the run (not `terminate`) ends the session through the shutdown hook.
    debug.shutdown(Duration::from_secs(10)).await;
    fixture.assert_no_leftovers().await;
}

#[tokio::test]
async fn a_session_past_its_ttl_is_killed_and_says_so() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let program = "print('before the stop')\nx = 1\nprint('after')\n";
    let fixture = Fixture::new("python-ttl", &[("stop.py", program)], config(60.0, 4.0));
    let debug = &fixture.debug;
    call(
        debug,
        json!({"op": "breakpoints", "file": "stop.py", "lines": [2]}),
    )
    .await;
    let started = call(debug, json!({"op": "launch", "program": "stop.py"})).await;
    assert_eq!(at(&started).1, 2);
    debug_support::output_after(debug, 16).await;

    // Without any call, the TTL kills every process of the session.
    fixture.assert_no_leftovers().await;
    let expired = call_err(debug, json!({"op": "stack"})).await;
    assert_eq!(expired.kind(), "session_expired");
    assert!(expired.message().contains("expired"), "{expired}");
    let status = call(debug, json!({"op": "status"})).await;
    assert_eq!(status["state"], "expired");
    // What the program printed is not lost.
    let output = call(debug, json!({"op": "output"})).await;
    assert_eq!(output["state"], "expired");
    assert_eq!(output["output"], "before the stop\n");

    // An expired session does not block the next one; breakpoints carry over.
    let again = call(debug, json!({"op": "launch", "program": "stop.py"})).await;
    assert_eq!(at(&again).1, 2);
    call(debug, json!({"op": "terminate"})).await;
    fixture.assert_no_leftovers().await;
}

#[tokio::test]
async fn an_adapter_killed_mid_call_fails_that_call_without_a_hang() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    // A long wait limit: only the adapter's death can end the `continue` below in time.
    let fixture = Fixture::new("python-killed", &[("busy.py", BUSY)], config(600.0, 1800.0));
    let debug = &fixture.debug;
    call(
        debug,
        json!({"op": "breakpoints", "file": "busy.py", "lines": [4]}),
    )
    .await;
    call(debug, json!({"op": "launch", "program": "busy.py"})).await;
    call(
        debug,
        json!({"op": "breakpoints", "file": "busy.py", "lines": []}),
    )
    .await;
    let pids = session_pids(debug).await;
    let adapter = pids[0];

    let in_flight = {
        let debug = debug.clone();
        tokio::spawn(async move { debug.call("debug", json!({"op": "continue"})).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &adapter.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let error = tokio::time::timeout(Duration::from_secs(120), in_flight)
        .await
        .expect("the call must end when the adapter dies, not at the wait limit")
        .unwrap()
        .unwrap_err();
    assert_eq!(error.kind(), "adapter_exited", "{error}");
    assert!(error.message().contains("SIGKILL"), "{error}");
    debug_support::assert_gone(&pids).await;
    fixture.assert_no_leftovers().await;

    let status = call(debug, json!({"op": "status"})).await;
    assert_eq!(status["state"], "adapter_exited");
    let terminated = call(debug, json!({"op": "terminate"})).await;
    assert_eq!(terminated["terminated"], true);
}

#[tokio::test]
async fn a_program_that_ends_at_once_reports_its_exit() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    // `os._exit`: a non-zero `sys.exit` would stop on debugpy's uncaught-exception filter.
    let program = "import os, sys\nprint(sys.argv[1:], flush=True)\nos._exit(len(sys.argv))\n";
    let fixture = Fixture::new(
        "python-quick",
        &[("quick.py", program)],
        config(60.0, 1800.0),
    );
    let debug = &fixture.debug;
    let started = call(
        debug,
        json!({"op": "launch", "program": "quick.py", "args": ["two words", "--flag"]}),
    )
    .await;
    assert_eq!(started["state"], "exited", "{started:#}");
    assert_eq!(started["exited"], json!({"code": 3}));
    assert_eq!(
        debug_support::output_after(debug, 24).await["output"],
        "['two words', '--flag']\n"
    );
    // A program that exited holds nothing up: the next launch ends its session itself.
    let relaunched = call(
        debug,
        json!({"op": "launch", "program": "quick.py", "args": ["one"]}),
    )
    .await;
    assert_eq!(relaunched["state"], "exited", "{relaunched:#}");
    assert_eq!(relaunched["exited"], json!({"code": 2}));
    let note = relaunched["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("the previous session (debugpy debugging quick.py")
            && note.contains("program exited with code 3) was ended first"),
        "{relaunched:#}"
    );
    let terminated = call(debug, json!({"op": "terminate"})).await;
    assert_eq!(terminated["terminated"], true);
    assert_eq!(terminated["exited"], json!({"code": 2}));
    fixture.assert_no_leftovers().await;
}

/// debugpy starts the program with the `python` of the launch request; `/bin/false` exits
/// before it connects, so debugpy never sends `initialized` nor answers `launch`: the
/// launch timeout must end the wait, say why, and leave nothing behind.
#[tokio::test]
async fn a_debuggee_that_dies_before_configuration_is_a_clear_error_not_a_hang() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let mut settings = config(60.0, 1800.0);
    settings.launch_timeout_seconds = Some(8.0);
    let launch: serde_json::Map<String, serde_json::Value> =
        serde_json::from_value(json!({"python": ["/bin/false"]})).unwrap();
    settings.adapters.insert(
        cc_dap_client::AdapterKind::Debugpy,
        cc_dap_client::AdapterOverride {
            launch: Some(launch),
            ..Default::default()
        },
    );
    let fixture = Fixture::new("python-false", &[("quick.py", "print('hi')\n")], settings);
    let debug = &fixture.debug;
    let error = call_err(debug, json!({"op": "launch", "program": "quick.py"})).await;
    assert_eq!(error.kind(), "timeout", "{error}");
    assert!(
        error
            .message()
            .contains("`initialized` event after `launch`"),
        "{error}"
    );
    fixture.assert_no_leftovers().await;
    // Nothing runs; `status` and `output` say why the launch failed.
    let status = call(debug, json!({"op": "status"})).await;
    assert_eq!(status["state"], "launch_failed", "{status:#}");
    assert!(
        status["note"].as_str().unwrap().contains("`initialized`"),
        "{status:#}"
    );
    let output = call(debug, json!({"op": "output"})).await;
    assert_eq!(output["state"], "launch_failed");
}

const DEEP: &str = r#"for i in range(200):
    print("line %03d" % i)


def deep(n):
    if n == 0:
        items = list(range(100))
        text = "x" * 1000
        return len(items) + len(text)
    return deep(n - 1)


deep(40)
"#;

/// The caps: 30 frames, 50 children, 400-character values, each with its total and a
/// truncation flag; program output in a bounded ring buffer.
#[tokio::test]
async fn stack_variables_values_and_output_are_capped_with_totals() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let mut settings = config(60.0, 1800.0);
    settings.output_buffer_bytes = Some(1000);
    let fixture = Fixture::new("python-caps", &[("deep.py", DEEP)], settings);
    let debug = &fixture.debug;
    call(
        debug,
        json!({"op": "breakpoints", "file": "deep.py", "lines": [9]}),
    )
    .await;
    let started = call(debug, json!({"op": "launch", "program": "deep.py"})).await;
    assert_eq!(at(&started), ("deep.py".to_owned(), 9));
    let stack = call(debug, json!({"op": "stack"})).await;
    assert_eq!(stack["frames"].as_array().unwrap().len(), 30);
    assert_eq!(stack["truncated"], true);
    assert_eq!(stack["total_frames"], 42, "41 calls of deep and the module");

    let top = stack["frames"][0]["id"].clone();
    let variables = debug_support::locals(debug, &top).await;
    let find = |name: &str| {
        variables["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap()
            .clone()
    };
    let text = find("text");
    assert_eq!(text["value_truncated"], true);
    assert_eq!(text["value"].as_str().unwrap().chars().count(), 400);
    assert_eq!(text["value_length"], 1002, "1000 characters and two quotes");
    let items = find("items");
    assert_eq!(items["value_truncated"], false);
    let children = call(
        debug,
        json!({"op": "variables", "reference": items["reference"]}),
    )
    .await;
    assert_eq!(children["variables"].as_array().unwrap().len(), 50);
    assert_eq!(children["truncated"], true);
    assert!(children["total"].as_u64().unwrap() > 100, "{children:#}");

    let evaluated = call(debug, json!({"op": "evaluate", "expression": "text"})).await;
    assert_eq!(evaluated["result_truncated"], true);
    assert_eq!(evaluated["result_length"], 1002);

    let output = debug_support::output_after(debug, 200 * 9).await;
    assert_eq!(output["truncated"], true);
    assert_eq!(output["total_bytes"], 200 * 9);
    assert_eq!(output["dropped_bytes"], 200 * 9 - 1000);
    assert_eq!(output["output"].as_str().unwrap().len(), 1000);
    assert!(output["output"]
        .as_str()
        .unwrap()
        .ends_with("line 198\nline 199\n"));

    call(debug, json!({"op": "terminate"})).await;
    fixture.assert_no_leftovers().await;
}

/// A cancelled call (MCP `notifications/cancelled`) ends its wait at once; the program runs
/// on under the debugger and the next call works: during `launch`'s wait for the first stop,
/// and during `continue`.
#[tokio::test]
async fn a_cancelled_wait_returns_at_once_and_the_session_stays_usable() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    // Only a cancel can end these waits in time: the program never stops by itself.
    let busy = format!("open('started', 'w').close()\n{BUSY}");
    let fixture = Fixture::new(
        "python-cancel",
        &[("busy.py", busy.as_str())],
        config(600.0, 1800.0),
    );
    let debug = &fixture.debug;
    let cancelled_call = |args: serde_json::Value| {
        let debug = debug.clone();
        let cancel = cc_tools::Cancellation::new();
        let options = cc_tools::CallOptions {
            cancel: Some(cancel.clone()),
            ..Default::default()
        };
        let call = tokio::spawn(async move { debug.call_with("debug", args, options).await });
        (call, cancel)
    };

    let (launch, cancel) = cancelled_call(json!({"op": "launch", "program": "busy.py"}));
    // Cancel once the program runs.
    for _ in 0..1200 {
        if fixture.root.join("started").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cancel.cancel();
    let cancelled_at = std::time::Instant::now();
    let error = tokio::time::timeout(Duration::from_secs(10), launch)
        .await
        .expect("a cancelled launch returns at once")
        .unwrap()
        .unwrap_err();
    // Issue 28, item 8: not after a grace period (3 s before).
    assert!(
        cancelled_at.elapsed() < Duration::from_millis(1500),
        "{:?}",
        cancelled_at.elapsed()
    );
    assert_eq!(error.kind(), "cancelled", "{error}");
    assert!(error.message().contains("the session lives on"), "{error}");
    assert_eq!(
        call(debug, json!({"op": "status"})).await["state"],
        "running"
    );

    let paused = call(debug, json!({"op": "pause"})).await;
    assert_eq!(stopped(&paused)["reason"], "pause");
    // Issue 28, item 8: a wait limit of this call's own, said in the result.
    let waited = text(debug, json!({"op": "continue", "wait_s": 0.5})).await;
    assert!(
        waited.contains("the program is still running after 0.5s (the wait limit; `wait_s`"),
        "{waited}"
    );
    let paused = call(debug, json!({"op": "pause"})).await;
    assert_eq!(stopped(&paused)["reason"], "pause");
    // Cancelled before it reaches the serialized tool, a call never starts (and says so);
    // give the `continue` longer each time until the cancellation lands in its wait.
    let mut delay = Duration::from_millis(10);
    let error = loop {
        let (resumed, cancel) = cancelled_call(json!({"op": "continue"}));
        tokio::time::sleep(delay).await;
        cancel.cancel();
        let error = tokio::time::timeout(Duration::from_secs(10), resumed)
            .await
            .expect("a cancelled continue returns at once")
            .unwrap()
            .unwrap_err();
        assert_eq!(error.kind(), "cancelled", "{error}");
        if !error.message().contains("before it started") || delay > Duration::from_secs(5) {
            break error;
        }
        delay *= 4;
    };
    assert!(error.message().contains("keeps running"), "{error}");
    let status = call(debug, json!({"op": "status"})).await;
    assert_eq!(status["state"], "running", "{status:#}");
    let paused = call(debug, json!({"op": "pause"})).await;
    assert_eq!(stopped(&paused)["reason"], "pause");
    assert_eq!(
        call(debug, json!({"op": "evaluate", "expression": "n > 0"})).await["result"],
        "True"
    );
    call(debug, json!({"op": "terminate"})).await;
    fixture.assert_no_leftovers().await;
}

/// Issue 28, item 3: which exceptions stop the program is named in the launch and set by
/// `exceptions`: by default an exception the program catches is no stop; with `raised` it
/// stops where it is raised; a filter the adapter does not offer is said in the note.
#[tokio::test]
async fn exception_stops_are_named_and_set_in_launch() {
    if debug_support::debugpy_python().is_none() {
        return;
    }
    let program = "def risky():\n    raise KeyError('missing')\n\n\ntry:\n    risky()\nexcept KeyError:\n    print('handled')\n";
    let fixture = Fixture::new(
        "python-exceptions",
        &[("caught.py", program)],
        config(60.0, 1800.0),
    );
    let debug = &fixture.debug;
    let plain = text(debug, json!({"op": "launch", "program": "caught.py"})).await;
    assert!(
        plain.contains("stops on exceptions: uncaught (offered: raised, uncaught, userUnhandled"),
        "{plain}"
    );
    assert!(plain.contains("exited with code 0"), "{plain}");

    let raised = text(
        debug,
        json!({"op": "launch", "program": "caught.py", "exceptions": ["raised", "bogus"]}),
    )
    .await;
    assert!(
        raised.contains("stops on exceptions: raised (offered: "),
        "{raised}"
    );
    assert!(
        raised.contains("stopped at caught.py:2 in risky (exception, "),
        "{raised}"
    );
    assert!(
        raised.contains("`exceptions`: debugpy does not offer bogus; it offers: raised, uncaught, userUnhandled"),
        "{raised}"
    );
    call(debug, json!({"op": "terminate"})).await;
    fixture.assert_no_leftovers().await;
}
