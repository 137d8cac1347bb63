//! What the scan threads do to an event before it is handed over in file order: a plain `X`
//! or `I` event reduced to a few checked numbers, a `ProfileChunk`'s args read, the members
//! that can hold a `sampleTraceId` found.

use super::TraceBuilder;
use crate::error::{Diagnostics, Error};
use crate::input::leaf::{IdArray, Leaf, NumArray};
use crate::input::scan::{ArgsIds, IdHolder, RawEvent};
use crate::input::shapes::{self, MaybeObj};
use crate::input::sink::{EventCtx, Sink};
use crate::model::nodes::NodeIn;
use crate::model::{flags_for_name, Entry, INSTANT};
use std::borrow::Cow;

/// False for names that are surely none of the ones the builder looks at by name.
#[inline]
pub(crate) fn maybe_special(name: &str) -> bool {
    matches!(
        (name.len(), name.as_bytes().first()),
        (7, Some(b'P')) // Profile
            | (12, Some(b'P')) // ProfileChunk
            | (13, Some(b'S')) // ScriptCatchup
            | (18, Some(b'L')) // LargeScriptCatchup
            | (10, Some(b'C' | b'c')) // CpuProfile, CommitLoad
            | (11, Some(b't')) // thread_name
            | (20, Some(b'T')) // TracingStartedInPage
            | (23, Some(b'T' | b'F')) // TracingStartedInBrowser, FrameCommittedInBrowser
            | (25, Some(b'T')) // TracingSessionIdForWorker
            | (29, Some(b'A')) // AuctionWorkletDoneWithProcess
            | (30, Some(b'A')) // AuctionWorkletRunningInProcess
    )
}

/// Names whose `args` the builder reads.
pub(crate) fn reads_args(name: &str) -> bool {
    matches!(
        name,
        "Profile"
            | "ProfileChunk"
            | "CpuProfile"
            | "TracingStartedInBrowser"
            | "FrameCommittedInBrowser"
            | "CommitLoad"
            | "thread_name"
            | "AuctionWorkletRunningInProcess"
            | "AuctionWorkletDoneWithProcess"
    )
}

/// What an event's args say about its `sampleTraceId`.
#[derive(Debug)]
pub(crate) enum TraceIdFound<'a> {
    /// No truthy id.
    None,
    /// `args.beginData` is null (DevTools fails on such an event).
    NullBeginData,
    /// The id as a JS property key.
    Key(Cow<'a, str>),
}

/// The `sampleTraceId` of an event's args: `beginData` first when present, else the top level,
/// else `data`, as the SamplesIntegrator reads it.
pub(crate) fn trace_id_of<'a>(ids: &ArgsIds<'a>) -> TraceIdFound<'a> {
    let id = match &ids.begin_data {
        IdHolder::Obj(id) => id,
        IdHolder::Other(Leaf::Null) => return TraceIdFound::NullBeginData,
        IdHolder::Other(_) => return TraceIdFound::None,
        IdHolder::Missing if !ids.sample_trace_id.is_nullish() => &ids.sample_trace_id,
        IdHolder::Missing => match &ids.data {
            IdHolder::Obj(id) => id,
            _ => return TraceIdFound::None,
        },
    };
    if !id.truthy() {
        return TraceIdFound::None;
    }
    // The property key, as JavaScript would spell it.
    TraceIdFound::Key(match id {
        Leaf::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => {
            Cow::Owned(itoa::Buffer::new().format(*n as i64).to_owned())
        }
        Leaf::Num(n) => Cow::Owned(ryu_js::Buffer::new().format(*n).to_owned()),
        Leaf::Str(s) => s.clone(),
        other => match other.property_key() {
            Some(k) => Cow::Owned(k),
            None => return TraceIdFound::None,
        },
    })
}

/// A `sampleTraceId` as a JavaScript property key: a canonical array index (the usual numbers)
/// apart, so that it is kept and compared without allocating.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum TraceKey {
    /// A key that is a canonical decimal integer of at most 16 digits (`"0"`, `"17"`, not
    /// `"017"`): the key of that number, kept as the number.
    Int(u64),
    /// Any other key.
    Str(Box<str>),
}

impl TraceKey {
    /// The key for a property name.
    pub(crate) fn of(key: &str) -> TraceKey {
        let b = key.as_bytes();
        if b.is_empty() || b.len() > 16 || (b[0] == b'0' && b.len() > 1) {
            return TraceKey::Str(key.into());
        }
        // At most 16 digits: no overflow to check for (`str::parse` checks each step).
        let mut n = 0u64;
        for &c in b {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return TraceKey::Str(key.into());
            }
            n = n * 10 + u64::from(d);
        }
        TraceKey::Int(n)
    }
}

