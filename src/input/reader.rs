//! A sliding window over the input bytes that knows where it is.
//!
//! The window holds the unconsumed tail of the input plus the next block. Everything before the
//! window has been consumed; only the number of newlines in it is kept, so that any later byte
//! can still be given as a line and column. Memory stays at one block plus the largest single
//! JSON value (one trace event, or one top-level value of a `.cpuprofile`).

use std::io::{self, Read};

use crate::error::{Error, Location};

/// Bytes read from the source at a time.
const BLOCK: usize = 1 << 20;

pub(crate) struct Window {
    src: Box<dyn Read + Send>,
    /// The window: `buf[pos..]` is not consumed yet.
    pub(crate) buf: Vec<u8>,
    pub(crate) pos: usize,
    /// Absolute offset of `buf[0]`.
    base: u64,
    /// Newlines before `buf[0]`.
    lines_before: u64,
    /// Absolute offset just after the last newline before `buf[0]` (0 when none).
    line_start_before: u64,
    eof: bool,
    /// The largest single value (event) accepted, in bytes.
    max_value: usize,
    name: String,
    /// The (gzip) stream ended early.
    pub(crate) cut_stream: bool,
}

impl Window {
    pub(crate) fn new(src: Box<dyn Read + Send>, name: String, max_value: usize) -> Window {
        Window {
            src,
            buf: Vec::with_capacity(BLOCK * 2),
            pos: 0,
            base: 0,
            lines_before: 0,
            line_start_before: 0,
            eof: false,
            max_value,
            name,
            cut_stream: false,
        }
    }

    /// The unconsumed bytes.
    #[inline]
    pub(crate) fn rest(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// The largest single value accepted.
    pub(crate) fn max_value(&self) -> usize {
        self.max_value
    }

    /// Absolute offset of `buf[0]`.
    pub(crate) fn base(&self) -> u64 {
        self.base
    }

    /// Absolute offset just past the bytes read so far.
    pub(crate) fn end_offset(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Absolute offset of `buf[pos]`.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Reads more input. `need_more_than` is how many unconsumed bytes were not enough; the
    /// window at least doubles past that, so a huge value is re-scanned O(log n) times.
    /// Returns false at the end of input.
    pub(crate) fn fill(&mut self, need_more_than: usize) -> Result<bool, Error> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            let consumed = &self.buf[..self.pos];
            let n_lines = memchr::memchr_iter(b'\n', consumed).count() as u64;
            if n_lines > 0 {
                let last = memchr::memrchr(b'\n', consumed).expect("counted a newline");
                self.line_start_before = self.base + last as u64 + 1;
                self.lines_before += n_lines;
            }
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        if need_more_than > self.max_value {
            return Err(Error::input(
                Some(self.location(self.offset(), None)),
                format!(
                    "a single JSON value is larger than the limit of {} bytes (raise it with --max-event-bytes)",
                    self.max_value
                ),
            ));
        }
        let want = BLOCK.max(need_more_than.saturating_mul(2).min(self.max_value.saturating_add(BLOCK)));
        let target = self.buf.len() + want;
        self.buf.reserve(want);
        let mut got_any = false;
        while self.buf.len() < target {
            let start = self.buf.len();
            let cap = self.buf.capacity().min(target);
            self.buf.resize(cap, 0);
            match self.src.read(&mut self.buf[start..]) {
                Ok(0) => {
                    self.buf.truncate(start);
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.buf.truncate(start + n);
                    got_any = true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.buf.truncate(start),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    // A gzip stream cut short: what was inflated is the input.
                    self.buf.truncate(start);
                    self.eof = true;
                    self.cut_stream = true;
                    break;
                }
                Err(e) => {
                    self.buf.truncate(start);
                    return Err(Error::io(format!("cannot read {}", self.name), e));
                }
            }
        }
        Ok(got_any)
    }

    /// The line and column of an absolute offset that is inside the window (or just past it).
    pub(crate) fn location(&self, abs: u64, event: Option<u64>) -> Location {
        let rel = abs.saturating_sub(self.base).min(self.buf.len() as u64) as usize;
        let before = &self.buf[..rel];
        let n = memchr::memchr_iter(b'\n', before).count() as u64;
        let line_start = match memchr::memrchr(b'\n', before) {
            Some(i) => self.base + i as u64 + 1,
            None => self.line_start_before,
        };
        Location { line: self.lines_before + n + 1, column: abs.saturating_sub(line_start) + 1, offset: abs, event }
    }

    /// The location of a serde_json error raised while parsing from absolute offset `start`.
    pub(crate) fn serde_location(&self, start: u64, err: &serde_json::Error, event: Option<u64>) -> Location {
        let at = self.location(start, event);
        let (line, column) = (err.line() as u64, err.column() as u64);
        if line <= 1 {
            Location { column: at.column + column.saturating_sub(1), ..at }
        } else {
            Location { line: at.line + line - 1, column, ..at }
        }
    }
}

/// Strips serde_json's own " at line L column C" suffix (we print absolute positions instead).
pub(crate) fn serde_message(err: &serde_json::Error) -> String {
    let s = err.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
