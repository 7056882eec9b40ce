//! Matching a compiled pattern against code, through [`Node`] only.
//!
//! The rules (see the crate docs for examples):
//! - a node matches when its kind matches and its children match as a sequence: every named
//!   child of the code must be matched, except one in an omittable part (return type, type
//!   parameters, decorators/annotations, `else`/`elif`) that the pattern's node leaves out
//!   entirely; those are recorded as omitted;
//! - unnamed tokens and comments in the code are skipped where the pattern does not spell them;
//!   unnamed tokens the pattern spells must be there, except a statement terminator `;`, which
//!   may be a line end in the code (bash, JavaScript's automatic semicolons);
//! - `$$$` takes the shortest run that lets the rest match, backtracking within a budget; a
//!   zero-length `$$$` takes its adjacent separator (`,` or `;`) with it;
//! - a repeated metavariable must capture the same tokens (whitespace and comments aside).

use std::ops::Range;

use crate::node::{Grammar, Node};
use crate::pattern::{PChild, PNode, Pattern};

/// Sequence steps one candidate may take before it is given up as not matching.
const STEP_BUDGET: u32 = 200_000;

/// Something that decides whether a node matches, binding metavariables as it goes.
pub trait Matcher {
    /// Matches `node` of a file whose bytes are `source`; bindings land in `env`.
    fn match_node<'t>(&self, node: Node<'t>, source: &[u8], env: &mut Env<'t>) -> bool;

    /// Whether `node` could match at all (a kind check); `true` when unknown.
    fn may_match_kind(&self, node: &Node<'_>) -> bool {
        let _ = node;
        true
    }
}

/// What one metavariable bound.
#[derive(Debug, Clone)]
pub(crate) enum Bound<'t> {
    One(Node<'t>),
    /// A run of siblings, unnamed separators included.
    Run(Vec<Node<'t>>),
    /// The content of a string literal.
    Text(Range<usize>),
}

/// Bindings and omissions of one match attempt.
#[derive(Debug, Default)]
pub struct Env<'t> {
    slots: Vec<(usize, Bound<'t>)>,
    omitted: Vec<Range<usize>>,
    steps: u32,
    exhausted: bool,
    /// Matching a run of statements: where in the block's children the run ended.
    run_end: usize,
}

impl<'t> Env<'t> {
    /// A fresh environment.
    pub fn new() -> Self {
        Env::default()
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.omitted.clear();
        self.steps = 0;
        self.exhausted = false;
        self.run_end = 0;
    }

    fn mark(&self) -> (usize, usize) {
        (self.slots.len(), self.omitted.len())
    }

    fn reset(&mut self, mark: (usize, usize)) {
        self.slots.truncate(mark.0);
        self.omitted.truncate(mark.1);
    }

    pub(crate) fn get(&self, slot: usize) -> Option<&Bound<'t>> {
        self.slots.iter().find(|(s, _)| *s == slot).map(|(_, b)| b)
    }

    /// Whether the last attempt ran out of backtracking budget.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Byte ranges of code the match skipped as omitted optional parts.
    pub fn omitted(&self) -> &[Range<usize>] {
        &self.omitted
    }
}

#[derive(Debug, Clone, Copy)]
struct CChild<'t> {
    node: Node<'t>,
    named: bool,
}

struct Ctx<'a, 't> {
    grammar: &'a Grammar,
    source: &'a [u8],
    env: &'a mut Env<'t>,
    /// The sequence being matched is a run of a block's statements: code children may
    /// follow the last one it names (the run's end is kept in `Env::run_end`).
    open_end: bool,
}

