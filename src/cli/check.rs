//! `jscalls check`: a recording against a budget file of rules, each passed or failed with its
//! measured value; text, JSON, markdown or JUnit XML; exit 3 when a rule fails.

use std::cell::OnceCell;
use std::fmt::Write as _;
use std::io::Write as _;
use std::ops::Range;
use std::path::Path;

use rustc_hash::FxHashMap;
use serde::Deserialize;

use jscalls::diff::ThreadEstimate;
use jscalls::ranges::{Query, Timings};
use jscalls::tree::{CallTree, FuncId, StackId, Stacks, Transform};
use jscalls::{Config, Error};

use super::args::{CheckArgs, CheckFormat, Global};
use super::files::{self, Reads};
use super::output::Output;
use super::report::{assemble_file, failure, md_cell, md_code};
use super::tree::ThreadSpec;
use super::Failed;

/// The budget file: `[[rule]]` tables.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetFile {
    #[serde(default, rename = "rule")]
    rules: Vec<toml::Spanned<RuleToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RuleToml {
    name: Option<String>,
    thread: Option<String>,
    function: Option<String>,
    #[serde(rename = "self")]
    self_time: Option<toml::Spanned<Amount>>,
    total: Option<toml::Spanned<Amount>>,
    calls: Option<u64>,
    longest_call: Option<toml::Spanned<Amount>>,
    js: Option<toml::Spanned<Amount>>,
    long_tasks: Option<u64>,
    long_task: Option<toml::Spanned<Amount>>,
    /// The range's own length: a measure's or an interaction's duration (needs `within`).
    duration: Option<toml::Spanned<Amount>>,
    /// Only this range: `measure:NAME[#K]`, `interaction[:slowest|K|id=N]`, `event:NAME#K`,
    /// `marks:FROM..TO`, `range:START..END`.
    within: Option<toml::Spanned<String>>,
    /// A rule that measures nothing (its function or thread is not in the recording) passes.
    #[serde(default)]
    allow_missing: bool,
}

/// A time: `"20ms"`, `"0.5 s"`, `"300us"`, or a number of ms.
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Amount {
    Ms(f64),
    Text(String),
}

impl Amount {
    /// In µs.
    fn micros(&self) -> Result<f64, String> {
        let v = match self {
            Amount::Ms(ms) => ms * 1000.0,
            Amount::Text(t) => {
                let t = t.trim();
                let k = t.find(|c: char| c.is_alphabetic() || c == 'µ').unwrap_or(t.len());
                let n: f64 = t[..k].trim().parse().map_err(|_| format!("'{t}' is not a time such as \"20ms\""))?;
                match t[k..].trim() {
                    "s" => n * 1e6,
                    "ms" | "" => n * 1e3,
                    "us" | "µs" => n,
                    u => return Err(format!("'{t}': unknown unit '{u}' (s, ms or us)")),
                }
            }
        };
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err("a budget is a time of 0 or more".to_owned())
        }
    }
}

/// What a rule measures.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Measure {
    SelfTime,
    Total,
    Calls,
    LongestCall,
    Js,
    /// Tasks longer than this many µs.
    LongTasks(f64),
    /// The length of the rule's range.
    Duration,
}

impl Measure {
    fn key(self) -> &'static str {
        match self {
            Measure::SelfTime => "self",
            Measure::Total => "total",
            Measure::Calls => "calls",
            Measure::LongestCall => "longest-call",
            Measure::Js => "js",
            Measure::LongTasks(_) => "long-tasks",
            Measure::Duration => "duration",
        }
    }

    fn is_count(self) -> bool {
        matches!(self, Measure::Calls | Measure::LongTasks(_))
    }
}

/// A rule, checked.
struct Rule {
    line: usize,
    name: String,
    thread: Option<String>,
    function: Option<String>,
    measure: Measure,
    /// The most allowed (µs, or a count).
    limit: f64,
    /// Whether measuring nothing is allowed.
    allow_missing: bool,
    /// The range it measures in (None: the whole recording).
    within: Option<Query>,
}

