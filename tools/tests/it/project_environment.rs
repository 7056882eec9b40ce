//! The project's own environment, never the harness's: on real projects, with the PATH the
//! README's MCP configuration gives (the peers' venv first, holding another click), the
//! servers and the checker resolve the project against its own code and interpreter; what a
//! project's configuration leaves out of its checker is checked anyway or said; Rust is seen
//! as `cargo check` sees it (no `miri` cfg); dependents include importers, never bundles; and
//! no server writes into the workspace or installs packages behind the agent's back.
#![allow(clippy::unwrap_used)]

use crate::lsp_support;

use std::collections::BTreeSet;
use std::path::Path;

use cc_test_support::require_peer;
use lsp_support::{Project, Setup, LENIENT};
use serde_json::{json, Value};

fn line_of(project: &Project, file: &str, needle: &str) -> usize {
    project
        .read(file)
        .lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` is not in {file}"))
        + 1
}

fn files_with_new(result: &Value) -> BTreeSet<String> {
    result["diagnostics"]["new"]
        .as_array()
        .unwrap_or_else(|| panic!("no diagnostics in {result:#}"))
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_owned())
        .collect()
}

async fn edit(project: &Project, path: &str, old: &str, new: &str) -> Value {
    let result = project
        .call(
            "edit",
            json!({"path": path, "old_text": old, "new_text": new}),
        )
        .await;
    assert!(result.get("error").is_none(), "{result:#}");
    assert_eq!(result["diagnostics"]["pending"], json!([]), "{result:#}");
    result
}

/// A `.venv` (without pip) in `dir`, as the agent's shell makes one.
fn make_venv(dir: &Path) {
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv failed");
}

/// The reason `lsp status` gives for the running python server.
async fn python_status(project: &Project) -> String {
    let status = project.lsp(json!({"action": "status"})).await;
    status["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["language"] == "python" && row["state"] == "running")
        .and_then(|row| row["reason"].as_str())
        .unwrap_or_else(|| panic!("no running python server: {status:#}"))
        .to_owned()
}

/// click 8.1.8, a src layout installed nowhere, while the peers' venv (first on PATH) holds
/// click 8.5: its tests resolve `click` to `src/click`, a signature change reports its broken
/// test callers, `status` names the interpreter and why, and `diagnostics "*"` checks the
/// tests `[tool.pyright] include` leaves out.
#[tokio::test]
async fn python_src_layout_resolves_against_the_project() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("click", &[]) else {
        return;
    };
    let test_file = "tests/test_utils.py";
    let line = line_of(
        &project,
        test_file,
        "out = click.utils.make_default_short_help(",
    );
    let definition = project
        .lsp(json!({"action": "definition", "file": test_file, "line": line, "symbol": "make_default_short_help"}))
        .await;
    let found: Vec<&str> = definition["locations"]
        .as_array()
        .unwrap_or_else(|| panic!("{definition:#}"))
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["src/click/utils.py"], "{definition:#}");
    let reason = python_status(&project).await;
    assert!(
        reason.contains("the project's Python") && !reason.contains(".peers/venv/bin/python "),
        "{reason}"
    );

    let old = "def make_default_short_help(help: str, max_length: int = 45) -> str:";
    let new = "def make_default_short_help(help: str, max_length: int = 45, *, width: int) -> str:";
    let broken = edit(&project, "src/click/utils.py", old, new).await;
    let files = files_with_new(&broken);
    for expected in ["src/click/core.py", test_file] {
        assert!(
            files.contains(expected),
            "{expected} is not reported: {broken:#}"
        );
    }

    // The project checker checks what `[tool.pyright] include` leaves out (the tests).
    let checked = project
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "python"}))
        .await;
    let in_tests = checked["diagnostics"]
        .as_array()
        .unwrap_or_else(|| panic!("{checked:#}"))
        .iter()
        .any(|d| d["path"] == test_file && d["severity"] == "error");
    assert!(
        in_tests,
        "the broken test is neither found nor listed: {checked:#}"
    );
    let note = checked["checks"][0]["note"].as_str().unwrap_or("");
    assert!(note.contains("include"), "{checked:#}");
    edit(&project, "src/click/utils.py", new, old).await;
    project.shutdown().await;
}

/// The same project with an environment of its own (`.venv`, made by the test): that
/// interpreter is the one the servers are given.
#[tokio::test]
async fn python_project_venv_is_used() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("click", &[]) else {
        return;
    };
    make_venv(&project.ws);
    let comment = edit(
        &project,
        "src/click/utils.py",
        "def make_default_short_help(",
        "# condensed help\ndef make_default_short_help(",
    )
    .await;
    assert_eq!(files_with_new(&comment), BTreeSet::new(), "{comment:#}");
    let reason = python_status(&project).await;
    assert!(
        reason.contains(".venv/bin/python") && reason.contains("the project's .venv"),
        "{reason}"
    );
    project.shutdown().await;
}

/// The agent's shell creates the project's `.venv` after the server started, with a package
/// only that environment has: the next check runs on a server started again with that
/// interpreter, so the import resolves, and `status` names it.
#[tokio::test]
async fn python_venv_created_by_the_shell_after_the_server_started_is_taken() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("click", &[]) else {
        return;
    };
    let user = "src/click/_ccvenv_user.py";
    let written = project
        .call(
            "write",
            json!({"path": user, "content": "import ccvenvonly\n\nvalue = ccvenvonly.VALUE\n"}),
        )
        .await;
    assert!(
        files_with_new(&written).contains(user),
        "the import of a package nowhere installed is not reported: {written:#}"
    );
    make_venv(&project.ws);
    // Before the server's next use, `status` already says it will change interpreter.
    let reason = python_status(&project).await;
    assert!(
        reason.contains("is now") && reason.contains(".venv/bin/python"),
        "{reason}"
    );
    let purelib = std::process::Command::new(project.ws.join(".venv/bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let package = Path::new(String::from_utf8(purelib.stdout).unwrap().trim()).join("ccvenvonly");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(package.join("__init__.py"), "VALUE = 1\n").unwrap();

    edit(
        &project,
        user,
        "value = ",
        "# from the project's venv\nvalue = ",
    )
    .await;
    let listed = project
        .lsp(json!({"action": "diagnostics", "file": user}))
        .await;
    let text = serde_json::to_string(&listed["diagnostics"]).unwrap();
    assert!(!text.contains("ccvenvonly"), "{listed:#}");
    let reason = python_status(&project).await;
    assert!(reason.contains(".venv/bin/python"), "{reason}");
    project.shutdown().await;
}

/// itertools 0.14.0: its tests are `#![cfg(not(miri))]`. Adding a parameter to `repeat_n`
/// reports the callers in those tests in the write's own result (rust-analyzer without the
/// `miri` cfg, the write waiting for the check its save started), each diagnostic once.
#[tokio::test]
async fn rust_tests_gated_on_miri_are_checked() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let config = LENIENT.replace("[lsp.rust]\n", "[lsp.rust]\nindexing_timeout_ms = 300000\n");
    let setup = Setup {
        config: &config,
        ..Setup::default()
    };
    let Some(project) = setup.real("itertools", &[]) else {
        return;
    };
    let old = "pub fn repeat_n<A>(element: A, n: usize) -> RepeatN<A>";
    let new = "pub fn repeat_n<A>(element: A, n: usize, step: usize) -> RepeatN<A>";
    let broken = edit(&project, "src/repeatn.rs", old, new).await;
    let files = files_with_new(&broken);
    for expected in ["tests/quick.rs", "tests/specializations.rs"] {
        assert!(
            files.contains(expected),
            "{expected} is not reported: {broken:#}"
        );
    }
    let new_list = broken["diagnostics"]["new"].as_array().unwrap();
    let mut keys = BTreeSet::new();
    for d in new_list {
        let key = (
            d["path"].to_string(),
            d["line"].to_string(),
            d["code"].to_string(),
            d["message"].to_string(),
        );
        assert!(keys.insert(key), "listed twice: {d}");
    }
    project.shutdown().await;
}

