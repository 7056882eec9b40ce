//! Benchmark driver for `cargo xtask bench lsp`: per server, how long after a write the
//! server's answer for that version arrives (its publish or pull response), and how much
//! later `check_written` (the diagnostics-on-write wrapper) returns. Then the cross-file
//! case: a change of signature in one file and the diagnostics of the file that calls it
//! (`check_files` with that dependent), and the cost of the baseline a first write takes.
//! Prints one JSON object per server and case on stdout; servers that are not installed are
//! reported as missing.
//!
//! `cargo run --release -p cc-lsp-client --example lsp_bench [ROUNDS]`

use std::path::{Path, PathBuf};
use std::time::Instant;

use cc_lsp_client::{CheckOutcome, Ledger, LspConfig, ServerPool, ServerPoolOptions};
use serde_json::json;

struct Case {
    server: &'static str,
    peer: &'static str,
    config: &'static str,
    files: &'static [(&'static str, &'static str)],
    file: &'static str,
    bad: &'static str,
    good: &'static str,
}

const CASES: &[Case] = &[
    Case {
        server: "clangd",
        peer: "clangd-19",
        config: "",
        files: &[(".clangd", "")],
        file: "m.c",
        bad: "int main(void) { return nope; }\n",
        good: "int main(void) { return 0; }\n",
    },
    Case {
        server: "basedpyright",
        peer: "basedpyright-langserver",
        config: "",
        files: &[("pyproject.toml", "")],
        file: "a.py",
        bad: "x: int = 'a'\n",
        good: "x: int = 1\n",
    },
    Case {
        server: "pylsp",
        peer: "pylsp",
        config: "[lsp.python]\ncommand = [\"pylsp\"]\n",
        files: &[("setup.py", "")],
        file: "a.py",
        bad: "print(nope)\n",
        good: "print(1)\n",
    },
    Case {
        server: "gopls",
        peer: "gopls",
        config: "",
        files: &[("go.mod", "module m\n\ngo 1.19\n")],
        file: "main.go",
        bad: "package main\n\nfunc main() { var x int = \"s\"; _ = x }\n",
        good: "package main\n\nfunc main() { var x int = 1; _ = x }\n",
    },
    Case {
        server: "typescript-language-server",
        peer: "typescript-language-server",
        config: "",
        files: &[("package.json", "{}")],
        file: "a.ts",
        bad: "export const x: number = 's';\n",
        good: "export const x: number = 1;\n",
    },
    Case {
        server: "bash-language-server",
        peer: "bash-language-server",
        config: "",
        files: &[],
        file: "a.sh",
        bad: "#!/bin/bash\necho \"$nope\"\n",
        good: "#!/bin/bash\necho hi\n",
    },
    Case {
        server: "intelephense",
        peer: "intelephense",
        config: "",
        files: &[("composer.json", "{}")],
        file: "a.php",
        bad: "<?php\nno_such_function(1);\n",
        good: "<?php\nstrlen('x');\n",
    },
    Case {
        server: "jdtls",
        peer: "jdtls",
        config: "",
        files: &[("pom.xml", "<project/>\n")],
        file: "src/main/java/m/A.java",
        bad: "package m;\nclass A { int x = \"s\"; }\n",
        good: "package m;\nclass A { int x = 1; }\n",
    },
    // Kotlin files of the java family: JDT LS starts for the root, the warm Kotlin compiler
    // answers.
    Case {
        server: "kotlinc (warm JVM, java family)",
        peer: "kotlinc",
        config: "",
        files: &[("pom.xml", "<project/>\n")],
        file: "src/main/kotlin/m/A.kt",
        bad: "package m\nval x: Int = \"s\"\n",
        good: "package m\nval x: Int = 1\n",
    },
    Case {
        server: "rust-analyzer",
        peer: "rust-analyzer",
        config: "",
        files: &[(
            "Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )],
        file: "src/main.rs",
        bad: "fn main() { let x = 1 }\n",
        good: "fn main() { let _x = 1; }\n",
    },
];

/// A library file whose signature a write changes, and a file that calls it.
struct Cross {
    server: &'static str,
    peer: &'static str,
    files: &'static [(&'static str, &'static str)],
    lib: &'static str,
    /// The library as it is (the caller compiles) and with a changed signature (it breaks).
    good: &'static str,
    bad: &'static str,
    user: &'static str,
    user_text: &'static str,
}

const CROSS: &[Cross] = &[
    Cross {
        server: "basedpyright",
        peer: "basedpyright-langserver",
        files: &[("pyproject.toml", "")],
        lib: "lib.py",
        good: "def f(a: int) -> int:\n    return a\n",
        bad: "def f(a: int, b: int) -> int:\n    return a\n",
        user: "user.py",
        user_text: "from lib import f\n\nf(1)\n",
    },
    Cross {
        server: "gopls",
        peer: "gopls",
        files: &[("go.mod", "module m\n\ngo 1.19\n")],
        lib: "lib.go",
        good: "package m\n\nfunc F(a int) int { return a }\n",
        bad: "package m\n\nfunc F(a, b int) int { return a }\n",
        user: "user.go",
        user_text: "package m\n\nvar _ = F(1)\n",
    },
    Cross {
        server: "typescript-language-server",
        peer: "typescript-language-server",
        files: &[("package.json", "{}")],
        lib: "lib.ts",
        good: "export function f(a: number): number { return a; }\n",
        bad: "export function f(a: number, b: number): number { return a; }\n",
        user: "user.ts",
        user_text: "import { f } from './lib';\nf(1);\n",
    },
    Cross {
        server: "clangd",
        peer: "clangd-19",
        files: &[(".clangd", "")],
        lib: "lib.h",
        good: "int f(int a);\n",
        bad: "int f(int a, int b);\n",
        user: "user.c",
        user_text: "#include \"lib.h\"\nint main(void) { return f(1); }\n",
    },
    Cross {
        server: "intelephense",
        peer: "intelephense",
        files: &[("composer.json", "{}")],
        lib: "lib.php",
        good: "<?php\nfunction f(int $a): int { return $a; }\n",
        bad: "<?php\nfunction f(int $a, int $b): int { return $a; }\n",
        user: "user.php",
        user_text: "<?php\nrequire 'lib.php';\nf(1);\n",
    },
    Cross {
        server: "jdtls",
        peer: "jdtls",
        files: &[("pom.xml", "<project/>\n")],
        lib: "src/main/java/m/Lib.java",
        good: "package m;\npublic class Lib { public static int f(int a) { return a; } }\n",
        bad: "package m;\npublic class Lib { public static int f(int a, int b) { return a; } }\n",
        user: "src/main/java/m/User.java",
        user_text: "package m;\nclass User { int y = Lib.f(1); }\n",
    },
    Cross {
        server: "kotlinc (warm JVM, java family)",
        peer: "kotlinc",
        files: &[("pom.xml", "<project/>\n")],
        lib: "src/main/kotlin/m/Lib.kt",
        good: "package m\nfun f(a: Int): Int = a\n",
        bad: "package m\nfun f(a: Int, b: Int): Int = a\n",
        user: "src/main/kotlin/m/User.kt",
        user_text: "package m\nval y = f(1)\n",
    },
    Cross {
        server: "rust-analyzer",
        peer: "rust-analyzer",
        files: &[
            (
                "Cargo.toml",
                "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            (
                "src/main.rs",
                "mod lib2;\nfn main() { let _ = lib2::f(1); }\n",
            ),
        ],
        lib: "src/lib2.rs",
        good: "pub fn f(a: i32) -> i32 { a }\n",
        bad: "pub fn f(a: i32, b: i32) -> i32 { a + b }\n",
        user: "src/main.rs",
        user_text: "mod lib2;\nfn main() { let _ = lib2::f(1); }\n",
    },
];

/// The time of the server's answer in `outcome`, if it answered.
fn answered(outcome: &CheckOutcome) -> Option<(Instant, Instant)> {
    match outcome {
        CheckOutcome::Checked {
            synced_at,
            answered_at: Some(answered),
            ..
        } => Some((synced_at.into_std(), answered.into_std())),
        _ => None,
    }
}

/// A fresh workspace with the case's files, the library in its good state: the folder (kept
/// alive by the caller), its canonical path, the library and the file that uses it.
fn case_workspace(
    case: &Cross,
) -> Result<(tempfile::TempDir, PathBuf, PathBuf, PathBuf), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let ws = dir.path().canonicalize()?;
    for (name, content) in case.files {
        let path = ws.join(name);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/")))?;
        std::fs::write(path, content)?;
    }
    let lib = ws.join(case.lib);
    let user = ws.join(case.user);
    for file in [&lib, &user] {
        std::fs::create_dir_all(file.parent().unwrap_or(Path::new("/")))?;
    }
    std::fs::write(&lib, case.good)?;
    std::fs::write(&user, case.user_text)?;
    Ok((dir, ws, lib, user))
}

async fn cross_file(
    case: &Cross,
    rounds: usize,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    if cc_process::find_on_path(case.peer).is_none() {
        return Ok(json!({"server": case.server, "case": "cross_file", "missing": case.peer}));
    }
    let (_dir, ws, lib, user) = case_workspace(case)?;
    let sup = ServerPool::new(
        &ws,
        LspConfig::default().table()?,
        ServerPoolOptions::default(),
    );
    // The baseline of a first write: the written file's and its dependent's diagnostics as
    // they stand, with the server started.
    let started = Instant::now();
    let _ = sup.server_for(&lib).await;
    let start_ms = started.elapsed().as_secs_f64() * 1000.0;
    let before = Instant::now();
    let baseline = sup.check_files(&[lib.clone(), user.clone()], &[]).await;
    let baseline_ms = before.elapsed().as_secs_f64() * 1000.0;
    let baseline_ok = baseline
        .iter()
        .all(|c| matches!(c.outcome, CheckOutcome::Checked { .. }));
    let (mut server_ms, mut overhead_ms) = (Vec::new(), Vec::new());
    let (mut pending, mut wrong) = (0, 0);
    for round in 0..rounds {
        let broken = round % 2 == 0;
        std::fs::write(&lib, if broken { case.bad } else { case.good })?;
        let checks = sup
            .check_files(std::slice::from_ref(&lib), std::slice::from_ref(&user))
            .await;
        let returned = Instant::now();
        let times: Vec<_> = checks.iter().filter_map(|c| answered(&c.outcome)).collect();
        let user_errors = checks
            .iter()
            .find(|c| c.path == user)
            .and_then(|c| match &c.outcome {
                CheckOutcome::Checked { diagnostics, .. } => Some(
                    diagnostics
                        .iter()
                        .any(|d| d.severity == cc_lsp_client::Severity::Error),
                ),
                _ => None,
            });
        match user_errors {
            None => pending += 1,
            Some(errors) if errors != broken => wrong += 1,
            Some(_) => {}
        }
        if times.len() == checks.len() {
            let synced = times.iter().map(|(s, _)| *s).min().unwrap_or(returned);
            let last = times.iter().map(|(_, a)| *a).max().unwrap_or(returned);
            server_ms.push((last - synced).as_secs_f64() * 1000.0);
            overhead_ms.push((returned.max(last) - last).as_secs_f64() * 1000.0);
        }
    }
    sup.shutdown().await;
    Ok(json!({
        "server": case.server,
        "case": "cross_file",
        "rounds": server_ms.len(),
        "pending": pending,
        "wrong": wrong,
        "start_ms": start_ms,
        "baseline_ms": baseline_ms,
        "baseline_ok": baseline_ok,
        "server_p50_ms": percentile(&mut server_ms.clone(), 0.5),
        "overhead_p50_ms": percentile(&mut overhead_ms.clone(), 0.5),
        "overhead_p90_ms": percentile(&mut overhead_ms, 0.9),
    }))
}

/// The references of the library's function in a fresh server, asked the moment it is up
/// (`raw`) and after `wait_ready` (ours): how long each takes from the start, and how many
/// places each found.
async fn cold_start(case: &Cross) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    if cc_process::find_on_path(case.peer).is_none() {
        return Ok(json!({"server": case.server, "case": "cold_start", "missing": case.peer}));
    }
    let mut row = json!({"server": case.server, "case": "cold_start"});
    for waited in [false, true] {
        let (_dir, ws, lib, _user) = case_workspace(case)?;
        let sup = ServerPool::new(
            &ws,
            LspConfig::default().table()?,
            ServerPoolOptions::default(),
        );
        let started = Instant::now();
        let server = sup.server_for(&lib).await.map_err(|u| u.reason)?;
        let family = sup.route(&lib).map_err(|u| u.reason)?.0;
        server.ensure_synced(&lib, case.good, &family.language_id(&lib))?;
        if waited {
            server.wait_ready(std::time::Duration::from_secs(60)).await;
        }
        // The function's name on its definition line.
        let (line, character) = case
            .good
            .lines()
            .enumerate()
            .find_map(|(i, l)| l.find(" f(").or_else(|| l.find(" F(")).map(|c| (i, c + 1)))
            .unwrap_or((0, 0));
        let found = references_found(&server, &lib, (line, character), true, 60).await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let key = if waited { "ours" } else { "raw" };
        row[format!("{key}_ms")] = json!(ms);
        row[format!("{key}_found")] = json!(found);
        sup.shutdown().await;
    }
    Ok(row)
}

