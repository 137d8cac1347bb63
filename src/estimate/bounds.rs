//! How wrong each call may be: the interval its true start and end lie in (`--bounds`), and the
//! midway estimate (`--estimator midway`), both from the samples and events around the call.
//!
//! A sample shows the stack as it was when the stack was captured: a regular tick a little
//! after its timestamp (the capture lag), a synchronous sample (the one Chromium takes for an
//! event with a `sampleTraceId`) exactly at its event, a few µs before its own timestamp. So a
//! call that sample `k` first showed started after the capture of sample `k − 1` and at or
//! before the capture of sample `k`; a call that sample `j` first failed to show ended after
//! the capture of sample `j − 1` and at or before that of `j`. A call DevTools truncates at the
//! end of a task or invocation event ended at or before it, and a call inside an invocation
//! that began between two samples started after it.
//!
//! The lag is measured in the file, at boundaries whose time is exact: the tick taken last
//! before a GC event or a top-level JS invocation begins shows the GC or the invocation's JS
//! only when its capture came after the boundary. The distances of those ticks from their
//! boundaries are exponential with the lag's mean when the lag is (for any offset of the JS
//! after the event's start); a lag bound is taken from an upper confidence limit of that mean.

use super::ProfileCall;
use crate::js::Scalar;
use crate::model::profile::{ProfileModel, NONE};
use crate::model::{Entry, GC, INVOCATION};

/// The share of boundaries a bound may miss, per side: the lag bound is the lag's
/// `1 − TAIL` quantile.
const TAIL: f64 = 0.002;
/// Confidence of the upper limit on the mean lag.
const CONFIDENCE: f64 = 0.95;

/// What the file says about its sampler (per thread).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sampler {
    /// Median interval between samples, µs.
    pub interval: f64,
    /// Mean lag of a tick's stack capture after its timestamp, µs (0 when no tick showed one).
    pub lag_mean: f64,
    /// The lag bounds add to a tick's timestamp, µs.
    pub lag_bound: f64,
    /// Exact boundaries examined, and ticks among them captured past theirs.
    pub boundaries: u32,
    /// Ticks (of [`Sampler::boundaries`]) whose stack was captured after the boundary.
    pub late_ticks: u32,
    /// Synchronous samples found (their stacks are exact at their events).
    pub sync_samples: u32,
}

/// Which estimate the calls carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Estimator {
    /// DevTools' own: a boundary set by samples lies on the sample that saw the change.
    #[default]
    DevTools,
    /// DevTools' calls with each boundary set by samples moved to the middle of the interval
    /// it lies in (captures corrected for the measured lag), and with the invocation events'
    /// starts and ends as the invoked function's.
    Midway,
}

impl Estimator {
    /// The name used in outputs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::DevTools => "devtools",
            Estimator::Midway => "midway",
        }
    }
}

/// `[earliestStart, latestStart, earliestEnd, latestEnd]` in µs; NaN where a side is unbounded.
pub type Bounds = [f64; 4];

/// The captures of the samples: earliest, latest and most likely time of each stack.
struct Captures {
    /// Timestamps, µs.
    t: Vec<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    mid: Vec<f64>,
}

