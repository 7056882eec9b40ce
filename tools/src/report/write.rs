//! What a write's checks found: the report every writing tool's result carries under
//! `"diagnostics"` (built by the run's after-write hooks: the language servers' diagnostics
//! and the code graph's update), and its text.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Render;

/// What the run's after-write hooks report of one write. Empty (nothing checked the files and
/// nothing failed): nothing is attached to the result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteReport {
    /// The language servers' (and checkers') answer, when anything checked the files.
    #[serde(flatten)]
    pub checks: Option<WriteDiagnostics>,
    /// The code graph's index could not take the write in (the next graph call reads the
    /// files again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_update_failed: Option<String>,
}

impl WriteReport {
    /// The checks' answer alone.
    pub fn checked(checks: WriteDiagnostics) -> Self {
        WriteReport {
            checks: Some(checks),
            graph_update_failed: None,
        }
    }

    /// Nothing to attach.
    pub fn is_empty(&self) -> bool {
        self.checks.is_none() && self.graph_update_failed.is_none()
    }

    /// The JSON schema of the report (what a client may check `"diagnostics"` against).
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(WriteReport)).unwrap_or_default()
    }
}

/// The diagnostics a write added, and how far the check reached.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteDiagnostics {
    /// Diagnostics the write added (not there before it), in the written files and in the
    /// files that depend on them.
    pub new: Vec<NewDiagnostic>,
    /// Servers that had not answered within the cap: their files are not known to be clean.
    pub pending: Vec<String>,
    /// The files those servers had not answered for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_files: Vec<String>,
    /// Why each pending server counts as not having answered, for the first of its files in
    /// `pending_files` (how long it was waited for, whether it had published for the file,
    /// the work it said was in progress), by server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pending_why: BTreeMap<String, String>,
    /// Written files nothing could check, each with why.
    pub unchecked: Vec<UncheckedFile>,
    /// Files whose diagnostics before the write were not known: what is listed for them may
    /// predate it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_baseline: Vec<String>,
    /// Packages the project imports and the disk does not have, told once per run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_dependencies: Option<MissingDependenciesNote>,
    /// Errors the written files still have that predate this write (not new, so not in
    /// `new`): the first [`OLDER_ERRORS_LISTED`], so that a written file is never taken for
    /// clean because nothing is new in it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub older_errors: Vec<NewDiagnostic>,
    /// How many such errors in all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub older_errors_total: usize,
    /// What changed outside the run (the shell, git, a formatter) since the last write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_outside: Option<ChangedOutside>,
    /// How many files were checked, and which dependents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<CheckScope>,
}

/// How many of the written files' older errors a report lists.
pub const OLDER_ERRORS_LISTED: usize = 5;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One diagnostic as the agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDiagnostic {
    /// The file, relative to the workspace root.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// `error`, `warning`, `information` or `hint`.
    pub severity: String,
    /// The server's code (`reportAttributeAccessIssue`, `E0308`), if any.
    pub code: Option<String>,
    /// The server's message (the text shows its first line).
    pub message: String,
    /// Which tool produced it (`basedpyright`, `clang`), if said.
    pub source: Option<String>,
}

impl NewDiagnostic {
    /// `diagnostic` of the file shown as `path`.
    pub fn new(path: &str, diagnostic: &cc_lsp_client::Diagnostic) -> Self {
        NewDiagnostic {
            path: path.to_owned(),
            line: diagnostic.line,
            severity: diagnostic.severity.as_str().to_owned(),
            code: diagnostic.code.clone(),
            message: diagnostic.message.clone(),
            source: diagnostic.source.clone(),
        }
    }

    /// `path:line: severity [code]: first line of the message`.
    pub fn line(&self) -> String {
        let code = self
            .code
            .as_deref()
            .map(|code| format!(" [{code}]"))
            .unwrap_or_default();
        format!(
            "{}:{}: {}{code}: {}",
            self.path,
            self.line,
            self.severity,
            self.message.lines().next().unwrap_or("")
        )
    }
}

/// A written file nothing could check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UncheckedFile {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Why (no server for the language, a server that cannot start, what to install).
    pub reason: String,
}

/// Missing packages, as a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissingDependenciesNote {
    /// The packages imported and not found (`android.os`).
    pub packages: Vec<String>,
    /// What that means for the diagnostics, in a sentence.
    pub note: String,
}

/// What changed outside the run since the last write, and the diagnostics that came with it:
/// never this write's doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangedOutside {
    /// The first 20 files changed.
    pub files: Vec<String>,
    /// How many files changed in all.
    pub files_total: usize,
    /// Diagnostics those changes brought.
    pub new: Vec<NewDiagnostic>,
    /// A gap in the watcher's events (a full re-check stands in for them), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How far a write's check reached.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckScope {
    /// Files whose diagnostics were read: the written ones and their dependents.
    pub files_checked: usize,
    /// Of those, the files that depend on the written ones.
    pub dependents_checked: usize,
    /// Files that may depend on the written ones and were not checked (the limit).
    pub dependents_skipped: usize,
    /// The dependents checked, relative to the workspace root.
    pub dependents: Vec<String>,
    /// How the dependents were found: `graph` (the code graph) or `word_scan`.
    pub dependents_from: Vec<String>,
}

