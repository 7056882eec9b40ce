//! Unified diffs (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks) over one or more
//! files: [`parse`] reads one into [`FilePatch`]es, [`apply`] applies a file's hunks to its
//! text exactly, with no fuzz. Nothing here touches a file: a caller writes the results all or
//! nothing with a [`crate::Transaction`].
//!
//! ```
//! use cc_workspace::patch;
//!
//! let files = patch::parse("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n")?;
//! assert_eq!(files[0].new.as_deref(), Some("f.txt"));
//! assert_eq!(patch::apply("a\nb\n", &files[0].hunks, "f.txt")?, "a\nB\n");
//! assert!(patch::apply("a\nc\n", &files[0].hunks, "f.txt").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line both sides have.
    Context(String),
    /// A line only the old side has.
    Remove(String),
    /// A line only the new side has.
    Add(String),
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The old side's first line, from 1 (0 with an empty old side at the file's start).
    pub old_start: usize,
    /// Its lines in order.
    pub lines: Vec<Line>,
    /// `\ No newline at end of file` after the new side's last line.
    pub new_no_newline: bool,
}

/// One file's section of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The old path (`a/` stripped); `None` for `/dev/null`, a file the patch creates.
    pub old: Option<String>,
    /// The new path (`b/` stripped); `None` for `/dev/null`, a file the patch deletes.
    pub new: Option<String>,
    /// Its hunks in order.
    pub hunks: Vec<Hunk>,
}

impl FilePatch {
    /// How many lines its hunks add and remove.
    pub fn counts(&self) -> (usize, usize) {
        let lines = self.hunks.iter().flat_map(|h| &h.lines);
        let added = lines.clone().filter(|l| matches!(l, Line::Add(_))).count();
        let removed = lines.filter(|l| matches!(l, Line::Remove(_))).count();
        (added, removed)
    }
}

/// Why a patch cannot be read (lines counted from 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A `---` line without its `+++` line.
    #[error("line {line}: `--- {old}` is not followed by a `+++` line")]
    NoNewHeader {
        /// Where.
        line: usize,
        /// The old path as written.
        old: String,
    },
    /// A hunk before any file header.
    #[error("line {line}: a hunk before any `---`/`+++` file header")]
    HunkBeforeHeader {
        /// Where.
        line: usize,
    },
    /// A `@@` line that is not a hunk header.
    #[error("line {line}: malformed hunk header `{text}`")]
    MalformedHunkHeader {
        /// Where.
        line: usize,
        /// The line.
        text: String,
    },
    /// A line inside a hunk that is no hunk line.
    #[error(
        "line {line}: `{text}` inside a hunk (expected a line starting with ' ', '-' or '+'); \
         the hunk header announced {old_len} old and {new_len} new lines"
    )]
    NotAHunkLine {
        /// Where.
        line: usize,
        /// The line.
        text: String,
        /// The old lines the header announced.
        old_len: usize,
        /// The new lines the header announced.
        new_len: usize,
    },
    /// A hunk with fewer lines than its header announced.
    #[error(
        "the hunk `{header}` ends early: it announced {old_len} old and {new_len} new lines, \
         the patch has {old_seen} and {new_seen}"
    )]
    EndsEarly {
        /// The hunk's header.
        header: String,
        /// The old lines the header announced.
        old_len: usize,
        /// The new lines the header announced.
        new_len: usize,
        /// The old lines there were.
        old_seen: usize,
        /// The new lines there were.
        new_seen: usize,
    },
    /// No file header at all.
    #[error("no `---`/`+++` file headers found; give a unified diff")]
    NoFiles,
}

/// A hunk that does not apply to the file's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "hunk {hunk} of `{shown}` (at line {line}) does not apply: its context and removed lines \
     occur nowhere after the previous hunk; {detail}"
)]
pub struct HunkMismatch {
    /// Which hunk, from 1.
    pub hunk: usize,
    /// The file as the caller names it.
    pub shown: String,
    /// The line the hunk states.
    pub line: usize,
    /// What differs where the hunk says it applies.
    pub detail: String,
}

/// Parses a unified diff into file patches.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(ParseError::NoNewHeader {
                    line: i + 1,
                    old: old.to_owned(),
                });
            };
            files.push(FilePatch {
                old: patch_path(old, "a/"),
                new: patch_path(new, "b/"),
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(file) = files.last_mut() else {
                return Err(ParseError::HunkBeforeHeader { line: i + 1 });
            };
            let (old_start, old_len, new_len) =
                parse_hunk_header(line).ok_or_else(|| ParseError::MalformedHunkHeader {
                    line: i + 1,
                    text: line.to_owned(),
                })?;
            let (hunk, next) = read_hunk(&lines, i + 1, line, old_start, old_len, new_len)?;
            i = next;
            file.hunks.push(hunk);
            continue;
        }
        // `diff --git`, `index`, mode lines and commentary between files are skipped.
        i += 1;
    }
    if files.is_empty() {
        return Err(ParseError::NoFiles);
    }
    Ok(files)
}

