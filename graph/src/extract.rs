//! Extraction: one tags-style query per language (`queries/LANG.scm`), run with a
//! [`tree_sitter::QueryCursor`] over the file's tree, turned into [`FileFacts`].
//!
//! # Capture names (the contract of every query file)
//!
//! | match holds | meaning | optional captures |
//! |---|---|---|
//! | `@definition.KIND` and `@name` | a definition (`KIND` is a [`DefKind`] name) | `@type`, `@returns`, `@owner`, `@self`, `@no_self` (a static method: no receiver), `@base` (any number), `@member_of` (JS/TS: the object a function is assigned to a member of), `@named_expression` (JS/TS: a named function expression) |
//! | `@reference.call` and `@name` | a call site | `@receiver` |
//! | `@reference.macro` and `@name` | a macro invocation (named `NAME!`) | |
//! | `@reference.type` and `@name` | a type use | `@receiver` (a qualifier: `pkg.Type`) |
//! | `@import` and `@import.module` | an import | `@import.name`, `@import.alias`, `@import.wildcard` |
//! | `@local` and `@name` | a local binding | `@type`, `@value` (the callee of the call assigned), `@read` (the member read assigned) |
//! | `@scope.owner` and `@owner` | definitions inside belong to `@owner` (Rust `impl`) | `@trait` (the trait implemented: a base of the methods inside) |
//! | `@package` and `@name` | the file's package or namespace | |
//!
//! Several matches on the same definition node are merged (one may add `@self`, another a
//! `@base`). Parents are the innermost definition whose span holds the definition; a
//! reference's enclosing definition likewise.

use std::collections::HashMap;

use cc_languages::{LanguageId, LanguageSpec, Parser, QueryCache, QueryError};
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, QueryCursor};

use crate::model::{
    CallbackParam, DefKind, Definition, FileFacts, Import, LiteralArg, Local, Pos, RefKind,
    Reference,
};

/// The query file of a language, or `None` for a language without symbols (JSON).
pub fn query_source(language: &LanguageSpec) -> Option<&'static str> {
    crate::language::of(language).query
}

/// The separator of qualified names in a language.
pub fn separator(language: &LanguageSpec) -> &'static str {
    crate::language::of(language).separator
}

/// Why a file could not be extracted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    /// The language's symbol query does not compile.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The source could not be parsed.
    #[error(transparent)]
    Parse(#[from] cc_languages::ParseError),
    /// The language has no symbol query (`queries/LANG.scm`).
    #[error("{0} has no symbol query")]
    NoQuery(String),
    /// The language's query names a capture the extractor does not read (a typo would
    /// otherwise drop its facts without a word).
    #[error(
        "the {language} symbol query captures `@{capture}`, which the extractor does not read \
         (a capture only a predicate reads starts with `_`)"
    )]
    UnknownCapture {
        /// The language.
        language: String,
        /// The capture's name.
        capture: String,
    },
}

/// Captures that give a match its role, besides `definition.KIND` ([`DefKind::parse`]) and
/// `reference.call`, `reference.macro` and `reference.type`.
const ROLE_CAPTURES: &[&str] = &["import", "local", "scope.owner", "package"];

/// Captures of a match's parts that the collectors read.
const PART_CAPTURES: &[&str] = &[
    "name",
    "type",
    "returns",
    "self",
    "no_self",
    "base",
    "owner",
    "trait",
    "member_of",
    "named_expression",
    "receiver",
    "value",
    "read",
    "import.module",
    "import.name",
    "import.alias",
    "import.wildcard",
];

/// What a capture is to the extractor: the role of its match, a part of it, or unknown.
fn known_capture(name: &str) -> bool {
    if let Some(kind) = name.strip_prefix("definition.") {
        return DefKind::parse(kind).is_some();
    }
    if let Some(kind) = name.strip_prefix("reference.") {
        return matches!(kind, "call" | "macro" | "type");
    }
    name.starts_with('_') || ROLE_CAPTURES.contains(&name) || PART_CAPTURES.contains(&name)
}

/// The compiled query of a language (compiled once per process, in the shared cache).
pub fn query_for(
    language: &'static LanguageSpec,
) -> Result<std::sync::Arc<tree_sitter::Query>, ExtractError> {
    let source =
        query_source(language).ok_or_else(|| ExtractError::NoQuery(language.name.into()))?;
    let query = QueryCache::global().get(language, "graph.tags", source)?;
    if let Some(capture) = query.capture_names().iter().find(|c| !known_capture(c)) {
        return Err(ExtractError::UnknownCapture {
            language: language.name.into(),
            capture: (*capture).to_owned(),
        });
    }
    Ok(query)
}

