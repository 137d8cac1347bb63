//! From trace events to per-thread work: profiles, entries and the process filter.
//!
//! [`TraceBuilder`] sees every event once, in file order, and keeps only what the estimator
//! needs, compactly: per thread, one packed [`Entry`] (see [`super::entries`]) per complete or
//! begin event and per instant that carries a `sampleTraceId`; per profile, its nodes, frames,
//! samples and deltas (see [`super::packed`]). It does the work of DevTools' SamplesHandler
//! (profile assembly keyed by `(pid, id)`, §1.5), RendererHandler (entries, `B`/`E` pairing on
//! one shared stack, the process filter, §1.6), and the parts of MetaHandler and
//! AuctionWorkletsHandler that the filter reads.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

use super::entries::EntryLog;
use super::packed::{Deltas, Ids};
use super::profile::{frame_from_json, js_minus_one, CallFrame, Frames, Limits, ProfileModel, RawNode, RawProfile};
use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::input::document::{EventCtx, RawEvent, Sink};
use crate::input::loose::{IdArray, Loose, NumArray, UNKNOWN_ID};
use crate::input::scan::{ArgsIds, IdHolder};
use crate::input::shapes::{self, MapKey, MaybeObj, NodeJson};
use crate::js::Scalar;
use crate::strings::{StrId, Strings};

/// The entry is an instant (`I`) event. An instant is kept only when it carries a trace id (the
/// integrator reads it) or a `dur` other than 0 (the flame-chart tree reads any entry's `dur`,
/// so it nests in a call and takes from its self time); the integrator skips the latter.
pub const INSTANT: u8 = 1;
/// The event is a JS invocation (`isJSInvocationEvent`).
pub const INVOCATION: u8 = 2;
/// The event is `RunTask` or `RunMicrotasks`, whose start resets the JS stack.
pub const RESET: u8 = 4;

/// One trace event of a thread, as the estimator sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// µs.
    pub ts: f64,
    /// µs (0 when absent).
    pub dur: f64,
    /// The event's truthy `sampleTraceId`: 1 + its index in the builder's table of trace-id key
    /// codes (what it resolves to is in [`ThreadWork::trace_values`]); 0 for none.
    pub trace: u32,
    /// [`INSTANT`], [`INVOCATION`], [`RESET`].
    pub flags: u8,
}

impl Entry {
    /// `ts + dur`.
    #[inline]
    pub fn end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// The `Map.set` order of DevTools, for the few places where it decides something.
#[derive(Debug, Default)]
struct ThreadEvents {
    entries: EntryLog,
    /// Entries DevTools would hold, including the instants jscalls does not keep.
    n_entries: u64,
}

/// `isJSInvocationEvent` and the reset names, as entry flags.
#[inline]
pub fn flags_for_name(name: &str) -> u8 {
    let b = name.as_bytes();
    // Most names are none of these: decide on the first byte before comparing strings.
    match b.first() {
        Some(b'R' | b'F' | b'E' | b'v' | b'V') => {}
        _ => return 0,
    }
    match name {
        "RunTask" => RESET,
        "RunMicrotasks" => RESET | INVOCATION,
        "FunctionCall" | "EvaluateScript" | "v8.evaluateModule" | "EventDispatch" | "V8.Execute"
        | "V8Console::runTask" => INVOCATION,
        _ if name.starts_with("v8") || name.starts_with("V8") => INVOCATION,
        _ => 0,
    }
}

/// An open `B` event on the shared stack: where its entry is, and what an `E` must match.
#[derive(Debug, Clone, Copy)]
struct Begin {
    /// The thread ([`u32::MAX`] for a begin that made no entry).
    thread: u32,
    entry: u32,
    ts: f64,
    name: Option<StrId>,
    cat: Scalar,
}

impl Begin {
    /// A begin that made no entry (bad pid, tid or ts): it still takes part in the pairing.
    const SKIPPED: Begin = Begin { thread: u32::MAX, entry: 0, ts: 0.0, name: None, cat: Scalar::Undefined };
}

/// Which profile DevTools prefers on a thread (`source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Internal,
    Inspector,
    SelfProfiling,
}

fn source_of(v: &Loose<'_>) -> Option<Source> {
    match v.str()? {
        "Internal" => Some(Source::Internal),
        "Inspector" => Some(Source::Inspector),
        "SelfProfiling" => Some(Source::SelfProfiling),
        _ => None,
    }
}

#[derive(Debug)]
struct PreProfile {
    pid: i64,
    id: MapKey,
    raw: RawProfile,
    frame_cache: FrameCache,
    thread: Option<i64>,
    source: Option<Source>,
    /// Where the profile was first seen.
    location: Location,
    /// Running `startTime + Σ deltas` for the endTime quirk: (startTime used, sum, deltas summed).
    end_fold: (f64, f64, usize),
}

/// One frame's renderer processes, in `Map` order: pid → the URLs seen, in order.
#[derive(Debug, Default)]
struct FrameProcesses {
    pids: Vec<(i64, Vec<Option<String>>)>,
}

/// How the engine treats the input (see [`crate::Config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineVersion {
    /// `@paulirish/trace_engine` 0.0.65, the published engine that Lighthouse uses.
    V0_0_65,
    /// The newest DevTools source, what current Chrome shows (the default): fake-JS mode after
    /// a trace-id event, samples-only threads integrated, no auction-worklet exception.
    Latest,
}

impl EngineVersion {
    /// The `engine` member of the calls output.
    pub fn label(self) -> &'static str {
        match self {
            EngineVersion::V0_0_65 => "@paulirish/trace_engine@0.0.65",
            EngineVersion::Latest => "@paulirish/trace_engine@0.0.65+latest",
        }
    }
}

/// What [`TraceBuilder::finish`] hands to the estimator.
#[derive(Debug)]
pub struct TraceModel {
    /// All strings.
    pub strings: Strings,
    /// One per profile DevTools keeps, sorted by (pid, tid).
    pub threads: Vec<ThreadWork>,
    /// True when the metadata says the trace is a saved `.cpuprofile` (CPU-profile mode).
    pub cpu_profile_origin: bool,
}

/// A profile and the thread it belongs to.
#[derive(Debug)]
pub struct ThreadWork {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// The profile id, as JSON.
    pub profile_id: String,
    /// The thread's name, from `thread_name` metadata.
    pub thread_name: Option<String>,
    /// The profile.
    pub model: ProfileModel,
    /// The thread's events, sorted as DevTools sorts them ([`sort_entries`]).
    pub entries: Vec<Entry>,
    /// The values the profile's `trace_ids` give the events' `sampleTraceId`s: (the event's
    /// [`Entry::trace`] − 1, value), for the events whose id is a key there.
    pub trace_values: Vec<(u32, Scalar)>,
    /// Whether DevTools computes calls for this profile, and if not, why.
    pub skipped: Option<&'static str>,
}

/// Consumes trace events (a [`Sink`]) and builds the [`TraceModel`].
#[derive(Debug)]
pub struct TraceBuilder {
    strings: Strings,
    limits: Limits,
    version: EngineVersion,
    profiles: Vec<PreProfile>,
    profile_index: FxHashMap<(i64, MapKey), usize>,
    threads: Vec<ThreadEvents>,
    thread_index: FxHashMap<(i64, i64), u32>,
    processes: FxHashSet<i64>,
    /// The shared `B`/`E` stack.
    begins: Vec<Begin>,
    /// The `sampleTraceId` of each event that has one (see [`Entry::trace`]), as key codes.
    trace_keys: Vec<u64>,
    /// Key codes of the trace-id keys that are not array indices.
    trace_strs: FxHashMap<Box<str>, u64>,
    generic: bool,
    frames: Vec<(MapKey, FrameProcesses)>,
    frame_index: FxHashMap<MapKey, usize>,
    thread_names: FxHashMap<(i64, i64), String>,
    worklet_utility: FxHashSet<i64>,
    worklet_helper: FxHashSet<i64>,
    worklet_events: FxHashSet<i64>,
    serial: u64,
    last_thread: Option<(i64, i64, u32)>,
}

