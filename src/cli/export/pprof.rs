//! pprof's `profile.proto` (what `go tool pprof`, Pyroscope, Parca and Cloud Profiler read):
//! every chosen thread's stacks as samples, one profile for all, each sample labelled with its
//! thread. The messages below are the schema's (vendor/pprof/profile.proto), declared for
//! prost; fields jscalls does not write are left out, as protobuf allows.
//!
//! A function is named by its label (`name url:line:column`), as `tree` names it, with its
//! file and first line beside it for `pprof -list`. With the default weight a sample has two
//! values: the CPU profile's samples on its stack
//! (`samples`/`count`) and the estimated calls' self time there (`cpu`/`nanoseconds`, the
//! default). Stacks of trace events inside calls (Layout, GC, …) have self time and no
//! samples of their own. `--transform` shapes the calls' stacks only, so with it the profile
//! has the self time alone, as with `--weight samples|sample-time` the one weight asked for.

use jscalls::tree::{Func, StackId, Stacks};
use prost::Message;

use super::{thread_label, Format, Rendered};
use crate::cli::args::{ExportArgs, WeightArg};
use crate::cli::tree::{Chosen, Failure};

pub(super) const FORMAT: Format = Format {
    name: "pprof",
    what: "a pprof profile",
    help: "pprof's profile.proto (gzipped when OUT ends in .gz), for go tool pprof, Pyroscope, Parca: \
           every thread's stacks, labelled with their thread",
    suffix: ".pb.gz",
    endings: &[".pb", ".pprof"],
    spans: false,
    counts: true,
    markers: false,
    samples: true,
    render,
};

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub(crate) sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub(crate) function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub(crate) string_table: Vec<String>,
    #[prost(message, optional, tag = "11")]
    pub(crate) period_type: Option<ValueType>,
    #[prost(int64, repeated, tag = "13")]
    pub(crate) comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub(crate) default_sample_type: i64,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ValueType {
    #[prost(int64, tag = "1")]
    pub(crate) r#type: i64,
    #[prost(int64, tag = "2")]
    pub(crate) unit: i64,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Sample {
    /// Leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub(crate) location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub(crate) value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) label: Vec<Label>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Label {
    #[prost(int64, tag = "1")]
    pub(crate) key: i64,
    #[prost(int64, tag = "2")]
    pub(crate) str: i64,
    #[prost(int64, tag = "3")]
    pub(crate) num: i64,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Mapping {
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    #[prost(int64, tag = "5")]
    pub(crate) filename: i64,
    #[prost(bool, tag = "7")]
    pub(crate) has_functions: bool,
    #[prost(bool, tag = "8")]
    pub(crate) has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub(crate) has_line_numbers: bool,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Location {
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    #[prost(uint64, tag = "2")]
    pub(crate) mapping_id: u64,
    #[prost(message, repeated, tag = "4")]
    pub(crate) line: Vec<Line>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Line {
    #[prost(uint64, tag = "1")]
    pub(crate) function_id: u64,
    #[prost(int64, tag = "2")]
    pub(crate) line: i64,
    #[prost(int64, tag = "3")]
    pub(crate) column: i64,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Function {
    #[prost(uint64, tag = "1")]
    pub(crate) id: u64,
    #[prost(int64, tag = "2")]
    pub(crate) name: i64,
    #[prost(int64, tag = "3")]
    pub(crate) system_name: i64,
    #[prost(int64, tag = "4")]
    pub(crate) filename: i64,
    #[prost(int64, tag = "5")]
    pub(crate) start_line: i64,
}

/// The profile being built: strings and functions shared by every thread. Its samples are
/// held as a path, a thread and values (a few words each) and made messages only when encoded.
#[derive(Default, Clone)]
struct Builder {
    /// Everything but the samples.
    profile: Profile,
    samples: Vec<Pending>,
    /// Each thread's labels.
    labels: Vec<Vec<Label>>,
    strings: rustc_hash::FxHashMap<String, i64>,
    /// Each function's location id (one location per function: the trees know functions).
    locations: rustc_hash::FxHashMap<Func, u64>,
    /// Every path: the path it was called from (`u32::MAX` for none) and its location.
    links: Vec<(u32, u64)>,
    /// The current thread's paths by their link: the self time and the samples on one path
    /// make one sample.
    paths: rustc_hash::FxHashMap<(u32, u64), u32>,
    /// Each path's sample (`usize::MAX` for none yet).
    sample_of_path: Vec<usize>,
}

/// A sample before it is encoded: its path (leaf), thread and values.
#[derive(Clone, Copy)]
struct Pending {
    path: u32,
    thread: u32,
    value: [i64; 2],
}

impl Builder {
    fn string(&mut self, s: &str) -> i64 {
        if let Some(&k) = self.strings.get(s) {
            return k;
        }
        let k = self.profile.string_table.len() as i64;
        self.profile.string_table.push(s.to_owned());
        self.strings.insert(s.to_owned(), k);
        k
    }

    fn value_type(&mut self, kind: &str, unit: &str) -> ValueType {
        ValueType { r#type: self.string(kind), unit: self.string(unit) }
    }

    /// The sample types (the last the default), the one mapping (named `file`) and a comment.
    fn head(&mut self, types: Vec<ValueType>, file: &str, comment: &str) {
        self.profile.default_sample_type = types.last().map_or(0, |t| t.r#type);
        self.profile.period_type = types.last().cloned();
        self.profile.sample_type = types;
        let filename = self.string(file);
        self.profile.mapping.push(Mapping {
            id: 1,
            filename,
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
        });
        let comment = self.string(comment);
        self.profile.comment.push(comment);
    }

    /// The location of `f`: made with its function on first use. Lines are 1-based, 0 unknown.
    fn location(&mut self, f: &Func) -> u64 {
        if let Some(&id) = self.locations.get(f) {
            return id;
        }
        let id = self.profile.location.len() as u64 + 1;
        // The label (`name url:line:column`), as `tree` and the collapsed stacks name it:
        // pprof merges functions by name, and scripts have many `(anonymous)` ones.
        let label = f.label();
        let function = Function {
            id,
            name: self.string(&label),
            system_name: self.string(&f.name),
            filename: self.string(&f.url),
            start_line: f.line.map_or(0, |l| l + 1),
        };
        self.profile.function.push(function);
        let line = Line { function_id: id, line: f.line.map_or(0, |l| l + 1), column: f.column.map_or(0, |c| c + 1) };
        self.profile.location.push(Location { id, mapping_id: 1, line: vec![line] });
        self.locations.insert(f.clone(), id);
        id
    }

    /// The location of samples on no function (the tree's root, after transforms).
    fn root_location(&mut self) -> u64 {
        self.location(&Func {
            name: "(root)".into(),
            url: String::new(),
            script: String::new(),
            line: None,
            column: None,
        })
    }

    /// The profile's bytes (see [`Builder::write`]).
    fn encode(self, threads: usize) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(threads, &mut out).expect("a Vec grows as needed");
        out
    }

    /// Writes the profile: its samples (most of it) encoded on up to `threads` threads, four
    /// pieces a thread (of 1,024 samples at least, fewer when their stacks are deep), written
    /// in order as they come (on a deep recursion the profile is many times its input's size).
    fn write(self, threads: usize, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let piece = self.samples.len().div_ceil(threads.max(1) * 4).max(1024);
        write_in_parts(self, threads, (piece, PIECE_LOCATIONS), w)
    }

    /// Starts a thread, its samples labelled `labels`: they are not merged with the previous
    /// thread's.
    fn new_thread(&mut self, labels: &[Label]) {
        self.paths.clear();
        self.labels.push(labels.to_vec());
    }

    /// The path of `location` called from path `parent` (`u32::MAX` for none), numbered on
    /// first use in this thread.
    fn path(&mut self, parent: u32, location: u64) -> u32 {
        let next = self.links.len() as u32;
        let id = *self.paths.entry((parent, location)).or_insert(next);
        if id == next {
            self.links.push((parent, location));
            self.sample_of_path.push(usize::MAX);
        }
        id
    }

    /// Adds `stacks`' samples with their weight (scaled by `scale`, rounded) as value `slot`,
    /// each labelled with the thread. Samples on one stack make one pprof sample, and so do
    /// stacks of one path through every `Stacks` added since `new_thread`.
    fn add(&mut self, stacks: &Stacks, slot: usize, scale: f64) {
        // Summed per stack first, in a table by stack id: one pass over the samples.
        let root = stacks.len();
        let sums = stacks.rounded_sums(scale);
        // Each stack's path, from its parent's (parents come first): O(1) a stack, where
        // hashing each stack's list of locations would cost its depth.
        let mut location_of: Vec<u64> = vec![0; stacks.funcs.len()];
        let mut path_of: Vec<u32> = Vec::with_capacity(root + 1);
        for k in 0..root {
            let (parent, f) = stacks.frame(StackId::new(k));
            let location = match location_of[f.index()] {
                0 => {
                    let id = self.location(&stacks.funcs[f.index()]);
                    location_of[f.index()] = id;
                    id
                }
                id => id,
            };
            let p = self.path(parent.map_or(u32::MAX, |p| path_of[p.index()]), location);
            path_of.push(p);
        }
        if sums[root] != 0 {
            let location = self.root_location();
            let p = self.path(u32::MAX, location);
            path_of.push(p);
        }
        for (k, &v) in sums.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let p = path_of[k];
            match self.sample_of_path[p as usize] {
                usize::MAX => {
                    let mut value = [0; 2];
                    value[slot] = v;
                    self.sample_of_path[p as usize] = self.samples.len();
                    let thread = self.labels.len().saturating_sub(1) as u32;
                    self.samples.push(Pending { path: p, thread, value });
                }
                at => self.samples[at].value[slot] += v,
            }
        }
    }
}

/// Writes the profile, its samples made and encoded at most `piece.0` at a time, a piece
/// ending once it holds `piece.1` locations, on up to `threads` threads: byte for byte what
/// prost's `encode_to_vec` makes of it whole (protobuf writes fields in the order of their
/// numbers, and a repeated field's entries one after another, so the pieces are spliced).
fn write_in_parts(
    b: Builder,
    threads: usize,
    piece: (usize, usize),
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let Builder { profile: mut rest, samples, labels, links, .. } = b;
    let head = Profile { sample_type: std::mem::take(&mut rest.sample_type), ..Profile::default() };
    let n_values = head.sample_type.len().min(2);
    // Each path's depth (a path comes after the one it was called from).
    let mut depth: Vec<u32> = Vec::with_capacity(links.len());
    for &(parent, _) in &links {
        let d = if parent == u32::MAX { 1 } else { depth[parent as usize] + 1 };
        depth.push(d);
    }
    let mut starts = vec![0];
    let (mut count, mut locations) = (0, 0);
    for (k, p) in samples.iter().enumerate() {
        if count == piece.0.max(1) || locations >= piece.1 {
            starts.push(k);
            (count, locations) = (0, 0);
        }
        count += 1;
        locations += depth[p.path as usize] as usize;
    }
    starts.push(samples.len());
    let make = |k: usize| &samples[starts[k]..starts[k + 1]];
    let work = |part: &[Pending]| {
        let mut buf = Vec::new();
        let mut s = Sample::default();
        for p in part {
            // Leaf first, as pprof keeps them.
            s.location_id.clear();
            let mut at = p.path;
            while at != u32::MAX {
                let (parent, location) = links[at as usize];
                s.location_id.push(location);
                at = parent;
            }
            s.value.clear();
            s.value.extend_from_slice(&p.value[..n_values]);
            s.label.clone_from(&labels[p.thread as usize]);
            prost::encoding::message::encode(2, &s, &mut buf);
        }
        buf
    };
    w.write_all(&head.encode_to_vec())?;
    let pieces = starts.len() - 1;
    jscalls::threads::ordered(pieces, threads, 2 * threads.max(1), make, work, |part| w.write_all(&part))?;
    w.write_all(&rest.encode_to_vec())
}

/// The most locations a piece of samples holds: a few MB encoded, however deep the stacks.
const PIECE_LOCATIONS: usize = 1 << 20;

/// One thread of `diff --format pprof`: its name, and its stacks in BASE and in NEW.
pub(crate) struct ThreadDelta {
    pub(crate) name: String,
    pub(crate) base: Option<Stacks>,
    pub(crate) new: Option<Stacks>,
}

/// `diff --format pprof`: one profile of NEW's self time minus BASE's, per stack (`cpu`,
/// nanoseconds, negative where it shrank), each sample labelled with its thread: what
/// `go tool pprof -diff_base BASE NEW` shows, from one file. Stacks equal on both sides are left
/// out.
pub(crate) fn difference(threads: impl IntoIterator<Item = ThreadDelta>, comment: &str) -> Vec<u8> {
    let mut b = Builder::default();
    b.string("");
    let cpu = b.value_type("cpu", "nanoseconds");
    // pprof shows the mapping's file by its last path component: a name, not the inputs.
    b.head(vec![cpu], "jscalls-diff", comment);
    let thread_key = b.string("thread");
    for t in threads {
        let labels = [Label { key: thread_key, str: b.string(&t.name), num: 0 }];
        b.new_thread(&labels);
        // Each side's stacks go once added.
        if let Some(s) = t.new {
            b.add(&s, 0, 1000.0);
        }
        if let Some(s) = t.base {
            b.add(&s, 0, -1000.0);
        }
    }
    b.samples.retain(|s| s.value.iter().any(|&v| v != 0));
    // Here, after both sides' estimates, encoding is a small part of the run.
    b.encode(1)
}

fn render(kept: Vec<Chosen>, args: &ExportArgs, input: &str, threads: usize) -> Result<Rendered, Failure> {
    let b = build(&kept, args, input);
    Ok(Rendered::Stream(Box::new(move |w| b.write(threads, w))))
}

/// What the stacks' weights (µs, or samples) are multiplied by to make pprof's values
/// (nanoseconds, or samples), which are whole numbers.
pub(super) fn scale(args: &ExportArgs) -> f64 {
    match args.select.weight {
        WeightArg::Samples => 1.0,
        WeightArg::SelfTime | WeightArg::SampleTime => 1000.0,
    }
}

/// The profile of `kept`.
fn build(kept: &[Chosen], args: &ExportArgs, input: &str) -> Builder {
    let mut b = Builder::default();
    b.string("");
    let counts = args.select.weight == WeightArg::SelfTime && args.select.transforms.is_empty();
    let types = match args.select.weight {
        WeightArg::SelfTime if counts => vec![b.value_type("samples", "count"), b.value_type("cpu", "nanoseconds")],
        WeightArg::SelfTime => vec![b.value_type("cpu", "nanoseconds")],
        WeightArg::Samples => vec![b.value_type("samples", "count")],
        WeightArg::SampleTime => vec![b.value_type("sample-time", "nanoseconds")],
    };
    let scale = scale(args);
    b.head(types, input, &format!("jscalls export of {input}"));
    let n_values = b.profile.sample_type.len();
    let (thread_key, pid_key, tid_key) = (b.string("thread"), b.string("pid"), b.string("tid"));
    for c in kept {
        let labels = [
            Label { key: thread_key, str: b.string(&thread_label(c)), num: 0 },
            Label { key: pid_key, str: 0, num: c.pid },
            Label { key: tid_key, str: 0, num: c.tid },
        ];
        b.new_thread(&labels);
        b.add(&c.stacks, n_values - 1, scale);
        if counts {
            if let Some(samples) = &c.samples {
                b.add(samples, 0, 1.0);
            }
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use jscalls::tree::CallTree;
    use jscalls::{assemble, Config, Source};

    use super::*;
    use crate::cli::args::{Cli, Command};

    /// The profile of `kept`, encoded.
    fn profile_bytes(kept: &[Chosen], args: &ExportArgs, input: &str, threads: usize) -> Vec<u8> {
        build(kept, args, input).encode(threads)
    }

    /// What the export asks [`choose`](crate::cli::tree::choose) for.
    fn pprof_wants() -> crate::cli::tree::Wants {
        crate::cli::tree::Wants {
            spans: FORMAT.spans,
            counts: FORMAT.counts,
            events: FORMAT.markers,
            samples: FORMAT.samples,
            rounded: None,
            per_stack: false,
            per_name: false,
        }
    }

    fn export_args(extra: &[&str]) -> ExportArgs {
        let mut argv = vec!["jscalls", "export", "x", "--to", "pprof"];
        argv.extend_from_slice(extra);
        match Cli::parse_from(argv).command {
            Command::Export(a) => a,
            _ => unreachable!("an export command line"),
        }
    }

    /// Each function's value `slot`, summed over the samples where it is the leaf (its self
    /// value), by name.
    fn self_by_name(p: &Profile, slot: usize) -> std::collections::BTreeMap<String, i64> {
        let mut out = std::collections::BTreeMap::new();
        for s in &p.sample {
            let leaf = &p.location[s.location_id[0] as usize - 1];
            let f = &p.function[leaf.line[0].function_id as usize - 1];
            *out.entry(p.string_table[f.name as usize].clone()).or_insert(0) += s.value[slot];
        }
        out.retain(|_, v| *v != 0);
        out
    }

    /// The profile read back has the trees' functions, self times and sample counts.
    #[test]
    fn a_pprof_profile_reads_back_as_the_trees_it_was_made_of() {
        let mut cfg = Config::default();
        cfg.keep_event_names = true;
        let (_, assembled) = assemble(&Source::file("fixtures/chrome-ui.json.gz"), &cfg).unwrap();
        let args = export_args(&[]);
        let kept =
            crate::cli::tree::choose(assembled, &args.select, None, pprof_wants()).unwrap_or_else(|_| panic!("chosen"));
        let bytes = profile_bytes(&kept, &args, "chrome-ui.json.gz", 1);
        let p = Profile::decode(&bytes[..]).unwrap();
        let types: Vec<(&str, &str)> = p
            .sample_type
            .iter()
            .map(|t| (p.string_table[t.r#type as usize].as_str(), p.string_table[t.unit as usize].as_str()))
            .collect();
        assert_eq!(types, [("samples", "count"), ("cpu", "nanoseconds")]);
        assert_eq!(p.string_table[p.default_sample_type as usize], "cpu");
        // One thread has calls: every sample carries its label.
        assert_eq!(kept.len(), 1);
        let thread = p.string_table.iter().position(|s| s == "thread").unwrap() as i64;
        assert!(p.sample.iter().all(|s| s.label.iter().any(|l| l.key == thread)));
        // Self time: the flat tree's, in ns rounded per stack.
        let c = &kept[0];
        let mut want = std::collections::BTreeMap::new();
        for (f, own, _) in CallTree::functions(&c.stacks) {
            *want.entry(c.stacks.funcs[f.index()].label()).or_insert(0.0) += own * 1000.0;
        }
        let got = self_by_name(&p, 1);
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().filter(|k| want[*k] >= 0.5).collect::<Vec<_>>());
        for (name, ns) in &got {
            // Rounded per stack: off by under 1 ns a stack.
            assert!((*ns as f64 - want[name]).abs() < c.stacks.samples.len() as f64, "{name}: {ns} vs {}", want[name]);
        }
        let total: i64 = p.sample.iter().map(|s| s.value[1]).sum();
        assert!((total as f64 - c.stacks.total() * 1000.0).abs() < c.stacks.samples.len() as f64);
        // Counts: the CPU profile's samples, every one on some stack.
        let samples = c.samples.as_ref().unwrap();
        let counted: i64 = p.sample.iter().map(|s| s.value[0]).sum();
        assert_eq!(counted as f64, samples.total());
        // Functions keep their file and first line for `pprof -list`.
        let relayout = p.function.iter().find(|f| p.string_table[f.system_name as usize] == "relayout").unwrap();
        assert_eq!(p.string_table[relayout.filename as usize], "http://127.0.0.1:40017/ui.js");
        assert_eq!(relayout.start_line, 9);
    }

    /// Encoded in parts on several threads, the profile is the bytes prost writes for it whole.
    #[test]
    fn the_parts_encoded_apart_are_the_whole_profile() {
        let (_, assembled) = assemble(&Source::file("fixtures/node-mixed.cpuprofile.gz"), &Config::default()).unwrap();
        let args = export_args(&[]);
        let kept =
            crate::cli::tree::choose(assembled, &args.select, None, pprof_wants()).unwrap_or_else(|_| panic!("chosen"));
        let b = build(&kept, &args, "x");
        let bytes = b.clone().encode(4);
        // prost's encoding of the same profile, whole.
        let p = Profile::decode(&bytes[..]).unwrap();
        let whole = p.encode_to_vec();
        assert_eq!(bytes, whole);
        assert!(p.sample.len() > 20, "{} samples: too few for several parts", p.sample.len());
        // Cut by count, and by locations (a piece ends at the sample that reaches the bound).
        for piece in [(1, usize::MAX), (7, usize::MAX), (p.sample.len(), usize::MAX), (usize::MAX, 1), (usize::MAX, 40)]
        {
            let mut parts = Vec::new();
            write_in_parts(b.clone(), 2, piece, &mut parts).unwrap();
            assert_eq!(parts, whole, "{piece:?} a part");
        }
    }

    /// Summed per stack as they are chosen, rounded as pprof rounds them, the stacks' samples
    /// make the same profile as one a call, with one sample per stack left.
    #[test]
    fn samples_summed_per_stack_make_the_same_profile() {
        let (mut per_call, mut per_stack) = (0, 0);
        for (file, extra) in [
            ("fixtures/chrome-ui.json.gz", &[][..]),
            ("fixtures/node-mixed.cpuprofile.gz", &[][..]),
            ("fixtures/node-mixed.cpuprofile.gz", &["--weight", "samples"][..]),
            ("fixtures/chrome-ui.json.gz", &["--weight", "sample-time", "--js-only"][..]),
        ] {
            let args = export_args(extra);
            let choose = |rounded| {
                let (_, assembled) = assemble(&Source::file(file), &Config::default()).unwrap();
                let wants = crate::cli::tree::Wants { rounded, ..pprof_wants() };
                crate::cli::tree::choose(assembled, &args.select, None, wants).unwrap_or_else(|_| panic!("chosen"))
            };
            let (each, summed) = (choose(None), choose(Some(scale(&args))));
            assert_eq!(profile_bytes(&each, &args, "x", 1), profile_bytes(&summed, &args, "x", 1), "{file} {extra:?}");
            for (e, s) in each.iter().zip(&summed) {
                assert!(s.stacks.samples.len() <= s.stacks.len() + 1);
                assert_eq!(e.total, s.total);
                (per_call, per_stack) = (per_call + e.stacks.samples.len(), per_stack + s.stacks.samples.len());
            }
        }
        assert!(per_stack < per_call, "nothing summed: {per_stack} of {per_call}");
    }

    /// With a transform the profile weighs the calls' self time alone.
    #[test]
    fn a_transform_leaves_the_self_time_alone() {
        let (_, assembled) = assemble(&Source::file("fixtures/chrome-ui.json.gz"), &Config::default()).unwrap();
        let args = export_args(&["--transform", "focus-function:relayout"]);
        let kept =
            crate::cli::tree::choose(assembled, &args.select, None, pprof_wants()).unwrap_or_else(|_| panic!("chosen"));
        let bytes = profile_bytes(&kept, &args, "x", 1);
        let p = Profile::decode(&bytes[..]).unwrap();
        assert_eq!(p.sample_type.len(), 1);
        assert!(self_by_name(&p, 0).keys().all(|k| !k.starts_with("(program)")));
    }
}