impl Render for WriteReport {
    fn render(&self) -> String {
        let mut lines: Vec<String> = Vec::new();
        if let Some(checks) = &self.checks {
            lines.push(checks.render());
        }
        if let Some(error) = &self.graph_update_failed {
            lines.push(format!(
                "graph: the index did not take this write in ({error}); the next graph call reads the files again"
            ));
        }
        lines.join("\n")
    }
}

impl Render for WriteDiagnostics {
    fn render(&self) -> String {
        let mut lines = Vec::new();
        let nothing_checked = self.scope.as_ref().is_some_and(|s| s.files_checked == 0);
        if self.new.is_empty() && nothing_checked {
            // Non-negotiable 7: "no new diagnostics" only for files that were checked.
            lines.push(
                "no file was checked: nothing is known of this write's diagnostics".to_owned(),
            );
        } else if self.new.is_empty() {
            lines.push("no new diagnostics".to_owned());
        } else {
            lines.push(format!("{} new diagnostic(s):", self.new.len()));
            for item in &self.new {
                lines.push(format!("  {}", item.line()));
            }
        }
        for server in &self.pending {
            match self.pending_why.get(server) {
                Some(why) => lines.push(format!(
                    "pending: {server} has not answered yet (not clean): {why}"
                )),
                None => lines.push(format!(
                    "pending: {server} has not answered yet (not clean)"
                )),
            }
        }
        if !self.pending_files.is_empty() {
            lines.push(format!(
                "  not answered for: {}",
                self.pending_files.join(", ")
            ));
        }
        for item in &self.unchecked {
            lines.push(format!("unchecked: {} ({})", item.path, item.reason));
        }
        if self.older_errors_total > 0 {
            let more = self
                .older_errors_total
                .saturating_sub(self.older_errors.len());
            lines.push(format!(
                "still there: {} error(s) the written file(s) had before this write{}:",
                self.older_errors_total,
                if more > 0 {
                    format!(" ({more} more not listed)")
                } else {
                    String::new()
                }
            ));
            for item in &self.older_errors {
                lines.push(format!("  {}", item.line()));
            }
        }
        if !self.no_baseline.is_empty() {
            lines.push(format!(
                "note: no earlier diagnostics were known for {}, so some of the above may predate \
                 this write",
                self.no_baseline.join(", ")
            ));
        }
        if let Some(missing) = &self.missing_dependencies {
            lines.push(format!("note: {}", missing.note));
        }
        if let Some(outside) = &self.changed_outside {
            lines.push(outside.render());
        }
        if let Some(scope) = &self.scope {
            lines.push(scope.render());
        }
        lines.join("\n")
    }
}

impl Render for ChangedOutside {
    fn render(&self) -> String {
        let mut line = format!(
            "changed outside this run since the last write: {} file(s){}",
            self.files_total,
            if self.files.is_empty() {
                String::new()
            } else {
                format!(
                    " ({}{})",
                    self.files
                        .iter()
                        .take(10)
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    if self.files_total > 10 { ", …" } else { "" }
                )
            }
        );
        if let Some(note) = &self.note {
            line.push_str(&format!("; {note}"));
        }
        let mut lines = vec![line];
        if !self.new.is_empty() {
            lines.push(format!(
                "  {} diagnostic(s) came with those changes, not with this write:",
                self.new.len()
            ));
            for item in &self.new {
                lines.push(format!("  {}", item.line()));
            }
        }
        lines.join("\n")
    }
}

