//! The adapter table: which adapters exist, what marks a checkout as theirs, which program
//! goes to which adapter, and the launch/attach request each one gets.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::DebugError;

/// The known debug adapters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdapterKind {
    /// `python -m debugpy.adapter` (stdio).
    Debugpy,
    /// `lldb-dap` (stdio), for native executables.
    Lldb,
    /// `dlv dap` (TCP: it dials us), for Go.
    Delve,
    /// `dart debug_adapter` (stdio).
    Dart,
}

/// How the client talks to an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// DAP over the adapter's stdin/stdout.
    Stdio,
    /// The adapter dials a port we listen on (`dlv dap --client-addr HOST:PORT`); its stdout
    /// and stderr carry the debuggee's output.
    DialIn,
}

impl AdapterKind {
    /// Every adapter, in table order.
    pub const ALL: [AdapterKind; 4] = [
        AdapterKind::Debugpy,
        AdapterKind::Lldb,
        AdapterKind::Delve,
        AdapterKind::Dart,
    ];

    /// The table name (`debugpy`, `lldb`, `delve`, `dart`).
    pub fn name(self) -> &'static str {
        match self {
            AdapterKind::Debugpy => "debugpy",
            AdapterKind::Lldb => "lldb",
            AdapterKind::Delve => "delve",
            AdapterKind::Dart => "dart",
        }
    }

    /// Every table name.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|kind| kind.name()).collect()
    }

    /// The adapter of that name (`dlv` and `go` are accepted for delve, `lldb-dap` for lldb).
    pub fn from_name(name: &str) -> Option<AdapterKind> {
        match name {
            "debugpy" | "python" => Some(AdapterKind::Debugpy),
            "lldb" | "lldb-dap" => Some(AdapterKind::Lldb),
            "delve" | "dlv" | "go" => Some(AdapterKind::Delve),
            "dart" => Some(AdapterKind::Dart),
            _ => None,
        }
    }

    /// The `adapterID` sent in `initialize` and the `type` of launch requests.
    pub fn adapter_id(self) -> &'static str {
        match self {
            AdapterKind::Debugpy => "python",
            AdapterKind::Lldb => "lldb-dap",
            AdapterKind::Delve => "go",
            AdapterKind::Dart => "dart",
        }
    }

    /// Root markers of the default table.
    pub fn default_markers(self) -> &'static [&'static str] {
        match self {
            AdapterKind::Debugpy => &["pyproject.toml", "setup.py", "requirements.txt"],
            AdapterKind::Lldb => &["Cargo.toml", "CMakeLists.txt"],
            AdapterKind::Delve => &["go.mod"],
            AdapterKind::Dart => &["pubspec.yaml"],
        }
    }

    /// How the client connects.
    pub fn transport(self) -> Transport {
        match self {
            AdapterKind::Delve => Transport::DialIn,
            _ => Transport::Stdio,
        }
    }

    /// The `evaluate` context: lldb-dap treats `repl` input as debugger commands when they
    /// look like one, so it gets `watch`; the others accept statements in `repl`.
    pub fn evaluate_context(self) -> &'static str {
        match self {
            AdapterKind::Lldb => "watch",
            _ => "repl",
        }
    }

    /// Whether `attach` to a listening port is supported.
    pub fn attaches_to_port(self) -> bool {
        self == AdapterKind::Debugpy
    }
}

impl std::fmt::Display for AdapterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Picks the adapter for `program`: `.py` or a Python console script (`#!…python`) →
/// debugpy, `.go` or a Go package directory → delve, `.dart` → dart, a native executable
/// (ELF or Mach-O) → lldb.
pub fn pick_adapter(program: &Path) -> Result<AdapterKind, DebugError> {
    let shown = program.display().to_string();
    let cannot = |why: &str| DebugError::CannotPickAdapter {
        program: shown.clone(),
        why: why.into(),
    };
    if program.is_dir() {
        let has_go = program.join("go.mod").is_file()
            || std::fs::read_dir(program)
                .map(|entries| {
                    entries
                        .flatten()
                        .any(|entry| entry.path().extension().is_some_and(|ext| ext == "go"))
                })
                .unwrap_or(false);
        return if has_go {
            Ok(AdapterKind::Delve)
        } else {
            Err(cannot("it is a directory without Go sources"))
        };
    }
    match program.extension().and_then(|ext| ext.to_str()) {
        Some("py" | "pyw") => return Ok(AdapterKind::Debugpy),
        Some("go") => return Ok(AdapterKind::Delve),
        Some("dart") => return Ok(AdapterKind::Dart),
        _ => {}
    }
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(program).and_then(|mut file| file.read_exact(&mut magic));
    if read.is_err() {
        return Err(cannot("it could not be read"));
    }
    const MACHO: [[u8; 4]; 4] = [
        [0xfe, 0xed, 0xfa, 0xce],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xcf, 0xfa, 0xed, 0xfe],
        [0xce, 0xfa, 0xed, 0xfe],
    ];
    if magic == *b"\x7fELF" || MACHO.contains(&magic) {
        return Ok(AdapterKind::Lldb);
    }
    if magic.starts_with(b"#!") {
        // A Python console script (`.venv/bin/pytest`) is Python code.
        if is_python_script(program) {
            return Ok(AdapterKind::Debugpy);
        }
        return Err(cannot(
            "it is a script with a `#!` line that does not run Python, not a Python, Go or \
             Dart source or a native executable",
        ));
    }
    Err(cannot(
        "it is not a Python, Go or Dart source, a Go package directory, or a native executable",
    ))
}

