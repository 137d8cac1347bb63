//! What both Firefox formats share: a sampled thread (a stack table over frames, and samples)
//! turned into a CPU profile, frames as call frames, and where a problem is.

use std::borrow::Cow;
use std::cell::OnceCell;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::Value;

use crate::error::{Diagnostics, Error, Location};
use crate::input::leaf::{IdArray, Leaf, NumArray, UNKNOWN_ID};
use crate::input::shapes::{CpuProfileJson, FrameJson};
use crate::model::nodes::{finish_raw, FrameCache};
use crate::model::profile::{Frames, NodeMore, RawNode};
use crate::model::ReadOptions;
use crate::model::ThreadWork;
use crate::strings::Strings;

/// What a frame is in the model: function name, url, 0-based line and column.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FrameOut {
    pub(super) name: String,
    pub(super) url: String,
    pub(super) line: Option<i64>,
    pub(super) column: Option<i64>,
}

/// A [`FrameOut`]'s name, url, line and column: equal for frames that make one call frame.
type FrameKey<'f> = (&'f str, &'f str, i64, i64);

impl FrameOut {
    /// What makes the frame's call frame: name, url, line and column (-1: none).
    fn key(&self) -> FrameKey<'_> {
        (&self.name, &self.url, self.line.unwrap_or(-1), self.column.unwrap_or(-1))
    }

    /// The frame as a `.cpuprofile` node's `callFrame` (script id `"0"`), read into `frames`.
    fn call_frame(&self, strings: &mut Strings, frames: &mut Frames, cache: &mut FrameCache) -> u32 {
        let (name, url, line, column) = self.key();
        let f = FrameJson {
            function_name: Leaf::Str(Cow::Borrowed(name)),
            script_id: Leaf::Str(Cow::Borrowed("0")),
            url: Leaf::Str(Cow::Borrowed(url)),
            line_number: Leaf::Num(line as f64),
            column_number: Leaf::Num(column as f64),
        };
        cache.frame(&f, false, strings, frames).expect("a frame of strings and numbers is read")
    }

    /// A frame with no script.
    fn native(name: &str) -> FrameOut {
        FrameOut { name: name.to_owned(), url: String::new(), line: None, column: None }
    }
}

/// Where a problem is: the document's start and a path inside it.
pub(super) struct At {
    pub(super) location: Location,
}

impl At {
    pub(super) fn err(&self, path: &str, what: impl std::fmt::Display) -> Error {
        Error::input(Some(self.location), format!("{path}: {what}"))
    }
}

/// What reading a Firefox profile's threads reads and adds to: the strings, the options, the
/// warnings and the time span of every thread (µs).
pub(super) struct Reading<'a> {
    pub(super) strings: &'a mut Strings,
    pub(super) cfg: &'a ReadOptions<'a>,
    pub(super) diag: &'a mut Diagnostics,
    pub(super) bounds: &'a mut (f64, f64),
}

/// How messages name a thread: its place in the profile, and its name when it has one.
pub(super) fn thread_label(t: &Value, path: &str) -> String {
    match t.get("name").and_then(Value::as_str) {
        Some(name) => format!("{path} ({name})"),
        None => path.to_owned(),
    }
}

/// `meta.startTime` (ms since the epoch).
pub(super) fn meta_start(p: &Value, path: &str, at: &At) -> Result<f64, Error> {
    match p.get("meta").and_then(|m| m.get("startTime")) {
        Some(v) => v.as_f64().ok_or_else(|| at.err(&format!("{path}.startTime"), "expected a number (ms)")),
        None => Err(at.err(path, "expected an object with startTime")),
    }
}

/// A thread's `pid` or `tid`: a number, or a string of one (`"1234"`, or `"1234.1"` for a
/// repeated id, as the processed format writes).
pub(super) fn thread_id(t: &Value, key: &str) -> Option<i64> {
    match t.get(key) {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.split('.').next().and_then(|n| n.parse().ok()),
        _ => None,
    }
}

