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
//! The caller reads the input a second time and hands its events over as they are, so memory
//! does not grow with the input.

use std::io::Write;

use super::calls::write_field;
use crate::error::Error;
use crate::estimate::{Estimates, ThreadCalls};
use crate::js::{write_json_string, write_number, Scalar};
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
    tid_key: memchr::memmem::Finder<'static>,
}

fn io(e: std::io::Error) -> Error {
    Error::io("cannot write the timeline", e)
}

impl<'a> TimelineWriter<'a> {
    /// Starts the document.
    pub(crate) fn new(out: &'a mut dyn Write) -> Result<TimelineWriter<'a>, Error> {
        out.write_all(b"{\"traceEvents\":[\n").map_err(io)?;
        Ok(TimelineWriter { out, n: 0, max_tid: 0, tid_key: memchr::memmem::Finder::new(b"\"tid\":") })
    }

    fn note_tids(&mut self, raw: &[u8]) {
        for at in self.tid_key.find_iter(raw) {
            let digits = &raw[at + 6..];
            let digits = &digits[..digits.iter().position(|c| !c.is_ascii_digit()).unwrap_or(digits.len())];
            // A tid too long for i64 is no real thread's; the largest value stands for it.
            let tid = std::str::from_utf8(digits).ok().and_then(|d| d.parse::<i64>().ok()).unwrap_or(i64::MAX / 2);
            self.max_tid = self.max_tid.max(tid);
        }
    }

    /// Copies one input event, as its bytes were.
    pub(crate) fn event(&mut self, raw: &[u8]) -> Result<(), Error> {
        self.note_tids(raw);
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
    /// which `range`, the time the input spans (µs), frames.
    pub(crate) fn finish(
        self,
        mut t: impl Estimates,
        cpu_profile: bool,
        metadata: Option<&[u8]>,
        range: (f64, f64),
        samples: bool,
    ) -> Result<(), Error> {
        let TimelineWriter { out, mut n, max_tid, .. } = self;
        let mut line = String::with_capacity(512);
        let mut k = 0i64;
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
            for &i in th.canonical_order() {
                line.clear();
                line.push_str(",\n");
                write_call_event(&mut line, th, i as usize, tid, strings);
                out.write_all(line.as_bytes()).map_err(io)?;
                n += 1;
            }
            if samples {
                line.clear();
                line.push_str(",\n");
                write_resampled(&mut line, th, tid, range, strings);
                out.write_all(line.as_bytes()).map_err(io)?;
                n += 1;
            }
            Ok(())
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

/// One call as a trace event, on thread `tid` of the call's process.
pub(crate) fn write_call_event(s: &mut String, th: &ThreadCalls, i: usize, tid: i64, strings: &Strings) {
    let c = &th.calls[i];
    let node = &th.model.nodes[c.node as usize];
    let f = th.model.frame(c.node);
    // The event's name is the one DevTools shows (source-mapped when a map names it).
    let name = match f.original.and_then(|o| o.name).map_or(f.function_name, Scalar::Str) {
        Scalar::Str(id) if !strings.get(id).is_empty() => strings.get(id).to_owned(),
        Scalar::Str(_) => "(anonymous)".to_owned(),
        other => other.to_js_string(strings),
    };
    s.push_str("{\"name\":");
    write_json_string(s, &name);
    s.push_str(",\"cat\":\"");
    s.push_str(CALL_CATEGORY);
    s.push_str("\",\"ph\":\"X\",\"pid\":");
    s.push_str(&th.pid.to_string());
    s.push_str(",\"tid\":");
    s.push_str(&tid.to_string());
    s.push_str(",\"ts\":");
    write_number(s, c.ts);
    s.push_str(",\"dur\":");
    write_number(s, c.dur);
    s.push_str(",\"args\":{\"callFrame\":{\"functionName\":");
    write_field(s, f.function_name, false, strings);
    s.push_str(",\"url\":");
    write_field(s, f.url, false, strings);
    s.push_str(",\"scriptId\":");
    write_field(s, f.script_id, false, strings);
    s.push_str(",\"lineNumber\":");
    write_field(s, f.line_number, false, strings);
    s.push_str(",\"columnNumber\":");
    write_field(s, f.column_number, false, strings);
    super::calls::write_original(s, f, strings);
    s.push_str("},\"nodeId\":");
    s.push_str(&node.id.to_string());
    s.push_str(",\"sampleIndex\":");
    s.push_str(&c.sample_index.to_string());
    s.push_str(",\"profileId\":");
    s.push_str(&th.profile_id);
    super::calls::write_tree_fields(s, th, i);
    super::calls::write_bounds(s, th, i);
    s.push_str("}}");
}

/// The thread's calls as samples, in a `CpuProfile` instant event: the Firefox Profiler reads
/// it whatever its phase, and so shows the calls' track by default with a call tree and a stack
/// chart, while DevTools reads a `CpuProfile` only as a complete (`X`) event and leaves the
/// calls estimated once (which inputs get one: `Assembled::timeline_samples`). The stacks are
/// those of the tree and the exports (the trace events inside a call under it); see
/// [`crate::tree::export::cpu_profile`].
fn write_resampled(s: &mut String, th: &ThreadCalls, tid: i64, range: (f64, f64), strings: &Strings) {
    let (stacks, spans) = Stacks::from_calls_with_spans(&Thread::new(th, strings));
    let start = range.0.min(spans.first().map_or(f64::INFINITY, |s| s.start));
    let end = range.1.max(spans.last().map_or(f64::NEG_INFINITY, |s| s.end));
    s.push_str("{\"name\":\"CpuProfile\",\"cat\":\"");
    s.push_str(CALL_CATEGORY);
    s.push_str("\",\"ph\":\"I\",\"s\":\"t\",\"pid\":");
    s.push_str(&th.pid.to_string());
    s.push_str(",\"tid\":");
    s.push_str(&tid.to_string());
    s.push_str(",\"ts\":");
    write_number(s, start);
    s.push_str(",\"args\":{\"data\":{\"cpuProfile\":");
    crate::tree::export::cpu_profile(s, &stacks, &spans, (start, end));
    s.push_str("}}}");
}