/// Line and column (1-based) of a byte offset, given where each line starts (found once: a
/// budget of many rules asks for each rule's line).
fn line_col(line_starts: &[usize], at: usize) -> (usize, usize) {
    let line = line_starts.partition_point(|&s| s <= at);
    (line, at - line_starts[line - 1] + 1)
}

/// Reads and checks a budget file; errors name its line.
fn read_budget(path: &Path) -> Result<Vec<Rule>, Failed> {
    let name = path.display().to_string();
    let bytes = files::read_option_file(path, "the budget", files::BUDGET_LIMIT).map_err(|e| failure(&name, e))?;
    let text = files::option_text(path, bytes)?;
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let at = |span: Option<Range<usize>>| span.map_or((1, 1), |s| line_col(&line_starts, s.start.min(text.len())));
    let file: BudgetFile = toml::from_str(&text).map_err(|e| {
        let (l, c) = at(e.span());
        let message = e.message().trim_end();
        // `[rule]` makes one table where the rules are an array of them.
        let message = if message == "invalid type: map, expected a sequence" {
            "rules are written [[rule]] (each one a table of the array `rule`), not [rule]"
        } else {
            message
        };
        Failed::Usage(format!("{name}:{l}:{c}: {message}"))
    })?;
    if file.rules.is_empty() {
        return Err(Failed::Usage(format!("{name}: no [[rule]] in the budget")));
    }
    let mut rules = Vec::new();
    for spanned in file.rules {
        let (line, _) = at(Some(spanned.span()));
        let r = spanned.into_inner();
        let bad = |m: &str| Failed::Usage(format!("{name}:{line}: {m}"));
        // A time that cannot be read is named at its own place.
        let time = |a: &toml::Spanned<Amount>| {
            a.get_ref().micros().map_err(|m| {
                let (l, c) = at(Some(a.span()));
                Failed::Usage(format!("{name}:{l}:{c}: {m}"))
            })
        };
        let mut found: Vec<(Measure, f64)> = Vec::new();
        if let Some(a) = &r.self_time {
            found.push((Measure::SelfTime, time(a)?));
        }
        if let Some(a) = &r.total {
            found.push((Measure::Total, time(a)?));
        }
        if let Some(n) = r.calls {
            found.push((Measure::Calls, n as f64));
        }
        if let Some(a) = &r.longest_call {
            found.push((Measure::LongestCall, time(a)?));
        }
        if let Some(a) = &r.js {
            found.push((Measure::Js, time(a)?));
        }
        if let Some(a) = &r.duration {
            found.push((Measure::Duration, time(a)?));
        }
        if let Some(n) = r.long_tasks {
            let over = r.long_task.as_ref().map_or(Ok(50_000.0), time)?;
            found.push((Measure::LongTasks(over), n as f64));
        }
        let (measure, limit) = match found.as_slice() {
            [one] => *one,
            [] => return Err(bad("a rule needs one of self, total, calls, longest-call, js, long-tasks, duration")),
            _ => {
                return Err(bad(
                    "a rule measures one thing: give one of self, total, calls, longest-call, js, long-tasks, duration",
                ))
            }
        };
        let within = match &r.within {
            Some(w) => Some(Query::parse(w.get_ref()).map_err(|m| {
                let (l, c) = at(Some(w.span()));
                Failed::Usage(format!("{name}:{l}:{c}: within: {m}"))
            })?),
            None => None,
        };
        if measure == Measure::Duration && (within.is_none() || r.thread.is_some()) {
            return Err(bad("duration is the length of a range: give within (and no thread)"));
        }
        if r.long_task.is_some() && !matches!(measure, Measure::LongTasks(_)) {
            return Err(bad("long-task (the length that makes a task long) goes with long-tasks"));
        }
        let per_function =
            matches!(measure, Measure::SelfTime | Measure::Total | Measure::Calls | Measure::LongestCall);
        match (&r.function, per_function) {
            (None, true) => return Err(bad(&format!("{} needs a function", measure.key()))),
            (Some(_), false) => {
                return Err(bad(&format!("{} is measured on threads, not functions: remove function", measure.key())))
            }
            _ => {}
        }
        if let Some(t) = &r.thread {
            ThreadSpec::parse(t).map_err(|m| bad(&m.replace("--thread", "thread")))?;
        }
        let mut name = r.name.clone().unwrap_or_else(|| describe(measure, r.function.as_deref(), r.thread.as_deref()));
        if let (None, Some(w)) = (&r.name, &r.within) {
            name = format!("{name} within {}", w.get_ref());
        }
        let allow_missing = r.allow_missing;
        rules.push(Rule { line, name, thread: r.thread, function: r.function, measure, limit, allow_missing, within });
    }
    Ok(rules)
}

