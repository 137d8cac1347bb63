//! Comparing estimates. Two estimates of one recording are compared call by call
//! ([`calls::diff`]); two recordings, or two groups of runs, function by function and CallNode
//! by CallNode ([`funcs::diff`]), with a rank test where there are runs. The command's
//! `--fail-on` rules turn a comparison into a verdict.
//!
//! Either side is a list of [`ThreadEstimate`]s: made from an input estimated now
//! ([`ThreadEstimate::of_thread`]) or read back from a `jscalls-calls/1` document
//! ([`ThreadEstimate::read_calls_document`]), which is also the form of the DevTools oracle's answers.

pub mod calls;
pub mod funcs;
mod packed;
mod stats;

use std::borrow::Cow;

use serde::Deserialize;

use crate::tree::{Func, FuncId, StackId, Stacks};
use crate::view::Thread;
use crate::{Error, Location};

/// One estimated call, as the calls output has it (and `jscalls-diff/1` writes it).
#[derive(Debug, Clone, Copy)]
pub struct CallRecord {
    ts: f64,
    dur: f64,
    /// NaN: none.
    self_time: f64,
    node_id: i64,
    sample_index: i64,
    /// `i32::MIN`: none.
    depth: i32,
    node_depth: i32,
}

impl CallRecord {
    /// A call: start and duration (µs), self time in the flame chart (µs) and depth there
    /// (None: the flame chart drops it), its node's depth in the profile tree, its node's id and
    /// the sample that opened it.
    pub fn new(
        ts: f64,
        dur: f64,
        self_time: Option<f64>,
        depth: Option<i32>,
        node_depth: i32,
        node_id: i64,
        sample_index: i64,
    ) -> CallRecord {
        CallRecord {
            ts,
            dur,
            self_time: self_time.filter(|t| !t.is_nan()).unwrap_or(f64::NAN),
            node_id,
            sample_index,
            depth: depth.filter(|&d| d != i32::MIN).unwrap_or(i32::MIN),
            node_depth,
        }
    }

    /// Start, µs.
    pub fn ts(&self) -> f64 {
        self.ts
    }

    /// Duration, µs.
    pub fn dur(&self) -> f64 {
        self.dur
    }

    /// Self time in the flame chart, µs (None: the flame chart drops the call).
    pub fn self_time(&self) -> Option<f64> {
        Some(self.self_time).filter(|t| !t.is_nan())
    }

    /// Depth in the flame chart (None: dropped).
    pub fn depth(&self) -> Option<i32> {
        Some(self.depth).filter(|&d| d != i32::MIN)
    }

    /// Depth of its node in the profile tree.
    pub fn node_depth(&self) -> i32 {
        self.node_depth
    }

    /// Its node's id.
    pub fn node_id(&self) -> i64 {
        self.node_id
    }

    /// The sample that opened it (−1: a frame from a `sampleTraceId`).
    pub fn sample_index(&self) -> i64 {
        self.sample_index
    }

    /// Whether `other` has the same start, duration, self time and depth.
    pub fn same_times(&self, other: &CallRecord) -> bool {
        (self.ts, self.dur, self.self_time(), self.depth) == (other.ts, other.dur, other.self_time(), other.depth)
    }
}

impl PartialEq for CallRecord {
    fn eq(&self, other: &CallRecord) -> bool {
        self.same_times(other)
            && (self.node_depth, self.node_id, self.sample_index)
                == (other.node_depth, other.node_id, other.sample_index)
    }
}

impl serde::Serialize for CallRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("CallRecord", 7)?;
        st.serialize_field("ts", &self.ts)?;
        st.serialize_field("dur", &self.dur)?;
        st.serialize_field("selfTime", &self.self_time())?;
        st.serialize_field("depth", &self.depth())?;
        st.serialize_field("nodeDepth", &self.node_depth)?;
        st.serialize_field("nodeId", &self.node_id)?;
        st.serialize_field("sampleIndex", &self.sample_index)?;
        st.end()
    }
}