/// semver 1.0 (a published crate): `cargo check --all-targets` never compiles `src/serde.rs`
/// (`#[cfg(feature = "serde")] mod serde;`, an optional dependency that is off) nor
/// `tests/node/mod.rs` (`#![cfg(test_node_semver)]`, which nothing sets). `diagnostics "*"`
/// lists both under `unchecked` with the reason, in the text too.
#[tokio::test]
async fn rust_files_cargo_leaves_off_are_listed() {
    if require_peer("cargo").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("semver", &[]) else {
        return;
    };
    let output = project
        .registry
        .call(
            "lsp",
            json!({"action": "diagnostics", "file": "*", "language": "rust"}),
        )
        .await
        .unwrap();
    let checked = output.value;
    let unchecked = checked["unchecked"]
        .as_array()
        .unwrap_or_else(|| panic!("{checked:#}"));
    let reason_of = |file: &str| {
        unchecked
            .iter()
            .find(|u| {
                u["kind"] == "left_out_by_configuration"
                    && u["files"]
                        .as_array()
                        .is_some_and(|f| f.iter().any(|f| f == file))
            })
            .and_then(|u| u["reason"].as_str())
            .unwrap_or_else(|| panic!("{file} is not listed: {checked:#}"))
            .to_owned()
    };
    let serde = reason_of("src/serde.rs");
    assert!(
        serde.contains("`#[cfg(feature = \"serde\")] mod serde;` in src/lib.rs:")
            && serde.contains("features on: std"),
        "{serde}"
    );
    let node = reason_of("tests/node/mod.rs");
    assert!(node.contains("`#![cfg(test_node_semver)]`"), "{node}");
    // Nothing the check compiles is listed.
    for compiled in ["src/lib.rs", "src/parse.rs", "tests/test_version_req.rs"] {
        assert!(
            !unchecked.iter().any(|u| u["files"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f == compiled))),
            "{compiled} listed: {checked:#}"
        );
    }
    let text = output.text.unwrap_or_default();
    assert!(
        text.contains("src/serde.rs") && text.contains("tests/node/mod.rs"),
        "{text}"
    );
    project.shutdown().await;
}

