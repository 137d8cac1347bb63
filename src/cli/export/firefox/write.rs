//! The Firefox Profiler's processed format, version [`VERSION`], written directly: every
//! thread's functions, frames and stacks merged into the profile's shared tables, then each
//! thread's samples and markers, serialized on several threads and written in order.
//!
//! Times are whole nanoseconds from the profile's start, written as ms with up to six decimals
//! (exact, and the shortest text that reads back as the same double to 1 ns).

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use jscalls::tree::{Span, SpanCursor, Spans, StackId};

use crate::cli::digits;

/// The `preprocessedProfileVersion` written: the Firefox Profiler's own (shared tables, a
/// stack's parent as an offset back, sources with their text).
pub(crate) const VERSION: u32 = 70;

/// The categories, in the profile's order (`frameTable.category` indexes them; 0 is "Other").
pub(crate) const JS: u8 = 1;
pub(crate) const NATIVE: u8 = 2;
pub(crate) const GC: u8 = 3;
pub(crate) const IDLE: u8 = 4;
pub(crate) const TRACE_EVENT: u8 = 5;
const CATEGORIES: [(&str, &str); 6] = [
    ("Other", "grey"),
    ("JavaScript", "yellow"),
    ("Native", "blue"),
    ("GC / CC", "orange"),
    ("Idle", "transparent"),
    ("Trace event", "grey"),
];

/// A function as the func table holds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FuncRow {
    pub(crate) name: String,
    pub(crate) is_js: bool,
    pub(crate) relevant_for_js: bool,
    /// Its source file.
    pub(crate) file: Option<String>,
    /// 1-based.
    pub(crate) line: Option<u32>,
    pub(crate) column: Option<u32>,
}

/// A frame: a function (an index into its thread's [`ThreadPart::funcs`]), its category and
/// the line (1-based) it was at, when the samples say.
pub(crate) type FrameRow = (u32, u8, Option<u32>);

/// One thread of the profile, with indices into its own tables.
#[derive(Debug, Default)]
pub(crate) struct ThreadPart {
    pub(crate) name: String,
    pub(crate) process_name: String,
    pub(crate) pid: String,
    pub(crate) tid: String,
    pub(crate) is_main: bool,
    /// ns from the profile's start.
    pub(crate) process_start: u64,
    pub(crate) register: u64,
    pub(crate) funcs: Vec<FuncRow>,
    pub(crate) frames: Vec<FrameRow>,
    /// (parent's offset back, 0 for a root; frame), parents first.
    pub(crate) stacks: Vec<(u32, u32)>,
    pub(crate) samples: SpanSamples,
    pub(crate) markers: Vec<Marker>,
    pub(crate) marker_names: Vec<String>,
}

/// A trace event as a marker: its name (into [`ThreadPart::marker_names`]), its start and, for
/// an interval, its end (ns from the profile's start; [`Marker::INSTANT`] for none).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Marker {
    pub(crate) name: u32,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

impl Marker {
    pub(crate) const INSTANT: u64 = u64::MAX;

    fn end(&self) -> Option<u64> {
        (self.end != Marker::INSTANT).then_some(self.end)
    }
}

/// ns from the profile's start (`zero`, µs) at `us` µs.
pub(crate) fn ns_from(zero: f64, us: f64) -> u64 {
    round((us - zero) * 1000.0).max(0.0) as u64
}

/// `x.round()`, but for the sign of a zero (each use here is made an integer), without the
/// call to libm that `round` is on the baseline x86-64: the samples are made four times.
fn round(x: f64) -> f64 {
    if x.abs() < 4.0e15 {
        // Exact: `x` less its whole part, which an i64 holds.
        let t = (x as i64) as f64;
        let d = x - t;
        if d >= 0.5 {
            t + 1.0
        } else if d <= -0.5 {
            t - 1.0
        } else {
            t
        }
    } else {
        x.round()
    }
}

/// A thread's samples: a sample at each span's start, and one on no stack where a gap starts
/// and after the last. Made from the spans each time they are read: a table of them took 32
/// bytes a span.
#[derive(Debug, Default)]
pub(crate) struct SpanSamples {
    pub(crate) spans: Spans,
    /// Each stack of the thread's tree: its index in the thread's stack table.
    pub(crate) stack_of: Vec<u32>,
    /// The profile's time 0, µs.
    pub(crate) zero: f64,
    /// Weights are the spans' counts (`--weight samples`), else their µs, rounded as a running
    /// sum so that a thread's weights add up to its total.
    pub(crate) counts: bool,
}

