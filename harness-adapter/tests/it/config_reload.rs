//! `lsp reload` re-reads `.cc/tools.toml` through the harness (the language-server crate
//! never opens the file): a broken `[lsp]` section is reported by every language until a
//! fixed one is reloaded, and a section broken again is refused while the fixed one stays.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::sync::Arc;

use cc_harness_adapter::embed::{embed, HostRun, Wire};
use cc_tools::{AllowAll, Registry, Surface};
use serde_json::json;

fn write_config(root: &std::path::Path, text: &str) {
    std::fs::create_dir_all(root.join(".cc")).unwrap();
    std::fs::write(root.join(".cc/tools.toml"), text).unwrap();
}

/// Why `lsp status` says python is not running.
async fn python_reason(registry: &Registry) -> String {
    let status = registry
        .call("lsp", json!({"action": "status"}))
        .await
        .unwrap()
        .value;
    status["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["language"] == "python")
        .map(|row| row["reason"].as_str().unwrap_or_default().to_owned())
        .unwrap()
}

#[tokio::test]
async fn lsp_reload_reads_the_section_again_through_the_harness() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path(), "[lsp.python]\ncomand = [\"pylsp\"]\n");
    let embedded = embed(HostRun {
        wire: Wire {
            language_servers: true,
            ..Wire::none()
        },
        ..HostRun::new("reload", dir.path(), Surface::Full, Arc::new(AllowAll))
    })
    .unwrap();
    let registry = &embedded.registry;
    let reason = python_reason(registry).await;
    assert!(
        reason.starts_with("[lsp] in .cc/tools.toml: ") && reason.contains("comand"),
        "{reason}"
    );

    write_config(dir.path(), "[lsp.python]\nenabled = false\n");
    registry
        .call("lsp", json!({"action": "reload", "language": "python"}))
        .await
        .unwrap();
    let reason = python_reason(registry).await;
    assert!(reason.contains("enabled = false"), "{reason}");

    write_config(dir.path(), "[lsp\n");
    let refused = registry
        .call("lsp", json!({"action": "reload", "language": "python"}))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), "invalid_config", "{refused}");
    let message = refused.message();
    assert!(
        message.starts_with("[lsp] in .cc/tools.toml: ")
            && message.contains("not valid TOML")
            && message.contains("keep running with the previous configuration"),
        "{message}"
    );
    // The fixed section stays in use.
    assert!(python_reason(registry).await.contains("enabled = false"));
    registry.shutdown(std::time::Duration::from_secs(2)).await;
}
