//! Firefox's raw profile (the Gecko profile format) read into the model: each sampled thread of
//! the profile and of its child processes becomes a CPU profile (a node per stack, a sample per
//! sample) that the integrator estimates as it does a `.cpuprofile`.
//!
//! The format keeps its tables as `{schema: {column: index}, data: [rows]}`, and rows may stop
//! before the last column (trailing nulls left out), so every cell is looked up by name. Times
//! are ms since the start of the (sub)process's profile (`meta.startTime`, ms since the epoch);
//! child processes are moved onto the root profile's clock. A frame's location is a JS
//! function (`name (url:line:column)`), a label (`PresShell::DoReflow`), or a native return
//! address (`0x7f…`), which [`Symbols`] turn into functions.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use super::ThreadWork;
use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::strings::Strings;
use crate::Config;

/// The newest `meta.version` whose layout is known; newer ones are read as it, with a warning.
/// Version 36 (Firefox 159, checked against its own profiles) adds a top-level `sources`
/// table, each thread's `tracedValues` and `tracedObjectShapes`, and an `argumentValues` column
/// among the samples' (before `threadCPUDelta`): none of them carries a stack or a time, and
/// cells are looked up by name.
pub const NEWEST_VERSION: u64 = 36;

/// A library's symbols: function start addresses (relative to the library's start) and names,
/// as `nm --defined-only` prints them.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    /// (start, name), sorted by start.
    starts: Vec<(u64, String)>,
}

impl Symbols {
    /// Reads `nm` output: `ADDRESS TYPE NAME` lines. Only code symbols (types `T t W w i`)
    /// are functions; lines without an address (undefined symbols) are skipped. The error
    /// names the 1-based line that cannot be read.
    pub fn from_nm(text: &str) -> Result<Symbols, String> {
        let mut starts = Vec::new();
        for (k, line) in text.lines().enumerate() {
            let line = line.trim_end();
            // `                 U name`: an undefined symbol has no address.
            if line.is_empty() || line.starts_with(' ') {
                continue;
            }
            let mut parts = line.splitn(3, ' ');
            let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(format!("line {}: expected 'ADDRESS TYPE NAME' (nm --defined-only)", k + 1));
            };
            let addr = u64::from_str_radix(addr, 16)
                .map_err(|_| format!("line {}: '{addr}' is not a hexadecimal address", k + 1))?;
            if matches!(kind, "T" | "t" | "W" | "w" | "i") {
                starts.push((addr, name.to_owned()));
            }
        }
        starts.sort();
        // Aliases share an address: the first name (in order) stands for them all.
        starts.dedup_by_key(|s| s.0);
        Ok(Symbols { starts })
    }

    /// The function `address` (relative to the library's start) belongs to: the one with the
    /// highest start at or below it.
    pub fn lookup(&self, address: u64) -> Option<&str> {
        let k = self.starts.partition_point(|s| s.0 <= address);
        k.checked_sub(1).map(|k| self.starts[k].1.as_str())
    }

    /// How many functions.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

/// A loaded library of a (sub)process.
#[derive(Debug, Clone)]
struct Lib {
    start: u64,
    end: u64,
    name: String,
}

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

