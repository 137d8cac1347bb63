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
    let bits = |calls: &[ProfileCall]| -> Vec<(u32, i32, u64, u64)> {
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
    let bits = |calls: &[ProfileCall]| -> Vec<(u32, i32, u64, u64)> {
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
    let cfg =
        IntegratorConfig { show_all_events: false, version: EngineVersion::V0_0_65, cut: true, ..Default::default() };
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
        let (mut one, mut two, mut three) = (calls.clone(), calls.clone(), calls.clone());
        let exec = crate::exec::Threads(2);
        let alone =
            Refine { estimator, bounds: true, side_by_side: None::<&crate::exec::Threads>, release_samples: false };
        let alone = refine(&mut m.clone(), &entries, &tv, &mut one, alone);
        let beside = Refine { estimator, bounds: true, side_by_side: Some(&exec), release_samples: false };
        let beside = refine(&mut m.clone(), &entries, &tv, &mut two, beside);
        assert_eq!(one, two, "{estimator:?}");
        assert_eq!(format!("{alone:?}"), format!("{beside:?}"), "{estimator:?}");
        // Letting the samples go once their tables are made changes nothing.
        let mut let_go = m.clone();
        let how = Refine { estimator, bounds: true, side_by_side: Some(&exec), release_samples: true };
        let released = refine(&mut let_go, &entries, &tv, &mut three, how);
        assert_eq!((one == three, format!("{alone:?}")), (true, format!("{released:?}")), "{estimator:?}");
        assert_eq!((let_go.sample_nodes.len(), let_go.n_samples()), (0, m.n_samples()), "{estimator:?}: let go");
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
    let cfg =
        IntegratorConfig { show_all_events: false, version: EngineVersion::V0_0_65, cut: false, ..Default::default() };
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
