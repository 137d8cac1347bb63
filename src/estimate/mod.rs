//! Profile model + trace events → ProfileCalls: the estimate, per thread.
//!
//! Three modes, as in DevTools: *trace* (the SamplesIntegrator over samples merged with the
//! thread's events), *integrator* (the same with no events: a bare `.cpuprofile`, as the
//! oracle's `integrator` mode), and *cpu-profile* (`forEachFrame`, the Performance panel's own
//! path for a loaded `.cpuprofile`). Threads are independent: `crate::exec` decides how they
//! run.

pub(crate) mod bounds;
pub(crate) mod for_each_frame;
pub(crate) mod integrator;
mod per_call;
pub(crate) mod tree;

use std::cmp::Ordering;

use crate::exec::Exec;
use crate::model::profile::ProfileModel;
use crate::model::{entry_order, ThreadWork};
use crate::strings::Strings;
pub(crate) use per_call::{Depths, SelfTimes};

pub(crate) use integrator::IntegratorConfig;

/// One estimated call (a DevTools `ProfileCall`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ProfileCall {
    /// Index of the node in [`ProfileModel::nodes`].
    pub node: u32,
    /// The (time-sorted) index of the sample that opened the call; −1 for trace-id frames. (32
    /// bits: a call is 24 bytes; a profile holds fewer than 2³¹ samples, see
    /// [`crate::model::profile::MAX_SAMPLES`].)
    pub sample_index: i32,
    /// Start, µs.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
}

// The estimate of a long thread is mostly its calls: kept at 24 bytes.
const _: () = assert!(std::mem::size_of::<ProfileCall>() == 24);

/// A thread's trace event with its name, kept with its calls: what DevTools' tree of every
/// event and the stacks of the events inside calls read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TraceEntry {
    /// µs.
    pub ts: f64,
    /// µs.
    pub dur: f64,
    /// The event's name.
    pub name: crate::strings::StrId,
    /// `RunTask` in the `disabled-by-default-devtools.timeline` category (`isTopLevelEvent`).
    pub top_level: bool,
}

/// How calls are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// SamplesIntegrator with the thread's trace events (traces).
    Trace,
    /// SamplesIntegrator with no events (a bare `.cpuprofile`, the default for them).
    Integrator,
    /// `forEachFrame`: the Performance panel's algorithm for a loaded `.cpuprofile`.
    PerformancePanel,
}

impl Mode {
    /// The name used in outputs (the oracle's names).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Trace => "trace",
            Mode::Integrator => "integrator",
            Mode::PerformancePanel => "devtools",
        }
    }
}

/// The calls of one profile, with what identifies it.
#[derive(Debug)]
pub(crate) struct ThreadCalls {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// Profile id, as JSON.
    pub profile_id: String,
    /// Thread name, when the trace names the thread.
    pub thread_name: Option<String>,
    /// See [`crate::model::ThreadWork::profile_name`].
    pub profile_name: Option<String>,
    /// Why DevTools computes no calls for this profile, when it does not.
    pub skipped: Option<&'static str>,
    /// The profile (nodes and frames the calls refer to).
    pub model: ProfileModel,
    /// The calls, in the order DevTools creates them.
    pub calls: Vec<ProfileCall>,
    /// Self time of each call in the flame-chart tree (µs); None when the tree drops the call.
    pub self_time: SelfTimes,
    /// Depth of each call in the flame-chart tree (trace events count); None when dropped.
    pub depth: Depths,
    /// Console errors the reference engine would have logged for this thread.
    pub console_errors: u64,
    /// Per call, when bounds were asked for: where its true start and end lie.
    pub bounds: bounds::BoundsTable,
    /// What the file says about its sampler, when bounds or the midway estimate were asked for.
    pub sampler: Option<bounds::Sampler>,
    /// Which estimate the calls are.
    pub estimator: bounds::Estimator,
    /// How the calls were computed (and so the order the flame-chart tree takes them in).
    pub mode: Mode,
    /// See [`ThreadCalls::node_depths`].
    node_depth: Vec<i32>,
    /// See [`ThreadCalls::canonical_order`].
    order: Vec<u32>,
    /// The thread's trace events with their names, sorted, when they were kept
    /// ([`crate::Config::keep_event_names`]): what DevTools' tree of every event reads.
    pub trace_entries: Vec<TraceEntry>,
}

