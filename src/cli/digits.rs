//! Fixed-point numbers as text, made from whole numbers without the general float formatting
//! (the tree's and the Firefox export's times: most of the text they write).

/// Room for the longest text [`fixed_point`] makes: 20 digits, a point and a sign.
pub(crate) type Buf = [u8; 24];

/// `n` with a point before its last `decimals` digits (and at least one digit before the
/// point), `-` first when `negative`, made right to left at the end of `buf`: returns where
/// the text starts. `1234, 3` is `1.234`, `5, 2` is `0.05`, `7, 0` is `7`.
pub(crate) fn fixed_point(buf: &mut Buf, mut n: u64, decimals: u32, negative: bool) -> usize {
    let mut at = buf.len();
    // Two digits at a time where there are two: half the divisions.
    for _ in 0..decimals / 2 {
        pair(buf, &mut at, &mut n);
    }
    if decimals % 2 == 1 {
        one(buf, &mut at, b'0' + (n % 10) as u8);
        n /= 10;
    }
    if decimals > 0 {
        one(buf, &mut at, b'.');
    }
    let point = at;
    while n >= 10 {
        pair(buf, &mut at, &mut n);
    }
    // The first digit, unless a pair took it (at least one digit before the point).
    if n > 0 || at == point {
        one(buf, &mut at, b'0' + n as u8);
    }
    if negative {
        one(buf, &mut at, b'-');
    }
    at
}

/// Puts the last two digits of `n` before `at`, and drops them from `n`.
fn pair(buf: &mut Buf, at: &mut usize, n: &mut u64) {
    let k = 2 * (*n % 100) as usize;
    *at -= 2;
    buf[*at..*at + 2].copy_from_slice(&PAIRS[k..k + 2]);
    *n /= 100;
}

/// Puts `b` before `at`.
fn one(buf: &mut Buf, at: &mut usize, b: u8) {
    *at -= 1;
    buf[*at] = b;
}

/// "00" to "99".
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut k = 0;
    while k < 100 {
        t[2 * k] = b'0' + (k / 10) as u8;
        t[2 * k + 1] = b'0' + (k % 10) as u8;
        k += 1;
    }
    t
};

/// Appends `text`, which [`fixed_point`] made (digits, `.`, `-`), as it is.
pub(crate) fn push(out: &mut String, text: &[u8]) {
    debug_assert!(text.is_ascii());
    // SAFETY: `fixed_point` writes digits, '.' and '-' only: ASCII, valid UTF-8 (checking it
    // took as long as making it).
    out.push_str(unsafe { std::str::from_utf8_unchecked(text) });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: u64, decimals: u32, negative: bool) -> String {
        let mut buf = Buf::default();
        let at = fixed_point(&mut buf, n, decimals, negative);
        String::from_utf8(buf[at..].to_vec()).unwrap()
    }

    /// The point goes before the last `decimals` digits, zeros filling in below 1.
    #[test]
    fn whole_numbers_with_a_point_moved() {
        assert_eq!(text(1234, 3, false), "1.234");
        assert_eq!(text(5, 2, false), "0.05");
        assert_eq!(text(7, 0, false), "7");
        assert_eq!(text(0, 0, false), "0");
        assert_eq!(text(0, 3, true), "-0.000");
        assert_eq!(text(u64::MAX, 6, true), "-18446744073709.551615");
        assert_eq!(text(u64::MAX, 0, true), "-18446744073709551615");
        assert_eq!(text(1_000, 0, false), "1000");
        assert_eq!(text(12_000_001, 6, false), "12.000001");
        assert_eq!(text(99_950, 3, false), "99.950");
    }

    /// The same text as the whole number's decimal digits with a point put in, for numbers of
    /// every length and every number of decimals.
    #[test]
    fn every_length_and_point() {
        let mut ns: Vec<u64> = vec![u64::MAX];
        for k in 0..20 {
            let p = 10u64.pow(k);
            ns.extend([p - 1, p, p + 1, p.wrapping_mul(7) / 3]);
        }
        for n in ns {
            for d in 0..=6usize {
                let digits = format!("{n:0>w$}", w = d + 1);
                let (whole, frac) = digits.split_at(digits.len() - d);
                let want = if d == 0 { whole.to_owned() } else { format!("{whole}.{frac}") };
                assert_eq!(text(n, d as u32, false), want, "{n} {d}");
                assert_eq!(text(n, d as u32, true), format!("-{want}"), "{n} {d}");
            }
        }
    }
}