/// The threads of a Gecko profile (its top-level `meta`, `libs`, `threads`, `processes`).
pub fn thread_works(
    fields: Vec<(String, Vec<u8>)>,
    location: Location,
    strings: &mut Strings,
    cfg: &Config,
    diag: &mut Diagnostics,
    bounds: &mut (f64, f64),
) -> Result<Vec<ThreadWork>, Error> {
    let at = At { location };
    let mut root = serde_json::Map::new();
    for (key, raw) in &fields {
        let v: Value = serde_json::from_slice(raw).map_err(|e| at.err(key, format!("not JSON ({e})")))?;
        root.insert(key.clone(), v);
    }
    drop(fields);
    let root = Value::Object(root);
    let mut r = Reading { strings, cfg, diag, bounds };
    if root.get("meta").and_then(|m| m.get("preprocessedProfileVersion")).is_some() {
        return super::processed::thread_works(&root, &at, &mut r);
    }
    let root_start = meta_start(&root, "meta", &at)?;
    let mut out = Vec::new();
    // Every library's name, for the symbols given for none of them.
    let mut lib_names: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    // (profile, its path, its libs' owner) — child processes after their parent.
    let mut todo: Vec<(&Value, String)> = vec![(&root, String::new())];
    while let Some((p, path)) = todo.pop() {
        let meta_path = format!("{path}meta");
        check_version(p, &meta_path, &at, r.diag)?;
        let offset_ms = meta_start(p, &meta_path, &at)? - root_start;
        let libs = libs(p, &format!("{path}libs"), &at)?;
        lib_names.extend(libs.iter().map(|l| l.name.clone()));
        let threads = match p.get("threads") {
            Some(Value::Array(t)) => t.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => return Err(at.err(&format!("{path}threads"), "expected an array of threads")),
        };
        let interval = p.get("meta").and_then(|m| m.get("interval")).and_then(Value::as_f64).unwrap_or(1.0);
        for (k, t) in threads.iter().enumerate() {
            let tpath = format!("{path}threads[{k}]");
            if let Some(w) = thread(t, &tpath, offset_ms, interval, &libs, &mut r, &at)? {
                out.push(w);
            }
        }
        match p.get("processes") {
            Some(Value::Array(children)) => {
                // Reversed: the stack pops them in file order.
                for (k, c) in children.iter().enumerate().rev() {
                    todo.push((c, format!("{path}processes[{k}].")));
                }
            }
            None | Some(Value::Null) => {}
            Some(_) => return Err(at.err(&format!("{path}processes"), "expected an array of profiles")),
        }
    }
    for lib in r.cfg.symbols.keys().filter(|l| !lib_names.contains(*l)) {
        let some: Vec<&str> = lib_names.iter().map(String::as_str).filter(|n| !n.is_empty()).take(12).collect();
        let more = if lib_names.len() > some.len() { ", …" } else { "" };
        r.diag.push(
            WarningKind::Other,
            None,
            format!(
                "--symbols {lib}: the profile has no library of that name (it has: {}{more}); unused",
                some.join(", ")
            ),
        );
    }
    out.sort_by_key(|w| (w.pid, w.tid));
    Ok(out)
}

/// What reading a Firefox profile's threads reads and adds to: the strings, the options, the
/// warnings and the time span of every thread (µs).
pub(super) struct Reading<'a> {
    pub(super) strings: &'a mut Strings,
    pub(super) cfg: &'a Config,
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

fn check_version(p: &Value, path: &str, at: &At, diag: &mut Diagnostics) -> Result<(), Error> {
    let Some(meta) = p.get("meta").filter(|m| m.is_object()) else {
        return Err(at.err(path, "expected an object (the profile's meta)"));
    };
    match meta.get("version").and_then(Value::as_u64) {
        Some(v) if v > NEWEST_VERSION => {
            diag.push(
                WarningKind::Other,
                Some(at.location),
                format!("{path}.version {v} is newer than the newest known ({NEWEST_VERSION}); read as that one"),
            );
            Ok(())
        }
        Some(_) => Ok(()),
        None => Err(at.err(&format!("{path}.version"), "expected the format's version (a whole number)")),
    }
}

fn libs(p: &Value, path: &str, at: &At) -> Result<Vec<Lib>, Error> {
    let list = match p.get("libs") {
        Some(Value::Array(l)) => l.as_slice(),
        None | Some(Value::Null) => &[],
        Some(_) => return Err(at.err(path, "expected an array of libraries")),
    };
    let mut out = Vec::with_capacity(list.len());
    for (k, l) in list.iter().enumerate() {
        let field = |name: &str| l.get(name).and_then(Value::as_u64);
        let (Some(start), Some(end)) = (field("start"), field("end")) else {
            return Err(at.err(&format!("{path}[{k}]"), "expected start and end addresses"));
        };
        // The main executable may have an empty name; its path still says what it is.
        let name = ["name", "debugName", "path"]
            .iter()
            .filter_map(|n| l.get(*n).and_then(Value::as_str))
            .find(|s| !s.is_empty())
            .map(|s| s.rsplit('/').next().unwrap_or(s).to_owned())
            .unwrap_or_default();
        out.push(Lib { start, end, name });
    }
    out.sort_by_key(|l| l.start);
    Ok(out)
}

