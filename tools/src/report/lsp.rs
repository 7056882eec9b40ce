//! The `lsp` tool's results: navigation at a line and a symbol, a file's or the project's
//! diagnostics, symbols, code actions, the servers' status, a reload.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{NewDiagnostic, Render};
use cc_lsp_client::{LanguageStatus, Trust};

/// An `lsp` result: one of the reports below (told apart by their members).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // One per result, moved once.
pub enum LspReport {
    /// `status`.
    Status(LspStatusReport),
    /// An action the server does not support.
    Unsupported(UnsupportedReport),
    /// `reload`.
    Reload(ReloadReport),
    /// `diagnostics` with `file: "*"`.
    ProjectCheck(ProjectCheckReport),
    /// `code_actions`.
    CodeActions(CodeActionsReport),
    /// `diagnostics` of a file.
    FileDiagnostics(FileDiagnosticsReport),
    /// `symbols`.
    Symbols(SymbolsReport),
    /// `definition`, `type_definition`, `implementation`, `references`, `hover`.
    Navigation(NavigationReport),
}

impl Render for LspReport {
    fn render(&self) -> String {
        match self {
            LspReport::Status(r) => r.render(),
            LspReport::Unsupported(r) => r.render(),
            LspReport::Reload(r) => r.render(),
            LspReport::ProjectCheck(r) => r.render(),
            LspReport::CodeActions(r) => r.render(),
            LspReport::FileDiagnostics(r) => r.render(),
            LspReport::Symbols(r) => r.render(),
            LspReport::Navigation(r) => r.render(),
        }
    }
}

/// `status`: each language's server and state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LspStatusReport {
    /// One row per language (and project root).
    pub languages: Vec<LanguageStatus>,
    /// What the workspace's own code may do when a server starts.
    pub trust: Trust,
}

impl Render for LspStatusReport {
    fn render(&self) -> String {
        let rows = self
            .languages
            .iter()
            .map(|row| {
                format!(
                    "{} [{}] {}: {}{}",
                    row.language,
                    row.root.as_deref().unwrap_or("-"),
                    row.server.as_deref().unwrap_or("-"),
                    serde_json::to_value(row.state)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    row.reason
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        if self.trust == Trust::ReadOnly {
            format!(
                "read-only surface: servers run no workspace code (no build scripts or proc \
                 macros, no project interpreter or TypeScript, no cargo check)\n{rows}"
            )
        } else {
            rows
        }
    }
}

/// An action the file's server does not offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UnsupportedReport {
    /// The action asked for.
    pub action: String,
    /// Always false.
    pub supported: bool,
    /// `not supported by SERVER`.
    pub message: String,
}

impl Render for UnsupportedReport {
    fn render(&self) -> String {
        format!("{}: {}", self.action, self.message)
    }
}

/// `reload`: the servers stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReloadReport {
    /// Always `reload`.
    pub action: String,
    /// The language reloaded.
    pub language: String,
    /// Servers stopped (the next request starts one afresh).
    pub stopped: usize,
    /// Whether the `[lsp]` configuration was read again first.
    pub config_reread: bool,
}

impl Render for ReloadReport {
    fn render(&self) -> String {
        format!(
            "{}: {}stopped {} server(s); the next request starts it afresh",
            self.language,
            if self.config_reread {
                "re-read .cc/tools.toml and "
            } else {
                ""
            },
            self.stopped
        )
    }
}

/// Missing packages behind some diagnostics, folded into a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MissingPackages {
    /// The packages imported and not found.
    pub packages: Vec<String>,
    /// How many diagnostics only said that.
    pub diagnostics: usize,
    /// What that means, in a sentence (a file's diagnostics; a project row has its `note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `diagnostics` of one file: all its current errors and warnings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileDiagnosticsReport {
    /// Always `diagnostics`.
    pub action: String,
    /// The file.
    pub file: String,
    /// The server that answered.
    pub server: String,
    /// Its errors and warnings.
    pub diagnostics: Vec<NewDiagnostic>,
    /// Diagnostics that only said a dependency is not on disk, folded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_dependencies: Option<MissingPackages>,
}

