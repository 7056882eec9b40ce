//! The search rules of the fifteen languages of the shared table ([`cc_languages`]: names,
//! aliases, extensions, grammars), and [`Languages`], the parser set that looks them up by
//! name or by file extension.

use std::path::Path;
use std::sync::Arc;

use cc_languages::LanguageSpec;

use crate::language::{ContextKind, Language, Scaffold};

use ContextKind::{ClassMember, Expression, Statement, TopLevel};

/// Stands in for `$` where `$NAME` is not an identifier: a letter in every grammar that
/// accepts Unicode identifiers, and never typed in real code by accident.
const MICRO: char = 'µ';

/// A scaffold literal (a struct expression, so `&[...]` of them is promoted to `'static`).
macro_rules! s {
    ($context:expr, $prefix:expr, $suffix:expr) => {
        Scaffold {
            context: $context,
            prefix: $prefix,
            suffix: $suffix,
        }
    };
}

/// A language described by data: one grammar plus its ladder and omission rules (each
/// field is the [`Language`] method of the same name; [`base`] gives the defaults).
pub struct BuiltinLanguage {
    /// Name, aliases, extensions and grammar, from the shared table.
    spec: &'static LanguageSpec,
    meta_char: Option<char>,
    fallback_sigil: Option<&'static str>,
    quote_metavariables: bool,
    scaffolds: &'static [Scaffold],
    /// Fragments starting with one of these words try the class-member rung first.
    member_first: &'static [&'static str],
    /// Fragments starting with one of these words try the top-level rung first (C#'s
    /// `using X;` is a directive, not a `using` statement).
    top_first: &'static [&'static str],
    /// Fragments starting with one of these words are declarations and never try the
    /// expression rung (whose clean misreading would beat a better rung's lenient parse).
    not_expressions: &'static [&'static str],
    member_preferred_kinds: &'static [&'static str],
    wrappers: &'static [&'static str],
    list_containers: &'static [&'static str],
    equivalent_kinds: &'static [(&'static str, &'static str)],
    omittable_fields: &'static [&'static str],
    omittable_kinds: &'static [&'static str],
    omittable_after_token: &'static [(&'static str, &'static str)],
    omittable_children: &'static [(&'static str, &'static str)],
    omittable_containers: &'static [&'static str],
    sets_aside_attribute_macros: bool,
}

/// A language with one statement rung, and the common rules.
fn base(spec: &'static LanguageSpec) -> BuiltinLanguage {
    BuiltinLanguage {
        spec,
        meta_char: None,
        fallback_sigil: None,
        quote_metavariables: false,
        scaffolds: &[s!(Statement, "", "")],
        member_first: &[],
        top_first: &[],
        not_expressions: &[],
        member_preferred_kinds: &[],
        wrappers: &["expression_statement"],
        list_containers: &[],
        equivalent_kinds: &[],
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &[],
        omittable_after_token: &[],
        omittable_children: &[],
        omittable_containers: &[],
        sets_aside_attribute_macros: false,
    }
}

impl std::fmt::Debug for BuiltinLanguage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinLanguage")
            .field("name", &self.spec.name)
            .field("extensions", &self.spec.extensions)
            .finish_non_exhaustive()
    }
}

impl BuiltinLanguage {
    /// Other names the language answers to (`py`, `golang`, `cs`, …).
    pub fn aliases(&self) -> &[&str] {
        self.spec.aliases
    }

    /// The entry of the shared language table.
    pub fn spec(&self) -> &'static LanguageSpec {
        self.spec
    }
}

const COMMON_FIELDS: &[&str] = &[
    "return_type",
    "type_parameters",
    "alternative",
    "decorator",
    "decorators",
];

impl Language for BuiltinLanguage {
    fn name(&self) -> &str {
        self.spec.name
    }

    fn extensions(&self) -> &[&str] {
        self.spec.extensions
    }

    fn grammar(&self) -> tree_sitter::Language {
        self.spec.grammar()
    }

