//! `kill -9` of `cc-harness mcp` in the middle of multi-file writes on real projects, then a
//! new `cc-harness` on the same root: the tree is byte for byte all-old or all-new, no
//! temporary file is left, and the recovery is reported in the new run's first result (or
//! by `cc-harness status`, which recovers too).
//!
//! Three writers, each a many-file transaction: `resolve accept` of an `ast_edit` over
//! zod's `src` (129 files), a multi-file `apply_patch` on zod (120 files changed, one
//! created in a new folder, one deleted), and `lsp_rename` on requests with basedpyright
//! (when it is installed). Most kills are timed from the moment the commit's journal appears
//! (a random delay within the commit's measured length), some from the moment the call is
//! sent, so the moments before the journal are covered too.
//!
//! Counts: `CC_CRASH_RESOLVE` (default 14), `CC_CRASH_PATCH` (20), `CC_CRASH_RENAME` (1),
//! about 90 s on 2 cores in a debug build (each resolve point stages its edit again; each
//! rename point starts basedpyright); 200 kills in all for a longer run;
//! `CC_CRASH_SEED` replays a run (the seed is printed).

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const TAG: &str = "CC_CRASH_TEST_TAG";
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// A small xorshift: spread, not quality, and no extra crate.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

type Snapshot = Vec<(PathBuf, Option<Vec<u8>>)>;

fn snapshot(root: &Path) -> Snapshot {
    cc_test_support::tree_snapshot(root)
        .into_iter()
        .map(|(path, bytes)| (path.strip_prefix(root).unwrap().to_path_buf(), bytes))
        .collect()
}

fn temporaries(tree: &Snapshot) -> Vec<PathBuf> {
    tree.iter()
        .map(|(path, _)| path.clone())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(".cc-"))
        })
        .collect()
}

/// Puts `root` back to `tree` (files only; folders `tree` lacks are removed).
fn restore(root: &Path, tree: &Snapshot) {
    for (path, bytes) in snapshot(root).into_iter().rev() {
        if !tree.iter().any(|(p, _)| p == &path) {
            let full = root.join(&path);
            match bytes {
                Some(_) => std::fs::remove_file(full).unwrap(),
                None => std::fs::remove_dir(full).unwrap(),
            }
        }
    }
    for (path, bytes) in tree {
        let full = root.join(path);
        match bytes {
            None => std::fs::create_dir_all(full).unwrap(),
            Some(bytes) => {
                if std::fs::read(&full).ok().as_ref() != Some(bytes) {
                    std::fs::write(full, bytes).unwrap();
                }
            }
        }
    }
    assert!(snapshot(root) == *tree);
}

/// The environment every child runs in: its own state and cache folders, a tag.
struct Env {
    state: PathBuf,
    cache: PathBuf,
    tag: String,
    path: std::ffi::OsString,
}

impl Env {
    fn apply(&self, command: &mut Command) {
        command
            .env("XDG_STATE_HOME", &self.state)
            .env("XDG_CACHE_HOME", &self.cache)
            .env(TAG, &self.tag)
            .env("PATH", &self.path);
    }

    /// The journal folder `cc-harness` uses for `root`.
    fn journal_dir(&self, root: &Path) -> PathBuf {
        cc_workspace::Workspace::new(root)
            .unwrap()
            .with_state_dir(self.state.join("cc"))
            .journal_dir()
            .unwrap()
    }
}

/// Whether a journal in `dir` has reached its committing phase (its last record).
fn journal_committing(dir: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            let mut tail = [0u8; 8];
            std::fs::File::open(entry.path()).is_ok_and(|mut file| {
                file.seek(SeekFrom::End(-8)).is_ok()
                    && file.read_exact(&mut tail).is_ok()
                    && &tail == b"PHASE:C\n"
            })
        })
    })
}

fn journal_present(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "journal"))
    })
}

/// `cc-harness mcp` over raw newline-delimited JSON-RPC.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next: u64,
}

