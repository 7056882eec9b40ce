//! What a read-only surface changes in a checker's plan, so that it runs no workspace code.

use std::path::Path;

use super::{CheckerError, Plan};

/// Makes a project checker run no workspace code: `cargo check` is refused (it runs build
/// scripts and proc macros); pyright-family checkers are given a python outside the
/// workspace (by `check_project`, through the one resolution of the project's python);
/// `go vet` runs with the local toolchain and without cgo.
pub(crate) fn restrict_checker(plan: &mut Plan, workspace: &Path) -> Result<(), CheckerError> {
    let program = plan
        .program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let refuse = |reason: String| CheckerError::Refused {
        family: plan.family.clone(),
        reason,
    };
    if plan.program.starts_with(workspace) {
        return Err(refuse(format!(
            "the checker {} is inside the workspace; a read-only surface runs no workspace              code: call `lsp diagnostics` from the full surface",
            plan.program.display()
        )));
    }
    match program.as_str() {
        "cargo" => Err(refuse(
            "`cargo check` builds the project, which runs its build scripts and proc macros; a \
             read-only surface runs no workspace code: run `lsp diagnostics \"*\"` from the \
             full surface, or ask for one file's diagnostics (`file: \"src/lib.rs\"`)"
                .into(),
        )),
        // The project's python was chosen outside the workspace (`check_project`).
        "basedpyright" | "pyright" => Ok(()),
        "go" => {
            plan.env.push(("GOTOOLCHAIN".into(), "local".into()));
            plan.env.push(("CGO_ENABLED".into(), "0".into()));
            Ok(())
        }
        _ => Ok(()),
    }
}
