//! Each ecosystem's own rules for finding the file an import names:
//!
//! | language | rules |
//! |---|---|
//! | python | `a.b` from each source root (the folder above the file's top package, the root, `src/`) as `a/b.py` or `a/b/__init__.py`; relative imports from the file's package; `from pkg import sub` as a submodule |
//! | javascript, typescript | relative paths with the extensions `.ts .tsx .d.ts .js .jsx .mjs .cjs` and `index.*`, `.js` written for a `.ts` file; `tsconfig.json` `baseUrl` and `paths` |
//! | go | the module path from `go.mod` to a package folder |
//! | rust | `crate::`, `super::`, `self::`, the crate's own name (from `Cargo.toml`) through the `mod` tree (`a.rs` or `a/mod.rs`); `pub use` re-exports |
//! | c, cpp | `#include "…"` beside the file, in `compile_commands.json` include folders, from the root, else the workspace file whose path ends with it (the nearest of several) |
//! | java, kotlin | `import a.b.C` in the files declaring `package a.b` |
//! | c_sharp | `using A.B` in the files declaring `namespace A.B` |
//! | ruby | `require_relative` beside the file; `require` under `lib/` |
//! | dart | `package:NAME/…` in the package's `lib/` (from `pubspec.yaml`), relative paths |
//! | bash | `source`/`.` beside the file or from the root |

use cc_languages::{LanguageId, LanguageSpec};

use crate::model::Import;
use crate::project::{join, normalize};
use crate::table::{parent_dir, Backing, Deps, FileId, FileInfo, Table};

/// What an import's module is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportTarget {
    /// Files of the workspace (one module, or a package's files).
    Files(Vec<FileId>),
    /// Not in the workspace.
    External,
}

