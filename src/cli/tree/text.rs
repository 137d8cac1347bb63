//! Call trees as text for a terminal: indented nodes, or the flat list of functions.

use std::fmt::Write as _;

use jscalls::tree::{CallTree, Shown, Stacks};

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
        let _ = write!(out, " {:>6.1} ", pct(node.total));
        amount(out, node.self_weight, shown);
        let _ = write!(out, " {:>6.1}  ", pct(node.self_weight));
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
    for _ in 0..depth.min(MAX_INDENT) {
        out.push_str("  ");
    }
    if depth > MAX_INDENT {
        let _ = write!(out, "[{depth}] ");
    }
}

/// See [`indent`].
const MAX_INDENT: usize = 40;

/// A weight in a 10-wide column: a count, or µs as ms.
fn amount(out: &mut String, w: f64, shown: Shown) {
    let _ =
        if shown.counts { write!(out, "{w:>10}") } else { write!(out, "{:>10.3}", unsigned_zero(w / 1000.0, 0.001)) };
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
        let _ = write!(out, " {:>6.1} ", pct(s));
        amount(out, t, shown);
        let _ = writeln!(out, " {:>6.1}  {}", pct(t), printable(&label));
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

    #[test]
    fn a_weight_a_hair_under_zero_prints_as_zero() {
        assert_eq!(format!("{:.3}", -1e-12), "-0.000");
        assert_eq!(format!("{:.3}", unsigned_zero(-1e-12, 0.001)), "0.000");
        assert_eq!(format!("{:.1}", unsigned_zero(-0.04, 0.1)), "0.0");
        assert_eq!(format!("{:.3}", unsigned_zero(-0.002, 0.001)), "-0.002");
    }
}
