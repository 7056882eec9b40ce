//! Diagnostics on write against the real servers installed by `cargo xtask peers`: for each,
//! an error is new; moved down four lines it is not; fixed nothing is new; broken again it
//! is new again. Every server is shut down and its process group checked gone.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

mod common;

use cc_lsp_client::CheckOutcome;
use cc_process::testing::require_peer;
use common::*;

#[tokio::test]
async fn basedpyright_reports_only_new_diagnostics() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let fixture = fixture(&[("pyproject.toml", "")], &lenient(&["python"], ""));
    let bad = "def f(x: int) -> int:\n    return x\n\n\ny: str = f(1)\n";
    let moved = format!("# one\n# two\n# three\n# four\n{bad}");
    let good = "def f(x: int) -> int:\n    return x\n\n\ny: int = f(1)\n";
    new_moved_fixed_broken(&fixture, "pkg/a.py", bad, &moved, good, "is not assignable").await;
    let server = &fixture.sup.running()[0];
    assert_eq!(server.name(), "basedpyright");
    assert!(
        server.supports_pull(),
        "basedpyright registers pull diagnostics"
    );
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn pylsp_reports_only_new_diagnostics() {
    if require_peer("pylsp").is_none() {
        return;
    }
    let fixture = fixture(
        &[("setup.py", "")],
        &lenient(&["python"], "command = [\"pylsp\"]\n"),
    );
    let bad = "import os\n\nprint(os.sep, undefined_name)\n";
    let moved = format!("# one\n# two\n# three\n# four\n{bad}");
    let good = "import os\n\nprint(os.sep)\n";
    new_moved_fixed_broken(&fixture, "a.py", bad, &moved, good, "undefined name").await;
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn clangd_reports_only_new_diagnostics() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let fixture = fixture(&[(".clangd", "")], &lenient(&["c"], ""));
    let bad = "int main(void) { return undefined_var; }\n";
    let moved = format!("//\n//\n//\n//\n{bad}");
    let good = "int main(void) { return 0; }\n";
    new_moved_fixed_broken(
        &fixture,
        "main.c",
        bad,
        &moved,
        good,
        "undeclared identifier",
    )
    .await;
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn gopls_reports_only_new_diagnostics_and_quiet_means_unchanged() {
    if require_peer("gopls").is_none() || require_peer("go").is_none() {
        return;
    }
    let fixture = fixture(
        &[("go.mod", "module example.com/m\n\ngo 1.19\n")],
        &lenient(&["go"], ""),
    );
    let bad = "package main\n\nfunc main() {\n\tvar x int = \"s\"\n\t_ = x\n}\n";
    let moved = bad.replace("func main() {\n", "func main() {\n\t//\n\t//\n\t//\n\t//\n");
    let good = "package main\n\nfunc main() {\n\tvar x int = 1\n\t_ = x\n}\n";
    new_moved_fixed_broken(&fixture, "main.go", bad, &moved, good, "cannot use").await;

    // A change that leaves the diagnostics as they are. gopls 0.5 (Debian's) republishes
    // anyway; newer ones stay quiet, which is reported as unchanged (see the in-memory test
    // `quiet_server_means_unchanged`). Either way the file is checked, not pending.
    let path = fixture.ws.join("main.go");
    std::fs::write(&path, format!("{bad}// trailing comment\n")).unwrap();
    match check(&fixture.sup, &path).await {
        CheckOutcome::Checked { diagnostics, .. } => {
            assert!(
                diagnostics.iter().any(|d| d.message.contains("cannot use")),
                "{diagnostics:?}"
            );
        }
        other => panic!("expected a checked outcome, got {other:?}"),
    }
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn typescript_language_server_reports_only_new_diagnostics() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let fixture = fixture(&[("package.json", "{}\n")], &lenient(&["typescript"], ""));
    let bad = "const x: number = \"s\";\nexport { x };\n";
    let moved = format!("//\n//\n//\n//\n{bad}");
    let good = "const x: number = 1;\nexport { x };\n";
    new_moved_fixed_broken(&fixture, "src/a.ts", bad, &moved, good, "is not assignable").await;
    shutdown_and_check(&fixture.sup).await;
}

/// typescript-language-server publishes nothing when a clean file stays clean: tsserver is
/// asked directly, so the write is checked (clean), not pending until the cap.
#[tokio::test]
async fn typescript_a_clean_file_that_stays_clean_is_checked_not_pending() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    // A short cap: waiting for a publish that never comes would end pending.
    let fixture = fixture(
        &[("package.json", "{}\n")],
        "[lsp.typescript]\ntimeout_ms = 20000\n",
    );
    let path = fixture.ws.join("a.ts");
    for round in 0..3 {
        let text = format!("export const x{round}: number = {round};\n");
        std::fs::write(&path, &text).unwrap();
        match check(&fixture.sup, &path).await {
            CheckOutcome::Checked {
                diagnostics, via, ..
            } => {
                assert!(diagnostics.is_empty(), "round {round}: {diagnostics:?}");
                if round > 0 {
                    assert_eq!(via, Some(cc_lsp_client::Via::Probe), "round {round}");
                }
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
    // Clean to broken still comes from the publish.
    std::fs::write(&path, "export const y: number = \"s\";\n").unwrap();
    match check(&fixture.sup, &path).await {
        CheckOutcome::Checked {
            diagnostics, via, ..
        } => {
            assert!(
                diagnostics
                    .iter()
                    .any(|d| d.message.contains("is not assignable")),
                "{diagnostics:?}"
            );
            assert_eq!(via, Some(cc_lsp_client::Via::UnversionedPush));
        }
        other => panic!("{other:?}"),
    }
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn bash_language_server_reports_only_new_diagnostics() {
    if require_peer("bash-language-server").is_none() || require_peer("shellcheck").is_none() {
        return;
    }
    let fixture = fixture(&[], &lenient(&["bash"], ""));
    let bad = "#!/bin/bash\necho \"$undefined_var_x\"\n";
    let moved = "#!/bin/bash\n# one\n# two\n# three\n# four\necho \"$undefined_var_x\"\n";
    let good = "#!/bin/bash\necho \"hi\"\n";
    new_moved_fixed_broken(
        &fixture,
        "run.sh",
        bad,
        moved,
        good,
        "referenced but not assigned",
    )
    .await;
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn rust_analyzer_reports_only_new_diagnostics() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let fixture = fixture(
        &[(
            "Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )],
        &lenient(&["rust"], ""),
    );
    let bad = "fn main() {\n    let x = 1\n}\n";
    let moved = format!("//\n//\n//\n//\n{bad}");
    let good = "fn main() {\n    let _x = 1;\n}\n";
    new_moved_fixed_broken(&fixture, "src/main.rs", bad, &moved, good, "SEMICOLON").await;
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn unknown_file_types_and_missing_markers_are_unchecked_with_a_reason() {
    let fixture = fixture(&[("notes.xyz", "hello"), ("main.go", "package main\n")], "");
    match check(&fixture.sup, &fixture.ws.join("notes.xyz")).await {
        CheckOutcome::Unchecked { reason } => assert!(reason.contains("`.xyz`"), "{reason}"),
        other => panic!("{other:?}"),
    }
    match check(&fixture.sup, &fixture.ws.join("main.go")).await {
        CheckOutcome::Unchecked { reason } => assert!(reason.contains("go.mod"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(fixture.sup.running().is_empty());
}
