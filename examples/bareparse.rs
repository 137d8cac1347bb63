//! The floor for any JSON tool: read the file and parse it into `serde::de::IgnoredAny`, nothing
//! else (gzip inflated first, when the file is gzipped). Prints the seconds it took.
//!
//! usage: cargo run --release --example bareparse -- FILE
use std::io::Read;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: bareparse FILE");
    let t = Instant::now();
    let mut bytes = std::fs::read(&path).expect("cannot read the file");
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out).expect("bad gzip");
        bytes = out;
    }
    let v: serde::de::IgnoredAny = serde_json::from_slice(&bytes).expect("not JSON");
    std::hint::black_box(v);
    println!("{:.3}", t.elapsed().as_secs_f64());
}
