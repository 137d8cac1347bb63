//! Call trees of functions, in the Firefox Profiler's model: weighted stacks of functions
//! ([`Stacks`]), a stack of [`Transform`]s applied to them in order, and the views built from
//! the result ([`CallTree`]: top-down or inverted, and [`CallTree::functions`], the flat list).
//!
//! A function ([`Func`]) is what DevTools' call tree names a node by: function name, script
//! (its id, or else its URL), line and column; V8's native runtime frames are grouped as
//! DevTools groups them (`Parse`, `Compile`, or one "native" function). Many frames map to
//! one function, so two stacks whose frames map to the same functions are one CallNode.
//!
//! Every walk is iterative: a stack a million frames deep is as safe as a shallow one.

mod call_tree;
mod chart;
pub(crate) mod devtools;
pub use devtools::Selection;
pub(crate) mod export;
mod json;
mod names;
mod per_call;
mod samples;
mod spans;
mod transform;

use rustc_hash::FxHashMap as HashMap;

use crate::view::Thread;
pub(crate) use per_call::CallStacks;
use per_call::{samples_of_sums, Kept, PerCall};

pub use call_tree::{CallNode, CallTree};
pub use export::{CollapsedTree, Profile, ProfileKind};
pub use json::{write_json_number, write_json_str, Shown};
pub use samples::{SamplesKept, Weight};
pub use spans::{SpanCursor, Spans};
pub use transform::Transform;

/// A function of a [`Stacks`]: its index in [`Stacks::funcs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);

impl FuncId {
    /// No function (a slot not filled yet).
    pub(crate) const NONE: FuncId = FuncId(u32::MAX);

    /// The function at `index` in [`Stacks::funcs`].
    pub fn new(index: usize) -> FuncId {
        FuncId(index as u32)
    }

    /// The function's index in [`Stacks::funcs`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A stack of a [`Stacks`]: a function and the stack it was called from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(u32);

impl StackId {
    /// Samples on no function: the tree's root (after transforms dropped every function of
    /// their stack).
    pub const ROOT: StackId = StackId(u32::MAX);

    /// The stack at `index` in the prefix table (stacks are numbered from 0 as they are added).
    pub fn new(index: usize) -> StackId {
        StackId(index as u32)
    }

    /// The stack's index in the prefix table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A function: what its frames share.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Func {
    /// The function name (`Parse` / `Compile` / `(native V8Runtime)` for runtime frames).
    pub name: String,
    /// The script's URL ("" when none).
    pub url: String,
    /// The script id, as text ("" when none); identifies the script before the URL does.
    pub script: String,
    /// 0-based line, when known.
    pub line: Option<i64>,
    /// 0-based column, when known.
    pub column: Option<i64>,
}

impl Func {
    /// The function of a call frame (name, url, script id, 0-based line and column).
    pub fn of_frame(name: String, url: String, script: String, line: Option<i64>, column: Option<i64>) -> Func {
        if url == NATIVE_URL {
            // DevTools' generateEventID: runtime functions are grouped as Parse, Compile, or one.
            let group = if name.starts_with("Parse") {
                "Parse"
            } else if name.starts_with("Compile") || name.starts_with("Recompile") {
                "Compile"
            } else {
                "(native V8Runtime)"
            };
            return Func { name: group.to_owned(), url, script: String::new(), line: None, column: None };
        }
        Func { name, url, script, line, column }
    }

    /// A trace event that ran inside a call (`Layout`, `UpdateLayoutTree`, `MajorGC`, …): a
    /// function of that name, in no script (its `script` is `(trace event)`, which no V8 script id is).
    pub fn event(name: &str) -> Func {
        Func { name: name.to_owned(), url: String::new(), script: EVENT_SCRIPT.to_owned(), line: None, column: None }
    }

    /// The frame [`Stacks::from_samples_by_line`] puts under a sample's function: `line N`
    /// (1-based, as the profile recorded it) of the function's script.
    pub fn line_frame(line: f64, url: String, script: String) -> Func {
        Func {
            name: format!("line {}", crate::js::number_to_string(line)),
            url,
            script,
            line: Some(line as i64 - 1),
            column: None,
        }
    }

