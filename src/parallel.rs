//! Work spread over a few threads, with results in order.

/// `f` applied to every item, on up to `n_threads` threads; the results in the items' order.
/// The largest items should come first for the best balance (they are taken in order).
pub fn map<T: Send, R: Send>(items: Vec<T>, n_threads: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    if n_threads <= 1 || n <= 1 {
        return items.into_iter().map(f).collect();
    }
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let results = std::sync::Mutex::new((0..n).map(|_| None).collect::<Vec<Option<R>>>());
    std::thread::scope(|s| {
        for _ in 0..n_threads.min(n) {
            s.spawn(|| loop {
                let job = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((slot, item)) = job else { break };
                let r = f(item);
                results.lock().unwrap_or_else(|e| e.into_inner())[slot] = Some(r);
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect()
}