impl Mcp {
    fn start(root: &Path, env: &Env) -> Mcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cc-harness"));
        command
            .args(["mcp", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        env.apply(&mut command);
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    if send.send(value).is_err() {
                        break;
                    }
                }
            }
        });
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
            next: 1,
        };
        let id = mcp.send(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "crash-test", "version": "0"}}),
        );
        mcp.answer(id);
        mcp.notify("notifications/initialized");
        mcp
    }

    fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        id
    }

    fn notify(&mut self, method: &str) {
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": method})
        )
        .unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) if message["id"] == id => return message,
                Ok(_) => continue,
                Err(error) => panic!("no answer to request {id}: {error}"),
            }
        }
    }

    /// A tool call's result (`structuredContent`, and the text), asserting it succeeded.
    fn call(&mut self, tool: &str, args: Value) -> (Value, String) {
        let id = self.send("tools/call", json!({"name": tool, "arguments": args}));
        let answer = self.answer(id);
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{tool}: {answer}");
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (result["structuredContent"].clone(), text)
    }

    /// Whether the answer to `id` has come, waiting up to `wait`.
    fn answered_within(&mut self, id: u64, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) if message["id"] == id => return true,
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => return false,
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// `kill -9` of the whole process group, then reaps it.
    fn kill(mut self) {
        let pid = self.child.id();
        let group = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        self.child.wait().unwrap();
        assert!(cc_test_support::wait_until_gone(
            pid,
            Duration::from_secs(20)
        ));
        assert!(cc_test_support::live_group_members(pid).is_empty());
    }

    /// Ends the server by closing its input, and reaps it.
    fn close(self) {
        let Mcp {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("cc-harness mcp did not end when its input closed");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(cc_test_support::wait_until_gone(
            pid,
            Duration::from_secs(20)
        ));
    }
}

/// One writer under test.
trait Writer {
    fn name(&self) -> &'static str;
    /// Sends the writing call (after any preparation in the same run); returns its id.
    fn send(&self, mcp: &mut Mcp) -> u64;
    /// Whether some kills are timed from the call rather than the journal (not where the
    /// call spends seconds before it commits: those kills would all land before it).
    fn timed_from_the_call(&self) -> bool {
        true
    }
}

struct Resolve;

impl Writer for Resolve {
    fn name(&self) -> &'static str {
        "resolve"
    }
    fn send(&self, mcp: &mut Mcp) -> u64 {
        let (staged, _) = mcp.call(
            "ast_edit",
            json!({"pattern": "expect($$$A)", "rewrite": "expect.soft($$$A)", "language": "typescript", "path": "src"}),
        );
        let files = staged["files"].as_array().unwrap().len();
        assert!(files >= 100, "the edit touches {files} files");
        let edit = staged["edit_id"].as_str().unwrap().to_owned();
        mcp.send(
            "tools/call",
            json!({"name": "resolve", "arguments": {"edit_id": edit, "action": "accept"}}),
        )
    }
}

struct Patch(String);

impl Patch {
    /// 120 files of `root` get a first line, a new file appears in a new folder, a small one
    /// goes.
    fn over(root: &Path) -> Patch {
        let mut files: Vec<PathBuf> = snapshot(root)
            .into_iter()
            .filter(|(path, bytes)| {
                path.starts_with("src")
                    && path.extension().is_some_and(|e| e == "ts")
                    && bytes
                        .as_ref()
                        .is_some_and(|b| b.contains(&b'\n') && !b.starts_with(b"\n"))
            })
            .map(|(path, _)| path)
            .collect();
        files.sort();
        let mut patch = String::new();
        for path in files.iter().take(120) {
            let text = std::fs::read_to_string(root.join(path)).unwrap();
            let first = text.lines().next().unwrap();
            let shown = path.display();
            patch.push_str(&format!(
                "--- a/{shown}\n+++ b/{shown}\n@@ -1 +1,2 @@\n+// cc crash test\n {first}\n"
            ));
        }
        patch.push_str(
            "--- /dev/null\n+++ b/src/crash_new/added.ts\n@@ -0,0 +1 @@\n+export const added = 1;\n",
        );
        let gone = root.join("src/crash_gone.ts");
        std::fs::write(&gone, "export const gone = 1;\n").unwrap();
        patch.push_str(
            "--- a/src/crash_gone.ts\n+++ /dev/null\n@@ -1 +0,0 @@\n-export const gone = 1;\n",
        );
        Patch(patch)
    }
}

impl Writer for Patch {
    fn name(&self) -> &'static str {
        "apply_patch"
    }
    fn send(&self, mcp: &mut Mcp) -> u64 {
        mcp.send(
            "tools/call",
            json!({"name": "apply_patch", "arguments": {"patch": self.0}}),
        )
    }
}

struct Rename;

impl Writer for Rename {
    fn name(&self) -> &'static str {
        "lsp_rename"
    }
    fn timed_from_the_call(&self) -> bool {
        false
    }
    fn send(&self, mcp: &mut Mcp) -> u64 {
        mcp.send(
            "tools/call",
            json!({"name": "lsp_rename", "arguments": {"file": "src/requests/_internal_utils.py", "line": 26, "symbol": "to_native_string", "new_name": "to_native_text"}}),
        )
    }
}

/// What the kills of one writer saw.
#[derive(Debug, Default)]
struct Tally {
    forward: usize,
    back: usize,
    nothing: usize,
    none_needed: usize,
    via_status: usize,
}

impl Tally {
    /// The kills that landed inside a commit (a recovery had work, or saw the commit).
    fn inside(&self) -> usize {
        self.forward + self.back + self.nothing + self.via_status
    }

