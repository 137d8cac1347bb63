//! What the flame chart keeps of each call as it makes a thread's stacks: a sample each,
//! each stack's sum for pprof, or each call's stack by its index for `diff` (see
//! [`PerCall`]).

use rustc_hash::FxHashMap as HashMap;

use super::{StackId, Stacks};

/// What [`Stacks::calls`] keeps of each call.
#[derive(Debug, Clone, Copy)]
pub(super) enum PerCall {
    /// Its stack and self time: a sample each, then one for each event inside a call.
    Samples,
    /// Nothing (the spans are what is drawn).
    Nothing,
    /// A sample a stack: its calls' and events' self times, each rounded to a whole multiple
    /// of `1 / scale` first, summed.
    Rounded(f64),
    /// Its stack by its index, apart ([`CallStacks`]); the events' samples alone.
    ByIndex,
}

/// Each call's stack in the flame chart by the call's index, and its self time there (4 bytes
/// a call, against 16 for a sample and 4 for its place).
pub(crate) struct CallStacks {
    pub(crate) stack: Vec<StackId>,
    pub(crate) weights: Weights,
}

/// The calls' self times in the flame chart, by call index, as they differ from the estimate's
/// (its self time, or 0 where it has none): none on any input the project has, so nothing a
/// call where they agree.
#[derive(Default)]
pub(crate) struct Weights {
    other: HashMap<u32, f64>,
}

impl Weights {
    /// Call `k`, whose estimate's self time is `self_time`, weighs `w`.
    fn note(&mut self, k: usize, self_time: Option<f64>, w: f64) {
        if w.to_bits() != self_time.unwrap_or(0.0).to_bits() {
            self.other.insert(k as u32, w);
        }
    }

    /// What call `k`, whose estimate's self time is `self_time`, weighs.
    pub(crate) fn get(&self, k: usize, self_time: Option<f64>) -> f64 {
        self.other.get(&(k as u32)).copied().unwrap_or_else(|| self_time.unwrap_or(0.0))
    }
}

/// What the flame chart keeps of the calls and the events inside them, as it closes them.
pub(super) enum Kept<'a> {
    Nothing,
    /// Each call's (stack, self time) by its place in the calls output's order (the samples'
    /// order: made in place, not copied into that order, which held both at once); the events'
    /// in the order they close.
    Samples {
        rank: Vec<u32>,
        of_call: Vec<(StackId, f64)>,
        of_events: Vec<(StackId, f64)>,
    },
    /// Each stack's sum of rounded self times; for the total, the events' self times in the
    /// order they close and the calls' where they are not the estimate's (`self_time`, or 0
    /// where it has none): nothing a call where they are, not 20 bytes.
    Rounded {
        scale: f64,
        self_time: &'a crate::estimate::SelfTimes,
        weights: Weights,
        of_events: Vec<f64>,
        sums: Vec<i64>,
    },
    /// Each call's stack and self time by its index;
    /// the events' samples in the order they close.
    ByIndex {
        self_time: &'a crate::estimate::SelfTimes,
        calls: CallStacks,
        of_events: Vec<(StackId, f64)>,
    },
}

impl<'a> Kept<'a> {
    pub(super) fn new(per: PerCall, t: &'a crate::estimate::ThreadCalls) -> Kept<'a> {
        match per {
            PerCall::Nothing => Kept::Nothing,
            PerCall::Samples => {
                let mut rank = vec![0u32; t.calls.len()];
                for (r, &k) in t.canonical_order().iter().enumerate() {
                    rank[k as usize] = r as u32;
                }
                let of_call = vec![(StackId::ROOT, 0.0); rank.len()];
                Kept::Samples { rank, of_call, of_events: Vec::new() }
            }
            PerCall::Rounded(scale) => Kept::Rounded {
                scale,
                self_time: &t.self_time,
                weights: Weights::default(),
                of_events: Vec::new(),
                sums: Vec::new(),
            },
            PerCall::ByIndex => Kept::ByIndex {
                self_time: &t.self_time,
                calls: CallStacks { stack: vec![StackId::ROOT; t.calls.len()], weights: Weights::default() },
                of_events: Vec::new(),
            },
        }
    }

    /// Call `k` (its index) weighs `w` on `stack`.
    pub(super) fn call(&mut self, k: usize, stack: StackId, w: f64) {
        match self {
            Kept::Nothing => {}
            Kept::Samples { rank, of_call, .. } => of_call[rank[k] as usize] = (stack, w),
            Kept::Rounded { scale, self_time, weights, sums, .. } => {
                weights.note(k, self_time.get(k), w);
                add_rounded(sums, stack, w, *scale);
            }
            Kept::ByIndex { self_time, calls, .. } => {
                calls.stack[k] = stack;
                calls.weights.note(k, self_time.get(k), w);
            }
        }
    }

    /// An event inside a call weighs `w` on `stack`.
    pub(super) fn event(&mut self, stack: StackId, w: f64) {
        match self {
            Kept::Nothing => {}
            Kept::Samples { of_events, .. } | Kept::ByIndex { of_events, .. } => of_events.push((stack, w)),
            Kept::Rounded { scale, of_events, sums, .. } => {
                of_events.push(w);
                add_rounded(sums, stack, w, *scale);
            }
        }
    }

    /// Makes `st`'s samples; the total of the self times, summed in the samples' order (0
    /// for [`PerCall::ByIndex`], whose calls' stacks come back apart).
    pub(super) fn finish(self, st: &mut Stacks, t: &crate::estimate::ThreadCalls) -> (f64, Option<CallStacks>) {
        let total = match self {
            Kept::Nothing => 0.0,
            Kept::ByIndex { calls, of_events, .. } => {
                st.samples = of_events;
                return (0.0, Some(calls));
            }
            Kept::Samples { rank, mut of_call, of_events } => {
                drop(rank);
                of_call.extend(of_events);
                st.samples = of_call;
                st.total()
            }
            Kept::Rounded { scale, self_time, weights, of_events, sums } => {
                let of_call = |k: usize| weights.get(k, self_time.get(k));
                let total = t.canonical_order().iter().map(|&k| of_call(k as usize)).chain(of_events).sum();
                st.samples = samples_of_sums(&sums, None, scale);
                total
            }
        };
        (total, None)
    }
}

/// Adds `w` rounded to a whole multiple of `1 / scale` to `stack`'s sum.
fn add_rounded(sums: &mut Vec<i64>, stack: StackId, w: f64, scale: f64) {
    let k = stack.index();
    if k >= sums.len() {
        sums.resize(k + 1, 0);
    }
    sums[k] += (w * scale).round() as i64;
}

/// One sample a stack of `sums` (by stack index; `root`, the samples on no function), each
/// weighing its sum over `scale`; none where the sum is 0.
pub(super) fn samples_of_sums(sums: &[i64], root: Option<i64>, scale: f64) -> Vec<(StackId, f64)> {
    let stacks = sums.iter().enumerate().map(|(k, &v)| (StackId::new(k), v));
    stacks
        .chain(root.map(|v| (StackId::ROOT, v)))
        .filter(|&(_, v)| v != 0)
        .map(|(s, v)| (s, v as f64 / scale))
        .collect()
}
