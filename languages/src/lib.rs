//! The one parser set of the workspace: the language table (canonical names, aliases, file
//! extensions, the grammar crate of each), parsing, and a cache of compiled
//! [`tree_sitter::Query`] objects.
//!
//! Structural search (`cc-structural`) and the code graph (`cc-graph`) both parse through this
//! crate, so a file is read by the same grammar whichever asks, and a query is compiled once
//! per process. It knows nothing of patterns, tools or protocols.
//!
//! ```
//! use cc_languages::{for_path, lookup, Parser, QueryCache};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let python = lookup("py")?;
//! assert_eq!(python.name, "python");
//! assert_eq!(for_path("pkg/mod.pyi".as_ref()).map(|l| l.name), Some("python"));
//! let tree = Parser::new().parse(python, b"def f(): pass\n")?;
//! assert_eq!(tree.root_node().kind(), "module");
//! let query = QueryCache::global().get(python, "names", "(identifier) @name")?;
//! assert_eq!(query.capture_names(), ["name"]);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tree_sitter_language::LanguageFn;

mod kinds;
pub use kinds::{Kind, KindGraph};

/// One language of the table.
#[derive(Clone, Copy)]
pub struct LanguageSpec {
    /// Which language it is: what code that behaves differently per language matches on
    /// (a closed set, so a misspelled name cannot silently match nothing).
    pub id: LanguageId,
    /// The canonical name (`python`, `c_sharp`, …).
    pub name: &'static str,
    /// Other names it answers to (`py`, `golang`, `cs`, …).
    pub aliases: &'static [&'static str],
    /// File extensions without the dot, lower case.
    pub extensions: &'static [&'static str],
    grammar: LanguageFn,
    /// The grammar crate's `node-types.json`.
    node_types: &'static str,
}

impl std::fmt::Debug for LanguageSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageSpec")
            .field("name", &self.name)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl PartialEq for LanguageSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for LanguageSpec {}

impl LanguageSpec {
    /// The tree-sitter grammar.
    pub fn grammar(&self) -> tree_sitter::Language {
        self.grammar.into()
    }

    /// Which kinds may hold which, from the grammar's `node-types.json` (read once per
    /// process; `None` if the file does not parse, so nothing is stepped over).
    pub fn kind_graph(&self) -> Option<&'static KindGraph> {
        static GRAPHS: OnceLock<Mutex<HashMap<&'static str, Option<&'static KindGraph>>>> =
            OnceLock::new();
        let mut graphs = GRAPHS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *graphs.entry(self.name).or_insert_with(|| {
            // Leaked once per language of the fixed table: the graph lives as long as the
            // grammar it describes.
            let root = Parser::new()
                .parse(self, b"")
                .map(|tree| tree.root_node().kind().to_owned())
                .unwrap_or_default();
            KindGraph::parse(self.node_types, &root)
                .ok()
                .map(|graph| &*Box::leak(Box::new(graph)))
        })
    }

    /// Whether `name` (any case, `-` for `_`) is this language's name or an alias.
    pub fn answers_to(&self, name: &str) -> bool {
        let wanted = name.trim().to_ascii_lowercase().replace('-', "_");
        self.name == wanted || self.aliases.contains(&wanted.as_str())
    }
}

/// Which language a [`LanguageSpec`] is, one variant per entry of [`TABLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LanguageId {
    /// `python`
    Python,
    /// `rust`
    Rust,
    /// `javascript`
    JavaScript,
    /// `typescript`
    TypeScript,
    /// `tsx`
    Tsx,
    /// `go`
    Go,
    /// `c`
    C,
    /// `cpp`
    Cpp,
    /// `java`
    Java,
    /// `dart`
    Dart,
    /// `bash`
    Bash,
    /// `json`
    Json,
    /// `ruby`
    Ruby,
    /// `c_sharp`
    CSharp,
    /// `kotlin`
    Kotlin,
    /// `php`
    Php,
}

const fn spec(
    id: LanguageId,
    name: &'static str,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
    grammar: LanguageFn,
    node_types: &'static str,
) -> LanguageSpec {
    LanguageSpec {
        id,
        name,
        aliases,
        extensions,
        grammar,
        node_types,
    }
}

