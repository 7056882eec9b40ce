//! Reading what project checkers print: pyright's JSON report, `tsc`'s one-line errors,
//! cargo's JSON messages, `go vet`'s text, and the `file:line:col: severity: message` lines
//! of gcc, clang and clang-tidy (also the fallback for a configured checker we do not know),
//! and `php -l`'s `Parse error: … in FILE on line N`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ProjectDiagnostic;
use crate::diagnostic::{Diagnostic, Severity};

/// How a checker's output is read, chosen by its program's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `basedpyright --outputjson`, `pyright --outputjson`.
    PyrightJson,
    /// `tsc --pretty false`: `file(line,col): error TS2322: message`.
    Tsc,
    /// `cargo check --message-format=json`.
    CargoJson,
    /// `go vet`: `./file.go:line:col: message`, `vet: ` before type errors.
    GoVet,
    /// `file:line[:col]: severity: message [code]` (gcc, clang, clang-tidy, mypy, …).
    Gcc,
    /// `php -l FILE…`: `PHP Parse error:  message in FILE on line N` (on stderr, or on
    /// stdout without the `PHP ` prefix, as the ini's `display_errors` says).
    PhpLint,
    /// `javac`: `FILE:LINE: error: message`, then the source line, a caret under the column,
    /// and indented details (`symbol:   class Bundle`) that belong to the message.
    Javac,
}

impl Format {
    /// The format of the checker whose program is `program`.
    pub fn for_program(program: &str) -> Format {
        let name = Path::new(program)
            .file_name()
            .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned());
        match name.as_str() {
            "basedpyright" | "pyright" => Format::PyrightJson,
            "tsc" => Format::Tsc,
            "cargo" => Format::CargoJson,
            "go" => Format::GoVet,
            "php" => Format::PhpLint,
            "javac" => Format::Javac,
            _ => Format::Gcc,
        }
    }

    /// The `source` given to diagnostics of this format when the output names none.
    fn source(self, program: &str) -> String {
        match self {
            Format::GoVet => "go vet".into(),
            Format::CargoJson => "rustc".into(),
            Format::PhpLint => "php -l".into(),
            _ => Path::new(program)
                .file_name()
                .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned()),
        }
    }
}

/// Parses a checker's stdout and stderr into diagnostics; relative paths are resolved
/// against `cwd` (and, for cargo, the folders above it, since rustc reports paths relative
/// to the cargo workspace).
pub fn parse(
    format: Format,
    program: &str,
    stdout: &str,
    stderr: &str,
    cwd: &Path,
) -> Result<Vec<ProjectDiagnostic>, String> {
    let source = format.source(program);
    let mut found = match format {
        Format::PyrightJson => pyright(stdout, cwd, &source)?,
        Format::Tsc => lines(stdout, true, |line| tsc_line(line, cwd, &source)),
        Format::CargoJson => cargo(stdout, cwd),
        Format::GoVet => go_vet(stderr, cwd, &source),
        Format::Gcc => {
            let mut all = lines(stdout, false, |line| gcc_line(line, cwd, &source));
            all.extend(lines(stderr, false, |line| gcc_line(line, cwd, &source)));
            all
        }
        Format::Javac => javac(stderr, cwd, &source),
        Format::PhpLint => {
            let mut all = lines(stderr, false, |line| php_lint_line(line, cwd, &source));
            all.extend(lines(stdout, false, |line| {
                php_lint_line(line, cwd, &source)
            }));
            all
        }
    };
    // The same diagnostic reported twice (a header included by two files, a crate checked
    // for two targets) is one.
    let mut seen = std::collections::HashSet::new();
    found.retain(|d| {
        seen.insert((
            d.path.clone(),
            d.diagnostic.line,
            d.diagnostic.character,
            d.diagnostic.message.clone(),
        ))
    });
    Ok(found)
}

/// Parses each line; with `continued`, indented lines right after a diagnostic are the rest
/// of its message (tsc).
fn lines(
    text: &str,
    continued: bool,
    mut parse_line: impl FnMut(&str) -> Option<ProjectDiagnostic>,
) -> Vec<ProjectDiagnostic> {
    let mut out: Vec<ProjectDiagnostic> = Vec::new();
    let mut attach = false;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(found) = parse_line(line) {
            out.push(found);
            attach = continued;
        } else if attach && line.starts_with("  ") {
            if let Some(last) = out.last_mut() {
                last.diagnostic.message.push('\n');
                last.diagnostic.message.push_str(line);
            }
        } else {
            attach = false;
        }
    }
    out
}

