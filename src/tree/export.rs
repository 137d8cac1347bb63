//! Call trees for other tools: speedscope's file format and collapsed ("folded") stacks, the
//! input of every flame-graph tool.

use rustc_hash::FxHashMap;

use super::names::{collapsed_text, NameNodes, NO_PARENT};
use super::{Func, Spans, StackId, Stacks};
use crate::js::{write_int, write_json_string as string, write_number as number, Spill};

/// One thread for [`Profile::write_speedscope`].
pub struct Profile<'a> {
    /// Shown as the profile's name (speedscope lists one per thread).
    pub name: String,
    /// The thread's stacks (after any transforms).
    pub stacks: &'a Stacks,
    /// Their spans, in time order.
    pub spans: &'a Spans,
    /// Evented or sampled.
    pub kind: ProfileKind,
}

/// How a [`Profile`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    /// Frames opened and closed at the spans' times: a flame chart of durations (µs).
    Evented,
    /// One sample per span, weighing its weight in µs.
    SampledTime,
    /// One sample per span, weighing its weight as a count.
    SampledCount,
}

impl Profile<'_> {
    /// A speedscope document (`https://www.speedscope.app/file-format-schema.json`): the functions
    /// as shared frames, one profile per thread. Written as it is made (one block held).
    pub fn write_speedscope(w: &mut dyn std::io::Write, name: &str, profiles: &[Profile<'_>]) -> std::io::Result<()> {
        let mut spill = Spill::new(w);
        let out = &mut spill;
        let mut frames: Vec<&Func> = Vec::new();
        let mut index: FxHashMap<&Func, u32> = FxHashMap::default();
        // Each profile's function ids as shared frame ids.
        let frame_ids: Vec<Vec<u32>> = profiles
            .iter()
            .map(|p| {
                p.stacks
                    .funcs
                    .iter()
                    .map(|f| {
                        *index.entry(f).or_insert_with(|| {
                            frames.push(f);
                            frames.len() as u32 - 1
                        })
                    })
                    .collect()
            })
            .collect();
        out.push_str("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"name\":");
        string(out, name);
        out.push_str(",\"exporter\":\"jscalls ");
        out.push_str(env!("CARGO_PKG_VERSION"));
        out.push_str("\",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
        for (k, f) in frames.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str("\n{\"name\":");
            string(out, &f.label());
            if !f.url.is_empty() {
                out.push_str(",\"file\":");
                string(out, &f.url);
            }
            // speedscope counts lines and columns from 1, as editors do; it tells frames apart by
            // them, so they are given even without a file (scripts V8 knows by id only).
            if let Some(l) = f.line.filter(|&l| l >= 0) {
                out.push_str(",\"line\":");
                number(out, (l + 1) as f64);
                if let Some(c) = f.column.filter(|&c| c >= 0) {
                    out.push_str(",\"col\":");
                    number(out, (c + 1) as f64);
                }
            }
            out.push('}');
            out.spill();
        }
        out.push_str("]},\"profiles\":[");
        for (k, (p, ids)) in profiles.iter().zip(&frame_ids).enumerate() {
            if k > 0 {
                out.push(',');
            }
            match p.kind {
                ProfileKind::Evented => evented(out, p, ids),
                ProfileKind::SampledTime | ProfileKind::SampledCount => sampled(out, p, ids),
            }
            out.failed()?;
        }
        out.push_str("]}\n");
        spill.finish()
    }
}

