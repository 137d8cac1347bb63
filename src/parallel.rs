//! Work spread over a few threads, with results in order.
//!
//! The threads are a pool made once per process ([`rayon_core`]'s, sized by the CPUs) rather
//! than threads of their own per job. A thread per job cost more than its start: each new
//! thread got a fresh allocator heap whose pages were zeroed on first touch and handed back
//! when the thread ended. On a 105 MB trace, 30 such threads (one per 4 MB region scanned)
//! made the allocator give back 170 MB of pages during the read.

use std::sync::OnceLock;

/// The workers, or `None` when the system would not start them (everything then runs on the
/// calling thread).
fn pool() -> Option<&'static rayon_core::ThreadPool> {
    static POOL: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        rayon_core::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("jscalls-{i}")).build().ok()
    })
    .as_ref()
}

/// Runs `helper` on a worker while `main` runs on this thread; returns `main`'s result once
/// both are done. A panic in either is resumed here.
pub fn with_helper<R>(helper: impl FnOnce() + Send, main: impl FnOnce() -> R) -> R {
    match pool() {
        Some(p) => p.in_place_scope(|s| {
            s.spawn(|_| helper());
            main()
        }),
        None => {
            let r = main();
            helper();
            r
        }
    }
}

/// `f` applied to every item, on up to `n_threads` threads; the results in the items' order.
/// The largest items should come first for the best balance (they are taken in order).
pub fn map<T: Send, R: Send>(items: Vec<T>, n_threads: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let pool = match pool() {
        Some(p) if n_threads > 1 && n > 1 => p,
        _ => return items.into_iter().map(f).collect(),
    };
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let results = std::sync::Mutex::new((0..n).map(|_| None).collect::<Vec<Option<R>>>());
    let work = || loop {
        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
        let Some((slot, item)) = job else { break };
        let r = f(item);
        results.lock().unwrap_or_else(|e| e.into_inner())[slot] = Some(r);
    };
    // This thread takes items too, beside n_threads - 1 workers.
    pool.in_place_scope(|s| {
        for _ in 1..n_threads.min(n) {
            s.spawn(|_| work());
        }
        work();
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_the_order_of_the_items() {
        let items: Vec<u64> = (0..1000).collect();
        for threads in [1, 2, 3, 16] {
            let squares = map(items.clone(), threads, |x| x * x);
            assert_eq!(squares, items.iter().map(|x| x * x).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn with_helper_runs_both_before_returning() {
        let done = std::sync::atomic::AtomicBool::new(false);
        let r = with_helper(|| done.store(true, std::sync::atomic::Ordering::SeqCst), || 7);
        assert_eq!(r, 7);
        assert!(done.load(std::sync::atomic::Ordering::SeqCst));
    }
}
