//! `cargo xtask bench [NAME...]`: runs benchmark families and records them in `BENCHMARKS.md`.
//!
//! # Adding a family
//!
//! A family is one module in this folder (`framing.rs`, later `structural.rs`, `lsp.rs`,
//! `kernel.rs`, …) with one entry point:
//!
//! ```text
//! /// Measures …; returns this family's section of BENCHMARKS.md.
//! pub fn run(ctx: &Context) -> Result<String, String>
//! ```
//!
//! 1. Create `xtask/src/bench/NAME.rs` with that function. It returns the section's markdown,
//!    starting with a `## …` heading: what was measured against which peer, a table, the goal
//!    and PASS/MISS per row. Quote ratios, not absolute numbers. A run that cannot measure
//!    (a bench or peer missing, a tool failing) returns `Err` with a message saying what to do;
//!    it must not panic.
//! 2. Add `mod NAME;` below and one [`Family`] entry in [`FAMILIES`] (its `name` is the
//!    `cargo xtask bench NAME` argument and the section's marker).
//!
//! [`Context`] gives the repository root, cargo's target directory (criterion writes to
//! `target/criterion`; [`criterion::read_results`] reads it), a `cargo` command and a `PATH` with
//! the project-local peers first (`cargo xtask peers` installs them). Progress goes to stderr.
//!
//! # The file
//!
//! `BENCHMARKS.md` has a header (machine, date, rustc), rewritten on every run, then one section
//! per family between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`. Running a subset
//! replaces only those sections and keeps the others (and any text between sections); a family
//! that fails leaves its old section as it was, and the command then exits non-zero.

pub mod criterion;
mod dap;
mod framing;
mod graph;
mod kernel;
mod linux;
mod linux_graph;
mod lsp;
mod precise;
mod structural;
mod transaction;
mod watch;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::peers::Layout;
use crate::util::{self, Result};

/// One benchmark family.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The `cargo xtask bench NAME` argument and the section marker.
    pub name: &'static str,
    /// One line for `cargo xtask help`.
    pub about: &'static str,
    /// Runs the family; its section of BENCHMARKS.md (Markdown) on success.
    pub run: fn(&Context) -> Result<String>,
}

/// Every family, in the order they run and first appear in BENCHMARKS.md.
pub const FAMILIES: &[Family] = &[
    Family {
        name: "framing",
        about: "Content-Length decode throughput vs lsp-server (criterion)",
        run: framing::run,
    },
    Family {
        name: "lsp",
        about: "diagnostics on write: server answer vs wrapper return, per real server",
        run: lsp::run,
    },
    Family {
        name: "kernel",
        about:
            "1,000 trivial cells, cold start and tool() round trip vs jupyter_client + ipykernel",
        run: kernel::run,
    },
    Family {
        name: "dap",
        about: "debugger: debugger step vs bare DAP step, round trips to read a local",
        run: dap::run,
    },
    Family {
        name: "watch",
        about: "freshness with the run's watcher vs a stat of every file; outside write to graph and server; watcher memory",
        run: watch::run,
    },
    Family {
        name: "structural",
        about: "ast_grep vs ast-grep over the CPython standard library: time, RSS, counts",
        run: structural::run,
    },
    Family {
        name: "graph",
        about: "code graph index over the CPython and Go stdlibs vs ast-grep and ctags",
        run: graph::run,
    },
    Family {
        name: "linux",
        about: "the code graph on the Linux 6.1 tree: clean index, and kfree's callers vs every kfree(…) call structural search finds",
        run: linux_graph::run,
    },
    Family {
        name: "precise",
        about: "the graph's compiler-grade indexers (SCIP) beside its tree-sitter build: time, RSS, refresh after a write",
        run: precise::run,
    },
    Family {
        name: "transaction",
        about: "commit journal: 100-file commit vs the pre-journal protocol, recovery after kill -9 of 1,000 files",
        run: transaction::run,
    },
];

/// What a family gets to work with.
#[derive(Debug)]
pub struct Context {
    /// The repository root.
    pub root: PathBuf,
    /// Cargo's target directory (honours `CARGO_TARGET_DIR` and config).
    pub target_dir: PathBuf,
    /// `PATH` with the project-local peers first.
    pub peer_path: OsString,
}

impl Context {
    /// The context of the repository at `root`: finds Cargo's target directory and the
    /// peers' PATH.
    pub fn new(root: &Path) -> Result<Self> {
        Ok(Self {
            root: root.to_path_buf(),
            target_dir: target_dir(root)?,
            peer_path: util::prepend_path(&Layout::new(root).path_entries())?,
        })
    }

    /// A `cargo` command run from the root.
    pub fn cargo(&self) -> Command {
        util::cargo(&self.root)
    }

