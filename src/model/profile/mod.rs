//! The profile model: DevTools' `CPUProfileDataModel`, step for step.
//!
//! A [`RawProfile`] is what the input says (nodes, samples, time deltas), assembled from a
//! `.cpuprofile` or from `Profile`/`ProfileChunk` events. [`ProfileModel::new`] turns it into the
//! parsed tree, time-sorted samples in ms, and the meta nodes, with every quirk the reference
//! has: the first node is the root whatever its name, a node listed under two parents
//! is parsed twice, the id map keeps the copy parsed last, samples are stably sorted, a lone
//! `(program)` sample between two stacks with the same bottom frame is repaired.

mod parse;
mod times;

use itertools::Either;
use rustc_hash::FxHashMap;

use super::column::{Column32, Ids, Positions, SmallDeltas};
use crate::error::{Error, Location};
use crate::input::leaf::{Leaf, UNKNOWN_ID};
use crate::js::Scalar;
use crate::strings::{StrId, Strings};
use parse::{meta_nodes, ParsedTree};
use times::{check_times, sort_samples, TimeLeaps, Times};

/// A call frame, each field as the JSON value it was (compared with `===`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct CallFrame {
    /// `functionName`.
    pub function_name: Scalar,
    /// `scriptId`: a string in trace chunks (normalised with `String(x)`), as given in `.cpuprofile`s.
    pub script_id: Scalar,
    /// `url`.
    pub url: Scalar,
    /// `lineNumber`, 0-based.
    pub line_number: Scalar,
    /// `columnNumber`, 0-based.
    pub column_number: Scalar,
    /// What DevTools shows for the frame once source maps apply (set after assembly, when
    /// the command applies maps); the fields above stay as recorded.
    pub original: Option<Original>,
}

/// A recorded line's original place: the source's URL, 1-based line and column.
pub(crate) type LineOrigin = Option<(StrId, f64, f64)>;

/// Where source maps put a profile's recorded lines: each entry of `lines` (as it pairs with
/// the sorted samples), and each `positionTicks` entry of each node that has them.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineOrigins {
    pub lines: Vec<LineOrigin>,
    /// In the order of [`ProfileModel::position_ticks`].
    pub ticks: Vec<Vec<LineOrigin>>,
}

/// A frame's source-mapped name and place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Original {
    /// DevTools' name, when a map gives one that is not empty.
    pub name: Option<StrId>,
    /// The original source's URL and 0-based line and column.
    pub place: Option<(StrId, i64, i64)>,
}

/// A [`CallFrame`] compared and hashed bit for bit (`-0` is not `0`, a NaN is itself).
#[derive(Debug, Clone, Copy)]
struct FrameBits(CallFrame);

impl FrameBits {
    fn fields(&self) -> [ScalarKey; 5] {
        let f = &self.0;
        [f.function_name, f.script_id, f.url, f.line_number, f.column_number].map(ScalarKey::exact)
    }
}

impl PartialEq for FrameBits {
    fn eq(&self, other: &FrameBits) -> bool {
        self.fields() == other.fields()
    }
}

impl Eq for FrameBits {}

impl std::hash::Hash for FrameBits {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.fields().hash(h)
    }
}

/// The distinct call frames of one profile. Nodes refer to them by index: a long recording has
/// many nodes (one per distinct stack) but far fewer frames.
#[derive(Debug, Clone, Default)]
pub(crate) struct Frames {
    list: Vec<CallFrame>,
    /// Indexes into `list`, hashed by their frame: 4 bytes a frame, where a map from frame to
    /// index would hold each frame twice (a profile of a million distinct frames).
    index: hashbrown::HashTable<u32>,
}

impl Frames {
    /// The index of `f`, adding it on first use.
    pub(crate) fn intern(&mut self, f: CallFrame) -> u32 {
        let hash = |f: &CallFrame| std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, FrameBits(*f));
        let list = &mut self.list;
        let key = FrameBits(f);
        match self.index.entry(hash(&f), |&k| FrameBits(list[k as usize]) == key, |&k| hash(&list[k as usize])) {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let n = list.len() as u32;
                list.push(f);
                e.insert(n);
                n
            }
        }
    }
}