/// What the scan threads make of an event for the [`TraceBuilder`] (see [`Sink::prepare`]).
#[derive(Debug)]
pub(crate) enum Prep {
    /// A well-formed `X` or `I` event with an ordinary name: all that is left is to file it.
    Plain(Plain),
    /// An event that plays no part (an ordinary name, a phase other than `X`/`I`/`B`/`E`).
    Nothing,
    /// A `ProfileChunk` whose args were read: its envelope (with empty `args`) and the args.
    Chunk(Box<(RawEvent<'static>, ChunkIn)>),
    /// Anything else: the builder reads the event again and does it all.
    Full,
}

/// The fields of a plain `X` or `I` event, checked.
#[derive(Debug)]
pub(crate) struct Plain {
    pub(crate) pid: i64,
    pub(crate) tid: i64,
    pub(crate) ts: f64,
    pub(crate) dur: f64,
    /// [`flags_for_name`], plus [`INSTANT`] for an `I` event.
    pub(crate) flags: u8,
    /// The `sampleTraceId`.
    pub(crate) trace: Option<TraceKey>,
    /// The name's number in its piece of the scan ([`RawEvent::name_id`]; 0: none): the one
    /// thread that keeps names reads it once a piece, not once an event.
    pub(crate) name_id: u32,
    /// A top-level task ([`top_level_task`]), decided here: the one thread that keeps names
    /// need not read the event again for its category.
    pub(crate) top_task: bool,
}

/// The args of an event, parsed before the event is handled.
#[derive(Debug)]
pub(crate) enum Parsed<'a> {
    /// Not parsed here.
    None,
    /// The args will be parsed but hold invalid UTF-8: the builder repairs the event first.
    BadUtf8,
    /// The `sampleTraceId` of an `X`, `I` or `B` event.
    TraceId(TraceIdFound<'a>),
    /// The args of a `ProfileChunk` (boxed: the other variants are small, and chunks few).
    Chunk(Box<Result<ChunkIn, serde_json::Error>>),
}

/// Parses the args of `ev` that the builder reads by phase or by name (`special`: see
/// [`maybe_special`]).
pub(crate) fn parse_known_args<'a>(
    ev: &RawEvent<'a>,
    chunk: Option<Box<shapes::ChunkArgs<'a>>>,
    name: &str,
    ph: u8,
    special: bool,
) -> Parsed<'a> {
    let Some(args) = ev.args else { return Parsed::None };
    // DevTools reads the `sampleTraceId` of every `X`, `I` and `B` event: where the scan found
    // a member that holds one (or a null `beginData`, on which DevTools fails), the args are
    // read.
    let found = matches!(ph, b'X' | b'I' | b'B').then(|| trace_id_of(&ev.args_ids));
    let traced = found.as_ref().is_some_and(|f| !matches!(f, TraceIdFound::None));
    if !(traced || special && reads_args(name)) {
        Parsed::None
    } else if !args.is_ascii() && std::str::from_utf8(args).is_err() {
        // Args that will be parsed must be UTF-8 (see `full_event`).
        Parsed::BadUtf8
    } else if special && name == "ProfileChunk" {
        // The usual shape without serde; serde reads (and reports) anything else.
        match chunk.map(|c| *c).or_else(|| crate::input::chunk::chunk_args_fast(args)) {
            Some(a) => Parsed::Chunk(Box::new(Ok(ChunkIn::new(a)))),
            None => Parsed::Chunk(Box::new(serde_json::from_slice(args).map(ChunkIn::new))),
        }
    } else if let (true, Some(found)) = (traced, found) {
        Parsed::TraceId(found)
    } else {
        Parsed::None
    }
}

/// The fast path of [`TraceBuilder::prepare`]: a plain `X` or `I` event, or None.
pub(crate) fn plain(ev: &RawEvent<'_>, name: &str, ph: u8) -> Option<Plain> {
    if name.ends_with("::UMA") {
        return None; // left out of the trace bounds, which the full path decides
    }
    let (pid, tid) = (ev.pid.int()?, ev.tid.int()?);
    let ts = ev.ts.num().filter(|t| t.is_finite())?;
    let dur = match ev.dur {
        Leaf::Missing | Leaf::Null => 0.0,
        Leaf::Num(d) if d.is_finite() => d,
        _ => return None,
    };
    if ev.has_call_frame {
        return None;
    }
    let trace = match parse_known_args(ev, None, name, ph, false) {
        Parsed::None | Parsed::TraceId(TraceIdFound::None) => None,
        Parsed::TraceId(TraceIdFound::Key(k)) => Some(TraceKey::of(&k)),
        _ => return None,
    };
    let flags = flags_for_name(name) | if ph == b'I' { INSTANT } else { 0 };
    let top_task = top_level_task(name, &ev.cat);
    Some(Plain { pid, tid, ts, dur, flags, trace, name_id: ev.name_id, top_task })
}

