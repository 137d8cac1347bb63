//! `export --to firefox`: the Firefox Profiler's processed profile, written by its own Rust
//! writer (fxprof-processed-profile), a thread per chosen thread, in parallel.

use std::io::{self, Write};

use jscalls::tree::StackId;

use super::{Format, Rendered};
use crate::cli::args::WeightArg;
use crate::cli::tree::Chosen;

/// A thread's own Firefox profile, with the pid and tid that the one profile of every thread
/// writes for it (see [`unique_ids`]).
pub(crate) struct ThreadPart {
    profile: Box<fxprof_processed_profile::Profile>,
    pid: (u32, String),
    tid: (u32, String),
    /// Where its functions are, written into its func table (see [`Places`]).
    places: Option<Places>,
}

/// Each function of a thread's func table (in the writer's order) with its file, line and
/// column (1-based), which the writer cannot write: the Firefox Profiler shows them, and its
/// source view opens the file at the function. Source-mapped functions are at their original
/// place.
pub(crate) struct Places {
    /// Per function: its file (an index into `files`), line and column.
    funcs: Vec<(Option<u32>, Option<i64>, Option<i64>)>,
    files: Vec<String>,
}

impl Places {
    /// The places of `c`'s functions, in the order the writer makes its func table: a
    /// function per distinct (label, flags), as the frames are interned.
    fn of(c: &Chosen) -> Places {
        let mut seen: std::collections::HashSet<(String, u32)> = std::collections::HashSet::new();
        let mut files: Vec<String> = Vec::new();
        let mut file_index: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        let mut funcs = Vec::new();
        for f in &c.stacks.funcs {
            if !seen.insert((f.label(), frame_kind(f).1.bits())) {
                continue;
            }
            let js = f.is_js() && !f.url.is_empty();
            let file = js.then(|| {
                *file_index.entry(f.url.clone()).or_insert_with(|| {
                    files.push(f.url.clone());
                    files.len() as u32 - 1
                })
            });
            let plus_one = |v: Option<i64>| v.filter(|&v| js && v >= 0).map(|v| v + 1);
            funcs.push((file, plus_one(f.line), plus_one(f.column)));
        }
        Places { funcs, files }
    }

    /// Writes the places into the bytes of a profile of one thread: the files at the end of
    /// its string table, and the func table's `fileName`, `lineNumber` and `columnNumber`
    /// (which the writer fills with nulls).
    fn write_into(&self, bytes: &mut Vec<u8>) -> io::Result<()> {
        if self.funcs.iter().all(|&(f, l, c)| f.is_none() && l.is_none() && c.is_none()) {
            return Ok(());
        }
        let bad =
            |what: &str| io::Error::other(format!("the Firefox profile's writer wrote its {what} unlike expected"));
        // Keys found as keys only: a quote inside a string is escaped. Last in the bytes first,
        // so that the places found before stay where they are.
        let strings = find_array(bytes, b"\"stringArray\":[").ok_or_else(|| bad("string table"))?;
        let n = json_strings(&bytes[strings.clone()]).ok_or_else(|| bad("string table"))?;
        let mut added = String::new();
        for (k, f) in self.files.iter().enumerate() {
            if n + k > 0 {
                added.push(',');
            }
            jscalls::tree::write_json_str(&mut added, f);
        }
        bytes.splice(strings.end..strings.end, added.into_bytes());
        let column = |v: Option<i64>| v.map_or_else(|| "null".to_owned(), |v| v.to_string());
        for (key, values) in [
            (&b"\"columnNumber\":["[..], self.funcs.iter().map(|f| column(f.2)).collect::<Vec<_>>()),
            (b"\"lineNumber\":[", self.funcs.iter().map(|f| column(f.1)).collect()),
            (b"\"fileName\":[", self.funcs.iter().map(|f| column(f.0.map(|k| i64::from(k) + n as i64))).collect()),
        ] {
            let at = find_array(bytes, key).ok_or_else(|| bad("func table"))?;
            let written = bytes[at.clone()].split(|&b| b == b',').filter(|p| !p.is_empty()).count();
            if written != values.len() {
                return Err(bad("func table"));
            }
            bytes.splice(at, values.join(",").into_bytes());
        }
        Ok(())
    }
}

