//! What JavaScript makes of a map's text: strings as UTF-16 code units read one at a time with
//! their VLQ numbers (DevTools' `TokenIterator`), and `String(v)` of a JSON value.

use serde_json::Value;

/// JavaScript's `String(v)` for the JSON values a map may hold where a string belongs.
pub(super) fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), crate::js::number_to_string),
        Value::Array(a) => {
            a.iter().map(|x| if x.is_null() { String::new() } else { js_string(x) }).collect::<Vec<_>>().join(",")
        }
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// A string as JavaScript reads it (mappings, scope data): UTF-16 code units, one at a time.
pub(super) struct Units<'a> {
    /// The string's bytes, read one unit each while `ascii` (a map's mappings always are).
    bytes: &'a [u8],
    at: usize,
    ascii: bool,
    chars: std::str::Chars<'a>,
    /// The low half of a pair whose high half was taken.
    pending: Option<u16>,
    peeked: Option<Option<u16>>,
}

impl<'a> Units<'a> {
    pub(super) fn new(s: &'a str) -> Units<'a> {
        Units { bytes: s.as_bytes(), at: 0, ascii: s.is_ascii(), chars: s.chars(), pending: None, peeked: None }
    }

    fn pull(&mut self) -> Option<u16> {
        if self.ascii {
            let b = self.bytes.get(self.at).copied()?;
            self.at += 1;
            return Some(u16::from(b));
        }
        if let Some(u) = self.pending.take() {
            return Some(u);
        }
        let c = self.chars.next()?;
        let mut buf = [0u16; 2];
        let units = c.encode_utf16(&mut buf);
        if units.len() == 2 {
            self.pending = Some(units[1]);
        }
        Some(units[0])
    }

    fn peek_unit(&mut self) -> Option<u16> {
        if self.ascii && self.peeked.is_none() {
            return self.bytes.get(self.at).map(|&b| u16::from(b));
        }
        if self.peeked.is_none() {
            self.peeked = Some(self.pull());
        }
        self.peeked.expect("just set")
    }

    fn next_unit(&mut self) -> Option<u16> {
        match self.peeked.take() {
            Some(u) => u,
            None => self.pull(),
        }
    }
}

/// [`CodeUnits::vlq`].
fn general_vlq(it: &mut (impl CodeUnits + ?Sized)) -> Result<i64, String> {
    // Each digit adds less than 2^31 in magnitude: the sum is an exact integer in an i64,
    // and in JavaScript's double up to 2^53, which 2^22 digits cannot pass; past that many
    // the sum goes on as a double, rounding as JavaScript's does.
    const EXACT_DIGITS: u32 = 1 << 22;
    let mut exact = 0i64;
    let mut rounded: Option<f64> = None;
    let mut digits = 0u32;
    loop {
        let Some(u) = it.next() else {
            return Err("unexpected end of input while decoding VLQ number".to_owned());
        };
        let digit = match base64(u) {
            Some(d) => d,
            None if u < 123 => {
                return Err(format!(
                    "unexpected char {:?} encountered while decoding",
                    char::from_u32(u32::from(u)).unwrap_or('?')
                ))
            }
            None => 0,
        };
        let term = ((digit & 31) as i32).wrapping_shl((digits * 5) & 31);
        match &mut rounded {
            Some(r) => *r += f64::from(term),
            None if digits < EXACT_DIGITS => exact += i64::from(term),
            None => rounded = Some(exact as f64 + f64::from(term)),
        }
        digits += 1;
        if digit & 32 == 0 {
            break;
        }
    }
    // ToInt32 of an integer below 2^63 is its low 32 bits.
    let v = match rounded {
        Some(r) => to_int32(r),
        None => exact as i32,
    };
    let magnitude = i64::from(v >> 1);
    Ok(if v & 1 == 1 { -magnitude } else { magnitude })
}

/// A string's UTF-16 code units read one at a time, and the VLQ numbers they spell.
pub(super) trait CodeUnits {
    /// The next unit, left to read.
    fn peek(&mut self) -> Option<u16>;

    /// The next unit, read.
    fn next(&mut self) -> Option<u16>;

    /// At the end, or at `,` or `;`.
    fn at_separator(&mut self) -> bool {
        matches!(self.peek(), None | Some(0x2C) | Some(0x3B))
    }

    /// `TokenIterator.nextVLQ`, with JavaScript's arithmetic: digits summed as 32-bit shifts
    /// (a shift past 31 wraps), the sign taken from the 32-bit value. A unit outside the
    /// table's 123 codes ends the number; a unit inside it that is no Base64 digit (but `A`)
    /// is an error.
    fn vlq(&mut self) -> Result<i64, String> {
        general_vlq(self)
    }
}

impl CodeUnits for Units<'_> {
    fn peek(&mut self) -> Option<u16> {
        self.peek_unit()
    }

