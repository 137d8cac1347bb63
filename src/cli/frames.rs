//! `jscalls frames`: each call frame's name and original place as DevTools shows them once
//! source maps apply, with where each script's map came from; `--format smoracle` writes the
//! source-map oracle's own document, so its `compare.mjs` checks jscalls directly.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;

use jscalls::sourcemap::{self, FrameKey, Loader, Resolution};
use jscalls::{Config, Error, InputKind};

use super::args::{FramesArgs, FramesFormat, Global, SourceMapArgs};

use super::each::{self, Estimated, PerInput};
use super::files::{read_option_file, Reads};
use super::output::Output;
use super::report::failure;
use super::sources::SourceDirs;
use super::Failed;

/// The largest map or script read (a larger one is a warning, its frames keep their names).
const MAP_LIMIT: u64 = 256 << 20;

/// The maps and scripts the user gave: `--source-map`, `--script`, `--source-maps`.
pub(crate) struct UserMaps {
    maps: Vec<(String, PathBuf)>,
    scripts: Vec<(String, PathBuf)>,
    dirs: Option<SourceDirs>,
    /// The command shows original sources: keep the maps' `sourcesContent`.
    pub(crate) keep_sources: bool,
}

impl UserMaps {
    /// The options' files and folders; a malformed pair or a missing folder is a usage error.
    pub(crate) fn new(args: &SourceMapArgs) -> Result<UserMaps, Failed> {
        let pairs = |specs: &[String], flag: &str| -> Result<Vec<(String, PathBuf)>, Failed> {
            specs
                .iter()
                .map(|s| match s.rsplit_once('=') {
                    Some((u, f)) if !u.is_empty() && !f.is_empty() => Ok((u.to_owned(), PathBuf::from(f))),
                    _ => Err(Failed::Usage(format!("{flag} '{s}': expected URL=FILE"))),
                })
                .collect()
        };
        let dirs = (!args.dirs.is_empty()).then(|| SourceDirs::new(&args.dirs, "--source-maps")).transpose();
        let (maps, scripts) = (pairs(&args.maps, "--source-map")?, pairs(&args.scripts, "--script")?);
        // A file named on the command line is there before any work.
        for (flag, (url, path)) in
            maps.iter().map(|m| ("--source-map", m)).chain(scripts.iter().map(|s| ("--script", s)))
        {
            if !path.exists() {
                return Err(Failed::Usage(format!("{flag} {url}={}: no such file", path.display())));
            }
        }
        Ok(UserMaps { maps, scripts, dirs: dirs.map_err(Failed::Usage)?, keep_sources: false })
    }

    /// Notes the maps and scripts given by name as files the command reads.
    pub(crate) fn note_reads(&self, reads: &mut Reads) {
        for (url, path) in &self.maps {
            reads.add(path, &format!("the source map of {url}"));
        }
        for (url, path) in &self.scripts {
            reads.add(path, &format!("the script {url}"));
        }
    }

    /// The maps to apply to each input: the user's, and a trace's own (None with
    /// `--no-source-maps`).
    pub(crate) fn wanted(args: &SourceMapArgs) -> Result<Option<UserMaps>, Failed> {
        if args.no_source_maps {
            Ok(None)
        } else {
            UserMaps::new(args).map(Some)
        }
    }

    /// No maps, scripts or folders.
    pub(crate) fn none() -> UserMaps {
        UserMaps { maps: Vec::new(), scripts: Vec::new(), dirs: None, keep_sources: false }
    }

    /// Whether the user gave no map, script or folder.
    fn is_empty(&self) -> bool {
        self.maps.is_empty() && self.scripts.is_empty() && self.dirs.is_none()
    }

    fn read(path: &std::path::Path, what: &str) -> Result<Vec<u8>, String> {
        read_option_file(path, what, MAP_LIMIT).map_err(|e| e.to_string())
    }
}

impl Loader for UserMaps {
    fn keeps_sources(&self) -> bool {
        self.keep_sources
    }

