//! Diagnostics as this crate reports them: a 1-based line, a severity, a code, a message.

use serde::Serialize;
use serde_json::Value;

/// How serious a diagnostic is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// 1
    Error,
    /// 2
    Warning,
    /// 3
    Information,
    /// 4
    Hint,
}

impl Severity {
    /// `error`, `warning`, `information`, `hint`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// One diagnostic of one file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Diagnostic {
    /// 1-based line of its start.
    pub line: u32,
    /// Start column in the server's position encoding (0-based).
    #[serde(skip)]
    pub character: u32,
    /// 1-based line of its end.
    #[serde(skip)]
    pub end_line: u32,
    /// How serious it is.
    pub severity: Severity,
    /// The server's code (`reportAttributeAccessIssue`, `E0308`), if any.
    pub code: Option<String>,
    /// The message.
    pub message: String,
    /// Which tool produced it (`basedpyright`, `pyflakes`, `clang`), if said.
    pub source: Option<String>,
    /// The server tagged it "unnecessary" (unused code, faded out by editors) — LSP tag 1.
    #[serde(skip)]
    pub unnecessary: bool,
    /// The server tagged it "deprecated" — LSP tag 2.
    #[serde(skip)]
    pub deprecated: bool,
}

/// What identifies a diagnostic across edits: position deliberately left out, so a
/// diagnostic that merely moved is the same one.
pub type DiagnosticKey = (Severity, Option<String>, String);

/// JDT LS names the part of an unresolved import it stopped at, which depends on the pass:
/// its build says "The import expo.modules.kotlin cannot be resolved", a later check of the
/// open file "The import expo.modules.kotlin.AppContext cannot be resolved". One import
/// missing before and after a write is the same finding: keyed by its first name only.
fn unresolved_import_key(message: &str) -> String {
    let Some(name) = message
        .strip_prefix("The import ")
        .and_then(|rest| rest.strip_suffix(" cannot be resolved"))
    else {
        return message.to_owned();
    };
    let first = name.split('.').next().unwrap_or(name);
    format!("The import {first}.* cannot be resolved")
}

impl Diagnostic {
    /// Its identity for the ledger.
    pub fn key(&self) -> DiagnosticKey {
        (
            self.severity,
            self.code.clone(),
            unresolved_import_key(&self.message),
        )
    }

    /// Reads an LSP `Diagnostic` object as the server sent it (`None` when lsp-types cannot
    /// read it: one bad entry is skipped, not the list).
    pub fn from_lsp(value: &Value) -> Option<Diagnostic> {
        serde_json::from_value::<lsp_types::Diagnostic>(value.clone())
            .ok()
            .map(|diagnostic| Diagnostic::from_typed(&diagnostic))
    }

    /// One typed LSP diagnostic.
    pub fn from_typed(diagnostic: &lsp_types::Diagnostic) -> Diagnostic {
        use lsp_types::{DiagnosticSeverity, DiagnosticTag, NumberOrString};
        let range = diagnostic.range;
        let severity = match diagnostic.severity {
            Some(DiagnosticSeverity::WARNING) => Severity::Warning,
            Some(DiagnosticSeverity::INFORMATION) => Severity::Information,
            Some(DiagnosticSeverity::HINT) => Severity::Hint,
            // The spec leaves a missing severity to the client; an error is the safe reading.
            _ => Severity::Error,
        };
        let tagged = |tag| {
            diagnostic
                .tags
                .as_ref()
                .is_some_and(|tags| tags.contains(&tag))
        };
        Diagnostic {
            line: range.start.line.saturating_add(1),
            character: range.start.character,
            end_line: range.end.line.saturating_add(1),
            severity,
            code: diagnostic.code.as_ref().map(|code| match code {
                NumberOrString::Number(code) => code.to_string(),
                NumberOrString::String(code) => code.clone(),
            }),
            message: diagnostic.message.trim_end().to_owned(),
            source: diagnostic.source.clone(),
            unnecessary: tagged(DiagnosticTag::UNNECESSARY),
            deprecated: tagged(DiagnosticTag::DEPRECATED),
        }
    }

    /// Whether the server's own report is only a hint or an "unused" mark, which the
    /// diagnostics-on-write policy never reports.
    pub fn is_noise(&self) -> bool {
        self.severity == Severity::Hint || self.unnecessary
    }

    /// Parses one of tsserver's own diagnostics (`protocol.Diagnostic`: 1-based `start` and
    /// `end` of `line` and `offset`, `text`, `code`, `category`), as typescript-language-server
    /// would publish it.
    pub fn from_tsserver(value: &Value) -> Option<Diagnostic> {
        let position = |key: &str, field: &str| {
            value
                .get(key)
                .and_then(|p| p.get(field))
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(1)
        };
        let severity = match value.get("category").and_then(Value::as_str) {
            Some("warning") => Severity::Warning,
            Some("suggestion") => Severity::Hint,
            Some("message") => Severity::Information,
            _ => Severity::Error,
        };
        let code = match value.get("code") {
            Some(Value::Number(code)) => Some(code.to_string()),
            Some(Value::String(code)) => Some(code.clone()),
            _ => None,
        };
        let flag = |key: &str| value.get(key).and_then(Value::as_bool).unwrap_or(false);
        Some(Diagnostic {
            line: position("start", "line").max(1),
            character: position("start", "offset").saturating_sub(1),
            end_line: position("end", "line").max(1),
            severity,
            code,
            message: value.get("text")?.as_str()?.trim_end().to_owned(),
            source: Some(
                value
                    .get("source")
                    .and_then(Value::as_str)
                    .unwrap_or("typescript")
                    .to_owned(),
            ),
            unnecessary: flag("reportsUnnecessary"),
            deprecated: flag("reportsDeprecated"),
        })
    }

    /// Reads a list of LSP diagnostics, skipping malformed entries.
    pub fn list_from_lsp(items: &[Value]) -> Vec<Diagnostic> {
        items.iter().filter_map(Diagnostic::from_lsp).collect()
    }

    /// Errors and warnings: what the write hook and `diagnostics` report.
    pub fn is_problem(&self) -> bool {
        matches!(self.severity, Severity::Error | Severity::Warning)
    }
}

/// An error at `line` saying `message`, for the crate's tests.
#[cfg(test)]
pub(crate) fn test_error(line: u32, message: &str) -> Diagnostic {
    Diagnostic {
        line,
        character: 0,
        end_line: line,
        severity: Severity::Error,
        code: None,
        message: message.into(),
        source: None,
        unnecessary: false,
        deprecated: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unresolved_import_is_one_finding_whichever_part_the_server_names() {
        let diagnostic = |message: &str| Diagnostic {
            code: Some("268435846".into()),
            ..test_error(3, message)
        };
        let mut ledger = crate::Ledger::default();
        let path = std::path::Path::new("/w/A.java");
        let build = diagnostic("The import expo.modules.kotlin cannot be resolved");
        let check = diagnostic("The import expo.modules.kotlin.AppContext cannot be resolved");
        assert_eq!(ledger.update(path, vec![build]).len(), 1);
        assert!(ledger.update(path, vec![check.clone()]).is_empty());
        // Another missing import is still new.
        let other = diagnostic("The import android.os cannot be resolved");
        assert_eq!(ledger.update(path, vec![check, other]).len(), 1);
    }
}
