//! Per call frame, the name and original place DevTools shows once source maps apply:
//! `NamesResolver.resolveProfileFrameFunctionName` (its rule without scope data: the mapping
//! at the frame's position, its name, and the generated text there must be `(`) and
//! `CompilerScriptMapping.rawLocationToUILocation` (the mapping's source and position, while
//! the source's URL is still bound to that map in its project).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::map::{parse_text, SourceMap};
use super::scopes::AstScopes;
use super::text::Lines;
use super::url::{complete_url, file_name, ParsedUrl};

/// A call frame of a profile node, as recorded (0-based line and column; None where the
/// profile has none).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameKey {
    /// The script's URL (empty for none).
    pub url: String,
    /// The script's id, as the profile writes it.
    pub script_id: String,
    /// The function's recorded name.
    pub name: String,
    /// 0-based line of the function's start.
    pub line: Option<i64>,
    /// 0-based column of the function's start.
    pub column: Option<i64>,
}

/// Where the frame's node was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameAt {
    /// The process.
    pub pid: i64,
    /// The thread.
    pub tid: i64,
}

/// What DevTools shows for a frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    /// DevTools' name once it has finished (with its AST scopes fallback), or None (the
    /// recorded name stays). May be empty: DevTools then shows the recorded name too.
    pub name: Option<String>,
    /// DevTools' name before its AST scopes fallback has run (its first pass).
    pub first_name: Option<String>,
    /// The original source's URL and 0-based line and column.
    pub original: Option<(String, i64, i64)>,
}

/// Where maps and scripts come from: given by the user (pairs and folders), never fetched.
pub trait Loader {
    /// The text of the script at `url` (its generated code), when the user has it.
    fn script(&self, url: &str) -> Option<String>;
    /// The map the user gave for the script at `url` (`--source-map URL=FILE`).
    fn map_for(&self, url: &str) -> Option<Result<Vec<u8>, String>>;
    /// The map at `url` (a comment's URL resolved against its script's, or the script's URL
    /// and `.map`), when the user's folders (`--source-maps DIR`) hold it: found there by the
    /// URL's path, its last parts first, never outside them.
    fn map_at(&self, url: &str) -> Option<Result<Vec<u8>, String>>;
}

/// A problem with one map or script: the frames it would have named keep their names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapProblem {
    /// The script's URL.
    pub script: String,
    /// Where the map came from and what was wrong.
    pub what: String,
}

/// The resolution of a whole profile's frames.
#[derive(Debug, Default)]
pub struct Resolution {
    /// Per distinct frame (its last node's place), DevTools' answer.
    pub frames: BTreeMap<FrameKey, Resolved>,
    /// The scripts, in the order their maps were attached.
    pub scripts: Vec<ScriptSummary>,
    /// Maps that could not be used.
    pub problems: Vec<MapProblem>,
}

impl Resolution {
    /// Frames a map gave a name that is not empty.
    pub fn renamed(&self) -> usize {
        self.frames.values().filter(|r| r.name.as_deref().is_some_and(|n| !n.is_empty())).count()
    }

    /// Frames a map gave an original place.
    pub fn placed(&self) -> usize {
        self.frames.values().filter(|r| r.original.is_some()).count()
    }

    /// Scripts that have a map.
    pub fn mapped_scripts(&self) -> usize {
        self.scripts.iter().filter(|s| s.map.is_some()).count()
    }
}

/// One script and where its text and map came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSummary {
    /// The script's URL.
    pub url: String,
    /// Its id.
    pub script_id: String,
    /// Its process.
    pub pid: i64,
    /// `script-file` when the user gave its text.
    pub text: Option<&'static str>,
    /// How the map was found (`map-file`, `script-data-url`, `maps-dir-by-comment`,
    /// `maps-dir-by-name`).
    pub map: Option<&'static str>,
    /// The map's own URL (`data:…` for an inline map).
    pub map_url: Option<String>,
}

/// A script as the resolver models it (DevTools' `SDK.Script` and its map).
struct Script {
    group: String,
    script_id: String,
    url: String,
    /// The `//# sourceURL=` name, when the text names the script by its own URL.
    source_url: Option<String>,
    text: Option<Arc<str>>,
    map: Option<Arc<SourceMap>>,
    /// The scopes of the script's text, made original by its map, when the map has no scope
    /// data of its own (made on first use).
    ast: std::cell::OnceCell<Option<AstScopes>>,
    /// The text's lines (made on first use).
    lines: std::cell::OnceCell<Lines>,
    summary: ScriptSummary,
}

impl Script {
    /// The script's text and its lines (made on first use, for both name rules).
    fn text_lines(&self) -> Option<(&str, &Lines)> {
        let text = self.text.as_deref()?;
        Some((text, self.lines.get_or_init(|| Lines::new(text))))
    }