/// Python (`.py`, `.pyi`).
pub static PYTHON: LanguageSpec = spec(
    LanguageId::Python,
    "python",
    &["py"],
    &["py", "pyi"],
    tree_sitter_python::LANGUAGE,
    tree_sitter_python::NODE_TYPES,
);
/// Rust (`.rs`).
pub static RUST: LanguageSpec = spec(
    LanguageId::Rust,
    "rust",
    &["rs"],
    &["rs"],
    tree_sitter_rust::LANGUAGE,
    tree_sitter_rust::NODE_TYPES,
);
/// JavaScript, JSX included (`.js`, `.mjs`, `.cjs`, `.jsx`).
pub static JAVASCRIPT: LanguageSpec = spec(
    LanguageId::JavaScript,
    "javascript",
    &["js", "jsx"],
    &["js", "mjs", "cjs", "jsx"],
    tree_sitter_javascript::LANGUAGE,
    tree_sitter_javascript::NODE_TYPES,
);
/// TypeScript without JSX (`.ts`, `.mts`, `.cts`).
pub static TYPESCRIPT: LanguageSpec = spec(
    LanguageId::TypeScript,
    "typescript",
    &["ts"],
    &["ts", "mts", "cts"],
    tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
    tree_sitter_typescript::TYPESCRIPT_NODE_TYPES,
);
/// TypeScript with JSX (`.tsx`).
pub static TSX: LanguageSpec = spec(
    LanguageId::Tsx,
    "tsx",
    &[],
    &["tsx"],
    tree_sitter_typescript::LANGUAGE_TSX,
    tree_sitter_typescript::TSX_NODE_TYPES,
);
/// Go (`.go`).
pub static GO: LanguageSpec = spec(
    LanguageId::Go,
    "go",
    &["golang"],
    &["go"],
    tree_sitter_go::LANGUAGE,
    tree_sitter_go::NODE_TYPES,
);
/// C (`.c`, and `.h` headers).
pub static C: LanguageSpec = spec(
    LanguageId::C,
    "c",
    &[],
    &["c", "h"],
    tree_sitter_c::LANGUAGE,
    tree_sitter_c::NODE_TYPES,
);
/// C++ (`.cpp`, `.cc`, `.hpp` and the other C++ extensions).
pub static CPP: LanguageSpec = spec(
    LanguageId::Cpp,
    "cpp",
    &["c++", "cxx"],
    &[
        "cpp", "cc", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp",
    ],
    tree_sitter_cpp::LANGUAGE,
    tree_sitter_cpp::NODE_TYPES,
);
/// Java (`.java`).
pub static JAVA: LanguageSpec = spec(
    LanguageId::Java,
    "java",
    &[],
    &["java"],
    tree_sitter_java::LANGUAGE,
    tree_sitter_java::NODE_TYPES,
);
/// Dart (`.dart`).
pub static DART: LanguageSpec = spec(
    LanguageId::Dart,
    "dart",
    &[],
    &["dart"],
    tree_sitter_dart::LANGUAGE,
    tree_sitter_dart::NODE_TYPES,
);
/// Bash and POSIX shell (`.sh`, `.bash`).
pub static BASH: LanguageSpec = spec(
    LanguageId::Bash,
    "bash",
    &["sh", "shell"],
    &["sh", "bash"],
    tree_sitter_bash::LANGUAGE,
    tree_sitter_bash::NODE_TYPES,
);
/// JSON (`.json`).
pub static JSON: LanguageSpec = spec(
    LanguageId::Json,
    "json",
    &[],
    &["json"],
    tree_sitter_json::LANGUAGE,
    tree_sitter_json::NODE_TYPES,
);
/// Ruby (`.rb`, `.rake`, `.gemspec`).
pub static RUBY: LanguageSpec = spec(
    LanguageId::Ruby,
    "ruby",
    &["rb"],
    &["rb", "rake", "gemspec"],
    tree_sitter_ruby::LANGUAGE,
    tree_sitter_ruby::NODE_TYPES,
);
/// C# (`.cs`).
pub static C_SHARP: LanguageSpec = spec(
    LanguageId::CSharp,
    "c_sharp",
    &["csharp", "cs", "c#"],
    &["cs"],
    tree_sitter_c_sharp::LANGUAGE,
    tree_sitter_c_sharp::NODE_TYPES,
);
/// Kotlin (`.kt`, `.kts`).
pub static KOTLIN: LanguageSpec = spec(
    LanguageId::Kotlin,
    "kotlin",
    &["kt"],
    &["kt", "kts"],
    tree_sitter_kotlin_ng::LANGUAGE,
    tree_sitter_kotlin_ng::NODE_TYPES,
);

/// PHP files as written: HTML around `<?php … ?>` blocks (the grammar's full variant).
pub static PHP: LanguageSpec = spec(
    LanguageId::Php,
    "php",
    &[],
    &["php", "phtml"],
    tree_sitter_php::LANGUAGE_PHP,
    tree_sitter_php::PHP_NODE_TYPES,
);

