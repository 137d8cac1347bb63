//! DevTools' own Call tree and Bottom-up (`TraceTree`: TopDownRootNode, BottomUpRootNode, node
//! identity by `generateEventID`) for each thread, as the `devtools-tree/1` document of the
//! reference oracle (`../shared/oracle/README.md`, "Call trees").
//!
//! One walk per tree, in the engine's `forEachEvent` order, doing the engine's floating-point
//! operations on each node in the engine's order, so that every value is the engine's to the bit:
//! durations in ms from `ts / 1000` and `(ts + dur) / 1000`, clipped to the trace bounds;
//! partial overlaps nest; a recursive function's callers get less than the time spent.

use itertools::Itertools;
use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;
use std::io::{self, Write};

use crate::estimate::{Estimates, Mode, ThreadCalls, TraceEntry};
use crate::js::{write_json_string, write_number, Scalar, Spill};
use crate::model::profile::CallFrame;
use crate::strings::{StrId, Strings};

/// One event of a set: a call (its index) or a trace event (its index), with its times.
/// Made from the set's [`Item`] where it is read.
#[derive(Debug, Clone, Copy)]
struct Ev {
    ts: f64,
    dur: f64,
    /// Index into the set's ids.
    id: u32,
    what: What,
    top_level: bool,
    run_task: bool,
}

/// An event as a set holds it: a call's index, or a trace event's with [`TRACE`] set (4
/// bytes an event, not an [`Ev`]'s 32: a set holds every call of its thread).
type Item = u32;

/// The bit of an [`Item`] that makes it a trace event.
const TRACE: Item = 1 << 31;

#[derive(Debug, Clone, Copy)]
enum What {
    Call(u32),
    Trace(u32),
}

pub use crate::ranges::Selection;

/// A thread with at most this many calls and trace events has its four trees (top-down and
/// bottom-up, of its calls and of all its events) made side by side, each held as text until
/// it is written (about 55 bytes an event); a larger one's are written as they are made, one
/// after the other, so that memory does not grow with the thread.
const SIDE_BY_SIDE: usize = 500_000;

/// Writes the document for every thread of `t` with calls, over the trace (`bounds`, µs) or
/// the `range` selected in it, on up to `threads` threads.
pub(crate) fn write(
    out: &mut dyn Write,
    mut t: impl Estimates,
    bounds: (f64, f64),
    range: Option<&Selection>,
    input: &str,
    engine: &str,
    threads: usize,
) -> io::Result<()> {
    let mode = t.mode();
    // Written as it is made: a long thread's trees are larger than its calls.
    let mut s = Spill::new(out);
    s.push_str("{\n\"format\":\"devtools-tree/1\",\n\"engine\":");
    write_json_string(&mut s, engine);
    s.push_str(",\n\"mode\":\"");
    s.push_str(mode.name());
    s.push_str("\",\n\"input\":");
    write_json_string(&mut s, input);
    s.push_str(",\n\"units\":\"ms\",\n\"traceBounds\":{\"min\":");
    write_number(&mut s, bounds.0);
    s.push_str(",\"max\":");
    write_number(&mut s, bounds.1);
    s.push_str("},\n");
    if let Some(r) = range {
        s.push_str("\"range\":{");
        r.write_json_fields(&mut s);
        s.push_str(",\"windowUs\":{\"min\":");
        write_number(&mut s, r.min_us);
        s.push_str(",\"max\":");
        write_number(&mut s, r.max_us);
        s.push('}');
        if let Some(e) = &r.event {
            s.push_str(",\n         \"event\":");
            s.push_str(e);
        }
        s.push_str("},\n");
    }
    let window = range.map_or(bounds, |r| (r.min_us, r.max_us));
    s.push_str("\"topDownDepth\":null,\n\"bottomUpLevels\":2,\n\"order\":\"children by id\",\n\"threads\":[");
    let mut first = true;
    // The side-by-side parts' buffers, kept from one thread to the next: their pages are
    // touched once, not made afresh (and zeroed by the kernel) for every thread.
    let mut spare: Vec<Vec<u8>> = Vec::new();
    t.each(|th, strings| {
        if th.calls.is_empty() {
            return Ok(());
        }
        s.push_str(if first { "\n" } else { ",\n" });
        first = false;
        let _ = std::fmt::Write::write_fmt(
            &mut *s,
            format_args!("{{\"pid\":{},\"tid\":{},\"threadName\":", th.pid, th.tid),
        );
        match &th.thread_name {
            Some(n) => write_json_string(&mut s, n),
            None => s.push_str("null"),
        }
        s.push_str(",\n");
        // A CPU profile's thread (a .cpuprofile, or a trace saved from one) is its calls alone.
        let trace: &[TraceEntry] = if mode == Mode::Trace { &th.trace_entries } else { &[] };
        let set = Set::new(th, strings, mode, trace);
        if threads > 1 && th.calls.len() + trace.len() <= SIDE_BY_SIDE {
            // Both trees of both sets; the larger set (all events) first, for the balance.
            // Each set selected once for its two trees.
            let sets = [set.select(true), set.select(false)];
            let parts = [(true, false), (true, true), (false, false), (false, true)];
            let parts = parts.into_iter().map(|part| (part, spare.pop().unwrap_or_default())).collect();
            let mut texts = crate::parallel::map(parts, threads, |((all, bottom_up), mut text)| {
                text.clear();
                let mut t = Spill::new(&mut text);
                set.write_part(all, bottom_up, &sets[usize::from(!all)], window, &mut t);
                // Into memory: nothing to fail.
                let _ = t.finish();
                text
            });
            texts.rotate_left(2);
            for text in &texts {
                s.push_bytes(text);
            }
            spare = texts;
        } else {
            // Each set made as its trees are written, and let go before the next.
            set.write(false, window, &mut s);
            set.write(true, window, &mut s);
        }
        s.spill();
        s.failed()
    })?;
    s.push_str("\n]}\n");
    s.finish()
}

