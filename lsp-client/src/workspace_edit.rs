//! Turning an LSP `WorkspaceEdit` into the net change of each file, computed against the
//! files as they are on disk now, before anything is written.
//!
//! Both shapes are read: `changes` (URI → text edits) and `documentChanges` (text document
//! edits with versions, and `create` / `rename` / `delete` file operations, applied in
//! order). The result is what a file transaction needs: each existing file's bytes now and
//! after; each created, renamed or deleted file or folder, with the bytes that must still be
//! there when the change is committed.
//!
//! Text edits are folded into the operation they follow (a created file holds its final
//! text; a renamed file carries its new text), so each path is touched once. Two sequences
//! are refused rather than guessed at: an operation on a path that an earlier operation of
//! the same edit created, moved or deleted (except editing the text of a created or moved
//! file, and of files inside a moved folder), and a create or rename onto a path that
//! exists.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::position::byte_offset;
use crate::server::PositionEncoding;
use crate::uri::uri_to_path;

/// The net change of one file or folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// An existing file's text changes.
    Modify {
        /// The file.
        path: PathBuf,
        /// Its bytes now.
        original: Vec<u8>,
        /// Its bytes after.
        new: Vec<u8>,
        /// How many text edits made the change.
        edits: usize,
    },
    /// A new file.
    Create {
        /// The file.
        path: PathBuf,
        /// Its bytes.
        content: Vec<u8>,
        /// Text edits applied after creating it.
        edits: usize,
    },
    /// A file or folder moves.
    Rename {
        /// Where it is.
        from: PathBuf,
        /// Where it goes.
        to: PathBuf,
        /// A file's bytes now; `None` for a folder.
        original: Option<Vec<u8>>,
        /// A file's bytes after, when its text changes too.
        new: Option<Vec<u8>>,
        /// Text edits applied to it.
        edits: usize,
    },
    /// A file or folder goes.
    Delete {
        /// The file or folder.
        path: PathBuf,
        /// A file's bytes now; `None` for a folder.
        original: Option<Vec<u8>>,
    },
}

impl FileChange {
    /// The path after the change (the deleted path for a deletion).
    pub fn path(&self) -> &Path {
        match self {
            FileChange::Modify { path, .. }
            | FileChange::Create { path, .. }
            | FileChange::Delete { path, .. } => path,
            FileChange::Rename { to, .. } => to,
        }
    }

    /// Text edits applied.
    pub fn edits(&self) -> usize {
        match self {
            FileChange::Modify { edits, .. }
            | FileChange::Create { edits, .. }
            | FileChange::Rename { edits, .. } => *edits,
            FileChange::Delete { .. } => 0,
        }
    }

    /// `modified`, `created`, `renamed`, `deleted`.
    pub fn action(&self) -> &'static str {
        match self {
            FileChange::Modify { .. } => "modified",
            FileChange::Create { .. } => "created",
            FileChange::Rename { .. } => "renamed",
            FileChange::Delete { .. } => "deleted",
        }
    }
}

/// Why a `WorkspaceEdit` cannot be applied; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The edit does not have the LSP shape.
    #[error("the workspace edit is malformed: {0}")]
    Malformed(String),
    /// A file could not be read.
    #[error("cannot read {path}: {detail}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Text edits overlap or fall outside the file.
    #[error("the text edits of {path} cannot be applied: {detail}")]
    BadRange {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The server computed the edit for another version of an open file.
    #[error(
        "the edit was computed for version {edit_version} of {path}, but the server has \
         version {current}; ask again"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version the edit names.
        edit_version: i64,
        /// The version last sent to the server.
        current: i64,
    },
    /// A file operation conflicts with the disk or with the edit's own earlier operations.
    #[error("{0}")]
    Conflict(String),
}

#[derive(Debug, Clone)]
struct Node {
    /// Where it is on disk now; `None` for a created file.
    origin: Option<PathBuf>,
    /// Where it is after the operations so far; `None` once deleted.
    at: Option<PathBuf>,
    original: Option<Vec<u8>>,
    text: String,
    edits: usize,
    /// Index of its create or (last) rename in `ops`.
    op: Option<usize>,
}

#[derive(Debug, Clone)]
enum Op {
    Create(usize),
    RenameFile {
        node: usize,
        from: PathBuf,
        to: PathBuf,
    },
    RenameDir {
        from: PathBuf,
        to: PathBuf,
    },
    DeleteFile(usize),
    DeleteDir(PathBuf),
}