/// One thread's estimated calls, in the calls output's order, with the stacks of functions
/// they nest into.
#[derive(Debug, Clone)]
pub struct ThreadEstimate {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// The thread's name, when the input gives one.
    pub name: Option<String>,
    /// Whether `name` is the recording's own (a trace's), not a stand-in (a profile's file name).
    pub named_by_recording: bool,
    /// How many samples its profile has.
    pub sample_count: u64,
    /// The calls, each with its stack and self weight (none left after
    /// [`ThreadEstimate::shed_calls`]).
    calls: packed::CallList,
    /// The stacks; while `calls` holds the calls, its samples are only those after the
    /// calls' (the events inside calls).
    stacks: Stacks,
    call_count: usize,
    /// Made for a comparison call by call ([`ThreadEstimate::of_thread_for_calls`]): each
    /// call's stack is its function alone, which nothing may read as a stack.
    calls_only: bool,
}

impl ThreadEstimate {
    /// The calls of an estimated thread.
    pub fn of_thread(th: &Thread<'_>) -> ThreadEstimate {
        let (mut stacks, by_index) = Stacks::from_calls_by_index(th);
        let list = match by_index {
            // Packed as the flame chart left them, by index: no per-call samples in between.
            Some(by_index) => {
                // Nothing is added to the stacks from here on: their index can go before the
                // calls are packed (the peak of a large thread's estimate).
                stacks.compact();
                th.calls_sorted()
                    .map(|c| {
                        let k = c.index();
                        let weight = by_index.weights.get(k, c.self_time());
                        packed::PackedCall { record: record(&c), stack: by_index.stack[k], weight }
                    })
                    .collect()
            }
            None => pack(records(th), &mut stacks),
        };
        ThreadEstimate::of_thread_list(th, list, stacks)
    }

    /// [`ThreadEstimate::of_thread`] for a comparison call by call ([`calls::diff`]), which
    /// reads each call's record and function alone: each call's stack is its function, with
    /// no callers, no events inside calls and no self weight, so what compares stacks or
    /// functions ([`funcs`], the flame graphs) cannot be given it: its stacks and self weights
    /// panic. (On a real recording's main thread, the flame chart's stacks were half of
    /// [`ThreadEstimate::of_thread`]'s time.)
    pub fn of_thread_for_calls(th: &Thread<'_>) -> ThreadEstimate {
        let (t, strings) = th.inner();
        let mut stacks = Stacks::new();
        // Each profile node's one-frame stack, made once: many calls share a node.
        let mut stack_of_node = vec![StackId::ROOT; t.model.nodes.len()];
        let list = th
            .calls_sorted()
            .map(|c| {
                let node = t.calls[c.index()].node;
                let slot = &mut stack_of_node[node as usize];
                if *slot == StackId::ROOT {
                    let f = stacks.func(crate::tree::func_of(&crate::view::Frame::new(t.model.frame(node), strings)));
                    *slot = stacks.stack(None, f);
                }
                packed::PackedCall { record: record(&c), stack: *slot, weight: 0.0 }
            })
            .collect();
        ThreadEstimate { calls_only: true, ..ThreadEstimate::of_thread_list(th, list, stacks) }
    }

    /// [`ThreadEstimate::of_list`] for thread `th`.
    fn of_thread_list(th: &Thread<'_>, list: packed::CallList, stacks: Stacks) -> ThreadEstimate {
        let t = ThreadEstimate::of_list(th.pid(), th.tid(), th.name().map(str::to_owned), list, stacks);
        ThreadEstimate { named_by_recording: th.is_named_by_recording(), sample_count: th.sample_count() as u64, ..t }
    }

    /// A thread named `name` (by its recording) of these packed calls; `stacks.samples`, the
    /// events'.
    fn of_list(
        pid: i64,
        tid: i64,
        name: Option<String>,
        mut list: packed::CallList,
        mut stacks: Stacks,
    ) -> ThreadEstimate {
        list.shrink_to_fit();
        // Kept while the other side is read: only what the comparison reads.
        stacks.compact();
        ThreadEstimate {
            pid,
            tid,
            named_by_recording: name.is_some(),
            name,
            sample_count: 0,
            call_count: list.len(),
            calls_only: false,
            calls: list,
            stacks,
        }
    }