/// Deepest tree a file may have before it is not extracted (its facts are then empty and the
/// file is counted as a syntax error): tree-sitter's own walks are iterative, but a source
/// nested this deep is generated, not written.
const MAX_MATCHES_PER_FILE: usize = 2_000_000;

/// Extracts the facts of one source.
pub fn extract(
    parser: &mut Parser,
    language: &'static LanguageSpec,
    source: &[u8],
) -> Result<FileFacts, ExtractError> {
    let query = query_for(language)?;
    let tree = parser.parse(language, source)?;
    let (errors, _) = cc_languages::syntax_errors(&tree);
    let mut facts = Extractor::new(language, source, &query).run(&tree);
    facts.syntax_errors = u32::try_from(errors).unwrap_or(u32::MAX);
    if let Some((shadow, replaced)) = crate::macro_bodies::shadow(language, &tree, source) {
        // The bodies' own syntax errors are the macro's business, not the file's.
        if let Ok(shadow_tree) = parser.parse(language, &shadow) {
            let generated = Extractor::new(language, &shadow, &query).run(&shadow_tree);
            merge_generated(&mut facts, generated, source, &replaced);
        }
    }
    Ok(facts)
}

/// Adds what the macro bodies define and call (see [`crate::macro_bodies`]) to the file's
/// facts: a definition named by a `$name` of the macro is left out (its name is the
/// caller's), a reference outside any generated definition belongs to the definition around
/// it in the file (the macro), and one the file's own pass has is not repeated.
fn merge_generated(
    facts: &mut FileFacts,
    generated: FileFacts,
    source: &[u8],
    replaced: &std::collections::HashSet<usize>,
) {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(
            source
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let byte_of = |pos: Pos| -> usize {
        let line = (pos.line as usize).saturating_sub(1);
        line_starts.get(line).copied().unwrap_or(source.len()) + pos.column as usize
    };
    let around = |byte: usize, defs: &[Definition]| -> Option<usize> {
        defs.iter()
            .enumerate()
            .filter(|(_, d)| d.bytes.0 <= byte && byte < d.bytes.1)
            .min_by_key(|(_, d)| d.bytes.1 - d.bytes.0)
            .map(|(i, _)| i)
    };
    let own = facts.definitions.len();
    let mut index_of: Vec<Option<usize>> = Vec::with_capacity(generated.definitions.len());
    for mut def in generated.definitions {
        if replaced.contains(&byte_of(def.name_pos)) {
            index_of.push(None);
            continue;
        }
        def.parent = def.parent.and_then(|p| index_of.get(p).copied().flatten());
        def.signature = first_line(source, def.bytes.0, def.bytes.1);
        index_of.push(Some(facts.definitions.len()));
        facts.definitions.push(def);
    }
    let seen: std::collections::HashSet<(Pos, RefKind)> =
        facts.references.iter().map(|r| (r.pos, r.kind)).collect();
    for mut r in generated.references {
        if seen.contains(&(r.pos, r.kind)) {
            continue;
        }
        r.enclosing = match r.enclosing.and_then(|e| index_of.get(e).copied().flatten()) {
            Some(e) => Some(e),
            None => around(byte_of(r.pos), &facts.definitions[..own]),
        };
        facts.references.push(r);
    }
    for mut local in generated.locals {
        local.scope = local.scope.and_then(|s| index_of.get(s).copied().flatten());
        if local.scope.is_some() {
            facts.locals.push(local);
        }
    }
}

/// Which parameter a TypeScript parameter node is, from 0 (`None` for any other node).
fn parameter_index(node: Node<'_>) -> Option<u32> {
    const PARAMETERS: [&str; 2] = ["required_parameter", "optional_parameter"];
    if !PARAMETERS.contains(&node.kind()) {
        return None;
    }
    let mut before = 0u32;
    let mut sibling = node.prev_named_sibling();
    while let Some(s) = sibling {
        if PARAMETERS.contains(&s.kind()) {
            before += 1;
        }
        sibling = s.prev_named_sibling();
    }
    Some(before)
}

/// Where an untyped parameter of a function passed as an argument gets its type (see
/// [`CallbackParam`]); `None` for any other node.
fn callback_param(node: Node<'_>) -> Option<CallbackParam> {
    let in_list = node.parent().filter(|p| p.kind() == "formal_parameters");
    let function = match in_list {
        Some(list) => list.parent()?,
        None => node.parent()?,
    };
    if !matches!(function.kind(), "arrow_function" | "function_expression") {
        return None;
    }
    let has_type = node.child_by_field_name("type").is_some();
    if has_type || (in_list.is_none() && node.kind() != "identifier") {
        return None;
    }
    // Its place among the parameters, a declared `this` left out (a function type's own
    // `this:` is left out alike).
    let mut param = 0u32;
    let mut sibling = node.prev_named_sibling();
    while let Some(s) = sibling {
        let is_this = s
            .child_by_field_name("pattern")
            .is_some_and(|p| p.kind() == "this");
        if s.kind() != "comment" && !is_this {
            param += 1;
        }
        sibling = s.prev_named_sibling();
    }
    let arguments = function.parent().filter(|p| p.kind() == "arguments")?;
    let call = arguments.parent()?;
    let callee = match call.kind() {
        "call_expression" => call.child_by_field_name("function"),
        "new_expression" => call.child_by_field_name("constructor"),
        _ => None,
    }
    .and_then(crate::literals::callee_name)?;
    let mut argument = 0u32;
    let mut sibling = function.prev_named_sibling();
    while let Some(s) = sibling {
        if s.kind() != "comment" {
            argument += 1;
        }
        sibling = s.prev_named_sibling();
    }
    Some(CallbackParam {
        call: Pos::of(callee.start_position()),
        argument,
        param,
    })
}

/// The object literals passed as arguments whose function members are definitions of the
/// file, each member with the call it is passed to (see [`crate::literals`]).
fn literal_args(facts: &FileFacts, tree: &tree_sitter::Tree, source: &[u8]) -> Vec<LiteralArg> {
    let found = crate::literals::literals(tree, source);
    if found.is_empty() {
        return Vec::new();
    }
    let calls: HashMap<(u32, u32), usize> = facts
        .references
        .iter()
        .enumerate()
        .filter(|(_, r)| r.kind == RefKind::Call)
        .map(|(i, r)| ((r.pos.line, r.pos.column), i))
        .collect();
    let members: HashMap<(u32, u32), usize> = facts
        .definitions
        .iter()
        .enumerate()
        .filter(|(_, d)| d.owner.as_deref() == Some(OBJECT_LITERAL))
        .map(|(i, d)| ((d.name_pos.line, d.name_pos.column), i))
        .collect();
    let mut out = Vec::new();
    for literal in found {
        let Some(&reference) = calls.get(&literal.callee) else {
            continue;
        };
        let Ok(argument) = u32::try_from(literal.argument) else {
            continue;
        };
        for (_, place) in &literal.members {
            if let Some(&member) = members.get(place) {
                out.push(LiteralArg {
                    reference,
                    argument,
                    member,
                });
            }
        }
    }
    out.sort_by_key(|a| (a.reference, a.member));
    out
}

/// The first line of `source[start..end]`, trimmed and at most 200 characters.
fn first_line(source: &[u8], start: usize, end: usize) -> String {
    let rest = source.get(start..end).unwrap_or_default();
    let line_end = memchr_newline(rest);
    let line = String::from_utf8_lossy(&rest[..line_end]);
    let line = line.trim();
    if line.chars().count() > 200 {
        line.chars().take(200).collect()
    } else {
        line.to_owned()
    }
}

/// The owner of an object literal's members (`{ next() {…} }`): no type has this name.
pub const OBJECT_LITERAL: &str = "{object}";

/// The owner of a function assigned to an object's member (`inst.regex = (…) => …`): no type
/// has this name. Unlike a literal's member, the assignment fills a member declared
/// elsewhere (TypeScript's checker names that member at the assignment).
pub const ASSIGNED_MEMBER: &str = "{assigned}";

/// Whether a definition's owner is no named type: it belongs to an object literal or was
/// assigned to an object's member, and is no name in the scope around.
pub fn owned_by_no_type(owner: Option<&str>) -> bool {
    matches!(owner, Some(OBJECT_LITERAL | ASSIGNED_MEMBER))
}

#[derive(Default)]
struct PendingDef {
    kind: Option<DefKind>,
    node: (usize, usize),
    start: Pos,
    end_line: u32,
    name: Option<(String, Pos)>,
    type_text: Option<String>,
    returns: Option<String>,
    owner: Option<String>,
    self_name: Option<String>,
    bases: Vec<String>,
    signature: String,
    /// A method without a receiver (Python `@staticmethod`).
    no_self: bool,
    type_params: Vec<String>,
}

struct Extractor<'a> {
    language: &'static LanguageSpec,
    source: &'a [u8],
    query: &'a tree_sitter::Query,
    names: Vec<&'a str>,
}

