//! Turning the accepted parse into the pattern tree the matcher walks, and choosing the
//! literals of the pre-filter.

use super::{PChild, PNode, Source};
use crate::meta::{parse_metavar, MetaVar};
use crate::node::{Grammar, Node};

pub(super) struct Builder<'a> {
    pub(super) source: &'a Source<'a>,
    pub(super) grammar: &'a Grammar,
    /// Metavariable names in order of first appearance.
    pub(super) names: Vec<String>,
}

impl Builder<'_> {
    fn slot(&mut self, var: &MetaVar) -> Option<usize> {
        let name = var.name()?;
        Some(match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        })
    }

    /// Children that count: extras and missing nodes left out, except an `ERROR` that is
    /// exactly a metavariable.
    fn effective_children<'t>(&self, node: Node<'t>) -> Vec<(Node<'t>, u16)> {
        node.children()
            .into_iter()
            .filter(|c| !c.node.is_missing())
            .filter(|c| {
                !(c.node.is_extra() || c.node.is_error())
                    || (c.node.is_error() && self.source.metavar(&c.node).is_some())
            })
            // Nothing the user wrote: a missing token, or a `;` the ladder inserted.
            .filter(|c| !self.source.text(&c.node).is_empty())
            .map(|c| (c.node, c.field))
            .collect()
    }

    /// Whether the metavariable that is `node`'s whole text stands for `node` itself, or for
    /// its only child with the same text. It stands for the child when that child is a
    /// statement wrapper (`if $A: $B` wants one statement, not any block), and, for `$$$`,
    /// when `node` is a list container (Ruby's `body_statement` holds its statements
    /// directly, so `$$$B` is the run inside it).
    fn is_meta_level(&self, node: Node<'_>, text: &str, multi: bool) -> bool {
        if self.grammar.is_wrapper(&node) {
            return true;
        }
        match self.effective_children(node).as_slice() {
            [(only, _)] if self.source.text(only).trim() == text => {
                !(self.grammar.is_wrapper(only) || (multi && self.grammar.is_list_container(&node)))
            }
            _ => true,
        }
    }

    pub(super) fn convert(&mut self, node: Node<'_>, is_root: bool) -> PNode {
        let text = self.source.text(&node).trim();
        if node.is_named() || node.is_error() {
            if let Some(var) = parse_metavar(text, '$') {
                if is_root || self.is_meta_level(node, text, var.is_multi()) {
                    let multi = var.is_multi();
                    let slot = self.slot(&var);
                    return PNode::Meta { multi, slot };
                }
            }
            if let Some(string) = self.string_meta(node) {
                return string;
            }
            if node.kind().contains("string") && self.source.was_substituted(&node) {
                // Any other `$NAME` inside a string is literal text: compare the whole
                // string as written (bash's `"hello $USER"` is code only in the file).
                return PNode::Leaf {
                    kind: self.grammar.kind(&node),
                    named: true,
                    text: self.source.text(&node).as_bytes().into(),
                };
            }
        }
        let kind = self.grammar.kind(&node);
        let children = self.effective_children(node);
        if children.is_empty() {
            return PNode::Leaf {
                kind,
                named: node.is_named(),
                text: self.source.text(&node).as_bytes().into(),
            };
        }
        let mut fields = Vec::new();
        let mut kinds = Vec::new();
        let mut converted = Vec::with_capacity(children.len());
        for (child, field) in children {
            if field != 0 && !fields.contains(&field) {
                fields.push(field);
            }
            if child.is_named() {
                kinds.push(self.grammar.kind(&child));
            }
            let node = self.convert(child, false);
            let nullable = match &node {
                PNode::Internal { children, .. } => children.iter().all(|c| c.node.is_multi()),
                _ => false,
            };
            converted.push(PChild {
                named: child.is_named() || matches!(node, PNode::Meta { .. }),
                nullable,
                node,
            });
        }
        PNode::Internal {
            kind,
            children: converted,
            fields,
            kinds,
        }
    }

    /// Several statements (children `run` of `block`, both ends included): a pattern node of
    /// the block's kind holding their patterns, without the separators between them (a `;`
    /// or a line end, whichever the code has).
    pub(super) fn convert_run(&mut self, block: Node<'_>, (first, last): (usize, usize)) -> PNode {
        let kind = self.grammar.kind(&block);
        let children = block.children();
        let mut converted = Vec::new();
        for child in children.get(first..=last).unwrap_or(&[]) {
            let node = child.node;
            if !node.is_named() || node.is_extra() {
                continue;
            }
            let pattern = self.convert(node, false);
            converted.push(PChild {
                named: true,
                nullable: false,
                node: pattern,
            });
        }
        PNode::Internal {
            kind,
            children: converted,
            fields: Vec::new(),
            kinds: Vec::new(),
        }
    }

    /// `"$VAL"`: a string literal whose content between its delimiters is one metavariable.
    fn string_meta(&mut self, node: Node<'_>) -> Option<PNode> {
        if !node.kind().contains("string") || node.child_count() < 2 {
            return None;
        }
        let first = node.first_child()?;
        let last = node.last_child()?;
        if first.end() > last.start() {
            return None;
        }
        let start = self.source.original(first.end());
        let end = self.source.original(last.start());
        let content = self.source.fragment.get(start..end)?;
        let var = parse_metavar(content, '$')?;
        if var.is_multi() {
            return None;
        }
        let slot = self.slot(&var);
        Some(PNode::StringMeta {
            kind: self.grammar.kind(&node),
            slot,
        })
    }
}

