//! Stacks by time: collapsed lines in time order (a line per run of spans on one stack, each
//! stack written in full), and those lines with what a flame chart cannot draw folded away.
//! A chart draws a frame (a run of lines whose paths share the names down to it) only when it
//! weighs at least a least weight, and a frame's parent weighs at least what it does: the
//! frames drawn on a line are the first ones of its path. Each line is cut to those (to its
//! outermost frame when none is), and lines one after another cut to one path become one line.
//! Every frame drawn is then the same run of (fewer) lines, with the same start and end.

use rustc_hash::FxHashMap as HashMap;

use super::export::collapsed_line;
use super::names::{collapsed_names, collapsed_text};
use super::{Spans, StackId, Stacks};

/// [`Paths`]' nodes as they are made, each (parent, name) once.
#[derive(Default)]
struct Made<'a> {
    nodes: Vec<(u32, u32, u32)>,
    index: HashMap<(u32, u32), u32>,
    names: HashMap<&'a str, u32>,
}

impl<'a> Made<'a> {
    fn node(&mut self, parent: u32, name: &'a str) -> u32 {
        let n = self.names.len() as u32;
        let name = *self.names.entry(name).or_insert(n);
        let nodes = &mut self.nodes;
        *self.index.entry((parent, name)).or_insert_with(|| {
            let depth = if parent == NONE { 1 } else { nodes[parent as usize].2 + 1 };
            nodes.push((parent, name, depth));
            nodes.len() as u32 - 1
        })
    }
}

/// No node: above the outermost frame.
const NONE: u32 = u32::MAX;

/// The lines of stacks by time: each run of spans on one stack as (stack, weight rounded),
/// the runs that round to 0 left out.
pub(super) fn runs(spans: &Spans) -> impl Iterator<Item = (StackId, u64)> + '_ {
    let mut spans = spans.iter().peekable();
    std::iter::from_fn(move || {
        while let Some(first) = spans.next() {
            // Summed from 0, as before (a lone -0.0 weighs 0).
            let mut w = 0.0;
            w += first.weight;
            while let Some(s) = spans.next_if(|s| s.stack == first.stack) {
                w += s.weight;
            }
            let w = w.round();
            if w >= 1.0 {
                return Some((first.stack, w as u64));
            }
        }
        None
    })
}

impl Spans {
    /// The lines of [`Stacks::collapsed_by_time`] as (stack, weight), for the functions that
    /// read them more than once: a chart's whole weight is their weights' sum.
    pub fn chart_runs(&self) -> Vec<(StackId, u64)> {
        runs(self).collect()
    }
}

impl Stacks {
    /// Collapsed stacks in time order, for a flame chart by time: one line per run of spans on
    /// the same stack, weight its length in µs (or samples), rounded. Each line is handed to
    /// `line` (without its newline) as it is made; the first error ends the walk.
    pub fn collapsed_by_time<E>(
        &self,
        spans: &Spans,
        prefix: Option<&str>,
        mut line: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        let names = collapsed_names(self);
        let mut text = prefix.map(collapsed_text).unwrap_or_default();
        let base = text.len();
        // The stacks on the text's path, outermost first, each with the text's length up to
        // it, and each stack's place there (from 1; 0: not on it). A line changes the text
        // only below the frame it shares with the line before, so a deep stack costs what
        // changes, not its depth.
        let mut path: Vec<(StackId, usize)> = Vec::new();
        let mut on_path: Vec<u32> = vec![0; self.len()];
        let mut new: Vec<StackId> = Vec::new();
        let mut digits = itoa::Buffer::new();
        for (stack, w) in runs(spans) {
            let mut at = (stack != StackId::ROOT).then_some(stack);
            let keep = loop {
                match at {
                    Some(s) if on_path[s.index()] == 0 => {
                        new.push(s);
                        at = self.frame(s).0;
                    }
                    Some(s) => break on_path[s.index()] as usize,
                    None => break 0,
                }
            };
            for &(s, _) in &path[keep..] {
                on_path[s.index()] = 0;
            }
            path.truncate(keep);
            text.truncate(path.last().map_or(base, |p| p.1));
            for s in new.drain(..).rev() {
                if !text.is_empty() {
                    text.push(';');
                }
                text.push_str(&names[self.frame(s).1.index()]);
                path.push((s, text.len()));
                on_path[s.index()] = path.len() as u32;
            }
            let end = text.len();
            if end == 0 {
                text.push_str("(root)");
            }
            text.push(' ');
            text.push_str(digits.format(w));
            let done = line(&text);
            text.truncate(end);
            done?;
        }
        Ok(())
    }

