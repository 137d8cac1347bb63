//! Accuracy against ground truth: a synthetic trace whose true calls are known
//! (`fixtures/truth/`, made by `../shared/truth/synth.mjs` with a sampler that captures the
//! stack 30 µs late on average; see `fixtures/truth/README.md`). Calls are matched to true calls
//! as `../shared/truth/score.mjs` matches them: same stack path, overlapping or at most 50 µs
//! apart, greedily one to one, largest overlap first.

use std::collections::HashMap;
use std::io::Read;

use jscalls::{analyze, Config, Estimator, Source};
use serde_json::Value;

use crate::support::{cpuprofile, node, refined_keep_the_flame_chart, run_with, spans};

const TRACE: &str = "fixtures/truth/synth-lag30.trace.json.gz";
const TRUTH: &str = "fixtures/truth/synth-lag30.truth.json.gz";
/// The main thread's samples of [`TRACE`] as a bare `.cpuprofile`.
const CPUPROFILE: &str = "fixtures/truth/synth-lag30.cpuprofile.gz";
/// Calls at least this long (µs) are the ones the goals are stated for.
const LONG: f64 = 200.0;

fn read_gz(path: &str) -> Value {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut s).unwrap();
    serde_json::from_str(&s).unwrap()
}

fn key(name: &str, script: &str, line: Option<i64>, col: Option<i64>) -> String {
    format!("{name}|{script}|{}|{}", line.unwrap_or(-1), col.unwrap_or(-1))
}

/// A true call: its stack path (outermost first), start and end.
struct True {
    path: String,
    start: f64,
    end: f64,
}

/// An estimated call: its path, start, end and bounds.
struct Est {
    path: String,
    start: f64,
    end: f64,
    bounds: [Option<f64>; 4],
}

/// A real recording's stripped trace (no instrumentation) and its truth, whose calls are known
/// by function name only (`keyMode: name`).
const REAL_TRACE: &str = "fixtures/truth/real-stripped.json.gz";
const REAL_TRUTH: &str = "fixtures/truth/real-stripped.truth.json.gz";

/// A thread's (pid, tid).
type Thread = (i64, i64);

/// The truth's calls by thread, keyed by stack path (by function name only when the truth's
/// `keyMode` is `name`), whether they are keyed by name, and the thread its `.cpuprofile` holds.
fn truth_threads(truth: &str) -> (HashMap<Thread, Vec<True>>, bool, Option<Thread>) {
    let t = read_gz(truth);
    let by_name = t["keyMode"] == "name";
    let cpu = &t["cpuprofileThread"];
    let cpuprofile_thread = cpu["pid"].as_i64().zip(cpu["tid"].as_i64());
    let mut out = HashMap::new();
    for th in t["threads"].as_array().unwrap() {
        let fns: Vec<String> = th["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let script = match &f["scriptId"] {
                    Value::String(x) => x.clone(),
                    Value::Number(x) => x.to_string(),
                    _ => String::new(),
                };
                key(f["name"].as_str().unwrap(), &script, f["line"].as_i64(), f["col"].as_i64())
            })
            .collect();
        let c = &th["calls"];
        let col = |k: &str| c[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect::<Vec<f64>>();
        let (fi, start, end, parent) = (col("fn"), col("start"), col("end"), col("parent"));
        let mut paths: Vec<String> = Vec::with_capacity(fi.len());
        for i in 0..fi.len() {
            // Parents come before their children in the truth's table.
            let own = &fns[fi[i] as usize];
            let path =
                if parent[i] < 0.0 || by_name { own.clone() } else { format!("{};{own}", paths[parent[i] as usize]) };
            paths.push(path);
        }
        let calls =
            (0..fi.len()).map(|i| True { path: paths[i].clone(), start: start[i], end: end[i] }).collect::<Vec<_>>();
        out.insert((th["pid"].as_i64().unwrap(), th["tid"].as_i64().unwrap()), calls);
    }
    (out, by_name, cpuprofile_thread)
}

