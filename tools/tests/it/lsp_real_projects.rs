//! Diagnostics on write on real third-party projects (installed by `cargo xtask peers`,
//! copied to a temporary folder), with the real language servers: a change of signature
//! reports the callers it broke in other files, an edit of a comment reports nothing new
//! although the files already had diagnostics, and undoing the break reports nothing new.
#![allow(clippy::unwrap_used)]

use crate::lsp_support;

use cc_test_support::require_peer;
use lsp_support::{cmark_compile_commands, Setup};
use serde_json::{json, Value};

/// The `(path, message)` of every new diagnostic of a write result.
fn new_diagnostics(result: &Value) -> Vec<(String, String)> {
    result["diagnostics"]["new"]
        .as_array()
        .unwrap_or_else(|| panic!("no diagnostics in {result:#}"))
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_owned(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn files_with_new(result: &Value) -> Vec<String> {
    let mut files: Vec<String> = new_diagnostics(result)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    files.sort();
    files.dedup();
    files
}

fn assert_answered(result: &Value) {
    let diagnostics = &result["diagnostics"];
    assert_eq!(diagnostics["pending"], json!([]), "{result:#}");
    assert_eq!(diagnostics["unchecked"], json!([]), "{result:#}");
}

async fn edit(project: &lsp_support::Project, path: &str, old: &str, new: &str) -> Value {
    let result = project
        .call(
            "edit",
            json!({"path": path, "old_text": old, "new_text": new}),
        )
        .await;
    assert!(result.get("error").is_none(), "{result:#}");
    result
}

#[tokio::test]
async fn go_pflag_signature_change_reports_the_callers_in_other_files() {
    if require_peer("gopls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("pflag", &[]) else {
        return;
    };
    let comment = edit(
        &project,
        "string_slice.go",
        "// -- stringSlice Value",
        "// -- stringSlice Value (a comment edit)",
    )
    .await;
    assert_answered(&comment);
    assert_eq!(new_diagnostics(&comment), [], "{comment:#}");

    let old = "func readAsCSV(val string) ([]string, error) {";
    let new = "func readAsCSV(val string, sep rune) ([]string, error) {";
    let broken = edit(&project, "string_slice.go", old, new).await;
    assert_answered(&broken);
    assert_eq!(
        files_with_new(&broken),
        [
            "bool_slice.go",
            "ip_slice.go",
            "ipnet_slice.go",
            "string_array.go",
            "string_slice.go"
        ],
        "{broken:#}"
    );
    let scope = &broken["diagnostics"]["scope"];
    assert!(
        scope["dependents_checked"].as_u64().unwrap() >= 4,
        "{scope}"
    );
    // Without the code graph, the dependents come from the word scan.
    assert_eq!(scope["dependents_from"], json!(["word_scan"]), "{scope}");

    let fixed = edit(&project, "string_slice.go", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

/// gopls reports `go vet` findings only for packages that type-check: while `Lookup`'s new
/// parameter breaks flag_test.go, its old finding (`fmt.Println arg list ends with
/// redundant newline`) is hidden, and the fix brings it back. It was there before the run
/// changed anything, so it is not new.
#[tokio::test]
async fn go_pflag_a_vet_finding_gopls_hides_while_broken_is_not_new_after_the_fix() {
    if require_peer("gopls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("pflag", &[]) else {
        return;
    };
    let old = "func (f *FlagSet) Lookup(name string) *Flag {";
    let new = "func (f *FlagSet) Lookup(name string, extra int) *Flag {";
    let broken = edit(&project, "flag.go", old, new).await;
    assert_answered(&broken);
    assert!(
        files_with_new(&broken).contains(&"flag_test.go".to_owned()),
        "{broken:#}"
    );
    let fixed = edit(&project, "flag.go", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    let scope = &fixed["diagnostics"]["scope"];
    assert!(
        scope["dependents"]
            .as_array()
            .unwrap()
            .contains(&json!("flag_test.go")),
        "{scope}"
    );
    project.shutdown().await;
}

#[tokio::test]
async fn python_requests_removing_a_default_reports_the_callers() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("requests", &[]) else {
        return;
    };
    // models.py has diagnostics of its own under the project's strict configuration: none
    // of them is new after a comment edit.
    let comment = edit(
        &project,
        "src/requests/models.py",
        "#: The set of HTTP status codes that indicate an automatically",
        "#: The set of HTTP status codes which indicate an automatically",
    )
    .await;
    assert_answered(&comment);
    assert_eq!(new_diagnostics(&comment), [], "{comment:#}");

    let old = "def to_native_string(string: str | bytes, encoding: str = \"ascii\") -> str:";
    let new = "def to_native_string(string: str | bytes, encoding: str) -> str:";
    let broken = edit(&project, "src/requests/_internal_utils.py", old, new).await;
    assert_answered(&broken);
    let missing: Vec<String> = new_diagnostics(&broken)
        .into_iter()
        .filter(|(_, message)| message.contains("Argument missing for parameter \"encoding\""))
        .map(|(path, _)| path)
        .collect();
    for caller in ["src/requests/auth.py", "src/requests/models.py"] {
        assert!(missing.iter().any(|p| p == caller), "{caller}: {broken:#}");
    }
    let fixed = edit(&project, "src/requests/_internal_utils.py", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn rust_semver_adding_a_parameter_reports_the_caller() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("semver", &[]) else {
        return;
    };
    let old = "pub(crate) fn matches_req(req: &VersionReq, ver: &Version) -> bool {";
    let new = "pub(crate) fn matches_req(req: &VersionReq, ver: &Version, strict: bool) -> bool {";
    let broken = edit(&project, "src/eval.rs", old, new).await;
    assert_answered(&broken);
    assert!(
        files_with_new(&broken).contains(&"src/lib.rs".to_owned()),
        "{broken:#}"
    );
    let fixed = edit(&project, "src/eval.rs", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn typescript_zod_adding_a_parameter_reports_the_callers() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("zod", &[]) else {
        return;
    };
    let old = "export function getEnumValues(entries: EnumLike): EnumValue[] {";
    let new = "export function getEnumValues(entries: EnumLike, strict: boolean): EnumValue[] {";
    let broken = edit(&project, "src/v4/core/util.ts", old, new).await;
    assert_answered(&broken);
    assert_eq!(
        files_with_new(&broken),
        ["src/v4/core/schemas.ts", "src/v4/core/to-json-schema.ts"],
        "{broken:#}"
    );
    // Compiled output and declaration files are not dependents of a TypeScript source.
    let dependents = broken["diagnostics"]["scope"]["dependents"].to_string();
    assert!(
        !dependents.contains(".js") && !dependents.contains(".d.ts"),
        "{dependents}"
    );
    let fixed = edit(&project, "src/v4/core/util.ts", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn c_cmark_header_change_reports_every_broken_source() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("cmarkgfm", &[]) else {
        return;
    };
    let database = cmark_compile_commands(&project.ws);
    std::fs::write(project.ws.join("compile_commands.json"), database).unwrap();
    let header = "third_party/cmark/src/cmark-gfm.h";
    let old = "CMARK_GFM_EXPORT void cmark_node_free(cmark_node *node);";
    let new = "CMARK_GFM_EXPORT void cmark_node_free(cmark_node *node, int deep);";
    let broken = edit(&project, header, old, new).await;
    assert_answered(&broken);
    let files = files_with_new(&broken);
    for source in [
        "third_party/cmark/src/blocks.c",
        "third_party/cmark/src/inlines.c",
        "third_party/cmark/src/node.c",
        "third_party/cmark/extensions/table.c",
    ] {
        assert!(files.iter().any(|f| f == source), "{source}: {broken:#}");
    }
    let fixed = edit(&project, header, new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// Renames across the whole workspace

async fn rename(
    project: &lsp_support::Project,
    file: &str,
    line_of: &str,
    symbol: &str,
    new_name: &str,
) -> Value {
    let line = project
        .read(file)
        .lines()
        .position(|l| l.contains(line_of))
        .unwrap_or_else(|| panic!("`{line_of}` is not in {file}"))
        + 1;
    let result = project
        .call(
            "lsp_rename",
            json!({"file": file, "line": line, "symbol": symbol, "new_name": new_name}),
        )
        .await;
    assert!(result.get("error").is_none(), "{result:#}");
    result
}

/// Files under `dir` (of `extensions`) that still use `name` in code (as a whole word,
/// comments and strings aside: a crude check independent of the tool's own scan).
fn code_mentions(root: &std::path::Path, extensions: &[&str], name: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !file_name.starts_with('.') {
                    stack.push(path);
                }
                continue;
            }
            if !extensions.iter().any(|e| file_name.ends_with(e)) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (index, line) in text.lines().enumerate() {
                let trimmed = line.trim_start();
                if trimmed.starts_with('*') || trimmed.starts_with("/*") {
                    continue;
                }
                let code = line.split("//").next().unwrap_or("");
                let code = code.split('#').next().unwrap_or("");
                let is_word = |c: char| c.is_alphanumeric() || c == '_';
                let hit = code.match_indices(name).any(|(at, _)| {
                    !code[..at].chars().next_back().is_some_and(is_word)
                        && !code[at + name.len()..].chars().next().is_some_and(is_word)
                        && !code[..at].contains(['"', '\''])
                });
                if hit {
                    let shown = path.strip_prefix(root).unwrap().display().to_string();
                    found.push(format!("{shown}:{}", index + 1));
                }
            }
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn python_requests_rename_reaches_the_tests_outside_the_pyright_include() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("requests", &[]) else {
        return;
    };
    // The project's environment as `pip install -e .` leaves it: the tests import the
    // workspace's package. (`[tool.pyright] include = ["src/requests"]` leaves them out of
    // the server's project.)
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(&project.ws)
        .status()
        .unwrap();
    assert!(made.success());
    let site = std::fs::read_dir(project.ws.join(".venv/lib"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("site-packages");
    std::fs::write(
        site.join("requests_src.pth"),
        format!("{}\n", project.ws.join("src").display()),
    )
    .unwrap();

    let result = rename(
        &project,
        "src/requests/_internal_utils.py",
        "def to_native_string(",
        "to_native_string",
        "to_native_str",
    )
    .await;
    assert_eq!(result["complete"], true, "{result:#}");
    let files: Vec<&str> = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"tests/test_utils.py"), "{result:#}");
    assert_eq!(
        code_mentions(&project.ws, &[".py"], "to_native_string"),
        Vec::<String>::new()
    );
    // The comment that names it is listed, not changed.
    assert_eq!(result["leftovers"]["comments_total"], 1, "{result:#}");
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn python_requests_rename_reaches_the_tests_through_the_src_layout() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    // No environment holds this copy: the tests' `import requests` is found in `src/` because
    // the settings sent keep pyright's `autoSearchPaths` (issue 31; before, the tests' uses
    // went to a bundled stub and were left over). Nothing is left in code, the rename is
    // complete and the one comment naming it is listed.
    let Some(project) = Setup::default().real("requests", &[]) else {
        return;
    };
    let result = rename(
        &project,
        "src/requests/_internal_utils.py",
        "def to_native_string(",
        "to_native_string",
        "to_native_str",
    )
    .await;
    assert_eq!(result["complete"], true, "{result:#}");
    assert_eq!(result["leftovers"]["code_total"], 0, "{result:#}");
    assert_eq!(result["leftovers"]["comments_total"], 1, "{result:#}");
    let files: Vec<&str> = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"tests/test_utils.py"), "{result:#}");
    assert_eq!(
        code_mentions(&project.ws, &[".py"], "to_native_string"),
        Vec::<String>::new()
    );
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn typescript_zod_rename_reaches_files_outside_the_tsconfig_include() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let tsconfig = r#"{"compilerOptions": {"strict": true, "target": "es2022", "module": "esnext",
        "moduleResolution": "bundler", "noEmit": true, "skipLibCheck": true},
     "include": ["src/v4/core"], "exclude": ["src/v4/core/tests"]}"#;
    let Some(project) = Setup::default().real("zod", &[("tsconfig.json", tsconfig)]) else {
        return;
    };
    let result = rename(
        &project,
        "src/v4/core/util.ts",
        "export function assignProp",
        "assignProp",
        "assignProperty",
    )
    .await;
    assert_eq!(result["complete"], true, "{result:#}");
    let files: Vec<&str> = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "src/v4/classic/schemas.ts",
            "src/v4/core/util.ts",
            "src/v4/mini/schemas.ts"
        ],
        "{result:#}"
    );
    assert_eq!(
        code_mentions(&project.ws.join("src"), &[".ts"], "assignProp"),
        Vec::<String>::new()
    );
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn go_pflag_rename_is_complete() {
    if require_peer("gopls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("pflag", &[]) else {
        return;
    };
    let result = rename(
        &project,
        "string_slice.go",
        "func readAsCSV(",
        "readAsCSV",
        "readCSV",
    )
    .await;
    assert_eq!(result["complete"], true, "{result:#}");
    assert_eq!(result["files"].as_array().unwrap().len(), 5, "{result:#}");
    assert_eq!(
        code_mentions(&project.ws, &[".go"], "readAsCSV"),
        Vec::<String>::new()
    );
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn rust_semver_rename_lists_the_code_behind_a_disabled_feature() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("semver", &[]) else {
        return;
    };
    let result = rename(
        &project,
        "src/lib.rs",
        "pub struct Comparator {",
        "Comparator",
        "Constraint",
    )
    .await;
    // src/serde.rs is compiled only with the `serde` feature: rust-analyzer cannot rename
    // there, and the result says why, per place.
    assert_eq!(result["complete"], false, "{result:#}");
    let code = result["leftovers"]["code"].as_array().unwrap();
    assert!(!code.is_empty(), "{result:#}");
    for leftover in code {
        assert_eq!(leftover["path"], "src/serde.rs", "{result:#}");
        assert!(
            leftover["why"]
                .as_str()
                .unwrap()
                .contains("feature = \"serde\" is disabled"),
            "{result:#}"
        );
    }
    // The tests and doc comments: tests renamed, docs listed.
    let files = result["files"].to_string();
    assert!(files.contains("tests/util/mod.rs"), "{files}");
    assert!(
        result["leftovers"]["comments_total"].as_u64().unwrap() >= 2,
        "{result:#}"
    );
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn c_cmark_rename_across_the_header_and_its_sources_reports_no_false_errors() {
    if require_peer("clangd-19").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("cmarkgfm", &[]) else {
        return;
    };
    let database = cmark_compile_commands(&project.ws);
    std::fs::write(project.ws.join("compile_commands.json"), database).unwrap();
    let result = rename(
        &project,
        "third_party/cmark/src/cmark-gfm.h",
        "void cmark_node_free(cmark_node *node);",
        "cmark_node_free",
        "cmark_node_release",
    )
    .await;
    assert_eq!(result["complete"], true, "{result:#}");
    assert_eq!(
        code_mentions(
            &project.ws.join("third_party"),
            &[".c", ".h"],
            "cmark_node_free"
        ),
        Vec::<String>::new()
    );
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// Fast successive writes: the answer is for the last version written

/// Writes five versions of `file` in a burst, each with its own error (`broken(i)`), every
/// one checked without waiting for the previous check; the last check must report exactly
/// the last version's error.
async fn burst(
    project: &lsp_support::Project,
    file: &str,
    broken: impl Fn(usize) -> (String, String),
) {
    let path = project.ws.join(file);
    let mut checks = Vec::new();
    let mut needles = Vec::new();
    for version in 0..5 {
        let (text, needle) = broken(version);
        needles.push(needle);
        std::fs::write(&path, text).unwrap();
        let pool = project.pool.clone();
        let path = path.clone();
        checks.push(tokio::spawn(
            async move { pool.check_files(&[path], &[]).await },
        ));
    }
    let mut last = None;
    for check in checks {
        last = Some(check.await.unwrap());
    }
    let last = last.unwrap();
    let messages: Vec<String> = match &last[0].outcome {
        cc_lsp_client::CheckOutcome::Checked { diagnostics, .. } => {
            diagnostics.iter().map(|d| d.message.clone()).collect()
        }
        other => panic!("{other:?}"),
    };
    let all = messages.join("\n");
    assert!(
        all.contains(&needles[4]),
        "the last version's error is missing: {all}"
    );
    for older in &needles[..4] {
        assert!(
            !all.contains(older.as_str()),
            "{older} is from an older version: {all}"
        );
    }
}

#[tokio::test]
async fn typescript_zod_a_burst_of_writes_answers_for_the_last() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("zod", &[]) else {
        return;
    };
    let file = "src/v4/core/util.ts";
    let original = project.read(file);
    burst(&project, file, |version| {
        let name = format!("missingName{version}");
        (
            format!("{original}\nexport const burst{version} = {name};\n"),
            format!("Cannot find name '{name}'"),
        )
    })
    .await;
    project.shutdown().await;
}

#[tokio::test]
async fn rust_semver_a_burst_of_writes_answers_for_the_last() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("semver", &[]) else {
        return;
    };
    let file = "src/eval.rs";
    let original = project.read(file);
    burst(&project, file, |version| {
        let name = format!("missing_name_{version}");
        (
            format!("{original}\npub(crate) fn burst() -> u32 {{ {name} }}\n"),
            format!("cannot find value `{name}`"),
        )
    })
    .await;
    project.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// The project checker sees what the build sees

#[tokio::test]
async fn rust_semver_checker_sees_a_broken_integration_test() {
    if require_peer("cargo").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("semver", &[]) else {
        return;
    };
    let test = project.read("tests/test_version.rs");
    std::fs::write(
        project.ws.join("tests/test_version.rs"),
        format!("{test}\n#[test]\nfn broken() {{\n    let x: u32 = \"not a number\";\n    let _ = x;\n}}\n"),
    )
    .unwrap();
    let checked = project
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "rust"}))
        .await;
    assert!(checked.get("error").is_none(), "{checked:#}");
    let errors: Vec<&Value> = checked["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == "tests/test_version.rs" && d["severity"] == "error")
        .collect();
    assert!(!errors.is_empty(), "{checked:#}");
    assert!(errors.iter().any(|d| d["code"] == "E0308"), "{checked:#}");
}

#[tokio::test]
async fn go_pflag_checker_counts_a_compile_error_as_an_error() {
    if require_peer("go").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("pflag", &[]) else {
        return;
    };
    let text = project.read("string_slice.go");
    std::fs::write(
        project.ws.join("string_slice.go"),
        text.replacen("func readAsCSV(val string) ([]string, error) {", "func readAsCSV(val string) ([]string, error) {\n\tvar broken int = \"s\"\n\t_ = broken", 1),
    )
    .unwrap();
    let checked = project
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "go"}))
        .await;
    assert!(checked.get("error").is_none(), "{checked:#}");
    let found = checked["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "string_slice.go")
        .unwrap_or_else(|| panic!("{checked:#}"));
    assert_eq!(found["severity"], "error", "{checked:#}");
}