/// The name an import binds in the file.
pub fn binding(import: &Import, language: &LanguageSpec) -> Option<String> {
    if import.wildcard {
        return None;
    }
    if let Some(alias) = &import.alias {
        return Some(alias.clone());
    }
    if let Some(name) = &import.name {
        return Some(name.clone());
    }
    let module = import.module.as_str();
    match language.id {
        // `import a.b` binds `a`.
        LanguageId::Python => module.split('.').find(|s| !s.is_empty()).map(str::to_owned),
        // The package name: the last path segment without a major-version suffix.
        LanguageId::Go => {
            let mut segs = module.rsplit('/');
            let last = segs.next()?;
            let last = if last.len() > 1
                && last.starts_with('v')
                && last[1..].chars().all(|c| c.is_ascii_digit())
            {
                segs.next().unwrap_or(last)
            } else {
                last
            };
            // `yaml.v3` is package `yaml`.
            let last = match last.rsplit_once(".v") {
                Some((stem, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => stem,
                _ => last,
            };
            Some(last.trim_start_matches("go-").replace('-', "_"))
        }
        LanguageId::Java | LanguageId::Kotlin | LanguageId::Rust => module
            .rsplit(['.', ':'])
            .next()
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        // `use A\B\C;` binds `C`.
        LanguageId::Php => module
            .rsplit('\\')
            .next()
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        _ => None,
    }
}

/// The definition an import names inside its module, when it names one.
pub fn imported_name(import: &Import, language: &LanguageSpec) -> Option<String> {
    if import.wildcard {
        return None;
    }
    if let Some(name) = &import.name {
        return Some(name.clone());
    }
    match language.id {
        // `import a.b.C`: C in package a.b.
        LanguageId::Java | LanguageId::Kotlin => {
            import.module.rsplit('.').next().map(str::to_owned)
        }
        // `use A\B\C;`: C in namespace A\B.
        LanguageId::Php => import.module.rsplit('\\').next().map(str::to_owned),
        _ => None,
    }
}

/// Languages whose import statements make every name of the imported file visible.
pub fn imports_everything(language: &LanguageSpec) -> bool {
    crate::language::of(language).imports_everything
}

/// Languages where a wildcard import in a module re-exports what it brings
/// (`from .x import *` in `__init__.py`, `export * from`, `pub use a::*`).
pub fn reexports_wildcards(language: &LanguageSpec) -> bool {
    crate::language::of(language).reexports_wildcards
}

/// Languages whose includes bring what the included file includes too (a C header's
/// `#include "buffer.h"` makes `buffer.h`'s declarations visible to whoever includes it).
pub fn includes_are_transitive(language: &LanguageSpec) -> bool {
    crate::language::of(language).includes_are_transitive
}

fn first_existing<B: Backing>(
    table: &Table<B>,
    candidates: &[String],
    deps: &mut Deps,
) -> Option<FileId> {
    candidates.iter().find_map(|c| table.file_at(c, deps))
}

/// The module files of an import made in `from`.
pub fn module_files<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    import: &Import,
    deps: &mut Deps,
) -> ImportTarget {
    let found = match from.language.id {
        LanguageId::Python => python_module(table, from, &import.module, deps).map(|f| vec![f]),
        LanguageId::JavaScript | LanguageId::TypeScript | LanguageId::Tsx => {
            js_module(table, from, &import.module, deps).map(|f| vec![f])
        }
        LanguageId::Go => go_package(table, &import.module, deps),
        LanguageId::Rust => rust_module(table, from, &import.module, deps),
        LanguageId::C | LanguageId::Cpp => {
            c_include(table, from, &import.module, deps).map(|f| vec![f])
        }
        LanguageId::Java | LanguageId::Kotlin => {
            let package = if import.wildcard || import.name.is_some() {
                import.module.trim_end_matches(".*").to_owned()
            } else {
                import
                    .module
                    .rsplit_once('.')
                    .map_or(String::new(), |(p, _)| p.to_owned())
            };
            let files = table
                .files_in_package(from.language, &package, deps)
                .to_vec();
            (!files.is_empty()).then_some(files)
        }
        LanguageId::Php => {
            let module = import.module.trim_start_matches('\\');
            let namespace = module.rsplit_once('\\').map_or("", |(n, _)| n);
            let files = table
                .files_in_package(from.language, namespace, deps)
                .to_vec();
            (!files.is_empty()).then_some(files)
        }
        LanguageId::CSharp => {
            let files = table
                .files_in_package(from.language, &import.module, deps)
                .to_vec();
            (!files.is_empty()).then_some(files)
        }
        LanguageId::Ruby => ruby_require(table, from, import, deps).map(|f| vec![f]),
        LanguageId::Dart => dart_import(table, from, &import.module, deps).map(|f| vec![f]),
        LanguageId::Bash => {
            let candidates = [join(from.dir(), &import.module), normalize(&import.module)];
            first_existing(table, &candidates, deps).map(|f| vec![f])
        }
        _ => None,
    };
    match found {
        Some(files) if !files.is_empty() => ImportTarget::Files(files),
        _ => ImportTarget::External,
    }
}

/// `from MODULE import name` where `name` is a submodule of the package MODULE.
pub fn submodule<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    import: &Import,
    name: &str,
    deps: &mut Deps,
) -> ImportTarget {
    if from.language.id != LanguageId::Python {
        return ImportTarget::External;
    }
    match python_module(table, from, &import.module, deps) {
        Some(package) => match table.file(package) {
            Some(file) => submodule_of_file(table, &file.clone(), name, import, deps),
            None => ImportTarget::External,
        },
        None => ImportTarget::External,
    }
}

/// A submodule `name` of the Python package whose `__init__.py` is `package`.
pub fn submodule_of_file<B: Backing>(
    table: &Table<B>,
    package: &FileInfo,
    name: &str,
    _import: &Import,
    deps: &mut Deps,
) -> ImportTarget {
    if package.language.id != LanguageId::Python || !package.path.ends_with("__init__.py") {
        return ImportTarget::External;
    }
    let dir = package.dir();
    let candidates = [
        join(dir, &format!("{name}.py")),
        join(dir, &format!("{name}/__init__.py")),
    ];
    match first_existing(table, &candidates, deps) {
        Some(f) => ImportTarget::Files(vec![f]),
        None => ImportTarget::External,
    }
}

