//! # jscalls
//!
//! Estimates when JavaScript calls started and ended from V8 CPU-profile samples, exactly as
//! Chrome DevTools does (its trace engine's `SamplesIntegrator`), and writes the result as the
//! calls JSON or as a timeline trace.
//!
//! **In:** a V8 `.cpuprofile` (`node --cpu-prof`, CDP `Profiler.stop`) or a Chrome / Node trace
//! (a JSON array of events or `{"traceEvents": [...]}`, gzip or not) with `Profile` /
//! `ProfileChunk` events. **Out:** per profiled thread, the estimated calls (start, duration,
//! self time, depth, frame), field for field what DevTools computes.
//!
//! ```
//! use jscalls::{analyze, Config, Source};
//! let profile = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},
//!   {"id":2,"parent":1,"callFrame":{"functionName":"work","scriptId":"1","url":"a.js","lineNumber":3,"columnNumber":0}}],
//!   "samples":[2,2,1],"timeDeltas":[100,100,100],"startTime":0,"endTime":300}"#;
//! let a = analyze(&Source::Memory(profile.as_bytes().into()), &Config::default()).unwrap();
//! let thread = a.threads().next().unwrap();
//! let call = thread.call(0);
//! assert_eq!((call.frame().function_name(), call.ts(), call.dur()), ("work".into(), 100.0, 200.0));
//! assert_eq!(call.self_time(), Some(200.0));
//! ```
//!
//! [`analyze`] keeps every thread's calls; [`assemble`] reads the input and leaves the estimate
//! to [`Assembled`]'s writers, which estimate one thread at a time as they write it.

#![warn(missing_docs)]
#![warn(unreachable_pub)]

pub mod diff;
mod error;
mod estimate;
mod exec;
mod input;
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
mod js;
pub mod lines;
mod model;
mod output;
#[cfg_attr(not(feature = "cli"), allow(unreachable_pub))]
mod parallel;
pub mod ranges;
mod schedule;
pub mod sourcemap;
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
mod strings;
mod sys;
mod timeline;
pub mod tree;
mod view;

/// The pool of worker threads, for the command's own use (`jscalls export` writes threads on
/// it): not part of the API, and absent without the `cli` feature, as a library user builds.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod threads {
    pub use crate::parallel::{map, ordered};
}

pub use error::{Diagnostics, Error, Location, Warning, WarningKind};
pub use estimate::bounds::{Estimator, Sampler};
pub use input::{InputKind, Source};
pub use model::gecko::Symbols;
pub use model::profile::Limits;
pub use model::{CpuProfileMode, EngineVersion};
pub use timeline::TimelineStart;
pub use view::{Call, Frame, Thread};

use std::io::Write;
use std::time::{Duration, Instant};

use estimate::{AllThreads, Estimates, IntegratorConfig, Mode};
use input::document::{read_document, Document};
use model::trace::TraceBuilder;
use model::ThreadWork;
use schedule::Lazy;

