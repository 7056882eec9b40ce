//! What `launch` starts — a program, a Python module, or a test — turned into the adapter to
//! use and the launch request it gets.
//!
//! A test is named the way its runner names it, in one string:
//! - pytest (debugpy): `tests/test_x.py::TestY::test_z`, a file, a folder, `-k expr`: run as
//!   `python -m pytest` with the project's python (`detect::project_python`); a failure stops where the exception is
//!   raised in the checkout's code (debugpy's `userUnhandled` filter: pytest catches it, so
//!   it is never "uncaught"), and pytest's own `SystemExit` at the end is never a stop;
//! - go test (delve): `./pkg -run TestName` (`go test` flags; `-run` becomes `-test.run`),
//!   built in delve's test mode (`-vet=off` unless a `-vet` flag is given: vet findings are
//!   not what a debugging session is for, and they stop the build);
//! - cargo test (lldb): `name` (a libtest filter), optionally with cargo's target selection
//!   (`--test version parse`, `--lib name`, `-p crate name`): built with
//!   `cargo test --no-run --message-format=json`, the binary holding the test found with
//!   `--list`, run under lldb-dap with the filter and `--test-threads=1`.

mod cargo;
mod spec;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::adapters::{launch_arguments, merge, pick_adapter, AdapterKind};
use crate::config::{DebugConfig, Settings};
use crate::detect::{self, Environment};
use crate::error::DebugError;
use crate::interrupt::Interrupt;
use cc_workspace::python::PythonChoice;

pub use spec::{CargoTest, GoTest};

/// What `launch` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchTarget {
    /// A program: a script, a Go package directory or file, a native executable, a Python
    /// console script (`.venv/bin/pytest`). Absolute.
    Program(PathBuf),
    /// A Python module, run as `python -m NAME` under debugpy.
    Module(String),
    /// A test, as its runner names it (see the module documentation).
    Test(String),
}

/// One `launch`: what to run, its arguments, and the adapter when the target does not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRequest {
    /// What to run.
    pub target: LaunchTarget,
    /// Arguments: the program's, or appended to the test runner's.
    pub args: Vec<String>,
    /// `debugpy`, `lldb`, `delve`, `dart`; by default the target decides.
    pub adapter: Option<String>,
}

impl LaunchRequest {
    /// Runs the program at `path` (absolute) with `args`.
    pub fn program(path: impl Into<PathBuf>, args: &[String]) -> Self {
        LaunchRequest {
            target: LaunchTarget::Program(path.into()),
            args: args.to_vec(),
            adapter: None,
        }
    }

    /// Runs `python -m name` with `args` under debugpy.
    pub fn module(name: impl Into<String>, args: &[String]) -> Self {
        LaunchRequest {
            target: LaunchTarget::Module(name.into()),
            args: args.to_vec(),
            adapter: None,
        }
    }

    /// Runs the test `spec` (see the module documentation).
    pub fn test(spec: impl Into<String>) -> Self {
        LaunchRequest {
            target: LaunchTarget::Test(spec.into()),
            args: Vec::new(),
            adapter: None,
        }
    }

    /// Uses the adapter `name`.
    #[must_use]
    pub fn with_adapter(mut self, name: impl Into<String>) -> Self {
        self.adapter = Some(name.into());
        self
    }

    /// Appends `args`.
    #[must_use]
    pub fn with_args(mut self, args: &[String]) -> Self {
        self.args.extend_from_slice(args);
        self
    }
}

/// A launch ready to start.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub kind: AdapterKind,
    /// The launch request's arguments, the table's extra keys merged.
    pub arguments: Value,
    /// What runs, for results and messages.
    pub target: String,
    /// Exception filters enabled on top of the adapter's defaults.
    pub extra_filters: Vec<String>,
    /// Functions to stop in (a Rust test's panic).
    pub function_breakpoints: Vec<String>,
    /// What was added on the caller's behalf, said in the result.
    pub notes: Vec<String>,
}

/// What planning needs from the supervisor.
pub(crate) struct Context<'a> {
    pub env: &'a Environment,
    pub extra_env: &'a [(String, String)],
    pub config: &'a DebugConfig,
    pub settings: Settings,
}

impl Context<'_> {
    fn root(&self) -> &Path {
        &self.env.root
    }

    fn shown(&self, path: &Path) -> String {
        crate::session::display_path(self.root(), &path.display().to_string())
    }
}

