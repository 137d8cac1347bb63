//! Embedding jscalls: read a trace or a `.cpuprofile`, then walk each thread's calls and print
//! its five longest, with their functions.
//!
//! ```sh
//! cargo run --example embed -- fixtures/chrome-ui.json.gz
//! ```

use jscalls::{analyze, Config, Source};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: embed TRACE_OR_CPUPROFILE")?;
    let analysis = analyze(&Source::file(&path), &Config::default())?;
    for w in analysis.diagnostics().warnings() {
        eprintln!("warning: {w}");
    }
    for thread in analysis.threads() {
        println!("{}:{} {} — {} calls", thread.pid(), thread.tid(), thread.name().unwrap_or("?"), thread.len());
        let mut calls: Vec<_> = thread.calls().collect();
        calls.sort_by(|a, b| b.dur().total_cmp(&a.dur()).then(a.index().cmp(&b.index())));
        for call in calls.iter().take(5) {
            let frame = call.frame();
            let name = frame.function_name();
            println!(
                "  {:>9.3} ms (self {:>8.3} ms)  {}  {}:{}",
                call.dur() / 1000.0,
                call.self_time().unwrap_or(0.0) / 1000.0,
                if name.is_empty() { "(anonymous)" } else { &name },
                frame.url(),
                frame.line().map_or(0, |l| l + 1),
            );
        }
    }
    Ok(())
}
