//! `jscalls diff`'s reports: call by call and function by function, as text for a terminal,
//! markdown for a CI page, or `jscalls-diff/1` JSON; and the `--fail-on` verdict.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::rule::{self, Gate, Rule, Violation};
use jscalls::diff::calls::{self, ChangeKind, ThreadDiff};
use jscalls::diff::funcs::{self, FuncDiff, Metric, Row, Subject};
use jscalls::diff::{CallRecord, ThreadEstimate};

use super::{ms, percent, signed_ms, warn_unmatched, write_out, write_with, Header};
use crate::cli::args::{DiffArgs, DiffFormat, Global};
use crate::cli::report::{md_cell, md_code};
use crate::cli::Failed;

// ---- call level ----

pub(super) fn call_level(
    args: &DiffArgs,
    global: &Global,
    header: &Header,
    base: &[ThreadEstimate],
    new: &[ThreadEstimate],
    rules: &[Rule],
    gate: Gate,
) -> Result<(), Failed> {
    // Text shows the largest changes of each thread; markdown and JSON show all.
    let keep = if args.format == DiffFormat::Text { args.top } else { usize::MAX };
    let threads = calls::diff(base, new, keep);
    let mut text = String::new();
    match args.format {
        DiffFormat::Text => calls_text(&mut text, header, &threads, args.top),
        DiffFormat::Markdown => calls_markdown(&mut text, header, &threads, args.top),
        DiffFormat::Svg | DiffFormat::Pprof => unreachable!("an SVG is drawn before the call level is reached"),
        // Streamed to the output below.
        DiffFormat::Json => {}
    }
    let mut violations = Vec::new();
    if !rules.is_empty() {
        let f = funcs::diff(&[base], &[new]);
        let (v, found) = rule::check(&f, rules, gate);
        warn_unmatched(rules, &found, global)?;
        gate_report(&mut text, args.format, rules, &v, &f);
        violations = v;
    }
    if args.format == DiffFormat::Json {
        write_with(args, |w| calls_json(w, header, &threads))?;
    } else {
        write_out(args, &text)?;
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Failed::Regression)
    }
}

pub(super) fn thread_name(t: &ThreadDiff) -> String {
    format!("{} (pid {}, tid {})", t.name.as_deref().unwrap_or("thread"), t.pid, t.tid)
}

pub(super) fn calls_text(out: &mut String, h: &Header, threads: &[ThreadDiff], top: usize) {
    let total: usize = threads.iter().map(|t| t.base_calls.max(t.new_calls)).sum();
    let changed: usize = threads.iter().map(ThreadDiff::len).sum();
    if changed == 0 {
        let _ = writeln!(out, "identical: {total} calls in {} threads ({} vs {})", threads.len(), h.base, h.new);
        return;
    }
    let _ = writeln!(out, "BASE {}\nNEW  {}", h.base, h.new);
    if let Some(r) = h.range_line() {
        let _ = writeln!(out, "range {r}");
    }
    for t in threads {
        let _ = writeln!(
            out,
            "{}: {} -> {} calls: {} added, {} removed, {} changed; sum |dur change| {} ms",
            thread_name(t),
            t.base_calls,
            t.new_calls,
            t.count(ChangeKind::Added),
            t.count(ChangeKind::Removed),
            t.count(ChangeKind::Changed),
            ms(t.sum_abs_dur())
        );
        if t.is_empty() {
            continue;
        }
        let o = t.origin();
        let _ = writeln!(
            out,
            "  {:<8} {:>11} {:>21} {:>9} {:>9} {:>7}  function",
            "", "start ms", "dur ms", "start", "self", "depth"
        );
        for c in t.changes().take(top) {
            let _ = writeln!(out, "  {}", call_row(&c, o));
        }
        if t.len() > top {
            let _ = writeln!(out, "  ... {} more (--top N, or --format json for all)", t.len() - top);
        }
    }
}

