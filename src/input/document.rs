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
        /// True when the events were a bare array (no enclosing object).
        bare_array: bool,
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
        self.diag.push(
            WarningKind::Truncated,
            Some(loc),
            format!("the input ends {what}; the complete events before the cut were used"),
        );
    }

    /// One element of `traceEvents` at the cursor. Returns false when the input ends inside it.
    fn element(&mut self, sink: &mut dyn Sink, index: u64) -> Result<bool, Error> {
        let start = self.w.offset();
        let is_object = self.w.rest()[0] == b'{';
        if !(sink.wants_parsed() && is_object) {
            let Some(end) = self.scan_len(Some(index), |b, st| scan::skip(b, 0, st))? else { return Ok(false) };
            let raw = &self.w.rest()[..end];
            let ctx = EventCtx { index, start, raw, window: self.w, lossy: false };
            if is_object {
                sink.raw_event(raw, &ctx)?;
            } else {
                let loc = ctx.location();
                self.diag.push(
                    WarningKind::NotAnObject,
                    Some(loc),
                    "an element of traceEvents is not an object; skipped (DevTools would fail to load the trace)",
                );
            }
            self.w.pos += end;
            return Ok(true);
        }
        loop {
            let n = self.w.rest().len();
            let Walker { w, diag, stack } = self;
            match scan::event(w.rest(), 0, stack) {
                Ok((ev, end)) => {
                    let raw = &w.rest()[..end];
                    let ctx = EventCtx { index, start, raw, window: w, lossy: false };
                    sink.event(&ev, &ctx, diag)?;
                    w.pos += end;
                    return Ok(true);
                }
                Err(Stop::Syntax(p, what)) => return Err(self.unexpected_at(p, what, Some(index))),
                Err(Stop::Eof) => {
                    if !self.w.fill(n)? {
                        return Ok(false);
                    }
                }
            }
        }
    }

    /// Streams the elements of `traceEvents`; the cursor is just after `[`.
    /// Returns (number of elements, whether the input was cut inside the array).
    fn events(&mut self, sink: &mut dyn Sink) -> Result<(u64, bool), Error> {
        let mut index: u64 = 0;
        match self.peek()? {
            None => {
                self.truncated("inside the event array (no closing ']')");
                return Ok((0, true));
            }
            Some(b']') => {
                self.w.pos += 1;
                return Ok((0, false));
            }
            Some(_) => {}
        }
        loop {
            if !self.element(sink, index)? {
                self.truncated("in the middle of an event");
                return Ok((index, true));
            }
            index += 1;
            match self.peek()? {
                Some(b',') => self.w.pos += 1,
                Some(b']') => {
                    self.w.pos += 1;
                    return Ok((index, false));
                }
                Some(_) => return Err(self.unexpected("',' or ']' after an event", Some(index - 1))),
                None => {
                    self.truncated("inside the event array (no closing ']')");
                    return Ok((index, true));
                }
            }
            match self.peek()? {
                Some(b']') => {
                    let loc = self.here(None);
                    self.diag.push(WarningKind::TrailingComma, Some(loc), "trailing comma after the last event");
                    self.w.pos += 1;
                    return Ok((index, false));
                }
                None => {
                    self.truncated("inside the event array (no closing ']')");
                    return Ok((index, true));
                }
                Some(_) => {}
            }
        }
    }
}

/// Reads a whole document from `w`, streaming the trace events into `sink`.
pub(crate) fn read_document(w: &mut Window, sink: &mut dyn Sink, diag: &mut Diagnostics) -> Result<Document, Error> {
    w.fill(0)?;
    if w.rest().starts_with(b"\xEF\xBB\xBF") {
        diag.push(WarningKind::ByteOrderMark, Some(w.location(0, None)), "skipped a UTF-8 byte order mark");
        w.pos += 3;
    }
    let mut me = Walker { w, diag, stack: Vec::new() };
    let doc = match me.peek()? {
        None => return Err(Error::input(None, "the input is empty")),
        Some(b'[') => {
            me.w.pos += 1;
            let (n_events, cut) = me.events(sink)?;
            let doc = Document::Trace { metadata: None, bare_array: true, n_events };
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
        return Ok(Document::Trace { metadata, bare_array: false, n_events });
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