/// Bounds for each call (when `bounds`) and, for [`Estimator::Midway`], the calls moved in place.
pub fn refine(
    model: &ProfileModel,
    entries: &[Entry],
    trace_values: &[(u32, Scalar)],
    calls: &mut [ProfileCall],
    estimator: Estimator,
    bounds: bool,
) -> (Sampler, Vec<Bounds>) {
    let t: Vec<f64> = model.sample_times().map(|ms| ms * 1000.0).collect();
    let n = t.len().min(model.n_samples());
    let exact = sync_captures(model, entries, trace_values, &t);
    let mut sampler = fit(model, entries, &t, &exact);
    sampler.sync_samples = exact.iter().filter(|x| !x.is_nan()).count() as u32;
    let mut cap = Captures { lo: Vec::with_capacity(n), hi: Vec::with_capacity(n), mid: Vec::with_capacity(n), t };
    let mut running = f64::NEG_INFINITY;
    for (&ti, &e) in cap.t[..n].iter().zip(&exact) {
        let (lo, hi, mid) = if e.is_nan() { (ti, ti + sampler.lag_bound, ti + sampler.lag_mean) } else { (e, e, e) };
        // Most likely times never go back: a child's start stays within its parent's.
        running = running.max(mid);
        cap.lo.push(lo);
        cap.hi.push(hi);
        cap.mid.push(running);
    }
    let invocations = Invocations::new(entries);
    let runs = Runs::new(model, &cap.t[..n], &invocations);
    let parents = parent_calls(model, calls);
    let mut out = Vec::with_capacity(if bounds { calls.len() } else { 0 });
    let mut moved = Vec::with_capacity(if estimator == Estimator::Midway { calls.len() } else { 0 });
    for (c, call) in calls.iter().enumerate() {
        let parent = parents[c];
        let end = call.ts + call.dur;
        let (mut b, mut start, mut stop) = ([f64::NAN; 4], call.ts, end);
        let k = call.sample_index;
        if k >= 0 && (k as usize) < n {
            let k = k as usize;
            // The first sample at or after the end: the one that closed the call, or none when
            // an event's end did.
            let j = k + 1 + cap.t[k + 1..n].partition_point(|&x| x < end);
            let by_sample = j < n && cap.t[j] == end;
            if bounds {
                b = runs.bounds(&cap, call.node, k, j - 1);
            }
            let prev = k.checked_sub(1);
            let mut mid_before = prev.map_or(cap.mid[k], |p| cap.mid[p]);
            // The lowest frame a sample opens has its parent opened earlier (or none).
            let lowest = parent.is_none_or(|p| calls[p as usize].sample_index != call.sample_index);
            let began = invocations.began_within(prev.map_or(f64::NAN, |p| cap.lo[p]), cap.t[k]);
            if let Some(b0) = began {
                mid_before = mid_before.max(b0);
            }
            start = match began {
                // The invoked function starts as its invocation does.
                Some(b0) if lowest => b0,
                _ => (mid_before + cap.mid[k]) / 2.0,
            };
            if by_sample {
                stop = (cap.mid[j - 1] + cap.mid[j]) / 2.0;
            } else {
                // Truncated at an event's end: the invoked function ends there, the frames it
                // called somewhere after their last sample.
                let outermost = parent.is_none_or(|p| {
                    let p = &calls[p as usize];
                    p.ts + p.dur != end
                });
                if !outermost {
                    stop = ((cap.mid[j - 1] + end) / 2.0).min(end);
                }
            }
        } else if k < 0 {
            // A frame of a trace event's stack: it was open at the event.
            b[1] = call.ts;
        }
        if estimator == Estimator::Midway {
            moved.push((start, stop.max(start)));
        }
        if bounds {
            out.push(b);
        }
    }
    for (call, (start, stop)) in calls.iter_mut().zip(moved) {
        call.ts = start;
        call.dur = stop - start;
    }
    (sampler, out)
}

/// The samples that show a frame, and the top-level invocation each lies in: a call's bounds
/// come from the whole run of samples that show its frame (DevTools splits a call at the end of
/// any `V8.*` event, and a run may be longer than the call), cut at top-level invocations.
struct Runs<'m> {
    model: &'m ProfileModel,
    /// Per sample, the node whose stack it shows (a GC sample shows the stack before it).
    shown: Vec<u32>,
    /// Per sample, 1 + the index of the top-level invocation it lies in, 0 for none.
    within: Vec<u32>,
    /// Per sample, the last sample at or before it that is not `(program)` ([`NONE`] if none).
    told_before: Vec<u32>,
    /// Per sample, the first sample at or after it that is not `(program)` ([`NONE`] if none).
    told_after: Vec<u32>,
    /// The top-level invocations' starts and ends.
    spans: &'m [(f64, f64)],
}

