//! Call trees for other tools: speedscope's file format and collapsed ("folded") stacks, the
//! input of every flame-graph tool.

use rustc_hash::FxHashMap;

use super::render::{number, string};
use super::{Func, Span, StackId, Stacks};

/// One thread for [`speedscope`].
pub struct Profile<'a> {
    /// Shown as the profile's name (speedscope lists one per thread).
    pub name: String,
    /// The thread's stacks (after any transforms).
    pub stacks: &'a Stacks,
    /// Their spans, in time order.
    pub spans: &'a [Span],
    /// Evented or sampled.
    pub kind: ProfileKind,
}

/// How a [`Profile`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    /// Frames opened and closed at the spans' times: a flame chart of durations (µs).
    Evented,
    /// One sample per span, weighing its weight in µs.
    SampledTime,
    /// One sample per span, weighing its weight as a count.
    SampledCount,
}

/// A speedscope document (`https://www.speedscope.app/file-format-schema.json`): the functions
/// as shared frames, one profile per thread.
pub fn speedscope(out: &mut String, name: &str, profiles: &[Profile<'_>]) {
    let mut frames: Vec<&Func> = Vec::new();
    let mut index: FxHashMap<&Func, u32> = FxHashMap::default();
    // Each profile's function ids as shared frame ids.
    let frame_ids: Vec<Vec<u32>> = profiles
        .iter()
        .map(|p| {
            p.stacks
                .funcs
                .iter()
                .map(|f| {
                    *index.entry(f).or_insert_with(|| {
                        frames.push(f);
                        frames.len() as u32 - 1
                    })
                })
                .collect()
        })
        .collect();
    out.push_str("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"name\":");
    string(out, name);
    out.push_str(",\"exporter\":\"jscalls ");
    out.push_str(env!("CARGO_PKG_VERSION"));
    out.push_str("\",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
    for (k, f) in frames.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("\n{\"name\":");
        string(out, &f.label());
        if !f.url.is_empty() {
            out.push_str(",\"file\":");
            string(out, &f.url);
        }
        // speedscope counts lines and columns from 1, as editors do; it tells frames apart by
        // them, so they are given even without a file (scripts V8 knows by id only).
        if let Some(l) = f.line.filter(|&l| l >= 0) {
            out.push_str(",\"line\":");
            number(out, (l + 1) as f64);
            if let Some(c) = f.column.filter(|&c| c >= 0) {
                out.push_str(",\"col\":");
                number(out, (c + 1) as f64);
            }
        }
        out.push('}');
    }
    out.push_str("]},\"profiles\":[");
    for (k, (p, ids)) in profiles.iter().zip(&frame_ids).enumerate() {
        if k > 0 {
            out.push(',');
        }
        match p.kind {
            ProfileKind::Evented => evented(out, p, ids),
            ProfileKind::SampledTime | ProfileKind::SampledCount => sampled(out, p, ids),
        }
    }
    out.push_str("]}\n");
}

fn evented(out: &mut String, p: &Profile<'_>, ids: &[u32]) {
    let (start, end) = match (p.spans.first(), p.spans.last()) {
        (Some(a), Some(b)) => (a.start, b.end),
        _ => (0.0, 0.0),
    };
    out.push_str("\n{\"type\":\"evented\",\"name\":");
    string(out, &p.name);
    out.push_str(",\"unit\":\"microseconds\",\"startValue\":");
    number(out, start);
    out.push_str(",\"endValue\":");
    number(out, end);
    out.push_str(",\"events\":[");
    let depth = p.stacks.depths();
    // The open stacks, outermost first: a span's stack is reached from the open one by
    // closing down to their common ancestor and opening the rest, found by walking up from the
    // new stack (what changes, not the whole depth).
    let mut open: Vec<StackId> = Vec::new();
    let mut first = true;
    let mut event = |out: &mut String, kind: char, stack: StackId, at: f64| {
        out.push_str(if first { "\n{\"type\":\"" } else { ",\n{\"type\":\"" });
        first = false;
        out.push(kind);
        out.push_str("\",\"frame\":");
        number(out, ids[p.stacks.prefix[stack as usize].1 as usize] as f64);
        out.push_str(",\"at\":");
        number(out, at);
        out.push('}');
    };
    let mut last_end = f64::NEG_INFINITY;
    let mut opened: Vec<StackId> = Vec::new();
    for s in p.spans {
        if s.start > last_end {
            // A gap: nothing ran.
            while let Some(x) = open.pop() {
                event(out, 'C', x, last_end);
            }
        }
        opened.clear();
        let mut x = s.stack;
        while x != StackId::MAX {
            let d = depth[x as usize] as usize;
            if open.len() >= d && open[d - 1] == x {
                break;
            }
            opened.push(x);
            x = p.stacks.prefix[x as usize].0.unwrap_or(StackId::MAX);
        }
        let keep = if x == StackId::MAX { 0 } else { depth[x as usize] as usize };
        while open.len() > keep {
            let y = open.pop().expect("longer than keep");
            event(out, 'C', y, s.start);
        }
        for &y in opened.iter().rev() {
            event(out, 'O', y, s.start);
            open.push(y);
        }
        last_end = s.end;
    }
    while let Some(x) = open.pop() {
        event(out, 'C', x, last_end);
    }
    out.push_str("]}");
}

fn sampled(out: &mut String, p: &Profile<'_>, ids: &[u32]) {
    out.push_str("\n{\"type\":\"sampled\",\"name\":");
    string(out, &p.name);
    let unit = if p.kind == ProfileKind::SampledCount { "none" } else { "microseconds" };
    out.push_str(",\"unit\":\"");
    out.push_str(unit);
    out.push_str("\",\"startValue\":0,\"endValue\":");
    number(out, p.spans.iter().map(|s| s.weight).sum());
    out.push_str(",\"samples\":[");
    let mut path = Vec::new();
    for (k, s) in p.spans.iter().enumerate() {
        out.push_str(if k == 0 { "\n[" } else { ",\n[" });
        path.clear();
        if s.stack != StackId::MAX {
            path.extend(p.stacks.funcs_of(s.stack).iter().map(|&f| ids[f as usize]));
        }
        for (j, f) in path.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            number(out, *f as f64);
        }
        out.push(']');
    }
    out.push_str("],\"weights\":[");
    for (k, s) in p.spans.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        number(out, s.weight);
    }
    out.push_str("]}");
}

