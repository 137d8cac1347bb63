//! The top level of an input document, streamed.
//!
//! A trace is a JSON array of events or an object with a `traceEvents` array; a `.cpuprofile`
//! is an object with `nodes` (or the legacy `head`). The walker reads the top level itself and
//! hands each element of `traceEvents` to a [`Sink`], parsed into a borrowed [`RawEvent`] that
//! holds only the fields the pipeline reads (`args` stays raw until someone needs it). Other
//! top-level values are kept as raw bytes only when they may be needed (`metadata` and the
//! fields of a `.cpuprofile`).

use super::reader::Window;
use super::scan::{self, Stop};
use crate::error::{Diagnostics, Error, Location, WarningKind};

pub use super::scan::RawEvent;

/// Where an event sits, for messages.
pub struct EventCtx<'w> {
    /// Index of the event in `traceEvents`.
    pub index: u64,
    /// Absolute byte offset of the event's first byte.
    pub start: u64,
    /// The event's bytes.
    pub raw: &'w [u8],
    window: &'w Window,
    /// Whether `raw` is a lossy UTF-8 copy (positions inside it are approximate).
    pub lossy: bool,
}

impl<'w> EventCtx<'w> {
    /// The location of the event's start.
    pub fn location(&self) -> Location {
        self.window.location(self.start, Some(self.index))
    }

    /// The same place with other bytes (a repaired copy of the event).
    pub fn with_raw<'b>(&'b self, raw: &'b [u8]) -> EventCtx<'b> {
        EventCtx { index: self.index, start: self.start, raw, window: self.window, lossy: true }
    }

    /// The location of a serde error raised while parsing `part`, a sub-slice of the event.
    pub fn serde_location(&self, part: &[u8], err: &serde_json::Error) -> Location {
        let base = part.as_ptr() as usize;
        let raw = self.raw.as_ptr() as usize;
        let rel = if !self.lossy && base >= raw && base <= raw + self.raw.len() { base - raw } else { 0 };
        self.window.serde_location(self.start + rel as u64, err, Some(self.index))
    }
}

/// Receives the events of a trace.
pub trait Sink {
    /// Whether events should be parsed into [`RawEvent`]s (otherwise only `raw_event` is called).
    fn wants_parsed(&self) -> bool {
        true
    }
    /// One event object.
    fn event(&mut self, ev: &RawEvent<'_>, ctx: &EventCtx<'_>, diag: &mut Diagnostics) -> Result<(), Error>;
    /// One element of `traceEvents` as raw bytes (called for every element when `wants_parsed` is false).
    fn raw_event(&mut self, _raw: &[u8], _ctx: &EventCtx<'_>) -> Result<(), Error> {
        Ok(())
    }
}

/// What the top level turned out to be.
#[derive(Debug)]
pub enum Document {
    /// A trace; `metadata` is the raw `metadata` value when there was one.
    Trace {
        /// Raw bytes of the top-level `metadata` value.
        metadata: Option<Vec<u8>>,
        /// Number of elements in `traceEvents`.
        n_events: u64,
    },
    /// A `.cpuprofile`: the raw bytes of its top-level fields, by key.
    CpuProfile {
        /// `(key, raw value)` in file order.
        fields: Vec<(String, Vec<u8>)>,
        /// Where the document starts.
        location: Location,
    },
}

/// Top-level keys of a `.cpuprofile` worth keeping.
const PROFILE_KEYS: &[&str] = &["nodes", "samples", "timeDeltas", "startTime", "endTime", "head", "timestamps"];

struct Walker<'a> {
    w: &'a mut Window,
    diag: &'a mut Diagnostics,
    stack: Vec<u8>,
    stack2: Vec<u8>,
    threads: usize,
}

impl<'a> Walker<'a> {
    /// Skips whitespace; false at the end of input.
    fn skip_ws(&mut self) -> Result<bool, Error> {
        loop {
            let rest = self.w.rest();
            let (i, n) = (scan::ws(rest, 0), rest.len());
            self.w.pos += i;
            if i < n {
                return Ok(true);
            }
            if !self.w.fill(0)? {
                return Ok(false);
            }
        }
    }

