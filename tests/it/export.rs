//! `jscalls export`: speedscope, collapsed stacks and SVG, on a profile whose calls are known by
//! hand and on a real recording; the speedscope file in the real speedscope when a browser is here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{cpuprofile, node, viewer_check};

use crate::support::jscalls;

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// root > a > b; samples a, a>b, a>b, a, root at 0, 100, …, 400 µs: calls a [0, 400), b [100, 300).
fn profile(dir: &Path) -> PathBuf {
    let nodes = [node(1, "(root)", &[2]), node(2, "a@a.js", &[3]), node(3, "b@a.js", &[])];
    let p = dir.join("ab.cpuprofile");
    std::fs::write(&p, cpuprofile(&nodes, &[2, 3, 3, 2, 1], &[0.0, 100.0, 100.0, 100.0, 100.0], 0.0, 400.0)).unwrap();
    p
}

/// The evented profile's events as `O a 0` / `C b 300`.
fn events(doc: &serde_json::Value, profile: usize) -> Vec<String> {
    let frames = doc["shared"]["frames"].as_array().unwrap();
    let name = |i: &serde_json::Value| {
        let n = frames[i.as_u64().unwrap() as usize]["name"].as_str().unwrap();
        n.split(' ').next().unwrap().to_owned()
    };
    doc["profiles"][profile]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{} {} {}", e["type"].as_str().unwrap(), name(&e["frame"]), e["at"]))
        .collect()
}

#[test]
fn speedscope_opens_and_closes_each_call_at_its_estimated_times() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path());
    let p = p.to_str().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&stdout(&jscalls(&["export", p, "--to", "speedscope"]))).unwrap();
    assert_eq!(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
    assert_eq!(doc["shared"]["frames"][0], serde_json::json!({"name": "a a.js", "file": "a.js"}));
    let prof = &doc["profiles"][0];
    assert_eq!((prof["type"].as_str(), prof["unit"].as_str()), (Some("evented"), Some("microseconds")));
    assert_eq!((prof["startValue"].as_f64(), prof["endValue"].as_f64()), (Some(0.0), Some(400.0)));
    assert_eq!(events(&doc, 0), ["O a 0", "O b 100", "C b 300", "C a 400"]);

    // b merged into a: a runs throughout, as one open and one close.
    let o = jscalls(&["export", p, "--to", "speedscope", "--transform", "merge-function:b"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(events(&doc, 0), ["O a 0", "C a 400"]);
    // a dropped: nothing runs while it does.
    let o = jscalls(&["export", p, "--to", "speedscope", "--transform", "focus:a>b"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(events(&doc, 0), ["O b 100", "C b 300"]);

    // Samples: one per sample, root-first frame ids, weights in samples.
    let o = jscalls(&["export", p, "--to", "speedscope", "--weight", "samples"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let prof = &doc["profiles"][0];
    assert_eq!(prof["type"], "sampled");
    assert_eq!(prof["unit"], "none");
    assert_eq!(prof["samples"], serde_json::json!([[0], [0, 1], [0, 1], [0]]));
    assert_eq!(prof["weights"], serde_json::json!([1, 1, 1, 1]));
}

#[test]
fn collapsed_stacks_weigh_self_time_in_microseconds() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path());
    let p = p.to_str().unwrap();
    assert_eq!(stdout(&jscalls(&["export", p, "--to", "collapsed"])), "a a.js 200\na a.js;b a.js 200\n");
    assert_eq!(
        stdout(&jscalls(&["export", p, "--to", "collapsed", "--weight", "samples"])),
        "a a.js 2\na a.js;b a.js 2\n"
    );
    assert_eq!(
        stdout(&jscalls(&["export", p, "--to", "collapsed", "--by-time"])),
        "a a.js 100\na a.js;b a.js 200\na a.js 100\n"
    );
    assert_eq!(
        stdout(&jscalls(&["export", p, "--to", "collapsed", "--transform", "merge-function:a"])),
        "(root) 200\nb a.js 200\n"
    );
    // Written where -o says, the format from its name.
    let out = dir.path().join("x.folded");
    stdout(&jscalls(&["export", p, "-o", out.to_str().unwrap()]));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a a.js 200\na a.js;b a.js 200\n");
}

#[test]
fn svg_flame_graph_names_the_input_and_the_functions() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path());
    let out = dir.path().join("f.svg");
    stdout(&jscalls(&["export", p.to_str().unwrap(), "-o", out.to_str().unwrap()]));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "{}", &svg[..200]);
    assert!(svg.contains("ab.cpuprofile: flame graph"));
    assert!(svg.contains("<title>b a.js (200 µs, 50.00%)</title>"), "{svg}");
    // The same input gives the same bytes.
    let again = dir.path().join("g.svg");
    stdout(&jscalls(&["export", p.to_str().unwrap(), "-o", again.to_str().unwrap()]));
    assert_eq!(std::fs::read(&again).unwrap(), svg.as_bytes());
}

/// A `.cpuprofile` of `nodes` whose samples are `spans`: each (node, µs until the next
/// sample), the first at 0, the profile ending with the last one's.
fn profile_of_spans(nodes: &[String], spans: &[(i64, f64)]) -> String {
    let samples: Vec<i64> = spans.iter().map(|s| s.0).collect();
    let deltas: Vec<f64> = std::iter::once(0.0).chain(spans.iter().map(|s| s.1)).take(spans.len()).collect();
    let end: f64 = spans.iter().map(|s| s.1).sum();
    cpuprofile(nodes, &samples, &deltas, 0.0, end)
}

/// The SVG export and the collapsed stacks of the profile at `p`, written into `dir`.
fn svg_and_collapsed(dir: &std::path::Path, p: &str) -> (String, String) {
    let (svg, collapsed) = (dir.join("out.svg"), dir.join("out.collapsed"));
    stdout(&jscalls(&["export", p, "-o", svg.to_str().unwrap()]));
    stdout(&jscalls(&["export", p, "-o", collapsed.to_str().unwrap()]));
    (std::fs::read_to_string(&svg).unwrap(), std::fs::read_to_string(&collapsed).unwrap())
}

/// The flame graph inferno draws from every line of `lines`, its frames placed as the
/// export's are.
fn inferno_svg(lines: &str) -> String {
    let mut opt = inferno::flamegraph::Options::default();
    opt.count_name = "µs".to_owned();
    opt.subtitle = Some("a subtitle, as the export's, to draw at the same height".to_owned());
    opt.name_type = "Function:".to_owned();
    opt.deterministic = true;
    opt.text_truncate_direction = inferno::flamegraph::TextTruncateDirection::Right;
    let mut all = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines.lines(), &mut all).unwrap();
    String::from_utf8(all).unwrap()
}

