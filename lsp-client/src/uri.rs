//! `file://` URIs and paths.

use std::path::{Path, PathBuf};

/// The `file://` URI of an absolute path, percent-encoding everything but unreserved
/// characters and `/`.
pub fn path_to_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for byte in path.to_string_lossy().as_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(*byte))
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// [`path_to_uri`] as the typed `lsp_types::Uri`.
pub fn file_uri(path: &Path) -> lsp_types::Uri {
    #[allow(clippy::expect_used)]
    // Every byte outside the unreserved set and `/` is percent-encoded after `file://`, so
    // the string is always a valid URI.
    path_to_uri(path)
        .parse()
        .expect("a percent-encoded file URI parses")
}

/// [`uri_to_path`] of a typed URI.
pub fn uri_path(uri: &lsp_types::Uri) -> Option<PathBuf> {
    uri_to_path(uri.as_str())
}

/// The path of a `file://` URI (`None` for other schemes or bad encoding).
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x` both name `/x`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(decoded).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_spaces_and_unicode() {
        let path = Path::new("/tmp/a b/ünï.py");
        let uri = path_to_uri(path);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%BCn%C3%AF.py");
        assert_eq!(uri_to_path(&uri).unwrap(), path);
        assert_eq!(
            uri_to_path("file:///tmp/%c3%bc").unwrap(),
            Path::new("/tmp/ü")
        );
        assert_eq!(uri_to_path("untitled:Untitled-1"), None);
        assert_eq!(uri_path(&file_uri(path)).unwrap(), path);
    }

    proptest! {
        #[test]
        fn round_trips(name in "[^/\u{0}]{1,20}") {
            let path = PathBuf::from(format!("/root/{name}/x.rs"));
            prop_assert_eq!(uri_to_path(&path_to_uri(&path)), Some(path));
        }
    }
}