struct Planner<'a> {
    encoding: PositionEncoding,
    versions: &'a dyn Fn(&Path) -> Option<i64>,
    nodes: Vec<Node>,
    ops: Vec<Op>,
    /// Paths created, moved (both ends) or deleted by operations so far.
    touched: Vec<PathBuf>,
}

/// The net change of every file `edit` touches, with positions in `encoding`. `versions`
/// gives the version last synced to the server for an open file (to refuse an edit made
/// for another version).
pub fn plan(
    edit: &Value,
    encoding: PositionEncoding,
    versions: &dyn Fn(&Path) -> Option<i64>,
) -> Result<Vec<FileChange>, EditError> {
    let mut planner = Planner {
        encoding,
        versions,
        nodes: Vec::new(),
        ops: Vec::new(),
        touched: Vec::new(),
    };
    if let Some(changes) = edit.get("documentChanges").filter(|v| !v.is_null()) {
        let changes = changes
            .as_array()
            .ok_or_else(|| EditError::Malformed("`documentChanges` is not an array".into()))?;
        for change in changes {
            planner.document_change(change)?;
        }
    } else if let Some(changes) = edit.get("changes").filter(|v| !v.is_null()) {
        let changes = changes
            .as_object()
            .ok_or_else(|| EditError::Malformed("`changes` is not an object".into()))?;
        // Map order is the server's; the result does not depend on it.
        for (uri, edits) in changes {
            let path = file_path(uri)?;
            planner.text_edits(&path, edits, None)?;
        }
    } else if !edit.is_object() {
        return Err(EditError::Malformed("not an object".into()));
    }
    Ok(planner.finish())
}

fn file_path(uri: &str) -> Result<PathBuf, EditError> {
    uri_to_path(uri).ok_or_else(|| EditError::Malformed(format!("`{uri}` is not a file:// URI")))
}

fn uri_field(value: &Value, key: &str) -> Result<PathBuf, EditError> {
    let uri = value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| EditError::Malformed(format!("an operation without `{key}`")))?;
    file_path(uri)
}

