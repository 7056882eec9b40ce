//! The `[graph]` section of `.cc/tools.toml`.
//!
//! ```toml
//! [graph]
//! cache_dir = "/var/cache/cc-graph"   # default: $XDG_CACHE_HOME/cc/graph, else ~/.cache/cc/graph
//! max_file_bytes = 2097152            # larger files are not indexed (counted)
//! threads = 2                          # default: the machine's cores
//! precise = false                      # no compiler-grade indexers (default: on)
//! ```
//!
//! This crate does not read the file: the host deserializes the section into [`GraphConfig`]
//! (it is `serde::Deserialize`, and checks every key as it does) and hands it over.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

/// Files over this size are not indexed by default (2 MiB: generated code, not written).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// How the graph is kept.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct GraphConfig {
    /// The folder holding one index per workspace root.
    pub cache_dir: PathBuf,
    /// Files larger than this many bytes are not indexed (counted as too large).
    pub max_file_bytes: u64,
    /// Worker threads for walking, extracting and resolving; 0: the machine's cores.
    pub threads: usize,
    /// Whether the precise tier's indexers run ([`crate::precise`]).
    pub precise: bool,
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            cache_dir: default_cache_dir(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: 0,
            precise: true,
        }
    }
}

/// `$XDG_CACHE_HOME/cc/graph`, else `$HOME/.cache/cc/graph`, else the temporary folder's.
pub fn default_cache_dir() -> PathBuf {
    cc_workspace::cache_dir().join("graph")
}

// The section is taken as a map of values so that every key is checked here, with messages
// that list what is expected.
impl TryFrom<Map<String, Value>> for GraphConfig {
    type Error = String;

    fn try_from(table: Map<String, Value>) -> Result<Self, Self::Error> {
        let mut config = GraphConfig::default();
        for (key, value) in table {
            match key.as_str() {
                "cache_dir" => {
                    let dir = value.as_str().ok_or("cache_dir must be a string")?;
                    config.cache_dir = PathBuf::from(dir);
                }
                "max_file_bytes" => {
                    config.max_file_bytes = value
                        .as_u64()
                        .filter(|v| *v > 0)
                        .ok_or("max_file_bytes must be a positive integer")?;
                }
                "threads" => {
                    config.threads = value
                        .as_u64()
                        .and_then(|v| usize::try_from(v).ok())
                        .ok_or("threads must be a non-negative integer")?;
                }
                "precise" => {
                    config.precise = value.as_bool().ok_or("precise must be true or false")?;
                }
                other => {
                    return Err(format!(
                        "unknown key `{other}`; use cache_dir, max_file_bytes, threads, precise"
                    ))
                }
            }
        }
        Ok(config)
    }
}

impl GraphConfig {
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
        let section: toml::Table = "cache_dir = \"/tmp/x\"\nmax_file_bytes = 10\nprecise = false"
            .parse()
            .unwrap();
        let config = GraphConfig::deserialize(toml::Value::Table(section)).unwrap();
        assert!(!config.precise);
        assert_eq!(config.cache_dir, PathBuf::from("/tmp/x"));
        assert_eq!(config.max_file_bytes, 10);
        let bad: toml::Table = "cache = 1".parse().unwrap();
        let err = GraphConfig::deserialize(toml::Value::Table(bad)).unwrap_err();
        assert!(err.to_string().contains("unknown key `cache`"), "{err}");
        let a = config.index_path(Path::new("/a/proj"));
        let b = config.index_path(Path::new("/b/proj"));
        assert_ne!(a, b);
        assert!(a.starts_with("/tmp/x"));
    }
}
