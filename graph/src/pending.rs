//! The references of the files a build extracted, waiting for resolution: resolution needs
//! every file's definitions first, so they wait until the last file is read. A large build
//! writes them to a file beside the index and reads them back a chunk at a time (a
//! kernel-size tree has millions of references); a small update keeps the same bytes in
//! memory. Names are shared: each distinct name is stored once.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::{Buf, BufMut};

use crate::index::LiteralArgIn;
use crate::model::{Pos, RefKind};
use crate::resolve::RefIn;
use crate::table::{DefId, FileId};

const NONE_NAME: u32 = u32::MAX;
const NONE_ID: i64 = i64::MIN;

enum Sink {
    Memory(Vec<u8>),
    File(BufWriter<std::fs::File>),
}

/// References written in extraction order.
pub(crate) struct PendingRefs {
    names: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, u32>,
    sink: Sink,
    /// The spill file, removed when the references are dropped.
    path: Option<PathBuf>,
    files: Vec<FileId>,
    record: Vec<u8>,
}

impl PendingRefs {
    fn with_sink(sink: Sink, path: Option<PathBuf>) -> Self {
        PendingRefs {
            names: Vec::new(),
            ids: HashMap::new(),
            sink,
            path,
            files: Vec::new(),
            record: Vec::new(),
        }
    }

    /// Kept in memory.
    pub(crate) fn in_memory() -> Self {
        Self::with_sink(Sink::Memory(Vec::new()), None)
    }

    /// Written to `path` (replaced if it exists: a build holds the index's write lock).
    pub(crate) fn spilled_to(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::create(path)?;
        Ok(Self::with_sink(
            Sink::File(BufWriter::with_capacity(1 << 20, file)),
            Some(path.to_owned()),
        ))
    }

    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(NONE_NAME - 1);
        let shared: Arc<str> = Arc::from(name);
        self.names.push(shared.clone());
        self.ids.insert(shared, id);
        id
    }

    /// The files pushed so far, in order.
    pub(crate) fn files(&self) -> &[FileId] {
        &self.files
    }

    /// One file's references (`enclosing` already the index's ids) and literal arguments.
    pub(crate) fn push<'a>(
        &mut self,
        file: FileId,
        refs: impl ExactSizeIterator<Item = PendingRef<'a>>,
        literals: &[LiteralArgIn],
    ) -> std::io::Result<()> {
        let mut record = std::mem::take(&mut self.record);
        record.clear();
        record.put_i64_le(file.0);
        record.put_u32_le(u32::try_from(refs.len()).unwrap_or(u32::MAX));
        for r in refs {
            let name = self.name_id(r.name);
            let receiver = r.receiver.map_or(NONE_NAME, |s| self.name_id(s));
            record.put_u8(match r.kind {
                RefKind::Call => 0,
                RefKind::Type => 1,
            });
            record.put_u32_le(name);
            record.put_u32_le(receiver);
            record.put_i64_le(r.enclosing.map_or(NONE_ID, |e| e.0));
            record.put_u32_le(r.pos.line);
            record.put_u32_le(r.pos.column);
        }
        record.put_u32_le(u32::try_from(literals.len()).unwrap_or(u32::MAX));
        for (call, argument, member) in literals {
            record.put_u64_le(*call as u64);
            record.put_u32_le(*argument);
            record.put_i64_le(member.0);
        }
        self.files.push(file);
        let written = match &mut self.sink {
            Sink::Memory(bytes) => {
                bytes.put_u64_le(record.len() as u64);
                bytes.extend_from_slice(&record);
                Ok(())
            }
            Sink::File(out) => out
                .write_all(&(record.len() as u64).to_le_bytes())
                .and_then(|()| out.write_all(&record)),
        };
        self.record = record;
        written
    }

    /// Reads the references back, file by file, in the order they were pushed.
    pub(crate) fn into_reader(mut self) -> std::io::Result<PendingReader> {
        let source = match std::mem::replace(&mut self.sink, Sink::Memory(Vec::new())) {
            Sink::Memory(bytes) => Source::Memory(bytes, 0),
            Sink::File(out) => {
                let file = out.into_inner().map_err(|e| e.into_error())?;
                let path = self.path.clone().unwrap_or_default();
                drop(file);
                Source::File(BufReader::with_capacity(
                    1 << 20,
                    std::fs::File::open(path)?,
                ))
            }
        };
        Ok(PendingReader {
            names: std::mem::take(&mut self.names),
            source,
            _spill: self,
        })
    }
}

impl Drop for PendingRefs {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A reference as pushed.
pub(crate) struct PendingRef<'a> {
    pub kind: RefKind,
    pub name: &'a str,
    pub receiver: Option<&'a str>,
    pub enclosing: Option<DefId>,
    pub pos: Pos,
}

enum Source {
    Memory(Vec<u8>, usize),
    File(BufReader<std::fs::File>),
}

/// The pushed files' references, one file at a time.
pub(crate) struct PendingReader {
    names: Vec<Arc<str>>,
    source: Source,
    /// Keeps the spill file until the reader is done (it is removed on drop).
    _spill: PendingRefs,
}

