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

mod sampler;
#[cfg(test)]
mod tests;
mod times;

use sampler::{fit, median_interval, stamp_delay, sync_captures, Exact, Invocations};
use times::{partition_from, Edges, Side};

use super::ProfileCall;
use crate::exec::Exec;
use crate::js::Scalar;
use crate::model::profile::{ProfileModel, NONE};
use crate::model::{Entry, STARTS_JS};

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

/// Bounds for each call (when `bounds`) and, for [`Estimator::Midway`] and
/// [`Estimator::LogMidway`], the calls moved in place. With `side_by_side`, independent parts
/// run as two jobs of that [`Exec`]: the sampler's measure beside the per-call tables, then
/// the midway pass beside the bounds, or the bounds in two halves.
pub(crate) fn refine(
    model: &ProfileModel,
    entries: &[Entry],
    trace_values: &[(u32, Scalar)],
    calls: &mut [ProfileCall],
    estimator: Estimator,
    bounds: bool,
    side_by_side: Option<&impl Exec>,
) -> (Sampler, Vec<Bounds>) {
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
    let ((exact, mut sampler), (runs, CallTables { ends, parents, changes }, mut edges, stacks)) = match side_by_side {
        Some(exec) => exec.join(measure, tables),
        None => (measure(), tables()),
    };
    // Gaps longer than this are placed by the call's log duration: every gap for log-midway;
    // for midway, a sampling hole (over two intervals, as the bounds count one), where a call
    // shorter than the hole most likely started near its end or ended near its start.
    let log_over = if estimator == Estimator::LogMidway { 0.0 } else { 2.0 * interval };
    let mut running = f64::NEG_INFINITY;
    let mut next = 0;
    let m = if midway { n } else { 0 };
    let mut mid = Vec::with_capacity(m);
    for (i, &ti) in t[..m].iter().enumerate() {
        let e = exact.at(i);
        let at = if e.is_nan() {
            next = partition_from(&stacks, &mut next, |x| x <= ti);
            ti + lag_within(sampler.lag_mean, stacks.get(next).map_or(f64::INFINITY, |&x| x - ti))
        } else {
            e
        };
        // Most likely times never go back: a child's start stays within its parent's.
        running = running.max(at);
        mid.push(running);
    }
    let cap = Captures { t, exact, lag_bound: sampler.lag_bound, stamp_delay: sampler.stamp_delay, mid };
    // Each call's bounds, from DevTools' own call, and how many calls one sample alone showed.
    let bound = |range: std::ops::Range<usize>| {
        if !bounds {
            return (Vec::new(), 0u32);
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
    // Each call moved: in call order, a parent before its children.
    let mut move_calls = || {
        let mut js_starts = JsStarts { entries, next: 0, open: Vec::new(), last: f64::NEG_INFINITY };
        let mut moved = Vec::with_capacity(calls_seen.len());
        // Per parent call (slot 0: the outermost calls), where its last child ends once moved.
        let mut sibling_end = vec![f64::NEG_INFINITY; calls_seen.len() + 1];
        for (c, call) in calls_seen.iter().enumerate() {
            let parent = parents.get(c).copied().flatten();
            let depth = model.nodes[call.node as usize].depth;
            let end = call.ts + call.dur;
            let (mut start, mut stop) = (call.ts, end);
            let k = call.sample_index;
            if k >= 0 && (k as usize) < n {
                let k = k as usize;
                let j = ends[c] as usize;
                let prev = k.checked_sub(1);
                let mut mid_before = prev.map_or(cap.mid[k], |p| cap.mid[p]);
                // The lowest frame a sample opens has its parent opened earlier (or none).
                let lowest = parent.is_none_or(|p| calls_seen[p as usize].sample_index != call.sample_index);
                // The last tick before: a synchronous sample taken at the invocation's start
                // says only that the function had not started; a tick after the start that
                // did not show the function (compiling, say) says it started later.
                let tick = (k.saturating_sub(8)..k).rev().find(|&i| cap.exact.at(i).is_nan());
                let began = invocation_began(js_starts.at(cap.t[k]), tick.map_or(f64::NAN, |i| cap.t[i]));
                if let Some(b0) = began {
                    mid_before = mid_before.max(b0);
                }
                let s = match began {
                    // The invoked function starts as its invocation does.
                    Some(b0) if lowest => Place::At(b0),
                    _ => Place::Gap(mid_before, cap.mid[k], changes.place(k, depth, Side::Start)),
                };
                let e = midway_end(&cap, &changes, depth, calls_seen, parent, j, call);
                (start, stop) = place_both(s, e, log_over);
            } else if k < 0 {
                // A frame of a trace event's stack: its end moves, its start is its event's.
                let last = ends[c] as usize;
                if last > 0 {
                    let e = midway_end(&cap, &changes, depth, calls_seen, parent, last, call);
                    stop = place_both(Place::At(start), e, log_over).1;
                }
            }
            // Whole µs (the estimate is not finer than that), and across or onto no start or
            // end of an event: the call nests among the events as DevTools nests it.
            let mut start = edges.keep_side(start.round(), call.ts, Side::Start);
            let mut stop = edges.keep_side(stop.round(), end, Side::End);
            // Within its parent (moved first: it was made first), after its earlier siblings.
            if let Some(&(ps, pe)) = parent.and_then(|p| moved.get(p as usize)) {
                (start, stop) = (start.clamp(ps, pe), stop.clamp(ps, pe));
            }
            // (An outermost frame's siblings are the other outermost calls; a deeper call whose
            // parent was not found has none known.)
            let slot = match parent {
                Some(p) => Some(p as usize + 1),
                None => (depth <= 0).then_some(0),
            };
            if let Some(slot) = slot {
                start = start.max(sibling_end[slot]);
            }
            stop = stop.max(start);
            if let Some(slot) = slot {
                sibling_end[slot] = stop;
            }
            moved.push((start, stop));
        }
        moved
    };
    let all = 0..calls_seen.len();
    // Midway's pass and the bounds do not depend on each other, nor one call's bounds on
    // another's (the run cache aside): on a long thread, the pass beside the bounds, or the
    // bounds in two halves.
    let (moved, (out, single_calls)) = match side_by_side {
        Some(exec) if midway && bounds => exec.join(move_calls, || bound(all)),
        Some(exec) if bounds => {
            let half = all.end / 2;
            let ((mut out, a), (rest, b)) = exec.join(|| bound(0..half), || bound(half..all.end));
            out.extend(rest);
            (Vec::new(), (out, a + b))
        }
        _ => (if midway { move_calls() } else { Vec::new() }, bound(all)),
    };
    for (call, (start, stop)) in calls.iter_mut().zip(moved) {
        call.ts = start;
        call.dur = stop - start;
    }
    sampler.single_sample_calls = bounds.then_some(single_calls);
    (sampler, out)
}

/// The samples that show a frame, and the top-level invocation each lies in: a call's bounds
/// come from the whole run of samples that show its frame (DevTools splits a call at the end of
/// any `V8.*` event, and a run may be longer than the call), cut at top-level invocations.
struct Runs<'m> {
    tour: Tour,
    /// Per sample, what a run's walk asks of it, side by side.
    rows: Vec<Row>,
    /// The top-level invocations' starts and ends.
    spans: &'m [(f64, f64)],
}

/// What [`Runs`] knows of one sample.
#[derive(Clone, Copy)]
struct Row {
    /// The [`Tour`] number of the node whose stack it shows (a GC sample shows the stack
    /// before it), `u32::MAX` for none: sample by sample, no lookup in the node table.
    shown: u32,
    /// 1 + the index of the top-level invocation it lies in, 0 for none.
    within: u32,
    /// The last sample at or before it that tells the JS stack ([`NONE`] if none).
    told_before: u32,
    /// The first sample at or after it that tells the JS stack ([`NONE`] if none).
    told_after: u32,
}

/// Per node, the last run [`Runs::run`] found, taken again once found whole: DevTools splits
/// one run into many calls (at every `V8.*` event's end), and each would walk it again. A
/// cache only (a walk finds the same run), one per pass over the calls.
struct RunCache {
    /// Per node, the last run found (first and last sample).
    last_run: Vec<(u32, u32)>,
    /// Per node, whether its last run was found whole.
    verified: Vec<bool>,
}

impl RunCache {
    fn new(nodes: usize) -> RunCache {
        RunCache { last_run: vec![(NONE, NONE); nodes], verified: vec![false; nodes] }
    }
}

impl<'m> Runs<'m> {
    /// `full`: with what [`Runs::bounds`] needs (empty otherwise).
    fn new(model: &'m ProfileModel, t: &[f64], inv: &'m Invocations, full: bool) -> Runs<'m> {
        let tour = if full { Tour::new(model) } else { Tour { first: Vec::new(), end: Vec::new() } };
        // What only the bounds need is left empty for the midway estimate alone.
        let bounded = if full { t.len() } else { 0 };
        // What a (program) or GC sample shows says nothing of the JS stack: the sampler shows
        // (program) when it fails to walk a JS stack too (DevTools then copies the stack before
        // it: the samples it repaired), and DevTools gives a GC sample the stack before it.
        // (In sample order: each is taken at its own sample.)
        let (program, gc) = (model.program.unwrap_or(NONE), model.gc.unwrap_or(NONE));
        let mut repaired = model.repaired.iter().map(|&r| r as usize).peekable();
        let (mut last, mut q, mut told) = (NONE, 0, NONE);
        let samples = model.sample_nodes[..bounded].iter().zip(&t[..bounded]).enumerate();
        let mut rows: Vec<Row> = samples
            .map(|(i, (&found, &x))| {
                let node = if found == gc && found != NONE && last != NONE { last } else { found };
                last = node;
                while q < inv.0.len() && inv.0[q].1 <= x {
                    q += 1;
                }
                let within = match inv.0.get(q) {
                    Some(&(b, _)) if b <= x => q as u32 + 1,
                    _ => 0,
                };
                let repair = repaired.next_if_eq(&i).is_some();
                if !(repair || found == NONE || found == program || found == gc) {
                    told = i as u32;
                }
                let shown = if node == NONE { u32::MAX } else { tour.first[node as usize] };
                Row { shown, within, told_before: told, told_after: NONE }
            })
            .collect();
        // Sample i tells the stack exactly when the last one at or before it that does is i.
        told = NONE;
        for (i, row) in rows.iter_mut().enumerate().rev() {
            if row.told_before as usize == i {
                told = i as u32;
            }
            row.told_after = told;
        }
        Runs { tour, rows, spans: &inv.0 }
    }

    /// Whether sample `i` shows `node`'s frame (the node is on its stack).
    fn shows(&self, i: usize, node: u32) -> bool {
        self.tour.span(node).contains(&self.rows[i].shown)
    }

    /// The run of samples showing `node` that holds samples `first..=last`: across samples that
    /// do not tell the stack, within one top-level invocation.
    fn run(&self, cache: &mut RunCache, node: u32, first: usize, last: usize) -> (usize, usize) {
        let span = self.tour.span(node);
        let (c0, c1) = cache.last_run[node as usize];
        if c0 != NONE && c0 as usize <= first && last <= c1 as usize {
            // Checked only now that it is asked for again: most runs never are.
            if cache.verified[node as usize] || self.whole(span.clone(), c0 as usize, c1 as usize) {
                cache.verified[node as usize] = true;
                return (c0 as usize, c1 as usize);
            }
        }
        let (mut r0, mut r1) = (first, last);
        // The run goes on across samples that do not tell the stack.
        while let Some(p) = r0.checked_sub(1).map(|i| self.rows[i].told_before).filter(|&i| i != NONE) {
            let p = p as usize;
            if self.rows[p].within != self.rows[r0].within || !span.contains(&self.rows[p].shown) {
                break;
            }
            r0 = p;
        }
        while let Some(q) = self.rows.get(r1 + 1).map(|r| r.told_after).filter(|&i| i != NONE) {
            let q = q as usize;
            if self.rows[q].within != self.rows[r1].within || !span.contains(&self.rows[q].shown) {
                break;
            }
            r1 = q;
        }
        // Kept for the next calls, to be used once found whole (`Runs::whole`).
        cache.last_run[node as usize] =
            if self.told(r0) && self.told(r1) { (r0 as u32, r1 as u32) } else { (NONE, NONE) };
        cache.verified[node as usize] = false;
        (r0, r1)
    }

    /// Whether a walk from anywhere in `r0..=r1` ends at its ends: they tell the stack, every
    /// sample in it is in one invocation and every one that tells the stack shows the node.
    fn whole(&self, span: std::ops::Range<u32>, r0: usize, r1: usize) -> bool {
        self.told(r0)
            && self.told(r1)
            && self.rows[r0..=r1].iter().enumerate().all(|(k, row)| {
                row.within == self.rows[r0].within && (row.told_before as usize != r0 + k || span.contains(&row.shown))
            })
    }

    /// Whether sample `i` tells the JS stack.
    fn told(&self, i: usize) -> bool {
        self.rows[i].told_before as usize == i
    }

    /// The bounds of a call of `node` seen from sample `first` to sample `last`, and whether
    /// only one sample showed it.
    fn bounds(
        &self,
        cache: &mut RunCache,
        cap: &Captures,
        node: u32,
        first: usize,
        last: usize,
        interval: f64,
    ) -> (Bounds, bool) {
        let (r0, r1) = self.run(cache, node, first, last);
        let before = r0.checked_sub(1).map(|i| self.rows[i].told_before).filter(|&i| i != NONE).map(|i| i as usize);
        let after = self.rows.get(r1 + 1).map(|r| r.told_after).filter(|&i| i != NONE).map(|i| i as usize);
        // Samples cannot tell back-to-back calls of one function apart: the run may hold several,
        // so any of them started by the run's last sample and ended after its first, or, where
        // no sample was taken for over two intervals, anywhere in that gap.
        let mut b = [f64::NAN, cap.hi(r1), cap.lo(r0), f64::NAN];
        if let Some(i) = before {
            b[0] = cap.lo(i);
            if cap.t[r0] - cap.t[i] > 2.0 * interval {
                b[2] = cap.lo(i);
            }
        }
        if let Some(i) = after {
            b[3] = cap.hi(i);
            if cap.t[i] - cap.t[r1] > 2.0 * interval {
                b[1] = cap.hi(i);
            }
        }
        // The run lies in one top-level invocation (or none): the call began and ended in it.
        if let Some(&(begin, end)) = (self.rows[r0].within as usize).checked_sub(1).and_then(|w| self.spans.get(w)) {
            b[0] = if b[0] > begin { b[0] } else { begin };
            b[3] = if b[3] < end { b[3] } else { end };
            b[1] = b[1].min(end);
            b[2] = b[2].max(begin);
        }
        (b, r0 == r1)
    }

    /// The bounds of `call`, whole µs outward, and whether only one sample showed it; `end`
    /// is the first sample at or after its end. Unbounded for a frame of an event's stack that
    /// no sample shows.
    fn of_call(
        &self,
        cache: &mut RunCache,
        cap: &Captures,
        call: &ProfileCall,
        end: usize,
        interval: f64,
    ) -> (Bounds, bool) {
        let n = self.rows.len();
        let first = match usize::try_from(call.sample_index) {
            Ok(k) if k < n => Some(k),
            Ok(_) => None,
            // A frame of a trace event's stack: bounded by the samples that show it, if any.
            Err(_) => {
                Some(cap.t[..end].partition_point(|&x| x < call.ts)).filter(|&f| f < end && self.shows(f, call.node))
            }
        };
        let Some(first) = first else { return ([f64::NAN; 4], false) };
        let (b, single) = self.bounds(cache, cap, call.node, first, end - 1, interval);
        // Whole µs, outward: what trace times resolve, and shorter to write.
        ([b[0].floor(), b[1].ceil(), b[2].floor(), b[3].ceil()], single)
    }
}