/// A server started on a real project (installed by `cargo xtask peers`): the project, the
/// folder that is the server's root, a file and the line whose function is looked up.
struct RealStart {
    server: &'static str,
    peer: &'static str,
    project: &'static str,
    files: &'static [(&'static str, &'static str)],
    file: &'static str,
    line_of: &'static str,
    symbol: &'static str,
}

const REAL_STARTS: &[RealStart] = &[
    RealStart {
        server: "jdtls",
        peer: "jdtls",
        project: "expo-modules-core",
        files: &[],
        file: "android/src/main/java/expo/modules/core/ModuleRegistry.java",
        line_of: "public <T> T getModule(Class<T> interfaceClass)",
        symbol: "getModule",
    },
    RealStart {
        server: "jdtls (a Kotlin file)",
        peer: "jdtls",
        project: "expo-modules-core",
        files: &[],
        file: "android/src/main/java/expo/modules/kotlin/ModuleRegistry.kt",
        line_of: "fun getModuleHolder(name: String)",
        symbol: "getModuleHolder",
    },
    RealStart {
        server: "intelephense",
        peer: "intelephense",
        project: "symfony-console",
        files: &[("composer.json", "{\"name\": \"symfony/console\"}\n")],
        file: "Formatter/OutputFormatter.php",
        line_of: "public static function escape(string $text)",
        symbol: "escape",
    },
];