/// A thread's events in the engine's order, with their ids.
struct Set<'a> {
    th: &'a ThreadCalls,
    strings: &'a Strings,
    trace: &'a [TraceEntry],
    /// The calls in the engine's order, by index (None: as they are).
    order: Option<Vec<u32>>,
    /// Each call's node's id, by node (`u32::MAX`: a node with no call).
    node_id: Vec<u32>,
    /// Each trace event's id (its name's).
    trace_id: Vec<u32>,
    /// The id of `RunTask`, when an event has that name.
    run_task: Option<u32>,
    ids: Vec<String>,
    id_index: HashMap<String, u32>,
    /// Each id's place among the ids in the engine's order of them (UTF-16 code units):
    /// siblings are sorted by it, not by comparing their text again.
    rank: Vec<u32>,
}

impl<'a> Set<'a> {
    fn new(th: &'a ThreadCalls, strings: &'a Strings, mode: Mode, trace: &'a [TraceEntry]) -> Set<'a> {
        let mut set = Set {
            th,
            strings,
            trace,
            order: None,
            node_id: vec![u32::MAX; th.model.nodes.len()],
            trace_id: Vec::with_capacity(trace.len()),
            run_task: None,
            ids: Vec::new(),
            id_index: HashMap::default(),
            rank: Vec::new(),
        };
        // Call ids by node (many calls share a node), made in the calls' order, then the
        // trace events' names in theirs: the ids' numbers are those of the engine's sets.
        for c in &th.calls {
            if set.node_id[c.node as usize] == u32::MAX {
                set.node_id[c.node as usize] = set.intern(call_id(th.model.frame(c.node), strings));
            }
        }
        assert!(th.calls.len() < TRACE as usize && trace.len() < TRACE as usize, "2^31 events in a thread");
        let mut name_id: HashMap<StrId, u32> = HashMap::default();
        for e in trace {
            let id = *name_id.entry(e.name).or_insert_with(|| {
                let name = strings.get(e.name);
                let id = set.intern(name.to_owned());
                if name == "RunTask" {
                    set.run_task = Some(id);
                }
                id
            });
            set.trace_id.push(id);
        }
        if mode == Mode::Integrator {
            // The integrator's calls, sorted by sortTraceEventsInPlace (stable): their indices,
            // not the events (a copy of every call).
            let mut order: Vec<u32> = (0..th.calls.len() as u32).collect();
            let at = |k: u32| (th.calls[k as usize].ts, th.calls[k as usize].dur);
            order.sort_by(|&a, &b| span_order(at(a), at(b)));
            set.order = Some(order);
        }
        // The ids are distinct, so their order is total.
        let mut in_order: Vec<u32> = (0..set.ids.len() as u32).collect();
        in_order.sort_unstable_by(|&a, &b| utf16_cmp(&set.ids[a as usize], &set.ids[b as usize]));
        set.rank = vec![0; in_order.len()];
        for (r, &id) in in_order.iter().enumerate() {
            set.rank[id as usize] = r as u32;
        }
        set
    }

    fn intern(&mut self, id: String) -> u32 {
        let n = self.ids.len() as u32;
        *self.id_index.entry(id).or_insert_with_key(|k| {
            self.ids.push(k.clone());
            n
        })
    }

    /// The event `item` stands for.
    #[inline]
    fn ev(&self, item: Item) -> Ev {
        if item & TRACE == 0 {
            let c = &self.th.calls[item as usize];
            let id = self.node_id[c.node as usize];
            return Ev { ts: c.ts, dur: c.dur, id, what: What::Call(item), top_level: false, run_task: false };
        }
        let k = item & !TRACE;
        let e = &self.trace[k as usize];
        let id = self.trace_id[k as usize];
        Ev {
            ts: e.ts,
            dur: e.dur,
            id,
            what: What::Trace(k),
            top_level: e.top_level,
            run_task: Some(id) == self.run_task,
        }
    }

    /// The calls in the engine's order.
    fn calls(&self) -> impl Iterator<Item = Item> + '_ {
        let n = self.th.calls.len() as u32;
        let order = self.order.as_deref();
        (0..n).map(move |i| order.map_or(i, |o| o[i as usize]))
    }