/// A sample: (time in ns from the profile's start, stack, weight, CPU time in µs).
type Sample = (u64, Option<u32>, i64, u64);

/// Where a piece of a thread's samples starts: its first span, the running sum of the weights
/// before it, and the time of the sample before it (ns; 0 for none).
#[derive(Debug, Clone, Copy, Default)]
struct PieceStart {
    at: SpanCursor,
    sum: f64,
    last: u64,
}

/// The CPU time of `s`'s sample (µs).
fn cpu(s: &Span) -> u64 {
    round((s.end - s.start).max(0.0)) as u64
}

/// Whether a sample on no stack follows `s`: a gap before the next span, or the end.
fn gap_after(s: &Span, next: Option<&Span>) -> bool {
    s.end.is_finite() && next.is_none_or(|n| n.start > s.end)
}

impl SpanSamples {
    /// The samples, in time order.
    pub(crate) fn iter(&self) -> SampleIter<'_, impl Iterator<Item = Span> + '_> {
        self.iter_from(PieceStart::default(), usize::MAX)
    }

    /// The samples of `n` spans from `from` on.
    fn iter_from(&self, from: PieceStart, n: usize) -> SampleIter<'_, impl Iterator<Item = Span> + '_> {
        SampleIter { of: self, spans: self.spans.iter_from(from.at).peekable(), sum: from.sum, n, gap: None }
    }

    /// The stack of `s`'s sample.
    fn stack(&self, s: &Span) -> Option<u32> {
        (s.stack != StackId::ROOT).then(|| self.stack_of[s.stack.index()])
    }

    /// The weight of `s`'s sample, after `sum` of the weights before it (which it adds to).
    fn weight(&self, s: &Span, sum: &mut f64) -> i64 {
        if self.counts {
            s.weight as i64
        } else {
            let before = *sum;
            *sum += s.weight;
            (round(*sum) - round(before)) as i64
        }
    }

    /// Where each piece of `piece` spans starts, and how many samples there are.
    fn pieces(&self, piece: usize) -> (Vec<PieceStart>, usize) {
        let mut starts: Vec<PieceStart> =
            self.spans.cursors(piece).into_iter().map(|at| PieceStart { at, ..PieceStart::default() }).collect();
        let (mut sum, mut last, mut n) = (0.0, 0, 0);
        let mut spans = self.spans.iter().enumerate().peekable();
        while let Some((k, s)) = spans.next() {
            if k % piece == 0 {
                let p = &mut starts[k / piece];
                (p.sum, p.last) = (sum, last);
            }
            if !self.counts {
                sum += s.weight;
            }
            last = ns_from(self.zero, s.start);
            n += 1;
            if gap_after(&s, spans.peek().map(|p| &p.1)) {
                last = ns_from(self.zero, s.end);
                n += 1;
            }
        }
        (starts, n)
    }
}

/// The samples of a run of spans: each span's, then the one on no stack after it where a gap
/// follows (held for the next call: a flattened pair of iterators cost more a sample).
pub(crate) struct SampleIter<'a, I: Iterator<Item = Span>> {
    of: &'a SpanSamples,
    spans: std::iter::Peekable<I>,
    /// The running sum of the weights.
    sum: f64,
    /// Spans left to read.
    n: usize,
    /// The sample on no stack that comes next.
    gap: Option<Sample>,
}

impl<I: Iterator<Item = Span>> Iterator for SampleIter<'_, I> {
    type Item = Sample;

    fn next(&mut self) -> Option<Sample> {
        if let Some(g) = self.gap.take() {
            return Some(g);
        }
        self.n = self.n.checked_sub(1)?;
        let s = self.spans.next()?;
        let of = self.of;
        if gap_after(&s, self.spans.peek()) {
            self.gap = Some((ns_from(of.zero, s.end), None, 0, 0));
        }
        Some((ns_from(of.zero, s.start), of.stack(&s), of.weight(&s, &mut self.sum), cpu(&s)))
    }
}

/// What the profile says of itself.
pub(crate) struct Head {
    pub(crate) product: String,
    pub(crate) interval_ns: u64,
    /// The profile's start, ms since the epoch.
    pub(crate) start_ms: f64,
    /// Sample weights are µs, written as ms ("tracing-ms"); else counts.
    pub(crate) tracing_ms: bool,
    /// Some thread has JavaScript.
    pub(crate) js: bool,
    /// Source files' text, by file name, for the source view.
    pub(crate) sources: HashMap<String, String>,
}