/// A protocol node as the input gives it: 32 bytes, as a long trace has millions of nodes and
/// holds them beside the model made of them; what only `.cpuprofile` nodes carry is boxed.
#[derive(Debug, Clone)]
pub(crate) struct RawNode {
    /// The node id.
    pub id: i64,
    /// The parent id (trace style); [`UNKNOWN_ID`] when absent or not an id.
    pub parent: i64,
    /// The frame: an index into [`RawProfile::frames`].
    pub frame: u32,
    /// Whether `hitCount` is a number (DevTools refuses a profile with neither hit counts nor samples).
    pub hit_count_is_number: bool,
    /// The children, hit count and ticks, when the node has any of them.
    pub more: Option<Box<NodeMore>>,
}

/// The fields of a [`RawNode`] that trace nodes seldom have.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeMore {
    /// The child ids (CDP style), when the node has a `children` array.
    pub children: Option<Box<[i64]>>,
    /// `hitCount` when it is a number, else 0 (`hitCount || 0`).
    pub hit_count: f64,
    /// `positionTicks`, NaN where an entry's value is not a number.
    pub position_ticks: Option<Ticks>,
}

impl RawNode {
    /// A node; `more` is kept only when it says something.
    pub(crate) fn new(id: i64, parent: i64, frame: u32, hit_count_is_number: bool, more: NodeMore) -> RawNode {
        let said = more.children.is_some() || more.position_ticks.is_some() || more.hit_count.to_bits() != 0;
        RawNode { id, parent, frame, hit_count_is_number, more: said.then(|| Box::new(more)) }
    }

    /// The child ids, when the node has a `children` array.
    pub(crate) fn children(&self) -> Option<&[i64]> {
        self.more.as_ref()?.children.as_deref()
    }

    /// `hitCount || 0`.
    pub(crate) fn hit_count(&self) -> f64 {
        self.more.as_ref().map_or(0.0, |m| m.hit_count)
    }

    /// `positionTicks`, when the node has them.
    pub(crate) fn position_ticks(&self) -> Option<&Ticks> {
        self.more.as_ref()?.position_ticks.as_ref()
    }
}

/// A node's `positionTicks`: (line, ticks) entries.
pub(crate) type Ticks = Box<[(f64, f64)]>;

/// A CPU profile before the model is built: what the input says.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawProfile {
    /// µs.
    pub start_time: f64,
    /// µs; used only for the end of the last frame in CPU-profile mode.
    pub end_time: f64,
    /// The nodes in input order.
    pub nodes: Vec<RawNode>,
    /// The nodes' frames.
    pub frames: Frames,
    /// The sampled node ids ([`UNKNOWN_ID`] for values that are not ids); None when absent.
    pub samples: Option<Ids>,
    /// µs between samples; None when absent.
    pub time_deltas: Option<SmallDeltas>,
    /// The line of each sample, in the order recorded (not sorted with the samples, as DevTools
    /// leaves them); NaN for a value that is not a number. None when absent.
    pub lines: Option<Positions>,
    /// The column (1-based) of each sample's line, as `lines` (Chrome records them since 2024).
    pub columns: Option<Positions>,
    /// Whether the line data is wanted ([`crate::Config::keep_lines`]): the model keeps
    /// neither `lines` nor `positionTicks` without.
    pub keep_lines: bool,
    /// `trace_ids` from the chunks: trace-id key code (see [`Entry::trace`](super::Entry::trace))
    /// → value. [`TraceBuilder::finish`](super::trace::TraceBuilder::finish) takes them out to
    /// look up the thread's events in them; the model does not keep them.
    pub trace_ids: Option<FxHashMap<u64, Scalar>>,
}

impl RawProfile {
    /// Keeps the line data, or drops it ([`RawProfile::keep_lines`]).
    pub(crate) fn keep(&mut self, keep_lines: bool) {
        self.keep_lines = keep_lines;
        if !keep_lines {
            self.lines = None;
            self.columns = None;
        }
    }
}

/// What `appendLegacyCPUProfile` reads: each parsed node's `positionTicks` (its protocol node is
/// the last with its id), and `totalHitCount`.
fn legacy_line_data(raw: &[RawNode], parsed: &[Node], samples: Option<&Ids>) -> (Vec<(u32, Ticks)>, f64) {
    let mut by_id: FxHashMap<i64, usize> = FxHashMap::default();
    for (k, n) in raw.iter().enumerate() {
        by_id.insert(n.id, k);
    }
    let ticks = if !raw.iter().any(|n| n.position_ticks().is_some()) {
        Vec::new()
    } else {
        parsed
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(k, n)| Some((k as u32, raw[*by_id.get(&n.id)?].position_ticks()?.clone())))
            .collect()
    };
    let total = if raw[0].hit_count_is_number {
        raw.iter().fold(0.0, |sum, n| sum + n.hit_count())
    } else {
        // buildHitCountFromSamples: a sample of a known id counts once.
        samples.map_or(0, |s| s.iter().filter(|id| by_id.contains_key(id)).count()) as f64
    };
    (ticks, total)
}

