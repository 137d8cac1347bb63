//! Time per line, as DevTools' Sources panel shows it in its gutter once a trace or a
//! `.cpuprofile` is loaded (`LineLevelProfile.ts`: `appendCPUProfile`,
//! `appendLegacyCPUProfile`, `Helper.addLineData`), with the same floating-point operations in
//! the same order.
//!
//! - With a `lines` array (every trace's profile has one; a `.cpuprofile` when it has the
//!   field): sample `i ≥ 1` adds `timestamps[i] − timestamps[i−1]` (ms) to (its script, line
//!   `lines[i]`). `lines` keeps its recorded order while the samples are sorted by time, so a
//!   line can go with another sample's node, as in DevTools. A falsy line, a sample without
//!   node and a node without script id or URL add nothing.
//! - Without: each node's `positionTicks` add `ticks × (end − start) / totalHitCount`, keyed by
//!   its URL.
//!
//! A script is its id when `Number(scriptId)` is non-zero, else its URL. DevTools sums every
//! profile into one table ([`LineTimes::merged`], profiles in its order); each profile's own
//! sums are kept too.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use crate::input::InputKind;
use crate::js::{write_json_string, write_number as write_js_number};

use crate::js::{string_to_number, Scalar};
use crate::model::profile::{CallFrame, ProfileModel, NONE};
use crate::model::ThreadWork;
use crate::strings::Strings;

/// Which of DevTools' two ways a profile's line times came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinePath {
    /// The samples and their `lines`.
    Lines,
    /// The nodes' `positionTicks` (a `.cpuprofile` without `lines`).
    PositionTicks,
}

impl LinePath {
    /// `lines` or `positionTicks`, as DevTools' oracle names them.
    pub fn as_str(self) -> &'static str {
        match self {
            LinePath::Lines => "lines",
            LinePath::PositionTicks => "positionTicks",
        }
    }
}

/// What identifies a script: its id, or its URL when the id is not a non-zero number.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptKey {
    /// `Number(scriptId)`.
    Id(f64),
    /// The URL.
    Url(String),
}

impl ScriptKey {
    /// Ids first, ascending; then URLs in JavaScript's string order (UTF-16 code units).
    pub fn cmp_js(&self, other: &ScriptKey) -> std::cmp::Ordering {
        match (self, other) {
            (ScriptKey::Id(a), ScriptKey::Id(b)) => a.total_cmp(b),
            (ScriptKey::Id(_), ScriptKey::Url(_)) => std::cmp::Ordering::Less,
            (ScriptKey::Url(_), ScriptKey::Id(_)) => std::cmp::Ordering::Greater,
            (ScriptKey::Url(a), ScriptKey::Url(b)) => a.encode_utf16().cmp(b.encode_utf16()),
        }
    }
}

/// The time of one line of one script.
#[derive(Debug, Clone)]
pub struct LineRow {
    /// The script.
    pub key: ScriptKey,
    /// Its URL (for an id: the first, in string order, of the URLs its nodes have).
    pub url: String,
    /// All its nodes' URLs, when there are several.
    pub urls: Vec<String>,
    /// The line, 1-based.
    pub line: f64,
    /// The column, 1-based, when the times are by column ([`crate::Assembled::line_times_of`]; 0:
    /// the samples recorded none).
    pub column: Option<f64>,
    /// ms.
    pub ms: f64,
    /// How many additions made it (samples, or `positionTicks` entries).
    pub n: u64,
    /// The function that spent the most of it there.
    pub function: String,
}