/// `path:line: severity: message` (the whole message).
fn diagnostic_line(d: &NewDiagnostic) -> String {
    format!("{}:{}: {}: {}", d.path, d.line, d.severity, d.message)
}

impl Render for FileDiagnosticsReport {
    fn render(&self) -> String {
        let mut text = self
            .diagnostics
            .iter()
            .map(diagnostic_line)
            .collect::<Vec<_>>()
            .join("\n");
        if text.is_empty() {
            let folded = self
                .missing_dependencies
                .as_ref()
                .is_some_and(|m| m.diagnostics > 0);
            text = format!(
                "{}: no {}errors or warnings ({})",
                self.file,
                if folded { "other " } else { "" },
                self.server
            );
        }
        if let Some(note) = self
            .missing_dependencies
            .as_ref()
            .and_then(|m| m.note.as_ref())
        {
            text.push_str(&format!("\nnote: {note}"));
        }
        text
    }
}

/// One project's checker run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectCheckRow {
    /// The language.
    pub language: String,
    /// The project's root.
    pub root: String,
    /// The command run.
    pub command: String,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// Errors it found.
    pub errors: usize,
    /// Warnings it found.
    pub warnings: usize,
    /// What to know about its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Diagnostics that only said a dependency is not on disk, folded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_dependencies: Option<MissingPackages>,
}

/// A project not checked, or files its configuration leaves out of its checker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectUnchecked {
    /// The language.
    pub language: String,
    /// The project's root.
    pub root: String,
    /// The checker's error kind, or `left_out_by_configuration`.
    pub kind: String,
    /// Why.
    pub reason: String,
    /// The files left out (the first 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    /// How many files were left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_total: Option<usize>,
}

/// The kind of [`ProjectUnchecked`] that lists files a configuration leaves out.
pub const LEFT_OUT_BY_CONFIGURATION: &str = "left_out_by_configuration";

/// `diagnostics` with `file: "*"`: the project checkers' findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectCheckReport {
    /// Always `diagnostics`.
    pub action: String,
    /// Always `*`.
    pub file: String,
    /// One row per project checked.
    pub checks: Vec<ProjectCheckRow>,
    /// The errors (first) and warnings found, the first 200.
    pub diagnostics: Vec<NewDiagnostic>,
    /// How many in all.
    pub total: usize,
    /// Whether `diagnostics` is cut.
    pub truncated: bool,
    /// Projects not checked, and files left out of a checker.
    pub unchecked: Vec<ProjectUnchecked>,
}

impl Render for ProjectCheckReport {
    fn render(&self) -> String {
        let mut text: Vec<String> = self
            .checks
            .iter()
            .map(|row| {
                format!(
                    "{} [{}] `{}`: {} error(s), {} warning(s)",
                    row.language, row.root, row.command, row.errors, row.warnings
                )
            })
            .collect();
        text.extend(self.diagnostics.iter().map(diagnostic_line));
        let listed = self.diagnostics.len();
        if self.total > listed {
            text.push(format!(
                "… {} more not listed (first {listed} of {})",
                self.total - listed,
                self.total
            ));
        }
        let (left_out, failed): (Vec<&ProjectUnchecked>, Vec<&ProjectUnchecked>) = self
            .unchecked
            .iter()
            .partition(|u| u.kind == LEFT_OUT_BY_CONFIGURATION);
        text.extend(
            failed
                .iter()
                .map(|u| format!("{} [{}]: not checked: {}", u.language, u.root, u.reason)),
        );
        for u in left_out {
            let files = u.files.as_deref().unwrap_or_default();
            let total = u.files_total.unwrap_or(files.len());
            text.push(format!(
                "{} [{}]: {total} file(s) not checked, {}: {}{}",
                u.language,
                u.root,
                u.reason,
                files
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                if total > 10 { ", …" } else { "" }
            ));
        }
        for row in &self.checks {
            if let Some(note) = &row.note {
                text.push(format!("note ({} [{}]): {note}", row.language, row.root));
            }
        }
        text.join("\n")
    }
}

