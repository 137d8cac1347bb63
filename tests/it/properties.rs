//! Property tests: for random valid profiles and event streams, the calls are non-negative,
//! created in non-decreasing start order, properly nested, and their self times add up; the
//! refined estimates too, with every call of DevTools' flame chart in theirs.

use proptest::prelude::*;

use jscalls::Estimator;

use crate::support::{cpuprofile, node, run, run_with, trace, x};

/// A random tree: node i (2..) has a parent among the earlier nodes (1 is the root); a few
/// names repeat (equal frames under different nodes), and the meta nodes are there too.
fn profile_parts() -> impl Strategy<Value = (Vec<String>, Vec<i64>, Vec<f64>)> {
    (3usize..24)
        .prop_flat_map(|n| {
            (
                proptest::collection::vec(0usize..1000, n),
                proptest::collection::vec((0usize..n + 4, -40i64..400), 1..120),
            )
        })
        .prop_map(|(parents, samples)| {
            let n = parents.len();
            let mut children: Vec<Vec<i64>> = vec![Vec::new(); n + 2];
            for i in 2..=n {
                let p = if i == 2 { 1 } else { 1 + parents[i - 1] % (i - 1) };
                children[p].push(i as i64);
            }
            let meta = ["(program)", "(idle)", "(garbage collector)"];
            let first_meta = n as i64 + 1;
            for k in 0..3 {
                children[1].push(first_meta + k);
            }
            let mut nodes = vec![node(1, "(root)", &children[1])];
            for (i, kids) in children.iter().enumerate().take(n + 1).skip(2) {
                nodes.push(node(i as i64, &format!("f{}", i % 7), kids));
            }
            for (k, m) in meta.iter().enumerate() {
                nodes.push(node(first_meta + k as i64, m, &[]));
            }
            // Sample ids cover real nodes, meta nodes and an unknown id or two.
            let ids: Vec<i64> = samples.iter().map(|(s, _)| (*s as i64 % (n as i64 + 5)) + 1).collect();
            let deltas: Vec<f64> = samples.iter().map(|(_, d)| *d as f64).collect();
            (nodes, ids, deltas)
        })
}

/// Random trace events: a few tasks, each with nested invocations and non-JS events.
fn events() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec((0u32..6, 0i64..20_000, 0i64..3000), 0..12).prop_map(|v| {
        let names = ["RunTask", "FunctionCall", "Layout", "RunMicrotasks", "EvaluateScript", "TimerFire"];
        let mut out = Vec::new();
        for (k, ts, dur) in v {
            out.push(x(names[k as usize], ts as f64, dur as f64));
            if k == 0 {
                out.push(x("FunctionCall", ts as f64 + 3.0, (dur as f64 - 6.0).max(0.0)));
            }
        }
        out
    })
}

/// The checks every estimate must pass.
fn check(a: &jscalls::Analysis) -> Result<(), TestCaseError> {
    for t in a.threads() {
        let calls: Vec<_> = t.calls().collect();
        for c in &calls {
            prop_assert!(c.dur() >= 0.0 && c.ts().is_finite(), "negative or non-finite call {:?}", c);
        }
        // Created in non-decreasing start order (the reference's rule 8).
        for w in calls.windows(2) {
            prop_assert!(w[0].ts() <= w[1].ts(), "out of order: {:?} then {:?}", w[0], w[1]);
        }
        // Properly nested: in canonical order, each call of the flame-chart tree lies inside
        // every open tree call it starts in. (The reference engine can emit a call that
        // overflows its parent after lock clamping, fixtures/rules/overflow-from-locks.json;
        // the tree drops exactly those, and so must we: they have no depth.)
        let mut open: Vec<(f64, f64)> = Vec::new();
        for c in t.calls_sorted() {
            if c.depth().is_none() {
                continue;
            }
            while let Some(&(ts, end)) = open.last() {
                if c.ts() >= end && !(c.ts() == ts && end == ts) {
                    open.pop();
                } else {
                    break;
                }
            }
            if let Some(&(_, end)) = open.last() {
                prop_assert!(c.ts() + c.dur() <= end, "call {:?} overflows its parent ending at {}", c, end);
            }
            open.push((c.ts(), c.ts() + c.dur()));
        }
    }
    Ok(())
}

