//! From trace events to per-thread work: profiles, entries and the process filter.
//!
//! [`TraceBuilder`] sees every event once, in file order, and keeps only what the estimator
//! needs, compactly: per thread, one packed [`Entry`] (see [`super::entries`]) per complete or
//! begin event and per instant that carries a `sampleTraceId`; per profile, its nodes, frames,
//! samples and deltas (see [`super::column`]). It does the work of DevTools' SamplesHandler
//! (profile assembly keyed by `(pid, id)`), RendererHandler (entries, `B`/`E` pairing on
//! one shared stack, the process filter), and the parts of MetaHandler and
//! AuctionWorkletsHandler that the filter reads.
//!
//! Its parts, one file each: `samples` (SamplesHandler: profiles and chunks), `renderer`
//! (RendererHandler: entries, `B`/`E` pairing, the process filter), `prepare` (what the scan
//! threads do to each event before it is handed over in file order).

mod prepare;
mod renderer;
mod samples;
pub(crate) mod scripts;
pub(crate) mod timings;

use rustc_hash::{FxHashMap, FxHashSet};

use super::entries::PackedEntries;
use super::nodes::ParsedNodes;
use super::profile::{Limits, ProfileModel, RawProfile};
use super::{entry_order, report_model, sort_entries, EngineVersion, Entry, ThreadWork};
use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::exec::Exec;
use crate::input::leaf::Leaf;
use crate::input::scan::RawEvent;
use crate::input::shapes::{self, MapKey};
use crate::input::sink::{EventCtx, Sink};
use crate::js::Scalar;
use crate::strings::{StrId, Strings};
use prepare::*;
use renderer::*;
use samples::*;

#[cfg(feature = "internals")]
pub use prepare::ChunkIn;

/// The `Map.set` order of DevTools, for the few places where it decides something.
#[derive(Debug, Default)]
struct ThreadEvents {
    entries: PackedEntries,
    /// Each entry's name and whether it is a top-level task, when names are kept.
    names: Vec<(StrId, bool)>,
    /// Entries DevTools would hold, including the instants jscalls does not keep.
    n_entries: u64,
}

/// What [`TraceBuilder::finish`] hands to the estimator.
#[derive(Debug)]
pub(crate) struct TraceModel {
    /// All strings.
    pub strings: Strings,
    /// One per profile DevTools keeps, sorted by (pid, tid).
    pub threads: Vec<ThreadWork>,
    /// True when the metadata says the trace is a saved `.cpuprofile` (CPU-profile mode).
    pub cpu_profile_origin: bool,
    /// MetaHandler's `traceBounds` (µs): `(min, max)`.
    pub bounds: (f64, f64),
    /// Whether DevTools reads the trace as a browser's recording, not a generic trace (an event
    /// of its MetaHandler's list: `TracingStartedInBrowser`, `CpuProfile`, …).
    pub browser: bool,
    /// The scripts and maps the trace carries (when kept).
    pub embedded: scripts::Embedded,
    /// Its marks, measures, interactions and the complete events of the wanted names.
    pub timings: crate::ranges::Timings,
}

/// Consumes trace events (a [`Sink`]) and builds the [`TraceModel`].
#[derive(Debug)]
pub(crate) struct TraceBuilder {
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
    /// A `.cpuprofile`'s `nodes`, read where they lay ([`Sink::profile_nodes`]).
    profile_nodes: Option<Result<ParsedNodes, Error>>,
    /// MetaHandler's trace bounds so far (µs): the least start and the greatest end of the
    /// `B`, `E`, `X` and `I` events whose ts is not 0 and whose name does not end in `::UMA`.
    bounds: (f64, f64),
    /// The ts of the last TracingStartedInBrowser (−1: none), which sets the start instead.
    started_at: f64,
    /// Keep each entry's name ([`crate::Config::keep_event_names`]).
    pub(crate) keep_names: bool,
    /// Keep the profiles' line data ([`crate::Config::keep_lines`]).
    pub(crate) keep_lines: bool,
    /// The scripts' rundown events, when kept ([`crate::Config::keep_scripts`]).
    pub(crate) rundown: Option<scripts::Rundown>,
    /// User timings, interactions and the complete events ranges are picked from.
    pub(crate) timings: timings::TimingsBuilder,
    /// The names of the piece of the scan being delivered ([`Sink::piece_names`]).
    piece: PieceIds,
}

