//! Ranges by name in every command: measures, marks, interactions and events found as DevTools
//! finds them (the trees themselves: `conformance::range_queries_equal_devtools`), budgets and
//! diffs scoped to a measure, line times inside one, and the errors of a range an input lacks.

use serde_json::Value;

use crate::support::{jscalls, tmpdir};

const BASE: &str = "fixtures/chrome-shop-base.json.gz";
const SLOW: &str = "fixtures/chrome-shop-slow.json.gz";

fn ok(args: &[&str]) -> String {
    let o = jscalls(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

/// Exit code and the first line of stderr.
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let o = jscalls(args);
    let err = String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("").to_owned();
    (o.status.code(), err)
}

#[test]
fn ranges_lists_what_a_recording_offers() {
    let text = ok(&["ranges", BASE]);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("ranges_chrome_shop", text));
    let doc = json(&["ranges", BASE, "--format", "json", "--event", "EventDispatch"]);
    assert_eq!(doc["format"], "jscalls-ranges/1");
    let measures = doc["measures"].as_array().unwrap();
    let names: Vec<&str> = measures.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["boot", "add-item", "add-item", "add-item", "checkout", "totals", "add-item", "checkout", "totals"]
    );
    // Each window is its measure's: ts / 1000 to (ts + dur) / 1000.
    for m in measures {
        let (ts, dur) = (m["ts"].as_f64().unwrap(), m["dur"].as_f64().unwrap());
        assert_eq!(m["startTime"].as_f64().unwrap(), ts / 1000.0);
        assert_eq!(m["endTime"].as_f64().unwrap(), (ts + dur) / 1000.0);
    }
    assert_eq!(doc["interactions"].as_array().unwrap().len(), 6);
    // EventDispatch: DevTools' 100 candidates, in time order.
    let ev = doc["events"].as_array().unwrap();
    assert_eq!(ev.len(), 100);
    assert!(ev.windows(2).all(|w| w[0]["ts"].as_f64() <= w[1]["ts"].as_f64()));
}

#[test]
fn the_summary_lists_measures_and_interactions() {
    let text = ok(&["calls", "--format", "summary", BASE]);
    let tail: Vec<&str> = text.lines().skip_while(|l| !l.contains("measure(s)")).collect();
    assert_eq!(tail[0], "  9 measure(s) (--measure NAME[#K]):");
    assert_eq!(tail[1].split_whitespace().collect::<Vec<_>>(), ["boot", "4.7", "ms", "at", "+68.3", "ms"]);
    assert!(tail.iter().any(|l| l.trim_start().starts_with("checkout#1")), "{text}");
    let slowest: Vec<&&str> = tail.iter().filter(|l| l.ends_with("slowest")).collect();
    assert_eq!(slowest.len(), 1, "{text}");
    assert!(slowest[0].contains("86.7 ms"), "{text}");
}

/// The same range by each of its names: a measure, its two marks, and the event DevTools clicks.
#[test]
fn one_range_by_any_of_its_names() {
    let tree = |opt: &str, arg: &str| -> Value {
        let doc = json(&["tree", "--format", "devtools", opt, arg, BASE]);
        doc["range"].clone()
    };
    let m = tree("--measure", "checkout#1");
    let e = tree("--event", "checkout#1");
    assert_eq!(m["windowUs"], e["windowUs"]);
    assert_eq!(m["event"], e["event"]);
    assert_eq!(m["event"]["kind"], "async pair");
    assert_eq!(m["event"]["index"], 1);
    // Between the marks: the same times, as a range in ms (µs / 1000 × 1000).
    let b = tree("--between", "checkout-start#1..checkout-end#1");
    assert_eq!(b["startTime"], m["startTime"]);
    assert_eq!(b["endTime"], m["endTime"]);
    assert!(b.get("event").is_none());
    // The slowest interaction is the longest EventTiming pair.
    let i = tree("--interaction", "slowest");
    assert_eq!(i["event"]["name"], "EventTiming");
    assert_eq!(i["event"]["dur"], 86695.0);
    assert_eq!(tree("--interaction", "id=3641")["windowUs"], i["windowUs"]);
    assert_eq!(tree("--interaction", "3")["windowUs"], i["windowUs"]);
}

