//! The one place that touches tree-sitter nodes: a small node type for the matcher, and the
//! grammar facts (kind and field ids) a pattern resolves once.

use std::collections::HashMap;
use std::ops::Range;

use crate::language::Language;

/// A syntax node of a parsed file, as the matcher sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node<'t> {
    raw: tree_sitter::Node<'t>,
}

/// A child with the field it fills (0 when none).
#[derive(Debug, Clone, Copy)]
pub struct Child<'t> {
    /// The child.
    pub node: Node<'t>,
    /// Its field id, 0 for none.
    pub field: u16,
}

impl<'t> Node<'t> {
    pub(crate) fn new(raw: tree_sitter::Node<'t>) -> Self {
        Node { raw }
    }

    /// The grammar's kind id (not canonical: see [`Grammar::canonical`]).
    pub fn kind_id(&self) -> u16 {
        self.raw.kind_id()
    }

    /// The kind's name.
    pub fn kind(&self) -> &'t str {
        self.raw.kind()
    }

    /// Named nodes are the grammar's rules; unnamed ones are literal tokens.
    pub fn is_named(&self) -> bool {
        self.raw.is_named()
    }

    /// Comments and other extras.
    pub fn is_extra(&self) -> bool {
        self.raw.is_extra()
    }

    /// A node the parser invented to recover from an error.
    pub fn is_missing(&self) -> bool {
        self.raw.is_missing()
    }

    /// An `ERROR` node.
    pub fn is_error(&self) -> bool {
        self.raw.is_error()
    }

    /// Whether the subtree holds an `ERROR` or missing node.
    pub fn has_error(&self) -> bool {
        self.raw.has_error()
    }

    /// Its bytes in the source.
    pub fn range(&self) -> Range<usize> {
        self.raw.byte_range()
    }

    /// Start byte.
    pub fn start(&self) -> usize {
        self.raw.start_byte()
    }

    /// End byte.
    pub fn end(&self) -> usize {
        self.raw.end_byte()
    }

    /// 0-based (row, byte column) of the start.
    pub fn start_point(&self) -> (usize, usize) {
        let p = self.raw.start_position();
        (p.row, p.column)
    }

    /// 0-based (row, byte column) of the end.
    pub fn end_point(&self) -> (usize, usize) {
        let p = self.raw.end_position();
        (p.row, p.column)
    }

    /// How many children, named or not, extras included.
    pub fn child_count(&self) -> usize {
        self.raw.child_count() as usize
    }

    /// How many named children (extras included).
    pub fn named_child_count(&self) -> usize {
        self.raw.named_child_count()
    }

    /// Appends every child (with its field) to `out`.
    pub fn children_into(&self, out: &mut Vec<Child<'t>>) {
        let mut cursor = self.raw.walk();
        if cursor.goto_first_child() {
            loop {
                out.push(Child {
                    node: Node::new(cursor.node()),
                    field: cursor.field_id().map_or(0, |f| f.get()),
                });
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
    }

    /// Every child, for code that does not care about speed.
    pub fn children(&self) -> Vec<Child<'t>> {
        let mut out = Vec::with_capacity(self.child_count());
        self.children_into(&mut out);
        out
    }

    /// The first child, if any.
    pub fn first_child(&self) -> Option<Node<'t>> {
        self.raw.child(0).map(Node::new)
    }

    /// The last child, if any.
    pub fn last_child(&self) -> Option<Node<'t>> {
        let count = self.raw.child_count();
        count
            .checked_sub(1)
            .and_then(|last| self.raw.child(last))
            .map(Node::new)
    }

    /// The sibling before it, extras included.
    pub fn prev_sibling(&self) -> Option<Node<'t>> {
        self.raw.prev_sibling().map(Node::new)
    }

    /// The sibling after it, extras included.
    pub fn next_sibling(&self) -> Option<Node<'t>> {
        self.raw.next_sibling().map(Node::new)
    }

    /// Its parent.
    pub fn parent(&self) -> Option<Node<'t>> {
        self.raw.parent().map(Node::new)
    }

    /// From its first token that is not a comment to its last (a block's trailing comment
    /// left out); its range when it has none.
    pub fn code_span(&self) -> Range<usize> {
        let mut span: Option<Range<usize>> = None;
        let mut cursor = self.raw.walk();
        loop {
            let n = cursor.node();
            if n.child_count() == 0 && !n.is_extra() && n.end_byte() > n.start_byte() {
                span = Some(match span {
                    Some(s) => s.start.min(n.start_byte())..s.end.max(n.end_byte()),
                    None => n.byte_range(),
                });
            }
            if !n.is_extra() && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return span.unwrap_or_else(|| self.range());
                }
            }
        }
    }

    /// Every node of its subtree, itself first, in pre-order (no recursion).
    pub(crate) fn walk(&self) -> Walk<'t> {
        Walk::new(self.raw)
    }

    /// Appends the token leaves under this node (extras left out) to `out`, as byte ranges.
    pub fn tokens_into(&self, out: &mut Vec<Range<usize>>) {
        self.leaves_of(out, false);
    }

    /// Appends the token leaves under this node to `out`, those inside `ERROR` nodes too
    /// (comments left out), as byte ranges.
    pub(crate) fn leaves_into(&self, out: &mut Vec<Range<usize>>) {
        self.leaves_of(out, true);
    }

    fn leaves_of(&self, out: &mut Vec<Range<usize>>, errors: bool) {
        let mut cursor = self.raw.walk();
        let mut depth = 0usize;
        loop {
            let node = cursor.node();
            let skip = node.is_extra() && depth > 0 && !(errors && node.is_error());
            if !skip && node.child_count() == 0 {
                if node.end_byte() > node.start_byte() {
                    out.push(node.byte_range());
                }
            } else if !skip && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                cursor.goto_parent();
                depth -= 1;
            }
        }
    }
}