/// On a copy of a real project: the server's start, then its first `references` once it is
/// ready (what the `lsp` tool's first answer costs), and how many places it found.
async fn real_start(case: &RealStart) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let row = json!({"server": case.server, "case": "real_start", "project": case.project});
    if cc_process::find_on_path(case.peer).is_none() {
        let mut row = row;
        row["missing"] = json!(case.peer);
        return Ok(row);
    }
    let Some(copy) = cc_test_support::copy_project(case.project) else {
        let mut row = row;
        row["missing"] = json!(case.project);
        return Ok(row);
    };
    let ws = copy.path().to_path_buf();
    for (name, content) in case.files {
        std::fs::write(ws.join(name), content)?;
    }
    let file = ws.join(case.file);
    let text = std::fs::read_to_string(&file)?;
    let (line, character) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| {
            l.contains(case.line_of)
                .then(|| l.find(case.symbol).map(|c| (i, c)))
                .flatten()
        })
        .unwrap_or((0, 0));
    let sup = ServerPool::new(
        &ws,
        LspConfig::default().table()?,
        ServerPoolOptions::default(),
    );
    let started = Instant::now();
    let server = sup.server_for(&file).await.map_err(|u| u.reason)?;
    let start_ms = started.elapsed().as_secs_f64() * 1000.0;
    let family = sup.route(&file).map_err(|u| u.reason)?.0;
    server.ensure_synced(&file, &text, &family.language_id(&file))?;
    server.wait_ready(std::time::Duration::from_secs(120)).await;
    let found = references_found(&server, &file, (line, character), false, 120).await;
    let first_answer_ms = started.elapsed().as_secs_f64() * 1000.0;
    sup.shutdown().await;
    let mut row = row;
    row["start_ms"] = json!(start_ms);
    row["first_answer_ms"] = json!(first_answer_ms);
    row["found"] = json!(found);
    row["symbol"] = json!(case.symbol);
    Ok(row)
}