/// javac's report (see [`Format::Javac`]).
fn javac(text: &str, cwd: &Path, source: &str) -> Vec<ProjectDiagnostic> {
    let mut out: Vec<ProjectDiagnostic> = Vec::new();
    // Lines since the last diagnostic: 1 is its source line, 2 its caret.
    let mut after = 0usize;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(found) = javac_line(line, cwd, source) {
            out.push(found);
            after = 0;
            continue;
        }
        after += 1;
        let Some(last) = out.last_mut() else {
            continue;
        };
        if after == 2 && line.trim() == "^" {
            let column = line.find('^').unwrap_or(0);
            last.diagnostic.character = u32::try_from(column).unwrap_or(0);
        } else if after > 2 && line.starts_with("  ") && !line.trim().is_empty() {
            last.diagnostic.message.push('\n');
            last.diagnostic.message.push_str(line);
        }
    }
    out
}

/// `src/A.java:12: error: cannot find symbol` (also `warning:`).
fn javac_line(line: &str, cwd: &Path, source: &str) -> Option<ProjectDiagnostic> {
    let at = line.find(".java:")? + ".java".len();
    let (file, rest) = line.split_at(at);
    let mut parts = rest[1..].splitn(2, ": ");
    let number: u32 = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let (severity, message) = if let Some(m) = rest.strip_prefix("error: ") {
        (Severity::Error, m)
    } else if let Some(m) = rest.strip_prefix("warning: ") {
        (Severity::Warning, m)
    } else {
        return None;
    };
    Some(ProjectDiagnostic {
        path: resolve(cwd, file),
        diagnostic: Diagnostic {
            line: number,
            character: 0,
            end_line: number,
            severity,
            code: None,
            message: message.to_owned(),
            source: Some(source.to_owned()),
            unnecessary: false,
            deprecated: false,
        },
    })
}

/// `PHP Parse error:  syntax error, unexpected token "}" in src/a.php on line 5` (also
/// `Fatal error`, and without the `PHP ` prefix).
fn php_lint_line(line: &str, cwd: &Path, source: &str) -> Option<ProjectDiagnostic> {
    let line = line.strip_prefix("PHP ").unwrap_or(line);
    let (kind, rest) = line.split_once(" error:")?;
    if !matches!(kind, "Parse" | "Fatal" | "Compile") {
        return None;
    }
    let (before, number) = rest.rsplit_once(" on line ")?;
    let number: u32 = number.trim().parse().ok()?;
    let (message, file) = before.rsplit_once(" in ")?;
    Some(ProjectDiagnostic::new(
        resolve(cwd, file.trim()),
        diagnostic(number, 1, Severity::Error, None, message.trim(), source),
    ))
}

fn resolve(cwd: &Path, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path.strip_prefix("./").unwrap_or(path))
    }
}

fn diagnostic(
    line: u32,
    column: u32,
    severity: Severity,
    code: Option<String>,
    message: &str,
    source: &str,
) -> Diagnostic {
    Diagnostic {
        line: line.max(1),
        character: column.saturating_sub(1),
        end_line: line.max(1),
        severity,
        code,
        message: message.trim_end().to_owned(),
        source: Some(source.to_owned()),
        unnecessary: false,
        deprecated: false,
    }
}

fn severity_word(word: &str) -> Option<Severity> {
    match word.trim() {
        "error" | "fatal error" | "fatal" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        "note" | "info" | "information" => Some(Severity::Information),
        "hint" | "help" => Some(Severity::Hint),
        _ => None,
    }
}

