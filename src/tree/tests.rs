//! The Firefox Profiler's worked example (three 1 ms samples `A>B>C>D>E`, `A>B>C>F>G`,
//! `A>B>H>F`) under every transform, with the trees computed by hand.

use super::*;

fn f(name: &str, url: &str) -> Func {
    Func { name: name.to_owned(), url: url.to_owned(), script: String::new(), line: None, column: None }
}

/// Samples of weight 1 on each `>`-separated stack of one-letter JS functions.
fn stacks(samples: &[&str]) -> Stacks {
    let mut st = Stacks::new();
    for s in samples {
        let funcs: Vec<FuncId> = s.split('>').map(|n| st.func(f(n, if n.len() == 1 { "a.js" } else { "" }))).collect();
        let stack = st.stack_of(&funcs).unwrap();
        st.add(stack, 1.0);
    }
    st
}

/// Pre-order `NAME:total,self`, children heaviest first, `|` between roots.
fn show(st: &Stacks, t: &CallTree) -> String {
    let mut out = Vec::new();
    t.walk(|n, d| {
        let node = &t.nodes[n];
        let sep = if d == 0 && !out.is_empty() { "| " } else { "" };
        out.push(format!("{sep}{}:{},{}", st.funcs[node.func.index()].name, node.total, node.self_weight));
        true
    });
    out.join(" ")
}

fn example() -> Stacks {
    stacks(&["A>B>C>D>E", "A>B>C>F>G", "A>B>H>F"])
}

fn transformed(specs: &[&str]) -> (Stacks, String) {
    let mut st = example();
    for s in specs {
        let t = Transform::parse(s, &st).unwrap();
        st = t.apply(&st);
    }
    let tree = CallTree::top_down(&st);
    let shown = show(&st, &tree);
    (st, shown)
}

#[test]
fn worked_example_top_down() {
    assert_eq!(transformed(&[]).1, "A:3,0 B:3,0 C:2,0 D:1,0 E:1,1 F:1,0 G:1,1 H:1,0 F:1,1");
}

#[test]
fn worked_example_inverted_and_flat() {
    let st = example();
    let t = CallTree::inverted(&st);
    assert_eq!(
        show(&st, &t),
        "E:1,1 D:1,0 C:1,0 B:1,0 A:1,0 | F:1,1 H:1,0 B:1,0 A:1,0 | G:1,1 F:1,0 C:1,0 B:1,0 A:1,0"
    );
    let flat: Vec<String> = CallTree::functions(&st)
        .iter()
        .map(|&(func, s, t)| format!("{}:{t},{s}", st.funcs[func.index()].name))
        .collect();
    // Self first, then total: F (self 1 of 2) before E and G.
    assert_eq!(flat.join(" "), "F:2,1 E:1,1 G:1,1 A:3,0 B:3,0 C:2,0 D:1,0 H:1,0");
}

#[test]
fn worked_example_each_transform() {
    let cases = [
        ("merge:A>B>C", "A:3,0 B:3,0 D:1,0 E:1,1 F:1,0 G:1,1 H:1,0 F:1,1"),
        ("merge-function:E", "A:3,0 B:3,0 C:2,0 D:1,1 F:1,0 G:1,1 H:1,0 F:1,1"),
        ("merge-function:F", "A:3,0 B:3,0 C:2,0 D:1,0 E:1,1 G:1,1 H:1,1"),
        ("merge-subtree:A>B>C", "A:3,0 B:3,0 C:2,2 H:1,0 F:1,1"),
        ("drop:A>B>C", "A:1,0 B:1,0 H:1,0 F:1,1"),
        ("drop-function:F", "A:1,0 B:1,0 C:1,0 D:1,0 E:1,1"),
        ("focus:A>B>C", "C:2,0 D:1,0 E:1,1 F:1,0 G:1,1"),
        ("focus-function:F", "F:2,1 G:1,1"),
        ("collapse-resource:a.js", "a.js:3,3"),
    ];
    for (spec, want) in cases {
        assert_eq!(transformed(&[spec]).1, want, "{spec}");
    }
}

