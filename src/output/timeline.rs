//! The timeline JSON: the input trace, every event kept byte for byte, plus one complete (`X`)
//! event per estimated call, so DevTools, Perfetto, chrome://tracing and the Firefox Profiler
//! show the JS calls beside the thread they ran on.
//!
//! The calls of a sampled thread go to a thread of their own in the same process (named
//! "NAME: JS calls (jscalls)"), with a tid above every tid of the input: on the sampled thread
//! itself they would change what DevTools estimates from the samples still in the file (its
//! merge treats them as trace events, which cut and nest its calls), and a viewer would show
//! both, one inside the other.
//!
//! The input's events are handed over as they are, while the input is read (a piece of the
//! event array at a time) or read again, so memory does not grow with the input.

use std::io::Write;

use super::calls::write_field;
use crate::error::Error;
use crate::estimate::{Estimates, ThreadCalls};
use crate::input::copy::{self, Copied, Extent, Part};
use crate::js::{write_int, write_json_string, write_number, Scalar};
use crate::strings::Strings;
use crate::tree::Stacks;
use crate::view::Thread;

/// The category of the added call events.
pub(crate) const CALL_CATEGORY: &str = "jscalls";

/// Writes a timeline: the header, then the input's events one by one as the caller reads them
/// ([`TimelineWriter::event`]), then each thread's calls ([`TimelineWriter::finish`]).
pub(crate) struct TimelineWriter<'a> {
    out: &'a mut dyn Write,
    n: u64,
    /// The largest integer after any `"tid":` in any event (never less than the event's own tid).
    max_tid: i64,
    /// The events a viewer shows ([`copy::span`]), from the earliest start to the latest end.
    span: Extent,
}

/// Where a timeline stands after the input's events: what its end needs of them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Written {
    n: u64,
    max_tid: i64,
    span: Extent,
}

impl Written {
    fn add(&mut self, c: &Copied) {
        self.n += c.events;
        self.max_tid = self.max_tid.max(c.max_tid);
        self.span.join(c.span);
    }
}

/// The runs of events a timeline copies, noted while its input is read, for an output that
/// cannot be taken back once written (standard output, a pipe): once the read has succeeded
/// they are copied from a plain second read of the input ([`TimelineWriter::replay`]), which
/// costs a copy where parsing the events again cost as much as the first read.
#[derive(Debug, Default)]
pub(crate) struct CopyPlan {
    parts: Vec<Part>,
    /// Bytes of repaired events held in `parts`.
    held: usize,
    at: Written,
    /// The runs were too many to hold (an input whose events are not separated by `,\n`
    /// makes one an event): the input is read and parsed again instead.
    overflowed: bool,
}

/// Runs a [`CopyPlan`] holds at most (32 bytes each), and bytes of repaired events.
const PLAN_PARTS: usize = 1 << 18;
const PLAN_BYTES: usize = 16 << 20;

impl CopyPlan {
    /// Notes a piece's events ([`TimelineWriter::copied`] writes them instead).
    pub(crate) fn note(&mut self, c: Copied) {
        self.at.add(&c);
        if self.overflowed {
            return;
        }
        for part in c.parts {
            if let Part::Repaired(bytes) = &part {
                self.held += bytes.len();
            }
            self.parts.push(part);
        }
        if self.parts.len() > PLAN_PARTS || self.held > PLAN_BYTES {
            (self.parts, self.overflowed) = (Vec::new(), true);
        }
    }

    /// Whether every run was held, so that [`TimelineWriter::replay`] can copy them.
    pub(crate) fn is_whole(&self) -> bool {
        !self.overflowed
    }
}

fn io(e: std::io::Error) -> Error {
    Error::io("cannot write the timeline", e)
}