    /// Runs `cargo run --release -p PACKAGE --example EXAMPLE ARGS…` with the peers on PATH
    /// and returns the JSON objects it printed, one per line (other lines are ignored).
    pub fn example_rows(
        &self,
        package: &str,
        example: &str,
        args: &[&str],
    ) -> Result<Vec<serde_json::Value>> {
        let mut cmd = self.cargo();
        cmd.args([
            "run",
            "--release",
            "-q",
            "-p",
            package,
            "--example",
            example,
        ])
        .args(args)
        .env("PATH", &self.peer_path);
        let out = util::capture(&mut cmd, Duration::from_secs(1800))
            .map_err(|e| format!("cannot run the {example} example: {e}"))?;
        if !out.success() {
            return Err(format!(
                "the {example} example failed: {}",
                out.stderr.trim()
            ));
        }
        let rows: Vec<serde_json::Value> = out
            .stdout
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if rows.is_empty() {
            return Err(format!("the {example} example printed no result"));
        }
        Ok(rows)
    }
}

/// The target directory, as cargo itself resolves it.
/// A goal row's result.
pub(crate) fn verdict(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "MISS"
    }
}

fn target_dir(root: &Path) -> Result<PathBuf> {
    let mut cmd = util::cargo(root);
    cmd.args(["metadata", "--format-version", "1", "--no-deps"]);
    let out = util::capture(&mut cmd, Duration::from_secs(120))
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.success() {
        return Err(format!("cargo metadata failed: {}", out.stderr.trim()));
    }
    let meta: serde_json::Value = serde_json::from_str(&out.stdout)
        .map_err(|e| format!("cargo metadata printed invalid JSON: {e}"))?;
    meta["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata has no target_directory".to_string())
}

/// `cargo xtask bench [NAME...]`.
pub fn run(root: &Path, names: &[String]) -> Result<()> {
    let selected: Vec<&Family> = if names.is_empty() {
        FAMILIES.iter().collect()
    } else {
        names
            .iter()
            .map(|n| {
                FAMILIES.iter().find(|f| f.name == n).ok_or_else(|| {
                    let known: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
                    format!("unknown benchmark `{n}`; known: {}", known.join(", "))
                })
            })
            .collect::<Result<_>>()?
    };
    let ctx = Context::new(root)?;
    let mut sections = Vec::new();
    let mut failures = Vec::new();
    for family in selected {
        eprintln!("\n==> bench {}: {}", family.name, family.about);
        match (family.run)(&ctx) {
            Ok(body) => {
                let body = format!(
                    "{}\n\n_Measured {} with `cargo xtask bench {}`._",
                    body.trim_end(),
                    util::utc_now(),
                    family.name
                );
                sections.push((family.name, body));
            }
            Err(e) => {
                eprintln!("bench {} failed: {e}", family.name);
                failures.push(format!("{}: {e}", family.name));
            }
        }
    }
    if !sections.is_empty() {
        let path = root.join("BENCHMARKS.md");
        let existing = match std::fs::read_to_string(&path) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let text = update_document(&existing, &header(), &sections)?;
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("\nwrote {}", path.display());
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} benchmark famil{} failed:\n  {}",
            failures.len(),
            if failures.len() == 1 { "y" } else { "ies" },
            failures.join("\n  ")
        ))
    }
}

/// The header: what ran where.
fn header() -> String {
    let nproc = util::capture(&mut Command::new("nproc"), Duration::from_secs(5))
        .ok()
        .filter(|c| c.success())
        .map(|c| c.stdout.trim().to_string())
        .unwrap_or_else(|| {
            std::thread::available_parallelism().map_or_else(|_| "?".into(), |n| n.to_string())
        });
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let rustc = util::capture(
        Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into())).arg("--version"),
        Duration::from_secs(30),
    )
    .ok()
    .map(|c| c.stdout.trim().to_string())
    .unwrap_or_default();
    format!(
        "# Benchmarks\n\
         \n\
         Written by `cargo xtask bench [NAME...]`; running a subset replaces only those sections \
         and keeps the others, so each section says when it was measured.\n\
         Machines are shared and noisy; quote ratios, not absolute numbers.\n\
         \n\
         - machine: {nproc} cores (`nproc`), {cpu}\n\
         - last run: {}\n\
         - rustc: {rustc}\n",
        util::utc_now()
    )
}

fn start_marker(name: &str) -> String {
    format!("<!-- bench:{name} -->")
}

fn end_marker(name: &str) -> String {
    format!("<!-- /bench:{name} -->")
}

/// One part of BENCHMARKS.md.
#[derive(Debug, PartialEq)]
enum Chunk {
    Text(String),
    Section { name: String, text: String },
}