    fn script(&self, url: &str) -> Option<String> {
        let path = match self.scripts.iter().find(|(u, _)| u == url) {
            Some((_, p)) => p.clone(),
            None => self.dirs.as_ref()?.find(url)?,
        };
        let bytes = Self::read(&path, "the script").ok()?;
        Some(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    fn map_for(&self, url: &str) -> Option<Box<dyn FnOnce() -> Result<Vec<u8>, String> + '_>> {
        let (_, path) = self.maps.iter().find(|(u, _)| u == url)?;
        Some(Box::new(|| Self::read(path, "the source map")))
    }

    fn map_at(&self, url: &str) -> Option<Box<dyn FnOnce() -> Result<Vec<u8>, String> + '_>> {
        let dirs = self.dirs.as_ref()?;
        // The map, else its gzipped copy; else the first entry of either name that is no file.
        let found = match dirs.find_entry(url) {
            Ok(Some(path)) => Ok(Some(path)),
            plain => match dirs.find_entry(&format!("{url}.gz")) {
                Ok(Some(gz)) => Ok(Some(gz)),
                gz => plain.and(gz),
            },
        };
        match found {
            Ok(Some(path)) => Some(Box::new(move || Self::read(&path, "the source map"))),
            Err(other) => Some(Box::new(move || {
                Err(format!("{} is not a regular file (a FIFO, socket, device or folder): not read", other.display()))
            })),
            Ok(None) => None,
        }
    }
}

struct Frames<'a> {
    args: &'a FramesArgs,
    maps: Option<UserMaps>,
    strict: bool,
}

impl PerInput for Frames<'_> {
    fn suffix(&self) -> &'static str {
        match self.args.format {
            FramesFormat::Text => ".frames.txt",
            FramesFormat::Json => ".frames.json",
            FramesFormat::Smoracle => ".smoracle.json",
        }
    }

    fn shares_stdout(&self) -> bool {
        true
    }

    fn applies_source_maps(&self) -> bool {
        // It resolves the recorded frames itself, to show both.
        false
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, label, name, .. } = e;
        let none = UserMaps::none();
        let res = assembled.resolve_source_maps(self.maps.as_ref().unwrap_or(&none));
        for p in &res.problems {
            say!("jscalls: warning: {name}: the map of {}: {}", p.script, p.what);
        }
        if self.strict && !res.problems.is_empty() {
            say!("jscalls: error: {name}: {} source map(s) could not be used and --strict is set", res.problems.len());
            return Err(Failed::Reported);
        }
        let kind = assembled.kind();
        let text = match self.args.format {
            FramesFormat::Smoracle => smoracle(&res, label, kind),
            FramesFormat::Json => json(&res, label),
            FramesFormat::Text => text(&res),
        };
        output
            .write(|w| w.write_all(text.as_bytes()).map_err(|err| Error::io("cannot write the frames", err)))
            .map_err(|err| failure(name, err))
    }
}

/// Applies `maps` and the trace's own to an input's frames; each map that cannot be used is a
/// warning (with `--strict`, an error), and the frames it would have named keep their recorded
/// names. Says whether there was anything to apply: without either, nothing is done or said.
pub(crate) fn apply(
    assembled: &mut jscalls::Assembled,
    maps: &UserMaps,
    name: &str,
    global: &Global,
) -> Result<bool, Failed> {
    if maps.is_empty() && !assembled.embedded().has_maps() {
        return Ok(false);
    }
    let res = assembled.apply_source_maps(maps);
    if !global.quiet {
        for p in &res.problems {
            say!("jscalls: warning: {name}: the map of {}: {}", p.script, p.what);
        }
    }
    if global.strict && !res.problems.is_empty() {
        say!("jscalls: error: {name}: {} source map(s) could not be used and --strict is set", res.problems.len());
        return Err(Failed::Reported);
    }
    // What the maps did, so that a map that matched nothing is not silent.
    if !global.quiet {
        let (named, placed, mapped) = (res.renamed(), res.placed(), res.mapped_scripts());
        let without: Vec<Cow<str>> = res.scripts.iter().filter(|s| s.map.is_none()).map(script_label).collect();
        let shown: Vec<&str> = without.iter().take(3).map(|s| &**s).collect();
        let more = if without.len() > 3 { format!(", … {} more", without.len() - 3) } else { String::new() };
        let list = if without.is_empty() { String::new() } else { format!(" (without: {}{more})", shown.join(", ")) };
        say!(
            "jscalls: {name}: source maps: {named} of {} frames renamed, {placed} placed; {mapped} of {} scripts have a map{list}",
            res.frames.len(),
            res.scripts.len()
        );
    }
    Ok(true)
}

pub(crate) fn run(args: &FramesArgs, global: &Global, cfg: &Config, reads: Reads) -> Result<(), Failed> {
    super::no_bounds(global, "frames")?;
    let maps = UserMaps::wanted(&global.source_maps)?;
    each::run(&args.out, &Frames { args, maps, strict: global.strict }, global, cfg, reads)
}

