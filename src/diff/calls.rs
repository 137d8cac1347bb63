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
        size(self.base.as_ref(), self.new.as_ref())
    }
}

fn size(base: Option<&CallRecord>, new: Option<&CallRecord>) -> f64 {
    match (base, new) {
        (Some(b), Some(n)) => {
            let d_self = (n.self_time().unwrap_or(0.0) - b.self_time().unwrap_or(0.0)).abs();
            (n.ts() - b.ts()).abs().max((n.ts() + n.dur() - b.ts() - b.dur()).abs()).max(d_self)
        }
        (Some(c), None) | (None, Some(c)) => c.dur(),
        (None, None) => 0.0,
    }
}

/// A change as found: what it is sorted by, its |Δduration| and the calls' indices ([`NONE`] on
/// the side that lacks the call, which gives the kind).
#[derive(Debug, Clone, Copy)]
struct Found {
    size: f64,
    /// Of the call that tells (BASE's where both sides have it).
    ts: f64,
    node: i64,
    sample: i64,
    abs_dur: f64,
    kept: Kept,
}

/// A change as a thread's diff keeps it once sorted: the calls' indices. A sixteenth of a
/// [`CallChange`]'s bytes: a diff of two estimators of one large recording finds millions.
#[derive(Debug, Clone, Copy)]
struct Kept {
    base: u32,
    new: u32,
}

const NONE: u32 = u32::MAX;

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
    base: Option<&'a ThreadEstimate>,
    new: Option<&'a ThreadEstimate>,
    /// The changes kept (see [`diff`]), largest first.
    kept: Vec<Kept>,
    /// How many changes of each kind: added, removed, changed.
    counts: [usize; 3],
    sum_abs_dur: f64,
    origin: f64,
}

impl<'a> ThreadDiff<'a> {
    /// How many calls differ.
    pub fn len(&self) -> usize {
        self.counts.iter().sum()
    }

    /// Whether no call differs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many changes are of `kind`.
    pub fn count(&self, kind: ChangeKind) -> usize {
        self.counts[kind as usize]
    }

    /// The sum over matched calls of |Δduration|, µs.
    pub fn sum_abs_dur(&self) -> f64 {
        self.sum_abs_dur
    }

    /// The earliest start of a call that differs (on the side that has it; BASE's when both
    /// do), µs; infinite when none does.
    pub fn origin(&self) -> f64 {
        self.origin
    }

    /// The changes kept (all, or the largest [`diff`] was asked to keep), largest first.
    pub fn changes(&self) -> impl ExactSizeIterator<Item = CallChange<'a>> + '_ {
        self.kept.iter().map(|k| self.change(k))
    }

    fn change(&self, k: &Kept) -> CallChange<'a> {
        // One decoding a side: the call's record and its stack.
        let side = |t: Option<&'a ThreadEstimate>, i: u32| {
            (i != NONE).then(|| (t.expect("a side"), t.expect("a side").calls.get(i as usize)))
        };
        let (b, n) = (side(self.base, k.base), side(self.new, k.new));
        let kind = match (&b, &n) {
            (Some(_), Some(_)) => ChangeKind::Changed,
            (Some(_), None) => ChangeKind::Removed,
            _ => ChangeKind::Added,
        };
        let (t, c) = n.or(b).expect("a change has a side");
        CallChange {
            kind,
            func: t.func(t.stacks.frame(c.stack).1),
            base: b.map(|(_, c)| c.record),
            new: n.map(|(_, c)| c.record),
        }
    }
}

/// Pairs two time-sorted lists of calls that share a key: calls that start at the same time
/// first, then the others in order (a call one side has and the other lacks must not shift
/// every later pairing). The pairs go into `out`, emptied first (one list for every key).
fn pair_in_time(
    bs: &[usize],
    ns: &[usize],
    bts: impl Fn(usize) -> f64,
    nts: impl Fn(usize) -> f64,
    out: &mut Vec<(Option<usize>, Option<usize>)>,
) {
    out.clear();
    if bs.len() <= 1 && ns.len() <= 1 {
        out.push((bs.first().copied(), ns.first().copied()));
        return;
    }
    let (mut b_used, mut n_used) = (vec![false; bs.len()], vec![false; ns.len()]);
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
}

/// Bytes of keys the threads compared side by side may hold together.
const KEYS_BUDGET: usize = 128 << 20;