    /// The bytes of the lines [`Stacks::collapsed_by_time`] makes of `runs` (the spans'
    /// [`Spans::chart_runs`]), without newlines, known before they are made.
    pub fn collapsed_by_time_len(&self, runs: &[(StackId, u64)], prefix: Option<&str>) -> u64 {
        let names = collapsed_names(self);
        let base = prefix.map_or(0, |p| collapsed_text(p).len());
        // Each stack's path as its line writes it (a stack comes after its parent).
        let mut path: Vec<usize> = Vec::with_capacity(self.len());
        for k in 0..self.len() {
            let (parent, f) = self.frame(StackId::new(k));
            let before = parent.map_or(base, |p| path[p.index()]);
            path.push(before + usize::from(before > 0) + names[f.index()].len());
        }
        let mut total = 0;
        for &(stack, w) in runs {
            let len = path.get(stack.index()).copied().unwrap_or(base);
            let digits = itoa::Buffer::new().format(w).len();
            total += (if len == 0 { "(root)".len() } else { len } + 1 + digits) as u64;
        }
        total
    }

    /// [`Stacks::collapsed_by_time`] of `runs` (the spans' [`Spans::chart_runs`]) with the
    /// frames that weigh less than `fold` folded away (see the module's comment): the lines a
    /// chart that leaves out those frames draws the same from.
    pub fn collapsed_by_time_folded<E>(
        &self,
        runs: &[(StackId, u64)],
        prefix: Option<&str>,
        fold: u64,
        mut line: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        let names = collapsed_names(self);
        let prefix = prefix.map(collapsed_text);
        let paths = Paths::new(self, &names, prefix.as_deref());
        let drawn = drawn_depths(runs, &paths, fold);
        // Each line's path cut to its depth.
        let cut = |i: usize| paths.up(paths.of(runs[i].0), drawn[i]);
        let base = u32::from(prefix.is_some());
        let mut text = String::new();
        let mut i = 0;
        while i < runs.len() {
            let (mut stack, mut w) = runs[i];
            let node = cut(i);
            let mut next = i + 1;
            while next < runs.len() && cut(next) == node {
                w += runs[next].1;
                next += 1;
            }
            let at = paths.depth(node);
            if at <= base {
                // The prefix alone.
                stack = StackId::ROOT;
            } else if stack != StackId::ROOT {
                for _ in at..paths.depth(paths.of(stack)) {
                    stack = self.frame(stack).0.expect("deeper than its cut");
                }
            }
            if collapsed_line(&mut text, &names, self, stack, w as f64, prefix.as_deref()) {
                line(&text)?;
            }
            i = next;
        }
        Ok(())
    }
}

/// The paths of a thread's lines as a flame-graph tool reads them: names, not functions (two
/// functions can have one label), the thread's prefix first when there is one.
struct Paths {
    /// Each node's parent (NONE: outermost), name and depth (1: outermost).
    nodes: Vec<(u32, u32, u32)>,
    /// Each stack's node.
    of_stack: Vec<u32>,
    /// The node of a line on no function.
    root: u32,
}

impl Paths {
    fn new(stacks: &Stacks, names: &[String], prefix: Option<&str>) -> Paths {
        let mut made = Made::default();
        let (base, root) = match prefix {
            Some(p) => {
                let n = made.node(NONE, p);
                (n, n)
            }
            None => (NONE, made.node(NONE, "(root)")),
        };
        let mut of_stack: Vec<u32> = Vec::with_capacity(stacks.len());
        for k in 0..stacks.len() {
            let (parent, f) = stacks.frame(StackId::new(k));
            let up = parent.map_or(base, |p| of_stack[p.index()]);
            of_stack.push(made.node(up, &names[f.index()]));
        }
        Paths { nodes: made.nodes, of_stack, root }
    }

    fn of(&self, stack: StackId) -> u32 {
        if stack == StackId::ROOT {
            self.root
        } else {
            self.of_stack[stack.index()]
        }
    }

    fn depth(&self, n: u32) -> u32 {
        if n == NONE {
            0
        } else {
            self.nodes[n as usize].2
        }
    }

    fn parent(&self, n: u32) -> u32 {
        self.nodes[n as usize].0
    }

    /// The node `depth` deep on the path to `n` (`n` itself when it is no deeper).
    fn up(&self, mut n: u32, depth: u32) -> u32 {
        for _ in depth..self.depth(n) {
            n = self.parent(n);
        }
        n
    }

    /// How many names the paths of `a` and `b` share from the outermost.
    fn shared(&self, mut a: u32, mut b: u32) -> u32 {
        while self.depth(a) > self.depth(b) {
            a = self.parent(a);
        }
        while self.depth(b) > self.depth(a) {
            b = self.parent(b);
        }
        while a != b {
            (a, b) = (self.parent(a), self.parent(b));
        }
        self.depth(a)
    }
}