/// Options. The defaults are what current Chrome DevTools does.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// How a `.cpuprofile` is estimated. Default: [`CpuProfileMode::Integrator`].
    pub cpuprofile_mode: CpuProfileMode,
    /// Keep `native V8Runtime` frames (DevTools' `showAllEvents`). Default: false.
    pub show_all_events: bool,
    /// Which DevTools to follow. Default: [`EngineVersion::Latest`], what current Chrome shows.
    pub engine: EngineVersion,
    /// Depth and size guards. Default: [`Limits::default`].
    pub limits: Limits,
    /// The largest single JSON value (one event) accepted, in bytes. Default: 1 GiB.
    pub max_event_bytes: usize,
    /// Threads that share the work: reading, profile models, estimates, rendering. Default: the
    /// number of CPUs (at most 8); 1 runs it all on the calling thread. The workers come from
    /// one pool per process, one per CPU but one (at most 7: the calling thread is the
    /// eighth), so more than that adds none.
    pub threads: usize,
    /// Map a plain input file instead of reading it. Default: true. A mapped file that another
    /// program cuts short while it is read stops the process (SIGBUS), as it does any program
    /// that maps its input: turn this off for a file that may still be rewritten.
    pub mmap: bool,
    /// Set to the bytes of the event array read so far (decompressed), as reading advances: for
    /// a progress display on another thread. Default: none.
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Keep each trace event's name with the thread's events, for DevTools' tree of every event
    /// ([`Assembled::write_devtools_tree`]). Default: false (names cost a second read of each
    /// plain event and 8 bytes an event).
    pub keep_event_names: bool,
    /// Keep the samples' lines and the nodes' `positionTicks` for [`Assembled::line_times`].
    /// Default: false (a trace's `lines` cost 4 bytes a sample, and their reading).
    pub keep_lines: bool,
    /// Keep each thread's samples once its calls are made, for what reads them then: trees and
    /// exports weighed by samples ([`tree::Stacks::from_samples`] and its kin). Default: true;
    /// false lets them go (8 bytes a sample; only the count is left), and their readers then
    /// see none. (Kept whatever this says with [`Config::keep_lines`].)
    pub keep_samples: bool,
    /// Keep what a trace says of its scripts (the `v8-source-rundown` events: URLs, source map
    /// URLs, text) and the maps in its `metadata.sourceMaps`, for
    /// [`Assembled::apply_source_maps`]. Default: true (costs the scripts' text in memory, when
    /// the trace carries it).
    pub keep_scripts: bool,
    /// Symbols of the libraries a Firefox profile's native frames are in, by library name (as
    /// the profile's `libs` name it). Default: none (such frames stay `lib+0xOFFSET`).
    pub symbols: std::collections::BTreeMap<String, std::sync::Arc<Symbols>>,
    /// Which estimate calls carry. Default: [`Estimator::DevTools`].
    pub estimator: Estimator,
    /// Give each call the interval its true start and end lie in ([`Call::bounds`]). Default:
    /// false.
    pub bounds: bool,
    /// Keep the complete trace events with these names, for [`ranges::Query`]s that pick one
    /// ([`ranges::Timings::devtools_candidates`]). Default: none (marks, measures and
    /// interactions are always kept).
    pub range_event_names: Vec<String>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            cpuprofile_mode: CpuProfileMode::Integrator,
            show_all_events: false,
            engine: EngineVersion::Latest,
            limits: Limits::default(),
            max_event_bytes: 1 << 30,
            threads: std::thread::available_parallelism().map(|n| n.get().min(8)).unwrap_or(1),
            mmap: true,
            progress: None,
            keep_event_names: false,
            keep_lines: false,
            keep_samples: true,
            keep_scripts: true,
            symbols: std::collections::BTreeMap::new(),
            estimator: Estimator::DevTools,
            range_event_names: Vec::new(),
            bounds: false,
        }
    }
}

impl Config {
    /// How the input is read.
    fn window_options(&self) -> input::source::WindowOptions {
        input::source::WindowOptions { max_event_bytes: self.max_event_bytes, mmap: self.mmap }
    }

    /// What reading the input into the model takes from the options.
    fn read_options(&self) -> model::ReadOptions<'_> {
        model::ReadOptions {
            cpuprofile_mode: self.cpuprofile_mode,
            limits: self.limits,
            symbols: &self.symbols,
            keep_lines: self.keep_lines,
        }
    }

    fn integrator(&self) -> IntegratorConfig {
        IntegratorConfig {
            show_all_events: self.show_all_events,
            version: self.engine,
            cut: self.threads > 1,
            estimator: self.estimator,
            bounds: self.bounds,
            release_samples: !(self.keep_samples || self.keep_lines),
        }
    }
}

/// The result of [`analyze`]: every profiled thread's calls.
#[derive(Debug)]
pub struct Analysis {
    pub(crate) all: AllThreads,
    cfg: Config,
    diagnostics: Diagnostics,
    kind: InputKind,
    n_events: u64,
    /// The trace's bounds (DevTools' MetaHandler), µs.
    bounds: (f64, f64),
    /// See [`Assembled::timeline_samples`].
    timeline_samples: bool,
    /// The trace's marks, measures and interactions ([`Assembled::timings`]).
    timings: ranges::Timings,
}

impl Analysis {
    /// The warnings about the input, counted by kind.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// What the input was.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// The number of trace events read (0 for a profile).
    pub fn n_events(&self) -> u64 {
        self.n_events
    }