/// The threads of both sides, by (pid, tid), with their differences (threads compared on
/// several cores); each keeps its `keep` largest changes (`usize::MAX`: all of them), and
/// counts all.
pub fn diff<'a>(base: &'a [ThreadEstimate], new: &'a [ThreadEstimate], keep: usize) -> Vec<ThreadDiff<'a>> {
    // Each (pid, tid): its first thread on each side, and whether any of them has calls (a
    // map, not a search of each side for every thread: a trace may hold thousands).
    let mut at = std::collections::BTreeMap::<(i64, i64), [(Option<&'a ThreadEstimate>, bool); 2]>::new();
    for (side, threads) in [base, new].into_iter().enumerate() {
        for t in threads {
            let e = &mut at.entry((t.pid, t.tid)).or_default()[side];
            e.0.get_or_insert(t);
            e.1 |= t.calls.len() > 0;
        }
    }
    let pairs: Vec<_> =
        at.into_iter().filter(|(_, [b, n])| b.1 || n.1).map(|((pid, tid), [b, n])| (pid, tid, b.0, n.0)).collect();
    // Threads side by side as far as their tables of keys (up to 24 bytes a call of either
    // side; where its calls are decoded, 48 more and the keys' sorted copy) fit in 128 MB
    // together: on a large trace, one at a time.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let calls = |t: Option<&ThreadEstimate>| t.map_or(0, |t| t.calls.len());
    let bytes = |b, n| if decodes(b, n) { 96 } else { 24 } * (calls(b) + calls(n));
    let largest = pairs.iter().map(|&(_, _, b, n)| bytes(b, n)).max().unwrap_or(0);
    let side_by_side = (KEYS_BUDGET / largest.max(1)).clamp(1, cores);
    // A thread with most of the calls (a page's main thread) would leave the other cores
    // idle: its sides' keys are made side by side.
    let total: usize = pairs.iter().map(|&(_, _, b, n)| calls(b) + calls(n)).sum();
    crate::parallel::map(pairs, side_by_side, |(pid, tid, b, n)| {
        let split = cores > 1 && 2 * (calls(b) + calls(n)) > total && calls(b).min(calls(n)) >= SPLIT_FROM;
        let mut d = ThreadDiff {
            pid,
            tid,
            name: b.or(n).and_then(|t| t.name.clone()),
            base_calls: b.map_or(0, |t| t.calls.len()),
            new_calls: n.map_or(0, |t| t.calls.len()),
            base: b,
            new: n,
            kept: Vec::new(),
            counts: [0; 3],
            sum_abs_dur: 0.0,
            origin: f64::INFINITY,
        };
        d.find_changes(keep, split, decodes(b, n));
        d
    })
}

impl ThreadDiff<'_> {
    /// Finds the thread's changes: counts them, keeps the `keep` largest.
    fn find_changes(&mut self, keep: usize, split: bool, decode: bool) {
        let (base, new) = (self.base, self.new);
        let mut found = Vec::new();
        let mut note = |b: Option<(usize, CallRecord)>, n: Option<(usize, CallRecord)>| {
            let (br, nr) = (b.map(|b| b.1), n.map(|n| n.1));
            let kind = match (b, n) {
                (Some(_), Some(_)) => ChangeKind::Changed,
                (Some(_), None) => ChangeKind::Removed,
                _ => ChangeKind::Added,
            };
            self.counts[kind as usize] += 1;
            let first = br.or(nr).expect("a change has a side");
            self.origin = self.origin.min(first.ts());
            let abs_dur = match (br, nr) {
                (Some(b), Some(n)) => (n.dur() - b.dur()).abs(),
                _ => 0.0,
            };
            let index = |x: Option<(usize, CallRecord)>| x.map_or(NONE, |x| x.0 as u32);
            found.push(Found {
                size: size(br.as_ref(), nr.as_ref()),
                ts: first.ts(),
                node: first.node_id(),
                sample: first.sample_index(),
                abs_dur,
                kept: Kept { base: index(b), new: index(n) },
            });
        };
        walk(base, new, split, decode, &mut note);
        // Largest first; among equal sizes by start, then node and sample. The sort is stable:
        // the walk's order breaks what ties are left.
        found.sort_by(|a, b| {
            b.size
                .total_cmp(&a.size)
                .then_with(|| a.ts.total_cmp(&b.ts).then(a.node.cmp(&b.node)).then(a.sample.cmp(&b.sample)))
        });
        // Summed in the order shown (the same bits whatever is kept).
        self.sum_abs_dur = found
            .iter()
            .filter(|f| f.kept.base != NONE && f.kept.new != NONE)
            .map(|f| f.abs_dur)
            .fold(0.0, |a, b| a + b);
        self.kept = found.iter().take(keep).map(|f| f.kept).collect();
    }
}

/// Pairs the calls of both sides and hands `note` each pair that differs, and each call that
/// only one side has, with its index there.
#[allow(clippy::type_complexity)]
fn walk<'a>(
    base: Option<&'a ThreadEstimate>,
    new: Option<&'a ThreadEstimate>,
    split: bool,
    decode: bool,
    note: &mut dyn FnMut(Option<(usize, CallRecord)>, Option<(usize, CallRecord)>),
) {
    // Keys of 16 bytes where every sample index fits in 32 bits (always, for estimates of
    // profiles), else 24.
    match both(base, new, split, |t| by_key::<Narrow>(t, decode)) {
        [Some(bk), Some(nk)] => walk_keys(bk, nk, note),
        _ => {
            let [bk, nk] = both(base, new, split, |t| by_key::<Wide>(t, decode)).map(|k| k.expect("every key fits"));
            walk_keys(bk, nk, note)
        }
    }
}

