//! `jscalls diff`: two estimators on one input, two versions' calls outputs, two recordings,
//! two groups of runs, or two estimators over a folder of inputs; `--fail-on` makes it a gate.

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Parser;

use jscalls::diff::calls::{self, ThreadDiff};
use jscalls::diff::funcs;
use jscalls::diff::ThreadEstimate;
use jscalls::ranges::{Query, Timings};
use jscalls::{Config, Error, Source};

use super::args::{
    refines_panel_calls, CpuProfileModeArg, DiffArgs, DiffFormat, EngineArg, EstimatorArg, Global, Level,
};
use super::files::Reads;
use super::output::{spill_stream, Output};
use super::report::{assemble_file, failure, md_cell};
use super::Failed;

mod flame;
mod lines;
mod render;
mod rule;
mod stacks;

use render::{call_level, function_json, function_markdown, function_text, gate_report};
use rule::{Gate, Rule};

/// The options `--base-opt` / `--new-opt` take: those that change the estimate.
#[derive(Debug, Parser)]
#[command(name = "OPTIONS", no_binary_name = true, disable_help_flag = true, disable_version_flag = true)]
struct EstimateOpts {
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    #[arg(long, value_enum)]
    cpuprofile_mode: Option<CpuProfileModeArg>,
    #[arg(long)]
    show_all_events: bool,
    #[arg(long, value_enum)]
    estimator: Option<EstimatorArg>,
}

/// One side: how it is estimated, and how it is named in reports.
struct SideSpec {
    cfg: Config,
    /// The options as given ("" for none).
    options: String,
    /// The range compared, found in each input of the side.
    range: Option<Query>,
    /// The length of the range in each input read (µs), in the order they were read.
    lengths: std::sync::Mutex<Vec<f64>>,
    /// Whether the comparison reads each call alone (call by call, without rules): the
    /// estimates are then made for that ([`ThreadEstimate::of_thread_for_calls`]).
    calls_only: bool,
}

impl SideSpec {
    fn new(text: Option<&str>, base: &Config, which: &str) -> Result<SideSpec, Failed> {
        let mut cfg = base.clone();
        let text = text.unwrap_or("").trim();
        let opts = EstimateOpts::try_parse_from(text.split_whitespace()).map_err(|e| {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("").trim_start_matches("error: ").to_owned();
            Failed::Usage(format!(
                "--{which}-opt '{text}': {first} (it takes --engine, --cpuprofile-mode, --show-all-events, --estimator)"
            ))
        })?;
        if let Some(e) = opts.engine {
            cfg.engine = e.version();
        }
        if let Some(m) = opts.cpuprofile_mode {
            cfg.cpuprofile_mode = m.mode();
        }
        cfg.show_all_events |= opts.show_all_events;
        if let Some(e) = opts.estimator {
            cfg.estimator = e.estimator();
        }
        if refines_panel_calls(&cfg) {
            return Err(Failed::Usage(format!(
                "--{which}-opt '{text}': --bounds and --estimator (midway, log-midway) work on the integrator's calls, not --cpuprofile-mode performance-panel"
            )));
        }
        Ok(SideSpec { cfg, options: text.to_owned(), range: None, lengths: Default::default(), calls_only: false })
    }
}

/// One input of a diff, read from a file: a regular file as it is; standard input (`-`), a
/// FIFO or `<(cmd)` kept in a temporary file first, as it is looked at and read again (and
/// one input with --base-opt/--new-opt is read twice).
struct Side {
    /// Where it is read from.
    path: PathBuf,
    /// How messages name it.
    name: String,
    _kept: Option<tempfile::NamedTempFile>,
}

impl Side {
    fn new(p: &Path) -> Result<Side, Failed> {
        let stdin = p == Path::new("-");
        let name = if stdin { "<stdin>".to_owned() } else { p.display().to_string() };
        if !stdin && std::fs::metadata(p).map_or(true, |m| m.is_file() || m.is_dir()) {
            // A file, or what opening it will report (a folder, a missing file).
            return Ok(Side { path: p.to_path_buf(), name, _kept: None });
        }
        let source = if stdin { Source::stdin() } else { Source::file(p) };
        let kept = spill_stream(&source).map_err(|e| failure(&name, e))?;
        Ok(Side { path: kept.path().to_path_buf(), name, _kept: Some(kept) })
    }
}

