//! Two estimates of one recording, call by call. A call is identified by its thread (pid,
//! tid), its profile node and the sample that opened it; calls that share these (frames from
//! `sampleTraceId`s, whose sample index is −1) are paired in time order.

use super::{CallRecord, ThreadEstimate};
use crate::tree::Func;

/// What happened to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeKind {
    /// Only NEW has it.
    Added,
    /// Only BASE has it.
    Removed,
    /// Both have it, with another start, duration, self time or depth.
    Changed,
}

impl ChangeKind {
    /// `added`, `removed`, `changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
        }
    }
}

/// One call that differs, borrowed from the estimates compared (a diff of two estimates of a
/// large trace may change every call: owned copies doubled the command's memory).
#[derive(Debug, Clone, Copy)]
pub struct CallChange<'a> {
    /// What happened.
    pub kind: ChangeKind,
    /// The call's function.
    pub func: &'a Func,
    /// The call in BASE.
    pub base: Option<&'a CallRecord>,
    /// The call in NEW.
    pub new: Option<&'a CallRecord>,
}

impl CallChange<'_> {
    /// How much it moved, µs: the largest change of start, end or self time; an added or
    /// removed call's duration.
    pub fn size(&self) -> f64 {
        match (&self.base, &self.new) {
            (Some(b), Some(n)) => {
                let d_self = (n.self_time().unwrap_or(0.0) - b.self_time().unwrap_or(0.0)).abs();
                (n.ts() - b.ts()).abs().max((n.ts() + n.dur() - b.ts() - b.dur()).abs()).max(d_self)
            }
            (Some(c), None) | (None, Some(c)) => c.dur(),
            (None, None) => 0.0,
        }
    }

    fn key(&self) -> (i64, i64, f64) {
        let c = self.base.or(self.new).expect("a change has a side");
        (c.node_id(), c.sample_index(), c.ts())
    }
}

/// One thread's differences.
#[derive(Debug, Clone)]
pub struct ThreadDiff<'a> {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// Its name.
    pub name: Option<String>,
    /// Calls in BASE (0 when only NEW has the thread).
    pub base_calls: usize,
    /// Calls in NEW.
    pub new_calls: usize,
    /// The calls that differ, largest change first.
    pub changes: Vec<CallChange<'a>>,
}

impl ThreadDiff<'_> {
    /// How many changes are of `kind`.
    pub fn count(&self, kind: ChangeKind) -> usize {
        self.changes.iter().filter(|c| c.kind == kind).count()
    }

    /// The sum over matched calls of |Δduration|, µs.
    pub fn sum_abs_dur(&self) -> f64 {
        self.changes.iter().filter_map(|c| Some((c.new?.dur() - c.base?.dur()).abs())).fold(0.0, |a, b| a + b)
    }
}

/// Pairs two time-sorted lists of calls that share a key: calls that start at the same time
/// first, then the others in order (a call one side has and the other lacks must not shift
/// every later pairing).
fn pair_in_time(
    bs: &[usize],
    ns: &[usize],
    bts: impl Fn(usize) -> f64,
    nts: impl Fn(usize) -> f64,
) -> Vec<(Option<usize>, Option<usize>)> {
    if bs.len() <= 1 && ns.len() <= 1 {
        return vec![(bs.first().copied(), ns.first().copied())];
    }
    let (mut b_used, mut n_used) = (vec![false; bs.len()], vec![false; ns.len()]);
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < bs.len() && j < ns.len() {
        let (tb, tn) = (bts(bs[i]), nts(ns[j]));
        if tb == tn {
            out.push((Some(bs[i]), Some(ns[j])));
            (b_used[i], n_used[j]) = (true, true);
            i += 1;
            j += 1;
        } else if tb < tn {
            i += 1;
        } else {
            j += 1;
        }
    }
    let rest_b: Vec<usize> = (0..bs.len()).filter(|&k| !b_used[k]).map(|k| bs[k]).collect();
    let rest_n: Vec<usize> = (0..ns.len()).filter(|&k| !n_used[k]).map(|k| ns[k]).collect();
    for k in 0..rest_b.len().max(rest_n.len()) {
        out.push((rest_b.get(k).copied(), rest_n.get(k).copied()));
    }
    out
}

