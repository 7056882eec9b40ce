//! `structural`: `cc-harness call ast_grep` vs ast-grep (`ast-grep run -l python
//! --json=stream`) over a copy of the machine's CPython standard library (without
//! site-packages), alternating runs, for patterns whose literal is rare, common, absent or
//! everywhere. Every call asks for all the matches (`max_results` past the total), so both
//! sides return every match with its text; peak RSS is recorded beside the times.
//!
//! Each run goes through a small `python3` wrapper that times the child and reads its peak
//! RSS from `getrusage(RUSAGE_CHILDREN)`, so both sides pay the same overhead. ast-grep skips
//! files that are not UTF-8; our matches in those files are counted separately so the counts
//! compare like for like.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::Context;
use crate::util::{self, Result};

/// Alternating runs per side and case; the median is reported.
const RUNS: usize = 5;

/// How counts must compare with ast-grep's.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Counts {
    /// Equal (ast-grep is right for this pattern).
    Equal,
    /// More (ast-grep misses annotated defs).
    More,
}

/// (pattern, goal: maximum wall-time ratio ours / ast-grep, counts, what it shows).
const CASES: &[(&str, f64, Counts, &str)] = &[
    ("warnings.warn($$$A)", 0.4, Counts::Equal, "rare literal"),
    ("$X.setdefault($$$A)", 0.4, Counts::Equal, "rare literal"),
    (
        "no_such_name_anywhere($$$A)",
        0.2,
        Counts::Equal,
        "absent name",
    ),
    ("print($$$A)", 0.7, Counts::Equal, "common literal"),
    ("if $A: $$$B", 1.0, Counts::Equal, "every file parsed"),
    ("def $F($$$P): $$$B", 1.0, Counts::More, "annotated defs"),
];

/// Peak RSS goal: ours at most this times ast-grep's.
const RSS_GOAL: f64 = 1.5;

/// `max_results` of every call: more than any row's total, so every match is returned.
const ALL_RESULTS: usize = 10_000_000;

/// Runs argv[2:] with stdout to argv[1] and prints `wall_seconds peak_rss_kib exit_code
/// cpu_seconds`.
const WRAPPER: &str = "import resource, subprocess, sys, time\n\
out = open(sys.argv[1], 'wb')\n\
start = time.perf_counter()\n\
code = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL).returncode\n\
wall = time.perf_counter() - start\n\
usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n\
print(wall, usage.ru_maxrss, code, usage.ru_utime + usage.ru_stime)\n";

pub(super) struct Measured {
    pub wall: f64,
    /// User plus system time: steadier than wall time on a shared machine.
    pub cpu: f64,
    pub rss_kib: u64,
    /// The child's exit code.
    pub code: i32,
    pub output: String,
}

