//! The `[graph]` section of `.cc/tools.toml`.
//!
//! ```toml
//! [graph]
//! cache_dir = "/var/cache/cc-graph"   # default: $XDG_CACHE_HOME/cc/graph, else ~/.cache/cc/graph
//! max_file_bytes = 2097152            # larger files are not indexed (counted)
//! threads = 2                          # default: the machine's cores
//! ```

use std::path::{Path, PathBuf};

use crate::index::GraphError;

/// Files over this size are not indexed by default (2 MiB: generated code, not written).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// How the graph is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphConfig {
    /// The folder holding one index per workspace root.
    pub cache_dir: PathBuf,
    pub max_file_bytes: u64,
    /// Worker threads for walking, extracting and resolving; 0: the machine's cores.
    pub threads: usize,
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            cache_dir: default_cache_dir(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: 0,
        }
    }
}

/// `$XDG_CACHE_HOME/cc/graph`, else `$HOME/.cache/cc/graph`, else the temporary folder's.
pub fn default_cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("cc").join("graph")
}

impl GraphConfig {
    /// The `[graph]` section of `ROOT/.cc/tools.toml`, or the defaults when there is none.
    pub fn from_workspace(root: &Path) -> Result<GraphConfig, GraphError> {
        let path = root.join(".cc").join("tools.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GraphConfig::default()),
            Err(e) => {
                return Err(GraphError::Config(format!(
                    "cannot read {}: {e}",
                    path.display()
                )))
            }
        };
        let value: toml::Table = text
            .parse()
            .map_err(|e| GraphError::Config(format!("{}: {e}", path.display())))?;
        GraphConfig::from_section(value.get("graph"))
    }

    /// The configuration a `[graph]` table gives (`None`: the defaults).
    pub fn from_section(section: Option<&toml::Value>) -> Result<GraphConfig, GraphError> {
        let mut config = GraphConfig::default();
        let Some(section) = section else {
            return Ok(config);
        };
        let table = section
            .as_table()
            .ok_or_else(|| GraphError::Config("[graph] must be a table".into()))?;
        for (key, value) in table {
            match key.as_str() {
                "cache_dir" => {
                    let dir = value
                        .as_str()
                        .ok_or_else(|| GraphError::Config("cache_dir must be a string".into()))?;
                    config.cache_dir = PathBuf::from(dir);
                }
                "max_file_bytes" => {
                    config.max_file_bytes = value
                        .as_integer()
                        .and_then(|v| u64::try_from(v).ok())
                        .filter(|v| *v > 0)
                        .ok_or_else(|| {
                            GraphError::Config("max_file_bytes must be a positive integer".into())
                        })?;
                }
                "threads" => {
                    config.threads = value
                        .as_integer()
                        .and_then(|v| usize::try_from(v).ok())
                        .ok_or_else(|| {
                            GraphError::Config("threads must be a non-negative integer".into())
                        })?;
                }
                other => {
                    return Err(GraphError::Config(format!(
                        "unknown key `{other}`; use cache_dir, max_file_bytes, threads"
                    )))
                }
            }
        }
        Ok(config)
    }

    /// Worker threads to use.
    pub fn threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        }
    }

    /// Where the index of `root` (canonical) lives: one folder per root, named after its last
    /// component and a hash of the whole path.
    pub fn index_path(&self, root: &Path) -> PathBuf {
        let text = root.to_string_lossy();
        let digest = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let tail: String = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".into())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        self.cache_dir
            .join(format!("{tail}-{digest:016x}"))
            .join("index.sqlite")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_read_and_checked() {
        let section: toml::Table = "cache_dir = \"/tmp/x\"\nmax_file_bytes = 10"
            .parse()
            .unwrap();
        let config = GraphConfig::from_section(Some(&toml::Value::Table(section))).unwrap();
        assert_eq!(config.cache_dir, PathBuf::from("/tmp/x"));
        assert_eq!(config.max_file_bytes, 10);
        let bad: toml::Table = "cache = 1".parse().unwrap();
        let err = GraphConfig::from_section(Some(&toml::Value::Table(bad))).unwrap_err();
        assert!(err.to_string().contains("unknown key `cache`"), "{err}");
        let a = config.index_path(Path::new("/a/proj"));
        let b = config.index_path(Path::new("/b/proj"));
        assert_ne!(a, b);
        assert!(a.starts_with("/tmp/x"));
    }
}
