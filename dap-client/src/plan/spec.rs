//! Reading a `test` string: which runner it is for, and what `go test` and `cargo test`
//! flags it holds.

use std::path::{Path, PathBuf};

use crate::adapters::{first_line, is_python_script, AdapterKind};
use crate::error::DebugError;

fn invalid(message: impl Into<String>) -> DebugError {
    DebugError::InvalidArguments(message.into())
}

/// Characters a test id's parameters may hold that a shell would split or unquote.
const SHELL_SPECIAL: [char; 7] = [' ', '\t', '\n', '\'', '"', '\\', '#'];
/// Where [`protect_test_ids`] put them: private-use characters no test id holds.
const PROTECTED: [char; 7] = [
    '\u{F8F0}', '\u{F8F1}', '\u{F8F2}', '\u{F8F3}', '\u{F8F4}', '\u{F8F5}', '\u{F8F6}',
];

/// A pytest node id as pytest prints it (`tests/t.py::test_x[no-wrap mark-truncate]`) is one
/// word: inside the `[…]` of a word holding `::`, blanks and quotes are the id's own.
fn protect_test_ids(spec: &str) -> String {
    let mut out = String::with_capacity(spec.len());
    let mut word = String::new();
    let mut depth = 0usize;
    for c in spec.chars() {
        if depth > 0 {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            match SHELL_SPECIAL.iter().position(|s| *s == c) {
                Some(i) => out.push(PROTECTED[i]),
                None => out.push(c),
            }
            continue;
        }
        if c == '[' && word.contains("::") {
            depth = 1;
        }
        if c.is_whitespace() {
            word.clear();
        } else {
            word.push(c);
        }
        out.push(c);
    }
    out
}

fn unprotect(word: String) -> String {
    if !word.chars().any(|c| PROTECTED.contains(&c)) {
        return word;
    }
    word.chars()
        .map(|c| match PROTECTED.iter().position(|p| *p == c) {
            Some(i) => SHELL_SPECIAL[i],
            None => c,
        })
        .collect()
}

/// Splits like a shell (quotes group words), a pytest node id with parameters staying one
/// word; an unbalanced quote is an error.
pub(crate) fn split(spec: &str) -> Result<Vec<String>, DebugError> {
    let tokens = shlex::split(&protect_test_ids(spec))
        .map(|t| t.into_iter().map(unprotect).collect::<Vec<_>>())
        .ok_or_else(|| {
            invalid(format!(
                "`test` has an unbalanced quote: {spec:?}; quote a `-k` expression as in a shell"
            ))
        })?;
    if tokens.is_empty() {
        return Err(invalid(
            "`test` is empty; name a test: `tests/test_x.py::test_y` (pytest), `./pkg -run \
             TestName` (go), `test_name` (cargo)",
        ));
    }
    Ok(tokens)
}

const PYTHON_MARKERS: [&str; 7] = [
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "pytest.ini",
    "tox.ini",
    "conftest.py",
    "requirements.txt",
];

pub(crate) fn has_files_with(dir: &Path, extension: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.path().extension().is_some_and(|ext| ext == extension))
    })
}

/// Which runner a test string is for: the adapter named, else what its first word says
/// (a `.py` path or node id, `-k` → pytest; a Go package or `-run` → go test), else the
/// checkout's one kind of project.
pub(crate) fn test_runner(
    root: &Path,
    tokens: &[String],
    named: Option<AdapterKind>,
) -> Result<AdapterKind, DebugError> {
    if let Some(kind) = named {
        return Ok(kind);
    }
    let first = tokens.first().map(String::as_str).unwrap_or_default();
    let path_part = first.split("::").next().unwrap_or_default();
    if path_part.ends_with(".py") || matches!(first, "-k" | "-m") {
        return Ok(AdapterKind::Debugpy);
    }
    if path_part.ends_with(".go") || tokens.iter().any(|t| t == "-run" || t.starts_with("-run=")) {
        return Ok(AdapterKind::Delve);
    }
    let dir = root.join(path_part);
    if !path_part.is_empty() && dir.is_dir() {
        if has_files_with(&dir, "go") {
            return Ok(AdapterKind::Delve);
        }
        if has_files_with(&dir, "py") {
            return Ok(AdapterKind::Debugpy);
        }
    }
    let python = PYTHON_MARKERS.iter().any(|m| root.join(m).exists());
    let go = root.join("go.mod").is_file();
    let cargo = root.join("Cargo.toml").is_file();
    match (python, go, cargo) {
        (true, false, false) => Ok(AdapterKind::Debugpy),
        (false, true, false) => Ok(AdapterKind::Delve),
        (false, false, true) => Ok(AdapterKind::Lldb),
        (false, false, false) => Err(invalid(format!(
            "cannot tell which test runner `{first}` is for: the workspace has no \
             pyproject.toml/setup.py (pytest), go.mod (go test) or Cargo.toml (cargo test) at \
             its root; pass `adapter` (debugpy, delve or lldb)"
        ))),
        _ => Err(invalid(format!(
            "cannot tell which test runner `{first}` is for: the workspace has more than one \
             kind of project at its root; pass `adapter` (debugpy for pytest, delve for go \
             test, lldb for cargo test)"
        ))),
    }
}