impl<'a> TimelineWriter<'a> {
    /// Starts the document.
    pub(crate) fn new(out: &'a mut dyn Write) -> Result<TimelineWriter<'a>, Error> {
        out.write_all(b"{\"traceEvents\":[\n").map_err(io)?;
        Ok(TimelineWriter { out, n: 0, max_tid: 0, span: Extent::default() })
    }

    /// Starts the document and copies the events `plan` noted (it [is whole](CopyPlan::is_whole)),
    /// from `input`: the bytes the plan was made from, read again from their start.
    pub(crate) fn replay(
        out: &'a mut dyn Write,
        plan: CopyPlan,
        input: &mut dyn std::io::Read,
        name: &str,
    ) -> Result<TimelineWriter<'a>, Error> {
        let mut w = TimelineWriter::new(out)?;
        let mut buf = vec![0u8; 1 << 20];
        // Where `input` stands; a repaired event's own bytes are passed over with the gap
        // before the next run.
        let mut at = 0u64;
        for (k, part) in plan.parts.iter().enumerate() {
            if k > 0 {
                w.out.write_all(b",\n").map_err(io)?;
            }
            match part {
                Part::Input(s, e) => {
                    pass_on(input, *s - at, None, &mut buf, name)?;
                    // A run is whole events: a cheap sign that the bytes are those first read.
                    if pass_on(input, e - s, Some(&mut *w.out), &mut buf, name)? != (b'{', b'}') {
                        return Err(changed(
                            name,
                            std::io::ErrorKind::InvalidData,
                            "its events are not where they first were",
                        ));
                    }
                    at = *e;
                }
                Part::Repaired(bytes) => w.out.write_all(bytes).map_err(io)?,
            }
        }
        (w.n, w.max_tid, w.span) = (plan.at.n, plan.at.max_tid, plan.at.span);
        Ok(w)
    }

    /// Goes on after the events (written through another writer).
    pub(crate) fn resume(out: &'a mut dyn Write, at: Written) -> TimelineWriter<'a> {
        TimelineWriter { out, n: at.n, max_tid: at.max_tid, span: at.span }
    }

    /// Where the timeline stands.
    pub(crate) fn written(&self) -> Written {
        Written { n: self.n, max_tid: self.max_tid, span: self.span }
    }

    /// The earliest start and latest end of the events written that a viewer shows, µs.
    pub(crate) fn span(&self) -> (f64, f64) {
        self.span.get()
    }

    /// Copies the events of a piece of the input, as the scan found them in `input` (whose
    /// first byte is at `base`).
    pub(crate) fn copied(&mut self, c: Copied, input: &[u8], base: u64) -> Result<(), Error> {
        let mut at = Written { n: self.n, max_tid: self.max_tid, span: self.span };
        at.add(&c);
        for (k, part) in c.parts.iter().enumerate() {
            if self.n > 0 || k > 0 {
                self.out.write_all(b",\n").map_err(io)?;
            }
            let bytes = match part {
                Part::Input(s, e) => &input[(s - base) as usize..(e - base) as usize],
                Part::Repaired(bytes) => bytes,
            };
            self.out.write_all(bytes).map_err(io)?;
        }
        (self.n, self.max_tid, self.span) = (at.n, at.max_tid, at.span);
        Ok(())
    }

    /// Copies one input event, as its bytes were; `span`, its [`copy::span`].
    pub(crate) fn event(&mut self, raw: &[u8], span: Option<(f64, f64)>) -> Result<(), Error> {
        self.max_tid = copy::max_tid(raw, self.max_tid);
        self.span.note(span);
        if self.n > 0 {
            self.out.write_all(b",\n").map_err(io)?;
        }
        self.n += 1;
        // Invalid UTF-8 is written as Node reads it (U+FFFD), so the output stays valid JSON text.
        match std::str::from_utf8(raw) {
            Ok(_) => self.out.write_all(raw),
            Err(_) => self.out.write_all(String::from_utf8_lossy(raw).as_bytes()),
        }
        .map_err(io)
    }

    /// Writes each thread's calls and ends the document with the input's `metadata`, if any.
    /// For a `.cpuprofile` input the events are the calls alone (plus the thread's name).
    /// With `samples`, each thread's calls are also written as samples ([`write_resampled`]),
    /// which `range`, the time the input spans (µs), frames. The calls' lines are rendered
    /// on up to `threads` threads.
    pub(crate) fn finish(
        self,
        mut t: impl Estimates,
        cpu_profile: bool,
        metadata: Option<&[u8]>,
        range: (f64, f64),
        samples: bool,
        threads: usize,
    ) -> Result<(), Error> {
        let TimelineWriter { out, mut n, max_tid, .. } = self;
        let mut line = String::with_capacity(512);
        let mut k = 0i64;
        let spare = std::cell::RefCell::new(Vec::<String>::new());
        t.each(|th, strings| {
            k += 1;
            // A .cpuprofile's calls are its only events: they stay on its thread.
            let tid = if cpu_profile { th.tid } else { max_tid.saturating_add(k) };
            if th.calls.is_empty() {
                return Ok(());
            }
            let name = match (Thread::new(th, strings).name(), cpu_profile) {
                // A Firefox profile's threads keep their names, a `.cpuprofile`'s is its file's.
                (Some(name), true) => name.to_owned(),
                (None, true) => "CPU profile".to_owned(),
                (Some(name), false) => format!("{name}: JS calls (jscalls)"),
                (None, false) => format!("thread {}: JS calls (jscalls)", th.tid),
            };
            line.clear();
            if n > 0 {
                line.push_str(",\n");
            }
            line.push_str(&format!(
                "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{tid},\"ts\":0,\"args\":{{\"name\":",
                th.pid
            ));
            write_json_string(&mut line, &name);
            line.push_str("}}");
            out.write_all(line.as_bytes()).map_err(io)?;
            n += 1;
            // The calls as samples are made beside the calls' rendering (on a large thread they
            // take as long as it does, and the writer would otherwise wait for them alone).
            std::thread::scope(|scope| {
                let resampled = |out: &mut dyn Write| {
                    let mut s = String::with_capacity(512);
                    s.push_str(",\n");
                    write_resampled(out, &mut s, th, tid, range, strings)
                };
                // Its pieces wait for the calls in a channel of a few MB (the whole event can
                // be hundreds of MB): `pieces` is dropped on an early return, which ends it.
                let (tx, pieces) = std::sync::mpsc::sync_channel::<Vec<u8>>(AHEAD_PIECES);
                let aside = (samples && threads > 1 && th.calls.len() >= ASIDE)
                    .then(|| {
                        let b = std::thread::Builder::new().name("jscalls-resample".into());
                        b.spawn_scoped(scope, move || resampled(&mut Pieces(tx))).ok()
                    })
                    .flatten();
                write_calls(&mut *out, &spare, th, tid, strings, threads)?;
                n += th.canonical_order().len() as u64;
                if samples {
                    match aside {
                        Some(h) => {
                            for piece in pieces {
                                out.write_all(&piece).map_err(io)?;
                            }
                            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)).map_err(io)?;
                        }
                        None => resampled(&mut *out).map_err(io)?,
                    }
                    n += 1;
                }
                Ok(())
            })
        })?;
        out.write_all(b"\n]").map_err(io)?;
        if let Some(m) = metadata {
            out.write_all(b",\n\"metadata\":").map_err(io)?;
            out.write_all(String::from_utf8_lossy(m).as_bytes()).map_err(io)?;
        }
        out.write_all(b"}\n").map_err(io)?;
        Ok(())
    }
}