/// A rule's default name.
fn describe(m: Measure, function: Option<&str>, thread: Option<&str>) -> String {
    let on = thread.map_or_else(|| " on every thread".to_owned(), |t| format!(" on {t}"));
    let f = function.unwrap_or("");
    match m {
        Measure::SelfTime => format!("{f} self time{on}"),
        Measure::Total => format!("{f} total time{on}"),
        Measure::Calls => format!("{f} calls{on}"),
        Measure::LongestCall => format!("longest call of {f}{on}"),
        Measure::Js => format!("JS time{on}"),
        Measure::LongTasks(over) => format!("tasks over {}{on}", amount(over)),
        Measure::Duration => "duration".to_owned(),
    }
}

/// A time for people: `20 ms`, `0.25 ms`.
fn amount(us: f64) -> String {
    let ms = us / 1000.0;
    let s = format!("{ms:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} ms")
}

/// One thread of the input, as the rules need it.
struct Seen {
    estimate: ThreadEstimate,
    /// Its calls' stacks (made once: every rule reads them).
    stacks: Stacks,
    /// (start, duration) of its top-level tasks, in time order.
    tasks: Vec<(f64, f64)>,
    /// Its view's window (µs): calls count by their part inside it.
    window: (f64, f64),
    /// What the rules read of it, each made once, on first use: a budget may have thousands of
    /// rules, and each measured by a walk of the thread took minutes.
    named: OnceCell<FxHashMap<String, Vec<FuncId>>>,
    times: OnceCell<Times>,
    calls: OnceCell<Vec<(u64, f64)>>,
    js: OnceCell<f64>,
}

/// Self and total time of each function that has any, in `CallTree::functions`' order, and
/// each function's place there (`u32::MAX`: not there).
struct Times {
    times: Vec<(FuncId, f64, f64)>,
    place: Vec<u32>,
}

impl Seen {
    fn new(estimate: ThreadEstimate, tasks: Vec<(f64, f64)>, window: (f64, f64)) -> Seen {
        let stacks = estimate.stacks().into_owned();
        let (named, times, calls, js) = (OnceCell::new(), OnceCell::new(), OnceCell::new(), OnceCell::new());
        Seen { estimate, stacks, tasks, window, named, times, calls, js }
    }

    /// The functions a rule names, by name or by label (`name url:line:column`), each once.
    fn named(&self, function: Option<&str>) -> &[FuncId] {
        let named = self.named.get_or_init(|| {
            let mut named: FxHashMap<String, Vec<FuncId>> = FxHashMap::default();
            for (k, func) in self.stacks.funcs.iter().enumerate() {
                let label = func.label();
                if label != func.name {
                    named.entry(label).or_default().push(FuncId::new(k));
                }
                named.entry(func.name.clone()).or_default().push(FuncId::new(k));
            }
            named
        });
        function.and_then(|w| named.get(w)).map_or(&[], Vec::as_slice)
    }

    fn times(&self) -> &Times {
        self.times.get_or_init(|| {
            let times = CallTree::functions(&self.stacks);
            let mut place = vec![u32::MAX; self.stacks.funcs.len()];
            for (k, &(f, _, _)) in times.iter().enumerate() {
                place[f.index()] = k as u32;
            }
            Times { times, place }
        })
    }