/// The distinct names of one piece of the scan: where each lies, and its id once read.
#[derive(Debug, Default)]
struct PieceIds {
    spans: Vec<crate::input::sink::NameSpan>,
    ids: Vec<PieceName>,
}

/// A piece's name, as far as it was read.
#[derive(Debug, Clone, Copy)]
enum PieceName {
    /// Not met yet in the piece's events.
    Unread,
    /// Its id.
    Id(StrId),
    /// Not UTF-8 (or not in the bytes held): its events read their names themselves.
    Unusable,
}

impl TraceBuilder {
    /// What a `.cpuprofile` is made of beyond its members' bytes: the strings, and its `nodes`
    /// when they were read where they lay.
    pub(crate) fn into_profile_parts(self) -> (Strings, Option<Result<ParsedNodes, Error>>) {
        (self.strings, self.profile_nodes)
    }

    /// MetaHandler's bounds: the event counts when its ts is not 0 and its name does not end
    /// in `::UMA` (reported as a page unloads, they would stretch the trace).
    /// `end` is `ts + dur`, as JavaScript computes it. Only DevTools' tree of all events reads
    /// them, and it needs the names kept: otherwise they are not computed.
    #[inline]
    pub(crate) fn bound(&mut self, name: &str, ts: f64, end: f64) {
        if self.keep_names && ts != 0.0 && !name.ends_with("::UMA") {
            self.bounds.0 = js_min(self.bounds.0, ts);
            self.bounds.1 = js_max(self.bounds.1, end);
        }
    }

    /// Takes the names of the piece of the scan whose events come next.
    pub(crate) fn start_piece(&mut self, names: &[crate::input::sink::NameSpan]) {
        self.piece.spans.clear();
        self.piece.spans.extend_from_slice(names);
        self.piece.ids.clear();
        self.piece.ids.resize(names.len(), PieceName::Unread);
    }

    /// The id of name `name_id` of the piece being delivered (see [`RawEvent::name_id`]),
    /// read on its first use (so names are interned in the order of their first events, as
    /// event by event); None when the event has none or it is not UTF-8.
    pub(crate) fn piece_name(&mut self, name_id: u32, ctx: &EventCtx<'_>) -> Option<StrId> {
        let k = (name_id as usize).checked_sub(1)?;
        let seen = self.piece.ids.get_mut(k)?;
        if let PieceName::Unread = seen {
            let (at, len) = self.piece.spans[k];
            let name = ctx.input_at(at, len).and_then(|b| std::str::from_utf8(b).ok());
            *seen = name.map_or(PieceName::Unusable, |n| PieceName::Id(self.strings.intern(n)));
        }
        match *seen {
            PieceName::Id(id) => Some(id),
            _ => None,
        }
    }

    /// Records the name of the entry just pushed on thread `th`, when names are kept.
    pub(crate) fn name_entry(&mut self, th: u32, name: &str, top: bool) {
        if self.keep_names {
            let id = self.strings.intern(name);
            self.threads[th as usize].names.push((id, top));
        }
    }

