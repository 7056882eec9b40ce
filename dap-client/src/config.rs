//! The `[debug]` section of `.cc/tools.toml`: timeouts and per-adapter overrides.
//!
//! ```toml
//! [debug]
//! ttl_seconds = 1800              # hard session lifetime
//! wait_seconds = 30               # how long launch/continue/steps wait for a stop
//! launch_timeout_seconds = 120    # the whole launch sequence (Go builds are slow)
//! request_timeout_seconds = 30    # one ordinary request
//! output_buffer_bytes = 262144    # program output kept
//! stop_source_before = 2          # source lines shown before the stop line
//! stop_source_after = 2           # and after it
//! stop_locals = 20                # locals shown in a stop result (0: none)
//! stop_locals_chars = 1600        # their values' characters together: short ones whole,
//!                                 # long ones share the rest (each up to 400)
//! stop_value_chars = 80           # and no value cut below this many
//!
//! [debug.debugpy]
//! command = ["/opt/py/bin/python", "-m", "debugpy.adapter"]
//! markers = ["pyproject.toml", "setup.cfg"]
//! launch = { justMyCode = false }  # merged into every launch/attach request
//! ```
//!
//! This crate does not read the file: the host deserializes the section into [`DebugConfig`]
//! (it is `serde::Deserialize`, and checks every key as it does) and hands it over.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::adapters::AdapterKind;

/// The `[debug]` section. Every field is optional; absent ones take the defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct DebugConfig {
    /// Session time-to-live (default 1800 s).
    pub ttl_seconds: Option<f64>,
    /// How long `launch`, `continue` and the steps wait for the program to stop (default 30 s).
    pub wait_seconds: Option<f64>,
    /// How long the launch sequence may take (default 120 s).
    pub launch_timeout_seconds: Option<f64>,
    /// How long one ordinary request may take (default 30 s).
    pub request_timeout_seconds: Option<f64>,
    /// Bytes of program output kept (default 256 KiB).
    pub output_buffer_bytes: Option<usize>,
    /// Source lines shown before the stop line in a stop result (default 2).
    pub stop_source_before: Option<usize>,
    /// Source lines shown after the stop line (default 2).
    pub stop_source_after: Option<usize>,
    /// Locals shown in a stop result (default 20; 0 fetches none).
    pub stop_locals: Option<usize>,
    /// Characters of each local's value in a stop result when the budget is tight
    /// (default 80).
    pub stop_value_chars: Option<usize>,
    /// Characters of all the locals' values of a stop result together (default 1600).
    pub stop_locals_chars: Option<usize>,
    /// Overrides by adapter.
    pub adapters: BTreeMap<AdapterKind, AdapterOverride>,
    /// Where the host keeps this section (`[debug]` of `.cc/tools.toml`): the messages that
    /// say which setting to change name it. Not read from the section; the host sets it.
    pub place: cc_workspace::SettingsPlace,
}

impl Default for DebugConfig {
    fn default() -> Self {
        DebugConfig {
            ttl_seconds: None,
            wait_seconds: None,
            launch_timeout_seconds: None,
            request_timeout_seconds: None,
            output_buffer_bytes: None,
            stop_source_before: None,
            stop_source_after: None,
            stop_locals: None,
            stop_value_chars: None,
            stop_locals_chars: None,
            adapters: BTreeMap::new(),
            place: cc_workspace::SettingsPlace::new("debug"),
        }
    }
}

/// Overrides of one adapter's table entry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterOverride {
    /// The full command line that starts the adapter (program first). For `delve`,
    /// `--client-addr HOST:PORT` is appended.
    pub command: Option<Vec<String>>,
    /// Root markers: files whose presence at the workspace root makes the adapter relevant.
    pub markers: Option<Vec<String>>,
    /// Extra arguments merged into every launch/attach request (adapter-specific keys).
    #[serde(default)]
    pub launch: Option<Map<String, Value>>,
}

const SCALARS: [&str; 10] = [
    "ttl_seconds",
    "wait_seconds",
    "launch_timeout_seconds",
    "request_timeout_seconds",
    "output_buffer_bytes",
    "stop_source_before",
    "stop_source_after",
    "stop_locals",
    "stop_value_chars",
    "stop_locals_chars",
];

/// The range of `stop_locals_chars`.
const STOP_LOCALS_CHARS: std::ops::RangeInclusive<i64> = 100..=20_000;

/// The largest count a `stop_*` key accepts: a stop result stays a summary.
const MAX_STOP_COUNT: i64 = 1000;

