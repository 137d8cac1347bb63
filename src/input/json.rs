//! JSON primitives for the hand-written scanners: whitespace, strings (searched sixteen bytes
//! at a time), numbers (digits eight at a time), literals, keys, and validated skipping of any
//! value, with enough checks that they accept only what `JSON.parse` accepts (balanced
//! brackets, no raw control characters in strings, well-formed escapes, numbers and literals).
//! Strings stay borrowed unless they hold escapes; invalid UTF-8 inside a kept string is
//! replaced as Node's decoder does.
//!
//! Every function returns [`Stop::Eof`] when the bytes end before the value does, so the
//! caller can read more and retry, and [`Stop::Syntax`] with an offset and an expectation.

use std::borrow::Cow;

use super::leaf::Leaf;

/// Why a scan stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The bytes ended inside the value.
    Eof,
    /// Malformed JSON at this offset (relative to the scanned slice): what was expected.
    Syntax(usize, &'static str),
}

pub(crate) type R<T> = Result<T, Stop>;

#[inline]
pub(crate) fn at(b: &[u8], i: usize) -> R<u8> {
    b.get(i).copied().ok_or(Stop::Eof)
}

/// Skips JSON whitespace.
#[inline]
pub fn ws(b: &[u8], mut i: usize) -> usize {
    // Whitespace bytes are all at most b' ': most calls find none and stop at one comparison.
    while let Some(&c) = b.get(i) {
        if c > b' ' || !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
            break;
        }
        i += 1;
    }
    i
}

/// The end of a string whose opening quote is at `i - 1`: (index of the closing quote, escapes?).
#[inline(always)]
pub(crate) fn string_end(b: &[u8], i: usize) -> R<(usize, bool)> {
    // Most strings have no escapes: their first special byte is the closing quote.
    let j = special(b, i);
    if b.get(j) == Some(&b'"') {
        return Ok((j, false));
    }
    string_end_slow(b, j)
}

/// [`string_end`] from the first special byte `i` on: escapes, errors, the end of the bytes.
#[inline(never)]
pub(crate) fn string_end_slow(b: &[u8], mut i: usize) -> R<(usize, bool)> {
    let mut escaped = false;
    loop {
        let j = special(b, i);
        match b.get(j) {
            None => return Err(Stop::Eof),
            Some(b'"') => return Ok((j, escaped)),
            Some(b'\\') => {
                escaped = true;
                match at(b, j + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i = j + 2,
                    b'u' => {
                        for d in 0..4 {
                            if !at(b, j + 2 + d)?.is_ascii_hexdigit() {
                                return Err(Stop::Syntax(j + 2 + d, "four hex digits after \\u"));
                            }
                        }
                        i = j + 6;
                    }
                    _ => return Err(Stop::Syntax(j + 1, "a valid escape after '\\'")),
                }
            }
            Some(_) => return Err(Stop::Syntax(j, "a string without raw control characters")),
        }
    }
}

/// The index of the first byte at or after `i` that ends a run of plain string bytes: a quote,
/// a backslash or a control character; `b.len()` when there is none.
#[inline]
pub(crate) fn special(b: &[u8], i: usize) -> usize {
    special_in::<false>(b, i)
}

/// [`special`], stopping at non-ASCII bytes too: a string whose first stop is its closing
/// quote is then known to be ASCII without a second pass over it.
#[inline]
pub(crate) fn special_or_non_ascii(b: &[u8], i: usize) -> usize {
    special_in::<true>(b, i)
}

#[inline(always)]
pub(crate) fn special_in<const NON_ASCII: bool>(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SSE2 is part of x86_64: sixteen bytes per step.
        while i + 16 <= b.len() {
            // SAFETY: the load reads b[i..i + 16], which the loop condition keeps in bounds.
            let mask = unsafe {
                let v = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
                let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
                let slash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
                // v <= 0x1f exactly when min(v, 0x1f) == v (unsigned).
                let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
                let found = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), control));
                // The mask of bytes with their high bit set is the bytes' own.
                if NON_ASCII {
                    found | _mm_movemask_epi8(v)
                } else {
                    found
                }
            };
            if mask != 0 {
                return i + mask.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    while i < b.len() && !matches!(b[i], b'"' | b'\\' | 0..=0x1f) && !(NON_ASCII && b[i] >= 0x80) {
        i += 1;
    }
    i
}

