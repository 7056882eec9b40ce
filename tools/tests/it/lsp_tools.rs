//! Diagnostics on write through the registry (`write`, `edit`, `apply_patch`, `resolve`,
//! and a write made through a bridge), `apply_patch` all or nothing, and `lsp status`,
//! against real servers.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::lsp_support;

use std::sync::Arc;

use async_trait::async_trait;
use cc_test_support::require_peer;
use cc_tools::{CallContext, Resources, Tier, Tool, ToolError, ToolOutput};
use lsp_support::{project, Setup};
use serde_json::{json, Value};

const NOTHING_NEW: &str = r#"{"new":[],"pending":[],"unchecked":[]}"#;

/// The verdict part of a write's diagnostics (what is new, pending, unchecked), without the
/// scope it was checked in.
fn verdict(out: &Value) -> String {
    let d = &out["diagnostics"];
    json!({"new": d["new"], "pending": d["pending"], "unchecked": d["unchecked"]}).to_string()
}

/// A server that does not answer within the cap leaves the write pending, never clean, and
/// the report says why: how long it was waited for and what the wait last saw of it.
#[tokio::test]
async fn a_pending_write_says_why() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = Setup {
        config: "[lsp.python]\ntimeout_ms = 1\nindexing_timeout_ms = 1\n",
        ..Setup::default()
    }
    .build(&[("pyproject.toml", "")]);
    let out = p
        .call("write", json!({"path": "a.py", "content": "x: int = 1\n"}))
        .await;
    let diagnostics = &out["diagnostics"];
    assert_eq!(diagnostics["pending"], json!(["basedpyright"]), "{out:#}");
    assert_eq!(diagnostics["pending_files"], json!(["a.py"]), "{out:#}");
    let why = diagnostics["pending_why"]["basedpyright"]
        .as_str()
        .unwrap_or("");
    assert!(
        why.starts_with("no diagnostics for this version after ") && why.contains("for the file"),
        "{out:#}"
    );
    let report: cc_tools::report::WriteReport =
        serde_json::from_value(diagnostics.clone()).unwrap();
    let text = cc_tools::report::Render::render(&report);
    assert!(
        text.contains(&format!(
            "pending: basedpyright has not answered yet (not clean): {why}"
        )),
        "{text}"
    );
    p.shutdown().await;
}

#[tokio::test]
async fn writes_edits_and_patches_carry_only_new_diagnostics() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = project(&[("pyproject.toml", "")]);

    let bad = "def f(x: int) -> int:\n    return x\n\n\ny: str = f(1)\n";
    let out = p
        .call("write", json!({"path": "a.py", "content": bad}))
        .await;
    insta::assert_json_snapshot!("write_new_error", out);

    // Four lines down: the same error, not new.
    let moved = format!("# 1\n# 2\n# 3\n# 4\n{bad}");
    let out = p
        .call("write", json!({"path": "a.py", "content": moved}))
        .await;
    assert_eq!(verdict(&out), NOTHING_NEW, "{out}");
    // Not new, yet still there, and the write says so: the file is not taken for clean.
    let older = &out["diagnostics"]["older_errors"];
    assert_eq!(out["diagnostics"]["older_errors_total"], 1, "{out}");
    assert_eq!(older[0]["line"], 9, "{out}");
    assert_eq!(older[0]["code"], "reportAssignmentType", "{out}");
    let report: cc_tools::report::WriteReport =
        serde_json::from_value(out["diagnostics"].clone()).unwrap();
    let text = cc_tools::report::Render::render(&report);
    assert!(
        text.contains("no new diagnostics\nstill there: 1 error(s) the written file(s) had before this write:\n  a.py:9: error [reportAssignmentType]"),
        "{text}"
    );
    // `lsp diagnostics` lists the file's current errors whatever the ledger holds.
    let current = p
        .lsp(json!({"action": "diagnostics", "file": "a.py"}))
        .await;
    assert_eq!(
        current["diagnostics"].as_array().unwrap().len(),
        1,
        "{current}"
    );
    assert_eq!(current["diagnostics"][0]["line"], 9, "{current}");
    assert_eq!(
        current["diagnostics"][0]["code"], "reportAssignmentType",
        "{current}"
    );

    // Fixed with `edit`: nothing new.
    let out = p
        .call(
            "edit",
            json!({"path": "a.py", "old_text": "y: str", "new_text": "y: int"}),
        )
        .await;
    assert_eq!(verdict(&out), NOTHING_NEW, "{out}");

    // Broken again with `apply_patch`, together with a file no server covers.
    let patch = "--- a/a.py\n+++ b/a.py\n@@ -8,1 +8,1 @@\n-y: int = f(1)\n+y: str = f(1)\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n";
    let out = p.call("apply_patch", json!({"patch": patch})).await;
    insta::assert_json_snapshot!("apply_patch_new_again", out);
    p.shutdown().await;
}