    fn peek(&mut self) -> Result<Option<u8>, Error> {
        Ok(if self.skip_ws()? { Some(self.w.rest()[0]) } else { None })
    }

    fn here(&self, event: Option<u64>) -> Location {
        self.w.location(self.w.offset(), event)
    }

    fn unexpected(&self, expected: &str, event: Option<u64>) -> Error {
        self.unexpected_at(0, expected, event)
    }

    fn unexpected_at(&self, rel: usize, expected: &str, event: Option<u64>) -> Error {
        let found = match self.w.rest().get(rel) {
            Some(&b) if b.is_ascii_graphic() => format!("'{}'", b as char),
            Some(&b) => format!("byte 0x{b:02x}"),
            None => "the end of the input".to_owned(),
        };
        let loc = self.w.location(self.w.offset() + rel as u64, event);
        Error::input(Some(loc), format!("expected {expected}, found {found}"))
    }

    /// Runs `f` on the unconsumed bytes, reading more while it reports [`Stop::Eof`].
    /// Returns None when the input ends first; otherwise the end of what `f` scanned.
    fn scan_len(
        &mut self,
        event: Option<u64>,
        mut f: impl FnMut(&[u8], &mut Vec<u8>) -> Result<usize, Stop>,
    ) -> Result<Option<usize>, Error> {
        loop {
            let n = self.w.rest().len();
            match f(self.w.rest(), &mut self.stack) {
                Ok(end) => return Ok(Some(end)),
                Err(Stop::Syntax(p, what)) => return Err(self.unexpected_at(p, what, event)),
                Err(Stop::Eof) => {
                    if !self.w.fill(n)? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    fn key(&mut self) -> Result<Option<String>, Error> {
        let Some(end) = self.scan_len(None, |b, _| scan::string(b, 0).map(|(_, e)| e))? else {
            return Ok(None);
        };
        let (k, _) = scan::string(self.w.rest(), 0).expect("scanned");
        let k = k.into_owned();
        self.w.pos += end;
        Ok(Some(k))
    }

    fn raw_value(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let Some(end) = self.scan_len(None, |b, st| scan::skip(b, 0, st))? else { return Ok(None) };
        let v = self.w.rest()[..end].to_vec();
        self.w.pos += end;
        Ok(Some(v))
    }

    fn expect(&mut self, b: u8, what: &str, event: Option<u64>) -> Result<bool, Error> {
        match self.peek()? {
            Some(c) if c == b => {
                self.w.pos += 1;
                Ok(true)
            }
            Some(_) => Err(self.unexpected(what, event)),
            None => Ok(false),
        }
    }

    fn truncated(&mut self, what: &str) {
        let loc = self.here(None);
        if self.w.cut_stream {
            self.diag.push(
                WarningKind::GzipCut,
                Some(loc),
                "the gzip stream ends early (a truncated .gz file); the data it held was used",
            );
        }
        self.diag.push(
            WarningKind::Truncated,
            Some(loc),
            format!("the input ends {what}; the complete events before the cut were used"),
        );
    }

    /// Streams the elements of `traceEvents`; the cursor is just after `[`.
    /// Returns (number of elements, whether the input was cut inside the array).
    ///
    /// The window is taken a batch at a time. Each batch is scanned into borrowed events, by two
    /// threads when it is large: the second starts at a guessed event boundary (a newline and
    /// `{`; a raw newline is never inside a JSON string), and its work is kept only if the
    /// first thread's last event ends exactly there. The events then go to the sink in file
    /// order, on this thread.
    fn events(&mut self, sink: &mut dyn Sink) -> Result<(u64, bool), Error> {
        let mut index: u64 = 0;
        let parsed = sink.wants_parsed();
        // After '[' or ',' the next thing is an element; after an element, ',' or ']'.
        let mut expect_element = true;
        loop {
            while self.w.rest().len() < BATCH && self.w.fill(0)? {}
            // Between batches: the separator after the last element, or the array's end.
            let rest = self.w.rest();
            let i = scan::ws(rest, 0);
            match (rest.get(i), expect_element) {
                (None, _) => {
                    self.w.pos += i;
                    if self.w.fill(0)? {
                        continue;
                    }
                    self.truncated("inside the event array (no closing ']')");
                    return Ok((index, true));
                }
                (Some(b']'), _) => {
                    if expect_element && index > 0 {
                        let loc = self.w.location(self.w.offset() + i as u64, None);
                        self.diag.push(WarningKind::TrailingComma, Some(loc), "trailing comma after the last event");
                    }
                    self.w.pos += i + 1;
                    return Ok((index, false));
                }
                (Some(b','), false) => {
                    self.w.pos += i + 1;
                    expect_element = true;
                    continue;
                }
                (Some(_), false) => {
                    self.w.pos += i;
                    return Err(self.unexpected("',' or ']' after an event", index.checked_sub(1)));
                }
                (Some(_), true) => self.w.pos += i,
            }
            let Walker { w, diag, stack, stack2, threads } = &mut *self;
            let rest = w.rest();
            let n = rest.len();
            let split = if *threads > 1 && n >= MIN_PARALLEL { boundary(rest, n / 2) } else { n };
            let (a, b) = if split < n {
                let (a, b) = std::thread::scope(|sc| {
                    let h = sc.spawn(|| scan_run(rest, split, n, parsed, stack2));
                    let a = scan_run(rest, 0, split, parsed, stack);
                    (a, h.join().expect("scan thread"))
                });
                // Keep the second half only if the first ended exactly where it started.
                if a.end == split && a.stop.is_none() && !a.needs_more {
                    (a, Some(b))
                } else {
                    (a, None)
                }
            } else {
                (scan_run(rest, 0, n, parsed, stack), None)
            };
            // Deliver the events in file order.
            let base = w.offset();
            for e in a.events.iter().chain(b.iter().flat_map(|b| b.events.iter())) {
                let raw = &rest[e.start..e.end];
                if raw.len() > w.max_value() {
                    return Err(Error::input(
                        Some(w.location(base + e.start as u64, Some(index))),
                        format!(
                            "the event is {} bytes, more than the limit of {} (raise it with --max-event-bytes)",
                            raw.len(),
                            w.max_value()
                        ),
                    ));
                }
                let ctx = EventCtx { index, start: base + e.start as u64, raw, window: w, lossy: false };
                match &e.event {
                    Some(ev) => sink.event(ev, &ctx, diag)?,
                    None if e.is_object => sink.raw_event(raw, &ctx)?,
                    None => {
                        let loc = ctx.location();
                        diag.push(
                            WarningKind::NotAnObject,
                            Some(loc),
                            "an element of traceEvents is not an object; skipped (DevTools would fail to load the trace)",
                        );
                    }
                }
                index += 1;
            }
            let last = b.unwrap_or(a);
            let consumed = last.end;
            let (stop, needs_more, trailing) = (last.stop, last.needs_more, last.trailing_comma_at);
            expect_element = last.expect_element;
            if let Some(t) = trailing {
                let loc = w.location(base + t as u64, None);
                diag.push(WarningKind::TrailingComma, Some(loc), "trailing comma after the last event");
            }
            match stop {
                Some(Stop2::ArrayEnd(p)) => {
                    w.pos += p;
                    return Ok((index, false));
                }
                Some(Stop2::Syntax(p, what)) => {
                    let event = if what.starts_with("',' or ']'") { index.checked_sub(1) } else { Some(index) };
                    return Err(self.unexpected_at(p, what, event));
                }
                None => {}
            }
            w.pos += consumed;
            if needs_more {
                // What is left is a cut element: read more, or the input ended inside it.
                let left = w.rest().len();
                if !w.fill(left)? {
                    let what = if expect_element && left > 0 {
                        "in the middle of an event"
                    } else {
                        "inside the event array (no closing ']')"
                    };
                    self.truncated(what);
                    return Ok((index, true));
                }
            }
        }
    }
}

/// Bytes scanned per batch.
const BATCH: usize = 1 << 20;
/// Batches smaller than this are scanned on one thread.
const MIN_PARALLEL: usize = 256 << 10;

/// A guessed event boundary at or after `from`: the `{` that starts a line.
fn boundary(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(k) = memchr::memchr(b'\n', &b[i..]) {
        let j = scan::ws(b, i + k + 1);
        if j < b.len() && b[j] == b'{' {
            return j;
        }
        i = i + k + 1;
        if i >= b.len() {
            break;
        }
    }
    b.len()
}

/// One scanned element of `traceEvents`.
struct Scanned<'a> {
    start: usize,
    end: usize,
    is_object: bool,
    event: Option<RawEvent<'a>>,
}

#[derive(Debug, Clone, Copy)]
enum Stop2 {
    /// The array ended; the position just after `]`.
    ArrayEnd(usize),
    /// Malformed JSON.
    Syntax(usize, &'static str),
}

/// What a scan of a stretch of the event array found.
#[derive(Default)]
struct Run<'a> {
    events: Vec<Scanned<'a>>,
    /// How far the scan got: the start of the next element (after its comma), or the end of
    /// the last element when no comma followed yet.
    end: usize,
    /// Why it stopped early.
    stop: Option<Stop2>,
    /// The bytes ended inside an element or between elements.
    needs_more: bool,
    /// At `end`, the next thing is an element (after a comma).
    expect_element: bool,
    /// Where a comma directly followed by `]` was.
    trailing_comma_at: Option<usize>,
}

/// Scans elements of the event array from `start` (an element, possibly after whitespace)
/// until the next element would start at or after `stop_at`, the array ends, or bytes run out.
fn scan_run<'a>(b: &'a [u8], start: usize, stop_at: usize, parsed: bool, stack: &mut Vec<u8>) -> Run<'a> {
    let mut run = Run { end: start, expect_element: true, ..Run::default() };
    let mut i = scan::ws(b, start);
    loop {
        if i >= b.len() {
            run.needs_more = true;
            return run;
        }
        if b[i] == b']' && !run.events.is_empty() {
            // Right after a comma: a trailing comma.
            run.trailing_comma_at = Some(run.end.saturating_sub(1));
            run.stop = Some(Stop2::ArrayEnd(i + 1));
            return run;
        }
        let is_object = b[i] == b'{';
        let r = if parsed && is_object {
            scan::event(b, i, stack).map(|(ev, e)| (Some(ev), e))
        } else {
            scan::skip(b, i, stack).map(|e| (None, e))
        };
        let (event, end) = match r {
            Ok(x) => x,
            Err(Stop::Eof) => {
                run.needs_more = true;
                return run;
            }
            Err(Stop::Syntax(p, what)) => {
                run.stop = Some(Stop2::Syntax(p, what));
                return run;
            }
        };
        run.events.push(Scanned { start: i, end, is_object, event });
        run.end = end;
        run.expect_element = false;
        let j = scan::ws(b, end);
        match b.get(j) {
            None => {
                run.needs_more = true;
                return run;
            }
            Some(b',') => {
                i = scan::ws(b, j + 1);
                run.end = i;
                run.expect_element = true;
                if i >= stop_at {
                    return run;
                }
            }
            Some(b']') => {
                run.stop = Some(Stop2::ArrayEnd(j + 1));
                return run;
            }
            Some(_) => {
                run.stop = Some(Stop2::Syntax(j, "',' or ']' after an event"));
                return run;
            }
        }
    }
}

/// Reads a whole document from `w`, streaming the trace events into `sink`.
pub(crate) fn read_document(
    w: &mut Window,
    sink: &mut dyn Sink,
    diag: &mut Diagnostics,
    threads: usize,
) -> Result<Document, Error> {
    w.fill(0)?;
    if w.rest().starts_with(b"\xEF\xBB\xBF") {
        diag.push(WarningKind::ByteOrderMark, Some(w.location(0, None)), "skipped a UTF-8 byte order mark");
        w.pos += 3;
    }
    let mut me = Walker { w, diag, stack: Vec::new(), stack2: Vec::new(), threads };
    let doc = match me.peek()? {
        None => return Err(Error::input(None, "the input is empty")),
        Some(b'[') => {
            me.w.pos += 1;
            let (n_events, cut) = me.events(sink)?;
            let doc = Document::Trace { metadata: None, n_events };
            if cut {
                return Ok(doc);
            }
            doc
        }
        Some(b'{') => {
            let location = me.here(None);
            me.w.pos += 1;
            match top_object(&mut me, sink, location)? {
                (doc, true) => return Ok(doc),
                (doc, false) => doc,
            }
        }
        Some(_) => {
            return Err(me.unexpected("'[' (a trace) or '{' (a trace object or a .cpuprofile)", None));
        }
    };
    if me.peek()?.is_some() {
        return Err(me.unexpected(
            "the end of the input after the JSON document (concatenated documents are not supported)",
            None,
        ));
    }
    Ok(doc)
}

/// The members of a top-level object. Returns the document and whether the input was cut.
fn top_object(me: &mut Walker<'_>, sink: &mut dyn Sink, location: Location) -> Result<(Document, bool), Error> {
    let mut fields: Vec<(String, Vec<u8>)> = Vec::new();
    let mut metadata = None;
    let mut n_events = None;
    macro_rules! cut {
        ($what:expr) => {{
            me.truncated($what);
            return Ok((finish_object(fields, metadata, n_events, location)?, true));
        }};
    }
    loop {
        match me.peek()? {
            None => cut!("inside the top-level object (no closing '}')"),
            Some(b'}') => {
                me.w.pos += 1;
                break;
            }
            Some(b'"') => {}
            Some(_) => return Err(me.unexpected("a key string or '}'", None)),
        }
        let Some(key) = me.key()? else { cut!("inside a top-level key") };
        if !me.expect(b':', "':' after a key", None)? {
            cut!("after a top-level key");
        }
        if key == "traceEvents" {
            if n_events.is_some() {
                return Err(Error::input(Some(me.here(None)), "a second \"traceEvents\" key in the top-level object"));
            }
            match me.peek()? {
                Some(b'[') => {
                    me.w.pos += 1;
                    fields.clear();
                    let (n, was_cut) = me.events(sink)?;
                    n_events = Some(n);
                    if was_cut {
                        return Ok((finish_object(fields, metadata, n_events, location)?, true));
                    }
                }
                Some(_) => return Err(me.unexpected("'[' (traceEvents must be an array)", None)),
                None => cut!("after \"traceEvents\":"),
            }
        } else {
            if me.peek()?.is_none() {
                cut!("after a top-level key");
            }
            let Some(raw) = me.raw_value()? else { cut!("inside a top-level value") };
            if key == "metadata" {
                metadata = Some(raw);
            } else if n_events.is_none() && PROFILE_KEYS.contains(&key.as_str()) {
                // Last one wins, as with JSON.parse.
                fields.retain(|(k, _)| *k != key);
                fields.push((key, raw));
            }
        }
        match me.peek()? {
            Some(b',') => me.w.pos += 1,
            Some(b'}') => {
                me.w.pos += 1;
                break;
            }
            Some(_) => return Err(me.unexpected("',' or '}' in the top-level object", None)),
            None => cut!("inside the top-level object (no closing '}')"),
        }
        if let Some(b'}') = me.peek()? {
            let loc = me.here(None);
            me.diag.push(WarningKind::TrailingComma, Some(loc), "trailing comma in the top-level object");
            me.w.pos += 1;
            break;
        }
    }
    Ok((finish_object(fields, metadata, n_events, location)?, false))
}

fn finish_object(
    fields: Vec<(String, Vec<u8>)>,
    metadata: Option<Vec<u8>>,
    n_events: Option<u64>,
    location: Location,
) -> Result<Document, Error> {
    if let Some(n_events) = n_events {
        return Ok(Document::Trace { metadata, n_events });
    }
    let is_profile = fields.iter().any(|(k, v)| (k == "nodes" && v.first() == Some(&b'[')) || k == "head");
    if is_profile {
        return Ok(Document::CpuProfile { fields, location });
    }
    Err(Error::input(
        Some(location),
        "expected a trace ({\"traceEvents\": [...]}) or a CPU profile ({\"nodes\": [...], \"samples\": [...], \"timeDeltas\": [...]}); this object has neither",
    ))
}