fn evented(out: &mut Spill<'_>, p: &Profile<'_>, ids: &[u32]) {
    let (start, end) = match (p.spans.first(), p.spans.last()) {
        (Some(a), Some(b)) => (a.start, b.end),
        _ => (0.0, 0.0),
    };
    out.push_str("\n{\"type\":\"evented\",\"name\":");
    string(out, &p.name);
    out.push_str(",\"unit\":\"microseconds\",\"startValue\":");
    number(out, start);
    out.push_str(",\"endValue\":");
    number(out, end);
    out.push_str(",\"events\":[");
    let depth = p.stacks.depths();
    // The open stacks, outermost first: a span's stack is reached from the open one by
    // closing down to their common ancestor and opening the rest (`path_change`).
    let mut open: Vec<StackId> = Vec::new();
    let mut first = true;
    let mut event = |out: &mut String, kind: char, stack: StackId, at: f64| {
        out.push_str(if first { "\n{\"type\":\"" } else { ",\n{\"type\":\"" });
        first = false;
        out.push(kind);
        out.push_str("\",\"frame\":");
        number(out, ids[(p.stacks.prefix[stack.index()].1).index()] as f64);
        out.push_str(",\"at\":");
        number(out, at);
        out.push('}');
    };
    let mut last_end = f64::NEG_INFINITY;
    let mut opened: Vec<StackId> = Vec::new();
    for s in p.spans.iter() {
        out.spill();
        if s.start > last_end {
            // A gap: nothing ran.
            while let Some(x) = open.pop() {
                event(out, 'C', x, last_end);
            }
        }
        let keep = path_change(p.stacks, &depth, &open, s.stack, &mut opened);
        while open.len() > keep {
            let y = open.pop().expect("longer than keep");
            event(out, 'C', y, s.start);
        }
        for &y in opened.iter().rev() {
            event(out, 'O', y, s.start);
            open.push(y);
        }
        last_end = s.end;
    }
    while let Some(x) = open.pop() {
        event(out, 'C', x, last_end);
    }
    out.push_str("]}");
}

/// How `stack` differs from the path `open` (stacks, outermost first): how many of `open` it
/// keeps, and in `opened` the stacks below those, innermost first. Found by walking up from
/// `stack` (`depth`: each stack's, 1 for a root) to the first stack on `open`: what changes,
/// not the whole depth.
fn path_change(stacks: &Stacks, depth: &[u32], open: &[StackId], stack: StackId, opened: &mut Vec<StackId>) -> usize {
    opened.clear();
    let mut x = stack;
    while x != StackId::ROOT {
        let d = depth[x.index()] as usize;
        if open.len() >= d && open[d - 1] == x {
            return d;
        }
        opened.push(x);
        x = stacks.prefix[x.index()].0.unwrap_or(StackId::ROOT);
    }
    0
}

fn sampled(out: &mut Spill<'_>, p: &Profile<'_>, ids: &[u32]) {
    out.push_str("\n{\"type\":\"sampled\",\"name\":");
    string(out, &p.name);
    let unit = if p.kind == ProfileKind::SampledCount { "none" } else { "microseconds" };
    out.push_str(",\"unit\":\"");
    out.push_str(unit);
    out.push_str("\",\"startValue\":0,\"endValue\":");
    number(out, p.spans.iter().map(|s| s.weight).sum());
    out.push_str(",\"samples\":[");
    // The last sample's path, outermost first, as text (`1,5,9`) with where each frame's ends:
    // a sample's path is the last one's up to their common ancestor and what is new below it
    // (`path_change`), not its whole depth.
    let depth = p.stacks.depths();
    let (mut path, mut ends, mut text) = (Vec::<StackId>::new(), Vec::<usize>::new(), String::new());
    let mut opened: Vec<StackId> = Vec::new();
    for (k, s) in p.spans.iter().enumerate() {
        out.spill();
        out.push_str(if k == 0 { "\n[" } else { ",\n[" });
        if path.last().copied().unwrap_or(StackId::ROOT) != s.stack {
            let keep = path_change(p.stacks, &depth, &path, s.stack, &mut opened);
            path.truncate(keep);
            ends.truncate(keep);
            text.truncate(ends.last().copied().unwrap_or(0));
            for &y in opened.iter().rev() {
                if !path.is_empty() {
                    text.push(',');
                }
                write_int(&mut text, i64::from(ids[p.stacks.prefix[y.index()].1.index()]));
                path.push(y);
                ends.push(text.len());
            }
        }
        out.push_str(&text);
        out.push(']');
    }
    out.push_str("],\"weights\":[");
    for (k, s) in p.spans.iter().enumerate() {
        out.spill();
        if k > 0 {
            out.push(',');
        }
        number(out, s.weight);
    }
    out.push_str("]}");
}

/// The collapsed line of `stack` weighing `w` (rounded), made in `line`; false (and `line`
/// left as it was) under 1.
pub(super) fn collapsed_line(
    line: &mut String,
    names: &[String],
    stacks: &Stacks,
    stack: StackId,
    w: f64,
    prefix: Option<&str>,
) -> bool {
    let w = w.round();
    if w < 1.0 {
        return false;
    }
    line.clear();
    line.push_str(prefix.unwrap_or(""));
    if stack != StackId::ROOT {
        for f in stacks.funcs_of(stack) {
            if !line.is_empty() {
                line.push(';');
            }
            line.push_str(&names[f.index()]);
        }
    }
    if line.is_empty() {
        line.push_str("(root)");
    }
    line.push(' ');
    line.push_str(itoa::Buffer::new().format(w as u64));
    true
}