// The section is taken as a map of values so that every key is checked here, with messages
// that list what is expected (serde's derive could not say "or an adapter table").
impl TryFrom<Map<String, Value>> for DebugConfig {
    type Error = String;

    fn try_from(table: Map<String, Value>) -> Result<Self, Self::Error> {
        let mut config = DebugConfig::default();
        for (key, value) in table {
            if let Some(kind) = AdapterKind::from_name(&key) {
                let entry = AdapterOverride::deserialize(value)
                    .map_err(|error| format!("[debug.{key}]: {error}"))?;
                if entry.command.as_ref().is_some_and(Vec::is_empty) {
                    return Err(format!("[debug.{key}]: `command` must not be empty"));
                }
                config.adapters.insert(kind, entry);
                continue;
            }
            match key.as_str() {
                "output_buffer_bytes" => {
                    let bytes = value
                        .as_i64()
                        .and_then(|n| usize::try_from(n).ok())
                        .filter(|n| *n > 0)
                        .ok_or_else(|| {
                            "`output_buffer_bytes` must be a positive integer".to_owned()
                        })?;
                    config.output_buffer_bytes = Some(bytes);
                }
                "stop_locals_chars" => {
                    let chars = value
                        .as_i64()
                        .filter(|n| STOP_LOCALS_CHARS.contains(n))
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| {
                            format!(
                                "`stop_locals_chars` must be an integer from {} to {}",
                                STOP_LOCALS_CHARS.start(),
                                STOP_LOCALS_CHARS.end()
                            )
                        })?;
                    config.stop_locals_chars = Some(chars);
                }
                "stop_source_before" | "stop_source_after" | "stop_locals" | "stop_value_chars" => {
                    let minimum = i64::from(key == "stop_value_chars");
                    let count = value
                        .as_i64()
                        .filter(|n| (minimum..=MAX_STOP_COUNT).contains(n))
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| {
                            format!("`{key}` must be an integer from {minimum} to {MAX_STOP_COUNT}")
                        })?;
                    let slot = match key.as_str() {
                        "stop_source_before" => &mut config.stop_source_before,
                        "stop_source_after" => &mut config.stop_source_after,
                        "stop_locals" => &mut config.stop_locals,
                        _ => &mut config.stop_value_chars,
                    };
                    *slot = Some(count);
                }
                "ttl_seconds"
                | "wait_seconds"
                | "launch_timeout_seconds"
                | "request_timeout_seconds" => {
                    let Some(seconds) = value.as_f64() else {
                        return Err(format!("`{key}` must be a number of seconds"));
                    };
                    // A year bounds it well below what `Duration` can hold.
                    if !(seconds > 0.0 && seconds <= 31_536_000.0) {
                        return Err(format!("`{key}` must be positive and at most a year"));
                    }
                    let slot = match key.as_str() {
                        "ttl_seconds" => &mut config.ttl_seconds,
                        "wait_seconds" => &mut config.wait_seconds,
                        "launch_timeout_seconds" => &mut config.launch_timeout_seconds,
                        _ => &mut config.request_timeout_seconds,
                    };
                    *slot = Some(seconds);
                }
                other => {
                    return Err(format!(
                        "unknown key `{other}`; expected one of {} or an adapter table ({})",
                        SCALARS.join(", "),
                        AdapterKind::names().join(", ")
                    ))
                }
            }
        }
        Ok(config)
    }
}

impl DebugConfig {
    /// The timeouts and sizes, defaults applied.
    pub fn settings(&self) -> Settings {
        let secs = |value: Option<f64>, default: u64| {
            value.map_or(Duration::from_secs(default), Duration::from_secs_f64)
        };
        Settings {
            ttl: secs(self.ttl_seconds, 30 * 60),
            wait: secs(self.wait_seconds, 30),
            launch_timeout: secs(self.launch_timeout_seconds, 120),
            request_timeout: secs(self.request_timeout_seconds, 30),
            output_buffer_bytes: self.output_buffer_bytes.unwrap_or(256 * 1024),
            stop: StopDetail {
                source_before: self.stop_source_before.unwrap_or(2),
                source_after: self.stop_source_after.unwrap_or(2),
                locals: self.stop_locals.unwrap_or(20),
                value_chars: self.stop_value_chars.unwrap_or(80),
                locals_chars: self.stop_locals_chars.unwrap_or(1600),
            },
        }
    }

    /// The override for `kind`, if any.
    pub fn adapter(&self, kind: AdapterKind) -> Option<&AdapterOverride> {
        self.adapters.get(&kind)
    }
}

