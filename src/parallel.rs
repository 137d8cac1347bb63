//! Work spread over a few threads, with results in order.
//!
//! The threads are a pool made once per process ([`rayon_core`]'s, sized by the CPUs), with
//! the calling thread working beside them, rather than threads of their own per job: each new
//! thread would get a fresh allocator heap whose pages are zeroed on first touch and handed
//! back when it ends. The one exception is the [`ScanHelper`]: a single thread for a whole
//! pipeline of small jobs (the event scan), which a pool worker served badly because it fell
//! asleep between them.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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

/// A thread of its own, named, for a job that lives as long as an input (the gzip reader):
/// every thread the library starts is started in this module.
pub(crate) fn spawn_named<F: FnOnce() + Send + 'static>(
    name: &str,
    f: F,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name(name.into()).spawn(f)
}

/// `f` on a thread of its own with a stack of `bytes` (for a recursive parser), waited for;
/// None when the system would not start the thread.
pub(crate) fn on_stack<R: Send>(bytes: usize, f: impl FnOnce() -> R + Send) -> Option<R> {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new().name("jscalls-parse".into()).stack_size(bytes).spawn_scoped(s, f).ok()?;
        h.join().ok()
    })
}

/// A helper thread of its own for a pipeline that hands it one job at a time, every
/// millisecond or so ([`with_relay`], [`ScanHelper::run`]).
///
/// Between jobs it stays awake for up to a millisecond (spinning briefly, then yielding to any
/// other thread that is ready to run) before it sleeps. A pool worker, which sleeps
/// after a few microseconds without work, had to be woken for every 4 MB region of a scan, and
/// on a virtual machine a wake-up can take up to a millisecond, a region's scan time.
pub(crate) struct ScanHelper {
    /// The job posted and not taken yet: `run` keeps it alive until `done` reaches its number.
    slot: std::sync::Mutex<Option<JobPtr>>,
    /// Number of the last job posted, and of the last one the helper finished.
    posted: AtomicU64,
    done: AtomicU64,
    /// Set when the helper is to return.
    stop: AtomicBool,
    /// Set while the helper may be parked (then a new job unparks it).
    sleeping: AtomicBool,
    /// Set while a `run` is under way (one at a time: a second would take the first's slot).
    busy: AtomicBool,
    helper: OnceLock<std::thread::Thread>,
    /// A panic of a job, resumed by the `run` that posted it.
    panic: std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// A job's address with its lifetime erased (see [`ScanHelper::run`]).
struct JobPtr(*const (dyn Fn() + Sync + 'static));

// SAFETY: the pointer is only a way to hand a `&(dyn Fn() + Sync)` to the helper thread; the
// referent is `Sync`, and `ScanHelper::run` keeps it alive while the helper may use it.
unsafe impl Send for JobPtr {}

/// How long the helper stays awake for the next job before it parks.
const SPIN: std::time::Duration = std::time::Duration::from_millis(1);

/// Runs `main` with a [`ScanHelper`] whose helper thread lives as long as `main` runs; `None` on a
/// machine with one CPU (where a spinning helper would take the CPU from `main`).
pub(crate) fn with_relay<R>(main: impl FnOnce(Option<&ScanHelper>) -> R) -> R {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return main(None);
    }
    relay_scope(main)
}

/// [`with_relay`] whatever the number of CPUs (`None` only when no thread can be started).
fn relay_scope<R>(main: impl FnOnce(Option<&ScanHelper>) -> R) -> R {
    let relay = ScanHelper {
        slot: std::sync::Mutex::new(None),
        posted: AtomicU64::new(0),
        done: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        sleeping: AtomicBool::new(false),
        busy: AtomicBool::new(false),
        helper: OnceLock::new(),
        panic: std::sync::Mutex::new(None),
    };
    /// Tells the helper to return, however `main` ends (the scope waits for it).
    struct Stop<'r>(&'r ScanHelper);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.stop.store(true, Ordering::SeqCst);
            if let Some(t) = self.0.helper.get() {
                t.unpark();
            }
        }
    }
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().name("jscalls-relay".into()).spawn_scoped(s, || relay.serve());
        let _stop = Stop(&relay);
        main(spawned.is_ok().then_some(&relay))
    })
}

