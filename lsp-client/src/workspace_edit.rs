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
//!
//! The edit is the typed `lsp_types::WorkspaceEdit`; [`parse`] reads one from JSON, taking
//! LSP 3.18 snippet text edits (which lsp-types 0.97 does not know) as their text.

use std::path::{Path, PathBuf};

use lsp_types::{
    AnnotatedTextEdit, CreateFile, DeleteFile, DocumentChangeOperation, DocumentChanges, OneOf,
    Position, RenameFile, ResourceOp, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};
use serde_json::Value;

use crate::position::byte_offset;
use crate::server::PositionEncoding;
use crate::uri::uri_path;

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

/// Every path `changes` touch: written, created, both ends of a move, deleted.
pub fn touched(changes: &[FileChange]) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for change in changes {
        if let FileChange::Rename { from, .. } = change {
            paths.push(from.clone());
        }
        paths.push(change.path().to_path_buf());
    }
    paths.dedup();
    paths
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

/// Why an [`crate::ApplyEdit`] applied nothing; its text is the `failureReason` the server
/// is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The edit cannot be planned against the disk.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The applier refused it (a path outside the workspace, a commit that failed); the
    /// message says why and that nothing was changed.
    #[error("{0}")]
    Refused(String),
    /// The applier's thread ended without an answer.
    #[error("the edit could not be applied: {0}")]
    Aborted(String),
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
    edit: &WorkspaceEdit,
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
    match (&edit.document_changes, &edit.changes) {
        (Some(DocumentChanges::Edits(edits)), _) => {
            for edit in edits {
                planner.document_edit(edit)?;
            }
        }
        (Some(DocumentChanges::Operations(operations)), _) => {
            for operation in operations {
                match operation {
                    DocumentChangeOperation::Edit(edit) => planner.document_edit(edit)?,
                    DocumentChangeOperation::Op(ResourceOp::Create(create)) => {
                        planner.create(create)?
                    }
                    DocumentChangeOperation::Op(ResourceOp::Rename(rename)) => {
                        planner.rename(rename)?
                    }
                    DocumentChangeOperation::Op(ResourceOp::Delete(delete)) => {
                        planner.delete(delete)?
                    }
                }
            }
        }
        (None, Some(changes)) => {
            // Map order is the server's; the result does not depend on it.
            for (uri, edits) in changes {
                let path = file_path(uri)?;
                let edits: Vec<&TextEdit> = edits.iter().collect();
                planner.text_edits(&path, &edits, None)?;
            }
        }
        (None, None) => {}
    }
    Ok(planner.finish())
}

/// Reads a `WorkspaceEdit` from JSON (a server's `workspace/applyEdit`, a rename answer).
pub fn parse(edit: Value) -> Result<WorkspaceEdit, EditError> {
    let mut edit = edit;
    accept_snippet_edits(&mut edit);
    serde_json::from_value(edit).map_err(|error| EditError::Malformed(error.to_string()))
}

/// LSP 3.18's `SnippetTextEdit` carries `snippet: {value}` instead of `newText`, and
/// lsp-types 0.97 has no type for it: its value becomes the edit's `newText` (as the
/// hand-written reader took it before), so the typed edit reads it.
fn accept_snippet_edits(edit: &mut Value) {
    let Some(changes) = edit
        .get_mut("documentChanges")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for change in changes {
        let Some(edits) = change.get_mut("edits").and_then(Value::as_array_mut) else {
            continue;
        };
        for text_edit in edits {
            let Some(object) = text_edit.as_object_mut() else {
                continue;
            };
            if object.contains_key("newText") {
                continue;
            }
            let snippet = object
                .get("snippet")
                .and_then(|snippet| snippet.get("value"))
                .cloned();
            if let Some(value) = snippet {
                object.insert("newText".into(), value);
            }
        }
    }
}

