//! What a stop result shows of the top frame: the source around the line and the first
//! locals, so that "where is it, and what holds what" takes no further call.

use std::io::{BufRead, BufReader, Read};

use super::handles::Kind;
use super::Session;
use crate::error::DebugError;
use crate::protocol::{
    Scope, Scopes, ScopesArguments, StackFrame, Variable, Variables, VariablesArguments,
};
use crate::report::{cap_chars, LocalsSummary, SourceLine, VariableView, MAX_SOURCE_LINE_CHARS};

/// Source files are read at most this far (a stop deep in a generated file still answers).
const MAX_SOURCE_BYTES: u64 = 64 * 1024 * 1024;

/// How many characters each of values this long keeps: every value whole while they fit in
/// `budget`; else the short ones whole and the long ones an equal share of what is left
/// (never below `floor`, never above `cap`). So one long value (an assertion's operands)
/// is shown far enough to read it, and many values do not each take the most.
pub fn value_shares(lengths: &[usize], budget: usize, floor: usize, cap: usize) -> Vec<usize> {
    let within = |level: usize| -> usize { lengths.iter().map(|l| (*l).min(level)).sum() };
    let fits = |level: usize| within(level) <= budget;
    let level = if fits(cap) {
        cap
    } else if !fits(floor) {
        floor
    } else {
        // The highest level that fits: `fits(lo)` holds, `fits(hi)` does not.
        let (mut lo, mut hi) = (floor, cap);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    lengths.iter().map(|l| (*l).min(level)).collect()
}

/// Lines `line - before ..= line + after` of the frame's source file, when it is on disk.
pub(super) fn source_lines(
    frame: &StackFrame,
    before: usize,
    after: usize,
) -> Option<Vec<SourceLine>> {
    let path = frame.source.as_ref()?.path.as_ref()?;
    if frame.line < 1 {
        return None;
    }
    let first = (frame.line - i64::try_from(before).ok()?).max(1);
    let last = frame.line.checked_add(i64::try_from(after).ok()?)?;
    let file = std::fs::File::open(path).ok()?;
    let mut reader = BufReader::new(file.take(MAX_SOURCE_BYTES));
    let mut lines = Vec::new();
    let mut number = 0i64;
    let mut buf = Vec::new();
    while number < last {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        number += 1;
        if number < first {
            continue;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim_end_matches(['\n', '\r']);
        let (mut text, cut, _) = cap_chars(text, MAX_SOURCE_LINE_CHARS);
        if cut {
            text.push('…');
        }
        lines.push(SourceLine { line: number, text });
    }
    // A stop line past the end of the file (a stale file) shows nothing rather than the wrong lines.
    (number >= frame.line).then_some(lines)
}

/// A note when the frame's source file was modified after `since` (the session's start): an
/// edit, a formatter or a `git checkout` while the program runs.
pub(super) fn changed_since(frame: &StackFrame, since: std::time::SystemTime) -> Option<String> {
    let path = frame.source.as_ref()?.path.as_ref()?;
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    (modified > since).then(|| {
        "this file changed on disk after the session started: the program may still run the \
         code it loaded before, and these lines are the file as it is now (launch again to \
         debug the new code)"
            .to_owned()
    })
}

/// The scope that holds a frame's locals: `Locals` (debugpy, lldb-dap, delve), else the
/// first that is not globals or registers.
pub(super) fn locals_scope(scopes: &[Scope]) -> Option<&Scope> {
    scopes
        .iter()
        .find(|s| s.name.to_lowercase().starts_with("local"))
        .or_else(|| {
            scopes.iter().find(|s| {
                let name = s.name.to_lowercase();
                !s.expensive && !name.contains("global") && !name.contains("register")
            })
        })
}

/// The scope `wanted` names (case-insensitive, a prefix is enough: `globals`, `reg`).
pub(super) fn named_scope<'a>(scopes: &'a [Scope], wanted: &str) -> Option<&'a Scope> {
    let wanted = wanted.to_lowercase();
    if wanted == "locals" || wanted == "local" {
        return locals_scope(scopes);
    }
    scopes
        .iter()
        .find(|s| s.name.to_lowercase() == wanted)
        .or_else(|| {
            scopes
                .iter()
                .find(|s| s.name.to_lowercase().starts_with(&wanted))
        })
}

impl Session {
    /// A variable as shown: the value cut to `max` characters, its children's reference ours.
    pub(super) fn variable_view(&self, variable: Variable, max: usize) -> VariableView {
        let (value, value_truncated, value_length) = cap_chars(&variable.value, max);
        VariableView {
            name: variable.name,
            value,
            type_name: variable.type_name.filter(|t| !t.is_empty()),
            reference: self
                .handles()
                .issue(Kind::Variables, variable.variables_reference),
            value_length,
            value_truncated,
        }
    }

    /// The scopes of the adapter's frame `frame`.
    pub(super) async fn frame_scopes(&self, frame: i64) -> Result<Vec<Scope>, DebugError> {
        Ok(self
            .call::<Scopes>(&ScopesArguments { frame_id: frame })
            .await?
            .scopes)
    }

