//! `graph`: the code graph's index (`cc-graph`) on two real trees side by side — a copy of
//! the machine's CPython standard library (as the structural bench copies it) and a copy of
//! the Go standard library of the installed Go (`go env GOROOT`, Debian's golang-src) — against
//! ast-grep parsing every file (a pattern whose name occurs nowhere) and universal-ctags
//! writing definitions only.
//!
//! Every run goes through the structural bench's `python3` wrapper (wall time, CPU time and
//! peak RSS of the child from `getrusage`), so every row pays the same overhead. Our side is
//! `cargo run --release -p cc-graph --example bench`: `open` with an empty cache (clean index)
//! and again with nothing changed (warm open), `queries` (symbol lookups) and `updates`
//! (one-file writes, each `Graph::update` re-extracting and re-resolving the file and its
//! dependents). The updates edit the copy, so they run last.

use super::verdict;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::structural::{copy_tree, load_average, measure, median, stdlib_dir, Measured};
use super::Context;
use crate::util::{self, Result};

/// Alternating runs of the clean index and ast-grep (and ctags); the median is reported.
const RUNS: usize = 3;
/// Warm opens; the median is reported.
const WARM_RUNS: usize = 3;
/// One-file updates, spread over the tree.
const UPDATES: &str = "30";
/// Symbol lookups, spread over the ranked definitions.
const QUERIES: &str = "200";

const CLEAN_GOAL: f64 = 1.5;
const WARM_GOAL: f64 = 0.25;
const UPDATE_P95_GOAL_MS: f64 = 50.0;
const QUERY_P50_GOAL_MS: f64 = 5.0;
const SIZE_GOAL: f64 = 1.0;
const RSS_GOAL_MB: f64 = 400.0;

/// A pattern whose name occurs in no file: ast-grep still parses every file.
pub(super) const ABSENT: &str = "no_such_name_anywhere($$$A)";

/// One tree to index.
struct Corpus {
    title: &'static str,
    /// ast-grep's and ctags' language names.
    ast_grep_language: &'static str,
    ctags_language: &'static str,
    dir: PathBuf,
    cache: PathBuf,
    files: usize,
    bytes: u64,
}

/// What one corpus measured.
#[derive(Default)]
struct Rows {
    ast_grep: Vec<Measured>,
    ctags: Vec<Measured>,
    clean: Vec<Measured>,
    warm: Vec<Measured>,
    queries: Option<Measured>,
    updates: Option<Measured>,
    /// The clean index's own report (counts, index bytes).
    clean_report: serde_json::Value,
    index_bytes: u64,
}

pub fn run(ctx: &Context) -> Result<String> {
    let dirs: Vec<PathBuf> = std::env::split_paths(&ctx.peer_path).collect();
    let python = util::find_executable("python3", dirs.clone())
        .ok_or("python3 is not on PATH; run `cargo xtask peers`")?;
    let ast_grep = util::find_executable("ast-grep", dirs.clone())
        .ok_or("ast-grep is not on PATH; run `cargo xtask peers` (it installs ast-grep-cli)")?;
    let ctags = util::find_executable("ctags", dirs.clone()).filter(|c| {
        util::capture(Command::new(c).arg("--version"), Duration::from_secs(30))
            .is_ok_and(|out| out.stdout.contains("Universal Ctags"))
    });
    let go = util::find_executable("go", dirs)
        .ok_or("go is not on PATH: the Go tree is the installed Go's standard library")?;
    let base = ctx.target_dir.join("bench-graph");
    let mut corpora = vec![
        prepare(
            "CPython stdlib",
            "python",
            "Python",
            &stdlib_dir(&python, &ctx.peer_path)?,
            &base.join("python"),
            "py",
        )?,
        prepare(
            "Go stdlib",
            "go",
            "Go",
            &goroot_src(&go, &ctx.peer_path)?,
            &base.join("go"),
            "go",
        )?,
    ];
    eprintln!("graph: building the bench example (release)");
    let mut build = ctx.cargo();
    build.args(["build", "--release", "-p", "cc-graph", "--example", "bench"]);
    util::run_to_stderr(&mut build)?;
    let bench = ctx
        .target_dir
        .join("release")
        .join("examples")
        .join("bench");
    if !bench.exists() {
        return Err(format!("{} was not built", bench.display()));
    }
    let versions = [
        version(&ast_grep, "--version"),
        ctags
            .as_ref()
            .map(|c| version(c, "--version"))
            .unwrap_or_else(|| "universal-ctags not installed".into()),
    ];

    let load_before = load_average();
    let mut measured = Vec::new();
    for corpus in &mut corpora {
        measured.push(measure_corpus(
            corpus,
            &python,
            &bench,
            &ast_grep,
            ctags.as_deref(),
            &ctx.peer_path,
        )?);
    }
    let load_after = load_average();
    Ok(render(
        &corpora,
        &measured,
        &versions,
        &load_before,
        &load_after,
    ))
}

