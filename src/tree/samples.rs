//! Stacks of a thread's CPU-profile samples: each sample on the stack of its node's
//! functions (and its line, by line), weighing 1 or its time, kept each or summed.

use rustc_hash::FxHashMap as HashMap;

use super::{func_of, names, Func, Span, Spans, StackId, Stacks};
use crate::Thread;

impl Stacks {
    /// The thread's CPU profile samples as samples of these stacks: the functions of each
    /// sample's node and its ancestors (the root aside), weighing 1 each, or the time to the
    /// next sample (µs; the last one, to the profile's end) with [`Weight::SampleTime`].
    pub fn from_samples(thread: &Thread<'_>, weight: Weight) -> Stacks {
        Stacks::from_samples_kept(thread, weight, false, SamplesKept::Each, None)
    }

    /// [`Stacks::from_samples`] weighing [`Weight::Samples`], with the samples on one stack as
    /// one sample (their count its weight), in the order of the stacks: the same trees and
    /// totals from a sample per stack, not one per profile sample (on a long recording, most
    /// of the memory the stacks take).
    pub fn from_sample_counts(thread: &Thread<'_>) -> Stacks {
        Stacks::from_samples_kept(thread, Weight::Samples, false, SamplesKept::PerStack, None)
    }

    /// [`Stacks::from_samples`], and each sample as a [`Span`] to the next sample, in time order.
    pub fn from_samples_with_spans(thread: &Thread<'_>, weight: Weight) -> (Stacks, Spans) {
        let mut spans = Spans::new();
        let st = Stacks::from_samples_kept(thread, weight, false, SamplesKept::Each, Some(&mut spans));
        (st, spans)
    }

    /// [`Stacks::from_samples`] with one more frame under each sample's function: the line it
    /// recorded (`line N` of the function's script), as DevTools pairs `lines` with the sorted
    /// samples. Needs the line data ([`crate::Config::keep_lines`]); a sample without a line
    /// stays on its function.
    pub fn from_samples_by_line(thread: &Thread<'_>, weight: Weight, spans: Option<&mut Spans>) -> Stacks {
        Stacks::from_samples_kept(thread, weight, true, SamplesKept::Each, spans)
    }

    /// [`Stacks::from_samples_by_line`] weighing [`Weight::Samples`], with the samples on one
    /// stack as one, as [`Stacks::from_sample_counts`] has them.
    pub fn from_sample_counts_by_line(thread: &Thread<'_>) -> Stacks {
        Stacks::from_samples_kept(thread, Weight::Samples, true, SamplesKept::PerStack, None)
    }