/// A stack table over frames, as both Firefox formats hold it: a thread's own, or (in a
/// processed profile) one that every thread shares, made ready once for all of them.
pub(super) struct StackTable {
    /// Each stack's prefix stack and frame (an index into `frames`).
    pub(super) stacks: Vec<(Option<usize>, usize)>,
    /// Each stack's line and column: where in its function the sample was, 1-based (0: not
    /// known).
    pub(super) stack_places: Vec<(f64, f64)>,
    /// Whether each frame is a script's, with a URL.
    pub(super) scripted: Vec<bool>,
    /// Each frame's call frame.
    pub(super) frames: Vec<FrameOut>,
}

/// A stack table's nodes: a node per function on each path (ids from 2; 1 is the root).
/// Stacks whose frames are one function under one parent are one node, as V8 makes one node
/// per function and call path, so that a call does not split where the sampled line changes.
/// A table whose prefixes do not all come first keeps a node per stack, for the model to judge.
pub(super) struct Nodes {
    table: StackTable,
    /// Each stack's node.
    node_of: Vec<i64>,
    /// Each node (id 2 + its index): its parent's id and its frame.
    nodes: Vec<(i64, usize)>,
    /// Whether stacks were merged into nodes (every prefix came first).
    merged: bool,
    /// The `(idle)` node of samples with no stack: an id after every stack's.
    idle: i64,
    /// Each stack's innermost stack (itself or a prefix) whose frame is a script's: made when
    /// a thread's lines are asked for.
    script_stacks: OnceCell<Vec<Option<usize>>>,
    /// Whether threads share the table.
    shared: bool,
}

/// A sampled thread's samples: each one's stack (None: no stack, an idle sample) and time, µs
/// on the root clock, and when the last one ends.
pub(super) struct Samples {
    pub(super) samples: Vec<(Option<u64>, f64)>,
    pub(super) end_us: f64,
    /// Where the samples are in the profile, and the array that holds them in order
    /// (`threads[0].samples`, `data`), for errors.
    pub(super) path: String,
    pub(super) rows: &'static str,
}

impl Samples {
    /// The samples of the table at `path`, held in its `rows` array.
    pub(super) fn new(path: &str, rows: &'static str, n: usize) -> Samples {
        Samples { samples: Vec::with_capacity(n), end_us: f64::NAN, path: path.to_owned(), rows }
    }

    /// An error unless each time, the step to it from the one before and the last sample's
    /// end are finite numbers of µs.
    fn check_times(&self, at: &At) -> Result<(), Error> {
        let mut before = 0.0;
        for (k, &(_, us)) in self.samples.iter().enumerate() {
            if !us.is_finite() || !(us - before).is_finite() {
                let what =
                    "the time is out of range (it or its step from the sample before is not a finite number of µs)";
                return Err(at.err(&format!("{}.{}[{k}]", self.path, self.rows), what));
            }
            before = us;
        }
        if !self.samples.is_empty() && !self.end_us.is_finite() {
            return Err(
                at.err(&self.path, "the last sample's end (its time and the sampling interval) is out of range")
            );
        }
        Ok(())
    }
}