/// The calls of `trace`, keyed by stack path (by function name only when `by_name`).
fn estimates(trace: &str, cfg: &Config, by_name: bool) -> HashMap<(i64, i64), Vec<Est>> {
    let a = analyze(&Source::file(trace), cfg).unwrap();
    let mut out = HashMap::new();
    for th in a.threads() {
        let calls = th
            .calls()
            .map(|c| {
                let path = if by_name {
                    key(&c.frame().function_name(), "", None, None)
                } else {
                    let mut frames: Vec<String> =
                        c.stack().map(|f| key(&f.function_name(), &f.script_id(), f.line(), f.column())).collect();
                    frames.reverse();
                    frames.join(";")
                };
                Est { path, start: c.ts(), end: c.ts() + c.dur(), bounds: c.bounds().unwrap_or([None; 4]) }
            })
            .collect();
        out.insert((th.pid(), th.tid()), calls);
    }
    out
}

/// (true call, estimated call) pairs, matched as the scorer does.
fn matches<'a>(truth: &'a [True], est: &'a [Est]) -> Vec<(&'a True, &'a Est)> {
    let mut by_path: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, e) in est.iter().enumerate() {
        by_path.entry(&e.path).or_default().push(j);
    }
    // (overlap, gap, |Δstart| + |Δend|, true, estimate) for every candidate pair.
    let mut pairs = Vec::new();
    for (i, t) in truth.iter().enumerate() {
        for &j in by_path.get(t.path.as_str()).map(Vec::as_slice).unwrap_or(&[]) {
            let e = &est[j];
            let overlap = t.end.min(e.end) - t.start.max(e.start);
            let gap = (-overlap).max(0.0);
            if overlap > 0.0 || gap <= 50.0 {
                let miss = (t.start - e.start).abs() + (t.end - e.end).abs();
                pairs.push((overlap.max(0.0), gap, miss, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)).then(a.2.total_cmp(&b.2)));
    let (mut t_used, mut e_used) = (vec![false; truth.len()], vec![false; est.len()]);
    let mut out = Vec::new();
    for (_, _, _, i, j) in pairs {
        if !t_used[i] && !e_used[j] {
            (t_used[i], e_used[j]) = (true, true);
            out.push((&truth[i], &est[j]));
        }
    }
    out
}

/// A matched pair's true start and end, then estimated start and end (µs).
type Pair = (f64, f64, f64, f64);

/// All matched pairs of true calls at least [`LONG`] long in `trace`, over every thread, and
/// whether each true call lies within its estimate's bounds (calls matched as the truth keys
/// them).
fn long_matches_of(trace: &str, truth: &str, cfg: &Config) -> (Vec<Pair>, Vec<bool>) {
    matches_of(trace, truth, cfg, LONG..f64::INFINITY)
}

/// The matched pairs of true calls whose duration lies in `durations`, and whether each true
/// call lies within its estimate's bounds.
fn matches_of(trace: &str, truth: &str, cfg: &Config, durations: std::ops::Range<f64>) -> (Vec<Pair>, Vec<bool>) {
    let (truth, by_name, cpuprofile_thread) = truth_threads(truth);
    let est = estimates(trace, cfg, by_name);
    let bare = trace.ends_with(".cpuprofile.gz");
    let (mut errors, mut covered) = (Vec::new(), Vec::new());
    for (id, t) in &truth {
        // A bare .cpuprofile holds one thread: the one the truth names.
        let e = if !bare {
            est.get(id).unwrap_or_else(|| panic!("no estimate for thread {id:?}"))
        } else if Some(*id) == cpuprofile_thread {
            est.values().next().expect("the .cpuprofile's thread")
        } else {
            continue;
        };
        for (t, e) in matches(t, e) {
            if !durations.contains(&(t.end - t.start)) {
                continue;
            }
            errors.push((t.start, t.end, e.start, e.end));
            let inside =
                |x: f64, lo: Option<f64>, hi: Option<f64>| lo.is_none_or(|l| l <= x) && hi.is_none_or(|h| x <= h);
            covered.push(inside(t.start, e.bounds[0], e.bounds[1]) && inside(t.end, e.bounds[2], e.bounds[3]));
        }
    }
    (errors, covered)
}

fn config(estimator: Estimator, bounds: bool) -> Config {
    let mut cfg = Config::default();
    cfg.estimator = estimator;
    cfg.bounds = bounds;
    cfg
}

/// Asserts that the bounds hold for 99 % of the true calls of 0.2 ms or more matched in `trace`,
/// of which there are more than `min_matched`.
fn assert_bounds_hold(trace: &str, truth: &str, estimator: Estimator, min_matched: usize) {
    let (_, covered) = long_matches_of(trace, truth, &config(estimator, true));
    let n = covered.len();
    assert!(n > min_matched, "{trace}: {n} matched true calls of 0.2 ms or more");
    let share = covered.iter().filter(|&&c| c).count() as f64 / n as f64;
    assert!(share >= 0.99, "{trace}, {estimator:?}: bounds hold for {:.2} % of {n} long true calls", share * 100.0);
}

#[test]
fn bounds_hold_for_99_percent_of_long_true_calls() {
    for estimator in [Estimator::DevTools, Estimator::Midway] {
        assert_bounds_hold(TRACE, TRUTH, estimator, 1000);
    }
}

#[test]
fn bounds_hold_on_a_real_recording() {
    // Chromium stamps a sample some µs after walking its stack: without taking that time off
    // every tick, under 98 % of the long calls here held (starts before their earliest start).
    assert_bounds_hold(REAL_TRACE, REAL_TRUTH, Estimator::DevTools, 300);
}

#[test]
fn bounds_hold_on_a_bare_cpuprofile() {
    // No event measures the lag or the stamp delay: each tick's stack is taken to be captured
    // between its neighbours' stamps. Taken as captured at its own stamp, 80 % held here.
    assert_bounds_hold(CPUPROFILE, TRUTH, Estimator::DevTools, 400);
}

#[test]
fn a_bare_cpuprofile_says_its_lag_and_stamp_delay_were_not_measured() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_jscalls")).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let doc: Value = serde_json::from_str(&run(&["calls", CPUPROFILE, "--bounds", "-q"])).unwrap();
    let s = &doc["profiles"][0]["sampler"];
    assert_eq!((s["boundaries"].as_u64(), s["syncSamples"].as_u64()), (Some(0), Some(0)), "{s}");
    assert!(s["lagBoundUs"].is_null() && s["stampDelayUs"].is_null(), "{s}");
    let summary = run(&["calls", CPUPROFILE, "--bounds", "--format", "summary", "-q"]);
    assert!(summary.contains("bounds allow a capture until the next tick, from the tick before;"), "{summary}");
    // Measured in the trace: numbers.
    let summary = run(&["calls", REAL_TRACE, "--bounds", "--format", "summary", "-q"]);
    assert!(summary.contains("bounds allow a capture 88 µs late, 8 µs early;"), "{summary}");
}