fn text<'s>(node: Node<'_>, source: &'s [u8]) -> &'s str {
    std::str::from_utf8(source.get(node.byte_range()).unwrap_or_default()).unwrap_or("")
}

/// Whitespace collapsed (receivers and types written over several lines).
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A type as written, reduced to its name: pointers, references, type arguments and
/// qualifiers' generics removed (`*FlagSet` → `FlagSet`, `Foo<T>` → `Foo`, `&mut Self` →
/// `Self`), the qualifier kept (`pflag.FlagSet`).
pub fn type_name(written: &str) -> String {
    let mut s = written.trim();
    loop {
        let before = s;
        for prefix in ["*", "&", "mut ", "const ", "dyn ", "impl ", "[]", "..."] {
            s = s.strip_prefix(prefix).unwrap_or(s).trim_start();
        }
        if s == before {
            break;
        }
    }
    let cut = s
        .find(['<', '[', '(', '{', ' ', '|', '?', ','])
        .unwrap_or(s.len());
    s[..cut].trim_end_matches("::").to_owned()
}

impl<'a> Extractor<'a> {
    fn new(
        language: &'static LanguageSpec,
        source: &'a [u8],
        query: &'a tree_sitter::Query,
    ) -> Self {
        Extractor {
            language,
            source,
            query,
            names: query.capture_names().to_vec(),
        }
    }

