//! What `cargo check --workspace --all-targets` leaves out of a Rust project: targets whose
//! `required-features` are off, files under a `#![cfg(…)]` that is false, and modules
//! declared under a false `#[cfg(…)] mod name;` (`#[cfg(feature = "serde")] mod serde;` with
//! the feature off, `#![cfg(test_node_semver)]` that nothing sets). They are never compiled,
//! so no error in them is reported: the check lists them under `unchecked` with the reason.
//!
//! A predicate counts as false only when it is false for certain: with the features on (the
//! default ones, or the ones rust-analyzer is configured with), `debug_assertions`, the
//! host's `unix`/`target_os`/`target_arch`/…, `test` both on and off (`--all-targets` builds
//! both), and every other name off unless a build script or `.cargo/config` may set it
//! (then unknown, and the file is not listed). Module declarations are read from the text:
//! top-level items (column 0, as rustfmt writes them), their attributes, `#[path]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::scope::LeftOut;

/// Files a module walk reads at most, per project.
const MAX_MODULE_FILES: usize = 20_000;

/// The features `cargo check` runs with: the default ones (unless turned off) and those
/// named, or all.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FeatureChoice {
    pub all: bool,
    pub no_default: bool,
    pub named: Vec<String>,
}

impl FeatureChoice {
    /// The choice a `cargo check` command line makes (`--all-features`,
    /// `--no-default-features`, `--features a,b`, `--features=a`, `-F a`).
    pub(crate) fn from_args(args: &[String]) -> Self {
        let mut choice = FeatureChoice::default();
        let mut words = args.iter();
        while let Some(word) = words.next() {
            let list = match word.as_str() {
                "--all-features" => {
                    choice.all = true;
                    continue;
                }
                "--no-default-features" => {
                    choice.no_default = true;
                    continue;
                }
                "--features" | "-F" => words.next().map(String::as_str),
                other => other.strip_prefix("--features="),
            };
            let names = list.into_iter().flat_map(|l| l.split([',', ' ']));
            choice
                .named
                .extend(names.filter(|f| !f.is_empty()).map(str::to_owned));
        }
        choice
    }
}

/// What cargo leaves out under `root` (a package, or a workspace and its members).
pub(crate) fn cargo_left_out(root: &Path, choice: &FeatureChoice) -> Vec<LeftOut> {
    let mut out = Vec::new();
    for package in packages(root) {
        out.extend(package_left_out(&package, choice, root));
    }
    out
}

/// The package folders of `root`: itself when it has `[package]`, and the workspace's
/// members (plain paths and `dir/*`).
fn packages(root: &Path) -> Vec<PathBuf> {
    let Some(manifest) = read_manifest(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if manifest.contains_key("package") {
        out.push(root.to_path_buf());
    }
    let members = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array);
    for member in members
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_str)
    {
        if let Some(parent) = member.strip_suffix("/*") {
            let Ok(entries) = std::fs::read_dir(root.join(parent)) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join("Cargo.toml").is_file())
                .collect();
            found.sort();
            out.extend(found);
        } else if root.join(member).join("Cargo.toml").is_file() {
            out.push(root.join(member));
        }
    }
    out.dedup();
    out
}

fn read_manifest(dir: &Path) -> Option<toml::Table> {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()?
        .parse()
        .ok()
}

/// A compiled target: its name, root file and required features.
struct Target {
    name: String,
    root: PathBuf,
    required: Vec<String>,
}

fn package_left_out(dir: &Path, choice: &FeatureChoice, workspace: &Path) -> Vec<LeftOut> {
    let Some(manifest) = read_manifest(dir) else {
        return Vec::new();
    };
    let features = enabled_features(&manifest, choice);
    let facts = Facts::new(dir, workspace, &features);
    let mut out = Vec::new();
    let mut walks = Vec::new();
    for target in targets(dir, &manifest) {
        let missing: Vec<&String> = target
            .required
            .iter()
            .filter(|f| !features.contains(f.as_str()))
            .collect();
        if missing.is_empty() {
            walks.push(module_files(&target.root, &facts));
            continue;
        }
        let walk = module_files(&target.root, &facts);
        let files = walk
            .reached
            .into_iter()
            .chain(walk.off.into_iter().flat_map(|(files, _)| files))
            .collect();
        out.push(LeftOut {
            files,
            reason: format!(
                "target `{}` needs feature(s) {}, which `cargo check` does not turn on{}",
                target.name,
                missing
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                features_shown(&features)
            ),
        });
    }
    // A file one target leaves off and another compiles is checked.
    let mut seen: BTreeSet<PathBuf> = walks.iter().flat_map(|w| w.reached.clone()).collect();
    for walk in walks {
        for (files, reason) in walk.off {
            let files: Vec<PathBuf> = files
                .into_iter()
                .filter(|f| seen.insert(f.clone()))
                .collect();
            if !files.is_empty() {
                out.push(LeftOut {
                    files,
                    reason: format!("{reason}{}", features_shown(&features)),
                });
            }
        }
    }
    out
}