    fn kind_graph(&self) -> Option<&'static cc_languages::KindGraph> {
        self.spec.kind_graph()
    }

    fn meta_char(&self) -> Option<char> {
        self.meta_char
    }

    fn scaffolds(&self, fragment: &str) -> Vec<Scaffold> {
        let mut ladder = self.scaffolds.to_vec();
        let first_word = fragment
            .trim_start()
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '@'))
            .next()
            .unwrap_or("");
        let member_first = self.member_first.iter().any(|word| {
            if *word == "@" {
                first_word.starts_with('@')
            } else {
                first_word == *word
            }
        });
        if member_first {
            // Stable: keeps the class-member rungs in their order, ahead of the rest.
            ladder.sort_by_key(|scaffold| scaffold.context != ClassMember);
        }
        if self.top_first.contains(&first_word) {
            ladder.sort_by_key(|scaffold| scaffold.context != TopLevel);
        }
        if self.not_expressions.contains(&first_word) {
            ladder.retain(|scaffold| scaffold.context != Expression);
        }
        ladder
    }

    fn fallback_sigil(&self) -> Option<&str> {
        self.fallback_sigil
    }

    fn member_preferred_kinds(&self) -> &[&str] {
        self.member_preferred_kinds
    }

    fn quote_metavariables(&self) -> bool {
        self.quote_metavariables
    }

    fn list_containers(&self) -> &[&str] {
        self.list_containers
    }

    fn equivalent_kinds(&self) -> &[(&str, &str)] {
        self.equivalent_kinds
    }

    fn omittable_after_token(&self) -> &[(&str, &str)] {
        self.omittable_after_token
    }

    fn wrapper_kinds(&self) -> &[&str] {
        self.wrappers
    }

    fn omittable_fields(&self) -> &[&str] {
        self.omittable_fields
    }

    fn omittable_kinds(&self) -> &[&str] {
        self.omittable_kinds
    }

    fn omittable_children(&self) -> &[(&str, &str)] {
        self.omittable_children
    }

    fn omittable_containers(&self) -> &[&str] {
        self.omittable_containers
    }

    fn sets_aside_attribute_macros(&self) -> bool {
        self.sets_aside_attribute_macros
    }
}

fn python() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "", ""),
            s!(Expression, "__cc = (\n", "\n)"),
            s!(ClassMember, "class __Cc:\n    ", "\n"),
        ],
        omittable_fields: &["alternative", "cause", "return_type", "type_parameters"],
        omittable_kinds: &["decorator", "else_clause", "finally_clause"],
        ..base(&cc_languages::PYTHON)
    }
}

fn rust() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "fn __cc() {\n", "\n}"),
            s!(Expression, "fn __cc() {\nlet _ = ", ";\n}"),
            s!(Expression, "fn __cc() {\nmatch __cc {\n", "\n}\n}"),
            s!(ClassMember, "impl __Cc {\n", "\n}"),
            s!(ClassMember, "trait __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
        ],
        member_first: &["pub"],
        omittable_fields: &["alternative", "return_type", "type_parameters"],
        omittable_kinds: &[
            "attribute_item",
            "visibility_modifier",
            "function_modifiers",
            "where_clause",
        ],
        ..base(&cc_languages::RUST)
    }
}

fn javascript() -> BuiltinLanguage {
    BuiltinLanguage {
        scaffolds: JS_LADDER,
        member_first: &["static", "get", "set", "#"],
        omittable_fields: &["alternative", "finalizer", "decorator"],
        omittable_kinds: &["decorator"],
        ..base(&cc_languages::JAVASCRIPT)
    }
}

const JS_LADDER: &[Scaffold] = &[
    s!(Statement, "function __cc() {\n", "\n}"),
    // A `case` label is a statement only inside a `switch`.
    s!(Statement, "function __cc() {\nswitch (__cc) {\n", "\n}\n}"),
    s!(Expression, "(", ")"),
    s!(ClassMember, "class __Cc {\n", "\n}"),
    s!(TopLevel, "", ""),
];

const TS_MEMBER_FIRST: &[&str] = &[
    "public",
    "private",
    "protected",
    "readonly",
    "static",
    "abstract",
    "override",
    "declare",
    "get",
    "set",
    "#",
    "@",
];

fn typescript() -> BuiltinLanguage {
    BuiltinLanguage {
        scaffolds: JS_LADDER,
        member_first: TS_MEMBER_FIRST,
        omittable_fields: &[
            "alternative",
            "finalizer",
            "decorator",
            "return_type",
            "type_parameters",
        ],
        omittable_kinds: &["decorator", "accessibility_modifier", "override_modifier"],
        ..base(&cc_languages::TYPESCRIPT)
    }
}