    /// The line (1-based) of a [`Func::line_frame`], for the exports that show a line as a
    /// place in the function above it rather than as a frame of its own.
    pub fn sample_line(&self) -> Option<u32> {
        let l = self.line.filter(|&l| l >= 0 && l < i64::from(u32::MAX) && self.column.is_none())?;
        (self.name.strip_prefix("line ")? == (l + 1).to_string()).then_some(l as u32 + 1)
    }

    /// Whether this is a trace event's function ([`Func::event`]).
    pub fn is_event(&self) -> bool {
        self.script == EVENT_SCRIPT && self.url.is_empty()
    }

    /// Whether the function is JavaScript: it belongs to a script, and is none of V8's meta
    /// frames (`(program)`, `(idle)`, `(garbage collector)`, `(root)`) or runtime functions.
    pub fn is_js(&self) -> bool {
        let in_script = !self.url.is_empty() || !(self.script.is_empty() || self.script == "0" || self.is_event());
        in_script && self.url != NATIVE_URL && !(self.name.starts_with('(') && self.name.ends_with(')'))
    }

    /// `name (url:line:column)`, 1-based as editors count, for display.
    pub fn label(&self) -> String {
        let name = if self.name.is_empty() { "(anonymous)" } else { &self.name };
        if self.url.is_empty() {
            return name.to_owned();
        }
        match (self.line, self.column) {
            (Some(l), Some(c)) if l >= 0 && c >= 0 => format!("{name} {}:{}:{}", self.url, l + 1, c + 1),
            (Some(l), _) if l >= 0 => format!("{name} {}:{}", self.url, l + 1),
            _ => format!("{name} {}", self.url),
        }
    }
}

/// The `script` of a trace event's function: V8's script ids are numbers, so no frame has it.
const EVENT_SCRIPT: &str = "(trace event)";

/// The URL V8 gives its runtime functions.
const NATIVE_URL: &str = "native V8Runtime";

/// Weighted stacks of functions: a prefix table (each stack is a parent stack plus a function)
/// and samples, each a stack and a weight.
#[derive(Debug, Clone, Default)]
pub struct Stacks {
    /// The functions, by [`FuncId`].
    pub funcs: Vec<Func>,
    func_index: HashMap<Func, FuncId>,
    /// (parent stack, function) of each stack; a parent always comes before its children.
    prefix: Vec<(Option<StackId>, FuncId)>,
    stack_index: StackIndex,
    /// (stack, weight) of each sample.
    pub samples: Vec<(StackId, f64)>,
    /// The samples' total, summed in time order, where `samples` holds less than each of
    /// them ([`SamplesKept`]); None: the total is the sum of `samples`.
    total_in_order: Option<f64>,
}

/// A stack's number by its (parent, function): the numbers alone, hashed by what the prefix
/// table holds for them (4 bytes and a control byte a stack, against 16 and one for a map of
/// keys to numbers; on a large thread this index is the biggest thing the flame chart makes).
#[derive(Debug, Clone, Default)]
struct StackIndex(hashbrown::HashTable<u32>);

fn stack_hash(key: &(Option<StackId>, FuncId)) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(key)
}

impl StackIndex {
    fn with_capacity(n: usize) -> StackIndex {
        StackIndex(hashbrown::HashTable::with_capacity(n))
    }

    /// The index of every stack of `prefix`.
    fn of(prefix: &[(Option<StackId>, FuncId)]) -> StackIndex {
        let mut index = StackIndex::with_capacity(prefix.len());
        for (k, key) in prefix.iter().enumerate() {
            index.0.insert_unique(stack_hash(key), k as u32, |&i| stack_hash(&prefix[i as usize]));
        }
        index
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// The stack `key` names, added to `prefix` when it is not there.
    fn find_or_add(&mut self, prefix: &mut Vec<(Option<StackId>, FuncId)>, key: (Option<StackId>, FuncId)) -> StackId {
        let hash = stack_hash(&key);
        let at = |i: &u32| prefix[*i as usize];
        match self.0.entry(hash, |i| at(i) == key, |i| stack_hash(&at(i))) {
            hashbrown::hash_table::Entry::Occupied(e) => StackId(*e.get()),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let id = prefix.len() as u32;
                e.insert(id);
                prefix.push(key);
                StackId(id)
            }
        }
    }
}