/// Every language, in a stable order.
pub static TABLE: [&LanguageSpec; 16] = [
    &PYTHON,
    &RUST,
    &JAVASCRIPT,
    &TYPESCRIPT,
    &TSX,
    &GO,
    &C,
    &CPP,
    &JAVA,
    &DART,
    &BASH,
    &JSON,
    &RUBY,
    &C_SHARP,
    &KOTLIN,
    &PHP,
];

/// Canonical names, in the table's order.
pub fn names() -> Vec<&'static str> {
    TABLE.iter().map(|l| l.name).collect()
}

/// The language called `name` (canonical name or alias, any case, `-` for `_`).
pub fn by_name(name: &str) -> Option<&'static LanguageSpec> {
    TABLE.iter().copied().find(|l| l.answers_to(name))
}

/// [`by_name`], or an error that lists the languages there are.
pub fn lookup(name: &str) -> Result<&'static LanguageSpec, UnknownLanguage> {
    by_name(name).ok_or_else(|| UnknownLanguage {
        name: name.to_owned(),
        known: names().into_iter().map(str::to_owned).collect(),
    })
}

/// The language of a file, from its extension (any case).
pub fn for_path(path: &Path) -> Option<&'static LanguageSpec> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    TABLE
        .iter()
        .copied()
        .find(|l| l.extensions.contains(&ext.as_str()))
}

/// A language name the table does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown language `{name}`; use one of: {}", .known.join(", "))]
pub struct UnknownLanguage {
    /// The name asked for.
    pub name: String,
    /// The canonical names the table knows.
    pub known: Vec<String>,
}

/// The grammar refused to load, or the parser gave up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not parse as {language}: {reason}")]
pub struct ParseError {
    /// The language.
    pub language: String,
    /// Why.
    pub reason: String,
}

/// A tree-sitter parser that keeps its language between files (setting a language is not
/// free, and a walk mostly meets one language).
#[derive(Default)]
pub struct Parser {
    parser: tree_sitter::Parser,
    language: Option<String>,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("language", &self.language)
            .finish()
    }
}

impl Parser {
    /// A parser with no language set yet.
    pub fn new() -> Self {
        Parser::default()
    }

    /// Parses `source` as `language`.
    pub fn parse(
        &mut self,
        language: &LanguageSpec,
        source: &[u8],
    ) -> Result<tree_sitter::Tree, ParseError> {
        self.parse_grammar(language.name, &language.grammar(), source)
    }

    /// Parses `source` with a grammar given by name and value (for languages described
    /// elsewhere, such as a structural `Language` of a host's own).
    pub fn parse_grammar(
        &mut self,
        name: &str,
        grammar: &tree_sitter::Language,
        source: &[u8],
    ) -> Result<tree_sitter::Tree, ParseError> {
        let fail = |reason: String| ParseError {
            language: name.to_owned(),
            reason,
        };
        if self.language.as_deref() != Some(name) {
            self.parser
                .set_language(grammar)
                .map_err(|e| fail(e.to_string()))?;
            self.language = Some(name.to_owned());
        }
        self.parser
            .parse(source, None)
            .ok_or_else(|| fail("the parser returned no tree".to_owned()))
    }

    /// Parses `source` within `limits`: a source whose tree would pass the memory limit is
    /// refused before parsing, and the parse stops soon after `limits.cancel` is set (the
    /// parser is reset, so the next parse starts afresh).
    pub fn parse_bounded(
        &mut self,
        name: &str,
        grammar: &tree_sitter::Language,
        source: &[u8],
        limits: &ParseLimits<'_>,
    ) -> Result<tree_sitter::Tree, BoundedParseError> {
        let fail = |reason: String| ParseError {
            language: name.to_owned(),
            reason,
        };
        check_tree_memory(source, limits.max_tree_bytes)?;
        if self.language.as_deref() != Some(name) {
            self.parser
                .set_language(grammar)
                .map_err(|e| fail(e.to_string()))?;
            self.language = Some(name.to_owned());
        }
        let cancelled = || limits.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        let mut progress = |_: &tree_sitter::ParseState| {
            if cancelled() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let mut read = |offset: usize, _: tree_sitter::Point| source.get(offset..).unwrap_or(&[]);
        match self
            .parser
            .parse_with_options(&mut read, None, Some(options))
        {
            Some(tree) => Ok(tree),
            None => {
                // A stopped parse is kept for resuming: the next source must not resume it.
                self.parser.reset();
                if cancelled() {
                    Err(BoundedParseError::Cancelled)
                } else {
                    Err(fail("the parser returned no tree".to_owned()).into())
                }
            }
        }
    }
}

/// The estimated memory of a syntax tree per source token (a run of word characters, or one
/// punctuation byte): measured as peak RSS over tokens while parsing, 134 bytes on
/// TypeScript's own `typescript.js`, 172 on minified JavaScript; rounded up.
pub const BYTES_PER_TOKEN: usize = 192;

/// The default [`ParseLimits::max_tree_bytes`]: 768 MiB of estimated tree memory, about 4
/// million tokens (25 MB of ordinary code, 6 MB of minified JavaScript).
pub const DEFAULT_MAX_TREE_BYTES: usize = 768 << 20;

/// What one bounded parse may take.
#[derive(Debug, Clone, Copy)]
pub struct ParseLimits<'a> {
    /// Set by another thread to stop the parse (checked every 100 parser operations).
    pub cancel: Option<&'a AtomicBool>,
    /// A source whose tree would take more than this many bytes (estimated as
    /// [`BYTES_PER_TOKEN`] per token) is not parsed.
    pub max_tree_bytes: usize,
}