pub(super) fn call_row(c: &calls::CallChange, origin: f64) -> String {
    let first = c.base.or(c.new).expect("a change has a side");
    let dur = |x: Option<CallRecord>| x.map_or("-".to_owned(), |c| ms(c.dur()));
    let (d_start, d_self, depth) = match (c.base, c.new) {
        (Some(b), Some(n)) => (
            signed_ms(n.ts() - b.ts()),
            signed_ms(n.self_time().unwrap_or(0.0) - b.self_time().unwrap_or(0.0)),
            if b.depth() == n.depth() { opt(n.depth()) } else { format!("{}>{}", opt(b.depth()), opt(n.depth())) },
        ),
        (_, _) => (String::new(), String::new(), opt(first.depth())),
    };
    format!(
        "{:<8} {:>11} {:>21} {:>9} {:>9} {:>7}  {}",
        c.kind.as_str(),
        ms(first.ts() - origin),
        format!("{} -> {}", dur(c.base), dur(c.new)),
        d_start,
        d_self,
        depth,
        c.func.label()
    )
}

pub(super) fn opt(d: Option<i32>) -> String {
    d.map_or("-".to_owned(), |d| d.to_string())
}

pub(super) fn calls_markdown(out: &mut String, h: &Header, threads: &[ThreadDiff], top: usize) {
    let changed: usize = threads.iter().map(ThreadDiff::len).sum();
    let _ = writeln!(out, "### jscalls diff: calls\n\nBASE {} · NEW {}\n", md_code(&h.base), md_code(&h.new));
    if let Some(r) = h.range_line() {
        let _ = writeln!(out, "Range {}\n", md_cell(&r.replace("->", "→")));
    }
    if changed == 0 {
        let total: usize = threads.iter().map(|t| t.base_calls).sum();
        let _ = writeln!(out, "Identical: {total} calls in {} threads.", threads.len());
        return;
    }
    let _ = writeln!(
        out,
        "| thread | calls BASE → NEW | added | removed | changed | Σ\\|Δdur\\| ms |\n|---|---:|---:|---:|---:|---:|"
    );
    for t in threads {
        let _ = writeln!(
            out,
            "| {} | {} → {} | {} | {} | {} | {} |",
            md_cell(&thread_name(t)),
            t.base_calls,
            t.new_calls,
            t.count(ChangeKind::Added),
            t.count(ChangeKind::Removed),
            t.count(ChangeKind::Changed),
            ms(t.sum_abs_dur())
        );
    }
    for t in threads.iter().filter(|t| !t.is_empty()) {
        let o = t.origin();
        let row = |c: &calls::CallChange| {
            let first = c.base.or(c.new).expect("a side");
            let dur = |x: Option<CallRecord>| x.map_or("–".to_owned(), |c| ms(c.dur()));
            format!(
                "| {} | {} | {} → {} | {} |",
                c.kind.as_str(),
                ms(first.ts() - o),
                dur(c.base),
                dur(c.new),
                md_cell(&c.func.label())
            )
        };
        let head = "| change | start ms | dur ms BASE → NEW | function |\n|---|---:|---:|---|";
        let _ = writeln!(out, "\n**{}**, largest changes first:\n", md_cell(&thread_name(t)));
        md_table(out, head, t.changes(), top, row, "more");
    }
}

/// A markdown table of the first `top` items, and the rest in a folded section.
pub(super) fn md_table<T>(
    out: &mut String,
    head: &str,
    items: impl ExactSizeIterator<Item = T>,
    top: usize,
    row: impl Fn(&T) -> String,
    more: &str,
) {
    let _ = writeln!(out, "{head}");
    let n = items.len();
    for (k, x) in items.enumerate() {
        if k == top {
            let _ = writeln!(out, "\n<details><summary>{} {more}</summary>\n\n{head}", n - top);
        }
        let _ = writeln!(out, "{}", row(&x));
    }
    if n > top {
        let _ = writeln!(out, "\n</details>");
    }
}