/// The threads of both sides, by (pid, tid), with their differences.
pub fn diff<'a>(base: &'a [ThreadEstimate], new: &'a [ThreadEstimate]) -> Vec<ThreadDiff<'a>> {
    let mut ids: Vec<(i64, i64)> = base.iter().chain(new).map(|t| (t.pid, t.tid)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .filter(|&(pid, tid)| {
            let has = |s: &[ThreadEstimate]| s.iter().any(|t| (t.pid, t.tid) == (pid, tid) && !t.calls.is_empty());
            has(base) || has(new)
        })
        .map(|(pid, tid)| {
            let b = base.iter().find(|t| (t.pid, t.tid) == (pid, tid));
            let n = new.iter().find(|t| (t.pid, t.tid) == (pid, tid));
            let name = b.or(n).and_then(|t| t.name.clone());
            ThreadDiff {
                pid,
                tid,
                name,
                base_calls: b.map_or(0, |t| t.calls.len()),
                new_calls: n.map_or(0, |t| t.calls.len()),
                changes: thread_changes(b, n),
            }
        })
        .collect()
}

fn thread_changes<'a>(base: Option<&'a ThreadEstimate>, new: Option<&'a ThreadEstimate>) -> Vec<CallChange<'a>> {
    // Each side's calls by (node, sample), in time order within a key (a stable sort of the
    // calls, which are in time order): runs of one key, walked side by side in key order. (A
    // map of lists held ~100 bytes a call.)
    fn by_key(t: Option<&ThreadEstimate>) -> (Vec<usize>, Vec<(i64, i64)>) {
        let calls = t.map_or(&[][..], |t| &t.calls[..]);
        let mut order: Vec<usize> = (0..calls.len()).collect();
        let key = |k: usize| (calls[k].node_id(), calls[k].sample_index());
        order.sort_by_key(|&k| key(k));
        let keys = order.iter().map(|&k| key(k)).collect();
        (order, keys)
    }
    let ((bo, bk), (no, nk)) = (by_key(base), by_key(new));
    let func = |t: &'a ThreadEstimate, k: usize| &t.stacks.funcs[(t.func_of(k)).index()];
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < bo.len() || j < no.len() {
        // The next key of either side, and its run on each.
        let key = match (bk.get(i), nk.get(j)) {
            (Some(a), Some(b)) => *a.min(b),
            (Some(a), None) => *a,
            (None, Some(b)) => *b,
            (None, None) => break,
        };
        let run = |keys: &[(i64, i64)], from: usize| from + keys[from..].iter().take_while(|k| **k == key).count();
        let (i2, j2) = (run(&bk, i), run(&nk, j));
        let (bs, ns) = (&bo[i..i2], &no[j..j2]);
        (i, j) = (i2, j2);
        let pairs =
            pair_in_time(bs, ns, |k| base.expect("indexed").calls[k].ts(), |k| new.expect("indexed").calls[k].ts());
        for (b, n) in pairs {
            let b = b.map(|k| (base.expect("indexed"), k));
            let n = n.map(|k| (new.expect("indexed"), k));
            let change = match (b, n) {
                (Some((bt, bk)), Some((nt, nk))) => {
                    let (bc, nc) = (&bt.calls[bk], &nt.calls[nk]);
                    if bc.same_times(nc) {
                        continue;
                    }
                    CallChange { kind: ChangeKind::Changed, func: func(nt, nk), base: Some(bc), new: Some(nc) }
                }
                (Some((bt, bk)), None) => {
                    CallChange { kind: ChangeKind::Removed, func: func(bt, bk), base: Some(&bt.calls[bk]), new: None }
                }
                (None, Some((nt, nk))) => {
                    CallChange { kind: ChangeKind::Added, func: func(nt, nk), base: None, new: Some(&nt.calls[nk]) }
                }
                (None, None) => unreachable!("j < the longer list"),
            };
            out.push(change);
        }
    }
    out.sort_by(|a, b| {
        b.size().total_cmp(&a.size()).then_with(|| {
            let (ka, kb) = (a.key(), b.key());
            ka.2.total_cmp(&kb.2).then(ka.0.cmp(&kb.0)).then(ka.1.cmp(&kb.1))
        })
    });
    out
}
