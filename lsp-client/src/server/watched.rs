//! Changes to files the server does not have open: `workspace/didChangeWatchedFiles` for the
//! globs the server registered (`client/registerCapability`), or for its family's files when
//! it registered none; and open documents whose bytes changed on disk, synced again (or
//! closed when they are gone), since a server never looks at the disk for a file it has open.

use super::sync::send_change;
use super::LanguageServer;
use crate::error::LspError;
use crate::uri::{file_uri, uri_path};
use globset::{Glob, GlobBuilder, GlobMatcher};
use lsp_types::notification::{DidChangeWatchedFiles, Notification};
use lsp_types::{
    DidChangeWatchedFilesParams, DidChangeWatchedFilesRegistrationOptions, FileChangeType,
    FileEvent, GlobPattern, OneOf, WatchKind,
};
use std::path::{Path, PathBuf};

/// What happened to one file, as the server is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchedChange {
    /// It appeared.
    Created,
    /// Its content changed.
    Changed,
    /// It is gone (a folder: everything in it).
    Deleted,
}

impl WatchedChange {
    fn lsp(self) -> FileChangeType {
        match self {
            WatchedChange::Created => FileChangeType::CREATED,
            WatchedChange::Changed => FileChangeType::CHANGED,
            WatchedChange::Deleted => FileChangeType::DELETED,
        }
    }

    fn watch_kind(self) -> WatchKind {
        match self {
            WatchedChange::Created => WatchKind::Create,
            WatchedChange::Changed => WatchKind::Change,
            WatchedChange::Deleted => WatchKind::Delete,
        }
    }
}

/// One registered (or assumed) watcher: a glob and the kinds it wants.
#[derive(Debug, Clone)]
struct Watch {
    matcher: GlobMatcher,
    /// Set for a relative pattern: the glob is matched against the path below it.
    base: Option<PathBuf>,
    kind: WatchKind,
}

impl Watch {
    fn wants(&self, path: &Path, root: &Path, change: WatchedChange) -> bool {
        if !self.kind.contains(change.watch_kind()) {
            return false;
        }
        match &self.base {
            Some(base) => path
                .strip_prefix(base)
                .is_ok_and(|rest| self.matcher.is_match(rest)),
            // A plain pattern is matched against the whole path; one written relative to
            // the workspace (`src/**/*.py`) against the path below the root too.
            None => {
                self.matcher.is_match(path)
                    || path
                        .strip_prefix(root)
                        .is_ok_and(|rest| self.matcher.is_match(rest))
            }
        }
    }
}

/// An LSP glob (`*` within a segment, `**`, `{a,b}`, `[…]`, `?`).
fn glob(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g: Glob| g.compile_matcher())
}

impl LanguageServer {
    /// Each watcher the server registered for `workspace/didChangeWatchedFiles`, as (glob,
    /// base folder of a relative pattern, kinds); `None` when it registered none.
    fn registered_watchers(&self) -> Option<Vec<(String, Option<PathBuf>, WatchKind)>> {
        let inner = self.state.lock();
        let mut watchers = Vec::new();
        let mut any = false;
        for (method, options) in inner.registrations.values() {
            if method != DidChangeWatchedFiles::METHOD {
                continue;
            }
            any = true;
            let Ok(options) =
                serde_json::from_value::<DidChangeWatchedFilesRegistrationOptions>(options.clone())
            else {
                continue;
            };
            for watcher in options.watchers {
                let kind = watcher.kind.unwrap_or(WatchKind::all());
                let (pattern, base) = match watcher.glob_pattern {
                    GlobPattern::String(pattern) => (pattern, None),
                    GlobPattern::Relative(relative) => {
                        let base = match &relative.base_uri {
                            OneOf::Left(folder) => uri_path(&folder.uri),
                            OneOf::Right(uri) => uri_path(uri),
                        };
                        (relative.pattern, base)
                    }
                };
                watchers.push((pattern, base, kind));
            }
        }
        any.then_some(watchers)
    }

    /// The registered watchers with their globs compiled; `None` when it registered none.
    fn registered_watches(&self) -> Option<Vec<Watch>> {
        let watchers = self.registered_watchers()?;
        Some(
            watchers
                .into_iter()
                .filter_map(|(pattern, base, kind)| {
                    glob(&pattern).map(|matcher| Watch {
                        matcher,
                        base,
                        kind,
                    })
                })
                .collect(),
        )
    }

    /// The glob patterns the server registered for `workspace/didChangeWatchedFiles` (a
    /// relative pattern as `BASE/PATTERN`); `None` when it registered none, so it is told of
    /// its family's files.
    pub fn watched_globs(&self) -> Option<Vec<String>> {
        let mut globs: Vec<String> = self
            .registered_watchers()?
            .into_iter()
            .map(|(pattern, base, _)| match base {
                Some(base) => format!("{}/{pattern}", base.display()),
                None => pattern,
            })
            .collect();
        globs.sort();
        Some(globs)
    }

