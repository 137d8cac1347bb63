//! `jscalls tree`: each chosen thread's calls as a call tree, transformed, as text or JSON.

use rustc_hash::FxHashMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::Arc;

mod text;

#[cfg(test)]
mod tests;

use jscalls::ranges::{Query, Selection};
use jscalls::tree::{write_json_number, write_json_str, Shown};
use jscalls::tree::{CallTree, SamplesKept, Span, Spans, Stacks, Transform, Weight};
use jscalls::{Assembled, EngineVersion, Error};

use super::args::{Global, SelectArgs, TreeArgs, TreeFormat, WeightArg};
use super::each::{self, Estimated, PerInput};
use super::files::Reads;
use super::output::Output;
use super::report::failure;
use super::Failed;
use jscalls::Config;

struct Tree<'a>(&'a TreeArgs);

impl PerInput for Tree<'_> {
    fn suffix(&self) -> &'static str {
        match self.0.format {
            TreeFormat::Json => ".tree.json",
            TreeFormat::Devtools => ".devtools-tree.json",
            TreeFormat::Text => ".tree.txt",
        }
    }

    fn shares_stdout(&self) -> bool {
        true
    }

    /// DevTools' trees read every event; jscalls' own put the events inside calls in them.
    fn keeps_event_names(&self) -> bool {
        true
    }

    fn keeps_lines(&self) -> bool {
        self.0.select.by_line
    }

    /// Trees weighed by the calls' self time read no sample once the calls are made (with
    /// `--by-line` the lines keep them).
    fn keeps_samples(&self) -> bool {
        self.0.select.weight != WeightArg::SelfTime
    }

    fn range(&self) -> Option<&Query> {
        self.0.select.range.query()
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, cfg, label, name, to_terminal, range, .. } = e;
        let args = self.0;
        if args.format == TreeFormat::Devtools {
            return output
                .write(|w| assembled.write_devtools_tree_of(w, label, range.as_ref()))
                .map_err(|err| failure(name, err));
        }
        let kept = choose(
            assembled,
            &args.select,
            range.as_ref(),
            Wants { samples: true, per_stack: !args.flat, ..Wants::default() },
        )
        .map_err(|f| match f {
            Failure::Usage(m) => Failed::Usage(m),
            Failure::Input(err) => failure(name, err),
        })?;
        let trees = Trees {
            kept: &kept,
            args,
            window: range.as_ref(),
            to_terminal,
            input: label,
            engine: cfg.engine,
            threads: cfg.threads,
            whole: (WHOLE_STACKS, WHOLE_NODES),
        };
        output
            .write(|w| trees.write(w).map_err(|err| Error::io("cannot write the tree", err)))
            .map_err(|err| failure(name, err))
    }
}

pub(crate) fn run(args: &TreeArgs, global: &Global, cfg: &Config, reads: Reads) -> Result<(), Failed> {
    super::no_bounds(global, "tree")?;
    if let (TreeFormat::Devtools, Some(opt)) = (args.format, devtools_conflicts(args)) {
        return Err(Failed::Usage(format!(
            "{opt} shapes jscalls' own trees; --format devtools writes DevTools' trees of every thread as they are"
        )));
    }
    each::run(&args.out, &Tree(args), global, cfg, reads)
}

/// Why no tree was written.
pub(crate) enum Failure {
    /// A bad option (exit 2).
    Usage(String),
    /// The input (exit 1).
    Input(Error),
}

/// One thread's stacks, ready to show.
#[cfg_attr(test, derive(Clone))]
pub(crate) struct Chosen {
    pub(crate) pid: i64,
    pub(crate) tid: i64,
    pub(crate) name: Option<String>,
    pub(crate) calls: usize,
    pub(crate) stacks: Stacks,
    /// The stacks' spans in time order (when asked for).
    pub(crate) spans: Spans,
    /// The stacks of the thread's samples, weighing a sample each (when asked for).
    pub(crate) samples: Option<Stacks>,
    /// The thread's trace events (name, start, duration in µs), when asked for: each name
    /// held once (a large trace has tens of millions of events and a few hundred names).
    pub(crate) events: Vec<(Arc<str>, f64, f64)>,
    /// The stacks' total weight (kept when their samples are let go).
    pub(crate) total: f64,
}

