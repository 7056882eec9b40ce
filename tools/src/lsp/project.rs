//! `lsp diagnostics` with `file: "*"`: the project checkers' findings, in the same shape as a
//! file's diagnostics.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cc_lsp_client::missing::{reads, split_file, MissingDependencies};
use cc_lsp_client::{
    CheckerError, ProjectCheck, ProjectChecker, ProjectDiagnostic, ServerPool, Severity,
};
use serde_json::{json, Value};

use super::diagnostics::diagnostic_json;
use crate::error::{kinds, ToolError};
use crate::root::WorkspaceRoot;
use crate::tool::{CallContext, ToolOutput};

/// Diagnostics listed at most (errors first); the total is always given.
const PROJECT_DIAGNOSTICS_CAP: usize = 200;

fn checker_error(error: &CheckerError) -> ToolError {
    ToolError::new(error.kind(), error.to_string())
}

/// Runs the checker of every project in the workspace (or of `language`'s only).
pub(crate) async fn check(
    ctx: &CallContext,
    pool: &ServerPool,
    root: &WorkspaceRoot,
    language: Option<&str>,
) -> Result<ToolOutput, ToolError> {
    let checker = ProjectChecker::for_pool(pool);
    let targets = checker
        .project_targets(language)
        .map_err(|u| ToolError::new(kinds::NOT_AVAILABLE, u.reason))?;
    let mut checks: Vec<ProjectCheck> = Vec::new();
    let mut failures: Vec<(String, String, CheckerError)> = Vec::new();
    let count = targets.len() as f64;
    for (index, target) in targets.iter().enumerate() {
        let shown_root = root.relative(&target.root);
        ctx.report_progress(
            index as f64,
            Some(count),
            Some(&format!(
                "checking the {} project at {shown_root}",
                target.family
            )),
        );
        match checker.check_project(target).await {
            Ok(check) => checks.push(check),
            Err(error) => failures.push((target.family.clone(), shown_root, error)),
        }
    }
    // Asked for one language, or only one project exists: its failure is the answer.
    if checks.is_empty() && failures.len() == 1 {
        return Err(checker_error(&failures[0].2));
    }
    if checks.is_empty() {
        let reasons: Vec<String> = failures
            .iter()
            .map(|(family, root, error)| format!("{family} ({root}): {error}"))
            .collect();
        return Err(ToolError::new(
            kinds::NOT_AVAILABLE,
            format!("no project checker could run: {}", reasons.join("; ")),
        ));
    }

    // Errors that only say a dependency is not on disk: one note per project, not a flood.
    let mut missing_by_check: Vec<MissingDependencies> = Vec::new();
    for check in &mut checks {
        let (kept, missing) = without_missing_in(&check.diagnostics, &check.root);
        check.diagnostics = kept;
        missing_by_check.push(missing);
    }
    let mut found: Vec<(String, &cc_lsp_client::Diagnostic)> = checks
        .iter()
        .flat_map(|check| check.diagnostics.iter())
        .filter(|d| d.diagnostic.is_problem())
        .map(|d| (root.relative(&d.path), &d.diagnostic))
        .collect();
    // Errors first; among them, the files with the fewest first: a caller a change broke
    // has one or two, while a file whose libraries are missing has dozens that follow from
    // them, and the list is cut.
    let mut per_file: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (path, d) in &found {
        if d.severity == Severity::Error {
            *per_file.entry(path.clone()).or_default() += 1;
        }
    }
    let weight = |path: &str| per_file.get(path).copied().unwrap_or(0);
    found.sort_by(|(a_path, a), (b_path, b)| {
        (
            a.severity != Severity::Error,
            weight(a_path),
            a_path,
            a.line,
            a.character,
        )
            .cmp(&(
                b.severity != Severity::Error,
                weight(b_path),
                b_path,
                b.line,
                b.character,
            ))
    });
    let total = found.len();
    let listed: Vec<Value> = found
        .iter()
        .take(PROJECT_DIAGNOSTICS_CAP)
        .map(|(path, d)| diagnostic_json(path, d))
        .collect();
    let summary: Vec<Value> = checks
        .iter()
        .zip(&missing_by_check)
        .map(|(check, missing)| {
            let count = |severity| {
                check
                    .diagnostics
                    .iter()
                    .filter(|d| d.diagnostic.severity == severity)
                    .count()
            };
            let mut row = json!({
                "language": check.family,
                "root": root.relative(&check.root),
                "command": check.command,
                "exit_code": check.exit_code,
                "errors": count(Severity::Error),
                "warnings": count(Severity::Warning),
            });
            let program = check.command.split(' ').next().unwrap_or("the checker");
            let notes: Vec<String> = check
                .note
                .iter()
                .cloned()
                .chain(missing.sentence(program))
                .collect();
            if !notes.is_empty() {
                row["note"] = json!(notes.join("; "));
            }
            if missing.diagnostics > 0 {
                row["missing_dependencies"] = json!({
                    "packages": missing.packages,
                    "diagnostics": missing.diagnostics,
                });
            }
            row
        })
        .collect();
    let mut unchecked: Vec<Value> = failures
        .iter()
        .map(|(family, root, error)| {
            json!({"language": family, "root": root, "kind": error.kind(), "reason": error.to_string()})
        })
        .collect();
    // Files the project's own configuration leaves out of its checker: never silently.
    let mut left_out_lines = Vec::new();
    for (check, left_out) in checks
        .iter()
        .flat_map(|check| check.left_out.iter().map(move |l| (check, l)))
    {
        let reason = &left_out.reason;
        let files: Vec<String> = left_out.files.iter().map(|p| root.relative(p)).collect();
        left_out_lines.push(format!(
            "{} [{}]: {} file(s) not checked, {reason}: {}{}",
            check.family,
            root.relative(&check.root),
            files.len(),
            files
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if files.len() > 10 { ", …" } else { "" }
        ));
        unchecked.push(json!({
            "language": check.family,
            "root": root.relative(&check.root),
            "kind": "left_out_by_configuration",
            "reason": reason,
            "files": files.iter().take(50).collect::<Vec<_>>(),
            "files_total": files.len(),
        }));
    }

    let mut text: Vec<String> = summary
        .iter()
        .map(|row| {
            format!(
                "{} [{}] `{}`: {} error(s), {} warning(s)",
                row["language"].as_str().unwrap_or(""),
                row["root"].as_str().unwrap_or(""),
                row["command"].as_str().unwrap_or(""),
                row["errors"],
                row["warnings"]
            )
        })
        .collect();
    text.extend(listed.iter().map(|d| {
        format!(
            "{}:{}: {}: {}",
            d["path"].as_str().unwrap_or(""),
            d["line"],
            d["severity"].as_str().unwrap_or(""),
            d["message"].as_str().unwrap_or("")
        )
    }));
    if total > listed.len() {
        text.push(format!(
            "… {} more not listed (first {} of {total})",
            total - listed.len(),
            listed.len()
        ));
    }
    text.extend(
        failures
            .iter()
            .map(|(family, root, error)| format!("{family} [{root}]: not checked: {error}")),
    );
    text.extend(left_out_lines);
    for row in &summary {
        if let Some(note) = row["note"].as_str() {
            text.push(format!(
                "note ({} [{}]): {note}",
                row["language"].as_str().unwrap_or(""),
                row["root"].as_str().unwrap_or("")
            ));
        }
    }
    let value = json!({
        "action": "diagnostics",
        "file": "*",
        "checks": summary,
        "diagnostics": listed,
        "total": total,
        "truncated": total > PROJECT_DIAGNOSTICS_CAP,
        "unchecked": unchecked,
    });
    Ok(ToolOutput::new(value).with_text(text.join("\n")))
}

