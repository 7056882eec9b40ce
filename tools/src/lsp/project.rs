//! `lsp diagnostics` with `file: "*"`: the project checkers' findings, in the same shape as a
//! file's diagnostics.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{ErrorKind, ToolError};
use crate::report::lsp::{
    MissingPackages, ProjectCheckReport, ProjectCheckRow, ProjectUnchecked,
    LEFT_OUT_BY_CONFIGURATION,
};
use crate::report::NewDiagnostic;
use crate::root::WorkspaceRoot;
use crate::tool::CallContext;
use cc_lsp_client::missing::{reads, split_file, MissingDependencies};
use cc_lsp_client::{
    CheckerError, ProjectCheck, ProjectChecker, ProjectDiagnostic, ServerPool, Severity,
};

/// Diagnostics listed at most (errors first); the total is always given.
const PROJECT_DIAGNOSTICS_CAP: usize = 200;

fn checker_error(error: &CheckerError) -> ToolError {
    ToolError::new(error.kind(), error.to_string())
}

/// A checker that failed: its language, its project's root, and why.
type Failure = (String, String, CheckerError);

/// Runs the checker of every project (or of `language`'s), reporting progress; the checks
/// that ran and the failures. None ran: the error that says why.
async fn run_checkers(
    ctx: &CallContext,
    pool: &ServerPool,
    root: &WorkspaceRoot,
    language: Option<&str>,
) -> Result<(Vec<ProjectCheck>, Vec<Failure>), ToolError> {
    let checker = ProjectChecker::for_pool(pool);
    let targets = checker
        .project_targets(language)
        .map_err(|u| ToolError::new(ErrorKind::NotAvailable, u.reason))?;
    let mut checks: Vec<ProjectCheck> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
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
            ErrorKind::NotAvailable,
            format!("no project checker could run: {}", reasons.join("; ")),
        ));
    }
    Ok((checks, failures))
}

/// Errors first; among them, the files with the fewest first: a caller a change broke has
/// one or two, while a file whose libraries are missing has dozens that follow from them, and
/// the list is cut.
fn sort_for_listing(found: &mut [(String, &cc_lsp_client::Diagnostic)]) {
    let mut per_file: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (path, d) in found.iter() {
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
}

/// Runs the checker of every project in the workspace (or of `language`'s only).
pub(crate) async fn check(
    ctx: &CallContext,
    pool: &ServerPool,
    root: &WorkspaceRoot,
    language: Option<&str>,
) -> Result<ProjectCheckReport, ToolError> {
    let (mut checks, failures) = run_checkers(ctx, pool, root, language).await?;

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
    sort_for_listing(&mut found);
    let total = found.len();
    let listed: Vec<NewDiagnostic> = found
        .iter()
        .take(PROJECT_DIAGNOSTICS_CAP)
        .map(|(path, d)| NewDiagnostic::new(path, d))
        .collect();
    let summary: Vec<ProjectCheckRow> = checks
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
            let program = check.command.split(' ').next().unwrap_or("the checker");
            let notes: Vec<String> = check
                .note
                .iter()
                .cloned()
                .chain(missing.sentence(program))
                .collect();
            ProjectCheckRow {
                language: check.family.clone(),
                root: root.relative(&check.root),
                command: check.command.clone(),
                exit_code: check.exit_code,
                errors: count(Severity::Error),
                warnings: count(Severity::Warning),
                note: (!notes.is_empty()).then(|| notes.join("; ")),
                missing_dependencies: (missing.diagnostics > 0).then(|| MissingPackages {
                    packages: missing.packages.iter().cloned().collect(),
                    diagnostics: missing.diagnostics,
                    note: None,
                }),
            }
        })
        .collect();
    let mut unchecked: Vec<ProjectUnchecked> = failures
        .iter()
        .map(|(family, root, error)| ProjectUnchecked {
            language: family.clone(),
            root: root.clone(),
            kind: error.kind().as_str().to_owned(),
            reason: error.to_string(),
            files: None,
            files_total: None,
        })
        .collect();
    // Files the project's own configuration leaves out of its checker: never silently.
    for (check, left_out) in checks
        .iter()
        .flat_map(|check| check.left_out.iter().map(move |l| (check, l)))
    {
        let files: Vec<String> = left_out.files.iter().map(|p| root.relative(p)).collect();
        unchecked.push(ProjectUnchecked {
            language: check.family.clone(),
            root: root.relative(&check.root),
            kind: LEFT_OUT_BY_CONFIGURATION.to_owned(),
            reason: left_out.reason.clone(),
            files_total: Some(files.len()),
            files: Some(files.into_iter().take(50).collect()),
        });
    }
    Ok(ProjectCheckReport {
        action: "diagnostics".into(),
        file: "*".into(),
        checks: summary,
        diagnostics: listed,
        total,
        truncated: total > PROJECT_DIAGNOSTICS_CAP,
        unchecked,
    })
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