/// The frames a flame graph draws (`<g>…</g>`, each with its title, place and label).
fn drawn_frames(svg: &str) -> Vec<&str> {
    svg.split("<g>").skip(1).map(|g| &g[..g.find("</g>").unwrap()]).collect()
}

#[test]
fn svg_draws_every_frame_wide_enough_where_all_lines_would() {
    // main (a.js) calls `heavy` for 15 ms at a time, with a 40 µs `aN` or `zN` (each calling a
    // leaf) and 100 µs of its own between: hundreds of subtrees too narrow to draw, which the
    // export folds into fewer lines. The flame graph must be the one of every line.
    let dir = tempfile::tempdir().unwrap();
    let n = 200;
    let mut nodes = vec![node(1, "(root)", &[2])];
    let tiny: Vec<i64> = (0..n).map(|i| 4 + 2 * i).collect();
    nodes.push(node(2, "main@a.js", &[&[3], &tiny[..]].concat()));
    nodes.push(node(3, "heavy@a.js", &[]));
    for (i, &t) in tiny.iter().enumerate() {
        let name = format!("{}{i}@a.js", if i % 2 == 0 { "a" } else { "z" });
        nodes.push(node(t, &name, &[t + 1]));
        nodes.push(node(t + 1, &format!("leaf{i}@a.js"), &[]));
    }
    let (mut samples, mut deltas) = (Vec::new(), Vec::new());
    for &t in &tiny {
        for _ in 0..150 {
            samples.push(3);
            deltas.push(100.0);
        }
        samples.extend([t + 1, 2]);
        deltas.extend([100.0, 40.0]);
    }
    let end = deltas.iter().sum::<f64>() + 100.0;
    let p = dir.path().join("many.cpuprofile");
    std::fs::write(&p, cpuprofile(&nodes, &samples, &deltas, 0.0, end)).unwrap();
    let (ours, lines) = svg_and_collapsed(dir.path(), p.to_str().unwrap());
    assert_eq!(lines.lines().count(), n as usize + 2, "{lines}");
    let drawn = drawn_frames(&ours);
    assert_eq!(drawn, drawn_frames(&inferno_svg(&lines)));
    // all, main, heavy, and nothing of the narrow calls.
    assert_eq!(drawn.len(), 3, "{drawn:?}");
}