    fn signature(&self, node: Node<'_>) -> String {
        first_line(self.source, node.start_byte(), node.end_byte())
    }

    fn run(&self, tree: &tree_sitter::Tree) -> FileFacts {
        let mut found = Collected::default();
        self.collect(tree, &mut found);
        let Collected {
            mut facts,
            defs,
            owner_scopes,
            refs,
            locals,
            import_bytes,
            ..
        } = found;
        if self.language.id == LanguageId::Rust {
            rust_import_paths(&mut facts.imports);
        }
        let nesting = self.place_definitions(&mut facts, defs, &owner_scopes);
        nesting.place_references(&mut facts, refs);
        // An import inside a function binds its name there only (the preprocessor's
        // `#include` is textual: it binds from there on, wherever it is).
        if !matches!(self.language.id, LanguageId::C | LanguageId::Cpp) {
            nesting.scope_imports(&mut facts, import_bytes);
        }
        nesting.place_locals(&mut facts, locals);
        if matches!(
            self.language.id,
            LanguageId::JavaScript | LanguageId::TypeScript | LanguageId::Tsx
        ) {
            facts.literal_args = literal_args(&facts, tree, self.source);
        }
        facts
    }

    /// Runs the tags query over the tree and hands each match to its role's collector.
    fn collect(&self, tree: &tree_sitter::Tree, found: &mut Collected) {
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.matches(self.query, tree.root_node(), self.source);
        let mut count = 0usize;
        while let Some(m) = matches.next() {
            count += 1;
            if count > MAX_MATCHES_PER_FILE {
                break;
            }
            let mut role: Option<(&str, Node<'_>)> = None;
            let mut caps = Captures {
                list: Vec::with_capacity(m.captures().len()),
                source: self.source,
            };
            for c in m.captures() {
                let name = self.names.get(c.index as usize).copied().unwrap_or("");
                if name.starts_with("definition.")
                    || name.starts_with("reference.")
                    || ROLE_CAPTURES.contains(&name)
                {
                    role = Some((name, c.node));
                } else {
                    caps.list.push((name, c.node));
                }
            }
            let Some((role, node)) = role else { continue };
            if let Some(kind) = role.strip_prefix("definition.") {
                self.on_definition(found, kind, node, &caps);
            } else if let Some(kind) = role.strip_prefix("reference.") {
                on_reference(found, kind, &caps);
            } else if role == "import" {
                on_import(found, node, &caps);
            } else if role == "local" {
                self.on_local(found, node, &caps);
            } else if role == "scope.owner" {
                if let Some(owner) = caps.text("owner") {
                    let implemented = caps
                        .text("trait")
                        .map(|t| type_name(&t))
                        .filter(|t| !t.is_empty());
                    found.owner_scopes.push((
                        (node.start_byte(), node.end_byte()),
                        type_name(&owner),
                        implemented,
                    ));
                }
            } else if role == "package" && found.facts.package.is_none() {
                found.facts.package = caps.text("name");
            }
        }
    }

    /// A definition match: the definition at the node is made or completed (several
    /// patterns may see one node).
    fn on_definition(&self, found: &mut Collected, kind: &str, node: Node<'_>, caps: &Captures) {
        let Some(kind) = DefKind::parse(kind) else {
            return;
        };
        if caps.node("named_expression").is_some()
            && node.parent().is_some_and(|p| {
                matches!(
                    p.kind(),
                    "pair" | "variable_declarator" | "assignment_expression"
                )
            })
        {
            return;
        }
        let key = (node.start_byte(), node.end_byte());
        let defs = &mut found.defs;
        let index = *found.def_at.entry(key).or_insert_with(|| {
            defs.push(PendingDef {
                node: key,
                start: Pos::of(node.start_position()),
                end_line: Pos::of(node.end_position()).line,
                signature: self.signature(node),
                type_params: type_params_of(node, self.source),
                ..PendingDef::default()
            });
            defs.len() - 1
        });
        let def = &mut defs[index];
        // A callable reading wins over a variable one (`const f = () => …`).
        match def.kind {
            Some(k) if !kind.is_callable() || k.is_callable() => {}
            _ => def.kind = Some(kind),
        }
        if def.name.is_none() {
            if let Some(n) = caps.node("name") {
                let name = text(n, self.source).trim().to_owned();
                if !name.is_empty() {
                    def.name = Some((name, Pos::of(n.start_position())));
                }
            }
        }
        if def.type_text.is_none() {
            def.type_text = caps.text("type");
        }
        if def.returns.is_none() {
            def.returns = caps.text("returns");
        }
        if def.self_name.is_none() {
            def.self_name = caps.text("self");
        }
        if caps.node("no_self").is_some() {
            def.no_self = true;
        }
        def_owner(def, node, caps);
        for base in caps.all("base") {
            let mut b = type_name(&collapse(text(base, self.source)));
            // TypeScript's `extends Base<A, B>`: the arguments are the value's sibling; a
            // base's type parameters are bound by them.
            if let Some(args) = base
                .next_named_sibling()
                .filter(|s| s.kind() == "type_arguments")
            {
                if !b.is_empty() {
                    b.push_str(&collapse(text(args, self.source)));
                }
            }
            if !b.is_empty() && !def.bases.contains(&b) {
                def.bases.push(b);
            }
        }
    }

    /// A local binding's match.
    fn on_local(&self, found: &mut Collected, node: Node<'_>, caps: &Captures) {
        let Some(name) = caps.text("name") else {
            return;
        };
        found.locals.push((
            node.start_byte(),
            Local {
                name,
                scope: None,
                type_text: caps.text("type"),
                value: caps.text("value"),
                read: caps.text("read"),
                // A Rust binding is in scope after its statement only (`let it = it::f()`
                // calls the module `it`).
                pos: Pos::of(if self.language.id == LanguageId::Rust {
                    node.end_position()
                } else {
                    node.start_position()
                }),
                param: parameter_index(node),
                callback: callback_param(node),
            },
        ));
    }

    /// The definitions in document order, outer before inner, nameless ones dropped: each
    /// with its parent, owner, final kind, qualified name and receiver's name.
    fn place_definitions(
        &self,
        facts: &mut FileFacts,
        defs: Vec<PendingDef>,
        owner_scopes: &[OwnerScope],
    ) -> Nesting {
        let mut pending: Vec<PendingDef> = defs
            .into_iter()
            .filter(|d| d.name.is_some() && d.kind.is_some())
            .collect();
        pending.sort_by_key(|d| (d.node.0, std::cmp::Reverse(d.node.1)));
        let spans: Vec<(usize, usize)> = pending.iter().map(|d| d.node).collect();
        let mut parents: Vec<Option<usize>> = Vec::with_capacity(spans.len());
        for (i, span) in spans.iter().enumerate() {
            let parent = innermost(&spans, &parents, i.checked_sub(1), span.0, Some(span.1));
            parents.push(parent);
        }
        let sep = separator(self.language);
        for (i, def) in pending.into_iter().enumerate() {
            let (name, name_pos) = def.name.unwrap_or_default();
            let parent = parents[i];
            let scope = owner_scopes
                .iter()
                .filter(|(span, _, _)| span.0 <= def.node.0 && def.node.1 <= span.1)
                .min_by_key(|(span, _, _)| span.1 - span.0);
            let from_scope = def.owner.is_none();
            let owner = def.owner.or_else(|| scope.map(|(_, o, _)| o.clone()));
            // A method of `impl Trait for T` names the trait among its bases: a call of the
            // trait's method may run it (a dispatch edge).
            let mut bases = def.bases;
            if from_scope && bases.is_empty() {
                if let Some((_, _, Some(implemented))) = scope {
                    bases.push(implemented.clone());
                }
            }
            let parent_kind = parent
                .and_then(|p| facts.definitions.get(p))
                .map(|p: &Definition| p.kind);
            let kind = self.final_kind(
                def.kind.unwrap_or(DefKind::Variable),
                &name,
                owner.is_some(),
                parent_kind,
            );
            let qualified_name = match (parent, &owner) {
                (Some(p), _) => format!("{}{sep}{name}", facts.definitions[p].qualified_name),
                (None, Some(o)) => format!("{o}{sep}{name}"),
                (None, None) => name.clone(),
            };
            let has_self = kind == DefKind::Method && !def.no_self;
            let self_name = def
                .self_name
                .filter(|_| has_self)
                .or_else(|| has_self.then(|| self.default_self_name()).flatten());
            facts.definitions.push(Definition {
                name,
                kind,
                qualified_name,
                start: def.start,
                end_line: def.end_line,
                name_pos,
                signature: def.signature,
                parent,
                owner,
                type_text: def.type_text,
                returns: def.returns,
                bases,
                self_name,
                type_params: def.type_params,
                bytes: def.node,
            });
        }
        Nesting { spans, parents }
    }

    /// A definition's kind once its place is known: a function of a type is a method, a
    /// variable of one a field, an all-capitals Python variable a constant.
    fn final_kind(
        &self,
        kind: DefKind,
        name: &str,
        has_owner: bool,
        parent_kind: Option<DefKind>,
    ) -> DefKind {
        let in_type = parent_kind.is_some_and(DefKind::is_type);
        if kind == DefKind::Function && (has_owner || in_type) {
            return DefKind::Method;
        }
        if kind == DefKind::Variable && in_type {
            return DefKind::Field;
        }
        if kind == DefKind::Variable
            && self.language.id == LanguageId::Python
            && name.chars().any(|c| c.is_ascii_uppercase())
            && !name.chars().any(|c| c.is_ascii_lowercase())
        {
            return DefKind::Constant;
        }
        kind
    }

    /// The receiver's name of a method that does not write one.
    fn default_self_name(&self) -> Option<String> {
        crate::language::of(self.language)
            .default_self
            .map(str::to_owned)
    }
}

/// An owner scope: (byte range, owner, the trait it implements).
type OwnerScope = ((usize, usize), String, Option<String>);

/// What the query's matches gave, before definitions are ordered and nested.
#[derive(Default)]
struct Collected {
    /// The imports and the package so far.
    facts: FileFacts,
    defs: Vec<PendingDef>,
    def_at: HashMap<(usize, usize), usize>,
    owner_scopes: Vec<OwnerScope>,
    refs: Vec<(usize, Reference)>,
    locals: Vec<(usize, Local)>,
    /// Where each import statement starts, beside `facts.imports`.
    import_bytes: Vec<usize>,
    seen_refs: HashMap<(usize, u8), usize>,
}

/// One match's captures other than its role, by capture name.
struct Captures<'a, 't> {
    list: Vec<(&'a str, Node<'t>)>,
    source: &'a [u8],
}

impl<'t> Captures<'_, 't> {
    fn node(&self, wanted: &str) -> Option<Node<'t>> {
        self.list
            .iter()
            .find(|(n, _)| *n == wanted)
            .map(|(_, n)| *n)
    }

    /// The capture's text, whitespace collapsed.
    fn text(&self, wanted: &str) -> Option<String> {
        self.node(wanted).map(|n| collapse(text(n, self.source)))
    }

    fn all<'c>(&'c self, wanted: &'c str) -> impl Iterator<Item = Node<'t>> + 'c {
        self.list
            .iter()
            .filter(move |(n, _)| *n == wanted)
            .map(|(_, n)| *n)
    }
}