/// The depth of the deepest node of a tree (the root is 1), found without recursion;
/// stops counting past `stop_after`.
pub(crate) fn tree_depth(tree: &tree_sitter::Tree, stop_after: usize) -> usize {
    let mut cursor = tree.walk();
    let mut depth = 1;
    let mut deepest = 1;
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            deepest = deepest.max(depth);
            if deepest > stop_after {
                return deepest;
            }
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return deepest;
            }
            depth -= 1;
        }
    }
}

/// Pre-order walk over every node of a tree, without recursion.
pub(crate) struct Walk<'t> {
    cursor: tree_sitter::TreeCursor<'t>,
    /// Kind id → whether a node of that kind may hold what is searched for; `None`: every
    /// node is entered. A node with a syntax error below it is always entered.
    enter: Option<&'t [bool]>,
    done: bool,
    /// Depth of the node the cursor is on (the start node is 0).
    cursor_depth: usize,
    /// Depth of the node last returned.
    last: usize,
}

impl<'t> Walk<'t> {
    pub(crate) fn new(root: tree_sitter::Node<'t>) -> Self {
        Walk {
            cursor: root.walk(),
            enter: None,
            done: false,
            cursor_depth: 0,
            last: 0,
        }
    }

    /// A walk that steps over the subtrees `enter` rules out (see [`Walk::enter`]).
    pub(crate) fn entering(root: tree_sitter::Node<'t>, enter: Option<&'t [bool]>) -> Self {
        Walk {
            enter,
            ..Walk::new(root)
        }
    }

    fn may_enter(&self, node: &tree_sitter::Node<'_>) -> bool {
        match self.enter {
            None => true,
            Some(table) => {
                table.get(usize::from(node.kind_id())) != Some(&false) || node.has_error()
            }
        }
    }

    /// Depth of the node `next` returned last below the start node (which is 0).
    pub(crate) fn depth(&self) -> usize {
        self.last
    }
}

