//! A thread's entries, packed while the input is read.
//!
//! Every thread's complete events are kept until the end of the input, when it is known which
//! threads have a profile; on a long recording that is most of the memory. Timestamps are
//! integers in µs almost always, and a thread's events come roughly in time order, so an entry
//! is stored as the varint difference from the previous timestamp, a varint duration and a
//! header byte: about 6 bytes instead of the 24 of an [`Entry`]. Any value that is not such an
//! integer is stored as its 8 bytes, so every `f64` comes back bit for bit.

use super::Entry;

/// [`Entry::flags`] bits (the low five, [`FLAGS`]) are kept in the header byte, with these.
const HAS_TRACE: u8 = 1 << 5;
const TS_RAW: u8 = 1 << 6;
const DUR_RAW: u8 = 1 << 7;
/// The bits of the head that hold the entry's flags.
const FLAGS: u8 = 31;

/// Append-only packed entries, with later duration changes (`E` closing a `B`) kept aside.
#[derive(Debug, Default)]
pub(crate) struct PackedEntries {
    bytes: Vec<u8>,
    len: u32,
    /// The last integer timestamp written (the base of the next difference).
    last_ts: i64,
    /// (entry index, new duration), applied in order by [`PackedEntries::into_vec`].
    patches: Vec<(u32, f64)>,
}

/// `x` as an integer when it is one that an `f64` holds exactly (not −0).
#[inline]
fn exact_int(x: f64) -> Option<i64> {
    let i = x as i64;
    (i as f64 == x && i.unsigned_abs() < 1 << 53 && (i != 0 || x.is_sign_positive())).then_some(i)
}

/// Writes `v` as a varint at `out[*at..]`, `*at` moved past it.
#[inline]
pub(crate) fn put_varint(out: &mut [u8], at: &mut usize, mut v: u64) {
    while v >= 0x80 {
        out[*at] = v as u8 | 0x80;
        *at += 1;
        v >>= 7;
    }
    out[*at] = v as u8;
    *at += 1;
}

/// The largest whole number an `f64` holds with every smaller one.
pub(crate) const EXACT: f64 = 9_007_199_254_740_992.0;

/// `to - from` as a whole number that adds back to `to` exactly, when there is one.
pub(crate) fn whole_step(from: f64, to: f64) -> Option<u64> {
    let d = to - from;
    // (`as` and back, not `fract`: that is a call to libm on the baseline x86-64.)
    let n = d as u64;
    ((0.0..EXACT).contains(&d) && n as f64 == d && (from + d).to_bits() == to.to_bits()).then_some(n)
}

/// Writes `x`'s 8 bytes (little-endian) at `out[*at..]`, `*at` moved past them.
#[inline]
pub(crate) fn put_f64(out: &mut [u8], at: &mut usize, x: f64) {
    out[*at..*at + 8].copy_from_slice(&x.to_le_bytes());
    *at += 8;
}

/// Room for any entry: the header, two varint `u64`s (10 bytes each at most, more than a raw
/// `f64`) and a varint `u32`.
const MAX_ENTRY: usize = 1 + 10 + 10 + 5;

/// The varint at `bytes[*at..]`, `*at` moved past it.
#[inline]
pub(crate) fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// The little-endian `f64` at `bytes[*at..]`, `*at` moved past it.
#[inline]
pub(crate) fn get_f64(bytes: &[u8], at: &mut usize) -> f64 {
    let v = f64::from_le_bytes(bytes[*at..*at + 8].try_into().expect("8 bytes"));
    *at += 8;
    v
}