/// Whether an event is a top-level task in DevTools' timeline: `RunTask` in its category.
pub(crate) fn top_level_task(name: &str, cat: &Leaf<'_>) -> bool {
    name == "RunTask" && cat.str().is_some_and(|c| c.contains("disabled-by-default-devtools.timeline"))
}

impl Sink for TraceBuilder {
    type Prep = Prep;

    fn profile_nodes(&mut self, raw: &[u8], location: crate::error::Location) -> bool {
        self.profile_nodes = Some(crate::model::nodes::parse_nodes(raw, location, &mut self.strings));
        true
    }

    fn wants_name_at(&self) -> bool {
        self.keep_names || !self.timings.want.is_empty()
    }

    fn prepare(ev: &mut RawEvent<'_>) -> Prep {
        let chunk = ev.chunk.take();
        let ev = &*ev;
        let Leaf::Str(name) = &ev.name else { return Prep::Full };
        let ph = ev.phase();
        if maybe_special(name) {
            // The one special event that is frequent and large: read its args here.
            if name == "ProfileChunk" && !matches!(ph, b'X' | b'I' | b'B' | b'E') {
                if let Parsed::Chunk(parsed) = parse_known_args(ev, chunk, name, ph, true) {
                    if let Ok(args) = *parsed {
                        return Prep::Chunk(Box::new((ev.envelope(), args)));
                    }
                }
            }
            return Prep::Full;
        }
        match ph {
            b'I' if super::timings::is_timing(name, ph, &ev.cat) => Prep::Full,
            b'X' | b'I' => plain(ev, name, ph).map_or(Prep::Full, Prep::Plain),
            b'B' | b'E' | 0 => Prep::Full,
            b'b' | b'e' | b'n' | b'R' if super::timings::is_timing(name, ph, &ev.cat) => Prep::Full,
            _ => Prep::Nothing,
        }
    }

    fn is_inert(prep: &Prep) -> bool {
        matches!(prep, Prep::Nothing)
    }

    fn piece_names(&mut self, names: &[crate::input::sink::NameSpan]) {
        self.start_piece(names);
    }

    fn event(&mut self, prep: Prep, ctx: &EventCtx<'_>, diag: &mut Diagnostics) -> Result<(), Error> {
        match prep {
            Prep::Plain(p) => {
                // A plain event's name does not end in `::UMA` (see [`plain`]).
                self.bound("", p.ts, p.ts + p.dur);
                let th = self.thread(p.pid, p.tid);
                self.threads[th as usize].n_entries += 1;
                let trace = match p.trace {
                    Some(key) => self.event_trace_id(key),
                    None => 0,
                };
                if p.flags & INSTANT != 0 && trace == 0 && p.dur == 0.0 {
                    return Ok(()); // see `INSTANT`: plays no part
                }
                let idx = self.threads[th as usize].entries.push(Entry { ts: p.ts, dur: p.dur, trace, flags: p.flags });
                if self.keep_names || !self.timings.want.is_empty() {
                    // The name as its piece of the scan numbered it, read once a piece.
                    if let Some(id) = (!ctx.lossy).then(|| self.piece_name(p.name_id, ctx)).flatten() {
                        if self.keep_names {
                            self.threads[th as usize].names.push((id, p.top_task));
                        }
                        if p.flags & INSTANT == 0 && self.timings.wants(self.strings.get(id)) {
                            let ev = ctx.parse()?;
                            self.timings.complete(self.strings.get(id), &ev, (th, idx), p.ts, p.dur, ctx.index);
                        }
                        return Ok(());
                    }
                    // A name with escapes, not UTF-8, or in a repaired copy: the event read again.
                    let parsed = ctx.parse()?;
                    let Leaf::Str(name) = &parsed.name else { return Ok(()) };
                    let (name, top) = (name.as_ref(), top_level_task(name, &parsed.cat));
                    if self.keep_names {
                        self.name_entry(th, name, top);
                    }
                    if p.flags & INSTANT == 0 && self.timings.wants(name) {
                        let ev = ctx.parse()?;
                        self.timings.complete(name, &ev, (th, idx), p.ts, p.dur, ctx.index);
                    }
                }
                Ok(())
            }
            Prep::Nothing => Ok(()),
            Prep::Chunk(chunk) => {
                let (ev, args) = *chunk;
                self.full_event(&ev, Parsed::Chunk(Box::new(Ok(args))), ctx, diag)
            }
            Prep::Full => {
                let mut ev = ctx.parse()?;
                let chunk = ev.chunk.take();
                let parsed = match &ev.name {
                    Leaf::Str(name) => parse_known_args(&ev, chunk, name, ev.phase(), maybe_special(name)),
                    _ => Parsed::None,
                };
                self.full_event(&ev, parsed, ctx, diag)
            }
        }
    }
}

