//! Making a rename complete, or saying exactly where it is not.
//!
//! A server renames what its project holds: files outside it (tests excluded by a
//! `tsconfig.json` `include`, pyright's `include`, a sibling crate) keep the old name, and the
//! server calls the rename done. So before the server is asked, every workspace file that
//! mentions the name as a whole word is opened in it ([`make_visible`]); after it answered,
//! the old name is looked for again in each of those files with the file's own grammar
//! ([`complete`]): an occurrence in code that the server's edit does not cover is renamed too
//! when the server confirms (by `definition`) that it is the same symbol, left alone when it
//! resolves to another one, and otherwise reported as a leftover — as are mentions in comments
//! and strings, listed apart. A rename is complete only when no code occurrence is left.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use cc_lsp_client::lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier,
    Position, Range, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};
use cc_lsp_client::position::{byte_offset, units};
use cc_lsp_client::uri::{file_uri, uri_path, uri_to_path};
use cc_lsp_client::{LanguageServer, ServerPool};
use serde_json::Value;

use crate::scan::{self, Place};
use cc_lsp_client::requests::{self, AtPosition};

/// Files opened in the server before a rename, at most.
const MAX_OPENED: usize = 400;
/// Occurrences the server is asked about, at most; the rest are leftovers, unchecked.
const MAX_CONFIRMATIONS: usize = 200;
/// Each confirmation's timeout.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(20);
/// Leftovers listed per kind (the totals are always given).
pub const LISTED: usize = 30;

/// The workspace files that mention the old name.
#[derive(Debug, Default)]
pub struct Mentions {
    /// Files of the renaming server's project.
    pub own: Vec<PathBuf>,
    /// Files under another project root (another server): not renamed, only reported.
    pub elsewhere: Vec<(PathBuf, PathBuf)>,
    /// Files that mention it beyond the scan's limit.
    pub more: usize,
}

/// Opens every workspace file of the server's language that mentions `name` in the server
/// (from disk, unless already open with that text), so that it can rename there too.
pub async fn make_visible(
    pool: &ServerPool,
    server: &LanguageServer,
    root: &Path,
    origin: &Path,
    name: &str,
) -> Mentions {
    let Some(family) = pool.table().family(server.family()).cloned() else {
        return Mentions::default();
    };
    let workspace = root.to_path_buf();
    let word = name.to_owned();
    let extensions = family.extensions.clone();
    let origin = origin.to_path_buf();
    let (files, more) = tokio::task::spawn_blocking(move || {
        scan::files_mentioning(&workspace, &extensions, &word, &origin, MAX_OPENED)
    })
    .await
    .unwrap_or_default();
    let mut mentions = Mentions {
        more,
        ..Mentions::default()
    };
    for file in files {
        match pool.route(&file) {
            Ok((_, project)) if project == server.root() => {
                if let Ok(text) = std::fs::read_to_string(&file) {
                    let _ = server.ensure_synced(&file, &text, &family.language_id(&file));
                }
                mentions.own.push(file);
            }
            Ok((_, project)) => mentions.elsewhere.push((file, project)),
            Err(_) => {}
        }
    }
    mentions
}

/// One place the old name is still written.
#[derive(Debug, Clone)]
pub struct Leftover {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line.
    pub line: usize,
    /// The line's text.
    pub text: String,
    /// Why it was left.
    pub why: String,
}

/// What the scan after the server's answer found.
#[derive(Debug, Default)]
pub struct Completion {
    /// Occurrences the server's edit missed that it confirmed as the symbol: renamed too.
    pub added: usize,
    /// Code occurrences left with the old name.
    pub code: Vec<Leftover>,
    /// Mentions in comments and strings (docs, doc tests), left as they are.
    pub comments: Vec<Leftover>,
    /// Code occurrences that are another symbol of the same name.
    pub other_symbols: Vec<Leftover>,
}

/// The text edits of `edit` per file, however the server shaped it.
fn text_edits(edit: &WorkspaceEdit) -> Vec<(&Uri, &TextEdit)> {
    fn of_document(change: &TextDocumentEdit) -> Vec<(&Uri, &TextEdit)> {
        let uri = &change.text_document.uri;
        change
            .edits
            .iter()
            .map(|edit| match edit {
                OneOf::Left(edit) => (uri, edit),
                OneOf::Right(annotated) => (uri, &annotated.text_edit),
            })
            .collect()
    }
    match (&edit.document_changes, &edit.changes) {
        (Some(DocumentChanges::Edits(changes)), _) => {
            changes.iter().flat_map(of_document).collect()
        }
        (Some(DocumentChanges::Operations(operations)), _) => operations
            .iter()
            .filter_map(|operation| match operation {
                DocumentChangeOperation::Edit(change) => Some(change),
                DocumentChangeOperation::Op(_) => None,
            })
            .flat_map(of_document)
            .collect(),
        (None, Some(changes)) => changes
            .iter()
            .flat_map(|(uri, edits)| edits.iter().map(move |edit| (uri, edit)))
            .collect(),
        (None, None) => Vec::new(),
    }
}