impl TraceBuilder {
    /// A builder for one input.
    pub fn new(limits: Limits, version: EngineVersion) -> TraceBuilder {
        TraceBuilder {
            strings: Strings::default(),
            limits,
            version,
            profiles: Vec::new(),
            profile_index: FxHashMap::default(),
            threads: Vec::new(),
            thread_index: FxHashMap::default(),
            processes: FxHashSet::default(),
            begins: Vec::new(),
            trace_keys: Vec::new(),
            trace_strs: FxHashMap::default(),
            generic: true,
            frames: Vec::new(),
            frame_index: FxHashMap::default(),
            thread_names: FxHashMap::default(),
            worklet_utility: FxHashSet::default(),
            worklet_helper: FxHashSet::default(),
            worklet_events: FxHashSet::default(),
            serial: 0,
            last_thread: None,
        }
    }

    fn thread(&mut self, pid: i64, tid: i64) -> u32 {
        if let Some((p, t, i)) = self.last_thread {
            if (p, t) == (pid, tid) {
                return i;
            }
        }
        let i = self.thread_slow(pid, tid);
        self.last_thread = Some((pid, tid, i));
        i
    }

    fn thread_slow(&mut self, pid: i64, tid: i64) -> u32 {
        self.processes.insert(pid);
        let n = self.threads.len() as u32;
        let idx = *self.thread_index.entry((pid, tid)).or_insert(n);
        if idx == n {
            self.threads.push(ThreadEvents::default());
        }
        idx
    }

    fn profile(&mut self, pid: i64, id: &Loose<'_>, loc: impl FnOnce() -> Location) -> usize {
        self.serial += 1;
        let key = MapKey::of(id, self.serial);
        if let Some(&i) = self.profile_index.get(&(pid, key.clone())) {
            return i;
        }
        let i = self.profiles.len();
        self.profiles.push(PreProfile {
            pid,
            id: key.clone(),
            raw: RawProfile {
                samples: Some(Ids::default()),
                time_deltas: Some(Deltas::default()),
                ..RawProfile::default()
            },
            frame_cache: FrameCache::default(),
            thread: None,
            source: None,
            location: loc(),
            end_fold: (f64::NAN, 0.0, 0),
        });
        self.profile_index.insert((pid, key), i);
        i
    }

    fn trace_id(
        &mut self,
        ev: &RawEvent<'_>,
        found: Option<TraceIdFound<'_>>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<u32, Error> {
        if ev.args.is_none() {
            return Ok(0);
        }
        let found = match found {
            Some(f) => f,
            None => trace_id_of(&ev.args_ids),
        };
        let key = match found {
            TraceIdFound::None => return Ok(0),
            TraceIdFound::NullBeginData => {
                diag.push(
                    WarningKind::DevtoolsWouldFail,
                    Some(ctx.location()),
                    "args.beginData is null: DevTools fails on this event (reading sampleTraceId of null); no trace id used",
                );
                return Ok(0);
            }
            TraceIdFound::Key(k) => k,
        };
        Ok(self.event_trace_id(TraceKey::of(&key)))
    }

    /// Files the `sampleTraceId` of an event; returns its number for [`Entry::trace`].
    fn event_trace_id(&mut self, key: TraceKey) -> u32 {
        let code = self.key_code(key);
        self.trace_keys.push(code);
        // A u32 numbers 4 billion traced events, a trace of more than a terabyte.
        u32::try_from(self.trace_keys.len()).unwrap_or(0)
    }

    /// The code of a trace-id key: an array index `k` is `k + 1`; other keys are numbered
    /// with the top bit set. Equal keys have equal codes; 0 is no key.
    fn key_code(&mut self, key: TraceKey) -> u64 {
        match key {
            TraceKey::Int(k) => k + 1,
            TraceKey::Str(s) => {
                let n = (1 << 63) | self.trace_strs.len() as u64;
                *self.trace_strs.entry(s).or_insert(n)
            }
        }
    }

    /// `Profile`, `ProfileChunk`, `CpuProfile`: the SamplesHandler.
    fn samples_event(
        &mut self,
        name: &str,
        ev: &RawEvent<'_>,
        chunk: Option<Result<ChunkIn, serde_json::Error>>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        let Some(pid) = ev.pid.int() else {
            diag.push(
                WarningKind::BadThreadId,
                Some(ctx.location()),
                format!("{name} event has no integral pid ({}); skipped", ev.pid.type_name()),
            );
            return Ok(());
        };
        match name {
            "Profile" => {
                let (Some(ts), Some(tid)) = (ev.ts.num().filter(|t| t.is_finite()), ev.tid.int()) else {
                    diag.push(
                        WarningKind::BadTimestamp,
                        Some(ctx.location()),
                        "Profile event without a numeric ts and an integral tid; skipped",
                    );
                    return Ok(());
                };
                let source = match ev.args {
                    Some(a) => {
                        let args: shapes::ProfileArgs = parse_args(a, ctx, "Profile args")?;
                        args.data.obj().and_then(|d| source_of(&d.source))
                    }
                    None => None,
                };
                let i = self.profile(pid, &ev.id, || ctx.location());
                let p = &mut self.profiles[i];
                p.raw.start_time = ts;
                p.thread = Some(tid);
                if source.is_some() {
                    p.source = source;
                }
            }
            "ProfileChunk" => self.chunk(pid, ev, chunk, ctx, diag)?,
            _ => {
                // CpuProfile with ph X: the whole profile in one event (a wrapped .cpuprofile).
                let Some(tid) = ev.tid.int() else {
                    diag.push(
                        WarningKind::BadThreadId,
                        Some(ctx.location()),
                        "CpuProfile event without an integral tid; skipped",
                    );
                    return Ok(());
                };
                let Some(args) = ev.args else {
                    return Err(Error::input(Some(ctx.location()), "CpuProfile event without args.data.cpuProfile"));
                };
                let a: shapes::CpuProfileArgs = parse_args(args, ctx, "CpuProfile args")?;
                let Some(json) = a.data.obj().and_then(|d| d.cpu_profile.obj()) else {
                    return Err(Error::input(Some(ctx.location()), "CpuProfile event without args.data.cpuProfile"));
                };
                let raw = raw_from_cpuprofile(json, &mut self.strings, Some(ctx.location()))?;
                let i = self.profile(pid, &ev.id, || ctx.location());
                self.profiles[i].raw = raw;
                self.profiles[i].thread = Some(tid);
            }
        }
        Ok(())
    }