    /// Tells the server about `changes` to files it may not have open: the ones its
    /// registered watchers want, or — for a server that registered none — the files of its
    /// family (`fallback`: extensions and file names such as `go.mod`). Paths outside its
    /// root are left out. Returns how many were sent.
    pub fn files_changed(
        &self,
        changes: &[(PathBuf, WatchedChange)],
        fallback: &[String],
    ) -> Result<usize, LspError> {
        let watches = self.registered_watches();
        let root = self.root();
        let open = if self.spec().open_files_by_sync_only {
            self.open_documents()
        } else {
            Vec::new()
        };
        let events: Vec<FileEvent> = changes
            .iter()
            .filter(|(path, _)| path.starts_with(root))
            .filter(|(path, change)| *change == WatchedChange::Deleted || !open.contains(path))
            .filter(|(path, change)| match &watches {
                Some(watches) => watches.iter().any(|w| w.wants(path, root, *change)),
                None => family_file(path, fallback),
            })
            .map(|(path, change)| FileEvent::new(file_uri(path), change.lsp()))
            .collect();
        if events.is_empty() {
            return Ok(0);
        }
        let sent = events.len();
        self.conn
            .notify::<DidChangeWatchedFiles>(DidChangeWatchedFilesParams { changes: events })?;
        Ok(sent)
    }

    /// Makes the open documents among `paths` hold what the disk holds: a full-text
    /// `didChange` for one whose bytes differ from the text last sent, `didClose` for one
    /// that is gone. Returns the paths resynced or closed.
    pub fn resync_from_disk(&self, paths: &[PathBuf]) -> Vec<PathBuf> {
        let mut touched = Vec::new();
        for path in paths {
            let Some(synced) = self.synced_text(path) else {
                continue;
            };
            match std::fs::read(path) {
                Ok(bytes) => {
                    // Not text any more: the server keeps the last text it had.
                    let Ok(text) = String::from_utf8(bytes) else {
                        continue;
                    };
                    if text == synced {
                        continue;
                    }
                    let mut docs = self.docs_lock();
                    let Some(doc) = docs.get_mut(path) else {
                        continue;
                    };
                    let seq_before = self.state.lock().seq;
                    doc.version += 1;
                    doc.text = text;
                    doc.seq_before = seq_before;
                    doc.sent_at = tokio::time::Instant::now();
                    tracing::debug!(server = %self.spec.name, path = %path.display(), version = doc.version, seq_before, "an open document changed on disk: synced");
                    if send_change(&self.conn, path, doc.version, &doc.text).is_ok() {
                        touched.push(path.clone());
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    tracing::debug!(server = %self.spec.name, path = %path.display(), "an open document is gone from disk: closed");
                    self.close(path);
                    touched.push(path.clone());
                }
                Err(_) => {}
            }
        }
        touched
    }
}

/// Whether `path` is one of a family's files: its extension, or its file name, is in
/// `fallback`.
fn family_file(path: &Path, fallback: &[String]) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    fallback
        .iter()
        .any(|f| f == name || f.eq_ignore_ascii_case(extension))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lsp_globs_match_as_servers_mean_them() {
        let root = Path::new("/w");
        let watch = |pattern: &str, base: Option<&str>| Watch {
            matcher: glob(pattern).unwrap(),
            base: base.map(PathBuf::from),
            kind: WatchKind::all(),
        };
        // pyright: a plain pattern over every folder.
        let py = watch("**/*.{py,pyi}", None);
        assert!(py.wants(Path::new("/w/src/a/b.py"), root, WatchedChange::Created));
        assert!(!py.wants(Path::new("/w/src/a/b.pyc"), root, WatchedChange::Created));
        // rust-analyzer: absolute patterns.
        let rs = watch("/w/**/*.rs", None);
        assert!(rs.wants(Path::new("/w/src/lib.rs"), root, WatchedChange::Changed));
        // gopls: relative to the workspace folder.
        let go = watch("**/*.{go,mod,sum,work}", Some("/w"));
        assert!(go.wants(Path::new("/w/go.mod"), root, WatchedChange::Changed));
        assert!(!go.wants(Path::new("/elsewhere/x.go"), root, WatchedChange::Changed));
        // `*` stays within one folder.
        let top = watch("*.json", Some("/w"));
        assert!(top.wants(Path::new("/w/tsconfig.json"), root, WatchedChange::Changed));
        assert!(!top.wants(
            Path::new("/w/a/tsconfig.json"),
            root,
            WatchedChange::Changed
        ));
        let creates = Watch {
            kind: WatchKind::Create,
            ..watch("**/*.c", None)
        };
        assert!(!creates.wants(Path::new("/w/a.c"), root, WatchedChange::Changed));
        assert!(family_file(Path::new("/w/a/x.TS"), &["ts".into()]));
        assert!(family_file(
            Path::new("/w/go.mod"),
            &["go".into(), "go.mod".into()]
        ));
    }
}