/// (0-based line, start in the server's encoding) of every text edit in `edit`, per file.
fn edit_starts(edit: &WorkspaceEdit) -> BTreeMap<PathBuf, BTreeSet<(u64, u64)>> {
    let mut starts: BTreeMap<PathBuf, BTreeSet<(u64, u64)>> = BTreeMap::new();
    for (uri, text_edit) in text_edits(edit) {
        let Some(path) = uri_path(uri) else {
            continue;
        };
        let start = text_edit.range.start;
        starts
            .entry(path)
            .or_default()
            .insert((u64::from(start.line), u64::from(start.character)));
    }
    starts
}

/// A rename built from the server's `references` (declaration included), for a server that
/// finds references but cannot rename (intelephense without a licence): every place it gives
/// whose text is `old` — or `$old`, a PHP variable — becomes `new_name`. [`complete`] then
/// scans for what the answer left out, as after a server's own rename. `None` when no place
/// holds the name.
pub async fn edit_from_references(
    server: &LanguageServer,
    at: cc_lsp_client::lsp_types::TextDocumentPositionParams,
    old: &str,
    new_name: &str,
    timeout: Duration,
) -> Result<Option<WorkspaceEdit>, cc_lsp_client::LspError> {
    let answer = requests::at_position(server, AtPosition::References, at, timeout).await?;
    let encoding = server.encoding();
    let mut texts: BTreeMap<PathBuf, Option<Vec<String>>> = BTreeMap::new();
    let mut places: Vec<(PathBuf, u32, u32)> = Vec::new();
    let mut seen: BTreeSet<(PathBuf, u32, u32)> = BTreeSet::new();
    for item in answer.as_array().into_iter().flatten() {
        let (Some(path), Ok(range)) = (
            item.get("uri")
                .and_then(Value::as_str)
                .and_then(uri_to_path),
            serde_json::from_value::<Range>(item["range"].clone()),
        ) else {
            continue;
        };
        if range.start.line != range.end.line {
            continue;
        }
        let lines = texts.entry(path.clone()).or_insert_with(|| {
            std::fs::read_to_string(&path)
                .ok()
                .map(|text| text.lines().map(str::to_owned).collect())
        });
        let Some(line) = lines
            .as_ref()
            .and_then(|lines| lines.get(range.start.line as usize))
        else {
            continue;
        };
        let from = byte_offset(line, range.start.character, encoding);
        let to = byte_offset(line, range.end.character, encoding);
        let Some(written) = line.get(from..to) else {
            continue;
        };
        let start = match written.strip_prefix('$') {
            _ if written == old => range.start.character,
            Some(rest) if rest == old => range.start.character + 1,
            _ => continue,
        };
        if !seen.insert((path.clone(), range.start.line, start)) {
            continue;
        }
        places.push((path, range.start.line, start));
    }
    Ok(edit_at(places, old, new_name, encoding))
}

/// A rename of `old` to `new_name` at each of `places` (file, 0-based line, start in
/// `encoding`), as a server's rename answers (`None` when there are none).
pub fn edit_at(
    places: Vec<(PathBuf, u32, u32)>,
    old: &str,
    new_name: &str,
    encoding: cc_lsp_client::PositionEncoding,
) -> Option<WorkspaceEdit> {
    if places.is_empty() {
        return None;
    }
    let extra = places
        .into_iter()
        .map(|(path, line, start)| (path, renaming(line, start, old, new_name, encoding)))
        .collect();
    let mut edit = WorkspaceEdit::default();
    add_edits(&mut edit, extra);
    Some(edit)
}

/// The text edit that renames `old`, starting at `start` (in `encoding`) of 0-based `line`.
fn renaming(
    line: u32,
    start: u32,
    old: &str,
    new_name: &str,
    encoding: cc_lsp_client::PositionEncoding,
) -> TextEdit {
    let end = start.saturating_add(units(old, encoding));
    TextEdit::new(
        Range::new(Position::new(line, start), Position::new(line, end)),
        new_name.to_owned(),
    )
}

