//! The `jscalls` command: arguments → `jscalls::assemble` → estimates written to an output
//! that is checked before any work and renamed into place only when complete.

mod alloc;
mod check_cmd;
mod diff_cmd;
mod export_cmd;
mod gzip;
#[cfg(unix)]
mod process;
mod summary;
mod tree_cmd;

use std::fs;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};

use jscalls::{
    assemble, Assembled, Config, CpuProfileMode, Diagnostics, EngineVersion, Error, Estimator, Limits, Source,
};

const EXAMPLES: &str = "\
Examples:
  jscalls calls trace.json.gz                      a summary per thread (on a terminal)
  jscalls calls trace.json.gz -o calls.json        every call, as JSON
  jscalls timeline trace.json -o timeline.json     the trace plus the calls, for a viewer
  jscalls calls CPU.*.cpuprofile -o out/           one calls file per input, in out/
  curl -s .../trace.json | jscalls calls | jq '.profiles[].callCount'

Exit status: 0 success, 1 bad input or I/O error (or warnings with --strict), 2 usage error.";

#[derive(Debug, Parser)]
#[command(
    name = "jscalls",
    version,
    about = "Estimate JS call timelines from V8 CPU profiles and Chrome traces, exactly as Chrome DevTools does",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Every estimated call of every profiled thread: a summary on a terminal, JSON in the
    /// DevTools oracle's format and order otherwise (or with --format json).
    #[command(after_help = "Examples:
  jscalls calls trace.json.gz                       summary: calls, JS time, top functions
  jscalls calls trace.json.gz -o calls.json.gz      every call, gzipped
  jscalls calls app.cpuprofile --cpuprofile-mode performance-panel
  jscalls calls < trace.json | jq '.profiles[] | {pid, tid, callCount}'")]
    Calls(CallsArgs),
    /// The input trace with each thread's estimated calls added as complete (X) events on a
    /// thread of their own: opens in DevTools, Perfetto, chrome://tracing and the Firefox Profiler.
    #[command(after_help = "Examples:
  jscalls timeline trace.json.gz -o timeline.json
  jscalls timeline CPU.20250101.cpuprofile -o timeline.json.gz
  cat trace.json | jscalls timeline > timeline.json")]
    Timeline(OutputArgs),
    /// Call trees of functions from the estimated calls, weighted by self time: top-down,
    /// inverted (bottom-up) or a flat list, with the Firefox Profiler's transforms.
    #[command(after_help = "Examples:
  jscalls tree trace.json.gz                         every thread with calls, busiest first
  jscalls tree trace.json.gz --thread CrRendererMain --js-only --depth 6
  jscalls tree trace.json.gz --invert                bottom-up: where the self time is, and its callers
  jscalls tree trace.json.gz --flat --min-percent 1
  jscalls tree app.cpuprofile --transform 'focus-function:render' --transform 'merge-function:wrapper'
  jscalls tree trace.json.gz --format json -o tree.json

Transforms (applied in order, each to the tree the ones before it made):
  merge:A>B>C  merge-function:F  merge-subtree:A>B  drop:A>B  drop-function:F
  focus:A>B  focus-function:F  collapse-recursion:F  collapse-indirect-recursion:F
  collapse-resource:URL
A path names functions from a root, separated by '>'; a function is its name, or its label
as the text tree prints it (`name url:line:column`) when several share the name.")]
    Tree(TreeArgs),
    /// The calls (or samples) for other tools: speedscope, the Firefox Profiler, collapsed
    /// stacks for flame-graph tools, an SVG flame graph. `--thread`, `--js-only`, `--transform`
    /// and `--weight` act as in `tree`.
    #[command(after_help = "Examples:
  jscalls export trace.json.gz -o trace.speedscope.json       open in https://www.speedscope.app
  jscalls export trace.json.gz -o trace.json.gz               open in https://profiler.firefox.com
  jscalls export trace.json.gz -o main.svg --thread CrRendererMain --js-only
  jscalls export trace.json.gz -o chart.svg --by-time         a flame chart: time runs left to right
  jscalls export app.cpuprofile --to collapsed --weight samples | inferno-flamegraph > f.svg

The format is --to, or else guessed from OUT: *.speedscope.json; *.json or *.json.gz (the
Firefox Profiler); *.collapsed / *.folded; *.svg.")]
    Export(ExportArgs),
    /// Compares two estimates: call by call (two estimators on one input, or two versions'
    /// calls outputs), or function by function (two recordings, or two groups of --runs);
    /// --fail-on turns it into a CI gate (exit 3 on a regression).
    #[command(after_help = "Examples:
  jscalls diff trace.json.gz --base-opt '--engine 0.0.65' --new-opt '--engine latest'
  jscalls diff old.calls.json new.calls.json                 two versions' outputs, call by call
  jscalls diff before.json.gz after.json.gz --fail-on 'self>+10%' --fail-on 'total>+5ms@render'
  jscalls diff --runs before/ after/ --fail-on 'self>+10%'   medians, Mann-Whitney per function
  jscalls diff --corpus traces/ --base-opt '--engine 0.0.65' --new-opt '--engine latest'
  jscalls diff a.json b.json --format markdown >> \"$GITHUB_STEP_SUMMARY\"

A rule is METRIC OP CHANGE[@TARGET]: METRIC self, total or calls; OP > (grew by more than) or
< (shrank by more than, with a negative CHANGE); CHANGE with %, s, ms or us (calls: a count or
%); TARGET a function (name, or `name url:line:column`) or a call-tree path `a>b>c`; without
one, every function. Relative time rules skip functions under --min-time in both.