/// Which adapter and which launch request `request` needs; builds a Rust test first.
pub(crate) async fn plan(
    ctx: &Context<'_>,
    request: &LaunchRequest,
    interrupt: &mut Interrupt,
) -> Result<Plan, DebugError> {
    let named = request
        .adapter
        .as_deref()
        .map(|name| {
            AdapterKind::from_name(name).ok_or_else(|| DebugError::UnknownAdapter {
                name: name.into(),
                known: AdapterKind::names().join(", "),
            })
        })
        .transpose()?;
    let mut plan = match &request.target {
        LaunchTarget::Program(program) => program_plan(ctx, program, &request.args, named)?,
        LaunchTarget::Module(module) => module_plan(ctx, module, &request.args, named)?,
        LaunchTarget::Test(spec) => {
            let mut tokens = spec::split(spec)?;
            tokens.extend(request.args.iter().cloned());
            match spec::test_runner(ctx.root(), &tokens, named)? {
                AdapterKind::Debugpy => pytest_plan(ctx, tokens).await?,
                AdapterKind::Delve => go_plan(ctx, &tokens)?,
                AdapterKind::Lldb => cargo::plan(ctx, &tokens, interrupt).await?,
                AdapterKind::Dart => {
                    return Err(DebugError::InvalidArguments(
                        "`test` runs pytest (debugpy), go test (delve) or cargo test (lldb); \
                         dart tests are launched as a `program`"
                            .into(),
                    ))
                }
            }
        }
    };
    let extra = ctx
        .config
        .adapter(plan.kind)
        .and_then(|o| o.launch.as_ref());
    merge(&mut plan.arguments, extra);
    Ok(plan)
}

fn plain(kind: AdapterKind, arguments: Value, target: String) -> Plan {
    Plan {
        kind,
        arguments,
        target,
        extra_filters: Vec::new(),
        function_breakpoints: Vec::new(),
        notes: Vec::new(),
    }
}

fn program_plan(
    ctx: &Context<'_>,
    program: &Path,
    args: &[String],
    named: Option<AdapterKind>,
) -> Result<Plan, DebugError> {
    let kind = match named {
        Some(kind) => kind,
        None => pick_adapter(program)?,
    };
    let mut arguments = launch_arguments(kind, program, args, ctx.root(), None);
    let mut plan = plain(kind, Value::Null, ctx.shown(program));
    if kind == AdapterKind::Debugpy {
        // A console script (`.venv/bin/pytest`) runs with the interpreter it names; any
        // other program with the project's (never the adapter's own environment).
        if let Some(python) = spec::shebang_python(program) {
            arguments["python"] = json!(python.display().to_string());
        } else {
            let python = checkout_python(ctx)?;
            arguments["python"] = json!(python.path.display().to_string());
            plan.notes.push(python_note(ctx, &python));
        }
        if spec::is_pytest_script(program) {
            pytest_treatment(ctx, &mut arguments, &mut plan);
        }
    }
    plan.arguments = arguments;
    Ok(plan)
}

fn module_plan(
    ctx: &Context<'_>,
    module: &str,
    args: &[String],
    named: Option<AdapterKind>,
) -> Result<Plan, DebugError> {
    if let Some(kind) = named.filter(|kind| *kind != AdapterKind::Debugpy) {
        return Err(DebugError::InvalidArguments(format!(
            "`module` runs `python -m {module}` under debugpy, not `{kind}`; for other \
             adapters give `program` (or `test`)"
        )));
    }
    if module.is_empty() || module.split('.').any(|part| !spec::is_identifier(part)) {
        return Err(DebugError::InvalidArguments(format!(
            "`{module}` is not a Python module name (dotted identifiers, as in `python -m \
             package.module`)"
        )));
    }
    let python = checkout_python(ctx)?;
    let mut arguments = python_request(ctx, &python.path, module, args);
    let mut plan = plain(
        AdapterKind::Debugpy,
        Value::Null,
        format!("python -m {module}"),
    );
    plan.notes.push(python_note(ctx, &python));
    if module == "pytest" {
        pytest_treatment(ctx, &mut arguments, &mut plan);
    }
    plan.arguments = arguments;
    Ok(plan)
}

