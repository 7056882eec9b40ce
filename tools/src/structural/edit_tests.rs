//! `ast_edit` and `resolve` through the registry: staging writes nothing, accept writes all
//! or nothing through the approver and the diagnostics hook, errors are typed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use super::test_support::{call, read, registry, registry_with, write, Recorder};
use crate::{AllowAll, Approval, ApprovalRequest, Approver, DenyAll, Surface, WorkspaceRoot};

/// Refuses `resolve` until allowed; approves everything else.
#[derive(Default)]
struct HoldResolve {
    allowed: AtomicBool,
}

#[async_trait]
impl Approver for HoldResolve {
    async fn approve(&self, request: ApprovalRequest<'_>) -> Approval {
        if request.tool == "resolve" && !self.allowed.load(Ordering::SeqCst) {
            Approval::Deny {
                reason: "not yet".into(),
            }
        } else {
            Approval::Allow
        }
    }
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pkg/a.py",
        "def f(x) -> int:\n    if x:\n        # why\n        log(x)\n        return x\n    return 0\n",
    );
    write(dir.path(), "pkg/b.py", "log(1)\nlog(log(2))\n");
    dir
}

#[tokio::test]
async fn ast_edit_proposes_and_resolve_accept_writes_every_file() {
    let dir = fixture();
    let hook = Arc::new(Recorder::default());
    let registry = registry_with(dir.path(), Arc::new(AllowAll), Some(hook.clone()));
    let output = registry
        .call(
            "ast_edit",
            json!({"pattern": "log($A)", "rewrite": "logger.info($A)", "path": "pkg", "language": "python"}),
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!(output.value);
    assert!(output.render_text().ends_with(
        "call resolve with edit_id \"edit_1\" and action \"accept\" to write it, or \"discard\""
    ));
    // Nothing written yet.
    assert_eq!(read(dir.path(), "pkg/b.py"), "log(1)\nlog(log(2))\n");
    let accepted = registry
        .call("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await
        .unwrap();
    insta::assert_json_snapshot!(accepted.value);
    assert_eq!(
        read(dir.path(), "pkg/b.py"),
        "logger.info(1)\nlogger.info(log(2))\n"
    );
    assert!(read(dir.path(), "pkg/a.py").contains("        logger.info(x)\n"));
    // The diagnostics hook saw both files; the edit is gone.
    let seen = hook.paths.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    let again = call(
        &registry,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await;
    assert_eq!(again["error"]["kind"], "unknown_edit");
}

#[tokio::test]
async fn ast_edit_warns_about_what_the_rewrite_would_drop() {
    let dir = fixture();
    let registry = registry(dir.path());
    // The comment goes with the body the template drops (a warning); the return annotation
    // the pattern left out is carried over.
    let value = call(
        &registry,
        "ast_edit",
        json!({"pattern": "def $F($$$P): $$$B", "rewrite": "def $F($$$P):\n    pass", "path": "pkg/a.py"}),
    )
    .await;
    insta::assert_json_snapshot!(value["warnings"]);
    assert!(
        value["files"][0]["diff"]
            .as_str()
            .unwrap()
            .contains(" def f(x) -> int:\n-    if x:"),
        "{value}"
    );
}

#[tokio::test]
async fn ast_edit_lists_the_matches_it_skipped_and_says_so_in_its_text() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.py",
        "def f(x) -> int:\n    return x\n\ndef g(y):\n    return y\n",
    );
    let registry = registry(dir.path());
    let output = registry
        .call(
            "ast_edit",
            json!({"pattern": "def $F($$$P): $$$B", "rewrite": "def $F($$$P) -> None:\n    $$$B", "path": "a.py"}),
        )
        .await
        .unwrap();
    assert_eq!(output.value["replacements"], 1);
    insta::assert_json_snapshot!(output.value["skipped"]);
    let text = output.render_text();
    assert!(
        text.contains("1 match not rewritten, so as not to delete code the pattern does not name")
            && text.contains("skipped a.py:1: would delete `-> int`"),
        "{text}"
    );
}

#[tokio::test]
async fn resolve_refuses_a_stale_edit_and_writes_nothing() {
    let dir = fixture();
    let registry = registry(dir.path());
    let staged = call(
        &registry,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "trace($A)", "path": "pkg", "language": "python"}),
    )
    .await;
    assert_eq!(staged["edit_id"], "edit_1");
    std::fs::write(dir.path().join("pkg/b.py"), "log(1)  # edited meanwhile\n").unwrap();
    let before_a = read(dir.path(), "pkg/a.py");
    let refused = call(
        &registry,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await;
    insta::assert_json_snapshot!(refused);
    assert_eq!(read(dir.path(), "pkg/a.py"), before_a);
    assert_eq!(read(dir.path(), "pkg/b.py"), "log(1)  # edited meanwhile\n");
}