    /// One entry per CPU profile DevTools keeps, sorted by (pid, tid).
    pub fn threads(&self) -> impl ExactSizeIterator<Item = Thread<'_>> {
        self.all.threads.iter().map(|t| Thread::new(t, &self.all.strings))
    }

    /// The number of calls of every thread.
    pub fn n_calls(&self) -> usize {
        self.all.n_calls()
    }

    /// Writes the calls JSON (the DevTools oracle's format and order); `input_label` is the
    /// input's name for its header.
    pub fn write_calls(&self, out: &mut dyn Write, input_label: &str) -> Result<(), Error> {
        self.write_calls_of(out, input_label, None)
    }

    /// [`Analysis::write_calls`] of the calls that overlap a selected time range (whole, with
    /// their own times), or of every call with None; the document then gives the range.
    pub fn write_calls_of(
        &self,
        out: &mut dyn Write,
        input_label: &str,
        range: Option<&tree::Selection>,
    ) -> Result<(), Error> {
        let (engine, threads) = (self.cfg.engine.label(), self.cfg.threads);
        output::calls::write_calls_from(out, &self.all, input_label, engine, threads, range)
            .map_err(|e| Error::io("cannot write the calls", e))
    }

    /// Writes DevTools' own Call tree and Bottom-up of each thread, as
    /// [`Assembled::write_devtools_tree`] does (the set of all events needs
    /// [`Config::keep_event_names`]).
    pub fn write_devtools_tree(&self, out: &mut dyn Write, input_label: &str) -> Result<(), Error> {
        self.write_devtools_tree_of(out, input_label, None)
    }

    /// [`Analysis::write_devtools_tree`] over a selected time range (DevTools' trees of a range
    /// selected in the Performance panel), or the whole trace with None.
    pub fn write_devtools_tree_of(
        &self,
        out: &mut dyn Write,
        input_label: &str,
        range: Option<&tree::Selection>,
    ) -> Result<(), Error> {
        names_kept(self.kind, &self.cfg)?;
        let (engine, threads) = (self.cfg.engine.label(), self.cfg.threads);
        tree::devtools::write(out, &self.all, self.bounds, range, input_label, engine, threads)
            .map_err(|e| Error::io("cannot write the tree", e))
    }

    /// The trace's bounds (DevTools' MetaHandler): its first and last event's times, µs.
    pub fn trace_bounds(&self) -> (f64, f64) {
        self.bounds
    }

    /// The trace's marks, measures and interactions ([`Assembled::timings`]).
    pub fn timings(&self) -> &ranges::Timings {
        &self.timings
    }

    /// Writes the timeline: `source`'s events (read again) and each thread's calls on a thread
    /// of their own. `source` must be the input analysed, and readable twice.
    pub fn write_timeline(&self, out: &mut dyn Write, source: &Source) -> Result<(), Error> {
        timeline::write_timeline(
            out,
            source,
            &self.all,
            self.cfg.window_options(),
            self.bounds,
            self.timeline_samples,
            self.cfg.threads,
        )
    }
}

/// A trace's tree of all events needs their names, which are kept only on request.
fn names_kept(kind: InputKind, cfg: &Config) -> Result<(), Error> {
    if kind == InputKind::Trace && !cfg.keep_event_names {
        let why = "DevTools' tree of all events needs the events' names: set Config::keep_event_names";
        return Err(Error::io("cannot write the tree", std::io::Error::new(std::io::ErrorKind::InvalidInput, why)));
    }
    Ok(())
}

/// Reads `source` and estimates its calls.
pub fn analyze(source: &Source, cfg: &Config) -> Result<Analysis, Error> {
    let (diagnostics, assembled) = assemble(source, cfg)?;
    let (kind, n_events, bounds) = (assembled.kind, assembled.n_events, assembled.bounds);
    let timeline_samples = assembled.timeline_samples();
    let threads = schedule::estimate_all(assembled.threads, assembled.mode, cfg.integrator(), cfg.threads);
    let all = AllThreads { mode: assembled.mode, strings: assembled.strings, threads };
    let timings = assembled.timings;
    Ok(Analysis { all, cfg: cfg.clone(), diagnostics, kind, n_events, bounds, timeline_samples, timings })
}

