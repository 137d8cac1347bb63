//! The parallel pipeline (scan, models, estimate, rendering) gives the same bytes as one thread,
//! whatever the layout of the JSON: the scan threads start at guessed event boundaries, and a
//! wrong guess must only cost time.

use std::io::Read;

use jscalls::{analyze, Config, Source};

fn calls(bytes: &[u8], threads: usize) -> (Vec<u8>, u64) {
    let mut cfg = Config::default();
    cfg.threads = threads;
    let a = analyze(&Source::Memory(bytes.into()), &cfg).unwrap();
    let mut out = Vec::new();
    a.write_calls(&mut out, "x").unwrap();
    (out, a.n_events())
}

/// The largest fixture in three layouts: one event per line (as recorded); pretty-printed,
/// where many lines inside events start with '{' (wrong guesses); and no newline at all (no
/// guess).
fn layouts() -> [Vec<u8>; 3] {
    let mut raw = Vec::new();
    let f = std::fs::File::open("fixtures/chrome-ui.json.gz").unwrap();
    flate2::read::MultiGzDecoder::new(f).read_to_end(&mut raw).unwrap();
    assert!(raw.len() > 8 << 20, "the fixture must span at least three 4 MB regions");
    let value: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    let (pretty, compact) = (serde_json::to_vec_pretty(&value).unwrap(), serde_json::to_vec(&value).unwrap());
    [raw, pretty, compact]
}

#[test]
fn layouts_and_thread_counts_agree() {
    let layouts = layouts();
    let (want, n) = calls(&layouts[0], 1);
    assert!(n > 40_000 && want.len() > 100_000, "{n} events, {} bytes of calls", want.len());
    for (k, bytes) in layouts.iter().enumerate() {
        for threads in [1, 2, 4] {
            let (got, got_n) = calls(bytes, threads);
            assert_eq!(got_n, n, "layout {k}, {threads} threads: event count");
            assert!(got == want, "layout {k}, {threads} threads: the calls differ");
        }
    }
}

/// A plain file is mapped, not read: the window is then a moving range of the mapping, and
/// regions are handed over without copies. Calls and timeline are the same bytes as from
/// memory, in every layout (one event per line, pretty-printed, one line) and thread count.
#[test]
fn mapped_file_gives_the_same_bytes_as_memory() {
    for (k, bytes) in layouts().iter().enumerate() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, bytes).unwrap();
        for threads in [1, 2] {
            let mut cfg = Config::default();
            cfg.threads = threads;
            let outputs = |src: &Source| {
                let a = analyze(src, &cfg).unwrap();
                let mut calls = Vec::new();
                a.write_calls(&mut calls, "x").unwrap();
                let mut tl = Vec::new();
                a.write_timeline(&mut tl, src).unwrap();
                (a.n_events(), calls, tl)
            };
            let want = outputs(&Source::Memory(bytes.as_slice().into()));
            let got = outputs(&Source::file(file.path()));
            assert!(want.0 > 40_000 && want.1.len() > 100_000, "layout {k}: {} events", want.0);
            assert_eq!(got.0, want.0, "layout {k}, {threads} threads: event count");
            assert!(got.1 == want.1, "layout {k}, {threads} threads: the calls differ");
            assert!(got.2 == want.2, "layout {k}, {threads} threads: the timelines differ");
        }
    }
}

/// The command estimates one thread at a time while it writes ([`jscalls::Assembled`]'s writers;
/// with more worker threads, up to one thread per worker is estimated while one is written);
/// [`jscalls::analyze`] estimates all threads first. All give the same bytes, for both outputs, on traces with
/// several profiled threads and on a `.cpuprofile`.
#[test]
fn lazy_estimate_writes_the_same_bytes() {
    for path in
        ["fixtures/chrome-ui.json.gz", "fixtures/chrome-worker-hires.json.gz", "fixtures/node-mixed.cpuprofile.gz"]
    {
        let src = Source::file(path);
        let mut cfg = Config::default();
        cfg.threads = 2;
        let a = analyze(&src, &cfg).unwrap();
        assert!(a.n_calls() > 50, "{path}: {} calls", a.n_calls());
        let mut want = Vec::new();
        a.write_calls(&mut want, "x").unwrap();
        let mut want_timeline = Vec::new();
        a.write_timeline(&mut want_timeline, &src).unwrap();
        for threads in [1, 2, 3] {
            let mut cfg = Config::default();
            cfg.threads = threads;
            let (_, lazy) = jscalls::assemble(&src, &cfg).unwrap();
            let mut got = Vec::new();
            lazy.write_calls(&mut got, "x").unwrap();
            assert!(got == want, "{path}, {threads} threads: the calls differ");

            let (_, lazy) = jscalls::assemble(&src, &cfg).unwrap();
            let mut got = Vec::new();
            lazy.write_timeline(&mut got, &src).unwrap();
            assert!(got == want_timeline, "{path}, {threads} threads: the timelines differ");
        }
    }
}