impl Render for CheckScope {
    fn render(&self) -> String {
        let mut line = format!(
            "checked {} file(s): {} written, {} that depend on them",
            self.files_checked,
            self.files_checked.saturating_sub(self.dependents_checked),
            self.dependents_checked
        );
        if !self.dependents.is_empty() {
            let names: Vec<&str> = self
                .dependents
                .iter()
                .take(10)
                .map(String::as_str)
                .collect();
            line.push_str(&format!(
                " ({}{})",
                names.join(", "),
                if self.dependents_checked > 10 {
                    ", …"
                } else {
                    ""
                }
            ));
        }
        if self.dependents_skipped > 0 {
            line.push_str(&format!(
                "; {} more file(s) that may depend on them were not checked (limit)",
                self.dependents_skipped
            ));
        }
        if !self.dependents_from.is_empty() {
            let from: Vec<&str> = self
                .dependents_from
                .iter()
                .map(|f| {
                    if f == "graph" {
                        "the code graph"
                    } else {
                        "a word scan"
                    }
                })
                .collect();
            line.push_str(&format!("; dependents found by {}", from.join(" and ")));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(path: &str, line: u32) -> NewDiagnostic {
        NewDiagnostic {
            path: path.into(),
            line,
            severity: "error".into(),
            code: Some("E0308".into()),
            message: "mismatched types\nexpected `u32`".into(),
            source: None,
        }
    }

    fn full() -> WriteReport {
        WriteReport {
            checks: Some(WriteDiagnostics {
                new: vec![diagnostic("src/a.rs", 3)],
                pending: vec!["gopls".into()],
                pending_files: vec!["b.go".into()],
                pending_why: [(
                    "gopls".into(),
                    "no diagnostics for this version after 10 s".into(),
                )]
                .into(),
                unchecked: vec![UncheckedFile {
                    path: "c.zig".into(),
                    reason: "no server for zig".into(),
                }],
                no_baseline: vec!["src/a.rs".into()],
                older_errors: vec![diagnostic("src/a.rs", 9)],
                older_errors_total: 7,
                missing_dependencies: Some(MissingDependenciesNote {
                    packages: vec!["android.os".into()],
                    note: "1 package cannot be found".into(),
                }),
                changed_outside: Some(ChangedOutside {
                    files: vec!["d.rs".into()],
                    files_total: 1,
                    new: vec![diagnostic("d.rs", 1)],
                    note: None,
                }),
                scope: Some(CheckScope {
                    files_checked: 3,
                    dependents_checked: 2,
                    dependents_skipped: 1,
                    dependents: vec!["e.rs".into(), "f.rs".into()],
                    dependents_from: vec!["graph".into()],
                }),
            }),
            graph_update_failed: Some("disk full".into()),
        }
    }

    /// The JSON is the type, field for field: read back, it is the same value.
    #[test]
    fn the_json_reads_back_as_the_same_report() {
        for report in [
            full(),
            WriteReport::checked(WriteDiagnostics::default()),
            WriteReport {
                checks: None,
                graph_update_failed: Some("locked".into()),
            },
        ] {
            let json = serde_json::to_value(&report).unwrap();
            let back: WriteReport = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(back, report, "{json:#}");
        }
        let schema = WriteReport::json_schema();
        for key in [
            "new",
            "pending",
            "unchecked",
            "scope",
            "graph_update_failed",
        ] {
            assert!(schema["properties"].get(key).is_some(), "{schema:#}");
        }
    }

    #[test]
    fn every_fact_is_in_the_text() {
        insta::assert_snapshot!(full().render(), @r"
        1 new diagnostic(s):
          src/a.rs:3: error [E0308]: mismatched types
        pending: gopls has not answered yet (not clean): no diagnostics for this version after 10 s
          not answered for: b.go
        unchecked: c.zig (no server for zig)
        still there: 7 error(s) the written file(s) had before this write (6 more not listed):
          src/a.rs:9: error [E0308]: mismatched types
        note: no earlier diagnostics were known for src/a.rs, so some of the above may predate this write
        note: 1 package cannot be found
        changed outside this run since the last write: 1 file(s) (d.rs)
          1 diagnostic(s) came with those changes, not with this write:
          d.rs:1: error [E0308]: mismatched types
        checked 3 file(s): 1 written, 2 that depend on them (e.rs, f.rs); 1 more file(s) that may depend on them were not checked (limit); dependents found by the code graph
        graph: the index did not take this write in (disk full); the next graph call reads the files again
        ");
    }

    /// The README's description of `diagnostics` names every field of the type, and no other.
    #[test]
    fn the_readme_lists_the_fields_of_the_report() {
        let readme = include_str!("../../../README.md");
        let start = readme
            .find("`diagnostics` is `{")
            .expect("the README describes `diagnostics`");
        let block = &readme[start..];
        let block = &block[..block.find("}`").expect("the description ends with }`")];
        let listed: std::collections::BTreeSet<&str> =
            block.split('"').skip(1).step_by(2).collect();
        let schema = WriteReport::json_schema();
        let fields: std::collections::BTreeSet<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(listed, fields, "{block}");
    }

    /// A check that reached no file never reads as a clean one.
    #[test]
    fn nothing_checked_claims_no_clean_check() {
        let text = WriteReport::checked(WriteDiagnostics {
            unchecked: vec![UncheckedFile {
                path: "a.zig".into(),
                reason: "no language server for zig".into(),
            }],
            scope: Some(CheckScope::default()),
            ..WriteDiagnostics::default()
        })
        .render();
        assert!(!text.contains("no new diagnostics"), "{text}");
        assert!(text.starts_with("no file was checked"), "{text}");
        assert!(
            text.contains("unchecked: a.zig (no language server for zig)"),
            "{text}"
        );
    }

    /// A graph failure with nothing checked never reads as a clean check.
    #[test]
    fn a_graph_failure_alone_claims_no_check() {
        let text = WriteReport {
            checks: None,
            graph_update_failed: Some("locked".into()),
        }
        .render();
        assert!(!text.contains("no new diagnostics"), "{text}");
        assert!(text.contains("locked"), "{text}");
    }
}
