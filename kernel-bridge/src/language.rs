//! The interpreters a kernel can run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The interpreter a cell runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// CPython (`python3`, or the checkout's `.venv`/`venv` interpreter).
    #[default]
    Python,
    /// Node.js.
    #[serde(alias = "js")]
    Javascript,
}

impl Language {
    /// Both languages.
    pub const ALL: [Language; 2] = [Language::Python, Language::Javascript];

    /// `python` or `javascript`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Javascript => "javascript",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
