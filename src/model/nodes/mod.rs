//! Profile nodes read from JSON, for both input paths: a `.cpuprofile`'s `nodes` (read one
//! node at a time where they lie) and a trace's `Profile`/`ProfileChunk` nodes, their call
//! frames read once through the [`FrameCache`].

mod frame_key;

use super::column::{Ids, Positions};
use super::profile::{js_minus_one, CallFrame, Frames, NodeMore, RawNode, RawProfile};
use crate::error::{Error, Location};
use crate::input::leaf::{Leaf, UNKNOWN_ID};
use crate::input::reader::serde_message;
use crate::input::shapes::{self, MaybeObj, NodeJson};
use crate::js::Scalar;
use crate::strings::Strings;

pub(crate) use frame_key::{encode_frame, FrameCache};

/// A chunk's node, as far as the builder reads it.
#[derive(Debug)]
pub(crate) struct NodeIn {
    /// The id, or the type of the value that is not one.
    pub(crate) id: Result<i64, &'static str>,
    pub(crate) parent: i64,
    pub(crate) children: Option<Box<[i64]>>,
    /// Where its frame's key is in [`ChunkIn::frame_keys`]; None without a `callFrame` object.
    pub(crate) frame: Option<std::ops::Range<usize>>,
    pub(crate) hit_count_is_number: bool,
}

impl NodeIn {
    pub(crate) fn new(n: &NodeJson<'_>, keys: &mut Vec<u8>) -> NodeIn {
        let frame = match &n.call_frame {
            MaybeObj::Obj(f) => {
                let start = keys.len();
                encode_frame(f, keys);
                Some(start..keys.len())
            }
            _ => None,
        };
        NodeIn {
            id: n.id.int().ok_or(n.id.type_name()),
            parent: n.parent.int().unwrap_or(UNKNOWN_ID),
            children: n.children.as_ref().map(|c| c.iter().map(|v| v.int().unwrap_or(UNKNOWN_ID)).collect()),
            frame,
            hit_count_is_number: matches!(n.hit_count, Leaf::Num(_)),
        }
    }

    /// The node, its frame read through `cache` (the messages are [`node_from_json`]'s).
    pub(crate) fn into_raw(
        self,
        keys: &[u8],
        strings: &mut Strings,
        frames: &mut Frames,
        cache: &mut FrameCache,
    ) -> Result<RawNode, String> {
        let id = self.id.map_err(|t| format!("the node id is {t}, not an integer"))?;
        let Some(key) = self.frame else {
            return Err(format!("node {id} has no callFrame object (DevTools fails on this)"));
        };
        let frame = cache
            .frame_by_key(&keys[key], true, strings, frames)
            .ok_or_else(|| format!("node {id}: a callFrame field is an object or array"))?;
        // A trace's profile always takes the `lines` path: no hit counts or ticks are read.
        let more = NodeMore { children: self.children, ..NodeMore::default() };
        Ok(RawNode::new(id, self.parent, frame, self.hit_count_is_number, more))
    }
}

/// A node from its JSON; `chunk` selects the trace-chunk normalisation of the frame. `cache`
/// holds the frames of this profile's nodes read so far.
pub(crate) fn node_from_json(
    n: &NodeJson<'_>,
    chunk: bool,
    strings: &mut Strings,
    frames: &mut Frames,
    cache: &mut FrameCache,
) -> Result<RawNode, String> {
    if chunk {
        let mut key = Vec::new();
        return NodeIn::new(n, &mut key).into_raw(&key, strings, frames, cache);
    }
    let id = n.id.int().ok_or_else(|| format!("the node id is {}, not an integer", n.id.type_name()))?;
    let frame = match &n.call_frame {
        MaybeObj::Obj(f) => cache
            .frame(f, chunk, strings, frames)
            .ok_or_else(|| format!("node {id}: a callFrame field is an object or array"))?,
        _ => frames.intern(CallFrame {
            function_name: n.function_name.scalar(strings).unwrap_or(Scalar::Undefined),
            script_id: n.script_id.scalar(strings).unwrap_or(Scalar::Undefined),
            url: n.url.scalar(strings).unwrap_or(Scalar::Undefined),
            line_number: Scalar::Num(js_minus_one(&n.line_number)),
            column_number: Scalar::Num(js_minus_one(&n.column_number)),
            original: None,
        }),
    };
    let children = n.children.as_ref().map(|c| c.iter().map(|v| v.int().unwrap_or(UNKNOWN_ID)).collect());
    let more = NodeMore {
        children,
        hit_count: n.hit_count.num().unwrap_or(0.0),
        position_ticks: match &n.position_ticks {
            Some(shapes::PositionTicksJson::List(t)) => Some(
                t.iter()
                    .map(|p| match p {
                        MaybeObj::Obj(p) => (p.line.num().unwrap_or(f64::NAN), p.ticks.num().unwrap_or(f64::NAN)),
                        _ => (f64::NAN, f64::NAN),
                    })
                    .collect(),
            ),
            _ => None,
        },
    };
    let parent = n.parent.int().unwrap_or(UNKNOWN_ID);
    Ok(RawNode::new(id, parent, frame, matches!(n.hit_count, Leaf::Num(_)), more))
}

/// A `.cpuprofile`'s `nodes` value, read.
#[derive(Debug)]
pub(crate) struct ParsedNodes {
    nodes: Nodes,
    /// Whether the value was an array (not null).
    present: bool,
}

impl ParsedNodes {
    /// No `nodes` member.
    pub(crate) fn absent() -> ParsedNodes {
        ParsedNodes { nodes: Nodes::new(), present: false }
    }