/// Marks "no node" in `u32` node references.
pub(crate) const NONE: u32 = u32::MAX;

/// A parsed node.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The protocol id.
    pub id: i64,
    /// Index of the parent in [`ProfileModel::nodes`], [`NONE`] for the root.
    pub parent: u32,
    /// Depth: the root is −1, its children 0.
    pub depth: i32,
    /// The frame: an index into [`ProfileModel::frames`] (see [`ProfileModel::frame`]).
    pub frame: u32,
    /// Frame identity for `framesAreEqual` (scriptId, functionName, lineNumber);
    /// [`NEVER_EQUAL`] for a frame never equal to anything, itself included (a NaN field).
    pub frame_key: u32,
}

/// The [`Node::frame_key`] of a frame never equal to anything.
pub(crate) const NEVER_EQUAL: u32 = u32::MAX;

// A long profile has millions of nodes: kept at 24 bytes.
const _: () = assert!(std::mem::size_of::<Node>() == 24);

/// Limits that keep hostile profiles from exhausting memory or time.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The deepest stack accepted.
    pub max_depth: u32,
    /// The most parsed nodes accepted beyond the protocol nodes (a node under several parents is
    /// parsed once per path, which a hostile profile can make exponential).
    pub max_extra_nodes: u64,
    /// The most samples accepted in one profile: at most 2³¹ − 1, the default (a call holds
    /// its sample's index in 32 bits).
    pub max_samples: u64,
    /// The most frames one profile's samples may enter, one after another: each JavaScript
    /// frame entered is a call, and a stack that goes a hundred thousand frames deep and back
    /// at every sample makes billions of them from a few MB of profile.
    pub max_calls: u64,
}

/// The most samples one profile can have: a call's sample index is an `i32`.
pub(crate) const MAX_SAMPLES: u64 = i32::MAX as u64;

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_depth: 100_000, max_extra_nodes: 1_000_000, max_samples: MAX_SAMPLES, max_calls: 100_000_000 }
    }
}

/// DevTools' `CPUProfileDataModel`, as far as ProfileCalls need it. (The default is a profile
/// of nothing: what a thread holds while its model is lent to an estimate.)
#[derive(Debug, Clone, Default)]
pub(crate) struct ProfileModel {
    /// Parsed nodes; index 0 is the root.
    pub nodes: Vec<Node>,
    /// The distinct frames the nodes refer to.
    pub frames: Vec<CallFrame>,
    /// Per frame, whether it is native (`url === "native V8Runtime"`).
    native_frames: Vec<bool>,
    id_to_node: IdMap,
    /// The node each sample resolves to ([`NONE`] for an unknown id), in time order. The
    /// sample's id is that node's (see [`ProfileModel::sample_id`]).
    pub sample_nodes: Vec<u32>,
    /// Sample times (see [`ProfileModel::timestamps`]).
    times: Times,
    /// The extra timestamp after the last sample, ms (when there are samples).
    extra_time: Option<f64>,
    /// `(garbage collector)`, `(program)`, `(idle)` among the root's children.
    pub gc: Option<u32>,
    /// The `(program)` node.
    pub program: Option<u32>,
    /// The `(idle)` node.
    pub idle: Option<u32>,
    /// ms.
    pub profile_start: f64,
    /// ms.
    pub profile_end: f64,
    /// How many parsed nodes share an id with another parsed node (a node under two parents).
    pub n_shared: u64,
    /// Samples whose id names no node (dropped by DevTools).
    pub n_unknown_samples: u64,
    /// The samples `fixMissingSamples` gave the previous sample's node (they were `(program)`),
    /// in order.
    pub repaired: Vec<u32>,
    /// Nodes whose id an earlier node already has (the later one wins the id lookup).
    pub n_duplicate_ids: u64,
    /// Nodes not reachable from the root: unknown, cyclic or self parents (ignored).
    pub n_unreachable: u64,
    /// Time deltas of more than a day (the times are used as given).
    pub time_leaps: TimeLeaps,
    /// The samples' lines as recorded ([`RawProfile::lines`]): `lines[i]` goes with sample `i`
    /// of the sorted samples, as DevTools pairs them.
    pub lines: Option<Positions>,
    /// The columns of those lines as recorded ([`RawProfile::columns`]), paired as `lines` is.
    pub columns: Option<Positions>,
    /// How many samples the input gave (before `sortSamples` made them as many as the times).
    pub raw_sample_count: usize,
    /// Without `lines`: the parsed nodes that have `positionTicks` (from the protocol node their
    /// id names, the last of that id), in parsed order.
    pub position_ticks: Vec<(u32, Ticks)>,
    /// Without `lines`: `totalHitCount`, the protocol nodes' `hitCount`s summed (counted from
    /// the samples when the first node has none).
    pub total_hit_count: f64,
    /// Where source maps put the recorded lines (set after assembly, when the command applies
    /// maps and keeps lines).
    pub line_origins: Option<LineOrigins>,
    /// Per node, the node its samples' lines are in when that is not itself
    /// ([`ProfileModel::place_lines_at_scripts`]): a Firefox profile's samples end in native
    /// code more often than not, and its lines are on JavaScript frames.
    pub line_nodes: Option<Vec<u32>>,
    /// How many samples there were once they are let go ([`ProfileModel::release_samples`]).
    released: usize,
}

