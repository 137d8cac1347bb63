//! `export --to firefox`: the Firefox Profiler's processed profile (see [`write`]), a thread
//! per chosen thread, each thread's tables made in parallel.

mod write;

use jscalls::tree::{Func, StackId};

use super::{Format, Rendered};
use crate::cli::args::WeightArg;
use crate::cli::tree::Chosen;
use write::{ns_from, FrameRow, FuncRow, Marker, SpanSamples, GC, IDLE, JS, NATIVE};
pub(crate) use write::{write, Head, ThreadPart};

use rustc_hash::FxHashMap;
use std::collections::BTreeSet;
use std::path::Path;

use crate::cli::files::read_option_file;
use crate::cli::output::same_file;
use crate::cli::sources::{SourceDirs, SOURCE_LIMIT};
use crate::cli::tree::Failure;

/// A function's category (JavaScript, GC, idle, native) and whether it is JavaScript, or
/// native code that JavaScript's call tree keeps.
fn frame_kind(f: &Func) -> (u8, bool, bool) {
    if f.is_js() {
        (JS, true, false)
    } else if f.name == "(garbage collector)" {
        (GC, false, false)
    } else if matches!(f.name.as_str(), "(idle)" | "(program)" | "(root)") {
        (IDLE, false, false)
    } else {
        (NATIVE, false, true)
    }
}

/// The Firefox Profiler's processed profile: a process per pid, a thread per chosen thread, and
/// the spans as samples. Each span is a sample at its start (a gap, a sample on no stack), so
/// the Stack Chart draws every call at its estimated length, however short. A sample weighs
/// its span's time ("tracing-ms", to the µs, rounded as a running sum so that a thread's
/// weights add up to its total): the call tree's running times are the estimated ones. With
/// `--weight samples`, one sample per CPU-profile sample, counted. With `--by-line`, a
/// sample's function is at the line it recorded (the frame's line), which the Profiler's
/// source view shows per line.
pub(super) const FORMAT: Format = Format {
    name: "firefox",
    what: "a Firefox Profiler profile",
    help: "The Firefox Profiler's processed profile (gzipped when OUT ends in .gz): a thread per thread, \
           the calls as samples at their estimated times, weighing their µs",
    suffix: ".profile.json.gz",
    endings: &[".json"],
    spans: true,
    counts: false,
    markers: true,
    samples: false,
    render: |kept, args, input, threads| Ok(firefox(kept, args.select.weight, args.select.by_line, input, threads)),
};

fn firefox(kept: Vec<Chosen>, weight: WeightArg, by_line: bool, input: &str, threads: usize) -> Rendered {
    let counts = weight == WeightArg::Samples;
    let interval_ns = if counts {
        // The mean sampling interval, as the call tree multiplies counts by it.
        let (n, t) = kept
            .iter()
            .flat_map(|c| c.spans.iter())
            .filter(|s| s.end > s.start)
            .fold((0.0, 0.0), |(n, t), s| (n + 1.0, t + s.end - s.start));
        if n > 0.0 {
            ((t / n) * 1000.0).round().max(1.0) as u64
        } else {
            1_000_000
        }
    } else {
        1000
    };
    // Times count from the export's first whole millisecond: short numbers to write and to
    // gzip, none below zero. (A thread's spans are in time order: its first starts first.)
    let first = kept
        .iter()
        .flat_map(|c| c.spans.first().map(|s| s.start).into_iter().chain(c.events.iter().map(|e| e.1)))
        .fold(f64::INFINITY, f64::min);
    let zero = if first.is_finite() { (first / 1000.0).floor() * 1000.0 } else { 0.0 };
    let base = Base { zero, counts, by_line };
    // Processes and threads listed in pid, tid order, so the file does not depend on which is
    // busiest.
    let mut order: Vec<usize> = (0..kept.len()).collect();
    order.sort_by_key(|&k| (kept[k].pid, kept[k].tid));
    let by_pid: Vec<&Chosen> = order.iter().map(|&k| &kept[k]).collect();
    let processes = Process::all(&by_pid, &base);
    let process_of = |c: &Chosen| &processes[processes.partition_point(|p| p.pid < c.pid)];
    let tids = unique_ids(by_pid.iter().map(|c| c.tid as u32));
    let mut order: Vec<(usize, String)> = order.into_iter().zip(tids).collect();
    // Processes by (start, pid), a process's threads main first, then by (start, name, tid);
    // ids compared as the strings written.
    order.sort_by(|(a, ta), (b, tb)| {
        let (a, b) = (&kept[*a], &kept[*b]);
        let (pa, pb) = (process_of(a), process_of(b));
        (pa.start, &pa.id)
            .cmp(&(pb.start, &pb.id))
            .then_with(|| (!is_main(a), base.thread_start(a)).cmp(&(!is_main(b), base.thread_start(b))))
            .then_with(|| thread_name(a).cmp(thread_name(b)))
            .then_with(|| ta.cmp(tb))
    });
    let js = kept.iter().any(|c| c.stacks.funcs.iter().any(Func::is_js));
    // Each thread handed over whole: its spans become its samples, its events its markers.
    let mut kept: Vec<Option<Chosen>> = kept.into_iter().map(Some).collect();
    let jobs: Vec<(Chosen, String)> =
        order.into_iter().map(|(k, tid)| (kept[k].take().expect("each thread once"), tid)).collect();
    let parts = jscalls::threads::map(jobs, threads, |(c, tid)| {
        let process = process_of(&c);
        base.thread(c, process, tid)
    });
    let head = Head {
        product: format!("jscalls: {input}"),
        interval_ns,
        start_ms: zero / 1000.0,
        tracing_ms: !counts,
        js,
        sources: Default::default(),
    };
    Rendered::Firefox { head, parts, threads, missing: Vec::new() }
}