fn pyright(stdout: &str, cwd: &Path, source: &str) -> Result<Vec<ProjectDiagnostic>, String> {
    // Anything printed before the report (a banner, a notice that a newer version exists).
    let start = stdout.find('{').ok_or("it printed no JSON report")?;
    let report: Value = serde_json::from_str(&stdout[start..])
        .map_err(|error| format!("its JSON report cannot be read: {error}"))?;
    let items = report
        .get("generalDiagnostics")
        .and_then(Value::as_array)
        .ok_or("its JSON report has no `generalDiagnostics`")?;
    Ok(items
        .iter()
        .filter_map(|item| {
            let file = item.get("file").and_then(Value::as_str)?;
            let start = item.get("range").and_then(|r| r.get("start"));
            let at = |key: &str| {
                start
                    .and_then(|s| s.get(key))
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0)
            };
            let severity = item
                .get("severity")
                .and_then(Value::as_str)
                .and_then(severity_word)
                .unwrap_or(Severity::Error);
            let code = item.get("rule").and_then(Value::as_str).map(str::to_owned);
            let message = item.get("message").and_then(Value::as_str)?;
            Some(ProjectDiagnostic::new(
                resolve(cwd, file),
                diagnostic(
                    at("line") + 1,
                    at("character") + 1,
                    severity,
                    code,
                    message,
                    source,
                ),
            ))
        })
        .collect())
}

/// `src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.`, or a
/// project-level `error TS5083: Cannot read file 'tsconfig.json'.`
fn tsc_line(line: &str, cwd: &Path, source: &str) -> Option<ProjectDiagnostic> {
    let (location, rest) = match line.find("): ") {
        Some(end) if line[..end].contains('(') => (Some(&line[..end]), &line[end + 3..]),
        _ => (None, line),
    };
    let (word, rest) = rest.split_once(' ')?;
    let severity = severity_word(word)?;
    let (code, message) = rest.split_once(": ")?;
    if !code.starts_with("TS") {
        return None;
    }
    let (path, line_no, column) = match location {
        Some(location) => {
            let open = location.rfind('(')?;
            let (line_no, column) = location[open + 1..].split_once(',')?;
            (
                resolve(cwd, &location[..open]),
                line_no.parse().ok()?,
                column.parse().ok()?,
            )
        }
        None => (cwd.join("tsconfig.json"), 1, 1),
    };
    Some(ProjectDiagnostic::new(
        path,
        diagnostic(
            line_no,
            column,
            severity,
            Some(code.to_owned()),
            message,
            source,
        ),
    ))
}

/// `go vet -json`'s output: analyzers' findings as JSON (`{"pkg": {"printf": [{"posn":
/// "/w/x.go:7:2", "message": …}]}}`, warnings), and as plain `./x.go:6:17: message` lines
/// (with or without a `vet: ` prefix) the compiler's and type checker's errors, which keep a
/// package from being vetted at all; `# pkg` headers are skipped. Without `-json` the two
/// kinds of plain line could not be told apart.
fn go_vet(stderr: &str, cwd: &Path, source: &str) -> Vec<ProjectDiagnostic> {
    let mut out = Vec::new();
    let mut block = String::new();
    let mut depth: i64 = 0;
    for line in stderr.lines() {
        let line = line.trim_end();
        if depth > 0 || (block.is_empty() && line.starts_with('{')) {
            block.push_str(line);
            block.push('\n');
            depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            if depth <= 0 {
                out.extend(go_vet_json(&block, cwd, source));
                block.clear();
                depth = 0;
            }
            continue;
        }
        let rest = line.strip_prefix("vet: ").unwrap_or(line);
        let Some((path, line_no, column, message)) = split_location(rest) else {
            continue;
        };
        if path.ends_with(".go") {
            out.push(ProjectDiagnostic::new(
                resolve(cwd, path),
                diagnostic(line_no, column, Severity::Error, None, message, source),
            ));
        }
    }
    out
}

/// One JSON block of `go vet -json`: every analyzer's findings, as warnings.
fn go_vet_json(block: &str, cwd: &Path, source: &str) -> Vec<ProjectDiagnostic> {
    let Ok(packages) = serde_json::from_str::<serde_json::Value>(block) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for analyzers in packages.as_object().into_iter().flat_map(|p| p.values()) {
        for (analyzer, findings) in analyzers.as_object().into_iter().flatten() {
            for finding in findings.as_array().into_iter().flatten() {
                let (Some(posn), Some(message)) = (
                    finding.get("posn").and_then(serde_json::Value::as_str),
                    finding.get("message").and_then(serde_json::Value::as_str),
                ) else {
                    continue;
                };
                let Some((path, line_no, column, _)) = split_location(&format!("{posn}: x"))
                    .map(|(p, l, c, m)| (p.to_owned(), l, c, m.to_owned()))
                else {
                    continue;
                };
                out.push(ProjectDiagnostic::new(
                    resolve(cwd, &path),
                    diagnostic(
                        line_no,
                        column,
                        Severity::Warning,
                        Some(analyzer.clone()),
                        message,
                        source,
                    ),
                ));
            }
        }
    }
    out
}