impl Nodes {
    pub(super) fn new(table: StackTable, shared: bool) -> Nodes {
        let n_stacks = table.stacks.len();
        let merged = table.stacks.iter().enumerate().all(|(s, p)| p.0.is_none_or(|p| p < s));
        let mut node_of: Vec<i64> = Vec::with_capacity(n_stacks);
        let mut nodes: Vec<(i64, usize)> = Vec::new();
        if merged {
            let mut by_key: HashMap<(i64, FrameKey<'_>), i64> = HashMap::default();
            for &(prefix, frame) in &table.stacks {
                let parent = prefix.map_or(1, |p| node_of[p]);
                let next = nodes.len() as i64 + 2;
                let id = *by_key.entry((parent, table.frames[frame].key())).or_insert(next);
                if id == next {
                    nodes.push((parent, frame));
                }
                node_of.push(id);
            }
        } else {
            for (s, &(prefix, frame)) in table.stacks.iter().enumerate() {
                node_of.push(s as i64 + 2);
                nodes.push((prefix.map_or(1, |p| p as i64 + 2), frame));
            }
        }
        let idle = n_stacks as i64 + 2;
        Nodes { table, node_of, nodes, merged, idle, script_stacks: OnceCell::new(), shared }
    }

    /// The ids of the nodes a thread's profile holds, in order: of a table that threads share
    /// (a processed profile's, from version 60) whose stacks merged, the nodes the thread's
    /// samples reach and their ancestors, its own part of the table and not the whole; else
    /// every node.
    fn reached(&self, samples: &Samples) -> Vec<i64> {
        let ids = 2..self.nodes.len() as i64 + 2;
        if !self.merged || !self.shared {
            return ids.collect();
        }
        let mut used: HashSet<i64> = HashSet::default();
        for &(stack, _) in &samples.samples {
            let mut id = stack.and_then(|k| self.node_of.get(k as usize)).copied().unwrap_or(1);
            while ids.contains(&id) && used.insert(id) {
                id = self.nodes[(id - 2) as usize].0;
            }
        }
        let mut used: Vec<i64> = used.into_iter().collect();
        used.sort_unstable();
        used
    }

    /// The thread of `samples` as a CPU profile: what a `.cpuprofile` of it would say, made
    /// without its JSON text. `thread` names it in messages.
    pub(super) fn work(
        &self,
        thread: &str,
        samples: &Samples,
        r: &mut Reading<'_>,
        at: &At,
    ) -> Result<Option<ThreadWork>, Error> {
        samples.check_times(at)?;
        let (mut frames, mut cache) = (Frames::default(), FrameCache::default());
        let node = |id: i64, parent: i64, frame: u32| RawNode::new(id, parent, frame, false, NodeMore::default());
        let reached = self.reached(samples);
        let mut nodes = Vec::with_capacity(reached.len() + 2);
        let root = FrameOut::native("(root)").call_frame(r.strings, &mut frames, &mut cache);
        nodes.push(node(1, UNKNOWN_ID, root));
        // Each table frame's call frame, read once per thread.
        let mut frame_of: HashMap<usize, u32> = HashMap::default();
        for id in reached {
            let (parent, frame) = self.nodes[(id - 2) as usize];
            let f = *frame_of
                .entry(frame)
                .or_insert_with(|| self.table.frames[frame].call_frame(r.strings, &mut frames, &mut cache));
            nodes.push(node(id, parent, f));
        }
        // A sample with no stack (the thread was not running code the profiler can walk) is an
        // idle sample, which makes no call, as V8's `(idle)`.
        let idle = FrameOut::native("(idle)").call_frame(r.strings, &mut frames, &mut cache);
        nodes.push(node(self.idle, 1, idle));
        let node_id = |stack: Option<u64>| match stack {
            None => self.idle,
            // A stack the table does not have: an id no node has, which the model reports.
            Some(k) => self.node_of.get(k as usize).copied().unwrap_or_else(|| {
                i64::try_from(k).ok().and_then(|k| (self.idle + 1).checked_add(k)).unwrap_or(UNKNOWN_ID)
            }),
        };
        // Samples: node ids and µs deltas.
        let mut json = CpuProfileJson::default();
        let ids = samples.samples.iter().map(|&(stack, _)| as_json_id(node_id(stack)));
        json.samples = Some(IdArray(ids.collect()));
        let mut last = f64::NAN;
        json.time_deltas = Some(numbers(samples.samples.iter().enumerate().map(|(k, &(_, us))| {
            let delta = if k == 0 { 0.0 } else { us - last };
            last = us;
            delta
        })));
        json.start_time = as_json_number(samples.samples.first().map_or(f64::NAN, |s| s.1));
        json.end_time = as_json_number(samples.end_us);
        if r.cfg.keep_lines {
            // Each sample's line: its innermost script frame's (a V8 profile's `lines` are its
            // top JavaScript frame's; a Firefox sample mostly ends in native code below it).
            let script_stack = self.script_stacks.get_or_init(|| self.table.script_stacks());
            let places = samples.samples.iter().map(|&(stack, _)| {
                stack
                    .and_then(|s| script_stack.get(s as usize).copied().flatten())
                    .and_then(|s| self.table.stack_places.get(s))
                    .copied()
                    .unwrap_or((0.0, 0.0))
            });
            json.lines = Some(numbers(places.clone().map(|p| p.0)));
            json.columns = Some(numbers(places.map(|p| p.1)));
        }
        let raw = finish_raw(&json, nodes, frames, Some(at.location))?;
        let mut b = (f64::INFINITY, f64::NEG_INFINITY);
        let mut works =
            crate::model::cpuprofile::profile_thread(raw, thread, at.location, r.strings, r.cfg, r.diag, &mut b)?;
        *r.bounds = (r.bounds.0.min(b.0), r.bounds.1.max(b.1));
        let mut w = works.pop();
        if let Some(w) = w.as_mut().filter(|_| r.cfg.keep_lines) {
            w.model.place_lines_at_scripts(r.strings);
        }
        Ok(w)
    }
}

/// A number as a JSON document would carry it: `JSON.stringify` makes a non-finite one
/// `null` and writes `-0` as `0`.
fn as_json_number(n: f64) -> Leaf<'static> {
    match n {
        n if !n.is_finite() => Leaf::Null,
        0.0 => Leaf::Num(0.0),
        n => Leaf::Num(n),
    }
}

