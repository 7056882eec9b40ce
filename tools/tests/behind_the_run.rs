//! The tree changes behind the run, as agents change it: shell commands between tool calls
//! (`git checkout`, `git stash`, `rm`, a formatter, a branch switch) on copies of real
//! projects, with the real language servers and the code graph. After each, the next answer
//! agrees with the disk: a rename undone by git leaves no stale buffer, a module the shell
//! creates is importable by the next write, a file deleted and recreated is clean again,
//! a formatter's new line numbers are the ones the servers answer for, a 200-file branch
//! switch is seen by the graph's callers and the servers' diagnostics, and what the tree's
//! change broke is reported apart (`changed_outside`), never as the write's own.
#![allow(clippy::unwrap_used)]

mod lsp_support;

use std::path::Path;

use cc_process::testing::require_peer;
use lsp_support::{Project, Setup};
use serde_json::{json, Value};

/// Runs `script` with `sh -c` in `dir`, as an agent's shell would; panics with its output
/// when it fails.
fn sh(dir: &Path, script: &str) {
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.invalid")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.invalid")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "`{script}` failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Makes the copy a git checkout with one commit, as the agent's project would be.
fn git_init(dir: &Path) {
    sh(
        dir,
        "git init -q -b main && git add -A && git commit -q -m base --no-gpg-sign",
    );
}

