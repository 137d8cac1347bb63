//! The event array scanned a region at a time: a region's elements found (by one thread, or
//! by pieces side by side from guessed event boundaries), each prepared by the sink, with
//! where the scan stopped and why. `document.rs` reads regions in a pipeline and hands their
//! events over in file order.

use std::mem::ManuallyDrop;

use super::copy::Copied;
use super::json::{self, Stop};
use super::scan;
use super::sink::{NameSpan, Sink};

/// Bytes scanned per region: large enough that the per-region hand-over is rare, small enough
/// that a region's bytes stay in the caches between the scan and the delivery.
pub(super) const BATCH: usize = 4 << 20;
/// Regions smaller than this are scanned by one thread.
pub(super) const MIN_PARALLEL: usize = 256 << 10;

/// A guessed event boundary at or after `from`: the `{` that starts a line.
pub(super) fn boundary(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(k) = memchr::memchr(b'\n', &b[i..]) {
        let j = json::ws(b, i + k + 1);
        if j < b.len() && b[j] == b'{' {
            return j;
        }
        // Every newline up to `j` leads to the same `j`: a run of whitespace is crossed once.
        i = j;
        if i >= b.len() {
            break;
        }
    }
    b.len()
}

/// One scanned element of `traceEvents` (absolute offsets), with what the sink prepared of it.
pub(super) struct Scanned<P> {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) is_object: bool,
    /// Inert events ([`Sink::is_inert`]) just before this one that were not kept.
    pub(super) inert_before: u32,
    pub(super) prep: Option<P>,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum RegionStop {
    /// The array ended; the absolute position just after `]`.
    ArrayEnd(u64),
    /// Malformed JSON at an absolute position.
    Syntax(u64, &'static str),
}

/// Where a region starts and what is expected there.
#[derive(Debug, Clone, Copy)]
pub(super) struct RegionStart {
    /// Absolute offset of the region's first byte.
    pub(super) base: u64,
    /// An element comes next (after `[` or a comma); otherwise a comma or `]`.
    pub(super) expect_element: bool,
    /// The last thing before the region was a comma.
    pub(super) after_comma: bool,
    /// The region runs to the end of the input.
    pub(super) last: bool,
}

/// What the scan of a stretch of the event array found.
pub(super) struct Region<P> {
    /// The events, in file order, as the lists of the pieces that were scanned.
    pub(super) events: Vec<Vec<Scanned<P>>>,
    /// How far the scan got (absolute): the start of the next element (after its comma), or
    /// the end of the last element when no comma followed yet.
    pub(super) end: u64,
    /// Why it stopped early.
    pub(super) stop: Option<RegionStop>,
    /// The bytes ended inside an element or between elements.
    pub(super) needs_more: bool,
    /// At `end`, the next thing is an element.
    pub(super) expect_element: bool,
    /// The last thing before `end` was a comma.
    pub(super) after_comma: bool,
    /// Where a comma directly followed by `]` was (absolute).
    pub(super) trailing_comma_at: Option<u64>,
    /// The region ran to the end of the input.
    pub(super) last: bool,
    /// Newlines from the region's first byte to `end`: counted by the scan threads, while the
    /// bytes are in their caches, instead of by the walker between regions.
    pub(super) newlines: u64,
    /// Where each sequence of bytes that is not UTF-8 starts (absolute), found on the same pass.
    pub(super) bad_utf8: Vec<u64>,
    /// With [`RunOptions::copy`], the events' bytes, one entry per piece.
    pub(super) copies: Vec<Copied>,
    /// With [`RunOptions::name_at`], each piece's distinct names ([`NameSpan`]), one entry per
    /// piece as in `events`: an event's [`scan::RawEvent::name_id`] counts in its piece's.
    pub(super) names: Vec<Vec<NameSpan>>,
}

/// The distinct names of one piece, as they are met.
#[derive(Default)]
struct PieceNames {
    /// Indices into `spans`, found by the name's hash.
    table: hashbrown::HashTable<u32>,
    /// Each name's place in the piece's bytes, and its length.
    spans: Vec<(usize, u32)>,
}

impl PieceNames {
    /// The number (from 1) of the name of `len` bytes at `at` in `b`, a new one for a name
    /// not met before in this piece.
    fn id(&mut self, b: &[u8], at: usize, len: usize) -> u32 {
        use std::hash::BuildHasher;
        let name = &b[at..at + len];
        let hash = rustc_hash::FxBuildHasher.hash_one(name);
        let spans = &mut self.spans;
        let bytes = |&(s, l): &(usize, u32)| &b[s..s + l as usize];
        let entry = self.table.entry(
            hash,
            |&k| bytes(&spans[k as usize]) == name,
            |&k| rustc_hash::FxBuildHasher.hash_one(bytes(&spans[k as usize])),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get() + 1,
            hashbrown::hash_table::Entry::Vacant(e) => {
                let k = spans.len() as u32;
                spans.push((at, len as u32));
                e.insert(k);
                k + 1
            }
        }
    }
}

/// The scan of one region, shared by the threads that do it: the region is cut into pieces at
/// guessed event boundaries, and each thread takes the next piece until none is left.
pub(super) struct ScanJob<'b, S: Sink> {
    pub(super) bytes: &'b [u8],
    pub(super) at: RegionStart,
    pub(super) opts: RunOptions,
    /// Where each piece starts (the first at 0).
    pub(super) starts: Vec<usize>,
    pub(super) next: std::sync::atomic::AtomicUsize,
    pub(super) done: Vec<std::sync::Mutex<Option<Region<S::Prep>>>>,
    /// Emptied event lists to fill, one per piece.
    pub(super) lists: Vec<std::sync::Mutex<Vec<Scanned<S::Prep>>>>,
}