#[test]
fn later_paths_name_the_transformed_tree() {
    // After merging C, D hangs from B: the path A>B>D is valid, A>B>C>D is not.
    assert_eq!(transformed(&["merge:A>B>C", "focus:A>B>D"]).1, "D:1,0 E:1,1");
    let merged = Transform::parse("merge:A>B>C", &example()).unwrap().apply(&example());
    let e = Transform::parse("focus:A>B>C>D", &merged).unwrap_err();
    assert_eq!(e.to_string(), "transform 'focus:A>B>C>D': no CallNode at 'A>B>C>D' in this tree");
    // Focus first, then merge inside the focused tree by its new root.
    assert_eq!(transformed(&["focus:A>B>C", "merge:C>F"]).1, "C:2,0 D:1,0 E:1,1 G:1,1");
    assert_eq!(transformed(&["focus-function:F", "drop:F>G"]).1, "F:1,1");
}

#[test]
fn recursion_direct_and_indirect() {
    let st = stacks(&["A>A>A>B", "A>B>A>B", "A>A"]);
    let direct = Transform::parse("collapse-recursion:A", &st).unwrap().apply(&st);
    assert_eq!(show(&direct, &CallTree::top_down(&direct)), "A:3,1 B:2,1 A:1,0 B:1,1");
    let indirect = Transform::parse("collapse-indirect-recursion:A", &st).unwrap().apply(&st);
    // A>B>A>B keeps both Bs: only the inner A goes.
    assert_eq!(show(&indirect, &CallTree::top_down(&indirect)), "A:3,1 B:2,1 B:1,1");
}

#[test]
fn js_only_joins_paths_through_native_frames() {
    // JS::RunScript > onLoad > IonCannon > a > b, and the same without IonCannon: one path.
    let mut st = Stacks::new();
    let run = st.func(f("JS::RunScript", ""));
    let on_load = st.func(f("onLoad", "page.js"));
    let ion = st.func(f("IonCannon", ""));
    let a = st.func(f("a", "page.js"));
    let b = st.func(f("b", "page.js"));
    let gc = st.func(f("(garbage collector)", ""));
    for stack in [vec![run, on_load, ion, a, b], vec![run, on_load, a, b], vec![run, on_load, a, gc]] {
        let s = st.stack_of(&stack).unwrap();
        st.add(s, 1.0);
    }
    let js = Transform::JsOnly.apply(&st);
    assert_eq!(show(&js, &CallTree::top_down(&js)), "onLoad:3,0 a:3,1 b:2,2");
}

#[test]
fn bad_transforms_say_what_is_wrong() {
    let st = example();
    let err = |s: &str| Transform::parse(s, &st).unwrap_err().to_string();
    assert_eq!(err("merge A>B"), "transform 'merge A>B': expected KIND:ARGUMENT, KIND one of merge, merge-function, merge-subtree, drop, drop-function, focus, focus-function, collapse-recursion, collapse-indirect-recursion, collapse-resource");
    assert_eq!(err("merge:A>>B"), "transform 'merge:A>>B': an empty function name");
    assert_eq!(err("merge:A>Z"), "transform 'merge:A>Z': no function named 'Z' in this tree");
    assert_eq!(err("merge:B"), "transform 'merge:B': no CallNode at 'B' in this tree");
    assert!(err("squash:A").starts_with("transform 'squash:A': unknown kind 'squash'"));
}

#[test]
fn a_million_frames_deep() {
    let mut st = Stacks::new();
    let fs: Vec<FuncId> = (0..3).map(|k| st.func(f(&format!("f{k}"), "r.js"))).collect();
    // f0 > f1 > f2 > f0 > … with 1 on every level (a call's self time at each depth, which a
    // walk from each sample to its root would make quadratic) and 5 more at the bottom.
    let mut parent = None;
    for k in 0..1_000_000 {
        let s = st.stack(parent, fs[k % 3]);
        st.add(s, 1.0);
        parent = Some(s);
    }
    st.add(parent.unwrap(), 5.0);
    for t in [Transform::CollapseIndirectRecursion(fs[0]), Transform::MergeFunction(fs[1])] {
        let out = t.apply(&st);
        let tree = CallTree::top_down(&out);
        assert_eq!(tree.total, 1_000_005.0);
    }
    let tree = CallTree::top_down(&st);
    let mut deepest = 0;
    tree.walk(|_, d| {
        deepest = deepest.max(d);
        true
    });
    assert_eq!(deepest, 999_999);
    assert_eq!(tree.nodes[tree.roots[0]].total, 1_000_005.0);
    // Self: a third of the levels each (the bottom one, 999,999, is f0's); total: every sample
    // from a function's first level down.
    let funcs = CallTree::functions(&st);
    assert_eq!(
        funcs,
        vec![(fs[0], 333_339.0, 1_000_005.0), (fs[1], 333_333.0, 1_000_004.0), (fs[2], 333_333.0, 1_000_003.0)]
    );
    let inverted = CallTree::inverted(&st);
    assert_eq!(inverted.roots.len(), 3);
    // JSON nests a million levels with an explicit stack: every node opened is closed.
    let mut out = String::new();
    tree.write_json(&mut out, &st, Shown::default());
    assert_eq!(out.matches("{\"func\"").count(), 1_000_000);
    assert!(out.ends_with(&"]}".repeat(1_000_000)));
}

