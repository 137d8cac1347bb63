//! What the document's walker hands events to: a [`Sink`], and each event's place
//! ([`EventCtx`]). Below both the walker (`document.rs`) and the region scan (`region.rs`).

use super::reader::Text;
use super::scan::RawEvent;
use crate::error::{Diagnostics, Error, Location};

/// Where a name lies in the input: its first byte's absolute offset, and its length.
pub(crate) type NameSpan = (u64, u32);

/// Where an event sits, for messages.
pub struct EventCtx<'w> {
    /// Index of the event in `traceEvents`.
    pub index: u64,
    /// Absolute byte offset of the event's first byte.
    pub start: u64,
    /// The event's bytes.
    pub raw: &'w [u8],
    pub(super) window: &'w Text,
    /// Whether `raw` is a lossy UTF-8 copy (positions inside it are approximate).
    pub lossy: bool,
}

impl<'w> EventCtx<'w> {
    /// The location of the event's start.
    pub fn location(&self) -> Location {
        self.window.location(self.start, Some(self.index))
    }

    /// The event's fields, read again from its bytes.
    pub fn parse(&self) -> Result<RawEvent<'w>, Error> {
        super::scan::event(self.raw, 0, &mut Vec::new())
            .map(|(ev, _)| ev)
            .map_err(|_| Error::input(Some(self.location()), "cannot read the event again"))
    }

    /// The same place with other bytes (a repaired copy of the event).
    pub fn with_raw<'b>(&'b self, raw: &'b [u8]) -> EventCtx<'b> {
        EventCtx { index: self.index, start: self.start, raw, window: self.window, lossy: true }
    }

    /// The `len` bytes of the input at absolute offset `at`, where they are still held: a
    /// name the scan noted in the same stretch of the input ([`Sink::piece_names`]).
    pub(crate) fn input_at(&self, at: u64, len: u32) -> Option<&'w [u8]> {
        let from = usize::try_from(at.checked_sub(self.window.base())?).ok()?;
        self.window.buf.get(from..from.checked_add(len as usize)?)
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
///
/// Each event goes through two steps: [`Sink::prepare`], the work that depends on the event
/// alone (parsing the `args` that matter), which runs on the scan threads in parallel and in
/// any order; then [`Sink::event`], in file order on one thread, which should be cheap.
pub trait Sink {
    /// What [`Sink::prepare`] makes of an event. It is kept until the event is delivered, so
    /// it should be small for the common events; [`EventCtx::parse`] reads the event again.
    type Prep: Send;
    /// Whether events should be parsed into [`RawEvent`]s (otherwise only `raw_event` is called).
    fn wants_parsed(&self) -> bool {
        true
    }
    /// Whether the scan should note where each event's name lies ([`RawEvent::name_at`]).
    fn wants_name_at(&self) -> bool {
        false
    }
    /// The order-independent work on one event.
    fn prepare(ev: &mut RawEvent<'_>) -> Self::Prep;
    /// With [`Sink::wants_name_at`], before the events of each stretch of the input that one
    /// scan thread read: where its distinct names lie, which its events'
    /// [`RawEvent::name_id`] number from 1 (read with [`EventCtx::input_at`]).
    fn piece_names(&mut self, _names: &[NameSpan]) {}
    /// Whether [`Sink::event`] would do nothing with this: such an event is counted on the
    /// scan thread but not handed over (a trace's events of phases that play no part).
    fn is_inert(_prep: &Self::Prep) -> bool {
        false
    }
    /// One event object: what `prepare` made of it.
    fn event(&mut self, prep: Self::Prep, ctx: &EventCtx<'_>, diag: &mut Diagnostics) -> Result<(), Error>;
    /// One element of `traceEvents` as raw bytes (called for every element when `wants_parsed` is false).
    fn raw_event(&mut self, _raw: &[u8], _ctx: &EventCtx<'_>) -> Result<(), Error> {
        Ok(())
    }
    /// The `nodes` array of a top-level object that may be a `.cpuprofile`, read where it lies
    /// (it is most of such a file, so a copy would double the memory): whether the sink took
    /// it. A member it took is kept as an empty value ([`Document::Object`](super::document::Document::Object)).
    fn profile_nodes(&mut self, _raw: &[u8], _location: Location) -> bool {
        false
    }
}
