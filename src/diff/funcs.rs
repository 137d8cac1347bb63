//! Two recordings (or two groups of runs), function by function and CallNode by CallNode.
//!
//! Recordings of one page differ in process and thread ids and in script ids, so neither
//! identifies anything here: threads are paired by name and, among threads of one name, by
//! how busy they are (the busiest renderer main thread with the busiest); a function is its
//! name, script (its URL without scheme and host), line and column; a CallNode is the path of
//! functions from a root.

use rustc_hash::FxHashMap as HashMap;

use super::stats;
use super::ThreadEstimate;
use crate::tree::{CallTree, Func, StackId, Stacks};

/// A function as it is recognised across recordings: the script id left out.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncKey {
    /// Name.
    pub name: String,
    /// Script URL, without scheme and host for http(s).
    pub url: String,
    /// 0-based line.
    pub line: Option<i64>,
    /// 0-based column.
    pub column: Option<i64>,
}

impl FuncKey {
    /// A URL without its scheme and host (`http://127.0.0.1:41437/app.js` → `/app.js`), as
    /// scripts are matched across recordings: a page served locally gets another port on every
    /// run, and a script is `file:///app.js` in one format and `/app.js` in another.
    pub fn script_path(url: &str) -> &str {
        without_origin(url)
    }

    fn of(f: &Func) -> FuncKey {
        FuncKey { name: f.name.clone(), url: without_origin(&f.url).to_owned(), line: f.line, column: f.column }
    }

    /// `name url:line:column` (1-based), or the name alone when there is no URL.
    pub fn label(&self) -> String {
        Func {
            name: self.name.clone(),
            url: self.url.clone(),
            script: String::new(),
            line: self.line,
            column: self.column,
        }
        .label()
    }
}

/// A URL without its scheme and host (see [`FuncKey::script_path`]).
fn without_origin(url: &str) -> &str {
    match url.split_once("://") {
        Some(("http" | "https" | "file", rest)) => rest.find('/').map_or("/", |k| &rest[k..]),
        _ => url,
    }
}

/// What is measured of a function or CallNode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Self time, µs.
    SelfTime,
    /// Total time, µs (a recursive function's counted once).
    Total,
    /// Number of calls.
    Calls,
}

impl Metric {
    /// `self`, `total`, `calls`.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::SelfTime => "self",
            Metric::Total => "total",
            Metric::Calls => "calls",
        }
    }
}

/// One run's figures for a function or CallNode.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// Self time, µs.
    pub self_time: f64,
    /// Total time, µs.
    pub total: f64,
    /// Calls.
    pub calls: f64,
}

impl Figures {
    /// The figure of `m`.
    pub fn get(&self, m: Metric) -> f64 {
        match m {
            Metric::SelfTime => self.self_time,
            Metric::Total => self.total,
            Metric::Calls => self.calls,
        }
    }
}

/// What a row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A function ([`FuncDiff::funcs`]).
    Function(u32),
    /// A CallNode ([`FuncDiff::path`]).
    Node(u32),
}

/// A function or CallNode of a thread pair, per run of each side (0 in a run that lacks it).
#[derive(Debug, Clone)]
pub struct Row {
    /// Index into [`FuncDiff::threads`].
    pub thread: usize,
    /// The function or CallNode.
    pub subject: Subject,
    figures: Figs,
}

/// A row's figures, BASE's runs then NEW's: in the row when each side has one run (a diff of
/// two large recordings has millions of rows), else in an allocation of their own.
#[derive(Debug, Clone)]
enum Figs {
    One([Figures; 2]),
    /// The figures and how many of them are BASE's.
    Runs(Box<[Figures]>, u32),
}

impl Row {
    fn new(thread: usize, subject: Subject, runs: (usize, usize)) -> Row {
        let figures = if runs == (1, 1) {
            Figs::One([Figures::default(); 2])
        } else {
            Figs::Runs(vec![Figures::default(); runs.0 + runs.1].into(), runs.0 as u32)
        };
        Row { thread, subject, figures }
    }

    /// Every run's figures, and how many are BASE's.
    fn runs(&self) -> (&[Figures], usize) {
        match &self.figures {
            Figs::One(f) => (f, 1),
            Figs::Runs(f, b) => (f, *b as usize),
        }
    }

    fn runs_mut(&mut self) -> &mut [Figures] {
        match &mut self.figures {
            Figs::One(f) => f,
            Figs::Runs(f, _) => f,
        }
    }