/// The profile tree numbered in depth-first order: a node holds the nodes numbered from its own
/// number to the end of its subtree's, so "is on the stack of" is two comparisons.
struct Tour {
    first: Vec<u32>,
    end: Vec<u32>,
}

impl Tour {
    fn new(model: &ProfileModel) -> Tour {
        let n = model.nodes.len();
        // Children in one array, by parent (`at[p]..at[p + 1]`), in node order.
        let mut at = vec![0u32; n + 1];
        for nd in &model.nodes {
            if nd.parent != NONE {
                at[nd.parent as usize + 1] += 1;
            }
        }
        for i in 0..n {
            at[i + 1] += at[i];
        }
        let mut fill = at.clone();
        let mut kids = vec![0u32; at[n] as usize];
        let mut roots = Vec::new();
        for (i, nd) in model.nodes.iter().enumerate() {
            match nd.parent {
                NONE => roots.push(i as u32),
                p => {
                    kids[fill[p as usize] as usize] = i as u32;
                    fill[p as usize] += 1;
                }
            }
        }
        let (mut first, mut end) = (vec![u32::MAX; n], vec![0; n]);
        let mut next = 0u32;
        // (node, whether its children were pushed): an explicit stack, for any depth.
        let mut stack: Vec<(u32, bool)> = roots.into_iter().rev().map(|r| (r, false)).collect();
        while let Some((x, done)) = stack.pop() {
            if done {
                end[x as usize] = next;
                continue;
            }
            if first[x as usize] != u32::MAX {
                continue;
            }
            first[x as usize] = next;
            next += 1;
            stack.push((x, true));
            let (a, b) = (at[x as usize] as usize, at[x as usize + 1] as usize);
            stack.extend(kids[a..b].iter().rev().map(|&c| (c, false)));
        }
        Tour { first, end }
    }

