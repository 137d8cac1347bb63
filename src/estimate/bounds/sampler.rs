//! What the file says about its sampler: the top-level invocations and the synchronous
//! samples' exact times, the stamp delay, the median interval, and the capture lag fitted at
//! boundaries whose time is exact.

use super::times::partition_from;
use super::{Sampler, TAIL};
use crate::js::Scalar;
use crate::model::profile::{ProfileModel, NONE};
use crate::model::{Entry, GC, INVOCATION};

/// The starts and ends of the invocation events that no other invocation holds, sorted.
pub(super) struct Invocations(pub(super) Vec<(f64, f64)>);

impl Invocations {
    pub(super) fn new(entries: &[Entry]) -> Invocations {
        let mut v: Vec<(f64, f64)> = Vec::new();
        for e in entries.iter().filter(|e| e.flags & INVOCATION != 0 && e.dur > 0.0) {
            match v.last() {
                Some(&(_, end)) if e.ts < end => {}
                _ => v.push((e.ts, e.end())),
            }
        }
        Invocations(v)
    }
}

/// Per sample: the exact time of its stack when it is a synchronous sample (NaN otherwise),
/// none at all (an empty table) when no sample is.
pub(super) struct Exact(pub(super) Vec<f64>);

impl Exact {
    #[inline]
    pub(super) fn at(&self, i: usize) -> f64 {
        self.0.get(i).copied().unwrap_or(f64::NAN)
    }
}

/// The synchronous samples' exact times. A synchronous sample shows the node its event's
/// `sampleTraceId` resolves to, and is the first sample of that node at or after the event,
/// within half an interval.
pub(super) fn sync_captures(
    model: &ProfileModel,
    entries: &[Entry],
    trace_values: &[(u32, Scalar)],
    t: &[f64],
    interval: f64,
) -> Exact {
    let n = t.len().min(model.n_samples());
    if trace_values.is_empty() || n < 2 {
        return Exact(Vec::new());
    }
    // Made at the first synchronous sample found: a thread with none has no table.
    let mut exact = Vec::new();
    let window = interval / 2.0;
    let mut node_of = vec![NONE; trace_values.iter().map(|&(k, _)| k as usize + 1).max().unwrap_or(0)];
    for &(k, v) in trace_values {
        node_of[k as usize] = model.node_for_trace_value(v).unwrap_or(NONE);
    }
    let (mut from, mut last_ts) = (0, f64::NEG_INFINITY);
    for e in entries.iter().filter(|e| e.trace != 0) {
        let Some(&node) = node_of.get(e.trace as usize - 1).filter(|&&x| x != NONE) else { continue };
        // Entries come sorted: each search starts where the last one ended.
        if e.ts.is_nan() || e.ts < last_ts {
            from = 0;
        }
        last_ts = e.ts;
        let mut i = partition_from(&t[..n], &mut from, |v| v < e.ts);
        while i < n && t[i] <= e.ts + window {
            if model.node_by_index(i) == Some(node) && exact.get(i).is_none_or(|x: &f64| x.is_nan()) {
                if exact.is_empty() {
                    exact = vec![f64::NAN; n];
                }
                exact[i] = e.ts;
                break;
            }
            i += 1;
        }
    }
    Exact(exact)
}

/// The median of how long after its event each synchronous sample is stamped, µs (`None`
/// with none).
pub(super) fn stamp_delay(t: &[f64], exact: &[f64]) -> Option<f64> {
    let mut d: Vec<f64> = t.iter().zip(exact).filter(|(_, e)| !e.is_nan()).map(|(t, e)| (t - e).max(0.0)).collect();
    if d.is_empty() {
        return None;
    }
    let mid = d.len() / 2;
    Some(*d.select_nth_unstable_by(mid, f64::total_cmp).1)
}

/// The median of the positive intervals between samples, from at most about 8,192 of them
/// spread evenly (a sampler's interval does not need them all).
pub(super) fn median_interval(t: &[f64]) -> f64 {
    let step = (t.len() >> 13).max(1);
    let mut d: Vec<f64> = (1..t.len()).step_by(step).map(|i| t[i] - t[i - 1]).filter(|d| *d > 0.0).collect();
    if d.is_empty() {
        return 0.0;
    }
    let m = d.len() / 2;
    *d.select_nth_unstable_by(m, f64::total_cmp).1
}