/// Text for a markdown table cell.
/// The call-level `jscalls-diff/1` document, written as it goes: a change a line, never the
/// whole document in memory (a diff of two large traces holds hundreds of thousands).
pub(super) fn calls_json(w: &mut dyn Write, h: &Header, threads: &[ThreadDiff]) -> io::Result<()> {
    let identical = threads.iter().all(ThreadDiff::is_empty);
    write!(
        w,
        "{{\"format\":\"jscalls-diff/1\",\"level\":\"calls\",\"base\":{},\"new\":{},\"identical\":{identical},\"threads\":[",
        js(&h.base),
        js(&h.new)
    )?;
    for (i, t) in threads.iter().enumerate() {
        write!(
            w,
            "{}\n{{\"pid\":{},\"tid\":{},\"name\":{},\"baseCalls\":{},\"newCalls\":{},\"added\":{},\"removed\":{},\"changed\":{},\"sumAbsDurChange\":{},\"changes\":[",
            if i > 0 { "," } else { "" },
            t.pid,
            t.tid,
            js(&t.name),
            t.base_calls,
            t.new_calls,
            t.count(ChangeKind::Added),
            t.count(ChangeKind::Removed),
            t.count(ChangeKind::Changed),
            js(&t.sum_abs_dur()),
        )?;
        for (k, c) in t.changes().enumerate() {
            write!(
                w,
                "{}\n{{\"kind\":\"{}\",\"function\":{{\"name\":{},\"url\":{},\"line\":{},\"column\":{}}},\"base\":{},\"new\":{}}}",
                if k > 0 { "," } else { "" },
                c.kind.as_str(),
                js(&c.func.name),
                js(&c.func.url),
                js(&c.func.line),
                js(&c.func.column),
                js(&c.base),
                js(&c.new),
            )?;
        }
        w.write_all(b"]}")?;
    }
    w.write_all(b"\n]}\n")
}

/// JSON text of a value (a name, a number, a call) for the streamed document.
pub(super) fn js<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("plain values serialize")
}

// ---- function level ----

pub(super) fn row_cells(d: &FuncDiff, r: &Row) -> [String; 8] {
    let (bs, ns) = r.medians(Metric::SelfTime);
    let (bt, nt) = r.medians(Metric::Total);
    let (bc, nc) = r.medians(Metric::Calls);
    let p = r.p_value(Metric::SelfTime, ns > bs).map_or(String::new(), |p| format!("{p:.3}"));
    // With runs: each median with the range of its runs.
    let spread = |median: f64, new: bool| {
        let n = if new { r.new_runs().len() } else { r.base().len() };
        if n < 2 {
            return ms(median);
        }
        let (lo, hi) = r.range(Metric::SelfTime, new);
        format!("{} [{}..{}]", ms(median), ms(lo), ms(hi))
    };
    [
        d.threads[r.thread].label(),
        format!("{} -> {}", spread(bs, false), spread(ns, true)),
        signed_ms(ns - bs),
        percent(bs, ns),
        format!("{} -> {}", ms(bt), ms(nt)),
        format!("{bc} -> {nc}"),
        p,
        d.subject_label(r.subject),
    ]
}

pub(super) fn function_text(out: &mut String, h: &Header, d: &FuncDiff, top: usize) {
    let _ = writeln!(out, "BASE {}\nNEW  {}", h.base, h.new);
    if let Some(r) = h.range_line() {
        let _ = writeln!(out, "range {r}");
    }
    for t in &d.threads {
        let side = |s: Option<(i64, i64)>| s.map_or("-".to_owned(), |(p, t)| format!("{p}:{t}"));
        let _ = writeln!(out, "thread {}: BASE {} NEW {}", t.label(), side(t.base), side(t.new));
    }
    let runs = d.runs.0 > 1 || d.runs.1 > 1;
    let stat = if runs { "medians; p: one-sided Mann-Whitney on self time" } else { "one run each" };
    for (title, rows) in [("functions", &d.functions), ("call tree nodes", &d.call_nodes)] {
        let _ = writeln!(out, "\n{title}, largest self-time change first ({stat}):");
        let last = if title == "functions" { "function" } else { "path" };
        let head = ["thread", "self ms", "change", "%", "total ms", "calls", "p", last].map(str::to_owned);
        let cells: Vec<[String; 8]> =
            std::iter::once(head).chain(rows.iter().take(top).map(|r| row_cells(d, r))).collect();
        // Each column as wide as its widest cell; the thread left-aligned, the subject last.
        let mut w = [0usize; 8];
        for c in &cells {
            for (k, x) in c.iter().enumerate() {
                w[k] = w[k].max(x.chars().count());
            }
        }
        for c in &cells {
            let mut line = format!("  {:<w0$}", c[0], w0 = w[0]);
            for k in 1..7 {
                let _ = write!(line, " {:>wk$}", c[k], wk = w[k]);
            }
            let _ = writeln!(out, "{line}  {}", c[7]);
        }
        if rows.len() > top {
            let _ = writeln!(out, "  ... {} more (--top N, or --format json for all)", rows.len() - top);
        }
    }
}

