//! Text renderings of `debug` results, from the debugger's typed reports (the JSON result is
//! the same report serialized, so the two cannot drift apart). Many clients show the model
//! only the text, so each carries every handle the next call needs: thread ids, frame ids
//! (`frame N`), each scope's reference and each variable's (`ref N`) when it has children —
//! and for a stop, the source around the line and the frame's locals.

use std::fmt::Write as _;

use cc_dap_client::report::{
    AdaptersReport, BreakpointView, BreakpointsReport, EvaluateReport, ExceptionStops,
    FileBreakpoints, FrameView, LocalsReport, LocalsSummary, OutputPiece, OutputReport, Position,
    ProgramEnd, ProgramState, ScopesReport, StackReport, StartReport, StatusReport, StepReport,
    Stopped, TerminateReport, ThreadsReport, VariableView, VariablesReport,
};
use serde::Serialize;

/// What one `debug` call returns: the report of its operation.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum DebugReport {
    /// `adapters`.
    Adapters(AdaptersReport),
    /// `status`.
    Status(StatusReport),
    /// `breakpoints`.
    Breakpoints(BreakpointsReport),
    /// `launch` and `attach`.
    Start(StartReport),
    /// `continue`, `pause` and the steps.
    Step(StepReport),
    /// `threads`.
    Threads(ThreadsReport),
    /// `stack`.
    Stack(StackReport),
    /// `scopes`.
    Scopes(ScopesReport),
    /// `variables`.
    Variables(VariablesReport),
    /// `locals`.
    Locals(LocalsReport),
    /// `evaluate`.
    Evaluate(EvaluateReport),
    /// `output`.
    Output(OutputReport),
    /// `terminate`.
    Terminate(TerminateReport),
}

/// What the caller asked about the rendering itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `stack`: every frame, no run of library frames folded.
    pub all_frames: bool,
}