/// Measures the capture lag at the exact boundaries (see the module's doc).
pub(super) fn fit(model: &ProfileModel, entries: &[Entry], t: &[f64], exact: &Exact, interval: f64) -> Sampler {
    let n = t.len();
    let mut s = Sampler { interval, ..Sampler::default() };
    if n < 2 {
        return s;
    }
    let nodes = &model.nodes;
    let is_js = |x: u32| {
        nodes[x as usize].depth >= 0 && Some(x) != model.gc && Some(x) != model.program && Some(x) != model.idle
    };
    // Distances of the late ticks from their boundaries, and of the on-time ones (GC only).
    // At GC starts samples turn to GC at once; an invoked function starts some µs after its
    // event, so only how late the late ticks there were tells (the lag is memoryless).
    let (mut late, mut on_time, mut late_js) = (Vec::new(), Vec::new(), Vec::new());
    // The tick before `b`, when it was taken after `free_from` (nothing that could show the
    // same lay between), is no synchronous sample, and is within one interval.
    // (Asked in the entries' order, so searched from the last answer.)
    let mut hint = 0;
    let mut tick_before = |b: f64, free_from: f64| {
        let i = partition_from(&t[..n], &mut hint, |x| x < b);
        let p = i.checked_sub(1)?;
        (t[p] >= free_from && b - t[p] <= interval && exact.at(p).is_nan()).then_some((i, p))
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
                    if model.node_by_index(p).is_some_and(|x| is_js(x) && model.bottom(x) == model.bottom(first)) {
                        late_js.push(e.ts - t[p]);
                    }
                }
            }
            inv_end = e.end();
        }
    }
    s.late_ticks = (late.len() + late_js.len()) as u32;
    // Nothing to measure it by (a bare .cpuprofile): no lag is assumed for the estimate, and
    // the bounds take each tick's capture to come before the next tick's stamp.
    let Some((mean, upper)) = fit_lag(&late, &on_time, &late_js, interval) else { return s };
    // At most an interval: a longer mean lag would have each capture come after the next
    // tick's stamp, on average. (With late ticks only, the likelihood rises without end and
    // the fit stops at the top of its range, a second.)
    s.lag_mean = mean.min(interval);
    s.lag_bound = Some(upper.min(interval) * (1.0 / TAIL).ln());
    s
}

/// Fits an exponential lag to ticks taken `d` before exact boundaries: the `late` ones showed
/// what followed their boundary (lag > d), the `on_time` ones did not (lag ≤ d); `late_js` are
/// late ticks at boundaries whose change follows them by an unknown delay, counted by how late
/// they were (d within `window`). Returns the maximum-likelihood mean and its upper limit at
/// 95 % (likelihood ratio; 0 and the limit when no tick was late; `None` with no boundary).
pub(super) fn fit_lag(late: &[f64], on_time: &[f64], late_js: &[f64], window: f64) -> Option<(f64, f64)> {
    let on_time: Vec<f64> = on_time.iter().copied().filter(|&d| d > 0.0).collect();
    if late.is_empty() && late_js.is_empty() && on_time.is_empty() {
        return None;
    }
    let late_sum: f64 = late.iter().chain(late_js).sum();
    let n_js = late_js.len() as f64;
    let log_l = |m: f64| {
        -late_sum / m + on_time.iter().map(|&d| (-(-d / m).exp()).ln_1p()).sum::<f64>()
            - n_js * (m * -(-window / m).exp_m1()).ln()
    };
    let (lo, hi) = (1e-2f64.ln(), 1e6f64.ln());
    let (mean, best) = if late.is_empty() && late_js.is_empty() {
        (0.0, 0.0)
    } else {
        // The log-likelihood rises then falls in ln m: a ternary search finds its peak.
        let (mut a, mut b) = (lo, hi);
        for _ in 0..100 {
            let (x1, x2) = (a + (b - a) / 3.0, b - (b - a) / 3.0);
            if log_l(x1.exp()) < log_l(x2.exp()) {
                a = x1;
            } else {
                b = x2;
            }
        }
        let m = ((a + b) / 2.0).exp();
        (m, log_l(m))
    };
    // χ²(1) at 90 % over 2: the one-sided 95 % limit.
    let target = best - 1.3528;
    let (mut a, mut b) = (if mean > 0.0 { mean.ln() } else { lo }, hi);
    if log_l(b.exp()) >= target {
        return Some((mean, b.exp()));
    }
    for _ in 0..100 {
        let x = (a + b) / 2.0;
        if log_l(x.exp()) >= target {
            a = x;
        } else {
            b = x;
        }
    }
    Some((mean, a.exp()))
}