    /// The children of the adapter's reference `reference`.
    pub(super) async fn children(&self, reference: i64) -> Result<Vec<Variable>, DebugError> {
        Ok(self
            .call::<Variables>(&VariablesArguments {
                variables_reference: reference,
            })
            .await?
            .variables)
    }

    /// The first locals of the adapter's frame `frame`, for a stop result; `None` when the
    /// adapter could not say (nothing is claimed then).
    pub(super) async fn locals_summary(&self, frame: i64) -> Option<LocalsSummary> {
        let stop = self.settings.stop;
        let scopes = match self.frame_scopes(frame).await {
            Ok(scopes) => scopes,
            Err(error) => {
                tracing::debug!(%error, "no scopes for the stop's locals");
                return None;
            }
        };
        let scope = locals_scope(&scopes)?.clone();
        let variables = match self.children(scope.variables_reference).await {
            Ok(variables) => variables,
            Err(error) => {
                tracing::debug!(%error, "no variables for the stop's locals");
                return None;
            }
        };
        // lldb lists a generic function's type parameters as unreadable `void` values.
        let (variables, unreadable): (Vec<Variable>, Vec<Variable>) =
            variables.into_iter().partition(|v| {
                !(v.value.starts_with("<error:") && v.type_name.as_deref() == Some("void"))
            });
        // pytest's rewritten assertion keeps its message in `@py_format…` temporaries: the
        // exception stop shows that message already (its operands, `@py_assert…`, stay).
        let variables: Vec<Variable> = variables
            .into_iter()
            .filter(|v| !v.name.starts_with("@py_format"))
            .collect();
        let total = variables.len();
        let first: Vec<Variable> = variables.into_iter().take(stop.locals).collect();
        let lengths: Vec<usize> = first.iter().map(|v| v.value.chars().count()).collect();
        let shares = value_shares(
            &lengths,
            stop.locals_chars,
            stop.value_chars,
            crate::report::MAX_VALUE_CHARS,
        );
        let shown: Vec<VariableView> = first
            .into_iter()
            .zip(shares)
            .map(|(v, share)| self.variable_view(v, share))
            .collect();
        let reference = self
            .handles()
            .issue(Kind::Variables, scope.variables_reference);
        Some(LocalsSummary {
            scope: scope.name,
            reference,
            truncated: total > shown.len(),
            variables: shown,
            total,
            unreadable: unreadable.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Source;

    fn frame(path: &std::path::Path, line: i64) -> StackFrame {
        StackFrame {
            id: 1,
            name: "f".into(),
            source: Some(Source {
                name: None,
                path: Some(path.display().to_string()),
            }),
            line,
        }
    }

    #[test]
    fn source_lines_around_the_stop_clipped_at_the_edges() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        let long = "x".repeat(300);
        std::fs::write(&path, format!("one\ntwo\r\nthree\n{long}\nfive")).unwrap();
        let around = source_lines(&frame(&path, 2), 2, 2).unwrap();
        let numbers: Vec<i64> = around.iter().map(|l| l.line).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
        assert_eq!(around[1].text, "two");
        assert_eq!(around[3].text.chars().count(), MAX_SOURCE_LINE_CHARS + 1);
        assert!(around[3].text.ends_with('…'));
        let end = source_lines(&frame(&path, 5), 1, 3).unwrap();
        assert_eq!(end.iter().map(|l| l.line).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(end[1].text, "five");
        assert!(
            source_lines(&frame(&path, 9), 2, 2).is_none(),
            "past the end"
        );
        assert!(source_lines(&frame(&dir.path().join("none.py"), 1), 2, 2).is_none());
        assert_eq!(
            source_lines(&frame(&path, 3), 0, 0).unwrap()[0].text,
            "three"
        );
    }

    #[test]
    fn value_shares_keep_short_values_whole_and_split_the_rest() {
        assert_eq!(value_shares(&[5, 10, 20], 100, 8, 400), [5, 10, 20]);
        // One long value gets what the short ones leave.
        assert_eq!(value_shares(&[5, 10, 900], 100, 8, 400), [5, 10, 85]);
        assert_eq!(value_shares(&[900, 900], 100, 8, 400), [50, 50]);
        // Never below the floor, never above the cap.
        assert_eq!(value_shares(&[900, 900, 900], 30, 20, 400), [20, 20, 20]);
        assert_eq!(value_shares(&[900], 10_000, 8, 400), [400]);
        assert_eq!(value_shares(&[], 100, 8, 400), Vec::<usize>::new());
    }

    #[test]
    fn the_locals_scope_by_name() {
        let scope = |name: &str, expensive: bool| Scope {
            name: name.into(),
            variables_reference: 1,
            expensive,
            named_variables: None,
            indexed_variables: None,
        };
        let scopes = [
            scope("Globals", false),
            scope("Locals", false),
            scope("Registers", true),
        ];
        assert_eq!(locals_scope(&scopes).unwrap().name, "Locals");
        assert_eq!(named_scope(&scopes, "globals").unwrap().name, "Globals");
        assert_eq!(named_scope(&scopes, "reg").unwrap().name, "Registers");
        assert!(named_scope(&scopes, "statics").is_none());
        let other = [scope("Globals", false), scope("Arguments", false)];
        assert_eq!(locals_scope(&other).unwrap().name, "Arguments");
    }
}
