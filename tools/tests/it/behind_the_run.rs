//! The tree changes behind the run, as agents change it: shell commands between tool calls
//! (`git checkout`, `git stash`, `rm`, a formatter, a branch switch) on copies of real
//! projects, with the real language servers and the code graph. After each, the next answer
//! agrees with the disk: a rename undone by git leaves no stale buffer, a module the shell
//! creates is importable by the next write, a file deleted and recreated is clean again,
//! a formatter's new line numbers are the ones the servers answer for, a 200-file branch
//! switch is seen by the graph's callers and the servers' diagnostics, and what the tree's
//! change broke is reported apart (`changed_outside`), never as the write's own.
#![allow(clippy::unwrap_used)]

use crate::lsp_support;

use std::path::Path;

use cc_test_support::require_peer;
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
    /// A file the run writes badly formatted, and the shell formats.
    format: Format,
    /// A branch that adds 200 files calling a definition, and breaks one existing file.
    branch: Branch,
    /// A definition the shell breaks under a caller that stays unchanged.
    shell_break: Option<ShellBreak>,
}

/// The shell changes a definition (by `sed`) that the run has open, and a caller in another
/// file, open and unchanged, breaks: what `lsp diagnostics` says of the caller follows.
struct ShellBreak {
    /// The definition's file, written once through the run first (so that it is open).
    definition: &'static str,
    /// The `sed` expression applied to it.
    sed: &'static str,
    /// The caller, and a word of the error the change causes there.
    caller: &'static str,
    error: &'static str,
}

/// A formatter run by the shell over a file the servers have open.
struct Format {
    file: &'static str,
    /// What the run writes first: two definitions, the second calling the first, laid out so
    /// that formatting moves the call to another line.
    bad: &'static str,
    /// The shell command (`{}` is the file); `None`: not installed here, skipped.
    command: &'static str,
    /// The binary the command needs.
    needs: &'static str,
    /// Text on the call's line after formatting, the symbol, and text on the definition's
    /// line.
    call: &'static str,
    symbol: &'static str,
    definition: &'static str,
}

