//! gopls publishes diagnostics for files that are not open from passes over the workspace,
//! without a version and without its analyses (`go vet`'s findings). Such a publish can
//! arrive just after a file was opened; taken as the open file's answer, it drops the
//! findings, which then come back with a later call as if that call had caused them. A
//! scripted server in gopls's place (its built-in spec, another command) publishes a
//! versionless empty list on `didOpen` and the versioned list with the finding 300 ms later:
//! the answer is the versioned list. Real gopls is covered in
//! `tools/tests/lsp_real_projects.rs` (pflag); this is the edge case in addition.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use cc_lsp_client::CheckOutcome;
use cc_test_support::require_peer;
use common::*;

/// The handlers of the scripted server (after [`PY_LSP_PRELUDE`]).
const WORKSPACE_PASS_FIRST: &str = r#"
def opened(params):
    doc = params["textDocument"]
    publish(doc["uri"], None, [])
    time.sleep(0.3)
    publish(doc["uri"], doc["version"], ["vet finding"])

serve({"textDocument/didOpen": opened})
"#;

#[tokio::test]
async fn a_versionless_publish_is_not_the_answer_for_an_open_file() {
    if require_peer("python3").is_none() {
        return;
    }
    let config = "[lsp.go]\ncommand = [\"python3\", \"server.py\"]\nname = \"gopls\"\n\
                  timeout_ms = 20000\n";
    let script = format!("{PY_LSP_PRELUDE}{WORKSPACE_PASS_FIRST}");
    let fixture = fixture(
        &[
            ("server.py", &script),
            ("go.mod", "module m\n"),
            ("a.go", "package m\n"),
        ],
        config,
    );
    match check(&fixture.sup, &fixture.ws.join("a.go")).await {
        CheckOutcome::Checked { diagnostics, .. } => {
            let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
            assert_eq!(
                messages,
                ["vet finding"],
                "the workspace pass's list was taken as the open file's answer"
            );
        }
        other => panic!("expected the versioned list, got {other:?}"),
    }
    shutdown_and_check(&fixture.sup).await;
}
