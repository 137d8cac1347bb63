//! Whole threads' estimates scheduled: all at once, or each as the writer reaches it
//! ([`Lazy`]), on the threads [`crate::exec`] decides.

use crate::estimate::{estimate_thread, estimate_twice, Estimates, IntegratorConfig, Mode, ThreadCalls};
use crate::exec::{Exec, Threads};
use crate::model::ThreadWork;
use crate::parallel;
use crate::strings::Strings;

/// The integrator options of each thread: with more than one thread to be had, only a thread
/// with more samples than twice all the others together may be cut in two; beside threads of
/// similar size the other cores are busy with those, and the halves of a cut thread would wait
/// on each other.
fn thread_configs(works: &[ThreadWork], cfg: IntegratorConfig, threads: usize) -> Vec<IntegratorConfig> {
    let total: usize = works.iter().map(|w| w.model.n_samples()).sum();
    works
        .iter()
        .map(|w| {
            let n = w.model.n_samples();
            IntegratorConfig { cut: threads > 1 && n > 2 * (total - n), ..cfg }
        })
        .collect()
}

/// Estimates every thread, on up to `threads` threads, keeping the input order.
pub(crate) fn estimate_all(
    works: Vec<ThreadWork>,
    mode: Mode,
    cfg: IntegratorConfig,
    threads: usize,
) -> Vec<ThreadCalls> {
    let cfgs = thread_configs(&works, cfg, threads);
    let exec = Threads(threads);
    // Biggest first, for the balance; the results go back to the input order.
    let mut jobs: Vec<(usize, ThreadWork)> = works.into_iter().enumerate().collect();
    jobs.sort_by_key(|(_, w)| std::cmp::Reverse(w.model.n_samples() + w.entries.len()));
    let mut done = exec.map(jobs, |(slot, w)| (slot, estimate_thread(w, mode, cfgs[slot], &exec)));
    done.sort_by_key(|(slot, _)| *slot);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Threads not estimated yet: [`Estimates::each`] estimates one, hands it on and drops it
/// before the next. With more than one thread allowed, up to one thread per thread allowed is
/// estimated while the current one is being written, as far as they fit in `OVERLAP_BUDGET`.
#[derive(Debug)]
pub(crate) struct Lazy {
    /// How calls are computed.
    pub mode: Mode,
    /// Strings the frames refer to.
    pub strings: Strings,
    /// The threads, sorted by (pid, tid).
    pub works: Vec<ThreadWork>,
    /// Integrator options.
    pub cfg: IntegratorConfig,
    /// Threads allowed, the writing thread included (1: estimate on the writing thread).
    pub threads: usize,
}

/// The most memory that the threads estimated ahead, while another is written, may be expected
/// to take together; when even one is bigger, threads are estimated one at a time.
const OVERLAP_BUDGET: usize = 128 << 20;

/// A generous guess of the memory a thread's estimate holds: a call is 60 bytes with its
/// self time, depth and place in the canonical order, 40 more while that order is sorted; a
/// sample or an event opens about one call at most in real recordings.
fn estimate_bytes(w: &ThreadWork) -> usize {
    (w.model.n_samples() + w.entries.len()) * 96
}

/// Threads estimated ahead of the one being handed on: one per thread allowed, as far as the
/// biggest fits in the budget that many times (0: one at a time).
fn ahead(works: &[ThreadWork], threads: usize) -> usize {
    let biggest = works.iter().map(estimate_bytes).max().unwrap_or(0);
    (OVERLAP_BUDGET / biggest.max(1)).min(threads)
}

impl Lazy {
    /// Every thread estimated twice, with these options and then with `second`'s estimate
    /// options, from one model; `keep` makes what is kept of each estimate on the thread that
    /// made it. Threads are scheduled as [`Estimates::each`] schedules them.
    pub(crate) fn each_twice<T: Send>(
        mut self,
        second: IntegratorConfig,
        keep: impl Fn(&ThreadCalls, &Strings) -> T + Sync,
    ) -> Vec<(T, T)> {
        let works = std::mem::take(&mut self.works);
        let (mode, strings, n) = (self.mode, &self.strings, works.len());
        let cfgs = thread_configs(&works, self.cfg, self.threads);
        let exec = Threads(self.threads);
        // An item holds one estimate at a time (the first only as `keep` made it, once the
        // second is made), as `each`'s do.
        let ahead = 1 + ahead(&works, self.threads);
        let mut works = works.into_iter().zip(cfgs);
        let mut out = Vec::with_capacity(n);
        let done: Result<(), std::convert::Infallible> = parallel::ordered(
            n,
            self.threads,
            ahead,
            |_| works.next().expect("one work per item"),
            |(w, cfg)| {
                let cfgs = [cfg, IntegratorConfig { cut: cfg.cut, ..second }];
                estimate_twice(w, mode, cfgs, &exec, |t| keep(t, strings))
            },
            |both| {
                out.push(both);
                Ok(())
            },
        );
        let Ok(()) = done;
        out
    }
}

impl Estimates for Lazy {
    fn mode(&self) -> Mode {
        self.mode
    }
    fn len(&self) -> usize {
        self.works.len()
    }
    fn each<E>(&mut self, mut f: impl FnMut(&ThreadCalls, &Strings) -> Result<(), E>) -> Result<(), E> {
        let works = std::mem::take(&mut self.works);
        let (mode, strings) = (self.mode, &self.strings);
        let cfgs = thread_configs(&works, self.cfg, self.threads);
        let exec = Threads(self.threads);
        let ahead = ahead(&works, self.threads);
        if self.threads <= 1 || works.len() <= 1 || ahead == 0 {
            for (w, cfg) in works.into_iter().zip(cfgs) {
                f(&estimate_thread(w, mode, cfg, &exec), strings)?;
            }
            return Ok(());
        }
        let n = works.len();
        let mut works = works.into_iter().zip(cfgs);
        parallel::ordered(
            n,
            self.threads,
            1 + ahead,
            |_| works.next().expect("one work per item"),
            |(w, cfg)| estimate_thread(w, mode, cfg, &exec),
            |t| f(&t, strings),
        )
    }
}
