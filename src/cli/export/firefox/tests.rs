use std::io::Write;

use jscalls::tree::{Func, Span, Stacks};

use super::write::push_ms;
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
    let spans = [(0.0, 10.0, sa), (10.0, 30.5, sb), (30.5, 40.0, sa), (52.0, 60.0, sb)].map(|(s, e, stack)| Span {
        start: start + s,
        end: start + e,
        stack,
        weight: e - s,
    });
    for s in &spans {
        stacks.add(s.stack, s.weight);
    }
    let events = vec![(std::sync::Arc::from("RunTask"), start, 61.0)];
    let total = stacks.total();
    let spans = spans.into_iter().collect();
    Chosen { pid, tid, name: Some(name.to_owned()), calls: 3, stacks, spans, samples: None, events, total }
}

/// The profile's function rows: name | file line column.
fn func_rows(p: &serde_json::Value) -> Vec<String> {
    let sh = &p["shared"];
    let (f, strings) = (&sh["funcTable"], sh["stringArray"].as_array().unwrap());
    let string =
        |v: &serde_json::Value| v.as_u64().map_or("-".to_owned(), |k| strings[k as usize].as_str().unwrap().to_owned());
    (0..f["length"].as_u64().unwrap() as usize)
        .map(|i| {
            let file =
                f["source"][i].as_u64().map_or("-".to_owned(), |s| string(&sh["sources"]["filename"][s as usize]));
            format!("{} | {} {} {}", string(&f["name"][i]), file, f["lineNumber"][i], f["columnNumber"][i])
        })
        .collect()
}

fn written(kept: &[Chosen], weight: WeightArg, by_line: bool, threads: usize) -> Vec<u8> {
    let mut out = Vec::new();
    super::firefox(kept.to_vec(), weight, by_line, "t.json", threads).write_to(&mut out).unwrap();
    out
}

/// Each JavaScript function of the func table has its file (in the sources table), line and
/// column (1-based); other functions have none.
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
    let p: serde_json::Value = serde_json::from_slice(&written(&[c], WeightArg::SelfTime, false, 1)).unwrap();
    assert_eq!(p["meta"]["preprocessedProfileVersion"], super::write::VERSION);
    assert_eq!(
        func_rows(&p),
        [
            "a https://x/app.ts | https://x/app.ts null null",
            "b https://x/app.ts | https://x/app.ts null null",
            "(garbage collector) | - null null",
            "b https://x/\"q\".ts:10:1 | https://x/\"q\".ts 10 1",
            "b https://x/\"q\".ts:20:5 | https://x/\"q\".ts 20 5",
        ]
    );
    assert_eq!(p["shared"]["sources"]["length"], 2);
}

/// Threads share the functions they have in common; each keeps its own stacks (a parent an
/// offset back from its child) and samples; the bytes do not depend on how many threads write
/// them.
#[test]
fn threads_share_functions_and_write_the_same_on_any_number_of_threads() {
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
        let one = written(&kept, weight, false, 1);
        for threads in [2, 3, 8] {
            assert!(written(&kept, weight, false, threads) == one, "{threads} threads, {weight:?}");
        }
        let p: serde_json::Value = serde_json::from_slice(&one).unwrap();
        let order: Vec<String> = p["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                format!("{}:{} {}", t["pid"].as_str().unwrap(), t["tid"].as_str().unwrap(), t["name"].as_str().unwrap())
            })
            .collect();
        assert_eq!(
            order,
            [
                "10:1 CrRendererMain",
                "10:4 DedicatedWorker thread",
                "30:30 CrRendererMain",
                "30:1.1 Compositor",
                "30:12 Worker",
                "30:7 Worker"
            ]
        );
        assert_eq!(p["meta"]["usesOnlyOneStackType"], false);
        // a and b of a.js once, though two threads have them.
        let rows = func_rows(&p);
        assert_eq!(rows.iter().filter(|r| r.starts_with("a a.js |")).count(), 1, "{rows:?}");
        let st = &p["shared"]["stackTable"];
        assert_eq!(st["length"], 12);
        let back: Vec<u64> = st["prefixOffset"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(back, [0, 1].repeat(6));
        // Each thread's samples point at its own stacks: the k-th thread's at 2k and 2k + 1.
        for (k, t) in p["threads"].as_array().unwrap().iter().enumerate() {
            let stacks: Vec<Option<u64>> =
                t["samples"]["stack"].as_array().unwrap().iter().map(|v| v.as_u64()).collect();
            let (a, b) = (Some(2 * k as u64), Some(2 * k as u64 + 1));
            assert_eq!(stacks, [a, b, a, None, b, None], "thread {k}");
            assert_eq!(t["samples"]["weightType"], if weight == WeightArg::Samples { "samples" } else { "tracing-ms" });
        }
    }
}

