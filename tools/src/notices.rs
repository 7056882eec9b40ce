//! Run-level notices: what the agent should know that no call asked about — an interrupted
//! commit that was finished or undone when the run started, the tree changed behind the
//! run, a staged edit gone stale — handed over once, with the next result.
//!
//! Anything that holds the run's [`Notices`] (the registry builder, the registry, a call's
//! context, a background task given a clone) pushes `(kind, message, detail)`. The registry
//! drains the queue into the next result of a call the model made (never into a kernel's
//! bridge call, whose result the model may not see): an object result gains
//! `"notices": [{"kind", "message", ...detail}]`, its text gains one `note: MESSAGE` line per
//! notice at the end, and an error carries the same as its `notices` detail and note lines
//! at the end of its message. Each notice is delivered exactly once.
//!
//! Recoveries of interrupted commits are the first kind: [`push_recoveries`] turns the
//! workspace's typed reports ([`cc_workspace::Recovery`]) into `recovered` notices; the
//! registry also collects, before each result, the recoveries that commits did on their way
//! in ([`cc_workspace::Workspace::take_recoveries`]).

use std::sync::{Arc, Mutex};

use cc_workspace::{Direction, Outcome, Recovery, RecoveryReport};
use serde_json::{json, Map, Value};

use crate::error::ToolError;
use crate::root::WorkspaceRoot;
use crate::tool::ToolOutput;

/// Notice kinds of this crate (others may use their own).
pub mod notice_kinds {
    /// An interrupted commit was finished or undone ([`super::push_recoveries`]).
    pub const RECOVERED: &str = "recovered";
    /// A journal of an interrupted commit could not be used.
    pub const RECOVERY_PROBLEM: &str = "recovery_problem";
}

/// One notice.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// What kind of thing happened (`recovered`, …).
    pub kind: String,
    /// One sentence for the agent.
    pub message: String,
    /// Structured facts, merged into the notice's JSON object.
    pub detail: Map<String, Value>,
}

impl Notice {
    /// `{"kind": …, "message": …, …detail}`.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("kind".into(), Value::String(self.kind.clone()));
        object.insert("message".into(), Value::String(self.message.clone()));
        for (key, value) in &self.detail {
            object.insert(key.clone(), value.clone());
        }
        Value::Object(object)
    }
}

/// The run's queue of notices. Cheap to clone; clones share the queue.
#[derive(Clone, Default)]
pub struct Notices {
    queue: Arc<Mutex<Vec<Notice>>>,
}

impl std::fmt::Debug for Notices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notices")
            .field("queued", &self.len())
            .finish()
    }
}

impl Notices {
    /// An empty queue.
    pub fn new() -> Self {
        Notices::default()
    }

    /// Queues a notice for the next result. `detail`'s members (when it is an object) are
    /// merged into the notice; anything else goes under `"detail"`.
    pub fn push(&self, kind: impl Into<String>, message: impl Into<String>, detail: Value) {
        let detail = match detail {
            Value::Object(object) => object,
            Value::Null => Map::new(),
            other => Map::from_iter([("detail".to_owned(), other)]),
        };
        let notice = Notice {
            kind: kind.into(),
            message: message.into(),
            detail,
        };
        match self.queue.lock() {
            Ok(mut queue) => queue.push(notice),
            Err(poisoned) => poisoned.into_inner().push(notice),
        }
    }