/// The newlines in `b`, and whether all its bytes are ASCII: one pass, for the scan threads.
pub fn newlines_and_ascii(b: &[u8]) -> (u64, bool) {
    let mut n = 0u64;
    let mut i = 0;
    let mut high = 0u8;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; each load reads 16 bytes inside b[i..i + 64], kept in
        // bounds by the loop conditions.
        unsafe {
            let nl = _mm_set1_epi8(b'\n' as i8);
            let zero = _mm_setzero_si128();
            let mut any = zero;
            while i + 64 <= b.len() {
                // Per byte lane, a count of newlines (a match is -1, subtracted), summed into
                // `n` before a lane can pass 255.
                let mut lanes = zero;
                let stop = b.len().min(i + 64 * 63);
                while i + 64 <= stop {
                    let p = b.as_ptr().add(i).cast::<__m128i>();
                    let (v0, v1, v2, v3) = (
                        _mm_loadu_si128(p),
                        _mm_loadu_si128(p.add(1)),
                        _mm_loadu_si128(p.add(2)),
                        _mm_loadu_si128(p.add(3)),
                    );
                    let m01 = _mm_add_epi8(_mm_cmpeq_epi8(v0, nl), _mm_cmpeq_epi8(v1, nl));
                    let m23 = _mm_add_epi8(_mm_cmpeq_epi8(v2, nl), _mm_cmpeq_epi8(v3, nl));
                    lanes = _mm_sub_epi8(lanes, _mm_add_epi8(m01, m23));
                    any = _mm_or_si128(any, _mm_or_si128(_mm_or_si128(v0, v1), _mm_or_si128(v2, v3)));
                    i += 64;
                }
                let sums = _mm_sad_epu8(lanes, zero);
                n += (_mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums))) as u64;
            }
            if _mm_movemask_epi8(any) != 0 {
                high = 0x80;
            }
        }
    }
    for &c in &b[i..] {
        n += u64::from(c == b'\n');
        high |= c;
    }
    (n, high < 0x80)
}

/// Where each maximal sequence of bytes that is not UTF-8 starts in `b`.
pub fn invalid_utf8(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let e = std::str::from_utf8(b.get(at..)?).err()?;
        let start = at + e.valid_up_to();
        at = start + e.error_len().unwrap_or(b.len() - start).max(1);
        Some(start)
    })
}

/// The run of ASCII digits at `i`: where it ends, and its value (wrapped modulo 2^64 past 19
/// digits). Eight bytes at a time, for the timestamps (12 digits and more) that every event has.
#[inline(always)]
pub(crate) fn digits(b: &[u8], mut i: usize) -> (usize, u64) {
    // 10^n for the n digits of a partial step.
    const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
    let mut v: u64 = 0;
    while i + 8 <= b.len() {
        let word = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        // Digits become 0..=9; adding 0x76 sets the high bit of any other byte (one above 0x89
        // has it already, and its carry can only mark bytes after it): the first marked byte
        // ends the run.
        let x = word ^ 0x3030_3030_3030_3030;
        let stop = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
        let n = (stop.trailing_zeros() / 8) as usize;
        if n == 0 {
            return (i, v);
        }
        // The run's n digits moved to the top bytes (zeros before them), then combined in
        // pairs, fours and eights.
        let d = x << (8 * (8 - n));
        let d = d.wrapping_mul(10).wrapping_add(d >> 8);
        let low = 0x0000_00FF_0000_00FF;
        let d = ((d & low).wrapping_mul(100 + (1_000_000 << 32)))
            .wrapping_add(((d >> 16) & low).wrapping_mul(1 + (10_000 << 32)))
            >> 32;
        v = v.wrapping_mul(POW10[n]).wrapping_add(d);
        i += n;
        if n < 8 {
            return (i, v);
        }
    }
    while i < b.len() && b[i].is_ascii_digit() {
        v = v.wrapping_mul(10).wrapping_add((b[i] - b'0') as u64);
        i += 1;
    }
    (i, v)
}