    /// The character of the script's text at (line, UTF-16 column), as DevTools reads it.
    fn text_char_at(&self, line: i64, column: i64) -> Option<char> {
        let (text, lines) = self.text_lines()?;
        lines.char_at(text, line, column)
    }

    /// The URL DevTools knows the script by (`sourceURL` or the recorded one).
    fn compiled_url(&self) -> &str {
        self.source_url.as_deref().unwrap_or(&self.url)
    }
}

/// The last `//# sourceMappingURL=` (or `//@`, or in a `/* */` comment) of a script.
pub(crate) fn source_mapping_url(text: &str) -> Option<&str> {
    last_comment(text, "sourceMappingURL")
}

/// The last `//# sourceURL=` of a script.
pub(crate) fn source_url_comment(text: &str) -> Option<&str> {
    last_comment(text, "sourceURL")
}

/// The value of the last `(//|/*)[#@][ \t]KEY=[ \t]*VALUE[ \t]*(*/[ \t]*)?` ending a line.
fn last_comment<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let mut last = None;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut from = 0;
        while let Some(at) = line[from..].find(key).map(|i| i + from) {
            from = at + key.len();
            let before = &line[..at];
            let Some(lead) = before.strip_suffix(' ').or_else(|| before.strip_suffix('\t')) else { continue };
            if !(lead.ends_with("//#") || lead.ends_with("//@") || lead.ends_with("/*#") || lead.ends_with("/*@")) {
                continue;
            }
            let Some(rest) = line[from..].strip_prefix('=') else { continue };
            let rest = rest.trim_start_matches([' ', '\t']);
            let end = rest.find(|c: char| c.is_whitespace() || c == '\'' || c == '"').unwrap_or(rest.len());
            let (value, tail) = rest.split_at(end);
            let tail = tail.trim_start_matches([' ', '\t']);
            let tail = tail.strip_prefix("*/").map_or(tail, |t| t.trim_start_matches([' ', '\t']));
            if tail.is_empty() && !value.is_empty() {
                last = Some(value);
            }
        }
    }
    last
}

/// Decodes a `data:` URL's payload (`;base64` or percent-encoded), as a browser's loader does.
pub(crate) fn data_url_payload(url: &str) -> Option<Vec<u8>> {
    let rest = url.strip_prefix("data:")?;
    let (head, body) = rest.split_once(',')?;
    if head.split(';').any(|p| p.eq_ignore_ascii_case("base64")) {
        let clean: Vec<u8> = percent_decode(body).into_iter().filter(|b| !b.is_ascii_whitespace()).collect();
        return base64_decode(&clean);
    }
    Some(percent_decode(body))
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    let s: Vec<u8> = s.iter().copied().take_while(|&c| c != b'=').collect();
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        })
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut n = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            n |= val(c)? << (18 - 6 * k);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        match chunk.len() {
            4 => out.extend_from_slice(&bytes),
            3 => out.extend_from_slice(&bytes[..2]),
            2 => out.push(bytes[0]),
            _ => return None,
        }
    }
    Some(out)
}