/// One input opened: a calls document's threads read back, or a recording assembled (with
/// the window of the range compared, µs), ready to estimate.
enum Opened {
    Estimated(Vec<ThreadEstimate>),
    // Boxed: an assembled input is much larger than a list.
    Recording(Box<jscalls::Assembled>, Option<(f64, f64)>),
}

/// Opens one input for `spec`'s side, on `threads` threads.
fn open(side: &Side, spec: &SideSpec, global: &Global, threads: usize) -> Result<Opened, Failed> {
    let name = &side.name;
    let range = spec.range.as_ref();
    let source = Source::file(&side.path);
    let mut head = Vec::with_capacity(512);
    source
        .open()
        .and_then(|r| r.take(512).read_to_end(&mut head).map_err(|e| Error::io(format!("cannot read {name}"), e)))
        .map_err(|e| failure(name, e))?;
    if ThreadEstimate::is_calls_document(&head) {
        if !spec.options.is_empty() {
            return Err(Failed::Usage(format!(
                "{name} is a calls output: its calls are estimated already, so '{}' cannot change them",
                spec.options
            )));
        }
        if let Some(q) = range {
            return Err(Failed::Usage(format!(
                "{name} is a calls output: it has no measures or interactions for {}; give the recording",
                q.as_option()
            )));
        }
        let mut bytes = Vec::new();
        source
            .open()
            .and_then(|mut r| r.read_to_end(&mut bytes).map_err(|e| Error::io(format!("cannot read {name}"), e)))
            .map_err(|e| failure(name, e))?;
        return ThreadEstimate::read_calls_document(&bytes).map(Opened::Estimated).map_err(|e| failure(name, e));
    }
    let mut cfg = spec.cfg.clone();
    cfg.threads = threads;
    // The events inside calls are functions of their own (see `Stacks::from_calls`); a
    // comparison of calls alone reads none of them.
    cfg.keep_event_names = !spec.calls_only;
    // The comparison reads calls and their stacks alone (`--level lines` reads its own way).
    cfg.keep_samples = false;
    cfg.range_event_names = range.map_or_else(Vec::new, |q| Timings::names_for(&[q]));
    let assembled = assemble_file(&side.path, name, global, &cfg)?;
    let window = match range {
        Some(q) => {
            let w = super::range::resolve(q, &assembled, name)?;
            spec.lengths.lock().expect("not poisoned").push(w.max_us - w.min_us);
            Some((w.min_us, w.max_us))
        }
        None => None,
    };
    Ok(Opened::Recording(Box::new(assembled), window))
}

/// What the comparison keeps of a thread's estimate: its calls within the window, if any.
fn estimate_of(th: &jscalls::Thread<'_>, window: Option<(f64, f64)>, calls_only: bool) -> ThreadEstimate {
    match window {
        Some(w) => ThreadEstimate::of_thread_in(th, w),
        None if calls_only => ThreadEstimate::of_thread_for_calls(th),
        None => ThreadEstimate::of_thread(th),
    }
}

/// The threads of one input: read back when it is a calls document, estimated otherwise.
fn load(side: &Side, spec: &SideSpec, global: &Global, threads: usize) -> Result<Vec<ThreadEstimate>, Failed> {
    Ok(match open(side, spec, global, threads)? {
        Opened::Estimated(threads) => threads,
        Opened::Recording(assembled, window) => estimates(assembled, window, spec.calls_only),
    })
}

/// Every thread of a recording estimated, as the comparison keeps it.
fn estimates(assembled: Box<jscalls::Assembled>, window: Option<(f64, f64)>, calls_only: bool) -> Vec<ThreadEstimate> {
    let mut out = Vec::new();
    assembled
        .for_each_thread(|th| {
            out.push(estimate_of(&th, window, calls_only));
            Ok::<(), ()>(())
        })
        .expect("collecting cannot fail");
    out
}