/// Whether `word` is a Python identifier (ASCII subset, which covers module names in use).
pub(crate) fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// The interpreter a Python console script names (`#!/path/.venv/bin/python3`), when it
/// exists.
pub(crate) fn shebang_python(path: &Path) -> Option<PathBuf> {
    let line = first_line(path)?;
    let command = line.strip_prefix("#!")?.split_whitespace().next()?;
    let interpreter = PathBuf::from(command);
    let name = interpreter.file_name()?.to_str()?;
    (name.starts_with("python") && interpreter.is_absolute() && interpreter.is_file())
        .then_some(interpreter)
}

/// Whether `path` is pytest's console script.
pub(crate) fn is_pytest_script(path: &Path) -> bool {
    matches!(
        path.file_name().and_then(|n| n.to_str()),
        Some("pytest" | "py.test")
    ) && is_python_script(path)
}

/// A `go test` invocation read from a `test` string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoTest {
    /// The package directory (absolute).
    pub package: PathBuf,
    /// Arguments of the test binary (`-test.run X`, …).
    pub test_args: Vec<String>,
    /// Build flags (`-vet=off`, `-tags x`).
    pub build_flags: Vec<String>,
    /// Whether `-vet=off` was added (no `-vet` flag was given).
    pub vet_off_added: bool,
}

/// `go test` flags that go to the test binary as `-test.NAME`, and whether they take a value.
const GO_TEST_FLAGS: [(&str, bool); 14] = [
    ("run", true),
    ("skip", true),
    ("v", false),
    ("count", true),
    ("timeout", true),
    ("bench", true),
    ("benchtime", true),
    ("cpu", true),
    ("parallel", true),
    ("short", false),
    ("failfast", false),
    ("list", true),
    ("shuffle", true),
    ("benchmem", false),
];

/// `go test` flags that go to the build.
const GO_BUILD_FLAGS: [(&str, bool); 7] = [
    ("tags", true),
    ("vet", true),
    ("race", false),
    ("gcflags", true),
    ("ldflags", true),
    ("mod", true),
    ("trimpath", false),
];