/// The folders a Python file's absolute imports start from: the folder above its top
/// package, the root and `src/`.
fn python_roots<B: Backing>(table: &Table<B>, from: &FileInfo, deps: &mut Deps) -> Vec<String> {
    let mut roots = Vec::new();
    let mut dir = from.dir().to_owned();
    loop {
        if dir.is_empty() || table.file_at(&join(&dir, "__init__.py"), deps).is_none() {
            break;
        }
        dir = parent_dir(&dir).to_owned();
    }
    roots.push(dir);
    for r in ["", "src"] {
        if !roots.iter().any(|x| x == r) {
            roots.push(r.to_owned());
        }
    }
    roots
}

fn python_module<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    module: &str,
    deps: &mut Deps,
) -> Option<FileId> {
    let dots = module.chars().take_while(|c| *c == '.').count();
    let rest = module[dots..].trim();
    let rel = rest.replace('.', "/");
    if dots > 0 {
        let mut dir = from.dir().to_owned();
        for _ in 1..dots {
            dir = parent_dir(&dir).to_owned();
        }
        let candidates = if rel.is_empty() {
            vec![join(&dir, "__init__.py")]
        } else {
            vec![
                join(&dir, &format!("{rel}.py")),
                join(&dir, &format!("{rel}/__init__.py")),
            ]
        };
        return first_existing(table, &candidates, deps);
    }
    if rel.is_empty() {
        return None;
    }
    for root in python_roots(table, from, deps) {
        let candidates = [
            join(&root, &format!("{rel}.py")),
            join(&root, &format!("{rel}/__init__.py")),
            join(&root, &format!("{rel}.pyi")),
        ];
        if let Some(f) = first_existing(table, &candidates, deps) {
            return Some(f);
        }
    }
    None
}

const JS_EXTENSIONS: &[&str] = &[
    ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts",
];

fn js_candidates(base: &str) -> Vec<String> {
    let mut out = Vec::new();
    // `./x.js` written for `./x.ts` (ESM TypeScript).
    let stems: Vec<String> = match base.rsplit_once('.') {
        Some((stem, ext)) if ["js", "mjs", "cjs", "jsx"].contains(&ext) && !stem.ends_with('/') => {
            vec![base.to_owned(), stem.to_owned()]
        }
        _ => vec![base.to_owned()],
    };
    for stem in stems {
        out.push(stem.clone());
        for ext in JS_EXTENSIONS {
            out.push(format!("{stem}{ext}"));
        }
        for ext in JS_EXTENSIONS {
            out.push(join(&stem, &format!("index{ext}")));
        }
    }
    out
}

fn js_module<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    module: &str,
    deps: &mut Deps,
) -> Option<FileId> {
    if module.starts_with('.') {
        let base = join(from.dir(), module);
        return first_existing(table, &js_candidates(&base), deps);
    }
    if module.starts_with('/') {
        return None;
    }
    // tsconfig: the nearest config above the file with paths or a baseUrl.
    let mut configs: Vec<&crate::project::TsConfig> = table
        .project
        .ts_configs
        .iter()
        .filter(|c| c.dir.is_empty() || from.path.starts_with(&format!("{}/", c.dir)))
        .collect();
    configs.sort_by_key(|c| std::cmp::Reverse(c.dir.len()));
    for config in configs {
        let base_dir = config
            .base_url
            .clone()
            .unwrap_or_else(|| config.dir.clone());
        for (pattern, targets) in &config.paths {
            let matched = match pattern.split_once('*') {
                Some((prefix, suffix)) => module
                    .strip_prefix(prefix)
                    .and_then(|m| m.strip_suffix(suffix))
                    .map(str::to_owned),
                None => (module == pattern).then(String::new),
            };
            if let Some(star) = matched {
                for target in targets {
                    let path = join(&base_dir, &target.replace('*', &star));
                    if let Some(f) = first_existing(table, &js_candidates(&path), deps) {
                        return Some(f);
                    }
                }
            }
        }
        if config.base_url.is_some() {
            let path = join(&base_dir, module);
            if let Some(f) = first_existing(table, &js_candidates(&path), deps) {
                return Some(f);
            }
        }
    }
    None
}

