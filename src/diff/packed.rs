//! A thread's calls packed for a comparison: `diff` holds every call of both sides at once,
//! and at 64 bytes a call (its record, its stack and weight) a diff of a 5 GB trace held 330 MB
//! a side.
//!
//! Each call is stored against the one before it: a header byte, then what the header does not
//! give. A time is a whole number of µs (from the call before for a start) when adding it back
//! gives the same `f64` bit for bit, else its 8 bytes; ids and depths are zigzag varints, the
//! sample index a step from the one before. Every block of [`BLOCK`] calls starts afresh, so
//! that a call is read by decoding at most a block.

use super::CallRecord;
use crate::model::entries::{get_f64, get_varint, put_f64, put_varint, whole_step};
use crate::tree::StackId;

/// Calls a block holds.
const BLOCK: usize = 16;

// The header's flags.
/// Start: its 8 bytes (else a whole step from the call before).
const TS_RAW: u8 = 1;
/// Duration: its 8 bytes (else a whole number).
const DUR_RAW: u8 = 1 << 1;
/// Self time: none.
const SELF_NONE: u8 = 1 << 2;
/// Self time: its 8 bytes (else a whole number).
const SELF_RAW: u8 = 1 << 3;
/// Depth: none.
const DEPTH_NONE: u8 = 1 << 4;
/// Weight: the self time's bits.
const WEIGHT_SELF: u8 = 1 << 5;
/// Weight: 0 (else its 8 bytes).
const WEIGHT_ZERO: u8 = 1 << 6;

/// Room for any call: the header, three times (a varint `u64`, 10 bytes at most, or 8), four
/// zigzag varints (two of 64 bits, two of 32), the stack (a varint `u32`) and a weight.
const MAX_CALL: usize = 1 + 3 * 10 + 2 * 10 + 2 * 5 + 5 + 8;

/// One call as [`CallList`] holds it: its record, and its stack and self weight among the
/// thread's stacks of functions.
#[derive(Debug, Clone, Copy)]
pub(super) struct PackedCall {
    pub record: CallRecord,
    pub stack: StackId,
    pub weight: f64,
}

/// Calls in order, packed (see the module's comment).
#[derive(Debug, Clone, Default)]
pub(super) struct CallList {
    bytes: Vec<u8>,
    /// Where each block starts in `bytes`.
    blocks: Vec<usize>,
    len: usize,
    /// What the next call is stored against: the last one's start and sample index.
    prev: (f64, i64),
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// A whole number that reads back as `x` bit for bit (not −0), when there is one.
fn whole(x: f64) -> Option<u64> {
    whole_step(0.0, x)
}

impl CallList {
    /// How many calls there are.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Adds `c` after the others.
    pub(super) fn push(&mut self, c: PackedCall) {
        if self.len.is_multiple_of(BLOCK) {
            self.blocks.push(self.bytes.len());
            self.prev = (0.0, 0);
        }
        let r = &c.record;
        let (mut out, mut n) = ([0u8; MAX_CALL], 1);
        let mut head = 0;
        match whole_step(self.prev.0, r.ts) {
            Some(k) => put_varint(&mut out, &mut n, k),
            None => {
                head |= TS_RAW;
                put_f64(&mut out, &mut n, r.ts);
            }
        }
        match whole(r.dur) {
            Some(k) => put_varint(&mut out, &mut n, k),
            None => {
                head |= DUR_RAW;
                put_f64(&mut out, &mut n, r.dur);
            }
        }
        if r.self_time.is_nan() {
            head |= SELF_NONE;
        } else if let Some(k) = whole(r.self_time) {
            put_varint(&mut out, &mut n, k);
        } else {
            head |= SELF_RAW;
            put_f64(&mut out, &mut n, r.self_time);
        }
        if r.depth == i32::MIN {
            head |= DEPTH_NONE;
        } else {
            put_varint(&mut out, &mut n, zigzag(r.depth.into()));
        }
        put_varint(&mut out, &mut n, zigzag(r.node_depth.into()));
        put_varint(&mut out, &mut n, zigzag(r.node_id));
        put_varint(&mut out, &mut n, zigzag(r.sample_index.wrapping_sub(self.prev.1)));
        // ROOT (u32::MAX) as 0.
        put_varint(&mut out, &mut n, u64::from((c.stack.index() as u32).wrapping_add(1)));
        if c.weight.to_bits() == r.self_time.to_bits() {
            head |= WEIGHT_SELF;
        } else if c.weight.to_bits() == 0 {
            head |= WEIGHT_ZERO;
        } else {
            put_f64(&mut out, &mut n, c.weight);
        }
        out[0] = head;
        self.bytes.extend_from_slice(&out[..n]);
        self.prev = (r.ts, r.sample_index);
        self.len += 1;
    }

    /// The calls in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = PackedCall> + '_ {
        let (mut k, mut at, mut prev) = (0, 0, (0.0, 0));
        std::iter::from_fn(move || {
            (k < self.len).then(|| {
                if k.is_multiple_of(BLOCK) {
                    prev = (0.0, 0);
                }
                let c = unpack(&self.bytes, &mut at, prev);
                prev = (c.record.ts, c.record.sample_index);
                k += 1;
                c
            })
        })
    }