/// The strings and rows every thread's tables merge into.
#[derive(Default)]
struct Shared {
    strings: Vec<String>,
    string_index: HashMap<String, u32>,
    /// (name's string, source, the row).
    funcs: Vec<(u32, Option<u32>, FuncRow)>,
    func_index: HashMap<FuncRow, u32>,
    /// (file name's string, its text).
    sources: Vec<(u32, Option<String>)>,
    source_index: HashMap<String, u32>,
    frames: Vec<(u32, u8, Option<u32>)>,
    frame_index: HashMap<(u32, u8, Option<u32>), u32>,
}

impl Shared {
    fn string(&mut self, s: &str) -> u32 {
        if let Some(&k) = self.string_index.get(s) {
            return k;
        }
        self.strings.push(s.to_owned());
        self.string_index.insert(s.to_owned(), self.strings.len() as u32 - 1);
        self.strings.len() as u32 - 1
    }

    fn func(&mut self, f: &FuncRow, texts: &HashMap<String, String>) -> u32 {
        if let Some(&k) = self.func_index.get(f) {
            return k;
        }
        let name = self.string(&f.name);
        let source = f.file.as_deref().map(|file| match self.source_index.get(file) {
            Some(&k) => k,
            None => {
                let s = self.string(file);
                self.sources.push((s, texts.get(file).cloned()));
                self.source_index.insert(file.to_owned(), self.sources.len() as u32 - 1);
                self.sources.len() as u32 - 1
            }
        });
        self.funcs.push((name, source, f.clone()));
        self.func_index.insert(f.clone(), self.funcs.len() as u32 - 1);
        self.funcs.len() as u32 - 1
    }

    fn frame(&mut self, row: (u32, u8, Option<u32>)) -> u32 {
        let n = self.frames.len() as u32;
        *self.frame_index.entry(row).or_insert_with(|| {
            self.frames.push(row);
            n
        })
    }
}

/// Where a thread's indices go in the shared tables.
struct Placed {
    frames: Vec<u32>,
    names: Vec<u32>,
    first_stack: u32,
}

/// Writes the profile of `parts` (in the order the profile lists its threads), their samples
/// and markers serialized by up to `threads` threads.
pub(crate) fn write(head: &Head, parts: &[ThreadPart], threads: usize, w: &mut dyn Write) -> io::Result<()> {
    write_in_pieces(head, parts, threads, PIECE, w)
}

/// [`write`], a thread of more than `piece` spans or markers a piece of `piece` at a time.
pub(super) fn write_in_pieces(
    head: &Head,
    parts: &[ThreadPart],
    threads: usize,
    piece: usize,
    w: &mut dyn Write,
) -> io::Result<()> {
    let mut shared = Shared::default();
    let mut placed = Vec::with_capacity(parts.len());
    let mut n_stacks = 0u32;
    for p in parts {
        let funcs: Vec<u32> = p.funcs.iter().map(|f| shared.func(f, &head.sources)).collect();
        let frames = p.frames.iter().map(|&(f, c, l)| shared.frame((funcs[f as usize], c, l))).collect();
        let names = p.marker_names.iter().map(|n| shared.string(n)).collect();
        placed.push(Placed { frames, names, first_stack: n_stacks });
        n_stacks += p.stacks.len() as u32;
    }
    let mut out = String::with_capacity(1 << 16);
    meta(&mut out, head);
    out.push_str(",\"libs\":[],\"pages\":[],\"counters\":[],\"profilerOverhead\":[],\"shared\":{");
    stack_table(&mut out, parts, &placed, n_stacks);
    w.write_all(out.as_bytes())?;
    out.clear();
    tables(&mut out, &shared);
    out.push_str("},\"threads\":[");
    w.write_all(out.as_bytes())?;
    // Each thread in two halves, its samples and its markers, made side by side (most of a
    // recording is often one thread), a long thread's in pieces.
    let pieces: Vec<(usize, Piece)> =
        parts.iter().enumerate().flat_map(|(t, p)| Piece::all(p, piece).map(move |x| (t, x))).collect();
    // Where each long thread's pieces of samples start, found on every core.
    let starts = jscalls::threads::map(parts.iter().collect(), threads, |p: &ThreadPart| {
        (p.samples.spans.len() > piece).then(|| p.samples.pieces(piece))
    });
    jscalls::threads::ordered(
        pieces.len(),
        threads,
        2 * threads,
        |k| pieces[k],
        |(t, part)| {
            let (p, at) = (&parts[t], &placed[t]);
            let mut s = String::with_capacity(match part {
                Piece::Samples => 32 * p.samples.spans.len() + 256,
                Piece::Markers => 48 * p.markers.len() + 256,
                _ => 8 * piece + 256,
            });
            if t > 0 && matches!(part, Piece::Samples | Piece::SamplesHead) {
                s.push(',');
            }
            match part {
                Piece::Samples => thread_samples(&mut s, p, at, head.tracing_ms),
                Piece::SamplesHead => {
                    thread_head(&mut s, p);
                    s.push_str(",\"samples\":{\"stack\":[");
                }
                Piece::SampleColumn { col, k } => {
                    let (starts, _) = starts[t].as_ref().expect("a long thread's pieces");
                    sample_column(&mut s, p, at, head.tracing_ms, (col, k, piece), starts[k]);
                }
                Piece::SamplesEnd => {
                    s.push_str("],");
                    length(&mut s, starts[t].as_ref().expect("a long thread's pieces").1);
                }
                Piece::Markers => {
                    for col in 0..MARKER_COLUMNS.len() {
                        marker_column(&mut s, p, at, (col, 0, usize::MAX));
                    }
                    markers_end(&mut s, p);
                }
                Piece::MarkerColumn { col, k } => marker_column(&mut s, p, at, (col, k, piece)),
                Piece::MarkersEnd => markers_end(&mut s, p),
            }
            s
        },
        |s| w.write_all(s.as_bytes()),
    )?;
    w.write_all(b"]}\n")
}