/// With `--by-line`, a line frame under a function of its script is that function's frame at
/// the line; one under a function of another script stays a frame of its own.
#[test]
fn line_frames_become_the_line_of_their_function() {
    let lined = || {
        let mut c = thread(1, 1, "CrRendererMain", "a.js", 0.0);
        let a = c.stacks.funcs.iter().position(|f| f.name == "a").map(jscalls::tree::FuncId::new).unwrap();
        let line = |n: f64, url: &str| Func::line_frame(n, url.to_owned(), "7".to_owned());
        let l3 = c.stacks.func(line(3.0, "a.js"));
        let l9 = c.stacks.func(line(9.0, "a.js"));
        let other = c.stacks.func(line(4.0, "b.js"));
        for (k, f) in [l3, l9, l3, other].into_iter().enumerate() {
            let s = c.stacks.stack_of(&[a, f]).unwrap();
            c.spans.push(Span { start: 100.0 + k as f64, end: 101.0 + k as f64, stack: s, weight: 1.0 });
            c.stacks.add(s, 1.0);
        }
        c
    };
    let p: serde_json::Value = serde_json::from_slice(&written(&[lined()], WeightArg::Samples, true, 1)).unwrap();
    let sh = &p["shared"];
    let (st, fr) = (&sh["stackTable"], &sh["frameTable"]);
    let strings = sh["stringArray"].as_array().unwrap();
    let t = &p["threads"][0]["samples"];
    let leaves: Vec<String> = (6..10)
        .map(|i| {
            let s = t["stack"][i].as_u64().unwrap() as usize;
            let f = st["frame"][s].as_u64().unwrap() as usize;
            let name = strings
                [sh["funcTable"]["name"][fr["func"][f].as_u64().unwrap() as usize].as_u64().unwrap() as usize]
                .as_str()
                .unwrap();
            format!("{name} @{} back {}", fr["line"][f], st["prefixOffset"][s])
        })
        .collect();
    assert_eq!(leaves, ["a a.js @3 back 0", "a a.js @9 back 0", "a a.js @3 back 0", "line 4 b.js:4 @null back 4"]);
    // Without --by-line, the line frames stay frames.
    let p: serde_json::Value = serde_json::from_slice(&written(&[lined()], WeightArg::Samples, false, 1)).unwrap();
    assert!(p["shared"]["frameTable"]["line"].as_array().unwrap().iter().all(|l| l.is_null()));
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
fn a_failing_output_fails_the_threads_written_in_parallel() {
    // Failing in the head, in an early thread, and in the tail: the error comes back and the
    // helpers stop (the test would hang otherwise).
    let kept: Vec<Chosen> = (0..6).map(|t| thread(1, t, "Worker", "a.js", 1000.0 + t as f64)).collect();
    let mut whole = Vec::new();
    super::firefox(kept.clone(), WeightArg::SelfTime, false, "t.json", 1).write_to(&mut whole).unwrap();
    for left in [10, whole.len() / 3, whole.len() - 10] {
        for threads in [1, 2, 4] {
            let r = super::firefox(kept.clone(), WeightArg::SelfTime, false, "t.json", threads)
                .write_to(&mut FailAfter { left });
            assert_eq!(r.unwrap_err().to_string(), "disk full", "{left} bytes, {threads} threads");
        }
    }
}

#[test]
fn nanoseconds_print_as_their_exact_millis() {
    for (ns, want) in [
        (0i64, "0"),
        (1, "0.000001"),
        (1_500_000, "1.5"),
        (607_585_000, "607.585"),
        (-7, "-0.000007"),
        (12_000_001, "12.000001"),
    ] {
        let mut out = String::new();
        push_ms(&mut out, ns);
        assert_eq!(out, want);
    }
    // And read back, the double nearest to the quotient.
    for ns in (0..2_000_000_000_000i64).step_by(7_777_777_777).chain([u32::MAX as i64, 999_999, 1_000_001]) {
        let mut out = String::new();
        push_ms(&mut out, ns);
        assert_eq!(out.parse::<f64>().unwrap(), ns as f64 / 1e6, "{ns}: {out}");
    }
}

/// A thread written a column at a time, a piece of its spans or markers at a time, is the
/// thread written whole, byte for byte: pieces of 1 to 5 spans (a piece's first sample after
/// a gap or not), markers too, on one thread and on several.
#[test]
fn threads_written_in_pieces_are_written_as_whole() {
    let mut kept = vec![thread(10, 1, "CrRendererMain", "a.js", 1000.0), thread(10, 4, "Worker", "", 1200.5)];
    for (k, c) in kept.iter_mut().enumerate() {
        // Seven events: instants and intervals.
        for j in 0..6 {
            let ts = 1000.0 + f64::from(j) * 7.25 + k as f64;
            c.events.push((std::sync::Arc::from(if j % 2 == 0 { "A" } else { "B" }), ts, f64::from(j % 3)));
        }
    }
    for weight in [WeightArg::SelfTime, WeightArg::Samples] {
        let whole = written(&kept, weight, false, 1);
        for (piece, threads) in [(1, 1), (2, 2), (3, 1), (4, 3), (5, 2), (7, 1)] {
            let super::super::Rendered::Firefox { head, parts, .. } =
                super::firefox(kept.clone(), weight, false, "t.json", threads)
            else {
                unreachable!("a Firefox profile")
            };
            let mut out = Vec::new();
            super::write::write_in_pieces(&head, &parts, threads, piece, &mut out).unwrap();
            assert!(out == whole, "{weight:?}, pieces of {piece}:\n{}", String::from_utf8_lossy(&out));
        }
        let p: serde_json::Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(p["threads"][0]["markers"]["length"], 7);
        assert_eq!(p["threads"][0]["samples"]["length"], 6);
    }
}
