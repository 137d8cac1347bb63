//! JavaScript value semantics that the reference engine relies on.
//!
//! DevTools' trace engine is JavaScript: it compares call frames with `===`, turns script ids into
//! strings with `String(x)`, and prints numbers with `Number.prototype.toString`. Parity needs the
//! same answers, so the few JS rules that matter live here, in one place.

use std::fmt::Write as _;

use crate::strings::{StrId, Strings};

/// The first code point of the stand-ins for lone surrogates: `\\uD800`..`\\uDFFF` escapes that
/// are not half of a pair are read as U+10F800..U+10FFFF (the end of a private-use plane),
/// which a `str` can hold, and written back as the same escapes ([`write_json_string`]).
/// JavaScript keeps a lone surrogate in its strings, so DevTools reads such a name; so does
/// jscalls, telling the 2,048 of them apart.
pub(crate) const LONE_SURROGATE_BASE: u32 = 0x10F800;

/// A JSON scalar as the engine sees it after `JSON.parse`, compared with JS strict equality.
///
/// Call-frame fields are kept in this form because the engine compares them with `===`: a
/// `scriptId` of `"1"` and one of `1` are different frames in a `.cpuprofile`, and a missing
/// `lineNumber` (`undefined`) equals only another missing one. The derived `PartialEq` is exactly
/// `===`: `NaN` is unequal to itself and `0 == -0`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Scalar {
    /// The key is absent.
    #[default]
    Undefined,
    /// JSON `null`.
    Null,
    /// JSON `true` / `false`.
    Bool(bool),
    /// A JSON number.
    Num(f64),
    /// A JSON string, interned.
    Str(StrId),
}

