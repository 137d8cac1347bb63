//! The calls-only JSON: every call of every profile, one per line, in the oracle's order.
//!
//! The shape is the oracle's (`trace_engine-profilecalls/1`), so `compare.mjs` and `diff` work
//! on it directly. Numbers are printed as JavaScript prints them.

use std::io::{self, Write};

use crate::estimate::{Estimates, ThreadCalls};
use crate::js::{write_int, write_json_string, write_number, Scalar};
use crate::model::profile::CallFrame;
use crate::parallel;
use crate::strings::Strings;
use crate::tree::Selection;

/// The format tag written in the header.
pub(crate) const FORMAT: &str = "jscalls-calls/1";

/// Calls rendered per job by [`write_calls_from`] (about 256 KB of JSON).
const CHUNK: usize = 1 << 10;
/// Jobs rendered ahead of the one being written, per thread (the writing thread included):
/// the workers render while the writing thread writes, and with fewer they run out of jobs
/// while it writes a megabyte.
const AHEAD: usize = 8;

/// Writes the calls JSON for threads held in any way (see [`Estimates`]), rendering the rows on
/// up to `threads` threads (the same bytes). `input` is the input's name, for the header.
pub(crate) fn write_calls_from(
    out: &mut dyn Write,
    t: impl Estimates,
    input: &str,
    engine: &str,
    threads: usize,
    range: Option<&Selection>,
) -> io::Result<()> {
    write_calls_chunked(out, t, input, engine, threads, CHUNK, range)
}

/// [`write_calls_from`] with `chunk` calls rendered per job; with `range`, only the calls that
/// overlap it (whole: a call is not cut at its edges).
fn write_calls_chunked(
    out: &mut dyn Write,
    mut t: impl Estimates,
    input: &str,
    engine: &str,
    threads: usize,
    chunk: usize,
    range: Option<&Selection>,
) -> io::Result<()> {
    let mut line = String::with_capacity(1 << 16);
    line.push_str("{\n\"format\":\"");
    line.push_str(FORMAT);
    line.push_str("\",\n\"engine\":");
    write_json_string(&mut line, engine);
    line.push_str(",\n\"mode\":\"");
    line.push_str(t.mode().name());
    line.push_str("\",\n\"input\":");
    write_json_string(&mut line, input);
    if let Some(r) = range {
        line.push_str(",\n\"range\":{");
        r.write_json_fields(&mut line);
        if let Some(e) = &r.event {
            line.push_str(",\"event\":");
            line.push_str(e);
        }
        line.push('}');
    }
    line.push_str(",\n\"sort\":\"ts,-dur,nodeDepth,sampleIndex,nodeId\",\n\"profiles\":[\n");
    out.write_all(line.as_bytes())?;
    let n_threads = t.len();
    let mut pi = 0;
    let spare = std::cell::RefCell::new(Vec::<String>::new());
    t.each(|th, strings| {
        line.clear();
        let kept: Vec<u32>;
        let order = match range {
            None => th.canonical_order(),
            Some(r) => {
                // A call overlaps when it starts by the end and ends at the start or later (one
                // still open at the end of the profile, by its start).
                let overlaps = |c: &crate::estimate::ProfileCall| {
                    c.ts <= r.max_us && c.ts + if c.dur.is_nan() { 0.0 } else { c.dur } >= r.min_us
                };
                kept = th.canonical_order().iter().copied().filter(|&k| overlaps(&th.calls[k as usize])).collect();
                &kept
            }
        };
        write_profile_head(&mut line, th, order.len());
        out.write_all(line.as_bytes())?;
        line.clear();
        let frags = NodeFragments::new(th, strings);
        let n = order.len();
        // Chunks are rendered on the workers, a few ahead of the one being written here, so
        // that rendering goes on while the kernel copies the bytes: memory stays bounded.
        // The chunks' buffers are reused (fresh ones would be fresh pages to zero).
        let make = |c: usize| {
            let buf = spare.borrow_mut().pop().unwrap_or_else(|| String::with_capacity(chunk * 256));
            (c * chunk..((c + 1) * chunk).min(n), buf)
        };
        let render = |(range, mut s): (std::ops::Range<usize>, String)| {
            s.clear();
            for k in range {
                write_call(&mut s, th, order[k] as usize, &frags);
                s.push_str(if k + 1 < n { ",\n" } else { "\n" });
            }
            s
        };
        let write = |part: String| {
            out.write_all(part.as_bytes())?;
            spare.borrow_mut().push(part);
            Ok::<(), io::Error>(())
        };
        parallel::ordered(n.div_ceil(chunk), threads, AHEAD * threads, make, render, write)?;
        line.push_str(if pi + 1 < n_threads { "]},\n" } else { "]}\n" });
        pi += 1;
        out.write_all(line.as_bytes())
    })?;
    out.write_all(b"]}\n")
}