/// Collapsed stacks of `stacks`, one line per stack with weight (`a;b;c 1234`), each weight
/// rounded to a whole number (µs, or samples), lines that round to 0 left out, sorted byte by
/// byte as flame-graph tools sort them (inferno then skips its own sort). Every line starts
/// with `prefix;` when given (a thread's name, when several share a file).
#[cfg(test)]
pub(crate) fn collapsed(lines: &mut Vec<String>, stacks: &Stacks, prefix: Option<&str>) {
    CollapsedTree::new(stacks, prefix).write(lines, 0);
}

/// A thread's stacks as collapsed lines, ready to write.
///
/// The lines share long prefixes, so they are not compared as text: stacks whose functions
/// have the same names are merged into a tree of names, and each node's lines are two runs,
/// its own line (`name weight`) and those of the nodes above it (`name;…`), which sort among
/// their siblings' runs by those few bytes alone (a name holds no `;`). One walk of the tree,
/// siblings' runs in that order, writes the lines sorted.
pub struct CollapsedTree {
    /// Each node's name.
    names: Vec<String>,
    /// Each node's rounded own weight, and that of its subtree.
    own: Vec<u64>,
    below: Vec<u64>,
    children: Vec<Vec<u32>>,
    /// Each node's parent ([`NO_PARENT`] for a root).
    parent: Vec<u32>,
    roots: Vec<u32>,
    /// Rounded weight on no function.
    root: u64,
    prefix: Option<String>,
}

impl CollapsedTree {
    /// `s` as a name in collapsed stacks may be written: `;` and line breaks made `:` (the
    /// format cannot escape them), every other control character U+FFFD.
    pub fn escape(s: &str) -> String {
        collapsed_text(s)
    }

    /// A summed weight as a line of collapsed stacks carries it: rounded (0, no line, under ½).
    pub fn line_weight(w: f64) -> u64 {
        // Saturating: a negative or NaN weight is 0 too.
        w.round() as u64
    }