/// Adds `extra` text edits (computed against the files as they are) to `edit`, in the same
/// list as the server's own edits of each file, so that all apply to the same text.
fn add_edits(edit: &mut WorkspaceEdit, extra: Vec<(PathBuf, TextEdit)>) {
    let same_file = |change: &TextDocumentEdit, path: &Path| {
        uri_path(&change.text_document.uri).as_deref() == Some(path)
    };
    let new_document = |path: &Path, text_edit: TextEdit| TextDocumentEdit {
        text_document: OptionalVersionedTextDocumentIdentifier {
            uri: file_uri(path),
            version: None,
        },
        edits: vec![OneOf::Left(text_edit)],
    };
    for (path, text_edit) in extra {
        match &mut edit.document_changes {
            Some(DocumentChanges::Edits(changes)) => {
                match changes.iter_mut().find(|c| same_file(c, &path)) {
                    Some(change) => change.edits.push(OneOf::Left(text_edit)),
                    None => changes.push(new_document(&path, text_edit)),
                }
            }
            Some(DocumentChanges::Operations(operations)) => {
                let existing = operations.iter_mut().find_map(|operation| match operation {
                    DocumentChangeOperation::Edit(change) if same_file(change, &path) => {
                        Some(change)
                    }
                    _ => None,
                });
                match existing {
                    Some(change) => change.edits.push(OneOf::Left(text_edit)),
                    None => operations.push(DocumentChangeOperation::Edit(new_document(
                        &path, text_edit,
                    ))),
                }
            }
            None => edit
                .changes
                .get_or_insert_with(Default::default)
                .entry(file_uri(&path))
                .or_default()
                .push(text_edit),
        }
    }
}

/// The (file, 0-based line) of each place `answer` (a definition answer) points at.
fn definition_places(answer: &Value) -> BTreeSet<(PathBuf, u64)> {
    requests::location_starts(answer)
        .into_iter()
        .filter_map(|start| Some((uri_to_path(start.uri)?, start.line)))
        .collect()
}

/// Where the symbol at `position` of `path` is declared and defined, as the server says:
/// both, because one server answers `definition` with the declaration until its index
/// knows the definition (clangd: a header's prototype, then the source's body), so two
/// uses of one symbol are recognised by any place they share.
pub async fn definition_of(
    server: &LanguageServer,
    path: &Path,
    line: u64,
    character: u64,
) -> BTreeSet<(PathBuf, u64)> {
    let at = requests::position(
        path,
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(character).unwrap_or(u32::MAX),
    );
    let mut places = BTreeSet::new();
    for (provider, method, what) in [
        (
            "definitionProvider",
            "textDocument/definition",
            AtPosition::Definition,
        ),
        (
            "declarationProvider",
            "textDocument/declaration",
            AtPosition::Declaration,
        ),
    ] {
        if !server.supports(provider, method) {
            continue;
        }
        if let Ok(answer) = requests::at_position(server, what, at.clone(), CONFIRM_TIMEOUT).await {
            places.extend(definition_places(&answer));
        }
    }
    places
}

/// The renamed symbol: where the rename was asked, and where the server says it is declared
/// and defined.
#[derive(Debug, Clone)]
pub struct Target {
    /// The file, 0-based line and start of the name, in the server's encoding.
    pub at: (PathBuf, u64, u64),
    /// Where the server says it is declared and defined (file, 0-based line).
    pub places: BTreeSet<(PathBuf, u64)>,
}

impl Target {
    /// Asks `server` about the symbol at `at`; the place itself counts when it says nothing.
    pub async fn of(server: &LanguageServer, at: (PathBuf, u64, u64)) -> Target {
        let mut places = definition_of(server, &at.0, at.1, at.2).await;
        if places.is_empty() {
            places.insert((at.0.clone(), at.1));
        }
        Target { at, places }
    }
}