    fn add(&mut self, other: Tally) {
        self.forward += other.forward;
        self.back += other.back;
        self.nothing += other.nothing;
        self.none_needed += other.none_needed;
        self.via_status += other.via_status;
    }
}

/// Kills `writer`'s call `points` times on `root` and checks every recovery.
fn crash_points(
    writer: &dyn Writer,
    root: &Path,
    env: &Env,
    points: usize,
    rng: &mut Rng,
) -> Tally {
    let journal_dir = env.journal_dir(root);
    let old = snapshot(root);
    // Calibration: one whole call, the tree it leaves, how long the call and its commit
    // (its journal's life) take.
    let (new, call_took, commit_took, renames_took) = {
        let mut mcp = Mcp::start(root, env);
        let id = writer.send(&mut mcp);
        let sent = Instant::now();
        let (mut appeared, mut committing, mut gone) = (None, None, None);
        while gone.is_none() {
            if mcp.answered_within(id, Duration::from_micros(300)) {
                gone = Some(Instant::now());
                break;
            }
            let present = journal_present(&journal_dir);
            match (present, appeared) {
                (true, None) => appeared = Some(Instant::now()),
                (false, Some(_)) => gone = Some(Instant::now()),
                _ => {}
            }
            if present && committing.is_none() && journal_committing(&journal_dir) {
                committing = Some(Instant::now());
            }
            assert!(
                sent.elapsed() < CALL_TIMEOUT,
                "{} never answered",
                writer.name()
            );
        }
        let renames_took = match (committing, gone) {
            (Some(c), Some(g)) => g.duration_since(c),
            _ => Duration::from_millis(20),
        };
        // From the call to the commit's end: the window of the kills timed from the call.
        let call_took = gone.map_or(sent.elapsed(), |g| g.duration_since(sent));
        let commit_took = match (appeared, gone) {
            (Some(a), Some(g)) => g.duration_since(a),
            _ => call_took / 4,
        };
        mcp.close();
        (snapshot(root), call_took, commit_took, renames_took)
    };
    assert!(new != old, "{} changed nothing", writer.name());
    assert!(temporaries(&new).is_empty());
    eprintln!(
        "{}: from the call to the end of its commit {call_took:?}, the commit {commit_took:?}, \
         its renames {renames_took:?}",
        writer.name()
    );
    restore(root, &old);

    let mut tally = Tally::default();
    for point in 0..=points {
        let journaled = journal_present(&journal_dir);
        let tree_before_recovery = snapshot(root);
        // Every fourth run starts with `cc-harness status`, which recovers and says so.
        let mut reported_by_status = false;
        if point % 4 == 3 {
            let mut command = Command::new(env!("CARGO_BIN_EXE_cc-harness"));
            command.args(["status", "--json", "--root"]).arg(root);
            env.apply(&mut command);
            let output = command.output().unwrap();
            assert!(output.status.success());
            let status: Value = serde_json::from_slice(&output.stdout).unwrap();
            let now = status["recovery"]["recovered_now"].as_array().unwrap();
            assert_eq!(!now.is_empty(), journaled, "status: {}", status["recovery"]);
            if journaled {
                assert!(now[0]["message"].as_str().unwrap().contains("interrupted"));
                tally.via_status += 1;
                reported_by_status = true;
            }
        }
        let mut mcp = Mcp::start(root, env);
        // The first result of the run carries the recovery, if there was one to do.
        let (first, text) = mcp.call("read", json!({"path": "LICENSE", "limit": 1}));
        let notices: Vec<&Value> = first["notices"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|n| n["kind"] == "recovered")
            .collect();
        let tree = snapshot(root);
        let left = temporaries(&tree);
        assert!(
            left.is_empty(),
            "{} kill {point}: temporaries left {left:?}",
            writer.name()
        );
        assert!(!journal_present(&journal_dir), "a journal is left");
        let (is_old, is_new) = (tree == old, tree == new);
        assert!(
            is_old || is_new,
            "{} kill {point}: a mixed tree after recovery (journal before: {journaled}, \
             notices {notices:?}, tree was old {} / new {} before recovery)",
            writer.name(),
            tree_before_recovery == old,
            tree_before_recovery == new
        );
        if journaled && !reported_by_status {
            assert_eq!(notices.len(), 1, "{} kill {point}: {first}", writer.name());
            assert!(text.contains("\nnote: "), "{text}");
            assert!(notices[0]["files"]["left_alone"]
                .as_array()
                .unwrap()
                .is_empty());
            assert!(notices[0]["files"]["failed"].as_array().unwrap().is_empty());
            match notices[0]["direction"].as_str().unwrap() {
                "forward" => {
                    assert!(is_new, "{}", notices[0]);
                    assert!(notices[0]["files_total"].as_u64().unwrap() >= 5);
                    tally.forward += 1;
                }
                "back" => {
                    assert!(is_old, "{}", notices[0]);
                    assert!(notices[0]["files_total"].as_u64().unwrap() >= 5);
                    tally.back += 1;
                }
                _ => {
                    assert!(is_old, "{}", notices[0]);
                    tally.nothing += 1;
                }
            }
        } else {
            assert!(notices.is_empty(), "{first}");
            if point > 0 && !journaled {
                tally.none_needed += 1;
            }
        }
        if point == points {
            mcp.close();
            break;
        }
        if is_new {
            restore(root, &old);
        }
        // Kill during the next write: from the call (the moments before the journal too),
        // from the journal's birth (mostly while the temporaries are written), or from its
        // committing record (while the targets are replaced).
        let id = writer.send(&mut mcp);
        let sent = Instant::now();
        let wait_for = |mcp: &mut Mcp, reached: &dyn Fn() -> bool| {
            while !reached() {
                if mcp.answered_within(id, Duration::from_micros(200)) {
                    break;
                }
                assert!(sent.elapsed() < CALL_TIMEOUT);
            }
        };
        let within = |rng: &mut Rng, window: Duration| {
            Duration::from_micros(rng.below(window.as_micros() as u64 * 11 / 10))
        };
        match rng.below(8) {
            0 | 1 if writer.timed_from_the_call() => {
                let delay = within(rng, call_took);
                mcp.answered_within(id, delay);
            }
            0..=4 => {
                wait_for(&mut mcp, &|| journal_present(&journal_dir));
                std::thread::sleep(within(rng, commit_took));
            }
            _ => {
                wait_for(&mut mcp, &|| journal_committing(&journal_dir));
                std::thread::sleep(within(rng, renames_took));
            }
        }
        mcp.kill();
    }
    restore(root, &old);
    tally
}

