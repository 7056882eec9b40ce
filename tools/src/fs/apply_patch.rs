//! `apply_patch`: a unified diff over one or more files, applied all or nothing.
//!
//! Every hunk must match exactly (context and removed lines), at its stated line or, when
//! lines were added or removed above it, at the nearest place after the previous hunk; there
//! is no fuzz. Every file's new content is computed before anything is written; a hunk that
//! does not apply refuses the whole patch, naming the file, the hunk and the line that
//! differs. The files are then written by the shared file transaction
//! (`cc_structural::Transaction`): checked against the bytes the patch was computed from,
//! written through fsynced temporary files, and restored if one write fails.

use std::path::PathBuf;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ErrorKind, ToolError};
use crate::report::files::{PatchAction, PatchReport, PatchedFile};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::report_output;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// `apply_patch`: apply a unified diff inside the workspace.
#[derive(Debug, Clone)]
pub struct ApplyPatchTool {
    root: WorkspaceRoot,
}

impl ApplyPatchTool {
    /// An `apply_patch` tool for `root`.
    pub fn new(root: WorkspaceRoot) -> Self {
        ApplyPatchTool { root }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApplyPatchArgs {
    /// A unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks), over one or more
    /// files. `--- /dev/null` creates a file, `+++ /dev/null` deletes one. Paths are relative
    /// to the workspace root; `a/` and `b/` prefixes are stripped.
    patch: String,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq)]
enum Line {
    Context(String),
    Remove(String),
    Add(String),
}

#[derive(Debug, Clone)]
struct Hunk {
    old_start: usize,
    lines: Vec<Line>,
    /// `\ No newline at end of file` after the new side's last line.
    new_no_newline: bool,
}

#[derive(Debug, Clone)]
struct FilePatch {
    old: Option<String>,
    new: Option<String>,
    hunks: Vec<Hunk>,
}

/// Parses a unified diff into file patches.
fn parse_patch(text: &str) -> Result<Vec<FilePatch>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(format!(
                    "line {}: `--- {old}` is not followed by a `+++` line",
                    i + 1
                ));
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
                return Err(format!(
                    "line {}: a hunk before any `---`/`+++` file header",
                    i + 1
                ));
            };
            let (old_start, old_len, new_len) = parse_hunk_header(line)
                .ok_or_else(|| format!("line {}: malformed hunk header `{line}`", i + 1))?;
            let mut hunk = Hunk {
                old_start,
                lines: Vec::new(),
                new_no_newline: false,
            };
            let (mut old_seen, mut new_seen) = (0, 0);
            i += 1;
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
                        return Err(format!(
                            "line {}: `{body}` inside a hunk (expected a line starting with \
                             ' ', '-' or '+'); the hunk header announced {old_len} old and \
                             {new_len} new lines",
                            i + 1
                        ))
                    }
                }
                i += 1;
            }
            if old_seen != old_len || new_seen != new_len {
                return Err(format!(
                    "the hunk `{line}` ends early: it announced {old_len} old and {new_len} new \
                     lines, the patch has {old_seen} and {new_seen}"
                ));
            }
            // `\ No newline at end of file` right after the hunk applies to its last line.
            while let Some(marker) = lines.get(i).filter(|l| l.starts_with('\\')) {
                let _ = marker;
                if matches!(
                    hunk.lines.last(),
                    Some(Line::Add(_)) | Some(Line::Context(_))
                ) {
                    hunk.new_no_newline = true;
                }
                i += 1;
            }
            file.hunks.push(hunk);
            continue;
        }
        // `diff --git`, `index`, mode lines and commentary between files are skipped.
        i += 1;
    }
    if files.is_empty() {
        return Err("no `---`/`+++` file headers found; give a unified diff".into());
    }
    Ok(files)
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