#[tokio::test]
async fn go_pflag_dependents_come_from_the_graph_when_it_is_open() {
    if require_peer("gopls").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::Full);
    let Some(project) = setup.real("pflag", &[]) else {
        return;
    };
    // The graph's own answer: the files that call readAsCSV.
    let callers = project
        .call(
            "graph",
            json!({"action": "callers", "file": "string_slice.go", "line": 22, "symbol": "readAsCSV"}),
        )
        .await;
    let mut calling: Vec<String> = callers["callers"]
        .as_array()
        .unwrap_or_else(|| panic!("{callers:#}"))
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_owned())
        .filter(|p| p != "string_slice.go")
        .collect();
    calling.sort();
    calling.dedup();
    assert_eq!(
        calling,
        [
            "bool_slice.go",
            "ip_slice.go",
            "ipnet_slice.go",
            "string_array.go"
        ]
    );

    let old = "func readAsCSV(val string) ([]string, error) {";
    let new = "func readAsCSV(val string, sep rune) ([]string, error) {";
    let broken = edit(&project, "string_slice.go", old, new).await;
    assert_answered(&broken);
    let scope = &broken["diagnostics"]["scope"];
    assert_eq!(scope["dependents_from"], json!(["graph"]), "{scope}");
    let mut dependents: Vec<String> = scope["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect();
    dependents.sort();
    // The callers the graph knows, and example_test.go, which imports the package (an
    // external test package) without naming readAsCSV: the word scan would not find it.
    let mut expected = calling.clone();
    expected.push("example_test.go".to_owned());
    expected.sort();
    assert_eq!(dependents, expected, "{scope}");
    assert_eq!(
        files_with_new(&broken),
        [
            "bool_slice.go",
            "ip_slice.go",
            "ipnet_slice.go",
            "string_array.go",
            "string_slice.go"
        ],
        "{broken:#}"
    );
    // The write updated the graph: the callers are still there, the file is not stale.
    let after = project
        .call(
            "graph",
            json!({"action": "callers", "file": "string_slice.go", "line": 22, "symbol": "readAsCSV"}),
        )
        .await;
    assert_eq!(after["index"]["updated"], json!([]), "{after:#}");
    assert_eq!(after["total"], callers["total"]);
    let fixed = edit(&project, "string_slice.go", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

/// `graph` with `verify: true`: every edge of `callers` and `impact` checked by gopls.
#[tokio::test]
async fn go_pflag_graph_edges_are_verified_by_gopls() {
    if require_peer("gopls").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::Plan);
    let Some(project) = setup.real("pflag", &[]) else {
        return;
    };
    let output = project
        .registry
        .call(
            "graph",
            json!({"action": "callers", "file": "flag.go", "line": 848, "symbol": "AddFlag", "verify": true}),
        )
        .await
        .unwrap();
    let callers = &output.value;
    assert_eq!(callers["total"], 3, "{callers:#}");
    assert_eq!(
        callers["verification"]["confirmed"],
        3,
        "{}",
        output.render_text()
    );
    for caller in callers["callers"].as_array().unwrap() {
        assert_eq!(caller["verified"], "confirmed", "{caller}");
    }
    assert!(output.render_text().contains(
        "verified through the language server's references: 3 confirmed, 0 refuted, 0 unverifiable"
    ));

    let output = project
        .registry
        .call(
            "graph",
            json!({"action": "impact", "file": "string_slice.go", "line": 22, "symbol": "readAsCSV", "depth": 2, "verify": true}),
        )
        .await
        .unwrap();
    let impact = &output.value;
    let verification = &impact["verification"];
    let listed = impact["listed"].as_u64().unwrap();
    assert!(listed >= 4, "{}", output.render_text());
    assert_eq!(
        verification["confirmed"].as_u64().unwrap()
            + verification["unverifiable"].as_u64().unwrap(),
        listed,
        "{}",
        output.render_text()
    );
    assert_eq!(verification["refuted"], 0, "{}", output.render_text());
    // Every depth-1 dependent (the callers of readAsCSV) is confirmed.
    for dependent in impact["levels"][0]["dependents"].as_array().unwrap() {
        assert_eq!(dependent["verified"], "confirmed", "{dependent}");
    }
    project.shutdown().await;
}

/// `graph` `callers` with `verify: true` on requests, checked by basedpyright: every call is
/// confirmed, the two in the tests too (their `import requests` is found in `src/`: the
/// settings sent keep `autoSearchPaths`, issue 31), none refuted.
#[tokio::test]
async fn python_requests_graph_callers_are_verified_by_basedpyright() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::ReadonlySubagent);
    let Some(project) = setup.real("requests", &[]) else {
        return;
    };
    let output = project
        .registry
        .call(
            "graph",
            json!({"action": "callers", "file": "src/requests/api.py", "line": 24, "symbol": "request", "verify": true}),
        )
        .await
        .unwrap();
    let callers = &output.value;
    let text = output.render_text();
    assert_eq!(callers["total"], 9, "{text}");
    assert_eq!(callers["verification"]["refuted"], 0, "{text}");
    for caller in callers["callers"].as_array().unwrap() {
        assert_eq!(caller["verified"], "confirmed", "{caller}");
    }
    assert!(
        text.contains("9 confirmed, 0 refuted, 0 unverifiable"),
        "{text}"
    );
    project.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// PHP (intelephense), on Debian's PHP libraries: their other dependencies are not beside them,
