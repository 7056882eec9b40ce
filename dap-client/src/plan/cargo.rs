//! `cargo test` under lldb-dap: build the test binaries, find the one that holds the test,
//! and launch it with the filter.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::spec::CargoTest;
use super::{plain, shlex_join, Context, Plan};
use crate::adapters::{launch_arguments, AdapterKind};
use crate::capture::{capture, NotCaptured};
use crate::error::DebugError;
use crate::interrupt::Interrupt;

/// How long `--list` of one test binary may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(60);
/// The build's errors are cut to this many characters (the first ones matter most).
const MAX_BUILD_OUTPUT: usize = 8000;

/// What a finished command printed.
pub(super) struct Captured {
    pub(super) status: std::process::ExitStatus,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

/// Runs `program args` in `cwd` with the session's environment, up to `timeout`, unless
/// `interrupt` fires.
async fn run_captured(
    ctx: &Context<'_>,
    program: &Path,
    args: &[String],
    cwd: &Path,
    timeout: Duration,
    interrupt: &mut Interrupt,
) -> Result<Captured, DebugError> {
    run_captured_with(ctx, program, args, cwd, &[], timeout, interrupt).await
}

/// [`run_captured`] with variables set on top of the session's environment.
pub(super) async fn run_captured_with(
    ctx: &Context<'_>,
    program: &Path,
    args: &[String],
    cwd: &Path,
    envs: &[(String, std::ffi::OsString)],
    timeout: Duration,
    interrupt: &mut Interrupt,
) -> Result<Captured, DebugError> {
    let shown = format!("{} {}", program.display(), shlex_join(args));
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .env("PATH", &ctx.env.search_path)
        .envs(ctx.extra_env.iter().map(|(k, v)| (k, v)))
        .envs(envs.iter().map(|(k, v)| (k, v)));
    match capture(command, timeout, interrupt).await {
        Ok(done) => Ok(Captured {
            status: done.status,
            stdout: String::from_utf8_lossy(&done.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&done.stderr).into_owned(),
        }),
        Err(NotCaptured::Failed(error)) => {
            Err(DebugError::Io(format!("could not run `{shown}`: {error}")))
        }
        Err(NotCaptured::TimedOut) => Err(DebugError::Timeout {
            what: format!("`{shown}`"),
            after: timeout,
            output_tail: String::new(),
        }),
        Err(NotCaptured::Interrupted) => Err(DebugError::Cancelled(format!(
            "the launch was cancelled while `{shown}` ran; it was stopped and nothing is \
             left running"
        ))),
    }
}

/// One test binary the build produced.
#[derive(Debug, Clone)]
struct TestBinary {
    executable: PathBuf,
    /// `lib`, `test`, `bin`, …
    kind: String,
    /// The target's name.
    name: String,
    /// The package's directory (where `cargo test` runs it).
    manifest_dir: PathBuf,
}

impl TestBinary {
    fn describe(&self) -> String {
        match self.kind.as_str() {
            "lib" => format!("the library's unit tests ({})", self.name),
            "test" => format!("integration test `{}` (`--test {}`)", self.name, self.name),
            kind => format!("{kind} `{}`", self.name),
        }
    }
}

/// The test binaries of `cargo test --no-run --message-format=json`'s output, and the
/// compiler's rendered errors.
fn read_build(stdout: &str) -> (Vec<TestBinary>, Vec<String>) {
    let mut binaries = Vec::new();
    let mut errors = Vec::new();
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match message["reason"].as_str() {
            Some("compiler-message") => {
                let diagnostic = &message["message"];
                if diagnostic["level"] == "error" {
                    if let Some(rendered) = diagnostic["rendered"].as_str() {
                        errors.push(rendered.trim_end().to_owned());
                    }
                }
            }
            Some("compiler-artifact") if message["profile"]["test"] == true => {
                let Some(executable) = message["executable"].as_str() else {
                    continue;
                };
                let manifest_dir = message["manifest_path"]
                    .as_str()
                    .and_then(|p| Path::new(p).parent())
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                binaries.push(TestBinary {
                    executable: PathBuf::from(executable),
                    kind: message["target"]["kind"][0]
                        .as_str()
                        .unwrap_or("test")
                        .to_owned(),
                    name: message["target"]["name"].as_str().unwrap_or("?").to_owned(),
                    manifest_dir,
                });
            }
            _ => {}
        }
    }
    (binaries, errors)
}

fn cut(text: String) -> String {
    match text.char_indices().nth(MAX_BUILD_OUTPUT) {
        Some((at, _)) => format!("{}\n… (cut; `output` has all of it)", &text[..at]),
        None => text,
    }
}

