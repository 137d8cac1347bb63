//! The command line: clap's types for every command and the options they share, and the
//! library's `Config` they make.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use jscalls::ranges::Query;
use jscalls::{Config, CpuProfileMode, EngineVersion, Estimator, Limits};

use super::export::ExportTo;

pub(crate) const EXAMPLES: &str = "\
Examples:
  jscalls calls trace.json.gz                      a summary per thread (on a terminal)
  jscalls calls trace.json.gz -o calls.json        every call, as JSON
  jscalls timeline trace.json -o timeline.json     the trace plus the calls, for a viewer
  jscalls calls CPU.*.cpuprofile -o out/           one calls file per input, in out/
  curl -s .../trace.json | jscalls calls | jq '.profiles[].callCount'

Exit status: 0 success, 1 bad input or I/O error (or warnings with --strict), 2 usage error,
3 a rule of diff --fail-on or check broken, 4 a check rule that measured nothing.";

#[derive(Debug, Parser)]
#[command(
    name = "jscalls",
    version,
    about = "Estimate JS call timelines from V8 CPU profiles and Chrome traces, exactly as Chrome DevTools does",
    after_help = EXAMPLES
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
    /// Time per line of source, as DevTools' Sources panel shows it: from the line each sample
    /// recorded (Chrome and Node traces) or the nodes' positionTicks (Node's --cpu-prof).
    #[command(after_help = "Examples:
  jscalls lines trace.json.gz                          the hottest lines of each thread
  jscalls lines app.cpuprofile --top 40
  jscalls lines trace.json.gz --source dist/               the hottest functions' source, time per line
  jscalls lines trace.json.gz --format json -o lines.json
  jscalls lines trace.json.gz --format devtools        DevTools' own per-line times (devtools-lines/1)")]
    Lines(LinesArgs),
    /// Each call frame's name and original place as DevTools shows them once source maps
    /// apply: maps the user gives (pairs, a build folder) or a script's own inline map.
    #[command(after_help = "Examples:
  jscalls frames app.cpuprofile --source-maps dist/            maps and scripts of a build folder
  jscalls frames trace.json.gz --source-map https://cdn.example.com/app.js=dist/app.js.map \\
                               --script https://cdn.example.com/app.js=dist/app.js
  jscalls frames app.cpuprofile --source-maps dist/ --format smoracle   the source-map oracle's own form

Maps and scripts are read only from the files and folders given; nothing is fetched.")]
    Frames(FramesArgs),
    /// The ranges an input offers: its user-timing measures and marks, `console.time` spans
    /// and interactions (and with --event NAME, the events of that name DevTools lets a user
    /// select), with the options that pick each one.
    #[command(after_help = "Examples:
  jscalls ranges trace.json.gz                      measures, marks, interactions
  jscalls ranges trace.json.gz --event FunctionCall the events --event FunctionCall#K picks
  jscalls tree trace.json.gz --measure checkout     then look at one of them")]
    Ranges(RangesArgs),
    /// The calls (or samples) for other tools: speedscope, the Firefox Profiler, collapsed
    /// stacks for flame-graph tools, an SVG flame graph, pprof. `--thread`, `--js-only`,
    /// `--transform` and `--weight` act as in `tree`.
    #[command(after_help = "Examples:
  jscalls export trace.json.gz -o trace.speedscope.json       open in https://www.speedscope.app
  jscalls export trace.json.gz -o trace.json.gz               open in https://profiler.firefox.com
  jscalls export trace.json.gz -o main.svg --thread CrRendererMain --js-only
  jscalls export trace.json.gz -o chart.svg --by-time         a flame chart: time runs left to right
  jscalls export trace.json.gz -o trace.pb.gz                 for go tool pprof, Pyroscope, Parca
  jscalls export app.cpuprofile --to collapsed --weight samples | inferno-flamegraph > f.svg