/// Spans of a thread's samples, and markers, that one piece of text holds at most: a longer
/// thread is written a column at a time, a piece of it at a time (its spans read again for
/// each column), so that no column of it is held whole.
const PIECE: usize = 1 << 20;

/// A piece of a thread's text.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// Its object to the end of its samples, all their columns made in one pass.
    Samples,
    /// Its object to its samples' first column.
    SamplesHead,
    /// Column `col` (stack, timeDeltas, weight, threadCPUDelta) of the samples of the `k`-th
    /// pieces of spans.
    SampleColumn { col: u8, k: usize },
    /// The samples' end.
    SamplesEnd,
    /// Its markers, to the end of its object.
    Markers,
    /// Column `col` of [`MARKER_COLUMNS`] for the `k`-th piece of markers.
    MarkerColumn { col: usize, k: usize },
    /// The markers' end, and the object's.
    MarkersEnd,
}

impl Piece {
    /// The pieces of `p`, in order.
    fn all(p: &ThreadPart, piece: usize) -> impl Iterator<Item = Piece> {
        let columns = |n: usize, cols: usize, each: fn(usize, usize) -> Piece| {
            (0..cols).flat_map(move |col| (0..n.div_ceil(piece)).map(move |k| each(col, k)))
        };
        let (spans, markers) = (p.samples.spans.len(), p.markers.len());
        let samples: Vec<Piece> = if spans <= piece {
            vec![Piece::Samples]
        } else {
            std::iter::once(Piece::SamplesHead)
                .chain(columns(spans, 4, |col, k| Piece::SampleColumn { col: col as u8, k }))
                .chain([Piece::SamplesEnd])
                .collect()
        };
        let markers: Vec<Piece> = if markers <= piece {
            vec![Piece::Markers]
        } else {
            columns(markers, MARKER_COLUMNS.len(), |col, k| Piece::MarkerColumn { col, k })
                .chain([Piece::MarkersEnd])
                .collect()
        };
        samples.into_iter().chain(markers)
    }
}

fn meta(out: &mut String, head: &Head) {
    out.push_str("{\"meta\":{\"interval\":");
    push_ms(out, head.interval_ns as i64);
    out.push_str(",\"startTime\":");
    jscalls::tree::write_json_number(out, head.start_ms);
    out.push_str(",\"processType\":0,\"product\":");
    jscalls::tree::write_json_str(out, &head.product);
    out.push_str(",\"stackwalk\":0,\"debug\":false,\"version\":24,\"preprocessedProfileVersion\":");
    push_int(out, VERSION);
    out.push_str(",\"symbolicated\":true,\"categories\":[");
    for (k, (name, color)) in CATEGORIES.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        jscalls::tree::write_json_str(out, name);
        out.push_str(",\"color\":\"");
        out.push_str(color);
        out.push_str("\",\"subcategories\":[\"Other\"]}");
    }
    out.push_str(
        "],\"markerSchema\":[],\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"µs\"}",
    );
    out.push_str(",\"usesOnlyOneStackType\":");
    out.push_str(if head.js { "false" } else { "true" });
    out.push_str(",\"sourceCodeIsNotOnSearchfox\":true}");
}

