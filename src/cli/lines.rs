//! `jscalls lines`: time per line of source, as DevTools' Sources panel shows it: a text view
//! (the hottest lines of each thread, with their function), `jscalls-lines/1` JSON, or the
//! DevTools oracle's own `devtools-lines/1` document.

use std::fmt::Write as _;

use jscalls::lines::{LinePath, LineRow, LineTimes, ProfileLines, ScriptKey};
use jscalls::ranges::Query;
use jscalls::Error;

use super::args::{Global, LinesArgs, LinesFormat};
use super::each::{self, Estimated, PerInput};
use super::files::Reads;
use super::output::same_file;
use super::output::Output;
use super::report::failure;
use super::sources::{read_lines, SourceDirs};
use super::tree::ThreadSpec;
use super::Failed;
use jscalls::Config;

struct Lines<'a> {
    args: &'a LinesArgs,
    /// `--thread`.
    wanted: Option<ThreadSpec>,
    /// `--source`.
    dirs: Option<SourceDirs>,
    quiet: bool,
}

impl Lines<'_> {
    /// The text view lists the hottest functions' sources (`--list`, or `--source DIR`).
    fn listing(&self) -> bool {
        self.args.format == LinesFormat::Text && (self.args.list || self.dirs.is_some())
    }
}

impl PerInput for Lines<'_> {
    fn suffix(&self) -> &'static str {
        match self.args.format {
            LinesFormat::Text => ".lines.txt",
            LinesFormat::Json => ".lines.json",
            LinesFormat::Devtools => ".devtools-lines.json",
        }
    }

    fn shares_stdout(&self) -> bool {
        true
    }

    fn keeps_lines(&self) -> bool {
        true
    }

    fn shows_sources(&self) -> bool {
        self.listing()
    }

    fn keeps_script_texts(&self) -> bool {
        self.listing()
    }

    fn applies_source_maps(&self) -> bool {
        // DevTools' own sums (`--format devtools`) are the generated scripts'.
        self.args.format != LinesFormat::Devtools
    }

    fn range(&self) -> Option<&Query> {
        self.args.range.query()
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, label, name, range, .. } = e;
        let args = self.args;
        let times = if self.args.format == LinesFormat::Devtools {
            assembled.line_times()
        } else {
            // At the original lines once maps applied (the frames' maps said as they applied).
            let times = match &range {
                Some(w) => assembled.line_times_in(true, args.columns, (w.min_us, w.max_us)),
                None => assembled.line_times_of(true, args.columns),
            };
            if let (Some(w), false) = (&range, self.quiet) {
                let ticks = times.profiles.iter().filter(|p| p.path == LinePath::PositionTicks).count();
                if ticks > 0 {
                    say!(
                        "jscalls: warning: {name}: {ticks} profile(s) have positionTicks only, which carry no times: none of their lines is in {} {}",
                        w.option,
                        w.arg
                    );
                }
            }
            let (mapped, without) =
                times.profiles.iter().fold((0, 0), |(m, w), p| (m + p.mapped, w + p.mapped_without_column));
            if mapped > 0 && !self.quiet {
                let added: u64 = times.profiles.iter().map(|p| p.added).sum();
                let without = match without {
                    0 => String::new(),
                    n => format!(" ({n} without a column, from their line's start)"),
                };
                say!("jscalls: {name}: source maps: {mapped} of {added} line samples at their original place{without}");
            }
            times
        };
        let wanted = self.wanted.as_ref();
        if let (Some(w), Some(t)) = (wanted, &args.thread) {
            if !times.profiles.iter().any(|p| w.matches(p.pid, p.tid, p.thread_name.as_deref())) {
                let have: Vec<String> = times
                    .profiles
                    .iter()
                    .map(|p| format!("{}:{} {}", p.pid, p.tid, p.thread_name.as_deref().unwrap_or("(unnamed)")))
                    .collect();
                return Err(Failed::Usage(format!("--thread {t}: {name} has no such thread ({})", have.join(", "))));
            }
        }
        let text = match (args.format, &self.dirs) {
            (LinesFormat::Devtools, _) => times.devtools_document(label, assembled.kind()),
            (LinesFormat::Json, _) => json(&times, label, wanted),
            (LinesFormat::Text, dirs) if self.listing() => {
                let text_of = |url: &str| assembled.source_text(url).map(|t| t.lines().map(str::to_owned).collect());
                listing(&times, args.top.unwrap_or(3), wanted, dirs.as_ref(), &text_of, output.target())?
            }
            (LinesFormat::Text, _) => text(&times, args.top.unwrap_or(20), wanted),
        };
        // Only the text views can come out empty (the documents always have their frame).
        let text = if text.is_empty() { no_lines(assembled.kind()) } else { text };
        output
            .write(|w| w.write_all(text.as_bytes()).map_err(|err| Error::io("cannot write the line times", err)))
            .map_err(|err| failure(name, err))
    }
}

