//! A sliding window over the input bytes that knows where it is.
//!
//! The window holds the unconsumed tail of the input plus the next block. Everything before the
//! window has been consumed; only the number of newlines in it is kept, so that any later byte
//! can still be given as a line and column. Memory stays at one block plus the largest single
//! JSON value (one trace event, or one top-level value of a `.cpuprofile`).
//!
//! The event array is read in regions, in a pipeline (see `document.rs`): while the scan
//! threads use the window's bytes, the next block is read ahead into a buffer of its own
//! ([`Window::split`]), and the window then moves onto it ([`Window::advance_to`]), handing
//! the scanned region's bytes over as a [`Text`] that lives until its events are delivered.
//! No region is copied on the way; only the start of an event cut by a region's end is.
//!
//! A plain file is not read at all but mapped ([`Window::mapped`]): the window is then a range
//! of the mapping that moves the same way, with nothing copied (not even into the kernel's
//! read buffers), and the pages of the ranges done with are handed back as the window moves.

use std::io;
use std::sync::Arc;

use crate::error::{Error, Location};
use crate::input::stream::Stream;

/// Bytes read from the source at a time.
const BLOCK: usize = 1 << 20;
/// The most bytes one `read` call is given (a pipe gives 64 KiB at most anyway).
const READ_STEP: usize = 256 << 10;

pub(crate) struct Window {
    /// The bytes read so far that are still needed, and where they are.
    text: Text,
    input: Input,
    /// Bytes read ahead (see [`Window::split`]), not yet part of `text`.
    ahead: Vec<u8>,
    /// Where the window's start is told, for a progress display ([`crate::Config::progress`]).
    progress: Option<Arc<std::sync::atomic::AtomicU64>>,
}

/// The window's bytes and what is known of the bytes before them: enough to give any position
/// in them as a line and column.
pub(crate) struct Text {
    /// The window: `buf[pos..]` is not consumed yet.
    pub(crate) buf: Bytes,
    pub(crate) pos: usize,
    /// Absolute offset of `buf[0]`.
    base: u64,
    /// Newlines before `buf[0]`.
    lines_before: u64,
    /// Absolute offset just after the last newline before `buf[0]` (0 when none).
    line_start_before: u64,
    /// The largest single value (event) accepted, in bytes.
    max_value: usize,
    /// Where the last [`Text::location`] was asked for in `buf`: what it counted there.
    newlines_memo: std::sync::Mutex<Counted>,
}

/// The source of the bytes.
pub(crate) struct Input {
    src: Stream,
    eof: bool,
    name: String,
    /// The (gzip) stream ended early.
    cut_stream: bool,
    /// A read error met while reading ahead, not reported yet.
    failed: Option<Error>,
    /// Bytes read so far, told to `progress` as they come (a read may wait on a slow stream).
    read: u64,
    progress: Option<Arc<std::sync::atomic::AtomicU64>>,
}

/// The bytes of a [`Text`]: read into memory, or a range of a file mapped whole.
pub(crate) enum Bytes {
    Read(Vec<u8>),
    Mapped(Mapped),
}

/// `map[start..end]`.
pub(crate) struct Mapped {
    map: Arc<memmap2::Mmap>,
    start: usize,
    end: usize,
}

impl Bytes {
    /// Whether these are a range of a mapped file.
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self, Bytes::Mapped(_))
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read(v) => v,
            Bytes::Mapped(m) => &m.map[m.start..m.end],
        }
    }
}

impl Mapped {
    /// Hands back the pages of `map[from..to]`, including the ones it shares with a neighbour,
    /// and those of the [`FAULT_AROUND`] bytes before it: they leave the process's resident
    /// memory, not the page cache.
    fn release(&self, from: usize, to: usize) {
        #[cfg(target_os = "linux")]
        crate::sys::release_pages(&self.map, from.saturating_sub(FAULT_AROUND), to);
        #[cfg(not(target_os = "linux"))]
        let _ = (from, to);
    }
}

/// How far behind a page fault the kernel may map pages of a file it already holds ("fault
/// around", 64 KiB by default), with room to spare: pages handed back before a fault just past
/// them can come back that way, and the next release takes them again. Without it, a region's
/// first fault kept up to 60 KiB of the previous region resident: 1.5% of the file, 50 MB of a
/// 5.4 GB trace.
#[cfg(target_os = "linux")]
const FAULT_AROUND: usize = 256 << 10;

impl Drop for Mapped {
    fn drop(&mut self) {
        self.release(self.start, self.end);
    }
}

impl std::ops::Deref for Window {
    type Target = Text;
    fn deref(&self) -> &Text {
        &self.text
    }
}

