//! What a trace says of its own scripts and maps: the `v8-source-rundown` events (each script's
//! URL, its `sourceMappingURL`, where it starts in its document, and, with the `-sources`
//! category, its text) and the maps DevTools saves in `metadata.sourceMaps`.

use crate::input::leaf::Leaf;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The category of the events that describe each script.
const RUNDOWN: &str = "disabled-by-default-devtools.v8-source-rundown";
/// The category of the events that carry each script's text.
const RUNDOWN_SOURCES: &str = "disabled-by-default-devtools.v8-source-rundown-sources";

/// The scripts and maps a trace carries.
#[derive(Debug, Default, Clone)]
pub struct Embedded {
    pub(crate) scripts: Vec<TraceScript>,
    pub(crate) maps: Vec<MetaMap>,
}

impl Embedded {
    /// The scripts whose whole text the trace carries (its `v8-source-rundown-sources`
    /// category), as (the URL DevTools knows the script by, its text); an inline `<script>`
    /// is part of its document, not the document, and is left out.
    pub fn script_texts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.scripts.iter().filter_map(|s| {
            let whole = s.has_source_url || (s.start_line == 0 && s.start_column == 0);
            let url = s.compiled_url();
            s.text.as_deref().filter(|_| whole && !url.is_empty()).map(|t| (url, t))
        })
    }

    /// Whether the trace carries maps of its own (`metadata.sourceMaps`, or a script whose
    /// `sourceMappingURL` is an inline `data:` URL): then they apply without being asked for.
    pub fn has_maps(&self) -> bool {
        !self.maps.is_empty()
            || self.scripts.iter().any(|s| s.map_url.as_deref().is_some_and(|u| u.starts_with("data:")))
    }

    /// The number of scripts the trace describes.
    pub fn scripts(&self) -> usize {
        self.scripts.len()
    }
}

/// A script as the trace's rundown events describe it (keyed by process, isolate and id).
#[derive(Debug, Clone, Default)]
pub(crate) struct TraceScript {
    pub(crate) pid: i64,
    pub(crate) isolate: String,
    pub(crate) script_id: String,
    /// The threads of its events (a frame's own thread is preferred among scripts of one id).
    pub(crate) tids: BTreeSet<i64>,
    pub(crate) url: String,
    pub(crate) has_source_url: bool,
    pub(crate) source_url: Option<String>,
    /// Its `sourceMappingURL` as recorded (not when Chrome elided an inline one).
    pub(crate) map_url: Option<String>,
    /// Chrome left out its inline `data:` map URL (the map is then in the metadata, by URL).
    pub(crate) map_url_elided: bool,
    pub(crate) start_line: i64,
    pub(crate) start_column: i64,
    pub(crate) is_module: bool,
    pub(crate) text: Option<Arc<str>>,
}

impl TraceScript {
    /// The URL DevTools knows the script by.
    pub(crate) fn compiled_url(&self) -> &str {
        match (&self.source_url, self.has_source_url) {
            (Some(s), true) if !s.is_empty() => s,
            _ => &self.url,
        }
    }

    /// A position relative to the script's own text (`Script.rawLocationToRelativeLocation`):
    /// an inline `<script>` without a `sourceURL` is recorded relative to its document.
    pub(crate) fn relative(&self, line: i64, column: i64) -> (i64, i64) {
        let inline = !self.compiled_url().is_empty() && (self.start_line != 0 || self.start_column != 0);
        if self.has_source_url || !inline {
            return (line, column);
        }
        let line = line - self.start_line;
        (line, if line == 0 { column - self.start_column } else { column })
    }
}

/// One entry of `metadata.sourceMaps`: a script's URL, its map's URL, the map.
#[derive(Debug, Clone)]
pub(crate) struct MetaMap {
    pub(crate) url: Option<String>,
    pub(crate) map_url: Option<String>,
    pub(crate) map: Arc<RawValue>,
}

