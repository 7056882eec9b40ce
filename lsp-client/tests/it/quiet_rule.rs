//! The quiet rule (servers that republish only when diagnostics change, such as gopls) takes
//! silence for "unchanged" only once the server has stopped working. A scripted server that
//! computes for two seconds before it publishes stands for gopls on a loaded machine: a
//! quiet window alone would report the old list as still standing. Real gopls is covered in
//! `servers.rs` and `tools/tests/lsp_real_projects.rs`; this is the edge case in addition.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use cc_lsp_client::CheckOutcome;
use cc_test_support::require_peer;
use common::*;

/// The handlers of a scripted server (after [`PY_LSP_PRELUDE`]): `didOpen` is answered at
/// once; `didChange` after two seconds of CPU work, with the new text's first line as the
/// diagnostic's message.
const SLOW_SERVER: &str = r#"
def first_line(text):
    return [text.splitlines()[0] if text else ""]

def opened(params):
    doc = params["textDocument"]
    publish(doc["uri"], doc["version"], first_line(doc["text"]))

def changed(params):
    busy_until = time.monotonic() + 2.0
    while time.monotonic() < busy_until:
        pass
    doc = params["textDocument"]
    publish(doc["uri"], doc["version"], first_line(params["contentChanges"][-1]["text"]))

serve({"textDocument/didOpen": opened, "textDocument/didChange": changed})
"#;

#[tokio::test]
async fn silence_while_the_server_still_works_is_not_unchanged() {
    if require_peer("python3").is_none() {
        return;
    }
    let config = "[lsp.slow]\ncommand = [\"python3\", \"server.py\"]\nextensions = [\"slow\"]\n\
                  quiet_ms = 300\ntimeout_ms = 20000\n";
    let script = format!("{PY_LSP_PRELUDE}{SLOW_SERVER}");
    let fixture = fixture(&[("server.py", &script), ("a.slow", "first\n")], config);
    let path = fixture.ws.join("a.slow");
    match check(&fixture.sup, &path).await {
        CheckOutcome::Checked { diagnostics, .. } => {
            assert_eq!(diagnostics[0].message, "first", "{diagnostics:?}");
        }
        other => panic!("expected the first list, got {other:?}"),
    }
    // The server is silent for two seconds, far past the 300 ms quiet window, but busy.
    std::fs::write(&path, "second\n").unwrap();
    match check(&fixture.sup, &path).await {
        CheckOutcome::Checked { diagnostics, .. } => {
            assert_eq!(
                diagnostics[0].message, "second",
                "the old list was taken as standing while the server still computed: {diagnostics:?}"
            );
        }
        other => panic!("expected the second list, got {other:?}"),
    }
    shutdown_and_check(&fixture.sup).await;
}