    /// Call `k` (decoding at most a block).
    pub(super) fn get(&self, k: usize) -> PackedCall {
        assert!(k < self.len, "call {k} of {}", self.len);
        let mut at = self.blocks[k / BLOCK];
        let mut prev = (0.0, 0);
        for _ in 0..k % BLOCK {
            let c = unpack(&self.bytes, &mut at, prev);
            prev = (c.record.ts, c.record.sample_index);
        }
        unpack(&self.bytes, &mut at, prev)
    }

    /// Frees what `push` reserved beyond the calls.
    pub(super) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.blocks.shrink_to_fit();
    }
}

impl FromIterator<PackedCall> for CallList {
    fn from_iter<I: IntoIterator<Item = PackedCall>>(iter: I) -> CallList {
        let mut list = CallList::default();
        iter.into_iter().for_each(|c| list.push(c));
        list
    }
}

/// The call at `at` in `bytes`, packed after one that started at `prev.0` with sample index
/// `prev.1`.
fn unpack(bytes: &[u8], at: &mut usize, prev: (f64, i64)) -> PackedCall {
    let head = bytes[*at];
    *at += 1;
    let ts = if head & TS_RAW == 0 { prev.0 + get_varint(bytes, at) as f64 } else { get_f64(bytes, at) };
    let dur = if head & DUR_RAW == 0 { get_varint(bytes, at) as f64 } else { get_f64(bytes, at) };
    let self_time = if head & SELF_NONE != 0 {
        f64::NAN
    } else if head & SELF_RAW == 0 {
        get_varint(bytes, at) as f64
    } else {
        get_f64(bytes, at)
    };
    let depth = if head & DEPTH_NONE != 0 { i32::MIN } else { unzigzag(get_varint(bytes, at)) as i32 };
    let node_depth = unzigzag(get_varint(bytes, at)) as i32;
    let node_id = unzigzag(get_varint(bytes, at));
    let sample_index = prev.1.wrapping_add(unzigzag(get_varint(bytes, at)));
    let stack = StackId::new((get_varint(bytes, at) as u32).wrapping_sub(1) as usize);
    let weight = if head & WEIGHT_SELF != 0 {
        self_time
    } else if head & WEIGHT_ZERO != 0 {
        0.0
    } else {
        get_f64(bytes, at)
    };
    PackedCall { record: CallRecord { ts, dur, self_time, node_id, sample_index, depth, node_depth }, stack, weight }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::entries::EXACT;

    /// Every call reads back bit for bit, in order and one at a time, whatever its fields:
    /// whole and fractional times, a start before the call it follows, −0, NaN, infinities,
    /// the extremes of every integer, no self time or depth, any weight.
    #[test]
    fn calls_read_back_exactly() {
        let times = [
            0.0,
            -0.0,
            1.0,
            250_001_000_183.0,
            250_001_000_183.5,
            0.1 + 0.2,
            -17.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            EXACT,
            EXACT * 2.0,
        ];
        let ints = [0i64, 1, -1, 2_757, i64::MAX, i64::MIN, i64::from(i32::MAX), i64::from(i32::MIN)];
        let stacks = [StackId::new(0), StackId::new(1), StackId::new(300_000), StackId::ROOT];
        let mut all = Vec::new();
        let mut k = 0usize;
        for &ts in &times {
            for &dur in &times {
                for self_time in [f64::NAN, dur, 0.5, -0.0] {
                    let weight = [self_time, 0.0, -0.0, 3.25, f64::NAN][k % 5];
                    let i = |j: usize| ints[(k + j) % ints.len()];
                    let record = CallRecord {
                        ts,
                        dur,
                        self_time,
                        node_id: i(0),
                        sample_index: i(3),
                        depth: if k.is_multiple_of(3) { i32::MIN } else { i(1) as i32 },
                        node_depth: i(2) as i32,
                    };
                    all.push(PackedCall { record, stack: stacks[k % stacks.len()], weight });
                    k += 1;
                }
            }
        }
        // Runs of calls a few µs apart on successive samples, the common case.
        for j in 0..100i64 {
            let ts = 250_001_300_154.0 + (j * 113) as f64;
            let record = CallRecord {
                ts,
                dur: 76.0,
                self_time: 76.0,
                node_id: 600 + j % 7,
                sample_index: 2_757 + j,
                depth: 4,
                node_depth: 1,
            };
            all.push(PackedCall { record, stack: StackId::new(j as usize), weight: 76.0 });
        }
        let mut list = CallList::default();
        all.iter().for_each(|&c| list.push(c));
        let bits = |c: &PackedCall| {
            let r = &c.record;
            (
                [r.ts, r.dur, r.self_time, c.weight].map(f64::to_bits),
                [r.node_id, r.sample_index, r.depth.into(), r.node_depth.into()],
                c.stack,
            )
        };
        assert_eq!(list.len(), all.len());
        let back: Vec<PackedCall> = list.iter().collect();
        assert_eq!(back.len(), all.len());
        for (k, (a, b)) in all.iter().zip(&back).enumerate() {
            assert_eq!(bits(a), bits(b), "call {k} in order");
            assert_eq!(bits(a), bits(&list.get(k)), "call {k} alone");
        }
        // The common case takes a few bytes a call.
        let mut runs = CallList::default();
        all[all.len() - 100..].iter().for_each(|&c| runs.push(c));
        assert!(runs.bytes.len() <= 100 * 12, "{} bytes", runs.bytes.len());
    }
}
