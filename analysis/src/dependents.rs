//! Which other files a write can break: the candidates whose diagnostics are collected with
//! the written file's (diagnostics on write).
//!
//! Cheap and per language, before any server is asked: the written file's definitions are
//! extracted with its own tree-sitter grammar before and after the change, and the names
//! whose definition changed (signature, fields, a module-level value; bodies of functions and
//! comments are left out, since callers do not see them) are looked for as whole words in the
//! files of the same project (a parallel-free walk with `ignore`, so `.gitignore` is honoured,
//! and `memchr` for the scan). A file that also names the written module (its import) ranks
//! higher; so does, in Go, a file of the same package. A file whose imports resolve to a
//! changed module ([`crate::importers`]) is a dependent even when it names nothing that
//! changed; minified, bundled and generated files never are. The list is bounded; what was
//! left out is counted, so a result can say how far it looked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cc_structural::Languages;
use memchr::memmem;

use crate::importers;
use crate::scan::{self, has_word};

/// One file of a write: where, and its text before and after (`None`: absent).
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    /// The file written.
    pub path: &'a Path,
    /// Its text before the write (`None`: it did not exist).
    pub old: Option<&'a str>,
    /// Its text after the write (`None`: it was deleted).
    pub new: Option<&'a str>,
}

/// What the scan found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// The candidates, most likely first, at most the limit.
    pub files: Vec<PathBuf>,
    /// Candidates beyond the limit.
    pub skipped: usize,
    /// The names whose definition changed.
    pub names: Vec<String>,
}