/// The end of the number that starts at `i`.
#[inline]
pub(crate) fn number_end(b: &[u8], mut i: usize) -> R<usize> {
    if at(b, i)? == b'-' {
        i += 1;
    }
    match at(b, i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(b, i).0,
        _ => return Err(Stop::Syntax(i, "a digit")),
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if !at(b, i)?.is_ascii_digit() {
            return Err(Stop::Syntax(i, "a digit after '.'"));
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if matches!(at(b, i)?, b'+' | b'-') {
            i += 1;
        }
        if !at(b, i)?.is_ascii_digit() {
            return Err(Stop::Syntax(i, "a digit in the exponent"));
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == b.len() {
        return Err(Stop::Eof); // more digits may follow
    }
    Ok(i)
}

/// Parses the number at `i`, correctly rounded as `JSON.parse` does.
#[inline(always)]
pub fn number(b: &[u8], i: usize) -> R<(f64, usize)> {
    // Most numbers are integers: up to 19 digits fit a u64 exactly, and converting that to f64
    // rounds to nearest as JSON.parse does. Anything else (a fraction, an exponent, a leading
    // zero, more digits, the end of the bytes) takes the general path.
    let neg = b.get(i) == Some(&b'-');
    let first = i + neg as usize;
    let (k, v) = digits(b, first);
    let n = k - first;
    if (1..=19).contains(&n) && (b[first] != b'0' || n == 1) && k < b.len() && !matches!(b[k], b'.' | b'e' | b'E') {
        let f = v as f64;
        return Ok((if neg { -f } else { f }, k));
    }
    number_slow(b, i)
}

/// [`number`] for fractions, exponents, long numbers and errors.
#[inline(never)]
pub(crate) fn number_slow(b: &[u8], i: usize) -> R<(f64, usize)> {
    let end = number_end(b, i)?;
    let s = &b[i..end];
    let (neg, digits) = if s[0] == b'-' { (true, &s[1..]) } else { (false, s) };
    if digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let mut v: u64 = 0;
        for &d in digits {
            v = v * 10 + (d - b'0') as u64;
        }
        let f = v as f64;
        return Ok((if neg { -f } else { f }, end));
    }
    // Validated ASCII above; std's parser is correctly rounded.
    let text = std::str::from_utf8(s).expect("ASCII");
    Ok((text.parse::<f64>().expect("a validated JSON number"), end))
}

pub(crate) fn literal(b: &[u8], i: usize, word: &'static [u8], what: &'static str) -> R<usize> {
    for (k, &c) in word.iter().enumerate() {
        if at(b, i + k)? != c {
            return Err(Stop::Syntax(i + k, what));
        }
    }
    Ok(i + word.len())
}

/// The string at `i` (an opening quote), decoded.
#[inline(always)]
pub fn string(b: &[u8], i: usize) -> R<(Cow<'_, str>, usize)> {
    if at(b, i)? != b'"' {
        return Err(Stop::Syntax(i, "a string"));
    }
    match plain_string(b, i) {
        Some((s, e)) => Ok((Cow::Borrowed(s), e)),
        None => string_slow(b, i),
    }
}

/// The string whose quote is at `i` when it is ASCII without escapes (most are: one search,
/// which stops at the closing quote, and no decoding), and its end; None for any other.
#[inline(always)]
fn plain_string(b: &[u8], i: usize) -> Option<(&str, usize)> {
    let j = special_or_non_ascii(b, i + 1);
    if b.get(j) == Some(&b'"') {
        let body = &b[i + 1..j];
        // SAFETY: the body has no byte over 0x7f (the search stops at them): ASCII, valid UTF-8.
        return Some((unsafe { std::str::from_utf8_unchecked(body) }, j + 1));
    }
    None
}

/// [`string`] for strings with escapes or non-ASCII bytes (and for errors).
#[inline(never)]
pub(crate) fn string_slow(b: &[u8], i: usize) -> R<(Cow<'_, str>, usize)> {
    let (end, escaped) = string_end(b, i + 1)?;
    let body = &b[i + 1..end];
    let s = if escaped {
        // Rare: let serde_json decode the escapes (it is exact about surrogate pairs), after
        // giving lone surrogates their stand-ins.
        let quoted = &b[i..=end];
        let fixed = lone_surrogates_replaced(quoted);
        let quoted = fixed.as_deref().unwrap_or(quoted);
        match serde_json::from_slice::<String>(quoted) {
            Ok(s) => Cow::Owned(s),
            Err(_) => Cow::Owned(decode_lossy(quoted)),
        }
    } else {
        match std::str::from_utf8(body) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(String::from_utf8_lossy(body).into_owned()),
        }
    };
    Ok((s, end + 1))
}

use crate::js::LONE_SURROGATE_BASE;

/// `text` with every lone surrogate escape (`\\udXXX` not part of a pair) replaced by the escaped
/// pair of its stand-in ([`LONE_SURROGATE_BASE`]), or None when it has none. Everything else,
/// escapes included, is left as it is, so any JSON text can go through.
pub(crate) fn lone_surrogates_replaced(text: &[u8]) -> Option<Vec<u8>> {
    fn hex4(b: &[u8], i: usize) -> Option<u32> {
        let h = b.get(i..i + 4)?;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok().filter(|_| h.iter().all(u8::is_ascii_hexdigit))
    }
    // Fast refusal: no `\u` escape of a surrogate at all.
    if !memchr::memmem::find_iter(text, b"\\u").any(|at| matches!(text.get(at + 2), Some(b'd' | b'D'))) {
        return None;
    }
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < text.len() {
        if text[i] != b'\\' {
            i += 1;
            continue;
        }
        if text.get(i + 1) != Some(&b'u') {
            i += 2; // any other escape, `\\\\` included
            continue;
        }
        let Some(u) = hex4(text, i + 2) else {
            i += 2;
            continue;
        };
        let pair_low = (0xD800..0xDC00).contains(&u)
            && text.get(i + 6) == Some(&b'\\')
            && text.get(i + 7) == Some(&b'u')
            && hex4(text, i + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l));
        if pair_low {
            i += 12;
        } else if (0xD800..0xE000).contains(&u) {
            let c = char::from_u32(LONE_SURROGATE_BASE + (u - 0xD800)).expect("a valid code point");
            let mut units = [0u16; 2];
            c.encode_utf16(&mut units);
            let o = out.get_or_insert_with(|| Vec::with_capacity(text.len() + 16));
            o.extend_from_slice(&text[copied..i]);
            o.extend_from_slice(format!("\\u{:04x}\\u{:04x}", units[0], units[1]).as_bytes());
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    let mut o = out?;
    o.extend_from_slice(&text[copied..]);
    Some(o)
}

/// Decodes a quoted string with escapes whose bytes are not valid UTF-8, replacing bad bytes.
pub(crate) fn decode_lossy(quoted: &[u8]) -> String {
    let fixed = String::from_utf8_lossy(quoted);
    serde_json::from_str::<String>(&fixed).unwrap_or_else(|_| fixed[1..fixed.len() - 1].to_owned())
}

/// Any value at `i`, as a [`Leaf`] (objects and arrays are skipped). Always inlined: the
/// value is then built where the caller keeps it instead of being copied out of a call.
#[inline(always)]
pub fn leaf<'a>(b: &'a [u8], i: usize, depth: &mut Vec<u8>) -> R<(Leaf<'a>, usize)> {
    match at(b, i)? {
        b'"' => string(b, i).map(|(s, e)| (Leaf::Str(s), e)),
        b'-' | b'0'..=b'9' => number(b, i).map(|(n, e)| (Leaf::Num(n), e)),
        b't' => literal(b, i, b"true", "true").map(|e| (Leaf::Bool(true), e)),
        b'f' => literal(b, i, b"false", "false").map(|e| (Leaf::Bool(false), e)),
        b'n' => literal(b, i, b"null", "null").map(|e| (Leaf::Null, e)),
        b'{' => skip(b, i, depth).map(|e| (Leaf::Object, e)),
        b'[' => skip(b, i, depth).map(|e| (Leaf::Array, e)),
        _ => Err(Stop::Syntax(i, "a JSON value")),
    }
}

/// [`leaf`], setting `owns` when the value may own memory (a string that is decoded), so
/// that a caller holding many leaves can skip dropping them when none does.
#[inline(always)]
pub fn leaf_noting<'a>(b: &'a [u8], i: usize, depth: &mut Vec<u8>, owns: &mut bool) -> R<(Leaf<'a>, usize)> {
    if b.get(i) == Some(&b'"') {
        if let Some((s, e)) = plain_string(b, i) {
            return Ok((Leaf::Str(Cow::Borrowed(s)), e));
        }
        *owns = true;
        return string_slow(b, i).map(|(s, e)| (Leaf::Str(s), e));
    }
    leaf(b, i, depth)
}