pub fn run(ctx: &Context) -> Result<String> {
    let dirs: Vec<PathBuf> = std::env::split_paths(&ctx.peer_path).collect();
    let python = util::find_executable("python3", dirs.clone())
        .ok_or("python3 is not on PATH; run `cargo xtask peers`")?;
    let ast_grep = util::find_executable("ast-grep", dirs)
        .ok_or("ast-grep is not on PATH; run `cargo xtask peers` (it installs ast-grep-cli)")?;
    let stdlib = stdlib_dir(&python, &ctx.peer_path)?;
    let corpus = ctx.target_dir.join("bench-structural").join("stdlib");
    eprintln!(
        "structural: copying {} to {}",
        stdlib.display(),
        corpus.display()
    );
    if corpus.exists() {
        std::fs::remove_dir_all(&corpus)
            .map_err(|e| format!("cannot clear {}: {e}", corpus.display()))?;
    }
    let (files, bytes) = copy_tree(&stdlib, &corpus, "py")?;
    let not_utf8 = non_utf8_sources(&corpus)?;
    eprintln!("structural: building cc-harness (release)");
    let mut build = ctx.cargo();
    build.args(["build", "--release", "-p", "cc-harness-adapter"]);
    util::run_to_stderr(&mut build)?;
    let harness = ctx.target_dir.join("release").join("cc-harness");
    if !harness.exists() {
        return Err(format!("{} was not built", harness.display()));
    }
    let version = util::capture(
        Command::new(&ast_grep).arg("--version"),
        Duration::from_secs(30),
    )
    .map(|c| c.stdout.trim().to_string())
    .unwrap_or_default();

    let mut md = format!(
        "## structural — `ast_grep` vs ast-grep\n\n\
         `cc-harness call ast_grep '{{\"pattern\": …, \"language\": \"python\", \"path\": \".\", \"max_results\": {ALL_RESULTS}}}' \
         --root <copy>` vs `ast-grep run -l python --json=stream -p …` ({version}) over a copy of \
         the CPython standard library ({files} .py files, {:.1} MB, site-packages left out), \
         {RUNS} alternating runs each, median wall time, peak RSS from `getrusage`. ast-grep skips \
         the {} files that are not UTF-8; \"ours in UTF-8 files\" leaves our matches in them out.\n\n\
         | pattern | case | ast-grep matches | ours | ours in UTF-8 files | ast-grep | ours | ours / ast-grep | goal | CPU ours / ast-grep | peak RSS ast-grep / ours | RSS ours / ast-grep | result |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        bytes as f64 / 1e6,
        not_utf8.len(),
    );
    let load_before = load_average();
    let mut summary = Vec::new();
    let setup = Setup {
        python: &python,
        ast_grep: &ast_grep,
        harness: &harness,
        corpus: &corpus,
        not_utf8: &not_utf8,
        peer_path: &ctx.peer_path,
    };
    for case in CASES {
        let (row, verdict) = setup.case(case)?;
        md.push_str(&row);
        summary.push(verdict);
    }
    let _ = writeln!(
        md,
        "\nGoals: wall-time ratio per row (CPU time is shown because it moves less when \
         others load the machine); peak RSS ≤ {RSS_GOAL:.1}× ast-grep's; counts equal to \
         ast-grep's on the files it reads, and more for `def $F($$$P): $$$B` (ast-grep does \
         not match defs with a return annotation). Files whose bytes lack the pattern's \
         literal are never parsed, which is where the rare-literal rows gain. Our side \
         returns every match: the workers serialize each file's matches into a spool and \
         `call` copies it to stdout. Load average (1 min) of the machine before and after: \
         {load_before} → {}.",
        load_average()
    );
    let (row, verdict) = repeated_search(&python, &harness, &corpus, &ctx.peer_path)?;
    md.push_str(&row);
    summary.push(format!("repeated search: {verdict}"));
    eprintln!("structural: {}", summary.join("; "));
    Ok(md)
}

/// What every case of the comparison runs with.
struct Setup<'a> {
    python: &'a Path,
    ast_grep: &'a Path,
    harness: &'a Path,
    corpus: &'a Path,
    /// The corpus's files that are not UTF-8 (ast-grep skips them).
    not_utf8: &'a [PathBuf],
    peer_path: &'a OsString,
}