/// `check`, plus: no self time is negative and the self times add up to the roots' durations.
/// (A call can still miss the tree: DevTools drops one whose end passes its parent's by f64
/// noise from the µs → ms → µs round trip; neither adds its time anywhere.)
fn check_profile(a: &jscalls::Analysis) -> Result<(), TestCaseError> {
    check(a)?;
    let t = a.threads().next().unwrap();
    let mut self_sum = 0.0f64;
    let mut root_sum = 0.0f64;
    for c in t.calls() {
        let Some(s) = c.self_time() else { continue };
        prop_assert!(s >= -1e-6, "negative self time {s} for {:?}", c);
        self_sum += s;
        if c.depth() == Some(0) {
            root_sum += c.dur();
        }
    }
    prop_assert!((self_sum - root_sum).abs() <= 1e-6 * root_sum.max(1.0), "self {self_sum} != roots {root_sum}");
    Ok(())
}

/// The refined estimates of `json` (midway with bounds, log-midway): DevTools' calls, whole
/// µs or DevTools' own times, well-formed as [`check`] has it, every call of DevTools' flame
/// chart in theirs (no moved boundary crosses or meets an event's edge or leaves its parent;
/// one that straddled an edge may come to fit), and every call's bounds in order.
fn check_refined(json: &str, devtools: &jscalls::Analysis) -> Result<(), TestCaseError> {
    let in_tree = |a: &jscalls::Analysis| -> Vec<Vec<bool>> {
        a.threads().map(|t| t.calls().map(|c| c.depth().is_some()).collect()).collect()
    };
    let want = in_tree(devtools);
    for estimator in [Estimator::Midway, Estimator::LogMidway] {
        let a = run_with(json, |c| {
            c.estimator = estimator;
            c.bounds = estimator == Estimator::Midway;
        });
        check(&a)?;
        let got = in_tree(&a);
        prop_assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), want.iter().map(Vec::len).collect::<Vec<_>>());
        for (g, w) in got.iter().flatten().zip(want.iter().flatten()) {
            prop_assert!(*g || !*w, "{:?}: a call of DevTools' flame chart left out", estimator);
        }
        for (t, d) in a.threads().zip(devtools.threads()) {
            for (c, dc) in t.calls().zip(d.calls()) {
                // Whole µs, or DevTools' own time (kept where no whole µs lies on its side of
                // an edge under a µs away).
                let whole_or = |x: f64, own: f64| x.fract() == 0.0 || x == own;
                prop_assert!(
                    whole_or(c.ts(), dc.ts()) && whole_or(c.ts() + c.dur(), dc.ts() + dc.dur()),
                    "{:?}: {:?} is neither whole µs nor DevTools' {:?}",
                    estimator,
                    c,
                    dc
                );
                if let Some(b) = c.bounds() {
                    let ordered = |lo: Option<f64>, hi: Option<f64>| lo.zip(hi).is_none_or(|(lo, hi)| lo <= hi);
                    prop_assert!(ordered(b[0], b[1]) && ordered(b[2], b[3]), "bounds out of order: {:?} {:?}", b, c);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A bare profile (integrator mode): nesting, order, and self times that add up: each
    /// call's self time is its duration minus its children's, so they sum to the roots' time.
    #[test]
    fn profile_estimates_are_well_formed((nodes, samples, deltas) in profile_parts()) {
        let json = cpuprofile(&nodes, &samples, &deltas, 1000.0, 1000.0);
        let a = run(&json);
        let r = check_profile(&a).and_then(|()| check_refined(&json, &a));
        if r.is_err() {
            if let Some(p) = std::env::var_os("JSCALLS_DUMP_FAILURE") {
                std::fs::write(p, &json).unwrap();
            }
        }
        r?;
    }

    /// A trace with random tasks and events: the same well-formedness.
    #[test]
    fn trace_estimates_are_well_formed((nodes, samples, deltas) in profile_parts(), evs in events()) {
        let mut evs = evs;
        evs.push(x("RunTask", 0.0, 1.0));
        let json = trace(&nodes, &samples, &deltas, "", &evs);
        let a = run(&json);
        if let Err(e) = check(&a).and_then(|()| check_refined(&json, &a)) {
            if let Some(p) = std::env::var_os("JSCALLS_DUMP_FAILURE") {
                std::fs::write(p, &json).unwrap();
            }
            return Err(e);
        }
    }
}