    /// Per function: its calls, and the longest one's part inside the window.
    fn calls(&self) -> &[(u64, f64)] {
        self.calls.get_or_init(|| {
            let (lo, hi) = self.window;
            let mut per = vec![(0, f64::NEG_INFINITY); self.stacks.funcs.len()];
            for (c, &(stack, _)) in self.estimate.calls().zip(&self.stacks.samples) {
                let f = &mut per[self.stacks.frame(stack).1.index()];
                f.0 += 1;
                f.1 = f64::max(f.1, (c.ts() + c.dur()).min(hi) - c.ts().max(lo));
            }
            per
        })
    }

    /// Time in JavaScript and what it calls.
    fn js(&self) -> f64 {
        *self.js.get_or_init(|| {
            let js = Transform::JsOnly.apply(&self.stacks);
            js.samples.iter().filter(|s| s.0 != StackId::ROOT).map(|s| s.1).sum::<f64>()
        })
    }
}

/// The input as the rules of one range see it: its window (µs), or why the input lacks it.
struct View {
    window: Result<(f64, f64), String>,
    threads: Vec<Seen>,
}

/// Trace events that are one task of a thread's event loop.
const TASKS: [&str; 3] = ["RunTask", "ThreadControllerImpl::RunTask", "ThreadControllerImpl::DoWork"];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Status {
    Pass,
    Fail,
    /// Nothing to measure (the function is nowhere): a warning.
    Missing,
}

struct Outcome {
    value: f64,
    status: Status,
    message: String,
    /// Whether a value was measured (not: the function, thread or range is missing).
    measured: bool,
}

fn measure(rule: &Rule, view: &View) -> Outcome {
    let threads = match &view.window {
        Ok(w) => {
            if rule.measure == Measure::Duration {
                let value = w.1 - w.0;
                let status = if value <= rule.limit { Status::Pass } else { Status::Fail };
                let message = format!("{} (budget {})", amount(value), amount(rule.limit));
                return Outcome { value, status, message, measured: true };
            }
            &view.threads
        }
        Err(m) => {
            // A range the input lacks measures nothing: a failure, unless allowed to be missing.
            let status = if rule.allow_missing { Status::Missing } else { Status::Fail };
            return Outcome { value: 0.0, status, message: m.clone(), measured: false };
        }
    };
    let spec = rule.thread.as_deref().map(|t| ThreadSpec::parse(t).expect("checked when read"));
    let chosen: Vec<&Seen> = threads
        .iter()
        .filter(|s| {
            spec.as_ref().is_none_or(|sp| sp.matches(s.estimate.pid, s.estimate.tid, s.estimate.name.as_deref()))
        })
        .collect();
    if chosen.is_empty() {
        let message = match rule.thread.as_deref() {
            Some(t) => format!("no thread {t} in the input"),
            None => "no thread with a CPU profile in the input".to_owned(),
        };
        return Outcome { value: 0.0, status: Status::Missing, message, measured: false };
    }
    let mut value = 0.0;
    let mut any = false;
    for s in &chosen {
        match rule.measure {
            Measure::SelfTime | Measure::Total => {
                let t = s.times();
                // Summed in the order a walk of `times` would sum them: the same bits.
                let mut places: Vec<u32> = s
                    .named(rule.function.as_deref())
                    .iter()
                    .map(|f| t.place[f.index()])
                    .filter(|&k| k != u32::MAX)
                    .collect();
                places.sort_unstable();
                for k in places {
                    let (_, own, total) = t.times[k as usize];
                    any = true;
                    value += if rule.measure == Measure::SelfTime { own } else { total };
                }
            }
            Measure::Calls | Measure::LongestCall => {
                let per = s.calls();
                for f in s.named(rule.function.as_deref()) {
                    let (n, longest) = per[f.index()];
                    if n > 0 {
                        any = true;
                        if rule.measure == Measure::Calls {
                            value += n as f64;
                        } else {
                            value = f64::max(value, longest);
                        }
                    }
                }
            }
            Measure::Js => {
                any = true;
                value += s.js();
            }
            Measure::LongTasks(over) => {
                any |= !s.tasks.is_empty();
                value += s.tasks.iter().filter(|t| t.1 > over).count() as f64;
            }
            Measure::Duration => unreachable!("measured on the range"),
        }
    }
    if !any {
        let message = match rule.measure {
            Measure::LongTasks(_) => "no task events on the thread (a .cpuprofile has none)".to_owned(),
            _ => format!("no function {} in the input", rule.function.as_deref().unwrap_or("")),
        };
        return Outcome { value, status: Status::Missing, message, measured: false };
    }
    let shown = |v: f64| if rule.measure.is_count() { format!("{v}") } else { amount(v) };
    let status = if value <= rule.limit { Status::Pass } else { Status::Fail };
    let message = format!("{} (budget {})", shown(value), shown(rule.limit));
    Outcome { value, status, message, measured: true }
}

