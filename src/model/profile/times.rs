//! The samples' times: checked, sorted and kept as DevTools' model has them.

use crate::model::column::SmallDeltas;
use crate::Error;

/// The samples' times, as `CPUProfileDataModel.timestamps` has them.
#[derive(Debug, Clone)]
pub(super) enum Times {
    /// In time order: time `i` is `(start + deltas[0] + … + deltas[i]) / 1000` ms, summed in
    /// `f64` as the reference sums them (2 bytes a sample instead of 8, mostly).
    Deltas { start: f64, deltas: SmallDeltas },
    /// Sorted, in ms.
    Ms(Vec<f64>),
    /// A profile without samples: the times in µs, never normalized.
    Us(Vec<f64>),
}

impl Default for Times {
    fn default() -> Times {
        Times::Us(Vec::new())
    }
}

impl Times {
    /// Sorted times (µs): as deltas again when summing them gives back every value bit for bit
    /// (whole microseconds, as recorded, always do), else in ms.
    pub(super) fn sorted(start: f64, us: Vec<f64>) -> Times {
        let (mut prev, mut sum) = (start, start);
        let mut deltas = SmallDeltas::with_capacity(us.len());
        for &t in &us {
            let d = t - prev;
            sum += d;
            if sum.to_bits() != t.to_bits() {
                // normalizeTimestamps: µs → ms.
                return Times::Ms(us.into_iter().map(|t| t / 1000.0).collect());
            }
            prev = t;
            deltas.push(d);
        }
        Times::Deltas { start, deltas }
    }
}

/// `sortSamples`: a stable sort of the samples by time. Recorded samples are nearly in order
/// (a negative delta now and then moves a sample back past a neighbour or two), so an insertion
/// sort does it in place in about n steps; past a budget of moves (a hostile or shuffled input)
/// a general stable sort takes over.
pub(super) fn sort_samples(times: &mut [f64], nodes: &mut Vec<u32>) {
    let budget = 8 * times.len() as u64 + 1024;
    let mut moves = 0u64;
    for i in 1..times.len() {
        let (t, node) = (times[i], nodes[i]);
        let mut j = i;
        // Strictly greater: equal times keep their order (-0 and 0 are equal, as `a - b` has it).
        while j > 0 && times[j - 1] > t {
            times[j] = times[j - 1];
            nodes[j] = nodes[j - 1];
            j -= 1;
        }
        times[j] = t;
        nodes[j] = node;
        moves += (i - j) as u64;
        if moves > budget {
            let mut order: Vec<u32> = (0..times.len() as u32).collect();
            // All finite (checked before), so partial_cmp is total.
            order.sort_by(|&a, &b| {
                times[a as usize].partial_cmp(&times[b as usize]).unwrap_or(std::cmp::Ordering::Equal)
            });
            let sorted: Vec<f64> = order.iter().map(|&k| times[k as usize]).collect();
            times.copy_from_slice(&sorted);
            *nodes = order.iter().map(|&k| nodes[k as usize]).collect();
            return;
        }
    }
}

/// A time delta longer than this (a day, in µs) is not a genuine recording's: a trace's clock
/// does not run while the machine sleeps, and no profile is sampled for that long.
const TIME_LEAP_US: f64 = 86_400e6;

/// Time deltas of more than [`TIME_LEAP_US`], forwards or back: how many, and the first's
/// sample and delta.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct TimeLeaps {
    /// How many.
    pub count: u64,
    /// The first's sample index and delta (µs).
    pub first: (usize, f64),
}

/// The sample times (µs), the deltas summed in f64 from `startTime`, checked: whether they
/// are in order (then the deltas are kept as they are, see [`Times`]), and their leaps.
pub(super) fn check_times(
    start_time: f64,
    time_deltas: &SmallDeltas,
    fail: &impl Fn(String) -> Error,
) -> Result<(bool, TimeLeaps), Error> {
    let mut in_order = true;
    let mut leaps = TimeLeaps::default();
    let mut t = start_time;
    for (i, x) in time_deltas.iter().enumerate() {
        let next = t + x;
        if !next.is_finite() {
            return Err(fail(format!(
                "sample {i} has a time that is not a finite number (startTime {} plus timeDeltas)",
                crate::js::number_to_string(start_time)
            )));
        }
        if x.abs() > TIME_LEAP_US {
            if leaps.count == 0 {
                leaps.first = (i, x);
            }
            leaps.count += 1;
        }
        in_order &= i == 0 || t <= next;
        t = next;
    }
    Ok((in_order, leaps))
}
