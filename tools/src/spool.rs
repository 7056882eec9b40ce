//! Tool results too large to hold as a [`serde_json::Value`] (every match of a search over a
//! big tree): the tool serializes the elements of the big array itself, as it produces them,
//! and the writers of `cc-harness call` and the MCP server copy those bytes out without
//! parsing them again.
//!
//! - A [`JsonSpool`] takes runs of elements, each compact JSON followed by a newline (compact
//!   JSON never holds a raw newline, so the newline is an unambiguous separator). It keeps
//!   them in memory while they are small and moves them to an unnamed temporary file beyond
//!   [`MEMORY_LIMIT`], so the memory a result takes stays bounded whatever its size. Runs may
//!   be appended from many threads at once.
//! - A [`SpooledArray`] names which runs, in which order, make one array of the result; the
//!   runs of a spool may be appended in any order (as parallel workers finish) and be put in
//!   order afterwards.
//! - A tool returns the array in [`crate::ToolOutput::spooled`], beside the small members in
//!   `value`; [`JsonPieces`] writes the whole object out piece by piece, in one of two
//!   [`JsonLayout`]s, and [`crate::ToolOutput::materialize`] builds the `Value` for a caller
//!   that wants one.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Map, Value};

/// Bytes a spool holds in memory before it moves them to a temporary file.
pub const MEMORY_LIMIT: usize = 1 << 20;

/// How many bytes a writer or reader takes from a spool at a time.
const BLOCK: usize = 256 << 10;

/// Appends `value` to `buffer` as one spooled element: compact JSON and a newline.
pub fn push_element(buffer: &mut Vec<u8>, value: &impl Serialize) -> serde_json::Result<()> {
    serde_json::to_writer(&mut *buffer, value)?;
    buffer.push(b'\n');
    Ok(())
}

/// Where a spool's bytes are.
enum Store {
    Memory(Vec<u8>),
    File { file: std::fs::File, len: u64 },
}

/// Append-only storage of serialized elements, shared by the threads that fill it (see the
/// module documentation).
pub struct JsonSpool {
    store: Mutex<Store>,
}

impl std::fmt::Debug for JsonSpool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, len) = match &*self.lock() {
            Store::Memory(bytes) => ("memory", bytes.len() as u64),
            Store::File { len, .. } => ("file", *len),
        };
        f.debug_struct("JsonSpool")
            .field("store", &kind)
            .field("len", &len)
            .finish()
    }
}

impl Default for JsonSpool {
    fn default() -> Self {
        JsonSpool {
            store: Mutex::new(Store::Memory(Vec::new())),
        }
    }
}

/// Elements appended to a spool in one piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpoolRun {
    offset: u64,
    len: u64,
    count: usize,
}

impl SpoolRun {
    /// How many elements the run holds.
    pub fn count(&self) -> usize {
        self.count
    }
}

impl JsonSpool {
    /// An empty spool, in memory until it grows past [`MEMORY_LIMIT`].
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        // A poisoned store only means a panic in another writer; what it holds is whole
        // runs, each appended under the lock.
        cc_process::lock(&self.store)
    }

    /// Appends `count` elements (each compact JSON followed by `\n`, see [`push_element`]).
    pub fn append(&self, elements: &[u8], count: usize) -> io::Result<SpoolRun> {
        let mut store = self.lock();
        if let Store::Memory(bytes) = &*store {
            if bytes.len() + elements.len() > MEMORY_LIMIT {
                let mut file = tempfile::tempfile()?;
                file.write_all(bytes)?;
                let len = bytes.len() as u64;
                *store = Store::File { file, len };
            }
        }
        let offset = match &mut *store {
            Store::Memory(bytes) => {
                let offset = bytes.len() as u64;
                bytes.extend_from_slice(elements);
                offset
            }
            Store::File { file, len } => {
                let offset = *len;
                file.write_all(elements)?;
                *len += elements.len() as u64;
                offset
            }
        };
        Ok(SpoolRun {
            offset,
            len: elements.len() as u64,
            count,
        })
    }

    /// Reads up to `max` bytes at `offset`.
    fn read(&self, offset: u64, max: usize) -> io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let store = self.lock();
        match &*store {
            Store::Memory(bytes) => {
                let start = usize::try_from(offset)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                let end = start.saturating_add(max).min(bytes.len());
                Ok(bytes[start..end].to_vec())
            }
            Store::File { file, .. } => {
                let mut buffer = vec![0; max];
                let mut filled = 0;
                while filled < max {
                    match file.read_at(&mut buffer[filled..], offset + filled as u64) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                        Err(error) => return Err(error),
                    }
                }
                if filled < max {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the spool file is shorter than what was written to it",
                    ));
                }
                Ok(buffer)
            }
        }
    }
}