    /// The `calls` set (calls only) or the `all` set: mergeEventsInOrder(thread events,
    /// calls), without the events the tree code takes for instants (`!e.dur`: 0 or NaN; a
    /// negative duration stays), which neither set has.
    fn select(&self, all: bool) -> Vec<Item> {
        let timed = |&i: &Item| {
            let dur = self.ev(i).dur;
            dur != 0.0 && !dur.is_nan()
        };
        if !all {
            return self.calls().filter(timed).collect();
        }
        let traces = (0..self.trace.len() as u32).map(|k| k | TRACE);
        let in_order = |&t: &Item, &c: &Item| event_time_order(&self.ev(t), &self.ev(c)) != Ordering::Greater;
        traces.merge_by(self.calls(), in_order).filter(timed).collect()
    }

    /// The set of the calls, or of all events (`all`), as the member `calls` or `all`.
    fn write(&self, all: bool, window: (f64, f64), s: &mut Spill<'_>) {
        let evs = self.select(all);
        self.set_head(all, &evs, window, s);
        self.set_tail(all, &evs, window, s);
    }

    /// [`Set::write`] of the set selected (`items`) in two parts: up to the top-down tree, or
    /// from the bottom-up one on.
    fn write_part(&self, all: bool, bottom_up: bool, items: &[Item], window: (f64, f64), s: &mut Spill<'_>) {
        if bottom_up {
            self.set_tail(all, items, window, s);
        } else {
            self.set_head(all, items, window, s);
        }
    }

    /// The rest of a set's member: its bottom-up tree, closed, and the set.
    fn set_tail(&self, all: bool, items: &[Item], bounds: (f64, f64), s: &mut Spill<'_>) {
        self.bottom_up(&self.walk(items, bounds), s);
        s.push_str(if all { "]}\n}" } else { "]},\n" });
    }

