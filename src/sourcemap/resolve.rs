//! Per call frame, the name and original place DevTools shows once source maps apply:
//! `NamesResolver.resolveProfileFrameFunctionName` (its rule without scope data: the mapping
//! at the frame's position, its name, and the generated text there must be `(`) and
//! `CompilerScriptMapping.rawLocationToUILocation` (the mapping's source and position, while
//! the source's URL is still bound to that map in its project).

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::info::ScopesInfo;
use super::map::{parse_text, SourceMap};
use super::scopes::{self, Originals, Scope};
use super::text::Lines;
use super::url::{complete_url, file_name, ParsedUrl};
use crate::model::trace::scripts::{Embedded, MetaMap, TraceScript};

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

/// A map the user has, read when it is used (see [`Loader::map_at`]): rustdoc shows the type
/// it stands for.
pub(crate) type ReadMap<'a> = Box<dyn FnOnce() -> Result<Vec<u8>, String> + 'a>;

/// Where maps and scripts come from: given by the user (pairs and folders), never fetched.
/// Shared by the threads that read several scripts' maps at once.
pub trait Loader: Sync {
    /// The text of the script at `url` (its generated code), when the user has it.
    fn script(&self, url: &str) -> Option<String>;
    /// The map the user gave for the script at `url` (`--source-map URL=FILE`), as
    /// [`Loader::map_at`] gives it.
    fn map_for(&self, url: &str) -> Option<ReadMap<'_>>;
    /// The map at `url` (a comment's URL resolved against its script's, or the script's URL
    /// and `.map`), when the user's folders (`--source-maps DIR`) hold it: found there by the
    /// URL's path, its last parts first, never outside them. The map is read when it is used:
    /// beside the parse of its script, which then starts without waiting for the map's bytes
    /// (an error says why they cannot be read).
    fn map_at(&self, url: &str) -> Option<ReadMap<'_>>;
    /// Whether the command shows original sources: the maps' `sourcesContent` texts are then
    /// kept ([`Resolution::sources`]).
    fn keeps_sources(&self) -> bool {
        false
    }
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
    /// With [`Loader::keeps_sources`], the text each map's `sourcesContent` gives an original
    /// source, by its URL (the map the URL is bound to: the one DevTools shows it from).
    pub sources: BTreeMap<String, Arc<str>>,
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
    /// Its isolate, for a script the trace describes.
    pub isolate: Option<String>,
    /// Its process.
    pub pid: i64,
    /// `trace` when the trace carries its text, `script-file` when the user gave it.
    pub text: Option<&'static str>,
    /// How the map was found (`map-file`, `script-data-url`, `trace-rundown-data-url`,
    /// `trace-metadata-by-sourceMapUrl`, `trace-metadata-by-url(elided data url)`,
    /// `maps-dir-by-comment`, `maps-dir-by-name`, `trace-metadata-by-url`).
    pub map: Option<&'static str>,
    /// The map's own URL (`data:…` for an inline map).
    pub map_url: Option<String>,
}

/// The scopes of a script's text made original, or why not.
type AstScopes = Result<ScopesInfo, Option<String>>;

/// A script as the resolver models it (DevTools' `SDK.Script` and its map).
struct Script {
    group: String,
    /// What the trace says of it, or (for a script known only from the profile) the same
    /// fields filled in from its frames and text.
    desc: TraceScript,
    from_trace: bool,
    map: Option<Arc<SourceMap>>,
    /// The scopes of the script's text, made original by its map, when the map has no scope
    /// data of its own (made on first use).
    ast: std::cell::OnceCell<Option<ScopesInfo>>,
    /// The text's own scopes, found while its map was read (none when they were made
    /// original as they were found).
    generated: Option<Result<Vec<Scope>, Option<String>>>,
    /// The text's scopes made original while it was parsed (when a frame is named by them),
    /// or why not, for `ast` to take (its warning told then, in the frames' order).
    made_ast: std::cell::Cell<Option<AstScopes>>,
    /// The text's lines (made on first use).
    lines: std::cell::OnceCell<Lines>,
    summary: ScriptSummary,
}

