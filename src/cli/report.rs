//! What the command tells its user on stderr: errors under the input's name, warnings and
//! their counts, the progress line, and `JSCALLS_TIMING`'s figures.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::fs;
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use jscalls::{assemble, Assembled, Config, Diagnostics, Error, Source};

use super::args::Global;
#[cfg(unix)]
use super::process;
use super::Failed;

/// Prints `e` under the input's name (nothing for a closed standard output).
pub(crate) fn failure(name: &str, e: Error) -> Failed {
    if is_broken_pipe(&e) {
        return Failed::Pipe;
    }
    match &e {
        Error::Input { location: Some(_), .. } => say!("jscalls: error: {name}:{}", printable(&e.to_string())),
        Error::Io { .. } => say!("jscalls: error: {}", printable(&e.to_string())),
        _ => say!("jscalls: error: {name}: {}", printable(&e.to_string())),
    }
    Failed::Reported
}

/// Reads and estimates one input file for `diff` and `check`, with its warnings printed
/// (and turned into an error by --strict) under `name`.
pub(crate) fn assemble_file(path: &Path, name: &str, global: &Global, cfg: &Config) -> Result<Assembled, Failed> {
    let (diagnostics, mut assembled) = assemble(&Source::file(path), cfg).map_err(|e| failure(name, e))?;
    report(name, &diagnostics, global.quiet, global.verbose);
    strict(global, name, &diagnostics)?;
    // Functions under their original names, lines at their original places.
    if let Some(maps) = super::frames::UserMaps::wanted(&global.source_maps)? {
        super::frames::apply(&mut assembled, &maps, name, global)?;
    }
    Ok(assembled)
}

/// With --strict, warnings about the input are an error: said under the input's name.
pub(crate) fn strict(global: &Global, name: &str, d: &Diagnostics) -> Result<(), Failed> {
    if !global.strict || d.total_significant() == 0 {
        return Ok(());
    }
    let first = d.warnings().iter().find(|w| !w.kind.is_informational()).map(|w| w.to_string()).unwrap_or_default();
    let count = d.total_significant();
    say!("jscalls: error: {name}: {count} warning(s) and --strict is set (first: {})", printable(&first));
    Err(Failed::Reported)
}

/// `JSCALLS_TIMING=1`: each stage's wall time, the process's CPU time and memory, on stderr
/// (for measurements).
pub(crate) struct Timing {
    start: std::time::Instant,
    cpu: f64,
}

impl Timing {
    pub(crate) fn start() -> Option<Timing> {
        std::env::var_os("JSCALLS_TIMING").map(|_| Timing { start: std::time::Instant::now(), cpu: cpu_seconds() })
    }

    pub(crate) fn report_stages(&self, a: &Assembled) {
        for (stage, t) in a.stage_times() {
            say!("jscalls: timing: {stage} {:.3} s", t.as_secs_f64());
        }
        self.report("read+assemble");
    }

    pub(crate) fn report(&self, what: &str) {
        say!(
            "jscalls: timing: {what} {:.3} s, cpu {:.3} s (resident now {} MB, peak {} MB)",
            self.start.elapsed().as_secs_f64(),
            cpu_seconds() - self.cpu,
            memory_mb("VmRSS"),
            memory_mb("VmHWM")
        );
    }
}

/// CPU time of the process so far (0 where it is not known).
pub(crate) fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    return process::cpu_seconds();
    #[cfg(not(unix))]
    0.0
}

/// A memory figure of this process from `/proc/self/status` (Linux; 0 elsewhere), in MB.
pub(crate) fn memory_mb(field: &str) -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0) / 1024
}

pub(crate) fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
}