/// Every command weighs the same range alike: the tree's functions, the check's self times and
/// the export's stacks; the calls output keeps the calls that overlap it, whole.
#[test]
fn commands_agree_on_a_range() {
    let flat = ok(&["tree", "--measure", "checkout", "--flat", "--thread", "CrRendererMain", BASE]);
    let spin = flat.lines().find(|l| l.ends_with("shop.js:9:14")).unwrap();
    let self_ms: f64 = spin.split_whitespace().next().unwrap().parse().unwrap();
    let mut lines = flat.lines();
    assert_eq!(
        lines.next(),
        Some("--measure checkout#0: 69175927.199..69175974.271 ms on the trace's clock (47.072 ms)")
    );
    let head = lines.nth(1).unwrap();
    assert!(head.contains("47.072 ms"), "{head}");
    let dir = tmpdir("ranges", "agree");
    let budget = dir.join("b.toml");
    std::fs::write(&budget, "[[rule]]\nwithin = \"measure:checkout\"\nfunction = \"spin\"\nself = \"100ms\"\n")
        .unwrap();
    let doc = json(&["check", BASE, "--budget", budget.to_str().unwrap(), "--format", "json"]);
    let value = doc["rules"][0]["value"].as_f64().unwrap();
    assert!((value / 1000.0 - self_ms).abs() < 0.0005, "check {value} µs, tree {self_ms} ms");
    assert_eq!(doc["rules"][0]["within"], "--measure checkout#0");
    // The collapsed export: the same total as the tree's header.
    let out = dir.join("c.collapsed");
    ok(&["export", "--measure", "checkout", "--thread", "CrRendererMain", BASE, "-o", out.to_str().unwrap()]);
    let total: f64 = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap())
        .sum();
    assert!((total / 1000.0 - 47.072).abs() < 0.01, "collapsed {total} µs");
    // The calls that overlap the measure, each whole.
    let calls = json(&["calls", "--format", "json", "--measure", "checkout", BASE]);
    let r = &calls["range"];
    let (lo, hi) = (r["startTime"].as_f64().unwrap() * 1000.0, r["endTime"].as_f64().unwrap() * 1000.0);
    let mut n = 0;
    for p in calls["profiles"].as_array().unwrap() {
        for c in p["calls"].as_array().unwrap() {
            let (ts, dur) = (c["ts"].as_f64().unwrap(), c["dur"].as_f64().unwrap());
            assert!(ts <= hi && ts + dur >= lo, "{c} outside {lo}..{hi}");
            n += 1;
        }
    }
    // As many as the tree's header counts.
    assert!(head.contains(&format!("in {n} calls")), "{head}: {n} calls");
}