    /// The walk of `items` over `bounds` (µs).
    fn walk<'s>(&'s self, items: &'s [Item], bounds: (f64, f64)) -> Walk<'s> {
        let (start_ms, end_ms) = (bounds.0 / 1000.0, bounds.1 / 1000.0);
        Walk { set: self, items, start_us: start_ms * 1000.0, end_us: end_ms * 1000.0, start_ms, end_ms }
    }

    /// A set's member up to its top-down tree, and the bottom-up tree's opening: `"calls":` or
    /// `"all":`, then `events`, `diagnostics` and `topDown`.
    fn set_head(&self, all: bool, items: &[Item], bounds: (f64, f64), s: &mut Spill<'_>) {
        let name = if all { "all" } else { "calls" };
        let _ = std::fmt::Write::write_fmt(&mut **s, format_args!("\"{name}\":{{\"events\":{},", items.len()));
        let walk = self.walk(items, bounds);
        let d = walk.diagnostics();
        let _ = std::fmt::Write::write_fmt(
            &mut **s,
            format_args!(
                "\"engineCheck\":null,\"diagnostics\":{{\"unsorted\":{},\"skippedAtStart\":{},\"overlaps\":{},\"maxOverlapUs\":",
                d.unsorted, d.skipped_at_start, d.overlaps
            ),
        );
        write_number(s, d.max_overlap_us);
        s.push_str("},\"topDown\":\n");
        self.top_down(&walk, s);
        s.push_str(",\"bottomUp\":[");
    }

    fn top_down(&self, walk: &Walk<'_>, s: &mut Spill<'_>) {
        struct Node {
            id: u32,
            rep: usize,
            self_time: f64,
            total: f64,
            children: Vec<usize>,
        }
        let whole = walk.end_ms - walk.start_ms;
        let mut nodes = vec![Node { id: u32::MAX, rep: 0, self_time: whole, total: whole, children: Vec::new() }];
        let mut index: HashMap<(usize, u32), usize> = HashMap::default();
        let mut stack: Vec<usize> = vec![0];
        walk.run(|open, e, k| {
            if !open {
                stack.pop();
                return;
            }
            {
                let d = walk.clipped(e).2;
                let parent = *stack.last().expect("the root");
                if parent != 0 {
                    nodes[parent].self_time -= d;
                }
                let n = *index.entry((parent, e.id)).or_insert_with(|| {
                    nodes.push(Node { id: e.id, rep: k, self_time: 0.0, total: 0.0, children: Vec::new() });
                    let n = nodes.len() - 1;
                    nodes[parent].children.push(n);
                    n
                });
                nodes[n].self_time += d;
                nodes[n].total += d;
                stack.push(n);
            }
        });
        for k in 0..nodes[0].children.len() {
            let c = nodes[0].children[k];
            nodes[0].self_time -= nodes[c].total;
        }
        // Pre-order, children by id; an explicit stack (any depth).
        let mut todo: Vec<(usize, bool, bool)> = vec![(0, true, false)];
        while let Some((n, last, close)) = todo.pop() {
            // Here, so that the last step's line break is still held when the loop ends.
            s.spill();
            if close {
                s.push_str(if last { "]}" } else { "]}," });
                s.push('\n');
                continue;
            }
            // Each node is written once: its children are taken, not copied.
            let mut kids = std::mem::take(&mut nodes[n].children);
            let node = &nodes[n];
            s.push_str("{\"id\":");
            if n == 0 {
                s.push_str("\"\"");
            } else {
                write_json_string(s, &self.ids[node.id as usize]);
                self.fields(&walk.ev(node.rep), s);
            }
            s.push_str(",\"selfTime\":");
            write_number(s, node.self_time);
            s.push_str(",\"totalTime\":");
            write_number(s, node.total);
            kids.sort_unstable_by_key(|&a| self.rank[nodes[a].id as usize]);
            if kids.is_empty() {
                s.push_str(if last { ",\"children\":[]}" } else { ",\"children\":[]}," });
                s.push('\n');
                continue;
            }
            s.push_str(",\"children\":[\n");
            todo.push((n, last, true));
            let n_kids = kids.len();
            todo.extend(kids.into_iter().enumerate().rev().map(|(i, c)| (c, i + 1 == n_kids, false)));
        }
        // The last close wrote a line break that the document does not want there.
        if s.ends_with('\n') {
            s.pop();
        }
    }