/// Whether the two sides are one recording read alike, estimated two ways: then it is read
/// once ([`jscalls::Assembled::estimate_twice`]). What the sides' options may change that
/// shapes the reading is the engine and the `.cpuprofile` mode.
fn one_read(base: &Side, new: &Side, specs: &(SideSpec, SideSpec)) -> bool {
    let (a, b) = (&specs.0.cfg, &specs.1.cfg);
    let same_input = base.path == new.path || same_file::is_same_file(&base.path, &new.path).unwrap_or(false);
    same_input && a.engine == b.engine && a.cpuprofile_mode == b.cpuprofile_mode
}

/// The two sides, each on every core; of two reads, the memory the first freed is handed back
/// before the second (see [`load_pair`]).
fn load_both(
    base: &Side,
    new: &Side,
    specs: &(SideSpec, SideSpec),
    global: &Global,
) -> Result<(Vec<ThreadEstimate>, Vec<ThreadEstimate>), Failed> {
    // Only two reads have peaks that would add up; for one read, freed memory kept a while
    // is memory reused without the kernel zeroing it again (a seventh of the run's CPU).
    if !one_read(base, new, specs) {
        crate::cli::alloc::return_freed_memory_at_once();
    }
    let timing = crate::cli::report::Timing::start();
    load_pair(
        base,
        new,
        specs,
        global,
        specs.0.cfg.threads.max(1),
        timing.as_ref(),
        &crate::cli::alloc::release_free_memory,
    )
}

/// The two sides on `cores` threads: one read when they are one recording read alike
/// ([`one_read`]); else one after the other, `between` run between the two reads, so that
/// only one side's model is in memory at a time, beside the other's estimate (a tenth of it).
fn load_pair(
    base: &Side,
    new: &Side,
    specs: &(SideSpec, SideSpec),
    global: &Global,
    cores: usize,
    timing: Option<&crate::cli::report::Timing>,
    between: &dyn Fn(),
) -> Result<(Vec<ThreadEstimate>, Vec<ThreadEstimate>), Failed> {
    let b = match open(base, &specs.0, global, cores)? {
        Opened::Recording(assembled, window) if one_read(base, new, specs) => {
            if let Some(w) = window {
                specs.1.lengths.lock().expect("not poisoned").push(w.1 - w.0);
            }
            let calls_only = specs.0.calls_only && specs.1.calls_only;
            let both = assembled.estimate_twice(&specs.1.cfg, |th| estimate_of(&th, window, calls_only));
            if let Some(t) = timing {
                t.report("read once, estimated twice");
            }
            return Ok(both);
        }
        Opened::Recording(assembled, window) => estimates(assembled, window, specs.0.calls_only),
        Opened::Estimated(threads) => threads,
    };
    between();
    if let Some(t) = timing {
        t.report("BASE read and estimated");
    }
    let n = load(new, &specs.1, global, cores)?;
    if let Some(t) = timing {
        t.report("NEW read and estimated");
    }
    Ok((b, n))
}

/// The inputs a folder holds (traces, profiles and calls outputs), by name.
fn inputs_in(dir: &Path) -> Result<Vec<PathBuf>, Failed> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| failure(&dir.display().to_string(), Error::io("cannot list the folder", e)))?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("").to_ascii_lowercase();
            let n = n.strip_suffix(".gz").unwrap_or(&n);
            p.is_file() && (n.ends_with(".json") || n.ends_with(".cpuprofile"))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// A side of `--runs`: a folder of runs, or files separated by commas; at least one.
fn runs_of(arg: &Path) -> Result<Vec<PathBuf>, Failed> {
    if arg.is_dir() {
        let v = inputs_in(arg)?;
        if v.is_empty() {
            return Err(Failed::Usage(format!("--runs: {} holds no input", arg.display())));
        }
        return Ok(v);
    }
    let v: Vec<PathBuf> = arg.to_string_lossy().split(',').filter(|s| !s.is_empty()).map(PathBuf::from).collect();
    if v.is_empty() {
        return Err(Failed::Usage(format!("--runs: '{}' names no run", arg.display())));
    }
    Ok(v)
}

