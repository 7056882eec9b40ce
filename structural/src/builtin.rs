//! The fifteen built-in languages, each from its crates.io grammar, and [`Languages`], the
//! parser set that looks them up by name or by file extension.

use std::path::Path;
use std::sync::Arc;

use tree_sitter_language::LanguageFn;

use crate::language::{ContextKind, Language, Scaffold};

use ContextKind::{ClassMember, Expression, Statement, TopLevel};

/// Stands in for `$` where `$NAME` is not an identifier: a letter in every grammar that
/// accepts Unicode identifiers, and never typed in real code by accident.
const MICRO: char = 'µ';

/// A language described by data: one grammar plus its ladder and omission rules.
pub struct BuiltinLanguage {
    name: &'static str,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
    grammar: LanguageFn,
    meta_char: Option<char>,
    scaffolds: &'static [Scaffold],
    /// Fragments starting with one of these words try the class-member rung first.
    member_first: &'static [&'static str],
    /// Fragments starting with one of these words try the top-level rung first (C#'s
    /// `using X;` is a directive, not a `using` statement).
    top_first: &'static [&'static str],
    wrappers: &'static [&'static str],
    omittable_fields: &'static [&'static str],
    omittable_kinds: &'static [&'static str],
    annotation_containers: &'static [&'static str],
}

impl std::fmt::Debug for BuiltinLanguage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinLanguage")
            .field("name", &self.name)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl BuiltinLanguage {
    /// Other names the language answers to (`py`, `golang`, `cs`, …).
    pub fn aliases(&self) -> &[&str] {
        self.aliases
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
        self.name
    }

    fn extensions(&self) -> &[&str] {
        self.extensions
    }

    fn grammar(&self) -> tree_sitter::Language {
        self.grammar.into()
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
        ladder
    }

    fn quote_metavariables(&self) -> bool {
        self.name == "json"
    }

    fn omittable_after_token(&self) -> &[(&str, &str)] {
        match self.name {
            "kotlin" => &[
                ("function_declaration", ":"),
                ("if_expression", "else"),
                ("getter", ":"),
            ],
            _ => &[],
        }
    }

    fn list_containers(&self) -> &[&str] {
        match self.name {
            "ruby" => &[
                "body_statement",
                "then",
                "else",
                "do",
                "block_body",
                "argument_list",
                "begin_block",
            ],
            _ => &[],
        }
    }

    fn member_preferred_kinds(&self) -> &[&str] {
        match self.name {
            "c_sharp" => &["local_function_statement"],
            "dart" => &["local_function_declaration"],
            _ => &[],
        }
    }

    fn fallback_sigil(&self) -> Option<&str> {
        // A constant where Ruby wants one (`class $C < $P`).
        (self.name == "ruby").then_some("Z")
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

    fn annotation_containers(&self) -> &[&str] {
        self.annotation_containers
    }
}

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

const STATEMENT_WRAPPERS: &[&str] = &["expression_statement"];

fn python() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "python",
        aliases: &["py"],
        extensions: &["py", "pyi"],
        grammar: tree_sitter_python::LANGUAGE,
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "", ""),
            s!(Expression, "__cc = (\n", "\n)"),
            s!(ClassMember, "class __Cc:\n    ", "\n"),
        ],
        member_first: &[],
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &["decorator"],
        annotation_containers: &[],
    }
}

fn rust() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "rust",
        aliases: &["rs"],
        extensions: &["rs"],
        grammar: tree_sitter_rust::LANGUAGE,
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
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &["attribute_item"],
        annotation_containers: &[],
    }
}

fn javascript() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "javascript",
        aliases: &["js", "jsx"],
        extensions: &["js", "mjs", "cjs", "jsx"],
        grammar: tree_sitter_javascript::LANGUAGE,
        meta_char: None,
        scaffolds: JS_LADDER,
        member_first: &["static", "get", "set", "#"],
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &["decorator"],
        annotation_containers: &[],
    }
}

const JS_LADDER: &[Scaffold] = &[
    s!(Statement, "function __cc() {\n", "\n}"),
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
        name: "typescript",
        aliases: &["ts"],
        extensions: &["ts", "mts", "cts"],
        grammar: tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
        meta_char: None,
        scaffolds: JS_LADDER,
        member_first: TS_MEMBER_FIRST,
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &["decorator"],
        annotation_containers: &[],
    }
}