/// Numbers as a JSON array of them would be read.
fn numbers(values: impl Iterator<Item = f64>) -> NumArray {
    let mut out = NumArray { values: Vec::with_capacity(values.size_hint().0), n_non_numbers: 0 };
    for v in values {
        let v = as_json_number(v).num().unwrap_or(f64::NAN);
        out.n_non_numbers += usize::from(v.is_nan());
        out.values.push(v);
    }
    out
}

/// A node id as a JSON document would carry it: JavaScript's numbers hold integers exactly
/// only up to 2^53.
fn as_json_id(id: i64) -> i64 {
    crate::js::safe_int(id as f64).unwrap_or(UNKNOWN_ID)
}

impl StackTable {
    /// Each stack's innermost stack (itself or a prefix) whose frame is a script's; a table
    /// whose prefixes loop gives none on the loop.
    fn script_stacks(&self) -> Vec<Option<usize>> {
        let n = self.stacks.len();
        // None: not found yet; Some(x): found.
        let mut found: Vec<Option<Option<usize>>> = vec![None; n];
        let mut chain = Vec::new();
        for s in 0..n {
            chain.clear();
            let mut x = Some(s);
            let answer = loop {
                let Some(k) = x.filter(|&k| k < n) else { break None };
                if let Some(a) = found[k] {
                    break a;
                }
                if chain.len() > n {
                    break None;
                }
                chain.push(k);
                let (prefix, frame) = self.stacks[k];
                if self.scripted.get(frame).copied().unwrap_or(false) {
                    break Some(k);
                }
                x = prefix;
            };
            // Every stack walked on the way has the same answer.
            for &k in &chain {
                found[k] = Some(answer);
            }
        }
        found.into_iter().map(Option::flatten).collect()
    }
}

