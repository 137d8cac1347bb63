//! `jscalls tree` and the library's call trees on real recordings: weights add up before and
//! after transforms, the JSON is the documented shape, bad transforms are usage errors.

use std::process::Command;

use jscalls::tree::{CallTree, FuncId, Stacks, Transform};
use jscalls::{analyze, Config, Source};

/// Σ of the durations of the calls no other call encloses (the thread's estimated call time).
fn top_level_time(th: &jscalls::Thread<'_>) -> f64 {
    let mut end = f64::NEG_INFINITY;
    let mut depth = i32::MAX;
    let mut sum = 0.0;
    for c in th.calls_sorted() {
        if c.ts() >= end || c.node_depth() <= depth {
            sum += c.dur();
            end = c.ts() + c.dur();
            depth = c.node_depth();
        }
    }
    sum
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(1.0)
}

/// Every view's weights: roots sum to the total, a node's total is its self plus its children's.
fn check_sums(st: &Stacks, what: &str) {
    for tree in [CallTree::top_down(st), CallTree::inverted(st)] {
        let roots: f64 = tree.roots.iter().map(|&r| tree.nodes[r].total).sum();
        assert!(
            close(roots + tree.root_self, tree.total),
            "{what}: roots {roots} + {} vs {}",
            tree.root_self,
            tree.total
        );
        let mut selfs = 0.0;
        for n in &tree.nodes {
            selfs += n.self_weight;
            if tree.inverted {
                continue; // an inverted node's total is its samples', not its children's sum
            }
            let kids: f64 = n.children.iter().map(|&c| tree.nodes[c].total).sum();
            assert!(
                close(n.total, n.self_weight + kids),
                "{what}: node total {} vs {} + {kids}",
                n.total,
                n.self_weight
            );
        }
        assert!(close(selfs + tree.root_self, tree.total), "{what}: self times {selfs} vs {}", tree.total);
    }
}

#[test]
fn weights_add_up_on_real_recordings_before_and_after_transforms() {
    for fixture in
        ["fixtures/chrome-ui.json.gz", "fixtures/node-trace-mixed.json.gz", "fixtures/chrome-worker-hires.json.gz"]
    {
        let a = analyze(&Source::file(fixture), &Config::default()).unwrap();
        for th in a.threads().filter(|t| !t.is_empty()) {
            let st = Stacks::from_calls(&th);
            assert!(close(st.total(), top_level_time(&th)), "{fixture}: {} vs {}", st.total(), top_level_time(&th));
            check_sums(&st, fixture);
            // A stack of transforms built from the tree as it goes: the heaviest path's nodes.
            let mut cur = Transform::JsOnly.apply(&st);
            check_sums(&cur, "js-only");
            for kind in ["merge", "collapse-recursion", "merge-subtree", "focus-function", "drop", "merge-function"] {
                let tree = CallTree::top_down(&cur);
                let Some(&root) = tree.roots.first() else { break };
                let mut path = vec![root];
                while let Some(&c) = tree.nodes[*path.last().unwrap()].children.first() {
                    path.push(c);
                    if path.len() == 2 {
                        break;
                    }
                }
                let names: Vec<String> = path.iter().map(|&n| cur.funcs[tree.nodes[n].func.index()].label()).collect();
                let arg = match kind {
                    "merge" | "merge-subtree" | "drop" => names.join(">"),
                    _ => names.last().unwrap().clone(),
                };
                let before = cur.total();
                cur = Transform::parse(&format!("{kind}:{arg}"), &cur).unwrap().apply(&cur);
                check_sums(&cur, kind);
                if matches!(kind, "merge" | "collapse-recursion" | "merge-subtree" | "merge-function") {
                    assert!(close(cur.total(), before), "{kind} keeps every sample");
                }
            }
        }
    }
}