/// A definition's owner from its own match: the `owner` capture, an object literal's, or the
/// object a function is assigned to.
fn def_owner(def: &mut PendingDef, node: Node<'_>, caps: &Captures) {
    if def.owner.is_none() {
        def.owner = caps
            .text("owner")
            .map(|o| type_name(&o))
            .filter(|o| !o.is_empty());
    }
    // A member of an object literal belongs to no named type, and is no name in the scope
    // around the literal.
    if def.owner.is_none() && node.parent().is_some_and(|p| p.kind() == "object") {
        def.owner = Some(OBJECT_LITERAL.to_owned());
    }
    // A function assigned to an object's member: CommonJS's `exports.f` is a function of
    // the module; a prototype's member has its owner from its own pattern; any other
    // object's is of no named type.
    if let Some(object) = caps.text("member_of") {
        if matches!(object.as_str(), "exports" | "module.exports") {
            def.kind = Some(DefKind::Function);
        } else if def.owner.is_none() && !object.ends_with(".prototype") {
            def.owner = Some(ASSIGNED_MEMBER.to_owned());
        }
    }
}

/// A reference match: one reference per name node and kind, a pattern that saw a receiver
/// winning.
fn on_reference(found: &mut Collected, kind: &str, caps: &Captures) {
    // A macro is called in its own namespace: its name is kept with the `!`.
    let (kind, bang) = match kind {
        "call" => (RefKind::Call, ""),
        "macro" => (RefKind::Call, "!"),
        "type" => (RefKind::Type, ""),
        _ => return,
    };
    let Some(name_node) = caps.node("name") else {
        return;
    };
    let name = text(name_node, caps.source).trim();
    if name.is_empty() {
        return;
    }
    let receiver = caps.text("receiver").filter(|r| !r.is_empty());
    match found.seen_refs.entry((name_node.start_byte(), kind as u8)) {
        std::collections::hash_map::Entry::Occupied(at) => {
            let existing = &mut found.refs[*at.get()].1;
            if existing.receiver.is_none() {
                existing.receiver = receiver;
            }
            return;
        }
        std::collections::hash_map::Entry::Vacant(slot) => {
            slot.insert(found.refs.len());
        }
    }
    found.refs.push((
        name_node.start_byte(),
        Reference {
            kind,
            name: format!("{name}{bang}"),
            receiver,
            pos: Pos::of(name_node.start_position()),
            enclosing: None,
        },
    ));
}