/// The body of the hunk whose header `header` (`old_start`, `old_len`, `new_len`) is the line
/// before `i`, and the index of the line after it.
fn read_hunk(
    lines: &[&str],
    mut i: usize,
    header: &str,
    old_start: usize,
    old_len: usize,
    new_len: usize,
) -> Result<(Hunk, usize), ParseError> {
    let mut hunk = Hunk {
        old_start,
        lines: Vec::new(),
        new_no_newline: false,
    };
    let (mut old_seen, mut new_seen) = (0, 0);
    while i < lines.len() && (old_seen < old_len || new_seen < new_len) {
        let body = lines[i];
        match body.chars().next() {
            Some(' ') => {
                hunk.lines.push(Line::Context(body[1..].to_owned()));
                old_seen += 1;
                new_seen += 1;
            }
            // Some tools strip the space of an empty context line.
            None => {
                hunk.lines.push(Line::Context(String::new()));
                old_seen += 1;
                new_seen += 1;
            }
            Some('-') => {
                hunk.lines.push(Line::Remove(body[1..].to_owned()));
                old_seen += 1;
            }
            Some('+') => {
                hunk.lines.push(Line::Add(body[1..].to_owned()));
                new_seen += 1;
            }
            Some('\\') => {}
            _ => {
                return Err(ParseError::NotAHunkLine {
                    line: i + 1,
                    text: body.to_owned(),
                    old_len,
                    new_len,
                })
            }
        }
        i += 1;
    }
    if old_seen != old_len || new_seen != new_len {
        return Err(ParseError::EndsEarly {
            header: header.to_owned(),
            old_len,
            new_len,
            old_seen,
            new_seen,
        });
    }
    // `\ No newline at end of file` right after the hunk applies to its last line.
    while lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        if matches!(
            hunk.lines.last(),
            Some(Line::Add(_)) | Some(Line::Context(_))
        ) {
            hunk.new_no_newline = true;
        }
        i += 1;
    }
    Ok((hunk, i))
}

fn patch_path(raw: &str, prefix: &str) -> Option<String> {
    // A tab separates a timestamp (`--- a.txt\t2024-01-01 …`).
    let path = raw.split('\t').next().unwrap_or(raw).trim_end();
    if path == "/dev/null" {
        return None;
    }
    Some(path.strip_prefix(prefix).unwrap_or(path).to_owned())
}