/// Applies `hunks` to `original`; the error names the hunk and what differed.
fn apply_hunks(original: &str, hunks: &[Hunk], shown: &str) -> Result<String, String> {
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
            return Err(format!(
                "hunk {} of `{shown}` (at line {}) does not apply: its context and removed lines \
                 occur nowhere after the previous hunk; {detail}. Read the file and make the \
                 patch from its current content",
                index + 1,
                hunk.old_start
            ));
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

/// What one file becomes.
struct Planned {
    path: PathBuf,
    shown: String,
    before: Option<Vec<u8>>,
    after: Option<String>,
    hunks: usize,
    added: usize,
    removed: usize,
}

#[async_trait]
impl Tool for ApplyPatchTool {
    fn name(&self) -> &str {
        "apply_patch"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> &str {
        "Apply a unified diff (one or more files; `--- /dev/null` creates a file, `+++ \
         /dev/null` deletes one) inside the workspace, all or nothing: if any hunk does not \
         match the file exactly, nothing is written and the error says which hunk and line. \
         Language-server diagnostics that the patch introduced are attached."
    }

    fn input_schema(&self) -> Value {
        schema_for::<ApplyPatchArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<PatchReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ApplyPatchArgs = parse_args(args)?;
        let files = parse_patch(&args.patch).map_err(|message| {
            ToolError::new(
                ErrorKind::InvalidPatch,
                format!("the patch cannot be read: {message}"),
            )
        })?;
        let mut planned: Vec<Planned> = Vec::new();
        for file in &files {
            let next = self.plan_file(file, &planned)?;
            planned.push(next);
        }
        commit(ctx, &self.root, &planned).await?;
        let files = planned
            .iter()
            .map(|p| PatchedFile {
                path: p.shown.clone(),
                action: match (&p.before, &p.after) {
                    (None, _) => PatchAction::Created,
                    (Some(_), None) => PatchAction::Deleted,
                    _ => PatchAction::Modified,
                },
                hunks: p.hunks,
                added: p.added,
                removed: p.removed,
            })
            .collect();
        Ok(report_output(&PatchReport {
            files,
            diagnostics: None,
        })?
        .with_written(planned.iter().map(|p| p.path.clone())))
    }
}

impl ApplyPatchTool {
    /// One file's section of the patch, checked and applied in memory: what the commit will
    /// write (nothing is written here). `planned`: the files before it (each may appear once).
    fn plan_file(&self, file: &FilePatch, planned: &[Planned]) -> Result<Planned, ToolError> {
        let target = file.new.as_ref().or(file.old.as_ref()).ok_or_else(|| {
            ToolError::new(
                ErrorKind::InvalidPatch,
                "a file patch goes from /dev/null to /dev/null",
            )
        })?;
        let path = self.root.resolve(target)?;
        let shown = self.root.relative(&path);
        if planned.iter().any(|p| p.path == path) {
            return Err(ToolError::new(
                ErrorKind::InvalidPatch,
                format!("`{shown}` appears twice in the patch; give each file one section"),
            ));
        }
        if file.old.is_some() && file.new.is_some() && file.old != file.new {
            return Err(ToolError::new(
                ErrorKind::InvalidPatch,
                format!(
                    "renames are not supported (`{}` → `{}`); patch the content and move \
                     the file separately",
                    file.old.as_deref().unwrap_or_default(),
                    file.new.as_deref().unwrap_or_default()
                ),
            ));
        }
        let before = super::read_bytes(
            &self.root,
            &path,
            &shown,
            super::FileLimits::default().edit_bytes,
            "patching",
        )?;
        let original = match (&before, file.old.is_some()) {
            (Some(_), false) => {
                return Err(ToolError::new(
                    ErrorKind::AlreadyExists,
                    format!("the patch creates `{shown}`, but it already exists"),
                ))
            }
            (None, true) => {
                return Err(ToolError::new(
                    ErrorKind::NotFound,
                    format!("the patch changes `{shown}`, which does not exist"),
                ))
            }
            (Some(bytes), true) => String::from_utf8(bytes.clone()).map_err(|_| {
                ToolError::new(ErrorKind::NotText, format!("`{shown}` is not UTF-8 text"))
            })?,
            (None, false) => String::new(),
        };
        let applied = apply_hunks(&original, &file.hunks, &shown).map_err(|message| {
            ToolError::new(ErrorKind::PatchDoesNotApply, message).with_detail("path", shown.clone())
        })?;
        let added = file
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| matches!(l, Line::Add(_)))
            .count();
        let removed = file
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| matches!(l, Line::Remove(_)))
            .count();
        let after = if file.new.is_none() {
            if !applied.is_empty() {
                return Err(ToolError::new(
                    ErrorKind::PatchDoesNotApply,
                    format!("the patch deletes `{shown}` but does not remove all of its lines"),
                ));
            }
            None
        } else {
            Some(applied)
        };
        Ok(Planned {
            path,
            shown,
            before,
            after,
            hunks: file.hunks.len(),
            added,
            removed,
        })
    }
}