/// One JSON array of a result: runs of a [`JsonSpool`], in order.
#[derive(Clone)]
pub struct SpooledArray {
    spool: Arc<JsonSpool>,
    runs: Vec<SpoolRun>,
    len: usize,
}

impl std::fmt::Debug for SpooledArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpooledArray")
            .field("len", &self.len)
            .field("runs", &self.runs.len())
            .finish()
    }
}

/// Two arrays are equal when they hold the same elements (a spool that cannot be read
/// equals nothing).
impl PartialEq for SpooledArray {
    fn eq(&self, other: &Self) -> bool {
        if self.len != other.len {
            return false;
        }
        let mut mine = self.elements();
        let mut theirs = other.elements();
        loop {
            match (mine.next(), theirs.next()) {
                (None, None) => return true,
                (Some(Ok(a)), Some(Ok(b))) if a == b => {}
                _ => return false,
            }
        }
    }
}

impl SpooledArray {
    /// An empty array over `spool`.
    pub fn new(spool: Arc<JsonSpool>) -> Self {
        SpooledArray {
            spool,
            runs: Vec::new(),
            len: 0,
        }
    }

    /// How many elements it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends the first `take` elements of `run` (a run of this array's spool).
    pub fn push(&mut self, run: SpoolRun, take: usize) -> io::Result<()> {
        let take = take.min(run.count);
        if take == 0 {
            return Ok(());
        }
        let run = if take == run.count {
            run
        } else {
            // Find where the `take`-th element ends.
            let mut seen = 0;
            let mut at = 0u64;
            let mut end = None;
            while end.is_none() && at < run.len {
                let want = usize::try_from(run.len - at).unwrap_or(BLOCK).min(BLOCK);
                let block = self.spool.read(run.offset + at, want)?;
                for newline in memchr::memchr_iter(b'\n', &block) {
                    seen += 1;
                    if seen == take {
                        end = Some(at + newline as u64 + 1);
                        break;
                    }
                }
                at += block.len() as u64;
            }
            SpoolRun {
                offset: run.offset,
                len: end.unwrap_or(run.len),
                count: take,
            }
        };
        self.len += run.count;
        self.runs.push(run);
        Ok(())
    }

    /// The raw bytes of the runs, in blocks of at most [`BLOCK`] bytes (elements each
    /// followed by `\n`; a block may end inside an element).
    fn blocks(&self) -> Blocks {
        Blocks {
            spool: self.spool.clone(),
            runs: self.runs.clone().into_iter(),
            current: None,
        }
    }

    /// Each element's compact JSON, in order.
    pub fn elements(&self) -> impl Iterator<Item = io::Result<Vec<u8>>> {
        let mut blocks = self.blocks();
        let mut pending: Vec<u8> = Vec::new();
        let mut ready: std::collections::VecDeque<Vec<u8>> = std::collections::VecDeque::new();
        std::iter::from_fn(move || loop {
            if let Some(element) = ready.pop_front() {
                return Some(Ok(element));
            }
            match blocks.next()? {
                Err(error) => return Some(Err(error)),
                Ok(block) => {
                    let mut start = 0;
                    for newline in memchr::memchr_iter(b'\n', &block) {
                        pending.extend_from_slice(&block[start..newline]);
                        ready.push_back(std::mem::take(&mut pending));
                        start = newline + 1;
                    }
                    pending.extend_from_slice(&block[start..]);
                }
            }
        })
    }