#[test]
fn midway_is_closer_to_the_truth_than_devtools() {
    let (dur_dt, start_dt) = median_errors(Estimator::DevTools, LONG..f64::INFINITY);
    let (dur_mid, start_mid) = median_errors(Estimator::Midway, LONG..f64::INFINITY);
    // On this sampler (30 µs mean capture lag) the lag's own spread is most of what is left:
    // 45 µs against 53, starts 22 µs against 44 (24 when every change went halfway between
    // its samples, whatever else changed there).
    assert!(dur_mid < 0.9 * dur_dt, "median |Δdur|: midway {dur_mid} µs, DevTools {dur_dt} µs");
    assert!(start_mid <= 0.5 * start_dt, "median |Δstart|: midway {start_mid} µs, DevTools {start_dt} µs");
}

/// Median |Δdur| and median |Δstart| (µs) of the matched true calls whose duration lies in
/// `durations`.
fn median_errors(estimator: Estimator, durations: std::ops::Range<f64>) -> (f64, f64) {
    let (errors, _) = matches_of(TRACE, TRUTH, &config(estimator, false), durations);
    let dur = median(&errors.iter().map(|&(s, e, es, ee)| ((ee - es) - (e - s)).abs()).collect::<Vec<_>>());
    let start = median(&errors.iter().map(|&(s, _, es, _)| (es - s).abs()).collect::<Vec<_>>());
    (dur, start)
}

