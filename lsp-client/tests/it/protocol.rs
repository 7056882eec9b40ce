//! Protocol edge cases against an in-memory peer: big frames both ways at once, timeouts
//! that cancel, every server request answered, and the diagnostics waiting rules.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::common;

use std::path::Path;
use std::time::Duration;

use cc_lsp_client::{DiagnosticsOutcome, LanguageServer, LspError, SyncTicket, Timing, Via};
use common::fake::{pipe, server};
use serde_json::{json, Value};

fn timing(settle_ms: u64, quiet_ms: Option<u64>, cap_ms: u64, indexing_ms: u64) -> Timing {
    Timing {
        settle: Duration::from_millis(settle_ms),
        quiet: quiet_ms.map(Duration::from_millis),
        debounce: Duration::ZERO,
        check_delay: Duration::ZERO,
        cap: Duration::from_millis(cap_ms),
        indexing_cap: Duration::from_millis(indexing_ms),
    }
}

const URI: &str = "file:///w/a.py";

/// A fake server that pushes (full sync, no pull), waiting on `timing`.
async fn pushing(timing: Timing) -> (std::sync::Arc<LanguageServer>, common::fake::Peer) {
    server(json!({"textDocumentSync": 1}), timing, Value::Null).await
}

/// Syncs `/w/a.py` with `text`.
fn sync(server: &LanguageServer, text: &str) -> SyncTicket {
    server.sync(Path::new("/w/a.py"), text, "python").unwrap()
}

#[tokio::test]
async fn megabyte_frames_both_ways_do_not_deadlock() {
    // A 4 KiB pipe: neither side can write a 1 MB frame unless the other reads meanwhile.
    let (conn, _incoming, mut peer) = pipe(json!({}), 4096);
    let big = "x".repeat(1024 * 1024);
    // The peer pushes a 1 MB notification while we send a 1 MB request.
    peer.send(json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 4, "message": big}}));
    let request = conn.request_value("echo", json!({"blob": big}), Duration::from_secs(20));
    let answer = async {
        let message = peer.expect("echo").await;
        let blob = message["params"]["blob"].as_str().unwrap().len();
        peer.send(
            json!({"jsonrpc": "2.0", "id": message["id"], "result": {"len": blob, "blob": big}}),
        );
    };
    let (result, ()) = tokio::join!(request, answer);
    assert_eq!(result.unwrap()["len"], 1024 * 1024);
}

