//! The acceptance tables of `spec/devtools-estimator.md`: §5.1 (upstream SamplesIntegrator tests),
//! §5.2 (upstream CPUProfileDataModel tests) and §5.5 (derived edge cases, each run on the real
//! engine). Inputs are built by hand; the expected calls are the spec's.

use crate::support::*;

const D100: [f64; 4] = [100.0; 4];

/// The upstream "basic" profile: root(1) → a(2) → b(3), b also listed under root.
fn basic() -> Vec<String> {
    vec![node(1, "(root)", &[2, 3]), node(2, "a", &[3]), node(3, "b", &[])]
}

/// root → a(2), b(3), both at depth 0.
fn flat() -> Vec<String> {
    vec![node(1, "(root)", &[2, 3]), node(2, "a", &[]), node(3, "b", &[])]
}

#[test]
fn s5_1_3_basic_with_function_call() {
    let a = run(&trace(&basic(), &[2, 2, 3, 3], &D100, "", &[x("FunctionCall", 0.0, 500.0)]));
    assert_eq!(spans(&a), ["a@100+400", "b@300+200"]);
}

#[test]
fn s5_1_4_basic_without_trace_events() {
    let a = run(&cpuprofile(&basic(), &[2, 2, 3, 3], &D100, 0.0, 400.0));
    assert_eq!(spans(&a), ["a@100+300", "b@300+100"]);
}

#[test]
fn s5_1_5_flat_profile_function_call_starts_mid_profile() {
    let a = run(&trace(&flat(), &[2, 2, 3, 3], &D100, "", &[x("FunctionCall", 250.0, 250.0)]));
    assert_eq!(spans(&a), ["a@100+150", "b@300+200"]);
}

// The spec writes "v8.run 10..490": upstream it is `makeCompleteEvent('v8.run', 10, 490)`, i.e.
// ts 10 and dur 490 (end 500), while "FunctionCall 250..500" of #5 is ts 250, dur 250.
#[test]
fn s5_1_6_v8_prefixed_names_are_invocations() {
    let ev = [x("EvaluateScript", 0.0, 500.0), x("v8.run", 10.0, 490.0), x("V8.ParseFunction", 12.0, 1.0)];
    let a = run(&trace(&flat(), &[2, 2, 3, 3], &D100, "", &ev));
    assert_eq!(spans(&a), ["a@100+200", "b@300+200"]);
}