fn go_flag(table: &[(&'static str, bool)], name: &str) -> Option<(&'static str, bool)> {
    table.iter().find(|(flag, _)| *flag == name).copied()
}

impl GoTest {
    /// Reads `[./pkg] [TestName] [go test flags…] [-args …]`.
    pub fn parse(root: &Path, tokens: &[String]) -> Result<GoTest, DebugError> {
        let (package, rest) = go_package(root, tokens)?;
        if !has_files_with(&package, "go") {
            return Err(invalid(format!(
                "{} holds no Go files; give the package: `./pkg -run TestName`",
                package.display()
            )));
        }
        let GoFlags {
            test_args,
            mut build_flags,
            vet_given,
        } = GoFlags::read(rest)?;
        if !vet_given {
            build_flags.insert(0, "-vet=off".into());
        }
        Ok(GoTest {
            package,
            test_args,
            build_flags,
            vet_off_added: !vet_given,
        })
    }
}

/// The package a `go test` string names first (a directory of the workspace, or a `.go`
/// file's), else the root; and the tokens after it.
fn go_package<'t>(
    root: &Path,
    tokens: &'t [String],
) -> Result<(PathBuf, &'t [String]), DebugError> {
    let mut rest = tokens;
    let mut package = root.to_path_buf();
    if let Some(first) = tokens.first().filter(|t| !t.starts_with('-')) {
        let candidate = root.join(first);
        let looks_like_path = first.starts_with('.') || first.starts_with('/');
        if first.ends_with("/...") || first == "..." {
            return Err(invalid(format!(
                "`{first}` names many packages; a debug session runs one: give its \
                 directory (`./pkg -run TestName`)"
            )));
        }
        if looks_like_path || candidate.is_dir() || first.ends_with(".go") {
            let dir = if first.ends_with(".go") {
                candidate
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or(candidate)
            } else {
                candidate
            };
            let dir = dir.canonicalize().map_err(|_| {
                invalid(format!(
                    "`{first}` is not a Go package directory of the workspace"
                ))
            })?;
            if !dir.starts_with(root) {
                return Err(invalid(format!("`{first}` is outside the workspace root")));
            }
            package = dir;
            rest = &tokens[1..];
        }
    }
    Ok((package, rest))
}

/// The flags of a `go test` string, sorted: the test binary's and the build's.
struct GoFlags {
    test_args: Vec<String>,
    build_flags: Vec<String>,
    /// `-vet` was given (else the build turns vet off).
    vet_given: bool,
}

impl GoFlags {
    /// Reads the flags, a bare token as the test pattern, and everything after `-args` as
    /// the test's own arguments.
    fn read(rest: &[String]) -> Result<GoFlags, DebugError> {
        let mut test_args = Vec::new();
        let mut build_flags = Vec::new();
        let mut has_run = false;
        let mut vet_given = false;
        let mut index = 0;
        while index < rest.len() {
            let token = &rest[index];
            index += 1;
            if token == "-args" || token == "--args" {
                test_args.extend(rest[index..].iter().cloned());
                break;
            }
            let Some(flag) = token.strip_prefix("--").or_else(|| token.strip_prefix('-')) else {
                if has_run {
                    return Err(invalid(format!(
                        "`{token}`: only one test pattern (`-run`) is taken; join names as \
                         `-run 'TestA|TestB'`"
                    )));
                }
                has_run = true;
                test_args.extend(["-test.run".to_owned(), token.clone()]);
                continue;
            };
            let (name, inline) = match flag.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (flag, None),
            };
            let bare = name.strip_prefix("test.").unwrap_or(name);
            let mut value_of = |takes: bool| -> Result<Option<String>, DebugError> {
                if !takes || inline.is_some() {
                    return Ok(inline.clone());
                }
                let value = rest
                    .get(index)
                    .cloned()
                    .ok_or_else(|| invalid(format!("`{token}` needs a value")))?;
                index += 1;
                Ok(Some(value))
            };
            if let Some((flag, takes)) = go_flag(&GO_TEST_FLAGS, bare) {
                has_run |= flag == "run";
                test_args.push(format!("-test.{flag}"));
                test_args.extend(value_of(takes)?);
            } else if let Some((flag, takes)) = go_flag(&GO_BUILD_FLAGS, name) {
                vet_given |= flag == "vet";
                match value_of(takes)? {
                    Some(value) => build_flags.push(format!("-{flag}={value}")),
                    None => build_flags.push(format!("-{flag}")),
                }
            } else {
                let known: Vec<&str> = GO_TEST_FLAGS
                    .iter()
                    .chain(&GO_BUILD_FLAGS)
                    .map(|(flag, _)| *flag)
                    .collect();
                return Err(invalid(format!(
                    "unknown go test flag `{token}`; accepted: -{} (and `-args …` for the \
                     test's own arguments)",
                    known.join(", -")
                )));
            }
        }
        Ok(GoFlags {
            test_args,
            build_flags,
            vet_given,
        })
    }
}

/// A `cargo test` invocation read from a `test` string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoTest {
    /// Target selection and features for `cargo test --no-run` (`--test x`, `-p y`).
    pub cargo_args: Vec<String>,
    /// Test name filters.
    pub filters: Vec<String>,
    /// Other libtest arguments (`--exact`, `--ignored`, anything after `--`).
    pub binary_args: Vec<String>,
}

const CARGO_VALUE_FLAGS: [&str; 9] = [
    "-p",
    "--package",
    "--bin",
    "--test",
    "--example",
    "--bench",
    "--features",
    "-F",
    "--manifest-path",
];
const CARGO_FLAGS: [&str; 9] = [
    "--lib",
    "--bins",
    "--tests",
    "--examples",
    "--all-targets",
    "--all-features",
    "--no-default-features",
    "--release",
    "--workspace",
];
const LIBTEST_FLAGS: [&str; 5] = [
    "--exact",
    "--ignored",
    "--include-ignored",
    "--nocapture",
    "--show-output",
];