#[test]
fn cli_json_is_the_documented_shape_and_bad_transforms_exit_2() {
    let bin = env!("CARGO_BIN_EXE_jscalls");
    let out = Command::new(bin)
        .args(["tree", "fixtures/chrome-ui.json.gz", "--format", "json", "--js-only"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "jscalls-tree/1");
    assert_eq!(v["view"], "top-down");
    let th = &v["threads"][0];
    let roots: f64 = th["roots"].as_array().unwrap().iter().map(|r| r["total"].as_f64().unwrap()).sum();
    assert!(close(roots + th["rootSelf"].as_f64().unwrap(), th["total"].as_f64().unwrap()));
    let node = &th["roots"][0];
    for key in ["name", "url", "line", "column"] {
        assert!(node["func"].get(key).is_some(), "func.{key}");
    }
    assert!(node["children"].is_array() && node["self"].is_number());

    for (spec, want) in [
        ("focus:nope", "jscalls: error: transform 'focus:nope': no function named 'nope' in this tree\n"),
        ("merge", "jscalls: error: transform 'merge': expected KIND:ARGUMENT, KIND one of merge, merge-function, merge-subtree, drop, drop-function, focus, focus-function, collapse-recursion, collapse-indirect-recursion, collapse-resource\n"),
    ] {
        let out = Command::new(bin).args(["tree", "fixtures/chrome-ui.json.gz", "--transform", spec]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{spec}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want);
        assert!(out.stdout.is_empty());
    }
}

/// `--weight samples` and `sample-time` on a profile small enough to count by hand: samples on
/// a, a>b, a>b, a at 100 µs steps.
#[test]
fn sample_weights_count_by_hand() {
    use crate::support::{cpuprofile, node};
    use jscalls::tree::Weight;
    let p = cpuprofile(
        &[node(1, "(root)", &[2]), node(2, "a@x.js", &[3]), node(3, "b@x.js", &[])],
        &[2, 3, 3, 2],
        &[100.0; 4],
        0.0,
        500.0,
    );
    let a = analyze(&Source::Memory(p.into_bytes().into()), &Config::default()).unwrap();
    let th = a.threads().next().unwrap();
    let show = |st: &Stacks| {
        let t = CallTree::top_down(st);
        let mut out = Vec::new();
        t.walk(|n, _| {
            let node = &t.nodes[n];
            out.push(format!("{}:{},{}", st.funcs[node.func.index()].name, node.total, node.self_weight));
            true
        });
        out.join(" ")
    };
    assert_eq!(show(&Stacks::from_samples(&th, Weight::Samples)), "a:4,2 b:2,2");
    // Times 100, 200, 300, 400: each sample lasts to the next; the last to the profile's end.
    let timed = Stacks::from_samples(&th, Weight::SampleTime);
    let tree = CallTree::top_down(&timed);
    let b = tree.find(&[FuncId::new(0), FuncId::new(1)]).map(|n| tree.nodes[n].total);
    assert_eq!(b, Some(200.0));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]
    /// Random stacks of up to ten transforms, each naming a node of the tree the ones before it
    /// made: the weights keep adding up, and every transform that only regroups keeps them all.
    #[test]
    fn random_transform_stacks_keep_the_sums(steps in proptest::collection::vec((0usize..10, 0usize..10_000), 1..10)) {
        let a = analyze(&Source::file("fixtures/chrome-ui.json.gz"), &Config::default()).unwrap();
        let th = a.threads().max_by_key(|t| t.len()).unwrap();
        let mut cur = Stacks::from_calls(&th);
        let kinds = ["merge", "merge-function", "merge-subtree", "drop", "drop-function", "focus", "focus-function",
                     "collapse-recursion", "collapse-indirect-recursion", "collapse-resource"];
        for (k, pick) in steps {
            let tree = CallTree::top_down(&cur);
            if tree.nodes.iter().all(|n| n.total == 0.0) {
                break;
            }
            // The pick-th node in walk order, and its path.
            let mut order = Vec::new();
            tree.walk(|n, _| { order.push(n); true });
            let n = order[pick % order.len()];
            let mut path = vec![n];
            while let Some(p) = tree.nodes[*path.last().unwrap()].parent {
                path.push(p);
            }
            path.reverse();
            let label = |n: usize| cur.funcs[tree.nodes[n].func.index()].label();
            let arg = match kinds[k] {
                "merge" | "merge-subtree" | "drop" | "focus" => path.iter().map(|&n| label(n)).collect::<Vec<_>>().join(">"),
                "collapse-resource" => cur.funcs[tree.nodes[n].func.index()].url.clone(),
                _ => label(n),
            };
            let spec = format!("{}:{arg}", kinds[k]);
            // A label shared by two functions, or an empty URL, is refused: that is a usage error, not a bug.
            let Ok(t) = Transform::parse(&spec, &cur) else { continue };
            let before = cur.total();
            cur = t.apply(&cur);
            check_sums(&cur, &spec);
            if matches!(kinds[k], "merge" | "merge-function" | "merge-subtree" | "collapse-recursion" | "collapse-indirect-recursion" | "collapse-resource") {
                proptest::prop_assert!(close(cur.total(), before), "{} lost weight", spec);
            } else {
                proptest::prop_assert!(cur.total() <= before + 1e-6, "{} added weight", spec);
            }
        }
    }
}