/// rxjs 7.8.2 (sources in src/, bundles in dist/), no code graph: renaming an exported
/// interface reports the errors in files that import its module without naming it, and no
/// bundle is ever a dependent.
#[tokio::test]
async fn typescript_importers_are_dependents_and_bundles_never() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    // Every importer of the module (179 files) is checked.
    let setup = Setup {
        options: cc_lsp_client::ServerPoolOptions {
            dependents_limit: 200,
            ..Default::default()
        },
        ..Setup::default()
    };
    let Some(project) = setup.real("rxjs", &[]) else {
        return;
    };
    let broken = edit(
        &project,
        "src/internal/types.ts",
        "export interface TimestampProvider {",
        "export interface TimeProvider {",
    )
    .await;
    let files = files_with_new(&broken);
    let importer_only = "src/internal/operators/debounceTime.ts";
    assert!(
        !project.read(importer_only).contains("TimestampProvider"),
        "{importer_only} names the interface"
    );
    assert!(files.contains(importer_only), "{broken:#}");
    let dependents = broken["diagnostics"]["scope"]["dependents"]
        .as_array()
        .unwrap();
    assert!(
        dependents
            .iter()
            .all(|d| !d.as_str().unwrap().starts_with("dist/")),
        "a bundle is a dependent: {dependents:?}"
    );
    project.shutdown().await;
}

/// Every file under `dir` (relative), hidden ones included.
fn all_files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out
}

/// The command lines of the live descendants of `pid`.
fn descendant_commands(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        for child in children
            .split_whitespace()
            .filter_map(|c| c.parse::<u32>().ok())
        {
            let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            out.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
            queue.push(child);
        }
    }
    out
}

/// A session on zod (TypeScript) and cmark (C, with a compilation database): no file appears
/// in the workspace but the ones the session wrote, and tsserver runs without automatic type
/// acquisition (which installs `@types` packages with npm).
#[tokio::test]
async fn servers_write_nothing_into_the_workspace() {
    for (name, peer, file, old, new) in [
        (
            "zod",
            "typescript-language-server",
            "src/v4/core/util.ts",
            "export function getEnumValues(",
            "// values of an enum\nexport function getEnumValues(",
        ),
        (
            "cmarkgfm",
            "clangd-19",
            "third_party/cmark/src/buffer.c",
            "void cmark_strbuf_truncate(",
            "/* cut */\nvoid cmark_strbuf_truncate(",
        ),
    ] {
        if require_peer(peer).is_none() {
            continue;
        }
        let Some(project) = Setup::default().real(name, &[]) else {
            continue;
        };
        if name == "cmarkgfm" {
            std::fs::write(
                project.ws.join("compile_commands.json"),
                lsp_support::cmark_compile_commands(&project.ws),
            )
            .unwrap();
        }
        let before = all_files(&project.ws);
        edit(&project, file, old, new).await;
        let line = line_of(&project, file, old.trim_end_matches('('));
        let symbol = old
            .trim_end_matches('(')
            .rsplit(' ')
            .next()
            .unwrap()
            .to_owned();
        let _ = project
            .lsp(json!({"action": "references", "file": file, "line": line, "symbol": symbol}))
            .await;
        if name == "zod" {
            let commands: Vec<String> = project
                .server_pids()
                .into_iter()
                .flat_map(descendant_commands)
                .filter(|c| c.contains("tsserver"))
                .collect();
            assert!(!commands.is_empty(), "no tsserver found");
            assert!(
                commands
                    .iter()
                    .all(|c| c.contains("--disableAutomaticTypingAcquisition")),
                "tsserver may install types: {commands:?}"
            );
        }
        // Background work (clangd's index) has had its moment.
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        let after = all_files(&project.ws);
        project.shutdown().await;
        let appeared: Vec<&String> = after.difference(&before).collect();
        assert!(appeared.is_empty(), "{name}: files appeared: {appeared:?}");
    }
}
