//! Call trees as text for a terminal: indented nodes, or the flat list of functions.

use std::fmt::Write as _;

use jscalls::tree::{CallTree, Shown, Stacks};

use crate::cli::digits;
use crate::cli::report::printable;

/// Appends `tree` as indented lines: total and self (ms and % of the thread's total), then
/// the function, indented by depth; `part` is handed the text after each line (it may take
/// it).
pub(crate) fn text(
    out: &mut String,
    stacks: &Stacks,
    tree: &CallTree,
    shown: Shown,
    part: &mut dyn FnMut(&mut String),
) {
    let whole = tree.total;
    let pct = |w: f64| percent(w, whole);
    let (total_head, self_head) = if shown.counts { ("total", "self") } else { ("total ms", "self ms") };
    let _ = writeln!(out, "  {total_head:>10} {:>6} {self_head:>10} {:>6}  function", "%", "%");
    let mut hidden = 0usize;
    // Each function's label, made once: an inverted tree names a function on many lines.
    let mut labels: Vec<Option<Box<str>>> = vec![None; stacks.funcs.len()];
    tree.walk(|n, depth| {
        let node = &tree.nodes[n];
        if pct(node.total) < shown.min_percent || depth > shown.max_depth {
            hidden += 1;
            return false;
        }
        out.push_str("  ");
        amount(out, node.total, shown);
        out.push(' ');
        fixed(out, pct(node.total), 1, 6);
        out.push(' ');
        amount(out, node.self_weight, shown);
        out.push(' ');
        fixed(out, pct(node.self_weight), 1, 6);
        out.push_str("  ");
        indent(out, depth);
        let f = node.func.index();
        out.push_str(labels[f].get_or_insert_with(|| printable(&stacks.funcs[f].label()).into()));
        out.push('\n');
        part(out);
        true
    });
    if tree.root_self > 0.0 {
        let _ = writeln!(
            out,
            "  {:>10.3} {:>6.1}  (outside every function kept)",
            tree.root_self / 1000.0,
            pct(tree.root_self)
        );
    }
    if hidden > 0 {
        let _ = writeln!(out, "  ({hidden} smaller or deeper node(s) not shown: --min-percent 0, --depth)");
    }
}

/// Two spaces a level, up to [`MAX_INDENT`] levels; deeper nodes say their depth instead, so
/// that a tree a million calls deep prints in linear space.
fn indent(out: &mut String, depth: usize) {
    out.push_str(&SPACES[..2 * depth.min(MAX_INDENT)]);
    if depth > MAX_INDENT {
        let _ = write!(out, "[{depth}] ");
    }
}

/// See [`indent`].
const MAX_INDENT: usize = 40;

/// Room for [`MAX_INDENT`] levels, and for the padding of a number's column.
const SPACES: &str = "                                                                                ";

/// A weight in a 10-wide column: a count, or µs as ms.
fn amount(out: &mut String, w: f64, shown: Shown) {
    if shown.counts {
        let _ = write!(out, "{w:>10}");
    } else {
        fixed(out, unsigned_zero(w / 1000.0, 0.001), 3, 10);
    }
}

/// `v` with `decimals` digits after the point, right-aligned in `width`: what
/// `format!("{v:>width$.decimals$}")` writes (the exact value rounded, ties to even), without
/// the general float formatting, for the values a tree has (most of a text tree's time).
fn fixed(out: &mut String, v: f64, decimals: u32, width: usize) {
    let Some(n) = fixed_digits(v, decimals) else {
        let _ = write!(out, "{v:>width$.prec$}", prec = decimals as usize);
        return;
    };
    let mut text = digits::Buf::default();
    let at = digits::fixed_point(&mut text, n, decimals, v.is_sign_negative());
    let mut pad = width.saturating_sub(text.len() - at);
    while pad > 0 {
        let k = pad.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        pad -= k;
    }
    digits::push(out, &text[at..]);
}

/// |v| × 10^decimals rounded to a whole number, ties to even, computed exactly (v is m × 2^e,
/// so the product is a whole number over a power of two); None where this does not reach
/// (not finite, more than 6 decimals, or past 64 bits), which the general formatting takes.
fn fixed_digits(v: f64, decimals: u32) -> Option<u64> {
    if !v.is_finite() || decimals > 6 {
        return None;
    }
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // |v| = m × 2^e.
    let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | 1 << 52, exp - 1075) };
    const POW10: [u64; 7] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];
    let a = u128::from(m) * u128::from(POW10[decimals as usize]);
    let n = if e >= 0 {
        if e > 40 {
            return None;
        }
        a << e
    } else {
        let k = e.unsigned_abs();
        if k > 127 {
            // Under 2^-74: rounds to 0 at 6 decimals or fewer.
            return Some(0);
        }
        let (whole, rest) = (a >> k, a & ((1u128 << k) - 1));
        let half = 1u128 << (k - 1);
        whole + u128::from(rest > half || (rest == half && whole & 1 == 1))
    };
    u64::try_from(n).ok()
}

/// `w` as a percentage of `whole` (0 of nothing), as printed to 0.1.
fn percent(w: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        unsigned_zero(100.0 * w / whole, 0.1)
    } else {
        0.0
    }
}

