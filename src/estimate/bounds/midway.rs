//! The midway estimate (`--estimator midway`, `log-midway`): each boundary moved from
//! DevTools' sample to the most likely time between the captures around it.

use super::sampler::Exact;
use super::tables::{Changes, Nesting, Opened};
use super::times::{partition_from, Edges, Side};
use super::Captures;
use crate::estimate::ProfileCall;
use crate::model::profile::ProfileModel;
use crate::model::{Entry, STARTS_JS};

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
pub(super) fn lag_within(m: f64, w: f64) -> f64 {
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
pub(super) fn stack_times(calls: &[ProfileCall]) -> Vec<f64> {
    let mut v: Vec<f64> = calls.iter().filter(|c| c.sample_index < 0).map(|c| c.ts).collect();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// The midway end of `call` (a frame `call_depth` deep, opened inside a call that DevTools
/// ends at `parent_end`), where `j` is the first sample at or after its end (and `j − 1` the
/// last before it).
fn midway_end(
    cap: &Captures,
    changes: &Changes,
    call_depth: i32,
    parent_end: Option<f64>,
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
    if parent_end.is_none_or(|p| p != end) {
        Place::At(end)
    } else {
        Place::Gap(running.min(end), end, 0.5)
    }
}

/// Where a boundary lies: at a known time, or between `a` and `b` at the fraction `f` of the
/// way (the share of its probability before that point).
#[derive(Clone, Copy)]
pub(super) enum Place {
    At(f64),
    Gap(f64, f64, f64),
}

/// A call's start and end from where each lies: at the fraction `f` of its gap in time, or,
/// for a gap longer than `log_over`, of its gap in the logarithm of the call's duration given
/// the other end (placed by time). A start in `(a, b)` with the end at `e` leaves a duration
/// between `e − b` and `e − a`; the point at `f` of that range on a log scale is
/// `e − (e − a)·((e − b)/(e − a))^f` (½: the geometric mean of the two durations), and the
/// same for an end.
pub(super) fn place_both(s: Place, e: Place, log_over: f64) -> (f64, f64) {
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

/// Each sample's most likely capture time, never going back: an exact time where the file
/// has one, else the stamp plus the mean lag within the gap to the next stack an event carries.
pub(super) fn times(t: &[f64], exact: &Exact, stacks: &[f64], lag_mean: f64) -> Vec<f64> {
    let mut running = f64::NEG_INFINITY;
    let mut next = 0;
    let mut mid = Vec::with_capacity(t.len());
    for (i, &ti) in t.iter().enumerate() {
        let e = exact.at(i);
        let at = if e.is_nan() {
            next = partition_from(stacks, &mut next, |x| x <= ti);
            ti + lag_within(lag_mean, stacks.get(next).map_or(f64::INFINITY, |&x| x - ti))
        } else {
            e
        };
        // Most likely times never go back: a child's start stays within its parent's.
        running = running.max(at);
        mid.push(running);
    }
    mid
}

/// The midway pass over the calls: each call's start and end moved, in call order (a parent
/// before its children).
pub(super) struct Pass<'a> {
    pub(super) model: &'a ProfileModel,
    pub(super) entries: &'a [Entry],
    /// Per call, the first sample at or after its end.
    pub(super) ends: &'a [u32],
    pub(super) changes: &'a Changes,
    pub(super) cap: &'a Captures,
    /// The samples with times.
    pub(super) n: usize,
    /// Gaps longer than this are placed by the call's log duration.
    pub(super) log_over: f64,
}

impl Pass<'_> {
    /// Moves each of `n_calls` calls: `call(c)` is call `c` as DevTools made it, asked once and
    /// in order, `moved(c, start, end)` takes it moved; `edges` keeps each on its side of every
    /// event's edge. (What a call needs of its parent, the pass keeps: `moved` may write over
    /// the calls.)
    pub(super) fn move_calls(
        &self,
        edges: &mut Edges,
        n_calls: usize,
        call: impl Fn(usize) -> ProfileCall,
        mut moved: impl FnMut(usize, f64, f64),
    ) {
        let mut js_starts = JsStarts { entries: self.entries, next: 0, open: Vec::new(), last: f64::NEG_INFINITY };
        let mut nesting = Nesting::new();
        for c in 0..n_calls {
            let call = call(c);
            let depth = self.model.nodes[call.node as usize].depth;
            let parent = nesting.parent(depth, call.ts);
            let end = call.ts + call.dur;
            let (mut start, mut stop) = (call.ts, end);
            let k = call.sample_index;
            if k >= 0 && (k as usize) < self.n {
                let k = k as usize;
                let j = self.ends[c] as usize;
                let prev = k.checked_sub(1);
                let mut mid_before = prev.map_or(self.cap.mid[k], |p| self.cap.mid[p]);
                // The lowest frame a sample opens has its parent opened earlier (or none).
                let lowest = parent.is_none_or(|p| p.sample_index != call.sample_index);
                // The last tick before: a synchronous sample taken at the invocation's start
                // says only that the function had not started; a tick after the start that
                // did not show the function (compiling, say) says it started later.
                let tick = (k.saturating_sub(8)..k).rev().find(|&i| self.cap.exact.at(i).is_nan());
                let began = invocation_began(js_starts.at(self.cap.t[k]), tick.map_or(f64::NAN, |i| self.cap.t[i]));
                if let Some(b0) = began {
                    mid_before = mid_before.max(b0);
                }
                let s = match began {
                    // The invoked function starts as its invocation does.
                    Some(b0) if lowest => Place::At(b0),
                    _ => Place::Gap(mid_before, self.cap.mid[k], self.changes.place(k, depth, Side::Start)),
                };
                let e = midway_end(self.cap, self.changes, depth, parent.map(|p| p.end), j, &call);
                (start, stop) = place_both(s, e, self.log_over);
            } else if k < 0 {
                // A frame of a trace event's stack: its end moves, its start is its event's.
                let last = self.ends[c] as usize;
                if last > 0 {
                    let e = midway_end(self.cap, self.changes, depth, parent.map(|p| p.end), last, &call);
                    stop = place_both(Place::At(start), e, self.log_over).1;
                }
            }
            // Whole µs (the estimate is not finer than that), and across or onto no start or
            // end of an event: the call nests among the events as DevTools nests it.
            let mut start = edges.keep_side(start.round(), call.ts, Side::Start);
            let mut stop = edges.keep_side(stop.round(), end, Side::End);
            // Within its parent (moved first: it was made first), after its earlier siblings.
            if let Some(p) = &parent {
                (start, stop) = (start.clamp(p.start, p.stop), stop.clamp(p.start, p.stop));
            }
            // (An outermost frame's siblings are the other outermost calls; a deeper call whose
            // parent was not found has none known.)
            let siblings_end = nesting.siblings_end(parent.as_ref(), depth);
            if let Some(e) = siblings_end {
                start = start.max(e);
            }
            stop = stop.max(start);
            let opened = Opened {
                index: c as u32,
                ts: call.ts,
                end,
                sample_index: call.sample_index,
                start,
                stop,
                children_end: f64::NEG_INFINITY,
            };
            nesting.made(parent.as_ref(), depth, opened);
            moved(c, start, stop);
        }
    }
}