/// `tree --format devtools --range`: the document of a range given from the recording's start
/// is the oracle's for the same window (fixtures/ranges/chrome-ui.range1, 1581800..1582000 ms:
/// the recording starts at 1581520.625 ms), and bad ranges are one-line errors: malformed or
/// backwards (exit 2), outside the recording (exit 1), or weighing samples (exit 2).
#[test]
fn a_range_from_the_recordings_start_is_devtools_range() {
    let run = |args: &[&str]| crate::support::jscalls(&[&["tree", "fixtures/chrome-ui.json.gz"][..], args].concat());
    let o = run(&["--format", "devtools", "--range", "+279.375..+479.375", "--engine", "0.0.65"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let want: serde_json::Value =
        serde_json::from_slice(&std::fs::read("fixtures/ranges/chrome-ui.range1.oracle-tree.json").unwrap()).unwrap();
    assert_eq!(
        (&ours["range"]["startTime"], &ours["range"]["endTime"]),
        (&want["range"]["startTime"], &want["range"]["endTime"])
    );
    let root = |d: &serde_json::Value| d["threads"][0]["all"]["topDown"].clone();
    assert_eq!(root(&ours)["totalTime"], root(&want)["totalTime"]);
    assert_eq!(root(&ours)["children"].as_array().unwrap().len(), root(&want)["children"].as_array().unwrap().len());
    for (args, code, says) in [
        (&["--format", "devtools", "--range", "5"][..], 2, "expected START..END"),
        (&["--format", "devtools", "--range", "7..5"], 2, "its end is before its start"),
        (&["--format", "devtools", "--range", "7..7"], 2, "it is empty"),
        (
            &["--format", "devtools", "--range", "10..20"],
            1,
            "lies outside the recording, which spans 1581520.625..1582564.098 ms",
        ),
        (&["--range", "+1..+2", "--weight", "samples"], 2, "leave out --weight"),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.lines().next().is_some_and(|l| l.contains(says)), "{args:?}: {err}");
    }
}

/// `--range` on jscalls' own trees: each function's self time inside two adjoining ranges adds
/// up to its self time inside both together, and a range over the whole recording is the
/// whole tree.
#[test]
fn self_time_in_adjoining_ranges_adds_up() {
    let flat = |range: Option<&str>| {
        let mut args =
            vec!["tree", "fixtures/chrome-ui.json.gz", "--flat", "--format", "json", "--thread", "CrRendererMain"];
        if let Some(r) = range {
            args.extend(["--range", r]);
        }
        let o = crate::support::jscalls(&args);
        assert!(o.status.success(), "{range:?}: {}", String::from_utf8_lossy(&o.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut by: std::collections::BTreeMap<String, f64> = Default::default();
        for f in doc["threads"][0]["functions"].as_array().unwrap() {
            *by.entry(f["func"].to_string()).or_default() += f["self"].as_f64().unwrap();
        }
        by
    };
    let (a, b, ab) = (flat(Some("1581800..1582100")), flat(Some("1582100..1582400")), flat(Some("1581800..1582400")));
    assert!(a.len() > 10 && b.len() > 10, "{} and {} functions", a.len(), b.len());
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).chain(ab.keys()).collect();
    for k in keys {
        let (x, y, z) = (a.get(k).unwrap_or(&0.0), b.get(k).unwrap_or(&0.0), ab.get(k).unwrap_or(&0.0));
        assert!((x + y - z).abs() < 0.01, "{k}: {x} + {y} != {z}");
    }
    let (whole, all) = (flat(None), flat(Some("1581000..1583000")));
    assert_eq!(whole.keys().collect::<Vec<_>>(), all.keys().collect::<Vec<_>>());
    for (k, v) in &whole {
        assert!((v - all[k]).abs() < 0.01, "{k}: {v} != {}", all[k]);
    }
}

/// `calls --range`: the calls that overlap the range, whole (their own start and duration),
/// each thread's `callCount` theirs, and the range in the document; exactly the whole
/// document's calls that overlap it.
#[test]
fn calls_in_a_range_are_the_calls_that_overlap_it() {
    let calls = |extra: &[&str]| {
        let o = crate::support::jscalls(
            &[&["calls", "fixtures/chrome-ui.json.gz", "--format", "json"][..], extra].concat(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let (whole, part) = (calls(&[]), calls(&["--range", "1581802.2..1582000"]));
    assert_eq!(
        part["range"],
        serde_json::json!({"option": "--range", "arg": "1581802.2..1582000", "startTime": 1581802.2, "endTime": 1582000})
    );
    let (mut crossing, mut kept) = (0, 0);
    for (w, p) in whole["profiles"].as_array().unwrap().iter().zip(part["profiles"].as_array().unwrap()) {
        let want: Vec<&serde_json::Value> = w["calls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                let (ts, dur) = (c["ts"].as_f64().unwrap(), c["dur"].as_f64().unwrap_or(0.0));
                // The calls' times are µs.
                ts <= 1582000e3 && ts + dur >= 1581802.2e3
            })
            .collect();
        crossing += want.iter().filter(|c| c["ts"].as_f64().unwrap() < 1581802.2e3).count();
        let got: Vec<&serde_json::Value> = p["calls"].as_array().unwrap().iter().collect();
        assert!(got == want, "thread {} {}: {} calls, {} overlap", w["pid"], w["tid"], got.len(), want.len());
        assert_eq!(p["callCount"].as_u64(), Some(got.len() as u64));
        kept += got.len();
    }
    assert!(kept > 100 && crossing > 0, "{kept} calls, {crossing} crossing the start");
    let o = crate::support::jscalls(&["calls", "fixtures/chrome-ui.json.gz", "--format", "summary", "--range", "1..2"]);
    assert_eq!(o.status.code(), Some(2));
}

/// DevTools' trees of a thread are made side by side (both sets, both trees) when there are
/// threads to spare, and one after the other without: the document is the same, byte for byte.
#[test]
fn devtools_trees_are_the_same_made_side_by_side_or_in_turn() {
    for input in [
        "fixtures/chrome-ui.json.gz",
        "fixtures/chrome-shop-base.json.gz",
        "fixtures/node-mixed.cpuprofile.gz",
        "fixtures/gecko/firefox-esr-worker.json.gz",
    ] {
        let tree = |threads: &str| {
            let o = crate::support::jscalls(&["tree", "--format", "devtools", "--threads", threads, input]);
            assert!(o.status.success(), "{input}: {}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        let one = tree("1");
        assert!(one.len() > 1000, "{input}: {} bytes", one.len());
        assert!(one == tree("2") && one == tree("3"), "{input}: the trees differ with the threads");
    }
}