    fn chunk(
        &mut self,
        pid: i64,
        ev: &RawEvent<'_>,
        parsed: Option<Result<ChunkIn, serde_json::Error>>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        let Some(args) = ev.args else {
            diag.push(
                WarningKind::DevtoolsWouldFail,
                Some(ctx.location()),
                "ProfileChunk without args: DevTools fails to load such a trace; skipped",
            );
            return Ok(());
        };
        let a = match parsed {
            Some(p) => p.map_err(|e| args_error(args, ctx, "ProfileChunk args", &e))?,
            None => ChunkIn::new(parse_args::<shapes::ChunkArgs>(args, ctx, "ProfileChunk args")?),
        };
        let mut new_nodes = Vec::new();
        // The profile is made before its nodes are read, as their frames go in its table (an
        // error here ends the run, so a profile made for nothing does not matter).
        let i = self.profile(pid, &ev.id, || ctx.location());
        if let Some(nodes) = a.nodes {
            new_nodes.reserve(nodes.len());
            let p = &mut self.profiles[i];
            for (k, n) in nodes.into_iter().enumerate() {
                let node = n
                    .into_raw(&a.frame_keys, &mut self.strings, &mut p.raw.frames, &mut p.frame_cache)
                    .map_err(|m| Error::input(Some(ctx.location()), format!("ProfileChunk: node {k}: {m}")))?;
                new_nodes.push(node);
            }
        }
        let deltas = a.time_deltas.as_ref();
        if let Some(d) = deltas {
            if d.n_non_numbers > 0 {
                let k = d.values.iter().position(|v| v.is_nan()).unwrap_or(0);
                return Err(Error::input(
                    Some(ctx.location()),
                    format!("ProfileChunk: timeDeltas[{k}] is not a number"),
                ));
            }
        }
        let p = &mut self.profiles[i];
        p.raw.nodes.extend(new_nodes);
        if let (Some(s), Some(c)) = (p.raw.samples.as_mut(), &a.samples) {
            s.extend(&c.0);
        }
        if let (Some(t), Some(d)) = (p.raw.time_deltas.as_mut(), deltas) {
            t.extend(&d.values);
        }
        if let Some(ids) = a.trace_ids {
            let mut keyed = Vec::with_capacity(ids.len());
            for (k, v) in ids {
                if let Some(s) = v.scalar(&mut self.strings) {
                    keyed.push((self.key_code(k), s));
                }
            }
            self.profiles[i].raw.trace_ids.get_or_insert_with(FxHashMap::default).extend(keyed);
        }
        let p = &mut self.profiles[i];
        let (ns, nd) = (p.raw.samples.as_ref().map(|s| s.len()), p.raw.time_deltas.as_ref().map(|d| d.len()));
        if let (Some(ns), Some(nd)) = (ns, nd) {
            if ns != nd {
                diag.push_with(
                    WarningKind::SamplesDeltasMismatch,
                    || Some(ctx.location()),
                    || {
                        format!(
                            "ProfileChunk: the profile now has {ns} samples but {nd} timeDeltas; DevTools logs 'Failed to parse CPU profile' and carries on"
                        )
                    },
                );
                return Ok(());
            }
        }
        let end_falsy = p.raw.end_time == 0.0 || p.raw.end_time.is_nan();
        if end_falsy {
            if let Some(d) = &p.raw.time_deltas {
                // timeDeltas.reduce((x, y) => x + y, startTime), kept incrementally.
                let (start, mut sum, mut done) = p.end_fold;
                if start.to_bits() != p.raw.start_time.to_bits() {
                    sum = p.raw.start_time;
                    done = 0;
                }
                for x in d.iter_from(done) {
                    sum += x;
                }
                p.end_fold = (p.raw.start_time, sum, d.len());
                p.raw.end_time = sum;
            }
        }
        if let Some(s) = a.source {
            p.source = Some(s);
        }
        Ok(())
    }

