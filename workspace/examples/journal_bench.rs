//! Measures the commit journal for `cargo xtask bench transaction`; prints one JSON object
//! per line.
//!
//! - `journal_bench commit journaled|bare|legacy DIR FILES RUNS`: RUNS commits of FILES replaced
//!   files (about 4 KiB each, in ten folders). `journaled` is `Transaction::commit`;
//!   `legacy` is the protocol before the journal, rebuilt from the public API: the stale
//!   check, every temporary written and fsynced, a last look and a rename (with its folder
//!   fsync) per file, every parent fsynced; `bare` is today's protocol without its journal
//!   (the stale check, fsynced temporaries, a last look and a rename per file, each folder
//!   fsynced once), so `journaled / bare` is what the journal costs. Prints the median
//!   milliseconds and this process's peak RSS.
//! - `journal_bench interleaved DIR FILES ROUNDS`: the three variants one commit each in
//!   turn (the order rotating), ROUNDS times in one process, so each round's three share
//!   the machine's weather: the median of the per-round ratios, and each variant's median.
//! - `journal_bench kill DIR FILES TIMES`: TIMES times, a child commits FILES files and is
//!   killed with SIGKILL, half the times halfway through writing its temporary files, half
//!   halfway through its renames; a fresh process then recovers (`recover`), and its time,
//!   peak RSS and what it did are printed.
//! - `journal_bench child ROOT STATE FILES` and `journal_bench recover ROOT STATE`: the two
//!   sides of `kill` (`JOURNAL_BENCH_KEEP=1 journal_bench kill DIR FILES 1` stops after the
//!   kill and leaves the crashed tree in `DIR/kill-root`, to recover by hand, under strace
//!   say).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cc_workspace::{Transaction, Workspace};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn content(i: usize, version: u8) -> Vec<u8> {
    let mut text = format!("// file {i}\n");
    while text.len() < 4096 {
        text.push_str(&format!(
            "export const value_{i}_{} = {version};\n",
            text.len()
        ));
    }
    text.into_bytes()
}

fn path_of(root: &Path, i: usize) -> PathBuf {
    root.join(format!("m{}/f{i}.ts", i % 10))
}

fn lay_out(root: &Path, files: usize) -> Result<()> {
    if root.exists() {
        std::fs::remove_dir_all(root)?;
    }
    for i in 0..files {
        let path = path_of(root, i);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        std::fs::write(path, content(i, 1))?;
    }
    Ok(())
}

fn transaction(root: &Path, files: usize) -> Transaction {
    let mut tx = Transaction::new();
    for i in 0..files {
        tx.replace(path_of(root, i), content(i, 1), content(i, 2));
    }
    tx
}

/// The commit protocol before the journal, for replacements only, from the public API.
fn legacy_commit(ws: &Workspace, tx: &Transaction) -> Result<()> {
    let ops: Vec<(&Path, &[u8], &[u8])> = tx
        .ops()
        .iter()
        .filter_map(|op| match op {
            cc_workspace::FileOp::Replace {
                path,
                original,
                new,
            } => Some((path.as_path(), original.as_slice(), new.as_slice())),
            _ => None,
        })
        .collect();
    for (path, original, _) in &ops {
        if ws.read(path)? != *original {
            return Err("stale".into());
        }
    }
    let mut staged = Vec::with_capacity(ops.len());
    for (path, _, new) in &ops {
        staged.push(ws.stage_write(path, new)?);
    }
    for ((path, original, _), temp) in ops.iter().zip(staged) {
        if ws.read(path)? != *original {
            return Err("changed".into());
        }
        temp.persist()?;
    }
    for (path, _, _) in &ops {
        ws.sync_parent(path);
    }
    Ok(())
}