/// One rule over several runs of a scenario: the median of the values the runs measured
/// (a range one of them lacks fails the rule, naming the run).
fn combine(rule: &Rule, runs: &[(String, Outcome)]) -> Outcome {
    if let Some((name, o)) = runs.iter().find(|(_, o)| !o.measured && o.status == Status::Fail) {
        return Outcome {
            value: 0.0,
            status: Status::Fail,
            message: format!("{name}: {}", o.message),
            measured: false,
        };
    }
    let mut values: Vec<f64> = runs.iter().filter(|(_, o)| o.measured).map(|(_, o)| o.value).collect();
    if values.is_empty() {
        let o = &runs[0].1;
        return Outcome { value: 0.0, status: o.status, message: o.message.clone(), measured: false };
    }
    let value = super::report::median(&mut values);
    let n = values.len();
    let shown = |v: f64| if rule.measure.is_count() { format!("{v}") } else { amount(v) };
    let of = if n == runs.len() { format!("{n} runs") } else { format!("{n} of {} runs", runs.len()) };
    let status = if value <= rule.limit { Status::Pass } else { Status::Fail };
    let message = format!(
        "{} (median of {of}, {} to {}; budget {})",
        shown(value),
        shown(values[0]),
        shown(values[n - 1]),
        shown(rule.limit)
    );
    Outcome { value, status, message, measured: true }
}