    /// Takes every queued notice, oldest first.
    pub fn drain(&self) -> Vec<Notice> {
        match self.queue.lock() {
            Ok(mut queue) => std::mem::take(&mut *queue),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// How many are queued.
    pub fn len(&self) -> usize {
        match self.queue.lock() {
            Ok(queue) => queue.len(),
            Err(poisoned) => poisoned.into_inner().len(),
        }
    }

    /// Whether none is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Adds `notices` to a successful result (see the module docs).
pub(crate) fn attach(output: &mut ToolOutput, notices: &[Notice]) {
    if notices.is_empty() {
        return;
    }
    if let Some(text) = &mut output.text {
        for notice in notices {
            text.push_str("\nnote: ");
            text.push_str(&notice.message);
        }
    }
    if let Value::Object(object) = &mut output.value {
        let run_notices = notices.iter().map(Notice::to_json);
        // A tool's own notices (a kernel's, of the same shape) stay: these join them.
        match object.get_mut("notices") {
            Some(Value::Array(own)) => own.extend(run_notices),
            _ => {
                object.insert("notices".into(), Value::Array(run_notices.collect()));
            }
        }
    }
}

/// Adds `notices` to an error (see the module docs).
pub(crate) fn attach_to_error(mut error: ToolError, notices: &[Notice]) -> ToolError {
    if notices.is_empty() {
        return error;
    }
    for notice in notices {
        error = error.with_note(&notice.message);
    }
    error.with_detail(
        "notices",
        Value::Array(notices.iter().map(Notice::to_json).collect()),
    )
}

/// Queues a `recovered` notice for each of `recoveries` (paths relative to `root`).
pub fn push_recoveries(notices: &Notices, root: &WorkspaceRoot, recoveries: &[Recovery]) {
    for recovery in recoveries {
        let detail = recovery_json(root, recovery);
        let message = recovery_message(root, recovery);
        notices.push(notice_kinds::RECOVERED, message, detail);
    }
}

/// Queues what `report` says: its recoveries, and its problems as `recovery_problem`.
pub fn push_recovery_report(notices: &Notices, root: &WorkspaceRoot, report: &RecoveryReport) {
    push_recoveries(notices, root, &report.recovered);
    for problem in &report.problems {
        notices.push(
            notice_kinds::RECOVERY_PROBLEM,
            format!("commit journal: {problem}"),
            Value::Null,
        );
    }
}

/// One sentence for the agent about `recovery`.
pub fn recovery_message(root: &WorkspaceRoot, recovery: &Recovery) -> String {
    let when = format!(
        "process {}, started {}{}",
        recovery.pid,
        recovery
            .started
            .map(cc_workspace::transaction::utc)
            .unwrap_or_else(|| "?".into()),
        recovery
            .last_written
            .map(|t| format!(", crashed after {}", cc_workspace::transaction::utc(t)))
            .unwrap_or_default()
    );
    let files = recovery.files.len();
    let mut message = match recovery.direction {
        Direction::Forward => format!(
            "an interrupted multi-file commit ({when}) was finished when this run started: \
             all {files} file(s) of it hold their new content ({} completed now, {} were done \
             before the crash)",
            recovery.count("written"),
            recovery.count("already_new")
        ),
        Direction::Back if recovery.count("restored") == 0 => format!(
            "an interrupted multi-file commit ({when}) had changed no file yet; it was undone \
             when this run started: its {files} file(s) are as before it"
        ),
        Direction::Back => format!(
            "an interrupted multi-file commit ({when}) was undone when this run started: its \
             {files} file(s) are as before it ({} put back from the journal)",
            recovery.count("restored")
        ),
        _ => format!(
            "a multi-file commit ({when}) was interrupted before it started writing; nothing \
             had changed"
        ),
    };
    let not_done: Vec<String> = recovery
        .not_done()
        .map(|(path, reason)| format!("{} ({reason})", root.relative(path)))
        .collect();
    if !not_done.is_empty() {
        message.push_str(&format!(
            "; NOT put right, check these: {}",
            not_done.join(", ")
        ));
    }
    message.push_str(&format!(
        "; {} temporary file(s) removed",
        recovery.temps_removed.len()
    ));
    message
}

/// The facts of `recovery` as JSON (also `cc-harness status`'s).
pub fn recovery_json(root: &WorkspaceRoot, recovery: &Recovery) -> Value {
    let mut files: Map<String, Value> = Map::new();
    for outcome in [
        "written",
        "already_new",
        "restored",
        "already_old",
        "left_alone",
        "failed",
    ] {
        files.insert(outcome.into(), Value::Array(Vec::new()));
    }
    for file in &recovery.files {
        let path = root.relative(&file.path);
        let entry = match &file.outcome {
            Outcome::LeftAlone { reason } | Outcome::Failed { reason } => {
                json!({"path": path, "reason": reason})
            }
            _ => Value::String(path),
        };
        if let Some(Value::Array(list)) = files.get_mut(file.outcome.as_str()) {
            list.push(entry);
        }
    }
    json!({
        "direction": recovery.direction.as_str(),
        "phase": recovery.phase.as_str(),
        "pid": recovery.pid,
        "started_at": recovery.started.map(cc_workspace::transaction::utc),
        "crashed_after": recovery.last_written.map(cc_workspace::transaction::utc),
        "recovered_at": cc_workspace::transaction::utc(recovery.recovered),
        "journal": recovery.journal,
        "files_total": recovery.files.len(),
        "files": files,
        "temps_removed": recovery.temps_removed.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_go_once_into_text_json_and_errors() {
        let notices = Notices::new();
        notices.push("recovered", "a thing happened", json!({"files_total": 3}));
        notices.push("other", "and another", json!(["x"]));
        let drained = notices.drain();
        assert!(notices.is_empty());
        let mut output = ToolOutput::new(json!({"ok": true})).with_text("done");
        attach(&mut output, &drained);
        assert_eq!(
            output.text.as_deref(),
            Some("done\nnote: a thing happened\nnote: and another")
        );
        assert_eq!(
            output.value["notices"],
            json!([
                {"kind": "recovered", "message": "a thing happened", "files_total": 3},
                {"kind": "other", "message": "and another", "detail": ["x"]},
            ])
        );
        let error = attach_to_error(ToolError::new(crate::ErrorKind::Stale, "changed"), &drained);
        assert_eq!(
            error.message(),
            "changed\nnote: a thing happened\nnote: and another"
        );
        assert_eq!(error.to_json()["notices"][1]["kind"], "other");
    }

    /// A result with notices of its own (an `eval` cell's kernel) keeps them.
    #[test]
    fn a_tools_own_notices_are_kept() {
        let notices = Notices::new();
        notices.push("tree_changed", "the tree changed", json!({}));
        let mut output = ToolOutput::new(
            json!({"notices": [{"kind": "kernel", "message": "the kernel restarted"}]}),
        );
        attach(&mut output, &notices.drain());
        assert_eq!(
            output.value["notices"],
            json!([
                {"kind": "kernel", "message": "the kernel restarted"},
                {"kind": "tree_changed", "message": "the tree changed"},
            ])
        );
    }
}