impl ThreadCalls {
    /// Call indices in the oracle's canonical order: ts, then longer first, then outer frames
    /// first (`nodeDepth`), then sample index, then node id, then creation order. Sorted where
    /// the thread is estimated (a worker), not where its calls are written.
    pub(crate) fn canonical_order(&self) -> &[u32] {
        &self.order
    }

    fn sort_canonical(&self) -> Vec<u32> {
        // nodeDepth is looked up by id, as the oracle does (the copy parsed last).
        let node_depth = &self.node_depth;
        let (calls, nodes) = (&self.calls, &self.model.nodes);
        // Indices sorted in place, 4 bytes a call: a table of the keys would be 40 (92 MB for
        // the 2.3 million calls of the 5.4 GB trace's largest thread, the run's peak). Push
        // order is already by ts, so the sort (adaptive) mostly compares neighbours.
        let mut order: Vec<u32> = (0..calls.len() as u32).collect();
        order.sort_by(|&i, &j| {
            let (a, b) = (&calls[i as usize], &calls[j as usize]);
            cmp_f64(a.ts, b.ts).then_with(|| cmp_f64(b.dur, a.dur)).then_with(|| {
                let (m, n) = (a.node as usize, b.node as usize);
                node_depth[m]
                    .cmp(&node_depth[n])
                    .then(a.sample_index.cmp(&b.sample_index))
                    .then(nodes[m].id.cmp(&nodes[n].id))
                    .then(i.cmp(&j))
            })
        });
        order
    }

    /// Per node: the depth of the node its id resolves to (the oracle's `nodeDepth`), or −2.
    pub(crate) fn node_depths(&self) -> &[i32] {
        &self.node_depth
    }
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// The order the flame-chart tree takes `calls` in: as created for a trace (the order the
/// RendererHandler merges them in); sorted, start then longer first, for a bare profile (as
/// the integrator mode sorts them).
pub(crate) fn tree_order(calls: &[ProfileCall], mode: Mode) -> TreeOrder {
    if mode != Mode::Integrator {
        return TreeOrder::Created(calls.len());
    }
    let mut order: Vec<u32> = (0..calls.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&calls[a as usize], &calls[b as usize]);
        cmp_f64(a.ts, b.ts).then_with(|| cmp_f64(b.ts + b.dur, a.ts + a.dur))
    });
    TreeOrder::Sorted(order)
}

/// Call indices in the order of [`tree_order`] (the order of creation needs no table: 4 bytes
/// a call at the peak of every command that makes a flame chart).
pub(crate) enum TreeOrder {
    /// `0..n`.
    Created(usize),
    Sorted(Vec<u32>),
}

impl TreeOrder {
    /// The `i`th call in this order.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<usize> {
        match self {
            TreeOrder::Created(n) => (i < *n).then_some(i),
            TreeOrder::Sorted(v) => v.get(i).map(|&k| k as usize),
        }
    }
}

/// Estimates one thread; `exec` runs the halves of a thread cut in two (see
/// [`IntegratorConfig::cut`]).
pub(crate) fn estimate_thread(
    mut work: ThreadWork,
    mode: Mode,
    cfg: IntegratorConfig,
    exec: &impl Exec,
) -> ThreadCalls {
    estimate_lent(&mut work, mode, cfg, exec, Integrated::Make)
}

/// One thread estimated twice, with `cfgs[0]` and then `cfgs[1]`, from one model: `keep` makes
/// what is kept of each estimate before the next is made (the first lets no samples go).
pub(crate) fn estimate_twice<T>(
    mut work: ThreadWork,
    mode: Mode,
    cfgs: [IntegratorConfig; 2],
    exec: &impl Exec,
    keep: impl Fn(&ThreadCalls) -> T,
) -> (T, T) {
    // Two estimators of one walk (DevTools' and midway, or with and without bounds) refine the
    // same calls: the walk is made once, and its calls copied for the second where the copy is
    // small.
    let (a, b) = (&cfgs[0], &cfgs[1]);
    let same_walk = (a.show_all_events, a.version, a.cut) == (b.show_all_events, b.version, b.cut);
    let mut copy = None;
    let kept = {
        let made = if same_walk { Integrated::MakeAndCopy(&mut copy) } else { Integrated::Make };
        let first = estimate_lent(&mut work, mode, IntegratorConfig { release_samples: false, ..cfgs[0] }, exec, made);
        let kept = keep(&first);
        // The rest of the first estimate goes here, before the second is made.
        work.model = first.model;
        kept
    };
    let made = copy.map_or(Integrated::Make, Integrated::Made);
    let second = estimate_lent(&mut work, mode, cfgs[1], exec, made);
    (kept, keep(&second))
}