/// One profile's line times and how they were found.
#[derive(Debug, Clone)]
pub struct ProfileLines {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// The profile's id, as JSON.
    pub profile_id: String,
    /// The thread's name, when the recording names it.
    pub thread_name: Option<String>,
    /// Its place in DevTools' order of profiles.
    pub order: u32,
    /// Lines or positionTicks.
    pub path: LinePath,
    /// Samples in the profile.
    pub samples: usize,
    /// Additions made.
    pub added: u64,
    /// Samples with no line (0, or past the end of `lines`).
    pub skipped_no_line: u64,
    /// Samples with a line but no node.
    pub skipped_no_node: u64,
    /// Samples whose node has neither a script id nor a URL.
    pub skipped_no_key: u64,
    /// Samples whose line is not a number (DevTools would key them by the value itself).
    pub bad_lines: u64,
    /// `positionTicks` path: nodes with a URL and ticks.
    pub nodes_with_ticks: u64,
    /// `positionTicks` path: the profile's `totalHitCount`.
    pub total_hit_count: f64,
    /// `positionTicks` path: ms a tick.
    pub sample_duration: f64,
    /// `positionTicks` entries whose line or ticks are not numbers (skipped).
    pub bad_ticks: u64,
    /// Additions a source map moved to their original line ([`crate::Assembled::original_line_times`]).
    pub mapped: u64,
    /// Of those, the ones whose sample recorded no column (mapped from their line's start).
    pub mapped_without_column: u64,
    /// The rows, by script then line.
    pub rows: Vec<LineRow>,
    /// The sum of every addition, in order, ms.
    pub sum_ms: f64,
    /// Each addition, in order.
    additions: Vec<Addition>,
}

/// One addition of DevTools' (`addLineData`): time at a line of a script.
#[derive(Debug, Clone, Copy)]
struct Addition {
    /// The script (an index into [`LineTimes::keys`]).
    key: u32,
    /// 1-based, as recorded.
    line: f64,
    /// 1-based, as recorded (0: none).
    column: f64,
    ms: f64,
    /// The function of the sample (an index into [`LineTimes::functions`]).
    function: u32,
}

/// Every profile's line times, and the sums DevTools shows.
#[derive(Debug, Clone)]
pub struct LineTimes {
    /// Per profile, by (pid, tid).
    pub profiles: Vec<ProfileLines>,
    /// All profiles summed into one table, in DevTools' order: what the Sources panel shows.
    pub merged: Vec<LineRow>,
    /// The scripts and functions the additions refer to.
    keys: Vec<ScriptKey>,
    functions: Vec<String>,
}

/// A key's URL label and, when its nodes have several, all of them.
type Labels = FxHashMap<u32, (String, Vec<String>)>;

/// One function's lines in one profile: what a listing of its source shows.
#[derive(Debug, Clone)]
pub struct FunctionLines {
    /// Its script.
    pub key: ScriptKey,
    /// The script's URL (as the profile's rows label it).
    pub url: String,
    /// The function's name.
    pub function: String,
    /// Its lines' time, ms.
    pub ms: f64,
    /// (line, ms) of each of its lines, by line.
    pub lines: Vec<(f64, f64)>,
}

/// Interned scripts and functions shared by the profiles.
#[derive(Default)]
struct Tables {
    keys: Vec<ScriptKey>,
    key_index: FxHashMap<KeyBits, u32>,
    /// The functions' names, by index.
    functions: Vec<String>,
    function_index: FxHashMap<String, u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyBits {
    Id(u64),
    Url(String),
}

impl Tables {
    fn key(&mut self, k: ScriptKey) -> u32 {
        let bits = match &k {
            // SameValueZero: -0 is 0 (never a key: 0 is falsy), every NaN is one.
            ScriptKey::Id(n) => KeyBits::Id(if n.is_nan() { f64::NAN.to_bits() } else { n.to_bits() }),
            ScriptKey::Url(s) => KeyBits::Url(s.clone()),
        };
        let next = self.keys.len() as u32;
        *self.key_index.entry(bits).or_insert_with(|| {
            self.keys.push(k);
            next
        })
    }