impl std::ops::DerefMut for Window {
    fn deref_mut(&mut self) -> &mut Text {
        &mut self.text
    }
}

impl Window {
    pub(crate) fn new(src: Stream, name: String, max_value: usize) -> Window {
        Window {
            text: Text {
                buf: Bytes::Read(Vec::with_capacity(BLOCK * 2)),
                pos: 0,
                base: 0,
                lines_before: 0,
                line_start_before: 0,
                max_value,
                newlines_memo: Default::default(),
            },
            input: Input { src, eof: false, name, cut_stream: false, failed: None, read: 0, progress: None },
            ahead: Vec::new(),
            progress: None,
        }
    }

    /// A window over a file mapped whole: [`Window::fill`] moves the end of the window
    /// forward in the mapping instead of reading.
    pub(crate) fn mapped(map: memmap2::Mmap, name: String, max_value: usize) -> Window {
        // The window moves forward only: the kernel may read ahead far and drop pages behind.
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        let map = Arc::new(map);
        Window {
            text: Text {
                buf: Bytes::Mapped(Mapped { map, start: 0, end: 0 }),
                pos: 0,
                base: 0,
                lines_before: 0,
                line_start_before: 0,
                max_value,
                newlines_memo: Default::default(),
            },
            input: Input {
                src: Stream::Read(Box::new(io::empty())),
                eof: true,
                name,
                cut_stream: false,
                failed: None,
                read: 0,
                progress: None,
            },
            ahead: Vec::new(),
            progress: None,
        }
    }

    /// Whether the (gzip) stream ended early.
    pub(crate) fn cut_stream(&self) -> bool {
        self.input.cut_stream
    }

    /// The window's bytes, and a handle that reads ahead while they are in use: bytes read
    /// through it join the window at the next [`Window::fill`].
    pub(crate) fn split(&mut self) -> (&Text, ReadAhead<'_>) {
        let mapped = match &self.text.buf {
            Bytes::Mapped(m) => Some(m),
            Bytes::Read(_) => None,
        };
        (&self.text, ReadAhead { input: &mut self.input, ahead: &mut self.ahead, mapped })
    }

    /// Reads more input. `need_more_than` is how many unconsumed bytes were not enough; the
    /// window at least doubles past that, so a huge value is re-scanned O(log n) times.
    /// Returns false at the end of input.
    pub(crate) fn fill(&mut self, need_more_than: usize) -> Result<bool, Error> {
        let t = &mut self.text;
        let at_end = match &t.buf {
            Bytes::Read(_) => self.input.eof && self.ahead.len() <= HEADROOM && self.input.failed.is_none(),
            Bytes::Mapped(m) => m.end == m.map.len(),
        };
        if at_end {
            return Ok(false);
        }
        if t.pos > 0 {
            (t.lines_before, t.line_start_before) = t.lines_to(t.pos);
            match &mut t.buf {
                Bytes::Read(v) => drop(v.drain(..t.pos)),
                Bytes::Mapped(m) => {
                    m.release(m.start, m.start + t.pos);
                    m.start += t.pos;
                }
            }
            t.base += t.pos as u64;
            t.pos = 0;
            *t.newlines_memo.get_mut().unwrap_or_else(|e| e.into_inner()) = Counted::default();
        }
        if need_more_than > t.max_value {
            return Err(Error::input(
                Some(t.location(t.offset(), None)),
                format!(
                    "a single JSON value is larger than the limit of {} bytes (raise it with --max-event-bytes)",
                    t.max_value
                ),
            ));
        }
        let want = BLOCK.max(need_more_than.saturating_mul(2).min(t.max_value.saturating_add(BLOCK)));
        let buf = match &mut t.buf {
            Bytes::Read(v) => v,
            Bytes::Mapped(m) => {
                m.end = m.end.saturating_add(want).min(m.map.len());
                self.tell_progress();
                return Ok(true);
            }
        };
        let target = buf.len() + want;
        let mut got_any = false;
        if self.ahead.len() > HEADROOM {
            buf.extend_from_slice(&self.ahead[HEADROOM..]);
            self.ahead.truncate(HEADROOM);
            got_any = true;
        }
        if buf.len() < target {
            got_any |= self.input.read_to(buf, target)?;
        }
        self.tell_progress();
        Ok(got_any)
    }

    /// Where reading tells how far it is, for a progress display: as each read returns, and as
    /// the window moves on.
    pub(crate) fn set_progress(&mut self, progress: Option<Arc<std::sync::atomic::AtomicU64>>) {
        self.input.progress = progress.clone();
        self.progress = progress;
    }