    /// The tree of `stacks`' names; every line will start with `prefix;` when given.
    pub fn new(stacks: &Stacks, prefix: Option<&str>) -> CollapsedTree {
        let mut tree = NameNodes::default();
        tree.extend(stacks);
        let name_of = tree.names();
        let (node_of, nodes) = (&tree.node_of, &tree.nodes);
        let mut weight = vec![0.0; nodes.len()];
        let mut root = 0.0;
        for &(s, w) in &stacks.samples {
            match node_of.get(s.index()) {
                Some(&t) => weight[t as usize] += w,
                None => root += w,
            }
        }
        let own: Vec<u64> = weight.iter().map(|&w| CollapsedTree::line_weight(w)).collect();
        // Subtrees from the leaves up: a node comes after its parent.
        let mut below = own.clone();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); nodes.len()];
        let mut roots = Vec::new();
        for t in (0..nodes.len()).rev() {
            let p = nodes[t].0;
            if p == NO_PARENT {
                roots.push(t as u32);
            } else {
                below[p as usize] += below[t];
                children[p as usize].push(t as u32);
            }
        }
        let names = nodes.iter().map(|&(_, n)| name_of[n as usize].to_owned()).collect();
        let parent = nodes.iter().map(|&(p, _)| p).collect();
        CollapsedTree {
            names,
            own,
            below,
            children,
            parent,
            roots,
            root: CollapsedTree::line_weight(root),
            prefix: prefix.map(collapsed_text),
        }
    }

    /// The sum of the lines' weights.
    pub fn total(&self) -> u64 {
        self.root + self.roots.iter().map(|&r| self.below[r as usize]).sum::<u64>()
    }

    /// Appends the lines. A subtree weighing under `fold_below` becomes one line, its root's,
    /// weighing the whole subtree, and siblings so folded that follow one another become the
    /// first one's line while their sum stays under `fold_below`: a flame graph that leaves
    /// out frames narrower than that draws exactly what it would draw from every line (the
    /// same frames at the same places; a merged line fills its siblings' span, undrawn).
    pub fn write(&self, lines: &mut Vec<String>, fold_below: u64) {
        self.each_line(fold_below, |l| lines.push(l.to_owned()));
    }

    /// Hands each line to `emit`, in order (as [`CollapsedTree::write`] appends them).
    pub fn each_line(&self, fold_below: u64, mut emit: impl FnMut(&str)) {
        let (mut line, mut path) = (String::new(), Path::default());
        for l in self.line_order(fold_below) {
            line.clear();
            self.push_line(l, &mut path, &mut line);
            emit(&line);
        }
    }

    /// Writes the lines, each ending in a newline, to `w`: made in pieces on up to `threads`
    /// threads (they are most of an export of collapsed stacks), written in order.
    pub fn write_lines(&self, fold_below: u64, threads: usize, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        /// Lines a piece: enough to be worth handing out, few enough that a piece's text (a few
        /// hundred KB) is a block the allocator reuses, not fresh pages of its own.
        const PIECE: usize = 512;
        /// A piece's text, about (a line more at most): on a deep recursion a line is hundreds
        /// of KB, and 512 of them would be held at once by each thread.
        const PIECE_BYTES: usize = 1 << 20;
        self.write_pieces(fold_below, threads, (PIECE, PIECE_BYTES), w)
    }

    /// [`CollapsedTree::write_lines`] in pieces of at most `piece.0` lines, which end once
    /// their paths' text reaches `piece.1` bytes.
    pub(crate) fn write_pieces(
        &self,
        fold_below: u64,
        threads: usize,
        piece: (usize, usize),
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let order = self.line_order(fold_below);
        let starts = self.pieces(&order, piece.0, piece.1);
        let pieces = starts.len() - 1;
        let make = |k: usize| &order[starts[k]..starts[k + 1]];
        // Buffers written come back to be filled again (a piece's text outgrows a new one).
        let spare: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let work = |lines: &[Line]| {
            let mut out = spare.lock().ok().and_then(|mut s| s.pop()).unwrap_or_default();
            let mut path = Path::default();
            for &l in lines {
                self.push_line(l, &mut path, &mut out);
                out.push('\n');
            }
            out
        };
        crate::parallel::ordered(pieces, threads, 2 * threads, make, work, |mut text| {
            w.write_all(text.as_bytes())?;
            text.clear();
            if let Ok(mut s) = spare.lock() {
                s.push(text);
            }
            Ok(())
        })
    }

    /// Where [`CollapsedTree::write_pieces`] starts its pieces, in line numbers, and the end.
    #[cfg(test)]
    pub(crate) fn piece_starts(&self, fold_below: u64, piece: (usize, usize)) -> Vec<usize> {
        self.pieces(&self.line_order(fold_below), piece.0, piece.1)
    }

    /// Where the pieces of `order` start (and, last, its end): at most `lines` lines a piece,
    /// and no more once a piece's names reach `bytes`.
    fn pieces(&self, order: &[Line], lines: usize, bytes: usize) -> Vec<usize> {
        let path_len = self.path_lens();
        let mut starts = vec![0];
        let (mut count, mut size) = (0, 0);
        for (k, l) in order.iter().enumerate() {
            if count == lines || size >= bytes {
                starts.push(k);
                (count, size) = (0, 0);
            }
            count += 1;
            size += match *l {
                Line::Node(t, _) => path_len[t as usize],
                Line::Root(_) => 0,
            };
        }
        starts.push(order.len());
        starts
    }

    /// Each node's path as its lines write it (the prefix and the names joined by `;`), in
    /// bytes.
    fn path_lens(&self) -> Vec<usize> {
        let prefix = self.prefix.as_deref().map_or(0, |p| if p.is_empty() { 0 } else { p.len() + 1 });
        let mut path_len: Vec<usize> = Vec::with_capacity(self.names.len());
        // A node comes after its parent.
        for (t, name) in self.names.iter().enumerate() {
            let p = self.parent[t];
            path_len.push(if p == NO_PARENT { prefix } else { path_len[p as usize] + 1 } + name.len());
        }
        path_len
    }

    /// The bytes of the lines [`CollapsedTree::each_line`] hands out, without newlines: known
    /// before they are made (on a deep recursion, more than any memory holds). Folding only
    /// takes lines away: [`CollapsedTree::text_len`] of 0 is the most, and costs no sort.
    pub fn text_len(&self, fold_below: u64) -> u64 {
        let path_len = self.path_lens();
        let len = |l: Line| {
            let digits = itoa::Buffer::new()
                .format(match l {
                    Line::Node(_, w) | Line::Root(w) => w,
                })
                .len();
            let path = match l {
                Line::Node(t, _) => path_len[t as usize],
                Line::Root(_) => self.prefix.as_deref().filter(|p| !p.is_empty()).map_or("(root)".len(), str::len),
            };
            (path + 1 + digits) as u64
        };
        if fold_below == 0 {
            // Every node with a weight of its own, and the weight on no function.
            let nodes = self.own.iter().enumerate().filter(|(_, &w)| w > 0).map(|(t, &w)| len(Line::Node(t as u32, w)));
            return nodes.sum::<u64>() + if self.root > 0 { len(Line::Root(self.root)) } else { 0 };
        }
        self.line_order(fold_below).into_iter().map(len).sum()
    }

    /// Appends line `l` (no newline) to `out`; `path` is the last line's, kept from one line
    /// to the next (lines that follow one another share most of it).
    fn push_line(&self, l: Line, path: &mut Path, out: &mut String) {
        let w = match l {
            Line::Root(w) => {
                // Weight on no function: the prefix alone, or `(root)`.
                out.push_str(self.prefix.as_deref().filter(|p| !p.is_empty()).unwrap_or("(root)"));
                w
            }
            Line::Node(t, w) => {
                if path.nodes.is_empty() {
                    path.text.clear();
                    path.text.push_str(self.prefix.as_deref().unwrap_or(""));
                }
                // The nodes from the root down to `t`, and how many of them the last path had.
                path.up.clear();
                let mut n = t;
                while n != NO_PARENT {
                    path.up.push(n);
                    n = self.parent[n as usize];
                }
                path.up.reverse();
                let same = path.nodes.iter().zip(&path.up).take_while(|((a, _), b)| a == *b).count();
                if same < path.nodes.len() {
                    path.text.truncate(path.nodes[same].1);
                    path.nodes.truncate(same);
                }
                for &n in &path.up[same..] {
                    path.nodes.push((n, path.text.len()));
                    if !path.text.is_empty() {
                        path.text.push(';');
                    }
                    path.text.push_str(&self.names[n as usize]);
                }
                out.push_str(&path.text);
                w
            }
        };
        out.push(' ');
        out.push_str(itoa::Buffer::new().format(w));
    }

    /// The lines in their order, as nodes and weights.
    fn line_order(&self, fold_below: u64) -> Vec<Line> {
        // A run of lines: a node's own line (with its weight), or its children's.
        #[derive(Clone, Copy)]
        enum Run {
            Own(u32, u64),
            /// A folded subtree's line, or a run of them (the first one's name, their sum).
            Folded(u32, u64),
            Above(u32),
            Root(u64),
        }
        // `out` with the runs of `list`, a node's children (or the roots), sorted with what was
        // there (the roots' `Root`); see above for `Folded`. A run sorts by its key (its line's
        // first bytes), `keys[from..to]`.
        let runs_of = |list: &[u32], keys: &mut Vec<u8>, out: &mut Vec<(usize, usize, Run)>| {
            // The siblings by name: a name that the next one starts with, followed by a byte
            // that sorts before `;` (a space, a digit), has that sibling's lines between its
            // own line and its children's, where inferno splits it in two frames; folded, it
            // would move that sibling. (Names that start with it are next in this order, those
            // with the lowest byte after it first.)
            let mut by_name = list.to_vec();
            by_name.sort_unstable_by(|&a, &b| self.names[a as usize].cmp(&self.names[b as usize]));
            let split = |t: u32| {
                let name = self.names[t as usize].as_bytes();
                let at = by_name.partition_point(|&u| self.names[u as usize].as_bytes() < name);
                by_name.get(at + 1).is_some_and(|&u| {
                    let next = self.names[u as usize].as_bytes();
                    next.len() > name.len() && next.starts_with(name) && next[name.len()] < b';'
                })
            };
            for &t in list {
                let name = self.names[t as usize].as_bytes();
                let folded = self.below[t as usize] < fold_below && !split(t);
                let parent = !folded && !self.children[t as usize].is_empty();
                let w = if folded { self.below[t as usize] } else { self.own[t as usize] };
                // A parent's own line even at 0: its first folded children may join it.
                if w > 0 || parent {
                    let from = keys.len();
                    keys.extend_from_slice(name);
                    keys.push(b' ');
                    keys.extend_from_slice(itoa::Buffer::new().format(w).as_bytes());
                    out.push((from, keys.len(), if folded { Run::Folded(t, w) } else { Run::Own(t, w) }));
                }
                if parent {
                    let from = keys.len();
                    keys.extend_from_slice(name);
                    keys.push(b';');
                    out.push((from, keys.len(), Run::Above(t)));
                }
            }
            out.sort_by(|a, b| keys[a.0..a.1].cmp(&keys[b.0..b.1]));
            let mut kept = 0;
            for i in 0..out.len() {
                if let (Run::Folded(_, w), Some((_, _, Run::Folded(_, sum)))) = (out[i].2, out[..kept].last_mut()) {
                    if *sum + w < fold_below {
                        *sum += w;
                        continue;
                    }
                }
                out.swap(kept, i);
                kept += 1;
            }
            out.truncate(kept);
        };
        let (mut keys, mut top) = (Vec::new(), Vec::new());
        if self.root > 0 {
            // Sorted as its line will be: the prefix alone (before `prefix;…`), or `(root)`.
            keys.extend_from_slice(if self.prefix.is_some() { b" " } else { b"(root) " });
            top.push((0, keys.len(), Run::Root(self.root)));
        }
        runs_of(&self.roots, &mut keys, &mut top);
        // Iterative, so any depth is safe.
        let mut todo: Vec<Run> = top.into_iter().rev().map(|(_, _, r)| r).collect();
        let (mut lines, mut sibling_runs) = (Vec::new(), Vec::new());
        while let Some(run) = todo.pop() {
            let t = match run {
                Run::Root(w) => {
                    lines.push(Line::Root(w));
                    continue;
                }
                Run::Own(t, _) | Run::Folded(t, _) | Run::Above(t) => t,
            };
            match run {
                Run::Own(_, mut w) => {
                    // Followed at once by its children, whose first folded lines, undrawn,
                    // fill the same span as that much more own weight: one line.
                    if matches!(todo.last(), Some(&Run::Above(a)) if a == t) {
                        todo.pop();
                        keys.clear();
                        sibling_runs.clear();
                        runs_of(&self.children[t as usize], &mut keys, &mut sibling_runs);
                        let lead = sibling_runs.iter().take_while(|r| matches!(r.2, Run::Folded(..))).count();
                        w += sibling_runs[..lead]
                            .iter()
                            .map(|r| if let Run::Folded(_, w) = r.2 { w } else { 0 })
                            .sum::<u64>();
                        if w > 0 {
                            lines.push(Line::Node(t, w));
                        }
                        todo.extend(sibling_runs.drain(lead..).rev().map(|(_, _, r)| r));
                    } else if w > 0 {
                        lines.push(Line::Node(t, w));
                    }
                }
                Run::Folded(_, w) => lines.push(Line::Node(t, w)),
                _ => {
                    keys.clear();
                    sibling_runs.clear();
                    runs_of(&self.children[t as usize], &mut keys, &mut sibling_runs);
                    todo.extend(sibling_runs.drain(..).rev().map(|(_, _, r)| r));
                }
            }
        }
        lines
    }
}