impl Setup<'_> {
    /// One pattern, run alternately by both sides: its table row, and its summary.
    fn case(&self, case: &(&str, f64, Counts, &str)) -> Result<(String, String)> {
        let (pattern, goal, counts, what) = case;
        let (python, corpus, harness) = (self.python, self.corpus, self.harness);
        eprintln!("structural: {pattern}");
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..RUNS {
            theirs.push(measure(
                python,
                corpus,
                &[
                    self.ast_grep.as_os_str().into(),
                    "run".into(),
                    "-l".into(),
                    "python".into(),
                    "--json=stream".into(),
                    "-p".into(),
                    (*pattern).into(),
                    ".".into(),
                ],
                self.peer_path,
            )?);
            ours.push(measure(
                python,
                corpus,
                &harness_args(harness, corpus, pattern, "."),
                self.peer_path,
            )?);
        }
        let their_count = theirs[0]
            .output
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count();
        let our_count = total_of(&ours[0].output)?;
        let in_skipped = self.found_in_non_utf8(pattern)?;
        let comparable = our_count - in_skipped.min(our_count);
        let ratio = median(ours.iter().map(|m| m.wall)) / median(theirs.iter().map(|m| m.wall));
        let cpu_ratio = median(ours.iter().map(|m| m.cpu)) / median(theirs.iter().map(|m| m.cpu));
        let our_rss = ours.iter().map(|m| m.rss_kib).max().unwrap_or(0);
        let their_rss = theirs.iter().map(|m| m.rss_kib).max().unwrap_or(1).max(1);
        let rss_ratio = our_rss as f64 / their_rss as f64;
        let counts_ok = match counts {
            Counts::Equal => comparable == their_count,
            Counts::More => comparable > their_count,
        };
        let verdict = if ratio <= *goal && rss_ratio <= RSS_GOAL && counts_ok {
            "PASS"
        } else {
            "MISS"
        };
        let count_goal = match counts {
            Counts::Equal => "=",
            Counts::More => "more",
        };
        let row = format!(
            "| `{pattern}` | {what} | {their_count} | {our_count} | {comparable} ({count_goal}) | {:.2} s | {:.2} s | **{ratio:.2}×** | ≤ {goal:.1}× | {cpu_ratio:.2}× | {:.1} / {:.1} MB | {rss_ratio:.2}× | {verdict} |\n",
            median(theirs.iter().map(|m| m.wall)),
            median(ours.iter().map(|m| m.wall)),
            their_rss as f64 / 1024.0,
            our_rss as f64 / 1024.0,
        );
        Ok((row, format!("{pattern}: {ratio:.2}× {verdict}")))
    }

    /// Our matches in the files that are not UTF-8.
    fn found_in_non_utf8(&self, pattern: &str) -> Result<usize> {
        let mut in_skipped = 0;
        for file in self.not_utf8 {
            let relative = file
                .strip_prefix(self.corpus)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned();
            let one = measure(
                self.python,
                self.corpus,
                &harness_args(self.harness, self.corpus, pattern, &relative),
                self.peer_path,
            )?;
            in_skipped += total_of(&one.output)?;
        }
        Ok(in_skipped)
    }
}

/// The tree cache's goal: a repeated search at most this times the first.
const REPEAT_GOAL: f64 = 0.3;

/// Its budget for the row (`[structural] tree_cache_mb`): enough for the whole corpus.
const REPEAT_BUDGET_MB: usize = 1024;