/// Splits a document into free text and marked sections (each with its markers).
fn parse(doc: &str) -> Result<Vec<Chunk>> {
    let mut chunks = Vec::new();
    let mut text = String::new();
    let mut open: Option<(String, String)> = None;
    for line in doc.split_inclusive('\n') {
        let t = line.trim();
        match &mut open {
            None => {
                let name = t
                    .strip_prefix("<!-- bench:")
                    .and_then(|r| r.strip_suffix("-->"))
                    .map(str::trim);
                if let Some(name) = name {
                    if !text.is_empty() {
                        chunks.push(Chunk::Text(std::mem::take(&mut text)));
                    }
                    open = Some((name.to_string(), line.to_string()));
                } else if t.starts_with("<!-- /bench:") {
                    return Err(format!("BENCHMARKS.md: `{t}` closes no section"));
                } else {
                    text.push_str(line);
                }
            }
            Some((name, body)) => {
                body.push_str(line);
                if t == end_marker(name) {
                    if let Some((name, text)) = open.take() {
                        chunks.push(Chunk::Section { name, text });
                    }
                } else if t.starts_with("<!-- bench:") || t.starts_with("<!-- /bench:") {
                    return Err(format!(
                        "BENCHMARKS.md: section `{name}` is not closed before `{t}`"
                    ));
                }
            }
        }
    }
    if let Some((name, _)) = open {
        return Err(format!(
            "BENCHMARKS.md: section `{name}` has no `{}`; fix the file by hand",
            end_marker(&name)
        ));
    }
    if !text.is_empty() {
        chunks.push(Chunk::Text(text));
    }
    Ok(chunks)
}

fn render_section(name: &str, body: &str) -> String {
    format!(
        "{}\n{}\n{}\n",
        start_marker(name),
        body.trim(),
        end_marker(name)
    )
}

/// Replaces the header (all text before the first section) and the given sections of `doc`,
/// keeping every other section and text in place; sections not yet in `doc` are appended in
/// the order given.
pub fn update_document(doc: &str, header: &str, sections: &[(&str, String)]) -> Result<String> {
    let mut chunks = parse(doc)?;
    // The header is the leading text, if any.
    if matches!(chunks.first(), Some(Chunk::Text(_))) {
        chunks.remove(0);
    }
    let mut out = String::new();
    out.push_str(header.trim_end());
    out.push_str("\n\n");
    let mut done: Vec<&str> = Vec::new();
    for chunk in &chunks {
        match chunk {
            Chunk::Text(t) => out.push_str(t),
            Chunk::Section { name, text } => match sections.iter().find(|(n, _)| n == name) {
                Some((n, body)) => {
                    out.push_str(&render_section(n, body));
                    done.push(n);
                }
                None => out.push_str(text),
            },
        }
    }
    for (name, body) in sections.iter().filter(|(n, _)| !done.contains(n)) {
        if !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&render_section(name, body));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_document_gets_header_and_sections() {
        let doc = update_document(
            "",
            "# H\n",
            &[("a", "## A\nbody a".into()), ("b", "## B".into())],
        )
        .unwrap();
        assert_eq!(
            doc,
            "# H\n\n<!-- bench:a -->\n## A\nbody a\n<!-- /bench:a -->\n\n\
             <!-- bench:b -->\n## B\n<!-- /bench:b -->\n"
        );
    }

    #[test]
    fn subset_replaces_only_its_sections() {
        let old = "# old header\nold line\n\n\
                   <!-- bench:a -->\n## A\nold a\n<!-- /bench:a -->\n\n\
                   a note between sections\n\n\
                   <!-- bench:b -->\n## B\nold b\n<!-- /bench:b -->\n";
        let doc = update_document(old, "# new header", &[("b", "## B\nnew b\n".into())]).unwrap();
        assert_eq!(
            doc,
            "# new header\n\n\
             <!-- bench:a -->\n## A\nold a\n<!-- /bench:a -->\n\n\
             a note between sections\n\n\
             <!-- bench:b -->\n## B\nnew b\n<!-- /bench:b -->\n"
        );
        // Idempotent: running the same subset again gives the same file.
        let again = update_document(&doc, "# new header", &[("b", "## B\nnew b\n".into())]);
        assert_eq!(again.unwrap(), doc);
        // A new family is appended, the others stay.
        let more = update_document(&doc, "# h", &[("c", "## C".into())]).unwrap();
        assert!(more.contains("old a") && more.contains("new b"));
        assert!(more.ends_with("<!-- /bench:b -->\n\n<!-- bench:c -->\n## C\n<!-- /bench:c -->\n"));
    }

    #[test]
    fn broken_markers_are_refused() {
        let unclosed = "# h\n<!-- bench:a -->\nx\n";
        assert!(update_document(unclosed, "# h", &[("a", "y".into())])
            .unwrap_err()
            .contains("no `<!-- /bench:a -->`"));
        let nested = "<!-- bench:a -->\n<!-- bench:b -->\n<!-- /bench:b -->\n";
        assert!(update_document(nested, "# h", &[]).is_err());
        let stray = "<!-- /bench:a -->\n";
        assert!(update_document(stray, "# h", &[]).is_err());
    }

    #[test]
    fn families_have_unique_names() {
        for (i, f) in FAMILIES.iter().enumerate() {
            assert!(FAMILIES[..i].iter().all(|g| g.name != f.name));
            assert!(f
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        }
    }
}