fn version(program: &Path, flag: &str) -> String {
    util::capture(Command::new(program).arg(flag), Duration::from_secs(30))
        .ok()
        .and_then(|c| c.stdout.lines().next().map(|l| l.trim().to_owned()))
        .unwrap_or_default()
}

/// `$(go env GOROOT)/src`, symlinks resolved (Debian links it into /usr/share).
fn goroot_src(go: &Path, path: &OsString) -> Result<PathBuf> {
    let mut cmd = Command::new(go);
    cmd.args(["env", "GOROOT"]).env("PATH", path);
    let out = util::capture(&mut cmd, Duration::from_secs(60))
        .map_err(|e| format!("cannot run go env: {e}"))?;
    let src = PathBuf::from(out.stdout.trim()).join("src");
    src.canonicalize().map_err(|e| {
        format!(
            "the Go standard library {} is not there: {e}",
            src.display()
        )
    })
}

fn prepare(
    title: &'static str,
    ast_grep_language: &'static str,
    ctags_language: &'static str,
    from: &Path,
    to: &Path,
    ext: &str,
) -> Result<Corpus> {
    eprintln!("graph: copying {} to {}", from.display(), to.display());
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| format!("cannot clear {}: {e}", to.display()))?;
    }
    let (files, bytes) = copy_tree(from, to, ext)?;
    let cache = to.with_extension("cache");
    Ok(Corpus {
        title,
        ast_grep_language,
        ctags_language,
        dir: to.to_path_buf(),
        cache,
        files,
        bytes,
    })
}

pub(super) fn os(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    args.iter().map(|a| a.as_ref().to_os_string()).collect()
}

/// Runs one of our rows and checks it exited well.
fn ours(python: &Path, corpus: &Corpus, argv: Vec<OsString>, path: &OsString) -> Result<Measured> {
    let m = measure(python, &corpus.dir, &argv, path)?;
    if m.code != 0 {
        return Err(format!(
            "`{}` exited with {} (run it by hand to see why)",
            argv.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            m.code
        ));
    }
    Ok(m)
}

/// The first JSON line a bench example printed.
pub(super) fn report(m: &Measured) -> Result<serde_json::Value> {
    m.output
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| format!("the bench example printed no JSON: {}", m.output.trim()))
}

fn measure_corpus(
    corpus: &mut Corpus,
    python: &Path,
    bench: &Path,
    ast_grep: &Path,
    ctags: Option<&Path>,
    path: &OsString,
) -> Result<Rows> {
    let mut rows = Rows::default();
    let open = os(&[&bench, &"open", &corpus.dir, &corpus.cache]);
    for run in 0..RUNS {
        eprintln!("graph: {} run {}/{RUNS}", corpus.title, run + 1);
        rows.ast_grep.push(measure(
            python,
            &corpus.dir,
            &os(&[
                &ast_grep,
                &"run",
                &"-l",
                &corpus.ast_grep_language,
                &"--json=stream",
                &"-p",
                &ABSENT,
                &".",
            ]),
            path,
        )?);
        if corpus.cache.exists() {
            std::fs::remove_dir_all(&corpus.cache)
                .map_err(|e| format!("cannot clear {}: {e}", corpus.cache.display()))?;
        }
        let clean = ours(python, corpus, open.clone(), path)?;
        rows.clean_report = report(&clean)?;
        rows.clean.push(clean);
        if let Some(ctags) = ctags {
            rows.ctags.push(measure(
                python,
                &corpus.dir,
                &os(&[
                    &ctags,
                    &"-R",
                    &format!("--languages={}", corpus.ctags_language),
                    &"-f",
                    &"-",
                    &".",
                ]),
                path,
            )?);
        }
    }
    if rows.clean_report["rebuilt"] != serde_json::Value::Bool(true) {
        return Err(format!(
            "the clean index did not rebuild: {}",
            rows.clean_report
        ));
    }
    rows.index_bytes = dir_bytes(&corpus.cache);
    for _ in 0..WARM_RUNS {
        let warm = ours(python, corpus, open.clone(), path)?;
        let r = report(&warm)?;
        if r["extracted"].as_u64() != Some(0) {
            return Err(format!("a warm open re-extracted files: {r}"));
        }
        rows.warm.push(warm);
    }
    eprintln!("graph: {} queries", corpus.title);
    rows.queries = Some(ours(
        python,
        corpus,
        os(&[&bench, &"queries", &corpus.dir, &corpus.cache, &QUERIES]),
        path,
    )?);
    eprintln!("graph: {} updates", corpus.title);
    rows.updates = Some(ours(
        python,
        corpus,
        os(&[&bench, &"updates", &corpus.dir, &corpus.cache, &UPDATES]),
        path,
    )?);
    Ok(rows)
}

