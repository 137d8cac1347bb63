//! The timeline's second read of its input: the events handed to the writer byte for byte, in
//! file order; of each, only the time it spans is read.

use crate::error::{Diagnostics, Error};
use crate::estimate::Estimates;
use crate::input::document::{read_document, Document};
use crate::input::scan::RawEvent;
use crate::input::sink::{EventCtx, Sink};
use crate::input::source::{Source, WindowOptions};
use crate::output::timeline::TimelineWriter;

/// Copies each event and notes the time range the events span.
struct CopyEvents<'w, 'o> {
    writer: &'w mut TimelineWriter<'o>,
    /// The earliest start and latest end of the events a viewer shows (µs).
    range: (f64, f64),
}

impl Sink for CopyEvents<'_, '_> {
    /// The event's span, when a viewer shows it (the Firefox Profiler's markers: phases
    /// `X B E b n e i I R`).
    type Prep = Option<(f64, f64)>;
    fn prepare(ev: &mut RawEvent<'_>) -> Self::Prep {
        span(ev)
    }
    fn event(&mut self, span: Self::Prep, ctx: &EventCtx<'_>, _: &mut Diagnostics) -> Result<(), Error> {
        if let Some((from, to)) = span {
            self.range = (self.range.0.min(from), self.range.1.max(to));
        }
        self.writer.event(ctx.raw)
    }
    fn raw_event(&mut self, raw: &[u8], _: &EventCtx<'_>) -> Result<(), Error> {
        self.writer.event(raw)
    }
}

fn span(ev: &RawEvent<'_>) -> Option<(f64, f64)> {
    let ph = ev.ph.str()?;
    if !matches!(ph, "X" | "B" | "E" | "b" | "n" | "e" | "i" | "I" | "R") {
        return None;
    }
    let ts = ev.ts.num().filter(|t| t.is_finite())?;
    let dur = if ph == "X" { ev.dur.num().filter(|d| d.is_finite() && *d > 0.0).unwrap_or(0.0) } else { 0.0 };
    Some((ts, ts + dur))
}

/// Writes the timeline of `source` (read again) with the calls of `t`, and with `samples` the
/// calls as samples too; `bounds` is the profile's time range (µs) when it is not a trace.
pub(crate) fn write_timeline(
    out: &mut dyn std::io::Write,
    source: &Source,
    t: impl Estimates,
    window: WindowOptions,
    bounds: (f64, f64),
    samples: bool,
) -> Result<(), Error> {
    if !source.can_reread() {
        return Err(Error::input(
            None,
            "the timeline reads its input twice: give a file, not a stream (or copy the stream to a file first)",
        ));
    }
    let mut writer = TimelineWriter::new(out)?;
    let mut w = source.window(window)?;
    let mut copy = CopyEvents { writer: &mut writer, range: (f64::INFINITY, f64::NEG_INFINITY) };
    let doc = read_document(&mut w, &mut copy, &mut Diagnostics::default(), 2)?;
    match doc {
        Document::Trace { metadata, .. } => {
            let range = copy.range;
            writer.finish(t, false, metadata.as_deref(), range, samples)
        }
        Document::Object { .. } => writer.finish(t, true, None, bounds, samples),
    }
}