#[derive(Deserialize)]
struct Args<'a> {
    #[serde(borrow, default)]
    data: Option<Data<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data<'a> {
    #[serde(borrow, default)]
    isolate: Leaf<'a>,
    #[serde(borrow, default)]
    script_id: Leaf<'a>,
    #[serde(borrow, default)]
    url: Leaf<'a>,
    #[serde(borrow, default)]
    has_source_url: Leaf<'a>,
    #[serde(borrow, default)]
    source_url: Leaf<'a>,
    #[serde(borrow, default)]
    source_map_url: Leaf<'a>,
    #[serde(borrow, default)]
    source_map_url_elided: Leaf<'a>,
    #[serde(borrow, default)]
    start_line: Leaf<'a>,
    #[serde(borrow, default)]
    start_column: Leaf<'a>,
    #[serde(borrow, default)]
    is_module: Leaf<'a>,
    #[serde(borrow, default)]
    source_text: Leaf<'a>,
    #[serde(borrow, default)]
    split_index: Leaf<'a>,
    #[serde(borrow, default)]
    split_count: Leaf<'a>,
}

/// `String(value)` for the scalars a key is made of.
fn js_string(v: &Leaf<'_>) -> String {
    match v {
        Leaf::Missing => "undefined".to_owned(),
        Leaf::Object => "[object Object]".to_owned(),
        Leaf::Array => String::new(),
        other => other.property_key().unwrap_or_default(),
    }
}

/// `value ?? 0` for a position.
fn position(v: &Leaf<'_>) -> i64 {
    match v {
        Leaf::Num(n) if n.is_finite() => *n as i64,
        _ => 0,
    }
}

/// Gathers the rundown events as the trace is read, in file order.
#[derive(Debug, Default)]
pub(crate) struct Rundown {
    scripts: Vec<TraceScript>,
    index: HashMap<(i64, String, String), usize>,
    /// The parts of each large script's text, by index.
    large: BTreeMap<usize, BTreeMap<u64, String>>,
    /// Events whose args could not be read (skipped).
    pub(crate) unreadable: u64,
}

impl Rundown {
    /// Takes one `ScriptCatchup` or `LargeScriptCatchup` event.
    pub(crate) fn event(&mut self, name: &str, cat: Option<&str>, pid: i64, tid: i64, args: &[u8]) {
        let sources = match cat {
            Some(RUNDOWN) if name == "ScriptCatchup" => false,
            Some(RUNDOWN_SOURCES) => true,
            _ => return,
        };
        let data = match serde_json::from_slice::<Args<'_>>(args) {
            Ok(Args { data: Some(d) }) => d,
            Ok(_) => return,
            Err(_) => {
                self.unreadable += 1;
                return;
            }
        };
        let key = (pid, js_string(&data.isolate), js_string(&data.script_id));
        let n = self.scripts.len();
        let at = *self.index.entry(key.clone()).or_insert(n);
        if at == n {
            self.scripts.push(TraceScript { pid, isolate: key.1, script_id: key.2, ..TraceScript::default() });
        }
        let s = &mut self.scripts[at];
        s.tids.insert(tid);
        let text = || data.source_text.str().filter(|t| !t.is_empty()).map(str::to_owned);
        if !sources {
            s.url = data.url.str().unwrap_or_default().to_owned();
            s.has_source_url = data.has_source_url.truthy();
            s.source_url = data.source_url.str().filter(|u| !u.is_empty()).map(str::to_owned);
            if data.source_map_url_elided.truthy() {
                s.map_url_elided = true;
            } else if let Some(u) = data.source_map_url.str().filter(|u| !u.is_empty()) {
                s.map_url = Some(u.to_owned());
            }
            s.start_line = position(&data.start_line);
            s.start_column = position(&data.start_column);
            s.is_module = data.is_module.truthy();
        } else if name == "ScriptCatchup" {
            if let Some(t) = text() {
                s.text = Some(Arc::from(t));
            }
        } else {
            let parts = self.large.entry(at).or_default();
            let (Some(i), Some(_)) = (data.split_index.num(), data.split_count.num()) else { return };
            if let Some(t) = text().filter(|_| i >= 0.0 && i.fract() == 0.0) {
                parts.insert(i as u64, t);
            }
        }
    }

    /// The scripts, with the large ones' text joined, and the metadata's maps.
    pub(crate) fn finish(mut self, metadata: Option<&[u8]>) -> Embedded {
        for (at, parts) in std::mem::take(&mut self.large) {
            let text: String = parts.into_values().collect();
            self.scripts[at].text = Some(Arc::from(text));
        }
        Embedded { scripts: self.scripts, maps: metadata.map(metadata_maps).unwrap_or_default() }
    }
}