impl ScanHelper {
    /// Runs `job` on the helper while `main` runs on this thread; returns `main`'s result once
    /// both are done. A panic in either is resumed here, after both are done.
    ///
    /// # Panics
    ///
    /// When another `run` of the same relay is under way (from another thread, or from `main`).
    pub(crate) fn run<R>(&self, job: &(dyn Fn() + Sync), main: impl FnOnce() -> R) -> R {
        assert!(!self.busy.swap(true, Ordering::Acquire), "ScanHelper::run: one job at a time");
        let n = self.posted.load(Ordering::Relaxed) + 1;
        // SAFETY: only the lifetime is changed. The helper calls the job before it stores `n`
        // in `done`, and this function does not return, nor unwind past `wait` below, before it
        // has seen that; so the job outlives every use of the pointer.
        let ptr =
            unsafe { std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(job) };
        *lock(&self.slot) = Some(JobPtr(ptr));
        self.posted.store(n, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) {
            if let Some(t) = self.helper.get() {
                t.unpark();
            }
        }
        /// Waits for the job to be done, when `main` returns and when it panics.
        struct Wait<'r>(&'r ScanHelper, u64);
        impl Drop for Wait<'_> {
            fn drop(&mut self) {
                let mut spins = 0u32;
                while self.0.done.load(Ordering::Acquire) < self.1 {
                    spins += 1;
                    if spins < 1 << 12 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
                self.0.busy.store(false, Ordering::Release);
            }
        }
        let wait = Wait(self, n);
        let r = main();
        drop(wait);
        if let Some(p) = lock(&self.panic).take() {
            std::panic::resume_unwind(p);
        }
        r
    }

    /// The helper's loop: the next job, as soon as it is posted, until told to stop.
    fn serve(&self) {
        let _ = self.helper.set(std::thread::current());
        let mut seen = 0;
        loop {
            let mut since: Option<std::time::Instant> = None;
            let mut spins = 0u32;
            loop {
                if self.stop.load(Ordering::Acquire) {
                    return;
                }
                if self.posted.load(Ordering::Acquire) > seen {
                    break;
                }
                spins = spins.wrapping_add(1);
                if spins < 256 {
                    std::hint::spin_loop();
                    continue;
                }
                if since.get_or_insert_with(std::time::Instant::now).elapsed() < SPIN {
                    // Awake, but any other thread that is ready to run goes first (the gzip
                    // inflater, which a plain spin slowed down by 7%).
                    std::thread::yield_now();
                    continue;
                }
                // Park, unless a job or the stop came in meanwhile (`run` and `Stop` unpark
                // after they publish; the timeout is a second guard).
                self.sleeping.store(true, Ordering::SeqCst);
                if self.posted.load(Ordering::SeqCst) == seen && !self.stop.load(Ordering::SeqCst) {
                    std::thread::park_timeout(SPIN);
                }
                self.sleeping.store(false, Ordering::SeqCst);
            }
            let n = self.posted.load(Ordering::Acquire);
            if let Some(JobPtr(job)) = lock(&self.slot).take() {
                // SAFETY: `run` keeps the job alive until `done` reaches `n` (see there).
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*job)() }));
                if let Err(p) = r {
                    *lock(&self.panic) = Some(p);
                }
            }
            seen = n;
            self.done.store(n, Ordering::Release);
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

/// Helpers that [`ordered`] has spawned on the pool and that have not returned, all calls
/// together.
static HELPING: AtomicUsize = AtomicUsize::new(0);

