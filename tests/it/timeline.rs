//! The timeline output: every input event kept byte for byte, one X event per call, valid JSON.

use std::io::Read;
use std::path::Path;

use jscalls::{analyze, Config, CpuProfileMode, EngineVersion, Source};
use serde_json::Value;

fn timeline(input: &str, cfg: &Config) -> (String, jscalls::Analysis) {
    let src = Source::file(input);
    let a = analyze(&src, cfg).unwrap();
    let mut out = Vec::new();
    a.write_timeline(&mut out, &src).unwrap();
    (String::from_utf8(out).unwrap(), a)
}

fn input_events(path: &str) -> Vec<Value> {
    let mut bytes = Vec::new();
    let f = std::fs::File::open(path).unwrap();
    if path.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(f).read_to_end(&mut bytes).unwrap();
    } else {
        std::io::BufReader::new(f).read_to_end(&mut bytes).unwrap();
    }
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    match v {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("traceEvents") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => panic!("not a trace"),
    }
}

/// The largest tid of any input event.
fn max_tid(events: &[Value]) -> i64 {
    events.iter().filter_map(|e| e["tid"].as_i64()).max().unwrap_or(0)
}

#[test]
fn timeline_keeps_every_input_event_and_adds_each_threads_calls_on_a_thread_of_their_own() {
    for input in
        ["fixtures/chrome-ui.json.gz", "fixtures/chrome-worker-hires.json.gz", "fixtures/node-trace-mixed.json.gz"]
    {
        let (text, a) = timeline(input, &Config::default());
        let out: Value = serde_json::from_str(&text).unwrap();
        let events = out["traceEvents"].as_array().unwrap();
        let inp = input_events(input);
        let with_calls = a.threads().filter(|t| !t.is_empty()).count();
        // A browser's recording gets each thread's calls as samples too, for the Firefox
        // Profiler; a generic trace (Node's) does not, as DevTools would then read it otherwise.
        let browser = input.contains("chrome");
        let sampled = if browser { with_calls } else { 0 };
        assert_eq!(events.len(), inp.len() + with_calls + a.n_calls() + sampled, "{input}");
        assert!(inp.iter().zip(events).all(|(a, b)| a == b), "{input}: an input event changed");
        let mut added = events[inp.len()..].iter();
        let top = max_tid(&inp);
        // Each thread's calls, in order, are exactly the estimate (ts, dur, node), after the
        // name of their thread, whose tid no input event uses.
        for (k, th) in a.threads().enumerate() {
            if th.is_empty() {
                continue;
            }
            let tid = top + 1 + k as i64;
            let meta = added.next().unwrap();
            assert_eq!(
                (meta["ph"].as_str(), meta["pid"].as_i64(), meta["tid"].as_i64()),
                (Some("M"), Some(th.pid()), Some(tid))
            );
            let name = meta["args"]["name"].as_str().unwrap();
            assert!(name.ends_with(": JS calls (jscalls)"), "{input}: {name}");
            for c in th.calls_sorted() {
                let e = added.next().unwrap();
                assert_eq!((e["cat"].as_str(), e["ph"].as_str()), (Some("jscalls"), Some("X")));
                assert_eq!((e["pid"].as_i64(), e["tid"].as_i64()), (Some(th.pid()), Some(tid)));
                assert_eq!((e["ts"].as_f64(), e["dur"].as_f64()), (Some(c.ts()), Some(c.dur())));
                assert_eq!(e["args"]["nodeId"].as_i64(), Some(c.node_id()));
            }
            if browser {
                let e = added.next().unwrap();
                assert_eq!(
                    (e["name"].as_str(), e["ph"].as_str(), e["tid"].as_i64()),
                    (Some("CpuProfile"), Some("I"), Some(tid))
                );
                check_resampled(&e["args"]["data"]["cpuProfile"], &th, input);
            }
        }
        if Path::new(input).file_name().unwrap().to_str().unwrap().starts_with("chrome") {
            assert!(out.get("metadata").is_some(), "{input}: metadata dropped");
        }
    }
}

