//! A file's outline as a tree: each definition under the nearest definition before it named as
//! its parent.
//!
//! ```
//! use cc_graph::views::outline;
//! use cc_graph::{Graph, GraphConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(
//!     dir.path().join("shapes.py"),
//!     "class Square:\n    def area(self):\n        return 4\n\ndef main():\n    pass\n",
//! )?;
//! let cache = tempfile::tempdir()?;
//! let config = GraphConfig { cache_dir: cache.path().into(), ..GraphConfig::default() };
//! let (graph, _stats) = Graph::open_with(dir.path(), config)?;
//!
//! let tree = outline::nest(&graph.outline("shapes.py")?.value);
//! let top: Vec<&str> = tree.iter().map(|n| n.symbol.name.as_str()).collect();
//! assert_eq!(top, ["Square", "main"]);
//! assert_eq!(tree[0].children[0].symbol.qualified_name, "Square.area");
//! # Ok(()) }
//! ```

use std::collections::HashMap;

use crate::query::Symbol;

/// A definition and the definitions nested in it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineNode {
    /// The definition.
    pub symbol: Symbol,
    /// Those nested in it, in file order.
    pub children: Vec<OutlineNode>,
}

/// The outline of `defs` (a file's definitions, outer before inner) as [`OutlineNode`]s.
pub fn nest(defs: &[Symbol]) -> Vec<OutlineNode> {
    nest_with(
        defs,
        |symbol| OutlineNode {
            symbol: symbol.clone(),
            children: Vec::new(),
        },
        |node| &mut node.children,
    )
}

/// The outline of `defs` as any tree: `node` makes a definition's node, `children` gives a
/// node's list of children. A definition goes under the nearest definition before it named as
/// its parent; one whose parent is elsewhere (or later in the file) is outermost. Without
/// recursion: walking backwards, every node's children are complete when it is reached.
pub fn nest_with<N>(
    defs: &[Symbol],
    node: impl FnMut(&Symbol) -> N,
    children: impl Fn(&mut N) -> &mut Vec<N>,
) -> Vec<N> {
    let mut latest: HashMap<&str, usize> = HashMap::new();
    let mut parent_of = Vec::with_capacity(defs.len());
    for (i, d) in defs.iter().enumerate() {
        parent_of.push(d.parent.as_deref().and_then(|p| latest.get(p).copied()));
        latest.insert(d.qualified_name.as_str(), i);
    }
    let mut nodes: Vec<N> = defs.iter().map(node).collect();
    let mut roots = Vec::new();
    while let Some(mut node) = nodes.pop() {
        children(&mut node).reverse();
        match parent_of[nodes.len()] {
            Some(p) => children(&mut nodes[p]).push(node),
            None => roots.push(node),
        }
    }
    roots.reverse();
    roots
}
