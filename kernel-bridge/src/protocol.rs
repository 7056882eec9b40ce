//! The messages between the host and a kernel's driver: JSON, one object per line.
//!
//! Host to driver: `exec`, `reply` (to a bridge call), `interrupt`, `shutdown`.
//! Driver to host: `ready`, `display`, `call` (a bridge call), `done`, and `out` (user stdout
//! relayed as frames when the protocol shares the kernel's stdout through an enclosure).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::outcome::{CellError, DisplayItem};

/// A message from the driver.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum FromDriver {
    /// The driver is listening.
    Ready {
        version: String,
        #[serde(default)]
        executable: Option<String>,
        pid: u32,
    },
    /// Rich output of a cell (`display(obj)`, a figure, an HTML table).
    Display { items: Vec<DisplayItem> },
    /// `tool(name, args)` inside the kernel.
    Call {
        id: u64,
        name: String,
        #[serde(default)]
        args: Value,
    },
    /// A cell finished; its barrier markers are already written to stdout and stderr.
    Done {
        cell: u64,
        #[serde(default)]
        result: Option<String>,
        #[serde(default)]
        error: Option<CellError>,
        /// Whether the marker could be written to stdout and stderr (a cell may close them).
        #[serde(default = "both_barriers")]
        barrier: [bool; 2],
    },
    /// User stdout relayed by the driver (bytes as a Latin-1 string, so any byte survives JSON).
    Out { data: String },
}

fn both_barriers() -> [bool; 2] {
    [true, true]
}

/// A message to the driver.
#[derive(Debug, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum ToDriver<'a> {
    Exec {
        cell: u64,
        code: &'a str,
    },
    Reply {
        id: u64,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<Value>,
    },
    Interrupt {
        cell: u64,
    },
    Shutdown,
}

impl ToDriver<'_> {
    /// The line to write (JSON and a newline).
    pub(crate) fn encode(&self) -> Vec<u8> {
        // Serializing these plain structs cannot fail; an empty line would be ignored anyway.
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// Parses one line from the driver. Strings built by user code may hold lone UTF-16
/// surrogates, which JSON encoders escape but serde refuses: they become U+FFFD rather than
/// losing the whole message.
pub(crate) fn decode(line: &[u8]) -> Result<FromDriver, serde_json::Error> {
    match serde_json::from_slice(line) {
        Ok(message) => Ok(message),
        Err(error) => match replace_lone_surrogates(line) {
            Cow::Owned(fixed) => serde_json::from_slice(&fixed),
            Cow::Borrowed(_) => Err(error),
        },
    }
}

fn replace_lone_surrogates(line: &[u8]) -> Cow<'_, [u8]> {
    let hex = |at: usize| -> Option<u16> {
        let digits = line.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < line.len() {
        if line[i] == b'\\' && line.get(i + 1) == Some(&b'u') {
            if let Some(unit) = hex(i + 2) {
                let high = (0xD800..0xDC00).contains(&unit);
                let low = (0xDC00..0xE000).contains(&unit);
                let paired = high
                    && line.get(i + 6) == Some(&b'\\')
                    && line.get(i + 7) == Some(&b'u')
                    && hex(i + 8).is_some_and(|next| (0xDC00..0xE000).contains(&next));
                if paired {
                    if let Some(out) = &mut out {
                        out.extend_from_slice(&line[i..i + 12]);
                    }
                    i += 12;
                    continue;
                }
                if high || low {
                    let out = out.get_or_insert_with(|| line[..i].to_vec());
                    out.extend_from_slice(b"\\ufffd");
                    i += 6;
                    continue;
                }
            }
        }
        // Any other escape (including `\\`) is copied whole so `\\u` is not misread.
        let step = if line[i] == b'\\' { 2 } else { 1 };
        let end = (i + step).min(line.len());
        if let Some(out) = &mut out {
            out.extend_from_slice(&line[i..end]);
        }
        i = end;
    }
    match out {
        Some(out) => Cow::Owned(out),
        None => Cow::Borrowed(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let line = br#"{"op":"out","data":"a\ud800b\\ud800\ud83d\ude00"}"#;
        match decode(line).unwrap() {
            FromDriver::Out { data } => assert_eq!(data, "a\u{FFFD}b\\ud800\u{1F600}"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn messages_round_trip() {
        let exec = ToDriver::Exec {
            cell: 3,
            code: "print('é')\n",
        };
        assert_eq!(
            String::from_utf8(exec.encode()).unwrap(),
            "{\"op\":\"exec\",\"cell\":3,\"code\":\"print('é')\\n\"}\n"
        );
        let done = decode(br#"{"op":"done","cell":3,"result":"1","error":null}"#).unwrap();
        assert!(matches!(
            done,
            FromDriver::Done {
                cell: 3,
                barrier: [true, true],
                ..
            }
        ));
    }
}