#[test]
fn a_budget_per_measure_passes_on_the_base_and_fails_on_the_slowed_build() {
    let dir = tmpdir("ranges", "budget");
    let budget = dir.join("b.toml");
    std::fs::write(
        &budget,
        r#"[[rule]]
name = "checkout stays under 55 ms"
within = "measure:checkout"
duration = "55ms"

[[rule]]
within = "measure:checkout"
function = "renderCart"
total = "35ms"

[[rule]]
within = "interaction"
js = "80ms"
"#,
    )
    .unwrap();
    let b = budget.to_str().unwrap();
    let o = jscalls(&["check", BASE, "--budget", b]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let o = jscalls(&["check", SLOW, "--budget", b]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("FAIL  checkout stays under 55 ms: 65.15 ms (budget 55 ms)"), "{text}");
    assert!(text.contains("FAIL  renderCart total time on every thread within measure:checkout:"), "{text}");
    // Several runs of the scenario: each rule held to the median (two slowed runs of three).
    let o = jscalls(&["check", BASE, SLOW, SLOW, "--budget", b]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains(
            "FAIL  checkout stays under 55 ms: 65.15 ms (median of 3 runs, 47.072 ms to 65.15 ms; budget 55 ms)"
        ),
        "{text}"
    );
    assert_eq!(jscalls(&["check", BASE, BASE, SLOW, "--budget", b]).status.code(), Some(0));
    // A range the input lacks fails, naming what it has.
    std::fs::write(&budget, "[[rule]]\nwithin = \"measure:pay\"\njs = \"1s\"\n").unwrap();
    let o = jscalls(&["check", BASE, "--budget", b]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("no measure named 'pay'; the measures are boot, add-item (4), checkout (2), totals (2)"),
        "{text}"
    );
    // ... unless it may be missing.
    std::fs::write(&budget, "[[rule]]\nwithin = \"measure:pay\"\njs = \"1s\"\nallow-missing = true\n").unwrap();
    assert_eq!(jscalls(&["check", BASE, "--budget", b]).status.code(), Some(0));
    // A malformed `within` is the budget's error, at its place.
    std::fs::write(&budget, "[[rule]]\nwithin = \"measures:pay\"\njs = \"1s\"\n").unwrap();
    let (code, err) = fails(&["check", BASE, "--budget", b]);
    assert_eq!(code, Some(2));
    assert!(err.contains("b.toml:2:10: within: 'measures:pay': expected measure:NAME"), "{err}");
}

#[test]
fn diff_within_a_measure_names_the_function_that_regressed() {
    let doc = json(&["diff", BASE, SLOW, "--measure", "checkout", "--format", "json"]);
    let r = &doc["range"];
    assert_eq!(r["option"], "--measure checkout#0");
    assert_eq!((r["base"].as_f64(), r["new"].as_f64()), (Some(47072.0), Some(65150.0)));
    // The call-tree node whose self time grew most is spin under renderCart.
    let top = &doc["callNodes"][0];
    let path: Vec<&str> = top["path"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(path, ["onCheckout /shop.js:35:82", "renderCart /shop.js:11:20", "spin /shop.js:9:14"]);
    assert!(top["new"]["self"].as_f64().unwrap() - top["base"]["self"].as_f64().unwrap() > 10_000.0, "{top}");
    let text = ok(&["diff", BASE, SLOW, "--measure", "checkout", "--top", "3"]);
    assert!(text.contains("range --measure checkout#0: 47.072 ms -> 65.150 ms (+18.078 ms, +38.4%)"), "{text}");
    assert!(text.contains("onCheckout>renderCart>spin"), "{text}");
}

/// Line times inside a range, worked out by hand: samples at 100..500 µs on lines 10, 10, 20,
/// 20, 11 and a measure from 250 to 450 µs. A sample's time is the interval before it, cut to
/// the measure: line 20 gets 50 + 100 µs, line 11 50 µs, line 10 nothing.
#[test]
fn line_times_inside_a_measure() {
    let trace = r#"[
{"name":"Profile","ph":"P","pid":1,"tid":1,"ts":0,"id":"0x1","args":{"data":{"startTime":0}}},
{"name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":0,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":[
 {"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},
 {"id":2,"parent":1,"callFrame":{"functionName":"a","scriptId":"7","url":"a.js","lineNumber":9,"columnNumber":0}},
 {"id":3,"parent":2,"callFrame":{"functionName":"b","scriptId":"7","url":"a.js","lineNumber":19,"columnNumber":0}}],
 "samples":[2,2,3,3,2]},"timeDeltas":[100,100,100,100,100],"lines":[10,10,20,20,11]}}},
{"name":"m","ph":"b","cat":"blink.user_timing","pid":1,"tid":1,"ts":250,"id":"0x9","args":{}},
{"name":"m","ph":"e","cat":"blink.user_timing","pid":1,"tid":1,"ts":450,"id":"0x9","args":{}}
]"#;
    let dir = tmpdir("ranges", "lines");
    let p = dir.join("t.json");
    std::fs::write(&p, trace).unwrap();
    let doc = json(&["lines", p.to_str().unwrap(), "--format", "json", "--measure", "m"]);
    let rows = doc["threads"][0]["lines"].as_array().unwrap();
    let got: Vec<(f64, f64)> = rows.iter().map(|r| (r["line"].as_f64().unwrap(), r["ms"].as_f64().unwrap())).collect();
    let want = [(20.0, 0.15), (11.0, 0.05)];
    assert_eq!(got.len(), 2, "{got:?}");
    for ((l, ms), (wl, wms)) in got.iter().zip(want) {
        assert!(*l == wl && (ms - wms).abs() < 1e-12, "{got:?}");
    }
    // The whole recording: 0.1 ms on each of the four lines after the first sample.
    let doc = json(&["lines", p.to_str().unwrap(), "--format", "json"]);
    let sum: f64 = doc["threads"][0]["lines"].as_array().unwrap().iter().map(|r| r["ms"].as_f64().unwrap()).sum();
    assert!((sum - 0.4).abs() < 1e-9, "{sum}");
    // DevTools' own document has no range.
    let (code, err) = fails(&["lines", p.to_str().unwrap(), "--format", "devtools", "--measure", "m"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--measure: DevTools' Sources panel sums the whole recording"), "{err}");
}

/// Bad ranges: one line naming what was asked and what exists; exit 2 for a malformed option,
/// 1 for an input that lacks it.
#[test]
fn bad_ranges_are_one_line_errors() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--measure", "pay"], 1, "--measure pay#0: no measure named 'pay'; the measures are boot, add-item (4)"),
        (&["--measure", "checkout#2"], 1, "--measure checkout#2: measure checkout#2: there are 2 (#0 to #1)"),
        (&["--event", "Nope#0"], 1, "--event Nope#0: no event named 'Nope' with a duration"),
        (&["--between", "checkout-end..checkout-start"], 1, "is not after mark checkout-end#0"),
        (
            &["--between", "nope..checkout-end"],
            1,
            "no mark named 'nope'; the marks are commitNavigationEnd, add-start (4)",
        ),
        (&["--interaction", "6"], 1, "--interaction 6: interaction#6: there are 6 (#0 to #5)"),
        (&["--interaction", "id=1"], 1, "no interaction with id 1; the ids are 3620, 3627"),
        (&["--range", "1..2"], 1, "--range 1..2: it lies outside the recording, which spans"),
        (&["--range", "5..1"], 2, "'5..1': its end is before its start"),
        (&["--interaction", "fast"], 2, "'fast': expected slowest, an index K or id=N"),
        (&["--measure", "#1"], 2, "a name is needed"),
        (&["--measure", "checkout", "--interaction", "0"], 2, "cannot be used with"),
    ];
    for (extra, code, want) in cases {
        let mut args = vec!["tree", BASE];
        args.extend_from_slice(extra);
        let (got, err) = fails(&args);
        assert_eq!(got, Some(*code), "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err}");
        if *code == 1 {
            assert!(err.starts_with(&format!("jscalls: error: {BASE}: ")), "{err}");
        }
    }
    // The viewer's export takes the range as `export` does (not ignored).
    let (code, err) = fails(&["view", BASE, "--no-open", "--timeout", "1", "--measure", "pay"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--measure pay#0: no measure named 'pay'"), "{err}");
    // A .cpuprofile has no interactions.
    let (code, err) = fails(&["tree", "fixtures/node-mixed.cpuprofile.gz", "--interaction", "slowest"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no interactions"), "{err}");
}

/// Node's console.time spans are measures too (Node writes no trace events for perf_hooks).
#[test]
fn node_console_time_spans_are_measures() {
    let doc = json(&["ranges", "--format", "json", "fixtures/node-timed-base.json.gz"]);
    let m = doc["measures"].as_array().unwrap();
    assert_eq!(m.len(), 3);
    assert!(m.iter().all(|x| x["name"] == "batch" && x["kind"] == "console.time"));
    let t = json(&["tree", "--format", "json", "--measure", "batch#2", "fixtures/node-timed-base.json.gz"]);
    assert!(t.to_string().contains("transform"));
}

/// A user-timing or interaction event is read whatever else its members hold, as `JSON.parse`
/// reads it: deep arrays, numbers past a double's range and lone surrogates in `args`, a lone
/// surrogate in an interaction's type, and a repeated `id2` (the last counts).
#[test]
fn timing_events_are_read_whatever_their_other_members_hold() {
    let ut = |ph: &str, name: &str, ts: u32, rest: &str| {
        format!(r#"{{"name":"{name}","cat":"blink.user_timing","ph":"{ph}","pid":5,"tid":5,"ts":{ts},{rest}}}"#)
    };
    let deep = format!(r#"{{"x":{}{},"big":1e400,"s":"\ud800"}}"#, "[".repeat(200), "]".repeat(200));
    let data =
        r#"{"type":"\ud800","interactionId":3,"timeStamp":1,"processingStart":1,"processingEnd":2,"duration":8}"#;
    let events = [
        r#"{"name":"thread_name","ph":"M","pid":5,"tid":5,"ts":0,"args":{"name":"CrRendererMain"}}"#.to_owned(),
        r#"{"name":"Profile","ph":"P","pid":5,"tid":5,"ts":0,"id":"0x1","args":{"data":{"startTime":0}}}"#.to_owned(),
        r#"{"name":"ProfileChunk","ph":"P","pid":5,"tid":5,"ts":0,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":0}},{"id":2,"parent":1,"callFrame":{"functionName":"a","scriptId":1,"url":"a.js"}}],"samples":[2,2,2,2,2,2,2]},"timeDeltas":[100,100,100,100,100,100,100]}}}"#.to_owned(),
        r#"{"name":"FunctionCall","ph":"X","pid":5,"tid":5,"ts":1,"dur":700}"#.to_owned(),
        ut("b", "m1", 100, &format!(r#""args":{deep},"id2":{{"local":"0x1"}}"#)),
        ut("e", "m1", 200, r#""args":{},"id2":{"local":"0x1"}"#),
        ut("b", "m2", 300, r#""args":{},"id2":{"local":"a"},"id2":{"local":"b"}"#),
        ut("e", "m2", 450, r#""args":{},"id2":{"local":"b"}"#),
        format!(
            r#"{{"name":"EventTiming","cat":"devtools.timeline","ph":"b","pid":5,"tid":5,"ts":500,"id":"0x9","args":{{"data":{data}}}}}"#
        ),
        r#"{"name":"EventTiming","cat":"devtools.timeline","ph":"e","pid":5,"tid":5,"ts":600,"id":"0x9","args":{}}"#
            .to_owned(),
    ];
    let path = tmpdir("ranges", "odd-timings").join("odd-timings.json");
    std::fs::write(&path, format!("[\n{}\n]", events.join(",\n"))).unwrap();
    let o = jscalls(&["ranges", "--format", "json", "--strict", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    // The type is written back as it was read: a lone surrogate, which serde refuses.
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains(r#""dur":100,"startTime":0.5,"endTime":0.6,"type":"\ud800","interactionId":3}"#), "{text}");
    let doc: Value = serde_json::from_str(&text.replace(r"\ud800", "?")).unwrap();
    let measures: Vec<(&str, f64)> = doc["measures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].as_str().unwrap(), m["dur"].as_f64().unwrap()))
        .collect();
    assert_eq!(measures, [("m1", 100.0), ("m2", 150.0)]);
    assert_eq!(doc["interactions"].as_array().map(Vec::len), Some(1));
}