/// The input read and assembled (profiles and each thread's events), ready to estimate: its
/// writers estimate one thread at a time as they write it, so that memory holds one thread's
/// calls instead of all of them.
#[derive(Debug)]
pub struct Assembled {
    kind: InputKind,
    n_events: u64,
    threads: Vec<ThreadWork>,
    mode: Mode,
    strings: strings::Strings,
    cfg: Config,
    stages: Vec<(&'static str, Duration)>,
    /// MetaHandler's trace bounds, µs.
    bounds: (f64, f64),
    /// A trace DevTools reads as a browser's recording.
    browser: bool,
    /// The scripts and maps the trace carries.
    embedded: sourcemap::Embedded,
    /// The original sources' text the applied maps carry (when the loader kept them).
    map_sources: std::collections::BTreeMap<String, std::sync::Arc<str>>,
    /// The trace's marks, measures and interactions.
    timings: ranges::Timings,
}

impl Assembled {
    /// What the input was.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// Trace events read (0 for a `.cpuprofile`).
    pub fn n_events(&self) -> u64 {
        self.n_events
    }

    /// Time per line of every profile, as DevTools' Sources panel has it: no estimate needed.
    /// Empty unless the input was read with [`Config::keep_lines`].
    pub fn line_times(&self) -> lines::LineTimes {
        self.line_times_of(false, false)
    }

    /// [`Assembled::line_times`], at the original places source maps gave the lines with
    /// `original` (see [`Assembled::original_line_times`]), by line and column with
    /// `by_column` (the column each sample recorded, 1-based; 0 where it recorded none).
    pub fn line_times_of(&self, original: bool, by_column: bool) -> lines::LineTimes {
        lines::LineTimes::of(&self.threads, &self.strings, original, by_column, None)
    }

    /// [`Assembled::line_times_of`] within a window (µs): each sample's time is its part of
    /// the window. A profile with only `positionTicks` (no sample times) has no line inside a
    /// window: its rows are empty and [`lines::ProfileLines::path`] says why.
    pub fn line_times_in(&self, original: bool, by_column: bool, window: (f64, f64)) -> lines::LineTimes {
        lines::LineTimes::of(&self.threads, &self.strings, original, by_column, Some(window))
    }

    /// [`Assembled::line_times`] with each line at the original place the source maps applied
    /// ([`Assembled::apply_source_maps`]) give it, keyed by the original file's URL; the lines
    /// no map covers stay on their script. The same as `line_times` without maps applied.
    pub fn original_line_times(&self) -> lines::LineTimes {
        self.line_times_of(true, false)
    }

    /// Every distinct call frame of every profile's nodes, with the process and thread of the
    /// profile it was last seen in (in DevTools' order of profiles): what source maps apply to.
    fn frames(&self) -> Vec<(sourcemap::FrameKey, sourcemap::FrameAt)> {
        let mut order: Vec<&ThreadWork> = self.threads.iter().collect();
        order.sort_by_key(|t| t.profile_order);
        let mut out = Vec::new();
        for t in order {
            let at = sourcemap::FrameAt { pid: t.pid, tid: t.tid };
            out.extend(t.model.frames.iter().map(|f| (Frame::new(f, &self.strings).key(), at)));
        }
        out
    }

    /// What DevTools shows for every frame of every profile once the source maps `loader`
    /// finds apply (each distinct frame's name and original place, the scripts and their
    /// maps, the maps that could not be used), without changing the input.
    pub fn resolve_source_maps(&self, loader: &dyn sourcemap::Loader) -> sourcemap::Resolution {
        sourcemap::resolve(&self.frames(), &self.embedded, loader, self.cfg.threads, self.kind == InputKind::Gecko)
    }

    /// The text of the source or script at `url`, when the input carries it: an original
    /// source's from its map's `sourcesContent` (maps applied by a loader that keeps sources,
    /// [`sourcemap::Loader::keeps_sources`]), else a script's from the trace
    /// ([`sourcemap::Embedded::script_texts`]).
    pub fn source_text(&self, url: &str) -> Option<&str> {
        match self.map_sources.get(url) {
            Some(text) => Some(text),
            None => self.embedded.script_texts().find(|(u, _)| *u == url).map(|(_, t)| t),
        }
    }