    /// The array as a `Value`, every element parsed.
    pub fn to_value(&self) -> io::Result<Value> {
        let mut items = Vec::with_capacity(self.len);
        for element in self.elements() {
            items.push(serde_json::from_slice(&element?).map_err(io::Error::other)?);
        }
        Ok(Value::Array(items))
    }
}

/// See [`SpooledArray::blocks`].
struct Blocks {
    spool: Arc<JsonSpool>,
    runs: std::vec::IntoIter<SpoolRun>,
    /// The run being read and how far.
    current: Option<(SpoolRun, u64)>,
}

impl Iterator for Blocks {
    type Item = io::Result<Vec<u8>>;

    fn next(&mut self) -> Option<io::Result<Vec<u8>>> {
        loop {
            match &mut self.current {
                Some((run, at)) if *at < run.len => {
                    let want = usize::try_from(run.len - *at).unwrap_or(BLOCK).min(BLOCK);
                    let read = self.spool.read(run.offset + *at, want);
                    *at += want as u64;
                    return Some(read);
                }
                _ => self.current = Some((self.runs.next()?, 0)),
            }
        }
    }
}

/// How a result is written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonLayout {
    /// On one line (an MCP message): what `serde_json::to_vec` writes.
    Compact,
    /// Indented as `serde_json::to_string_pretty` indents, except that each element of a
    /// spooled array is one compact line (`cc-harness call`).
    Pretty,
}

/// A result written out piece by piece (see [`crate::ToolOutput::json_pieces`]): the small
/// members first, then each spooled array, read from its spool a block at a time.
pub struct JsonPieces {
    layout: JsonLayout,
    /// The serialized small members, not yet sent.
    head: Option<Vec<u8>>,
    /// Whether a member was written before the next one (so it needs a comma).
    any_member: bool,
    members: std::collections::VecDeque<(String, SpooledArray)>,
    /// The array being written.
    current: Option<ArrayWriter>,
    /// Whether the closing brace is still to come.
    closing: bool,
}

impl std::fmt::Debug for JsonPieces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonPieces")
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

struct ArrayWriter {
    blocks: Blocks,
    /// No element written yet.
    first: bool,
    /// The next byte starts an element.
    at_start: bool,
}

impl JsonPieces {
    /// The pieces of the object `value` (the small members) plus `spooled` (each array a
    /// member after them). A `value` that is not an object is the member `result`.
    pub(crate) fn new(
        value: &Value,
        spooled: &[(String, SpooledArray)],
        layout: JsonLayout,
    ) -> serde_json::Result<Self> {
        let render = |value: &Value| match layout {
            JsonLayout::Compact => serde_json::to_vec(value),
            JsonLayout::Pretty => serde_json::to_vec_pretty(value),
        };
        if spooled.is_empty() {
            return Ok(JsonPieces {
                layout,
                head: Some(render(value)?),
                any_member: false,
                members: Default::default(),
                current: None,
                closing: false,
            });
        }
        let mut small = match value {
            Value::Object(object) => object.clone(),
            other => {
                let mut object = Map::new();
                object.insert("result".into(), other.clone());
                object
            }
        };
        // A spooled array replaces a small member of the same name.
        for (key, _) in spooled {
            small.remove(key);
        }
        let any_member = !small.is_empty();
        let mut head = render(&Value::Object(small))?;
        // Open the object again: drop `}` (compact) or `\n}` (pretty, when not empty).
        head.pop();
        if layout == JsonLayout::Pretty && any_member {
            head.pop();
        }
        Ok(JsonPieces {
            layout,
            head: Some(head),
            any_member,
            members: spooled.iter().cloned().collect(),
            current: None,
            closing: true,
        })
    }

