use jscalls::input::scan;
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    for _ in 0..3 {
        let t = Instant::now();
        let v: serde::de::IgnoredAny = serde_json::from_slice(&bytes).unwrap();
        std::hint::black_box(v);
        let a = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let e = scan::skip(&bytes, 0, &mut Vec::new());
        std::hint::black_box(e.ok());
        let b = t.elapsed().as_secs_f64();
        // events
        let t = Instant::now();
        let mut i = bytes.iter().position(|&c| c == b'[').unwrap() + 1;
        let mut st = Vec::new();
        let mut n = 0u64;
        loop {
            i = scan::ws(&bytes, i);
            if bytes[i] != b'{' {
                break;
            }
            let (ev, e) = scan::event(&bytes, i, &mut st).unwrap();
            n += ev.phase() as u64;
            i = scan::ws(&bytes, e);
            if bytes[i] == b',' {
                i += 1
            } else {
                break;
            }
        }
        let c = t.elapsed().as_secs_f64();
        println!("ignoredany {a:.3}  skip {b:.3}  events {c:.3} ({n})");
    }
}
