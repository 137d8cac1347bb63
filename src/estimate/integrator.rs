//! DevTools' SamplesIntegrator: samples merged with trace events become ProfileCalls.
//!
//! One seed per sample; seeds and the thread's sorted events are merged by time; a walk
//! keeps the open events, the JS stack, the lock stack and fake-JS-invocation mode, and diffs
//! each sample's stack against the JS stack. The reference's object identities
//! become indices: the JS stack holds indices into the output, so durations written later land
//! on the calls already emitted.
//!
//! One change of representation, with the same results: `truncate` in the reference writes the
//! same end time into *every* open frame. Here a frame's duration is computed only when it
//! leaves the stack (or at the end), from the time of the last truncate that saw it open.

use super::ProfileCall;
use crate::exec::Exec;
use crate::js::Scalar;
use crate::model::profile::{ProfileModel, NONE};
use crate::model::{EngineVersion, Entry, INSTANT, INVOCATION, RESET};

/// Integrator options (DevTools' engine configuration), and the threads one thread's estimate
/// may use.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct IntegratorConfig {
    /// Keep `native V8Runtime` frames (`showAllEvents`).
    pub show_all_events: bool,
    /// Which DevTools behaviour to follow.
    pub version: EngineVersion,
    /// Whether a long thread (50,000 to 4 million samples) may be cut in two at a top-level
    /// task near its middle sample, its halves estimated side by side (by the [`Exec`] given),
    /// with the same calls as one walk.
    pub cut: bool,
    /// Which estimate the calls carry (DevTools' by default).
    pub estimator: super::bounds::Estimator,
    /// Whether each call gets the interval its true start and end lie in.
    pub bounds: bool,
}

/// Samples below which a thread is never cut: its estimate takes about a millisecond.
const SPLIT_MIN_SAMPLES: usize = 50_000;
/// Samples above which a thread is not cut either: the second half's calls are copied after the
/// first's, and for a longer thread (over 400 s of samples at 100 µs) that copy would add tens
/// of MB to the peak of a multi-GB input.
const SPLIT_MAX_SAMPLES: usize = 4_000_000;

#[derive(Debug, Clone, Copy)]
struct Seed {
    sample: u32,
    node: u32,
    ts: f64,
    /// For a GC sample: the previous non-GC sample's node.
    gc_base: u32,
}

struct State<'m> {
    model: &'m ProfileModel,
    /// The node each `sampleTraceId` of the entries resolves to, by trace index - 1
    /// ([`NO_NODE`] when it does not), from [`resolve_trace_ids`].
    trace_nodes: &'m [u32],
    cfg: IntegratorConfig,
    out: Vec<ProfileCall>,
    /// The JS stack: indices into `out`, with the truncate count when each was pushed.
    js: Vec<(u32, u64)>,
    /// The [`State::keys`] of the JS stack's frames, side by side with `js`: the walk that
    /// compares the stacks reads two short arrays instead of a node per frame.
    js_keys: Vec<u32>,
    /// Per node: its frame's key for `framesEqual` ([`NEVER`] for a frame never equal).
    keys: Vec<u32>,
    locks: Vec<usize>,
    fake: bool,
    /// Truncates so far, and the time of the last one.
    n_truncates: u64,
    last_time: f64,
    /// The candidate stack (nodes, outermost first); its calls would all start at the same
    /// sample and time, which [`State::reconcile`] is given.
    cand: Vec<u32>,
    /// The [`State::keys`] of `cand`, side by side with it.
    cand_keys: Vec<u32>,
    /// The tree path of the node whose stack `cand` holds (the root left out): `path[d]` is
    /// its ancestor at depth `d`; with `path_cand[d]`, the length of `cand` up to it (native
    /// frames are left out of `cand`). A new stack keeps what it shares with the last one, so
    /// a sample costs what its stack changes, not its depth.
    path: Vec<u32>,
    path_cand: Vec<u32>,
    /// `cand` ends with a GC node put on top of its base's stack.
    cand_gc: bool,
    /// Room for [`State::set_path`]'s new frames.
    scratch: Vec<u32>,
    /// The length of the prefix where the JS stack and the candidate are known to be equal
    /// (equal keys, none of them never equal): the comparison starts after it.
    same: usize,
    /// Where the JS stack has frames never equal to any (ascending).
    nevers: Vec<usize>,
    /// Build each stack from the root and compare from the bottom, as DevTools does (the
    /// property tests compare the two).
    #[cfg(test)]
    from_root: bool,
    /// The seed's (node, GC base) whose stack `cand` holds, when it holds a seed's: a sample
    /// of the same node (most samples repeat the one before) has the same stack.
    cand_of: Option<(u32, u32)>,
    /// `Some(n)` when the JS stack is the candidate, frame for frame from the top lock up (and
    /// none of them never equal), as left when the truncate count was `n`: reconciling the
    /// same candidate again, with nothing done in between, only counts a truncate.
    settled: Option<u64>,
    meta_ids: [Option<i64>; 4],
    /// Console errors the reference would log ("Child stack is shallower…", …).
    pub n_console_errors: u64,
}

/// No node: a `sampleTraceId` that does not resolve.
const NO_NODE: u32 = u32::MAX;

/// The key of a frame that is never equal to any (one with a NaN field): two of them differ.
const NEVER: u32 = u32::MAX;

/// The node each trace index resolves to, from the values the profile's `trace_ids` give the
/// events' ids ([`NO_NODE`] where none; empty when no event's id is in `trace_ids`).
fn resolve_trace_ids(model: &ProfileModel, values: &[(u32, Scalar)]) -> Vec<u32> {
    let Some(last) = values.iter().map(|&(k, _)| k).max() else { return Vec::new() };
    let mut nodes = vec![NO_NODE; last as usize + 1];
    for &(k, v) in values {
        nodes[k as usize] = model.node_for_trace_value(v).unwrap_or(NO_NODE);
    }
    nodes
}