    /// Every (URL, text) [`Assembled::source_text`] knows: the maps' sources, then the
    /// trace's scripts.
    pub fn source_texts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map_sources.iter().map(|(u, t)| (u.as_str(), &**t)).chain(self.embedded.script_texts())
    }

    /// The trace's marks, measures, `console.time` spans and interactions, and the complete
    /// events of [`Config::range_event_names`]: what [`ranges::Query::resolve`] picks from.
    pub fn timings(&self) -> &ranges::Timings {
        &self.timings
    }

    /// What the trace says of its scripts and carries of their maps (read with
    /// [`Config::keep_scripts`]); [`sourcemap::Embedded::has_maps`] says whether
    /// [`Assembled::apply_source_maps`] has anything to apply without maps from the user.
    pub fn embedded(&self) -> &sourcemap::Embedded {
        &self.embedded
    }

    /// Applies source maps to every frame of every profile, as DevTools does (see
    /// [`Assembled::resolve_source_maps`]): from then on calls, trees and exports show each function under
    /// its original name and at its original place, and the calls' JSON carries both. With
    /// line data ([`Config::keep_lines`]), each recorded line moves to its original place too,
    /// as the newest DevTools' Sources panel maps it: the sample's line and column (a line
    /// without a column from its start) through its script's map ([`Assembled::line_times`]
    /// and `--by-line` stacks then show original lines). The maps and scripts come from
    /// `loader`; the answer says which frames were resolved, which scripts had a map and
    /// which maps could not be used.
    pub fn apply_source_maps(&mut self, loader: &dyn sourcemap::Loader) -> sourcemap::Resolution {
        let positions: Vec<lines::SampledPositions> =
            self.threads.iter().map(|t| lines::SampledPositions::of(&t.model, &self.strings)).collect();
        // The positions first: a frame that is also a position keeps its own thread's answer
        // (a later key overwrites).
        let mut frames: Vec<(sourcemap::FrameKey, sourcemap::FrameAt)> = Vec::new();
        for (t, p) in self.threads.iter().zip(&positions) {
            let at = sourcemap::FrameAt { pid: t.pid, tid: t.tid };
            frames.extend(p.keys.iter().map(|k| (k.clone(), at)));
        }
        let real = self.frames();
        let real_keys: std::collections::BTreeSet<sourcemap::FrameKey> = real.iter().map(|f| f.0.clone()).collect();
        frames.extend(real);
        let by_url = self.kind == InputKind::Gecko;
        let mut res = sourcemap::resolve(&frames, &self.embedded, loader, self.cfg.threads, by_url);
        let strings = &mut self.strings;
        for (t, p) in self.threads.iter_mut().zip(&positions) {
            if p.keys.is_empty() {
                continue;
            }
            let origin: Vec<model::profile::LineOrigin> = p
                .keys
                .iter()
                .map(|k| {
                    let (u, l, c) = res.frames.get(k)?.original.as_ref()?;
                    Some((strings.intern(u), (*l + 1) as f64, (*c + 1) as f64))
                })
                .collect();
            let of = |k: &u32| origin.get(*k as usize).copied().flatten();
            t.model.line_origins = Some(model::profile::LineOrigins {
                lines: p.lines.iter().map(of).collect(),
                ticks: p.ticks.iter().map(|e| e.iter().map(of).collect()).collect(),
            });
        }
        res.frames.retain(|k, _| real_keys.contains(k));
        self.map_sources = res.sources.clone();
        for t in &mut self.threads {
            for f in &mut t.model.frames {
                let Some(r) = res.frames.get(&Frame::new(f, &self.strings).key()) else { continue };
                let name = r.name.as_deref().filter(|n| !n.is_empty()).map(|n| self.strings.intern(n));
                let place = r.original.as_ref().map(|(u, l, c)| (self.strings.intern(u), *l, *c));
                if name.is_some() || place.is_some() {
                    f.original = Some(model::profile::Original { name, place });
                }
            }
        }
        res
    }

