//! What the graph knows of each language, in one table: its tags query, how its qualified
//! names are written, what its imports bring, how a method names its receiver and which
//! method constructs a class. Extraction, import resolution and name resolution read these
//! facts from here; the code that differs per language beyond them (an import's module path,
//! a receiver's keywords) matches on [`LanguageId`].
//!
//! Every language of [`cc_languages::TABLE`] has exactly one entry (a unit test keeps it so),
//! and each tags query's captures are checked when it is loaded
//! ([`crate::extract::query_for`]).

use cc_languages::{LanguageId, LanguageSpec};

/// How a call of a class finds the constructor it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constructor {
    /// A method of this name (`__init__`, `constructor`, `initialize`, `__construct`).
    Named(&'static str),
    /// A method named as the class (Java, C#, C++, Dart).
    ClassName,
    /// None is looked for.
    Unknown,
}

/// The graph's facts about one language.
#[derive(Debug)]
pub struct GraphLanguage {
    /// Which language.
    pub id: LanguageId,
    /// The tags query (`queries/LANG.scm`, shared parts first); `None`: no symbols (JSON).
    pub query: Option<&'static str>,
    /// Between the parts of a qualified name (`::` in Rust and C++).
    pub separator: &'static str,
    /// Languages whose packages are one namespace share a family (`jvm`, `js`, `c`);
    /// `None`: the language's own name.
    pub family: Option<&'static str>,
    /// Its imports make every name of the imported file visible (C's includes, Ruby's
    /// `require`, C#'s `using`).
    pub imports_everything: bool,
    /// A wildcard import in a module re-exports what it brings (`from .x import *` in
    /// `__init__.py`, `export * from`, `pub use a::*`).
    pub reexports_wildcards: bool,
    /// An include brings what the included file includes too (C and C++ headers).
    pub includes_are_transitive: bool,
    /// A bare name inside a method finds the class's members (Java, C#, Kotlin, C++, Dart,
    /// Ruby).
    pub implicit_this: bool,
    /// The receiver of a method that does not write one (`self`, `this`); `None` where
    /// methods have no implicit receiver.
    pub default_self: Option<&'static str>,
    /// The constructor a call of a class runs.
    pub constructor: Constructor,
}

/// Every field at its most common value, for the table below.
const PLAIN: GraphLanguage = GraphLanguage {
    id: LanguageId::Json,
    query: None,
    separator: ".",
    family: None,
    imports_everything: false,
    reexports_wildcards: false,
    includes_are_transitive: false,
    implicit_this: false,
    default_self: Some("this"),
    constructor: Constructor::Unknown,
};

const JS_QUERY: &str = concat!(
    include_str!("../queries/js_common.scm"),
    include_str!("../queries/javascript.scm")
);
/// TypeScript; TSX is the same but for its grammar.
const TYPESCRIPT: GraphLanguage = GraphLanguage {
    id: LanguageId::TypeScript,
    query: Some(concat!(
        include_str!("../queries/js_common.scm"),
        include_str!("../queries/typescript.scm")
    )),
    family: Some("js"),
    reexports_wildcards: true,
    constructor: Constructor::Named("constructor"),
    ..PLAIN
};

/// One entry per language, in [`LanguageId`]'s order: an id is its entry's place (a unit test
/// keeps it so), since resolution asks for every candidate of every by-name lookup.
static TABLE: [GraphLanguage; 16] = [
    GraphLanguage {
        id: LanguageId::Python,
        query: Some(include_str!("../queries/python.scm")),
        reexports_wildcards: true,
        default_self: Some("self"),
        constructor: Constructor::Named("__init__"),
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Rust,
        query: Some(include_str!("../queries/rust.scm")),
        separator: "::",
        reexports_wildcards: true,
        default_self: Some("self"),
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::JavaScript,
        query: Some(JS_QUERY),
        family: Some("js"),
        reexports_wildcards: true,
        constructor: Constructor::Named("constructor"),
        ..PLAIN
    },
    TYPESCRIPT,
    GraphLanguage {
        id: LanguageId::Tsx,
        ..TYPESCRIPT
    },
    GraphLanguage {
        id: LanguageId::Go,
        query: Some(include_str!("../queries/go.scm")),
        default_self: None,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::C,
        query: Some(include_str!("../queries/c.scm")),
        family: Some("c"),
        imports_everything: true,
        includes_are_transitive: true,
        default_self: None,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Cpp,
        query: Some(concat!(
            include_str!("../queries/c.scm"),
            include_str!("../queries/cpp.scm")
        )),
        separator: "::",
        family: Some("c"),
        imports_everything: true,
        includes_are_transitive: true,
        implicit_this: true,
        constructor: Constructor::ClassName,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Java,
        query: Some(include_str!("../queries/java.scm")),
        family: Some("jvm"),
        implicit_this: true,
        constructor: Constructor::ClassName,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Dart,
        query: Some(include_str!("../queries/dart.scm")),
        imports_everything: true,
        implicit_this: true,
        constructor: Constructor::ClassName,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Bash,
        query: Some(include_str!("../queries/bash.scm")),
        imports_everything: true,
        default_self: None,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Json,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Ruby,
        query: Some(include_str!("../queries/ruby.scm")),
        imports_everything: true,
        implicit_this: true,
        default_self: Some("self"),
        constructor: Constructor::Named("initialize"),
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::CSharp,
        query: Some(include_str!("../queries/c_sharp.scm")),
        imports_everything: true,
        implicit_this: true,
        constructor: Constructor::ClassName,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Kotlin,
        query: Some(include_str!("../queries/kotlin.scm")),
        family: Some("jvm"),
        implicit_this: true,
        ..PLAIN
    },
    GraphLanguage {
        id: LanguageId::Php,
        query: Some(include_str!("../queries/php.scm")),
        constructor: Constructor::Named("__construct"),
        ..PLAIN
    },
];

/// The graph's facts about `language`.
pub fn of(language: &LanguageSpec) -> &'static GraphLanguage {
    of_id(language.id)
}

/// The graph's facts about the language `id`.
pub fn of_id(id: LanguageId) -> &'static GraphLanguage {
    &TABLE[id as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_exactly_one_entry() {
        for language in cc_languages::TABLE {
            let entries = TABLE.iter().filter(|e| e.id == language.id).count();
            assert_eq!(entries, 1, "{}", language.name);
            assert_eq!(
                of(language).id,
                language.id,
                "{} is out of place",
                language.name
            );
        }
        assert_eq!(TABLE.len(), cc_languages::TABLE.len());
    }
}