    /// TracingStartedInBrowser / FrameCommittedInBrowser / CommitLoad: frame → process URLs.
    fn frame_event(
        &mut self,
        name: &str,
        ev: &RawEvent<'_>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        match name {
            "TracingStartedInBrowser" => {
                let a: shapes::StartedArgs = match ev.args {
                    Some(a) => parse_args(a, ctx, "TracingStartedInBrowser args")?,
                    None => shapes::Args { data: MaybeObj::Missing },
                };
                let Some(data) = a.data.obj() else {
                    diag.push(
                        WarningKind::DevtoolsWouldFail,
                        Some(ctx.location()),
                        "TracingStartedInBrowser without args.data: DevTools refuses such a trace ('No frames found in trace data')",
                    );
                    return Ok(());
                };
                for f in data.frames.iter().flatten() {
                    self.add_frame(&f.frame, &f.process_id, &f.url);
                }
            }
            "FrameCommittedInBrowser" => {
                if let Some(a) = ev.args {
                    let a: shapes::FrameArgs = parse_args(a, ctx, "FrameCommittedInBrowser args")?;
                    if let Some(f) = a.data.obj() {
                        self.add_frame(&f.frame, &f.process_id, &f.url);
                    }
                }
            }
            _ => {
                // CommitLoad: the frame's process is the event's own.
                if let Some(a) = ev.args {
                    let a: shapes::FrameArgs = parse_args(a, ctx, "CommitLoad args")?;
                    if let Some(f) = a.data.obj() {
                        self.add_frame(&f.frame, &ev.pid, &f.url);
                    }
                }
            }
        }
        Ok(())
    }

    fn add_frame(&mut self, frame: &Loose<'_>, pid: &Loose<'_>, url: &Loose<'_>) {
        self.serial += 1;
        let key = MapKey::of(frame, self.serial);
        let n = self.frames.len();
        let fi = *self.frame_index.entry(key.clone()).or_insert(n);
        if fi == n {
            self.frames.push((key, FrameProcesses::default()));
        }
        // Only numeric pids can match a thread's pid (a string "5" is another Map key).
        let Some(pid) = pid.int() else { return };
        let url = url.str().map(str::to_owned);
        let procs = &mut self.frames[fi].1.pids;
        match procs.iter_mut().find(|(p, _)| *p == pid) {
            Some((_, urls)) => urls.push(url),
            None => procs.push((pid, vec![url])),
        }
    }

    fn renderer_event(
        &mut self,
        name: &str,
        ph: u8,
        ev: &RawEvent<'_>,
        trace: Option<TraceIdFound<'_>>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        let (Some(pid), Some(tid)) = (ev.pid.int(), ev.tid.int()) else {
            diag.push_with(
                WarningKind::BadThreadId,
                || Some(ctx.location()),
                || format!("'{name}' ({}) has no integral pid/tid; skipped", ph as char),
            );
            if ph == b'B' {
                self.begins.push(Begin::SKIPPED);
            }
            return Ok(());
        };
        let ts = ev.ts.num().filter(|t| t.is_finite());
        if ph == b'E' {
            self.thread(pid, tid);
            let Some(Begin { thread: th, entry, ts: begin_ts, name: bname, cat: bcat }) = self.begins.pop() else {
                return Ok(()); // unbalanced ends are legitimate (the begin was before tracing)
            };
            let cat = ev.cat.scalar(&mut self.strings).unwrap_or(Scalar::Undefined);
            let same = bname.is_some() && bname == self.strings.lookup(name) && cat == bcat;
            if !same {
                diag.push_with(
                    WarningKind::UnpairedEnd,
                    || Some(ctx.location()),
                    || {
                        format!(
                            "'E' event '{name}' closes a 'B' event with another name or category; the begin keeps duration 0 as in DevTools"
                        )
                    },
                );
                return Ok(());
            }
            let Some(ts) = ts else {
                diag.push(
                    WarningKind::BadTimestamp,
                    Some(ctx.location()),
                    "'E' event without a numeric ts; its begin keeps duration 0",
                );
                return Ok(());
            };
            if th != u32::MAX {
                self.threads[th as usize].entries.set_dur(entry, ts - begin_ts);
            }
            return Ok(());
        }
        let Some(ts) = ts else {
            diag.push_with(
                WarningKind::BadTimestamp,
                || Some(ctx.location()),
                || format!("'{name}' ({}) has no numeric ts; skipped", ph as char),
            );
            if ph == b'B' {
                self.begins.push(Begin::SKIPPED);
            }
            return Ok(());
        };
        let dur = match (ph, &ev.dur) {
            (b'B', _) => 0.0,
            (_, Loose::Missing | Loose::Null) => 0.0,
            (_, Loose::Num(d)) if d.is_finite() => *d,
            (_, d) => {
                diag.push_with(
                    WarningKind::BadTimestamp,
                    || Some(ctx.location()),
                    || format!("'{name}' has a dur that is {}, not a number; skipped", d.type_name()),
                );
                return Ok(());
            }
        };
        if ev.has_call_frame {
            diag.push_with(
                WarningKind::DevtoolsWouldFail,
                || Some(ctx.location()),
                || format!("'{name}' has a top-level callFrame key; DevTools would mistake it for a ProfileCall; jscalls treats it as a trace event"),
            );
        }
        let th = self.thread(pid, tid);
        self.threads[th as usize].n_entries += 1;
        let trace = self.trace_id(ev, trace, ctx, diag)?;
        let mut flags = flags_for_name(name);
        if ph == b'I' {
            if trace == 0 && dur == 0.0 {
                return Ok(()); // see `INSTANT`: plays no part
            }
            flags |= INSTANT;
        }
        let idx = self.threads[th as usize].entries.push(Entry { ts, dur, trace, flags });
        if ph == b'B' {
            let name = Some(self.strings.intern(name));
            let cat = ev.cat.scalar(&mut self.strings).unwrap_or(Scalar::Undefined);
            self.begins.push(Begin { thread: th, entry: idx, ts, name, cat });
        }
        Ok(())
    }

    /// Builds the model once all events are in (the handlers' `finalize`).
    /// The profile models are built on up to `n_threads` threads.
    pub fn finish(
        mut self,
        metadata: Option<&[u8]>,
        diag: &mut Diagnostics,
        n_threads: usize,
    ) -> Result<TraceModel, Error> {
        let cpu_profile_origin = match metadata {
            Some(m) => match std::str::from_utf8(m).ok().and_then(|s| shapes::parse::<shapes::Metadata>(s).ok()) {
                Some(md) => md.data_origin.str() == Some("CPUProfile"),
                None => false,
            },
            None => false,
        };
        let unclosed = self.begins.iter().filter(|b| b.thread != u32::MAX).count();
        if unclosed > 0 {
            diag.push(
                WarningKind::UnclosedBegin,
                None,
                format!("{unclosed} 'B' event(s) never closed; they keep duration 0, as in DevTools"),
            );
        }

        // SamplesHandler.finalize: one profile per (pid, tid), by source priority.
        let priority: &[Source] =
            if cpu_profile_origin { &[Source::Inspector] } else { &[Source::Internal, Source::Inspector] };
        let mut pids: Vec<i64> = Vec::new();
        let mut by_pid: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
        for (i, p) in self.profiles.iter().enumerate() {
            by_pid.entry(p.pid).or_insert_with(|| {
                pids.push(p.pid);
                Vec::new()
            });
            by_pid.get_mut(&p.pid).expect("just inserted").push(i);
            if p.thread.is_none() {
                diag.push(
                    WarningKind::ProfileWithoutHead,
                    Some(p.location),
                    format!(
                        "profile {} of process {} has chunks but no Profile event; DevTools drops it",
                        p.id.to_json(),
                        p.pid
                    ),
                );
            }
        }
        let mut chosen: Vec<(i64, i64, usize)> = Vec::new();
        for pid in pids {
            let mut tids: Vec<i64> = Vec::new();
            let mut cands: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
            for &i in &by_pid[&pid] {
                let Some(tid) = self.profiles[i].thread else { continue };
                cands.entry(tid).or_insert_with(|| {
                    tids.push(tid);
                    Vec::new()
                });
                cands.get_mut(&tid).expect("just inserted").push(i);
            }
            for tid in tids {
                let list = &cands[&tid];
                let mut pick = list[0];
                for s in priority {
                    if let Some(&m) = list.iter().find(|&&i| self.profiles[i].source == Some(*s)) {
                        pick = m;
                        break;
                    }
                }
                for &other in list.iter().filter(|&&i| i != pick) {
                    diag.push(
                        WarningKind::ProfileNotChosen,
                        Some(self.profiles[other].location),
                        format!(
                            "thread {pid}:{tid} has several profiles; profile {} was chosen over {}, as DevTools chooses",
                            self.profiles[pick].id.to_json(),
                            self.profiles[other].id.to_json()
                        ),
                    );
                }
                if self.profiles[pick].raw.nodes.is_empty() {
                    diag.push(
                        WarningKind::EmptyProfile,
                        Some(self.profiles[pick].location),
                        format!(
                            "profile {} of thread {pid}:{tid} has no nodes; DevTools skips it",
                            self.profiles[pick].id.to_json()
                        ),
                    );
                    continue;
                }
                chosen.push((pid, tid, pick));
            }
        }

        // RendererHandler.finalize: the process filter.
        let mut kept: FxHashSet<i64> = self.processes.clone();
        if !self.generic {
            let mut url: FxHashMap<i64, Option<String>> = FxHashMap::default();
            for (_, fp) in &self.frames {
                for (pid, urls) in &fp.pids {
                    let cur = url.entry(*pid).or_insert(None);
                    for u in urls {
                        if cur.is_none() || cur.as_deref() == Some("about:blank") {
                            *cur = u.as_deref().filter(|s| url::Url::parse(s).is_ok()).map(str::to_owned);
                        }
                    }
                }
            }
            let mut all: FxHashSet<i64> = self.processes.clone();
            all.extend(url.keys().copied());
            kept = all
                .into_iter()
                .filter(|pid| {
                    url.get(pid).is_some_and(|u| u.is_some())
                        || (self.version == EngineVersion::V0_0_65 && self.is_worklet(*pid))
                })
                .collect();
        }

        // Entries of threads without a chosen profile are never used: free them before the
        // models are built (the point where memory peaks).
        let used: FxHashSet<u32> =
            chosen.iter().filter_map(|&(pid, tid, _)| self.thread_index.get(&(pid, tid)).copied()).collect();
        for (i, t) in self.threads.iter_mut().enumerate() {
            if !used.contains(&(i as u32)) {
                t.entries = EntryLog::default();
            }
        }

        let mut threads = Vec::with_capacity(chosen.len());
        let strings = std::mem::take(&mut self.strings);
        // Two jobs per thread, run side by side: its profile's model, and its events (decoded,
        // sorted, their trace ids looked up in the profile's `trace_ids`). Each profile is
        // chosen at most once: its data moves into the jobs. Biggest first, for the balance.
        let mut jobs: Vec<(usize, Job)> = Vec::with_capacity(2 * chosen.len());
        for (slot, &(pid, tid, pick)) in chosen.iter().enumerate() {
            let p = &mut self.profiles[pick];
            let what = format!("profile {} of thread {pid}:{tid}", p.id.to_json());
            let mut raw = std::mem::take(&mut p.raw);
            let ids = raw.trace_ids.take();
            jobs.push((slot, Job::Model(raw, what, p.location)));
            let entries = match self.thread_index.get(&(pid, tid)) {
                Some(&t) => std::mem::take(&mut self.threads[t as usize].entries),
                None => EntryLog::default(),
            };
            jobs.push((slot, Job::Entries(entries, ids)));
        }
        jobs.sort_by_key(|(_, j)| std::cmp::Reverse(j.size()));
        let (limits, keys) = (self.limits, &self.trace_keys);
        let done = crate::parallel::map(jobs, n_threads, |(slot, job)| {
            let d = match job {
                Job::Model(raw, what, location) => {
                    Done::Model(ProfileModel::new(raw, &strings, limits, &what, Some(location)))
                }
                Job::Entries(log, ids) => {
                    let mut entries = log.into_vec();
                    sort_entries(&mut entries);
                    let trace_values = trace_values(&entries, ids.as_ref(), keys);
                    Done::Events(Events { entries, trace_values })
                }
            };
            (slot, d)
        });
        let mut models: Vec<Option<Result<ProfileModel, Error>>> = (0..chosen.len()).map(|_| None).collect();
        let mut events: Vec<Events> = (0..chosen.len()).map(|_| Events::default()).collect();
        for (slot, d) in done {
            match d {
                Done::Model(m) => models[slot] = Some(m),
                Done::Events(e) => events[slot] = e,
            }
        }
        for (((pid, tid, pick), model), Events { entries, trace_values }) in chosen.into_iter().zip(models).zip(events)
        {
            let model = model.expect("a model per thread")?;
            let p = &self.profiles[pick];
            report_model(&model, &format!("thread {pid}:{tid}"), p.location, diag);
            let n_entries = self.thread_index.get(&(pid, tid)).map_or(0, |&t| self.threads[t as usize].n_entries);
            // A saved .cpuprofile (CPU-profile mode) takes its calls from the SamplesHandler: the
            // RendererHandler's filters do not apply.
            let skipped = if cpu_profile_origin {
                None
            } else if !kept.contains(&pid) {
                if self.generic {
                    diag.push(
                        WarningKind::ThreadWithoutEvents,
                        None,
                        format!("process {pid} has no trace events; DevTools computes no calls for thread {pid}:{tid}"),
                    );
                } else {
                    diag.push(
                        WarningKind::ProcessDropped,
                        None,
                        format!("process {pid} has no valid frame URL; DevTools drops it, so thread {pid}:{tid} gets no calls"),
                    );
                }
                Some("process dropped by RendererHandler (no frame URL / not a renderer)")
            } else if n_entries == 0 && self.version == EngineVersion::V0_0_65 {
                diag.push(
                    WarningKind::ThreadWithoutEvents,
                    None,
                    format!(
                        "thread {pid}:{tid} has samples but no trace events; DevTools 0.0.65 computes no calls for it"
                    ),
                );
                Some("thread has no trace entries in RendererHandler")
            } else {
                None
            };
            let thread_name = if skipped.is_none() && !cpu_profile_origin {
                self.thread_names.get(&(pid, tid)).cloned()
            } else {
                None
            };
            threads.push(ThreadWork {
                pid,
                tid,
                profile_id: p.id.to_json(),
                thread_name,
                model,
                entries,
                trace_values,
                skipped,
            });
        }
        threads.sort_by_key(|t| (t.pid, t.tid));
        Ok(TraceModel { strings, threads, cpu_profile_origin })
    }

    fn is_worklet(&self, pid: i64) -> bool {
        self.worklet_utility.contains(&pid) && self.worklet_helper.contains(&pid) && self.worklet_events.contains(&pid)
    }
}