/// Interns the call frames of one profile by the fields `framesAreEqual` compares.
#[derive(Debug, Default)]
struct FrameKeys {
    /// The distinct keys, in order of first use: a key's index is its number.
    keys: Vec<(ScalarKey, ScalarKey, ScalarKey)>,
    /// Key numbers, found by the key's hash (4 bytes a key, not a second copy).
    index: hashbrown::HashTable<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ScalarKey {
    Undefined,
    Null,
    Bool(bool),
    Num(u64),
    Str(StrId),
}

impl ScalarKey {
    /// The same JSON value, bit for bit (`-0` is not `0`; a NaN is itself).
    fn exact(s: Scalar) -> ScalarKey {
        match s {
            Scalar::Undefined => ScalarKey::Undefined,
            Scalar::Null => ScalarKey::Null,
            Scalar::Bool(b) => ScalarKey::Bool(b),
            Scalar::Num(n) => ScalarKey::Num(n.to_bits()),
            Scalar::Str(s) => ScalarKey::Str(s),
        }
    }
}

/// The key `===` compares by (`-0` is `0`); None for NaN, which equals nothing.
fn scalar_key(s: Scalar) -> Option<ScalarKey> {
    Some(match s {
        Scalar::Undefined => ScalarKey::Undefined,
        Scalar::Null => ScalarKey::Null,
        Scalar::Bool(b) => ScalarKey::Bool(b),
        Scalar::Num(n) if n.is_nan() => return None,
        Scalar::Num(n) => ScalarKey::Num(if n == 0.0 { 0 } else { n.to_bits() }),
        Scalar::Str(s) => ScalarKey::Str(s),
    })
}

impl FrameKeys {
    /// The key of a frame ([`NEVER_EQUAL`] for one never equal to anything).
    fn key(&mut self, f: &CallFrame) -> u32 {
        match (scalar_key(f.script_id), scalar_key(f.function_name), scalar_key(f.line_number)) {
            (Some(a), Some(b), Some(c)) => {
                let key = (a, b, c);
                let keys = &mut self.keys;
                let hash = |k: &(ScalarKey, ScalarKey, ScalarKey)| {
                    std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, k)
                };
                let entry = self.index.entry(hash(&key), |&n| keys[n as usize] == key, |&n| hash(&keys[n as usize]));
                let n = match entry {
                    hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
                    hashbrown::hash_table::Entry::Vacant(e) => {
                        let n = keys.len() as u32;
                        keys.push(key);
                        e.insert(n);
                        n
                    }
                };
                n
            }
            _ => NEVER_EQUAL,
        }
    }
}

