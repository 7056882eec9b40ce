//! The `[lsp]` section of `.cc/tools.toml`: overrides of the built-in server table.
//!
//! ```toml
//! [lsp]
//! idle_timeout_secs = 600          # reap a server unused this long (default 10 min)
//!
//! [lsp.python]
//! command = ["pylsp"]              # replaces the candidate list with this one server
//! probe = ["pylsp", "--version"]   # must exit 0 for the server to count as installed
//! markers = ["pyproject.toml"]     # project-root markers (empty: the workspace root)
//! settle_ms = 0                    # see `Timing`
//! quiet_ms = 1500
//! timeout_ms = 10000               # cap before a file is reported `pending`
//! indexing_timeout_ms = 60000      # cap while the server reports indexing
//! settings = { pylsp = { plugins = { pycodestyle = { enabled = false } } } }
//! env = { PYTHONPATH = "src" }
//!
//! [lsp.dart]
//! enabled = false                  # off: its files are reported unchecked, with this reason
//! ```
//!
//! A section whose name is not a built-in family defines a new one; it needs `command` and
//! `extensions`.
//!
//! This crate does not read the file: the host deserializes the section into [`LspConfig`]
//! (it is `serde::Deserialize`) and hands it over.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::ConfigError;
use crate::table::{canonical_family, Family, ServerSpec, ServerTable};

/// How many other files a write's check looks at, by default.
pub const DEFAULT_DEPENDENTS_LIMIT: usize = 30;

/// The `[lsp]` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LspConfig {
    /// Seconds a server may stay unused before it is stopped (default 600).
    #[serde(default)]
    pub idle_timeout_secs: Option<u64>,
    /// At most this many other files are checked after a write for what it broke in them
    /// (default 30).
    #[serde(default)]
    pub dependents_limit: Option<usize>,
    /// One table per family (`[lsp.python]`, …).
    #[serde(flatten)]
    pub families: BTreeMap<String, FamilyOverride>,
    /// Where the host keeps this section (`[lsp]` of `.cc/tools.toml`): the messages that say
    /// which setting to change name it. Not read from the section; the host sets it.
    #[serde(skip, default = "lsp_section")]
    pub place: cc_workspace::SettingsPlace,
}

fn lsp_section() -> cc_workspace::SettingsPlace {
    cc_workspace::SettingsPlace::new("lsp")
}

impl Default for LspConfig {
    fn default() -> Self {
        LspConfig {
            idle_timeout_secs: None,
            dependents_limit: None,
            families: BTreeMap::new(),
            place: lsp_section(),
        }
    }
}

/// One `[lsp.NAME]` table; every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyOverride {
    /// False turns the family off.
    pub enabled: Option<bool>,
    /// The server's program and arguments; replaces the built-in candidates.
    pub command: Option<Vec<String>>,
    /// The availability probe (default: `[command[0], "--version"]` for a new command).
    pub probe: Option<Vec<String>>,
    /// The server's display name (default: the command's file name).
    pub name: Option<String>,
    /// File extensions, without dots.
    pub extensions: Option<Vec<String>>,
    /// Project-root markers.
    pub markers: Option<Vec<String>>,
    /// The `languageId` sent in `didOpen` (default: the family name).
    pub language_id: Option<String>,
    /// Milliseconds, see [`crate::Timing::settle`].
    pub settle_ms: Option<u64>,
    /// Milliseconds, see [`crate::Timing::quiet`]; 0 turns the quiet rule off.
    pub quiet_ms: Option<u64>,
    /// Milliseconds, see [`crate::Timing::cap`].
    pub timeout_ms: Option<u64>,
    /// Milliseconds, see [`crate::Timing::indexing_cap`].
    pub indexing_timeout_ms: Option<u64>,
    /// Server settings (answered to `workspace/configuration`).
    pub settings: Option<Value>,
    /// `initializationOptions`.
    pub init_options: Option<Value>,
    /// Extra environment variables.
    pub env: Option<BTreeMap<String, String>>,
    /// The project checker for `diagnostics "*"` (program and arguments).
    pub checker: Option<Vec<String>>,
    /// Seconds the project checker may run (default 300).
    pub checker_timeout_secs: Option<u64>,
    /// The least severe diagnostic reported on write: `error`, `warning` (the default),
    /// `information` or `hint`.
    pub min_severity: Option<crate::Severity>,
    /// The project's Python (relative to the workspace root, or absolute): the language
    /// servers, the checker and everyone else then use it (see `cc_workspace::python`).
    pub interpreter: Option<std::path::PathBuf>,
}

