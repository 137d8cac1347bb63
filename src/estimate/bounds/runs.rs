//! Each call's bounds: the run of samples that show its frame, cut at the top-level
//! invocation that holds it, and the captures just outside the run.

use super::{Bounds, Captures, Invocations};
use crate::estimate::ProfileCall;
use crate::model::profile::{ProfileModel, NONE};

/// The samples that show a frame, and the top-level invocation each lies in: a call's bounds
/// come from the whole run of samples that show its frame (DevTools splits a call at the end of
/// any `V8.*` event, and a run may be longer than the call), cut at top-level invocations.
pub(super) struct Runs<'m> {
    tour: Tour,
    /// Per sample, what a run's walk asks of it, side by side.
    rows: Vec<Row>,
    /// Which samples tell the JS stack.
    told: Told,
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
}

/// Which samples tell the JS stack, a bit each, and per block of 64 samples the last one
/// before it that does and the first after it: the nearest either side of a sample is found
/// in a block's word (a quarter of a byte a sample; a table of both was 8 bytes).
struct Told {
    bits: Vec<u64>,
    /// Per block, the last telling sample before it ([`NONE`] if none).
    before: Vec<u32>,
    /// Per block, the first telling sample after it ([`NONE`] if none).
    after: Vec<u32>,
}

impl Told {
    /// From the bits, sample `i` at bit `i % 64` of word `i / 64`.
    fn new(bits: Vec<u64>) -> Told {
        let mut last = NONE;
        let before = bits
            .iter()
            .enumerate()
            .map(|(k, &w)| {
                let b = last;
                if w != 0 {
                    last = (k * 64 + 63 - w.leading_zeros() as usize) as u32;
                }
                b
            })
            .collect();
        let mut first = NONE;
        let mut after: Vec<u32> = bits
            .iter()
            .enumerate()
            .rev()
            .map(|(k, &w)| {
                let a = first;
                if w != 0 {
                    first = (k * 64 + w.trailing_zeros() as usize) as u32;
                }
                a
            })
            .collect();
        after.reverse();
        Told { bits, before, after }
    }

    /// Whether sample `i` tells the stack.
    fn is(&self, i: usize) -> bool {
        self.bits[i / 64] >> (i % 64) & 1 == 1
    }

    /// The last sample at or before `i` that tells the stack ([`NONE`] if none).
    fn at_or_before(&self, i: usize) -> u32 {
        let w = self.bits[i / 64] & (u64::MAX >> (63 - i % 64));
        if w == 0 {
            self.before[i / 64]
        } else {
            ((i / 64) * 64 + 63 - w.leading_zeros() as usize) as u32
        }
    }

    /// The first sample at or after `i` that tells the stack ([`NONE`] if none).
    fn at_or_after(&self, i: usize) -> u32 {
        let w = self.bits[i / 64] & (u64::MAX << (i % 64));
        if w == 0 {
            self.after[i / 64]
        } else {
            ((i / 64) * 64 + w.trailing_zeros() as usize) as u32
        }
    }
}

/// Per node, the last run [`Runs::run`] found, taken again once found whole: DevTools splits
/// one run into many calls (at every `V8.*` event's end), and each would walk it again. A
/// cache only (a walk finds the same run), one per pass over the calls.
pub(super) struct RunCache {
    /// Per node, the last run found (first and last sample).
    last_run: Vec<(u32, u32)>,
    /// Per node, whether its last run was found whole.
    verified: Vec<bool>,
}

impl RunCache {
    pub(super) fn new(nodes: usize) -> RunCache {
        RunCache { last_run: vec![(NONE, NONE); nodes], verified: vec![false; nodes] }
    }
}

impl<'m> Runs<'m> {
    /// `full`: with what [`Runs::bounds`] needs (empty otherwise).
    pub(super) fn new(model: &ProfileModel, t: &[f64], inv: &'m Invocations, full: bool) -> Runs<'m> {
        let tour = if full { Tour::new(model) } else { Tour { first: Vec::new(), end: Vec::new() } };
        // What only the bounds need is left empty for the midway estimate alone.
        let bounded = if full { t.len() } else { 0 };
        // What a (program) or GC sample shows says nothing of the JS stack: the sampler shows
        // (program) when it fails to walk a JS stack too (DevTools then copies the stack before
        // it: the samples it repaired), and DevTools gives a GC sample the stack before it.
        // (In sample order: each is taken at its own sample.)
        let (program, gc) = (model.program.unwrap_or(NONE), model.gc.unwrap_or(NONE));
        let mut repaired = model.repaired.iter().map(|&r| r as usize).peekable();
        let (mut last, mut q) = (NONE, 0);
        let mut tells = vec![0u64; bounded.div_ceil(64)];
        let samples = model.sample_nodes[..bounded].iter().zip(&t[..bounded]).enumerate();
        let rows: Vec<Row> = samples
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
                    tells[i / 64] |= 1 << (i % 64);
                }
                let shown = if node == NONE { u32::MAX } else { tour.first[node as usize] };
                Row { shown, within }
            })
            .collect();
        Runs { tour, rows, told: Told::new(tells), spans: &inv.0 }
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
        while let Some(p) = r0.checked_sub(1).map(|i| self.told.at_or_before(i)).filter(|&i| i != NONE) {
            let p = p as usize;
            if self.rows[p].within != self.rows[r0].within || !span.contains(&self.rows[p].shown) {
                break;
            }
            r0 = p;
        }
        while let Some(q) = (r1 + 1 < self.rows.len()).then(|| self.told.at_or_after(r1 + 1)).filter(|&i| i != NONE) {
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
                row.within == self.rows[r0].within && (!self.told.is(r0 + k) || span.contains(&row.shown))
            })
    }

    /// Whether sample `i` tells the JS stack.
    fn told(&self, i: usize) -> bool {
        self.told.is(i)
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
        let before = r0.checked_sub(1).map(|i| self.told.at_or_before(i)).filter(|&i| i != NONE).map(|i| i as usize);
        let after = (r1 + 1 < self.rows.len())
            .then(|| self.told.at_or_after(r1 + 1))
            .filter(|&i| i != NONE)
            .map(|i| i as usize);
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
    pub(super) fn of_call(
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

#[cfg(test)]
mod tests {
    use super::{Told, NONE};

    /// The nearest telling sample either side, and whether a sample tells, as a scan finds
    /// them: on runs of every length across word ends, none at all, all of them.
    #[test]
    fn told_finds_what_a_scan_finds() {
        let mut cases: Vec<Vec<bool>> = vec![vec![], vec![false; 200], vec![true; 200], vec![true], vec![false]];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in [1usize, 63, 64, 65, 127, 128, 129, 500, 1000] {
            for density in [2u64, 7, 64, 400] {
                cases.push(
                    (0..len)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            x.is_multiple_of(density)
                        })
                        .collect(),
                );
            }
        }
        for tells in cases {
            let mut bits = vec![0u64; tells.len().div_ceil(64)];
            for (i, &t) in tells.iter().enumerate() {
                bits[i / 64] |= u64::from(t) << (i % 64);
            }
            let told = Told::new(bits);
            for i in 0..tells.len() {
                let before = (0..=i).rev().find(|&j| tells[j]).map_or(NONE, |j| j as u32);
                let after = (i..tells.len()).find(|&j| tells[j]).map_or(NONE, |j| j as u32);
                assert_eq!((told.is(i), told.at_or_before(i), told.at_or_after(i)), (tells[i], before, after), "{i}");
            }
        }
    }
}
