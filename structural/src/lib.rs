//! Structural search and staged rewrite over tree-sitter grammars.
//!
//! See `README.md`.

pub mod builtin;
pub mod find;
pub mod language;
pub mod matcher;
pub mod meta;
pub mod node;
pub mod pattern;
pub mod rewrite;
pub mod search;
pub mod template;
pub mod transaction;

pub use builtin::Languages;
pub use find::{Captured, FileMatches, Match, ParseError, Position, SourceParser};
pub use language::{ContextKind, Language, Scaffold};
pub use pattern::{Attempt, Pattern, PatternError};
pub use rewrite::{stage_rewrite, RewriteError, StagedFile, StagedRewrite, Warning, WarningKind};
pub use search::{search, CapturedText, FoundMatch, SearchError, SearchOptions, SearchResult, Skipped};
pub use template::{Template, TemplateError};
pub use transaction::{CommitError, FaultInjector, FileOp, NoFaults, Transaction};
