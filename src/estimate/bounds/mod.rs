//! How wrong each call may be: the interval its true start and end lie in (`--bounds`), and the
//! midway estimate (`--estimator midway`), both from the samples and events around the call.
//!
//! A sample shows the stack as it was when the stack was captured: a regular tick a little
//! after its timestamp (the capture lag), a synchronous sample (the one Chromium takes for an
//! event with a `sampleTraceId`) exactly at its event, a few µs before its own timestamp. A
//! call's frame is on the stacks of a run of samples: it started after the capture of the last
//! sample before the run that tells the JS stack, and ended by the capture of the first one
//! after it; a top-level invocation event holding the run holds the call. Back-to-back calls
//! of one function look like one run, so the latest start is the run's last sample and the
//! earliest end its first.
//!
//! The lag is measured in the file, at boundaries whose time is exact: the tick taken last
//! before a GC event starts shows the GC only when its capture came after the start, and the
//! tick before a top-level invocation shows the invoked function only then. An exponential lag
//! is fitted to them by maximum likelihood, and bounds allow a tick a high quantile of the
//! mean's upper confidence limit. What the file does not measure (the lag without such a
//! boundary, the stamp delay without synchronous samples) the neighbouring ticks bound: the
//! sampler takes one tick at a time, so a tick's stack is walked after the tick before it was
//! stamped and before the next one is.

mod midway;
mod packed;
mod runs;
mod sampler;
mod tables;
#[cfg(test)]
mod tests;
mod times;

use midway::stack_times;
pub(crate) use packed::BoundsTable;
use runs::{RunCache, Runs};
use sampler::{fit, median_interval, stamp_delay, sync_captures, Exact, Invocations};
use tables::CallTables;
use times::Edges;

use super::ProfileCall;
use crate::exec::Exec;
use crate::js::Scalar;
use crate::model::profile::ProfileModel;
use crate::model::Entry;

/// The share of boundaries a bound may miss, per side: the lag bound is the lag's
/// `1 − TAIL` quantile.
const TAIL: f64 = 0.002;

/// What the file says about its sampler (per thread).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sampler {
    /// Median interval between samples, µs.
    pub interval: f64,
    /// Mean lag of a tick's stack capture after its timestamp, µs (0 when no tick showed one).
    pub lag_mean: f64,
    /// The lag bounds add to a tick's timestamp, µs; `None` when no boundary measured it
    /// (bounds then take a tick's stack to be captured by the next tick's timestamp).
    pub lag_bound: Option<f64>,
    /// How long after their events synchronous samples are stamped, µs (the median): the time
    /// a stack walk takes before its timestamp, which bounds take off every tick's; `None`
    /// without synchronous samples (bounds then take a tick's stack to be captured after the
    /// tick before it was stamped).
    pub stamp_delay: Option<f64>,
    /// Exact boundaries examined (GC and top-level invocation starts with a tick before them).
    pub boundaries: u32,
    /// Ticks (of [`Sampler::boundaries`]) whose stack was captured after the boundary.
    pub late_ticks: u32,
    /// Synchronous samples found (their stacks are exact at their events).
    pub sync_samples: u32,
    /// With bounds: the calls only one sample showed (for these the call itself may not have
    /// been one: a sample is an instant).
    pub single_sample_calls: Option<u32>,
}

/// Which estimate the calls carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Estimator {
    /// DevTools' own: a boundary set by samples lies on the sample that saw the change.
    #[default]
    DevTools,
    /// DevTools' calls with each boundary set by samples moved into the interval it lies in
    /// (captures corrected for the measured lag): to its middle when the frame changed alone,
    /// in order when several frames changed there, and by the call's log duration as
    /// [`Estimator::LogMidway`] does in a sampling hole (over two intervals); and with the
    /// invocation events' starts and ends as the invoked function's.
    Midway,
    /// [`Estimator::Midway`] with each boundary placed in its interval by the call's duration
    /// on a log scale instead of by time: the median of where it lies when a call of any
    /// duration is as likely as one twice or half as long (a scale-free prior). Short calls
    /// come out shorter; a boundary in a long gap moves toward the call's other end.
    LogMidway,
}