/// An import match.
fn on_import(found: &mut Collected, node: Node<'_>, caps: &Captures) {
    let Some(module) = caps.text("import.module") else {
        return;
    };
    found.import_bytes.push(node.start_byte());
    let mut module = module.trim_matches(['"', '\'', '<', '>', '`']).to_owned();
    let mut name = caps.text("import.name");
    // Rust `use a::b::{self}` imports `b` from `a`, as `use a::b;` does.
    if name.as_deref() == Some("self") {
        name = match module.rsplit_once("::") {
            Some((parent, last)) => {
                let last = last.trim().to_owned();
                module = parent.trim().to_owned();
                Some(last)
            }
            None => None,
        };
    }
    found.facts.imports.push(Import {
        module,
        name,
        alias: caps.text("import.alias"),
        wildcard: caps.node("import.wildcard").is_some(),
        line: Pos::of(node.start_position()).line,
        scope_lines: None,
    });
}

/// Rust's `use a::{b::C}` gives the name `b::C`: the path part belongs to the module.
fn rust_import_paths(imports: &mut [Import]) {
    for import in imports {
        if let Some(name) = import.name.take() {
            match name.rsplit_once("::") {
                Some((path, last)) => {
                    import.module = format!("{}::{path}", import.module);
                    import.name = Some(last.to_owned());
                }
                None if name == "self" => {
                    // `use a::{self}` binds the module `a`.
                    if import.alias.is_none() {
                        import.alias = import.module.rsplit("::").next().map(str::to_owned);
                    }
                }
                None => import.name = Some(name),
            }
        }
    }
}