/// `path:line:col: message` or `path:line: message`.
fn split_location(line: &str) -> Option<(&str, u32, u32, &str)> {
    let (path, rest) = line.split_once(':')?;
    let (line_no, rest) = rest.split_once(':')?;
    let line_no: u32 = line_no.trim().parse().ok()?;
    if let Some((column, message)) = rest.split_once(':') {
        if let Ok(column) = column.trim().parse::<u32>() {
            return Some((path, line_no, column, message.trim_start()));
        }
    }
    Some((path, line_no, 0, rest.trim_start()))
}

/// `m.c:4:12: error: use of undeclared identifier 'nope' [clang-diagnostic-error]`; notes
/// are left out (they explain the line before).
fn gcc_line(line: &str, cwd: &Path, source: &str) -> Option<ProjectDiagnostic> {
    let (path, line_no, column, rest) = split_location(line)?;
    // "In file included from m.c:1:" and similar context lines are not diagnostics.
    if path.is_empty() || path.starts_with("In file included") {
        return None;
    }
    let (word, message) = rest.split_once(": ")?;
    let severity = severity_word(word)?;
    if severity == Severity::Information || severity == Severity::Hint {
        return None;
    }
    let (message, code) = match message.rfind(" [") {
        Some(open) if message.ends_with(']') => (
            &message[..open],
            Some(message[open + 2..message.len() - 1].to_owned()),
        ),
        _ => (message, None),
    };
    Some(ProjectDiagnostic::new(
        resolve(cwd, path),
        diagnostic(line_no, column, severity, code, message, source),
    ))
}

/// cargo's `compiler-message` lines: the primary span of each error and warning.
fn cargo(stdout: &str, cwd: &Path) -> Vec<ProjectDiagnostic> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if value.get("reason").and_then(Value::as_str) != Some("compiler-message") {
            continue;
        }
        let Some(message) = value.get("message") else {
            continue;
        };
        let Some(severity) = message
            .get("level")
            .and_then(Value::as_str)
            .and_then(|level| match level {
                "error" | "error: internal compiler error" => Some(Severity::Error),
                "warning" => Some(Severity::Warning),
                _ => None,
            })
        else {
            continue;
        };
        let text = message.get("message").and_then(Value::as_str).unwrap_or("");
        let spans = message.get("spans").and_then(Value::as_array);
        let primary = spans.and_then(|spans| {
            spans
                .iter()
                .find(|s| s.get("is_primary").and_then(Value::as_bool) == Some(true))
        });
        let code = message
            .get("code")
            .and_then(|c| c.get("code"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let number = |span: &Value, key: &str| {
            span.get(key)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(1)
        };
        let (path, line_no, column) = match primary {
            Some(span) => {
                let file = span.get("file_name").and_then(Value::as_str).unwrap_or("");
                (
                    cargo_path(cwd, value.get("manifest_path"), file),
                    number(span, "line_start"),
                    number(span, "column_start"),
                )
            }
            None => {
                // Summaries ("aborting due to …", "3 warnings emitted") carry no span.
                if text.starts_with("aborting due to") || text.ends_with("emitted") {
                    continue;
                }
                let target = value
                    .get("target")
                    .and_then(|t| t.get("src_path"))
                    .and_then(Value::as_str);
                match target {
                    Some(src) => (PathBuf::from(src), 1, 1),
                    None => continue,
                }
            }
        };
        out.push(ProjectDiagnostic::new(
            path,
            diagnostic(line_no, column, severity, code, text, "rustc"),
        ));
    }
    out
}