impl Estimator {
    /// The name used in outputs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::DevTools => "devtools",
            Estimator::Midway => "midway",
            Estimator::LogMidway => "log-midway",
        }
    }
}

/// `[earliestStart, latestStart, earliestEnd, latestEnd]` in µs; NaN where a side is unbounded.
pub(crate) type Bounds = [f64; 4];

/// The captures of the samples: earliest, latest and most likely time of each stack.
struct Captures {
    /// Timestamps, µs.
    t: Vec<f64>,
    /// Per sample, the exact time of its stack (a synchronous sample), else NaN ([`Exact`]).
    exact: Exact,
    /// The lag a tick's capture may have (`None`: unmeasured, up to the next tick's stamp).
    lag_bound: Option<f64>,
    /// What a tick's capture may precede its timestamp by (`None`: unmeasured, down to the
    /// tick before's stamp).
    stamp_delay: Option<f64>,
    /// Most likely times, never going back.
    mid: Vec<f64>,
}

impl Captures {
    #[inline]
    fn lo(&self, i: usize) -> f64 {
        let e = self.exact.at(i);
        if e.is_nan() {
            match self.stamp_delay {
                Some(d) => self.t[i] - d,
                // One tick at a time: a tick's stack is walked after the one before was stamped.
                None => i.checked_sub(1).map_or(f64::NAN, |p| self.t[p]),
            }
        } else {
            e
        }
    }

    #[inline]
    fn hi(&self, i: usize) -> f64 {
        let e = self.exact.at(i);
        if e.is_nan() {
            match self.lag_bound {
                Some(l) => self.t[i] + l,
                // One tick at a time: a tick's stack is captured before the next is stamped.
                None => self.t.get(i + 1).copied().unwrap_or(f64::NAN),
            }
        } else {
            e
        }
    }
}

/// What [`refine`] is asked for.
pub(crate) struct Refine<'e, E> {
    /// Which estimate the calls carry: DevTools' leaves them as they are.
    pub(crate) estimator: Estimator,
    /// Whether each call gets its bounds.
    pub(crate) bounds: bool,
    /// Independent parts run as two jobs of this [`Exec`]: the sampler's measure beside the
    /// per-call tables, then the midway pass beside the bounds, or the bounds in two halves.
    pub(crate) side_by_side: Option<&'e E>,
    /// Let the model's samples go once the tables made of them are (nothing after reads them;
    /// on a long thread they are 8 bytes of the peak's each).
    pub(crate) release_samples: bool,
}

