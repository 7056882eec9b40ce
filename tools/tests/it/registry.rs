//! The registry's dispatch path: surfaces, approver, serialization, bridge, diagnostics hook.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cc_tools::{
    AfterWrite, AllowAll, Approval, ApprovalRequest, Approver, CallContext, DenyAll, Origin,
    RegistryBuilder, Resources, Run, Surface, Tier, Tool, ToolError, ToolOutput,
};
use serde_json::{json, Value};

fn run_in(dir: &std::path::Path, surface: Surface, approver: Arc<dyn Approver>) -> Run {
    Run::builder(dir)
        .surface(surface)
        .approver(approver)
        .build()
}

/// Records every approval request and answers with a fixed decision.
struct RecordingApprover {
    seen: Mutex<Vec<(String, Origin)>>,
    allow: bool,
}

#[async_trait]
impl Approver for RecordingApprover {
    async fn approve(&self, request: ApprovalRequest<'_>) -> Approval {
        self.seen
            .lock()
            .unwrap()
            .push((request.tool.to_owned(), request.origin.clone()));
        if self.allow {
            Approval::Allow
        } else {
            Approval::Deny {
                reason: "the operator said no".into(),
            }
        }
    }
}

/// An exec-tier tool that is not parallel-safe and counts overlapping calls; with
/// `{"inner": NAME}` it calls NAME through the bridge.
#[derive(Default)]
struct SerialProbe {
    running: AtomicUsize,
    max_running: AtomicUsize,
}

#[async_trait]
impl Tool for SerialProbe {
    fn name(&self) -> &str {
        "probe"
    }
    fn tier(&self) -> Tier {
        Tier::Exec
    }
    fn description(&self) -> &str {
        "test probe"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn parallel_safe(&self) -> bool {
        false
    }
    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        let result = if let Some(inner) = args.get("inner").and_then(Value::as_str) {
            let inner_args = args.get("args").cloned().unwrap_or(json!({}));
            ctx.call_tool(inner, inner_args)
                .await
                .map(|output| output.value)
        } else {
            tokio::time::sleep(Duration::from_millis(30)).await;
            Ok(json!({}))
        };
        self.running.fetch_sub(1, Ordering::SeqCst);
        match result {
            Ok(value) => Ok(ToolOutput::new(json!({ "inner": value }))),
            Err(error) => Ok(ToolOutput::new(json!({ "inner_error": error.to_json() }))),
        }
    }
}

#[tokio::test]
async fn plan_and_subagent_surfaces_list_and_allow_read_tier_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    for surface in [Surface::Plan, Surface::ReadonlySubagent] {
        let registry = Resources {
            host_files: true,
            host_tools: vec![Arc::new(SerialProbe::default())],
            ..Default::default()
        }
        .build(run_in(dir.path(), surface, Arc::new(AllowAll)));
        let names: Vec<String> = registry
            .schemas(surface)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["read"]);
        let full: Vec<String> = registry
            .schemas(Surface::Full)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(full, ["read", "write", "edit", "apply_patch", "probe"]);

        let error = registry
            .call(
                "edit",
                json!({"path": "a.txt", "old_text": "hello", "new_text": "bye"}),
            )
            .await
            .unwrap_err();
        assert_eq!(error.kind(), "not_available");
        assert!(error.message().contains("not available on the"), "{error}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "hello\n"
        );
        let read = registry
            .call("read", json!({"path": "a.txt"}))
            .await
            .unwrap();
        assert_eq!(read.value["content"], "hello\n");
    }
}

#[tokio::test]
async fn unknown_tool_lists_what_is_available() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Resources {
        host_files: true,
        ..Default::default()
    }
    .build(run_in(dir.path(), Surface::Plan, Arc::new(AllowAll)));
    let error = registry.call("wrte", json!({})).await.unwrap_err();
    assert_eq!(error.kind(), "unknown_tool");
    assert!(error.message().ends_with("available: read"), "{error}");
}

#[tokio::test]
async fn no_resources_means_no_tools() {
    let dir = tempfile::tempdir().unwrap();
    let registry =
        Resources::default().build(run_in(dir.path(), Surface::Full, Arc::new(AllowAll)));
    assert!(registry.schemas(Surface::Full).is_empty());
}

