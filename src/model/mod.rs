//! Raw values → the model: profiles (DevTools' `CPUProfileDataModel`) and each thread's events,
//! assembled as DevTools' handlers do. Every JS quirk that changes an answer is kept here.
//!
//! This file holds the estimator's contract: what a thread hands to it ([`ThreadWork`], its
//! [`Entry`]s and their flags) and which DevTools to follow ([`EngineVersion`]).

pub(crate) mod column;
pub(crate) mod cpuprofile;
pub(crate) mod entries;
pub(crate) mod gecko;
pub(crate) mod nodes;
pub(crate) mod profile;
pub(crate) mod trace;

use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::input::InputKind;
use crate::js::Scalar;
use crate::strings::Strings;
use profile::ProfileModel;

/// How a bare `.cpuprofile` is turned into calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuProfileMode {
    /// The SamplesIntegrator with no trace events (the same algorithm as for traces).
    Integrator,
    /// The Performance panel's own `forEachFrame` algorithm for a loaded `.cpuprofile`.
    PerformancePanel,
}

/// The threads of an object format's input ([`crate::input::formats`]), by its reader;
/// `nodes` is a `.cpuprofile`'s `nodes`, read where it lay.
#[allow(clippy::too_many_arguments)] // the reader's inputs, and where its results go
pub(crate) fn read_object(
    kind: InputKind,
    fields: Vec<(String, Vec<u8>)>,
    nodes: Option<Result<nodes::ParsedNodes, Error>>,
    location: Location,
    strings: &mut Strings,
    opts: &ReadOptions<'_>,
    diag: &mut Diagnostics,
    bounds: &mut (f64, f64),
) -> Result<Vec<ThreadWork>, Error> {
    match kind {
        InputKind::CpuProfile => cpuprofile::thread_work(fields, nodes, location, strings, opts, diag, bounds),
        InputKind::Gecko => gecko::thread_works(fields, location, strings, opts, diag, bounds),
        InputKind::Trace => Err(Error::input(Some(location), "a trace is read event by event")),
    }
}

/// What reading an input into the model takes from the options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadOptions<'a> {
    /// How a bare `.cpuprofile` is turned into calls.
    pub(crate) cpuprofile_mode: CpuProfileMode,
    /// Depth and size guards.
    pub(crate) limits: profile::Limits,
    /// Keep the line data ([`crate::Config::keep_lines`]).
    pub(crate) keep_lines: bool,
    /// Symbols of a Firefox profile's native libraries, by library name.
    pub(crate) symbols: &'a std::collections::BTreeMap<String, std::sync::Arc<gecko::Symbols>>,
}

/// The entry is an instant (`I`) event. An instant is kept only when it carries a trace id (the
/// integrator reads it) or a `dur` other than 0 (the flame-chart tree reads any entry's `dur`,
/// so it nests in a call and takes from its self time); the integrator skips the latter.
pub(crate) const INSTANT: u8 = 1;
/// The event is a JS invocation (`isJSInvocationEvent`).
pub(crate) const INVOCATION: u8 = 2;
/// The event is `RunTask` or `RunMicrotasks`, whose start resets the JS stack.
pub(crate) const RESET: u8 = 4;
/// The event is a garbage collection (`MinorGC`, `MajorGC`): its start is an exact time at which
/// samples begin to show `(garbage collector)`.
pub(crate) const GC: u8 = 8;
/// The event runs a JS function at once (`FunctionCall`, `v8.callFunction`, `v8.run`,
/// `v8.evaluateModule`, `RunMicrotasks`, `V8.Execute`): the function starts with it.
pub(crate) const STARTS_JS: u8 = 16;

/// One trace event of a thread, as the estimator sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Entry {
    /// µs.
    pub ts: f64,
    /// µs (0 when absent).
    pub dur: f64,
    /// The event's truthy `sampleTraceId`: 1 + its index in the builder's table of trace-id key
    /// codes (what it resolves to is in [`ThreadWork::trace_values`]); 0 for none.
    pub trace: u32,
    /// [`INSTANT`], [`INVOCATION`], [`RESET`], [`GC`], [`STARTS_JS`].
    pub flags: u8,
}

impl Entry {
    /// `ts + dur`.
    #[inline]
    pub(crate) fn end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// `isJSInvocationEvent` and the reset names, as entry flags.
#[inline]
pub(crate) fn flags_for_name(name: &str) -> u8 {
    let b = name.as_bytes();
    // Most names are none of these: decide on the first byte before comparing strings.
    match b.first() {
        Some(b'R' | b'F' | b'E' | b'v' | b'V' | b'M') => {}
        _ => return 0,
    }
    match name {
        "RunTask" => RESET,
        "RunMicrotasks" => RESET | INVOCATION | STARTS_JS,
        "MinorGC" | "MajorGC" => GC,
        "FunctionCall" | "v8.evaluateModule" | "V8.Execute" | "v8.callFunction" | "v8.run" => INVOCATION | STARTS_JS,
        "EvaluateScript" | "EventDispatch" | "V8Console::runTask" => INVOCATION,
        _ if name.starts_with("v8") || name.starts_with("V8") => INVOCATION,
        _ => 0,
    }
}

/// How the engine treats the input (see [`crate::Config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineVersion {
    /// `@paulirish/trace_engine` 0.0.65, the published engine that Lighthouse uses.
    V0_0_65,
    /// The newest DevTools source, what current Chrome shows (the default): fake-JS mode after
    /// a trace-id event, samples-only threads integrated, no auction-worklet exception.
    #[default]
    Latest,
}

