#![no_main]
// Source maps: the bytes are a map and, after a 0xFF byte, its script's text. A small profile
// samples functions that start where the script has `function`, `=>` or `(`, and the map is
// applied as DevTools applies it: every frame must end with DevTools' answer or keep its
// recorded name, a bad map or script be a problem that names the script, never a panic or a
// hang; the calls written afterwards must be JSON.
use std::fmt::Write as _;

use jscalls::sourcemap::Loader;
use jscalls::{assemble, Config, Source};
use libfuzzer_sys::fuzz_target;

const URL: &str = "file:///app.js";

struct Given<'a> {
    map: &'a [u8],
    script: &'a str,
}

type ReadMap<'a> = Box<dyn FnOnce() -> Result<Vec<u8>, String> + 'a>;

impl Loader for Given<'_> {
    fn script(&self, url: &str) -> Option<String> {
        (url == URL).then(|| self.script.to_owned())
    }
    fn map_for(&self, url: &str) -> Option<ReadMap<'_>> {
        (url == URL).then(|| Box::new(move || Ok(self.map.to_vec())) as ReadMap<'_>)
    }
    fn map_at(&self, _: &str) -> Option<ReadMap<'_>> {
        None
    }
    fn keeps_sources(&self) -> bool {
        true
    }
}

/// Up to 24 (line, column) places where a function may start in `script`, 0-based.
fn starts(script: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (line, text) in script.split('\n').enumerate() {
        for (col, _) in text.match_indices(['(', '=', 'f']) {
            if text[col..].starts_with("function") || text[col..].starts_with("=>") || text[col..].starts_with('(') {
                out.push((line, col));
            }
            if out.len() == 24 {
                return out;
            }
        }
    }
    out
}

/// A `.cpuprofile` with one node a place, each sampled twice, under a root.
fn profile(places: &[(usize, usize)]) -> String {
    let mut nodes = String::from(r#"{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":["#);
    for k in 0..places.len() {
        let _ = write!(nodes, "{}{}", if k > 0 { "," } else { "" }, k + 2);
    }
    nodes.push_str("]}");
    let mut samples = String::new();
    for (k, (line, col)) in places.iter().enumerate() {
        let _ = write!(
            nodes,
            r#",{{"id":{},"callFrame":{{"functionName":"f{k}","scriptId":"7","url":"{URL}","lineNumber":{line},"columnNumber":{col}}}}}"#,
            k + 2
        );
        let _ = write!(samples, "{}{},{}", if k > 0 { "," } else { "" }, k + 2, k + 2);
    }
    let deltas = vec!["100"; places.len() * 2].join(",");
    format!(r#"{{"nodes":[{nodes}],"startTime":0,"endTime":{},"samples":[{samples}],"timeDeltas":[{deltas}]}}"#, places.len() * 200 + 100)
}

fuzz_target!(|data: &[u8]| {
    let (map, script) = match data.iter().position(|&b| b == 0xff) {
        Some(k) => (&data[..k], &data[k + 1..]),
        None => (data, &b""[..]),
    };
    let Ok(script) = std::str::from_utf8(script) else { return };
    let places = starts(script);
    if places.is_empty() {
        return;
    }
    let mut cfg = Config::default();
    cfg.threads = 1;
    let src = Source::Memory(profile(&places).into_bytes().into());
    let (_, mut assembled) = assemble(&src, &cfg).expect("the profile is well formed");
    let loader = Given { map, script };
    let r = assembled.resolve_source_maps(&loader);
    assert_eq!(r.frames.len(), places.len() + 1, "every frame has an answer");
    for p in &r.problems {
        assert_eq!(p.script, URL, "a problem names its script");
    }
    let applied = assembled.apply_source_maps(&loader);
    assert_eq!(applied.frames, r.frames, "applying gives the answers resolving gives");
    let mut out = Vec::new();
    assembled.write_calls(&mut out, "fuzz").unwrap();
    serde_json::from_slice::<serde_json::Value>(&out).expect("the calls are JSON");
});