fn push_str(out: &mut String, s: &str) {
    jscalls::tree::write_json_str(out, s);
}

fn push_opt(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => push_str(out, s),
        None => out.push_str("null"),
    }
}

/// A script and where its text and map came from, its map's URL under `map_key`.
fn push_script(out: &mut String, s: &sourcemap::ScriptSummary, map_key: &str) {
    out.push_str("{\"url\":");
    push_str(out, &s.url);
    out.push_str(",\"scriptId\":");
    push_str(out, &s.script_id);
    if let Some(isolate) = &s.isolate {
        out.push_str(",\"isolate\":");
        push_str(out, isolate);
    }
    let _ = write!(out, ",\"pid\":{},\"text\":", s.pid);
    push_opt(out, s.text);
    out.push_str(",\"map\":");
    push_opt(out, s.map);
    let _ = write!(out, ",\"{map_key}\":");
    push_opt(out, s.map_url.as_deref());
    out.push('}');
}

/// A line or column as the oracle writes it: a trace's missing one as -1 (as DevTools'
/// SamplesHandler normalises it), a `.cpuprofile`'s as null.
fn push_pos(out: &mut String, v: Option<i64>, kind: InputKind) {
    match (v, kind) {
        (Some(v), _) => {
            let _ = write!(out, "{v}");
        }
        (None, InputKind::Trace) => out.push_str("-1"),
        (None, _) => out.push_str("null"),
    }
}

/// JavaScript's order of the oracle's rows: url, scriptId (numerically when both are
/// numbers), line, column, name.
fn oracle_order(res: &Resolution) -> Vec<(&FrameKey, &sourcemap::Resolved)> {
    let mut rows: Vec<_> = res.frames.iter().collect();
    let id = |s: &str| s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse::<f64>().ok()).flatten();
    let js = |a: &str, b: &str| a.encode_utf16().cmp(b.encode_utf16());
    rows.sort_by(|(a, _), (b, _)| {
        js(&a.url, &b.url)
            .then_with(|| match (id(&a.script_id), id(&b.script_id)) {
                (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| js(&a.script_id, &b.script_id)),
                _ => js(&a.script_id, &b.script_id),
            })
            .then_with(|| a.line.unwrap_or(-1).cmp(&b.line.unwrap_or(-1)))
            .then_with(|| a.column.unwrap_or(-1).cmp(&b.column.unwrap_or(-1)))
            .then_with(|| js(&a.name, &b.name))
    });
    rows
}

/// `smoracle/1`: the header, the scripts, then one frame a line.
fn smoracle(res: &Resolution, label: &str, kind: InputKind) -> String {
    let mut out = String::from("{\"smoracle\":1,\"devtools\":\"jscalls\",\"input\":");
    push_str(&mut out, label);
    out.push_str(",\"kind\":");
    out.push_str(if kind == InputKind::Trace { "\"trace\"" } else { "\"cpuprofile\"" });
    out.push_str(",\"ast\":true,\n\"scripts\":[\n");
    for (k, s) in res.scripts.iter().enumerate() {
        if k > 0 {
            out.push_str(",\n");
        }
        push_script(&mut out, s, "mapURL");
    }
    out.push_str("\n],\n\"frames\":[\n");
    for (k, (f, r)) in oracle_order(res).into_iter().enumerate() {
        if k > 0 {
            out.push_str(",\n");
        }
        out.push_str("{\"url\":");
        push_str(&mut out, &f.url);
        out.push_str(",\"scriptId\":");
        push_str(&mut out, &f.script_id);
        out.push_str(",\"line\":");
        push_pos(&mut out, f.line, kind);
        out.push_str(",\"column\":");
        push_pos(&mut out, f.column, kind);
        out.push_str(",\"name\":");
        push_str(&mut out, &f.name);
        // The name DevTools shows once it has finished, for `compare.mjs --ast`; the first
        // pass's beside it.
        out.push_str(",\"resolvedName\":");
        push_opt(&mut out, r.name.as_deref());
        out.push_str(",\"resolvedNameFirst\":");
        push_opt(&mut out, r.first_name.as_deref());
        match &r.original {
            Some((url, line, column)) => {
                out.push_str(",\"originalUrl\":");
                push_str(&mut out, url);
                let _ = write!(out, ",\"originalLine\":{line},\"originalColumn\":{column}}}");
            }
            None => out.push_str(",\"originalUrl\":null,\"originalLine\":null,\"originalColumn\":null}"),
        }
    }
    out.push_str("\n]}\n");
    out
}