/// Node ids are looked up in a table when they are dense (as V8 numbers them) and in a hash map
/// otherwise; sample ids are held in 4 bytes while they fit. A profile whose ids are spread out
/// past `u32` gives the same calls, in both `.cpuprofile` modes.
#[test]
fn sparse_node_ids_give_the_same_calls() {
    use jscalls::CpuProfileMode;
    let mut raw = Vec::new();
    let f = std::fs::File::open("fixtures/node-mixed.cpuprofile.gz").unwrap();
    flate2::read::MultiGzDecoder::new(f).read_to_end(&mut raw).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    let spread = |id: &serde_json::Value| serde_json::json!(id.as_i64().unwrap() * 7919 + 1_000_000_000_000);
    for n in v["nodes"].as_array_mut().unwrap() {
        n["id"] = spread(&n["id"]);
        if let Some(c) = n.get_mut("children").and_then(|c| c.as_array_mut()) {
            c.iter_mut().for_each(|id| *id = spread(id));
        }
    }
    for s in v["samples"].as_array_mut().unwrap() {
        *s = spread(s);
    }
    let sparse = serde_json::to_vec(&v).unwrap();
    for mode in [CpuProfileMode::Integrator, CpuProfileMode::PerformancePanel] {
        let mut cfg = Config::default();
        cfg.cpuprofile_mode = mode;
        let rows = |bytes: &[u8], unspread: fn(i64) -> i64| {
            let a = analyze(&Source::Memory(bytes.into()), &cfg).unwrap();
            let t = a.threads().next().unwrap();
            let rows: Vec<_> = t
                .calls()
                .map(|c| {
                    let id = unspread(c.node_id());
                    (
                        c.ts().to_bits(),
                        c.dur().to_bits(),
                        c.self_time().map(f64::to_bits),
                        c.depth(),
                        c.sample_index(),
                        id,
                    )
                })
                .collect();
            rows
        };
        let want = rows(&raw, |id| id);
        let got = rows(&sparse, |id| (id - 1_000_000_000_000) / 7919);
        assert!(want.len() > 100, "{mode:?}: {} calls", want.len());
        assert!(got == want, "{mode:?}: the calls differ");
    }
}

/// With `keep_samples` off, each thread lets its samples go once its calls are made: its
/// calls' stacks and spans are the same, its sample count is kept, and what reads samples
/// then finds none.
#[test]
fn samples_let_go_leave_the_calls_stacks_as_they_were() {
    use jscalls::tree::{Stacks, Weight};
    for path in
        ["fixtures/chrome-ui.json.gz", "fixtures/chrome-worker-hires.json.gz", "fixtures/node-mixed.cpuprofile.gz"]
    {
        let src = Source::file(path);
        let shapes = |keep: bool| {
            let mut cfg = Config::default();
            cfg.keep_event_names = true;
            cfg.keep_samples = keep;
            per_thread(&src, &cfg, |th| {
                let (stacks, spans) = Stacks::from_calls_with_spans(th);
                let sampled = Stacks::from_samples(th, Weight::Samples).samples.len();
                (format!("{stacks:?}"), spans, th.sample_count(), sampled)
            })
        };
        let (kept, let_go) = (shapes(true), shapes(false));
        assert_eq!(kept.len(), let_go.len(), "{path}");
        assert!(kept.iter().any(|k| k.3 > 100), "{path}: samples read while kept");
        for (k, g) in kept.iter().zip(&let_go) {
            assert!(k.0 == g.0 && k.1 == g.1, "{path}: the calls' stacks or spans differ");
            assert_eq!((k.2, g.3), (g.2, 0), "{path}: the count stays, the samples go");
        }
    }
}

