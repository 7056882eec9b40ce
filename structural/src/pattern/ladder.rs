//! Whether a scaffold accepts the fragment: exactly one clean node.

use super::{Attempt, Source};
use crate::language::ContextKind;
use crate::node::{Grammar, Node};

fn rejection(problem: String, position: Option<(usize, usize)>) -> Attempt {
    Attempt {
        context: ContextKind::Statement,
        problem,
        line: position.map(|p| p.0),
        column: position.map(|p| p.1),
    }
}

/// What a scaffold read the fragment as: one node, or a run of its children (several
/// statements of one block).
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading<'t> {
    /// The node, or the block that holds the run.
    pub(super) node: Node<'t>,
    /// The run: the indices (among all of `node`'s children) of its first and last child.
    pub(super) run: Option<(usize, usize)>,
}

impl Reading<'_> {
    /// A list container holding several statements (Ruby's `body_statement` is exactly
    /// `x = 1\nreturn x` in a class body) is a run of them: it holds them directly, as a
    /// block does, so the run may be part of a longer one in the code.
    pub(super) fn in_lists(self, grammar: &Grammar) -> Self {
        let named = self
            .node
            .children()
            .iter()
            .filter(|c| c.node.is_named() && !c.node.is_extra())
            .count();
        if self.run.is_none() && named >= 2 && grammar.is_list_container(&self.node) {
            let last = self.node.child_count().saturating_sub(1);
            return Reading {
                run: Some((0, last)),
                ..self
            };
        }
        self
    }

    /// The node's kind, marked for a run (two readings of one kind are one reading).
    pub(super) fn kind(&self) -> String {
        match self.run {
            None => self.node.kind().to_owned(),
            Some(_) => format!("{} (run)", self.node.kind()),
        }
    }
}

/// The first and last of `node`'s children (indices) that start at `start` and end at
/// `end`, when there are at least two named ones from one to the other.
fn run_of(node: Node<'_>, start: usize, end: usize) -> Option<(usize, usize)> {
    let children = node.children();
    let first = children
        .iter()
        .position(|c| c.node.start() == start && !c.node.is_extra())?;
    let last = children
        .iter()
        .rposition(|c| c.node.end() == end && !c.node.is_extra())?;
    let named = children[first..=last]
        .iter()
        .filter(|c| c.node.is_named() && !c.node.is_extra())
        .count();
    (last > first && named >= 2).then_some((first, last))
}

/// The innermost node that is exactly the fragment, or the run of children of one node that
/// is (several statements), if the whole scaffold parsed cleanly. `lenient` also accepts an
/// `ERROR` node whose whole text is one metavariable.
pub(super) fn accept<'t>(
    source: &Source<'_>,
    root: Node<'t>,
    lenient: bool,
) -> Result<Reading<'t>, Attempt> {
    if let Some(bad) = first_problem(source, root, lenient) {
        return Err(bad);
    }
    // Comments around the code are not part of it (they never match code either).
    let (start, end) = code_span(
        root,
        source.start,
        source.start + source.substituted.text.len(),
    );
    let mut node = smallest_covering(root, start, end);
    let mut exact = node.start() == start && node.end() == end;
    if !exact && source.ends_with_semicolon() {
        // `private x = 1;` in a class body: the member is a node, its `;` a sibling token.
        let shorter = smallest_covering(root, start, end - 1);
        if shorter.start() == start && shorter.end() == end - 1 {
            node = shorter;
            exact = true;
        }
    }
    if exact && node.parent().is_none() && root.named_child_count() > 1 {
        // The file itself (two statements where the scaffold is the file): a run of its
        // statements, not a pattern of a whole file.
        if let Some(run) = run_of(node, start, end) {
            return Ok(Reading {
                node,
                run: Some(run),
            });
        }
        return Err(rejection(
            "the fragment spans several nodes, not one; search for one of them".to_owned(),
            Some(source.position(start)),
        ));
    }
    if !exact && node.start() <= start && node.end() >= end {
        // Several statements of one block.
        if let Some(run) = run_of(node, start, end) {
            return Ok(Reading {
                node,
                run: Some(run),
            });
        }
    }
    if !exact {
        let (line, column) = source.position(start.max(node.start()));
        let what = if node.start() < start || node.end() > end {
            format!(
                "the fragment is part of a larger `{}` here, not a node of its own",
                node.kind()
            )
        } else {
            "the fragment spans several nodes, not one".to_owned()
        };
        return Err(rejection(what, Some((line, column))));
    }
    Ok(Reading { node, run: None })
}

/// `start..end` without the comments at its ends: from the first token inside it that is
/// not a comment to the last.
fn code_span(root: Node<'_>, start: usize, end: usize) -> (usize, usize) {
    let mut span: Option<(usize, usize)> = None;
    for node in root.walk() {
        let leaf = node.child_count() == 0 && node.end() > node.start();
        if leaf && !node.is_extra() && start <= node.start() && node.end() <= end {
            let (s, e) = span.unwrap_or((node.start(), node.end()));
            span = Some((s.min(node.start()), e.max(node.end())));
        }
    }
    span.unwrap_or((start, end))
}

/// The smallest node containing `start..end`.
fn smallest_covering<'t>(root: Node<'t>, start: usize, end: usize) -> Node<'t> {
    let mut node = root;
    'descend: loop {
        for child in node.children() {
            let c = child.node;
            if c.start() <= start && c.end() >= end && !(c.start() == c.end() && start != end) {
                node = c;
                continue 'descend;
            }
        }
        return node;
    }
}

/// The first `ERROR` or missing node of the parse. Parts whose whole text is one metavariable
/// are skipped (and, when `lenient`, an `ERROR` that is one); a missing `;` right where the
/// fragment ends is tolerated.
fn first_problem(source: &Source<'_>, node: Node<'_>, lenient: bool) -> Option<Attempt> {
    if !node.has_error() {
        return None;
    }
    let in_fragment =
        node.start() >= source.start && node.end() <= source.start + source.substituted.text.len();
    if in_fragment && source.metavar(&node).is_some() && (lenient || !node.is_error()) {
        return None;
    }
    if node.is_missing() {
        let fragment_end = source.start + source.substituted.text.len();
        // Only the fragment's own terminator: a `;` missing inside it means the fragment was
        // read as something else (Dart's `{ $$$B }` as a set literal).
        let wraps_fragment = node
            .parent()
            .is_some_and(|p| p.start() <= source.start && p.end() >= fragment_end);
        // The parser may put it after the whitespace that follows the fragment.
        let right_after = node.start() >= fragment_end
            && source
                .full_between(fragment_end, node.start())
                .trim()
                .is_empty();
        if node.kind() == ";" && !node.is_named() && right_after && wraps_fragment {
            return None;
        }
        let position = source.position(node.start());
        return Some(rejection(
            format!("syntax error: a `{}` is missing", node.kind()),
            Some(position),
        ));
    }
    if node.is_error() {
        let position = source.position(node.start());
        let text: String = source.text(&node).chars().take(30).collect();
        let shown = if text.trim().is_empty() {
            String::new()
        } else {
            format!(" at `{}`", text.trim())
        };
        return Some(rejection(format!("syntax error{shown}"), Some(position)));
    }
    for child in node.children() {
        if let Some(problem) = first_problem(source, child.node, lenient) {
            return Some(problem);
        }
    }
    None
}