impl ProfileModel {
    /// Builds the model (`new CPUProfileDataModel(profile)`), taking the raw profile's data.
    ///
    /// `what` names the profile in messages; `location` is where it came from.
    pub(crate) fn new(
        raw: RawProfile,
        strings: &Strings,
        limits: Limits,
        what: &str,
        location: Option<Location>,
    ) -> Result<ProfileModel, Error> {
        let fail = |msg: String| Error::input(location, format!("{what}: {msg}"));
        let RawProfile {
            start_time,
            end_time,
            nodes,
            frames,
            samples,
            time_deltas,
            lines,
            columns,
            keep_lines,
            trace_ids: _,
        } = raw;
        let frames = frames.list;
        if nodes.is_empty() {
            return Err(fail("the profile has no nodes".into()));
        }
        let time_deltas = time_deltas.unwrap_or_default();
        let count = time_deltas.len().max(samples.as_ref().map_or(0, |s| s.len())) as u64;
        let max_samples = limits.max_samples.min(MAX_SAMPLES);
        if count > max_samples {
            return Err(fail(format!("{count} samples, more than the {max_samples} one profile may have")));
        }
        let (in_order, time_leaps) = check_times(start_time, &time_deltas, &fail)?;
        if samples.is_none() && !nodes[0].hit_count_is_number {
            return Err(fail("neither hitCount nor samples are present in the profile".into()));
        }
        let tree = ParsedTree::new(&nodes, &frames, strings, limits, &fail)?;
        let (position_ticks, total_hit_count) = match lines {
            None if keep_lines => legacy_line_data(&nodes, &tree.nodes, samples.as_ref()),
            _ => (Vec::new(), f64::NAN),
        };
        // Let go before the samples are made (a long trace has millions of nodes).
        drop(nodes);
        let raw_sample_count = samples.as_ref().map_or(0, |s| s.len());

        let (gc, program, idle) = meta_nodes(&tree.nodes, &tree.root_children, &frames, strings);
        let mut model = ProfileModel {
            nodes: tree.nodes,
            frames,
            native_frames: tree.native_frames,
            id_to_node: tree.id_to_node,
            sample_nodes: Vec::new(),
            times: Times::Us(Vec::new()),
            extra_time: None,
            gc,
            program,
            idle,
            profile_start: start_time / 1000.0,
            profile_end: end_time / 1000.0,
            n_shared: tree.n_shared,
            n_unknown_samples: 0,
            repaired: Vec::new(),
            n_duplicate_ids: tree.n_duplicate_ids,
            n_unreachable: tree.n_unreachable,
            time_leaps,
            lines,
            columns,
            raw_sample_count,
            position_ticks,
            total_hit_count,
            line_origins: None,
            line_nodes: None,
            released: 0,
        };
        model.take_samples(samples, start_time, time_deltas, in_order);
        if model.enters_more_than(limits.max_calls) {
            return Err(fail(format!(
                "its samples enter more than {} frames, each a call (raise the limit with --max-calls)",
                limits.max_calls
            )));
        }
        Ok(model)
    }

    /// Whether the samples, one after another, enter more than `limit` frames (those of a
    /// sample's stack that the stack before it lacks): about the calls they make (meta frames
    /// enter too; a trace event can split a call). Counted only when every sample's whole stack
    /// could pass the limit, and only until it does.
    fn enters_more_than(&self, limit: u64) -> bool {
        let nodes = &self.nodes;
        let at = |n: u32| if n == NONE { 0 } else { n as usize };
        let deepest = nodes.iter().map(|n| n.depth + 1).max().unwrap_or(0) as u64;
        let whole = |s: &[u32]| s.iter().map(|&n| (nodes[at(n)].depth + 1) as u64).sum::<u64>();
        if (self.sample_nodes.len() as u64).saturating_mul(deepest) <= limit || whole(&self.sample_nodes) <= limit {
            return false;
        }
        let (mut entered, mut before) = (0u64, 0usize);
        for &n in &self.sample_nodes {
            // Up from both stacks to the frame they share.
            let (mut a, mut b) = (before, at(n));
            while a != b {
                let (da, db) = (nodes[a].depth, nodes[b].depth);
                if da >= db {
                    a = at(nodes[a].parent);
                }
                if db >= da {
                    b = at(nodes[b].parent);
                    entered += 1;
                }
            }
            if entered > limit {
                return true;
            }
            before = at(n);
        }
        false
    }

