//! A rename of a Kotlin declaration, which JDT LS cannot make: it reads Kotlin for navigation
//! only, finding places by name. The places renamed are the declaration and the uses the
//! Kotlin compiler itself resolves to it ([`cc_lsp_client::kotlin::KotlinCompiler::uses_of`]:
//! the root compiled with that one name changed; every new "unresolved reference" is a use).
//! A name declared more than once in the project (overloads, overrides, members of other
//! classes) is refused: renaming one of several would let its callers bind to another
//! without an error to show it. What the compiler could not tie to the declaration (code
//! already in error, Java files) is left to a completeness scan ([`crate::rename_scope`]).
//!
//! ```
//! use cc_analysis::kotlin_rename::declares;
//!
//! assert!(declares("fun Context.holder(): Int = 1", 12, "holder"));
//! assert!(!declares("val x = holder(1)", 8, "holder"));
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cc_lsp_client::kotlin::NotChecked;
use cc_lsp_client::lsp_types::WorkspaceEdit;
use cc_lsp_client::position::{byte_offset, is_ident, units};
use cc_lsp_client::{PositionEncoding, ServerPool};

use crate::dependents::definitions;
use crate::rename_scope;

/// How long the compile that finds the uses may take (it compiles the whole root).
const USES_CAP: Duration = Duration::from_secs(180);

/// Keywords after which a name on its line is being declared.
const DECLARING: &[&str] = &[
    "fun",
    "val",
    "var",
    "class",
    "interface",
    "object",
    "typealias",
];

/// The place asked to be renamed: a Kotlin file's text and a position in it, in `encoding`'s
/// units (the renaming server's).
#[derive(Debug, Clone, Copy)]
pub struct Declaration<'a> {
    /// The file.
    pub path: &'a Path,
    /// Its text as the server holds it.
    pub text: &'a str,
    /// The line, from 0.
    pub line: u32,
    /// The column on it, from 0, in `encoding`'s units.
    pub character: u32,
    /// The units of `character` and of the edit's ranges.
    pub encoding: PositionEncoding,
}

/// Why a Kotlin rename is refused (nothing was changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The line does not declare the name.
    #[error("line {line} does not declare `{symbol}`")]
    NotADeclaration {
        /// The line, from 1.
        line: u32,
        /// The name.
        symbol: String,
    },
    /// The name is declared more than once among the files that mention it.
    #[error("`{symbol}` is declared {count} times in the project")]
    DeclaredMoreThanOnce {
        /// The name.
        symbol: String,
        /// How many declarations in all.
        count: usize,
        /// The files that declare it, with how many times each.
        places: BTreeMap<PathBuf, usize>,
    },
    /// No compiler could check the root, or its check did not finish.
    #[error("{0}")]
    NoCompiler(String),
}

/// The rename's edit (`None`, as a server's rename answers, when nothing is to be renamed), or
/// why it is refused. `mentioning` are the files of the project that mention `symbol` (the
/// rename scope's own files).
pub async fn edit(
    pool: &ServerPool,
    at: Declaration<'_>,
    mentioning: &[PathBuf],
    symbol: &str,
    new_name: &str,
) -> Result<Option<WorkspaceEdit>, Refusal> {
    let line_text = at.text.lines().nth(at.line as usize).unwrap_or_default();
    let column = byte_offset(line_text, at.character, at.encoding);
    if !declares(line_text, column, symbol) {
        return Err(Refusal::NotADeclaration {
            line: at.line + 1,
            symbol: symbol.to_owned(),
        });
    }
    let declared = declarations(at.path, mentioning, symbol);
    let count: usize = declared.values().sum();
    if count > 1 {
        return Err(Refusal::DeclaredMoreThanOnce {
            symbol: symbol.to_owned(),
            count,
            places: declared,
        });
    }
    let compiler = pool
        .kotlin_compiler_for(at.path)
        .map_err(Refusal::NoCompiler)?;
    let uses = compiler
        .uses_of(at.path, at.line as usize, column, symbol, USES_CAP)
        .await
        .map_err(|not| {
            Refusal::NoCompiler(match not {
                NotChecked::Pending(why) | NotChecked::Unchecked(why) => why,
            })
        })?;
    let mut places = vec![(at.path.to_path_buf(), at.line, at.character)];
    let mut lines: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for found in uses {
        let text = lines.entry(found.path.clone()).or_insert_with(|| {
            std::fs::read_to_string(&found.path)
                .map(|t| t.lines().map(str::to_owned).collect())
                .unwrap_or_default()
        });
        let line0 = found.line.saturating_sub(1);
        let Some(line) = text.get(line0 as usize) else {
            continue;
        };
        // The completeness scan lists what cannot be placed here.
        if let Some(start) = place_on_line(line, found.column, symbol) {
            places.push((found.path, line0, units(&line[..start], at.encoding)));
        }
    }
    places.sort();
    places.dedup();
    Ok(rename_scope::edit_at(places, symbol, new_name, at.encoding))
}