pub(crate) fn run(args: &CheckArgs, global: &Global, cfg: &Config, mut reads: Reads) -> Result<(), Failed> {
    super::no_bounds(global, "check")?;
    for input in &args.inputs {
        if input.as_os_str() == "-" {
            return Err(Failed::Usage("check reads files: give their paths".to_owned()));
        }
        reads.add(input, "the input");
    }
    reads.add(&args.budget, "the budget");
    let out = args.output.as_deref().filter(|o| *o != Path::new("-"));
    reads.refuse(out)?;
    let rules = read_budget(&args.budget)?;
    let mut per_run: Vec<Vec<(String, Outcome)>> = (0..rules.len()).map(|_| Vec::new()).collect();
    for input in &args.inputs {
        let name = input.display().to_string();
        for (k, o) in measure_input(input, &rules, global, cfg)?.into_iter().enumerate() {
            per_run[k].push((name.clone(), o));
        }
    }
    let outcomes: Vec<Outcome> = match args.inputs.len() {
        1 => per_run.into_iter().map(|mut v| v.remove(0).1).collect(),
        _ => rules.iter().zip(&per_run).map(|(r, runs)| combine(r, runs)).collect(),
    };
    let budget = args.budget.display().to_string();
    for (r, o) in rules.iter().zip(&outcomes) {
        if o.status == Status::Missing {
            if global.strict {
                return Err(failure(
                    &budget,
                    Error::input(None, format!("line {}: {}: {}", r.line, r.name, o.message)),
                ));
            }
            if !global.quiet {
                let _ = writeln!(std::io::stderr(), "jscalls: warning: {budget}:{}: {}: {}", r.line, r.name, o.message);
            }
        }
    }
    let input = match args.inputs.as_slice() {
        [one] => one.display().to_string(),
        runs => format!(
            "{} runs ({})",
            runs.len(),
            runs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    };
    let text = match args.format {
        CheckFormat::Text => text(&budget, &input, &rules, &outcomes),
        CheckFormat::Json => json(&budget, &input, &rules, &outcomes),
        CheckFormat::Markdown => markdown(&budget, &input, &rules, &outcomes),
        CheckFormat::Junit => junit(&budget, &input, &rules, &outcomes),
    };
    let output = Output::create(out, false, 1).map_err(|e| failure("output", e))?;
    output
        .write(|w| w.write_all(text.as_bytes()).map_err(|e| Error::io("cannot write the report", e)))
        .map_err(|e| failure("output", e))?;
    if outcomes.iter().any(|o| o.status == Status::Fail) {
        Err(Failed::Regression)
    } else if rules.iter().zip(&outcomes).any(|(r, o)| o.status == Status::Missing && !r.allow_missing) {
        // A budget that measured nothing holds nothing: a CI gate must not pass on it.
        Err(Failed::NotMeasured)
    } else {
        Ok(())
    }
}

/// Each rule's outcome on one input: the input read once, every range the rules name found in
/// it.
fn measure_input(input: &Path, rules: &[Rule], global: &Global, cfg: &Config) -> Result<Vec<Outcome>, Failed> {
    let mut cfg = cfg.clone();
    cfg.keep_event_names = true;
    // Every range the rules name, found in one reading of the input.
    let mut ranges: Vec<&Query> = Vec::new();
    for q in rules.iter().filter_map(|r| r.within.as_ref()) {
        if !ranges.contains(&q) {
            ranges.push(q);
        }
    }
    cfg.range_event_names = Timings::names_for(&ranges);
    let assembled = assemble_file(input, &input.display().to_string(), global, &cfg)?;
    let mut views: Vec<View> = vec![View { window: Ok((f64::NEG_INFINITY, f64::INFINITY)), threads: Vec::new() }];
    for q in &ranges {
        let window = q
            .resolve(assembled.timings(), assembled.trace_bounds())
            .map(|s| (s.min_us, s.max_us))
            .map_err(|m| format!("{}: {m}", q.as_option()));
        views.push(View { window, threads: Vec::new() });
    }
    assembled
        .for_each_thread(|th| {
            let mut tasks: Vec<(f64, f64)> =
                th.events().filter(|e| TASKS.contains(&e.0)).map(|(_, ts, dur)| (ts, dur)).collect();
            tasks.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
            // Top level only: a task nested in a task is part of it.
            let mut end = f64::NEG_INFINITY;
            tasks.retain(|&(ts, dur)| {
                let top = ts >= end;
                if top {
                    end = ts + dur;
                }
                top
            });
            for (k, v) in views.iter_mut().enumerate() {
                let Ok((lo, hi)) = v.window else { continue };
                let estimate =
                    if k == 0 { ThreadEstimate::of_thread(&th) } else { ThreadEstimate::of_thread_in(&th, (lo, hi)) };
                // The tasks that overlap the range, each its part inside it.
                let tasks = tasks
                    .iter()
                    .filter(|t| t.0 <= hi && t.0 + t.1 >= lo)
                    .map(|t| (t.0.max(lo), (t.0 + t.1).min(hi) - t.0.max(lo)))
                    .collect();
                v.threads.push(Seen::new(estimate, tasks, (lo, hi)));
            }
            Ok::<(), ()>(())
        })
        .expect("collecting cannot fail");
    let view_of = |r: &Rule| match &r.within {
        None => &views[0],
        Some(q) => &views[1 + ranges.iter().position(|x| *x == q).expect("listed")],
    };
    Ok(rules.iter().map(|r| measure(r, view_of(r))).collect())
}

fn counts(outcomes: &[Outcome]) -> (usize, usize, usize) {
    let n = |s: Status| outcomes.iter().filter(|o| o.status == s).count();
    (n(Status::Pass), n(Status::Fail), n(Status::Missing))
}

fn text(budget: &str, input: &str, rules: &[Rule], outcomes: &[Outcome]) -> String {
    let (p, f, m) = counts(outcomes);
    let mut out = format!("{budget} on {input}: {p} passed, {f} failed, {m} not measured\n");
    for (r, o) in rules.iter().zip(outcomes) {
        let tag = match o.status {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Missing => "skip",
        };
        let _ = writeln!(out, "  {tag}  {}: {}", r.name, o.message);
    }
    out
}

fn markdown(budget: &str, input: &str, rules: &[Rule], outcomes: &[Outcome]) -> String {
    let (p, f, m) = counts(outcomes);
    let mut out = format!(
        "### jscalls check\n\n{} on {}: {p} passed, {f} failed, {m} not measured\n\n| | rule | measured |\n|---|---|---|\n",
        md_code(budget),
        md_code(input)
    );
    for (r, o) in rules.iter().zip(outcomes) {
        let tag = match o.status {
            Status::Pass => "✅",
            Status::Fail => "❌",
            Status::Missing => "⚠️",
        };
        let _ = writeln!(out, "| {tag} | {} | {} |", md_cell(&r.name), md_cell(&o.message));
    }
    out
}

fn json(budget: &str, input: &str, rules: &[Rule], outcomes: &[Outcome]) -> String {
    let (p, f, m) = counts(outcomes);
    let rows: Vec<serde_json::Value> = rules
        .iter()
        .zip(outcomes)
        .map(|(r, o)| {
            serde_json::json!({
                "name": r.name, "line": r.line, "measure": r.measure.key(), "thread": r.thread,
                "within": r.within.as_ref().map(Query::as_option),
                "function": r.function, "limit": r.limit, "value": o.value,
                "unit": if r.measure.is_count() { "count" } else { "us" },
                "status": match o.status { Status::Pass => "pass", Status::Fail => "fail", Status::Missing => "not-measured" },
                "message": o.message,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "format": "jscalls-check/1", "budget": budget, "input": input,
        "passed": p, "failed": f, "notMeasured": m, "rules": rows,
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("JSON values serialize");
    s.push('\n');
    s
}

/// Text for an XML attribute or element.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot hold at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test suite (the budget), one test case per rule; a failed rule is a
/// `<failure>`, one with nothing to measure `<skipped>`.
fn junit(budget: &str, input: &str, rules: &[Rule], outcomes: &[Outcome]) -> String {
    let (_, f, m) = counts(outcomes);
    let n = rules.len();
    let suite = xml(&format!("{budget} on {input}"));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"jscalls check\" tests=\"{n}\" failures=\"{f}\" errors=\"0\" skipped=\"{m}\" time=\"0\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{suite}\" tests=\"{n}\" failures=\"{f}\" errors=\"0\" skipped=\"{m}\" time=\"0\">"
    );
    for (r, o) in rules.iter().zip(outcomes) {
        let name = xml(&r.name);
        let class = xml(&format!("jscalls.check.{}", r.measure.key()));
        let msg = xml(&o.message);
        match o.status {
            Status::Pass => {
                let _ = writeln!(out, "    <testcase name=\"{name}\" classname=\"{class}\" time=\"0\"/>");
            }
            Status::Fail => {
                let _ = writeln!(out, "    <testcase name=\"{name}\" classname=\"{class}\" time=\"0\">");
                let _ = writeln!(
                    out,
                    "      <failure message=\"{msg}\" type=\"budget\">{budget}:{}: {msg}</failure>",
                    r.line,
                    budget = xml(budget)
                );
                let _ = writeln!(out, "    </testcase>");
            }
            Status::Missing => {
                let _ = writeln!(out, "    <testcase name=\"{name}\" classname=\"{class}\" time=\"0\">");
                let _ = writeln!(out, "      <skipped message=\"{msg}\"/>");
                let _ = writeln!(out, "    </testcase>");
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