fn tsx() -> BuiltinLanguage {
    BuiltinLanguage {
        spec: &cc_languages::TSX,
        ..typescript()
    }
}

fn go() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "package __cc\nfunc __cc() {\n", "\n}"),
            s!(Expression, "package __cc\nvar __cc = ", "\n"),
            s!(ClassMember, "package __cc\ntype __cc struct {\n", "\n}"),
            s!(ClassMember, "package __cc\ntype __cc interface {\n", "\n}"),
            s!(TopLevel, "package __cc\n", ""),
        ],
        omittable_fields: &["result", "type_parameters", "alternative"],
        ..base(&cc_languages::GO)
    }
}

fn c() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            // Expression first: without its `;`, `printf($$$A)` parses as a statement only
            // as a macro type specifier.
            s!(Expression, "int __cc = ", ";"),
            s!(Statement, "void __cc(void) {\n", "\n}"),
            s!(Statement, "void __cc(void) {\nswitch (__cc) {\n", "\n}\n}"),
            s!(ClassMember, "struct __cc {\n", "\n};"),
            s!(TopLevel, "", ""),
        ],
        omittable_fields: &["alternative"],
        // Qualifiers (`const`, `restrict`, MSVC's `__restrict`) are modifiers: a declaration
        // pattern that leaves them out matches `uint8_t* const p = …` too.
        omittable_kinds: &[
            "attribute_specifier",
            "attribute_declaration",
            "storage_class_specifier",
            "type_qualifier",
            "ms_pointer_modifier",
        ],
        sets_aside_attribute_macros: true,
        ..base(&cc_languages::C)
    }
}

fn cpp() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Expression, "auto __cc = ", ";"),
            s!(Statement, "void __cc() {\n", "\n}"),
            s!(Statement, "void __cc() {\nswitch (__cc) {\n", "\n}\n}"),
            s!(ClassMember, "class __cc {\n", "\n};"),
            s!(TopLevel, "", ""),
        ],
        member_first: &["public", "private", "protected", "virtual", "explicit"],
        omittable_fields: &["alternative"],
        omittable_kinds: &[
            "attribute_declaration",
            "attribute_specifier",
            "storage_class_specifier",
            "virtual",
            "type_qualifier",
            "ms_pointer_modifier",
        ],
        sets_aside_attribute_macros: true,
        ..base(&cc_languages::CPP)
    }
}

const JAVA_MEMBER_FIRST: &[&str] = &[
    "public",
    "private",
    "protected",
    "static",
    "final",
    "abstract",
    "synchronized",
    "native",
    "transient",
    "volatile",
    "default",
    "@",
];

fn java() -> BuiltinLanguage {
    BuiltinLanguage {
        scaffolds: &[
            s!(Statement, "class __Cc {\nvoid __cc() {\n", "\n}\n}"),
            // `super(…);` and `this(…);` are statements of a constructor only.
            s!(Statement, "class __Cc {\n__Cc() {\n", "\n}\n}"),
            s!(
                Statement,
                "class __Cc {\nvoid __cc() {\nswitch (__cc) {\n",
                "\n}\n}\n}"
            ),
            s!(Expression, "class __Cc {\nObject __cc = ", ";\n}"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            // An interface's constants and abstract methods are other kinds.
            s!(ClassMember, "interface __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
        ],
        member_first: JAVA_MEMBER_FIRST,
        top_first: &["import", "package"],
        omittable_fields: &["alternative", "type_parameters"],
        omittable_kinds: &[
            "annotation",
            "marker_annotation",
            "finally_clause",
            "throws",
        ],
        omittable_children: &[("object_creation_expression", "class_body")],
        omittable_containers: &["modifiers"],
        ..base(&cc_languages::JAVA)
    }
}

fn dart() -> BuiltinLanguage {
    BuiltinLanguage {
        scaffolds: &[
            s!(Statement, "void __cc() {\n", "\n}"),
            s!(Statement, "void __cc() {\nswitch (__cc) {\n", "\n}\n}"),
            s!(Expression, "var __cc = ", ";"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
        ],
        member_first: &[
            "static", "final", "late", "const", "factory", "@", "external",
        ],
        member_preferred_kinds: &["local_function_declaration"],
        omittable_fields: &["alternative", "return_type", "type_parameters"],
        omittable_kinds: &["annotation", "finally_clause", "type_parameters"],
        ..base(&cc_languages::DART)
    }
}

fn bash() -> BuiltinLanguage {
    BuiltinLanguage {
        // Bash names are ASCII (`for µV in` does not parse); `$NAME` in lower case stays a
        // parameter expansion, since it is not a metavariable.
        meta_char: Some('_'),
        wrappers: &[],
        omittable_fields: &[],
        omittable_kinds: &["elif_clause", "else_clause"],
        ..base(&cc_languages::BASH)
    }
}

fn json() -> BuiltinLanguage {
    BuiltinLanguage {
        quote_metavariables: true,
        scaffolds: &[s!(Expression, "", ""), s!(ClassMember, "{", "}")],
        wrappers: &[],
        omittable_fields: &[],
        ..base(&cc_languages::JSON)
    }
}

fn ruby() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        // A constant where Ruby wants one (`class $C < $P`).
        fallback_sigil: Some("Z"),
        scaffolds: &[
            s!(Statement, "", ""),
            s!(Expression, "__cc = (", ")"),
            s!(ClassMember, "class Cc__\n", "\nend"),
        ],
        wrappers: &[],
        list_containers: &[
            "body_statement",
            "then",
            "else",
            "do",
            "block_body",
            "argument_list",
            "begin_block",
        ],
        omittable_fields: &["alternative"],
        omittable_kinds: &["else", "ensure"],
        ..base(&cc_languages::RUBY)
    }
}

const CSHARP_MEMBER_FIRST: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "readonly",
    "abstract",
    "override",
    "virtual",
    "sealed",
    "extern",
    "event",
    "const",
];

