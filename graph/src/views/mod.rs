//! Answers shaped for reading, over the index's queries: a symbol search filtered by kind and
//! language and ordered by match then PageRank ([`search`]), a file's outline as a tree
//! ([`outline`]), and the repo map, the most important definitions within a token budget
//! ([`repo_map`]). The tool layer turns them into its reports; a Rust host gets them here.

pub mod outline;
pub mod repo_map;
pub mod search;