    /// [`Stacks::from_samples`] (with `by_line`, [`Stacks::from_samples_by_line`]), keeping of
    /// the samples what `kept` says, each as a [`Span`] in `spans` too when given.
    /// [`Stacks::total`] is the samples' total, summed in time order, whatever is kept. For the
    /// command's own memory: not part of the API.
    #[doc(hidden)]
    pub fn from_samples_kept(
        thread: &Thread<'_>,
        weight: Weight,
        by_line: bool,
        kept: SamplesKept,
        mut spans: Option<&mut Spans>,
    ) -> Stacks {
        let (t, strings) = thread.inner();
        let m = &t.model;
        let mut st = Stacks::new();
        // Each node's stack, made once, from its parent's (iteratively: any depth).
        let mut stack_of: Vec<Option<Option<StackId>>> = vec![None; m.nodes.len()];
        if let Some(root) = stack_of.first_mut() {
            *root = Some(None);
        }
        // Each sample's time and the next one's, and its line, read as the samples are: a
        // long recording's times and lines would be 16 bytes a sample held beside them.
        let mut times = (weight == Weight::SampleTime || spans.is_some()).then(|| m.timestamps_iter().peekable());
        let mut lines = m.lines.as_ref().filter(|_| by_line).map(|l| l.iter());
        // Where source maps put each line, when they did.
        let origins = m.line_origins.as_ref().filter(|_| by_line);
        // Each (function's stack, line, original file) as its own stack, made once.
        let mut line_stack: HashMap<(StackId, u64, Option<crate::strings::StrId>), StackId> = HashMap::default();
        let mut chain: Vec<u32> = Vec::new();
        // With `SamplesKept::PerStack`: each stack's samples' sum, by stack id.
        let mut sums: Vec<Option<f64>> = Vec::new();
        // Their total in time order, as `Iterator::sum` adds them.
        let mut total: Option<f64> = None;
        // With `SamplesKept::PerName`: the tree of names, and each node's first stack and sum.
        let (mut names, mut per_name) = (names::NameNodes::default(), Vec::<Option<(StackId, f64)>>::new());
        for (k, &n) in m.sample_nodes.iter().enumerate() {
            let (time, next) = times.as_mut().map_or((None, None), |t| (t.next(), t.peek().copied()));
            let line = lines.as_mut().and_then(Iterator::next);
            if n as usize >= m.nodes.len() {
                continue; // an id the profile does not have
            }
            let line = line.filter(|l| *l != 0.0 && !l.is_nan());
            // By line, a sample is at its line's function (a Firefox sample's native frames
            // above it go into the line).
            let n = if line.is_some() { m.line_node(n) } else { n };
            // Up to the nearest node whose stack is known, then down, making each.
            chain.clear();
            let mut x = n;
            while stack_of[x as usize].is_none() {
                chain.push(x);
                x = m.nodes[x as usize].parent;
            }
            let mut parent = stack_of[x as usize].expect("known");
            for &y in chain.iter().rev() {
                let func = st.func(func_of(&crate::view::Frame::new(m.frame(y), strings)));
                let s = st.stack(parent, func);
                stack_of[y as usize] = Some(Some(s));
                parent = Some(s);
            }
            let Some(mut stack) = stack_of[n as usize].expect("made") else { continue };
            if let Some(line) = line {
                let origin = origins.and_then(|o| o.lines.get(k).copied().flatten());
                let (line, url) = origin.map_or((line, None), |(u, l, _)| (l, Some(u)));
                stack = *line_stack.entry((stack, line.to_bits(), url)).or_insert_with(|| {
                    let func = match url {
                        Some(u) => Func::line_frame(line, strings.get(u).to_owned(), String::new()),
                        None => {
                            let frame = crate::view::Frame::new(m.frame(n), strings);
                            Func::line_frame(line, frame.url().into_owned(), frame.script_id().into_owned())
                        }
                    };
                    let func = st.func(func);
                    st.stack(Some(stack), func)
                });
            }
            let w = match weight {
                Weight::SampleTime => match (time, next) {
                    (Some(a), Some(b)) => (b - a) * 1000.0,
                    _ => 0.0,
                },
                _ => 1.0,
            };
            match kept {
                SamplesKept::Each => st.add(stack, w),
                SamplesKept::PerStack => {
                    if sums.len() <= stack.index() {
                        sums.resize(st.len(), None);
                    }
                    *sums[stack.index()].get_or_insert(0.0) += w;
                }
                SamplesKept::PerName => {
                    names.extend(&st);
                    per_name.resize(names.nodes.len(), None);
                    per_name[names.node_of[stack.index()] as usize].get_or_insert((stack, 0.0)).1 += w;
                }
                SamplesKept::Total => {}
            }
            total = Some(total.map_or(w, |t| t + w));
            if let (Some(spans), Some(a)) = (spans.as_deref_mut(), time) {
                let b = next.unwrap_or(a);
                spans.push(Span { start: a * 1000.0, end: b * 1000.0, stack, weight: w });
            }
        }
        if kept == SamplesKept::PerName {
            st.samples = per_name.into_iter().flatten().collect();
        }
        if kept == SamplesKept::PerStack {
            st.samples = sums.iter().enumerate().filter_map(|(k, s)| Some((StackId::new(k), (*s)?))).collect();
        }
        if kept != SamplesKept::Each {
            st.total_in_order = total;
        }
        st
    }
}

/// What [`Stacks::from_samples_kept`] keeps of the samples (the command's own; not part of
/// the API).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplesKept {
    /// Each sample.
    Each,
    /// One sample a stack, the sum of its samples' weights in time order: the same
    /// [`CallTree`]s as [`SamplesKept::Each`], bit for bit, from a sample per stack. (A function's
    /// sums in [`CallTree::functions`], and what a [`Transform`] makes of the stacks, add them
    /// in another order; with [`Weight::Samples`], whole numbers, the order does not matter.)
    PerStack,
    /// One sample a path of names (stacks named alike, frame for frame), the sum of its
    /// samples' weights in time order, on its first stack: the same [`CollapsedTree`], bit for
    /// bit, as [`SamplesKept::Each`] (see [`Stacks::sum_per_name`]).
    PerName,
    /// No sample (their spans, or their total, are all that is wanted).
    Total,
}

/// What a sample weighs in [`Stacks::from_samples`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// Each sample counts 1.
    Samples,
    /// Each sample counts the time to the next one, in µs.
    SampleTime,
}
