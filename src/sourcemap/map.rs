//! A source map as DevTools' `SDK.SourceMap` reads it: its sources resolved against the map's
//! URL, its mappings decoded (sections of an index map one after another) and sorted, and
//! `find_entry`, the lookup behind every name and place DevTools shows.

use std::borrow::Cow;

use serde_json::Value;

use crate::input::shaped::{Shape, Shaped};

use super::units::{js_string, Ascii, CodeUnits, Units};
use super::url::{complete_url, is_relative_url};

/// No source or name (an entry of one or four fields).
const NONE: u32 = u32::MAX;

/// One mapping: a generated position and, when it has them, its source, original position and
/// name (indexes into the map's sources and names). 24 bytes: a 10 MB map has millions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Entry {
    line: i32,
    column: i32,
    source: u32,
    source_line: i32,
    source_column: i32,
    name: u32,
}

/// A position decoded as a JavaScript number, held in 32 bits (saturated: positions past 2^31
/// name nothing in any script).
fn narrow(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

impl Entry {
    fn new(line: i64, column: i64, source: u32, source_line: i64, source_column: i64, name: u32) -> Entry {
        Entry {
            line: narrow(line),
            column: narrow(column),
            source,
            source_line: narrow(source_line),
            source_column: narrow(source_column),
            name,
        }
    }

    /// The generated line, 0-based.
    pub(crate) fn line(&self) -> i64 {
        i64::from(self.line)
    }

    /// The generated column, 0-based.
    pub(crate) fn column(&self) -> i64 {
        i64::from(self.column)
    }

    /// The original line, 0-based.
    pub(crate) fn source_line(&self) -> i64 {
        i64::from(self.source_line)
    }

    /// The original column, 0-based.
    pub(crate) fn source_column(&self) -> i64 {
        i64::from(self.source_column)
    }
}

/// One of the map's sources.
#[derive(Debug, Clone)]
struct Source {
    url: String,
    content: Option<String>,
    ignored: bool,
}

/// Why a map was not used: said in a warning, the frames keep their recorded names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MapError {
    /// Not JSON (serde_json's message).
    Json(String),
    /// JSON, but DevTools could not make a map of it (what it lacked).
    Shape(&'static str),
}

impl std::fmt::Display for MapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapError::Json(m) => write!(f, "not JSON: {m}"),
            MapError::Shape(m) => f.write_str(m),
        }
    }
}

/// A parsed source map.
#[derive(Debug, Clone)]
pub(crate) struct SourceMap {
    sources: Vec<Source>,
    names: Vec<Option<String>>,
    entries: Vec<Entry>,
    /// Why the mappings were dropped, when they were (DevTools then has no entry at all).
    pub mappings_error: Option<String>,
    /// The map's scope data (the scopes proposal's or Bloomberg's), when it has any that
    /// names a scope (DevTools' `hasScopeInfo`; otherwise the script's scopes stand in).
    pub scopes: Option<super::info::ScopesInfo>,
    /// Mappings naming a source or a name the map does not have (DevTools ignores those
    /// parts, as jscalls does).
    pub out_of_range: usize,
}

/// Where a part's mappings start: its first line and column, its first source, and its names'
/// place among the map's.
struct Start {
    line: i64,
    column: i64,
    source: i64,
    name_base: usize,
    n_names: usize,
}

/// `parseSourceMap`: a leading `)]}` line and a byte-order mark are dropped, then JSON. With
/// `whole`, each `sourcesContent` text is kept as it is, not as a digest (for a command that
/// shows the sources).
pub(crate) fn parse_text(text: &[u8], whole: bool) -> Result<Value, MapError> {
    let mut t = text;
    if t.starts_with(b")]}") {
        // `content.substring(content.indexOf('\n'))`: from the newline on, or all of it.
        if let Some(i) = memchr::memchr(b'\n', t) {
            t = &t[i..];
        }
    }
    if let Some(rest) = t.strip_prefix("\u{FEFF}".as_bytes()) {
        t = rest;
    }
    let shape = if whole { Lean::Whole } else { Lean::Plain };
    Shaped(shape).read(t).map_err(|e| MapError::Json(e.to_string()))
}

