//! The top level of an input document, streamed.
//!
//! A trace is a JSON array of events or an object with a `traceEvents` array; a `.cpuprofile`
//! is an object with `nodes` (or the legacy `head`). The walker reads the top level itself and
//! hands each element of `traceEvents` to a [`Sink`]: scan threads parse it into a borrowed
//! [`RawEvent`](super::scan::RawEvent) that holds only the fields the pipeline reads (`args` stays raw until someone
//! needs it) and let the sink [`prepare`](Sink::prepare) it; the sink then gets the prepared
//! events in file order, on one thread, while the next region is being scanned. Other
//! top-level values are kept as raw bytes only when they may be needed (`metadata` and the
//! fields of a `.cpuprofile`).

use super::copy::Copied;
use super::formats::{self, InputKind, OBJECT_FORMATS};
use super::json::{self, Stop};
use super::reader::{Text, Window};
use super::region::{Region, RegionStart, RegionStop, RunOptions, ScanJob, Scanned, BATCH, PIECES};
use super::sink::{EventCtx, Sink};
use crate::error::{Diagnostics, Error, Location, WarningKind};

/// What the top level turned out to be.
#[derive(Debug)]
pub(crate) enum Document {
    /// A trace; `metadata` is the raw `metadata` value when there was one.
    Trace {
        /// Raw bytes of the top-level `metadata` value.
        metadata: Option<Vec<u8>>,
        /// Number of elements in `traceEvents`.
        n_events: u64,
    },
    /// An object of another format ([`OBJECT_FORMATS`]): the raw bytes of the members its
    /// reader reads.
    Object {
        /// Which format.
        kind: InputKind,
        /// `(key, raw value)` in file order.
        fields: Vec<(String, Vec<u8>)>,
        /// Where the document starts.
        location: Location,
    },
}

struct Walker<'a> {
    w: &'a mut Window,
    diag: &'a mut Diagnostics,
    stack: Vec<u8>,
    /// The helper's scratch stack (locked once a region).
    stack2: std::sync::Mutex<Vec<u8>>,
    threads: usize,
    /// Takes the events' bytes, in file order, as they are delivered ([`read_document_copying`]).
    copy: Option<&'a mut CopyTo<'a>>,
}

/// Where the events' copies go: a piece at a time, in file order, with the bytes they lie in
/// and the offset of the first of those in the input.
pub(crate) type CopyTo<'a> = dyn FnMut(Copied, &[u8], u64) -> Result<(), Error> + 'a;