impl Script {
    fn new(group: String, desc: TraceScript, from_trace: bool) -> Script {
        let summary = ScriptSummary {
            url: desc.url.clone(),
            script_id: desc.script_id.clone(),
            isolate: from_trace.then(|| desc.isolate.clone()),
            pid: desc.pid,
            text: None,
            map: None,
            map_url: None,
        };
        Script {
            group,
            desc,
            from_trace,
            map: None,
            ast: std::cell::OnceCell::new(),
            generated: None,
            made_ast: std::cell::Cell::new(None),
            lines: std::cell::OnceCell::new(),
            summary,
        }
    }

    /// The scopes of its text made original by its map, when the map has none of its own
    /// (None: no text or no such map; an error says why not, when it is worth a warning).
    fn make_ast(&self) -> Option<AstScopes> {
        let map = self.map.as_ref().filter(|m| named_by_text(m))?;
        let (text, lines) = self.text_lines()?;
        Some(match &self.generated {
            Some(g) => g.as_ref().map(|g| ScopesInfo::of(map, lines, g)).map_err(Clone::clone),
            None => ScopesInfo::new(map, text, lines, self.desc.is_module),
        })
    }

    /// The script's text and its lines (made on first use, for both name rules).
    fn text_lines(&self) -> Option<(&str, &Lines)> {
        let text = self.desc.text.as_deref()?;
        Some((text, self.lines.get_or_init(|| Lines::new(text))))
    }

    /// The character of the script's text at (line, UTF-16 column), as DevTools reads it.
    fn text_char_at(&self, line: i64, column: i64) -> Option<char> {
        let (text, lines) = self.text_lines()?;
        lines.char_at(text, line, column)
    }
}