pub(crate) fn run(args: &DiffArgs, global: &Global, cfg: &Config, mut reads: Reads) -> Result<(), Failed> {
    super::no_bounds(global, "diff")?;
    let rules: Vec<Rule> =
        args.fail_on.iter().map(|r| rule::parse(r)).collect::<Result<_, _>>().map_err(Failed::Usage)?;
    // Every file read: the inputs, their runs, a corpus's inputs; none is the output.
    for i in &args.inputs {
        for p in if args.runs { runs_of(i)? } else { vec![i.clone()] } {
            reads.add(&p, "the input");
        }
    }
    if let Some(dir) = &args.corpus {
        for p in inputs_in(dir)? {
            reads.add(&p, "the input");
        }
    }
    reads.refuse(args.output.as_deref())?;
    let gate = Gate { min_time: args.min_time * 1000.0, alpha: args.alpha };
    if matches!(args.format, DiffFormat::Svg | DiffFormat::Pprof)
        && (args.runs || args.corpus.is_some() || !rules.is_empty() || args.level == Some(Level::Lines))
    {
        return Err(Failed::Usage(
            "--format svg draws two estimates' stacks: it takes no --runs, --corpus, --fail-on or --level lines"
                .to_owned(),
        ));
    }
    let mut specs =
        (SideSpec::new(args.base_opt.as_deref(), cfg, "base")?, SideSpec::new(args.new_opt.as_deref(), cfg, "new")?);
    if let Some(q) = args.range.query() {
        specs.0.range = Some(q.clone());
        specs.1.range = Some(q.clone());
    }
    if let Some(dir) = &args.corpus {
        if !args.inputs.is_empty() || args.runs {
            return Err(Failed::Usage("--corpus DIR takes no other input and no --runs".to_owned()));
        }
        if args.base_opt.is_none() && args.new_opt.is_none() {
            return Err(Failed::Usage("--corpus compares two estimators: give --base-opt and/or --new-opt".to_owned()));
        }
        return corpus(dir, &specs, global, args, &rules, gate);
    }
    let mut text = String::new();
    let (rows_diff, header) = match (args.runs, args.inputs.as_slice()) {
        (false, [b, n]) if args.level == Some(Level::Lines) => {
            if !rules.is_empty() || args.base_opt.is_some() || args.new_opt.is_some() {
                return Err(Failed::Usage(
                    "--level lines compares the line times of two recordings: it takes no --fail-on, --base-opt or --new-opt"
                        .to_owned(),
                ));
            }
            let header = Header { base: describe(b, &specs.0), new: describe(n, &specs.1), range: None };
            return lines::line_level(args, global, cfg, &header, (&Side::new(b)?, &Side::new(n)?));
        }
        _ if args.level == Some(Level::Lines) => {
            return Err(Failed::Usage("--level lines takes BASE and NEW, two recordings".to_owned()))
        }
        (true, [b, n]) => {
            let (bs, ns) = (runs_of(b)?, runs_of(n)?);
            // Runs compare function by function: each thread's stacks are counted, then freed.
            let load_run = |p: &PathBuf, spec: &SideSpec| load(&Side::new(p)?, spec, global, spec.cfg.threads);
            let base_runs = bs.iter().map(|p| load_run(p, &specs.0)).collect::<Result<Vec<_>, _>>()?;
            let new_runs = ns.iter().map(|p| load_run(p, &specs.1)).collect::<Result<Vec<_>, _>>()?;
            let d = funcs::FuncDiff::of_owned(base_runs, new_runs);
            let header =
                Header::new(describe_runs(b, bs.len(), &specs.0), describe_runs(n, ns.len(), &specs.1), &specs);
            (d, header)
        }
        (true, _) => {
            return Err(Failed::Usage(
                "--runs takes BASE and NEW: two folders, or two comma-separated lists".to_owned(),
            ))
        }
        (false, [one]) => {
            if args.base_opt.is_none() && args.new_opt.is_none() {
                return Err(Failed::Usage(
                    "one input: give --base-opt and/or --new-opt to compare two estimates of it (or give BASE and NEW)"
                        .to_owned(),
                ));
            }
            let side = Side::new(one)?;
            let calls_only = args.level != Some(Level::Functions)
                && rules.is_empty()
                && matches!(args.format, DiffFormat::Text | DiffFormat::Markdown | DiffFormat::Json);
            (specs.0.calls_only, specs.1.calls_only) = (calls_only, calls_only);
            let (b, n) = load_both(&side, &side, &specs, global)?;
            let header = Header::new(describe(one, &specs.0), describe(one, &specs.1), &specs);
            match args.format {
                DiffFormat::Svg => return flame::differential(args, &header, b, n),
                DiffFormat::Pprof => return stacks::pprof_difference(args, &header, b, n),
                _ => {}
            }
            if args.level != Some(Level::Functions) {
                return call_level(args, global, &header, &b, &n, &rules, gate);
            }
            (functions_of(b, n), header)
        }
        (false, [b, n]) => {
            let (bt, nt) = load_both(&Side::new(b)?, &Side::new(n)?, &specs, global)?;
            let header = Header::new(describe(b, &specs.0), describe(n, &specs.1), &specs);
            match args.format {
                DiffFormat::Svg => return flame::differential(args, &header, bt, nt),
                DiffFormat::Pprof => return stacks::pprof_difference(args, &header, bt, nt),
                _ => {}
            }
            let level = args.level.unwrap_or(if ThreadEstimate::same_recording(&bt, &nt) {
                Level::Calls
            } else {
                Level::Functions
            });
            if level == Level::Calls {
                return call_level(args, global, &header, &bt, &nt, &rules, gate);
            }
            (functions_of(bt, nt), header)
        }
        _ => return Err(Failed::Usage("diff takes BASE and NEW, or one input with --base-opt/--new-opt".to_owned())),
    };
    let (violations, found) = rule::check(&rows_diff, &rules, gate);
    warn_unmatched(&rules, &found, global)?;
    match args.format {
        DiffFormat::Text => function_text(&mut text, &header, &rows_diff, args.top),
        DiffFormat::Markdown => function_markdown(&mut text, &header, &rows_diff, args.top),
        DiffFormat::Svg | DiffFormat::Pprof => unreachable!("an SVG is drawn before the function level is reached"),
        // Streamed to the output below.
        DiffFormat::Json => {}
    }
    gate_report(&mut text, args.format, &rules, &violations, &rows_diff);
    if args.format == DiffFormat::Json {
        write_with(args, |w| function_json(w, &header, &rows_diff))?;
    } else {
        write_out(args, &text)?;
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Failed::Regression)
    }
}