impl Stacks {
    /// Empty.
    pub fn new() -> Stacks {
        Stacks::default()
    }

    /// The id of `f`, added on first use.
    pub fn func(&mut self, f: Func) -> FuncId {
        if let Some(&id) = self.func_index.get(&f) {
            return id;
        }
        let id = FuncId::new(self.funcs.len());
        self.funcs.push(f.clone());
        self.func_index.insert(f, id);
        id
    }

    /// The stack `parent` + `func`, added on first use.
    pub fn stack(&mut self, parent: Option<StackId>, func: FuncId) -> StackId {
        if self.stack_index.len() != self.prefix.len() {
            // Let go by `compact`: made again.
            self.stack_index = StackIndex::of(&self.prefix);
        }
        self.stack_index.find_or_add(&mut self.prefix, (parent, func))
    }

    /// The stack of `funcs`, outermost first (None for an empty list).
    pub fn stack_of(&mut self, funcs: &[FuncId]) -> Option<StackId> {
        funcs.iter().fold(None, |parent, &f| Some(self.stack(parent, f)))
    }

    /// Lets go of what only adding stacks needs (the index that finds a stack by its parent
    /// and function; made again if one is added) and of spare capacity: for stacks kept
    /// while other work is done.
    pub fn compact(&mut self) {
        self.stack_index = StackIndex::default();
        self.prefix.shrink_to_fit();
        self.samples.shrink_to_fit();
    }

    /// Adds a sample of `weight` on `stack`.
    pub fn add(&mut self, stack: StackId, weight: f64) {
        // The total is the samples' sum again.
        self.total_in_order = None;
        self.samples.push((stack, weight));
    }

    /// How many stacks there are (ids 0 to this, parents before children).
    pub fn len(&self) -> usize {
        self.prefix.len()
    }

    /// Whether there is no stack.
    pub fn is_empty(&self) -> bool {
        self.prefix.is_empty()
    }

    /// Each stack's depth (1 for a root stack).
    pub(crate) fn depths(&self) -> Vec<u32> {
        let mut d: Vec<u32> = Vec::with_capacity(self.prefix.len());
        for &(p, _) in &self.prefix {
            let v = p.map_or(1, |p| d[p.index()] + 1);
            d.push(v);
        }
        d
    }

    /// The parent and function of `stack`.
    pub fn frame(&self, stack: StackId) -> (Option<StackId>, FuncId) {
        self.prefix[stack.index()]
    }

    /// The functions of `stack`, outermost first.
    pub fn funcs_of(&self, stack: StackId) -> Vec<FuncId> {
        let mut out = Vec::new();
        let mut s = Some(stack);
        while let Some(k) = s {
            let (p, f) = self.prefix[k.index()];
            out.push(f);
            s = p;
        }
        out.reverse();
        out
    }

    /// The function named `name` (exactly, or as `name url:line` from [`Func::label`]), if
    /// exactly one has that name; the ids of all matches otherwise.
    pub fn find_func(&self, name: &str) -> Result<FuncId, Vec<FuncId>> {
        let exact: Vec<FuncId> =
            (0..self.funcs.len()).map(FuncId::new).filter(|&f| self.funcs[f.index()].label() == name).collect();
        if exact.len() == 1 {
            return Ok(exact[0]);
        }
        let by_name: Vec<FuncId> =
            (0..self.funcs.len()).map(FuncId::new).filter(|&f| self.funcs[f.index()].name == name).collect();
        match by_name.len() {
            1 => Ok(by_name[0]),
            _ => Err(by_name),
        }
    }

    /// The total weight.
    pub fn total(&self) -> f64 {
        self.total_in_order.unwrap_or_else(|| self.samples.iter().map(|s| s.1).sum())
    }