/// `v`, or 0 when it rounds to zero at `step`: a self time summed from rounded parts can come
/// out a hair under zero, which would print as "-0.000".
fn unsigned_zero(v: f64, step: f64) -> f64 {
    if v.abs() < step / 2.0 {
        0.0
    } else {
        v
    }
}

/// Appends the flat list of functions (most self weight first).
pub(crate) fn flat_text(out: &mut String, stacks: &Stacks, whole: f64, shown: Shown) {
    let pct = |w: f64| percent(w, whole);
    let (self_head, total_head) = if shown.counts { ("self", "total") } else { ("self ms", "total ms") };
    let _ = writeln!(out, "  {self_head:>10} {:>6} {total_head:>10} {:>6}  function", "%", "%");
    let mut hidden = 0usize;
    for (f, s, t) in CallTree::functions(stacks) {
        if pct(s) < shown.min_percent {
            hidden += 1;
            continue;
        }
        let label = stacks.funcs[f.index()].label();
        out.push_str("  ");
        amount(out, s, shown);
        out.push(' ');
        fixed(out, pct(s), 1, 6);
        out.push(' ');
        amount(out, t, shown);
        out.push(' ');
        fixed(out, pct(t), 1, 6);
        out.push_str("  ");
        out.push_str(&printable(&label));
        out.push('\n');
    }
    if hidden > 0 {
        let _ = writeln!(out, "  ({hidden} function(s) under --min-percent not shown)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text indents 40 levels at most, then names the depth: linear output.
    #[test]
    fn a_deep_tree_prints_in_linear_space() {
        let mut st = Stacks::default();
        let f = st.func(jscalls::tree::Func {
            name: "f".into(),
            url: "r.js".into(),
            script: "1".into(),
            line: None,
            column: None,
        });
        let mut top = None;
        for _ in 0..100_000 {
            top = Some(st.stack(top, f));
        }
        st.add(top.unwrap(), 1.0);
        let mut out = String::new();
        text(&mut out, &st, &CallTree::top_down(&st), Shown::default(), &mut |_| {});
        let last = out.lines().last().unwrap();
        assert!(last.ends_with(&format!("{}[99999] f r.js", "  ".repeat(40))), "{last}");
        assert!(out.len() < 200 * 100_000);
    }

    fn fixed_text(v: f64, decimals: u32, width: usize) -> String {
        let mut out = String::new();
        fixed(&mut out, v, decimals, width);
        out
    }

    /// By hand: ties go to the even digit, on the exact binary value.
    #[test]
    fn fixed_rounds_the_exact_value_ties_to_even() {
        assert_eq!(fixed_text(0.0625, 3, 10), "     0.062");
        assert_eq!(fixed_text(0.0635, 3, 10), "     0.064"); // 0.06350000000000000144...
        assert_eq!(fixed_text(0.25, 1, 6), "   0.2");
        assert_eq!(fixed_text(0.35, 1, 6), "   0.3"); // 0.34999999999999997779...
        assert_eq!(fixed_text(99.95, 1, 6), " 100.0"); // 99.95000000000000284...
        assert_eq!(fixed_text(-12.3456, 3, 10), "   -12.346");
        assert_eq!(fixed_text(-0.0, 3, 10), format!("{:>10.3}", -0.0));
        assert_eq!(fixed_text(123456789012.5, 3, 4), "123456789012.500");
        assert_eq!(fixed_text(f64::NAN, 1, 6), "   NaN");
        assert_eq!(fixed_text(1e300, 3, 10), format!("{:>10.3}", 1e300));
        assert_eq!(fixed_text(5e-324, 3, 10), "     0.000");
    }

    proptest::proptest! {
        /// The same text as the standard formatting, on any double.
        #[test]
        fn fixed_writes_what_format_writes(bits: u64, decimals in 0u32..7, width in 0usize..80) {
            let v = f64::from_bits(bits);
            proptest::prop_assert_eq!(fixed_text(v, decimals, width), format!("{v:>width$.prec$}", prec = decimals as usize));
        }

        /// And on the values trees have: ms and percentages, and halfway cases.
        #[test]
        fn fixed_writes_what_format_writes_for_times(us in 0u64..10_000_000_000, k in 0i32..8, decimals in 1u32..4) {
            for v in [us as f64 / 1000.0, us as f64 / 10f64.powi(k), (us as f64 + 0.5) / 1000.0, -(us as f64) / 7.0] {
                proptest::prop_assert_eq!(fixed_text(v, decimals, 10), format!("{v:>10.prec$}", prec = decimals as usize));
            }
        }
    }

    #[test]
    fn a_weight_a_hair_under_zero_prints_as_zero() {
        assert_eq!(format!("{:.3}", -1e-12), "-0.000");
        assert_eq!(format!("{:.3}", unsigned_zero(-1e-12, 0.001)), "0.000");
        assert_eq!(format!("{:.1}", unsigned_zero(-0.04, 0.1)), "0.0");
        assert_eq!(format!("{:.3}", unsigned_zero(-0.002, 0.001)), "-0.002");
    }
}
