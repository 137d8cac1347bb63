//! One meaning of self time: a trace event inside a call (a forced Layout, a style recalc, a
//! compile) is not the JS function's. On a recording with forced layouts, the calls output
//! (DevTools' own figures), the summary, `tree --flat`, `check`, `diff` and the collapsed
//! export agree on each function's self time and on the thread's total.

use std::collections::HashMap;
use std::process::Command;

use serde_json::Value;

const UI: &str = "fixtures/chrome-ui.json.gz";

fn run(args: &[&str]) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_jscalls")).args(args).arg("-q").output().unwrap();
    assert!(o.status.code().is_some_and(|c| c == 0 || c == 3), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&run(args)).unwrap()
}

/// DevTools' self time of each function of the main thread (µs), from the calls output.
fn devtools_self() -> HashMap<String, f64> {
    let calls = json(&["calls", UI]);
    let main = calls["profiles"].as_array().unwrap().iter().find(|p| p["threadName"] == "CrRendererMain").unwrap();
    let mut by = HashMap::new();
    for c in main["calls"].as_array().unwrap() {
        *by.entry(c["functionName"].as_str().unwrap().to_owned()).or_insert(0.0) +=
            c["selfTime"].as_f64().unwrap_or(0.0);
    }
    by
}

#[test]
fn every_view_gives_devtools_self_time_and_one_total() {
    let want = devtools_self();
    let js: f64 = want.values().sum();
    // tree --flat: each JS function's self is DevTools'; the events inside calls are
    // functions of their own, and JS plus events is the thread's total.
    let flat = json(&["tree", UI, "--flat", "--format", "json", "--thread", "CrRendererMain"]);
    let thread = &flat["threads"][0];
    let total = thread["total"].as_f64().unwrap();
    let mut events = 0.0;
    let mut seen = HashMap::new();
    for f in thread["functions"].as_array().unwrap() {
        let (name, s) = (f["func"]["name"].as_str().unwrap(), f["self"].as_f64().unwrap());
        *seen.entry(name.to_owned()).or_insert(0.0) += s;
        if !want.contains_key(name) {
            events += s;
        }
    }
    for (name, s) in &want {
        assert!((seen[name] - s).abs() < 1e-6, "{name}: tree {} µs, DevTools {s} µs", seen[name]);
    }
    assert!((seen["relayout"] - 4_657.0).abs() < 1.0, "relayout {}", seen["relayout"]);
    assert!(seen["Layout"] > 8_000.0 && seen["UpdateLayoutTree"] > 15_000.0, "{seen:?}");
    assert!((js + events - total).abs() < 1e-3, "JS {js} + events {events} vs total {total}");
    // The summary: the same total, split the same way.
    let text = String::from_utf8(run(&["calls", UI, "--format", "summary"])).unwrap();
    let line = format!(
        "CrRendererMain: 1,176 calls, {:.1} ms: {:.1} ms self in functions, {:.1} ms in trace events inside calls",
        total / 1000.0,
        js / 1000.0,
        events / 1000.0
    );
    assert!(text.contains(&line), "{line}\n{text}");
    assert!(text.contains("4.7 ms    4.8%       26  relayout"), "{text}");
    // check: relayout's self, and the thread's time in calls.
    let dir = crate::support::scratch().join("self");
    std::fs::create_dir_all(&dir).unwrap();
    let budget = dir.join("b.toml");
    std::fs::write(
        &budget,
        "[[rule]]\nfunction = \"relayout\"\nself = \"1s\"\n[[rule]]\nthread = \"CrRendererMain\"\njs = \"1s\"\n",
    )
    .unwrap();
    let check = json(&["check", UI, "--budget", budget.to_str().unwrap(), "--format", "json"]);
    assert_eq!(check["rules"][0]["value"].as_f64(), Some(seen["relayout"]));
    assert_eq!(check["rules"][1]["value"].as_f64(), Some(total));
    // diff, function by function: relayout's self on either side is DevTools'.
    let diff = json(&["diff", UI, UI, "--level", "functions", "--format", "json", "--min-time", "0"]);
    let row = diff["functions"].as_array().unwrap().iter().find(|f| f["function"]["name"] == "relayout").unwrap();
    assert!((row["base"]["self"].as_f64().unwrap() - seen["relayout"]).abs() < 1.0, "{row}");
    // Collapsed stacks: weights (whole µs a line) sum to the total; relayout's own lines to its self.
    let collapsed = String::from_utf8(run(&["export", UI, "--to", "collapsed", "--thread", "CrRendererMain"])).unwrap();
    let (mut sum, mut relayout, mut lines) = (0.0, 0.0, 0.0);
    for l in collapsed.lines() {
        let (stack, w) = l.rsplit_once(' ').unwrap();
        let w: f64 = w.parse().unwrap();
        sum += w;
        lines += 1.0;
        if stack.rsplit(';').next().unwrap().starts_with("relayout ") {
            relayout += w;
        }
    }
    assert!((sum - total).abs() <= lines, "collapsed {sum} vs {total}");
    assert!((relayout - seen["relayout"]).abs() <= 30.0, "collapsed relayout {relayout} vs {}", seen["relayout"]);
}