/// A map's JSON as a [`Value`], each string of a `sourcesContent` array replaced by a digest
/// of it: the sources' text only ever decides whether two maps embed the same source
/// (`compatibleForURL`), and copying it was most of a large map's reading.
#[derive(Clone, Copy)]
enum Lean {
    Plain,
    /// Every string as it is, `sourcesContent` too.
    Whole,
    /// The value of a `sourcesContent` key.
    Contents,
    /// An element of it.
    Content,
}

/// The digest that stands for a source's text: its length and a 64-bit SipHash.
fn digest(text: &str) -> Value {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    Value::String(format!("{}:{:016x}", text.len(), h.finish()))
}

impl Shape for Lean {
    fn member(self, key: &str) -> Option<Lean> {
        Some(match self {
            Lean::Whole => Lean::Whole,
            _ if key == "sourcesContent" => Lean::Contents,
            _ => Lean::Plain,
        })
    }
    fn element(self) -> Lean {
        match self {
            Lean::Contents => Lean::Content,
            Lean::Whole => Lean::Whole,
            _ => Lean::Plain,
        }
    }
    fn string(self, s: Cow<'_, str>) -> Value {
        match self {
            Lean::Content => digest(&s),
            _ => Value::String(s.into_owned()),
        }
    }
}

/// JavaScript's truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0 && !x.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

impl SourceMap {
    /// The map of `json`, for the script at `compiled_url`, loaded from `map_url` (the base of
    /// its relative sources; a `data:` map's base is the script's URL).
    pub(crate) fn new(compiled_url: &str, map_url: &str, json: &Value) -> Result<SourceMap, MapError> {
        let base = if map_url.starts_with("data:") { compiled_url } else { map_url };
        let mut map = SourceMap {
            sources: Vec::new(),
            names: Vec::new(),
            entries: Vec::new(),
            mappings_error: None,
            scopes: None,
            out_of_range: 0,
        };
        let sections = Self::sections(json)?;
        for (part, _, _) in &sections {
            map.add_sources(part, base)?;
        }
        let mut first_source = 0usize;
        let mut error = None;
        let mut scopes = super::info::ScopesInfo::default();
        for (part, line, column) in &sections {
            if error.is_none() {
                if let Err(e) = map.add_mappings(part, first_source, *line, *column) {
                    error = Some(e);
                }
            }
            let n_sources = part.get("sources").and_then(Value::as_array).map_or(0, Vec::len);
            if error.is_none() {
                // `parseMap`'s scope data, after the part's mappings.
                let names = part.get("names").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                if let Some(data) = part.get("scopes").filter(|v| truthy(v)) {
                    if let (Some(text), true) = (data.as_str(), part.get("names").is_some_and(truthy)) {
                        super::codec::decode_scopes(&mut scopes, text, names, (*line, *column));
                    }
                } else if let Some(lists) = part.get("x_com_bloomberg_sourcesFunctionMappings").filter(|v| truthy(v)) {
                    if let Err(e) = super::codec::decode_bloomberg(&mut scopes, lists, names, n_sources) {
                        error = Some(format!("x_com_bloomberg_sourcesFunctionMappings: {e}"));
                    }
                } else {
                    scopes.source_roots.extend(std::iter::repeat_n(None, n_sources));
                }
            }
            first_source += n_sources;
        }
        if error.is_none() && !scopes.is_empty() {
            scopes.index();
            map.scopes = Some(scopes);
        }
        if let Some(e) = error {
            // DevTools drops every mapping when one part fails to decode.
            map.entries.clear();
            map.mappings_error = Some(e);
        }
        // "As per spec, mappings are not necessarily sorted": a stable sort by position.
        if !map.entries.is_sorted_by_key(|e| (e.line, e.column)) {
            map.entries.sort_by_key(|e| (e.line, e.column));
        }
        map.entries.shrink_to_fit();
        Ok(map)
    }

