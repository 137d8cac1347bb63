//! The Firefox Profiler's processed profile (what the Profiler downloads, samply writes and
//! `export --to firefox` writes) read into the model, as the Gecko format is: each thread with
//! samples becomes a CPU profile of one node per function and call path.
//!
//! Its tables are columns (`{length, column: [...]}`), and its layout moved over the versions
//! (`meta.preprocessedProfileVersion`), each read where it is: strings in each thread's
//! `stringArray` (`stringTable` before), then one `shared.stringArray` (56); a function's file
//! as a string (`fileName`), then a `source` into `shared.sources` (58); the stack, frame,
//! function and resource tables in each thread, then in `shared` (60); a stack's parent as
//! `prefix`, then as `prefixOffset` back from it (66). Times are ms from `meta.startTime`.

use serde_json::Value;

use super::sampled::{
    meta_start, position, thread_id, thread_label, At, FrameOut, Nodes, Reading, Samples, StackTable,
};
use crate::error::{Error, WarningKind};
use crate::model::ThreadWork;

/// The newest `preprocessedProfileVersion` whose layout is known (the Firefox Profiler of
/// August 2026); newer ones are read as it, with a warning.
pub(super) const NEWEST_VERSION: u64 = 70;

/// A table of columns.
struct Columns<'a> {
    table: &'a serde_json::Map<String, Value>,
    path: String,
    len: usize,
}

impl<'a> Columns<'a> {
    fn of(v: Option<&'a Value>, path: String, at: &At) -> Result<Columns<'a>, Error> {
        let Some(Value::Object(table)) = v else {
            return Err(at.err(&path, "expected a table ({\"length\": N, column: [...], ...})"));
        };
        let len = match table.get("length") {
            Some(n) => n.as_u64().ok_or_else(|| at.err(&format!("{path}.length"), "expected a count"))? as usize,
            None => return Err(at.err(&path, "expected a table with a length")),
        };
        Ok(Columns { table, path, len })
    }

    fn has(&self, column: &str) -> bool {
        self.table.get(column).is_some_and(Value::is_array)
    }

    /// The column, which must hold `len` cells.
    fn column(&self, name: &str, at: &At) -> Result<&'a [Value], Error> {
        match self.table.get(name) {
            Some(Value::Array(c)) if c.len() >= self.len => Ok(&c[..self.len]),
            Some(Value::Array(c)) => Err(at.err(
                &format!("{}.{name}", self.path),
                format!("expected {} cells (the table's length), found {}", self.len, c.len()),
            )),
            _ => Err(at.err(&format!("{}.{name}", self.path), "expected a column (an array)")),
        }
    }

    /// An index cell: None for null.
    fn index(&self, column: &[Value], name: &str, row: usize, at: &At) -> Result<Option<usize>, Error> {
        match &column[row] {
            Value::Null => Ok(None),
            v => v
                .as_u64()
                .map(|k| Some(k as usize))
                .ok_or_else(|| at.err(&format!("{}.{name}[{row}]", self.path), "expected an index or null")),
        }
    }
}

/// The threads of a processed profile.
pub(super) fn thread_works(root: &Value, at: &At, r: &mut Reading<'_>) -> Result<Vec<ThreadWork>, Error> {
    let version = root["meta"]["preprocessedProfileVersion"]
        .as_u64()
        .ok_or_else(|| at.err("meta.preprocessedProfileVersion", "expected a version number"))?;
    if version > NEWEST_VERSION {
        r.diag.push(
            WarningKind::Other,
            Some(at.location),
            format!("meta.preprocessedProfileVersion {version} is newer than the newest known ({NEWEST_VERSION}); read as that one"),
        );
    }
    let start_ms = meta_start(root, "meta", at)?;
    let interval_ms = root["meta"]["interval"].as_f64().filter(|i| *i > 0.0).unwrap_or(1.0);
    let shared = root.get("shared").filter(|s| s.is_object());
    let threads = match root.get("threads") {
        Some(Value::Array(t)) => t.as_slice(),
        _ => return Err(at.err("threads", "expected an array of threads")),
    };
    let mut out = Vec::new();
    // The tables the last thread read, made ready: from version 60 every thread shares them.
    let mut made = None;
    for (k, t) in threads.iter().enumerate() {
        let path = format!("threads[{k}]");
        if !t.is_object() {
            return Err(at.err(&path, "expected a thread object"));
        }
        let Some(mut w) = thread(t, &path, shared, (start_ms, interval_ms), &mut made, r, at)? else {
            continue;
        };
        w.pid = thread_id(t, "pid").unwrap_or(0);
        w.tid = thread_id(t, "tid").unwrap_or(k as i64);
        // jscalls' export names a process's main thread `NAME (pid N)`, for the Profiler's list.
        let name = t.get("name").and_then(Value::as_str);
        let pid_suffix = format!(" (pid {})", w.pid);
        w.thread_name = name.map(|n| n.strip_suffix(pid_suffix.as_str()).unwrap_or(n).to_owned());
        w.profile_id = serde_json::to_string(&path).expect("a string serializes");
        out.push(w);
    }
    out.sort_by_key(|w| (w.pid, w.tid));
    Ok(out)
}