#[derive(Deserialize)]
struct Metadata<'a> {
    #[serde(borrow, default, rename = "sourceMaps")]
    source_maps: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaMapIn<'a> {
    #[serde(borrow, default)]
    url: Leaf<'a>,
    #[serde(borrow, default)]
    source_map_url: Leaf<'a>,
    #[serde(default)]
    source_map: Option<Box<RawValue>>,
}

/// `metadata.sourceMaps`, when it is an array: each entry's URLs and its map, not yet parsed.
fn metadata_maps(raw: &[u8]) -> Vec<MetaMap> {
    let Ok(Metadata { source_maps: Some(list) }) = serde_json::from_slice::<Metadata<'_>>(raw) else {
        return Vec::new();
    };
    let Ok(entries) = serde_json::from_str::<Vec<&RawValue>>(list.get()) else { return Vec::new() };
    entries
        .into_iter()
        .filter_map(|e| serde_json::from_str::<MetaMapIn<'_>>(e.get()).ok())
        .filter_map(|m| {
            let string = |l: &Leaf<'_>| l.str().map(str::to_owned);
            Some(MetaMap { url: string(&m.url), map_url: string(&m.source_map_url), map: Arc::from(m.source_map?) })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_gather_their_description_and_text() {
        let mut r = Rundown::default();
        let d =
            br#"{"data":{"isolate":"7","scriptId":4,"url":"http://x/a.js","sourceMapUrl":"a.js.map","isModule":true}}"#;
        r.event("ScriptCatchup", Some(RUNDOWN), 1, 2, d);
        r.event(
            "ScriptCatchup",
            Some(RUNDOWN_SOURCES),
            1,
            3,
            br#"{"data":{"isolate":"7","scriptId":4,"sourceText":"f()"}}"#,
        );
        r.event(
            "LargeScriptCatchup",
            Some(RUNDOWN_SOURCES),
            1,
            2,
            br#"{"data":{"isolate":"7","scriptId":5,"splitIndex":1,"splitCount":2,"sourceText":"b"}}"#,
        );
        r.event(
            "LargeScriptCatchup",
            Some(RUNDOWN_SOURCES),
            1,
            2,
            br#"{"data":{"isolate":"7","scriptId":5,"splitIndex":0,"splitCount":2,"sourceText":"a"}}"#,
        );
        r.event("ScriptCatchup", Some("other"), 1, 2, br#"{"data":{"isolate":"7","scriptId":6}}"#);
        let e = r.finish(Some(br#"{"sourceMaps":[{"url":"http://x/b.js","sourceMap":{"version":3}},{"url":1}]}"#));
        assert_eq!(e.scripts.len(), 2);
        let a = &e.scripts[0];
        assert_eq!((a.pid, a.isolate.as_str(), a.script_id.as_str(), a.url.as_str()), (1, "7", "4", "http://x/a.js"));
        assert_eq!((a.map_url.as_deref(), a.is_module, a.text.as_deref()), (Some("a.js.map"), true, Some("f()")));
        assert_eq!(a.tids.iter().copied().collect::<Vec<_>>(), [2, 3]);
        assert_eq!(e.scripts[1].text.as_deref(), Some("ab"));
        assert_eq!(e.maps.len(), 1);
        assert_eq!(e.maps[0].map.get(), r#"{"version":3}"#);
        assert!(e.has_maps());
    }

    #[test]
    fn inline_scripts_count_from_their_own_start() {
        let s = TraceScript { url: "http://x/".into(), start_line: 10, start_column: 8, ..TraceScript::default() };
        assert_eq!(s.relative(10, 20), (0, 12));
        assert_eq!(s.relative(12, 3), (2, 3));
        let named = TraceScript { has_source_url: true, source_url: Some("s.js".into()), ..s.clone() };
        assert_eq!(named.relative(10, 20), (10, 20));
    }
}