impl CargoTest {
    /// Reads `[cargo target selection…] [filter…] [--exact] [-- libtest args…]`.
    pub fn parse(tokens: &[String]) -> Result<CargoTest, DebugError> {
        let mut test = CargoTest {
            cargo_args: Vec::new(),
            filters: Vec::new(),
            binary_args: Vec::new(),
        };
        let mut index = 0;
        while index < tokens.len() {
            let token = &tokens[index];
            index += 1;
            if token == "--" {
                test.binary_args.extend(tokens[index..].iter().cloned());
                break;
            }
            if token == "--doc" {
                return Err(invalid(
                    "doc tests run in a process of rustdoc's own and cannot be debugged here; \
                     debug a unit or integration test",
                ));
            }
            let name = token
                .split_once('=')
                .map_or(token.as_str(), |(name, _)| name);
            if CARGO_VALUE_FLAGS.contains(&name) {
                test.cargo_args.push(token.clone());
                if name == token {
                    let value = tokens
                        .get(index)
                        .ok_or_else(|| invalid(format!("`{token}` needs a value")))?;
                    test.cargo_args.push(value.clone());
                    index += 1;
                }
            } else if CARGO_FLAGS.contains(&name) {
                test.cargo_args.push(token.clone());
            } else if LIBTEST_FLAGS.contains(&name) {
                test.binary_args.push(token.clone());
            } else if token.starts_with('-') {
                return Err(invalid(format!(
                    "unknown cargo test flag `{token}`; accepted: {}, {}, and after `--` the \
                     test binary's own ({})",
                    CARGO_VALUE_FLAGS.join(" X, "),
                    CARGO_FLAGS.join(", "),
                    LIBTEST_FLAGS.join(", ")
                )));
            } else {
                test.filters.push(token.clone());
            }
        }
        Ok(test)
    }

    /// The arguments of `--list` that select the same tests.
    pub(crate) fn list_args(&self) -> Vec<String> {
        let mut args = vec!["--list".to_owned(), "--format".into(), "terse".into()];
        args.extend(self.filters.iter().cloned());
        args.extend(
            self.binary_args
                .iter()
                .filter(|a| matches!(a.as_str(), "--exact" | "--ignored" | "--include-ignored"))
                .cloned(),
        );
        args
    }

    /// The test binary's arguments: the filters, the libtest flags, one thread (a debugger
    /// stop in one test must not race the others), no colours (the adapter's terminal is
    /// not a reader's).
    pub(crate) fn run_args(&self) -> Vec<String> {
        let mut args = self.filters.clone();
        args.extend(self.binary_args.iter().cloned());
        if !args.iter().any(|a| a.starts_with("--test-threads")) {
            args.push("--test-threads=1".into());
        }
        if !args.iter().any(|a| a.starts_with("--color")) {
            args.push("--color=never".into());
        }
        // The panic hook then prints the message as the panic happens (libtest would keep
        // it until the test ends), so the stop at `rust_panic` can say it.
        if !args.iter().any(|a| a == "--nocapture") {
            args.push("--nocapture".into());
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split(text).unwrap()
    }

    #[test]
    fn splitting_keeps_quoted_expressions_whole() {
        assert_eq!(
            words("-k 'parse and not slow' tests"),
            ["-k", "parse and not slow", "tests"]
        );
        assert_eq!(split("-k 'open").unwrap_err().kind(), "invalid_arguments");
        assert_eq!(split("  ").unwrap_err().kind(), "invalid_arguments");
    }

    /// Issue 28, item 1: a pytest id exactly as pytest prints it is one argument, its
    /// parameters' blanks, quotes and nested brackets included.
    #[test]
    fn a_pytest_id_as_printed_is_one_word() {
        let id = "tests/test_utils.py::test_make_default_short_help[no-wrap mark-truncate]";
        assert_eq!(words(id), [id]);
        assert_eq!(words(&format!("{id} -x")), [id, "-x"]);
        let quoted = "tests/t.py::TestA::test_b[it's \"x\" [1, 2]\tend]";
        assert_eq!(words(quoted), [quoted]);
        // Brackets outside an id, and quoting around it, keep the shell's meaning.
        assert_eq!(words("-k 'x[1] or y'"), ["-k", "x[1] or y"]);
        assert_eq!(words("'tests/t.py::t[a b]'"), ["tests/t.py::t[a b]"]);
    }

    #[test]
    fn the_runner_follows_the_words_then_the_markers() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let runner = |text: &str| test_runner(root, &words(text), None);
        assert_eq!(
            runner("tests/test_x.py::TestY::test_z").unwrap(),
            AdapterKind::Debugpy
        );
        assert_eq!(runner("-k 'a or b'").unwrap(), AdapterKind::Debugpy);
        assert_eq!(runner("./pkg -run TestX").unwrap(), AdapterKind::Delve);
        assert_eq!(runner("parse").unwrap_err().kind(), "invalid_arguments");
        std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(runner("parse").unwrap(), AdapterKind::Lldb);
        std::fs::write(root.join("go.mod"), "module x\n").unwrap();
        let both = runner("parse").unwrap_err();
        assert!(both.to_string().contains("pass `adapter`"), "{both}");
        assert_eq!(
            test_runner(root, &words("parse"), Some(AdapterKind::Lldb)).unwrap(),
            AdapterKind::Lldb
        );
    }