    /// The map itself, or the maps of its sections with their offsets (sections given by `url`
    /// are skipped, as DevTools skips them).
    fn sections(json: &Value) -> Result<Vec<(&Value, i64, i64)>, MapError> {
        let Some(obj) = json.as_object() else { return Err(MapError::Shape("not a JSON object")) };
        let Some(sections) = obj.get("sections") else { return Ok(vec![(json, 0, 0)]) };
        let Some(list) = sections.as_array() else { return Err(MapError::Shape("\"sections\" is not an array")) };
        let mut out = Vec::new();
        for s in list {
            let Some(map) = s.get("map") else { continue };
            let offset = s.get("offset").ok_or(MapError::Shape("a section has no \"offset\""))?;
            let num = |k: &str| offset.get(k).and_then(Value::as_f64).map_or(0, |v| v as i64);
            out.push((map, num("line"), num("column")));
        }
        Ok(out)
    }

    /// `parseSources`: each source's URL (the source root prepended to a relative one, then
    /// completed against `base`), its embedded content and ignore-list hint.
    fn add_sources(&mut self, part: &Value, base: &str) -> Result<(), MapError> {
        let Some(sources) = part.get("sources").and_then(Value::as_array) else {
            return Err(MapError::Shape("a map has no \"sources\" array"));
        };
        let root = match part.get("sourceRoot") {
            None | Some(Value::Null) => String::new(),
            Some(v) => js_string(v),
        };
        let ignore = part.get("ignoreList").filter(|v| !v.is_null()).or_else(|| part.get("x_google_ignoreList"));
        let ignored: Vec<f64> =
            ignore.and_then(Value::as_array).map_or(Vec::new(), |l| l.iter().filter_map(Value::as_f64).collect());
        let contents = part.get("sourcesContent").and_then(Value::as_array);
        for (i, s) in sources.iter().enumerate() {
            let mut href = js_string(s);
            if is_relative_url(&href) {
                href = if !root.is_empty() && !root.ends_with('/') && !href.is_empty() && !href.starts_with('/') {
                    format!("{root}/{href}")
                } else {
                    format!("{root}{href}")
                };
            }
            let url = complete_url(base, &href).unwrap_or(href);
            let content = contents.and_then(|c| c.get(i)).and_then(Value::as_str).map(str::to_owned);
            self.sources.push(Source { url, content, ignored: ignored.contains(&(i as f64)) });
        }
        Ok(())
    }

    /// `parseMap`: one part's mappings, its lines from `line` and first line's columns from
    /// `column`, its sources from `first_source`.
    fn add_mappings(&mut self, part: &Value, first_source: usize, line: i64, column: i64) -> Result<(), String> {
        let Some(text) = part.get("mappings").and_then(Value::as_str) else {
            return Err("no \"mappings\" string".to_owned());
        };
        if let Some(names) = part.get("names").and_then(Value::as_array) {
            // Names are numbered per part: a part's name index 0 is its own first name.
            self.names.reserve(names.len());
        }
        let name_base = self.names.len();
        if let Some(names) = part.get("names").and_then(Value::as_array) {
            self.names.extend(names.iter().map(|n| n.as_str().map(str::to_owned)));
        }
        let n_names = self.names.len() - name_base;
        // One entry per segment: as many as separators, give or take one a line.
        let segments = memchr::memchr2_iter(b',', b';', text.as_bytes()).count() + 1;
        self.entries.reserve(segments);
        let at = Start { line, column, source: first_source as i64, name_base, n_names };
        match Ascii::new(text) {
            Some(units) => self.decode(units, at),
            None => self.decode(Units::new(text), at),
        }
    }

