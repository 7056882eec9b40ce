//! Which files import a written module, read from their import lines without the code graph:
//! such a file is a dependent of the write whether or not it names a changed symbol (a type it
//! uses through the module may have changed). And which files are never dependents: minified
//! and bundled output, and generated files.
//!
//! Per language, the import forms resolved to files:
//! - Python: `from .a.b import x`, `from . import b`, `from pkg.b import x`, `import pkg.b`
//!   (relative ones from the importer's folder; absolute ones by the module's dotted path);
//! - TypeScript / JavaScript: `import … from "./x"`, `export … from "../x"`, `require("./x")`,
//!   `import("./x")` (relative, with the `.js` → `.ts` mapping TypeScript applies, `index`
//!   files, and any extension); a bare specifier whose path ends with the module's
//!   (`@app/internal/types` for a path-mapped `internal/types`);
//! - Go: a file of the same package (folder), or one importing a path that ends with it;
//! - Rust: the `mod name;` that declares the module, and `use`/paths that name it
//!   (`crate::a::b`, `super::b`, or the crate's name for `lib.rs` from tests and benches);
//! - C / C++: `#include "…/name.h"` of a written header.

use std::path::{Component, Path, PathBuf};

/// Whether the file at `candidate` (with `text`) imports the module at `written`, inside the
/// project at `root`.
pub fn imports(candidate: &Path, text: &str, written: &Path, root: &Path) -> bool {
    let Some(extension) = written.extension().and_then(|e| e.to_str()) else {
        return false;
    };
    match extension {
        "py" | "pyi" => python(candidate, text, written, root),
        "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" => {
            javascript(candidate, text, written)
        }
        "go" => go(candidate, text, written, root),
        "rs" => rust(candidate, text, written, root),
        "h" | "hh" | "hpp" | "hxx" | "h++" => c_include(text, written),
        _ => false,
    }
}

/// Whether `path` is never a dependent of a source: minified or bundled output (`*.min.js`,
/// anything under a `dist/` folder or the tsconfig's `outDir`), or a generated file (a
/// "generated … do not edit" header).
pub fn never_dependent(path: &Path, head: &[u8], out_dirs: &[PathBuf]) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.contains(".min.") || name.ends_with(".bundle.js") {
        return true;
    }
    if path
        .components()
        .any(|c| matches!(c, Component::Normal(n) if n == "dist"))
    {
        return true;
    }
    if out_dirs.iter().any(|dir| path.starts_with(dir)) {
        return true;
    }
    generated_header(head)
}

/// A "generated" marker in the first lines (`@generated`, `Code generated … DO NOT EDIT`,
/// "automatically generated", "auto-generated … do not edit").
fn generated_header(head: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&head[..head.len().min(1024)]).to_ascii_lowercase();
    let first: String = head.lines().take(5).collect::<Vec<_>>().join("\n");
    first.contains("@generated")
        || (first.contains("generated") && first.contains("do not edit"))
        || first.contains("automatically generated")
}

/// The `compilerOptions.outDir` of the tsconfig in `root` (compiled output), when it has one.
pub fn typescript_out_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(root.join("tsconfig.json")) else {
        return Vec::new();
    };
    let stripped: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&stripped) else {
        return Vec::new();
    };
    value["compilerOptions"]["outDir"]
        .as_str()
        .map(|dir| vec![normalize(&root.join(dir))])
        .unwrap_or_default()
}

/// `path` with `.` and `..` folded, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The module's path without its extension (and without a trailing `/index`, `/__init__`).
fn stem_path(path: &Path) -> PathBuf {
    let mut stem = path.with_extension("");
    // `.d.ts`: drop the second extension too.
    if stem.extension().is_some_and(|e| e == "d") {
        stem = stem.with_extension("");
    }
    match stem.file_name().and_then(|n| n.to_str()) {
        Some("index" | "__init__" | "mod") => stem.parent().map(Path::to_path_buf).unwrap_or(stem),
        _ => stem,
    }
}

fn python(candidate: &Path, text: &str, written: &Path, root: &Path) -> bool {
    let target = stem_path(written);
    let Some(dir) = candidate.parent() else {
        return false;
    };
    for line in logical_lines(text) {
        let line = line.trim_start();
        let (module, names): (&str, Option<&str>) = if let Some(rest) = line.strip_prefix("from ") {
            let Some((module, names)) = rest.split_once(" import ") else {
                continue;
            };
            (module.trim(), Some(names))
        } else if let Some(rest) = line.strip_prefix("import ") {
            // `import a.b, c as d`: each is absolute.
            if rest
                .split(',')
                .map(|part| part.split(" as ").next().unwrap_or("").trim())
                .any(|module| absolute_python(module, &target, root))
            {
                return true;
            }
            continue;
        } else {
            continue;
        };
        let dots = module.chars().take_while(|c| *c == '.').count();
        if dots == 0 {
            if absolute_python(module, &target, root)
                || names.is_some_and(|names| {
                    name_list(names)
                        .any(|name| absolute_python(&format!("{module}.{name}"), &target, root))
                })
            {
                return true;
            }
            continue;
        }
        let mut base = dir.to_path_buf();
        for _ in 1..dots {
            base.pop();
        }
        let rest = &module[dots..];
        let resolved = rest
            .split('.')
            .filter(|p| !p.is_empty())
            .fold(base, |b, p| b.join(p));
        if resolved == target {
            return true;
        }
        // `from . import b` / `from .pkg import b`: a submodule named in the list.
        if let Some(names) = names {
            if name_list(names).any(|name| resolved.join(name) == target) {
                return true;
            }
        }
    }
    false
}

