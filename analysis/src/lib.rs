//! Analyses that combine the mechanisms below the tool layer: the parsers of structural
//! search ([`cc_structural`]), the language servers ([`cc_lsp_client`]) and the code graph
//! ([`cc_graph`]). A Rust host that takes those crates gets these answers as typed values,
//! without the tool layer:
//!
//! - [`dependents`]: which other files a write can break (the candidates whose diagnostics
//!   are collected with the written file's), from the changed definitions' names, the files'
//!   import lines ([`importers`]) or the code graph's impact;
//! - [`scan`]: which files mention a name as a whole word, and where it occurs in each, told
//!   apart into code, comments and strings by the file's own grammar (what a complete rename
//!   checks it left nothing behind with);
//! - [`enclosing`]: the definition a place lies in (a reference's caller);
//! - [`rename_scope`]: what makes a server's rename complete: the files that mention the old
//!   name opened in the server first, and after its edit every occurrence left behind
//!   classified (confirmed by the server as the symbol and added, another symbol, a comment
//!   or a string, code the server reports inactive, a file of another project);
//! - [`rename`]: a complete rename through a language server, planned as file changes (the
//!   server's rename or references, or the Kotlin compiler's uses, completed by the scan), with
//!   typed refusals;
//! - [`inactive`]: code a language server reports inactive for this build configuration;
//! - [`kotlin_rename`]: a Kotlin declaration renamed where the Kotlin compiler resolves its
//!   uses (JDT LS reads Kotlin by name only);
//! - [`write_check`]: what a write broke: the new diagnostics of the written files and their
//!   dependents against the run's ledger of what each file already reported, with the baselines
//!   taken again after changes made outside the run;
//! - [`verification`]: the code graph's `callers` and `impact` edges confirmed or refuted by
//!   a language server's references.
//!
//! ```
//! use cc_analysis::dependents::{self, Change};
//! use cc_analysis::scan::{self, Place};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = tempfile::tempdir()?;
//! let lib = root.path().join("shapes.py");
//! let old = "def area(side):\n    return side * side\n";
//! let new = "def area(side, scale):\n    return side * side * scale\n";
//! std::fs::write(&lib, new)?;
//! std::fs::write(
//!     root.path().join("report.py"),
//!     "from shapes import area\n\n# area of the unit square\nprint(area(1))\n",
//! )?;
//!
//! // `area`'s signature changed: report.py, which calls it, is a dependent.
//! let change = Change { path: &lib, old: Some(old), new: Some(new) };
//! let found = dependents::find(root.path(), &["py".to_owned()], &[change], 10);
//! assert_eq!(found.names, ["area"]);
//! assert_eq!(found.files, [root.path().join("report.py")]);
//!
//! // Its occurrences there: two in code, one in a comment.
//! let text = std::fs::read(root.path().join("report.py"))?;
//! let places: Vec<Place> = scan::occurrences(&root.path().join("report.py"), &text, "area")
//!     .into_iter()
//!     .map(|o| o.place)
//!     .collect();
//! assert_eq!(places, [Place::Code, Place::Comment, Place::Code]);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod dependents;
pub mod enclosing;
pub mod importers;
pub mod inactive;
pub mod kotlin_rename;
pub mod rename;
pub mod rename_scope;
pub mod scan;
pub mod verification;
pub mod write_check;