/// The dependents of `changes` among the files under `root` with one of `extensions`.
pub fn find(root: &Path, extensions: &[String], changes: &[Change<'_>], limit: usize) -> Found {
    let languages = Languages::builtin();
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut modules: BTreeSet<String> = BTreeSet::new();
    let mut package_dirs: BTreeSet<PathBuf> = BTreeSet::new();
    for change in changes {
        let changed = changed_names(&languages, change);
        if changed.is_empty() {
            continue;
        }
        names.extend(changed);
        if let Some(module) = module_name(change.path) {
            modules.insert(module);
        }
        if change.path.extension().is_some_and(|e| e == "go") {
            if let Some(dir) = change.path.parent() {
                package_dirs.insert(dir.to_path_buf());
            }
        }
    }
    let mut found = Found {
        names: names.iter().cloned().collect(),
        ..Found::default()
    };
    if names.is_empty() {
        return found;
    }
    let written: BTreeSet<&Path> = changes.iter().map(|c| c.path).collect();
    let finders: Vec<(String, memmem::Finder<'_>)> = names
        .iter()
        .map(|name| (name.clone(), memmem::Finder::new(name.as_bytes())))
        .collect();
    let module_finders: Vec<memmem::Finder<'_>> = modules
        .iter()
        .map(|m| memmem::Finder::new(m.as_bytes()))
        .collect();
    let mut scored: Vec<(usize, PathBuf)> = Vec::new();
    let out_dirs = importers::typescript_out_dirs(root);
    let changed_modules: Vec<&Path> = changes
        .iter()
        .filter(|c| !changed_names(&languages, c).is_empty())
        .map(|c| c.path)
        .collect();
    scan::walk_files(root, extensions, |path, bytes| {
        if written.contains(path)
            || !scan::can_refer(path, written.iter().copied())
            || importers::never_dependent(path, bytes, &out_dirs)
        {
            return true;
        }
        let hits = finders
            .iter()
            .filter(|(name, finder)| has_word(bytes, name.as_bytes(), finder))
            .count();
        if hits == 0 {
            // An importer of a changed module is a dependent even when it names nothing that
            // changed: a type it uses through the module may have.
            let text = String::from_utf8_lossy(bytes);
            if changed_modules
                .iter()
                .any(|module| importers::imports(path, &text, module, root))
            {
                scored.push((1, path.to_path_buf()));
            }
            return true;
        }
        let mut score = hits * 2;
        if module_finders
            .iter()
            .zip(&modules)
            .any(|(finder, module)| has_word(bytes, module.as_bytes(), finder))
        {
            score += 1;
        }
        if path.parent().is_some_and(|dir| package_dirs.contains(dir)) {
            score += 1;
        }
        scored.push((score, path.to_path_buf()));
        true
    });
    found.rank(scored, limit);
    found
}

impl Found {
    /// Keeps the `limit` best of `scored` (most likely first, a stable order among equals)
    /// and counts the rest.
    fn rank(&mut self, mut scored: Vec<(usize, PathBuf)>, limit: usize) {
        scored.sort_by(|(a, pa), (b, pb)| b.cmp(a).then_with(|| pa.cmp(pb)));
        self.skipped = scored.len().saturating_sub(limit);
        self.files = scored.into_iter().take(limit).map(|(_, p)| p).collect();
    }
}

/// The dependents of `changes` from the code graph (as it was before the write): the files
/// with an edge (a call or a type use) to a definition of a written file whose name
/// changed, then the files that import a written file; among the files under `root` with one
/// of `extensions`. The same bound and order (most edges first) as [`find`].
pub fn from_graph(
    graph: &cc_graph::Graph,
    root: &Path,
    extensions: &[String],
    changes: &[Change<'_>],
    limit: usize,
) -> Found {
    let languages = Languages::builtin();
    let base = graph.root().to_path_buf();
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut scores: BTreeMap<PathBuf, usize> = BTreeMap::new();
    let written: BTreeSet<&Path> = changes.iter().map(|c| c.path).collect();
    let out_dirs = importers::typescript_out_dirs(root);
    let note = |rel: &str, weight: usize, scores: &mut BTreeMap<PathBuf, usize>| {
        let path = base.join(rel);
        let covered = path.starts_with(root)
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| extensions.iter().any(|x| x == e));
        let head = read_head(&path);
        if covered
            && !written.contains(path.as_path())
            && !importers::never_dependent(&path, &head, &out_dirs)
        {
            *scores.entry(path).or_default() += weight;
        }
    };
    for change in changes {
        let changed = changed_names(&languages, change);
        if changed.is_empty() {
            continue;
        }
        let Some(rel) = change
            .path
            .strip_prefix(&base)
            .ok()
            .and_then(|p| p.to_str())
        else {
            continue;
        };
        let defs = graph.outline(rel).map(|a| a.value).unwrap_or_default();
        for def in defs.iter().filter(|d| changed.contains(&d.name)) {
            let Ok(impact) = graph.impact(def.id, 1, cc_graph::DEFAULT_MIN_CONFIDENCE) else {
                continue;
            };
            for user in &impact.value.dependents {
                note(&user.symbol.path, 2, &mut scores);
            }
            for (path, _) in &impact.value.top_level_uses {
                note(path, 2, &mut scores);
            }
        }
        for importer in graph.files_probing(rel).unwrap_or_default() {
            note(&importer, 1, &mut scores);
        }
        names.extend(changed);
    }
    let mut found = Found {
        names: names.into_iter().collect(),
        ..Found::default()
    };
    found.rank(scores.into_iter().map(|(p, n)| (n, p)).collect(), limit);
    found
}

/// The first kilobyte of a file (for a "generated" header).
fn read_head(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut head = vec![0; 1024];
    let read = std::fs::File::open(path)
        .and_then(|mut file| file.read(&mut head))
        .unwrap_or(0);
    head.truncate(read);
    head
}

/// How other files name the module of `path` in their imports: its file stem, or its
/// folder for a package's `__init__.py`, `index.ts`, `mod.rs`, `lib.rs`.
fn module_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let name = if matches!(stem, "__init__" | "index" | "mod" | "lib" | "main") {
        path.parent()?.file_name()?.to_str()?
    } else {
        stem
    };
    (name.len() >= 2).then(|| name.to_owned())
}

/// The names defined in `change.path` whose definition is not the same before and after.
fn changed_names(languages: &Languages, change: &Change<'_>) -> BTreeSet<String> {
    let Some(language) = languages.for_path(change.path) else {
        return BTreeSet::new();
    };
    let grammar = language.grammar();
    let before = change
        .old
        .map(|text| definitions(&grammar, text))
        .unwrap_or_default();
    let after = change
        .new
        .map(|text| definitions(&grammar, text))
        .unwrap_or_default();
    let mut changed = BTreeSet::new();
    for (name, shapes) in &before {
        if after.get(name) != Some(shapes) {
            changed.insert(name.clone());
        }
    }
    for name in after.keys() {
        if !before.contains_key(name) {
            changed.insert(name.clone());
        }
    }
    changed.retain(|name| name.len() >= 2);
    changed
}

/// Node kinds that define a name other files can use (across the table's grammars).
pub const DEFINITION_KINDS: &[&str] = &[
    // Python
    "function_definition",
    "class_definition",
    "decorated_definition",
    // Go
    "function_declaration",
    "method_declaration",
    "type_spec",
    "const_spec",
    "var_spec",
    // Rust
    "function_item",
    "function_signature_item",
    "struct_item",
    "enum_item",
    "union_item",
    "trait_item",
    "type_item",
    "const_item",
    "static_item",
    "mod_item",
    "macro_definition",
    // TypeScript / JavaScript
    "class_declaration",
    "abstract_class_declaration",
    "method_definition",
    "method_signature",
    "abstract_method_signature",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "function_signature",
    "generator_function_declaration",
    "variable_declarator",
    "public_field_definition",
    "property_signature",
    // C / C++
    "declaration",
    "struct_specifier",
    "union_specifier",
    "enum_specifier",
    "class_specifier",
    "type_definition",
    "preproc_def",
    "preproc_function_def",
    "namespace_definition",
    // Java / C# / Kotlin / Dart / Ruby (their `name` field)
    "method",
    "class",
    "module",
    "record_declaration",
    "constructor_declaration",
    "field_declaration",
    "property_declaration",
    "object_declaration",
    // PHP (besides the function, method, class and property kinds above)
    "trait_declaration",
    "const_element",
];

/// Function-like kinds: their bodies are not part of what callers see, and names defined
/// inside them are local.
const FUNCTION_KINDS: &[&str] = &[
    "function_definition",
    "function_declaration",
    "method_declaration",
    "function_item",
    "method_definition",
    "arrow_function",
    "function_expression",
    "function",
    "generator_function_declaration",
    "lambda",
    "method",
    "constructor_declaration",
    "func_literal",
    "closure_expression",
    "anonymous_function",
];

/// Each definition's name and its shapes (comment-free token text of what callers see), as a
/// multiset so that overloads and redefinitions compare as a whole.
pub fn definitions(grammar: &tree_sitter::Language, text: &str) -> BTreeMap<String, Vec<String>> {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(grammar).is_err() {
        return BTreeMap::new();
    }
    let Some(tree) = parser.parse(text, None) else {
        return BTreeMap::new();
    };
    let bytes = text.as_bytes();
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Iterative walk: (node, inside a function body).
    let mut stack = vec![(tree.root_node(), false)];
    while let Some((node, in_function)) = stack.pop() {
        let kind = node.kind();
        if !in_function && DEFINITION_KINDS.contains(&kind) {
            if let Some(name) = definition_name(node, bytes) {
                found.entry(name).or_default().push(shape(node, bytes));
            }
        }
        if !in_function && kind == "assignment" {
            // Python module- and class-level names.
            if let Some(left) = node
                .child_by_field_name("left")
                .filter(|l| l.kind() == "identifier")
            {
                if let Ok(name) = left.utf8_text(bytes) {
                    found
                        .entry(name.to_owned())
                        .or_default()
                        .push(shape(node, bytes));
                }
            }
        }
        let inner = in_function || FUNCTION_KINDS.contains(&kind);
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            stack.push((child, inner));
        }
    }
    for shapes in found.values_mut() {
        shapes.sort();
    }
    found
}