/// A thread's calls as events, rendered in parts on up to `threads` threads and written in
/// order; `spare` keeps the parts' buffers for the next thread.
fn write_calls(
    out: &mut dyn Write,
    spare: &std::cell::RefCell<Vec<String>>,
    th: &ThreadCalls,
    tid: i64,
    strings: &Strings,
    threads: usize,
) -> Result<(), Error> {
    let parts = EventParts::new(th, tid, strings);
    let order = th.canonical_order();
    let make = |c: usize| {
        let buf = spare.borrow_mut().pop().unwrap_or_else(|| String::with_capacity(CHUNK * 384));
        (c * CHUNK..((c + 1) * CHUNK).min(order.len()), buf)
    };
    let render = |(calls, mut s): (std::ops::Range<usize>, String)| {
        s.clear();
        for k in calls {
            s.push_str(",\n");
            parts.write_call(&mut s, th, order[k] as usize);
        }
        s
    };
    let write = |part: String| {
        out.write_all(part.as_bytes()).map_err(io)?;
        spare.borrow_mut().push(part);
        Ok::<(), Error>(())
    };
    crate::parallel::ordered(order.len().div_ceil(CHUNK), threads, AHEAD * threads, make, render, write)
}

/// The next `n` bytes of `input`, written to `out` or (None) passed over, and the first and
/// last of them; the input ending before them is an error (it changed since it was first read).
fn pass_on(
    input: &mut dyn std::io::Read,
    mut n: u64,
    mut out: Option<&mut dyn Write>,
    buf: &mut [u8],
    name: &str,
) -> Result<(u8, u8), Error> {
    let mut edges = (0, 0);
    let mut first = true;
    while n > 0 {
        let want = buf.len().min(usize::try_from(n).unwrap_or(usize::MAX));
        let got = match input.read(&mut buf[..want]) {
            Ok(0) => {
                return Err(changed(
                    name,
                    std::io::ErrorKind::UnexpectedEof,
                    "it is shorter than when it was first read",
                ))
            }
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(format!("cannot read {name} again"), e)),
        };
        if first {
            (edges.0, first) = (buf[0], false);
        }
        edges.1 = buf[got - 1];
        if let Some(out) = out.as_deref_mut() {
            out.write_all(&buf[..got]).map_err(io)?;
        }
        n -= got as u64;
    }
    Ok(edges)
}