    /// [`ThreadEstimate::of_thread`] within a window (µs): the calls that overlap it (whole, as
    /// `calls --range` keeps them), each weighing its self time inside it; the trace events
    /// inside calls likewise. The same weights as `tree --range`.
    pub fn of_thread_in(th: &Thread<'_>, (lo, hi): (f64, f64)) -> ThreadEstimate {
        let (stacks, spans) = Stacks::from_calls_with_spans(th);
        // Each stack's self-time spans, in time order.
        let mut by_stack: Vec<Vec<(f64, f64)>> = vec![Vec::new(); stacks.len()];
        for sp in spans.iter() {
            by_stack[sp.stack.index()].push((sp.start, sp.end));
        }
        let inside = |s: StackId, a: f64, b: f64| -> f64 {
            let v = &by_stack[s.index()];
            let from = v.partition_point(|x| x.1 <= a);
            v[from..].iter().take_while(|x| x.0 < b).map(|x| x.1.min(b) - x.0.max(a)).filter(|d| *d > 0.0).sum()
        };
        let mut n = 0;
        let mut calls = Vec::new();
        let mut samples = Vec::new();
        for (k, c) in records(th).enumerate() {
            n += 1;
            let dur = if c.dur.is_nan() { 0.0 } else { c.dur };
            if c.ts <= hi && c.ts + dur >= lo {
                let stack = stacks.samples[k].0;
                samples.push((stack, inside(stack, c.ts.max(lo), (c.ts + dur).min(hi))));
                calls.push(c);
            }
        }
        // The events inside calls: each stack once, with its time inside the window.
        let mut seen = vec![false; stacks.len()];
        for &(stack, _) in &stacks.samples[n..] {
            if !std::mem::replace(&mut seen[stack.index()], true) {
                samples.push((stack, inside(stack, lo, hi)));
            }
        }
        let mut stacks = stacks;
        stacks.samples = samples;
        let list = pack(calls.into_iter(), &mut stacks);
        ThreadEstimate::of_thread_list(th, list, stacks)
    }

    /// How many calls there are (or were, before [`ThreadEstimate::shed_calls`]).
    pub fn call_count(&self) -> usize {
        self.call_count
    }

    /// Frees the calls' records, keeping their count and stacks: all a comparison of two
    /// recordings function by function reads (the records are most of an estimate's memory).
    ///
    /// # Panics
    ///
    /// For an estimate made by [`ThreadEstimate::of_thread_for_calls`], which has no stacks.
    pub fn shed_calls(&mut self) {
        self.stacks_are_whole();
        if self.calls.len() > 0 {
            self.stacks.samples = self.samples();
            self.calls = packed::CallList::default();
        }
    }

    /// Takes the stacks, with every call's stack and self weight as a sample
    /// ([`ThreadEstimate::stacks`]), leaving none: the calls' records are freed.
    pub fn take_stacks(&mut self) -> Stacks {
        self.shed_calls();
        std::mem::take(&mut self.stacks)
    }