/// The definitions' spans in document order and each one's parent: where a place in the
/// file is.
struct Nesting {
    spans: Vec<(usize, usize)>,
    parents: Vec<Option<usize>>,
}

impl Nesting {
    /// The innermost definition holding `byte`.
    fn enclosing(&self, byte: usize) -> Option<usize> {
        let last_before = self.spans.partition_point(|s| s.0 <= byte).checked_sub(1);
        innermost(&self.spans, &self.parents, last_before, byte, None)
    }

    /// The references in document order, each with its enclosing definition; a
    /// definition's own name is not a use of it.
    fn place_references(&self, facts: &mut FileFacts, mut refs: Vec<(usize, Reference)>) {
        refs.sort_by_key(|(b, _)| *b);
        let def_names: std::collections::HashSet<Pos> =
            facts.definitions.iter().map(|d| d.name_pos).collect();
        refs.retain(|(_, r)| r.kind == RefKind::Call || !def_names.contains(&r.pos));
        for (byte, mut r) in refs {
            r.enclosing = self.enclosing(byte);
            facts.references.push(r);
        }
    }

    /// An import inside a function binds its name in that function's lines only.
    fn scope_imports(&self, facts: &mut FileFacts, import_bytes: Vec<usize>) {
        for (import, byte) in facts.imports.iter_mut().zip(import_bytes) {
            let mut at = self.enclosing(byte);
            while let Some(def) = at.and_then(|i| facts.definitions.get(i)) {
                if def.kind.is_callable() {
                    import.scope_lines = Some((def.start.line, def.end_line));
                    break;
                }
                at = def.parent;
            }
        }
    }

