//! The definition a place lies in (`in: {name, kind, line}` of a reference), found with the
//! file's own tree-sitter grammar — the parser set structural search uses — so that
//! "who uses this" is answered by the references call itself, grouped by caller.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::dependents::{definition_name, DEFINITION_KINDS};
use cc_structural::Languages;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The definition a place lies in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Enclosing {
    /// Its name.
    pub name: String,
    /// Its kind (`function`, `method`, `class`, …).
    pub kind: String,
    /// Its first line.
    pub line: usize,
}

/// Parsed files of one answer (each file parsed once).
#[derive(Debug, Default)]
pub struct Enclosings {
    files: HashMap<PathBuf, Option<(tree_sitter::Tree, Vec<u8>)>>,
}

/// A definition's kind as an agent names it.
fn kind_of(node_kind: &str, inside_type: bool) -> &'static str {
    match node_kind {
        k if k.contains("method") => "method",
        k if k.contains("class") => "class",
        k if k.contains("interface") => "interface",
        k if k.contains("trait") => "trait",
        k if k.contains("struct") => "struct",
        k if k.contains("enum") => "enum",
        k if k.contains("union") => "union",
        k if k.contains("mod") || k.contains("namespace") || k == "module" => "module",
        k if k.contains("type") => "type",
        k if k.contains("const") || k.contains("static") => "constant",
        "function_definition"
        | "function_declaration"
        | "function_item"
        | "function_signature"
        | "function_signature_item"
        | "generator_function_declaration"
        | "method" => {
            if inside_type {
                "method"
            } else {
                "function"
            }
        }
        k if k.contains("function") => "function",
        k if k.contains("macro") || k.starts_with("preproc") => "macro",
        _ => "variable",
    }
}

impl Enclosings {
    /// The innermost named definition that contains 1-based `line` of `path`, as `{name,
    /// kind, line}`; `None` at the top level or for a file without a grammar.
    pub fn at(&mut self, path: &Path, line: usize) -> Option<Enclosing> {
        let entry = self.files.entry(path.to_path_buf()).or_insert_with(|| {
            let language = Languages::builtin().for_path(path)?;
            let bytes = std::fs::read(path).ok()?;
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&language.grammar()).ok()?;
            let tree = parser.parse(&bytes, None)?;
            Some((tree, bytes))
        });
        let (tree, bytes) = entry.as_ref()?;
        let row = line.checked_sub(1)?;
        // The first non-blank column of the line: inside whatever the line belongs to.
        let text_line = bytes.split(|b| *b == b'\n').nth(row)?;
        let column = text_line
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(0);
        let point = tree_sitter::Point { row, column };
        let mut node = tree.root_node().descendant_for_point_range(point, point)?;
        // Up through the ancestors (bounded by the tree's depth).
        loop {
            // A C declaration the grammar misread (a macro such as `BROTLI_COMMON_API` before
            // it) names the wrong thing: no label rather than a wrong one.
            let misread =
                matches!(node.kind(), "declaration" | "field_declaration") && node.has_error();
            if !misread
                && DEFINITION_KINDS.contains(&node.kind())
                && node.start_position().row < row + 1
            {
                if let Some(name) = definition_name(node, bytes) {
                    let inside_type =
                        std::iter::successors(node.parent(), |n| n.parent()).any(|n| {
                            let k = n.kind();
                            k.contains("class") || k == "impl_item" || k.contains("interface")
                        });
                    let kind = if declares_function(node) {
                        "function"
                    } else {
                        kind_of(node.kind(), inside_type)
                    };
                    return Some(Enclosing {
                        name,
                        kind: kind.to_owned(),
                        line: node.start_position().row + 1,
                    });
                }
            }
            node = node.parent()?;
        }
    }
}

/// Whether a C/C++ `declaration` declares a function (a prototype), not a variable.
fn declares_function(node: tree_sitter::Node<'_>) -> bool {
    if node.kind() != "declaration" {
        return false;
    }
    let mut declarator = node.child_by_field_name("declarator");
    // `T *f(void)`: through pointer declarators (bounded by the declaration's own depth).
    while let Some(current) = declarator {
        match current.kind() {
            "function_declarator" => return true,
            "pointer_declarator" | "reference_declarator" => {
                declarator = current.child_by_field_name("declarator");
            }
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The definition around `line` of `path`, as its JSON.
    fn at(enclosing: &mut Enclosings, path: &Path, line: usize) -> Option<Value> {
        enclosing
            .at(path, line)
            .map(|e| serde_json::to_value(e).unwrap())
    }

    #[test]
    fn references_are_placed_in_their_definition() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(
            &path,
            "import os\n\nclass Session:\n    def send(self):\n        return helper()\n\n\ndef helper():\n    return 1\n\nhelper()\n",
        )
        .unwrap();
        let mut enclosing = Enclosings::default();
        assert_eq!(
            at(&mut enclosing, &path, 5),
            Some(json!({"name": "send", "kind": "method", "line": 4}))
        );
        assert_eq!(
            at(&mut enclosing, &path, 9),
            Some(json!({"name": "helper", "kind": "function", "line": 8}))
        );
        assert_eq!(at(&mut enclosing, &path, 11), None);
        let rust = dir.path().join("a.rs");
        std::fs::write(
            &rust,
            "struct S;\nimpl S {\n    fn go(&self) {\n        run();\n    }\n}\n",
        )
        .unwrap();
        assert_eq!(
            at(&mut enclosing, &rust, 4),
            Some(json!({"name": "go", "kind": "method", "line": 3}))
        );
        // A prototype is a function; one behind a macro the grammar misreads gets no label.
        let c = dir.path().join("a.h");
        std::fs::write(
            &c,
            "const T* GetT(void);
BROTLI_COMMON_API const BrotliTransforms* BrotliGetTransforms(void);
",
        )
        .unwrap();
        assert_eq!(
            at(&mut enclosing, &c, 1),
            Some(json!({"name": "GetT", "kind": "function", "line": 1}))
        );
        assert_eq!(at(&mut enclosing, &c, 2), None);
    }
}
