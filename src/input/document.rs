//! The top level of an input document, streamed.
//!
//! A trace is a JSON array of events or an object with a `traceEvents` array; a `.cpuprofile`
//! is an object with `nodes` (or the legacy `head`). The walker reads the top level itself and
//! hands each element of `traceEvents` to a [`Sink`], parsed into a borrowed [`RawEvent`] that
//! holds only the fields the pipeline reads (`args` stays raw until someone needs it). Other
//! top-level values are kept as raw bytes only when they may be needed (`metadata` and the
//! fields of a `.cpuprofile`).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::loose::Loose;
use super::reader::{serde_message, Window};
use crate::error::{Diagnostics, Error, Location, WarningKind};

/// The fields of one trace event that the pipeline reads. Strings borrow from the input.
#[derive(Debug, Default)]
pub struct RawEvent<'a> {
    /// `name`.
    pub name: Loose<'a>,
    /// `cat`.
    pub cat: Loose<'a>,
    /// `ph`.
    pub ph: Loose<'a>,
    /// `ts`, µs.
    pub ts: Loose<'a>,
    /// `dur`, µs.
    pub dur: Loose<'a>,
    /// `pid`.
    pub pid: Loose<'a>,
    /// `tid`.
    pub tid: Loose<'a>,
    /// `id` (the profile id of `Profile` / `ProfileChunk`).
    pub id: Loose<'a>,
    /// `args`, unparsed.
    pub args: Option<&'a RawValue>,
    /// Whether the event has a top-level `callFrame` key (DevTools would take it for a ProfileCall).
    pub has_call_frame: bool,
}

impl<'a> RawEvent<'a> {
    /// The phase as a single byte, or 0 when it is not a one-character string.
    pub fn phase(&self) -> u8 {
        match &self.ph {
            Loose::Str(s) if s.len() == 1 => s.as_bytes()[0],
            _ => 0,
        }
    }
}