/// Calls a side may have for the walk to decode them all at once (48 bytes each) rather than
/// find each pair's calls in the packed lists (a block's decoding for each): 12 MB a side at
/// most, where a large input's threads keep to their packed lists.
const DECODE_MAX: usize = 1 << 18;

/// Whether the walk of a thread's two sides decodes their calls at once.
fn decodes(base: Option<&ThreadEstimate>, new: Option<&ThreadEstimate>) -> bool {
    [base, new].iter().all(|t| t.is_none_or(|t| t.calls.len() <= DECODE_MAX))
}

/// A side's calls as the walk reads them by index.
enum Records<'a> {
    /// Decoded once, in order.
    Decoded(Vec<CallRecord>),
    /// Found in the packed list when read.
    Packed(Option<&'a ThreadEstimate>),
}

impl Records<'_> {
    fn get(&self, k: usize) -> CallRecord {
        match self {
            Records::Decoded(v) => v[k],
            Records::Packed(t) => t.expect("indexed").call(k),
        }
    }
}

/// Calls each side of a thread must have for [`both`] to be worth a second thread: a side's
/// keys are a decoding of all its calls and a sort.
const SPLIT_FROM: usize = 1 << 14;

/// `f` of each side; with `split`, side by side.
fn both<'a, R: Send>(
    base: Option<&'a ThreadEstimate>,
    new: Option<&'a ThreadEstimate>,
    split: bool,
    f: impl Fn(Option<&'a ThreadEstimate>) -> R + Sync,
) -> [R; 2] {
    crate::parallel::map(vec![base, new], if split { 2 } else { 1 }, f).try_into().ok().expect("two sides")
}

/// A call's (node, sample) and its index on its side: what the walk sorts each side's calls by.
trait Key: Copy + Ord {
    /// None when the sample index does not fit.
    fn of(node: i64, sample: i64, index: u32) -> Option<Self>;
    fn id(self) -> (i64, i64);
    fn index(self) -> usize;
}

type Wide = (i64, i64, u32);
type Narrow = (i64, i32, u32);

impl Key for Wide {
    fn of(node: i64, sample: i64, index: u32) -> Option<Wide> {
        Some((node, sample, index))
    }
    fn id(self) -> (i64, i64) {
        (self.0, self.1)
    }
    fn index(self) -> usize {
        self.2 as usize
    }
}

impl Key for Narrow {
    fn of(node: i64, sample: i64, index: u32) -> Option<Narrow> {
        Some((node, i32::try_from(sample).ok()?, index))
    }
    fn id(self) -> (i64, i64) {
        (self.0, i64::from(self.1))
    }
    fn index(self) -> usize {
        self.2 as usize
    }
}

/// Each side's calls by (node, sample), in time order within a key (the calls are in time
/// order: their index breaks ties), and the side's calls as the walk reads them: with
/// `decode`, decoded as the keys are made. (A map of lists held ~100 bytes a call.)
fn by_key<K: Key>(t: Option<&ThreadEstimate>, decode: bool) -> Option<(Vec<K>, Records<'_>)> {
    let calls = t.map_or(0, |t| t.calls.len());
    let mut keys = Vec::with_capacity(calls);
    let mut records = decode.then(|| Vec::with_capacity(calls));
    for (k, c) in t.into_iter().flat_map(ThreadEstimate::calls).enumerate() {
        keys.push(K::of(c.node_id(), c.sample_index(), k as u32)?);
        if let Some(r) = &mut records {
            r.push(c);
        }
    }
    let records = match records {
        Some(r) => {
            sort_keys(&mut keys);
            Records::Decoded(r)
        }
        None => {
            // In place: a thread too large to decode keeps to its keys' bytes.
            keys.sort_unstable();
            Records::Packed(t)
        }
    };
    Some((keys, records))
}