/// Every thread's stacks, one after the other: a parent's offset back stays what it was.
fn stack_table(out: &mut String, parts: &[ThreadPart], placed: &[Placed], n: u32) {
    out.push_str("\"stackTable\":{\"frame\":[");
    let mut first = true;
    for (p, at) in parts.iter().zip(placed) {
        for &(_, frame) in &p.stacks {
            comma(out, &mut first);
            push_int(out, at.frames[frame as usize]);
        }
    }
    out.push_str("],\"prefixOffset\":[");
    let mut first = true;
    for p in parts {
        for &(back, _) in &p.stacks {
            comma(out, &mut first);
            push_int(out, back);
        }
    }
    out.push_str("],\"length\":");
    push_int(out, n);
    out.push('}');
}

/// The shared tables but the stacks.
fn tables(out: &mut String, s: &Shared) {
    let n = s.frames.len();
    out.push_str(",\"frameTable\":{");
    column(out, "address", n, |o, _| o.push_str("-1"));
    column(out, "lib", n, |o, _| o.push_str("-1"));
    column(out, "inlineDepth", n, |o, _| o.push('0'));
    column(out, "category", n, |o, k| push_int(o, u32::from(s.frames[k].1)));
    column(out, "subcategory", n, |o, _| o.push('0'));
    column(out, "func", n, |o, k| push_int(o, s.frames[k].0));
    column(out, "nativeSymbol", n, |o, _| o.push_str("null"));
    column(out, "innerWindowID", n, |o, _| o.push('0'));
    column(out, "line", n, |o, k| push_opt(o, s.frames[k].2));
    column(out, "column", n, |o, _| o.push_str("null"));
    column(out, "originalLocation", n, |o, _| o.push_str("null"));
    length(out, n);
    let n = s.funcs.len();
    out.push_str(",\"funcTable\":{");
    column(out, "name", n, |o, k| push_int(o, s.funcs[k].0));
    column(out, "isJS", n, |o, k| o.push_str(if s.funcs[k].2.is_js { "true" } else { "false" }));
    column(out, "relevantForJS", n, |o, k| o.push_str(if s.funcs[k].2.relevant_for_js { "true" } else { "false" }));
    column(out, "resource", n, |o, _| o.push_str("-1"));
    column(out, "source", n, |o, k| push_opt(o, s.funcs[k].1));
    column(out, "lineNumber", n, |o, k| push_opt(o, s.funcs[k].2.line));
    column(out, "columnNumber", n, |o, k| push_opt(o, s.funcs[k].2.column));
    column(out, "originalLocation", n, |o, _| o.push_str("null"));
    length(out, n);
    out.push_str(",\"resourceTable\":{\"name\":[],\"host\":[],\"type\":[],\"length\":0}");
    out.push_str(",\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],\"length\":0}");
    let n = s.sources.len();
    out.push_str(",\"sources\":{");
    column(out, "id", n, |o, _| o.push_str("null"));
    column(out, "filename", n, |o, k| push_int(o, s.sources[k].0));
    column(out, "startLine", n, |o, _| o.push('1'));
    column(out, "startColumn", n, |o, _| o.push('1'));
    column(out, "sourceMapURL", n, |o, _| o.push_str("null"));
    column(out, "content", n, |o, k| match &s.sources[k].1 {
        Some(text) => jscalls::tree::write_json_str(o, text),
        None => o.push_str("null"),
    });
    length(out, n);
    out.push_str(",\"sourceLocationTable\":{\"source\":[],\"line\":[],\"column\":[],\"length\":0}");
    out.push_str(",\"stringArray\":[");
    for (k, text) in s.strings.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        jscalls::tree::write_json_str(out, text);
    }
    out.push(']');
}

