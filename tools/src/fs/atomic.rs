//! Replacing a file's content without ever leaving it half-written.

use std::io::Write;
use std::path::Path;

/// Writes `content` to `path` through a temporary file in the same directory, fsynced and
/// renamed over the target, keeping an existing file's permissions. Parent directories are
/// created as needed. Returns whether the file was created.
pub fn write_atomically(path: &Path, content: &[u8]) -> std::io::Result<bool> {
    let parent = path
        .parent()
        .ok_or_else(|| std::io::Error::other("a file path needs a parent directory"))?;
    std::fs::create_dir_all(parent)?;
    let existing = std::fs::metadata(path).ok();
    let mut temp = tempfile::Builder::new()
        .prefix(".cc-write-")
        .tempfile_in(parent)?;
    temp.write_all(content)?;
    temp.as_file().sync_all()?;
    if let Some(meta) = &existing {
        std::fs::set_permissions(temp.path(), meta.permissions())?;
    }
    temp.persist(path).map_err(|error| error.error)?;
    Ok(existing.is_none())
}
