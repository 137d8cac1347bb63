//! Each call's bounds in 16 bytes, not 32: a thread's calls number in the millions on a large
//! trace, and their bounds were held whole beside them.

use rustc_hash::FxHashMap;

use super::Bounds;

/// Calls per block: a block's bounds count from one time, its first bound.
const BLOCK: usize = 1024;
/// An offset that stands for NaN (no bound on that side).
const NAN: i32 = i32::MIN;
/// In a call's first offset: its bounds are in [`BoundsTable::others`].
const OTHER: i32 = i32::MAX;

/// The bounds of a thread's calls, by call: whole µs (as they are made) held as offsets from
/// their block's first bound; any that are not, or lie too far from it, whole on the side.
/// Every bound reads back bit for bit (NaN as some NaN).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BoundsTable {
    offsets: Vec<[i32; 4]>,
    /// Per block, the time its offsets count from (NaN until a bound sets it).
    bases: Vec<f64>,
    others: FxHashMap<u32, Bounds>,
}

impl BoundsTable {
    /// How many calls have bounds.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Call `i`'s bounds, when it has them.
    pub(crate) fn get(&self, i: usize) -> Option<Bounds> {
        let o = self.offsets.get(i)?;
        if o[0] == OTHER {
            return self.others.get(&(i as u32)).copied();
        }
        let base = self.bases[i / BLOCK];
        Some(o.map(|x| if x == NAN { f64::NAN } else { base + f64::from(x) }))
    }

    /// Adds the next call's bounds.
    pub(crate) fn push(&mut self, b: Bounds) {
        let i = self.offsets.len();
        if i.is_multiple_of(BLOCK) {
            self.bases.push(f64::NAN);
        }
        let base = self.bases.last_mut().expect("a block for every call");
        if base.is_nan() {
            *base = b.iter().copied().find(|x| x.is_finite()).unwrap_or(f64::NAN);
        }
        let base = *base;
        let offset = |x: f64| -> Option<i32> {
            if x.is_nan() {
                return Some(NAN);
            }
            let d = x - base;
            let k = d as i32;
            (k != NAN && k != OTHER && f64::from(k) == d && (base + f64::from(k)).to_bits() == x.to_bits()).then_some(k)
        };
        match (offset(b[0]), offset(b[1]), offset(b[2]), offset(b[3])) {
            (Some(a), Some(c), Some(d), Some(e)) => self.offsets.push([a, c, d, e]),
            _ => {
                self.offsets.push([OTHER, 0, 0, 0]);
                self.others.insert(i as u32, b);
            }
        }
    }
}

impl FromIterator<Bounds> for BoundsTable {
    fn from_iter<I: IntoIterator<Item = Bounds>>(iter: I) -> BoundsTable {
        let mut t = BoundsTable::default();
        iter.into_iter().for_each(|b| t.push(b));
        t
    }
}

impl Extend<Bounds> for BoundsTable {
    fn extend<I: IntoIterator<Item = Bounds>>(&mut self, iter: I) {
        iter.into_iter().for_each(|b| self.push(b));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bound reads back as it was pushed: whole µs near and far from their block's first,
    /// fractional, negative zero, infinite, NaN sides, all-NaN calls opening a block.
    #[test]
    fn bounds_read_back_exactly() {
        let t0 = 250_001_000_183.0;
        let mut all: Vec<Bounds> = Vec::new();
        for k in 0..5000u32 {
            let x = t0 + f64::from(k) * 97.0;
            all.push(match k % 9 {
                0 => [f64::NAN; 4],
                1 => [x, x + 10.0, x + 5.0, x + 20.0],
                2 => [f64::NAN, x, x - 3.0, f64::NAN],
                3 => [x + 0.5, x, x, x],
                4 => [-0.0, 0.0, x, x],
                5 => [f64::NEG_INFINITY, x, x, f64::INFINITY],
                6 => [x, x + 3e9, x, x],
                7 => [1e300, x, x, x],
                _ => [x - 1.0, x, x + 1.0, x + 2.0],
            });
        }
        let table: BoundsTable = all.iter().copied().collect();
        assert_eq!(table.len(), all.len());
        for (i, b) in all.iter().enumerate() {
            let got = table.get(i).expect("pushed");
            for (g, w) in got.iter().zip(b) {
                assert!(g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan(), "call {i}: {got:?} for {b:?}");
            }
        }
        assert_eq!(table.get(all.len()), None);
        // Whole µs near each other, NaN sides among them, stay out of the side table.
        let ordinary: BoundsTable =
            all.iter().enumerate().filter(|(k, _)| matches!(k % 9, 0 | 1 | 2 | 8)).map(|(_, b)| *b).collect();
        assert!(ordinary.others.is_empty(), "{} on the side", ordinary.others.len());
    }
}
