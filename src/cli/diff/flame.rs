//! `jscalls diff --format svg`: a differential flame graph (inferno's), NEW's stacks drawn by
//! their self time and coloured by how they changed from BASE.
//!
//! inferno's own differential step would take both sides' collapsed stacks whole, every path
//! in full (gigabytes for large recordings). Here each thread's stacks of both sides are merged
//! into one tree of names, and what inferno would not draw is folded before it sees a line: a
//! subtree narrower than inferno's least width in NEW goes in as one line (both sides' sums),
//! so that the flame graph is byte for byte the one drawn from every line. What folding could
//! change is kept apart: a subtree whose line would sort away from its children's, one whose
//! folded change would set the colour scale (the largest change of any line), the line that
//! sets it, and a name inferno trims.

use jscalls::diff::ThreadEstimate;
use jscalls::tree::{CollapsedTree, StackId, Stacks};
use jscalls::Error;
use rustc_hash::FxHashMap;

use super::stacks::{paired, take};
use super::{write_with, DiffArgs, Header};
use crate::cli::report::failure;
use crate::cli::Failed;

/// The differential flame graph of BASE and NEW.
pub(super) fn differential(
    args: &DiffArgs,
    header: &Header,
    base: Vec<ThreadEstimate>,
    new: Vec<ThreadEstimate>,
) -> Result<(), Failed> {
    let lines = lines(base, new);
    if lines.is_empty() {
        return Err(failure(
            "the differential flame graph",
            Error::input(None, "nothing to draw: no stack weighs 1 µs"),
        ));
    }
    let svg = draw(&lines, &mut options(&header.base, &header.new))
        .map_err(|e| failure("the differential flame graph", Error::io("cannot draw it", e)))?;
    write_with(args, |w| w.write_all(&svg))
}

/// The lines inferno is given: each a stack, its weight in BASE and in NEW (µs), sorted.
fn lines(mut base: Vec<ThreadEstimate>, mut new: Vec<ThreadEstimate>) -> Vec<(String, [u64; 2])> {
    // Each thread's tree, its estimates freed as they are merged.
    let trees: Vec<Merged> = paired(&base, &new)
        .into_iter()
        .map(|(name, b, n)| {
            let (before, after) = (take(&mut base, b), take(&mut new, n));
            Merged::new(&CollapsedTree::escape(&name), before.as_ref(), after.as_ref())
        })
        .collect();
    drop((base, new));
    let total: u64 = trees.iter().map(|t| t.own.iter().map(|o| o[1]).sum::<u64>()).sum();
    // inferno scales every colour by the largest change of a line (at least 1).
    let (mut most, mut at) = (1u64, None);
    for (k, t) in trees.iter().enumerate() {
        for (x, o) in t.own.iter().enumerate() {
            let d = o[1].abs_diff(o[0]);
            if (o[0] > 0 || o[1] > 0) && d > most {
                (most, at) = (d, Some((k, x)));
            }
        }
    }
    let min_width = inferno::flamegraph::Options::default().min_width;
    let fold = crate::cli::export::fold_below(min_width, total);
    let mut roots: Vec<&str> = trees.iter().map(|t| t.names[t.name[0] as usize].as_str()).collect();
    roots.sort_unstable();
    let mut lines: Vec<(String, [u64; 2])> = Vec::new();
    for (k, t) in trees.iter().enumerate() {
        let keep = at.filter(|a| a.0 == k).map(|a| a.1);
        t.lines(&Fold { below: fold, most, keep, roots: &roots }, &mut lines);
    }
    drop(trees);
    // inferno reads a stack without the spaces that end it: two that differ only there are one.
    for l in &mut lines {
        if l.0.ends_with(char::is_whitespace) {
            l.0.truncate(l.0.trim_end().len());
        }
    }
    lines.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    lines.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 = [kept.1[0] + next.1[0], kept.1[1] + next.1[1]];
        }
        same
    });
    lines
}