/// What [`choose`] keeps of each thread besides its stacks' functions.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Wants {
    /// The spans: the stacks in time.
    pub(crate) spans: bool,
    /// The stacks of the thread's samples.
    pub(crate) counts: bool,
    /// The trace events.
    pub(crate) events: bool,
    /// The stacks' samples (what draws the spans alone lets them go: one a call).
    pub(crate) samples: bool,
    /// The stacks' samples summed per stack, each first rounded to a multiple of 1/this (the
    /// whole numbers pprof writes, the same whatever the order): one a stack, not one a call.
    pub(crate) rounded: Option<f64>,
    /// Only trees read the samples: each stack's may be summed first (in time order).
    pub(crate) per_stack: bool,
    /// Only collapsed stacks read the samples: each path of names' may be summed first (in
    /// time order), a sample a line.
    pub(crate) per_name: bool,
}

/// Options that shape jscalls' own trees, which DevTools' document does not take.
pub(crate) fn devtools_conflicts(args: &TreeArgs) -> Option<&'static str> {
    [
        (args.invert, "--invert"),
        (args.flat, "--flat"),
        (args.select.thread.is_some(), "--thread"),
        (args.min_percent.is_some(), "--min-percent"),
        (args.depth.is_some(), "--depth"),
        (args.select.js_only, "--js-only"),
        (!args.select.transforms.is_empty(), "--transform"),
        (args.select.weight != WeightArg::SelfTime, "--weight"),
        (args.select.by_line, "--by-line"),
    ]
    .into_iter()
    .find(|c| c.0)
    .map(|c| c.1)
}

/// What [`choose`] makes of a thread, in parallel.
enum Made {
    /// The stacks, their spans, and their total when they are summed per stack already.
    Stacks((Stacks, Spans, Option<f64>)),
    Samples(Stacks),
}

/// The calls and samples of a thread from which its sample counts' stacks are made on
/// another core.
const ASIDE_FROM: usize = 8192;