impl<'m> Runs<'m> {
    fn new(model: &'m ProfileModel, t: &[f64], inv: &'m Invocations) -> Runs<'m> {
        let mut last = NONE;
        let shown = (0..t.len())
            .map(|i| {
                let node = model.node_by_index(i).unwrap_or(NONE);
                if node != NONE && Some(node) == model.gc && last != NONE {
                    return last;
                }
                last = node;
                node
            })
            .collect();
        let mut q = 0;
        let within = t
            .iter()
            .map(|&x| {
                while q < inv.0.len() && inv.0[q].1 <= x {
                    q += 1;
                }
                match inv.0.get(q) {
                    Some(&(b, _)) if b <= x => q as u32 + 1,
                    _ => 0,
                }
            })
            .collect();
        let program = |i: usize| model.program.is_some() && model.node_by_index(i) == model.program;
        let mut told = NONE;
        let told_before = (0..t.len())
            .map(|i| {
                if !program(i) {
                    told = i as u32;
                }
                told
            })
            .collect();
        told = NONE;
        let mut told_after: Vec<u32> = (0..t.len())
            .rev()
            .map(|i| {
                if !program(i) {
                    told = i as u32;
                }
                told
            })
            .collect();
        told_after.reverse();
        Runs { model, shown, within, told_before, told_after, spans: &inv.0 }
    }

    /// Whether sample `i` shows `node`'s frame (the node is on its stack).
    fn shows(&self, i: usize, node: u32) -> bool {
        let nodes = &self.model.nodes;
        let mut m = self.shown[i];
        if m == NONE {
            return false;
        }
        let depth = nodes[node as usize].depth;
        while nodes[m as usize].depth > depth {
            m = nodes[m as usize].parent;
        }
        m == node
    }

    /// The bounds of a call of `node` seen from sample `first` to sample `last`.
    fn bounds(&self, cap: &Captures, node: u32, first: usize, last: usize) -> Bounds {
        let n = self.shown.len();
        let (mut r0, mut r1) = (first, last);
        while r0 > 0 && self.within[r0 - 1] == self.within[r0] && self.shows(r0 - 1, node) {
            r0 -= 1;
        }
        while r1 + 1 < n && self.within[r1 + 1] == self.within[r1] && self.shows(r1 + 1, node) {
            r1 += 1;
        }
        // A `(program)` sample says nothing: the sampler shows it when it fails to walk a JS
        // stack too. The bounds come from the nearest samples that show something else.
        let mut b = [f64::NAN, cap.hi[r0], cap.lo[r1], f64::NAN];
        if let Some(i) = r0.checked_sub(1).map(|i| self.told_before[i]).filter(|&i| i != NONE) {
            b[0] = cap.lo[i as usize];
        }
        if let Some(&i) = self.told_after.get(r1 + 1).filter(|&&i| i != NONE) {
            b[3] = cap.hi[i as usize];
        }
        // The run lies in one top-level invocation (or none): the call began and ended in it.
        if let Some(&(begin, end)) = (self.within[r0] as usize).checked_sub(1).and_then(|w| self.spans.get(w)) {
            b[0] = if b[0] > begin { b[0] } else { begin };
            b[3] = if b[3] < end { b[3] } else { end };
        }
        b
    }
}

/// For each call, the call it was opened inside (by creation order and node parent).
fn parent_calls(model: &ProfileModel, calls: &[ProfileCall]) -> Vec<Option<u32>> {
    let mut last = vec![NONE; model.nodes.len()];
    calls
        .iter()
        .enumerate()
        .map(|(c, call)| {
            let p = model.nodes[call.node as usize].parent;
            let found = (p != NONE).then(|| last[p as usize]).filter(|&pc| {
                pc != NONE && {
                    let pc = &calls[pc as usize];
                    pc.ts <= call.ts && call.ts <= pc.ts + pc.dur
                }
            });
            last[call.node as usize] = c as u32;
            found
        })
        .collect()
}