/// How many frames of each line's path a chart draws (at least 1: its outermost frame). A
/// frame opens where a line's path first has it and closes where a line's path no longer does,
/// as a flame-graph tool reads lines in order; it is drawn when it weighs at least `fold`.
fn drawn_depths(runs: &[(StackId, u64)], paths: &Paths, fold: u64) -> Vec<u32> {
    // The frames drawn, as +1 where each starts and -1 where it ends: a line's count is the
    // number of drawn frames around it, the first ones of its path.
    let mut edges: Vec<i32> = vec![0; runs.len() + 1];
    // The open frames, outermost first: (first line, weight before it).
    let mut open: Vec<(usize, u64)> = Vec::new();
    let (mut time, mut last) = (0u64, NONE);
    let mut close = |open: &mut Vec<(usize, u64)>, keep: usize, i: usize, time: u64| {
        while open.len() > keep {
            let (from, start) = open.pop().expect("open");
            if time - start >= fold {
                edges[from] += 1;
                edges[i] -= 1;
            }
        }
    };
    for (i, &(stack, w)) in runs.iter().enumerate() {
        let n = paths.of(stack);
        let keep = paths.shared(last, n);
        close(&mut open, keep as usize, i, time);
        open.extend((keep..paths.depth(n)).map(|_| (i, time)));
        time += w;
        last = n;
    }
    close(&mut open, 0, runs.len(), time);
    let mut around = 0;
    edges[..runs.len()]
        .iter()
        .map(|&e| {
            around += e;
            around.max(1) as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::tree::{Func, Span, Spans, StackId, Stacks};

    proptest::proptest! {
        /// The lines by time, each made from the line before, are each stack written in full:
        /// random trees (deep chains among them, two functions sharing a name) and random
        /// walks over them and the root, with and without a thread's prefix.
        #[test]
        fn lines_by_time_are_stacks_in_full(
            parents in proptest::collection::vec((0usize..200, 0usize..5, proptest::bool::weighted(0.7)), 1..200),
            walk in proptest::collection::vec((0usize..200, 1u32..4), 0..300),
            prefix in proptest::bool::ANY,
        ) {
            let mut st = Stacks::new();
            let funcs: Vec<_> = ["a", "b", "a", "c;d", "e f"]
                .iter()
                .enumerate()
                .map(|(i, n)| st.func(Func { name: (*n).into(), url: String::new(), script: String::new(), line: Some(i as i64), column: None }))
                .collect();
            let mut stacks: Vec<StackId> = Vec::new();
            for &(p, f, chain) in &parents {
                // Mostly the stack before's child: deep chains.
                let parent = if chain { stacks.last().copied() } else { (p < stacks.len()).then(|| stacks[p]) };
                stacks.push(st.stack(parent, funcs[f]));
            }
            let mut spans = Spans::new();
            let mut t = 0.0;
            for &(s, w) in &walk {
                let stack = if s >= stacks.len() { StackId::ROOT } else { stacks[s] };
                spans.push(Span { start: t, end: t + f64::from(w), stack, weight: f64::from(w) });
                t += f64::from(w);
            }
            let prefix = prefix.then_some("thread 7");
            let names = super::collapsed_names(&st);
            let prefix_text = prefix.map(super::collapsed_text);
            let mut expected = Vec::new();
            let mut text = String::new();
            for (stack, w) in super::runs(&spans) {
                if super::collapsed_line(&mut text, &names, &st, stack, w as f64, prefix_text.as_deref()) {
                    expected.push(text.clone());
                }
            }
            let mut made = Vec::new();
            st.collapsed_by_time::<()>(&spans, prefix, |l| {
                made.push(l.to_owned());
                Ok(())
            })
            .unwrap();
            proptest::prop_assert_eq!(made, expected);
        }
    }

    /// A frame's own time between its narrow callees is cut with them to one line: `b` runs
    /// 1000 µs, calls `c` and `d` (1 µs each, under the fold of 10) with 1 µs of its own
    /// between them, and returns to `a`.
    #[test]
    fn own_time_between_narrow_callees_is_one_line() {
        let mut st = Stacks::new();
        let mut func = |name: &str| {
            st.func(Func { name: name.into(), url: String::new(), script: String::new(), line: None, column: None })
        };
        let (a, b, c, d) = (func("a"), func("b"), func("c"), func("d"));
        let sa = st.stack(None, a);
        let sb = st.stack(Some(sa), b);
        let (sc, sd) = (st.stack(Some(sb), c), st.stack(Some(sb), d));
        let mut spans = Spans::new();
        let mut t = 0.0;
        for (stack, w) in [(sb, 1000.0), (sc, 1.0), (sb, 1.0), (sd, 1.0), (sa, 1000.0), (StackId::ROOT, 5.0)] {
            spans.push(Span { start: t, end: t + w, stack, weight: w });
            t += w;
        }
        let lines = |fold: u64| {
            let mut all = Vec::new();
            st.collapsed_by_time_folded::<()>(&spans.chart_runs(), None, fold, |l| {
                all.push(l.to_owned());
                Ok(())
            })
            .unwrap();
            all
        };
        assert_eq!(lines(10), ["a;b 1003", "a 1000", "(root) 5"]);
        assert_eq!(lines(1), ["a;b 1000", "a;b;c 1", "a;b 1", "a;b;d 1", "a 1000", "(root) 5"]);
        // Nothing drawn but the outermost frames, each cut to itself.
        assert_eq!(lines(5000), ["a 2003", "(root) 5"]);
    }
}