#[tokio::test]
async fn resolve_discard_forgets_and_unknown_ids_are_typed() {
    let dir = fixture();
    let registry = registry(dir.path());
    call(
        &registry,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "trace($A)", "path": "pkg/b.py"}),
    )
    .await;
    let discarded = call(
        &registry,
        "resolve",
        json!({"edit_id": "edit_1", "action": "discard"}),
    )
    .await;
    assert_eq!(
        discarded,
        json!({"status": "discarded", "edit_id": "edit_1"})
    );
    assert_eq!(read(dir.path(), "pkg/b.py"), "log(1)\nlog(log(2))\n");
    let unknown = call(
        &registry,
        "resolve",
        json!({"edit_id": "edit_9", "action": "accept"}),
    )
    .await;
    assert_eq!(unknown["error"]["kind"], "unknown_edit");
    let bad_action = call(
        &registry,
        "resolve",
        json!({"edit_id": "edit_1", "action": "maybe"}),
    )
    .await;
    assert_eq!(bad_action["error"]["kind"], "invalid_arguments");
}

#[tokio::test]
async fn ast_edit_errors_are_typed() {
    let dir = fixture();
    let registry = registry(dir.path());
    let unbound = call(
        &registry,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "trace($A, $LEVEL)", "path": "pkg/b.py"}),
    )
    .await;
    insta::assert_json_snapshot!(unbound);
    let none = call(
        &registry,
        "ast_edit",
        json!({"pattern": "nothing_here($A)", "rewrite": "x($A)", "path": "pkg/b.py"}),
    )
    .await;
    assert_eq!(none["status"], "no_matches");
    assert!(none.get("edit_id").is_none());
    let unparsable = call(
        &registry,
        "ast_edit",
        json!({"pattern": "log(", "rewrite": "x", "path": "pkg/b.py"}),
    )
    .await;
    assert_eq!(unparsable["error"]["kind"], "unparsable");
}

#[tokio::test]
async fn accept_goes_through_the_approver_and_edits_are_hidden_from_plan_mode() {
    let dir = fixture();
    let registry = registry_with(
        dir.path(),
        Arc::new(DenyAll {
            reason: "read-only review".into(),
        }),
        None,
    );
    // Writes are refused before anything is staged or written.
    let denied = call(
        &registry,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "x($A)", "path": "pkg/b.py"}),
    )
    .await;
    assert_eq!(denied["error"]["kind"], "denied");
    let plan: Vec<String> = registry
        .schemas(Surface::Plan)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(plan.contains(&"ast_grep".to_owned()));
    assert!(!plan.contains(&"ast_edit".to_owned()) && !plan.contains(&"resolve".to_owned()));
    assert_eq!(read(dir.path(), "pkg/b.py"), "log(1)\nlog(log(2))\n");
}