/// How the two sides are named in reports.
struct Header {
    base: String,
    new: String,
    /// The range compared: the option, and its length in BASE and NEW (µs; the median of the
    /// runs).
    range: Option<(String, f64, f64)>,
}

impl Header {
    fn new(base: String, new: String, specs: &(SideSpec, SideSpec)) -> Header {
        let median = |s: &SideSpec| super::report::median(&mut s.lengths.lock().expect("not poisoned").clone());
        let range = specs.0.range.as_ref().map(|q| (q.as_option(), median(&specs.0), median(&specs.1)));
        Header { base, new, range }
    }

    /// The range's line of a report: `--measure checkout#0: 47.072 ms -> 65.150 ms (+18.078 ms, +38.4%)`.
    fn range_line(&self) -> Option<String> {
        let (what, b, n) = self.range.as_ref()?;
        Some(format!("{what}: {} ms -> {} ms ({} ms, {})", ms(*b), ms(*n), signed_ms(n - b), percent(*b, *n)))
    }
}

/// Two recordings function by function, each thread freed once counted.
fn functions_of(base: Vec<ThreadEstimate>, new: Vec<ThreadEstimate>) -> funcs::FuncDiff {
    funcs::FuncDiff::of_owned(vec![base], vec![new])
}

fn describe(p: &Path, spec: &SideSpec) -> String {
    let name = if p == Path::new("-") { "<stdin>".to_owned() } else { p.display().to_string() };
    if spec.options.is_empty() {
        name
    } else {
        format!("{name} ({})", spec.options)
    }
}

fn describe_runs(p: &Path, n: usize, spec: &SideSpec) -> String {
    format!("{} ({n} run{})", describe(p, spec), if n == 1 { "" } else { "s" })
}