/// A line of a [`CollapsedTree`]: a node's path and a weight, or the weight on no function.
#[derive(Clone, Copy)]
enum Line {
    Node(u32, u64),
    Root(u64),
}

/// The path of the last line made: its text (the prefix, names joined by `;`), its nodes
/// with the text's length before each, and scratch for the next line's nodes.
#[derive(Default)]
struct Path {
    text: String,
    nodes: Vec<(u32, usize)>,
    up: Vec<u32>,
}

/// The Firefox Profiler keeps a Chrome trace's samples at least this far apart (its importer's
/// fixed interval, 0.5 ms), µs; one more keeps its sums of float deltas from dropping one.
const RESAMPLE_US: i64 = 501;

/// Samples inside spans at most (about 8.8 minutes of calls at [`RESAMPLE_US`]): where the
/// spans last longer, all are sampled further apart, so that counts stay proportional to time,
/// a viewer gets a profile it can draw, and a span of absurd length (a time delta of 1e300 µs)
/// does not make samples without end.
const MAX_RESAMPLED: i64 = 1 << 20;

/// The interval that samples the spans, from their starts and ends, in [`MAX_RESAMPLED`]
/// samples or fewer: [`RESAMPLE_US`] unless they last longer than that many.
fn resample_step(changes: impl IntoIterator<Item = (i64, i64)>, idle: i64) -> i64 {
    let mut inside: i128 = 0;
    let mut last: Option<(i64, i64)> = None;
    for (at, node) in changes {
        if let Some((from, _)) = last.filter(|l| l.1 != idle) {
            inside += i128::from(at.saturating_sub(from).max(0));
        }
        last = Some((at, node));
    }
    let need = (inside + i128::from(MAX_RESAMPLED) - 1) / i128::from(MAX_RESAMPLED);
    i64::try_from(need).map_or(i64::MAX, |n| n.max(RESAMPLE_US))
}