/// Each chosen thread's stacks (and what else `wants` asks for), through `--js-only` and the
/// transforms, busiest first. A transform that fits no thread is a usage error.
pub(crate) fn choose(
    assembled: Assembled,
    sel: &SelectArgs,
    window: Option<&Selection>,
    wants: Wants,
) -> Result<Vec<Chosen>, Failure> {
    let Wants { spans, counts, events, samples: keep_samples, rounded, per_stack, per_name } = wants;
    let wanted = sel.thread.as_deref().map(ThreadSpec::parse).transpose().map_err(Failure::Usage)?;
    if sel.by_line && sel.weight == WeightArg::SelfTime {
        return Err(Failure::Usage(
            "--by-line splits the samples by their line: give --weight samples or sample-time".to_owned(),
        ));
    }
    // A range keeps the self time inside it: the calls' spans, clipped.
    if let (Some(q), true) = (sel.range.query(), sel.weight != WeightArg::SelfTime) {
        return Err(Failure::Usage(format!("{} weighs the calls' self time inside it: leave out --weight", q.flag())));
    }
    let spans = spans || window.is_some();
    // Whether a thread's stacks change after they are made.
    let reshaped = sel.js_only || !sel.transforms.is_empty() || window.is_some();
    // Each thread is shaped as it is made (its per-call tables let go before the next is made).
    let (mut n_chosen, mut kept, mut first_error) = (0, Vec::new(), None);
    assembled
        .for_each_thread(|th| {
            let name = th.name().map(str::to_owned);
            if th.is_empty() || wanted.as_ref().is_some_and(|w| !w.matches(th.pid(), th.tid(), name.as_deref())) {
                return Ok(());
            }
            let weight = match sel.weight {
                WeightArg::SelfTime => None,
                WeightArg::Samples => Some(Weight::Samples),
                WeightArg::SampleTime => Some(Weight::SampleTime),
            };
            let made = |first: bool| -> Made {
                if !first {
                    // Shaped as --js-only shapes the calls' stacks (transforms name the calls' tree).
                    // Counted per stack: what is made of them (a tree, pprof's samples) sums them.
                    let samples = Stacks::from_sample_counts(&th);
                    return Made::Samples(if sel.js_only { Transform::JsOnly.apply(&samples) } else { samples });
                }
                Made::Stacks(match (weight, spans) {
                    (Some(w), _) => {
                        // What of each sample is read: whole numbers (counts) sum alike in any
                        // order, a tree sums each stack's first, collapsed stacks each path of
                        // names', spans hold them all.
                        let kept = if !spans && (w == Weight::Samples || (per_stack && !reshaped)) {
                            SamplesKept::PerStack
                        } else if !spans && per_name && !reshaped {
                            SamplesKept::PerName
                        } else if spans && !keep_samples && !reshaped {
                            SamplesKept::Total
                        } else {
                            SamplesKept::Each
                        };
                        let mut s = Spans::new();
                        let st = Stacks::from_samples_kept(&th, w, sel.by_line, kept, spans.then_some(&mut s));
                        (st, s, None)
                    }
                    // Summed per stack as they are made, when nothing reshapes them after.
                    (None, false) => match rounded.filter(|_| keep_samples && !reshaped) {
                        Some(scale) => {
                            let (st, total) = Stacks::from_calls_rounded(&th, scale);
                            (st, Spans::new(), Some(total))
                        }
                        None => (Stacks::from_calls(&th), Spans::new(), None),
                    },
                    (None, true) => with_none(Stacks::from_calls_with_spans(&th)),
                })
            };
            // The sample counts' stacks beside the calls', on another core when there is one
            // and the thread is worth it (handing work to another core costs tens of µs, so a
            // trace of thousands of small threads would spend its time in the handing).
            let (mut stacks, mut samples) = ((Stacks::new(), Spans::new(), None), None);
            let cores = if th.len() + th.sample_count() >= ASIDE_FROM { 2 } else { 1 };
            for m in jscalls::threads::map(if counts { vec![true, false] } else { vec![true] }, cores, made) {
                match m {
                    Made::Stacks(s) => stacks = s,
                    Made::Samples(s) => samples = Some(s),
                }
            }
            let (stacks, spans, summed_total) = stacks;
            let events = if events {
                let mut names: FxHashMap<&str, Arc<str>> = FxHashMap::default();
                th.events()
                    .map(|(n, ts, dur)| (names.entry(n).or_insert_with(|| Arc::from(n)).clone(), ts, dur))
                    .collect()
            } else {
                Vec::new()
            };
            // In a range, the calls that overlap it (as `calls --range` keeps them).
            let calls = match window {
                Some(w) => th.calls_sorted().filter(|c| c.ts() <= w.max_us && c.ts() + c.dur() >= w.min_us).count(),
                None => th.len(),
            };
            n_chosen += 1;
            let mut c =
                Chosen { pid: th.pid(), tid: th.tid(), name, calls, stacks, spans, samples, events, total: 0.0 };
            if sel.js_only {
                c.stacks = Transform::JsOnly.apply_with_spans(&c.stacks, &mut c.spans);
            }
            for spec in &sel.transforms {
                match Transform::parse(spec, &c.stacks) {
                    Ok(t) => c.stacks = t.apply_with_spans(&c.stacks, &mut c.spans),
                    Err(e) => {
                        first_error.get_or_insert(e.to_string());
                        return Ok(());
                    }
                }
            }
            if let Some(w) = &window {
                clip(&mut c, (w.min_us, w.max_us));
                if c.spans.is_empty() {
                    return Ok(());
                }
            }
            if let Some(total) = summed_total {
                // Summed per stack already.
                c.total = total;
            } else {
                c.total = c.stacks.total();
                if !keep_samples {
                    c.stacks.samples = Vec::new();
                } else if let Some(scale) = rounded {
                    c.stacks.sum_rounded(scale);
                } else if per_name {
                    c.stacks.sum_per_name();
                }
            }
            kept.push(c);
            Ok(())
        })
        .map_err(Failure::Input)?;
    if let (Some(spec), 0) = (&sel.thread, n_chosen) {
        return Err(Failure::Usage(format!("--thread {spec}: no thread with calls is {spec}")));
    }
    if kept.is_empty() {
        if let Some(e) = first_error {
            return Err(Failure::Usage(e));
        }
    }
    kept.sort_by(|a, b| b.total.total_cmp(&a.total).then((a.pid, a.tid).cmp(&(b.pid, b.tid))));
    Ok(kept)
}