impl Default for ParseLimits<'_> {
    fn default() -> Self {
        ParseLimits {
            cancel: None,
            max_tree_bytes: DEFAULT_MAX_TREE_BYTES,
        }
    }
}

/// Why a bounded parse gave no tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoundedParseError {
    /// The parse was cancelled.
    #[error("the parse was cancelled")]
    Cancelled,
    /// The tree would take more memory than a parse may.
    #[error(
        "its syntax tree would take more than the {} MiB one file may take (at least {tokens} \
         tokens, about {BYTES_PER_TOKEN} bytes each); not parsed",
        .limit >> 20
    )]
    TooLarge {
        /// Tokens counted when the estimate passed the limit (counting stops there).
        tokens: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The grammar did not load, or the parser gave up.
    #[error(transparent)]
    Failed(#[from] ParseError),
}

/// Whether a byte continues a word (identifiers, numbers, UTF-8 letters).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Tokens in `source` (each run of word bytes, and each other byte that is not blank), counting
/// no further than `stop_after`: an upper bound of the leaves a grammar makes of it (a comment
/// or a string counts as its words, so more), linear and without allocating.
pub fn estimated_tokens(source: &[u8], stop_after: usize) -> usize {
    let mut tokens = 0usize;
    let mut in_word = false;
    for &b in source {
        if is_word_byte(b) {
            if !in_word {
                tokens += 1;
                in_word = true;
            }
        } else {
            in_word = false;
            if !b.is_ascii_whitespace() {
                tokens += 1;
            }
        }
        if tokens > stop_after {
            break;
        }
    }
    tokens
}

/// The estimated tree memory of `source` when it passes `limit`, else `Ok`.
fn check_tree_memory(source: &[u8], limit: usize) -> Result<(), BoundedParseError> {
    // A source of n bytes has at most n tokens: small ones need no count.
    let most = limit / BYTES_PER_TOKEN;
    if source.len() <= most {
        return Ok(());
    }
    let tokens = estimated_tokens(source, most);
    if tokens > most {
        return Err(BoundedParseError::TooLarge { tokens, limit });
    }
    Ok(())
}

/// How many `ERROR` and missing nodes a tree has (an `ERROR` counted once, whatever it
/// holds), and the 1-based line of the first. Only subtrees that hold an error are walked.
pub fn syntax_errors(tree: &tree_sitter::Tree) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut first = None;
    let mut cursor = tree.walk();
    if !cursor.node().has_error() {
        return (0, None);
    }
    loop {
        let node = cursor.node();
        let bad = node.is_error() || node.is_missing();
        if bad {
            count += 1;
            first.get_or_insert(node.start_position().row + 1);
        }
        if !bad && node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return (count, first);
            }
        }
    }
}

/// A query that does not compile for its language.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("query `{key}` does not compile for {language}: {message}")]
pub struct QueryError {
    /// The language.
    pub language: String,
    /// The name the query was asked for under.
    pub key: String,
    /// tree-sitter's message (row, column, kind).
    pub message: String,
}