    /// Tells the progress display how far the input is read: a top-level value (a Firefox
    /// profile's, a `.cpuprofile`'s) is read by growing the window, an event array a region at
    /// a time ([`Window::advance_to`]). Never backwards.
    fn tell_progress(&self) {
        if let Some(p) = &self.progress {
            p.fetch_max(self.end_offset(), std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Moves the window to start at `abs` (inside it), onto the bytes read ahead: returns the
    /// bytes before `abs` as a [`Text`] of their own, so that they can be used while the
    /// window goes on. Only the bytes from `abs` to the end of the window are copied (into
    /// the room kept at the front of the read-ahead buffer, when they fit). `spare` is a
    /// `Text` done with, whose allocation is used to read ahead next. `counted` is `(from,
    /// n)`: the window's bytes from `buf[from]` to `abs` hold `n` newlines.
    pub(crate) fn advance_to(&mut self, abs: u64, spare: Option<Text>, counted: (usize, u64)) -> Text {
        if let Some(p) = &self.progress {
            p.fetch_max(abs, std::sync::atomic::Ordering::Relaxed);
        }
        let rel = (abs - self.text.base) as usize;
        let (buf, pos) = match &mut self.text.buf {
            // The window goes on in the same mapping: nothing to copy.
            Bytes::Mapped(m) => {
                let rest = Mapped { map: m.map.clone(), start: m.start + rel, end: m.end };
                m.end = rest.start;
                (Bytes::Mapped(rest), 0)
            }
            Bytes::Read(v) => {
                let tail = &v[rel..];
                let spare = spare.and_then(|s| match s.buf {
                    Bytes::Read(v) => Some(v),
                    Bytes::Mapped(_) => None,
                });
                let mut ahead = std::mem::replace(&mut self.ahead, spare.unwrap_or_default());
                // The room before the tail is never read as input, but line counts scan it: no
                // newlines.
                self.ahead.clear();
                if ahead.len() < HEADROOM {
                    ahead.resize(HEADROOM, 0);
                }
                if tail.len() <= HEADROOM && (HEADROOM - tail.len()) as u64 <= abs {
                    ahead[HEADROOM - tail.len()..HEADROOM].copy_from_slice(tail);
                    (Bytes::Read(ahead), HEADROOM - tail.len())
                } else {
                    let mut b = Vec::with_capacity(tail.len() + ahead.len() - HEADROOM);
                    b.extend_from_slice(tail);
                    b.extend_from_slice(&ahead[HEADROOM..]);
                    (Bytes::Read(b), 0)
                }
            }
        };
        let t = &self.text;
        let (lines_before, line_start_before) = t.lines_to_counted(rel, counted);
        let next = Text {
            buf,
            pos,
            base: abs - pos as u64,
            lines_before,
            line_start_before,
            max_value: t.max_value,
            newlines_memo: Default::default(),
        };
        std::mem::replace(&mut self.text, next)
    }
}

/// Room kept at the front of the read-ahead buffer for the end of the window (the start of an
/// event cut by the end of a region), so that the window can move onto it without copying.
const HEADROOM: usize = 64 << 10;

/// Reads ahead into a buffer of its own while the window's bytes are borrowed.
pub(crate) struct ReadAhead<'w> {
    input: &'w mut Input,
    ahead: &'w mut Vec<u8>,
    /// The window, when it is a mapping: reading ahead is then mapping its pages in.
    mapped: Option<&'w Mapped>,
}

impl ReadAhead<'_> {
    /// Reads up to `n` more bytes ahead (fewer at the end of the input). A read error is kept
    /// for the [`Window::fill`] that reaches it, after the bytes read before it.
    pub(crate) fn read(&mut self, n: usize) {
        if let Some(m) = self.mapped {
            // Done here, the page faults of the next region are not taken by the threads
            // scanning it. Advice only: on failure they are.
            #[cfg(target_os = "linux")]
            {
                let from = m.end / crate::sys::page_size() * crate::sys::page_size();
                let to = m.end.saturating_add(n).min(m.map.len());
                let _ = m.map.advise_range(memmap2::Advice::PopulateRead, from, to.saturating_sub(from));
            }
            #[cfg(not(target_os = "linux"))]
            let _ = (m, n);
            return;
        }
        if self.ahead.len() < HEADROOM {
            self.ahead.resize(HEADROOM, 0);
        }
        let target = self.ahead.len() + n;
        if let Err(e) = self.input.read_to(self.ahead, target) {
            self.input.failed = Some(e);
        }
    }
}

impl Input {
    /// Appends bytes to `buf` until it holds `target` bytes or the input ends; whether any
    /// were read.
    fn read_to(&mut self, buf: &mut Vec<u8>, target: usize) -> Result<bool, Error> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.eof {
            return Ok(false);
        }
        buf.reserve(target.saturating_sub(buf.len()));
        let mut got_any = false;
        while buf.len() < target {
            let start = buf.len();
            // A step at a time: a small input costs a small memset, not a block's (bytes read
            // from the source go into room zeroed first).
            let cap = buf.capacity().min(target).min(start + READ_STEP);
            match self.src.append(buf, cap - start) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    got_any = true;
                    self.read += n as u64;
                    if let Some(p) = &self.progress {
                        p.fetch_max(self.read, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    // A gzip stream cut short: what was inflated is the input.
                    self.eof = true;
                    self.cut_stream = true;
                    break;
                }
                Err(e) => {
                    return Err(Error::io(format!("cannot read {}", self.name), e));
                }
            }
        }
        Ok(got_any)
    }
}