impl EngineVersion {
    /// The `engine` member of the calls output, as the reference engine labels its answers.
    pub fn label(self) -> &'static str {
        match self {
            EngineVersion::V0_0_65 => "@paulirish/trace_engine@0.0.65",
            EngineVersion::Latest => "@paulirish/trace_engine@0.0.65+v6",
        }
    }
}

/// A profile and the thread it belongs to.
#[derive(Debug)]
pub(crate) struct ThreadWork {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// The profile id, as JSON.
    pub profile_id: String,
    /// The profile's place in DevTools' order of profiles (`profilesInProcess`), in which the
    /// Sources panel sums their line times.
    pub profile_order: u32,
    /// The thread's name, from `thread_name` metadata.
    pub thread_name: Option<String>,
    /// A `.cpuprofile`'s file name, which names its thread for a person (the calls output keeps
    /// `threadName` null, as DevTools does).
    pub profile_name: Option<String>,
    /// The profile.
    pub model: ProfileModel,
    /// The thread's events, sorted as DevTools sorts them ([`sort_entries`]).
    pub entries: Vec<Entry>,
    /// Each entry's name and whether it is a top-level task (`RunTask` in DevTools' timeline
    /// category), when names are kept ([`crate::Config::keep_event_names`]); else empty.
    pub names: Vec<(crate::strings::StrId, bool)>,
    /// The values the profile's `trace_ids` give the events' `sampleTraceId`s: (the event's
    /// [`Entry::trace`] − 1, value), for the events whose id is a key there.
    pub trace_values: Vec<(u32, Scalar)>,
    /// Whether DevTools computes calls for this profile, and if not, why.
    pub skipped: Option<&'static str>,
}

/// Sorts a thread's entries as `sortTraceEventsInPlace` does: by start, then longest first
/// ([`entry_order`]); stable, so equal events keep their file order.
pub(crate) fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by(entry_order);
}

/// The order of [`sort_entries`].
pub(crate) fn entry_order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    a.ts.partial_cmp(&b.ts)
        .unwrap_or(std::cmp::Ordering::Equal)
        .then_with(|| b.end().partial_cmp(&a.end()).unwrap_or(std::cmp::Ordering::Equal))
}

/// Line data the Sources panel would misread, as warnings (DevTools' reading is kept).
fn report_line_data(model: &ProfileModel, what: &str, at: Location, diag: &mut Diagnostics) {
    let mut say = |m: String| diag.push(WarningKind::BadLineData, Some(at), format!("{what}: {m}"));
    if let Some(lines) = &model.lines {
        // A trace's chunks without lines add a zero per sample: only recorded arrays can differ
        // (samples that differ from the times have a warning of their own).
        let (n, samples) = (lines.len(), model.raw_sample_count);
        if n != samples {
            say(format!("lines has {n} entries for {samples} samples; DevTools pairs them by position"));
        }
        let (mut not_numbers, mut odd) = (0u64, 0u64);
        for l in lines.iter() {
            if l.is_nan() {
                not_numbers += 1;
            } else if l < 0.0 || l.fract() != 0.0 {
                odd += 1;
            }
        }
        if not_numbers > 0 {
            say(format!("{not_numbers} sample line(s) are not numbers; left out of the line times"));
        }
        if odd > 0 {
            say(format!("{odd} sample line(s) are negative or not whole; counted as DevTools counts them"));
        }
    }
    let bad_ticks: usize =
        model.position_ticks.iter().map(|(_, t)| t.iter().filter(|(l, n)| l.is_nan() || n.is_nan()).count()).sum();
    if bad_ticks > 0 {
        say(format!("{bad_ticks} positionTicks entr(ies) have a line or ticks that is not a number; left out"));
    }
}

/// Counts what the model dropped, as warnings.
pub(crate) fn report_model(model: &ProfileModel, what: &str, at: Location, diag: &mut Diagnostics) {
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
    if model.time_leaps.count > 0 {
        let (sample, delta) = model.time_leaps.first;
        diag.push(
            WarningKind::TimeLeap,
            Some(at),
            format!(
                "{what}: {} time delta(s) move the clock by more than a day (the first: sample {sample}, {} µs); \
                 the times are used as given, as in DevTools",
                model.time_leaps.count,
                crate::js::number_to_string(delta)
            ),
        );
    }
    report_line_data(model, what, at, diag);
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