/// A `{schema, data}` table: cells by column name; a short row's missing cells are null.
struct Table<'a> {
    columns: HashMap<&'a str, usize>,
    rows: &'a [Value],
    path: String,
}

impl<'a> Table<'a> {
    fn of(t: &'a Value, name: &str, thread_path: &str, at: &At) -> Result<Table<'a>, Error> {
        let path = format!("{thread_path}.{name}");
        let (Some(Value::Object(schema)), Some(Value::Array(rows))) = (t.get("schema"), t.get("data")) else {
            return Err(at.err(&path, "expected {\"schema\": {...}, \"data\": [...]}"));
        };
        let mut columns = HashMap::default();
        for (k, v) in schema {
            let i = v.as_u64().ok_or_else(|| at.err(&format!("{path}.schema.{k}"), "expected a column index"))?;
            columns.insert(k.as_str(), i as usize);
        }
        Ok(Table { columns, rows, path })
    }

    fn has(&self, column: &str) -> bool {
        self.columns.contains_key(column)
    }

    /// The cell, or null when the row stops before it (or the schema lacks the column).
    fn cell(&self, row: usize, column: &str) -> &'a Value {
        const NULL: Value = Value::Null;
        match (self.rows.get(row), self.columns.get(column)) {
            (Some(Value::Array(r)), Some(&c)) => r.get(c).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    fn row_is_array(&self, row: usize, at: &At) -> Result<(), Error> {
        match self.rows.get(row) {
            Some(Value::Array(_)) => Ok(()),
            _ => Err(at.err(&format!("{}.data[{row}]", self.path), "expected a row (an array)")),
        }
    }
}

fn thread(
    t: &Value,
    path: &str,
    offset_ms: f64,
    interval_ms: f64,
    libs: &[Lib],
    r: &mut Reading<'_>,
    at: &At,
) -> Result<Option<ThreadWork>, Error> {
    if !t.is_object() {
        return Err(at.err(path, "expected a thread object"));
    }
    let Some(samples_v) = t.get("samples") else { return Ok(None) };
    let samples = Table::of(samples_v, "samples", path, at)?;
    if samples.rows.is_empty() {
        return Ok(None);
    }
    let stacks = Table::of(t.get("stackTable").unwrap_or(&Value::Null), "stackTable", path, at)?;
    let frames = Table::of(t.get("frameTable").unwrap_or(&Value::Null), "frameTable", path, at)?;
    let Some(Value::Array(string_table)) = t.get("stringTable") else {
        return Err(at.err(&format!("{path}.stringTable"), "expected an array of strings"));
    };
    let text = |k: usize, p: &str| -> Result<&str, Error> {
        string_table
            .get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| at.err(p, format!("string {k} is not in stringTable ({} strings)", string_table.len())))
    };
    // Each frame as a call frame, once.
    let mut frame_json: Vec<String> = Vec::with_capacity(frames.rows.len());
    for f in 0..frames.rows.len() {
        let fpath = format!("{}.data[{f}]", frames.path);
        frames.row_is_array(f, at)?;
        let loc = frames
            .cell(f, "location")
            .as_u64()
            .ok_or_else(|| at.err(&fpath, "expected a location (a string index)"))?;
        let location = text(loc as usize, &fpath)?;
        // The function is the location's: its name, file and own start, as the Firefox
        // Profiler's func table keys it. The frame's line and column columns are where the
        // sample was inside it, not which function it is.
        let out = frame_of(location, libs, r.cfg);
        frame_json.push(call_frame_json(&out));
    }
    let n_stacks = stacks.rows.len();
    let mut sampled = Sampled { stacks: Vec::with_capacity(n_stacks), samples: Vec::new(), end_us: f64::NAN };
    for s in 0..n_stacks {
        let spath = format!("{}.data[{s}]", stacks.path);
        stacks.row_is_array(s, at)?;
        let prefix = match stacks.cell(s, "prefix") {
            Value::Null => None,
            v => Some(v.as_u64().ok_or_else(|| at.err(&spath, "expected a prefix (a stack index or null)"))? as usize),
        };
        let frame = stacks.cell(s, "frame").as_u64().ok_or_else(|| at.err(&spath, "expected a frame index"))? as usize;
        if frame >= frame_json.len() {
            return Err(at.err(&spath, format!("frame {frame} is not in frameTable ({} rows)", frame_json.len())));
        }
        sampled.stacks.push((prefix, frame));
    }
    let time_column = if samples.has("time") {
        "time"
    } else if samples.has("timeDeltas") {
        "timeDeltas"
    } else {
        return Err(at.err(&format!("{}.schema", samples.path), "expected a time or timeDeltas column"));
    };
    let mut running = 0.0;
    for r in 0..samples.rows.len() {
        samples.row_is_array(r, at)?;
        let rpath = format!("{}.data[{r}]", samples.path);
        let stack = match samples.cell(r, "stack") {
            Value::Null => None,
            v => Some(v.as_u64().ok_or_else(|| at.err(&rpath, "expected a stack index or null"))?),
        };
        let t = samples
            .cell(r, time_column)
            .as_f64()
            .ok_or_else(|| at.err(&rpath, format!("expected a number of ms in {time_column}")))?;
        let ms = if time_column == "time" {
            t
        } else {
            running += t;
            running
        };
        sampled.samples.push((stack, (offset_ms + ms) * 1000.0));
    }
    sampled.end_us = sampled.samples.last().map_or(f64::NAN, |l| l.1) + interval_ms * 1000.0;
    let Some(mut w) = sampled.work(&frame_json, r, at)? else { return Ok(None) };
    w.pid = thread_id(t, "pid").unwrap_or(0);
    w.tid = thread_id(t, "tid").unwrap_or(0);
    w.thread_name = t.get("name").and_then(Value::as_str).map(str::to_owned);
    w.profile_id = serde_json::to_string(path).expect("a string serializes");
    Ok(Some(w))
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
        let fields = vec![
            ("nodes".to_owned(), nodes.into_bytes()),
            ("samples".to_owned(), ids.into_bytes()),
            ("timeDeltas".to_owned(), deltas.into_bytes()),
            ("startTime".to_owned(), number(first).into_bytes()),
            ("endTime".to_owned(), number(self.end_us).into_bytes()),
        ];
        let mut b = (f64::INFINITY, f64::NEG_INFINITY);
        let mut works = super::cpuprofile::thread_work(fields, None, at.location, r.strings, r.cfg, r.diag, &mut b)?;
        *r.bounds = (r.bounds.0.min(b.0), r.bounds.1.max(b.1));
        Ok(works.pop())
    }
}