    fn function(&mut self, name: String) -> u32 {
        let next = self.functions.len() as u32;
        *self.function_index.entry(name.clone()).or_insert_with(|| {
            self.functions.push(name);
            next
        })
    }
}

/// `Number(x)` for a frame's field.
fn js_number(s: Scalar, strings: &Strings) -> f64 {
    match s {
        Scalar::Str(id) => string_to_number(strings.get(id)),
        Scalar::Num(n) => n,
        Scalar::Null => 0.0,
        Scalar::Bool(b) => f64::from(u8::from(b)),
        Scalar::Undefined => f64::NAN,
    }
}

/// The name a frame's function is shown by: its original name once source maps apply.
fn function_name(f: &CallFrame, strings: &Strings) -> String {
    match f.original.as_ref().and_then(|o| o.name) {
        Some(name) => strings.get(name).to_owned(),
        None => f.function_name.to_js_string(strings),
    }
}

/// `Number(node.scriptId) || node.url`.
fn key_of(f: &CallFrame, strings: &Strings) -> Option<ScriptKey> {
    let id = js_number(f.script_id, strings);
    if id != 0.0 && !id.is_nan() {
        return Some(ScriptKey::Id(id));
    }
    url_key(f.url, strings)
}

/// A truthy URL as a key.
fn url_key(url: Scalar, strings: &Strings) -> Option<ScriptKey> {
    match url {
        Scalar::Str(s) if !strings.get(s).is_empty() => Some(ScriptKey::Url(strings.get(s).to_owned())),
        Scalar::Num(n) if n != 0.0 && !n.is_nan() => Some(ScriptKey::Id(n)),
        Scalar::Bool(true) => Some(ScriptKey::Url("true".to_owned())),
        _ => None,
    }
}

/// A line value as a map key: SameValueZero.
fn line_bits(line: f64) -> u64 {
    if line == 0.0 {
        0
    } else if line.is_nan() {
        f64::NAN.to_bits()
    } else {
        line.to_bits()
    }
}

/// The URLs of each script id among a profile's parsed nodes (`node.url ?? ''`).
fn urls_by_script(m: &ProfileModel, strings: &Strings, into: &mut FxHashMap<u64, Vec<String>>) {
    let mut seen = vec![false; m.frames.len()];
    for n in &m.nodes {
        let f = n.frame as usize;
        if std::mem::replace(&mut seen[f], true) {
            continue;
        }
        let frame = &m.frames[f];
        let id = js_number(frame.script_id, strings);
        if id == 0.0 || id.is_nan() {
            continue;
        }
        let url = match frame.url {
            Scalar::Undefined | Scalar::Null => String::new(),
            u => u.to_js_string(strings),
        };
        let list = into.entry(id.to_bits()).or_default();
        if !list.contains(&url) {
            list.push(url);
        }
    }
}

fn sort_js(v: &mut [String]) {
    v.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
}

impl LineTimes {
    /// The functions of profile `k` (an index into [`LineTimes::profiles`]) with their lines,
    /// most time first: a line's time goes to the function of the sample that added it.
    pub fn functions_of(&self, k: usize) -> Vec<FunctionLines> {
        let p = &self.profiles[k];
        let mut by: FxHashMap<(u32, u32), FxHashMap<u64, (f64, f64)>> = FxHashMap::default();
        for a in &p.additions {
            let e = by.entry((a.key, a.function)).or_default().entry(line_bits(a.line)).or_insert((a.line, 0.0));
            e.1 += a.ms;
        }
        let mut out: Vec<FunctionLines> = by
            .into_iter()
            .map(|((key, function), lines)| {
                let key = self.keys[key as usize].clone();
                let url = p.rows.iter().find(|r| r.key == key).map_or_else(String::new, |r| r.url.clone());
                let mut lines: Vec<(f64, f64)> = lines.into_values().collect();
                lines.sort_by(|a, b| a.0.total_cmp(&b.0));
                let ms = lines.iter().fold(0.0, |s, l| s + l.1);
                FunctionLines { key, url, function: self.functions[function as usize].clone(), ms, lines }
            })
            .collect();
        out.sort_by(|a, b| {
            b.ms.total_cmp(&a.ms).then_with(|| a.key.cmp_js(&b.key)).then_with(|| a.function.cmp(&b.function))
        });
        out
    }

