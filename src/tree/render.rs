//! A call tree as text for a terminal, and as `jscalls-tree/1` JSON.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::{CallTree, FuncId, Stacks};
use crate::js::{write_json_string, write_number};

/// What to show of a tree.
#[derive(Debug, Clone, Copy)]
pub struct Shown {
    /// Nodes under this share of the thread's total are left out (percent, 0 keeps all).
    pub min_percent: f64,
    /// Nodes deeper than this are left out (0 is the roots).
    pub max_depth: usize,
    /// The weights are sample counts (shown as counts), not µs (shown as ms).
    pub counts: bool,
}

impl Default for Shown {
    fn default() -> Shown {
        Shown { min_percent: 0.0, max_depth: usize::MAX, counts: false }
    }
}

/// `s` as a terminal may show it: each control character (an escape sequence's start, a
/// newline in a name) written as a visible `\u{..}` escape instead.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Appends `tree` as indented lines: total and self (ms and % of the thread's total), then
/// the function, indented by depth.
pub fn text(out: &mut String, stacks: &Stacks, tree: &CallTree, shown: Shown) {
    let whole = tree.total;
    let pct = |w: f64| percent(w, whole);
    let (total_head, self_head) = if shown.counts { ("total", "self") } else { ("total ms", "self ms") };
    let _ = writeln!(out, "  {total_head:>10} {:>6} {self_head:>10} {:>6}  function", "%", "%");
    let mut hidden = 0usize;
    tree.walk(|n, depth| {
        let node = &tree.nodes[n];
        if pct(node.total) < shown.min_percent || depth > shown.max_depth {
            hidden += 1;
            return false;
        }
        let _ = writeln!(
            out,
            "  {} {:>6.1} {} {:>6.1}  {}{}",
            amount(node.total, shown),
            pct(node.total),
            amount(node.self_weight, shown),
            pct(node.self_weight),
            indent(depth),
            printable(&stacks.funcs[node.func as usize].label())
        );
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
fn indent(depth: usize) -> String {
    if depth <= MAX_INDENT {
        "  ".repeat(depth)
    } else {
        format!("{}[{depth}] ", "  ".repeat(MAX_INDENT))
    }
}

/// See [`indent`].
const MAX_INDENT: usize = 40;

/// A weight in a 10-wide column: a count, or µs as ms.
fn amount(w: f64, shown: Shown) -> String {
    if shown.counts {
        format!("{w:>10}")
    } else {
        format!("{:>10.3}", unsigned_zero(w / 1000.0, 0.001))
    }
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
pub fn flat_text(out: &mut String, stacks: &Stacks, whole: f64, shown: Shown) {
    let pct = |w: f64| percent(w, whole);
    let (self_head, total_head) = if shown.counts { ("self", "total") } else { ("self ms", "total ms") };
    let _ = writeln!(out, "  {self_head:>10} {:>6} {total_head:>10} {:>6}  function", "%", "%");
    let mut hidden = 0usize;
    for (f, s, t) in CallTree::functions(stacks) {
        if pct(s) < shown.min_percent {
            hidden += 1;
            continue;
        }
        let label = stacks.funcs[f as usize].label();
        let label = printable(&label);
        let _ = writeln!(out, "  {} {:>6.1} {} {:>6.1}  {label}", amount(s, shown), pct(s), amount(t, shown), pct(t));
    }
    if hidden > 0 {
        let _ = writeln!(out, "  ({hidden} function(s) under --min-percent not shown)");
    }
}

/// Appends `{"func":…,"total":…,"self":…,"children":[…]}` for each root of `tree`, comma
/// separated, one node per line (written with an explicit stack: any depth).
pub fn json_nodes(out: &mut String, stacks: &Stacks, tree: &CallTree, shown: Shown) {
    let whole = tree.total;
    let keep = |n: usize| whole <= 0.0 || 100.0 * tree.nodes[n].total / whole >= shown.min_percent;
    // Some((node, depth, first in its list)) opens a node; None closes the one opened last.
    let push_list = |stack: &mut Vec<Option<(usize, usize, bool)>>, list: &[usize], depth: usize| {
        let kept: Vec<usize> = list.iter().copied().filter(|&c| keep(c)).collect();
        stack.extend(kept.iter().enumerate().rev().map(|(k, &c)| Some((c, depth, k == 0))));
    };
    let mut stack = Vec::new();
    push_list(&mut stack, &tree.roots, 0);
    while let Some(item) = stack.pop() {
        let Some((n, depth, first)) = item else {
            out.push_str("]}");
            continue;
        };
        out.push_str(if first { "\n" } else { ",\n" });
        let node = &tree.nodes[n];
        func_json(out, stacks, node.func);
        out.push_str(",\"total\":");
        write_number(out, node.total);
        out.push_str(",\"self\":");
        write_number(out, node.self_weight);
        out.push_str(",\"children\":[");
        stack.push(None);
        if depth < shown.max_depth {
            push_list(&mut stack, &node.children, depth + 1);
        }
    }
}

/// `{"func":{"name","url","line","column"}` (the object left open for the node's fields).
fn func_json(out: &mut String, stacks: &Stacks, f: FuncId) {
    let func = &stacks.funcs[f as usize];
    out.push_str("{\"func\":{\"name\":");
    write_json_string(out, &func.name);
    out.push_str(",\"url\":");
    write_json_string(out, &func.url);
    for (key, v) in [("line", func.line), ("column", func.column)] {
        let _ = write!(out, ",\"{key}\":");
        match v {
            Some(v) => {
                let _ = write!(out, "{v}");
            }
            None => out.push_str("null"),
        }
    }
    out.push('}');
}

/// Appends the flat list as JSON objects `{"func":…,"self":…,"total":…}`, comma separated.
pub fn flat_json(out: &mut String, stacks: &Stacks, whole: f64, shown: Shown) {
    let mut first = true;
    for (f, s, t) in CallTree::functions(stacks) {
        if whole > 0.0 && 100.0 * s / whole < shown.min_percent {
            continue;
        }
        out.push_str(if first { "\n" } else { ",\n" });
        first = false;
        func_json(out, stacks, f);
        out.push_str(",\"self\":");
        write_number(out, s);
        out.push_str(",\"total\":");
        write_number(out, t);
        out.push('}');
    }
}

/// Appends `s` as a JSON string, escaped as `JSON.stringify` escapes it.
pub fn string(out: &mut String, s: &str) {
    write_json_string(out, s);
}

/// Appends `n` as JavaScript prints a number.
pub fn number(out: &mut String, n: f64) {
    write_number(out, n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weight_a_hair_under_zero_prints_as_zero() {
        assert_eq!(format!("{:.3}", -1e-12), "-0.000");
        assert_eq!(format!("{:.3}", unsigned_zero(-1e-12, 0.001)), "0.000");
        assert_eq!(format!("{:.1}", unsigned_zero(-0.04, 0.1)), "0.0");
        assert_eq!(format!("{:.3}", unsigned_zero(-0.002, 0.001)), "-0.002");
    }
}
