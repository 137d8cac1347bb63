//! The timeline output: every input event kept byte for byte, one X event per call, valid JSON.

use std::io::Read;
use std::path::Path;

use jscalls::{analyze, Config, CpuProfileMode, Source};
use serde_json::Value;

fn timeline(input: &str, cfg: &Config) -> (String, jscalls::Analysis) {
    let src = Source::file(input);
    let a = analyze(&src, cfg).unwrap();
    let mut out = Vec::new();
    jscalls::output::timeline::write_timeline(&mut out, &src, &a.timeline, cfg.max_event_bytes).unwrap();
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

#[test]
fn timeline_keeps_every_input_event_and_adds_one_event_per_call() {
    for input in
        ["fixtures/chrome-ui.json.gz", "fixtures/chrome-worker-hires.json.gz", "fixtures/node-trace-mixed.json.gz"]
    {
        let (text, a) = timeline(input, &Config::default());
        let out: Value = serde_json::from_str(&text).unwrap();
        let events = out["traceEvents"].as_array().unwrap();
        let inp = input_events(input);
        assert_eq!(events.len(), inp.len() + a.timeline.n_calls(), "{input}");
        assert!(inp.iter().zip(events).all(|(a, b)| a == b), "{input}: an input event changed");
        let added = &events[inp.len()..];
        assert!(added.iter().all(|e| e["cat"] == "jscalls" && e["ph"] == "X"), "{input}");
        // Each thread's calls, in order, are exactly the estimate (ts, dur, node).
        let mut k = 0;
        for th in &a.timeline.threads {
            for &i in th.canonical_order() {
                let c = &th.calls[i as usize];
                let e = &added[k];
                assert_eq!((e["pid"].as_i64(), e["tid"].as_i64()), (Some(th.pid), Some(th.tid)));
                assert_eq!((e["ts"].as_f64(), e["dur"].as_f64()), (Some(c.ts), Some(c.dur)));
                assert_eq!(e["args"]["nodeId"].as_i64(), Some(th.model.nodes[c.node as usize].id));
                k += 1;
            }
        }
        if Path::new(input).file_name().unwrap().to_str().unwrap().starts_with("chrome") {
            assert!(out.get("metadata").is_some(), "{input}: metadata dropped");
        }
    }
}

fn snapshot(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

#[test]
fn timeline_snapshots() {
    let cfg = Config::default();
    snapshot("timeline_be_pairing", &timeline("fixtures/rules/be-pairing.json", &cfg).0);
    snapshot("timeline_trace_ids_new", &timeline("fixtures/rules/trace-ids-new.json", &cfg).0);
    snapshot("timeline_saved_cpuprofile", &timeline("fixtures/rules/saved-cpuprofile.json", &cfg).0);
    let mut panel = Config::default();
    panel.cpuprofile_mode = CpuProfileMode::PerformancePanel;
    snapshot("timeline_parent_style_cpuprofile_panel", &timeline("fixtures/rules/parent-style.cpuprofile", &panel).0);
}
