//! The host's own file tools, confined to the workspace root: `read`, `write`, `edit`,
//! `apply_patch`.
//!
//! Every file operation goes through the confinement layer ([`cc_workspace::Workspace`],
//! beneath the root's directory handle), so a symlink swapped in after a path was checked
//! cannot lead a read or a write outside. Sizes are bounded ([`FileLimits`]): `read` streams
//! and stops at a byte cap, `edit`, `write` and `apply_patch` refuse files over a cap, and
//! named pipes, devices and sockets are refused before a byte is read. `write`, `edit` and
//! `apply_patch` report the paths they wrote, so the registry's diagnostics hook (language
//! servers) sees every change they make.

mod apply_patch;
mod edit;
mod read;
mod write;

pub use apply_patch::ApplyPatchTool;
pub use edit::EditTool;
pub use read::ReadTool;
pub use write::WriteTool;

use std::path::Path;

use cc_workspace::FileKind;

use crate::error::{ErrorKind, ToolError};
use crate::root::WorkspaceRoot;

/// Size bounds of the file tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimits {
    /// Content bytes one `read` returns at most (default 256 KiB).
    pub read_bytes: usize,
    /// Bytes of one line `read` returns before cutting it (default 16 KiB).
    pub line_bytes: usize,
    /// Bytes one `read` may go through at most, to skip to its offset and count lines
    /// (default 16 MiB); past it the total line count is unknown.
    pub scan_bytes: u64,
    /// The largest file `edit` and `apply_patch` change and `write` writes (default 16 MiB).
    pub edit_bytes: u64,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            read_bytes: 256 * 1024,
            line_bytes: 16 * 1024,
            scan_bytes: 16 * 1024 * 1024,
            edit_bytes: 16 * 1024 * 1024,
        }
    }
}

/// `not_a_regular_file` for `shown`, which is `kind`.
pub(crate) fn not_regular(shown: &str, kind: FileKind) -> ToolError {
    if kind == FileKind::Directory {
        return ToolError::new(
            ErrorKind::IsDirectory,
            format!("`{shown}` is a directory; give the path of a file"),
        );
    }
    ToolError::new(
        ErrorKind::NotARegularFile,
        format!(
            "`{shown}` is {}, not a regular file; reading it could block or never end, so it \
             is refused",
            kind.describe()
        ),
    )
    .with_detail("path", shown)
}

/// `too_large` for `shown` of `size` bytes.
pub(crate) fn too_large(shown: &str, size: u64, cap: u64, what: &str) -> ToolError {
    ToolError::new(
        ErrorKind::TooLarge,
        format!(
            "`{shown}` is {size} bytes, over the {cap}-byte cap for {what}; change it in \
             smaller pieces or with another tool"
        ),
    )
    .with_detail("path", shown)
    .with_detail("bytes", size)
    .with_detail("cap", cap)
}

/// Opens a regular file beneath the root; `None` if it does not exist. Anything else
/// (a FIFO, a device, a socket, a directory) is refused without blocking.
pub(crate) fn open_regular(
    root: &WorkspaceRoot,
    path: &Path,
    shown: &str,
) -> Result<Option<std::fs::File>, ToolError> {
    let ws = root.workspace();
    match ws.open(path) {
        Ok((file, FileKind::Regular)) => Ok(Some(file)),
        Ok((_, kind)) => Err(not_regular(shown, kind)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        // A socket cannot be opened at all (ENXIO): say what it is.
        Err(error) => match ws.kind(path) {
            Ok(kind) if kind != FileKind::Regular => Err(not_regular(shown, kind)),
            _ => Err(root.io_error("read", shown, &error)),
        },
    }
}

/// Reads a regular file, at most `cap` bytes, beneath the root; `None` if it does not exist.
pub(crate) fn read_bytes(
    root: &WorkspaceRoot,
    path: &Path,
    shown: &str,
    cap: u64,
    what: &str,
) -> Result<Option<Vec<u8>>, ToolError> {
    let Some(file) = open_regular(root, path, shown)? else {
        return Ok(None);
    };
    let io = |error: std::io::Error| root.io_error("read", shown, &error);
    let size = file.metadata().map_err(io)?.len();
    if size > cap {
        return Err(too_large(shown, size, cap, what));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // The file may grow meanwhile: read one byte past the cap to notice.
    std::io::Read::read_to_end(&mut std::io::Read::take(file, cap + 1), &mut bytes).map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(shown, bytes.len() as u64, cap, what));
    }
    Ok(Some(bytes))
}

/// Reads a file that must exist and be UTF-8 text, with errors an agent can act on.
pub(crate) fn read_text(
    root: &WorkspaceRoot,
    path: &Path,
    shown: &str,
    cap: u64,
) -> Result<String, ToolError> {
    let bytes = read_bytes(root, path, shown, cap, "editing")?
        .ok_or_else(|| ToolError::new(ErrorKind::NotFound, format!("`{shown}` does not exist")))?;
    String::from_utf8(bytes).map_err(|error| {
        ToolError::new(
            ErrorKind::NotText,
            format!(
                "`{shown}` is not UTF-8 text (invalid byte at offset {}); it looks binary",
                error.utf8_error().valid_up_to()
            ),
        )
    })
}
