//! Benchmark driver for `cargo xtask bench lsp`: per server, how long after a write the
//! server's answer for that version arrives (its publish or pull response), and how much
//! later `check_written` (the diagnostics-on-write wrapper) returns. Prints one JSON object
//! per server on stdout; servers that are not installed are reported as missing.
//!
//! `cargo run --release -p cc-lsp-client --example lsp_bench [ROUNDS]`

use std::path::Path;
use std::time::Instant;

use cc_lsp_client::{CheckOutcome, Ledger, LspConfig, Supervisor, SupervisorOptions};
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
            Some(section) => LspConfig::from_toml(section)?,
            None => LspConfig::default(),
        };
        let sup = Supervisor::new(&ws, config.table()?, SupervisorOptions::default());
        let path = ws.join(case.file);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/")))?;
        let mut ledger = Ledger::default();
        let (mut server_ms, mut total_ms, mut overhead_ms) = (Vec::new(), Vec::new(), Vec::new());
        let mut pending = 0;
        // Round 0 starts the server and is not counted.
        for round in 0..=rounds {
            let content = if round % 2 == 0 { case.bad } else { case.good };
            std::fs::write(&path, content)?;
            let checks = sup.check_written(std::slice::from_ref(&path)).await;
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
    Ok(())
}