/// A symbol of `symbols`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolEntry {
    /// Its file (absent when the server named none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Its line.
    pub line: u64,
    /// That line's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its name.
    pub name: String,
    /// Its kind (`class`, `function`, …).
    pub kind: String,
    /// The symbol it is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

/// `symbols`: a workspace search (`query`) or a file's outline (`file`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolsReport {
    /// Always `symbols`.
    pub action: String,
    /// The search text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The file outlined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The symbols.
    pub symbols: Vec<SymbolEntry>,
    /// How many in all.
    pub total: usize,
    /// Whether `symbols` is cut.
    pub truncated: bool,
    /// A search's matches outside the workspace (system headers, installed packages):
    /// counted, not listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_workspace: Option<usize>,
}

impl Render for SymbolsReport {
    fn render(&self) -> String {
        let scope = match (&self.query, &self.file) {
            (Some(query), _) => format!("matching `{query}` in the workspace"),
            (None, Some(file)) => format!("in {file}"),
            _ => String::new(),
        };
        let mut lines = vec![if self.symbols.is_empty() {
            format!("no symbols {scope}")
        } else {
            format!(
                "{} {scope}:",
                count_heading(self.symbols.len(), self.total, "symbols")
            )
        }];
        lines.extend(self.symbols.iter().map(|s| {
            format!(
                "{} {} {}:{}",
                s.kind,
                s.name,
                s.path.as_deref().unwrap_or_default(),
                s.line
            )
        }));
        let mut text = lines.join("\n");
        if let Some(outside) = self.outside_workspace.filter(|n| *n > 0) {
            text.push_str(&format!(
                "\n({outside} more outside the workspace, not listed)"
            ));
        }
        text
    }
}

/// The heading of a list of `total` results of which `shown` are listed: `first 50 of 313
/// references` when cut, `3 references` otherwise.
pub(crate) fn count_heading(shown: usize, total: usize, what: &str) -> String {
    if shown < total {
        format!("first {shown} of {total} {what}")
    } else {
        format!("{total} {what}")
    }
}

/// Where the request was asked: the line and the symbol on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AskedAt {
    /// The action.
    pub action: String,
    /// The file.
    pub file: String,
    /// The line (1-based).
    pub line: u32,
    /// The symbol as given.
    pub symbol: Option<String>,
    /// The column of the occurrence used (0-based, in characters).
    pub column: usize,
    /// Which occurrence on the line was used, when there were several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl AskedAt {
    /// `` `symbol` at file:line ``.
    fn place(&self) -> String {
        format!(
            "`{}` at {}:{}",
            self.symbol.as_deref().unwrap_or(""),
            self.file,
            self.line
        )
    }
}

/// A code action the server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodeActionEntry {
    /// Its title.
    pub title: Option<String>,
    /// Its kind (`quickfix`, `refactor.extract`, …).
    pub kind: Option<String>,
    /// Whether it carries an edit.
    pub has_edit: bool,
    /// The command it runs.
    pub command: Option<String>,
    /// Whether the server prefers it.
    pub preferred: bool,
    /// The server fills in its edit when it is resolved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub edit_on_resolve: bool,
    /// The messages of the diagnostics it fixes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<String>,
}

/// A diagnostic handed to the server with the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HandedDiagnostic {
    /// Its line.
    pub line: u64,
    /// Its message.
    pub message: String,
    /// Its code (a string or a number).
    pub code: Option<Value>,
}

/// `code_actions`: what the server offers at a line and a symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CodeActionsReport {
    /// Where it was asked.
    #[serde(flatten)]
    pub at: AskedAt,
    /// The actions.
    pub actions: Vec<CodeActionEntry>,
    /// The diagnostics on the line, handed to the server.
    pub diagnostics: Vec<HandedDiagnostic>,
}