#[test]
fn s5_1_7_trace_id_instant_opens_its_stack() {
    let nodes = [
        node(1, "(root)", &[2]),
        node(2, "foo", &[3, 4]),
        node(3, "bar", &[]),
        node(4, "baz", &[5]),
        node(5, "sheep", &[]),
    ];
    let ev = [x("EvaluateScript", 0.0, 500.0), x("v8.run", 10.0, 490.0), instant("TimeStamp", 350.0, "123")];
    let a = run(&trace(&nodes, &[3, 3, 3, 5], &D100, r#"{"123":5}"#, &ev));
    assert_eq!(calls(&a), ["foo@100+400[n2,s0]", "bar@100+250[n3,s0]", "baz@350+150[n4,s-1]", "sheep@350+150[n5,s-1]"]);
}

#[test]
fn s5_1_8_run_microtasks_resets_and_its_end_closes() {
    let ev = [x("RunTask", 0.0, 100.0), x("EvaluateScript", 0.0, 100.0), x("RunMicrotasks", 50.0, 100.0)];
    let a = run(&trace(&basic(), &[2, 2, 3, 3], &[20.0; 4], "", &ev));
    assert_eq!(spans(&a), ["a@20+30", "a@60+90", "b@60+90"]);
}

#[test]
fn s5_1_11_post_message_trace_id_released_engine() {
    let nodes = [node(1, "(root)", &[2, 4]), node(2, "a", &[3]), node(3, "b", &[]), node(4, "postMessage", &[])];
    let json = trace(&nodes, &[2, 2, 2, 3], &D100, r#"{"99":4}"#, &[instant("SchedulePostMessage", 250.0, "99")]);
    assert_eq!(spans(&run(&json)), ["a@100+150", "postMessage@250+0"]);
    // The newest DevTools turns fake-JS mode on after the instant (V6).
    assert_eq!(
        calls(&run_latest(&json)),
        ["a@100+150[n2,s0]", "postMessage@250+50[n4,s-1]", "a@300+100[n2,s2]", "b@400+0[n3,s3]"]
    );
}

// §5.2: forEachFrame (CPU-profile mode). The spec's figures are rounded; times are µs here.

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn assert_rows(got: Vec<TreeRow>, want: &[(&str, f64, f64, Option<f64>)]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.0 == w.0 && close(g.1, w.1) && close(g.2, w.2) && w.3.is_none_or(|s| close(g.3.unwrap(), s)),
            "got {g:?}, want {w:?}"
        );
    }
}

#[test]
fn s5_2_for_each_frame_tree() {
    let nodes = [
        node(1, "(root)", &[2, 3]),
        node(2, "a", &[4, 5]),
        node(3, "b", &[6]),
        node(4, "c", &[]),
        node(5, "d", &[]),
        node(6, "e", &[7]),
        node(7, "f", &[]),
    ];
    let json = cpuprofile(&nodes, &[2, 2, 4, 5, 4, 2, 3, 6, 6, 7, 7, 3, 3], &[100.0; 13], 1000.0, 2300.0);
    let a = run_panel(&json);
    assert_rows(
        tree_rows(&a),
        &[
            ("a", 1100.0, 600.0, Some(300.0)),
            ("c", 1300.0, 100.0, Some(100.0)),
            ("d", 1400.0, 100.0, Some(100.0)),
            ("c", 1500.0, 100.0, Some(100.0)),
            ("b", 1700.0, 700.0, Some(300.0)),
            ("e", 1800.0, 400.0, Some(200.0)),
            ("f", 2000.0, 200.0, Some(200.0)),
        ],
    );
}

#[test]
fn s5_2_missing_samples_repair() {
    let nodes = [
        node(1, "(root)", &[2, 3, 4, 5]),
        node(2, "(garbage collector)", &[]),
        node(3, "(program)", &[]),
        node(4, "bar", &[6]),
        node(5, "baz", &[]),
        node(6, "foo", &[]),
    ];
    let samples = [3, 4, 3, 4, 3, 6, 2, 2, 3, 6, 6, 3, 6, 5, 3, 6];
    let a = run_panel(&cpuprofile(&nodes, &samples, &[1000.0; 16], 1000.0, 17000.0));
    assert_rows(
        tree_rows(&a),
        &[
            ("(program)", 2000.0, 1000.0, None),
            ("bar", 3000.0, 7000.0, Some(4000.0)),
            ("foo", 7000.0, 3000.0, Some(1000.0)),
            ("(garbage collector)", 8000.0, 2000.0, None),
            ("(program)", 10000.0, 1000.0, None),
            ("bar", 11000.0, 4000.0, Some(0.0)),
            ("foo", 11000.0, 4000.0, None),
            ("baz", 15000.0, 1000.0, None),
            ("(program)", 16000.0, 1000.0, None),
            ("bar", 17000.0, 1000.0, None),
            ("foo", 17000.0, 1000.0, None),
        ],
    );
}

#[test]
fn s5_2_gc_on_top_of_the_previous_stack() {
    let nodes =
        [node(1, "(root)", &[2, 3]), node(2, "(garbage collector)", &[]), node(3, "foo", &[4]), node(4, "bar", &[])];
    let a = run_panel(&cpuprofile(&nodes, &[4, 4, 3, 4, 2], &[500.0, 250.0, 1000.0, 250.0, 1000.0], 1000.0, 4000.0));
    let rows = tree_rows(&a);
    let r2 = |x: f64| (x / 10.0).round() / 100.0; // µs → ms, 2 decimals
    let got: Vec<(String, f64, f64)> = rows.iter().map(|r| (r.0.clone(), r2(r.1), r2(r.2))).collect();
    let want = [("foo", 1.5, 3.13), ("bar", 1.5, 1.25), ("bar", 3.0, 1.63), ("(garbage collector)", 4.0, 0.63)];
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!((g.0.as_str(), g.1, g.2), w);
    }
    assert_eq!(r2(rows[0].3.unwrap()), 0.25);
    assert_eq!(r2(rows[2].3.unwrap()), 1.0);
    assert_eq!(rows[3].4, Some(2), "gc nests under the previous leaf");
}

// §5.5: derived edge cases. Samples are 100 µs apart unless stated.

fn d(n: usize) -> Vec<f64> {
    vec![100.0; n]
}

#[test]
fn e1_gc_keeps_the_stack() {
    let nodes =
        [node(1, "(root)", &[2, 4]), node(2, "a", &[3]), node(3, "b", &[]), node(4, "(garbage collector)", &[])];
    let a = run(&cpuprofile(&nodes, &[3, 4, 3, 2], &d(4), 0.0, 400.0));
    assert_eq!(spans(&a), ["a@100+300", "b@100+300"]);
}