/// A progress line on a terminal, shown once reading has taken a second.
pub(crate) struct Progress {
    pub(crate) bytes: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub(crate) fn start(input: Option<&Path>, quiet: bool) -> Option<Progress> {
        if quiet || !io::stderr().is_terminal() {
            return None;
        }
        // A plain file's size is the total; a gzip file's or a stream's is not known.
        // Only a regular file is opened to look: a FIFO opened here would not be opened again
        // by the reader without losing what it holds.
        let total = input.and_then(|p| {
            let m = fs::metadata(p).ok().filter(fs::Metadata::is_file)?;
            let mut magic = [0u8; 2];
            fs::File::open(p).ok()?.read_exact(&mut magic).ok()?;
            (magic != [0x1f, 0x8b]).then_some(m.len())
        });
        let bytes = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let (b, d) = (bytes.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("jscalls-progress".into())
            .spawn(move || {
                let start = std::time::Instant::now();
                let tick = std::time::Duration::from_millis(100);
                // JSCALLS_PROGRESS_AFTER_MS: when the line appears (for tests; default 1 s).
                let after =
                    std::env::var("JSCALLS_PROGRESS_AFTER_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
                while start.elapsed() < std::time::Duration::from_millis(after) {
                    if d.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::park_timeout(tick);
                }
                let bar = match total {
                    Some(n) => indicatif::ProgressBar::new(n).with_style(
                        indicatif::ProgressStyle::with_template(
                            "jscalls: reading {bar:30} {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
                        )
                        .expect("a valid template"),
                    ),
                    None => indicatif::ProgressBar::new_spinner().with_style(
                        indicatif::ProgressStyle::with_template("jscalls: reading {spinner} {bytes} ({bytes_per_sec})")
                            .expect("a valid template"),
                    ),
                };
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(10));
                while !d.load(Ordering::Relaxed) {
                    bar.set_position(b.load(Ordering::Relaxed));
                    bar.tick();
                    std::thread::park_timeout(tick);
                }
                bar.finish_and_clear();
            })
            .ok();
        Some(Progress { bytes, done, thread })
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Prints the kept warnings (and, with `-v`, the notes on what DevTools does by design) and a
/// summary by kind.
pub(crate) fn report(name: &str, d: &Diagnostics, quiet: bool, verbose: bool) {
    let notes = d.total() - d.total_significant();
    if quiet || d.total_significant() == 0 && !(verbose && notes > 0) {
        return;
    }
    let mut e = io::stderr().lock();
    for w in d.warnings() {
        let informational = w.kind.is_informational();
        if informational && !verbose {
            continue;
        }
        let label = if informational { "note" } else { "warning" };
        // A warning quotes the input (an event's name): shown, not obeyed, by a terminal.
        let text = printable(&w.to_string()).into_owned();
        let _ = match w.location {
            Some(_) => writeln!(e, "jscalls: {label}: {name}:{text}"),
            None => writeln!(e, "jscalls: {label}: {name}: {text}"),
        };
    }
    let shown = d.warnings().iter().filter(|w| verbose || !w.kind.is_informational()).count() as u64;
    let counted = if verbose { d.total() } else { d.total_significant() };
    let parts: Vec<String> = d
        .counts()
        .filter(|(k, _)| verbose || !k.is_informational())
        .map(|(k, c)| format!("{} ×{c}", k.code()))
        .collect();
    let more = counted.saturating_sub(shown);
    let _ = writeln!(
        e,
        "jscalls: {name}: {} warning(s){}{}: {}",
        d.total_significant(),
        if verbose { format!(", {notes} note(s)") } else { String::new() },
        if more > 0 { format!(" ({more} not shown)") } else { String::new() },
        parts.join(", ")
    );
}

/// The median of `v`, sorted in place (NaN for none): the runs' figure `diff --runs` and
/// `check RUN...` report.
pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Text for a markdown table's cell: a pipe would end the cell, a line break the table, `<`
/// start markup, a backtick a code span; control characters are shown, not passed on.
pub(crate) fn md_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in printable(s).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '`' => out.push_str("\\`"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as a markdown code span: delimited by more backticks than it holds in a row, so that
/// none of its own ends it.
pub(crate) fn md_code(s: &str) -> String {
    let s = printable(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// `s` as a terminal may show it: each control character (an escape sequence's start, a
/// newline in a name) written as a visible `\u{..}` escape instead.
pub(crate) fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}