    /// The calls, in the calls output's order (none after [`ThreadEstimate::shed_calls`]).
    pub fn calls(&self) -> impl Iterator<Item = CallRecord> + '_ {
        self.calls.iter().map(|c| c.record)
    }

    /// Call `k` (`k` below [`ThreadEstimate::call_count`], before
    /// [`ThreadEstimate::shed_calls`]).
    pub fn call(&self, k: usize) -> CallRecord {
        self.calls.get(k).record
    }

    /// The calls' stacks of functions: `samples[k]` is call `k`'s stack and self weight, then
    /// come the events inside calls.
    ///
    /// # Panics
    ///
    /// For an estimate made by [`ThreadEstimate::of_thread_for_calls`], which has no stacks.
    pub fn stacks(&self) -> Cow<'_, Stacks> {
        self.stacks_are_whole();
        if self.calls.len() == 0 {
            return Cow::Borrowed(&self.stacks);
        }
        let mut st = self.stacks.clone();
        st.samples = self.samples();
        Cow::Owned(st)
    }

    /// The calls' stacks and self weights, then the events'.
    fn samples(&self) -> Vec<(StackId, f64)> {
        self.calls.iter().map(|c| (c.stack, c.weight)).chain(self.stacks.samples.iter().copied()).collect()
    }

    /// The function of call `k`.
    pub fn func_of(&self, k: usize) -> FuncId {
        let stack = if self.calls.len() == 0 { self.stacks.samples[k].0 } else { self.calls.get(k).stack };
        self.stacks.frame(stack).1
    }

    /// The function `f` (of [`ThreadEstimate::func_of`]).
    pub fn func(&self, f: FuncId) -> &Func {
        &self.stacks.funcs[f.index()]
    }

    /// An estimate made for calls alone read as stacks: a caller's mistake.
    fn stacks_are_whole(&self) {
        assert!(!self.calls_only, "an estimate made for a comparison call by call has no stacks or weights");
    }

    /// The thread's name, or "thread" when it has none.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or("thread")
    }

    /// The total of the calls' self weights, µs.
    ///
    /// # Panics
    ///
    /// For an estimate made by [`ThreadEstimate::of_thread_for_calls`], which has no weights.
    pub fn busy(&self) -> f64 {
        self.stacks_are_whole();
        // Summed in the order of `stacks().samples`, as `Stacks::total` sums them.
        self.calls.iter().map(|c| c.weight).chain(self.stacks.samples.iter().map(|s| s.1)).sum()
    }
}

/// `calls` packed with their stacks and self weights, `stacks.samples[k]` for call `k`; the
/// events' samples after them are left in `stacks`.
fn pack(calls: impl Iterator<Item = CallRecord>, stacks: &mut Stacks) -> packed::CallList {
    let list: packed::CallList = calls
        .enumerate()
        .map(|(k, record)| {
            let (stack, weight) = stacks.samples[k];
            packed::PackedCall { record, stack, weight }
        })
        .collect();
    stacks.samples.drain(..list.len());
    list
}

/// The calls of an estimated thread as records, in the calls output's order.
fn records<'a>(th: &'a Thread<'_>) -> impl Iterator<Item = CallRecord> + 'a {
    th.calls_sorted().map(|c| record(&c))
}

/// Call `c` as a record.
fn record(c: &crate::view::Call<'_>) -> CallRecord {
    CallRecord::new(c.ts(), c.dur(), c.self_time(), c.depth(), c.node_depth(), c.node_id(), c.sample_index())
}

#[derive(Deserialize)]
struct Document {
    #[serde(default)]
    profiles: Vec<Profile>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Profile {
    pid: i64,
    tid: i64,
    #[serde(default)]
    thread_name: Option<String>,
    #[serde(default)]
    sample_count: u64,
    #[serde(default)]
    calls: Vec<CallJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallJson {
    ts: f64,
    dur: f64,
    self_time: Option<f64>,
    depth: Option<i32>,
    node_depth: i32,
    node_id: i64,
    sample_index: i64,
    #[serde(deserialize_with = "js_text")]
    function_name: String,
    #[serde(deserialize_with = "js_text")]
    url: String,
    #[serde(deserialize_with = "js_text")]
    script_id: String,
    #[serde(default, deserialize_with = "position")]
    line_number: Option<i64>,
    #[serde(default, deserialize_with = "position")]
    column_number: Option<i64>,
}

/// A frame's name, URL or script id as the calls output writes it: the profile's value, which
/// may be a number or a boolean; read as [`crate::Frame::function_name`] reads the profile's
/// (its text in JavaScript), so that a document and the estimate it was written from name the
/// same functions.
fn js_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    struct Text;
    impl serde::de::Visitor<'_> for Text {
        type Value = String;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string, a number or a boolean")
        }
        fn visit_str<E>(self, v: &str) -> Result<String, E> {
            Ok(v.to_owned())
        }
        fn visit_string<E>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
        fn visit_i64<E>(self, v: i64) -> Result<String, E> {
            Ok(crate::js::number_to_string(v as f64))
        }
        fn visit_u64<E>(self, v: u64) -> Result<String, E> {
            Ok(crate::js::number_to_string(v as f64))
        }
        fn visit_f64<E>(self, v: f64) -> Result<String, E> {
            Ok(crate::js::number_to_string(v))
        }
        fn visit_bool<E>(self, v: bool) -> Result<String, E> {
            Ok(v.to_string())
        }
    }
    d.deserialize_any(Text)
}