/// A V8 CPU profile (`{nodes, startTime, endTime, samples, timeDeltas}`, µs) of the spans, for
/// viewers that draw samples only. Node 1 is `(root)`; each stack is the node `2 + its id`,
/// parents first; the last node is `(idle)`, for the time outside every span. Samples are
/// taken where the stack changes and every [`RESAMPLE_US`] inside a span ([`resample`]).
///
/// Written to `w` through `out`, emptied whenever it holds [`FLUSH`] bytes.
pub(crate) fn cpu_profile(
    w: &mut dyn std::io::Write,
    out: &mut String,
    stacks: &Stacks,
    spans: &Spans,
    range: (f64, f64),
) -> std::io::Result<()> {
    let node = |stack: StackId| stack.index() as i64 + 2;
    let idle = stacks.prefix.len() as i64 + 2;
    let frame = |out: &mut String, name: &str, url: &str, script: &str, line: Option<i64>, column: Option<i64>| {
        out.push_str(",\"callFrame\":{\"functionName\":");
        string(out, name);
        out.push_str(",\"url\":");
        string(out, url);
        out.push_str(",\"scriptId\":");
        string(out, script);
        out.push_str(",\"lineNumber\":");
        write_int(out, line.unwrap_or(-1));
        out.push_str(",\"columnNumber\":");
        write_int(out, column.unwrap_or(-1));
        out.push_str("}}");
    };
    let mut flush = |out: &mut String| -> std::io::Result<()> {
        if out.len() >= FLUSH {
            w.write_all(out.as_bytes())?;
            out.clear();
        }
        Ok(())
    };
    out.push_str("{\"nodes\":[{\"id\":1");
    frame(out, "(root)", "", "0", None, None);
    for (k, &(parent, f)) in stacks.prefix.iter().enumerate() {
        let f = &stacks.funcs[f.index()];
        out.push_str(",{\"id\":");
        write_int(out, node(StackId::new(k)));
        out.push_str(",\"parent\":");
        write_int(out, parent.map_or(1, node));
        let script = if f.is_event() { "0" } else { f.script.as_str() };
        frame(out, &f.name, &f.url, script, f.line, f.column);
        flush(out)?;
    }
    out.push_str(",{\"id\":");
    write_int(out, idle);
    out.push_str(",\"parent\":1");
    frame(out, "(idle)", "", "0", None, None);
    out.push_str("],\"startTime\":");
    number(out, range.0);
    out.push_str(",\"endTime\":");
    number(out, range.1);
    // Where the stack changes: (µs after the start, rounded; the node from then on).
    let at = |t: f64| ((t - range.0).round() as i64).max(0);
    let changes = || {
        let mut spans = spans.iter().peekable();
        // A span's end when a gap follows it, given after its start (not a flattened pair of
        // iterators: this is made three times over every span).
        let mut end = None;
        std::iter::from_fn(move || {
            if let Some(end) = end.take() {
                return Some(end);
            }
            let s = spans.next()?;
            end = spans.peek().is_none_or(|n| n.start > s.end).then(|| (at(s.end), idle));
            Some((at(s.start), if s.stack == StackId::ROOT { idle } else { node(s.stack) }))
        })
    };
    let step = resample_step(changes(), idle);
    // Made three times, for the step and once for each list: a table of them was 16 bytes a
    // sample.
    out.push_str(",\"samples\":[");
    for (k, (_, n)) in resample(changes(), idle, step).enumerate() {
        if k > 0 {
            out.push(',');
        }
        write_int(out, n);
        flush(out)?;
    }
    out.push_str("],\"timeDeltas\":[");
    let mut last = 0;
    for (k, (t, _)) in resample(changes(), idle, step).enumerate() {
        if k > 0 {
            out.push(',');
        }
        write_int(out, t - last);
        last = t;
        flush(out)?;
    }
    out.push_str("]}");
    Ok(())
}