/// The samples added for the Firefox Profiler: nodes parents first from `(root)`, samples at
/// least 501 µs apart (the viewer keeps none closer than 500), and each sample's leaf a function
/// of a call open then (or a trace event, or `(idle)`); every call of 2 ms or more is sampled.
fn check_resampled(p: &Value, th: &jscalls::Thread<'_>, input: &str) {
    let nodes = p["nodes"].as_array().unwrap();
    let mut name_of = std::collections::HashMap::new();
    for (k, n) in nodes.iter().enumerate() {
        let id = n["id"].as_i64().unwrap();
        assert_eq!(id, k as i64 + 1, "{input}: node ids are 1, 2, …");
        if k > 0 {
            assert!(name_of.contains_key(&n["parent"].as_i64().unwrap()), "{input}: node {id} before its parent");
        }
        name_of.insert(id, n["callFrame"]["functionName"].as_str().unwrap().to_owned());
    }
    let (samples, deltas) = (p["samples"].as_array().unwrap(), p["timeDeltas"].as_array().unwrap());
    assert_eq!(samples.len(), deltas.len());
    assert!(deltas.iter().skip(1).all(|d| d.as_i64().unwrap() >= 501), "{input}: samples closer than 501 µs");
    let calls: Vec<_> = th.calls_sorted().collect();
    let mut t = p["startTime"].as_f64().unwrap();
    let mut seen = vec![false; calls.len()];
    let functions: std::collections::HashSet<String> =
        calls.iter().map(|c| c.frame().function_name().into_owned()).collect();
    for (s, d) in samples.iter().zip(deltas) {
        t += d.as_f64().unwrap();
        let leaf = &name_of[&s.as_i64().unwrap()];
        let open: Vec<usize> = (0..calls.len())
            .filter(|&k| calls[k].ts() - 1.0 <= t && t < calls[k].ts() + calls[k].dur() + 1.0)
            .collect();
        for &k in &open {
            seen[k] = true;
        }
        if leaf == "(idle)" {
            let inside = calls.iter().any(|c| c.ts() + 1.0 < t && t < c.ts() + c.dur() - 1.0);
            assert!(!inside, "{input}: idle sampled at {t}, inside a call");
            continue;
        }
        assert!(!open.is_empty(), "{input}: {leaf} sampled at {t}, outside every call");
        // A call's function is one open then; any other leaf is a trace event inside a call.
        if functions.contains(leaf.as_str()) {
            let is_open = open.iter().any(|&k| calls[k].frame().function_name() == leaf.as_str());
            assert!(is_open, "{input}: {leaf} sampled at {t}, when no call of it is open");
        }
    }
    for (k, c) in calls.iter().enumerate() {
        assert!(seen[k] || c.dur() < 2000.0, "{input}: a call of {} µs at {} is not sampled", c.dur(), c.ts());
    }
}

/// DevTools, given jscalls' timeline, estimates the same calls as from the input: the added
/// events sit on threads of their own and do not enter its estimate. jscalls equals DevTools on
/// any input (the conformance tests), so jscalls on the timeline stands in for DevTools here;
/// `bench/timeline-devtools.sh` checks the same with the DevTools engine itself.
#[test]
fn devtools_reads_the_same_calls_from_the_timeline_as_from_the_input() {
    for name in ["chrome-ui", "chrome-worker-hires", "node-trace-mixed"] {
        for engine in [EngineVersion::V0_0_65, EngineVersion::Latest] {
            let input = format!("fixtures/{name}.json.gz");
            let mut cfg = Config::default();
            cfg.engine = engine;
            let (text, _) = timeline(&input, &cfg);
            let once = analyze(&Source::Memory(text.into_bytes().into()), &cfg).unwrap();
            let direct = analyze(&Source::file(&input), &cfg).unwrap();
            let calls = |a: &jscalls::Analysis| {
                let mut out = Vec::new();
                a.write_calls(&mut out, "x").unwrap();
                String::from_utf8(out).unwrap()
            };
            assert!(direct.n_calls() > 90, "{name}");
            assert!(calls(&once) == calls(&direct), "{name} {engine:?}: the timeline gives other calls");
        }
    }
}

