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
    /// The [`State::keys`] of `cand`, once it is complete (after [`State::filter_natives`]).
    cand_keys: Vec<u32>,
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
    let mut seeds = seeds.peekable();
    let mut st = State::new(model, trace_nodes, cfg);
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

    /// Empties the candidate for a new stack: what was known of the old one no longer holds.
    fn new_cand(&mut self) {
        self.cand.clear();
        self.cand_keys.clear();
        self.cand_of = None;
        self.settled = None;
    }

    /// `#makeProfileCallsForStack` for a seed, into `self.cand`.
    fn fill_seed_stack(&mut self, s: &Seed) {
        self.new_cand();
        let model = self.model;
        let gc_id = model.gc.map(|g| model.nodes[g as usize].id);
        let is_gc = Some(model.nodes[s.node as usize].id) == gc_id;
        let base = if is_gc { s.gc_base } else { s.node };
        if base == NONE {
            return;
        }
        self.push_ancestors(base);
        if is_gc {
            self.cand.push(s.node);
        }
    }

    /// The node and its ancestors, outermost first, the root excluded.
    fn push_ancestors(&mut self, node: u32) {
        let start = self.cand.len();
        let mut n = node;
        while n != NONE {
            let nd = &self.model.nodes[n as usize];
            if nd.parent == NONE {
                break; // the root
            }
            self.cand.push(n);
            n = nd.parent;
        }
        self.cand[start..].reverse();
    }

    /// Drops the native frames (unless all events are shown); the candidate is then complete.
    fn filter_natives(&mut self) {
        if !self.cfg.show_all_events {
            let nodes = &self.model.nodes;
            self.cand.retain(|&c| !nodes[c as usize].native);
        }
        self.cand_keys.clear();
        self.cand_keys.extend(self.cand.iter().map(|&c| self.keys[c as usize]));
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
            return true; // a GC node has no base here: an empty stack, which still overrides
        }
        self.push_ancestors(node);
        true
    }

    fn extract_for_seed(&mut self, s: &Seed) {
        if self.cand_of != Some((s.node, s.gc_base)) {
            self.fill_seed_stack(s);
            self.filter_natives();
            self.cand_of = Some((s.node, s.gc_base));
        }
        self.reconcile(s.sample as i64, s.ts);
    }

    fn extract_for_event(&mut self, e: &Entry) {
        if e.trace != 0 && self.fill_trace_id_stack(e.trace) {
            self.filter_natives();
            self.reconcile(-1, e.ts);
            return;
        }
        // The candidate is the live JS stack itself: compared with itself, it only differs
        // where a frame is never equal to anything (a NaN field).
        let n = self.js.len();
        let mut i = self.top_lock();
        while i < n && self.js_keys[i] != NEVER {
            i += 1;
        }
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
        // framesEqual: equal keys, neither of them never equal.
        let n = self.cand_keys.len().min(self.js_keys.len());
        let mut i = self.top_lock();
        while i < n && self.cand_keys[i] == self.js_keys[i] && self.cand_keys[i] != NEVER {
            i += 1;
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
        let node = |id: i64, name: &str, url: &str, kids: &[i64]| {
            let kids: Vec<String> = kids.iter().map(|k| k.to_string()).collect();
            format!(
                r#"{{"id":{id},"callFrame":{{"functionName":"{name}","scriptId":"1","url":"{url}","lineNumber":1,"columnNumber":1}},"children":[{}]}}"#,
                kids.join(",")
            )
        };
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
        let json = format!(
            r#"{{"nodes":[{}],"samples":[{}],"timeDeltas":[{}],"startTime":0,"endTime":0}}"#,
            nodes.join(","),
            samples.join(","),
            deltas.join(",")
        );
        let mut strings = Strings::default();
        let j: CpuProfileJson = serde_json::from_str(&json).unwrap();
        let raw = raw_from_cpuprofile(&j, &mut strings, None).unwrap();
        let m = ProfileModel::new(raw, &strings, Limits::default(), "t", None).unwrap();
        let times: Vec<f64> = m.sample_times().map(|ms| ms * 1000.0).collect();
        let entry = |ts: f64, dur: f64, trace: u32, flags: u8| Entry { ts, dur, trace, flags };
        let mut entries = Vec::new();
        let mut t = times[5];
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
            if r.below(25) == 0 {
                entries.push(entry(t, dur + 5000.0, 0, 0)); // over the next tasks
            }
            if r.below(30) == 0 {
                entries.push(entry(t + 1.0, 0.0, 1 + r.below(3) as u32, INSTANT));
            }
            t += dur + r.below(400) as f64;
        }
        crate::model::sort_entries(&mut entries);
        // Trace indices 1..3: a node, a GC node, one that does not resolve.
        let trace_nodes = vec![m.node_by_index(0).unwrap_or(NO_NODE), m.gc.unwrap_or(NO_NODE), NO_NODE];
        (m, entries, trace_nodes)
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