/// Bytes of a CPU profile gathered before they are written.
const FLUSH: usize = 256 << 10;

/// Samples from the changes (in time order): one at a change, holding the node of the last
/// change at that time; a change sooner than `step` (µs, at least [`RESAMPLE_US`]) after the
/// last sample is sampled that long after it instead, with the node then. Between changes,
/// samples come every `step` but in idle time, so that sample counts (what the Firefox
/// Profiler's call tree shows) stay proportional to time.
fn resample(changes: impl IntoIterator<Item = (i64, i64)>, idle: i64, step: i64) -> impl Iterator<Item = (i64, i64)> {
    let mut changes = changes.into_iter().peekable();
    // The last sample's time; the samples still to come inside a span (from, before, node).
    let mut last: Option<i64> = None;
    let mut inside: Option<(i64, i64, i64)> = None;
    std::iter::from_fn(move || {
        if let Some((at, before, node)) = inside.take().filter(|i| i.0 < i.1) {
            inside = Some((at.saturating_add(step), before, node));
            last = Some(at);
            return Some((at, node));
        }
        let (first, mut node) = changes.next()?;
        let t = last.map_or(first, |l| first.max(l.saturating_add(step)));
        while let Some((_, later)) = changes.next_if(|c| c.0 <= t) {
            node = later;
        }
        last = Some(t);
        if let Some(&(next, _)) = changes.peek().filter(|_| node != idle) {
            inside = Some((t.saturating_add(step), next, node));
        }
        Some((t, node))
    })
}