impl<'b, S: Sink> ScanJob<'b, S> {
    pub(super) fn new(
        bytes: &'b [u8],
        at: RegionStart,
        opts: RunOptions,
        pieces: usize,
        spare: &mut Vec<Vec<Scanned<S::Prep>>>,
    ) -> ScanJob<'b, S> {
        let n = bytes.len();
        let mut starts = vec![0];
        if n >= MIN_PARALLEL {
            for k in 1..pieces {
                let s = boundary(bytes, (n * k / pieces).max(starts[starts.len() - 1] + 1));
                if s >= n {
                    break;
                }
                starts.push(s);
            }
        }
        let lists = starts.iter().map(|_| std::sync::Mutex::new(spare.pop().unwrap_or_default())).collect();
        ScanJob {
            bytes,
            at,
            opts,
            done: starts.iter().map(|_| std::sync::Mutex::new(None)).collect(),
            starts,
            next: std::sync::atomic::AtomicUsize::new(0),
            lists,
        }
    }

    /// Scans pieces until there are none left.
    pub(super) fn work(&self, stack: &mut Vec<u8>) {
        loop {
            let k = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&start) = self.starts.get(k) else { return };
            let stop_at = self.starts.get(k + 1).copied().unwrap_or(self.bytes.len());
            // A piece after the first starts at a guessed element, after a comma.
            let at = if k == 0 { self.at } else { RegionStart { expect_element: true, after_comma: true, ..self.at } };
            let list = std::mem::take(&mut *crate::parallel::lock(&self.lists[k]));
            // Two copies of the loop: the one without names pays nothing for them.
            let r = if self.opts.name_at {
                scan_run::<S, true>(self.bytes, start, stop_at, at, self.opts, stack, list)
            } else {
                scan_run::<S, false>(self.bytes, start, stop_at, at, self.opts, stack, list)
            };
            *crate::parallel::lock(&self.done[k]) = Some(r);
        }
    }

    /// The pieces joined in order, as far as each one started exactly where the one before
    /// it ended (the rest is scanned again as the next region).
    pub(super) fn finish(self, spare: &mut Vec<Vec<Scanned<S::Prep>>>) -> Region<S::Prep> {
        let mut pieces = self.done.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()));
        let mut region = pieces.next().flatten().expect("the first piece is always scanned");
        for (piece, &start) in pieces.zip(&self.starts[1..]) {
            let Some(mut piece) = piece else { break };
            let joins = region.end == self.at.base + start as u64
                && region.stop.is_none()
                && !region.needs_more
                && region.expect_element;
            if !joins {
                spare.append(&mut piece.events);
                continue;
            }
            region.events.append(&mut piece.events);
            region.bad_utf8.append(&mut piece.bad_utf8);
            region.copies.append(&mut piece.copies);
            region.names.append(&mut piece.names);
            region = Region {
                events: region.events,
                newlines: region.newlines + piece.newlines,
                bad_utf8: region.bad_utf8,
                copies: region.copies,
                names: region.names,
                ..piece
            };
        }
        region
    }
}

/// How the scan threads read a region.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunOptions {
    /// Whether events are parsed ([`Sink::wants_parsed`]).
    pub(super) parsed: bool,
    /// Whether the scan notes where names lie ([`Sink::wants_name_at`]).
    pub(super) name_at: bool,
    /// The largest event accepted, in bytes (a larger one is always handed over, to fail).
    pub(super) max_value: usize,
    /// Whether each piece's events are copied ([`Region::copies`]; needs `parsed`).
    pub(super) copy: bool,
}

/// Pieces a region is cut into for the scan threads.
pub(super) const PIECES: usize = 16;