    /// A builder for one input.
    pub(crate) fn new(limits: Limits, version: EngineVersion) -> TraceBuilder {
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
            profile_nodes: None,
            bounds: (f64::INFINITY, f64::NEG_INFINITY),
            started_at: -1.0,
            keep_names: false,
            rundown: None,
            timings: Default::default(),
            piece: PieceIds::default(),
            keep_lines: false,
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

    /// Builds the model once all events are in (the handlers' `finalize`). The profile models
    /// and the threads' events are independent jobs, run by `exec`.
    pub(crate) fn finish(
        mut self,
        metadata: Option<&[u8]>,
        diag: &mut Diagnostics,
        exec: &impl Exec,
    ) -> Result<TraceModel, Error> {
        let cpu_profile_origin = cpu_profile_origin(metadata);
        self.warn_unclosed(diag);
        let embedded = match self.rundown.take() {
            Some(r) => {
                if r.unreadable > 0 {
                    diag.push(
                        WarningKind::Other,
                        None,
                        format!(
                            "{} script rundown event(s) whose args.data is not an object; skipped (no script from them)",
                            r.unreadable
                        ),
                    );
                }
                r.finish(metadata)
            }
            None => scripts::Embedded::default(),
        };
        let chosen = self.choose_profiles(cpu_profile_origin, diag);
        let kept = self.kept_processes();
        self.free_unused_threads(&chosen);
        let strings = std::mem::take(&mut self.strings);
        let (models, events) = self.build_threads(&chosen, &strings, exec);
        let mut threads = Vec::with_capacity(chosen.len());
        for (profile_order, (((pid, tid, pick), model), Events { entries, names, trace_values })) in
            chosen.into_iter().zip(models).zip(events).enumerate()
        {
            let model = model.expect("a model per thread")?;
            let p = &self.profiles[pick];
            report_model(&model, &format!("thread {pid}:{tid}"), p.location, diag);
            let n_entries = self.thread_index.get(&(pid, tid)).map_or(0, |&t| self.threads[t as usize].n_entries);
            let skipped = self.skipped(pid, tid, &kept, cpu_profile_origin, n_entries, diag);
            let thread_name = if skipped.is_none() && !cpu_profile_origin {
                self.thread_names.get(&(pid, tid)).cloned()
            } else {
                None
            };
            threads.push(ThreadWork {
                pid,
                tid,
                profile_id: p.id.to_json(),
                profile_order: profile_order as u32,
                thread_name,
                profile_name: None,
                model,
                entries,
                names,
                trace_values,
                skipped,
            });
        }
        threads.sort_by_key(|t| (t.pid, t.tid));
        let mut bounds = self.bounds;
        if self.started_at >= 0.0 {
            bounds.0 = self.started_at;
        }
        let timings = std::mem::take(&mut self.timings);
        if timings.unreadable > 0 {
            diag.push(
                WarningKind::Other,
                None,
                format!(
                    "{} user-timing or interaction event(s) without a numeric pid, tid or ts, or whose id2 or args cannot be read; skipped",
                    timings.unreadable
                ),
            );
        }
        let timings = timings.finish(|pid| kept.contains(&pid));
        Ok(TraceModel { strings, threads, cpu_profile_origin, bounds, browser: !self.generic, embedded, timings })
    }

    /// Each `B` event never closed is a warning.
    fn warn_unclosed(&self, diag: &mut Diagnostics) {
        let unclosed = self.begins.iter().filter(|b| b.thread != u32::MAX).count();
        if unclosed > 0 {
            diag.push(
                WarningKind::UnclosedBegin,
                None,
                format!("{unclosed} 'B' event(s) never closed; they keep duration 0, as in DevTools"),
            );
        }
    }

    /// SamplesHandler.finalize: one profile per thread, by source priority, as
    /// (pid, tid, index in `profiles`) in DevTools' order.
    fn choose_profiles(&self, cpu_profile_origin: bool, diag: &mut Diagnostics) -> Vec<(i64, i64, usize)> {
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

        chosen
    }

    /// RendererHandler.finalize: the processes the filter keeps.
    fn kept_processes(&self) -> FxHashSet<i64> {
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

        kept
    }

    /// Entries of threads without a chosen profile are never used: freed before the models
    /// are built (the point where memory peaks).
    fn free_unused_threads(&mut self, chosen: &[(i64, i64, usize)]) {
        let used: FxHashSet<u32> =
            chosen.iter().filter_map(|&(pid, tid, _)| self.thread_index.get(&(pid, tid)).copied()).collect();
        for (i, t) in self.threads.iter_mut().enumerate() {
            if !used.contains(&(i as u32)) {
                t.entries = PackedEntries::default();
                t.names = Vec::new();
            }
        }
    }

    /// Each chosen thread's profile model and events, built side by side: two jobs per
    /// thread, its profile's model, and its events (decoded, sorted, their trace ids looked up
    /// in the profile's `trace_ids`). Each profile's data moves into its jobs.
    fn build_threads(
        &mut self,
        chosen: &[(i64, i64, usize)],
        strings: &Strings,
        exec: &impl Exec,
    ) -> (Vec<Option<Result<ProfileModel, Error>>>, Vec<Events>) {
        // Biggest first, for the balance.
        let mut jobs: Vec<(usize, Job)> = Vec::with_capacity(2 * chosen.len());
        for (slot, &(pid, tid, pick)) in chosen.iter().enumerate() {
            let p = &mut self.profiles[pick];
            let what = format!("profile {} of thread {pid}:{tid}", p.id.to_json());
            let mut raw = std::mem::take(&mut p.raw);
            let ids = raw.trace_ids.take();
            jobs.push((slot, Job::Model(Box::new(raw), what, p.location)));
            let (entries, names) = match self.thread_index.get(&(pid, tid)) {
                Some(&t) => {
                    let t = &mut self.threads[t as usize];
                    (std::mem::take(&mut t.entries), std::mem::take(&mut t.names))
                }
                None => (PackedEntries::default(), Vec::new()),
            };
            jobs.push((slot, Job::Entries(entries, names, ids)));
        }
        jobs.sort_by_key(|(_, j)| std::cmp::Reverse(j.size()));
        let (limits, keys) = (self.limits, &self.trace_keys);
        let done = exec.map(jobs, |(slot, job)| {
            let d = match job {
                Job::Model(raw, what, location) => {
                    Done::Model(Box::new(ProfileModel::new(*raw, strings, limits, &what, Some(location))))
                }
                Job::Entries(log, names, ids) => {
                    let mut entries = log.into_vec();
                    let names = if names.len() == entries.len() {
                        // Sorted with the entries (stable, as they are).
                        let mut both: Vec<(Entry, (StrId, bool))> = entries.into_iter().zip(names).collect();
                        both.sort_by(|a, b| entry_order(&a.0, &b.0));
                        let (e, n) = both.into_iter().unzip();
                        entries = e;
                        n
                    } else {
                        sort_entries(&mut entries);
                        Vec::new()
                    };
                    let trace_values = trace_values(&entries, ids.as_ref(), keys);
                    Done::Events(Events { entries, names, trace_values })
                }
            };
            (slot, d)
        });
        let mut models: Vec<Option<Result<ProfileModel, Error>>> = (0..chosen.len()).map(|_| None).collect();
        let mut events: Vec<Events> = (0..chosen.len()).map(|_| Events::default()).collect();
        for (slot, d) in done {
            match d {
                Done::Model(m) => models[slot] = Some(*m),
                Done::Events(e) => events[slot] = e,
            }
        }
        (models, events)
    }

    /// Why the thread gets no calls, when DevTools computes none for it.
    fn skipped(
        &self,
        pid: i64,
        tid: i64,
        kept: &FxHashSet<i64>,
        cpu_profile_origin: bool,
        n_entries: u64,
        diag: &mut Diagnostics,
    ) -> Option<&'static str> {
        // A saved .cpuprofile (CPU-profile mode) takes its calls from the SamplesHandler: the
        // RendererHandler's filters do not apply.
        if cpu_profile_origin {
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
                    format!(
                        "process {pid} has no valid frame URL; DevTools drops it, so thread {pid}:{tid} gets no calls"
                    ),
                );
            }
            Some("process dropped by RendererHandler (no frame URL / not a renderer)")
        } else if n_entries == 0 && self.version == EngineVersion::V0_0_65 {
            diag.push(
                WarningKind::ThreadWithoutEvents,
                None,
                format!("thread {pid}:{tid} has samples but no trace events; DevTools 0.0.65 computes no calls for it"),
            );
            Some("thread has no trace entries in RendererHandler")
        } else {
            None
        }
    }

    fn is_worklet(&self, pid: i64) -> bool {
        self.worklet_utility.contains(&pid) && self.worklet_helper.contains(&pid) && self.worklet_events.contains(&pid)
    }
}