/// Resolves `frames` (each distinct frame with the place of its last node), the way DevTools
/// does once the maps `loader` finds are attached.
pub(crate) fn resolve(frames: &[(FrameKey, FrameAt)], loader: &dyn Loader) -> Resolution {
    let mut res = Resolution::default();
    // DevTools keeps one answer per frame key: a later node with the key overwrites.
    let mut distinct: BTreeMap<&FrameKey, FrameAt> = BTreeMap::new();
    for (k, at) in frames {
        distinct.insert(k, *at);
    }
    // One script per (pid, scriptId, url) of the frames: the profile is all there is.
    let mut scripts: Vec<Script> = Vec::new();
    let mut index: HashMap<(i64, String, String), usize> = HashMap::new();
    let mut frame_script: HashMap<&FrameKey, usize> = HashMap::new();
    for (k, at) in &distinct {
        if k.url.is_empty() || k.script_id == "0" {
            continue;
        }
        let key = (at.pid, k.script_id.clone(), k.url.clone());
        let n = scripts.len();
        let s = *index.entry(key).or_insert(n);
        if s == n {
            scripts.push(Script {
                group: format!("{}|user", at.pid),
                script_id: k.script_id.clone(),
                url: k.url.clone(),
                source_url: None,
                text: None,
                map: None,
                ast: std::cell::OnceCell::new(),
                lines: std::cell::OnceCell::new(),
                summary: ScriptSummary {
                    url: k.url.clone(),
                    script_id: k.script_id.clone(),
                    pid: at.pid,
                    text: None,
                    map: None,
                    map_url: None,
                },
            });
        }
        frame_script.insert(k, s);
    }
    // Maps attach in parse order (scriptId order within a target).
    let mut order: Vec<usize> = (0..scripts.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&scripts[a], &scripts[b]);
        x.group.cmp(&y.group).then_with(|| numeric_id(&x.script_id).total_cmp(&numeric_id(&y.script_id)))
    });
    for &s in &order {
        attach(&mut scripts[s], loader, &mut res.problems);
    }
    // The targets: per group, scripts by id (a later one with the same id replaces), and per
    // project the maps each source URL is bound to.
    let mut by_id: HashMap<(&str, &str), usize> = HashMap::new();
    let mut projects: HashMap<String, HashMap<String, Vec<usize>>> = HashMap::new();
    let mut project_of: HashMap<usize, String> = HashMap::new();
    for &s in &order {
        let sc = &scripts[s];
        by_id.insert((sc.group.as_str(), sc.script_id.as_str()), s);
        let Some(map) = &sc.map else { continue };
        let project = format!("{}{}", sc.group, origin_part(&sc.url));
        let bound_urls = projects.entry(project.clone()).or_default();
        for url in map.source_urls() {
            let mut bound = vec![s];
            for &other in bound_urls.get(url).map_or(&[][..], Vec::as_slice) {
                let om = scripts[other].map.as_ref().expect("bound scripts have maps");
                if map.compatible_for(url, om) {
                    bound.push(other);
                }
            }
            bound_urls.insert(url.to_owned(), bound);
        }
        project_of.insert(s, project);
    }
    for k in distinct.keys() {
        let mut r = Resolved::default();
        if let Some(&fs) = frame_script.get(k) {
            let group = scripts[fs].group.as_str();
            if let (Some(&s), Some(line), Some(column)) = (by_id.get(&(group, k.script_id.as_str())), k.line, k.column)
            {
                let sc = &scripts[s];
                if let Some(map) = &sc.map {
                    // Scripts known from a profile start at 0:0: no inline offset to take off.
                    // Scope data (here: the script's scopes) names the function first.
                    let ast = sc.ast.get_or_init(|| match (sc.text_lines(), map.has_scopes) {
                        (Some((text, lines)), false) => match AstScopes::new(map, text, lines, false) {
                            Ok(a) => Some(a),
                            Err(why) => {
                                if let Some(why) = why {
                                    res.problems.push(MapProblem { script: sc.url.clone(), what: why });
                                }
                                None
                            }
                        },
                        _ => None,
                    });
                    let scope_name = ast.as_ref().and_then(|a| a.function_name(line, column));
                    if let Some(e) = map.find_entry(line, column) {
                        if let Some(source) = map.source_url(e) {
                            if let Some(name) = map.name(e).filter(|n| !n.is_empty()) {
                                // The generated text there must be `(` (DevTools' check).
                                if sc.text_char_at(line, column) == Some('(') {
                                    r.first_name = Some(name.to_owned());
                                }
                            }
                            let bound = project_of.get(&s).and_then(|p| projects.get(p)).and_then(|p| p.get(source));
                            if bound.is_some_and(|b| b.contains(&s)) {
                                r.original = Some((source.to_owned(), e.source_line(), e.source_column()));
                            }
                        }
                    }
                    r.name = scope_name.or_else(|| r.first_name.clone());
                }
            }
        }
        res.frames.insert((*k).clone(), r);
    }
    res.scripts = order.iter().map(|&s| scripts[s].summary.clone()).collect();
    res
}

/// A script id as a number for ordering (`Number(id)`; not a number sorts first).
fn numeric_id(id: &str) -> f64 {
    id.trim().parse::<f64>().unwrap_or(f64::NAN)
}

/// The origin part of a script's project id: `:` and its site (its origin; a `file:` URL's
/// whole path), or nothing for an opaque origin (no URL, `data:`, `about:`).
fn origin_part(url: &str) -> String {
    let lower = url.trim().to_ascii_lowercase();
    let opaque = ["", "null", "undefined", "data:", "detached"].contains(&lower.as_str())
        || ["about:", "blob:about", "blob:data", "blob:file", "blob:null"].iter().any(|p| lower.starts_with(p));
    if opaque {
        return String::new();
    }
    if lower.starts_with("file://") {
        return match ParsedUrl::parse(url) {
            Some(p) => {
                let port = if p.port.is_empty() { String::new() } else { format!(":{}", p.port) };
                format!(":file://{}{port}{}", p.host, p.path)
            }
            None => String::new(),
        };
    }
    match ParsedUrl::parse(url).map(|p| p.security_origin()) {
        Some(o) if !o.is_empty() => format!(":{}", o.to_ascii_lowercase()),
        _ => String::new(),
    }
}