fn tsx() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "tsx",
        aliases: &[],
        extensions: &["tsx"],
        grammar: tree_sitter_typescript::LANGUAGE_TSX,
        ..typescript()
    }
}

fn go() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "go",
        aliases: &["golang"],
        extensions: &["go"],
        grammar: tree_sitter_go::LANGUAGE,
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "package __cc\nfunc __cc() {\n", "\n}"),
            s!(Expression, "package __cc\nvar __cc = ", "\n"),
            s!(ClassMember, "package __cc\ntype __cc struct {\n", "\n}"),
            s!(ClassMember, "package __cc\ntype __cc interface {\n", "\n}"),
            s!(TopLevel, "package __cc\n", ""),
        ],
        member_first: &[],
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: &["result", "type_parameters", "alternative"],
        omittable_kinds: &[],
        annotation_containers: &[],
    }
}

fn c() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "c",
        aliases: &[],
        extensions: &["c", "h"],
        grammar: tree_sitter_c::LANGUAGE,
        meta_char: Some(MICRO),
        scaffolds: &[
            // Expression first: without its `;`, `printf($$$A)` parses as a statement only
            // as a macro type specifier.
            s!(Expression, "int __cc = ", ";"),
            s!(Statement, "void __cc(void) {\n", "\n}"),
            s!(ClassMember, "struct __cc {\n", "\n};"),
            s!(TopLevel, "", ""),
        ],
        member_first: &[],
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: &["alternative"],
        omittable_kinds: &["attribute_specifier"],
        annotation_containers: &[],
    }
}

fn cpp() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "cpp",
        aliases: &["c++", "cxx"],
        extensions: &[
            "cpp", "cc", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp",
        ],
        grammar: tree_sitter_cpp::LANGUAGE,
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Expression, "auto __cc = ", ";"),
            s!(Statement, "void __cc() {\n", "\n}"),
            s!(ClassMember, "class __cc {\n", "\n};"),
            s!(TopLevel, "", ""),
        ],
        member_first: &["public", "private", "protected", "virtual", "explicit"],
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: &["alternative"],
        omittable_kinds: &["attribute_declaration", "attribute_specifier"],
        annotation_containers: &[],
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
        name: "java",
        aliases: &[],
        extensions: &["java"],
        grammar: tree_sitter_java::LANGUAGE,
        meta_char: None,
        scaffolds: &[
            s!(Statement, "class __Cc {\nvoid __cc() {\n", "\n}\n}"),
            s!(Expression, "class __Cc {\nObject __cc = ", ";\n}"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
        ],
        member_first: JAVA_MEMBER_FIRST,
        top_first: &["import", "package"],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &["annotation", "marker_annotation"],
        annotation_containers: &["modifiers"],
    }
}

fn dart() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "dart",
        aliases: &[],
        extensions: &["dart"],
        grammar: tree_sitter_dart::LANGUAGE,
        meta_char: None,
        scaffolds: &[
            s!(Statement, "void __cc() {\n", "\n}"),
            s!(Expression, "var __cc = ", ";"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
        ],
        member_first: &[
            "static", "final", "late", "const", "factory", "@", "external",
        ],
        top_first: &[],
        wrappers: STATEMENT_WRAPPERS,
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &["annotation", "marker_annotation"],
        annotation_containers: &[],
    }
}

fn bash() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "bash",
        aliases: &["sh", "shell"],
        extensions: &["sh", "bash"],
        grammar: tree_sitter_bash::LANGUAGE,
        // Bash names are ASCII (`for µV in` does not parse); `$NAME` in lower case stays a
        // parameter expansion, since it is not a metavariable.
        meta_char: Some('_'),
        scaffolds: &[s!(Statement, "", "")],
        member_first: &[],
        top_first: &[],
        wrappers: &[],
        omittable_fields: &[],
        omittable_kinds: &[],
        annotation_containers: &[],
    }
}

fn json() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "json",
        aliases: &[],
        extensions: &["json"],
        grammar: tree_sitter_json::LANGUAGE,
        meta_char: None,
        scaffolds: &[s!(Expression, "", ""), s!(ClassMember, "{", "}")],
        member_first: &[],
        top_first: &[],
        wrappers: &[],
        omittable_fields: &[],
        omittable_kinds: &[],
        annotation_containers: &[],
    }
}