/// Scans elements of the event array from `start` until the next element would start at or
/// after `stop_at`, the array ends, or the bytes run out. Inert events are only counted, but
/// for the last one of the run, so that the count of every one reaches the delivering thread.
pub(super) fn scan_run<S: Sink, const NAME_AT: bool>(
    b: &[u8],
    start: usize,
    stop_at: usize,
    at: RegionStart,
    RunOptions { parsed, max_value, copy, .. }: RunOptions,
    stack: &mut Vec<u8>,
    mut list: Vec<Scanned<S::Prep>>,
) -> Region<S::Prep> {
    list.clear();
    // Inert events since the last one kept, and the latest of them.
    let mut inert = 0u32;
    let mut last_inert = None;
    let abs = |i: usize| at.base + i as u64;
    let mut run = Region {
        events: Vec::new(),
        end: abs(start),
        stop: None,
        needs_more: false,
        expect_element: at.expect_element,
        after_comma: at.after_comma && at.expect_element,
        trailing_comma_at: None,
        last: at.last,
        newlines: 0,
        bad_utf8: Vec::new(),
        copies: Vec::new(),
        names: Vec::new(),
    };
    let mut names = PieceNames::default();
    // With `copy`: where the objects lie, and their spans.
    let mut copied = Copied::default();
    let mut bounds = Vec::new();
    'scan: {
        let mut i = json::ws(b, start);
        let mut comma = if run.after_comma { Some(start.saturating_sub(1)) } else { None };
        if !at.expect_element {
            match separator(b, i, at.base, &mut run, &mut comma) {
                Some(next) => i = next,
                None => break 'scan,
            }
        }
        loop {
            if i >= b.len() {
                run.needs_more = true;
                break 'scan;
            }
            if b[i] == b']' {
                // Right after '[' (an empty array) or after a comma (a trailing comma).
                if run.after_comma {
                    run.trailing_comma_at = comma.map(abs);
                }
                run.stop = Some(RegionStop::ArrayEnd(abs(i + 1)));
                break 'scan;
            }
            let is_object = b[i] == b'{';
            let r = if parsed && is_object {
                let mut ev = ManuallyDrop::new(scan::RawEvent::default());
                let r = scan::event_into::<NAME_AT>(b, i, stack, &mut ev).map(|e| {
                    if NAME_AT && ev.name_at > 0 {
                        if let super::leaf::Leaf::Str(name) = &ev.name {
                            ev.name_id = names.id(b, i + ev.name_at as usize, name.len());
                        }
                    }
                    if copy {
                        copied.span.note(super::copy::span(&ev));
                    }
                    (Some(S::prepare(&mut ev)), e)
                });
                scan::RawEvent::release(ev);
                r
            } else {
                json::skip(b, i, stack).map(|e| (None, e))
            };
            let (prep, end) = match r {
                Ok(x) => x,
                Err(Stop::Eof) => {
                    run.needs_more = true;
                    break 'scan;
                }
                Err(Stop::Syntax(p, what)) => {
                    run.stop = Some(RegionStop::Syntax(abs(p), what));
                    break 'scan;
                }
            };
            if copy && is_object {
                bounds.push((i, end));
            }
            let scanned = Scanned { start: abs(i), end: abs(end), is_object, inert_before: inert, prep };
            if scanned.prep.as_ref().is_some_and(S::is_inert) && end - i <= max_value && inert < u32::MAX {
                inert += 1;
                last_inert = Some(scanned);
            } else {
                list.push(scanned);
                inert = 0;
            }
            run.end = abs(end);
            run.expect_element = false;
            run.after_comma = false;
            match separator(b, json::ws(b, end), at.base, &mut run, &mut comma) {
                Some(next) if next < stop_at => i = next,
                _ => break 'scan,
            }
        }
    }
    if let Some(last) = last_inert.filter(|_| inert > 0) {
        list.push(Scanned { inert_before: inert - 1, ..last });
    }
    run.events.push(list);
    if NAME_AT {
        run.names.push(names.spans.into_iter().map(|(s, l)| (abs(s), l)).collect());
    }
    let end = (run.end - at.base) as usize;
    let scanned = &b[start..end.max(start)];
    let (newlines, ascii) = json::newlines_and_ascii(scanned);
    run.newlines = newlines;
    if !ascii {
        // Pieces are cut at ASCII bytes, so each holds whole characters.
        run.bad_utf8 = json::invalid_utf8(scanned).map(|k| abs(start + k)).collect();
    }
    if copy {
        copied.fill(b, at.base, &bounds, &run.bad_utf8);
        run.copies.push(copied);
    }
    run
}

/// What follows an element, at `j`: a comma (returns where the next element starts), the end of
/// the array, or the end of the bytes (the run ends; `run` says how).
pub(super) fn separator<P>(
    b: &[u8],
    j: usize,
    base: u64,
    run: &mut Region<P>,
    comma: &mut Option<usize>,
) -> Option<usize> {
    match b.get(j) {
        None => run.needs_more = true,
        Some(b',') => {
            *comma = Some(j);
            let i = json::ws(b, j + 1);
            run.end = base + i as u64;
            run.expect_element = true;
            run.after_comma = true;
            return Some(i);
        }
        Some(b']') => run.stop = Some(RegionStop::ArrayEnd(base + j as u64 + 1)),
        Some(_) => run.stop = Some(RegionStop::Syntax(base + j as u64, "',' or ']' after an event")),
    }
    None
}
