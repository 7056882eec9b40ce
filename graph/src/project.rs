//! The ecosystem files that decide how imports resolve: `go.mod` (module paths),
//! `tsconfig.json` / `jsconfig.json` (`baseUrl`, `paths`), `compile_commands.json` (include
//! folders), `Cargo.toml` (crate names), `pubspec.yaml` (Dart package names). A change to any
//! of them re-resolves every file.

use std::path::Path;

/// The file names read here.
pub const CONFIG_FILES: &[&str] = &[
    "go.mod",
    "tsconfig.json",
    "jsconfig.json",
    "compile_commands.json",
    "Cargo.toml",
    "pubspec.yaml",
];

/// Whether a relative path is one of the configuration files.
pub fn is_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    CONFIG_FILES.contains(&name)
}

/// A Go module: its path and folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoModule {
    /// The module path its `go.mod` declares.
    pub path: String,
    /// The folder of its `go.mod`, relative to the root (`""` at the root).
    pub dir: String,
}

/// A TypeScript project: `baseUrl` and `paths`, relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsConfig {
    /// The folder of its `tsconfig.json` or `jsconfig.json`, relative to the root.
    pub dir: String,
    /// `compilerOptions.baseUrl`, relative to the root.
    pub base_url: Option<String>,
    /// (pattern, targets): `@/*` → [`src/*`].
    pub paths: Vec<(String, Vec<String>)>,
}

/// What the configuration files say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Project {
    /// Every `go.mod`'s module.
    pub go_modules: Vec<GoModule>,
    /// Every `tsconfig.json` and `jsconfig.json` with `compilerOptions`.
    pub ts_configs: Vec<TsConfig>,
    /// Include folders, relative to the root.
    pub include_dirs: Vec<String>,
    /// (crate name with `_`, crate folder).
    pub crates: Vec<(String, String)>,
    /// (package name, package folder).
    pub dart_packages: Vec<(String, String)>,
}

impl Project {
    /// Reads the configuration files at `paths` (relative to `root`); unreadable or invalid
    /// ones are skipped (resolution then falls back to the other rules).
    pub fn read(root: &Path, paths: &[String]) -> Project {
        let mut project = Project::default();
        let mut sorted: Vec<&String> = paths.iter().collect();
        sorted.sort();
        for rel in sorted {
            let Ok(text) = std::fs::read_to_string(root.join(rel)) else {
                continue;
            };
            let dir = parent_dir(rel).to_owned();
            let name = rel.rsplit('/').next().unwrap_or(rel);
            match name {
                "go.mod" => {
                    if let Some(module) = text.lines().find_map(|l| {
                        l.trim()
                            .strip_prefix("module ")
                            .map(|m| m.trim().trim_matches('"').to_owned())
                    }) {
                        project.go_modules.push(GoModule { path: module, dir });
                    }
                }
                "tsconfig.json" | "jsconfig.json" => {
                    if let Some(config) = read_tsconfig(&text, &dir) {
                        project.ts_configs.push(config);
                    }
                }
                "compile_commands.json" => {
                    project.include_dirs.extend(include_dirs(&text, root, &dir));
                }
                "Cargo.toml" => {
                    if let Ok(value) = text.parse::<toml::Table>() {
                        let name = value
                            .get("lib")
                            .and_then(|l| l.get("name"))
                            .or_else(|| value.get("package").and_then(|p| p.get("name")))
                            .and_then(|n| n.as_str());
                        if let Some(name) = name {
                            project.crates.push((name.replace('-', "_"), dir));
                        }
                    }
                }
                "pubspec.yaml" => {
                    if let Some(name) = text.lines().find_map(|l| {
                        l.strip_prefix("name:")
                            .map(|n| n.trim().trim_matches(['"', '\'']))
                    }) {
                        project.dart_packages.push((name.to_owned(), dir));
                    }
                }
                _ => {}
            }
        }
        project.include_dirs.sort();
        project.include_dirs.dedup();
        project
    }
}

/// JSON with comments and trailing commas, as tsconfig allows.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas before a closing bracket.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    for (i, &c) in bytes.iter().enumerate() {
        if c == ',' {
            let next = bytes[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    cleaned
}

fn read_tsconfig(text: &str, dir: &str) -> Option<TsConfig> {
    let value: serde_json::Value = serde_json::from_str(&strip_jsonc(text)).ok()?;
    let options = value.get("compilerOptions")?;
    let base_url = options
        .get("baseUrl")
        .and_then(|b| b.as_str())
        .map(|b| join(dir, b));
    let paths = options
        .get("paths")
        .and_then(|p| p.as_object())
        .map(|map| {
            map.iter()
                .map(|(pattern, targets)| {
                    let targets = targets
                        .as_array()
                        .map(|t| {
                            t.iter()
                                .filter_map(|s| s.as_str())
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    (pattern.clone(), targets)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(TsConfig {
        dir: dir.to_owned(),
        base_url,
        paths,
    })
}

fn include_dirs(text: &str, root: &Path, dir: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in value.as_array().map(Vec::as_slice).unwrap_or_default() {
        let base = root.join(dir);
        let directory = entry
            .get("directory")
            .and_then(|d| d.as_str())
            .map(|d| base.join(d))
            .unwrap_or(base);
        let args: Vec<String> =
            if let Some(args) = entry.get("arguments").and_then(|a| a.as_array()) {
                args.iter()
                    .filter_map(|a| a.as_str().map(str::to_owned))
                    .collect()
            } else {
                entry
                    .get("command")
                    .and_then(|c| c.as_str())
                    .map(|c| c.split_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default()
            };
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            let include = if arg == "-I" || arg == "-iquote" || arg == "-isystem" {
                iter.next().cloned()
            } else {
                arg.strip_prefix("-I").map(str::to_owned)
            };
            if let Some(include) = include {
                let absolute = directory.join(&include);
                if let Ok(rel) = absolute.strip_prefix(root) {
                    out.push(normalize(&rel.to_string_lossy()));
                } else if let Ok(Ok(rel)) = absolute.canonicalize().and_then(|a| {
                    Ok(a.strip_prefix(root.canonicalize()?)
                        .map(|r| r.to_path_buf()))
                }) {
                    out.push(normalize(&rel.to_string_lossy()));
                }
            }
        }
    }
    out
}

/// The folder of a `/`-separated relative path.
pub fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `a/b` joined with `../c` → `a/c`; `.` segments removed; `None`-like empty for the root.
pub fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        normalize(rel)
    } else {
        normalize(&format!("{dir}/{rel}"))
    }
}

/// Removes `.` and resolves `..` segments (never above the root).
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}