    /// The line times of every profile of an input, as DevTools computes them.
    /// With `original`, each line at the place source maps gave it (when they did); with
    /// `by_column`, rows by line and column, as the newest DevTools keys them.
    pub(crate) fn of(
        threads: &[ThreadWork],
        strings: &Strings,
        original: bool,
        by_column: bool,
        window: Option<(f64, f64)>,
    ) -> LineTimes {
        let mut tables = Tables::default();
        let mut profiles: Vec<ProfileLines> =
            threads.iter().map(|t| profile_lines(t, strings, &mut tables, original, window)).collect();
        let mut merged_urls: FxHashMap<u64, Vec<String>> = FxHashMap::default();
        for t in threads {
            urls_by_script(&t.model, strings, &mut merged_urls);
        }
        for (p, t) in profiles.iter_mut().zip(threads) {
            let mut urls = FxHashMap::default();
            urls_by_script(&t.model, strings, &mut urls);
            p.rows = rows(&[&*p], &tables.keys, &tables.functions, &key_labels(&tables.keys, &urls), by_column);
        }
        let merged_labels = key_labels(&tables.keys, &merged_urls);
        let mut in_order: Vec<&ProfileLines> = profiles.iter().collect();
        in_order.sort_by_key(|p| p.order);
        let merged = rows(&in_order, &tables.keys, &tables.functions, &merged_labels, by_column);
        profiles.sort_by_key(|p| (p.pid, p.tid));
        LineTimes { profiles, merged, keys: tables.keys, functions: tables.functions }
    }
}

impl ProfileLines {
    /// `a` at the original place `o` (URL, line, column), keyed by the URL.
    fn moved(
        &mut self,
        a: &mut Addition,
        o: (crate::strings::StrId, f64, f64),
        strings: &Strings,
        tables: &mut Tables,
    ) {
        self.mapped += 1;
        a.key = tables.key(ScriptKey::Url(strings.get(o.0).to_owned()));
        (a.line, a.column) = (o.1, o.2);
    }
}

/// One profile's additions, in DevTools' order.
fn profile_lines(
    t: &ThreadWork,
    strings: &Strings,
    tables: &mut Tables,
    original: bool,
    window: Option<(f64, f64)>,
) -> ProfileLines {
    let m = &t.model;
    let mut p = ProfileLines {
        pid: t.pid,
        tid: t.tid,
        profile_id: t.profile_id.clone(),
        thread_name: t.thread_name.clone(),
        order: t.profile_order,
        path: if m.lines.is_some() { LinePath::Lines } else { LinePath::PositionTicks },
        samples: m.n_samples(),
        added: 0,
        skipped_no_line: 0,
        skipped_no_node: 0,
        skipped_no_key: 0,
        bad_lines: 0,
        nodes_with_ticks: 0,
        total_hit_count: f64::NAN,
        sample_duration: f64::NAN,
        bad_ticks: 0,
        mapped: 0,
        mapped_without_column: 0,
        rows: Vec::new(),
        sum_ms: 0.0,
        additions: Vec::new(),
    };
    // The script key and function of each frame, found once.
    let mut frame_key: Vec<Option<Option<(u32, u32)>>> = vec![None; m.frames.len()];
    let mut key_of_node = |node: u32, tables: &mut Tables| {
        let f = m.nodes[node as usize].frame as usize;
        *frame_key[f].get_or_insert_with(|| {
            let frame = &m.frames[f];
            let key = key_of(frame, strings)?;
            Some((tables.key(key), tables.function(function_name(frame, strings))))
        })
    };
    let origins = m.line_origins.as_ref().filter(|_| original);
    match &m.lines {
        Some(lines) => {
            let times: Vec<f64> = m.sample_times().collect();
            let mut lines = lines.iter();
            lines.next();
            let mut columns = m.columns.as_ref().map(|c| c.iter());
            if let Some(c) = columns.as_mut() {
                c.next();
            }
            for i in 1..p.samples {
                let line = lines.next().unwrap_or(0.0);
                let column = columns.as_mut().and_then(Iterator::next).unwrap_or(0.0);
                if line.is_nan() {
                    p.bad_lines += 1;
                    continue;
                }
                if line == 0.0 {
                    p.skipped_no_line += 1;
                    continue;
                }
                let node = m.sample_nodes[i];
                if node == NONE {
                    p.skipped_no_node += 1;
                    continue;
                }
                let Some((key, function)) = key_of_node(m.line_node(node), tables) else {
                    p.skipped_no_key += 1;
                    continue;
                };
                let ms = match window {
                    None => times[i] - times[i - 1],
                    // The sample's interval, its part inside the window (µs; the times are ms).
                    Some((lo, hi)) => {
                        let part = times[i].min(hi / 1000.0) - times[i - 1].max(lo / 1000.0);
                        if part <= 0.0 {
                            continue;
                        }
                        part
                    }
                };
                let mut a = Addition { key, line, column, ms, function };
                if let Some(o) = origins.and_then(|o| o.lines.get(i).copied().flatten()) {
                    p.mapped_without_column += u64::from(column < 1.0 || column.is_nan());
                    p.moved(&mut a, o, strings, tables);
                }
                p.additions.push(a);
            }
        }
        // Position ticks have no times: nothing of them lies in a window.
        None if window.is_some() => {}
        None => {
            let duration = (m.profile_end - m.profile_start) / m.total_hit_count;
            p.total_hit_count = m.total_hit_count;
            p.sample_duration = duration;
            // The parsed tree's children in order; the walk pops the last pushed node first.
            let mut first_child = vec![NONE; m.nodes.len()];
            let mut next_sibling = vec![NONE; m.nodes.len()];
            for k in (1..m.nodes.len()).rev() {
                let parent = m.nodes[k].parent as usize;
                next_sibling[k] = first_child[parent];
                first_child[parent] = k as u32;
            }
            // Each node's entries, with their place in `position_ticks` (as origins has them).
            type Entries<'a> = (usize, &'a [(f64, f64)]);
            let ticks: FxHashMap<u32, Entries<'_>> =
                m.position_ticks.iter().enumerate().map(|(k, (n, t))| (*n, (k, &t[..]))).collect();
            let mut todo = vec![0u32];
            while let Some(n) = todo.pop() {
                let mut c = first_child[n as usize];
                while c != NONE {
                    todo.push(c);
                    let frame = m.frame(c);
                    if let (Some(key), Some(&(slot, entries))) = (url_key(frame.url, strings), ticks.get(&c)) {
                        p.nodes_with_ticks += 1;
                        let key = tables.key(key);
                        let function = tables.function(function_name(frame, strings));
                        for (e, &(line, n_ticks)) in entries.iter().enumerate() {
                            if line.is_nan() || n_ticks.is_nan() {
                                p.bad_ticks += 1;
                                continue;
                            }
                            let ms = n_ticks * duration;
                            let mut a = Addition { key, line, column: 0.0, ms, function };
                            let origin = origins.and_then(|o| o.ticks.get(slot)?.get(e).copied().flatten());
                            if let Some(o) = origin {
                                p.mapped_without_column += 1;
                                p.moved(&mut a, o, strings, tables);
                            }
                            p.additions.push(a);
                        }
                    }
                    c = next_sibling[c as usize];
                }
            }
        }
    }
    p.added = p.additions.len() as u64;
    p.sum_ms = p.additions.iter().fold(0.0, |s, a| s + a.ms);
    p
}