/// Today's protocol without the journal: what the journal is added to. Plain `std::fs`
/// (no confinement beneath the root handle, so a little cheaper than the real thing: the
/// journal's share comes out no smaller than it is).
fn bare_commit(tx: &Transaction) -> Result<()> {
    use std::io::Write as _;
    let mut ops = Vec::new();
    for op in tx.ops() {
        if let cc_workspace::FileOp::Replace {
            path,
            original,
            new,
        } = op
        {
            ops.push((path.as_path(), original.as_slice(), new.as_slice()));
        }
    }
    for (path, original, _) in &ops {
        if std::fs::read(path)? != *original {
            return Err("stale".into());
        }
    }
    let mut temps = Vec::with_capacity(ops.len());
    for (i, (path, _, new)) in ops.iter().enumerate() {
        let temp = path.with_file_name(format!(".bench-temp-{i}"));
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(new)?;
        file.sync_all()?;
        temps.push(temp);
    }
    let mut folders: Vec<&Path> = Vec::new();
    for ((path, original, _), temp) in ops.iter().zip(&temps) {
        if std::fs::read(path)? != *original {
            return Err("changed".into());
        }
        std::fs::rename(temp, path)?;
        if let Some(parent) = path.parent().filter(|p| !folders.contains(p)) {
            folders.push(parent);
        }
    }
    for folder in folders {
        std::fs::File::open(folder)?.sync_all()?;
    }
    Ok(())
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn commit_rows(variant: &str, dir: &Path, files: usize, runs: usize) -> Result<()> {
    let root = dir.join(format!("commit-{variant}"));
    let state = dir.join(format!("commit-{variant}-state"));
    let mut times = Vec::new();
    for _ in 0..runs {
        lay_out(&root, files)?;
        let ws = Workspace::new(&root)?.with_state_dir(&state);
        let tx = transaction(ws.path(), files);
        let started = Instant::now();
        match variant {
            "journaled" => {
                tx.commit(&ws)?;
            }
            "legacy" => legacy_commit(&ws, &tx)?,
            "bare" => bare_commit(&tx)?,
            other => return Err(format!("unknown variant {other}").into()),
        }
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{}",
        serde_json_line(&[
            ("row", format!("\"commit_{variant}\"")),
            ("files", files.to_string()),
            ("runs", runs.to_string()),
            ("median_ms", format!("{:.3}", times[times.len() / 2])),
            ("min_ms", format!("{:.3}", times[0])),
            ("rss_kib", peak_rss_kib().to_string()),
        ])
    );
    Ok(())
}

fn one_commit(variant: &str, root: &Path, state: &Path, files: usize) -> Result<f64> {
    lay_out(root, files)?;
    let ws = Workspace::new(root)?.with_state_dir(state);
    let tx = transaction(ws.path(), files);
    let started = Instant::now();
    match variant {
        "journaled" => {
            tx.commit(&ws)?;
        }
        "legacy" => legacy_commit(&ws, &tx)?,
        "bare" => bare_commit(&tx)?,
        other => return Err(format!("unknown variant {other}").into()),
    }
    Ok(started.elapsed().as_secs_f64() * 1e3)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn interleaved_rows(dir: &Path, files: usize, rounds: usize) -> Result<()> {
    const VARIANTS: [&str; 3] = ["journaled", "bare", "legacy"];
    let mut times: [Vec<f64>; 3] = Default::default();
    let (mut over_bare, mut over_legacy) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut this = [0.0; 3];
        for k in 0..3 {
            let v = (round + k) % 3;
            let root = dir.join(format!("interleaved-{}", VARIANTS[v]));
            let state = dir.join(format!("interleaved-{}-state", VARIANTS[v]));
            this[v] = one_commit(VARIANTS[v], &root, &state, files)?;
            times[v].push(this[v]);
        }
        over_bare.push(this[0] / this[1]);
        over_legacy.push(this[0] / this[2]);
    }
    let [journaled, bare, legacy] = times;
    println!(
        "{}",
        serde_json_line(&[
            ("row", "\"interleaved\"".into()),
            ("files", files.to_string()),
            ("rounds", rounds.to_string()),
            ("journaled_ms", format!("{:.3}", median(journaled))),
            ("bare_ms", format!("{:.3}", median(bare))),
            ("legacy_ms", format!("{:.3}", median(legacy))),
            ("over_bare", format!("{:.4}", median(over_bare))),
            ("over_legacy", format!("{:.4}", median(over_legacy))),
        ])
    );
    Ok(())
}

/// A JSON object from already-encoded values (the example has no serde).
fn serde_json_line(fields: &[(&str, String)]) -> String {
    let inner: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("\"{key}\": {value}"))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

fn count_temps(root: &Path) -> usize {
    (0..10)
        .filter_map(|m| std::fs::read_dir(root.join(format!("m{m}"))).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".cc-edit-"))
        .count()
}