/// A name in collapsed stacks, with the separator `;` (and line breaks) replaced, since the
/// format cannot escape them.
fn collapsed_text(s: &str) -> String {
    s.replace([';', '\n', '\r'], ":")
}

/// Each function's name in collapsed stacks: its label.
fn collapsed_names(stacks: &Stacks) -> Vec<String> {
    stacks.funcs.iter().map(|f| collapsed_text(&f.label())).collect()
}

/// The collapsed line of `stack` weighing `w` (rounded; None under 1).
fn collapsed_line(names: &[String], stacks: &Stacks, stack: StackId, w: f64, prefix: Option<&str>) -> Option<String> {
    let w = w.round();
    if w < 1.0 {
        return None;
    }
    let mut line = prefix.unwrap_or("").to_owned();
    if stack != StackId::MAX {
        for f in stacks.funcs_of(stack) {
            if !line.is_empty() {
                line.push(';');
            }
            line.push_str(&names[f as usize]);
        }
    }
    if line.is_empty() {
        line.push_str("(root)");
    }
    line.push(' ');
    line.push_str(itoa::Buffer::new().format(w as u64));
    Some(line)
}

/// Collapsed stacks of `stacks`, one line per stack with weight (`a;b;c 1234`), each weight
/// rounded to a whole number (µs, or samples), lines that round to 0 left out. Every line starts
/// with `prefix;` when given (a thread's name, when several share a file).
///
/// Lines come in the order of a walk of the stacks' tree, a stack before the stacks above it,
/// siblings by name: every subtree is one run of lines, which flame-graph tools merge into one
/// frame (a byte-wise sort would put `a;b c` between `a;b` and `a;b;x`, splitting `b`), and
/// no sort of the lines is needed.
pub fn collapsed(lines: &mut Vec<String>, stacks: &Stacks, prefix: Option<&str>) {
    let n = stacks.len();
    let mut weight = vec![0.0; n];
    let mut root = 0.0;
    for &(s, w) in &stacks.samples {
        match weight.get_mut(s as usize) {
            Some(x) => *x += w,
            None => root += w,
        }
    }
    let names = collapsed_names(stacks);
    let prefix = prefix.map(collapsed_text);
    let line = |path: &str, w: f64| -> Option<String> {
        let w = w.round();
        (w >= 1.0).then(|| {
            let mut l = String::with_capacity(path.len() + 12);
            l.push_str(if path.is_empty() { "(root)" } else { path });
            l.push(' ');
            l.push_str(itoa::Buffer::new().format(w as u64));
            l
        })
    };
    let mut path = prefix.clone().unwrap_or_default();
    lines.extend(line(&path, root));
    // Children of each stack (and the roots), by name, then id.
    let mut children: Vec<Vec<StackId>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for s in 0..n as StackId {
        match stacks.frame(s).0 {
            Some(p) => children[p as usize].push(s),
            None => roots.push(s),
        }
    }
    let by_name = |v: &mut Vec<StackId>| {
        v.sort_by(|&a, &b| names[stacks.frame(a).1 as usize].cmp(&names[stacks.frame(b).1 as usize]).then(a.cmp(&b)))
    };
    by_name(&mut roots);
    for c in &mut children {
        by_name(c);
    }
    // (stack, path length before it); iterative, so any depth is safe.
    let mut todo: Vec<(StackId, usize)> = roots.iter().rev().map(|&r| (r, path.len())).collect();
    while let Some((s, len)) = todo.pop() {
        path.truncate(len);
        if !path.is_empty() {
            path.push(';');
        }
        path.push_str(&names[stacks.frame(s).1 as usize]);
        lines.extend(line(&path, weight[s as usize]));
        let here = path.len();
        todo.extend(children[s as usize].iter().rev().map(|&c| (c, here)));
    }
}

/// Collapsed stacks in time order, for a flame chart by time: one line per run of spans on
/// the same stack, weight its length in µs (or samples), rounded.
pub fn collapsed_by_time(lines: &mut Vec<String>, stacks: &Stacks, spans: &[Span], prefix: Option<&str>) {
    let names = collapsed_names(stacks);
    let prefix = prefix.map(collapsed_text);
    let mut k = 0;
    while k < spans.len() {
        let stack = spans[k].stack;
        let mut w = 0.0;
        while k < spans.len() && spans[k].stack == stack {
            w += spans[k].weight;
            k += 1;
        }
        lines.extend(collapsed_line(&names, stacks, stack, w, prefix.as_deref()));
    }
}