/// Each key's URL label: a URL key's own; an id's first URL (in string order) among its
/// nodes', with all of them when there are several.
fn key_labels(keys: &[ScriptKey], urls: &FxHashMap<u64, Vec<String>>) -> Labels {
    keys.iter()
        .enumerate()
        .map(|(k, key)| {
            let label = match key {
                ScriptKey::Url(u) => (u.clone(), Vec::new()),
                ScriptKey::Id(id) => {
                    let mut list = urls.get(&id.to_bits()).cloned().unwrap_or_default();
                    sort_js(&mut list);
                    let url = list.first().cloned().unwrap_or_default();
                    (url, if list.len() > 1 { list } else { Vec::new() })
                }
            };
            (k as u32, label)
        })
        .collect()
}

/// The rows of `profiles` summed in the given order (`(get(line) || 0) + data`), by script and
/// line (and column).
fn rows(
    profiles: &[&ProfileLines],
    keys: &[ScriptKey],
    functions: &[String],
    labels: &Labels,
    by_column: bool,
) -> Vec<LineRow> {
    struct Sum {
        line: f64,
        column: Option<f64>,
        ms: f64,
        n: u64,
        /// ms per function.
        functions: Vec<(u32, f64)>,
    }
    let mut sums: FxHashMap<(u32, u64, u64), Sum> = FxHashMap::default();
    for p in profiles {
        for a in &p.additions {
            let column = by_column.then_some(a.column);
            let e = sums.entry((a.key, line_bits(a.line), column.map_or(0, line_bits))).or_insert(Sum {
                line: a.line,
                column,
                ms: 0.0,
                n: 0,
                functions: Vec::new(),
            });
            e.ms += a.ms;
            e.n += 1;
            match e.functions.iter_mut().find(|f| f.0 == a.function) {
                Some(f) => f.1 += a.ms,
                None => e.functions.push((a.function, a.ms)),
            }
        }
    }
    let mut out: Vec<LineRow> = sums
        .into_iter()
        .map(|((key, _, _), Sum { line, column, ms, n, functions: by })| {
            let k = keys[key as usize].clone();
            let (url, urls) = labels.get(&key).cloned().unwrap_or_default();
            // The function with the most time; the first seen among equals.
            let best = by.iter().fold(None::<(u32, f64)>, |b, &f| match b {
                Some(b) if b.1 >= f.1 => Some(b),
                _ => Some(f),
            });
            let function = best.map_or_else(String::new, |f| functions[f.0 as usize].clone());
            LineRow { key: k, url, urls, line, column, ms, n, function }
        })
        .collect();
    out.sort_by(|a, b| {
        a.key
            .cmp_js(&b.key)
            .then(a.line.total_cmp(&b.line))
            .then(a.column.unwrap_or(0.0).total_cmp(&b.column.unwrap_or(0.0)))
    });
    out
}