impl Matcher for Pattern {
    fn match_node<'t>(&self, node: Node<'t>, source: &[u8], env: &mut Env<'t>) -> bool {
        self.roots().any(|root| {
            env.clear();
            let mut ctx = Ctx {
                grammar: &self.grammar,
                source,
                env: &mut *env,
                open_end: false,
            };
            ctx.node(root, node)
        })
    }

    fn may_match_kind(&self, node: &Node<'_>) -> bool {
        self.roots().any(|root| match root {
            PNode::Meta { .. } => node.is_named() && !node.is_extra(),
            PNode::StringMeta { kind, .. }
            | PNode::Leaf { kind, .. }
            | PNode::Internal { kind, .. } => self.grammar.kind_matches(*kind, node),
        })
    }
}

impl Pattern {
    /// The pattern's reading of the fragment, then its alternates.
    fn roots(&self) -> impl Iterator<Item = &PNode> {
        std::iter::once(&self.root).chain(&self.alternates)
    }

    /// For a pattern of several statements: each run of `block`'s children that it matches,
    /// first to last, not overlapping, handed to `found` with the run's first and last node
    /// and the bindings; how many starts ran out of backtracking budget.
    pub(crate) fn match_runs<'t>(
        &self,
        block: Node<'t>,
        source: &[u8],
        env: &mut Env<'t>,
        found: &mut dyn FnMut(Node<'t>, Node<'t>, &Env<'t>),
    ) -> usize {
        let PNode::Internal { children, .. } = &self.root else {
            return 0;
        };
        let Some(first) = children.first() else {
            return 0;
        };
        let mut all = Vec::with_capacity(block.child_count());
        block.children_into(&mut all);
        let cs: Vec<CChild<'t>> = all
            .iter()
            .map(|c| c.node)
            .filter(|n| !((n.is_extra() && !n.is_error()) || n.is_missing()))
            .map(|node| CChild {
                node,
                named: node.is_named(),
            })
            .collect();
        if cs.iter().filter(|c| c.named).count() < children.len() {
            return 0;
        }
        let mut exhausted = 0;
        let mut k = 0;
        let mut relabeled: Vec<CChild<'t>> = Vec::new();
        while k < cs.len() {
            // A run may begin at a labeled statement (`error: kfree(p); p = NULL;`): it
            // starts at the statement under the label, which stays outside the match.
            let start = unlabeled(cs[k].node);
            if !cs[k].named || !may_start(&self.grammar, &first.node, &start) {
                k += 1;
                continue;
            }
            let run: &[CChild<'t>] = if start == cs[k].node {
                &cs
            } else {
                relabeled.clone_from(&cs);
                relabeled[k].node = start;
                &relabeled
            };
            env.clear();
            let mut ctx = Ctx {
                grammar: &self.grammar,
                source,
                env: &mut *env,
                open_end: true,
            };
            if ctx.seq(children, 0, run, k) {
                let end = env.run_end.clamp(k + 1, run.len());
                let last = run[k..end]
                    .iter()
                    .rev()
                    .find(|c| c.named)
                    .map_or(start, |c| c.node);
                found(start, last, env);
                k = end;
            } else {
                if env.exhausted {
                    exhausted += 1;
                }
                k += 1;
            }
        }
        exhausted
    }
}

