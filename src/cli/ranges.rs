//! `jscalls ranges`: the measures, marks, `console.time` spans and interactions of each input
//! (and the events of one name), each with the option that picks it.

use std::fmt::Write as _;

use jscalls::ranges::{Kind, Landmark, Timings};
use jscalls::tree::{write_json_number, write_json_str};
use jscalls::{Config, Error};

use super::args::{Global, RangesArgs, RangesFormat};
use super::each::{self, Estimated, PerInput};
use super::files::Reads;
use super::output::Output;
use super::report::{failure, printable};
use super::Failed;

struct Ranges<'a>(&'a RangesArgs);

impl PerInput for Ranges<'_> {
    fn suffix(&self) -> &'static str {
        match self.0.format {
            RangesFormat::Text => ".ranges.txt",
            RangesFormat::Json => ".ranges.json",
        }
    }

    fn shares_stdout(&self) -> bool {
        self.0.format == RangesFormat::Text
    }

    /// The trace's bounds (times are shown from its start) are found with the names.
    fn keeps_event_names(&self) -> bool {
        true
    }

    fn applies_source_maps(&self) -> bool {
        false
    }

    fn range_event_names(&self) -> Vec<String> {
        self.0.event.iter().cloned().collect()
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, label, name, .. } = e;
        let (t, bounds) = (assembled.timings(), assembled.trace_bounds());
        let event = self.0.event.as_deref();
        let text = match self.0.format {
            RangesFormat::Text => text(t, bounds.0, event),
            RangesFormat::Json => json(t, bounds, label, event),
        };
        output
            .write(|w| w.write_all(text.as_bytes()).map_err(|err| Error::io("cannot write the ranges", err)))
            .map_err(|err| failure(name, err))
    }
}

pub(crate) fn run(args: &RangesArgs, global: &Global, cfg: &Config, reads: Reads) -> Result<(), Failed> {
    super::no_bounds(global, "ranges")?;
    each::run(&args.out, &Ranges(args), global, cfg, reads)
}

fn text(t: &Timings, start: f64, event: Option<&str>) -> String {
    let mut out = String::new();
    let at = |us: f64| format!("+{}", ms(us - start)).replace("+-", "-");
    let measures = Timings::indexed(t.measures());
    let _ = writeln!(out, "{} measure(s): --measure NAME[#K]", measures.len());
    for (k, l) in &measures {
        let kind = if l.kind == Kind::ConsoleTime { "  console.time" } else { "" };
        let _ =
            writeln!(out, "  {:<32} {:>12} at {}{kind}", format!("{}#{k}", printable(&l.name)), ms(l.dur), at(l.ts));
    }
    let marks = Timings::indexed(t.of(Kind::Mark));
    let _ = writeln!(out, "{} mark(s): --between MARK[#K]..MARK[#K]", marks.len());
    for (k, l) in &marks {
        let _ = writeln!(out, "  {:<32} at {}", format!("{}#{k}", printable(&l.name)), at(l.ts));
    }
    let inter = t.interactions();
    let slowest = inter.iter().enumerate().fold(0, |a, (i, l)| if l.dur > inter[a].dur { i } else { a });
    let _ = writeln!(out, "{} interaction(s): --interaction K, or --interaction slowest", inter.len());
    for (k, l) in inter.iter().enumerate() {
        let tag = if k == slowest { "  slowest" } else { "" };
        let id = l.interaction_id.map_or_else(String::new, |i| format!("id={i}"));
        let what = printable(l.event_type.as_deref().unwrap_or("?")).into_owned();
        let _ = writeln!(out, "  {k:<4} {what:<14} {id:<12} {:>12} at {}{tag}", ms(l.dur), at(l.ts));
    }
    if let Some(name) = event {
        let c = t.devtools_candidates(name).unwrap_or_default();
        let _ = writeln!(out, "{} event(s) named {}: --event {}#K", c.len(), printable(name), printable(name));
        for (k, l) in c.iter().enumerate() {
            let kind = if l.kind == Kind::Complete { "complete" } else { "async pair" };
            let _ = writeln!(out, "  #{k:<4} {kind:<10} {}:{} {:>12} at {}", l.pid, l.tid, ms(l.dur), at(l.ts));
        }
    }
    out
}

/// One landmark's JSON object (times in µs on the trace's clock, and the window in ms).
fn landmark(s: &mut String, k: usize, l: &Landmark) {
    s.push_str("{\"name\":");
    write_json_str(s, &l.name);
    let _ = write!(s, ",\"index\":{k},\"kind\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":", l.kind.name(), l.pid, l.tid);
    write_json_number(s, l.ts);
    s.push_str(",\"dur\":");
    write_json_number(s, l.dur);
    s.push_str(",\"startTime\":");
    write_json_number(s, l.ts / 1000.0);
    s.push_str(",\"endTime\":");
    write_json_number(s, l.end() / 1000.0);
    if let Some(t) = &l.event_type {
        s.push_str(",\"type\":");
        write_json_str(s, t);
    }
    if let Some(id) = l.interaction_id {
        s.push_str(",\"interactionId\":");
        write_json_number(s, id);
    }
    s.push('}');
}

fn json(t: &Timings, bounds: (f64, f64), label: &str, event: Option<&str>) -> String {
    let mut s = String::from("{\"format\":\"jscalls-ranges/1\",\"input\":");
    write_json_str(&mut s, label);
    s.push_str(",\"traceBounds\":{\"min\":");
    write_json_number(&mut s, bounds.0);
    s.push_str(",\"max\":");
    write_json_number(&mut s, bounds.1);
    s.push('}');
    let list = |s: &mut String, key: &str, items: Vec<(usize, &Landmark)>| {
        let _ = write!(s, ",\n\"{key}\":[");
        for (i, (k, l)) in items.iter().enumerate() {
            s.push_str(if i == 0 { "\n" } else { ",\n" });
            landmark(s, *k, l);
        }
        s.push(']');
    };
    list(&mut s, "measures", Timings::indexed(t.measures()));
    list(&mut s, "marks", Timings::indexed(t.of(Kind::Mark)));
    list(&mut s, "interactions", t.interactions().into_iter().enumerate().collect());
    if let Some(name) = event {
        list(&mut s, "events", t.devtools_candidates(name).unwrap_or_default().into_iter().enumerate().collect());
    }
    s.push_str("}\n");
    s
}

/// A time in ms for people: `12.345 ms`, `4.7 ms`.
fn ms(us: f64) -> String {
    let s = format!("{:.3}", us / 1000.0);
    format!("{} ms", s.trim_end_matches('0').trim_end_matches('.'))
}
