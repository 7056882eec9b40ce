//! Which node kinds may hold which, read from a grammar's `node-types.json`.
//!
//! A search for `def $F(…)` need not walk into an argument list: no Python expression can
//! hold a function definition. [`KindGraph::holders`] gives the kinds that may hold a target
//! at any depth, so a walk can step over every other subtree. Errors are the exception the
//! caller keeps: a subtree with a syntax error may hold anything.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

/// A kind: its name and whether it is named (`"if"` the keyword is not `if` the node).
pub type Kind<'a> = (&'a str, bool);

/// The child relation of one grammar's visible kinds.
#[derive(Debug, Default)]
pub struct KindGraph {
    /// Kind → the kinds that may be its direct parents (from the parents' fields and
    /// unnamed children, supertypes expanded to their subtypes).
    parents: HashMap<(String, bool), Vec<(String, bool)>>,
    /// Every kind the file describes.
    known: HashSet<(String, bool)>,
    /// The kind of a whole file's tree (`module`, `source_file`).
    root: String,
}

#[derive(Deserialize)]
struct NodeType {
    #[serde(rename = "type")]
    kind: String,
    named: bool,
    #[serde(default)]
    fields: HashMap<String, ChildTypes>,
    #[serde(default)]
    children: Option<ChildTypes>,
    #[serde(default)]
    subtypes: Vec<TypeRef>,
}

#[derive(Deserialize)]
struct ChildTypes {
    types: Vec<TypeRef>,
}

#[derive(Deserialize, Clone)]
struct TypeRef {
    #[serde(rename = "type")]
    kind: String,
    named: bool,
}

impl KindGraph {
    /// Reads a grammar's `node-types.json`; `root` is the kind of a whole file's tree.
    pub fn parse(node_types: &str, root: &str) -> Result<KindGraph, serde_json::Error> {
        let types: Vec<NodeType> = serde_json::from_str(node_types)?;
        let subtypes: HashMap<(String, bool), Vec<TypeRef>> = types
            .iter()
            .filter(|t| !t.subtypes.is_empty())
            .map(|t| ((t.kind.clone(), t.named), t.subtypes.clone()))
            .collect();
        // A supertype stands for each of its subtypes (which may be supertypes in turn); the
        // worklist keeps the expansion iterative whatever the grammar's nesting.
        let expand = |listed: &[TypeRef]| -> Vec<(String, bool)> {
            let mut out = Vec::new();
            let mut seen = HashSet::new();
            let mut work: Vec<(String, bool)> =
                listed.iter().map(|t| (t.kind.clone(), t.named)).collect();
            while let Some(kind) = work.pop() {
                if !seen.insert(kind.clone()) {
                    continue;
                }
                if let Some(subs) = subtypes.get(&kind) {
                    work.extend(subs.iter().map(|t| (t.kind.clone(), t.named)));
                }
                out.push(kind);
            }
            out
        };
        let mut graph = KindGraph {
            root: root.to_owned(),
            ..KindGraph::default()
        };
        for node in &types {
            let mut listed: Vec<TypeRef> = node
                .fields
                .values()
                .flat_map(|field| field.types.iter().cloned())
                .collect();
            if let Some(children) = &node.children {
                listed.extend(children.types.iter().cloned());
            }
            let parent = (node.kind.clone(), node.named);
            for child in expand(&listed) {
                graph.parents.entry(child).or_default().push(parent.clone());
            }
            graph.known.insert(parent);
        }
        Ok(graph)
    }

    /// The kinds that may hold a node of one of `targets` at any depth, or `None` when
    /// nothing can be stepped over: a target or holder is no kind's child and not the root
    /// (an extra, such as Rust's `line_comment` holding `doc_comment`, may sit anywhere), or
    /// is a comment (Dart lists comments as children, and they are extras too).
    pub fn holders(&self, targets: &[Kind<'_>]) -> Option<HashSet<(String, bool)>> {
        let mut holders: HashSet<(String, bool)> = HashSet::new();
        let mut work: Vec<(String, bool)> = targets
            .iter()
            .map(|&(name, named)| (name.to_owned(), named))
            .collect();
        while let Some(kind) = work.pop() {
            let parents = self.parents.get(&kind);
            if kind.0.contains("comment") || (kind.0 != self.root && parents.is_none()) {
                return None;
            }
            for parent in parents.into_iter().flatten() {
                if holders.insert(parent.clone()) {
                    work.push(parent.clone());
                }
            }
        }
        Some(holders)
    }

    /// Whether the file described `kind` (a kind it does not know may hold anything).
    pub fn knows(&self, kind: Kind<'_>) -> bool {
        self.known.contains(&(kind.0.to_owned(), kind.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_expressions_hold_no_definitions_and_blocks_do() {
        let graph = KindGraph::parse(tree_sitter_python::NODE_TYPES, "module").unwrap();
        let holders = graph.holders(&[("function_definition", true)]).unwrap();
        for kind in ["module", "block", "class_definition", "if_statement"] {
            assert!(holders.contains(&(kind.to_owned(), true)), "{kind}");
        }
        for kind in ["call", "argument_list", "binary_operator", "string"] {
            assert!(!holders.contains(&(kind.to_owned(), true)), "{kind}");
        }
        assert!(graph.knows(("call", true)));
    }

    #[test]
    fn a_target_listed_nowhere_steps_over_nothing() {
        let graph = KindGraph::parse(tree_sitter_python::NODE_TYPES, "module").unwrap();
        assert!(graph.holders(&[("comment", true)]).is_none());
        assert!(graph.holders(&[("line_continuation", true)]).is_none());
    }

    #[test]
    fn a_holder_that_is_an_extra_steps_over_nothing() {
        let graph = KindGraph::parse(tree_sitter_rust::NODE_TYPES, "source_file").unwrap();
        assert!(graph.holders(&[("doc_comment", true)]).is_none());
        assert!(graph.holders(&[("function_item", true)]).is_some());
    }
}

#[cfg(test)]
mod table_tests {
    #[test]
    fn every_grammar_describes_its_kinds() {
        for spec in crate::TABLE {
            let graph = spec.kind_graph().unwrap_or_else(|| panic!("{}", spec.name));
            assert!(!graph.parents.is_empty(), "{}", spec.name);
            assert!(graph.knows((graph.root.as_str(), true)), "{}", spec.name);
        }
    }
}