/// Scans the files of `mentions` for occurrences of `old` that `edit` leaves behind; adds
/// to `edit` those the server confirms are the symbol defined at `target`.
pub async fn complete(
    server: &LanguageServer,
    root: &Path,
    mentions: &Mentions,
    old: &str,
    new_name: &str,
    target: &Target,
    edit: &mut WorkspaceEdit,
) -> Completion {
    let starts = edit_starts(edit);
    let found = classify(server, root, mentions, old, target, &starts, "rename").await;
    let encoding = server.encoding();
    let extra: Vec<(PathBuf, TextEdit)> = found
        .confirmed
        .iter()
        .map(|place| {
            let line = u32::try_from(place.line0).unwrap_or(u32::MAX);
            let start = u32::try_from(place.character).unwrap_or(u32::MAX);
            let edit = renaming(line, start, old, new_name, encoding);
            (place.path.clone(), edit)
        })
        .collect();
    add_edits(edit, extra);
    Completion {
        added: found.confirmed.len(),
        code: found.code,
        comments: found.comments,
        other_symbols: found.other_symbols,
    }
}

/// A code occurrence the server's answer missed and then confirmed as the symbol.
#[derive(Debug, Clone)]
pub struct Confirmed {
    /// The file.
    pub path: PathBuf,
    /// 0-based line in the server's encoding.
    pub line0: u64,
    /// Start of the name on that line, in the server's encoding.
    pub character: u64,
    /// The line's text.
    pub text: String,
}

/// Every occurrence of `old` in the files of `mentions` that the server's answer (`covered`:
/// the starts of the places it gave, per file) does not include, sorted out.
#[derive(Debug, Default)]
pub struct Classified {
    /// Code the server confirms (`definition`/`declaration`) is the target symbol.
    pub confirmed: Vec<Confirmed>,
    /// Code it could not tie to anything, or tied to something outside the workspace, or
    /// that lies in another project: each with why.
    pub code: Vec<Leftover>,
    /// Mentions in comments and strings.
    pub comments: Vec<Leftover>,
    /// Code that is another symbol of the workspace with the same name.
    pub other_symbols: Vec<Leftover>,
}

/// Where an occurrence set aside without asking the server goes.
enum Bucket {
    Comments,
    Code,
}

/// Why an occurrence at `place` of `path` is set aside without asking the server, and where
/// it goes: a comment or a string, code of another project, or code the server does not
/// compile. `None`: ask the server.
fn set_aside(
    server: &LanguageServer,
    root: &Path,
    path: &Path,
    place: Place,
    elsewhere: Option<&PathBuf>,
) -> Option<(Bucket, String)> {
    match place {
        Place::Comment => return Some((Bucket::Comments, "in a comment".into())),
        Place::String => return Some((Bucket::Comments, "in a string".into())),
        Place::Code => {}
    }
    if let Some(project) = elsewhere {
        return Some((
            Bucket::Code,
            format!(
                "in another project ({}), which this server does not see",
                cc_workspace::shown_path(root, project)
            ),
        ));
    }
    if server.spec().diagnoses(path) {
        return None;
    }
    // Its answers there are by name (JDT LS's Kotlin search), not by symbol.
    let after = if cc_lsp_client::kotlin::compiles(path) {
        " (the Kotlin compiler's diagnostics of this write name the uses it broke)"
    } else {
        ""
    };
    Some((
        Bucket::Code,
        format!(
            "{} does not compile .{} files, so it cannot tell whether this is the symbol: \
             check it by hand{after}",
            server.name(),
            path.extension()
                .and_then(|e| e.to_str())
                .unwrap_or_default()
        ),
    ))
}