fn number(n: f64) -> String {
    let mut s = String::new();
    crate::js::write_number(&mut s, n);
    s
}

/// The call frame a location string stands for.
fn frame_of(location: &str, libs: &[Lib], cfg: &Config) -> FrameOut {
    if let Some(hex) = location.strip_prefix("0x") {
        if let Ok(addr) = u64::from_str_radix(hex, 16) {
            return native(addr, libs, &cfg.symbols);
        }
    }
    if let Some(js) = js_location(location) {
        return js;
    }
    FrameOut { name: location.to_owned(), url: String::new(), line: None, column: None }
}

/// A native return address: its library's function when symbols are given, else
/// `lib+0xOFFSET` (or the bare address outside every library).
fn native(addr: u64, libs: &[Lib], symbols: &BTreeMap<String, Arc<Symbols>>) -> FrameOut {
    let lib = libs.partition_point(|l| l.start <= addr).checked_sub(1).map(|k| &libs[k]).filter(|l| addr < l.end);
    let name = match lib {
        Some(l) => {
            let rel = addr - l.start;
            match symbols.get(&l.name).and_then(|s| s.lookup(rel)) {
                Some(f) => f.to_owned(),
                None => format!("{}+0x{rel:x}", l.name),
            }
        }
        None => format!("0x{addr:x}"),
    };
    FrameOut { name, url: String::new(), line: None, column: None }
}

