//! jscalls against the DevTools engine's own answers, field for field, with no tolerance.
//!
//! Every `NAME.oracle*.json.gz` next to an input (written by `conformance/regenerate.sh`, or
//! shipped in `../shared/conformance`) is compared with `jscalls calls` on that input:
//! `.oracle` with the defaults, `.oracle-devtools` with `--cpuprofile-mode performance-panel`,
//! `.oracle-v6` with `--engine latest`; `.oracle-tree*` likewise with `jscalls tree --format
//! devtools`, node for node (times within the oracle's tolerance, 0.001 µs); `.oracle-lines`
//! with `jscalls lines --format devtools`, row for row, bit for bit.

use std::io::Read;
use std::path::{Path, PathBuf};

use jscalls::ranges::{Query, Timings};
use jscalls::{analyze, Config, CpuProfileMode, EngineVersion, Source};
use serde_json::Value;

use crate::support::refined_keep_the_flame_chart;

/// A golden's bytes: small ones are stored plain (so that a diff shows a change), large ones gzipped.
fn read_golden(p: &Path) -> Vec<u8> {
    let raw = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return raw;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out).unwrap();
    out
}

/// `NAME` and the kind of answer of a golden's file name, plain or gzipped.
fn golden_name(name: &str) -> Option<(&str, &'static str)> {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    [
        (".oracle.json", "default"),
        (".oracle-devtools.json", "panel"),
        (".oracle-v6.json", "latest"),
        (".oracle-tree.json", "tree"),
        (".oracle-tree-devtools.json", "tree-panel"),
        (".oracle-tree-v6.json", "tree-latest"),
        (".oracle-lines.json", "lines"),
    ]
    .into_iter()
    .find_map(|(suffix, kind)| name.strip_suffix(suffix).map(|b| (b, kind)))
}