fn features_shown(features: &BTreeSet<String>) -> String {
    let shown: Vec<&str> = features
        .iter()
        .map(String::as_str)
        .filter(|f| *f != "default")
        .collect();
    if shown.is_empty() {
        " (no features on)".into()
    } else {
        format!(" (features on: {})", shown.join(", "))
    }
}

/// The features on: `default`'s closure (unless turned off) with the named ones, or every
/// feature (optional dependencies are features unless a `dep:` names them).
fn enabled_features(manifest: &toml::Table, choice: &FeatureChoice) -> BTreeSet<String> {
    let declared: BTreeMap<String, Vec<String>> = manifest
        .get("features")
        .and_then(toml::Value::as_table)
        .map(|table| {
            table
                .iter()
                .map(|(name, values)| {
                    let values = values
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(toml::Value::as_str)
                        .map(str::to_owned)
                        .collect();
                    (name.clone(), values)
                })
                .collect()
        })
        .unwrap_or_default();
    let named_by_dep: BTreeSet<&str> = declared
        .values()
        .flatten()
        .filter_map(|v| v.strip_prefix("dep:"))
        .collect();
    let optional: Vec<String> = dependency_tables(manifest)
        .flat_map(|table| table.iter())
        .filter(|(_, spec)| spec.get("optional").and_then(toml::Value::as_bool) == Some(true))
        .map(|(name, _)| name.clone())
        .filter(|name| !named_by_dep.contains(name.as_str()))
        .collect();
    if choice.all {
        let mut all: BTreeSet<String> = declared.keys().cloned().collect();
        all.extend(optional);
        return all;
    }
    let mut pending: Vec<String> = choice.named.clone();
    if !choice.no_default && declared.contains_key("default") {
        pending.push("default".into());
    }
    let mut on = BTreeSet::new();
    while let Some(feature) = pending.pop() {
        // `dep/feature` and `dep?/feature` turn on a dependency's feature (and the optional
        // dependency itself for the first form); `dep:x` the dependency only.
        let (name, implied) = match feature.split_once('/') {
            Some((dep, _)) if !dep.ends_with('?') => (dep.to_owned(), true),
            Some(_) => continue,
            None => (feature.clone(), false),
        };
        if let Some(dep) = name.strip_prefix("dep:") {
            on.insert(format!("dep:{dep}"));
            continue;
        }
        if implied && !declared.contains_key(&name) && !optional.contains(&name) {
            continue;
        }
        if on.insert(name.clone()) {
            pending.extend(declared.get(&name).cloned().unwrap_or_default());
        }
    }
    on.retain(|f| !f.starts_with("dep:"));
    on
}

fn dependency_tables(manifest: &toml::Table) -> impl Iterator<Item = &toml::Table> {
    let top = ["dependencies", "dev-dependencies", "build-dependencies"]
        .into_iter()
        .filter_map(|key| manifest.get(key).and_then(toml::Value::as_table));
    let per_target = manifest
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|targets| targets.values())
        .filter_map(toml::Value::as_table)
        .flat_map(|target| {
            ["dependencies", "dev-dependencies", "build-dependencies"]
                .into_iter()
                .filter_map(|key| target.get(key).and_then(toml::Value::as_table))
        });
    top.chain(per_target)
}