    /// The wall time of each stage so far, for measurements.
    pub fn stage_times(&self) -> &[(&'static str, Duration)] {
        &self.stages
    }

    /// Whether the timeline also gives each thread's calls as samples, for the Firefox Profiler.
    /// A `CpuProfile` event's name alone makes DevTools read a generic trace as a browser's
    /// recording (and drop its threads): a generic trace gets none. DevTools does not read
    /// Firefox profiles, and the timeline is how it shows their calls: none either.
    fn timeline_samples(&self) -> bool {
        match self.kind {
            InputKind::Trace => self.browser,
            InputKind::CpuProfile => true,
            InputKind::Gecko => false,
        }
    }

    fn lazy(self) -> (Lazy, Config) {
        let lazy = Lazy {
            mode: self.mode,
            strings: self.strings,
            works: self.threads,
            cfg: self.cfg.integrator(),
            threads: self.cfg.threads,
        };
        (lazy, self.cfg)
    }

    /// Writes the calls JSON, as [`Analysis::write_calls`] does.
    pub fn write_calls(self, out: &mut dyn Write, input_label: &str) -> Result<(), Error> {
        self.write_calls_of(out, input_label, None)
    }

    /// [`Assembled::write_calls`] of the calls that overlap a selected time range (see
    /// [`Analysis::write_calls_of`]).
    pub fn write_calls_of(
        self,
        out: &mut dyn Write,
        input_label: &str,
        range: Option<&tree::Selection>,
    ) -> Result<(), Error> {
        let (lazy, cfg) = self.lazy();
        output::calls::write_calls_from(out, lazy, input_label, cfg.engine.label(), cfg.threads, range)
            .map_err(|e| Error::io("cannot write the calls", e))
    }

    /// Writes the timeline, as [`Analysis::write_timeline`] does.
    pub fn write_timeline(self, out: &mut dyn Write, source: &Source) -> Result<(), Error> {
        let (bounds, samples) = (self.bounds, self.timeline_samples());
        let (lazy, cfg) = self.lazy();
        timeline::write_timeline(out, source, lazy, cfg.window_options(), bounds, samples, cfg.threads)
    }

    /// Ends a timeline begun by [`assemble_timeline`] (which made this): each thread's calls.
    pub fn finish_timeline(self, out: &mut dyn Write, start: TimelineStart) -> Result<(), Error> {
        let (bounds, samples, trace) = (self.bounds, self.timeline_samples(), self.kind == InputKind::Trace);
        let (lazy, cfg) = self.lazy();
        timeline::finish_timeline(out, start, lazy, trace, bounds, samples, cfg.threads)
    }

    /// Writes the timeline of `source` read by [`TimelineStart::note`] (which made `notes`): its
    /// events copied from a second plain read of `source`, which must still hold the same
    /// bytes, then each thread's calls.
    pub fn finish_noted_timeline(
        self,
        out: &mut dyn Write,
        notes: TimelineStart,
        source: &Source,
    ) -> Result<(), Error> {
        let (bounds, samples, trace) = (self.bounds, self.timeline_samples(), self.kind == InputKind::Trace);
        let (lazy, cfg) = self.lazy();
        let read = (cfg.window_options(), trace);
        timeline::finish_noted_timeline(out, notes, source, lazy, read, bounds, samples, cfg.threads)
    }

    /// Writes DevTools' own Call tree and Bottom-up of each thread with calls, for the set of
    /// its calls and (with [`Config::keep_event_names`]) the set of all its events, as the
    /// `devtools-tree/1` document of the reference oracle.
    pub fn write_devtools_tree(self, out: &mut dyn Write, input_label: &str) -> Result<(), Error> {
        self.write_devtools_tree_of(out, input_label, None)
    }

    /// [`Assembled::write_devtools_tree`] over a selected time range, or the whole trace with
    /// None (see [`Analysis::write_devtools_tree_of`]).
    pub fn write_devtools_tree_of(
        self,
        out: &mut dyn Write,
        input_label: &str,
        range: Option<&tree::Selection>,
    ) -> Result<(), Error> {
        names_kept(self.kind, &self.cfg)?;
        let bounds = self.bounds;
        let (lazy, cfg) = self.lazy();
        tree::devtools::write(out, lazy, bounds, range, input_label, cfg.engine.label(), cfg.threads)
            .map_err(|e| Error::io("cannot write the tree", e))
    }

    /// The trace's bounds (DevTools' MetaHandler): its first and last event's times, µs (for a
    /// profile, its samples' span).
    pub fn trace_bounds(&self) -> (f64, f64) {
        self.bounds
    }

    /// Estimates the threads one at a time, in (pid, tid) order, handing each to `f`.
    pub fn for_each_thread<E>(self, mut f: impl FnMut(Thread<'_>) -> Result<(), E>) -> Result<(), E> {
        let (mut lazy, _) = self.lazy();
        lazy.each(|t, strings| f(Thread::new(t, strings)))
    }

    /// Estimates every thread twice, as this input's options say and then with `other`'s
    /// estimator, [`Config::bounds`] and [`Config::show_all_events`] (all else, the engine
    /// included, is what the input was read with: another engine needs another read), and
    /// returns what `keep` makes of each estimate, in (pid, tid) order: two estimates of one
    /// recording for the cost of one read. `keep` runs on the thread that made the estimate.
    pub fn estimate_twice<T: Send>(self, other: &Config, keep: impl Fn(Thread<'_>) -> T + Sync) -> (Vec<T>, Vec<T>) {
        let second = IntegratorConfig {
            show_all_events: other.show_all_events,
            estimator: other.estimator,
            bounds: other.bounds,
            ..self.cfg.integrator()
        };
        let (lazy, _) = self.lazy();
        lazy.each_twice(second, |t, strings| keep(Thread::new(t, strings))).into_iter().unzip()
    }
}

/// Reads `source` and assembles its profiles and per-thread events (everything before the estimate).
pub fn assemble(source: &Source, cfg: &Config) -> Result<(Diagnostics, Assembled), Error> {
    assemble_with(source, cfg, None).map(|(diag, a, _)| (diag, a))
}

/// Reads `source` as [`assemble`] does, writing the start of its timeline to `out` on the way:
/// the input's events, each copied byte for byte as the scan reads it (one read, so a stream
/// will do). [`Assembled::finish_timeline`] on the same `out` adds the calls; together they
/// write what [`Assembled::write_timeline`] writes.
pub fn assemble_timeline(
    source: &Source,
    cfg: &Config,
    out: &mut dyn Write,
) -> Result<(Diagnostics, Assembled, TimelineStart), Error> {
    let mut writer = output::timeline::TimelineWriter::new(out)?;
    let (diag, assembled, metadata) =
        assemble_with(source, cfg, Some(&mut |c, input, base| writer.copied(c, input, base)))?;
    let start = TimelineStart::new(&writer, metadata);
    Ok((diag, assembled, start))
}

impl TimelineStart {
    /// Reads `source` as [`assemble`] does, noting the runs of events its timeline copies, so
    /// that nothing is written before the read has succeeded and the events are not parsed
    /// twice: for an output that cannot be taken back (standard output, a pipe).
    /// [`Assembled::finish_noted_timeline`] writes what [`Assembled::write_timeline`] writes.
    pub fn note(source: &Source, cfg: &Config) -> Result<(Diagnostics, Assembled, TimelineStart), Error> {
        let mut plan = output::timeline::CopyPlan::default();
        let (diag, assembled, metadata) = assemble_with(
            source,
            cfg,
            Some(&mut |c, _, _| {
                plan.note(c);
                Ok(())
            }),
        )?;
        let written = output::timeline::Written::default();
        Ok((diag, assembled, TimelineStart::noted(written, metadata, plan)))
    }
}

/// [`assemble`], handing `copy` the events as they are read; also returns the trace's raw
/// `metadata`.
fn assemble_with(
    source: &Source,
    cfg: &Config,
    copy: Option<&mut input::document::CopyTo<'_>>,
) -> Result<(Diagnostics, Assembled, Option<Vec<u8>>), Error> {
    let mut diag = Diagnostics::default();
    let mut stages = Vec::new();
    let t = Instant::now();
    let mut w = source.window(cfg.window_options())?;
    w.set_progress(cfg.progress.clone());
    let mut builder = TraceBuilder::new(cfg.limits, cfg.engine);
    builder.keep_names = cfg.keep_event_names;
    builder.keep_lines = cfg.keep_lines;
    builder.rundown = cfg.keep_scripts.then(Default::default);
    builder.timings.want = cfg.range_event_names.iter().map(|n| n.as_str().into()).collect();
    let doc = match copy {
        Some(copy) => input::document::read_document_copying(&mut w, &mut builder, &mut diag, cfg.threads, copy)?,
        None => read_document(&mut w, &mut builder, &mut diag, cfg.threads)?,
    };
    stages.push(("read", t.elapsed()));
    let cfg = cfg.clone();
    match doc {
        Document::Trace { metadata, n_events, .. } => {
            let t = Instant::now();
            let tm = builder.finish(metadata.as_deref(), &mut diag, &exec::Threads(cfg.threads))?;
            stages.push(("profile models", t.elapsed()));
            let mode = if tm.cpu_profile_origin { Mode::PerformancePanel } else { Mode::Trace };
            let kind = InputKind::Trace;
            if tm.threads.is_empty() {
                diag.push(
                    WarningKind::NoCpuProfile,
                    None,
                    "no CPU profile to estimate calls from (no usable Profile and ProfileChunk events): record \
                     the trace with the disabled-by-default-v8.cpu_profiler category (README, \"Recording\")",
                );
            }
            let bounds = tm.bounds;
            Ok((
                diag,
                Assembled {
                    kind,
                    n_events,
                    threads: tm.threads,
                    mode,
                    strings: tm.strings,
                    cfg,
                    stages,
                    bounds,
                    browser: tm.browser,
                    embedded: tm.embedded,
                    map_sources: Default::default(),
                    timings: tm.timings,
                },
                metadata,
            ))
        }
        Document::Object { kind, fields, location } => {
            let (mut strings, nodes) = builder.into_profile_parts();
            let mut bounds = (f64::INFINITY, f64::NEG_INFINITY);
            let t = Instant::now();
            let mut threads = model::read_object(
                kind,
                fields,
                nodes,
                location,
                &mut strings,
                &cfg.read_options(),
                &mut diag,
                &mut bounds,
            )?;
            stages.push(("profile models", t.elapsed()));
            // A profile's one thread is named after its file.
            if kind == InputKind::CpuProfile {
                for t in &mut threads {
                    t.profile_name = source.file_name();
                }
            }
            let mode = match cfg.cpuprofile_mode {
                CpuProfileMode::Integrator => Mode::Integrator,
                CpuProfileMode::PerformancePanel => Mode::PerformancePanel,
            };
            let embedded = sourcemap::Embedded::default();
            Ok((
                diag,
                Assembled {
                    kind,
                    n_events: 0,
                    threads,
                    mode,
                    strings,
                    cfg,
                    stages,
                    bounds,
                    browser: false,
                    embedded,
                    map_sources: Default::default(),
                    timings: Default::default(),
                },
                None,
            ))
        }
    }
}

/// The project's measurement tools reach inside through this (`--features internals`); it is
/// not part of the API and changes without notice.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::input::scan::RawEvent;
    pub use crate::input::sink::{EventCtx, Sink};
    pub use crate::input::{chunk, json, scan, shapes};
    pub use crate::model::trace::ChunkIn;

    /// Estimates every thread of `a` (the estimate alone); returns the number of calls.
    pub fn estimate(a: crate::Assembled) -> usize {
        let cfg = a.cfg.integrator();
        crate::schedule::estimate_all(a.threads, a.mode, cfg, a.cfg.threads).iter().map(|t| t.calls.len()).sum()
    }

    /// Reads every event of `source` into `sink` (the scan alone).
    pub fn scan_all<S: Sink>(
        source: &crate::Source,
        sink: &mut S,
        cfg: &crate::Config,
    ) -> Result<crate::Diagnostics, crate::Error> {
        let mut diag = crate::Diagnostics::default();
        let mut w = source.window(cfg.window_options())?;
        crate::input::document::read_document(&mut w, sink, &mut diag, cfg.threads)?;
        Ok(diag)
    }
}
