//! A section of the workspace's `.cc/tools.toml` that could not be used.
//!
//! The host (`cc-harness`, or an embedding host) reads the file once and hands each family
//! its section as a typed struct; when a section does not deserialize or validate, the
//! family gets a [`BrokenSection`] instead. Every family reports it the same way: its status
//! shows it and each of its calls fails with it, so a broken section neither hides the tool
//! nor falls back to the defaults silently.

/// A `[section]` of `.cc/tools.toml` that could not be used, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[{section}] in .cc/tools.toml: {message}; fix the [{section}] section and {then}")]
pub struct BrokenSection {
    /// The section's name (`lsp`, `debug`, `kernel`, `graph`).
    pub section: String,
    /// What is wrong (the parser's or the validation's message).
    pub message: String,
    /// What makes the fix take effect.
    pub then: String,
}

impl BrokenSection {
    /// A broken `section`; the fix takes effect when a run starts again.
    pub fn new(section: impl Into<String>, message: impl std::fmt::Display) -> Self {
        BrokenSection {
            section: section.into(),
            message: message.to_string().trim().to_owned(),
            then: "start the run again (the file is read when a run starts)".into(),
        }
    }

    /// Says what else makes the fix take effect (`call \`lsp reload\``).
    #[must_use]
    pub fn then(mut self, then: impl Into<String>) -> Self {
        self.then = then.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_section_the_file_and_the_fix() {
        let broken = BrokenSection::new("debug", "unknown key `ttl`\n");
        assert_eq!(
            broken.to_string(),
            "[debug] in .cc/tools.toml: unknown key `ttl`; fix the [debug] section and start \
             the run again (the file is read when a run starts)"
        );
        let broken = broken.then("call `lsp reload`");
        assert!(broken.to_string().ends_with("and call `lsp reload`"));
    }
}
