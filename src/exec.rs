//! How the pure pieces run: the model and the estimate take an [`Exec`] and hand it
//! independent jobs; this module says whether those run one after another or side by side.
//! Whole threads' estimates are scheduled against the writer in `schedule.rs`, above them.

use crate::parallel::{self, lock};
use itertools::Either;
use std::sync::Mutex;

/// Runs independent jobs; the results come back in the jobs' order.
pub(crate) trait Exec: Sync {
    /// `f` on every item.
    fn map<T: Send, R: Send>(&self, items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R>;

    /// `a` and `b`, as two jobs of [`Exec::map`].
    fn join<A: Send, B: Send>(&self, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
        // Each job is taken out of its slot by the one thread that runs it.
        let (a, b) = (Mutex::new(Some(a)), Mutex::new(Some(b)));
        let mut done = self.map(vec![false, true], |second| {
            if second {
                Either::Right(lock(&b).take().expect("each job runs once")())
            } else {
                Either::Left(lock(&a).take().expect("each job runs once")())
            }
        });
        match (done.pop(), done.pop()) {
            (Some(Either::Right(b)), Some(Either::Left(a))) => (a, b),
            _ => unreachable!("map gives the two results in the jobs' order"),
        }
    }
}

/// Up to this many threads, the calling thread included (1: all on the calling thread), from
/// the process's pool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Threads(pub usize);

impl Exec for Threads {
    fn map<T: Send, R: Send>(&self, items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
        parallel::map(items, self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_gives_both_results_in_order() {
        for threads in [1, 2, 4] {
            let owned = vec![1, 2, 3];
            // Each job owns or borrows what it needs, and may return a different type.
            let (a, b) = Threads(threads).join(move || owned.into_iter().sum::<i32>(), || "second".len());
            assert_eq!((a, b), (6, 6), "{threads} threads");
            let seen = Mutex::new(Vec::new());
            let (x, y) = Threads(threads).join(|| lock(&seen).push('a'), || lock(&seen).push('b'));
            assert_eq!((x, y), ((), ()));
            let mut seen = seen.into_inner().unwrap();
            seen.sort_unstable();
            assert_eq!(seen, ['a', 'b'], "each job ran once");
        }
    }
}
