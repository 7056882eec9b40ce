//! The host's own file tools, confined to the workspace root: `read`, `write`, `edit`,
//! `apply_patch`.
//!
//! `write` and `edit` report the paths they wrote, so the registry's diagnostics hook
//! (language servers) sees every change they make.

mod apply_patch;
mod atomic;
mod edit;
mod read;
mod write;

pub use apply_patch::ApplyPatchTool;
pub use atomic::write_atomically;
pub use edit::EditTool;
pub use read::ReadTool;
pub use write::WriteTool;

use std::path::Path;

use crate::error::{kinds, ToolError};

/// Reads a file that must be UTF-8 text, with errors an agent can act on.
pub(crate) fn read_text(path: &Path, shown: &str) -> Result<String, ToolError> {
    if path.is_dir() {
        return Err(ToolError::new(
            "is_directory",
            format!("`{shown}` is a directory; give the path of a file"),
        ));
    }
    let bytes = std::fs::read(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::new(kinds::NOT_FOUND, format!("`{shown}` does not exist"))
        }
        _ => ToolError::io("read", shown, &error),
    })?;
    String::from_utf8(bytes).map_err(|error| {
        ToolError::new(
            "not_text",
            format!(
                "`{shown}` is not UTF-8 text (invalid byte at offset {}); it looks binary",
                error.utf8_error().valid_up_to()
            ),
        )
    })
}