The format is --to, or else guessed from OUT: *.speedscope.json; *.json or *.json.gz (the
Firefox Profiler); *.collapsed / *.folded; *.svg; *.pb.gz / *.pprof (pprof).")]
    Export(ExportArgs),
    /// One command to a viewer: the export served once from 127.0.0.1 and opened in the
    /// Firefox Profiler (or speedscope) in your browser; the URL is printed to open by hand.
    #[command(after_help = "Examples:
  jscalls view trace.json.gz                                   the Firefox Profiler
  jscalls view trace.json.gz --viewer speedscope --thread CrRendererMain
  jscalls view trace.json.gz --viewer-url http://localhost:4242  a self-hosted Firefox Profiler
  jscalls view trace.json.gz --no-open                         print the URL only

Only the profile's random path is answered, only to 127.0.0.1, and only the viewer's origin
may read it; the server stops once the viewer has the profile (or at --timeout, or Ctrl-C).")]
    View(ViewArgs),
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

  [[rule]]
  function = \"maybe\"
  calls = 10
  allow-missing = true         # pass when the recording has no such function

Exit status: 0 every rule holds, 1 bad input, 2 bad budget or usage, 3 a rule fails, 4 a rule
measured nothing (not allowed by allow-missing).")]
    Check(CheckArgs),
    /// A completion script for SHELL, on standard output.
    #[command(after_help = "Examples:
  jscalls completions bash > ~/.local/share/bash-completion/completions/jscalls
  jscalls completions zsh > ~/.zfunc/_jscalls        (with fpath+=~/.zfunc in .zshrc)
  jscalls completions fish > ~/.config/fish/completions/jscalls.fish")]
    Completions(CompletionsArgs),
    /// The manual page (roff), on standard output: `jscalls man > jscalls.1; man ./jscalls.1`.
    Man,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// A trace, .cpuprofile or Firefox profile, gzipped or not; several: runs of one scenario,
    /// each rule measured on each and held to the median.
    #[arg(required = true, value_name = "INPUT")]
    pub(crate) inputs: Vec<PathBuf>,
    /// The budget file (TOML, `[[rule]]` tables; see below).
    #[arg(long, value_name = "FILE")]
    pub(crate) budget: PathBuf,
    /// Where to write the report (default: standard output).
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// `text`, `json` (`jscalls-check/1`), `markdown` or `junit` (JUnit XML: a test case per rule).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: CheckFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
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
pub(crate) struct DiffArgs {
    /// BASE and NEW: traces, .cpuprofiles or calls outputs (jscalls-calls/1); one input with
    /// --base-opt/--new-opt; with --runs, two folders or comma-separated lists of runs.
    pub(crate) inputs: Vec<PathBuf>,
    /// Where to write the report (default: standard output).
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// Options that estimate BASE, such as '--engine 0.0.65' (--engine, --cpuprofile-mode,
    /// --show-all-events, --estimator).
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub(crate) base_opt: Option<String>,
    /// Options that estimate NEW.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub(crate) new_opt: Option<String>,
    /// Compare calls (default for one recording), functions and call-tree nodes (default for
    /// two recordings), or lines (the time DevTools' Sources panel gives each line).
    #[arg(long, value_enum)]
    pub(crate) level: Option<Level>,
    /// BASE and NEW are groups of runs: medians per function, and a change counts for
    /// --fail-on only when a one-sided Mann-Whitney test gives p < --alpha.
    #[arg(long)]
    pub(crate) runs: bool,
    /// Every input in DIR, estimated with --base-opt and with --new-opt, in parallel.
    #[arg(long, value_name = "DIR")]
    pub(crate) corpus: Option<PathBuf>,
    /// A rule that fails the run (exit 3) when broken (repeatable; see below).
    #[arg(long = "fail-on", value_name = "RULE")]
    pub(crate) fail_on: Vec<String>,
    /// `text`, `json` (`jscalls-diff/1`) or `markdown` (for a CI job summary or a pull request).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: DiffFormat,
    /// Rows shown per table in text and markdown (the rest: counted, or folded in markdown).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub(crate) top: usize,
    /// Relative time rules ignore functions under this many ms on both sides.
    #[arg(long, default_value_t = 1.0, value_name = "MS")]
    pub(crate) min_time: f64,
    /// With --runs: the significance level of the one-sided Mann-Whitney test.
    #[arg(long, default_value_t = 0.05, value_name = "P", value_parser = parse_alpha)]
    pub(crate) alpha: f64,
    /// Compare one range of each input (--range, --event, --measure, --between,
    /// --interaction), found in each: the same measure or interaction in BASE and NEW.
    #[command(flatten)]
    pub(crate) range: RangeArgs,
}