/// Every target `--all-targets` builds: the library, binaries, tests, benches and examples,
/// declared or found where cargo finds them (unless `auto…` is off).
fn targets(dir: &Path, manifest: &toml::Table) -> Vec<Target> {
    let package = manifest.get("package").and_then(toml::Value::as_table);
    let auto = |key: &str| {
        package
            .and_then(|p| p.get(key))
            .and_then(toml::Value::as_bool)
            != Some(false)
    };
    let mut out: Vec<Target> = Vec::new();
    let declared = |key: &str| -> Vec<&toml::Table> {
        match manifest.get(key) {
            Some(toml::Value::Array(items)) => {
                items.iter().filter_map(toml::Value::as_table).collect()
            }
            Some(toml::Value::Table(table)) => vec![table],
            _ => Vec::new(),
        }
    };
    let kinds: [(&str, &str, bool); 5] = [
        ("lib", "src", true),
        ("bin", "src/bin", auto("autobins")),
        ("test", "tests", auto("autotests")),
        ("bench", "benches", auto("autobenches")),
        ("example", "examples", auto("autoexamples")),
    ];
    for (key, folder, automatic) in kinds {
        for table in declared(key) {
            let name = table
                .get("name")
                .and_then(toml::Value::as_str)
                .unwrap_or(key)
                .to_owned();
            let path = match table.get("path").and_then(toml::Value::as_str) {
                Some(path) => dir.join(path),
                None if key == "lib" => dir.join("src/lib.rs"),
                None if key == "bin" && !dir.join(folder).join(format!("{name}.rs")).exists() => {
                    dir.join("src/main.rs")
                }
                None => dir.join(folder).join(format!("{name}.rs")),
            };
            let required = table
                .get("required-features")
                .and_then(toml::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(toml::Value::as_str)
                .map(str::to_owned)
                .collect();
            out.push(Target {
                name,
                root: path,
                required,
            });
        }
        if !automatic {
            continue;
        }
        let mut found = Vec::new();
        match key {
            "lib" => found.push(dir.join("src/lib.rs")),
            "bin" => {
                found.push(dir.join("src/main.rs"));
                found.extend(auto_files(&dir.join(folder)));
            }
            _ => found.extend(auto_files(&dir.join(folder))),
        }
        for root in found.into_iter().filter(|p| p.is_file()) {
            if out.iter().any(|t| t.root == root) {
                continue;
            }
            let name = root
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(Target {
                name,
                root,
                required: Vec::new(),
            });
        }
    }
    out.retain(|t| t.root.is_file());
    out
}

/// `folder/*.rs` and `folder/*/main.rs`, as cargo discovers targets.
fn auto_files(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            if p.extension().is_some_and(|e| e == "rs") {
                Some(p)
            } else if p.join("main.rs").is_file() {
                Some(p.join("main.rs"))
            } else {
                None
            }
        })
        .collect();
    out.sort();
    out
}

/// What a predicate's names mean for `cargo check` here.
struct Facts<'a> {
    features: &'a BTreeSet<String>,
    /// A build script or `.cargo/config` may set cfgs the text cannot tell.
    set_elsewhere: Vec<String>,
    /// A build script whose cfgs are computed (`rustc-cfg={}`): every other name unknown.
    any_set_elsewhere: bool,
}

impl<'a> Facts<'a> {
    fn new(dir: &Path, workspace: &Path, features: &'a BTreeSet<String>) -> Self {
        let mut set_elsewhere = Vec::new();
        let mut any_set_elsewhere = false;
        if let Ok(text) = std::fs::read_to_string(dir.join("build.rs")) {
            for piece in text.split("rustc-cfg=").skip(1) {
                let name: String = piece
                    .trim_start_matches('"')
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name.is_empty() {
                    any_set_elsewhere = true;
                } else {
                    set_elsewhere.push(name);
                }
            }
        }
        for folder in dir.ancestors().take_while(|d| d.starts_with(workspace)) {
            for name in [".cargo/config.toml", ".cargo/config"] {
                if std::fs::read_to_string(folder.join(name)).is_ok_and(|t| t.contains("--cfg")) {
                    any_set_elsewhere = true;
                }
            }
        }
        if std::env::var("RUSTFLAGS").is_ok_and(|f| f.contains("--cfg")) {
            any_set_elsewhere = true;
        }
        Facts {
            features,
            set_elsewhere,
            any_set_elsewhere,
        }
    }

    fn name(&self, name: &str, test: bool) -> Tri {
        match name {
            "test" => Tri::from(test),
            "debug_assertions" => Tri::True,
            "unix" => Tri::from(cfg!(unix)),
            "windows" => Tri::from(cfg!(windows)),
            "doc" | "doctest" | "miri" | "rustdoc" => Tri::False,
            other if self.set_elsewhere.iter().any(|n| n == other) || self.any_set_elsewhere => {
                Tri::Unknown
            }
            _ => Tri::False,
        }
    }