/// Every token text the pattern spells that a match must contain, with whether it is named.
fn collect_literals(node: &PNode, out: &mut Vec<(bool, Vec<u8>)>) {
    match node {
        PNode::Leaf { named, text, .. } => out.push((*named, text.to_vec())),
        PNode::Internal { children, .. } => {
            for (index, child) in children.iter().enumerate() {
                if !may_be_absent(children, index) {
                    collect_literals(&child.node, out);
                }
            }
        }
        PNode::Meta { .. } | PNode::StringMeta { .. } => {}
    }
}

/// Whether the code may lack a token the pattern spells (see the matcher): a `;`, which a
/// line end may stand for, and a separator next to a `$$$` that takes its separator along
/// when it matches nothing (`f($A, $$$R)` matches `f(x)`).
fn may_be_absent(children: &[PChild], index: usize) -> bool {
    let node = &children[index].node;
    let multi = |at: Option<usize>| {
        at.and_then(|at| children.get(at))
            .is_some_and(|c| c.node.is_multi())
    };
    node.is_terminator()
        || (node.is_separator() && (multi(index.checked_sub(1)) || multi(Some(index + 1))))
}

/// The literals of the first root that every other root (another reading of the same
/// fragment) has too: a file must hold them whichever reading matches.
pub(super) fn common_literals(roots: &[PNode]) -> Vec<(bool, Vec<u8>)> {
    let mut each = roots.iter().map(|root| {
        let mut found = Vec::new();
        collect_literals(root, &mut found);
        found
    });
    let mut common = each.next().unwrap_or_default();
    for other in each {
        common.retain(|(_, text)| other.iter().any(|(_, t)| t == text));
    }
    common
}

/// Up to three distinct texts, named tokens (identifiers: rarer, so better filters) before
/// keywords and punctuation, longest first. Each must occur as a whole token.
pub(super) fn choose_literals(mut found: Vec<(bool, Vec<u8>)>) -> Vec<Vec<u8>> {
    found.retain(|(_, text)| !text.is_empty());
    found.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.len().cmp(&a.1.len())));
    let mut chosen: Vec<Vec<u8>> = Vec::new();
    for (_, text) in found {
        if chosen.len() == 3 {
            break;
        }
        if !chosen.contains(&text) {
            chosen.push(text);
        }
    }
    chosen
}