/// rustc's `file_name` is relative to the cargo workspace root, which may be above the
/// package: the first folder (from the package's up) where the file exists.
fn cargo_path(cwd: &Path, manifest: Option<&Value>, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let package = manifest
        .and_then(Value::as_str)
        .and_then(|m| Path::new(m).parent().map(Path::to_path_buf))
        .unwrap_or_else(|| cwd.to_path_buf());
    package
        .ancestors()
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.exists())
        .unwrap_or_else(|| cwd.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(found: &[ProjectDiagnostic]) -> (String, u32, Severity, Option<String>, String) {
        assert_eq!(found.len(), 1, "{found:?}");
        let d = &found[0];
        (
            d.path.display().to_string(),
            d.diagnostic.line,
            d.diagnostic.severity,
            d.diagnostic.code.clone(),
            d.diagnostic.message.clone(),
        )
    }

    #[test]
    fn formats_follow_the_program_name() {
        assert_eq!(
            Format::for_program("/venv/bin/basedpyright"),
            Format::PyrightJson
        );
        assert_eq!(Format::for_program("tsc"), Format::Tsc);
        assert_eq!(Format::for_program("cargo"), Format::CargoJson);
        assert_eq!(Format::for_program("go"), Format::GoVet);
        assert_eq!(Format::for_program("clang-tidy-19"), Format::Gcc);
        assert_eq!(Format::for_program("mypy"), Format::Gcc);
        assert_eq!(Format::for_program("/usr/bin/php"), Format::PhpLint);
    }

    #[test]
    fn javac_errors_with_their_column_and_details() {
        let stderr = "src/A.java:3: error: package android.os does not exist\n\
                      import android.os.Bundle;\n                 ^\n\
                      src/A.java:9: error: cannot find symbol\n  Bundle b;\n  ^\n\
                      \x20 symbol:   class Bundle\n  location: class A\n2 errors\n";
        let found = parse(Format::Javac, "javac", "", stderr, Path::new("/w")).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, PathBuf::from("/w/src/A.java"));
        assert_eq!(found[0].diagnostic.line, 3);
        assert_eq!(found[0].diagnostic.character, 17);
        assert_eq!(found[1].diagnostic.character, 2);
        assert!(found[1]
            .diagnostic
            .message
            .contains("symbol:   class Bundle"));
        assert_eq!(found[1].diagnostic.source.as_deref(), Some("javac"));
    }

    #[test]
    fn php_lint_errors_on_either_stream() {
        // As PHP 8.2 prints them: the log line on stderr, the display line on stdout.
        let stderr = "PHP Parse error:  syntax error, unexpected token \"{\", expecting variable in src/bad.php on line 2\n";
        let stdout = "No syntax errors detected in src/good.php\n\nParse error: syntax error, unexpected token \"{\", expecting variable in src/bad.php on line 2\nErrors parsing src/bad.php\n";
        let found = parse(Format::PhpLint, "php", stdout, stderr, Path::new("/w")).unwrap();
        assert_eq!(
            one(&found),
            (
                "/w/src/bad.php".into(),
                2,
                Severity::Error,
                None,
                "syntax error, unexpected token \"{\", expecting variable".into()
            )
        );
        assert_eq!(found[0].diagnostic.source.as_deref(), Some("php -l"));
    }

    #[test]
    fn pyright_json_with_a_banner() {
        let out = "No configuration file found.\n{\"generalDiagnostics\": [{\"file\": \"/w/a.py\", \"severity\": \"error\", \"message\": \"Type \\\"int\\\" is not assignable\\n  detail\", \"range\": {\"start\": {\"line\": 3, \"character\": 9}}, \"rule\": \"reportAssignmentType\"}], \"summary\": {}}";
        let found = parse(
            Format::PyrightJson,
            "basedpyright",
            out,
            "",
            Path::new("/w"),
        )
        .unwrap();
        assert_eq!(
            one(&found),
            (
                "/w/a.py".into(),
                4,
                Severity::Error,
                Some("reportAssignmentType".into()),
                "Type \"int\" is not assignable\n  detail".into()
            )
        );
        assert!(parse(
            Format::PyrightJson,
            "basedpyright",
            "oops",
            "",
            Path::new("/w")
        )
        .is_err());
    }

    #[test]
    fn tsc_lines_with_continuations_and_project_errors() {
        let out = "src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.\n  Details follow.\nerror TS5083: Cannot read file '/w/base.json'.\n";
        let found = parse(Format::Tsc, "tsc", out, "", Path::new("/w")).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, Path::new("/w/src/a.ts"));
        assert_eq!(found[0].diagnostic.character, 6);
        assert_eq!(
            found[0].diagnostic.message,
            "Type 'string' is not assignable to type 'number'.\n  Details follow."
        );
        assert_eq!(found[1].path, Path::new("/w/tsconfig.json"));
        assert_eq!(found[1].diagnostic.code.as_deref(), Some("TS5083"));
    }

    #[test]
    fn go_vet_type_errors_and_findings() {
        // `go vet -json`: a dependency that does not compile (a plain line), a type error
        // (`vet: `), and an analyzer's finding (JSON).
        let err = "# example.com/m\n./lib.go:3:23: cannot use \"s\" (untyped string constant) as int value in return statement\n# example.com/m/x\nvet: ./main.go:6:17: undeclared name: y\n# example.com/m/sub\n{\n\t\"example.com/m/sub\": {\n\t\t\"printf\": [\n\t\t\t{\n\t\t\t\t\"posn\": \"/w/sub/x.go:7:2\",\n\t\t\t\t\"message\": \"fmt.Printf format %d has arg \\\"x\\\" of wrong type string\"\n\t\t\t}\n\t\t]\n\t}\n}\n";
        let found = parse(Format::GoVet, "go", "", err, Path::new("/w")).unwrap();
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0].path, Path::new("/w/lib.go"));
        assert_eq!(found[0].diagnostic.severity, Severity::Error);
        assert_eq!(
            (found[1].diagnostic.line, found[1].diagnostic.severity),
            (6, Severity::Error)
        );
        assert_eq!(found[2].path, Path::new("/w/sub/x.go"));
        assert_eq!(found[2].diagnostic.severity, Severity::Warning);
        assert_eq!(found[2].diagnostic.code.as_deref(), Some("printf"));
        assert!(found[2].diagnostic.message.contains("wrong type string"));
    }

    #[test]
    fn gcc_and_clang_tidy_lines_without_notes() {
        let out = "/w/m.c:3:5: error: call to undeclared function 'prinft' [clang-diagnostic-implicit-function-declaration]\n    3 |     prinft(\"x\");\n      |     ^\n/w/m.c:3:5: note: did you mean 'printf'?\nm.c: In function 'main':\nm.c:4:12: warning: unused variable 'y' [-Wunused-variable]\nm.py:4: error: Incompatible types  [assignment]\n2 errors generated.\n";
        let found = parse(Format::Gcc, "clang-tidy-19", out, "", Path::new("/w")).unwrap();
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            found[0].diagnostic.code.as_deref(),
            Some("clang-diagnostic-implicit-function-declaration")
        );
        assert_eq!(found[1].path, Path::new("/w/m.c"));
        assert_eq!(found[1].diagnostic.severity, Severity::Warning);
        assert_eq!(found[2].diagnostic.line, 4);
        assert_eq!(found[2].diagnostic.code.as_deref(), Some("assignment"));
        assert_eq!(found[2].diagnostic.message, "Incompatible types");
    }

    #[test]
    fn cargo_primary_spans_and_no_summaries() {
        let out = concat!(
            r#"{"reason":"compiler-artifact"}"#,
            "\n",
            r#"{"reason":"compiler-message","manifest_path":"/w/Cargo.toml","message":{"level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"file_name":"src/other.rs","is_primary":false,"line_start":9,"column_start":1},{"file_name":"src/main.rs","is_primary":true,"line_start":2,"column_start":18}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","manifest_path":"/w/Cargo.toml","message":{"level":"error","message":"aborting due to 1 previous error","code":null,"spans":[]}}"#,
            "\n",
            r#"{"reason":"compiler-message","manifest_path":"/w/Cargo.toml","message":{"level":"failure-note","message":"For more information","code":null,"spans":[]}}"#,
            "\n",
        );
        let found = parse(Format::CargoJson, "cargo", out, "", Path::new("/w")).unwrap();
        assert_eq!(
            one(&found),
            (
                "/w/src/main.rs".into(),
                2,
                Severity::Error,
                Some("E0308".into()),
                "mismatched types".into()
            )
        );
    }
}