/// The test names a `--list --format terse` printed.
fn listed_tests(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

pub(super) async fn plan(
    ctx: &Context<'_>,
    tokens: &[String],
    interrupt: &mut Interrupt,
) -> Result<Plan, DebugError> {
    let test = CargoTest::parse(tokens)?;
    let cargo = ctx
        .env
        .find("cargo")
        .ok_or_else(|| DebugError::AdapterUnavailable {
            adapter: "lldb".into(),
            reason: "no `cargo` on PATH to build the test (install Rust with rustup)".into(),
        })?;
    let (command, binaries) = build(ctx, &cargo, &test, interrupt).await?;
    let holding = binaries_holding(ctx, &test, &binaries, interrupt).await?;
    let filter = if test.filters.is_empty() {
        "any test".to_owned()
    } else {
        format!("`{}`", test.filters.join(" "))
    };
    let (binary, names) = match holding.as_slice() {
        [] => {
            let searched: Vec<String> = binaries.iter().map(TestBinary::describe).collect();
            // Every test of every binary, to say which names come closest.
            let every = every_test(ctx, &binaries, interrupt).await?;
            return Err(no_test_matches(&test, &filter, &searched, &every));
        }
        [one] => one,
        many => {
            let found: Vec<String> = many
                .iter()
                .map(|(binary, names)| format!("{} ({} tests)", binary.describe(), names.len()))
                .collect();
            return Err(DebugError::InvalidArguments(format!(
                "{filter} matches tests in more than one test binary: {}; put the one you mean \
                 in `test` (`--lib NAME`, `--test TARGET NAME`)",
                found.join(", ")
            )));
        }
    };
    let mut plan = launch_plan(ctx, tokens, &test, &cargo, binary, interrupt).await;
    let sample: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    let more = if names.len() > sample.len() {
        format!(", … {} in all", names.len())
    } else {
        String::new()
    };
    plan.notes.push(format!(
        "built with `{command}`; runs {} with --test-threads=1 --nocapture and \
         RUST_BACKTRACE=0: {}{more}; a panic stops where it is raised, with its message",
        binary.describe(),
        sample.join(", ")
    ));
    // libtest catches a failing test's panic: stop where it is raised instead.
    plan.function_breakpoints.push("rust_panic".into());
    Ok(plan)
}

/// Builds the test binaries with `cargo test --no-run`: the command as shown, and the
/// binaries; the compiler's errors when the build fails, and an error when it built none.
async fn build(
    ctx: &Context<'_>,
    cargo: &Path,
    test: &CargoTest,
    interrupt: &mut Interrupt,
) -> Result<(String, Vec<TestBinary>), DebugError> {
    let mut args: Vec<String> = ["test", "--no-run", "--message-format=json"]
        .map(str::to_owned)
        .to_vec();
    args.extend(test.cargo_args.iter().cloned());
    let command = format!("cargo {}", shlex_join(&args));
    let built = run_captured(
        ctx,
        cargo,
        &args,
        ctx.root(),
        ctx.settings.launch_timeout,
        interrupt,
    )
    .await?;
    let (binaries, errors) = read_build(&built.stdout);
    if !built.status.success() {
        let mut output = errors.join("\n\n");
        let stderr = built.stderr.trim();
        if !stderr.is_empty() {
            if !output.is_empty() {
                output.push_str("\n\n");
            }
            output.push_str(stderr);
        }
        return Err(DebugError::BuildFailed {
            command,
            output: cut(output),
        });
    }
    if binaries.is_empty() {
        return Err(DebugError::InvalidArguments(format!(
            "`{command}` built no test binary; is this a Cargo package with tests?"
        )));
    }
    Ok((command, binaries))
}

/// The binaries that hold a test the filters match, with the names of those tests.
async fn binaries_holding<'b>(
    ctx: &Context<'_>,
    test: &CargoTest,
    binaries: &'b [TestBinary],
    interrupt: &mut Interrupt,
) -> Result<Vec<(&'b TestBinary, Vec<String>)>, DebugError> {
    let mut holding = Vec::new();
    for binary in binaries {
        let listed = run_captured(
            ctx,
            &binary.executable,
            &test.list_args(),
            &binary.manifest_dir,
            LIST_TIMEOUT,
            interrupt,
        )
        .await?;
        let names = listed_tests(&listed.stdout);
        if !names.is_empty() {
            holding.push((binary, names));
        }
    }
    Ok(holding)
}

