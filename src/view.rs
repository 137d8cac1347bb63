//! The estimated calls as a library user reads them: [`Thread`], [`Call`] and [`Frame`], small
//! borrowed views over the estimate's columns and the profile's frames.

use std::borrow::Cow;

use crate::estimate::ThreadCalls;
use crate::js::Scalar;
use crate::model::profile::CallFrame;
use crate::strings::Strings;

/// One profiled thread and its estimated calls.
#[derive(Clone, Copy)]
pub struct Thread<'a> {
    t: &'a ThreadCalls,
    strings: &'a Strings,
}

impl std::fmt::Debug for Thread<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thread")
            .field("pid", &self.pid())
            .field("tid", &self.tid())
            .field("calls", &self.len())
            .finish()
    }
}

impl<'a> Thread<'a> {
    pub(crate) fn new(t: &'a ThreadCalls, strings: &'a Strings) -> Thread<'a> {
        Thread { t, strings }
    }

    /// The thread's trace events as (name, start, duration), µs, by start, when the input was
    /// read with [`crate::Config::keep_event_names`] (empty otherwise; a `.cpuprofile` has none).
    pub fn events(&self) -> impl ExactSizeIterator<Item = (&'a str, f64, f64)> + 'a {
        let strings = self.strings;
        self.t.trace_entries.iter().map(move |e| (strings.get(e.name), e.ts, e.dur))
    }

    /// The thread's calls and profile, and the strings they use.
    pub(crate) fn inner(&self) -> (&'a ThreadCalls, &'a Strings) {
        (self.t, self.strings)
    }

    /// Process id.
    pub fn pid(&self) -> i64 {
        self.t.pid
    }

    /// Thread id.
    pub fn tid(&self) -> i64 {
        self.t.tid
    }

    /// The thread's name (`CrRendererMain`, …), when the trace names it; a `.cpuprofile`'s
    /// file name for its thread.
    pub fn name(&self) -> Option<&'a str> {
        self.t.thread_name.as_deref().or(self.t.profile_name.as_deref())
    }

    /// Whether [`Thread::name`] is the recording's own name for the thread (a trace's), not a
    /// stand-in for one (a `.cpuprofile`'s file name).
    pub fn is_named_by_recording(&self) -> bool {
        self.t.thread_name.is_some()
    }

    /// Why DevTools computes no calls for this thread's profile, when it does not (Chromium's
    /// first about:blank renderer, …).
    pub fn skipped(&self) -> Option<&'static str> {
        self.t.skipped
    }

    /// The console errors DevTools' engine logs while estimating this thread ("Child stack is
    /// shallower than…"): each marks a place where its lock stack and JS stack disagreed.
    pub fn console_errors(&self) -> u64 {
        self.t.console_errors
    }

    /// The number of calls.
    pub fn len(&self) -> usize {
        self.t.calls.len()
    }

    /// Whether the thread has no calls.
    pub fn is_empty(&self) -> bool {
        self.t.calls.is_empty()
    }

    /// How many samples the thread's profile has.
    pub fn sample_count(&self) -> usize {
        self.t.model.n_samples()
    }

    /// What the file says about the thread's sampler (interval, capture lag), measured when
    /// bounds or the midway estimate were asked for.
    pub fn sampler(&self) -> Option<crate::Sampler> {
        self.t.sampler
    }

    /// The calls in the order DevTools creates them.
    pub fn calls(&self) -> impl ExactSizeIterator<Item = Call<'a>> + 'a {
        let th = *self;
        (0..self.len()).map(move |index| Call { th, index })
    }

    /// The calls in the calls output's order: start, then longer first, then outer frames first.
    pub fn calls_sorted(&self) -> impl ExactSizeIterator<Item = Call<'a>> + 'a {
        let th = *self;
        self.t.canonical_order().iter().map(move |&i| Call { th, index: i as usize })
    }

    /// The call DevTools created `index`-th.
    pub fn call(&self, index: usize) -> Call<'a> {
        assert!(index < self.len(), "call {index} of {}", self.len());
        Call { th: *self, index }
    }
}

/// One estimated call (a DevTools `ProfileCall`): when it ran, where it sits in the flame
/// chart, and its function.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    th: Thread<'a>,
    index: usize,
}

impl std::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("function", &self.frame().function_name())
            .field("ts", &self.ts())
            .field("dur", &self.dur())
            .finish()
    }
}