/// The goldens in `dir` with their inputs (in `inputs`) and the configuration each was made with.
fn goldens(dir: &Path, inputs: &Path) -> Vec<(PathBuf, PathBuf, &'static str)> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for g in &entries {
        let Some((base, kind)) = golden_name(g.file_name().unwrap().to_str().unwrap()) else { continue };
        // A selected range's answer (`NAME.rangeK`, `NAME.queryK`) is of the input NAME.
        let base = match base.rsplit_once(".range").or_else(|| base.rsplit_once(".query")) {
            Some((name, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => base,
        };
        let input = [".json.gz", ".json", ".gz", ""]
            .iter()
            .map(|ext| inputs.join(format!("{base}{ext}")))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no input for {}", g.display()));
        out.push((input, g.clone(), kind));
    }
    out
}

const CALL_FIELDS: [&str; 12] = [
    "ts",
    "dur",
    "selfTime",
    "depth",
    "nodeDepth",
    "nodeId",
    "sampleIndex",
    "functionName",
    "url",
    "scriptId",
    "lineNumber",
    "columnNumber",
];
const PROFILE_FIELDS: [&str; 5] = ["profileId", "sampleCount", "integrated", "callCount", "threadName"];

/// Compares one input with its golden; returns the number of calls (or tree nodes) compared.
fn check(input: &Path, golden: &Path, kind: &str) -> Result<usize, String> {
    let mut cfg = Config::default();
    cfg.engine = EngineVersion::V0_0_65;
    match kind.trim_start_matches("tree-") {
        "panel" => cfg.cpuprofile_mode = CpuProfileMode::PerformancePanel,
        "latest" => cfg.engine = EngineVersion::Latest,
        _ => {}
    }
    if kind.starts_with("tree") {
        return check_tree(input, golden, kind, cfg);
    }
    if kind == "lines" {
        return check_lines(input, golden, cfg);
    }
    let a = analyze(&Source::file(input), &cfg).map_err(|e| format!("{}: {e}", input.display()))?;
    let mut buf = Vec::new();
    a.write_calls(&mut buf, "x").unwrap();
    let ours: Value = serde_json::from_slice(&buf).map_err(|e| format!("our output is not JSON: {e}"))?;
    let want: Value = serde_json::from_slice(&read_golden(golden)).unwrap();
    let key = |p: &Value| (p["pid"].as_i64().unwrap(), p["tid"].as_i64().unwrap());
    let ours_p = ours["profiles"].as_array().unwrap();
    let want_p = want["profiles"].as_array().unwrap();
    let what = format!("{} [{kind}]", input.display());
    if ours_p.iter().map(key).collect::<Vec<_>>() != want_p.iter().map(key).collect::<Vec<_>>() {
        return Err(format!(
            "{what}: profiles differ: ours {:?}, DevTools {:?}",
            ours_p.iter().map(key).collect::<Vec<_>>(),
            want_p.iter().map(key).collect::<Vec<_>>()
        ));
    }
    let mut n = 0;
    for (o, w) in ours_p.iter().zip(want_p) {
        for f in PROFILE_FIELDS {
            // The oracle labels a thread it drops with its tid; we have no name for it either way.
            if f == "threadName" && !w["integrated"].as_bool().unwrap() {
                continue;
            }
            if o[f] != w[f] {
                return Err(format!("{what}: profile {:?}: {f} is {} but DevTools says {}", key(w), o[f], w[f]));
            }
        }
        let (oc, wc) = (o["calls"].as_array().unwrap(), w["calls"].as_array().unwrap());
        for (i, (c, d)) in oc.iter().zip(wc).enumerate() {
            for f in CALL_FIELDS {
                if c[f] != d[f] {
                    return Err(format!(
                        "{what}: profile {:?} call {i}: {f} differs\n  ours     {c}\n  DevTools {d}",
                        key(w)
                    ));
                }
            }
            n += 1;
        }
    }
    Ok(n)
}

/// `jscalls tree --format devtools` against the oracle's document: threads by (pid, tid), both
/// sets, every top-down node by its id path and every bottom-up function and caller, with their
/// fields and times (within 0.001 µs, the oracle's `compare-tree.mjs` tolerance).
fn check_tree(input: &Path, golden: &Path, kind: &str, mut cfg: Config) -> Result<usize, String> {
    cfg.keep_event_names = true;
    let query = query_of(golden);
    if let Some(q) = &query {
        cfg.range_event_names = Timings::names_for(&[q]);
    }
    let a = analyze(&Source::file(input), &cfg).map_err(|e| format!("{}: {e}", input.display()))?;
    let want = deep_json(&read_golden(golden)).unwrap();
    // A selected range's trees: the range jscalls finds for the query (`NAME.queryK`), else the
    // window the oracle's were built with.
    let range = match &query {
        Some(q) => Some(
            q.resolve(a.timings(), a.trace_bounds())
                .map_err(|e| format!("{}: {}: {e}", input.display(), q.describe()))?,
        ),
        None => want.get("range").map(|r| jscalls::tree::Selection {
            option: "--range".to_owned(),
            arg: String::new(),
            min_us: r["windowUs"]["min"].as_f64().unwrap(),
            max_us: r["windowUs"]["max"].as_f64().unwrap(),
            event: None,
        }),
    };
    let mut buf = Vec::new();
    a.write_devtools_tree_of(&mut buf, "x", range.as_ref()).unwrap();
    let ours = deep_json(&buf).map_err(|e| format!("our tree is not JSON: {e}"))?;
    let what = format!("{} [{kind}{}]", input.display(), if range.is_some() { ", range" } else { "" });
    if let Some(r) = &range {
        let (o, w) = (&ours["range"], &want["range"]);
        for f in ["startTime", "endTime"] {
            if o[f] != w[f] {
                return Err(format!("{what}: range {f} is {}, DevTools {}", o[f], w[f]));
            }
        }
        // The event found is the one DevTools selects: its index among those of its name, and all.
        if let (Some(oe), Some(we)) = (o.get("event"), w.get("event")) {
            if oe != we {
                return Err(format!("{what}: selected event {oe}, DevTools {we}"));
            }
        } else if w.get("event").is_some() {
            return Err(format!("{what}: DevTools selected the event {}, jscalls a window", w["event"]));
        }
        assert!(r.max_us > r.min_us);
    }
    let (ot, wt) = (ours["threads"].as_array().unwrap(), want["threads"].as_array().unwrap());
    let key = |t: &Value| (t["pid"].as_i64(), t["tid"].as_i64(), t["threadName"].clone());
    if ot.iter().map(key).collect::<Vec<_>>() != wt.iter().map(key).collect::<Vec<_>>() {
        return Err(format!("{what}: threads differ"));
    }
    let mut n = 0;
    for (o, w) in ot.iter().zip(wt) {
        for set in ["calls", "all"] {
            let at = format!("{what} {:?} {set}", key(w));
            if o[set]["events"] != w[set]["events"] {
                return Err(format!("{at}: {} events, DevTools {}", o[set]["events"], w[set]["events"]));
            }
            // Top-down: an explicit stack of (ours, theirs, path).
            let mut todo = vec![(&o[set]["topDown"], &w[set]["topDown"], String::new())];
            while let Some((a, b, path)) = todo.pop() {
                same_node(a, b, &format!("{at} top-down {path}"))?;
                n += 1;
                let (ac, bc) = (a["children"].as_array().unwrap(), b["children"].as_array().unwrap());
                if ac.len() != bc.len() {
                    return Err(format!("{at} top-down {path}: {} children, DevTools {}", ac.len(), bc.len()));
                }
                todo.extend(ac.iter().zip(bc).map(|(x, y)| (x, y, format!("{path} > {}", y["id"]))));
            }
            let (ab, bb) = (o[set]["bottomUp"].as_array().unwrap(), w[set]["bottomUp"].as_array().unwrap());
            if ab.len() != bb.len() {
                return Err(format!("{at} bottom-up: {} functions, DevTools {}", ab.len(), bb.len()));
            }
            for (f, g) in ab.iter().zip(bb) {
                same_node(f, g, &format!("{at} bottom-up {}", g["id"]))?;
                let (fc, gc) = (f["children"].as_array().unwrap(), g["children"].as_array().unwrap());
                if fc.len() != gc.len() {
                    return Err(format!("{at} bottom-up {}: {} callers, DevTools {}", g["id"], fc.len(), gc.len()));
                }
                for (x, y) in fc.iter().zip(gc) {
                    same_node(x, y, &format!("{at} bottom-up {} < {}", g["id"], y["id"]))?;
                }
                n += 1 + fc.len();
            }
        }
    }
    Ok(n)
}

/// JSON nested deeper than serde_json's default limit of 128 (a call tree is as deep as its stacks).
fn deep_json(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let v = serde::Deserialize::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// One node's id, frame fields and times.
fn same_node(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    for f in ["id", "name", "url", "lineNumber", "columnNumber"] {
        if a.get(f) != b.get(f) {
            return Err(format!("{at}: {f} is {:?}, DevTools {:?}", a.get(f), b.get(f)));
        }
    }
    for f in ["selfTime", "totalTime"] {
        let (x, y) = (a[f].as_f64().unwrap_or(f64::NAN), b[f].as_f64().unwrap_or(f64::NAN));
        // ms; 0.001 µs.
        if !((x - y).abs() <= 1e-6 || (x.is_nan() && y.is_nan())) {
            return Err(format!("{at}: {f} is {x}, DevTools {y}"));
        }
    }
    Ok(())
}

/// The fields of a profile's entry in `devtools-lines/1` that jscalls writes (the oracle's
/// others count what its model's sort moved: helper figures, not DevTools').
const LINE_PROFILE_FIELDS: [&str; 15] = [
    "order",
    "pid",
    "tid",
    "profileId",
    "path",
    "samples",
    "added",
    "rows",
    "sumMs",
    "skippedNoLine",
    "skippedNoNode",
    "skippedNoKey",
    "nodesWithTicks",
    "totalHitCount",
    "sampleDuration",
];

/// `jscalls lines --format devtools` against the oracle's `--lines` document: every profile's
/// figures, and every row of each profile's sums and of the merged sums, equal (times bit for
/// bit, as written by both in shortest round-trip form).
fn check_lines(input: &Path, golden: &Path, mut cfg: Config) -> Result<usize, String> {
    cfg.keep_lines = true;
    let (_, a) = jscalls::assemble(&Source::file(input), &cfg).map_err(|e| format!("{}: {e}", input.display()))?;
    let doc = a.line_times().devtools_document("x", a.kind());
    let ours: Value = serde_json::from_str(&doc).map_err(|e| format!("our document is not JSON: {e}"))?;
    let want: Value = serde_json::from_slice(&read_golden(golden)).unwrap();
    let what = format!("{} [lines]", input.display());
    let (op, wp) = (ours["profiles"].as_array().unwrap(), want["profiles"].as_array().unwrap());
    if op.len() != wp.len() {
        return Err(format!("{what}: {} profiles, DevTools {}", op.len(), wp.len()));
    }
    for (o, w) in op.iter().zip(wp) {
        for f in LINE_PROFILE_FIELDS {
            if o[f] != w[f] {
                return Err(format!("{what}: profile {}: {f} is {}, DevTools {}", w["order"], o[f], w[f]));
            }
        }
    }
    let mut n = 0;
    for section in ["lines", "merged"] {
        let (o, w) = (ours[section].as_array().unwrap(), want[section].as_array().unwrap());
        if o.len() != w.len() {
            return Err(format!("{what}: {section}: {} rows, DevTools {}", o.len(), w.len()));
        }
        for (a, b) in o.iter().zip(w) {
            if a != b {
                return Err(format!("{what}: {section}: row differs\n  ours     {a}\n  DevTools {b}"));
            }
            n += 1;
        }
    }
    Ok(n)
}

/// Checks every golden in `dir` against its input in `inputs`.
fn check_dir(dir: &Path, inputs: &Path) -> usize {
    let mut total = 0;
    let mut failures = Vec::new();
    let all = goldens(dir, inputs);
    assert!(!all.is_empty(), "no goldens in {}", dir.display());
    for (input, golden, kind) in &all {
        match check(input, golden, kind) {
            Ok(n) => total += n,
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), all.len(), failures.join("\n"));
    eprintln!("{}: {} goldens, {total} calls, tree nodes and line rows equal to DevTools", dir.display(), all.len());
    total
}

/// [`refined_keep_the_flame_chart`] on every input of `dir`'s goldens; the calls compared.
fn refined_keep_their_flame_charts(dir: &Path, inputs: &Path) -> usize {
    let mut paths: Vec<PathBuf> = goldens(dir, inputs).into_iter().map(|(input, _, _)| input).collect();
    paths.dedup();
    paths.iter().flat_map(|p| refined_keep_the_flame_chart(p)).map(|(_, n, _)| n).sum()
}

#[test]
fn recorded_fixtures_equal_devtools() {
    let n = check_dir(Path::new("fixtures"), Path::new("fixtures"));
    assert!(n > 5_000, "only {n} calls compared");
    let n = refined_keep_their_flame_charts(Path::new("fixtures"), Path::new("fixtures"));
    assert!(n > 5_000, "only {n} refined calls compared");
}

/// DevTools' Call tree and Bottom-up of selected ranges (conformance/ranges.tsv: windows over
/// tasks, an interaction, a worker's call, one that starts before the recording, half a
/// millisecond), both engines.
#[test]
fn range_fixtures_equal_devtools() {
    let n = check_dir(Path::new("fixtures/ranges"), Path::new("fixtures"));
    assert!(n > 2_000, "only {n} tree nodes compared");
}

#[test]
fn line_fixtures_equal_devtools() {
    // DevTools' own unit cases of the line times (`../shared/oracle/lines-selftest.mjs`): lines
    // with zeros, scriptId "0" with a url, a repaired (program) sample, positionTicks, an empty
    // lines array, a negative delta, a chunk without lines, non-exact µs sums.
    let n = check_dir(Path::new("fixtures/lines"), Path::new("fixtures/lines"));
    assert!(n >= 30, "only {n} rows compared");
    // The bundles' traces: a Chromium page's (a column with each line) and node's.
    let n: usize = ["chromium-page", "terser"]
        .iter()
        .map(|d| {
            let dir = Path::new("fixtures/sourcemaps").join(d);
            check_dir(&dir, &dir)
        })
        .sum();
    assert!(n >= 200, "only {n} rows compared");
}

#[test]
fn rule_fixtures_equal_devtools() {
    check_dir(Path::new("fixtures/rules"), Path::new("fixtures/rules"));
    refined_keep_their_flame_charts(Path::new("fixtures/rules"), Path::new("fixtures/rules"));
}

/// The query of a golden `NAME.queryK.oracle-tree*.json`: row K (from 1) of NAME's rows in
/// conformance/range-queries.tsv.
fn query_of(golden: &Path) -> Option<Query> {
    let name = golden.file_name()?.to_str()?;
    let (base, rest) = name.split_once(".query")?;
    let k: usize = rest.split('.').next()?.parse().ok()?;
    let spec = std::fs::read_to_string("conformance/range-queries.tsv").unwrap();
    let row = spec
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|c| c[0].strip_suffix(".json.gz").unwrap_or(c[0]) == base)
        .nth(k - 1)
        .unwrap_or_else(|| panic!("{name}: no row {k} for {base} in conformance/range-queries.tsv"));
    Some(Query::parse(row[1]).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// Ranges picked by name (conformance/range-queries.tsv: every measure, console.time span and
/// interaction of the shop recording, an event, two marks, the slowed build's, a Node trace's):
/// the range jscalls finds, and DevTools' trees of it, both engines; compared by
/// `range_fixtures_equal_devtools`, which reads every answer in fixtures/ranges.
#[test]
fn range_queries_equal_devtools() {
    let queries = goldens(Path::new("fixtures/ranges"), Path::new("fixtures"))
        .into_iter()
        .filter(|(_, g, _)| g.to_str().is_some_and(|s| s.contains(".query")))
        .count();
    assert!(queries >= 44, "only {queries} range queries' answers in fixtures/ranges");
}

/// `../shared/conformance`: DevTools' own fixture traces with the engine's answers. It runs when
/// the folder is there (`../shared`, or the path in `JSCALLS_SHARED`) and is otherwise reported
/// as skipped; `JSCALLS_SKIP_SHARED=1` skips it on purpose, and `JSCALLS_REQUIRE_SHARED=1` (set
/// by CI) makes a missing folder a failure.
#[test]
fn shared_conformance_equals_devtools() {
    let flag = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
    if flag("JSCALLS_SKIP_SHARED") {
        skipped("JSCALLS_SKIP_SHARED is set");
        return;
    }
    let shared = std::env::var_os("JSCALLS_SHARED").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("../shared"));
    let dir = shared.join("conformance");
    if !dir.is_dir() {
        assert!(!flag("JSCALLS_REQUIRE_SHARED"), "{} is missing and JSCALLS_REQUIRE_SHARED is set", dir.display());
        skipped(&format!("{} is missing; set JSCALLS_SHARED=/path/to/shared to run it", dir.display()));
        return;
    }
    let n = check_dir(&dir, &dir);
    assert!(n > 100_000, "only {n} calls and tree nodes compared");
    let n = refined_keep_their_flame_charts(&dir, &dir);
    assert!(n > 10_000, "only {n} refined calls compared");
    // The same inputs with the newest DevTools' answers, which this project keeps
    // (`conformance/regenerate.sh --shared`).
    let n = check_dir(Path::new("conformance/latest"), &dir);
    assert!(n > 100_000, "only {n} calls and tree nodes compared with --engine latest");
}

/// Says on the terminal that the shared set did not run. Written to stderr directly: the test
/// harness captures `eprintln!` of a passing test, and a skip must be seen.
fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\nSKIPPED shared_conformance_equals_devtools: {why}");
}
