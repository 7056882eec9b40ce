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
    fn from_lsp(value: Option<i64>) -> Severity {
        match value {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Information,
            Some(4) => Severity::Hint,
            // The spec leaves a missing severity to the client; an error is the safe reading.
            _ => Severity::Error,
        }
    }

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

fn has_tag(value: &Value, tag: i64) -> bool {
    value
        .get("tags")
        .and_then(Value::as_array)
        .is_some_and(|tags| tags.iter().any(|t| t.as_i64() == Some(tag)))
}

impl Diagnostic {
    /// Its identity for the ledger.
    pub fn key(&self) -> DiagnosticKey {
        (self.severity, self.code.clone(), self.message.clone())
    }

    /// Parses an LSP `Diagnostic` object leniently (missing fields get defaults).
    pub fn from_lsp(value: &Value) -> Option<Diagnostic> {
        let range = value.get("range")?;
        let position = |key: &str, field: &str| {
            range
                .get(key)
                .and_then(|p| p.get(field))
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0)
        };
        let code = match value.get("code") {
            Some(Value::String(code)) => Some(code.clone()),
            Some(Value::Number(code)) => Some(code.to_string()),
            _ => None,
        };
        Some(Diagnostic {
            line: position("start", "line") + 1,
            character: position("start", "character"),
            end_line: position("end", "line") + 1,
            severity: Severity::from_lsp(value.get("severity").and_then(Value::as_i64)),
            code,
            message: value.get("message")?.as_str()?.trim_end().to_owned(),
            source: value
                .get("source")
                .and_then(Value::as_str)
                .map(str::to_owned),
            unnecessary: has_tag(value, 1),
            deprecated: has_tag(value, 2),
        })
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

    /// Parses an array of LSP diagnostics, skipping malformed entries.
    pub fn list_from_lsp(value: Option<&Value>) -> Vec<Diagnostic> {
        value
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Diagnostic::from_lsp).collect())
            .unwrap_or_default()
    }

    /// Errors and warnings: what the write hook and `diagnostics` report.
    pub fn is_problem(&self) -> bool {
        matches!(self.severity, Severity::Error | Severity::Warning)
    }
}
