//! `cargo xtask graph-keys [PROJECT...]`: builds the code graph's answer keys from real
//! language servers (`graph/tests/keys/PROJECT.json`, read by `graph/tests/it/accuracy.rs`).
//!
//! Each project is copied from `.peers/projects/` to `$TMPDIR/cc-graph-keys/` and handed to the
//! `cc-graph` example `answer_key`, which lists every function and method through the
//! server's `documentSymbol` and keeps the call sites of its `references` (a constructor's
//! include its class's). The key then records the project's version, so the test can tell a
//! key built for another version. Servers: basedpyright (requests, with `src` on its extra
//! paths), gopls (cobra, in GOPATH mode with pflag beside it: cobra's other dependencies are
//! not installed, and only its `doc` package needs them), typescript-language-server (zod,
//! rxjs), rust-analyzer (semver and itertools, offline, their locked dependencies fetched by
//! `cargo xtask peers`); click as requests, pflag as cobra.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::peers::Layout;
use crate::projects::PROJECTS;
use crate::util::{self, Result};

/// (project, language, `[lsp]` section for the server).
const KEYS: &[(&str, &str, &str)] = &[
    (
        "requests",
        "python",
        "[python]\nsettings = { basedpyright = { analysis = { extraPaths = [\"src\"] } }, python = { analysis = { extraPaths = [\"src\"] } } }\n",
    ),
    ("cobra", "go", ""),
    ("zod", "typescript", ""),
    ("semver", "rust", ""),
    // The larger project per language with the type-dependent shapes (issue 32): classes and
    // interfaces; a src layout with tests; interfaces implemented across files; an extension
    // trait, `macro_rules!` impls and calls inside macro invocations.
    ("rxjs", "typescript", ""),
    (
        "click",
        "python",
        "[python]\nsettings = { basedpyright = { analysis = { extraPaths = [\"src\"] } }, python = { analysis = { extraPaths = [\"src\"] } } }\n",
    ),
    ("pflag", "go", ""),
    ("itertools", "rust", ""),
];

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let mut cmd = Command::new("cp");
    cmd.arg("-r").arg(from).arg(to);
    util::run_to_stderr(&mut cmd)
}

/// Builds the keys of `names` (all when empty).
pub fn run(root: &Path, names: &[String]) -> Result<()> {
    let layout = Layout::new(root);
    crate::peers::install(&layout)?;
    let path = util::prepend_path(&layout.path_entries())?;
    // Outside the checkout: under it, cargo would take a copied crate for a member of this
    // workspace and rust-analyzer would find no references (itertools' key came out empty).
    let work = std::env::temp_dir().join("cc-graph-keys");
    let mut built = Vec::new();
    for (name, language, section) in KEYS {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        let project = PROJECTS
            .iter()
            .find(|p| p.name == *name)
            .ok_or_else(|| format!("{name} is not in xtask/src/projects.rs"))?;
        let source = layout.projects_dir().join(name);
        let scratch = work.join(name);
        if scratch.exists() {
            std::fs::remove_dir_all(&scratch)
                .map_err(|e| format!("cannot clear {}: {e}", scratch.display()))?;
        }
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        let mut section = section.to_string();
        let project_root: PathBuf = if *language == "go" {
            // GOPATH mode: src/github.com/spf13/{cobra,pflag} (gopls in module mode crashed
            // on pflag alone).
            let spf13 = scratch.join("src/github.com/spf13");
            std::fs::create_dir_all(&spf13)
                .map_err(|e| format!("cannot create {}: {e}", spf13.display()))?;
            copy_tree(&source, &spf13.join(name))?;
            if *name != "pflag" {
                copy_tree(&layout.projects_dir().join("pflag"), &spf13.join("pflag"))?;
            }
            section = format!(
                "[go]\nenv = {{ GO111MODULE = \"off\", GOPATH = \"{}\", GOFLAGS = \"\" }}\n",
                scratch.display()
            );
            spf13.join(name)
        } else {
            copy_tree(&source, &scratch.join(name))?;
            scratch.join(name)
        };
        let out = root.join("graph/tests/keys").join(format!("{name}.json"));
        eprintln!("graph-keys: {name} ({language}) -> {}", out.display());
        let mut cmd = util::cargo(root);
        cmd.args([
            "run",
            "--release",
            "-q",
            "-p",
            "cc-graph",
            "--example",
            "answer_key",
            "--",
        ])
        .arg(&project_root)
        .arg(language)
        .arg(&out)
        .env("PATH", &path);
        if !section.is_empty() {
            cmd.arg(&section);
        }
        util::run_to_stderr(&mut cmd)?;
        // Record which project version the key is for.
        let text = std::fs::read_to_string(&out)
            .map_err(|e| format!("cannot read {}: {e}", out.display()))?;
        let mut key: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", out.display()))?;
        key["project"] = serde_json::Value::from(*name);
        key["version"] = serde_json::Value::from(project.version);
        let text = compact(&key)?;
        std::fs::write(&out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        built.push(*name);
    }
    if built.is_empty() {
        let known: Vec<&str> = KEYS.iter().map(|k| k.0).collect();
        return Err(format!("no such key; known: {}", known.join(", ")));
    }
    eprintln!("graph-keys: built {}", built.join(", "));
    Ok(())
}

/// A key as JSON with one definition per line (diffs stay readable): the other fields first,
/// one per line, then `definitions`, each compact.
fn compact(key: &serde_json::Value) -> Result<String> {
    let fields = key
        .as_object()
        .ok_or("an answer key must be a JSON object")?;
    let mut out = String::from("{\n");
    for (name, value) in fields.iter().filter(|(name, _)| *name != "definitions") {
        out.push_str(&format!(
            "  {}: {value},\n",
            serde_json::Value::from(name.as_str())
        ));
    }
    out.push_str("  \"definitions\": [\n");
    let definitions = fields
        .get("definitions")
        .and_then(|d| d.as_array())
        .ok_or("an answer key has no `definitions` list")?;
    let lines: Vec<String> = definitions.iter().map(|d| format!("    {d}")).collect();
    out.push_str(&lines.join(",\n"));
    out.push_str("\n  ]\n}\n");
    Ok(out)
}