/// The identifier a definition node defines: its `name` field, or for C-like declarations
/// the innermost identifier of its `declarator` chain.
pub fn definition_name(node: tree_sitter::Node<'_>, bytes: &[u8]) -> Option<String> {
    if node.kind() == "decorated_definition" {
        return None; // its `definition` child is visited on its own
    }
    let mut current = node.child_by_field_name("name");
    if current.is_none() {
        let mut declarator = node.child_by_field_name("declarator");
        // Bounded by the tree's own (finite) nesting of declarators.
        while let Some(d) = declarator {
            match d.kind() {
                "identifier" | "field_identifier" | "type_identifier" | "primitive_type" => {
                    current = Some(d);
                    break;
                }
                _ => declarator = d.child_by_field_name("declarator"),
            }
        }
    }
    let name = current?.utf8_text(bytes).ok()?;
    let valid = name
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (valid && !name.is_empty()).then(|| name.to_owned())
}

/// The comment-free token text of `node`, without the bodies of functions.
fn shape(node: tree_sitter::Node<'_>, bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut stack = vec![node];
    while let Some(current) = stack.pop() {
        if current.kind().contains("comment") {
            continue;
        }
        if current.child_count() == 0 {
            if let Ok(token) = current.utf8_text(bytes) {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(token);
            }
            continue;
        }
        let body = FUNCTION_KINDS
            .contains(&current.kind())
            .then(|| current.child_by_field_name("body"))
            .flatten();
        let mut cursor = current.walk();
        let children: Vec<_> = current.children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            if body.is_some_and(|b| b.id() == child.id()) {
                continue;
            }
            stack.push(child);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str, old: &str, new: &str) -> Vec<String> {
        let change = Change {
            path: Path::new(path),
            old: Some(old),
            new: Some(new),
        };
        changed_names(&Languages::builtin(), &change)
            .into_iter()
            .collect()
    }

    #[test]
    fn a_php_signature_change_names_the_method_and_a_body_change_nothing() {
        let class = |params: &str, body: &str| {
            format!(
                "<?php\nnamespace A;\n\nclass OutputFormatter\n{{\n    public static function \
                 escape({params})\n    {{\n        {body}\n    }}\n}}\n"
            )
        };
        assert_eq!(
            names(
                "Formatter/OutputFormatter.php",
                &class("string $text", "return $text;"),
                &class("string $text, int $width", "return $text;")
            ),
            // The class's own shape holds its methods' signatures, as in every language.
            ["OutputFormatter", "escape"]
        );
        assert_eq!(
            names(
                "Formatter/OutputFormatter.php",
                &class("string $text", "return $text;"),
                &class("string $text", "return trim($text);")
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_signature_change_names_the_function() {
        assert_eq!(
            names(
                "a.go",
                "package p\nfunc readAsCSV(val string) ([]string, error) {\n\treturn nil, nil\n}\n",
                "package p\nfunc readAsCSV(val string, sep rune) ([]string, error) {\n\treturn nil, nil\n}\n"
            ),
            ["readAsCSV"]
        );
        assert_eq!(
            names(
                "a.py",
                "def fetch(a, b=1):\n    return a\n",
                "def fetch(a, b):\n    return a\n"
            ),
            ["fetch"]
        );
        assert_eq!(
            names(
                "a.rs",
                "pub fn parse(s: &str) -> u8 { 0 }\n",
                "pub fn parse(s: &str, strict: bool) -> u8 { 0 }\n"
            ),
            ["parse"]
        );
        assert_eq!(
            names(
                "a.h",
                "int cmark_node_new(int t);\n",
                "int cmark_node_make(int t);\n"
            ),
            ["cmark_node_make", "cmark_node_new"]
        );
    }

    #[test]
    fn comments_and_bodies_change_no_name() {
        assert!(names(
            "a.py",
            "def f(a):\n    # old note\n    return a\n",
            "def f(a):\n    # a better note\n    return a + 1\n"
        )
        .is_empty());
        assert!(names(
            "a.ts",
            "export function f(a: number): number {\n  return a; // x\n}\n",
            "export function f(a: number): number {\n  /* y */ return a * 2;\n}\n"
        )
        .is_empty());
    }

    #[test]
    fn module_level_values_and_class_members_count() {
        assert_eq!(names("a.py", "LIMIT = 1\n", "LIMIT = '1'\n"), ["LIMIT"]);
        assert_eq!(
            names(
                "a.ts",
                "export class Runner {\n  run(x: number): void {}\n}\n",
                "export class Runner {\n  run(x: string): void {}\n}\n"
            ),
            ["Runner", "run"]
        );
    }

    #[test]
    fn whole_words_only() {
        let finder = memmem::Finder::new(b"parse");
        // (scan's word test, as dependents use it)
        assert!(has_word(b"x = parse(y)", b"parse", &finder));
        assert!(!has_word(b"x = parser(y)", b"parse", &finder));
        assert!(!has_word(b"x = my_parse(y)", b"parse", &finder));
        assert!(has_word(b"parse", b"parse", &finder));
    }

    #[test]
    fn dependents_are_ranked_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("lib.go"), "package p\nfunc Helper(a int) {}\n").unwrap();
        std::fs::write(root.join("use1.go"), "package p\nfunc A() { Helper(1) }\n").unwrap();
        std::fs::write(root.join("use2.go"), "package p\nfunc B() { Helper(2) }\n").unwrap();
        std::fs::write(
            root.join("other.go"),
            "package p\nfunc C() { Helpers(2) }\n",
        )
        .unwrap();
        std::fs::write(root.join("notes.txt"), "Helper").unwrap();
        let old = "package p\nfunc Helper(a int) {}\n";
        let new = "package p\nfunc Helper(a, b int) {}\n";
        let change = Change {
            path: &root.join("lib.go"),
            old: Some(old),
            new: Some(new),
        };
        let extensions = vec!["go".to_owned()];
        let found = find(root, &extensions, &[change], 1);
        assert_eq!(found.names, ["Helper"]);
        assert_eq!(found.files, [root.join("use1.go")]);
        assert_eq!(found.skipped, 2);
        // A file of the same package is a dependent even when it names nothing that
        // changed; after the ones that do.
        let all = find(root, &extensions, &[change], 30);
        assert_eq!(
            all.files,
            [
                root.join("use1.go"),
                root.join("use2.go"),
                root.join("other.go")
            ]
        );
    }
}
