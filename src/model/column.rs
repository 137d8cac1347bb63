//! Sample columns that take 4 bytes a value, or 2, while the values allow it.
//!
//! A profile's sample ids, time deltas, lines and columns are held until the end of the input.
//! Ids are small integers and lines and columns whole numbers almost always, so each such
//! column starts narrow (`u32` ids; `i16` positions, then `i32`) and widens, for good, at the
//! first value that does not fit. Time deltas are whole microseconds of a sampling interval almost
//! always: 2 bytes each, the few others beside them ([`SmallDeltas`]).

use itertools::Either;

/// A narrow type and the wide type it stands for, exactly.
pub(crate) trait Narrow: Copy {
    /// The type of the values.
    type Wide: Copy;
    /// `w` as a narrow value, when that loses nothing.
    fn narrow(w: Self::Wide) -> Option<Self>;
    /// `w` cast to the narrow type (exact when [`Narrow::narrow`] says it is).
    fn cast(w: Self::Wide) -> Self;
    /// The value.
    fn widen(self) -> Self::Wide;
}

impl Narrow for u32 {
    type Wide = i64;
    #[inline]
    fn narrow(w: i64) -> Option<u32> {
        u32::try_from(w).ok()
    }
    #[inline]
    fn cast(w: i64) -> u32 {
        w as u32
    }
    #[inline]
    fn widen(self) -> i64 {
        i64::from(self)
    }
}

/// Whole numbers held in a signed integer type, exactly.
macro_rules! narrow_whole {
    ($($t:ty),*) => {$(
        impl Narrow for $t {
            type Wide = f64;
            #[inline]
            fn narrow(w: f64) -> Option<$t> {
                let i = w as $t;
                // Not −0 (0.0 == -0.0, but the sign must survive); NaN fails the comparison.
                (f64::from(i) == w && (i != 0 || w.is_sign_positive())).then_some(i)
            }
            #[inline]
            fn cast(w: f64) -> $t {
                w as $t
            }
            #[inline]
            fn widen(self) -> f64 {
                f64::from(self)
            }
        }
    )*};
}

narrow_whole!(i16, i32);

/// Values appended in order and read from any index on: what a [`Column32`] widens into.
pub(crate) trait Values<T>: Default {
    /// Appends the values of `v`.
    fn extend_from(&mut self, v: &[T]);
    /// The number of values.
    fn len(&self) -> usize;
    /// The values from index `from` on.
    fn iter_from(&self, from: usize) -> impl Iterator<Item = T> + '_;
}

impl<T: Copy> Values<T> for Vec<T> {
    fn extend_from(&mut self, v: &[T]) {
        self.extend_from_slice(v);
    }
    fn len(&self) -> usize {
        self.len()
    }
    fn iter_from(&self, from: usize) -> impl Iterator<Item = T> + '_ {
        self[from..].iter().copied()
    }
}

/// A column of values held narrow while they all fit (see the module docs), then in `W`: the
/// wide values, or another column that is narrow itself while it can be.
#[derive(Debug, Clone)]
pub(crate) enum Column32<N: Narrow, W = Vec<<N as Narrow>::Wide>> {
    /// Every value fits the narrow type.
    Narrow(Vec<N>),
    /// Some value did not.
    Wide(W),
}

/// Sample ids ([`crate::input::leaf::UNKNOWN_ID`] for values that are not ids).
pub(crate) type Ids = Column32<u32>;
/// Lines or columns of the samples: 2 bytes a value while they all fit an `i16` (lines
/// almost always, and no line at all is 0), then 4 while they fit an `i32`, then 8.
pub(crate) type Positions = Column32<i16, Column32<i32>>;

impl<N: Narrow, W> Default for Column32<N, W> {
    fn default() -> Column32<N, W> {
        Column32::Narrow(Vec::new())
    }
}

impl<N: Narrow, W: Values<N::Wide>> Column32<N, W> {
    /// The values of `v`.
    pub(crate) fn from_slice(v: &[N::Wide]) -> Column32<N, W> {
        let mut p = Column32::default();
        p.extend(v);
        p
    }