/// The flame graph's options: titled by the two inputs.
fn options(base: &str, new: &str) -> inferno::flamegraph::Options<'static> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = format!("{} → {}: differential flame graph", CollapsedTree::escape(base), CollapsedTree::escape(new));
    opt.subtitle = Some(
        "widths: NEW's self time (µs); red: more self time than in BASE, blue: less (the deeper, the larger the change); \
         a function BASE has and NEW lacks is not drawn"
            .to_owned(),
    );
    opt.count_name = "µs".to_owned();
    opt.name_type = "Function:".to_owned();
    opt.deterministic = true;
    opt.text_truncate_direction = inferno::flamegraph::TextTruncateDirection::Right;
    opt
}

/// inferno's drawing of `lines` (`stack before after` each).
fn draw(lines: &[(String, [u64; 2])], opt: &mut inferno::flamegraph::Options<'_>) -> std::io::Result<Vec<u8>> {
    let mut folded = String::new();
    for (path, [before, after]) in lines {
        folded.push_str(path);
        folded.push(' ');
        folded.push_str(itoa::Buffer::new().format(*before));
        folded.push(' ');
        folded.push_str(itoa::Buffer::new().format(*after));
        folded.push('\n');
    }
    let mut svg = Vec::new();
    inferno::flamegraph::from_reader(opt, folded.as_bytes(), &mut svg)?;
    Ok(svg)
}

/// One thread's stacks of both sides as one tree of names (as collapsed stacks name them):
/// node 0 is the thread, every other node a name under its parent.
struct Merged {
    /// Each node's parent (node 0's is itself) and name.
    parent: Vec<u32>,
    name: Vec<u32>,
    names: Vec<String>,
    /// Each node's rounded own weight in BASE and in NEW (node 0's: on no function).
    own: Vec<[u64; 2]>,
}

/// What [`Merged::lines`] folds by.
struct Fold<'a> {
    /// inferno draws no frame narrower than this.
    below: u64,
    /// The largest change of any line.
    most: u64,
    /// The node of this thread whose line sets `most`, if any.
    keep: Option<usize>,
    /// Every thread's name, sorted: the threads are siblings.
    roots: &'a [&'a str],
}

impl Merged {
    fn new(thread: &str, before: Option<&Stacks>, after: Option<&Stacks>) -> Merged {
        let mut m = Merged { parent: vec![0], name: vec![0], names: vec![thread.to_owned()], own: vec![[0; 2]] };
        let mut name_id: FxHashMap<String, u32> = FxHashMap::default();
        let mut index: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let mut weight: Vec<[f64; 2]> = vec![[0.0; 2]];
        for (side, stacks) in [(0, before), (1, after)] {
            let Some(stacks) = stacks else { continue };
            // As `CollapsedTree::new` names and sums them, a side at a time.
            let func_name: Vec<u32> = stacks
                .funcs
                .iter()
                .map(|f| {
                    let label = CollapsedTree::escape(&f.label());
                    let next = m.names.len() as u32;
                    *name_id.entry(label.clone()).or_insert_with(|| {
                        m.names.push(label);
                        next
                    })
                })
                .collect();
            let mut node_of: Vec<u32> = Vec::with_capacity(stacks.len());
            for s in (0..stacks.len()).map(StackId::new) {
                let (parent, f) = stacks.frame(s);
                let key = (parent.map_or(0, |p| node_of[p.index()]), func_name[f.index()]);
                let next = m.parent.len() as u32;
                let t = *index.entry(key).or_insert(next);
                if t == next {
                    m.parent.push(key.0);
                    m.name.push(key.1);
                    weight.push([0.0; 2]);
                }
                node_of.push(t);
            }
            for &(s, w) in &stacks.samples {
                weight[node_of.get(s.index()).map_or(0, |&t| t as usize)][side] += w;
            }
        }
        m.own = weight.iter().map(|w| w.map(CollapsedTree::line_weight)).collect();
        m
    }