fn parse_hunk_header(line: &str) -> Option<(usize, usize, usize)> {
    let inner = line.strip_prefix("@@ ")?;
    let inner = &inner[..inner.find(" @@")?];
    let mut parts = inner.split(' ');
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |spec: &str| -> Option<(usize, usize)> {
        match spec.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((spec.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old)?;
    let (_, new_len) = range(new)?;
    Some((old_start, old_len, new_len))
}

/// Applies `hunks` to `original` (the file the caller calls `shown`): each hunk exactly
/// (context and removed lines, no fuzz), at its stated line or, when lines were added or
/// removed above it, at the nearest place after the previous hunk. The error names the hunk
/// and what differed.
pub fn apply(original: &str, hunks: &[Hunk], shown: &str) -> Result<String, HunkMismatch> {
    let ends_with_newline = original.is_empty() || original.ends_with('\n');
    let mut lines: Vec<String> = original.lines().map(str::to_owned).collect();
    let mut no_newline_at_end = !ends_with_newline;
    // Where the next hunk may start (in `lines`, which shifts as hunks apply).
    let mut floor = 0usize;
    let mut shift: isize = 0;
    for (index, hunk) in hunks.iter().enumerate() {
        let old: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(s) | Line::Remove(s) => Some(s.as_str()),
                Line::Add(_) => None,
            })
            .collect();
        let new: Vec<String> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(s) | Line::Add(s) => Some(s.clone()),
                Line::Remove(_) => None,
            })
            .collect();
        // A zero-length old side (`-0,0` or `-5,0`) inserts after the stated line.
        let stated = if old.is_empty() {
            hunk.old_start
        } else {
            hunk.old_start.saturating_sub(1)
        };
        let expected = (stated as isize + shift).max(0) as usize;
        let matches_at = |at: usize| {
            at >= floor
                && at + old.len() <= lines.len()
                && lines[at..at + old.len()]
                    .iter()
                    .zip(&old)
                    .all(|(have, want)| have.trim_end_matches('\r') == want.trim_end_matches('\r'))
        };
        let found = (0..=lines.len())
            .flat_map(|distance| {
                let after = expected + distance;
                let before = expected.checked_sub(distance).filter(|_| distance > 0);
                [Some(after), before]
            })
            .flatten()
            .find(|at| matches_at(*at));
        let Some(at) = found else {
            let detail = if old.is_empty() {
                "it inserts past the end of the file".to_owned()
            } else {
                // The first line that differs where the hunk says it applies.
                let differs = old.iter().enumerate().find(|(k, want)| {
                    lines
                        .get(expected + k)
                        .map(|have| have.trim_end_matches('\r'))
                        != Some(want.trim_end_matches('\r'))
                });
                match differs {
                    Some((k, want)) => match lines.get(expected + k) {
                        Some(have) => format!(
                            "at line {} the file has `{have}` where the hunk expects `{want}`",
                            expected + k + 1
                        ),
                        None => format!(
                            "the file has only {} lines; the hunk expects `{want}` at line {}",
                            lines.len(),
                            expected + k + 1
                        ),
                    },
                    None => "it matches only before the previous hunk".to_owned(),
                }
            };
            return Err(HunkMismatch {
                hunk: index + 1,
                shown: shown.to_owned(),
                line: hunk.old_start,
                detail,
            });
        };
        let replaced = lines
            .splice(at..at + old.len(), new.iter().cloned())
            .count();
        shift += new.len() as isize - replaced as isize;
        floor = at + new.len();
        if at + new.len() == lines.len() {
            no_newline_at_end = hunk.new_no_newline;
        }
    }
    let mut text = lines.join("\n");
    if !lines.is_empty() && !no_newline_at_end {
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_to(original: &str, patch: &str) -> Result<String, String> {
        let files = parse(patch).map_err(|e| e.to_string())?;
        apply(original, &files[0].hunks, "f").map_err(|e| e.to_string())
    }

    #[test]
    fn applies_with_offset_and_keeps_missing_final_newline() {
        let original = "a\nb\nc\nd\ne";
        let patch =
            "--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n d\n-e\n+E\n\\ No newline at end of file\n";
        assert_eq!(apply_to(original, patch).unwrap(), "a\nb\nc\nd\nE");
        // Two lines were added above: the hunk is found two lines further down.
        let shifted = "x\ny\na\nb\nc\nd\ne\n";
        let patch = "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n";
        assert_eq!(apply_to(shifted, patch).unwrap(), "x\ny\na\nb\nC\nd\ne\n");
    }

    #[test]
    fn refuses_a_hunk_whose_context_differs() {
        let error = apply_to(
            "a\nb\nc\n",
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-B\n+X\n",
        )
        .unwrap_err();
        assert!(error.contains("hunk 1 of `f`"), "{error}");
        assert!(
            error.contains("at line 2 the file has `b` where the hunk expects `B`"),
            "{error}"
        );
    }

    #[test]
    fn creation_insertion_and_headers() {
        let files = parse("diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+one\n+two\n").unwrap();
        assert_eq!(files[0].old, None);
        assert_eq!(apply("", &files[0].hunks, "n").unwrap(), "one\ntwo\n");
        assert_eq!(
            apply_to("a\nb\n", "--- f\n+++ f\n@@ -1,0 +2 @@\n+mid\n").unwrap(),
            "a\nmid\nb\n"
        );
        assert!(parse("just text").is_err());
        assert!(parse("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n")
            .unwrap_err()
            .to_string()
            .contains("ends early"));
    }

    /// Cases per property (`CC_FUZZ_CASES` raises the budget for a longer hunt).
    fn cases() -> u32 {
        std::env::var("CC_FUZZ_CASES")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(10_000)
    }

    /// Patch-shaped text: headers, hunk headers with any numbers, body lines of every kind.
    fn patch_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let line = prop_oneof![
            Just("--- a/f".to_owned()),
            Just("+++ b/f".to_owned()),
            Just("--- /dev/null".to_owned()),
            Just("+++ /dev/null".to_owned()),
            (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>())
                .prop_map(|(a, b, c, d)| format!("@@ -{a},{b} +{c},{d} @@")),
            (0u64..8, 0u64..8, 0u64..8, 0u64..8)
                .prop_map(|(a, b, c, d)| format!("@@ -{a},{b} +{c},{d} @@ fn x")),
            Just("@@ -1 +1 @@".to_owned()),
            Just("@@ garbage".to_owned()),
            "[ +\\-][a-cé ]{0,6}",
            Just("\\ No newline at end of file".to_owned()),
            "[a-c\r]{0,4}",
            Just(String::new()),
        ];
        proptest::collection::vec(line, 0..24).prop_map(|lines| lines.join("\n"))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any text: parsing and applying never panic, and what applies to a file only ever
        /// uses the lines the patch and the file hold.
        #[test]
        fn parsing_and_applying_never_panic(
            patch in patch_text(),
            original in "([a-cé ]{0,4}\r?\n){0,8}[a-c]{0,2}",
        ) {
            if let Ok(files) = parse(&patch) {
                for file in &files {
                    let _ = apply(&original, &file.hunks, "f");
                }
            }
        }

        /// Raw bytes as text never panic the parser either.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            if let Ok(files) = parse(&text) {
                for file in &files {
                    let _ = apply("a\nb\n", &file.hunks, "f");
                }
            }
        }
    }
}