#[tokio::test]
async fn a_refused_accept_writes_nothing_and_keeps_the_edit() {
    let dir = fixture();
    let approver = Arc::new(HoldResolve::default());
    let registry = registry_with(dir.path(), approver.clone(), None);
    let staged = call(
        &registry,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "x($A)", "path": "pkg/b.py"}),
    )
    .await;
    assert_eq!(staged["status"], "proposed", "{staged}");
    let accept = json!({"edit_id": "edit_1", "action": "accept"});
    let denied = call(&registry, "resolve", accept.clone()).await;
    assert_eq!(denied["error"]["kind"], "denied", "{denied}");
    assert_eq!(read(dir.path(), "pkg/b.py"), "log(1)\nlog(log(2))\n");
    // Approved later, the same edit is still there to accept.
    approver.allowed.store(true, Ordering::SeqCst);
    let accepted = call(&registry, "resolve", accept).await;
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    assert_eq!(read(dir.path(), "pkg/b.py"), "x(1)\nx(log(2))\n");
}

#[test]
fn a_failed_write_names_what_was_restored_and_what_was_not() {
    // A real mid-commit failure needs a file system that refuses a write, which a test run
    // as root cannot arrange; `cc-structural`'s transaction tests inject one. Here: the
    // typed error built from what the transaction reports.
    let dir = tempfile::tempdir().unwrap();
    let root = WorkspaceRoot::new(dir.path()).unwrap();
    let at = |p: &str| root.path().join(p);
    let all_back = crate::commit::commit_error(
        &root,
        &cc_structural::CommitError::Io {
            path: at("pkg/c.py"),
            message: "No space left on device".into(),
            restored: vec![at("pkg/a.py"), at("pkg/b.py")],
            unrestored: vec![],
        },
        "edit_3",
        super::edit::EDIT_DROPPED,
    );
    insta::assert_json_snapshot!(all_back.to_envelope());
    let partly = crate::commit::commit_error(
        &root,
        &cc_structural::CommitError::Io {
            path: at("pkg/c.py"),
            message: "No space left on device".into(),
            restored: vec![at("pkg/a.py")],
            unrestored: vec![(at("pkg/b.py"), "changed by another writer".into())],
        },
        "edit_3",
        super::edit::EDIT_DROPPED,
    );
    assert!(
        partly.to_string().contains("1 could not be"),
        "{}",
        partly.to_envelope()
    );
    assert_eq!(
        partly.to_envelope()["error"]["unrestored"][0]["path"],
        "pkg/b.py"
    );
}

#[tokio::test]
async fn each_run_has_its_own_staged_edits() {
    let dir = fixture();
    let first = registry(dir.path());
    let second = registry(dir.path());
    call(
        &first,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "x($A)", "path": "pkg/b.py"}),
    )
    .await;
    let other = call(
        &second,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await;
    assert_eq!(other["error"]["kind"], "unknown_edit");
    assert_eq!(read(dir.path(), "pkg/b.py"), "log(1)\nlog(log(2))\n");
}

#[tokio::test]
async fn staged_edits_are_bounded_and_an_evicted_one_is_expired() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "log(1)\n");
    let registry = registry(dir.path());
    let mut last = serde_json::Value::Null;
    for _ in 0..super::edit::MAX_STAGED_EDITS + 1 {
        last = call(
            &registry,
            "ast_edit",
            json!({"pattern": "log($A)", "rewrite": "trace($A)", "path": "a.py"}),
        )
        .await;
    }
    assert_eq!(last["evicted"], json!(["edit_1"]));
    let expired = call(
        &registry,
        "resolve",
        json!({"edit_id": "edit_1", "action": "accept"}),
    )
    .await;
    assert_eq!(expired["error"]["kind"], "expired", "{expired}");
    assert!(expired["error"]["message"]
        .as_str()
        .unwrap()
        .contains("run ast_edit again"));
    // The newest is still there; ids never staged stay unknown.
    let newest = format!("edit_{}", super::edit::MAX_STAGED_EDITS + 1);
    let accepted = call(
        &registry,
        "resolve",
        json!({"edit_id": newest, "action": "accept"}),
    )
    .await;
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    let unknown = call(
        &registry,
        "resolve",
        json!({"edit_id": "edit_999", "action": "accept"}),
    )
    .await;
    assert_eq!(unknown["error"]["kind"], "unknown_edit");
}