    fn next(&mut self) -> Option<u16> {
        self.next_unit()
    }
}

/// An ASCII string's units: its bytes (a map's mappings always are), read without
/// [`Units`]' checks, which were most of decoding a large map's mappings.
pub(super) struct Ascii<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Ascii<'a> {
    /// None when `s` is not ASCII.
    pub(super) fn new(s: &'a str) -> Option<Ascii<'a>> {
        s.is_ascii().then_some(Ascii { bytes: s.as_bytes(), at: 0 })
    }
}

impl CodeUnits for Ascii<'_> {
    #[inline]
    fn peek(&mut self) -> Option<u16> {
        self.bytes.get(self.at).map(|&b| u16::from(b))
    }

    #[inline]
    fn next(&mut self) -> Option<u16> {
        let b = self.bytes.get(self.at)?;
        self.at += 1;
        Some(u16::from(*b))
    }

    /// A number of up to six Base64 digits (30 bits, where no shift wraps: nearly every number
    /// of a map) read by table; any other, from its start, as [`CodeUnits::vlq`] reads it.
    fn vlq(&mut self) -> Result<i64, String> {
        let start = self.at;
        let mut sum = 0i32;
        for k in 0..6 {
            let Some(&d) = self.bytes.get(self.at).map(|&b| &DIGITS[usize::from(b)]) else { break };
            if d == NOT_A_DIGIT {
                break;
            }
            self.at += 1;
            sum |= i32::from(d & 31) << (5 * k);
            if d & 32 == 0 {
                let magnitude = i64::from(sum >> 1);
                return Ok(if sum & 1 == 1 { -magnitude } else { magnitude });
            }
        }
        self.at = start;
        general_vlq(self)
    }
}

/// What [`DIGITS`] holds for a byte that is no Base64 digit.
const NOT_A_DIGIT: u8 = 0xff;

/// Each byte's Base64 digit.
static DIGITS: [u8; 256] = {
    let mut t = [NOT_A_DIGIT; 256];
    let mut c = 0;
    while c < 256 {
        if let Some(d) = base64(c as u16) {
            t[c] = d as u8;
        }
        c += 1;
    }
    t
};

/// The Base64 digit of a code unit (`A` is 0).
pub(super) const fn base64(u: u16) -> Option<u32> {
    if u > 0xff {
        return None;
    }
    let c = u as u8;
    Some(match c {
        b'A'..=b'Z' => (c - b'A') as u32,
        b'a'..=b'z' => (c - b'a') as u32 + 26,
        b'0'..=b'9' => (c - b'0') as u32 + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    })
}

/// ECMAScript's ToInt32.
pub(super) fn to_int32(x: f64) -> i32 {
    if !x.is_finite() {
        return 0;
    }
    let m = x.trunc().rem_euclid(4_294_967_296.0);
    (m as u64 as u32) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `nextVLQ` as JavaScript computes it: every digit's 32-bit shift summed as a double.
    fn vlq_in_doubles(s: &str) -> i64 {
        let (mut result, mut shift) = (0f64, 0u32);
        for u in s.encode_utf16() {
            let digit = base64(u).unwrap_or(0);
            result += f64::from(((digit & 31) as i32).wrapping_shl(shift & 31));
            shift += 5;
            if digit & 32 == 0 {
                break;
            }
        }
        let v = to_int32(result);
        let magnitude = i64::from(v >> 1);
        if v & 1 == 1 {
            -magnitude
        } else {
            magnitude
        }
    }

    proptest! {
        #[test]
        fn vlq_sums_as_javascript_does(digits in proptest::collection::vec(0u32..64, 0..40), last in 0u32..32) {
            const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut s: String = digits.iter().map(|&d| B64[(d | 32) as usize] as char).collect();
            s.push(B64[last as usize] as char);
            prop_assert_eq!(Units::new(&s).vlq(), Ok(vlq_in_doubles(&s)));
            // Read as bytes (by table up to six digits), the same number, ending at its end.
            let then = format!("{s},");
            let mut bytes = Ascii::new(&then).unwrap();
            prop_assert_eq!(bytes.vlq(), Ok(vlq_in_doubles(&s)));
            prop_assert_eq!(bytes.next(), Some(u16::from(b',')));
            // The same number in a string that is not ASCII, read one code unit at a time.
            let wide = format!("{s},é");
            prop_assert_eq!(Units::new(&wide).vlq(), Ok(vlq_in_doubles(&s)));
        }
    }

    #[test]
    fn a_number_of_millions_of_digits_sums_as_javascript_does() {
        // 2^22 + 9 digits: the last ones are summed as a double.
        let mut s = "/".repeat((1 << 22) + 8);
        s.push('f');
        assert_eq!(Units::new(&s).vlq(), Ok(vlq_in_doubles(&s)));
    }
}