    /// Appends the thread's lines: each node's own, but a subtree folded into one where
    /// inferno would draw none of it and folding changes nothing it draws.
    fn lines(&self, fold: &Fold<'_>, out: &mut Vec<(String, [u64; 2])>) {
        let n = self.parent.len();
        // Subtrees' sums, from the leaves up (a node comes after its parent).
        let mut below = self.own.clone();
        for x in (1..n).rev() {
            let p = self.parent[x] as usize;
            below[p] = [below[p][0] + below[x][0], below[p][1] + below[x][1]];
        }
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        for x in 1..n {
            children[self.parent[x] as usize].push(x as u32);
        }
        // The line that sets the colour scale stays, with every node above it.
        let mut kept = vec![false; n];
        if let Some(mut x) = fold.keep {
            while x != 0 {
                kept[x] = true;
                x = self.parent[x] as usize;
            }
            kept[0] = true;
        }
        let name = |x: usize| self.names[self.name[x] as usize].as_str();
        let mut split = vec![false; n];
        split[0] = splits(name(0), fold.roots);
        let mut todo = vec![0usize];
        let mut by_name: Vec<&str> = Vec::new();
        while let Some(x) = todo.pop() {
            let [b, a] = below[x];
            let folded = !kept[x]
                && a < fold.below
                && a.abs_diff(b) <= fold.most
                && !name(x).ends_with(char::is_whitespace)
                && !split[x];
            let w = if folded { below[x] } else { self.own[x] };
            if w[0] > 0 || w[1] > 0 {
                out.push((self.path(x), w));
            }
            if !folded {
                by_name.clear();
                by_name.extend(children[x].iter().map(|&c| name(c as usize)));
                by_name.sort_unstable();
                for &c in &children[x] {
                    split[c as usize] = splits(name(c as usize), &by_name);
                }
                todo.extend(children[x].iter().map(|&c| c as usize));
            }
        }
    }

    /// A node's line's stack: the names from the thread down to it, joined by `;`.
    fn path(&self, mut x: usize) -> String {
        let mut up = vec![x];
        while x != 0 {
            x = self.parent[x] as usize;
            up.push(x);
        }
        let parts: Vec<&str> = up.iter().rev().map(|&x| self.names[self.name[x] as usize].as_str()).collect();
        parts.join(";")
    }
}