/// `resolve` writes too: what it accepts is checked like any other write.
#[tokio::test]
async fn resolve_carries_new_diagnostics() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = Setup {
        resources: Resources {
            parsers: Some(Arc::new(cc_structural::Languages::builtin())),
            ..Default::default()
        },
        ..Setup::default()
    }
    .build(&[
        ("pyproject.toml", ""),
        (
            "a.py",
            "def f(x: int) -> int:\n    return x\n\n\ny: int = f(1)\n",
        ),
    ]);
    let staged = p
        .call(
            "ast_edit",
            json!({"pattern": "f(1)", "rewrite": "str(f(1))", "path": "a.py"}),
        )
        .await;
    let edit_id = staged["edit_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{staged}"));
    let out = p
        .call("resolve", json!({"edit_id": edit_id, "action": "accept"}))
        .await;
    assert_eq!(out["status"], "accepted", "{out}");
    let new = out["diagnostics"]["new"].as_array().unwrap();
    assert_eq!(new.len(), 1, "{out}");
    assert_eq!(new[0]["code"], "reportAssignmentType", "{out}");
    assert_eq!(new[0]["path"], "a.py", "{out}");
    p.shutdown().await;
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
    let p = Setup {
        resources: Resources {
            host_files: true,
            host_tools: vec![Arc::new(BridgeWriter)],
            ..Default::default()
        },
        ..Setup::default()
    }
    .build(&[(".clangd", "")]);
    let out = p
        .call(
            "bridge_writer",
            json!({"path": "m.c", "content": "int main(void) { return nope; }\n"}),
        )
        .await;
    insta::assert_json_snapshot!("bridge_write", out);
    p.shutdown().await;
}

#[tokio::test]
async fn apply_patch_is_all_or_nothing() {
    let p = project(&[("a.txt", "one\ntwo\nthree\n"), ("b.txt", "alpha\nbeta\n")]);
    let dir = &p.ws;

    // The second file's hunk does not match: nothing is written, the first file included.
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -2,1 +2,1 @@\n-two\n+TWO\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n alpha\n-gamma\n+delta\n";
    let out = p.call("apply_patch", json!({"patch": patch})).await;
    insta::assert_json_snapshot!("apply_patch_refused", out);
    assert_eq!(p.read("a.txt"), "one\ntwo\nthree\n");

    // A write that fails midway (a file that cannot be replaced, written after `a.txt`)
    // restores what was already written: the tree is byte for byte as before.
    lsp_support::write_files(dir, &[("locked/c.txt", "c\n")]);
    let before = lsp_support::tree(dir);
    let Some(locked) = lsp_support::Locked::new(&dir.join("locked/c.txt")) else {
        return;
    };
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- /dev/null\n+++ b/new/d.txt\n@@ -0,0 +1 @@\n+d\n--- a/locked/c.txt\n+++ b/locked/c.txt\n@@ -1 +1 @@\n-c\n+C\n";
    let out = p.call("apply_patch", json!({"patch": patch})).await;
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
    assert_eq!(lsp_support::tree(dir), before);

    // Outside the root, and garbage, are refused.
    let out = p
        .call(
            "apply_patch",
            json!({"patch": "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n"}),
        )
        .await;
    assert_eq!(out["error"]["kind"], "outside_root", "{out}");
    let out = p.call("apply_patch", json!({"patch": "hello"})).await;
    assert_eq!(out["error"]["kind"], "invalid_patch", "{out}");
    let message = out["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "the patch cannot be read: no `---`/`+++` file headers found; give a unified diff"
    );

    // A hunk whose context the file does not hold: refused, naming the hunk, the line that
    // differs and what to do; nothing written.
    let before = lsp_support::tree(dir);
    let out = p
        .call(
            "apply_patch",
            json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-not there\n+b\n"}),
        )
        .await;
    assert_eq!(out["error"]["kind"], "patch_does_not_apply", "{out}");
    assert_eq!(out["error"]["path"], "a.txt", "{out}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("hunk 1 of `a.txt` (at line 1) does not apply: ")
            && message.contains("where the hunk expects `not there`")
            && message.ends_with(". Read the file and make the patch from its current content"),
        "{message}"
    );
    assert_eq!(lsp_support::tree(dir), before);
}

