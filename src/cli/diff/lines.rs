//! `jscalls diff --level lines`: two recordings line by line, with the times DevTools' Sources
//! panel shows (`jscalls lines`), to see which line got slower.

use std::fmt::Write as _;

use jscalls::diff::funcs::FuncKey;
use jscalls::lines::{LineTimes, ProfileLines};
use rustc_hash::FxHashMap;

use super::{ms, percent, signed_ms, write_out, Header, Side};
use crate::cli::args::{DiffArgs, DiffFormat, Global};
use crate::cli::report::{assemble_file, md_cell, md_code};
use crate::cli::Failed;
use jscalls::ranges::{Query, Timings};
use jscalls::Config;

/// One line of a script on a pair of threads.
struct LineChange {
    /// The script, without scheme and host (ports and script ids differ between recordings).
    url: String,
    line: f64,
    function: String,
    base: f64,
    new: f64,
}

/// A pair of threads: by name, the busiest with the busiest.
struct Pair {
    name: String,
    base: Option<(i64, i64)>,
    new: Option<(i64, i64)>,
    lines: Vec<LineChange>,
    /// Each line's place in `lines`, by (script, line's bits).
    index: FxHashMap<(String, u64), usize>,
}

/// Line times of one side (the input read again with its line data).
fn line_times(side: &Side, global: &Global, cfg: &Config, range: Option<&Query>) -> Result<(LineTimes, f64), Failed> {
    let mut cfg = cfg.clone();
    cfg.keep_lines = true;
    if let Some(q) = range {
        cfg.keep_event_names = true;
        cfg.range_event_names = Timings::names_for(&[q]);
    }
    let a = assemble_file(&side.path, &side.name, global, &cfg)?;
    // At the original lines once source maps applied: a rebuild moves the generated ones.
    match range {
        Some(q) => {
            let w = crate::cli::range::resolve(q, &a, &side.name)?;
            Ok((a.line_times_in(true, false, (w.min_us, w.max_us)), w.max_us - w.min_us))
        }
        None => Ok((a.original_line_times(), f64::NAN)),
    }
}

/// The threads with line times, each with its rank among the threads of its name (busiest 0).
fn ranked(t: &LineTimes) -> Vec<(&ProfileLines, String, usize)> {
    let mut v: Vec<&ProfileLines> = t.profiles.iter().filter(|p| !p.rows.is_empty()).collect();
    let name = |p: &ProfileLines| p.thread_name.clone().unwrap_or_else(|| "thread".to_owned());
    v.sort_by(|a, b| {
        name(a).cmp(&name(b)).then(b.sum_ms.total_cmp(&a.sum_ms)).then((a.pid, a.tid).cmp(&(b.pid, b.tid)))
    });
    let mut out: Vec<(&ProfileLines, String, usize)> = Vec::with_capacity(v.len());
    for p in v {
        let n = name(p);
        let rank = out.last().filter(|l| l.1 == n).map_or(0, |l| l.2 + 1);
        out.push((p, n, rank));
    }
    out
}

fn pairs(base: &LineTimes, new: &LineTimes) -> Vec<Pair> {
    let (b, n) = (ranked(base), ranked(new));
    // One thread on each side (a .cpuprofile against a trace of one program): one pair.
    let one = b.len() <= 1 && n.len() <= 1;
    let mut out: Vec<Pair> = Vec::new();
    let mut keys: Vec<(String, usize)> = Vec::new();
    for (side, list) in [(false, &b), (true, &n)] {
        for (p, name, rank) in list.iter() {
            let key = if one { (String::new(), 0) } else { (name.clone(), *rank) };
            let k = match keys.iter().position(|x| *x == key) {
                Some(k) => k,
                None => {
                    keys.push(key);
                    let label = if *rank == 0 { name.clone() } else { format!("{name} #{}", rank + 1) };
                    out.push(Pair {
                        name: label,
                        base: None,
                        new: None,
                        lines: Vec::new(),
                        index: FxHashMap::default(),
                    });
                    out.len() - 1
                }
            };
            let pair = &mut out[k];
            if side {
                pair.new = Some((p.pid, p.tid));
            } else {
                pair.base = Some((p.pid, p.tid));
            }
            for r in &p.rows {
                let url = FuncKey::script_path(&r.url).to_owned();
                // Found by a map: a recording has thousands of lines.
                let next = pair.lines.len();
                let i = *pair.index.entry((url.clone(), r.line.to_bits())).or_insert(next);
                if i == next {
                    pair.lines.push(LineChange { url, line: r.line, function: String::new(), base: 0.0, new: 0.0 });
                }
                let l = &mut pair.lines[i];
                // Two scripts of one path (told apart by id alone) are one script here.
                if side {
                    l.new += r.ms;
                } else {
                    l.base += r.ms;
                }
                if l.function.is_empty() || side {
                    l.function = r.function.clone();
                }
            }
        }
    }
    for p in &mut out {
        p.lines.sort_by(|a, b| {
            (b.new - b.base)
                .abs()
                .total_cmp(&(a.new - a.base).abs())
                .then(a.url.cmp(&b.url))
                .then(a.line.total_cmp(&b.line))
        });
    }
    out
}

