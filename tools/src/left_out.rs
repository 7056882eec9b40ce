//! What ignore rules left out of a search or of the index, said the same way everywhere:
//! `left_out_by_ignore: {files, capped, rules: [{file, files}]}` and one line of text, so a
//! zero is never silent.

use std::path::Path;

use cc_workspace::walk::LeftOut;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What ignore rules left out, rule files relative to the root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LeftOutReport {
    /// Every file left out.
    pub files: usize,
    /// The count stopped at the walk's bound: there may be more.
    pub capped: bool,
    /// Per rule file, most files first.
    pub rules: Vec<RuleCount>,
}

/// The files one ignore file left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuleCount {
    /// The ignore file, relative to the root.
    pub file: String,
    /// How many files its rules left out.
    pub files: usize,
}

impl LeftOutReport {
    /// `left_out`, rule files relative to `root`.
    pub fn new(root: &Path, left_out: &LeftOut) -> Self {
        LeftOutReport {
            files: left_out.files,
            capped: left_out.capped,
            rules: left_out
                .by_rule
                .iter()
                .map(|(file, files)| RuleCount {
                    file: file
                        .strip_prefix(root)
                        .unwrap_or(file)
                        .to_string_lossy()
                        .into_owned(),
                    files: *files,
                })
                .collect(),
        }
    }

    /// `N file(s) <what>, left out by ignore rules: 2 by .gitignore` (the first five rules).
    pub fn line(&self, what: &str) -> String {
        let by: Vec<String> = self
            .rules
            .iter()
            .take(5)
            .map(|rule| format!("{} by {}", rule.files, rule.file))
            .collect();
        format!(
            "{}{} file(s) {what}, left out by ignore rules: {}",
            if self.capped { "at least " } else { "" },
            self.files,
            by.join(", ")
        )
    }
}
