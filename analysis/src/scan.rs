//! Looking for a name across the workspace without a language server: which files mention it
//! as a whole word (the workspace walk, `cc_workspace::walk`, and `memchr`), and
//! where it occurs in each, told apart by the file's own tree-sitter grammar into code,
//! comments and strings. Diagnostics on write use it to find dependents, `lsp_rename` to make
//! the server see every file that may refer to a symbol and to find what it left behind.

use std::path::{Path, PathBuf};

use cc_structural::Languages;
use memchr::memmem;

/// Files larger than this are not scanned (generated code, data).
pub const MAX_SCANNED_BYTES: u64 = 2 * 1024 * 1024;
/// Files a walk visits at most: a scan stays bounded on a huge tree.
const MAX_VISITED: usize = 50_000;

/// Calls `visit` with each file under `root` whose extension is one of `extensions` (any
/// case), with its bytes, in a stable order, until `visit` returns false. What the workspace
/// walk skips (hidden, ignored, dependency folders), files over [`MAX_SCANNED_BYTES`] and unreadable ones are skipped.
pub fn walk_files(root: &Path, extensions: &[String], mut visit: impl FnMut(&Path, &[u8]) -> bool) {
    let files = cc_workspace::walk::Walk::new(root)
        .extensions(extensions)
        .limit(MAX_VISITED)
        .files();
    for entry in files {
        if entry.size.is_none_or(|size| size > MAX_SCANNED_BYTES) {
            continue;
        }
        let path = entry.path.as_path();
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        if !visit(path, &bytes) {
            break;
        }
    }
}

/// Whether `candidate` can refer to code of the files `to` at all: declaration files
/// (`.d.ts`) are generated and refer to no source, and JavaScript does not import TypeScript
/// sources (a package's compiled output mentions every name of its sources).
pub fn can_refer<'a>(candidate: &Path, mut to: impl Iterator<Item = &'a Path>) -> bool {
    let name = candidate
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|x| name.ends_with(x))
    {
        return false;
    }
    let extension = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default()
    };
    let is_js = |p: &Path| matches!(extension(p).as_str(), "js" | "mjs" | "cjs" | "jsx");
    let is_ts = |p: &Path| matches!(extension(p).as_str(), "ts" | "tsx" | "mts" | "cts");
    !(is_js(candidate) && to.all(is_ts))
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$'
}

/// The byte offsets at which `word` occurs in `haystack` as a whole word.
pub fn word_offsets(haystack: &[u8], word: &[u8], finder: &memmem::Finder<'_>) -> Vec<usize> {
    finder
        .find_iter(haystack)
        .filter(|&at| {
            let before = at.checked_sub(1).and_then(|i| haystack.get(i));
            let after = haystack.get(at + word.len());
            !before.is_some_and(|b| is_word_byte(*b)) && !after.is_some_and(|b| is_word_byte(*b))
        })
        .collect()
}

/// Whether `word` occurs in `haystack` as a whole word.
pub fn has_word(haystack: &[u8], word: &[u8], finder: &memmem::Finder<'_>) -> bool {
    !word_offsets(haystack, word, finder).is_empty()
}

/// The files under `root` (with one of `extensions`) that mention `name` as a whole word, at
/// most `limit`; the second value is how many more there were.
/// Files that cannot refer to code of `origin` ([`can_refer`]) are left out.
pub fn files_mentioning(
    root: &Path,
    extensions: &[String],
    name: &str,
    origin: &Path,
    limit: usize,
) -> (Vec<PathBuf>, usize) {
    let finder = memmem::Finder::new(name.as_bytes());
    let mut found = Vec::new();
    let mut more = 0;
    walk_files(root, extensions, |path, bytes| {
        if path != origin && !can_refer(path, std::iter::once(origin)) {
            return true;
        }
        if has_word(bytes, name.as_bytes(), &finder) {
            if found.len() < limit {
                found.push(path.to_path_buf());
            } else {
                more += 1;
            }
        }
        true
    });
    (found, more)
}