/// Skips the value at `i`, validating it; returns its end. `stack` is scratch space.
pub fn skip(b: &[u8], mut i: usize, stack: &mut Vec<u8>) -> R<usize> {
    if b.get(i) == Some(&b'[') {
        if let Some(end) = int_array_end(b, i) {
            return Ok(end);
        }
    }
    stack.clear();
    loop {
        // A value.
        match at(b, i)? {
            b'"' => i = string_end(b, i + 1)?.0 + 1,
            b'-' | b'0'..=b'9' => i = number_end(b, i)?,
            b't' => i = literal(b, i, b"true", "true")?,
            b'f' => i = literal(b, i, b"false", "false")?,
            b'n' => i = literal(b, i, b"null", "null")?,
            open @ (b'{' | b'[') => {
                i = ws(b, i + 1);
                let close = if open == b'{' { b'}' } else { b']' };
                if at(b, i)? == close {
                    i += 1;
                } else {
                    stack.push(close);
                    if open == b'{' {
                        i = key(b, i)?;
                    }
                    continue;
                }
            }
            _ => return Err(Stop::Syntax(i, "a JSON value")),
        }
        // After a value: a comma, or the end of containers.
        loop {
            let Some(&close) = stack.last() else { return Ok(i) };
            i = ws(b, i);
            match at(b, i)? {
                b',' => {
                    i = ws(b, i + 1);
                    if close == b'}' {
                        i = key(b, i)?;
                    }
                    break;
                }
                c if c == close => {
                    stack.pop();
                    i += 1;
                }
                _ => {
                    return Err(Stop::Syntax(
                        i,
                        if close == b'}' { "',' or '}' in an object" } else { "',' or ']' in an array" },
                    ))
                }
            }
        }
    }
}