    /// The numbers of `node` and the nodes under it (empty for a node the tree does not reach).
    fn span(&self, node: u32) -> std::ops::Range<u32> {
        let a = node as usize;
        match self.first[a] {
            u32::MAX => 0..0,
            f => f..self.end[a],
        }
    }
}

/// `start`, the start of the innermost event holding a sample that runs a JS function at
/// once (NaN for none), when it began at or after `after` (or with no sample before).
fn invocation_began(start: f64, after: f64) -> Option<f64> {
    (!start.is_nan() && (after.is_nan() || start >= after)).then_some(start)
}

/// The events that run a JS function at once ([`STARTS_JS`]), walked forward as the calls'
/// samples come (in time order): those open at a time, a stack of their (start, end), as a
/// walk over every sample would leave it (an event that ended is let out once on top).
struct JsStarts<'e> {
    entries: &'e [Entry],
    /// The first entry not yet walked.
    next: usize,
    open: Vec<(f64, f64)>,
    /// The last time asked.
    last: f64,
}

impl JsStarts<'_> {
    /// The start of the innermost such event holding time `t`, NaN for none.
    fn at(&mut self, t: f64) -> f64 {
        if t < self.last {
            // Asked out of order: walked again from the start.
            (self.next, self.last) = (0, f64::NEG_INFINITY);
            self.open.clear();
        }
        self.last = t;
        while let Some(e) = self.entries.get(self.next) {
            if e.flags & STARTS_JS != 0 && e.dur > 0.0 {
                if e.ts > t || e.ts.is_nan() {
                    break;
                }
                self.open.push((e.ts, e.end()));
            }
            self.next += 1;
        }
        while self.open.last().is_some_and(|&(_, end)| end <= t) {
            self.open.pop();
        }
        self.open.last().map_or(f64::NAN, |&(b, _)| b)
    }
}