/// Total size of the files under `dir` (the index and any write-ahead log).
fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn mb(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn wall(ms: &[Measured]) -> f64 {
    median(ms.iter().map(|m| m.wall))
}

fn cpu(ms: &[Measured]) -> f64 {
    median(ms.iter().map(|m| m.cpu))
}

fn peak(ms: &[Measured]) -> u64 {
    ms.iter().map(|m| m.rss_kib).max().unwrap_or(0)
}

fn render(
    corpora: &[Corpus],
    rows: &[Rows],
    versions: &[String; 2],
    load_before: &str,
    load_after: &str,
) -> String {
    let mut md = String::from("## graph — the code graph's index vs ast-grep and ctags\n\n");
    intro(&mut md, corpora, versions);
    let mut header = String::from("| row | goal |");
    let mut rule = String::from("|---|---|");
    for c in corpora {
        let _ = write!(header, " {} | |", c.title);
        rule.push_str("---|---|");
    }
    let _ = writeln!(md, "{header}\n{rule}");
    reference_lines(&mut md, rows);
    speed_lines(&mut md, rows);
    size_lines(&mut md, corpora, rows);
    footer(&mut md, corpora, rows, load_before, load_after);
    md
}

/// What was run, how, and on which trees.
fn intro(md: &mut String, corpora: &[Corpus], versions: &[String; 2]) {
    let trees: Vec<String> = corpora
        .iter()
        .map(|c| {
            format!(
                "{} ({} files, {:.1} MB of source)",
                c.title,
                c.files,
                c.bytes as f64 / 1e6
            )
        })
        .collect();
    let _ = writeln!(
        md,
        "`cargo run --release -p cc-graph --example bench` over copies of the {} side by side. \
         *Clean index*: `open` with an empty cache (walk, parse, extract, resolve, write \
         SQLite), {RUNS} runs alternating with ast-grep (`ast-grep run -l LANG --json=stream -p \
         '{ABSENT}'`, every file parsed; {}) and universal-ctags (`ctags -R --languages=LANG -f \
         -`, definitions only, no references; {}); medians of wall time, CPU (user + system) \
         beside, peak RSS from `getrusage`. *Warm open*: `open` again with nothing changed \
         ({WARM_RUNS} runs). *Update*: {UPDATES} files spread over the tree each get a \
         function appended and one `Graph::update` (re-extraction, then re-resolution of the \
         file and of every file whose recorded lookups it touches). *Query*: `symbols` for \
         {QUERIES} definition names spread over the ranked list.\n",
        trees.join(" and "),
        versions[0],
        versions[1],
    );
}

/// One row of the table: its name, its goal, and per tree the value and the verdict.
fn line(md: &mut String, name: &str, goal: &str, cells: Vec<(String, String)>) {
    let mut s = format!("| {name} | {goal} |");
    for (value, result) in cells {
        let _ = write!(s, " {value} | {result} |");
    }
    let _ = writeln!(md, "{s}");
}

/// The references' rows: ast-grep's parse-all and ctags.
fn reference_lines(md: &mut String, rows: &[Rows]) {
    line(
        md,
        "ast-grep, absent pattern (every file parsed)",
        "reference",
        rows.iter()
            .map(|r| {
                (
                    format!(
                        "{:.2} s, CPU {:.2} s, {:.0} MB",
                        wall(&r.ast_grep),
                        cpu(&r.ast_grep),
                        mb(peak(&r.ast_grep))
                    ),
                    "–".into(),
                )
            })
            .collect(),
    );
    line(
        md,
        "universal-ctags, definitions only",
        "reference",
        rows.iter()
            .map(|r| {
                if r.ctags.is_empty() {
                    ("not installed".into(), "–".into())
                } else {
                    (
                        format!(
                            "{:.2} s ({:.2}× ast-grep), {:.0} MB",
                            wall(&r.ctags),
                            wall(&r.ctags) / wall(&r.ast_grep),
                            mb(peak(&r.ctags))
                        ),
                        "–".into(),
                    )
                }
            })
            .collect(),
    );
}

/// The clean index, the warm open, the one-file update and the symbol query against their
/// goals.
fn speed_lines(md: &mut String, rows: &[Rows]) {
    line(
        md,
        "clean index",
        &format!("≤ {CLEAN_GOAL}× ast-grep"),
        rows.iter()
            .map(|r| {
                let ratio = wall(&r.clean) / wall(&r.ast_grep);
                (
                    format!(
                        "{:.2} s, **{ratio:.2}×** (CPU {:.2} s, {:.2}×)",
                        wall(&r.clean),
                        cpu(&r.clean),
                        cpu(&r.clean) / cpu(&r.ast_grep)
                    ),
                    verdict(ratio <= CLEAN_GOAL).into(),
                )
            })
            .collect(),
    );
    line(
        md,
        "warm open, nothing changed",
        &format!("≤ {WARM_GOAL}× clean"),
        rows.iter()
            .map(|r| {
                let ratio = wall(&r.warm) / wall(&r.clean);
                (
                    format!("{:.2} s, **{ratio:.3}×**", wall(&r.warm)),
                    verdict(ratio <= WARM_GOAL).into(),
                )
            })
            .collect(),
    );
    let field = |m: &Option<Measured>, key: &str| -> f64 {
        m.as_ref()
            .and_then(|m| report(m).ok())
            .and_then(|v| v[key].as_f64())
            .unwrap_or(f64::NAN)
    };
    line(
        md,
        "one-file update incl. re-resolution, p95",
        &format!("≤ {UPDATE_P95_GOAL_MS:.0} ms"),
        rows.iter()
            .map(|r| {
                let p95 = field(&r.updates, "p95_ms");
                (
                    format!(
                        "**{p95:.1} ms** (p50 {:.1} ms, max {:.1} ms; {} files re-resolved at p50)",
                        field(&r.updates, "p50_ms"),
                        field(&r.updates, "max_ms"),
                        field(&r.updates, "re_resolved_p50"),
                    ),
                    verdict(p95 <= UPDATE_P95_GOAL_MS).into(),
                )
            })
            .collect(),
    );
    line(
        md,
        "symbol query, p50",
        &format!("≤ {QUERY_P50_GOAL_MS:.0} ms"),
        rows.iter()
            .map(|r| {
                let p50 = field(&r.queries, "p50_ms");
                (
                    format!(
                        "**{p50:.2} ms** (p95 {:.2} ms)",
                        field(&r.queries, "p95_ms")
                    ),
                    verdict(p50 <= QUERY_P50_GOAL_MS).into(),
                )
            })
            .collect(),
    );
}

/// The index's size and the peak memory against their goals.
fn size_lines(md: &mut String, corpora: &[Corpus], rows: &[Rows]) {
    line(
        md,
        "index size",
        &format!("≤ {SIZE_GOAL:.0}× source bytes"),
        corpora
            .iter()
            .zip(rows)
            .map(|(c, r)| {
                let ratio = r.index_bytes as f64 / c.bytes.max(1) as f64;
                (
                    format!("{:.1} MB, **{ratio:.2}×**", r.index_bytes as f64 / 1e6),
                    verdict(ratio <= SIZE_GOAL).into(),
                )
            })
            .collect(),
    );
    line(
        md,
        "peak RSS, any of our runs",
        &format!("≤ {RSS_GOAL_MB:.0} MB"),
        rows.iter()
            .map(|r| {
                let all: Vec<u64> = [
                    peak(&r.clean),
                    peak(&r.warm),
                    r.queries.as_ref().map_or(0, |m| m.rss_kib),
                    r.updates.as_ref().map_or(0, |m| m.rss_kib),
                ]
                .into();
                let ours = all.into_iter().max().unwrap_or(0);
                (
                    format!(
                        "**{:.0} MB** (warm open {:.0} MB; ast-grep {:.0} MB)",
                        mb(ours),
                        mb(peak(&r.warm)),
                        mb(peak(&r.ast_grep))
                    ),
                    verdict(mb(ours) <= RSS_GOAL_MB).into(),
                )
            })
            .collect(),
    );
}

/// What each index holds, and the machine's load.
fn footer(md: &mut String, corpora: &[Corpus], rows: &[Rows], load_before: &str, load_after: &str) {
    let counts: Vec<String> = corpora
        .iter()
        .zip(rows)
        .map(|(c, r)| {
            let v = &r.clean_report;
            format!(
                "{}: {} files indexed, {} definitions, {} references, {} edges at the \
                 default confidence, {} name-only edges (kept, excluded by default), {} \
                 ambiguous references left unresolved",
                c.title,
                v["files"],
                v["definitions"],
                v["references"],
                v["edges"],
                v["name_edges"],
                v["ambiguous"]
            )
        })
        .collect();
    let _ = writeln!(
        md,
        "\n{}.\n\nWall-time ratios are the goals; CPU time is shown because it moves less \
         when others load the machine. ast-grep only parses (its absent pattern never \
         matches); the clean index also runs the tags queries, resolves every reference and \
         writes the index. Load average (1 min) before and after: {load_before} → \
         {load_after}.",
        counts.join("; ")
    );
}
