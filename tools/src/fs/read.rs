//! `read`: streams a text file and stops at the line limit, at a byte cap, and at a scan
//! budget, so a huge file (a 16 GB sparse file, a minified bundle on one line) costs a bounded
//! amount of memory and time. Over-long lines are cut with a marker naming the byte offset to
//! continue from; FIFOs, devices and sockets are refused before a byte is read.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::FileLimits;
use crate::error::{ErrorKind, ToolError};
use crate::report::files::{CutLine, ReadReport};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, report_output, schema_for, CallContext, Tool, ToolOutput};

/// Lines returned when the caller gives no limit.
const DEFAULT_LIMIT: usize = 2000;

/// `read`: a text file's lines, confined to the workspace root.
#[derive(Debug, Clone)]
pub struct ReadTool {
    root: WorkspaceRoot,
    limits: FileLimits,
}

impl ReadTool {
    /// A `read` tool for `root` with the default [`FileLimits`].
    pub fn new(root: WorkspaceRoot) -> Self {
        ReadTool {
            root,
            limits: FileLimits::default(),
        }
    }

    /// The same tool with other limits.
    pub fn with_limits(mut self, limits: FileLimits) -> Self {
        self.limits = limits;
        self
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File path, relative to the workspace root (or absolute inside it).
    path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// How many lines to return (default 2000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// Start at this byte of the file instead of at a line (0-based), to continue a line
    /// that was cut; overrides `offset`.
    #[serde(default)]
    byte_offset: Option<u64>,
}

/// A line as read: the bytes kept, and whether the line went on past them.
struct Line {
    kept: Vec<u8>,
    /// The line's bytes after `kept` were not returned (too long, or the byte cap).
    cut: bool,
}

/// Reads lines without ever holding more than `max` bytes of one.
struct Lines<R> {
    reader: BufReader<R>,
    /// Bytes consumed so far (the file offset, given where reading started).
    position: u64,
    /// Bytes this call may still consume: a cut line's rest is skipped only within it.
    budget: u64,
}

impl<R: Read> Lines<R> {
    /// Reads the next line, keeping at most `max` bytes (cut on a character boundary when
    /// it must be cut). `None` at the end of the file.
    fn next(&mut self, max: usize) -> std::io::Result<Option<Line>> {
        let mut kept = Vec::new();
        let mut seen_any = false;
        loop {
            if self.budget == 0 {
                return Ok(seen_any.then_some(Line { kept, cut: true }));
            }
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                return Ok(seen_any.then_some(Line { kept, cut: false }));
            }
            seen_any = true;
            let newline = memchr::memchr(b'\n', buffer);
            let line_end = newline.map_or(buffer.len(), |at| at + 1);
            let room = max.saturating_sub(kept.len());
            if line_end <= room {
                kept.extend_from_slice(&buffer[..line_end]);
                self.consume(line_end);
                if newline.is_some() {
                    return Ok(Some(Line { kept, cut: false }));
                }
                continue;
            }
            // The line does not fit: keep what does, cut on a character boundary.
            kept.extend_from_slice(&buffer[..room]);
            let boundary = utf8_boundary(&kept);
            let dropped = kept.len() - boundary;
            kept.truncate(boundary);
            self.consume(room.saturating_sub(dropped));
            return Ok(Some(Line { kept, cut: true }));
        }
    }

    fn consume(&mut self, amount: usize) {
        self.reader.consume(amount);
        self.position += amount as u64;
        self.budget = self.budget.saturating_sub(amount as u64);
    }
}