/// `url:line` or `url:line:column` (url not empty).
pub(super) fn position(s: &str) -> Option<(&str, i64, Option<i64>)> {
    let number =
        |t: &str| (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse::<i64>().ok()).flatten();
    let (head, last) = s.rsplit_once(':')?;
    let last = number(last)?;
    if let Some((url, line)) = head.rsplit_once(':') {
        if let Some(line) = number(line) {
            if !url.is_empty() {
                return Some((url, line, Some(last)));
            }
        }
    }
    (!head.is_empty()).then_some((head, last, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(stacks: &[(Option<usize>, usize)], frames: usize) -> StackTable {
        StackTable {
            stacks: stacks.to_vec(),
            stack_places: vec![(0.0, 0.0); stacks.len()],
            scripted: vec![true; frames],
            frames: (0..frames).map(|f| FrameOut::native(&f.to_string())).collect(),
        }
    }

    fn samples(stacks: &[Option<u64>]) -> Samples {
        let mut s = Samples::new("threads[0].samples", "data", stacks.len());
        s.samples = stacks.iter().map(|&s| (s, 0.0)).collect();
        s
    }

    /// The numbers a thread's profile is made of are those a `.cpuprofile` of it would carry.
    #[test]
    fn numbers_are_what_json_would_carry() {
        let bits = |l: Leaf<'_>| l.num().map(f64::to_bits);
        assert_eq!(bits(as_json_number(-0.0)), Some(0.0f64.to_bits()));
        assert_eq!(bits(as_json_number(0.1 + 0.2)), Some((0.1f64 + 0.2).to_bits()));
        assert!(matches!(as_json_number(f64::INFINITY), Leaf::Null));
        assert!(matches!(as_json_number(f64::NAN), Leaf::Null));
        let n = numbers([1.5, f64::NEG_INFINITY, -0.0, f64::NAN].into_iter());
        assert_eq!(n.n_non_numbers, 2);
        assert_eq!(n.values[0], 1.5);
        assert!(n.values[1].is_nan() && n.values[3].is_nan());
        assert_eq!(n.values[2].to_bits(), 0.0f64.to_bits());
        assert_eq!(as_json_id(7), 7);
        assert_eq!(as_json_id(1 << 53), 1 << 53);
        // Read as JavaScript reads the digits: rounded to the nearest double.
        assert_eq!(as_json_id((1 << 53) + 1), 1 << 53);
        assert_eq!(as_json_id((1 << 53) + 2), UNKNOWN_ID);
        assert_eq!(as_json_id(i64::MAX), UNKNOWN_ID);
    }

    /// Threads that share a table (a processed profile's) hold the nodes their samples reach;
    /// a thread's own table is held whole.
    #[test]
    fn a_thread_holds_the_nodes_its_samples_reach() {
        // 0 a; 1 a>b; 2 a>b (another line of b: node 3 again); 3 a>c; 4 a>c>d; 5 e.
        let stacks = [(None, 0), (Some(0), 1), (Some(0), 1), (Some(0), 2), (Some(3), 3), (None, 4)];
        assert_eq!(Nodes::new(table(&stacks, 5), false).reached(&samples(&[Some(2)])), [2, 3, 4, 5, 6]);
        let t = Nodes::new(table(&stacks, 5), true);
        assert_eq!(t.node_of, [2, 3, 3, 4, 5, 6]);
        assert_eq!(t.idle, 8);
        assert_eq!(t.reached(&samples(&[Some(2)])), [2, 3]);
        assert_eq!(t.reached(&samples(&[Some(4), None, Some(5), Some(4)])), [2, 4, 5, 6]);
        // Idle samples and stacks the table lacks reach nothing (the model reports the latter).
        assert_eq!(t.reached(&samples(&[None, Some(99)])), Vec::<i64>::new());
        // A table whose prefixes do not come first keeps every stack as a node, for the model
        // to judge.
        let t = Nodes::new(table(&[(Some(1), 0), (None, 1), (Some(0), 1)], 2), true);
        assert_eq!(t.node_of, [2, 3, 4]);
        assert_eq!(t.reached(&samples(&[Some(1)])), [2, 3, 4]);
    }
}
