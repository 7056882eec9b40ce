//! Small helpers shared by the subcommands: the repository root, running commands with a
//! header or a timeout, PATH look-ups and a UTC date without a date crate.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Errors are messages for a person: every subcommand ends in one line that says what failed.
pub type Result<T, E = String> = std::result::Result<T, E>;

/// The workspace root: the parent of xtask's own manifest directory (absolute).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

/// A `cargo` command using the cargo that started us (`cargo run` sets `CARGO`), so nested
/// calls use the same toolchain, run from the repository root.
pub fn cargo(root: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root);
    cmd
}

/// `program arg arg…` for messages.
pub fn describe(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program());
    // `cargo` rather than the toolchain's full path that `CARGO` holds.
    let mut s = if program.file_name().is_some_and(|n| n == "cargo") {
        "cargo".to_string()
    } else {
        program.to_string_lossy().into_owned()
    };
    for arg in cmd.get_args() {
        s.push(' ');
        s.push_str(&arg.to_string_lossy());
    }
    s
}

/// Runs `cmd` with inherited stdio (or what the caller set) and fails unless it exits 0.
pub fn run_status(cmd: &mut Command) -> Result<()> {
    let desc = describe(cmd);
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start `{desc}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{desc}` failed ({status})"))
    }
}

/// Runs `cmd` with its stdout sent to our stderr, so that our own stdout stays reserved for
/// results (`peers --path` prints nothing else there).
pub fn run_to_stderr(cmd: &mut Command) -> Result<()> {
    cmd.stdout(std::io::stderr());
    run_status(cmd)
}

/// What a captured command produced. `status` is `None` when it timed out and was killed.
#[derive(Debug)]
pub struct Captured {
    /// Its exit status; `None` when it timed out and was killed.
    pub status: Option<ExitStatus>,
    /// What it wrote to stdout (invalid UTF-8 replaced).
    pub stdout: String,
    /// What it wrote to stderr (invalid UTF-8 replaced).
    pub stderr: String,
}

impl Captured {
    /// Whether it finished in time and exited 0.
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// Runs `cmd` with stdin closed and stdout/stderr captured, in its own process group; after
/// `timeout` the whole group is killed (a version probe must never hang `peers`).
pub fn capture(cmd: &mut Command, timeout: Duration) -> std::io::Result<Captured> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn()?;
    let out = child.stdout.take().map(reader_thread);
    let err = child.stderr.take().map(reader_thread);
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The group may hold the pipes open after the leader exits: end it before joining.
    kill_group(child.id());
    let join = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    Ok(Captured {
        status,
        stdout: join(out),
        stderr: join(err),
    })
}

fn reader_thread<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// SIGKILL to the process group `pgid` (ignored if it is gone).
fn kill_group(pgid: u32) {
    if let Ok(raw) = i32::try_from(pgid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(raw),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Whether `path` is a regular file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `name` in `dirs`; an absolute or relative path with a `/` is checked as is.
pub fn find_executable<I>(name: &str, dirs: I) -> Option<PathBuf>
where
    I: IntoIterator<Item = PathBuf>,
{
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// The directories of `$PATH`.
pub fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

/// `entries` followed by the current `$PATH`.
pub fn prepend_path(entries: &[PathBuf]) -> Result<OsString> {
    let mut all: Vec<PathBuf> = entries.to_vec();
    all.extend(path_dirs());
    std::env::join_paths(all).map_err(|e| format!("cannot build PATH: {e}"))
}

/// The first line of `text` that looks like it carries a version (`digit.digit`), else the
/// first non-empty line, else an empty string.
pub fn version_line(text: &str) -> String {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let has_version = |l: &&str| {
        let b = l.as_bytes();
        b.windows(3)
            .any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_digit())
    };
    lines()
        .find(has_version)
        .or_else(|| lines().next())
        .unwrap_or_default()
        .to_string()
}

/// Whether we run as root (the owner of `/proc/self` is our effective uid).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Now, as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format_utc(secs)
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM UTC` (Howard Hinnant's civil_from_days).
pub fn format_utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_767_225_599), "2025-12-31 23:59 UTC");
    }

    #[test]
    fn version_lines() {
        assert_eq!(
            version_line("Delve Debugger\nVersion: 1.20.2\n"),
            "Version: 1.20.2"
        );
        assert_eq!(
            version_line("\ngolang.org/x/tools/gopls master\n    @\n"),
            "golang.org/x/tools/gopls master"
        );
        assert_eq!(version_line(""), "");
    }

    #[test]
    fn capture_times_out() {
        let c = capture(Command::new("sleep").arg("30"), Duration::from_millis(200)).unwrap();
        assert!(c.status.is_none());
        let c = capture(Command::new("echo").arg("hi"), Duration::from_secs(10)).unwrap();
        assert!(c.success());
        assert_eq!(c.stdout, "hi\n");
    }
}
