//! The calls summary a person reads on a terminal: per thread, its calls, the time in them (functions,
//! and the trace events inside calls) and the functions that took the most self time.

use std::fmt::Write as _;

use super::report::printable;
use jscalls::ranges::{Landmark, Timings};
use jscalls::tree::{Func, Stacks};
use jscalls::Thread;

/// Functions listed per thread.
const TOP: usize = 10;

/// Where a function is, for a person: `url:line:column`, 1-based as editors count; nothing for
/// a function without a script; what a trace event is.
fn location(f: &Func) -> String {
    if f.is_event() {
        return "(trace event inside a call)".to_owned();
    }
    if f.url.is_empty() {
        return String::new();
    }
    match (f.line, f.column) {
        (Some(l), Some(c)) if l >= 0 && c >= 0 => format!("{}:{}:{}", f.url, l + 1, c + 1),
        (Some(l), _) if l >= 0 => format!("{}:{}", f.url, l + 1),
        _ => f.url.clone(),
    }
}

/// One thread's part of the summary.
pub(crate) fn thread(out: &mut String, th: Thread<'_>) {
    let name = printable(th.name().unwrap_or("(unnamed thread)"));
    let _ = write!(out, "  pid {} tid {} {name}: ", th.pid(), th.tid());
    if th.is_empty() {
        // The calls output keeps the reference engine's words; a person gets what they mean.
        let why = match th.skipped() {
            Some(w) if w.starts_with("process dropped") => {
                "DevTools shows none for this process: it has no page URL (not a renderer, or about:blank)"
            }
            Some(w) if w.starts_with("thread has no trace entries") => {
                "DevTools 0.0.65 gives none to a thread without trace events; --engine latest does"
            }
            Some(w) => w,
            None => "no JS ran while it was sampled",
        };
        let _ = writeln!(out, "no calls ({why})");
        return;
    }
    // Self time as `tree`, `check`, `diff` and the exports give it (DevTools' flame chart):
    // a trace event inside a call (a forced layout, a GC) is not the JS function's.
    let stacks = Stacks::from_calls(&th);
    let mut by_func = vec![(0.0f64, 0u64); stacks.funcs.len()];
    for &(stack, w) in &stacks.samples {
        let f = &mut by_func[(stacks.frame(stack).1).index()];
        f.0 += w;
        f.1 += 1;
    }
    let total: f64 = by_func.iter().map(|f| f.0).sum();
    let events: f64 = stacks.funcs.iter().zip(&by_func).filter(|(f, _)| f.is_event()).map(|(_, w)| w.0).sum();
    // "Functions", not "JS": a call may be of a native function (appendChild, libc's poll).
    let _ = write!(out, "{} calls, {}", group(th.len() as u64), ms(total));
    if events > 0.0 {
        let _ = write!(out, ": {} self in functions, {} in trace events inside calls", ms(total - events), ms(events));
    }
    out.push('\n');
    if let Some(m) = th.sampler() {
        // Unmeasured, the neighbouring ticks bound a capture.
        let late = m.lag_bound.map_or("until the next tick".to_owned(), |v| format!("{v:.0} µs late"));
        let early = m.stamp_delay.map_or("from the tick before".to_owned(), |v| format!("{v:.0} µs early"));
        let _ = write!(
            out,
            "    sampler: {:.0} µs interval, stacks captured {:.0} µs late on average (bounds allow a capture {late}, {early}; {} boundaries, {} synchronous samples)",
            m.interval,
            m.lag_mean,
            group(u64::from(m.boundaries)),
            group(u64::from(m.sync_samples))
        );
        match m.single_sample_calls {
            Some(n) => {
                let _ = writeln!(out, "; {} calls seen by one sample only", group(u64::from(n)));
            }
            None => out.push('\n'),
        }
    }
    let mut top: Vec<(&Func, (f64, u64))> = stacks.funcs.iter().zip(by_func).filter(|f| f.1 .1 > 0).collect();
    // Biggest first; ties by function, so that the order never depends on a hash.
    top.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then_with(|| a.0.cmp(b.0)));
    let _ = writeln!(out, "    {:>10}  {:>6}  {:>7}  function", "self", "", "calls");
    for (f, (s, n)) in top.iter().take(TOP) {
        let pct = if total > 0.0 { 100.0 * s / total } else { 0.0 };
        let name = if f.name.is_empty() { "(anonymous)" } else { &f.name };
        let line = format!(
            "    {:>10}  {:>5.1}%  {:>7}  {}  {}",
            ms(*s),
            pct,
            group(*n),
            printable(name),
            printable(&location(f))
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if top.len() > TOP {
        let _ = writeln!(out, "    … {} more functions", group((top.len() - TOP) as u64));
    }
}

/// Microseconds as milliseconds, for a person.
fn ms(us: f64) -> String {
    format!("{:.1} ms", us / 1000.0)
}

/// An integer with thousands separated by commas.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The measures and interactions a range can be taken from (the options that pick them), at
/// most [`TOP`] of each, in time order; `start` is the recording's start (µs).
pub(crate) fn timings(out: &mut String, t: &Timings, start: f64) {
    let at = |us: f64| format!("+{}", ms(us - start)).replace("+-", "-");
    let measures: Vec<&Landmark> = t.measures().collect();
    if !measures.is_empty() {
        let _ = writeln!(out, "  {} measure(s) (--measure NAME[#K]):", measures.len());
        for (k, l) in Timings::indexed(measures.iter().copied()).into_iter().take(TOP) {
            let name = if k == 0 { printable(&l.name).into_owned() } else { format!("{}#{k}", printable(&l.name)) };
            let _ = writeln!(out, "    {name:<28} {:>12} at {}", ms(l.dur), at(l.ts));
        }
        if measures.len() > TOP {
            let _ = writeln!(out, "    ... {} more (jscalls ranges lists them all)", measures.len() - TOP);
        }
    }
    let inter = t.interactions();
    if !inter.is_empty() {
        let slowest = inter.iter().enumerate().fold(0, |a, (i, l)| if l.dur > inter[a].dur { i } else { a });
        let _ = writeln!(out, "  {} interaction(s) (--interaction K, or slowest):", inter.len());
        for (k, l) in inter.iter().enumerate().take(TOP) {
            let what = l.event_type.as_deref().unwrap_or("?");
            let tag = if k == slowest { "  slowest" } else { "" };
            let _ = writeln!(out, "    {k:<3} {:<24} {:>12} at {}{tag}", printable(what), ms(l.dur), at(l.ts));
        }
        if inter.len() > TOP {
            let _ = writeln!(out, "    ... {} more (jscalls ranges lists them all)", inter.len() - TOP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1_000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
    }

    #[test]
    fn locations_are_one_based() {
        let f = |url: &str, line, column| {
            location(&Func::of_frame("f".into(), url.into(), "1".into(), Some(line), Some(column)))
        };
        assert_eq!(f("a.js", 0, 0), "a.js:1:1");
        assert_eq!(f("a.js", 9, -1), "a.js:10");
        assert_eq!(f("a.js", -1, -1), "a.js");
        assert_eq!(f("", 3, 4), "");
        assert_eq!(location(&Func::event("Layout")), "(trace event inside a call)");
    }
}