/// A debugpy request running `python -m module args` in the root.
fn python_request(ctx: &Context<'_>, python: &Path, module: &str, args: &[String]) -> Value {
    json!({
        "type": "python",
        "request": "launch",
        "name": "cc debug",
        "module": module,
        "python": python.display().to_string(),
        "args": args,
        "cwd": ctx.root().display().to_string(),
        "console": "internalConsole",
        "redirectOutput": true,
        "justMyCode": true,
        "stopOnEntry": false,
    })
}

/// pytest catches a failing test's exception and exits through `SystemExit`: stop where the
/// checkout's code raises instead (`userUnhandled`), never at the exit. A checkout with a
/// src layout gets `src` first on `PYTHONPATH`.
fn pytest_treatment(ctx: &Context<'_>, arguments: &mut Value, plan: &mut Plan) {
    arguments["breakOnSystemExit"] = json!([]);
    plan.extra_filters.push("userUnhandled".into());
    if let Some((src, path)) =
        cc_workspace::python::src_layout_python_path(ctx.root(), ctx.extra_env)
    {
        let path = path.to_string_lossy().into_owned();
        arguments["env"] = json!({ "PYTHONPATH": path });
        plan.notes.push(format!(
            "src layout: {} is first on PYTHONPATH, so the tests import the checkout's code",
            ctx.shown(&src)
        ));
    }
}

/// The project's Python ([`detect::project_python`]), which runs a program, a module or
/// pytest.
fn checkout_python(ctx: &Context<'_>) -> Result<PythonChoice, DebugError> {
    detect::project_python(ctx.env).map_err(|reason| DebugError::AdapterUnavailable {
        adapter: "debugpy".into(),
        reason,
    })
}

/// Which Python runs the program, and why (the agent sees whose packages it imports).
fn python_note(ctx: &Context<'_>, python: &PythonChoice) -> String {
    format!("python: {} ({})", ctx.shown(&python.path), python.why)
}

async fn pytest_plan(ctx: &Context<'_>, tokens: Vec<String>) -> Result<Plan, DebugError> {
    let python = checkout_python(ctx)?;
    let shown_python = python.path.display().to_string();
    detect::probe(ctx.env, &shown_python, &["-c", "import pytest"])
        .await
        .map_err(|why| DebugError::LaunchFailed {
            adapter: "debugpy".into(),
            message: format!(
                "`{shown_python}` cannot import pytest ({why}); install it with \
                 `{shown_python} -m pip install pytest`"
            ),
            output_tail: String::new(),
        })?;
    let target = format!("pytest {}", shlex_join(&tokens));
    let mut arguments = python_request(ctx, &python.path, "pytest", &tokens);
    let mut plan = plain(AdapterKind::Debugpy, Value::Null, target);
    plan.notes.push(python_note(ctx, &python));
    pytest_treatment(ctx, &mut arguments, &mut plan);
    plan.arguments = arguments;
    Ok(plan)
}

fn go_plan(ctx: &Context<'_>, tokens: &[String]) -> Result<Plan, DebugError> {
    let test = GoTest::parse(ctx.root(), tokens)?;
    let package = test.package.display().to_string();
    let mut shown_pkg = ctx.shown(&test.package);
    if shown_pkg != "." && !shown_pkg.starts_with('/') {
        shown_pkg = format!("./{shown_pkg}");
    }
    let mut plan = plain(
        AdapterKind::Delve,
        json!({
            "type": "go",
            "request": "launch",
            "name": "cc debug",
            "mode": "test",
            "program": package,
            "args": test.test_args,
            "cwd": package,
            "buildFlags": test.build_flags.join(" "),
            "stopOnEntry": false,
        }),
        format!("go test {shown_pkg} {}", shlex_join(&test.test_args)),
    );
    if test.vet_off_added {
        plan.notes
            .push("built with -vet=off (vet findings would stop a debugging build)".into());
    }
    Ok(plan)
}

/// Words joined for display, quoted where a shell would split them.
fn shlex_join(words: &[String]) -> String {
    words
        .iter()
        .map(|word| {
            let plain = !word.is_empty()
                && !word
                    .chars()
                    .any(|c| c.is_whitespace() || "'\"\\$`|&;<>()*?[]{}#~!".contains(c));
            match shlex::try_quote(word) {
                Ok(quoted) if !plain => quoted.into_owned(),
                _ => word.clone(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