#[test]
fn svg_folds_exactly_the_subtrees_inferno_would_leave_out() {
    // main calls `heavy` and, between its runs, 21 subtrees `sN` > `leafN` (all of it in the
    // leaf) whose weights step by 1 µs across the narrowest frame inferno draws (its
    // `min_width` percent of the whole): the one just under it is folded into one line, the
    // one at it keeps its leaf, as inferno draws them from every line.
    let dir = tempfile::tempdir().unwrap();
    let n = 21;
    let kids: Vec<i64> = (0..n).map(|i| 4 + 2 * i).collect();
    let mut nodes =
        vec![node(1, "(root)", &[2]), node(2, "main@a.js", &[&[3], &kids[..]].concat()), node(3, "heavy@a.js", &[])];
    // (node, µs until the next sample)
    let mut spans: Vec<(i64, f64)> = Vec::new();
    for (i, &t) in kids.iter().enumerate() {
        nodes.push(node(t, &format!("s{i}@a.js"), &[t + 1]));
        nodes.push(node(t + 1, &format!("leaf{i}@a.js"), &[]));
        spans.extend(std::iter::repeat_n((3, 100.0), 470));
        spans.extend([(t + 1, 91.0 + i as f64), (2, 40.0)]);
    }
    let p = dir.path().join("steps.cpuprofile");
    std::fs::write(&p, profile_of_spans(&nodes, &spans)).unwrap();
    let (ours, lines) = svg_and_collapsed(dir.path(), p.to_str().unwrap());
    let weight = |l: &str| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap();
    let total: u64 = lines.lines().map(weight).sum();
    // Each subtree's weight, its own line's and its leaf's.
    let subtree = |i: usize| -> u64 {
        lines.lines().filter(|l| l.contains(&format!(";s{i} ")) || l.contains(&format!(";s{i};"))).map(weight).sum()
    };
    let widths: Vec<u64> = (0..n as usize).map(subtree).collect();
    // inferno's own test: a frame `w` wide is left out when `(w as f64) < limit`.
    let limit = inferno::flamegraph::Options::default().min_width / (100.0 / total as f64);
    let first_drawn = widths.iter().copied().filter(|&w| w as f64 >= limit).min().unwrap();
    assert!(widths.contains(&(first_drawn - 1)), "the steps straddle the limit {limit}: {widths:?}");
    let drawn = drawn_frames(&ours);
    assert_eq!(drawn, drawn_frames(&inferno_svg(&lines)));
    // The subtrees at or over the limit are drawn, each with its leaf.
    let wide = widths.iter().filter(|&&w| w >= first_drawn).count();
    assert_eq!(drawn.iter().filter(|g| g.starts_with("<title>leaf")).count(), wide, "{drawn:?}");
    assert!(wide > 0 && wide < n as usize);
}

#[test]
fn svg_keeps_the_place_of_a_sibling_whose_name_extends_another() {
    // main calls `L` (1 µs, then 3 in its child `y`), `L S` and `heavy`: `L S` sorts between
    // `L`'s own line and its child's, so inferno draws `L` in two places and `L S` after the
    // first. `L` is far too narrow to draw, but folding it into one line would move `L S`.
    let dir = tempfile::tempdir().unwrap();
    let nodes = [(1, "(root)", &[2][..]), (2, "main", &[3, 4, 6]), (3, "heavy", &[]), (4, "L", &[5]), (5, "y", &[])];
    let mut nodes: Vec<String> = nodes.iter().map(|(id, name, kids)| node(*id, name, kids)).collect();
    nodes.push(node(6, "L S", &[]));
    let mut spans: Vec<(i64, f64)> = Vec::new();
    for _ in 0..10 {
        spans.extend(std::iter::repeat_n((3, 100.0), 1000));
        spans.extend([(4, 1.0), (5, 3.0), (6, 5000.0), (2, 40.0)]);
    }
    let p = dir.path().join("split.cpuprofile");
    std::fs::write(&p, profile_of_spans(&nodes, &spans)).unwrap();
    let (ours, lines) = svg_and_collapsed(dir.path(), p.to_str().unwrap());
    assert_eq!(lines, "main 360\nmain;L 10\nmain;L S 50000\nmain;L;y 30\nmain;heavy 1000000\n");
    let drawn = drawn_frames(&ours);
    assert_eq!(drawn, drawn_frames(&inferno_svg(&lines)));
    // `L S` starts after `L`'s own 10 µs and main's 360, not after all of `L`.
    assert!(drawn.iter().any(|g| g.starts_with("<title>L S") && g.contains("fg:x=\"370\"")), "{drawn:?}");
}