fn ruby() -> BuiltinLanguage {
    BuiltinLanguage {
        name: "ruby",
        aliases: &["rb"],
        extensions: &["rb", "rake", "gemspec"],
        grammar: tree_sitter_ruby::LANGUAGE,
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "", ""),
            s!(Expression, "__cc = (", ")"),
            s!(ClassMember, "class Cc__\n", "\nend"),
        ],
        member_first: &[],
        top_first: &[],
        wrappers: &[],
        omittable_fields: &["alternative"],
        omittable_kinds: &[],
        annotation_containers: &[],
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
        name: "c_sharp",
        aliases: &["csharp", "cs", "c#"],
        extensions: &["cs"],
        grammar: tree_sitter_c_sharp::LANGUAGE,
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "class __Cc {\nvoid __cc() {\n", "\n}\n}"),
            s!(Expression, "class __Cc {\nobject __cc = ", ";\n}"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
        ],
        member_first: CSHARP_MEMBER_FIRST,
        top_first: &["using", "namespace", "extern"],
        wrappers: &["expression_statement", "argument"],
        omittable_fields: &["type_parameters", "alternative"],
        omittable_kinds: &["attribute_list", "type_parameter_list"],
        annotation_containers: &[],
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
        name: "kotlin",
        aliases: &["kt"],
        extensions: &["kt", "kts"],
        grammar: tree_sitter_kotlin_ng::LANGUAGE,
        meta_char: Some(MICRO),
        scaffolds: &[
            s!(Statement, "fun __cc() {\n", "\n}"),
            s!(ClassMember, "class __Cc {\n", "\n}"),
            s!(TopLevel, "", ""),
            // Last: Kotlin reads `class C(...) { }` after `=` as an infix call on `class`.
            s!(Expression, "val __cc = ", "\n"),
        ],
        member_first: KOTLIN_MEMBER_FIRST,
        top_first: &["import", "package"],
        wrappers: &["value_argument"],
        omittable_fields: COMMON_FIELDS,
        omittable_kinds: &["annotation", "type_parameters"],
        annotation_containers: &["modifiers"],
    }
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
    /// The fifteen built-in languages.
    pub fn builtin() -> Self {
        let languages = vec![
            python(),
            rust(),
            javascript(),
            typescript(),
            tsx(),
            go(),
            c(),
            cpp(),
            java(),
            dart(),
            bash(),
            json(),
            ruby(),
            c_sharp(),
            kotlin(),
        ];
        Languages {
            languages: languages.into_iter().map(Arc::new).collect(),
        }
    }

    /// Canonical names, in a stable order.
    pub fn names(&self) -> Vec<&str> {
        self.languages.iter().map(|l| l.name).collect()
    }

    /// The language called `name` (canonical name or alias, any case).
    pub fn by_name(&self, name: &str) -> Option<Arc<dyn Language>> {
        let wanted = name.trim().to_ascii_lowercase().replace('-', "_");
        self.languages
            .iter()
            .find(|l| l.name == wanted || l.aliases.contains(&wanted.as_str()))
            .map(|l| l.clone() as Arc<dyn Language>)
    }

    /// The language of a file, from its extension.
    pub fn for_path(&self, path: &Path) -> Option<Arc<dyn Language>> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.languages
            .iter()
            .find(|l| l.extensions.contains(&ext.as_str()))
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
                .unwrap_or_else(|e| panic!("{}: {e}", language.name));
        }
    }

    #[test]
    fn lookup_by_name_alias_and_extension() {
        let set = Languages::builtin();
        assert_eq!(set.names().len(), 15);
        assert_eq!(set.by_name("PY").unwrap().name(), "python");
        assert_eq!(set.by_name("c-sharp").unwrap().name(), "c_sharp");
        assert_eq!(set.for_path(Path::new("a/b.pyi")).unwrap().name(), "python");
        assert_eq!(set.for_path(Path::new("x.tsx")).unwrap().name(), "tsx");
        assert_eq!(set.for_path(Path::new("x.kts")).unwrap().name(), "kotlin");
        assert!(set.for_path(Path::new("README")).is_none());
        assert!(set.by_name("cobol").is_none());
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