fn c_sharp() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "class __Cc {\nvoid __cc() {\n", "\n}\n}"),
            s!(
                Statement,
                "class __Cc {\nvoid __cc() {\nswitch (__cc) {\n",
                "\n}\n}\n}"
            ),
            s!(Expression, "class __Cc {\nobject __cc = ", ";\n}"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
        ],
        member_first: CSHARP_MEMBER_FIRST,
        top_first: &["using", "namespace", "extern"],
        member_preferred_kinds: &["local_function_statement"],
        wrappers: &["expression_statement", "argument"],
        omittable_fields: &["type_parameters", "alternative"],
        omittable_kinds: &[
            "attribute_list",
            "type_parameter_list",
            "type_parameter_constraints_clause",
            "modifier",
            "finally_clause",
        ],
        ..base(&cc_languages::C_SHARP)
    }
}

const KOTLIN_MEMBER_FIRST: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "override",
    "open",
    "abstract",
    "lateinit",
    "const",
    "@",
];

fn kotlin() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "fun __cc() {\n", "\n}"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
            // Last: after `=`, Kotlin misreads declarations (see `not_expressions`).
            s!(Expression, "val __cc = ", "\n"),
        ],
        member_first: KOTLIN_MEMBER_FIRST,
        top_first: &["import", "package"],
        // `class C(…) { … }` after `=` reads cleanly as an infix call on `class`.
        not_expressions: &["class", "interface"],
        wrappers: &["value_argument"],
        // `class $C { $$$B }`: a lone `$$$B` in braces reads as an enum entry.
        equivalent_kinds: &[("enum_class_body", "class_body")],
        omittable_kinds: &[
            "annotation",
            "type_parameters",
            "type_constraints",
            "visibility_modifier",
            "inheritance_modifier",
            "member_modifier",
            "function_modifier",
            "property_modifier",
            "platform_modifier",
            "finally_block",
        ],
        omittable_after_token: &[
            ("function_declaration", ":"),
            ("if_expression", "else"),
            ("getter", ":"),
        ],
        omittable_containers: &["modifiers"],
        ..base(&cc_languages::KOTLIN)
    }
}

/// PHP: `$` begins every variable, so metavariables are rewritten to `µ` names (an upper-case
/// `$NAME` is a metavariable, a lower-case `$name` the program's variable, as in ast-grep);
/// every fragment is parsed after `<?php`.
fn php() -> BuiltinLanguage {
    BuiltinLanguage {
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "<?php\n", ""),
            s!(Expression, "<?php\n$__cc = ", ";"),
            s!(ClassMember, "<?php\nclass __Cc {\n", "\n}"),
        ],
        member_first: &[
            "public",
            "protected",
            "private",
            "static",
            "abstract",
            "final",
            "readonly",
            "function",
            "const",
            "use",
        ],
        omittable_kinds: &["attribute_list", "visibility_modifier"],
        ..base(&cc_languages::PHP)
    }
}