/// `diagnostics` less those of Java and Kotlin files that only say a dependency is not on disk
/// ([`cc_lsp_client::missing`]), in their order; the project's source roots are found under
/// `root`.
fn without_missing_in(
    diagnostics: &[ProjectDiagnostic],
    root: &Path,
) -> (Vec<ProjectDiagnostic>, MissingDependencies) {
    let mut missing = MissingDependencies::default();
    if !diagnostics.iter().any(|d| reads(&d.path)) {
        return (diagnostics.to_vec(), missing);
    }
    let roots = cc_lsp_client::jdtls::source_roots(root);
    let mut by_file: BTreeMap<PathBuf, Vec<cc_lsp_client::Diagnostic>> = BTreeMap::new();
    for d in diagnostics.iter().filter(|d| reads(&d.path)) {
        by_file
            .entry(d.path.clone())
            .or_default()
            .push(d.diagnostic.clone());
    }
    let mut kept_java: BTreeMap<PathBuf, Vec<cc_lsp_client::Diagnostic>> = BTreeMap::new();
    for (path, list) in by_file {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let (kept, taken) = split_file(&path, &text, list, &roots);
        missing.add(taken);
        kept_java.insert(path, kept);
    }
    let kept = diagnostics
        .iter()
        .filter(|d| {
            !reads(&d.path)
                || kept_java
                    .get(&d.path)
                    .is_some_and(|kept| kept.contains(&d.diagnostic))
        })
        .cloned()
        .collect();
    (kept, missing)
}
