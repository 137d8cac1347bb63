//! Source maps: each call frame's name and original place equal to DevTools' own source-map
//! code (`../shared/smoracle`, answers in fixtures/sourcemaps/*/app.smoracle.json.gz) on real
//! bundles of real npm packages (fixtures/record/sourcemaps/record.sh): their `.cpuprofile`s,
//! a node trace, and a headless-Chromium trace of a page (with the maps in the folder, and
//! saved with its maps as DevTools saves it).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{jscalls, tmpdir};

/// The bundles; the last three carry scope data (the scopes proposal with and without
/// generated ranges, Bloomberg's), which names about 86 of their functions otherwise.
const BUNDLES: [&str; 9] = [
    "esbuild",
    "esbuild-inline",
    "esbuild-es2017",
    "terser",
    "rollup",
    "webpack",
    "esbuild-scopes",
    "esbuild-scopes-no-ranges",
    "esbuild-pasta",
];

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut out).unwrap();
    out
}

/// The bundle's files, inflated into a folder of their own (the build folder a user has).
fn build_folder(bundle: &str, test: &str) -> PathBuf {
    let dir = tmpdir("sourcemaps", &format!("{test}-{bundle}"));
    for e in std::fs::read_dir(Path::new("fixtures/sourcemaps").join(bundle)).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap();
        // The oracles' answers are not the build's.
        if name.contains(".smoracle.") || name.contains(".oracle-") {
            continue;
        }
        std::fs::write(dir.join(name.strip_suffix(".gz").unwrap()), gunzip(&p)).unwrap();
    }
    dir
}

/// The oracle's answer for a bundle's profile (gzipped when over 64 KB).
fn answer(bundle: &str) -> Value {
    answer_for(bundle, "app")
}

/// The oracle's answer `STEM.smoracle.json(.gz)` in a fixture's folder.
fn answer_for(bundle: &str, stem: &str) -> Value {
    let dir = Path::new("fixtures/sourcemaps").join(bundle);
    let gz = dir.join(format!("{stem}.smoracle.json.gz"));
    let bytes =
        if gz.exists() { gunzip(&gz) } else { std::fs::read(dir.join(format!("{stem}.smoracle.json"))).unwrap() };
    serde_json::from_slice(&bytes).unwrap()
}

/// Frames by their key (url, scriptId, name, line, column), as compare.mjs matches them.
fn frames(doc: &Value) -> BTreeMap<String, Value> {
    doc["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                serde_json::to_string(&[&f["url"], &f["scriptId"], &f["name"], &f["line"], &f["column"]]).unwrap(),
                f.clone(),
            )
        })
        .collect()
}

