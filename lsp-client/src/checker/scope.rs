//! What a project's own configuration leaves out of its checker: pyright's `include` and
//! `exclude` (`pyrightconfig.json`, `[tool.pyright]` / `[tool.basedpyright]` in
//! `pyproject.toml`) and a tsconfig's `include`, `files` and `exclude`. Tests are the usual
//! case. The pyright family checks such files anyway (named on the command line, which
//! overrides `include`); for tsc they are listed as unchecked with the reason.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Files the configuration leaves out, and which configuration says so.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LeftOut {
    /// The files, absolute.
    pub files: Vec<PathBuf>,
    /// "left out by `[tool.pyright] include` in pyproject.toml", "`#[cfg(feature =
    /// \"serde\")] mod serde;` in src/lib.rs:101 is off for `cargo check`", ….
    pub reason: String,
}

/// Folders and files pyright leaves out unless told otherwise.
const PYRIGHT_DEFAULT_EXCLUDES: &[&str] = &["**/node_modules", "**/__pycache__", "**/.*"];

/// A pattern of pyright's or tsconfig's (a path, or a glob with `*`, `**`, `?`), relative to
/// `base`, as a set matching the files under it.
fn patterns(base: &Path, patterns: &[String]) -> Option<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
        let absolute = if Path::new(pattern).is_absolute() {
            PathBuf::from(pattern)
        } else {
            base.join(pattern)
        };
        let text = absolute.to_string_lossy().into_owned();
        // A plain folder (or file) covers everything below it.
        for glob in [text.clone(), format!("{text}/**")] {
            if let Ok(glob) = GlobBuilder::new(&glob).literal_separator(true).build() {
                builder.add(glob);
            }
        }
    }
    builder.build().ok()
}

/// The `include`/`exclude` of the project's pyright configuration, from `root` or the folder
/// above it where pyright finds one; `None` when there is none or it includes everything.
pub(crate) fn pyright_left_out(root: &Path, sources: &[PathBuf]) -> Option<LeftOut> {
    let (base, include, exclude, where_) = pyright_config(root)?;
    if include.is_empty() && exclude.is_empty() {
        return None;
    }
    let included = if include.is_empty() {
        None
    } else {
        Some(patterns(&base, &include)?)
    };
    let mut excludes = exclude.clone();
    excludes.extend(PYRIGHT_DEFAULT_EXCLUDES.iter().map(|s| (*s).to_owned()));
    let excluded = patterns(&base, &excludes)?;
    let files: Vec<PathBuf> = sources
        .iter()
        .filter(|file| {
            included.as_ref().is_some_and(|set| !set.is_match(file)) || excluded.is_match(file)
        })
        .cloned()
        .collect();
    (!files.is_empty()).then(|| LeftOut {
        files,
        reason: format!(
            "left out by the {} of {where_}",
            match (include.is_empty(), exclude.is_empty()) {
                (false, true) => "`include`",
                (true, false) => "`exclude`",
                _ => "`include` and `exclude`",
            }
        ),
    })
}

type PyrightConfig = (PathBuf, Vec<String>, Vec<String>, String);

fn pyright_config(root: &Path) -> Option<PyrightConfig> {
    for dir in root.ancestors() {
        if let Ok(text) = std::fs::read_to_string(dir.join("pyrightconfig.json")) {
            let value = json_with_comments(&text)?;
            return Some((
                dir.to_path_buf(),
                strings(&value["include"]),
                strings(&value["exclude"]),
                "pyrightconfig.json".into(),
            ));
        }
        let Ok(text) = std::fs::read_to_string(dir.join("pyproject.toml")) else {
            continue;
        };
        let Ok(table) = text.parse::<toml::Table>() else {
            continue;
        };
        let Some(tool) = table.get("tool").and_then(toml::Value::as_table) else {
            continue;
        };
        for key in ["basedpyright", "pyright"] {
            if let Some(section) = tool.get(key).and_then(toml::Value::as_table) {
                let list = |name: &str| -> Vec<String> {
                    section
                        .get(name)
                        .and_then(toml::Value::as_array)
                        .map(|items| {
                            items
                                .iter()
                                .filter_map(|v| v.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                return Some((
                    dir.to_path_buf(),
                    list("include"),
                    list("exclude"),
                    format!("[tool.{key}] in pyproject.toml"),
                ));
            }
        }
    }
    None
}

/// The files of `sources` a `tsconfig.json` in `root` leaves out (`files` and `include`, then
/// `exclude`); `None` without a tsconfig or when it takes them all.
pub(crate) fn tsconfig_left_out(root: &Path, sources: &[PathBuf]) -> Option<LeftOut> {
    let text = std::fs::read_to_string(root.join("tsconfig.json")).ok()?;
    let value = json_with_comments(&text)?;
    let files = strings(&value["files"]);
    let include = strings(&value["include"]);
    let exclude = strings(&value["exclude"]);
    if include.is_empty() && files.is_empty() && exclude.is_empty() {
        return None;
    }
    // `files` alone (no `include`) means only those.
    let include = if include.is_empty() && files.is_empty() {
        vec!["**/*".to_owned()]
    } else {
        include
    };
    let included = patterns(root, &include)?;
    let listed: Vec<PathBuf> = files.iter().map(|f| root.join(f)).collect();
    let mut excludes = exclude;
    excludes.push("**/node_modules".into());
    let excluded = patterns(root, &excludes)?;
    let left: Vec<PathBuf> = sources
        .iter()
        .filter(|file| {
            !listed.contains(file) && (!included.is_match(file) || excluded.is_match(file))
        })
        .cloned()
        .collect();
    (!left.is_empty()).then(|| LeftOut {
        files: left,
        reason: "left out by the `include`/`files`/`exclude` of tsconfig.json".into(),
    })
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// JSON with `//` comment lines and trailing commas, as tsconfig and pyright read it.
fn json_with_comments(text: &str) -> Option<serde_json::Value> {
    let stripped: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let no_trailing = stripped.replace(",\n}", "\n}").replace(",\n]", "\n]");
    serde_json::from_str(&no_trailing).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn pyright_and_tsconfig_scopes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(
            root.join("pyproject.toml"),
            "[tool.pyright]\ninclude = [\"src\"]\n",
        )
        .unwrap();
        let sources = vec![
            root.join("src/click/core.py"),
            root.join("tests/test_utils.py"),
        ];
        let left = pyright_left_out(&root, &sources).unwrap();
        assert_eq!(left.files, [root.join("tests/test_utils.py")]);
        assert!(left.reason.contains("[tool.pyright]"), "{}", left.reason);

        std::fs::write(
            root.join("tsconfig.json"),
            "{\n  // sources only\n  \"include\": [\"src\"],\n}\n",
        )
        .unwrap();
        let ts = vec![root.join("src/a.ts"), root.join("spec/a.spec.ts")];
        assert_eq!(
            tsconfig_left_out(&root, &ts).unwrap().files,
            [root.join("spec/a.spec.ts")]
        );
    }
}