/// The `launch` request arguments for `kind`: `program` with `args`, run in `cwd`, with the
/// table's `extra` keys merged last (they win).
pub fn launch_arguments(
    kind: AdapterKind,
    program: &Path,
    args: &[String],
    cwd: &Path,
    extra: Option<&Map<String, Value>>,
) -> Value {
    let program = program.display().to_string();
    let cwd = cwd.display().to_string();
    let mut request = match kind {
        AdapterKind::Debugpy => json!({
            "type": "python",
            "request": "launch",
            "name": "cc debug",
            "program": program,
            "args": args,
            "cwd": cwd,
            "console": "internalConsole",
            "redirectOutput": true,
            "justMyCode": true,
            "stopOnEntry": false,
        }),
        AdapterKind::Lldb => json!({
            "type": "lldb-dap",
            "request": "launch",
            "name": "cc debug",
            "program": program,
            "args": args,
            "cwd": cwd,
            "stopOnEntry": false,
        }),
        AdapterKind::Delve => json!({
            "type": "go",
            "request": "launch",
            "name": "cc debug",
            "mode": "debug",
            "program": program,
            "args": args,
            "cwd": cwd,
            "stopOnEntry": false,
        }),
        AdapterKind::Dart => json!({
            "type": "dart",
            "request": "launch",
            "name": "cc debug",
            "program": program,
            "args": args,
            "cwd": cwd,
            "console": "debugConsole",
        }),
    };
    merge(&mut request, extra);
    request
}

/// The `attach` request arguments for the adapter of a listening debugpy (which the client
/// connects to directly).
pub fn attach_arguments(
    kind: AdapterKind,
    extra: Option<&Map<String, Value>>,
) -> Result<Value, DebugError> {
    if !kind.attaches_to_port() {
        return Err(DebugError::InvalidArguments(format!(
            "`attach` by port is supported for debugpy only (a Python process started with \
             `python -m debugpy --listen PORT` or `debugpy.listen(PORT)`); `{kind}` programs \
             are debugged with `launch`"
        )));
    }
    let mut request = json!({
        "type": "python",
        "request": "attach",
        "name": "cc attach",
        "justMyCode": true,
    });
    merge(&mut request, extra);
    Ok(request)
}

pub(crate) fn merge(request: &mut Value, extra: Option<&Map<String, Value>>) {
    if let (Value::Object(object), Some(extra)) = (request, extra) {
        for (key, value) in extra {
            object.insert(key.clone(), value.clone());
        }
    }
}

/// The first line of the file at `path` (at most 512 bytes), when it can be read.
pub(crate) fn first_line(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    BufReader::new(file.take(512)).read_line(&mut line).ok()?;
    Some(line)
}

/// Whether a script whose first line runs Python (`#!…python…`) is there.
pub(crate) fn is_python_script(path: &Path) -> bool {
    first_line(path)
        .and_then(|line| line.strip_prefix("#!").map(str::to_owned))
        .is_some_and(|rest| rest.contains("python"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_by_extension_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        assert_eq!(
            pick_adapter(&write("a.py", b"")).unwrap(),
            AdapterKind::Debugpy
        );
        assert_eq!(
            pick_adapter(&write("a.go", b"")).unwrap(),
            AdapterKind::Delve
        );
        assert_eq!(
            pick_adapter(&write("a.dart", b"")).unwrap(),
            AdapterKind::Dart
        );
        assert_eq!(
            pick_adapter(&write("a.out", b"\x7fELF\x02\x01")).unwrap(),
            AdapterKind::Lldb
        );
        assert_eq!(
            pick_adapter(&write("pytest", b"#!/venv/bin/python3\nimport x\n")).unwrap(),
            AdapterKind::Debugpy
        );
        let script = pick_adapter(&write("run", b"#!/bin/sh\n")).unwrap_err();
        assert_eq!(script.kind(), "cannot_pick_adapter");
        assert!(script.to_string().contains("pass `adapter`"), "{script}");
        let pkg = dir.path().join("pkg");
        std::fs::create_dir(&pkg).unwrap();
        assert!(pick_adapter(&pkg).is_err());
        std::fs::write(pkg.join("main.go"), "package main").unwrap();
        assert_eq!(pick_adapter(&pkg).unwrap(), AdapterKind::Delve);
    }

    #[test]
    fn names_round_trip() {
        for kind in AdapterKind::ALL {
            assert_eq!(AdapterKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(AdapterKind::from_name("gdb"), None);
    }
}