/// A table of the thread's, or the profile's shared one (version 60 on).
fn table<'a>(t: &'a Value, shared: Option<&'a Value>, name: &str, path: &str, at: &At) -> Result<Columns<'a>, Error> {
    match t.get(name) {
        Some(v) if !v.is_null() => Columns::of(Some(v), format!("{path}.{name}"), at),
        _ => Columns::of(shared.and_then(|s| s.get(name)), format!("shared.{name}"), at),
    }
}

/// Which tables a thread reads (their addresses): threads that read the same ones share them.
type TablesKey = [usize; 4];

fn thread(
    t: &Value,
    path: &str,
    shared: Option<&Value>,
    (start_ms, interval_ms): (f64, f64),
    made: &mut Option<(TablesKey, Nodes)>,
    r: &mut Reading<'_>,
    at: &At,
) -> Result<Option<ThreadWork>, Error> {
    let samples = Columns::of(t.get("samples"), format!("{path}.samples"), at)?;
    if samples.len == 0 {
        return Ok(None);
    }
    // The strings: the thread's (before version 56) or the profile's.
    let text: &[Value] = match (t.get("stringArray"), t.get("stringTable"), shared.and_then(|s| s.get("stringArray"))) {
        (Some(Value::Array(a)), _, _) | (_, Some(Value::Array(a)), _) | (None, None, Some(Value::Array(a))) => a,
        _ => return Err(at.err(&format!("{path}.stringArray"), "expected an array of strings (or shared.stringArray)")),
    };
    let stacks = table(t, shared, "stackTable", path, at)?;
    let frames = table(t, shared, "frameTable", path, at)?;
    let funcs = table(t, shared, "funcTable", path, at)?;
    let address = |c: &Columns<'_>| std::ptr::from_ref(c.table) as usize;
    let key = [address(&stacks), address(&frames), address(&funcs), text.as_ptr() as usize];
    let nodes = match made {
        Some((k, nodes)) if *k == key => nodes,
        _ => {
            let table = stack_table(&stacks, &frames, &funcs, shared, text, at)?;
            &made.insert((key, Nodes::new(table, stacks.path.starts_with("shared.")))).1
        }
    };
    let stack_cells = samples.column("stack", at)?;
    let (cells, name, deltas) = if samples.has("time") {
        (samples.column("time", at)?, "time", false)
    } else {
        (samples.column("timeDeltas", at)?, "timeDeltas", true)
    };
    let mut sampled = Samples::new(&samples.path, name, samples.len);
    let mut running = 0.0;
    for (k, cell) in cells.iter().enumerate() {
        let stack = samples.index(stack_cells, "stack", k, at)?.map(|s| s as u64);
        let v =
            cell.as_f64().ok_or_else(|| at.err(&format!("{}.{name}[{k}]", samples.path), "expected a number of ms"))?;
        let ms = if deltas {
            running += v;
            running
        } else {
            v
        };
        sampled.samples.push((stack, (start_ms + ms) * 1000.0));
    }
    // A traced profile's samples weigh their own length (ms): the last one ends after it.
    let last_ms = match (samples.table.get("weightType").and_then(Value::as_str), samples.table.get("weight")) {
        (Some("tracing-ms"), Some(Value::Array(w))) => w.get(samples.len - 1).and_then(Value::as_f64),
        _ => None,
    };
    sampled.end_us = sampled.samples.last().map_or(f64::NAN, |l| l.1) + last_ms.unwrap_or(interval_ms) * 1000.0;
    nodes.work(&thread_label(t, path), &sampled, r, at)
}

/// The stacks on their functions: a frame's line is where the sample was, not the function,
/// and each function's call frame stands for the "frame".
fn stack_table(
    stacks: &Columns<'_>,
    frames: &Columns<'_>,
    funcs: &Columns<'_>,
    shared: Option<&Value>,
    text: &[Value],
    at: &At,
) -> Result<StackTable, Error> {
    let (func_frames, scripted) = function_frames(funcs, shared, text, at)?;
    let frame_func = frames.column("func", at)?;
    let mut frame_of_func = Vec::with_capacity(frames.len);
    for f in 0..frames.len {
        let func = frames.index(frame_func, "func", f, at)?.filter(|&k| k < funcs.len).ok_or_else(|| {
            at.err(&format!("{}.func[{f}]", frames.path), format!("expected a function index below {}", funcs.len))
        })?;
        frame_of_func.push(func);
    }
    let stack_frame = stacks.column("frame", at)?;
    let prefix = stacks.column("prefix", at).ok();
    let offset = if prefix.is_none() { Some(stacks.column("prefixOffset", at)?) } else { None };
    let frame_line = frames.has("line").then(|| frames.column("line", at)).transpose()?;
    let frame_column = frames.has("column").then(|| frames.column("column", at)).transpose()?;
    let mut table = StackTable {
        stacks: Vec::with_capacity(stacks.len),
        stack_places: Vec::with_capacity(stacks.len),
        scripted,
        frames: func_frames,
    };
    for s in 0..stacks.len {
        let frame = stacks.index(stack_frame, "frame", s, at)?.filter(|&k| k < frames.len).ok_or_else(|| {
            at.err(&format!("{}.frame[{s}]", stacks.path), format!("expected a frame index below {}", frames.len))
        })?;
        let parent = match (prefix, offset) {
            (Some(p), _) => stacks.index(p, "prefix", s, at)?,
            (None, Some(o)) => match o[s].as_u64() {
                Some(0) => None,
                Some(back) if back as usize <= s => Some(s - back as usize),
                _ => {
                    return Err(at.err(
                        &format!("{}.prefixOffset[{s}]", stacks.path),
                        "expected 0 or a count back to an earlier stack",
                    ))
                }
            },
            (None, None) => None,
        };
        table.stacks.push((parent, frame_of_func[frame]));
        let place = |c: Option<&[Value]>| c.and_then(|c| c[frame].as_f64()).unwrap_or(0.0);
        table.stack_places.push((place(frame_line), place(frame_column)));
    }
    Ok(table)
}