/// Writes every planned file, or none, through the shared file transaction
/// (`cc_structural::Transaction`, as `resolve` and `lsp_rename` do): each file is checked
/// against the bytes the patch was computed from, written through an fsynced temporary file
/// and a rename, and everything already written is restored if one step fails.
async fn commit(
    ctx: &CallContext,
    root: &WorkspaceRoot,
    planned: &[Planned],
) -> Result<(), ToolError> {
    let mut tx = cc_structural::Transaction::new();
    for plan in planned {
        match (&plan.before, &plan.after) {
            (Some(before), Some(after)) => {
                tx.replace(&plan.path, before.clone(), after.clone().into_bytes())
            }
            (None, Some(after)) => tx.create(&plan.path, after.clone().into_bytes()),
            (Some(before), None) => tx.delete(&plan.path, Some(before.clone())),
            (None, None) => {}
        }
    }
    crate::commit::commit_checked(
        ctx,
        root,
        tx,
        "the patch",
        "read the files and make the patch from their current content",
    )
    .await
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(original: &str, patch: &str) -> Result<String, String> {
        let files = parse_patch(patch)?;
        apply_hunks(original, &files[0].hunks, "f")
    }

    #[test]
    fn applies_with_offset_and_keeps_missing_final_newline() {
        let original = "a\nb\nc\nd\ne";
        let patch =
            "--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n d\n-e\n+E\n\\ No newline at end of file\n";
        assert_eq!(apply(original, patch).unwrap(), "a\nb\nc\nd\nE");
        // Two lines were added above: the hunk is found two lines further down.
        let shifted = "x\ny\na\nb\nc\nd\ne\n";
        let patch = "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n";
        assert_eq!(apply(shifted, patch).unwrap(), "x\ny\na\nb\nC\nd\ne\n");
    }

    #[test]
    fn refuses_a_hunk_whose_context_differs() {
        let error = apply(
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
        let files = parse_patch("diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+one\n+two\n").unwrap();
        assert_eq!(files[0].old, None);
        assert_eq!(apply_hunks("", &files[0].hunks, "n").unwrap(), "one\ntwo\n");
        assert_eq!(
            apply("a\nb\n", "--- f\n+++ f\n@@ -1,0 +2 @@\n+mid\n").unwrap(),
            "a\nmid\nb\n"
        );
        assert!(parse_patch("just text").is_err());
        assert!(parse_patch("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n")
            .unwrap_err()
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
            if let Ok(files) = parse_patch(&patch) {
                for file in &files {
                    let _ = apply_hunks(&original, &file.hunks, "f");
                }
            }
        }

        /// Raw bytes as text never panic the parser either.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            if let Ok(files) = parse_patch(&text) {
                for file in &files {
                    let _ = apply_hunks("a\nb\n", &file.hunks, "f");
                }
            }
        }
    }
}
