//! The calls-only JSON: every call of every profile, one per line, in the oracle's order.
//!
//! The shape is the oracle's (`trace_engine-profilecalls/1`), so `compare.mjs` and `diff` work
//! on it directly. Numbers are printed as JavaScript prints them.

use std::io::{self, Write};

use crate::estimate::{ThreadCalls, Timeline};
use crate::js::{write_json_string, write_number, Scalar};
use crate::strings::Strings;

/// The format tag written in the header.
pub const FORMAT: &str = "jscalls-calls/1";

/// Writes the calls JSON. `input` is the input's file name, for the header.
pub fn write_calls(out: &mut dyn Write, t: &Timeline, input: &str, engine: &str) -> io::Result<()> {
    let mut line = String::with_capacity(512);
    line.push_str("{\n\"format\":\"");
    line.push_str(FORMAT);
    line.push_str("\",\n\"engine\":");
    write_json_string(&mut line, engine);
    line.push_str(",\n\"mode\":\"");
    line.push_str(t.mode.name());
    line.push_str("\",\n\"input\":");
    write_json_string(&mut line, input);
    line.push_str(",\n\"sort\":\"ts,-dur,nodeDepth,sampleIndex,nodeId\",\n\"profiles\":[\n");
    out.write_all(line.as_bytes())?;
    for (pi, th) in t.threads.iter().enumerate() {
        line.clear();
        write_profile_head(&mut line, th);
        out.write_all(line.as_bytes())?;
        let order = th.canonical_order();
        for (k, &i) in order.iter().enumerate() {
            line.clear();
            write_call(&mut line, th, i as usize, &t.strings);
            if k + 1 < order.len() {
                line.push(',');
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        out.write_all(if pi + 1 < t.threads.len() { b"]},\n" } else { b"]}\n" })?;
    }
    out.write_all(b"]}\n")
}

fn write_profile_head(s: &mut String, th: &ThreadCalls) {
    s.push_str("{\"pid\":");
    s.push_str(&th.pid.to_string());
    s.push_str(",\"tid\":");
    s.push_str(&th.tid.to_string());
    s.push_str(",\"profileId\":");
    s.push_str(&th.profile_id);
    s.push_str(",\"threadName\":");
    match &th.thread_name {
        Some(n) => write_json_string(s, n),
        None => s.push_str("null"),
    }
    s.push_str(",\"sampleCount\":");
    s.push_str(&th.model.samples.len().to_string());
    s.push_str(",\"integrated\":");
    s.push_str(if th.skipped.is_none() { "true" } else { "false" });
    s.push_str(",\"callCount\":");
    s.push_str(&th.calls.len().to_string());
    if let Some(note) = th.skipped {
        s.push_str(",\"note\":");
        write_json_string(s, note);
    }
    s.push_str(",\"calls\":[\n");
}

/// Writes a frame field: `x ?? fallback` (fallback `""` or `null`).
fn write_field(s: &mut String, v: Scalar, empty_string: bool, strings: &Strings) {
    match v.or_null() {
        Some(v) => v.write_json(s, strings),
        None if empty_string => s.push_str("\"\""),
        None => s.push_str("null"),
    }
}

/// Writes one call as the oracle's canonical row.
pub fn write_call(s: &mut String, th: &ThreadCalls, i: usize, strings: &Strings) {
    let c = &th.calls[i];
    let node = &th.model.nodes[c.node as usize];
    let f = &node.frame;
    s.push_str("{\"ts\":");
    write_number(s, c.ts);
    s.push_str(",\"dur\":");
    write_number(s, c.dur);
    s.push_str(",\"selfTime\":");
    match th.self_time.get(i).copied().flatten() {
        Some(v) => write_number(s, v),
        None => s.push_str("null"),
    }
    s.push_str(",\"depth\":");
    match th.depth.get(i).copied().flatten() {
        Some(d) => s.push_str(&d.to_string()),
        None => s.push_str("null"),
    }
    s.push_str(",\"nodeDepth\":");
    match th.model.node_by_id(node.id) {
        Some(n) => s.push_str(&th.model.nodes[n as usize].depth.to_string()),
        None => s.push_str("null"),
    }
    s.push_str(",\"nodeId\":");
    s.push_str(&node.id.to_string());
    s.push_str(",\"sampleIndex\":");
    s.push_str(&c.sample_index.to_string());
    s.push_str(",\"functionName\":");
    write_field(s, f.function_name, true, strings);
    s.push_str(",\"url\":");
    write_field(s, f.url, true, strings);
    s.push_str(",\"scriptId\":");
    match f.script_id.or_null() {
        Some(v) => write_json_string(s, &v.to_js_string(strings)),
        None => s.push_str("\"\""),
    }
    s.push_str(",\"lineNumber\":");
    write_field(s, f.line_number, false, strings);
    s.push_str(",\"columnNumber\":");
    write_field(s, f.column_number, false, strings);
    s.push('}');
}