    /// The local bindings in document order, each in its scope.
    fn place_locals(&self, facts: &mut FileFacts, mut locals: Vec<(usize, Local)>) {
        locals.sort_by_key(|(b, _)| *b);
        for (byte, mut l) in locals {
            l.scope = self.enclosing(byte);
            // A binding that is the definition itself (a top-level `x = Foo()`) belongs to
            // the definition's scope.
            if let Some(def) = l.scope.and_then(|i| facts.definitions.get(i)) {
                if matches!(
                    def.kind,
                    DefKind::Variable | DefKind::Constant | DefKind::Field
                ) && def.name == l.name
                {
                    l.scope = def.parent;
                }
            }
            facts.locals.push(l);
        }
    }
}

/// The innermost of `spans` holding `byte` (and ending at or after `end`, for a span inside
/// another), starting from `from`, the last span that starts at or before it, and walking up
/// its parents: any span holding the place that starts before `from` encloses `from`.
fn innermost(
    spans: &[(usize, usize)],
    parents: &[Option<usize>],
    mut from: Option<usize>,
    byte: usize,
    end: Option<usize>,
) -> Option<usize> {
    while let Some(i) = from {
        let (s, e) = spans[i];
        let holds = match end {
            Some(end) => s <= byte && end <= e && (s, e) != (byte, end),
            None => s <= byte && byte < e,
        };
        if holds {
            return Some(i);
        }
        from = parents.get(i).copied().flatten();
    }
    None
}

fn memchr_newline(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len())
}

/// A definition's type parameters (`<T extends X = Y, U>`): `T=X` (the constraint, else the
/// default) or a bare name, in order.
fn type_params_of(node: tree_sitter::Node<'_>, source: &[u8]) -> Vec<String> {
    let Some(list) = node.child_by_field_name("type_parameters") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cursor = list.walk();
    for param in list.named_children(&mut cursor) {
        if param.kind() != "type_parameter" {
            continue;
        }
        let Some(name) = param.child_by_field_name("name") else {
            continue;
        };
        let name = collapse(text(name, source));
        // `constraint` (`extends X`) and `value` (`= Y`) wrap the type in a node of their own.
        let fallback = ["constraint", "value"].into_iter().find_map(|field| {
            let wrapper = param.child_by_field_name(field)?;
            let ty = wrapper.named_child(0).unwrap_or(wrapper);
            Some(collapse(text(ty, source)))
        });
        out.push(match fallback {
            Some(f) if !f.is_empty() => format!("{name}={f}"),
            _ => name,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_with_symbols_has_a_query_that_compiles() {
        let mut failures = Vec::new();
        for language in cc_languages::TABLE {
            match query_source(language) {
                Some(_) => {
                    if let Err(e) = query_for(language) {
                        failures.push(e.to_string());
                    }
                }
                // JSON has no symbols.
                None => assert!(
                    language.name == "json",
                    "{} has no graph query",
                    language.name
                ),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_capture_the_extractor_does_not_read_is_refused() {
        assert!(known_capture("definition.function"));
        assert!(known_capture("reference.macro"));
        assert!(known_capture("import.alias"));
        assert!(known_capture("_prototype"));
        assert!(!known_capture("definition.fucntion"));
        assert!(!known_capture("reference.cal"));
        assert!(!known_capture("nmae"));
    }

    #[test]
    fn type_names_lose_pointers_generics_and_references() {
        assert_eq!(type_name("*FlagSet"), "FlagSet");
        assert_eq!(type_name("&mut Vec<u8>"), "Vec");
        assert_eq!(type_name("pflag.FlagSet"), "pflag.FlagSet");
        assert_eq!(type_name("[]*Flag"), "Flag");
        assert_eq!(type_name("Optional[str]"), "Optional");
    }
}