#[test]
fn kill_9_during_multi_file_writes_then_the_next_run_recovers() {
    let seed = std::env::var("CC_CRASH_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    let (resolve, patch, rename) = (
        count("CC_CRASH_RESOLVE", 14),
        count("CC_CRASH_PATCH", 20),
        count("CC_CRASH_RENAME", 1),
    );
    eprintln!(
        "crash test: {resolve} resolve, {patch} apply_patch, {rename} lsp_rename kills; CC_CRASH_SEED={seed}"
    );
    let Some(zod) = cc_test_support::copy_project("zod") else {
        return;
    };
    let mut rng = Rng(seed);
    let base = tempfile::tempdir().unwrap();
    let tag = cc_test_support::unique_tag("crash-recovery");
    // No peers on PATH for zod: without a TypeScript server, a write's diagnostics do not
    // stretch the call, and the kills land in the commit.
    let plain: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|dir| !dir.to_string_lossy().contains(".peers"))
        .collect();
    let env = |path: std::ffi::OsString| Env {
        state: base.path().join("state"),
        cache: base.path().join("cache"),
        tag: tag.clone(),
        path,
    };
    let plain = env(std::env::join_paths(plain).unwrap());
    let started = Instant::now();
    // The kills are timed from measured phases; on a loaded machine more of them land
    // before or after the commit, so rounds are added (at most two) until half of the
    // planned number landed inside one.
    let kills = |writer: &dyn Writer, points: usize, rng: &mut Rng| {
        let mut tally = crash_points(writer, zod.path(), &plain, points, rng);
        for _ in 0..2 {
            if points < 8 || tally.inside() * 2 >= points {
                break;
            }
            tally.add(crash_points(writer, zod.path(), &plain, points, rng));
        }
        tally
    };
    let tally = kills(&Resolve, resolve, &mut rng);
    eprintln!("resolve: {tally:?} ({:?})", started.elapsed());
    let patch_writer = Patch::over(zod.path());
    let tally_patch = kills(&patch_writer, patch, &mut rng);
    eprintln!("apply_patch: {tally_patch:?} ({:?})", started.elapsed());
    for (name, tally, points) in [
        ("resolve", &tally, resolve),
        ("apply_patch", &tally_patch, patch),
    ] {
        let inside = tally.inside();
        assert!(
            points < 8 || inside * 2 >= points,
            "{name}: only {inside} of {points} planned kills landed inside a commit: {tally:?}"
        );
    }

    if rename > 0 && cc_test_support::require_peer("basedpyright-langserver").is_some() {
        if let Some(requests) = cc_test_support::copy_project("requests") {
            let full = env(std::env::var_os("PATH").unwrap_or_default());
            let tally = crash_points(&Rename, requests.path(), &full, rename, &mut rng);
            eprintln!("lsp_rename: {tally:?} ({:?})", started.elapsed());
        }
    }
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(cc_test_support::assert_no_tagged(TAG, &tag));
}
