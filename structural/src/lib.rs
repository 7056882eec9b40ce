//! Structural search and staged rewrite over tree-sitter grammars.
//!
//! Filled in by the structural search issue; see `README.md`.
