//! Diagnostics on write against the real servers installed by `cargo xtask peers`: for each,
//! an error is new; moved down four lines it is not; fixed nothing is new; broken again it
//! is new again. Every server is shut down and its process group checked gone.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::common;

use cc_lsp_client::CheckOutcome;
use cc_test_support::require_peer;
use common::*;

const CARGO_TOML: &str =
    "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

#[tokio::test]
async fn basedpyright_reports_only_new_diagnostics() {
    let bad = "def f(x: int) -> int:\n    return x\n\n\ny: str = f(1)\n";
    let scenario = Scenario {
        peers: &["basedpyright-langserver"],
        family: "python",
        files: &[("pyproject.toml", "")],
        config: "",
        file: "pkg/a.py",
        bad,
        moved: &four_lines_down("#", bad),
        good: "def f(x: int) -> int:\n    return x\n\n\ny: int = f(1)\n",
        expected: "is not assignable",
    };
    let Some(fixture) = scenario.run().await else {
        return;
    };
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
    let bad = "import os\n\nprint(os.sep, undefined_name)\n";
    Scenario {
        peers: &["pylsp"],
        family: "python",
        files: &[("setup.py", "")],
        config: "command = [\"pylsp\"]\n",
        file: "a.py",
        bad,
        moved: &four_lines_down("#", bad),
        good: "import os\n\nprint(os.sep)\n",
        expected: "undefined name",
    }
    .run_and_shut_down()
    .await;
}

#[tokio::test]
async fn clangd_reports_only_new_diagnostics() {
    let bad = "int main(void) { return undefined_var; }\n";
    Scenario {
        peers: &["clangd-19"],
        family: "c",
        files: &[(".clangd", "")],
        config: "",
        file: "main.c",
        bad,
        moved: &four_lines_down("//", bad),
        good: "int main(void) { return 0; }\n",
        expected: "undeclared identifier",
    }
    .run_and_shut_down()
    .await;
}

#[tokio::test]
async fn gopls_reports_only_new_diagnostics_and_quiet_means_unchanged() {
    let bad = "package main\n\nfunc main() {\n\tvar x int = \"s\"\n\t_ = x\n}\n";
    let scenario = Scenario {
        peers: &["gopls", "go"],
        family: "go",
        files: &[("go.mod", "module example.com/m\n\ngo 1.19\n")],
        config: "",
        file: "main.go",
        bad,
        moved: &bad.replace("func main() {\n", "func main() {\n\t//\n\t//\n\t//\n\t//\n"),
        good: "package main\n\nfunc main() {\n\tvar x int = 1\n\t_ = x\n}\n",
        expected: "cannot use",
    };
    let Some(fixture) = scenario.run().await else {
        return;
    };
    // A change that leaves the diagnostics as they are. Some gopls versions republish
    // anyway; others stay quiet, which is reported as unchanged (see the in-memory test
    // `quiet_server_means_unchanged_not_pending`). Either way the file is checked, not
    // pending, and the error is still there.
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
    let bad = "const x: number = \"s\";\nexport { x };\n";
    Scenario {
        peers: &["typescript-language-server"],
        family: "typescript",
        files: &[("package.json", "{}\n")],
        config: "",
        file: "src/a.ts",
        bad,
        moved: &four_lines_down("//", bad),
        good: "const x: number = 1;\nexport { x };\n",
        expected: "is not assignable",
    }
    .run_and_shut_down()
    .await;
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
    // Clean to broken: tsserver's own answer, not a publish waited out.
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
            assert_eq!(via, Some(cc_lsp_client::Via::Probe));
        }
        other => panic!("{other:?}"),
    }
    shutdown_and_check(&fixture.sup).await;
}

#[tokio::test]
async fn bash_language_server_reports_only_new_diagnostics() {
    Scenario {
        peers: &["bash-language-server", "shellcheck"],
        family: "bash",
        files: &[],
        config: "",
        file: "run.sh",
        bad: "#!/bin/bash\necho \"$undefined_var_x\"\n",
        moved: "#!/bin/bash\n# one\n# two\n# three\n# four\necho \"$undefined_var_x\"\n",
        good: "#!/bin/bash\necho \"hi\"\n",
        expected: "referenced but not assigned",
    }
    .run_and_shut_down()
    .await;
}

#[tokio::test]
async fn rust_analyzer_reports_only_new_diagnostics() {
    let bad = "fn main() {\n    let x = 1\n}\n";
    Scenario {
        peers: &["rust-analyzer"],
        family: "rust",
        files: &[("Cargo.toml", CARGO_TOML)],
        config: "",
        file: "src/main.rs",
        bad,
        moved: &four_lines_down("//", bad),
        good: "fn main() {\n    let _x = 1;\n}\n",
        expected: "SEMICOLON",
    }
    .run_and_shut_down()
    .await;
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

#[tokio::test]
async fn intelephense_reports_only_new_diagnostics() {
    let bad = "<?php\n\nfunction f(int $a): int\n{\n    return no_such_function($a);\n}\n";
    Scenario {
        peers: &["intelephense"],
        family: "php",
        files: &[("composer.json", "{}")],
        config: "",
        file: "src/a.php",
        bad,
        moved: &bad.replacen("<?php\n", "<?php\n//\n//\n//\n//\n", 1),
        good: "<?php\n\nfunction f(int $a): int\n{\n    return strlen((string) $a);\n}\n",
        expected: "Undefined function",
    }
    .run_and_shut_down()
    .await;
}

/// intelephense re-checks the open files that use a changed class, not those that call a
/// changed function: the caller is sent again as a change, so its answer is fresh, not the
/// list it had before the write.
#[tokio::test]
async fn intelephense_a_caller_of_a_changed_function_is_checked_again() {
    if require_peer("intelephense").is_none() {
        return;
    }
    let fixture = fixture(
        &[
            ("composer.json", "{}"),
            ("user.php", "<?php\nrequire 'lib.php';\nf(1);\n"),
            ("lib.php", "<?php\nfunction f(int $a): int { return $a; }\n"),
        ],
        &lenient(&["php"], ""),
    );
    let lib = fixture.ws.join("lib.php");
    let user = fixture.ws.join("user.php");
    let errors_in_user = |checks: &[cc_lsp_client::FileCheck]| -> bool {
        let check = checks.iter().find(|c| c.path == user).unwrap();
        match &check.outcome {
            CheckOutcome::Checked { diagnostics, .. } => diagnostics
                .iter()
                .any(|d| d.severity == cc_lsp_client::Severity::Error),
            other => panic!("the caller was not checked: {other:?}"),
        }
    };
    std::fs::write(&lib, "<?php\nfunction f(int $a): int { return $a; }\n").unwrap();
    let first = fixture
        .sup
        .check_files(std::slice::from_ref(&lib), std::slice::from_ref(&user))
        .await;
    assert!(!errors_in_user(&first), "{first:?}");
    for round in 0..4 {
        let broken = round % 2 == 0;
        let text = if broken {
            "<?php\nfunction f(int $a, int $b): int { return $a; }\n"
        } else {
            "<?php\nfunction f(int $a): int { return $a; }\n"
        };
        std::fs::write(&lib, text).unwrap();
        let checks = fixture
            .sup
            .check_files(std::slice::from_ref(&lib), std::slice::from_ref(&user))
            .await;
        assert_eq!(errors_in_user(&checks), broken, "round {round}: {checks:?}");
    }
    shutdown_and_check(&fixture.sup).await;
}