    #[test]
    fn go_flags_go_to_the_test_binary_or_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.go"), "package a\n").unwrap();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/b_test.go"), "package pkg\n").unwrap();
        let parse = |text: &str| GoTest::parse(&root, &words(text));
        let test = parse("./pkg -run TestX -v -count=1 -tags integration").unwrap();
        assert_eq!(test.package, root.join("pkg"));
        assert_eq!(
            test.test_args,
            ["-test.run", "TestX", "-test.v", "-test.count", "1"]
        );
        assert_eq!(test.build_flags, ["-vet=off", "-tags=integration"]);
        assert!(test.vet_off_added);
        let bare = parse("TestParse").unwrap();
        assert_eq!(bare.package, root);
        assert_eq!(bare.test_args, ["-test.run", "TestParse"]);
        let vet = parse("-run=TestA -vet=printf -args --flag x").unwrap();
        assert_eq!(vet.build_flags, ["-vet=printf"]);
        assert_eq!(vet.test_args, ["-test.run", "TestA", "--flag", "x"]);
        assert!(!vet.vet_off_added);
        assert_eq!(
            parse("pkg/b_test.go -run TestB").unwrap().package,
            root.join("pkg")
        );
        let many = parse("./... -run X").unwrap_err();
        assert!(many.to_string().contains("runs one"), "{many}");
        let unknown = parse("-frobnicate").unwrap_err();
        assert!(unknown.to_string().contains("accepted: -run"), "{unknown}");
        assert!(parse("../ -run X")
            .unwrap_err()
            .to_string()
            .contains("outside"));
        assert_eq!(parse("-run").unwrap_err().kind(), "invalid_arguments");
    }

    #[test]
    fn cargo_words_split_into_selection_filters_and_libtest_flags() {
        let test = CargoTest::parse(&words("--test version parse --exact -- --nocapture")).unwrap();
        assert_eq!(test.cargo_args, ["--test", "version"]);
        assert_eq!(test.filters, ["parse"]);
        assert_eq!(test.binary_args, ["--exact", "--nocapture"]);
        assert_eq!(
            test.list_args(),
            ["--list", "--format", "terse", "parse", "--exact"]
        );
        assert_eq!(
            test.run_args(),
            [
                "parse",
                "--exact",
                "--nocapture",
                "--test-threads=1",
                "--color=never"
            ]
        );
        let package = CargoTest::parse(&words("-p=semver --lib name")).unwrap();
        assert_eq!(package.cargo_args, ["-p=semver", "--lib"]);
        assert!(CargoTest::parse(&words("--doc x")).is_err());
        let unknown = CargoTest::parse(&words("--frob")).unwrap_err();
        assert!(unknown.to_string().contains("--exact"), "{unknown}");
    }

    #[test]
    fn console_scripts_and_src_layouts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let python = std::env::current_exe().unwrap();
        let script = root.join("pytest");
        std::fs::write(&script, format!("#!{}\nimport sys\n", python.display())).unwrap();
        // Not named python*, so not taken as the interpreter, but still a script.
        assert_eq!(shebang_python(&script), None);
        std::fs::write(&script, "#!/usr/bin/env python3\nimport sys\n").unwrap();
        assert!(is_pytest_script(&script));
        assert!(cc_workspace::python::src_layout(root).is_none());
        std::fs::create_dir_all(root.join("src/pkg")).unwrap();
        std::fs::write(root.join("src/pkg/__init__.py"), "").unwrap();
        assert_eq!(
            cc_workspace::python::src_layout(root),
            Some(root.join("src"))
        );
        assert!(is_identifier("pytest") && !is_identifier("1x") && !is_identifier(""));
    }
}