impl Render for CodeActionsReport {
    fn render(&self) -> String {
        self.actions
            .iter()
            .map(|a| a.title.clone().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

pub use cc_analysis::enclosing::Enclosing;

/// A place in the workspace: root-relative path, 1-based line, that line's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Place {
    /// The file (a URI when it is not a file).
    pub path: String,
    /// The line.
    pub line: u64,
    /// That line's text, trimmed.
    pub text: String,
    /// The definition it lies in (references and implementations; none at the top level).
    #[serde(rename = "in", default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Enclosing>,
    /// How a place the server's list missed was confirmed (`definition`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_by: Option<String>,
    /// Why a place is listed apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What a navigation request found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NavAnswer {
    /// Places (definitions, references, implementations).
    Locations {
        /// The places, in file and line order for references and implementations.
        locations: Vec<Place>,
        /// How many in all.
        total: usize,
        /// Whether `locations` is cut.
        truncated: bool,
        /// Occurrences of the name in code the server did not include (outside its
        /// project, or not confirmed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outside_project: Option<Vec<Place>>,
        /// How many in all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outside_project_total: Option<usize>,
        /// Extensions of places the server found by name, not by its compiler.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by_name: Option<Vec<String>>,
        /// Extensions of the language the server does not compile.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_compiled: Option<Vec<String>>,
    },
    /// `hover`'s text.
    Hover {
        /// The signature and documentation (none: the server had nothing).
        hover: Option<String>,
    },
}

/// A navigation action's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NavigationReport {
    /// Where it was asked.
    #[serde(flatten)]
    pub at: AskedAt,
    /// The server that answered.
    pub server: String,
    /// What it found.
    #[serde(flatten)]
    pub answer: NavAnswer,
    /// Why the answer may be partial (the server had not finished its analysis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// What the server's answers cannot cover here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<String>,
    /// When nothing was found: why the code there is not compiled (an `#if` branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inactive: Option<String>,
}

impl NavigationReport {
    /// Whether references and implementations are grouped by file and definition.
    fn cross_file(&self) -> bool {
        matches!(self.at.action.as_str(), "references" | "implementation")
    }

