//! ProfileModel against hand-made profiles.

use super::*;

/// A reference stable sort by time, and its result for `sort_samples`.
fn check(times: &[f64]) {
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by(|&a, &b| times[a].partial_cmp(&times[b]).unwrap());
    let want_t: Vec<u64> = order.iter().map(|&k| times[k].to_bits()).collect();
    let want_n: Vec<u32> = order.iter().map(|&k| k as u32).collect();
    let mut t = times.to_vec();
    let mut n: Vec<u32> = (0..times.len() as u32).collect();
    sort_samples(&mut t, &mut n);
    assert_eq!(t.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want_t, "{times:?}");
    assert_eq!(n, want_n, "{times:?}");
    // Back to deltas and summed again, the times are the same bits (or kept in ms).
    check_sorted(&t, &want_t);
}

fn check_sorted(t: &[f64], want_t: &[u64]) {
    let back: Vec<u64> = match Times::sorted(3.0, t.to_vec()) {
        Times::Deltas { start, deltas } => deltas
            .iter()
            .scan(start, |s, d| {
                *s += d;
                Some(*s)
            })
            .map(f64::to_bits)
            .collect(),
        Times::Ms(ms) => {
            assert_eq!(ms, t.iter().map(|x| x / 1000.0).collect::<Vec<_>>());
            want_t.to_vec()
        }
        Times::Us(_) => unreachable!(),
    };
    assert_eq!(back, want_t);
}

#[test]
fn samples_sort_stably_in_place_or_by_the_fallback() {
    // Recorded shape: in order but for a few negative deltas; ties, -0 and 0 keep their order.
    check(&[100.0, 200.0, 150.0, 300.0, 300.0, 250.0, 400.0, 0.0, -0.0, 0.0, 500.0]);
    check(&[1.5, 0.25, 1e15, 2.0, 1e15 + 0.5, -7.0]);
    // Shuffled or reversed beyond the insertion budget: the general sort takes over midway.
    let reversed: Vec<f64> = (0..5000).rev().map(|k| (k / 3) as f64).collect();
    check(&reversed);
    let scrambled: Vec<f64> = (0..3000u64).map(|k| ((k * 7919) % 1000) as f64 * 10.0).collect();
    check(&scrambled);
    check(&[]);
    check(&[42.0]);
}

#[test]
fn a_trace_node_is_four_words() {
    // Millions of them are held beside the model made of them.
    assert_eq!(std::mem::size_of::<RawNode>(), 32);
    let bare = RawNode::new(7, 3, 1, false, NodeMore::default());
    assert!(bare.more.is_none());
    assert_eq!((bare.children(), bare.hit_count().to_bits(), bare.position_ticks()), (None, 0, None));
    // -0 is something said: `hitCount || 0` sums it as given.
    let neg = RawNode::new(7, 3, 1, true, NodeMore { hit_count: -0.0, ..NodeMore::default() });
    assert_eq!(neg.hit_count().to_bits(), (-0.0f64).to_bits());
    let kids = RawNode::new(7, 3, 1, true, NodeMore { children: Some(Box::new([4, 5])), ..NodeMore::default() });
    assert_eq!(kids.children(), Some(&[4, 5][..]));
}

#[test]
fn deltas_of_more_than_a_day_are_leaps() {
    let fail = |m: String| Error::input(None, m);
    let day = 86_400e6;
    let deltas: SmallDeltas = [100.0, day, day + 1.0, -day - 1.0, 5.0].into_iter().collect();
    let (in_order, leaps) = check_times(0.0, &deltas, &fail).unwrap();
    assert!(!in_order);
    assert_eq!(leaps, TimeLeaps { count: 2, first: (2, day + 1.0) });
    let (_, none) = check_times(0.0, &[1.0, day].into_iter().collect(), &fail).unwrap();
    assert_eq!(none.count, 0);
}