fn file_path(uri: &Uri) -> Result<PathBuf, EditError> {
    uri_path(uri)
        .ok_or_else(|| EditError::Malformed(format!("`{}` is not a file:// URI", uri.as_str())))
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
    fn document_edit(&mut self, change: &TextDocumentEdit) -> Result<(), EditError> {
        let path = file_path(&change.text_document.uri)?;
        let version = change.text_document.version.map(i64::from);
        // An annotated edit is applied as it stands (annotations only ask for confirmation,
        // which the caller's own review covers).
        let edits: Vec<&TextEdit> = change
            .edits
            .iter()
            .map(|edit| match edit {
                OneOf::Left(edit) => edit,
                OneOf::Right(AnnotatedTextEdit { text_edit, .. }) => text_edit,
            })
            .collect();
        self.text_edits(&path, &edits, version)
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
        edits: &[&TextEdit],
        version: Option<i64>,
    ) -> Result<(), EditError> {
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

    fn create(&mut self, change: &CreateFile) -> Result<(), EditError> {
        let path = file_path(&change.uri)?;
        let options = change.options.as_ref();
        let overwrite = options.and_then(|o| o.overwrite).unwrap_or(false);
        let ignore_if_exists = options.and_then(|o| o.ignore_if_exists).unwrap_or(false);
        let here = self
            .nodes
            .iter()
            .any(|n| n.at.as_deref() == Some(path.as_path()));
        if here || exists_on_disk(&path) {
            // `overwrite` wins over `ignoreIfExists` (the spec's rule).
            if overwrite && (here || path.is_file()) {
                // Overwriting a file empties it; later edits fill it.
                let index = self.node_at(&path)?;
                self.nodes[index].text.clear();
                return Ok(());
            }
            if ignore_if_exists {
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

    fn rename(&mut self, change: &RenameFile) -> Result<(), EditError> {
        let from = file_path(&change.old_uri)?;
        let to = file_path(&change.new_uri)?;
        let options = change.options.as_ref();
        let overwrite = options.and_then(|o| o.overwrite).unwrap_or(false);
        let ignore_if_exists = options.and_then(|o| o.ignore_if_exists).unwrap_or(false);
        if exists_on_disk(&to)
            || self
                .nodes
                .iter()
                .any(|n| n.at.as_deref() == Some(to.as_path()))
        {
            if ignore_if_exists && !overwrite {
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

    fn delete(&mut self, change: &DeleteFile) -> Result<(), EditError> {
        let path = file_path(&change.uri)?;
        let options = change.options.as_ref();
        let recursive = options.and_then(|o| o.recursive).unwrap_or(false);
        let ignore_if_not_exists = options
            .and_then(|o| o.ignore_if_not_exists)
            .unwrap_or(false);
        if !exists_on_disk(&path) {
            if ignore_if_not_exists {
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
            if !empty && !recursive {
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
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
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
pub(crate) fn offset(
    text: &str,
    starts: &[usize],
    position: Position,
    encoding: PositionEncoding,
) -> usize {
    let line = usize::try_from(position.line).unwrap_or(usize::MAX);
    let Some(&start) = starts.get(line) else {
        return text.len();
    };
    let end = starts
        .get(line.saturating_add(1))
        .copied()
        .unwrap_or(text.len());
    let content = text[start..end].trim_end_matches(['\n', '\r']);
    start + byte_offset(content, position.character, encoding)
}

/// Applies one set of text edits (all relative to `text`, not overlapping).
pub fn apply_text_edits(
    text: &str,
    edits: &[&TextEdit],
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
        let range = edit.range;
        let start = offset(text, &starts, range.start, encoding);
        let end = offset(text, &starts, range.end, encoding);
        if end < start {
            let range = serde_json::to_string(&range).unwrap_or_default();
            return Err(bad(format!("a range ends before it starts: {range}")));
        }
        spans.push((start, end, order, edit.new_text.as_str()));
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

    fn edit(line: u32, start: u32, end: u32, text: &str) -> TextEdit {
        TextEdit::new(
            lsp_types::Range::new(Position::new(line, start), Position::new(line, end)),
            text.into(),
        )
    }

    fn plan_json(
        edit: Value,
        versions: &dyn Fn(&Path) -> Option<i64>,
    ) -> Result<Vec<FileChange>, EditError> {
        plan(&parse(edit)?, PositionEncoding::Utf16, versions)
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
            &[&edit(1, 10, 13, "new")],
            PositionEncoding::Utf16,
            path,
        )
        .unwrap();
        assert_eq!(utf16, "x = 1\r\nlet é𝒳 = new(é𝒳)\r\n");
        let utf8 = apply_text_edits(
            text,
            &[&edit(1, 13, 16, "new")],
            PositionEncoding::Utf8,
            path,
        )
        .unwrap();
        assert_eq!(utf8, utf16);
        // Past the end of a line is its end; inserts at one place keep their order.
        let out = apply_text_edits(
            "ab\ncd",
            &[
                &edit(0, 99, 99, "1"),
                &edit(0, 99, 99, "2"),
                &edit(5, 0, 0, "!"),
            ],
            PositionEncoding::Utf16,
            path,
        )
        .unwrap();
        assert_eq!(out, "ab12\ncd!");
        let error = apply_text_edits(
            "abcdef",
            &[&edit(0, 0, 3, "x"), &edit(0, 2, 4, "y")],
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
            let applied = apply_text_edits(&text, &[&edit], encoding, Path::new("/p")).unwrap();
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
        let planned = plan_json(changes, &no_versions).unwrap();
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
        let planned = plan_json(document, &|p: &Path| {
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
        let error = plan_json(stale, &|_: &Path| Some(3)).unwrap_err();
        assert!(matches!(
            error,
            EditError::Version {
                edit_version: 2,
                current: 3,
                ..
            }
        ));
        let clash = json!({"documentChanges": [{"kind": "create", "uri": uri("b.py")}]});
        assert!(plan_json(clash, &no_versions)
            .unwrap_err()
            .to_string()
            .contains("exists"));
        let ignored = json!({"documentChanges": [{"kind": "create", "uri": uri("b.py"), "options": {"ignoreIfExists": true}}]});
        assert!(plan_json(ignored, &no_versions).unwrap().is_empty());
        let sequence = json!({"documentChanges": [
            {"kind": "delete", "uri": uri("b.py")},
            {"textDocument": {"uri": uri("b.py"), "version": null}, "edits": [edit(0, 0, 0, "x")]},
        ]});
        let error = plan_json(sequence, &no_versions).unwrap_err();
        assert!(error.to_string().contains("deleted it"), "{error}");
    }

    #[test]
    fn annotated_and_snippet_edits_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.rs"), "fn f() {}\n").unwrap();
        let uri = crate::uri::path_to_uri(&root.join("a.rs"));
        let range = |start: u32, end: u32| json!({"start": {"line": 0, "character": start}, "end": {"line": 0, "character": end}});
        let edit = json!({
            "documentChanges": [
                {"textDocument": {"uri": uri, "version": null}, "edits": [
                    {"range": range(3, 4), "newText": "g", "annotationId": "rename"},
                    {"range": range(8, 8), "snippet": {"kind": "snippet", "value": "1"}},
                ]},
                {"kind": "create", "uri": crate::uri::path_to_uri(&root.join("b.rs")), "annotationId": "rename"},
            ],
            "changeAnnotations": {"rename": {"label": "Rename", "needsConfirmation": true}},
        });
        let planned = plan_json(edit, &no_versions).unwrap();
        assert_eq!(planned.len(), 2);
        let FileChange::Modify { new, edits, .. } = &planned[0] else {
            panic!("{planned:?}")
        };
        assert_eq!((new.as_slice(), *edits), (&b"fn g() {1}\n"[..], 2));
        assert_eq!(planned[1].action(), "created");
        let error = parse(json!({"documentChanges": [{"kind": "copy", "uri": uri}]})).unwrap_err();
        assert!(matches!(error, EditError::Malformed(_)), "{error}");
    }
}