/// Bounds for each call (when asked) and, for [`Estimator::Midway`] and
/// [`Estimator::LogMidway`], the calls moved in place.
pub(crate) fn refine(
    model: &mut ProfileModel,
    entries: &[Entry],
    trace_values: &[(u32, Scalar)],
    calls: &mut [ProfileCall],
    how: Refine<'_, impl Exec>,
) -> (Sampler, BoundsTable) {
    let Refine { estimator, bounds, side_by_side, release_samples } = how;
    let mut t: Vec<f64> = Vec::with_capacity(model.n_samples());
    t.extend(model.sample_times().map(|ms| ms * 1000.0));
    let n = t.len().min(model.n_samples());
    let interval = median_interval(&t[..n]);
    let midway = estimator != Estimator::DevTools;
    // The top-level invocations (what only the bounds need).
    let invocations = Invocations::new(if bounds { entries } else { &[] });
    // What the sampler's measure needs and what the per-call pass needs of the calls, samples
    // and events do not depend on each other: side by side, on a thread long enough to be cut.
    let calls_seen: &[ProfileCall] = calls;
    let measure = || {
        let exact = sync_captures(model, entries, trace_values, &t, interval);
        let mut sampler = fit(model, entries, &t[..n], &exact, interval);
        sampler.sync_samples = exact.0.iter().filter(|x| !x.is_nan()).count() as u32;
        sampler.stamp_delay = stamp_delay(&t, &exact.0);
        (exact, sampler)
    };
    let tables = || {
        let runs = Runs::new(model, &t[..n], &invocations, bounds);
        let tables = CallTables::new(model, calls_seen, &t[..n], bounds, midway);
        let edges = if midway { Edges::new(entries) } else { Edges::new(&[]) };
        // A tick's stack was captured before the next stack an event carries (what the tick
        // shows had not yet changed there): its lag is expected within that gap.
        let stacks = if midway { stack_times(calls_seen) } else { Vec::new() };
        (runs, tables, edges, stacks)
    };
    let ((exact, mut sampler), (runs, CallTables { ends, changes }, mut edges, stacks)) = match side_by_side {
        Some(exec) => exec.join(measure, tables),
        None => (measure(), tables()),
    };
    if release_samples {
        model.release_samples();
    }
    let model: &ProfileModel = model;
    // Gaps longer than this are placed by the call's log duration: every gap for log-midway;
    // for midway, a sampling hole (over two intervals, as the bounds count one), where a call
    // shorter than the hole most likely started near its end or ended near its start.
    let log_over = if estimator == Estimator::LogMidway { 0.0 } else { 2.0 * interval };
    let mid = if midway { midway::times(&t[..n], &exact, &stacks, sampler.lag_mean) } else { Vec::new() };
    let cap = Captures { t, exact, lag_bound: sampler.lag_bound, stamp_delay: sampler.stamp_delay, mid };
    // Each call's bounds, from DevTools' own call, and how many calls one sample alone showed.
    let bound = |range: std::ops::Range<usize>| {
        if !bounds {
            return (BoundsTable::default(), 0u32);
        }
        let mut cache = RunCache::new(model.nodes.len());
        let mut single = 0;
        let out = range
            .map(|c| {
                let (b, one) = runs.of_call(&mut cache, &cap, &calls_seen[c], ends[c] as usize, interval);
                single += u32::from(one);
                b
            })
            .collect();
        (out, single)
    };
    let pass = midway::Pass { model, entries, ends: &ends, changes: &changes, cap: &cap, n, log_over };
    let all = 0..calls_seen.len();
    // Midway's pass and the bounds do not depend on each other, nor one call's bounds on
    // another's (the run cache aside): on a long thread, the pass beside the bounds, or the
    // bounds in two halves. The pass moves the calls in place unless the bounds read them.
    let (out, single_calls) = match side_by_side {
        Some(exec) if midway && bounds => {
            let mut moved = Vec::with_capacity(all.end);
            let pass = || pass.move_calls(&mut edges, all.end, |c| calls_seen[c], |_, s, e| moved.push((s, e)));
            let ((), out) = exec.join(pass, || bound(all.clone()));
            for (call, (start, stop)) in calls.iter_mut().zip(moved) {
                (call.ts, call.dur) = (start, stop - start);
            }
            out
        }
        Some(exec) if bounds => {
            let half = all.end / 2;
            let ((mut out, a), (rest, b)) = exec.join(|| bound(0..half), || bound(half..all.end));
            out.extend((0..rest.len()).filter_map(|i| rest.get(i)));
            (out, a + b)
        }
        _ => {
            let out = bound(all.clone());
            if midway {
                let calls = std::cell::Cell::from_mut(calls).as_slice_of_cells();
                let put = |c: usize, start: f64, stop: f64| {
                    let call: &std::cell::Cell<ProfileCall> = &calls[c];
                    call.set(ProfileCall { ts: start, dur: stop - start, ..call.get() });
                };
                pass.move_calls(&mut edges, calls.len(), |c| calls[c].get(), put);
            }
            out
        }
    };
    sampler.single_sample_calls = bounds.then_some(single_calls);
    (sampler, out)
}
