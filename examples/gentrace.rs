//! Writes a realistic Chrome trace of any size, deterministic by seed, for benchmarks and for
//! checking parity with DevTools at scale.
//!
//! ```text
//! cargo run --release --example gentrace -- --size 100M --seed 1 -o big.json
//! ```
//!
//! The trace has a browser process whose `TracingStartedInBrowser` lists two renderers; three
//! profiled threads (two renderer main threads and a worker) with `Profile`/`ProfileChunk`
//! streams sampled every ~100 µs (with jitter and the occasional negative delta), deep and
//! recursive stacks, GC, `(program)` and `(idle)` samples; tasks made of RunTask, FunctionCall,
//! EvaluateScript, TimerFire, EventDispatch, RunMicrotasks, forced Layouts, instants and B/E
//! pairs; and, on other threads and processes, the bulk of unrelated events real traces carry
//! (scheduler tasks, raster, counters, async and flow events).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

struct Func {
    name: String,
    script: u32,
    url: String,
    line: u32,
    col: u32,
    callees: Vec<usize>,
    recursive: bool,
}

fn program(rng: &mut Rng, n: usize) -> Vec<Func> {
    let words = [
        "render", "update", "compute", "parse", "layout", "dispatch", "reduce", "map", "apply", "handle", "emit",
        "flush", "visit", "walk", "resolve", "commit", "schedule", "measure", "diff", "patch",
    ];
    let mut funcs: Vec<Func> = (0..n)
        .map(|i| {
            let script = 10 + (i / 25) as u32;
            Func {
                name: if i % 17 == 5 { String::new() } else { format!("{}{}", words[i % words.len()], i) },
                script,
                url: format!("https://app.example/static/js/chunk-{script}.js"),
                line: (i * 37 % 900) as u32,
                col: (i * 13 % 120) as u32,
                callees: Vec::new(),
                recursive: i % 11 == 3,
            }
        })
        .collect();
    for f in &mut funcs {
        let k = 2 + rng.below(5) as usize;
        f.callees = (0..k).map(|_| rng.below(n as u64) as usize).collect();
    }
    funcs
}

/// One sampled thread: its profile state and its pending events.
struct Sampled {
    pid: u32,
    tid: u32,
    sampler_tid: u32,
    id: &'static str,
    nodes: HashMap<(u32, usize), u32>,
    /// Nodes not yet written in a chunk: (id, parent, func or meta name).
    new_nodes: Vec<(u32, u32, Result<usize, &'static str>)>,
    next_node: u32,
    samples: Vec<u32>,
    deltas: Vec<i64>,
    last_sample_t: i64,
    stack: Vec<usize>,
    /// Node id per stack depth.
    stack_nodes: Vec<u32>,
    meta: HashMap<&'static str, u32>,
}

impl Sampled {
    fn new(pid: u32, tid: u32, sampler_tid: u32, id: &'static str, start: i64) -> Sampled {
        let mut s = Sampled {
            pid,
            tid,
            sampler_tid,
            id,
            nodes: HashMap::new(),
            new_nodes: vec![(1, 0, Err("(root)"))],
            next_node: 2,
            samples: Vec::new(),
            deltas: Vec::new(),
            last_sample_t: start,
            stack: Vec::new(),
            stack_nodes: Vec::new(),
            meta: HashMap::new(),
        };
        for m in ["(program)", "(idle)", "(garbage collector)"] {
            let id = s.next_node;
            s.next_node += 1;
            s.meta.insert(m, id);
            s.new_nodes.push((id, 1, Err(m)));
        }
        s
    }

    fn node_for_stack(&mut self) -> u32 {
        while self.stack_nodes.len() < self.stack.len() {
            let d = self.stack_nodes.len();
            let parent = if d == 0 { 1 } else { self.stack_nodes[d - 1] };
            let f = self.stack[d];
            let next = &mut self.next_node;
            let new_nodes = &mut self.new_nodes;
            let id = *self.nodes.entry((parent, f)).or_insert_with(|| {
                let id = *next;
                *next += 1;
                new_nodes.push((id, parent, Ok(f)));
                id
            });
            self.stack_nodes.push(id);
        }
        self.stack_nodes.truncate(self.stack.len());
        *self.stack_nodes.last().unwrap_or(&self.meta["(program)"])
    }