    /// The samples and their times (sortSamples, normalizeTimestamps), or without samples the
    /// times alone.
    fn take_samples(&mut self, samples: Option<Ids>, start_time: f64, time_deltas: SmallDeltas, in_order: bool) {
        let model = self;
        let times_us = || {
            time_deltas.iter().scan(start_time, |t, x| {
                *t += x;
                Some(*t)
            })
        };
        let samples = samples.unwrap_or_default();
        if !samples.is_empty() {
            // sortSamples: a stable sort of (timestamp, sample) by timestamp; the result has as
            // many entries as there are timestamps. Usually the samples are in order already.
            // Ids are resolved to nodes first (the same per sample, whatever the order).
            // Narrow ids are resolved in place (fresh pages cost a fault each).
            let n = time_deltas.len();
            let mut sample_nodes: Vec<u32> = match samples {
                Column32::Narrow(mut ids) => {
                    ids.truncate(n);
                    for s in &mut ids {
                        *s = model.node_by_id(i64::from(*s)).unwrap_or(NONE);
                    }
                    ids
                }
                wide => {
                    let mut v = Vec::with_capacity(n);
                    v.extend(wide.iter().take(n).map(|s| model.node_by_id(s).unwrap_or(NONE)));
                    v
                }
            };
            sample_nodes.resize(n, NONE);
            let times = if in_order {
                Times::Deltas { start: start_time, deltas: time_deltas }
            } else {
                // (The iterator cannot tell its length: collecting it grew the vector step by step.)
                let mut timestamps: Vec<f64> = Vec::with_capacity(time_deltas.len());
                timestamps.extend(times_us());
                drop(time_deltas);
                sort_samples(&mut timestamps, &mut sample_nodes);
                Times::sorted(start_time, timestamps)
            };
            model.times = times;
            // normalizeTimestamps: plus one extra timestamp one mean interval later (the samples
            // were resized to the timestamps, so this is always done).
            let first = model.sample_times().next();
            let last = model.sample_times().last();
            let last = last.filter(|t| *t != 0.0 && !t.is_nan()).unwrap_or(0.0);
            let mean = (last - first.unwrap_or(f64::NAN)) / (n as f64 - 1.0);
            let extra = last + mean;
            model.extra_time = Some(extra);
            if let Some(t) = first.or(Some(extra)) {
                if t != 0.0 && !t.is_nan() {
                    model.profile_start = t;
                }
            }
            if extra != 0.0 && !extra.is_nan() {
                model.profile_end = extra;
            }
            model.sample_nodes = sample_nodes;
            model.fix_missing_samples();
            model.n_unknown_samples = model.sample_nodes.iter().filter(|&&n| n == NONE).count() as u64;
        } else {
            // No samples: the times stay in µs (the reference normalizes only with samples).
            model.times = Times::Us(times_us().collect());
        }
    }

    /// Whether parsed node `n`'s frame is native (`url === "native V8Runtime"`).
    #[inline]
    pub(crate) fn is_native(&self, n: u32) -> bool {
        self.native_frames[self.nodes[n as usize].frame as usize]
    }

    /// The frame of parsed node `n`.
    #[inline]
    pub(crate) fn frame(&self, n: u32) -> &CallFrame {
        &self.frames[self.nodes[n as usize].frame as usize]
    }

    /// The parsed node for an id (the copy parsed last).
    #[inline]
    pub(crate) fn node_by_id(&self, id: i64) -> Option<u32> {
        if id == UNKNOWN_ID {
            return None;
        }
        self.id_to_node.get(id)
    }

