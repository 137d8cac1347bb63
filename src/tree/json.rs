//! Call trees as `jscalls-tree/1` JSON: the nodes of a tree, the flat list of functions.

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

impl CallTree {
    /// Appends `{"func":…,"total":…,"self":…,"children":[…]}` for each root, comma
    /// separated, one node per line (written with an explicit stack: any depth).
    pub fn write_json(&self, out: &mut String, stacks: &Stacks, shown: Shown) {
        self.write_json_in_parts(out, stacks, shown, &mut |_| {});
    }

    /// [`CallTree::write_json`], handing `part` the text made so far after each node: it may
    /// take it (leaving `out` empty), so that a large tree is written as it is made.
    pub fn write_json_in_parts(
        &self,
        out: &mut String,
        stacks: &Stacks,
        shown: Shown,
        part: &mut dyn FnMut(&mut String),
    ) {
        let tree = self;
        let whole = tree.total;
        let keep = |n: usize| whole <= 0.0 || 100.0 * tree.nodes[n].total / whole >= shown.min_percent;
        // Some((node, depth, first in its list)) opens a node; None closes the one opened last.
        let push_list = |stack: &mut Vec<Option<(usize, usize, bool)>>, list: &[usize], depth: usize| {
            let before = stack.len();
            stack.extend(list.iter().rev().filter(|&&c| keep(c)).map(|&c| Some((c, depth, false))));
            // Pushed last, taken first.
            if stack.len() > before {
                if let Some(Some(first)) = stack.last_mut() {
                    first.2 = true;
                }
            }
        };
        // Each function's JSON, made once: a tree names a function on many nodes.
        let mut funcs: Vec<Option<Box<str>>> = vec![None; stacks.funcs.len()];
        let mut stack = Vec::new();
        push_list(&mut stack, &tree.roots, 0);
        while let Some(item) = stack.pop() {
            let Some((n, depth, first)) = item else {
                out.push_str("]}");
                continue;
            };
            out.push_str(if first { "\n" } else { ",\n" });
            let node = &tree.nodes[n];
            out.push_str(funcs[node.func.index()].get_or_insert_with(|| {
                let mut text = String::new();
                func_json(&mut text, stacks, node.func);
                text.into()
            }));
            out.push_str(",\"total\":");
            write_number(out, node.total);
            out.push_str(",\"self\":");
            write_number(out, node.self_weight);
            out.push_str(",\"children\":[");
            stack.push(None);
            if depth < shown.max_depth {
                push_list(&mut stack, &node.children, depth + 1);
            }
            part(out);
        }
    }
}

impl Stacks {
    /// Appends the flat list as JSON objects `{"func":…,"self":…,"total":…}`, comma separated.
    pub fn write_flat_json(&self, out: &mut String, whole: f64, shown: Shown) {
        self.write_flat_json_in_parts(out, whole, shown, &mut |_| {});
    }

    /// [`Stacks::write_flat_json`], handing `part` the text made so far after each function
    /// (see [`CallTree::write_json_in_parts`]).
    pub fn write_flat_json_in_parts(
        &self,
        out: &mut String,
        whole: f64,
        shown: Shown,
        part: &mut dyn FnMut(&mut String),
    ) {
        let stacks = self;
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
            part(out);
        }
    }
}

/// `{"func":{"name","url","line","column"}` (the object left open for the node's fields).
fn func_json(out: &mut String, stacks: &Stacks, f: FuncId) {
    let func = &stacks.funcs[f.index()];
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

/// Appends `s` as a JSON string, escaped as `JSON.stringify` escapes it (names read from a
/// trace may hold lone surrogates, written back as `\udXXX`).
pub fn write_json_str(out: &mut String, s: &str) {
    write_json_string(out, s);
}

/// Appends `n` as JavaScript prints a number (`null` when not finite).
pub fn write_json_number(out: &mut String, n: f64) {
    write_number(out, n);
}