/// Resolved timeouts and sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Session time-to-live.
    pub ttl: Duration,
    /// How long blocking operations wait for a stop.
    pub wait: Duration,
    /// How long the launch sequence may take.
    pub launch_timeout: Duration,
    /// How long one request may take.
    pub request_timeout: Duration,
    /// Bytes of program output kept.
    pub output_buffer_bytes: usize,
    /// What a stop result shows of the top frame.
    pub stop: StopDetail,
}

/// What a result that reports a stop shows of the top frame, so that "where is it and what
/// holds what" needs no further call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopDetail {
    /// Source lines before the stop line.
    pub source_before: usize,
    /// Source lines after it.
    pub source_after: usize,
    /// How many locals (0: none are fetched).
    pub locals: usize,
    /// Characters kept of each local's value at least, when the budget is tight.
    pub value_chars: usize,
    /// Characters of all the values together (short values whole, long ones sharing the
    /// rest).
    pub locals_chars: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the host does with the file's `[debug]` section.
    fn parse(text: &str) -> Result<DebugConfig, cc_workspace::BrokenSection> {
        let table: toml::Table = text.parse().unwrap();
        match table.get("debug") {
            Some(section) => DebugConfig::deserialize(section.clone())
                .map_err(|error| cc_workspace::BrokenSection::new("debug", error)),
            None => Ok(DebugConfig::default()),
        }
    }

    #[test]
    fn parses_overrides_and_defaults() {
        let config = parse(
            r#"
            [debug]
            ttl_seconds = 5
            wait_seconds = 2.5
            [debug.debugpy]
            command = ["/x/python", "-m", "debugpy.adapter"]
            launch = { justMyCode = false }
            [debug.delve]
            markers = ["go.work"]
            "#,
        )
        .unwrap();
        let settings = config.settings();
        assert_eq!(settings.ttl, Duration::from_secs(5));
        assert_eq!(settings.wait, Duration::from_millis(2500));
        assert_eq!(settings.launch_timeout, Duration::from_secs(120));
        let debugpy = config.adapter(AdapterKind::Debugpy).unwrap();
        assert_eq!(debugpy.launch.as_ref().unwrap()["justMyCode"], false);
        assert_eq!(
            config
                .adapter(AdapterKind::Delve)
                .unwrap()
                .markers
                .as_deref(),
            Some(&["go.work".to_owned()][..])
        );
        assert_eq!(parse("").unwrap(), DebugConfig::default());
    }

    #[test]
    fn rejects_unknown_keys_with_the_expected_ones() {
        let error = parse("[debug]\nttl = 3\n").unwrap_err();
        assert!(error.message.contains("unknown key `ttl`"), "{error}");
        assert!(
            error.message.contains("debugpy, lldb, delve, dart"),
            "{error}"
        );
        let error = parse("[debug.lldb]\ncommand = []\n").unwrap_err();
        assert!(error.message.contains("must not be empty"), "{error}");
        let error = parse("[debug.lldb]\nbinary = \"x\"\n").unwrap_err();
        assert!(error.message.contains("binary"), "{error}");
        let error = parse("[debug]\nwait_seconds = -1\n").unwrap_err();
        assert!(error.message.contains("positive"), "{error}");
        let error = parse("[debug]\nstop_value_chars = 0\n").unwrap_err();
        assert!(error.message.contains("from 1 to 1000"), "{error}");
        let error = parse("[debug]\nstop_locals = 2.5\n").unwrap_err();
        assert!(error.message.contains("from 0 to 1000"), "{error}");
    }

    #[test]
    fn stop_locals_chars_is_checked() {
        let error = parse("[debug]\nstop_locals_chars = 5\n").unwrap_err();
        assert!(error.message.contains("from 100 to 20000"), "{error}");
        assert_eq!(
            parse("[debug]\nstop_locals_chars = 3000\n")
                .unwrap()
                .settings()
                .stop
                .locals_chars,
            3000
        );
    }

    #[test]
    fn stop_detail_defaults_and_overrides() {
        let defaults = DebugConfig::default().settings().stop;
        assert_eq!(
            defaults,
            StopDetail {
                source_before: 2,
                source_after: 2,
                locals: 20,
                value_chars: 80,
                locals_chars: 1600,
            }
        );
        let config = parse("[debug]\nstop_locals = 0\nstop_source_after = 5\n").unwrap();
        let stop = config.settings().stop;
        assert_eq!(
            (stop.locals, stop.source_after, stop.source_before),
            (0, 5, 2)
        );
    }
}
