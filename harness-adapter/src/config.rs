//! `.cc/tools.toml` at the workspace root, read here and nowhere else: each section is
//! deserialized into its family's typed configuration (`[lsp]` → [`LspConfig`], `[debug]` →
//! [`DebugConfig`], `[kernel]` → [`KernelOverrides`], `[graph]` → [`GraphConfig`],
//! `[structural]`, `[workers]`, `[questions]`) and handed down by [`crate::wiring`]. The
//! crates below `cc-tools` never open the file.
//!
//! A section a family owns that does not deserialize or validate becomes a
//! [`BrokenSection`]: the family's tool stays, its status shows the error and its calls fail
//! with it (the defaults are not used silently). A file that is not TOML, and a broken
//! `[workers]` or `[questions]` section, stop the setup instead.

use std::path::Path;
use std::time::Duration;

use cc_dap_client::DebugConfig;
use cc_graph::GraphConfig;
use cc_kernel_bridge::KernelOverrides;
use cc_lsp_client::LspConfig;
use cc_tools::settings_place;
use cc_workspace::BrokenSection;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::workers::WorkersSection;

/// The parsed file, one typed value per section (absent sections are the defaults).
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// `[lsp]`: the language-server table's overrides.
    pub lsp: Result<LspConfig, BrokenSection>,
    /// `[debug]`: debug adapters and their timeouts.
    pub debug: Result<DebugConfig, BrokenSection>,
    /// `[kernel]`: interpreters and limits of `eval`'s kernels.
    pub kernel: Result<KernelOverrides, BrokenSection>,
    /// `[graph]`: where and how the code graph is kept.
    pub graph: Result<GraphConfig, BrokenSection>,
    /// `[structural]`: the tree cache of `ast_grep`.
    pub structural: Result<StructuralSection, BrokenSection>,
    /// `[workers]`: the `vibe_*` worker commands, when configured.
    pub workers: Option<WorkersSection>,
    /// `[questions] timeout_seconds`: how long `ask_user` waits.
    pub question_timeout: Option<Duration>,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            lsp: Ok(LspConfig {
                place: settings_place("lsp"),
                ..LspConfig::default()
            }),
            debug: Ok(DebugConfig {
                place: settings_place("debug"),
                ..DebugConfig::default()
            }),
            kernel: Ok(KernelOverrides::default()),
            graph: Ok(GraphConfig::default()),
            structural: Ok(StructuralSection::default()),
            workers: None,
            question_timeout: None,
        }
    }
}

/// The `[structural]` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StructuralSection {
    /// The memory budget of `ast_grep`'s tree cache (estimated, MiB; default 256, 0 keeps
    /// no trees).
    pub tree_cache_mb: Option<u64>,
}

impl StructuralSection {
    /// The budget in bytes, when one is set.
    pub fn tree_cache_bytes(&self) -> Option<usize> {
        let mb = usize::try_from(self.tree_cache_mb?).unwrap_or(usize::MAX);
        Some(mb.saturating_mul(1024 * 1024))
    }
}

/// The `[questions]` section: how long `ask_user` waits for a human.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionsSection {
    /// Seconds before an unanswered question times out (default 600).
    timeout_seconds: Option<f64>,
}

/// Why `.cc/tools.toml` could not be used at all.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("could not read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{path} is not valid TOML: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// A section the harness itself needs does not have the expected shape.
    #[error("section [{section}] of .cc/tools.toml: {message}")]
    Section {
        /// The section.
        section: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl ToolsConfig {
    /// Reads `<root>/.cc/tools.toml`; an absent file is an empty configuration.
    pub fn load(root: &Path) -> Result<Self, ConfigError> {
        let table = read_table(root)?;
        let workers = match table.get("workers") {
            Some(section) => Some(WorkersSection::deserialize(section.clone()).map_err(
                |error| ConfigError::Section {
                    section: "workers",
                    message: error.to_string(),
                },
            )?),
            None => None,
        };
        let questions: QuestionsSection =
            typed(&table, "questions").map_err(|message| ConfigError::Section {
                section: "questions",
                message,
            })?;
        let question_timeout = match questions.timeout_seconds {
            Some(seconds) if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 => {
                Some(Duration::from_secs_f64(seconds))
            }
            Some(seconds) => {
                return Err(ConfigError::Section {
                    section: "questions",
                    message: format!("timeout_seconds must be a positive number, got {seconds}"),
                })
            }
            None => None,
        };
        Ok(ToolsConfig {
            lsp: lsp_section(&table),
            debug: typed(&table, "debug")
                .map(|debug| DebugConfig {
                    place: settings_place("debug"),
                    ..debug
                })
                .map_err(|message| BrokenSection::new(settings_place("debug"), message)),
            kernel: typed(&table, "kernel")
                .map_err(|message| BrokenSection::new(settings_place("kernel"), message)),
            graph: typed(&table, "graph")
                .map_err(|message| BrokenSection::new(settings_place("graph"), message)),
            structural: typed(&table, "structural")
                .map_err(|message| BrokenSection::new(settings_place("structural"), message)),
            workers,
            question_timeout,
        })
    }

    /// The `[lsp]` section of `<root>/.cc/tools.toml` as it is now (what `lsp reload`
    /// hands the language servers); a file that cannot be read or parsed is reported as a
    /// broken `[lsp]` section.
    pub fn reload_lsp(root: &Path) -> Result<LspConfig, BrokenSection> {
        let table = read_table(root).map_err(|error| {
            BrokenSection::new(settings_place("lsp"), error)
                .then(format!("{} again", cc_tools::LSP_RELOAD))
        })?;
        lsp_section(&table).map_err(|broken| broken.then(format!("{} again", cc_tools::LSP_RELOAD)))
    }
}

fn read_table(root: &Path) -> Result<toml::Table, ConfigError> {
    let path = root.join(".cc").join("tools.toml");
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(ConfigError::Read {
                path: shown,
                source,
            })
        }
    };
    text.parse::<toml::Table>()
        .map_err(|error| ConfigError::Parse {
            path: shown,
            message: error.to_string(),
        })
}

