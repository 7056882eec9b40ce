//! Diagnostics on write through the registry (`write`, `edit`, `apply_patch`, and a write
//! made through a bridge), `apply_patch` all or nothing, and `lsp status`, against real
//! servers.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

mod lsp_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cc_lsp_client::{LspConfig, Supervisor, SupervisorOptions};
use cc_process::testing::require_peer;
use cc_tools::{
    AllowAll, CallContext, Registry, Resources, Run, Surface, Tier, Tool, ToolError, ToolOutput,
    WorkspaceRoot,
};
use serde_json::{json, Value};

fn registry(dir: &Path, config: &str, extra: Vec<Arc<dyn Tool>>) -> Registry {
    let root = WorkspaceRoot::new(dir).unwrap();
    let table: toml::Table = config.parse().unwrap();
    let lsp = table
        .get("lsp")
        .map(|s| LspConfig::from_toml(s).unwrap())
        .unwrap_or_default();
    let supervisor = Supervisor::new(
        root.path(),
        lsp.table().unwrap(),
        SupervisorOptions::default(),
    );
    Resources {
        host_files: true,
        language_servers: Some(supervisor),
        host_tools: extra,
        ..Default::default()
    }
    .build(Run {
        conversation_id: "lsp".into(),
        root,
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
    })
}

async fn call(registry: &Registry, tool: &str, args: Value) -> Value {
    match registry.call(tool, args).await {
        Ok(output) => output.value,
        Err(error) => error.to_envelope(),
    }
}

const LENIENT: &str = "[lsp.python]\ntimeout_ms = 60000\n[lsp.c]\ntimeout_ms = 60000\n";

#[tokio::test]
async fn writes_edits_and_patches_carry_only_new_diagnostics() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
    let registry = registry(dir.path(), LENIENT, Vec::new());

    let bad = "def f(x: int) -> int:\n    return x\n\n\ny: str = f(1)\n";
    let out = call(&registry, "write", json!({"path": "a.py", "content": bad})).await;
    insta::assert_json_snapshot!("write_new_error", out);

    // Four lines down: the same error, not new.
    let moved = format!("# 1\n# 2\n# 3\n# 4\n{bad}");
    let out = call(
        &registry,
        "write",
        json!({"path": "a.py", "content": moved}),
    )
    .await;
    assert_eq!(
        out["diagnostics"],
        json!({"new": [], "pending": [], "unchecked": []}),
        "{out}"
    );

    // Fixed with `edit`: nothing new.
    let out = call(
        &registry,
        "edit",
        json!({"path": "a.py", "old_text": "y: str", "new_text": "y: int"}),
    )
    .await;
    assert_eq!(out["diagnostics"]["new"], json!([]), "{out}");

    // Broken again with `apply_patch`, together with a file no server covers.
    let patch = "--- a/a.py\n+++ b/a.py\n@@ -8,1 +8,1 @@\n-y: int = f(1)\n+y: str = f(1)\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n";
    let out = call(&registry, "apply_patch", json!({"patch": patch})).await;
    insta::assert_json_snapshot!("apply_patch_new_again", out);
    registry.shutdown(Duration::from_secs(5)).await;
}

/// A tool that writes through the bridge, as code in a kernel cell does.
struct BridgeWriter;

#[async_trait]
impl Tool for BridgeWriter {
    fn name(&self) -> &str {
        "bridge_writer"
    }
    fn tier(&self) -> Tier {
        Tier::Exec
    }
    fn description(&self) -> &str {
        "writes through the bridge"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let inner = ctx.call_tool("write", args).await?;
        Ok(ToolOutput::new(json!({"inner": inner.value})))
    }
}

#[tokio::test]
async fn writes_through_a_bridge_get_diagnostics_too() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".clangd"), "").unwrap();
    let registry = registry(dir.path(), LENIENT, vec![Arc::new(BridgeWriter)]);
    let out = call(
        &registry,
        "bridge_writer",
        json!({"path": "m.c", "content": "int main(void) { return nope; }\n"}),
    )
    .await;
    insta::assert_json_snapshot!("bridge_write", out);
    registry.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn apply_patch_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "alpha\nbeta\n").unwrap();
    let registry = registry(dir.path(), "", Vec::new());

    // The second file's hunk does not match: nothing is written, the first file included.
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -2,1 +2,1 @@\n-two\n+TWO\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n alpha\n-gamma\n+delta\n";
    let out = call(&registry, "apply_patch", json!({"patch": patch})).await;
    insta::assert_json_snapshot!("apply_patch_refused", out);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );

    // A write that fails midway (a file that cannot be replaced, written after `a.txt`)
    // restores what was already written: the tree is byte for byte as before.
    std::fs::create_dir(dir.path().join("locked")).unwrap();
    std::fs::write(dir.path().join("locked/c.txt"), "c\n").unwrap();
    let before = lsp_support::tree(dir.path());
    let Some(locked) = lsp_support::Locked::new(&dir.path().join("locked/c.txt")) else {
        return;
    };
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- /dev/null\n+++ b/new/d.txt\n@@ -0,0 +1 @@\n+d\n--- a/locked/c.txt\n+++ b/locked/c.txt\n@@ -1 +1 @@\n-c\n+C\n";
    let out = call(&registry, "apply_patch", json!({"patch": patch})).await;
    drop(locked);
    // The OS's words differ for root (EPERM) and others (EACCES): no snapshot.
    assert_eq!(out["error"]["kind"], "io", "{out}");
    assert_eq!(out["error"]["path"], "locked/c.txt", "{out}");
    assert_eq!(
        out["error"]["restored"],
        json!(["a.txt", "new/d.txt"]),
        "{out}"
    );
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("nothing was changed"), "{message}");
    assert_eq!(lsp_support::tree(dir.path()), before);

    // Outside the root, and garbage, are refused.
    let out = call(
        &registry,
        "apply_patch",
        json!({"patch": "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n"}),
    )
    .await;
    assert_eq!(out["error"]["kind"], "outside_root", "{out}");
    let out = call(&registry, "apply_patch", json!({"patch": "hello"})).await;
    assert_eq!(out["error"]["kind"], "invalid_patch", "{out}");
}

#[tokio::test]
async fn lsp_status_says_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.mod"), "module m\n").unwrap();
    let registry = registry(dir.path(), "[lsp.dart]\nenabled = false\n", Vec::new());
    let out = call(&registry, "lsp", json!({"action": "status"})).await;
    let languages = out["languages"].as_array().unwrap();
    let row = |name: &str| {
        languages
            .iter()
            .find(|r| r["language"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("dart")["state"], "off");
    assert!(
        row("python")["reason"]
            .as_str()
            .unwrap()
            .contains("no project marker"),
        "{out}"
    );
    if require_peer("gopls").is_some() {
        assert_eq!(row("go")["state"], "idle", "{out}");
        assert_eq!(row("go")["root"], ".");
    }
    let out = call(&registry, "lsp", json!({"action": "nope"})).await;
    assert_eq!(out["error"]["kind"], "invalid_arguments");
}