impl<'a> Call<'a> {
    fn raw(&self) -> &'a crate::estimate::ProfileCall {
        &self.th.t.calls[self.index]
    }

    /// Its index in [`Thread::calls`].
    pub fn index(&self) -> usize {
        self.index
    }

    /// Start, µs (the trace's clock).
    pub fn ts(&self) -> f64 {
        self.raw().ts
    }

    /// Duration, µs.
    pub fn dur(&self) -> f64 {
        self.raw().dur
    }

    /// Self time in the flame chart, µs: the duration less that of what is nested in it (calls
    /// and trace events). None when the flame chart drops the call (it overflows its parent).
    pub fn self_time(&self) -> Option<f64> {
        self.th.t.self_time.get(self.index)
    }

    /// Depth in the flame chart (trace events count as ancestors); None when it is dropped.
    pub fn depth(&self) -> Option<i32> {
        self.th.t.depth.get(self.index)
    }

    /// The id of the profile node whose frame this is.
    pub fn node_id(&self) -> i64 {
        self.th.t.model.nodes[self.raw().node as usize].id
    }

    /// The depth of that node in the profile tree (top-level frames are 0).
    pub fn node_depth(&self) -> i32 {
        self.th.t.node_depths()[self.raw().node as usize]
    }

    /// The (time-sorted) index of the sample whose stack opened the call; −1 for a frame that
    /// came from an event's `sampleTraceId`.
    pub fn sample_index(&self) -> i64 {
        i64::from(self.raw().sample_index)
    }

    /// Where the true start and end lie, µs, when [`Config::bounds`](crate::Config::bounds) was
    /// set: `[earliest start, latest start, earliest end, latest end]`, `None` on a side that
    /// nothing bounds.
    pub fn bounds(&self) -> Option<[Option<f64>; 4]> {
        self.th.t.bounds.get(self.index).map(|b| b.map(|x| (!x.is_nan()).then_some(x)))
    }

    /// The function: name, script and position.
    pub fn frame(&self) -> Frame<'a> {
        Frame { f: self.th.t.model.frame(self.raw().node), strings: self.th.strings }
    }

    /// The stack the call was on: its frame, then its caller's, down to the outermost (the
    /// profile's root node is left out).
    pub fn stack(&self) -> impl Iterator<Item = Frame<'a>> + 'a {
        let (model, strings) = (&self.th.t.model, self.th.strings);
        let mut node = self.raw().node;
        std::iter::from_fn(move || {
            let nd = model.nodes.get(node as usize)?;
            if nd.parent == crate::model::profile::NONE {
                return None;
            }
            let f = Frame { f: model.frame(node), strings };
            node = nd.parent;
            Some(f)
        })
    }
}

/// A call frame as V8 recorded it. Its members keep their JSON type, as DevTools compares them;
/// the accessors give the text JavaScript's `String(x)` would.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    f: &'a CallFrame,
    strings: &'a Strings,
}

impl std::fmt::Debug for Frame<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame").field("function_name", &self.function_name()).field("url", &self.url()).finish()
    }
}

impl<'a> Frame<'a> {
    pub(crate) fn new(f: &'a CallFrame, strings: &'a Strings) -> Frame<'a> {
        Frame { f, strings }
    }

    fn text(&self, s: Scalar) -> Cow<'a, str> {
        match s {
            Scalar::Str(id) => Cow::Borrowed(self.strings.get(id)),
            other => Cow::Owned(other.to_js_string(self.strings)),
        }
    }

    /// The function's name (empty for an anonymous function).
    pub fn function_name(&self) -> Cow<'a, str> {
        self.text(self.f.function_name)
    }

    /// The script's URL (empty for native and meta frames).
    pub fn url(&self) -> Cow<'a, str> {
        self.text(self.f.url)
    }

    /// The script's id.
    pub fn script_id(&self) -> Cow<'a, str> {
        self.text(self.f.script_id)
    }

    /// The 0-based line, when it is a number.
    pub fn line(&self) -> Option<i64> {
        integer(self.f.line_number)
    }

    /// The 0-based column, when it is a number.
    pub fn column(&self) -> Option<i64> {
        integer(self.f.column_number)
    }

    /// The frame as recorded, as source maps are looked up for it.
    pub fn key(&self) -> crate::sourcemap::FrameKey {
        crate::sourcemap::FrameKey {
            url: self.url().into_owned(),
            script_id: self.script_id().into_owned(),
            name: self.function_name().into_owned(),
            line: self.line(),
            column: self.column(),
        }
    }

    /// The name DevTools shows once source maps apply (the map's name for the function when
    /// it gives one), else the recorded [`Frame::function_name`].
    pub fn shown_name(&self) -> Cow<'a, str> {
        match self.f.original.and_then(|o| o.name) {
            Some(id) => Cow::Borrowed(self.strings.get(id)),
            None => self.function_name(),
        }
    }

    /// The original source's URL and 0-based line and column, when a source map places the
    /// frame.
    pub fn original_place(&self) -> Option<(&'a str, i64, i64)> {
        let (url, line, column) = self.f.original?.place?;
        Some((self.strings.get(url), line, column))
    }
}

fn integer(s: Scalar) -> Option<i64> {
    match s {
        Scalar::Num(n) => crate::js::whole(n),
        _ => None,
    }
}
