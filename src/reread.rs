//! The timeline's second read of its input: the events handed to the writer byte for byte, in
//! file order, without being parsed.

use crate::error::{Diagnostics, Error};
use crate::estimate::Estimates;
use crate::input::document::{read_document, Document, EventCtx, RawEvent, Sink};
use crate::input::Source;
use crate::output::timeline::TimelineWriter;
use crate::Config;

struct CopyEvents<'w, 'o>(&'w mut TimelineWriter<'o>);

impl Sink for CopyEvents<'_, '_> {
    type Prep = ();
    fn wants_parsed(&self) -> bool {
        false
    }
    fn prepare(_: &mut RawEvent<'_>) {}
    fn event(&mut self, _: (), _: &EventCtx<'_>, _: &mut Diagnostics) -> Result<(), Error> {
        Ok(())
    }
    fn raw_event(&mut self, raw: &[u8], _: &EventCtx<'_>) -> Result<(), Error> {
        self.0.event(raw)
    }
}

/// Writes the timeline of `source` (read again) with the calls of `t`.
pub fn write_timeline(
    out: &mut dyn std::io::Write,
    source: &Source,
    t: impl Estimates,
    cfg: &Config,
) -> Result<(), Error> {
    if !source.can_reread() {
        return Err(Error::input(
            None,
            "the timeline reads its input twice: give a file, not a stream (or copy the stream to a file first)",
        ));
    }
    let mut writer = TimelineWriter::new(out)?;
    let mut w = source.window(cfg.max_event_bytes, cfg.mmap)?;
    let doc = read_document(&mut w, &mut CopyEvents(&mut writer), &mut Diagnostics::default(), 2)?;
    match doc {
        Document::Trace { metadata, .. } => writer.finish(t, false, metadata.as_deref()),
        Document::CpuProfile { .. } | Document::Gecko { .. } => writer.finish(t, true, None),
    }
}