/// A language name the parser set does not know (the shared table's error).
pub use cc_languages::UnknownLanguage;

/// The search rules of a language of the shared table, or `None` for one structural search
/// has no rules for.
fn rules_for(spec: &'static LanguageSpec) -> Option<BuiltinLanguage> {
    let rules = match spec.name {
        "python" => python(),
        "rust" => rust(),
        "javascript" => javascript(),
        "typescript" => typescript(),
        "tsx" => tsx(),
        "go" => go(),
        "c" => c(),
        "cpp" => cpp(),
        "java" => java(),
        "dart" => dart(),
        "bash" => bash(),
        "json" => json(),
        "ruby" => ruby(),
        "c_sharp" => c_sharp(),
        "kotlin" => kotlin(),
        "php" => php(),
        _ => return None,
    };
    Some(rules)
}

/// The parser set: the languages a search may use, looked up by name or file extension.
#[derive(Debug, Clone)]
pub struct Languages {
    languages: Vec<Arc<BuiltinLanguage>>,
}

impl Default for Languages {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Languages {
    /// The sixteen languages of the shared table, with their search rules.
    pub fn builtin() -> Self {
        Languages {
            languages: cc_languages::TABLE
                .iter()
                .filter_map(|spec| rules_for(spec))
                .map(Arc::new)
                .collect(),
        }
    }

    /// Canonical names, in a stable order.
    pub fn names(&self) -> Vec<&str> {
        self.languages.iter().map(|l| l.spec.name).collect()
    }

    /// The language called `name` (canonical name or alias, any case).
    pub fn by_name(&self, name: &str) -> Option<Arc<dyn Language>> {
        self.languages
            .iter()
            .find(|l| l.spec.answers_to(name))
            .map(|l| l.clone() as Arc<dyn Language>)
    }

    /// [`by_name`](Self::by_name), or an error that lists the languages there are.
    pub fn lookup(&self, name: &str) -> Result<Arc<dyn Language>, UnknownLanguage> {
        self.by_name(name).ok_or_else(|| UnknownLanguage {
            name: name.to_owned(),
            known: self.names().into_iter().map(str::to_owned).collect(),
        })
    }

    /// The language of a file, from its extension.
    pub fn for_path(&self, path: &Path) -> Option<Arc<dyn Language>> {
        let spec = cc_languages::for_path(path)?;
        self.languages
            .iter()
            .find(|l| l.spec == spec)
            .map(|l| l.clone() as Arc<dyn Language>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads_in_this_tree_sitter() {
        for language in &Languages::builtin().languages {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&language.grammar())
                .unwrap_or_else(|e| panic!("{}: {e}", language.spec.name));
        }
    }

    #[test]
    fn lookup_by_name_alias_and_extension() {
        let set = Languages::builtin();
        assert_eq!(set.names().len(), 16);
        assert_eq!(set.for_path(Path::new("a.phtml")).unwrap().name(), "php");
        assert_eq!(set.by_name("PY").unwrap().name(), "python");
        assert_eq!(set.by_name("c-sharp").unwrap().name(), "c_sharp");
        assert_eq!(set.for_path(Path::new("a/b.pyi")).unwrap().name(), "python");
        assert_eq!(set.for_path(Path::new("x.tsx")).unwrap().name(), "tsx");
        assert_eq!(set.for_path(Path::new("x.kts")).unwrap().name(), "kotlin");
        assert!(set.for_path(Path::new("README")).is_none());
        assert!(set.by_name("cobol").is_none());
        let unknown = set.lookup("cobol").err().unwrap();
        assert_eq!(unknown.known.len(), 16);
        assert!(
            unknown
                .to_string()
                .starts_with("unknown language `cobol`; use one of: python, rust"),
            "{unknown}"
        );
    }

    #[test]
    fn java_member_modifiers_try_class_member_first() {
        let java = java();
        assert_eq!(java.scaffolds("private int x;")[0].context, ClassMember);
        assert_eq!(
            java.scaffolds("@Override void f() {}")[0].context,
            ClassMember
        );
        assert_eq!(java.scaffolds("int x = 1;")[0].context, Statement);
    }
}