enum Field {
    Name,
    Cat,
    Ph,
    Ts,
    Dur,
    Pid,
    Tid,
    Id,
    Args,
    CallFrame,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "name" => Field::Name,
                    "cat" => Field::Cat,
                    "ph" => Field::Ph,
                    "ts" => Field::Ts,
                    "dur" => Field::Dur,
                    "pid" => Field::Pid,
                    "tid" => Field::Tid,
                    "id" => Field::Id,
                    "args" => Field::Args,
                    "callFrame" => Field::CallFrame,
                    _ => Field::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawEvent<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = RawEvent<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a trace event object")
            }
            // Duplicate keys: the last one wins, as with JSON.parse.
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEvent<'a>, A::Error> {
                let mut ev = RawEvent::default();
                while let Some(k) = map.next_key::<Field>()? {
                    match k {
                        Field::Name => ev.name = map.next_value()?,
                        Field::Cat => ev.cat = map.next_value()?,
                        Field::Ph => ev.ph = map.next_value()?,
                        Field::Ts => ev.ts = map.next_value()?,
                        Field::Dur => ev.dur = map.next_value()?,
                        Field::Pid => ev.pid = map.next_value()?,
                        Field::Tid => ev.tid = map.next_value()?,
                        Field::Id => ev.id = map.next_value()?,
                        Field::Args => ev.args = Some(map.next_value()?),
                        Field::CallFrame => {
                            map.next_value::<IgnoredAny>()?;
                            ev.has_call_frame = true;
                        }
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(ev)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

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

    /// The location of a serde error raised while parsing `part`, a sub-slice of the event.
    pub fn serde_location(&self, part: &str, err: &serde_json::Error) -> Location {
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
}

enum Parsed<T> {
    Value(T, usize),
}

impl<'a> Walker<'a> {
    /// Skips whitespace; false at the end of input.
    fn skip_ws(&mut self) -> Result<bool, Error> {
        loop {
            let rest = self.w.rest();
            match rest.iter().position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t')) {
                Some(i) => {
                    self.w.pos += i;
                    return Ok(true);
                }
                None => {
                    self.w.pos += rest.len();
                    if !self.w.fill(0)? {
                        return Ok(false);
                    }
                }
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
        let found = match self.w.rest().first() {
            Some(&b) if b.is_ascii_graphic() => format!("'{}'", b as char),
            Some(&b) => format!("byte 0x{b:02x}"),
            None => "the end of the input".to_owned(),
        };
        Error::input(Some(self.here(event)), format!("expected {expected}, found {found}"))
    }

    /// Parses one JSON value at the cursor with serde, reading more input as needed.
    /// Returns None at the end of input (the value was cut off).
    fn with_value<T, R>(
        &mut self,
        event: Option<u64>,
        mut f: impl FnMut(&[u8]) -> Result<Parsed<T>, serde_json::Error>,
        mut done: impl FnMut(&mut Self, T, usize) -> Result<R, Error>,
    ) -> Result<Option<R>, Error> {
        loop {
            let rest = self.w.rest();
            let n_rest = rest.len();
            match f(rest) {
                Ok(Parsed::Value(v, used)) if used < n_rest || self.w.at_eof() => {
                    let r = done(self, v, used)?;
                    return Ok(Some(r));
                }
                Ok(Parsed::Value(..)) => {}
                Err(e) if e.classify() == serde_json::error::Category::Eof && !self.w.at_eof() => {}
                Err(e) if e.classify() == serde_json::error::Category::Eof => return Ok(None),
                Err(e) => {
                    let loc = self.w.serde_location(self.w.offset(), &e, event);
                    return Err(Error::input(Some(loc), serde_message(&e)));
                }
            }
            if !self.w.fill(n_rest)? {
                // At the end: one more round decides between a value that ends exactly at
                // the end of input and one that was cut.
                if self.w.rest().len() == n_rest {
                    match f(self.w.rest()) {
                        Ok(Parsed::Value(v, used)) => return done(self, v, used).map(Some),
                        _ => return Ok(None),
                    }
                }
            }
        }
    }

    fn raw_value(&mut self, event: Option<u64>) -> Result<Option<Vec<u8>>, Error> {
        self.with_value(
            event,
            |bytes| frame(bytes).map(|n| Parsed::Value((), n)),
            |me, (), used| {
                let v = me.w.rest()[..used].to_vec();
                me.w.pos += used;
                Ok(v)
            },
        )
    }

    fn key(&mut self) -> Result<Option<String>, Error> {
        self.with_value(
            None,
            |bytes| {
                let (k, used) = parse_prefix::<Cow<str>>(bytes)?;
                Ok(Parsed::Value(k.into_owned(), used))
            },
            |me, k, used| {
                me.w.pos += used;
                Ok(k)
            },
        )
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

    /// Streams the elements of `traceEvents`; the cursor is just after `[`.
    /// Returns (number of elements, whether the input was cut inside the array).
    fn events(&mut self, sink: &mut dyn Sink) -> Result<(u64, bool), Error> {
        let mut index: u64 = 0;
        let parsed = sink.wants_parsed();
        loop {
            match self.peek()? {
                None => {
                    self.truncated("inside the event array (no closing ']')");
                    return Ok((index, true));
                }
                Some(b']') => {
                    if index > 0 {
                        let loc = self.here(None);
                        self.diag.push(WarningKind::TrailingComma, Some(loc), "trailing comma after the last event");
                    }
                    self.w.pos += 1;
                    return Ok((index, false));
                }
                Some(_) => {}
            }
            let start = self.w.offset();
            let is_object = self.w.rest()[0] == b'{';
            let got = if parsed && is_object {
                self.parsed_event(sink, index, start)?
            } else {
                let idx = index;
                let got = self.with_value(
                    Some(idx),
                    |bytes| frame(bytes).map(|n| Parsed::Value((), n)),
                    |me, (), used| {
                        let raw = &me.w.rest()[..used];
                        let ctx = EventCtx { index: idx, start, raw, window: me.w, lossy: false };
                        if !is_object {
                            let loc = ctx.location();
                            me.diag.push(
                                WarningKind::NotAnObject,
                                Some(loc),
                                "an element of traceEvents is not an object; skipped (DevTools would fail to load the trace)",
                            );
                        }
                        let r = if is_object || !parsed { sink.raw_event(raw, &ctx) } else { Ok(()) };
                        me.w.pos += used;
                        r
                    },
                )?;
                got
            };
            if got.is_none() {
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
            if let Some(b']') = self.peek()? {
                let loc = self.here(None);
                self.diag.push(WarningKind::TrailingComma, Some(loc), "trailing comma after the last event");
                self.w.pos += 1;
                return Ok((index, false));
            }
        }
    }

    fn parsed_event(&mut self, sink: &mut dyn Sink, index: u64, start: u64) -> Result<Option<()>, Error> {
        let mut bad_utf8 = false;
        let r = self.with_value(
            Some(index),
            |bytes| {
                match parse_prefix::<RawEvent>(bytes) {
                    Ok((_, used)) => Ok(Parsed::Value((), used)),
                    Err(e) if e.classify() == serde_json::error::Category::Eof => Err(e),
                    Err(e) => {
                        // Invalid UTF-8 inside strings: Node decodes the file with
                        // replacement characters, so we do too (below), if that is the cause.
                        match frame(bytes) {
                            Ok(n) if std::str::from_utf8(&bytes[..n]).is_err() => {
                                Ok(Parsed::Value((), n))
                            }
                            Ok(_) => Err(e),
                            Err(e2) if e2.classify() == serde_json::error::Category::Eof => Err(e2),
                            Err(_) => Err(e),
                        }
                    }
                }
            },
            |me, (), used| {
                let raw = &me.w.rest()[..used];
                let lossy = std::str::from_utf8(raw).is_err();
                if lossy {
                    bad_utf8 = true;
                    let fixed = String::from_utf8_lossy(raw).into_owned();
                    let ctx = EventCtx { index, start, raw: fixed.as_bytes(), window: me.w, lossy: true };
                    let loc = ctx.location();
                    me.diag.push(
                        WarningKind::Other,
                        Some(loc),
                        "invalid UTF-8 in an event; replaced with U+FFFD as Node's decoder does",
                    );
                    let ev = serde_json::from_str::<RawEvent>(&fixed).map_err(|e| {
                        Error::input(Some(ctx.location()), format!("cannot parse event: {}", serde_message(&e)))
                    })?;
                    sink.event(&ev, &ctx, me.diag)?;
                } else {
                    let ev = serde_json::from_slice::<RawEvent>(raw).expect("parsed once already");
                    let ctx = EventCtx { index, start, raw, window: me.w, lossy: false };
                    sink.event(&ev, &ctx, me.diag)?;
                }
                me.w.pos += used;
                Ok(())
            },
        )?;
        let _ = bad_utf8;
        Ok(r)
    }
}

/// Finds the end of the JSON value at the start of `bytes` (validating it).
pub(crate) fn frame(bytes: &[u8]) -> Result<usize, serde_json::Error> {
    parse_prefix::<IgnoredAny>(bytes).map(|(_, n)| n)
}

/// Parses the JSON value at the start of `bytes`; returns it and the number of bytes it took.
pub(crate) fn parse_prefix<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<(T, usize), serde_json::Error> {
    let mut it = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    match it.next() {
        Some(Ok(v)) => Ok((v, it.byte_offset())),
        Some(Err(e)) => Err(e),
        None => Err(serde_json::from_slice::<IgnoredAny>(b"").expect_err("empty input is an EOF error")),
    }
}

/// Reads a whole document from `w`, streaming the trace events into `sink`.
pub(crate) fn read_document(w: &mut Window, sink: &mut dyn Sink, diag: &mut Diagnostics) -> Result<Document, Error> {
    w.fill(0)?;
    if w.rest().starts_with(b"\xEF\xBB\xBF") {
        diag.push(WarningKind::ByteOrderMark, Some(w.location(0, None)), "skipped a UTF-8 byte order mark");
        w.pos += 3;
    }
    let mut me = Walker { w, diag };
    let doc = match me.peek()? {
        None => return Err(Error::input(None, "the input is empty")),
        Some(b'[') => {
            me.w.pos += 1;
            let (n_events, cut) = me.events(sink)?;
            if cut {
                return Ok(Document::Trace { metadata: None, bare_array: true, n_events });
            }
            Document::Trace { metadata: None, bare_array: true, n_events }
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
    loop {
        match me.peek()? {
            None => {
                me.truncated("inside the top-level object (no closing '}')");
                return Ok((finish_object(fields, metadata, n_events, location)?, true));
            }
            Some(b'}') => {
                me.w.pos += 1;
                break;
            }
            Some(b'"') => {}
            Some(_) => return Err(me.unexpected("a key string or '}'", None)),
        }
        let Some(key) = me.key()? else {
            me.truncated("inside a top-level key");
            return Ok((finish_object(fields, metadata, n_events, location)?, true));
        };
        if !me.expect(b':', "':' after a key", None)? {
            me.truncated("after a top-level key");
            return Ok((finish_object(fields, metadata, n_events, location)?, true));
        }
        if key == "traceEvents" {
            if n_events.is_some() {
                return Err(Error::input(Some(me.here(None)), "a second \"traceEvents\" key in the top-level object"));
            }
            match me.peek()? {
                Some(b'[') => {
                    me.w.pos += 1;
                    fields.clear();
                    let (n, cut) = me.events(sink)?;
                    n_events = Some(n);
                    if cut {
                        return Ok((finish_object(fields, metadata, n_events, location)?, true));
                    }
                }
                Some(_) => return Err(me.unexpected("'[' (traceEvents must be an array)", None)),
                None => {
                    me.truncated("after \"traceEvents\":");
                    return Ok((finish_object(fields, metadata, n_events, location)?, true));
                }
            }
        } else {
            if me.peek()?.is_none() {
                me.truncated("after a top-level key");
                return Ok((finish_object(fields, metadata, n_events, location)?, true));
            }
            let Some(raw) = me.raw_value(None)? else {
                me.truncated(&format!("inside the top-level \"{key}\" value"));
                return Ok((finish_object(fields, metadata, n_events, location)?, true));
            };
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
            None => {
                me.truncated("inside the top-level object (no closing '}')");
                return Ok((finish_object(fields, metadata, n_events, location)?, true));
            }
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