/// The names of an import list (`a, b as c`, `(a, b)`).
fn name_list(names: &str) -> impl Iterator<Item = &str> {
    names
        .split(',')
        .map(|part| {
            part.trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
                .split(" as ")
                .next()
                .unwrap_or("")
                .trim()
        })
        .filter(|name| !name.is_empty())
}

/// Whether the dotted `module` names the file at `target` (its path below some folder of the
/// project, as a package on the search path would: `src/pkg/mod.py` is `pkg.mod`).
fn absolute_python(module: &str, target: &Path, root: &Path) -> bool {
    if module.is_empty() {
        return false;
    }
    let relative: PathBuf = module.split('.').collect();
    target.starts_with(root) && target.ends_with(&relative)
}

/// Lines joined across parentheses (a multi-line `from x import (\n a,\n b\n)`).
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for line in text.lines() {
        let code = line.split('#').next().unwrap_or("");
        current.push_str(code);
        current.push(' ');
        for c in code.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        if depth == 0 {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The string literals after `from`, `import`, `require(` and `import(`.
fn js_specifiers(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for keyword in ["from", "import", "require(", "import("] {
        let mut rest = text;
        while let Some(at) = rest.find(keyword) {
            let after = &rest[at + keyword.len()..];
            let boundary_ok = rest[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '$');
            let trimmed = after.trim_start();
            if boundary_ok {
                if let Some(quote) = trimmed.chars().next().filter(|c| matches!(c, '"' | '\'')) {
                    let body = &trimmed[1..];
                    if let Some(end) = body.find(quote) {
                        out.push(&body[..end]);
                    }
                }
            }
            rest = after;
        }
    }
    out
}

fn javascript(candidate: &Path, text: &str, written: &Path) -> bool {
    let target = stem_path(written);
    let Some(dir) = candidate.parent() else {
        return false;
    };
    for specifier in js_specifiers(text) {
        if specifier.starts_with('.') {
            let joined = normalize(&dir.join(specifier));
            // `./x.js` names `x.ts` (TypeScript's mapping); `./x` any extension or index.
            let stem = match joined.extension().and_then(|e| e.to_str()) {
                Some("js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "mts" | "cts") => {
                    stem_path(&joined)
                }
                _ => joined.clone(),
            };
            if stem == target || joined == target {
                return true;
            }
        } else if specifier.contains('/') {
            // A path-mapped or package-relative specifier whose end is the module's path.
            let tail: PathBuf = specifier
                .split('/')
                .skip(1)
                .filter(|p| !p.is_empty())
                .collect();
            if tail.components().count() >= 2 && target.ends_with(&tail) {
                return true;
            }
        }
    }
    false
}

fn go(candidate: &Path, text: &str, written: &Path, root: &Path) -> bool {
    let Some(package) = written.parent() else {
        return false;
    };
    if candidate.parent() == Some(package) {
        return true;
    }
    let Ok(relative) = package.strip_prefix(root) else {
        return false;
    };
    if relative.as_os_str().is_empty() {
        return false;
    }
    let wanted = relative.to_string_lossy().replace('\\', "/");
    // Import paths are string literals ending with the package's folder.
    text.split('"')
        .skip(1)
        .step_by(2)
        .any(|literal| literal == wanted || literal.ends_with(&format!("/{wanted}")))
}

fn rust(candidate: &Path, text: &str, written: &Path, root: &Path) -> bool {
    let stem = written.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let is_crate_root = matches!(stem, "lib" | "main");
    if is_crate_root {
        // Tests, benches and examples reach the library through the crate's name.
        let crate_name = crate_name(root);
        return crate_name.is_some_and(|name| {
            let name = name.replace('-', "_");
            text.contains(&format!("{name}::")) || text.contains(&format!("use {name}"))
        });
    }
    let module = if stem == "mod" {
        written
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or("")
    } else {
        stem
    };
    if module.is_empty() {
        return false;
    }
    // The parent that declares it.
    if text.contains(&format!("mod {module};")) {
        return true;
    }
    // Paths naming it: `crate::…::module`, `super::module`, `self::module`.
    let path = module_path(written, root);
    if let Some(path) = &path {
        if text.contains(&format!("crate::{path}")) {
            return true;
        }
    }
    let same_folder = candidate.parent() == written.parent();
    same_folder
        && (text.contains(&format!("super::{module}")) || text.contains(&format!("self::{module}")))
        || text.contains(&format!("super::{module}::"))
}

/// `a::b` for `src/a/b.rs` (or `src/a/b/mod.rs`).
fn module_path(written: &Path, root: &Path) -> Option<String> {
    let relative = written.strip_prefix(root.join("src")).ok()?;
    let stem = stem_path(relative);
    let parts: Vec<String> = stem
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str().map(str::to_owned),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("::"))
}

/// The `[package] name` of the crate at `root`.
fn crate_name(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let table: toml::Table = text.parse().ok()?;
    table
        .get("package")?
        .get("name")?
        .as_str()
        .map(str::to_owned)
}

fn c_include(text: &str, written: &Path) -> bool {
    let Some(name) = written.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    text.lines().any(|line| {
        let line = line.trim_start();
        let Some(rest) = line
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|l| l.strip_prefix("include"))
        else {
            return false;
        };
        let rest = rest.trim();
        let included = rest.trim_matches(|c| c == '"' || c == '<' || c == '>');
        included == name || included.ends_with(&format!("/{name}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_resolves_its_imports() {
        let root = Path::new("/w");
        let py = |c: &str, text: &str, w: &str| imports(&root.join(c), text, &root.join(w), root);
        assert!(py(
            "src/pkg/a.py",
            "from .types import X\n",
            "src/pkg/types.py"
        ));
        assert!(py(
            "src/pkg/sub/a.py",
            "from ..types import X\n",
            "src/pkg/types.py"
        ));
        assert!(py(
            "src/pkg/a.py",
            "from . import types\n",
            "src/pkg/types.py"
        ));
        assert!(py(
            "tests/t.py",
            "from pkg.types import X\n",
            "src/pkg/types.py"
        ));
        assert!(py(
            "tests/t.py",
            "import pkg.types as t\n",
            "src/pkg/types.py"
        ));
        assert!(py(
            "tests/t.py",
            "from pkg import (\n    types,\n)\n",
            "src/pkg/types.py"
        ));
        assert!(py(
            "src/pkg/a.py",
            "from . import x\n",
            "src/pkg/__init__.py"
        ));
        assert!(!py(
            "src/pkg/a.py",
            "from .other import X\n",
            "src/pkg/types.py"
        ));

        let ts = |c: &str, text: &str, w: &str| imports(&root.join(c), text, &root.join(w), root);
        assert!(ts(
            "src/a/b.ts",
            "import { T } from '../internal/types';\n",
            "src/internal/types.ts"
        ));
        assert!(ts(
            "src/a.ts",
            "export * from \"./types.js\";\n",
            "src/types.ts"
        ));
        assert!(ts(
            "src/a.ts",
            "const t = require('./lib');\n",
            "src/lib/index.ts"
        ));
        assert!(ts(
            "src/a.ts",
            "import t from '@app/internal/types';\n",
            "src/internal/types.ts"
        ));
        assert!(!ts(
            "src/a.ts",
            "import x from './typesx';\n",
            "src/types.ts"
        ));

        assert!(imports(
            &root.join("p/b.go"),
            "package p\n",
            &root.join("p/a.go"),
            root
        ));
        assert!(imports(
            &root.join("cmd/main.go"),
            "import (\n\t\"example.com/m/p\"\n)\n",
            &root.join("p/a.go"),
            root
        ));

        assert!(imports(
            &root.join("src/lib.rs"),
            "mod eval;\n",
            &root.join("src/eval.rs"),
            root
        ));
        assert!(imports(
            &root.join("src/x.rs"),
            "use crate::impls::Y;\n",
            &root.join("src/impls.rs"),
            root
        ));

        assert!(imports(
            &root.join("src/blocks.c"),
            "#include \"houdini.h\"\n",
            &root.join("src/houdini.h"),
            root
        ));
        assert!(!imports(
            &root.join("src/blocks.c"),
            "#include \"houdini_x.h\"\n",
            &root.join("src/houdini.h"),
            root
        ));
    }

    #[test]
    fn bundles_and_generated_files_are_never_dependents() {
        let none: &[PathBuf] = &[];
        assert!(never_dependent(
            Path::new("/w/dist/bundles/rxjs.umd.min.js"),
            b"",
            none
        ));
        assert!(never_dependent(Path::new("/w/lib/x.min.js"), b"", none));
        assert!(never_dependent(
            Path::new("/w/out/a.js"),
            b"",
            &[PathBuf::from("/w/out")]
        ));
        assert!(never_dependent(
            Path::new("/w/gen.go"),
            b"// Code generated by stringer. DO NOT EDIT.\npackage p\n",
            none
        ));
        assert!(!never_dependent(
            Path::new("/w/src/a.ts"),
            b"export const a = 1;\n",
            none
        ));
    }
}