    /// BASE's runs.
    pub fn base(&self) -> &[Figures] {
        let (f, b) = self.runs();
        &f[..b]
    }

    /// NEW's runs.
    pub fn new_runs(&self) -> &[Figures] {
        let (f, b) = self.runs();
        &f[b..]
    }

    /// The median of `m` in BASE and in NEW.
    pub fn medians(&self, m: Metric) -> (f64, f64) {
        if let Figs::One([b, n]) = &self.figures {
            // A single run's median, without a sort.
            return (b.get(m), n.get(m));
        }
        let of = |v: &[Figures]| stats::median(&v.iter().map(|f| f.get(m)).collect::<Vec<_>>());
        (of(self.base()), of(self.new_runs()))
    }

    /// NEW's median less BASE's.
    pub fn change(&self, m: Metric) -> f64 {
        let (b, n) = self.medians(m);
        n - b
    }

    /// The smallest and largest value of `m` on one side.
    pub fn range(&self, m: Metric, new: bool) -> (f64, f64) {
        let v: Vec<f64> = (if new { self.new_runs() } else { self.base() }).iter().map(|f| f.get(m)).collect();
        stats::range(&v)
    }

    /// The one-sided Mann–Whitney p-value that NEW's `m` is larger (`greater`) or smaller
    /// than BASE's; None with a single run on either side.
    pub fn p_value(&self, m: Metric, greater: bool) -> Option<f64> {
        if self.base().len() < 2 || self.new_runs().len() < 2 {
            return None;
        }
        let b: Vec<f64> = self.base().iter().map(|f| f.get(m)).collect();
        let n: Vec<f64> = self.new_runs().iter().map(|f| f.get(m)).collect();
        Some(stats::mann_whitney(&b, &n, greater))
    }
}

/// A pair of threads, one per side (either may be missing).
#[derive(Debug, Clone)]
pub struct ThreadPair {
    /// The threads' name ("thread" when they have none).
    pub name: String,
    /// Its rank among threads of that name, busiest first (0 for the busiest).
    pub rank: usize,
    /// (pid, tid) in BASE's first run that has it.
    pub base: Option<(i64, i64)>,
    /// (pid, tid) in NEW's first run that has it.
    pub new: Option<(i64, i64)>,
}

impl ThreadPair {
    /// `name`, or `name #2` for the second busiest of that name.
    pub fn label(&self) -> String {
        if self.rank == 0 {
            self.name.clone()
        } else {
            format!("{} #{}", self.name, self.rank + 1)
        }
    }
}

/// The comparison of two groups of runs.
#[derive(Debug, Clone, Default)]
pub struct FuncDiff {
    /// Thread pairs, in order of first appearance (BASE, then NEW).
    pub threads: Vec<ThreadPair>,
    /// Functions, by [`Subject::Function`] index.
    pub funcs: Vec<FuncKey>,
    /// CallNodes as (parent, function), by [`Subject::Node`] index; parents first. A CallNode
    /// is one thread pair's: the same path on two threads is two CallNodes.
    pub nodes: Vec<(Option<u32>, u32)>,
    /// A row per function of each thread pair, largest self-time change first.
    pub functions: Vec<Row>,
    /// A row per CallNode of each thread pair, largest self-time change first.
    pub call_nodes: Vec<Row>,
    /// How many runs each side has.
    pub runs: (usize, usize),
}

impl FuncDiff {
    /// [`diff`] of estimates it may free: each thread's calls and stacks go as soon as its
    /// rows have them, so that the rows of two large recordings are not made beside both whole.
    pub fn of_owned(mut base: Vec<Vec<ThreadEstimate>>, mut new: Vec<Vec<ThreadEstimate>>) -> FuncDiff {
        let mut build = Build::new(&base, &new);
        for (runs, is_new) in [(&mut base, false), (&mut new, true)] {
            for (r, run) in runs.iter_mut().enumerate() {
                for (k, rank) in ranked(run) {
                    // What is left of the thread (its name, ids and counts) is all `thread` reads.
                    let stacks = run[k].take_stacks();
                    build.thread(&run[k], &stacks, rank, r, is_new);
                }
            }
        }
        build.finish()
    }

    /// The functions from a root to CallNode `node`.
    pub fn path(&self, node: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut n = Some(node);
        while let Some(k) = n {
            let (p, f) = self.nodes[k as usize];
            out.push(f);
            n = p;
        }
        out.reverse();
        out
    }