    /// Appends the values of `v`, widening the column first if one of them needs it.
    pub(crate) fn extend(&mut self, v: &[N::Wide]) {
        if let Column32::Narrow(n) = self {
            // Checked, then copied: two loops the compiler vectorizes, where one that pushes
            // value by value is not.
            if v.iter().all(|&w| N::narrow(w).is_some()) {
                n.extend(v.iter().map(|&w| N::cast(w)));
                return;
            }
            // Widened a piece at a time: no copy of the whole column beside it.
            let mut wide = W::default();
            let mut piece = Vec::with_capacity(n.len().min(4096));
            for chunk in n.chunks(4096) {
                piece.clear();
                piece.extend(chunk.iter().map(|x| x.widen()));
                wide.extend_from(&piece);
            }
            *self = Column32::Wide(wide);
        }
        if let Column32::Wide(w) = self {
            w.extend_from(v);
        }
    }

    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Column32::Narrow(n) => n.len(),
            Column32::Wide(w) => w.len(),
        }
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values from index `from` on.
    pub(crate) fn iter_from(&self, from: usize) -> impl Iterator<Item = N::Wide> + '_ {
        match self {
            Column32::Narrow(n) => Either::Left(n[from..].iter().map(|x| x.widen())),
            Column32::Wide(w) => Either::Right(w.iter_from(from)),
        }
    }

    /// All values.
    pub(crate) fn iter(&self) -> impl Iterator<Item = N::Wide> + '_ {
        self.iter_from(0)
    }
}

impl<N: Narrow, W: Values<N::Wide>> Values<N::Wide> for Column32<N, W> {
    fn extend_from(&mut self, v: &[N::Wide]) {
        self.extend(v);
    }
    fn len(&self) -> usize {
        Column32::len(self)
    }
    fn iter_from(&self, from: usize) -> impl Iterator<Item = N::Wide> + '_ {
        Column32::iter_from(self, from)
    }
}

/// Time deltas (µs) in 2 bytes each where they are whole numbers below 65,535 (at sampling
/// intervals of 0.05–10 ms, all but a few gaps), the others in order beside them: samples are
/// most of a long profile's memory, and their times are only ever read in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct SmallDeltas {
    small: Vec<u16>,
    /// Each delta [`ESCAPE`] stands for, in order.
    other: Vec<f64>,
}

/// The small value standing for the next of [`SmallDeltas::other`].
const ESCAPE: u16 = u16::MAX;

/// A place in a [`SmallDeltas`]: where its values up to a point end.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Mark {
    small: usize,
    other: usize,
}

impl SmallDeltas {
    pub(crate) fn with_capacity(n: usize) -> SmallDeltas {
        SmallDeltas { small: Vec::with_capacity(n), other: Vec::new() }
    }

    pub(crate) fn push(&mut self, d: f64) {
        let s = d as u16;
        // Exact, not −0 (its sign must survive), and not the escape itself; NaN fails.
        if s != ESCAPE && f64::from(s) == d && d.is_sign_positive() {
            self.small.push(s);
        } else {
            self.small.push(ESCAPE);
            self.other.push(d);
        }
    }

    /// The values of `v`, after the others.
    pub(crate) fn extend(&mut self, v: &[f64]) {
        self.small.reserve(v.len());
        v.iter().for_each(|&d| self.push(d));
    }

    pub(crate) fn len(&self) -> usize {
        self.small.len()
    }

    /// Where the values so far end.
    pub(crate) fn end(&self) -> Mark {
        Mark { small: self.small.len(), other: self.other.len() }
    }

    /// The deltas, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.iter_since(Mark::default())
    }

    /// The deltas after `mark` (an [`SmallDeltas::end`] of this column), in order.
    pub(crate) fn iter_since(&self, mark: Mark) -> impl Iterator<Item = f64> + '_ {
        let mut other = self.other[mark.other..].iter();
        self.small[mark.small..].iter().map(move |&s| match s {
            ESCAPE => *other.next().expect("one value beside the small ones per escape"),
            s => f64::from(s),
        })
    }
}

