//! The timeline's events: copied while the input is read for the estimate (the scan threads
//! find each piece of the event array's runs of events to copy; [`finish_timeline`] ends such
//! a timeline), noted then and copied from a plain second read once the read has succeeded
//! ([`finish_noted_timeline`], for an output that cannot be taken back), or read and parsed
//! again ([`write_timeline`], for an analysis already made). All hand the writer every object
//! of the event array byte for byte, in file order, and give the same document.

use crate::error::{Diagnostics, Error};
use crate::estimate::Estimates;
use crate::input::copy::span;
use crate::input::document::{read_document, Document};
use crate::input::scan::RawEvent;
use crate::input::sink::{EventCtx, Sink};
use crate::input::source::{Source, WindowOptions};
use crate::output::timeline::{CopyPlan, TimelineWriter, Written};

/// Copies each event, with its span.
struct CopyEvents<'w, 'o> {
    writer: &'w mut TimelineWriter<'o>,
}

impl Sink for CopyEvents<'_, '_> {
    type Prep = Option<(f64, f64)>;
    fn prepare(ev: &mut RawEvent<'_>) -> Self::Prep {
        span(ev)
    }
    fn event(&mut self, span: Self::Prep, ctx: &EventCtx<'_>, _: &mut Diagnostics) -> Result<(), Error> {
        self.writer.event(ctx.raw, span)
    }
    fn raw_event(&mut self, raw: &[u8], _: &EventCtx<'_>) -> Result<(), Error> {
        self.writer.event(raw, None)
    }
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
    threads: usize,
) -> Result<(), Error> {
    if !source.can_reread() {
        return Err(Error::input(
            None,
            "the timeline reads its input twice: give a file, not a stream (or copy the stream to a file first)",
        ));
    }
    let mut writer = TimelineWriter::new(out)?;
    let mut w = source.window(window)?;
    let doc = read_document(&mut w, &mut CopyEvents { writer: &mut writer }, &mut Diagnostics::default(), 2)?;
    match doc {
        Document::Trace { metadata, .. } => {
            let range = writer.span();
            writer.finish(t, false, metadata.as_deref(), range, samples, threads)
        }
        Document::Object { .. } => writer.finish(t, true, None, bounds, samples, threads),
    }
}

/// The first part of a timeline, written while its input was read (`assemble_timeline`), or
/// its runs of events noted then, to be copied once the read has succeeded
/// ([`TimelineStart::note`]): what its end needs.
#[derive(Debug)]
pub struct TimelineStart {
    written: Written,
    /// The trace's raw `metadata`.
    pub(crate) metadata: Option<Vec<u8>>,
    /// The runs noted, not yet written.
    pub(crate) plan: Option<CopyPlan>,
}

impl TimelineStart {
    /// Where `writer` stands after the events, and the trace's raw `metadata`.
    pub(crate) fn new(writer: &TimelineWriter<'_>, metadata: Option<Vec<u8>>) -> TimelineStart {
        TimelineStart { written: writer.written(), metadata, plan: None }
    }

    /// Nothing written yet: the runs of `plan` are.
    pub(crate) fn noted(written: Written, metadata: Option<Vec<u8>>, plan: CopyPlan) -> TimelineStart {
        TimelineStart { written, metadata, plan: Some(plan) }
    }
}

/// Ends a timeline begun while its input was read with the calls of `t`.
pub(crate) fn finish_timeline(
    out: &mut dyn std::io::Write,
    start: TimelineStart,
    t: impl Estimates,
    trace: bool,
    bounds: (f64, f64),
    samples: bool,
    threads: usize,
) -> Result<(), Error> {
    let writer = TimelineWriter::resume(out, start.written);
    let range = if trace { writer.span() } else { bounds };
    writer.finish(t, !trace, start.metadata.as_deref(), range, samples, threads)
}

/// Writes the timeline of `source` from `notes` made as it was read: its events copied from a
/// second plain read, then the calls of `t`; where the notes could not hold every run of
/// events, the input is read and parsed again, as [`write_timeline`] does.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish_noted_timeline(
    out: &mut dyn std::io::Write,
    notes: TimelineStart,
    source: &Source,
    t: impl Estimates,
    (window, trace): (WindowOptions, bool),
    bounds: (f64, f64),
    samples: bool,
    threads: usize,
) -> Result<(), Error> {
    let plan = match notes.plan {
        Some(plan) if plan.is_whole() => plan,
        _ => return write_timeline(out, source, t, window, bounds, samples, threads),
    };
    let mut input = source.open()?;
    let writer = TimelineWriter::replay(out, plan, &mut input, &source.display_name())?;
    drop(input);
    let range = if trace { writer.span() } else { bounds };
    writer.finish(t, !trace, notes.metadata.as_deref(), range, samples, threads)
}