/// The input read a second time is not what was first read.
fn changed(name: &str, kind: std::io::ErrorKind, how: &str) -> Error {
    let why = format!("{how}: it changed while it was read");
    Error::io(format!("cannot read {name} again"), std::io::Error::new(kind, why))
}

/// Bytes sent on as the pieces they were written in (a profile writes pieces of about 256 KB).
struct Pieces(std::sync::mpsc::SyncSender<Vec<u8>>);

impl Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let gone = |_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the timeline's writer stopped");
        self.0.send(buf.to_vec()).map_err(gone)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Pieces of a thread's samples made ahead of the writer (about 4 MB).
const AHEAD_PIECES: usize = 16;

/// Calls from which a thread's samples are made on a thread of their own, beside its calls
/// (below it, the samples take less than starting a thread).
const ASIDE: usize = 1 << 9;

/// Calls rendered per job (about 300 KB of JSON), and jobs rendered ahead of the one being
/// written, per thread, as for the calls output.
const CHUNK: usize = 1 << 10;
const AHEAD: usize = 8;

/// The parts of a thread's call events that are each frame's own, rendered once: before the
/// call's times (`{"name":…,"tid":…,"ts":`) and between them and its node id
/// (`,"args":{"callFrame":{…},"nodeId":`). Per frame, not per node: a long recording has
/// millions of nodes and a few thousand frames.
struct EventParts {
    /// Frame `k`'s two parts are `text[ends[2k - 1]..ends[2k]]` and `text[ends[2k]..ends[2k + 1]]`.
    text: String,
    ends: Vec<usize>,
    /// `,"profileId":…`.
    profile: String,
}

impl EventParts {
    fn new(th: &ThreadCalls, tid: i64, strings: &Strings) -> EventParts {
        let frames = &th.model.frames;
        let mut text = String::with_capacity(frames.len() * 256);
        let mut ends = Vec::with_capacity(2 * frames.len());
        for f in frames {
            // The event's name is the one DevTools shows (source-mapped when a map names it).
            let name = match f.original.and_then(|o| o.name).map_or(f.function_name, Scalar::Str) {
                Scalar::Str(id) if !strings.get(id).is_empty() => strings.get(id).to_owned(),
                Scalar::Str(_) => "(anonymous)".to_owned(),
                other => other.to_js_string(strings),
            };
            text.push_str("{\"name\":");
            write_json_string(&mut text, &name);
            text.push_str(",\"cat\":\"");
            text.push_str(CALL_CATEGORY);
            text.push_str("\",\"ph\":\"X\",\"pid\":");
            write_int(&mut text, th.pid);
            text.push_str(",\"tid\":");
            write_int(&mut text, tid);
            text.push_str(",\"ts\":");
            ends.push(text.len());
            text.push_str(",\"args\":{\"callFrame\":{\"functionName\":");
            write_field(&mut text, f.function_name, false, strings);
            text.push_str(",\"url\":");
            write_field(&mut text, f.url, false, strings);
            text.push_str(",\"scriptId\":");
            write_field(&mut text, f.script_id, false, strings);
            text.push_str(",\"lineNumber\":");
            write_field(&mut text, f.line_number, false, strings);
            text.push_str(",\"columnNumber\":");
            write_field(&mut text, f.column_number, false, strings);
            super::calls::write_original(&mut text, f, strings);
            text.push_str("},\"nodeId\":");
            ends.push(text.len());
        }
        let profile = format!(",\"profileId\":{}", th.profile_id);
        EventParts { text, ends, profile }
    }

    /// Call `i` as a trace event.
    fn write_call(&self, s: &mut String, th: &ThreadCalls, i: usize) {
        let c = &th.calls[i];
        let node = &th.model.nodes[c.node as usize];
        let k = 2 * node.frame as usize;
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        s.push_str(&self.text[start..self.ends[k]]);
        write_number(s, c.ts);
        s.push_str(",\"dur\":");
        write_number(s, c.dur);
        s.push_str(&self.text[self.ends[k]..self.ends[k + 1]]);
        write_int(s, node.id);
        s.push_str(",\"sampleIndex\":");
        write_int(s, i64::from(c.sample_index));
        s.push_str(&self.profile);
        super::calls::write_tree_fields(s, th, i);
        super::calls::write_bounds(s, th, i);
        s.push_str("}}");
    }
}

