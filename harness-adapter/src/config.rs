//! `.cc/tools.toml` at the workspace root: per-family overrides (`[lsp]`, `[debug]`,
//! `[workers]`). Each family's crate owns the shape of its section.

use std::path::Path;

/// The parsed file; sections are handed to their families as raw TOML tables.
#[derive(Debug, Clone, Default)]
pub struct ToolsConfig {
    /// The raw document (empty when the file is absent).
    pub table: toml::Table,
}

/// Why `.cc/tools.toml` could not be used.
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
}

impl ToolsConfig {
    /// Reads `<root>/.cc/tools.toml`; an absent file is an empty configuration.
    pub fn load(root: &Path) -> Result<Self, ConfigError> {
        let path = root.join(".cc").join("tools.toml");
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ToolsConfig::default())
            }
            Err(source) => {
                return Err(ConfigError::Read {
                    path: shown,
                    source,
                })
            }
        };
        let table = text
            .parse::<toml::Table>()
            .map_err(|error| ConfigError::Parse {
                path: shown,
                message: error.to_string(),
            })?;
        Ok(ToolsConfig { table })
    }

    /// The section `name` (`lsp`, `debug`, `workers`), if present.
    pub fn section(&self, name: &str) -> Option<&toml::Value> {
        self.table.get(name)
    }
}
