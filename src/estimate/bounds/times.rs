//! Times in order: the events' edges a boundary keeps to its side of, and integer keys that
//! sort times as `f64::total_cmp` does.

use itertools::Itertools;

use crate::model::Entry;

/// Every start and every end of the thread's events that last, in one sorted list (a boundary
/// keeps to its side of either alike), with where the last searches ended (calls come in time
/// order: the next answer is near).
pub(super) struct Edges {
    pub(super) times: Vec<f64>,
    /// Per side of a call that is moved (start, end): the last answer.
    hints: [usize; 2],
}

/// The side of a call a boundary is on (its start or its end).
#[derive(Clone, Copy)]
pub(super) enum Side {
    Start = 0,
    End = 1,
}

impl Edges {
    pub(super) fn new(entries: &[Entry]) -> Edges {
        let lasting = || entries.iter().filter(|e| e.dur > 0.0);
        // Entries come sorted by start: their ends need only be let in among them.
        let times = ordered_edges(lasting()).unwrap_or_else(|| {
            let (mut starts, mut ends): (Vec<f64>, Vec<f64>) = lasting().map(|e| (e.ts, e.end())).unzip();
            sort_times(&mut starts);
            sort_times(&mut ends);
            merge_times(&starts, &ends)
        });
        Edges { times, hints: [0; 2] }
    }

    /// `x` (whole µs) moved back toward `from` as far as needed to stay strictly on `from`'s
    /// side of every edge: a whole µs past the nearest edge, or `from` itself. On an edge, a
    /// call would nest differently: a start at an event's start sorts after the event, an end
    /// at an event's start closes the call before the event.
    pub(super) fn keep_side(&mut self, x: f64, from: f64, side: Side) -> f64 {
        let (v, hint) = (&self.times, &mut self.hints[side as usize]);
        if x < from {
            let i = partition_from(v, hint, |e| e <= from);
            i.checked_sub(1).map_or(x, |i| x.max((v[i].floor() + 1.0).min(from)))
        } else if x > from {
            let i = partition_from(v, hint, |e| e < from);
            v.get(i).map_or(x, |&e| x.min((e.ceil() - 1.0).max(from)))
        } else {
            x
        }
    }
}

/// Two lists sorted in `f64::total_cmp`'s order, merged in that order.
pub(super) fn merge_times(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().copied().merge_by(b.iter().copied(), |x, y| y.total_cmp(x).is_ge()).collect()
}

/// The starts and ends of events that come in order of their starts, in `f64::total_cmp`'s
/// order (None when the starts are not in order): each end is let out of a heap of the open
/// events' ends once an event starts at or after it. Events mostly nest, so the heap stays as
/// shallow as the stack of open events.
pub(super) fn ordered_edges<'a>(events: impl Iterator<Item = &'a Entry>) -> Option<Vec<f64>> {
    let mut out = Vec::with_capacity(2 * events.size_hint().0);
    let mut open = std::collections::BinaryHeap::new();
    let mut last = f64::NEG_INFINITY;
    for e in events {
        // Out of order, or a NaN (no order): sorted the general way.
        if e.ts < last || e.ts.is_nan() || e.end().is_nan() {
            return None;
        }
        last = e.ts;
        while let Some(&std::cmp::Reverse(x)) = open.peek().filter(|&&std::cmp::Reverse(x)| x <= time_key(e.ts)) {
            open.pop();
            out.push(key_time(x));
        }
        out.push(e.ts);
        open.push(std::cmp::Reverse(time_key(e.end())));
    }
    while let Some(std::cmp::Reverse(x)) = open.pop() {
        out.push(key_time(x));
    }
    Some(out)
}

/// An integer that orders times as `f64::total_cmp` does (equal keys are equal bits).
pub(super) fn time_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// The time of a [`time_key`] (the same flip undoes it).
pub(super) fn key_time(k: i64) -> f64 {
    f64::from_bits((k ^ (((k >> 63) as u64) >> 1) as i64) as u64)
}

/// Sorts times in `f64::total_cmp`'s order, by the integer keys that order compares (equal keys
/// are equal bits: no order among them to keep). Faster than comparing floats.
pub(super) fn sort_times(v: &mut [f64]) {
    v.sort_unstable_by_key(|&x| time_key(x));
}

/// `v.partition_point(pred)` for a `pred` true then false along `v`, searched outward from
/// `hint` (galloping); `hint` becomes the answer.
pub(super) fn partition_from(v: &[f64], hint: &mut usize, pred: impl Fn(f64) -> bool) -> usize {
    let h = (*hint).min(v.len());
    let p = if h < v.len() && pred(v[h]) {
        // After `h`: every value up to `lo` satisfies `pred`.
        let (mut lo, mut step) = (h + 1, 1);
        while lo + step <= v.len() && pred(v[lo + step - 1]) {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(v.len());
        lo + v[lo..hi].partition_point(|&e| pred(e))
    } else {
        // At or before `h`: no value from `hi` on satisfies `pred`.
        let (mut hi, mut step) = (h, 1);
        while hi >= step && !pred(v[hi - step]) {
            hi -= step;
            step *= 2;
        }
        let lo = hi.saturating_sub(step);
        lo + v[lo..hi].partition_point(|&e| pred(e))
    };
    *hint = p;
    p
}