/// A job of [`TraceBuilder::finish`]: a thread's profile model or its events.
enum Job {
    Model(RawProfile, String, Location),
    Entries(EntryLog, Option<FxHashMap<u64, Scalar>>),
}

impl Job {
    /// About how long the job takes, to start the biggest first.
    fn size(&self) -> usize {
        match self {
            Job::Model(raw, ..) => raw.samples.as_ref().map_or(0, |s| s.len()) + raw.nodes.len(),
            Job::Entries(log, ids) => log.len() + ids.as_ref().map_or(0, |m| m.len()),
        }
    }
}

/// What a [`Job`] made.
enum Done {
    Model(Result<ProfileModel, Error>),
    Events(Events),
}

/// A thread's events, ready for the estimator (see [`ThreadWork`]).
#[derive(Default)]
struct Events {
    entries: Vec<Entry>,
    trace_values: Vec<(u32, Scalar)>,
}

/// The values `ids` (a profile's `trace_ids`) give the events' trace ids: (trace index, value).
/// Looked up here, beside the model being built, rather than by the estimator: on a 92 MB
/// recording, 105,000 lookups that mostly miss the caches (7 ms) were on the one thread left
/// working.
fn trace_values(entries: &[Entry], ids: Option<&FxHashMap<u64, Scalar>>, keys: &[u64]) -> Vec<(u32, Scalar)> {
    let Some(ids) = ids else { return Vec::new() };
    entries
        .iter()
        .filter(|e| e.trace != 0)
        .filter_map(|e| {
            let k = e.trace - 1;
            ids.get(&keys[k as usize]).map(|&v| (k, v))
        })
        .collect()
}

/// Sorts a thread's entries as `sortTraceEventsInPlace` does: by start, then longest first
/// ([`entry_order`]); stable, so equal events keep their file order.
pub fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by(entry_order);
}

/// The order of [`sort_entries`].
pub fn entry_order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    a.ts.partial_cmp(&b.ts)
        .unwrap_or(std::cmp::Ordering::Equal)
        .then_with(|| b.end().partial_cmp(&a.end()).unwrap_or(std::cmp::Ordering::Equal))
}

/// Counts what the model dropped, as warnings.
pub fn report_model(model: &ProfileModel, what: &str, at: Location, diag: &mut Diagnostics) {
    if model.n_unknown_samples > 0 {
        diag.push(
            WarningKind::UnknownSampleNode,
            Some(at),
            format!(
                "{what}: {} sample(s) name node ids the profile does not have; dropped, as in DevTools",
                model.n_unknown_samples
            ),
        );
    }
    if model.n_duplicate_ids > 0 {
        diag.push(
            WarningKind::DuplicateNodeId,
            Some(at),
            format!(
                "{what}: {} node(s) reuse an id of an earlier node; the later one wins, as in DevTools",
                model.n_duplicate_ids
            ),
        );
    }
    if model.n_unreachable > 0 {
        diag.push(
            WarningKind::UnknownParent,
            Some(at),
            format!(
                "{what}: {} node(s) are not reachable from the root (an unknown, cyclic or self parent); ignored, as in DevTools",
                model.n_unreachable
            ),
        );
    }
    if model.n_shared > 0 {
        diag.push(
            WarningKind::SharedNode,
            Some(at),
            format!(
                "{what}: {} node(s) are listed under more than one parent; each copy is kept, as in DevTools",
                model.n_shared
            ),
        );
    }
}

/// False for names that are surely none of the ones the builder looks at by name.
#[inline]
fn maybe_special(name: &str) -> bool {
    matches!(
        (name.len(), name.as_bytes().first()),
        (7, Some(b'P')) // Profile
            | (12, Some(b'P')) // ProfileChunk
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
fn reads_args(name: &str) -> bool {
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

/// What an event's args say about its `sampleTraceId` (§3.7).
#[derive(Debug)]
pub enum TraceIdFound<'a> {
    /// No truthy id.
    None,
    /// `args.beginData` is null (DevTools fails on such an event).
    NullBeginData,
    /// The id as a JS property key.
    Key(Cow<'a, str>),
}

/// The `sampleTraceId` of an event's args: `beginData` first when present, else the top level,
/// else `data` (spec §3.7).
fn trace_id_of<'a>(ids: &ArgsIds<'a>) -> TraceIdFound<'a> {
    let id = match &ids.begin_data {
        IdHolder::Obj(id) => id,
        IdHolder::Other(Loose::Null) => return TraceIdFound::NullBeginData,
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
        Loose::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => {
            Cow::Owned(itoa::Buffer::new().format(*n as i64).to_owned())
        }
        Loose::Num(n) => Cow::Owned(ryu_js::Buffer::new().format(*n).to_owned()),
        Loose::Str(s) => s.clone(),
        other => match other.property_key() {
            Some(k) => Cow::Owned(k),
            None => return TraceIdFound::None,
        },
    })
}

/// A `sampleTraceId` as a JavaScript property key: a canonical array index (the usual numbers)
/// apart, so that it is kept and compared without allocating.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TraceKey {
    /// A key that is a canonical decimal integer of at most 16 digits (`"0"`, `"17"`, not
    /// `"017"`): the key of that number, kept as the number.
    Int(u64),
    /// Any other key.
    Str(Box<str>),
}

impl TraceKey {
    /// The key for a property name.
    pub fn of(key: &str) -> TraceKey {
        let b = key.as_bytes();
        let canonical =
            !b.is_empty() && b.len() <= 16 && b.iter().all(u8::is_ascii_digit) && (b[0] != b'0' || b.len() == 1);
        match canonical {
            true => TraceKey::Int(key.parse().expect("digits")),
            false => TraceKey::Str(key.into()),
        }
    }
}

