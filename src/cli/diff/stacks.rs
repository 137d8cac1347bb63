//! The two sides' stacks compared: which threads pair, under what names, and `--format
//! pprof`, NEW minus BASE as one pprof profile (the differential flame graph is `flame.rs`).

use jscalls::diff::funcs::FuncKey;
use jscalls::diff::ThreadEstimate;
use jscalls::tree::Stacks;

use super::{write_with, DiffArgs, Header};
use crate::cli::Failed;

/// Each thread with calls (its index in `side`) and the name its stacks go under: its name,
/// `#2` for the second busiest of that name (threads pair across recordings as `diff` pairs
/// them), or `one` when each side has one thread (a .cpuprofile is named after its file).
fn named(side: &[ThreadEstimate], one: Option<&str>) -> Vec<(usize, String)> {
    let mut v: Vec<usize> = (0..side.len()).filter(|&k| side[k].call_count() > 0).collect();
    v.sort_by(|&a, &b| {
        let (a, b) = (&side[a], &side[b]);
        a.label().cmp(b.label()).then(b.busy().total_cmp(&a.busy())).then((a.pid, a.tid).cmp(&(b.pid, b.tid)))
    });
    let mut out: Vec<(usize, String)> = Vec::with_capacity(v.len());
    let mut rank = 0;
    for (i, &k) in v.iter().enumerate() {
        let t = &side[k];
        rank = if i > 0 && side[v[i - 1]].label() == t.label() { rank + 1 } else { 0 };
        let name = match one {
            Some(n) => n.to_owned(),
            None if rank == 0 => t.label().to_owned(),
            None => format!("{} #{}", t.label(), rank + 1),
        };
        out.push((k, name));
    }
    out
}

/// A thread's stacks with scripts by path: a local server's port changes between recordings.
fn scripts_by_path(mut stacks: Stacks) -> Stacks {
    for f in &mut stacks.funcs {
        f.url = FuncKey::script_path(&f.url).to_owned();
    }
    stacks
}

/// The name both sides' threads go under when each side has one thread with calls.
fn one_name(base: &[ThreadEstimate], new: &[ThreadEstimate]) -> Option<String> {
    let with_calls = |s: &[ThreadEstimate]| s.iter().filter(|t| t.call_count() > 0).count();
    (with_calls(base) <= 1 && with_calls(new) <= 1)
        .then(|| new.iter().chain(base).find(|t| t.call_count() > 0).map(|t| t.label().to_owned()))
        .flatten()
}

/// Every thread name of either side (see [`named`]), in order, with the index of the thread it
/// names on each side.
pub(super) fn paired(base: &[ThreadEstimate], new: &[ThreadEstimate]) -> Vec<(String, Option<usize>, Option<usize>)> {
    let one = one_name(base, new);
    let (b, n) = (named(base, one.as_deref()), named(new, one.as_deref()));
    let mut names: Vec<&String> = b.iter().chain(&n).map(|(_, name)| name).collect();
    names.sort();
    names.dedup();
    let find = |side: &[(usize, String)], name: &str| side.iter().find(|(_, k)| k == name).map(|(t, _)| *t);
    names.into_iter().map(|name| (name.clone(), find(&b, name), find(&n, name))).collect()
}

/// Thread `k`'s stacks (scripts by path), taken from it: its calls are freed.
pub(super) fn take(side: &mut [ThreadEstimate], k: Option<usize>) -> Option<Stacks> {
    k.map(|k| scripts_by_path(side[k].take_stacks()))
}

/// `diff --format pprof`: NEW minus BASE as one pprof profile (see
/// [`crate::cli::export::pprof::difference`]); each thread's estimate is taken apart as its
/// stacks are added, so that both sides' are not copied whole beside the profile.
pub(super) fn pprof_difference(
    args: &DiffArgs,
    header: &Header,
    mut base: Vec<ThreadEstimate>,
    mut new: Vec<ThreadEstimate>,
) -> Result<(), Failed> {
    use crate::cli::export::pprof::{difference, ThreadDelta};
    let threads = paired(&base, &new).into_iter().map(|(name, b, n)| ThreadDelta {
        name,
        base: take(&mut base, b),
        new: take(&mut new, n),
    });
    let bytes = difference(threads, &format!("jscalls diff: {} minus {}", header.new, header.base));
    write_with(args, |w| w.write_all(&bytes))
}