/// Keeps what of `c` lies in the window (µs): its spans cut to it, its stacks weighing what is
/// left of them, the trace events that overlap it (at their own times).
fn clip(c: &mut Chosen, (lo, hi): (f64, f64)) {
    c.spans.retain_mut(|s| {
        let (a, b) = (s.start.max(lo), s.end.min(hi));
        (b > a).then(|| *s = Span { start: a, end: b, weight: b - a, ..*s }).is_some()
    });
    c.stacks.samples.clear();
    for s in c.spans.iter() {
        c.stacks.add(s.stack, s.weight);
    }
    c.events.retain(|&(_, ts, dur)| ts + dur >= lo && ts <= hi);
    // The raw samples have no times here: counts of the whole thread would mislead.
    c.samples = None;
}

/// Stacks and spans with no total of their own.
fn with_none((stacks, spans): (Stacks, Spans)) -> (Stacks, Spans, Option<f64>) {
    (stacks, spans, None)
}

/// Chosen threads' trees, written as text or JSON.
struct Trees<'a> {
    kept: &'a [Chosen],
    args: &'a TreeArgs,
    window: Option<&'a Selection>,
    to_terminal: bool,
    input: &'a str,
    engine: EngineVersion,
    threads: usize,
    /// [`WHOLE_STACKS`] and [`WHOLE_NODES`] (lowered by the tests).
    whole: (usize, usize),
}

/// Text is handed to the output in blocks of this size as it is made (a tree of a long trace
/// is hundreds of MB as JSON).
const BLOCK: usize = 64 << 10;

/// Threads of at most this many stacks together have their trees made side by side, and their
/// text too where a tree has at most [`WHOLE_NODES`] nodes (about 110 bytes of text a node);
/// a larger thread's is made alone and written as it is made, so that memory does not grow
/// with it.
const WHOLE_STACKS: usize = 1 << 17;

/// See [`WHOLE_STACKS`].
const WHOLE_NODES: usize = 1 << 19;

/// A thread's part of the output, made ahead of its turn (see [`WHOLE_STACKS`]).
enum Section {
    /// Its text.
    Whole(String),
    /// Its tree (None: not made, or flat), to be written as it is made.
    Later(Option<CallTree>),
}

/// Which tree of each thread is shown.
#[derive(Clone, Copy, PartialEq)]
enum View {
    TopDown,
    Inverted,
    Flat,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::TopDown => "top-down",
            View::Inverted => "inverted",
            View::Flat => "flat",
        }
    }
}