/// The ids the Firefox profile's writer gives these (u32 there), in the order they are added:
/// the number, and `.n` after it for its n-th repeat.
fn unique_ids(ids: impl Iterator<Item = u32>) -> Vec<String> {
    let mut seen: FxHashMap<u32, u32> = FxHashMap::default();
    ids.map(|id| {
        let n = seen.entry(id).or_insert(0);
        *n += 1;
        if *n == 1 {
            id.to_string()
        } else {
            format!("{id}.{}", *n - 1)
        }
    })
    .collect()
}

fn thread_name(c: &Chosen) -> &str {
    c.name.as_deref().unwrap_or("thread")
}

/// Whether the Firefox Profiler is to see `c` as its process's main thread.
fn is_main(c: &Chosen) -> bool {
    matches!(thread_name(c), "CrRendererMain" | "CrBrowserMain") || c.pid == c.tid
}

/// A process as the Firefox profile shows it.
struct Process {
    pid: i64,
    /// Its pid as the writer writes it ([`unique_ids`]).
    id: String,
    start: u64,
    name: String,
}

impl Process {
    /// The processes of `threads` (in pid, tid order): each starts with its first thread and is
    /// named after its (last) main thread, which the Firefox Profiler shows under that name.
    fn all(threads: &[&Chosen], base: &Base) -> Vec<Process> {
        let mut processes: Vec<Process> = Vec::new();
        for c in threads {
            if processes.last().is_none_or(|p| p.pid != c.pid) {
                let start = base.thread_start(c);
                processes.push(Process { pid: c.pid, id: String::new(), start, name: format!("pid {}", c.pid) });
            }
            if is_main(c) {
                processes.last_mut().expect("pushed above").name = format!("{} (pid {})", thread_name(c), c.pid);
            }
        }
        let ids = unique_ids(processes.iter().map(|p| p.pid as u32));
        for (p, id) in processes.iter_mut().zip(ids) {
            p.id = id;
        }
        processes
    }
}

/// What every thread's tables are made with.
struct Base {
    /// The profile's time 0 (µs of the trace).
    zero: f64,
    /// Samples counted (`--weight samples`) rather than weighing their µs.
    counts: bool,
    /// Line frames ([`Func::line_frame`]) become their function's frame at that line.
    by_line: bool,
}

impl Base {
    /// ns from the profile's start.
    fn at(&self, us: f64) -> u64 {
        ns_from(self.zero, us)
    }

    /// When a thread starts: its first span's start.
    fn thread_start(&self, c: &Chosen) -> u64 {
        self.at(c.spans.first().map_or(0.0, |s| s.start))
    }