    /// A row's subject as text: a function's label, or a CallNode's path of names joined by `>`.
    pub fn subject_label(&self, s: Subject) -> String {
        match s {
            Subject::Function(f) => self.funcs[f as usize].label(),
            Subject::Node(n) => {
                let names: Vec<String> = self
                    .path(n)
                    .iter()
                    .map(|&f| {
                        let k = &self.funcs[f as usize];
                        if k.name.is_empty() {
                            "(anonymous)".to_owned()
                        } else {
                            k.name.clone()
                        }
                    })
                    .collect();
                names.join(">")
            }
        }
    }
}

/// Compares BASE's runs with NEW's (each run: the threads of one recording).
pub fn diff<R: AsRef<[ThreadEstimate]>>(base: &[R], new: &[R]) -> FuncDiff {
    let mut build = Build::new(base, new);
    for (runs, is_new) in [(base, false), (new, true)] {
        for (r, run) in runs.iter().enumerate() {
            let run = run.as_ref();
            for (k, rank) in ranked(run) {
                build.thread(&run[k], &run[k].stacks(), rank, r, is_new);
            }
        }
    }
    build.finish()
}

/// A [`FuncDiff`] being made, a thread at a time.
struct Build {
    d: FuncDiff,
    func_ids: HashMap<FuncKey, u32>,
    /// A CallNode is one thread pair's: its id is its row in `call_nodes`. Keyed by its parent
    /// (a root's by `u32::MAX - pair`) and function in one word: there are millions.
    node_ids: HashMap<u64, u32>,
    thread_ids: HashMap<(String, usize), usize>,
    /// (thread pair, function) → row in `functions`.
    rows: HashMap<(usize, u32), usize>,
    functions: Vec<Row>,
    call_nodes: Vec<Row>,
    /// One thread with calls in every recording (a .cpuprofile against a trace of the same
    /// program): the threads are one, whatever each format names them.
    one_thread: bool,
    /// Per thread pair, whether its name is a recording's own.
    recorded: Vec<bool>,
}

impl Build {
    fn new<R: AsRef<[ThreadEstimate]>>(base: &[R], new: &[R]) -> Build {
        let with_calls = |run: &[ThreadEstimate]| run.iter().filter(|t| t.call_count() > 0).count();
        Build {
            d: FuncDiff { runs: (base.len(), new.len()), ..FuncDiff::default() },
            func_ids: HashMap::default(),
            node_ids: HashMap::default(),
            thread_ids: HashMap::default(),
            rows: HashMap::default(),
            functions: Vec::new(),
            call_nodes: Vec::new(),
            one_thread: base.iter().chain(new).all(|r| with_calls(r.as_ref()) <= 1),
            recorded: Vec::new(),
        }
    }