/// A rule whose function is in neither side: a warning, an error with --strict.
fn warn_unmatched(rules: &[Rule], found: &[bool], global: &Global) -> Result<(), Failed> {
    for (r, f) in rules.iter().zip(found) {
        if !f && r.target.is_some() {
            if global.strict {
                return Err(Failed::Usage(format!(
                    "--fail-on '{}': no such function or CallNode in either input",
                    r.text
                )));
            }
            if !global.quiet {
                let _ = writeln!(
                    io::stderr(),
                    "jscalls: warning: --fail-on '{}': no such function or CallNode in either input",
                    r.text
                );
            }
        }
    }
    Ok(())
}

fn write_out(args: &DiffArgs, text: &str) -> Result<(), Failed> {
    write_with(args, |w| w.write_all(text.as_bytes()))
}

/// Writes the report with `f` (to a file renamed into place when complete, or standard output).
fn write_with(args: &DiffArgs, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), Failed> {
    let out = args.output.as_deref().filter(|o| *o != Path::new("-"));
    let output = Output::create(out, false, 1).map_err(|e| failure("output", e))?;
    output.write(|w| f(w).map_err(|e| Error::io("cannot write the diff", e))).map_err(|e| failure("output", e))
}

/// Milliseconds with three decimals.
fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// A signed change in ms.
fn signed_ms(us: f64) -> String {
    format!("{:+.3}", us / 1000.0)
}

fn percent(base: f64, new: f64) -> String {
    if base == 0.0 {
        if new == 0.0 {
            "0%".to_owned()
        } else {
            "new".to_owned()
        }
    } else {
        format!("{:+.1}%", (new - base) / base * 100.0)
    }
}

// ---- corpus ----

/// What one input of a corpus gave.
struct Drift {
    input: PathBuf,
    calls: (usize, usize),
    changed: usize,
    sum_abs_dur: f64,
    regressions: usize,
}

fn corpus(
    dir: &Path,
    specs: &(SideSpec, SideSpec),
    global: &Global,
    args: &DiffArgs,
    rules: &[Rule],
    gate: Gate,
) -> Result<(), Failed> {
    let inputs = inputs_in(dir)?;
    if inputs.is_empty() {
        return Err(Failed::Usage(format!(
            "--corpus {}: no .json, .json.gz or .cpuprofile inputs in it",
            dir.display()
        )));
    }
    let results = measure_corpus(&inputs, specs, global, rules, gate);
    let mut failed = 0;
    let mut drifts = Vec::new();
    for r in results.into_iter().flatten() {
        match r {
            Ok(d) => drifts.push(d),
            Err(Failed::Usage(m)) => return Err(Failed::Usage(m)),
            Err(_) => failed += 1,
        }
    }
    let regressions: usize = drifts.iter().map(|d| d.regressions).sum();
    let out = corpus_report(dir, specs, args, (!rules.is_empty()).then_some(regressions), &drifts, failed);
    write_out(args, &out)?;
    if failed > 0 {
        Err(Failed::Reported)
    } else if regressions > 0 {
        Err(Failed::Regression)
    } else {
        Ok(())
    }
}

/// Each input of a corpus compared, on every core (the estimate is capped at 8 threads, a
/// corpus is not; --threads caps it), with a count on a terminal.
fn measure_corpus(
    inputs: &[PathBuf],
    specs: &(SideSpec, SideSpec),
    global: &Global,
    rules: &[Rule],
    gate: Gate,
) -> Vec<Option<Result<Drift, Failed>>> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let workers = global.threads.map_or(cores, usize::from).max(1).min(inputs.len());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let progress = !global.quiet && io::stderr().is_terminal();
    let mut results: Vec<Option<Result<Drift, Failed>>> = (0..inputs.len()).map(|_| None).collect();
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(input) = inputs.get(k) else { break };
                let r = (|| {
                    let side = Side::new(input)?;
                    let (b, n) = load_pair(&side, &side, specs, global, 1, None, &|| {})?;
                    let t = calls::diff(&b, &n, 0);
                    let regressions = if rules.is_empty() {
                        0
                    } else {
                        rule::check(&funcs::diff(&[&b[..]], &[&n[..]]), rules, gate).0.len()
                    };
                    Ok(Drift {
                        input: input.clone(),
                        calls: (t.iter().map(|t| t.base_calls).sum(), t.iter().map(|t| t.new_calls).sum()),
                        changed: t.iter().map(ThreadDiff::len).sum(),
                        sum_abs_dur: t.iter().map(ThreadDiff::sum_abs_dur).fold(0.0, |a, b| a + b),
                        regressions,
                    })
                })();
                slots.lock().expect("no worker panics")[k] = Some(r);
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                if progress {
                    let _ = write!(io::stderr(), "\rjscalls: diff --corpus: {d}/{} inputs", inputs.len());
                }
            });
        }
    });
    if progress {
        let _ = writeln!(io::stderr());
    }
    results
}

