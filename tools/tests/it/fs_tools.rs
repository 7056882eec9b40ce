//! The host file tools, confined to the workspace root.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use cc_tools::{Registry, Resources, Run};
use serde_json::{json, Value};

fn registry(dir: &std::path::Path) -> Registry {
    Resources {
        host_files: true,
        ..Default::default()
    }
    .build(Run::builder(dir).conversation("fs").build())
}

async fn call(registry: &Registry, tool: &str, args: Value) -> Value {
    match registry.call(tool, args).await {
        Ok(output) => {
            cc_tools::testing::assert_typed_result(tool, &output.value, &output.render_text());
            output.value
        }
        Err(error) => error.to_envelope(),
    }
}

#[tokio::test]
async fn read_returns_lines_with_offset_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "a = 1\nb = 2\nc = 3\nd = 4\n").unwrap();
    let registry = registry(dir.path());
    insta::assert_json_snapshot!(call(&registry, "read", json!({"path": "m.py"})).await);
    insta::assert_json_snapshot!(
        call(
            &registry,
            "read",
            json!({"path": "m.py", "offset": 2, "limit": 2})
        )
        .await
    );
    let output = registry
        .call("read", json!({"path": "m.py", "offset": 4}))
        .await
        .unwrap();
    assert_eq!(
        output.render_text(),
        "m.py (lines 4-4 of 4, 24 bytes)\nd = 4\n"
    );
}

#[tokio::test]
async fn read_errors_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("blob.bin"), [0x66, 0xff, 0x00]).unwrap();
    let registry = registry(dir.path());
    insta::assert_json_snapshot!(call(&registry, "read", json!({"path": "missing.py"})).await);
    insta::assert_json_snapshot!(call(&registry, "read", json!({"path": "sub"})).await);
    insta::assert_json_snapshot!(call(&registry, "read", json!({"path": "blob.bin"})).await);
    let outside = call(&registry, "read", json!({"path": "../../../etc/passwd"})).await;
    assert_eq!(outside["error"]["kind"], "outside_root");
}

#[tokio::test]
async fn write_creates_parents_and_replaces_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    insta::assert_json_snapshot!(
        call(
            &registry,
            "write",
            json!({"path": "pkg/new.py", "content": "x = 'é'\n"})
        )
        .await
    );
    insta::assert_json_snapshot!(
        call(
            &registry,
            "write",
            json!({"path": "pkg/new.py", "content": "y = 2\n"})
        )
        .await
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pkg/new.py")).unwrap(),
        "y = 2\n"
    );
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("pkg"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[tokio::test]
async fn write_keeps_permissions_of_an_existing_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let registry = registry(dir.path());
    call(
        &registry,
        "write",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
    )
    .await;
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[tokio::test]
async fn write_outside_the_root_is_refused_and_writes_nothing() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::os::unix::fs::symlink(parent.path(), root.join("up")).unwrap();
    let registry = registry(&root);
    for path in ["../escape.txt", "up/escape.txt"] {
        let result = call(&registry, "write", json!({"path": path, "content": "x"})).await;
        assert_eq!(result["error"]["kind"], "outside_root", "{path}");
    }
    assert!(!parent.path().join("escape.txt").exists());
}

#[tokio::test]
async fn edit_replaces_exactly_one_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "a = 1\nb = 1\nc = 2\n").unwrap();
    let registry = registry(dir.path());
    insta::assert_json_snapshot!(
        call(
            &registry,
            "edit",
            json!({"path": "m.py", "old_text": "c = 2", "new_text": "c = 3"})
        )
        .await
    );
    insta::assert_json_snapshot!(
        call(
            &registry,
            "edit",
            json!({"path": "m.py", "old_text": "= 1", "new_text": "= 0"})
        )
        .await
    );
    insta::assert_json_snapshot!(
        call(
            &registry,
            "edit",
            json!({"path": "m.py", "old_text": "zzz", "new_text": "y"})
        )
        .await
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        "a = 1\nb = 1\nc = 3\n"
    );
}