    /// Writes every piece to `out`.
    pub fn write_to(self, out: &mut impl Write) -> io::Result<()> {
        for piece in self {
            out.write_all(&piece?)?;
        }
        Ok(())
    }

    /// The next block of an array, its newlines turned into the layout's separators.
    fn array_piece(layout: JsonLayout, writer: &mut ArrayWriter, block: &[u8]) -> Vec<u8> {
        let (open, separator): (&[u8], &[u8]) = match layout {
            JsonLayout::Compact => (b"", b","),
            JsonLayout::Pretty => (b"\n    ", b",\n    "),
        };
        let mut out = Vec::with_capacity(block.len() + 64);
        let mut start = 0;
        let segments = memchr::memchr_iter(b'\n', block)
            .map(Some)
            .chain(std::iter::once(None));
        for newline in segments {
            let end = newline.unwrap_or(block.len());
            let segment = &block[start..end];
            if !segment.is_empty() {
                if writer.at_start {
                    out.extend_from_slice(if writer.first { open } else { separator });
                    writer.first = false;
                    writer.at_start = false;
                }
                out.extend_from_slice(segment);
            }
            if newline.is_some() {
                writer.at_start = true;
            }
            start = end + 1;
        }
        out
    }
}

impl Iterator for JsonPieces {
    type Item = io::Result<Vec<u8>>;

