use std::io::Write;

use jscalls::tree::{Func, Span, Stacks};

use super::{micros_as_millis, Rewrite};
use crate::cli::args::WeightArg;
use crate::cli::tree::Chosen;

/// A thread with calls `a>b` (JS, in `url`) or, with no url, native `(program)` and `gc`
/// frames, spans from `start` µs on, and one trace event.
fn thread(pid: i64, tid: i64, name: &str, url: &str, start: f64) -> Chosen {
    let mut stacks = Stacks::new();
    let func = |stacks: &mut Stacks, n: &str| {
        stacks.func(Func { name: n.to_owned(), url: url.to_owned(), script: String::new(), line: None, column: None })
    };
    let (a, b) = if url.is_empty() {
        (func(&mut stacks, "(program)"), func(&mut stacks, "gc"))
    } else {
        (func(&mut stacks, "a"), func(&mut stacks, "b"))
    };
    let (sa, sb) = (stacks.stack_of(&[a]).unwrap(), stacks.stack_of(&[a, b]).unwrap());
    let spans = [(0.0, 10.0, sa), (10.0, 30.5, sb), (30.5, 40.0, sa), (52.0, 60.0, sb)]
        .map(|(s, e, stack)| Span { start: start + s, end: start + e, stack, weight: e - s })
        .to_vec();
    for s in &spans {
        stacks.add(s.stack, s.weight);
    }
    let events = vec![("RunTask".to_owned(), start, 61.0)];
    Chosen { pid, tid, name: Some(name.to_owned()), calls: 3, stacks, spans, samples: None, events }
}

/// Each JavaScript function of the func table has its file (a string added to the
/// thread's table), line and column (1-based); other functions have none.
#[test]
fn functions_have_their_file_line_and_column() {
    let mut c = thread(1, 1, "CrRendererMain", "https://x/app.ts", 0.0);
    let g = c.stacks.func(Func {
        name: "(garbage collector)".into(),
        url: String::new(),
        script: String::new(),
        line: None,
        column: None,
    });
    let at = |l, col| Func {
        name: "b".into(),
        url: "https://x/\"q\".ts".into(),
        script: "3".into(),
        line: Some(l),
        column: Some(col),
    };
    let (b1, b2) = (c.stacks.func(at(9, 0)), c.stacks.func(at(19, 4)));
    let a = c.stacks.funcs.iter().position(|f| f.name == "a").map(jscalls::tree::FuncId::new).unwrap();
    for (path, w) in [(vec![a, b1], 5.0), (vec![a, b2], 6.0), (vec![g], 1.0)] {
        let s = c.stacks.stack_of(&path).unwrap();
        c.spans.push(Span { start: 70.0 + w, end: 71.0 + w, stack: s, weight: 1.0 });
        c.stacks.add(s, 1.0);
    }
    let mut out = Vec::new();
    super::firefox(&[c], WeightArg::SelfTime, "t.json", 1).write_to(&mut out).unwrap();
    let p: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let t = &p["threads"][0];
    let (f, strings) = (&t["funcTable"], t["stringArray"].as_array().unwrap());
    let rows: Vec<String> = (0..f["length"].as_u64().unwrap() as usize)
        .map(|i| {
            let s = |v: &serde_json::Value| {
                v.as_u64().map_or("-".to_owned(), |k| strings[k as usize].as_str().unwrap().to_owned())
            };
            format!("{} | {} {} {}", s(&f["name"][i]), s(&f["fileName"][i]), f["lineNumber"][i], f["columnNumber"][i])
        })
        .collect();
    assert_eq!(
        rows,
        [
            "a https://x/app.ts | https://x/app.ts null null",
            "b https://x/app.ts | https://x/app.ts null null",
            "(garbage collector) | - null null",
            "b https://x/\"q\".ts:10:1 | https://x/\"q\".ts 10 1",
            "b https://x/\"q\".ts:20:5 | https://x/\"q\".ts 20 5",
        ]
    );
}