    fn bottom_up(&self, walk: &Walk<'_>, s: &mut Spill<'_>) {
        #[derive(Clone, Copy)]
        struct Node {
            rep: usize,
            self_time: f64,
            total: f64,
        }
        // The engine's maps keyed by id are vectors indexed by it: ids are dense.
        let n_ids = self.ids.len();
        // BottomUpRootNode.ungroupedTopNodes.
        let mut id_stack: Vec<u32> = Vec::new();
        let mut functions: Vec<(u32, Node)> = Vec::new();
        let mut function_index: Vec<u32> = vec![u32::MAX; n_ids];
        let mut self_stack: Vec<f64> = vec![walk.end_ms - walk.start_ms];
        let mut first_stack: Vec<bool> = Vec::new();
        let mut total_by_id: Vec<Option<f64>> = vec![None; n_ids];
        // BottomUpNode.children() of every function, in the same walk.
        let mut self_stack2: Vec<f64> = vec![0.0];
        let mut event_stack: Vec<(u32, usize)> = Vec::new();
        // Each id's marker; one never set reads as the window's start.
        let mut marker: Vec<f64> = vec![walk.start_ms; n_ids];
        let mut callers: Vec<Vec<(u32, Node)>> = vec![Vec::new(); n_ids];
        let empty_id = self.ids.iter().position(String::is_empty).map(|k| k as u32);
        walk.run(|open, e, k| {
            if open {
                let d = walk.clipped(e).2;
                *self_stack.last_mut().expect("the window") -= d;
                self_stack.push(d);
                id_stack.push(e.id);
                let outermost = total_by_id[e.id as usize].is_none();
                if outermost {
                    total_by_id[e.id as usize] = Some(d);
                }
                first_stack.push(outermost);
                *self_stack2.last_mut().expect("the base") -= d;
                self_stack2.push(d);
                event_stack.push((e.id, k));
                return;
            }
            {
                let self_time = self_stack2.pop().unwrap_or(0.0);
                let (id, _) = event_stack.pop().expect("opened");
                if let Some(&(parent_id, parent_k)) = event_stack.last() {
                    let (s_ms, end, _) = walk.clipped(e);
                    let list = &mut callers[id as usize];
                    let at = match list.iter().position(|c| c.0 == parent_id) {
                        Some(at) => at,
                        None => {
                            list.push((parent_id, Node { rep: parent_k, self_time: 0.0, total: 0.0 }));
                            list.len() - 1
                        }
                    };
                    let total = end - s_ms.max(marker[id as usize]);
                    list[at].1.self_time += nan_to_zero(self_time);
                    list[at].1.total += total;
                    marker[id as usize] = end;
                }
                let id = id_stack.pop().expect("opened");
                // The engine returns here for an empty id, leaving its self time and
                // outermost flag on their stacks (a quirk kept: later values shift).
                if Some(id) == empty_id {
                    return;
                }
                if function_index[id as usize] == u32::MAX {
                    function_index[id as usize] = functions.len() as u32;
                    functions.push((id, Node { rep: k, self_time: 0.0, total: 0.0 }));
                }
                let at = function_index[id as usize] as usize;
                functions[at].1.self_time += nan_to_zero(self_stack.pop().unwrap_or(0.0));
                if first_stack.pop().unwrap_or(false) {
                    functions[at].1.total += nan_to_zero(total_by_id[id as usize].take().unwrap_or(0.0));
                }
            }
        });
        let mut kept: Vec<&(u32, Node)> = functions.iter().filter(|f| f.1.self_time > 0.0).collect();
        kept.sort_unstable_by_key(|f| self.rank[f.0 as usize]);
        let n = kept.len();
        for (i, (id, node)) in kept.into_iter().enumerate() {
            s.spill();
            s.push('\n');
            self.head(*id, node.rep, node.self_time, node.total, walk, s);
            let mut list: Vec<&(u32, Node)> = callers[*id as usize].iter().collect();
            list.sort_unstable_by_key(|c| self.rank[c.0 as usize]);
            if list.is_empty() {
                s.push_str(",\"children\":[]}");
            } else {
                s.push_str(",\"children\":[");
                let m = list.len();
                for (j, (cid, c)) in list.into_iter().enumerate() {
                    s.push('\n');
                    self.head(*cid, c.rep, c.self_time, c.total, walk, s);
                    s.push('}');
                    if j + 1 < m {
                        s.push(',');
                    }
                }
                s.push_str("\n]}");
            }
            if i + 1 < n {
                s.push(',');
            }
        }
        if n > 0 {
            s.push('\n');
        }
    }