impl<'a> Walker<'a> {
    /// Skips whitespace; false at the end of input.
    fn skip_ws(&mut self) -> Result<bool, Error> {
        loop {
            let rest = self.w.rest();
            let (i, n) = (json::ws(rest, 0), rest.len());
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
        let Some(end) = self.scan_len(None, |b, _| json::string(b, 0).map(|(_, e)| e))? else {
            return Ok(None);
        };
        let (k, _) = json::string(self.w.rest(), 0).expect("scanned");
        let k = k.into_owned();
        self.w.pos += end;
        Ok(Some(k))
    }

    fn raw_value(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let Some(end) = self.scan_len(None, |b, st| json::skip(b, 0, st))? else { return Ok(None) };
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
        if self.w.cut_stream() {
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
    /// The array is taken a region (about [`BATCH`] bytes) at a time, in a pipeline: while
    /// this thread hands the events of one region to the sink, in file order, other threads
    /// scan the next region (and [`Sink::prepare`] its events). A large region is scanned by
    /// two threads: the second starts at a guessed event boundary (a newline and `{`; a raw
    /// newline is never inside a JSON string) and its work is kept only if the first thread's
    /// last event ends exactly there. With more than one thread allowed, the second is a
    /// [`ScanHelper`](crate::parallel::ScanHelper) helper for the whole array.
    fn events<S: Sink>(&mut self, sink: &mut S) -> Result<(u64, bool), Error> {
        if self.threads > 1 {
            crate::parallel::with_relay(|relay| self.events_with(sink, relay))
        } else {
            self.events_with(sink, None)
        }
    }

    /// [`Walker::events`], with a helper thread or none.
    fn events_with<S: Sink>(
        &mut self,
        sink: &mut S,
        relay: Option<&crate::parallel::ScanHelper>,
    ) -> Result<(u64, bool), Error> {
        let parsed = sink.wants_parsed();
        let name_at = sink.wants_name_at();
        let mut index: u64 = 0;
        // Where the next region starts (absolute), and what comes there.
        let mut next = self.w.offset();
        let mut expect_element = true;
        let mut after_comma = false;
        // Scanned and not yet delivered, with its bytes when they are no longer the window's.
        let mut pending: Option<(Region<S::Prep>, Option<Text>)> = None;
        // The bytes of the last region delivered, kept to read into again.
        let mut spare_bytes: Option<Text> = None;
        // The event lists' allocations, reused from region to region.
        let mut spare: Vec<Vec<Scanned<S::Prep>>> = Vec::new();
        let mut eof = false;
        let mut stuck = false;
        loop {
            let scan_more = pending.as_ref().is_none_or(|(p, _)| p.stop.is_none() && !p.last);
            if scan_more {
                // Read ahead; a region that could not finish its first element needs the
                // window to grow (it at least doubles).
                loop {
                    let ahead = (self.w.end_offset() - next) as usize;
                    if (ahead >= BATCH && !stuck) || eof {
                        break;
                    }
                    if self.w.fill(if stuck { ahead } else { 0 })? {
                        stuck = false;
                    } else {
                        eof = true;
                    }
                }
            }
            let Walker { w, diag, stack, stack2, copy, .. } = &mut *self;
            let copies = copy.is_some();
            let (w, mut read_ahead) = w.split();
            let from = (next - w.base()) as usize;
            let bytes = &w.buf[from..];
            let state = RegionStart { base: next, expect_element, after_comma, last: eof };
            let mut deliver = |(region, text): (Region<S::Prep>, Option<Text>)| {
                let bytes = text.as_ref().unwrap_or(w);
                let mut region = deliver_region(region, sink, bytes, diag, &mut index)?;
                if let Some(copy) = copy.as_deref_mut() {
                    region.copies.drain(..).try_for_each(|c| copy(c, &bytes.buf, bytes.base()))?;
                }
                Ok((region, text))
            };
            let (scanned, delivered) = if !scan_more {
                (None, pending.take().map(&mut deliver).transpose())
            } else {
                let pieces = if relay.is_some() { PIECES } else { 1 };
                let opts = RunOptions { parsed, name_at, max_value: w.max_value(), copy: copies };
                let job = ScanJob::<S>::new(bytes, state, opts, pieces, &mut spare);
                let d = if let Some(relay) = relay {
                    // The helper scans from the start; this thread joins in once the previous
                    // region is delivered and the next one read.
                    let job = &job;
                    relay.run(&|| job.work(&mut crate::parallel::lock(stack2)), || {
                        // A delivered region's mapped pages are handed back here, while
                        // the helper scans, not between regions with the helper idle. Its
                        // bytes read into memory are kept to read into again.
                        let d = pending
                            .take()
                            .map(&mut deliver)
                            .map(|r| r.map(|(region, text)| (region, text.filter(|t| !t.buf.is_mapped()))));
                        if !eof {
                            read_ahead.read(BATCH);
                        }
                        job.work(stack);
                        d
                    })
                } else {
                    let d = pending.take().map(&mut deliver);
                    job.work(stack);
                    d
                };
                (Some(job.finish(&mut spare)), d.transpose())
            };
            // The delivered region's own ending: an error, the array's end, or a cut input.
            if let Some((mut done, text)) = delivered? {
                spare.append(&mut done.events);
                if text.is_some() {
                    spare_bytes = text;
                }
                if let Some(end) = self.region_stop(&done, index) {
                    return end;
                }
            }
            let Some(region) = scanned else { continue };
            stuck = region.events.iter().all(Vec::is_empty)
                && region.end == next
                && region.stop.is_none()
                && region.needs_more;
            // The new region's bytes are kept until they are delivered: scanning goes on in
            // the bytes read ahead (the window moves to them, without copying the region);
            // a region that ends the scan stays in the window, where the walker goes on.
            let text = if region.stop.is_none() && !region.last && !stuck {
                Some(self.w.advance_to(region.end, spare_bytes.take(), (from, region.newlines)))
            } else {
                self.w.pos = from;
                None
            };
            next = region.end;
            expect_element = region.expect_element;
            after_comma = region.after_comma;
            pending = Some((region, text));
        }
    }
    /// Where a delivered region's own ending leaves the walk: at the array's end, at a syntax
    /// error, or at the end of a cut input (None: the walk goes on).
    fn region_stop<P>(&mut self, done: &Region<P>, index: u64) -> Option<Result<(u64, bool), Error>> {
        match done.stop {
            Some(RegionStop::ArrayEnd(p)) => {
                self.w.pos = (p - self.w.base()) as usize;
                Some(Ok((index, false)))
            }
            Some(RegionStop::Syntax(p, what)) => {
                self.w.pos = (p - self.w.base()) as usize;
                let event = if what.starts_with("',' or ']'") { index.checked_sub(1) } else { Some(index) };
                Some(Err(self.unexpected(what, event)))
            }
            None if done.last && done.needs_more => {
                self.w.pos = (done.end - self.w.base()) as usize;
                let left = self.w.rest().len();
                let what = if done.expect_element && left > 0 {
                    "in the middle of an event"
                } else {
                    "inside the event array (no closing ']')"
                };
                self.truncated(what);
                Some(Ok((index, true)))
            }
            None => None,
        }
    }
}

/// Hands the events of a scanned region to the sink, in file order. Returns the region (its
/// event lists emptied, for reuse) so that the caller can act on how it ended.
fn deliver_region<S: Sink>(
    mut region: Region<S::Prep>,
    sink: &mut S,
    w: &Text,
    diag: &mut Diagnostics,
    index: &mut u64,
) -> Result<Region<S::Prep>, Error> {
    let base = w.base();
    // The bad UTF-8 sequences found by the scan, reported with the event that holds them.
    let mut bad = 0;
    for (k, piece) in region.events.iter_mut().enumerate() {
        // A piece's names go to the sink before its events.
        if let Some(names) = region.names.get(k).filter(|_| !piece.is_empty()) {
            sink.piece_names(names);
        }
        for e in piece.drain(..) {
            *index += u64::from(e.inert_before);
            while let Some(&at) = region.bad_utf8.get(bad).filter(|&&at| at < e.end) {
                bad_utf8(diag, w, at, (at >= e.start).then_some(*index));
                bad += 1;
            }
            let raw = &w.buf[(e.start - base) as usize..(e.end - base) as usize];
            if raw.len() > w.max_value() {
                return Err(Error::input(
                    Some(w.location(e.start, Some(*index))),
                    format!(
                        "the event is {} bytes, more than the limit of {} (raise it with --max-event-bytes)",
                        raw.len(),
                        w.max_value()
                    ),
                ));
            }
            let ctx = EventCtx { index: *index, start: e.start, raw, window: w, lossy: false };
            match e.prep {
                Some(prep) => sink.event(prep, &ctx, diag)?,
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
            *index += 1;
        }
    }
    for &at in &region.bad_utf8[bad..] {
        bad_utf8(diag, w, at, None);
    }
    if let Some(t) = region.trailing_comma_at {
        diag.push(WarningKind::TrailingComma, Some(w.location(t, None)), "trailing comma after the last event");
    }
    Ok(region)
}

fn bad_utf8(diag: &mut Diagnostics, w: &Text, at: u64, event: Option<u64>) {
    diag.push(
        WarningKind::InvalidUtf8,
        Some(w.location(at, event)),
        "bytes that are not UTF-8; read as U+FFFD, as Node's decoder does",
    );
}

/// Reads a whole document from `w`, streaming the trace events into `sink`.
pub(crate) fn read_document<S: Sink>(
    w: &mut Window,
    sink: &mut S,
    diag: &mut Diagnostics,
    threads: usize,
) -> Result<Document, Error> {
    read_document_with(w, sink, diag, threads, None)
}

/// [`read_document`], handing `copy` each object of the event array, as its bytes were
/// ([`Copied`]), in file order (the sink must want its events parsed).
pub(crate) fn read_document_copying<'a, S: Sink>(
    w: &'a mut Window,
    sink: &mut S,
    diag: &'a mut Diagnostics,
    threads: usize,
    copy: &'a mut CopyTo<'a>,
) -> Result<Document, Error> {
    read_document_with(w, sink, diag, threads, Some(copy))
}

fn read_document_with<'a, S: Sink>(
    w: &'a mut Window,
    sink: &mut S,
    diag: &'a mut Diagnostics,
    threads: usize,
    copy: Option<&'a mut CopyTo<'a>>,
) -> Result<Document, Error> {
    w.fill(0)?;
    if w.rest().starts_with(b"\xEF\xBB\xBF") {
        diag.push(WarningKind::ByteOrderMark, Some(w.location(0, None)), "skipped a UTF-8 byte order mark");
        w.pos += 3;
    }
    let mut me = Walker { w, diag, stack: Vec::new(), stack2: std::sync::Mutex::new(Vec::new()), threads, copy };
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
            let mut e =
                me.unexpected("'[' (a trace) or '{' (a trace object, a .cpuprofile or a Firefox profile)", None);
            let what = packed(me.w.rest()).filter(|_| me.w.offset() == 0);
            if let (Some(what), Error::Input { message, .. }) = (what, &mut e) {
                message.push_str(&format!(" (it is {what})"));
            }
            return Err(e);
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

/// What an input that starts with `b` is, when it is an archive or compressed data that
/// jscalls does not unpack (gzip it reads itself): said with the error, so that the user
/// knows what to do.
fn packed(b: &[u8]) -> Option<&'static str> {
    Some(match b {
        [b'P', b'K', 3, 4, ..] => "a zip archive: unzip it and give the trace inside",
        [0x28, 0xb5, 0x2f, 0xfd, ..] => "zstd data: decompress it first (zstd -d), or gzip it",
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => "bzip2 data: decompress it first (bunzip2), or gzip it",
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => "xz data: decompress it first (unxz), or gzip it",
        _ => return None,
    })
}

/// The members of a top-level object. Returns the document and whether the input was cut.
fn top_object<S: Sink>(me: &mut Walker<'_>, sink: &mut S, location: Location) -> Result<(Document, bool), Error> {
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
            let raw = if key == "nodes" && n_events.is_none() {
                let Some(end) = me.scan_len(None, |b, st| json::skip(b, 0, st))? else {
                    cut!("inside a top-level value")
                };
                let value = &me.w.rest()[..end];
                let taken = value.first() == Some(&b'[') && sink.profile_nodes(value, location);
                let raw = if taken { Vec::new() } else { value.to_vec() };
                me.w.pos += end;
                raw
            } else {
                let Some(raw) = me.raw_value()? else { cut!("inside a top-level value") };
                raw
            };
            if key == "metadata" {
                metadata = Some(raw);
            } else if n_events.is_none() && formats::kept(&key) {
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
    match OBJECT_FORMATS.iter().find(|f| (f.is)(&fields)) {
        Some(f) => Ok(Document::Object { kind: f.kind, fields, location }),
        None => Err(Error::input(Some(location), formats::EXPECTED)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn archives_and_other_compressors_are_named() {
        let said = |b: &[u8]| super::packed(b).map(|w| w.split(':').next().unwrap_or(w));
        assert_eq!(said(b"PK\x03\x04\x14\x00"), Some("a zip archive"));
        assert_eq!(said(&[0x28, 0xb5, 0x2f, 0xfd, 0x24]), Some("zstd data"));
        assert_eq!(said(b"BZh91AY&SY"), Some("bzip2 data"));
        assert_eq!(said(&[0xfd, b'7', b'z', b'X', b'Z', 0, 0]), Some("xz data"));
        // Text that only starts like one, and gzip (read as it is), are not.
        for not in [&b"PK and more"[..], b"BZh", b"BZhx", &[0x1f, 0x8b, 8], b"[]"] {
            assert_eq!(said(not), None, "{not:?}");
        }
    }
}