#[test]
fn the_store_evicts_the_oldest_past_its_byte_budget() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", &"log(1)\n".repeat(100));
    let pattern = cc_structural::Pattern::new(
        cc_structural::Languages::builtin()
            .by_name("python")
            .unwrap(),
        "log($A)",
        None,
    )
    .unwrap();
    let stage = || {
        cc_structural::stage_rewrite(&pattern, "trace($A)", &dir.path().join("a.py"), &|p| {
            p.display().to_string()
        })
        .unwrap()
    };
    // One edit holds the old and new file (700 + 900 bytes) and its diff; room for two.
    let one = Arc::new(super::EditStore::default());
    one.insert_for_test(stage());
    let size = one.usage().1;
    assert!(size > 1_600, "{size}");
    let store = Arc::new(super::EditStore::with_limits(10, size * 5 / 2));
    let (first, _) = store.insert_for_test(stage());
    let (_, evicted) = store.insert_for_test(stage());
    assert!(evicted.is_empty());
    let (_, evicted) = store.insert_for_test(stage());
    assert_eq!(evicted, [first]);
    assert_eq!(store.usage(), (2, 2 * size));
}

#[tokio::test]
async fn an_edit_larger_than_the_run_may_stage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", &"log(1)\n".repeat(100));
    let root = WorkspaceRoot::new(dir.path()).unwrap();
    let mut builder = crate::RegistryBuilder::new(
        crate::testing::RunBuilder::new(root.clone())
            .conversation("small")
            .build(),
    );
    builder.add_tool(Arc::new(super::AstEditTool::new(
        root,
        Arc::new(cc_structural::Languages::builtin()),
        Arc::new(super::EditStore::with_limits(4, 1_000)),
    )));
    let registry = builder.build();
    let refused = call(
        &registry,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "trace($A)", "path": "a.py"}),
    )
    .await;
    assert_eq!(refused["error"]["kind"], "edit_too_large", "{refused}");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("narrow `path`"));
    assert_eq!(read(dir.path(), "a.py"), "log(1)\n".repeat(100));
}

/// Issue 26, item 2: a file whose rewrite would not parse is not staged; it is listed under
/// `skipped` with the line and the parse error, the text says so, and `resolve accept`
/// writes only the files that were staged (and says which were not).
#[tokio::test]
async fn a_rewrite_that_would_not_parse_is_listed_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok.py", "log(1)\n");
    write(dir.path(), "bad.py", "x = 1\nlog(2)\n");
    let registry = registry(dir.path());
    // `log($A)` → `log($A` closes nothing where the call stands alone on its line; in `ok.py`
    // a rewrite to a call is fine.
    let output = registry
        .call(
            "ast_edit",
            json!({"pattern": "log($A)", "rewrite": "log($A", "path": "bad.py"}),
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!(output.value);
    let text = output.render_text();
    insta::assert_snapshot!(text);
    assert!(text.contains("resolve accept cannot write it"), "{text}");

    // Two files, one broken: the other is staged and written, the broken one never (a
    // comprehension is code inside `[…]`, not as a statement).
    write(dir.path(), "ok.py", "y = [log(1)]\n");
    let staged = call(
        &registry,
        "ast_edit",
        json!({"pattern": "log($A)", "rewrite": "log($A) for _ in ()", "language": "python"}),
    )
    .await;
    assert_eq!(staged["status"], "proposed", "{staged}");
    assert_eq!(staged["files"].as_array().unwrap().len(), 1, "{staged}");
    assert_eq!(staged["skipped"][0]["why"], "would_not_parse", "{staged}");
    assert_eq!(staged["skipped"][0]["path"], "bad.py");
    let accepted = registry
        .call(
            "resolve",
            json!({"edit_id": staged["edit_id"], "action": "accept"}),
        )
        .await
        .unwrap();
    assert_eq!(accepted.value["not_written"], json!(["bad.py"]));
    assert!(accepted
        .render_text()
        .contains("not written (never staged: their rewrite would not parse): bad.py"));
    assert_eq!(read(dir.path(), "ok.py"), "y = [log(1) for _ in ()]\n");
    assert_eq!(read(dir.path(), "bad.py"), "x = 1\nlog(2)\n");
}