/// A thread's object up to its samples, which [`thread_markers`] goes on from.
fn thread_samples(out: &mut String, p: &ThreadPart, at: &Placed, tracing_ms: bool) {
    thread_head(out, p);
    // The samples' four columns made in one pass over the spans (three of them on the side).
    let mut cols = [String::new(), String::new(), String::new()];
    let mut n = 0;
    let mut last = 0;
    out.push_str(",\"samples\":{\"stack\":[");
    for x in p.samples.iter() {
        if n > 0 {
            out.push(',');
            cols.iter_mut().for_each(|c| c.push(','));
        }
        n += 1;
        push_opt(out, x.1.map(|x| x + at.first_stack));
        push_ms(&mut cols[0], x.0 as i64 - std::mem::replace(&mut last, x.0 as i64));
        if tracing_ms {
            push_ms(&mut cols[1], x.2 * 1000);
        } else {
            push_int(&mut cols[1], x.2);
        }
        push_int(&mut cols[2], x.3);
    }
    for (key, col) in ["timeDeltas", "weight"].iter().zip(&cols) {
        out.push_str("],\"");
        out.push_str(key);
        out.push_str("\":[");
        out.push_str(col);
    }
    out.push_str("],\"weightType\":");
    out.push_str(if tracing_ms { "\"tracing-ms\"," } else { "\"samples\"," });
    out.push_str("\"threadCPUDelta\":[");
    out.push_str(&cols[2]);
    out.push_str("],");
    drop(cols);
    length(out, n);
}

/// A thread's object up to its samples.
fn thread_head(out: &mut String, p: &ThreadPart) {
    out.push_str("{\"processType\":\"default\",\"processStartupTime\":");
    push_ms(out, p.process_start as i64);
    out.push_str(",\"processShutdownTime\":null,\"registerTime\":");
    push_ms(out, p.register as i64);
    out.push_str(",\"unregisterTime\":null,\"pausedRanges\":[],\"showMarkersInTimeline\":false,\"name\":");
    jscalls::tree::write_json_str(out, &p.name);
    out.push_str(",\"isMainThread\":");
    out.push_str(if p.is_main { "true" } else { "false" });
    out.push_str(",\"processName\":");
    jscalls::tree::write_json_str(out, &p.process_name);
    out.push_str(",\"pid\":");
    jscalls::tree::write_json_str(out, &p.pid);
    out.push_str(",\"tid\":");
    jscalls::tree::write_json_str(out, &p.tid);
}

/// The keys before the samples' columns, after the first (`tracing` says the weights' type).
fn column_key(col: u8, tracing_ms: bool) -> &'static str {
    match (col, tracing_ms) {
        (1, _) => "],\"timeDeltas\":[",
        (2, _) => "],\"weight\":[",
        (_, true) => "],\"weightType\":\"tracing-ms\",\"threadCPUDelta\":[",
        (_, false) => "],\"weightType\":\"samples\",\"threadCPUDelta\":[",
    }
}

/// Column `col` of the samples of the `k`-th `piece` spans, from `from`: as
/// [`thread_samples`] writes them.
fn sample_column(
    out: &mut String,
    p: &ThreadPart,
    at: &Placed,
    tracing_ms: bool,
    (col, k, piece): (u8, usize, usize),
    from: PieceStart,
) {
    if col > 0 && k == 0 {
        out.push_str(column_key(col, tracing_ms));
    }
    // Only this column's values are made: each piece's spans are read four times.
    let samples = &p.samples;
    let mut spans = samples.spans.iter_from(from.at).peekable();
    let (mut sum, mut last, mut first) = (from.sum, from.last as i64, k == 0);
    let mut sep = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
    };
    for _ in 0..piece {
        let Some(x) = spans.next() else { break };
        let gap = gap_after(&x, spans.peek());
        sep(out);
        match col {
            0 => push_opt(out, samples.stack(&x).map(|x| x + at.first_stack)),
            1 => {
                let t = ns_from(samples.zero, x.start) as i64;
                push_ms(out, t - std::mem::replace(&mut last, t));
                if gap {
                    let t = ns_from(samples.zero, x.end) as i64;
                    sep(out);
                    push_ms(out, t - std::mem::replace(&mut last, t));
                }
                continue;
            }
            2 if tracing_ms => push_ms(out, samples.weight(&x, &mut sum) * 1000),
            2 => push_int(out, samples.weight(&x, &mut sum)),
            _ => push_int(out, cpu(&x)),
        }
        if gap {
            sep(out);
            out.push_str(if col == 0 { "null" } else { "0" });
        }
    }
}