    fn locations_text(&self, locations: &[Place], total: usize) -> String {
        let place = self.at.place();
        let what = self.at.action.replace('_', " ");
        if locations.is_empty() {
            format!("no {what} found for {place} ({})", self.server)
        } else if self.cross_file() {
            format!(
                "{} of {place}:\n{}",
                count_heading(locations.len(), total, &what),
                grouped(locations)
            )
        } else {
            let mut lines = vec![format!(
                "{} of {place}:",
                count_heading(locations.len(), total, &what)
            )];
            lines.extend(
                locations
                    .iter()
                    .map(|l| format!("{}:{}: {}", l.path, l.line, l.text)),
            );
            lines.join("\n")
        }
    }
}

impl Render for NavigationReport {
    fn render(&self) -> String {
        let mut text;
        let mut notes = Vec::new();
        match &self.answer {
            NavAnswer::Hover { hover } => {
                text = hover
                    .clone()
                    .unwrap_or_else(|| format!("no hover information for {}", self.at.place()));
            }
            NavAnswer::Locations {
                locations,
                total,
                outside_project,
                outside_project_total,
                by_name,
                ..
            } => {
                text = self.locations_text(locations, *total);
                let outside = outside_project.as_deref().unwrap_or_default();
                if !outside.is_empty() {
                    text.push_str(&format!(
                        "\n{} of the same name in code that {} did not include (outside its \
                         project, or not confirmed):",
                        count_heading(
                            outside.len(),
                            outside_project_total.unwrap_or(outside.len()),
                            "occurrences"
                        ),
                        self.server
                    ));
                    for place in outside {
                        let why = place
                            .why
                            .as_ref()
                            .map(|why| format!(" ({why})"))
                            .unwrap_or_default();
                        text.push_str(&format!(
                            "\n  {}:{}: {}{why}",
                            place.path, place.line, place.text
                        ));
                    }
                }
                if let Some(by_name) = by_name.as_ref().filter(|b| !b.is_empty()) {
                    notes.push(format!(
                        "places in .{} files come from {}'s search by name, not its compiler: \
                         some may be other symbols of the same name",
                        by_name.join(", ."),
                        self.server
                    ));
                }
            }
        }
        for note in notes.iter().chain(&self.at.note) {
            text.push_str(&format!("\nnote: {note}"));
        }
        if let Some(incomplete) = &self.incomplete {
            text.push_str(&format!("\nINCOMPLETE: {incomplete}"));
        }
        if let Some(limits) = &self.limits {
            text.push_str(&format!("\nnote: {limits}"));
        }
        if let Some(inactive) = &self.inactive {
            text.push_str(&format!("; the code there is {inactive}"));
        }
        text
    }
}

/// Places grouped by file, then by the definition they lie in, each with its line text:
/// "who uses this" in one reading.
fn grouped(locations: &[Place]) -> String {
    let mut out = String::new();
    let mut file: Option<&str> = None;
    let mut within: Option<String> = None;
    for location in locations {
        let path = location.path.as_str();
        if file != Some(path) {
            out.push_str(&format!("{path}\n"));
            file = Some(path);
            within = None;
        }
        let place = match &location.within {
            Some(def) => format!("in {} {} (line {})", def.kind, def.name, def.line),
            None => "(top level)".to_owned(),
        };
        if within.as_deref() != Some(place.as_str()) {
            out.push_str(&format!("  {place}:\n"));
            within = Some(place);
        }
        out.push_str(&format!("    {}: {}\n", location.line, location.text));
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::report::readme::{properties, result_cell};

    /// The top-level members of `T`, with those of its `index`-th `anyOf` alternative (a
    /// flattened enum's variant).
    fn members<T: JsonSchema>(variant: usize) -> BTreeSet<String> {
        let schema = schemars::schema_for!(T).to_value();
        let mut keys = properties::<T>();
        if let Some(alternative) = schema["anyOf"][variant]["properties"].as_object() {
            keys.extend(alternative.keys().cloned());
        }
        keys
    }

    /// The README's table of `lsp` results lists every member of each report and no other.
    #[test]
    fn the_readme_lists_the_fields_of_each_report() {
        let rows = [
            ("| `definition`, ", members::<NavigationReport>(0)),
            ("| `hover` |", members::<NavigationReport>(1)),
            ("| `code_actions` |", properties::<CodeActionsReport>()),
            ("| `symbols` |", properties::<SymbolsReport>()),
            ("| `diagnostics` |", properties::<FileDiagnosticsReport>()),
            (
                "| `diagnostics` `\"*\"` |",
                properties::<ProjectCheckReport>(),
            ),
            ("| `status` |", properties::<LspStatusReport>()),
            ("| `reload` |", properties::<ReloadReport>()),
            ("| not supported |", properties::<UnsupportedReport>()),
            ("| `lsp_rename` |", properties::<RenameReport>()),
        ];
        for (row, fields) in rows {
            assert!(fields.len() > 1, "{row}");
            assert_eq!(result_cell(row), fields, "the README's row {row}");
        }
    }
}

/// What `lsp_rename` renamed: the symbol as asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Renamed {
    /// The old name.
    pub from: String,
    /// The new name.
    pub to: String,
    /// The file it was asked in.
    pub file: String,
    /// The line it was asked at.
    pub line: usize,
}

/// One file the rename changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RenamedFile {
    /// The file, relative to the root.
    pub path: String,
    /// `modified`, `created`, `renamed` or `deleted`.
    pub action: String,
    /// Edits in it.
    pub edits: usize,
    /// A renamed file's old path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

pub use cc_analysis::rename::BuiltFrom;

/// Occurrences of the old name left after the rename.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Leftovers {
    /// In code (the first few, with why).
    pub code: Vec<Place>,
    /// How many in code.
    pub code_total: usize,
    /// In comments and strings, left as they are (the first few).
    pub comments: Vec<Place>,
    /// How many there.
    pub comments_total: usize,
}

/// Occurrences of the old name that are other symbols (left alone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OtherSymbols {
    /// The first few.
    pub listed: Vec<Place>,
    /// How many in all.
    pub total: usize,
}