/// Whether a sibling's name (of `sorted`, which holds `name`) starts with `name` and a byte that
/// sorts before `;`: its lines sort between `name`'s own line and its children's, where
/// inferno splits `name` in two frames, and folding `name` would move that sibling. (Names
/// that start with it come right after it, those with the lowest byte after it first.)
fn splits(name: &str, sorted: &[&str]) -> bool {
    let at = sorted.partition_point(|&s| s <= name);
    sorted.get(at).is_some_and(|next| next.starts_with(name) && next.as_bytes()[name.len()] < b';')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calls document of one thread: (start, duration, depth, name, self time) a call.
    fn thread(calls: &[(f64, f64, i32, &str, f64)]) -> Vec<ThreadEstimate> {
        let calls: Vec<String> = calls
            .iter()
            .map(|&(ts, dur, depth, name, own)| {
                format!(
                    r#"{{"ts":{ts},"dur":{dur},"selfTime":{own},"depth":{depth},"nodeDepth":{depth},"nodeId":1,"sampleIndex":0,"functionName":"{name}","url":"","scriptId":"1"}}"#
                )
            })
            .collect();
        let doc = format!(
            r#"{{"format":"jscalls-calls/1","profiles":[{{"pid":1,"tid":1,"threadName":"main","calls":[{}]}}]}}"#,
            calls.join(",")
        );
        ThreadEstimate::read_calls_document(doc.as_bytes()).expect("a calls document")
    }

    /// The flame graph as inferno draws it from every line, its own differential step first.
    fn unfolded(base: &[ThreadEstimate], new: &[ThreadEstimate]) -> Vec<u8> {
        let text = |side: &[ThreadEstimate]| {
            let (mut side, mut lines) = (side.to_vec(), Vec::new());
            for k in 0..side.len() {
                let name = CollapsedTree::escape(side[k].label());
                let stacks = take(&mut side, Some(k)).expect("a thread");
                CollapsedTree::new(&stacks, Some(&name)).write(&mut lines, 0);
            }
            lines.join("\n") + "\n"
        };
        let mut folded = Vec::new();
        let opt = inferno::differential::Options::default();
        inferno::differential::from_readers(opt, text(base).as_bytes(), text(new).as_bytes(), &mut folded).unwrap();
        let mut svg = Vec::new();
        inferno::flamegraph::from_reader(&mut options("a", "b"), &folded[..], &mut svg).unwrap();
        svg
    }

    #[test]
    fn folding_what_inferno_leaves_out_draws_the_same_graph() {
        // 100 narrow subtrees (5 µs of about 100,000: inferno draws 10 µs and wider), and by
        // them what folding must leave alone: `L` (the wide `L S` sorts between its line and
        // its child's), `T ` (inferno trims its line to the wide `T`'s, not its child's), `deep`
        // (its lines change by 4 and 4, folded by 8, over the largest change of a line, 7) and
        // `m` (its child's lines change by 7 and -7: folded, the largest change would be 5,
        // `wide`'s).
        let names: Vec<String> = (0..100).map(|i| format!("n{i}")).collect();
        let mut common = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let at = 40_000.0 + 10.0 * i as f64;
            common.push((at, 5.0, 1, name.as_str(), 3.0));
            common.push((at + 1.0, 2.0, 2, "leaf", 2.0));
        }
        let at = 41_000.0;
        common.extend([
            (at, 4.0, 1, "L", 2.0),
            (at + 1.0, 2.0, 2, "k", 2.0),
            (at + 10.0, 50.0, 1, "L S", 50.0),
            (at + 70.0, 4.0, 1, "T ", 2.0),
            (at + 71.0, 2.0, 2, "u", 2.0),
            (at + 80.0, 40.0, 1, "T", 40.0),
        ]);
        let mut base = vec![(0.0, 100_000.0, 0, "main", 50_000.0), (0.0, 40_000.0, 1, "wide", 40_000.0)];
        base.extend(common.iter().copied());
        base.extend([(at + 140.0, 7.0, 1, "m", 0.0), (at + 140.0, 7.0, 2, "y", 7.0)]);
        let mut new = vec![(0.0, 100_000.0, 0, "main", 50_000.0), (0.0, 40_005.0, 1, "wide", 40_005.0)];
        new.extend(common.iter().copied());
        new.extend([
            (at + 130.0, 8.0, 1, "deep", 0.0),
            (at + 130.0, 4.0, 2, "c1", 4.0),
            (at + 134.0, 4.0, 2, "c2", 4.0),
            (at + 140.0, 7.0, 1, "m", 0.0),
            (at + 140.0, 7.0, 2, "x", 7.0),
        ]);
        let (base, new) = (thread(&base), thread(&new));
        let want = unfolded(&base, &new);
        let lines = lines(base, new);
        // The narrow subtrees went in as one line each (the thread and its root are `main`),
        // but `n1` to `n9` (`n10` to `n19` sort between `n1`'s line and its child's).
        assert!(lines.iter().any(|l| l.0 == "main;main;n42" && l.1 == [5, 5]), "{lines:?}");
        assert!(!lines.iter().any(|l| l.0 == "main;main;n42;leaf"));
        let kept = [
            "main;main;n1;leaf",
            "main;main;L;k",
            "main;main;T ;u",
            "main;main;deep;c1",
            "main;main;m;x",
            "main;main;m;y",
        ];
        for kept in kept {
            assert!(lines.iter().any(|l| l.0 == kept), "{kept} in {lines:?}");
        }
        let got = draw(&lines, &mut options("a", "b")).unwrap();
        assert!(got == want, "the folded lines draw another graph");
    }
}
