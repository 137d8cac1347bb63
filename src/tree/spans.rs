//! A thread's spans packed into a few bytes each: a large trace has tens of millions of them,
//! and at 32 bytes a span they were most of what the exports that draw them held.
//!
//! Each span is stored against the end of the one before it: a header byte, its stack, then
//! whatever of its start, end and weight the header does not give. A time is stored as a whole
//! number of µs from the time it follows when adding that number back gives the same `f64`, bit
//! for bit, else as its 8 bytes: every span reads back exactly as it was pushed.

use super::{Span, StackId};
use crate::model::entries::{get_f64, get_varint, put_f64, put_varint, whole_step};

/// Spans in time order, packed (see the module's comment). The last one is kept whole, so
/// that a span that goes on can still grow ([`Spans::last_mut`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spans {
    bytes: Vec<u8>,
    /// How many spans `bytes` holds.
    packed: usize,
    /// The end of the last span in `bytes` (0 before the first).
    packed_end: f64,
    /// The last span, not packed yet.
    last: Option<Span>,
}

/// Where a span of [`Spans`] is: its packed bytes' offset, and the end of the span before it,
/// which they are read against. (For the command's own pieces of output: not part of the API.)
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpanCursor {
    at: usize,
    end: f64,
}

// The header's fields.
/// Start: the end of the span before.
const START_AT_END: u8 = 0;
/// Start: that end plus a whole number.
const START_AFTER: u8 = 1;
/// Start: that end minus a whole number.
const START_BEFORE: u8 = 2;
/// Start: its 8 bytes.
const START_RAW: u8 = 3;
/// End: its 8 bytes (else the start plus a whole number).
const END_RAW: u8 = 1 << 2;
/// Weight: 1 (else the end minus the start).
const WEIGHT_ONE: u8 = 1 << 3;
/// Weight: its 8 bytes.
const WEIGHT_RAW: u8 = 2 << 3;
const WEIGHT_MASK: u8 = 3 << 3;

/// Room for any span: the header, the stack (a varint `u32`), a start and an end (a varint
/// `u64`, 10 bytes at most, or 8) and a weight (8).
const MAX_SPAN: usize = 1 + 5 + 10 + 10 + 8;

impl Spans {
    /// No spans.
    pub fn new() -> Spans {
        Spans::default()
    }

    /// How many spans there are.
    pub fn len(&self) -> usize {
        self.packed + usize::from(self.last.is_some())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `s` after the others.
    pub fn push(&mut self, s: Span) {
        if let Some(prev) = self.last.replace(s) {
            self.pack(prev);
        }
    }

    /// The first span.
    pub fn first(&self) -> Option<Span> {
        self.iter().next()
    }

    /// The last span.
    pub fn last(&self) -> Option<Span> {
        self.last
    }

    /// The last span, to change in place.
    pub fn last_mut(&mut self) -> Option<&mut Span> {
        self.last.as_mut()
    }

    /// The spans in order.
    pub fn iter(&self) -> impl Iterator<Item = Span> + '_ {
        self.iter_from(SpanCursor::default())
    }

    /// The spans from the one `from` is at on (from [`Spans::cursors`]).
    #[doc(hidden)]
    pub fn iter_from(&self, from: SpanCursor) -> impl Iterator<Item = Span> + '_ {
        let SpanCursor { mut at, mut end } = from;
        let bytes = &self.bytes[..];
        std::iter::from_fn(move || {
            (at < bytes.len()).then(|| {
                let s = unpack(bytes, &mut at, end);
                end = s.end;
                s
            })
        })
        .chain(self.last)
    }

    /// Where the first span and every `every`-th after it are, to read on from there
    /// ([`Spans::iter_from`]): a long run of spans read in pieces.
    #[doc(hidden)]
    pub fn cursors(&self, every: usize) -> Vec<SpanCursor> {
        let every = every.max(1);
        let mut out = Vec::with_capacity(self.len().div_ceil(every));
        let (mut at, mut end, mut k) = (0, 0.0, 0usize);
        while at < self.bytes.len() {
            if k.is_multiple_of(every) {
                out.push(SpanCursor { at, end });
            }
            end = unpack(&self.bytes, &mut at, end).end;
            k += 1;
        }
        if self.last.is_some() && k.is_multiple_of(every) {
            out.push(SpanCursor { at, end });
        }
        out
    }

    /// Keeps the spans for which `f` (which may change them) says true, in order.
    pub fn retain_mut(&mut self, mut f: impl FnMut(&mut Span) -> bool) {
        let old = std::mem::take(self);
        for mut s in old.iter() {
            if f(&mut s) {
                self.push(s);
            }
        }
    }

    fn pack(&mut self, s: Span) {
        // Made on the stack, then added at once.
        let (mut out, mut n) = ([0u8; MAX_SPAN], 1);
        // The stack, ROOT (u32::MAX) as 0.
        put_varint(&mut out, &mut n, u64::from(s.stack.0.wrapping_add(1)));
        let prev = self.packed_end;
        let mut head = if s.start.to_bits() == prev.to_bits() {
            START_AT_END
        } else if let Some(k) = whole_step(prev, s.start) {
            put_varint(&mut out, &mut n, k);
            START_AFTER
        } else if let Some(k) = whole_step(s.start, prev).filter(|&k| (prev - k as f64).to_bits() == s.start.to_bits())
        {
            put_varint(&mut out, &mut n, k);
            START_BEFORE
        } else {
            put_f64(&mut out, &mut n, s.start);
            START_RAW
        };
        match whole_step(s.start, s.end) {
            Some(k) => put_varint(&mut out, &mut n, k),
            None => {
                head |= END_RAW;
                put_f64(&mut out, &mut n, s.end);
            }
        }
        if s.weight.to_bits() == 1f64.to_bits() {
            head |= WEIGHT_ONE;
        } else if s.weight.to_bits() != (s.end - s.start).to_bits() {
            head |= WEIGHT_RAW;
            put_f64(&mut out, &mut n, s.weight);
        }
        out[0] = head;
        self.bytes.extend_from_slice(&out[..n]);
        self.packed += 1;
        self.packed_end = s.end;
    }
}

