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

/// One call that differs (the estimates hold their calls packed: a change holds its own).
#[derive(Debug, Clone, Copy)]
pub struct CallChange<'a> {
    /// What happened.
    pub kind: ChangeKind,
    /// The call's function.
    pub func: &'a Func,
    /// The call in BASE.
    pub base: Option<CallRecord>,
    /// The call in NEW.
    pub new: Option<CallRecord>,
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

/// Bytes of keys the threads compared side by side may hold together.
const KEYS_BUDGET: usize = 128 << 20;

/// The threads of both sides, by (pid, tid), with their differences (threads compared on
/// several cores).
pub fn diff<'a>(base: &'a [ThreadEstimate], new: &'a [ThreadEstimate]) -> Vec<ThreadDiff<'a>> {
    let mut ids: Vec<(i64, i64)> = base.iter().chain(new).map(|t| (t.pid, t.tid)).collect();
    ids.sort_unstable();
    ids.dedup();
    let pairs: Vec<_> = ids
        .into_iter()
        .map(|(pid, tid)| {
            let side = |s: &'a [ThreadEstimate]| s.iter().find(|t| (t.pid, t.tid) == (pid, tid));
            (pid, tid, side(base), side(new))
        })
        .filter(|&(pid, tid, _, _)| {
            let has = |s: &[ThreadEstimate]| s.iter().any(|t| (t.pid, t.tid) == (pid, tid) && t.calls.len() > 0);
            has(base) || has(new)
        })
        .collect();
    // Threads side by side as far as their tables of keys (24 bytes a call of either side)
    // fit in 128 MB together: on a large trace, one at a time.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let calls = |t: Option<&ThreadEstimate>| t.map_or(0, |t| t.calls.len());
    let largest = pairs.iter().map(|&(_, _, b, n)| 24 * (calls(b) + calls(n))).max().unwrap_or(0);
    let side_by_side = (KEYS_BUDGET / largest.max(1)).clamp(1, cores);
    crate::parallel::map(pairs, side_by_side, |(pid, tid, b, n)| ThreadDiff {
        pid,
        tid,
        name: b.or(n).and_then(|t| t.name.clone()),
        base_calls: b.map_or(0, |t| t.calls.len()),
        new_calls: n.map_or(0, |t| t.calls.len()),
        changes: thread_changes(b, n),
    })
}

fn thread_changes<'a>(base: Option<&'a ThreadEstimate>, new: Option<&'a ThreadEstimate>) -> Vec<CallChange<'a>> {
    // Each side's calls by (node, sample), in time order within a key (the calls are in time
    // order: their index breaks ties): runs of one key, walked side by side in key order. (A
    // map of lists held ~100 bytes a call.)
    fn by_key(t: Option<&ThreadEstimate>) -> Vec<(i64, i64, u32)> {
        let mut keys: Vec<(i64, i64, u32)> = t.map_or(Vec::new(), |t| {
            t.calls().enumerate().map(|(k, c)| (c.node_id(), c.sample_index(), k as u32)).collect()
        });
        keys.sort_unstable();
        keys
    }
    let (bk, nk) = (by_key(base), by_key(new));
    let func = |t: &'a ThreadEstimate, k: usize| t.func(t.func_of(k));
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    // The calls paired with the call at the same index on the other side (most of them, when
    // two estimates of one recording are compared): compared in one walk of both sides below,
    // not by finding each call in its packed list.
    let mut aligned = vec![0u64; bk.len().min(nk.len()).div_ceil(64)];
    let mut bs: Vec<usize> = Vec::new();
    let mut ns: Vec<usize> = Vec::new();
    while i < bk.len() || j < nk.len() {
        // The next key of either side, and its run on each.
        let key = match (bk.get(i), nk.get(j)) {
            (Some(a), Some(b)) => (a.0, a.1).min((b.0, b.1)),
            (Some(a), None) => (a.0, a.1),
            (None, Some(b)) => (b.0, b.1),
            (None, None) => break,
        };
        let run = |keys: &[(i64, i64, u32)], from: usize, to: &mut Vec<usize>| {
            to.clear();
            to.extend(keys[from..].iter().take_while(|k| (k.0, k.1) == key).map(|k| k.2 as usize));
            from + to.len()
        };
        (i, j) = (run(&bk, i, &mut bs), run(&nk, j, &mut ns));
        if let ([b], [n]) = (&bs[..], &ns[..]) {
            if b == n {
                aligned[b / 64] |= 1 << (b % 64);
                continue;
            }
        }
        let pairs =
            pair_in_time(&bs, &ns, |k| base.expect("indexed").call(k).ts(), |k| new.expect("indexed").call(k).ts());
        for (b, n) in pairs {
            let b = b.map(|k| (base.expect("indexed"), k));
            let n = n.map(|k| (new.expect("indexed"), k));
            let change = match (b, n) {
                (Some((bt, bk)), Some((nt, nk))) => {
                    let (bc, nc) = (bt.call(bk), nt.call(nk));
                    if bc.same_times(&nc) {
                        continue;
                    }
                    CallChange { kind: ChangeKind::Changed, func: func(nt, nk), base: Some(bc), new: Some(nc) }
                }
                (Some((bt, bk)), None) => {
                    CallChange { kind: ChangeKind::Removed, func: func(bt, bk), base: Some(bt.call(bk)), new: None }
                }
                (None, Some((nt, nk))) => {
                    CallChange { kind: ChangeKind::Added, func: func(nt, nk), base: None, new: Some(nt.call(nk)) }
                }
                (None, None) => unreachable!("j < the longer list"),
            };
            out.push(change);
        }
    }
    if let (Some(bt), Some(nt)) = (base, new) {
        for (k, (bc, nc)) in bt.calls.iter().zip(nt.calls.iter()).enumerate() {
            if aligned[k / 64] & 1 << (k % 64) != 0 && !bc.record.same_times(&nc.record) {
                let func = nt.func(nt.stacks.frame(nc.stack).1);
                out.push(CallChange { kind: ChangeKind::Changed, func, base: Some(bc.record), new: Some(nc.record) });
            }
        }
    }
    // (A pair at one index has a key of its own: the order below is the same whenever it is
    // found.)
    out.sort_by(|a, b| {
        b.size().total_cmp(&a.size()).then_with(|| {
            let (ka, kb) = (a.key(), b.key());
            ka.2.total_cmp(&kb.2).then(ka.0.cmp(&kb.0)).then(ka.1.cmp(&kb.1))
        })
    });
    out
}