/// Builds the ProfileCalls of one thread. `entries` must be sorted (see
/// [`sort_entries`](crate::model::sort_entries));
/// `trace_values` are the values of the events' trace ids (see
/// [`ThreadWork::trace_values`](crate::model::ThreadWork::trace_values)).
pub(crate) fn build_profile_calls(
    model: &ProfileModel,
    entries: &[Entry],
    trace_values: &[(u32, Scalar)],
    cfg: IntegratorConfig,
    exec: &impl Exec,
) -> (Vec<ProfileCall>, u64) {
    let trace_nodes = resolve_trace_ids(model, trace_values);
    let n = model.n_samples();
    let cut = if cfg.cut { split_point(model, entries) } else { None };
    match cut {
        Some((e, k)) => build_cut(model, entries, &trace_nodes, cfg, e, k, exec),
        None => run_part(model, entries, &trace_nodes, cfg, seeds(model, 0, n), None),
    }
}

/// [`build_profile_calls`] in two halves side by side, cut at entry `e` and sample `k` (see
/// [`split_point`]): the first half ends as the task that starts the second begins.
fn build_cut(
    model: &ProfileModel,
    entries: &[Entry],
    trace_nodes: &[u32],
    cfg: IntegratorConfig,
    e: usize,
    k: usize,
    exec: &impl Exec,
) -> (Vec<ProfileCall>, u64) {
    let parts = vec![(0, e, 0, k), (e, entries.len(), k, model.n_samples())];
    let mut done = exec.map(parts, |(e0, e1, s0, s1)| {
        let ends_at = (e1 < entries.len()).then(|| entries[e1].ts);
        run_part(model, &entries[e0..e1], trace_nodes, cfg, seeds(model, s0, s1), ends_at)
    });
    let (second, errors2) = done.pop().expect("two parts");
    let (mut calls, errors) = done.pop().expect("two parts");
    calls.extend(second);
    (calls, errors + errors2)
}

/// Where a thread can be cut in two, near its middle sample: `(entry, sample)`, the first entry
/// and the first sample of the second half. The cut is at a task (RunTask, RunMicrotasks) that
/// starts once every earlier event has ended: the walk then gets there with no event open, and
/// the task's start empties the JS stack and the locks and ends fake-JS mode. (An earlier event
/// that starts at the task's time too is sorted after it, unless both last 0: then the samples
/// at that time go before both, in one walk or in two.) What the walk knows beyond that (the
/// truncate count, the last candidate stack) only saves work, so a fresh walk from the task on
/// makes the same calls, which follow the first half's. The first half ends as the task's start
/// would end it.
fn split_point(model: &ProfileModel, entries: &[Entry]) -> Option<(usize, usize)> {
    split_point_within(model, entries, SPLIT_MIN_SAMPLES..=SPLIT_MAX_SAMPLES)
}

/// Whether a thread is one that `cfg` lets be cut and long enough to be: alone on the cores,
/// whose other work may run side by side too.
pub(crate) fn long_enough_to_cut(model: &ProfileModel, cfg: IntegratorConfig) -> bool {
    cfg.cut && model.n_samples() >= SPLIT_MIN_SAMPLES
}

/// [`split_point`] for a thread whose samples are within `samples`.
fn split_point_within(
    model: &ProfileModel,
    entries: &[Entry],
    samples: std::ops::RangeInclusive<usize>,
) -> Option<(usize, usize)> {
    let n = model.n_samples();
    if !samples.contains(&n) {
        return None;
    }
    let middle = model.sample_times().nth(n / 2)? * 1000.0;
    // The first task at or after the middle that qualifies, else the last one before it.
    let mut best = None;
    for i in cuts(entries) {
        best = Some(i);
        if entries[i].ts >= middle {
            break;
        }
    }
    let e = best?;
    let k = samples_before(model, &entries[e]);
    // Not worth two threads when one half is small.
    (k >= n / 8 && k <= n - n / 8).then_some((e, k))
}

/// The entries a thread can be cut at (see [`split_point`]), in order.
fn cuts(entries: &[Entry]) -> impl Iterator<Item = usize> + '_ {
    let mut max_end = f64::NEG_INFINITY;
    entries.iter().enumerate().filter_map(move |(i, e)| {
        if e.flags & INSTANT != 0 && e.trace == 0 {
            return None; // never walked
        }
        let cut = e.flags & RESET != 0 && max_end <= e.ts;
        max_end = max_end.max(e.end());
        cut.then_some(i)
    })
}

/// The samples the merge takes before entry `e`: earlier, or at its time when it lasts 0.
fn samples_before(model: &ProfileModel, e: &Entry) -> usize {
    model
        .sample_times()
        .take_while(|&ms| {
            let ts = ms * 1000.0;
            ts < e.ts || (ts == e.ts && e.end() <= ts)
        })
        .count()
}

/// The walk over `entries` and the seeds of samples `s0..s1` (all of them, for a whole
/// thread); `ends_at`: the time of the task that starts the next part, whose start this part
/// ends with.
fn run_part(
    model: &ProfileModel,
    entries: &[Entry],
    trace_nodes: &[u32],
    cfg: IntegratorConfig,
    seeds: impl Iterator<Item = Seed>,
    ends_at: Option<f64>,
) -> (Vec<ProfileCall>, u64) {
    run_part_as(model, entries, trace_nodes, cfg, seeds, ends_at, false)
}

