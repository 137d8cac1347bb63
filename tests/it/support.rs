//! Builders for small hand-made inputs, a compact rendering of calls, and the command.

use jscalls::{analyze, Analysis, Config, CpuProfileMode, EngineVersion, Estimator, Source};

/// A CDP node: `(id, name, children)`; every frame has scriptId "Peperoni", url "", line/col −1
/// (the upstream tests' frames), unless the name carries `@url` or `:col`.
pub fn node(id: i64, name: &str, children: &[i64]) -> String {
    let (name, url) = match name.split_once('@') {
        Some((n, u)) => (n, u),
        None => (name, ""),
    };
    let (name, col) = match name.split_once(':') {
        Some((n, c)) => (n, c.parse::<i64>().unwrap()),
        None => (name, -1),
    };
    let kids: Vec<String> = children.iter().map(|c| c.to_string()).collect();
    format!(
        r#"{{"id":{id},"callFrame":{{"functionName":"{name}","scriptId":"Peperoni","url":"{url}","lineNumber":-1,"columnNumber":{col}}},"children":[{}]}}"#,
        kids.join(",")
    )
}

/// A `.cpuprofile` document.
pub fn cpuprofile(nodes: &[String], samples: &[i64], deltas: &[f64], start: f64, end: f64) -> String {
    format!(
        r#"{{"nodes":[{}],"samples":{:?},"timeDeltas":{},"startTime":{start},"endTime":{end}}}"#,
        nodes.join(","),
        samples,
        nums(deltas)
    )
}

fn nums(v: &[f64]) -> String {
    let s: Vec<String> = v.iter().map(|x| js_number(*x)).collect();
    format!("[{}]", s.join(","))
}

/// A number as JavaScript prints it.
pub fn js_number(x: f64) -> String {
    ryu_js::Buffer::new().format(x).to_owned()
}