/// A `ProfileChunk`'s args as the builder takes them, owned. The scan threads make it for the
/// usual chunks: each node's frame is then a run of bytes in one buffer per chunk (the
/// [`FrameCache`] key), not a string allocated per member on one thread and freed on another.
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub struct ChunkIn {
    /// `args.data.cpuProfile.nodes`.
    pub(crate) nodes: Option<Vec<NodeIn>>,
    /// The nodes' frames, [`encode_frame`]d one after the other.
    pub(crate) frame_keys: Vec<u8>,
    /// `args.data.cpuProfile.samples`.
    pub(crate) samples: Option<IdArray>,
    /// `args.data.cpuProfile.trace_ids`, in the map's order, keyed; only the scalar values
    /// (the builder keeps no others).
    pub(crate) trace_ids: Option<Vec<(TraceKey, Leaf<'static>)>>,
    /// `args.data.timeDeltas`.
    pub(crate) time_deltas: Option<NumArray>,
    /// `args.data.lines`, when serde read the args.
    pub(crate) lines: Option<NumArray>,
    /// The bytes of `args.data.lines`, unread, when the scan read the args.
    pub(crate) lines_bytes: Option<Box<[u8]>>,
    /// `args.data.columns`, when serde read the args.
    pub(crate) columns: Option<NumArray>,
    /// The bytes of `args.data.columns`, unread, when the scan read the args.
    pub(crate) columns_bytes: Option<Box<[u8]>>,
    /// `args.data.source`, when it names one.
    pub(crate) source: Option<Source>,
}

#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
impl ChunkIn {
    /// The args, owned.
    pub fn new(a: shapes::ChunkArgs<'_>) -> ChunkIn {
        let mut c = ChunkIn::default();
        let MaybeObj::Obj(data) = a.data else { return c };
        c.time_deltas = data.time_deltas;
        c.lines = data.lines;
        c.lines_bytes = data.lines_bytes.map(Box::from);
        c.columns = data.columns;
        c.columns_bytes = data.columns_bytes.map(Box::from);
        c.source = source_of(&data.source);
        let MaybeObj::Obj(cpu) = data.cpu_profile else { return c };
        c.samples = cpu.samples;
        c.trace_ids = cpu.trace_ids.map(|t| {
            t.into_iter()
                .filter(|(_, v)| !matches!(v, Leaf::Object | Leaf::Array))
                .map(|(k, v)| (TraceKey::of(&k), v.into_owned()))
                .collect()
        });
        let keys = &mut c.frame_keys;
        // A frame's key is its fields' bytes and a few more: room for typical ones up front.
        keys.reserve(cpu.nodes.as_ref().map_or(0, |n| n.len() * 96));
        c.nodes = cpu.nodes.map(|nodes| nodes.iter().map(|n| NodeIn::new(n, keys)).collect());
        c
    }
}

/// Which profile DevTools prefers on a thread (`source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Internal,
    Inspector,
    SelfProfiling,
}

pub(crate) fn source_of(v: &Leaf<'_>) -> Option<Source> {
    match v.str()? {
        "Internal" => Some(Source::Internal),
        "Inspector" => Some(Source::Inspector),
        "SelfProfiling" => Some(Source::SelfProfiling),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::TraceKey;

    /// A canonical decimal of up to 16 digits is its number; anything else stays text.
    #[test]
    fn trace_keys_are_numbers_only_when_canonical() {
        for n in [0u64, 7, 10, 123_456_789, 9_999_999_999_999_999, 1_000_000_000_000_000] {
            assert!(matches!(TraceKey::of(&n.to_string()), TraceKey::Int(k) if k == n), "{n}");
        }
        for s in ["", "01", "00", "-1", "1.5", "1e3", "12345678901234567", "0x1f", " 1", "１"] {
            assert!(matches!(TraceKey::of(s), TraceKey::Str(ref t) if &**t == s), "{s:?}");
        }
    }
}