impl PendingReader {
    fn next_record(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        match &mut self.source {
            Source::Memory(bytes, at) => {
                let mut rest = bytes.get(*at..).unwrap_or_default();
                let Ok(len) = rest.try_get_u64_le() else {
                    return Ok(None);
                };
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                let record = rest.get(..len).ok_or_else(truncated)?.to_vec();
                *at += 8 + len;
                Ok(Some(record))
            }
            Source::File(input) => {
                let mut len = [0u8; 8];
                match input.read_exact(&mut len) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                    Err(e) => return Err(e),
                }
                let len = usize::try_from(u64::from_le_bytes(len)).map_err(|_| truncated())?;
                let mut record = vec![0u8; len];
                input.read_exact(&mut record)?;
                Ok(Some(record))
            }
        }
    }

    /// The next file's references and literal arguments.
    #[allow(clippy::type_complexity)]
    pub(crate) fn next_file(
        &mut self,
    ) -> std::io::Result<Option<(FileId, Vec<RefIn>, Vec<LiteralArgIn>)>> {
        let Some(record) = self.next_record()? else {
            return Ok(None);
        };
        let mut input = record.as_slice();
        self.decode(&mut input).map(Some).ok_or_else(truncated)
    }

    fn name(&self, id: u32) -> Option<Arc<str>> {
        self.names.get(usize::try_from(id).ok()?).cloned()
    }

    fn decode(&self, input: &mut &[u8]) -> Option<(FileId, Vec<RefIn>, Vec<LiteralArgIn>)> {
        let file = FileId(input.try_get_i64_le().ok()?);
        let count = input.try_get_u32_le().ok()?;
        let mut refs = Vec::with_capacity(usize::try_from(count).ok()?.min(1 << 20));
        for _ in 0..count {
            let kind = match input.try_get_u8().ok()? {
                0 => RefKind::Call,
                _ => RefKind::Type,
            };
            let name = self.name(input.try_get_u32_le().ok()?)?;
            let receiver = match input.try_get_u32_le().ok()? {
                NONE_NAME => None,
                id => Some(self.name(id)?),
            };
            let enclosing = Some(input.try_get_i64_le().ok()?)
                .filter(|e| *e != NONE_ID)
                .map(DefId);
            let pos = Pos {
                line: input.try_get_u32_le().ok()?,
                column: input.try_get_u32_le().ok()?,
            };
            refs.push(RefIn {
                kind,
                name,
                receiver,
                enclosing,
                pos,
            });
        }
        let count = input.try_get_u32_le().ok()?;
        let mut literals = Vec::with_capacity(usize::try_from(count).ok()?.min(1 << 20));
        for _ in 0..count {
            let call = usize::try_from(input.try_get_u64_le().ok()?).ok()?;
            literals.push((
                call,
                input.try_get_u32_le().ok()?,
                DefId(input.try_get_i64_le().ok()?),
            ));
        }
        Some((file, refs, literals))
    }
}

fn truncated() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "the build's pending references were cut short",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(mut pending: PendingRefs) {
        let names = ["open", "read", "self.read"];
        for file in 1..4i64 {
            let refs: Vec<PendingRef<'_>> = (0..file as u32)
                .map(|i| PendingRef {
                    kind: if i % 2 == 0 {
                        RefKind::Call
                    } else {
                        RefKind::Type
                    },
                    name: names[i as usize % 3],
                    receiver: (i == 1).then_some("self"),
                    enclosing: (i > 0).then_some(DefId(i64::from(i) * 7)),
                    pos: Pos {
                        line: i,
                        column: 2 * i,
                    },
                })
                .collect();
            pending
                .push(FileId(file), refs.into_iter(), &[(0, 1, DefId(file * 10))])
                .unwrap();
        }
        assert_eq!(pending.files(), &[FileId(1), FileId(2), FileId(3)]);
        let mut reader = pending.into_reader().unwrap();
        for file in 1..4i64 {
            let (id, refs, literals) = reader.next_file().unwrap().unwrap();
            assert_eq!(id, FileId(file));
            assert_eq!(refs.len(), file as usize);
            assert_eq!(literals, vec![(0, 1, DefId(file * 10))]);
            for (i, r) in refs.iter().enumerate() {
                assert_eq!(&*r.name, names[i % 3]);
                assert_eq!(r.receiver.as_deref(), (i == 1).then_some("self"));
                assert_eq!(r.enclosing, (i > 0).then_some(DefId(i as i64 * 7)));
                assert_eq!(r.pos.column, 2 * i as u32);
            }
        }
        assert!(reader.next_file().unwrap().is_none());
    }

    #[test]
    fn references_read_back_as_pushed_from_memory_and_from_a_file() {
        round_trip(PendingRefs::in_memory());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pending");
        round_trip(PendingRefs::spilled_to(&path).unwrap());
        assert!(!path.exists(), "the spill file is removed after reading");
    }
}