fn write_profile_head(s: &mut String, th: &ThreadCalls, n_calls: usize) {
    s.push_str("{\"pid\":");
    write_int(s, th.pid);
    s.push_str(",\"tid\":");
    write_int(s, th.tid);
    s.push_str(",\"profileId\":");
    s.push_str(&th.profile_id);
    s.push_str(",\"threadName\":");
    match &th.thread_name {
        Some(n) => write_json_string(s, n),
        None => s.push_str("null"),
    }
    s.push_str(",\"sampleCount\":");
    write_int(s, th.model.n_samples() as i64);
    s.push_str(",\"integrated\":");
    s.push_str(if th.skipped.is_none() { "true" } else { "false" });
    s.push_str(",\"callCount\":");
    write_int(s, n_calls as i64);
    if let Some(note) = th.skipped {
        s.push_str(",\"note\":");
        write_json_string(s, note);
    }
    if let Some(m) = &th.sampler {
        write_sampler(s, m, th.estimator);
    }
    s.push_str(",\"calls\":[\n");
}

/// Writes `,"estimator":…,"sampler":{…}`: which estimate the calls are and what was measured
/// of the sampler; with bounds, `,"singleSampleCalls":…`.
fn write_sampler(s: &mut String, m: &crate::Sampler, estimator: crate::Estimator) {
    s.push_str(",\"estimator\":\"");
    s.push_str(estimator.name());
    s.push_str("\",\"sampler\":{\"intervalUs\":");
    write_number(s, m.interval);
    s.push_str(",\"lagMeanUs\":");
    write_number(s, m.lag_mean);
    // null: not measured (the bounds then take each tick between its neighbours' stamps).
    s.push_str(",\"lagBoundUs\":");
    write_number(s, m.lag_bound.unwrap_or(f64::NAN));
    s.push_str(",\"stampDelayUs\":");
    write_number(s, m.stamp_delay.unwrap_or(f64::NAN));
    s.push_str(",\"boundaries\":");
    write_int(s, i64::from(m.boundaries));
    s.push_str(",\"lateTicks\":");
    write_int(s, i64::from(m.late_ticks));
    s.push_str(",\"syncSamples\":");
    write_int(s, i64::from(m.sync_samples));
    s.push('}');
    if let Some(n) = m.single_sample_calls {
        s.push_str(",\"singleSampleCalls\":");
        write_int(s, i64::from(n));
    }
}

/// Writes a frame field: `x ?? fallback` (fallback `""` or `null`).
pub(crate) fn write_field(s: &mut String, v: Scalar, empty_string: bool, strings: &Strings) {
    match v.or_null() {
        Some(v) => v.write_json(s, strings),
        None if empty_string => s.push_str("\"\""),
        None => s.push_str("null"),
    }
}

/// Once source maps apply, a frame's DevTools name and original place, beside its recorded
/// fields (`,"originalName":…,"originalUrl":…,"originalLineNumber":…,"originalColumnNumber":…`,
/// each only when the map gives it).
pub(crate) fn write_original(text: &mut String, f: &CallFrame, strings: &Strings) {
    let Some(o) = f.original else { return };
    if let Some(name) = o.name {
        text.push_str(",\"originalName\":");
        write_json_string(text, strings.get(name));
    }
    if let Some((url, line, column)) = o.place {
        text.push_str(",\"originalUrl\":");
        write_json_string(text, strings.get(url));
        text.push_str(",\"originalLineNumber\":");
        write_int(text, line);
        text.push_str(",\"originalColumnNumber\":");
        write_int(text, column);
    }
}

/// The per-node parts of a call row, rendered once: per node, the fields that are the node's
/// own (`,"nodeDepth":…,"nodeId":…,"sampleIndex":`), and per distinct frame, the frame fields
/// (`,"functionName":…,"columnNumber":…}`).
pub(crate) struct NodeFragments {
    /// All node heads, one after the other; node `k`'s is `heads[head_ends[k - 1]..head_ends[k]]`.
    heads: String,
    head_ends: Vec<usize>,
    /// All frame tails, one after the other; frame `k` is `text[ends[k - 1]..ends[k]]`.
    text: String,
    ends: Vec<usize>,
}