/// Appends `n` as the oracle writes a number: as `JSON.stringify` does, and what JSON cannot
/// hold (NaN, infinities) as a string.
fn write_number(out: &mut String, n: f64) {
    if n.is_finite() {
        write_js_number(out, n);
    } else {
        let _ = write!(
            out,
            "\"{}\"",
            if n.is_nan() {
                "NaN"
            } else if n > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            }
        );
    }
}

fn push_str(out: &mut String, s: &str) {
    write_json_string(out, s);
}

fn push_num(out: &mut String, n: f64) {
    write_number(out, n);
}

fn push_key(out: &mut String, k: &ScriptKey) {
    match k {
        ScriptKey::Id(n) => push_num(out, *n),
        ScriptKey::Url(u) => push_str(out, u),
    }
}

/// `{…, "key":…, "url":…, ["urls":[…],] "line":…, "ms":…, "n":…}`, after `prefix`.
fn devtools_row(out: &mut String, prefix: &str, r: &LineRow) {
    out.push('{');
    out.push_str(prefix);
    out.push_str("\"key\":");
    push_key(out, &r.key);
    out.push_str(",\"url\":");
    push_str(out, &r.url);
    if !r.urls.is_empty() {
        out.push_str(",\"urls\":[");
        for (i, u) in r.urls.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_str(out, u);
        }
        out.push(']');
    }
    out.push_str(",\"line\":");
    push_num(out, r.line);
    out.push_str(",\"ms\":");
    push_num(out, r.ms);
    let _ = write!(out, ",\"n\":{}}}", r.n);
}