/// The corpus report: how many inputs and calls changed, the worst inputs.
fn corpus_report(
    dir: &Path,
    specs: &(SideSpec, SideSpec),
    args: &DiffArgs,
    // The --fail-on regressions found, when there are rules.
    regressions: Option<usize>,
    drifts: &[Drift],
    failed: usize,
) -> String {
    let changed_inputs = drifts.iter().filter(|d| d.changed > 0).count();
    let calls_changed: usize = drifts.iter().map(|d| d.changed).sum();
    let sum: f64 = drifts.iter().map(|d| d.sum_abs_dur).fold(0.0, |a, b| a + b);
    let mut worst: Vec<&Drift> = drifts.iter().filter(|d| d.changed > 0).collect();
    worst.sort_by(|a, b| {
        b.sum_abs_dur.total_cmp(&a.sum_abs_dur).then(b.changed.cmp(&a.changed)).then(a.input.cmp(&b.input))
    });
    let mut out = String::new();
    let (bo, no) = (&specs.0.options, &specs.1.options);
    match args.format {
        DiffFormat::Svg | DiffFormat::Pprof => unreachable!("--corpus with --format svg is refused before"),
        DiffFormat::Json => {
            let doc = serde_json::json!({
                "format": "jscalls-diff/1", "level": "corpus", "corpus": dir.display().to_string(),
                "baseOptions": bo, "newOptions": no, "inputs": drifts.len(), "failed": failed,
                "inputsChanged": changed_inputs, "callsChanged": calls_changed, "sumAbsDurChange": sum,
                "regressions": regressions.unwrap_or(0),
                "perInput": drifts.iter().map(|d| serde_json::json!({
                    "input": d.input.display().to_string(), "baseCalls": d.calls.0, "newCalls": d.calls.1,
                    "changed": d.changed, "sumAbsDurChange": d.sum_abs_dur, "regressions": d.regressions,
                })).collect::<Vec<_>>(),
            });
            out.push_str(&serde_json::to_string_pretty(&doc).expect("JSON values serialize"));
            out.push('\n');
        }
        DiffFormat::Text | DiffFormat::Markdown => {
            let markdown = args.format == DiffFormat::Markdown;
            if markdown {
                let _ = writeln!(out, "### jscalls diff: estimator drift\n");
            }
            let _ = writeln!(
                out,
                "{}: BASE '{bo}' vs NEW '{no}': {changed_inputs} of {} inputs changed, {calls_changed} calls changed, sum |dur change| {} ms{}",
                dir.display(),
                drifts.len(),
                ms(sum),
                if failed > 0 { format!(" ({failed} inputs could not be read)") } else { String::new() }
            );
            if !worst.is_empty() {
                if markdown {
                    let _ = writeln!(
                        out,
                        "\n| input | calls BASE → NEW | changed | Σ\\|Δdur\\| ms |\n|---|---:|---:|---:|"
                    );
                } else {
                    let _ = writeln!(out, "worst inputs:");
                }
                for d in worst.iter().take(args.top) {
                    let name = d.input.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                    if markdown {
                        let _ = writeln!(
                            out,
                            "| {} | {} → {} | {} | {} |",
                            md_cell(&name),
                            d.calls.0,
                            d.calls.1,
                            d.changed,
                            ms(d.sum_abs_dur)
                        );
                    } else {
                        let _ = writeln!(
                            out,
                            "  {name}: {} -> {} calls, {} changed, sum |dur change| {} ms",
                            d.calls.0,
                            d.calls.1,
                            d.changed,
                            ms(d.sum_abs_dur)
                        );
                    }
                }
            }
            if let Some(regressions) = regressions {
                let _ = writeln!(out, "fail-on: {regressions} regression(s) over the corpus");
            }
        }
    }
    out
}