pub(crate) fn run(args: &LinesArgs, global: &Global, cfg: &Config, reads: Reads) -> Result<(), Failed> {
    super::no_bounds(global, "lines")?;
    if args.format != LinesFormat::Text && !args.sources.is_empty() {
        return Err(Failed::Usage("--source lists sources in the text view: it takes no --format".to_owned()));
    }
    if args.columns && (args.format == LinesFormat::Devtools || !args.sources.is_empty()) {
        return Err(Failed::Usage(
            "--columns keys the text and JSON views by column; DevTools' document and the --source listing are by line"
                .to_owned(),
        ));
    }
    if let (LinesFormat::Devtools, Some(q)) = (args.format, args.range.query()) {
        return Err(Failed::Usage(format!(
            "{}: DevTools' Sources panel sums the whole recording; a range is for the text and JSON views",
            q.flag()
        )));
    }
    if args.format == LinesFormat::Devtools && args.thread.is_some() {
        return Err(Failed::Usage(
            "--thread picks threads of jscalls' own views; --format devtools writes every profile, as DevTools sums them"
                .to_owned(),
        ));
    }
    let wanted = args.thread.as_deref().map(ThreadSpec::parse).transpose().map_err(Failed::Usage)?;
    let dirs = (!args.sources.is_empty())
        .then(|| SourceDirs::new(&args.sources, "--source"))
        .transpose()
        .map_err(Failed::Usage)?;
    each::run(&args.out, &Lines { args, wanted, dirs, quiet: global.quiet }, global, cfg, reads)
}

fn push_num(out: &mut String, n: f64) {
    jscalls::tree::write_json_number(out, n);
}

fn push_str(out: &mut String, s: &str) {
    jscalls::tree::write_json_str(out, s);
}

/// Rows by time, most first; then by script and line.
fn by_time(rows: &[LineRow]) -> Vec<&LineRow> {
    let mut v: Vec<&LineRow> = rows.iter().collect();
    v.sort_by(|a, b| b.ms.total_cmp(&a.ms).then(a.key.cmp_js(&b.key)).then(a.line.total_cmp(&b.line)));
    v
}

fn shown(p: &ProfileLines, wanted: Option<&ThreadSpec>) -> bool {
    wanted.is_none_or(|w| w.matches(p.pid, p.tid, p.thread_name.as_deref()))
}