fn go_package<B: Backing>(table: &Table<B>, path: &str, deps: &mut Deps) -> Option<Vec<FileId>> {
    let module = table
        .project
        .go_modules
        .iter()
        .filter(|m| path == m.path || path.starts_with(&format!("{}/", m.path)))
        .max_by_key(|m| m.path.len())?;
    let rest = path[module.path.len()..].trim_start_matches('/');
    let dir = join(&module.dir, rest);
    let files: Vec<FileId> = table
        .files_in_dir(&dir, deps)
        .iter()
        .copied()
        .filter(|f| {
            table.file(*f).is_some_and(|i| {
                i.language.id == LanguageId::Go
                    && !i.path.ends_with("_test.go")
                    && !i.package.as_deref().is_some_and(|p| p.ends_with("_test"))
            })
        })
        .collect();
    Some(files)
}

/// The crate folder and `src` module path of a Rust file: (crate dir, module segments).
fn rust_module_of<B: Backing>(table: &Table<B>, file: &FileInfo) -> Option<(String, Vec<String>)> {
    let (_, crate_dir) = table
        .project
        .crates
        .iter()
        .filter(|(_, dir)| dir.is_empty() || file.path.starts_with(&format!("{dir}/")))
        .max_by_key(|(_, dir)| dir.len())?;
    let src = join(crate_dir, "src");
    let rel = file.path.strip_prefix(&format!("{src}/"))?;
    let rel = rel.strip_suffix(".rs")?;
    let mut segs: Vec<String> = rel.split('/').map(str::to_owned).collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    Some((crate_dir.clone(), segs))
}

/// The file of module `segs` of the crate in `crate_dir`.
fn rust_module_file<B: Backing>(
    table: &Table<B>,
    crate_dir: &str,
    segs: &[String],
    deps: &mut Deps,
) -> Option<FileId> {
    let src = join(crate_dir, "src");
    if segs.is_empty() {
        return first_existing(table, &[join(&src, "lib.rs"), join(&src, "main.rs")], deps);
    }
    let rel = segs.join("/");
    first_existing(
        table,
        &[
            join(&src, &format!("{rel}.rs")),
            join(&src, &format!("{rel}/mod.rs")),
        ],
        deps,
    )
}

/// The module a Rust path's first segment names: `crate`, `super`, `self`, or a crate of the
/// workspace by name.
pub fn rust_path_root<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    first: &str,
    deps: &mut Deps,
) -> Option<Vec<FileId>> {
    let here = rust_module_of(table, from);
    match first {
        "crate" => {
            let (dir, _) = here?;
            rust_module_file(table, &dir, &[], deps).map(|f| vec![f])
        }
        "super" => {
            let (dir, mut segs) = here?;
            segs.pop()?;
            rust_module_file(table, &dir, &segs, deps).map(|f| vec![f])
        }
        "self" => Some(vec![from.id]),
        name => {
            // A submodule of this module (`mod parse;` then `parse::helper()`), else a crate
            // of the workspace by name.
            if let Some((dir, mut segs)) = here {
                segs.push(name.to_owned());
                if let Some(f) = rust_module_file(table, &dir, &segs, deps) {
                    return Some(vec![f]);
                }
            }
            let (_, dir) = table.project.crates.iter().find(|(n, _)| n == name)?;
            rust_module_file(table, dir, &[], deps).map(|f| vec![f])
        }
    }
}

