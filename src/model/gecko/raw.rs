//! Firefox's raw profile (the Gecko profile format): each sampled thread of the profile and of
//! its child processes.
//!
//! The format keeps its tables as `{schema: {column: index}, data: [rows]}`, and rows may stop
//! before the last column (trailing nulls left out), so a cell is found by its column's index
//! in the schema, and a row too short for it reads null. Times
//! are ms since the start of the (sub)process's profile (`meta.startTime`, ms since the epoch);
//! child processes are moved onto the root profile's clock. A frame's location is a JS
//! function (`name (url:line:column)`), a label (`PresShell::DoReflow`), or a native return
//! address (`0x7f…`), which [`Symbols`] turn into functions.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use super::sampled::{
    meta_start, position, thread_id, thread_label, At, FrameOut, Nodes, Reading, Samples, StackTable,
};
use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::model::ReadOptions;
use crate::model::ThreadWork;

/// The newest `meta.version` whose layout is known; newer ones are read as it, with a warning.
/// Version 36 (Firefox 159, checked against its own profiles) adds a top-level `sources`
/// table, each thread's `tracedValues` and `tracedObjectShapes`, and an `argumentValues` column
/// among the samples' (before `threadCPUDelta`): none of them carries a stack or a time, and
/// cells are looked up by name.
pub(super) const NEWEST_VERSION: u64 = 36;

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
    /// is at the line that cannot be read.
    pub fn from_nm(text: &str) -> Result<Symbols, Error> {
        let mut starts = Vec::new();
        let mut offset = 0;
        for (k, line) in text.split_inclusive('\n').enumerate() {
            let at = Location { line: k as u64 + 1, column: 1, offset, event: None };
            offset += line.len() as u64;
            let line = line.trim_end();
            // `                 U name`: an undefined symbol has no address.
            if line.is_empty() || line.starts_with(' ') {
                continue;
            }
            let mut parts = line.splitn(3, ' ');
            let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(Error::input(Some(at), "expected 'ADDRESS TYPE NAME' (nm --defined-only)"));
            };
            let addr = u64::from_str_radix(addr, 16)
                .map_err(|_| Error::input(Some(at), format!("'{addr}' is not a hexadecimal address")))?;
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

/// The threads of a raw Gecko profile and of its child processes, on the root's clock.
pub(super) fn thread_works(root: &Value, at: &At, r: &mut Reading<'_>) -> Result<Vec<ThreadWork>, Error> {
    let root_start = meta_start(root, "meta", at)?;
    let mut out = Vec::new();
    // Every library's name, for the symbols given for none of them.
    let mut lib_names: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    // (profile, its path, its libs' owner) — child processes after their parent.
    let mut todo: Vec<(&Value, String)> = vec![(root, String::new())];
    while let Some((p, path)) = todo.pop() {
        let meta_path = format!("{path}meta");
        check_version(p, &meta_path, at, r.diag)?;
        let offset_ms = meta_start(p, &meta_path, at)? - root_start;
        let libs = libs(p, &format!("{path}libs"), at)?;
        lib_names.extend(libs.iter().map(|l| l.name.clone()));
        let threads = match p.get("threads") {
            Some(Value::Array(t)) => t.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => return Err(at.err(&format!("{path}threads"), "expected an array of threads")),
        };
        let interval = p.get("meta").and_then(|m| m.get("interval")).and_then(Value::as_f64).unwrap_or(1.0);
        for (k, t) in threads.iter().enumerate() {
            let tpath = format!("{path}threads[{k}]");
            if let Some(w) = thread(t, &tpath, offset_ms, interval, &libs, r, at)? {
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

    /// The index of a column, found once for all rows.
    fn column(&self, name: &str) -> Option<usize> {
        self.columns.get(name).copied()
    }

    /// The cell, or null when the row stops before it (or the schema lacks the column).
    fn cell(&self, row: usize, column: Option<usize>) -> &'a Value {
        const NULL: Value = Value::Null;
        match (self.rows.get(row), column) {
            (Some(Value::Array(r)), Some(c)) => r.get(c).unwrap_or(&NULL),
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
    let text = |k: usize, p: &dyn Fn() -> String| -> Result<&str, Error> {
        string_table
            .get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| at.err(&p(), format!("string {k} is not in stringTable ({} strings)", string_table.len())))
    };
    // Each frame as a call frame, once.
    let mut call_frames: Vec<FrameOut> = Vec::with_capacity(frames.rows.len());
    let mut scripted: Vec<bool> = Vec::with_capacity(frames.rows.len());
    let location_column = frames.column("location");
    for f in 0..frames.rows.len() {
        let fpath = || format!("{}.data[{f}]", frames.path);
        frames.row_is_array(f, at)?;
        let loc = frames
            .cell(f, location_column)
            .as_u64()
            .ok_or_else(|| at.err(&fpath(), "expected a location (a string index)"))?;
        let location = text(loc as usize, &fpath)?;
        // The function is the location's: its name, file and own start, as the Firefox
        // Profiler's func table keys it. The frame's line and column columns are where the
        // sample was inside it, not which function it is.
        let out = frame_of(location, libs, r.cfg);
        scripted.push(!out.url.is_empty());
        call_frames.push(out);
    }
    let n_stacks = stacks.rows.len();
    let mut table = StackTable {
        stacks: Vec::with_capacity(n_stacks),
        stack_places: Vec::with_capacity(n_stacks),
        scripted,
        frames: call_frames,
    };
    let (prefix_column, frame_column) = (stacks.column("prefix"), stacks.column("frame"));
    let (line_column, column_column) = (frames.column("line"), frames.column("column"));
    for s in 0..n_stacks {
        let spath = || format!("{}.data[{s}]", stacks.path);
        stacks.row_is_array(s, at)?;
        let prefix = match stacks.cell(s, prefix_column) {
            Value::Null => None,
            v => {
                Some(v.as_u64().ok_or_else(|| at.err(&spath(), "expected a prefix (a stack index or null)"))? as usize)
            }
        };
        let frame =
            stacks.cell(s, frame_column).as_u64().ok_or_else(|| at.err(&spath(), "expected a frame index"))? as usize;
        if frame >= table.frames.len() {
            return Err(at.err(&spath(), format!("frame {frame} is not in frameTable ({} rows)", table.frames.len())));
        }
        table.stacks.push((prefix, frame));
        let place = |column: Option<usize>| frames.cell(frame, column).as_f64().unwrap_or(0.0);
        table.stack_places.push((place(line_column), place(column_column)));
    }
    let time_column = if samples.has("time") {
        "time"
    } else if samples.has("timeDeltas") {
        "timeDeltas"
    } else {
        return Err(at.err(&format!("{}.schema", samples.path), "expected a time or timeDeltas column"));
    };
    let mut sampled = Samples::new(&samples.path, "data", samples.rows.len());
    let mut running = 0.0;
    let (stack_column, time_index) = (samples.column("stack"), samples.column(time_column));
    for r in 0..samples.rows.len() {
        samples.row_is_array(r, at)?;
        let rpath = || format!("{}.data[{r}]", samples.path);
        let stack = match samples.cell(r, stack_column) {
            Value::Null => None,
            v => Some(v.as_u64().ok_or_else(|| at.err(&rpath(), "expected a stack index or null"))?),
        };
        let t = samples
            .cell(r, time_index)
            .as_f64()
            .ok_or_else(|| at.err(&rpath(), format!("expected a number of ms in {time_column}")))?;
        let ms = if time_column == "time" {
            t
        } else {
            running += t;
            running
        };
        sampled.samples.push((stack, (offset_ms + ms) * 1000.0));
    }
    sampled.end_us = sampled.samples.last().map_or(f64::NAN, |l| l.1) + interval_ms * 1000.0;
    let Some(mut w) = Nodes::new(table, false).work(&thread_label(t, path), &sampled, r, at)? else {
        return Ok(None);
    };
    w.pid = thread_id(t, "pid").unwrap_or(0);
    w.tid = thread_id(t, "tid").unwrap_or(0);
    w.thread_name = t.get("name").and_then(Value::as_str).map(str::to_owned);
    w.profile_id = serde_json::to_string(path).expect("a string serializes");
    Ok(Some(w))
}

/// The call frame a location string stands for.
fn frame_of(location: &str, libs: &[Lib], cfg: &ReadOptions<'_>) -> FrameOut {
    if let Some(hex) = location.strip_prefix("0x") {
        if let Ok(addr) = u64::from_str_radix(hex, 16) {
            return native(addr, libs, cfg.symbols);
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
        assert_eq!(Symbols::from_nm("zz T f\n").unwrap_err().to_string(), "1:1: 'zz' is not a hexadecimal address");
        assert_eq!(
            Symbols::from_nm("1 T f\n1000T\n").unwrap_err().to_string(),
            "2:1: expected 'ADDRESS TYPE NAME' (nm --defined-only)"
        );
        let libs = [Lib { start: 0x7000_0000, end: 0x7000_4000, name: "app".into() }];
        let mut map = BTreeMap::new();
        map.insert("app".to_owned(), Arc::new(s));
        assert_eq!(native(0x7000_1044, &libs, &map).name, "doSomething");
        assert_eq!(native(0x7000_1044, &libs, &BTreeMap::new()).name, "app+0x1044");
        assert_eq!(native(0x6000_0000, &libs, &map).name, "0x60000000");
    }
}