    /// Adds thread `t` (of rank `rank` among its run's threads of its name) of run `r` of one
    /// side, its stacks with every call's.
    fn thread(&mut self, t: &ThreadEstimate, stacks: &Stacks, rank: usize, r: usize, is_new: bool) {
        let Build { d, func_ids, node_ids, thread_ids, rows, functions, call_nodes, one_thread, recorded } = self;
        if *one_thread && t.call_count() == 0 {
            return;
        }
        let name = t.label().to_owned();
        let key = if *one_thread { String::new() } else { name.clone() };
        let next = d.threads.len();
        let pair = *thread_ids.entry((key, rank)).or_insert(next);
        if pair == next {
            d.threads.push(ThreadPair { name, rank, base: None, new: None });
            recorded.push(t.named_by_recording);
        } else if t.name.is_some() && (d.threads[pair].name == "thread" || (t.named_by_recording && !recorded[pair])) {
            // Paired as the one thread: named as a side that names it, a recording's own name
            // before a profile's file name.
            d.threads[pair].name = name;
            recorded[pair] = t.named_by_recording;
        }
        let slot = if is_new { &mut d.threads[pair].new } else { &mut d.threads[pair].base };
        slot.get_or_insert((t.pid, t.tid));
        // This thread's functions and CallNodes in global ids.
        let gid: Vec<u32> = stacks
            .funcs
            .iter()
            .map(|f| {
                let n = func_ids.len() as u32;
                let id = *func_ids.entry(FuncKey::of(f)).or_insert(n);
                if id == n {
                    d.funcs.push(FuncKey::of(f));
                }
                id
            })
            .collect();
        let mut calls = vec![0.0; gid.len()];
        for &(s, _) in &stacks.samples[..t.call_count()] {
            calls[stacks.frame(s).1.index()] += 1.0;
        }
        let side = if is_new { d.runs.0 + r } else { r };
        let add = |row: &mut Row, fig: Figures| {
            let f = &mut row.runs_mut()[side];
            // Two local functions can share a key (scripts told apart by id alone).
            f.self_time += fig.self_time;
            f.total += fig.total;
            f.calls += fig.calls;
        };
        for (f, s, tot) in CallTree::functions(stacks) {
            let fig = Figures { self_time: s, total: tot, calls: calls[f.index()] };
            let next = functions.len();
            let k = *rows.entry((pair, gid[f.index()])).or_insert(next);
            if k == next {
                functions.push(Row::new(pair, Subject::Function(gid[f.index()]), d.runs));
            }
            add(&mut functions[k], fig);
        }
        // A CallNode per stack: the stacks of calls are a prefix tree already.
        let n = stacks.len();
        let (mut own, mut below, mut count) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for &(s, w) in &stacks.samples {
            own[s.index()] += w;
            below[s.index()] += w;
            count[s.index()] += 1.0;
        }
        for x in (0..n).rev() {
            if let (Some(p), _) = stacks.frame(StackId::new(x)) {
                below[p.index()] += below[x];
            }
        }
        let mut global = vec![0u32; n];
        for x in 0..n {
            let (parent, f) = stacks.frame(StackId::new(x));
            let key = (parent.map(|p| global[p.index()]), gid[f.index()]);
            let next = node_ids.len() as u32;
            let parent = key.0.unwrap_or(u32::MAX - pair as u32);
            let id = *node_ids.entry(u64::from(parent) << 32 | u64::from(key.1)).or_insert(next);
            if id == next {
                d.nodes.push(key);
                call_nodes.push(Row::new(pair, Subject::Node(id), d.runs));
            }
            global[x] = id;
            add(&mut call_nodes[id as usize], Figures { self_time: own[x], total: below[x], calls: count[x] });
        }
    }

    fn finish(self) -> FuncDiff {
        let Build { mut d, mut functions, mut call_nodes, func_ids, node_ids, thread_ids, rows, .. } = self;
        drop((func_ids, node_ids, thread_ids, rows));
        let (func_rank, node_rank) = ranks(&d);
        let single = d.runs == (1, 1);
        sort(&mut functions, single, |f| func_rank[f as usize]);
        sort(&mut call_nodes, single, |n| node_rank[n as usize]);
        d.functions = functions;
        d.call_nodes = call_nodes;
        d
    }
}

/// Each function's place in [`FuncKey`] order, and each CallNode's in the order of its path of
/// functions (a pre-order walk of the nodes with children in function order: a path sorts
/// before its extensions, and a subtree before its next sibling's).
fn ranks(d: &FuncDiff) -> (Vec<u32>, Vec<u32>) {
    let mut order: Vec<u32> = (0..d.funcs.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| d.funcs[a as usize].cmp(&d.funcs[b as usize]));
    let mut func_rank = vec![0u32; d.funcs.len()];
    for (r, &f) in order.iter().enumerate() {
        func_rank[f as usize] = r as u32;
    }
    // Children grouped by parent (roots under `n`), each group in function order.
    let n = d.nodes.len();
    let mut by_parent: Vec<(u32, u32, u32)> = d
        .nodes
        .iter()
        .enumerate()
        .map(|(k, &(p, f))| (p.unwrap_or(n as u32), func_rank[f as usize], k as u32))
        .collect();
    by_parent.sort_unstable();
    let mut first = vec![0u32; n + 2];
    for &(p, _, _) in &by_parent {
        first[p as usize + 1] += 1;
    }
    for k in 1..first.len() {
        first[k] += first[k - 1];
    }
    let children = |p: usize| by_parent[first[p] as usize..first[p + 1] as usize].iter().map(|x| x.2);
    let mut node_rank = vec![0u32; n];
    let mut next = 0u32;
    // Children pushed in reverse, so the first is walked first; no recursion on deep trees.
    let mut stack: Vec<u32> = children(n).rev().collect();
    while let Some(k) = stack.pop() {
        node_rank[k as usize] = next;
        next += 1;
        stack.extend(children(k as usize).rev());
    }
    (func_rank, node_rank)
}