/// `jscalls-lines/1`: per thread its lines, most time first, and the sums of every thread.
fn json(t: &LineTimes, label: &str, wanted: Option<&ThreadSpec>) -> String {
    let row = |out: &mut String, r: &LineRow| {
        out.push_str("{\"url\":");
        push_str(out, &r.url);
        out.push_str(",\"scriptId\":");
        match &r.key {
            ScriptKey::Id(n) => push_num(out, *n),
            ScriptKey::Url(_) => out.push_str("null"),
        }
        out.push_str(",\"line\":");
        push_num(out, r.line);
        if let Some(c) = r.column {
            out.push_str(",\"column\":");
            push_num(out, c);
        }
        out.push_str(",\"ms\":");
        push_num(out, r.ms);
        let _ = write!(out, ",\"samples\":{},\"function\":", r.n);
        push_str(out, &r.function);
        out.push('}');
    };
    let mut out = String::from("{\"format\":\"jscalls-lines/1\",\"input\":");
    push_str(&mut out, label);
    out.push_str(",\"units\":\"ms\",\"threads\":[");
    let mut first = true;
    for p in t.profiles.iter().filter(|p| shown(p, wanted)) {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        let _ = write!(out, "\n{{\"pid\":{},\"tid\":{},\"name\":", p.pid, p.tid);
        match &p.thread_name {
            Some(n) => push_str(&mut out, n),
            None => out.push_str("null"),
        }
        let _ = write!(
            out,
            ",\"profileId\":{},\"from\":\"{}\",\"samples\":{},\"ms\":",
            p.profile_id,
            p.path.as_str(),
            p.samples
        );
        push_num(&mut out, p.sum_ms);
        out.push_str(",\"lines\":[");
        for (i, r) in by_time(&p.rows).into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("\n  ");
            row(&mut out, r);
        }
        out.push_str("]}");
    }
    out.push_str("\n],\"merged\":[");
    if wanted.is_none() {
        for (i, r) in by_time(&t.merged).into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('\n');
            row(&mut out, r);
        }
    }
    out.push_str("\n]}\n");
    out
}

/// Each thread with line times: its hottest lines, with the function each belongs to (nothing
/// when none has any).
fn text(t: &LineTimes, top: usize, wanted: Option<&ThreadSpec>) -> String {
    let mut out = String::new();
    for p in t.profiles.iter().filter(|p| !p.rows.is_empty() && shown(p, wanted)) {
        let name = p.thread_name.as_deref().unwrap_or("thread");
        let _ = writeln!(
            out,
            "{} (pid {}, tid {}): {} ms on {} line{}, from {}",
            super::report::printable(name),
            p.pid,
            p.tid,
            ms(p.sum_ms),
            p.rows.len(),
            if p.rows.len() == 1 { "" } else { "s" },
            if p.path == LinePath::Lines { "the samples' lines" } else { "positionTicks" }
        );
        let _ = writeln!(out, "  {:>10} {:>6}  line", "self ms", "%");
        let rows = by_time(&p.rows);
        for r in rows.iter().take(top) {
            let share = if p.sum_ms > 0.0 { 100.0 * r.ms / p.sum_ms } else { 0.0 };
            let mut place = format!(
                "{}:{}",
                if r.url.is_empty() { "(no url)" } else { &r.url },
                crate::cli::lines::line_text(r.line)
            );
            if let Some(c) = r.column {
                place = format!("{place}:{}", line_text(c));
            }
            let function = if r.function.is_empty() { "(anonymous)" } else { &r.function };
            let _ = writeln!(
                out,
                "  {:>10} {:>5.1}%  {}  {}",
                ms(r.ms),
                share,
                super::report::printable(&place),
                super::report::printable(function)
            );
        }
        if rows.len() > top {
            let _ = writeln!(out, "  ... {} more (--top N, or --format json for all)", rows.len() - top);
        }
        out.push('\n');
    }
    out
}

/// What the text says when no sample has a line, and where lines come from in such an input.
fn no_lines(kind: jscalls::InputKind) -> String {
    let whence = match kind {
        jscalls::InputKind::Gecko => {
            "a Firefox profile has them on its JavaScript frames, and no sample has one with a line"
        }
        _ => "Chrome traces carry them per sample; a .cpuprofile needs positionTicks or lines",
    };
    format!("no line times: the profiles record no lines ({whence})\n")
}

