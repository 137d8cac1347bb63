//! Inputs that once broke jscalls (found by fuzzing), kept so they stay fixed.

use jscalls::diff::{calls, funcs, ThreadEstimate};
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

/// Fuzzing: a time delta of 1e300 µs made a call that long, and the timeline's calls as
/// samples (every 501 µs inside a call) had no end: `timeline` wrote until the disk was full.
/// Spans that would need more than 2^20 samples are now all sampled further apart. The delta
/// itself is a `time-leap` warning.
#[test]
fn regression_an_endless_call_is_sampled_in_bounded_samples() {
    let path = "fixtures/bad/fuzz-timeline-endless-span.cpuprofile";
    let src = Source::file(path);
    let a = analyze(&src, &Config::default()).unwrap();
    let kinds: Vec<_> = a.diagnostics().warnings().iter().map(|w| w.kind).collect();
    assert_eq!(kinds, [jscalls::WarningKind::TimeLeap]);
    let main = a.threads().flat_map(|t| t.calls().collect::<Vec<_>>()).find(|c| c.frame().function_name() == "main");
    assert_eq!(main.map(|c| c.dur()), Some(1e300), "the call keeps the input's length");
    let mut out = Vec::new();
    a.write_timeline(&mut out, &src).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).expect("the timeline is JSON");
    let events = v["traceEvents"].as_array().unwrap();
    let profile = &events.iter().find(|e| e["name"] == "CpuProfile").unwrap()["args"]["data"]["cpuProfile"];
    let (samples, deltas) = (profile["samples"].as_array().unwrap(), profile["timeDeltas"].as_array().unwrap());
    // The call's start, 2^20 samples inside it (the first at its start), then idle.
    assert_eq!(samples.len(), (1 << 20) + 1);
    assert_eq!(deltas.len(), samples.len());
    assert_eq!(deltas[0], 100);
    assert_eq!(deltas[1].as_u64(), Some((i64::MAX as u64 - 100).div_ceil(1 << 20)));
}

/// Fuzzing (`diff`): a column of -3.3e44 is written in the calls output as the profile has it
/// (`-3.3333333333333332e+44`), and so is a name that is a number (`0`); `diff` could not read
/// jscalls' own document back ("expected i64", "expected a string"). A document's lines and
/// columns are now read as the profile's are: whole numbers, saturated to 64 bits, others
/// (2.5) none; names and URLs as their text in JavaScript (`1e+21`, `true`). The document and
/// the estimate name the same functions, and their calls do not differ.
#[test]
fn regression_a_calls_document_with_odd_frames_reads_back() {
    let (estimate, back, doc) = written_and_read_back("fixtures/bad/fuzz-diff-odd-frames.cpuprofile");
    assert!(doc.contains("\"columnNumber\":-3.3333333333333332e+44"));
    assert_eq!(back.iter().map(ThreadEstimate::call_count).sum::<usize>(), 3);
    let both = funcs::diff(&[&estimate[..]], &[&back[..]]);
    let mut keys: Vec<_> = both.funcs.iter().map(|f| (f.name.clone(), f.url.clone(), f.line, f.column)).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            ("1e+21".to_owned(), "true".to_owned(), Some(1), Some(1)),
            ("leaf".to_owned(), "/a.js".to_owned(), Some(i64::MAX), None),
            ("main".to_owned(), "/a.js".to_owned(), Some(3), Some(i64::MIN))
        ],
        "one function each, not one per side"
    );
    assert!(calls::diff(&estimate, &back, usize::MAX).iter().all(|t| t.is_empty()));
}

/// The estimate of a profile, its calls document read back, and the document.
fn written_and_read_back(path: &str) -> (Vec<ThreadEstimate>, Vec<ThreadEstimate>, String) {
    let a = analyze(&Source::file(path), &Config::default()).unwrap();
    let estimate: Vec<ThreadEstimate> = a.threads().map(|t| ThreadEstimate::of_thread(&t)).collect();
    let mut doc = Vec::new();
    a.write_calls(&mut doc, "x").unwrap();
    let back = ThreadEstimate::read_calls_document(&doc).expect("jscalls' own calls document reads back");
    (estimate, back, String::from_utf8(doc).unwrap())
}

/// Fuzzing (`diff`): a line or column that is not a number (`"Peperoni"`, `true`) is written
/// as the profile has it, and `diff` could not read the document back ("expected a number or
/// null"). They are read as the profile's are: no line, no column.
#[test]
fn regression_a_calls_document_with_text_positions_reads_back() {
    let (estimate, back, doc) = written_and_read_back("fixtures/bad/fuzz-diff-text-positions.cpuprofile");
    assert!(doc.contains("\"lineNumber\":true,\"columnNumber\":\"Peperoni\""), "{doc}");
    assert_eq!(back.iter().map(ThreadEstimate::call_count).sum::<usize>(), 4);
    let both = funcs::diff(&[&estimate[..]], &[&back[..]]);
    let mut keys: Vec<_> = both.funcs.iter().map(|f| (f.name.clone(), f.line, f.column)).collect();
    keys.sort();
    assert_eq!(keys, [("leaf".to_owned(), None, None), ("main".to_owned(), None, None)], "one function each");
    assert!(calls::diff(&estimate, &back, usize::MAX).iter().all(|t| t.is_empty()));
}