/// Rows by largest self-time change, then total-time change, then thread and subject (each
/// row's key is its own: any sort gives one order).
fn sort(rows: &mut [Row], single: bool, rank: impl Fn(u32) -> u32) {
    // The changes are magnitudes (or NaN, largest as `total_cmp` has it): their bits sort as they do.
    let changes = |r: &Row| (r.change(Metric::SelfTime).abs().to_bits(), r.change(Metric::Total).abs().to_bits());
    let subject = |r: &Row| match r.subject {
        Subject::Function(k) | Subject::Node(k) => rank(k),
    };
    if single {
        // A change is a subtraction here (`single`: one run a side): computed at each
        // comparison, in place, with no table of keys beside millions of rows (the subject's
        // rank, a lookup, only on a tie).
        rows.sort_unstable_by(|a, b| {
            let ((sa, ta), (sb, tb)) = (changes(a), changes(b));
            (sb, tb, a.thread).cmp(&(sa, ta, b.thread)).then_with(|| subject(a).cmp(&subject(b)))
        });
    } else {
        // A median per comparison would dominate the diff: the keys computed once.
        rows.sort_by_cached_key(|r| {
            let (s, t) = changes(r);
            (std::cmp::Reverse(s), std::cmp::Reverse(t), r.thread, subject(r))
        });
    }
}

/// The threads of a run (their indices) with their rank among threads of the same name,
/// busiest first.
fn ranked(run: &[ThreadEstimate]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..run.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&run[a], &run[b]);
        a.label().cmp(b.label()).then(b.busy().total_cmp(&a.busy())).then((a.pid, a.tid).cmp(&(b.pid, b.tid)))
    });
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(order.len());
    for (i, &k) in order.iter().enumerate() {
        let rank =
            if i > 0 && run[order[i - 1]].label() == run[k].label() { out.last().map_or(0, |l| l.1 + 1) } else { 0 };
        out.push((k, rank));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate() -> Vec<ThreadEstimate> {
        estimate_with(1.0, 1.0)
    }

    /// [`estimate`] with z's and b's self times.
    fn estimate_with(z: f64, b: f64) -> Vec<ThreadEstimate> {
        // m [0, 100] holds z [10, 50] (which holds q [20, 30]) and then b [60, 90]: seen in the
        // order m, z, q, b; named so that name order differs.
        let call = |ts: f64, dur: f64, depth: i32, name: &str| {
            let own = match name {
                "z" => z,
                "b" => b,
                _ => 1.0,
            };
            serde_json::json!({"ts": ts, "dur": dur, "selfTime": own, "depth": depth, "nodeDepth": depth,
                "nodeId": depth, "sampleIndex": ts as i64, "functionName": name, "url": "", "scriptId": "1",
                "lineNumber": null, "columnNumber": null})
        };
        let doc = serde_json::json!({"profiles": [{"pid": 1, "tid": 1, "calls": [
            call(0.0, 100.0, 0, "m"), call(10.0, 40.0, 1, "z"), call(20.0, 10.0, 2, "q"), call(60.0, 30.0, 1, "b"),
        ]}]});
        ThreadEstimate::read_calls_document(doc.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn rows_that_tie_are_in_function_and_path_order() {
        let (b, n) = (estimate(), estimate());
        let d = diff(&[b], &[n]);
        let names: Vec<String> = d.functions.iter().map(|r| d.subject_label(r.subject)).collect();
        assert_eq!(names, ["b", "m", "q", "z"]);
        // A path before its extensions, a subtree before its next sibling.
        let paths: Vec<String> = d.call_nodes.iter().map(|r| d.subject_label(r.subject)).collect();
        assert_eq!(paths, ["m", "m>b", "m>z", "m>z>q"]);
    }

    #[test]
    fn estimates_freed_as_they_are_counted_give_the_same_rows() {
        // NEW: z's self time 1 → 6, b's 1 → 3; m's total 4 → 11.
        let (b, n) = (estimate_with(1.0, 1.0), estimate_with(6.0, 3.0));
        for base in [vec![b.clone()], vec![b.clone(), b.clone()]] {
            let want = diff(&base, std::slice::from_ref(&n));
            let got = FuncDiff::of_owned(base.clone(), vec![n.clone()]);
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
            let names: Vec<String> = got.functions.iter().map(|r| got.subject_label(r.subject)).collect();
            // By self-time change, then total-time change.
            assert_eq!(names, ["z", "b", "m", "q"]);
            let z = &got.functions[0];
            assert_eq!((z.medians(Metric::SelfTime), z.medians(Metric::Total)), ((1.0, 6.0), (2.0, 7.0)));
            assert_eq!((z.base().len(), z.new_runs().len()), (base.len(), 1));
        }
    }
}