/// Where [`estimate_lent`] gets the integrator's calls.
enum Integrated<'a> {
    /// It walks the samples.
    Make,
    /// It walks them, and copies the calls into `.0` when there are at most [`COPY_MAX`].
    MakeAndCopy(&'a mut Option<(Vec<ProfileCall>, u64)>),
    /// The calls (and console errors) a walk with the same options made.
    Made((Vec<ProfileCall>, u64)),
}

/// Calls [`Integrated::MakeAndCopy`] copies at most (24 MB): a larger thread walks its samples
/// again, so that the copy does not add to the peak of a large input.
const COPY_MAX: usize = 1 << 20;

/// [`COPY_MAX`], which the tests lower to have every thread walk again (either way gives the
/// same calls, so the other tests running meanwhile are unaffected).
#[cfg(test)]
static COPY_MAX_IN_TESTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(COPY_MAX);

fn copy_max() -> usize {
    #[cfg(test)]
    return COPY_MAX_IN_TESTS.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    COPY_MAX
}

/// [`estimate_thread`] of a thread that lends its model to the calls (and may be estimated
/// again once it is given back).
fn estimate_lent(
    work: &mut ThreadWork,
    mode: Mode,
    cfg: IntegratorConfig,
    exec: &impl Exec,
    made: Integrated<'_>,
) -> ThreadCalls {
    let mut model = std::mem::take(&mut work.model);
    // Once the calls are made nothing reads the samples unless asked to keep them (a long
    // thread's samples are much of what it holds while its calls are shaped and handed on).
    let release = |model: &mut ProfileModel| {
        if cfg.release_samples {
            model.release_samples();
        }
    };
    let (mut bounds, mut sampler) = (bounds::BoundsTable::default(), None);
    let (calls, self_time, depth, console_errors) = if work.skipped.is_some() {
        (Vec::new(), SelfTimes::default(), Depths::default(), 0)
    } else {
        match mode {
            Mode::Trace | Mode::Integrator => {
                let entries = &work.entries;
                debug_assert!(
                    entries.windows(2).all(|w| entry_order(&w[0], &w[1]).is_le()),
                    "a thread's entries come sorted (ThreadWork::entries)"
                );
                let walk = || integrator::build_profile_calls(&model, entries, &work.trace_values, cfg, exec);
                let (mut calls, errors) = match made {
                    Integrated::Made(made) => made,
                    Integrated::Make => walk(),
                    Integrated::MakeAndCopy(copy) => {
                        let (calls, errors) = walk();
                        if calls.len() <= copy_max() {
                            *copy = Some((calls.clone(), errors));
                        }
                        (calls, errors)
                    }
                };
                if cfg.bounds || cfg.estimator != bounds::Estimator::DevTools {
                    let side_by_side = integrator::long_enough_to_cut(&model, cfg).then_some(exec);
                    let release_samples = cfg.release_samples;
                    let how =
                        bounds::Refine { estimator: cfg.estimator, bounds: cfg.bounds, side_by_side, release_samples };
                    let (s, b) = bounds::refine(&mut model, entries, &work.trace_values, &mut calls, how);
                    (bounds, sampler) = (b, Some(s));
                }
                release(&mut model);
                let mut self_time = SelfTimes::none(calls.len());
                let mut depth = Depths::none(calls.len());
                let order = tree_order(&calls, mode);
                tree::treify(entries, &calls, &order, &mut self_time, &mut depth);
                (calls, self_time, depth, errors)
            }
            Mode::PerformancePanel => {
                let f = for_each_frame::for_each_frame(&model);
                release(&mut model);
                (f.calls, f.self_time, f.depth, 0)
            }
        }
    };
    // A skipped thread's too (the branches let them go as soon as their calls are made).
    release(&mut model);
    let trace_entries = if work.names.len() == work.entries.len() && !work.names.is_empty() {
        work.entries
            .iter()
            .zip(&work.names)
            .map(|(e, &(name, top_level))| TraceEntry { ts: e.ts, dur: e.dur, name, top_level })
            .collect()
    } else {
        Vec::new()
    };
    let m = &model;
    let node_depth =
        m.nodes.iter().map(|n| m.node_by_id(n.id).map(|k| m.nodes[k as usize].depth).unwrap_or(-2)).collect();
    let mut t = ThreadCalls {
        pid: work.pid,
        tid: work.tid,
        profile_id: work.profile_id.clone(),
        thread_name: work.thread_name.clone(),
        profile_name: work.profile_name.clone(),
        skipped: work.skipped,
        model,
        calls,
        self_time,
        depth,
        console_errors,
        bounds,
        sampler,
        estimator: if sampler.is_some() { cfg.estimator } else { bounds::Estimator::DevTools },
        mode,
        node_depth,
        order: Vec::new(),
        trace_entries,
    };
    t.order = t.sort_canonical();
    t
}

