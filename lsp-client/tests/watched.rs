//! Which files each real server asks to hear about (`workspace/didChangeWatchedFiles`
//! registrations), and that a server that registers none is told of its family's files: a
//! module created on disk (not opened) is importable in the next check of the file that
//! imports it.
#![allow(clippy::unwrap_used)]

mod common;

use cc_lsp_client::CheckOutcome;
use cc_process::testing::require_peer;
use common::*;

/// Starts the server of `family` on `files` by checking `file`, and returns the globs it
/// registered (`None`: it registered none).
async fn registered(
    peer: &str,
    family: &str,
    files: &[(&str, &str)],
    config: &str,
    file: &str,
) -> Option<Option<Vec<String>>> {
    require_peer(peer)?;
    let fixture = fixture(files, &lenient(&[family], config));
    let outcome = check(&fixture.sup, &fixture.ws.join(file)).await;
    assert!(
        matches!(outcome, CheckOutcome::Checked { .. }),
        "{peer}: {outcome:?}"
    );
    let globs = fixture.sup.running()[0].watched_globs();
    shutdown_and_check(&fixture.sup).await;
    Some(globs)
}

fn assert_watches(globs: &Option<Vec<String>>, extension: &str, peer: &str) {
    let globs = globs
        .as_ref()
        .unwrap_or_else(|| panic!("{peer} registered no watchers"));
    assert!(
        globs.iter().any(|g| g.contains(extension)),
        "{peer} does not watch .{extension} files: {globs:?}"
    );
}

#[tokio::test]
async fn servers_that_register_watchers_for_their_sources() {
    const CARGO_TOML: &str =
        "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
    let cases: &[(&str, &str, &[(&str, &str)], &str, &str, &str)] = &[
        (
            "basedpyright-langserver",
            "python",
            &[("pyproject.toml", ""), ("a.py", "x = 1\n")],
            "",
            "a.py",
            "py",
        ),
        (
            "gopls",
            "go",
            &[("go.mod", "module m\n\ngo 1.19\n"), ("a.go", "package m\n")],
            "",
            "a.go",
            "go",
        ),
        (
            "rust-analyzer",
            "rust",
            &[
                ("Cargo.toml", CARGO_TOML),
                ("src/lib.rs", "pub fn f() {}\n"),
            ],
            "",
            "src/lib.rs",
            "rs",
        ),
    ];
    for (peer, family, files, config, file, extension) in cases {
        let Some(globs) = registered(peer, family, files, config, file).await else {
            continue;
        };
        assert_watches(&globs, extension, peer);
    }
}

/// typescript-language-server, pylsp, clangd and bash-language-server register no watcher
/// for their sources: they are told of their family's files (and clangd, which reads headers
/// only when it re-parses, gets a save). Whatever they register, a created module must be
/// importable without being opened.
#[tokio::test]
async fn a_created_module_is_importable_by_typescript_language_server() {
    let Some(globs) = registered(
        "typescript-language-server",
        "typescript",
        &[
            ("package.json", "{}"),
            ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
            ("a.ts", "export const a: number = 1;\n"),
        ],
        "",
        "a.ts",
    )
    .await
    else {
        return;
    };
    // Recorded, so a change in the server's behaviour shows here.
    eprintln!("typescript-language-server registers: {globs:?}");
    let fixture = fixture(
        &[
            ("package.json", "{}"),
            ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
            (
                "a.ts",
                "import { b } from \"./b\";\nexport const a: number = b;\n",
            ),
        ],
        &lenient(&["typescript"], ""),
    );
    let a = fixture.ws.join("a.ts");
    let before = check(&fixture.sup, &a).await;
    let CheckOutcome::Checked { diagnostics, .. } = &before else {
        panic!("{before:?}");
    };
    assert!(
        diagnostics.iter().any(|d| d.message.contains("./b")),
        "the missing module is not reported: {diagnostics:?}"
    );
    // Created on disk, never opened: the server hears of it only as a watched file.
    let b = fixture.ws.join("b.ts");
    std::fs::write(&b, "export const b: number = 2;\n").unwrap();
    let server = fixture.sup.running()[0].clone();
    server
        .files_changed(
            &[(b.clone(), cc_lsp_client::WatchedChange::Created)],
            &["ts".into()],
        )
        .unwrap();
    // The same text again: a recheck, after the server heard of the new file.
    let after = fixture.sup.check_files(&[], &[a.clone()]).await;
    let CheckOutcome::Checked { diagnostics, .. } = &after[0].outcome else {
        panic!("{after:?}");
    };
    assert!(
        !diagnostics
            .iter()
            .any(|d| d.severity == cc_lsp_client::Severity::Error),
        "the created module is still unresolved: {diagnostics:?}"
    );
    shutdown_and_check(&fixture.sup).await;
}