Exit status: 0 no regression, 1 bad input, 2 usage error, 3 a --fail-on rule broken.")]
    Diff(DiffArgs),
    /// Checks a recording against a budget file (TOML): per function self or total time,
    /// calls, the longest call, JS time per thread, long tasks; exit 3 when a rule fails.
    #[command(after_help = "Examples:
  jscalls check trace.json.gz --budget budget.toml
  jscalls check trace.json.gz --budget budget.toml --format junit -o report.xml

A budget file:
  [[rule]]
  function = \"render\"          # by name, or `name url:line:column`
  thread = \"CrRendererMain\"    # a thread name or PID:TID (default: every thread)
  self = \"20ms\"                # at most; also total, calls, longest-call
  [[rule]]
  thread = \"CrRendererMain\"
  js = \"300ms\"                 # time in JavaScript and what it calls
  [[rule]]
  long-tasks = 2                 # tasks longer than long-task (default 50ms)
  name = \"at most two long tasks\"

Exit status: 0 every rule holds, 1 bad input, 2 bad budget or usage, 3 a rule fails.")]
    Check(CheckArgs),
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// A trace or .cpuprofile, gzipped or not.
    input: PathBuf,
    /// The budget file (TOML, `[[rule]]` tables; see below).
    #[arg(long, value_name = "FILE")]
    budget: PathBuf,
    /// Where to write the report (default: standard output).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// `text`, `json` (`jscalls-check/1`), `markdown` or `junit` (JUnit XML: a test case per rule).
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// A line per rule.
    Text,
    /// `jscalls-check/1`.
    Json,
    /// A table for a CI job summary or a pull request.
    Markdown,
    /// JUnit XML, which CI systems show as test results.
    Junit,
}

