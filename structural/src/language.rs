//! What the core needs to know about a language: its grammar, how metavariables are spelled
//! in it, the scaffolds a fragment is parsed inside, and which optional parts a pattern may
//! leave out. The core has no built-in languages; [`crate::builtin`] supplies fifteen.

use std::fmt;
use std::str::FromStr;

/// A context in the scaffold ladder: where in a file the fragment is parsed as if it stood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContextKind {
    /// A statement inside a function body (or a module's top level where that is the same).
    Statement,
    /// An expression (the right-hand side of an assignment, a JSON value).
    Expression,
    /// A member of a class body (a JSON object's pair).
    ClassMember,
    /// A top-level declaration of a file.
    TopLevel,
}

impl ContextKind {
    /// Every context, in the default ladder order.
    pub const ALL: [ContextKind; 4] = [
        ContextKind::Statement,
        ContextKind::Expression,
        ContextKind::ClassMember,
        ContextKind::TopLevel,
    ];

    /// The name used in results and the `context` argument.
    pub fn name(self) -> &'static str {
        match self {
            ContextKind::Statement => "statement",
            ContextKind::Expression => "expression",
            ContextKind::ClassMember => "class_member",
            ContextKind::TopLevel => "top_level",
        }
    }
}

impl fmt::Display for ContextKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A context name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown context `{0}`; use one of statement, expression, class_member, top_level")]
pub struct UnknownContext(pub String);

impl FromStr for ContextKind {
    type Err = UnknownContext;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s
            .trim()
            .to_ascii_lowercase()
            .replace(['-', ' '], "_")
            .as_str()
        {
            "statement" | "stmt" => Ok(ContextKind::Statement),
            "expression" | "expr" => Ok(ContextKind::Expression),
            "class_member" | "member" => Ok(ContextKind::ClassMember),
            "top_level" | "top_level_declaration" | "declaration" => Ok(ContextKind::TopLevel),
            _ => Err(UnknownContext(s.to_owned())),
        }
    }
}

/// One rung of the ladder: the fragment is parsed as `prefix + fragment + suffix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaffold {
    /// Which context this scaffold stands for.
    pub context: ContextKind,
    /// Text before the fragment.
    pub prefix: &'static str,
    /// Text after the fragment.
    pub suffix: &'static str,
}

impl Scaffold {
    /// A scaffold for `context`.
    pub const fn new(context: ContextKind, prefix: &'static str, suffix: &'static str) -> Self {
        Scaffold {
            context,
            prefix,
            suffix,
        }
    }
}

/// A language the core can search: everything grammar-specific lives behind this trait.
///
/// Names (node kinds, field names) are given as strings; the core resolves them to the
/// grammar's ids once per pattern.
pub trait Language: Send + Sync + fmt::Debug {
    /// The canonical name (`python`, `c_sharp`, …).
    fn name(&self) -> &str;

    /// File extensions without the dot (`py`, `pyi`).
    fn extensions(&self) -> &[&str];

    /// The tree-sitter grammar.
    fn grammar(&self) -> tree_sitter::Language;

    /// Which kinds may hold which (from the grammar's `node-types.json`), so a search can
    /// step over subtrees that cannot hold a match; `None` enters every node.
    fn kind_graph(&self) -> Option<&'static cc_languages::KindGraph> {
        None
    }

    /// The character that stands in for `$` while a pattern is parsed, when `$NAME` is not an
    /// identifier in this grammar; `None` when `$NAME` already parses as one.
    fn meta_char(&self) -> Option<char>;

    /// A second spelling for `$`, tried when no context accepts the pattern with
    /// [`meta_char`](Self::meta_char): Ruby's class names must start with an ASCII capital,
    /// which `µ` is not.
    fn fallback_sigil(&self) -> Option<&str> {
        None
    }

    /// Root kinds that, when the statement rung yields them, give way to the class-member
    /// rung if it also accepts: `void M() {}` in a C# method body is a local function, but
    /// a method is what a search for it usually means.
    fn member_preferred_kinds(&self) -> &[&str] {
        &[]
    }

    /// Whether a metavariable outside a string must be written as a string to parse (JSON
    /// has no identifiers: `{"a": $V}` is parsed as `{"a": "$V"}`, and `$V` then stands for
    /// any value).
    fn quote_metavariables(&self) -> bool {
        false
    }

    /// The ladder for `fragment`, first rung first. The order may depend on the fragment
    /// (Java tries class members first for a fragment that starts with a member modifier).
    fn scaffolds(&self, fragment: &str) -> Vec<Scaffold>;

    /// Node kinds that only wrap another node to make it a statement (`expression_statement`):
    /// a metavariable that is a wrapper's whole content stands for the wrapper, so `$$$B` as a
    /// body matches a run of statements.
    fn wrapper_kinds(&self) -> &[&str] {
        &["expression_statement"]
    }

    /// Kinds that hold a run of statements or arguments directly, with no wrapper around
    /// each (Ruby's `body_statement`): a `$$$` that is such a node's only content stands for
    /// the run inside it.
    fn list_containers(&self) -> &[&str] {
        &[]
    }

    /// `(pattern kind, code kind)`: a pattern node of the first kind also matches code of the
    /// second, where the grammar reads a fragment differently from the same code in a file
    /// (Kotlin reads the body of `class $C { $$$B }` as an enum class body, `$$$B` being one
    /// enum entry, while a file's class has a class body).
    fn equivalent_kinds(&self) -> &[(&str, &str)] {
        &[]
    }

    /// Fields a pattern may leave out entirely (`return_type`, `type_parameters`,
    /// `alternative`, …): a code node's child in such a field is then skipped.
    ///
    /// The rule for every omittable part (fields, kinds, children after a token): it is a
    /// part whose presence does not change what the construct is — an `else`/`elif`/`finally`
    /// branch, a `from` cause, the class body of `new`, modifiers, decorators and
    /// annotations, type parameters, a return type. A pattern that leaves it out matches code
    /// with or without it, and a rewrite carries it over (the crate README has the table).
    fn omittable_fields(&self) -> &[&str] {
        &[
            "return_type",
            "type_parameters",
            "alternative",
            "decorator",
            "decorators",
        ]
    }

    /// Child kinds a pattern may leave out entirely (annotations, decorators, attributes)
    /// wherever they occur, field or not.
    fn omittable_kinds(&self) -> &[&str] {
        &[]
    }

    /// `(parent kind, token)`: in a `parent kind` node, the named child right after `token` is
    /// an omittable optional part when the pattern's node does not spell `token` (Kotlin's
    /// return type after `:`, its `else` branch, where the grammar has no field names).
    fn omittable_after_token(&self) -> &[(&str, &str)] {
        &[]
    }

    /// Container kinds that may be left out when every named child they hold is of an
    /// omittable kind (Kotlin's `modifiers` holding `private` and annotations, but not the
    /// `enum` of an enum class, which makes it another construct).
    fn omittable_containers(&self) -> &[&str] {
        &[]
    }

    /// `(parent kind, child kind)`: a child of that kind is an omittable part in that parent
    /// only (Java's anonymous class body in `new X() { … }`).
    fn omittable_children(&self) -> &[(&str, &str)] {
        &[]
    }

    /// Whether the statements of a file that hold syntax errors are read again with their
    /// attribute macros set aside (C and C++: `uint32_t* BROTLI_RESTRICT const x = …`; see
    /// [`crate::repair`]).
    fn sets_aside_attribute_macros(&self) -> bool {
        false
    }
}