/// One `cc-harness mcp` over the corpus, the same `ast_grep` call three times (every file
/// parsed); times taken by the client, per call.
const REPEAT_CLIENT: &str = r#"import json, resource, subprocess, sys, time
harness, root, pattern = sys.argv[1:4]
p = subprocess.Popen([harness, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(msg):
    p.stdin.write((json.dumps(msg) + "\n").encode()); p.stdin.flush()
def recv(want):
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("the server closed its output")
        msg = json.loads(line)
        if msg.get("id") == want:
            return msg
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
recv(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
times, totals = [], []
for i in range(3):
    start = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": "ast_grep", "arguments": {"pattern": pattern, "language": "python", "path": ".", "max_results": 20}}})
    answer = recv(10 + i)
    times.append(time.perf_counter() - start)
    totals.append((answer.get("result", {}).get("structuredContent") or {}).get("total"))
p.stdin.close(); p.wait()
print(json.dumps({"times": times, "totals": totals, "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"#;

/// The repeated-search row: the first call parses every file, the next ones reuse the
/// trees of the run's cache.
fn repeated_search(
    python: &Path,
    harness: &Path,
    corpus: &Path,
    peer_path: &OsString,
) -> Result<(String, String)> {
    let pattern = "if $A: $$$B";
    eprintln!("structural: repeated search ({pattern})");
    let config = corpus.join(".cc");
    std::fs::create_dir_all(&config)
        .map_err(|e| format!("cannot create {}: {e}", config.display()))?;
    std::fs::write(
        config.join("tools.toml"),
        format!("[structural]\ntree_cache_mb = {REPEAT_BUDGET_MB}\n"),
    )
    .map_err(|e| format!("cannot write the corpus's tools.toml: {e}"))?;
    let output = util::capture(
        Command::new(python)
            .args(["-c", REPEAT_CLIENT])
            .arg(harness)
            .arg(corpus)
            .arg(pattern)
            .env("PATH", peer_path),
        Duration::from_secs(1200),
    );
    let _ = std::fs::remove_dir_all(&config);
    let output = output.map_err(|e| format!("cannot run the repeated-search client: {e}"))?;
    let report: serde_json::Value = serde_json::from_str(output.stdout.trim()).map_err(|e| {
        format!(
            "the repeated-search client printed no report ({e}): {}",
            output.stdout
        )
    })?;
    let times: Vec<f64> = report["times"]
        .as_array()
        .map(|t| t.iter().filter_map(serde_json::Value::as_f64).collect())
        .unwrap_or_default();
    let totals = report["totals"].to_string();
    let (Some(first), Some(repeat)) = (
        times.first().copied(),
        times.get(1..).map(|r| median(r.iter().copied())),
    ) else {
        return Err("the repeated-search client measured nothing".into());
    };
    let ratio = repeat / first;
    let same = report["totals"]
        .as_array()
        .is_some_and(|t| t.windows(2).all(|w| w[0] == w[1]) && t[0].is_u64());
    let verdict = if ratio <= REPEAT_GOAL && same {
        "PASS"
    } else {
        "MISS"
    };
    let rss = report["rss_kib"].as_f64().unwrap_or(0.0) / 1024.0;
    let row = format!(
        "\n### structural — repeated search (tree cache)\n\n\
         One `cc-harness mcp` run over the same corpus, `ast_grep` `{pattern}` (every file \
         parsed) called three times; times taken by the client per call; the tree cache's \
         budget set to {REPEAT_BUDGET_MB} MiB (`[structural] tree_cache_mb`; default 256 MiB, \
         estimated as 128 bytes per syntax node) so that every tree of the corpus fits. \
         `cc-harness call` (the rows above) keeps no trees.\n\n\
         | first call | repeated call (median of 2) | repeated / first | goal | totals | peak RSS | result |\n\
         |---|---|---|---|---|---|---|\n\
         | {first:.2} s | {repeat:.2} s | **{ratio:.2}×** | ≤ {REPEAT_GOAL:.1}× | {totals} | {rss:.0} MB | {verdict} |\n"
    );
    Ok((row, format!("{ratio:.2}× {verdict}")))
}

/// The 1-minute load average, as `/proc/loadavg` gives it (the machine may be shared).
pub(super) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn harness_args(harness: &Path, corpus: &Path, pattern: &str, path: &str) -> Vec<OsString> {
    let args = serde_json::json!({
        "pattern": pattern,
        "language": "python",
        "path": path,
        "max_results": ALL_RESULTS,
    });
    vec![
        harness.as_os_str().into(),
        "call".into(),
        "ast_grep".into(),
        args.to_string().into(),
        "--root".into(),
        corpus.as_os_str().into(),
    ]
}

fn total_of(output: &str) -> Result<usize> {
    let value: serde_json::Value = serde_json::from_str(output)
        .map_err(|e| format!("cc-harness printed no JSON ({e}): {}", output.trim()))?;
    value["total"]
        .as_u64()
        .map(|n| n as usize)
        .ok_or_else(|| format!("cc-harness answered without `total`: {value}"))
}

pub(super) fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

pub(super) fn measure(
    python: &Path,
    dir: &Path,
    argv: &[OsString],
    path: &OsString,
) -> Result<Measured> {
    measure_within(python, dir, argv, path, Duration::from_secs(600))
}

/// [`measure`], for a child that may take up to `limit`.
pub(super) fn measure_within(
    python: &Path,
    dir: &Path,
    argv: &[OsString],
    path: &OsString,
    limit: Duration,
) -> Result<Measured> {
    let out_file = dir
        .parent()
        .unwrap_or(dir)
        .join(format!("bench-output-{}.txt", std::process::id()));
    let mut cmd = Command::new(python);
    cmd.arg("-c")
        .arg(WRAPPER)
        .arg(&out_file)
        .args(argv)
        .current_dir(dir)
        .env("PATH", path);
    let captured = util::capture(&mut cmd, limit)
        .map_err(|e| format!("cannot run the timing wrapper: {e}"))?;
    if !captured.success() {
        return Err(format!(
            "the timing wrapper failed: {}{}",
            captured.stdout.trim(),
            captured.stderr.trim()
        ));
    }
    let fields: Vec<&str> = captured.stdout.split_whitespace().collect();
    let (Some(wall), Some(rss), Some(code), Some(cpu)) = (
        fields.first().and_then(|w| w.parse::<f64>().ok()),
        fields.get(1).and_then(|r| r.parse::<u64>().ok()),
        fields.get(2).and_then(|c| c.parse::<i32>().ok()),
        fields.get(3).and_then(|c| c.parse::<f64>().ok()),
    ) else {
        return Err(format!(
            "the timing wrapper printed `{}`",
            captured.stdout.trim()
        ));
    };
    let output = std::fs::read_to_string(&out_file).unwrap_or_default();
    let _ = std::fs::remove_file(&out_file);
    Ok(Measured {
        wall,
        cpu,
        rss_kib: rss,
        code,
        output,
    })
}

pub(super) fn stdlib_dir(python: &Path, path: &OsString) -> Result<PathBuf> {
    let mut cmd = Command::new(python);
    cmd.args([
        "-c",
        "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
    ])
    .env("PATH", path);
    let out = util::capture(&mut cmd, Duration::from_secs(30))
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let dir = PathBuf::from(out.stdout.trim());
    if !out.success() || !dir.is_dir() {
        return Err(format!(
            "python3 gave no stdlib folder: {}",
            out.stderr.trim()
        ));
    }
    Ok(dir)
}

/// Copies `from` to `to`, skipping `site-packages` and `__pycache__`; returns the number and
/// total size of the files copied whose extension is `ext`.
pub(super) fn copy_tree(from: &Path, to: &Path, ext: &str) -> Result<(usize, u64)> {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        std::fs::create_dir_all(&dst)
            .map_err(|e| format!("cannot create {}: {e}", dst.display()))?;
        let entries =
            std::fs::read_dir(&src).map_err(|e| format!("cannot list {}: {e}", src.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name == "site-packages" || name == "__pycache__" {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let target = dst.join(&name);
            if kind.is_dir() {
                stack.push((entry.path(), target));
            } else if kind.is_file() {
                let copied = std::fs::copy(entry.path(), &target)
                    .map_err(|e| format!("cannot copy {}: {e}", entry.path().display()))?;
                if Path::new(&name).extension().is_some_and(|e| e == ext) {
                    files += 1;
                    bytes += copied;
                }
            }
        }
    }
    Ok((files, bytes))
}

/// `.py` files under `dir` that are not valid UTF-8 (ast-grep skips them).
fn non_utf8_sources(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let entries = std::fs::read_dir(&current)
            .map_err(|e| format!("cannot list {}: {e}", current.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "py") {
                let data = std::fs::read(&path).unwrap_or_default();
                if std::str::from_utf8(&data).is_err() {
                    out.push(path);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}