/// A thread of a processed Firefox profile (the shared tables of version 60 on), read back
/// table by table: each sample as (time ms, stack's function names outermost first, weight).
fn firefox_samples(doc: &serde_json::Value, t: &serde_json::Value) -> Vec<(f64, Vec<String>, f64)> {
    let sh = &doc["shared"];
    let strings: Vec<&str> = sh["stringArray"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let (stack, frame, func) = (&sh["stackTable"], &sh["frameTable"], &sh["funcTable"]);
    let n_stacks = stack["length"].as_u64().unwrap() as usize;
    let path = |mut s: Option<u64>| {
        let mut out = Vec::new();
        while let Some(k) = s {
            let k = k as usize;
            assert!(k < n_stacks, "stack {k} of {n_stacks}");
            let fr = stack["frame"][k].as_u64().unwrap() as usize;
            assert!(fr < frame["length"].as_u64().unwrap() as usize);
            let fu = frame["func"][fr].as_u64().unwrap() as usize;
            out.push(strings[func["name"][fu].as_u64().unwrap() as usize].to_owned());
            // A parent is an offset back (0: a root).
            let back = stack["prefixOffset"][k].as_u64().unwrap() as usize;
            assert!(back <= k);
            s = (back > 0).then(|| (k - back) as u64);
        }
        out.reverse();
        out
    };
    let samples = &t["samples"];
    let mut time = 0.0;
    (0..samples["length"].as_u64().unwrap() as usize)
        .map(|i| {
            time += samples["timeDeltas"][i].as_f64().unwrap();
            (time, path(samples["stack"][i].as_u64()), samples["weight"][i].as_f64().unwrap())
        })
        .collect()
}

/// `tree --flat`'s self time (µs) of each function of the real fixture's main thread, by
/// label (as the exports name functions); labels several functions share are summed.
fn flat_self_by_label() -> std::collections::HashMap<String, f64> {
    let flat: serde_json::Value = serde_json::from_str(&stdout(&jscalls(&[
        "tree",
        "fixtures/chrome-ui.json.gz",
        "--flat",
        "--format",
        "json",
        "--thread",
        "CrRendererMain",
    ])))
    .unwrap();
    let mut want: std::collections::HashMap<String, f64> = Default::default();
    for f in flat["threads"][0]["functions"].as_array().unwrap() {
        let func = &f["func"];
        let label = jscalls::tree::Func {
            name: func["name"].as_str().unwrap().to_owned(),
            url: func["url"].as_str().unwrap().to_owned(),
            script: String::new(),
            line: func["line"].as_i64(),
            column: func["column"].as_i64(),
        }
        .label();
        *want.entry(label).or_default() += f["self"].as_f64().unwrap();
    }
    want
}

#[test]
fn firefox_profile_samples_each_call_at_its_estimated_times() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path());
    let out = dir.path().join("ab.json.gz");
    stdout(&jscalls(&["export", p.to_str().unwrap(), "-o", out.to_str().unwrap()]));
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(&out).unwrap()), &mut text)
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let t = &doc["threads"][0];
    assert_eq!(doc["threads"].as_array().unwrap().len(), 1);
    assert_eq!(t["samples"]["weightType"], "tracing-ms");
    let got: Vec<String> =
        firefox_samples(&doc, t).iter().map(|(at, stack, w)| format!("{at:.3} {} {w}", stack.join(">"))).collect();
    assert_eq!(got, ["0.000 a a.js 0.1", "0.100 a a.js>b a.js 0.2", "0.300 a a.js 0.1", "0.400  0"]);
    let isjs = doc["shared"]["funcTable"]["isJS"].as_array().unwrap();
    assert!(isjs.iter().all(|b| b == true), "{isjs:?}");
}

/// A real recording's Firefox profile: every table resolves, times never go back, and each
/// function's self time (the weights of the samples it is the leaf of) is `tree --flat`'s.
#[test]
fn firefox_profile_of_a_real_recording_keeps_self_times() {
    let doc: serde_json::Value = serde_json::from_str(&stdout(&jscalls(&[
        "export",
        "fixtures/chrome-ui.json.gz",
        "--to",
        "firefox",
        "--thread",
        "CrRendererMain",
    ])))
    .unwrap();
    let samples = firefox_samples(&doc, &doc["threads"][0]);
    assert!(samples.windows(2).all(|w| w[0].0 <= w[1].0));
    // The trace events are markers: names resolved, intervals that end after they start.
    let t = &doc["threads"][0];
    let m = &t["markers"];
    let names: std::collections::BTreeSet<&str> = m["name"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| doc["shared"]["stringArray"][i.as_u64().unwrap() as usize].as_str().unwrap())
        .collect();
    assert!(m["length"].as_u64().unwrap() > 1000, "{}", m["length"]);
    for n in ["RunTask", "FunctionCall", "EvaluateScript"] {
        assert!(names.contains(n), "{n} not among {names:?}");
    }
    for i in 0..m["length"].as_u64().unwrap() as usize {
        if m["phase"][i] == 1 {
            assert!(m["endTime"][i].as_f64().unwrap() >= m["startTime"][i].as_f64().unwrap());
        }
        assert!(m["data"][i].is_null(), "a marker without a payload: {}", m["data"][i]);
    }
    // Times count from the export's first whole ms: the first EvaluateScript is at the trace's.
    let zero = doc["meta"]["startTime"].as_f64().unwrap();
    assert_eq!(zero.fract(), 0.0);
    let first = |times: &mut dyn Iterator<Item = f64>| times.fold(f64::INFINITY, f64::min);
    let evaluate = doc["shared"]["stringArray"].as_array().unwrap().iter().position(|n| n == "EvaluateScript").unwrap();
    let got = first(
        &mut (0..m["length"].as_u64().unwrap() as usize)
            .filter(|&i| m["name"][i] == evaluate)
            .map(|i| m["startTime"][i].as_f64().unwrap()),
    );
    let mut trace = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open("fixtures/chrome-ui.json.gz").unwrap()),
        &mut trace,
    )
    .unwrap();
    let trace: serde_json::Value = serde_json::from_str(&trace).unwrap();
    let events = trace.get("traceEvents").unwrap_or(&trace).as_array().unwrap();
    let want = first(&mut events.iter().filter(|e| e["name"] == "EvaluateScript").map(|e| e["ts"].as_f64().unwrap()));
    assert!(((zero + got) * 1000.0 - want).abs() < 0.01, "{zero} + {got} ms, trace {want} µs");
    let markers = first(&mut m["startTime"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()));
    assert!(markers.min(samples[0].0) < 1.0, "the first time is within the first ms");
    let mut self_ms: std::collections::HashMap<String, (f64, usize)> = Default::default();
    for (_, stack, w) in &samples {
        if let Some(leaf) = stack.last() {
            let e = self_ms.entry(leaf.clone()).or_default();
            e.0 += w;
            e.1 += 1;
        }
    }
    let want = flat_self_by_label();
    assert!(want.len() > 50);
    for (label, us) in want {
        let ms = us / 1000.0;
        let (got, n) = self_ms.get(&label).copied().unwrap_or_default();
        // Weights are whole µs, rounded as a running sum: a µs at most per sample.
        assert!((got - ms).abs() <= 0.001 * (n + 1) as f64, "{label}: {got} ms in {n} samples, tree {ms} ms");
    }
}

