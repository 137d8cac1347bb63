//! simd-json on the same bytes as `bareparse` (serde_json into `IgnoredAny`): its tape (stage 1
//! and 2, the whole document) and its serde path into `IgnoredAny`. Prints seconds for each.
//!
//! usage: cargo run --release --example simdparse -- FILE
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: simdparse FILE");
    let bytes = std::fs::read(&path).expect("cannot read the file");
    let mut a = bytes.clone();
    let t = Instant::now();
    let tape = simd_json::to_tape(&mut a).expect("not JSON");
    std::hint::black_box(&tape);
    let tape_s = t.elapsed().as_secs_f64();
    drop(tape);
    let mut b = bytes.clone();
    let t = Instant::now();
    let v: serde::de::IgnoredAny = simd_json::serde::from_slice(&mut b).expect("not JSON");
    std::hint::black_box(v);
    let serde_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let v: serde::de::IgnoredAny = serde_json::from_slice(&bytes).expect("not JSON");
    std::hint::black_box(v);
    let floor_s = t.elapsed().as_secs_f64();
    println!(
        "simd-json tape {tape_s:.3} s, simd-json serde IgnoredAny {serde_s:.3} s, serde_json IgnoredAny {floor_s:.3} s"
    );
}
