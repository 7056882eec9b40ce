//! What a read-only surface changes in a checker's plan, so that it runs no workspace code.

use std::ffi::OsStr;
use std::path::Path;

use super::{CheckerError, Plan};
use crate::policy::trusted_python;

/// Makes a project checker run no workspace code: `cargo check` is refused (it runs build
/// scripts and proc macros); pyright-family checkers are given a python outside the
/// workspace; `go vet` runs with the local toolchain and without cgo.
pub(crate) fn restrict_checker(
    plan: &mut Plan,
    workspace: &Path,
    path_var: &OsStr,
) -> Result<(), CheckerError> {
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
        "basedpyright" | "pyright" => {
            let python = trusted_python(workspace, path_var).ok_or_else(|| {
                refuse(format!(
                    "{program} would run the project's own python; no python3 outside the                      workspace is on PATH to give it instead"
                ))
            })?;
            for invocation in &mut plan.invocations {
                invocation.push("--pythonpath".into());
                invocation.push(python.to_string_lossy().into_owned());
            }
            Ok(())
        }
        "go" => {
            plan.env.push(("GOTOOLCHAIN".into(), "local".into()));
            plan.env.push(("CGO_ENABLED".into(), "0".into()));
            Ok(())
        }
        _ => Ok(()),
    }
}