    fn pair(&self, key: &str, value: &str) -> Tri {
        let host = match key {
            "feature" => return Tri::from(self.features.contains(value)),
            "target_os" => std::env::consts::OS,
            "target_family" => std::env::consts::FAMILY,
            "target_arch" => std::env::consts::ARCH,
            "target_pointer_width" => {
                if cfg!(target_pointer_width = "64") {
                    "64"
                } else {
                    "32"
                }
            }
            "target_endian" => {
                if cfg!(target_endian = "little") {
                    "little"
                } else {
                    "big"
                }
            }
            _ => return Tri::Unknown,
        };
        Tri::from(host == value)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Unknown,
}

impl From<bool> for Tri {
    fn from(value: bool) -> Self {
        if value {
            Tri::True
        } else {
            Tri::False
        }
    }
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

/// Whether `predicate` (the inside of `cfg(…)`) is false for certain in every build
/// `--all-targets` makes (`test` on and off).
fn certainly_off(predicate: &str, facts: &Facts<'_>) -> bool {
    [false, true]
        .into_iter()
        .all(|test| evaluate(predicate, facts, test) == Some(Tri::False))
}

/// Evaluates a cfg predicate with an explicit stack (nesting is the input's to choose);
/// `None` when it does not parse.
fn evaluate(predicate: &str, facts: &Facts<'_>, test: bool) -> Option<Tri> {
    #[derive(Clone, Copy, PartialEq)]
    enum Op {
        All,
        Any,
        Not,
    }
    let tokens = tokenize(predicate)?;
    let mut frames: Vec<(Op, Vec<Tri>)> = Vec::new();
    let mut done: Vec<Tri> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let value = match &tokens[i] {
            Token::Ident(name) if tokens.get(i + 1) == Some(&Token::Open) => {
                let op = match name.as_str() {
                    "all" => Op::All,
                    "any" => Op::Any,
                    "not" => Op::Not,
                    _ => return None,
                };
                frames.push((op, Vec::new()));
                i += 2;
                continue;
            }
            Token::Ident(key) if tokens.get(i + 1) == Some(&Token::Eq) => {
                let Some(Token::Str(value)) = tokens.get(i + 2) else {
                    return None;
                };
                i += 3;
                facts.pair(key, value)
            }
            Token::Ident(name) => {
                i += 1;
                facts.name(name, test)
            }
            Token::Comma => {
                i += 1;
                continue;
            }
            Token::Close => {
                i += 1;
                let (op, values) = frames.pop()?;
                match op {
                    Op::Not => values.first().copied().unwrap_or(Tri::Unknown).not(),
                    Op::All if values.contains(&Tri::False) => Tri::False,
                    Op::All if values.contains(&Tri::Unknown) => Tri::Unknown,
                    Op::All => Tri::True,
                    Op::Any if values.contains(&Tri::True) => Tri::True,
                    Op::Any if values.contains(&Tri::Unknown) => Tri::Unknown,
                    Op::Any => Tri::False,
                }
            }
            Token::Open | Token::Eq | Token::Str(_) => return None,
        };
        match frames.last_mut() {
            Some((_, values)) => values.push(value),
            None => done.push(value),
        }
    }
    if !frames.is_empty() || done.len() != 1 {
        return None;
    }
    done.pop()
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Open,
    Close,
    Comma,
    Eq,
}

fn tokenize(text: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' => out.push(Token::Open),
            ')' => out.push(Token::Close),
            ',' => out.push(Token::Comma),
            '=' => out.push(Token::Eq),
            '"' => {
                let mut value = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => value.push(chars.next()?),
                        other => value.push(other),
                    }
                }
                out.push(Token::Str(value));
            }
            c if c.is_whitespace() => {}
            c if c.is_alphanumeric() || c == '_' => {
                let mut name = String::from(c);
                while let Some(&next) = chars.peek() {
                    if next.is_alphanumeric() || next == '_' || next == ':' {
                        name.push(next);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Token::Ident(name));
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The walk of one target's modules: the files reached, and the groups left off with why.
#[derive(Default)]
struct ModuleWalk {
    reached: Vec<PathBuf>,
    off: Vec<(Vec<PathBuf>, String)>,
}

/// One file's module facts: its own `#![cfg]` predicates, and its top-level `mod name;`
/// declarations with their `cfg` predicates and `#[path]`.
struct FileModules {
    inner_cfgs: Vec<String>,
    declarations: Vec<Declaration>,
}

struct Declaration {
    name: String,
    cfgs: Vec<String>,
    path: Option<String>,
    line: usize,
}

fn module_files(root: &Path, facts: &Facts<'_>) -> ModuleWalk {
    let mut walk = ModuleWalk::default();
    let mut seen = BTreeSet::new();
    // (file, is a folder owner (target root, mod.rs), left off because of this reason).
    let mut pending: Vec<(PathBuf, bool, Option<usize>)> = vec![(root.to_path_buf(), true, None)];
    while let Some((file, owner, off)) = pending.pop() {
        if seen.len() >= MAX_MODULE_FILES || !seen.insert(file.clone()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let modules = read_modules(&text);
        let mut off = off;
        if off.is_none() {
            if let Some(cfg) = modules.inner_cfgs.iter().find(|c| certainly_off(c, facts)) {
                walk.off.push((
                    Vec::new(),
                    format!(
                        "`#![cfg({cfg})]` in {} is off for `cargo check`",
                        shown(root, &file)
                    ),
                ));
                off = Some(walk.off.len() - 1);
            }
        }
        match off {
            Some(group) => walk.off[group].0.push(file.clone()),
            None => walk.reached.push(file.clone()),
        }
        let Some(dir) = module_folder(&file, owner) else {
            continue;
        };
        let base = file.parent().unwrap_or(Path::new("."));
        for declaration in modules.declarations {
            let child = match &declaration.path {
                Some(path) => base.join(path),
                None => {
                    let flat = dir.join(format!("{}.rs", declaration.name));
                    if flat.exists() {
                        flat
                    } else {
                        dir.join(&declaration.name).join("mod.rs")
                    }
                }
            };
            let owns = declaration.path.is_some() || child.ends_with("mod.rs");
            let mut child_off = off;
            if child_off.is_none() {
                if let Some(cfg) = declaration.cfgs.iter().find(|c| certainly_off(c, facts)) {
                    walk.off.push((
                        Vec::new(),
                        format!(
                            "`#[cfg({cfg})] mod {};` in {}:{} is off for `cargo check`",
                            declaration.name,
                            shown(root, &file),
                            declaration.line
                        ),
                    ));
                    child_off = Some(walk.off.len() - 1);
                }
            }
            pending.push((child, owns, child_off));
        }
    }
    walk.off.retain(|(files, _)| !files.is_empty());
    walk
}

/// Where `file`'s child modules live: beside it for a target root or `mod.rs`, else in the
/// folder named after it.
fn module_folder(file: &Path, owner: bool) -> Option<PathBuf> {
    let parent = file.parent()?;
    if owner || file.file_name().is_some_and(|n| n == "mod.rs") {
        return Some(parent.to_path_buf());
    }
    Some(parent.join(file.file_stem()?))
}

fn shown(root: &Path, file: &Path) -> String {
    let base = root
        .ancestors()
        .find(|d| d.join("Cargo.toml").is_file())
        .unwrap_or(root);
    file.strip_prefix(base)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Reads a file's inner `#![cfg(…)]` attributes and its top-level `mod name;` declarations.
fn read_modules(text: &str) -> FileModules {
    let mut inner_cfgs = Vec::new();
    let mut declarations = Vec::new();
    let mut attributes: Vec<String> = Vec::new();
    let mut open: Option<(String, usize)> = None;
    let mut in_items = false;
    for (index, line) in text.lines().enumerate() {
        if let Some((mut attribute, start)) = open.take() {
            attribute.push(' ');
            attribute.push_str(line.trim());
            if balanced(&attribute) {
                finish_attribute(attribute, &mut inner_cfgs, &mut attributes, in_items);
            } else {
                open = Some((attribute, start));
            }
            continue;
        }
        if line.starts_with(char::is_whitespace) || line.is_empty() {
            continue;
        }
        let trimmed = line.trim_end();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("#[") || trimmed.starts_with("#![") {
            if !trimmed.starts_with("#![") {
                in_items = true;
            }
            let attribute = trimmed.to_owned();
            if balanced(&attribute) {
                finish_attribute(attribute, &mut inner_cfgs, &mut attributes, in_items);
            } else {
                open = Some((attribute, index));
            }
            continue;
        }
        in_items = true;
        if let Some(name) = mod_declaration(trimmed) {
            let cfgs = attributes
                .iter()
                .filter_map(|a| cfg_of(a, "#[cfg("))
                .collect();
            let path = attributes.iter().find_map(|a| path_of(a));
            declarations.push(Declaration {
                name,
                cfgs,
                path,
                line: index + 1,
            });
        }
        attributes.clear();
    }
    FileModules {
        inner_cfgs,
        declarations,
    }
}

fn finish_attribute(
    attribute: String,
    inner_cfgs: &mut Vec<String>,
    attributes: &mut Vec<String>,
    in_items: bool,
) {
    if attribute.starts_with("#![") {
        if !in_items {
            inner_cfgs.extend(cfg_of(&attribute, "#![cfg("));
        }
    } else {
        attributes.push(attribute);
    }
}

fn balanced(text: &str) -> bool {
    let mut depth = 0i64;
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ => {}
        }
    }
    depth <= 0
}

/// `#[cfg(P)]` → `P` (a `cfg_attr` is not a `cfg`).
fn cfg_of(attribute: &str, prefix: &str) -> Option<String> {
    let rest = attribute.strip_prefix(prefix)?;
    let inner = rest.trim_end().strip_suffix(")]")?;
    // One line, as it would be written on one (`all( test, x )` → `all(test, x)`).
    let mut text = inner.split_whitespace().collect::<Vec<_>>().join(" ");
    for (from, to) in [("( ", "("), (" )", ")"), (", )", ")")] {
        text = text.replace(from, to);
    }
    Some(text)
}

fn path_of(attribute: &str) -> Option<String> {
    let rest = attribute
        .strip_prefix("#[path")?
        .trim_start()
        .strip_prefix('=')?;
    let value = rest.trim().strip_suffix(']')?.trim();
    Some(value.strip_prefix('"')?.strip_suffix('"')?.to_owned())
}

/// `mod name;` / `pub(crate) mod name;` → `name` (an inline `mod name {` has no file).
fn mod_declaration(line: &str) -> Option<String> {
    let mut rest = line;
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let rest = rest.strip_prefix("mod ")?.trim();
    let name = rest.strip_suffix(';')?.trim();
    let name = name.strip_prefix("r#").unwrap_or(name);
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn predicates_are_false_only_for_certain() {
        let features: BTreeSet<String> = ["std".to_owned()].into();
        let facts = Facts {
            features: &features,
            set_elsewhere: vec!["no_alloc".into()],
            any_set_elsewhere: false,
        };
        for (predicate, off) in [
            ("feature = \"serde\"", true),
            ("feature = \"std\"", false),
            ("not(feature = \"std\")", true),
            ("test", false),
            ("not(test)", false),
            ("all(test, feature = \"serde\")", true),
            ("any(test, feature = \"serde\")", false),
            ("miri", true),
            ("not(miri)", false),
            ("test_node_semver", true),
            ("no_alloc", false),
            ("not(no_alloc)", false),
            ("windows", cfg!(unix)),
            ("target_os = \"linux\"", std::env::consts::OS != "linux"),
            ("target_env = \"gnu\"", false),
            (
                "all(feature = \"std\", not(any(miri, feature = \"x\")))",
                false,
            ),
            ("all(", false),
        ] {
            assert_eq!(certainly_off(predicate, &facts), off, "{predicate}");
        }
    }

    #[test]
    fn the_command_line_says_which_features() {
        let args = |text: &str| text.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let choice = FeatureChoice::from_args(&args(
            "check --all-targets --features a,b -F c --features=d --no-default-features",
        ));
        assert_eq!(choice.named, ["a", "b", "c", "d"]);
        assert!(choice.no_default && !choice.all);
        assert!(FeatureChoice::from_args(&args("check --all-features")).all);
    }

    #[test]
    fn features_follow_default_and_optional_dependencies() {
        let manifest: toml::Table = r#"
[package]
name = "p"
[features]
default = ["std"]
std = ["alloc", "either/use_std"]
alloc = []
extra = ["dep:rayon"]
[dependencies]
either = "1"
serde = { version = "1", optional = true }
rayon = { version = "1", optional = true }
"#
        .parse()
        .unwrap();
        let on = enabled_features(&manifest, &FeatureChoice::default());
        assert_eq!(on, ["alloc", "default", "std"].map(str::to_owned).into());
        let all = enabled_features(
            &manifest,
            &FeatureChoice {
                all: true,
                ..FeatureChoice::default()
            },
        );
        assert!(all.contains("serde") && all.contains("extra") && !all.contains("rayon"));
        let named = enabled_features(
            &manifest,
            &FeatureChoice {
                no_default: true,
                named: vec!["serde".into()],
                ..FeatureChoice::default()
            },
        );
        assert_eq!(named, ["serde".to_owned()].into());
    }

    #[test]
    fn modules_and_targets_left_off_are_listed_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "Cargo.toml",
            "[package]\nname = \"p\"\n[features]\ndefault = []\nfast = []\n[dependencies]\nserde = { version = \"1\", optional = true }\n[[example]]\nname = \"demo\"\nrequired-features = [\"fast\"]\n",
        );
        write(
            root,
            "src/lib.rs",
            "//! Docs.\n#![cfg_attr(not(feature = \"std\"), no_std)]\n\nmod on;\n#[cfg(feature = \"serde\")]\nmod serde;\n#[cfg(all(\n    test,\n    feature = \"fast\"\n))]\npub(crate) mod fast;\n#[cfg(test)]\nmod tests;\nfn f() {\n    mod nested;\n}\n",
        );
        write(root, "src/on.rs", "mod deep;\n");
        write(root, "src/on/deep.rs", "");
        write(root, "src/serde.rs", "mod inner;\n");
        write(root, "src/serde/inner.rs", "");
        write(root, "src/fast/mod.rs", "");
        write(root, "src/tests.rs", "");
        write(
            root,
            "tests/gated.rs",
            "#![cfg(my_custom_cfg)]\nmod common;\n",
        );
        write(root, "tests/common/mod.rs", "");
        write(root, "tests/plain.rs", "#![cfg(not(miri))]\n");
        write(root, "examples/demo.rs", "");
        let left = cargo_left_out(root, &FeatureChoice::default());
        let by_file: BTreeMap<String, String> = left
            .iter()
            .flat_map(|l| {
                l.files.iter().map(move |f| {
                    (
                        f.strip_prefix(root).unwrap().display().to_string(),
                        l.reason.clone(),
                    )
                })
            })
            .collect();
        let files: Vec<&str> = by_file.keys().map(String::as_str).collect();
        assert_eq!(
            files,
            [
                "examples/demo.rs",
                "src/fast/mod.rs",
                "src/serde.rs",
                "src/serde/inner.rs",
                "tests/common/mod.rs",
                "tests/gated.rs"
            ]
        );
        assert!(
            by_file["src/serde.rs"]
                .starts_with("`#[cfg(feature = \"serde\")] mod serde;` in src/lib.rs:6 is off"),
            "{by_file:?}"
        );
        assert!(by_file["src/serde.rs"].ends_with("(no features on)"));
        assert!(
            by_file["src/fast/mod.rs"]
                .starts_with("`#[cfg(all(test, feature = \"fast\"))] mod fast;` in src/lib.rs:11"),
            "{by_file:?}"
        );
        assert!(by_file["tests/gated.rs"].starts_with("`#![cfg(my_custom_cfg)]` in tests/gated.rs"));
        assert!(by_file["examples/demo.rs"].contains("needs feature(s) `fast`"));

        // With the features on, nothing is left out but the custom cfg.
        let all = cargo_left_out(
            root,
            &FeatureChoice {
                all: true,
                ..FeatureChoice::default()
            },
        );
        let files: Vec<PathBuf> = all.iter().flat_map(|l| l.files.clone()).collect();
        assert_eq!(
            files,
            [
                root.join("tests/gated.rs"),
                root.join("tests/common/mod.rs")
            ]
        );

        // A build script that may set the cfg makes it unknown: not listed.
        write(
            root,
            "build.rs",
            "fn main() { println!(\"cargo:rustc-cfg=my_custom_cfg\"); }\n",
        );
        let left = cargo_left_out(
            root,
            &FeatureChoice {
                all: true,
                ..FeatureChoice::default()
            },
        );
        assert!(left.is_empty(), "{left:?}");
    }
}