/// A listing of each thread's hottest functions, `pprof -list` style: the function's lines
/// with the time of each, from its first line with time to its last, two lines around (or,
/// when that spans more than 40 lines, each line with time and two around it).
/// The listing of `t`'s hottest functions, their sources found in `dirs` by URL, else carried
/// by the input (`text_of`).
fn listing(
    t: &LineTimes,
    top: usize,
    wanted: Option<&ThreadSpec>,
    dirs: Option<&SourceDirs>,
    text_of: &dyn Fn(&str) -> Option<Vec<String>>,
    output: Option<&std::path::Path>,
) -> Result<String, Failed> {
    let mut out = String::new();
    let mut read: Vec<(String, Option<Vec<String>>)> = Vec::new();
    for (k, p) in t.profiles.iter().enumerate().filter(|(_, p)| !p.rows.is_empty() && shown(p, wanted)) {
        let name = p.thread_name.as_deref().unwrap_or("thread");
        let _ = writeln!(
            out,
            "{} (pid {}, tid {}): {} ms on lines",
            super::report::printable(name),
            p.pid,
            p.tid,
            ms(p.sum_ms)
        );
        for f in t.functions_of(k).iter().take(top) {
            let share = if p.sum_ms > 0.0 { 100.0 * f.ms / p.sum_ms } else { 0.0 };
            let function = if f.function.is_empty() { "(anonymous)" } else { &f.function };
            let _ = writeln!(
                out,
                "\nROUTINE {}  {}  {} ms, {share:.1}% of the thread's",
                super::report::printable(function),
                super::report::printable(if f.url.is_empty() { "(no url)" } else { &f.url }),
                ms(f.ms)
            );
            // Each script read once.
            let source = match read.iter().position(|(u, _)| *u == f.url) {
                Some(i) => &read[i].1,
                None => {
                    let lines = match dirs.and_then(|d| d.find(&f.url)) {
                        Some(path) => {
                            if output.is_some_and(|o| same_file(&path, o)) {
                                return Err(Failed::Usage(format!(
                                    "the output {} is the source of {}; refusing to overwrite it",
                                    path.display(),
                                    f.url
                                )));
                            }
                            Some(read_lines(&path).map_err(|e| failure(&f.url, e))?)
                        }
                        None => text_of(&f.url),
                    };
                    read.push((f.url.clone(), lines));
                    &read.last().expect("pushed").1
                }
            };
            let _ = writeln!(out, "  {:>10}  {:>6}  source", "self ms", "line");
            let whole: Vec<f64> = f.lines.iter().map(|l| l.0).filter(|l| l.fract() == 0.0 && *l >= 1.0).collect();
            let (Some(&first), Some(&last)) = (whole.first(), whole.last()) else { continue };
            let n = source.as_ref().map_or(last as usize + 2, Vec::len);
            let from = (first as usize).saturating_sub(2).max(1);
            let to = (last as usize + 2).min(n.max(last as usize));
            let near = |l: usize| whole.iter().any(|&w| (w as usize).abs_diff(l) <= 2);
            let mut gap = false;
            for l in from..=to {
                if to - from > 40 && !near(l) {
                    if !gap {
                        out.push_str("           ...\n");
                        gap = true;
                    }
                    continue;
                }
                gap = false;
                let time = f.lines.iter().find(|x| x.0 == l as f64).map_or_else(|| ".".to_owned(), |x| ms(x.1));
                let text = source.as_ref().and_then(|s| s.get(l - 1)).map_or("", String::as_str);
                let _ = writeln!(out, "  {time:>10}  {l:>6}  {}", super::report::printable(&clipped(text)));
            }
            if source.is_none() {
                let _ = writeln!(
                    out,
                    "  (no source for {}: no file under --source, and the input carries none)",
                    super::report::printable(&f.url)
                );
            }
        }
        out.push('\n');
    }
    Ok(out)
}

/// The longest stretch of a source line a listing shows: a minified bundle's line can be
/// megabytes long.
const LISTED_CHARS: usize = 240;

/// `text`, cut after [`LISTED_CHARS`] characters with `…` and the count of the rest.
fn clipped(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(LISTED_CHARS) {
        Some((at, _)) => format!("{}… ({} more characters)", &text[..at], text[at..].chars().count()).into(),
        None => text.into(),
    }
}

fn line_text(line: f64) -> String {
    let mut s = String::new();
    push_num(&mut s, line);
    s
}

fn ms(x: f64) -> String {
    format!("{x:.3}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_source_line_is_clipped_with_the_count_of_the_rest() {
        assert_eq!(super::clipped("short"), "short");
        let long = format!("{}é{}", "a".repeat(239), "b".repeat(10));
        assert_eq!(super::clipped(&long), format!("{}é… (10 more characters)", "a".repeat(239)));
        let exact = "x".repeat(240);
        assert_eq!(super::clipped(&exact), exact);
    }
}