/// A number, or `?` when the adapter did not say.
fn or_unknown(value: Option<i64>) -> String {
    value.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

/// A reference that points at children (0 means none).
fn children(reference: i64) -> Option<i64> {
    (reference > 0).then_some(reference)
}

/// A stop's exception text beyond the result that reports the stop: its first line, cut.
const REPEATED_STOP_TEXT_CHARS: usize = 120;

/// "stopped at app.py:4 in main (breakpoint, thread 1, frame 3)", "exited with code 0", …
/// The exception text of a stop in full (`report_stop`: the result of the call that
/// stopped), else shortened: an assertion's explanation can be a thousand characters, and
/// `stack` or `status` need not repeat it.
fn position_of(position: &Position, report_stop: bool) -> String {
    match position.state {
        ProgramState::Stopped => {
            let stop = position.stopped.as_ref();
            let mut line = format!(
                "stopped at {}:{}",
                stop.and_then(|s| s.file.as_deref()).unwrap_or("?"),
                or_unknown(stop.and_then(|s| s.line))
            );
            if let Some(function) = stop.and_then(|s| s.function.as_deref()) {
                let _ = write!(line, " in {function}");
            }
            let _ = write!(
                line,
                " ({}, thread {}",
                stop.map_or("?", |s| s.reason.as_str()),
                or_unknown(stop.and_then(|s| s.thread_id))
            );
            if let Some(frame) = stop.and_then(|s| s.frame_id).filter(|f| *f > 0) {
                let _ = write!(line, ", frame {frame}");
            }
            line.push(')');
            let description = stop.and_then(|s| s.description.as_deref());
            let text = stop.and_then(|s| s.text.as_deref());
            let said = match (description, text) {
                (Some(description), Some(text)) if description != text => {
                    format!(": {description}: {text}")
                }
                (Some(text), _) | (None, Some(text)) => format!(": {text}"),
                (None, None) => String::new(),
            };
            if report_stop {
                line.push_str(&said);
            } else {
                line.push_str(&shortened(&said));
            }
            line
        }
        ProgramState::Exited => match position.exited.as_ref().and_then(|e| e.code) {
            Some(code) => format!("exited with code {code}"),
            None => "exited".into(),
        },
        ProgramState::Running => "running".into(),
        ProgramState::AdapterExited => "the debug adapter exited; the session is over".into(),
        ProgramState::Expired => "the session expired".into(),
        ProgramState::LaunchFailed => "no session: the last launch failed".into(),
        ProgramState::None => "no session".into(),
    }
}

/// The first line of `text`, at most [`REPEATED_STOP_TEXT_CHARS`] characters, marked `…`
/// when anything was left out.
fn shortened(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut short: String = first.chars().take(REPEATED_STOP_TEXT_CHARS).collect();
    if short.len() < text.trim_end().len() {
        short.push_str(" …");
    }
    short
}

/// Where the program is, as a result other than the stop's own shows it.
fn position(position: &Position) -> String {
    position_of(position, false)
}

/// `frame N: function at file:line`.
fn frame_line(frame: &FrameView) -> String {
    format!(
        "frame {}: {} at {}:{}",
        frame.id,
        frame.function,
        frame.file.as_deref().unwrap_or("?"),
        frame.line
    )
}

/// `name: type = value [ref N]`, the value marked `…` when cut (a group without a value,
/// such as debugpy's "special variables", is `name [ref N]`).
fn variable_line(variable: &VariableView) -> String {
    let mut line = variable.name.clone();
    if let Some(kind) = &variable.type_name {
        let _ = write!(line, ": {kind}");
    }
    if !variable.value.is_empty() || variable.type_name.is_some() {
        let _ = write!(line, " = {}", variable.value);
    }
    if variable.value_truncated {
        line.push('…');
    }
    if let Some(children) = children(variable.reference) {
        let _ = write!(line, " [ref {children}]");
    }
    line
}

fn push_variables(lines: &mut Vec<String>, variables: &[VariableView]) {
    for variable in variables {
        lines.push(format!("  {}", variable_line(variable)));
    }
}

/// The source around a stop (the stop line marked `>`) and the frame's locals.
fn push_stop_detail(lines: &mut Vec<String>, position: &Position) {
    let Some(stop) = &position.stopped else {
        return;
    };
    let current = match &stop.shown_frame {
        Some(shown) => {
            lines.push(format!(
                "nearest frame in the workspace: {}",
                frame_line(shown)
            ));
            Some(shown.line)
        }
        None => stop.line,
    };
    if let Some(note) = &stop.source_note {
        lines.push(format!("note: {note}"));
    }
    let source = stop.source.as_deref().unwrap_or_default();
    let width = source.last().map_or(1, |l| l.line.to_string().len());
    for line in source {
        let mark = if Some(line.line) == current { '>' } else { ' ' };
        lines.push(format!("{mark} {:>width$} | {}", line.line, line.text));
    }
    if let Some(locals) = &stop.locals {
        lines.push(locals_header(locals));
        push_variables(lines, &locals.variables);
    }
}

fn locals_header(locals: &LocalsSummary) -> String {
    let shown = locals.variables.len();
    let mut header = format!("locals ({}, ref {}", locals.scope, locals.reference);
    if locals.truncated {
        let _ = write!(header, "; first {shown} of {}", locals.total);
    }
    if locals.unreadable > 0 {
        let _ = write!(
            header,
            "; {} the debugger cannot read left out",
            locals.unreadable
        );
    }
    header.push_str("):");
    if shown == 0 {
        header.push_str(" none");
    }
    header
}

/// Stop texts at least this long are not repeated in the output attached to the result.
const REPEATED_TEXT_MIN_CHARS: usize = 40;

/// What the program printed during the call (the stop's own message not repeated), then
/// the report's note.
fn push_output_and_note(
    text: &mut String,
    output: Option<&OutputPiece>,
    stopped: Option<&Stopped>,
    note: Option<&str>,
) {
    if let Some(output) = output.map(|o| o.text.as_str()) {
        text.push_str("\noutput:\n");
        // A panic's message is the stop's text and what the program printed: once is enough.
        let said = stopped
            .and_then(|s| s.text.as_deref())
            .filter(|t| t.len() >= REPEATED_TEXT_MIN_CHARS);
        match said.filter(|said| output.contains(*said)) {
            Some(said) => text.push_str(
                output
                    .replacen(said, "[the stop's message, above]", 1)
                    .trim_end(),
            ),
            None => text.push_str(output.trim_end()),
        }
    }
    if let Some(note) = note {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
}

/// "3, 7 (not verified: why), 9 (placed at 10)", or `None` for an empty list.
fn breakpoint_lines(breakpoints: &[BreakpointView]) -> Option<String> {
    let lines: Vec<String> = breakpoints
        .iter()
        .map(|b| {
            let mut line = b.line.to_string();
            match (b.verified, b.actual_line) {
                (Some(false), _) => match &b.message {
                    Some(why) => {
                        let _ = write!(line, " (not verified: {why})");
                    }
                    None => line.push_str(" (not verified)"),
                },
                (Some(true), Some(actual)) => {
                    let _ = write!(line, " (placed at {actual})");
                }
                _ => {}
            }
            line
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join(", "))
}

/// "stops on exceptions: uncaught, userUnhandled (offered: …; `exceptions` sets them)".
fn exception_stops(stops: &ExceptionStops, adapter: &str) -> String {
    let mut line = if stops.offered.is_empty() {
        match adapter {
            "delve" => "stops on unrecovered panics (delve's own; no exception filters)".to_owned(),
            _ => "stops on no exception filters (the adapter offers none)".to_owned(),
        }
    } else {
        format!(
            "stops on exceptions: {} (offered: {}; `exceptions` sets them)",
            if stops.filters.is_empty() {
                "none".to_owned()
            } else {
                stops.filters.join(", ")
            },
            stops.offered.join(", ")
        )
    };
    if !stops.functions.is_empty() {
        let _ = write!(line, "; and in {}", stops.functions.join(", "));
    }
    line
}

/// "breakpoints: a.py 3, 7; b.py 9", or `None` without any.
fn all_breakpoints(files: &[FileBreakpoints]) -> Option<String> {
    let parts: Vec<String> = files
        .iter()
        .filter_map(|file| {
            breakpoint_lines(&file.breakpoints).map(|at| format!("{} {at}", file.file))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("breakpoints: {}", parts.join("; ")))
}

fn count_header(what: &str, truncated: bool, shown: usize, total: &str) -> String {
    if truncated {
        format!("{what} (first {shown} of {total}):")
    } else {
        format!("{what} ({shown}):")
    }
}

/// The frame lines of `stack`: runs of two or more library frames after the top one fold
/// into a line that says whose they are and which ids they hold (`all_frames` lists them).
fn push_frames(lines: &mut Vec<String>, frames: &[FrameView], all: bool) {
    let mut at = 0;
    while at < frames.len() {
        let run_end = if at == 0 || all || frames[at].library.is_none() {
            at + 1
        } else {
            (at..frames.len())
                .find(|&i| frames[i].library.is_none())
                .unwrap_or(frames.len())
        };
        if run_end - at < 2 {
            lines.push(format!("  {}", frame_line(&frames[at])));
            at += 1;
            continue;
        }
        let mut owners: Vec<&str> = Vec::new();
        for owner in frames[at..run_end]
            .iter()
            .filter_map(|f| f.library.as_deref())
        {
            if !owners.contains(&owner) {
                owners.push(owner);
            }
        }
        lines.push(format!(
            "  … {} frames of {} (frame {} to {}; `all_frames: true` lists them)",
            run_end - at,
            owners.join("/"),
            frames[at].id,
            frames[run_end - 1].id
        ));
        at = run_end;
    }
}

impl crate::report::Render for DebugReport {
    fn render(&self) -> String {
        self.render_with(Options::default())
    }
}

impl DebugReport {
    /// The whole text of the report, as `options` ask.
    pub fn render_with(&self, options: Options) -> String {
        match self {
            DebugReport::Adapters(report) => adapters(report),
            DebugReport::Start(report) => start(report),
            DebugReport::Step(report) => step(report),
            DebugReport::Threads(report) => {
                let mut lines = vec![
                    position(&report.position),
                    count_header(
                        "threads",
                        report.truncated,
                        report.threads.len(),
                        &report.total.to_string(),
                    ),
                ];
                for thread in &report.threads {
                    lines.push(format!("  thread {}: {}", thread.id, thread.name));
                }
                lines.join("\n")
            }
            DebugReport::Stack(report) => {
                let mut lines = vec![
                    position(&report.position),
                    count_header(
                        &format!("stack of thread {}", report.thread_id),
                        report.truncated,
                        report.frames.len(),
                        &or_unknown(report.total_frames),
                    ),
                ];
                push_frames(&mut lines, &report.frames, options.all_frames);
                lines.join("\n")
            }
            DebugReport::Scopes(report) => scopes(report),
            DebugReport::Variables(report) => {
                let mut lines = vec![count_header(
                    &format!("children of ref {}", report.reference),
                    report.truncated,
                    report.variables.len(),
                    &report.total.to_string(),
                )];
                push_variables(&mut lines, &report.variables);
                lines.join("\n")
            }
            DebugReport::Locals(report) => locals(report),
            DebugReport::Evaluate(report) => evaluate(report),
            DebugReport::Breakpoints(report) => {
                let mut text = match breakpoint_lines(&report.breakpoints) {
                    None => format!("{}: no breakpoints", report.file),
                    Some(lines) => format!("{}: breakpoints at {lines}", report.file),
                };
                if report.position.state != ProgramState::None {
                    text.push('\n');
                    text.push_str(&position(&report.position));
                }
                push_output_and_note(&mut text, None, None, report.note.as_deref());
                text
            }
            DebugReport::Status(report) => status(report),
            DebugReport::Output(report) => {
                let mut text = if report.output.is_empty() {
                    "(no output)".to_owned()
                } else {
                    report.output.trim_end().to_owned()
                };
                if report.truncated {
                    let _ = write!(
                        text,
                        "\n(the first {} bytes are no longer kept)",
                        report.dropped_bytes
                    );
                }
                text.push('\n');
                text.push_str(&position(&report.position));
                push_output_and_note(&mut text, None, None, report.note.as_deref());
                text
            }
            DebugReport::Terminate(report) => terminate(report),
        }
    }
}

fn start(report: &StartReport) -> String {
    let mut lines = vec![format!("{}: {}", report.adapter, report.target)];
    lines.extend(all_breakpoints(&report.breakpoints));
    lines.push(exception_stops(&report.exceptions, &report.adapter));
    where_it_stopped(
        lines,
        &report.position,
        report.output.as_ref(),
        report.note.as_deref(),
    )
}

fn step(report: &StepReport) -> String {
    where_it_stopped(
        Vec::new(),
        &report.position,
        report.output.as_ref(),
        report.note.as_deref(),
    )
}

/// `lines`, then the stop (or end) a call waited for in full, its source and locals, what
/// the program printed meanwhile and the note.
fn where_it_stopped(
    mut lines: Vec<String>,
    position: &Position,
    output: Option<&OutputPiece>,
    note: Option<&str>,
) -> String {
    lines.push(position_of(position, true));
    push_stop_detail(&mut lines, position);
    let mut text = lines.join("\n");
    push_output_and_note(&mut text, output, position.stopped.as_ref(), note);
    text
}

fn adapters(report: &AdaptersReport) -> String {
    let mut lines = Vec::new();
    for adapter in &report.adapters {
        let line = if adapter.available {
            format!("{}: available", adapter.name)
        } else {
            format!(
                "{}: not available ({})",
                adapter.name,
                adapter.reason.as_deref().unwrap_or("unknown")
            )
        };
        lines.push(line);
    }
    if let Some(error) = &report.config_error {
        lines.push(format!("config error: {error}"));
    }
    lines.join("\n")
}

fn scopes(report: &ScopesReport) -> String {
    let mut lines = vec![
        position(&report.position),
        format!("scopes of frame {}:", report.frame_id),
    ];
    for scope in &report.scopes {
        let mut line = format!("  {}: ref {}", scope.name, scope.reference);
        let mut extra = Vec::new();
        if let Some(count) = scope.variables {
            extra.push(format!("{count} variables"));
        }
        if scope.expensive {
            extra.push("expensive".to_owned());
        }
        if !extra.is_empty() {
            let _ = write!(line, " ({})", extra.join(", "));
        }
        lines.push(line);
    }
    lines.join("\n")
}

fn locals(report: &LocalsReport) -> String {
    let mut lines = vec![count_header(
        &format!(
            "{} of frame {}, ref {}",
            report.scope, report.frame_id, report.reference
        ),
        report.truncated,
        report.variables.len(),
        &report.total.to_string(),
    )];
    push_variables(&mut lines, &report.variables);
    let others: Vec<&str> = report
        .scopes
        .iter()
        .map(String::as_str)
        .filter(|name| *name != report.scope)
        .collect();
    if !others.is_empty() {
        lines.push(format!("other scopes (`scope`): {}", others.join(", ")));
    }
    lines.join("\n")
}

fn evaluate(report: &EvaluateReport) -> String {
    let mut line = format!(
        "{}{} = {}",
        report.expression,
        report
            .type_name
            .as_deref()
            .map(|t| format!(": {t}"))
            .unwrap_or_default(),
        report.result
    );
    if report.result_truncated {
        let length = report
            .result_length
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        let _ = write!(line, "… ({length} characters)");
    }
    if let Some(children) = children(report.reference) {
        let _ = write!(line, " [ref {children}]");
    }
    line
}

fn status(report: &StatusReport) -> String {
    let mut lines = vec![position(&report.position)];
    if let Some(session) = &report.session {
        lines.push(format!(
            "session: {} debugging {}, expires in {}s",
            session.adapter, session.target, session.expires_in_seconds
        ));
    }
    // Without a working session, breakpoints wait for the next `launch`.
    let waiting = report.session.is_none() || report.position.state == ProgramState::AdapterExited;
    for file in &report.breakpoints {
        if let Some(at) = breakpoint_lines(&file.breakpoints) {
            let when = if waiting { " (sent at `launch`)" } else { "" };
            lines.push(format!("breakpoints in {}: {at}{when}", file.file));
        }
    }
    let mut text = lines.join("\n");
    push_output_and_note(&mut text, None, None, report.note.as_deref());
    text
}

fn terminate(report: &TerminateReport) -> String {
    let mut text = if report.terminated {
        let how = match &report.program {
            Some(ProgramEnd::Exited { code: Some(code) }) => {
                format!("the program had exited with code {code}")
            }
            Some(ProgramEnd::Exited { code: None }) => "the program had exited".to_owned(),
            Some(ProgramEnd::KilledWhileStopped { at: Some(at) }) => {
                format!("the program, stopped at {at}, was ended")
            }
            Some(ProgramEnd::KilledWhileStopped { at: None }) => {
                "the program was stopped and was ended".to_owned()
            }
            Some(ProgramEnd::KilledWhileRunning) => {
                "the program was running and was ended".to_owned()
            }
            Some(ProgramEnd::Unknown) | None => "how the program ended is not known".to_owned(),
        };
        format!(
            "terminated the {} session: {how}",
            report.adapter.as_deref().unwrap_or("debug")
        )
    } else {
        "nothing to terminate".into()
    };
    push_output_and_note(&mut text, None, None, report.note.as_deref());
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_dap_client::report::SourceLine;

    fn stopped_here() -> StepReport {
        StepReport {
            position: Position {
                state: ProgramState::Stopped,
                stopped: Some(Stopped {
                    reason: "breakpoint".into(),
                    file: Some("app.py".into()),
                    line: Some(9),
                    thread_id: Some(1),
                    function: Some("main".into()),
                    frame_id: Some(3),
                    description: None,
                    text: None,
                    source: Some(vec![
                        SourceLine {
                            line: 8,
                            text: "x = 1".into(),
                        },
                        SourceLine {
                            line: 9,
                            text: "y = f(x)".into(),
                        },
                        SourceLine {
                            line: 10,
                            text: "print(y)".into(),
                        },
                    ]),
                    source_note: None,
                    locals: Some(LocalsSummary {
                        scope: "Locals".into(),
                        reference: 7,
                        variables: vec![VariableView {
                            name: "x".into(),
                            value: "1".into(),
                            type_name: Some("int".into()),
                            reference: 0,
                            value_length: None,
                            value_truncated: false,
                        }],
                        total: 1,
                        truncated: false,
                        unreadable: 0,
                    }),
                    shown_frame: None,
                }),
                exited: None,
            },
            output: Some(OutputPiece {
                text: "started\n".into(),
                truncated: false,
            }),
            note: None,
        }
    }

    /// The JSON result is the debugger's report as it serializes itself.
    #[test]
    fn the_json_is_the_report_itself() {
        let report = stopped_here();
        assert_eq!(
            serde_json::to_value(DebugReport::Step(report.clone())).unwrap(),
            serde_json::to_value(report).unwrap()
        );
    }

    #[test]
    fn a_stop_shows_where_the_source_and_the_locals() {
        insta::assert_snapshot!(DebugReport::Step(stopped_here()).render_with(Options::default()), @r"
        stopped at app.py:9 in main (breakpoint, thread 1, frame 3)
           8 | x = 1
        >  9 | y = f(x)
          10 | print(y)
        locals (Locals, ref 7):
          x: int = 1
        output:
        started
        ");
    }
}