/// The bytes inside the array after `key` (which is written once), up to its `]`.
fn find_array(bytes: &[u8], key: &[u8]) -> Option<std::ops::Range<usize>> {
    let open = memchr::memmem::find(bytes, key)? + key.len();
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes[open..].iter().enumerate() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (false, _, b'"') => in_string = true,
            (false, _, b']') => return Some(open..open + i),
            _ => {}
        }
    }
    None
}

/// The number of strings in the inside of a JSON array of strings.
fn json_strings(inside: &[u8]) -> Option<usize> {
    let (mut n, mut in_string, mut escaped) = (0, false, false);
    for &b in inside {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (false, _, b'"') => {
                in_string = true;
                n += 1;
            }
            _ => {}
        }
    }
    (!in_string).then_some(n)
}

/// A function's category (JavaScript, GC, idle, native) and frame flags in the profile.
fn frame_kind(f: &jscalls::tree::Func) -> (usize, fxprof_processed_profile::FrameFlags) {
    use fxprof_processed_profile::FrameFlags;
    if f.is_js() {
        (JS, FrameFlags::IS_JS)
    } else if f.name == "(garbage collector)" {
        (GC, FrameFlags::empty())
    } else if matches!(f.name.as_str(), "(idle)" | "(program)" | "(root)") {
        (IDLE, FrameFlags::empty())
    } else {
        (NATIVE, FrameFlags::IS_RELEVANT_FOR_JS)
    }
}

/// The categories, in the order the profile adds them.
const JS: usize = 0;
const NATIVE: usize = 1;
const GC: usize = 2;
const IDLE: usize = 3;

/// Writes a Firefox profile (see [`Rewrite`]).
fn write_profile(profile: &fxprof_processed_profile::Profile, tracing_ms: bool, w: &mut dyn Write) -> io::Result<()> {
    // Buffered: the serializer writes token by token.
    let mut w = io::BufWriter::with_capacity(1 << 16, Rewrite::new(w, tracing_ms));
    serde_json::to_writer(&mut w, profile)?;
    w.write_all(b"\n")?;
    w.into_inner().map_err(io::IntoInnerError::into_error)?.finish()
}

/// Writes one profile of `parts`' threads: each part serialized on its own, by up to `threads`
/// threads, and each part's thread written, between the first part's head and tail, once those
/// before it are.
pub(super) fn write_threads(
    parts: &[ThreadPart],
    js: bool,
    tracing_ms: bool,
    threads: usize,
    w: &mut dyn Write,
) -> io::Result<()> {
    let serialize = |part: &ThreadPart| -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        write_profile(&part.profile, tracing_ms, &mut bytes)?;
        if let Some(places) = &part.places {
            places.write_into(&mut bytes)?;
        }
        set_id(&mut bytes, "pid", part.pid.0, &part.pid.1)?;
        set_id(&mut bytes, "tid", part.tid.0, &part.tid.1)?;
        Ok(bytes)
    };
    let mut tail: Option<Vec<u8>> = None;
    jscalls::threads::ordered(
        parts.len(),
        threads,
        threads,
        |k| &parts[k],
        serialize,
        |bytes| {
            let bytes = bytes?;
            let (open, close) = thread_bounds(&bytes)?;
            if tail.is_none() {
                w.write_all(&set_uses_js(&bytes[..open], js))?;
                tail = Some(bytes[close..].to_vec());
            } else {
                w.write_all(b",")?;
            }
            w.write_all(&bytes[open..close])
        },
    )?;
    w.write_all(&tail.unwrap_or_default())
}

