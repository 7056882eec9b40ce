//! Which files each real server asks to hear about (`workspace/didChangeWatchedFiles`
//! registrations), and that a server that registers none is told of its family's files: a
//! module created on disk (not opened) is importable in the next check of the file that
//! imports it.
#![allow(clippy::unwrap_used)]

use crate::common;

use cc_lsp_client::CheckOutcome;
use cc_test_support::require_peer;
use common::*;

/// A server's case: its peer, family, files, configuration lines, the file checked to start
/// it, and the extension of its sources.
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
    &'static str,
    &'static str,
);

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
    let cases: &[Case] = &[
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
        eprintln!("{peer} registers: {globs:?}");
        assert_watches(&globs, extension, peer);
    }
}

/// typescript-language-server watches files itself unless the client does
/// (`useClientFileWatcher`, set when the pool has a watcher): its own watchers miss a module
/// created next to a file that imports it. With the run's watcher it registers globs, and a
/// module created on disk (never opened) resolves in the next check of its importer.
/// (pylsp, clangd and bash-language-server register nothing for their sources: they are told
/// of their family's files, and clangd, which re-reads headers only when it re-parses, gets a
/// save.)
#[tokio::test]
async fn a_created_module_is_importable_by_typescript_language_server() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    // Deep enough: tsserver does not watch for missing modules in folders near `/`.
    let fixture = fixture(
        &[
            ("project/app/package.json", "{}"),
            (
                "project/app/tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true}}",
            ),
            (
                "project/app/a.ts",
                "import { b } from \"./b\";\nexport const a: number = b;\n",
            ),
        ],
        &lenient(&["typescript"], ""),
    );
    let a = fixture.ws.join("project/app/a.ts");
    // The run's watcher, as `cc-tools` attaches it: tsserver then leaves watching to it.
    let watcher = std::sync::Arc::new(
        cc_workspace::watch::TreeWatcher::start(&fixture.ws, Default::default()).unwrap(),
    );
    fixture
        .sup
        .watch(std::sync::Arc::new(move || Some(watcher.clone())));
    let before = check(&fixture.sup, &a).await;
    let CheckOutcome::Checked { diagnostics, .. } = &before else {
        panic!("{before:?}");
    };
    assert!(
        diagnostics.iter().any(|d| d.message.contains("./b")),
        "the missing module is not reported: {diagnostics:?}"
    );
    // With the watcher attached, tsserver leaves file watching to the client.
    let globs = fixture.sup.running()[0].watched_globs();
    assert_watches(&globs, "*", "typescript-language-server");
    // Created on disk (as a shell would), never opened: the server hears of it only from
    // the watcher, before the next check.
    let b = fixture.ws.join("project/app/b.ts");
    std::fs::write(&b, "export const b: number = 2;\n").unwrap();
    // The same text again: a recheck, after the server heard of the new file.
    let after = fixture.sup.check_files(&[], std::slice::from_ref(&a)).await;
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

/// pylsp, clangd and bash-language-server register no watcher for their sources: the pool
/// tells them of their family's files (a static registration), and clangd gets a save when a
/// header changes on disk. Recorded here so a change in a server's behaviour shows.
#[tokio::test]
async fn servers_that_register_nothing_for_their_sources() {
    let cases: &[Case] = &[
        (
            "pylsp",
            "python",
            &[("setup.py", ""), ("a.py", "x = 1\n")],
            "command = [\"pylsp\"]\n",
            "a.py",
            "py",
        ),
        (
            "clangd-19",
            "c",
            &[(".clangd", ""), ("a.c", "int main(void) { return 0; }\n")],
            "",
            "a.c",
            "c",
        ),
        (
            "bash-language-server",
            "bash",
            &[("a.sh", "echo hi\n")],
            "",
            "a.sh",
            "sh",
        ),
    ];
    for (peer, family, files, config, file, extension) in cases {
        let Some(globs) = registered(peer, family, files, config, file).await else {
            continue;
        };
        let sources = globs
            .as_ref()
            .is_some_and(|globs| globs.iter().any(|g| g.contains(extension)));
        assert!(
            !sources,
            "{peer} now registers watchers for its sources: {globs:?}"
        );
        eprintln!("{peer} registers: {globs:?}");
    }
}