/// The mean of an exponential lag of mean `m` known to be at most `w`.
fn lag_within(m: f64, w: f64) -> f64 {
    if m <= 0.0 || w <= 0.0 {
        return 0.0;
    }
    let r = w / m;
    // Past 12 the correction is under w·e⁻¹², far below the µs the estimate is rounded to:
    // no exponential per tick.
    if r > 12.0 {
        m
    } else {
        m - w / r.exp_m1()
    }
}

/// The times at which the JS stack is known exactly, sorted: the starts of the stacks events
/// carry. (The ends of events that run JS would bound the lag too; left out because a capped
/// tick moves and its neighbours do not, which made durations worse on a lagging sampler.)
fn stack_times(calls: &[ProfileCall]) -> Vec<f64> {
    let mut v: Vec<f64> = calls.iter().filter(|c| c.sample_index < 0).map(|c| c.ts).collect();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// What the calls' boundaries need to know of one another, made in one pass over the calls.
struct CallTables {
    /// Per call, the first sample at or after its end (`t.len()` for none): the one that closed
    /// the call or, when an event's end closed it, the first after that (with bounds or midway).
    ends: Vec<u32>,
    /// Per call, the call it was opened inside: the last one made a level up, when it holds the
    /// call's start (midway). By depth, not by node: DevTools goes on with a call across a
    /// frame equal to its own under another node.
    parents: Vec<Option<u32>>,
    /// The calls DevTools ended and opened on each sample (midway).
    changes: Changes,
}

impl CallTables {
    fn new(model: &ProfileModel, calls: &[ProfileCall], t: &[f64], bounds: bool, midway: bool) -> CallTables {
        let none = Change { closed: 0, deepest_closed: i32::MIN, opened: 0, outermost_opened: i32::MAX };
        let mut at = vec![none; if midway && !calls.is_empty() { t.len() } else { 0 }];
        let mut ends = Vec::with_capacity(if bounds || midway { calls.len() } else { 0 });
        let mut parents = Vec::with_capacity(if midway { calls.len() } else { 0 });
        // Per depth, the last call made at it.
        let mut last_at_depth: Vec<u32> = Vec::new();
        if !(bounds || midway) {
            return CallTables { ends, parents, changes: Changes { at } };
        }
        for (c, call) in calls.iter().enumerate() {
            let end = call.ts + call.dur;
            let k = usize::try_from(call.sample_index).ok().filter(|&k| k < t.len());
            let j = match k {
                Some(k) => {
                    let mut j = k + 1;
                    partition_from(t, &mut j, |v| v < end).max(k + 1)
                }
                None => t.partition_point(|&x| x < end),
            };
            ends.push(j as u32);
            if !midway {
                continue;
            }
            let node = &model.nodes[call.node as usize];
            let depth = usize::try_from(node.depth).ok();
            let found = depth.and_then(|d| last_at_depth.get(d.checked_sub(1)?).copied()).filter(|&pc| {
                pc != NONE && {
                    let pc = &calls[pc as usize];
                    pc.ts <= call.ts && call.ts <= pc.ts + pc.dur
                }
            });
            parents.push(found);
            if let Some(d) = depth {
                if last_at_depth.len() <= d {
                    last_at_depth.resize(d + 1, NONE);
                }
                last_at_depth[d] = c as u32;
            }
            if let Some(ch) = k.and_then(|k| at.get_mut(k)) {
                ch.opened += 1;
                ch.outermost_opened = ch.outermost_opened.min(node.depth);
            }
            if let Some(ch) = at.get_mut(j).filter(|_| t[j] == end) {
                ch.closed += 1;
                ch.deepest_closed = ch.deepest_closed.max(node.depth);
            }
        }
        CallTables { ends, parents, changes: Changes { at } }
    }
}

/// The midway end of `call` (a frame `call_depth` deep), where `j` is the first sample at or
/// after its end (and `j − 1` the last before it).
fn midway_end(
    cap: &Captures,
    changes: &Changes,
    call_depth: i32,
    calls: &[ProfileCall],
    parent: Option<u32>,
    j: usize,
    call: &ProfileCall,
) -> Place {
    let end = call.ts + call.dur;
    // The last time the call is known to run: the last sample before its end, or its start
    // when an event started it after that sample.
    let running = cap.mid[j - 1].max(call.ts);
    if j < cap.mid.len() && cap.t[j] == end {
        return Place::Gap(running, cap.mid[j], changes.place(j, call_depth, Side::End));
    }
    // Truncated at an event's end: the invoked function ends there, the frames it called
    // somewhere after their last sample.
    let outermost = parent.is_none_or(|p| {
        let p = &calls[p as usize];
        p.ts + p.dur != end
    });
    if outermost {
        Place::At(end)
    } else {
        Place::Gap(running.min(end), end, 0.5)
    }
}

/// Where a boundary lies: at a known time, or between `a` and `b` at the fraction `f` of the
/// way (the share of its probability before that point).
#[derive(Clone, Copy)]
enum Place {
    At(f64),
    Gap(f64, f64, f64),
}

/// A call's start and end from where each lies: at the fraction `f` of its gap in time, or,
/// for a gap longer than `log_over`, of its gap in the logarithm of the call's duration given
/// the other end (placed by time). A start in `(a, b)` with the end at `e` leaves a duration
/// between `e − b` and `e − a`; the point at `f` of that range on a log scale is
/// `e − (e − a)·((e − b)/(e − a))^f` (½: the geometric mean of the two durations), and the
/// same for an end.
fn place_both(s: Place, e: Place, log_over: f64) -> (f64, f64) {
    let linear = |p: Place| match p {
        Place::At(x) => x,
        Place::Gap(a, b, f) => a + f * (b - a),
    };
    let (s0, e0) = (linear(s), linear(e));
    let by_log = |p: Place| matches!(p, Place::Gap(a, b, _) if b - a > log_over);
    if !by_log(s) && !by_log(e) {
        return (s0, e0);
    }
    // Most boundaries are a lone change, halfway: a square root, not a power.
    let pow = |x: f64, f: f64| if f == 0.5 { x.sqrt() } else { x.powf(f) };
    let start = match s {
        Place::Gap(a, b, f) if by_log(s) && b < e0 => e0 - (e0 - a) * pow((e0 - b) / (e0 - a), f),
        _ => s0,
    };
    let end = match e {
        Place::Gap(a, b, f) if by_log(e) && s0 < a => s0 + (a - s0) * pow((b - s0) / (a - s0), f),
        _ => e0,
    };
    (start, end)
}

/// Where between two samples a frame most likely opened or closed. Between sample `k − 1` and
/// sample `k` the frames that close do so innermost first and those that open outermost first,
/// closing before opening; with nothing else known the K changes spread evenly over the gap,
/// the i-th at i / (K + 1) of it (the mean of the i-th of K uniform times). A single change
/// lies halfway; two frames swapped at one depth, the end at a third, the start at two thirds.
/// The changes are DevTools' own: the calls it ended on a sample and opened at it.
struct Changes {
    /// Per sample: the calls that ended on it and the deepest one's depth, the calls opened at
    /// it and the outermost one's depth.
    at: Vec<Change>,
}

#[derive(Clone, Copy)]
struct Change {
    closed: u32,
    deepest_closed: i32,
    opened: u32,
    outermost_opened: i32,
}

impl Changes {
    /// The fraction of the gap from sample `k − 1`'s capture to sample `k`'s at which a frame
    /// of this `depth` most likely started (`Side::Start`, opened at `k`) or ended (`Side::End`,
    /// ended on `k`).
    fn place(&self, k: usize, depth: i32, side: Side) -> f64 {
        let Some(c) = self.at.get(k) else { return 0.5 };
        // The frame's place in the order of the changes (1 for the first).
        let i = match side {
            Side::Start => i64::from(c.closed) + i64::from(depth) - i64::from(c.outermost_opened) + 1,
            Side::End => i64::from(c.deepest_closed) - i64::from(depth) + 1,
        };
        let n = i64::from(c.closed) + i64::from(c.opened);
        if (1..=n).contains(&i) {
            i as f64 / (n + 1) as f64
        } else {
            0.5 // not among the changes counted there (an odd stack): halfway
        }
    }
}