/// The span at `at` in `bytes`, packed after a span that ended at `end`.
fn unpack(bytes: &[u8], at: &mut usize, end: f64) -> Span {
    let head = bytes[*at];
    *at += 1;
    let stack = StackId((get_varint(bytes, at) as u32).wrapping_sub(1));
    let start = match head & 3 {
        START_AT_END => end,
        START_AFTER => end + get_varint(bytes, at) as f64,
        START_BEFORE => end - get_varint(bytes, at) as f64,
        _ => get_f64(bytes, at),
    };
    let end = if head & END_RAW == 0 { start + get_varint(bytes, at) as f64 } else { get_f64(bytes, at) };
    let weight = match head & WEIGHT_MASK {
        0 => end - start,
        WEIGHT_ONE => 1.0,
        _ => get_f64(bytes, at),
    };
    Span { start, end, stack, weight }
}

impl FromIterator<Span> for Spans {
    fn from_iter<I: IntoIterator<Item = Span>>(iter: I) -> Spans {
        let mut spans = Spans::new();
        iter.into_iter().for_each(|s| spans.push(s));
        spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::entries::EXACT;

    /// Every span reads back bit for bit, whatever its times: whole, fractional, before the
    /// span it follows, negative zero, NaN, infinite, huge.
    #[test]
    fn spans_read_back_exactly() {
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
            f64::NAN,
            EXACT,
            EXACT * 2.0,
            123_456_789.000_001,
        ];
        let stacks = [StackId::new(0), StackId::new(1), StackId::new(300_000), StackId::ROOT];
        let mut all = Vec::new();
        let mut k = 0usize;
        for &a in &times {
            for &b in &times {
                for w in [f64::NAN, 1.0, 2.5, -0.0] {
                    let weight = if w.is_nan() && k.is_multiple_of(2) { b - a } else { w };
                    all.push(Span { start: a, end: b, stack: stacks[k % stacks.len()], weight });
                    k += 1;
                }
            }
        }
        // Runs of abutting whole-µs spans too, the common case.
        for j in 0..100u32 {
            let start = 1_000.0 + f64::from(j * 7);
            all.push(Span { start, end: start + 7.0, stack: StackId::new(j as usize), weight: 7.0 });
        }
        let spans: Spans = all.iter().copied().collect();
        assert_eq!(spans.len(), all.len());
        let back: Vec<Span> = spans.iter().collect();
        assert_eq!(back.len(), all.len());
        for (x, y) in back.iter().zip(&all) {
            assert_eq!(
                (x.start.to_bits(), x.end.to_bits(), x.stack, x.weight.to_bits()),
                (y.start.to_bits(), y.end.to_bits(), y.stack, y.weight.to_bits()),
                "{y:?}"
            );
        }
        assert_eq!(spans.first().map(|s| s.start.to_bits()), Some(all[0].start.to_bits()));
        // The abutting whole-µs spans take 4 bytes or less each.
        let run: Spans = all[all.len() - 100..].iter().copied().collect();
        assert!(run.bytes.len() <= 4 * 99, "{} bytes", run.bytes.len());
    }

    /// Read on from each cursor, the spans are the ones from that place on: every span's
    /// cursor, and every third's, the last (kept unpacked) among them.
    #[test]
    fn spans_read_from_a_cursor_are_the_rest() {
        let all: Vec<Span> = (0..10)
            .map(|k| {
                let start = if k == 4 { 0.25 } else { f64::from(k * k) };
                Span { start, end: start + 1.5, stack: StackId::new(k as usize), weight: 2.0 }
            })
            .collect();
        let spans: Spans = all.iter().copied().collect();
        let bits = |s: &[Span]| s.iter().map(|s| (s.start.to_bits(), s.end.to_bits(), s.stack)).collect::<Vec<_>>();
        for every in [1, 3, 10, 11] {
            let cursors = spans.cursors(every);
            assert_eq!(cursors.len(), all.len().div_ceil(every), "{every}");
            for (k, &c) in cursors.iter().enumerate() {
                let rest: Vec<Span> = spans.iter_from(c).collect();
                assert_eq!(bits(&rest), bits(&all[k * every..]), "{every} {k}");
            }
        }
        assert_eq!(Spans::new().cursors(4), Vec::new());
    }

    #[test]
    fn retain_keeps_order_and_changes() {
        let mut spans: Spans = (0..10)
            .map(|k| Span {
                start: f64::from(k),
                end: f64::from(k) + 1.0,
                stack: StackId::new(k as usize),
                weight: 1.0,
            })
            .collect();
        spans.retain_mut(|s| {
            s.end += 0.5;
            s.stack.index() % 3 != 0
        });
        let got: Vec<(f64, f64, usize)> = spans.iter().map(|s| (s.start, s.end, s.stack.index())).collect();
        let want: Vec<(f64, f64, usize)> =
            (0..10).filter(|k| k % 3 != 0).map(|k| (f64::from(k), f64::from(k) + 1.5, k as usize)).collect();
        assert_eq!(got, want);
        assert_eq!(spans.len(), 6);
        assert_eq!(spans.last().map(|s| s.end), Some(9.5));
    }
}