/// A job of [`TraceBuilder::finish`]: a thread's profile model or its events.
enum Job {
    Model(Box<RawProfile>, String, Location),
    Entries(PackedEntries, Vec<(StrId, bool)>, Option<FxHashMap<u64, Scalar>>),
}

impl Job {
    /// About how long the job takes, to start the biggest first.
    fn size(&self) -> usize {
        match self {
            Job::Model(raw, ..) => raw.samples.as_ref().map_or(0, |s| s.len()) + raw.nodes.len(),
            Job::Entries(log, _, ids) => log.len() + ids.as_ref().map_or(0, |m| m.len()),
        }
    }
}

/// What a [`Job`] made.
enum Done {
    Model(Box<Result<ProfileModel, Error>>),
    Events(Events),
}

/// A thread's events, ready for the estimator (see [`ThreadWork`]).
#[derive(Default)]
struct Events {
    entries: Vec<Entry>,
    names: Vec<(StrId, bool)>,
    trace_values: Vec<(u32, Scalar)>,
}

/// Whether the metadata says the trace is a saved `.cpuprofile` (CPU-profile mode).
fn cpu_profile_origin(metadata: Option<&[u8]>) -> bool {
    match metadata {
        Some(m) => match std::str::from_utf8(m).ok().and_then(|s| shapes::parse::<shapes::Metadata>(s).ok()) {
            Some(md) => md.data_origin.str() == Some("CPUProfile"),
            None => false,
        },
        None => false,
    }
}