/// The thread's calls as samples, in a `CpuProfile` instant event: the Firefox Profiler reads
/// it whatever its phase, and so shows the calls' track by default with a call tree and a stack
/// chart, while DevTools reads a `CpuProfile` only as a complete (`X`) event and leaves the
/// calls estimated once (which inputs get one: `Assembled::timeline_samples`). The stacks are
/// those of the tree and the exports (the trace events inside a call under it); see
/// [`crate::tree::export::cpu_profile`].
fn write_resampled(
    out: &mut dyn Write,
    s: &mut String,
    th: &ThreadCalls,
    tid: i64,
    range: (f64, f64),
    strings: &Strings,
) -> std::io::Result<()> {
    let (stacks, spans) = Stacks::spans_of(&Thread::new(th, strings));
    let start = range.0.min(spans.first().map_or(f64::INFINITY, |s| s.start));
    let end = range.1.max(spans.last().map_or(f64::NEG_INFINITY, |s| s.end));
    s.push_str("{\"name\":\"CpuProfile\",\"cat\":\"");
    s.push_str(CALL_CATEGORY);
    s.push_str("\",\"ph\":\"I\",\"s\":\"t\",\"pid\":");
    write_int(s, th.pid);
    s.push_str(",\"tid\":");
    write_int(s, tid);
    s.push_str(",\"ts\":");
    write_number(s, start);
    s.push_str(",\"args\":{\"data\":{\"cpuProfile\":");
    crate::tree::export::cpu_profile(out, s, &stacks, &spans, (start, end))?;
    s.push_str("}}}");
    out.write_all(s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(parts: Vec<Part>) -> Copied {
        Copied { events: parts.len() as u64, parts, ..Copied::default() }
    }

    #[test]
    fn a_plan_replays_its_runs_and_repairs_in_order() {
        let input = b"[{\"a\":1},\n{\"b\":2}, {\"bad\":3},\n{\"c\":4}]";
        let at = |e: &[u8]| input.windows(e.len()).position(|w| w == e).unwrap() as u64;
        let (a, b, c) = (at(b"{\"a\""), at(b"{\"b\"") + 7, at(b"{\"c\""));
        let mut plan = CopyPlan::default();
        // One run of two events, as the input separated them.
        plan.note(Copied { events: 2, ..piece(vec![Part::Input(a, b)]) });
        plan.note(piece(vec![Part::Repaired(b"{\"bad\":\"?\"}".to_vec()), Part::Input(c, c + 7)]));
        assert!(plan.is_whole());
        let mut out = Vec::new();
        let w = TimelineWriter::replay(&mut out, plan, &mut &input[..], "t.json").unwrap();
        assert_eq!(w.n, 4);
        assert_eq!(out, b"{\"traceEvents\":[\n{\"a\":1},\n{\"b\":2},\n{\"bad\":\"?\"},\n{\"c\":4}");
    }

    #[test]
    fn a_plan_of_too_many_runs_lets_them_go() {
        let mut plan = CopyPlan::default();
        for k in 0..=PLAN_PARTS as u64 {
            plan.note(piece(vec![Part::Input(2 * k, 2 * k + 1)]));
        }
        assert!(!plan.is_whole());
        assert!(plan.parts.is_empty() && plan.parts.capacity() == 0);
        // The events are still counted: the calls' threads come after them.
        assert_eq!(plan.at.n, PLAN_PARTS as u64 + 1);
    }

    #[test]
    fn an_input_changed_before_its_second_read_is_an_error() {
        let mut plan = CopyPlan::default();
        plan.note(piece(vec![Part::Input(1, 8)]));
        let mut out = Vec::new();
        let e = TimelineWriter::replay(&mut out, plan, &mut &b"[ {\"a\":1}]"[..], "t.json").err().unwrap();
        assert_eq!(
            e.to_string(),
            "cannot read t.json again: its events are not where they first were: it changed while it was read"
        );
    }

    #[test]
    fn an_input_shorter_on_its_second_read_is_an_error() {
        let mut plan = CopyPlan::default();
        plan.note(piece(vec![Part::Input(1, 40)]));
        let mut out = Vec::new();
        let e = TimelineWriter::replay(&mut out, plan, &mut &b"[{\"a\":1}]"[..], "t.json").err().unwrap();
        assert_eq!(
            e.to_string(),
            "cannot read t.json again: it is shorter than when it was first read: it changed while it was read"
        );
    }
}