impl<'t> Iterator for Walk<'t> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        if self.done {
            return None;
        }
        let raw = self.cursor.node();
        let node = Node::new(raw);
        self.last = self.cursor_depth;
        if (self.cursor_depth == 0 || self.may_enter(&raw)) && self.cursor.goto_first_child() {
            self.cursor_depth += 1;
            return Some(node);
        }
        loop {
            if self.cursor.goto_next_sibling() {
                return Some(node);
            }
            if !self.cursor.goto_parent() {
                self.done = true;
                return Some(node);
            }
            self.cursor_depth = self.cursor_depth.saturating_sub(1);
        }
    }
}

/// A grammar's kind and field ids that a pattern needs, resolved from names once.
#[derive(Debug, Clone)]
pub(crate) struct Grammar {
    /// Kind id → the first id with the same name and namedness (aliases share a name but not
    /// an id).
    canonical: Vec<u16>,
    pub(crate) omittable_fields: Vec<u16>,
    pub(crate) omittable_kinds: Vec<u16>,
    /// `(parent kind, child kind)` pairs: see [`Language::omittable_children`].
    pub(crate) omittable_in: Vec<(u16, u16)>,
    pub(crate) omittable_containers: Vec<u16>,
    pub(crate) wrappers: Vec<u16>,
    pub(crate) list_containers: Vec<u16>,
    /// `(parent kind, token)` pairs: see [`Language::omittable_after_token`].
    pub(crate) omittable_after: Vec<(u16, Box<[u8]>)>,
    /// `(pattern kind, code kind)` pairs: see [`Language::equivalent_kinds`].
    equivalent: Vec<(u16, u16)>,
    error_kind: u16,
    /// The grammar's keywords: its unnamed tokens spelled like identifiers (`return`,
    /// `override`), sorted.
    keywords: Vec<Box<[u8]>>,
}

impl Grammar {
    pub(crate) fn new(language: &dyn Language, grammar: &tree_sitter::Language) -> Self {
        let count = grammar.node_kind_count();
        let mut canonical = Vec::with_capacity(count);
        let mut first: HashMap<(&str, bool), u16> = HashMap::new();
        for id in 0..count {
            let id = u16::try_from(id).unwrap_or(u16::MAX);
            let name = grammar.node_kind_for_id(id).unwrap_or("");
            let named = grammar.node_kind_is_named(id);
            canonical.push(*first.entry((name, named)).or_insert(id));
        }
        let kinds = |names: &[&str]| -> Vec<u16> {
            names
                .iter()
                .flat_map(|name| {
                    // Every id with that name: a kind may exist under several ids.
                    (0..count).filter_map(move |id| {
                        let id = u16::try_from(id).ok()?;
                        (grammar.node_kind_is_named(id)
                            && grammar.node_kind_for_id(id) == Some(*name))
                        .then_some(id)
                    })
                })
                .map(|id| canonical[usize::from(id)])
                .collect()
        };
        let omittable_kinds = kinds(language.omittable_kinds());
        let omittable_containers = kinds(language.omittable_containers());
        let omittable_in = language
            .omittable_children()
            .iter()
            .flat_map(|(parent, child)| {
                let children = kinds(&[child]);
                kinds(&[parent])
                    .into_iter()
                    .flat_map(move |p| children.clone().into_iter().map(move |c| (p, c)))
            })
            .collect();
        let wrappers = kinds(language.wrapper_kinds());
        let list_containers = kinds(language.list_containers());
        let omittable_fields = language
            .omittable_fields()
            .iter()
            .filter_map(|name| grammar.field_id_for_name(name))
            .map(|id| id.get())
            .collect();
        let omittable_after = language
            .omittable_after_token()
            .iter()
            .flat_map(|(parent, token)| {
                kinds(&[parent])
                    .into_iter()
                    .map(move |id| (id, token.as_bytes().into()))
            })
            .collect();
        let equivalent = language
            .equivalent_kinds()
            .iter()
            .flat_map(|(pattern, code)| {
                let codes = kinds(&[code]);
                kinds(&[pattern])
                    .into_iter()
                    .flat_map(move |p| codes.clone().into_iter().map(move |c| (p, c)))
            })
            .collect();
        let error_kind = u16::MAX;
        let mut keywords: Vec<Box<[u8]>> = (0..count)
            .filter_map(|id| {
                let id = u16::try_from(id).ok()?;
                let name = grammar.node_kind_for_id(id)?;
                let word = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                (word && !grammar.node_kind_is_named(id) && grammar.node_kind_is_visible(id))
                    .then(|| name.as_bytes().into())
            })
            .collect();
        keywords.sort();
        keywords.dedup();
        Grammar {
            canonical,
            omittable_fields,
            omittable_kinds,
            omittable_in,
            omittable_containers,
            wrappers,
            list_containers,
            omittable_after,
            equivalent,
            error_kind,
            keywords,
        }
    }