/// A trace with one profile on pid 0, tid 0 (Profile at ts 0, one chunk), plus `events`
/// (JSON objects; `pid`/`tid` 0 are added) and optional `trace_ids`.
pub fn trace(nodes: &[String], samples: &[i64], deltas: &[f64], trace_ids: &str, events: &[String]) -> String {
    let mut all = vec![
        r#"{"name":"Profile","ph":"P","pid":0,"tid":0,"ts":0,"id":"0x1","args":{"data":{"startTime":0}}}"#.to_owned(),
        format!(
            r#"{{"name":"ProfileChunk","ph":"P","pid":0,"tid":9,"ts":0,"id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[{}],"samples":{:?}{}}},"timeDeltas":{}}}}}}}"#,
            nodes.join(","),
            samples,
            if trace_ids.is_empty() { String::new() } else { format!(r#","trace_ids":{trace_ids}"#) },
            nums(deltas)
        ),
    ];
    for e in events {
        all.push(format!(r#"{{"pid":0,"tid":0,"cat":"test",{}"#, &e[1..]));
    }
    format!("[{}]", all.join(",\n"))
}

/// An `X` event.
pub fn x(name: &str, ts: f64, dur: f64) -> String {
    format!(r#"{{"name":"{name}","ph":"X","ts":{ts},"dur":{dur}}}"#)
}

/// An instant with a `sampleTraceId` in `args.data`.
pub fn instant(name: &str, ts: f64, trace_id: &str) -> String {
    format!(r#"{{"name":"{name}","ph":"I","s":"t","ts":{ts},"args":{{"data":{{"sampleTraceId":{trace_id}}}}}}}"#)
}

/// Runs jscalls on JSON text, following the published engine (0.0.65) unless `f` says otherwise:
/// the spec's tables are that engine's answers.
pub fn run_with(json: &str, f: impl FnOnce(&mut Config)) -> Analysis {
    let mut cfg = Config::default();
    cfg.engine = EngineVersion::V0_0_65;
    f(&mut cfg);
    analyze(&Source::Memory(json.as_bytes().into()), &cfg).unwrap_or_else(|e| panic!("{e}\n{json}"))
}

/// Runs with the published engine (0.0.65).
pub fn run(json: &str) -> Analysis {
    run_with(json, |_| {})
}

/// The Performance panel's algorithm for a `.cpuprofile`.
pub fn run_panel(json: &str) -> Analysis {
    run_with(json, |c| c.cpuprofile_mode = CpuProfileMode::PerformancePanel)
}

/// The newest DevTools behaviour.
pub fn run_latest(json: &str) -> Analysis {
    run_with(json, |c| c.engine = EngineVersion::Latest)
}

/// The calls of the only thread, in creation order, as `name@ts+dur[nNODE,sSAMPLE]`.
pub fn calls(a: &Analysis) -> Vec<String> {
    assert_eq!(a.threads().len(), 1, "expected one profile");
    let t = a.threads().next().unwrap();
    t.calls()
        .map(|c| {
            format!(
                "{}@{}+{}[n{},s{}]",
                c.frame().function_name(),
                js_number(c.ts()),
                js_number(c.dur()),
                c.node_id(),
                c.sample_index()
            )
        })
        .collect()
}

/// Like [`calls`] without the node and sample.
pub fn spans(a: &Analysis) -> Vec<String> {
    calls(a).into_iter().map(|c| c[..c.find('[').unwrap()].to_owned()).collect()
}

/// `(name, ts, dur, self, depth)` of a call.
pub type TreeRow = (String, f64, f64, Option<f64>, Option<i32>);

/// `(name, ts, dur, self, depth)` per call in creation order, for the CPU-profile-mode tables.
pub fn tree_rows(a: &Analysis) -> Vec<TreeRow> {
    let t = a.threads().next().unwrap();
    t.calls().map(|c| (c.frame().function_name().into_owned(), c.ts(), c.dur(), c.self_time(), c.depth())).collect()
}

/// `input` estimated with midway (with bounds) and log-midway: the same calls as DevTools',
/// and every call of DevTools' flame chart in theirs (a moved boundary crosses or meets no
/// event's edge and leaves no parent). Per estimator, the calls compared and how many moved.
pub fn refined_keep_the_flame_chart(input: &std::path::Path) -> Vec<(Estimator, usize, usize)> {
    let plain = analyze(&Source::file(input), &Config::default()).unwrap();
    let mut out = Vec::new();
    for estimator in [Estimator::Midway, Estimator::LogMidway] {
        let mut cfg = Config::default();
        (cfg.estimator, cfg.bounds) = (estimator, estimator == Estimator::Midway);
        let refined = analyze(&Source::file(input), &cfg).unwrap();
        let (mut n, mut moved) = (0, 0);
        for (a, b) in plain.threads().zip(refined.threads()) {
            assert_eq!(a.len(), b.len(), "{}", input.display());
            for (x, y) in a.calls().zip(b.calls()) {
                assert_eq!((x.node_id(), x.sample_index()), (y.node_id(), y.sample_index()), "{}", input.display());
                assert!(
                    x.self_time().is_none() || y.self_time().is_some(),
                    "{}, {estimator:?}: {y:?} (DevTools: {x:?}) left the flame chart",
                    input.display()
                );
                n += 1;
                moved += usize::from(x.ts() != y.ts() || x.dur() != y.dur());
            }
        }
        out.push((estimator, n, moved));
    }
    out
}

/// The real viewers (`JSCALLS_VIEWERS`, else `target/viewers`, which `.ci/run` makes from
/// `../shared/viewers`), when they, Chromium and Node are here; otherwise `test` says it is
/// skipped (and fails when `JSCALLS_REQUIRE_VIEWERS=1`).
pub fn viewers(test: &str) -> Option<std::path::PathBuf> {
    use std::path::{Path, PathBuf};
    let viewers =
        std::env::var_os("JSCALLS_VIEWERS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target/viewers"));
    let ready = viewers.join("node_modules/speedscope").is_dir()
        && ["/usr/bin/chromium", "/usr/bin/chromium-browser"].iter().any(|p| Path::new(p).exists())
        && std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if ready {
        return Some(viewers);
    }
    let require = std::env::var("JSCALLS_REQUIRE_VIEWERS").is_ok_and(|v| v == "1");
    assert!(!require, "{} has no viewers and JSCALLS_REQUIRE_VIEWERS is set", viewers.display());
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "\nSKIPPED {test}: no Chromium, Node or viewers in {} (.ci/run makes them)",
        viewers.display()
    );
    None
}

/// `node check.mjs ARGS` of the real viewers (`viewers`, from [`viewers`]): whether the viewer
/// showed the file as asked, and what the check printed (its JSON line, then its stderr).
pub fn viewer_check(viewers: &std::path::Path, args: &[&str]) -> (bool, String) {
    let o = std::process::Command::new("node").arg(viewers.join("check.mjs")).args(args).output().unwrap();
    (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

/// The command, to be given its arguments.
pub fn jscalls_command() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_jscalls"))
}

/// The command run with `args`, to its end.
pub fn jscalls(args: &[&str]) -> std::process::Output {
    jscalls_command().args(args).output().unwrap()
}

/// This run's scratch folder, in Cargo's `target/tmp` (the process id keeps runs apart). The
/// first call removes the folders of earlier runs whose process is gone, so that runs do not
/// pile up and the last run's files stay to be read after a failure.
pub fn scratch() -> &'static std::path::Path {
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
        let own = std::process::id();
        for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let pid = name.to_str().and_then(|n| n.strip_prefix("jscalls-it-")).and_then(|n| n.parse::<u32>().ok());
            if pid.is_some_and(|pid| pid != own && !alive(pid)) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let root = base.join(format!("jscalls-it-{own}"));
        std::fs::create_dir_all(&root).unwrap();
        root
    })
}

/// Whether a process of this id runs; where that cannot be told, it is taken to run.
fn alive(pid: u32) -> bool {
    !cfg!(target_os = "linux") || std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// An empty directory of this run's scratch folder, for the test `name` of the test file `scope`.
pub fn tmpdir(scope: &str, name: &str) -> std::path::PathBuf {
    let d = scratch().join(format!("{scope}-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `go tool pprof`, when Go is here; otherwise the test says it is skipped (and fails when
/// `JSCALLS_REQUIRE_GO=1`, as `.ci/run` sets where it could install Go).
pub fn go(test: &str) -> Option<()> {
    if std::process::Command::new("go").arg("version").output().is_ok_and(|o| o.status.success()) {
        return Some(());
    }
    assert!(std::env::var("JSCALLS_REQUIRE_GO").map_or(true, |v| v != "1"), "no go and JSCALLS_REQUIRE_GO is set");
    eprintln!("\nSKIPPED {test}: no go (apt-get install golang-go)");
    None
}

/// A pprof duration (`15.96ms`, `1.20s`, `950us`, `0`) in ms.
pub fn pprof_ms(v: &str) -> f64 {
    let (n, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = v.strip_suffix("ns") {
        (n, 1e-6)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1e3)
    } else {
        (v, 0.0)
    };
    n.parse::<f64>().unwrap() * scale
}

/// `go tool pprof -top [ARGS] FILE` (HOME in `dir`): its text, and its rows as (name, flat ms).
pub fn pprof_top(file: &std::path::Path, dir: &std::path::Path, args: &[&str]) -> (String, Vec<(String, f64)>) {
    let top = std::process::Command::new("go")
        .args(["tool", "pprof", "-top"])
        .args(args)
        .arg(file)
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(top.status.success(), "{}", String::from_utf8_lossy(&top.stderr));
    let text = String::from_utf8_lossy(&top.stdout).into_owned();
    // `flat flat% sum% cum cum% name` after the header.
    let rows = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells[5..].join(" "), pprof_ms(cells[0]))
        })
        .collect();
    (text, rows)
}