    /// `{"id":…,<fields>,"selfTime":…,"totalTime":…` (left open).
    fn head(&self, id: u32, rep: usize, self_time: f64, total: f64, walk: &Walk<'_>, s: &mut String) {
        s.push_str("{\"id\":");
        write_json_string(s, &self.ids[id as usize]);
        self.fields(&walk.ev(rep), s);
        s.push_str(",\"selfTime\":");
        write_number(s, self_time);
        s.push_str(",\"totalTime\":");
        write_number(s, total);
    }

    /// `,"name":…` and, for a call, its frame's url, line and column (absent when undefined).
    fn fields(&self, e: &Ev, s: &mut String) {
        match e.what {
            What::Call(k) => {
                let f = self.th.model.frame(self.th.calls[k as usize].node);
                for (key, v) in [
                    ("name", f.function_name),
                    ("url", f.url),
                    ("lineNumber", f.line_number),
                    ("columnNumber", f.column_number),
                ] {
                    if v != Scalar::Undefined {
                        s.push_str(",\"");
                        s.push_str(key);
                        s.push_str("\":");
                        v.write_json(s, self.strings);
                    }
                }
            }
            What::Trace(k) => {
                s.push_str(",\"name\":");
                write_json_string(s, self.strings.get(self.trace[k as usize].name));
            }
        }
    }
}

fn nan_to_zero(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x
    }
}

/// `generateEventID` of a call: `f:NAME@LOCATION:LINE:COLUMN`.
fn call_id(f: &CallFrame, strings: &Strings) -> String {
    let text = |v: Scalar| v.to_js_string(strings);
    let url = text(f.url);
    let name = if f.url == Scalar::Undefined || url != "native V8Runtime" {
        text(f.function_name)
    } else {
        // SamplesIntegrator.nativeGroup: Parse, Compile, or null.
        let n = text(f.function_name);
        if n.starts_with("Parse") {
            "Parse".to_owned()
        } else if n.starts_with("Compile") || n.starts_with("Recompile") {
            "Compile".to_owned()
        } else {
            "null".to_owned()
        }
    };
    // `scriptId || url || ''`.
    let location = if truthy(f.script_id, strings) {
        text(f.script_id)
    } else if truthy(f.url, strings) {
        url
    } else {
        String::new()
    };
    format!("f:{name}@{location}:{}:{}", text(f.line_number), text(f.column_number))
}

/// JavaScript's truthiness.
fn truthy(v: Scalar, strings: &Strings) -> bool {
    match v {
        Scalar::Undefined | Scalar::Null => false,
        Scalar::Bool(b) => b,
        Scalar::Num(n) => n != 0.0 && !n.is_nan(),
        Scalar::Str(s) => !strings.get(s).is_empty(),
    }
}

/// `compareBeginAndEnd`: start, then the later end first.
fn time_order(a: &Ev, b: &Ev) -> Ordering {
    span_order((a.ts, a.dur), (b.ts, b.dur))
}

