//! Text renderings of `debug` results. Many clients show the model only the text, so each
//! carries every handle the next call needs: thread ids, frame ids (`frame N`), each scope's
//! reference and each variable's (`ref N`) when it has children — and for a stop, the source
//! around the line and the frame's locals.

use std::fmt::Write as _;

use serde_json::Value;

use super::args::Op;

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn num(value: &Value, key: &str) -> String {
    value
        .get(key)
        .filter(|v| !v.is_null())
        .map(Value::to_string)
        .unwrap_or_else(|| "?".into())
}

fn reference(value: &Value, key: &str) -> Option<i64> {
    value.get(key).and_then(Value::as_i64).filter(|r| *r > 0)
}

/// A stop's exception text beyond the result that reports the stop: its first line, cut.
const REPEATED_STOP_TEXT_CHARS: usize = 120;

/// "stopped at app.py:4 in main (breakpoint, thread 1, frame 3)", "exited with code 0", …
/// The exception text of a stop in full (`report_stop`: the result of the call that
/// stopped), else shortened: an assertion's explanation can be a thousand characters, and
/// `stack` or `status` need not repeat it.
fn position_of(value: &Value, report_stop: bool) -> String {
    match str_of(value, "state") {
        Some("stopped") => {
            let stop = &value["stopped"];
            let mut line = format!(
                "stopped at {}:{}",
                str_of(stop, "file").unwrap_or("?"),
                num(stop, "line")
            );
            if let Some(function) = str_of(stop, "function") {
                let _ = write!(line, " in {function}");
            }
            let _ = write!(
                line,
                " ({}, thread {}",
                str_of(stop, "reason").unwrap_or("?"),
                num(stop, "thread_id")
            );
            if let Some(frame) = reference(stop, "frame_id") {
                let _ = write!(line, ", frame {frame}");
            }
            line.push(')');
            let said = match (str_of(stop, "description"), str_of(stop, "text")) {
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
        Some("exited") => match value["exited"].get("code").and_then(Value::as_i64) {
            Some(code) => format!("exited with code {code}"),
            None => "exited".into(),
        },
        Some("running") => "running".into(),
        Some("adapter_exited") => "the debug adapter exited; the session is over".into(),
        Some("expired") => "the session expired".into(),
        Some("launch_failed") => "no session: the last launch failed".into(),
        Some("none") => "no session".into(),
        _ => String::new(),
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
pub fn position(value: &Value) -> String {
    position_of(value, false)
}

/// `frame N: function at file:line`.
fn frame_line(frame: &Value) -> String {
    format!(
        "frame {}: {} at {}:{}",
        num(frame, "id"),
        str_of(frame, "function").unwrap_or("?"),
        str_of(frame, "file").unwrap_or("?"),
        num(frame, "line")
    )
}

/// `name: type = value [ref N]`, the value marked `…` when cut (a group without a value,
/// such as debugpy's "special variables", is `name [ref N]`).
fn variable_line(variable: &Value) -> String {
    let value = str_of(variable, "value").unwrap_or("");
    let mut line = str_of(variable, "name").unwrap_or("?").to_owned();
    if let Some(kind) = str_of(variable, "type") {
        let _ = write!(line, ": {kind}");
    }
    if !value.is_empty() || variable["type"].is_string() {
        let _ = write!(line, " = {value}");
    }
    if variable["value_truncated"] == true {
        line.push('…');
    }
    if let Some(children) = reference(variable, "reference") {
        let _ = write!(line, " [ref {children}]");
    }
    line
}

fn push_variables(lines: &mut Vec<String>, variables: &Value) {
    for variable in variables.as_array().into_iter().flatten() {
        lines.push(format!("  {}", variable_line(variable)));
    }
}

/// The source around a stop (the stop line marked `>`) and the frame's locals.
fn push_stop_detail(lines: &mut Vec<String>, value: &Value) {
    let stop = &value["stopped"];
    let shown = &stop["shown_frame"];
    let current = if shown.is_object() {
        lines.push(format!(
            "nearest frame in the workspace: {}",
            frame_line(shown)
        ));
        shown["line"].as_i64()
    } else {
        stop["line"].as_i64()
    };
    if let Some(note) = str_of(stop, "source_note") {
        lines.push(format!("note: {note}"));
    }
    let source = stop["source"].as_array().into_iter().flatten();
    let width = stop["source"]
        .as_array()
        .and_then(|l| l.last())
        .map_or(1, |l| num(l, "line").len());
    for line in source {
        let number = line["line"].as_i64();
        let mark = if number.is_some() && number == current {
            '>'
        } else {
            ' '
        };
        lines.push(format!(
            "{mark} {:>width$} | {}",
            num(line, "line"),
            str_of(line, "text").unwrap_or("")
        ));
    }
    let locals = &stop["locals"];
    if locals.is_object() {
        let scope = str_of(locals, "scope").unwrap_or("locals");
        let shown = locals["variables"].as_array().map_or(0, Vec::len);
        let mut header = format!("locals ({scope}, ref {}", num(locals, "reference"));
        if locals["truncated"] == true {
            let _ = write!(header, "; first {shown} of {}", num(locals, "total"));
        }
        if let Some(unreadable) = locals["unreadable"].as_u64() {
            let _ = write!(header, "; {unreadable} the debugger cannot read left out");
        }
        header.push_str("):");
        if shown == 0 {
            header.push_str(" none");
        }
        lines.push(header);
        push_variables(lines, &locals["variables"]);
    }
}

/// Stop texts at least this long are not repeated in the output attached to the result.
const REPEATED_TEXT_MIN_CHARS: usize = 40;

fn push_output_and_note(text: &mut String, value: &Value) {
    if let Some(output) = value
        .get("output")
        .and_then(|o| o.get("text"))
        .and_then(Value::as_str)
    {
        text.push_str("\noutput:\n");
        // A panic's message is the stop's text and what the program printed: once is enough.
        let said = str_of(&value["stopped"], "text").filter(|t| t.len() >= REPEATED_TEXT_MIN_CHARS);
        match said.filter(|said| output.contains(*said)) {
            Some(said) => text.push_str(
                output
                    .replacen(said, "[the stop's message, above]", 1)
                    .trim_end(),
            ),
            None => text.push_str(output.trim_end()),
        }
    }
    if let Some(note) = str_of(value, "note") {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
}

/// "3, 7 (not verified: why), 9 (placed at 10)", or `None` for an empty list.
fn breakpoint_lines(breakpoints: &Value) -> Option<String> {
    let lines: Vec<String> = breakpoints
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            let mut line = num(b, "line");
            match (b["verified"].as_bool(), b["actual_line"].as_i64()) {
                (Some(false), _) => match str_of(b, "message") {
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
fn exception_stops(stops: &Value, adapter: Option<&str>) -> Option<String> {
    if !stops.is_object() {
        return None;
    }
    let names = |key: &str| -> Vec<&str> {
        stops[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    };
    let (filters, offered, functions) = (names("filters"), names("offered"), names("functions"));
    let mut line = if offered.is_empty() {
        match adapter {
            Some("delve") => {
                "stops on unrecovered panics (delve's own; no exception filters)".to_owned()
            }
            _ => "stops on no exception filters (the adapter offers none)".to_owned(),
        }
    } else {
        format!(
            "stops on exceptions: {} (offered: {}; `exceptions` sets them)",
            if filters.is_empty() {
                "none".to_owned()
            } else {
                filters.join(", ")
            },
            offered.join(", ")
        )
    };
    if !functions.is_empty() {
        let _ = write!(line, "; and in {}", functions.join(", "));
    }
    Some(line)
}

/// "breakpoints: a.py 3, 7; b.py 9", or `None` without any.
fn all_breakpoints(files: &Value) -> Option<String> {
    let parts: Vec<String> = files
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|file| {
            breakpoint_lines(&file["breakpoints"])
                .map(|at| format!("{} {at}", str_of(file, "file").unwrap_or("?")))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("breakpoints: {}", parts.join("; ")))
}

fn count_header(what: &str, value: &Value, shown: usize, total_key: &str) -> String {
    if value["truncated"] == true {
        format!("{what} (first {shown} of {}):", num(value, total_key))
    } else {
        format!("{what} ({shown}):")
    }
}

/// What the caller asked about the rendering itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `stack`: every frame, no run of library frames folded.
    pub all_frames: bool,
}

/// The frame lines of `stack`: runs of two or more library frames after the top one fold
/// into a line that says whose they are and which ids they hold (`all_frames` lists them).
fn push_frames(lines: &mut Vec<String>, frames: &[Value], all: bool) {
    let library = |frame: &Value| str_of(frame, "library").map(str::to_owned);
    let mut at = 0;
    while at < frames.len() {
        let run_end = if at == 0 || all || library(&frames[at]).is_none() {
            at + 1
        } else {
            (at..frames.len())
                .find(|&i| library(&frames[i]).is_none())
                .unwrap_or(frames.len())
        };
        if run_end - at < 2 {
            lines.push(format!("  {}", frame_line(&frames[at])));
            at += 1;
            continue;
        }
        let mut owners: Vec<String> = Vec::new();
        for frame in &frames[at..run_end] {
            if let Some(owner) = library(frame) {
                if !owners.contains(&owner) {
                    owners.push(owner);
                }
            }
        }
        lines.push(format!(
            "  … {} frames of {} (frame {} to {}; `all_frames: true` lists them)",
            run_end - at,
            owners.join("/"),
            num(&frames[at], "id"),
            num(&frames[run_end - 1], "id")
        ));
        at = run_end;
    }
}

/// The whole rendering of `op`'s result.
pub fn render(op: Op, value: &Value, options: Options) -> String {
    let mut text = match op {
        Op::Adapters => {
            let mut lines = Vec::new();
            for adapter in value["adapters"].as_array().into_iter().flatten() {
                let name = str_of(adapter, "name").unwrap_or("?");
                let line = if adapter["available"] == true {
                    format!("{name}: available")
                } else {
                    format!(
                        "{name}: not available ({})",
                        str_of(adapter, "reason").unwrap_or("unknown")
                    )
                };
                lines.push(line);
            }
            if let Some(error) = str_of(value, "config_error") {
                lines.push(format!("config error: {error}"));
            }
            return lines.join("\n");
        }
        Op::Launch | Op::Attach => {
            let mut lines = vec![format!(
                "{}: {}",
                str_of(value, "adapter").unwrap_or("?"),
                str_of(value, "target").unwrap_or("?")
            )];
            lines.extend(all_breakpoints(&value["breakpoints"]));
            lines.extend(exception_stops(
                &value["exceptions"],
                str_of(value, "adapter"),
            ));
            lines.push(position_of(value, true));
            push_stop_detail(&mut lines, value);
            lines.join("\n")
        }
        Op::Continue | Op::Pause | Op::StepOver | Op::StepIn | Op::StepOut => {
            let mut lines = vec![position_of(value, true)];
            push_stop_detail(&mut lines, value);
            lines.join("\n")
        }
        Op::Threads => {
            let threads = value["threads"].as_array();
            let mut lines = vec![
                position(value),
                count_header("threads", value, threads.map_or(0, Vec::len), "total"),
            ];
            for thread in threads.into_iter().flatten() {
                lines.push(format!(
                    "  thread {}: {}",
                    num(thread, "id"),
                    str_of(thread, "name").unwrap_or("")
                ));
            }
            lines.join("\n")
        }
        Op::Stack => {
            let frames = value["frames"].as_array();
            let shown = frames.map_or(0, Vec::len);
            let mut lines = vec![
                position(value),
                count_header(
                    &format!("stack of thread {}", num(value, "thread_id")),
                    value,
                    shown,
                    "total_frames",
                ),
            ];
            push_frames(
                &mut lines,
                frames.map_or(&[][..], Vec::as_slice),
                options.all_frames,
            );
            lines.join("\n")
        }
        Op::Scopes => {
            let mut lines = vec![
                position(value),
                format!("scopes of frame {}:", num(value, "frame_id")),
            ];
            for scope in value["scopes"].as_array().into_iter().flatten() {
                let mut line = format!(
                    "  {}: ref {}",
                    str_of(scope, "name").unwrap_or("?"),
                    num(scope, "reference")
                );
                let mut extra = Vec::new();
                if let Some(count) = scope["variables"].as_i64() {
                    extra.push(format!("{count} variables"));
                }
                if scope["expensive"] == true {
                    extra.push("expensive".to_owned());
                }
                if !extra.is_empty() {
                    let _ = write!(line, " ({})", extra.join(", "));
                }
                lines.push(line);
            }
            lines.join("\n")
        }
        Op::Variables => {
            let shown = value["variables"].as_array().map_or(0, Vec::len);
            let mut lines = vec![count_header(
                &format!("children of ref {}", num(value, "reference")),
                value,
                shown,
                "total",
            )];
            push_variables(&mut lines, &value["variables"]);
            lines.join("\n")
        }
        Op::Locals => {
            let shown = value["variables"].as_array().map_or(0, Vec::len);
            let mut lines = vec![count_header(
                &format!(
                    "{} of frame {}, ref {}",
                    str_of(value, "scope").unwrap_or("locals"),
                    num(value, "frame_id"),
                    num(value, "reference")
                ),
                value,
                shown,
                "total",
            )];
            push_variables(&mut lines, &value["variables"]);
            let scope = str_of(value, "scope").unwrap_or_default();
            let others: Vec<&str> = value["scopes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|name| *name != scope)
                .collect();
            if !others.is_empty() {
                lines.push(format!("other scopes (`scope`): {}", others.join(", ")));
            }
            lines.join("\n")
        }
        Op::Evaluate => {
            let mut line = format!(
                "{}{} = {}",
                str_of(value, "expression").unwrap_or("?"),
                str_of(value, "type")
                    .map(|t| format!(": {t}"))
                    .unwrap_or_default(),
                str_of(value, "result").unwrap_or("")
            );
            if value["result_truncated"] == true {
                let _ = write!(line, "… ({} characters)", num(value, "result_length"));
            }
            if let Some(children) = reference(value, "reference") {
                let _ = write!(line, " [ref {children}]");
            }
            line
        }
        Op::Breakpoints => {
            let file = str_of(value, "file").unwrap_or("?");
            let mut text = match breakpoint_lines(&value["breakpoints"]) {
                None => format!("{file}: no breakpoints"),
                Some(lines) => format!("{file}: breakpoints at {lines}"),
            };
            if value["state"] != "none" {
                text.push('\n');
                text.push_str(&position(value));
            }
            text
        }
        Op::Status => {
            let mut lines = vec![position(value)];
            if let Some(session) = value["session"].as_object() {
                lines.push(format!(
                    "session: {} debugging {}, expires in {}s",
                    session
                        .get("adapter")
                        .and_then(Value::as_str)
                        .unwrap_or("?"),
                    session.get("target").and_then(Value::as_str).unwrap_or("?"),
                    session
                        .get("expires_in_seconds")
                        .map_or_else(|| "?".to_owned(), Value::to_string)
                ));
            }
            // Without a working session, breakpoints wait for the next `launch`.
            let waiting = value["session"].is_null() || value["state"] == "adapter_exited";
            for file in value["breakpoints"].as_array().into_iter().flatten() {
                if let Some(at) = breakpoint_lines(&file["breakpoints"]) {
                    let file = str_of(file, "file").unwrap_or("?");
                    let when = if waiting { " (sent at `launch`)" } else { "" };
                    lines.push(format!("breakpoints in {file}: {at}{when}"));
                }
            }
            lines.join("\n")
        }
        Op::Output => {
            let output = str_of(value, "output").unwrap_or("");
            let mut text = if output.is_empty() {
                "(no output)".to_owned()
            } else {
                output.trim_end().to_owned()
            };
            if value["truncated"] == true {
                let _ = write!(
                    text,
                    "\n(the first {} bytes are no longer kept)",
                    num(value, "dropped_bytes")
                );
            }
            text.push('\n');
            text.push_str(&position(value));
            text
        }
        Op::Terminate => {
            if value["terminated"] == true {
                let program = &value["program"];
                let how = match str_of(program, "how") {
                    Some("exited") => match program["code"].as_i64() {
                        Some(code) => format!("the program had exited with code {code}"),
                        None => "the program had exited".to_owned(),
                    },
                    Some("killed_while_stopped") => match str_of(program, "at") {
                        Some(at) => format!("the program, stopped at {at}, was ended"),
                        None => "the program was stopped and was ended".to_owned(),
                    },
                    Some("killed_while_running") => {
                        "the program was running and was ended".to_owned()
                    }
                    _ => "how the program ended is not known".to_owned(),
                };
                format!(
                    "terminated the {} session: {how}",
                    str_of(value, "adapter").unwrap_or("debug")
                )
            } else {
                "nothing to terminate".into()
            }
        }
    };
    if matches!(
        op,
        Op::Launch
            | Op::Attach
            | Op::Continue
            | Op::Pause
            | Op::StepOver
            | Op::StepIn
            | Op::StepOut
            | Op::Status
            | Op::Terminate
            | Op::Breakpoints
            | Op::Output
    ) {
        push_output_and_note(&mut text, value);
    }
    text
}