/// Sorts out the occurrences of `old` the server's answer left out (see [`Classified`]);
/// `doing` names the operation in reasons ("rename", "search").
pub async fn classify(
    server: &LanguageServer,
    root: &Path,
    mentions: &Mentions,
    old: &str,
    target: &Target,
    covered: &BTreeMap<PathBuf, BTreeSet<(u64, u64)>>,
    doing: &str,
) -> Classified {
    let mut places = target.places.clone();
    let encoding = server.encoding();
    let mut found = Classified::default();
    let mut confirmations = 0;
    let files = mentions
        .own
        .iter()
        .map(|p| (p, None))
        .chain(mentions.elsewhere.iter().map(|(p, root)| (p, Some(root))));
    for (path, elsewhere) in files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let covered = covered.get(path);
        for occurrence in scan::occurrences(path, &bytes, old) {
            let line0 = u64::try_from(occurrence.line - 1).unwrap_or(0);
            let line_start = text[..occurrence.offset].rfind('\n').map_or(0, |i| i + 1);
            let character = u64::from(units(&text[line_start..occurrence.offset], encoding));
            if covered.is_some_and(|c| c.contains(&(line0, character))) {
                continue;
            }
            let leftover = |why: String| Leftover {
                path: path.clone(),
                line: occurrence.line,
                text: occurrence.text.clone(),
                why,
            };
            if let Some((bucket, why)) = set_aside(server, root, path, occurrence.place, elsewhere)
            {
                match bucket {
                    Bucket::Comments => found.comments.push(leftover(why)),
                    Bucket::Code => found.code.push(leftover(why)),
                }
                continue;
            }
            if confirmations >= MAX_CONFIRMATIONS {
                found
                    .code
                    .push(leftover("not checked (too many occurrences)".into()));
                continue;
            }
            confirmations += 1;
            let defined = definition_of(server, path, line0, character).await;
            let mut same = !defined.is_disjoint(&places);
            if !same && !defined.is_empty() {
                // The server's index may have learnt more about the target meanwhile (the
                // definition behind a prototype): ask again before calling it another symbol.
                let (at, line, character) = &target.at;
                places.extend(definition_of(server, at, *line, *character).await);
                same = !defined.is_disjoint(&places);
            }
            if same {
                found.confirmed.push(Confirmed {
                    path: path.clone(),
                    line0,
                    character,
                    text: occurrence.text.clone(),
                });
            } else if defined.is_empty() {
                let why = match crate::inactive::reason(server, path, line0).await {
                    Some(inactive) => format!("{} cannot {doing} it: {inactive}", server.name()),
                    None => format!("{} could not say what it refers to", server.name()),
                };
                found.code.push(leftover(why));
            } else if let Some((outside, line)) =
                defined.iter().find(|(path, _)| !path.starts_with(root))
            {
                // Resolved outside the workspace: an installed copy or a stub may stand in
                // for the workspace's own module, so this may well be the same symbol.
                found.code.push(leftover(format!(
                    "{} resolves it to {}:{} outside the workspace, not to this definition (an \
                     installed copy or a stub may hide the workspace's module)",
                    server.name(),
                    outside.display(),
                    line + 1
                )));
            } else {
                let (elsewhere, line) = defined.iter().next().cloned().unwrap_or_default();
                found.other_symbols.push(leftover(format!(
                    "another symbol of the same name, defined at {}:{}",
                    cc_workspace::shown_path(root, &elsewhere),
                    line + 1
                )));
            }
        }
    }
    found
}

/// (0-based line, start in the server's encoding) of each location of a navigation answer
/// (`Location[]` or `LocationLink[]`), per file: what it already covers.
pub fn location_starts(answer: &Value) -> BTreeMap<PathBuf, BTreeSet<(u64, u64)>> {
    let mut starts: BTreeMap<PathBuf, BTreeSet<(u64, u64)>> = BTreeMap::new();
    for start in requests::location_starts(answer) {
        if let (Some(path), Some(character)) = (uri_to_path(start.uri), start.character) {
            starts
                .entry(path)
                .or_default()
                .insert((start.line, character));
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_lsp_client::uri::path_to_uri;
    use cc_lsp_client::workspace_edit;
    use serde_json::json;

    #[test]
    fn extra_edits_join_the_servers_list_of_the_same_file() {
        let a = path_to_uri(Path::new("/w/a.py"));
        let edit_at = |line: u32| {
            TextEdit::new(
                Range::new(Position::new(line, 0), Position::new(line, 3)),
                "new".into(),
            )
        };
        let parse = |value: Value| workspace_edit::parse(value).unwrap();
        let mut changes = parse(json!({"changes": {a.clone(): [edit_at(1)]}}));
        add_edits(
            &mut changes,
            vec![
                (PathBuf::from("/w/a.py"), edit_at(5)),
                (PathBuf::from("/w/b.py"), edit_at(2)),
            ],
        );
        let count =
            |path: &str| changes.changes.as_ref().unwrap()[&file_uri(Path::new(path))].len();
        assert_eq!(count("/w/a.py"), 2);
        assert_eq!(count("/w/b.py"), 1);
        let starts = edit_starts(&changes);
        assert!(starts[&PathBuf::from("/w/a.py")].contains(&(5, 0)));

        let mut documents = parse(json!({"documentChanges": [
            {"textDocument": {"uri": a.clone(), "version": 3}, "edits": [edit_at(1)]}
        ]}));
        add_edits(
            &mut documents,
            vec![
                (PathBuf::from("/w/a.py"), edit_at(7)),
                (PathBuf::from("/w/b.py"), edit_at(2)),
            ],
        );
        let Some(DocumentChanges::Edits(list)) = &documents.document_changes else {
            panic!("{documents:?}")
        };
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].edits.len(), 2);
        assert_eq!(list[1].text_document.version, None);
    }
}