/// Each function as a call frame (JSON): its name, file and own start (1-based there); and
/// whether it is a script's (has a file).
fn function_frames(
    funcs: &Columns<'_>,
    shared: Option<&Value>,
    text: &[Value],
    at: &At,
) -> Result<(Vec<FrameOut>, Vec<bool>), Error> {
    let string = |k: usize, p: &dyn Fn() -> String| -> Result<&str, Error> {
        text.get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| at.err(&p(), format!("string {k} is not among the {} strings", text.len())))
    };
    let (names, is_js) = (funcs.column("name", at)?, funcs.column("isJS", at)?);
    let (lines, columns) = (funcs.column("lineNumber", at).ok(), funcs.column("columnNumber", at).ok());
    let sources = shared.and_then(|s| s.get("sources")).filter(|s| s.is_object());
    let files: Option<(&[Value], Option<&[Value]>)> = if funcs.has("fileName") {
        Some((funcs.column("fileName", at)?, None))
    } else if funcs.has("source") {
        let filenames = Columns::of(sources, "shared.sources".to_owned(), at)?;
        Some((funcs.column("source", at)?, Some(filenames.column("filename", at)?)))
    } else {
        None
    };
    let mut func_frames = Vec::with_capacity(funcs.len);
    let mut scripted = Vec::with_capacity(funcs.len);
    for f in 0..funcs.len {
        let fpath = || format!("{}.name[{f}]", funcs.path);
        let name_index =
            funcs.index(names, "name", f, at)?.ok_or_else(|| at.err(&fpath(), "expected a string index"))?;
        let name = string(name_index, &fpath)?;
        let file = match files {
            Some((cells, via)) => {
                let column = if via.is_some() { "source" } else { "fileName" };
                match funcs.index(cells, column, f, at)? {
                    None => None,
                    Some(k) => {
                        let k = match via {
                            Some(filenames) => filenames.get(k).and_then(Value::as_u64).ok_or_else(|| {
                                at.err(&format!("shared.sources.filename[{k}]"), "expected a string index")
                            })? as usize,
                            None => k,
                        };
                        Some(string(k, &fpath)?)
                    }
                }
            }
            None => None,
        };
        let number = |c: Option<&[Value]>| c.and_then(|c| c[f].as_i64());
        let out = match file {
            Some(url) => FrameOut {
                name: own_name(name, url),
                url: url.to_owned(),
                line: number(lines).map(|l| l.saturating_sub(1)),
                column: number(columns).map(|c| c.saturating_sub(1).max(0)),
            },
            // jscalls' own export names a JS function `name url:line:column`.
            None if is_js[f].as_bool() == Some(true) => labelled(name),
            None => FrameOut { name: name.to_owned(), url: String::new(), line: None, column: None },
        };
        scripted.push(!out.url.is_empty());
        func_frames.push(out);
    }
    Ok((func_frames, scripted))
}

/// The name of a function whose file is `url`: jscalls' export names it by its label, `name
/// url:line:column` (or `name url`), which has the name before the file.
fn own_name(name: &str, url: &str) -> String {
    let l = labelled(name);
    if l.url == url {
        return l.name;
    }
    match name.strip_suffix(url).and_then(|n| n.strip_suffix(' ')) {
        Some("(anonymous)") => String::new(),
        Some(n) => n.to_owned(),
        None => name.to_owned(),
    }
}

/// `name url:line:column` (1-based), as jscalls' export and the tree name a JS function; a
/// name alone when it is not that.
fn labelled(label: &str) -> FrameOut {
    if let Some((name, place)) = label.rsplit_once(' ') {
        if let Some((url, line, column)) = position(place) {
            let name = if name == "(anonymous)" { "" } else { name };
            return FrameOut {
                name: name.to_owned(),
                url: url.to_owned(),
                line: Some(line - 1),
                column: column.map(|c| c - 1),
            };
        }
    }
    FrameOut { name: label.to_owned(), url: String::new(), line: None, column: None }
}