/// Sorts keys made in the calls' order: by node first, counting into a copy (the profile
/// numbers its nodes densely), then each node's keys, which are mostly in order already (calls
/// are in time order, and so mostly are their samples).
fn sort_keys<K: Key>(keys: &mut Vec<K>) {
    let (lo, hi) = keys.iter().fold((i64::MAX, i64::MIN), |(lo, hi), k| (lo.min(k.id().0), hi.max(k.id().0)));
    let range = (i128::from(hi) - i128::from(lo) + 1).max(0) as u128;
    if keys.len() < 2 || range > 4 * keys.len() as u128 + 1024 {
        keys.sort_unstable();
        return;
    }
    let slot = |k: &K| (k.id().0 - lo) as usize;
    let mut at = vec![0usize; range as usize + 1];
    for k in keys.iter() {
        at[slot(k) + 1] += 1;
    }
    for i in 1..at.len() {
        at[i] += at[i - 1];
    }
    let starts = at.clone();
    let mut sorted = vec![keys[0]; keys.len()];
    for k in keys.iter() {
        let s = &mut at[slot(k)];
        sorted[*s] = *k;
        *s += 1;
    }
    for w in starts.windows(2) {
        let node = &mut sorted[w[0]..w[1]];
        if !node.is_sorted() {
            node.sort_unstable();
        }
    }
    *keys = sorted;
}