#[derive(Debug, Args)]
struct DiffArgs {
    /// BASE and NEW: traces, .cpuprofiles or calls outputs (jscalls-calls/1); one input with
    /// --base-opt/--new-opt; with --runs, two folders or comma-separated lists of runs.
    inputs: Vec<PathBuf>,
    /// Where to write the report (default: standard output).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Options that estimate BASE, such as '--engine 0.0.65' (--engine, --cpuprofile-mode,
    /// --show-all-events, --estimator).
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    base_opt: Option<String>,
    /// Options that estimate NEW.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    new_opt: Option<String>,
    /// Compare calls (default for one recording) or functions and call-tree nodes (default
    /// for two recordings).
    #[arg(long, value_enum)]
    level: Option<Level>,
    /// BASE and NEW are groups of runs: medians per function, and a change counts for
    /// --fail-on only when a one-sided Mann-Whitney test gives p < --alpha.
    #[arg(long)]
    runs: bool,
    /// Every input in DIR, estimated with --base-opt and with --new-opt, in parallel.
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// A rule that fails the run (exit 3) when broken (repeatable; see below).
    #[arg(long = "fail-on", value_name = "RULE")]
    fail_on: Vec<String>,
    /// `text`, `json` (`jscalls-diff/1`) or `markdown` (for a CI job summary or a pull request).
    #[arg(long, value_enum, default_value = "text")]
    format: DiffFormat,
    /// Rows shown per table in text and markdown (the rest: counted, or folded in markdown).
    #[arg(long, default_value_t = 20, value_name = "N")]
    top: usize,
    /// Relative time rules ignore functions under this many ms on both sides.
    #[arg(long, default_value_t = 1.0, value_name = "MS")]
    min_time: f64,
    /// With --runs: the significance level of the one-sided Mann-Whitney test.
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    alpha: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Level {
    /// Call by call: added, removed, changed.
    Calls,
    /// Per function and per call-tree node: self, total, calls.
    Functions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DiffFormat {
    /// Tables for a terminal.
    Text,
    /// `jscalls-diff/1`: every change.
    Json,
    /// The top changes and a folded section with the rest.
    Markdown,
}

#[derive(Debug, Args)]
struct ExportArgs {
    #[command(flatten)]
    out: OutputArgs,
    /// The format (default: from OUT's name).
    #[arg(long, value_enum)]
    to: Option<ExportFormat>,
    /// Stacks in time order (a flame chart) instead of merged (a flame graph): collapsed, svg.
    #[arg(long)]
    by_time: bool,
    /// Draw the SVG top-down (an icicle graph).
    #[arg(long)]
    icicle: bool,
    #[command(flatten)]
    select: SelectArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// speedscope's JSON: one profile per thread; evented (the calls at their estimated times)
    /// or, with --weight samples|sample-time, sampled.
    Speedscope,
    /// The Firefox Profiler's processed profile (gzipped when OUT ends in .gz): a thread per
    /// thread, the calls as samples at their estimated times, weighing their µs.
    Firefox,
    /// `a;b;c 1234` per stack: self time in whole µs (or samples), the input of flame-graph tools.
    Collapsed,
    /// An SVG flame graph (or flame chart with --by-time), drawn by inferno.
    Svg,
}

impl ExportFormat {
    /// The format an output's name implies.
    fn from_path(p: &Path) -> Option<ExportFormat> {
        let name = p.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".speedscope.json") {
            Some(ExportFormat::Speedscope)
        } else if name.ends_with(".collapsed") || name.ends_with(".folded") || name.ends_with(".collapsed.txt") {
            Some(ExportFormat::Collapsed)
        } else if name.ends_with(".svg") {
            Some(ExportFormat::Svg)
        } else if name.ends_with(".json") {
            Some(ExportFormat::Firefox)
        } else {
            None
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            ExportFormat::Speedscope => ".speedscope.json",
            ExportFormat::Firefox => ".profile.json.gz",
            ExportFormat::Collapsed => ".collapsed",
            ExportFormat::Svg => ".svg",
        }
    }
}

#[derive(Debug, Args)]
struct TreeArgs {
    #[command(flatten)]
    out: OutputArgs,
    /// `text` (the default) or `json` (the `jscalls-tree/1` document).
    #[arg(long, value_enum, default_value = "text")]
    format: TreeFormat,
    /// Bottom-up: the functions that have self time first, then their callers.
    #[arg(long, conflicts_with = "flat")]
    invert: bool,
    /// One line per function: self and total time, most self time first.
    #[arg(long)]
    flat: bool,
    /// Leave out nodes under this share of their thread's time (default: 0.5 on a terminal, else 0).
    #[arg(long, value_name = "P")]
    min_percent: Option<f64>,
    /// Show nodes down to this depth (0: the roots only).
    #[arg(long, value_name = "N")]
    depth: Option<usize>,
    #[command(flatten)]
    select: SelectArgs,
}

/// What `tree` and `export` take from each thread: which threads, and the stacks' shape.
#[derive(Debug, Args)]
struct SelectArgs {
    /// Only this thread: `PID:TID` or its name (default: every thread with calls, busiest first).
    #[arg(long, value_name = "PID:TID|NAME")]
    thread: Option<String>,
    /// Only JavaScript functions: the time of (program), (garbage collector), native and runtime
    /// frames goes to the nearest JavaScript caller.
    #[arg(long)]
    js_only: bool,
    /// A transform, `KIND:ARGUMENT` (repeatable, applied in order; see below).
    #[arg(long = "transform", value_name = "SPEC")]
    transforms: Vec<String>,
    /// What is weighed: the estimated calls' self time, or the profile's raw samples (each
    /// counting 1, or the time to the next sample).
    #[arg(long, value_enum, default_value = "self-time")]
    weight: WeightArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum WeightArg {
    /// Each estimated call's self time (µs) on the stack of the calls around it.
    SelfTime,
    /// Each CPU profile sample counts 1.
    Samples,
    /// Each CPU profile sample counts the time to the next sample (µs).
    SampleTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TreeFormat {
    /// An indented tree: total and self time (ms and %), the function and its file:line:column.
    Text,
    /// `jscalls-tree/1`: per thread, nodes with func {name, url, line, column}, total, self
    /// (µs) and children.
    Json,
    /// DevTools' own Call tree and Bottom-up of every thread with calls, for its calls and for
    /// all its events (`devtools-tree/1`, the reference oracle's document, in ms).
    Devtools,
}

/// Options of every command, accepted before or after its name.
#[derive(Debug, Args)]
struct Global {
    /// Which DevTools to follow: `latest` is what current Chrome shows; `0.0.65` is the published
    /// npm engine that Lighthouse uses.
    #[arg(long, value_enum, default_value = "latest", global = true)]
    engine: EngineArg,
    /// How a .cpuprofile is turned into calls.
    #[arg(long, value_enum, default_value = "integrator", global = true)]
    cpuprofile_mode: CpuProfileModeArg,
    /// Keep frames of V8 runtime functions (url "native V8Runtime"), like DevTools' "show all events".
    #[arg(long, global = true)]
    show_all_events: bool,
    /// Where a call boundary that samples set is placed: `devtools` on the sample that saw the
    /// change; `midway` between that sample and the one before (halfway for a frame that
    /// changed alone there, in order when several did; in a sampling hole, as log-midway),
    /// with the sampler's measured lag and the invocation events taken into account;
    /// `log-midway` as `midway`, halfway in the logarithm of the call's duration rather than
    /// in time.
    #[arg(long, value_enum, default_value = "devtools", global = true)]
    estimator: EstimatorArg,
    /// Give each call "bounds": [earliestStart, latestStart, earliestEnd, latestEnd] (µs), the
    /// interval its true start and end lie in.
    #[arg(long, global = true)]
    bounds: bool,
    /// Fail (exit 1, nothing written) when the input has anything to warn about.
    #[arg(long, global = true)]
    strict: bool,
    /// Print no warnings and no progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Also print notes: what DevTools does by design (drops the about:blank renderer, …).
    #[arg(short, long, global = true)]
    verbose: bool,
    /// The deepest stack accepted, in frames.
    #[arg(long, default_value_t = Limits::default().max_depth, value_name = "FRAMES", global = true)]
    max_depth: u32,
    /// The largest single event (or top-level .cpuprofile value) accepted, in bytes.
    #[arg(long, default_value_t = 1 << 30, value_name = "BYTES", global = true)]
    max_event_bytes: usize,
    /// Threads that share the work (default: the CPUs, at most 8; 1 runs it all on one thread).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), global = true)]
    threads: Option<u16>,
    /// Symbols for a Firefox profile's native frames: LIB as the profile's libs name it, FILE as
    /// `nm --defined-only` prints it, gzipped or not (repeatable).
    #[arg(long = "symbols", value_name = "LIB=FILE", global = true)]
    symbols: Vec<String>,
}

#[derive(Debug, Args)]
struct OutputArgs {
    /// Traces (JSON array or {traceEvents}) or .cpuprofiles, gzipped or not; `-` or nothing
    /// reads standard input. The kind is detected from the content.
    inputs: Vec<PathBuf>,
    /// Where to write: a file (gzipped when it ends in .gz), `-` for standard output, or with
    /// several inputs a directory (one NAME.calls.json or NAME.timeline.json per input).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Flush the output file to disk before renaming it into place, so that it survives a
    /// system crash or power cut whole (costs a few milliseconds).
    #[arg(long)]
    fsync: bool,
}

#[derive(Debug, Args)]
struct CallsArgs {
    #[command(flatten)]
    out: OutputArgs,
    /// `summary` (the default on a terminal) or `json` (the default elsewhere).
    #[arg(long, value_enum)]
    format: Option<CallsFormat>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CallsFormat {
    /// Per thread: calls, JS time, the functions with the most self time.
    Summary,
    /// Every call, one per line, in the DevTools oracle's format.
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CpuProfileModeArg {
    /// The same SamplesIntegrator as for traces, with no trace events.
    Integrator,
    /// The Performance panel's algorithm for a loaded .cpuprofile (forEachFrame): meta frames
    /// such as (program) and (idle) are calls, and the last sample lasts one mean interval.
    PerformancePanel,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum EstimatorArg {
    /// DevTools' own estimate, call for call.
    Devtools,
    /// DevTools' rules, each boundary that samples set between its samples (halfway when its
    /// frame changed alone; in a sampling hole, by the call's log duration).
    Midway,
    /// As midway, each boundary placed halfway on a log scale of the call's duration: short
    /// calls are closer to the truth, calls of 0.2 ms or more a little farther.
    LogMidway,
}

/// Whether `--bounds` or a refined estimator (`midway`, `log-midway`) is asked of the
/// Performance panel's calls, which they do not apply to (they work on the integrator's).
fn refines_panel_calls(cfg: &Config) -> bool {
    cfg.cpuprofile_mode == CpuProfileMode::PerformancePanel && (cfg.bounds || cfg.estimator != Estimator::DevTools)
}

impl EstimatorArg {
    fn estimator(self) -> Estimator {
        match self {
            EstimatorArg::Devtools => Estimator::DevTools,
            EstimatorArg::Midway => Estimator::Midway,
            EstimatorArg::LogMidway => Estimator::LogMidway,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum EngineArg {
    /// @paulirish/trace_engine 0.0.65, the published engine that Lighthouse uses.
    #[value(name = "0.0.65")]
    V0065,
    /// What current Chrome DevTools shows (the newest DevTools source): fake-JS mode after
    /// trace-id events, samples-only threads integrated, no auction-worklet exception.
    Latest,
}

impl EngineArg {
    fn version(self) -> EngineVersion {
        match self {
            EngineArg::V0065 => EngineVersion::V0_0_65,
            EngineArg::Latest => EngineVersion::Latest,
        }
    }
}

impl CpuProfileModeArg {
    fn mode(self) -> CpuProfileMode {
        match self {
            CpuProfileModeArg::Integrator => CpuProfileMode::Integrator,
            CpuProfileModeArg::PerformancePanel => CpuProfileMode::PerformancePanel,
        }
    }
}

impl Global {
    fn config(&self) -> Config {
        let mut cfg = Config::default();
        cfg.cpuprofile_mode = self.cpuprofile_mode.mode();
        cfg.engine = self.engine.version();
        cfg.show_all_events = self.show_all_events;
        cfg.estimator = self.estimator.estimator();
        cfg.bounds = self.bounds;
        cfg.limits.max_depth = self.max_depth;
        cfg.max_event_bytes = self.max_event_bytes;
        if let Some(n) = self.threads {
            cfg.threads = usize::from(n);
        }
        // JSCALLS_NO_MMAP=1: read a plain file instead of mapping it (a file that another
        // program may still be rewriting).
        cfg.mmap = std::env::var_os("JSCALLS_NO_MMAP").is_none();
        cfg
    }
}

/// See `alloc.rs`.
#[global_allocator]
static ALLOC: alloc::Split = alloc::Split;

/// Writes a line on stderr; a full or closed stderr is not worth a panic.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(io::stderr().lock(), $($t)*);
    }};
}

fn main() -> ExitCode {
    // A signal that stops the command removes the temporary output first.
    #[cfg(unix)]
    process::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(()) => exit_now(0),
        Err(Failed::Usage(m)) => {
            say!("jscalls: error: {m}");
            ExitCode::from(2)
        }
        Err(Failed::Reported) => exit_now(1),
        Err(Failed::Pipe) => exit_now(0),
        Err(Failed::Regression) => exit_now(3),
    }
}

/// Ends the run at once with `code`, once the standard streams are flushed (see
/// `process::exit_now`).
fn exit_now(code: u8) -> ExitCode {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    #[cfg(unix)]
    process::exit_now(code);
    #[cfg(not(unix))]
    ExitCode::from(code)
}

/// Why the command failed.
enum Failed {
    /// A usage error (exit 2), not yet printed.
    Usage(String),
    /// Errors already printed (exit 1).
    Reported,
    /// The reader of standard output went away: stop, successfully.
    Pipe,
    /// `diff --fail-on` or `check` found a regression (exit 3), already reported.
    Regression,
}

/// What one run writes.
#[derive(Clone, Copy)]
enum Product<'a> {
    Calls(CallsFormat),
    Timeline,
    Tree(&'a TreeArgs),
    Export(&'a ExportArgs, ExportFormat),
}

fn run(cli: Cli) -> Result<(), Failed> {
    let mut cfg = cli.global.config();
    cfg.symbols = read_symbols(&cli.global.symbols)?;
    if refines_panel_calls(&cfg) {
        return Err(Failed::Usage(
            "--bounds and --estimator (midway, log-midway) work on the integrator's calls: leave out --cpuprofile-mode performance-panel"
                .to_owned(),
        ));
    }
    let (args, product) = match &cli.command {
        Command::Diff(d) => return diff_cmd::run(d, &cli.global, &cfg),
        Command::Check(c) => return check_cmd::run(c, &cli.global, &cfg),
        Command::Calls(c) => {
            let to_terminal = c.out.output.as_deref().is_none_or(|o| o == Path::new("-")) && io::stdout().is_terminal();
            let format = c.format.unwrap_or(if to_terminal { CallsFormat::Summary } else { CallsFormat::Json });
            (&c.out, Product::Calls(format))
        }
        Command::Timeline(o) => (o, Product::Timeline),
        Command::Tree(t) => {
            if let (TreeFormat::Devtools, Some(opt)) = (t.format, tree_cmd::devtools_conflicts(t)) {
                return Err(Failed::Usage(format!(
                    "{opt} shapes jscalls' own trees; --format devtools writes DevTools' trees of every thread as they are"
                )));
            }
            (&t.out, Product::Tree(t))
        }
        Command::Export(e) => {
            let out = e.out.output.as_deref().filter(|o| *o != Path::new("-"));
            let format = match (e.to, out.and_then(ExportFormat::from_path)) {
                (Some(f), _) | (None, Some(f)) => f,
                (None, None) => {
                    return Err(Failed::Usage(
                        "export: give --to speedscope|firefox|collapsed|svg, or -o a name that says it (x.speedscope.json, x.json.gz, x.collapsed, x.svg)"
                            .to_owned(),
                    ))
                }
            };
            if format != ExportFormat::Svg && e.icicle {
                return Err(Failed::Usage("--icicle draws an SVG: --to svg".to_owned()));
            }
            if format == ExportFormat::Speedscope && e.by_time {
                return Err(Failed::Usage(
                    "--by-time is for collapsed stacks and SVG; speedscope has both views".to_owned(),
                ));
            }
            (&e.out, Product::Export(e, format))
        }
    };
    let inputs: Vec<Option<&Path>> = if args.inputs.is_empty() {
        vec![None]
    } else {
        args.inputs.iter().map(|p| (p != Path::new("-")).then_some(p.as_path())).collect()
    };
    if inputs.iter().filter(|i| i.is_none()).count() > 1 {
        return Err(Failed::Usage("standard input (-) can be read only once".to_owned()));
    }
    if inputs.contains(&None) && io::stdin().is_terminal() {
        return Err(Failed::Usage(
            "no input: give a trace or .cpuprofile file (jscalls calls trace.json), or pipe one in; --help for more"
                .to_owned(),
        ));
    }
    let outputs = plan_outputs(&inputs, args.output.as_deref(), product)?;
    let mut failed = false;
    for (input, output) in inputs.iter().zip(&outputs) {
        let name = input.map_or_else(|| "<stdin>".to_owned(), |p| p.display().to_string());
        if inputs.len() > 1 && output.is_none() {
            // Several summaries on standard output: each under its input's name.
            let mut stdout = io::stdout().lock();
            let _ = writeln!(stdout, "{name}");
        }
        match run_one(*input, output.as_deref(), product, &cli.global, &cfg, args.fsync) {
            Ok(()) => {}
            Err(Failed::Usage(m)) => return Err(Failed::Usage(m)),
            Err(Failed::Pipe) => return Ok(()),
            Err(Failed::Reported) => failed = true,
            Err(Failed::Regression) => return Err(Failed::Regression),
        }
    }
    if failed {
        Err(Failed::Reported)
    } else {
        Ok(())
    }
}

/// A usage error when `out` is one of `inputs`: an input is never overwritten.
fn refuse_overwrite(out: Option<&Path>, inputs: &[&Path]) -> Result<(), Failed> {
    if let Some(o) = out.filter(|o| *o != Path::new("-")) {
        if let Some(i) = inputs.iter().find(|i| same_file(i, o)) {
            return Err(Failed::Usage(format!(
                "the output {} is the input {}; refusing to overwrite it",
                o.display(),
                i.display()
            )));
        }
    }
    Ok(())
}

/// The `--symbols LIB=FILE` tables, read before any work.
fn read_symbols(
    specs: &[String],
) -> Result<std::collections::BTreeMap<String, std::sync::Arc<jscalls::Symbols>>, Failed> {
    let mut out = std::collections::BTreeMap::new();
    for spec in specs {
        let Some((lib, file)) = spec.split_once('=').filter(|(l, f)| !l.is_empty() && !f.is_empty()) else {
            return Err(Failed::Usage(format!("--symbols '{spec}': expected LIB=FILE (nm --defined-only output)")));
        };
        let ctx = |e| failure(file, Error::io(format!("cannot read the symbols for {lib}"), e));
        let text = if file.ends_with(".gz") {
            let mut t = String::new();
            let f = fs::File::open(file).map_err(ctx)?;
            flate2::read::MultiGzDecoder::new(f).read_to_string(&mut t).map_err(ctx)?;
            t
        } else {
            fs::read_to_string(file).map_err(ctx)?
        };
        let symbols =
            jscalls::Symbols::from_nm(&text).map_err(|m| Failed::Usage(format!("--symbols {spec}: {file}: {m}")))?;
        out.insert(lib.to_owned(), std::sync::Arc::new(symbols));
    }
    Ok(out)
}

/// Each input's output path (None: standard output), decided before any work.
fn plan_outputs(
    inputs: &[Option<&Path>],
    output: Option<&Path>,
    product: Product,
) -> Result<Vec<Option<PathBuf>>, Failed> {
    let output = output.filter(|o| *o != Path::new("-"));
    if inputs.len() == 1 {
        return Ok(vec![output.map(Path::to_path_buf)]);
    }
    match output {
        Some(dir) if dir.is_dir() => {
            let suffix = match product {
                Product::Calls(CallsFormat::Json) => ".calls.json",
                Product::Calls(CallsFormat::Summary) => ".summary.txt",
                Product::Timeline => ".timeline.json",
                Product::Tree(t) if t.format == TreeFormat::Json => ".tree.json",
                Product::Tree(t) if t.format == TreeFormat::Devtools => ".devtools-tree.json",
                Product::Tree(_) => ".tree.txt",
                Product::Export(_, f) => f.suffix(),
            };
            let mut seen = std::collections::BTreeSet::new();
            let mut out = Vec::new();
            for input in inputs {
                let path = dir.join(format!("{}{suffix}", stem(input.expect("only one input is stdin"))));
                if !seen.insert(path.clone()) {
                    return Err(Failed::Usage(format!("two inputs would both be written to {}", path.display())));
                }
                out.push(Some(path));
            }
            Ok(out)
        }
        Some(o) => Err(Failed::Usage(format!(
            "{} inputs need -o DIR, an existing directory (one output per input); {} is not one",
            inputs.len(),
            o.display()
        ))),
        None if matches!(product, Product::Calls(CallsFormat::Summary) | Product::Tree(_)) => {
            Ok(vec![None; inputs.len()])
        }
        None => Err(Failed::Usage(format!(
            "{} inputs need -o DIR, an existing directory (one output per input), or --format summary",
            inputs.len()
        ))),
    }
}

/// An input's file name without `.gz`, `.json` and `.cpuprofile`.
fn stem(p: &Path) -> String {
    let mut s = p.file_name().map_or_else(|| "input".to_owned(), |f| f.to_string_lossy().into_owned());
    for ext in [".gz", ".json", ".cpuprofile"] {
        if let Some(t) = s.strip_suffix(ext) {
            s = t.to_owned();
        }
    }
    s
}

/// Reads one input and writes its output; errors are printed here, under the input's name.
fn run_one(
    input: Option<&Path>,
    out_path: Option<&Path>,
    product: Product<'_>,
    global: &Global,
    cfg: &Config,
    fsync: bool,
) -> Result<(), Failed> {
    let name = input.map_or_else(|| "<stdin>".to_owned(), |p| p.display().to_string());
    let fail = |e: Error| failure(&name, e);
    if let Some(i) = input {
        if let Some(o) = out_path {
            if same_file(i, o) {
                return Err(Failed::Usage(format!(
                    "the output {} is the input; refusing to overwrite it",
                    o.display()
                )));
            }
        }
        if out_path.is_none() && stdout_is(i) {
            return Err(Failed::Usage(format!(
                "standard output is the input {}; refusing to overwrite it",
                i.display()
            )));
        }
    }
    // The output is created first: a path that cannot be written fails before the work.
    let output = Output::create(out_path, fsync, cfg.threads).map_err(fail)?;
    let mut spill = None;
    let source = match input {
        Some(p) => Source::file(p),
        None => Source::stdin(),
    };
    // The timeline reads its input twice: a stream is kept in a temporary file on the way.
    let source = if matches!(product, Product::Timeline) && !source.can_reread() {
        let tmp = spill_stream(&source).map_err(fail)?;
        let s = Source::file(tmp.path());
        spill = Some(tmp);
        s
    } else {
        source
    };
    let progress = Progress::start(input, global.quiet);
    let mut cfg = cfg.clone();
    cfg.progress = progress.as_ref().map(|p| p.bytes.clone());
    cfg.keep_event_names = matches!(product, Product::Tree(t) if t.format == TreeFormat::Devtools)
        || matches!(product, Product::Export(_, ExportFormat::Firefox));
    let timing = Timing::start();
    let assembled = assemble(&source, &cfg);
    drop(progress);
    let (diagnostics, assembled) = assembled.map_err(fail)?;
    if let Some(t) = &timing {
        t.report_stages(&assembled);
    }
    report(&name, &diagnostics, global.quiet, global.verbose);
    if let Some(e) = strict_error(global, &diagnostics) {
        return Err(fail(e));
    }
    let input_label = match input {
        Some(p) => p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| name.clone()),
        None => "-".to_owned(),
    };
    let timing = Timing::start();
    if let Product::Tree(args) = product {
        if args.format == TreeFormat::Devtools {
            let result = output.write(|w| assembled.write_devtools_tree(w, &input_label));
            drop(spill);
            return result.map_err(fail);
        }
        let to_terminal = out_path.is_none() && io::stdout().is_terminal();
        let text = tree_cmd::render(assembled, args, to_terminal, &input_label, cfg.engine).map_err(|e| match e {
            tree_cmd::Failure::Usage(m) => Failed::Usage(m),
            tree_cmd::Failure::Input(e) => fail(e),
        })?;
        let result = output.write(|w| w.write_all(text.as_bytes()).map_err(|e| Error::io("cannot write the tree", e)));
        drop(spill);
        return result.map_err(fail);
    }
    if let Product::Export(args, format) = product {
        let rendered = export_cmd::render(assembled, args, format, &input_label, cfg.threads).map_err(|e| match e {
            tree_cmd::Failure::Usage(m) => Failed::Usage(m),
            tree_cmd::Failure::Input(e) => fail(e),
        })?;
        if let Some(t) = &timing {
            t.report("estimate+render");
        }
        let result = output.write(|w| rendered.write_to(w).map_err(|e| Error::io("cannot write the output", e)));
        drop(spill);
        if let Some(t) = &timing {
            t.report("estimate+render+write");
        }
        return result.map_err(fail);
    }
    let result = output.write(|w| match product {
        // Written above, from the same assembled input.
        Product::Tree(_) | Product::Export(..) => Ok(()),
        Product::Timeline => assembled.write_timeline(w, &source),
        Product::Calls(CallsFormat::Json) => assembled.write_calls(w, &input_label),
        Product::Calls(CallsFormat::Summary) => write_summary(w, assembled, &diagnostics, cfg.engine, cfg.estimator),
    });
    drop(spill);
    if let Some(t) = &timing {
        t.report("estimate+write");
    }
    result.map_err(fail)
}

/// Prints `e` under the input's name (nothing for a closed standard output).
fn failure(name: &str, e: Error) -> Failed {
    if is_broken_pipe(&e) {
        return Failed::Pipe;
    }
    match &e {
        Error::Input { location: Some(_), .. } => say!("jscalls: error: {name}:{e}"),
        Error::Io { .. } => say!("jscalls: error: {e}"),
        _ => say!("jscalls: error: {name}: {e}"),
    }
    Failed::Reported
}

/// Reads and estimates one input file for `diff` and `check`, with its warnings printed
/// (and turned into an error by --strict) under its name.
fn assemble_file(path: &Path, global: &Global, cfg: &Config) -> Result<Assembled, Failed> {
    let name = path.display().to_string();
    let (diagnostics, assembled) = assemble(&Source::file(path), cfg).map_err(|e| failure(&name, e))?;
    report(&name, &diagnostics, global.quiet, global.verbose);
    if let Some(e) = strict_error(global, &diagnostics) {
        return Err(failure(&name, e));
    }
    Ok(assembled)
}

/// With --strict, the error that warnings about the input become.
fn strict_error(global: &Global, d: &Diagnostics) -> Option<Error> {
    if !global.strict || d.total_significant() == 0 {
        return None;
    }
    let first = d.warnings().iter().find(|w| !w.kind.is_informational()).map(|w| w.to_string()).unwrap_or_default();
    Some(Error::Strict { count: d.total_significant(), first })
}

/// `JSCALLS_TIMING=1`: each stage's wall time, the process's CPU time and memory, on stderr
/// (for measurements).
struct Timing {
    start: std::time::Instant,
    cpu: f64,
}

impl Timing {
    fn start() -> Option<Timing> {
        std::env::var_os("JSCALLS_TIMING").map(|_| Timing { start: std::time::Instant::now(), cpu: cpu_seconds() })
    }

    fn report_stages(&self, a: &Assembled) {
        for (stage, t) in a.stage_times() {
            say!("jscalls: timing: {stage} {:.3} s", t.as_secs_f64());
        }
        self.report("read+assemble");
    }

    fn report(&self, what: &str) {
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
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    return process::cpu_seconds();
    #[cfg(not(unix))]
    0.0
}

/// A memory figure of this process from `/proc/self/status` (Linux; 0 elsewhere), in MB.
fn memory_mb(field: &str) -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0) / 1024
}

/// The calls summary, thread by thread.
fn write_summary(
    w: &mut dyn Write,
    assembled: Assembled,
    d: &Diagnostics,
    engine: EngineVersion,
    estimator: Estimator,
) -> Result<(), Error> {
    let engine = match engine {
        EngineVersion::V0_0_65 => "0.0.65",
        EngineVersion::Latest => "latest",
    };
    let how = match estimator {
        Estimator::DevTools => "estimates them",
        Estimator::Midway => "finds them, each boundary that samples set placed midway",
        Estimator::LogMidway => "finds them, each boundary that samples set placed midway in log duration",
    };
    let mut text = format!("JS calls as DevTools ({engine}) {how}; --format json or -o FILE for every call\n");
    let mut threads = 0;
    assembled.for_each_thread(|th| {
        threads += 1;
        summary::thread(&mut text, th);
        Ok::<(), Error>(())
    })?;
    if threads == 0 {
        text.push_str("  no profiled thread: the input has no CPU profile\n");
    }
    if d.total_significant() > 0 {
        text.push_str(&format!("  ({} warning(s) about the input: see above)\n", d.total_significant()));
    }
    w.write_all(text.as_bytes()).map_err(|e| Error::io("cannot write the summary", e))
}

fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
}

/// Copies a stream into a temporary file, so that it can be read twice. The first bytes are
/// looked at first: what cannot start a trace or a profile is not copied further, and the
/// read of the file then reports it.
fn spill_stream(source: &Source) -> Result<tempfile::NamedTempFile, Error> {
    let ctx = |e| Error::io("cannot keep standard input in a temporary file", e);
    let mut tmp = tempfile::Builder::new().prefix(".jscalls-input-").tempfile().map_err(ctx)?;
    let mut src = source.open()?;
    let read_err = |e| Error::io(format!("cannot read {}", source.display_name()), e);
    // Up to the first byte that is not whitespace (a pipe may hand over a byte at a time).
    let mut block = [0u8; 4096];
    let first = loop {
        let n = match src.read(&mut block) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_err(e)),
        };
        tmp.write_all(&block[..n]).map_err(ctx)?;
        if n == 0 {
            break None;
        }
        if let Some(&c) = block[..n].iter().find(|c| !c.is_ascii_whitespace()) {
            break Some(c);
        }
    };
    if matches!(first, Some(b'[' | b'{' | 0xEF)) {
        io::copy(&mut src, &mut tmp).map_err(read_err)?;
    }
    tmp.flush().map_err(ctx)?;
    Ok(tmp)
}

/// The output's buffer. Small writes (the timeline's lines, the headers) are gathered here;
/// writes at least this large bypass it, as the calls writer's rendered parts (about 256 KB) do.
const OUT_BUFFER: usize = 128 << 10;

/// Where one run writes, opened before the work starts.
enum Output {
    Stdout,
    /// A device or a pipe (`/dev/null`, a FIFO): written directly; renaming a file over it
    /// would replace it.
    Direct(fs::File, PathBuf),
    /// A temporary file next to the target, renamed over it when complete (flushed to disk
    /// first when its writeback is started early, with `--fsync`).
    Temp {
        file: EarlyWriteback,
        target: PathBuf,
        /// Gzipped, on this many threads.
        gzip: Option<usize>,
    },
}

impl Output {
    /// `threads`: how many may gzip an output whose name ends in `.gz`.
    fn create(path: Option<&Path>, fsync: bool, threads: usize) -> Result<Output, Error> {
        let Some(path) = path else {
            #[cfg(unix)]
            if !process::stdout_was_open() {
                return Err(Error::io("cannot write to standard output", io::Error::other("it is closed")));
            }
            return Ok(Output::Stdout);
        };
        // A symbolic link is written through: its target is replaced, the link stays.
        let target = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            _ => path.to_path_buf(),
        };
        let shown = path.display();
        // An already open descriptor named by path (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`)
        // is written directly, like a device: renaming a file over what it names would replace
        // the file the caller opened, or the link itself.
        let descriptor =
            [Path::new("/dev/stdout"), Path::new("/dev/stderr"), Path::new("/dev/fd"), Path::new("/proc/self/fd")]
                .iter()
                .any(|d| path.starts_with(d));
        if descriptor || fs::metadata(&target).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| Error::io(format!("cannot open {shown}"), e))?;
            return Ok(Output::Direct(file, path.to_path_buf()));
        }
        if target.is_dir() {
            return Err(Error::io(format!("cannot write {shown}"), io::Error::other("it is a directory")));
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            let why = if dir.exists() { "is not a directory" } else { "does not exist" };
            return Err(Error::io(
                format!("cannot write {shown}"),
                io::Error::other(format!("{} {why}", dir.display())),
            ));
        }
        let tmp = tempfile::Builder::new().prefix(".jscalls-").suffix(".tmp").tempfile_in(&dir).map_err(|e| {
            // Without the temporary file's name, which means nothing to the user.
            let e = e
                .raw_os_error()
                .map_or_else(|| io::Error::new(e.kind(), e.kind().to_string()), io::Error::from_raw_os_error);
            Error::io(format!("cannot write {shown}"), e)
        })?;
        #[cfg(unix)]
        process::set_pending(tmp.path());
        let gzip = path.extension().is_some_and(|e| e == "gz").then_some(threads);
        Ok(Output::Temp { file: EarlyWriteback::new(tmp, fsync), target, gzip })
    }

    /// Writes with `f` and, for a file, renames it into place; on failure nothing is left.
    fn write(self, f: impl FnOnce(&mut dyn Write) -> Result<(), Error>) -> Result<(), Error> {
        match self {
            Output::Stdout => {
                let mut w = BufWriter::with_capacity(OUT_BUFFER, io::stdout().lock());
                f(&mut w)?;
                w.flush().map_err(|e| Error::io("cannot write to standard output", e))
            }
            Output::Direct(file, path) => {
                let mut w = BufWriter::with_capacity(OUT_BUFFER, file);
                f(&mut w)?;
                w.flush().map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
            }
            Output::Temp { file, target, gzip } => {
                let fsync = file.early;
                let ctx = |what: &str| format!("cannot {what} {}", target.display());
                let result = (|| {
                    let mut w = BufWriter::with_capacity(OUT_BUFFER, file);
                    if let Some(threads) = gzip {
                        // The fastest level: a third larger than the default, several times faster.
                        gzip::gzip(threads, &mut w, |p| f(p)).map_err(|e| Error::io(ctx("write"), e))??;
                    } else {
                        f(&mut w)?;
                    }
                    let tmp = w.into_inner().map_err(|e| Error::io(ctx("write"), e.into_error()))?.file;
                    if fsync {
                        tmp.as_file().sync_all().map_err(|e| Error::io(ctx("write"), e))?;
                    }
                    // Temporary files are private (0600); the output gets the mode of the file
                    // it replaces, or the usual 0644.
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        let mode = fs::metadata(&target).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
                        tmp.as_file()
                            .set_permissions(fs::Permissions::from_mode(mode))
                            .map_err(|e| Error::io(ctx("set the permissions of"), e))?;
                    }
                    // A signal after the rename finds no temporary file to remove: harmless.
                    tmp.persist(&target).map_err(|e| Error::io(ctx("rename the output into"), e.error))?;
                    Ok(())
                })();
                // Renamed, or removed when dropped on failure.
                #[cfg(unix)]
                process::clear_pending();
                result
            }
        }
    }
}
/// A file being written that, when it is to be flushed to disk at the end (`--fsync`), asks
/// the kernel to start writing its bytes to disk a megabyte at a time, as soon as they are
/// written, so that the final `fsync` waits for the last megabyte instead of the whole output
/// (on Linux; elsewhere, or without `--fsync`, a plain file).
struct EarlyWriteback {
    file: tempfile::NamedTempFile,
    /// Whether writeback is started early.
    early: bool,
    /// Bytes written so far, and bytes whose writeback has been started.
    written: u64,
    started: u64,
}

