//! `jscalls diff`: identical inputs, two engines against the two oracle answers, a function made
//! slower by hand caught by `--fail-on`, threads paired by name across two recordings.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{cpuprofile, node};

use crate::support::jscalls;

fn fixture(name: &str) -> String {
    format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)))
}

#[test]
fn a_recording_diffed_with_itself_is_identical() {
    let ui = fixture("chrome-ui.json.gz");
    let o = jscalls(&["diff", &ui, &ui]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(text(&o), format!("identical: 1176 calls in 1 threads ({ui} vs {ui})\n"));
    // As two recordings (functions), nothing moves and no rule breaks.
    let o = jscalls(&[
        "diff",
        &ui,
        &ui,
        "--level",
        "functions",
        "--fail-on",
        "self>+0%",
        "--min-time",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let d = json(&o);
    for f in d["functions"].as_array().unwrap() {
        assert_eq!(f["base"], f["new"]);
    }
}

/// The calls of a diff document, without the sides' names.
fn changes(d: &serde_json::Value) -> serde_json::Value {
    let mut d = d.clone();
    d.as_object_mut().unwrap().remove("base");
    d.as_object_mut().unwrap().remove("new");
    d
}

#[test]
fn two_engines_differ_by_exactly_what_their_oracle_answers_differ_by() {
    let ui = fixture("chrome-ui.json.gz");
    let ours =
        jscalls(&["diff", &ui, "--base-opt", "--engine 0.0.65", "--new-opt", "--engine latest", "--format", "json"]);
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    let oracle = jscalls(&[
        "diff",
        &fixture("chrome-ui.oracle.json.gz"),
        &fixture("chrome-ui.oracle-v6.json.gz"),
        "--format",
        "json",
    ]);
    assert!(oracle.status.success(), "{}", String::from_utf8_lossy(&oracle.stderr));
    let (ours, oracle) = (json(&ours), json(&oracle));
    assert_eq!(changes(&ours), changes(&oracle));
    let t = &ours["threads"][0];
    // The two answers hold 1074 and 1176 calls; newest DevTools only adds calls here.
    assert_eq!((t["baseCalls"].as_u64(), t["newCalls"].as_u64()), (Some(1074), Some(1176)));
    assert_eq!((t["added"].as_u64(), t["removed"].as_u64()), (Some(102), Some(0)));
    assert!(t["changed"].as_u64().unwrap() > 0);
    // Every change says what moved.
    for c in t["changes"].as_array().unwrap() {
        match c["kind"].as_str().unwrap() {
            "added" => assert!(c["base"].is_null() && c["new"].is_object()),
            "changed" => assert_ne!(c["base"], c["new"]),
            k => panic!("{k}"),
        }
    }
    // The same estimate on both sides is no change at all.
    let same = jscalls(&["diff", &ui, "--base-opt", "--engine latest", "--new-opt", "--engine latest"]);
    assert!(text(&same).starts_with("identical: 1176 calls"), "{}", text(&same));
}

/// One recording estimated two ways is read once, by whatever names it is given (a hard link
/// is the same file); two engines read it twice, as two recordings are read. The stages
/// `JSCALLS_TIMING` reports tell which was done; the outputs are the same either way.
#[test]
fn one_recording_estimated_two_ways_is_read_once() {
    let ui = fixture("chrome-ui.json.gz");
    let dir = temp_dir("one-read");
    let link = dir.join("same.json.gz");
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(&ui, &link).unwrap();
    let link = link.to_str().unwrap();
    let stages = |args: &[&str]| {
        let o = crate::support::jscalls_command().args(args).env("JSCALLS_TIMING", "1").output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let once = err.contains("timing: read once, estimated twice");
        let twice = err.contains("timing: BASE read and estimated") && err.contains("timing: NEW read and estimated");
        (once, twice, o.stdout)
    };
    let (once, twice, by_name) = stages(&["diff", &ui, &ui]);
    assert!(once && !twice, "the file named twice");
    let (once, twice, by_link) = stages(&["diff", &ui, link]);
    assert!(once && !twice, "the file and a link to it");
    // The same report but for the name of the second input.
    assert_eq!(String::from_utf8(by_name).unwrap(), String::from_utf8(by_link).unwrap().replace(link, &ui));
    let (once, twice, _) = stages(&["diff", &ui, "--new-opt", "--estimator midway --show-all-events"]);
    assert!(once && !twice, "two estimators");
    let (once, twice, _) = stages(&["diff", &ui, "--base-opt", "--engine 0.0.65"]);
    assert!(!once && twice, "two engines");
    let (once, twice, _) = stages(&["diff", &ui, &fixture("chrome-shop-base.json.gz")]);
    assert!(!once && twice, "two recordings");
}

/// Midway against DevTools' own estimate of one input: the same calls, none added or removed,
/// each moved exactly as the two `calls` outputs differ.
#[test]
fn an_estimator_diffed_with_devtools_moves_calls_as_their_outputs_differ() {
    let input = fixture("node-trace-mixed.json.gz");
    let ours = jscalls(&["diff", &input, "--new-opt", "--estimator midway", "--format", "json"]);
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    let dir = temp_dir("estimator-diff");
    let (base, new) = (dir.join("devtools.json"), dir.join("midway.json"));
    for (out, opts) in [(&base, &[][..]), (&new, &["--estimator", "midway"][..])] {
        let o = jscalls(&[&["calls", input.as_str(), "-o", out.to_str().unwrap()][..], opts].concat());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let outputs = jscalls(&["diff", base.to_str().unwrap(), new.to_str().unwrap(), "--format", "json"]);
    assert!(outputs.status.success(), "{}", String::from_utf8_lossy(&outputs.stderr));
    let (ours, outputs) = (json(&ours), json(&outputs));
    assert_eq!(changes(&ours), changes(&outputs));
    let t = &ours["threads"][0];
    assert_eq!((t["added"].as_u64(), t["removed"].as_u64()), (Some(0), Some(0)));
    assert_eq!(t["baseCalls"], t["newCalls"]);
    assert!(t["changed"].as_u64().unwrap() > 0);
}

/// Doubles the time after every sample inside `function` (the delta to the next sample), so
/// that the function and everything it calls take twice as long.
fn slow_down(profile: &serde_json::Value, function: &str) -> serde_json::Value {
    let mut p = profile.clone();
    let nodes = p["nodes"].as_array().unwrap();
    let mut parent = std::collections::HashMap::new();
    for n in nodes {
        for c in n["children"].as_array().into_iter().flatten() {
            parent.insert(c.as_i64().unwrap(), n["id"].as_i64().unwrap());
        }
    }
    let named: std::collections::HashSet<i64> = nodes
        .iter()
        .filter(|n| n["callFrame"]["functionName"] == function)
        .map(|n| n["id"].as_i64().unwrap())
        .collect();
    let on: std::collections::HashSet<i64> = nodes
        .iter()
        .map(|n| n["id"].as_i64().unwrap())
        .filter(|&id| std::iter::successors(Some(id), |x| parent.get(x).copied()).any(|x| named.contains(&x)))
        .collect();
    let gc: std::collections::HashSet<i64> = nodes
        .iter()
        .filter(|n| n["callFrame"]["functionName"] == "(garbage collector)")
        .map(|n| n["id"].as_i64().unwrap())
        .collect();
    let samples: Vec<i64> = p["samples"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap()).collect();
    // A GC sample belongs to the stack before it, as DevTools nests it.
    let mut inside = vec![false; samples.len()];
    for (i, s) in samples.iter().enumerate() {
        inside[i] = on.contains(s) || (gc.contains(s) && i > 0 && inside[i - 1]);
    }
    let deltas = p["timeDeltas"].as_array_mut().unwrap();
    let mut shift = 0.0;
    for i in 0..samples.len() - 1 {
        if inside[i] {
            let d = deltas[i + 1].as_f64().unwrap();
            deltas[i + 1] = serde_json::json!(d * 2.0);
            shift += d;
        }
    }
    p["endTime"] = serde_json::json!(p["endTime"].as_f64().unwrap() + shift);
    p
}

fn temp_dir(name: &str) -> PathBuf {
    let d = crate::support::scratch().join(format!("diff-{name}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_function_made_twice_as_slow_is_caught_and_comes_first() {
    let mut raw = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(fixture("node-mixed.cpuprofile.gz")).unwrap())
        .read_to_string(&mut raw)
        .unwrap();
    let profile: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let dir = temp_dir("slow");
    let base = dir.join("base.cpuprofile");
    let new = dir.join("new.cpuprofile");
    std::fs::write(&base, &raw).unwrap();
    // `scan` has 12 of the 337 samples: neither the busiest function nor a rare one.
    std::fs::write(&new, slow_down(&profile, "scan").to_string()).unwrap();
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let o = jscalls(&["diff", b, n, "--fail-on", "self>+50%"]);
    assert_eq!(o.status.code(), Some(3), "{}\n{}", text(&o), String::from_utf8_lossy(&o.stderr));
    let report = text(&o);
    let verdict = report.split("fail-on: ").nth(1).unwrap();
    let first = verdict.lines().nth(1).unwrap();
    assert!(first.contains("] scan "), "{report}");
    // Function level: `scan` first, its total time doubled (the estimate's edges aside).
    let o = jscalls(&["diff", b, n, "--level", "functions", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let d = json(&o);
    let top = &d["functions"][0];
    assert_eq!(top["function"]["name"], "scan");
    let (bt, nt) = (top["base"]["total"].as_f64().unwrap(), top["new"]["total"].as_f64().unwrap());
    assert!((nt / bt - 2.0).abs() < 0.15, "{bt} -> {nt}");
    // A budget that allows it passes; one on another function does not see it.
    let o = jscalls(&["diff", b, n, "--fail-on", "self>+150%"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = jscalls(&["diff", b, n, "--fail-on", "self>+50%@fib"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// root > main > {fast, slow}: BASE samples main, fast ×2, slow ×2, main; NEW has slow ×4.
fn two_profiles(dir: &Path) -> (PathBuf, PathBuf) {
    let nodes =
        [node(1, "(root)", &[2]), node(2, "main@a.js", &[3, 4]), node(3, "fast@a.js", &[]), node(4, "slow@a.js", &[])];
    let base = dir.join("base.cpuprofile");
    let new = dir.join("new.cpuprofile");
    std::fs::write(&base, cpuprofile(&nodes, &[2, 3, 3, 4, 4, 2], &[100.0; 6], 0.0, 700.0)).unwrap();
    std::fs::write(&new, cpuprofile(&nodes, &[2, 3, 3, 4, 4, 4, 4, 2], &[100.0; 8], 0.0, 900.0)).unwrap();
    (base, new)
}

#[test]
fn function_rows_hold_the_self_and_total_times_computed_by_hand() {
    let dir = temp_dir("hand");
    let (base, new) = two_profiles(&dir);
    let o =
        jscalls(&["diff", base.to_str().unwrap(), new.to_str().unwrap(), "--format", "json", "--level", "functions"]);
    let d = json(&o);
    // Calls: main [100, 600) with fast [200, 400) and slow [400, 600) in BASE; slow [400, 800) in NEW.
    let row =
        |name: &str| d["functions"].as_array().unwrap().iter().find(|f| f["function"]["name"] == name).unwrap().clone();
    let figures = |r: &serde_json::Value, side: &str| {
        (r[side]["self"].as_f64().unwrap(), r[side]["total"].as_f64().unwrap(), r[side]["calls"].as_f64().unwrap())
    };
    assert_eq!(figures(&row("slow"), "base"), (200.0, 200.0, 1.0));
    assert_eq!(figures(&row("slow"), "new"), (400.0, 400.0, 1.0));
    assert_eq!(figures(&row("main"), "base"), (100.0, 500.0, 1.0));
    assert_eq!(figures(&row("main"), "new"), (100.0, 700.0, 1.0));
    assert_eq!(d["functions"][0]["function"]["name"], "slow");
    // The CallNode main>slow: a path rule sees it, an absolute one in µs measures it.
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let o = jscalls(&["diff", b, n, "--fail-on", "total>+150us@main>slow"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("total 0.200 ms -> 0.400 ms (+100.0%)"), "{}", text(&o));
    let o = jscalls(&["diff", b, n, "--fail-on", "total>+250us@main>slow"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Relative rules skip functions under --min-time (1 ms by default).
    let o = jscalls(&["diff", b, n, "--fail-on", "self>+50%"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // A rule on a function neither side has: a warning, an error with --strict.
    let o = jscalls(&["diff", b, n, "--fail-on", "self>+50%@nothere"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such function"));
    let o = jscalls(&["diff", b, n, "--fail-on", "self>+50%@nothere", "--strict"]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn runs_flag_only_changes_outside_the_noise() {
    let dir = temp_dir("runs");
    let nodes = [node(1, "(root)", &[2]), node(2, "main@a.js", &[3]), node(3, "work@a.js", &[])];
    // `work` has 20-24 samples of 100 µs in BASE's runs; NEW's: 21-25 (a median 4.5% up, but
    // within the noise) or 40-44 (slower in every run).
    let run = |dir: &Path, name: &str, work: usize| {
        let mut samples = vec![2];
        samples.extend(std::iter::repeat_n(3, work));
        samples.push(2);
        let deltas = vec![100.0; samples.len()];
        let end = 100.0 * (samples.len() + 1) as f64;
        std::fs::write(dir.join(name), cpuprofile(&nodes, &samples, &deltas, 0.0, end)).unwrap();
    };
    for (side, works) in
        [("base", [20, 21, 22, 23, 24]), ("noise", [21, 22, 23, 24, 25]), ("slow", [40, 41, 42, 43, 44])]
    {
        let d = dir.join(side);
        std::fs::create_dir_all(&d).unwrap();
        for (i, w) in works.iter().enumerate() {
            run(&d, &format!("run{i}.cpuprofile"), *w);
        }
    }
    let gate = |new: &str| {
        let (b, n) = (dir.join("base"), dir.join(new));
        jscalls(&[
            "diff",
            "--runs",
            b.to_str().unwrap(),
            n.to_str().unwrap(),
            "--fail-on",
            "self>+2%",
            "--min-time",
            "0",
        ])
    };
    let o = gate("noise");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = gate("slow");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    // Five runs apart: the exact one-sided p is 1/252.
    assert!(text(&o).contains("p = 0.004"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corpus_summarises_each_input() {
    let dir = temp_dir("corpus");
    for name in ["chrome-ui.json.gz", "node-trace-mixed.json.gz"] {
        std::fs::copy(fixture(name), dir.join(name)).unwrap();
    }
    let o = jscalls(&[
        "diff",
        "--corpus",
        dir.to_str().unwrap(),
        "--base-opt",
        "--engine 0.0.65",
        "--new-opt",
        "--engine latest",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = json(&o);
    assert_eq!((d["inputs"].as_u64(), d["inputsChanged"].as_u64()), (Some(2), Some(1)));
    let per: Vec<(String, u64)> = d["perInput"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["input"].as_str().unwrap().rsplit('/').next().unwrap().to_owned(), i["changed"].as_u64().unwrap()))
        .collect();
    assert_eq!(per[1], ("node-trace-mixed.json.gz".to_owned(), 0));
    assert_eq!(per[0].0, "chrome-ui.json.gz");
    assert_eq!(per[0].1, d["callsChanged"].as_u64().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_rules_and_options_are_usage_errors() {
    let ui = fixture("chrome-ui.json.gz");
    for (args, says) in [
        (vec!["diff", &ui, &ui, "--fail-on", "wall>+1%"], "expected self, total or calls"),
        (vec!["diff", &ui, &ui, "--fail-on", "self>+10"], "a time needs a unit"),
        (vec!["diff", &ui, "--base-opt", "--engin 0.0.65"], "--base-opt '--engin 0.0.65'"),
        (vec!["diff", &ui], "give --base-opt"),
    ] {
        let o = jscalls(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let oracle = fixture("chrome-ui.oracle.json.gz");
    let o = jscalls(&["diff", &oracle, "--base-opt", "--engine 0.0.65"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a calls output"));
}

#[test]
fn threads_pair_by_name_across_two_recordings_of_one_page() {
    // Two recordings of `record/chrome.mjs worker`: other pids and tids, another server port.
    let (a, b) = (fixture("chrome-worker-run1.json.gz"), fixture("chrome-worker-run2.json.gz"));
    let o = jscalls(&["diff", &a, &b, "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = json(&o);
    assert_eq!(d["level"], "functions");
    let threads = d["threads"].as_array().unwrap();
    let names: Vec<&str> = threads.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["CrRendererMain", "DedicatedWorker thread"]);
    for t in threads {
        let (base, new) = (&t["base"], &t["new"]);
        assert!(base.is_array() && new.is_array(), "{t}");
        assert_ne!(base[0], new[0], "two recordings have two renderer processes");
    }
    // The worker's `fib` is one function on both sides, whatever the port.
    let fib = d["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"]["name"] == "fib" && f["thread"] == "DedicatedWorker thread")
        .unwrap();
    assert_eq!(fib["function"]["url"], "/worker.js");
    assert!(fib["base"]["calls"].as_f64().unwrap() > 10.0 && fib["new"]["calls"].as_f64().unwrap() > 10.0, "{fib}");
}

#[test]
fn an_input_is_never_overwritten() {
    let dir = temp_dir("overwrite");
    let a = dir.join("a.json.gz");
    std::fs::copy(fixture("chrome-ui.json.gz"), &a).unwrap();
    let before = std::fs::read(&a).unwrap();
    let a = a.to_str().unwrap();
    let o = jscalls(&["diff", a, &fixture("chrome-ui.json.gz"), "-o", a]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("refusing to overwrite"));
    let budget = dir.join("b.toml");
    std::fs::write(&budget, "[[rule]]\njs = \"1s\"\n").unwrap();
    let o = jscalls(&["check", a, "--budget", budget.to_str().unwrap(), "-o", budget.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(a).unwrap(), before);
    assert_eq!(std::fs::read_to_string(&budget).unwrap(), "[[rule]]\njs = \"1s\"\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One program recorded as a `.cpuprofile` and as a Node trace: the one thread with calls on
/// each side is one thread, and a script is one file whether its URL is `file:///x` or `/x`.
#[test]
fn a_cpuprofile_and_a_trace_of_one_program_pair_their_thread_and_functions() {
    let o = jscalls(&[
        "diff",
        &fixture("node-mixed.cpuprofile.gz"),
        &fixture("node-trace-mixed.json.gz"),
        "--level",
        "functions",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = json(&o);
    let threads = d["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1, "{threads:?}");
    assert!(threads[0]["base"].is_array() && threads[0]["new"].is_array(), "{threads:?}");
    // Named as the trace names it, either way round: a `.cpuprofile` has no thread name (its
    // thread goes by the file's name only when nothing else names it).
    assert_eq!(threads[0]["name"], "JavaScriptMainThread");
    let o = jscalls(&[
        "diff",
        &fixture("node-trace-mixed.json.gz"),
        &fixture("node-mixed.cpuprofile.gz"),
        "--level",
        "functions",
        "--format",
        "json",
    ]);
    assert_eq!(json(&o)["threads"][0]["name"], "JavaScriptMainThread");
    let o = jscalls(&[
        "diff",
        &fixture("node-mixed.cpuprofile.gz"),
        &fixture("node-mixed.cpuprofile.gz"),
        "--level",
        "functions",
        "--format",
        "json",
    ]);
    assert_eq!(json(&o)["threads"][0]["name"], "node-mixed.cpuprofile.gz");
    let main = d["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"]["name"] == "main")
        .unwrap_or_else(|| panic!("main is paired"));
    assert!(main["base"]["calls"].as_f64().unwrap() > 0.0 && main["new"]["calls"].as_f64().unwrap() > 0.0, "{main}");
}

/// Each frame of an SVG flame graph: the name its `<title>` starts with (up to ` (`) and its
/// `<rect>`'s fill (`rgb(r,g,b)`).
fn frame_fills(svg: &str) -> Vec<(String, (u8, u8, u8))> {
    let opt = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(svg, opt).expect("well-formed XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("g"))
        .filter_map(|g| {
            let title = g.children().find(|c| c.has_tag_name("title"))?.text()?;
            let name = title.rsplit_once(" (").map_or(title, |t| t.0);
            let fill = g.children().find(|c| c.has_tag_name("rect"))?.attribute("fill")?;
            let v: Vec<u8> = fill
                .trim_start_matches("rgb(")
                .trim_end_matches(')')
                .split(',')
                .map(|x| x.trim().parse().unwrap())
                .collect();
            Some((name.to_owned(), (v[0], v[1], v[2])))
        })
        .collect()
}

#[test]
fn a_differential_flame_graph_draws_the_grown_function_red() {
    let dir = temp_dir("svg");
    let (base, new) = two_profiles(&dir);
    let out = dir.join("d.svg");
    let o = jscalls(&[
        "diff",
        base.to_str().unwrap(),
        new.to_str().unwrap(),
        "--level",
        "functions",
        "--format",
        "svg",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    let fills = frame_fills(&svg);
    let fill = |name: &str| {
        fills.iter().find(|f| f.0.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no frame {name}")).1
    };
    // slow's self time went 200 → 400 µs: red (full red, less green and blue); fast's stayed
    // 200 µs: neither red nor blue.
    let (r, g, b) = fill("slow");
    assert!(r == 255 && g < 255 && g == b, "slow is {:?}", (r, g, b));
    let (r, g, b) = fill("fast");
    assert!(r == g && g == b, "fast is {:?}", (r, g, b));
    assert!(svg.contains("red: more self time than in BASE"));
    let o =
        jscalls(&["diff", base.to_str().unwrap(), new.to_str().unwrap(), "--format", "svg", "--fail-on", "self>+1%"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_pprof_difference_is_new_minus_base_per_function() {
    if crate::support::go("a_pprof_difference_is_new_minus_base_per_function").is_none() {
        return;
    }
    let dir = temp_dir("pprof");
    let (base, new) = two_profiles(&dir);
    let pb = dir.join("d.pb.gz");
    let o = jscalls(&[
        "diff",
        base.to_str().unwrap(),
        new.to_str().unwrap(),
        "--format",
        "pprof",
        "-o",
        pb.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, rows) = crate::support::pprof_top(&pb, &dir, &[]);
    // slow's self time went 200 → 400 µs; fast's and main's did not change: fast's stack is
    // left out, main is there as slow's caller only (0 of its own).
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["slow a.js", "main a.js"], "{text}");
    assert!((rows[0].1 - 0.2).abs() < 1e-9 && rows[1].1 == 0.0, "{text}");
}

/// The slowed build (`fixtures/record/workloads/slowed.js` with SLOWED=1: its hottest function,
/// parseRecords, does its work twice, 320 → 551 ms of self time) against the base build.
const SLOWED: [&str; 2] = ["fixtures/node-slowed-base.cpuprofile.gz", "fixtures/node-slowed-new.cpuprofile.gz"];

#[test]
fn the_slowed_function_is_the_reddest_frame_of_the_differential_flame_graph() {
    let dir = temp_dir("slowed-svg");
    let out = dir.join("d.svg");
    let o = jscalls(&["diff", SLOWED[0], SLOWED[1], "--format", "svg", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fills = frame_fills(&std::fs::read_to_string(&out).unwrap());
    // Red is full red with green and blue taken away as the growth is larger.
    let parse = fills.iter().find(|f| f.0.starts_with("parseRecords ")).expect("parseRecords is drawn");
    let (r, g, b) = parse.1;
    assert!(r == 255 && g == b && g < 128, "parseRecords is {:?}", parse.1);
    let reddest = fills.iter().filter(|f| f.1 .0 == 255).min_by_key(|f| f.1 .1).unwrap();
    assert_eq!(reddest.0, parse.0);
}

#[test]
fn pprof_diff_base_puts_the_slowed_function_first() {
    if crate::support::go("pprof_diff_base_puts_the_slowed_function_first").is_none() {
        return;
    }
    let dir = temp_dir("slowed-pprof");
    let [base, new] = [("base", SLOWED[0]), ("new", SLOWED[1])].map(|(name, input)| {
        let pb = dir.join(format!("{name}.pb.gz"));
        let o = jscalls(&["export", input, "-o", pb.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        pb
    });
    // The self time that grew, as `diff` reports it.
    let o = jscalls(&["diff", SLOWED[0], SLOWED[1], "--format", "json", "--level", "functions"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let grown = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"]["name"] == "parseRecords")
        .unwrap_or_else(|| panic!("parseRecords in {report}"));
    // µs in the report.
    let delta_ms = (grown["new"]["self"].as_f64().unwrap() - grown["base"]["self"].as_f64().unwrap()) / 1000.0;
    assert!(delta_ms > 150.0, "{grown}");
    // pprof's own difference of the two exports, and jscalls' difference profile, alike.
    let (text, rows) = crate::support::pprof_top(&new, &dir, &["-diff_base", base.to_str().unwrap()]);
    assert!(rows[0].0.starts_with("parseRecords "), "{text}");
    assert!((rows[0].1 - delta_ms).abs() < 0.01, "{text}\n{delta_ms}");
    let d = dir.join("d.pb.gz");
    let o = jscalls(&["diff", SLOWED[0], SLOWED[1], "--format", "pprof", "-o", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, rows) = crate::support::pprof_top(&d, &dir, &[]);
    assert!(rows[0].0.starts_with("parseRecords "), "{text}");
    assert!((rows[0].1 - delta_ms).abs() < 0.01, "{text}\n{delta_ms}");
}

/// Drawn by Chromium (headless, `tests/browser/svg-frames.mjs`), the differential flame graph
/// of the slowed build paints parseRecords red, the reddest of the frames, and wide. Skipped,
/// and said so, without a browser or the viewers' packages.
#[test]
fn chromium_paints_the_slowed_function_red() {
    let Some(viewers) = crate::support::viewers("chromium_paints_the_slowed_function_red") else {
        return;
    };
    let dir = temp_dir("slowed-chromium");
    let out = dir.join("d.svg");
    let o = jscalls(&["diff", SLOWED[0], SLOWED[1], "--format", "svg", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = std::process::Command::new("node")
        .arg("tests/browser/svg-frames.mjs")
        .args([out.as_os_str(), dir.join("d.png").as_os_str(), viewers.as_os_str()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{said}{}", String::from_utf8_lossy(&run.stderr));
    let v: serde_json::Value = serde_json::from_str(said.trim()).unwrap();
    // [name, "rgb(r, g, b)", width px, height px] per frame, as painted.
    let frames: Vec<(String, Vec<u32>, u64)> = v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let rgb = f[1].as_str().unwrap().trim_start_matches("rgb(").trim_end_matches(')');
            (
                f[0].as_str().unwrap().to_owned(),
                rgb.split(", ").map(|x| x.parse().unwrap()).collect(),
                f[2].as_u64().unwrap(),
            )
        })
        .collect();
    let parse = frames.iter().find(|f| f.0.starts_with("parseRecords ")).unwrap_or_else(|| panic!("{said}"));
    assert!(parse.1[0] == 255 && parse.1[1] == parse.1[2] && parse.1[1] < 128, "{parse:?}");
    // Over half the width: 551 of the 1,009 ms NEW spent.
    assert!(parse.2 > 500, "{parse:?}");
    let reddest = frames.iter().filter(|f| f.1[0] == 255).min_by_key(|f| f.1[1]).unwrap();
    assert_eq!(reddest.0, parse.0);
    assert!(std::fs::metadata(dir.join("d.png")).unwrap().len() > 10_000, "a screenshot");
}

/// A call-by-call comparison's estimates (each call's stack its function alone) hold the
/// records and name the functions that full ones do, so the comparison is the same.
#[test]
fn estimates_made_for_calls_alone_compare_as_full_ones() {
    use jscalls::diff::{calls, ThreadEstimate};
    for name in ["chrome-ui.json.gz", "node-mixed.cpuprofile.gz", "chrome-shop-slow.json.gz"] {
        let a = jscalls::analyze(&jscalls::Source::file(fixture(name)), &jscalls::Config::default()).unwrap();
        let full: Vec<ThreadEstimate> = a.threads().map(|t| ThreadEstimate::of_thread(&t)).collect();
        let flat: Vec<ThreadEstimate> = a.threads().map(|t| ThreadEstimate::of_thread_for_calls(&t)).collect();
        assert!(full.iter().map(ThreadEstimate::call_count).sum::<usize>() > 100, "{name}: too few calls to tell");
        for (f, l) in full.iter().zip(&flat) {
            assert_eq!(f.calls().collect::<Vec<_>>(), l.calls().collect::<Vec<_>>(), "{name}");
            for k in 0..f.call_count() {
                let (a, b) = (f.func(f.func_of(k)), l.func(l.func_of(k)));
                assert_eq!((&a.name, &a.url, a.line, a.column), (&b.name, &b.url, b.line, b.column), "{name} call {k}");
            }
        }
        assert!(calls::diff(&full, &flat, usize::MAX).iter().all(|t| t.is_empty()), "{name}");
        // Its one-frame stacks are no one's to compare.
        let read_as_stacks = |f: fn(&ThreadEstimate)| std::panic::catch_unwind(|| f(&flat[0])).is_err();
        assert!(read_as_stacks(|t| drop(t.stacks())) && read_as_stacks(|t| _ = t.busy()), "{name}");
        assert!(std::panic::catch_unwind(|| full[0].busy()).is_ok(), "{name}");
    }
}