    /// Each stack's samples, each rounded to a whole multiple of `1 / scale`, summed as those
    /// multiples: by stack index, the last slot for the root. (pprof's values; the same sums
    /// whatever the samples' order or number.)
    pub fn rounded_sums(&self, scale: f64) -> Vec<i64> {
        let root = self.len();
        let mut sums: Vec<i64> = vec![0; root + 1];
        for &(stack, w) in &self.samples {
            let k = if stack == StackId::ROOT { root } else { stack.index() };
            sums[k] += (w * scale).round() as i64;
        }
        sums
    }

    /// The samples made one a stack (in the order of the stacks) with
    /// [`Stacks::rounded_sums`], so that rounding each sample again gives back those sums
    /// (exact up to 2^52 of them).
    pub fn sum_rounded(&mut self, scale: f64) {
        let mut sums = self.rounded_sums(scale);
        let root = sums.pop();
        self.samples = samples_of_sums(&sums, root, scale);
        self.total_in_order = None;
    }

    /// The estimated calls of `thread` as samples: each call's self time (µs) on the stack of
    /// functions of the calls that enclose it. A call encloses the next while that one starts
    /// before it ends and lies deeper in the profile's tree.
    pub fn from_calls(thread: &Thread<'_>) -> Stacks {
        Stacks::calls(thread, None, PerCall::Samples).0
    }

    /// [`Stacks::from_calls`] with the calls' stacks by the calls' index, apart, and only the
    /// events' samples in the stacks (a flame chart of a profile alone, whose calls nest by
    /// their depth in its tree, keeps them all as samples: None).
    pub(crate) fn from_calls_by_index(thread: &Thread<'_>) -> (Stacks, Option<CallStacks>) {
        let (st, _, calls) = Stacks::calls(thread, None, PerCall::ByIndex);
        (st, calls)
    }

    /// [`Stacks::from_calls`] with one sample a stack: the sum of its calls' self times, each
    /// rounded to a whole multiple of `1 / scale` first (what pprof's values are), and the
    /// total of the self times unrounded, as [`Stacks::total`] of [`Stacks::from_calls`] gives
    /// it. (On a large thread, the per-call samples are most of the memory made.)
    pub fn from_calls_rounded(thread: &Thread<'_>, scale: f64) -> (Stacks, f64) {
        let (st, total, _) = Stacks::calls(thread, None, PerCall::Rounded(scale));
        (st, total)
    }

    /// [`Stacks::from_calls`], and the calls' self time as [`Span`]s in time order: a call
    /// that outlasts the call around it ends with it, one that overlaps its sibling ends where
    /// the sibling starts, so the spans nest as a flame chart needs.
    pub fn from_calls_with_spans(thread: &Thread<'_>) -> (Stacks, Spans) {
        Stacks::with_spans(thread, true)
    }

    /// [`Stacks::from_calls_with_spans`] without the samples (for what draws the spans alone):
    /// on a large thread, the per-call tables they need are most of the memory made.
    pub(crate) fn spans_of(thread: &Thread<'_>) -> (Stacks, Spans) {
        Stacks::with_spans(thread, false)
    }

    fn with_spans(thread: &Thread<'_>, samples: bool) -> (Stacks, Spans) {
        let mut spans = Spans::new();
        let per = if samples { PerCall::Samples } else { PerCall::Nothing };
        let (st, _, _) = Stacks::calls(thread, Some(&mut spans), per);
        (st, spans)
    }

    /// The calls' stacks, with what `per` asks of each call, and their total self time.
    fn calls(thread: &Thread<'_>, spans: Option<&mut Spans>, per: PerCall) -> (Stacks, f64, Option<CallStacks>) {
        let (t, strings) = thread.inner();
        // Each profile node's function, made once: many calls share a node.
        let mut func_of_node = vec![FuncId::NONE; t.model.nodes.len()];
        let func = |st: &mut Stacks, node: u32| {
            let slot = &mut func_of_node[node as usize];
            if *slot == FuncId::NONE {
                *slot = st.func(func_of(&crate::view::Frame::new(t.model.frame(node), strings)));
            }
            *slot
        };
        if t.mode == crate::estimate::Mode::PerformancePanel {
            // The Performance panel's own calls: nested by their depth in the profile's tree.
            let depths = t.node_depths();
            let calls = t.canonical_order().iter().map(|&i| {
                let c = &t.calls[i as usize];
                (c.ts, c.dur, depths[c.node as usize], c.node)
            });
            let mut st = Stacks::nest(calls, func, thread.len(), spans);
            let total = st.total();
            if let PerCall::Rounded(scale) = per {
                st.sum_rounded(scale);
            }
            return (st, total, None);
        }
        Stacks::flame_chart(t, strings, func, spans, per)
    }

