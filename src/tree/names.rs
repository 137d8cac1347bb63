//! Names as collapsed stacks write them, and the tree of those names that stacks make:
//! stacks whose functions are named alike, frame for frame, are one line.

use rustc_hash::FxHashMap;

use super::{StackId, Stacks};

/// The parent of a root node of [`NameNodes`].
pub(super) const NO_PARENT: u32 = u32::MAX;

/// A name in collapsed stacks, with the separator `;` and line breaks replaced (the format
/// cannot escape them) and every other control character made U+FFFD: an SVG drawn from the
/// lines must be well-formed XML, and a terminal showing them must not take them as commands.
/// A name that ends in a space and a number (a line frame of no script, `line 4`; a trace
/// event's) has that space made a no-break space: a line ending `line 4 2862` reads as a
/// differential line of the frame `line` to flame-graph tools (inferno drew it so).
pub(crate) fn collapsed_text(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| match c {
            ';' | '\n' | '\r' => ':',
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect();
    if let Some(at) = out.rfind(' ') {
        let tail = &out.as_bytes()[at + 1..];
        if !tail.is_empty() && tail.iter().all(|b| b.is_ascii_digit() || *b == b'.') {
            out.replace_range(at..=at, "\u{A0}");
        }
    }
    out
}

/// Each function's name in collapsed stacks: its label.
pub(super) fn collapsed_names(stacks: &Stacks) -> Vec<String> {
    stacks.funcs.iter().map(|f| collapsed_text(&f.label())).collect()
}

/// The tree of names of a [`Stacks`]' stacks (stacks named alike, frame for frame, share a
/// node), made as far as the stacks go, and extended as they grow.
#[derive(Debug, Default)]
pub(super) struct NameNodes {
    /// Each distinct name's number, in the order of first use.
    name_id: FxHashMap<String, u32>,
    /// Each function's name's number.
    func_name: Vec<u32>,
    index: FxHashMap<(u32, u32), u32>,
    /// (parent or [`NO_PARENT`], name), a parent before its children.
    pub(super) nodes: Vec<(u32, u32)>,
    /// Each stack's node.
    pub(super) node_of: Vec<u32>,
}

impl NameNodes {
    /// The nodes of the functions and stacks added to `stacks` since the last call.
    pub(super) fn extend(&mut self, stacks: &Stacks) {
        for f in &stacks.funcs[self.func_name.len()..] {
            let k = self.name_id.len() as u32;
            self.func_name.push(*self.name_id.entry(collapsed_text(&f.label())).or_insert(k));
        }
        for s in (self.node_of.len()..stacks.len()).map(StackId::new) {
            let (parent, f) = stacks.frame(s);
            let key = (parent.map_or(NO_PARENT, |p| self.node_of[p.index()]), self.func_name[f.index()]);
            let next = self.nodes.len() as u32;
            let t = *self.index.entry(key).or_insert(next);
            if t == next {
                self.nodes.push(key);
            }
            self.node_of.push(t);
        }
    }

    /// Each name, by its number.
    pub(super) fn names(&self) -> Vec<&str> {
        let mut name_of: Vec<&str> = vec![""; self.name_id.len()];
        for (n, &k) in &self.name_id {
            name_of[k as usize] = n;
        }
        name_of
    }
}

impl Stacks {
    /// The samples summed per path of names, in their order, each sum on the first stack
    /// of its path (the weight on no function as one sample too), the total kept: the same
    /// [`CollapsedTree`](super::CollapsedTree), bit for bit, from a sample per line.
    #[doc(hidden)]
    pub fn sum_per_name(&mut self) {
        if self.samples.is_empty() {
            return;
        }
        let total = self.total();
        let mut tree = NameNodes::default();
        tree.extend(self);
        let (node_of, nodes) = (&tree.node_of, &tree.nodes);
        let mut sums: Vec<Option<(StackId, f64)>> = vec![None; nodes.len()];
        let mut root: Option<f64> = None;
        for &(s, w) in &self.samples {
            match node_of.get(s.index()) {
                Some(&t) => sums[t as usize].get_or_insert((s, 0.0)).1 += w,
                None => *root.get_or_insert(0.0) += w,
            }
        }
        self.samples = sums.into_iter().flatten().chain(root.map(|w| (StackId::ROOT, w))).collect();
        self.total_in_order = Some(total);
    }
}
