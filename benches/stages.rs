//! Throughput of each stage on one input (default: the recorded Chromium trace in fixtures/;
//! set JSCALLS_BENCH_INPUT to use another file, e.g. one made by the gentrace example).
//!
//! ```text
//! cargo bench --bench stages
//! JSCALLS_BENCH_INPUT=bench-data/g100.json cargo bench --bench stages
//! ```
//!
//! Stages: `read` (open, inflate, read every byte: the path of gzip and standard input; the
//! later stages map a plain file instead, unless `JSCALLS_NO_MMAP` is set), `parse` (scan
//! every event, no model),
//! `assemble` (scan + TraceBuilder + profile models), `estimate` (the integrator and the tree
//! on an assembled model), `write_calls` and `write_timeline` (to a sink). Throughput is in
//! bytes of (uncompressed) input per second. The stages run with mimalloc, the command's
//! allocator for small blocks (its large blocks, mapped with huge pages, are not copied here).

use std::io::Read;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use jscalls::internals::{EventCtx, RawEvent, Sink};
use jscalls::{analyze, Config, Diagnostics, Source};

fn input() -> Source {
    let path = std::env::var("JSCALLS_BENCH_INPUT").unwrap_or_else(|_| "fixtures/chrome-ui.json.gz".into());
    Source::file(path)
}

fn input_bytes(src: &Source) -> u64 {
    let mut r = src.open().unwrap();
    std::io::copy(&mut r, &mut std::io::sink()).unwrap()
}

/// A sink that only counts events: the cost of scanning.
struct Count(u64);

impl Sink for Count {
    type Prep = u8;
    fn prepare(ev: &mut RawEvent<'_>) -> u8 {
        ev.phase()
    }
    fn event(&mut self, phase: u8, _: &EventCtx<'_>, _: &mut Diagnostics) -> Result<(), jscalls::Error> {
        self.0 += phase as u64;
        Ok(())
    }
}

fn stages(c: &mut Criterion) {
    let src = input();
    let n = input_bytes(&src);
    let cfg = Config::default();
    let mut g = c.benchmark_group("stages");
    g.throughput(Throughput::Bytes(n));
    g.sample_size(10);
    g.bench_function("read", |b| {
        b.iter(|| {
            let mut r = src.open().unwrap();
            let mut buf = vec![0u8; 1 << 20];
            let mut total = 0;
            loop {
                let k = r.read(&mut buf).unwrap();
                if k == 0 {
                    break;
                }
                total += k;
            }
            black_box(total)
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| {
            let mut sink = Count(0);
            jscalls::internals::scan_all(&src, &mut sink, &cfg).unwrap();
            black_box(sink.0)
        })
    });
    g.bench_function("assemble", |b| b.iter(|| black_box(jscalls::assemble(&src, &cfg).unwrap().1.n_events())));
    g.bench_function("estimate", |b| {
        b.iter_batched(
            || jscalls::assemble(&src, &cfg).unwrap(),
            |(_, m)| black_box(jscalls::internals::estimate(m)),
            BatchSize::LargeInput,
        )
    });
    let a = analyze(&src, &cfg).unwrap();
    g.bench_function("write_calls", |b| b.iter(|| a.write_calls(&mut std::io::sink(), "x").unwrap()));
    g.bench_function("write_timeline", |b| b.iter(|| a.write_timeline(&mut std::io::sink(), &src).unwrap()));
    g.finish();
}

criterion_group!(benches, stages);
criterion_main!(benches);