    /// The samples' times in ms, in time order (for a profile without samples: the times of its
    /// deltas in µs, as the reference leaves them).
    pub(crate) fn sample_times(&self) -> impl Iterator<Item = f64> + '_ {
        match &self.times {
            Times::Deltas { start, deltas } => Either::Left(deltas.iter().scan(*start, |t, x| {
                *t += x;
                Some(*t / 1000.0)
            })),
            Times::Ms(v) | Times::Us(v) => Either::Right(v.iter().copied()),
        }
    }

    /// `timestamps`: [`ProfileModel::sample_times`] and the extra one after the last sample.
    pub(crate) fn timestamps(&self) -> Vec<f64> {
        self.timestamps_iter().collect()
    }

    /// [`ProfileModel::timestamps`] one by one, for a reader that goes through them once.
    pub(crate) fn timestamps_iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.sample_times().chain(self.extra_time)
    }

    /// The number of samples (after `sortSamples`: as many as there are time deltas).
    #[inline]
    pub(crate) fn n_samples(&self) -> usize {
        self.sample_nodes.len().max(self.released)
    }

    /// Lets go of the samples' nodes and times (8 bytes a sample), keeping their number: for a
    /// thread whose calls are made and whose samples nothing else reads.
    pub(crate) fn release_samples(&mut self) {
        self.released = self.n_samples();
        self.sample_nodes = Vec::new();
        self.times = Times::Ms(Vec::new());
    }

    /// The node id of sample `i`, [`UNKNOWN_ID`] for an id that names no node (which ids those
    /// were does not matter to anything DevTools computes from them).
    #[inline]
    pub(crate) fn sample_id(&self, i: usize) -> i64 {
        match self.sample_nodes[i] {
            NONE => UNKNOWN_ID,
            n => self.nodes[n as usize].id,
        }
    }

    /// The parsed node of sample `i`.
    #[inline]
    pub(crate) fn node_by_index(&self, i: usize) -> Option<u32> {
        self.sample_nodes.get(i).copied().filter(|&n| n != NONE)
    }

    /// The node whose function a line recorded with a sample on node `n` is in: `n`, or the
    /// one [`ProfileModel::place_lines_at_scripts`] chose.
    pub(crate) fn line_node(&self, n: u32) -> u32 {
        self.line_nodes.as_ref().and_then(|t| t.get(n as usize).copied()).unwrap_or(n)
    }

    /// Puts each sample's line in its innermost node (itself or an ancestor) whose frame has a
    /// URL, as a V8 sample's line is its top JavaScript frame's; a node with none keeps it.
    /// Each node is walked once, so that deep native stacks above a script cost their depth
    /// once, not once per sample; a parent loop gives none.
    pub(crate) fn place_lines_at_scripts(&mut self, strings: &Strings) {
        let n = self.nodes.len();
        let scripted = |k: u32| {
            let url = self.frames[self.nodes[k as usize].frame as usize].url;
            matches!(url, Scalar::Str(id) if !strings.get(id).is_empty())
        };
        // Per node, once known: its scripted node, or NONE.
        let mut found: Vec<Option<u32>> = vec![None; n];
        let mut chain = Vec::new();
        for s in 0..n as u32 {
            chain.clear();
            let mut x = s;
            let answer = loop {
                if x == NONE || x as usize >= n || chain.len() > n {
                    break NONE;
                }
                if let Some(a) = found[x as usize] {
                    break a;
                }
                chain.push(x);
                if scripted(x) {
                    break x;
                }
                x = self.nodes[x as usize].parent;
            };
            // Every node walked on the way has the same answer.
            for &k in &chain {
                found[k as usize] = Some(answer);
            }
        }
        let table = found.into_iter().zip(0..).map(|(a, k)| a.filter(|&a| a != NONE).unwrap_or(k)).collect();
        self.line_nodes = Some(table);
    }

    /// The node's depth-0 ancestor (the node itself for depth ≤ 0).
    pub(crate) fn bottom(&self, mut n: u32) -> u32 {
        loop {
            let p = self.nodes[n as usize].parent;
            if p == NONE || self.nodes[p as usize].parent == NONE {
                return n;
            }
            n = p;
        }
    }

    /// `fixMissingSamples`: a lone `(program)` sample between two samples whose stacks share the
    /// bottom frame takes the previous sample's node. The window goes stale after an unknown id,
    /// exactly as in the reference.
    fn fix_missing_samples(&mut self) {
        let Some(program) = self.program else { return };
        let n = self.sample_nodes.len();
        if n < 3 {
            return;
        }
        // Ids are compared as the reference compares them; a known sample's id is its node's.
        // Per node, from its id: 1 for the (program) id, 2 for any of the three system ids (a
        // short table: reading each sample's node for its id missed the caches).
        let program_id = self.nodes[program as usize].id;
        let gc_id = self.gc.map(|g| self.nodes[g as usize].id).unwrap_or(-1);
        let idle_id = self.idle.map(|g| self.nodes[g as usize].id).unwrap_or(-1);
        let kind: Vec<u8> = self
            .nodes
            .iter()
            .map(|nd| u8::from(nd.id == program_id) | if [program_id, gc_id, idle_id].contains(&nd.id) { 2 } else { 0 })
            .collect();
        let mut fixes: Vec<(usize, u32)> = Vec::new();
        let mut prev_node = self.sample_nodes[0];
        let mut node = self.sample_nodes[1];
        for i in 1..n - 1 {
            let next_node = self.sample_nodes[i + 1];
            if prev_node == NONE || next_node == NONE {
                continue;
            }
            if node != NONE
                && kind[node as usize] & 1 != 0
                && kind[prev_node as usize] & 2 == 0
                && kind[next_node as usize] & 2 == 0
                && self.bottom(prev_node) == self.bottom(next_node)
            {
                fixes.push((i, prev_node));
            }
            (prev_node, node) = (node, next_node);
        }
        for &(i, to) in &fixes {
            self.sample_nodes[i] = to;
        }
        self.repaired = fixes.into_iter().map(|(i, _)| i as u32).collect();
    }

    /// A `traceIds[key]` value resolved to a node, as the integrator does for a `sampleTraceId`.
    pub(crate) fn node_for_trace_value(&self, v: Scalar) -> Option<u32> {
        match v {
            Scalar::Num(n) if n != 0.0 && n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0 => {
                self.node_by_id(n as i64)
            }
            _ => None,
        }
    }
}

