//! The `ProfileChunk` reader against skipping the same bytes, in memory and on one thread: the
//! `args` of every chunk of a trace are skipped (`json::skip`), checked as UTF-8, read
//! (`chunk::chunk_args_fast`) and read into owned values (`ChunkIn`: what a scan thread hands on).
//! Fifteen rounds; the best seconds of each.
//!
//! usage: cargo run --release --example chunkspeed -- FILE      (an uncompressed trace)
use std::time::Instant;

use jscalls::internals::{chunk, json, scan, ChunkIn};

fn main() {
    let path = std::env::args().nth(1).expect("usage: chunkspeed FILE");
    let bytes = std::fs::read(&path).expect("cannot read the file");
    let mut i = bytes.iter().position(|&c| c == b'[').expect("no event array") + 1;
    let mut stack = Vec::new();
    let mut chunks: Vec<&[u8]> = Vec::new();
    loop {
        i = json::ws(&bytes, i);
        if bytes.get(i) != Some(&b'{') {
            break;
        }
        let (ev, end) = scan::event(&bytes, i, &mut stack).expect("a malformed event");
        if let (Some("ProfileChunk"), Some(args)) = (ev.name.str(), ev.args) {
            chunks.push(args);
        }
        i = json::ws(&bytes, end);
        if bytes.get(i) != Some(&b',') {
            break;
        }
        i += 1;
    }
    let total: usize = chunks.iter().map(|a| a.len()).sum();
    println!("{} chunks, {:.1} MB of args", chunks.len(), total as f64 / 1e6);
    let time = |f: &mut dyn FnMut(&[u8]) -> bool| {
        let t = Instant::now();
        let n = chunks.iter().filter(|a| f(a)).count();
        std::hint::black_box(n);
        t.elapsed().as_secs_f64()
    };
    let mut best = [f64::MAX; 4];
    for _ in 0..15 {
        let round = [
            time(&mut |a| json::skip(a, 0, &mut stack).is_ok()),
            time(&mut |a| std::str::from_utf8(a).is_ok()),
            time(&mut |a| chunk::chunk_args_fast(a).is_some()),
            time(&mut |a| chunk::chunk_args_fast(a).map(ChunkIn::new).is_some()),
        ];
        for (b, v) in best.iter_mut().zip(round) {
            *b = b.min(v);
        }
    }
    println!("skip {:.4} s   utf8 {:.4} s   read {:.4} s   read+own {:.4} s", best[0], best[1], best[2], best[3]);
}