pub(super) fn function_markdown(out: &mut String, h: &Header, d: &FuncDiff, top: usize) {
    let _ = writeln!(out, "### jscalls diff: functions\n\nBASE {} · NEW {}\n", md_code(&h.base), md_code(&h.new));
    if let Some(r) = h.range_line() {
        let _ = writeln!(out, "Range {}\n", md_cell(&r.replace("->", "→")));
    }
    let head = "| thread | self ms BASE → NEW | Δ | % | total ms BASE → NEW | calls | p | function |\n|---|---:|---:|---:|---:|---:|---:|---|";
    let row = |r: &Row| {
        let c = row_cells(d, r);
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            md_cell(&c[0]),
            c[1].replace("->", "→"),
            c[2],
            c[3],
            c[4].replace("->", "→"),
            c[5].replace("->", "→"),
            c[6],
            md_cell(&c[7])
        )
    };
    md_table(out, head, d.functions.iter(), top, |r: &&Row| row(r), "more functions");
}

/// The function-level `jscalls-diff/1` document, serialized as it is written: a diff of two
/// large recordings has hundreds of thousands of CallNodes, each with its path (the document
/// built whole took 20 times the memory of the comparison). Members in name order.
pub(super) fn function_json(w: &mut dyn Write, h: &Header, d: &FuncDiff) -> io::Result<()> {
    use serde::ser::{SerializeStruct, Serializer};

    struct Rows<'a>(&'a FuncDiff, &'a [Row]);
    impl serde::Serialize for Rows<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.1.iter().map(|r| RowJson(self.0, r)))
        }
    }
    struct RowJson<'a>(&'a FuncDiff, &'a Row);
    impl serde::Serialize for RowJson<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let (d, r) = (self.0, self.1);
            let (bs, ns) = r.medians(Metric::SelfTime);
            let (bt, nt) = r.medians(Metric::Total);
            let (bc, nc) = r.medians(Metric::Calls);
            let mut st = s.serialize_struct("Row", 7)?;
            st.serialize_field("base", &FiguresJson(funcs::Figures { self_time: bs, total: bt, calls: bc }))?;
            st.serialize_field("baseRuns", &FigureRuns(r.base()))?;
            if let Subject::Function(f) = r.subject {
                st.serialize_field("function", &FuncJson(&d.funcs[f as usize]))?;
            }
            st.serialize_field("new", &FiguresJson(funcs::Figures { self_time: ns, total: nt, calls: nc }))?;
            st.serialize_field("newRuns", &FigureRuns(r.new_runs()))?;
            st.serialize_field("pSelf", &r.p_value(Metric::SelfTime, ns > bs))?;
            if let Subject::Node(n) = r.subject {
                st.serialize_field("path", &PathJson(d, n))?;
            }
            st.serialize_field("thread", &d.threads[r.thread].label())?;
            st.end()
        }
    }
    struct FiguresJson(funcs::Figures);
    impl serde::Serialize for FiguresJson {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut st = s.serialize_struct("Figures", 3)?;
            st.serialize_field("calls", &self.0.calls)?;
            st.serialize_field("self", &self.0.self_time)?;
            st.serialize_field("total", &self.0.total)?;
            st.end()
        }
    }
    struct FigureRuns<'a>(&'a [funcs::Figures]);
    impl serde::Serialize for FigureRuns<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(|&f| FiguresJson(f)))
        }
    }
    struct FuncJson<'a>(&'a funcs::FuncKey);
    impl serde::Serialize for FuncJson<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut st = s.serialize_struct("Function", 4)?;
            st.serialize_field("column", &self.0.column)?;
            st.serialize_field("line", &self.0.line)?;
            st.serialize_field("name", &self.0.name)?;
            st.serialize_field("url", &self.0.url)?;
            st.end()
        }
    }
    struct PathJson<'a>(&'a FuncDiff, u32);
    impl serde::Serialize for PathJson<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.path(self.1).iter().map(|&f| self.0.funcs[f as usize].label()))
        }
    }
    struct Threads<'a>(&'a FuncDiff);
    impl serde::Serialize for Threads<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.threads.iter().map(|t| {
                serde_json::json!({
                    "name": t.label(), "base": t.base.map(|(p, t)| [p, t]), "new": t.new.map(|(p, t)| [p, t]),
                })
            }))
        }
    }

    let mut w = io::BufWriter::with_capacity(1 << 16, w);
    let mut ser = serde_json::Serializer::pretty(&mut w);
    let mut st = ser.serialize_struct("Diff", 8).map_err(io::Error::from)?;
    let doc = || -> Result<(), serde_json::Error> {
        st.serialize_field("base", &h.base)?;
        st.serialize_field("callNodes", &Rows(d, &d.call_nodes))?;
        st.serialize_field("format", "jscalls-diff/1")?;
        st.serialize_field("functions", &Rows(d, &d.functions))?;
        st.serialize_field("level", "functions")?;
        st.serialize_field("new", &h.new)?;
        if let Some((what, b, n)) = &h.range {
            st.serialize_field("range", &serde_json::json!({"option": what, "base": b, "new": n, "unit": "us"}))?;
        }
        st.serialize_field("runs", &[d.runs.0, d.runs.1])?;
        st.serialize_field("threads", &Threads(d))?;
        SerializeStruct::end(st)
    };
    doc().map_err(io::Error::from)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// The verdict of `--fail-on`, after the report (on stderr for JSON, which stays one document).
