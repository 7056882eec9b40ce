//! `cc-harness tour`, the main job, checked step by step.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::process::Command;

#[test]
fn tour_runs_every_step_and_each_does_what_it_says() {
    let output = Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .arg("tour")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let steps: Vec<&str> = text.split("\n━━ step ").skip(1).collect();
    assert_eq!(steps.len(), 10, "{text}");

    let expectations: [(&str, &[&str]); 10] = [
        ("1/10: structural search", &["→ ast_grep", "2 matches", "✓"]),
        ("2/10: structural search in C", &["strcpy(out, text)", "✓"]),
        (
            "3/10: staged rewrite",
            &[
                "→ ast_edit",
                "-        warnings.warn(\"empty stock\")",
                "+        raise ValueError(\"empty stock\")",
                "→ resolve",
                "✓",
            ],
        ),
        (
            "4/10: write a file with a type error",
            &["→ write", "1 new diagnostic(s):", "report.py:6: error", "✓"],
        ),
        ("5/10: language server", &["→ lsp", "inventory.py:6", "✓"]),
        (
            "6/10: code graph",
            &[
                "→ graph",
                "impact of function total_value",
                "report (report.py",
                "✓",
            ],
        ),
        (
            "7/10: an edit that breaks a caller",
            &[
                "→ edit",
                "report.py:5",
                "dependents found by the code graph",
                "✓",
            ],
        ),
        (
            "8/10: persistent interpreter",
            &["→ eval", "['total_value', 'restock', 'cheapest']", "✓"],
        ),
        (
            "9/10: debugger",
            &["→ debug", "stopped at inventory.py:9", "'apple'", "✓"],
        ),
        (
            "10/10: status",
            &["language servers", "code graph (graph)", "debugpy", "✓"],
        ),
    ];
    let in_ci = std::env::var_os("CI").is_some();
    for (step, (title, needles)) in steps.iter().zip(expectations) {
        assert!(
            step.starts_with(title),
            "step {title} out of order:\n{step}"
        );
        assert!(!step.contains("✗"), "step {title} failed:\n{step}");
        if step.contains("– skipped:") {
            assert!(!in_ci, "step {title} skipped under CI:\n{step}");
            eprintln!("SKIPPED tour step {title}: a peer is missing locally");
            continue;
        }
        for needle in needles {
            assert!(
                step.contains(needle),
                "step {title} lacks `{needle}`:\n{step}"
            );
        }
    }
    assert!(output.status.success(), "{text}");
    assert!(text.contains("tour finished: "), "{text}");
}
