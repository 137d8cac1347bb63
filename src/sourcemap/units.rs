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
    chars: std::str::Chars<'a>,
    /// The low half of a pair whose high half was taken.
    pending: Option<u16>,
    peeked: Option<Option<u16>>,
}

impl<'a> Units<'a> {
    pub(super) fn new(s: &'a str) -> Units<'a> {
        Units { chars: s.chars(), pending: None, peeked: None }
    }

    fn pull(&mut self) -> Option<u16> {
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

    pub(super) fn peek(&mut self) -> Option<u16> {
        if self.peeked.is_none() {
            self.peeked = Some(self.pull());
        }
        self.peeked.expect("just set")
    }

    pub(super) fn next(&mut self) -> Option<u16> {
        match self.peeked.take() {
            Some(u) => u,
            None => self.pull(),
        }
    }

    /// At the end, or at `,` or `;`.
    pub(super) fn at_separator(&mut self) -> bool {
        matches!(self.peek(), None | Some(0x2C) | Some(0x3B))
    }

    /// `TokenIterator.nextVLQ`, with JavaScript's arithmetic: digits summed as 32-bit shifts
    /// (a shift past 31 wraps), the sign taken from the 32-bit value. A unit outside the
    /// table's 123 codes ends the number; a unit inside it that is no Base64 digit (but `A`)
    /// is an error.
    pub(super) fn vlq(&mut self) -> Result<i64, String> {
        let mut result = 0f64;
        let mut shift = 0u32;
        loop {
            let Some(u) = self.next() else {
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
            result += f64::from(((digit & 31) as i32).wrapping_shl(shift & 31));
            shift += 5;
            if digit & 32 == 0 {
                break;
            }
        }
        let v = to_int32(result);
        let magnitude = i64::from(v >> 1);
        Ok(if v & 1 == 1 { -magnitude } else { magnitude })
    }
}

/// The Base64 digit of a code unit (`A` is 0).
pub(super) fn base64(u: u16) -> Option<u32> {
    let c = u8::try_from(u).ok()?;
    Some(match c {
        b'A'..=b'Z' => u32::from(c - b'A'),
        b'a'..=b'z' => u32::from(c - b'a') + 26,
        b'0'..=b'9' => u32::from(c - b'0') + 52,
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
