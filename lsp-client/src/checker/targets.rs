//! Which projects a `diagnostics "*"` covers, and running their checkers with a pool's
//! table, PATH, workspace and trust.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use super::{plan, run, CheckerError, ProjectCheck, ProjectTarget};
use crate::pool::{marker_roots, ServerPool, Unavailable};
use crate::table::{canonical_family, ServerTable};
use crate::Trust;

/// At most this many roots of one family are checked.
const MAX_ROOTS: usize = 5;

/// The project checkers of one workspace. It starts no language server: it reads the
/// server table for each family's checker and markers, and runs checkers as child process
/// groups.
#[derive(Debug, Clone)]
pub struct ProjectChecker {
    workspace: PathBuf,
    table: Arc<ServerTable>,
    path_var: OsString,
    trust: Trust,
    config_error: Option<String>,
}

impl ProjectChecker {
    /// Checkers for `workspace` configured by `table`, looked up on `path_var`; a read-only
    /// `trust` runs only checkers that execute no workspace code.
    pub fn new(
        workspace: PathBuf,
        table: Arc<ServerTable>,
        path_var: OsString,
        trust: Trust,
    ) -> Self {
        ProjectChecker {
            workspace,
            table,
            path_var,
            trust,
            config_error: None,
        }
    }

    /// The checkers of a pool's workspace, with its table, PATH and trust (and its broken
    /// `[lsp]` section, if any, which every call then reports).
    pub fn for_pool(pool: &ServerPool) -> Self {
        ProjectChecker {
            config_error: pool.config_error(),
            ..ProjectChecker::new(
                pool.workspace().to_path_buf(),
                pool.table(),
                pool.path_var(),
                pool.trust(),
            )
        }
    }

    /// The projects to check: for `language`, its outermost project roots in the workspace;
    /// without, every enabled family that has a project marker in the workspace (families
    /// without markers, such as bash, only when asked for by name). Nested roots are left to
    /// the outer one's checker.
    pub fn project_targets(
        &self,
        language: Option<&str>,
    ) -> Result<Vec<ProjectTarget>, Unavailable> {
        if let Some(error) = &self.config_error {
            return Err(Unavailable {
                family: language.map(str::to_owned),
                reason: error.clone(),
            });
        }
        let table = &self.table;
        let families: Vec<_> = match language {
            Some(name) => {
                let family = table.family(name).ok_or_else(|| {
                    let known: Vec<&str> = table.families.iter().map(|f| f.name.as_str()).collect();
                    Unavailable {
                        family: None,
                        reason: format!(
                            "`{name}` is not a language of the server table; use one of: {}",
                            known.join(", ")
                        ),
                    }
                })?;
                if !family.enabled {
                    return Err(Unavailable {
                        family: Some(family.name.clone()),
                        reason: format!("{} is {}", family.name, table.turned_off(&family.name)),
                    });
                }
                vec![family]
            }
            None => table
                .families
                .iter()
                .filter(|f| f.enabled && !f.markers.is_empty())
                .collect(),
        };
        let mut targets = Vec::new();
        for family in &families {
            let mut roots: Vec<PathBuf> = Vec::new();
            for root in marker_roots(&self.workspace, &family.markers) {
                if !roots.iter().any(|outer| root.starts_with(outer)) {
                    roots.push(root);
                }
            }
            if roots.is_empty() && language.is_some() {
                return Err(Unavailable {
                    family: Some(family.name.clone()),
                    reason: format!(
                        "no {} project marker ({}) in the workspace; add one at the project root",
                        family.name,
                        family.markers.join(", ")
                    ),
                });
            }
            targets.extend(roots.into_iter().take(MAX_ROOTS).map(|root| ProjectTarget {
                family: family.name.clone(),
                root,
            }));
        }
        if targets.is_empty() {
            return Err(Unavailable {
                family: None,
                reason: "no project marker of any language (pyproject.toml, package.json, \
                         Cargo.toml, go.mod, compile_commands.json, …) in the workspace"
                    .into(),
            });
        }
        Ok(targets)
    }

    /// A pyright-family checker is told the project's python (`cc_workspace::python`, as the
    /// language servers are), so it resolves the project against its own environment, never
    /// the tools' (`--pythonpath`).
    fn give_project_python(
        &self,
        family: &crate::table::Family,
        root: &std::path::Path,
        plan: &mut super::Plan,
    ) -> Result<(), CheckerError> {
        let program = plan
            .program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !matches!(program.as_str(), "basedpyright" | "pyright")
            || plan
                .invocations
                .iter()
                .flatten()
                .any(|a| a == "--pythonpath")
        {
            return Ok(());
        }
        let mut query = cc_workspace::python::PythonQuery::new(root, &self.workspace);
        query.configured = family.interpreter.as_deref();
        query.path_var = Some(self.path_var.clone());
        query.outside_workspace_only = self.trust == Trust::ReadOnly;
        match cc_workspace::python::project_python(&query) {
            Ok(choice) => {
                for invocation in &mut plan.invocations {
                    invocation.push("--pythonpath".into());
                    invocation.push(choice.path.to_string_lossy().into_owned());
                }
                Ok(())
            }
            Err(why) if self.trust == Trust::ReadOnly => Err(CheckerError::Refused {
                family: plan.family.clone(),
                reason: format!(
                    "{program} would run the project's own python; no python3 outside the \
                     workspace is on PATH to give it instead ({why})"
                ),
            }),
            Err(_) => Ok(()),
        }
    }

    /// Runs the project checker of `target` (see [`crate::checker`]).
    pub async fn check_project(
        &self,
        target: &ProjectTarget,
    ) -> Result<ProjectCheck, CheckerError> {
        let family = self
            .table
            .family(canonical_family(&target.family))
            .ok_or_else(|| CheckerError::not_configured(&target.family, &self.table.place))?;
        let read_only = self.trust == Trust::ReadOnly;
        let mut plan = plan(
            family,
            &self.table.place,
            &target.root,
            &self.workspace,
            &self.path_var,
            read_only,
        )?;
        if read_only {
            super::restrict::restrict_checker(&mut plan, &self.workspace)?;
        }
        self.give_project_python(family, &target.root, &mut plan)?;
        run(&plan, &self.path_var).await
    }
}