impl Scalar {
    /// `String(x)`, as the engine applies to trace-chunk script ids.
    pub fn to_js_string(self, strings: &Strings) -> String {
        match self {
            Scalar::Undefined => "undefined".to_owned(),
            Scalar::Null => "null".to_owned(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Num(n) => number_to_string(n),
            Scalar::Str(s) => strings.get(s).to_owned(),
        }
    }

    /// `x ?? fallback` for output: the value itself unless undefined or null.
    pub fn or_null(self) -> Option<Scalar> {
        match self {
            Scalar::Undefined | Scalar::Null => None,
            v => Some(v),
        }
    }

    /// Writes the value as JSON (`undefined` is written as `null`, as `JSON.stringify` does in arrays).
    pub fn write_json(self, out: &mut String, strings: &Strings) {
        match self {
            Scalar::Undefined | Scalar::Null => out.push_str("null"),
            Scalar::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Scalar::Num(n) => write_number(out, n),
            Scalar::Str(s) => write_json_string(out, strings.get(s)),
        }
    }
}

/// `Number(s)` for a string: blank is 0, surrounding whitespace is ignored, decimal and
/// `Infinity` forms (and `0x`, `0o`, `0b` integers) are read; anything else is NaN.
pub(crate) fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [("0x", 16), ("0X", 16), ("0o", 8), ("0O", 8), ("0b", 2), ("0B", 2)] {
        if let Some(digits) = t.strip_prefix(prefix) {
            return match u128::from_str_radix(digits, radix) {
                Ok(v) if !digits.starts_with('+') => v as f64,
                _ => f64::NAN,
            };
        }
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    // Rust also reads "inf", "nan" and "infinity", which JavaScript does not.
    if t.bytes().any(|b| b.is_ascii_alphabetic() && !matches!(b, b'e' | b'E')) {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// `Number.prototype.toString()`: shortest round-trip digits, integers without a fraction,
/// exponent form outside 1e-7..1e21. `NaN` and infinities as JS spells them.
pub(crate) fn number_to_string(n: f64) -> String {
    let mut buf = ryu_js::Buffer::new();
    buf.format(n).to_owned()
}

/// A frame's line or column as jscalls reads one: a whole number, saturated to 64 bits;
/// anything else (a fraction, a non-finite number) none.
pub(crate) fn whole(n: f64) -> Option<i64> {
    (n.is_finite() && n.fract() == 0.0).then_some(n as i64)
}

/// `n` as an integer when it is whole and within ±2^53 (where every integer is exact), the
/// range where ids and times are keyed and printed as integers; -0 gives 0.
#[inline]
pub(crate) fn safe_int(n: f64) -> Option<i64> {
    // Converting there and back is the test for a whole number: it needs no call into libm, as
    // `fract` does. NaN fails it; so do infinities, by the bound.
    (n.abs() <= 9_007_199_254_740_992.0 && (n as i64) as f64 == n).then_some(n as i64)
}

/// Writes a number the way `JSON.stringify` does (non-finite numbers become `null`).
#[inline]
pub(crate) fn write_number(out: &mut String, n: f64) {
    // Whole numbers (almost every time in µs) print as integers, as JavaScript prints them.
    if let Some(i) = safe_int(n) {
        let mut buf = itoa::Buffer::new();
        out.push_str(buf.format(i));
        return;
    }
    if !n.is_finite() {
        out.push_str("null");
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.push_str(buf.format_finite(n));
}

/// Writes an integer.
#[inline]
pub(crate) fn write_int(out: &mut String, n: i64) {
    let mut buf = itoa::Buffer::new();
    out.push_str(buf.format(n));
}

/// Writes `s` as a JSON string literal, escaping as `JSON.stringify` does.
pub(crate) fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Eight bytes at a time up to the first that may need an escape.
        if let Some(word) = bytes.get(i..i + 8) {
            let flagged = escape_flags(u64::from_le_bytes(word.try_into().expect("8 bytes")));
            if flagged == 0 {
                i += 8;
                continue;
            }
            i += flagged.trailing_zeros() as usize / 8;
        }
        let b = bytes[i];
        i += 1;
        let at = i - 1;
        let esc: Option<&str> = match b {
            // U+10F800..: a lone surrogate's stand-in (`LONE_SURROGATE_BASE`), written back.
            0xF4 if bytes[at + 1] == 0x8F && bytes[at + 2] >= 0xA0 => {
                let c = s[at..].chars().next().expect("a char") as u32;
                out.push_str(&s[start..at]);
                let _ = write!(out, "\\u{:04x}", 0xD800 + (c - LONE_SURROGATE_BASE));
                i = at + 4;
                start = i;
                continue;
            }
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..at]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{:04x}", b);
            }
        }
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The high bit of each byte of `w` (8 bytes of a string, the first lowest) that is a control
/// character, `"`, `\\` or 0xF4 (where a lone surrogate's stand-in starts): where
/// [`write_json_string`] looks closer. Bytes after a flagged one may be flagged wrongly
/// (a borrow carries); the lowest flagged byte is always one of those.
fn escape_flags(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte under n sets its high bit on `x - n`; one with the high bit set already is not.
    let under = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    under(w, 0x20)
        | under(w ^ (ONES * u64::from(b'"')), 1)
        | under(w ^ (ONES * u64::from(b'\\')), 1)
        | under(w ^ (ONES * 0xF4), 1)
}

/// Text made in a `String`, as the writers above want it, and handed to `out` a block at a
/// time: a document of any size holds one block. The first write error is kept for
/// [`Spill::failed`] or [`Spill::finish`]; nothing is written after it.
pub(crate) struct Spill<'w> {
    text: String,
    out: &'w mut dyn std::io::Write,
    failed: Option<std::io::Error>,
    stopped: bool,
}

/// The block [`Spill`] hands over (a few system calls per MB).
const SPILL_AT: usize = 64 << 10;

impl<'w> Spill<'w> {
    pub(crate) fn new(out: &'w mut dyn std::io::Write) -> Spill<'w> {
        Spill { text: String::with_capacity(2 * SPILL_AT), out, failed: None, stopped: false }
    }

    /// Hands the text over once it fills a block. Writers call it between pieces that
    /// nothing later takes back.
    #[inline]
    pub(crate) fn spill(&mut self) {
        if self.text.len() >= SPILL_AT {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        if !self.stopped {
            self.failed = self.out.write_all(self.text.as_bytes()).err();
            self.stopped = self.failed.is_some();
        }
        self.text.clear();
    }

    /// Hands over the text so far, then `bytes` (text made elsewhere, e.g. on another thread).
    pub(crate) fn push_bytes(&mut self, bytes: &[u8]) {
        self.hand_over();
        if !self.stopped {
            self.failed = self.out.write_all(bytes).err();
            self.stopped = self.failed.is_some();
        }
    }

    /// The write error, once there was one (for a writer to stop early).
    pub(crate) fn failed(&mut self) -> std::io::Result<()> {
        self.failed.take().map_or(Ok(()), Err)
    }

    /// Hands over the rest; the first write error, if any.
    pub(crate) fn finish(mut self) -> std::io::Result<()> {
        self.hand_over();
        self.failed.take().map_or(Ok(()), Err)
    }
}

impl std::ops::Deref for Spill<'_> {
    type Target = String;
    fn deref(&self) -> &String {
        &self.text
    }
}

impl std::ops::DerefMut for Spill<'_> {
    fn deref_mut(&mut self) -> &mut String {
        &mut self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(number_to_string(123.0), "123");
        assert_eq!(number_to_string(-0.5), "-0.5");
        assert_eq!(number_to_string(136560196826.99998), "136560196826.99998");
        assert_eq!(number_to_string(1e21), "1e+21");
        assert_eq!(number_to_string(1.5e-7), "1.5e-7");
        assert_eq!(number_to_string(0.000001), "0.000001");
        assert_eq!(number_to_string(f64::NAN), "NaN");
        let mut s = String::new();
        for n in [
            299.99999999999994,
            -0.0,
            1e21,
            123.0,
            -5.0,
            1e-7,
            f64::INFINITY,
            f64::NAN,
            9007199254740991.0,
            -9007199254740992.0,
            4503599627370495.5,
            1e300,
        ] {
            write_number(&mut s, n);
            s.push(' ');
        }
        assert_eq!(
            s,
            "299.99999999999994 0 1e+21 123 -5 1e-7 null null 9007199254740991 -9007199254740992 4503599627370495.5 1e+300 "
        );
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        let mut s = String::new();
        write_json_string(&mut s, "a\"b\\c\n\u{1}é");
        assert_eq!(s, r#""a\"b\\c\n\u0001é""#);
        // Lone surrogates' stand-ins go back to their escapes; real astral characters stay.
        s.clear();
        write_json_string(&mut s, "x\u{10F800}\u{10FFFF}\u{1F600}\u{10F7FF}");
        assert_eq!(s, "\"x\\ud800\\udfff\u{1F600}\u{10F7FF}\"");
    }

    proptest::proptest! {
        /// Strings of every kind of character, long and short, escape as one character at a
        /// time does.
        #[test]
        fn strings_escape_a_character_at_a_time(
            chars in proptest::collection::vec(proptest::sample::select(vec![
                'a', 'Z', ' ', '~', '"', '\\', '\n', '\r', '\t', '\u{8}', '\u{c}', '\u{0}', '\u{1f}', '\u{7f}',
                'é', '€', '\u{FFFF}', '\u{1F600}', '\u{100000}', '\u{10F7FF}', '\u{10F800}', '\u{10FBFF}', '\u{10FFFF}',
            ]), 0..40),
        ) {
            let s: String = chars.iter().collect();
            let mut expected = String::from('"');
            for c in s.chars() {
                match c {
                    '"' => expected.push_str("\\\""),
                    '\\' => expected.push_str("\\\\"),
                    '\n' => expected.push_str("\\n"),
                    '\r' => expected.push_str("\\r"),
                    '\t' => expected.push_str("\\t"),
                    '\u{8}' => expected.push_str("\\b"),
                    '\u{c}' => expected.push_str("\\f"),
                    c if (c as u32) < 0x20 => expected.push_str(&format!("\\u{:04x}", c as u32)),
                    c if c as u32 >= LONE_SURROGATE_BASE => {
                        expected.push_str(&format!("\\u{:04x}", 0xD800 + (c as u32 - LONE_SURROGATE_BASE)))
                    }
                    c => expected.push(c),
                }
            }
            expected.push('"');
            let mut made = String::new();
            write_json_string(&mut made, &s);
            proptest::prop_assert_eq!(made, expected);
        }
    }

    #[test]
    fn strings_to_numbers_like_javascript() {
        let n = |s: &str| string_to_number(s);
        assert_eq!(n("109007"), 109007.0);
        assert_eq!(n("  12.5e1 "), 125.0);
        assert_eq!(n(""), 0.0);
        assert_eq!(n("0x1f"), 31.0);
        assert_eq!(n("-Infinity"), f64::NEG_INFINITY);
        for nan in ["7a", "inf", "NaN", "1e", "0x", "--1"] {
            assert!(n(nan).is_nan(), "{nan}");
        }
    }

    #[test]
    fn strict_equality() {
        assert_eq!(Scalar::Num(0.0), Scalar::Num(-0.0));
        assert_ne!(Scalar::Num(f64::NAN), Scalar::Num(f64::NAN));
        assert_ne!(Scalar::Undefined, Scalar::Null);
        assert_eq!(Scalar::Undefined, Scalar::Undefined);
    }

    #[test]
    fn spilled_text_arrives_whole_and_in_blocks() {
        let mut got = Vec::new();
        let mut want = String::new();
        let mut s = Spill::new(&mut got);
        for k in 0..50_000 {
            let piece = format!("{k},");
            s.push_str(&piece);
            want.push_str(&piece);
            s.spill();
            assert!(s.len() < SPILL_AT, "held {} bytes", s.len());
        }
        s.finish().unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), want);
    }

    #[test]
    fn spill_keeps_the_first_write_error() {
        struct Full(usize);
        impl std::io::Write for Full {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                match self.0 {
                    0 => Err(std::io::Error::other("full")),
                    room => {
                        self.0 = room.saturating_sub(buf.len());
                        Ok(buf.len().min(room))
                    }
                }
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut out = Full(SPILL_AT + 10);
        let mut s = Spill::new(&mut out);
        for _ in 0..4 {
            s.push_str(&"x".repeat(SPILL_AT));
            s.spill();
        }
        assert_eq!(s.finish().unwrap_err().to_string(), "full");
        // Taken by a writer that stops early, and not reported twice.
        let mut out = Full(0);
        let mut s = Spill::new(&mut out);
        s.push_str(&"x".repeat(SPILL_AT));
        s.spill();
        assert_eq!(s.failed().unwrap_err().to_string(), "full");
        s.push_str("more");
        assert!(s.finish().is_ok());
    }
}