/// A frame's line or column as the calls output writes it: the profile's value, a number that
/// may be past 64 bits or not whole, or not a number at all; read as [`crate::Frame::line`]
/// reads the profile's (a whole number, saturated; anything else none), so that a document and
/// the estimate it was written from name the same functions.
fn position<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct Position;
    impl<'de> serde::de::Visitor<'de> for Position {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number, a string, a boolean or null")
        }
        fn visit_str<E>(self, _: &str) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, v: i64) -> Result<Option<i64>, E> {
            Ok(Some(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Option<i64>, E> {
            Ok(Some(i64::try_from(v).unwrap_or(i64::MAX)))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Option<i64>, E> {
            Ok(crate::js::whole(v))
        }
        fn visit_unit<E>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<i64>, D::Error> {
            d.deserialize_any(Position)
        }
    }
    d.deserialize_option(Position)
}

impl ThreadEstimate {
    /// Whether `head` (the first bytes of an input) starts a calls document: jscalls' own
    /// (`"format":"jscalls-calls/…"`) or the DevTools oracle's (`"oracle":"trace_engine-profilecalls/…"`).
    pub fn is_calls_document(head: &[u8]) -> bool {
        let head = &head[..head.len().min(512)];
        let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
        head.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{')
            && (has(b"\"jscalls-calls/") || has(b"\"trace_engine-profilecalls/"))
    }

    /// The threads of a `jscalls-calls/1` document (or an oracle answer). Calls must be in the
    /// document's order (start, then longer first, then outer frames first), as written.
    pub fn read_calls_document(bytes: &[u8]) -> Result<Vec<ThreadEstimate>, Error> {
        let doc: Document = serde_json::from_slice(bytes).map_err(|e| {
            let location = Location { line: e.line() as u64, column: e.column() as u64, ..Location::default() };
            let message = e.to_string();
            // serde_json appends " at line L column C", which the location already says.
            let message = message.split(" at line ").next().unwrap_or(&message).to_owned();
            Error::input(Some(location), format!("not a calls document: {message}"))
        })?;
        let mut out = Vec::with_capacity(doc.profiles.len());
        for p in doc.profiles {
            let mut calls = Vec::with_capacity(p.calls.len());
            let mut list = Vec::with_capacity(p.calls.len());
            let mut last = (f64::NEG_INFINITY, f64::INFINITY);
            for (k, c) in p.calls.into_iter().enumerate() {
                if !(c.ts.is_finite() && c.dur.is_finite() && c.dur >= 0.0) || (c.ts, -c.dur) < (last.0, -last.1) {
                    return Err(Error::input(
                        None,
                        format!(
                            "thread {}:{}: call {k} is out of order or has no finite start and duration (expected the calls output's order)",
                            p.pid, p.tid
                        ),
                    ));
                }
                last = (c.ts, c.dur);
                calls.push(CallRecord::new(c.ts, c.dur, c.self_time, c.depth, c.node_depth, c.node_id, c.sample_index));
                list.push((
                    c.ts,
                    c.dur,
                    c.node_depth,
                    Func::of_frame(c.function_name, c.url, c.script_id, c.line_number, c.column_number),
                    c.self_time,
                ));
            }
            let mut stacks = Stacks::from_call_list(list.into_iter());
            let list = pack(calls.into_iter(), &mut stacks);
            let mut t = ThreadEstimate::of_list(p.pid, p.tid, p.thread_name, list, stacks);
            t.sample_count = p.sample_count;
            out.push(t);
        }
        Ok(out)
    }

    /// Whether two estimates come from one recording: the same threads, each with as many samples.
    pub fn same_recording(a: &[ThreadEstimate], b: &[ThreadEstimate]) -> bool {
        let ids = |s: &[ThreadEstimate]| {
            let mut v: Vec<(i64, i64, u64)> = s.iter().map(|t| (t.pid, t.tid, t.sample_count)).collect();
            v.sort_unstable();
            v
        };
        !a.is_empty() && ids(a) == ids(b)
    }
}