impl FromIterator<f64> for SmallDeltas {
    fn from_iter<I: IntoIterator<Item = f64>>(it: I) -> SmallDeltas {
        let it = it.into_iter();
        let mut d = SmallDeltas::with_capacity(it.size_hint().0);
        it.for_each(|x| d.push(x));
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_until_a_value_does_not_fit() {
        let mut ids = Ids::default();
        ids.extend(&[1, 2, u32::MAX as i64]);
        assert!(matches!(ids, Column32::Narrow(_)));
        ids.extend(&[7, -1, 8]);
        assert!(matches!(ids, Column32::Wide(_)));
        ids.extend(&[9]);
        assert_eq!(ids.iter().collect::<Vec<_>>(), [1, 2, u32::MAX as i64, 7, -1, 8, 9]);
        assert_eq!(ids.iter_from(5).collect::<Vec<_>>(), [8, 9]);
        assert_eq!(ids.len(), 7);

        // Each value, and the form that holds it with 100, 50 and 7: 2 bytes, 4 or a double.
        let tricky = [
            (0.0, 2),
            (100.0, 2),
            (-3.0, 2),
            (32_767.0, 2),
            (-32_768.0, 2),
            (32_768.0, 4),
            (-32_769.0, 4),
            (2_147_483_647.0, 4),
            (2_147_483_648.0, 8),
            (-0.0, 8),
            (1.25, 8),
            (1e-7, 8),
            (-2_147_483_648.0, 4),
            (f64::NAN, 8),
        ];
        for (x, bytes) in tricky {
            let mut d = Positions::from_slice(&[100.0, 50.0]);
            d.extend(&[x]);
            d.extend(&[7.0]);
            let held = match &d {
                Column32::Narrow(_) => 2,
                Column32::Wide(Column32::Narrow(_)) => 4,
                Column32::Wide(Column32::Wide(_)) => 8,
            };
            assert_eq!(held, bytes, "{x}");
            let bits: Vec<u64> = d.iter().map(f64::to_bits).collect();
            assert_eq!(bits, [100.0, 50.0, x, 7.0].map(f64::to_bits), "{x}");
            assert_eq!(d.iter_from(3).map(f64::to_bits).collect::<Vec<_>>(), [7f64.to_bits()], "{x}");
        }
    }

    /// A long column widens in pieces: every value before the one that did not fit is kept,
    /// in order, through both widenings.
    #[test]
    fn a_long_column_widens_whole() {
        let short: Vec<f64> = (0..10_000).map(|k| f64::from(k % 30_000 - 700)).collect();
        let mut d = Positions::from_slice(&short);
        d.extend(&[70_000.0]);
        assert!(matches!(d, Column32::Wide(Column32::Narrow(_))));
        d.extend(&short[..5000]);
        d.extend(&[0.5]);
        assert!(matches!(d, Column32::Wide(Column32::Wide(_))));
        let expected: Vec<u64> =
            short.iter().chain(&[70_000.0]).chain(&short[..5000]).chain(&[0.5]).map(|x| x.to_bits()).collect();
        assert_eq!(d.iter().map(f64::to_bits).collect::<Vec<_>>(), expected);
        assert_eq!(d.len(), expected.len());
    }

    #[test]
    fn small_deltas_give_back_every_value_bit_for_bit() {
        let values =
            [100.0, 0.0, -0.0, 65_534.0, 65_535.0, 65_536.0, 1.5, -3.0, 1e-7, f64::NAN, 7.0, 1e12, f64::INFINITY, 2.0];
        let d: SmallDeltas = values.iter().copied().collect();
        let bits: Vec<u64> = d.iter().map(f64::to_bits).collect();
        assert_eq!(bits, values.map(f64::to_bits));
        // Two bytes each for 100, 0, 65,534, 7 and 2; the other nine beside them, in order.
        assert_eq!((d.small.len(), d.other.len()), (14, 9));
        assert_eq!(
            d.other[..3].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            [(-0.0f64).to_bits(), 65_535f64.to_bits(), 65_536f64.to_bits()]
        );
        // Added to, read from where the first values ended.
        let mut e: SmallDeltas = values[..5].iter().copied().collect();
        let mark = e.end();
        e.extend(&values[5..]);
        let since: Vec<u64> = e.iter_since(mark).map(f64::to_bits).collect();
        let want: Vec<u64> = values[5..].iter().map(|x| x.to_bits()).collect();
        assert_eq!((since, e.len()), (want, values.len()));
    }
}