impl LspConfig {
    /// Checks what deserializing cannot: a new family has `command` and `extensions`, a
    /// command is not empty. The host calls it when it reads the section, so a broken one is
    /// reported as such ([`crate::ServerPool::broken`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.table().map(drop)
    }

    /// How many other files a write's check may look at (see [`LspConfig::dependents_limit`]).
    pub fn dependents_limit(&self) -> usize {
        self.dependents_limit.unwrap_or(DEFAULT_DEPENDENTS_LIMIT)
    }

    /// The project's Python as `[lsp.python] interpreter` names it (relative to the
    /// workspace root, or absolute): the host hands it to the debugger and the kernels too,
    /// so every mechanism runs the same interpreter.
    pub fn python_interpreter(&self) -> Option<&std::path::Path> {
        self.families
            .iter()
            .filter(|(name, _)| crate::table::canonical_family(name) == "python")
            .find_map(|(_, over)| over.interpreter.as_deref())
    }

    /// How long an unused server lives.
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs.unwrap_or(600))
    }

    /// The built-in table with these overrides applied.
    pub fn table(&self) -> Result<ServerTable, ConfigError> {
        let mut table = ServerTable::builtin();
        table.place = self.place.clone();
        for (name, over) in &self.families {
            let invalid = |message: String| ConfigError { message };
            if table.family(name).is_none() {
                let (Some(command), Some(extensions)) = (&over.command, &over.extensions) else {
                    let known: Vec<&str> = table.families.iter().map(|f| f.name.as_str()).collect();
                    return Err(invalid(format!(
                        "[lsp.{name}] is not a built-in family ({}); a new family needs both \
                         `command` and `extensions`",
                        known.join(", ")
                    )));
                };
                if command.is_empty() {
                    return Err(invalid(format!("[lsp.{name}] command is empty")));
                }
                table.families.push(Family {
                    name: name.clone(),
                    extensions: extensions.clone(),
                    markers: Vec::new(),
                    servers: vec![ServerSpec::new(name, command, &[])],
                    enabled: true,
                    language_ids: Vec::new(),
                    min_severity: crate::Severity::Warning,
                    interpreter: None,
                });
            }
            let family = table
                .family_mut(canonical_family(name))
                .ok_or_else(|| invalid(format!("[lsp.{name}]: family vanished")))?;
            apply(family, over).map_err(|message| invalid(format!("[lsp.{name}] {message}")))?;
        }
        Ok(table)
    }
}