    fn next(&mut self) -> Option<io::Result<Vec<u8>>> {
        if let Some(head) = self.head.take() {
            return Some(Ok(head));
        }
        loop {
            if let Some(writer) = &mut self.current {
                match writer.blocks.next() {
                    Some(Ok(block)) => {
                        let piece = Self::array_piece(self.layout, writer, &block);
                        if piece.is_empty() {
                            continue;
                        }
                        return Some(Ok(piece));
                    }
                    Some(Err(error)) => {
                        self.current = None;
                        self.members.clear();
                        self.closing = false;
                        return Some(Err(error));
                    }
                    None => {
                        let close: &[u8] = match (self.layout, writer.first) {
                            (JsonLayout::Pretty, false) => b"\n  ]",
                            _ => b"]",
                        };
                        self.current = None;
                        return Some(Ok(close.to_vec()));
                    }
                }
            }
            if let Some((key, array)) = self.members.pop_front() {
                let mut prefix = Vec::new();
                if self.any_member {
                    prefix.push(b',');
                }
                if self.layout == JsonLayout::Pretty {
                    prefix.extend_from_slice(b"\n  ");
                }
                // A key always serializes.
                let _ = serde_json::to_writer(&mut prefix, &key);
                prefix.extend_from_slice(match self.layout {
                    JsonLayout::Compact => b":[",
                    JsonLayout::Pretty => b": [",
                });
                self.any_member = true;
                self.current = Some(ArrayWriter {
                    blocks: array.blocks(),
                    first: true,
                    at_start: true,
                });
                return Some(Ok(prefix));
            }
            if self.closing {
                self.closing = false;
                let close: &[u8] = match self.layout {
                    JsonLayout::Compact => b"}",
                    JsonLayout::Pretty => b"\n}",
                };
                return Some(Ok(close.to_vec()));
            }
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn spooled(spool: &Arc<JsonSpool>, groups: &[Vec<Value>]) -> SpooledArray {
        let mut array = SpooledArray::new(spool.clone());
        for group in groups {
            let mut buffer = Vec::new();
            for item in group {
                push_element(&mut buffer, item).unwrap();
            }
            let run = spool.append(&buffer, group.len()).unwrap();
            array.push(run, group.len()).unwrap();
        }
        array
    }

    fn written(value: &Value, spooled: &[(String, SpooledArray)], layout: JsonLayout) -> String {
        let mut out = Vec::new();
        JsonPieces::new(value, spooled, layout)
            .unwrap()
            .write_to(&mut out)
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn without_spooled_members_the_layouts_are_serde_jsons() {
        let value = json!({"b": [1, 2], "a": {"x": "y\nz"}, "e": [], "o": {}});
        assert_eq!(
            written(&value, &[], JsonLayout::Compact),
            serde_json::to_string(&value).unwrap()
        );
        assert_eq!(
            written(&value, &[], JsonLayout::Pretty),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }

    #[test]
    fn spooled_members_come_after_the_small_ones_in_both_layouts() {
        let spool = Arc::new(JsonSpool::new());
        let items = spooled(
            &spool,
            &[
                vec![json!({"a": "1\n2"}), json!(2)],
                vec![],
                vec![json!([3])],
            ],
        );
        let empty = SpooledArray::new(spool.clone());
        let members = vec![("items".to_owned(), items), ("none".to_owned(), empty)];
        let value = json!({"total": 3, "items": "replaced"});
        assert_eq!(
            written(&value, &members, JsonLayout::Compact),
            r#"{"total":3,"items":[{"a":"1\n2"},2,[3]],"none":[]}"#
        );
        assert_eq!(
            written(&value, &members, JsonLayout::Pretty),
            "{\n  \"total\": 3,\n  \"items\": [\n    {\"a\":\"1\\n2\"},\n    2,\n    [3]\n  ],\n  \"none\": []\n}"
        );
        assert_eq!(
            written(&json!({}), &members[1..], JsonLayout::Pretty),
            "{\n  \"none\": []\n}"
        );
        assert_eq!(
            written(&json!({}), &members[..1], JsonLayout::Compact),
            r#"{"items":[{"a":"1\n2"},2,[3]]}"#
        );
    }

    #[test]
    fn a_run_can_be_cut_after_any_element() {
        let spool = Arc::new(JsonSpool::new());
        let mut buffer = Vec::new();
        for i in 0..5 {
            push_element(&mut buffer, &json!({"i": i})).unwrap();
        }
        let run = spool.append(&buffer, 5).unwrap();
        let mut array = SpooledArray::new(spool);
        array.push(run, 2).unwrap();
        array.push(run, 0).unwrap();
        array.push(run, 9).unwrap();
        assert_eq!(array.len(), 7);
        assert_eq!(
            array.to_value().unwrap(),
            json!([{"i": 0}, {"i": 1}, {"i": 0}, {"i": 1}, {"i": 2}, {"i": 3}, {"i": 4}])
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Whatever the sizes (past the memory limit, so through the temporary file, and
        /// runs longer than a block), both layouts parse back to the materialized value.
        #[test]
        fn both_layouts_parse_back_to_the_materialized_value(
            groups in proptest::collection::vec(
                proptest::collection::vec((any::<u32>(), "[a-z\n\"\\\\é]{0,40}", 0usize..3), 0..40),
                0..12,
            ),
            big in 0usize..3,
        ) {
            let spool = Arc::new(JsonSpool::new());
            let groups: Vec<Vec<Value>> = groups
                .into_iter()
                .map(|group| {
                    group
                        .into_iter()
                        .map(|(n, s, size)| {
                            let filler = "x".repeat(size * big * 20_000);
                            json!({"n": n, "s": s, "f": filler})
                        })
                        .collect()
                })
                .collect();
            let array = spooled(&spool, &groups);
            let expected: Vec<Value> = groups.into_iter().flatten().collect();
            prop_assert_eq!(array.to_value().unwrap(), Value::Array(expected.clone()));
            let members = vec![("m".to_owned(), array)];
            let whole = json!({"k": 1, "m": expected});
            for layout in [JsonLayout::Compact, JsonLayout::Pretty] {
                let text = written(&json!({"k": 1}), &members, layout);
                let parsed: Value = serde_json::from_str(&text).unwrap();
                prop_assert_eq!(&parsed, &whole);
                if layout == JsonLayout::Compact {
                    prop_assert!(!text.contains('\n'));
                }
            }
        }
    }
}