/// Every test of every binary, unfiltered.
async fn every_test(
    ctx: &Context<'_>,
    binaries: &[TestBinary],
    interrupt: &mut Interrupt,
) -> Result<Vec<String>, DebugError> {
    let mut every = Vec::new();
    let list_all = ["--list".to_owned(), "--format".into(), "terse".into()];
    for binary in binaries {
        let listed = run_captured(
            ctx,
            &binary.executable,
            &list_all,
            &binary.manifest_dir,
            LIST_TIMEOUT,
            interrupt,
        )
        .await?;
        every.extend(listed_tests(&listed.stdout));
    }
    Ok(every)
}

/// No binary holds a test that `filter` matches: the binaries `searched`, and the names of
/// `every` test that come closest.
fn no_test_matches(
    test: &CargoTest,
    filter: &str,
    searched: &[String],
    every: &[String],
) -> DebugError {
    let wanted = test.filters.join(" ");
    let closest = super::names::nearest(&wanted, every, super::names::SUGGESTED);
    let nearest = if closest.is_empty() {
        "they hold no tests".to_owned()
    } else {
        format!(
            "the nearest of their {} tests: {}",
            every.len(),
            closest.join(", ")
        )
    };
    DebugError::TestNotFound(format!(
        "no test matches {filter} in {} (cargo test takes a substring of a test's path, \
         `module::test_name`); {nearest}",
        searched.join(", ")
    ))
}

/// lldb-dap's launch of `binary` with the test's run arguments, in its package's directory
/// as `cargo test` runs it, with the Rust formatters when the toolchain has them.
async fn launch_plan(
    ctx: &Context<'_>,
    tokens: &[String],
    test: &CargoTest,
    cargo: &Path,
    binary: &TestBinary,
    interrupt: &mut Interrupt,
) -> Plan {
    let mut arguments = launch_arguments(
        AdapterKind::Lldb,
        &binary.executable,
        &test.run_args(),
        &binary.manifest_dir,
        None,
    );
    arguments["env"] = json!([
        format!("CARGO_MANIFEST_DIR={}", binary.manifest_dir.display()),
        format!("CARGO={}", cargo.display()),
        // The debugger has the stack (`stack`); a panic hook's backtrace printed as output
        // would be the same frames again, as text the agent pays for.
        "RUST_BACKTRACE=0".to_owned(),
    ]);
    if let Some(commands) = rust_formatters(ctx, interrupt).await {
        arguments["initCommands"] = json!(commands);
    }
    let shown_binary = ctx.shown(&binary.executable);
    plain(
        AdapterKind::Lldb,
        arguments,
        format!("cargo test {} ({shown_binary})", shlex_join(tokens)),
    )
}

/// lldb commands that load the toolchain's Rust formatters (what `rust-lldb` does), so a
/// `&str` shows its text and a `Vec` its elements; `None` when the toolchain has none.
async fn rust_formatters(ctx: &Context<'_>, interrupt: &mut Interrupt) -> Option<Vec<String>> {
    let rustc = ctx.env.find("rustc")?;
    let args = ["--print".to_owned(), "sysroot".to_owned()];
    let printed = run_captured(ctx, &rustc, &args, ctx.root(), LIST_TIMEOUT, interrupt)
        .await
        .ok()?;
    let etc = Path::new(printed.stdout.trim()).join("lib/rustlib/etc");
    let lookup = etc.join("lldb_lookup.py");
    let commands = etc.join("lldb_commands");
    (lookup.is_file() && commands.is_file()).then(|| {
        vec![
            format!("command script import \"{}\"", lookup.display()),
            format!("command source -s 1 \"{}\"", commands.display()),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_test_binaries_and_errors_from_cargo_json() {
        let stdout = [
            json!({"reason": "compiler-artifact", "profile": {"test": true},
                "executable": "/p/target/debug/deps/semver-1", "manifest_path": "/p/Cargo.toml",
                "target": {"name": "semver", "kind": ["lib"]}}),
            json!({"reason": "compiler-artifact", "profile": {"test": false},
                "executable": null, "target": {"name": "build-script-build", "kind": ["custom-build"]}}),
            json!({"reason": "compiler-message", "message": {"level": "warning", "rendered": "warning: x"}}),
            json!({"reason": "compiler-message", "message": {"level": "error",
                "rendered": "error[E0308]: mismatched types\n --> src/lib.rs:3:5\n"}}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\nnot json\n");
        let (binaries, errors) = read_build(&stdout);
        assert_eq!(binaries.len(), 1);
        assert_eq!(binaries[0].kind, "lib");
        assert_eq!(binaries[0].manifest_dir, Path::new("/p"));
        assert_eq!(binaries[0].describe(), "the library's unit tests (semver)");
        assert_eq!(
            errors,
            ["error[E0308]: mismatched types\n --> src/lib.rs:3:5"]
        );
        assert_eq!(
            listed_tests("a::b: test\nc: benchmark\nd: test\n"),
            ["a::b", "d"]
        );
    }
}
