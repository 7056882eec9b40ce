//! Document sync: `didOpen`, full-text `didChange` with increasing versions (never a change
//! that changes nothing), `didSave` where the server asked for it, `didClose`.

use super::state::Doc;
use super::wait::SyncTicket;
use super::LanguageServer;
use crate::error::LspError;
use crate::transport::Connection;
use crate::uri::file_uri;
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification,
};
use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, VersionedTextDocumentIdentifier,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tokio::time::Instant;

impl LanguageServer {
    /// The documents open in the server.
    pub fn open_documents(&self) -> Vec<PathBuf> {
        let mut open: Vec<PathBuf> = self.docs_lock().keys().cloned().collect();
        open.sort();
        open
    }

    /// The version last sent for `path`, if it is open.
    pub fn version_of(&self, path: &Path) -> Option<i64> {
        self.docs_lock().get(path).map(|doc| doc.version)
    }

    /// The text last sent for `path`, if it is open.
    pub fn synced_text(&self, path: &Path) -> Option<String> {
        self.docs_lock().get(path).map(|doc| doc.text.clone())
    }

    pub(super) fn docs_lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Doc>> {
        cc_process::lock(&self.docs)
    }

    /// Sends `text` as the new content of `path`: `didOpen` the first time, then a full-text
    /// `didChange` with the next version; then `didSave` when the server asked for it.
    ///
    /// Text the server already has is not sent again: servers skip a change that changes
    /// nothing (clangd publishes nothing for it), so a new version would never be answered.
    /// The ticket then waits for the answer about the version already sent (from now, for
    /// the caps).
    pub fn sync(&self, path: &Path, text: &str, language_id: &str) -> Result<SyncTicket, LspError> {
        self.sync_inner(path, text, language_id, true)
    }

    /// [`LanguageServer::sync`] without `didSave`: for a batch of files that are saved after
    /// all of them are sent ([`LanguageServer::save`]), and for files opened only to be seen.
    pub fn sync_unsaved(
        &self,
        path: &Path,
        text: &str,
        language_id: &str,
    ) -> Result<SyncTicket, LspError> {
        self.sync_inner(path, text, language_id, false)
    }

    /// Sends `didSave` for the open document `path`, when the server asked for saves.
    pub fn save(&self, path: &Path) -> Result<(), LspError> {
        let Some(include_text) = self.save_options() else {
            return Ok(());
        };
        let Some(text) = self.synced_text(path) else {
            return Ok(());
        };
        self.note_save();
        send_save(&self.conn, path, include_text.then_some(text))
    }

    pub(super) fn note_save(&self) {
        let mut inner = self.state.lock();
        inner.seq += 1;
        inner.save_seq = inner.seq;
    }