fn rust_module<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    module: &str,
    deps: &mut Deps,
) -> Option<Vec<FileId>> {
    let segs: Vec<String> = module
        .split("::")
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    let (first, rest) = segs.split_first()?;
    let here = rust_module_of(table, from);
    if first == "crate" && here.is_none() {
        // A test, bench or example is a crate root of its own: `crate::it::f` goes through
        // its `use itertools as it;`.
        let Some((alias, tail)) = rest.split_first() else {
            return Some(vec![from.id]);
        };
        let imports = table.imports_of(from.id, deps);
        let import = imports.iter().find(|i| {
            i.name.is_none() && i.alias.as_deref() == Some(alias) && !i.module.starts_with("crate")
        })?;
        let mut module = import.module.clone();
        for seg in tail {
            module.push_str("::");
            module.push_str(seg);
        }
        return rust_module(table, from, &module, deps);
    }
    let (crate_dir, mut path) = match first.as_str() {
        "crate" => (here?.0, Vec::new()),
        "self" => here?,
        "super" => {
            let (dir, mut s) = here?;
            s.pop()?;
            (dir, s)
        }
        name => match table.project.crates.iter().find(|(n, _)| n == name) {
            Some((_, dir)) => (dir.clone(), Vec::new()),
            None => {
                // 2018 paths: a module of this crate named without `crate::`.
                let (dir, _) = here?;
                let candidate = vec![name.to_owned()];
                rust_module_file(table, &dir, &candidate, deps)?;
                (dir, candidate)
            }
        },
    };
    for seg in rest {
        if seg == "super" {
            path.pop()?;
            continue;
        }
        let mut next = path.clone();
        next.push(seg.clone());
        if rust_module_file(table, &crate_dir, &next, deps).is_some() {
            path = next;
        } else {
            // An item path inside a file (`use a::Enum::Variant`): stop at the module.
            break;
        }
    }
    rust_module_file(table, &crate_dir, &path, deps).map(|f| vec![f])
}

/// C and C++: the files a file's own includes name, in include order (an include inside a
/// function counts too: it is visible from there on).
pub fn include_children<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    deps: &mut Deps,
) -> Vec<FileId> {
    let imports = table.imports_of(from.id, deps);
    let mut children = Vec::new();
    for import in imports.iter() {
        if let Some(file) = c_include(table, from, &import.module, deps) {
            if file != from.id {
                children.push(file);
            }
        }
    }
    children
}

fn c_include<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    header: &str,
    deps: &mut Deps,
) -> Option<FileId> {
    let mut candidates = vec![join(from.dir(), header)];
    for dir in &table.project.include_dirs {
        candidates.push(join(dir, header));
    }
    candidates.push(normalize(header));
    first_existing(table, &candidates, deps).or_else(|| header_by_suffix(table, from, header, deps))
}

/// The C and POSIX headers a system provides: a workspace file of the same name (a vendored
/// `string.h`) is not what `#include <string.h>` means.
const STANDARD_HEADERS: [&str; 32] = [
    "assert.h",
    "complex.h",
    "ctype.h",
    "errno.h",
    "fenv.h",
    "float.h",
    "inttypes.h",
    "limits.h",
    "locale.h",
    "math.h",
    "setjmp.h",
    "signal.h",
    "stdarg.h",
    "stdatomic.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "strings.h",
    "threads.h",
    "time.h",
    "uchar.h",
    "wchar.h",
    "wctype.h",
    "unistd.h",
    "fcntl.h",
    "pthread.h",
    "dirent.h",
    "sys/types.h",
    "sys/stat.h",
];