// so every file already has diagnostics about names it cannot find; none is ever new. Debian
// leaves out the `composer.json` each library has upstream (the php family's project marker):
// the tests put a minimal one back.

const COMPOSER_JSON: (&str, &str) = ("composer.json", "{\"name\": \"upstream/library\"}\n");

#[tokio::test]
async fn php_symfony_console_signature_change_reports_the_callers_in_other_files() {
    if require_peer("intelephense").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("symfony-console", &[COMPOSER_JSON]) else {
        return;
    };
    let comment = edit(
        &project,
        "Formatter/OutputFormatter.php",
        "     * Escapes \"<\" and \">\" special chars in given text.",
        "     * Escapes \"<\" and \">\" special chars in given text (a comment edit).",
    )
    .await;
    assert_answered(&comment);
    assert_eq!(new_diagnostics(&comment), [], "{comment:#}");

    let old = "public static function escape(string $text)";
    let new = "public static function escape(string $text, int $width)";
    let broken = edit(&project, "Formatter/OutputFormatter.php", old, new).await;
    assert_answered(&broken);
    assert_eq!(
        files_with_new(&broken),
        [
            "Application.php",
            "Descriptor/TextDescriptor.php",
            "Helper/FormatterHelper.php",
            "Helper/SymfonyQuestionHelper.php",
            "Style/SymfonyStyle.php",
        ],
        "{broken:#}"
    );
    assert!(
        new_diagnostics(&broken)
            .iter()
            .all(|(_, message)| message.contains("arguments")),
        "{broken:#}"
    );

    let fixed = edit(&project, "Formatter/OutputFormatter.php", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn php_symfony_console_rename_is_built_from_references_and_complete() {
    if require_peer("intelephense").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("symfony-console", &[COMPOSER_JSON]) else {
        return;
    };
    let result = rename(
        &project,
        "Formatter/OutputFormatter.php",
        "public static function escapeTrailingBackslash(",
        "escapeTrailingBackslash",
        "escapeFinalBackslash",
    )
    .await;
    assert_eq!(result["built_from"], "references", "{result:#}");
    assert_eq!(result["complete"], true, "{result:#}");
    assert_eq!(
        code_mentions(&project.ws, &[".php"], "escapeTrailingBackslash"),
        Vec::<String>::new()
    );
    assert!(
        code_mentions(&project.ws, &[".php"], "escapeFinalBackslash").len() >= 2,
        "{result:#}"
    );
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn php_monolog_signature_change_reports_the_callers_in_other_files() {
    if require_peer("intelephense").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("monolog", &[COMPOSER_JSON]) else {
        return;
    };
    let comment = edit(
        &project,
        "Utils.php",
        "    public static function getClass(object $object): string",
        "    // The class of an object, anonymous classes by their parent (a comment edit).\n    public static function getClass(object $object): string",
    )
    .await;
    assert_answered(&comment);
    assert_eq!(new_diagnostics(&comment), [], "{comment:#}");

    let old = "public static function getClass(object $object): string";
    let new = "public static function getClass(object $object, bool $short): string";
    let broken = edit(&project, "Utils.php", old, new).await;
    assert_answered(&broken);
    assert_eq!(
        files_with_new(&broken),
        [
            "ErrorHandler.php",
            "Formatter/LineFormatter.php",
            "Formatter/MongoDBFormatter.php",
            "Formatter/NormalizerFormatter.php",
            "Processor/PsrLogMessageProcessor.php",
        ],
        "{broken:#}"
    );

    let fixed = edit(&project, "Utils.php", new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

/// The other two of the four checks on monolog: the first `references` finds every caller
/// (intelephense's index is complete before it answers), and a rename built from them leaves
/// no use behind.
#[tokio::test]
async fn php_monolog_first_references_are_complete_and_the_rename_leaves_nothing() {
    if require_peer("intelephense").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("monolog", &[COMPOSER_JSON]) else {
        return;
    };
    let definition = "public static function getClass(object $object): string";
    let line = project
        .read("Utils.php")
        .lines()
        .position(|l| l.contains(definition))
        .unwrap()
        + 1;
    let found = project
        .lsp(json!({"action": "references", "file": "Utils.php", "line": line, "symbol": "getClass"}))
        .await;
    assert!(found.get("incomplete").is_none(), "{found:#}");
    // The definition's own file may be listed (the declaration): only the callers count.
    let mut files: Vec<String> = found["locations"]
        .as_array()
        .unwrap_or_else(|| panic!("{found:#}"))
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .filter(|path| path != "Utils.php")
        .collect();
    files.sort();
    files.dedup();
    assert_eq!(
        files,
        [
            "ErrorHandler.php",
            "Formatter/LineFormatter.php",
            "Formatter/MongoDBFormatter.php",
            "Formatter/NormalizerFormatter.php",
            "Processor/PsrLogMessageProcessor.php",
        ],
        "{found:#}"
    );

    let result = rename(&project, "Utils.php", definition, "getClass", "classOf").await;
    assert_eq!(result["complete"], true, "{result:#}");
    assert_eq!(
        code_mentions(&project.ws, &[".php"], "getClass"),
        Vec::<String>::new(),
        "{result:#}"
    );
    // The definition and the seven calls.
    let edits: u64 = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["edits"].as_u64().unwrap())
        .sum();
    assert_eq!(edits, 1 + 7, "{result:#}");
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn php_monolog_checker_reports_a_syntax_error() {
    if require_peer("php").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("monolog", &[COMPOSER_JSON]) else {
        return;
    };
    let text = project.read("Utils.php");
    std::fs::write(
        project.ws.join("Utils.php"),
        text.replacen(
            "public static function getClass(object $object): string",
            "public static function getClass(object $object): string string",
            1,
        ),
    )
    .unwrap();
    let checked = project
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "php"}))
        .await;
    assert!(checked.get("error").is_none(), "{checked:#}");
    let found: Vec<&Value> = checked["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    assert_eq!(found.len(), 1, "{checked:#}");
    assert_eq!(found[0]["path"], "Utils.php", "{checked:#}");
}

// ---------------------------------------------------------------------------------------------
// Java and Kotlin (JDT LS with karellen's Kotlin search) on expo-modules-core's Android
// sources: its Gradle build is never run, and Android's and React Native's packages are not
// on disk, so every file already has unresolved imports.

const EXPO_JAVA: &str = "android/src/main/java/expo/modules/core/ModuleRegistry.java";
const EXPO_JAVA_CALLER: &str =
    "android/src/main/java/expo/modules/adapters/react/ModuleRegistryAdapter.java";
const EXPO_KOTLIN_CALLER: &str =
    "android/src/main/java/expo/modules/adapters/react/permissions/PermissionsService.kt";

#[tokio::test]
async fn java_expo_signature_change_reports_the_callers_in_other_files() {
    if require_peer("jdtls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("expo-modules-core", &[]) else {
        return;
    };
    let comment = edit(
        &project,
        EXPO_JAVA,
        "public class ModuleRegistry {",
        "/** The registry of a React context's modules (a comment edit). */\npublic class ModuleRegistry {",
    )
    .await;
    assert_answered(&comment);
    assert_eq!(new_diagnostics(&comment), [], "{comment:#}");

    let old = "public <T> T getModule(Class<T> interfaceClass)";
    let new = "public <T> T getModuleOf(Class<T> interfaceClass)";
    let broken = edit(&project, EXPO_JAVA, old, new).await;
    assert_answered(&broken);
    // The Java caller is reported by JDT LS, the Kotlin callers by the Kotlin compiler (JDT
    // LS reads Kotlin for search only), and no unresolved import comes back as new.
    assert_eq!(
        files_with_new(&broken),
        [
            EXPO_JAVA_CALLER,
            EXPO_KOTLIN_CALLER,
            "android/src/main/java/expo/modules/kotlin/AppContext.kt"
        ],
        "{broken:#}"
    );
    assert!(
        new_diagnostics(&broken)
            .iter()
            .all(|(_, message)| message.contains("getModule")),
        "{broken:#}"
    );

    let fixed = edit(&project, EXPO_JAVA, new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    project.shutdown().await;
}

#[tokio::test]
async fn java_expo_rename_changes_the_java_code_and_lists_the_kotlin_callers_left() {
    if require_peer("jdtls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("expo-modules-core", &[]) else {
        return;
    };
    let result = rename(
        &project,
        EXPO_JAVA,
        "public <T> T getModule(Class<T> interfaceClass)",
        "getModule",
        "findModule",
    )
    .await;
    // No Java code names it any more; the Kotlin uses JDT LS cannot tell apart from other
    // `getModule`s are listed, never claimed done.
    assert_eq!(
        code_mentions(&project.ws.join("android"), &[".java"], "getModule"),
        Vec::<String>::new(),
        "{result:#}"
    );
    assert_eq!(result["complete"], false, "{result:#}");
    let text = serde_json::to_string(&result).unwrap();
    assert!(text.contains("PermissionsService.kt"), "{result:#}");
    assert!(text.contains("does not compile .kt files"), "{result:#}");
    assert_answered(&result);
    // The Kotlin compiler, which checks the Kotlin files on write, reports the uses left
    // there: nothing else is new.
    let new = new_diagnostics(&result);
    assert!(!new.is_empty(), "{result:#}");
    assert!(
        new.iter().all(|(path, message)| path.ends_with(".kt")
            && message.contains("unresolved reference 'getModule'")),
        "{result:#}"
    );
    project.shutdown().await;
}

const EXPO_KOTLIN: &str = "android/src/main/java/expo/modules/kotlin/types/ArrayTypeConverter.kt";
const EXPO_KOTLIN_SAME_PACKAGE_CALLER: &str =
    "android/src/main/java/expo/modules/kotlin/types/TypeConverterProvider.kt";

/// Kotlin is compiled on write by JetBrains' compiler kept warm (JDT LS reads Kotlin for
/// navigation only): a signature change reports the caller in another file, a comment edit
/// and the fix report nothing new, and no missing Android package comes back as new.
#[tokio::test]
async fn kotlin_expo_signature_change_reports_the_callers_in_other_files() {
    if require_peer("jdtls").is_none() || require_peer("kotlinc").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("expo-modules-core", &[]) else {
        return;
    };
    let comment = edit(
        &project,
        EXPO_KOTLIN,
        "internal fun isPrimitiveArray(typeDescriptor: TypeDescriptor): Boolean {",
        "/** Whether the array holds primitives (a comment edit). */\ninternal fun isPrimitiveArray(typeDescriptor: TypeDescriptor): Boolean {",
    )
    .await;
    assert_answered(&comment);
    assert_eq!(new_diagnostics(&comment), [], "{comment:#}");
    assert!(
        comment["diagnostics"]["scope"]["files_checked"]
            .as_u64()
            .unwrap()
            >= 1,
        "{comment:#}"
    );

    let old = "internal fun isPrimitiveArray(typeDescriptor: TypeDescriptor): Boolean {";
    let new =
        "internal fun isPrimitiveArray(typeDescriptor: TypeDescriptor, strict: Boolean): Boolean {";
    let broken = edit(&project, EXPO_KOTLIN, old, new).await;
    assert_answered(&broken);
    assert_eq!(
        files_with_new(&broken),
        [EXPO_KOTLIN_SAME_PACKAGE_CALLER],
        "{broken:#}"
    );
    assert!(
        new_diagnostics(&broken)
            .iter()
            .all(|(_, message)| message.contains("strict")),
        "{broken:#}"
    );
    // The caller's own list says so too, with the missing packages folded into a note.
    let listed = project
        .lsp(json!({"action": "diagnostics", "file": EXPO_KOTLIN_SAME_PACKAGE_CALLER}))
        .await;
    assert!(listed.get("error").is_none(), "{listed:#}");
    let messages = serde_json::to_string(&listed["diagnostics"]).unwrap();
    assert!(messages.contains("strict"), "{listed:#}");
    // `status` says what checks Kotlin files.
    let status = project.lsp(json!({"action": "status"})).await;
    assert!(
        serde_json::to_string(&status)
            .unwrap()
            .contains("Kotlin files are compiled on write by kotlinc (JVM pid"),
        "{status:#}"
    );

    let fixed = edit(&project, EXPO_KOTLIN, new, old).await;
    assert_answered(&fixed);
    assert_eq!(new_diagnostics(&fixed), [], "{fixed:#}");
    // The compiler's JVM is the run's: `shutdown` checks that it is gone with it.
    let compilers = project.kotlin_compiler_pids();
    assert_eq!(compilers.len(), 1, "{compilers:?}");
    project.shutdown().await;
}

#[tokio::test]
async fn kotlin_expo_first_references_reach_kotlin_by_name_and_a_kotlin_rename_is_the_compilers() {
    if require_peer("jdtls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("expo-modules-core", &[]) else {
        return;
    };
    // The first references from Java reach the Kotlin callers, marked as found by name.
    let line = project
        .read(EXPO_JAVA)
        .lines()
        .position(|l| l.contains("public <T> T getModule("))
        .unwrap()
        + 1;
    let found = project
        .lsp(
            json!({"action": "references", "file": EXPO_JAVA, "line": line, "symbol": "getModule"}),
        )
        .await;
    let text = serde_json::to_string(&found).unwrap();
    assert!(text.contains(EXPO_JAVA_CALLER), "{found:#}");
    assert!(text.contains(EXPO_KOTLIN_CALLER), "{found:#}");
    assert_eq!(found["by_name"], json!(["kt"]), "{found:#}");

    // A name declared three times (overloads): refused, nothing changed, with the reason.
    let registry = "android/src/main/java/expo/modules/kotlin/ModuleRegistry.kt";
    let before = project.read(registry);
    let line = before
        .lines()
        .position(|l| l.contains("fun getModuleHolder(name: String)"))
        .unwrap()
        + 1;
    let refused = project
        .call(
            "lsp_rename",
            json!({"file": registry, "line": line, "symbol": "getModuleHolder", "new_name": "findModuleHolder"}),
        )
        .await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nothing was changed"), "{refused:#}");
    assert!(message.contains("is declared 3 times"), "{refused:#}");
    assert_eq!(project.read(registry), before);

    // A Kotlin declaration declared once: renamed with the uses the Kotlin compiler resolves
    // to it (JDT LS cannot rename Kotlin), complete, and the write's compile finds nothing new.
    let result = rename(
        &project,
        EXPO_KOTLIN,
        "internal fun isPrimitiveArray(",
        "isPrimitiveArray",
        "isArrayOfPrimitives",
    )
    .await;
    assert_eq!(result["built_from"], "kotlin_compiler", "{result:#}");
    assert_eq!(result["complete"], true, "{result:#}");
    assert_eq!(
        code_mentions(
            &project.ws.join("android"),
            &[".kt", ".java"],
            "isPrimitiveArray"
        ),
        Vec::<String>::new(),
        "{result:#}"
    );
    assert!(
        project
            .read(EXPO_KOTLIN_SAME_PACKAGE_CALLER)
            .contains("isArrayOfPrimitives(typeDescriptor)"),
        "{result:#}"
    );
    assert_answered(&result);
    assert_eq!(new_diagnostics(&result), [], "{result:#}");
    project.shutdown().await;
}

/// The `-data` folder a running JDT LS was given.
fn jdtls_data_dir(project: &lsp_support::Project) -> String {
    let pids = project.server_pids();
    assert_eq!(pids.len(), 1, "one server: {pids:?}");
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", pids[0])).unwrap();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let at = args
        .iter()
        .position(|a| a == "-data")
        .expect("a -data argument");
    args[at + 1].clone()
}

#[tokio::test]
async fn java_two_runs_on_one_root_do_not_share_a_jdtls_workspace() {
    if require_peer("jdtls").is_none() {
        return;
    }
    let Some(first) = Setup::default().real("expo-modules-core", &[]) else {
        return;
    };
    let second = Setup::default().beside(&first);
    for project in [&first, &second] {
        let result = project
            .lsp(json!({"action": "symbols", "file": EXPO_JAVA}))
            .await;
        assert!(result.get("error").is_none(), "{result:#}");
        assert!(
            serde_json::to_string(&result)
                .unwrap()
                .contains("getModule"),
            "{result:#}"
        );
    }
    let (a, b) = (jdtls_data_dir(&first), jdtls_data_dir(&second));
    assert_ne!(a, b);
    // Outside the project, and never inside the tree it reads.
    for dir in [&a, &b] {
        assert!(!dir.starts_with(first.ws.to_str().unwrap()), "{dir}");
    }
    second.shutdown().await;
    first.shutdown().await;
}

#[tokio::test]
async fn java_expo_packages_not_on_disk_are_told_once_and_a_typo_import_is_new() {
    if require_peer("jdtls").is_none() {
        return;
    }
    let Some(project) = Setup::default().real("expo-modules-core", &[]) else {
        return;
    };
    // The file's own list: React Native's and Android's imports are one note, not errors.
    let listed = project
        .lsp(json!({"action": "diagnostics", "file": EXPO_JAVA_CALLER}))
        .await;
    let missing = &listed["missing_dependencies"];
    assert!(missing["diagnostics"].as_u64().unwrap() >= 20, "{listed:#}");
    let packages = missing["packages"].to_string();
    assert!(packages.contains("com.facebook.react.bridge"), "{listed:#}");
    assert!(
        listed["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| !d["message"]
                .as_str()
                .unwrap()
                .contains("import com.facebook.react.bridge")),
        "{listed:#}"
    );

    // A new import of a package not on disk is told as such; a typo of an own class is new.
    let written = edit(
        &project,
        EXPO_JAVA_CALLER,
        "import java.util.ArrayList;",
        "import java.util.ArrayList;\nimport android.widget.Toast;\nimport expo.modules.core.ModuleRegistyr;",
    )
    .await;
    assert_answered(&written);
    let new = new_diagnostics(&written);
    assert_eq!(new.len(), 1, "{written:#}");
    assert!(new[0].1.contains("ModuleRegistyr"), "{written:#}");
    let told = written["diagnostics"]["missing_dependencies"]["packages"].to_string();
    assert!(told.contains("android.widget"), "{written:#}");
    // Told once: the next write names no package again.
    let again = edit(
        &project,
        EXPO_JAVA_CALLER,
        "import expo.modules.core.ModuleRegistyr;\n",
        "",
    )
    .await;
    assert_answered(&again);
    assert_eq!(new_diagnostics(&again), [], "{again:#}");
    assert!(
        again["diagnostics"].get("missing_dependencies").is_none(),
        "{again:#}"
    );
    project.shutdown().await;
}

#[tokio::test]
async fn java_expo_checker_compiles_java_and_kotlin_and_tells_missing_packages_once() {
    if require_peer("jdtls").is_none()
        || require_peer("javac").is_none()
        || require_peer("kotlinc").is_none()
    {
        return;
    }
    let Some(project) = Setup::default().real("expo-modules-core", &[]) else {
        return;
    };
    let check = || async {
        let result = project
            .lsp(json!({"action": "diagnostics", "file": "*", "language": "java"}))
            .await;
        assert!(result.get("error").is_none(), "{result:#}");
        result
    };
    let errors = |result: &Value| result["checks"][0]["errors"].as_u64().unwrap();
    let before = check().await;
    let row = &before["checks"][0];
    let command = row["command"].as_str().unwrap();
    assert!(
        command.starts_with("javac") && command.contains("; kotlinc"),
        "{before:#}"
    );
    let packages = row["missing_dependencies"]["packages"].to_string();
    assert!(packages.contains("androidx.annotation"), "{before:#}");
    assert!(
        row["note"].as_str().unwrap().contains("cannot be found"),
        "{before:#}"
    );
    // No unresolved import is listed: each is in the note.
    assert!(
        before["diagnostics"].as_array().unwrap().iter().all(|d| {
            let message = d["message"].as_str().unwrap();
            !message.contains("does not exist") && !message.contains("reference 'android'")
        }),
        "{before:#}"
    );
    // A broken Kotlin caller adds its error (with this many errors from the missing
    // libraries the list is cut, so the count tells; a broken Java caller is the write
    // diagnostics' test above). The shell breaks it, as an agent's command would: the
    // checker reads the tree as it is, and the `edit` tool's own checks (JDT LS and the
    // Kotlin compiler, a minute on this project) are other tests' business.
    let converter = "android/src/main/java/expo/modules/kotlin/types/ArrayTypeConverter.kt";
    let text = project.read(converter);
    let signature = "internal fun isPrimitiveArray(typeDescriptor: TypeDescriptor): Boolean {";
    assert!(text.contains(signature), "{converter} changed upstream");
    std::fs::write(
        project.ws.join(converter),
        text.replace(
            signature,
            "internal fun isPrimitiveArray(typeDescriptor: TypeDescriptor, strict: Boolean): Boolean {",
        ),
    )
    .unwrap();
    let kotlin_broken = check().await;
    assert!(
        errors(&kotlin_broken) > errors(&before),
        "{kotlin_broken:#}"
    );
    project.shutdown().await;
}

/// The graph reads PHP: `callers` of a static method across namespaces (`use` imports), each
/// call confirmed by intelephense's references.
#[tokio::test]
async fn php_symfony_console_graph_callers_are_verified_by_intelephense() {
    if require_peer("intelephense").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::Plan);
    let Some(project) = setup.real("symfony-console", &[COMPOSER_JSON]) else {
        return;
    };
    let output = project
        .registry
        .call(
            "graph",
            json!({"action": "callers", "file": "Formatter/OutputFormatter.php", "line": 43, "symbol": "escape", "verify": true}),
        )
        .await
        .unwrap();
    let callers = &output.value;
    let text = output.render_text();
    let mut files: Vec<&str> = callers["callers"]
        .as_array()
        .unwrap_or_else(|| panic!("{text}"))
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    files.sort_unstable();
    files.dedup();
    assert_eq!(
        files,
        [
            "Application.php",
            "Descriptor/TextDescriptor.php",
            "Helper/FormatterHelper.php",
            "Helper/SymfonyQuestionHelper.php",
            "Style/SymfonyStyle.php",
        ],
        "{text}"
    );
    assert_eq!(callers["total"], 11, "{text}");
    assert_eq!(callers["verification"]["refuted"], 0, "{text}");
    for caller in callers["callers"].as_array().unwrap() {
        assert_eq!(caller["verified"], "confirmed", "{caller}");
    }
    project.shutdown().await;
}

/// The graph's Java and Kotlin callers, checked by JDT LS: the Java call is confirmed; the
/// Kotlin ones, which JDT LS finds by name only, are unverifiable, never confirmed.
#[tokio::test]
async fn java_expo_graph_callers_are_verified_by_jdtls_and_kotlin_ones_are_not_claimed() {
    if require_peer("jdtls").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let setup = Setup::with_graph(cache.path(), cc_tools::Surface::Plan);
    let Some(project) = setup.real("expo-modules-core", &[]) else {
        return;
    };
    let line = project
        .read(EXPO_JAVA)
        .lines()
        .position(|l| l.contains("public <T> T getModule("))
        .unwrap()
        + 1;
    let output = project
        .registry
        .call(
            "graph",
            json!({"action": "callers", "file": EXPO_JAVA, "line": line, "symbol": "getModule", "verify": true}),
        )
        .await
        .unwrap();
    let callers = &output.value;
    let text = output.render_text();
    let verdict_of = |suffix: &str| -> Vec<String> {
        callers["callers"]
            .as_array()
            .unwrap_or_else(|| panic!("{text}"))
            .iter()
            .filter(|c| c["path"].as_str().unwrap().ends_with(suffix))
            .map(|c| c["verified"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        verdict_of("ModuleRegistryAdapter.java"),
        ["confirmed"],
        "{text}"
    );
    let kotlin = verdict_of(".kt");
    assert!(!kotlin.is_empty(), "{text}");
    assert!(kotlin.iter().all(|v| v == "unverifiable"), "{text}");
    assert_eq!(callers["verification"]["refuted"], 0, "{text}");
    project.shutdown().await;
}