/// Whether a script's functions are named by its text's scopes made original through `map`:
/// the map has no scope data of its own, and its mappings decoded.
fn named_by_text(map: &SourceMap) -> bool {
    map.scopes.is_none() && map.mappings_error.is_none()
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
    // The key's places from the last: the first that is such a comment is the last one (a
    // bundle's comment is at its end, after megabytes of code).
    let bytes = text.as_bytes();
    for at in memchr::memmem::rfind_iter(bytes, key.as_bytes()) {
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        let line = &text[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(value) = comment_value(line, at - start, key) {
            return Some(value);
        }
    }
    None
}

/// The value of the comment whose key is at `at` in `line`, when it is one ending the line.
fn comment_value<'a>(line: &'a str, at: usize, key: &str) -> Option<&'a str> {
    let before = &line[..at];
    let lead = before.strip_suffix(' ').or_else(|| before.strip_suffix('\t'))?;
    if !(lead.ends_with("//#") || lead.ends_with("//@") || lead.ends_with("/*#") || lead.ends_with("/*@")) {
        return None;
    }
    let rest = line.get(at + key.len()..)?.strip_prefix('=')?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let end = rest.find(|c: char| c.is_whitespace() || c == '\'' || c == '"').unwrap_or(rest.len());
    let (value, tail) = rest.split_at(end);
    let tail = tail.trim_start_matches([' ', '\t']);
    let tail = tail.strip_prefix("*/").map_or(tail, |t| t.trim_start_matches([' ', '\t']));
    (tail.is_empty() && !value.is_empty()).then_some(value)
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
/// does once the maps `loader` finds and the trace carries (`embedded`) are attached. With
/// `by_url` (a Firefox profile, whose frames have no script id) a frame's script is the one
/// with its URL; SpiderMonkey places a function where V8 does (its parameters' start), so the
/// same rules name it.
pub(crate) fn resolve(
    frames: &[(FrameKey, FrameAt)],
    embedded: &Embedded,
    loader: &dyn Loader,
    threads: usize,
    by_url: bool,
) -> Resolution {
    let mut res = Resolution::default();
    // DevTools keeps one answer per frame key: a later node with the key overwrites.
    let mut distinct: BTreeMap<&FrameKey, FrameAt> = BTreeMap::new();
    for (k, at) in frames {
        distinct.insert(k, *at);
    }
    // The trace's scripts by (pid, id); a frame takes the one with its URL, then its thread.
    let mut by_pid_id: HashMap<(i64, &str), Vec<usize>> = HashMap::default();
    for (i, t) in embedded.scripts.iter().enumerate() {
        by_pid_id.entry((t.pid, t.script_id.as_str())).or_default().push(i);
    }
    let mut scripts: Vec<Script> = Vec::new();
    let mut of_trace: HashMap<usize, usize> = HashMap::default();
    // Otherwise one script per (pid, scriptId, url) of the frames: the profile is all there is.
    let mut of_profile: HashMap<(i64, String, String), usize> = HashMap::default();
    let mut frame_script: HashMap<&FrameKey, usize> = HashMap::default();
    for (k, at) in &distinct {
        let candidates = by_pid_id.get(&(at.pid, k.script_id.as_str())).map_or(&[][..], Vec::as_slice);
        let mut best: Option<(usize, (bool, bool))> = None;
        for &i in candidates {
            let t = &embedded.scripts[i];
            let url_match = t.url == k.url || (t.has_source_url && t.source_url.as_deref() == Some(k.url.as_str()));
            let rank = (url_match, t.tids.contains(&at.tid));
            if best.is_none_or(|(_, r)| rank > r) {
                best = Some((i, rank));
            }
        }
        let s = if let Some((i, _)) = best {
            *of_trace.entry(i).or_insert_with(|| {
                let t = &embedded.scripts[i];
                scripts.push(Script::new(format!("{}|{}", t.pid, t.isolate), t.clone(), true));
                scripts.len() - 1
            })
        } else if k.url.is_empty() || (k.script_id == "0" && !by_url) {
            continue;
        } else {
            *of_profile.entry((at.pid, k.script_id.clone(), k.url.clone())).or_insert_with(|| {
                let desc = TraceScript {
                    pid: at.pid,
                    script_id: k.script_id.clone(),
                    url: k.url.clone(),
                    ..TraceScript::default()
                };
                scripts.push(Script::new(format!("{}|user", at.pid), desc, false));
                scripts.len() - 1
            })
        };
        frame_script.insert(k, s);
    }
    // Maps attach in parse order (scriptId order within a target).
    let mut order: Vec<usize> = (0..scripts.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&scripts[a], &scripts[b]);
        x.group.cmp(&y.group).then_with(|| numeric_id(&x.desc.script_id).total_cmp(&numeric_id(&y.desc.script_id)))
    });
    // The targets: per group, scripts by id (a later one with the same id replaces); a frame
    // with a place is resolved in the one its target has by the frame's id.
    let mut by_id: HashMap<(&str, &str), usize> = HashMap::default();
    for &s in &order {
        let d = &scripts[s].desc;
        by_id.insert((scripts[s].group.as_str(), if by_url { &d.url } else { &d.script_id }), s);
    }
    let resolved_in: HashMap<&FrameKey, usize> = frame_script
        .iter()
        .filter(|(k, _)| k.line.is_some() && k.column.is_some())
        .filter_map(|(k, &fs)| {
            let id = if by_url { &k.url } else { &k.script_id };
            Some((*k, *by_id.get(&(scripts[fs].group.as_str(), id.as_str()))?))
        })
        .collect();
    // The scripts whose scopes name a frame.
    let mut named = vec![false; scripts.len()];
    for &s in resolved_in.values() {
        named[s] = true;
    }
    // Each script's map is read, its text parsed and its scopes made original apart from the
    // others', on up to `threads` threads (a page often has several large bundles); what went
    // wrong is told in parse order.
    let jobs: Vec<(&mut Script, bool)> = scripts.iter_mut().zip(named).collect();
    let mut told: Vec<Vec<MapProblem>> = crate::parallel::map(jobs, threads, |(s, named)| {
        let mut problems = Vec::new();
        attach(s, &embedded.maps, loader, named, &mut problems);
        problems
    });
    for &s in &order {
        res.problems.append(&mut told[s]);
    }
    // Per project, the maps each source URL is bound to.
    let mut projects: HashMap<String, HashMap<String, Vec<usize>>> = HashMap::default();
    let mut project_of: HashMap<usize, String> = HashMap::default();
    for &s in &order {
        let sc = &scripts[s];
        let Some(map) = &sc.map else { continue };
        let project = format!("{}{}", sc.group, origin_part(&sc.desc.url));
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
    if loader.keeps_sources() {
        let mut names: Vec<&String> = projects.keys().collect();
        names.sort();
        for bound_urls in names.into_iter().map(|p| &projects[p]) {
            for (url, bound) in bound_urls {
                let text = bound.first().and_then(|&s| scripts[s].map.as_ref()?.content_of(url));
                if let Some(text) = text {
                    res.sources.entry(url.clone()).or_insert_with(|| Arc::from(text));
                }
            }
        }
    }
    for k in distinct.keys() {
        let mut r = Resolved::default();
        if let (Some(&s), Some(line), Some(column)) = (resolved_in.get(k), k.line, k.column) {
            let sc = &scripts[s];
            if let Some(map) = &sc.map {
                // The map and the text count from the script's own start.
                let (line, column) = sc.desc.relative(line, column);
                // Scope data names the function first: the map's, else the script's scopes
                // (unless the map failed: DevTools then has neither).
                let ast = sc.ast.get_or_init(|| match sc.made_ast.take().or_else(|| sc.make_ast()) {
                    Some(Ok(a)) => Some(a),
                    Some(Err(why)) => {
                        if let Some(why) = why {
                            res.problems.push(MapProblem { script: sc.desc.url.clone(), what: why });
                        }
                        None
                    }
                    None => None,
                });
                let mapped = || {
                    let e = map.find_entry(line, column)?;
                    Some((map.source_index(e)?, (e.source_line(), e.source_column())))
                };
                let scope_name =
                    map.scopes.as_ref().or(ast.as_ref()).and_then(|a| a.function_name(line, column, mapped));
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
                // The map's own scope data is there from the first pass, the script's
                // scopes only once DevTools has parsed them.
                if map.scopes.is_some() {
                    r.first_name = scope_name.clone().or(r.first_name.take());
                }
                r.name = scope_name.or_else(|| r.first_name.clone());
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

/// A map (its bytes, or why they could not be read; or a map the trace carries), its URL,
/// and how it was found.
type Found<'a> = (Result<MapBytes<'a>, String>, Option<String>, &'static str);

/// A map's text: decoded from a `data:` URL, read from a file (when it is used), or carried by
/// the trace.
enum MapBytes<'a> {
    Read(Vec<u8>),
    Later(ReadMap<'a>),
    Carried(Arc<serde_json::value::RawValue>),
}

/// The URL a map carried in `metadata.sourceMaps` without one of its own goes by: a `data:`
/// URL (its sources then resolve against the script's URL, as an inline map's do).
const CARRIED_MAP_URL: &str = "data:application/json;charset=utf-8,";

/// Finds `s`'s text and map, in the oracle's order: the user's map for its URL, an inline
/// `data:` map, the trace's map for its `sourceMappingURL`, the trace's map for a script whose
/// inline map Chrome elided, the map the `sourceMappingURL` names in the user's folders, the
/// script's `.map` there, and last the trace's map for its URL.
fn attach<'a>(
    s: &mut Script,
    carried: &[MetaMap],
    loader: &'a dyn Loader,
    named: bool,
    problems: &mut Vec<MapProblem>,
) {
    let url = s.desc.url.clone();
    if s.desc.text.is_some() {
        s.summary.text = Some("trace");
    } else if let Some(t) = loader.script(&url).or_else(|| s.desc.source_url.as_deref().and_then(|u| loader.script(u)))
    {
        s.summary.text = Some("script-file");
        s.desc.text = Some(Arc::from(t));
    }
    if !s.from_trace {
        if let Some(su) = s.desc.text.as_deref().and_then(source_url_comment).filter(|su| *su == url) {
            s.desc.has_source_url = true;
            s.desc.source_url = Some(su.to_owned());
        }
        s.desc.map_url = s.desc.text.as_deref().and_then(source_mapping_url).map(str::to_owned);
    }
    let compiled = s.desc.compiled_url().to_owned();
    // Node's traces name a script by its path, which DevTools cannot resolve a map's URL
    // against (it attaches nothing): the map's URL is then made from the path's `file:` URL,
    // as if the script had been recorded by that URL (as `--cpu-prof` records it).
    let base = if compiled.starts_with('/') { format!("file://{compiled}") } else { compiled.clone() };
    let comment = s.desc.map_url.clone();
    let is_data = comment.as_deref().is_some_and(|c| c.starts_with("data:"));
    let resolved_comment = comment.as_deref().and_then(|c| complete_url(&compiled, c));
    // For a script named by its path, the comment against its `file:` URL (looked up last).
    let file_comment = comment.as_deref().filter(|_| resolved_comment.is_none()).and_then(|c| complete_url(&base, c));
    // Made only for a map found (a profile may name hundreds of thousands of scripts).
    let default_map_url = || {
        resolved_comment
            .clone()
            .or_else(|| file_comment.clone())
            .or_else(|| complete_url(&base, &format!("{}.map", file_name(&base))))
    };
    let read = |r: ReadMap<'a>| Ok(MapBytes::Later(r));
    let by_url = |u: &str| carried.iter().find(|m| m.url.as_deref() == Some(u));
    let mut found: Option<Found<'a>> = None;
    if let Some(bytes) = loader.map_for(&url).or_else(|| s.desc.source_url.as_deref().and_then(|u| loader.map_for(u))) {
        found = Some((read(bytes), default_map_url(), "map-file"));
    }
    if found.is_none() && is_data {
        let c = comment.as_deref().unwrap_or_default();
        let payload = data_url_payload(c).ok_or_else(|| "an inline map that is no data: URL".to_owned());
        let origin = if s.from_trace { "trace-rundown-data-url" } else { "script-data-url" };
        found = Some((payload.map(MapBytes::Read), Some(c.to_owned()), origin));
    }
    if found.is_none() && !is_data {
        if let Some(rc) = resolved_comment.as_deref() {
            if let Some(m) = carried.iter().find(|m| m.map_url.as_deref() == Some(rc)) {
                found =
                    Some((Ok(MapBytes::Carried(m.map.clone())), Some(rc.to_owned()), "trace-metadata-by-sourceMapUrl"));
            }
        }
    }
    if found.is_none() && s.desc.map_url_elided {
        if let Some(m) = by_url(&url) {
            let origin = "trace-metadata-by-url(elided data url)";
            found = Some((Ok(MapBytes::Carried(m.map.clone())), Some(CARRIED_MAP_URL.to_owned()), origin));
        }
    }
    if found.is_none() && !is_data {
        if let Some(rc) = resolved_comment.as_deref() {
            if let Some(bytes) = loader.map_at(rc) {
                found = Some((read(bytes), resolved_comment.clone(), "maps-dir-by-comment"));
            }
        }
    }
    if found.is_none() && !url.is_empty() {
        if let Some(bytes) = loader.map_at(&format!("{}.map", url.split(['?', '#']).next().unwrap_or(""))) {
            found = Some((read(bytes), default_map_url(), "maps-dir-by-name"));
        }
    }
    if found.is_none() && !is_data {
        if let Some(fc) = file_comment.as_deref() {
            if let Some(bytes) = loader.map_at(fc) {
                found = Some((read(bytes), file_comment.clone(), "maps-dir-by-comment"));
            }
        }
    }
    if found.is_none() && !url.is_empty() {
        if let Some(m) = by_url(&url) {
            let map_url = m.map_url.clone().filter(|u| !u.is_empty()).unwrap_or_else(|| CARRIED_MAP_URL.to_owned());
            found = Some((Ok(MapBytes::Carried(m.map.clone())), Some(map_url), "trace-metadata-by-url"));
        }
    }
    let Some((bytes, map_url, origin)) = found else { return };
    let problem = |what: String| MapProblem { script: url.clone(), what };
    let whole = loader.keeps_sources();
    let Some(map_url) = map_url else {
        // DevTools attaches nothing when the map's URL cannot be made absolute.
        problems.push(problem(format!("{origin}: no absolute URL for the map (the script's URL is no URL)")));
        return;
    };
    let read_map = || {
        bytes
            .map_err(|e| format!("{origin}: {e}"))
            .and_then(|b| {
                match b {
                    MapBytes::Read(b) => parse_text(&b, whole).map_err(|e| e.to_string()),
                    MapBytes::Later(read) => read().and_then(|b| parse_text(&b, whole).map_err(|e| e.to_string())),
                    MapBytes::Carried(raw) => parse_text(raw.get().as_bytes(), whole).map_err(|e| e.to_string()),
                }
                .map_err(|e| format!("{origin}: {e}"))
            })
            .and_then(|json| SourceMap::new(&compiled, &map_url, &json).map_err(|e| format!("{origin}: {e}")))
    };
    // The script's own scopes are found beside the map's reading (both take a while for a
    // large bundle), on a stack of their own; once the map is read, those found are made
    // original as they come, when a frame will be named by them.
    let (text, module) = (s.desc.text.clone(), s.desc.is_module);
    let sc = &*s;
    let (map, generated, made) = std::thread::scope(|scope| {
        let (tx, found) = std::sync::mpsc::channel();
        let parse = text.as_deref().and_then(|t| {
            let b = std::thread::Builder::new().name("jscalls-parse".into()).stack_size(scopes::PARSE_STACK);
            let send = move |some| drop(tx.send(some));
            b.spawn_scoped(scope, move || scopes::generated_each(t, module, &mut { send })).ok()
        });
        let map = read_map();
        let Some(parse) = parse else { return (map, None, None) };
        let mut made = None;
        let mut all = Vec::new();
        let eligible = map.as_ref().is_ok_and(|m| named && named_by_text(m));
        match (&map, sc.text_lines().filter(|_| eligible)) {
            (Ok(m), Some((_, lines))) => {
                let mut o = Originals::new(m, lines);
                found.iter().for_each(|some: Vec<Scope>| some.iter().for_each(|sc| o.add(sc)));
                made = Some(o);
            }
            _ => found.iter().for_each(|mut some| all.append(&mut some)),
        }
        let (generated, made) = match (parse.join(), made) {
            (Ok(Ok(())), Some(o)) => (None, Some(Ok(o.finish()))),
            (Ok(Ok(())), None) => (Some(Ok(all)), None),
            (Ok(Err(why)), Some(_)) => (None, Some(Err(why))),
            (Ok(Err(why)), None) => (Some(Err(why)), None),
            (Err(_), _) => (None, None),
        };
        (map, generated, made)
    });
    s.generated = generated;
    s.made_ast.set(made);
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
            if let Some(t) = s.desc.text.as_deref() {
                let lines = memchr::memchr_iter(b'\n', t.as_bytes()).count() as i64 + 1;
                if m.last_line() >= lines {
                    problems.push(problem(format!(
                        "{origin}: its mappings reach line {}, past the script's {lines} lines: is it the map of another build?",
                        m.last_line() + 1
                    )));
                }
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
        // The last comment that ends its line, whatever follows it.
        assert_eq!(source_mapping_url("//# sourceMappingURL=a.map //# sourceMappingURL=b.map\r\n"), Some("b.map"));
        assert_eq!(source_mapping_url("//# sourceMappingURL=a.map\nx('sourceMappingURL')\n"), Some("a.map"));
        assert_eq!(source_mapping_url("é//# sourceMappingURL=ü.map\t*/ x\n//# sourceMappingURL=\n"), None);
        assert_eq!(source_mapping_url("é /*# sourceMappingURL=ü.map */ \n//# sourceMappingURL=\n"), Some("ü.map"));
    }

    #[test]
    fn data_urls_decode() {
        assert_eq!(data_url_payload("data:application/json;base64,eyJhIjoxfQ==").unwrap(), br#"{"a":1}"#);
        assert_eq!(data_url_payload("data:application/json,%7B%22a%22%3A1%7D").unwrap(), br#"{"a":1}"#);
    }
}