fn flag(value: &Value, key: &str) -> bool {
    value
        .get("options")
        .and_then(|o| o.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn exists_on_disk(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

fn read_text(path: &Path) -> Result<(Vec<u8>, String), EditError> {
    let bytes = std::fs::read(path).map_err(|error| EditError::Unreadable {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| EditError::Unreadable {
        path: path.to_path_buf(),
        detail: "not UTF-8 text".into(),
    })?;
    Ok((bytes, text))
}

impl Planner<'_> {
    fn document_change(&mut self, change: &Value) -> Result<(), EditError> {
        match change.get("kind").and_then(Value::as_str) {
            None => {
                let document = change.get("textDocument").ok_or_else(|| {
                    EditError::Malformed("a document change without `textDocument`".into())
                })?;
                let path = uri_field(document, "uri")?;
                let version = document.get("version").and_then(Value::as_i64);
                let edits = change.get("edits").unwrap_or(&Value::Null);
                self.text_edits(&path, edits, version)
            }
            Some("create") => self.create(change),
            Some("rename") => self.rename(change),
            Some("delete") => self.delete(change),
            Some(other) => Err(EditError::Malformed(format!(
                "unknown document change kind `{other}`"
            ))),
        }
    }

    /// The node now at `path`, loaded from disk (through moved folders) if needed.
    fn node_at(&mut self, path: &Path) -> Result<usize, EditError> {
        if let Some(index) = self
            .nodes
            .iter()
            .position(|n| n.at.as_deref() == Some(path))
        {
            return Ok(index);
        }
        let origin = self.origin_of(path)?;
        let (bytes, text) = read_text(&origin)?;
        self.nodes.push(Node {
            origin: Some(origin),
            at: Some(path.to_path_buf()),
            original: Some(bytes),
            text,
            edits: 0,
            op: None,
        });
        Ok(self.nodes.len() - 1)
    }

    /// Where the file now at `path` is on disk: through the folder moves so far, in
    /// reverse; an error when an operation created, deleted or moved it away.
    fn origin_of(&self, path: &Path) -> Result<PathBuf, EditError> {
        let mut current = path.to_path_buf();
        for op in self.ops.iter().rev() {
            match op {
                Op::RenameDir { from, to } => {
                    if let Ok(rest) = current.strip_prefix(to) {
                        current = from.join(rest);
                    } else if current.starts_with(from) {
                        return Err(self.gone(path, "moved away"));
                    }
                }
                Op::DeleteDir(dir) if current.starts_with(dir) => {
                    return Err(self.gone(path, "deleted"));
                }
                Op::RenameFile { from, .. } if current == *from => {
                    return Err(self.gone(path, "moved away"));
                }
                Op::DeleteFile(node) if self.nodes[*node].origin.as_deref() == Some(&current) => {
                    return Err(self.gone(path, "deleted"));
                }
                _ => {}
            }
        }
        Ok(current)
    }

    fn gone(&self, path: &Path, how: &str) -> EditError {
        EditError::Conflict(format!(
            "the edit changes {} after an earlier operation of the same edit {how} it; \
             nothing was changed",
            path.display()
        ))
    }

    /// Refuses an operation on a path an earlier operation touched.
    fn untouched(&self, path: &Path, what: &str) -> Result<(), EditError> {
        if self
            .touched
            .iter()
            .any(|t| path.starts_with(t) || t.starts_with(path))
        {
            return Err(EditError::Conflict(format!(
                "the edit {what} {}, which an earlier operation of the same edit created, \
                 moved or deleted; such sequences are not applied, nothing was changed",
                path.display()
            )));
        }
        Ok(())
    }

    fn text_edits(
        &mut self,
        path: &Path,
        edits: &Value,
        version: Option<i64>,
    ) -> Result<(), EditError> {
        let edits = edits.as_array().ok_or_else(|| {
            EditError::Malformed(format!("edits of {} are not an array", path.display()))
        })?;
        if let (Some(edit_version), Some(current)) = (version, (self.versions)(path)) {
            if edit_version != current {
                return Err(EditError::Version {
                    path: path.to_path_buf(),
                    edit_version,
                    current,
                });
            }
        }
        let index = self.node_at(path)?;
        let node = &mut self.nodes[index];
        node.text = apply_text_edits(&node.text, edits, self.encoding, path)?;
        node.edits += edits.len();
        Ok(())
    }

    fn create(&mut self, change: &Value) -> Result<(), EditError> {
        let path = uri_field(change, "uri")?;
        let here = self
            .nodes
            .iter()
            .any(|n| n.at.as_deref() == Some(path.as_path()));
        if here || exists_on_disk(&path) {
            // `overwrite` wins over `ignoreIfExists` (the spec's rule).
            if flag(change, "overwrite") && (here || path.is_file()) {
                // Overwriting a file empties it; later edits fill it.
                let index = self.node_at(&path)?;
                self.nodes[index].text.clear();
                return Ok(());
            }
            if flag(change, "ignoreIfExists") {
                return Ok(());
            }
            return Err(EditError::Conflict(format!(
                "the edit creates {}, which exists; nothing was changed",
                path.display()
            )));
        }
        self.untouched(&path, "creates")?;
        self.nodes.push(Node {
            origin: None,
            at: Some(path.clone()),
            original: None,
            text: String::new(),
            edits: 0,
            op: Some(self.ops.len()),
        });
        self.ops.push(Op::Create(self.nodes.len() - 1));
        self.touched.push(path);
        Ok(())
    }

    fn rename(&mut self, change: &Value) -> Result<(), EditError> {
        let from = uri_field(change, "oldUri")?;
        let to = uri_field(change, "newUri")?;
        if exists_on_disk(&to)
            || self
                .nodes
                .iter()
                .any(|n| n.at.as_deref() == Some(to.as_path()))
        {
            if flag(change, "ignoreIfExists") && !flag(change, "overwrite") {
                return Ok(());
            }
            return Err(EditError::Conflict(format!(
                "the edit renames {} to {}, which exists; nothing was changed",
                from.display(),
                to.display()
            )));
        }
        self.untouched(&from, "renames")?;
        self.untouched(&to, "renames onto")?;
        if from.is_dir() {
            // Files edited inside it so far move along.
            for node in &mut self.nodes {
                if let Some(rest) = node.at.as_ref().and_then(|at| at.strip_prefix(&from).ok()) {
                    node.at = Some(to.join(rest));
                }
            }
            self.ops.push(Op::RenameDir {
                from: from.clone(),
                to: to.clone(),
            });
        } else {
            if !from.is_file() {
                return Err(EditError::Conflict(format!(
                    "the edit renames {}, which does not exist; nothing was changed",
                    from.display()
                )));
            }
            let index = self.node_at(&from)?;
            self.nodes[index].at = Some(to.clone());
            self.nodes[index].op = Some(self.ops.len());
            self.ops.push(Op::RenameFile {
                node: index,
                from: from.clone(),
                to: to.clone(),
            });
        }
        self.touched.push(from);
        self.touched.push(to);
        Ok(())
    }

    fn delete(&mut self, change: &Value) -> Result<(), EditError> {
        let path = uri_field(change, "uri")?;
        if !exists_on_disk(&path) {
            if flag(change, "ignoreIfNotExists") {
                return Ok(());
            }
            return Err(EditError::Conflict(format!(
                "the edit deletes {}, which does not exist; nothing was changed",
                path.display()
            )));
        }
        self.untouched(&path, "deletes")?;
        if path.is_dir() {
            let empty = std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none());
            if !empty && !flag(change, "recursive") {
                return Err(EditError::Conflict(format!(
                    "the edit deletes the folder {}, which is not empty, without `recursive`; \
                     nothing was changed",
                    path.display()
                )));
            }
            for node in &mut self.nodes {
                if node.at.as_ref().is_some_and(|at| at.starts_with(&path)) {
                    node.at = None;
                }
            }
            self.ops.push(Op::DeleteDir(path.clone()));
        } else {
            let index = self.node_at(&path)?;
            self.nodes[index].at = None;
            self.ops.push(Op::DeleteFile(index));
        }
        self.touched.push(path);
        Ok(())
    }

    /// Modifications of existing files first (at their place now), then the file
    /// operations in the edit's order.
    fn finish(self) -> Vec<FileChange> {
        let mut out = Vec::new();
        let changed = |node: &Node| node.original.as_deref() != Some(node.text.as_bytes());
        let mut modified: Vec<FileChange> = self
            .nodes
            .iter()
            .filter(|n| n.at.is_some() && n.op.is_none() && changed(n))
            .filter_map(|n| {
                Some(FileChange::Modify {
                    path: n.origin.clone()?,
                    original: n.original.clone()?,
                    new: n.text.clone().into_bytes(),
                    edits: n.edits,
                })
            })
            .collect();
        modified.sort_by(|a, b| a.path().cmp(b.path()));
        out.extend(modified);
        for (position, op) in self.ops.iter().enumerate() {
            match op {
                Op::Create(index) => {
                    let node = &self.nodes[*index];
                    out.push(FileChange::Create {
                        path: node.at.clone().unwrap_or_default(),
                        content: node.text.clone().into_bytes(),
                        edits: node.edits,
                    });
                }
                Op::RenameFile { node, from, to } => {
                    let node = &self.nodes[*node];
                    // The text goes with the node's last rename, if it survives.
                    let last = node.op == Some(position) && node.at.is_some();
                    out.push(FileChange::Rename {
                        from: from.clone(),
                        to: to.clone(),
                        original: node.original.clone(),
                        new: (last && changed(node)).then(|| node.text.clone().into_bytes()),
                        edits: if last { node.edits } else { 0 },
                    });
                }
                Op::RenameDir { from, to } => out.push(FileChange::Rename {
                    from: from.clone(),
                    to: to.clone(),
                    original: None,
                    new: None,
                    edits: 0,
                }),
                Op::DeleteFile(index) => out.push(FileChange::Delete {
                    path: self.nodes[*index].origin.clone().unwrap_or_default(),
                    original: self.nodes[*index].original.clone(),
                }),
                Op::DeleteDir(path) => out.push(FileChange::Delete {
                    path: path.clone(),
                    original: None,
                }),
            }
        }
        out
    }
}

/// Byte offsets where each line starts (after `\n`, `\r\n` or a lone `\r`).
fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => starts.push(i + 1),
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
            _ => {}
        }
        i += 1;
    }
    starts
}

