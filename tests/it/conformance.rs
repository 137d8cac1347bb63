//! jscalls against the DevTools engine's own answers, field for field, with no tolerance.
//!
//! Every `NAME.oracle*.json.gz` next to an input (written by `conformance/regenerate.sh`, or
//! shipped in `../shared/conformance`) is compared with `jscalls calls` on that input:
//! `.oracle` with the defaults, `.oracle-devtools` with `--cpuprofile-mode performance-panel`,
//! `.oracle-v6` with `--engine latest`.

use std::io::Read;
use std::path::{Path, PathBuf};

use jscalls::{analyze, Config, CpuProfileMode, EngineVersion, Source};
use serde_json::Value;

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
    [(".oracle.json", "default"), (".oracle-devtools.json", "panel"), (".oracle-v6.json", "latest")]
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

/// Compares one input with its golden; returns the number of calls compared.
fn check(input: &Path, golden: &Path, kind: &str) -> Result<usize, String> {
    let mut cfg = Config::default();
    cfg.engine = EngineVersion::V0_0_65;
    match kind {
        "panel" => cfg.cpuprofile_mode = CpuProfileMode::PerformancePanel,
        "latest" => cfg.engine = EngineVersion::Latest,
        _ => {}
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
    eprintln!("{}: {} goldens, {total} calls equal to DevTools", dir.display(), all.len());
    total
}

#[test]
fn recorded_fixtures_equal_devtools() {
    let n = check_dir(Path::new("fixtures"), Path::new("fixtures"));
    assert!(n > 5_000, "only {n} calls compared");
}

#[test]
fn rule_fixtures_equal_devtools() {
    check_dir(Path::new("fixtures/rules"), Path::new("fixtures/rules"));
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
    assert!(n > 40_000, "only {n} calls compared");
    // The same inputs with the newest DevTools' answers, which this project keeps
    // (`conformance/regenerate.sh --shared`).
    let n = check_dir(Path::new("conformance/latest"), &dir);
    assert!(n > 40_000, "only {n} calls compared with --engine latest");
}

/// Says on the terminal that the shared set did not run. Written to stderr directly: the test
/// harness captures `eprintln!` of a passing test, and a skip must be seen.
fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\nSKIPPED shared_conformance_equals_devtools: {why}");
}