/// [`walk`] with each side's keys ([`by_key`]): runs of one key, walked side by side in key
/// order.
#[allow(clippy::type_complexity)]
fn walk_keys<K: Key>(
    (bk, bc): (Vec<K>, Records<'_>),
    (nk, nc): (Vec<K>, Records<'_>),
    note: &mut dyn FnMut(Option<(usize, CallRecord)>, Option<(usize, CallRecord)>),
) {
    let (mut i, mut j) = (0, 0);
    // The calls paired with the call at the same index on the other side (most of them, when
    // two estimates of one recording are compared): compared in one walk of both sides below,
    // not by finding each call in its packed list.
    let mut aligned = vec![0u64; bk.len().min(nk.len()).div_ceil(64)];
    let mut bs: Vec<usize> = Vec::new();
    let mut ns: Vec<usize> = Vec::new();
    let mut pairs = Vec::new();
    while i < bk.len() || j < nk.len() {
        // The next key of either side, and its run on each.
        let key = match (bk.get(i), nk.get(j)) {
            (Some(a), Some(b)) => a.id().min(b.id()),
            (Some(a), None) => a.id(),
            (None, Some(b)) => b.id(),
            (None, None) => break,
        };
        let run = |keys: &[K], from: usize, to: &mut Vec<usize>| {
            to.clear();
            to.extend(keys[from..].iter().take_while(|k| k.id() == key).map(|k| k.index()));
            from + to.len()
        };
        (i, j) = (run(&bk, i, &mut bs), run(&nk, j, &mut ns));
        if let ([b], [n]) = (&bs[..], &ns[..]) {
            if b == n {
                aligned[b / 64] |= 1 << (b % 64);
                continue;
            }
        }
        pair_in_time(&bs, &ns, |k| bc.get(k).ts(), |k| nc.get(k).ts(), &mut pairs);
        for &(b, n) in &pairs {
            let b = b.map(|k| (k, bc.get(k)));
            let n = n.map(|k| (k, nc.get(k)));
            if let (Some((_, bc)), Some((_, nc))) = (&b, &n) {
                if bc.same_times(nc) {
                    continue;
                }
            }
            note(b, n);
        }
    }
    drop((bk, nk, bs, ns));
    let mut each_aligned = |k: usize, b: CallRecord, n: CallRecord| {
        if aligned[k / 64] & 1 << (k % 64) != 0 && !b.same_times(&n) {
            note(Some((k, b)), Some((k, n)));
        }
    };
    match (&bc, &nc) {
        (Records::Decoded(b), Records::Decoded(n)) => {
            for (k, (b, n)) in b.iter().zip(n).enumerate() {
                each_aligned(k, *b, *n);
            }
        }
        (Records::Packed(Some(b)), Records::Packed(Some(n))) => {
            for (k, (b, n)) in b.calls().zip(n.calls()).enumerate() {
                each_aligned(k, b, n);
            }
        }
        // A side without calls has none aligned (both sides are decoded, or neither).
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One thread's calls document: (ts, dur, self time, node, sample) a call.
    fn thread(calls: &[(f64, f64, f64, i64, i64)]) -> Vec<ThreadEstimate> {
        let calls: Vec<String> = calls
            .iter()
            .map(|&(ts, dur, own, node, sample)| {
                format!(
                    r#"{{"ts":{ts},"dur":{dur},"selfTime":{own},"depth":0,"nodeDepth":1,"nodeId":{node},"sampleIndex":{sample},"functionName":"f{node}","url":"","scriptId":"1"}}"#
                )
            })
            .collect();
        let doc =
            format!(r#"{{"format":"jscalls-calls/1","profiles":[{{"pid":1,"tid":1,"calls":[{}]}}]}}"#, calls.join(","));
        ThreadEstimate::read_calls_document(doc.as_bytes()).expect("a calls document")
    }

    /// (kind, function, BASE start, NEW start) of each change kept.
    fn shown(t: &ThreadDiff<'_>) -> Vec<(ChangeKind, String, Option<f64>, Option<f64>)> {
        t.changes().map(|c| (c.kind, c.func.name.clone(), c.base.map(|c| c.ts()), c.new.map(|c| c.ts()))).collect()
    }

    #[test]
    fn changes_are_counted_whole_and_kept_largest_first() {
        // A sample index past 32 bits shares its low bits with C's: the keys must not conflate
        // them (C would be paired with E' and E removed).
        let far = (1i64 << 32) + 5;
        let base = thread(&[
            (0.0, 10.0, 5.0, 1, 0),
            (2.0, 3.0, 3.0, 2, 1),
            (20.0, 4.0, 4.0, 3, 5),
            (30.0, 1.0, 1.0, 5, 7),
            (40.0, 2.0, 2.0, 3, far),
        ]);
        let new =
            thread(&[(0.0, 12.0, 7.0, 1, 0), (2.0, 3.0, 3.0, 2, 1), (41.0, 2.0, 2.0, 3, far), (50.0, 2.0, 2.0, 4, 9)]);
        let (added, removed, changed) = (ChangeKind::Added, ChangeKind::Removed, ChangeKind::Changed);
        // Sizes: C 4 (removed), A 2 (end and self moved by 2), F 2 (added), D 1, E 1 (its
        // start moved by 1); equal sizes by start.
        let all = [
            (removed, "f3".to_owned(), Some(20.0), None),
            (changed, "f1".to_owned(), Some(0.0), Some(0.0)),
            (added, "f4".to_owned(), None, Some(50.0)),
            (removed, "f5".to_owned(), Some(30.0), None),
            (changed, "f3".to_owned(), Some(40.0), Some(41.0)),
        ];
        for keep in [usize::MAX, 5, 2, 0] {
            let d = diff(&base, &new, keep);
            let t = &d[0];
            assert_eq!(shown(t), all[..keep.min(5)].to_vec(), "keep {keep}");
            assert_eq!((t.len(), t.count(added), t.count(removed), t.count(changed)), (5, 1, 2, 2));
            // |Δdur| of the matched calls: A's 2, E's 0.
            assert_eq!((t.sum_abs_dur(), t.origin(), t.base_calls, t.new_calls), (2.0, 0.0, 5, 4));
        }
        let same = diff(&base, &base, usize::MAX);
        assert!(same[0].is_empty() && same[0].origin().is_infinite());
        // Each side's keys made side by side (as for a large thread), and its calls read from
        // the packed lists (as for a large thread) rather than decoded, pair the same calls.
        for split in [false, true] {
            for decode in [false, true] {
                let mut d = ThreadDiff { kept: Vec::new(), counts: [0; 3], ..diff(&base, &new, 0).remove(0) };
                d.find_changes(usize::MAX, split, decode);
                assert_eq!(shown(&d), all.to_vec(), "split {split}, decode {decode}");
            }
        }
    }

    proptest::proptest! {
        /// The counting sort by node gives what a sort of the whole keys gives: nodes dense
        /// or far apart, samples in order or not.
        #[test]
        fn keys_sort_as_a_whole_sort_would(
            calls in proptest::collection::vec((0i64..40, 0i32..60), 0..300),
            spread in proptest::prop_oneof![proptest::strategy::Just(1i64), proptest::strategy::Just(1 << 40)],
            in_order in proptest::bool::ANY,
        ) {
            let mut calls = calls;
            if in_order {
                calls.sort_by_key(|c| c.1);
            }
            let mut keys: Vec<Narrow> =
                calls.iter().enumerate().map(|(k, &(node, sample))| (node * spread - 7, sample, k as u32)).collect();
            let mut whole = keys.clone();
            whole.sort_unstable();
            sort_keys(&mut keys);
            proptest::prop_assert_eq!(keys, whole);
        }
    }
}