    fn sample(&mut self, t: i64, node: u32) {
        self.samples.push(node);
        self.deltas.push(t - self.last_sample_t);
        self.last_sample_t = t;
    }
}

struct Gen {
    rng: Rng,
    funcs: Vec<Func>,
    out: BufWriter<Box<dyn Write>>,
    written: u64,
    first: bool,
    line: String,
}

impl Gen {
    fn emit(&mut self, ev: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
            self.written += 2;
        }
        self.first = false;
        self.out.write_all(ev.as_bytes())?;
        self.written += ev.len() as u64;
        Ok(())
    }

    fn flush_chunk(&mut self, s: &mut Sampled, ts: i64) -> io::Result<()> {
        if s.samples.is_empty() && s.new_nodes.is_empty() {
            return Ok(());
        }
        let mut e = String::with_capacity(4096);
        let _ = write!(e, r#"{{"args":{{"data":{{"cpuProfile":{{"nodes":["#);
        for (k, (id, parent, what)) in s.new_nodes.drain(..).enumerate() {
            if k > 0 {
                e.push(',');
            }
            let (name, script, url, line, col, code) = match what {
                Ok(f) => {
                    let f = &self.funcs[f];
                    (f.name.as_str(), f.script, f.url.as_str(), f.line as i64, f.col as i64, "JS")
                }
                Err(m) => (m, 0, "", -1, -1, "other"),
            };
            let _ = write!(e, r#"{{"callFrame":{{"codeType":"{code}","functionName":"{name}","scriptId":{script}"#);
            if !url.is_empty() {
                let _ = write!(e, r#","url":"{url}","lineNumber":{line},"columnNumber":{col}"#);
            }
            e.push('}');
            let _ = write!(e, r#","id":{id}"#);
            if parent != 0 {
                let _ = write!(e, r#","parent":{parent}"#);
            }
            e.push('}');
        }
        e.push_str(r#"],"samples":["#);
        for (k, n) in s.samples.drain(..).enumerate() {
            if k > 0 {
                e.push(',');
            }
            let _ = write!(e, "{n}");
        }
        e.push_str(r#"]},"lines":["#);
        let n = s.deltas.len();
        for k in 0..n {
            e.push_str(if k > 0 { ",0" } else { "0" });
        }
        e.push_str(r#"],"timeDeltas":["#);
        for (k, d) in s.deltas.drain(..).enumerate() {
            if k > 0 {
                e.push(',');
            }
            let _ = write!(e, "{d}");
        }
        let _ = write!(
            e,
            r#"]}}}},"cat":"disabled-by-default-v8.cpu_profiler","id":"{}","name":"ProfileChunk","ph":"P","pid":{},"tid":{},"ts":{ts},"tts":{}}}"#,
            s.id,
            s.pid,
            s.sampler_tid,
            ts / 3
        );
        self.emit(&e)
    }

    /// Advances a sampled thread's clock to `until`, sampling the current stack (or `meta`).
    fn run_samples(&mut self, s: &mut Sampled, until: i64, meta: Option<&'static str>, js: bool) -> io::Result<()> {
        loop {
            let mut dt = 100 + self.rng.below(60) as i64 - 20;
            if self.rng.chance(0.002) {
                dt = -(5 + self.rng.below(25) as i64);
            }
            let t = s.last_sample_t + dt;
            if t >= until {
                return Ok(());
            }
            if js && !s.stack.is_empty() {
                // Random walk of the JS stack: push a callee (recursion included), pop, or stay.
                let r = self.rng.below(100);
                let top = *s.stack.last().unwrap();
                if r < 34 && s.stack.len() < 160 {
                    let f = &self.funcs[top];
                    let next = if f.recursive && self.rng.chance(0.6) {
                        top
                    } else {
                        f.callees[self.rng.below(f.callees.len() as u64) as usize]
                    };
                    s.stack.push(next);
                } else if r < 66 && s.stack.len() > 1 {
                    s.stack.pop();
                }
            }
            let node = if let Some(m) = meta {
                s.meta[m]
            } else if js && self.rng.chance(0.01) {
                s.meta["(garbage collector)"]
            } else if js && !s.stack.is_empty() && !self.rng.chance(0.005) {
                s.node_for_stack()
            } else {
                s.meta["(program)"]
            };
            s.sample(t, node);
            if s.samples.len() >= 100 || s.new_nodes.len() >= 10 {
                self.flush_chunk(s, t)?;
            }
        }
    }

    #[allow(clippy::too_many_arguments)] // the fields of one event, in the order they are written
    fn x(&mut self, name: &str, cat: &str, pid: u32, tid: u32, ts: i64, dur: i64, args: &str) -> io::Result<()> {
        let mut e = std::mem::take(&mut self.line);
        e.clear();
        let _ = write!(
            e,
            r#"{{"args":{args},"cat":"{cat}","dur":{dur},"name":"{name}","ph":"X","pid":{pid},"tdur":{},"tid":{tid},"ts":{ts},"tts":{}}}"#,
            dur * 9 / 10,
            ts / 3
        );
        let r = self.emit(&e);
        self.line = e;
        r
    }

    /// One task on a sampled thread, starting now; returns its end.
    fn task(&mut self, s: &mut Sampled, frame: &str, k: u64) -> io::Result<i64> {
        let (pid, tid) = (s.pid, s.tid);
        let start = s.last_sample_t + 20 + self.rng.below(200) as i64;
        let long = self.rng.chance(0.1);
        let js_len = 300 + self.rng.below(if long { 40_000 } else { 4000 }) as i64;
        let kind = self.rng.below(4);
        let inv_start = start + 5 + self.rng.below(30) as i64;
        let inv_end = inv_start + js_len;
        let end = inv_end + 30 + self.rng.below(200) as i64;
        let tl = "devtools.timeline";
        self.x(
            "RunTask",
            "disabled-by-default-devtools.timeline",
            pid,
            tid,
            start,
            end - start,
            r#"{"src_file":"../../third_party/blink/renderer/core/dom/document.cc","src_func":"Run"}"#,
        )?;
        let (outer, inner) = match kind {
            0 => ("TimerFire", Some("FunctionCall")),
            1 => ("EventDispatch", None),
            2 => ("EvaluateScript", Some("v8.run")),
            _ => ("FunctionCall", None),
        };
        let outer_args = match outer {
            "TimerFire" => format!(r#"{{"data":{{"frame":"{frame}","timerId":{k}}}}}"#),
            "EventDispatch" => r#"{"data":{"type":"click"}}"#.to_owned(),
            "EvaluateScript" => format!(
                r#"{{"data":{{"frame":"{frame}","url":"https://app.example/static/js/main.js","lineNumber":1,"columnNumber":1}}}}"#
            ),
            _ => format!(
                r#"{{"data":{{"frame":"{frame}","functionName":"onMessage","scriptId":"12","url":"https://app.example/static/js/main.js","lineNumber":4,"columnNumber":2}}}}"#
            ),
        };
        self.x(outer, tl, pid, tid, inv_start, js_len, &outer_args)?;
        if let Some(inner) = inner {
            let a = if inner == "FunctionCall" {
                format!(
                    r#"{{"data":{{"frame":"{frame}","functionName":"tick","scriptId":"11","url":"https://app.example/static/js/main.js","lineNumber":9,"columnNumber":2}}}}"#
                )
            } else {
                r#"{}"#.to_owned()
            };
            self.x(inner, if inner == "v8.run" { "v8" } else { tl }, pid, tid, inv_start + 2, js_len - 4, &a)?;
        }
        // The JS: a random walk from an entry function, with a forced layout in the middle.
        let entry = self.rng.below(self.funcs.len() as u64) as usize;
        s.stack.clear();
        s.stack.push(entry);
        let mid = inv_start + js_len / 2;
        self.run_samples(s, mid, None, true)?;
        if self.rng.chance(0.5) {
            let ldur = 50 + self.rng.below(400) as i64;
            let l = format!(
                r#"{{"beginData":{{"dirtyObjects":12,"frame":"{frame}","partialLayout":false,"totalObjects":340}},"endData":{{"layoutRoots":[]}}}}"#
            );
            self.x("Layout", tl, pid, tid, mid, ldur, &l)?;
            self.x("UpdateLayoutTree", tl, pid, tid, mid + 1, ldur / 3, r#"{"elementCount":12}"#)?;
        }
        if self.rng.chance(0.3) {
            let ts = mid + 7;
            let e = format!(
                r#"{{"args":{{"data":{{"frame":"{frame}","message":"tick {k}"}}}},"cat":"devtools.timeline","name":"TimeStamp","ph":"I","pid":{pid},"s":"t","tid":{tid},"ts":{ts}}}"#
            );
            self.emit(&e)?;
        }
        if self.rng.chance(0.2) {
            let (b, e2) = (mid + 3, mid + 3 + self.rng.below(300) as i64);
            self.emit(&format!(r#"{{"args":{{}},"cat":"blink","name":"HTMLDocumentParser::PumpTokenizer","ph":"B","pid":{pid},"tid":{tid},"ts":{b}}}"#))?;
            self.emit(&format!(r#"{{"args":{{}},"cat":"blink","name":"HTMLDocumentParser::PumpTokenizer","ph":"E","pid":{pid},"tid":{tid},"ts":{e2}}}"#))?;
        }
        self.run_samples(s, inv_end, None, true)?;
        s.stack.clear();
        if self.rng.chance(0.4) {
            let mstart = inv_end + 5;
            let mdur = 100 + self.rng.below(1500) as i64;
            self.x("RunMicrotasks", "v8.execute", pid, tid, mstart, mdur, r#"{"microtask_count":3}"#)?;
            s.stack.push(self.rng.below(self.funcs.len() as u64) as usize);
            self.run_samples(s, mstart + mdur, None, true)?;
            s.stack.clear();
            return Ok(end.max(mstart + mdur + 10));
        }
        self.run_samples(s, end, Some("(program)"), false)?;
        Ok(end)
    }

    /// Unrelated events on a thread without a profile.
    fn bulk(&mut self, pid: u32, tid: u32, t: i64, n: u64) -> io::Result<()> {
        let mut ts = t;
        for k in 0..n {
            ts += 5 + self.rng.below(200) as i64;
            let (r, a, b, c) = (self.rng.below(8), self.rng.below(1000), self.rng.next(), self.rng.below(1 << 30));
            let ev = match r {
                0 => {
                    let d = 10 + a as i64 % 300;
                    self.x(
                        "ThreadControllerImpl::RunTask",
                        "toplevel",
                        pid,
                        tid,
                        ts,
                        d,
                        r#"{"src_file":"../../cc/trees/single_thread_proxy.cc","src_func":"ScheduleAnimation"}"#,
                    )?;
                    continue;
                }
                1 => {
                    let d = 40 + a as i64 % 900;
                    let args = format!(
                        r#"{{"tileData":{{"layerId":{},"sourceFrameNumber":{k},"tileId":{{"id_ref":"0x{:x}"}},"tileResolution":"HIGH_RESOLUTION"}}}}"#,
                        k % 7,
                        b >> 20
                    );
                    self.x("RasterTask", "disabled-by-default-devtools.timeline", pid, tid, ts, d, &args)?;
                    continue;
                }
                2 => format!(
                    r#"{{"args":{{"data":{{"jsHeapSizeUsed":{},"documents":2,"nodes":{},"jsEventListeners":31}}}},"cat":"disabled-by-default-devtools.timeline","name":"UpdateCounters","ph":"I","pid":{pid},"s":"t","tid":{tid},"ts":{ts}}}"#,
                    4_000_000 + c % 900_000,
                    300 + k % 50
                ),
                3 => format!(
                    r#"{{"args":{{"cc_frame_count":{k}}},"cat":"disabled-by-default-devtools.timeline","name":"Graphics.Pipeline","ph":"b","id2":{{"local":"0x{:x}"}},"pid":{pid},"tid":{tid},"ts":{ts}}}"#,
                    k
                ),
                4 => format!(
                    r#"{{"args":{{}},"cat":"disabled-by-default-devtools.timeline","name":"Graphics.Pipeline","ph":"e","id2":{{"local":"0x{:x}"}},"pid":{pid},"tid":{tid},"ts":{ts}}}"#,
                    k.saturating_sub(1)
                ),
                5 => format!(
                    r#"{{"args":{{"value":{c}}},"cat":"v8","name":"V8.MemoryHeapCommitted","ph":"C","pid":{pid},"tid":{tid},"ts":{ts}}}"#
                ),
                6 => format!(
                    r#"{{"bind_id":"0x{:x}","cat":"toplevel.flow","flow_out":true,"name":"ThreadPool_PostTask","ph":"i","pid":{pid},"s":"t","tid":{tid},"ts":{ts}}}"#,
                    b >> 16
                ),
                _ => {
                    let d = 3 + a as i64 % 60;
                    let args =
                        format!(r#"{{"state":{{"frame_rate":60,"needs_begin_frame":{},"visible":true}}}}"#, k % 2 == 0);
                    self.x("ScheduledTasks", "cc,benchmark", pid, tid, ts, d, &args)?;
                    continue;
                }
            };
            self.emit(&ev)?;
        }
        Ok(())
    }
}

fn parse_size(s: &str) -> u64 {
    let (n, mul) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    (n.parse::<f64>().expect("size: a number with K, M or G") * mul as f64) as u64
}

fn main() -> io::Result<()> {
    let mut size = 100u64 << 20;
    let mut seed = 1u64;
    let mut out: Option<String> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--size" => {
                size = parse_size(&args[i + 1]);
                i += 1;
            }
            "--seed" => {
                seed = args[i + 1].parse().expect("--seed N");
                i += 1;
            }
            "-o" | "--output" => {
                out = Some(args[i + 1].clone());
                i += 1;
            }
            "-h" | "--help" => {
                eprintln!("usage: gentrace [--size 100M] [--seed N] [-o OUT.json]   (stdout by default)");
                return Ok(());
            }
            a => panic!("unknown argument {a}"),
        }
        i += 1;
    }
    let sink: Box<dyn Write> = match &out {
        Some(p) => Box::new(std::fs::File::create(p)?),
        None => Box::new(io::stdout()),
    };
    let mut rng = Rng(seed);
    let funcs = program(&mut rng, 240);
    let mut g =
        Gen { rng, funcs, out: BufWriter::with_capacity(1 << 20, sink), written: 0, first: true, line: String::new() };
    g.out.write_all(b"{\"traceEvents\":[\n")?;
    let t0: i64 = 250_000_000_000 + (seed as i64 % 1000) * 1_000_000;
    let frames = r#"[{"frame":"F0A1","isInPrimaryMainFrame":true,"isOutermostMainFrame":true,"name":"","processId":2000,"url":"https://app.example/"},{"frame":"F0B2","isInPrimaryMainFrame":true,"isOutermostMainFrame":false,"name":"ads","parent":"F0A1","processId":3000,"url":"https://ads.example/frame.html"}]"#;
    for (pid, name) in [(1000, "Browser"), (2000, "Renderer"), (3000, "Renderer"), (4000, "GPU Process")] {
        g.emit(&format!(r#"{{"args":{{"name":"{name}"}},"cat":"__metadata","name":"process_name","ph":"M","pid":{pid},"tid":0,"ts":0}}"#))?;
    }
    for (pid, tid, name) in [
        (1000, 1, "CrBrowserMain"),
        (2000, 1, "CrRendererMain"),
        (2000, 7, "DedicatedWorker thread"),
        (2000, 11, "Compositor"),
        (3000, 1, "CrRendererMain"),
        (4000, 1, "CrGpuMain"),
        (2000, 99, "v8:ProfEvntProc"),
        (3000, 99, "v8:ProfEvntProc"),
    ] {
        g.emit(&format!(r#"{{"args":{{"name":"{name}"}},"cat":"__metadata","name":"thread_name","ph":"M","pid":{pid},"tid":{tid},"ts":0}}"#))?;
    }
    g.emit(&format!(r#"{{"args":{{"data":{{"frameTreeNodeId":1,"frames":{frames},"persistentIds":true}}}},"cat":"disabled-by-default-devtools.timeline","name":"TracingStartedInBrowser","ph":"I","pid":1000,"s":"t","tid":1,"ts":{t0}}}"#))?;
    let mut threads = vec![
        Sampled::new(2000, 1, 99, "0x1", t0 + 100),
        Sampled::new(2000, 7, 99, "0x2", t0 + 150),
        Sampled::new(3000, 1, 99, "0x1", t0 + 120),
    ];
    for s in &threads {
        g.emit(&format!(r#"{{"args":{{"data":{{"startTime":{}}}}},"cat":"disabled-by-default-v8.cpu_profiler","id":"{}","name":"Profile","ph":"P","pid":{},"tid":{},"ts":{}}}"#,
                        s.last_sample_t - 7, s.id, s.pid, s.tid, s.last_sample_t))?;
    }
    let mut k = 0u64;
    let mut now = t0;
    while g.written < size {
        // A round: every sampled thread runs a task (or idles), then unrelated threads catch up.
        for (i, s) in threads.iter_mut().enumerate() {
            let frame = if s.pid == 2000 { "F0A1" } else { "F0B2" };
            if g.rng.chance(0.25) {
                let idle_to = s.last_sample_t + 500 + g.rng.below(3000) as i64;
                g.run_samples(s, idle_to, Some("(idle)"), false)?;
            }
            let end = g.task(s, frame, k * 3 + i as u64)?;
            now = now.max(end);
        }
        // Unrelated threads: about 4 samples per KB overall, as in a real 100 µs recording.
        for (pid, tid) in [(1000, 1), (2000, 11), (4000, 1), (4000, 5), (1000, 9)] {
            let n = 20 + g.rng.below(30);
            g.bulk(pid, tid, now - 3000, n)?;
        }
        k += 1;
    }
    for s in threads.iter_mut() {
        let t = s.last_sample_t;
        g.flush_chunk(s, t)?;
    }
    g.out.write_all(b"\n],\n\"metadata\":{\"source\":\"DevTools\",\"generator\":\"jscalls gentrace\",\"seed\":")?;
    g.out.write_all(format!("{seed}}}}}\n").as_bytes())?;
    g.out.flush()
}