/// How many places `server` lists as the references of what is at `at` (0-based line and
/// column) in `file` (0 when it does not answer within `timeout_s`).
async fn references_found(
    server: &cc_lsp_client::LanguageServer,
    file: &Path,
    at: (usize, usize),
    include_declaration: bool,
    timeout_s: u64,
) -> usize {
    use cc_lsp_client::lsp_types;
    let position = lsp_types::TextDocumentPositionParams::new(
        lsp_types::TextDocumentIdentifier::new(cc_lsp_client::uri::file_uri(file)),
        lsp_types::Position::new(at.0 as u32, at.1 as u32),
    );
    server
        .request::<lsp_types::request::References>(
            lsp_types::ReferenceParams {
                text_document_position: position,
                context: lsp_types::ReferenceContext {
                    include_declaration,
                },
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            },
            std::time::Duration::from_secs(timeout_s),
        )
        .await
        .ok()
        .flatten()
        .map_or(0, |found| found.len())
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let index = ((values.len() - 1) as f64 * p).round() as usize;
    values[index]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(12);
    for case in CASES {
        if cc_process::find_on_path(case.peer).is_none() {
            println!("{}", json!({"server": case.server, "missing": case.peer}));
            continue;
        }
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        for (name, content) in case.files {
            std::fs::write(ws.join(name), content)?;
        }
        let table: toml::Table = case.config.parse()?;
        let config = match table.get("lsp") {
            Some(section) => <LspConfig as serde::Deserialize>::deserialize(section.clone())?,
            None => LspConfig::default(),
        };
        let sup = ServerPool::new(&ws, config.table()?, ServerPoolOptions::default());
        let path = ws.join(case.file);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/")))?;
        let mut ledger = Ledger::default();
        let (mut server_ms, mut total_ms, mut overhead_ms) = (Vec::new(), Vec::new(), Vec::new());
        let mut pending = 0;
        // Round 0 starts the server and is not counted.
        for round in 0..=rounds {
            let content = if round % 2 == 0 { case.bad } else { case.good };
            std::fs::write(&path, content)?;
            let checks = sup.check_files(std::slice::from_ref(&path), &[]).await;
            let outcome = checks.into_iter().next().map(|c| c.outcome);
            let returned = Instant::now();
            if let Some(CheckOutcome::Checked {
                diagnostics,
                synced_at,
                answered_at,
                ..
            }) = outcome
            {
                let _new = ledger.update(&path, diagnostics);
                let returned = returned.max(Instant::now());
                if round == 0 {
                    continue;
                }
                if let Some(answered) = answered_at {
                    let synced = synced_at.into_std();
                    let answered = answered.into_std();
                    server_ms.push((answered - synced).as_secs_f64() * 1000.0);
                    total_ms.push((returned - synced).as_secs_f64() * 1000.0);
                    overhead_ms.push((returned - answered).as_secs_f64() * 1000.0);
                }
            } else if round > 0 {
                pending += 1;
            }
        }
        sup.shutdown().await;
        println!(
            "{}",
            json!({
                "server": case.server,
                "rounds": server_ms.len(),
                "pending": pending,
                "server_p50_ms": percentile(&mut server_ms.clone(), 0.5),
                "returned_p50_ms": percentile(&mut total_ms.clone(), 0.5),
                "overhead_p50_ms": percentile(&mut overhead_ms.clone(), 0.5),
                "overhead_p90_ms": percentile(&mut overhead_ms, 0.9),
            })
        );
    }
    for case in CROSS {
        println!("{}", cross_file(case, rounds).await?);
    }
    for case in CROSS {
        println!("{}", cold_start(case).await?);
    }
    for case in REAL_STARTS {
        println!("{}", real_start(case).await?);
    }
    println!("{}", kotlin_real_writes(rounds.min(6)).await?);
    Ok(())
}

