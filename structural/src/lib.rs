//! Structural search and staged rewrite over tree-sitter grammars.
//!
//! A pattern is a code fragment in the file's language with metavariables; it is parsed with
//! the file's own grammar and matched against syntax trees, never text.
//!
//! ```
//! use cc_structural::{Captured, ContextKind, Languages, Pattern, SourceParser};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let python = Languages::builtin().by_name("python").expect("built in");
//! let pattern = Pattern::new(python, "if $A: $$$B", None)?;
//! assert_eq!(pattern.context(), ContextKind::Statement);
//! let code = "if ready:\n    go()\n    stop()\n";
//! let found = pattern.find_all(&mut SourceParser::new(), code.as_bytes())?;
//! let m = &found.matches[0];
//! assert_eq!((m.start.line, m.start.column), (1, 1));
//! assert_eq!(m.captures[0], ("A".to_owned(), Captured::Node(3..8)));
//! # Ok(()) }
//! ```
//!
//! # Metavariables ([`meta`])
//!
//! `$NAME` (upper-case letters, digits, `_`) matches exactly one named node; `$$$NAME` zero
//! or more siblings; `$$$` the same without binding; `$_` and `$_NAME` one node without
//! binding (each occurrence independent). A metavariable used twice must capture the same
//! tokens, whitespace and comments aside; the first occurrence is reported. `"$VAL"` (a
//! string literal whose whole content is one metavariable) binds the content; any other `$`
//! inside a string literal is literal text. Where `$NAME` is not an identifier in the
//! grammar, `$` is replaced by a substitute character before parsing and mapped back; bash's
//! lower-case `$abc` is not a metavariable, so it stays a parameter expansion.
//!
//! # The scaffold ladder ([`pattern`])
//!
//! The fragment is parsed inside each of its language's scaffolds: statement, expression,
//! class member, top-level declaration (a function body for Go, Dart, C, Java…, a class
//! body for members, an object for JSON pairs). A scaffold accepts when the fragment's own
//! byte range is one node (the innermost such) and the parse has no `ERROR` or missing node,
//! except an `ERROR` that is exactly one metavariable. Readings are ranked: one that takes a
//! keyword of the grammar for an identifier (C's `return -1;` as `return - 1`) loses to any
//! other, then clean parses win over lenient ones, then the first accepting scaffold wins
//! and [`Pattern::context`] names it; a fragment ending in `;` is not tried as an expression
//! first. The same text read as another kind in another declaration context (a Java field
//! and a local) is an alternate reading that a node may match instead. The order is tuned per
//! language (Java tries class members first for `private int x;`; Kotlin's `class …` never
//! tries the expression rung). If none accepts, [`PatternError::Unparsable`] lists each
//! context and where its parse broke. Where the statement rung reads a function-shaped
//! fragment as a local function (C#, Dart), the pattern is the method and also matches the
//! top-level and local functions of that shape. A grammar that reads a fragment as another
//! kind than the same code in a file declares the pair ([`Language::equivalent_kinds`]:
//! Kotlin's `class $C { $$$B }` body).
//!
//! # Matching ([`matcher`]; each rule has a test in `tests/it/semantics.rs`)
//!
//! - Every named child of the code must be matched, except one in an omittable part the
//!   pattern leaves out entirely: a part whose presence does not change what the construct
//!   is (`else`/`elif`/`finally`, a `from` cause, the class body of `new`, modifiers,
//!   decorators and annotations, type parameters, a return type; the crate README has the
//!   table per language). So `import os` does not match `import os, sys`, `let x` does not
//!   match `let x = 1`, `if $A: yield` does not swallow further statements, while
//!   `def $F($$$P): $$$B` matches annotated functions. What was left out is reported in
//!   [`Match::omitted`].
//! - Unnamed tokens and comments in the code are skipped where the pattern does not spell
//!   them (keyword tokens such as `async` are reported in [`Match::omitted`] too); unnamed
//!   tokens the pattern spells must be there (a `;` may be a line end).
//! - `$$$` takes the shortest run that lets the rest match, backtracking within a budget,
//!   so `{ $$$A if ($X) {} $$$B }` finds a later `if`; a zero-length `$$$` takes its
//!   separator (`,` or `;`, never a bracket) with it, so `f($A, $$$R)` matches `f(x)`.
//! - Code inside strings and comments never matches a code pattern; nested matches are all
//!   found.
//!
//! # Search, rewrite, commit
//!
//! [`search`] walks a folder (`.gitignore` honoured, hidden files, binary files and
//! dependency folders such as `node_modules` skipped: `cc_workspace::walk`) in
//! parallel and tests the pattern's literals against each file's bytes before parsing it
//! (tokens every match holds: a `;` or a separator an empty `$$$` may take is not one).
//! [`stage_rewrite`] computes a rewrite without writing; its [`Transaction`] commits all
//! files or none (see [`transaction`], reusable for any multi-file change). A rewrite
//! replaces [`Match::rewrite_range`]: a statement's `;` is kept once, whether or not the
//! pattern spells it. A rewrite changes only what the pattern names: what a match left out is
//! carried over at its place, or that match is skipped and listed
//! ([`StagedRewrite::skipped_matches`]), never deleted; a file whose rewrite would not parse
//! is not staged ([`StagedRewrite::unparsable`]). A pattern of several statements matches
//! runs of consecutive statements ([`Pattern::is_sequence`]). Files with syntax errors are reported
//! ([`SearchResult::parse_errors`]); files over a size cap and sources nested too deep are
//! listed, not searched; patterns nested too deep are refused ([`MAX_PATTERN_DEPTH`]). Captured code is copied as bytes (a file need not be UTF-8) and new
//! lines take the file's line ending.

#![warn(missing_docs)]

pub mod builtin;
pub mod cache;
pub mod find;
pub mod language;
pub mod matcher;
pub mod meta;
pub mod node;
pub mod pattern;
pub mod repair;
pub mod rewrite;
pub mod search;
pub mod template;
pub mod transaction;

/// The README's examples, compiled with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use builtin::{Languages, UnknownLanguage};
pub use cache::{TreeCache, TreeCacheStats, DEFAULT_TREE_CACHE_BYTES};
pub use find::{Captured, FileMatches, Match, ParseError, ParsedSource, Position, SourceParser};
pub use language::{ContextKind, Language, Scaffold};
pub use pattern::{Attempt, Pattern, PatternError, MAX_PATTERN_BYTES, MAX_PATTERN_DEPTH};
pub use rewrite::{
    stage_rewrite, stage_rewrite_with, RewriteError, SkippedMatch, StagedFile, StagedRewrite,
    UnparsableRewrite, Warning, WarningKind,
};
pub use search::{
    search, CapturedText, FoundMatch, ParseErrors, ProgressFn, SearchError, SearchOptions,
    SearchResult, Skipped, TooLarge, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TREE_BYTES,
    MAX_FILE_BYTES_CEILING, MAX_PARSE_ERRORS_LISTED, MAX_SOURCE_DEPTH,
};
pub use template::{Layout, Template, TemplateError};
pub use transaction::{CommitError, FailAt, FaultInjector, FileOp, NoFaults, Transaction};