impl LineTimes {
    /// The DevTools oracle's `devtools-lines/1` document (`oracle.mjs INPUT --lines`), one row
    /// per line: what `compare-lines.mjs` compares. `input` names the input file.
    pub fn devtools_document(&self, input: &str, kind: InputKind) -> String {
        let mut out =
            String::from("{\n\"format\":\"devtools-lines/1\",\n\"engine\":\"@paulirish/trace_engine@0.0.65\",\n");
        out.push_str("\"input\":");
        push_str(&mut out, input.rsplit('/').next().unwrap_or(input));
        let (kind, mode) = if kind == InputKind::CpuProfile { ("cpuprofile", "devtools") } else { ("trace", "trace") };
        let _ = write!(out, ",\n\"kind\":\"{kind}\",\n\"mode\":\"{mode}\",\n");
        if kind == "cpuprofile" {
            out.push_str("\"dataOrigin\":\"CPUProfile\",\n");
        }
        out.push_str("\"units\":\"ms\",\n\"source\":\"front_end/ui/legacy/components/perf_ui/LineLevelProfile.ts + panels/timeline/TimelinePanel.ts (devtools-frontend ab6b6d7, 2025-09-10)\",\n");
        out.push_str("\"sort\":\"profiles/lines: pid,tid; lines/merged: key (numbers, then strings), line\",\n");
        out.push_str("\"profiles\":[\n");
        for (i, p) in self.profiles.iter().enumerate() {
            if i > 0 {
                out.push_str(",\n");
            }
            let _ = write!(
                out,
                "{{\"order\":{},\"pid\":{},\"tid\":{},\"profileId\":{},\"path\":\"{}\",\"samples\":{},\"added\":{},\"rows\":{},\"sumMs\":",
                p.order,
                p.pid,
                p.tid,
                p.profile_id,
                p.path.as_str(),
                p.samples,
                p.added,
                p.rows.len()
            );
            push_num(&mut out, p.sum_ms);
            match p.path {
                LinePath::Lines => {
                    let _ = write!(
                        out,
                        ",\"skippedNoLine\":{},\"skippedNoNode\":{},\"skippedNoKey\":{}}}",
                        p.skipped_no_line, p.skipped_no_node, p.skipped_no_key
                    );
                }
                LinePath::PositionTicks => {
                    let _ = write!(out, ",\"nodesWithTicks\":{},\"totalHitCount\":", p.nodes_with_ticks);
                    push_num(&mut out, p.total_hit_count);
                    out.push_str(",\"sampleDuration\":");
                    push_num(&mut out, p.sample_duration);
                    out.push('}');
                }
            }
        }
        out.push_str("\n],\n\"lines\":[\n");
        let mut first = true;
        for p in &self.profiles {
            let prefix = format!("\"pid\":{},\"tid\":{},\"profileId\":{},", p.pid, p.tid, p.profile_id);
            for r in &p.rows {
                if !std::mem::take(&mut first) {
                    out.push_str(",\n");
                }
                devtools_row(&mut out, &prefix, r);
            }
        }
        out.push_str("\n],\n\"merged\":[\n");
        for (i, r) in self.merged.iter().enumerate() {
            if i > 0 {
                out.push_str(",\n");
            }
            devtools_row(&mut out, "", r);
        }
        out.push_str("\n]\n}\n");
        out
    }
}

mod original;
pub(crate) use original::SampledPositions;