#[test]
fn threads_written_apart_make_the_one_profile_of_them_all() {
    // Two processes that both have a tid 1 (written "1" and "1.1"), a process whose main
    // thread is not its first, threads that start together (ordered by name, then tid as
    // text: "12" before "7"), and a first thread without JavaScript.
    let kept = vec![
        thread(30, 7, "Worker", "a.js", 2000.0),
        thread(30, 12, "Worker", "a.js", 2000.0),
        thread(30, 1, "Compositor", "", 1500.0),
        thread(10, 1, "CrRendererMain", "", 1000.0),
        thread(10, 4, "DedicatedWorker thread", "w.js", 1200.0),
        thread(30, 30, "CrRendererMain", "b.js", 1700.0),
    ];
    for weight in [WeightArg::SelfTime, WeightArg::Samples] {
        // The one profile, as one writer writes it.
        let super::Rendered::FirefoxThreads { tracing_ms, .. } = super::firefox(&kept, weight, "t.json", 1) else {
            panic!("several threads are written apart")
        };
        let mut order: Vec<&Chosen> = kept.iter().collect();
        order.sort_by_key(|c| (c.pid, c.tid));
        let base = super::Base {
            product: "jscalls: t.json".to_owned(),
            // With counts, the mean span: (10 + 20.5 + 9.5 + 8) / 4 = 12 µs.
            interval_ns: if weight == WeightArg::Samples { 12_000 } else { 1000 },
            zero: 1000.0,
            counts: weight == WeightArg::Samples,
        };
        let processes = super::Process::all(&order, &base);
        let with: Vec<_> = order.iter().map(|c| (*c, processes.iter().find(|p| p.pid == c.pid).unwrap())).collect();
        let mut whole = Vec::new();
        super::write_profile(&base.profile(&with), tracing_ms, &mut whole).unwrap();
        let text = String::from_utf8(whole.clone()).unwrap();
        assert!(text.contains(r#""tid":"1.1""#) && text.contains(r#""usesOnlyOneStackType":false"#), "{text}");
        for threads in [1, 2, 3, 8] {
            let mut apart = Vec::new();
            // The functions' places, which the one writer cannot write, left out.
            let mut r = super::firefox(&kept, weight, "t.json", threads);
            if let super::Rendered::FirefoxThreads { parts, .. } = &mut r {
                parts.iter_mut().for_each(|p| p.places = None);
            }
            r.write_to(&mut apart).unwrap();
            assert_eq!(String::from_utf8(apart).unwrap(), text, "{threads} threads");
        }
    }
}

/// A writer that fails once it has taken `left` bytes.
struct FailAfter {
    left: usize,
}

impl Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() > self.left {
            return Err(std::io::Error::other("disk full"));
        }
        self.left -= buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_output_fails_the_threads_written_apart() {
    // Failing in the head, in an early thread, and in the tail: the error comes back and the
    // helpers stop (the test would hang otherwise).
    let kept: Vec<Chosen> = (0..6).map(|t| thread(1, t, "Worker", "a.js", 1000.0 + t as f64)).collect();
    let mut whole = Vec::new();
    super::firefox(&kept, WeightArg::SelfTime, "t.json", 1).write_to(&mut whole).unwrap();
    for left in [10, whole.len() / 3, whole.len() - 10] {
        for threads in [1, 2, 4] {
            let r = super::firefox(&kept, WeightArg::SelfTime, "t.json", threads).write_to(&mut FailAfter { left });
            assert_eq!(r.unwrap_err().to_string(), "disk full", "{left} bytes, {threads} threads");
        }
    }
}

#[test]
fn the_rewrite_does_not_depend_on_how_the_bytes_come() {
    // Long enough runs of markers and weights to be cut by the writes and by the rewrite's
    // own passes (every 64 KiB); a marker's name that looks like its data stays.
    let (n_markers, n_weights) = (9_000, 30_000);
    let markers = vec![r#"{"type":"TraceEvent"}"#; n_markers].join(",");
    let weights: Vec<String> = (0..n_weights).map(|i| (i * 37 % 5003).to_string()).collect();
    let millis: Vec<String> =
        (0..n_weights).map(|i| ryu_js::Buffer::new().format((i * 37 % 5003) as f64 / 1000.0).to_owned()).collect();
    let thread = |data: &str, ty: &str, w: &str| {
        format!(
            r#"{{"markers":{{"data":[{data}],"name":["{{\"type\":\"TraceEvent\"}}"]}},"samples":{{"weightType":"{ty}","stack":[1,2],"timeDeltas":[0.5,1500],"weight":[{w}]}}}}"#
        )
    };
    let json = format!("[{},{}]", thread(&markers, "samples", &weights.join(",")), thread("", "samples", ""));
    let nulls = vec!["null"; n_markers].join(",");
    let want = format!("[{},{}]", thread(&nulls, "tracing-ms", &millis.join(",")), thread("", "tracing-ms", ""));
    let counts = format!("[{},{}]", thread(&nulls, "samples", &weights.join(",")), thread("", "samples", ""));
    for step in [1, 2, 7, 4093, 65_537, json.len()] {
        for (tracing_ms, want) in [(true, &want), (false, &counts)] {
            let mut out = Vec::new();
            let mut w = Rewrite::new(&mut out, tracing_ms);
            for bit in json.as_bytes().chunks(step) {
                w.write_all(bit).unwrap();
            }
            w.finish().unwrap();
            assert!(String::from_utf8(out).unwrap() == *want, "writes of {step} bytes, tracing_ms {tracing_ms}");
        }
    }
}

#[test]
fn micros_print_as_javascript_prints_their_millis() {
    for us in [0i64, 1, 7, 10, 100, 999, 1000, 1001, 1500, 12_345, 100_000, 2_147_483_647, -7, -1500, -1000] {
        let mut out = Vec::new();
        micros_as_millis(&mut out, us.to_string().as_bytes());
        let want = ryu_js::Buffer::new().format(us as f64 / 1000.0).to_owned();
        assert_eq!(String::from_utf8(out).unwrap(), want, "{us}");
    }
}