impl Trees<'_> {
    fn write(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut failed: Option<io::Error> = None;
        let mut out = String::new();
        self.head(&mut out);
        // The threads' sections are made side by side in batches of about `WHOLE_STACKS` stacks
        // and written in order; a large one is made here at its turn and written in blocks as
        // it is made.
        let kept = self.kept;
        let mut first = 0;
        while first < kept.len() {
            let (mut end, mut stacks) = (first, 0);
            while end < kept.len() && (end == first || stacks + kept[end].stacks.len() <= self.whole.0) {
                stacks += kept[end].stacks.len();
                end += 1;
            }
            let batch: Vec<usize> = (first..end).collect();
            first = end;
            for (k, section) in jscalls::threads::map(batch, self.threads, |k| self.prepare(k)) {
                let mut part = |out: &mut String| {
                    if out.len() >= BLOCK {
                        if failed.is_none() {
                            failed = w.write_all(out.as_bytes()).err();
                        }
                        out.clear();
                    }
                };
                match section {
                    Section::Whole(text) => {
                        if failed.is_none() {
                            failed = w.write_all(out.as_bytes()).and_then(|()| w.write_all(text.as_bytes())).err();
                        }
                        out.clear();
                    }
                    Section::Later(tree) => self.section(k, tree, &mut out, &mut part),
                }
            }
            if failed.is_some() {
                break;
            }
        }
        self.tail(&mut out);
        match failed {
            Some(e) => Err(e),
            None => w.write_all(out.as_bytes()),
        }
    }

    fn view(&self) -> View {
        if self.args.flat {
            View::Flat
        } else if self.args.invert {
            View::Inverted
        } else {
            View::TopDown
        }
    }

    fn shown(&self) -> Shown {
        let args = self.args;
        Shown {
            min_percent: args.min_percent.unwrap_or(if self.to_terminal && args.format == TreeFormat::Text {
                0.5
            } else {
                0.0
            }),
            max_depth: args.depth.unwrap_or(usize::MAX),
            counts: args.select.weight == WeightArg::Samples,
        }
    }

    fn tree(&self, c: &Chosen) -> Option<CallTree> {
        match self.view() {
            View::Flat => None,
            View::Inverted => Some(CallTree::inverted(&c.stacks)),
            View::TopDown => Some(CallTree::top_down(&c.stacks)),
        }
    }

    /// Thread `k`'s section, made whole when it is small (see [`WHOLE_STACKS`]).
    fn prepare(&self, k: usize) -> (usize, Section) {
        let c = &self.kept[k];
        if c.stacks.len() > self.whole.0 {
            return (k, Section::Later(None));
        }
        let tree = self.tree(c);
        if tree.as_ref().is_some_and(|t| t.nodes.len() > self.whole.1) {
            return (k, Section::Later(tree));
        }
        let mut text = String::new();
        self.section(k, tree, &mut text, &mut |_| {});
        (k, Section::Whole(text))
    }

    /// What comes before the threads.
    fn head(&self, out: &mut String) {
        let Trees { kept, args, window, input, engine, .. } = *self;
        match args.format {
            TreeFormat::Text | TreeFormat::Devtools => {
                if let Some(w) = window {
                    let _ = writeln!(
                        out,
                        "{} {}: {}..{} ms on the trace's clock ({:.3} ms)\n",
                        w.option,
                        w.arg,
                        w.min_us / 1000.0,
                        w.max_us / 1000.0,
                        (w.max_us - w.min_us) / 1000.0
                    );
                }
                if kept.is_empty() {
                    out.push_str("no thread has estimated calls\n");
                }
            }
            TreeFormat::Json => {
                out.push_str("{\"format\":\"jscalls-tree/1\",\"input\":");
                write_json_str(out, input);
                let _ = write!(
                    out,
                    ",\"engine\":\"{}\",\"weight\":\"{}\",\"view\":\"{}\",\"jsOnly\":{},\"transforms\":[",
                    engine.label(),
                    match args.select.weight {
                        WeightArg::SelfTime => "self-time-us",
                        WeightArg::Samples => "samples",
                        WeightArg::SampleTime => "sample-time-us",
                    },
                    self.view().name(),
                    args.select.js_only
                );
                for (k, t) in args.select.transforms.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    write_json_str(out, t);
                }
                out.push(']');
                if let Some(w) = window {
                    out.push_str(",\"range\":{");
                    w.write_json_fields(out);
                    out.push('}');
                }
                out.push_str(",\"threads\":[");
            }
        }
    }

    /// What comes after the threads.
    fn tail(&self, out: &mut String) {
        if self.args.format == TreeFormat::Json {
            out.push_str("]}\n");
        }
    }

    /// Thread `k`'s section, of `tree` (made here when None and the view has one); `part` is
    /// handed the text as it grows (it may take it).
    fn section(&self, k: usize, tree: Option<CallTree>, out: &mut String, part: &mut dyn FnMut(&mut String)) {
        let (args, c, shown, view) = (self.args, &self.kept[k], self.shown(), self.view());
        let tree = tree.or_else(|| self.tree(c));
        match args.format {
            TreeFormat::Text | TreeFormat::Devtools => {
                let total = c.stacks.total();
                let what = match args.select.weight {
                    WeightArg::SelfTime => format!("{:.3} ms in {} calls", total / 1000.0, c.calls),
                    WeightArg::Samples => format!("{total} samples"),
                    WeightArg::SampleTime => format!("{:.3} ms of samples", total / 1000.0),
                };
                let name = c.name.as_deref().unwrap_or("thread");
                // --js-only charges native frames and trace events to their JS caller: said so.
                let js_only = if args.select.js_only { ", JS only (the rest charged to its JS caller)" } else { "" };
                let _ = writeln!(out, "{name} (pid {}, tid {}): {what}, {}{js_only}", c.pid, c.tid, view.name());
                match &tree {
                    None => text::flat_text(out, &c.stacks, total, shown),
                    Some(tree) => text::text(out, &c.stacks, tree, shown, part),
                }
                out.push('\n');
            }
            TreeFormat::Json => {
                if k > 0 {
                    out.push(',');
                }
                let _ = write!(out, "\n{{\"pid\":{},\"tid\":{},\"name\":", c.pid, c.tid);
                match &c.name {
                    Some(n) => write_json_str(out, n),
                    None => out.push_str("null"),
                }
                let _ = write!(out, ",\"calls\":{},\"total\":", c.calls);
                write_json_number(out, c.stacks.total());
                match &tree {
                    None => {
                        out.push_str(",\"functions\":[");
                        c.stacks.write_flat_json_in_parts(out, c.stacks.total(), shown, part);
                    }
                    Some(tree) => {
                        out.push_str(",\"rootSelf\":");
                        write_json_number(out, tree.root_self);
                        out.push_str(",\"roots\":[");
                        tree.write_json_in_parts(out, &c.stacks, shown, part);
                    }
                }
                out.push_str("]}");
            }
        }
    }
}

/// `--thread`: `PID:TID` or a thread name.
pub(crate) enum ThreadSpec {
    Ids(i64, i64),
    Name(String),
}

impl ThreadSpec {
    pub(crate) fn parse(s: &str) -> Result<ThreadSpec, String> {
        if let Some((p, t)) = s.split_once(':') {
            if let (Ok(p), Ok(t)) = (p.trim().parse(), t.trim().parse()) {
                return Ok(ThreadSpec::Ids(p, t));
            }
        }
        if s.is_empty() {
            return Err("--thread: expected PID:TID or a thread name".to_owned());
        }
        Ok(ThreadSpec::Name(s.to_owned()))
    }

    pub(crate) fn matches(&self, pid: i64, tid: i64, name: Option<&str>) -> bool {
        match self {
            ThreadSpec::Ids(p, t) => *p == pid && *t == tid,
            ThreadSpec::Name(n) => name == Some(n.as_str()),
        }
    }
}