impl PackedEntries {
    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Appends `e`; returns its index.
    #[inline]
    pub(crate) fn push(&mut self, e: Entry) -> u32 {
        // Encoded on the stack, then appended at once (a push per byte checked the capacity
        // each time).
        let mut buf = [0u8; MAX_ENTRY];
        let mut n = 1;
        let mut head = e.flags & FLAGS;
        match exact_int(e.ts) {
            Some(t) => {
                let d = t.wrapping_sub(self.last_ts);
                put_varint(&mut buf, &mut n, ((d << 1) ^ (d >> 63)) as u64);
                self.last_ts = t;
            }
            None => {
                head |= TS_RAW;
                put_f64(&mut buf, &mut n, e.ts);
            }
        }
        match exact_int(e.dur).filter(|&d| d >= 0) {
            Some(d) => put_varint(&mut buf, &mut n, d as u64),
            None => {
                head |= DUR_RAW;
                put_f64(&mut buf, &mut n, e.dur);
            }
        }
        if e.trace != 0 {
            head |= HAS_TRACE;
            put_varint(&mut buf, &mut n, u64::from(e.trace));
        }
        buf[0] = head;
        self.bytes.extend_from_slice(&buf[..n]);
        self.len += 1;
        self.len - 1
    }

    /// Sets the duration of entry `index` (as seen by [`PackedEntries::into_vec`]).
    pub(crate) fn set_dur(&mut self, index: u32, dur: f64) {
        self.patches.push((index, dur));
    }

    /// The entries, in the order they were pushed.
    pub(crate) fn into_vec(self) -> Vec<Entry> {
        let mut out = Vec::with_capacity(self.len as usize);
        let (b, mut at, mut last) = (&self.bytes[..], 0usize, 0i64);
        while at < b.len() {
            let head = b[at];
            at += 1;
            let ts = if head & TS_RAW != 0 {
                get_f64(b, &mut at)
            } else {
                let z = get_varint(b, &mut at);
                last = last.wrapping_add((z >> 1) as i64 ^ -((z & 1) as i64));
                last as f64
            };
            let dur = if head & DUR_RAW != 0 { get_f64(b, &mut at) } else { get_varint(b, &mut at) as f64 };
            let trace = if head & HAS_TRACE != 0 { get_varint(b, &mut at) as u32 } else { 0 };
            out.push(Entry { ts, dur, trace, flags: head & FLAGS });
        }
        for (i, dur) in self.patches {
            out[i as usize].dur = dur;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_comes_back_bit_for_bit() {
        let tricky = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            123_456_789_012.0,
            -987_654_321.0,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            -9_007_199_254_740_993.0,
            1e300,
            -1e-300,
            f64::MIN_POSITIVE,
            255.0,
            128.0,
            127.0,
        ];
        let mut want = Vec::new();
        let mut log = PackedEntries::default();
        for (k, &ts) in tricky.iter().enumerate() {
            for (j, &dur) in tricky.iter().enumerate() {
                let e = Entry { ts, dur, trace: ((k * 31 + j) % 5) as u32 * 70_000, flags: (j % 32) as u8 };
                assert_eq!(log.push(e) as usize, want.len());
                want.push(e);
            }
        }
        log.set_dur(3, -0.0);
        want[3].dur = -0.0;
        log.set_dur(3, 42.25);
        want[3].dur = 42.25;
        log.set_dur(7, 1.0);
        want[7].dur = 1.0;
        assert_eq!(log.len(), want.len());
        let got = log.into_vec();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.ts.to_bits(), g.dur.to_bits(), g.trace, g.flags),
                (w.ts.to_bits(), w.dur.to_bits(), w.trace, w.flags),
                "{w:?}"
            );
        }
    }

    #[test]
    fn a_usual_entry_takes_a_few_bytes() {
        let mut log = PackedEntries::default();
        for k in 0..1000 {
            log.push(Entry { ts: 1_700_000_000.0 + 137.0 * k as f64, dur: 45.0, trace: 0, flags: 0 });
        }
        // 1 header + 2 (the difference) + 1 (the duration), after the first.
        assert!(log.bytes.len() < 4 * 1000 + 16, "{} bytes", log.bytes.len());
    }
}