#[test]
fn export_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path());
    let p = p.to_str().unwrap();
    for (args, says) in [
        (vec!["export", p], "give --to"),
        (vec!["export", p, "-o", "x.txt"], "give --to"),
        (vec!["export", p, "--to", "collapsed", "--icicle"], "--icicle"),
        (vec!["export", p, "--to", "speedscope", "--by-time"], "--by-time"),
        (vec!["export", p, "--to", "svg", "--transform", "merge:nosuch"], "no function named 'nosuch'"),
        (vec!["export", p, "--to", "collapsed", "--source", "fixtures"], "--to firefox"),
        (vec!["export", p, "--to", "firefox", "--source", "no/such/dir"], "no such directory"),
        (vec!["export", p, "--to", "speedscope", "--no-sources"], "--to firefox"),
    ] {
        let o = jscalls(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// An input without a call is the input's fault, not the command line's: exit 1, one line that
/// names the file, and no output left behind, in every format.
#[test]
fn export_of_an_input_without_calls_fails_as_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("empty.json");
    std::fs::write(&input, "[]").unwrap();
    for to in ["speedscope", "firefox", "collapsed", "svg"] {
        let out = dir.path().join(format!("out.{to}"));
        // -q: the warning that the input has no CPU profile is another test's.
        let o = jscalls(&["export", input.to_str().unwrap(), "--to", to, "-o", out.to_str().unwrap(), "-q"]);
        assert_eq!(o.status.code(), Some(1), "--to {to}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            [format!("jscalls: error: {}: no thread has estimated calls to export", input.display())],
            "--to {to}"
        );
        assert!(!out.exists(), "--to {to}: an output was left");
    }
}

/// A real recording: every thread's events nest (each close is of the frame on top, times never
/// go back), and the time each frame is on top is its function's self time in `tree --flat`.
#[test]
fn speedscope_of_a_real_recording_nests_and_keeps_self_times() {
    let o = jscalls(&["export", "fixtures/chrome-ui.json.gz", "--to", "speedscope"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let frames = doc["shared"]["frames"].as_array().unwrap();
    let flat: serde_json::Value =
        serde_json::from_str(&stdout(&jscalls(&["tree", "fixtures/chrome-ui.json.gz", "--flat", "--format", "json"])))
            .unwrap();
    let profiles = doc["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), flat["threads"].as_array().unwrap().len());
    for (prof, thread) in profiles.iter().zip(flat["threads"].as_array().unwrap()) {
        let mut open: Vec<u64> = Vec::new();
        let mut at = f64::NEG_INFINITY;
        let mut on_top = vec![0.0; frames.len()];
        for e in prof["events"].as_array().unwrap() {
            let (f, t) = (e["frame"].as_u64().unwrap(), e["at"].as_f64().unwrap());
            assert!(t >= at, "time goes back: {e}");
            if let Some(&top) = open.last() {
                on_top[top as usize] += t - at;
            }
            at = t;
            match e["type"].as_str().unwrap() {
                "O" => open.push(f),
                _ => assert_eq!(open.pop(), Some(f), "{e} does not close the top frame"),
            }
        }
        assert!(open.is_empty());
        // Functions by label, as both documents name them.
        for func in thread["functions"].as_array().unwrap().iter().take(20) {
            let f = &func["func"];
            let label = jscalls::tree::Func {
                name: f["name"].as_str().unwrap().to_owned(),
                url: f["url"].as_str().unwrap().to_owned(),
                script: String::new(),
                line: f["line"].as_i64(),
                column: f["column"].as_i64(),
            }
            .label();
            let i = frames
                .iter()
                .position(|fr| {
                    let n = |k: &str| fr.get(k).and_then(|x| x.as_i64()).unwrap_or(0);
                    fr["name"] == label.as_str()
                        // A trace event inside a call has no line or column.
                        && (n("line"), n("col"))
                            == (f["line"].as_i64().unwrap_or(-1) + 1, f["column"].as_i64().unwrap_or(-1) + 1)
                })
                .unwrap_or_else(|| panic!("{f} not among the frames"));
            let want = func["self"].as_f64().unwrap();
            assert!((on_top[i] - want).abs() <= 1.0 + want * 1e-3, "{f}: on top {} µs, self {want} µs", on_top[i]);
        }
    }
}

/// The exports in the real viewers (`../shared/viewers`, headless Chromium): speedscope and the
/// Firefox Profiler show them with the heaviest functions listed, and speedscope rejects a
/// broken copy. Skipped, and said so, without a browser or the viewers.
#[test]
fn the_real_viewers_show_the_exports() {
    let Some(viewers) = crate::support::viewers("the_real_viewers_show_the_exports") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ui.speedscope.json");
    stdout(&jscalls(&["export", "fixtures/chrome-ui.json.gz", "--js-only", "-o", out.to_str().unwrap()]));
    let expect = ["--expect", "relayout", "--expect", "spin"];
    let (shown, said) = viewer_check(&viewers, &[&["speedscope", out.to_str().unwrap()][..], &expect].concat());
    assert!(shown, "{said}");
    assert!(said.contains("\"outcome\":\"shown\""), "{said}");
    // The Firefox Profiler (the built app in ../shared/viewers) shows the Firefox export.
    let ff = dir.path().join("ui.json.gz");
    stdout(&jscalls(&["export", "fixtures/chrome-ui.json.gz", "--js-only", "-o", ff.to_str().unwrap()]));
    let (shown, said) = viewer_check(&viewers, &[&["firefox", ff.to_str().unwrap()][..], &expect].concat());
    assert!(shown && said.contains("\"outcome\":\"shown\""), "{said}");
    // The same check fails on a broken file: a frame index past the frames.
    let text = std::fs::read_to_string(&out).unwrap();
    let broken = dir.path().join("broken.speedscope.json");
    std::fs::write(&broken, text.replacen("\"frame\":0,", "\"frame\":99999,", 1)).unwrap();
    let (shown, said) = viewer_check(&viewers, &["speedscope", broken.to_str().unwrap()]);
    assert!(!shown, "{said}");
}

/// `--by-line` puts each sample's function at the line it recorded, and `--source` puts the
/// script's text in the profile: the Firefox Profiler's source view, opened on `relayout` as a
/// user opens it (double-click in the call tree), shows the code with each line's time, the
/// times of the lines only `relayout` has being the flat tree's by line. Skipped, and said so,
/// without a browser or the viewers.
#[test]
fn the_firefox_profilers_source_view_shows_the_time_of_each_line() {
    let Some(viewers) = crate::support::viewers("the_firefox_profilers_source_view_shows_the_time_of_each_line") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ui.json");
    let pick = ["--thread", "CrRendererMain", "--weight", "sample-time", "--by-line"];
    let mut args = vec!["export", "fixtures/chrome-ui.json.gz", "--to", "firefox", "--source", "fixtures/record/pages"];
    args.extend(pick);
    args.extend(["-o", out.to_str().unwrap()]);
    stdout(&jscalls(&args));
    let run = Command::new("node")
        .arg("tests/browser/firefox-source-view.mjs")
        .args([out.as_os_str(), "relayout".as_ref(), "".as_ref(), viewers.as_os_str()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{said}{}", String::from_utf8_lossy(&run.stderr));
    let v: serde_json::Value = serde_json::from_str(said.trim()).unwrap();
    let line = |n: u64| {
        v["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l[0] == n)
            .unwrap_or_else(|| panic!("no time at line {n}: {said}"))
    };
    assert!(v["source"].as_str().unwrap().ends_with("/ui.js"), "{said}");
    assert!(line(11)[3].as_str().unwrap().contains("grid.offsetHeight"), "{said}");
    let mut flat = vec!["tree", "fixtures/chrome-ui.json.gz", "--flat", "--format", "json"];
    flat.extend(pick);
    let flat: serde_json::Value = serde_json::from_str(&stdout(&jscalls(&flat))).unwrap();
    for n in [10, 11] {
        let want: f64 = flat["threads"][0]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["func"]["name"] == format!("line {n}").as_str()
                    && f["func"]["url"].as_str().unwrap().ends_with("/ui.js")
            })
            .map(|f| f["self"].as_f64().unwrap() / 1000.0)
            .sum();
        let got = line(n);
        assert!(want > 1.0, "line {n}: {want} ms");
        for k in [1, 2] {
            assert!((got[k].as_f64().unwrap() - want).abs() < 1e-3, "line {n}: shown {got}, flat tree {want} ms");
        }
    }
}

/// By line, a native function's samples get a frame `line N` of no script. In collapsed
/// stacks that name must not end a line as if its number were a count: inferno read such
/// lines as differential ones (a frame `line`, drawn grey with a `; +0.06%` change). Every
/// line is a path and one count, and the flame graph and chart have no differential frame.
#[test]
fn line_frames_of_no_script_are_not_read_as_counts() {
    let p = "fixtures/chrome-ui.json.gz";
    let by_line = ["--weight", "sample-time", "--by-line", "-o", "-"];
    let collapsed = stdout(&jscalls(&[&["export", p, "--to", "collapsed"][..], &by_line].concat()));
    let nameless = collapsed.lines().filter(|l| l.contains(";line\u{A0}")).count();
    assert!(nameless >= 3, "{collapsed}");
    for l in collapsed.lines() {
        let (path, count) = l.rsplit_once(' ').unwrap();
        assert!(count.parse::<u64>().is_ok(), "{l}");
        let last = path.rsplit(';').next().unwrap();
        assert!(last.rsplit_once(' ').is_none_or(|(_, t)| t.parse::<f64>().is_err()), "{l}");
    }
    for by_time in [false, true] {
        let mut args = vec!["export", p, "--to", "svg"];
        args.extend(by_line);
        if by_time {
            args.push("--by-time");
        }
        let svg = stdout(&jscalls(&args));
        assert!(svg.contains("<title>line\u{A0}10 ("), "{by_time}");
        assert!(!svg.contains("<title>line ("), "{by_time}: a frame named by half its name");
        assert!(!svg.contains("%; "), "{by_time}: a differential frame");
    }
}

/// A trace that carries its scripts' text (Chrome's `v8-source-rundown-sources`) gives the
/// Firefox export the code of its scripts, for the source view: the bundle as it was served.
#[test]
fn the_firefox_export_carries_the_scripts_text_the_trace_has() {
    let doc: serde_json::Value = serde_json::from_str(&stdout(&jscalls(&[
        "export",
        "fixtures/sourcemaps/chromium-page/trace.json.gz",
        "--to",
        "firefox",
        "--no-source-maps",
    ])))
    .unwrap();
    let sources = &doc["shared"]["sources"];
    let strings = doc["shared"]["stringArray"].as_array().unwrap();
    let app = (0..sources["length"].as_u64().unwrap() as usize)
        .find(|&k| strings[sources["filename"][k].as_u64().unwrap() as usize].as_str().unwrap().ends_with("/app.js"))
        .expect("app.js among the sources");
    let mut want = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open("fixtures/sourcemaps/chromium-page/app.js.gz").unwrap()),
        &mut want,
    )
    .unwrap();
    assert!(want.len() > 10_000);
    assert_eq!(sources["content"][app].as_str().unwrap(), want);
    // --no-sources leaves them out (the Profiler fetches by URL).
    let bare: serde_json::Value = serde_json::from_str(&stdout(&jscalls(&[
        "export",
        "fixtures/sourcemaps/chromium-page/trace.json.gz",
        "--to",
        "firefox",
        "--no-source-maps",
        "--no-sources",
    ])))
    .unwrap();
    let contents = bare["shared"]["sources"]["content"].as_array().unwrap();
    assert!(!contents.is_empty() && contents.iter().all(serde_json::Value::is_null), "{contents:?}");
}

/// Collapsed stacks give each function (by the last name of its lines) the self time
/// `tree --flat` gives it, to the rounding of each line to whole µs.
#[test]
fn collapsed_self_times_are_the_trees() {
    let text =
        stdout(&jscalls(&["export", "fixtures/chrome-ui.json.gz", "--to", "collapsed", "--thread", "CrRendererMain"]));
    let mut by_leaf: std::collections::HashMap<String, (f64, usize)> = Default::default();
    for line in text.lines() {
        let (stack, w) = line.rsplit_once(' ').unwrap();
        let leaf = stack.rsplit(';').next().unwrap().to_owned();
        let e = by_leaf.entry(leaf).or_default();
        e.0 += w.parse::<f64>().unwrap();
        e.1 += 1;
    }
    let want = flat_self_by_label();
    let mut compared = 0;
    for (label, self_us) in want {
        let (got, lines) = by_leaf.get(&label).copied().unwrap_or_default();
        assert!((got - self_us).abs() <= 0.5 * lines as f64 + 1.0, "{label}: collapsed {got}, tree {self_us}");
        compared += (self_us >= 1.0) as usize;
    }
    assert!(compared > 50, "{compared}");
}

/// `go tool pprof -top` on the export lists the functions `tree --flat` lists, with the same
/// self times (within pprof's rounding to 3-4 digits).
#[test]
fn pprof_top_lists_the_flat_trees_functions() {
    if crate::support::go("pprof_top_lists_the_flat_trees_functions").is_none() {
        return;
    }
    let dir = crate::support::tmpdir("export", "pprof");
    let pb = dir.join("ui.pb.gz");
    let o = jscalls(&["export", "fixtures/chrome-ui.json.gz", "-o", pb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, rows) = crate::support::pprof_top(&pb, &dir, &["-nodecount=12"]);
    assert_eq!(rows.len(), 12, "{text}");
    let flat: std::collections::HashMap<String, f64> =
        flat_self_by_label().into_iter().map(|(k, us)| (k, us / 1000.0)).collect();
    for (name, ms) in &rows {
        let want = flat.get(name).unwrap_or_else(|| panic!("{name} is not in tree --flat"));
        assert!((ms - want).abs() <= 0.01 + want * 1e-3, "{name}: pprof {ms} ms, tree --flat {want} ms");
    }
    // The same order: pprof's top 12 are the flat list's 12 largest.
    let mut largest: Vec<f64> = flat.values().copied().collect();
    largest.sort_by(|a, b| b.total_cmp(a));
    assert!((rows[11].1 - largest[11]).abs() <= 0.01, "{} vs {}", rows[11].1, largest[11]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A flame graph whose stacks, written in full as inferno needs them all at once, would not fit
/// in the memory available is refused before they are made, with what to do instead;
/// `JSCALLS_MEMORY` stands for the system's figure. At exactly the stacks' size it is drawn.
#[test]
fn a_flame_graph_larger_than_memory_is_refused_before_it_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = [node(1, "(root)", &[2]), node(2, "a@x.js", &[3]), node(3, "b@x.js", &[4]), node(4, "c@x.js", &[])];
    let p = dir.path().join("chain.cpuprofile");
    std::fs::write(&p, profile_of_spans(&nodes, &[(2, 100.0), (3, 100.0), (4, 100.0), (2, 100.0)])).unwrap();
    let p = p.to_str().unwrap();
    let collapsed = String::from_utf8(jscalls(&["export", p, "--to", "collapsed", "-o", "-"]).stdout).unwrap();
    // The lines the flame graph is drawn from (none folded here), without their newlines.
    let need = collapsed.len() - collapsed.lines().count();
    assert!(collapsed.lines().count() >= 3 && need < 1000, "{collapsed}");
    let svg = dir.path().join("out.svg");
    let run = |memory: usize| {
        crate::support::jscalls_command()
            .args(["export", p, "-o", svg.to_str().unwrap()])
            .env("JSCALLS_MEMORY", memory.to_string())
            .output()
            .unwrap()
    };
    let out = run(need - 1);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "jscalls: error: {p}: the flame graph would be drawn from {need} bytes of stacks, each written in full, \
             which inferno holds all at once: more than the {} bytes of memory available (a deep recursion?); shorten \
             the stacks (--transform collapse-recursion:FUNCTION), or export --to speedscope or firefox, which keep \
             each frame once\n",
            need - 1
        )
    );
    assert!(!svg.exists());
    let out = run(need);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    // By time, a line per run of spans: inferno holds them whole for the flame chart; the
    // stacks are written as they are made, whatever the memory.
    let by_time =
        String::from_utf8(jscalls(&["export", p, "--to", "collapsed", "--by-time", "-o", "-"]).stdout).unwrap();
    let need = by_time.len() - by_time.lines().count();
    assert!(by_time.lines().count() >= 3 && need < 1000, "{by_time}");
    let run = |to: &str, memory: usize| {
        crate::support::jscalls_command()
            .args(["export", p, "--to", to, "--by-time", "-o", "-"])
            .env("JSCALLS_MEMORY", memory.to_string())
            .output()
            .unwrap()
    };
    let out = run("svg", need - 1);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "jscalls: error: {p}: the stacks by time would be {need} bytes of lines, each stack written in full, \
             which inferno holds all at once: more than the {} bytes of memory available (a deep recursion?); \
             shorten the stacks (--transform collapse-recursion:FUNCTION), or export --to speedscope or firefox, \
             which keep each frame once\n",
            need - 1
        )
    );
    assert!(out.stdout.is_empty());
    let out = run("svg", need);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run("collapsed", 1);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), by_time);
}
