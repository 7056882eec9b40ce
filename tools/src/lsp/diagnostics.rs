//! The diagnostics-on-write hook: sync each written file through its server, wait for the
//! diagnostics of that version, and return only the new ones.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_lsp_client::{CheckOutcome, Diagnostic, Ledger, Supervisor};
use serde_json::{json, Value};

use crate::registry::AfterWrite;
use crate::root::WorkspaceRoot;

/// The `AfterWrite` of a run with language servers. Holds the run's ledger: which
/// (severity, code, message) keys each file already reported, so that a diagnostic that moved
/// is not new and one that came back is.
#[derive(Debug)]
pub struct LspDiagnostics {
    supervisor: Arc<Supervisor>,
    root: WorkspaceRoot,
    ledger: Mutex<Ledger>,
}

impl LspDiagnostics {
    /// A hook over `supervisor`, showing paths relative to `root`.
    pub fn new(supervisor: Arc<Supervisor>, root: WorkspaceRoot) -> Self {
        LspDiagnostics {
            supervisor,
            root,
            ledger: Mutex::new(Ledger::default()),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One new diagnostic as the agent sees it.
pub(crate) fn diagnostic_json(path: &str, diagnostic: &Diagnostic) -> Value {
    json!({
        "path": path,
        "line": diagnostic.line,
        "severity": diagnostic.severity.as_str(),
        "code": diagnostic.code,
        "message": diagnostic.message,
        "source": diagnostic.source,
    })
}

#[async_trait]
impl AfterWrite for LspDiagnostics {
    async fn after_write(&self, paths: &[PathBuf]) -> Value {
        let checks = self.supervisor.check_written(paths).await;
        let mut new = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let mut unchecked = Vec::new();
        for check in checks {
            let shown = self.root.relative(&check.path);
            match check.outcome {
                CheckOutcome::Checked { diagnostics, .. } => {
                    let problems: Vec<Diagnostic> = diagnostics
                        .into_iter()
                        .filter(Diagnostic::is_problem)
                        .collect();
                    for diagnostic in self.ledger().update(&check.path, problems) {
                        new.push(diagnostic_json(&shown, &diagnostic));
                    }
                }
                CheckOutcome::Pending { server, reason } => {
                    tracing::debug!(%server, path = %shown, %reason, "diagnostics pending");
                    if !pending.contains(&server) {
                        pending.push(server);
                    }
                }
                CheckOutcome::Unchecked { reason } => {
                    unchecked.push(json!({"path": shown, "reason": reason}));
                }
                CheckOutcome::Removed => self.ledger().forget(&check.path),
            }
        }
        json!({"new": new, "pending": pending, "unchecked": unchecked})
    }
}