#[tokio::test]
async fn lsp_status_says_why() {
    let p = Setup {
        config: "[lsp.dart]\nenabled = false\n",
        ..Setup::default()
    }
    .build(&[("go.mod", "module m\n")]);
    let out = p.lsp(json!({"action": "status"})).await;
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
    let out = p.lsp(json!({"action": "nope"})).await;
    assert_eq!(out["error"]["kind"], "invalid_arguments");
}

/// Without a project configuration basedpyright runs pyright's standard rules: untyped code
/// is not a flood of `reportUnknown…` warnings burying the one real error; hints and
/// "unused" marks are never reported.
#[tokio::test]
async fn without_project_configuration_only_the_standard_rules_report() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let p = project(&[("pyproject.toml", "[project]\nname = \"untyped\"\n")]);
    let code = "import json\n\n\ndef load(text):\n    unused = 1\n    data = json.loads(text)\n    return data\n\n\nvalue = load('1')\ncount: int = 'one'\n";
    let out = p
        .call("write", json!({"path": "untyped.py", "content": code}))
        .await;
    let codes: Vec<&str> = out["diagnostics"]["new"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(codes, ["reportAssignmentType"], "{out:#}");
    p.shutdown().await;
}

/// `reload` reads `.cc/tools.toml` again: a server chosen there after the run started is the
/// one that answers next; a broken section is refused and the servers keep running.
#[tokio::test]
async fn reload_rereads_the_configuration() {
    if require_peer("basedpyright-langserver").is_none() || require_peer("pylsp").is_none() {
        return;
    }
    let p = project(&[("pyproject.toml", ""), ("a.py", "print(undefined_name)\n")]);
    let before = p
        .lsp(json!({"action": "diagnostics", "file": "a.py"}))
        .await;
    assert_eq!(before["server"], "basedpyright", "{before:#}");
    std::fs::create_dir_all(p.ws.join(".cc")).unwrap();
    std::fs::write(
        p.ws.join(".cc/tools.toml"),
        "[lsp.python]\ncommand = [\"pylsp\"]\ntimeout_ms = 60000\n",
    )
    .unwrap();
    let reloaded = p
        .lsp(json!({"action": "reload", "language": "python"}))
        .await;
    assert!(reloaded.get("error").is_none(), "{reloaded:#}");
    let after = p
        .lsp(json!({"action": "diagnostics", "file": "a.py"}))
        .await;
    assert_eq!(after["server"], "pylsp", "{after:#}");

    std::fs::write(
        p.ws.join(".cc/tools.toml"),
        "[lsp.python]\nno_such_key = 1\n",
    )
    .unwrap();
    let refused = p
        .lsp(json!({"action": "reload", "language": "python"}))
        .await;
    assert_eq!(refused["error"]["kind"], "invalid_config", "{refused:#}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_key"),
        "{refused:#}"
    );
    p.shutdown().await;
}
