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
mod names;
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
    /// How long this launch waits for the first stop (default: the configured wait).
    pub wait: Option<std::time::Duration>,
    /// The adapter's exception filters to set, instead of the defaults (debugpy:
    /// `uncaught`, plus `userUnhandled` for pytest); `Some(vec![])` stops on none.
    pub exceptions: Option<Vec<String>>,
}

impl LaunchRequest {
    /// Runs the program at `path` (absolute) with `args`.
    pub fn program(path: impl Into<PathBuf>, args: &[String]) -> Self {
        LaunchRequest {
            target: LaunchTarget::Program(path.into()),
            args: args.to_vec(),
            adapter: None,
            wait: None,
            exceptions: None,
        }
    }

    /// Runs `python -m name` with `args` under debugpy.
    pub fn module(name: impl Into<String>, args: &[String]) -> Self {
        LaunchRequest {
            target: LaunchTarget::Module(name.into()),
            args: args.to_vec(),
            adapter: None,
            wait: None,
            exceptions: None,
        }
    }

    /// Runs the test `spec` (see the module documentation).
    pub fn test(spec: impl Into<String>) -> Self {
        LaunchRequest {
            target: LaunchTarget::Test(spec.into()),
            args: Vec::new(),
            adapter: None,
            wait: None,
            exceptions: None,
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

/// What planning needs from the debugger.
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
                AdapterKind::Debugpy => pytest_plan(ctx, tokens, interrupt).await?,
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
///
/// `contextlib` counts as the checkout's code: an exception raised inside a `with` block of
/// a `@contextmanager` is thrown into the generator and caught by contextlib's `__exit__`,
/// which re-raises it; as library code that catch made every such exception "unhandled by
/// user code" (click's own `Exit(0)` for `--help`, caught by click further up, stopped
/// every help test).
fn pytest_treatment(ctx: &Context<'_>, arguments: &mut Value, plan: &mut Plan) {
    arguments["breakOnSystemExit"] = json!([]);
    arguments["rules"] = json!([{"module": "contextlib", "include": true}]);
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

async fn pytest_plan(
    ctx: &Context<'_>,
    mut tokens: Vec<String>,
    interrupt: &mut Interrupt,
) -> Result<Plan, DebugError> {
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
    let resolved = pytest_resolve(ctx, &python.path, &mut tokens, interrupt).await?;
    let target = format!("pytest {}", shlex_join(&tokens));
    let mut arguments = python_request(ctx, &python.path, "pytest", &tokens);
    let mut plan = plain(AdapterKind::Debugpy, Value::Null, target);
    plan.notes.extend(resolved);
    plan.notes.push(python_note(ctx, &python));
    pytest_treatment(ctx, &mut arguments, &mut plan);
    plan.arguments = arguments;
    Ok(plan)
}

/// What a pytest test word names that pytest would not find, checked without running
/// pytest: a bare function name (no file), a file that does not exist, a function its file
/// does not define. `None` for what pytest can take (options, paths, ids that look right).
fn pytest_doubt(root: &Path, word: &str) -> Option<String> {
    if word.starts_with('-') {
        return None;
    }
    let (path, rest) = match word.split_once("::") {
        Some((path, rest)) => (path, Some(rest)),
        None => (word, None),
    };
    let file = root.join(path);
    match rest {
        None if file.exists() || path.ends_with(".py") || path.contains('/') => {
            (!file.exists()).then(|| format!("`{path}` does not exist"))
        }
        None => Some(format!(
            "`{word}` is not a path; pytest names a test by its file: `tests/test_x.py::{word}` \
             (or `-k {word}` for every test whose name holds it)"
        )),
        Some(_) if !file.is_file() => Some(format!("`{path}` is not a file")),
        Some(rest) => {
            let function = rest.rsplit("::").next().unwrap_or(rest);
            let function = function.split('[').next().unwrap_or(function);
            let source = std::fs::read_to_string(&file).ok()?;
            let defined = source.lines().any(|line| {
                let line = line.trim_start();
                ["def ", "async def ", "class "].iter().any(|kw| {
                    line.strip_prefix(kw).is_some_and(|after| {
                        after.starts_with(function)
                            && after[function.len()..].starts_with(['(', ':'])
                    })
                })
            });
            // A test made by a plugin or an assignment is not in the text: pytest decides.
            let made_elsewhere = source.contains(&format!("{function} ="));
            (!defined && !made_elsewhere).then(|| format!("`{path}` defines no `{function}`"))
        }
    }
}

/// Checks the pytest words before anything runs: a bare function name defined by exactly
/// one test function becomes its node id (the note says so); any other word pytest would
/// not find is an error listing the nearest node ids (`pytest --collect-only -q`).
async fn pytest_resolve(
    ctx: &Context<'_>,
    python: &Path,
    tokens: &mut [String],
    interrupt: &mut Interrupt,
) -> Result<Option<String>, DebugError> {
    let Some((index, doubt)) = tokens
        .iter()
        .enumerate()
        .find_map(|(i, word)| pytest_doubt(ctx.root(), word).map(|d| (i, d)))
    else {
        return Ok(None);
    };
    let word = tokens[index].clone();
    let envs: Vec<(String, std::ffi::OsString)> =
        cc_workspace::python::src_layout_python_path(ctx.root(), ctx.extra_env)
            .map(|(_, path)| ("PYTHONPATH".to_owned(), path))
            .into_iter()
            .collect();
    let args: Vec<String> = ["-m", "pytest", "--collect-only", "-q"]
        .map(str::to_owned)
        .to_vec();
    let collected = cargo::run_captured_with(
        ctx,
        python,
        &args,
        ctx.root(),
        &envs,
        std::time::Duration::from_secs(120),
        interrupt,
    )
    .await?;
    let ids = names::pytest_node_ids(&collected.stdout);
    // The text check can doubt a test pytest has (one a base class in another file defines,
    // one a plugin makes): what pytest collects decides.
    if names::pytest_collects(&ids, &word) {
        return Ok(None);
    }
    let functions = names::pytest_functions(&ids);
    if !word.contains("::") && !word.contains('/') && !word.ends_with(".py") {
        if let [one] = names::pytest_named(&functions, &word).as_slice() {
            let id = (*one).clone();
            tokens[index] = id.clone();
            return Ok(Some(format!(
                "`{word}` is the test {id} (pytest names a test by its file)"
            )));
        }
    }
    let wanted = word.split('[').next().unwrap_or(&word);
    let closest = names::nearest(wanted, &functions, names::SUGGESTED);
    let found = if functions.is_empty() {
        format!(
            "`pytest --collect-only -q` found no tests{}",
            collected
                .stdout
                .lines()
                .chain(collected.stderr.lines())
                .find(|l| l.contains("rror"))
                .map(|l| format!(" ({})", l.trim()))
                .unwrap_or_default()
        )
    } else {
        format!(
            "the nearest of the {} tests pytest collects: {}",
            functions.len(),
            names::listed(&closest, closest.len())
        )
    };
    Err(DebugError::TestNotFound(format!(
        "no test `{word}`: {doubt}; {found}"
    )))
}

/// A bare test name in a module whose root holds no Go files names the package that
/// defines it: `TestX` becomes `./pkg TestX` when one package does (the note says which).
fn go_resolve(root: &Path, tokens: &[String]) -> Result<(Vec<String>, Option<String>), DebugError> {
    let Some(first) = tokens.first() else {
        return Ok((tokens.to_vec(), None));
    };
    let bare = !first.starts_with(['-', '.', '/'])
        && !first.ends_with(".go")
        && !root.join(first).is_dir()
        && !spec::has_files_with(root, "go");
    if !bare {
        return Ok((tokens.to_vec(), None));
    }
    let functions = names::go_test_functions(root, true);
    let mut packages: Vec<&Path> = Vec::new();
    for function in &functions {
        if names::go_run_matches(first, std::slice::from_ref(&function.name)) == Some(true)
            && !packages.contains(&function.package.as_path())
        {
            packages.push(&function.package);
        }
    }
    let shown = |package: &Path| match package.strip_prefix(root) {
        Ok(rest) => format!("./{}", rest.display()),
        Err(_) => package.display().to_string(),
    };
    if let [package] = packages.as_slice() {
        let package = shown(package);
        let mut resolved = vec![package.clone()];
        resolved.extend(tokens.iter().cloned());
        return Ok((
            resolved,
            Some(format!(
                "`{first}` is in {package} (go test runs one package)"
            )),
        ));
    }
    let all: Vec<String> = functions
        .iter()
        .map(|f| format!("{} {}", shown(&f.package), f.name))
        .collect();
    let where_ = if packages.is_empty() {
        let closest = names::nearest(first, &all, names::SUGGESTED);
        format!(
            "no package of the workspace defines a test it matches; the nearest of {}: {}",
            all.len(),
            closest.join(", ")
        )
    } else {
        let many: Vec<String> = packages.iter().map(|p| shown(p)).collect();
        format!("it matches tests in {}; give one", many.join(", "))
    };
    Err(DebugError::TestNotFound(format!(
        "`{first}`: go test runs the tests of one package, named as `./pkg -run TestName`; \
         {where_}"
    )))
}

/// A `-run` pattern that selects no test of the package is an error naming the nearest
/// (go test itself would pass with "no tests to run", and nothing would be debugged).
fn go_check_run(test: &GoTest, shown_pkg: &str) -> Result<(), DebugError> {
    let Some(pattern) = test
        .test_args
        .iter()
        .position(|a| a == "-test.run")
        .and_then(|at| test.test_args.get(at + 1))
    else {
        return Ok(());
    };
    let functions: Vec<String> = names::go_test_functions(&test.package, false)
        .into_iter()
        .map(|f| f.name)
        .collect();
    if functions.is_empty() || names::go_run_matches(pattern, &functions) != Some(false) {
        return Ok(());
    }
    let closest = names::nearest(pattern, &functions, names::SUGGESTED);
    Err(DebugError::TestNotFound(format!(
        "`-run {pattern}` matches no test of {shown_pkg} (go test matches the pattern against \
         top-level test names, `TestA/sub` for a subtest); the nearest of its {}: {}",
        functions.len(),
        closest.join(", ")
    )))
}

fn go_plan(ctx: &Context<'_>, tokens: &[String]) -> Result<Plan, DebugError> {
    let (tokens, resolved) = go_resolve(ctx.root(), tokens)?;
    let test = GoTest::parse(ctx.root(), &tokens)?;
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
    go_check_run(&test, &shown_pkg)?;
    plan.notes.extend(resolved);
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
