//! The scanner against the floor, in memory and on one thread: serde_json into `IgnoredAny`,
//! `json::skip` over the whole document, and `scan::event` over every event (what the scan
//! threads do before `prepare`). Three rounds; seconds per pass.
//!
//! usage: cargo run --release --example scanspeed -- FILE [--events]   (an uncompressed trace;
//! `--events`: only the per-event pass, for profiling it)
use std::time::Instant;

use jscalls::internals::{json, scan};

fn main() {
    let path = std::env::args().nth(1).expect("usage: scanspeed FILE [--events]");
    let only_events = std::env::args().nth(2).as_deref() == Some("--events");
    let bytes = std::fs::read(&path).expect("cannot read the file");
    let array = bytes.iter().position(|&c| c == b'[').expect("no event array") + 1;
    for _ in 0..3 {
        let (mut floor, mut skip) = (f64::NAN, f64::NAN);
        if !only_events {
            let t = Instant::now();
            let v: serde::de::IgnoredAny = serde_json::from_slice(&bytes).expect("not JSON");
            std::hint::black_box(v);
            floor = t.elapsed().as_secs_f64();

            let t = Instant::now();
            std::hint::black_box(json::skip(&bytes, 0, &mut Vec::new()).ok());
            skip = t.elapsed().as_secs_f64();
        }

        let t = Instant::now();
        let (mut i, mut stack, mut n) = (array, Vec::new(), 0u64);
        loop {
            i = json::ws(&bytes, i);
            if bytes.get(i) != Some(&b'{') {
                break;
            }
            let mut ev = scan::RawEvent::default();
            let end = scan::event_into::<false>(&bytes, i, &mut stack, &mut ev).expect("a malformed event");
            n += ev.phase() as u64;
            i = json::ws(&bytes, end);
            if bytes.get(i) != Some(&b',') {
                break;
            }
            i += 1;
        }
        std::hint::black_box(n);
        let events = t.elapsed().as_secs_f64();
        println!("IgnoredAny {floor:.3} s   scan::skip {skip:.3} s   scan::event per event {events:.3} s");
    }
}
