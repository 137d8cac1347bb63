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
    assert_eq!(v["traceEvents"].as_array().unwrap().len(), a.n_events as usize + named + a.n_calls());
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
