//! Tiers (what a tool can do) and surfaces (who is looking).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a tool may do to the world. The tier decides which surfaces see a tool at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// No side effect.
    Read,
    /// Changes files.
    Write,
    /// Starts or controls a process.
    Exec,
}

impl Tier {
    /// The lower-case name used in schemas and errors.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Write => "write",
            Tier::Exec => "exec",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who the tool list is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// The main agent: every tier.
    #[default]
    Full,
    /// Plan mode: read tier only.
    Plan,
    /// A read-only subagent: read tier only.
    ReadonlySubagent,
}

impl Surface {
    /// All surfaces, for listings and tests.
    pub const ALL: [Surface; 3] = [Surface::Full, Surface::Plan, Surface::ReadonlySubagent];

    /// Whether a tool of `tier` is visible (and callable) on this surface.
    pub fn allows(self, tier: Tier) -> bool {
        match self {
            Surface::Full => true,
            Surface::Plan | Surface::ReadonlySubagent => tier == Tier::Read,
        }
    }

    /// The snake-case name used on the command line and in errors.
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Full => "full",
            Surface::Plan => "plan",
            Surface::ReadonlySubagent => "readonly_subagent",
        }
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for an unknown surface name.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown surface `{0}`; expected one of: full, plan, readonly_subagent")]
pub struct UnknownSurface(pub String);

impl FromStr for Surface {
    type Err = UnknownSurface;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(Surface::Full),
            "plan" => Ok(Surface::Plan),
            "readonly_subagent" | "readonly-subagent" => Ok(Surface::ReadonlySubagent),
            other => Err(UnknownSurface(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_surfaces_see_read_tier_only() {
        for surface in [Surface::Plan, Surface::ReadonlySubagent] {
            assert!(surface.allows(Tier::Read));
            assert!(!surface.allows(Tier::Write));
            assert!(!surface.allows(Tier::Exec));
        }
        assert!(Surface::Full.allows(Tier::Exec));
    }

    #[test]
    fn surface_names_round_trip() {
        for surface in Surface::ALL {
            assert_eq!(surface.as_str().parse::<Surface>().unwrap(), surface);
        }
        assert!("admin".parse::<Surface>().is_err());
    }
}