    /// The stacks of DevTools' flame chart: the calls and the thread's trace events merged as
    /// its tree merges them (`treify`), so that a call's self time is DevTools' (what the
    /// calls output and the summary give). A trace event inside a call (a forced Layout, a
    /// GC, a parse) is a function of its own under it, named as the event; events outside
    /// every call (the tasks that run JS) are no part of any stack. A call that overflows the
    /// one around it has no node in DevTools' tree: its stack weighs nothing here.
    ///
    /// The samples are the calls' first, one each in the calls output's order (as the Performance
    /// panel's calls' are), then the events' (as `per` asks: see [`PerCall`]).
    fn flame_chart(
        t: &crate::estimate::ThreadCalls,
        strings: &crate::strings::Strings,
        mut func: impl FnMut(&mut Stacks, u32) -> FuncId,
        mut spans: Option<&mut Spans>,
        per: PerCall,
    ) -> (Stacks, f64, Option<CallStacks>) {
        struct Open {
            end: f64,
            self_time: f64,
            /// Its stack, for a call or an event inside one.
            stack: Option<StackId>,
            /// The call's index.
            call: Option<usize>,
        }
        let mut st = Stacks::new();
        let mut event_func: HashMap<crate::strings::StrId, FuncId> = HashMap::default();
        let entries = &t.trace_entries;
        let order = crate::estimate::tree_order(&t.calls, t.mode);
        let mut open: Vec<Open> = Vec::new();
        let mut kept = Kept::new(per, t);
        let mut cursor = f64::NEG_INFINITY;
        let close = |o: Open, kept: &mut Kept, cursor: &mut f64, spans: &mut Option<&mut Spans>| {
            if let Some(stack) = o.stack {
                if let Some(spans) = spans.as_deref_mut() {
                    emit(spans, cursor, o.end, stack);
                }
                match o.call {
                    Some(c) => kept.call(c, stack, o.self_time),
                    None => kept.event(stack, o.self_time),
                }
            }
            *cursor = cursor.max(o.end);
        };
        let (mut ei, mut ci) = (0usize, 0usize);
        loop {
            // DevTools' mergeEventsInOrder: the event first unless the call sorts before it.
            let next_call = order.get(ci);
            let take_event = match (entries.get(ei), next_call.map(|k| &t.calls[k])) {
                (Some(e), Some(c)) => e.ts < c.ts || (e.ts == c.ts && e.ts + e.dur > c.ts + c.dur),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (ts, dur, item) = if take_event {
                let e = &entries[ei];
                ei += 1;
                (e.ts, e.dur, Err(e.name))
            } else {
                let k = next_call.expect("a call");
                ci += 1;
                (t.calls[k].ts, t.calls[k].dur, Ok(k))
            };
            let end = ts + dur;
            while open.last().is_some_and(|p| ts >= p.end) {
                close(open.pop().expect("non-empty"), &mut kept, &mut cursor, &mut spans);
            }
            let parent_stack = open.last().and_then(|p| p.stack);
            if open.last().is_some_and(|p| end > p.end) {
                // Overflows its parent: no node in DevTools' tree (a call still has a stack).
                if let Ok(k) = item {
                    // Made either way: the stacks' numbering is the same with or without samples.
                    let f = func(&mut st, t.calls[k].node);
                    let stack = st.stack(parent_stack, f);
                    kept.call(k, stack, 0.0);
                }
                continue;
            }
            if let Some(p) = open.last_mut() {
                p.self_time -= dur;
            }
            let f = match item {
                Ok(k) => Some(func(&mut st, t.calls[k].node)),
                // An event of no duration takes no time; one outside every call is not the JS's.
                Err(name) if parent_stack.is_some() && dur > 0.0 => {
                    Some(*event_func.entry(name).or_insert_with(|| st.func(Func::event(strings.get(name)))))
                }
                Err(_) => None,
            };
            let stack = f.map(|f| st.stack(parent_stack, f));
            if let (Some(spans), Some(p)) = (spans.as_deref_mut(), parent_stack) {
                emit(spans, &mut cursor, ts, p);
            }
            cursor = cursor.max(ts);
            open.push(Open { end, self_time: dur, stack, call: item.ok() });
        }
        while let Some(o) = open.pop() {
            close(o, &mut kept, &mut cursor, &mut spans);
        }
        let (total, calls) = kept.finish(&mut st, t);
        (st, total, calls)
    }

    /// [`Stacks::from_calls`] for calls given as (start, duration, depth in the profile tree,
    /// function, self time), in the calls output's order (as a `jscalls-calls/1` document holds
    /// them). Each call weighs its self time in DevTools' flame chart, as an estimate's stacks
    /// weigh it: nothing for a call the chart drops (`None`).
    pub fn from_call_list(calls: impl Iterator<Item = (f64, f64, i32, Func, Option<f64>)>) -> Stacks {
        let mut selfs = Vec::new();
        let calls = calls.map(|(ts, dur, depth, func, self_time)| {
            selfs.push(self_time);
            (ts, dur, depth, func)
        });
        let mut st = Stacks::nest(calls, |st, f| st.func(f), 0, None);
        for (sample, s) in st.samples.iter_mut().zip(selfs) {
            sample.1 = s.unwrap_or(0.0);
        }
        st
    }

    /// Stacks from calls in nesting order, each (start, duration, node depth, what
    /// `func` makes its function of).
    fn nest<K>(
        calls: impl Iterator<Item = (f64, f64, i32, K)>,
        mut func: impl FnMut(&mut Stacks, K) -> FuncId,
        n: usize,
        mut spans: Option<&mut Spans>,
    ) -> Stacks {
        let mut st = Stacks::new();
        // (end, node depth, stack, index into `selfs`, end clipped to the enclosing call's) of
        // the open calls.
        let mut open: Vec<(f64, i32, StackId, usize, f64)> = Vec::new();
        let mut selfs: Vec<(StackId, f64)> = Vec::with_capacity(n);
        // Where the spans have got to.
        let mut cursor = f64::NEG_INFINITY;
        for (ts, dur, depth, func_key) in calls {
            while let Some(&(end, d, stack, _, clip)) = open.last() {
                if !(end <= ts || d >= depth) {
                    break;
                }
                if let Some(spans) = spans.as_deref_mut() {
                    emit(spans, &mut cursor, clip.min(ts), stack);
                }
                open.pop();
            }
            if let Some(spans) = spans.as_deref_mut() {
                if let Some(&(_, _, stack, _, _)) = open.last() {
                    emit(spans, &mut cursor, ts, stack);
                }
                cursor = cursor.max(ts);
            }
            let func = func(&mut st, func_key);
            let parent = open.last().map(|o| o.2);
            let stack = st.stack(parent, func);
            let clip = open.last().map_or(ts + dur, |o| (ts + dur).min(o.4));
            if let Some(&(_, _, _, k, _)) = open.last() {
                selfs[k].1 -= dur;
            }
            open.push((ts + dur, depth, stack, selfs.len(), clip));
            selfs.push((stack, dur));
        }
        if let Some(spans) = spans {
            while let Some((_, _, stack, _, clip)) = open.pop() {
                emit(spans, &mut cursor, clip, stack);
            }
        }
        st.samples = selfs;
        st
    }

    /// A copy with every stack mapped through `map`, from the outermost frame inward: `map`
    /// gets the output, the new parent, the old stack and its function, and says what the
    /// stack becomes ([`Mapped`]). Samples on no function at all stay when `keep_root`.
    fn rebuild(
        &self,
        keep_root: bool,
        mut map: impl FnMut(&mut Stacks, Option<StackId>, StackId, FuncId) -> Mapped,
    ) -> (Stacks, Remap) {
        let mut out = Stacks {
            funcs: self.funcs.clone(),
            func_index: self.func_index.clone(),
            prefix: Vec::with_capacity(self.prefix.len()),
            stack_index: StackIndex::with_capacity(self.prefix.len()),
            samples: Vec::new(),
            total_in_order: None,
        };
        let mut new: Vec<Mapped> = Vec::with_capacity(self.prefix.len());
        for (k, &(parent, func)) in self.prefix.iter().enumerate() {
            let new_parent = match parent.map(|p| new[p.index()]) {
                Some(Mapped::Drop) => {
                    new.push(Mapped::Drop);
                    continue;
                }
                Some(Mapped::To(s) | Mapped::Skip(s)) => s,
                None => None,
            };
            new.push(map(&mut out, new_parent, StackId::new(k), func));
        }
        // One sample per stack left, its weights summed in the samples' order (what building a
        // tree would do), so the transforms after this one walk stacks, not calls.
        let mut sums = vec![0.0; out.prefix.len()];
        let mut used = vec![false; out.prefix.len()];
        let mut root = None;
        let remap = Remap { new, keep_root };
        for &(s, w) in &self.samples {
            match remap.stack(s) {
                Some(StackId::ROOT) => *root.get_or_insert(0.0) += w,
                Some(n) => {
                    sums[n.index()] += w;
                    used[n.index()] = true;
                }
                None => {}
            }
        }
        out.samples = (0..out.prefix.len()).filter(|&n| used[n]).map(|n| (StackId::new(n), sums[n])).collect();
        out.samples.extend(root.map(|w| (StackId::ROOT, w)));
        (out, remap)
    }
}

/// Where [`Stacks::rebuild`] sent each stack's samples.
struct Remap {
    new: Vec<Mapped>,
    keep_root: bool,
}

impl Remap {
    /// The new stack of samples on `s` (`StackId::ROOT`: on no function), None when dropped.
    fn stack(&self, s: StackId) -> Option<StackId> {
        if s == StackId::ROOT {
            return self.keep_root.then_some(StackId::ROOT);
        }
        self.new[s.index()].samples_to().map(|n| n.unwrap_or(StackId::ROOT))
    }
}

/// A stretch of time in which one stack ran itself, inside no deeper call (or, from samples,
/// one sample's stack until the next sample), with its weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start, µs.
    pub start: f64,
    /// End, µs.
    pub end: f64,
    /// The stack (`StackId::ROOT`: no function left, after transforms).
    pub stack: StackId,
    /// What it weighs: its length for calls; 1 or the sample's time for samples.
    pub weight: f64,
}