impl NodeFragments {
    /// Renders the frames of the thread's profile.
    pub(crate) fn new(th: &ThreadCalls, strings: &Strings) -> NodeFragments {
        let frames = &th.model.frames;
        let mut text = String::with_capacity(frames.len() * 128);
        let mut ends = Vec::with_capacity(frames.len());
        for f in frames {
            text.push_str(",\"functionName\":");
            write_field(&mut text, f.function_name, true, strings);
            text.push_str(",\"url\":");
            write_field(&mut text, f.url, true, strings);
            text.push_str(",\"scriptId\":");
            match f.script_id.or_null() {
                Some(v) => write_json_string(&mut text, &v.to_js_string(strings)),
                None => text.push_str("\"\""),
            }
            text.push_str(",\"lineNumber\":");
            write_field(&mut text, f.line_number, false, strings);
            text.push_str(",\"columnNumber\":");
            write_field(&mut text, f.column_number, false, strings);
            write_original(&mut text, f, strings);
            text.push('}');
            ends.push(text.len());
        }
        let nodes = &th.model.nodes;
        let mut heads = String::with_capacity(nodes.len() * 48);
        let mut head_ends = Vec::with_capacity(nodes.len());
        for (node, &depth) in nodes.iter().zip(th.node_depths()) {
            heads.push_str(",\"nodeDepth\":");
            match depth {
                -2 => heads.push_str("null"),
                d => write_int(&mut heads, d as i64),
            }
            heads.push_str(",\"nodeId\":");
            write_int(&mut heads, node.id);
            heads.push_str(",\"sampleIndex\":");
            head_ends.push(heads.len());
        }
        NodeFragments { heads, head_ends, text, ends }
    }

    fn node_head(&self, k: u32) -> &str {
        let start = if k == 0 { 0 } else { self.head_ends[k as usize - 1] };
        &self.heads[start..self.head_ends[k as usize]]
    }

    fn frame(&self, k: u32) -> &str {
        let start = if k == 0 { 0 } else { self.ends[k as usize - 1] };
        &self.text[start..self.ends[k as usize]]
    }
}

/// Writes one call as the oracle's canonical row.
pub(crate) fn write_call(s: &mut String, th: &ThreadCalls, i: usize, frags: &NodeFragments) {
    let c = &th.calls[i];
    let node = &th.model.nodes[c.node as usize];
    s.push_str("{\"ts\":");
    write_number(s, c.ts);
    s.push_str(",\"dur\":");
    write_number(s, c.dur);
    write_bounds(s, th, i);
    write_tree_fields(s, th, i);
    s.push_str(frags.node_head(c.node));
    write_int(s, i64::from(c.sample_index));
    s.push_str(frags.frame(node.frame));
}

/// Writes `,"bounds":[earliestStart,latestStart,earliestEnd,latestEnd]` of call `i` when the
/// thread has bounds (`null` on an unbounded side).
pub(crate) fn write_bounds(s: &mut String, th: &ThreadCalls, i: usize) {
    let Some(b) = th.bounds.get(i) else { return };
    s.push_str(",\"bounds\":[");
    for (k, &x) in b.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        if x.is_nan() {
            s.push_str("null");
        } else {
            write_number(s, x);
        }
    }
    s.push(']');
}

/// Writes `,"selfTime":…,"depth":…` of call `i` (`null` for a call the flame chart drops).
pub(crate) fn write_tree_fields(s: &mut String, th: &ThreadCalls, i: usize) {
    s.push_str(",\"selfTime\":");
    match th.self_time.get(i) {
        Some(v) => write_number(s, v),
        None => s.push_str("null"),
    }
    s.push_str(",\"depth\":");
    match th.depth.get(i) {
        Some(d) => write_int(s, d as i64),
        None => s.push_str("null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows rendered in many small chunks, on several threads, come out in the same order as
    /// rendered on one thread in one piece (the fixtures have fewer calls than [`CHUNK`]).
    #[test]
    fn chunks_rendered_in_parallel_are_written_in_order() {
        let src = crate::Source::file("fixtures/node-mixed.cpuprofile.gz");
        let a = crate::analyze(&src, &crate::Config::default()).unwrap();
        assert!(a.all.n_calls() > 400, "{} calls", a.all.n_calls());
        let mut want = Vec::new();
        write_calls_chunked(&mut want, &a.all, "x", "e", 1, CHUNK, None).unwrap();
        for (threads, chunk) in [(2, 7), (3, 100), (2, 1)] {
            let mut got = Vec::new();
            write_calls_chunked(&mut got, &a.all, "x", "e", threads, chunk, None).unwrap();
            assert!(got == want, "{threads} threads, {chunk} calls a chunk: the bytes differ");
        }
    }
}
