//! The JVM that keeps the Kotlin compiler warm: `KotlinCheck.java` run by the Java source
//! launcher, in its own process group, spoken to over its stdin and stdout (one request at a
//! time: the compiler's arguments, one per line, then an empty line).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use cc_process::{lock, GroupChild};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::process::{keep_stderr_tail, StderrTail};
use tokio::process::{ChildStdin, ChildStdout};

/// The program the JVM runs.
const SOURCE: &str = include_str!("KotlinCheck.java");
/// Bytes of compiler messages kept per compile (the rest is read and dropped).
const OUTPUT_CAP: usize = 32 * 1024 * 1024;
/// The JVM's heap: the compiler holds every source of the module at once.
const HEAP: &str = "-Xmx2g";

/// How to start the JVM.
#[derive(Debug, Clone)]
pub(super) struct Launch {
    java: PathBuf,
    kotlin_home: PathBuf,
}

impl Launch {
    /// `kotlinc` as the project checker finds it, its distribution's home (the folder above
    /// the real `bin/kotlinc`, links followed), and the Java runtime it would run on
    /// (`$JAVACMD`, else `java` on PATH).
    pub(super) fn find(
        root: &Path,
        workspace: &Path,
        path_var: &OsStr,
        spec: &crate::table::ServerSpec,
        read_only: bool,
    ) -> Result<Launch, String> {
        let kotlinc =
            crate::checker::find_program("kotlinc", root, workspace, path_var, spec, read_only)
                .ok_or_else(|| {
                    format!(
                        "Kotlin files are not checked on write: `kotlinc` is not installed ({})",
                        crate::checker::install_how("kotlinc")
                    )
                })?;
        let real = std::fs::canonicalize(&kotlinc).unwrap_or(kotlinc.clone());
        let kotlin_home = real
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .filter(|home| home.join("lib/kotlin-compiler.jar").is_file())
            .ok_or_else(|| {
                format!(
                    "Kotlin files are not checked on write: `{}` is not JetBrains' distribution (no lib/kotlin-compiler.jar beside its bin/)",
                    kotlinc.display()
                )
            })?;
        let java = std::env::var_os("JAVACMD")
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .or_else(|| cc_process::find_all_in("java", path_var).into_iter().next())
            .ok_or_else(|| {
                "Kotlin files are not checked on write: no Java runtime (`java` on PATH) for the Kotlin compiler".to_owned()
            })?;
        Ok(Launch { java, kotlin_home })
    }

    /// The program's file, written once per content into the cache.
    fn source_file(&self) -> Result<PathBuf, String> {
        let hash = xxhash_rust::xxh3::xxh3_64(SOURCE.as_bytes());
        let dir = cc_workspace::cache_dir().join(format!("kotlin-check/{hash:016x}"));
        let file = dir.join("KotlinCheck.java");
        if std::fs::read_to_string(&file).is_ok_and(|text| text == SOURCE) {
            return Ok(file);
        }
        let written = (|| {
            std::fs::create_dir_all(&dir)?;
            // Another run may write it at the same moment: each writes its own, then renames.
            let temporary = dir.join(format!(".KotlinCheck.{}.tmp", std::process::id()));
            std::fs::write(&temporary, SOURCE)?;
            std::fs::rename(&temporary, &file)
        })();
        written
            .map(|()| file)
            .map_err(|error| format!("cannot write the Kotlin checker into the cache: {error}"))
    }
}

/// Why a compile gave no messages.
#[derive(Debug)]
pub(super) enum Failure {
    /// The JVM stopped (killed, out of memory, or it never could run the program).
    Gone(String),
    /// The compiler threw; the JVM still runs.
    Threw(String),
}

/// A running JVM with the compiler loaded.
pub(super) struct Daemon {
    child: GroupChild,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: StderrTail,
}

impl Daemon {
    pub(super) async fn start(launch: &Launch) -> Result<Daemon, String> {
        let source = launch.source_file()?;
        let mut command = tokio::process::Command::new(&launch.java);
        command
            .arg(HEAP)
            .arg(format!("-Dkotlin.home={}", launch.kotlin_home.display()))
            .arg("-cp")
            .arg(launch.kotlin_home.join("lib/kotlin-compiler.jar"))
            .arg(&source)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cc_process::spawn_group(command).map_err(|error| {
            format!(
                "the Kotlin compiler's JVM (`{}`) did not start: {error}",
                launch.java.display()
            )
        })?;
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err("the Kotlin compiler's JVM has no pipes".into());
        };
        let stderr = StderrTail::default();
        if let Some(pipe) = child.take_stderr() {
            keep_stderr_tail(pipe, "kotlin compiler", stderr.clone(), |_| {});
        }
        Ok(Daemon {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            stderr,
        })
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs one compile; its messages, or why there are none.
    pub(super) async fn compile(&mut self, arguments: &[String]) -> Result<String, Failure> {
        let mut request = String::new();
        for argument in arguments {
            request.push_str(argument);
            request.push('\n');
        }
        request.push('\n');
        if let Err(error) = self.stdin.write_all(request.as_bytes()).await {
            return Err(Failure::Gone(
                self.gone(&format!("could not be sent the request: {error}"))
                    .await,
            ));
        }
        if let Err(error) = self.stdin.flush().await {
            return Err(Failure::Gone(
                self.gone(&format!("could not be sent the request: {error}"))
                    .await,
            ));
        }
        let mut output = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            match self.stdout.read_line(&mut line).await {
                Ok(0) => return Err(Failure::Gone(self.gone("stopped during a compile").await)),
                Ok(_) => {}
                Err(error) => {
                    return Err(Failure::Gone(
                        self.gone(&format!("could not be read: {error}")).await,
                    ))
                }
            }
            if let Some(end) = line.strip_prefix('\u{1}') {
                let end = end.trim_end();
                if end.starts_with("done ") {
                    return Ok(output);
                }
                let reason = end.strip_prefix("failed ").unwrap_or(end);
                return Err(Failure::Threw(format!(
                    "the Kotlin compiler failed: {reason}"
                )));
            }
            if output.len() + line.len() <= OUTPUT_CAP {
                output.push_str(&line);
            }
        }
    }

    /// Why the JVM stopped answering: its exit and the last lines of its stderr.
    async fn gone(&mut self, what: &str) -> String {
        let status = match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => format!(" ({status})"),
            _ => String::new(),
        };
        let tail: Vec<String> = lock(&self.stderr).iter().cloned().collect();
        let said = if tail.is_empty() {
            String::new()
        } else {
            format!(": {}", tail.join(" | "))
        };
        format!("the Kotlin compiler's JVM {what}{status}{said}")
    }

    pub(super) async fn stop(&mut self) {
        let _ = self.child.terminate(Duration::from_secs(1)).await;
    }
}