pub(super) fn gate_report(out: &mut String, format: DiffFormat, rules: &[Rule], v: &[Violation], d: &FuncDiff) {
    if rules.is_empty() {
        return;
    }
    let mut s = String::new();
    if v.is_empty() {
        let _ = writeln!(s, "fail-on: no regression ({} rule{})", rules.len(), if rules.len() == 1 { "" } else { "s" });
    } else {
        let _ = writeln!(s, "fail-on: {} regression{}:", v.len(), if v.len() == 1 { "" } else { "s" });
        for x in v {
            let row = if x.node { &d.call_nodes[x.row] } else { &d.functions[x.row] };
            let r = &rules[x.rule];
            let metric = r.metric;
            let fmt = |x: f64| if metric == Metric::Calls { format!("{x}") } else { format!("{} ms", ms(x)) };
            let p = x.p.map_or(String::new(), |p| format!(", p = {p:.3}"));
            let _ = writeln!(
                s,
                "  {}: {} {} -> {} ({}{p})  [{}] {}",
                r.text,
                metric.as_str(),
                fmt(x.base),
                fmt(x.new),
                percent(x.base, x.new),
                d.threads[row.thread].label(),
                d.subject_label(row.subject)
            );
        }
    }
    match format {
        DiffFormat::Svg | DiffFormat::Pprof => unreachable!("--fail-on with --format svg is refused before"),
        DiffFormat::Json => {
            let _ = io::stderr().write_all(s.as_bytes());
        }
        DiffFormat::Markdown => {
            let _ = write!(out, "\n**{}**\n```\n{}```\n", if v.is_empty() { "Passed" } else { "Regression" }, s);
        }
        DiffFormat::Text => {
            out.push('\n');
            out.push_str(&s);
        }
    }
}