/// The `(path, line, message)` of each new diagnostic of a write.
fn new_of(result: &Value) -> Vec<(String, u64, String)> {
    result["diagnostics"]["new"]
        .as_array()
        .unwrap_or_else(|| panic!("no diagnostics in {result:#}"))
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap_or("?").to_owned(),
                d["line"].as_u64().unwrap_or(0),
                d["message"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Asserts a write reported nothing new, with every file answered.
fn assert_clean(result: &Value, what: &str) {
    assert!(result.get("error").is_none(), "{what}: {result:#}");
    let diagnostics = &result["diagnostics"];
    assert_eq!(new_of(result), [], "{what}: {result:#}");
    assert_eq!(diagnostics["pending"], json!([]), "{what}: {result:#}");
}

/// The 1-based line of the first line of `file` that contains `needle`.
fn line_of(project: &Project, file: &str, needle: &str) -> usize {
    project
        .read(file)
        .lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` is not in {file}"))
        + 1
}

async fn edit(project: &Project, path: &str, old: &str, new: &str) -> Value {
    project
        .call(
            "edit",
            json!({"path": path, "old_text": old, "new_text": new}),
        )
        .await
}

async fn write(project: &Project, path: &str, content: &str) -> Value {
    project
        .call("write", json!({"path": path, "content": content}))
        .await
}

/// A unified diff that deletes `file` (its whole current content).
fn deletion_patch(project: &Project, file: &str) -> String {
    let text = project.read(file);
    let lines: Vec<&str> = text.lines().collect();
    let mut patch = format!(
        "--- a/{file}\n+++ /dev/null\n@@ -1,{} +0,0 @@\n",
        lines.len()
    );
    for line in lines {
        patch.push('-');
        patch.push_str(line);
        patch.push('\n');
    }
    patch
}

/// A write of the run: a whole file, or an edit of one.
enum Step {
    Write(&'static str, &'static str),
    Edit(&'static str, &'static str, &'static str),
}

impl Step {
    async fn run(&self, project: &Project) -> Value {
        match self {
            Step::Write(path, content) => write(project, path, content).await,
            Step::Edit(path, old, new) => edit(project, path, old, new).await,
        }
    }
}

/// What one language's project gives the scenarios.
struct Case {
    /// The real project (`cargo xtask peers`).
    project: &'static str,
    /// The server binary the case needs.
    server: &'static str,
    /// A definition renamed through the run: file, a text on its line, the symbol, the new
    /// name.
    rename: (&'static str, &'static str, &'static str, &'static str),
    /// A comment-only edit of a file the rename touched: file, old text, new text.
    comment: (&'static str, &'static str, &'static str),
    /// A module created by the shell, and a file the run writes that imports it.
    shell_module: (&'static str, &'static str),
    shell_importer: Step,
    /// The same, with the module written by the run.
    run_module: (&'static str, &'static str),
    run_importer: Step,
    /// A file others import, deleted and recreated; and a comment edit of an importer.
    recreated: &'static str,
    importer_comment: (&'static str, &'static str, &'static str),
    /// Set-up of the copy before the run starts (a compilation database).
    prepare: fn(&Path),
}

/// A rename through the run, then `git checkout .` restores the files: the servers drop
/// the run's buffers, and the next write reports nothing new.
async fn rename_then_git_restores(project: &Project, case: &Case) {
    let (file, needle, symbol, new_name) = case.rename;
    let line = line_of(project, file, needle);
    let renamed = project
        .call(
            "lsp_rename",
            json!({"file": file, "line": line, "symbol": symbol, "new_name": new_name}),
        )
        .await;
    assert!(renamed.get("error").is_none(), "{renamed:#}");
    assert!(
        renamed["files"].as_array().is_some_and(|f| f.len() >= 2),
        "the rename touched one file only: {renamed:#}"
    );
    sh(&project.ws, "git checkout -q . && git clean -qfd");
    let (file, old, new) = case.comment;
    let after = edit(project, file, old, new).await;
    assert_clean(
        &after,
        "a comment edit after git restored the renamed files",
    );
}

/// Modules created by the shell, and by the run, are importable in the next write.
async fn created_modules_are_importable(project: &Project, case: &Case) {
    let (module, content) = case.shell_module;
    std::fs::create_dir_all(project.ws.join(module).parent().unwrap()).unwrap();
    std::fs::write(project.ws.join(module), content).unwrap();
    let out = case.shell_importer.run(project).await;
    assert_clean(&out, "a file importing a module the shell created");

    let (module, content) = case.run_module;
    let out = write(project, module, content).await;
    assert_clean(&out, "a new module written by the run");
    let out = case.run_importer.run(project).await;
    assert_clean(&out, "a file importing a module the run created");
}

/// A file deleted and recreated through the run, then through the shell: clean again.
async fn deleted_and_recreated(project: &Project, case: &Case) {
    let file = case.recreated;
    let original = project.read(file);
    let deleted = project
        .call(
            "apply_patch",
            json!({"patch": deletion_patch(project, file)}),
        )
        .await;
    assert!(deleted.get("error").is_none(), "{deleted:#}");
    assert!(
        !new_of(&deleted).is_empty(),
        "deleting {file} broke nothing: {deleted:#}"
    );
    let restored = write(project, file, &original).await;
    assert_clean(&restored, "the deleted file written back by the run");
    // The importers' diagnostics are gone too.
    let (importer, old, new) = case.importer_comment;
    let after = edit(project, importer, old, new).await;
    assert_clean(&after, "an importer after the file came back");

    // Through the shell: `rm`, then a write elsewhere sees the break as the tree's, not its
    // own; `git checkout` brings the file back, and the next write is clean.
    sh(&project.ws, &format!("rm {file}"));
    let during = edit(project, importer, new, old).await;
    assert_eq!(new_of(&during), [], "{during:#}");
    let outside = &during["diagnostics"]["changed_outside"];
    assert!(
        outside["files"]
            .as_array()
            .is_some_and(|f| f.contains(&json!(file))),
        "the shell's delete is not reported as a change outside the run: {during:#}"
    );
    sh(&project.ws, &format!("git checkout -q -- {file}"));
    let after = edit(project, importer, old, new).await;
    assert_clean(&after, "an importer after git restored the deleted file");
}

async fn run_case(case: &Case) {
    if require_peer(case.server).is_none() {
        return;
    }
    if require_peer("git").is_none() {
        return;
    }
    let Some(project) = Setup::default().real(case.project, &[]) else {
        return;
    };
    (case.prepare)(&project.ws);
    git_init(&project.ws);
    rename_then_git_restores(&project, case).await;
    created_modules_are_importable(&project, case).await;
    deleted_and_recreated(&project, case).await;
    project.shutdown().await;
}

#[tokio::test]
async fn python_requests_shell_changes_between_calls() {
    run_case(&Case {
        project: "requests",
        server: "basedpyright-langserver",
        rename: (
            "src/requests/_internal_utils.py",
            "def unicode_is_ascii",
            "unicode_is_ascii",
            "is_plain_ascii",
        ),
        comment: (
            "src/requests/models.py",
            "from ._internal_utils import",
            "# a comment\nfrom ._internal_utils import",
        ),
        shell_module: (
            "src/requests/_newmod.py",
            "def helper(x: int) -> int:\n    return x\n",
        ),
        shell_importer: Step::Write(
            "src/requests/_newuser.py",
            "from ._newmod import helper\n\nvalue: int = helper(1)\n",
        ),
        run_module: (
            "src/requests/_runmod.py",
            "def twice(x: int) -> int:\n    return 2 * x\n",
        ),
        run_importer: Step::Write(
            "src/requests/_runuser.py",
            "from ._runmod import twice\n\nvalue: int = twice(2)\n",
        ),
        recreated: "src/requests/_internal_utils.py",
        importer_comment: (
            "src/requests/auth.py",
            "from ._internal_utils import to_native_string",
            "from ._internal_utils import to_native_string  # used below",
        ),
        prepare: |_| {},
    })
    .await;
}

#[tokio::test]
async fn go_pflag_shell_changes_between_calls() {
    run_case(&Case {
        project: "pflag",
        server: "gopls",
        rename: ("string_slice.go", "func readAsCSV(", "readAsCSV", "readCSV"),
        comment: (
            "bool_slice.go",
            "func (s *boolSliceValue) Set(val string) error {",
            "// Set parses val.\nfunc (s *boolSliceValue) Set(val string) error {",
        ),
        shell_module: (
            "newhelper.go",
            "package pflag\n\nfunc newHelper(x int) int { return x }\n",
        ),
        shell_importer: Step::Write(
            "newuser.go",
            "package pflag\n\nvar newUsed = newHelper(1)\n",
        ),
        run_module: (
            "runhelper.go",
            "package pflag\n\nfunc runHelper(x int) int { return 2 * x }\n",
        ),
        run_importer: Step::Write(
            "runuser.go",
            "package pflag\n\nvar runUsed = runHelper(1)\n",
        ),
        recreated: "string_slice.go",
        importer_comment: (
            "ip_slice.go",
            "func (s *ipSliceValue) Set(val string) error {",
            "// Set parses val.\nfunc (s *ipSliceValue) Set(val string) error {",
        ),
        prepare: |_| {},
    })
    .await;
}

#[tokio::test]
async fn typescript_zod_shell_changes_between_calls() {
    run_case(&Case {
        project: "zod",
        server: "typescript-language-server",
        rename: (
            "src/v4/core/util.ts",
            "export function getEnumValues(",
            "getEnumValues",
            "enumValuesOf",
        ),
        comment: (
            "src/v4/core/to-json-schema.ts",
            "import { getEnumValues } from",
            "// values of enums\nimport { getEnumValues } from",
        ),
        shell_module: (
            "src/v4/core/newmod.ts",
            "export function helper(x: number): number {\n  return x;\n}\n",
        ),
        shell_importer: Step::Write(
            "src/v4/core/newuser.ts",
            "import { helper } from \"./newmod.js\";\n\nexport const value: number = helper(1);\n",
        ),
        run_module: (
            "src/v4/core/runmod.ts",
            "export function twice(x: number): number {\n  return 2 * x;\n}\n",
        ),
        run_importer: Step::Write(
            "src/v4/core/runuser.ts",
            "import { twice } from \"./runmod.js\";\n\nexport const value: number = twice(2);\n",
        ),
        recreated: "src/v4/core/util.ts",
        importer_comment: (
            "src/v4/core/to-json-schema.ts",
            "import { getEnumValues } from",
            "// enum values\nimport { getEnumValues } from",
        ),
        prepare: |_| {},
    })
    .await;
}

#[tokio::test]
async fn rust_semver_shell_changes_between_calls() {
    run_case(&Case {
        project: "semver",
        server: "rust-analyzer",
        rename: (
            "src/eval.rs",
            "pub(crate) fn matches_req(",
            "matches_req",
            "req_matches",
        ),
        comment: ("src/lib.rs", "mod backport;", "// backports\nmod backport;"),
        shell_module: (
            "src/newmod.rs",
            "pub(crate) fn helper(x: u32) -> u32 {\n    x\n}\n",
        ),
        shell_importer: Step::Edit(
            "src/lib.rs",
            "mod backport;",
            "mod backport;\nmod newmod;\n#[allow(dead_code)]\nfn use_helper() -> u32 {\n    newmod::helper(1)\n}",
        ),
        run_module: (
            "src/runmod.rs",
            "pub(crate) fn twice(x: u32) -> u32 {\n    2 * x\n}\n",
        ),
        run_importer: Step::Edit(
            "src/lib.rs",
            "mod newmod;",
            "mod newmod;\nmod runmod;\n#[allow(dead_code)]\nfn use_twice() -> u32 {\n    runmod::twice(1)\n}",
        ),
        recreated: "src/eval.rs",
        importer_comment: ("src/lib.rs", "mod display;", "// display\nmod display;"),
        prepare: |_| {},
    })
    .await;
}

#[tokio::test]
async fn c_cmark_shell_changes_between_calls() {
    run_case(&Case {
        project: "cmarkgfm",
        server: "clangd-19",
        rename: (
            "third_party/cmark/src/buffer.c",
            "void cmark_strbuf_truncate(",
            "cmark_strbuf_truncate",
            "cmark_strbuf_cut",
        ),
        comment: (
            "third_party/cmark/src/inlines.c",
            "#include \"houdini.h\"",
            "/* escaping */\n#include \"houdini.h\"",
        ),
        shell_module: (
            "third_party/cmark/src/newhelper.h",
            "#ifndef NEWHELPER_H\n#define NEWHELPER_H\nstatic inline int new_helper(int x) { return x; }\n#endif\n",
        ),
        shell_importer: Step::Edit(
            "third_party/cmark/src/xml.c",
            "#include \"houdini.h\"",
            "#include \"houdini.h\"\n#include \"newhelper.h\"\nint xml_uses_helper(void) { return new_helper(1); }",
        ),
        run_module: (
            "third_party/cmark/src/runhelper.h",
            "#ifndef RUNHELPER_H\n#define RUNHELPER_H\nstatic inline int run_helper(int x) { return 2 * x; }\n#endif\n",
        ),
        run_importer: Step::Edit(
            "third_party/cmark/src/xml.c",
            "#include \"newhelper.h\"",
            "#include \"newhelper.h\"\n#include \"runhelper.h\"\nint xml_uses_run_helper(void) { return run_helper(1); }",
        ),
        recreated: "third_party/cmark/src/houdini.h",
        importer_comment: (
            "third_party/cmark/src/html.c",
            "#include \"houdini.h\"",
            "/* escaping */\n#include \"houdini.h\"",
        ),
        prepare: |ws| {
            std::fs::write(
                ws.join("compile_commands.json"),
                lsp_support::cmark_compile_commands(ws),
            )
            .unwrap();
        },
    })
    .await;
}
