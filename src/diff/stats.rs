//! Medians, spreads and the Mann–Whitney U test for runs of a recording.
//!
//! Timings of repeated runs are skewed and have outliers (a GC, a page fault, another process),
//! so a test on ranks is used rather than one that assumes a normal distribution: Mann–Whitney
//! asks whether NEW's values tend to be larger than BASE's, needs no distribution, and is exact
//! for the few runs CI jobs can afford.

/// The median of `v` (NaN for an empty list).
pub(super) fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

/// The smallest and largest of `v`.
pub(super) fn range(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// The one-sided p-value of the Mann–Whitney U test that `b`'s values tend to be larger than
/// `a`'s (`greater`) or smaller: exact (counting every ordering of the pooled values, ties
/// counting a half) when there are at most 400 pairs and no ties, the normal approximation
/// with a tie correction otherwise. 1 when either side is empty.
pub(super) fn mann_whitney(a: &[f64], b: &[f64], greater: bool) -> f64 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    // U for b: pairs (x in a, y in b) with y > x, ties a half.
    let mut u = 0.0;
    for &y in b {
        for &x in a {
            u += if y > x {
                1.0
            } else if y == x {
                0.5
            } else {
                0.0
            };
        }
    }
    let u = if greater { u } else { (n1 * n2) as f64 - u };
    let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    pooled.sort_by(f64::total_cmp);
    let ties = pooled.windows(2).any(|w| w[0] == w[1]);
    if n1 * n2 <= 400 && !ties {
        // P(U >= u) under the null: counts of orderings with each U, by recurrence on (n1, n2).
        let dist = u_distribution(n1, n2);
        let total: f64 = dist.iter().sum();
        let from = u.ceil() as usize;
        return dist[from.min(dist.len())..].iter().sum::<f64>() / total;
    }
    normal_p(u, n1, n2, &pooled)
}

/// P(U >= u) by the normal approximation, with the tie correction and a continuity correction.
fn normal_p(u: f64, n1: usize, n2: usize, pooled: &[f64]) -> f64 {
    let n = (n1 + n2) as f64;
    let mean = (n1 * n2) as f64 / 2.0;
    // Σ(t³ − t) over groups of tied values.
    let mut tie_sum = 0.0;
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i;
        while j + 1 < pooled.len() && pooled[j + 1] == pooled[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_sum += t * t * t - t;
        i = j + 1;
    }
    let var = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - tie_sum / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    // Continuity correction of a half.
    let z = (u - mean - 0.5) / var.sqrt();
    upper_normal_tail(z)
}

/// The number of arrangements of n1 and n2 values giving each U = 0..=n1·n2.
fn u_distribution(n1: usize, n2: usize) -> Vec<f64> {
    // f[i][j][u]: arrangements of i and j values with statistic u; f(i,j,u) = f(i-1,j,u-j) + f(i,j-1,u).
    let max = n1 * n2;
    let mut prev: Vec<Vec<f64>> = (0..=n2).map(|_| vec![0.0; max + 1]).collect();
    for row in prev.iter_mut() {
        row[0] = 1.0;
    }
    for _ in 0..n1 {
        let mut cur: Vec<Vec<f64>> = (0..=n2).map(|_| vec![0.0; max + 1]).collect();
        cur[0][0] = 1.0;
        for j in 1..=n2 {
            for u in 0..=max {
                let mut v = cur[j - 1][u];
                if u >= j {
                    v += prev[j][u - j];
                }
                cur[j][u] = v;
            }
        }
        prev = cur;
    }
    prev.swap_remove(n2)
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26, error under 1.5e-7).
fn upper_normal_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_lists() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn exact_p_values_match_the_tables() {
        // Complete separation: one ordering of C(n1+n2, n1).
        assert!((mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], true) - 1.0 / 20.0).abs() < 1e-12);
        assert!(
            (mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0], true) - 1.0 / 252.0).abs() < 1e-12
        );
        // The other direction is certain.
        assert!((mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], false) - 1.0).abs() < 1e-12);
        // a = {1, 3}, b = {2, 4}: U_b = 3 of 4; orderings with U >= 3: U=3 and U=4, 2 of 6.
        assert!((mann_whitney(&[1.0, 3.0], &[2.0, 4.0], true) - 2.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn the_normal_approximation_is_close_to_the_exact_test() {
        // a = 0..20, b = a + 6.5: U = 309 of 400 (computed by hand: min(20, j + 7) summed).
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 6.5).collect();
        let exact = mann_whitney(&a, &b, true);
        let mut pooled: Vec<f64> = a.iter().chain(&b).copied().collect();
        pooled.sort_by(f64::total_cmp);
        // z = (309 - 200 - 0.5) / sqrt(400 * 41 / 12) = 2.935.
        let approx = normal_p(309.0, 20, 20, &pooled);
        assert!((approx - 0.001_67).abs() < 0.000_05, "{approx}");
        assert!(exact > 0.001 && exact < approx, "{exact}");
        assert!((upper_normal_tail(1.959_964) - 0.025).abs() < 1e-6);
        // Ties everywhere: no evidence at all.
        assert!(mann_whitney(&[1.0; 4], &[1.0; 4], true) > 0.4);
    }
}