#[test]
fn a_start_in_a_sampling_hole_is_placed_by_the_calls_duration() {
    // a sampled every 100 µs to 1,000, nothing until 2,000 (a 1 ms hole), then a > b at
    // 2,000-2,200 and a again at 2,300. DevTools starts b at 2,000 and ends it at 2,300.
    // Midway ends it halfway, at 2,250 (a 100 µs gap: by time); its start lies in the hole,
    // over two intervals long, which leaves b 250 to 1,250 µs long, and goes to their geometric
    // mean, 2,250 - √312,500 = 1,690.98, not the hole's middle (1,500). Log-midway places
    // the end by log duration too: given the start at 1,500, 1,500 + 700·√(800/700) = 2,248.33.
    let nodes = [node(1, "(root)", &[2]), node(2, "a", &[3]), node(3, "b", &[])];
    let mut samples = vec![2; 11];
    samples.extend([3, 3, 3, 2, 2]);
    let mut deltas = vec![0.0];
    deltas.extend([100.0; 10]);
    deltas.extend([1000.0, 100.0, 100.0, 100.0, 100.0]);
    let json = cpuprofile(&nodes, &samples, &deltas, 0.0, 2500.0);
    let b = |estimator| {
        let a = run_with(&json, |c| c.estimator = estimator);
        spans(&a).into_iter().find(|c| c.starts_with("b@")).unwrap()
    };
    assert_eq!(b(Estimator::DevTools), "b@2000+300");
    assert_eq!(b(Estimator::Midway), "b@1691+559");
    assert_eq!(b(Estimator::LogMidway), "b@1691+557");
}

#[test]
fn log_midway_is_closer_for_short_calls() {
    // Short calls are most of the calls, and most of them are seen by a sample or two: placed
    // by their duration's logarithm they come out nearer their true length (median |Δdur| of
    // the matched calls under 0.2 ms: 34 µs against midway's 48 and DevTools' 65; of those of
    // 0.2 ms or more 47 µs against DevTools' 53, starts 21 µs against 44).
    let short = 0.0..LONG;
    let (dur_dt, _) = median_errors(Estimator::DevTools, short.clone());
    let (dur_mid, _) = median_errors(Estimator::Midway, short.clone());
    let (dur_log, _) = median_errors(Estimator::LogMidway, short);
    assert!(dur_log < 0.85 * dur_mid, "median |Δdur| < 0.2 ms: log-midway {dur_log} µs, midway {dur_mid} µs");
    assert!(dur_mid < dur_dt, "median |Δdur| < 0.2 ms: midway {dur_mid} µs, DevTools {dur_dt} µs");
    // Calls of 0.2 ms or more stay far closer than DevTools'.
    let (dur_dt, start_dt) = median_errors(Estimator::DevTools, LONG..f64::INFINITY);
    let (dur_log, start_log) = median_errors(Estimator::LogMidway, LONG..f64::INFINITY);
    assert!(dur_log < 0.9 * dur_dt, "median |Δdur|: log-midway {dur_log} µs, DevTools {dur_dt} µs");
    assert!(start_log <= 0.5 * start_dt, "median |Δstart|: log-midway {start_log} µs, DevTools {start_dt} µs");
}