/// The byte offset of an LSP position; a character past the line's end is its end (as the
/// spec says), a line past the end is the end of the text.
fn offset(
    text: &str,
    starts: &[usize],
    position: &Value,
    encoding: PositionEncoding,
) -> Option<usize> {
    let line = usize::try_from(position.get("line")?.as_u64()?).ok()?;
    let character = u32::try_from(position.get("character")?.as_u64()?).ok()?;
    let Some(&start) = starts.get(line) else {
        return Some(text.len());
    };
    let end = starts.get(line + 1).copied().unwrap_or(text.len());
    let content = text[start..end].trim_end_matches(['\n', '\r']);
    Some(start + byte_offset(content, character, encoding))
}

/// Applies one set of text edits (all relative to `text`, not overlapping).
pub fn apply_text_edits(
    text: &str,
    edits: &[Value],
    encoding: PositionEncoding,
    path: &Path,
) -> Result<String, EditError> {
    let bad = |detail: String| EditError::BadRange {
        path: path.to_path_buf(),
        detail,
    };
    let starts = line_starts(text);
    let mut spans: Vec<(usize, usize, usize, &str)> = Vec::with_capacity(edits.len());
    for (order, edit) in edits.iter().enumerate() {
        let range = edit
            .get("range")
            .ok_or_else(|| bad("a text edit without `range`".into()))?;
        let new_text = edit
            .get("newText")
            .and_then(Value::as_str)
            .or_else(|| {
                edit.get("snippet")
                    .and_then(|s| s.get("value"))
                    .and_then(Value::as_str)
            })
            .ok_or_else(|| bad("a text edit without `newText`".into()))?;
        let at = |key: &str| {
            range
                .get(key)
                .and_then(|p| offset(text, &starts, p, encoding))
                .ok_or_else(|| bad(format!("a range without a valid `{key}`")))
        };
        let (start, end) = (at("start")?, at("end")?);
        if end < start {
            return Err(bad(format!("a range ends before it starts: {range}")));
        }
        spans.push((start, end, order, new_text));
    }
    // Same start: the spec applies them in the order given.
    spans.sort_by_key(|&(start, end, order, _)| (start, end, order));
    for pair in spans.windows(2) {
        if pair[1].0 < pair[0].1 {
            return Err(bad(format!(
                "two edits overlap (bytes {}..{} and {}..{})",
                pair[0].0, pair[0].1, pair[1].0, pair[1].1
            )));
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end, _, new_text) in spans {
        out.push_str(&text[last..start]);
        out.push_str(new_text);
        last = end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edit(line: u32, start: u32, end: u32, text: &str) -> Value {
        json!({"range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}, "newText": text})
    }

    fn no_versions(_: &Path) -> Option<i64> {
        None
    }

    #[test]
    fn text_edits_in_each_encoding_and_line_ending() {
        let path = Path::new("/w/a");
        // `é` is 2 bytes, 1 UTF-16 unit; `𝒳` 4 bytes, 2 units.
        let text = "x = 1\r\nlet é𝒳 = old(é𝒳)\r\n";
        let utf16 = apply_text_edits(
            text,
            &[edit(1, 10, 13, "new")],
            PositionEncoding::Utf16,
            path,
        )
        .unwrap();
        assert_eq!(utf16, "x = 1\r\nlet é𝒳 = new(é𝒳)\r\n");
        let utf8 = apply_text_edits(
            text,
            &[edit(1, 13, 16, "new")],
            PositionEncoding::Utf8,
            path,
        )
        .unwrap();
        assert_eq!(utf8, utf16);
        // Past the end of a line is its end; inserts at one place keep their order.
        let out = apply_text_edits(
            "ab\ncd",
            &[
                edit(0, 99, 99, "1"),
                edit(0, 99, 99, "2"),
                edit(5, 0, 0, "!"),
            ],
            PositionEncoding::Utf16,
            path,
        )
        .unwrap();
        assert_eq!(out, "ab12\ncd!");
        let error = apply_text_edits(
            "abcdef",
            &[edit(0, 0, 3, "x"), edit(0, 2, 4, "y")],
            PositionEncoding::Utf16,
            path,
        )
        .unwrap_err();
        assert!(error.to_string().contains("overlap"), "{error}");
    }

    proptest::proptest! {
        /// An edit at a character of a line lands at that character, whatever the text
        /// before it and whichever encoding counts it.
        #[test]
        fn an_edit_lands_where_its_characters_say(
            lines in proptest::collection::vec("[^\r\n]{0,12}", 1..5),
            pick in 0usize..100,
            column in 0usize..100,
            insert in "[a-z𝒳é]{0,3}",
            encoding in proptest::sample::select(vec![PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32]),
        ) {
            let text = lines.join("\n");
            let line = pick % lines.len();
            let content = &lines[line];
            let chars: Vec<(usize, char)> = content.char_indices().collect();
            let column = column % (chars.len() + 1);
            let byte_in_line = chars.get(column).map_or(content.len(), |(i, _)| *i);
            let start: usize = lines[..line].iter().map(|l| l.len() + 1).sum::<usize>() + byte_in_line;
            let character = crate::position::units(&content[..byte_in_line], encoding);
            let edit = edit(line as u32, character, character, &insert);
            let applied = apply_text_edits(&text, &[edit], encoding, Path::new("/p")).unwrap();
            let expected = format!("{}{insert}{}", &text[..start], &text[start..]);
            proptest::prop_assert_eq!(applied, expected);
        }
    }

    #[test]
    fn changes_and_document_changes_with_file_operations() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "def f(): pass\n").unwrap();
        std::fs::write(root.join("b.py"), "f()\n").unwrap();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/m.py"), "from a import f\n").unwrap();
        let uri = |p: &str| crate::uri::path_to_uri(&root.join(p));

        let changes = json!({"changes": {
            uri("a.py"): [edit(0, 4, 5, "g")],
            uri("b.py"): [edit(0, 0, 1, "g")],
        }});
        let planned = plan(&changes, PositionEncoding::Utf16, &no_versions).unwrap();
        assert_eq!(planned.len(), 2);
        assert_eq!(
            planned[0],
            FileChange::Modify {
                path: root.join("a.py"),
                original: b"def f(): pass\n".to_vec(),
                new: b"def g(): pass\n".to_vec(),
                edits: 1
            }
        );

        let document = json!({"documentChanges": [
            {"textDocument": {"uri": uri("a.py"), "version": 3}, "edits": [edit(0, 4, 5, "g")]},
            {"kind": "rename", "oldUri": uri("a.py"), "newUri": uri("lib/a.py")},
            {"textDocument": {"uri": uri("lib/a.py"), "version": null}, "edits": [edit(0, 0, 0, "# moved\n")]},
            {"kind": "create", "uri": uri("new.py")},
            {"textDocument": {"uri": uri("new.py"), "version": null}, "edits": [edit(0, 0, 0, "x = 1\n")]},
            {"kind": "rename", "oldUri": uri("pkg"), "newUri": uri("pkg2")},
            {"textDocument": {"uri": uri("pkg2/m.py"), "version": null}, "edits": [edit(0, 5, 6, "lib.a")]},
            {"kind": "delete", "uri": uri("b.py")},
        ]});
        let planned = plan(&document, PositionEncoding::Utf16, &|p: &Path| {
            (p.file_name()? == "a.py").then_some(3)
        })
        .unwrap();
        let shape: Vec<(&str, String, usize)> = planned
            .iter()
            .map(|c| {
                (
                    c.action(),
                    c.path().strip_prefix(&root).unwrap().display().to_string(),
                    c.edits(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("modified", "pkg/m.py".into(), 1),
                ("renamed", "lib/a.py".into(), 2),
                ("created", "new.py".into(), 1),
                ("renamed", "pkg2".into(), 0),
                ("deleted", "b.py".into(), 0),
            ]
        );
        let FileChange::Rename { new, original, .. } = &planned[1] else {
            panic!()
        };
        assert_eq!(new.as_deref(), Some(&b"# moved\ndef g(): pass\n"[..]));
        assert_eq!(original.as_deref(), Some(&b"def f(): pass\n"[..]));

        // Another version, a clash with the disk, and a sequence on a deleted path.
        let stale = json!({"documentChanges": [{"textDocument": {"uri": uri("a.py"), "version": 2}, "edits": []}]});
        let error = plan(&stale, PositionEncoding::Utf16, &|_: &Path| Some(3)).unwrap_err();
        assert!(matches!(
            error,
            EditError::Version {
                edit_version: 2,
                current: 3,
                ..
            }
        ));
        let clash = json!({"documentChanges": [{"kind": "create", "uri": uri("b.py")}]});
        assert!(plan(&clash, PositionEncoding::Utf16, &no_versions)
            .unwrap_err()
            .to_string()
            .contains("exists"));
        let ignored = json!({"documentChanges": [{"kind": "create", "uri": uri("b.py"), "options": {"ignoreIfExists": true}}]});
        assert!(plan(&ignored, PositionEncoding::Utf16, &no_versions)
            .unwrap()
            .is_empty());
        let sequence = json!({"documentChanges": [
            {"kind": "delete", "uri": uri("b.py")},
            {"textDocument": {"uri": uri("b.py"), "version": null}, "edits": [edit(0, 0, 0, "x")]},
        ]});
        let error = plan(&sequence, PositionEncoding::Utf16, &no_versions).unwrap_err();
        assert!(error.to_string().contains("deleted it"), "{error}");
    }
}