/// A significance level: a probability strictly between 0 and 1.
fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!("'{s}': expected a probability between 0 and 1 (such as 0.05)")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Level {
    /// Call by call: added, removed, changed.
    Calls,
    /// Per function and per call-tree node: self, total, calls.
    Functions,
    /// Per line of each script: the time `jscalls lines` gives it.
    Lines,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiffFormat {
    /// Tables for a terminal.
    Text,
    /// `jscalls-diff/1`: every change.
    Json,
    /// The top changes and a folded section with the rest.
    Markdown,
    /// A differential flame graph: NEW's stacks, red where they grew from BASE, blue where
    /// they shrank.
    Svg,
    /// A pprof profile of NEW's self time minus BASE's, per stack (gzipped when OUT ends in .gz).
    Pprof,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    /// The format (default: from OUT's name).
    #[arg(long, value_enum)]
    pub(crate) to: Option<ExportTo>,
    /// Stacks in time order (a flame chart) instead of merged (a flame graph): collapsed, svg.
    #[arg(long)]
    pub(crate) by_time: bool,
    /// Draw the SVG top-down (an icicle graph).
    #[arg(long)]
    pub(crate) icicle: bool,
    /// Firefox: put the text of each script found in DIR by its URL into the profile, for the
    /// Profiler's source view (repeatable; nothing outside DIR is read; `PREFIX=DIR`: the URLs
    /// under PREFIX are the files under DIR). Scripts whose text the trace carries need none.
    #[arg(long = "source", value_name = "[PREFIX=]DIR")]
    pub(crate) sources: Vec<PathBuf>,
    /// Firefox: leave the sources' text out of the profile (the trace's scripts, the maps'
    /// `sourcesContent`): a smaller file, whose source view fetches each file by its URL.
    #[arg(long, conflicts_with = "sources")]
    pub(crate) no_sources: bool,
    #[command(flatten)]
    pub(crate) select: SelectArgs,
}

#[derive(Debug, Args)]
pub(crate) struct TreeArgs {
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    /// `text` (the default), `json` (the `jscalls-tree/1` document) or `devtools` (DevTools' own
    /// Call tree and Bottom-up, `devtools-tree/1`).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: TreeFormat,
    /// Bottom-up: the functions that have self time first, then their callers.
    #[arg(long, conflicts_with = "flat")]
    pub(crate) invert: bool,
    /// One line per function: self and total time, most self time first.
    #[arg(long)]
    pub(crate) flat: bool,
    /// Leave out nodes under this share of their thread's time (default: 0.5 on a terminal, else 0).
    #[arg(long, value_name = "P")]
    pub(crate) min_percent: Option<f64>,
    /// Show nodes down to this depth (0: the roots only).
    #[arg(long, value_name = "N")]
    pub(crate) depth: Option<usize>,
    #[command(flatten)]
    pub(crate) select: SelectArgs,
}

/// The range a command looks at: one of a window, an event, a measure, two marks or an
/// interaction (see [`jscalls::ranges`]).
#[derive(Debug, Clone, Default, Args)]
#[group(id = "range-selection", multiple = false)]
pub(crate) struct RangeArgs {
    /// Only START..END: ms on the trace's clock (its events' `ts` / 1000), or `+A..+B` ms from
    /// the recording's start.
    #[arg(long, value_name = "START..END", value_parser = Query::window)]
    range: Option<Query>,
    /// Only the time of one trace event: the K-th (0-based, in time order) named NAME of the
    /// events DevTools lets a user click (complete events of its tracks, measures,
    /// console.time, EventTiming interactions).
    #[arg(long, value_name = "NAME[#K]", value_parser = Query::event)]
    event: Option<Query>,
    /// Only the time of one user-timing measure (`performance.measure`, or a `console.time`
    /// span): the K-th named NAME (0-based, in time order).
    #[arg(long, value_name = "NAME[#K]", value_parser = Query::measure)]
    measure: Option<Query>,
    /// Only the time from one `performance.mark` to another (each the K-th of its name).
    #[arg(long, value_name = "MARK[#K]..MARK[#K]", value_parser = Query::between)]
    between: Option<Query>,
    /// Only the time of one interaction (a click, a key press: its longest EventTiming event):
    /// `slowest` (as INP picks it), the K-th in time order, or `id=N`.
    #[arg(long, value_name = "slowest|K|id=N", value_parser = Query::interaction)]
    interaction: Option<Query>,
}

impl RangeArgs {
    /// The range asked for, if any.
    pub(crate) fn query(&self) -> Option<&Query> {
        self.range
            .as_ref()
            .or(self.event.as_ref())
            .or(self.measure.as_ref())
            .or(self.between.as_ref())
            .or(self.interaction.as_ref())
    }
}

#[derive(Debug, Args)]
pub(crate) struct LinesArgs {
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    /// `text` (the default), `json` (`jscalls-lines/1`) or `devtools` (the Sources panel's own
    /// sums, `devtools-lines/1`).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: LinesFormat,
    /// Lines shown per thread in the text view (default 20); with --source, functions listed
    /// (default 3).
    #[arg(long, value_name = "N")]
    pub(crate) top: Option<usize>,
    /// List the source of each thread's hottest functions with the time of each line, the
    /// scripts found in DIR by their URL (repeatable; nothing outside DIR is read; `PREFIX=DIR`:
    /// the URLs under PREFIX are the files under DIR).
    #[arg(long = "source", value_name = "[PREFIX=]DIR")]
    pub(crate) sources: Vec<PathBuf>,
    /// Only this thread: `PID:TID` or its name.
    #[arg(long, value_name = "PID:TID|NAME")]
    pub(crate) thread: Option<String>,
    /// Times by line and column (the column each sample recorded), as the newest DevTools keys
    /// them: text and JSON.
    #[arg(long)]
    pub(crate) columns: bool,
    /// List the source of each thread's hottest functions with the time of each line, from
    /// the folders of --source, the source maps' `sourcesContent` and the scripts' text the
    /// trace carries (--source implies it).
    #[arg(long)]
    pub(crate) list: bool,
    /// Only one range (--range, --event, --measure, --between, --interaction): each sample
    /// counts its time inside it (text and JSON).
    #[command(flatten)]
    pub(crate) range: RangeArgs,
}

/// Where source maps and generated scripts come from (never the network).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SourceMapArgs {
    /// The map of the script at URL (repeatable).
    #[arg(long = "source-map", value_name = "URL=FILE", global = true)]
    pub(crate) maps: Vec<String>,
    /// A build folder: a script's map found by the name its `sourceMappingURL` comment gives,
    /// or as NAME.js.map; a script's text found by its URL (repeatable; nothing outside DIR is
    /// read). `PREFIX=DIR`: the URLs under PREFIX are the files under DIR
    /// (`https://cdn.example.com/assets/=dist/`).
    #[arg(long = "source-maps", value_name = "[PREFIX=]DIR", global = true)]
    pub(crate) dirs: Vec<PathBuf>,
    /// The generated text of the script at URL, for its `sourceMappingURL` comment and the
    /// check DevTools makes before it takes a mapping's name (repeatable).
    #[arg(long = "script", value_name = "URL=FILE", global = true)]
    pub(crate) scripts: Vec<String>,
    /// Show every frame as recorded: no source map is applied.
    #[arg(long, global = true)]
    pub(crate) no_source_maps: bool,
}