/// The end of the longest prefix of `bytes` that does not end inside a UTF-8 character.
fn utf8_boundary(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(error) if error.error_len().is_none() => error.valid_up_to(),
        // Invalid bytes: leave them to the UTF-8 check of the caller, which names them.
        Err(_) => bytes.len(),
    }
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> &str {
        "Read a UTF-8 text file inside the workspace. `offset` is the first line (1-based), \
         `limit` the number of lines (default 2000); at most 256 KiB of content come back, and \
         a line longer than 16 KiB is cut with a marker giving the `byte_offset` to continue \
         from. The result says which lines it holds, the file's size and total line count \
         (when the file was small enough to count), and whether it was cut. Named pipes, \
         devices and sockets are refused."
    }

    fn input_schema(&self) -> Value {
        schema_for::<ReadArgs>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<ReadReport>())
    }

    async fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ReadArgs = parse_args(args)?;
        let path = self.root.resolve_existing(&args.path)?;
        let shown = self.root.relative(&path);
        let (root, limits) = (self.root.clone(), self.limits);
        // Blocking file I/O stays off the runtime's threads.
        tokio::task::spawn_blocking(move || read(&root, &path, &shown, &args, limits))
            .await
            .map_err(|error| ToolError::internal(format!("the read did not finish: {error}")))?
    }
}

/// Skips to the first line asked for (`offset`), or stays at `byte_offset`: the number of
/// the line the reader is at (none inside a line reached by a byte offset).
fn first_line<R: Read>(
    lines: &mut Lines<R>,
    args: &ReadArgs,
    start: u64,
    shown: &str,
    limits: FileLimits,
    io: impl Fn(std::io::Error) -> ToolError,
) -> Result<Option<u64>, ToolError> {
    if args.byte_offset.is_some() {
        return Ok((start == 0).then_some(1));
    }
    let offset = args.offset.unwrap_or(1).max(1);
    let mut skipped = 1;
    while skipped < offset {
        match lines.skip_line().map_err(&io)? {
            Skip::Line => skipped += 1,
            Skip::End => break,
            Skip::Budget => {
                return Err(ToolError::new(
                    ErrorKind::TooLarge,
                    format!(
                        "`{shown}` has no line {offset} within the first {} bytes read; \
                         use `byte_offset` to start further in",
                        limits.scan_bytes
                    ),
                ))
            }
        }
    }
    Ok(Some(skipped))
}

/// The file opened as a regular file, its reader at `byte_offset` (within the file): the
/// lines, the file's size and where reading starts.
fn open_at(
    root: &WorkspaceRoot,
    path: &std::path::Path,
    shown: &str,
    byte_offset: Option<u64>,
    limits: FileLimits,
) -> Result<(Lines<std::fs::File>, u64, u64), ToolError> {
    let io = |error: std::io::Error| root.io_error("read", shown, &error);
    let mut file = super::open_regular(root, path, shown)?
        .ok_or_else(|| ToolError::new(ErrorKind::NotFound, format!("`{shown}` does not exist")))?;
    let size = file.metadata().map_err(io)?.len();
    let start = byte_offset.unwrap_or(0).min(size);
    if start > 0 {
        file.seek(SeekFrom::Start(start)).map_err(io)?;
    }
    let lines = Lines {
        reader: BufReader::with_capacity(64 * 1024, file),
        position: start,
        budget: limits.scan_bytes,
    };
    Ok((lines, size, start))
}

