//! Firefox (Gecko format) profiles in: a hand-written one whose calls are computed by hand, its
//! native frames made functions by symbols, one converted from a real `.cpuprofile` (the same
//! calls as the `.cpuprofile`), the same profile in the layout of version 34, and real Firefox
//! recordings (ESR 140: a worker, and five sites in processes of their own; Firefox 159, format
//! 36: the same five sites) through tree and every export.

use crate::support::jscalls;

fn fixture(name: &str) -> String {
    format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn calls_doc(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["calls"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let o = jscalls(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `name ts dur self` of each call of profile `k`.
fn calls(doc: &serde_json::Value, k: usize) -> Vec<String> {
    doc["profiles"][k]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {} {} {}", c["functionName"].as_str().unwrap(), c["ts"], c["dur"], c["selfTime"]))
        .collect()
}

#[test]
fn a_hand_written_profile_gives_the_calls_computed_by_hand() {
    let doc = calls_doc(&[&fixture("gecko/hand.json")]);
    let p = &doc["profiles"];
    assert_eq!(
        (p[0]["pid"].as_i64(), p[0]["tid"].as_i64(), p[0]["threadName"].as_str()),
        (Some(100), Some(100), Some("GeckoMain"))
    );
    // Samples at 1..=12 ms: main from 1 to the stackless sample at 12 (idle: no call); the two
    // addresses in doSomething are two functions without symbols; nsRefreshDriver::Tick (a
    // label), render and an anonymous function (JS) from 7, 8 and 9 ms.
    assert_eq!(
        calls(&doc, 0),
        [
            "app+0x1004 1000 11000 2000",
            "app+0x1044 2000 1000 1000",
            "app+0x1050 3000 2000 2000",
            "app+0x10a8 5000 1000 1000",
            "nsRefreshDriver::Tick 7000 5000 1000",
            "render 8000 4000 2000",
            " 9000 2000 2000",
        ]
    );
    let render = &doc["profiles"][0]["calls"][5];
    assert_eq!(
        (render["url"].as_str(), render["lineNumber"].as_i64(), render["columnNumber"].as_i64()),
        (Some("http://a.test/app.js"), Some(9), Some(2))
    );
    // The child process started 5 ms later: its samples at 0..=3 ms are at 5..=8 ms here.
    assert_eq!(
        (p[1]["pid"].as_i64(), p[1]["tid"].as_i64(), p[1]["threadName"].as_str()),
        (Some(200), Some(201), Some("DOM Worker"))
    );
    assert_eq!(calls(&doc, 1), ["onmessage 5000 3000 1000", "work 6000 2000 2000"]);
}

/// Firefox writes JavaScript strings as they are, lone surrogates included, and JSON.parse
/// (the Firefox Profiler's reader) takes them: a function name with one keeps it; markers,
/// which no estimate reads, are read through whatever they hold, but their syntax still counts.
#[test]
fn lone_surrogates_and_markers_read_as_the_profiler_reads_them() {
    let hand = std::fs::read_to_string(fixture("gecko/hand.json")).unwrap();
    let dir = crate::support::tmpdir("gecko", "lone");
    let write = |name: &str, from: &str, to: &str| {
        let text = hand.replace(from, to);
        assert_ne!(text, hand, "{name}: the fixture has {from}");
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let name = write("name.json", r#""render (http"#, r#""ren\ud800der (http"#);
    let o = jscalls(&["calls", &name, "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.matches(r#""functionName":"ren\ud800der""#).count(), 1, "{text}");
    let markers = r#""markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5}, "data": []}"#;
    let odd = write(
        "markers.json",
        markers,
        r#""markers": {"schema": 7, "data": [["x\udc00y", {"deep": [[[null]]]}, 1e400]]}"#,
    );
    assert_eq!(calls_doc(&[&odd])["profiles"], calls_doc(&[&fixture("gecko/hand.json")])["profiles"]);
    let broken = write("broken.json", markers, r#""markers": {"data": [1,]}"#);
    let o = jscalls(&["calls", &broken]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.ends_with(":18:30: expected a JSON value, found ']'\n"), "{err}");
}

#[test]
fn symbols_make_addresses_functions_and_the_tree_changes_shape() {
    let hand = fixture("gecko/hand.json");
    let symbols = format!("app={}", fixture("gecko/app.nm"));
    let doc = calls_doc(&[&hand, "--symbols", &symbols]);
    // 0x1044 and 0x1050 are both in doSomething (0x1040..0x10a0): one call from 2 to 5 ms.
    assert_eq!(
        calls(&doc, 0)[..4],
        [
            "main 1000 11000 2000",
            "doSomething 2000 3000 3000",
            "someInterlude 5000 1000 1000",
            "nsRefreshDriver::Tick 7000 5000 1000"
        ]
    );
    let tree = |extra: &[&str]| {
        let mut a = vec!["tree", hand.as_str(), "--thread", "GeckoMain", "--format", "json"];
        a.extend_from_slice(extra);
        let o = jscalls(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let root = &d["threads"][0]["roots"][0];
        let children: Vec<String> = root["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{} {}", c["func"]["name"].as_str().unwrap(), c["total"]))
            .collect();
        (root["func"]["name"].as_str().unwrap().to_owned(), children)
    };
    assert_eq!(
        tree(&[]),
        (
            "app+0x1004".to_owned(),
            vec![
                "nsRefreshDriver::Tick 5000".into(),
                "app+0x1050 2000".into(),
                "app+0x1044 1000".into(),
                "app+0x10a8 1000".into()
            ]
        )
    );
    assert_eq!(
        tree(&["--symbols", &symbols]),
        (
            "main".to_owned(),
            vec!["nsRefreshDriver::Tick 5000".into(), "doSomething 3000".into(), "someInterlude 1000".into()]
        )
    );
    // A symbols file that is not nm output is a usage error that names its line.
    let bad = crate::support::scratch().join("bad.nm");
    std::fs::write(&bad, "0000000000001000 T main\ngarbage\n").unwrap();
    let o = jscalls(&["calls", &hand, "--symbols", &format!("app={}", bad.display()), "-o", "/dev/null"]);
    assert_eq!(o.status.code(), Some(2));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains(&format!("--symbols app: {}:2:1: expected 'ADDRESS TYPE NAME'", bad.display())), "{said}");
    std::fs::remove_file(bad).unwrap();
}

#[test]
fn a_profile_converted_from_a_cpuprofile_gives_the_cpuprofiles_calls() {
    // fixtures/gecko/node-mixed.gecko.json.gz is from_cpuprofile.py of node-mixed.cpuprofile.gz.
    let gecko = calls_doc(&[&fixture("gecko/node-mixed.gecko.json.gz")]);
    let v8 = calls_doc(&[&fixture("node-mixed.cpuprofile.gz")]);
    let (g, c) = (gecko["profiles"][0]["calls"].as_array().unwrap(), v8["profiles"][0]["calls"].as_array().unwrap());
    assert_eq!(g.len(), c.len());
    assert!(g.len() > 400);
    // The Gecko profile's clock starts at the profile's start; times match to a thousandth of a µs.
    let start = c[0]["ts"].as_f64().unwrap() - g[0]["ts"].as_f64().unwrap();
    for (a, b) in g.iter().zip(c) {
        for key in ["functionName", "url", "lineNumber", "columnNumber", "depth", "nodeDepth", "sampleIndex"] {
            assert_eq!(a[key], b[key], "{key}: {a} vs {b}");
        }
        let near = |x: &serde_json::Value, y: &serde_json::Value, shift: f64| match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x + shift - y).abs() < 1e-3,
            _ => x == y,
        };
        assert!(
            near(&a["ts"], &b["ts"], start)
                && near(&a["dur"], &b["dur"], 0.0)
                && near(&a["selfTime"], &b["selfTime"], 0.0),
            "{a} vs {b}"
        );
    }
}

#[test]
fn version_34_with_its_sources_table_reads_as_the_earlier_layout() {
    // Versions 33 and 34 add a `sources` table (34 with its final columns) beside each
    // process's threads; nothing else changed since 31.
    let hand = fixture("gecko/hand.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&hand).unwrap()).unwrap();
    let sources = serde_json::json!({
        "schema": {"id": 0, "filename": 1, "startLine": 2, "startColumn": 3, "sourceMapURL": 4},
        "data": [["0b1c", "https://example.com/app.js", 1, 1, null]]
    });
    v["meta"]["version"] = 34.into();
    v["sources"] = sources.clone();
    for p in v["processes"].as_array_mut().unwrap() {
        p["meta"]["version"] = 34.into();
        p["sources"] = sources.clone();
    }
    let path = crate::support::scratch().join("gecko-v34.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let (a, b) = (calls_doc(&[&hand]), calls_doc(&[path.to_str().unwrap()]));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(a["profiles"], b["profiles"]);
    assert!(a["profiles"].as_array().unwrap().iter().any(|p| !p["calls"].as_array().unwrap().is_empty()));
}

#[test]
fn a_real_firefox_profile_of_five_sites_has_a_process_per_site() {
    // Firefox ESR 140, headless, on fixtures/record/pages/sites: five iframes from five sites,
    // which Firefox runs in content processes of their own (fixtures/record/firefox-sites.sh).
    five_sites("gecko/firefox-esr-sites.json.gz", "gecko/libc.so.6.nm.gz", "esr-sites");
}

#[test]
fn a_firefox_159_profile_of_five_sites_has_a_process_per_site() {
    // Firefox 159 (Gecko format 36: a `sources` table, traced values, a fifth sample column),
    // the same page (fixtures/record/firefox-sid.sh); its libc is Debian unstable's 2.43.
    let ff = fixture("gecko/firefox-159-sites.json.gz");
    let raw: serde_json::Value = {
        let gz = std::fs::read(&ff).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut text).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    assert_eq!(raw["meta"]["version"], 36);
    assert_eq!(raw["processes"].as_array().unwrap().len(), 8);
    assert!(raw["threads"][0]["samples"]["schema"]["argumentValues"].is_u64());
    // Known: no warning, so --strict passes.
    let o = jscalls(&["calls", &ff, "--strict", "-o", "-"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let collapsed = five_sites("gecko/firefox-159-sites.json.gz", "gecko/libc.so.6-2.43.nm.gz", "159-sites");
    // Its libc's frames become functions with that libc's symbols.
    assert!(!collapsed.contains("libc.so.6+0x"));
    assert!(collapsed.contains("__GI___pthread_mutex_lock"), "{}", &collapsed[..500.min(collapsed.len())]);
    let o = jscalls(&["export", &ff, "--to", "collapsed", "-q"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("libc.so.6+0x"));
}

/// The checks of a profile of fixtures/record/pages/sites: each site's JS in a process of its
/// own, every export going through (with `libc`'s symbols); returns the collapsed stacks.
fn five_sites(ff: &str, libc: &str, name: &str) -> String {
    let ff = fixture(ff);
    let doc = calls_doc(&[&ff]);
    let profiles = doc["profiles"].as_array().unwrap();
    let pids: std::collections::BTreeSet<i64> = profiles.iter().map(|p| p["pid"].as_i64().unwrap()).collect();
    assert!(pids.len() >= 7, "{pids:?}: the parent and at least six content processes");
    assert!(profiles.iter().all(|p| p["threadName"] == "GeckoMain"));
    // Each site's JS runs in one process, and no two sites share one.
    let mut site_pid = std::collections::BTreeMap::new();
    for p in profiles {
        for c in p["calls"].as_array().unwrap() {
            if let Some(site) = c["url"].as_str().and_then(|u| u.strip_suffix("/frame.html")) {
                let pid = p["pid"].as_i64().unwrap();
                assert_eq!(*site_pid.entry(site.to_owned()).or_insert(pid), pid, "{site}");
            }
        }
    }
    let sites: Vec<&String> = site_pid.keys().collect();
    assert_eq!(sites.len(), 5, "{sites:?}");
    assert_eq!(site_pid.values().collect::<std::collections::BTreeSet<_>>().len(), 5);
    let collapsed = exports_go_through(&ff, name, libc);
    assert!(!collapsed.is_empty());
    collapsed
}

/// Every export of `ff` (with the symbols of `libc`, an nm file) succeeds and writes something;
/// returns the collapsed stacks.
fn exports_go_through(ff: &str, name: &str, libc: &str) -> String {
    let dir = crate::support::scratch().join(format!("gecko-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let libc = format!("libc.so.6={}", fixture(libc));
    for out in ["ff.speedscope.json", "ff.json.gz", "ff.collapsed", "ff.svg"] {
        let path = dir.join(out);
        let o = jscalls(&["export", ff, "-o", path.to_str().unwrap(), "--symbols", &libc]);
        assert!(o.status.success(), "{out}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::metadata(&path).unwrap().len() > 1000, "{out}");
    }
    let collapsed = std::fs::read_to_string(dir.join("ff.collapsed")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    collapsed
}

#[test]
fn a_real_firefox_profile_goes_through_tree_and_every_export() {
    // Firefox ESR 140 (format version 31), headless, on recording/pages/compute_worker.html:
    // the parent process and two content processes, short sample rows, 3- and 8-column frames.
    let ff = fixture("gecko/firefox-esr-worker.json.gz");
    let doc = calls_doc(&[&ff]);
    let threads: Vec<(i64, String)> = doc["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["pid"].as_i64().unwrap(), p["threadName"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(threads.len(), 5, "{threads:?}");
    let pids: std::collections::BTreeSet<i64> = threads.iter().map(|t| t.0).collect();
    assert_eq!(pids.len(), 3);
    assert_eq!(threads.iter().filter(|t| t.1 == "DOM Worker").count(), 2);
    // The worker's JS is there by name and place.
    let has_js = doc["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["calls"].as_array().unwrap())
        .any(|c| c["url"].as_str().is_some_and(|u| u.ends_with("/compute_worker.js")));
    assert!(has_js);
    let collapsed = exports_go_through(&ff, "worker", "gecko/libc.so.6.nm.gz");
    // Collapsed stacks weigh what the flat tree's self times add up to, thread by thread.
    let libc = format!("libc.so.6={}", fixture("gecko/libc.so.6.nm.gz"));
    let weight: f64 = collapsed.lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap()).sum();
    let o = jscalls(&["tree", &ff, "--flat", "--format", "json", "--symbols", &libc]);
    let flat: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let total: f64 = flat["threads"].as_array().unwrap().iter().map(|t| t["total"].as_f64().unwrap()).sum();
    assert!((weight - total).abs() <= collapsed.lines().count() as f64, "{weight} vs {total}");
    // With libc's symbols no libc frame stays an address; without, some do.
    assert!(!collapsed.contains("libc.so.6+0x"));
    assert!(
        collapsed.contains("__GI___poll") || collapsed.contains("__poll"),
        "{}",
        &collapsed[..500.min(collapsed.len())]
    );
    let o = jscalls(&["export", &ff, "--to", "collapsed"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("libc.so.6+0x"));
}

/// A JS function is its location (`name (url:line:column)`, its own start), as the Firefox
/// Profiler's func table keys it; the frame's line and column are where each sample was in
/// it. Samples of `fib` at three lines are one function and one call, under `main`; the line
/// a sample was at does not split it.
#[test]
fn a_js_function_sampled_at_several_lines_is_one_function_and_one_call() {
    let profile = r#"{"meta":{"version":27,"startTime":0,"interval":1},"libs":[],"threads":[{
"name":"GeckoMain","pid":1,"tid":1,
"samples":{"schema":{"stack":0,"time":1},"data":[[1,1.0],[2,2.0],[3,3.0],[4,4.0],[0,5.0],[null,6.0]]},
"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1],[0,2],[0,3],[0,4]]},
"frameTable":{"schema":{"location":0,"line":1,"column":2},"data":[[0,3,1],[1,7,51],[1,7,38],[1,8,19],[1,9,2]]},
"stringTable":["main (http://a.test/page.html:3:1)","fib (http://a.test/page.html:7:13)"]}]}"#;
    let path = crate::support::scratch().join("gecko-fib.json");
    std::fs::write(&path, profile).unwrap();
    let p = path.to_str().unwrap();
    let doc = calls_doc(&[p]);
    // main from 1 ms to the idle sample at 6; fib from 1 to 5 ms: one call, not four.
    assert_eq!(calls(&doc, 0), ["main 1000 5000 1000", "fib 1000 4000 4000"]);
    let fib = &doc["profiles"][0]["calls"][1];
    assert_eq!((fib["lineNumber"].as_i64(), fib["columnNumber"].as_i64()), (Some(6), Some(12)));
    let o = jscalls(&["tree", p, "--js-only", "--flat", "--format", "json"]);
    let flat: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = flat["threads"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["func"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fib", "main"]);
}

/// Symbols for a library the profile does not have are a warning that lists the ones it has.
#[test]
fn symbols_for_no_library_of_the_profile_are_a_warning() {
    let o =
        jscalls(&["tree", &fixture("gecko/hand.json"), "--symbols", &format!("libxul.so={}", fixture("gecko/app.nm"))]);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--symbols libxul.so: the profile has no library of that name (it has: app); unused [other]"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let strict = jscalls(&[
        "tree",
        &fixture("gecko/hand.json"),
        "--strict",
        "--symbols",
        &format!("libxul.so={}", fixture("gecko/app.nm")),
    ]);
    assert_eq!(strict.status.code(), Some(1));
}

/// `tree --flat --format json` of `input` (its first thread): (name url line column) → (self,
/// total) µs, and the thread's total.
fn flat_functions(input: &str, extra: &[&str]) -> (std::collections::BTreeMap<String, (f64, f64)>, f64) {
    let mut args = vec!["tree", input, "--flat", "--format", "json"];
    args.extend_from_slice(extra);
    let o = jscalls(&args);
    assert!(o.status.success(), "{input}: {}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let th = &doc["threads"][0];
    let funcs = th["functions"].as_array().unwrap();
    let key = |f: &serde_json::Value| format!("{} {} {} {}", f["name"], f["url"], f["line"], f["column"]);
    let map = funcs.iter().map(|f| (key(&f["func"]), (f["self"].as_f64().unwrap(), f["total"].as_f64().unwrap())));
    (map.collect(), th["total"].as_f64().unwrap())
}

/// Processed Firefox Profiler profiles in: `export --to firefox` (format version 70) read back
/// gives each function with a URL the self and total time the input gives it, and the thread
/// the same total; a profile of version 55 (per-thread tables and strings, `fileName`,
/// `prefix`: an earlier export of node-mixed) reads exactly as the same profile in the layout
/// of version 70 (made from it by `fixtures/record/processed-upgrade.py`, which the Profiler
/// loads).
#[test]
fn processed_profiles_round_trip_and_read_alike_in_versions_55_and_70() {
    let dir = tempfile::tempdir().unwrap();
    for (input, thread) in [("node-mixed.cpuprofile.gz", None), ("chrome-ui.json.gz", Some("CrRendererMain"))] {
        let out = dir.path().join("p.json");
        let o = jscalls(&["export", &fixture(input), "--to", "firefox", "-o", out.to_str().unwrap(), "-q"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let pick: Vec<&str> = thread.map(|t| vec!["--thread", t]).unwrap_or_default();
        let (want, want_total) = flat_functions(&fixture(input), &pick);
        let (got, got_total) = flat_functions(out.to_str().unwrap(), &pick);
        assert!((want_total - got_total).abs() < 1.0, "{input}: total {want_total} µs, read back {got_total} µs");
        let mut compared = 0;
        for (f, (s, t)) in want.iter().filter(|(f, _)| !f.contains(" \"\" ")) {
            let (gs, gt) = got.get(f).unwrap_or_else(|| panic!("{input}: {f} is not read back"));
            let close = |a: f64, b: f64| (a - b).abs() <= 1.0 + 1e-6 * a.abs();
            assert!(close(*s, *gs) && close(*t, *gt), "{input}: {f}: self {s} total {t}, read back {gs} {gt}");
            compared += 1;
        }
        assert!(compared >= 10, "{input}: {compared} functions with a URL");
    }
    let v55 = flat_functions(&fixture("gecko/processed-v55.json.gz"), &[]);
    let v70 = flat_functions(&fixture("gecko/processed-v70.json.gz"), &[]);
    assert_eq!(v55, v70);
    assert_eq!(v55, flat_functions(&fixture("node-mixed.cpuprofile.gz"), &[]), "the fixture is node-mixed's export");
}