/// The end of the array at `i` (a `[`) when it holds only integers, with no whitespace: the
/// `lines` of every profile chunk, for one. None for anything else, which [`skip`] then reads
/// (and validates) in full.
#[inline]
pub(crate) fn int_array_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        // An integer as JSON has it: an optional minus, then 0 alone or digits from 1 to 9 on.
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        match b.get(j) {
            Some(b'0') => j += 1,
            Some(b'1'..=b'9') => {
                j += 1;
                while b.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
            }
            _ => return None,
        }
        match b.get(j) {
            Some(b',') => j += 1,
            Some(b']') => return Some(j + 1),
            _ => return None,
        }
    }
}

/// Skips the value at `i` like [`skip`], with the common scalars inline.
#[inline]
pub(crate) fn skip_value(b: &[u8], i: usize, stack: &mut Vec<u8>) -> R<usize> {
    match b.get(i) {
        Some(b'0'..=b'9' | b'-') => number_end(b, i),
        Some(b'"') => {
            let j = special(b, i + 1);
            if b.get(j) == Some(&b'"') {
                Ok(j + 1)
            } else {
                skip(b, i, stack)
            }
        }
        _ => skip(b, i, stack),
    }
}

/// A key and its colon at `i`; returns the index of the value.
#[inline]
pub(crate) fn key(b: &[u8], i: usize) -> R<usize> {
    key_at(b, i).map(|(value, _, _)| value)
}

/// A key and its colon at `i`: (index of the value, index of the key's closing quote, whether
/// the key has escapes).
#[inline]
pub(crate) fn key_at(b: &[u8], i: usize) -> R<(usize, usize, bool)> {
    if at(b, i)? != b'"' {
        return Err(Stop::Syntax(i, "a key string"));
    }
    let (end, escaped) = string_end(b, i + 1)?;
    let j = ws(b, end + 1);
    if at(b, j)? != b':' {
        return Err(Stop::Syntax(j, "':' after a key"));
    }
    Ok((ws(b, j + 1), end, escaped))
}