impl Text {
    /// `(lines_before, line_start_before)` as they would be for a buffer starting at `buf[rel]`.
    fn lines_to(&self, rel: usize) -> (u64, u64) {
        self.lines_to_counted(rel, (rel, 0))
    }

    /// [`Text::lines_to`], when the newlines of `buf[from..rel]` are known (`counted`, by the
    /// scan threads): only the bytes before `from` are counted here.
    fn lines_to_counted(&self, rel: usize, (from, n): (usize, u64)) -> (u64, u64) {
        let consumed = &self.buf[..rel];
        debug_assert_eq!(n, memchr::memchr_iter(b'\n', &consumed[from..]).count() as u64, "newlines counted");
        match memchr::memrchr(b'\n', consumed) {
            Some(last) => (
                self.lines_before + memchr::memchr_iter(b'\n', &consumed[..from]).count() as u64 + n,
                self.base + last as u64 + 1,
            ),
            None => (self.lines_before, self.line_start_before),
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

    /// Absolute offset just past the bytes in the window.
    pub(crate) fn end_offset(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Absolute offset of `buf[pos]`.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The line and column of an absolute offset that is inside the window (or just past it).
    pub(crate) fn location(&self, abs: u64, event: Option<u64>) -> Location {
        let rel = abs.saturating_sub(self.base).min(self.buf.len() as u64) as usize;
        let before = &self.buf[..rel];
        // Counted on from the last position asked for, when this one is after it: the
        // locations of a region's events are asked for in order (one per profile, say), and
        // counting from the start each time would be quadratic in the region's size (so would
        // seeking the line's start back from each, on a trace written as one line).
        let (n, line_start) = {
            let mut memo = self.newlines_memo.lock().unwrap_or_else(|e| e.into_inner());
            let from = if memo.at <= rel { *memo } else { Counted::default() };
            let n = from.newlines + memchr::memchr_iter(b'\n', &before[from.at..]).count() as u64;
            let last = memchr::memrchr(b'\n', &before[from.at..]).map(|i| from.at + i).or(from.last);
            *memo = Counted { at: rel, newlines: n, last };
            (n, last.map_or(self.line_start_before, |i| self.base + i as u64 + 1))
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

/// Newlines counted in a window's buffer up to a position.
#[derive(Debug, Default, Clone, Copy)]
struct Counted {
    /// The position in `buf`.
    at: usize,
    /// Newlines before it.
    newlines: u64,
    /// The last of them.
    last: Option<usize>,
}

/// Strips serde_json's own " at line L column C" suffix (we print absolute positions instead).
pub(crate) fn serde_message(err: &serde_json::Error) -> String {
    let s = err.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Locations asked for in any order, on text with newlines or on one long line, are
        /// those counted from the start of the input.
        #[test]
        fn locations_are_counted_from_the_start(
            before in "[a\n]{0,40}",
            window in "[ab\n]{0,300}",
            asks in proptest::collection::vec(0usize..320, 1..40),
        ) {
            let all = format!("{before}{window}");
            let base = before.len() as u64;
            let text = Text {
                buf: Bytes::Read(window.clone().into_bytes()),
                pos: 0,
                base,
                lines_before: before.matches('\n').count() as u64,
                line_start_before: before.rfind('\n').map_or(0, |i| i as u64 + 1),
                max_value: usize::MAX,
                newlines_memo: Default::default(),
            };
            for rel in asks {
                let abs = base + rel.min(window.len()) as u64;
                let head = &all[..abs as usize];
                let line = head.matches('\n').count() as u64 + 1;
                let column = abs - head.rfind('\n').map_or(0, |i| i as u64 + 1) + 1;
                let at = text.location(abs, Some(7));
                proptest::prop_assert_eq!((at.line, at.column, at.offset, at.event), (line, column, abs, Some(7)));
            }
        }
    }
}
