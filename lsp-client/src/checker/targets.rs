//! Which projects a `diagnostics "*"` covers, and running their checkers through the
//! supervisor (its table, PATH and workspace).

use std::path::PathBuf;

use super::{plan, run, CheckerError, ProjectCheck, ProjectTarget};
use crate::supervisor::{marker_roots, Supervisor, Unavailable};
use crate::table::canonical_family;

/// At most this many roots of one family are checked.
const MAX_ROOTS: usize = 5;

impl Supervisor {
    /// The projects to check: for `language`, its outermost project roots in the workspace;
    /// without, every enabled family that has a project marker in the workspace (families
    /// without markers, such as bash, only when asked for by name). Nested roots are left to
    /// the outer one's checker.
    pub fn project_targets(
        &self,
        language: Option<&str>,
    ) -> Result<Vec<ProjectTarget>, Unavailable> {
        if let Some(error) = self.config_error() {
            return Err(Unavailable {
                family: language.map(str::to_owned),
                reason: error,
            });
        }
        let table = self.table();
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
                        reason: format!(
                            "{} is turned off in .cc/tools.toml ([lsp.{}] enabled = false)",
                            family.name, family.name
                        ),
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
            for root in marker_roots(self.workspace(), &family.markers) {
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

    /// Runs the project checker of `target` (see [`crate::checker`]).
    pub async fn check_project(
        &self,
        target: &ProjectTarget,
    ) -> Result<ProjectCheck, CheckerError> {
        let table = self.table();
        let family = table
            .family(canonical_family(&target.family))
            .ok_or_else(|| CheckerError::NotConfigured {
                family: target.family.clone(),
            })?;
        let path_var = self.path_var();
        let read_only = self.trust() == crate::Trust::ReadOnly;
        let mut plan = plan(family, &target.root, self.workspace(), &path_var, read_only)?;
        if read_only {
            super::restrict::restrict_checker(&mut plan, self.workspace(), &path_var)?;
        }
        run(&plan, &path_var).await
    }
}
