//! Compact text renderings of `debug` results, for clients that show text.

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

/// "stopped at app.py:4 in main (breakpoint, thread 1)", "exited with code 0", …
pub fn position(value: &Value) -> String {
    match str_of(value, "state") {
        Some("stopped") => {
            let stop = &value["stopped"];
            let mut line = format!(
                "stopped at {}:{}",
                str_of(stop, "file").unwrap_or("?"),
                num(stop, "line")
            );
            if let Some(function) = str_of(stop, "function") {
                line.push_str(&format!(" in {function}"));
            }
            line.push_str(&format!(
                " ({}, thread {})",
                str_of(stop, "reason").unwrap_or("?"),
                num(stop, "thread_id")
            ));
            if let Some(text) = str_of(stop, "description").or(str_of(stop, "text")) {
                line.push_str(&format!(": {text}"));
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
        Some("none") => "no session".into(),
        _ => String::new(),
    }
}

fn push_output_and_note(text: &mut String, value: &Value) {
    if let Some(output) = value
        .get("output")
        .and_then(|o| o.get("text"))
        .and_then(Value::as_str)
    {
        text.push_str("\noutput:\n");
        text.push_str(output.trim_end());
    }
    if let Some(note) = str_of(value, "note") {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
}

/// "3, 7 (not verified), 9 (placed at 10)", or `None` for an empty list.
fn breakpoint_lines(breakpoints: &Value) -> Option<String> {
    let lines: Vec<String> = breakpoints
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            let mut line = num(b, "line");
            match (b["verified"].as_bool(), b["actual_line"].as_i64()) {
                (Some(false), _) => line.push_str(" (not verified)"),
                (Some(true), Some(actual)) => line.push_str(&format!(" (placed at {actual})")),
                _ => {}
            }
            line
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join(", "))
}

/// The whole rendering of `op`'s result.
pub fn render(op: Op, value: &Value) -> String {
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
        Op::Stack => {
            let mut lines = vec![position(value)];
            for frame in value["frames"].as_array().into_iter().flatten() {
                lines.push(format!(
                    "  [{}] {} {}:{}",
                    num(frame, "id"),
                    str_of(frame, "function").unwrap_or("?"),
                    str_of(frame, "file").unwrap_or("?"),
                    num(frame, "line")
                ));
            }
            if value["truncated"] == true {
                lines.push(format!("  … {} frames in all", num(value, "total_frames")));
            }
            lines.join("\n")
        }
        Op::Variables => {
            let mut lines = Vec::new();
            for variable in value["variables"].as_array().into_iter().flatten() {
                let mut line = format!(
                    "{}{} = {}",
                    str_of(variable, "name").unwrap_or("?"),
                    str_of(variable, "type")
                        .map(|t| format!(": {t}"))
                        .unwrap_or_default(),
                    str_of(variable, "value").unwrap_or("")
                );
                if variable["value_truncated"] == true {
                    line.push('…');
                }
                if variable["reference"].as_i64().is_some_and(|r| r > 0) {
                    line.push_str(&format!(" [ref {}]", num(variable, "reference")));
                }
                lines.push(line);
            }
            if value["truncated"] == true {
                lines.push(format!("… {} children in all", num(value, "total")));
            }
            lines.join("\n")
        }
        Op::Evaluate => {
            let mut line = format!(
                "{} = {}",
                str_of(value, "expression").unwrap_or("?"),
                str_of(value, "result").unwrap_or("")
            );
            if value["result_truncated"] == true {
                line.push('…');
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
        Op::Output => str_of(value, "output").unwrap_or("").to_owned(),
        Op::Terminate => {
            if value["terminated"] == true {
                format!(
                    "terminated ({} exited: {})",
                    str_of(value, "adapter").unwrap_or("adapter"),
                    str_of(value, "adapter_exit").unwrap_or("?")
                )
            } else {
                "nothing to terminate".into()
            }
        }
        _ => position(value),
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
    ) {
        push_output_and_note(&mut text, value);
    }
    text
}