/// `jscalls frames --format smoracle` of one bundle's profile, with its build folder.
fn resolved(bundle: &str) -> Value {
    let dir = build_folder(bundle, "parity");
    let profile = dir.join("app.cpuprofile");
    let o =
        jscalls(&["frames", profile.to_str().unwrap(), "--source-maps", dir.to_str().unwrap(), "--format", "smoracle"]);
    assert!(o.status.success(), "{bundle}: {}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Frames compared, renamed and placed.
#[derive(Default)]
struct Tally {
    compared: usize,
    renamed: usize,
    placed: usize,
}

/// Every frame of `got` equal to the oracle's `want`: DevTools' name in both its states (its
/// first pass, and once its AST scopes fallback has run: what users see) and the original
/// URL, line and column; the same frames, none missing, none extra.
fn same_frames(what: &str, want: &Value, got: &Value, tally: &mut Tally) {
    let (want, got) = (frames(want), frames(got));
    assert_eq!(want.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "{what}: the frames");
    for (k, w) in &want {
        let g = &got[k];
        for (want_field, got_field) in [
            ("resolvedNameAst", "resolvedName"),
            ("resolvedName", "resolvedNameFirst"),
            ("originalUrl", "originalUrl"),
            ("originalLine", "originalLine"),
            ("originalColumn", "originalColumn"),
        ] {
            assert_eq!(w[want_field], g[got_field], "{what}: {want_field} of {k}");
        }
        let shown = if w["resolvedNameAst"].is_string() { &w["resolvedNameAst"] } else { &w["resolvedName"] };
        tally.renamed += usize::from(shown.is_string() && shown != "" && *shown != w["name"]);
        tally.placed += usize::from(w["originalUrl"].is_string());
        tally.compared += 1;
    }
}

#[test]
fn every_frame_of_nine_bundles_is_named_and_placed_as_devtools_does() {
    let mut tally = Tally::default();
    for bundle in BUNDLES {
        same_frames(bundle, &answer(bundle), &resolved(bundle), &mut tally);
    }
    // Real work was compared: most bundle frames are placed, and minified names are restored.
    let Tally { compared, renamed, placed } = tally;
    assert!(compared > 1000 && placed > 600 && renamed > 40, "{compared} frames, {placed} placed, {renamed} renamed");
}

/// `jscalls frames --format smoracle` of `input` in a fixture's folder (inflated), with `args`
/// (`{dir}` stands for the folder).
fn resolved_trace(fixture: &str, input: &str, args: &[&str]) -> Value {
    let dir = build_folder(fixture, &format!("trace-{input}"));
    let got = resolved_trace_in(&dir, input, args);
    let _ = std::fs::remove_dir_all(&dir);
    got
}

/// [`resolved_trace`] of `input` in `dir`.
fn resolved_trace_in(dir: &Path, input: &str, args: &[&str]) -> Value {
    let path = dir.join(input);
    let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", dir.to_str().unwrap())).collect();
    let mut all = vec!["frames", path.to_str().unwrap(), "--format", "smoracle"];
    all.extend(args.iter().map(String::as_str));
    let o = jscalls(&all);
    assert!(o.status.success(), "{input}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Traces: a node trace (its scripts named by path), and a Chromium page's trace with the
/// scripts' text in it, once with the maps in a folder and once saved with its maps (an
/// external map found by its URL, an inline one Chrome elided found by the script's URL): the
/// scripts the trace describes, where each map came from, and every frame as DevTools has it.
#[test]
fn every_frame_of_node_and_chromium_traces_is_named_and_placed_as_devtools_does() {
    let mut tally = Tally::default();
    for (fixture, input, stem, args) in [
        ("terser", "app.trace.json", "app.trace", &["--source-maps", "{dir}"][..]),
        ("chromium-page", "trace.json", "trace", &["--source-maps", "{dir}"][..]),
        ("chromium-page", "trace-saved.json", "trace-saved", &[][..]),
    ] {
        let (want, got) = (answer_for(fixture, stem), resolved_trace(fixture, input, args));
        assert_eq!(want["scripts"], got["scripts"], "{fixture}/{input}: the scripts");
        same_frames(&format!("{fixture}/{input}"), &want, &got, &mut tally);
    }
    let maps: Vec<Value> = answer_for("chromium-page", "trace-saved")["scripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["map"].clone())
        .collect();
    assert_eq!(maps[..2], ["trace-metadata-by-sourceMapUrl", "trace-metadata-by-url(elided data url)"]);
    let Tally { compared, renamed, placed } = tally;
    assert!(compared >= 1000 && placed > 400 && renamed > 50, "{compared} frames, {placed} placed, {renamed} renamed");
}

/// `jscalls export INPUT --to collapsed` with `extra`: its stacks and what it said on stderr.
fn collapsed(input: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec!["export", input.to_str().unwrap(), "--to", "collapsed"];
    args.extend_from_slice(extra);
    let o = jscalls(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap())
}

/// The Firefox profile of `firefox-page` beside the bundle it ran and its map, in a folder.
fn firefox_folder(test: &str) -> PathBuf {
    let dir = tmpdir("sourcemaps", &format!("firefox-{test}"));
    let fixtures = Path::new("fixtures/sourcemaps");
    for (from, name) in [("chromium-page", "app.js"), ("chromium-page", "app.js.map"), ("firefox-page", "profile.json")]
    {
        std::fs::write(dir.join(name), gunzip(&fixtures.join(from).join(format!("{name}.gz")))).unwrap();
    }
    dir
}

/// The Firefox profile exported for the Firefox Profiler with its maps: the Profiler (the real
/// app, `../shared/viewers`) shows the job's functions under their original names. Skipped,
/// and said so, without a browser or the viewers.
#[test]
fn a_firefox_profile_opens_in_the_profiler_under_original_names() {
    let Some(viewers) = crate::support::viewers("a_firefox_profile_opens_in_the_profiler_under_original_names") else {
        return;
    };
    let dir = firefox_folder("viewer");
    let (profile, out) = (dir.join("profile.json"), dir.join("mapped.json"));
    let o = jscalls(&[
        "export",
        profile.to_str().unwrap(),
        "--to",
        "firefox",
        "--source-maps",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expect = ["firefox", out.to_str().unwrap(), "--expect", "renderAll", "--expect", "emStrong"];
    let (shown, said) = crate::support::viewer_check(&viewers, &expect);
    assert!(shown && said.contains("\"outcome\":\"shown\""), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Firefox profile of a page running the Chromium page's bundle (fixtures/record/sourcemaps/
/// firefox.sh): its frames have no script id, so each is the script with its URL. SpiderMonkey
/// places a function where V8 does (its parameters' start), and every JS frame gets what
/// DevTools' own code gives at that place (`profile.smoracle.json`: the frames as a
/// `.cpuprofile`, gecko-frames.mjs). The other commands show the original names (not with
/// `--no-source-maps`), the Profiler's processed form of the profile has the same frames
/// renamed, and its line times land on the original lines.
#[test]
fn a_firefox_profile_is_named_and_placed_by_devtools_rules() {
    let dir = firefox_folder("parity");
    let js_only = |doc: Value| {
        let frames: Vec<Value> = doc["frames"].as_array().unwrap().iter().filter(|f| f["url"] != "").cloned().collect();
        serde_json::json!({ "frames": frames })
    };
    let want = js_only(answer_for("firefox-page", "profile"));
    let got = js_only(resolved_trace_in(&dir, "profile.json", &["--source-maps", "{dir}"]));
    let mut tally = Tally::default();
    same_frames("firefox-page", &want, &got, &mut tally);
    let Tally { compared, renamed, placed } = tally;
    assert!(compared > 100 && placed > 100 && renamed >= 10, "{compared} frames, {placed} placed, {renamed} renamed");
    let profile = dir.join("profile.json");
    let (stacks, said) = collapsed(&profile, &["--source-maps", dir.to_str().unwrap()]);
    assert!(said.contains("source maps: ") && said.contains("1 of 8 scripts have a map"), "{said}");
    // marked's helpers by their own names in their own files, not the bundle's `ot` and `xi`.
    for name in ["outputLink node_modules/marked/src/Tokenizer.ts", "indentCodeCompensation node_modules/marked"] {
        let (function, file) = name.split_once(' ').unwrap();
        assert!(stacks.contains(&format!("{function} http://127.0.0.1:8711/{file}")), "{name}: {stacks}");
    }
    let (plain, said) = collapsed(&profile, &["--no-source-maps"]);
    assert!(!said.contains("source maps"), "{said}");
    assert!(plain.contains(";ot http://127.0.0.1:8711/app.js:1:1768") && !plain.contains("outputLink"), "{plain}");
    // The Firefox Profiler's processed form of the same profile (exported without maps): the
    // same frames renamed and placed.
    let processed = dir.join("processed.json");
    let (p, out) = (profile.to_str().unwrap(), processed.to_str().unwrap());
    let o = jscalls(&["export", p, "--to", "firefox", "--no-source-maps", "-o", out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let counts = |input: &str| {
        let o = jscalls(&["frames", input, "--source-maps", dir.to_str().unwrap()]);
        let text = String::from_utf8(o.stdout).unwrap();
        let first = text.lines().next().unwrap_or_default();
        first.split([':', ';']).nth(1).unwrap_or_default().trim().to_owned()
    };
    assert_eq!(counts(p), "44 renamed and 119 placed by source maps");
    assert_eq!(counts(out), counts(p));
    // Its line times at the original lines: the job's calls of marked and acorn (app/main.js
    // lines 15 and 20, in renderAll and countNodes), by each sample's JavaScript line and column.
    let o = jscalls(&["lines", p, "--source-maps", dir.to_str().unwrap(), "--format", "json", "-q"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let job: Vec<(i64, &str)> = doc["merged"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["url"] == "http://127.0.0.1:8711/app/main.js" && r["function"] != "")
        .map(|r| (r["line"].as_i64().unwrap(), r["function"].as_str().unwrap()))
        .collect();
    assert_eq!(job, [(15, "renderAll"), (20, "countNodes")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The trace with each distinct (script, line, column) its samples recorded as a frame there
/// (what `fixtures/record/sourcemaps/positions.mjs` made for the oracle): 0-based, a sample
/// without a column at its line's start.
fn positions_trace(trace: &Value) -> Value {
    let events = trace["traceEvents"].as_array().unwrap();
    let mut kept: Vec<Value> = Vec::new();
    /// A profile: its first event's fields, its nodes by id, its positions in order.
    struct Prof {
        head: [Value; 4],
        nodes: BTreeMap<String, Value>,
        positions: Vec<Value>,
    }
    let mut profiles: Vec<((Value, Value), Prof)> = Vec::new();
    for e in events {
        if e["name"] != "Profile" && e["name"] != "ProfileChunk" {
            kept.push(e.clone());
            continue;
        }
        let key = (e["pid"].clone(), e["id"].clone());
        let k = profiles.iter().position(|p| p.0 == key).unwrap_or_else(|| {
            let head = ["pid", "tid", "id", "ts"].map(|f| e[f].clone());
            profiles.push((key, Prof { head, nodes: BTreeMap::new(), positions: Vec::new() }));
            profiles.len() - 1
        });
        let p = &mut profiles[k].1;
        let d = &e["args"]["data"];
        for n in d["cpuProfile"]["nodes"].as_array().into_iter().flatten() {
            p.nodes.insert(n["id"].to_string(), n.clone());
        }
        for (i, id) in d["cpuProfile"]["samples"].as_array().into_iter().flatten().enumerate() {
            let (line, column) = (d["lines"][i].as_i64().unwrap_or(0), d["columns"][i].as_i64().unwrap_or(0));
            let Some(cf) = p.nodes.get(&id.to_string()).map(|n| &n["callFrame"]) else { continue };
            let script_id = match &cf["scriptId"] {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            let url = cf["url"].as_str().unwrap_or("");
            if line == 0 || (url.is_empty() && script_id.parse::<f64>().unwrap_or(0.0) == 0.0) {
                continue;
            }
            let column = if column > 0 { column - 1 } else { 0 };
            let pos =
                serde_json::json!({"scriptId": script_id, "url": url, "lineNumber": line - 1, "columnNumber": column});
            if !p.positions.contains(&pos) {
                p.positions.push(pos);
            }
        }
    }
    for (_, Prof { head: [pid, tid, id, ts], positions, .. }) in profiles {
        let mut nodes = vec![
            serde_json::json!({"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}}),
        ];
        for pos in positions {
            let mut cf = pos.clone();
            cf["functionName"] = "".into();
            nodes.push(serde_json::json!({"id": nodes.len() + 1, "parent": 1, "callFrame": cf}));
        }
        let samples: Vec<usize> = (2..=nodes.len()).collect();
        let deltas = vec![1; samples.len()];
        let cat = "disabled-by-default-v8.cpu_profiler";
        kept.push(serde_json::json!({"name": "Profile", "ph": "P", "cat": cat, "pid": pid, "tid": tid, "id": id, "ts": ts, "args": {"data": {"startTime": ts}}}));
        let ts = ts.as_f64().unwrap() + 1.0;
        let data = serde_json::json!({"cpuProfile": {"nodes": nodes, "samples": samples}, "timeDeltas": deltas});
        kept.push(serde_json::json!({"name": "ProfileChunk", "ph": "P", "cat": cat, "pid": pid, "tid": tid, "id": id, "ts": ts, "args": {"data": data}}));
    }
    let mut out = trace.clone();
    out["traceEvents"] = Value::Array(kept);
    out
}

/// Where a line's time goes once maps apply (`jscalls lines`, as the newest DevTools' Sources
/// panel maps each sample's line and column): every position the Chromium page's samples
/// recorded, with the maps in a folder and saved in the trace, is at the original URL, line and
/// column DevTools' own code gives it.
#[test]
fn every_sampled_position_is_at_devtools_original_place() {
    let mut tally = Tally::default();
    for (input, stem, args) in
        [("trace.json", "trace", &["--source-maps", "{dir}"][..]), ("trace-saved.json", "trace-saved", &[][..])]
    {
        let dir = build_folder("chromium-page", &format!("positions-{stem}"));
        let trace: Value = serde_json::from_slice(&std::fs::read(dir.join(input)).unwrap()).unwrap();
        let positions = format!("{stem}.positions.json");
        std::fs::write(dir.join(&positions), serde_json::to_vec(&positions_trace(&trace)).unwrap()).unwrap();
        let got = resolved_trace_in(&dir, &positions, args);
        same_frames(&positions, &answer_for("chromium-page", &format!("{stem}.positions")), &got, &mut tally);
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(tally.compared >= 1500 && tally.placed > 700, "{} positions, {} placed", tally.compared, tally.placed);
}

/// A trace saved with its maps is shown under original names by every command without being
/// asked, says so, and `--no-source-maps` keeps the recorded names.
#[test]
fn a_trace_saved_with_its_maps_shows_original_names_unasked() {
    let dir = build_folder("chromium-page", "saved");
    let trace = dir.join("trace-saved.json");
    let (stacks, said) = collapsed(&trace, &[]);
    assert!(said.contains("source maps: ") && said.contains("2 of 6 scripts have a map"), "{said}");
    // The job's functions and acorn's, by their own names.
    for name in ["renderAll", "countNodes", "isIdentifierChar"] {
        assert!(stacks.contains(name), "{name} missing: {}", &stacks[..stacks.len().min(2000)]);
    }
    let (plain, said) = collapsed(&trace, &["--no-source-maps"]);
    assert!(!said.contains("source maps"), "{said}");
    assert!(!plain.contains("renderAll") && !plain.contains("isIdentifierChar"), "{plain}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The text view names what the maps restored, in original files.
#[test]
fn the_text_view_shows_original_names_and_files() {
    let dir = build_folder("esbuild", "text");
    let profile = dir.join("app.cpuprofile");
    let o = jscalls(&["frames", profile.to_str().unwrap(), "--source-maps", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.contains("1 of ") && first.contains("scripts have a map"), "{first}");
    // marked's `escape` helper, minified to a one-letter name, is shown by its own name at its
    // own place.
    let escape = text
        .lines()
        .find(|l| l.trim_start().starts_with("escape ") && l.contains("marked/src/helpers.ts"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(escape.contains("(was "), "{escape}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A map named by a script's comment is looked up in the folders given, never outside them:
/// `../secret.map` from `dist/app.js` finds nothing until a `secret.map` is in `dist/`.
#[test]
fn a_comment_never_leads_out_of_the_folders() {
    let (dir, dist, _) = one_function("escape", "function a(){}\n//# sourceMappingURL=../secret.map\n", None);
    std::fs::write(dir.join("secret.map"), r#"{"version":3,"sources":["x.ts"],"names":["leaked"],"mappings":"AAAAA"}"#)
        .unwrap();
    let p = dir.join("app.cpuprofile");
    let frames = || {
        let o = jscalls(&["frames", p.to_str().unwrap(), "--source-maps", dist.to_str().unwrap(), "--format", "json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let doc = frames();
    let a = doc["frames"].as_array().unwrap().iter().find(|f| f["name"] == "a").unwrap();
    assert_eq!(a["original"], Value::Null, "{doc}");
    assert_eq!(doc["scripts"][0]["map"], Value::Null, "{doc}");
    // The same map given in the folder is used.
    std::fs::copy(dir.join("secret.map"), dist.join("secret.map")).unwrap();
    let doc = frames();
    let a = doc["frames"].as_array().unwrap().iter().find(|f| f["name"] == "a").unwrap();
    assert!(a["original"]["url"].as_str().unwrap().ends_with("/x.ts"), "{doc}");
    assert_eq!(doc["scripts"][0]["map"], "maps-dir-by-comment", "{doc}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A deployed URL's prefix names the folder that has its files: the profile's script is
/// `https://cdn.example.com/assets/app.js`, its build in `dist/`; another folder has an
/// `assets/app.js` of another build, which the script's path alone would find first.
#[test]
fn a_url_prefix_names_the_folder_of_a_deployed_script() {
    let dir = build_folder("esbuild", "prefix");
    let other = build_folder("esbuild-es2017", "prefix");
    std::fs::create_dir_all(other.join("assets")).unwrap();
    for f in ["app.js", "app.js.map"] {
        std::fs::rename(other.join(f), other.join("assets").join(f)).unwrap();
    }
    let recorded = std::fs::read_to_string(dir.join("app.cpuprofile")).unwrap();
    let deployed =
        recorded.replace("file:///tmp/jscalls-sourcemaps/out/esbuild/app.js", "https://cdn.example.com/assets/app.js");
    assert_ne!(recorded, deployed);
    let profile = dir.join("deployed.cpuprofile");
    std::fs::write(&profile, deployed).unwrap();
    let names = |maps: &[String]| {
        let mut args = vec!["frames", profile.to_str().unwrap(), "--format", "smoracle"];
        for m in maps {
            args.extend(["--source-maps", m.as_str()]);
        }
        let o = jscalls(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        frames(&doc)
            .into_values()
            .map(|f| (f["line"].clone(), f["column"].clone(), f["resolvedName"].clone()))
            .collect::<Vec<_>>()
    };
    let want: Vec<_> = frames(&answer("esbuild"))
        .into_values()
        .map(|f| (f["line"].clone(), f["column"].clone(), f["resolvedNameAst"].clone()))
        .collect();
    let (other_s, dir_s) = (other.to_str().unwrap().to_owned(), dir.to_str().unwrap().to_owned());
    assert_eq!(names(&[other_s.clone(), format!("https://cdn.example.com/assets/={dir_s}")]), want);
    assert_ne!(names(&[other_s, dir_s]), want, "the other build's assets/app.js is found by the path");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}

/// The recorded (minified) name of the frame DevTools names `original` in `bundle`.
fn minified_name(bundle: &str, original: &str) -> String {
    let doc = resolved(bundle);
    let f = doc["frames"].as_array().unwrap().iter().find(|f| f["resolvedName"] == original).unwrap();
    f["name"].as_str().unwrap().to_owned()
}

/// A budget written against original names holds on two builds of the same code whose
/// minified names differ (esbuild for Node and for ES2017), with each build's maps; without
/// them the functions are not found, and the check says so (exit 4), never a silent pass.
#[test]
fn a_budget_on_original_names_survives_a_rebuild() {
    let (a, b) = (minified_name("esbuild", "outputLink"), minified_name("esbuild-es2017", "outputLink"));
    assert_ne!(a, b, "the two builds name outputLink alike");
    let dir = tmpdir("sourcemaps", "budget");
    let budget = dir.join("budget.toml");
    std::fs::write(
        &budget,
        "[[rule]]\nfunction = \"outputLink\"\nself = \"5s\"\n\n[[rule]]\nfunction = \"escape\"\ncalls = 100000\n",
    )
    .unwrap();
    for bundle in ["esbuild", "esbuild-es2017"] {
        let build = build_folder(bundle, "budget");
        let profile = build.join("app.cpuprofile");
        let (p, bd, d) = (profile.to_str().unwrap(), budget.to_str().unwrap(), build.to_str().unwrap());
        let o = jscalls(&["check", p, "--budget", bd, "--source-maps", d]);
        let said = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{bundle}: {said}{err}");
        assert!(said.contains("2 passed, 0 failed, 0 not measured"), "{bundle}: {said}");
        // What the maps did is said, with the scripts they left as recorded.
        assert!(err.contains("source maps: ") && err.contains("1 of ") && err.contains("(without: node:"), "{err}");
        let o = jscalls(&["check", p, "--budget", bd]);
        assert_eq!(o.status.code(), Some(4), "{bundle} without maps: {}", String::from_utf8_lossy(&o.stdout));
        let _ = std::fs::remove_dir_all(&build);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The scripts left without a map are listed so that a map that matched nothing is seen; a
/// script without a URL (here the ones the recording's browser driver ran) by its id, not as
/// an empty name.
#[test]
fn scripts_without_a_map_are_listed_by_url_or_id() {
    let build = build_folder("chromium-page", "unmapped");
    let (trace, dir) = (build.join("trace.json"), build.to_str().unwrap());
    let o = jscalls(&["frames", trace.to_str().unwrap(), "--source-maps", dir]);
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}");
    let listed = said.split_once("scripts without a map (5):\n").map(|(_, l)| l);
    assert_eq!(
        listed,
        Some(
            "  http://127.0.0.1:39729/inline.js\n  script 9 (no URL)\n  script 14 (no URL)\n  script 16 (no URL)\n  \
             script 22 (no URL)\n"
        ),
        "{said}"
    );
    let out = build.join("calls.json");
    let o = jscalls(&["calls", trace.to_str().unwrap(), "--source-maps", dir, "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "1 of 6 scripts have a map (without: http://127.0.0.1:39729/inline.js, script 9 (no URL), script 14 (no \
             URL), … 2 more)"
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&build);
}

/// `diff` pairs a function of two builds by its original name and place, though its
/// minified names differ. Both builds' folders are given, under one folder as they were
/// built (`out/esbuild/app.js`, `out/esbuild-es2017/app.js`): each script is found by its
/// URL's path, the longest tail first, and its map beside it.
#[test]
fn diff_pairs_functions_of_two_builds_by_their_original_names() {
    let out = tmpdir("sourcemaps", "diff-out");
    for bundle in ["esbuild", "esbuild-es2017"] {
        let built = build_folder(bundle, "diff");
        std::fs::rename(&built, out.join(bundle)).unwrap();
    }
    let (pa, pb) = (out.join("esbuild/app.cpuprofile"), out.join("esbuild-es2017/app.cpuprofile"));
    let o = jscalls(&[
        "diff",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        "--source-maps",
        out.to_str().unwrap(),
        "--format",
        "json",
        "--level",
        "functions",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows: Vec<&Value> =
        doc["functions"].as_array().unwrap().iter().filter(|f| f["function"]["name"] == "outputLink").collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = rows[0];
    assert!(r["base"]["calls"].as_f64().unwrap() > 0.0 && r["new"]["calls"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["function"]["url"].as_str().unwrap().ends_with("marked/src/Tokenizer.ts"), "{r}");
    let _ = std::fs::remove_dir_all(&out);
}

/// The script of [`one_function`]: one function, `a`, whose map is `app.js.map`.
const ONE_FUNCTION: &str = "function a(){}\n//# sourceMappingURL=app.js.map\n";

/// A folder with `dist/app.js` (`script`, whose function `a` starts at 0:10) and a profile of
/// it; `map` is written as `dist/app.js.map` (None: nothing).
fn one_function(test: &str, script: &str, map: Option<&[u8]>) -> (PathBuf, PathBuf, String) {
    let dir = tmpdir("sourcemaps", test);
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("app.js"), script).unwrap();
    if let Some(m) = map {
        std::fs::write(dist.join("app.js.map"), m).unwrap();
    }
    let url = format!("file://{}", dist.join("app.js").display());
    let profile = format!(
        r#"{{"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},"children":[2]}},
        {{"id":2,"callFrame":{{"functionName":"a","scriptId":"3","url":"{url}","lineNumber":0,"columnNumber":10}}}}],
        "startTime":0,"endTime":100,"samples":[2,2],"timeDeltas":[0,50]}}"#
    );
    let p = dir.join("app.cpuprofile");
    std::fs::write(&p, profile).unwrap();
    (dir, dist, url)
}

/// Each bad map is a warning naming the script and the reason (`--strict`: an error, exit
/// 1), the function keeps its recorded name, and the message is the one docs/errors.md lists.
#[test]
fn bad_maps_are_warnings_named_as_the_catalogue_says() {
    let doc = std::fs::read_to_string("docs/errors.md").unwrap();
    let cases: Vec<(&str, Option<&[u8]>, &str)> = vec![
        ("json", Some(b"{\"version\":3,"), "maps-dir-by-comment: not JSON: EOF while parsing a value at line 1 column 13"),
        ("array", Some(b"[1]"), "maps-dir-by-comment: not a JSON object"),
        ("sources", Some(br#"{"version":3,"mappings":"AAAA"}"#), "maps-dir-by-comment: a map has no \"sources\" array"),
        (
            "vlq",
            Some(br#"{"version":3,"sources":["x.ts"],"mappings":"AA!A"}"#),
            "maps-dir-by-comment: its mappings are unreadable (unexpected char '!' encountered while decoding): none used",
        ),
        (
            "range",
            Some(br#"{"version":3,"sources":["x.ts"],"names":[],"mappings":"AAAAA,ACAA"}"#),
            "maps-dir-by-comment: 2 mappings name a source or a name it does not have (those parts are ignored, as DevTools ignores them)",
        ),
        (
            "past",
            Some(br#"{"version":3,"sources":["x.ts"],"mappings":"AAAA;;;;;AAAA"}"#),
            "maps-dir-by-comment: its mappings reach line 6, past the script's 3 lines: is it the map of another build?",
        ),
        (
            "bloomberg",
            Some(br#"{"version":3,"sources":["x.ts"],"names":["f"],"mappings":"AAAA","x_com_bloomberg_sourcesFunctionMappings":["AAAAA"]}"#),
            "maps-dir-by-comment: its mappings are unreadable (x_com_bloomberg_sourcesFunctionMappings: a range does not end after its start (0:0 to 0:0)): none used",
        ),
    ];
    for (name, map, want) in cases {
        let (dir, dist, url) = one_function(&format!("bad-{name}"), ONE_FUNCTION, map);
        let p = dir.join("app.cpuprofile");
        let args = ["tree", p.to_str().unwrap(), "--flat", "--source-maps", dist.to_str().unwrap()];
        let o = jscalls(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {err}");
        assert!(err.contains(&format!("the map of {url}: {want}")), "{name}: {err}");
        assert!(doc.contains(want.split_once(": ").unwrap().1), "docs/errors.md lacks the {name} case: {want}");
        if name != "range" && name != "past" {
            assert!(String::from_utf8_lossy(&o.stdout).contains("  a file://"), "{name}: the recorded name stays");
        }
        let o = jscalls(&[&args[..], &["--strict"]].concat());
        assert_eq!(o.status.code(), Some(1), "{name} with --strict");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A map too large to read (here a gzip bomb: 300 MiB inflated from 1.3 MB) is a warning; a
/// FIFO or a directory where the map should be is no map (never read: nothing to wait for),
/// and a warning that names it; a file named on the command line that is not there is a usage
/// error before any work.
#[test]
fn maps_that_cannot_be_read_are_warnings() {
    use std::io::Write;
    let (dir, dist, url) = one_function("bomb", ONE_FUNCTION, None);
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(dist.join("app.js.map.gz")).unwrap(),
        flate2::Compression::fast(),
    );
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..300 {
        gz.write_all(&zeros).unwrap();
    }
    gz.finish().unwrap();
    let p = dir.join("app.cpuprofile");
    let o = jscalls(&["tree", p.to_str().unwrap(), "--source-maps", dist.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("the map of {url}: maps-dir-by-comment: cannot read the source map")), "{err}");
    assert!(err.contains("it is larger than 256 MiB"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);

    let (dir, dist, url) = one_function("fifo", ONE_FUNCTION, None);
    let made = std::process::Command::new("mkfifo").arg(dist.join("app.js.map")).status().is_ok_and(|s| s.success());
    std::fs::create_dir_all(dist.join("app.js.map.gz")).unwrap();
    let p = dir.join("app.cpuprofile");
    let o = jscalls(&["frames", p.to_str().unwrap(), "--source-maps", dist.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["scripts"][0]["map"], Value::Null, "a FIFO ({made}) or a directory is no map: {doc}");
    // The FIFO when there is one, else the folder named like the gzipped map.
    let named = if made { "app.js.map " } else { "app.js.map.gz " };
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("the map of {url}: ")), "{err}");
    assert!(err.contains(named) && err.contains("is not a regular file"), "{err}");
    let o = jscalls(&[
        "frames",
        p.to_str().unwrap(),
        "--source-maps",
        dist.to_str().unwrap(),
        "--format",
        "json",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));

    let o = jscalls(&["tree", p.to_str().unwrap(), "--source-map", &format!("{url}=/nowhere/app.js.map")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--source-map file://"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A trace's script events and saved maps of every odd shape (args.data not an object, keys of
/// the wrong types, a split text at index 10^18, a negative index, a map that is an array, an
/// entry that is no object) are skipped or counted, never a failure; `--strict` makes the
/// count an error and writes nothing.
#[test]
fn odd_script_events_and_saved_maps_are_survived() {
    let dir = tmpdir("sourcemaps", "odd-events");
    let out = dir.join("calls.json");
    let o = jscalls(&["calls", "fixtures/bad/script-events.json", "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("1 script rundown event(s) whose args.data is not an object"), "{err}");
    assert!(err.contains("1 of 1 scripts have a map"), "{err}");
    let calls: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(calls["profiles"][0]["calls"].as_array().map(Vec::len), Some(1), "{calls}");
    std::fs::remove_file(&out).unwrap();
    let o = jscalls(&["calls", "fixtures/bad/script-events.json", "--strict", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Once maps apply, a listing shows the original source a map carries (`sourcesContent`) with
/// each line's time; a script the trace carries lists from its own text; and the Firefox
/// export carries the original sources, so that the Profiler's source view shows them (a
/// real browser: the code of marked's Lexer.ts, with the times of `inlineTokens`' lines).
#[test]
fn original_sources_are_listed_and_exported_from_the_maps() {
    let dir = build_folder("chromium-page", "original-sources");
    let trace = dir.join("trace.json");
    let (trace, d) = (trace.to_str().unwrap(), dir.to_str().unwrap());
    let o = jscalls(&["lines", trace, "--source-maps", d, "--list", "--top", "12", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listing = String::from_utf8(o.stdout).unwrap();
    let routine = listing
        .split("\nROUTINE ")
        .find(|r| r.starts_with("inlineTokens  http://127.0.0.1:39729/node_modules/marked/src/Lexer.ts"))
        .unwrap_or_else(|| panic!("{listing}"));
    assert!(routine.lines().any(|l| l.ends_with("271      inlineTokens(src, tokens = []) {")), "{routine}");
    let saved = dir.join("trace-saved.json");
    let o = jscalls(&["lines", saved.to_str().unwrap(), "--list", "--top", "1", "-q"]);
    let listing = String::from_utf8(o.stdout).unwrap();
    assert!(listing.contains("ROUTINE inlineTokens  http://127.0.0.1:39729/app.js"), "{listing}");
    assert!(!listing.contains("no source for"), "{listing}");

    let out = dir.join("mapped.json");
    let o = jscalls(&[
        "export",
        trace,
        "--to",
        "firefox",
        "--source-maps",
        d,
        "--weight",
        "sample-time",
        "--by-line",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let (sources, strings) = (&doc["shared"]["sources"], doc["shared"]["stringArray"].as_array().unwrap());
    let lexer = (0..sources["length"].as_u64().unwrap() as usize)
        .find(|&k| {
            strings[sources["filename"][k].as_u64().unwrap() as usize]
                == "http://127.0.0.1:39729/node_modules/marked/src/Lexer.ts"
        })
        .expect("Lexer.ts among the sources");
    assert!(sources["content"][lexer].as_str().unwrap().contains("    inlineTokens(src, tokens = []) {"));
    if let Some(viewers) = crate::support::viewers("original_sources_are_listed_and_exported_from_the_maps") {
        let run = std::process::Command::new("node")
            .arg("tests/browser/firefox-source-view.mjs")
            .args([out.as_os_str(), "inlineTokens".as_ref(), "".as_ref(), viewers.as_os_str()])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{said}{}", String::from_utf8_lossy(&run.stderr));
        let v: Value = serde_json::from_str(said.trim()).unwrap();
        assert_eq!(v["source"], "http://127.0.0.1:39729/node_modules/marked/src/Lexer.ts", "{said}");
        let lines = v["lines"].as_array().unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l[0] == 289 && l[2].as_f64().unwrap() > 1.0 && l[3].as_str().unwrap().contains("blockSkip")),
            "{said}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Scripts' maps are read side by side; what went wrong with them is still told in the order
/// DevTools attaches them (by script id), the same with one thread as with several.
#[test]
fn bad_maps_of_many_scripts_are_told_in_script_order() {
    let dir = tmpdir("sourcemaps", "many-bad");
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    let bad: [&[u8]; 3] = [b"{\"version\":3,", b"[1]", br#"{"version":3,"mappings":"AAAA"}"#];
    let (mut nodes, mut urls) = (Vec::new(), Vec::new());
    for k in 0..12usize {
        let name = format!("s{k:02}.js");
        std::fs::write(dist.join(&name), format!("function f{k}(){{}}\n//# sourceMappingURL={name}.map\n")).unwrap();
        std::fs::write(dist.join(format!("{name}.map")), bad[k % 3]).unwrap();
        let url = format!("file://{}", dist.join(&name).display());
        // Script ids run against the files' order: s11.js is script 1.
        nodes.push(format!(
            r#"{{"id":{},"callFrame":{{"functionName":"f{k}","scriptId":"{}","url":"{url}","lineNumber":0,"columnNumber":10}}}}"#,
            k + 2,
            12 - k
        ));
        urls.push(url);
    }
    let children: Vec<String> = (0..12).map(|k| (k + 2).to_string()).collect();
    let samples: Vec<String> = children.clone();
    let profile = format!(
        r#"{{"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},"children":[{}]}},{}],
        "startTime":0,"endTime":1300,"samples":[{}],"timeDeltas":[0{}]}}"#,
        children.join(","),
        nodes.join(","),
        samples.join(","),
        ",100".repeat(11)
    );
    let p = dir.join("many.cpuprofile");
    std::fs::write(&p, profile).unwrap();
    let told = |threads: &str| {
        let args = ["tree", p.to_str().unwrap(), "--source-maps", dist.to_str().unwrap(), "--threads", threads];
        let o = jscalls(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stderr).unwrap()
    };
    let one = told("1");
    let order: Vec<usize> =
        one.lines().filter_map(|l| urls.iter().position(|u| l.contains(&format!("{u}:")))).collect();
    assert_eq!(order, (0..12).rev().collect::<Vec<_>>(), "{one}");
    for threads in ["2", "4"] {
        assert_eq!(told(threads), one, "{threads} threads");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
