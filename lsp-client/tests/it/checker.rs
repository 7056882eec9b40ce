//! The project checker (`diagnostics "*"`) against the real checkers installed by `cargo
//! xtask peers`: one known error per fixture project; a missing checker, a failing one and
//! one that overruns its timeout (its whole process group is gone afterwards).

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::common;

use std::path::Path;

use cc_lsp_client::{
    CheckOutcome, CheckerError, ProjectCheck, ProjectChecker, ServerPoolOptions, Severity,
};
use cc_test_support::require_peer;
use common::*;

/// The project's errors, as `path:line code`.
fn errors(check: &ProjectCheck, ws: &Path) -> Vec<String> {
    check
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == Severity::Error)
        .map(|d| {
            format!(
                "{}:{} {}",
                d.path.strip_prefix(ws).unwrap().display(),
                d.diagnostic.line,
                d.diagnostic.code.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

async fn check_all(fixture: &Fixture, language: &str) -> Result<ProjectCheck, CheckerError> {
    let targets = ProjectChecker::for_pool(&fixture.sup)
        .project_targets(Some(language))
        .unwrap();
    assert_eq!(targets.len(), 1, "{targets:?}");
    ProjectChecker::for_pool(&fixture.sup)
        .check_project(&targets[0])
        .await
}

#[tokio::test]
async fn basedpyright_checks_the_whole_project() {
    if require_peer("basedpyright").is_none() {
        return;
    }
    let fixture = fixture(
        &[
            ("pyproject.toml", ""),
            ("pkg/__init__.py", ""),
            ("pkg/ok.py", "def f(x: int) -> int:\n    return x\n"),
            ("pkg/bad.py", "from pkg.ok import f\n\ny: str = f(1)\n"),
        ],
        "",
    );
    let check = check_all(&fixture, "python").await.unwrap();
    assert_eq!(
        errors(&check, &fixture.ws),
        ["pkg/bad.py:3 reportAssignmentType"],
        "{check:#?}"
    );
    assert_eq!(check.command, "basedpyright --outputjson");
    assert_eq!(check.exit_code, Some(1));
    // Reported not only for open files: nothing was opened in a server.
    assert!(fixture.sup.running().is_empty());
}

#[tokio::test]
async fn tsc_checks_with_a_tsconfig_and_without_one() {
    if require_peer("tsc").is_none() {
        return;
    }
    let files = [
        ("package.json", "{}"),
        ("src/util.ts", "export const n: number = 1;\n"),
        (
            "src/main.ts",
            "import { n } from \"./util\";\nconst s: string = n;\nconsole.log(s);\n",
        ),
    ];
    let mut with_config = files.to_vec();
    with_config.push((
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}",
    ));
    let fixture = fixture(&with_config, "");
    let check = check_all(&fixture, "typescript").await.unwrap();
    assert_eq!(
        errors(&check, &fixture.ws),
        ["src/main.ts:2 TS2322"],
        "{check:#?}"
    );
    assert_eq!(check.note, None);

    let fixture = common::fixture(&files, "");
    let check = check_all(&fixture, "typescript").await.unwrap();
    assert_eq!(
        errors(&check, &fixture.ws),
        ["src/main.ts:2 TS2322"],
        "{check:#?}"
    );
    assert!(
        check.note.as_deref().unwrap().contains("no tsconfig.json"),
        "{check:#?}"
    );
    assert_eq!(check.command, "tsc --noEmit --pretty false (2 files)");
}

#[tokio::test]
async fn cargo_check_reports_rustc_errors_and_a_broken_manifest_fails_clearly() {
    if require_peer("cargo").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The fixture's build goes to a target folder of its own, not the suite's.
    let target = dir.path().join("target");
    let config = format!(
        "[lsp.rust.env]\nCARGO_TARGET_DIR = \"{}\"\n",
        target.display()
    );
    let fixture = fixture(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            (
                "src/main.rs",
                "mod util;\n\nfn main() {\n    util::go();\n}\n",
            ),
            ("src/util.rs", "pub fn go() {\n    let x: u32 = \"s\";\n}\n"),
        ],
        &config,
    );
    let check = check_all(&fixture, "rust").await.unwrap();
    assert_eq!(
        errors(&check, &fixture.ws),
        ["src/util.rs:2 E0308"],
        "{check:#?}"
    );
    assert!(
        target.exists(),
        "CARGO_TARGET_DIR from [lsp.rust.env] was used"
    );

    std::fs::write(fixture.ws.join("Cargo.toml"), "[package]\nname = \n").unwrap();
    let error = check_all(&fixture, "rust").await.unwrap_err();
    assert!(matches!(error, CheckerError::Failed { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("without reporting diagnostics"), "{text}");
    assert!(text.contains("Cargo.toml"), "{text}");
}

#[tokio::test]
async fn go_vet_reports_type_errors() {
    if require_peer("go").is_none() {
        return;
    }
    let fixture = fixture(
        &[
            ("go.mod", "module example.com/m\n\ngo 1.19\n"),
            (
                "main.go",
                "package main\n\nfunc main() {\n\tvar s string = 1\n\t_ = s\n}\n",
            ),
        ],
        "",
    );
    let check = check_all(&fixture, "go").await.unwrap();
    assert_eq!(errors(&check, &fixture.ws), ["main.go:4 -"], "{check:#?}");
}

#[tokio::test]
async fn clang_tidy_and_gcc_check_c_sources() {
    if require_peer("clang-tidy-19").is_none() || require_peer("gcc").is_none() {
        return;
    }
    let files = [
        (".clangd", ""),
        ("src/ok.c", "int twice(int x) { return 2 * x; }\n"),
        ("src/m.c", "int main(void) {\n    return nope;\n}\n"),
    ];
    let fixture = fixture(&files, "");
    let check = check_all(&fixture, "c").await.unwrap();
    assert_eq!(
        errors(&check, &fixture.ws),
        ["src/m.c:2 clang-diagnostic-error"],
        "{check:#?}"
    );
    assert!(check.command.starts_with("clang-tidy"), "{}", check.command);

    let fixture = common::fixture(&files, "[lsp.c]\nchecker = [\"gcc\", \"-fsyntax-only\"]\n");
    let check = check_all(&fixture, "c").await.unwrap();
    assert_eq!(errors(&check, &fixture.ws), ["src/m.c:2 -"], "{check:#?}");
    assert_eq!(check.command, "gcc -fsyntax-only (2 files)");
}

#[tokio::test]
async fn a_missing_checker_names_the_binary_and_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let fixture = fixture_with(
        &[("pyproject.toml", ""), ("a.py", "x = 1\n")],
        "",
        ServerPoolOptions {
            path: Some(empty.path().as_os_str().to_owned()),
            ..ServerPoolOptions::default()
        },
    );
    let error = check_all(&fixture, "python").await.unwrap_err();
    assert_eq!(error.kind(), "checker_missing");
    let text = error.to_string();
    assert!(text.contains("`basedpyright` is not installed"), "{text}");
    assert!(text.contains("pip install basedpyright"), "{text}");

    // Without a language: every family with a marker, and nothing else.
    let targets = ProjectChecker::for_pool(&fixture.sup)
        .project_targets(None)
        .unwrap();
    let families: Vec<&str> = targets.iter().map(|t| t.family.as_str()).collect();
    assert_eq!(families, ["python"]);
    let error = ProjectChecker::for_pool(&fixture.sup)
        .project_targets(Some("cobol"))
        .unwrap_err();
    assert!(error.reason.contains("not a language"), "{}", error.reason);
    let error = ProjectChecker::for_pool(&fixture.sup)
        .project_targets(Some("go"))
        .unwrap_err();
    assert!(
        error.reason.contains("no go project marker"),
        "{}",
        error.reason
    );
}

#[tokio::test]
async fn a_checker_past_its_timeout_is_killed_with_its_children() {
    let tag = format!("cc-checker-test-{}", std::process::id());
    let config = format!(
        "[lsp.go]\nchecker = [\"sh\", \"-c\", \"sleep 300 & sleep 300\"]\nchecker_timeout_secs = 1\n\
         [lsp.go.env]\nCC_CHECKER_TAG = \"{tag}\"\n"
    );
    let fixture = fixture(&[("go.mod", "module m\n")], &config);
    let error = check_all(&fixture, "go").await.unwrap_err();
    assert_eq!(error.kind(), "timeout");
    assert!(
        error.to_string().contains("checker_timeout_secs"),
        "{error}"
    );
    cc_test_support::assert_no_tagged("CC_CHECKER_TAG", &tag).await;
}

/// Kotlin diagnostics on write come from JetBrains' compiler kept warm in one JVM per root
/// (`cc_lsp_client::kotlin`): a check of an unchanged tree is the last compile's answer, a
/// change is seen, a JVM killed between checks (the shell, the OOM killer) is started again,
/// and nothing of it outlives `shutdown`.
#[tokio::test]
async fn the_warm_kotlin_compiler_follows_changes_and_survives_a_killed_jvm() {
    use cc_lsp_client::kotlin::KotlinCompiler;
    use std::sync::Arc;
    use std::time::Duration;
    if require_peer("kotlinc").is_none() {
        return;
    }
    let greeter = "package a\n\nfun greet(name: String): String = \"hi \" + name\n";
    let fixture = fixture(
        &[
            ("settings.gradle", ""),
            ("src/a/Greeter.kt", greeter),
            (
                "src/a/Use.kt",
                "package a\n\nfun use(): String = greet(\"x\")\n",
            ),
        ],
        "",
    );
    let user = fixture.ws.join("src/a/Use.kt");
    let table = cc_lsp_client::ServerTable::builtin();
    let spec = &table.family("java").unwrap().servers[0];
    let path_var = std::env::var_os("PATH").unwrap();
    let compiler =
        Arc::new(KotlinCompiler::locate(&fixture.ws, &fixture.ws, &path_var, spec, false).unwrap());
    let cap = Duration::from_secs(300);
    let first = compiler.check(cap).await.unwrap();
    assert_eq!(first.of(&user), [], "{first:#?}");
    let again = compiler.check(cap).await.unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "an unchanged tree is compiled once"
    );

    std::fs::write(
        fixture.ws.join("src/a/Greeter.kt"),
        greeter.replace("name: String)", "name: String, loud: Boolean)"),
    )
    .unwrap();
    let changed = compiler.check(cap).await.unwrap();
    let errors = changed.of(&user);
    assert_eq!(errors.len(), 1, "{changed:#?}");
    assert_eq!(errors[0].line, 3, "{errors:?}");
    assert!(errors[0].message.contains("loud"), "{errors:?}");

    // Killed between two checks: the next one starts a new JVM.
    let pid = compiler.pid().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", "--", &format!("-{pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_group_gone(pid).await;
    std::fs::write(fixture.ws.join("src/a/Greeter.kt"), greeter).unwrap();
    let restored = compiler.check(cap).await.unwrap();
    assert_eq!(restored.of(&user), [], "{restored:#?}");
    let second = compiler.pid().unwrap();
    assert_ne!(second, pid);
    compiler.shutdown().await;
    assert_group_gone(second).await;
}

/// A `kotlinc` that is not JetBrains' distribution (no `lib/kotlin-compiler.jar` beside its
/// `bin/`) is told as the reason Kotlin files are not checked on write.
#[test]
fn a_kotlinc_without_its_compiler_jar_is_the_reason_kotlin_is_not_checked() {
    use cc_lsp_client::kotlin::KotlinCompiler;
    let fixture = fixture(&[("settings.gradle", ""), ("A.kt", "")], "");
    let bin = fixture.ws.join("tools/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("kotlinc");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let table = cc_lsp_client::ServerTable::builtin();
    let spec = &table.family("java").unwrap().servers[0];
    let error =
        KotlinCompiler::locate(&fixture.ws, &fixture.ws, bin.as_os_str(), spec, false).unwrap_err();
    assert!(error.contains("no lib/kotlin-compiler.jar"), "{error}");
}

/// Through the pool: a written Kotlin file of a java-family root and its Kotlin dependent are
/// checked by the warm compiler (JDT LS compiles Java only), and the compiler's JVM, idle, is
/// reaped as an idle server is.
#[tokio::test]
async fn the_pool_checks_kotlin_with_the_warm_compiler_and_reaps_it_when_idle() {
    use cc_lsp_client::Via;
    use std::time::Duration;
    if require_peer("jdtls").is_none() || require_peer("kotlinc").is_none() {
        return;
    }
    let options = ServerPoolOptions {
        idle_timeout: Duration::from_secs(3),
        ..ServerPoolOptions::default()
    };
    let fixture = fixture_with(
        &[
            ("pom.xml", "<project/>\n"),
            (
                "src/main/kotlin/m/Lib.kt",
                "package m\nfun f(a: Int): Int = a\n",
            ),
            ("src/main/kotlin/m/User.kt", "package m\nval y = f(1)\n"),
        ],
        "",
        options,
    );
    let lib = fixture.ws.join("src/main/kotlin/m/Lib.kt");
    let user = fixture.ws.join("src/main/kotlin/m/User.kt");
    // Before anything runs, `status` says what will check the Kotlin files.
    let status = fixture.sup.status().await;
    let java = status.iter().find(|row| row.language == "java").unwrap();
    assert!(
        java.reason
            .as_deref()
            .unwrap_or_default()
            .contains("Kotlin files are compiled on write by kotlinc"),
        "{java:?}"
    );
    std::fs::write(&lib, "package m\nfun f(a: Int, b: Int): Int = a\n").unwrap();
    let checks = fixture
        .sup
        .check_files(std::slice::from_ref(&lib), std::slice::from_ref(&user))
        .await;
    assert_eq!(checks.len(), 2, "{checks:#?}");
    for check in &checks {
        let CheckOutcome::Checked {
            server,
            diagnostics,
            via,
            ..
        } = &check.outcome
        else {
            panic!("{checks:#?}");
        };
        assert_eq!((server.as_str(), *via), ("kotlinc", Some(Via::Compiler)));
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        assert_eq!(errors, usize::from(check.path == user), "{checks:#?}");
    }
    let pids = fixture.sup.kotlin_compiler_pids();
    assert_eq!(pids.len(), 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !fixture.sup.kotlin_compiler_pids().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(fixture.sup.kotlin_compiler_pids(), Vec::<u32>::new());
    assert_group_gone(pids[0]).await;
    shutdown_and_check(&fixture.sup).await;
}

/// `uses_of` finds a declaration's uses by the compiler's resolution: a member of another
/// class with the same name, and a name on a receiver it cannot resolve, are not among them.
#[tokio::test]
async fn the_kotlin_compiler_finds_the_uses_of_a_declaration_and_only_those() {
    use cc_lsp_client::kotlin::{KotlinCompiler, Use};
    use std::sync::Arc;
    use std::time::Duration;
    if require_peer("kotlinc").is_none() {
        return;
    }
    let fixture = fixture(
        &[
            ("settings.gradle", ""),
            ("src/a/Greeter.kt", "package a\n\nfun greet(name: String): String = \"hi \" + name\n"),
            ("src/a/Other.kt", "package a\n\nclass Other {\n    fun greet(): String = \"other\"\n}\n"),
            (
                "src/b/Use.kt",
                "package b\n\nimport a.greet\nimport a.Other\n\nfun use(): String = greet(\"x\") + Other().greet()\nfun broken(): String = greet(nope)\nfun lost(): String = Missing().greet()\n",
            ),
        ],
        "",
    );
    let table = cc_lsp_client::ServerTable::builtin();
    let spec = &table.family("java").unwrap().servers[0];
    let path_var = std::env::var_os("PATH").unwrap();
    let compiler =
        Arc::new(KotlinCompiler::locate(&fixture.ws, &fixture.ws, &path_var, spec, false).unwrap());
    let greeter = fixture.ws.join("src/a/Greeter.kt");
    let user = fixture.ws.join("src/b/Use.kt");
    let uses = compiler
        .uses_of(&greeter, 2, 4, "greet", Duration::from_secs(300))
        .await
        .unwrap();
    // The import and the calls of `a.greet`, the one with an error in its argument too;
    // not `Other().greet()`, nor a `greet` of a class the compiler cannot resolve.
    let places: Vec<(u32, u32)> = uses
        .iter()
        .inspect(|u| assert_eq!(u.path, user, "{uses:?}"))
        .map(|Use { line, column, .. }| (*line, *column))
        .collect();
    assert_eq!(places, [(3, 9), (6, 20), (7, 23)], "{uses:?}");
    // The tree itself is untouched.
    assert!(std::fs::read_to_string(&greeter)
        .unwrap()
        .contains("fun greet("));
    compiler.shutdown().await;
}