#[derive(Debug, Args)]
pub(crate) struct FramesArgs {
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    /// `text` (the default), `json` (`jscalls-frames/1`) or `smoracle` (the source-map
    /// oracle's own document, for its compare.mjs).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: FramesFormat,
}

#[derive(Debug, Args)]
pub(crate) struct RangesArgs {
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    /// `text` (the default) or `json` (`jscalls-ranges/1`).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: RangesFormat,
    /// Also list the events named NAME that `--event NAME#K` picks from, in its order.
    #[arg(long, value_name = "NAME")]
    pub(crate) event: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RangesFormat {
    /// For a person: each range with the option that picks it.
    Text,
    /// `jscalls-ranges/1`.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FramesFormat {
    /// The frames a map renamed or placed, then the scripts and what was found for them.
    Text,
    /// `jscalls-frames/1`: every frame, recorded and resolved.
    Json,
    /// `smoracle/1`, as `../shared/smoracle/oracle.mjs` writes it.
    Smoracle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LinesFormat {
    /// Per thread, its hottest lines: self time (ms and %), file:line and the function.
    Text,
    /// `jscalls-lines/1`: per thread its lines (url, scriptId, line, ms, samples, function),
    /// most time first, and the sums over every thread.
    Json,
    /// DevTools' own per-line sums (`devtools-lines/1`, the oracle's `--lines` document).
    Devtools,
}

#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    /// A trace, .cpuprofile or Firefox profile (or, for speedscope, a *.speedscope.json export).
    pub(crate) input: PathBuf,
    /// Which viewer.
    #[arg(long, value_enum, default_value = "firefox")]
    pub(crate) viewer: ViewerArg,
    /// The viewer's address, for a self-hosted copy (default: https://profiler.firefox.com or
    /// https://www.speedscope.app).
    #[arg(long, value_name = "URL")]
    pub(crate) viewer_url: Option<String>,
    /// Print the URL; do not start a browser.
    #[arg(long)]
    pub(crate) no_open: bool,
    /// Stop serving after this many seconds if the viewer has not fetched the profile.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = parse_seconds)]
    pub(crate) timeout: f64,
    #[command(flatten)]
    pub(crate) select: SelectArgs,
}

/// A positive number of seconds.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() && x <= 86_400.0 => Ok(x),
        _ => Err(format!("'{s}': expected a number of seconds above 0 (at most a day)")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ViewerArg {
    /// The Firefox Profiler (its `from-url`).
    Firefox,
    /// speedscope (its `#profileURL=`).
    Speedscope,
}

/// What `tree` and `export` take from each thread: which threads, and the stacks' shape.
#[derive(Debug, Clone, Args)]
pub(crate) struct SelectArgs {
    /// Only this thread: `PID:TID` or its name (default: every thread with calls, busiest first).
    #[arg(long, value_name = "PID:TID|NAME")]
    pub(crate) thread: Option<String>,
    /// Only JavaScript functions: the time of (program), (garbage collector), native and runtime
    /// frames, and of the trace events inside calls (forced layouts, ...), goes to the nearest
    /// JavaScript caller.
    #[arg(long)]
    pub(crate) js_only: bool,
    /// A transform, `KIND:ARGUMENT` (repeatable, applied in order; see below).
    #[arg(long = "transform", value_name = "SPEC")]
    pub(crate) transforms: Vec<String>,
    /// What is weighed: the estimated calls' self time, or the profile's raw samples (each
    /// counting 1, or the time to the next sample).
    #[arg(long, value_enum, default_value = "self-time")]
    pub(crate) weight: WeightArg,
    /// Split each sample's function by the line it recorded: a `line N` frame under it (with
    /// --weight samples or sample-time).
    #[arg(long)]
    pub(crate) by_line: bool,
    /// A range (--range, --event, --measure, --between, --interaction): each call counts its
    /// self time inside it (with `tree --format devtools`, the trees DevTools shows for that
    /// range selected in the Performance panel).
    #[command(flatten)]
    pub(crate) range: RangeArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WeightArg {
    /// Each estimated call's self time (µs) on the stack of the calls around it.
    SelfTime,
    /// Each CPU profile sample counts 1.
    Samples,
    /// Each CPU profile sample counts the time to the next sample (µs).
    SampleTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TreeFormat {
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
pub(crate) struct Global {
    /// Which DevTools to follow: `latest` is what current Chrome shows; `0.0.65` is the published
    /// npm engine that Lighthouse uses.
    #[arg(long, value_enum, default_value = "latest", global = true)]
    pub(crate) engine: EngineArg,
    /// How a .cpuprofile is turned into calls.
    #[arg(long, value_enum, default_value = "integrator", global = true)]
    pub(crate) cpuprofile_mode: CpuProfileModeArg,
    /// Keep frames of V8 runtime functions (url "native V8Runtime"), like DevTools' "show all events".
    #[arg(long, global = true)]
    pub(crate) show_all_events: bool,
    /// Where a call boundary that samples set is placed: `devtools` on the sample that saw the
    /// change; `midway` between that sample and the one before (halfway for a frame that
    /// changed alone there, in order when several did; in a sampling hole, as log-midway),
    /// with the sampler's measured lag and the invocation events taken into account;
    /// `log-midway` as `midway`, halfway in the logarithm of the call's duration rather than
    /// in time.
    #[arg(long, value_enum, default_value = "devtools", global = true)]
    pub(crate) estimator: EstimatorArg,
    /// Give each call "bounds": [earliestStart, latestStart, earliestEnd, latestEnd] (µs), the
    /// interval its true start and end lie in.
    #[arg(long, global = true)]
    pub(crate) bounds: bool,
    /// Fail (exit 1, nothing written) when the input has anything to warn about.
    #[arg(long, global = true)]
    pub(crate) strict: bool,
    /// Print no warnings and no progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Also print notes: what DevTools does by design (drops the about:blank renderer, …).
    #[arg(short, long, global = true)]
    pub(crate) verbose: bool,
    /// The deepest stack accepted, in frames.
    #[arg(long, default_value_t = Limits::default().max_depth, value_name = "FRAMES", global = true)]
    pub(crate) max_depth: u32,
    /// The most frames one profile's samples may enter, one after another (each JavaScript
    /// frame entered is a call: a stack that goes thousands of frames deep and back at every
    /// sample makes billions).
    #[arg(long, default_value_t = Limits::default().max_calls, value_name = "CALLS", global = true)]
    pub(crate) max_calls: u64,
    /// The largest single event (or top-level .cpuprofile value) accepted, in bytes.
    #[arg(long, default_value_t = 1 << 30, value_name = "BYTES", global = true)]
    pub(crate) max_event_bytes: usize,
    /// Threads that share the work (default: the CPUs, at most 8; 1 runs it all on one thread).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), global = true)]
    pub(crate) threads: Option<u16>,
    /// Symbols for a Firefox profile's native frames: LIB as the profile's libs name it, FILE as
    /// `nm --defined-only` prints it, gzipped or not (repeatable).
    #[arg(long = "symbols", value_name = "LIB=FILE", global = true)]
    pub(crate) symbols: Vec<String>,
    #[command(flatten)]
    pub(crate) source_maps: SourceMapArgs,
}

#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// Traces (JSON array or {traceEvents}), .cpuprofiles or Firefox profiles, gzipped or not;
    /// `-` or nothing reads standard input. The kind is detected from the content.
    pub(crate) inputs: Vec<PathBuf>,
    /// Where to write: a file (gzipped when it ends in .gz), `-` for standard output, or a
    /// directory (an existing one, or a name ending in `/`): one output per input in it, named
    /// after the input (NAME.calls.json, NAME.timeline.json, NAME.tree.txt, ...).
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// Flush the output file to disk before renaming it into place, so that it survives a
    /// system crash or power cut whole (costs a few milliseconds; without it, a crash in the
    /// seconds after the command can leave the file's bytes unwritten).
    #[arg(long)]
    pub(crate) fsync: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CallsArgs {
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    /// Not an option of calls, which writes every thread: said so, rather than suggesting
    /// --threads.
    #[arg(long, hide = true, value_name = "THREAD")]
    pub(crate) thread: Option<String>,
    /// `summary` (the default on a terminal) or `json` (the default elsewhere).
    #[arg(long, value_enum)]
    pub(crate) format: Option<CallsFormat>,
    /// Only the calls that overlap a range (--range, --event, --measure, --between,
    /// --interaction), whole: a call keeps its own start and duration (with `--format json`).
    #[command(flatten)]
    pub(crate) range: RangeArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CallsFormat {
    /// Per thread: calls, JS time, the functions with the most self time.
    Summary,
    /// Every call, one per line, in the DevTools oracle's format.
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CpuProfileModeArg {
    /// DevTools' estimate for traces, with no trace events (what it does for a trace's profile).
    Integrator,
    /// The Performance panel's algorithm for a loaded .cpuprofile: meta frames
    /// such as (program) and (idle) are calls, and the last sample lasts one mean interval.
    PerformancePanel,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum EstimatorArg {
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
pub(crate) fn refines_panel_calls(cfg: &Config) -> bool {
    cfg.cpuprofile_mode == CpuProfileMode::PerformancePanel && (cfg.bounds || cfg.estimator != Estimator::DevTools)
}

impl EstimatorArg {
    pub(crate) fn estimator(self) -> Estimator {
        match self {
            EstimatorArg::Devtools => Estimator::DevTools,
            EstimatorArg::Midway => Estimator::Midway,
            EstimatorArg::LogMidway => Estimator::LogMidway,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum EngineArg {
    /// @paulirish/trace_engine 0.0.65, the published engine that Lighthouse uses.
    #[value(name = "0.0.65")]
    V0065,
    /// What current Chrome DevTools shows (the newest DevTools source): the samples after an
    /// event with a trace id make calls even outside a JS event; threads with samples and no
    /// trace events get calls; auction worklets are treated as any thread. (`v6` is the
    /// reference engine's name for it.)
    #[value(alias = "v6")]
    Latest,
}

impl EngineArg {
    pub(crate) fn version(self) -> EngineVersion {
        match self {
            EngineArg::V0065 => EngineVersion::V0_0_65,
            EngineArg::Latest => EngineVersion::Latest,
        }
    }
}

impl CpuProfileModeArg {
    pub(crate) fn mode(self) -> CpuProfileMode {
        match self {
            CpuProfileModeArg::Integrator => CpuProfileMode::Integrator,
            CpuProfileModeArg::PerformancePanel => CpuProfileMode::PerformancePanel,
        }
    }
}

impl Global {
    pub(crate) fn config(&self) -> Config {
        let mut cfg = Config::default();
        cfg.cpuprofile_mode = self.cpuprofile_mode.mode();
        cfg.engine = self.engine.version();
        cfg.show_all_events = self.show_all_events;
        cfg.estimator = self.estimator.estimator();
        cfg.bounds = self.bounds;
        cfg.limits.max_depth = self.max_depth;
        cfg.limits.max_calls = self.max_calls;
        cfg.max_event_bytes = self.max_event_bytes;
        // A trace's own scripts and maps apply unless maps are turned off.
        cfg.keep_scripts = !self.source_maps.no_source_maps;
        if let Some(n) = self.threads {
            cfg.threads = usize::from(n);
        }
        // JSCALLS_NO_MMAP=1: read a plain file instead of mapping it (a file that another
        // program may still be rewriting).
        cfg.mmap = std::env::var_os("JSCALLS_NO_MMAP").is_none();
        cfg
    }
}