/// Kotlin writes on a copy of expo-modules-core (245 Kotlin and 51 Java files): the first
/// check (JDT LS's start, then the compiler's JVM and its cold compile), then `rounds` writes
/// that alternate a signature between a form its caller in another file satisfies and one
/// it does not, each checked with that caller as a dependent.
async fn kotlin_real_writes(
    rounds: usize,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let row = json!({"server": "kotlinc (warm JVM)", "case": "real_writes", "project": "expo-modules-core"});
    let missing = ["jdtls", "kotlinc"]
        .into_iter()
        .find(|peer| cc_process::find_on_path(peer).is_none());
    let copy = cc_test_support::copy_project("expo-modules-core");
    let (None, Some(copy)) = (missing, copy) else {
        let mut row = row;
        row["missing"] = json!(missing.unwrap_or("expo-modules-core"));
        return Ok(row);
    };
    let ws = copy.path().to_path_buf();
    let file = ws.join("android/src/main/java/expo/modules/kotlin/types/ArrayTypeConverter.kt");
    let user = ws.join("android/src/main/java/expo/modules/kotlin/types/TypeConverterProvider.kt");
    let good = std::fs::read_to_string(&file)?;
    let bad = good.replace(
        "fun isPrimitiveArray(typeDescriptor: TypeDescriptor): Boolean",
        "fun isPrimitiveArray(typeDescriptor: TypeDescriptor, strict: Boolean): Boolean",
    );
    let sup = ServerPool::new(
        &ws,
        LspConfig::default().table()?,
        ServerPoolOptions::default(),
    );
    let errors_in_user = |checks: &[cc_lsp_client::FileCheck]| {
        checks
            .iter()
            .find(|c| c.path == user)
            .and_then(|c| match &c.outcome {
                CheckOutcome::Checked { diagnostics, .. } => {
                    Some(diagnostics.iter().any(|d| d.message.contains("strict")))
                }
                _ => None,
            })
    };
    let started = Instant::now();
    let first = sup
        .check_files(std::slice::from_ref(&file), std::slice::from_ref(&user))
        .await;
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    let first_ok = errors_in_user(&first) == Some(false);
    let (mut write_ms, mut wrong, mut pending) = (Vec::new(), 0, 0);
    for round in 0..rounds {
        let broken = round % 2 == 0;
        std::fs::write(&file, if broken { &bad } else { &good })?;
        let at = Instant::now();
        let checks = sup
            .check_files(std::slice::from_ref(&file), std::slice::from_ref(&user))
            .await;
        match errors_in_user(&checks) {
            None => pending += 1,
            Some(errors) if errors != broken => wrong += 1,
            Some(_) => write_ms.push(at.elapsed().as_secs_f64() * 1000.0),
        }
    }
    sup.shutdown().await;
    let mut row = row;
    row["first_ms"] = json!(first_ms);
    row["first_ok"] = json!(first_ok);
    row["rounds"] = json!(rounds);
    row["pending"] = json!(pending);
    row["wrong"] = json!(wrong);
    row["write_p50_ms"] = json!(percentile(&mut write_ms.clone(), 0.5));
    row["write_max_ms"] = json!(write_ms.iter().cloned().fold(f64::NAN, f64::max));
    Ok(row)
}
