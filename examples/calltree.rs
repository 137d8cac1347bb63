//! Call trees with the library: build each thread's tree of functions from its estimated calls,
//! apply transforms (as `jscalls tree --transform` does), and walk the result.
//!
//! ```sh
//! cargo run --example calltree -- fixtures/chrome-ui.json.gz
//! ```

use jscalls::tree::{CallTree, Stacks, Transform};
use jscalls::{analyze, Config, Source};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: calltree TRACE_OR_CPUPROFILE")?;
    let analysis = analyze(&Source::file(&path), &Config::default())?;
    for thread in analysis.threads().filter(|t| !t.is_empty()) {
        // Self time of every call, on the stack of functions of the calls around it.
        let stacks = Stacks::from_calls(&thread);
        // JavaScript only; then the heaviest root's subtree, named by its CallNodePath.
        let js = Transform::JsOnly.apply(&stacks);
        let top = CallTree::top_down(&js);
        let Some(&root) = top.roots.first() else { continue };
        let spec = format!("focus:{}", js.funcs[top.nodes[root].func.index()].label());
        let focused = Transform::parse(&spec, &js)?.apply(&js);
        let tree = CallTree::top_down(&focused);
        println!("{}:{} {} — {spec}", thread.pid(), thread.tid(), thread.name().unwrap_or("?"));
        tree.walk(|n, depth| {
            let node = &tree.nodes[n];
            let func = &focused.funcs[node.func.index()];
            println!(
                "  {:>9.3} ms {:>9.3} ms  {}{}",
                node.total / 1000.0,
                node.self_weight / 1000.0,
                "  ".repeat(depth),
                func.label()
            );
            depth < 3 // the first levels only
        });
        // Bottom-up: the functions with the most self time.
        for (f, self_us, total_us) in CallTree::functions(&js).into_iter().take(3) {
            println!(
                "  self {:>9.3} ms, total {:>9.3} ms  {}",
                self_us / 1000.0,
                total_us / 1000.0,
                js.funcs[f.index()].label()
            );
        }
    }
    Ok(())
}