impl EarlyWriteback {
    /// Writeback is started per this many bytes: the final `fsync` waits for up to this much
    /// besides the file's metadata.
    const STEP: u64 = 1 << 20;

    fn new(file: tempfile::NamedTempFile, early: bool) -> EarlyWriteback {
        EarlyWriteback { file, early, written: 0, started: 0 }
    }
}

impl Write for EarlyWriteback {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.as_file_mut().write(buf)?;
        self.written += n as u64;
        if self.early && self.written - self.started >= Self::STEP {
            #[cfg(unix)]
            process::start_writeback(self.file.as_file(), self.started, self.written - self.started);
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_file_mut().flush()
    }
}

/// Whether two paths name the same file (device and inode: hard links and bind mounts too).
fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => same_inode(&x, &y),
        _ => false,
    }
}

#[cfg(unix)]
fn same_inode(x: &fs::Metadata, y: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    x.dev() == y.dev() && x.ino() == y.ino()
}

#[cfg(not(unix))]
fn same_inode(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// Whether standard output is the file `input` (`jscalls timeline IN >> IN`).
fn stdout_is(input: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else { return false };
        let out = fs::File::from(fd).metadata();
        match (out, fs::metadata(input)) {
            (Ok(o), Ok(i)) => o.is_file() && same_inode(&o, &i),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = input;
        false
    }
}

/// A progress line on a terminal, shown once reading has taken a second.
struct Progress {
    bytes: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start(input: Option<&Path>, quiet: bool) -> Option<Progress> {
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
fn report(name: &str, d: &Diagnostics, quiet: bool, verbose: bool) {
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
        let _ = match w.location {
            Some(_) => writeln!(e, "jscalls: {label}: {name}:{w}"),
            None => writeln!(e, "jscalls: {label}: {name}: {w}"),
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