/// Where an occurrence of a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// An identifier in code.
    Code,
    /// Inside a comment (doc comments and their examples too).
    Comment,
    /// Inside a string literal.
    String,
}

/// One whole-word occurrence of a name in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// Byte offset in the file.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// The line's text (trimmed).
    pub text: String,
    /// Code, a comment or a string.
    pub place: Place,
}

/// Every whole-word occurrence of `name` in `bytes` (the content of `path`), each placed by
/// the file's grammar; a file no grammar covers counts every occurrence as code.
pub fn occurrences(path: &Path, bytes: &[u8], name: &str) -> Vec<Occurrence> {
    let finder = memmem::Finder::new(name.as_bytes());
    let offsets = word_offsets(bytes, name.as_bytes(), &finder);
    if offsets.is_empty() {
        return Vec::new();
    }
    let tree = Languages::builtin().for_path(path).and_then(|language| {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&language.grammar()).ok()?;
        parser.parse(bytes, None)
    });
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1))
        .collect();
    offsets
        .into_iter()
        .map(|offset| {
            let line_index = line_starts.partition_point(|&start| start <= offset) - 1;
            let start = line_starts[line_index];
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
            let place = tree.as_ref().map_or(Place::Code, |tree| {
                place_of(tree, offset, offset + name.len())
            });
            Occurrence {
                offset,
                line: line_index + 1,
                text: String::from_utf8_lossy(&bytes[start..end])
                    .trim()
                    .to_owned(),
                place,
            }
        })
        .collect()
}

/// Whether the bytes `start..end` lie in a comment, a string, or code.
fn place_of(tree: &tree_sitter::Tree, start: usize, end: usize) -> Place {
    let Some(mut node) = tree.root_node().descendant_for_byte_range(start, end) else {
        return Place::Code;
    };
    // Up through the node's ancestors (bounded by the tree's depth).
    loop {
        let kind = node.kind();
        if kind.contains("comment") {
            return Place::Comment;
        }
        // Code inside `${…}` of a template string, or `{…}` of an f-string, is code.
        if matches!(
            kind,
            "template_substitution" | "interpolation" | "string_interpolation"
        ) {
            return Place::Code;
        }
        if kind.contains("string") || kind.contains("heredoc") {
            return Place::String;
        }
        match node.parent() {
            Some(parent) => node = parent,
            None => return Place::Code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_are_placed_by_the_grammar() {
        let code =
            b"# to_native is old\ndef to_native(x):\n    return 'to_native'\n\nto_native(1)\n";
        let found = occurrences(Path::new("a.py"), code, "to_native");
        let places: Vec<(usize, Place)> = found.iter().map(|o| (o.line, o.place)).collect();
        assert_eq!(
            places,
            [
                (1, Place::Comment),
                (2, Place::Code),
                (3, Place::String),
                (5, Place::Code)
            ]
        );
        assert_eq!(found[1].text, "def to_native(x):");
    }

    #[test]
    fn rust_doc_examples_are_comments() {
        let code = b"/// ```\n/// let v = parse(\"1\");\n/// ```\npub fn parse(s: &str) {}\n";
        let found = occurrences(Path::new("lib.rs"), code, "parse");
        let places: Vec<Place> = found.iter().map(|o| o.place).collect();
        assert_eq!(places, [Place::Comment, Place::Code]);
    }

    #[test]
    fn files_mentioning_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.py", "b.py", "c.py", "d.txt"] {
            std::fs::write(dir.path().join(name), "helper()\n").unwrap();
        }
        std::fs::write(dir.path().join("e.py"), "helpers()\n").unwrap();
        let extensions = vec!["py".to_owned()];
        let origin = dir.path().join("a.py");
        let (files, more) = files_mentioning(dir.path(), &extensions, "helper", &origin, 2);
        assert_eq!(files, [dir.path().join("a.py"), dir.path().join("b.py")]);
        assert_eq!(more, 1);
    }
}