/// [`run_part`], with each stack built from the root and compared from the bottom when
/// `from_root` (tests only: the walk DevTools does, for the property tests).
fn run_part_as(
    model: &ProfileModel,
    entries: &[Entry],
    trace_nodes: &[u32],
    cfg: IntegratorConfig,
    seeds: impl Iterator<Item = Seed>,
    ends_at: Option<f64>,
    #[cfg_attr(not(test), allow(unused_variables))] from_root: bool,
) -> (Vec<ProfileCall>, u64) {
    let mut seeds = seeds.peekable();
    let mut st = State::new(model, trace_nodes, cfg);
    #[cfg(test)]
    {
        st.from_root = from_root;
    }
    // Recordings make a call for every 2.7 to 3.2 samples (Chromium, generated traces): room
    // for one per two is not grown (and copied) on the way. Room never written costs no memory.
    st.out.reserve(model.n_samples() / 2);

    // The merge (`mergeEventsInOrder`): an event goes first when it starts earlier, or at the same time and
    // ends later; on a full tie the sample (a ProfileCall) goes first.
    let mut stack: Vec<u32> = Vec::new();
    let mut ei = 0usize;
    loop {
        let take_event = match (entries.get(ei), seeds.peek()) {
            (Some(e), Some(s)) => e.ts < s.ts || (e.ts == s.ts && e.end() > s.ts),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_event {
            let e = &entries[ei];
            if e.flags & INSTANT != 0 && e.trace == 0 {
                ei += 1;
                continue;
            }
            let Some(&p) = stack.last() else {
                stack.push(ei as u32);
                st.on_event_start(e, None);
                ei += 1;
                continue;
            };
            let pe = &entries[p as usize];
            if e.ts >= pe.ts + pe.dur {
                st.on_event_end(pe);
                stack.pop();
                continue;
            }
            st.on_event_start(e, Some(pe));
            stack.push(ei as u32);
            ei += 1;
        } else {
            let s = *seeds.peek().expect("a sample is next");
            let parent = match stack.last() {
                None => None,
                Some(&p) => {
                    let pe = &entries[p as usize];
                    if s.ts >= pe.ts + pe.dur {
                        st.on_event_end(pe);
                        stack.pop();
                        continue;
                    }
                    Some(pe)
                }
            };
            st.on_sample(&s, parent);
            seeds.next();
        }
    }
    while let Some(p) = stack.pop() {
        st.on_event_end(&entries[p as usize]);
    }
    if let Some(ts) = ends_at {
        // What the next part's first task does first (`on_event_start`, a reset): the locks
        // left (from fake-JS mode) must not hold the stack.
        st.locks.clear();
        st.truncate(0, ts);
    }
    // Frames still open keep the end of the last truncate that saw them (or 0).
    for k in 0..st.js.len() {
        let (c, seq) = st.js[k];
        if seq < st.n_truncates {
            let call = &mut st.out[c as usize];
            call.dur = positive(st.last_time - call.ts);
        }
    }
    (st.out, st.n_console_errors)
}

/// `Math.max(x, 0)` for the finite values here.
#[inline]
fn positive(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// `callsFromProfileSamples`: one seed per sample with a known node, and the GC bases, made as
/// the merge reaches them; samples `from..to` of the profile.
fn seeds(model: &ProfileModel, from: usize, to: usize) -> impl Iterator<Item = Seed> + '_ {
    // Whether each node has the GC node's id: a short table, where reading each sample's
    // node (a cache miss, most of the time) cost more than the rest of this.
    let gc_id = model.gc.map(|g| model.nodes[g as usize].id);
    let is_gc: Vec<bool> = model.nodes.iter().map(|n| Some(n.id) == gc_id).collect();
    // The GC base as the samples before `from` leave it: the last of them that is not GC, or
    // the first of them when they all are.
    let known = || (0..from).filter_map(|i| model.node_by_index(i));
    let mut prev = known().rev().find(|&n| !is_gc[n as usize]).or_else(|| known().next()).unwrap_or(NONE);
    // Times are sums of deltas: the skipped ones are summed all the same, for the same values.
    let mut times = model.sample_times().enumerate().take(to.min(model.n_samples()));
    if from > 0 {
        times.nth(from - 1);
    }
    times.filter_map(move |(i, ms)| {
        let node = model.node_by_index(i)?;
        let ts = ms * 1000.0;
        let is_gc = is_gc[node as usize];
        let gc_base = if is_gc && prev != NONE { prev } else { NONE };
        if !(is_gc && prev != NONE) {
            prev = node;
        }
        Some(Seed { sample: i as u32, node, ts, gc_base })
    })
}

impl<'m> State<'m> {
    fn new(model: &'m ProfileModel, trace_nodes: &'m [u32], cfg: IntegratorConfig) -> State<'m> {
        let id = |n: Option<u32>| n.map(|n| model.nodes[n as usize].id);
        let keys = model
            .nodes
            .iter()
            .map(|n| {
                debug_assert!(n.frame_never_equal || n.frame_key != NEVER, "frame keys are counted from 0");
                if n.frame_never_equal {
                    NEVER
                } else {
                    n.frame_key
                }
            })
            .collect();
        State {
            model,
            trace_nodes,
            cfg,
            out: Vec::new(),
            js: Vec::new(),
            js_keys: Vec::new(),
            keys,
            locks: Vec::new(),
            fake: false,
            n_truncates: 0,
            last_time: 0.0,
            cand: Vec::new(),
            cand_keys: Vec::new(),
            path: Vec::new(),
            path_cand: Vec::new(),
            cand_gc: false,
            scratch: Vec::new(),
            same: 0,
            nevers: Vec::new(),
            #[cfg(test)]
            from_root: false,
            cand_of: None,
            settled: None,
            meta_ids: [id(model.program), Some(model.nodes[0].id), id(model.idle), id(model.gc)],
            n_console_errors: 0,
        }
    }

    #[inline]
    fn top_lock(&self) -> usize {
        self.locks.last().copied().unwrap_or(0)
    }

    #[inline]
    fn pop_lock(&mut self) -> usize {
        self.locks.pop().unwrap_or(0)
    }

    fn on_event_start(&mut self, e: &Entry, parent: Option<&Entry>) {
        if e.flags & RESET != 0 {
            self.locks.clear();
            self.truncate(0, e.ts);
            self.fake = false;
        }
        if self.fake {
            let d = self.pop_lock();
            self.truncate(d, e.ts);
            self.fake = false;
        }
        self.extract_for_event(e);
        if self.cfg.version == EngineVersion::Latest && e.trace != 0 && parent.is_none_or(|p| p.flags & INVOCATION == 0)
        {
            self.fake = true;
        }
        self.locks.push(self.js.len());
    }

    fn on_event_end(&mut self, e: &Entry) {
        let d = self.pop_lock();
        self.truncate(d, e.ts + e.dur);
    }

    fn on_sample(&mut self, s: &Seed, parent: Option<&Entry>) {
        if parent.is_some_and(|p| p.flags & INVOCATION != 0) || self.fake {
            self.extract_for_seed(s);
        } else if self.js.is_empty() {
            self.fake = true;
            self.extract_for_seed(s);
            self.locks.push(0);
            // A lock pushed without a truncate: the settled state is not carried over it (it
            // could not have mattered: a stack settles from an empty one only under lock 0).
            self.settled = None;
        }
        // Otherwise the sample is ignored: a non-JS parent while JS frames are open.
    }

    /// Whether stacks are built from the root, as DevTools builds them (tests only).
    #[inline]
    fn walks_from_root(&self) -> bool {
        #[cfg(test)]
        return self.from_root;
        #[cfg(not(test))]
        false
    }

    /// A new candidate is coming: the seed it was made for and the settled state no longer
    /// hold (what it shares with the old one is kept by [`State::set_path`]).
    fn new_cand(&mut self) {
        self.cand_of = None;
        self.settled = None;
        if self.cand_gc {
            self.cand.pop();
            self.cand_keys.pop();
            self.cand_gc = false;
        }
        if self.walks_from_root() {
            self.cand.clear();
            self.cand_keys.clear();
            self.path.clear();
            self.path_cand.clear();
        }
        self.same = self.same.min(self.cand.len());
    }

    /// `#makeProfileCallsForStack` for a seed, into `self.cand`.
    fn fill_seed_stack(&mut self, s: &Seed) {
        self.new_cand();
        let model = self.model;
        let gc_id = model.gc.map(|g| model.nodes[g as usize].id);
        let is_gc = Some(model.nodes[s.node as usize].id) == gc_id;
        let base = if is_gc { s.gc_base } else { s.node };
        if base == NONE {
            self.set_path(NONE);
            return;
        }
        self.set_path(base);
        if is_gc && self.keeps(s.node) {
            self.cand.push(s.node);
            self.cand_keys.push(self.keys[s.node as usize]);
            self.cand_gc = true;
        }
    }

    /// Whether a node's frame is on the stacks (native frames are not, unless all events are
    /// shown).
    #[inline]
    fn keeps(&self, node: u32) -> bool {
        self.cfg.show_all_events || !self.model.nodes[node as usize].native
    }

    /// Makes the candidate the stack of `node` and its ancestors, outermost first, the root
    /// and native frames left out ([`NONE`]: empty): the old stack's frames up to the deepest
    /// ancestor the two share stay, the rest of the new one is pushed.
    fn set_path(&mut self, node: u32) {
        let nodes = &self.model.nodes;
        // The frames the old stack lacks, innermost first.
        let mut new = std::mem::take(&mut self.scratch);
        new.clear();
        let mut n = node;
        while n != NONE {
            let nd = &nodes[n as usize];
            if nd.parent == NONE {
                break; // the root
            }
            let d = nd.depth as usize;
            if self.path.get(d) == Some(&n) {
                break; // shared with the old stack from here down
            }
            new.push(n);
            n = nd.parent;
        }
        let shared =
            if n == NONE || nodes[n as usize].parent == NONE { 0 } else { nodes[n as usize].depth as usize + 1 };
        self.path.truncate(shared);
        self.path_cand.truncate(shared);
        let len = self.path_cand.last().map_or(0, |&l| l as usize);
        self.cand.truncate(len);
        self.cand_keys.truncate(len);
        self.same = self.same.min(len);
        for &n in new.iter().rev() {
            self.path.push(n);
            if self.keeps(n) {
                self.cand.push(n);
                self.cand_keys.push(self.keys[n as usize]);
            }
            self.path_cand.push(self.cand.len() as u32);
        }
        self.scratch = new;
    }

    /// The stack for an event's `sampleTraceId`, when it resolves.
    fn fill_trace_id_stack(&mut self, trace: u32) -> bool {
        let node = self.trace_nodes.get(trace as usize - 1).copied().unwrap_or(NO_NODE);
        if node == NO_NODE {
            return false;
        }
        self.new_cand();
        let model = self.model;
        let gc_id = model.gc.map(|g| model.nodes[g as usize].id);
        if Some(model.nodes[node as usize].id) == gc_id {
            self.set_path(NONE);
            return true; // a GC node has no base here: an empty stack, which still overrides
        }
        self.set_path(node);
        true
    }

    fn extract_for_seed(&mut self, s: &Seed) {
        if self.cand_of != Some((s.node, s.gc_base)) {
            self.fill_seed_stack(s);
            self.cand_of = Some((s.node, s.gc_base));
        }
        self.reconcile(s.sample as i64, s.ts);
    }

    fn extract_for_event(&mut self, e: &Entry) {
        if e.trace != 0 && self.fill_trace_id_stack(e.trace) {
            self.reconcile(-1, e.ts);
            return;
        }
        // The candidate is the live JS stack itself: compared with itself, it only differs
        // where a frame is never equal to anything (a NaN field).
        let lock = self.top_lock();
        let i = if self.walks_from_root() {
            let (n, mut i) = (self.js.len(), lock);
            while i < n && self.js_keys[i] != NEVER {
                i += 1;
            }
            i
        } else {
            // The first frame never equal from the lock up (past the stack: the lock itself).
            let k = self.nevers.partition_point(|&p| p < lock);
            if lock >= self.js.len() {
                lock
            } else {
                self.nevers.get(k).copied().unwrap_or(self.js.len())
            }
        };
        self.truncate(i, e.ts);
    }

    /// `#extractStackTrace` once the candidate is in `self.cand`.
    fn reconcile(&mut self, sample: i64, ts: f64) {
        if self.settled == Some(self.n_truncates) {
            // What the walk below would find: every frame equal, nothing to end or push.
            self.n_truncates += 1;
            self.last_time = ts;
            self.settled = Some(self.n_truncates);
            return;
        }
        // framesEqual: equal keys, neither of them never equal; the known-equal prefix is
        // not compared again.
        let n = self.cand_keys.len().min(self.js_keys.len());
        let lock = self.top_lock();
        let known = if self.walks_from_root() { 0 } else { self.same.min(n) };
        let mut i = lock.max(known);
        while i < n && self.cand_keys[i] == self.js_keys[i] && self.cand_keys[i] != NEVER {
            i += 1;
        }
        if known >= lock {
            self.same = i;
        }
        let depth = self.truncate(i, ts);
        // Settled when the stack is now the candidate up to the meta frames it skips, and those
        // come last (an (idle) or (program) sample): the next walk would match every frame.
        let mut settled = depth == i;
        let mut skipped = false;
        for j in i..self.cand.len() {
            let node = self.cand[j];
            let nd = &self.model.nodes[node as usize];
            if self.meta_ids.contains(&Some(nd.id)) {
                skipped = true;
                continue;
            }
            let key = self.cand_keys[j];
            settled &= !skipped && key != NEVER;
            let idx = self.out.len() as u32;
            self.out.push(ProfileCall { node, sample_index: sample, ts, dur: 0.0 });
            let at = self.js.len();
            if key == NEVER {
                self.nevers.push(at);
            } else if self.same == at && at == j {
                self.same += 1; // the frame pushed is the candidate's, at its place
            }
            self.js.push((idx, self.n_truncates));
            self.js_keys.push(key);
        }
        self.settled = settled.then_some(self.n_truncates);
    }

    /// `#truncateJSStack`: clamps to the lock and the stack size, ends the removed frames.
    /// Returns the depth after the clamps.
    fn truncate(&mut self, depth: usize, time: f64) -> usize {
        let mut depth = depth;
        if let Some(&locked) = self.locks.last() {
            if locked != 0 && depth < locked {
                self.n_console_errors += 1;
                depth = locked;
            }
        }
        if self.js.len() < depth {
            self.n_console_errors += 1;
            depth = self.js.len();
        }
        self.n_truncates += 1;
        self.last_time = time;
        for k in depth..self.js.len() {
            let c = self.js[k].0 as usize;
            self.out[c].dur = positive(time - self.out[c].ts);
        }
        self.js.truncate(depth);
        self.js_keys.truncate(depth);
        self.same = self.same.min(depth);
        while self.nevers.last().is_some_and(|&p| p >= depth) {
            self.nevers.pop();
        }
        depth
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::shapes::CpuProfileJson;
    use crate::model::nodes::raw_from_cpuprofile;
    use crate::model::profile::Limits;
    use crate::strings::Strings;

    /// The "basic" profile of DevTools' own SamplesIntegrator tests: root(1) → a(2) → b(3), b also under root;
    /// samples a, a, b, b at 100, 200, 300, 400 µs.
    fn basic() -> (ProfileModel, Strings) {
        let json = r#"{"nodes":[
            {"id":1,"callFrame":{"functionName":"(root)","scriptId":"Peperoni","url":"","lineNumber":-1,"columnNumber":-1},"children":[2,3]},
            {"id":2,"callFrame":{"functionName":"a","scriptId":"Peperoni","url":"","lineNumber":-1,"columnNumber":-1},"children":[3]},
            {"id":3,"callFrame":{"functionName":"b","scriptId":"Peperoni","url":"","lineNumber":-1,"columnNumber":-1},"children":[]}],
            "samples":[2,2,3,3],"timeDeltas":[100,100,100,100],"startTime":0,"endTime":400}"#;
        let mut strings = Strings::default();
        let j: CpuProfileJson = serde_json::from_str(json).unwrap();
        let raw = raw_from_cpuprofile(&j, &mut strings, None).unwrap();
        let m = ProfileModel::new(raw, &strings, Limits::default(), "t", None).unwrap();
        (m, strings)
    }

    /// A deterministic stream of pseudo-random numbers (64-bit LCG, high bits).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// A long profile (`n` samples, some at equal times) over a tree with the meta nodes, a
    /// native frame, and equal frames under different parents; and a thread's sorted entries:
    /// tasks (some lasting 0, some starting exactly at a sample), function calls and
    /// microtasks inside them, trace-id events, instants, and long events over several tasks
    /// (which no cut may fall inside).
    fn long_thread(seed: u64, n: usize) -> (ProfileModel, Vec<Entry>, Vec<u32>) {
        let mut r = Lcg(seed);
        let node = node_json;
        let nodes = [
            node(1, "(root)", "", &[2, 3, 4, 5, 10]),
            node(2, "(program)", "", &[]),
            node(3, "(idle)", "", &[]),
            node(4, "(garbage collector)", "", &[]),
            node(5, "a", "a.js", &[6, 7]),
            node(6, "b", "a.js", &[8]),
            node(7, "c", "a.js", &[9]),
            node(8, "d", "a.js", &[]),
            node(9, "rt", "native V8Runtime", &[]),
            node(10, "e", "e.js", &[11]),
            node(11, "a", "a.js", &[]),
        ];
        let (mut samples, mut deltas) = (Vec::with_capacity(n), Vec::with_capacity(n));
        // The first samples are GC: a cut just after them continues their GC base.
        let mut id = 4;
        for i in 0..n {
            if i >= 10 && r.below(10) >= 6 {
                id = 2 + r.below(10) as i64;
            }
            samples.push(id.to_string());
            deltas.push(if r.below(50) == 0 { 0 } else { 50 + r.below(100) }.to_string());
        }
        let m = model_of(&nodes, &samples, &deltas, Limits::default());
        let entries = random_entries(&mut r, &m, 5, true);
        // Trace indices 1..3: a node, a GC node, one that does not resolve.
        let trace_nodes = vec![m.node_by_index(0).unwrap_or(NO_NODE), m.gc.unwrap_or(NO_NODE), NO_NODE];
        (m, entries, trace_nodes)
    }

    /// The model of a `.cpuprofile` of `nodes` (JSON), `samples` (ids) and `deltas` (µs).
    fn model_of(nodes: &[String], samples: &[String], deltas: &[String], limits: Limits) -> ProfileModel {
        let json = format!(
            r#"{{"nodes":[{}],"samples":[{}],"timeDeltas":[{}],"startTime":0,"endTime":0}}"#,
            nodes.join(","),
            samples.join(","),
            deltas.join(",")
        );
        let mut strings = Strings::default();
        let j: CpuProfileJson = serde_json::from_str(&json).unwrap();
        let raw = raw_from_cpuprofile(&j, &mut strings, None).unwrap();
        ProfileModel::new(raw, &strings, limits, "t", None).unwrap()
    }

    /// A thread's sorted entries over `m`'s samples from sample `from` on: tasks (some lasting
    /// 0, some starting exactly at a sample), function calls and microtasks inside them,
    /// trace-id events, instants, and with `long`, long events over several tasks.
    fn random_entries(r: &mut Lcg, m: &ProfileModel, from: usize, long: bool) -> Vec<Entry> {
        let times: Vec<f64> = m.sample_times().map(|ms| ms * 1000.0).collect();
        let entry = |ts: f64, dur: f64, trace: u32, flags: u8| Entry { ts, dur, trace, flags };
        let mut entries = Vec::new();
        let mut t = times[from];
        let last = times[times.len() - 1];
        while t < last {
            // Sometimes exactly at a sample, sometimes lasting 0.
            if r.below(4) == 0 {
                t = times[times.partition_point(|&x| x < t).min(times.len() - 1)];
            }
            let dur = if r.below(6) == 0 { 0.0 } else { (100 + r.below(3000)) as f64 };
            entries.push(entry(t, dur, 0, RESET));
            if dur > 50.0 {
                match r.below(5) {
                    0 => entries.push(entry(t + 10.0, dur - 20.0, 0, INVOCATION)),
                    1 => entries.push(entry(t + 5.0, dur / 2.0, 0, RESET | INVOCATION)),
                    2 => entries.push(entry(t + 7.0, dur / 3.0, 1 + r.below(3) as u32, INVOCATION)),
                    3 => entries.push(entry(t + 3.0, 0.0, 0, INSTANT)),
                    _ => {}
                }
            }
            if long && r.below(25) == 0 {
                entries.push(entry(t, dur + 5000.0, 0, 0)); // over the next tasks
            }
            if r.below(30) == 0 {
                entries.push(entry(t + 1.0, 0.0, 1 + r.below(3) as u32, INSTANT));
            }
            t += dur + r.below(400) as f64;
        }
        crate::model::sort_entries(&mut entries);
        entries
    }

    /// The calls of a walk whose stacks are kept from one sample to the next, and of one whose
    /// stacks are built from the root and compared from the bottom (DevTools' walk), bit for
    /// bit, with the same console errors, for both engine versions and with native frames kept
    /// or not.
    fn same_as_from_root(what: &str, m: &ProfileModel, entries: &[Entry], trace_nodes: &[u32]) {
        let bits = |calls: &[ProfileCall]| -> Vec<(u32, i64, u64, u64)> {
            calls.iter().map(|c| (c.node, c.sample_index, c.ts.to_bits(), c.dur.to_bits())).collect()
        };
        for (show_all_events, version) in
            [(false, EngineVersion::V0_0_65), (true, EngineVersion::V0_0_65), (false, EngineVersion::Latest)]
        {
            let cfg = IntegratorConfig { show_all_events, version, ..Default::default() };
            let n = m.n_samples();
            let run = |from_root| run_part_as(m, entries, trace_nodes, cfg, seeds(m, 0, n), None, from_root);
            let ((want, want_errors), (got, errors)) = (run(true), run(false));
            assert!(!want.is_empty(), "{what}: no calls");
            assert!(bits(&got) == bits(&want), "{what}, {version:?}, show all {show_all_events}");
            assert_eq!(errors, want_errors, "{what}, {version:?}");
        }
    }

    /// A profile of `nodes` (id, name, url, children) sampled at `samples` (ids, 50-149 µs
    /// apart), with tasks, calls, trace-id events and instants over it as `long_thread` makes
    /// them (trace ids 1..3 resolve to the first sample's node, GC, nothing).
    fn thread_of(r: &mut Lcg, nodes: &[String], samples: &[i64], events: bool) -> (ProfileModel, Vec<Entry>, Vec<u32>) {
        let deltas: Vec<String> =
            samples.iter().map(|_| (if r.below(50) == 0 { 0 } else { 50 + r.below(100) }).to_string()).collect();
        let samples: Vec<String> = samples.iter().map(i64::to_string).collect();
        let m = model_of(nodes, &samples, &deltas, Limits { max_depth: 1_000_000, ..Limits::default() });
        let entries = if events { random_entries(r, &m, 1, false) } else { Vec::new() };
        let trace_nodes = vec![m.node_by_index(0).unwrap_or(NO_NODE), m.gc.unwrap_or(NO_NODE), NO_NODE];
        (m, entries, trace_nodes)
    }

    fn node_json(id: i64, name: &str, url: &str, kids: &[i64]) -> String {
        let kids: Vec<String> = kids.iter().map(|k| k.to_string()).collect();
        format!(
            r#"{{"id":{id},"callFrame":{{"functionName":"{name}","scriptId":"1","url":"{url}","lineNumber":1,"columnNumber":1}},"children":[{}]}}"#,
            kids.join(",")
        )
    }

    /// Random trees (equal frames under different parents, native frames, the meta nodes) and
    /// random walks over them: to a child, to the parent, anywhere, (program), GC.
    #[test]
    fn kept_stacks_equal_devtools_walk_on_random_trees_and_walks() {
        for seed in 1..=24 {
            let mut r = Lcg(seed);
            let n = 5 + r.below(60) as i64;
            // Ids 1 root, 2 (program), 3 (idle), 4 GC, then n functions.
            let mut parent = vec![0i64; (n + 5) as usize];
            let mut kids: Vec<Vec<i64>> = vec![Vec::new(); (n + 5) as usize];
            kids[1] = vec![2, 3, 4];
            for id in 5..5 + n {
                let p = if id == 5 || r.below(4) == 0 { 1 } else { 5 + r.below((id - 5) as u64) as i64 };
                parent[id as usize] = p;
                kids[p as usize].push(id);
            }
            let mut nodes = vec![
                node_json(1, "(root)", "", &kids[1]),
                node_json(2, "(program)", "", &[]),
                node_json(3, "(idle)", "", &[]),
                node_json(4, "(garbage collector)", "", &[]),
            ];
            for id in 5..5 + n {
                let name = format!("f{}", r.below(6));
                let url = if r.below(8) == 0 { "native V8Runtime" } else { "a.js" };
                nodes.push(node_json(id, &name, url, &kids[id as usize]));
            }
            let mut at = 5i64;
            let mut samples = Vec::new();
            for _ in 0..3000 {
                match r.below(10) {
                    0..=2 => {
                        if let Some(&k) = kids[at as usize].first() {
                            at = kids[at as usize][r.below(kids[at as usize].len() as u64) as usize].max(k);
                        }
                    }
                    3..=4 => at = if parent[at as usize] >= 5 { parent[at as usize] } else { at },
                    5 => at = 5 + r.below(n as u64) as i64,
                    6 => {
                        samples.push(2);
                        continue;
                    }
                    7 => {
                        samples.push(4);
                        continue;
                    }
                    _ => {}
                }
                samples.push(at);
            }
            let events = seed % 3 != 0;
            let (m, entries, trace_nodes) = thread_of(&mut r, &nodes, &samples, events);
            same_as_from_root(&format!("tree {seed}"), &m, &entries, &trace_nodes);
        }
    }

    /// Deep chains (f0 > f1 > f2 > f0 > …, 3,000 levels) walked down one level a sample, back up
    /// in jumps, with (program) and GC samples between, with and without tasks over them.
    #[test]
    fn kept_stacks_equal_devtools_walk_on_deep_chains() {
        let depth = 3000i64;
        let mut nodes = vec![
            node_json(1, "(root)", "", &[2, 3, 4, 5]),
            node_json(2, "(program)", "", &[]),
            node_json(3, "(idle)", "", &[]),
            node_json(4, "(garbage collector)", "", &[]),
        ];
        for d in 0..depth {
            let id = 5 + d;
            let kids: Vec<i64> = if d + 1 < depth { vec![id + 1] } else { Vec::new() };
            let url = if d % 97 == 50 { "native V8Runtime" } else { "r.js" };
            nodes.push(node_json(id, &format!("f{}", d % 3), url, &kids));
        }
        for seed in 1..=4 {
            let mut r = Lcg(seed);
            let mut samples = Vec::new();
            let mut at = 5i64;
            while samples.len() < 12_000 {
                match r.below(20) {
                    0 => samples.push(2),
                    1 => samples.push(4),
                    2 => at = (at - r.below(200) as i64).max(5),
                    _ => at = (at + 1).min(4 + depth),
                }
                samples.push(at);
            }
            let (m, entries, trace_nodes) = thread_of(&mut r, &nodes, &samples, seed % 2 == 0);
            same_as_from_root(&format!("chain {seed}"), &m, &entries, &trace_nodes);
        }
    }

    /// The long threads of the cut tests, walked both ways.
    #[test]
    fn kept_stacks_equal_devtools_walk_on_long_threads() {
        for seed in 1..=3 {
            let (m, entries, trace_nodes) = long_thread(seed, 20_000);
            same_as_from_root(&format!("long thread {seed}"), &m, &entries, &trace_nodes);
        }
    }

    /// Cut at any qualifying task, the two halves give the calls of one walk, bit for bit, with
    /// the same console errors, for both engine versions and with native frames kept or not.
    #[test]
    fn a_thread_cut_at_a_task_gives_the_calls_of_one_walk() {
        let bits = |calls: &[ProfileCall]| -> Vec<(u32, i64, u64, u64)> {
            calls.iter().map(|c| (c.node, c.sample_index, c.ts.to_bits(), c.dur.to_bits())).collect()
        };
        let mut tried = 0;
        for seed in 1..=4 {
            let (m, entries, trace_nodes) = long_thread(seed, 20_000);
            let cut_at: Vec<usize> = cuts(&entries).collect();
            assert!(cut_at.len() > 100, "seed {seed}: {} places to cut", cut_at.len());
            // Not every task qualifies: some start inside a long event.
            let tasks = entries.iter().filter(|e| e.flags & RESET != 0 && e.flags & INVOCATION == 0).count();
            assert!(cut_at.len() < tasks, "seed {seed}");
            for (show_all_events, version) in
                [(false, EngineVersion::V0_0_65), (true, EngineVersion::V0_0_65), (false, EngineVersion::Latest)]
            {
                let cfg = IntegratorConfig { show_all_events, version, cut: true, ..Default::default() };
                let n = m.n_samples();
                let (want, want_errors) = run_part(&m, &entries, &trace_nodes, cfg, seeds(&m, 0, n), None);
                for &e in cut_at.iter().step_by(37).chain(&cut_at[..3]).chain(&cut_at[cut_at.len() - 3..]) {
                    let k = samples_before(&m, &entries[e]);
                    // The second half's seeds are those of one pass, GC bases and times alike.
                    let key = |s: Seed| (s.sample, s.node, s.ts.to_bits(), s.gc_base);
                    let one_pass: Vec<_> = seeds(&m, 0, n).filter(|s| s.sample as usize >= k).map(key).collect();
                    assert_eq!(seeds(&m, k, n).map(key).collect::<Vec<_>>(), one_pass, "seeds from {k}");
                    let (got, errors) = build_cut(&m, &entries, &trace_nodes, cfg, e, k, &crate::exec::Threads(2));
                    assert!(bits(&got) == bits(&want), "seed {seed}, {version:?}, cut at entry {e}, sample {k}");
                    assert_eq!(errors, want_errors, "seed {seed}, cut at entry {e}");
                    tried += 1;
                }
            }
        }
        assert!(tried > 100);
    }

    /// A long thread is cut near its middle sample, into halves that give the calls of one walk;
    /// a thread shorter than the least cut or longer than the most is not cut.
    #[test]
    fn a_long_thread_is_cut_near_its_middle() {
        let (m, entries, trace_nodes) = long_thread(7, SPLIT_MIN_SAMPLES + 10_000);
        let n = m.n_samples();
        let (e, k) = split_point(&m, &entries).expect("a place to cut");
        assert!(k.abs_diff(n / 2) < n / 20, "sample {k} of {n}");
        assert_eq!(k, samples_before(&m, &entries[e]));
        let cfg = IntegratorConfig {
            show_all_events: false,
            version: EngineVersion::V0_0_65,
            cut: true,
            ..Default::default()
        };
        let one = IntegratorConfig { cut: false, ..cfg };
        let tv: Vec<(u32, Scalar)> = Vec::new();
        let (calls, _) = build_profile_calls(&m, &entries, &tv, cfg, &crate::exec::Threads(2));
        let (whole, _) = run_part(&m, &entries, &trace_nodes[..0], one, seeds(&m, 0, n), None);
        assert_eq!(calls, whole);
        let (short, _, _) = long_thread(7, SPLIT_MIN_SAMPLES - 1);
        assert_eq!(split_point(&short, &entries), None);
        assert_eq!(split_point_within(&m, &entries, 0..=n - 1), None, "longer than the most cut");
        assert_eq!(split_point_within(&m, &entries, 0..=n), Some((e, k)));
    }

    /// The bounds and the midway estimate of a long thread, whose refine runs two parts side
    /// by side, are those of one part after the other.
    #[test]
    fn a_long_threads_refine_gives_the_same_side_by_side() {
        use crate::estimate::bounds::{refine, Estimator, Refine};
        let (m, entries, _) = long_thread(3, SPLIT_MIN_SAMPLES + 10_000);
        let tv: Vec<(u32, Scalar)> = Vec::new();
        let cfg = IntegratorConfig { version: EngineVersion::V0_0_65, ..Default::default() };
        let (calls, _) = build_profile_calls(&m, &entries, &tv, cfg, &crate::exec::Threads(1));
        assert!(calls.len() > 1000, "{} calls", calls.len());
        // (Bounds alone are made in two halves side by side; with midway, beside its pass.)
        for estimator in [Estimator::DevTools, Estimator::Midway, Estimator::LogMidway] {
            let (mut one, mut two) = (calls.clone(), calls.clone());
            let alone = Refine { estimator, bounds: true, side_by_side: None::<&crate::exec::Threads> };
            let alone = refine(&m, &entries, &tv, &mut one, alone);
            let beside = Refine { estimator, bounds: true, side_by_side: Some(&crate::exec::Threads(2)) };
            let beside = refine(&m, &entries, &tv, &mut two, beside);
            assert_eq!(one, two, "{estimator:?}");
            assert_eq!(format!("{alone:?}"), format!("{beside:?}"), "{estimator:?}");
            assert_eq!(alone.1.len(), calls.len(), "{estimator:?}: bounds for every call");
            assert_eq!(one == calls, estimator == Estimator::DevTools, "{estimator:?}: only midway moves boundaries");
        }
    }

    #[test]
    fn s5_1_1_one_seed_per_sample() {
        let (m, _) = basic();
        let s = seeds(&m, 0, m.n_samples());
        let got: Vec<(i64, u32, f64)> = s.map(|s| (m.nodes[s.node as usize].id, s.sample, s.ts)).collect();
        assert_eq!(got, [(2, 0, 100.0), (2, 1, 200.0), (3, 2, 300.0), (3, 3, 400.0)]);
    }

    #[test]
    fn s5_1_2_sample_stacks() {
        // The stacks DevTools' debug-mode JSSample events carry: [a], [a], [a, b], [a, b].
        // Node 3 resolves to the copy under `a` (parsed last), so b's stack is a > b.
        let (m, strings) = basic();
        let cfg = IntegratorConfig {
            show_all_events: false,
            version: EngineVersion::V0_0_65,
            cut: false,
            ..Default::default()
        };
        let mut st = State::new(&m, &[], cfg);
        let mut stacks = Vec::new();
        for s in seeds(&m, 0, m.n_samples()) {
            st.fill_seed_stack(&s);
            let names: Vec<String> = st
                .cand
                .iter()
                .map(|&c| match m.frame(c).function_name {
                    crate::js::Scalar::Str(id) => strings.get(id).to_owned(),
                    _ => String::new(),
                })
                .collect();
            stacks.push(names.join(">"));
        }
        assert_eq!(stacks, ["a", "a", "a>b", "a>b"]);
    }
}