fn apply(family: &mut Family, over: &FamilyOverride) -> Result<(), String> {
    if let Some(enabled) = over.enabled {
        family.enabled = enabled;
    }
    if let Some(min_severity) = over.min_severity {
        family.min_severity = min_severity;
    }
    if let Some(interpreter) = &over.interpreter {
        family.interpreter = Some(interpreter.clone());
    }
    if let Some(extensions) = &over.extensions {
        family.extensions = extensions
            .iter()
            .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
            .collect();
    }
    if let Some(markers) = &over.markers {
        family.markers = markers.clone();
    }
    if let Some(id) = &over.language_id {
        family.language_ids = family
            .extensions
            .iter()
            .map(|ext| (ext.clone(), id.clone()))
            .collect();
    }
    if let Some(command) = &over.command {
        let program = command.first().ok_or("command is empty")?;
        let name = over.name.clone().unwrap_or_else(|| {
            Path::new(program)
                .file_name()
                .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned())
        });
        // Keep what the built-in knew about the same server (settings, timing, checker).
        let base = family
            .servers
            .iter()
            .find(|s| s.name == name || s.command.first() == Some(program))
            .cloned()
            .unwrap_or_else(|| ServerSpec::new::<&str>(&name, &[], &[]));
        let probe = over.probe.clone().unwrap_or_else(|| {
            if base.command.first() == Some(program) && !base.probe.is_empty() {
                base.probe.clone()
            } else {
                vec![program.clone(), "--version".into()]
            }
        });
        family.servers = vec![ServerSpec {
            name,
            command: command.clone(),
            probe,
            versioned_binaries: false,
            ..base
        }];
    } else if let Some(probe) = &over.probe {
        for server in &mut family.servers {
            server.probe = probe.clone();
        }
    }
    for server in &mut family.servers {
        let timing = &mut server.timing;
        if let Some(ms) = over.settle_ms {
            timing.settle = Duration::from_millis(ms);
        }
        if let Some(ms) = over.quiet_ms {
            timing.quiet = (ms > 0).then(|| Duration::from_millis(ms));
        }
        if let Some(ms) = over.timeout_ms {
            timing.cap = Duration::from_millis(ms);
        }
        if let Some(ms) = over.indexing_timeout_ms {
            timing.indexing_cap = Duration::from_millis(ms);
        }
        if timing.indexing_cap < timing.cap {
            timing.indexing_cap = timing.cap;
        }
        if let Some(settings) = &over.settings {
            server.settings = settings.clone();
        }
        if let Some(options) = &over.init_options {
            server.init_options = options.clone();
        }
        if let Some(env) = &over.env {
            for (key, value) in env {
                server.env.retain(|(k, _)| k != key);
                server.env.push((key.clone(), value.clone()));
            }
        }
        if let Some(checker) = &over.checker {
            server.checker = Some(checker.clone());
        }
        if let Some(secs) = over.checker_timeout_secs {
            server.checker_timeout = Duration::from_secs(secs);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> Result<LspConfig, toml::de::Error> {
        let table: toml::Table = text.parse().unwrap();
        LspConfig::deserialize(table.get("lsp").unwrap().clone())
    }

    fn parse(text: &str) -> Result<ServerTable, ConfigError> {
        section(text)
            .map_err(|error| ConfigError {
                message: error.to_string(),
            })?
            .table()
    }

    #[test]
    fn command_override_replaces_candidates_and_keeps_known_settings() {
        let table = parse(
            "[lsp]\nidle_timeout_secs = 5\n[lsp.python]\ncommand = [\"pylsp\"]\nsettle_ms = 250\n\
             [lsp.python.settings.pylsp.plugins.pycodestyle]\nenabled = false\n",
        )
        .unwrap();
        let python = table.family("python").unwrap();
        assert_eq!(python.servers.len(), 1);
        let pylsp = &python.servers[0];
        assert_eq!(pylsp.name, "pylsp");
        assert_eq!(pylsp.probe, ["pylsp", "--version"]);
        assert_eq!(pylsp.timing.settle, Duration::from_millis(250));
        assert_eq!(
            pylsp.settings,
            serde_json::json!({"pylsp": {"plugins": {"pycodestyle": {"enabled": false}}}})
        );
    }

    #[test]
    fn aliases_new_families_and_mistakes() {
        let table = parse(
            "[lsp.cpp]\nenabled = false\n[lsp.zig]\ncommand = [\"zls\"]\nextensions = [\".zig\"]\n",
        )
        .unwrap();
        assert!(!table.family("c").unwrap().enabled);
        let zig = table.family("zig").unwrap();
        assert_eq!(zig.extensions, ["zig"]);
        assert_eq!(zig.servers[0].probe, ["zls", "--version"]);

        let error = parse("[lsp.pyhton]\nenabled = false\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a built-in family"), "{error}");
        let error = parse("[lsp.python]\ncomand = [\"x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown field `comand`"), "{error}");
    }

    /// The crate names no settings file: its messages point at the setting, in the file the
    /// host says the section is in, if it says one.
    #[test]
    fn messages_name_the_file_only_when_the_host_does() {
        let dir = tempfile::tempdir().unwrap();
        let turned_off = |config: &LspConfig| {
            let pool = crate::ServerPool::from_config(dir.path(), config).unwrap();
            pool.route(&dir.path().join("a.py")).unwrap_err().reason
        };
        let mut config = section("[lsp.python]\nenabled = false\n").unwrap();
        assert_eq!(
            turned_off(&config),
            "the python language server is turned off ([lsp.python] enabled = false)"
        );
        config.place = cc_workspace::SettingsPlace::new("lsp").in_file(".cc/tools.toml");
        assert_eq!(
            turned_off(&config),
            "the python language server is turned off in .cc/tools.toml ([lsp.python] enabled \
             = false)"
        );
    }

    #[test]
    fn an_invalid_section_is_reported_not_ignored() {
        let error = section("[lsp.python]\ncomand = 1\n").unwrap_err();
        let broken = cc_workspace::BrokenSection::new("lsp", error);
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::ServerPool::broken(dir.path(), broken);
        let error = pool.route(&dir.path().join("a.py")).unwrap_err().reason;
        assert!(error.contains("unknown field `comand`"), "{error}");
        assert!(error.contains("fix the [lsp] section"), "{error}");
    }

    #[test]
    fn validate_reports_what_deserializing_cannot() {
        let config = section("[lsp.go]\nquiet_ms = 0\n").unwrap();
        config.validate().unwrap();
        let error = section("[lsp.zig]\nenabled = true\n")
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a built-in family"), "{error}");
    }
}