/// The values `ids` (a profile's `trace_ids`) give the events' trace ids: (trace index, value).
/// Looked up here, beside the model being built, rather than by the estimator, where they
/// would run on the one thread still working on a page's main thread.
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

impl TraceBuilder {
    /// Any event but the plain ones. (Longer than most: it follows the handlers' steps for one
    /// event in their order, each step reading what the one before decided.)
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
            Parsed::Chunk(c) => (Some(*c), None),
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
            Leaf::Str(s) => s.as_ref(),
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
        if matches!(ph, b'X' | b'I' | b'B' | b'E') {
            if let Some(ts) = ev.ts.num() {
                // `ts + (dur ?? 0)` with JavaScript's `+`: a string dur is concatenated.
                let end = match &ev.dur {
                    Leaf::Num(d) => ts + d,
                    Leaf::Missing | Leaf::Null => ts,
                    Leaf::Bool(b) => ts + f64::from(u8::from(*b)),
                    Leaf::Str(d) => crate::js::string_to_number(&format!("{}{d}", crate::js::number_to_string(ts))),
                    _ => f64::NAN,
                };
                self.bound(name, ts, end);
            }
        }
        if timings::is_timing(name, ph, &ev.cat) {
            self.timings.event(ev, ctx.raw, ctx.index);
        }
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
                if let Some(ts) = ev.ts.num() {
                    self.started_at = ts;
                }
                self.frame_event(name, ev, ctx, diag)?;
            }
            "TracingStartedInPage" | "TracingSessionIdForWorker" => self.generic = false,
            "ScriptCatchup" | "LargeScriptCatchup" => {
                if let (Some(r), Some(pid), Some(tid), Some(args)) =
                    (self.rundown.as_mut(), ev.pid.int(), ev.tid.int(), ev.args)
                {
                    r.event(name, ev.cat.str(), pid, tid, args);
                }
            }
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

/// `Math.min`: a NaN makes the result NaN.
fn js_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// `Math.max`: a NaN makes the result NaN.
fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}