/// The statement under a statement's labels (`out: err: kfree(p);` → `kfree(p);`), or the
/// statement itself. Every grammar with labels names that node `labeled_statement`, with the
/// statement as its last named child (Go's may have none).
fn unlabeled(mut node: Node<'_>) -> Node<'_> {
    while node.kind() == "labeled_statement" {
        let code: Vec<Node<'_>> = node
            .children()
            .into_iter()
            .map(|c| c.node)
            .filter(|n| n.is_named() && !n.is_extra())
            .collect();
        match code.as_slice() {
            [_label, .., statement] => node = *statement,
            _ => break,
        }
    }
    node
}

/// Whether a code node may be where the pattern `first` matches (a kind check).
fn may_start(grammar: &Grammar, first: &PNode, node: &Node<'_>) -> bool {
    match first {
        PNode::Meta { .. } => !node.is_extra(),
        PNode::StringMeta { kind, .. }
        | PNode::Leaf { kind, .. }
        | PNode::Internal { kind, .. } => grammar.kind_matches(*kind, node),
    }
}

impl<'t> Ctx<'_, 't> {
    fn text(&self, range: Range<usize>) -> &[u8] {
        self.source.get(range).unwrap_or(&[])
    }

    fn tick(&mut self) -> bool {
        self.env.steps += 1;
        if self.env.steps > STEP_BUDGET {
            self.env.exhausted = true;
        }
        !self.env.exhausted
    }

    fn node(&mut self, pattern: &PNode, node: Node<'t>) -> bool {
        match pattern {
            PNode::Meta { slot, .. } => {
                node.is_named() && !node.is_extra() && self.bind(*slot, Bound::One(node))
            }
            PNode::StringMeta { kind, slot } => {
                if !self.grammar.kind_matches(*kind, &node) || node.child_count() < 2 {
                    return false;
                }
                let (Some(first), Some(last)) = (node.first_child(), node.last_child()) else {
                    return false;
                };
                if first.end() > last.start() {
                    return false;
                }
                self.bind(*slot, Bound::Text(first.end()..last.start()))
            }
            PNode::Leaf { kind, text, .. } => self.leaf_eq(*kind, text, node),
            PNode::Internal {
                kind,
                children,
                fields,
                kinds,
            } => {
                if !self.grammar.kind_matches(*kind, &node) {
                    return false;
                }
                let mark = self.env.mark();
                let code = self.code_children(node, children, fields, kinds);
                // A node's children are all of it, even inside a run of statements.
                let open = std::mem::replace(&mut self.open_end, false);
                let ok = self.seq(children, 0, &code, 0);
                self.open_end = open;
                if !ok {
                    self.env.reset(mark);
                }
                ok
            }
        }
    }

    /// The code node's children that the pattern must account for.
    fn code_children(
        &mut self,
        node: Node<'t>,
        pattern: &[PChild],
        fields: &[u16],
        kinds: &[u16],
    ) -> Vec<CChild<'t>> {
        let mut all = Vec::with_capacity(node.child_count());
        node.children_into(&mut all);
        let g = self.grammar;
        let parent = g.kind(&node);
        let mut out = Vec::with_capacity(all.len());
        let mut previous: Option<Node<'t>> = None;
        for child in all {
            let n = child.node;
            if (n.is_extra() && !n.is_error()) || n.is_missing() {
                continue;
            }
            let after_token = previous.filter(|p| !p.is_named()).is_some_and(|token| {
                let text = self.text(token.range());
                g.omittable_after
                    .iter()
                    .any(|(kind, t)| *kind == parent && &t[..] == text)
                    && !spells_token(pattern, text)
            });
            previous = Some(n);
            if n.is_named()
                && (after_token || self.omittable(parent, child.field, n, fields, kinds))
            {
                self.env.omitted.push(n.range());
                continue;
            }
            out.push(CChild {
                node: n,
                named: n.is_named(),
            });
        }
        out
    }

    fn omittable(
        &self,
        parent: u16,
        field: u16,
        node: Node<'t>,
        fields: &[u16],
        kinds: &[u16],
    ) -> bool {
        let g = self.grammar;
        if field != 0 && g.omittable_fields.contains(&field) {
            return !fields.contains(&field);
        }
        let kind = g.kind(&node);
        if kinds.contains(&kind) {
            return false;
        }
        if g.omittable_kinds.contains(&kind) || g.omittable_in.contains(&(parent, kind)) {
            return true;
        }
        // A container of nothing but omittable parts: `private` is one, Kotlin's `enum` not.
        g.omittable_containers.contains(&kind)
            && node
                .children()
                .iter()
                .filter(|c| c.node.is_named() && !c.node.is_extra())
                .all(|c| g.omittable_kinds.contains(&g.kind(&c.node)))
    }

    /// Matches pattern children `ps[i..]` against code children `cs[j..]`. Steps with one
    /// possible choice (a named child; a token that only one code token can be) loop rather
    /// than recurse, so the stack grows with the choices a pattern leaves open, not with its
    /// length; on `false` the caller resets the bindings to its mark.
    fn seq(&mut self, ps: &[PChild], mut i: usize, cs: &[CChild<'t>], mut j: usize) -> bool {
        loop {
            if !self.tick() {
                return false;
            }
            let Some(p) = ps.get(i) else {
                if self.open_end {
                    // A run ends where its last statement does; the block goes on.
                    self.env.run_end = j;
                    return true;
                }
                if cs[j..].iter().all(|c| !c.named) {
                    self.skip_tokens(&cs[j..]);
                    return true;
                }
                return false;
            };
            if p.node.is_multi() {
                return self.multi(ps, i, cs, j);
            }
            if !p.named {
                let separator_then_multi =
                    p.node.is_separator() && ps.get(i + 1).is_some_and(|next| next.node.is_multi());
                let run = cs[j..].iter().take_while(|c| !c.named).count();
                let mut candidates = (j..j + run).filter(|&k| self.node(&p.node, cs[k].node));
                let first = candidates.next();
                let single = candidates.next().is_none();
                if let Some(k) =
                    first.filter(|_| single && !p.node.is_terminator() && !separator_then_multi)
                {
                    self.skip_tokens(&cs[j..k]);
                    i += 1;
                    j = k + 1;
                    continue;
                }
                return self.token_choices(ps, i, cs, j, run);
            }
            let mut k = j;
            while k < cs.len() && !cs[k].named {
                k += 1;
            }
            if !p.nullable {
                if k < cs.len() {
                    self.skip_tokens(&cs[j..k]);
                    if self.node(&p.node, cs[k].node) {
                        i += 1;
                        j = k + 1;
                        continue;
                    }
                }
                return false;
            }
            if k < cs.len() {
                let mark = self.env.mark();
                self.skip_tokens(&cs[j..k]);
                if self.node(&p.node, cs[k].node) && self.seq(ps, i + 1, cs, k + 1) {
                    return true;
                }
                self.env.reset(mark);
            }
            let mark = self.env.mark();
            if self.bind_empty(&p.node) && self.seq(ps, i + 1, cs, j) {
                return true;
            }
            self.env.reset(mark);
            return false;
        }
    }

    /// `ps[i]` is a `$$$`: the shortest run that lets the rest match.
    fn multi(&mut self, ps: &[PChild], i: usize, cs: &[CChild<'t>], j: usize) -> bool {
        let p = &ps[i];
        let mark = self.env.mark();
        if i + 1 == ps.len() {
            // Last in the pattern: it must take every named child left, and taking them
            // is the shortest run that does (saves trying every shorter one). Last in a
            // run of statements, it takes the rest of the block.
            let end = cs[j..]
                .iter()
                .rposition(|c| c.named)
                .map_or(j, |last| j + last + 1);
            if self.bind_run(&p.node, &cs[j..end]) && self.seq(ps, i + 1, cs, end) {
                return true;
            }
            self.env.reset(mark);
            return false;
        }
        for k in j..=cs.len() {
            if self.bind_run(&p.node, &cs[j..k]) && self.seq(ps, i + 1, cs, k) {
                return true;
            }
            self.env.reset(mark);
            if k == j && ps.get(i + 1).is_some_and(|next| next.node.is_separator()) {
                // `$$$R,` with R empty: the separator after it goes too.
                if self.bind_run(&p.node, &[]) && self.seq(ps, i + 2, cs, k) {
                    return true;
                }
                self.env.reset(mark);
            }
            if self.env.exhausted {
                return false;
            }
        }
        false
    }

    /// `ps[i]` is an unnamed token with more than one way to go on: each code token of the
    /// `run` after `j` that it matches, a line end for a `;`, or an empty `$$$` after a
    /// separator.
    fn token_choices(
        &mut self,
        ps: &[PChild],
        i: usize,
        cs: &[CChild<'t>],
        j: usize,
        run: usize,
    ) -> bool {
        let p = &ps[i];
        for k in j..j + run {
            if self.node(&p.node, cs[k].node) {
                let mark = self.env.mark();
                self.skip_tokens(&cs[j..k]);
                if self.seq(ps, i + 1, cs, k + 1) {
                    return true;
                }
                self.env.reset(mark);
            }
        }
        if p.node.is_terminator() {
            // A `;` the pattern spells may be a newline in the code (bash, ASI).
            let mark = self.env.mark();
            if self.seq(ps, i + 1, cs, j) {
                return true;
            }
            self.env.reset(mark);
        }
        if let Some(next) = ps
            .get(i + 1)
            .filter(|next| next.node.is_multi() && p.node.is_separator())
        {
            // `, $$$R` with R empty: the separator before it goes too.
            let mark = self.env.mark();
            if self.bind_run(&next.node, &[]) && self.seq(ps, i + 2, cs, j) {
                return true;
            }
            self.env.reset(mark);
        }
        false
    }

    /// Records the unnamed code tokens a match passes over that are more than punctuation
    /// (`async`, `static`, TypeScript's `import type`, a generator's `*`): the match did not
    /// account for them, so a rewrite must carry them over.
    fn skip_tokens(&mut self, skipped: &[CChild<'t>]) {
        for c in skipped {
            let text = self.text(c.node.range());
            let blank = text.iter().all(u8::is_ascii_whitespace);
            if !blank && !matches!(text, b"," | b";") {
                self.env.omitted.push(c.node.range());
            }
        }
    }

    fn leaf_eq(&self, kind: u16, text: &[u8], node: Node<'t>) -> bool {
        // Blanks at a token's ends are not code (a C macro body ends with its line's `\n`).
        self.grammar.kind_matches(kind, &node)
            && self.text(node.range()).trim_ascii() == text.trim_ascii()
    }

    fn bind_run(&mut self, pattern: &PNode, run: &[CChild<'t>]) -> bool {
        match pattern {
            PNode::Meta { slot, .. } => {
                let nodes = run.iter().map(|c| c.node).collect();
                self.bind(*slot, Bound::Run(nodes))
            }
            _ => false,
        }
    }

    fn bind_empty(&mut self, pattern: &PNode) -> bool {
        match pattern {
            PNode::Internal { children, .. } => {
                children.iter().all(|child| self.bind_run(&child.node, &[]))
            }
            other => self.bind_run(other, &[]),
        }
    }

    fn bind(&mut self, slot: Option<usize>, bound: Bound<'t>) -> bool {
        let Some(slot) = slot else {
            return true;
        };
        if let Some(existing) = self.env.get(slot) {
            // A repeated name compares tokens: that work counts against the budget too, or
            // a pattern repeating one `$$$A` could compare long runs without end.
            let (equal, cost) = same(self.source, existing, &bound);
            self.env.steps = self
                .env
                .steps
                .saturating_add(u32::try_from(cost).unwrap_or(u32::MAX));
            if self.env.steps > STEP_BUDGET {
                self.env.exhausted = true;
                return false;
            }
            return equal;
        }
        self.env.slots.push((slot, bound));
        true
    }
}

/// Whether two captures are the same code (equal token sequences, or equal text when a
/// string content is involved), and how many tokens the comparison took.
fn same(source: &[u8], a: &Bound<'_>, b: &Bound<'_>) -> (bool, usize) {
    let text = |range: Range<usize>| source.get(range).unwrap_or(&[]);
    match (a, b) {
        (Bound::Text(x), other) | (other, Bound::Text(x)) => {
            let y = match other {
                Bound::Text(y) => y.clone(),
                Bound::One(n) => n.range(),
                Bound::Run(run) => named_span(run).unwrap_or(0..0),
            };
            (text(x.clone()) == text(y), 1)
        }
        _ => {
            let (ta, tb) = (tokens(a), tokens(b));
            let equal = ta.len() == tb.len()
                && ta
                    .iter()
                    .zip(&tb)
                    .all(|(x, y)| text(x.clone()) == text(y.clone()));
            (equal, 1 + ta.len() + tb.len())
        }
    }
}

/// Whether the pattern's children spell the unnamed token `text`.
fn spells_token(children: &[PChild], text: &[u8]) -> bool {
    children
        .iter()
        .any(|c| matches!(&c.node, PNode::Leaf { named: false, text: t, .. } if &t[..] == text))
}

fn tokens(bound: &Bound<'_>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    match bound {
        Bound::One(node) => node.tokens_into(&mut out),
        Bound::Run(run) => {
            for node in run {
                node.tokens_into(&mut out);
            }
        }
        Bound::Text(range) => out.push(range.clone()),
    }
    out
}

/// Whether a node of a run is part of what the run holds (a named node, or a keyword such as
/// C#'s `params` before a parameter), not a separator around it.
fn holds(node: &Node<'_>) -> bool {
    node.is_named()
        || (node.end() > node.start() && !matches!(node.kind(), "," | ";" | "\n" | "\r\n"))
}

/// From the first named node of a run to its last (keywords at its ends included).
pub(crate) fn named_span(run: &[Node<'_>]) -> Option<Range<usize>> {
    run.iter().find(|n| n.is_named())?;
    let first = run.iter().find(|n| holds(n))?;
    let last = run.iter().rev().find(|n| holds(n))?;
    Some(first.start()..last.end())
}

/// From the first named node of a run to its last, with the comments right around them
/// inside `within` (a rewrite that moves `$$$BODY` carries the body's leading and trailing
/// comments along; Python hangs a block's leading comment on the `if`, not the block).
pub(crate) fn run_span(run: &[Node<'_>], within: &Range<usize>) -> Option<Range<usize>> {
    run.iter().find(|n| n.is_named())?;
    let first = *run.iter().find(|n| holds(n))?;
    let last = *run.iter().rev().find(|n| holds(n))?;
    Some(reach(first, true, within)..reach(last, false, within))
}

/// Where the comments right beyond `edge` (before it, or after it) end, inside `within`. At
/// the first (or last) child of a parent, a comment beyond the parent still counts.
fn reach(edge: Node<'_>, before: bool, within: &Range<usize>) -> usize {
    let is_comment = |n: &Node<'_>| {
        n.is_extra() && !n.is_error() && within.start <= n.start() && n.end() <= within.end
    };
    let outer = |n: &Node<'_>| if before { n.start() } else { n.end() };
    let strictly_inside = |n: &Node<'_>| {
        if before {
            n.start() > within.start
        } else {
            n.end() < within.end
        }
    };
    let mut reach = outer(&edge);
    let mut node = edge;
    loop {
        let beyond = if before {
            node.prev_sibling()
        } else {
            node.next_sibling()
        };
        match beyond {
            // A comment after code on its line belongs to that code (`def f():  # c`), not
            // to the run after it: moving it with the run would move it into the body.
            Some(comment) if is_comment(&comment) && (!before || starts_its_line(comment)) => {
                reach = outer(&comment);
                node = comment;
            }
            Some(_) => break,
            None => match node.parent() {
                Some(parent) if outer(&parent) == outer(&node) && strictly_inside(&parent) => {
                    node = parent
                }
                _ => break,
            },
        }
    }
    reach
}

/// Whether no code precedes `comment` on its line.
fn starts_its_line(comment: Node<'_>) -> bool {
    let row = comment.start_point().0;
    let mut node = comment;
    loop {
        if let Some(previous) = node.prev_sibling() {
            return previous.end_point().0 < row;
        }
        match node.parent() {
            Some(parent) => node = parent,
            None => return true,
        }
    }
}