/// The section `name` as a `T` (absent: the default), or the deserializer's message.
fn typed<T: DeserializeOwned + Default>(table: &toml::Table, name: &str) -> Result<T, String> {
    match table.get(name) {
        None => Ok(T::default()),
        Some(section) => section
            .clone()
            .try_into()
            .map_err(|error: toml::de::Error| error.to_string()),
    }
}

/// `[lsp]`, deserialized and validated (a new family needs `command` and `extensions`).
fn lsp_section(table: &toml::Table) -> Result<LspConfig, BrokenSection> {
    let broken = |message: String| {
        BrokenSection::new(
            settings_place("lsp"),
            format!("{message}; see lsp-client/README.md for the format"),
        )
    };
    let mut config: LspConfig = typed(table, "lsp").map_err(broken)?;
    config.validate().map_err(|error| broken(error.message))?;
    config.place = settings_place("lsp");
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<ToolsConfig, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".cc")).unwrap();
        std::fs::write(dir.path().join(".cc/tools.toml"), text).unwrap();
        ToolsConfig::load(dir.path())
    }

    #[test]
    fn sections_become_typed_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let config = ToolsConfig::load(dir.path()).unwrap();
        // The defaults, with where the section is for the messages that name a setting.
        assert_eq!(
            config.lsp.unwrap(),
            LspConfig {
                place: settings_place("lsp"),
                ..LspConfig::default()
            }
        );
        let config = load(
            "[lsp.go]\nquiet_ms = 0\n[debug]\nttl_seconds = 5\n[graph]\nthreads = 2\n\
             [structural]\ntree_cache_mb = 1\n[kernel]\noutput_cap_bytes = 10\n",
        )
        .unwrap();
        let lsp = config.lsp.unwrap();
        assert_eq!(
            lsp.table().unwrap().family("go").unwrap().servers[0]
                .timing
                .quiet,
            None
        );
        assert_eq!(config.debug.unwrap().ttl_seconds, Some(5.0));
        assert_eq!(config.graph.unwrap().threads, 2);
        assert_eq!(config.kernel.unwrap().output_cap_bytes, Some(10));
        assert_eq!(
            config.structural.unwrap().tree_cache_bytes(),
            Some(1024 * 1024)
        );
    }

    #[test]
    fn broken_sections_are_kept_per_family_and_the_rest_still_loads() {
        let config = load(
            "[lsp.pyhton]\nenabled = false\n[debug]\nttl = 5\n[graph]\ncache = 1\n\
             [kernel]\npyhton = \"x\"\n[structural]\ntree_cache_mb = -1\n",
        )
        .unwrap();
        let lsp = config.lsp.unwrap_err();
        assert!(lsp.message.contains("not a built-in family"), "{lsp}");
        assert!(lsp.to_string().contains("call `lsp reload`"), "{lsp}");
        for (broken, needle) in [
            (config.debug.unwrap_err(), "unknown key `ttl`"),
            (config.graph.unwrap_err(), "unknown key `cache`"),
            (config.kernel.unwrap_err(), "pyhton"),
            // Like every section, not replaced by the defaults.
            (config.structural.unwrap_err(), "-1"),
        ] {
            assert!(broken.message.contains(needle), "{broken}");
        }
        let typo = load("[structural]\ntree_cache = 1\n").unwrap();
        let broken = typo.structural.unwrap_err();
        assert!(
            broken.message.contains("unknown field `tree_cache`"),
            "{broken}"
        );
        let error = load("[lsp\n").unwrap_err().to_string();
        assert!(error.contains("tools.toml"), "{error}");
        let error = load("[workers]\nfats = 1\n").unwrap_err().to_string();
        assert!(error.contains("section [workers]"), "{error}");
    }
}