#[test]
fn bounds_leave_the_calls_as_they_are() {
    let plain = analyze(&Source::file(TRACE), &Config::default()).unwrap();
    let with = analyze(&Source::file(TRACE), &config(Estimator::DevTools, true)).unwrap();
    let (mut n, mut a_threads, mut b_threads) = (0, plain.threads(), with.threads());
    assert_eq!(a_threads.len(), b_threads.len());
    for (a, b) in a_threads.by_ref().zip(b_threads.by_ref()) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.calls().zip(b.calls()) {
            assert_eq!((x.ts(), x.dur(), x.node_id()), (y.ts(), y.dur(), y.node_id()));
            assert!(x.bounds().is_none());
            let [es, ls, ee, le] = y.bounds().expect("bounds asked for");
            // DevTools' own start and end lie within the bounds.
            assert!(es.is_none_or(|v| v <= y.ts()) && ls.is_none_or(|v| y.ts() <= v), "{y:?} {:?}", y.bounds());
            let end = y.ts() + y.dur();
            assert!(ee.is_none_or(|v| v <= end + 1e-6) && le.is_none_or(|v| end <= v + 1e-6), "{y:?} {:?}", y.bounds());
            n += 1;
        }
        let s = b.sampler().expect("measured");
        // The fixture's sampler: 100 µs + exp(15 µs) interval, stack captured exp(30 µs) late.
        assert!((100.0..=130.0).contains(&s.interval), "{s:?}");
        assert!((15.0..=45.0).contains(&s.lag_mean), "{s:?}");
    }
    assert!(n > 3000);
}

#[test]
fn the_command_writes_bounds_and_the_sampler_and_refuses_the_panel_algorithm() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jscalls"))
        .args(["calls", TRACE, "--bounds", "--estimator", "midway", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let profiles = doc["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2);
    for p in profiles {
        assert_eq!(p["estimator"], "midway");
        let s = &p["sampler"];
        assert!(s["lagBoundUs"].as_f64().unwrap() > s["lagMeanUs"].as_f64().unwrap(), "{s}");
        let calls = p["calls"].as_array().unwrap();
        let single = p["singleSampleCalls"].as_u64().unwrap() as usize;
        assert!(single > 0 && single < calls.len());
        for c in calls {
            let b: Vec<f64> = c["bounds"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect();
            assert_eq!(b.len(), 4, "{c}");
            // Whole µs, and each interval in order (a null side is unbounded).
            assert!(b.iter().all(|x| x.is_nan() || x.fract() == 0.0), "{c}");
            let ordered = |lo: f64, hi: f64| lo.is_nan() || hi.is_nan() || lo <= hi;
            assert!(ordered(b[0], b[1]) && ordered(b[2], b[3]), "{c}");
        }
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jscalls"))
        .args(["calls", TRACE, "--estimator", "log-midway", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for p in doc["profiles"].as_array().unwrap() {
        assert_eq!(p["estimator"], "log-midway");
        assert!(p["sampler"]["intervalUs"].as_f64().unwrap() > 0.0, "{}", p["sampler"]);
        assert!(p["calls"][0].get("bounds").is_none(), "no bounds unless asked");
    }
    for estimator in ["midway", "log-midway"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_jscalls"))
            .args(["calls", "fixtures/node-mixed.cpuprofile.gz", "--cpuprofile-mode", "performance-panel"])
            .args(["--estimator", estimator])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{estimator}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--cpuprofile-mode performance-panel"));
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jscalls"))
        .args(["calls", "fixtures/node-mixed.cpuprofile.gz", "--cpuprofile-mode", "performance-panel", "--bounds"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cpuprofile-mode performance-panel"));
}

#[test]
fn midway_calls_nest_in_the_flame_chart_as_devtools_calls_do() {
    // Moving a boundary never makes a call overlap an event or a sibling: every call DevTools'
    // flame chart holds, midway's (and log-midway's) holds too (the chart drops a call that
    // straddles a boundary); and the boundaries do move.
    for input in [
        TRACE,
        "fixtures/chrome-ui.json.gz",
        "fixtures/node-trace-mixed.json.gz",
        "fixtures/chrome-worker-hires.json.gz",
        "fixtures/truth/real-marks-lores.json.gz",
    ] {
        for (estimator, n, moved) in refined_keep_the_flame_chart(std::path::Path::new(input)) {
            assert!(moved * 3 > n, "{input}, {estimator:?}: {moved} of {n} calls moved");
        }
    }
}

/// The median of `v` (the mean of the middle two for an even count).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
