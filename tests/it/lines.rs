//! `jscalls lines`: time per line, worked out by hand on small profiles, and the views of a
//! real recording. (Parity with DevTools on every fixture is in `conformance.rs`.)

use serde_json::Value;

use crate::support::{jscalls, tmpdir};

/// root(1) > f(2, script 5, a.js) > g(3, script "0", b.js): script "0" is keyed by its URL.
/// Samples 2, 3, 3, 2 at 0, 100, 150, 400 µs with lines 4, 7, 0, 9.
const PROFILE: &str = r#"{"nodes":[
 {"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},
 {"id":2,"callFrame":{"functionName":"f","scriptId":"5","url":"a.js","lineNumber":0,"columnNumber":0},"children":[3]},
 {"id":3,"callFrame":{"functionName":"g","scriptId":"0","url":"b.js","lineNumber":3,"columnNumber":0},"children":[]}],
 "samples":[2,3,3,2],"timeDeltas":[0,100,50,250],"lines":[4,7,0,9],"startTime":0,"endTime":500}"#;

fn json_of(args: &[&str]) -> Value {
    let o = jscalls(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn each_sample_gives_its_line_the_time_since_the_sample_before() {
    let d = tmpdir("lines", "by-hand");
    let p = d.join("p.cpuprofile");
    std::fs::write(&p, PROFILE).unwrap();
    let doc = json_of(&["lines", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(doc["format"], "jscalls-lines/1");
    let t = &doc["threads"][0];
    assert_eq!(t["from"], "lines");
    // Sample 0 counts nothing; sample 1 (g, line 7): 0.1 ms; sample 2 has line 0: nothing;
    // sample 3 (f, line 9): 0.4 − 0.15 = 0.25 ms. Most time first.
    let rows: Vec<(String, Value, f64, f64, String)> = t["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["url"].as_str().unwrap().to_owned(),
                r["scriptId"].clone(),
                r["line"].as_f64().unwrap(),
                r["ms"].as_f64().unwrap(),
                r["function"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("a.js".to_owned(), Value::from(5), 9.0, 0.4 - 0.15, "f".to_owned()),
            ("b.js".to_owned(), Value::Null, 7.0, 0.1 - 0.0, "g".to_owned()),
        ]
    );
    assert_eq!(t["ms"].as_f64().unwrap(), (0.4 - 0.15) + 0.1);
}

#[test]
fn position_ticks_share_the_profile_by_hit_count() {
    // No `lines`: each tick is (end − start) / totalHitCount ms, the end one mean interval
    // after the last sample (0.4 + 0.4 / 3 ms), the hit count the 4 samples'.
    let d = tmpdir("lines", "ticks");
    let p = d.join("p.cpuprofile");
    let profile = PROFILE
        .replace(r#","lines":[4,7,0,9]"#, "")
        .replace(r#""children":[3]}"#, r#""children":[3],"positionTicks":[{"line":2,"ticks":3}]}"#);
    std::fs::write(&p, profile).unwrap();
    let doc = json_of(&["lines", p.to_str().unwrap(), "--format", "json"]);
    let t = &doc["threads"][0];
    assert_eq!(t["from"], "positionTicks");
    let r = &t["lines"][0];
    assert_eq!(
        (r["url"].as_str(), r["line"].as_f64(), r["ms"].as_f64()),
        (Some("a.js"), Some(2.0), Some(3.0 * ((0.4 + 0.4 / 3.0) / 4.0)))
    );
    assert_eq!(t["lines"].as_array().unwrap().len(), 1);
}

#[test]
fn odd_line_data_is_a_counted_warning_and_fails_strict() {
    let d = tmpdir("lines", "odd");
    let p = d.join("p.cpuprofile");
    std::fs::write(&p, PROFILE.replace("[4,7,0,9]", r#"[4,"x",-2]"#)).unwrap();
    let o = jscalls(&["lines", p.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("lines has 3 entries for 4 samples; DevTools pairs them by position [bad-line-data]"),
        "{err}"
    );
    assert!(err.contains("1 sample line(s) are not numbers; left out of the line times [bad-line-data]"), "{err}");
    assert!(err.contains("1 sample line(s) are negative or not whole; counted as DevTools counts them"), "{err}");
    // The line "x" is left out; -2 counts as DevTools counts it (sample 2: 0.15 − 0.1 ms).
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let lines = doc["threads"][0]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!((lines[0]["line"].as_f64(), lines[0]["ms"].as_f64()), (Some(-2.0), Some(0.15 - 0.1)));
    let o = jscalls(&["lines", p.to_str().unwrap(), "--strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_text_view_lists_the_hottest_lines_with_their_functions() {
    let o = jscalls(&["lines", "fixtures/chrome-ui.json.gz", "--top", "3", "--thread", "CrRendererMain"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("lines_text_chrome_ui", text));
}

#[test]
fn devtools_format_takes_every_profile() {
    let o = jscalls(&["lines", "fixtures/chrome-ui.json.gz", "--format", "devtools", "--thread", "1:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--format devtools writes every profile"));
}

#[test]
fn a_listing_shows_the_hot_functions_source_with_time_per_line() {
    // The recording's URLs are file:///…/fixtures/record/workloads/mixed.js of the machine
    // that made it: found in --source by their last parts.
    let o =
        jscalls(&["lines", "fixtures/node-mixed.cpuprofile.gz", "--source", "fixtures/record/workloads", "--top", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("lines_listing_node_mixed", text));
}

#[test]
fn a_listing_reads_nothing_outside_the_source_folders_and_never_writes_a_source() {
    let d = tmpdir("lines", "outside");
    std::fs::create_dir_all(d.join("src")).unwrap();
    let app = "// app\n".repeat(7) + "function f() {\n  return 1;\n}\n";
    std::fs::write(d.join("src/app.js"), &app).unwrap();
    std::fs::write(d.join("secret.js"), "the secret\nthe secret\nthe secret\n").unwrap();
    // Scripts named by a URL whose path is in the folder, by a path that climbs out of it, and
    // by an absolute file URL outside it.
    let outside = format!("file://{}", d.join("secret.js").display());
    let profile = PROFILE
        .replace(r#""url":"a.js""#, r#""url":"https://cdn.example/app.js""#)
        .replace(r#""url":"b.js""#, r#""url":"../secret.js""#);
    let p = d.join("p.cpuprofile");
    std::fs::write(&p, &profile).unwrap();
    let src = d.join("src");
    let o = jscalls(&["lines", p.to_str().unwrap(), "--source", src.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("return 1;"), "{text}");
    assert!(!text.contains("the secret"), "{text}");
    assert!(
        text.contains("(no source for ../secret.js: no file under --source, and the input carries none)"),
        "{text}"
    );
    let p2 = d.join("p2.cpuprofile");
    std::fs::write(&p2, profile.replace("../secret.js", &outside)).unwrap();
    let o = jscalls(&["lines", p2.to_str().unwrap(), "--source", src.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains("the secret"), "{text}");
    // The output may not be a source the listing reads.
    let target = src.join("app.js");
    let o = jscalls(&["lines", p.to_str().unwrap(), "--source", src.to_str().unwrap(), "-o", target.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is the source of https://cdn.example/app.js"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), app);
}

#[test]
fn diff_by_line_puts_each_sides_line_times_side_by_side() {
    let (a, b) = ("fixtures/chrome-worker-run1.json.gz", "fixtures/chrome-worker-run2.json.gz");
    let d = json_of(&["diff", a, b, "--level", "lines", "--format", "json"]);
    assert_eq!(d["level"], "lines");
    // Each side's time of /worker.js:2 on the worker, as `jscalls lines` gives it.
    let ms_of = |input: &str| -> f64 {
        let doc = json_of(&["lines", input, "--format", "json", "--thread", "DedicatedWorker thread"]);
        doc["threads"][0]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["url"].as_str().unwrap().ends_with("/worker.js") && r["line"] == 2)
            .map(|r| r["ms"].as_f64().unwrap())
            .sum()
    };
    let worker = d["threads"].as_array().unwrap().iter().find(|t| t["name"] == "DedicatedWorker thread").unwrap();
    let row = worker["lines"].as_array().unwrap().iter().find(|r| r["url"] == "/worker.js" && r["line"] == 2).unwrap();
    assert_eq!((row["base"].as_f64().unwrap(), row["new"].as_f64().unwrap()), (ms_of(a), ms_of(b)));
    assert!(ms_of(a) > 10.0, "a hot line");
    // Largest change first.
    let changes: Vec<f64> = worker["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["new"].as_f64().unwrap() - r["base"].as_f64().unwrap()).abs())
        .collect();
    assert!(changes.windows(2).all(|w| w[0] >= w[1]), "{changes:?}");
    let o = jscalls(&["diff", a, "--level", "lines", "--new-opt=--engine 0.0.65"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_firefox_profiles_frame_lines_give_the_line_times() {
    // GeckoMain's samples, 1 ms apart: stack 5 (render, its frame at line 10) at 8 and 11 ms,
    // stack 6 (the function at line 20) at 9 and 10 ms: each line gets the 2 ms since the
    // samples before them.
    let doc = json_of(&["lines", "fixtures/gecko/hand.json", "--format", "json", "--thread", "GeckoMain"]);
    let rows: Vec<(String, f64, f64)> = doc["threads"][0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["url"].as_str().unwrap().to_owned(), r["line"].as_f64().unwrap(), r["ms"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        rows,
        vec![("http://a.test/app.js".to_owned(), 10.0, 2.0), ("http://a.test/app.js".to_owned(), 20.0, 2.0)]
    );
}

/// An input without line data says where its kind has them: a Firefox profile exported without
/// lines (its frames have none), a `.cpuprofile` whose `lines` are empty.
#[test]
fn no_line_times_say_where_the_input_kind_has_them() {
    for (input, whence) in [
        ("fixtures/gecko/processed-v70.json.gz", "a Firefox profile has them on its JavaScript frames"),
        ("fixtures/lines/b2-empty-lines.cpuprofile", "a .cpuprofile needs positionTicks or lines"),
    ] {
        for list in [&[][..], &["--list"][..]] {
            let mut args = vec!["lines", input];
            args.extend_from_slice(list);
            let o = jscalls(&args);
            let text = String::from_utf8(o.stdout).unwrap();
            assert!(o.status.success() && text.starts_with("no line times: ") && text.contains(whence), "{text}");
        }
    }
}

/// A Firefox sample that ends in native code (an address above the JavaScript frames, as most
/// of a real recording's do) is at its innermost JavaScript frame's line, as a V8 sample is at
/// its top JavaScript frame's. Samples 1 ms apart on: render (its frame at line 12), a native
/// address above render twice, the address alone, render: line 12 gets the 3 ms since the
/// samples before the three with render (the first sample gives nothing), and `--by-line`
/// puts those samples and the first on the line; the calls are as recorded.
#[test]
fn a_firefox_sample_in_native_code_is_at_its_javascript_line() {
    let dir = tmpdir("lines", "firefox-native");
    let profile = dir.join("native.json");
    std::fs::write(
        &profile,
        r#"{"meta":{"version":27,"startTime":0,"interval":1,"processType":0,"product":"Firefox",
"categories":[{"name":"Other","color":"grey","subcategories":["Other"]}]},"libs":[],
"threads":[{"name":"GeckoMain","processType":"default","pid":1,"tid":1,"registerTime":0,"unregisterTime":null,
"samples":{"schema":{"stack":0,"time":1},"data":[[0,1.0],[1,2.0],[1,3.0],[2,4.0],[0,5.0]]},
"markers":{"schema":{"name":0,"startTime":1,"endTime":2,"phase":3,"category":4,"data":5},"data":[]},
"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1],[null,1]]},
"frameTable":{"schema":{"location":0,"relevantForJS":1,"innerWindowID":2,"implementation":3,"line":4,"column":5,
"category":6,"subcategory":7},"data":[[0,false,0,null,12,7,0,0],[1,false,0,null,null,null,0,0]]},
"stringTable":["render (http://a.test/app.js:10:3)","0x1234"]}]}"#,
    )
    .unwrap();
    let p = profile.to_str().unwrap();
    let doc = json_of(&["lines", p, "--format", "json"]);
    let rows: Vec<(String, f64, f64, f64)> = doc["threads"][0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_f64().unwrap();
            (r["url"].as_str().unwrap().to_owned(), n("line"), n("ms"), n("samples"))
        })
        .collect();
    assert_eq!(rows, vec![("http://a.test/app.js".to_owned(), 12.0, 3.0, 3.0)]);
    let self_of = |args: &[&str]| -> Vec<(String, f64)> {
        let mut all = vec!["tree", p, "--weight", "samples", "--flat", "--format", "json"];
        all.extend_from_slice(args);
        json_of(&all)["threads"][0]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["func"]["name"].as_str().unwrap().to_owned(), f["self"].as_f64().unwrap()))
            .filter(|(_, s)| *s > 0.0)
            .collect()
    };
    assert_eq!(self_of(&["--by-line"]), vec![("line 12".to_owned(), 4.0), ("0x1234".to_owned(), 1.0)]);
    assert_eq!(self_of(&[]), vec![("0x1234".to_owned(), 3.0), ("render".to_owned(), 2.0)]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn by_line_puts_each_sample_under_a_frame_of_its_line() {
    // The samples on relayout's line 11 in a flat tree by line are the samples DevTools adds to
    // ui.js:11 (jscalls lines' count), sample 0 aside (DevTools adds nothing for it).
    let tree = json_of(&[
        "tree",
        "fixtures/chrome-ui.json.gz",
        "--thread",
        "CrRendererMain",
        "--weight",
        "samples",
        "--by-line",
        "--flat",
        "--format",
        "json",
    ]);
    let lines = json_of(&["lines", "fixtures/chrome-ui.json.gz", "--thread", "CrRendererMain", "--format", "json"]);
    let in_tree = tree["threads"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["func"]["name"] == "line 11" && f["func"]["url"].as_str().unwrap().ends_with("/ui.js"))
        .map(|f| f["self"].as_f64().unwrap())
        .unwrap();
    let in_lines = lines["threads"][0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["url"].as_str().unwrap().ends_with("/ui.js") && r["line"] == 11)
        .map(|r| r["samples"].as_f64().unwrap())
        .unwrap();
    assert_eq!(in_tree, in_lines);
    assert!(in_tree > 50.0);
    let o = jscalls(&["tree", "fixtures/chrome-ui.json.gz", "--by-line"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --weight samples or sample-time"));
}

/// Once a map applies, a line's time is at the original file and line of the sample's line
/// and column (the newest DevTools' Sources panel); a sample without a column maps from its
/// line's start. Worked out by hand: `gen.js`'s one line maps column 0 to src/a.ts:1 and
/// column 17 to src/b.ts:5 (mappings `AAAA,iBCIE`); samples a, a, a, b, b, a 1 ms apart at
/// columns 15, 15, 15, 31, 31 and none: sample 0 adds nothing, then a.ts:1 gets samples 1, 2
/// and 5 (3 ms) and b.ts:5 samples 3 and 4 (2 ms). DevTools' own sums stay the script's.
#[test]
fn line_times_go_to_the_original_lines_once_a_map_applies() {
    let d = tmpdir("lines", "mapped");
    let url = "http://x.test/gen.js";
    let profile = format!(
        r#"{{"nodes":[
 {{"id":1,"callFrame":{{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},"children":[2,3]}},
 {{"id":2,"callFrame":{{"functionName":"a","scriptId":"7","url":"{url}","lineNumber":0,"columnNumber":10}}}},
 {{"id":3,"callFrame":{{"functionName":"b","scriptId":"7","url":"{url}","lineNumber":0,"columnNumber":27}}}}],
 "samples":[2,2,2,3,3,2],"timeDeltas":[1000,1000,1000,1000,1000,1000],"lines":[1,1,1,1,1,1],
 "columns":[15,15,15,31,31,0],"startTime":0,"endTime":7000}}"#
    );
    let input = d.join("gen.cpuprofile");
    std::fs::write(&input, profile).unwrap();
    let map = d.join("gen.js.map");
    std::fs::write(&map, r#"{"version":3,"sources":["src/a.ts","src/b.ts"],"names":[],"mappings":"AAAA,iBCIE"}"#)
        .unwrap();
    let pair = format!("{url}={}", map.display());
    let input = input.to_str().unwrap();
    let rows = |doc: &Value| -> Vec<(String, f64, f64)> {
        doc["merged"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["url"].as_str().unwrap().to_owned(), r["line"].as_f64().unwrap(), r["ms"].as_f64().unwrap()))
            .collect()
    };
    let o = jscalls(&["lines", input, "--format", "json", "--source-map", &pair]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("5 of 5 line samples at their original place (1 without a column"), "{said}");
    let mapped: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        rows(&mapped),
        [("http://x.test/src/a.ts".to_owned(), 1.0, 3.0), ("http://x.test/src/b.ts".to_owned(), 5.0, 2.0)]
    );
    let plain = json_of(&["lines", input, "--format", "json", "--no-source-maps"]);
    assert_eq!(rows(&plain), [(url.to_owned(), 1.0, 5.0)]);
    // By column: the generated columns each sample recorded (0: none), and their original ones.
    let columns = |extra: &[&str]| -> Vec<(String, f64, f64, f64)> {
        let mut args = vec!["lines", input, "--format", "json", "--columns"];
        args.extend(extra);
        let mut rows: Vec<(String, f64, f64, f64)> = json_of(&args)["merged"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let n = |k: &str| r[k].as_f64().unwrap();
                (r["url"].as_str().unwrap().to_owned(), n("line"), n("column"), n("ms"))
            })
            .collect();
        rows.sort_by(|a, b| a.partial_cmp(b).unwrap());
        rows
    };
    assert_eq!(
        columns(&["--no-source-maps"]),
        [(url.to_owned(), 1.0, 0.0, 1.0), (url.to_owned(), 1.0, 15.0, 2.0), (url.to_owned(), 1.0, 31.0, 2.0)]
    );
    assert_eq!(
        columns(&["--source-map", &pair]),
        [("http://x.test/src/a.ts".to_owned(), 1.0, 1.0, 3.0), ("http://x.test/src/b.ts".to_owned(), 5.0, 3.0, 2.0)]
    );
    assert_eq!(jscalls(&["lines", input, "--columns", "--format", "devtools"]).status.code(), Some(2));
    // `diff --level lines` pairs lines at their original places (a rebuild moves the others).
    let o = jscalls(&["diff", input, input, "--level", "lines", "--source-map", &pair, "-q"]);
    let diff = String::from_utf8(o.stdout).unwrap();
    assert!(diff.contains("/src/a.ts:1  a") && diff.contains("/src/b.ts:5  b"), "{diff}");
    // `--by-line` stacks put each sample (sample 0 too) under its original line.
    let tree = json_of(&[
        "tree",
        input,
        "--weight",
        "samples",
        "--by-line",
        "--flat",
        "--format",
        "json",
        "--source-map",
        &pair,
    ]);
    let mut by_line: Vec<(String, String, f64)> = tree["threads"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["func"]["name"].as_str().unwrap().starts_with("line "))
        .map(|f| {
            let func = &f["func"];
            (
                func["name"].as_str().unwrap().to_owned(),
                func["url"].as_str().unwrap().to_owned(),
                f["self"].as_f64().unwrap(),
            )
        })
        .collect();
    by_line.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        by_line,
        [
            ("line 1".to_owned(), "http://x.test/src/a.ts".to_owned(), 4.0),
            ("line 5".to_owned(), "http://x.test/src/b.ts".to_owned(), 2.0)
        ]
    );
    // DevTools' own document is the generated script's, maps or not.
    let devtools = |extra: &[&str]| {
        let mut args = vec!["lines", input, "--format", "devtools"];
        args.extend(extra);
        jscalls(&args).stdout
    };
    assert_eq!(devtools(&["--source-map", &pair]), devtools(&["--no-source-maps"]));
}