    /// The mappings read from `it` on from `at`.
    fn decode(&mut self, mut it: impl CodeUnits, at: Start) -> Result<(), String> {
        let Start { mut line, mut column, mut source, name_base, n_names } = at;
        let (mut source_line, mut source_column, mut name) = (0i64, 0i64, 0i64);
        let n_sources = self.sources.len();
        let source_of = |k: i64| if k >= 0 && (k as usize) < n_sources { k as u32 } else { NONE };
        let out = &mut self.entries;
        loop {
            if it.peek() == Some(u16::from(b',')) {
                it.next();
            } else {
                while it.peek() == Some(u16::from(b';')) {
                    line += 1;
                    column = 0;
                    it.next();
                }
                if it.peek().is_none() {
                    break;
                }
            }
            column += it.vlq()?;
            if it.at_separator() {
                out.push(Entry::new(line, column, NONE, 0, 0, NONE));
                continue;
            }
            let delta = it.vlq()?;
            if delta != 0 {
                source += delta;
            }
            source_line += it.vlq()?;
            source_column += it.vlq()?;
            let src = source_of(source);
            if it.at_separator() {
                self.out_of_range += usize::from(src == NONE);
                out.push(Entry::new(line, column, src, source_line, source_column, NONE));
                continue;
            }
            name += it.vlq()?;
            let nm = if name >= 0 && (name as usize) < n_names { (name_base + name as usize) as u32 } else { NONE };
            self.out_of_range += usize::from(src == NONE || nm == NONE);
            out.push(Entry::new(line, column, src, source_line, source_column, nm));
        }
        Ok(())
    }

    /// `findEntry`: the last mapping at or before (`line`, `column`), 0-based.
    pub(crate) fn find_entry(&self, line: i64, column: i64) -> Option<&Entry> {
        let k = self.entries.partition_point(|e| (e.line(), e.column()) <= (line, column));
        k.checked_sub(1).map(|k| &self.entries[k])
    }

    /// [`SourceMap::find_entry`] searched outward from `near` (where a nearby position's
    /// search ended, updated to where this one ends): O(log distance) for positions looked up
    /// in order, as a script's scopes are.
    pub(crate) fn find_entry_near(&self, near: &mut usize, line: i64, column: i64) -> Option<&Entry> {
        let e = &self.entries;
        let le = |i: usize| (e[i].line(), e[i].column()) <= (line, column);
        let h = (*near).min(e.len());
        // The answer (the count of entries at or before the position) is in lo..=hi.
        let (mut lo, mut hi) = (0, e.len());
        let mut step = 1;
        if h < e.len() && le(h) {
            lo = h + 1;
            while h + step < e.len() {
                if !le(h + step) {
                    hi = h + step;
                    break;
                }
                lo = h + step + 1;
                step *= 2;
            }
        } else {
            hi = h;
            while step <= h {
                if le(h - step) {
                    lo = h - step + 1;
                    break;
                }
                hi = h - step;
                step *= 2;
            }
        }
        let k = lo + e[lo..hi].partition_point(|x| (x.line(), x.column()) <= (line, column));
        *near = k;
        k.checked_sub(1).map(|k| &e[k])
    }

    /// The source URL of `e`, when it has a source.
    pub(crate) fn source_url(&self, e: &Entry) -> Option<&str> {
        self.sources.get(e.source as usize).map(|s| s.url.as_str())
    }

    /// The last generated line a mapping is on (-1 for none).
    pub(crate) fn last_line(&self) -> i64 {
        self.entries.last().map_or(-1, Entry::line)
    }

    /// The index of `e`'s source among the map's sources, when it has one.
    pub(crate) fn source_index(&self, e: &Entry) -> Option<usize> {
        (e.source != NONE).then_some(e.source as usize)
    }