/// Whether `symbol` at byte `column` of `line` is being declared there: right after a
/// declaring keyword (type parameters or an extension's receiver may stand between), or a
/// parameter or constructor property (`name:`).
pub fn declares(line: &str, column: usize, symbol: &str) -> bool {
    let (Some(before), Some(after)) = (line.get(..column), line.get(column + symbol.len()..))
    else {
        return false;
    };
    let after = after.trim_start();
    if after.starts_with(':') && !after.starts_with("::") {
        return true;
    }
    let mut rest = before.trim_end();
    // An extension's receiver: `fun Type.name`, `fun Map<K, V>.name`.
    if let Some(receiver) = rest.strip_suffix('.') {
        rest = without_last_type(receiver).trim_end();
    }
    // Type parameters: `fun <T : View> name`.
    if rest.ends_with('>') {
        rest = without_last_type(rest).trim_end();
    }
    let keyword_start = rest
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map_or(rest.len(), |(i, _)| i);
    DECLARING.contains(&&rest[keyword_start..])
}

/// `text` without its last type (or type-parameter list): back to the whitespace before it,
/// outside angle brackets.
fn without_last_type(text: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in text.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => depth -= 1,
            c if c.is_whitespace() && depth <= 0 => return &text[..i],
            _ => {}
        }
    }
    ""
}

/// How many times `symbol` is declared (outside function bodies) in the files that mention
/// it, by file; files without a grammar are not counted.
fn declarations(origin: &Path, files: &[PathBuf], symbol: &str) -> BTreeMap<PathBuf, usize> {
    let languages = cc_structural::Languages::builtin();
    let mut found = BTreeMap::new();
    let mut all: Vec<&PathBuf> = files.iter().collect();
    let origin = origin.to_path_buf();
    if !all.contains(&&origin) {
        all.push(&origin);
    }
    for path in all {
        let (Some(language), Ok(text)) = (languages.for_path(path), std::fs::read_to_string(path))
        else {
            continue;
        };
        let count = definitions(&language.grammar(), &text)
            .get(symbol)
            .map_or(0, Vec::len);
        if count > 0 {
            found.insert(path.clone(), count);
        }
    }
    found
}

/// The byte start of `symbol` on `line` near the compiler's column (UTF-16 units, as the JVM
/// counts): there when it is there, else its only whole-word occurrence on the line.
fn place_on_line(line: &str, column: u32, symbol: &str) -> Option<usize> {
    let whole = |start: usize| {
        line.get(start..)
            .is_some_and(|rest| rest.starts_with(symbol))
            && !line[..start].chars().next_back().is_some_and(is_ident)
            && !line[start + symbol.len()..]
                .chars()
                .next()
                .is_some_and(is_ident)
    };
    let at = byte_offset(line, column, PositionEncoding::Utf16);
    if whole(at) {
        return Some(at);
    }
    let mut starts = line
        .match_indices(symbol)
        .map(|(i, _)| i)
        .filter(|i| whole(*i));
    let first = starts.next()?;
    starts.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_told_from_uses() {
        let cases = [
            ("internal fun isPrimitiveArray(t: T): Boolean {", true),
            ("fun <T : View> getModuleHolder(viewClass: Class<T>)", true),
            ("fun Context.getModuleHolder(): Int = 1", true),
            ("class Holder(val getModuleHolder: Int)", true),
            ("  private var getModuleHolder = 1", true),
            ("return if (isPrimitiveArray(typeDescriptor)) {", false),
            ("registry.getModuleHolder(module)", false),
            ("val x = getModuleHolder(1)", false),
            ("val f = ::getModuleHolder", false),
            ("fun <K, V> Map<K, V>.getModuleHolder(): Int = 1", true),
        ];
        for (line, expected) in cases {
            let symbol = if line.contains("isPrimitiveArray") {
                "isPrimitiveArray"
            } else {
                "getModuleHolder"
            };
            let column = line.find(symbol).unwrap();
            assert_eq!(declares(line, column, symbol), expected, "{line}");
        }
    }

    #[test]
    fn a_use_is_placed_at_the_compilers_column_or_its_only_occurrence() {
        // "é" is two bytes and one UTF-16 unit.
        let line = "val é = go(go2(1))";
        assert_eq!(place_on_line(line, 8, "go"), Some(9));
        assert_eq!(place_on_line(line, 0, "go2"), Some(12));
        assert_eq!(place_on_line("go(go)", 3, "x"), None);
        assert_eq!(place_on_line("go(go)", 1, "go"), None);
    }
}