/// How a marker's value in a column is written.
type MarkerValue = fn(&mut String, &Marker, &Placed);

/// The markers' columns: each key, and how a marker's value is written.
const MARKER_COLUMNS: [(&str, MarkerValue); 6] = [
    ("data", |o, _, _| o.push_str("null")),
    ("name", |o, m, at| push_int(o, at.names[m.name as usize])),
    ("startTime", |o, m, _| push_ms(o, m.start as i64)),
    ("endTime", |o, m, _| match m.end() {
        Some(e) => push_ms(o, e as i64),
        None => o.push_str("null"),
    }),
    ("phase", |o, m, _| o.push(if m.end().is_some() { '1' } else { '0' })),
    ("category", |o, _, _| push_int(o, u32::from(TRACE_EVENT))),
];

/// Column `col` of [`MARKER_COLUMNS`] for the `k`-th `piece` markers of `p`: with the
/// column's key before the first (and the markers' object before the first column), `],`
/// after the last.
fn marker_column(out: &mut String, p: &ThreadPart, at: &Placed, (col, k, piece): (usize, usize, usize)) {
    let (key, value) = MARKER_COLUMNS[col];
    let m = &p.markers;
    if k == 0 {
        if col == 0 {
            out.push_str(",\"markers\":{");
        }
        out.push('"');
        out.push_str(key);
        out.push_str("\":[");
    }
    let end = m.len().min((k + 1) * piece);
    for (n, marker) in m[k * piece..end].iter().enumerate() {
        if n > 0 || k > 0 {
            out.push(',');
        }
        value(out, marker, at);
    }
    if end == m.len() {
        out.push_str("],");
    }
}

/// The markers' length, and the end of the thread's object.
fn markers_end(out: &mut String, p: &ThreadPart) {
    length(out, p.markers.len());
    out.push('}');
}

/// `"key":[v0,…],` with each value written by `value`.
fn column(out: &mut String, key: &str, n: usize, mut value: impl FnMut(&mut String, usize)) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":[");
    for k in 0..n {
        if k > 0 {
            out.push(',');
        }
        value(out, k);
    }
    out.push_str("],");
}

fn length(out: &mut String, n: usize) {
    out.push_str("\"length\":");
    push_int(out, n);
    out.push('}');
}

fn comma(out: &mut String, first: &mut bool) {
    if !std::mem::take(first) {
        out.push(',');
    }
}

fn push_int(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

fn push_opt(out: &mut String, n: Option<u32>) {
    match n {
        Some(n) => push_int(out, n),
        None => out.push_str("null"),
    }
}

/// `ns` nanoseconds as ms, exactly: the decimal point moved six places, trailing zeros
/// dropped (`1500000` → `1.5`, `-7` → `-0.000007`).
pub(crate) fn push_ms(out: &mut String, ns: i64) {
    // As few decimals as the value needs: the zeros it ends in dropped first.
    let (mut n, mut decimals) = (ns.unsigned_abs(), 6);
    while decimals > 0 && n % 10 == 0 {
        n /= 10;
        decimals -= 1;
    }
    let mut text = digits::Buf::default();
    let at = digits::fixed_point(&mut text, n, decimals, ns < 0);
    digits::push(out, &text[at..]);
}

#[cfg(test)]
mod tests {
    /// The same whole number as `f64::round` for every value: halves (away from zero), values
    /// a hair either side of them, negatives, the largest that take the fast way and beyond.
    #[test]
    fn round_is_f64_round() {
        let mut xs = vec![0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994];
        xs.extend([4.0e15 - 0.5, -4.0e15 + 0.5, 4.0e15, 4.5e15 + 1.0, 1e300, f64::INFINITY, f64::NEG_INFINITY]);
        let mut x: f64 = -10_000.0;
        while x < 10_000.0 {
            xs.extend([x, f64::from_bits(x.to_bits() + 1), f64::from_bits(x.to_bits().wrapping_sub(1))]);
            x += 0.125;
        }
        for k in 0..100_000u64 {
            xs.push(f64::from_bits(k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2) * 1e-200);
            xs.push((k as f64) * 1000.0003 + 0.5);
        }
        for x in xs {
            assert_eq!(super::round(x) as i64, x.round() as i64, "{x:e}");
            assert_eq!(super::round(x).abs().to_bits(), x.round().abs().to_bits(), "{x:e}");
        }
        assert!(super::round(f64::NAN).is_nan());
    }
}