/// `lsp_rename`'s result: every file written, or none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RenameReport {
    /// The symbol renamed.
    pub renamed: Renamed,
    /// The files changed.
    pub files: Vec<RenamedFile>,
    /// Edits in all.
    pub edits: usize,
    /// No code occurrence of the old name is left, and every file that mentions it was
    /// scanned.
    pub complete: bool,
    /// Occurrences the server's edit missed that it confirmed as the symbol: renamed too.
    pub added_by_scan: usize,
    /// How the edit was built.
    pub built_from: BuiltFrom,
    /// What is left of the old name.
    pub leftovers: Leftovers,
    /// Occurrences that are other symbols.
    pub other_symbols: OtherSymbols,
    /// Files scanned for the old name.
    pub scanned_files: usize,
    /// Files mentioning it that were not scanned.
    pub unscanned_files: usize,
    /// Whether the scan for leftovers ran (not for a name that is not a plain identifier).
    pub leftovers_checked: bool,
    /// The server that renamed.
    pub server: String,
    /// What the write's checks found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<super::WriteReport>,
}

impl RenameReport {
    /// What the text says about how complete the rename is.
    fn completion(&self) -> String {
        let old = &self.renamed.from;
        if !self.leftovers_checked {
            return format!("\nnot checked for leftovers: `{old}` is not a plain identifier");
        }
        let mut text = String::new();
        if self.added_by_scan > 0 {
            text.push_str(&format!(
                "\n{} occurrence(s) the server's edit missed were confirmed as the same symbol and renamed too",
                self.added_by_scan
            ));
        }
        let place = |l: &Place| {
            format!(
                "\n  {}:{}: {} ({})",
                l.path,
                l.line,
                l.text,
                l.why.as_deref().unwrap_or_default()
            )
        };
        let leftovers = &self.leftovers;
        if leftovers.code_total == 0 && self.unscanned_files == 0 {
            text.push_str(&format!(
                "\ncomplete: no code occurrence of `{old}` is left"
            ));
        } else {
            text.push_str(&format!(
                "\nINCOMPLETE: {} code occurrence(s) of `{old}` are left{}:",
                leftovers.code_total,
                if self.unscanned_files > 0 {
                    format!(
                        " ({} more file(s) mentioning it were not scanned)",
                        self.unscanned_files
                    )
                } else {
                    String::new()
                }
            ));
            text.extend(leftovers.code.iter().map(place));
            if leftovers.code_total > leftovers.code.len() {
                text.push_str(&format!(
                    "\n  (first {} of {})",
                    leftovers.code.len(),
                    leftovers.code_total
                ));
            }
        }
        if leftovers.comments_total > 0 {
            text.push_str(&format!(
                "\n{} mention(s) in comments or strings were left as they are{}:",
                leftovers.comments_total,
                if leftovers.comments_total > leftovers.comments.len() {
                    format!(
                        " (first {} of {})",
                        leftovers.comments.len(),
                        leftovers.comments_total
                    )
                } else {
                    String::new()
                }
            ));
            text.extend(leftovers.comments.iter().map(place));
        }
        if self.other_symbols.total > 0 {
            text.push_str(&format!(
                "\n{} occurrence(s) of `{old}` are other symbols of the same name (left alone)",
                self.other_symbols.total
            ));
        }
        text
    }
}

impl Render for RenameReport {
    fn render(&self) -> String {
        let mut text = format!(
            "renamed `{}` to `{}`: {} edit(s) in {} file(s): {}",
            self.renamed.from,
            self.renamed.to,
            self.edits,
            self.files.len(),
            self.files
                .iter()
                .map(|f| format!("{} ({})", f.path, f.edits))
                .collect::<Vec<_>>()
                .join(", ")
        );
        match self.built_from {
            BuiltFrom::KotlinCompiler => text.push_str(&format!(
                " ({} cannot rename Kotlin: the edit was built from the uses the Kotlin \
                 compiler resolves to the declaration, and the scan)",
                self.server
            )),
            BuiltFrom::References => text.push_str(&format!(
                " ({} cannot rename: the edit was built from its references and the scan)",
                self.server
            )),
            BuiltFrom::Rename => {}
        }
        text.push_str(&self.completion());
        if let Some(diagnostics) = self.diagnostics.as_ref().filter(|d| !d.is_empty()) {
            text.push('\n');
            text.push_str(&diagnostics.render());
        }
        text
    }
}