#[tokio::test]
async fn a_request_that_times_out_is_cancelled() {
    let (conn, _incoming, mut peer) = pipe(json!({}), 64 * 1024);
    let error = conn
        .request_value("slow/thing", json!({}), Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(matches!(error, LspError::Timeout { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("did not answer `slow/thing` within 200 ms"),
        "{error}"
    );
    let sent = peer.expect("slow/thing").await;
    let cancel = peer.expect("$/cancelRequest").await;
    assert_eq!(cancel["params"]["id"], sent["id"]);
}

#[tokio::test]
async fn a_server_that_dies_fails_pending_requests_clearly() {
    let (conn, _incoming, peer) = pipe(json!({}), 64 * 1024);
    let request = conn.request_value("textDocument/hover", json!({}), Duration::from_secs(30));
    let kill = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(peer);
    };
    let (result, ()) = tokio::join!(request, kill);
    let error = result.unwrap_err();
    assert!(matches!(error, LspError::ServerExited { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("exited while handling `textDocument/hover`"),
        "{error}"
    );
    // Later requests fail at once.
    let again = conn
        .request_value("x", json!({}), Duration::from_secs(30))
        .await
        .unwrap_err();
    assert!(matches!(again, LspError::ServerExited { .. }));
}

#[tokio::test]
async fn every_server_request_is_answered() {
    let settings = json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
    let (server, mut peer) = server(json!({}), Timing::default(), settings).await;
    let init = peer.expect("initialize").await;
    let caps = &init["params"]["capabilities"];
    assert_eq!(
        caps["general"]["positionEncodings"],
        json!(["utf-8", "utf-16"])
    );
    assert_eq!(
        caps["textDocument"]["publishDiagnostics"]["versionSupport"],
        true
    );
    assert_eq!(
        caps["textDocument"]["diagnostic"]["dynamicRegistration"],
        true
    );
    assert_eq!(caps["experimental"]["serverStatusNotification"], true);

    let ask = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    peer.send(ask(
        1,
        "workspace/configuration",
        json!({"items": [
            {"section": "python.analysis"}, {"section": "nothing.here"}, {}
        ]}),
    ));
    let answer = peer.response(1).await;
    assert_eq!(answer["result"][0], json!({"typeCheckingMode": "strict"}));
    assert_eq!(answer["result"][1], Value::Null);
    assert_eq!(
        answer["result"][2]["python"]["analysis"]["typeCheckingMode"],
        "strict"
    );

    assert!(!server.supports_pull());
    peer.send(ask(2, "client/registerCapability", json!({"registrations": [
        {"id": "pull-1", "method": "textDocument/diagnostic", "registerOptions": {"identifier": "x"}}
    ]})));
    assert_eq!(peer.response(2).await["result"], Value::Null);
    assert!(server.supports_pull());
    peer.send(ask(
        3,
        "client/unregisterCapability",
        json!({"unregisterations": [{"id": "pull-1", "method": "textDocument/diagnostic"}]}),
    ));
    assert_eq!(peer.response(3).await["result"], Value::Null);
    assert!(!server.supports_pull());

    peer.send(ask(
        4,
        "window/workDoneProgress/create",
        json!({"token": "t"}),
    ));
    assert_eq!(peer.response(4).await["result"], Value::Null);
    peer.send(ask(5, "workspace/diagnostic/refresh", Value::Null));
    assert_eq!(peer.response(5).await["result"], Value::Null);
    peer.send(ask(
        6,
        "workspace/applyEdit",
        json!({"edit": {"changes": {}}}),
    ));
    let applied = peer.response(6).await;
    assert_eq!(
        applied["result"]["applied"], false,
        "no applier is wired: {applied}"
    );
    peer.send(ask(7, "custom/unknownThing", json!({})));
    assert_eq!(peer.response(7).await["error"]["code"], -32601);
    peer.send(json!({"jsonrpc": "2.0", "id": "string-id", "method": "workspace/workspaceFolders"}));
    let folders = loop {
        let message = peer.expect_any().await;
        if message.get("id") == Some(&json!("string-id")) {
            break message;
        }
    };
    assert_eq!(folders["result"][0]["uri"], "file:///w");
}

#[tokio::test]
async fn sync_opens_once_then_sends_full_text_versions_and_saves() {
    let capabilities = json!({"textDocumentSync": {"change": 1, "save": {"includeText": true}}});
    let (server, mut peer) = server(capabilities, Timing::default(), Value::Null).await;
    assert_eq!(sync(&server, "x = 1\n").version, 1);
    let open = peer.expect("textDocument/didOpen").await;
    assert_eq!(open["params"]["textDocument"]["version"], 1);
    assert_eq!(open["params"]["textDocument"]["text"], "x = 1\n");
    assert_eq!(
        peer.expect("textDocument/didSave").await["params"]["text"],
        "x = 1\n"
    );
    for version in 2..=3 {
        let text = format!("x = {version}\n");
        assert_eq!(sync(&server, &text).version, version);
        let change = peer.expect_any().await;
        assert_eq!(change["method"], "textDocument/didChange", "{change}");
        assert_eq!(change["params"]["textDocument"]["version"], version);
        assert_eq!(change["params"]["contentChanges"], json!([{"text": text}]));
        let save = peer.expect_any().await;
        assert_eq!(save["method"], "textDocument/didSave", "{save}");
    }
    // Text the server already has is not sent again (clangd would never answer a change
    // that changes nothing): the ticket is for the version it has.
    assert_eq!(sync(&server, "x = 3\n").version, 3);
    assert_eq!(sync(&server, "x = 4\n").version, 4);
    let next = peer.expect_any().await;
    assert_eq!(next["params"]["textDocument"]["version"], 4, "{next}");
}

#[tokio::test]
async fn versioned_push_waits_for_that_version() {
    let (server, mut peer) = pushing(timing(0, None, 10_000, 20_000)).await;
    let ticket = sync(&server, "x = 1\n");
    let wait = server.diagnostics(&ticket);
    let drive = async {
        peer.expect("textDocument/didOpen").await;
        peer.publish(URI, Some(0), &["stale, older version"]);
        tokio::time::sleep(Duration::from_millis(50)).await;
        peer.publish(URI, Some(1), &["the one"]);
    };
    let (outcome, ()) = tokio::join!(wait, drive);
    match outcome {
        DiagnosticsOutcome::Fresh {
            diagnostics, via, ..
        } => {
            assert_eq!(via, Via::VersionedPush);
            assert_eq!(diagnostics[0].message, "the one");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn unversioned_push_settles_past_an_early_empty_list() {
    let (server, mut peer) = pushing(timing(400, None, 10_000, 20_000)).await;
    let ticket = sync(&server, "x = 1\n");
    let drive = async {
        peer.expect("textDocument/didOpen").await;
        peer.publish(URI, None, &[]);
        tokio::time::sleep(Duration::from_millis(150)).await;
        peer.publish(URI, None, &["real"]);
    };
    let (outcome, ()) = tokio::join!(server.diagnostics(&ticket), drive);
    match outcome {
        DiagnosticsOutcome::Fresh {
            diagnostics, via, ..
        } => {
            assert_eq!(via, Via::UnversionedPush);
            assert_eq!(
                diagnostics.len(),
                1,
                "the settle window let the real list replace the empty one"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn quiet_server_means_unchanged_not_pending() {
    // The cap is far past the quiet window: only the quiet rule can end these waits early.
    let (server, mut peer) = pushing(timing(0, Some(300), 1_500, 1_500)).await;
    // Silence about a file it never published for is no answer: pending, never clean.
    let never = server
        .sync(Path::new("/w/never.py"), "x = 0\n", "python")
        .unwrap();
    match server.diagnostics(&never).await {
        DiagnosticsOutcome::Pending { .. } => {}
        other => panic!("a file never published for must be pending, got {other:?}"),
    }
    let first = sync(&server, "x = 1\n");
    peer.expect("textDocument/didOpen").await;
    peer.publish(URI, Some(1), &["kept"]);
    assert!(matches!(
        server.diagnostics(&first).await,
        DiagnosticsOutcome::Fresh { .. }
    ));
    // The second change gets no publish at all.
    let second = sync(&server, "x = 2\n");
    match server.diagnostics(&second).await {
        DiagnosticsOutcome::Unchanged { diagnostics } => assert_eq!(diagnostics[0].message, "kept"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn no_answer_is_pending_never_clean_and_indexing_stretches_the_cap() {
    let (server, mut peer) = pushing(timing(0, None, 300, 1_500)).await;
    let ticket = sync(&server, "x = 1\n");
    match server.diagnostics(&ticket).await {
        DiagnosticsOutcome::Pending { indexing, .. } => assert!(!indexing),
        other => panic!("silence must be pending, got {other:?}"),
    }
    // While the server reports progress, the wait goes past the 300 ms cap.
    let ticket = sync(&server, "x = 2\n");
    peer.expect("textDocument/didOpen").await;
    peer.send(json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "idx", "value": {"kind": "begin", "title": "Indexing"}}}));
    let drive = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        peer.send(json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "idx", "value": {"kind": "end"}}}));
        peer.publish(URI, Some(2), &["after indexing"]);
    };
    let (outcome, ()) = tokio::join!(server.diagnostics(&ticket), drive);
    assert!(
        matches!(outcome, DiagnosticsOutcome::Fresh { .. }),
        "{outcome:?}"
    );
    // Past the indexing cap it is pending, and says it was indexing.
    peer.send(json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "idx2", "value": {"kind": "begin", "title": "Indexing"}}}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ticket = sync(&server, "x = 3\n");
    match server.diagnostics(&ticket).await {
        DiagnosticsOutcome::Pending { indexing, .. } => assert!(indexing),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn pull_is_used_once_registered_and_refresh_pulls_again() {
    let (server, mut peer) = pushing(Timing::default()).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "client/registerCapability", "params": {"registrations": [
        {"id": "d", "method": "textDocument/diagnostic", "registerOptions": {"identifier": "basedpyright"}}
    ]}}));
    peer.response(1).await;
    let ticket = sync(&server, "x = 1\n");
    let drive = async {
        let first = peer.expect("textDocument/diagnostic").await;
        assert_eq!(first["params"]["identifier"], "basedpyright");
        // The server asks for a refresh before answering: the client must pull again.
        peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/diagnostic/refresh"}));
        peer.response(2).await;
        peer.send(
            json!({"jsonrpc": "2.0", "id": first["id"], "result": {"kind": "full", "items": []}}),
        );
        let second = peer.expect("textDocument/diagnostic").await;
        peer.send(json!({"jsonrpc": "2.0", "id": second["id"], "result": {"kind": "full", "items": [
            {"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 1}}, "severity": 1, "message": "fresh", "code": 7}
        ]}}));
    };
    let (outcome, ()) = tokio::join!(server.diagnostics(&ticket), drive);
    match outcome {
        DiagnosticsOutcome::Fresh {
            diagnostics, via, ..
        } => {
            assert_eq!(via, Via::Pull);
            assert_eq!(diagnostics[0].message, "fresh");
            assert_eq!(diagnostics[0].line, 3);
            assert_eq!(diagnostics[0].code.as_deref(), Some("7"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn answers_reach_their_requests_out_of_order_and_a_misshapen_one_is_an_error() {
    use cc_lsp_client::lsp_types::{self, request::HoverRequest};
    use cc_lsp_client::transport::{Connection, Incoming};
    let ((client, _client_incoming), (peer, mut asked)) = Connection::memory("client", "peer");
    let first = client.request_value("first", json!({"n": 1}), Duration::from_secs(10));
    let second = client.request_value("second", json!({"n": 2}), Duration::from_secs(10));
    let hover = client.request::<HoverRequest>(
        lsp_types::HoverParams {
            text_document_position_params: lsp_types::TextDocumentPositionParams::new(
                lsp_types::TextDocumentIdentifier::new(URI.parse().unwrap()),
                lsp_types::Position::new(0, 0),
            ),
            work_done_progress_params: Default::default(),
        },
        Duration::from_secs(10),
    );
    let answer = async {
        let mut requests = Vec::new();
        while requests.len() < 3 {
            match asked.recv().await.unwrap() {
                Incoming::Request { id, method, params } => requests.push((id, method, params)),
                other => panic!("{other:?}"),
            }
        }
        // An answer to an id never sent is dropped; then each, the last first.
        peer.respond(json!(999), Ok(json!("stray")));
        for (id, method, params) in requests.into_iter().rev() {
            let answer = if method == "textDocument/hover" {
                assert_eq!(params["textDocument"]["uri"], URI);
                json!({"contents": 42})
            } else {
                json!({"method": method, "n": params["n"]})
            };
            peer.respond(id, Ok(answer));
        }
    };
    let (first, second, hover, ()) = tokio::join!(first, second, hover, answer);
    assert_eq!(first.unwrap(), json!({"method": "first", "n": 1}));
    assert_eq!(second.unwrap(), json!({"method": "second", "n": 2}));
    let error = hover.unwrap_err();
    assert!(matches!(error, LspError::BadResponse { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("client sent an unexpected answer to `textDocument/hover`"),
        "{error}"
    );
}

/// clangd logs "Built preamble" on stderr, and publishes and reports status on stdout: the log
/// line may be read after the publish that came from the new preamble. A file that went idle
/// after that publish has its answer; the late line must not make the wait for another.
#[tokio::test]
async fn a_preamble_log_read_after_the_publish_it_preceded_does_not_stall_the_wait() {
    let (server, mut peer) = pushing(timing(0, None, 3_000, 3_000)).await;
    let uri = "file:///w/a.c";
    let path = Path::new("/w/a.c");
    let opened = server.sync(path, "int f(void);\n", "c").unwrap();
    peer.expect("textDocument/didOpen").await;
    peer.publish(uri, Some(1), &[]);
    peer.file_status(uri, "idle");
    assert!(matches!(
        server.diagnostics(&opened).await,
        DiagnosticsOutcome::Fresh { .. }
    ));

    // The legitimate order: a list against the old preamble, the build, the real list.
    let changed = server.sync(path, "int f(int);\n", "c").unwrap();
    peer.expect("textDocument/didChange").await;
    peer.file_status(uri, "parsing includes, parsing main file");
    peer.publish(uri, Some(2), &["against the old preamble"]);
    let drive = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        peer.log(
            "I[12:00:00.000] Built preamble of size 1 for file /w/a.c version 2 in 0.10 seconds",
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        peer.file_status(uri, "parsing main file");
        peer.publish(uri, Some(2), &["against the new preamble"]);
        peer.file_status(uri, "idle");
    };
    let (outcome, ()) = tokio::join!(server.diagnostics(&changed), drive);
    match outcome {
        DiagnosticsOutcome::Fresh { diagnostics, .. } => {
            assert_eq!(diagnostics[0].message, "against the new preamble");
        }
        other => panic!("{other:?}"),
    }

    // The log line trails: the real list and the idle status are read first.
    let changed = server.sync(path, "int f(long);\n", "c").unwrap();
    peer.expect("textDocument/didChange").await;
    peer.file_status(uri, "parsing includes");
    peer.file_status(uri, "parsing main file");
    peer.publish(uri, Some(3), &["after the build"]);
    peer.file_status(uri, "idle");
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.log("I[12:00:01.000] Built preamble of size 1 for file /w/a.c version 3 in 0.10 seconds");
    // The line is read before the wait begins.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    match server.diagnostics(&changed).await {
        DiagnosticsOutcome::Fresh { diagnostics, .. } => {
            assert_eq!(diagnostics[0].message, "after the build");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// A clangd-like server with `/w/a.c` open and its first list answered.
async fn clangd_file_answered() -> (
    std::sync::Arc<LanguageServer>,
    common::fake::Peer,
    &'static str,
    &'static Path,
) {
    let (server, mut peer) = pushing(timing(0, None, 20_000, 20_000)).await;
    let uri = "file:///w/a.c";
    let path = Path::new("/w/a.c");
    let opened = server.sync(path, "int f(void);\n", "c").unwrap();
    peer.expect("textDocument/didOpen").await;
    peer.publish(uri, Some(1), &[]);
    peer.file_status(uri, "idle");
    assert!(matches!(
        server.diagnostics(&opened).await,
        DiagnosticsOutcome::Fresh { .. }
    ));
    (server, peer, uri, path)
}

/// The same race one step earlier: the "Built preamble" line is read after the publish it
/// preceded but before the idle status that follows that publish. It looks like a rebuild
/// whose publish is to come (clangd can go idle between a publish and the rebuild's), so
/// nothing settles; after a while idle with nothing since, the file is reopened under the
/// next version, and that publish answers, well before the deadline.
#[tokio::test]
async fn a_preamble_log_read_between_its_publish_and_idle_reopens_the_file() {
    let (server, mut peer, uri, path) = clangd_file_answered().await;

    let changed = server.sync(path, "int f(long);\n", "c").unwrap();
    peer.expect("textDocument/didChange").await;
    peer.file_status(uri, "parsing includes");
    peer.file_status(uri, "parsing main file");
    peer.publish(uri, Some(2), &["against a patched preamble"]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.log("I[12:00:01.000] Built preamble of size 1 for file /w/a.c version 2 in 0.10 seconds");
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.file_status(uri, "idle");
    let started = std::time::Instant::now();
    let waiting = tokio::spawn({
        let server = server.clone();
        async move { server.diagnostics(&changed).await }
    });
    peer.expect("textDocument/didClose").await;
    let reopened = peer.expect("textDocument/didOpen").await;
    assert_eq!(
        reopened["params"]["textDocument"]["version"], 3,
        "{reopened}"
    );
    assert_eq!(reopened["params"]["textDocument"]["text"], "int f(long);\n");
    peer.publish(uri, Some(3), &["after the reopen"]);
    // The reopen's own preamble line may trail its publish too: a first build publishes once.
    tokio::time::sleep(Duration::from_millis(100)).await;
    peer.log("I[12:00:03.000] Built preamble of size 1 for file /w/a.c version 3 in 0.10 seconds");
    peer.file_status(uri, "idle");
    match waiting.await.unwrap() {
        DiagnosticsOutcome::Fresh { diagnostics, .. } => {
            assert_eq!(diagnostics[0].message, "after the reopen");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
}

/// clangd can write a "parsing includes" status after the publish it preceded (seen under
/// load: publish, "parsing includes, parsing main file", idle, and nothing more). It looks
/// like a rebuild whose publish is to come; idle a while with nothing since, the file is
/// reopened and that publish answers.
#[tokio::test]
async fn a_status_written_after_its_publish_reopens_the_file() {
    let (server, mut peer, uri, path) = clangd_file_answered().await;

    let changed = server.sync(path, "int f(long);\n", "c").unwrap();
    peer.expect("textDocument/didChange").await;
    peer.publish(uri, Some(2), &["the answer"]);
    peer.file_status(uri, "parsing includes, parsing main file");
    peer.file_status(uri, "idle");
    let waiting = tokio::spawn({
        let server = server.clone();
        async move { server.diagnostics(&changed).await }
    });
    peer.expect("textDocument/didClose").await;
    // clangd clears a closed file's list, without a version.
    peer.publish(uri, None, &[]);
    peer.expect("textDocument/didOpen").await;
    peer.publish(uri, Some(3), &["the answer, again"]);
    peer.file_status(uri, "idle");
    match waiting.await.unwrap() {
        DiagnosticsOutcome::Fresh { diagnostics, .. } => {
            assert_eq!(diagnostics[0].message, "the answer, again");
        }
        other => panic!("{other:?}"),
    }
}