    pub(super) fn sync_inner(
        &self,
        path: &Path,
        text: &str,
        language_id: &str,
        save: bool,
    ) -> Result<SyncTicket, LspError> {
        self.touch();
        let mut docs = self.docs_lock();
        let seq_before = self.state.lock().seq;
        if let Some(doc) = docs.get(path).filter(|doc| doc.text == text) {
            return Ok(SyncTicket {
                path: path.to_path_buf(),
                version: doc.version,
                sent_at: Instant::now(),
                changed_at: doc.sent_at,
                seq_before: doc.seq_before,
                opened: doc.version == 1,
                recheck: false,
            });
        }
        let sent_at = Instant::now();
        let version = match docs.get_mut(path) {
            Some(doc) => {
                doc.version += 1;
                doc.text = text.to_owned();
                doc.seq_before = seq_before;
                doc.sent_at = sent_at;
                send_change(&self.conn, path, doc.version, text)?;
                doc.version
            }
            None => {
                self.conn
                    .notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                        text_document: TextDocumentItem {
                            uri: file_uri(path),
                            language_id: language_id.to_owned(),
                            version: 1,
                            text: text.to_owned(),
                        },
                    })?;
                docs.insert(
                    path.to_path_buf(),
                    Doc {
                        version: 1,
                        text: text.to_owned(),
                        language_id: language_id.to_owned(),
                        seq_before,
                        sent_at,
                    },
                );
                1
            }
        };
        if let Some(include_text) = self.save_options().filter(|_| save) {
            self.note_save();
            send_save(&self.conn, path, include_text.then(|| text.to_owned()))?;
        }
        Ok(SyncTicket {
            path: path.to_path_buf(),
            version,
            sent_at,
            changed_at: sent_at,
            seq_before,
            opened: version == 1,
            recheck: false,
        })
    }

    /// Closes and opens `path` again with the text the server has, under the next version:
    /// the server builds it afresh and publishes for that version. `None` when it is not
    /// open. (A change to the same text would be skipped: servers publish nothing for it.)
    pub(super) fn reopen(&self, path: &Path) -> Option<i64> {
        let mut docs = self.docs_lock();
        let doc = docs.get_mut(path)?;
        let version = i32::try_from(doc.version + 1).ok()?;
        send_close(&self.conn, path).ok()?;
        doc.version += 1;
        doc.sent_at = Instant::now();
        self.conn
            .notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                text_document: TextDocumentItem {
                    uri: file_uri(path),
                    language_id: doc.language_id.clone(),
                    version,
                    text: doc.text.clone(),
                },
            })
            .ok()?;
        Some(doc.version)
    }

    /// The number of publishes received so far: a later publish has a higher sequence
    /// number. Taken before a change, it lets [`LanguageServer::recheck`] wait for what the
    /// server publishes about other files after that change.
    pub fn publish_seq(&self) -> u64 {
        self.state.lock().seq
    }

    /// A ticket that waits for the diagnostics of an open document whose own text did not
    /// change, as they stand after a change of another file (a dependent of a written file):
    /// a pull is made afresh; a push counts when it arrived after publish number `since`.
    /// `None` when the document is not open.
    pub fn recheck(&self, path: &Path, since: u64) -> Option<SyncTicket> {
        self.touch();
        let docs = self.docs_lock();
        let doc = docs.get(path)?;
        let now = Instant::now();
        Some(SyncTicket {
            path: path.to_path_buf(),
            version: doc.version,
            sent_at: now,
            changed_at: now,
            seq_before: since,
            opened: false,
            recheck: true,
        })
    }

    /// Sends the open document `path` again as a change (same text, next version), so that a
    /// server that re-checks only what changed checks it again
    /// ([`crate::table::ServerSpec::recheck_by_change`]); `None` when it is not open.
    pub fn resend(&self, path: &Path) -> Result<Option<SyncTicket>, LspError> {
        self.touch();
        let seq_before = self.state.lock().seq;
        let mut docs = self.docs_lock();
        let Some(doc) = docs.get_mut(path) else {
            return Ok(None);
        };
        doc.version += 1;
        doc.seq_before = seq_before;
        let now = Instant::now();
        doc.sent_at = now;
        send_change(&self.conn, path, doc.version, &doc.text)?;
        Ok(Some(SyncTicket {
            path: path.to_path_buf(),
            version: doc.version,
            sent_at: now,
            changed_at: now,
            seq_before,
            opened: false,
            recheck: false,
        }))
    }

    /// Makes the server's copy of `path` match `text` if it differs (or is not open).
    /// No `didSave` is sent: the text is what the disk holds.
    pub fn ensure_synced(
        &self,
        path: &Path,
        text: &str,
        language_id: &str,
    ) -> Result<(), LspError> {
        self.sync_unsaved(path, text, language_id).map(|_| ())
    }

    /// `Some(include_text)` when the server wants `didSave` (declared, or registered as
    /// rust-analyzer does).
    pub(super) fn save_options(&self) -> Option<bool> {
        if let Some(include_text) = self.capabilities.save() {
            return Some(include_text);
        }
        self.state
            .lock()
            .registrations
            .values()
            .find(|(method, _)| method == DidSaveTextDocument::METHOD)
            .map(|(_, options)| {
                serde_json::from_value::<lsp_types::TextDocumentSaveRegistrationOptions>(
                    options.clone(),
                )
                .ok()
                .and_then(|options| options.include_text)
                .unwrap_or(false)
            })
    }

    /// Notes that the server was just told of files changed on disk (watched-file events,
    /// open documents synced from the disk): what it published before about an open document
    /// may no longer hold, although that document's own text did not change.
    pub fn note_disk_change(&self) {
        let mut inner = self.state.lock();
        inner.disk_change_seq = inner.seq;
    }

    /// Whether the last list published for `path` came before the server was last told of a
    /// change on disk ([`LanguageServer::note_disk_change`]): unless its text changes, the
    /// document has to be checked again for a list that is current.
    pub fn published_before_disk_change(&self, path: &Path) -> bool {
        let inner = self.state.lock();
        inner
            .published
            .get(path)
            .is_some_and(|published| published.seq <= inner.disk_change_seq)
    }

    /// Closes `path` (a deleted file).
    pub fn close(&self, path: &Path) {
        if self.docs_lock().remove(path).is_some() {
            let _ = send_close(&self.conn, path);
        }
        let mut inner = self.state.lock();
        inner.published.remove(path);
        inner.pulled.remove(path);
        inner.pulled_raw.remove(path);
    }
}

/// A full-text `didChange` to `version`.
pub(super) fn send_change(
    conn: &Connection,
    path: &Path,
    version: i64,
    text: &str,
) -> Result<(), LspError> {
    conn.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
        text_document: VersionedTextDocumentIdentifier::new(file_uri(path), lsp_version(version)),
        content_changes: vec![TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: text.to_owned(),
        }],
    })
}

/// `didSave`, with the text when the server asked for it.
pub(super) fn send_save(
    conn: &Connection,
    path: &Path,
    text: Option<String>,
) -> Result<(), LspError> {
    conn.notify::<DidSaveTextDocument>(DidSaveTextDocumentParams {
        text_document: TextDocumentIdentifier::new(file_uri(path)),
        text,
    })
}

pub(super) fn send_close(conn: &Connection, path: &Path) -> Result<(), LspError> {
    conn.notify::<DidCloseTextDocument>(DidCloseTextDocumentParams {
        text_document: TextDocumentIdentifier::new(file_uri(path)),
    })
}

/// A document version as LSP's `integer` (versions count up from 1).
pub(super) fn lsp_version(version: i64) -> i32 {
    i32::try_from(version).unwrap_or(i32::MAX)
}