#[test]
fn e2_gc_first_contributes_nothing() {
    let nodes = [node(1, "(root)", &[2, 4]), node(2, "a", &[]), node(4, "(garbage collector)", &[])];
    let a = run(&cpuprofile(&nodes, &[4, 2, 2], &d(3), 0.0, 300.0));
    assert_eq!(spans(&a), ["a@200+100"]);
}

#[test]
fn e3_lone_program_sample_is_repaired() {
    let nodes = [node(1, "(root)", &[2, 4]), node(2, "a", &[3]), node(3, "b", &[]), node(4, "(program)", &[])];
    let a = run(&cpuprofile(&nodes, &[3, 4, 2, 2], &d(4), 0.0, 400.0));
    assert_eq!(spans(&a), ["a@100+300", "b@100+200"]);
}

#[test]
fn e4_idle_closes_frames() {
    let nodes = [node(1, "(root)", &[2, 3]), node(2, "a", &[]), node(3, "(idle)", &[])];
    let a = run(&cpuprofile(&nodes, &[2, 2, 3, 2], &d(4), 0.0, 400.0));
    assert_eq!(spans(&a), ["a@100+200", "a@400+0"]);
}

#[test]
fn e5_native_runtime_frames_are_filtered() {
    let nodes =
        [node(1, "(root)", &[2]), node(2, "a", &[3]), node(3, "Compile@native V8Runtime", &[4]), node(4, "c", &[])];
    let json = cpuprofile(&nodes, &[4, 4], &d(2), 0.0, 200.0);
    assert_eq!(spans(&run(&json)), ["a@100+100", "c@100+100"]);
    let all = run_with(&json, |c| c.show_all_events = true);
    assert_eq!(spans(&all), ["a@100+100", "Compile@100+100", "c@100+100"]);
}

#[test]
fn e6_sample_at_event_start_is_inside() {
    let a = run(&trace(&flat(), &[2, 2], &d(2), "", &[x("FunctionCall", 100.0, 150.0)]));
    assert_eq!(spans(&a), ["a@100+150"]);
}

#[test]
fn e6b_zero_duration_event_splits_fake_frames() {
    let a = run(&trace(&flat(), &[2, 2, 2], &d(3), "", &[x("Layout", 200.0, 0.0)]));
    assert_eq!(spans(&a), ["a@100+100", "a@300+0"]);
}

#[test]
fn e7_fake_mode_inside_a_non_js_event() {
    let a = run(&trace(&flat(), &[2, 2, 2], &d(3), "", &[x("Layout", 50.0, 300.0)]));
    assert_eq!(spans(&a), ["a@100+250"]);
}

#[test]
fn e7b_event_start_closes_fake_frames_and_end_stretches() {
    let a = run(&trace(&flat(), &[2, 2, 3, 3], &d(4), "", &[x("Layout", 250.0, 300.0)]));
    assert_eq!(spans(&a), ["a@100+150", "b@300+250"]);
}

#[test]
fn e8_equal_frames_merge_across_nodes() {
    let nodes = [node(1, "(root)", &[2, 3]), node(2, "a:1", &[]), node(3, "a:7", &[])];
    let a = run(&cpuprofile(&nodes, &[2, 3, 2], &d(3), 0.0, 300.0));
    assert_eq!(calls(&a), ["a@100+200[n2,s0]"]);
}

#[test]
fn e9_samples_are_stably_sorted_by_time() {
    let a = run(&cpuprofile(&flat(), &[2, 3, 2], &[100.0, 100.0, -150.0], 0.0, 200.0));
    assert_eq!(calls(&a), ["a@50+150[n2,s0]", "b@200+0[n3,s2]"]);
}

#[test]
fn e10_unknown_sample_ids_are_dropped() {
    let a = run(&cpuprofile(&flat(), &[2, 99, 2], &d(3), 0.0, 300.0));
    assert_eq!(spans(&a), ["a@100+200"]);
    assert_eq!(a.diagnostics().counts().collect::<Vec<_>>(), [(jscalls::WarningKind::UnknownSampleNode, 1)]);
}

#[test]
fn e11_run_task_resets_and_fake_mode_survives_its_end() {
    let a = run(&trace(&flat(), &[2, 2, 2, 2], &d(4), "", &[x("RunTask", 250.0, 100.0)]));
    assert_eq!(spans(&a), ["a@100+150", "a@300+50", "a@400+0"]);
}