/// `name (url:line:column)`, `name (url:line)` or `url:line:column`, each possibly followed by
/// `[source index]`; line and column 1-based in the string, 0-based in the result.
fn js_location(s: &str) -> Option<FrameOut> {
    // A trailing `[N]` names the script in the thread's source table.
    let s = match s.strip_suffix(']').and_then(|t| t.rsplit_once('[')) {
        Some((head, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => s,
    };
    let (name, inner) = match s.strip_suffix(')').and_then(|t| t.rsplit_once(" (")) {
        Some((name, inner)) => (name, inner),
        None => ("", s),
    };
    let (url, line, column) = position(inner)?;
    Some(FrameOut {
        name: name.to_owned(),
        url: url.to_owned(),
        line: Some(line - 1),
        column: column.map(|c| (c - 1).max(0)),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_read_as_the_firefox_profiler_reads_them() {
        let js = |s: &str| js_location(s).map(|f| (f.name, f.url, f.line, f.column));
        assert_eq!(
            js("render (http://a.test/app.js:12:5)"),
            Some(("render".into(), "http://a.test/app.js".into(), Some(11), Some(4)))
        );
        assert_eq!(
            js("f (http://a.test:8080/x.js:3)"),
            Some(("f".into(), "http://a.test:8080/x.js".into(), Some(2), None))
        );
        assert_eq!(js("http://a.test/x.js:7:1"), Some(("".into(), "http://a.test/x.js".into(), Some(6), Some(0))));
        assert_eq!(
            js("g/<.h (resource://gre/m.sys.mjs:40:9)[3]"),
            Some(("g/<.h".into(), "resource://gre/m.sys.mjs".into(), Some(39), Some(8)))
        );
        assert_eq!(js("nsRefreshDriver::Tick"), None);
        assert_eq!(js("PresShell::DoReflow (interruptible)"), None);
        assert_eq!(js("js::RunScript"), None);
    }

    #[test]
    fn a_native_address_belongs_to_the_highest_symbol_at_or_below_it() {
        let nm = "0000000000001000 T main\n0000000000001040 T doSomething\n00000000000010a0 t someInterlude\n0000000000002000 D data\n                 U printf\n";
        let s = Symbols::from_nm(nm).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.lookup(0x0fff), None);
        assert_eq!(s.lookup(0x1000), Some("main"));
        assert_eq!(s.lookup(0x103f), Some("main"));
        assert_eq!(s.lookup(0x1040), Some("doSomething"));
        assert_eq!(s.lookup(0x10a0), Some("someInterlude"));
        // Past the last code symbol (data is not a function): still the last function.
        assert_eq!(s.lookup(0x2100), Some("someInterlude"));
        assert!(Symbols::from_nm("zz T f\n").unwrap_err().contains("line 1"));
        assert!(Symbols::from_nm("1000T\n").unwrap_err().contains("line 1"));
        let libs = [Lib { start: 0x7000_0000, end: 0x7000_4000, name: "app".into() }];
        let mut map = BTreeMap::new();
        map.insert("app".to_owned(), Arc::new(s));
        assert_eq!(native(0x7000_1044, &libs, &map).name, "doSomething");
        assert_eq!(native(0x7000_1044, &libs, &BTreeMap::new()).name, "app+0x1044");
        assert_eq!(native(0x6000_0000, &libs, &map).name, "0x60000000");
    }
}