    /// The raw profile of a `.cpuprofile` with these nodes and `json`'s other members.
    pub(crate) fn into_raw(self, json: &shapes::CpuProfileJson<'_>, location: Location) -> Result<RawProfile, Error> {
        if json.head.is_some() && !self.present {
            return Err(Error::input(Some(location), LEGACY));
        }
        finish_raw(json, self.nodes.list, self.nodes.frames, Some(location))
    }
}

/// Reads a `.cpuprofile`'s `nodes` value (an array or null) one node at a time, so that the
/// parsed form of only one node is held at once.
pub(crate) fn parse_nodes(raw: &[u8], location: Location, strings: &mut Strings) -> Result<ParsedNodes, Error> {
    // Rare: serde refuses lone surrogates, so they are given their stand-ins first.
    let fixed = crate::input::json::lone_surrogates_replaced(raw);
    let raw = fixed.as_deref().unwrap_or(raw);
    let mut nodes = Nodes::new();
    let mut de = serde_json::Deserializer::from_slice(raw);
    let seed = NodesSeed { nodes: &mut nodes, strings };
    match serde::de::DeserializeSeed::deserialize(seed, &mut de).and_then(|present| {
        de.end()?;
        Ok(present)
    }) {
        Ok(present) => Ok(ParsedNodes { nodes, present }),
        Err(e) => {
            let message = nodes.failed.take().unwrap_or_else(|| format!("the \"nodes\" value: {}", serde_message(&e)));
            Err(Error::input(Some(location), message))
        }
    }
}

const LEGACY: &str = "the legacy .cpuprofile format (a 'head' tree instead of 'nodes') is not supported";

/// The raw nodes read so far, their frames, and the first node that could not be read.
#[derive(Debug)]
struct Nodes {
    list: Vec<RawNode>,
    frames: Frames,
    cache: FrameCache,
    failed: Option<String>,
}

impl Nodes {
    fn new() -> Nodes {
        Nodes { list: Vec::new(), frames: Frames::default(), cache: FrameCache::default(), failed: None }
    }

    /// Adds the next node; on failure, says which node and why.
    fn add(&mut self, n: &NodeJson<'_>, strings: &mut Strings) -> Result<(), String> {
        let raw = node_from_json(n, false, strings, &mut self.frames, &mut self.cache)
            .map_err(|m| format!("nodes[{}]: {m}", self.list.len()))?;
        self.list.push(raw);
        Ok(())
    }
}

/// Reads a `nodes` value (an array, or null) into [`Nodes`]; its value is whether it was an array.
struct NodesSeed<'n, 's> {
    nodes: &'n mut Nodes,
    strings: &'s mut Strings,
}

impl<'de> serde::de::DeserializeSeed<'de> for NodesSeed<'_, '_> {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> serde::de::Visitor<'de> for NodesSeed<'_, '_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while let Some(n) = seq.next_element::<NodeJson<'de>>()? {
            if let Err(m) = self.nodes.add(&n, self.strings) {
                self.nodes.failed = Some(m);
                return Err(serde::de::Error::custom("a node that cannot be read"));
            }
        }
        Ok(true)
    }
}

/// A [`RawProfile`] from a CDP `Profiler.Profile` object.
pub(crate) fn raw_from_cpuprofile(
    json: &shapes::CpuProfileJson<'_>,
    strings: &mut Strings,
    location: Option<Location>,
) -> Result<RawProfile, Error> {
    let fail = |m: String| Error::input(location, m);
    if json.head.is_some() && json.nodes.is_none() {
        return Err(fail(LEGACY.into()));
    }
    let mut nodes = Nodes::new();
    for n in json.nodes.iter().flatten() {
        nodes.add(n, strings).map_err(fail)?;
    }
    finish_raw(json, nodes.list, nodes.frames, location)
}

/// The rest of a [`RawProfile`]: its times, samples and deltas, checked.
pub(crate) fn finish_raw(
    json: &shapes::CpuProfileJson<'_>,
    nodes: Vec<RawNode>,
    frames: Frames,
    location: Option<Location>,
) -> Result<RawProfile, Error> {
    let fail = |m: String| Error::input(location, m);
    let start_time = json
        .start_time
        .num()
        .ok_or_else(|| fail(format!("expected startTime to be a number, found {}", json.start_time.type_name())))?;
    let end_time = match &json.end_time {
        Leaf::Num(n) => *n,
        // Absent, it is `undefined` to DevTools: NaN in its arithmetic, read only at the end.
        Leaf::Missing => f64::NAN,
        other => return Err(fail(format!("expected endTime to be a number, found {}", other.type_name()))),
    };
    if let Some(d) = &json.time_deltas {
        if d.n_non_numbers > 0 {
            let k = d.values.iter().position(|v| v.is_nan()).unwrap_or(0);
            return Err(fail(format!("timeDeltas[{k}] is not a number")));
        }
    }
    Ok(RawProfile {
        start_time,
        end_time,
        nodes,
        frames,
        samples: json.samples.as_ref().map(|s| Ids::from_slice(&s.0)),
        time_deltas: json.time_deltas.as_ref().map(|d| d.values.iter().copied().collect()),
        lines: json.lines.as_ref().map(|l| Positions::from_slice(&l.values)),
        columns: json.columns.as_ref().map(|l| Positions::from_slice(&l.values)),
        // Decided by the caller ([`RawProfile::keep`]).
        keep_lines: true,
        trace_ids: None,
    })
}