/// The starts and ends of the invocation events that no other invocation holds, sorted.
struct Invocations(Vec<(f64, f64)>);

impl Invocations {
    fn new(entries: &[Entry]) -> Invocations {
        let mut v: Vec<(f64, f64)> = Vec::new();
        for e in entries.iter().filter(|e| e.flags & INVOCATION != 0 && e.dur > 0.0) {
            match v.last() {
                Some(&(_, end)) if e.ts < end => {}
                _ => v.push((e.ts, e.end())),
            }
        }
        Invocations(v)
    }

    /// The start of the invocation holding `t` when it began after `after` (or with no sample
    /// before).
    fn began_within(&self, after: f64, t: f64) -> Option<f64> {
        let i = self.0.partition_point(|&(b, _)| b <= t).checked_sub(1)?;
        let (b, e) = self.0[i];
        (t < e && (after.is_nan() || b > after)).then_some(b)
    }
}

/// Per sample: the exact time of its stack when it is a synchronous sample (NaN otherwise). A
/// synchronous sample shows the node its event's `sampleTraceId` resolves to, and is the first
/// sample of that node at or after the event, within half an interval.
fn sync_captures(model: &ProfileModel, entries: &[Entry], trace_values: &[(u32, Scalar)], t: &[f64]) -> Vec<f64> {
    let n = t.len().min(model.n_samples());
    let mut exact = vec![f64::NAN; n];
    if trace_values.is_empty() || n < 2 {
        return exact;
    }
    let window = median_interval(t) / 2.0;
    let mut node_of = vec![NONE; trace_values.iter().map(|&(k, _)| k as usize + 1).max().unwrap_or(0)];
    for &(k, v) in trace_values {
        node_of[k as usize] = model.node_for_trace_value(v).unwrap_or(NONE);
    }
    for e in entries.iter().filter(|e| e.trace != 0) {
        let Some(&node) = node_of.get(e.trace as usize - 1).filter(|&&x| x != NONE) else { continue };
        let mut i = t[..n].partition_point(|&x| x < e.ts);
        while i < n && t[i] <= e.ts + window {
            if model.node_by_index(i) == Some(node) && exact[i].is_nan() {
                exact[i] = e.ts;
                break;
            }
            i += 1;
        }
    }
    exact
}

fn median_interval(t: &[f64]) -> f64 {
    let mut d: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).filter(|d| *d > 0.0).collect();
    if d.is_empty() {
        return 0.0;
    }
    let m = d.len() / 2;
    *d.select_nth_unstable_by(m, f64::total_cmp).1
}

