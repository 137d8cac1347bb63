//! The calls summary a person reads on a terminal: per thread, its calls, their JS time and the
//! functions that took the most self time.

use std::borrow::Cow;
use std::fmt::Write as _;

use jscalls::{Call, Thread};
use rustc_hash::FxHashMap;

/// Functions listed per thread.
const TOP: usize = 10;

/// A function as a person names it: name, url, line and column (0-based, as V8 gives them).
/// The strings borrow the profile's: a thread's calls are grouped without copying any.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Function<'a> {
    name: Cow<'a, str>,
    url: Cow<'a, str>,
    line: i64,
    column: i64,
}

impl<'a> Function<'a> {
    fn of(call: Call<'a>) -> Function<'a> {
        let f = call.frame();
        let name = f.function_name();
        Function {
            name: if name.is_empty() { Cow::Borrowed("(anonymous)") } else { name },
            url: f.url(),
            line: f.line().unwrap_or(-1),
            column: f.column().unwrap_or(-1),
        }
    }

    /// `url:line:column`, 1-based as editors count, or nothing for a function without a script.
    fn location(&self) -> String {
        if self.url.is_empty() {
            return String::new();
        }
        match (self.line, self.column) {
            (l, c) if l >= 0 && c >= 0 => format!("{}:{}:{}", self.url, l + 1, c + 1),
            (l, _) if l >= 0 => format!("{}:{}", self.url, l + 1),
            _ => self.url.clone().into_owned(),
        }
    }
}

/// One thread's part of the summary.
pub fn thread(out: &mut String, th: Thread<'_>) {
    let name = th.name().unwrap_or("(unnamed thread)");
    let _ = write!(out, "  pid {} tid {} {name}: ", th.pid(), th.tid());
    if th.is_empty() {
        let why = th.skipped().unwrap_or("no JS ran while it was sampled");
        let _ = writeln!(out, "no calls ({why})");
        return;
    }
    // Self times add up to the time under the thread's outermost calls (without the trace
    // events nested in them): the JS time.
    let mut by_function: FxHashMap<Function, (f64, u64)> = FxHashMap::default();
    let mut js = 0.0;
    for call in th.calls() {
        let s = call.self_time().unwrap_or(0.0);
        js += s;
        let e = by_function.entry(Function::of(call)).or_default();
        e.0 += s;
        e.1 += 1;
    }
    let _ = writeln!(out, "{} calls, {} of JS", group(th.len() as u64), ms(js));
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
    let mut top: Vec<(Function, (f64, u64))> = by_function.into_iter().collect();
    // Biggest first; ties by name, so that the order never depends on a hash.
    top.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
    let _ = writeln!(out, "    {:>10}  {:>6}  {:>7}  function", "self", "", "calls");
    for (f, (s, n)) in top.iter().take(TOP) {
        let pct = if js > 0.0 { 100.0 * s / js } else { 0.0 };
        let line = format!("    {:>10}  {:>5.1}%  {:>7}  {}  {}", ms(*s), pct, group(*n), f.name, f.location());
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
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
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
        let f = |url: &'static str, line, column| Function { name: "f".into(), url: url.into(), line, column };
        assert_eq!(f("a.js", 0, 0).location(), "a.js:1:1");
        assert_eq!(f("a.js", 9, -1).location(), "a.js:10");
        assert_eq!(f("a.js", -1, -1).location(), "a.js");
        assert_eq!(f("", 3, 4).location(), "");
    }
}