#[cfg(test)]
mod tests {
    use super::{resample, resample_step};

    /// By hand: a span of 2 ms is sampled every 501 µs from its start, the idle after it once;
    /// changes closer than 501 µs to the last sample wait for it and take what is current then.
    #[test]
    fn samples_every_501_us_inside_a_span_and_once_when_idle() {
        const IDLE: i64 = 9;
        let resample = |changes: &[(i64, i64)]| resample(changes.iter().copied(), IDLE, 501).collect::<Vec<_>>();
        assert_eq!(resample(&[(0, 2), (2000, IDLE)]), [(0, 2), (501, 2), (1002, 2), (1503, 2), (2004, IDLE)]);
        // main at 100, work at 200, leaf at 300, work at 600, main at 700, idle at 1100.
        let changes = [(100, 2), (200, 3), (300, 4), (600, 3), (700, 2), (1100, IDLE)];
        assert_eq!(resample(&changes), [(100, 2), (601, 3), (1102, IDLE)]);
        assert_eq!(resample(&[]), []);
    }

    /// By hand: spans of 2^20 × 501 µs in all keep 501 µs (idle time is not counted); twice
    /// that, 1002 µs; a span to the end of time a step that samples it 2^20 times, in time.
    #[test]
    fn spans_longer_than_the_samples_allow_are_sampled_further_apart() {
        const IDLE: i64 = 9;
        let full = (1i64 << 20) * 501;
        assert_eq!(resample_step([(0, 2), (full / 2, IDLE), (full * 5, 3), (full * 5 + full / 2, IDLE)], IDLE), 501);
        assert_eq!(resample_step([(0, 2), (full, 3), (2 * full, IDLE)], IDLE), 1002);
        assert_eq!(resample_step([(0, 2), (2 * full + 1, IDLE)], IDLE), 1003);
        let endless = [(0, 2), (i64::MAX, IDLE)];
        let step = resample_step(endless, IDLE);
        assert_eq!(step as u64, (i64::MAX as u64).div_ceil(1 << 20));
        let n = resample(endless, IDLE, step).count();
        assert_eq!(n, (1 << 20) + 1, "2^20 samples inside, then idle");
    }
}