fn read(
    root: &WorkspaceRoot,
    path: &std::path::Path,
    shown: &str,
    args: &ReadArgs,
    limits: FileLimits,
) -> Result<ToolOutput, ToolError> {
    let io = |error: std::io::Error| root.io_error("read", shown, &error);
    let (mut lines, size, start) = open_at(root, path, shown, args.byte_offset, limits)?;
    let limit =
        usize::try_from(args.limit.unwrap_or(DEFAULT_LIMIT as u64).max(1)).unwrap_or(usize::MAX);
    // Where the first returned line is: by line number, or at a byte.
    let mut line_no = first_line(&mut lines, args, start, shown, limits, io)?;
    let first_line = line_no;

    let mut content = String::new();
    let mut returned = 0usize;
    let mut cut_lines: Vec<CutLine> = Vec::new();
    let mut truncated = false;
    loop {
        if returned == limit {
            truncated = lines.has_more().map_err(io)?;
            break;
        }
        let room = limits.read_bytes.saturating_sub(content.len());
        if room == 0 {
            truncated = lines.has_more().map_err(io)?;
            break;
        }
        let line_start = lines.position;
        let max = limits.line_bytes.min(room);
        let Some(line) = lines.next(max).map_err(io)? else {
            break;
        };
        let text = std::str::from_utf8(&line.kept).map_err(|error| {
            ToolError::new(
                ErrorKind::NotText,
                format!(
                    "`{shown}` is not UTF-8 text (invalid byte at offset {}); it looks binary",
                    line_start + error.valid_up_to() as u64
                ),
            )
        })?;
        if line.cut && returned > 0 && line.kept.len() < limits.line_bytes {
            // The byte cap, not the line's length, cut it: leave it for the next call.
            truncated = true;
            break;
        }
        content.push_str(text);
        returned += 1;
        if line.cut {
            let resume = line_start + line.kept.len() as u64;
            content.push_str(&format!(
                " [... line cut after {} bytes; continue with byte_offset: {resume}]\n",
                line.kept.len()
            ));
            cut_lines.push(CutLine {
                line: line_no,
                kept_bytes: line.kept.len(),
                continue_at: resume,
            });
            // The rest of a cut line is skipped, within the scan budget.
            match lines.skip_line().map_err(io)? {
                Skip::Line | Skip::End => {}
                Skip::Budget => {
                    truncated = true;
                    line_no = line_no.map(|n| n + 1);
                    break;
                }
            }
        }
        line_no = line_no.map(|n| n + 1);
    }
    let end_line = line_no.map(|next| next - 1);
    // The total line count, when the rest of the file fits in the scan budget.
    let total_lines = match (first_line, lines.count_rest().map_err(io)?) {
        (Some(_), Some(rest)) => end_line.map(|end| end + rest),
        _ => None,
    };
    report_output(&ReadReport {
        path: shown.to_owned(),
        content,
        start_line: first_line,
        end_line,
        total_lines,
        bytes: size,
        truncated,
        cut_lines,
        byte_offset: args.byte_offset.map(|_| start),
    })
}

/// How skipping a line ended.
enum Skip {
    Line,
    End,
    Budget,
}

impl<R: Read> Lines<R> {
    /// Consumes the rest of the current line (through its newline), within the budget.
    fn skip_line(&mut self) -> std::io::Result<Skip> {
        loop {
            if self.budget == 0 {
                return Ok(Skip::Budget);
            }
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                return Ok(Skip::End);
            }
            let take = usize::try_from(self.budget).unwrap_or(usize::MAX);
            let window = &buffer[..buffer.len().min(take)];
            match memchr::memchr(b'\n', window) {
                Some(at) => {
                    self.consume(at + 1);
                    return Ok(Skip::Line);
                }
                None => {
                    let len = window.len();
                    self.consume(len);
                }
            }
        }
    }

    /// Whether any byte is left.
    fn has_more(&mut self) -> std::io::Result<bool> {
        Ok(!self.reader.fill_buf()?.is_empty())
    }

    /// Lines left (a last line without newline counts), or `None` past the budget.
    fn count_rest(&mut self) -> std::io::Result<Option<u64>> {
        let mut count = 0u64;
        let mut open_line = false;
        loop {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                return Ok(Some(count + u64::from(open_line)));
            }
            if self.budget == 0 {
                return Ok(None);
            }
            let take = usize::try_from(self.budget).unwrap_or(usize::MAX);
            let window = &buffer[..buffer.len().min(take)];
            let newlines = memchr::memchr_iter(b'\n', window).count() as u64;
            count += newlines;
            open_line = window.last() != Some(&b'\n');
            let len = window.len();
            self.consume(len);
        }
    }
}