/// Threads' calls handed to a writer in order, however they are held: all estimated already
/// ([`AllThreads`]), or each estimated as the writer reaches it ([`Lazy`](crate::schedule::Lazy)), so that memory holds
/// one thread's calls at a time.
pub(crate) trait Estimates {
    /// How the calls were computed.
    fn mode(&self) -> Mode;
    /// How many threads [`Estimates::each`] visits.
    fn len(&self) -> usize;
    /// Calls `f` with every thread in order (sorted by pid, tid), and the strings its frames use.
    fn each<E>(&mut self, f: impl FnMut(&ThreadCalls, &Strings) -> Result<(), E>) -> Result<(), E>;
}

impl Estimates for &AllThreads {
    fn mode(&self) -> Mode {
        self.mode
    }
    fn len(&self) -> usize {
        self.threads.len()
    }
    fn each<E>(&mut self, mut f: impl FnMut(&ThreadCalls, &Strings) -> Result<(), E>) -> Result<(), E> {
        self.threads.iter().try_for_each(|t| f(t, &self.strings))
    }
}

/// The estimate of a whole input.
#[derive(Debug)]
pub(crate) struct AllThreads {
    /// How the calls were computed.
    pub mode: Mode,
    /// Strings the frames refer to.
    pub strings: Strings,
    /// One entry per profile DevTools keeps, sorted by (pid, tid).
    pub threads: Vec<ThreadCalls>,
}

impl AllThreads {
    /// Total number of calls.
    pub(crate) fn n_calls(&self) -> usize {
        self.threads.iter().map(|t| t.calls.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    /// The second estimate of one read is the same whether it copies the first's walk or walks
    /// again (a thread over [`super::COPY_MAX`] calls does).
    #[test]
    fn the_second_of_two_estimates_copies_the_walk_or_walks_again_alike() {
        use crate::{Config, Estimator, Source};
        let estimates = |copy_max: usize, path: &str, [first, second]: [Estimator; 2]| {
            super::COPY_MAX_IN_TESTS.store(copy_max, std::sync::atomic::Ordering::Relaxed);
            let first = Config { estimator: first, ..Config::default() };
            let (_, assembled) = crate::assemble(&Source::file(path), &first).unwrap();
            let second = Config { estimator: second, ..Config::default() };
            let rows = |th: crate::Thread<'_>| {
                th.calls_sorted().map(|c| (c.ts(), c.dur(), c.self_time(), c.node_id(), c.sample_index())).collect()
            };
            let (a, b): (Vec<Vec<_>>, Vec<Vec<_>>) = assembled.estimate_twice(&second, rows);
            super::COPY_MAX_IN_TESTS.store(super::COPY_MAX, std::sync::atomic::Ordering::Relaxed);
            (a, b)
        };
        let (devtools, midway) = (Estimator::DevTools, Estimator::Midway);
        for path in ["fixtures/chrome-ui.json.gz", "fixtures/node-trace-mixed.json.gz"] {
            // Midway first: its calls are moved in place, after the copy for the second.
            for pair in [[devtools, midway], [midway, devtools]] {
                let (copied, walked) = (estimates(usize::MAX, path, pair), estimates(0, path, pair));
                assert!(copied == walked, "{path}, {pair:?}");
                assert!(copied.0 != copied.1, "{path}: the two estimators must differ for the test to tell");
            }
        }
    }
}