#[tokio::test]
async fn approver_sees_write_and_exec_calls_but_not_reads() {
    let dir = tempfile::tempdir().unwrap();
    let approver = Arc::new(RecordingApprover {
        seen: Mutex::new(Vec::new()),
        allow: false,
    });
    let registry = Resources {
        host_files: true,
        ..Default::default()
    }
    .build(run_in(dir.path(), Surface::Full, approver.clone()));
    let error = registry
        .call("write", json!({"path": "new.txt", "content": "x"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "denied");
    assert!(error.message().contains("the operator said no"));
    assert!(!dir.path().join("new.txt").exists());
    let _ = registry.call("read", json!({"path": "new.txt"})).await;
    assert_eq!(
        *approver.seen.lock().unwrap(),
        vec![("write".to_owned(), Origin::Model)]
    );
}

#[tokio::test]
async fn bridge_calls_pass_the_same_surface_and_approver() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let approver = Arc::new(RecordingApprover {
        seen: Mutex::new(Vec::new()),
        allow: true,
    });
    let registry = Resources {
        host_files: true,
        host_tools: vec![Arc::new(SerialProbe::default())],
        ..Default::default()
    }
    .build(run_in(dir.path(), Surface::Full, approver.clone()));

    let output = registry
        .call("probe", json!({"inner": "read", "args": {"path": "a.txt"}}))
        .await
        .unwrap();
    assert_eq!(output.value["inner"]["content"], "hello\n");

    let output = registry
        .call(
            "probe",
            json!({"inner": "write", "args": {"path": "b.txt", "content": "from bridge"}}),
        )
        .await
        .unwrap();
    assert_eq!(output.value["inner"]["path"], "b.txt");
    let seen = approver.seen.lock().unwrap().clone();
    assert_eq!(
        seen.last().unwrap(),
        &(
            "write".to_owned(),
            Origin::Bridge {
                via: "probe".into()
            }
        )
    );

    // A serialized tool re-entering itself would deadlock: refused instead.
    let output = registry
        .call("probe", json!({"inner": "probe"}))
        .await
        .unwrap();
    assert_eq!(output.value["inner_error"]["kind"], "reentrant");

    // A bridge call of a tool outside the surface is refused like a model call.
    let outside = registry
        .call(
            "probe",
            json!({"inner": "read", "args": {"path": "../../etc/passwd"}}),
        )
        .await
        .unwrap();
    assert_eq!(outside.value["inner_error"]["kind"], "outside_root");
}

#[tokio::test]
async fn bridge_calls_on_plan_surface_cannot_reach_hidden_tools() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(SerialProbe::default());
    // The probe is exec-tier, so it is itself hidden on plan; build on full and use a
    // read-tier wrapper instead: a registry whose surface is plan refuses the bridge's write.
    struct ReadBridge;
    #[async_trait]
    impl Tool for ReadBridge {
        fn name(&self) -> &str {
            "bridge"
        }
        fn tier(&self) -> Tier {
            Tier::Read
        }
        fn description(&self) -> &str {
            "read-tier tool that tries to write through the bridge"
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        async fn call(&self, ctx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
            ctx.call_tool("write", json!({"path": "x.txt", "content": "x"}))
                .await
        }
    }
    let registry = Resources {
        host_files: true,
        host_tools: vec![probe, Arc::new(ReadBridge)],
        ..Default::default()
    }
    .build(run_in(dir.path(), Surface::Plan, Arc::new(AllowAll)));
    let error = registry.call("bridge", json!({})).await.unwrap_err();
    assert_eq!(error.kind(), "not_available");
    assert!(!dir.path().join("x.txt").exists());
}

#[tokio::test]
async fn tools_that_are_not_parallel_safe_are_serialized() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(SerialProbe::default());
    let registry = RegistryBuilder::new(run_in(dir.path(), Surface::Full, Arc::new(AllowAll)))
        .tool(probe.clone())
        .build();
    let calls = (0..5).map(|_| {
        let registry = registry.clone();
        tokio::spawn(async move { registry.call("probe", json!({})).await })
    });
    for call in calls.collect::<Vec<_>>() {
        call.await.unwrap().unwrap();
    }
    assert_eq!(probe.max_running.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn written_paths_go_through_the_diagnostics_hook() {
    struct Hook(Mutex<Vec<PathBuf>>);
    #[async_trait]
    impl AfterWrite for Hook {
        async fn after_write(&self, paths: &[PathBuf]) -> cc_tools::report::WriteReport {
            self.0.lock().unwrap().extend(paths.iter().cloned());
            cc_tools::report::WriteReport::checked(Default::default())
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let hook = Arc::new(Hook(Mutex::new(Vec::new())));
    let registry = Resources {
        host_files: true,
        after_write: Some(hook.clone()),
        ..Default::default()
    }
    .build(run_in(dir.path(), Surface::Full, Arc::new(AllowAll)));
    let output = registry
        .call("write", json!({"path": "src/m.py", "content": "x = 1\n"}))
        .await
        .unwrap();
    assert_eq!(output.value["diagnostics"]["new"], json!([]));
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(*hook.0.lock().unwrap(), vec![root.join("src/m.py")]);
    // Reads write nothing and are not wrapped.
    let output = registry
        .call("read", json!({"path": "src/m.py"}))
        .await
        .unwrap();
    assert!(output.value.get("diagnostics").is_none());
}

#[tokio::test]
async fn deny_all_explains_itself() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Resources {
        host_files: true,
        ..Default::default()
    }
    .build(run_in(
        dir.path(),
        Surface::Full,
        Arc::new(DenyAll {
            reason: "no approver attached".into(),
        }),
    ));
    let error = registry
        .call("write", json!({"path": "a", "content": ""}))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "denied: the call of `write` was not approved: no approver attached"
    );
}

#[tokio::test]
async fn arguments_must_be_an_object_matching_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Resources {
        host_files: true,
        ..Default::default()
    }
    .build(run_in(dir.path(), Surface::Full, Arc::new(AllowAll)));
    let error = registry.call("read", json!([1])).await.unwrap_err();
    assert_eq!(error.kind(), "invalid_arguments");
    let error = registry
        .call("read", json!({"path": "a", "colour": "red"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "invalid_arguments");
    assert!(error.message().contains("colour"), "{error}");
}

#[tokio::test]
async fn a_call_cancelled_while_it_waits_its_turn_never_starts() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(SerialProbe::default());
    let registry = RegistryBuilder::new(run_in(dir.path(), Surface::Full, Arc::new(AllowAll)))
        .tool(probe.clone())
        .build();
    // The first call holds the tool for 30 ms; the second waits for its turn.
    let first = {
        let registry = registry.clone();
        tokio::spawn(async move { registry.call("probe", json!({})).await })
    };
    tokio::time::sleep(Duration::from_millis(5)).await;
    let cancel = cc_tools::Cancellation::new();
    let second = {
        let (registry, cancel) = (registry.clone(), cancel.clone());
        tokio::spawn(async move {
            registry
                .call_with(
                    "probe",
                    json!({}),
                    cc_tools::CallOptions {
                        cancel: Some(cancel),
                        ..Default::default()
                    },
                )
                .await
        })
    };
    cancel.cancel();
    let error = second.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "cancelled");
    first.await.unwrap().unwrap();
    assert_eq!(probe.max_running.load(Ordering::SeqCst), 1);
}

/// Run-level notices go out once, with the next result of a model call (an error too),
/// never with a bridge call's result; a commit that first recovers a crashed one reports
/// the recovery in its own result.
#[tokio::test]
async fn notices_go_out_once_with_the_next_model_result() {
    let dir = tempfile::tempdir().unwrap();
    let (root, state) = (dir.path().join("root"), dir.path().join("state"));
    std::fs::create_dir_all(&root).unwrap();
    for name in ["a.txt", "b.txt"] {
        std::fs::write(root.join(name), "old\n").unwrap();
    }
    let registry = Resources {
        host_files: true,
        host_tools: vec![Arc::new(SerialProbe::default())],
        ..Default::default()
    }
    .build(Run::builder(&root).state_dir(&state).build());

    registry.notices().push(
        "tree_changed",
        "a.txt changed behind the run",
        json!({"paths": ["a.txt"]}),
    );
    // A bridge call's result does not take it.
    let output = registry
        .call("probe", json!({"inner": "read", "args": {"path": "a.txt"}}))
        .await
        .unwrap();
    assert!(
        output.value["inner"].get("notices").is_none(),
        "{}",
        output.value
    );
    // The probe's own (model) result does.
    assert_eq!(output.value["notices"][0]["kind"], "tree_changed");
    assert_eq!(output.value["notices"][0]["paths"], json!(["a.txt"]));
    let again = registry
        .call("read", json!({"path": "a.txt"}))
        .await
        .unwrap();
    assert!(again.value.get("notices").is_none(), "delivered once");

    // An error carries a notice too.
    registry
        .notices()
        .push("tree_changed", "b.txt changed", Value::Null);
    let error = registry
        .call("read", json!({"path": "missing.txt"}))
        .await
        .unwrap_err();
    assert!(
        error.message().ends_with("\nnote: b.txt changed"),
        "{error}"
    );
    assert_eq!(error.to_json()["notices"][0]["message"], "b.txt changed");

    // A commit killed midway (here: stopped at a crash point), then an apply_patch: it puts
    // the crashed commit right first and says so in its result, text and JSON.
    let ws = registry.run().root.workspace().clone();
    let mut tx = cc_workspace::Transaction::new();
    for name in ["a.txt", "b.txt"] {
        tx.replace(root.join(name), b"old\n".to_vec(), b"crashed\n".to_vec());
    }
    // Points: the journal, two temporary files, the committing phase, then the renames.
    let error = tx.commit_with(&ws, &cc_workspace::CrashAt(4)).unwrap_err();
    assert!(matches!(
        error,
        cc_workspace::CommitError::Interrupted { .. }
    ));
    let patch = "--- /dev/null\n+++ c.txt\n@@ -0,0 +1 @@\n+new\n";
    let output = registry
        .call("apply_patch", json!({"patch": patch}))
        .await
        .unwrap();
    let notice = &output.value["notices"][0];
    assert_eq!(notice["kind"], "recovered", "{}", output.value);
    assert_eq!(notice["direction"], "forward");
    assert_eq!(notice["files_total"], 2);
    let text = output.text.unwrap();
    assert!(
        text.contains("note: an interrupted multi-file commit")
            && text.contains("all 2 file(s) of it hold their new content"),
        "{text}"
    );
    for name in ["a.txt", "b.txt"] {
        assert_eq!(std::fs::read(root.join(name)).unwrap(), b"crashed\n");
    }
}