/// What the scan threads make of an event for the [`TraceBuilder`] (see [`Sink::prepare`]).
#[derive(Debug)]
pub enum Prep {
    /// A well-formed `X` or `I` event with an ordinary name: all that is left is to file it.
    Plain(Plain),
    /// An event that plays no part (an ordinary name, a phase other than `X`/`I`/`B`/`E`).
    Nothing,
    /// A `ProfileChunk` whose args were read: its envelope (with empty `args`) and the args.
    Chunk(Box<(RawEvent<'static>, ChunkIn)>),
    /// Anything else: the builder reads the event again and does it all.
    Full,
}

/// A `ProfileChunk`'s args as the builder takes them, owned. The scan threads make it for the
/// usual chunks: each node's frame is then a run of bytes in one buffer per chunk (the
/// [`FrameCache`] key), not a string allocated per member on one thread and freed on another.
#[derive(Debug, Default)]
pub struct ChunkIn {
    /// `args.data.cpuProfile.nodes`.
    nodes: Option<Vec<NodeIn>>,
    /// The nodes' frames, [`encode_frame`]d one after the other.
    frame_keys: Vec<u8>,
    /// `args.data.cpuProfile.samples`.
    samples: Option<IdArray>,
    /// `args.data.cpuProfile.trace_ids`, in the map's order, keyed; only the scalar values
    /// (the builder keeps no others).
    trace_ids: Option<Vec<(TraceKey, Loose<'static>)>>,
    /// `args.data.timeDeltas`.
    time_deltas: Option<NumArray>,
    /// `args.data.source`, when it names one.
    source: Option<Source>,
}

impl ChunkIn {
    /// The args, owned.
    pub fn new(a: shapes::ChunkArgs<'_>) -> ChunkIn {
        let mut c = ChunkIn::default();
        let MaybeObj::Obj(data) = a.data else { return c };
        c.time_deltas = data.time_deltas;
        c.source = source_of(&data.source);
        let MaybeObj::Obj(cpu) = data.cpu_profile else { return c };
        c.samples = cpu.samples;
        c.trace_ids = cpu.trace_ids.map(|t| {
            t.into_iter()
                .filter(|(_, v)| !matches!(v, Loose::Object | Loose::Array))
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

/// A chunk's node, as far as the builder reads it.
#[derive(Debug)]
struct NodeIn {
    /// The id, or the type of the value that is not one.
    id: Result<i64, &'static str>,
    parent: i64,
    children: Option<Box<[i64]>>,
    /// Where its frame's key is in [`ChunkIn::frame_keys`]; None without a `callFrame` object.
    frame: Option<std::ops::Range<usize>>,
    hit_count_is_number: bool,
}

impl NodeIn {
    fn new(n: &NodeJson<'_>, keys: &mut Vec<u8>) -> NodeIn {
        let frame = match &n.call_frame {
            MaybeObj::Obj(f) => {
                let start = keys.len();
                encode_frame(f, keys);
                Some(start..keys.len())
            }
            _ => None,
        };
        NodeIn {
            id: n.id.int().ok_or(n.id.type_name()),
            parent: n.parent.int().unwrap_or(UNKNOWN_ID),
            children: n.children.as_ref().map(|c| c.iter().map(|v| v.int().unwrap_or(UNKNOWN_ID)).collect()),
            frame,
            hit_count_is_number: matches!(n.hit_count, Loose::Num(_)),
        }
    }

    /// The node, its frame read through `cache` (the messages are [`node_from_json`]'s).
    fn into_raw(
        self,
        keys: &[u8],
        strings: &mut Strings,
        frames: &mut Frames,
        cache: &mut FrameCache,
    ) -> Result<RawNode, String> {
        let id = self.id.map_err(|t| format!("the node id is {t}, not an integer"))?;
        let Some(key) = self.frame else {
            return Err(format!("node {id} has no callFrame object (DevTools fails on this)"));
        };
        let frame = cache
            .frame_by_key(&keys[key], true, strings, frames)
            .ok_or_else(|| format!("node {id}: a callFrame field is an object or array"))?;
        Ok(RawNode {
            id,
            parent: self.parent,
            children: self.children,
            frame,
            hit_count_is_number: self.hit_count_is_number,
        })
    }
}

/// The fields of a plain `X` or `I` event, checked.
#[derive(Debug)]
pub struct Plain {
    pid: i64,
    tid: i64,
    ts: f64,
    dur: f64,
    /// [`flags_for_name`], plus [`INSTANT`] for an `I` event.
    flags: u8,
    /// The `sampleTraceId`.
    trace: Option<TraceKey>,
}

/// The args of an event, parsed before the event is handled.
#[derive(Debug)]
enum Parsed<'a> {
    /// Not parsed here.
    None,
    /// The args will be parsed but hold invalid UTF-8: the builder repairs the event first.
    BadUtf8,
    /// The `sampleTraceId` of an `X`, `I` or `B` event.
    TraceId(TraceIdFound<'a>),
    /// The args of a `ProfileChunk`.
    Chunk(Result<ChunkIn, serde_json::Error>),
}

/// Parses the args of `ev` that the builder reads by phase or by name (`special`: see
/// [`maybe_special`]).
fn parse_known_args<'a>(
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
    } else if std::str::from_utf8(args).is_err() {
        // Args that will be parsed must be UTF-8 (see `full_event`).
        Parsed::BadUtf8
    } else if special && name == "ProfileChunk" {
        // The usual shape without serde; serde reads (and reports) anything else.
        match chunk.map(|c| *c).or_else(|| shapes::chunk_args_fast(args)) {
            Some(a) => Parsed::Chunk(Ok(ChunkIn::new(a))),
            None => Parsed::Chunk(serde_json::from_slice(args).map(ChunkIn::new)),
        }
    } else if let (true, Some(found)) = (traced, found) {
        Parsed::TraceId(found)
    } else {
        Parsed::None
    }
}

/// The fast path of [`TraceBuilder::prepare`]: a plain `X` or `I` event, or None.
fn plain(ev: &RawEvent<'_>, name: &str, ph: u8) -> Option<Plain> {
    let (pid, tid) = (ev.pid.int()?, ev.tid.int()?);
    let ts = ev.ts.num().filter(|t| t.is_finite())?;
    let dur = match ev.dur {
        Loose::Missing | Loose::Null => 0.0,
        Loose::Num(d) if d.is_finite() => d,
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
    Some(Plain { pid, tid, ts, dur, flags, trace })
}

impl Sink for TraceBuilder {
    type Prep = Prep;

    fn prepare(ev: &mut RawEvent<'_>) -> Prep {
        let chunk = ev.chunk.take();
        let ev = &*ev;
        let Loose::Str(name) = &ev.name else { return Prep::Full };
        let ph = ev.phase();
        if maybe_special(name) {
            // The one special event that is frequent and large: read its args here.
            if name == "ProfileChunk" && !matches!(ph, b'X' | b'I' | b'B' | b'E') {
                if let Parsed::Chunk(Ok(args)) = parse_known_args(ev, chunk, name, ph, true) {
                    return Prep::Chunk(Box::new((ev.envelope(), args)));
                }
            }
            return Prep::Full;
        }
        match ph {
            b'X' | b'I' => plain(ev, name, ph).map_or(Prep::Full, Prep::Plain),
            b'B' | b'E' | 0 => Prep::Full,
            _ => Prep::Nothing,
        }
    }

    fn is_inert(prep: &Prep) -> bool {
        matches!(prep, Prep::Nothing)
    }

    fn event(&mut self, prep: Prep, ctx: &EventCtx<'_>, diag: &mut Diagnostics) -> Result<(), Error> {
        match prep {
            Prep::Plain(p) => {
                let th = self.thread(p.pid, p.tid);
                self.threads[th as usize].n_entries += 1;
                let trace = match p.trace {
                    Some(key) => self.event_trace_id(key),
                    None => 0,
                };
                if p.flags & INSTANT != 0 && trace == 0 && p.dur == 0.0 {
                    return Ok(()); // see `INSTANT`: plays no part
                }
                self.threads[th as usize].entries.push(Entry { ts: p.ts, dur: p.dur, trace, flags: p.flags });
                Ok(())
            }
            Prep::Nothing => Ok(()),
            Prep::Chunk(chunk) => {
                let (ev, args) = *chunk;
                self.full_event(&ev, Parsed::Chunk(Ok(args)), ctx, diag)
            }
            Prep::Full => {
                let mut ev = ctx.parse()?;
                let chunk = ev.chunk.take();
                let parsed = match &ev.name {
                    Loose::Str(name) => parse_known_args(&ev, chunk, name, ev.phase(), maybe_special(name)),
                    _ => Parsed::None,
                };
                self.full_event(&ev, parsed, ctx, diag)
            }
        }
    }
}

impl TraceBuilder {
    /// Any event but the plain ones.
    fn full_event(
        &mut self,
        ev: &RawEvent<'_>,
        parsed: Parsed<'_>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        // Node decodes the file with replacement characters, so an event with invalid bytes in
        // args that will be parsed is read from a repaired copy, as Node would.
        let (chunk, trace) = match parsed {
            Parsed::None => (None, None),
            Parsed::Chunk(c) => (Some(c), None),
            Parsed::TraceId(t) => (None, Some(t)),
            Parsed::BadUtf8 => {
                // The scan has counted the bad bytes (an `invalid-utf8` warning each).
                let fixed = String::from_utf8_lossy(ctx.raw).into_owned();
                let ctx2 = ctx.with_raw(fixed.as_bytes());
                let (mut ev2, _) = crate::input::scan::event(fixed.as_bytes(), 0, &mut Vec::new()).map_err(|_| {
                    Error::input(Some(ctx.location()), "cannot read the event after replacing invalid UTF-8")
                })?;
                return self.event(Self::prepare(&mut ev2), &ctx2, diag);
            }
        };
        let name = match &ev.name {
            Loose::Str(s) => s.as_ref(),
            other => {
                diag.push_with(
                    WarningKind::BadName,
                    || Some(ctx.location()),
                    || {
                        format!(
                            "event has {} as its name, not a string; skipped (DevTools fails on such events)",
                            other.type_name()
                        )
                    },
                );
                return Ok(());
            }
        };
        let ph = ev.phase();
        let special = maybe_special(name);
        // Profile and ProfileChunk are read whatever their phase (the SamplesHandler does not look).
        if ph == 0 && !(special && matches!(name, "Profile" | "ProfileChunk")) {
            diag.push_with(
                WarningKind::BadPhase,
                || Some(ctx.location()),
                || {
                    format!(
                        "'{name}' has {} as its ph, not a one-letter string; ignored, as DevTools does",
                        ev.ph.type_name()
                    )
                },
            );
        }
        // Only a few names matter beyond the phase; most events skip the comparisons.
        if !special {
            if matches!(ph, b'X' | b'I' | b'B' | b'E') {
                return self.renderer_event(name, ph, ev, trace, ctx, diag);
            }
            return Ok(());
        }
        match name {
            "Profile" | "ProfileChunk" => self.samples_event(name, ev, chunk, ctx, diag)?,
            "CpuProfile" => {
                self.generic = false;
                if ph == b'X' {
                    self.samples_event(name, ev, None, ctx, diag)?;
                }
            }
            "TracingStartedInBrowser" => {
                self.generic = false;
                self.frame_event(name, ev, ctx, diag)?;
            }
            "TracingStartedInPage" | "TracingSessionIdForWorker" => self.generic = false,
            "FrameCommittedInBrowser" | "CommitLoad" => self.frame_event(name, ev, ctx, diag)?,
            "thread_name" => {
                if let (Some(pid), Some(tid), Some(a)) = (ev.pid.int(), ev.tid.int(), ev.args) {
                    let a: shapes::NameArgs = parse_args(a, ctx, "thread_name args")?;
                    if let Some(n) = a.name.str() {
                        match n {
                            "auction_worklet.CrUtilityMain" => {
                                self.worklet_utility.insert(pid);
                            }
                            "AuctionV8HelperThread" => {
                                self.worklet_helper.insert(pid);
                            }
                            _ => {}
                        }
                        // MetaHandler returns early for the GPU main thread: it never gets a name.
                        if n != "CrGpuMain" {
                            self.thread_names.insert((pid, tid), n.to_owned());
                        }
                    }
                }
            }
            "AuctionWorkletRunningInProcess" | "AuctionWorkletDoneWithProcess" => {
                if let Some(a) = ev.args {
                    let a: shapes::WorkletArgs = parse_args(a, ctx, "auction worklet args")?;
                    if let Some(pid) = a.data.obj().and_then(|d| d.pid.int()) {
                        self.worklet_events.insert(pid);
                    }
                }
            }
            _ => {}
        }
        if matches!(ph, b'X' | b'I' | b'B' | b'E') {
            self.renderer_event(name, ph, ev, trace, ctx, diag)?;
        }
        Ok(())
    }
}

fn parse_args<'a, T: serde::Deserialize<'a>>(raw: &'a [u8], ctx: &EventCtx<'_>, what: &str) -> Result<T, Error> {
    serde_json::from_slice(raw).map_err(|e| args_error(raw, ctx, what, &e))
}

/// The error for args that did not parse: where, and what serde expected.
fn args_error(raw: &[u8], ctx: &EventCtx<'_>, what: &str, e: &serde_json::Error) -> Error {
    Error::input(Some(ctx.serde_location(raw, e)), format!("{what}: {}", crate::input::reader::serde_message(e)))
}

/// The `callFrame` objects of one profile already read, by an exact encoding of their
/// members: a frame seen again (most are: the generated traces have 570,000 nodes but 243
/// frames per profile, and real ones a few nodes per frame) costs one lookup instead of
/// interning each string and then the frame. Equal encodings are equal members, which
/// [`frame_from_json`] turns into the same frame; only frames read without error are kept.
#[derive(Debug, Default)]
pub struct FrameCache {
    seen: FxHashMap<Box<[u8]>, u32>,
    key: Vec<u8>,
}

impl FrameCache {
    /// The frame of `f`, read with [`frame_from_json`] unless seen before.
    fn frame(
        &mut self,
        f: &shapes::FrameJson<'_>,
        chunk: bool,
        strings: &mut Strings,
        frames: &mut Frames,
    ) -> Option<u32> {
        self.key.clear();
        encode_frame(f, &mut self.key);
        if let Some(&k) = self.seen.get(&self.key[..]) {
            return Some(k);
        }
        let k = frames.intern(frame_from_json(f, chunk, strings)?);
        self.seen.insert(self.key.as_slice().into(), k);
        Some(k)
    }

    /// The frame whose members [`encode_frame`] wrote as `key`, decoded and read with
    /// [`frame_from_json`] unless seen before.
    fn frame_by_key(&mut self, key: &[u8], chunk: bool, strings: &mut Strings, frames: &mut Frames) -> Option<u32> {
        if let Some(&k) = self.seen.get(key) {
            return Some(k);
        }
        let k = frames.intern(frame_from_json(&decode_frame(key), chunk, strings)?);
        self.seen.insert(key.into(), k);
        Some(k)
    }
}

/// Appends the encoding of a frame's members that [`FrameCache`] keys frames by.
fn encode_frame(f: &shapes::FrameJson<'_>, out: &mut Vec<u8>) {
    for v in [&f.function_name, &f.script_id, &f.url, &f.line_number, &f.column_number] {
        encode_loose(v, out);
    }
}

/// The members [`encode_frame`] wrote, borrowing their strings from `key`.
fn decode_frame(key: &[u8]) -> shapes::FrameJson<'_> {
    let mut i = 0;
    let mut next = || decode_loose(key, &mut i);
    shapes::FrameJson {
        function_name: next(),
        script_id: next(),
        url: next(),
        line_number: next(),
        column_number: next(),
    }
}

/// The value [`encode_loose`] wrote at `*i`; moves `*i` past it.
fn decode_loose<'k>(key: &'k [u8], i: &mut usize) -> Loose<'k> {
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("eight bytes"));
    let tag = key[*i];
    *i += 1;
    match tag {
        0 => Loose::Missing,
        1 => Loose::Null,
        2 | 3 => Loose::Bool(tag == 3),
        4 => {
            *i += 8;
            Loose::Num(f64::from_bits(word(*i - 8)))
        }
        5 => {
            let len = word(*i) as usize;
            *i += 8 + len;
            let s = std::str::from_utf8(&key[*i - len..*i]).expect("the key was encoded from a str");
            Loose::Str(Cow::Borrowed(s))
        }
        6 => Loose::Object,
        _ => Loose::Array,
    }
}

/// Appends an encoding of `v` that tells every two different values apart.
fn encode_loose(v: &Loose<'_>, out: &mut Vec<u8>) {
    match v {
        Loose::Missing => out.push(0),
        Loose::Null => out.push(1),
        Loose::Bool(b) => out.push(2 + *b as u8),
        Loose::Num(n) => {
            out.push(4);
            out.extend_from_slice(&n.to_bits().to_le_bytes());
        }
        Loose::Str(s) => {
            out.push(5);
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Loose::Object => out.push(6),
        Loose::Array => out.push(7),
    }
}

/// A node from its JSON; `chunk` selects the trace-chunk normalisation of the frame. `cache`
/// holds the frames of this profile's nodes read so far.
pub fn node_from_json(
    n: &NodeJson<'_>,
    chunk: bool,
    strings: &mut Strings,
    frames: &mut Frames,
    cache: &mut FrameCache,
) -> Result<RawNode, String> {
    if chunk {
        let mut key = Vec::new();
        return NodeIn::new(n, &mut key).into_raw(&key, strings, frames, cache);
    }
    let id = n.id.int().ok_or_else(|| format!("the node id is {}, not an integer", n.id.type_name()))?;
    let frame = match &n.call_frame {
        MaybeObj::Obj(f) => cache
            .frame(f, chunk, strings, frames)
            .ok_or_else(|| format!("node {id}: a callFrame field is an object or array"))?,
        _ => frames.intern(CallFrame {
            function_name: n.function_name.scalar(strings).unwrap_or(Scalar::Undefined),
            script_id: n.script_id.scalar(strings).unwrap_or(Scalar::Undefined),
            url: n.url.scalar(strings).unwrap_or(Scalar::Undefined),
            line_number: Scalar::Num(js_minus_one(&n.line_number)),
            column_number: Scalar::Num(js_minus_one(&n.column_number)),
        }),
    };
    let children = n.children.as_ref().map(|c| c.iter().map(|v| v.int().unwrap_or(UNKNOWN_ID)).collect());
    Ok(RawNode {
        id,
        parent: n.parent.int().unwrap_or(UNKNOWN_ID),
        children,
        frame,
        hit_count_is_number: matches!(n.hit_count, Loose::Num(_)),
    })
}

/// A [`RawProfile`] from a CDP `Profiler.Profile` object.
pub fn raw_from_cpuprofile(
    json: &shapes::CpuProfileJson<'_>,
    strings: &mut Strings,
    location: Option<Location>,
) -> Result<RawProfile, Error> {
    let fail = |m: String| Error::input(location, m);
    if json.head.is_some() && json.nodes.is_none() {
        return Err(fail("the legacy .cpuprofile format (a 'head' tree instead of 'nodes') is not supported".into()));
    }
    let mut nodes = Vec::new();
    let (mut frames, mut cache) = (Frames::default(), FrameCache::default());
    for (k, n) in json.nodes.iter().flatten().enumerate() {
        nodes.push(
            node_from_json(n, false, strings, &mut frames, &mut cache).map_err(|m| fail(format!("nodes[{k}]: {m}")))?,
        );
    }
    let start_time = json
        .start_time
        .num()
        .ok_or_else(|| fail(format!("expected startTime to be a number, found {}", json.start_time.type_name())))?;
    let end_time = match &json.end_time {
        Loose::Num(n) => *n,
        other => return Err(fail(format!("expected endTime to be a number, found {}", other.type_name()))),
    };
    if let Some(d) = &json.time_deltas {
        if d.n_non_numbers > 0 {
            let k = d.values.iter().position(|v| v.is_nan()).unwrap_or(0);
            return Err(fail(format!("timeDeltas[{k}] is not a number")));
        }
    }
    Ok(RawProfile {
        start_time,
        end_time,
        nodes,
        frames,
        samples: json.samples.as_ref().map(|s| Ids::from_slice(&s.0)),
        time_deltas: json.time_deltas.as_ref().map(|d| Deltas::from_slice(&d.values)),
        trace_ids: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::shapes::FrameJson;

    fn s(v: &str) -> Loose<'_> {
        Loose::Str(Cow::Borrowed(v))
    }

    /// Frames read through the cache are the frames read without it, in both modes, for
    /// members that differ only in type, in where a string splits, or by being absent.
    #[test]
    fn frame_cache_gives_the_frames_read_without_it() {
        let frame = |f: Loose<'static>, sid: Loose<'static>, url: Loose<'static>, line: Loose<'static>| FrameJson {
            function_name: f,
            script_id: sid,
            url,
            line_number: line,
            column_number: Loose::Num(3.0),
        };
        let list = [
            frame(s("f"), Loose::Num(1.0), s("a.js"), Loose::Num(0.0)),
            frame(s("f"), s("1"), s("a.js"), Loose::Num(0.0)),
            frame(s("f"), Loose::Num(1.0), s("a.js"), Loose::Missing),
            frame(s("f"), Loose::Num(1.0), s("a.js"), Loose::Num(-0.0)),
            frame(s("fa"), Loose::Num(1.0), s(".js"), Loose::Num(0.0)),
            frame(s("f"), Loose::Num(1.0), Loose::Null, Loose::Num(0.0)),
            frame(s("f"), Loose::Num(1.0), s(""), Loose::Num(0.0)),
            frame(s("f"), Loose::Num(1.0), s("a.js"), Loose::Object),
            frame(s("f"), Loose::Num(1.0), s("a.js"), Loose::Num(0.0)),
            frame(Loose::Str(Cow::Owned("é∂".into())), Loose::Bool(true), Loose::Array, Loose::Num(0.0)),
            frame(s("f"), Loose::Bool(false), s("a.js"), Loose::Num(1e300)),
        ];
        for chunk in [true, false] {
            let (mut strings, mut frames, mut cache) = (Strings::default(), Frames::default(), FrameCache::default());
            let (mut strings2, mut frames2) = (Strings::default(), Frames::default());
            // The scan threads' way: each frame encoded, then read by its key (decoded once).
            let (mut strings3, mut frames3, mut cache3) =
                (Strings::default(), Frames::default(), FrameCache::default());
            // Twice over: the second round is read from the cache.
            for f in list.iter().chain(&list) {
                let got = cache.frame(f, chunk, &mut strings, &mut frames);
                let want = frame_from_json(f, chunk, &mut strings2).map(|x| frames2.intern(x));
                assert_eq!(got, want, "chunk {chunk}: {f:?}");
                let mut key = Vec::new();
                encode_frame(f, &mut key);
                assert_eq!(format!("{:?}", decode_frame(&key)), format!("{f:?}"));
                let by_key = cache3.frame_by_key(&key, chunk, &mut strings3, &mut frames3);
                assert_eq!(by_key, want, "chunk {chunk}, by key: {f:?}");
            }
            // Eleven members: one repeats the first, two fail to read (an object, an array) and
            // are not kept.
            assert_eq!(cache.seen.len(), 8);
            assert_eq!(cache3.seen.len(), 8);
            assert_eq!(format!("{frames:?}"), format!("{frames3:?}"));
        }
    }
}