/// Adds `stack`'s span from `cursor` to `end` (joined to the last one when it continues it).
fn emit(spans: &mut Spans, cursor: &mut f64, end: f64, stack: StackId) {
    if end > *cursor {
        match spans.last_mut() {
            Some(l) if l.stack == stack && l.end == *cursor => {
                l.end = end;
                l.weight = l.end - l.start;
            }
            _ => spans.push(Span { start: *cursor, end, stack, weight: end - *cursor }),
        }
        *cursor = end;
    }
}

/// What a stack becomes in [`Stacks::rebuild`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mapped {
    /// This stack (None: no frame left; its samples are charged to the root).
    To(Option<StackId>),
    /// Its own samples are dropped; the stacks above it go on from this one.
    Skip(Option<StackId>),
    /// Its samples, and those of every stack above it, are dropped.
    Drop,
}

impl Mapped {
    /// Where the samples of the stack go: None when they are dropped.
    fn samples_to(self) -> Option<Option<StackId>> {
        match self {
            Mapped::To(s) => Some(s),
            Mapped::Skip(_) | Mapped::Drop => None,
        }
    }
}

/// A frame's function: under its source-mapped name and at its original place when a map
/// gives them (DevTools' flame chart and trees show those), else as recorded.
pub(crate) fn func_of(f: &crate::view::Frame<'_>) -> Func {
    let (url, line, column) = match f.original_place() {
        Some((url, line, column)) => (url.to_owned(), Some(line), Some(column)),
        None => (f.url().into_owned(), f.line(), f.column()),
    };
    Func::of_frame(f.shown_name().into_owned(), url, f.script_id().into_owned(), line, column)
}

#[cfg(test)]
mod tests;
