//! What both Firefox formats share: a sampled thread (a stack table over frames, and samples)
//! turned into a CPU profile, frames as call frames, and where a problem is.

use std::fmt::Write as _;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use crate::error::{Diagnostics, Error, Location};
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

/// A sampled thread as both Firefox formats hold it: a stack table over frames, and samples.
pub(super) struct Sampled {
    /// Each stack's prefix stack and frame (an index into the frames' call frames).
    pub(super) stacks: Vec<(Option<usize>, usize)>,
    /// Each stack's line and column: where in its function the sample was, 1-based (0: not
    /// known).
    pub(super) stack_places: Vec<(f64, f64)>,
    /// Whether each frame (an index into the frames' call frames) is a script's, with a URL.
    pub(super) scripted: Vec<bool>,
    /// Each sample's stack (None: no stack, an idle sample) and time, µs on the root clock.
    pub(super) samples: Vec<(Option<u64>, f64)>,
    /// When the last sample ends, µs.
    pub(super) end_us: f64,
}

impl Sampled {
    /// The thread as a CPU profile: `frame_json` holds each frame's call frame (JSON).
    pub(super) fn work(
        &self,
        frame_json: &[String],
        r: &mut Reading<'_>,
        at: &At,
    ) -> Result<Option<ThreadWork>, Error> {
        // A node per function on each path (ids from 2; 1 is the root): stacks whose frames are
        // one function under one parent are one node, as V8 makes one node per function and
        // call path, so that a call does not split where the sampled line changes. A table
        // whose prefixes do not all come first keeps a node per stack, for the model to judge.
        let mut nodes = String::from("[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1}}");
        let n_stacks = self.stacks.len();
        let merge = self.stacks.iter().enumerate().all(|(s, p)| p.0.is_none_or(|p| p < s));
        let mut node_of: Vec<i64> = Vec::with_capacity(n_stacks);
        let mut by_key: HashMap<(i64, &str), i64> = HashMap::default();
        let mut next_id = 2;
        for (s, &(prefix, frame)) in self.stacks.iter().enumerate() {
            let fj = frame_json[frame].as_str();
            let (parent, id) = if merge {
                let parent = prefix.map_or(1, |p| node_of[p]);
                match by_key.get(&(parent, fj)) {
                    Some(&id) => {
                        node_of.push(id);
                        continue;
                    }
                    None => {
                        by_key.insert((parent, fj), next_id);
                        (parent, next_id)
                    }
                }
            } else {
                (prefix.map_or(1, |p| p as i64 + 2), s as i64 + 2)
            };
            next_id = next_id.max(id + 1);
            node_of.push(id);
            let _ = write!(nodes, ",{{\"id\":{id},\"parent\":{parent},\"callFrame\":{fj}}}");
        }
        // A sample with no stack (the thread was not running code the profiler can walk) is an
        // idle sample, which makes no call, as V8's `(idle)`.
        let idle = next_id.max(n_stacks as i64 + 2);
        let _ = write!(
            nodes,
            ",{{\"id\":{idle},\"parent\":1,\"callFrame\":{{\"functionName\":\"(idle)\",\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1}}}}"
        );
        nodes.push(']');
        // Samples: node ids and µs deltas.
        let mut ids = String::from("[");
        let mut deltas = String::from("[");
        let (mut first, mut last) = (f64::NAN, f64::NAN);
        for (r, &(stack, us)) in self.samples.iter().enumerate() {
            let id = match stack {
                None => idle,
                // A stack the table does not have: an id no node has, which the model reports.
                Some(k) => {
                    node_of.get(k as usize).copied().unwrap_or_else(|| idle.saturating_add(1).saturating_add(k as i64))
                }
            };
            if r > 0 {
                ids.push(',');
                deltas.push(',');
            }
            let delta = if r == 0 {
                first = us;
                0.0
            } else {
                us - last
            };
            last = us;
            let _ = write!(ids, "{id}");
            crate::js::write_number(&mut deltas, delta);
        }
        ids.push(']');
        deltas.push(']');
        let mut fields = vec![
            ("nodes".to_owned(), nodes.into_bytes()),
            ("samples".to_owned(), ids.into_bytes()),
            ("timeDeltas".to_owned(), deltas.into_bytes()),
            ("startTime".to_owned(), number(first).into_bytes()),
            ("endTime".to_owned(), number(self.end_us).into_bytes()),
        ];
        if r.cfg.keep_lines {
            // Each sample's line: its innermost script frame's (a V8 profile's `lines` are its
            // top JavaScript frame's; a Firefox sample mostly ends in native code below it).
            let script_stack = self.script_stacks();
            let (mut lines, mut columns) = (String::from("["), String::from("["));
            for (k, &(stack, _)) in self.samples.iter().enumerate() {
                if k > 0 {
                    lines.push(',');
                    columns.push(',');
                }
                let (line, column) = stack
                    .and_then(|s| script_stack.get(s as usize).copied().flatten())
                    .and_then(|s| self.stack_places.get(s))
                    .copied()
                    .unwrap_or((0.0, 0.0));
                crate::js::write_number(&mut lines, line);
                crate::js::write_number(&mut columns, column);
            }
            lines.push(']');
            columns.push(']');
            fields.push(("lines".to_owned(), lines.into_bytes()));
            fields.push(("columns".to_owned(), columns.into_bytes()));
        }
        let mut b = (f64::INFINITY, f64::NEG_INFINITY);
        let mut works =
            crate::model::cpuprofile::thread_work(fields, None, at.location, r.strings, r.cfg, r.diag, &mut b)?;
        *r.bounds = (r.bounds.0.min(b.0), r.bounds.1.max(b.1));
        let mut w = works.pop();
        if let Some(w) = w.as_mut().filter(|_| r.cfg.keep_lines) {
            w.model.place_lines_at_scripts(r.strings);
        }
        Ok(w)
    }

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

fn number(n: f64) -> String {
    let mut s = String::new();
    crate::js::write_number(&mut s, n);
    s
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

pub(super) fn call_frame_json(f: &FrameOut) -> String {
    let s = |t: &str| serde_json::to_string(t).expect("a string serializes");
    format!(
        "{{\"functionName\":{},\"scriptId\":\"0\",\"url\":{},\"lineNumber\":{},\"columnNumber\":{}}}",
        s(&f.name),
        s(&f.url),
        f.line.unwrap_or(-1),
        f.column.unwrap_or(-1)
    )
}