/// What a 200-file branch switch changes.
struct Branch {
    /// The file the generated files call into, its definition's line text and the symbol.
    definition: (&'static str, &'static str, &'static str),
    /// The path of generated file `i` (`{}` is `i`) and its content (`{}` is `i` too).
    generated: (&'static str, &'static str),
    /// A file listing the generated ones (`{}` is `i` in each line), when the language needs
    /// one (Rust's `mod` declarations).
    index: Option<(&'static str, &'static str)>,
    /// An existing file the branch breaks, and what it appends to it (an error).
    broken: (&'static str, &'static str),
    /// Whether the graph resolves the generated calls to the definition (not yet for C
    /// through a header).
    callers: bool,
    /// The graph's kind of the generated definitions (`function`; Java has only `method`s).
    kind: &'static str,
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

/// The shell breaks a definition under an open, unchanged caller: `lsp diagnostics` of the
/// caller reports the break, and no longer does once `git checkout` undid it.
async fn broken_under_an_open_caller(project: &Project, case: &Case) {
    let Some(change) = &case.shell_break else {
        return;
    };
    let before = errors_of(project, change.caller).await;
    let text = project.read(change.definition);
    let opened = write(project, change.definition, &format!("{text}\n")).await;
    assert_clean(&opened, "a blank line in the definition's file");
    sh(
        &project.ws,
        &format!("sed -i '{}' {}", change.sed, change.definition),
    );
    // The next write names the shell's change apart, and only it: `sed -i`'s temporary
    // file came and went and changed nothing.
    let (file, old, new) = case.comment;
    let noted = edit(project, file, old, new).await;
    assert_eq!(
        noted["diagnostics"]["changed_outside"]["files"],
        json!([change.definition]),
        "{noted:#}"
    );
    let during = errors_of(project, change.caller).await;
    assert!(
        during.len() > before.len() && during.iter().any(|e| e.contains(change.error)),
        "the caller's errors after the shell broke its callee: {during:?}, before: {before:?}"
    );
    sh(
        &project.ws,
        &format!("git checkout -q -- {}", change.definition),
    );
    assert_eq!(
        errors_of(project, change.caller).await,
        before,
        "the caller's errors after git undid the break"
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

/// A formatter in the shell over a file the servers have open: the next `lsp` answer is
/// about the formatted text (its line numbers), and the next write is clean.
async fn formatted_by_the_shell(project: &Project, case: &Case) {
    let format = &case.format;
    if require_peer(format.needs).is_none() {
        return;
    }
    let _ = write(project, format.file, format.bad).await;
    sh(&project.ws, &format.command.replace("{}", format.file));
    assert_ne!(
        project.read(format.file),
        format.bad,
        "the formatter changed nothing"
    );
    let line = line_of(project, format.file, format.call);
    let answer = project
        .lsp(json!({"action": "definition", "file": format.file, "line": line, "symbol": format.symbol}))
        .await;
    let expected = line_of(project, format.file, format.definition);
    let found: Vec<(String, u64)> = answer["locations"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer:#}"))
        .iter()
        .map(|l| {
            (
                l["path"].as_str().unwrap().to_owned(),
                l["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [(format.file.to_owned(), expected as u64)],
        "the definition after the shell formatted the file: {answer:#}"
    );
    let text = project.read(format.file);
    let first_line = text.lines().next().unwrap().to_owned();
    let after = edit(
        project,
        format.file,
        &first_line,
        &format!("{first_line}\n"),
    )
    .await;
    assert_clean(&after, "a write after the formatter");
}

/// The number of definitions of `kind` whose name has `ccgen` in it (the generated ones).
async fn generated_definitions(project: &Project, kind: &str) -> u64 {
    let found = project
        .call(
            "graph",
            json!({"action": "symbols", "query": "ccgen", "kind": kind, "max_results": 1}),
        )
        .await;
    assert!(found.get("error").is_none(), "{found:#}");
    assert_eq!(found["index"]["fresh"], json!(true), "{found:#}");
    found["total"]
        .as_u64()
        .unwrap_or_else(|| panic!("{found:#}"))
}

async fn callers_total(project: &Project, case: &Case) -> u64 {
    let (file, needle, symbol) = case.branch.definition;
    let line = line_of(project, file, needle);
    let found = project
        .call(
            "graph",
            json!({"action": "callers", "file": file, "line": line, "symbol": symbol, "max_results": 1}),
        )
        .await;
    assert!(found.get("error").is_none(), "{found:#}");
    found["total"]
        .as_u64()
        .unwrap_or_else(|| panic!("{found:#}"))
}

/// Messages of the errors `lsp diagnostics` gives for `file` now.
async fn errors_of(project: &Project, file: &str) -> Vec<String> {
    let answer = project
        .lsp(json!({"action": "diagnostics", "file": file}))
        .await;
    let listed = answer["diagnostics"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer:#}"));
    // Shown with a failure: where each error is, and what was set aside as missing.
    let lines: Vec<String> = listed
        .iter()
        .map(|d| format!("{}:{} {}", d["line"], d["severity"], d["message"]))
        .collect();
    eprintln!(
        "diagnostics of {file}: {lines:?}; missing: {}",
        answer["missing_dependencies"]
    );
    listed
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["message"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// `git checkout` of a branch that changes 201 files, and back: the graph's symbols and
/// callers and the servers' diagnostics agree with the disk on the next call each time.
async fn branch_switch(project: &Project, case: &Case) {
    let branch = &case.branch;
    // The graph is open (and the broken file known) before the switch.
    let before = generated_definitions(project, case.branch.kind).await;
    let callers_before = if branch.callers {
        callers_total(project, case).await
    } else {
        0
    };
    let (broken, appended) = branch.broken;
    let errors_before = errors_of(project, broken).await;
    sh(
        &project.ws,
        "git add -A && git commit -q -m work --no-gpg-sign && git checkout -q -b feature",
    );
    for i in 0..200 {
        let path = project
            .ws
            .join(branch.generated.0.replace("{}", &i.to_string()));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, branch.generated.1.replace("{}", &i.to_string())).unwrap();
    }
    if let Some((path, line)) = branch.index {
        let lines: String = (0..200)
            .map(|i| line.replace("{}", &i.to_string()))
            .collect();
        std::fs::write(project.ws.join(path), lines).unwrap();
    }
    let mut text = project.read(broken);
    text.push_str(appended);
    std::fs::write(project.ws.join(broken), text).unwrap();
    sh(
        &project.ws,
        "git add -A && git commit -q -m feature --no-gpg-sign && git checkout -q main",
    );
    assert_eq!(
        generated_definitions(project, case.branch.kind).await,
        before
    );

    sh(&project.ws, "git checkout -q feature");
    assert_eq!(
        generated_definitions(project, case.branch.kind).await,
        before + 200
    );
    if branch.callers {
        let callers = callers_total(project, case).await;
        assert!(
            callers >= callers_before + 200,
            "the graph's callers after the branch switch: {callers}, {callers_before} before"
        );
    }
    let errors = errors_of(project, broken).await;
    assert!(
        errors.len() > errors_before.len(),
        "the break on the branch is not seen: {errors:?}"
    );

    sh(&project.ws, "git checkout -q main");
    assert_eq!(
        generated_definitions(project, case.branch.kind).await,
        before
    );
    if branch.callers {
        assert_eq!(callers_total(project, case).await, callers_before);
    }
    assert_eq!(errors_of(project, broken).await, errors_before);
}

/// Runs one step of a case, and prints how long it took: a failing case's output shows
/// where the time went (a JVM server's start under load, a slow check).
async fn timed(step: &str, work: impl std::future::Future<Output = ()>) {
    let started = std::time::Instant::now();
    work.await;
    eprintln!("step {step}: {:.1?}", started.elapsed());
}

async fn run_case(case: &Case) {
    if require_peer(case.server).is_none() {
        return;
    }
    if require_peer("git").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::Full);
    let Some(project) = setup.real(case.project, &[]) else {
        return;
    };
    (case.prepare)(&project.ws);
    git_init(&project.ws);
    timed(
        "rename_then_git_restores",
        rename_then_git_restores(&project, case),
    )
    .await;
    timed(
        "broken_under_an_open_caller",
        broken_under_an_open_caller(&project, case),
    )
    .await;
    timed(
        "created_modules_are_importable",
        created_modules_are_importable(&project, case),
    )
    .await;
    timed(
        "deleted_and_recreated",
        deleted_and_recreated(&project, case),
    )
    .await;
    timed(
        "formatted_by_the_shell",
        formatted_by_the_shell(&project, case),
    )
    .await;
    timed("branch_switch", branch_switch(&project, case)).await;
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
        format: Format {
            file: "src/requests/_fmtcase.py",
            bad: "def   first( a,\n        b ):\n    return a+b\ndef second(x):\n    return first(x,\n                 x)\n",
            command: "black -q {}",
            needs: "black",
            call: "return first(",
            symbol: "first",
            definition: "def first",
        },
        branch: Branch {
            definition: ("src/requests/_internal_utils.py", "def to_native_string", "to_native_string"),
            generated: (
                "src/requests/gen_{}.py",
                "from ._internal_utils import to_native_string\n\n\ndef ccgen_{}() -> str:\n    return to_native_string(\"x\")\n",
            ),
            index: None,
            broken: ("src/requests/auth.py", "\n_broken: int = to_native_string(\"x\")\n"),
            callers: true,
            kind: "function",
        },
        prepare: |_| {},
        shell_break: Some(ShellBreak {
            definition: "src/requests/_internal_utils.py",
            sed: "s/^def to_native_string(/def to_native_str(/",
            caller: "src/requests/auth.py",
            error: "to_native_string",
        }),
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
        format: Format {
            file: "fmtcase.go",
            bad: "package pflag\nfunc fmtFirst(a, b int) int { return a + b }; func fmtSecond(x int) int { return fmtFirst(x, x) }\n",
            command: "gofmt -w {}",
            needs: "gofmt",
            call: "return fmtFirst(",
            symbol: "fmtFirst",
            definition: "func fmtFirst",
        },
        branch: Branch {
            definition: ("string_slice.go", "func readAsCSV(", "readAsCSV"),
            generated: (
                "gen_{}.go",
                "package pflag\n\nfunc ccgen{}() ([]string, error) { return readAsCSV(\"x\") }\n",
            ),
            index: None,
            broken: ("bool_slice.go", "\nvar _broken int = \"x\"\n"),
            callers: true,
            kind: "function",
        },
        prepare: |_| {},
        shell_break: Some(ShellBreak {
            definition: "string_slice.go",
            sed: "s/^func readAsCSV(/func readAsCSVRecord(/",
            caller: "bool_slice.go",
            error: "readAsCSV",
        }),
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
        format: Format {
            file: "src/v4/core/fmtcase.ts",
            bad: "export function fmtFirst(a: number, b: number): number { return a + b; } export function fmtSecond(x: number): number { return fmtFirst(x, x); }\n",
            // No TypeScript formatter is installed: the shell lays the file out itself.
            command: "sed -i 's/} export/}\\n\\nexport/' {}",
            needs: "sed",
            call: "return fmtFirst(",
            symbol: "fmtFirst",
            definition: "export function fmtFirst",
        },
        branch: Branch {
            definition: ("src/v4/core/util.ts", "export function getEnumValues(", "getEnumValues"),
            generated: (
                "src/v4/core/gen_{}.ts",
                "import { getEnumValues } from \"./util.js\";\n\nexport function ccgen{}() {\n  return getEnumValues({ a: 1 });\n}\n",
            ),
            index: None,
            broken: ("src/v4/core/to-json-schema.ts", "\nexport const _broken: number = \"x\";\n"),
            callers: true,
            kind: "function",
        },
        prepare: |_| {},
        shell_break: Some(ShellBreak {
            definition: "src/v4/core/util.ts",
            sed: "s/^export function getEnumValues(/export function getEnumValueList(/",
            caller: "src/v4/core/to-json-schema.ts",
            error: "getEnumValues",
        }),
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
        format: Format {
            file: "src/runmod.rs",
            bad: "pub(crate) fn twice(x: u32) -> u32 { 2 * x } pub(crate) fn quad(x: u32) -> u32 { twice(twice(x)) }\n",
            command: "rustfmt --edition 2021 {}",
            needs: "rustfmt",
            call: "twice(twice(",
            symbol: "twice",
            definition: "fn twice",
        },
        branch: Branch {
            definition: ("src/eval.rs", "pub(crate) fn matches_req(", "matches_req"),
            generated: (
                "src/gen/gen_{}.rs",
                "use crate::eval::matches_req;\n\n#[allow(dead_code)]\npub(crate) fn ccgen_{}(r: &crate::VersionReq, v: &crate::Version) -> bool {\n    matches_req(r, v)\n}\n",
            ),
            index: Some(("src/gen/mod.rs", "pub(crate) mod gen_{};\n")),
            broken: ("src/lib.rs", "\nmod gen;\n#[allow(dead_code)]\nconst BROKEN: u32 = \"x\";\n"),
            callers: true,
            kind: "function",
        },
        prepare: |_| {},
        shell_break: Some(ShellBreak {
            definition: "src/eval.rs",
            sed: "s/^pub(crate) fn matches_req(/pub(crate) fn matches_requirement(/",
            caller: "src/lib.rs",
            error: "matches_req",
        }),
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
        format: Format {
            file: "third_party/cmark/src/fmtcase.c",
            bad: "int fmt_first(int a, int b) { return a + b; } int fmt_second(int x) { return fmt_first(x, x); }\n",
            command: "clang-format-19 -i {}",
            needs: "clang-format-19",
            call: "return fmt_first(",
            symbol: "fmt_first",
            definition: "int fmt_first",
        },
        branch: Branch {
            definition: ("third_party/cmark/src/buffer.c", "void cmark_strbuf_truncate(", "cmark_strbuf_truncate"),
            generated: (
                "third_party/cmark/src/gen_{}.c",
                "#include \"buffer.h\"\nvoid ccgen_{}(cmark_strbuf *b) { cmark_strbuf_truncate(b, 0); }\n",
            ),
            index: None,
            broken: ("third_party/cmark/src/xml.c", "\nint broken_c = \"x\";\n"),
            callers: false,
            kind: "function",
        },
        shell_break: Some(ShellBreak {
            definition: "third_party/cmark/src/buffer.h",
            sed: "s/^void cmark_strbuf_truncate(/void cmark_strbuf_cut(/",
            caller: "third_party/cmark/src/inlines.c",
            error: "cmark_strbuf_truncate",
        }),
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

/// A path under expo-modules-core's Java source root.
macro_rules! expo_java {
    ($path:literal) => {
        concat!("android/src/main/java/expo/modules/", $path)
    };
}

#[tokio::test]
async fn java_expo_shell_changes_between_calls() {
    run_case(&Case {
        project: "expo-modules-core",
        server: "jdtls",
        rename: (
            expo_java!("core/ModuleRegistryProvider.java"),
            "protected List<Package> getPackages()",
            "getPackages",
            "packages",
        ),
        comment: (
            expo_java!("adapters/react/ReactModuleRegistryProvider.java"),
            "public class ReactModuleRegistryProvider extends",
            "/** Adds React's view managers (a comment). */\npublic class ReactModuleRegistryProvider extends",
        ),
        shell_module: (
            expo_java!("core/ShellHelper.java"),
            "package expo.modules.core;\n\npublic class ShellHelper {\n  public static int help(int x) { return x; }\n}\n",
        ),
        shell_importer: Step::Write(
            expo_java!("core/ShellUser.java"),
            "package expo.modules.core;\n\nclass ShellUser {\n  int used = ShellHelper.help(1);\n}\n",
        ),
        run_module: (
            expo_java!("core/RunHelper.java"),
            "package expo.modules.core;\n\npublic class RunHelper {\n  public static int twice(int x) { return 2 * x; }\n}\n",
        ),
        run_importer: Step::Write(
            expo_java!("core/RunUser.java"),
            "package expo.modules.core;\n\nclass RunUser {\n  int used = RunHelper.twice(1);\n}\n",
        ),
        recreated: expo_java!("core/interfaces/RegistryLifecycleListener.java"),
        importer_comment: (
            expo_java!("core/interfaces/InternalModule.java"),
            "public interface InternalModule extends",
            "/** A module of the registry (a comment). */\npublic interface InternalModule extends",
        ),
        format: Format {
            file: expo_java!("core/FmtCase.java"),
            bad: "package expo.modules.core;\nclass FmtCase { static int fmtFirst(int a, int b) { return a + b; } static int fmtSecond(int x) { return fmtFirst(x, x); } }\n",
            command: "astyle --quiet --style=java -n {}",
            needs: "astyle",
            call: "return fmtFirst(",
            symbol: "fmtFirst",
            definition: "static int fmtFirst",
        },
        branch: Branch {
            definition: (
                expo_java!("core/utilities/FileUtilities.java"),
                "public static File ensureDirExists(",
                "ensureDirExists",
            ),
            generated: (
                expo_java!("core/gen/CcGen{}.java"),
                "package expo.modules.core.gen;\n\nimport java.io.File;\nimport java.io.IOException;\n\nimport expo.modules.core.utilities.FileUtilities;\n\nclass CcGen{} {\n  static File ccgen{}(File dir) throws IOException {\n    return FileUtilities.ensureDirExists(dir);\n  }\n}\n",
            ),
            index: None,
            broken: (
                expo_java!("core/ModuleRegistryProvider.java"),
                "\nclass CcBroken {\n  int broken = \"x\";\n}\n",
            ),
            callers: true,
            kind: "method",
        },
        prepare: |_| {},
        shell_break: Some(ShellBreak {
            definition: expo_java!("core/ModuleRegistryProvider.java"),
            sed: "s/List<Package> getPackages()/List<Package> getPackageList()/",
            caller: expo_java!("adapters/react/ReactModuleRegistryProvider.java"),
            error: "getPackages",
        }),
    })
    .await;
}

#[tokio::test]
async fn php_symfony_console_shell_changes_between_calls() {
    run_case(&Case {
        project: "symfony-console",
        server: "intelephense",
        rename: (
            "Formatter/OutputFormatter.php",
            "public static function escapeTrailingBackslash(",
            "escapeTrailingBackslash",
            "escapeFinalBackslash",
        ),
        comment: (
            "Style/SymfonyStyle.php",
            "use Symfony\\Component\\Console\\Helper\\Helper;",
            "// helpers\nuse Symfony\\Component\\Console\\Helper\\Helper;",
        ),
        shell_module: (
            "ShellHelper.php",
            "<?php\n\nnamespace Symfony\\Component\\Console;\n\nclass ShellHelper\n{\n    public static function help(int $x): int\n    {\n        return $x;\n    }\n}\n",
        ),
        shell_importer: Step::Write(
            "ShellUser.php",
            "<?php\n\nnamespace Symfony\\Component\\Console;\n\nfunction shellUsed(): int\n{\n    return ShellHelper::help(1);\n}\n",
        ),
        run_module: (
            "RunHelper.php",
            "<?php\n\nnamespace Symfony\\Component\\Console;\n\nclass RunHelper\n{\n    public static function twice(int $x): int\n    {\n        return 2 * $x;\n    }\n}\n",
        ),
        run_importer: Step::Write(
            "RunUser.php",
            "<?php\n\nnamespace Symfony\\Component\\Console;\n\nfunction runUsed(): int\n{\n    return RunHelper::twice(1);\n}\n",
        ),
        recreated: "Formatter/OutputFormatterStyle.php",
        importer_comment: (
            "Formatter/OutputFormatterStyleStack.php",
            "class OutputFormatterStyleStack implements",
            "/** A stack of styles (a comment). */\nclass OutputFormatterStyleStack implements",
        ),
        format: Format {
            file: "FmtCase.php",
            bad: "<?php\nnamespace Symfony\\Component\\Console;\nfunction fmtFirst($a, $b) { return $a + $b; } function fmtSecond($x) { return fmtFirst($x, $x); }\n",
            // phpcbf exits 1 when it fixed something.
            command: "phpcbf -q --standard=PSR12 {} || test $? -eq 1",
            needs: "phpcbf",
            call: "return fmtFirst(",
            symbol: "fmtFirst",
            definition: "function fmtFirst",
        },
        branch: Branch {
            definition: (
                "Formatter/OutputFormatter.php",
                "public static function escape(string $text)",
                "escape",
            ),
            generated: (
                "Gen/CcGen{}.php",
                "<?php\n\nnamespace Symfony\\Component\\Console\\Gen;\n\nuse Symfony\\Component\\Console\\Formatter\\OutputFormatter;\n\nfunction ccgen{}(string $text): string\n{\n    return OutputFormatter::escape($text);\n}\n",
            ),
            index: None,
            broken: (
                "Application.php",
                "\nfunction cc_broken(): string\n{\n    return Formatter\\OutputFormatter::escape();\n}\n",
            ),
            callers: true,
            kind: "function",
        },
        shell_break: Some(ShellBreak {
            definition: "Formatter/OutputFormatter.php",
            sed: "s/function escape(string \\$text)/function escape(string \\$text, int \\$width)/",
            caller: "Helper/FormatterHelper.php",
            error: "arguments",
        }),
        // intelephense takes a folder for a PHP project by its composer.json.
        prepare: |ws| std::fs::write(ws.join("composer.json"), "{\"name\": \"upstream/library\"}\n").unwrap(),
    })
    .await;
}

/// The watcher loses events (its queue forced tiny): the graph stats every file and says
/// so, the servers re-read their open documents, and a write says the tree changed outside
/// with the watcher's note; no answer is stale.
#[tokio::test]
async fn a_lost_event_queue_is_a_rescan_said_in_the_results() {
    if require_peer("basedpyright-langserver").is_none() || require_peer("git").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let mut setup = Setup::with_graph(cache.path(), cc_tools::Surface::Full);
    setup.watch = Some(cc_workspace::watch::WatchOptions {
        queue: 8,
        debounce: std::time::Duration::from_millis(300),
        ..Default::default()
    });
    let Some(project) = setup.real("requests", &[]) else {
        return;
    };
    git_init(&project.ws);
    assert_eq!(generated_definitions(&project, "function").await, 0);
    let comment = edit(
        &project,
        "src/requests/auth.py",
        "from ._internal_utils import to_native_string",
        "from ._internal_utils import to_native_string  # used below",
    )
    .await;
    assert_clean(&comment, "a first write");
    // 300 files at once overflow a queue of 8 events.
    for i in 0..300 {
        std::fs::write(
            project.ws.join(format!("src/requests/gen_{i}.py")),
            format!("def ccgen_{i}() -> int:\n    return {i}\n"),
        )
        .unwrap();
    }
    std::fs::write(
        project.ws.join("src/requests/gen_0.py"),
        "def ccgen_0() -> int:\n    return \"zero\"\n",
    )
    .unwrap();
    // The batch may need its debounce to pass before the overflow shows.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let found = project
        .call(
            "graph",
            json!({"action": "symbols", "query": "ccgen", "kind": "function", "max_results": 1}),
        )
        .await;
    assert_eq!(found["total"], 300, "{found:#}");
    assert!(
        found["index"]["rescanned"]
            .as_str()
            .is_some_and(|why| why.contains("overflowed")),
        "{found:#}"
    );
    let write = edit(
        &project,
        "src/requests/auth.py",
        "  # used below",
        "  # used here",
    )
    .await;
    assert_clean(&write, "a write after the lost events");
    let note = write["diagnostics"]["changed_outside"]["note"].as_str();
    assert!(note.is_some_and(|n| n.contains("overflowed")), "{write:#}");
    project.shutdown().await;
}

/// What a shell change broke in a file is reported with the next write while it is still
/// there, and not once the write itself fixed it (the report is about the files as they are).
#[tokio::test]
async fn a_break_from_outside_that_the_write_fixes_is_not_reported() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::Full);
    let Some(project) = setup.real("requests", &[]) else {
        return;
    };
    let auth = "src/requests/auth.py";
    let import = "from ._internal_utils import to_native_string\n";
    // A first write: the baselines and the watcher's subscription.
    let first = edit(
        &project,
        auth,
        "import hashlib\n",
        "import hashlib  # digests\n",
    )
    .await;
    assert_clean(&first, "a comment");
    let broken_by = |from: &str, to: &str| {
        format!("sed -i 's/^def {from}(/def {to}(/' src/requests/_internal_utils.py")
    };
    let about_auth = |result: &Value| -> Vec<String> {
        result["diagnostics"]["changed_outside"]["new"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["path"] == auth)
            .map(|d| d["message"].as_str().unwrap_or("").to_owned())
            .collect()
    };

    // The shell renames the function auth.py imports; the write fixes the import.
    sh(&project.ws, &broken_by("to_native_string", "to_native_str"));
    let fixed = edit(
        &project,
        auth,
        import,
        "from ._internal_utils import to_native_str as to_native_string\n",
    )
    .await;
    assert_clean(&fixed, "the write that fixes the import");
    assert!(
        fixed["diagnostics"]["changed_outside"]["files"]
            .as_array()
            .is_some_and(|f| f.contains(&json!("src/requests/_internal_utils.py"))),
        "{fixed:#}"
    );
    assert_eq!(about_auth(&fixed), Vec::<String>::new(), "{fixed:#}");

    // The shell renames it back: the alias is broken now, and a write that leaves it so
    // reports it as the tree's.
    sh(&project.ws, &broken_by("to_native_str", "to_native_string"));
    let left = edit(
        &project,
        auth,
        "import hashlib  # digests\n",
        "import hashlib\n",
    )
    .await;
    assert_eq!(new_of(&left), [], "{left:#}");
    assert!(
        about_auth(&left)
            .iter()
            .any(|m| m.contains("to_native_str")),
        "{left:#}"
    );
    project.shutdown().await;
}

/// An `ast_edit` proposal whose file the shell changes says so in the next result, before
/// anyone calls `resolve`; `resolve accept` then refuses it and writes nothing.
#[tokio::test]
async fn a_staged_edit_says_it_went_stale_before_resolve() {
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::Full);
    let Some(project) = setup.real("requests", &[]) else {
        return;
    };
    let staged = project
        .call(
            "ast_edit",
            json!({"pattern": "to_native_string($A)", "rewrite": "str($A)", "path": "src/requests", "language": "python"}),
        )
        .await;
    let edit_id = staged["edit_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{staged:#}"))
        .to_owned();
    let changed = "src/requests/auth.py";
    let mut text = project.read(changed);
    text.push_str("\n# touched by the shell\n");
    std::fs::write(project.ws.join(changed), text).unwrap();
    // The next result of any call says so (after the watcher's batch).
    let mut said = None;
    for _ in 0..20 {
        let answer = project
            .call("read", json!({"path": "README.md", "limit": 1}))
            .await;
        if let Some(notices) = answer["notices"].as_array() {
            said = notices
                .iter()
                .find(|n| n["kind"] == "stale_edit" && n["edit_id"] == json!(edit_id))
                .cloned();
            if said.is_some() {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let said = said.unwrap_or_else(|| panic!("no stale_edit notice for {edit_id}"));
    assert_eq!(said["paths"], json!([changed]), "{said:#}");
    let before = project.read("src/requests/sessions.py");
    let resolved = project
        .call("resolve", json!({"edit_id": edit_id, "action": "accept"}))
        .await;
    assert_eq!(resolved["error"]["kind"], "stale", "{resolved:#}");
    assert_eq!(project.read("src/requests/sessions.py"), before);
    project.shutdown().await;
}
