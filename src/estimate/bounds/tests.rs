//! The bounds and the midway estimate on hand-made threads.

use super::midway::{lag_within, place_both, Place};
use super::sampler::{fit_lag, stamp_delay};
use super::tables::{Nesting, Opened};
use super::times::{key_time, merge_times, ordered_edges, partition_from, sort_times, time_key, Side};
use super::*;

#[test]
fn events_give_their_edges_in_order() {
    let entry = |ts: f64, dur: f64| Entry { ts, dur, trace: 0, flags: 0 };
    // [0, 100] holds [10, 50] (holding [20, 30] and [30, 40]) and [50, 100]; then [100, 120].
    let events = [
        entry(0.0, 100.0),
        entry(10.0, 40.0),
        entry(20.0, 10.0),
        entry(30.0, 10.0),
        entry(50.0, 50.0),
        entry(100.0, 20.0),
    ];
    assert_eq!(
        ordered_edges(events.iter()),
        Some(vec![0.0, 10.0, 20.0, 30.0, 30.0, 40.0, 50.0, 50.0, 100.0, 100.0, 100.0, 120.0])
    );
    // [10, 60] overlaps [0, 50] without being held: its end comes out of the heap in turn.
    let overlapping = [entry(0.0, 50.0), entry(10.0, 50.0), entry(20.0, 5.0), entry(55.0, 1.0)];
    assert_eq!(ordered_edges(overlapping.iter()), Some(vec![0.0, 10.0, 20.0, 25.0, 50.0, 55.0, 56.0, 60.0]));
    // Starts out of order, or NaN: sorted the general way.
    assert_eq!(ordered_edges([entry(10.0, 5.0), entry(0.0, 5.0)].iter()), None);
    assert_eq!(ordered_edges([entry(f64::NAN, 5.0)].iter()), None);
    assert_eq!(ordered_edges([entry(0.0, f64::NAN)].iter()), None);
    for x in [0.0, -0.0, 1.5, -1.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, f64::MIN_POSITIVE] {
        assert_eq!(key_time(time_key(x)).to_bits(), x.to_bits());
    }
    let edges = Edges::new(&[entry(0.0, 50.0), entry(10.0, 50.0), entry(20.0, 5.0)]);
    assert_eq!(edges.times, vec![0.0, 10.0, 20.0, 25.0, 50.0, 60.0]);
    let merged = merge_times(&[-1.0, 0.0, 2.0, f64::INFINITY], &[-0.0, 1.0, 2.0, 3.0]);
    assert_eq!(
        merged.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        [-1.0, -0.0, 0.0, 1.0, 2.0, 2.0, 3.0, f64::INFINITY].iter().map(|x: &f64| x.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn a_moved_boundary_stays_strictly_on_its_side_of_every_edge() {
    let entry = |ts: f64, dur: f64| Entry { ts, dur, trace: 0, flags: 0 };
    // Edges at 100, 200, 250.5 and 260.5.
    let mut edges = Edges::new(&[entry(100.0, 100.0), entry(250.5, 10.0)]);
    // Back past 100 from 110: a whole µs after it; forward past 200 from 190: one before.
    assert_eq!(edges.keep_side(90.0, 110.0, Side::Start), 101.0);
    assert_eq!(edges.keep_side(205.0, 190.0, Side::End), 199.0);
    // No edge between: as placed. DevTools' own time on an edge: kept there.
    assert_eq!(edges.keep_side(160.0, 150.0, Side::Start), 160.0);
    assert_eq!(edges.keep_side(90.0, 100.0, Side::End), 100.0);
    // An edge under a µs away: DevTools' own time.
    assert_eq!(edges.keep_side(252.0, 250.2, Side::Start), 250.2);
}

#[test]
fn times_sort_as_total_cmp_sorts_them() {
    let mut v =
        vec![3.5, -0.0, 0.0, -2.0, f64::NAN, f64::INFINITY, 1e-300, -f64::NAN, -f64::INFINITY, 3.5, 2.0, -1e-300, 7.25];
    let mut w = v.clone();
    sort_times(&mut v);
    w.sort_by(f64::total_cmp);
    assert_eq!(v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), w.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

#[test]
fn galloping_partitions_agree_with_binary_search() {
    let v: Vec<f64> = (0..1000).map(|i| f64::from(i / 3)).collect();
    let mut hint = 0;
    // Targets in every order: forward, back, far, near, past both ends.
    for x in [5.0, 4.0, 300.0, 2.0, 333.9, 334.0, -1.0, 150.5, 150.0, 999.0] {
        for pred in [|e: f64, x: f64| e < x, |e: f64, x: f64| e <= x] {
            assert_eq!(partition_from(&v, &mut hint, |e| pred(e, x)), v.partition_point(|&e| pred(e, x)), "{x}");
        }
    }
}

#[test]
fn frames_that_change_between_two_samples_do_so_in_order() {
    // Samples at 0, 100, 200, 300 µs (the last ends everything):
    // [a > b > c] until 100, then [a > d] until 200, then [a > d > e] until 300.
    let frame = |name: &str| {
        format!(r#""callFrame":{{"functionName":"{name}","scriptId":"1","url":"","lineNumber":0,"columnNumber":0}}"#)
    };
    let json = format!(
        r#"{{"nodes":[{{"id":1,{},"children":[2]}},{{"id":2,{},"children":[3,5]}},{{"id":3,{},"children":[4]}},
        {{"id":4,{},"children":[]}},{{"id":5,{},"children":[6]}},{{"id":6,{},"children":[]}}],
        "samples":[4,5,6,6],"timeDeltas":[0,100,100,100],"startTime":0,"endTime":300}}"#,
        frame("(root)"),
        frame("a"),
        frame("b"),
        frame("c"),
        frame("d"),
        frame("e")
    );
    let mut strings = crate::strings::Strings::default();
    let j: crate::input::shapes::CpuProfileJson = serde_json::from_str(&json).unwrap();
    let raw = crate::model::nodes::raw_from_cpuprofile(&j, &mut strings, None).unwrap();
    let model = ProfileModel::new(raw, &strings, crate::model::profile::Limits::default(), "t", None).unwrap();
    // The nodes by protocol id: a 2, b 3, c 4, d 5, e 6.
    let node = |name: &str| model.node_by_id(i64::from(name.as_bytes()[0] - b'a') + 2);
    let call = |name, sample_index, ts, dur| ProfileCall { node: node(name).unwrap(), sample_index, ts, dur };
    let calls = [
        call("a", 0, 0.0, 300.0),
        call("b", 0, 0.0, 100.0),
        call("c", 0, 0.0, 100.0),
        call("d", 1, 100.0, 200.0),
        call("e", 2, 200.0, 100.0),
    ];
    let t = [0.0, 100.0, 200.0, 300.0];
    let CallTables { ends, changes } = CallTables::new(&model, &calls, &t, false, true);
    assert_eq!(ends, [3, 1, 1, 3, 3]);
    let depth = |name| model.nodes[node(name).unwrap() as usize].depth;
    // Each call's parent as the midway pass finds it, the calls made where DevTools put them.
    let mut nesting = Nesting::new();
    let mut parents = Vec::new();
    for (c, (call, name)) in calls.iter().zip(["a", "b", "c", "d", "e"]).enumerate() {
        let parent = nesting.parent(depth(name), call.ts);
        parents.push(parent.map(|p| p.index));
        let end = call.ts + call.dur;
        let opened = Opened {
            index: c as u32,
            ts: call.ts,
            end,
            sample_index: call.sample_index,
            start: call.ts,
            stop: end,
            children_end: f64::NEG_INFINITY,
        };
        nesting.made(parent.as_ref(), depth(name), opened);
    }
    assert_eq!(parents, [None, Some(0), Some(1), Some(0), Some(3)]);
    // Before sample 1: c ends first, then b, then d starts: at 1/4, 2/4, 3/4 of the gap.
    assert_eq!(changes.place(1, depth("c"), Side::End), 0.25);
    assert_eq!(changes.place(1, depth("b"), Side::End), 0.5);
    assert_eq!(changes.place(1, depth("d"), Side::Start), 0.75);
    // Before sample 2 only e starts: halfway. A frame that did not change there: halfway.
    assert_eq!(changes.place(2, depth("e"), Side::Start), 0.5);
    assert_eq!(changes.place(2, depth("d"), Side::End), 0.5);
    // Without midway, only the ends are made.
    let only = CallTables::new(&model, &calls, &t, true, false);
    assert_eq!((only.ends, only.changes.len()), (vec![3, 1, 1, 3, 3], 0));
}

#[test]
fn a_boundary_goes_halfway_in_time_or_in_log_duration_in_a_hole() {
    // A start between 100 and 200, an end between 500 and 600: halfway in time, 150 and
    // 550. In log duration the start leaves the call (given its end at 550) between 350
    // and 450 µs long: their geometric mean, √157,500 = 396.863 µs, puts it at 153.137;
    // the end (given its start at 150) leaves it between 350 and 450 too: 546.863.
    let (s, e) = (Place::Gap(100.0, 200.0, 0.5), Place::Gap(500.0, 600.0, 0.5));
    assert_eq!(place_both(s, e, f64::INFINITY), (150.0, 550.0));
    let (start, end) = place_both(s, e, 0.0);
    assert!((start - 153.137).abs() < 1e-3 && (end - 546.863).abs() < 1e-3, "{start} {end}");
    // An end an event set stays; the start's duration is then 200 to 300 µs long, the
    // first of two changes in its gap at a third of that range on a log scale:
    // 300·(2/3)^(1/3) = 262.074 µs before the end.
    let (start, end) = place_both(Place::Gap(100.0, 200.0, 1.0 / 3.0), Place::At(400.0), 0.0);
    assert!((start - 137.926).abs() < 1e-3 && end == 400.0, "{start} {end}");
    // A gap the other end lies in or before is placed by time.
    assert_eq!(place_both(Place::Gap(100.0, 200.0, 0.5), Place::At(180.0), 0.0), (150.0, 180.0));
    // Midway places only the gaps longer than two intervals (here 200 µs) by log duration:
    // a start in a 300 µs hole of a call ending at 550 leaves it 150 to 450 µs long,
    // √67,500 = 259.808 µs, at 290.192; the end's 100 µs gap, by time.
    let (start, end) = place_both(Place::Gap(100.0, 400.0, 0.5), Place::Gap(500.0, 600.0, 0.5), 200.0);
    assert!((start - 290.192).abs() < 1e-3 && end == 550.0, "{start} {end}");
}

#[test]
fn the_stamp_delay_is_the_median_of_the_synchronous_samples() {
    let nan = f64::NAN;
    let t = [10.0, 20.0, 31.0, 40.0, 52.0, 60.0];
    // Delays 3, −1 (taken as 0) and 7; plain ticks do not count.
    let exact = [7.0, nan, 32.0, nan, 45.0, nan];
    assert_eq!(stamp_delay(&t, &exact), Some(3.0));
    assert_eq!(stamp_delay(&t, &[nan; 6]), None);
}

#[test]
fn nothing_measures_the_lag_without_a_boundary() {
    assert_eq!(fit_lag(&[], &[], &[], 100.0), None);
    // An on-time tick at its boundary's very time says nothing either.
    assert_eq!(fit_lag(&[], &[0.0], &[], 100.0), None);
}

#[test]
fn unmeasured_captures_lie_between_the_neighbouring_ticks() {
    let nan = f64::NAN;
    let t = vec![100.0, 200.0, 310.0, 400.0];
    let exact = Exact(vec![nan, nan, 305.0, nan]);
    let cap = Captures { t, exact, lag_bound: None, stamp_delay: None, mid: Vec::new() };
    // Tick 1: after tick 0's stamp, before tick 2's; a synchronous sample at its event.
    assert_eq!((cap.lo(1), cap.hi(1)), (100.0, 310.0));
    assert_eq!((cap.lo(2), cap.hi(2)), (305.0, 305.0));
    // The first tick has no earliest capture, the last no latest.
    assert!(cap.lo(0).is_nan() && cap.hi(0) == 200.0);
    assert!(cap.lo(3) == 310.0 && cap.hi(3).is_nan());
    // Measured, each side by its own measure.
    let cap = Captures { lag_bound: Some(30.0), stamp_delay: Some(5.0), ..cap };
    assert_eq!((cap.lo(1), cap.hi(1)), (195.0, 230.0));
    let cap = Captures { lag_bound: Some(30.0), stamp_delay: None, ..cap };
    assert_eq!((cap.lo(1), cap.hi(1)), (100.0, 230.0));
}

#[test]
fn a_lag_known_to_be_short_is_expected_shorter() {
    // Exponential of mean 10 µs truncated at w: 10 − w / (e^(w/10) − 1).
    assert_eq!(lag_within(10.0, f64::INFINITY), 10.0);
    assert!((lag_within(10.0, 10.0) - (10.0 - 10.0 / (1f64.exp() - 1.0))).abs() < 1e-12);
    assert!((lag_within(10.0, 10.0) - 4.180).abs() < 1e-3);
    assert!((lag_within(10.0, 0.01) - 0.005).abs() < 1e-6);
    assert_eq!(lag_within(0.0, 5.0), 0.0);
    assert_eq!(lag_within(10.0, 0.0), 0.0);
}

#[test]
fn no_late_tick_limits_the_mean_lag() {
    // One on-time tick 100 µs before its boundary: ln(1 − e^(−100/m)) = −1.3528.
    let (mean, up) = fit_lag(&[], &[100.0], &[], 100.0).unwrap();
    assert_eq!(mean, 0.0);
    let want = -100.0 / (1.0 - (-1.3528f64).exp()).ln();
    assert!((up - want).abs() < 1e-6 * want, "{up} {want}");
}

#[test]
fn late_ticks_give_the_mean_lag() {
    // Ticks every µs from 1 to 200 before a boundary, late exactly when d < 20 (a 20 µs
    // lag, as a step): the fit lands near 20 µs / ln 2 order, between the extremes.
    let late: Vec<f64> = (1..20).map(f64::from).collect();
    let on: Vec<f64> = (20..=200).map(f64::from).collect();
    let (mean, up) = fit_lag(&late, &on, &[], 200.0).unwrap();
    assert!(mean > 3.0 && mean < 20.0, "{mean}");
    assert!(up > mean, "{up} {mean}");
}

/// A sample's changes read back as they were counted, whether they fit the 16-bit form or take
/// the side table (counts and depths of 65,535 and more, negative depths), and back again.
#[test]
fn changes_read_back_in_either_form() {
    use crate::estimate::bounds::tables::Changes;
    let mut ch = Changes::new(4);
    // Sample 1: 70,000 calls closed, the deepest at 3; sample 2: one opened at depth 80,000,
    // then one at depth 2 (the outermost); sample 3: one closed at depth −1.
    for _ in 0..70_000 {
        ch.update(1, |c| {
            c.closed += 1;
            c.deepest_closed = c.deepest_closed.max(3);
        });
    }
    ch.update(2, |c| {
        c.opened += 1;
        c.outermost_opened = c.outermost_opened.min(80_000);
    });
    let wide = ch.place(2, 80_000, Side::Start);
    ch.update(2, |c| {
        c.opened += 1;
        c.outermost_opened = c.outermost_opened.min(2);
    });
    ch.update(3, |c| {
        c.closed += 1;
        c.deepest_closed = c.deepest_closed.max(-1);
    });
    // Computed by hand from `place`: the k-th of n changes lies at k / (n + 1).
    assert_eq!(ch.place(0, 5, Side::End), 0.5, "nothing changed on sample 0");
    assert_eq!(ch.place(1, 3, Side::End), 1.0 / 70_001.0);
    assert_eq!(ch.place(1, 0, Side::End), 4.0 / 70_001.0);
    assert_eq!(wide, 0.5, "one change alone lies halfway");
    assert_eq!(ch.place(2, 2, Side::Start), 1.0 / 3.0);
    assert_eq!(ch.place(2, 3, Side::Start), 2.0 / 3.0);
    assert_eq!(ch.place(3, -1, Side::End), 0.5);
    assert_eq!(ch.place(9, 1, Side::End), 0.5, "past the samples");
}

#[test]
fn a_call_is_nested_in_the_last_call_a_level_up_that_holds_its_start() {
    let call = |index: u32, ts: f64, end: f64, stop: f64| Opened {
        index,
        ts,
        end,
        sample_index: index as i32,
        start: ts,
        stop,
        children_end: f64::NEG_INFINITY,
    };
    let mut n = Nesting::new();
    // Nothing made yet: an outermost call has no parent and no siblings before it; a deeper
    // one has no siblings known.
    assert_eq!(
        (n.parent(0, 0.0), n.siblings_end(None, 0), n.siblings_end(None, 3)),
        (None, Some(f64::NEG_INFINITY), None)
    );
    n.made(None, 0, call(0, 0.0, 100.0, 90.0));
    assert_eq!(n.siblings_end(None, 0), Some(90.0));
    // Inside call 0 (its start and its end count as inside); its first child has no siblings.
    let p = n.parent(1, 100.0).unwrap();
    assert_eq!((p.index, n.siblings_end(Some(&p), 1)), (0, Some(f64::NEG_INFINITY)));
    n.made(Some(&p), 1, call(1, 10.0, 40.0, 45.0));
    let p = n.parent(1, 50.0).unwrap();
    assert_eq!((p.index, n.siblings_end(Some(&p), 1)), (0, Some(45.0)));
    // After call 0's end, DevTools' times: none around it, whatever it was moved to.
    assert_eq!(n.parent(1, 100.5), None);
    // A new call a level up starts its children's siblings afresh.
    n.made(None, 0, call(2, 200.0, 300.0, 300.0));
    let p = n.parent(1, 250.0).unwrap();
    assert_eq!(
        (p.index, n.siblings_end(Some(&p), 1), n.siblings_end(None, 0)),
        (2, Some(f64::NEG_INFINITY), Some(300.0))
    );
    // Two levels down with nothing made a level up: none; a negative depth is outermost.
    assert_eq!(n.parent(3, 250.0), None);
    assert_eq!((n.parent(-1, 250.0), n.siblings_end(None, -1)), (None, Some(300.0)));
}