/// Compiled queries, one per (language, key): compiling a query walks the grammar's tables
/// and takes milliseconds, so every user of a query shares one compiled copy.
#[derive(Debug, Default)]
pub struct QueryCache {
    compiled: Mutex<HashMap<(&'static str, String), Arc<tree_sitter::Query>>>,
}

impl QueryCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide cache.
    pub fn global() -> &'static QueryCache {
        static CACHE: OnceLock<QueryCache> = OnceLock::new();
        CACHE.get_or_init(QueryCache::new)
    }

    /// The query `key` of `language`, compiled from `source` the first time it is asked for
    /// (later calls with the same key return that compiled query whatever `source` is).
    pub fn get(
        &self,
        language: &'static LanguageSpec,
        key: &str,
        source: &str,
    ) -> Result<Arc<tree_sitter::Query>, QueryError> {
        let map_key = (language.name, key.to_owned());
        if let Some(found) = self.lock().get(&map_key) {
            return Ok(found.clone());
        }
        // Compiled outside the lock: another thread may compile the same query meanwhile,
        // and the first one stored wins.
        let query =
            tree_sitter::Query::new(&language.grammar(), source).map_err(|e| QueryError {
                language: language.name.to_owned(),
                key: key.to_owned(),
                message: e.to_string(),
            })?;
        Ok(self
            .lock()
            .entry(map_key)
            .or_insert_with(|| Arc::new(query))
            .clone())
    }

    /// How many queries are compiled.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(&'static str, String), Arc<tree_sitter::Query>>> {
        // A panic while holding the lock leaves the map consistent (inserts are atomic).
        self.compiled.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads_in_this_tree_sitter() {
        for language in TABLE {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&language.grammar())
                .unwrap_or_else(|e| panic!("{}: {e}", language.name));
        }
    }

    #[test]
    fn every_entry_has_its_own_id() {
        let mut ids: Vec<LanguageId> = TABLE.iter().map(|l| l.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), TABLE.len());
        assert_eq!(by_name("c_sharp").unwrap().id, LanguageId::CSharp);
    }

    #[test]
    fn lookup_by_name_alias_and_extension() {
        assert_eq!(names().len(), 16);
        assert_eq!(by_name("PY").unwrap().name, "python");
        assert_eq!(for_path(Path::new("src/Kernel.php")).unwrap().name, "php");
        assert_eq!(by_name("c-sharp").unwrap().name, "c_sharp");
        assert_eq!(for_path(Path::new("a/b.PYI")).unwrap().name, "python");
        assert_eq!(for_path(Path::new("x.tsx")).unwrap().name, "tsx");
        assert!(for_path(Path::new("README")).is_none());
        let unknown = lookup("cobol").unwrap_err();
        assert!(unknown
            .to_string()
            .starts_with("unknown language `cobol`; use one of: python, rust"));
    }

    #[test]
    fn queries_compile_once_and_bad_ones_say_where() {
        let cache = QueryCache::new();
        let a = cache.get(&GO, "f", "(function_declaration) @f").unwrap();
        let b = cache.get(&GO, "f", "(function_declaration) @f").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.len(), 1);
        let bad = cache.get(&GO, "bad", "(no_such_kind) @x").unwrap_err();
        assert!(bad.to_string().contains("go"), "{bad}");
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_bounded_parse_refuses_a_tree_over_its_memory_and_stops_when_cancelled() {
        let mut parser = Parser::new();
        let grammar = PYTHON.grammar();
        let source = "f(a, b)\n".repeat(1_000);
        let small = ParseLimits {
            cancel: None,
            max_tree_bytes: 100 * BYTES_PER_TOKEN,
        };
        match parser.parse_bounded("python", &grammar, source.as_bytes(), &small) {
            Err(BoundedParseError::TooLarge { tokens, limit, .. }) => {
                assert!(tokens > 100);
                assert_eq!(limit, 100 * BYTES_PER_TOKEN);
            }
            other => panic!("{other:?}"),
        }
        let cancel = AtomicBool::new(true);
        let cancelled = ParseLimits {
            cancel: Some(&cancel),
            ..ParseLimits::default()
        };
        let long = "f(a, b)\n".repeat(100_000);
        assert_eq!(
            parser
                .parse_bounded("python", &grammar, long.as_bytes(), &cancelled)
                .map(|_| ()),
            Err(BoundedParseError::Cancelled)
        );
        // The parser was reset: the next parse is of its own source only.
        let tree = parser
            .parse_bounded("python", &grammar, b"x = 1\n", &ParseLimits::default())
            .unwrap();
        assert_eq!(tree.root_node().end_byte(), 6);
        assert!(!tree.root_node().has_error());
        // foo ( bar , 12 ) / / x
        assert_eq!(estimated_tokens(b"foo(bar, 12) // x", usize::MAX), 9);
    }

    #[test]
    fn syntax_errors_are_counted_with_the_first_line() {
        let tree = Parser::new().parse(&PYTHON, b"x = 1\ndef (:\n").unwrap();
        let (count, first) = syntax_errors(&tree);
        assert!(count >= 1);
        assert_eq!(first, Some(2));
    }
}
