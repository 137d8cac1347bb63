//! Inputs that once broke jscalls (found by fuzzing), kept so they stay fixed.

use jscalls::{analyze, Config, Source};

/// Fuzzing: an event whose bytes are not UTF-8 was copied as-is into the timeline, so the
/// output was not valid JSON text. Such events are now written as Node reads them (U+FFFD).
#[test]
fn regression_timeline_keeps_invalid_utf8_out_of_the_output() {
    let path = "fixtures/bad/fuzz-timeline-invalid-utf8.json";
    let input = std::fs::read(path).unwrap();
    assert!(std::str::from_utf8(&input).is_err(), "the input must hold invalid UTF-8");
    let src = Source::file(path);
    let a = analyze(&src, &Config::default()).unwrap();
    let mut out = Vec::new();
    a.write_timeline(&mut out, &src).unwrap();
    let text = String::from_utf8(out).expect("the timeline is UTF-8");
    let v: serde_json::Value = serde_json::from_str(&text).expect("the timeline is JSON");
    assert!(text.contains('\u{FFFD}'));
    // The input's events, then per thread with calls its name and its calls.
    let named = a.threads().filter(|t| !t.is_empty()).count();
    assert_eq!(v["traceEvents"].as_array().unwrap().len(), a.n_events() as usize + named + a.n_calls());
}

/// Fuzzing: a gzip input that fails to parse early left the inflate thread running after
/// `analyze` returned (LeakSanitizer saw its thread-local state). The reader thread is now
/// stopped and joined when its input is dropped; the input is still reported precisely.
#[test]
fn regression_abandoned_gzip_reports_and_stops_its_reader() {
    let path = "fixtures/bad/fuzz-gzip-abandoned.json.gz";
    let err = analyze(&Source::file(path), &Config::default()).unwrap_err();
    assert_eq!(err.to_string(), "1:831 (event 3): expected ':' after a key, found 'v'");
}

/// A lone surrogate in a name (`"a\ud800"`, which JavaScript keeps) made a `.cpuprofile` an
/// error and was written back as the text `\\ud800` from a trace. It is now read, kept apart
/// from every other name, and written back as the same escape, in the calls and the timeline.
#[test]
fn regression_lone_surrogates_round_trip() {
    let nodes = r#"[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":""}},
        {"id":2,"parent":1,"callFrame":{"functionName":"a\ud800","scriptId":"1","url":"x\uDC00.js"}},
        {"id":3,"parent":1,"callFrame":{"functionName":"a\ud801","scriptId":"1","url":"x\uDC00.js"}},
        {"id":4,"parent":1,"callFrame":{"functionName":"\ud83d\ude00\\ud800","scriptId":"1","url":""}}]"#;
    let profile =
        format!(r#"{{"nodes":{nodes},"samples":[2,3,4,1],"timeDeltas":[0,10,10,10],"startTime":0,"endTime":40}}"#);
    let trace = format!(
        r#"[{{"name":"Profile","ph":"P","pid":1,"tid":1,"ts":0,"id":"0x1","args":{{"data":{{"startTime":0}}}}}},
        {{"name":"ProfileChunk","ph":"P","pid":1,"tid":2,"ts":0,"id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":{nodes},"samples":[2,3,4,1]}},"timeDeltas":[0,10,10,10]}}}}}},
        {{"name":"R\udc01","ph":"X","pid":1,"tid":1,"ts":1,"dur":100}}]"#
    );
    for input in [profile, trace] {
        let src = Source::Memory(input.as_bytes().into());
        let a = analyze(&src, &Config::default()).unwrap();
        assert_eq!(a.n_calls(), 3);
        let mut calls = Vec::new();
        a.write_calls(&mut calls, "x").unwrap();
        let calls = String::from_utf8(calls).unwrap();
        for want in [r#""a\ud800""#, r#""a\ud801""#, r#""x\udc00.js""#, "\"\u{1F600}\\\\ud800\""] {
            assert!(calls.contains(want), "{want} in {calls}");
        }
        let mut timeline = Vec::new();
        a.write_timeline(&mut timeline, &src).unwrap();
        let timeline = String::from_utf8(timeline).unwrap();
        assert!(timeline.contains(r#""a\ud800""#) && timeline.contains(r#""x\udc00.js""#), "{timeline}");
    }
}