fn kill_rows(dir: &Path, files: usize, times: usize) -> Result<()> {
    let me = std::env::current_exe()?;
    for time in 0..times {
        let root = dir.join("kill-root");
        let state = dir.join("kill-state");
        let _ = std::fs::remove_dir_all(&state);
        lay_out(&root, files)?;
        let mut child = Command::new(&me)
            .arg("child")
            .arg(&root)
            .arg(&state)
            .arg(files.to_string())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = std::io::BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            if line?.trim() == "ready" {
                break;
            }
        }
        // Halfway through the temporary files, or halfway through the renames.
        let staging = time % 2 == 0;
        let middle = path_of(&root, files / 2);
        let new_middle = content(files / 2, 2);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let reached = if staging {
                count_temps(&root) >= files / 2
            } else {
                std::fs::read(&middle).is_ok_and(|bytes| bytes == new_middle)
            };
            if reached || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id())?);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL)?;
        child.wait()?;
        if std::env::var_os("JOURNAL_BENCH_KEEP").is_some() {
            return Ok(());
        }
        let output = Command::new(&me)
            .arg("recover")
            .arg(&root)
            .arg(&state)
            .output()?;
        let line = String::from_utf8_lossy(&output.stdout);
        let line = line.trim();
        let moment = if staging { "staging" } else { "committing" };
        println!(
            "{}",
            line.replacen(
                '{',
                &format!("{{\"killed\": \"{moment}\", \"files\": {files}, "),
                1
            )
        );
    }
    Ok(())
}

fn child(root: &Path, state: &Path, files: usize) -> Result<()> {
    let ws = Workspace::new(root)?.with_state_dir(state);
    let tx = transaction(ws.path(), files);
    println!("ready");
    tx.commit(&ws)?;
    Ok(())
}

fn recover(root: &Path, state: &Path) -> Result<()> {
    let started = Instant::now();
    let ws = Workspace::new(root)?.with_state_dir(state);
    let report = ws.recover();
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let recovery = report.recovered.first().ok_or("nothing was recovered")?;
    println!(
        "{}",
        serde_json_line(&[
            ("row", "\"recover\"".into()),
            ("ms", format!("{ms:.3}")),
            ("rss_kib", peak_rss_kib().to_string()),
            ("direction", format!("\"{}\"", recovery.direction.as_str())),
            ("recovered_files", recovery.files.len().to_string()),
            ("temps_removed", recovery.temps_removed.len().to_string()),
        ])
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| -> Result<usize> {
        Ok(args.get(i).ok_or("missing argument")?.parse::<usize>()?)
    };
    let path =
        |i: usize| -> Result<PathBuf> { Ok(PathBuf::from(args.get(i).ok_or("missing argument")?)) };
    match args.first().map(String::as_str) {
        Some("commit") => commit_rows(
            args.get(1).ok_or("missing variant")?,
            &path(2)?,
            number(3)?,
            number(4)?,
        ),
        Some("kill") => kill_rows(&path(1)?, number(2)?, number(3)?),
        Some("interleaved") => interleaved_rows(&path(1)?, number(2)?, number(3)?),
        Some("child") => child(&path(1)?, &path(2)?, number(3)?),
        Some("recover") => recover(&path(1)?, &path(2)?),
        _ => Err("usage: journal_bench commit|kill|child|recover …".into()),
    }
}
