//! Collapsed ("folded") stacks, `a;b;c 1234` per stack: the input of every flame-graph tool.

use jscalls::tree::CollapsedTree;

use super::{thread_label, Format, Rendered};
use crate::cli::args::ExportArgs;
use crate::cli::tree::{Chosen, Failure};

pub(super) const FORMAT: Format = Format {
    name: "collapsed",
    what: "collapsed stacks",
    help: "`a;b;c 1234` per stack: self time in whole µs (or samples), the input of flame-graph tools",
    suffix: ".collapsed",
    endings: &[".collapsed", ".folded", ".collapsed.txt"],
    spans: false,
    counts: false,
    markers: false,
    samples: true,
    render,
};

fn render(kept: Vec<Chosen>, args: &ExportArgs, _input: &str, threads: usize) -> Result<Rendered, Failure> {
    Ok(match lines(&kept, args, None, threads) {
        Lines::Trees(trees) => Rendered::Collapsed { trees, threads },
        Lines::Each(lines) => Rendered::Lines(lines),
        Lines::Folded { .. } => unreachable!("folded only for a flame graph"),
    })
}

/// The collapsed lines of the chosen threads.
pub(super) enum Lines {
    /// By time (`--by-time`), a line each.
    Each(Vec<String>),
    /// A tree of names per thread, each written line by line.
    Trees(Vec<CollapsedTree>),
    /// The trees' lines end to end in `text`, each ending at its `ends` entry (subtrees under
    /// the fold written as one line each).
    Folded { text: String, ends: Vec<usize> },
}

/// The threads' lines, sorted by thread label (blocks of sorted lines sorted as a whole); with
/// `fold` (a flame graph's), the trees' subtrees lighter than it folded into one line each.
pub(super) fn lines(kept: &[Chosen], args: &ExportArgs, fold: Option<f64>, threads: usize) -> Lines {
    let several = kept.len() > 1;
    let mut by_label: Vec<(String, &Chosen)> = kept.iter().map(|c| (thread_label(c), c)).collect();
    by_label.sort_by(|a, b| a.0.cmp(&b.0));
    if args.by_time {
        let mut lines = Vec::new();
        for (label, c) in by_label {
            c.stacks.collapsed_by_time(&mut lines, &c.spans, several.then_some(label).as_deref());
        }
        return Lines::Each(lines);
    }
    let trees: Vec<CollapsedTree> = jscalls::threads::map(by_label, threads, |(label, c)| {
        CollapsedTree::new(&c.stacks, several.then_some(label.as_str()))
    });
    let Some(min_width) = fold else { return Lines::Trees(trees) };
    // inferno leaves out frames under `min_width` percent of the whole; subtrees under that
    // go in as one line each (see `CollapsedTree::write`). The lines end to end in one
    // string, not a string each: thousands of lines hundreds of bytes long.
    let total: u64 = trees.iter().map(CollapsedTree::total).sum();
    let fold = fold_below(min_width, total);
    let (mut text, mut ends) = (String::new(), Vec::new());
    for t in &trees {
        t.each_line(fold, |l| {
            text.push_str(l);
            ends.push(text.len());
        });
    }
    Lines::Folded { text, ends }
}

/// The least whole weight inferno draws a frame of, in a flame graph of `total` whose
/// `min_width` is given: it leaves out a frame `w` wide when `(w as f64) < min_width / (100.0
/// / total as f64)`, computed so (every weight under the result is left out).
fn fold_below(min_width: f64, total: u64) -> u64 {
    (min_width / (100.0 / total as f64)).ceil() as u64
}