#[test]
fn e12_trace_id_frames_outlive_the_instant() {
    let nodes = [node(1, "(root)", &[2]), node(2, "a", &[3]), node(3, "b", &[])];
    let ev = [x("FunctionCall", 50.0, 400.0), instant("TimeStamp", 250.0, "7")];
    let a = run(&trace(&nodes, &[2, 2, 2], &d(3), r#"{"7":3}"#, &ev));
    assert_eq!(calls(&a), ["a@100+350[n2,s0]", "b@250+50[n3,s-1]"]);
}

#[test]
fn e13_locked_frames_drop_a_shallower_sample() {
    let nodes = [node(1, "(root)", &[2, 4]), node(2, "a", &[3]), node(3, "b", &[]), node(4, "c", &[])];
    let ev = [x("FunctionCall", 50.0, 400.0), x("FunctionCall", 150.0, 100.0)];
    let a = run(&trace(&nodes, &[3, 4, 4, 3], &d(4), "", &ev));
    assert_eq!(spans(&a), ["a@100+200", "b@100+200", "c@300+100", "a@400+50", "b@400+50"]);
}

#[test]
fn e14_event_end_closes_frames_opened_inside() {
    let nodes = [node(1, "(root)", &[2]), node(2, "a", &[3]), node(3, "b", &[])];
    let ev = [x("FunctionCall", 50.0, 400.0), x("EventDispatch", 150.0, 100.0)];
    let a = run(&trace(&nodes, &[2, 3, 2], &d(3), "", &ev));
    assert_eq!(spans(&a), ["a@100+350", "b@200+50"]);
}

#[test]
fn e15_missing_dur_is_zero() {
    let ev = [r#"{"name":"FunctionCall","ph":"X","ts":50}"#.to_owned()];
    let a = run(&trace(&flat(), &[2, 2], &d(2), "", &ev));
    assert_eq!(spans(&a), ["a@100+100"]);
}

#[test]
fn e16_run_microtasks_splits_frames() {
    let nodes = [node(1, "(root)", &[2]), node(2, "a", &[3]), node(3, "b", &[])];
    let ev = [x("FunctionCall", 50.0, 400.0), x("RunMicrotasks", 250.0, 100.0)];
    let a = run(&trace(&nodes, &[3, 3, 3, 3], &d(4), "", &ev));
    assert_eq!(spans(&a), ["a@100+150", "b@100+150", "a@300+50", "b@300+50", "a@400+50", "b@400+50"]);
}

#[test]
fn e17_trace_id_zero_is_falsy() {
    let ev = [x("FunctionCall", 50.0, 400.0), instant("TimeStamp", 250.0, "0")];
    let a = run(&trace(&flat(), &[2, 2, 2], &d(3), r#"{"0":2}"#, &ev));
    assert_eq!(spans(&a), ["a@100+350"]);
}

#[test]
fn f1_unknown_id_ends_the_cpu_profile_walk() {
    let nodes = [node(1, "(root)", &[2]), node(2, "a", &[3]), node(3, "b", &[])];
    let a = run_panel(&cpuprofile(&nodes, &[3, 99, 3, 2], &d(4), 0.0, 400.0));
    let mut got = spans(&a);
    got.sort();
    assert_eq!(got, ["a@100+100", "b@100+100"]);
}

#[test]
fn f2_lone_sample_ends_at_profile_end() {
    let nodes = [node(1, "(root)", &[2]), node(2, "a", &[])];
    let a = run_panel(&cpuprofile(&nodes, &[2], &d(1), 0.0, 10000.0));
    assert_eq!(spans(&a), ["a@100+9900"]);
}

#[test]
fn f3_gc_as_last_sample_has_f64_noise() {
    let nodes = [node(1, "(root)", &[2, 3]), node(2, "a", &[]), node(3, "(garbage collector)", &[])];
    let a = run_panel(&cpuprofile(&nodes, &[2, 2, 3], &d(3), 0.0, 300.0));
    assert_eq!(spans(&a), ["a@100+299.99999999999994", "(garbage collector)@300+99.99999999999997"]);
    assert_eq!(a.threads().next().unwrap().call(1).depth(), Some(1));
}

// The spec rounds these; the engine's exact durations (checked with the oracle) carry the
// ms → µs noise, and so do ours.
#[test]
fn f4_meta_frames_are_calls_in_cpu_profile_mode() {
    let nodes = [node(1, "(root)", &[2, 3, 4]), node(2, "a", &[]), node(3, "(program)", &[]), node(4, "(idle)", &[])];
    let a = run_panel(&cpuprofile(&nodes, &[2, 3, 4, 2], &d(4), 0.0, 400.0));
    assert_eq!(
        spans(&a),
        ["a@100+100", "(program)@200+99.99999999999997", "(idle)@300+100.00000000000003", "a@400+99.99999999999997"]
    );
}
