//! Per call, its self time and depth in the flame-chart tree, or none for a call the tree
//! drops: 12 bytes a call where `Option<f64>` and `Option<i32>` take 24 (a large thread has
//! millions of calls, held while trees and exports are made of them).

/// The bits of "no self time": a signalling NaN, which no arithmetic makes (its results are
/// quiet NaNs), so every self time computed stays one.
const NO_SELF_TIME: u64 = 0x7ff4_0000_0000_0001;

/// "No depth": no tree is that deep.
const NO_DEPTH: i32 = i32::MIN;

/// Each call's self time (µs), or none.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SelfTimes(Vec<u64>);

impl SelfTimes {
    /// `n` calls without a self time.
    pub(crate) fn none(n: usize) -> SelfTimes {
        SelfTimes(vec![NO_SELF_TIME; n])
    }

    /// Call `i`'s, or None (also past the last call).
    pub(crate) fn get(&self, i: usize) -> Option<f64> {
        self.0.get(i).filter(|&&b| b != NO_SELF_TIME).map(|&b| f64::from_bits(b))
    }

    /// Gives call `i` its self time.
    pub(crate) fn set(&mut self, i: usize, v: f64) {
        debug_assert_ne!(v.to_bits(), NO_SELF_TIME, "computed self times are never the marker");
        self.0[i] = v.to_bits();
    }

    /// Adds a call without a self time.
    pub(crate) fn push_none(&mut self) {
        self.0.push(NO_SELF_TIME);
    }
}

/// Each call's depth, or none.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Depths(Vec<i32>);

impl Depths {
    /// `n` calls without a depth.
    pub(crate) fn none(n: usize) -> Depths {
        Depths(vec![NO_DEPTH; n])
    }

    /// Call `i`'s, or None (also past the last call).
    pub(crate) fn get(&self, i: usize) -> Option<i32> {
        self.0.get(i).copied().filter(|&d| d != NO_DEPTH)
    }

    /// Gives call `i` its depth.
    pub(crate) fn set(&mut self, i: usize, d: i32) {
        debug_assert_ne!(d, NO_DEPTH);
        self.0[i] = d;
    }

    /// Adds a call of depth `d`.
    pub(crate) fn push(&mut self, d: i32) {
        debug_assert_ne!(d, NO_DEPTH);
        self.0.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_computed_value_stays_itself() {
        let mut s = SelfTimes::none(4);
        // NaNs from arithmetic (quiet, either sign), an infinity, a negative zero.
        let nan = f64::INFINITY - f64::INFINITY;
        for (i, v) in [nan, -nan, f64::INFINITY, -0.0].into_iter().enumerate() {
            s.set(i, v);
            assert_eq!(s.get(i).map(f64::to_bits), Some(v.to_bits()));
        }
        s.push_none();
        assert_eq!((s.get(4), s.get(5)), (None, None));
        let mut d = Depths::none(2);
        d.set(0, 0);
        d.push(i32::MAX);
        assert_eq!((d.get(0), d.get(1), d.get(2), d.get(3)), (Some(0), None, Some(i32::MAX), None));
    }
}
