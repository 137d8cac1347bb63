//! Stacks by time: collapsed lines in time order (a line per run of spans on one stack, each
//! stack written in full), and those lines with what a flame chart cannot draw folded away.
//! A chart leaves out every frame (a run of lines whose paths share the names down to it)
//! narrower than a least weight. The lines inside such a frame become one line to the frame
//! itself: the frames above it keep their starts and ends, it keeps its own, and nothing
//! below it was drawn. The chart is the same, drawn from far fewer lines.

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
        let stacks = self;
        let names = collapsed_names(stacks);
        let prefix = prefix.map(collapsed_text);
        let mut text = String::new();
        for (stack, w) in runs(spans) {
            if collapsed_line(&mut text, &names, stacks, stack, w as f64, prefix.as_deref()) {
                line(&text)?;
            }
        }
        Ok(())
    }

    /// The bytes of the lines [`Stacks::collapsed_by_time`] makes, without newlines, known
    /// before they are made.
    pub fn collapsed_by_time_len(&self, spans: &Spans, prefix: Option<&str>) -> u64 {
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
        for (stack, w) in runs(spans) {
            let len = path.get(stack.index()).copied().unwrap_or(base);
            let digits = itoa::Buffer::new().format(w).len();
            total += (if len == 0 { "(root)".len() } else { len } + 1 + digits) as u64;
        }
        total
    }

    /// The sum of the weights of [`Stacks::collapsed_by_time`]'s lines: what a chart of them
    /// is drawn over.
    pub fn collapsed_by_time_total(&self, spans: &Spans) -> u64 {
        runs(spans).map(|r| r.1).sum()
    }

    /// [`Stacks::collapsed_by_time`], with the lines inside each frame that weighs less than
    /// `fold` written as one line to that frame (see the module's comment): the lines a chart
    /// that leaves out frames under `fold` draws the same from.
    pub fn collapsed_by_time_folded<E>(
        &self,
        spans: &Spans,
        prefix: Option<&str>,
        fold: u64,
        mut line: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        let runs: Vec<(StackId, u64)> = runs(spans).collect();
        let names = collapsed_names(self);
        let prefix = prefix.map(collapsed_text);
        let paths = Paths::new(self, &names, prefix.as_deref());
        let folds = narrow_frames(&runs, &paths, fold);
        let base = u32::from(prefix.is_some());
        let mut text = String::new();
        let (mut i, mut folds) = (0, folds.into_iter().peekable());
        while i < runs.len() {
            let (mut stack, mut w) = runs[i];
            let mut next = i + 1;
            if let Some((_, end, at)) = folds.next_if(|f| f.0 == i) {
                // The frame `at` deep in the path (the prefix counts one): its stack, or none
                // when it is the prefix (a line of the prefix alone).
                w = runs[i..end].iter().map(|r| r.1).sum();
                if at <= base {
                    stack = StackId::ROOT;
                } else if stack != StackId::ROOT {
                    // Up from the line's own path to the frame.
                    for _ in at..paths.depth(paths.of(stack)) {
                        stack = self.frame(stack).0.expect("deeper than the frame");
                    }
                }
                next = end;
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

/// The runs of lines that become one line each, as (first line, the line after the last, the
/// depth of the line's path), in order: each outermost frame lighter than `fold`, to itself;
/// several such frames one after another under one frame, to that frame. A frame opens where
/// a line's path first has it and closes where a line's path no longer does, as a flame-graph
/// tool reads lines in order.
fn narrow_frames(runs: &[(StackId, u64)], paths: &Paths, fold: u64) -> Vec<(usize, usize, u32)> {
    let mut narrow: Vec<(usize, usize, u32)> = Vec::new();
    // The open frames, outermost first: (first line, weight before it).
    let mut open: Vec<(usize, u64)> = Vec::new();
    let (mut time, mut last) = (0u64, NONE);
    // How many names each line's path shares with the line's before it.
    let mut shared: Vec<u32> = Vec::with_capacity(runs.len());
    for (i, &(stack, w)) in runs.iter().enumerate() {
        let n = paths.of(stack);
        let keep = paths.shared(last, n);
        shared.push(keep);
        while open.len() > keep as usize {
            let (from, start) = open.pop().expect("open");
            if time - start < fold {
                narrow.push((from, i, open.len() as u32 + 1));
            }
        }
        open.extend((keep..paths.depth(n)).map(|_| (i, time)));
        time += w;
        last = n;
    }
    while let Some((from, start)) = open.pop() {
        if time - start < fold {
            narrow.push((from, runs.len(), open.len() as u32 + 1));
        }
    }
    // The outermost of nested ones: by start, the shallowest first.
    narrow.sort_unstable_by_key(|&(from, _, depth)| (from, depth));
    let mut covered = 0;
    narrow.retain(|&(from, to, _)| (from >= covered).then(|| covered = to).is_some());
    // Siblings one after another (the frame above them goes on between them) become one line
    // to that frame, which keeps its start and end; outermost ones have no frame above.
    // (first line, line after the last, the frames' depth, whether several).
    let mut lines: Vec<(usize, usize, u32, bool)> = Vec::with_capacity(narrow.len());
    for (from, to, depth) in narrow {
        match lines.last_mut() {
            Some(l) if l.1 == from && l.2 == depth && depth >= 2 && shared[from] >= depth - 1 => {
                (l.1, l.3) = (to, true);
            }
            _ => lines.push((from, to, depth, false)),
        }
    }
    lines.into_iter().map(|(from, to, depth, several)| (from, to, depth - u32::from(several))).collect()
}