    /// The name of `e`, when it has one.
    pub(crate) fn name(&self, e: &Entry) -> Option<&str> {
        self.names.get(e.name as usize).and_then(|n| n.as_deref())
    }

    /// The distinct source URLs, in the map's order (`sourceURLs()`).
    pub(crate) fn source_urls(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.sources.iter().map(|s| s.url.as_str()).filter(|u| seen.insert(*u)).collect()
    }

    /// The first source of that URL (as DevTools keeps it by URL).
    fn source_by_url(&self, url: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.url == url)
    }

    /// `compatibleForURL`: the same embedded text and ignore-list hint for `url` in both.
    /// The text `sourcesContent` gives the source at `url` (a digest of it unless the map was
    /// read `whole`).
    pub(crate) fn content_of(&self, url: &str) -> Option<&str> {
        self.source_by_url(url)?.content.as_deref()
    }

    pub(crate) fn compatible_for(&self, url: &str, other: &SourceMap) -> bool {
        let (a, b) = (self.source_by_url(url), other.source_by_url(url));
        a.and_then(|s| s.content.as_deref()) == b.and_then(|s| s.content.as_deref())
            && a.is_some_and(|s| s.ignored) == b.is_some_and(|s| s.ignored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(json: &str) -> SourceMap {
        SourceMap::new(
            "http://x.com/dist/app.js",
            "http://x.com/dist/app.js.map",
            &parse_text(json.as_bytes(), false).unwrap(),
        )
        .unwrap()
    }

    proptest::proptest! {
        /// Searched from any place, the entry is the one a whole bisection finds.
        #[test]
        fn a_search_from_near_finds_the_entry(
            positions in proptest::collection::vec((0i64..4, 0i64..30), 0..60),
            queries in proptest::collection::vec((0usize..70, -1i64..5, -1i64..32), 1..20),
        ) {
            let mut m = map(r#"{"version":3,"sources":[],"mappings":""}"#);
            let mut positions = positions;
            positions.sort();
            m.entries = positions.iter().map(|&(l, c)| Entry::new(l, c, NONE, 0, 0, NONE)).collect();
            for (near, line, column) in queries {
                let mut at = near;
                let want = m.find_entry(line, column).map(|e| (e.line(), e.column()));
                let got = m.find_entry_near(&mut at, line, column).map(|e| (e.line(), e.column()));
                proptest::prop_assert_eq!(got, want);
                // Where it ended: past every entry at or before the position.
                proptest::prop_assert_eq!(at, m.entries.partition_point(|e| (e.line(), e.column()) <= (line, column)));
            }
        }
    }

    proptest::proptest! {
        /// An ASCII string's mappings, read as bytes, decode as [`Units`] reads them, errors
        /// and all (digits past a number's end, bad digits, long numbers, separators in a row).
        #[test]
        fn mappings_read_as_bytes_decode_as_code_units(
            parts in proptest::collection::vec(
                proptest::sample::select(&["A", "C", "g", "/", "+", "9", "z", ",", ";", ";;", "!", "gggggggB", "AAAA"][..]),
                0..200,
            ),
        ) {
            let text = parts.concat();
            let decode = |bytes: bool| {
                let mut m = map(r#"{"version":3,"sources":["a.js","b.js"],"names":["f"],"mappings":""}"#);
                let at = Start { line: 0, column: 0, source: 0, name_base: 0, n_names: 1 };
                let r = if bytes { m.decode(Ascii::new(&text).unwrap(), at) } else { m.decode(Units::new(&text), at) };
                (r, m.entries, m.out_of_range)
            };
            proptest::prop_assert_eq!(decode(true), decode(false));
        }
    }

    #[test]
    fn sources_compare_by_their_decoded_text() {
        let with = |content: &str| {
            map(&format!(r#"{{"version":3,"sources":["a.ts"],"sourcesContent":[{content}],"mappings":"AAAA"}}"#))
        };
        let (plain, escaped, other) =
            (with(r#""let ab = 1;\n""#), with(r#""let a\u0062 = 1;\u000a""#), with(r#""let b;""#));
        let url = "http://x.com/dist/a.ts";
        assert!(plain.compatible_for(url, &escaped));
        assert!(!plain.compatible_for(url, &other));
        assert!(!plain.compatible_for(url, &with("null")));
    }

    /// The first example of the Source Map v3 proposal's mappings, decoded by hand.
    #[test]
    fn mappings_decode_to_positions_sources_and_names() {
        let m = map(
            r#"{"version":3,"sources":["../src/a.ts","b.ts"],"names":["foo","bar"],"mappings":"AAAAA,IAAI;ACCAC,EAAE,C"}"#,
        );
        let got: Vec<_> = m
            .entries
            .iter()
            .map(|e| (e.line(), e.column(), m.source_url(e), e.source_line(), e.source_column(), m.name(e)))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, Some("http://x.com/src/a.ts"), 0, 0, Some("foo")),
                (0, 4, Some("http://x.com/src/a.ts"), 0, 4, None),
                (1, 0, Some("http://x.com/dist/b.ts"), 1, 4, Some("bar")),
                (1, 2, Some("http://x.com/dist/b.ts"), 1, 6, None),
                (1, 3, None, 0, 0, None),
            ]
        );
        assert_eq!(m.find_entry(0, 3).map(Entry::column), Some(0));
        assert_eq!(m.find_entry(1, 100).map(Entry::column), Some(3));
        assert!(m.find_entry(-1, -1).is_none());
    }

    #[test]
    fn a_bad_digit_drops_every_mapping_as_devtools_does() {
        let m = map(r#"{"version":3,"sources":["a.js"],"mappings":"AAAA;AA!A"}"#);
        assert!(m.entries.is_empty());
        assert!(m.mappings_error.as_deref().unwrap().contains("unexpected char"));
        // A trailing comma asks for one more number.
        assert!(map(r#"{"version":3,"sources":["a.js"],"mappings":"AAAA,"}"#).entries.is_empty());
    }

    #[test]
    fn sections_shift_lines_and_number_sources_on() {
        let m = map(r#"{"version":3,"sections":[
              {"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a.js"],"names":["f"],"mappings":"AAAAA"}},
              {"offset":{"line":10,"column":5},"map":{"version":3,"sources":["b.js"],"names":["g"],"mappings":"AAAAA;AACA"}}]}"#);
        let e = m.find_entry(10, 7).unwrap();
        assert_eq!(
            (e.line(), e.column(), m.source_url(e), m.name(e)),
            (10, 5, Some("http://x.com/dist/b.js"), Some("g"))
        );
        let e = m.find_entry(11, 0).unwrap();
        assert_eq!((e.source_line(), m.source_url(e)), (1, Some("http://x.com/dist/b.js")));
    }

    #[test]
    fn a_source_root_is_prepended_to_relative_sources() {
        let m = map(
            r#"{"version":3,"sourceRoot":"webpack://app","sources":["./src/x.js","/abs.js","https://h/y.js"],"mappings":""}"#,
        );
        assert_eq!(m.source_urls(), ["webpack://app/src/x.js", "webpack://app/abs.js", "https://h/y.js"]);
    }

    /// Answers of DevTools' own `TokenIterator.nextVLQ` (run in Node).
    #[test]
    fn vlq_follows_javascripts_32_bit_arithmetic() {
        for (s, want) in [
            ("+///D", 2_097_151),
            ("////D", -2_097_151),
            // A unit past the table's 123 codes ends a number without an error.
            ("i~", 1),
            ("C~", 1),
            // Shifts past 31 wrap, and the sign is the 32-bit value's.
            ("gggggggB", 4),
            ("+/////H", -1),
            ("//////H", 1),
        ] {
            assert_eq!(Units::new(s).vlq(), Ok(want), "{s}");
        }
    }
}