    /// Whether `text` is one of the grammar's keywords.
    pub(crate) fn is_keyword(&self, text: &[u8]) -> bool {
        self.keywords
            .binary_search_by(|k| k.as_ref().cmp(text))
            .is_ok()
    }

    /// The canonical kind of `node`.
    pub(crate) fn kind(&self, node: &Node<'_>) -> u16 {
        // `ERROR` is the one id past the grammar's kinds (tree-sitter's `(TSSymbol)-1`).
        self.canonical
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(self.error_kind)
    }

    /// Kind id → whether a node of that kind may hold a node of one of `kinds` (canonical
    /// pattern kinds, equivalents included), for [`Walk::entering`]; `None` when the
    /// language cannot say, and every node is entered.
    pub(crate) fn entry_table(
        &self,
        language: &dyn Language,
        kinds: &[u16],
    ) -> Option<Box<[bool]>> {
        let graph = language.kind_graph()?;
        let grammar = language.grammar();
        let name = |id: u16| {
            Some((
                grammar.node_kind_for_id(id)?,
                grammar.node_kind_is_named(id),
            ))
        };
        let mut targets = Vec::new();
        for &kind in kinds {
            targets.push(name(kind)?);
            for &(pattern, code) in &self.equivalent {
                if pattern == kind {
                    targets.push(name(code)?);
                }
            }
        }
        let holders = graph.holders(&targets)?;
        let table = (0..grammar.node_kind_count())
            .map(|id| {
                let Some((kind, named)) = u16::try_from(id).ok().and_then(name) else {
                    return true;
                };
                !graph.knows((kind, named)) || holders.contains(&(kind.to_owned(), named))
            })
            .collect();
        Some(table)
    }

    /// Whether code `node` is of the pattern's `kind` (or of one equivalent to it).
    pub(crate) fn kind_matches(&self, kind: u16, node: &Node<'_>) -> bool {
        let actual = self.kind(node);
        actual == kind
            || self
                .equivalent
                .iter()
                .any(|&(pattern, code)| pattern == kind && code == actual)
    }

    pub(crate) fn is_list_container(&self, node: &Node<'_>) -> bool {
        self.list_containers.contains(&self.kind(node))
    }

    pub(crate) fn is_wrapper(&self, node: &Node<'_>) -> bool {
        node.is_error() || self.wrappers.contains(&self.kind(node))
    }
}

/// An `ERROR` or missing node of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Its bytes (empty for a missing node).
    pub(crate) range: Range<usize>,
    /// 0-based row of its start.
    pub(crate) row: usize,
    /// The kind of a missing node (`;`, `}`); `None` for an `ERROR`.
    pub(crate) missing: Option<String>,
}

/// The `ERROR` and missing nodes of a tree (an `ERROR` once, whatever it holds), in order, at
/// most `limit` of them; only subtrees that hold an error are walked.
pub(crate) fn problems(tree: &tree_sitter::Tree, limit: usize) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    if !cursor.node().has_error() {
        return out;
    }
    loop {
        let node = cursor.node();
        let bad = node.is_error() || node.is_missing();
        if bad {
            out.push(Problem {
                range: node.byte_range(),
                row: node.start_position().row,
                missing: node.is_missing().then(|| node.kind().to_owned()),
            });
            if out.len() >= limit {
                return out;
            }
        }
        if !bad && node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}
