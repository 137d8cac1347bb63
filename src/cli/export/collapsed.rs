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
    if args.by_time {
        // Written as they are made: a line per run of spans, each stack in full, is often
        // larger than the input.
        return Ok(Rendered::Stream(Box::new(move |w| {
            by_time(&kept, |line| {
                w.write_all(line.as_bytes())?;
                w.write_all(b"\n")
            })
        })));
    }
    Ok(match lines(&kept, args, None, threads)? {
        Lines::Trees(trees) => Rendered::Collapsed { trees, threads },
        Lines::Text { .. } => unreachable!("lines end to end only for a flame graph"),
    })
}

/// The collapsed lines of the chosen threads.
pub(super) enum Lines {
    /// A tree of names per thread, each written line by line.
    Trees(Vec<CollapsedTree>),
    /// The lines end to end in `text`, each ending at its `ends` entry: by time (`--by-time`),
    /// or the trees' lines with the subtrees under the fold written as one line each.
    Text { text: String, ends: Vec<usize> },
}

/// The threads sorted by label, with the prefix each line of theirs takes (none for one).
fn by_label(kept: &[Chosen]) -> Vec<(Option<String>, &Chosen)> {
    let several = kept.len() > 1;
    let mut by_label: Vec<(String, &Chosen)> = kept.iter().map(|c| (thread_label(c), c)).collect();
    by_label.sort_by(|a, b| a.0.cmp(&b.0));
    by_label.into_iter().map(|(label, c)| (several.then_some(label), c)).collect()
}

/// Each line of the threads' stacks in time order (`--by-time`), threads sorted by label.
fn by_time<E>(kept: &[Chosen], mut line: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    for (label, c) in by_label(kept) {
        c.stacks.collapsed_by_time(&c.spans, label.as_deref(), &mut line)?;
    }
    Ok(())
}

/// The threads' lines, sorted by thread label (blocks of sorted lines sorted as a whole); with
/// `fold` (a flame graph's), the trees' subtrees lighter than it folded into one line each.
pub(super) fn lines(kept: &[Chosen], args: &ExportArgs, fold: Option<f64>, threads: usize) -> Result<Lines, Failure> {
    let by_label = by_label(kept);
    if args.by_time {
        // The chart's frames too narrow to be drawn are folded, as the flame graph's are.
        let runs: Vec<_> = by_label.iter().map(|(_, c)| c.spans.chart_runs()).collect();
        let total: u64 = runs.iter().flatten().map(|r| r.1).sum();
        let fold = fold.map_or(0, |min_width| fold_below(min_width, total));
        let folded = |line: &mut dyn FnMut(&str)| {
            for ((label, c), runs) in by_label.iter().zip(&runs) {
                let _ = c.stacks.collapsed_by_time_folded::<()>(runs, label.as_deref(), fold, |l| {
                    line(l);
                    Ok(())
                });
            }
        };
        // inferno holds every line at once (their size folded only when the unfolded
        // lines' could be too large).
        let have = memory_available().unwrap_or(u64::MAX);
        let most: u64 = by_label
            .iter()
            .zip(&runs)
            .map(|((label, c), runs)| c.stacks.collapsed_by_time_len(runs, label.as_deref()))
            .sum();
        let need = if most > have {
            let mut need = 0;
            folded(&mut |l| need += l.len() as u64);
            need
        } else {
            most
        };
        if need > have {
            let what = format!(
                "the stacks by time would be {} of lines, each stack written in full, which inferno holds all at once",
                size(need)
            );
            return Err(too_large(&what, have));
        }
        let (mut text, mut ends) = (String::new(), Vec::new());
        folded(&mut |l| {
            text.push_str(l);
            ends.push(text.len());
        });
        return Ok(Lines::Text { text, ends });
    }
    let trees: Vec<CollapsedTree> =
        jscalls::threads::map(by_label, threads, |(label, c)| CollapsedTree::new(&c.stacks, label.as_deref()));
    let Some(min_width) = fold else { return Ok(Lines::Trees(trees)) };
    // inferno leaves out frames under `min_width` percent of the whole; subtrees under that
    // go in as one line each (see `CollapsedTree::write`). The lines end to end in one
    // string, not a string each: thousands of lines hundreds of bytes long.
    let total: u64 = trees.iter().map(CollapsedTree::total).sum();
    let fold = fold_below(min_width, total);
    // inferno holds every line at once, and a deep recursion's are more than any memory: that
    // is said before they are made, not found by running out of memory (the folded lines'
    // size, which takes their order, only when the unfolded ones' could be too large).
    let have = memory_available().unwrap_or(u64::MAX);
    let most: u64 = trees.iter().map(|t| t.text_len(0)).sum();
    let need = if most > have { trees.iter().map(|t| t.text_len(fold)).sum() } else { most };
    if need > have {
        let what = format!(
            "the flame graph would be drawn from {} of stacks, each written in full, which inferno holds all at once",
            size(need)
        );
        return Err(too_large(&what, have));
    }
    let (mut text, mut ends) = (String::new(), Vec::new());
    for t in &trees {
        t.each_line(fold, |l| {
            text.push_str(l);
            ends.push(text.len());
        });
    }
    Ok(Lines::Text { text, ends })
}

/// Lines that `what` says are larger than the memory available (`have`), and what to do.
fn too_large(what: &str, have: u64) -> Failure {
    Failure::Input(jscalls::Error::input(
        None,
        format!(
            "{what}: more than the {} of memory available (a deep recursion?); shorten the stacks (--transform \
             collapse-recursion:FUNCTION), or export --to speedscope or firefox, which keep each frame once",
            size(have)
        ),
    ))
}

/// The memory this process may use: `JSCALLS_MEMORY` (a number of bytes), else what the
/// system says is available (`MemAvailable`, Linux), else unknown.
fn memory_available() -> Option<u64> {
    if let Some(given) = std::env::var("JSCALLS_MEMORY").ok().and_then(|v| v.trim().parse().ok()) {
        return Some(given);
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = info.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?.trim().strip_suffix("kB")?;
    kb.trim().parse::<u64>().ok().map(|k| k * 1024)
}

/// `bytes` for a person: `6.0 TB`, `512 MB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 || v >= 100.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The least whole weight inferno draws a frame of, in a flame graph of `total` whose
/// `min_width` is given: it leaves out a frame `w` wide when `(w as f64) < min_width / (100.0
/// / total as f64)`, computed so (every weight under the result is left out).
pub(crate) fn fold_below(min_width: f64, total: u64) -> u64 {
    (min_width / (100.0 / total as f64)).ceil() as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_a_person_says_them() {
        let said: Vec<String> =
            [0, 999, 1000, 12_345, 512_000_000, 24_500_000_000, 6_000_000_000_000, 123_456_000_000_000]
                .into_iter()
                .map(super::size)
                .collect();
        assert_eq!(said, ["0 bytes", "999 bytes", "1.0 KB", "12.3 KB", "512 MB", "24.5 GB", "6.0 TB", "123 TB"]);
    }
}