/// Measures the capture lag at the exact boundaries (see the module's doc).
fn fit(model: &ProfileModel, entries: &[Entry], t: &[f64], exact: &[f64]) -> Sampler {
    let n = exact.len();
    let interval = median_interval(&t[..n]);
    let mut s = Sampler { interval, ..Sampler::default() };
    if n < 2 {
        return s;
    }
    let nodes = &model.nodes;
    let bottom = |mut x: u32| {
        while nodes[x as usize].depth > 0 {
            x = nodes[x as usize].parent;
        }
        x
    };
    let is_js = |x: u32| {
        nodes[x as usize].depth >= 0 && Some(x) != model.gc && Some(x) != model.program && Some(x) != model.idle
    };
    // Distances of the late ticks from their boundaries, and of the on-time ones (GC only).
    let (mut late, mut on_time) = (Vec::new(), Vec::new());
    // The tick before `b`, when it was taken after `free_from` (nothing that could show the
    // same lay between), is no synchronous sample, and is within one interval.
    let tick_before = |b: f64, free_from: f64| {
        let i = t[..n].partition_point(|&x| x < b);
        let p = i.checked_sub(1)?;
        (t[p] >= free_from && b - t[p] <= interval && exact[p].is_nan()).then_some((i, p))
    };
    let mut gc_end = f64::NEG_INFINITY;
    let mut inv_end = f64::NEG_INFINITY;
    for e in entries {
        if e.flags & GC != 0 && e.dur > 0.0 {
            let Some(gc) = model.gc else { continue };
            if let Some((_, p)) = tick_before(e.ts, gc_end) {
                s.boundaries += 1;
                let d = e.ts - t[p];
                if model.node_by_index(p) == Some(gc) {
                    late.push(d);
                } else {
                    on_time.push(d);
                }
            }
            gc_end = gc_end.max(e.end());
        } else if e.flags & INVOCATION != 0 && e.dur > 0.0 && e.ts >= inv_end {
            // A top-level invocation: the first JS sample inside it tells what it ran.
            if let Some((i, p)) = tick_before(e.ts, inv_end) {
                let inside =
                    (i..n).take_while(|&q| t[q] < e.end()).find_map(|q| model.node_by_index(q).filter(|&x| is_js(x)));
                if let Some(first) = inside {
                    s.boundaries += 1;
                    if model.node_by_index(p).is_some_and(|x| is_js(x) && bottom(x) == bottom(first)) {
                        late.push(e.ts - t[p]);
                    }
                }
            }
            inv_end = e.end();
        }
    }
    s.late_ticks = late.len() as u32;
    let upper = if late.is_empty() {
        // No late tick: the largest mean lag that leaves none late at the GC boundaries with
        // the stated confidence.
        no_late_limit(&on_time)
    } else {
        let sum: f64 = late.iter().sum();
        s.lag_mean = sum / late.len() as f64;
        sum / gamma_quantile(late.len() as u32, 1.0 - CONFIDENCE)
    };
    s.lag_bound = upper * (1.0 / TAIL).ln();
    s
}

/// The mean lag `m` at which ticks at distances `d` from their boundaries would all be on
/// time with probability `1 − CONFIDENCE` (exponential lag): `Σ ln(1 − e^(−d/m)) = ln(1 − C)`.
fn no_late_limit(d: &[f64]) -> f64 {
    let target = (1.0 - CONFIDENCE).ln();
    let log_p = |m: f64| d.iter().map(|&x| (-(-x / m).exp()).ln_1p()).sum::<f64>();
    if d.is_empty() || log_p(1e6) > target {
        return 0.0;
    }
    let (mut lo, mut hi) = (1e-3f64, 1e6f64);
    for _ in 0..100 {
        let m = (lo * hi).sqrt();
        if log_p(m) > target {
            lo = m;
        } else {
            hi = m;
        }
    }
    lo
}

/// The `p` quantile of Gamma(k, 1), by bisection on its distribution function
/// `1 − e^(−x) Σ_{j<k} x^j / j!`.
fn gamma_quantile(k: u32, p: f64) -> f64 {
    let cdf = |x: f64| {
        let (mut term, mut sum) = (1.0, 1.0);
        for j in 1..k {
            term *= x / j as f64;
            sum += term;
        }
        1.0 - (-x).exp() * sum
    };
    let (mut lo, mut hi) = (0.0, k as f64 + 20.0 * (k as f64).sqrt() + 20.0);
    for _ in 0..200 {
        let m = (lo + hi) / 2.0;
        if cdf(m) < p {
            lo = m;
        } else {
            hi = m;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_quantiles_match_tables() {
        // Gamma(1) is exponential: the 5 % quantile is −ln 0.95.
        assert!((gamma_quantile(1, 0.05) - 0.051_293).abs() < 1e-5);
        // χ²(10) 5 % quantile 3.940 → Gamma(5) quantile 1.970.
        assert!((gamma_quantile(5, 0.05) - 1.970_1).abs() < 1e-3);
    }

    #[test]
    fn no_late_tick_limits_the_mean_lag() {
        // One tick at 100 µs: e^(−100/m) = 0.95 at m = 100 / −ln 0.95.
        let m = no_late_limit(&[100.0]);
        assert!((m - 100.0 / -(0.95f64).ln()).abs() < 1e-3, "{m}");
        assert_eq!(no_late_limit(&[]), 0.0);
    }
}