/// Node ids → `u32`s: a table when the ids are dense (as V8 numbers them, 1 to n), a hash map
/// otherwise.
#[derive(Debug, Clone)]
enum IdMap {
    Dense { min: i64, table: Vec<u32> },
    Sparse(FxHashMap<i64, u32>),
}

impl Default for IdMap {
    fn default() -> IdMap {
        IdMap::Sparse(FxHashMap::default())
    }
}

impl IdMap {
    /// An empty map for `n` ids (which it looks at to choose its form).
    fn for_ids(ids: impl Iterator<Item = i64>, n: usize) -> IdMap {
        let (min, max) = ids.fold((i64::MAX, i64::MIN), |(lo, hi), id| (lo.min(id), hi.max(id)));
        match max.checked_sub(min) {
            Some(span) if min != UNKNOWN_ID && span < 2 * n as i64 + 64 => {
                IdMap::Dense { min, table: vec![NONE; span as usize + 1] }
            }
            _ => {
                let mut m = FxHashMap::default();
                m.reserve(n);
                IdMap::Sparse(m)
            }
        }
    }

    /// Maps `id` (one of the ids given to [`IdMap::for_ids`]) to `v`; returns the old value.
    fn insert(&mut self, id: i64, v: u32) -> Option<u32> {
        match self {
            IdMap::Dense { min, table } => {
                let old = std::mem::replace(&mut table[(id - *min) as usize], v);
                (old != NONE).then_some(old)
            }
            IdMap::Sparse(m) => m.insert(id, v),
        }
    }

    #[inline]
    fn get(&self, id: i64) -> Option<u32> {
        match self {
            IdMap::Dense { min, table } => {
                let k = id.checked_sub(*min)?;
                usize::try_from(k).ok().and_then(|k| table.get(k)).copied().filter(|&v| v != NONE)
            }
            IdMap::Sparse(m) => m.get(&id).copied(),
        }
    }
}

/// Turns a JSON frame into a [`CallFrame`], normalised as the trace chunks are (`chunk` true) or
/// as given (`.cpuprofile`).
pub(crate) fn frame_from_json(
    f: &crate::input::shapes::FrameJson<'_>,
    chunk: bool,
    strings: &mut Strings,
) -> Option<CallFrame> {
    let function_name = f.function_name.scalar(strings)?;
    if chunk {
        // SamplesHandler: url || '', lineNumber/columnNumber default -1, scriptId = String(x).
        let url = if f.url.truthy() { f.url.scalar(strings)? } else { Scalar::Str(strings.intern("")) };
        let line_number =
            if matches!(f.line_number, Leaf::Missing) { Scalar::Num(-1.0) } else { f.line_number.scalar(strings)? };
        let column_number = if matches!(f.column_number, Leaf::Missing) {
            Scalar::Num(-1.0)
        } else {
            f.column_number.scalar(strings)?
        };
        let sid = f.script_id.scalar(strings)?.to_js_string(strings);
        let script_id = Scalar::Str(strings.intern(&sid));
        Some(CallFrame { function_name, script_id, url, line_number, column_number, original: None })
    } else {
        Some(CallFrame {
            function_name,
            script_id: f.script_id.scalar(strings)?,
            url: f.url.scalar(strings)?,
            line_number: f.line_number.scalar(strings)?,
            column_number: f.column_number.scalar(strings)?,
            original: None,
        })
    }
}

/// `x - 1` with JS number conversion, for the legacy node fields.
pub(crate) fn js_minus_one(v: &Leaf<'_>) -> f64 {
    match v {
        Leaf::Num(n) => n - 1.0,
        Leaf::Null => -1.0,
        Leaf::Bool(b) => *b as u8 as f64 - 1.0,
        Leaf::Str(s) => {
            let t = s.trim();
            if t.is_empty() {
                -1.0
            } else {
                t.parse::<f64>().map(|n| n - 1.0).unwrap_or(f64::NAN)
            }
        }
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests;