    /// `c`'s tables.
    fn thread(&self, mut c: Chosen, process: &Process, tid: String) -> ThreadPart {
        let mut t = ThreadPart {
            name: thread_name(&c).to_owned(),
            process_name: process.name.clone(),
            pid: process.id.clone(),
            tid,
            is_main: is_main(&c),
            process_start: process.start,
            register: self.thread_start(&c),
            ..ThreadPart::default()
        };
        // A function per distinct (label, kind): its first place is the one shown.
        let mut func_of_label: FxHashMap<(String, (u8, bool, bool)), u32> = FxHashMap::default();
        let funcs: Vec<u32> = c
            .stacks
            .funcs
            .iter()
            .map(|f| {
                let kind = frame_kind(f);
                *func_of_label.entry((f.label(), kind)).or_insert_with(|| {
                    let js = f.is_js() && !f.url.is_empty();
                    let plus_one = |v: Option<i64>| {
                        v.filter(|&v| js && (0..i64::from(u32::MAX)).contains(&v)).map(|v| v as u32 + 1)
                    };
                    t.funcs.push(FuncRow {
                        name: f.label(),
                        is_js: kind.1,
                        relevant_for_js: kind.2,
                        file: js.then(|| f.url.clone()),
                        line: plus_one(f.line),
                        column: plus_one(f.column),
                    });
                    t.funcs.len() as u32 - 1
                })
            })
            .collect();
        let mut frame_index: FxHashMap<FrameRow, u32> = FxHashMap::default();
        let mut frame = |t: &mut ThreadPart, row: FrameRow| {
            *frame_index.entry(row).or_insert_with(|| {
                t.frames.push(row);
                t.frames.len() as u32 - 1
            })
        };
        // Each stack's stack in the profile (its index, frame and parent's index).
        let mut stacks: Vec<(u32, u32, Option<u32>)> = Vec::with_capacity(c.stacks.len());
        let mut stack_index: FxHashMap<(Option<u32>, u32), u32> = FxHashMap::default();
        for s in (0..c.stacks.len()).map(StackId::new) {
            let (parent, f) = c.stacks.frame(s);
            let func = &c.stacks.funcs[f.index()];
            let line = if self.by_line { func.sample_line() } else { None };
            let above = parent.map(|p| (stacks[p.index()], &c.stacks.funcs[c.stacks.frame(p).1.index()]));
            // A line frame under a function of its script: that function's frame at the line.
            let (prefix, row) = match (line, above) {
                (Some(line), Some(((_, fr, grand), pf))) if t.frames[fr as usize].2.is_none() && pf.url == func.url => {
                    let (pfunc, category, _) = t.frames[fr as usize];
                    (grand, (pfunc, category, Some(line)))
                }
                _ => (above.map(|a| a.0 .0), (funcs[f.index()], frame_kind(func).0, None)),
            };
            let fr = frame(&mut t, row);
            let n = t.stacks.len() as u32;
            let k = *stack_index.entry((prefix, fr)).or_insert_with(|| {
                t.stacks.push((prefix.map_or(0, |p| n - p), fr));
                n
            });
            stacks.push((k, fr, prefix));
        }
        let mut name_index: FxHashMap<&str, usize> = FxHashMap::default();
        let events = std::mem::take(&mut c.events);
        t.markers.reserve_exact(events.len());
        for (name, ts, dur) in &events {
            let names = &mut t.marker_names;
            let k = *name_index.entry(&**name).or_insert_with(|| {
                names.push(name.to_string());
                names.len() - 1
            });
            let end = if *dur > 0.0 { self.at(ts + dur) } else { Marker::INSTANT };
            t.markers.push(Marker { name: k as u32, start: self.at(*ts), end });
        }
        drop(name_index);
        drop(events);
        let stack_of = stacks.into_iter().map(|s| s.0).collect();
        t.samples = SpanSamples { spans: std::mem::take(&mut c.spans), stack_of, zero: self.zero, counts: self.counts };
        t
    }
}

/// The text of each script a function of `parts` is in, for the source view: the trace's own
/// text of it, else the file `dirs` has at its URL (never the output); and the scripts that
/// `dirs` were asked for and do not have.
pub(crate) fn sources(
    parts: &[ThreadPart],
    mut texts: FxHashMap<String, String>,
    dirs: Option<&SourceDirs>,
    output: Option<&Path>,
) -> Result<(FxHashMap<String, String>, Vec<String>), Failure> {
    let files: BTreeSet<&str> = parts.iter().flat_map(|p| p.funcs.iter().filter_map(|f| f.file.as_deref())).collect();
    let (mut found, mut missing) = (FxHashMap::default(), Vec::new());
    for file in files {
        if let Some(text) = texts.remove(file) {
            found.insert(file.to_owned(), text);
            continue;
        }
        let Some(dirs) = dirs else { continue };
        let Some(path) = dirs.find(file) else {
            missing.push(file.to_owned());
            continue;
        };
        if output.is_some_and(|o| same_file(&path, o)) {
            return Err(Failure::Usage(format!(
                "the output {} is the source of {file}; refusing to overwrite it",
                path.display()
            )));
        }
        let bytes = read_option_file(&path, "the source", SOURCE_LIMIT).map_err(Failure::Input)?;
        found.insert(file.to_owned(), String::from_utf8_lossy(&bytes).into_owned());
    }
    Ok((found, missing))
}

#[cfg(test)]
mod tests;