/// Every node of `t` as (path of functions from its root, total, self).
fn paths(t: &CallTree) -> Vec<(Vec<FuncId>, f64, f64)> {
    let mut out = Vec::new();
    let mut path: Vec<FuncId> = Vec::new();
    t.walk(|n, d| {
        path.truncate(d);
        path.push(t.nodes[n].func);
        out.push((path.clone(), t.nodes[n].total, t.nodes[n].self_weight));
        true
    });
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

proptest::proptest! {
    /// The inverted tree built from sorted paths equals inserting each sample's upward path.
    #[test]
    fn inverted_equals_path_by_path_insertion(
        shape in proptest::collection::vec((0usize..1000, 0u32..4), 1..300),
        samples in proptest::collection::vec((0usize..1000, 1u32..5), 0..200),
    ) {
        let mut st = Stacks::new();
        let fs: Vec<FuncId> = (0..4).map(|k| st.func(f(&format!("f{k}"), "r.js"))).collect();
        let mut ids: Vec<StackId> = Vec::new();
        for &(p, func) in &shape {
            // Every fifth a root, else a child of an earlier stack: deep chains and recursion.
            let parent = if ids.is_empty() || p % 5 == 0 { None } else { Some(ids[p % ids.len()]) };
            ids.push(st.stack(parent, fs[func as usize]));
        }
        for &(s, w) in &samples {
            st.add(ids[s % ids.len()], w as f64);
        }
        let mut expected: std::collections::BTreeMap<Vec<FuncId>, (f64, f64)> = Default::default();
        for &(s, w) in &st.samples {
            let mut path = Vec::new();
            let mut k = Some(s);
            while let Some(x) = k {
                let (p, func) = st.frame(x);
                path.push(func);
                let e = expected.entry(path.clone()).or_default();
                e.0 += w;
                if path.len() == 1 {
                    e.1 += w;
                }
                k = p;
            }
        }
        let expected: Vec<(Vec<FuncId>, f64, f64)> = expected.into_iter().map(|(p, (t, s))| (p, t, s)).collect();
        proptest::prop_assert_eq!(paths(&CallTree::inverted(&st)), expected);
    }
}

proptest::proptest! {
    /// A sampled speedscope profile gives each span its stack's frames, outermost first,
    /// whatever stack came before it (a deeper one, a shallower one, another branch, none).
    #[test]
    fn sampled_speedscope_paths_are_each_stack_in_full(
        shape in proptest::collection::vec((0usize..1000, 0u32..6), 1..200),
        walk in proptest::collection::vec(0usize..1000, 0..200),
    ) {
        let mut st = Stacks::new();
        let fs: Vec<FuncId> = (0..6).map(|k| st.func(f(&format!("f{k}"), "r.js"))).collect();
        let mut ids: Vec<StackId> = Vec::new();
        for &(p, func) in &shape {
            let parent = if ids.is_empty() || p % 7 == 0 { None } else { Some(ids[p % ids.len()]) };
            ids.push(st.stack(parent, fs[func as usize]));
        }
        // Every ninth span on no function at all.
        let chosen: Vec<StackId> =
            walk.iter().map(|&s| if s % 9 == 0 { StackId::ROOT } else { ids[s % ids.len()] }).collect();
        let spans: Spans = chosen
            .iter()
            .enumerate()
            .map(|(k, &stack)| Span { start: k as f64, end: k as f64 + 1.0, stack, weight: 1.0 })
            .collect();
        let profile = Profile { name: "t".to_owned(), stacks: &st, spans: &spans, kind: ProfileKind::SampledCount };
        let mut out = Vec::new();
        Profile::write_speedscope(&mut out, "x", &[profile]).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let frames: Vec<String> =
            doc["shared"]["frames"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap().to_owned()).collect();
        let written: Vec<Vec<String>> = doc["profiles"][0]["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_array().unwrap().iter().map(|i| frames[i.as_u64().unwrap() as usize].clone()).collect())
            .collect();
        let expected: Vec<Vec<String>> = chosen
            .iter()
            .map(|&s| {
                let funcs = if s == StackId::ROOT { Vec::new() } else { st.funcs_of(s) };
                funcs.iter().map(|f| st.funcs[f.index()].label()).collect()
            })
            .collect();
        proptest::prop_assert_eq!(written, expected);
    }
}

/// A piece of collapsed lines ends at its line count or once its paths' text reaches the
/// bound: `aa` (2 bytes), `aa;b` (4) and `aa;b;ccc` (8).
#[test]
fn collapsed_pieces_end_at_their_size() {
    let mut st = Stacks::new();
    let (a, b, c) = (st.func(f("aa", "")), st.func(f("b", "")), st.func(f("ccc", "")));
    for path in [vec![a], vec![a, b], vec![a, b, c]] {
        let s = st.stack_of(&path).unwrap();
        st.add(s, 1.0);
    }
    let tree = export::CollapsedTree::new(&st, None);
    let mut lines = Vec::new();
    tree.write(&mut lines, 0);
    assert_eq!(lines, ["aa 1", "aa;b 1", "aa;b;ccc 1"]);
    for (piece, starts) in [
        ((512, 1 << 20), vec![0, 3]),
        ((2, 1 << 20), vec![0, 2, 3]),
        ((512, 1), vec![0, 1, 2, 3]),
        ((512, 2), vec![0, 1, 2, 3]),
        ((512, 3), vec![0, 2, 3]),
        ((512, 6), vec![0, 2, 3]),
        ((512, 7), vec![0, 3]),
    ] {
        assert_eq!(tree.piece_starts(0, piece), starts, "{piece:?}");
    }
}

/// A name ending in a space and a number would be read as a count: that space is a no-break
/// space; other names keep their spaces.
#[test]
fn collapsed_names_never_end_in_a_count() {
    use names::collapsed_text;
    assert_eq!(collapsed_text("line 4"), "line\u{A0}4");
    assert_eq!(collapsed_text("Frame 12.5"), "Frame\u{A0}12.5");
    assert_eq!(collapsed_text("a b 3"), "a b\u{A0}3");
    assert_eq!(collapsed_text("line 4 http://x/a.js:4"), "line 4 http://x/a.js:4");
    assert_eq!(collapsed_text("f a.js:3:1"), "f a.js:3:1");
    assert_eq!(collapsed_text("v8 "), "v8 ");
    assert_eq!(collapsed_text("7"), "7");
    assert_eq!(collapsed_text("a;b 9"), "a:b\u{A0}9");
}

#[test]
fn collapsed_lines_come_sorted_byte_by_byte() {
    // `b c` sorts between `b` and `b;x`; `b7` (a digit after `b`) between `b 1…` and `b;`.
    let mut st = Stacks::new();
    let id = |st: &mut Stacks, n: &str| st.func(f(n, ""));
    let (a, b, bc, b7, x) =
        (id(&mut st, "a"), id(&mut st, "b"), id(&mut st, "b c"), id(&mut st, "b7"), id(&mut st, "x"));
    // Two functions with one label (`b` twice, as two scripts' functions would be) make one line.
    let b2 = st.func(Func { script: "2".to_owned(), ..f("b", "") });
    for (path, w) in [
        (vec![a, bc], 4.0),
        (vec![a, b, x], 3.0),
        (vec![a], 1.0),
        (vec![a, b], 2.0),
        (vec![a, b2], 10.0),
        (vec![a, b7], 5.0),
        (vec![a, b, x], 0.4),
    ] {
        let s = st.stack_of(&path).unwrap();
        st.add(s, w);
    }
    st.add(StackId::ROOT, 6.0);
    for prefix in [None, Some("T;1")] {
        let mut lines = Vec::new();
        export::collapsed(&mut lines, &st, prefix);
        let mut sorted = lines.clone();
        sorted.sort();
        assert_eq!(lines, sorted);
        let p = prefix.map_or(String::new(), |_| "T:1;".to_owned());
        let root = prefix.map_or("(root) 6".to_owned(), |_| "T:1 6".to_owned());
        let mut want = vec![
            format!("{p}a 1"),
            format!("{p}a;b 12"),
            format!("{p}a;b c 4"),
            format!("{p}a;b7 5"),
            format!("{p}a;b;x 3"),
        ];
        want.push(root);
        want.sort();
        assert_eq!(lines, want);
    }
}

#[test]
fn folded_lines_keep_every_wide_frame_in_its_place() {
    // Folding at 10: subtrees under 10 are not drawn, so they may become fewer lines as long
    // as every drawn frame keeps its start and width.
    let mut st = Stacks::new();
    let names = ["a", "b", "c", "d", "x", "e", "f", "g", "h", "k", "j", "z", "(a)", "(z)"];
    let ids: Vec<FuncId> = names.iter().map(|n| st.func(f(n, ""))).collect();
    let id = |n: &str| ids[names.iter().position(|m| *m == n).unwrap()];
    for (path, w) in [
        ("a", 100.0),
        ("a;b", 1.0),
        ("a;c;d", 50.0),
        ("a;c;x", 2.0),
        ("a;e", 2.0),
        ("a;f", 3.0),
        ("a;g", 6.0),
        ("a;h", 6.0),
        ("a;k;j", 3.0),
        ("a;k;z", 20.0),
        ("(a)", 4.0),
        ("(z)", 2.0),
    ] {
        let s = st.stack_of(&path.split(';').map(id).collect::<Vec<_>>()).unwrap();
        st.add(s, w);
    }
    st.add(StackId::ROOT, 3.0);
    let tree = export::CollapsedTree::new(&st, None);
    let mut lines = Vec::new();
    tree.write(&mut lines, 10);
    // `a;b` (first of a's children) joins a's own line; c (own 0) gets none, its folded `x`
    // follows `d`; `e` and `f` merge (5), `g` cannot join them (11), nor `h` g (12); k's own
    // line is its folded first child `j`. The weight on no function (`(root)`, drawn when wide
    // enough) keeps its place among the roots, between `(a)` and `(z)`, which stay apart.
    assert_eq!(
        lines,
        ["(a) 4", "(root) 3", "(z) 2", "a 101", "a;c;d 50", "a;c;x 2", "a;e 5", "a;g 6", "a;h 6", "a;k 3", "a;k;z 20"]
    );
    let mut all = Vec::new();
    tree.write(&mut all, 0);
    assert_eq!(all.len(), 13);
    assert_eq!(tree.total(), 202);
    // Their size, known before they are made: folded or not, with a prefix or not.
    let len = |lines: &[String]| lines.iter().map(|l| l.len() as u64).sum::<u64>();
    assert_eq!((tree.text_len(10), tree.text_len(0)), (len(&lines), len(&all)));
    for prefix in ["T;1", ""] {
        let tree = export::CollapsedTree::new(&st, Some(prefix));
        for fold in [0, 10] {
            let mut lines = Vec::new();
            tree.write(&mut lines, fold);
            assert_eq!(tree.text_len(fold), len(&lines), "{prefix:?} {fold}");
        }
    }
}

/// Counted per stack, a recording's samples make the stacks and per-stack totals that one
/// sample each makes.
#[test]
fn sample_counts_are_the_samples_summed_per_stack() {
    for file in ["fixtures/chrome-ui.json.gz", "fixtures/node-mixed.cpuprofile.gz"] {
        let (_, assembled) = crate::assemble(&crate::Source::file(file), &crate::Config::default()).unwrap();
        let mut threads = 0;
        assembled
            .for_each_thread(|th| {
                let each = Stacks::from_samples(&th, Weight::Samples);
                let counted = Stacks::from_sample_counts(&th);
                assert_eq!(each.prefix, counted.prefix, "{file}");
                let mut sums = vec![0.0; each.len()];
                for &(s, w) in &each.samples {
                    sums[s.index()] += w;
                }
                let want: Vec<(StackId, f64)> =
                    sums.iter().enumerate().filter(|s| *s.1 > 0.0).map(|(k, &w)| (StackId::new(k), w)).collect();
                assert_eq!(counted.samples, want, "{file}");
                assert!(each.samples.len() > 2 * counted.samples.len(), "{file}: too few repeats to tell");
                threads += 1;
                Ok::<(), ()>(())
            })
            .unwrap();
        assert!(threads > 0, "{file}");
    }
}

/// Kept one a stack, or not at all, a recording's samples give the trees and the total, bit
/// for bit, that one sample each gives (sample time, by function and by line, and counts).
#[test]
fn samples_kept_per_stack_or_not_at_all_give_the_same_trees_and_total() {
    let mut order_told = false;
    for file in
        ["fixtures/chrome-ui.json.gz", "fixtures/node-mixed.cpuprofile.gz", "fixtures/gecko/firefox-159-sites.json.gz"]
    {
        let cfg = crate::Config { keep_lines: true, ..crate::Config::default() };
        let (_, assembled) = crate::assemble(&crate::Source::file(file), &cfg).unwrap();
        assembled
            .for_each_thread(|th| {
                for (weight, by_line) in
                    [(Weight::SampleTime, false), (Weight::SampleTime, true), (Weight::Samples, true)]
                {
                    let at = format!("{file} {weight:?} by line {by_line}");
                    let kept = |k| Stacks::from_samples_kept(&th, weight, by_line, k, None);
                    let (each, per_stack, total) =
                        (kept(SamplesKept::Each), kept(SamplesKept::PerStack), kept(SamplesKept::Total));
                    assert_eq!(each.prefix, per_stack.prefix, "{at}");
                    assert!(each.samples.len() > per_stack.samples.len(), "{at}: too few repeats to tell");
                    assert!(total.samples.is_empty(), "{at}");
                    assert_eq!(each.total().to_bits(), per_stack.total().to_bits(), "{at}");
                    assert_eq!(each.total().to_bits(), total.total().to_bits(), "{at}");
                    for tree in [CallTree::top_down, CallTree::inverted] {
                        let (a, b) = (tree(&each), tree(&per_stack));
                        assert_eq!((a.total.to_bits(), &a.roots), (b.total.to_bits(), &b.roots), "{at}");
                        let bits = |t: &CallTree| {
                            t.nodes.iter().map(|n| (n.total.to_bits(), n.self_weight.to_bits())).collect::<Vec<_>>()
                        };
                        assert_eq!(a.nodes, b.nodes, "{at}");
                        assert_eq!(bits(&a), bits(&b), "{at}");
                    }
                    // The stacks' sums added up are not always the total in time order.
                    let summed: f64 = per_stack.samples.iter().map(|s| s.1).sum();
                    order_told |= summed.to_bits() != each.total().to_bits();
                }
                Ok::<(), ()>(())
            })
            .unwrap();
    }
    // (The Firefox profile's sample times are not whole µs.)
    assert!(order_told, "no thread whose total depends on the order of its samples");
}

/// Summed per path of names, after or as they are made, a recording's samples make the same
/// collapsed lines, bit for bit in their sums (the Firefox profile's sample times are not whole
/// µs), and the same total.
#[test]
fn samples_summed_per_name_make_the_same_collapsed_lines() {
    let (mut before, mut after) = (0, 0);
    for file in ["fixtures/chrome-ui.json.gz", "fixtures/gecko/firefox-159-sites.json.gz"] {
        let cfg = crate::Config { keep_lines: true, ..crate::Config::default() };
        let (_, assembled) = crate::assemble(&crate::Source::file(file), &cfg).unwrap();
        assembled
            .for_each_thread(|th| {
                let by_line = |kept| Stacks::from_samples_kept(&th, Weight::SampleTime, true, kept, None);
                for (stacks, what) in [
                    (Stacks::from_calls(&th), "calls"),
                    (by_line(SamplesKept::Each), "sample time by line"),
                    (by_line(SamplesKept::Each), "sample time by line, kept per name"),
                ] {
                    let summed = if what.ends_with("per name") {
                        by_line(SamplesKept::PerName)
                    } else {
                        let mut summed = stacks.clone();
                        summed.sum_per_name();
                        summed
                    };
                    let at = format!("{file} {what}");
                    (before, after) = (before + stacks.samples.len(), after + summed.samples.len());
                    assert_eq!(summed.total().to_bits(), stacks.total().to_bits(), "{at}");
                    let lines = |st: &Stacks| {
                        let mut out = Vec::new();
                        export::CollapsedTree::new(st, Some("T")).write(&mut out, 0);
                        out
                    };
                    assert_eq!(lines(&summed), lines(&stacks), "{at}");
                    // Each path's sum, as the tree adds it up, bit for bit.
                    let sums = |st: &Stacks| {
                        let mut tree = names::NameNodes::default();
                        tree.extend(st);
                        let (node_of, nodes) = (&tree.node_of, &tree.nodes);
                        let mut sums = vec![0.0f64; nodes.len() + 1];
                        for &(s, w) in &st.samples {
                            sums[node_of.get(s.index()).map_or(nodes.len(), |&t| t as usize)] += w;
                        }
                        sums.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
                    };
                    assert_eq!(sums(&summed), sums(&stacks), "{at}");
                }
                Ok::<(), ()>(())
            })
            .unwrap();
    }
    assert!(after < before, "{after} of {before}: too few repeats to tell");
}

/// Written in pieces on several threads, collapsed stacks are the lines one per name path,
/// weights summed and rounded, sorted byte by byte: checked on thousands of lines (several
/// pieces) of a deep tree whose names sort around `;` and ` `.
#[test]
fn collapsed_lines_written_in_pieces_are_every_path_once() {
    let names = ["a", "b", "b c", "b7", "b!", "x", "(program)", "é", "z9"];
    let mut st = Stacks::new();
    // Two functions per name (two scripts): the same name path merges their stacks.
    let ids: Vec<FuncId> = (0..names.len() * 2)
        .map(|k| st.func(Func { script: (k / names.len()).to_string(), ..f(names[k % names.len()], "") }))
        .collect();
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut want: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    for _ in 0..6000 {
        let depth = 1 + next(24) as usize;
        let path: Vec<FuncId> = (0..depth).map(|_| ids[next(ids.len() as u64) as usize]).collect();
        let w = next(40) as f64 / 4.0;
        let s = st.stack_of(&path).unwrap();
        st.add(s, w);
        let text = path.iter().map(|&p| names[p.index() % names.len()]).collect::<Vec<_>>().join(";");
        *want.entry(text).or_default() += w;
    }
    st.add(StackId::ROOT, 2.0);
    for prefix in [None, Some("T")] {
        let mut expected: Vec<String> = want
            .iter()
            .filter(|(_, w)| w.round() >= 1.0)
            .map(|(p, w)| format!("{}{p} {}", prefix.map_or(String::new(), |t| format!("{t};")), w.round()))
            .collect();
        expected.push(format!("{} 2", prefix.unwrap_or("(root)")));
        expected.sort();
        assert!(expected.len() > 3 * 512, "{} lines: too few for several pieces", expected.len());
        let tree = export::CollapsedTree::new(&st, prefix);
        for threads in [1, 2] {
            let mut out = Vec::new();
            tree.write_lines(0, threads, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert_eq!(text.lines().collect::<Vec<_>>(), expected, "prefix {prefix:?}, {threads} threads");
            assert!(text.ends_with('\n'));
            // Pieces cut by their text's size too (a line each, a few lines) give the same.
            for piece in [(512, 1), (512, 100), (3, 1 << 20)] {
                let mut cut = Vec::new();
                tree.write_pieces(0, threads, piece, &mut cut).unwrap();
                assert!(cut == text.as_bytes(), "prefix {prefix:?}, {threads} threads, pieces {piece:?}");
            }
        }
    }
}

/// The calls' stacks by index, with their weights from the estimate's self times (or the side
/// table), are the per-call samples in the calls output's order; the events' samples follow
/// them alone.
#[test]
fn stacks_by_index_are_the_per_call_samples() {
    for file in ["fixtures/chrome-ui.json.gz", "fixtures/chrome-worker-hires.json.gz"] {
        let cfg = crate::Config { keep_event_names: true, ..Default::default() };
        let (_, assembled) = crate::assemble(&crate::Source::file(file), &cfg).unwrap();
        let (mut calls, mut inside) = (0, 0);
        assembled
            .for_each_thread(|th| {
                let per_call = Stacks::from_calls(&th);
                let (events, by_index) = Stacks::from_calls_by_index(&th);
                let by_index = by_index.expect("a trace's calls come back by index");
                assert_eq!(per_call.prefix, events.prefix, "{file}");
                let got: Vec<(StackId, u64)> = th
                    .calls_sorted()
                    .map(|c| {
                        let k = c.index();
                        let w = by_index.weights.get(k, c.self_time());
                        (by_index.stack[k], w.to_bits())
                    })
                    .chain(events.samples.iter().map(|&(s, w)| (s, w.to_bits())))
                    .collect();
                let want: Vec<(StackId, u64)> = per_call.samples.iter().map(|&(s, w)| (s, w.to_bits())).collect();
                assert_eq!(got, want, "{file}");
                (calls, inside) = (calls + th.len(), inside + events.samples.len());
                Ok::<(), ()>(())
            })
            .unwrap();
        assert!(calls > 50 && inside > 0, "{file}: {calls} calls, {inside} events inside them");
    }
}

/// A stack is found by its parent and function however many there are, before and after the
/// index is let go (`compact`) and made again: the same number each time, a new one for a new
/// (parent, function), parents before children.
#[test]
fn stacks_are_numbered_once_each_across_compaction() {
    let mut st = Stacks::new();
    let funcs: Vec<FuncId> = (0..50).map(|k| st.func(f(&format!("f{k}"), "a.js"))).collect();
    // A tree of 50 × 50 × 50 stacks, made twice: the second time finds the first's numbers.
    let mut made = Vec::new();
    for round in 0..2 {
        let mut k = 0;
        for &a in &funcs {
            let sa = st.stack(None, a);
            for &b in &funcs {
                let sb = st.stack(Some(sa), b);
                for &c in &funcs {
                    let sc = st.stack(Some(sb), c);
                    assert_eq!(st.prefix[sc.index()], (Some(sb), c), "the stack asked for");
                    if round == 0 {
                        made.push((sa, sb, sc));
                    } else {
                        assert_eq!((sa, sb, sc), made[k], "stack {k} renumbered");
                    }
                    k += 1;
                }
            }
        }
        st.compact();
    }
    assert_eq!(st.len(), 50 + 50 * 50 + 50 * 50 * 50);
    let distinct: std::collections::HashSet<_> = made.iter().map(|m| m.2).collect();
    assert_eq!(distinct.len(), made.len());
    for (sa, sb, sc) in made {
        assert!(sa.index() < sb.index() && sb.index() < sc.index());
    }
    // A chain of one function 100,000 deep: every stack new, found again by its parent.
    let mut chain = vec![st.stack(None, funcs[7])];
    for _ in 0..100_000 {
        let parent = *chain.last().unwrap();
        let s = st.stack(Some(parent), funcs[7]);
        assert_eq!(st.prefix[s.index()], (Some(parent), funcs[7]));
        chain.push(s);
    }
    st.compact();
    for w in chain.windows(2) {
        assert_eq!(st.stack(Some(w[0]), funcs[7]), w[1]);
    }
    // Once compacted, a new stack takes the next number.
    let next = st.stack(Some(StackId::new(0)), funcs[49]);
    assert_eq!(next, st.stack(Some(StackId::new(0)), funcs[49]));
    assert!(next.index() < 50 + 50 * 50 + 50 * 50 * 50, "(f0, f49) was made in the first round");
    let before = st.len();
    let new = st.stack(Some(StackId::new(before - 1)), funcs[0]);
    assert_eq!(new.index(), before);
}

#[test]
fn json_written_in_parts_is_the_json_written_whole() {
    let st = example();
    let tree = CallTree::top_down(&st);
    let mut whole = String::new();
    tree.write_json(&mut whole, &st, Shown::default());
    let mut flat = String::new();
    st.write_flat_json(&mut flat, st.total(), Shown::default());
    // Taken after every node (9) or function (8): as many parts, which together
    // are the whole.
    for (want, nodes) in [(&whole, 9), (&flat, 8)] {
        let (mut out, mut parts) = (String::new(), Vec::new());
        let mut take = |out: &mut String| parts.push(std::mem::take(out));
        if want == &whole {
            tree.write_json_in_parts(&mut out, &st, Shown::default(), &mut take);
        } else {
            st.write_flat_json_in_parts(&mut out, st.total(), Shown::default(), &mut take);
        }
        parts.push(out);
        assert_eq!((parts.concat(), parts.len() - 1), (want.clone(), nodes));
    }
}