fn snapshot(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// What jscalls adds to a timeline, for review: the input's events (checked byte for byte by
/// the test above) are left out of the snapshot, and stand as one line saying how many.
fn added_part(input: &str, text: &str) -> String {
    let n = if input.ends_with(".cpuprofile") { 0 } else { input_events(input).len() };
    let mut lines = text.lines();
    let mut out = vec![lines.next().unwrap().to_owned(), format!("… the {n} input events, as they are …")];
    out.extend(lines.skip(n).map(str::to_owned));
    out.join("\n")
}

#[test]
fn timeline_snapshots() {
    let cfg = Config::default();
    for (name, input) in [
        ("timeline_be_pairing", "fixtures/rules/be-pairing.json"),
        ("timeline_trace_ids_new", "fixtures/rules/trace-ids-new.json"),
        ("timeline_saved_cpuprofile", "fixtures/rules/saved-cpuprofile.json"),
    ] {
        snapshot(name, &added_part(input, &timeline(input, &cfg).0));
    }
    let mut panel = Config::default();
    panel.cpuprofile_mode = CpuProfileMode::PerformancePanel;
    let input = "fixtures/rules/parent-style.cpuprofile";
    snapshot("timeline_parent_style_cpuprofile_panel", &added_part(input, &timeline(input, &panel).0));
}

/// In the Firefox Profiler (the built app in the real viewers, headless Chromium), a browser
/// recording's and a `.cpuprofile`'s timeline show the calls' track without a click, with
/// samples: a call tree and a stack chart of the calls. Skipped, and said so, without a
/// browser or the viewers.
#[test]
fn the_firefox_profiler_shows_the_calls_track_of_a_timeline() {
    let Some(viewers) = crate::support::viewers("the_firefox_profiler_shows_the_calls_track_of_a_timeline") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (input, track) in [
        ("fixtures/chrome-ui.json.gz", "CrRendererMain: JS calls (jscalls)"),
        ("fixtures/node-mixed.cpuprofile.gz", "node-mixed.cpuprofile.gz"),
    ] {
        let (text, _) = timeline(input, &Config::default());
        let file = dir.path().join("t.timeline.json");
        std::fs::write(&file, text).unwrap();
        let run = std::process::Command::new("node")
            .arg("tests/browser/firefox-timeline.mjs")
            .args([file.as_os_str(), "".as_ref(), "stack-chart".as_ref(), viewers.as_os_str()])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{input}: {said}{}", String::from_utf8_lossy(&run.stderr));
        let v: Value = serde_json::from_str(said.trim()).unwrap();
        assert_eq!(v["calls"]["name"], track, "{input}: {said}");
        assert!(v["calls"]["samples"].as_u64().unwrap() > 100, "{input}: {said}");
    }
}

/// The timeline written while its input is read (the scan's runs of events) is the one
/// written by reading the input again, on every fixture and on a trace made to break the runs:
/// events in pieces read side by side, separators other than `,\n`, an element that is not an
/// object, bytes that are not UTF-8 in a later piece, and `metadata` after the events.
#[test]
fn timeline_copied_while_reading_or_after_equals_timeline_read_again() {
    let mut inputs: Vec<std::path::PathBuf> = std::fs::read_dir("fixtures")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.to_string_lossy();
            [".json", ".json.gz", ".cpuprofile", ".cpuprofile.gz"].iter().any(|ext| name.ends_with(ext))
        })
        .collect();
    inputs.sort();
    assert!(inputs.len() > 20, "{} fixtures", inputs.len());

    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("runs.json");
    let mut text = String::from("{\"traceEvents\":[\n");
    for k in 0..6000 {
        let sep = match k % 7 {
            0 => ",\n",
            1 => ", ",
            2 => ",",
            3 => ",\r\n  ",
            _ => ",\n",
        };
        if k > 0 {
            text.push_str(sep);
        }
        if k == 3000 {
            text.push_str("17,\n");
        }
        let name = if k == 4500 { "bad\u{1}" } else { "ev" };
        text.push_str(&format!(
            "{{\"name\":\"{name}\",\"ph\":\"X\",\"ts\":{},\"dur\":5,\"pid\":1,\"tid\":{},\"args\":{{\"data\":{{\"pad\":\"{}\"}}}}}}",
            1000 + k * 10,
            k % 3,
            "x".repeat(40)
        ));
    }
    text.push_str("\n],\"metadata\":{\"source\":\"made\"}}\n");
    let mut bytes = text.into_bytes();
    let at = bytes.windows(4).position(|w| w == b"bad\x01").unwrap();
    bytes[at + 3] = 0xff;
    std::fs::write(&made, &bytes).unwrap();
    assert!(bytes.len() > 1 << 19, "large enough to be read in pieces: {} bytes", bytes.len());
    inputs.push(made);

    for path in &inputs {
        let src = Source::file(path);
        // One thread or more, the same bytes: on two, a large thread's samples are made beside
        // its calls.
        let mut one_thread = None;
        for threads in [1, 2] {
            let mut cfg = Config::default();
            cfg.threads = threads;
            let Ok(a) = analyze(&src, &cfg) else { continue };
            let mut want = Vec::new();
            a.write_timeline(&mut want, &src).unwrap();
            let mut got = Vec::new();
            let (_, assembled, start) = jscalls::assemble_timeline(&src, &cfg, &mut got).unwrap();
            assembled.finish_timeline(&mut got, start).unwrap();
            assert!(got == want, "{}, {threads} threads: the timelines differ", path.display());
            // Noted as it is read and written after: the same bytes.
            let mut noted = Vec::new();
            let (_, assembled, notes) = jscalls::TimelineStart::note(&src, &cfg).unwrap();
            assembled.finish_noted_timeline(&mut noted, notes, &src).unwrap();
            assert!(noted == want, "{}, {threads} threads: the noted timeline differs", path.display());
            match &one_thread {
                None => one_thread = Some(got),
                Some(one) => assert!(*one == got, "{}: the timelines of 1 and 2 threads differ", path.display()),
            }
        }
    }
    // The made trace's repaired event and metadata are there.
    let src = Source::file(dir.path().join("runs.json"));
    let mut got = Vec::new();
    let (_, assembled, start) = jscalls::assemble_timeline(&src, &Config::default(), &mut got).unwrap();
    assembled.finish_timeline(&mut got, start).unwrap();
    let v: Value = serde_json::from_slice(&got).unwrap();
    assert_eq!(v["traceEvents"].as_array().unwrap().len(), 6000);
    assert_eq!(v["traceEvents"][4500]["name"], "bad\u{fffd}");
    assert_eq!(v["metadata"]["source"], "made");
}

#[test]
fn the_calls_threads_take_the_same_tids_however_the_input_is_spaced() {
    // `"tid": 5`, as `json.dump` and pretty-printers write it, once made those threads'
    // tids 2^62 + k: one number in a double, as DevTools reads them, for every sampled thread.
    let compact = "fixtures/chrome-worker-hires.json.gz";
    let events = input_events(compact);
    let dir = tempfile::tempdir().unwrap();
    let pretty = dir.path().join("pretty.json");
    std::fs::write(&pretty, serde_json::to_string_pretty(&Value::Array(events.clone())).unwrap()).unwrap();
    let call_tids = |path: &str| -> Vec<i64> {
        let (text, _) = timeline(path, &Config::default());
        let out: Value = serde_json::from_str(&text).unwrap();
        let mut tids: Vec<i64> = out["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "jscalls")
            .map(|e| e["tid"].as_i64().unwrap())
            .collect();
        tids.sort();
        tids.dedup();
        tids
    };
    let top = max_tid(&events);
    assert_eq!(call_tids(compact), [top + 1, top + 2]);
    assert_eq!(call_tids(pretty.to_str().unwrap()), [top + 1, top + 2]);
}
