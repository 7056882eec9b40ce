//! Where the host keeps a crate's settings, and a section of them that could not be used.
//!
//! The lower crates never read a settings file and never name one: the host (`cc-harness`
//! reads `.cc/tools.toml`, an embedding host may read anything) says where a crate's
//! settings live with a [`SettingsPlace`], and the crate's messages point there
//! (`[lsp.python] enabled = false in .cc/tools.toml`). Without a file from the host they name
//! the setting alone (`[lsp.python] enabled = false`).
//!
//! The host deserializes each family's section into its typed struct; when a section does
//! not deserialize or validate, the family gets a [`BrokenSection`] instead. Every family
//! reports it the same way: its status shows it and each of its calls fails with it, so a
//! broken section neither hides the tool nor falls back to the defaults silently.

use std::fmt;

/// A section of the host's settings (`[lsp]`), and the file it is in when the host names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsPlace {
    section: String,
    file: Option<String>,
    reload: Option<String>,
}

impl SettingsPlace {
    /// The section `section` (`lsp`, `debug`, `kernel`), in no file the host named.
    pub fn new(section: impl Into<String>) -> Self {
        SettingsPlace {
            section: section.into(),
            file: None,
            reload: None,
        }
    }

    /// The same section, in the host's file `file` (as the user would write its path).
    #[must_use]
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// The same section, which the host applies again within a run when told `how` (`call
    /// \`lsp\` with action \`reload\``): what a message says to do after a fix.
    #[must_use]
    pub fn reloaded_by(mut self, how: impl Into<String>) -> Self {
        self.reload = Some(how.into());
        self
    }

    /// How the host applies the section again within a run, when it can.
    pub fn reload(&self) -> Option<&str> {
        self.reload.as_deref()
    }

    /// The section's name.
    pub fn section(&self) -> &str {
        &self.section
    }

    /// `" in <file>"`, or nothing when the host named no file.
    pub fn in_the_file(&self) -> String {
        self.file
            .as_ref()
            .map_or_else(String::new, |file| format!(" in {file}"))
    }

    /// The table of `entry` in the section (`[lsp.python]`), or the section's own (`[lsp]`).
    pub fn table(&self, entry: Option<&str>) -> String {
        match entry {
            Some(entry) => format!("[{}.{entry}]", self.section),
            None => format!("[{}]", self.section),
        }
    }

    /// "the [kernel] section of .cc/tools.toml", or "the [kernel] section" without a file.
    pub fn shown(&self) -> String {
        match &self.file {
            Some(file) => format!("the {} section of {file}", self.table(None)),
            None => format!("the {} section", self.table(None)),
        }
    }

    /// `setting` in `entry`'s table, and where that is: `[lsp.python] enabled = false in
    /// .cc/tools.toml`.
    pub fn setting(&self, entry: Option<&str>, setting: &str) -> String {
        format!("{} {setting}{}", self.table(entry), self.in_the_file())
    }
}

impl From<&str> for SettingsPlace {
    fn from(section: &str) -> Self {
        SettingsPlace::new(section)
    }
}

/// A section of the host's settings that could not be used, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenSection {
    /// Where the section is.
    pub place: SettingsPlace,
    /// What is wrong (the parser's or the validation's message).
    pub message: String,
    /// What makes the fix take effect; `None`: how the host reloads the section
    /// ([`SettingsPlace::reload`]), else starting the run again.
    pub then: Option<String>,
}

impl BrokenSection {
    /// A broken section at `place`; the fix takes effect when a run starts again.
    pub fn new(place: impl Into<SettingsPlace>, message: impl fmt::Display) -> Self {
        BrokenSection {
            place: place.into(),
            message: message.to_string().trim().to_owned(),
            then: None,
        }
    }

    /// Says what else makes the fix take effect (`call \`lsp reload\``).
    #[must_use]
    pub fn then(mut self, then: impl Into<String>) -> Self {
        self.then = Some(then.into());
        self
    }
}

impl fmt::Display for BrokenSection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.place.table(None);
        write!(
            f,
            "{table}{}: {}; fix the {table} section and ",
            self.place.in_the_file(),
            self.message
        )?;
        let then = self.then.as_deref().or(self.place.reload());
        match (then, &self.place.file) {
            (Some(then), _) => f.write_str(then),
            (None, Some(_)) => {
                f.write_str("start the run again (the file is read when a run starts)")
            }
            (None, None) => {
                f.write_str("start the run again (the settings are read when a run starts)")
            }
        }
    }
}

impl std::error::Error for BrokenSection {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_section_the_file_and_the_fix() {
        let place = SettingsPlace::new("debug").in_file(".cc/tools.toml");
        let broken = BrokenSection::new(place, "unknown key `ttl`\n");
        assert_eq!(
            broken.to_string(),
            "[debug] in .cc/tools.toml: unknown key `ttl`; fix the [debug] section and start \
             the run again (the file is read when a run starts)"
        );
        let broken = broken.then("call `lsp reload`");
        assert!(broken.to_string().ends_with("and call `lsp reload`"));
    }

    #[test]
    fn without_a_file_from_the_host_no_file_is_named() {
        let broken = BrokenSection::new("debug", "unknown key `ttl`");
        assert_eq!(
            broken.to_string(),
            "[debug]: unknown key `ttl`; fix the [debug] section and start the run again (the \
             settings are read when a run starts)"
        );
        let place = SettingsPlace::new("lsp");
        assert_eq!(
            place.setting(Some("python"), "enabled = false"),
            "[lsp.python] enabled = false"
        );
        assert_eq!(place.shown(), "the [lsp] section");
        let place = place.in_file(".cc/tools.toml");
        assert_eq!(place.shown(), "the [lsp] section of .cc/tools.toml");
        assert_eq!(
            place.setting(Some("python"), "enabled = false"),
            "[lsp.python] enabled = false in .cc/tools.toml"
        );
        assert_eq!(place.reload(), None);
        let place = place.reloaded_by("call `lsp reload`");
        assert_eq!(place.reload(), Some("call `lsp reload`"));
        assert_eq!(place.shown(), "the [lsp] section of .cc/tools.toml");
        // A broken section says how the host reloads it, unless told otherwise.
        let broken = BrokenSection::new(place, "unknown key `x`");
        assert!(
            broken.to_string().ends_with("and call `lsp reload`"),
            "{broken}"
        );
    }
}