/// Runs `work` on items `0..n`, at most `ahead` items ahead of the one being taken, and hands
/// the results to `take` on this thread, in order. `make` builds item `k` on this thread just
/// before it is handed out. Helpers on the pool's free workers (up to `threads − 1`) take the
/// items first come, first served; this thread runs the item it needs next itself when no
/// helper has started it, and otherwise waits, leaving the later items to the helpers (this
/// thread has `take` to do: it was the busier one when it took them too). Stops at the first
/// error of `take` (the items already handed out are finished first). Without workers, or with
/// `threads` ≤ 1, it all runs here, one item at a time.
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
    // Items handed out and not started, oldest first. Helpers take the oldest one until none
    // is left (this thread takes the one it needs next when no helper has).
    let queue = std::sync::Mutex::new(std::collections::VecDeque::with_capacity(ahead));
    // Helpers of this call that have not returned.
    let helpers = AtomicUsize::new(0);
    let (work, queue, helpers) = (&work, &queue, &helpers);
    // A panic is kept as the result, and resumed when its turn comes.
    let run = |item: T| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(item)));
    let workers = pool.current_num_threads();
    pool.in_place_scope(|s| {
        // Results that came in before their turn, by k % ahead.
        let mut ready: Vec<Option<std::thread::Result<R>>> = (0..ahead).map(|_| None).collect();
        let mut handed = 0;
        for k in 0..n {
            while handed < n && handed < k + ahead {
                let item = make(handed);
                lock(queue).push_back((handed, item));
                handed += 1;
                // A helper only where a worker is free: the scope waits for every job it
                // spawned, and a job queued behind other work (another thread's estimate) would
                // hold this thread until that work is done, though it has nothing left to take.
                if helpers.load(Ordering::SeqCst) + 1 < threads && HELPING.load(Ordering::SeqCst) < workers {
                    helpers.fetch_add(1, Ordering::SeqCst);
                    HELPING.fetch_add(1, Ordering::SeqCst);
                    let tx = tx.clone();
                    s.spawn(move |_| {
                        loop {
                            let next = lock(queue).pop_front();
                            let Some((slot, item)) = next else { break };
                            let _ = tx.send((slot, run(item)));
                        }
                        HELPING.fetch_sub(1, Ordering::SeqCst);
                        helpers.fetch_sub(1, Ordering::SeqCst);
                    });
                }
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
    fn ordered_does_not_wait_for_workers_busy_with_other_helpers() {
        // Every worker held by a helper of another call (a thread's estimate, say) until this
        // call has returned: a job spawned behind them would hold this call until they let go,
        // after the 10 s of their wait, and they would find themselves timed out.
        let Some(pool) = pool() else { return };
        let workers = pool.current_num_threads();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let wait = std::sync::Arc::new(std::sync::Mutex::new(wait));
        let (report, reports) = std::sync::mpsc::channel();
        let (started, starts) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let (wait, report, started) = (wait.clone(), report.clone(), started.clone());
            HELPING.fetch_add(1, Ordering::SeqCst);
            pool.spawn(move || {
                started.send(()).unwrap();
                let released = lock(&wait).recv_timeout(std::time::Duration::from_secs(10)).is_ok();
                HELPING.fetch_sub(1, Ordering::SeqCst);
                report.send(released).unwrap();
            });
        }
        for _ in 0..workers {
            starts.recv().unwrap();
        }
        let mut seen = Vec::new();
        let r: Result<(), ()> = ordered(
            64,
            workers + 1,
            8,
            |k| k,
            |x| x + 1,
            |y| {
                seen.push(y);
                Ok(())
            },
        );
        for _ in 0..workers {
            release.send(()).unwrap();
        }
        assert_eq!((r, seen), (Ok(()), (1..=64).collect::<Vec<_>>()));
        assert!(reports.iter().take(workers).all(|released| released), "a worker waited out its 10 s");
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
    fn relay_runs_each_job_beside_main_and_passes_a_panic_on() {
        relay_scope(|relay| {
            let relay = relay.expect("a thread can be started");
            let count = std::sync::atomic::AtomicUsize::new(0);
            for k in 0..200usize {
                let job = || {
                    count.fetch_add(k, Ordering::SeqCst);
                };
                // Jobs both shorter and longer than the main part, and gaps long enough to park.
                let r = relay.run(&job, || {
                    if k % 50 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(3));
                    }
                    k * 2
                });
                assert_eq!(r, k * 2);
                assert_eq!(count.load(Ordering::SeqCst), k * (k + 1) / 2, "job {k} done when run returns");
            }
            let panicked =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| relay.run(&|| panic!("in the job"), || 1)));
            assert!(panicked.is_err());
            // A run inside a run is refused (it would take the outer job's place).
            let nested = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                relay.run(&|| (), || relay.run(&|| (), || ()));
            }));
            assert!(nested.is_err());
            // The relay still works after both.
            let flag = AtomicBool::new(false);
            relay.run(&|| flag.store(true, Ordering::SeqCst), || ());
            assert!(flag.load(Ordering::SeqCst));
        });
    }
}