fn function(l: &LineChange) -> &str {
    if l.function.is_empty() {
        "(anonymous)"
    } else {
        &l.function
    }
}

fn place(l: &LineChange) -> String {
    let mut s = format!("{}:", if l.url.is_empty() { "(no url)" } else { &l.url });
    jscalls::tree::write_json_number(&mut s, l.line);
    s
}

/// The report of `diff BASE NEW --level lines`.
pub(super) fn line_level(
    args: &DiffArgs,
    global: &Global,
    cfg: &Config,
    header: &Header,
    sides: (&Side, &Side),
) -> Result<(), Failed> {
    let range = args.range.query();
    let (base, lb) = line_times(sides.0, global, cfg, range)?;
    let (new, ln) = line_times(sides.1, global, cfg, range)?;
    let header =
        &Header { base: header.base.clone(), new: header.new.clone(), range: range.map(|q| (q.as_option(), lb, ln)) };
    let pairs = pairs(&base, &new);
    let mut out = String::new();
    match args.format {
        DiffFormat::Text => {
            let _ = writeln!(out, "BASE {}\nNEW  {}", header.base, header.new);
            if let Some(r) = header.range_line() {
                let _ = writeln!(out, "range {r}");
            }
            for p in &pairs {
                let _ =
                    writeln!(out, "\nthread {}: lines, largest change first:", crate::cli::report::printable(&p.name));
                let _ = writeln!(out, "  {:>10} {:>10} {:>10} {:>8}  line", "BASE ms", "NEW ms", "change", "%");
                for l in p.lines.iter().take(args.top) {
                    let _ = writeln!(
                        out,
                        "  {:>10} {:>10} {:>10} {:>8}  {}  {}",
                        ms(l.base * 1000.0),
                        ms(l.new * 1000.0),
                        signed_ms((l.new - l.base) * 1000.0),
                        percent(l.base, l.new),
                        crate::cli::report::printable(&place(l)),
                        crate::cli::report::printable(function(l))
                    );
                }
                if p.lines.len() > args.top {
                    let _ =
                        writeln!(out, "  ... {} more (--top N, or --format json for all)", p.lines.len() - args.top);
                }
            }
        }
        DiffFormat::Markdown => {
            let _ = writeln!(
                out,
                "### jscalls diff: lines\n\nBASE {} · NEW {}",
                md_code(&header.base),
                md_code(&header.new)
            );
            if let Some(r) = header.range_line() {
                let _ = writeln!(out, "\nRange {}", md_cell(&r.replace("->", "→")));
            }
            for p in &pairs {
                let _ = writeln!(
                    out,
                    "\n**{}**, largest changes first:\n\n| ms BASE → NEW | Δ | % | line | function |\n|---:|---:|---:|---|---|",
                    md_cell(&p.name)
                );
                for l in p.lines.iter().take(args.top) {
                    let _ = writeln!(
                        out,
                        "| {} → {} | {} | {} | {} | {} |",
                        ms(l.base * 1000.0),
                        ms(l.new * 1000.0),
                        signed_ms((l.new - l.base) * 1000.0),
                        percent(l.base, l.new),
                        md_code(&place(l)),
                        md_cell(function(l))
                    );
                }
            }
        }
        DiffFormat::Svg | DiffFormat::Pprof => unreachable!("--level lines with --format svg is refused before"),
        DiffFormat::Json => {
            let js = |out: &mut String, s: &str| jscalls::tree::write_json_str(out, s);
            out.push_str("{\"format\":\"jscalls-diff/1\",\"level\":\"lines\",\"units\":\"ms\",\"base\":");
            js(&mut out, &header.base);
            out.push_str(",\"new\":");
            js(&mut out, &header.new);
            if let Some((what, b, n)) = &header.range {
                // Lengths in ms, as the document's times are.
                out.push_str(",\"range\":{\"option\":");
                js(&mut out, what);
                let _ = write!(out, ",\"base\":{},\"new\":{}}}", b / 1000.0, n / 1000.0);
            }
            out.push_str(",\"threads\":[");
            for (i, p) in pairs.iter().enumerate() {
                out.push_str(if i > 0 { ",\n" } else { "\n" });
                out.push_str("{\"name\":");
                js(&mut out, &p.name);
                let ids = |x: Option<(i64, i64)>| x.map_or("null".to_owned(), |(p, t)| format!("[{p},{t}]"));
                let _ = write!(out, ",\"base\":{},\"new\":{},\"lines\":[", ids(p.base), ids(p.new));
                for (k, l) in p.lines.iter().enumerate() {
                    out.push_str(if k > 0 { ",\n  " } else { "\n  " });
                    out.push_str("{\"url\":");
                    js(&mut out, &l.url);
                    out.push_str(",\"line\":");
                    jscalls::tree::write_json_number(&mut out, l.line);
                    out.push_str(",\"function\":");
                    js(&mut out, &l.function);
                    out.push_str(",\"base\":");
                    jscalls::tree::write_json_number(&mut out, l.base);
                    out.push_str(",\"new\":");
                    jscalls::tree::write_json_number(&mut out, l.new);
                    out.push('}');
                }
                out.push_str("]}");
            }
            out.push_str("\n]}\n");
        }
    }
    write_out(args, &out)
}