/// `f` of every thread of `src` read and estimated with `cfg`, in order.
fn per_thread<T>(src: &Source, cfg: &Config, mut f: impl FnMut(&jscalls::Thread<'_>) -> T) -> Vec<T> {
    let (_, assembled) = jscalls::assemble(src, cfg).unwrap();
    let mut out = Vec::new();
    assembled
        .for_each_thread(|th| -> Result<(), ()> {
            out.push(f(&th));
            Ok(())
        })
        .unwrap();
    out
}

/// The calls' stacks summed per stack as they are made (what pprof writes) are the calls'
/// per-call samples summed with `sum_rounded`: the same stacks, the same sums, and the same
/// total bit for bit, in a trace (events inside calls) and in both `.cpuprofile` modes.
#[test]
fn stacks_summed_as_made_are_the_per_call_samples_summed() {
    use jscalls::tree::Stacks;
    use jscalls::CpuProfileMode;
    let inputs = [
        ("fixtures/chrome-ui.json.gz", CpuProfileMode::Integrator),
        ("fixtures/chrome-worker-hires.json.gz", CpuProfileMode::Integrator),
        ("fixtures/node-mixed.cpuprofile.gz", CpuProfileMode::Integrator),
        ("fixtures/node-mixed.cpuprofile.gz", CpuProfileMode::PerformancePanel),
    ];
    for (path, mode) in inputs {
        let mut cfg = Config::default();
        cfg.keep_event_names = true;
        cfg.cpuprofile_mode = mode;
        let mut sums = 0;
        per_thread(&Source::file(path), &cfg, |th| {
            for scale in [1000.0, 1.0] {
                let (summed, total) = Stacks::from_calls_rounded(th, scale);
                let mut per_call = Stacks::from_calls(th);
                assert_eq!(total.to_bits(), per_call.total().to_bits(), "{path} {mode:?}: the total");
                per_call.sum_rounded(scale);
                assert_eq!(format!("{summed:?}"), format!("{per_call:?}"), "{path} {mode:?}: the stacks");
                sums += summed.samples.len();
            }
        });
        assert!(sums > 20, "{path} {mode:?}: {sums} stacks with time");
    }
}

/// Everything an estimate gives of a thread, as text: every call's times, self time, depth,
/// node, sample, bounds and function, and the thread's sampler.
fn estimate_rows(th: &jscalls::Thread<'_>) -> Vec<String> {
    let mut rows = vec![format!("{} {} {} {:?}", th.pid(), th.tid(), th.sample_count(), th.sampler())];
    rows.extend(th.calls().map(|c| {
        format!(
            "{:?} {:?} {:?} {:?} {} {} {:?} {}",
            c.ts(),
            c.dur(),
            c.self_time(),
            c.depth(),
            c.node_id(),
            c.sample_index(),
            c.bounds(),
            c.frame().function_name()
        )
    }));
    rows
}

/// One read estimated two ways gives each estimate as a read of its own does: every estimator
/// after every other, with bounds, with `show_all_events`, in traces of one and of two threads
/// and both `.cpuprofile` modes, on one thread and on several.
#[test]
fn two_estimates_of_one_read_are_each_as_its_own_read_gives_it() {
    use jscalls::{CpuProfileMode, Estimator};
    let inputs = [
        ("fixtures/chrome-ui.json.gz", CpuProfileMode::Integrator),
        ("fixtures/chrome-worker-hires.json.gz", CpuProfileMode::Integrator),
        ("fixtures/node-trace-mixed.json.gz", CpuProfileMode::Integrator),
        ("fixtures/node-mixed.cpuprofile.gz", CpuProfileMode::Integrator),
        ("fixtures/node-mixed.cpuprofile.gz", CpuProfileMode::PerformancePanel),
    ];
    let with = |estimator: Estimator, bounds: bool, show_all_events: bool| {
        let mut cfg = Config::default();
        (cfg.estimator, cfg.bounds, cfg.show_all_events, cfg.keep_samples) =
            (estimator, bounds, show_all_events, false);
        cfg
    };
    let pairs = [
        (with(Estimator::DevTools, false, false), with(Estimator::Midway, false, false)),
        (with(Estimator::Midway, false, false), with(Estimator::DevTools, false, false)),
        (with(Estimator::LogMidway, true, false), with(Estimator::DevTools, true, true)),
        (with(Estimator::DevTools, false, true), with(Estimator::LogMidway, false, false)),
        (with(Estimator::DevTools, false, false), with(Estimator::DevTools, false, false)),
    ];
    let mut differed = 0;
    for (path, mode) in inputs {
        let src = Source::file(path);
        for threads in [1, 2] {
            for (a, b) in &pairs {
                let (mut a, mut b) = (a.clone(), b.clone());
                (a.cpuprofile_mode, a.threads, b.threads) = (mode, threads, threads);
                // The second estimate is of the input as the first read it.
                let mut b_read_alike = b.clone();
                b_read_alike.cpuprofile_mode = mode;
                let (want_a, want_b) =
                    (per_thread(&src, &a, estimate_rows), per_thread(&src, &b_read_alike, estimate_rows));
                let (_, assembled) = jscalls::assemble(&src, &a).unwrap();
                let (got_a, got_b) = assembled.estimate_twice(&b, |th| estimate_rows(&th));
                let what = format!("{path}, {mode:?}, {threads} threads, {:?} then {:?}", a.estimator, b.estimator);
                assert!(got_a == want_a, "{what}: the first estimate differs");
                assert!(got_b == want_b, "{what}: the second estimate differs");
                differed += usize::from(want_a != want_b);
            }
        }
    }
    // The pairs must give different estimates for the test to tell them apart.
    assert!(differed >= 20, "only {differed} pairs of estimates differ");
}