/// Without the build's include folders (no `compile_commands.json`, or a folder it does not
/// list), the workspace file whose path ends with the included one (`<html.h>` →
/// `third_party/cmark/src/html.h`, `<linux/slab.h>` → `include/linux/slab.h`): the only one,
/// else the one sharing the longest folder prefix with the including file, and among those
/// the shallowest (a tree's top `include/` before `tools/include/` and `tools/virtio/`, for a
/// driver that shares no folder with any); a tie left is no answer (two headers could be
/// meant).
fn header_by_suffix<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    header: &str,
    deps: &mut Deps,
) -> Option<FileId> {
    let wanted = normalize(header);
    if wanted.starts_with("..") || wanted.is_empty() || STANDARD_HEADERS.contains(&wanted.as_str())
    {
        return None;
    }
    let name = crate::table::file_name(&wanted);
    let suffix = format!("/{wanted}");
    let matching: Vec<(FileId, &str)> = table
        .files_named(name, deps)
        .iter()
        .filter_map(|id| table.file(*id).map(|f| (*id, f.path.as_str())))
        .filter(|(_, path)| *path == wanted || path.ends_with(&suffix))
        .collect();
    let shared = |path: &str| -> usize {
        path.split('/')
            .zip(from.path.split('/'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    match matching.as_slice() {
        [] => None,
        [(one, _)] => Some(*one),
        many => {
            let depth = |path: &str| path.split('/').count();
            let best = many.iter().map(|(_, p)| shared(p)).max()?;
            let nearest: Vec<&(FileId, &str)> =
                many.iter().filter(|(_, p)| shared(p) == best).collect();
            let shallowest = nearest.iter().map(|(_, p)| depth(p)).min()?;
            let mut chosen = nearest.iter().filter(|(_, p)| depth(p) == shallowest);
            let first = chosen.next()?;
            chosen.next().is_none().then_some(first.0)
        }
    }
}

fn ruby_require<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    import: &Import,
    deps: &mut Deps,
) -> Option<FileId> {
    let module = import.module.as_str();
    let with_ext = if module.ends_with(".rb") {
        module.to_owned()
    } else {
        format!("{module}.rb")
    };
    if import.name.as_deref() == Some("require_relative") || module.starts_with('.') {
        return first_existing(table, &[join(from.dir(), &with_ext)], deps);
    }
    let mut candidates = Vec::new();
    // Every `lib` folder above the file, then the root's.
    let mut dir = from.dir().to_owned();
    loop {
        if dir.rsplit('/').next() == Some("lib") {
            candidates.push(join(&dir, &with_ext));
        }
        if dir.is_empty() {
            break;
        }
        dir = parent_dir(&dir).to_owned();
    }
    candidates.push(join("lib", &with_ext));
    candidates.push(normalize(&with_ext));
    first_existing(table, &candidates, deps)
}

fn dart_import<B: Backing>(
    table: &Table<B>,
    from: &FileInfo,
    module: &str,
    deps: &mut Deps,
) -> Option<FileId> {
    if let Some(rest) = module.strip_prefix("package:") {
        let (package, path) = rest.split_once('/')?;
        let (_, dir) = table
            .project
            .dart_packages
            .iter()
            .find(|(n, _)| n == package)?;
        return first_existing(table, &[join(&join(dir, "lib"), path)], deps);
    }
    if module.starts_with("dart:") {
        return None;
    }
    first_existing(table, &[join(from.dir(), module)], deps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(module: &str) -> Import {
        Import {
            module: module.into(),
            name: None,
            alias: None,
            wildcard: false,
            line: 1,
            scope_lines: None,
        }
    }

    #[test]
    fn bindings_follow_each_language() {
        assert_eq!(
            binding(&import("os.path"), &cc_languages::PYTHON).as_deref(),
            Some("os")
        );
        assert_eq!(
            binding(&import("github.com/spf13/pflag"), &cc_languages::GO).as_deref(),
            Some("pflag")
        );
        assert_eq!(
            binding(&import("gopkg.in/yaml.v3"), &cc_languages::GO).as_deref(),
            Some("yaml")
        );
        assert_eq!(
            binding(
                &import("github.com/cpuguy83/go-md2man/v2"),
                &cc_languages::GO
            )
            .as_deref(),
            Some("md2man")
        );
        assert_eq!(
            binding(&import("a.b.C"), &cc_languages::JAVA).as_deref(),
            Some("C")
        );
    }

    #[test]
    fn js_candidates_cover_extensions_and_index_files() {
        let c = js_candidates("src/util.js");
        assert!(c.contains(&"src/util.ts".to_owned()));
        assert!(c.contains(&"src/util/index.ts".to_owned()));
    }
}
