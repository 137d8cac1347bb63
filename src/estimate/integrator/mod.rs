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
    /// Whether a thread lets go of its samples once its calls are made (see
    /// [`crate::Config::keep_samples`]).
    pub release_samples: bool,
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
    /// The frame keys ([`Node::frame_key`](crate::model::profile::Node::frame_key)) of the JS
    /// stack's frames, side by side with `js`: the walk that compares the stacks reads two
    /// short arrays instead of a node per frame.
    js_keys: Vec<u32>,
    locks: Vec<usize>,
    fake: bool,
    /// Truncates so far, and the time of the last one.
    n_truncates: u64,
    last_time: f64,
    /// The candidate stack (nodes, outermost first); its calls would all start at the same
    /// sample and time, which [`State::reconcile`] is given.
    cand: Vec<u32>,
    /// The frame keys of `cand`, side by side with it.
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
const NEVER: u32 = crate::model::profile::NEVER_EQUAL;

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
        State {
            model,
            trace_nodes,
            cfg,
            out: Vec::new(),
            js: Vec::new(),
            js_keys: Vec::new(),
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
            self.cand_keys.push(self.model.nodes[s.node as usize].frame_key);
            self.cand_gc = true;
        }
    }

    /// Whether a node's frame is on the stacks (native frames are not, unless all events are
    /// shown).
    #[inline]
    fn keeps(&self, node: u32) -> bool {
        self.cfg.show_all_events || !self.model.is_native(node)
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
                self.cand_keys.push(self.model.nodes[n as usize].frame_key);
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
        self.reconcile(s.sample as i32, s.ts);
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
    fn reconcile(&mut self, sample: i32, ts: f64) {
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
mod tests;