/// Where the thread of a profile of one thread begins and ends in its bytes.
fn thread_bounds(b: &[u8]) -> io::Result<(usize, usize)> {
    const OPEN: &[u8] = br#""threads":["#;
    const CLOSE: &[u8] = br#"],"pages":"#;
    let bad = || io::Error::other("the Firefox profile's writer put its threads where they were not expected");
    // A quote inside a JSON string is escaped: these are found as keys only.
    let open = memchr::memmem::find(b, OPEN).ok_or_else(bad)? + OPEN.len();
    let close = memchr::memmem::rfind(b, CLOSE).filter(|&c| c >= open).ok_or_else(bad)?;
    Ok((open, close))
}

/// A profile's head (everything before its threads, the same for every thread's profile but
/// for this) with `meta.usesOnlyOneStackType` as for a profile that has JavaScript or not.
fn set_uses_js(head: &[u8], js: bool) -> Vec<u8> {
    let key = |v: bool| format!("\"usesOnlyOneStackType\":{v}").into_bytes();
    let (from, to) = (key(js), key(!js));
    let mut out = head.to_vec();
    if let Some(at) = memchr::memmem::find(head, &from) {
        out.splice(at..at + from.len(), to);
    }
    out
}

/// The ids the Firefox profile's writer gives these (u32 there), in the order they are added:
/// the number, and `.n` after it for its n-th repeat.
fn unique_ids(ids: impl Iterator<Item = u32>) -> Vec<String> {
    let mut seen: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
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

/// Writes `id` as the thread's `key` (`pid` or `tid`) in the bytes of a profile of one thread,
/// where its writer wrote `plain`.
fn set_id(bytes: &mut Vec<u8>, key: &str, plain: u32, id: &str) -> io::Result<()> {
    if id == plain.to_string() {
        return Ok(());
    }
    let written = format!("\"{key}\":\"{plain}\"");
    // The thread's own key: no other object in a thread has it (and a quote in a string is
    // escaped).
    let at = memchr::memmem::find(bytes, written.as_bytes())
        .ok_or_else(|| io::Error::other(format!("the Firefox profile's writer wrote no {key} {plain}")))?;
    bytes.splice(at..at + written.len(), format!("\"{key}\":\"{id}\"").into_bytes());
    Ok(())
}

/// The Firefox Profiler's processed profile: a process per pid, a thread per chosen thread, and
/// the spans as samples. Each span is a sample at its start (a gap, a sample on no stack), so
/// the Stack Chart draws every call at its estimated length, however short. A sample weighs
/// its span's time ("tracing-ms", to the µs, rounded as a running sum so that a thread's
/// weights add up to its total): the call tree's running times are the estimated ones. With
/// `--weight samples`, one sample per CPU-profile sample, counted.
///
/// Several threads are built and written in parallel, a profile each: a thread's part of the
/// file depends on nothing else (its string, frame and stack tables are its own; its process's
/// name and start and its ids are given), so the parts go into the one profile's `threads` in
/// the order that profile's writer sorts them in (the bytes are the same).
pub(super) const FORMAT: Format = Format {
    name: "firefox",
    what: "a Firefox Profiler profile",
    help: "The Firefox Profiler's processed profile (gzipped when OUT ends in .gz): a thread per thread, \
           the calls as samples at their estimated times, weighing their µs",
    suffix: ".profile.json.gz",
    endings: &[".json"],
    spans: true,
    counts: false,
    render: |kept, args, input, threads| Ok(firefox(kept, args.select.weight, input, threads)),
};

fn firefox(kept: &[Chosen], weight: WeightArg, input: &str, threads: usize) -> Rendered {
    let counts = weight == WeightArg::Samples;
    let interval_ns = if counts {
        // The mean sampling interval, as the call tree multiplies counts by it.
        let (n, t) = kept
            .iter()
            .flat_map(|c| &c.spans)
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
    // gzip, none below zero (the format's timestamps are unsigned).
    let first = kept
        .iter()
        .flat_map(|c| c.spans.iter().map(|s| s.start).chain(c.events.iter().map(|e| e.1)))
        .fold(f64::INFINITY, f64::min);
    let zero = if first.is_finite() { (first / 1000.0).floor() * 1000.0 } else { 0.0 };
    let base = Base { product: format!("jscalls: {input}"), interval_ns, zero, counts };
    // Processes and threads added in pid, tid order, so the file does not depend on which is
    // busiest.
    let mut order: Vec<&Chosen> = kept.iter().collect();
    order.sort_by_key(|c| (c.pid, c.tid));
    let processes = Process::all(&order, &base);
    let process_of = |c: &Chosen| &processes[processes.partition_point(|p| p.pid < c.pid)];
    let tids = unique_ids(order.iter().map(|c| c.tid as u32));
    let mut order: Vec<(&Chosen, String)> = order.into_iter().zip(tids).collect();
    // The writer's order: processes by (start, pid), a process's threads main first, then by
    // (start, name, tid); ids compared as the strings it writes.
    order.sort_by(|(a, ta), (b, tb)| {
        let (pa, pb) = (process_of(a), process_of(b));
        (pa.start, &pa.id)
            .cmp(&(pb.start, &pb.id))
            .then_with(|| (!is_main(a), base.thread_start(a)).cmp(&(!is_main(b), base.thread_start(b))))
            .then_with(|| thread_name(a).cmp(thread_name(b)))
            .then_with(|| ta.cmp(tb))
    });
    let parts = jscalls::threads::map(order, threads, |(c, tid)| {
        let process = process_of(c);
        ThreadPart {
            profile: Box::new(base.profile(&[(c, process)])),
            pid: (c.pid as u32, process.id.clone()),
            tid: (c.tid as u32, tid),
            places: Some(Places::of(c)),
        }
    });
    // What the writer calls a profile with JavaScript: a JS frame in one of its threads (every
    // function of a thread gets its frame).
    let js = kept.iter().any(|c| c.stacks.funcs.iter().any(|f| f.is_js()));
    Rendered::FirefoxThreads { parts, js, tracing_ms: !counts, threads }
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
    start: fxprof_processed_profile::Timestamp,
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

/// What every thread's profile shares.
struct Base {
    product: String,
    interval_ns: u64,
    /// The profile's time 0 (µs of the trace).
    zero: f64,
    /// Samples counted (`--weight samples`) rather than weighing their µs.
    counts: bool,
}

impl Base {
    fn at(&self, us: f64) -> fxprof_processed_profile::Timestamp {
        let ns = ((us - self.zero) * 1000.0).round().max(0.0) as u64;
        fxprof_processed_profile::Timestamp::from_nanos_since_reference(ns)
    }

    /// When a thread starts: its first span's start.
    fn thread_start(&self, c: &Chosen) -> fxprof_processed_profile::Timestamp {
        self.at(c.spans.first().map_or(0.0, |s| s.start))
    }

    /// A profile of `threads` (in pid, tid order), each with its process.
    fn profile(&self, threads: &[(&Chosen, &Process)]) -> fxprof_processed_profile::Profile {
        use fxprof_processed_profile::{
            CategoryColor, CpuDelta, FrameInfo, Profile, ReferenceTimestamp, SamplingInterval,
        };
        let at = |us: f64| self.at(us);
        let mut profile = Profile::new(
            &self.product,
            ReferenceTimestamp::from_millis_since_unix_epoch(self.zero / 1000.0),
            SamplingInterval::from_nanos(self.interval_ns),
        );
        // In the order of [`JS`], [`NATIVE`], [`GC`], [`IDLE`].
        let categories = [
            profile.add_category("JavaScript", CategoryColor::Yellow),
            profile.add_category("Native", CategoryColor::Blue),
            profile.add_category("GC / CC", CategoryColor::Orange),
            profile.add_category("Idle", CategoryColor::Transparent),
        ];
        let marker_type = profile.register_marker_type(fxprof_processed_profile::RuntimeSchemaMarkerSchema {
            type_name: MARKER_TYPE.to_owned(),
            description: Some("An event of the trace, at its recorded time".to_owned()),
            locations: fxprof_processed_profile::MarkerLocations::MARKER_CHART
                | fxprof_processed_profile::MarkerLocations::MARKER_TABLE,
            chart_label: Some("{marker.name}".to_owned()),
            tooltip_label: Some("{marker.name}".to_owned()),
            table_label: Some("{marker.name}".to_owned()),
            fields: Vec::new(),
            graphs: Vec::new(),
        });
        let trace_category = profile.add_category("Trace event", CategoryColor::Gray);
        let mut added: Vec<(i64, fxprof_processed_profile::ProcessHandle)> = Vec::new();
        for &(c, process) in threads {
            let handle = match added.iter().find(|p| p.0 == c.pid) {
                Some(p) => p.1,
                None => {
                    let h = profile.add_process(&process.name, c.pid as u32, process.start);
                    added.push((c.pid, h));
                    h
                }
            };
            let thread = profile.add_thread(handle, c.tid as u32, self.thread_start(c), is_main(c));
            profile.set_thread_name(thread, thread_name(c));
            let frames: Vec<_> = c
                .stacks
                .funcs
                .iter()
                .map(|f| {
                    let (category, flags) = frame_kind(f);
                    let category = categories[category];
                    let label = profile.intern_string(&f.label());
                    profile.intern_frame(
                        thread,
                        FrameInfo {
                            frame: fxprof_processed_profile::Frame::Label(label),
                            category_pair: category.into(),
                            flags,
                        },
                    )
                })
                .collect();
            // Each stack's handle, made from its parent's (parents come first).
            let mut handles = Vec::with_capacity(c.stacks.len());
            for s in (0..c.stacks.len()).map(StackId::new) {
                let (parent, f) = c.stacks.frame(s);
                let h = profile.intern_stack(thread, parent.map(|p| handles[p.index()]), frames[f.index()]);
                handles.push(h);
            }
            for (name, ts, dur) in &c.events {
                let (ts, dur) = (*ts, *dur);
                let timing = if dur > 0.0 {
                    fxprof_processed_profile::MarkerTiming::Interval(at(ts), at(ts + dur))
                } else {
                    fxprof_processed_profile::MarkerTiming::Instant(at(ts))
                };
                let name = profile.intern_string(name);
                profile.add_marker(thread, timing, TraceMarker { marker_type, name, category: trace_category });
            }
            let mut sum = 0.0;
            let mut last_end = f64::NEG_INFINITY;
            for s in &c.spans {
                if s.start > last_end && last_end.is_finite() {
                    profile.add_sample(thread, at(last_end), None, CpuDelta::ZERO, 0);
                }
                let w = if self.counts {
                    s.weight as i32
                } else {
                    let before = sum;
                    sum += s.weight;
                    (sum.round() - before.round()) as i32
                };
                let stack = (s.stack != StackId::ROOT).then(|| handles[s.stack.index()]);
                let cpu = CpuDelta::from_micros(((s.end - s.start).max(0.0)).round() as u64);
                profile.add_sample(thread, at(s.start), stack, cpu, w);
                last_end = s.end;
            }
            if last_end.is_finite() {
                profile.add_sample(thread, at(last_end), None, CpuDelta::ZERO, 0);
            }
        }
        profile
    }
}

/// The type the writer needs for a marker; its markers go out without it (see [`Rewrite`]).
const MARKER_TYPE: &str = "TraceEvent";

/// The profile's JSON as the writer writes it, changed on its way out in two ways:
/// - each marker's data becomes `null`, the format's marker without a payload: a trace event's
///   marker has nothing but its name and times, and the writer's `{"type":"TraceEvent"}` for
///   each was a third of the file (the schema stays, unused);
/// - with `tracing_ms`, the whole-µs sample weights become the format's "tracing-ms"
///   (milliseconds), which makes the Call Tree show running times instead of sample counts:
///   the writer puts each thread's `"weightType":"samples"` just before its `stack`,
///   `timeDeltas` and `weight` arrays of numbers.
///
/// Neither the marker's object nor the weight type's key and value can occur inside a string
/// (their quotes would be escaped), so nothing else changes. Done on the bytes as they come:
/// a `serde_json::Value` of the whole profile took more time and memory than everything else.
struct Rewrite<W: Write> {
    out: W,
    /// Written and not yet passed on: at most what could be the start of a pattern, or of a
    /// number, after each `process`.
    held: Vec<u8>,
    /// What one `process` passes on (kept for the next).
    done: Vec<u8>,
    state: State,
    /// A marker's data, and (with `tracing_ms`) the weight type to change.
    data: memchr::memmem::Finder<'static>,
    weight_type: Option<memchr::memmem::Finder<'static>>,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Scan,
    /// After a thread's weight type, before its weights.
    BeforeWeights,
    InWeights,
}

const WEIGHT_TYPE: &[u8] = br#""weightType":"samples""#;
const WEIGHT: &[u8] = br#""weight":["#;

impl<W: Write> Rewrite<W> {
    fn new(out: W, tracing_ms: bool) -> Self {
        let data = format!("{{\"type\":\"{MARKER_TYPE}\"}}").into_bytes();
        Rewrite {
            out,
            held: Vec::new(),
            done: Vec::new(),
            state: State::Scan,
            data: memchr::memmem::Finder::new(&data).into_owned(),
            weight_type: tracing_ms.then(|| memchr::memmem::Finder::new(WEIGHT_TYPE)),
        }
    }

    fn finish(mut self) -> io::Result<()> {
        self.process(true)?;
        self.out.flush()
    }

    /// Passes on what is held, rewritten, but for what the next bytes could change (all of it
    /// at the `end`).
    fn process(&mut self, end: bool) -> io::Result<()> {
        let h = &self.held[..];
        let out = &mut self.done;
        let data = self.data.needle();
        let mut i = 0;
        loop {
            let rest = &h[i..];
            match self.state {
                State::Scan => {
                    let d = self.data.find(rest);
                    let t = self.weight_type.as_ref().and_then(|f| f.find(rest));
                    match (d, t) {
                        (Some(d), t) if t.is_none_or(|t| d < t) => {
                            out.extend_from_slice(&rest[..d]);
                            i += d;
                            // A thread's markers' data: a run of them, one after the other.
                            loop {
                                out.extend_from_slice(b"null");
                                i += data.len();
                                if h[i..].first() == Some(&b',') && h[i + 1..].starts_with(data) {
                                    out.push(b',');
                                    i += 1;
                                } else {
                                    break;
                                }
                            }
                        }
                        (_, Some(t)) => {
                            out.extend_from_slice(&rest[..t]);
                            out.extend_from_slice(br#""weightType":"tracing-ms""#);
                            i += t + WEIGHT_TYPE.len();
                            self.state = State::BeforeWeights;
                        }
                        _ => {
                            let keep = if end { 0 } else { (data.len().max(WEIGHT_TYPE.len()) - 1).min(rest.len()) };
                            out.extend_from_slice(&rest[..rest.len() - keep]);
                            i += rest.len() - keep;
                            break;
                        }
                    }
                }
                State::BeforeWeights => match memchr::memmem::find(rest, WEIGHT) {
                    Some(w) => {
                        out.extend_from_slice(&rest[..w + WEIGHT.len()]);
                        i += w + WEIGHT.len();
                        self.state = State::InWeights;
                    }
                    None => {
                        let keep = if end { 0 } else { (WEIGHT.len() - 1).min(rest.len()) };
                        out.extend_from_slice(&rest[..rest.len() - keep]);
                        i += rest.len() - keep;
                        break;
                    }
                },
                State::InWeights => match memchr::memchr(b']', rest) {
                    Some(e) => {
                        micros_list_as_millis(out, &rest[..e]);
                        out.push(b']');
                        i += e + 1;
                        self.state = State::Scan;
                    }
                    // Cut off by the writer: as it is.
                    None if end => {
                        out.extend_from_slice(rest);
                        i = h.len();
                        break;
                    }
                    // The numbers up to the last comma; the one after it may go on.
                    None => {
                        if let Some(c) = memchr::memrchr(b',', rest) {
                            micros_list_as_millis(out, &rest[..c]);
                            out.push(b',');
                            i += c + 1;
                        }
                        break;
                    }
                },
            }
        }
        self.held.drain(..i);
        self.out.write_all(&self.done)?;
        self.done.clear();
        Ok(())
    }
}

impl<W: Write> Write for Rewrite<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.held.extend_from_slice(buf);
        if self.held.len() >= 1 << 16 {
            self.process(false)?;
        }
        Ok(buf.len())
    }

    /// Passes on only what cannot change: the rest waits for `finish`.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Comma-separated whole µs as ms (`micros_as_millis`), commas kept.
fn micros_list_as_millis(out: &mut Vec<u8>, list: &[u8]) {
    if list.is_empty() {
        return;
    }
    for (i, n) in list.split(|&c| c == b',').enumerate() {
        if i > 0 {
            out.push(b',');
        }
        micros_as_millis(out, n);
    }
}

/// A whole number of µs (as the writer prints it) as ms, printed as JavaScript prints the
/// number: the decimal point moved three places, trailing zeros dropped (`1500` → `1.5`,
/// `-7` → `-0.007`), which is the shortest form that reads back as the same double.
fn micros_as_millis(out: &mut Vec<u8>, n: &[u8]) {
    let (neg, digits) = match n.split_first() {
        Some((b'-', d)) => (true, d),
        _ => (false, n),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        out.push(b'0'); // not written by the writer: weights are integers
        return;
    }
    let digits = &digits[digits.iter().take_while(|&&d| d == b'0').count().min(digits.len() - 1)..];
    if digits == b"0" {
        out.push(b'0');
        return;
    }
    if neg {
        out.push(b'-');
    }
    let (int, frac) = if digits.len() > 3 { digits.split_at(digits.len() - 3) } else { (&b""[..], digits) };
    if int.is_empty() {
        out.push(b'0');
    } else {
        out.extend_from_slice(int);
    }
    let mut f = [b'0'; 3];
    f[3 - frac.len()..].copy_from_slice(frac);
    let keep = 3 - f.iter().rev().take_while(|&&d| d == b'0').count();
    if keep > 0 {
        out.push(b'.');
        out.extend_from_slice(&f[..keep]);
    }
}

/// A trace event as a Firefox Profiler marker: its name, nothing more.
struct TraceMarker {
    marker_type: fxprof_processed_profile::MarkerTypeHandle,
    name: fxprof_processed_profile::StringHandle,
    category: fxprof_processed_profile::CategoryHandle,
}

impl fxprof_processed_profile::Marker for TraceMarker {
    fn marker_type(&self, _: &mut fxprof_processed_profile::Profile) -> fxprof_processed_profile::MarkerTypeHandle {
        self.marker_type
    }

    fn name(&self, _: &mut fxprof_processed_profile::Profile) -> fxprof_processed_profile::StringHandle {
        self.name
    }

    fn category(&self, _: &mut fxprof_processed_profile::Profile) -> fxprof_processed_profile::CategoryHandle {
        self.category
    }

    fn string_field_value(&self, _: u32) -> fxprof_processed_profile::StringHandle {
        unreachable!("the schema has no fields")
    }

    fn number_field_value(&self, _: u32) -> f64 {
        unreachable!("the schema has no fields")
    }
}

#[cfg(test)]
mod tests;
