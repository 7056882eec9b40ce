//! What a server reports by default when the project says nothing: the diagnostics policy.
//!
//! Diagnostics on write report errors and warnings ([`crate::Family::min_severity`]), never
//! hints or "unnecessary" marks ([`crate::Diagnostic::is_noise`]). Which warnings exist is
//! the project's business: a project that configures its checker (requests sets pyright's
//! `typeCheckingMode = "strict"`) gets what it asked for. Without such configuration a server
//! runs its standard rule set, not its strictest: basedpyright's default mode
//! ("recommended") reports `reportUnknownVariableType` and friends as warnings on nearly
//! every line of untyped code, which would bury the one real error, so it is started in
//! pyright's `standard` mode instead.

use std::path::Path;

use serde_json::{json, Value};

use crate::table::ServerSpec;

/// Adjusts `spec`'s settings for the project at `root` (see the module docs).
pub(crate) fn adapt_to_project(spec: &mut ServerSpec, root: &Path) {
    let section = match spec.name.as_str() {
        "basedpyright" => "basedpyright",
        "pyright" => "python",
        _ => return,
    };
    if has_pyright_configuration(root) {
        return;
    }
    if !spec.settings.is_object() {
        spec.settings = json!({});
    }
    let analysis = &mut spec.settings[section]["analysis"];
    if !analysis.is_object() {
        *analysis = json!({});
    }
    if analysis.get("typeCheckingMode").is_none() {
        analysis["typeCheckingMode"] = Value::String("standard".into());
    }
}

/// Whether the project configures pyright itself: `pyrightconfig.json`, or a
/// `[tool.pyright]` / `[tool.basedpyright]` table in `pyproject.toml`.
pub(crate) fn has_pyright_configuration(root: &Path) -> bool {
    if root.join("pyrightconfig.json").is_file() {
        return true;
    }
    let Ok(pyproject) = std::fs::read_to_string(root.join("pyproject.toml")) else {
        return false;
    };
    let Ok(table) = pyproject.parse::<toml::Table>() else {
        // Unreadable: pyright will not read it either.
        return false;
    };
    table
        .get("tool")
        .and_then(toml::Value::as_table)
        .is_some_and(|tool| tool.contains_key("pyright") || tool.contains_key("basedpyright"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_mode_only_without_project_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = ServerSpec::new("basedpyright", &["basedpyright-langserver"], &[]);
        spec.settings = json!({"basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly"}}});
        let mut adapted = spec.clone();
        adapt_to_project(&mut adapted, dir.path());
        assert_eq!(
            adapted.settings["basedpyright"]["analysis"],
            json!({"diagnosticMode": "openFilesOnly", "typeCheckingMode": "standard"})
        );

        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\nname = 'x'\n[tool.pyright]\ntypeCheckingMode = 'strict'\n",
        )
        .unwrap();
        let mut configured = spec.clone();
        adapt_to_project(&mut configured, dir.path());
        assert_eq!(configured.settings, spec.settings);

        let mut other = ServerSpec::new("pylsp", &["pylsp"], &[]);
        adapt_to_project(&mut other, dir.path());
        assert_eq!(other.settings, Value::Null);
    }
}
