//! SVG flame graphs (or flame charts, `--by-time`), drawn by inferno from collapsed stacks.

use std::fmt::Write as _;

use jscalls::tree::CollapsedTree;
use jscalls::Error;

use super::collapsed::{lines, Lines};
use super::{thread_label, Format, Rendered};
use crate::cli::args::{ExportArgs, WeightArg};
use crate::cli::tree::{Chosen, Failure};

pub(super) const FORMAT: Format = Format {
    name: "svg",
    what: "an SVG flame graph",
    help: "An SVG flame graph (or flame chart with --by-time), drawn by inferno",
    suffix: ".svg",
    endings: &[".svg"],
    spans: false,
    counts: false,
    markers: false,
    samples: true,
    render,
};

fn render(kept: Vec<Chosen>, args: &ExportArgs, input: &str, threads: usize) -> Result<Rendered, Failure> {
    let several = kept.len() > 1;
    let min_width = inferno::flamegraph::Options::default().min_width;
    let drawn = lines(&kept, args, Some(min_width), threads)?;
    let lines: Vec<&str> = match &drawn {
        Lines::Text { text, ends } => {
            ends.iter().scan(0, |from, &end| Some(&text[std::mem::replace(from, end)..end])).collect()
        }
        Lines::Trees(_) => unreachable!("a flame graph's trees are folded"),
    };
    if lines.is_empty() {
        return Err(Failure::Input(Error::input(None, "nothing to draw: every stack weighs under 1")));
    }
    let mut opt = inferno::flamegraph::Options::default();
    // Names from the input, made safe for XML as the lines' names are.
    let input = CollapsedTree::escape(input);
    opt.title = format!("{input}: {}", if args.by_time { "flame chart" } else { "flame graph" });
    let mut sub =
        if several { format!("{} threads", kept.len()) } else { CollapsedTree::escape(&thread_label(&kept[0])) };
    let _ = write!(
        sub,
        ", {}",
        match args.select.weight {
            WeightArg::SelfTime => "estimated calls' self time (µs)",
            WeightArg::Samples => "CPU profile samples",
            WeightArg::SampleTime => "CPU profile samples' time (µs)",
        }
    );
    opt.subtitle = Some(sub);
    opt.count_name = if args.select.weight == WeightArg::Samples { "samples" } else { "µs" }.to_owned();
    opt.name_type = "Function:".to_owned();
    opt.deterministic = true;
    // A label is `name url:line:column`: keep the name when it does not fit.
    opt.text_truncate_direction = inferno::flamegraph::TextTruncateDirection::Right;
    opt.flame_chart = args.by_time;
    // Sorted already (`export::collapsed`; checked, as a label could break it); a flame
    // chart keeps its time order.
    // inferno compares the lines trimmed: so must this check, or it refuses them.
    opt.no_sort = !args.by_time && lines.windows(2).all(|w| w[0].trim() <= w[1].trim());
    if args.icicle {
        opt.direction = inferno::flamegraph::Direction::Inverted;
    }
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines.iter().copied(), &mut svg)
        .map_err(|e| Failure::Input(Error::input(None, format!("the flame graph cannot be drawn: {e}"))))?;
    Ok(Rendered::Bytes(svg))
}

#[cfg(test)]
mod tests {
    use jscalls::tree::{Func, Span, Spans, StackId, Stacks};

    /// The chart inferno draws from `lines`, by time.
    fn chart(lines: &[String]) -> Vec<u8> {
        let mut opt = inferno::flamegraph::Options::default();
        opt.flame_chart = true;
        opt.deterministic = true;
        let mut svg = Vec::new();
        inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut svg).unwrap();
        svg
    }

    proptest::proptest! {
        /// Folding what a chart cannot draw changes nothing it draws: random stacks (two
        /// functions share a label, and one is a nameless line frame) and runs of spans, a few
        /// heavy among many light ones, with and without a thread's prefix.
        #[test]
        fn a_folded_chart_is_the_chart(
            parents in proptest::collection::vec((0usize..64, 0usize..6), 1..40),
            runs in proptest::collection::vec((0usize..40, 1u32..6, proptest::bool::weighted(0.05)), 1..300),
            prefix in proptest::bool::ANY,
        ) {
            let mut st = Stacks::new();
            let func = |name: &str, line: Option<i64>| Func {
                name: name.into(), url: String::new(), script: String::new(), line, column: None,
            };
            let funcs: Vec<_> = [("a", Some(1)), ("b", None), ("a", Some(1)), ("line 4", None), ("c", None), ("d", None)]
                .into_iter()
                .map(|(n, l)| st.func(func(n, l)))
                .collect();
            let mut stacks: Vec<StackId> = Vec::new();
            for &(p, f) in &parents {
                let parent = (p < stacks.len() && p % 5 != 0).then(|| stacks[p]);
                stacks.push(st.stack(parent, funcs[f]));
            }
            let mut spans = Spans::new();
            let mut t = 0.0;
            for &(s, w, heavy) in &runs {
                let w = if heavy { 2000.0 * f64::from(w) } else { f64::from(w) };
                let stack = if s == 39 { StackId::ROOT } else { stacks[s % stacks.len()] };
                spans.push(Span { start: t, end: t + w, stack, weight: w });
                t += w;
            }
            let prefix = prefix.then_some("thread 7");
            let mut all = Vec::new();
            st.collapsed_by_time::<()>(&spans, prefix, |l| {
                all.push(l.to_owned());
                Ok(())
            })
            .unwrap();
            let runs = spans.chart_runs();
            let total = runs.iter().map(|r| r.1).sum();
            let fold = crate::cli::export::collapsed::fold_below(inferno::flamegraph::Options::default().min_width, total);
            let mut folded = Vec::new();
            st.collapsed_by_time_folded::<()>(&runs, prefix, fold, |l| {
                folded.push(l.to_owned());
                Ok(())
            })
            .unwrap();
            proptest::prop_assert!(folded.len() <= all.len());
            proptest::prop_assert_eq!(chart(&folded), chart(&all));
        }
    }
}