/// [`time_order`] of two (start, duration).
fn span_order((a_ts, a_dur): (f64, f64), (b_ts, b_dur): (f64, f64)) -> Ordering {
    let (ae, be) = (a_ts + a_dur, b_ts + b_dur);
    if a_ts < b_ts {
        Ordering::Less
    } else if a_ts > b_ts {
        Ordering::Greater
    } else if ae > be {
        Ordering::Less
    } else if ae < be {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// `eventTimeComparator`: [`time_order`], then a call before a trace event.
fn event_time_order(a: &Ev, b: &Ev) -> Ordering {
    time_order(a, b).then_with(|| match (a.what, b.what) {
        (What::Call(_), What::Trace(_)) => Ordering::Less,
        (What::Trace(_), What::Call(_)) => Ordering::Greater,
        _ => Ordering::Equal,
    })
}

/// JavaScript's string order: by UTF-16 code units.
fn utf16_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `forEachEvent` over one set, in the window.
struct Walk<'a> {
    set: &'a Set<'a>,
    items: &'a [Item],
    start_us: f64,
    end_us: f64,
    start_ms: f64,
    end_ms: f64,
}

struct Diagnostics {
    unsorted: u64,
    skipped_at_start: u64,
    overlaps: u64,
    max_overlap_us: f64,
}

impl Walk<'_> {
    /// Event `k` of the set.
    #[inline]
    fn ev(&self, k: usize) -> Ev {
        self.set.ev(self.items[k])
    }

    /// (start, clipped end, clipped duration), ms: `eventTimingsMilliSeconds`, then the window.
    fn clipped(&self, e: &Ev) -> (f64, f64, f64) {
        let s = e.ts / 1000.0;
        let en = (e.ts + e.dur) / 1000.0;
        let end = en.min(self.end_ms);
        (s, end, end - self.start_ms.max(s))
    }

    /// `topLevelEventIndexEndingAfter(events, start)`.
    fn first_index(&self) -> usize {
        let t = self.start_us;
        // upperBound: the first event with t - ts < 0.
        let upper = self.items.partition_point(|&i| t - self.set.ev(i).ts >= 0.0);
        let mut index = upper as i64 - 1;
        while index > 0 && !self.ev(index as usize).top_level {
            index -= 1;
        }
        index.max(0) as usize
    }

    /// Calls `f` with each event (and its index) as the engine opens (true) and closes (false)
    /// them.
    fn run(&self, mut f: impl FnMut(bool, &Ev, usize)) {
        // The open events, with their index.
        let mut stack: Vec<(Ev, usize)> = Vec::new();
        for k in self.first_index()..self.items.len() {
            let e = self.ev(k);
            let end = e.ts + e.dur;
            if end < self.start_us {
                continue;
            }
            if e.ts > self.end_us {
                break;
            }
            while let Some(&(t, top)) = stack.last() {
                let top_end = t.ts + t.dur;
                // `lastEventEndTime && lastEventEndTime <= start`: an end of 0 never closes.
                if top_end != 0.0 && top_end <= e.ts {
                    stack.pop();
                    f(false, &t, top);
                } else {
                    break;
                }
            }
            // The RunTask filter (the panel's taskFilter).
            if e.run_task {
                continue;
            }
            if e.dur != 0.0 && !e.dur.is_nan() {
                f(true, &e, k);
                stack.push((e, k));
            }
        }
        while let Some((t, top)) = stack.pop() {
            f(false, &t, top);
        }
    }

    fn diagnostics(&self) -> Diagnostics {
        let order = |k: usize| event_time_order(&self.ev(k - 1), &self.ev(k));
        let unsorted = (1..self.items.len()).filter(|&k| order(k) == Ordering::Greater).count() as u64;
        let skipped_at_start = (0..self.first_index())
            .map(|k| self.ev(k))
            .filter(|e| e.ts + e.dur >= self.start_us && !e.run_task)
            .count() as u64;
        let (mut overlaps, mut max_overlap_us) = (0u64, 0.0f64);
        // The open events' ends.
        let mut stack: Vec<f64> = Vec::new();
        self.run(|open, e, _| {
            if !open {
                stack.pop();
                return;
            }
            if let Some(&parent_end) = stack.last() {
                let over = (e.ts + e.dur) - parent_end;
                if over > 0.0 {
                    overlaps += 1;
                    max_overlap_us = max_overlap_us.max(over);
                }
            }
            stack.push(e.ts + e.dur);
        });
        Diagnostics { unsorted, skipped_at_start, overlaps, max_overlap_us }
    }
}