/// A map's bytes (or why they could not be read), its URL, and how it was found.
type Found = (Result<Vec<u8>, String>, Option<String>, &'static str);

/// Finds `s`'s text and map, in the oracle's order: the user's map for its URL, an inline
/// `data:` map, the map the comment names in the user's folders, then the script's `.map`
/// there.
fn attach(s: &mut Script, loader: &dyn Loader, problems: &mut Vec<MapProblem>) {
    if let Some(t) = loader.script(&s.url) {
        s.summary.text = Some("script-file");
        if source_url_comment(&t) == Some(s.url.as_str()) {
            s.source_url = Some(s.url.clone());
        }
        s.text = Some(Arc::from(t));
    }
    let compiled = s.compiled_url().to_owned();
    let comment = s.text.as_deref().and_then(source_mapping_url).map(str::to_owned);
    let resolved_comment = comment.as_deref().and_then(|c| complete_url(&compiled, c));
    let default_map_url =
        resolved_comment.clone().or_else(|| complete_url(&compiled, &format!("{}.map", file_name(&compiled))));
    let mut found: Option<Found> = None;
    if let Some(bytes) = loader.map_for(&s.url) {
        found = Some((bytes, default_map_url.clone(), "map-file"));
    }
    if found.is_none() {
        if let Some(c) = comment.as_deref().filter(|c| c.starts_with("data:")) {
            let payload = data_url_payload(c).ok_or_else(|| "an inline map that is no data: URL".to_owned());
            found = Some((payload, Some(c.to_owned()), "script-data-url"));
        }
    }
    if found.is_none() {
        if let Some(rc) =
            resolved_comment.as_deref().filter(|_| !comment.as_deref().is_some_and(|c| c.starts_with("data:")))
        {
            if let Some(bytes) = loader.map_at(rc) {
                found = Some((bytes, resolved_comment.clone(), "maps-dir-by-comment"));
            }
        }
    }
    if found.is_none() && !s.url.is_empty() {
        if let Some(bytes) = loader.map_at(&format!("{}.map", s.url.split(['?', '#']).next().unwrap_or(""))) {
            found = Some((bytes, default_map_url, "maps-dir-by-name"));
        }
    }
    let Some((bytes, map_url, origin)) = found else { return };
    let problem = |what: String| MapProblem { script: s.url.clone(), what };
    let Some(map_url) = map_url else {
        // DevTools attaches nothing when the map's URL cannot be made absolute.
        problems.push(problem(format!("{origin}: no absolute URL for the map (the script's URL is no URL)")));
        return;
    };
    let map = bytes
        .map_err(|e| format!("{origin}: {e}"))
        .and_then(|b| parse_text(&b).map_err(|e| format!("{origin}: {e}")))
        .and_then(|json| SourceMap::new(&compiled, &map_url, &json).map_err(|e| format!("{origin}: {e}")));
    match map {
        Ok(m) => {
            if let Some(e) = &m.mappings_error {
                problems.push(problem(format!("{origin}: its mappings are unreadable ({e}): none used")));
            }
            if m.out_of_range > 0 {
                problems.push(problem(format!(
                    "{origin}: {} mappings name a source or a name it does not have (those parts are ignored, as DevTools ignores them)",
                    m.out_of_range
                )));
            }
            if let Some(t) = s.text.as_deref() {
                let lines = memchr::memchr_iter(b'\n', t.as_bytes()).count() as i64 + 1;
                if m.last_line() >= lines {
                    problems.push(problem(format!(
                        "{origin}: its mappings reach line {}, past the script's {lines} lines: is it the map of another build?",
                        m.last_line() + 1
                    )));
                }
            }
            if m.has_scopes {
                problems.push(problem(format!(
                    "{origin}: it has scope data (the scopes proposal), which is not read: its functions are named by the mappings and the script's scopes, where DevTools reads that data"
                )));
            }
            s.summary.map = Some(origin);
            s.summary.map_url = Some(if map_url.starts_with("data:") { "data:…".to_owned() } else { map_url });
            s.map = Some(Arc::new(m));
        }
        Err(e) => problems.push(problem(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_mapping_comments_are_found_as_devtools_finds_them() {
        assert_eq!(source_mapping_url("a()\n//# sourceMappingURL=app.js.map\n"), Some("app.js.map"));
        assert_eq!(source_mapping_url("//# sourceMappingURL=a.map\n//@ sourceMappingURL=b.map"), Some("b.map"));
        assert_eq!(source_mapping_url("/*# sourceMappingURL=c.map */"), Some("c.map"));
        assert_eq!(source_mapping_url("x = '//# sourceMappingURL=no.map' + y"), None);
        assert_eq!(source_mapping_url("//#sourceMappingURL=no.map"), None);
    }

    #[test]
    fn data_urls_decode() {
        assert_eq!(data_url_payload("data:application/json;base64,eyJhIjoxfQ==").unwrap(), br#"{"a":1}"#);
        assert_eq!(data_url_payload("data:application/json,%7B%22a%22%3A1%7D").unwrap(), br#"{"a":1}"#);
    }
}