/// `jscalls-frames/1`.
fn json(res: &Resolution, label: &str) -> String {
    let mut out = String::from("{\"format\":\"jscalls-frames/1\",\"input\":");
    push_str(&mut out, label);
    out.push_str(",\"scripts\":[");
    for (k, s) in res.scripts.iter().enumerate() {
        out.push_str(if k == 0 { "\n  " } else { ",\n  " });
        push_script(&mut out, s, "mapUrl");
    }
    out.push_str("\n],\"problems\":[");
    for (k, p) in res.problems.iter().enumerate() {
        out.push_str(if k == 0 { "\n  " } else { ",\n  " });
        out.push_str("{\"script\":");
        push_str(&mut out, &p.script);
        out.push_str(",\"what\":");
        push_str(&mut out, &p.what);
        out.push('}');
    }
    out.push_str("\n],\"frames\":[");
    for (k, (f, r)) in oracle_order(res).into_iter().enumerate() {
        out.push_str(if k == 0 { "\n  " } else { ",\n  " });
        out.push_str("{\"url\":");
        push_str(&mut out, &f.url);
        out.push_str(",\"scriptId\":");
        push_str(&mut out, &f.script_id);
        let num = |v: Option<i64>| v.map_or("null".to_owned(), |v| v.to_string());
        let _ = write!(out, ",\"line\":{},\"column\":{},\"name\":", num(f.line), num(f.column));
        push_str(&mut out, &f.name);
        out.push_str(",\"shownName\":");
        push_str(&mut out, &shown_name(f, r));
        out.push_str(",\"resolvedName\":");
        push_opt(&mut out, r.name.as_deref());
        out.push_str(",\"original\":");
        match &r.original {
            Some((url, line, column)) => {
                out.push_str("{\"url\":");
                push_str(&mut out, url);
                let _ = write!(out, ",\"line\":{line},\"column\":{column}}}");
            }
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push_str("\n]}\n");
    out
}

/// The name DevTools displays: its resolved name when not empty, else the recorded one, else
/// `(anonymous)`.
fn shown_name(f: &FrameKey, r: &sourcemap::Resolved) -> String {
    let n = r.name.as_deref().filter(|n| !n.is_empty()).unwrap_or(&f.name);
    if n.is_empty() {
        "(anonymous)".to_owned()
    } else {
        n.to_owned()
    }
}

/// A script as a person finds it: its URL, or its id when it has none (an `eval`, a script
/// a tool injected).
fn script_label(s: &sourcemap::ScriptSummary) -> Cow<'_, str> {
    if s.url.is_empty() {
        Cow::Owned(format!("script {} (no URL)", s.script_id))
    } else {
        Cow::Borrowed(&s.url)
    }
}

/// The frames a map changed, then the scripts and their maps.
fn text(res: &Resolution) -> String {
    let mut out = String::new();
    let (named, placed, mapped) = (res.renamed(), res.placed(), res.mapped_scripts());
    let _ = writeln!(
        out,
        "{} frames: {named} renamed and {placed} placed by source maps; {mapped} of {} scripts have a map",
        res.frames.len(),
        res.scripts.len()
    );
    let changed: Vec<_> =
        oracle_order(res).into_iter().filter(|(_, r)| r.name.is_some() || r.original.is_some()).collect();
    if !changed.is_empty() {
        out.push('\n');
    }
    for (f, r) in changed {
        let place = r
            .original
            .as_ref()
            .map_or_else(|| "(no original place)".to_owned(), |(u, l, c)| format!("{u}:{}:{}", l + 1, c + 1));
        let at = format!("{}:{}:{}", f.url, f.line.map_or(0, |l| l + 1), f.column.map_or(0, |c| c + 1));
        let recorded = if f.name.is_empty() { "(anonymous)" } else { f.name.as_str() };
        let _ = writeln!(out, "  {:<28} {place}  (was {recorded} {at})", shown_name(f, r));
    }
    let unmapped: Vec<Cow<str>> = res.scripts.iter().filter(|s| s.map.is_none()).map(script_label).collect();
    if !unmapped.is_empty() {
        let _ = writeln!(out, "\nscripts without a map ({}):", unmapped.len());
        for u in unmapped {
            let _ = writeln!(out, "  {u}");
        }
    }
    out
}
