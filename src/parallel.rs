//! Work spread over a few threads, with results in order.
//!
//! The threads are a pool made once per process ([`rayon_core`]'s, sized by the CPUs), with
//! the calling thread working beside them, rather than threads of their own per job. A thread
//! per job cost more than its start: each new thread got a fresh allocator heap whose pages
//! were zeroed on first touch and handed back when the thread ended. On a 105 MB trace, 30
//! such threads (one per 4 MB region scanned) made the allocator give back 170 MB of pages
//! over the run (115 MB with the pool).

use std::sync::OnceLock;

/// The workers, one per CPU but one: the calling thread works beside them in every function
/// here. `None` on a single CPU, or when the system would not start them (everything then
/// runs on the calling thread).
///
/// A worker more than the CPUs left is not free: an idle rayon worker spins (`sched_yield`)
/// before it sleeps, and was woken for every job. On 2 CPUs, a second worker made the event
/// scan (the calling thread and one helper) 5-10% slower.
fn pool() -> Option<&'static rayon_core::ThreadPool> {
    static POOL: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8)) - 1;
        if workers == 0 {
            return None;
        }
        rayon_core::ThreadPoolBuilder::new().num_threads(workers).thread_name(|i| format!("jscalls-{i}")).build().ok()
    })
    .as_ref()
}

/// Locks a mutex, poisoned or not: the data that jscalls guards with one (work queues, result
/// slots) is never left half-changed by a panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
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
        let job = lock(&queue).next();
        let Some((slot, item)) = job else { break };
        let r = f(item);
        lock(&results)[slot] = Some(r);
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

/// Runs `work` on items `0..n`, at most `ahead` items ahead of the one being taken, and hands
/// the results to `take` on this thread, in order. `make` builds item `k` on this thread just
/// before it is handed out. The workers take the items first come, first served; this thread
/// runs the item it needs next itself when no worker has started it, and otherwise waits,
/// leaving the later items to the workers (this thread has `take` to do: it was the busier one
/// when it took them too). Stops at the first error of `take` (the items already handed out
/// are finished first). Without workers, or with `threads` ≤ 1, it all runs here, one item at
/// a time.
pub fn ordered<T: Send, R: Send, E>(
    n: usize,
    threads: usize,
    ahead: usize,
    mut make: impl FnMut(usize) -> T,
    work: impl Fn(T) -> R + Sync,
    mut take: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let pool = match pool() {
        Some(p) if threads > 1 && n > 1 => p,
        _ => return (0..n).try_for_each(|k| take(work(make(k)))),
    };
    let ahead = ahead.max(1);
    let (tx, rx) = std::sync::mpsc::channel();
    // Items handed out and not started, oldest first. Each spawned job takes the oldest one
    // (or none, when this thread took it).
    let queue = std::sync::Mutex::new(std::collections::VecDeque::with_capacity(ahead));
    let (work, queue) = (&work, &queue);
    // A panic is kept as the result, and resumed when its turn comes.
    let run = |item: T| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(item)));
    pool.in_place_scope(|s| {
        // Results that came in before their turn, by k % ahead.
        let mut ready: Vec<Option<std::thread::Result<R>>> = (0..ahead).map(|_| None).collect();
        let mut handed = 0;
        for k in 0..n {
            while handed < n && handed < k + ahead {
                let item = make(handed);
                lock(queue).push_back((handed, item));
                let tx = tx.clone();
                s.spawn(move |_| {
                    let next = lock(queue).pop_front();
                    if let Some((slot, item)) = next {
                        let _ = tx.send((slot, run(item)));
                    }
                });
                handed += 1;
            }
            while ready[k % ahead].is_none() {
                // Only the item needed next (the oldest, when no one has started it).
                let next = {
                    let mut q = lock(queue);
                    if q.front().is_some_and(|&(slot, _)| slot == k) {
                        q.pop_front()
                    } else {
                        None
                    }
                };
                let (slot, r) = match next {
                    Some((slot, item)) => (slot, run(item)),
                    None => rx.recv().expect("a job that took an item holds a sender until it has sent"),
                };
                ready[slot % ahead] = Some(r);
            }
            match ready[k % ahead].take().expect("received above") {
                Ok(r) => take(r)?,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(())
    })
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
    fn ordered_takes_the_results_in_order_and_stops_at_an_error() {
        for (threads, ahead) in [(1, 1), (2, 1), (2, 4), (8, 3)] {
            let mut seen = Vec::new();
            let r: Result<(), u32> = ordered(
                500,
                threads,
                ahead,
                |k| k as u32,
                |x| x * 3,
                |y| {
                    seen.push(y);
                    Ok(())
                },
            );
            assert_eq!(r, Ok(()));
            assert_eq!(seen, (0..500).map(|x| x * 3).collect::<Vec<u32>>(), "{threads} threads, {ahead} ahead");
            let mut taken = 0;
            let r = ordered(
                500,
                threads,
                ahead,
                |k| k,
                |x| x,
                |y| {
                    if y == 100 {
                        return Err(y);
                    }
                    taken += 1;
                    Ok(())
                },
            );
            assert_eq!((r, taken), (Err(100), 100), "{threads} threads, {ahead} ahead");
        }
    }

    #[test]
    fn ordered_passes_a_panic_on() {
        let r = std::panic::catch_unwind(|| {
            ordered(50, 2, 4, |k| k, |x| if x == 20 { panic!("twenty") } else { x }, |_| Ok::<(), ()>(()))
        });
        assert!(r.is_err());
    }

    #[test]
    fn with_helper_runs_both_before_returning() {
        let done = std::sync::atomic::AtomicBool::new(false);
        let r = with_helper(|| done.store(true, std::sync::atomic::Ordering::SeqCst), || 7);
        assert_eq!(r, 7);
        assert!(done.load(std::sync::atomic::Ordering::SeqCst));
    }
}
